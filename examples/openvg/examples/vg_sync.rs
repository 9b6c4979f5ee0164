//! Triggers `vg-sync-every-frame`: the clean scene with a `vgFinish` before each frame's
//! `eglSwapBuffers`, so the CPU waits for the VG pipeline every frame.
//!
//! Per frame: 8 VG calls — the clean scene's 7 and `vgFinish` — of which 5 are VG work
//! calls (`vgFinish` is synchronous, not work). Areas as the clean scene, and the same
//! `frame_crc`.
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_sync --frames 3`.

mod common;

fn main() {
    let frames = common::frames("vg_sync");
    let scene = common::Scene::new("vg_sync", common::CAPABILITY_APPEND_TO);
    for _ in 0..frames {
        scene.frame();
        // SAFETY: a VG call on the current context.
        unsafe { common::vgFinish() };
        scene.swap();
    }
    scene.report();
}
