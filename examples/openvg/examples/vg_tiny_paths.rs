//! Triggers `vg-tiny-complex-path`: the clean scene plus a closed 64-point polygon (64
//! drawing segments: `MOVE_TO`, 63 `LINE_TO`, `CLOSE_PATH`) of radius 2 px, drawn white 4
//! times per frame, 8 px apart, each draw covering 12 px (the pixel centres within 2 px of
//! its centre): 0.19 px per segment.
//!
//! Per frame: 17 VG calls — the clean scene's 7, `vgSetPaint` (white), 4 `vgDrawPath` and 4
//! `vgTranslate`, and `vgLoadIdentity` — of which 9 are VG work calls (`vgClear`, 7
//! `vgDrawPath`, `vgDrawImage`). Areas: rectangle 1 200, circle ≈ 1 256.6, line 600, image
//! 256 px as the clean scene, and the polygons 4 × 12 = 48 px (analytically 4 × π·2² ≈
//! 4 × 12.6).
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_tiny_paths --frames 3`.

mod common;

use common::*;

/// Points of the polygon.
const POINTS: usize = 64;

fn main() {
    let frames = frames("vg_tiny_paths");
    let scene = Scene::new("vg_tiny_paths", CAPABILITY_APPEND_TO);
    let tiny = new_path(CAPABILITY_APPEND_TO);
    let white = new_paint(WHITE);
    let points: Vec<f32> = (0..POINTS)
        .flat_map(|i| {
            let a = i as f32 * std::f32::consts::TAU / POINTS as f32;
            [20.0 + 2.0 * a.cos(), 90.0 + 2.0 * a.sin()]
        })
        .collect();
    // SAFETY: `points` holds POINTS (x, y) pairs.
    unsafe { vguPolygon(tiny, points.as_ptr(), POINTS as i32, 1) };
    for _ in 0..frames {
        scene.frame();
        // SAFETY: VG calls on the current context with the handles made above.
        unsafe {
            vgSetPaint(white, FILL);
            for _ in 0..4 {
                vgDrawPath(tiny, FILL);
                vgTranslate(8.0, 0.0);
            }
            vgLoadIdentity();
        }
        scene.swap();
    }
    scene.report();
}
