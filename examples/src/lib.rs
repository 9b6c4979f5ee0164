//! Shared set-up for the example programs.
//!
//! - [`gl`]: raw `extern "C"` EGL/GL imports, linked dynamically against `libEGL` and
//!   `libGLESv2` so that `LD_PRELOAD` interposition sees every call.
//! - [`gfx`]: a headless EGL context (Mesa surfaceless platform, pbuffer), GLES 3.2 or
//!   GL 4.5 core, plus shader, unit-quad and checksum helpers.
//! - [`args`]: the common command-line flags.
//! - [`run_frames`]: the frame loop shared by the examples (`--frames`, `--timing`,
//!   `--checksum`).
//!
//! The examples' call counts: a *frame* is every EGL/GL call from just after the previous
//! `eglSwapBuffers` up to and including this frame's `eglSwapBuffers`. Set-up (context,
//! shaders, buffers, initial state) happens before the first frame; the `--checksum`
//! `glReadPixels` happens after the last `eglSwapBuffers` and belongs to no frame.

pub mod args;
pub mod gfx;
pub mod gl;

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use args::Args;
use gfx::Gfx;

/// Runs the frame loop: `args.frames` frames (forever when `None`). Each frame is
/// `frame(gfx, index)`, then — with `--timing` — one `glFinish`, then one `eglSwapBuffers`.
///
/// Pacing (`--fps`, default 60 when running forever): after the swap the loop sleeps until
/// the next slot boundary, as a program throttled by a display's refresh would. Without it a
/// pbuffer program on llvmpipe submits frames far faster than they render (the swap of a
/// pbuffer does not wait): it queues about 1.5 GB of scenes in a second and then blocks for
/// seconds while they drain, so it calls eglSwapBuffers only in rare bursts. Pacing uses no
/// GL call, so the frames' call sequences stay as documented.
///
/// After the last frame: with `--checksum` prints `checksum=<16 hex digits>` (one
/// `glReadPixels`), with `--timing` prints `frame_ms=<median>`, where a frame's time runs
/// from the start of `frame` to the return of `eglSwapBuffers`, and with `--slow-ms N` prints
/// `slow_frames=<i,j,…>`, the frames whose swap returned more than N ms after the previous
/// one's (pacing included: a profiler's frame is swap to swap), and with `--report-frame-ms`
/// prints `frame_ms_frames=` ([`report_frame_periods`]). SIGUSR2 makes the frame it
/// arrives in the last (a benchmark ends a long run when it has measured what it wanted, and
/// still gets what the program prints at its end).
pub fn run_frames<F>(gfx: &Gfx, args: &Args, mut frame: F) -> Result<(), String>
where
    F: FnMut(&Gfx, u64),
{
    checksum_on_sigusr1();
    stop_on_sigusr2();
    let mut times: Vec<Duration> = Vec::new();
    let fps = args
        .fps
        .unwrap_or(if args.frames.is_none() { 60 } else { 0 });
    let period = (fps > 0).then(|| Duration::from_secs_f64(1.0 / fps as f64));
    let start = Instant::now();
    let mut slow: Vec<u64> = Vec::new();
    let mut starts: Vec<Instant> = Vec::new();
    let mut last_swap: Option<Instant> = None;
    let mut i: u64 = 0;
    while !matches!(args.frames, Some(n) if i >= n) {
        let t0 = Instant::now();
        if args.report_frame_ms {
            starts.push(t0);
        }
        frame(gfx, i);
        if args.timing {
            gfx.finish();
        }
        gfx.swap()?;
        if args.timing {
            times.push(t0.elapsed());
        }
        let swapped = Instant::now();
        if let (Some(limit), Some(last)) = (args.slow_ms, last_swap) {
            if swapped - last > Duration::from_millis(limit) {
                slow.push(i);
            }
        }
        last_swap = Some(swapped);
        if CHECKSUM_NOW.swap(false, Ordering::SeqCst) {
            emit(&format!("checksum={:016x}", gfx.checksum()));
        }
        i += 1;
        if STOP_NOW.load(Ordering::SeqCst) {
            break;
        }
        if let Some(period) = period {
            // To the next slot boundary, as with vsync: a late frame gives up its slot and the
            // next starts at the following boundary. Catching up instead (each frame's slot
            // fixed from the start) ran the 15 frames after a 250 ms stall (an attach's first
            // frame) back to back: 4 ms apart instead of 16.7, and a capture of them differed
            // from the next one in every frame row.
            let slots = (start.elapsed().as_secs_f64() / period.as_secs_f64()).floor() + 1.0;
            let slot_end = start + period.mul_f64(slots);
            if let Some(wait) = slot_end.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    if args.checksum {
        emit(&format!("checksum={:016x}", gfx.checksum()));
    }
    if args.timing {
        emit(&format!("frame_ms={:.3}", median_ms(&mut times)));
    }
    if args.report_frame_ms {
        report_frame_periods(&starts);
    }
    if args.slow_ms.is_some() {
        let list: Vec<String> = slow.iter().map(u64::to_string).collect();
        emit(&format!("slow_frames={}", list.join(",")));
    }
    Ok(())
}

/// Set by SIGUSR1: print the checksum of the frame just swapped (one glReadPixels after the
/// swap, so it counts in the next frame). Lets a test check a long-running program's image.
static CHECKSUM_NOW: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigusr1(_: c_int) {
    CHECKSUM_NOW.store(true, Ordering::SeqCst);
}

/// Set by SIGUSR2: the frame in progress is the last.
static STOP_NOW: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigusr2(_: c_int) {
    STOP_NOW.store(true, Ordering::SeqCst);
}

fn stop_on_sigusr2() {
    const SIGUSR2: c_int = 12;
    // SAFETY: the handler only stores to an atomic.
    unsafe { signal(SIGUSR2, on_sigusr2 as *const () as usize) };
}

extern "C" {
    fn signal(signum: c_int, handler: usize) -> usize;
}

fn checksum_on_sigusr1() {
    const SIGUSR1: c_int = 10;
    // SAFETY: the handler only stores to an atomic.
    unsafe { signal(SIGUSR1, on_sigusr1 as *const () as usize) };
}

/// Prints `--report-frame-ms`'s line, `frame_ms_frames=` and the periods between the
/// frames' starts in ms, for benchmarks that want every frame's time.
pub fn report_frame_periods(starts: &[std::time::Instant]) {
    let periods: Vec<String> = starts
        .windows(2)
        .map(|w| format!("{:.3}", (w[1] - w[0]).as_secs_f64() * 1e3))
        .collect();
    emit(&format!("frame_ms_frames={}", periods.join(",")));
}

/// Writes one line to stdout and flushes, ignoring errors (e.g. a closed pipe).
fn emit(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Colour of layer `k` of the overdraw frame (overdraw, proc_loaded): deterministic, so
/// every frame renders the same image, translucent (alpha 0.25) so layers blend.
pub fn layer_colour(k: u32) -> [f32; 4] {
    let f = |m: u64| ((k as u64 * m + 3) % 16) as f32 / 15.0;
    [f(5), f(7), f(11), 0.25]
}

/// Median of `times` in milliseconds (mean of the two middle values for an even count;
/// 0 for none).
pub fn median_ms(times: &mut [Duration]) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    times.sort_unstable();
    let n = times.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    if n % 2 == 1 {
        ms(times[n / 2])
    } else {
        (ms(times[n / 2 - 1]) + ms(times[n / 2])) / 2.0
    }
}

/// Creates the [`Gfx`] for `args` (`--api`, `--size`), mapping failure to a message.
pub fn gfx_for(args: &Args) -> Result<Gfx, String> {
    let mut gfx = Gfx::new(args.api, args.width, args.height)?;
    gfx.keep_shaders = args.keep_shaders;
    Ok(gfx)
}

/// Standard `main` body: runs `body`, and on error prints `<name>: <error>` on stderr and
/// exits 1.
pub fn main_with(spec: &args::Spec, body: impl FnOnce(&Args) -> Result<(), String>) {
    let a = args::parse_or_exit(spec);
    if let Err(e) = body(&a) {
        eprintln!("{}: {}", spec.name, e.replace('\n', " "));
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median() {
        let d = Duration::from_millis;
        assert_eq!(median_ms(&mut []), 0.0);
        assert_eq!(median_ms(&mut [d(3), d(1), d(2)]), 2.0);
        assert_eq!(median_ms(&mut [d(4), d(1), d(2), d(3)]), 2.5);
    }
}
