//! `hot_spot`: one small draw with an expensive fragment shader among cheap full-screen
//! draws — the case a per-draw ranking by total time gets wrong and a per-pixel cost map
//! gets right: the small quad's pixels must be the hottest of the frame.
//!
//! Flags: `--layers K` (default 3, min 1) cheap full-screen quads (1 loop iteration each),
//! `--spot S` (default 24, min 1) side of the hot square, `--loop L` (default 300, min 1)
//! its loop iterations, `--time-query 1` (default 0) wraps the frame's draws in a
//! `GL_TIME_ELAPSED` query of the program's own, never read (mpv times each of its passes
//! so; desktop GL: `--api gl`), `--size WxH` (default 256x256; needs S < W/2 and S < H/2),
//! plus the common flags (`--frames N`, `--api gles|gl`, `--timing`, `--checksum`).
//!
//! Set-up (before frame 0, not counted): program p (RECT_VS + the loop shader of
//! fill_cost), `u_viewport` = (W, H), `u_color` = (1, 0.75, 0.5, 1), unit-quad VAO, additive
//! blending (`glBlendFunc(GL_ONE, GL_ONE)`, so the driver never drops a covered draw),
//! depth/stencil/scissor tests off.
//!
//! The hot square's lower-left corner is (W/2, H/2) (integer division): pixel-aligned, in
//! the upper-right quadrant, away from the edges.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! [glBeginQuery(GL_TIME_ELAPSED, q)]          only with --time-query 1
//! K x { glUniform4f(u_rect, 0, 0, W, H)
//!       glUniform1i(u_iterations, 1)
//!       glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }
//! glUniform4f(u_rect, W/2, H/2, S, S)
//! glUniform1i(u_iterations, L)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)
//! [glEndQuery(GL_TIME_ELAPSED)]                only with --time-query 1
//! [glFinish]                                   only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 3K + 9   (+1 glFinish with `--timing`, +2 with `--time-query 1`); default 18
//! - draws      = K + 1; default 4
//! - work calls = K + 2    (draws + glClear); default 5
//! - samples passed: W·H per cheap quad, S·S for the hot square (default 65 536 / 576)
//! - cost per pixel ∝ iterations: the hot square's pixels cost about L / K times those of
//!   the rest of the frame (default 100×), so they are the hottest in the heat map, although
//!   the square's total time is small.
//!
//! For `gpuheat diff`: `--loop L` changes only the hot draw's cost, ∝ L (same program, same
//! calls), so `--loop 300` against `--loop 75` is that one draw at B/A ≈ 0.25; `--layers K+1`
//! adds one cheap quad (65 536 fragments at 256x256), the (K+1)-th of its call site.
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{usage_error, IntFlag, Spec};
use gpuheat_examples::gfx::LOOP_FS;
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "hot_spot",
    about: "K cheap full-screen quads and one small square with an expensive shader",
    default_size: (256, 256),
    flags: &[
        IntFlag {
            name: "layers",
            value: "K",
            default: 3,
            min: 1,
            help: "cheap full-screen quads (1 loop iteration) per frame",
        },
        IntFlag {
            name: "spot",
            value: "S",
            default: 24,
            min: 1,
            help: "side of the hot square in pixels",
        },
        IntFlag {
            name: "loop",
            value: "L",
            default: 300,
            min: 1,
            help: "loop iterations of the hot square's fragment shader",
        },
        IntFlag {
            name: "time-query",
            value: "Q",
            default: 0,
            min: 0,
            help: "1: wrap the draws in a GL_TIME_ELAPSED query of the program's own (--api gl)",
        },
    ],
    expected: "\
per frame: glViewport, glClearColor, glClear, glUseProgram, glBindVertexArray,
           K x (glUniform4f u_rect 0,0,W,H, glUniform1i 1, glDrawArrays),
           glUniform4f u_rect W/2,H/2,S,S, glUniform1i L, glDrawArrays, [glFinish], eglSwapBuffers
calls      = 3K + 9  (+1 with --timing, +2 with --time-query 1)   default 18
draws      = K + 1                        default 4
work calls = K + 2   (draws + glClear)    default 5
samples passed: W*H per cheap quad, S*S for the hot square   default 65536 / 576
the hot square's pixels are the hottest of the frame (about L/K times the rest)
diff: the hot draw's time is proportional to L; --layers K+1 adds one 65536-fragment quad",
};

fn main() {
    main_with(&SPEC, |args| {
        let (layers, spot, l) = (args.get("layers"), args.get("spot"), args.get("loop"));
        if spot >= args.width / 2 || spot >= args.height / 2 {
            usage_error(&SPEC, "--spot: must be smaller than half the surface");
        }
        let l = l.min(i32::MAX as u32) as i32;
        let timed = args.get("time-query") > 0;
        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program_with(LOOP_FS)?;
        let u_iterations = rp.program.uniform("u_iterations")?;
        let quad = gfx.unit_quad()?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let (x, y, s) = ((w / 2) as f32, (h / 2) as f32, spot as f32);
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
        let mut query = 0;
        if timed {
            // SAFETY: as above; `query` has room for one name.
            unsafe { glGenQueries(1, &mut query) };
        }
        gfx.check("hot_spot set-up")?;

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(rp.program.id);
            glBindVertexArray(quad.vao);
            if timed {
                glBeginQuery(GL_TIME_ELAPSED, query);
            }
            for _ in 0..layers {
                glUniform4f(rp.u_rect, 0.0, 0.0, w as f32, h as f32);
                glUniform1i(u_iterations, 1);
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            }
            glUniform4f(rp.u_rect, x, y, s, s);
            glUniform1i(u_iterations, l);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // gpuheat: the hot draw
            if timed {
                glEndQuery(GL_TIME_ELAPSED);
            }
        })
    });
}
