//! `state_churn`: D small-quad draws per frame, each preceded by six calls that re-set
//! state to the value it already has.
//!
//! Flags: `--draws D` (default 200, min 1), `--size WxH` (default 256x256; needs at least
//! 2 cells of 16x16 pixels), plus the common flags (`--frames N`, `--api gles|gl`,
//! `--timing`, `--checksum`).
//!
//! Set-up (before frame 0, not counted) establishes every value the frame later re-sets:
//! `glViewport(0, 0, W, H)`, `glClearColor(0.1, 0.1, 0.1, 1)`, program p (RECT_VS +
//! SOLID_FS) bound with `u_viewport` = (W, H) and `u_color` = (0.9, 0.4, 0.1, 0.5), the
//! unit-quad VAO bound, `glEnable(GL_BLEND)`, `glBlendFunc(GL_SRC_ALPHA,
//! GL_ONE_MINUS_SRC_ALPHA)`, `glDisable(GL_DEPTH_TEST)`. Nothing changes that state later.
//!
//! Draw i (0-based) is an 8x8 pixel quad in cell c = i mod cells of a grid of 16x16-pixel
//! cells (cols = W/16, rows = H/16, cells = cols·rows, row-major from the bottom-left):
//! `u_rect` = (16·(c mod cols) + 4, 16·(c div cols) + 4, 8, 8). Default: 16x16 = 256 cells,
//! so the 200 default quads never overlap (for D > cells they wrap and blend on top).
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glClear(GL_COLOR_BUFFER_BIT)
//! D x { glUseProgram(p)                                   redundant
//!       glBindVertexArray(quad)                           redundant
//!       glEnable(GL_BLEND)                                redundant
//!       glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA) redundant
//!       glDisable(GL_DEPTH_TEST)                          redundant
//!       glUniform4f(u_color, 0.9, 0.4, 0.1, 0.5)          redundant (same value)
//!       glUniform4f(u_rect, x_i, y_i, 8, 8)               changes every draw
//!       glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }
//! [glFinish]                                              only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 8D + 2   (+1 glFinish with `--timing`); default 1602
//! - draws      = D; default 200
//! - work calls = D + 1    (D draws + 1 glClear); default 201
//! - redundant state calls = 6D (default 1200), i.e. 6 per draw, for a tracker that knows
//!   the state at the start of the frame; a tracker that starts the frame with unknown
//!   state cannot judge the first draw's six and counts 6D − 6 (default 1194).
//!   Non-redundant: glClear, D × glUniform4f(u_rect), D draws, eglSwapBuffers.
//! - samples passed per draw = 64 (8·8, pixel-aligned); per frame 64·D (default 12 800)
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{usage_error, IntFlag, Spec};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const CELL: u32 = 16;
const QUAD: u32 = 8;
const COLOUR: [f32; 4] = [0.9, 0.4, 0.1, 0.5];

const SPEC: Spec = Spec {
    name: "state_churn",
    about: "D small quads per frame, each preceded by 6 redundant state calls",
    default_size: (256, 256),
    flags: &[IntFlag {
        name: "draws",
        value: "D",
        default: 200,
        min: 1,
        help: "number of 8x8 quads per frame",
    }],
    expected: "\
per frame: glClear, D x (glUseProgram, glBindVertexArray, glEnable(GL_BLEND), glBlendFunc,
           glDisable(GL_DEPTH_TEST), glUniform4f(u_color, same), glUniform4f(u_rect), glDrawArrays),
           [glFinish], eglSwapBuffers
calls      = 8D + 2  (+1 with --timing)       default 1602
draws      = D                                default 200
work calls = D + 1   (draws + glClear)        default 201
redundant state calls = 6D                    default 1200
  (6D - 6 = 1194 if the tracker starts the frame with unknown state)
samples passed per draw = 64 (8x8 quad), per frame 64D   default 12800
--checksum: one glReadPixels after the last eglSwapBuffers (no frame)",
};

fn main() {
    main_with(&SPEC, |args| {
        let draws = args.get("draws");
        let (cols, rows) = (args.width / CELL, args.height / CELL);
        let cells = cols * rows;
        if cells < 2 {
            usage_error(
                &SPEC,
                &format!("--size must hold at least 2 cells of {CELL}x{CELL} pixels"),
            );
        }
        let rects: Vec<[f32; 2]> = (0..draws)
            .map(|i| {
                let c = i % cells;
                [
                    ((c % cols) * CELL + (CELL - QUAD) / 2) as f32,
                    ((c / cols) * CELL + (CELL - QUAD) / 2) as f32,
                ]
            })
            .collect();

        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program()?;
        let quad = gfx.unit_quad()?;
        let [r, g, b, a] = COLOUR;
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created.
        unsafe {
            glViewport(0, 0, gfx.width as i32, gfx.height as i32);
            glClearColor(0.1, 0.1, 0.1, 1.0);
            glUseProgram(rp.program.id);
            glUniform4f(rp.u_color, r, g, b, a);
            glBindVertexArray(quad.vao);
            glEnable(GL_BLEND);
            glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
            glDisable(GL_DEPTH_TEST);
        }
        gfx.check("state_churn set-up")?;

        let q = QUAD as f32;
        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glClear(GL_COLOR_BUFFER_BIT);
            for &[x, y] in &rects {
                glUseProgram(rp.program.id);
                glBindVertexArray(quad.vao);
                glEnable(GL_BLEND);
                glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
                glDisable(GL_DEPTH_TEST);
                glUniform4f(rp.u_color, r, g, b, a);
                glUniform4f(rp.u_rect, x, y, q, q);
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            }
        })
    });
}
