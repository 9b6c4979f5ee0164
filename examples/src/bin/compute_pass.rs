//! `compute_pass`: the frame's cost is spent in a compute dispatch. A costly dispatch writes
//! an image (an `GL_RGBA16F` texture, as mpv's passes are); a cheap draw then composites that
//! texture onto a known rectangle of the window, beside a cheap solid draw. A dispatch has
//! no fragments: its cost belongs to the texels it stores, and from there to the composited
//! rectangle in the window's total-cost map. The same frame as `offscreen_pass`, with its
//! pass P done by compute.
//!
//! Flags: `--target S` (default 256, min 1) side of the image T, `--loop L` (default 64,
//! min 1) loop iterations per texel of the dispatch, `--size WxH` (default 512x512; needs
//! S ≤ W/2, S ≤ H/2 and H ≥ 4), plus the common flags. Desktop GL 4.3 or GLES 3.1 (the
//! examples' contexts are GL 4.5 core and GLES 3.2).
//!
//! Set-up (before frame 0, not counted):
//! - T: an S×S `GL_RGBA16F` texture (`glTexStorage2D`, one level, `GL_NEAREST`, clamped);
//!   T stays bound to texture unit 0 (`glActiveTexture` untouched).
//! - program p_comp: a compute shader of 8×8 invocations per group, one per texel, running
//!   `fill_cost`'s loop L times and storing the result with `imageStore` to image unit 0
//!   (`layout(binding = 0)`, `writeonly`); `u_iterations` = L.
//! - program p_tex (TEX_VS + TEX_FS: `texture(u_tex, v_uv)`, `u_tex` = unit 0),
//!   `u_viewport` = (W, H), `u_rect` = (W/2, H/2, S, S);
//! - program p_solid (RECT_VS + SOLID_FS), `u_viewport` = (W, H), `u_rect` = (0, 0, W/2, H/4),
//!   `u_color` = (0.2, 0.6, 0.3, 1);
//! - the unit-quad VAO; blending, depth, stencil and scissor tests off.
//!
//! Per-frame call sequence (fixed; G = ⌈S/8⌉):
//!
//! ```text
//! glUseProgram(p_comp)
//! glBindImageTexture(0, T, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA16F)
//! glDispatchCompute(G, G, 1)                     K: stores T's S·S texels, L iterations each
//! glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT)
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears the window
//! glUseProgram(p_tex)
//! glBindVertexArray(quad)
//! glBindTexture(GL_TEXTURE_2D, T)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          C: composite, samples T, rect (W/2, H/2, S, S)
//! glUseProgram(p_solid)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          D: cheap solid rect (0, 0, W/2, H/4)
//! [glFinish]                                     only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 14 (+1 glFinish with `--timing`)
//! - draws      = 2: C and D into the window; dispatches = 1: K, storing to T
//! - work calls = 4 (K, glClear, C, D)
//! - K's image: T, level 0, S×S texels in `GL_RGBA16F`: its own map holds K's time spread
//!   evenly, T_K / S² on each texel.
//! - fragments (samples passed): C = S·S, D = (W/2)·(H/4); default 65 536 / 32 768. Every
//!   rectangle lies on pixel edges, so the counts are exact.
//! - C samples T 1:1: the window rectangle x ∈ [W/2, W/2 + S), y ∈ [H/2, H/2 + S) receives
//!   all of K's cost, T_K / S² per pixel; the rest of the window receives none.
//! - Σ of the window's total-cost map = T_K + T_C + T_D (every painted call's time reaches a
//!   window pixel).
//! - cost: K runs L loop iterations per texel, C and D about one; K dominates the frame.
//!
//! After the last frame, `--checksum` adds one glReadPixels of the window outside any frame.

use gpuheat_examples::args::{check_composite_side, IntFlag, Spec};
use gpuheat_examples::gfx::TEX_FS;
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "compute_pass",
    about: "a costly compute dispatch into an RGBA16F image, composited onto a quarter of the \
            window",
    default_size: (512, 512),
    flags: &[
        IntFlag {
            name: "target",
            value: "S",
            default: 256,
            min: 1,
            help: "side of the image T (needs S <= W/2 and S <= H/2)",
        },
        IntFlag {
            name: "loop",
            value: "L",
            default: 64,
            min: 1,
            help: "loop iterations per texel of the dispatch K",
        },
    ],
    expected: "\
per frame: glUseProgram p_comp, glBindImageTexture 0 T, glDispatchCompute G,G,1      K -> T
           glMemoryBarrier, glViewport 0,0,W,H, glClearColor, glClear (window),
           glUseProgram p_tex, glBindVertexArray, glBindTexture T, glDrawArrays  C -> window
           glUseProgram p_solid, glDrawArrays                                  D -> window
           [glFinish], eglSwapBuffers                              (G = ceil(S/8))
calls      = 14  (+1 with --timing)
draws      = 2   C, D into the window; 1 dispatch K storing to T (S x S RGBA16F)
work calls = 4   (K, glClear, C, D)
K's image T: its own map holds K's time evenly, T_K / S^2 per texel
fragments: C = S*S (samples T 1:1), D = (W/2)*(H/4)   default 65536 / 32768
C's rectangle: x in [W/2, W/2+S), y in [H/2, H/2+S): it receives all of K's cost
sum of the window's total map = T_K + T_C + T_D
--checksum: one glReadPixels of the window after the last eglSwapBuffers (no frame)",
};

/// The dispatch: `fill_cost`'s loop per texel, stored to image unit 0.
const COMPUTE: &str = r"layout(local_size_x = 8, local_size_y = 8) in;
layout(rgba16f, binding = 0) writeonly uniform highp image2D u_out;
uniform int u_iterations;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(u_out);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    vec3 v = vec3(vec2(p) * (1.0 / 97.0), 0.5) * vec3(1.0, 0.75, 0.5);
    for (int i = 0; i < u_iterations; ++i) {
        v = fract(v * 1.7 + sin(v.yzx * 3.0 + float(i) * 0.013));
    }
    imageStore(u_out, p, vec4(v * 0.25, 1.0));
}
";

fn main() {
    main_with(&SPEC, |args| {
        let (s, l) = (args.get("target"), args.get("loop"));
        check_composite_side(&SPEC, args, s);
        let l = l.min(i32::MAX as u32) as i32;
        let gfx = gfx_for(args)?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let groups = s.div_ceil(8);

        let mut t = 0;
        // SAFETY: GL calls on the context `gfx` made current on this thread; `t` has room for
        // one name.
        unsafe {
            glGenTextures(1, &mut t);
            glBindTexture(GL_TEXTURE_2D, t);
            glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA16F, s as GLsizei, s as GLsizei);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        }
        let p_comp = gfx.compute_program(COMPUTE)?;
        let u_iterations = p_comp.uniform("u_iterations")?;
        // SAFETY: as above, with the program just linked.
        unsafe {
            glUseProgram(p_comp.id);
            glUniform1i(u_iterations, l);
        }
        let (p_tex, p_solid) = gfx.composite_programs(TEX_FS, s)?;
        let quad = gfx.unit_quad()?;
        gfx.finish_setup("compute_pass set-up")?;

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glUseProgram(p_comp.id);
            glBindImageTexture(0, t, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA16F);
            glDispatchCompute(groups, groups, 1); // K: the costly pass, into T
            glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(p_tex.program.id);
            glBindVertexArray(quad.vao);
            glBindTexture(GL_TEXTURE_2D, t);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // C: composites T
            glUseProgram(p_solid.program.id);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // D: cheap, on screen
        })
    });
}
