//! Attach cost: how long `gpuheat attach` takes to deliver the first captured frame, and the
//! hiccup it causes in the target's frames (how long its render thread was held), against
//! the target's own frame time measured in the same sessions.

use anyhow::{bail, Context, Result};
use gpuheat_session::Session;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::table::{spread_json, Spread};

/// One attach's figures, from its session's ATCH record.
#[derive(Default)]
pub struct Attaches {
    pub latency_ms: Vec<f64>,
    /// How long the render thread was held, first trap to release.
    pub hiccup_ms: Vec<f64>,
    pub injection_ms: Vec<f64>,
}

/// First attaches (each into a target that never had the agent) and re-attaches (into a
/// target whose agent an earlier attach loaded), kept apart: a re-attach finds the agent
/// loaded and hooked, so a median over both hides what a user's first attach costs.
pub struct AttachStats {
    pub first: Attaches,
    pub again: Attaches,
    /// The targets' frame period (swap to swap) in the captured frames.
    pub frame_ms: Vec<f64>,
}

/// `attaches` rounds, each on a fresh `overdraw`: a first attach, then a re-attach; 3
/// timeline frames each.
pub fn measure(
    gpuheat: &Path,
    overdraw: &Path,
    scratch: &Path,
    attaches: usize,
) -> Result<AttachStats> {
    let mut stats = AttachStats {
        first: Attaches::default(),
        again: Attaches::default(),
        frame_ms: vec![],
    };
    for round in 0..attaches {
        let mut target = Command::new(overdraw)
            // --timing: a glFinish per frame, so every frame is really rendered (llvmpipe
            // otherwise drops the unflushed work of a pbuffer frame at the next clear).
            // --fps 0: flat out, so the frame period the hiccup is compared with is the
            // frame's own cost.
            .args(["--api", "gles", "--layers", "4", "--timing", "--fps", "0"])
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", overdraw.display()))?;
        let result = (|| {
            std::thread::sleep(Duration::from_millis(500));
            for (i, into) in [&mut stats.first, &mut stats.again].into_iter().enumerate() {
                let session = scratch.join(format!("attach-{round}-{i}.gpuheat"));
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
                let _ = std::fs::remove_file(&session);
                let a = s.attach.context("session without an attach record")?;
                into.latency_ms.push(a.latency_ns as f64 / 1e6);
                into.hiccup_ms.push(a.hiccup_ns as f64 / 1e6);
                into.injection_ms.push(a.injection_ns as f64 / 1e6);
                // Swap to swap: the period the program's user sees.
                for w in s.frames.windows(2) {
                    stats
                        .frame_ms
                        .push(w[1].end_ns.saturating_sub(w[0].end_ns) as f64 / 1e6);
                }
            }
            Ok(())
        })();
        let _ = target.kill();
        let _ = target.wait();
        result?;
    }
    Ok(stats)
}

/// The attaches as a table.
pub fn print(a: &AttachStats) {
    println!();
    let frame = Spread::of(&a.frame_ms);
    println!(
        "attach (overdraw --api gles --timing; {} fresh targets, each attached twice; median [min..max]; target frame {:.2} ms):",
        a.first.hiccup_ms.len(),
        frame.median
    );
    for (name, x) in [("first attach", &a.first), ("re-attach", &a.again)] {
        let (l, h, i) = (
            Spread::of(&x.latency_ms),
            Spread::of(&x.hiccup_ms),
            Spread::of(&x.injection_ms),
        );
        println!(
            "  {name:<13} render thread held {:.1} ms [{:.1}..{:.1}] = {:.1}x the frame; injection {:.1} ms; first frame {:.0} ms after the command",
            h.median, h.min, h.max, h.median / frame.median, i.median, l.median
        );
    }
}

/// The attaches as JSON.
pub fn to_json(a: &AttachStats) -> Value {
    json!({
        "rounds": a.first.hiccup_ms.len(),
        "first": attaches_json(&a.first),
        "again": attaches_json(&a.again),
        "target_frame_ms": spread_json(&Spread::of(&a.frame_ms)),
    })
}

/// One kind of attach as JSON, each figure with its spread over the attaches.
fn attaches_json(a: &Attaches) -> Value {
    json!({
        "latency_ms": spread_json(&Spread::of(&a.latency_ms)),
        "hiccup_ms": spread_json(&Spread::of(&a.hiccup_ms)),
        "injection_ms": spread_json(&Spread::of(&a.injection_ms)),
    })
}
