//! `immediate_mode`: GL 1.x immediate mode, the way older games, CAD programs and toolkits'
//! GL 1.x paths draw: two `glBegin` … `glEnd` blocks of `glVertex2f` calls and a `glRectf`,
//! no program, no arrays, identity matrices (object coordinates are normalized device
//! coordinates). No call's arguments say what a block draws; a profiler must see each block
//! and each rectangle as a draw with exactly the fragments below.
//!
//! Flags: the common ones (`--frames N`, `--size WxH` default 128x96, `--timing`,
//! `--checksum`). Always a desktop GL compatibility-profile context (immediate mode exists in
//! no other): `--api` is ignored. The pixel counts below are for the default size.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glColor4f(1, 1, 0, 1)
//! glBegin(GL_QUADS)       (-1,-1) (0,-1) (0,1) (-1,1)       the left half: 64x96 pixels
//! glEnd                                                     draw 1
//! glColor4f(0, 1, 1, 1)
//! glBegin(GL_TRIANGLES)   (0.25,-2/3) (0.75,-2/3) (0.25,0)
//!                         (0.25,0) (0.75,-2/3) (0.75,0)     pixels x 80..112, y 16..48
//! glEnd                                                     draw 2
//! glColor4f(1, 0, 1, 1)
//! glRectf(0.5, 1/3, 0.75, 2/3)                              pixels x 96..112, y 64..80: draw 3
//! [glFinish]                                                only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame (128x96):
//!
//! - calls      = 22 (+1 glFinish with `--timing`)
//! - draws      = 3 (two glEnd, each ending its block, and glRectf)
//! - work calls = 4 (the three draws and glClear)
//! - fragments  = 6144 (64x96), 1024 (32x32) and 256 (16x16); no pixel drawn twice
//! - post-transform vertices: 6 per draw (the quad and the rectangle are two triangles each),
//!   18 in all, at the corners above (clip w = 1)
//!
//! Colours are 0 or 1 only: llvmpipe rounds a block's constant colour of 0.5 to 128 or to 127
//! depending on whether its vertex buffer was flushed before the block (the program's own
//! `glFinish` after its `glClear` gives 127), and every bracket a profiler puts around a work
//! call flushes it.
//!
//! After the last frame (and `--checksum`'s `glReadPixels`) the program calls `glGetError`
//! once and exits 1 if it is not `GL_NO_ERROR`: a profiler that leaks an error of its own
//! fails it.

use gpuheat_examples::args::Spec;
use gpuheat_examples::gfx::Gfx;
use gpuheat_examples::gl::*;
use gpuheat_examples::{main_with, run_frames};

const SPEC: Spec = Spec {
    name: "immediate_mode",
    about: "GL 1.x immediate mode: two glBegin/glEnd blocks and a glRectf, fragments known",
    default_size: (128, 96),
    flags: &[],
    expected: "\
per frame: glViewport, glClearColor, glClear, glColor4f, glBegin(GL_QUADS), 4 glVertex2f,
           glEnd, glColor4f, glBegin(GL_TRIANGLES), 6 glVertex2f, glEnd, glColor4f, glRectf,
           [glFinish], eglSwapBuffers
calls      = 22  (+1 with --timing)
draws      = 3   (glEnd, glEnd, glRectf)
work calls = 4   (the three draws, glClear)
fragments  = 6144, 1024, 256 at 128x96 (the left half; 32x32 at x 80, y 16; 16x16 at x 96, y 64)
vertices   = 6 per draw, 18 in all, at the corners in the source (identity matrices)
after the last frame: glGetError must be GL_NO_ERROR (else exit 1)",
};

/// The quad: the left half of the window.
const QUAD: [[f32; 2]; 4] = [[-1.0, -1.0], [0.0, -1.0], [0.0, 1.0], [-1.0, 1.0]];
/// Two triangles over x 0.25..0.75, y -2/3..0.
const TRIANGLES: [[f32; 2]; 6] = [
    [0.25, -2.0 / 3.0],
    [0.75, -2.0 / 3.0],
    [0.25, 0.0],
    [0.25, 0.0],
    [0.75, -2.0 / 3.0],
    [0.75, 0.0],
];
/// The rectangle's corners (x1, y1, x2, y2).
const RECT: [f32; 4] = [0.5, 1.0 / 3.0, 0.75, 2.0 / 3.0];

fn main() {
    main_with(&SPEC, |args| {
        let gfx = Gfx::new_compat(args.width, args.height)?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        // SAFETY: the frame's GL calls run on the compatibility context `gfx` made current on
        // this thread.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glColor4f(1.0, 1.0, 0.0, 1.0);
            glBegin(GL_QUADS);
            for [x, y] in QUAD {
                glVertex2f(x, y);
            }
            glEnd();
            glColor4f(0.0, 1.0, 1.0, 1.0);
            glBegin(GL_TRIANGLES);
            for [x, y] in TRIANGLES {
                glVertex2f(x, y);
            }
            glEnd();
            glColor4f(1.0, 0.0, 1.0, 1.0);
            glRectf(RECT[0], RECT[1], RECT[2], RECT[3]);
        })?;
        // SAFETY: the context is still current.
        let e = unsafe { glGetError() };
        if e != GL_NO_ERROR {
            return Err(format!("GL error 0x{e:04X} after the frames"));
        }
        Ok(())
    });
}
