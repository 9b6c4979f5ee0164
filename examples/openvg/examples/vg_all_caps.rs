//! Triggers `vg-path-all-capabilities`: the clean scene with its three paths (rectangle,
//! circle, line) created with `VG_PATH_CAPABILITY_ALL` and then only built (`vgu*`) and
//! drawn, never queried: three findings, one per path.
//!
//! Per frame: as the clean scene — 7 VG calls (`vgClear`, `vgSetPaint` ×2, `vgDrawPath` ×3,
//! `vgDrawImage`), 5 VG work calls. Areas as the clean scene, and the same `frame_crc`.
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_all_caps --frames 3`.

mod common;

fn main() {
    let frames = common::frames("vg_all_caps");
    let scene = common::Scene::new("vg_all_caps", common::CAPABILITY_ALL);
    for _ in 0..frames {
        scene.frame();
        scene.swap();
    }
    scene.report();
}
