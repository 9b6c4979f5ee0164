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
//! (`heat.len()·4 + overdraw.len()·4 + colour.len()`); `GPU bytes` = the painter's buffers
//! (counters/src/thermal.rs, docs/ARCHITECTURE.md): 9 bytes per pixel of the largest target
//! (STENCIL_INDEX8 1, the RGBA8 mask buffer 4, the R32F count 4) plus 8 per pixel of
//! each target (its R32F heat and overdraw), as allocated, ignoring driver padding: 17 per
//! pixel when the window is the only target.
use anyhow::{bail, Context, Result};
use gpuheat_session::Session;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::programs::{run_bounded, Output};
use crate::table::median;

/// Bytes per pixel of the largest target of the painter's shared buffers: STENCIL_INDEX8 +
/// the RGBA8 mask buffer + the R32F count.
pub const GPU_SHARED_BYTES_PER_PIXEL: u64 = 1 + 4 + 4;
/// Bytes per pixel of each target's own buffers: R32F heat + R32F overdraw.
pub const GPU_TARGET_BYTES_PER_PIXEL: u64 = 4 + 4;
/// Bytes per map pixel when the window is the only target.
pub const GPU_BYTES_PER_PIXEL: u64 = GPU_SHARED_BYTES_PER_PIXEL + GPU_TARGET_BYTES_PER_PIXEL;

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
    crate::table::parse_counts("--heat-layers", s)
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

/// `gpuheat run --mode full --frames F --skip 1 --keep-running [--heat] -o FILE -- PROGRAM
/// ARGS` with `agent` and `env` added to the environment, bounded by `limit`; the session read back, checked to hold `frames`
/// frames, with its swap-to-swap periods in ms.
#[allow(clippy::too_many_arguments)]
pub(crate) fn capture_run(
    gpuheat: &Path,
    agent: &Path,
    file: &Path,
    frames: u32,
    heat: bool,
    program: &Path,
    args: &[String],
    env: &[(&str, &str)],
    limit: Duration,
) -> Result<(Session, Vec<f64>)> {
    let mut cmd = Command::new(gpuheat);
    cmd.envs(env.iter().copied())
        .env(gpuheat_session::control::env::AGENT, agent)
        .arg("run")
        .arg("-o")
        .arg(file)
        .args(["--timeout", "60", "--mode", "full", "--frames"])
        .arg(frames.to_string())
        .args(["--skip", "1", "--keep-running"]);
    if heat {
        cmd.arg("--heat");
    }
    cmd.arg("--").arg(program).args(args);
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
        Session::open(file).with_context(|| format!("reading session {}", file.display()))?;
    if session.frames.len() != frames as usize {
        bail!(
            "the session holds {} frames, expected {frames}",
            session.frames.len()
        );
    }
    let periods = session
        .frames
        .windows(2)
        .map(|w| w[1].end_ns.saturating_sub(w[0].end_ns) as f64 / 1e6)
        .collect();
    Ok((session, periods))
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
    let args = overdraw_args(layers);
    let (session, mut periods) =
        capture_run(gpuheat, agent, &file, 3, heat, overdraw, &args, &[], limit)?;
    let _ = std::fs::remove_file(&file);
    Ok((median(&mut periods), session))
}

/// The frame periods an example printed with `--report-frame-ms` (its `frame_ms_frames=`
/// line of `frames` values), without the first (frame 0 compiles shaders on first use).
pub fn reported_periods(out: &Output, program: &str, frames: u32) -> Result<Vec<f64>> {
    let periods = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("frame_ms_frames="))
        .map(|v| {
            v.split(',')
                .map(|x| x.trim().parse::<f64>())
                .collect::<Result<Vec<f64>, _>>()
        });
    match periods {
        Some(Ok(p)) if out.status.success() && p.len() == frames as usize => Ok(p[1..].to_vec()),
        _ => bail!(
            "{program} ({}): no frame_ms_frames= line with {frames} values; stderr: {}",
            out.status,
            out.stderr.trim()
        ),
    }
}

/// The draw counts' rows as a table.
pub fn print(rows: &[HeatRow]) {
    println!();
    println!(
        "heat cost (overdraw --api gles --size 256x256 --layers N --timing; captured: \
         median swap-to-swap of frames 1..=3)"
    );
    println!(
        "{:>6} {:>11} {:>19} {:>19} {:>8} {:>11} {:>10} {:>10}",
        "layers",
        "uncapt. ms",
        "full ms (ratio)",
        "+heat ms (ratio)",
        "painted",
        "ms/painted",
        "map B",
        "GPU B"
    );
    for r in rows {
        println!(
            "{:>6} {:>11.2} {:>19} {:>19} {:>8} {:>11.3} {:>10} {:>10}",
            r.layers,
            r.uncaptured_ms,
            format!("{:.2} ({:.2}x)", r.full_ms, r.full_ms / r.uncaptured_ms),
            format!("{:.2} ({:.2}x)", r.heat_ms, r.heat_ms / r.uncaptured_ms),
            r.painted,
            r.per_draw_ms(),
            r.map_bytes,
            r.gpu_bytes
        );
    }
    println!(
        "ratio = captured / uncaptured; ms/painted = (+heat - full) / draws painted; map B = \
         one frame's HEAT maps in the session (heat f32 + overdraw u32 + RGBA8 colour); \
         GPU B = the painter's buffers, {} B/pixel with the window the only target (STENCIL_INDEX8 + RGBA8 mask + R32F count, R32F heat and overdraw).",
        GPU_BYTES_PER_PIXEL
    );
}

/// The draw counts' rows as JSON.
pub fn to_json(rows: &[HeatRow]) -> Value {
    json!({
        "workload": "overdraw --api gles --size 256x256 --layers N --timing",
        "frame_time": "uncaptured: overdraw's frame_ms; captured: median swap-to-swap of frames 1..=3",
        "gpu_bytes_per_pixel": GPU_BYTES_PER_PIXEL,
        "rows": rows.iter().map(|r| json!({
            "layers": r.layers,
            "uncaptured_ms": r.uncaptured_ms,
            "full_ms": r.full_ms,
            "full_ratio": r.full_ms / r.uncaptured_ms,
            "heat_ms": r.heat_ms,
            "heat_ratio": r.heat_ms / r.uncaptured_ms,
            "painted_draws": r.painted,
            "added_ms_per_painted_draw": r.per_draw_ms(),
            "map_width": r.width,
            "map_height": r.height,
            "map_bytes": r.map_bytes,
            "gpu_bytes": r.gpu_bytes,
        })).collect::<Vec<Value>>(),
    })
}
