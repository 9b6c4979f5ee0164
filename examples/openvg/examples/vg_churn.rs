//! Triggers `vg-object-churn`: the clean scene, except that each frame creates the
//! rectangle's path and its red paint, draws with them and destroys them.
//!
//! Per frame: 13 VG calls — `vgClear`, `vgCreatePath`, `vguRect`, `vgCreatePaint`,
//! `vgSetColor`, `vgSetPaint` ×2, `vgDrawPath` ×3, `vgDestroyPath`, `vgDestroyPaint`,
//! `vgDrawImage` — of which 5 are VG work calls (3 `vgDrawPath`). 1 path and 1 paint created
//! and destroyed in every frame: two findings (path, paint). Areas as the clean scene
//! (rectangle 1 200, circle ≈ 1 256.6, line 600, image 256 px), and the same `frame_crc`.
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_churn --frames 3`.

mod common;

use common::*;

fn main() {
    let frames = frames("vg_churn");
    let scene = Scene::new("vg_churn", CAPABILITY_APPEND_TO);
    for _ in 0..frames {
        scene.clear();
        let path = new_path(CAPABILITY_APPEND_TO);
        let paint = new_paint(RED);
        // SAFETY: VG calls on the current context with the handles just made.
        unsafe {
            vguRect(path, 10.0, 20.0, 30.0, 40.0);
            vgSetPaint(paint, FILL);
            vgDrawPath(path, FILL);
            vgDestroyPath(path);
            vgDestroyPaint(paint);
        }
        scene.draw_circle();
        scene.draw_line();
        scene.draw_image();
        scene.swap();
    }
    scene.report();
}
