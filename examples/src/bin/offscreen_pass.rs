//! `offscreen_pass`: the frame's cost is spent offscreen. A costly pass renders into a
//! texture attached to a framebuffer object; a cheap draw then composites that texture onto
//! a known rectangle of the window, beside a cheap solid draw. A heat map of the window alone
//! sees two cheap draws; the pass that dominates the frame is in the texture's own map, and
//! its cost belongs to the composited rectangle in the window's total-cost map.
//!
//! Flags: `--target S` (default 256, min 1) side of the offscreen texture T, `--loop L`
//! (default 64, min 1) loop iterations of the offscreen pass, `--format F` (default 0) T's
//! internal format: 0 `GL_RGBA8`, 1 `GL_RGBA16F`, 2 `GL_RG8`, 3 `GL_R8`, 4 `GL_RGB10_A2`,
//! 5 `GL_SRGB8_ALPHA8`, 6 `GL_RGBA8UI` (an integer target: P writes a `uvec4`, C reads it
//! with a `usampler2D`), formats other than 0 made with `glTexStorage2D`; `--size WxH`
//! (default 512x512; needs S ≤ W/2, S ≤ H/2 and H ≥ 4), `--blit 1` (default 0) copies T
//! onto C's rectangle with `glBlitFramebuffer` instead of drawing C (not with `--format 6`:
//! an integer buffer blits only to an integer one), `--blit 2` the same with P drawn into an
//! S×S `GL_RGBA8` renderbuffer instead of T, `--blit 3` as 1 with `glBlitNamedFramebuffer`,
//! `--copy 1` (default 0) copies T into a second texture U with `glCopyTexSubImage2D` right
//! after P, and C samples U, `--copy 2` the same with `glCopyImageSubData`, `--copy 3` with
//! `glCopyTextureSubImage2D` (copies need `--format 0` and no `--blit`; the 3s, GL 4.5's
//! direct state access, need `--api gl`), plus the common
//! flags. The format changes no call of the frame and no count below; `--blit` and `--copy`
//! change the frame as said at the end.
//!
//! Set-up (before frame 0, not counted):
//! - T: an S×S `GL_RGBA8` texture (one level, `GL_NEAREST`, clamped), colour attachment 0 of
//!   framebuffer object F; T stays bound to texture unit 0 (`glActiveTexture` untouched).
//! - program p_loop (RECT_VS + fill_cost's loop shader), `u_viewport` = (S, S), `u_rect` =
//!   (0, 0, S, S), `u_color` = (1, 0.75, 0.5, 1), `u_iterations` = L;
//! - program p_tex (TEX_VS + TEX_FS: `texture(u_tex, v_uv)`, `u_tex` = unit 0),
//!   `u_viewport` = (W, H), `u_rect` = (W/2, H/2, S, S);
//! - program p_solid (RECT_VS + SOLID_FS), `u_viewport` = (W, H), `u_rect` = (0, 0, W/2, H/4),
//!   `u_color` = (0.2, 0.6, 0.3, 1);
//! - the unit-quad VAO; blending, depth, stencil and scissor tests off.
//!
//! Every uniform keeps its set-up value, so the frame sets none. (W/2, H/2 and H/4 are
//! integer divisions.)
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glBindFramebuffer(GL_FRAMEBUFFER, F)           -> T
//! glViewport(0, 0, S, S)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears T (S·S pixels)
//! glUseProgram(p_loop)
//! glBindVertexArray(quad)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          P: the costly pass into T, S·S fragments, L iterations
//! glBindFramebuffer(GL_FRAMEBUFFER, 0)           -> the window
//! glViewport(0, 0, W, H)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears the window
//! glUseProgram(p_tex)
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
//! - calls      = 16 (+1 glFinish with `--timing`)
//! - draws      = 3: P into T (framebuffer F), C and D into the window (framebuffer 0)
//! - work calls = 5 (3 draws + 2 glClear: one of T, one of the window)
//! - fragments (samples passed): P = S·S, C = S·S, D = (W/2)·(H/4); default 65 536 / 65 536
//!   / 32 768. Every rectangle lies on pixel edges, so the counts are exact.
//! - C samples T (texture unit 0) 1:1: its S×S rectangle shows T texel for texel (pixel
//!   (W/2 + i, H/2 + j) reads texel (i, j) at its centre, `GL_NEAREST`).
//! - the window rectangle x ∈ [W/2, W/2 + S), y ∈ [H/2, H/2 + S) receives all of P's cost
//!   (P's Σ T_d spread evenly: T_P / S² per pixel); the rest of the window receives none.
//! - cost: P runs L loop iterations per fragment, C and D about one; P dominates the frame
//!   (measured below).
//! - calls that re-set identical state (from frame 1 on): glClearColor, glBindVertexArray,
//!   glBindTexture = 3
//!
//! Measured on Mesa 22.3 llvmpipe, 2 cores, defaults, glFinish around each work call
//! (gpuheat's serialized timing): see examples/README.md.
//!
//! `gpuheat-bench`'s offscreen heat cost runs it with the common `--report-frame-ms`
//! (every frame's start-to-start period, the same span as a capture's swap-to-swap period).
//!
//! With `--blit 1`, the window's part of the frame becomes (the same pixels: C sampled T
//! texel for texel with `GL_NEAREST`, which is what a 1:1 blit copies):
//!
//! ```text
//! glBindFramebuffer(GL_FRAMEBUFFER, 0)           -> the window
//! glViewport(0, 0, W, H)
//! glClear(GL_COLOR_BUFFER_BIT)                   clears the window
//! glBindFramebuffer(GL_READ_FRAMEBUFFER, F)
//! glBlitFramebuffer(0, 0, S, S, W/2, H/2, W/2 + S, H/2 + S, GL_COLOR_BUFFER_BIT, GL_NEAREST)
//!                                                B: copies T onto (W/2, H/2, S, S)
//! glBindFramebuffer(GL_READ_FRAMEBUFFER, 0)
//! glUseProgram(p_solid)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          D
//! ```
//!
//! calls = 16 (+1 with `--timing`), draws = 2 (P, D), work calls = 5 (P, B, D, 2 glClear);
//! B (call 11) writes S·S window pixels and carries all of P's cost onto them: T_P / S² per
//! pixel, besides its own T_B / S².
//!
//! With `--blit 2`, set-up adds R, an S×S `GL_RGBA8` renderbuffer (`glRenderbufferStorage
//! Multisample` with 0 samples), colour attachment 0 of framebuffer object F_R; the frame is
//! `--blit 1`'s with F_R in place of F (P draws into R, B reads R): the same calls and counts,
//! and B carries all of P's cost onto the window rectangle, read from a renderbuffer.
//!
//! With `--blit 3` (GL 4.5 direct state access, `--api gl` only), `--blit 1`'s three calls
//! around B are the one call `glBlitNamedFramebuffer(F, 0, 0, 0, S, S, W/2, H/2, W/2 + S,
//! H/2 + S, GL_COLOR_BUFFER_BIT, GL_NEAREST)` (call 10): calls = 14 (+1 with `--timing`),
//! the same draws, work calls, pixels and cost flow.
//!
//! With `--copy 1`, set-up adds U, an S×S `GL_RGBA8` texture made as T is (its own unused
//! framebuffer object); right after P, with F still bound for reading:
//!
//! ```text
//! glBindTexture(GL_TEXTURE_2D, U)
//! glCopyTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, 0, 0, S, S)   K: T's S·S texels into U
//! ```
//!
//! and C binds U instead of T. `--copy 2` has instead the one call
//! `glCopyImageSubData(T, GL_TEXTURE_2D, 0, 0, 0, 0, U, GL_TEXTURE_2D, 0, 0, 0, 0, S, S, 1)`,
//! `--copy 3` (GL 4.5 direct state access, `--api gl` only) the one call
//! `glCopyTextureSubImage2D(U, 0, 0, 0, 0, 0, S, S)`: the same counts as `--copy 2`.
//! calls = 18 (`--copy 1`) or 17 (`--copy 2`) (+1 with `--timing`), draws = 3, work calls
//! = 6 (P, K, C, D, 2 glClear); K writes S·S texels of U and carries P's cost into them; C
//! samples U 1:1, so the window rectangle receives T_P + T_K + T_C spread evenly (the same
//! pixels and the same cost flow as without the copy, plus K's own time).
//!
//! After the last frame, `--checksum` adds one glReadPixels (of the window, framebuffer 0
//! being bound) outside any frame.

