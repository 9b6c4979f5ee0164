//! The clean VG scene (issue 12's clean example): every object made once before the first
//! frame, nothing redundant, no wait for the VG pipeline; no VG rule fires on it.
//!
//! Per frame (`--frames N`, default 3, each ended by `eglSwapBuffers`): 7 VG calls —
//! `vgClear` ×1, `vgSetPaint` ×2, `vgDrawPath` ×3, `vgDrawImage` ×1 — of which 5 are VG work
//! calls (`vgClear`, 3 `vgDrawPath`, `vgDrawImage`). Areas on the 128×128 surface: red
//! rectangle 1 200 px, green circle π·20² ≈ 1 256.6 px, blue line 600 px, yellow image
//! 256 px (see `common/mod.rs`). After the last frame it reads the surface back with
//! `vgReadPixels` and prints `frame_crc=…` and the pixels per colour.
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_clean --frames 3`.

mod common;

fn main() {
    let frames = common::frames("vg_clean");
    let scene = common::Scene::new("vg_clean", common::CAPABILITY_APPEND_TO);
    for _ in 0..frames {
        scene.frame();
        scene.swap();
    }
    scene.report();
}
