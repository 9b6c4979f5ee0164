//! `stall`: renders cleared frames until gpuheat's agent is loaded into it, then stops
//! rendering for good, keeping its EGL context and sleeping until killed, like a program
//! whose window was hidden right after a profiler attached. A capture requested from it
//! never receives a frame: `gpuheat attach` must give up within its `--timeout`, say so and
//! detach, and the program must still be there.
//!
//! Flags: `--size WxH` (default 64x64), `--api gles|gl`, `--fps N` (default 60); `--frames N`
//! ends it after N frames if the agent never arrives.
//!
//! Per-frame call sequence until the agent is mapped (checked after each swap in
//! `/proc/self/maps`, no GL call):
//!
//! ```text
//! glClear(GL_COLOR_BUFFER_BIT)
//! eglSwapBuffers
//! ```

use gpuheat_examples::args::Spec;
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with};
use std::time::{Duration, Instant};

const SPEC: Spec = Spec {
    name: "stall",
    about: "renders until gpuheat's agent is loaded into it, then never swaps again",
    default_size: (64, 64),
    flags: &[],
    expected: "\
per frame, until libgpuheat_agent.so is mapped: glClear, eglSwapBuffers
after it is mapped: no GL call at all; the program sleeps until killed",
};

/// The agent's file name, as cargo builds it.
const AGENT: &str = "libgpuheat_agent";

fn agent_loaded() -> bool {
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|m| m.contains(AGENT))
}

fn main() {
    main_with(&SPEC, |args| {
        let gfx = gfx_for(args)?;
        let period = Duration::from_secs_f64(1.0 / args.fps.unwrap_or(60).max(1) as f64);
        let start = Instant::now();
        let mut i: u64 = 0;
        while !matches!(args.frames, Some(n) if i >= n) {
            // SAFETY: the context is current on this thread.
            unsafe { glClear(GL_COLOR_BUFFER_BIT) };
            gfx.swap()?;
            i += 1;
            if agent_loaded() {
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            if let Some(wait) =
                (start + period.mul_f64(i as f64)).checked_duration_since(Instant::now())
            {
                std::thread::sleep(wait);
            }
        }
        Ok(())
    });
}
