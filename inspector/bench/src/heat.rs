//! Heat cost (issue 4): what a heat-captured frame costs against the same frame uncaptured,
//! for N draws, and the memory the maps take.
//!
//! Workload: `overdraw --api gles --size 256x256 --layers N --timing` (N full-screen blended
//! draws per frame; `--timing` puts a glFinish before every swap so each frame is really
//! rendered). For each N, three runs of F frames (F = 12 for N ≤ 100, 8 above):
//!
//! - `uncaptured`: overdraw alone with `--report-frame-ms`: the start-to-start periods of its
//!   frames but the first (which compiles shaders);
//! - `full`: `gpuheat run --mode full --skip 1 --frames 6 --keep-running`; the frame times are
//!   the swap-to-swap periods of the captured frames (`frames[i].end_ns - frames[i-1].end_ns`,
//!   5 of them), which cover everything the agent does in the frame and at its end (the heat
//!   read-back included);
//! - `full+heat`: the same with `--heat`, and the agent's own painting time per frame (its
//!   AGNT records' `paint_ns`: CPU-side, its waits included), which llvmpipe's frame-to-frame
//!   noise does not blur as it does the periods.
//!
//! Each time is a median with its quartiles and range; a ratio is of the medians, with the
//! interval its quartiles give.
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
use crate::table::{ratio_json, spread_json, Spread};

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
    /// overdraw alone: its frame periods.
    pub uncaptured: Spread,
    /// Captured, full mode: the swap-to-swap periods of the captured frames.
    pub full: Spread,
    /// Captured, full mode with heat: the same.
    pub heat: Spread,
    /// The agent's own painting per heat-captured frame, ms.
    pub paint: Spread,
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
    /// Time heat adds per painted draw, over full mode without heat (medians).
    pub fn per_draw_ms(&self) -> f64 {
        (self.heat.median - self.full.median) / self.painted.max(1) as f64
    }

    /// The heat-captured frame over the uncaptured one (medians).
    pub fn heat_ratio(&self) -> f64 {
        self.heat.median / self.uncaptured.median
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
        8
    }
}

/// Frames captured in each captured run (after one skipped): 5 periods between them.
const CAPTURED: u32 = 6;

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
        "--report-frame-ms",
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
    let uncaptured = Spread::of(&reported_periods(&out, "overdraw", frames_for(layers) - 1)?);
    let (full, _) = captured(gpuheat, agent, overdraw, scratch, layers, false, limit)?;
    let (heat, session) = captured(gpuheat, agent, overdraw, scratch, layers, true, limit)?;
    if let Some(m) = session.heat_missing.first() {
        bail!("frame {} has no heat map: {}", m.frame, m.reason);
    }
    let map = session
        .heat
        .first()
        .context("the --heat session holds no HEAT record")?;
    let paint: Vec<f64> = session
        .agent_frames
        .iter()
        .map(|a| a.own.paint_ns as f64 / 1e6)
        .collect();
    Ok(HeatRow {
        layers,
        uncaptured,
        full,
        heat,
        paint: Spread::of(&paint),
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

/// One captured run: the swap-to-swap periods of its frames, and its session.
fn captured(
    gpuheat: &Path,
    agent: &Path,
    overdraw: &Path,
    scratch: &Path,
    layers: u32,
    heat: bool,
    limit: Duration,
) -> Result<(Spread, Session)> {
    let file = scratch.join(format!("heat-{layers}-{}.gpuheat", u8::from(heat)));
    let args = overdraw_args(layers);
    let (session, periods) = capture_run(
        gpuheat,
        agent,
        &file,
        CAPTURED,
        heat,
        overdraw,
        &args,
        &[],
        limit,
    )?;
    let _ = std::fs::remove_file(&file);
    Ok((Spread::of(&periods), session))
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
        "heat cost (overdraw --api gles --size 256x256 --layers N --timing; frame ms: median \
         (Q1-Q3, min-max) of the uncaptured frames, of {} captured frames' swap-to-swap periods)",
        CAPTURED - 1
    );
    println!(
        "{:>6} {:>7} {:>40} {:>20} {:>7} {:>10} {:>36}",
        "layers",
        "",
        "frame ms",
        "ratio (from quartiles)",
        "painted",
        "ms/painted",
        "agent paint ms/frame"
    );
    for r in rows {
        let lines = [
            ("uncapt.", &r.uncaptured, String::new()),
            ("full", &r.full, r.full.ratio_text(&r.uncaptured)),
            ("+heat", &r.heat, r.heat.ratio_text(&r.uncaptured)),
        ];
        for (k, (what, s, ratio)) in lines.into_iter().enumerate() {
            let heat = k == 2;
            println!(
                "{:>6} {:>7} {:>40} {:>20} {:>7} {:>10} {:>36}",
                if k == 0 {
                    r.layers.to_string()
                } else {
                    String::new()
                },
                what,
                s.text(),
                ratio,
                if heat {
                    r.painted.to_string()
                } else {
                    String::new()
                },
                if heat {
                    format!("{:.3}", r.per_draw_ms())
                } else {
                    String::new()
                },
                if heat { r.paint.text() } else { String::new() },
            );
        }
    }
    println!(
        "ratio = captured / uncaptured; ms/painted = (+heat - full) / draws painted (medians); \
         agent paint = the agent's own painting in each heat-captured frame; map B (one frame's \
         HEAT maps in the session: heat f32 + overdraw u32 + RGBA8 colour) and GPU B (the \
         painter's buffers, {} B/pixel with the window the only target: STENCIL_INDEX8 + RGBA8 \
         mask + R32F count, R32F heat and overdraw): {}.",
        GPU_BYTES_PER_PIXEL,
        rows.iter()
            .map(|r| format!("{} layers {} / {}", r.layers, r.map_bytes, r.gpu_bytes))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The draw counts' rows as JSON.
pub fn to_json(rows: &[HeatRow]) -> Value {
    json!({
        "workload": "overdraw --api gles --size 256x256 --layers N --timing",
        "frame_time": format!("uncaptured: overdraw's start-to-start periods (--report-frame-ms) but the first; captured: the swap-to-swap periods of {CAPTURED} captured frames"),
        "gpu_bytes_per_pixel": GPU_BYTES_PER_PIXEL,
        "rows": rows.iter().map(|r| json!({
            "layers": r.layers,
            "uncaptured_ms": spread_json(&r.uncaptured),
            "full_ms": spread_json(&r.full),
            "full_ratio": ratio_json(&r.full, &r.uncaptured),
            "heat_ms": spread_json(&r.heat),
            "heat_ratio": ratio_json(&r.heat, &r.uncaptured),
            "agent_paint_ms": spread_json(&r.paint),
            "painted_draws": r.painted,
            "added_ms_per_painted_draw": r.per_draw_ms(),
            "map_width": r.width,
            "map_height": r.height,
            "map_bytes": r.map_bytes,
            "gpu_bytes": r.gpu_bytes,
        })).collect::<Vec<Value>>(),
    })
}
