//! Triggers `vg-redundant-state`: the clean scene drawn "defensively", setting the matrix
//! mode, the path matrix and the paint before every draw whether or not they changed.
//!
//! Per frame: 19 VG calls — `vgClear`, 4 × (`vgSeti(VG_MATRIX_MODE, PATH)`,
//! `vgLoadMatrix(identity)`), `vgSetPaint` ×4 (red fill, green fill, blue stroke, green
//! fill), `vgDrawPath` ×3, `vgDrawImage` — of which 5 are VG work calls (3 `vgDrawPath`).
//! Of its 12 VG state calls, 10 set the value already set (the 4 `vgSeti`, the 4
//! `vgLoadMatrix`, the blue stroke paint, the second green fill paint) once the capture
//! has seen them set; in a capture's first frame, with the values before it unknown, 7.
//! Areas as the clean scene, and the same `frame_crc`.
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_redundant --frames 3`.

mod common;

use common::*;

/// Sets the matrix mode, the path matrix and `paint` for `modes`, changed or not.
fn defensive(paint: Handle, modes: u32) {
    // SAFETY: VG calls on the current context; IDENTITY holds the 9 floats read.
    unsafe {
        vgSeti(MATRIX_MODE, MATRIX_PATH);
        vgLoadMatrix(IDENTITY.as_ptr());
        vgSetPaint(paint, modes);
    }
}

fn main() {
    let frames = frames("vg_redundant");
    let scene = Scene::new("vg_redundant", CAPABILITY_APPEND_TO);
    for _ in 0..frames {
        scene.clear();
        defensive(scene.red, FILL);
        // SAFETY: VG calls on the current context with the scene's handles.
        unsafe { vgDrawPath(scene.rect, FILL) };
        defensive(scene.green, FILL);
        // SAFETY: as above.
        unsafe { vgDrawPath(scene.circle, FILL) };
        defensive(scene.blue, STROKE);
        scene.draw_line();
        defensive(scene.green, FILL);
        scene.draw_image();
        scene.swap();
    }
    scene.report();
}