use gpuheat_examples::args::{
    check_composite_side, parse_or_exit, usage_error, Args, IntFlag, Spec,
};
use gpuheat_examples::gfx::{Api, LOOP_FS, TEX_FS};

/// T's internal formats, by `--format`.
const FORMATS: [GLenum; 7] = [
    GL_RGBA8 as GLenum,
    GL_RGBA16F,
    GL_RG8,
    GL_R8,
    GL_RGB10_A2,
    GL_SRGB8_ALPHA8,
    GL_RGBA8UI,
];

/// P into an integer target: `LOOP_FS` writing its colour scaled to 0..255 as a `uvec4`.
const LOOP_FS_UINT: &str = r"uniform vec4 u_color;
uniform int u_iterations;
out uvec4 o_color;
void main() {
    vec3 v = vec3(gl_FragCoord.xy * (1.0 / 97.0), 0.5) * u_color.rgb;
    for (int i = 0; i < u_iterations; ++i) {
        v = fract(v * 1.7 + sin(v.yzx * 3.0 + float(i) * 0.013));
    }
    o_color = uvec4(uvec3(v * 0.25 * 255.0), 255u);
}
";

/// C from an integer texture: `TEX_FS` through a `usampler2D`.
const TEX_FS_UINT: &str = r"uniform highp usampler2D u_tex;
in vec2 v_uv;
out vec4 o_color;
void main() {
    o_color = vec4(texture(u_tex, v_uv)) * (1.0 / 255.0) * step(0.0, gl_FragCoord.x);
}
";
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, run_frames};

