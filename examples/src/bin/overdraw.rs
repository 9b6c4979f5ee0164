//! `overdraw`: K stacked full-screen translucent quads per frame, blending on.
//!
//! Flags: `--layers K` (default 8, min 1), `--offset X` (default 0: every layer covers the
//! whole surface), `--size WxH` (default 256x256), plus the common flags (`--frames N`,
//! `--api gles|gl`, `--timing`, `--checksum`).
//!
//! With `--offset X` every layer has the same size, (W − (K−1)·X) × H, and layer k starts at
//! x = k·X, so pixel column x is covered by as many layers as contain it: identical layers
//! overlapping partially (needs (K−1)·X < W).
//!
//! Set-up (before frame 0, not counted): program (RECT_VS + SOLID_FS), `u_viewport` =
//! (W, H), `u_rect` = (0, 0, W, H), unit-quad VAO, `glEnable(GL_BLEND)`,
//! `glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA)`; depth/stencil/scissor tests off.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0.05, 0.05, 0.1, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! K x { [glUniform4f(u_rect, k*X, 0, W-(K-1)X, H)]   only with --offset X > 0
//!       glUniform4f(u_color, r_k, g_k, b_k, 0.25)
//!       glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }
//! [glFinish]                                   only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 2K + 6   (+K with `--offset` > 0, +1 glFinish with `--timing`); default 22
//! - draws      = K        (all glDrawArrays); default 8
//! - work calls = K + 1    (K draws + 1 glClear); default 9
//! - samples passed per draw = W·H (each quad covers the whole surface; no depth test),
//!   (W − (K−1)·X)·H with `--offset X`;
//!   default 65 536; per frame K·W·H (default 524 288)
//! - fragment shader invocations per draw ≈ W·H
//! - overdraw (fragments / pixels) = K
//! - calls that re-set identical state (from frame 1 on, state persists across frames):
//!   glViewport, glClearColor, glUseProgram, glBindVertexArray = 4 (the uniform colours
//!   change between consecutive draws, so no glUniform4f is redundant for K ≥ 2).
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{IntFlag, Spec};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, layer_colour, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "overdraw",
    about: "K stacked full-screen translucent quads per frame (blending on)",
    default_size: (256, 256),
    flags: &[
        IntFlag {
            name: "layers",
            value: "K",
            default: 8,
            min: 1,
            help: "number of stacked full-screen quads per frame",
        },
        IntFlag {
            name: "offset",
            value: "X",
            default: 0,
            min: 0,
            help: "shift layer k right by k*X pixels (all layers (W-(K-1)X) x H)",
        },
    ],
    expected: "\
per frame: glViewport, glClearColor, glClear, glUseProgram, glBindVertexArray,
           K x (glUniform4f colour, glDrawArrays(GL_TRIANGLE_STRIP,0,4)), [glFinish], eglSwapBuffers
calls      = 2K + 6  (+1 with --timing)       default 22
draws      = K                                default 8
work calls = K + 1   (draws + glClear)        default 9
samples passed per draw = W*H (frame: K*W*H)  default 65536 (524288); (W-(K-1)X)*H with --offset X
--offset X adds one glUniform4f(u_rect) per layer: calls = 3K + 6
overdraw factor = K
--checksum: one glReadPixels after the last eglSwapBuffers (no frame)",
};

fn main() {
    main_with(&SPEC, |args| {
        let (layers, offset) = (args.get("layers"), args.get("offset"));
        if u64::from(layers - 1) * u64::from(offset) >= u64::from(args.width) {
            gpuheat_examples::args::usage_error(&SPEC, "--offset: (K-1)*X must be below W");
        }
        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program()?;
        let quad = gfx.unit_quad()?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let colours: Vec<[f32; 4]> = (0..layers).map(layer_colour).collect();
        let layer_w = (w as u32 - (layers - 1) * offset) as f32;
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created.
        unsafe {
            glUniform4f(rp.u_rect, 0.0, 0.0, w as f32, h as f32);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_SCISSOR_TEST);
            glEnable(GL_BLEND);
            glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
        }
        gfx.check("overdraw set-up")?;

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.05, 0.05, 0.1, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(rp.program.id);
            glBindVertexArray(quad.vao);
            for (k, c) in colours.iter().enumerate() {
                if offset > 0 {
                    let x = (k as u32 * offset) as f32;
                    glUniform4f(rp.u_rect, x, 0.0, layer_w, h as f32);
                }
                glUniform4f(rp.u_color, c[0], c[1], c[2], c[3]);
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            }
        })
    });
}
