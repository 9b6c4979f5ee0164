//! How often the agent makes the program wait for the GPU per captured frame (its own
//! `glFinish`, read-backs and query reads: the session's `AGNT` records), per capture mode,
//! at several draw counts of `many_draws --api gl` (2 triangles a draw, 256×256; desktop GL,
//! where heat of deferred draws is weighted on the GPU) and, for heat, of `many_draws --api
//! gles` (GLES, where they are tallied and weighed at the frame's end), with each mode's
//! captured frame against the uncaptured one (`many_draws --timing` in both: the program
//! finishes its frame before the swap, so a frame's time is its work's, same run). Issue 25's
//! target: at most 2 per context per frame whatever the draw count; on a real GPU each wait
//! is a CPU–GPU round trip, so this row, not llvmpipe's frame ratio, predicts a capture's cost
//! there. The deferred rows force `--timing deferred`, which `auto` chooses on immediate-mode
//! GPUs only: on llvmpipe their counts are exact and their times are not a call's cost.

use anyhow::{bail, Context, Result};
use gpuheat_session::control::env;
use gpuheat_session::Session;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::programs::run_bounded;
use crate::table::median;

/// Where the GLES rows' tally adds its records ([`env::TALLY_RESOLVE`]; the agent's choice
/// elsewhere): both are measured, whatever the renderer would choose.
const CPU: &[(&str, &str)] = &[(env::TALLY_RESOLVE, "cpu")];
const GPU: &[(&str, &str)] = &[(env::TALLY_RESOLVE, "gpu")];

/// The capture modes measured, as the row names them, with their `gpuheat run` flags,
/// geometry budget, the program's API and environment.
type Mode = (
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);
const MODES: [Mode; 10] = [
    ("timeline", &["--mode", "timeline"], "0", "gl", &[]),
    (
        "full",
        &["--mode", "full", "--timing", "isolated"],
        "0",
        "gl",
        &[],
    ),
    (
        "full, deferred",
        &["--mode", "full", "--timing", "deferred"],
        "0",
        "gl",
        &[],
    ),
    (
        "full + heat",
        &["--mode", "full", "--heat", "--timing", "isolated"],
        "0",
        "gl",
        &[],
    ),
    (
        "full + heat, deferred",
        &["--mode", "full", "--heat", "--timing", "deferred"],
        "0",
        "gl",
        &[],
    ),
    (
        "full + heat, GLES",
        &["--mode", "full", "--heat", "--timing", "isolated"],
        "0",
        "gles",
        &[],
    ),
    (
        "full + heat, deferred, GLES, records on the CPU",
        &["--mode", "full", "--heat", "--timing", "deferred"],
        "0",
        "gles",
        CPU,
    ),
    (
        "full + heat, deferred, GLES, records on the GPU",
        &["--mode", "full", "--heat", "--timing", "deferred"],
        "0",
        "gles",
        GPU,
    ),
    (
        "full + geometry",
        &["--mode", "full", "--timing", "isolated"],
        "4194304",
        "gl",
        &[],
    ),
    (
        "full + geometry, deferred",
        &["--mode", "full", "--timing", "deferred"],
        "4194304",
        "gl",
        &[],
    ),
];

/// Captured frames per run; the first is left out (a launch capture's frame 0 compiles).
const FRAMES: u32 = 4;

/// One mode's waits per frame at each draw count.
pub struct WaitsRow {
    pub mode: &'static str,
    /// The program's API (`many_draws --api`).
    pub api: &'static str,
    /// (draws, median waits per captured frame, frames counted).
    pub waits: Vec<(u32, f64, usize)>,
    /// Median captured frame (ms, swap to swap) at each draw count, in the order of `waits`.
    pub frame_ms: Vec<f64>,
    /// Median of the agent's own time per captured frame (ms, its `AGNT` records), likewise.
    pub agent_ms: Vec<f64>,
}

