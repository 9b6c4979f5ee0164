//! `chain`: a two-level chain of offscreen passes, A → B → window, and one texture feeding
//! two consumers. Pass A (costly) renders into texture TA; pass B samples TA and renders
//! into the smaller texture TB; two window quads X and Y sample TB, Y with three times X's
//! fragments. The cost of A and B reaches the window only through X and Y, split 1 : 3 by
//! the fragments that consumed TB.
//!
//! Flags: `--target A` (default 256, min 2, even) side of TA (TB's side is B = A/2),
//! `--loop L` (default 64, min 1) loop iterations of pass A, `--loop-b M` (default 32, min 1)
//! loop iterations of pass B, `--size WxH` (default 512x512; needs W ≥ 2A and H ≥ A), plus
//! the common flags.
//!
//! Set-up (before frame 0, not counted):
//! - TA: an A×A `GL_RGBA8` texture (one level, `GL_LINEAR`, clamped), colour attachment 0 of
//!   framebuffer object FA; TB: B×B, `GL_NEAREST`, of framebuffer object FB. Both are bound
//!   in turn to texture unit 0 (`glActiveTexture` untouched).
//! - program p_loop (RECT_VS + fill_cost's loop shader), `u_viewport` = `u_rect.zw` = (A, A),
//!   `u_rect.xy` = (0, 0), `u_color` = (1, 0.75, 0.5, 1), `u_iterations` = L;
//! - program p_down (TEX_VS + TEX_LOOP_FS: reads `texture(u_tex, v_uv)`, then M iterations of
//!   the same loop seeded from it), `u_viewport` = (B, B), `u_rect` = (0, 0, B, B),
//!   `u_iterations` = M, `u_tex` = unit 0;
//! - program p_tex (TEX_VS + TEX_FS: `texture(u_tex, v_uv)`), `u_viewport` = (W, H), `u_tex`
//!   = unit 0;
//! - the unit-quad VAO; blending, depth, stencil and scissor tests off.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glBindFramebuffer(GL_FRAMEBUFFER, FA)          -> TA
//! glViewport(0, 0, A, A)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears TA
//! glUseProgram(p_loop)
//! glBindVertexArray(quad)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          pass A into TA: A·A fragments, L iterations
//! glBindFramebuffer(GL_FRAMEBUFFER, FB)          -> TB
//! glViewport(0, 0, B, B)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears TB
//! glUseProgram(p_down)
//! glBindTexture(GL_TEXTURE_2D, TA)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          pass B into TB: B·B fragments, samples TA, M iterations
//! glBindFramebuffer(GL_FRAMEBUFFER, 0)           -> the window
//! glViewport(0, 0, W, H)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears the window
//! glUseProgram(p_tex)
//! glBindTexture(GL_TEXTURE_2D, TB)
//! glUniform4f(u_rect, 0, 0, B, B)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          X: samples TB, rect (0, 0, B, B)
//! glUniform4f(u_rect, B, B, 3B, B)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          Y: samples TB, rect (B, B, 3B, B)
//! [glFinish]                                     only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 22 (+1 glFinish with `--timing`)
//! - draws      = 4: A into TA (FA), B into TB (FB), X and Y into the window
//! - work calls = 7 (4 draws + 3 glClear: TA, TB, the window)
//! - fragments: A = A², B = B², X = B², Y = 3B²; default 65 536 / 16 384 / 16 384 / 49 152.
//!   Every rectangle lies on pixel edges, so the counts are exact.
//! - what each draw samples: A nothing, B TA (2:1 minification, `GL_LINEAR`: each B
//!   fragment reads the 2×2 TA texels under it, each TA texel is read by one B fragment),
//!   X and Y TB (X texel for texel, Y stretched 3× horizontally, `GL_NEAREST`: each TB
//!   texel is read by 1 X and 3 Y fragments).
//! - cost flow: TA's cost (T_A) flows whole into B; TB's (T_B + T_A) splits between X and Y
//!   by consumed fragments, 1 : 3: X gets (T_A + T_B)/4, Y 3(T_A + T_B)/4, i.e. the same
//!   (T_A + T_B)/(4B²) per pixel over X's rectangle x ∈ [0, B), y ∈ [0, B) and Y's
//!   x ∈ [B, 4B), y ∈ [B, 2B): the window's total-cost map is uniform there (plus X's or Y's
//!   own heat, about equal per pixel: the same shader) and has no upstream cost elsewhere.
//! - cost: A runs L iterations on A² = 4B² fragments, B runs M on B²: with the defaults A
//!   costs about 8× B; X and Y about one iteration per fragment.
//! - calls that re-set identical state (from frame 1 on): glClearColor, glBindVertexArray = 2
//!
//! After the last frame, `--checksum` adds one glReadPixels (of the window, framebuffer 0
//! being bound) outside any frame.

