//! `fill_cost`: three quads per frame with an expensive fragment shader whose cost is
//! proportional to (covered pixels) × (loop iterations).
//!
//! Flags: `--loop L` (default 48, min 1), `--size WxH` (default 512x512), plus the common
//! flags (`--frames N`, `--api gles|gl`, `--timing`, `--checksum`).
//!
//! The fragment shader runs `u_iterations` iterations of
//! `v = fract(v * 1.7 + sin(v.yzx * 3.0 + float(i) * 0.013))` on a `vec3` seeded from
//! `gl_FragCoord` and `u_color`, and writes `vec4(v * 0.25, 1.0)`; the result depends on
//! every iteration, so the loop cannot be optimised away. Output alpha is 1 (opaque).
//! Blending is on with `glBlendFunc(GL_ONE, GL_ONE)` (additive) only so that the driver
//! may not drop draws A and B when C later covers the same tiles: llvmpipe skips binned
//! work under a later opaque, unblended full-tile draw.
//!
//! Set-up (before frame 0, not counted): program p (RECT_VS + the loop shader),
//! `u_viewport` = (W, H), `u_color` = (1, 0.75, 0.5, 1), unit-quad VAO,
//! `glEnable(GL_BLEND)`, `glBlendFunc(GL_ONE, GL_ONE)`, depth/stencil/scissor tests off.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! glUniform4f(u_rect, 0, 0, W, H)           draw A: full screen, L iterations
//! glUniform1i(u_iterations, L)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)
//! glUniform4f(u_rect, 0, 0, W/2, H/2)       draw B: lower-left quarter, L iterations
//! glUniform1i(u_iterations, L)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)
//! glUniform4f(u_rect, 0, 0, W, H)           draw C: full screen, 4L iterations
//! glUniform1i(u_iterations, 4L)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)
//! [glFinish]                                only with --timing
//! eglSwapBuffers
//! ```
//!
//! (W/2 and H/2 are integer divisions.)
//!
//! Expected numbers per frame:
//!
//! - calls      = 15 (+1 glFinish with `--timing`)
//! - draws      = 3
//! - work calls = 4 (3 draws + 1 glClear)
//! - samples passed: A = W·H, B = (W/2)·(H/2) (= W·H/4 for even W, H), C = W·H;
//!   default 262 144 / 65 536 / 262 144
//! - fragment shader invocations ≈ samples passed
//! - relative per-draw GPU cost ≈ A : B : C = 1 : 0.25 : 4 (pixels × iterations);
//!   of the frame's GPU time ≈ 19% / 5% / 76%.
//!   Measured on Mesa 22.3 llvmpipe, 2 cores, 512x512, L = 48, glFinish around each
//!   draw: A ≈ 22 ms, B ≈ 5.5 ms (0.25 A), C ≈ 86 ms (3.9 A); frame ≈ 113 ms.
//! - calls that re-set identical state (from frame 1 on): glViewport, glClearColor,
//!   glUseProgram, glBindVertexArray = 4
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{IntFlag, Spec};
use gpuheat_examples::gfx::LOOP_FS;
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "fill_cost",
    about: "3 quads per frame with a fragment-shader loop: A full/L, B quarter/L, C full/4L",
    default_size: (512, 512),
    flags: &[IntFlag {
        name: "loop",
        value: "L",
        default: 48,
        min: 1,
        help: "fragment shader loop iterations of draws A and B (C runs 4L)",
    }],
    expected: "\
per frame: glViewport, glClearColor, glClear, glUseProgram, glBindVertexArray,
           A: glUniform4f(u_rect 0,0,W,H),     glUniform1i(L),  glDrawArrays
           B: glUniform4f(u_rect 0,0,W/2,H/2), glUniform1i(L),  glDrawArrays
           C: glUniform4f(u_rect 0,0,W,H),     glUniform1i(4L), glDrawArrays
           [glFinish], eglSwapBuffers
calls      = 15  (+1 with --timing)
draws      = 3
work calls = 4   (draws + glClear)
samples passed: A = W*H, B = (W/2)*(H/2), C = W*H     default 262144 / 65536 / 262144
GPU cost A : B : C ~= 1 : 0.25 : 4   (~19% / 5% / 76% of the frame)
measured (llvmpipe, 2 cores, 512x512, L=48): A ~22 ms, B ~5.5 ms, C ~86 ms
--checksum: one glReadPixels after the last eglSwapBuffers (no frame)",
};

fn main() {
    main_with(&SPEC, |args| {
        let l = args.get("loop");
        if l > i32::MAX as u32 / 4 {
            gpuheat_examples::args::usage_error(&SPEC, "--loop: too large");
        }
        let l = l as i32;
        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program_with(LOOP_FS)?;
        let u_iterations = rp.program.uniform("u_iterations")?;
        let quad = gfx.unit_quad()?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let (wf, hf) = (w as f32, h as f32);
        let (qw, qh) = ((w / 2) as f32, (h / 2) as f32);
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created.
        unsafe {
            glUniform4f(rp.u_color, 1.0, 0.75, 0.5, 1.0);
            glEnable(GL_BLEND);
            glBlendFunc(GL_ONE, GL_ONE);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_SCISSOR_TEST);
        }
        gfx.check("fill_cost set-up")?;

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(rp.program.id);
            glBindVertexArray(quad.vao);
            // A: full screen, L iterations.
            glUniform4f(rp.u_rect, 0.0, 0.0, wf, hf);
            glUniform1i(u_iterations, l);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            // B: lower-left quarter, L iterations.
            glUniform4f(rp.u_rect, 0.0, 0.0, qw, qh);
            glUniform1i(u_iterations, l);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            // C: full screen, 4L iterations.
            glUniform4f(rp.u_rect, 0.0, 0.0, wf, hf);
            glUniform1i(u_iterations, 4 * l);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        })
    });
}