/// The uncaptured frame of `many_draws` at each draw count (ms, its own `frame_ms=`), on GL and
/// on GLES, and the modes' rows.
pub struct Waits {
    pub uncaptured_ms: Vec<(u32, f64)>,
    pub uncaptured_gles_ms: Vec<(u32, f64)>,
    pub rows: Vec<WaitsRow>,
}

/// Parses `--waits`: a comma-separated list of draw counts; empty or "0" means none.
pub fn parse_draws(s: &str) -> Result<Vec<u32>> {
    crate::table::parse_counts("--waits", s)
}

/// Captures `many_draws --draws N` in every mode at every count of `draws` and reads each
/// session's waits.
pub fn measure(
    gpuheat: &Path,
    agent: &Path,
    many_draws: &Path,
    scratch: &Path,
    draws: &[u32],
    limit: Duration,
) -> Result<Waits> {
    let uncaptured = |api: &str| {
        draws
            .iter()
            .map(|&n| uncaptured_frame(many_draws, api, n, limit))
            .collect::<Result<Vec<_>>>()
    };
    let uncaptured_ms = uncaptured("gl")?;
    let uncaptured_gles_ms = uncaptured("gles")?;
    let rows = MODES
        .iter()
        .map(|&(mode, flags, budget, api, envs)| {
            let waits = draws
                .iter()
                .map(|&n| {
                    let file = scratch.join(format!("waits-{n}.gpuheat"));
                    let mut cmd = Command::new(gpuheat);
                    cmd.env(env::AGENT, agent)
                        .env(env::GEOMETRY_VERTICES, budget)
                        .envs(envs.iter().copied())
                        .arg("run")
                        .arg("-o")
                        .arg(&file)
                        .args(flags)
                        .args(["--timeout", "60", "--frames"])
                        .arg(FRAMES.to_string())
                        .arg("--")
                        .arg(many_draws)
                        .args(["--api", api, "--draws", &n.to_string(), "--tris", "2"])
                        .arg("--timing")
                        .arg("--frames")
                        .arg((FRAMES + 2).to_string());
                    let out = run_bounded(cmd, limit)?;
                    if !out.status.success() {
                        bail!("gpuheat run ({mode}, {n} draws): {}", out.stderr.trim());
                    }
                    let session = Session::open(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    let _ = std::fs::remove_file(&file);
                    let mut w: Vec<f64> = session
                        .agent_frames
                        .iter()
                        .skip(1)
                        .map(|f| f.waits as f64)
                        .collect();
                    if w.is_empty() {
                        bail!("{mode}, {n} draws: the session counts no waits (AGNT records)");
                    }
                    let frames = w.len();
                    let mut own: Vec<f64> = session
                        .agent_frames
                        .iter()
                        .skip(1)
                        .map(|f| f.own.total_ns() as f64 / 1e6)
                        .collect();
                    // Swap to swap, as the heat rows: the agent's frame-end work included.
                    let mut ms: Vec<f64> = session
                        .frames
                        .windows(2)
                        .map(|w| w[1].end_ns.saturating_sub(w[0].end_ns) as f64 / 1e6)
                        .collect();
                    Ok((
                        (n, median(&mut w), frames),
                        (median(&mut ms), median(&mut own)),
                    ))
                })
                .collect::<Result<Vec<_>>>()
                .with_context(|| format!("agent waits, {mode}"))?;
            let (waits, times): (Vec<_>, Vec<_>) = waits.into_iter().unzip();
            let (frame_ms, agent_ms) = times.into_iter().unzip();
            Ok(WaitsRow {
                mode,
                api,
                waits,
                frame_ms,
                agent_ms,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Waits {
        uncaptured_ms,
        uncaptured_gles_ms,
        rows,
    })
}

/// `many_draws --api api --draws n` alone: its median frame (ms, its own `frame_ms=`).
fn uncaptured_frame(many_draws: &Path, api: &str, n: u32, limit: Duration) -> Result<(u32, f64)> {
    let mut cmd = Command::new(many_draws);
    cmd.args(["--api", api, "--draws", &n.to_string()])
        .args(["--tris", "2", "--timing", "--frames"])
        .arg((FRAMES + 2).to_string());
    let out = run_bounded(cmd, limit)?;
    let ms = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("frame_ms="))
        .and_then(|v| v.trim().parse::<f64>().ok());
    match ms {
        Some(ms) if out.status.success() => Ok((n, ms)),
        _ => bail!("many_draws --api {api} --draws {n} --timing: no frame_ms= line"),
    }
}

/// The rows as a table: one row per mode named `agent waits per frame`, then one per mode
/// of its captured frame against the uncaptured one.
pub fn print(w: &Waits) {
    let rows = &w.rows;
    let Some(first) = rows.first() else {
        return;
    };
    println!();
    println!(
        "agent waits per frame (many_draws --api gl --draws N --tris 2, --api gles where the row says GLES; median \
         over captured frames 2..={FRAMES}; target: at most 2 per context per frame whatever N)"
    );
    print!("{:<72}", "");
    for (n, _, _) in &first.waits {
        print!(" {:>10}", format!("N = {n}"));
    }
    println!();
    for r in rows {
        print!("{:<72}", format!("agent waits per frame, {}", r.mode));
        for (_, w, _) in &r.waits {
            print!(" {w:>10}");
        }
        println!();
    }
    for (name, uncaptured) in [
        ("uncaptured frame ms", &w.uncaptured_ms),
        ("uncaptured frame ms, GLES", &w.uncaptured_gles_ms),
    ] {
        print!("{:<72}", name);
        for (_, ms) in uncaptured {
            print!(" {:>10}", format!("{ms:.3}"));
        }
        println!();
    }
    for r in rows {
        print!("{:<72}", format!("frame ratio, {}", r.mode));
        let base = if r.api == "gles" {
            &w.uncaptured_gles_ms
        } else {
            &w.uncaptured_ms
        };
        for (ms, (_, base)) in r.frame_ms.iter().zip(base) {
            print!(" {:>10}", format!("{:.2}x", ms / base));
        }
        println!();
    }
    // What heat adds per draw painted: the heat row's frame less its timing's full row's.
    for (heat, full) in [
        ("full + heat", "full"),
        ("full + heat, deferred", "full, deferred"),
    ] {
        let row = |mode: &str| rows.iter().find(|r| r.mode == mode);
        let (Some(h), Some(f)) = (row(heat), row(full)) else {
            continue;
        };
        print!("{:<72}", format!("ms per painted draw, {heat}"));
        for ((hm, fm), (n, _, _)) in h.frame_ms.iter().zip(&f.frame_ms).zip(&h.waits) {
            print!(
                " {:>10}",
                format!("{:.4}", (hm - fm) / f64::from((*n).max(1)))
            );
        }
        println!();
    }
    // Where a capture's cost goes once it no longer waits: the agent's own GL calls.
    for r in rows {
        print!("{:<72}", format!("agent ms per frame, {}", r.mode));
        for ms in &r.agent_ms {
            print!(" {:>10}", format!("{ms:.3}"));
        }
        println!();
    }
}

/// The rows as JSON.
pub fn to_json(w: &Waits) -> Value {
    json!({
        "workload": "many_draws --api gl --draws N --tris 2",
        "frames": format!("median over captured frames 2..={FRAMES}"),
        "uncaptured_frame_ms": w.uncaptured_ms.iter().map(|&(n, ms)| json!({
            "draws": n, "median": ms,
        })).collect::<Vec<Value>>(),
        "uncaptured_frame_ms_gles": w.uncaptured_gles_ms.iter().map(|&(n, ms)| json!({
            "draws": n, "median": ms,
        })).collect::<Vec<Value>>(),
        "rows": w.rows.iter().map(|r| json!({
            "mode": r.mode,
            "api": r.api,
            "waits_per_frame": r.waits.iter().zip(&r.frame_ms).zip(&r.agent_ms)
                .map(|((&(n, w, frames), &ms), &own)| json!({
                    "draws": n, "median": w, "frames": frames, "frame_ms": ms, "agent_ms": own,
                })).collect::<Vec<Value>>(),
        })).collect::<Vec<Value>>(),
    })
}