const SPEC: Spec = Spec {
    name: "offscreen_pass",
    about:
        "a costly pass into a texture (framebuffer object), composited onto a quarter of the window",
    default_size: (512, 512),
    flags: &[
        IntFlag {
            name: "target",
            value: "S",
            default: 256,
            min: 1,
            help: "side of the offscreen texture T (needs S <= W/2 and S <= H/2)",
        },
        IntFlag {
            name: "loop",
            value: "L",
            default: 64,
            min: 1,
            help: "loop iterations per fragment of the offscreen pass P",
        },
        IntFlag {
            name: "format",
            value: "F",
            default: 0,
            min: 0,
            help: "T's format: 0 RGBA8, 1 RGBA16F, 2 RG8, 3 R8, 4 RGB10_A2, 5 SRGB8_ALPHA8, \
                   6 RGBA8UI",
        },
        IntFlag {
            name: "blit",
            value: "B",
            default: 0,
            min: 0,
            help: "1: copy T onto C's rectangle with glBlitFramebuffer instead of drawing C; \
                   2: the same from a renderbuffer P draws into; 3: the same as 1 with \
                   glBlitNamedFramebuffer (--api gl)",
        },
        IntFlag {
            name: "copy",
            value: "K",
            default: 0,
            min: 0,
            help: "1: copy T into a texture U with glCopyTexSubImage2D after P, C samples U; \
                   2: the same with glCopyImageSubData; 3: with glCopyTextureSubImage2D (--api gl)",
        },
    ],
    expected: "\
per frame: glBindFramebuffer F, glViewport 0,0,S,S, glClearColor, glClear (T),
           glUseProgram p_loop, glBindVertexArray, glDrawArrays                 P -> T
           glBindFramebuffer 0, glViewport 0,0,W,H, glClear (window),
           glUseProgram p_tex, glBindTexture T, glDrawArrays                    C -> window
           glUseProgram p_solid, glDrawArrays                                  D -> window
           [glFinish], eglSwapBuffers
calls      = 16  (+1 with --timing)
draws      = 3   P into T (S x S RGBA8 texture of framebuffer F); C, D into the window
work calls = 5   (draws + 2 glClear)
fragments: P = S*S (L iterations each), C = S*S (samples T 1:1), D = (W/2)*(H/4)
           default 65536 / 65536 / 32768
C's rectangle: x in [W/2, W/2+S), y in [H/2, H/2+S): it receives all of P's cost
P dominates the frame time (L iterations per fragment against ~1 for C and D)
--blit 1|2: C replaced by glBlitFramebuffer from T (1) or from a renderbuffer P draws into
           (2): same calls and counts, the blit carries P's cost onto C's rectangle
--blit 3:   as 1 with glBlitNamedFramebuffer(F, 0, ...) and no glBindFramebuffer of the read
           framebuffer (GL only): calls 14, the blit is call 10
--copy 1|2: K = glCopyTexSubImage2D (1, after a glBindTexture U) or glCopyImageSubData (2)
           of T into U right after P; C samples U: calls 18 / 17, work calls 6; the window
           rectangle receives P's, K's and C's time
--copy 3:   K = glCopyTextureSubImage2D(U, 0, 0, 0, 0, 0, S, S) (GL only): as --copy 2, calls
           17, K is call 7
--checksum: one glReadPixels of the window after the last eglSwapBuffers (no frame)",
};

fn main() {
    let args = parse_or_exit(&SPEC);
    let (s, l) = (args.get("target"), args.get("loop"));
    let Some(&format) = FORMATS.get(args.get("format") as usize) else {
        usage_error(&SPEC, "--format: must be 0 to 6");
    };
    let (blit, copy) = (args.get("blit"), args.get("copy"));
    if blit > 3 || copy > 3 {
        usage_error(&SPEC, "--blit and --copy: 0, 1, 2 or 3");
    }
    if (blit == 3 || copy == 3) && args.api != Api::Gl {
        usage_error(
            &SPEC,
            "--blit 3 and --copy 3: direct state access needs --api gl (GL 4.5)",
        );
    }
    if copy > 0 && (blit > 0 || format != GL_RGBA8 as GLenum) {
        usage_error(&SPEC, "--copy: needs --format 0 and no --blit");
    }
    if blit > 0 && format == GL_RGBA8UI {
        usage_error(
            &SPEC,
            "--blit: an integer texture (--format 6) blits only to an integer buffer",
        );
    }
    check_composite_side(&SPEC, &args, s);
    if let Err(e) = run(&args, s, l, (format, blit, copy)) {
        eprintln!("{}: {}", SPEC.name, e.replace('\n', " "));
        std::process::exit(1);
    }
}

