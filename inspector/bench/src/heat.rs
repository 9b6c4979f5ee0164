//! Heat cost (issue 4): what a heat-captured frame costs against the same frame uncaptured,
//! for N draws, and the memory the maps take.
//!
//! Workload: `overdraw --api gles --size 256x256 --layers N --timing` (N full-screen blended
//! draws per frame; `--timing` puts a glFinish before every swap so each frame is really
//! rendered). For each N, three runs of F frames (F = 12 for N ≤ 100, 5 above):
//!
//! - `uncaptured`: overdraw alone; its own `frame_ms=` (median over its frames, from the
//!   start of the frame to the return of the swap);
//! - `full`: `gpuheat run --mode full --skip 1 --frames 3 --keep-running`; the frame time is
//!   the swap-to-swap period of the captured frames (`frames[i].end_ns - frames[i-1].end_ns`,
//!   median of the 2 intervals), which covers everything the agent does in the frame and at
//!   its end (the heat read-back included);
//! - `full+heat`: the same with `--heat`.
//!
//! Memory: `map bytes` = what the HEAT records of one frame hold in the session
//! (`heat.len()·4 + overdraw.len()·4 + colour.len()`); `GPU bytes` = the painter's targets,
//! 17 bytes per map pixel (counters/src/thermal.rs: STENCIL_INDEX8 1 + RGBA8 4 + three R32F
//! (scratch, heat, overdraw) 12), as allocated, ignoring driver padding.

use anyhow::{bail, Context, Result};
use gpuheat_session::Session;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::{median, run_bounded};

/// Bytes per map pixel of the painter's render buffers: STENCIL_INDEX8 + RGBA8 + 3 × R32F.
pub const GPU_BYTES_PER_PIXEL: u64 = 1 + 4 + 3 * 4;

/// One draw count's results.
pub struct HeatRow {
    pub layers: u32,
    /// overdraw alone: its median frame time.
    pub uncaptured_ms: f64,
    /// Captured, full mode: median swap-to-swap period of the captured frames.
    pub full_ms: f64,
    /// Captured, full mode with heat: the same.
    pub heat_ms: f64,
    /// Draws painted in one frame (the HEAT record's draw list).
    pub painted: u64,
    /// Bytes of one frame's maps in the session (heat + overdraw + colour).
    pub map_bytes: u64,
    /// Bytes of the painter's GPU targets.
    pub gpu_bytes: u64,
    pub width: u32,
    pub height: u32,
}

impl HeatRow {
    /// Time heat adds per painted draw, over full mode without heat.
    pub fn per_draw_ms(&self) -> f64 {
        (self.heat_ms - self.full_ms) / self.painted.max(1) as f64
    }
}

/// Parses `--heat-layers`: a comma-separated list; empty or "0" means none.
pub fn parse_layers(s: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: u32 = part
            .parse()
            .with_context(|| format!("--heat-layers: `{part}` is not a number"))?;
        if n > 0 {
            out.push(n);
        }
    }
    Ok(out)
}

fn frames_for(layers: u32) -> u32 {
    if layers <= 100 {
        12
    } else {
        5
    }
}

fn overdraw_args(layers: u32) -> Vec<String> {
    [
        "--api",
        "gles",
        "--size",
        "256x256",
        "--layers",
        &layers.to_string(),
        "--timing",
        "--frames",
        &frames_for(layers).to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Measures every draw count in `layers`.
pub fn measure(
    gpuheat: &Path,
    agent: &Path,
    overdraw: &Path,
    scratch: &Path,
    layers: &[u32],
    limit: Duration,
) -> Result<Vec<HeatRow>> {
    layers
        .iter()
        .map(|&n| {
            measure_one(gpuheat, agent, overdraw, scratch, n, limit)
                .with_context(|| format!("heat cost, {n} layers"))
        })
        .collect()
}

fn measure_one(
    gpuheat: &Path,
    agent: &Path,
    overdraw: &Path,
    scratch: &Path,
    layers: u32,
    limit: Duration,
) -> Result<HeatRow> {
    let mut cmd = Command::new(overdraw);
    cmd.args(overdraw_args(layers));
    let out = run_bounded(cmd, limit)?;
    let uncaptured_ms = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("frame_ms="))
        .and_then(|v| v.trim().parse::<f64>().ok());
    let uncaptured_ms = match uncaptured_ms {
        Some(v) if out.status.success() => v,
        _ => bail!(
            "overdraw ({}): no frame_ms= line; stderr: {}",
            out.status,
            out.stderr.trim()
        ),
    };
    let (full_ms, _) = captured(gpuheat, agent, overdraw, scratch, layers, false, limit)?;
    let (heat_ms, session) = captured(gpuheat, agent, overdraw, scratch, layers, true, limit)?;
    if let Some(m) = session.heat_missing.first() {
        bail!("frame {} has no heat map: {}", m.frame, m.reason);
    }
    let map = session
        .heat
        .first()
        .context("the --heat session holds no HEAT record")?;
    Ok(HeatRow {
        layers,
        uncaptured_ms,
        full_ms,
        heat_ms,
        painted: map.draws.len() as u64,
        map_bytes: map.heat.len() as u64 * 4
            + map.overdraw.len() as u64 * 4
            + map.colour.len() as u64,
        gpu_bytes: map.pixels() * GPU_BYTES_PER_PIXEL,
        width: map.width,
        height: map.height,
    })
}

/// One captured run: the median swap-to-swap period of its frames, and its session.
fn captured(
    gpuheat: &Path,
    agent: &Path,
    overdraw: &Path,
    scratch: &Path,
    layers: u32,
    heat: bool,
    limit: Duration,
) -> Result<(f64, Session)> {
    let file = scratch.join(format!("heat-{layers}-{}.gpuheat", u8::from(heat)));
    let mut cmd = Command::new(gpuheat);
    cmd.env(gpuheat_session::control::env::AGENT, agent)
        .arg("run")
        .arg("-o")
        .arg(&file)
        .args(["--timeout", "60", "--mode", "full", "--frames", "3"])
        .args(["--skip", "1", "--keep-running"]);
    if heat {
        cmd.arg("--heat");
    }
    cmd.arg("--").arg(overdraw).args(overdraw_args(layers));
    let out = run_bounded(cmd, limit)?;
    if !out.status.success() {
        bail!(
            "gpuheat run{} ({}): {}",
            if heat { " --heat" } else { "" },
            out.status,
            out.stderr.trim()
        );
    }
    let session =
        Session::open(&file).with_context(|| format!("reading session {}", file.display()))?;
    let _ = std::fs::remove_file(&file);
    if session.frames.len() != 3 {
        bail!(
            "the session holds {} frames, expected 3",
            session.frames.len()
        );
    }
    let mut periods: Vec<f64> = session
        .frames
        .windows(2)
        .map(|w| w[1].end_ns.saturating_sub(w[0].end_ns) as f64 / 1e6)
        .collect();
    Ok((median(&mut periods), session))
}