use gpuheat_examples::args::{usage_error, IntFlag, Spec};
use gpuheat_examples::gfx::{LOOP_FS, TEX_FS, TEX_LOOP_FS};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "chain",
    about:
        "a chain of offscreen passes A -> B -> window, and one texture feeding two window quads 1:3",
    default_size: (512, 512),
    flags: &[
        IntFlag {
            name: "target",
            value: "A",
            default: 256,
            min: 2,
            help: "side of TA, even; TB's side is B = A/2 (needs W >= 2A, H >= A)",
        },
        IntFlag {
            name: "loop",
            value: "L",
            default: 64,
            min: 1,
            help: "loop iterations per fragment of pass A",
        },
        IntFlag {
            name: "loop-b",
            value: "M",
            default: 32,
            min: 1,
            help: "loop iterations per fragment of pass B",
        },
    ],
    expected: "\
per frame: glBindFramebuffer FA, glViewport 0,0,A,A, glClearColor, glClear (TA),
           glUseProgram p_loop, glBindVertexArray, glDrawArrays                   A -> TA
           glBindFramebuffer FB, glViewport 0,0,B,B, glClear (TB),
           glUseProgram p_down, glBindTexture TA, glDrawArrays                    B -> TB
           glBindFramebuffer 0, glViewport 0,0,W,H, glClear (window),
           glUseProgram p_tex, glBindTexture TB,
           glUniform4f u_rect 0,0,B,B, glDrawArrays                              X -> window
           glUniform4f u_rect B,B,3B,B, glDrawArrays                             Y -> window
           [glFinish], eglSwapBuffers
calls      = 22  (+1 with --timing)
draws      = 4   A into TA (A x A), B into TB (B x B, B = A/2); X, Y into the window
work calls = 7   (draws + 3 glClear)
fragments: A = A*A (L iterations), B = B*B (M iterations), X = B*B, Y = 3*B*B
           default 65536 / 16384 / 16384 / 49152
sampled: B reads TA; X and Y read TB (X 1:1, Y stretched 3x horizontally)
cost flow: TA -> B -> TB -> X : Y = 1 : 3 (by consumed fragments); per window pixel the
           same (T_A + T_B) / (4*B*B) over X = [0,B)x[0,B) and Y = [B,4B)x[B,2B)
--checksum: one glReadPixels of the window after the last eglSwapBuffers (no frame)",
};

fn main() {
    main_with(&SPEC, |args| {
        let (a, l, m) = (args.get("target"), args.get("loop"), args.get("loop-b"));
        if a % 2 != 0 {
            usage_error(&SPEC, "--target: must be even");
        }
        if args.width / 2 < a || args.height < a {
            usage_error(&SPEC, "--target: needs a surface of at least 2A x A");
        }
        let b = a / 2;
        let (l, m) = (l.min(i32::MAX as u32) as i32, m.min(i32::MAX as u32) as i32);
        let gfx = gfx_for(args)?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let (ai, bi, bf) = (a as i32, b as i32, b as f32);
        let ta = gfx.render_texture(a, a, GL_LINEAR)?;
        let tb = gfx.render_texture(b, b, GL_NEAREST)?;

        let p_loop = gfx.rect_program_with(LOOP_FS)?;
        let u_iterations = p_loop.program.uniform("u_iterations")?;
        // SAFETY: GL calls on the context `gfx` made current on this thread, with a program it
        // linked and left bound.
        unsafe {
            glUniform2f(p_loop.u_viewport, a as f32, a as f32);
            glUniform4f(p_loop.u_rect, 0.0, 0.0, a as f32, a as f32);
            glUniform4f(p_loop.u_color, 1.0, 0.75, 0.5, 1.0);
            glUniform1i(u_iterations, l);
        }
        let p_down = gfx.tex_program(TEX_LOOP_FS, (b, b))?;
        let u_iterations_b = p_down.program.uniform("u_iterations")?;
        // SAFETY: as above, p_down being bound.
        unsafe {
            glUniform4f(p_down.u_rect, 0.0, 0.0, bf, bf);
            glUniform1i(u_iterations_b, m);
        }
        let p_tex = gfx.tex_program(TEX_FS, (gfx.width, gfx.height))?;
        let quad = gfx.unit_quad()?;
        gfx.finish_setup("chain set-up")?;

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glBindFramebuffer(GL_FRAMEBUFFER, ta.framebuffer);
            glViewport(0, 0, ai, ai);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(p_loop.program.id);
            glBindVertexArray(quad.vao);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // pass A, into TA
            glBindFramebuffer(GL_FRAMEBUFFER, tb.framebuffer);
            glViewport(0, 0, bi, bi);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(p_down.program.id);
            glBindTexture(GL_TEXTURE_2D, ta.texture);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // pass B: TA -> TB
            glBindFramebuffer(GL_FRAMEBUFFER, 0);
            glViewport(0, 0, w, h);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(p_tex.program.id);
            glBindTexture(GL_TEXTURE_2D, tb.texture);
            glUniform4f(p_tex.u_rect, 0.0, 0.0, bf, bf);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // X: TB, 1:1
            glUniform4f(p_tex.u_rect, bf, bf, 3.0 * bf, bf);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // Y: TB, 3x the fragments
        })
    });
}
