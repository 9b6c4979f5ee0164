//! `call_cost`: M cheap non-draw GL calls per frame, to measure what a profiler adds to
//! every call. Each call is a `glUniform1f` on a uniform of the bound program with a value
//! that changes from call to call, so the driver never skips it as redundant; one tiny
//! draw per frame keeps the uniform (and the frame) real.
//!
//! Flags: `--calls M` (default 20000, min 1), `--report-call-ns`, `--size WxH` (default
//! 64x64), plus the common flags (`--frames N`, `--api gles|gl`, `--timing`, `--checksum`).
//!
//! Set-up (before frame 0, not counted): program p (RECT_VS + a fragment shader that scales
//! `u_color` by `0.5 + 0.5·fract(u_value / 1024)`), `u_viewport` = (W, H), `u_color` =
//! (0.2, 0.4, 0.8, 1), `u_rect` = (0, 0, 4, 4) (a 4×4 pixel quad at the lower-left corner,
//! clipped to the surface when it is smaller), unit-quad VAO; blending, depth, stencil and
//! scissor tests off. The program and the VAO stay bound for every frame.
//!
//! Per-frame call sequence (fixed) of frame f (0-based):
//!
//! ```text
//! M x { glUniform1f(u_value, v_i) }             v_i = ((f·M + i) mod 2^20) as float,
//!                                              i = 0..M-1: no two consecutive calls
//!                                              (across frames too) set the same value
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)
//! [glFinish]                                   only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = M + 2    (+1 glFinish with `--timing`); default 20 002
//! - draws      = 1
//! - work calls = 1        (the draw; no glClear)
//! - samples passed per draw = 16 (4×4) at sizes of at least 4x4
//! - calls that re-set identical state: 0
//!
//! `--report-call-ns` reads CLOCK_MONOTONIC (`std::time::Instant`) just before the first and
//! just after the last of the frame's M calls, and at exit prints on stdout
//! `call_ns=<median over the frames of (loop ns / M), 3 decimals>` and then
//! `call_ns_frames=<the per-frame values, frame 0 first, comma-separated>`. It adds no GL
//! call. It needs `--frames N` (a program that is killed prints nothing).
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame; stdout holds
//! `checksum=`, then `frame_ms=` (with `--timing`), then the two `call_ns` lines.

use std::time::Instant;

use gpuheat_examples::args::{parse_with_switch_or_exit, usage_error, IntFlag, Spec};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, run_frames};

const SPEC: Spec = Spec {
    name: "call_cost",
    about: "M cheap non-draw calls (glUniform1f, changing values) and 1 tiny draw per frame",
    default_size: (64, 64),
    flags: &[IntFlag {
        name: "calls",
        value: "M",
        default: 20000,
        min: 1,
        help: "glUniform1f calls per frame",
    }],
    expected: "\
per frame: M x glUniform1f(u_value, v_i), glDrawArrays(GL_TRIANGLE_STRIP,0,4), [glFinish], eglSwapBuffers
           v_i = ((frame*M + i) mod 2^20) as float: every call changes the value
calls      = M + 2  (+1 with --timing)        default 20002
draws      = 1
work calls = 1      (the draw; no glClear)
samples passed per draw = 16 (4x4 quad at the lower-left corner)
--report-call-ns: CLOCK_MONOTONIC around the M calls of each frame; at exit prints
           call_ns=<median ns per call over frames> and call_ns_frames=<f0,f1,...> (needs --frames)
--checksum: one glReadPixels after the last eglSwapBuffers (no frame)",
};

/// The switch this example adds to the common flags (not an [`IntFlag`]).
const REPORT_FLAG: &str = "--report-call-ns";

/// Fragment shader (without `#version`): `u_color` scaled by a function of `u_value`, so the
/// uniform is live and every `glUniform1f` changes what the draw renders.
const VALUE_FS: &str = r"uniform vec4 u_color;
uniform float u_value;
out vec4 o_color;
void main() {
    float k = 0.5 + 0.5 * fract(u_value * (1.0 / 1024.0));
    o_color = vec4(u_color.rgb * k, 1.0) * step(0.0, gl_FragCoord.x);
}
";

/// Values wrap at 2^20, well inside the exactly representable integers of an f32.
const VALUE_WRAP: u64 = 1 << 20;

fn main() {
    let (args, report) = parse_with_switch_or_exit(
        &SPEC,
        REPORT_FLAG,
        "print call_ns=<median ns per call> and call_ns_frames=... at exit",
    );
    if report && args.frames.is_none() {
        usage_error(&SPEC, "--report-call-ns needs --frames N");
    }
    if let Err(e) = run(&args, report) {
        eprintln!("{}: {}", SPEC.name, e.replace('\n', " "));
        std::process::exit(1);
    }
}

fn run(args: &gpuheat_examples::args::Args, report: bool) -> Result<(), String> {
    let m = args.get("calls") as u64;
    let gfx = gfx_for(args)?;
    let rp = gfx.rect_program_with(VALUE_FS)?;
    let u_value = rp.program.uniform("u_value")?;
    let _quad = gfx.unit_quad()?;
    // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
    // created.
    unsafe {
        glUniform4f(rp.u_color, 0.2, 0.4, 0.8, 1.0);
        glUniform4f(rp.u_rect, 0.0, 0.0, 4.0, 4.0);
        glUniform1f(u_value, 0.0);
        glDisable(GL_BLEND);
        glDisable(GL_DEPTH_TEST);
        glDisable(GL_STENCIL_TEST);
        glDisable(GL_SCISSOR_TEST);
    }
    gfx.check("call_cost set-up")?;

    let mut per_call_ns: Vec<f64> = Vec::new();
    run_frames(&gfx, args, |_, f| {
        let base = f.wrapping_mul(m);
        let t0 = Instant::now();
        for i in 0..m {
            let v = (base.wrapping_add(i) % VALUE_WRAP) as f32;
            // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects
            // it created.
            unsafe { glUniform1f(u_value, v) };
        }
        let ns = t0.elapsed().as_nanos() as f64;
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created.
        unsafe { glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) };
        if report {
            per_call_ns.push(ns / m as f64);
        }
    })?;
    if report {
        let frames: Vec<String> = per_call_ns.iter().map(|v| format!("{v:.3}")).collect();
        let mut sorted = per_call_ns.clone();
        emit(&format!("call_ns={:.3}", median(&mut sorted)));
        emit(&format!("call_ns_frames={}", frames.join(",")));
    }
    Ok(())
}

/// Median (mean of the two middle values for an even count; 0 for none).
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One line on stdout, flushed; errors (a closed pipe) ignored.
fn emit(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