/// Set-up, then the frames; `format`: T's, `blit` and `copy` as their flags.
fn run(
    args: &Args,
    s: u32,
    l: u32,
    (format, blit, copy): (GLenum, u32, u32),
) -> Result<(), String> {
    let integer = format == GL_RGBA8UI;
    let l = l.min(i32::MAX as u32) as i32;
    let gfx = gfx_for(args)?;
    let (w, h) = (gfx.width as i32, gfx.height as i32);
    let si = s as i32;
    let t = gfx.render_texture_as(s, s, GL_NEAREST, format)?;
    // P's framebuffer: T's, or with --blit 2 one whose colour is a renderbuffer.
    let p_framebuffer = if blit == 2 {
        gfx.render_renderbuffer(s, s)?
    } else {
        t.framebuffer
    };
    // What C samples: T, or with --copy U, the copy's destination.
    let sampled = if copy > 0 {
        gfx.render_texture_as(s, s, GL_NEAREST, format)?.texture
    } else {
        t.texture
    };

    let p_loop = gfx.rect_program_with(if integer { LOOP_FS_UINT } else { LOOP_FS })?;
    let u_iterations = p_loop.program.uniform("u_iterations")?;
    // SAFETY: GL calls on the context `gfx` made current on this thread, with a program it
    // linked and left bound.
    unsafe {
        glUniform2f(p_loop.u_viewport, s as f32, s as f32);
        glUniform4f(p_loop.u_rect, 0.0, 0.0, s as f32, s as f32);
        glUniform4f(p_loop.u_color, 1.0, 0.75, 0.5, 1.0);
        glUniform1i(u_iterations, l);
    }
    let (p_tex, p_solid) = gfx.composite_programs(if integer { TEX_FS_UINT } else { TEX_FS }, s)?;
    let quad = gfx.unit_quad()?;
    gfx.finish_setup("offscreen_pass set-up")?;

    // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
    // naming objects it created.
    run_frames(&gfx, args, |_, _| unsafe {
        glBindFramebuffer(GL_FRAMEBUFFER, p_framebuffer);
        glViewport(0, 0, si, si);
        glClearColor(0.0, 0.0, 0.0, 1.0);
        glClear(GL_COLOR_BUFFER_BIT);
        glUseProgram(p_loop.program.id);
        glBindVertexArray(quad.vao);
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // P: the costly pass, into T
        match copy {
            1 => {
                glBindTexture(GL_TEXTURE_2D, sampled);
                glCopyTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, 0, 0, si, si); // K
            }
            3 => glCopyTextureSubImage2D(sampled, 0, 0, 0, 0, 0, si, si), // K
            2 => glCopyImageSubData(
                t.texture,
                GL_TEXTURE_2D,
                0,
                0,
                0,
                0,
                sampled,
                GL_TEXTURE_2D,
                0,
                0,
                0,
                0,
                si,
                si,
                1,
            ), // K
            _ => {}
        }
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        glViewport(0, 0, w, h);
        glClear(GL_COLOR_BUFFER_BIT);
        if blit == 3 {
            let (x, y) = (w / 2, h / 2);
            // B: copies T onto C's rectangle, both framebuffers named.
            glBlitNamedFramebuffer(
                p_framebuffer,
                0,
                0,
                0,
                si,
                si,
                x,
                y,
                x + si,
                y + si,
                GL_COLOR_BUFFER_BIT,
                GL_NEAREST as GLenum,
            );
        } else if blit > 0 {
            glBindFramebuffer(GL_READ_FRAMEBUFFER, p_framebuffer);
            let (x, y) = (w / 2, h / 2);
            // B: copies T onto C's rectangle.
            glBlitFramebuffer(
                0,
                0,
                si,
                si,
                x,
                y,
                x + si,
                y + si,
                GL_COLOR_BUFFER_BIT,
                GL_NEAREST as GLenum,
            );
            glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        } else {
            glUseProgram(p_tex.program.id);
            glBindTexture(GL_TEXTURE_2D, sampled);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // C: composites T (or U)
        }
        glUseProgram(p_solid.program.id);
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // D: cheap, on screen
    })
}
