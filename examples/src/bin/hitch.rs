//! `hitch`: a steady scene that, every N-th frame, hitches: one large texture upload and a
//! burst of heavy full-screen draws, the two usual causes of a stutter. The case
//! `gpuheat attach --trigger` is for: the hitch frames must be caught and named, the steady
//! ones never.
//!
//! Flags: `--every N` (default 30, min 2) hitch period in frames, `--layers K` (default 3) cheap
//! full-screen quads per frame (1 loop iteration), `--burst B` (default 20) heavy full-screen
//! quads in a hitch frame, `--loop L` (default 60) their loop iterations, `--upload U`
//! (default 2048) side of the RGBA8 texture a hitch frame uploads (U·U·4 bytes; 0: none),
//! `--size WxH` (default 256x256), plus the common flags (`--frames N`, `--fps N`,
//! `--api gles|gl`, `--checksum`).
//!
//! Set-up (before frame 0, not counted): program p (RECT_VS + LOOP_FS, `u_color` (1, 0.75,
//! 0.5, 1)), program t (TEX_VS + TEX_FS), texture x (U×U RGBA8, linear, clamped, filled with
//! the first of two patterns), unit-quad VAO, additive blending (`glBlendFunc(GL_ONE,
//! GL_ONE)`), depth/stencil/scissor tests off. The two upload patterns are made at set-up
//! too, so a hitch costs the program nothing outside GL.
//!
//! Frame i is a hitch frame when (i + 1) is a multiple of N (frames N-1, 2N-1, …); the
//! k-th hitch (k = 1, 2, …) uploads pattern k mod 2, so consecutive hitches change the image.
//!
//! Per-frame call sequence:
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! K x { glUniform4f(u_rect, 0, 0, W, H)
//!       glUniform1i(u_iterations, 1)
//!       glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }
//! hitch frames only: B x { glUniform4f(u_rect, 0, 0, W, H)
//!                          glUniform1i(u_iterations, L)
//!                          glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }    the burst's own call site
//! glUseProgram(t)
//! glBindTexture(GL_TEXTURE_2D, x)
//! hitch frames only, with U > 0: glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, U, U, 0,
//!                                             GL_RGBA, GL_UNSIGNED_BYTE, pattern)
//! glUniform4f(u_rect, 0, 0, W/4, H/4)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)
//! eglSwapBuffers
//! ```
//!
//! Expected numbers:
//!
//! - steady frame: calls = 3K + 10, draws = K + 1, work calls = K + 2 (default 19 / 4 / 5);
//! - hitch frame: calls = 3K + 3B + 10 (+1 glTexImage2D with U > 0), draws = K + B + 1,
//!   work calls = K + B + 2 (default 80 / 24 / 25), and one upload of U·U·4 bytes
//!   (default 16 MiB);
//! - in any run of frames, exactly one in N is a hitch frame, and it costs more than the
//!   steady ones by the upload (CPU, inside glTexImage2D) and by B·L iterations per pixel
//!   (GPU), about (B·L)/(K+1) times a steady frame's draws (default 300×).
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{usage_error, IntFlag, Spec};
use gpuheat_examples::gfx::{LOOP_FS, TEX_FS};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "hitch",
    about: "a steady scene with a hitch (a large upload and a burst of heavy draws) every N frames",
    default_size: (256, 256),
    flags: &[
        IntFlag {
            name: "every",
            value: "N",
            default: 30,
            min: 2,
            help: "a hitch every N frames (frames N-1, 2N-1, ...)",
        },
        IntFlag {
            name: "layers",
            value: "K",
            default: 3,
            min: 1,
            help: "cheap full-screen quads per frame",
        },
        IntFlag {
            name: "burst",
            value: "B",
            default: 20,
            min: 0,
            help: "heavy full-screen quads in a hitch frame",
        },
        IntFlag {
            name: "loop",
            value: "L",
            default: 60,
            min: 1,
            help: "loop iterations of the burst's fragment shader",
        },
        IntFlag {
            name: "upload",
            value: "U",
            default: 2048,
            min: 0,
            help: "side of the RGBA8 texture a hitch frame uploads (0: none)",
        },
    ],
    expected: "\
steady frame: calls = 3K + 10, draws = K + 1, work calls = K + 2   default 19 / 4 / 5
hitch frame (every N-th, frames N-1, 2N-1, ...): calls = 3K + 3B + 10 (+1 glTexImage2D of U*U*4 bytes),
             draws = K + B + 1, work calls = K + B + 2             default 80 / 24 / 25, 16 MiB upload
exactly one frame in N is a hitch frame",
};

