//! Attach cost: how long `gpuheat attach` takes to deliver the first captured frame, and the
//! hiccup it causes in the target's frames (how long its render thread was held), against
//! the target's own frame time measured in the same sessions.

use anyhow::{bail, Context, Result};
use gpuheat_session::Session;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Medians over the attaches of one run.
pub struct AttachStats {
    pub attaches: usize,
    pub latency_ms: f64,
    pub hiccup_ms: f64,
    pub injection_ms: f64,
    /// The target's frame period (swap to swap) in the captured frames.
    pub frame_ms: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Starts `overdraw` on its own and attaches to it `attaches` times, 3 timeline frames each.
pub fn measure(
    gpuheat: &Path,
    overdraw: &Path,
    scratch: &Path,
    attaches: usize,
) -> Result<AttachStats> {
    let mut target = Command::new(overdraw)
        // --timing: a glFinish per frame, so every frame is really rendered (llvmpipe otherwise
        // drops the unflushed work of a pbuffer frame at the next clear).
        // --fps 0: flat out, so the frame period the hiccup is compared with is the frame's
        // own cost.
        .args(["--api", "gles", "--layers", "4", "--timing", "--fps", "0"])
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", overdraw.display()))?;
    let result = (|| {
        std::thread::sleep(Duration::from_millis(500));
        let (mut latency, mut hiccup, mut injection, mut frame) = (vec![], vec![], vec![], vec![]);
        for i in 0..attaches {
            let session = scratch.join(format!("attach-{i}.gpuheat"));
            let out = Command::new("timeout")
                .args(["-k5", "60"])
                .arg(gpuheat)
                .args([
                    "attach",
                    &target.id().to_string(),
                    "--frames",
                    "3",
                    "--mode",
                    "timeline",
                    "-o",
                ])
                .arg(&session)
                .output()?;
            if !out.status.success() {
                bail!(
                    "gpuheat attach failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            let s = Session::open(&session)?;
            let a = s.attach.context("session without an attach record")?;
            latency.push(a.latency_ns as f64 / 1e6);
            hiccup.push(a.hiccup_ns as f64 / 1e6);
            injection.push(a.injection_ns as f64 / 1e6);
            // Swap to swap: the period the program's user sees.
            for w in s.frames.windows(2) {
                frame.push(w[1].end_ns.saturating_sub(w[0].end_ns) as f64 / 1e6);
            }
        }
        Ok(AttachStats {
            attaches,
            latency_ms: median(latency),
            hiccup_ms: median(hiccup),
            injection_ms: median(injection),
            frame_ms: median(frame),
        })
    })();
    let _ = target.kill();
    let _ = target.wait();
    result
}
