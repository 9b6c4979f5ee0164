//! `tiny_batches`: N draws per frame, each of a tiny S×S pixel quad at its own
//! pixel-aligned position (no two overlap).
//!
//! Flags: `--draws N` (default 2000, min 1), `--quad S` (default 4, min 1), `--size WxH`
//! (default 256x256), plus the common flags (`--frames N`, `--api gles|gl`, `--timing`,
//! `--checksum`). Requires N ≤ (W div S)·(H div S), otherwise exit 2.
//!
//! Set-up (before frame 0, not counted): program p (RECT_VS + SOLID_FS), `u_viewport` =
//! (W, H), `u_color` = (0.2, 0.8, 0.4, 1), unit-quad VAO; blending, depth, stencil and
//! scissor tests off.
//!
//! Draw i (0-based) covers the S×S pixels with lower-left corner
//! (S·(i mod cols), S·(i div cols)), cols = W div S, i.e. the quads tile the surface
//! row-major from the bottom-left, edge to edge. Edges lie on pixel edges and pixel
//! centres at half-integers, so each quad covers exactly S·S pixels with no tie-breaking.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! N x { glUniform4f(u_rect, x_i, y_i, S, S)
//!       glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }
//! [glFinish]                                   only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 2N + 6   (+1 glFinish with `--timing`); default 4006
//! - draws      = N; default 2000
//! - work calls = N + 1    (N draws + 1 glClear); default 2001
//! - samples passed per draw = S·S (default 16); per frame N·S·S (default 32 000)
//! - vertices per draw = 4 (2 triangles); pixels per draw S·S
//! - calls that re-set identical state (from frame 1 on): glViewport, glClearColor,
//!   glUseProgram, glBindVertexArray = 4
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{usage_error, IntFlag, Spec};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "tiny_batches",
    about: "N draws per frame of tiny SxS pixel quads at distinct positions",
    default_size: (256, 256),
    flags: &[
        IntFlag {
            name: "draws",
            value: "N",
            default: 2000,
            min: 1,
            help: "number of quads (draws) per frame; at most (W/S)*(H/S)",
        },
        IntFlag {
            name: "quad",
            value: "S",
            default: 4,
            min: 1,
            help: "quad side in pixels",
        },
    ],
    expected: "\
per frame: glViewport, glClearColor, glClear, glUseProgram, glBindVertexArray,
           N x (glUniform4f(u_rect), glDrawArrays(GL_TRIANGLE_STRIP,0,4)), [glFinish], eglSwapBuffers
calls      = 2N + 6  (+1 with --timing)       default 4006
draws      = N                                default 2000
work calls = N + 1   (draws + glClear)        default 2001
samples passed per draw = S*S (frame: N*S*S)  default 16 (32000)
quad i: lower-left (S*(i mod cols), S*(i div cols)), cols = W div S; no overlap
--checksum: one glReadPixels after the last eglSwapBuffers (no frame)",
};

fn main() {
    main_with(&SPEC, |args| {
        let (n, s) = (args.get("draws"), args.get("quad"));
        let (cols, rows) = (args.width / s, args.height / s);
        if (n as u64) > cols as u64 * rows as u64 {
            usage_error(
                &SPEC,
                &format!(
                    "--draws {n} quads of {s}x{s} do not fit in {}x{} (max {})",
                    args.width,
                    args.height,
                    cols as u64 * rows as u64
                ),
            );
        }
        let rects: Vec<[f32; 2]> = (0..n)
            .map(|i| [((i % cols) * s) as f32, ((i / cols) * s) as f32])
            .collect();

        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program()?;
        let quad = gfx.unit_quad()?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created.
        unsafe {
            glUniform4f(rp.u_color, 0.2, 0.8, 0.4, 1.0);
            glDisable(GL_BLEND);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_SCISSOR_TEST);
        }
        gfx.check("tiny_batches set-up")?;

        let sf = s as f32;
        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(rp.program.id);
            glBindVertexArray(quad.vao);
            for &[x, y] in &rects {
                glUniform4f(rp.u_rect, x, y, sf, sf);
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            }
        })
    });
}