/// The upload pattern `k` (0 or 1): U·U RGBA8 texels, deterministic.
fn pattern(side: u32, k: u32) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ u64::from(k);
    (0..side as usize * side as usize * 4)
        .map(|_| {
            // xorshift64: cheap, deterministic, and no structure a driver could take short cuts on.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect()
}

fn main() {
    main_with(&SPEC, |args| {
        let every = u64::from(args.get("every"));
        let (layers, burst) = (args.get("layers"), args.get("burst"));
        let l = args.get("loop").min(i32::MAX as u32) as i32;
        let side = args.get("upload");
        if side > 16384 {
            usage_error(&SPEC, "--upload: at most 16384");
        }
        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program_with(LOOP_FS)?;
        let u_iterations = rp.program.uniform("u_iterations")?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let tp = gfx.tex_program(TEX_FS, (gfx.width, gfx.height))?;
        let quad = gfx.unit_quad()?;
        let patterns = [pattern(side, 0), pattern(side, 1)];
        let mut texture = 0;
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created; `patterns[0]` holds side·side RGBA8 texels.
        unsafe {
            glUseProgram(rp.program.id);
            glUniform4f(rp.u_color, 1.0, 0.75, 0.5, 1.0);
            glGenTextures(1, &mut texture);
            glBindTexture(GL_TEXTURE_2D, texture);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR as GLint);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR as GLint);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE as GLint);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE as GLint);
            let s = side.max(1) as GLsizei;
            let first = if side > 0 {
                patterns[0].as_ptr().cast()
            } else {
                std::ptr::null()
            };
            glTexImage2D(
                GL_TEXTURE_2D,
                0,
                GL_RGBA8 as GLint,
                s,
                s,
                0,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                first,
            );
            glEnable(GL_BLEND);
            glBlendFunc(GL_ONE, GL_ONE);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_SCISSOR_TEST);
        }
        gfx.check("hitch set-up")?;

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created; each pattern holds side·side RGBA8 texels.
        run_frames(&gfx, args, |_, i| unsafe {
            let hitch = (i + 1) % every == 0;
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(rp.program.id);
            glBindVertexArray(quad.vao);
            for _ in 0..layers {
                glUniform4f(rp.u_rect, 0.0, 0.0, w as f32, h as f32);
                glUniform1i(u_iterations, 1);
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            }
            if hitch {
                for _ in 0..burst {
                    glUniform4f(rp.u_rect, 0.0, 0.0, w as f32, h as f32);
                    glUniform1i(u_iterations, l);
                    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // gpuheat: the hitch's burst
                }
            }
            glUseProgram(tp.program.id);
            glBindTexture(GL_TEXTURE_2D, texture);
            if hitch && side > 0 {
                let k = ((i + 1) / every) as usize % 2;
                glTexImage2D(
                    GL_TEXTURE_2D,
                    0,
                    GL_RGBA8 as GLint,
                    side as GLsizei,
                    side as GLsizei,
                    0,
                    GL_RGBA,
                    GL_UNSIGNED_BYTE,
                    patterns[k].as_ptr().cast(),
                ); // gpuheat: the hitch's upload
            }
            glUniform4f(tp.u_rect, 0.0, 0.0, (w / 4) as f32, (h / 4) as f32);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        })
    });
}
