//! Triggers `vg-image-reupload`: the clean scene, except that each frame uploads the
//! image's pixels again (`vgImageSubData` of the same 16×16 `VG_sRGBA_8888` data, 1 024
//! bytes) before drawing it.
//!
//! Per frame: 8 VG calls — the clean scene's 7 and `vgImageSubData` — of which 5 are VG work
//! calls (`vgClear`, 3 `vgDrawPath`, `vgDrawImage`; an upload is not one). Over N captured
//! frames, N − 1 uploads repeat data uploaded before in the capture (N when the capture saw
//! the set-up's upload). Areas as the clean scene, and the same `frame_crc`.
//!
//! Run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_reupload --frames 3`.

mod common;

use common::*;

fn main() {
    let frames = frames("vg_reupload");
    let scene = Scene::new("vg_reupload", CAPABILITY_APPEND_TO);
    let pixels = image_pixels();
    for _ in 0..frames {
        scene.clear();
        scene.draw_rect();
        scene.draw_circle();
        scene.draw_line();
        // SAFETY: `pixels` holds the 16 rows of 16 words the call reads, 64 bytes apart.
        unsafe {
            vgImageSubData(
                scene.image,
                pixels.as_ptr(),
                IMAGE_SIZE * 4,
                RGBA_8888,
                0,
                0,
                IMAGE_SIZE,
                IMAGE_SIZE,
            );
        }
        scene.draw_image();
        scene.swap();
    }
    scene.report();
}
