//! Geometry cost (issue 13, target 5): what full mode's geometry capture adds to a frame of
//! many draws, against full mode without it and against the frame uncaptured.
//!
//! Workload: `many_draws --draws D --tris T --timing` (default 1,000 × 1,000: 1M triangles,
//! 3M post-transform vertices per frame; `--timing` puts a glFinish before every swap so each
//! frame is really rendered). Three configurations, each run R times (`--geometry-runs`)
//! round-robin (run 1 of each, then run 2, …) so that drift of a shared machine spreads over
//! all of them; each run gives F-1 frame times (F = `--geometry-frames`), pooled over runs:
//!
//! - `uncaptured`: many_draws alone, `--frames F+1 --report-frame-ms`: each frame's
//!   start-to-start period (its draws, glFinish and swap), frames 1..=F-1 (frame 0 compiles
//!   the shaders on first use);
//! - `full`: `gpuheat run --mode full --skip 1 --frames F --keep-running` with
//!   `GPUHEAT_GEOMETRY_VERTICES=0` (geometry off): the swap-to-swap periods of the F captured
//!   frames, which cover everything the agent does in a frame and at its end;
//! - `full+geometry`: the same with the default vertex budget (the variable unset).
//!
//! Each is given as median, quartiles and range over its frames; a ratio is one median over
//! another, with the interval from the quartiles (Q1 / other Q3 to Q3 / other Q1). The
//! geometry session is also checked: the vertex budget its GEOM records carry, the vertices
//! kept, dropped (past the budget) and expected (3·D·T) per frame, and the draws listed as
//! missing their geometry, so a cheap figure that records nothing cannot pass unnoticed.

use anyhow::{bail, Context, Result};
use gpuheat_session::control::env;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::heat::{capture_run, reported_periods};
use crate::programs::run_bounded;
use crate::table::{ratio_json, spread_json, Spread};

/// The workload's size: draws per frame and triangles per draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    pub draws: u32,
    pub tris: u32,
}

impl Workload {
    /// Post-transform vertices of one frame (triangles unrolled).
    pub fn vertices(&self) -> u64 {
        3 * u64::from(self.draws) * u64::from(self.tris)
    }
}

/// Parses `--geometry`: `DxT` (draws × triangles per draw); empty or "0": skip.
pub fn parse_workload(s: &str) -> Result<Option<Workload>> {
    let s = s.trim();
    if s.is_empty() || s == "0" {
        return Ok(None);
    }
    let (d, t) = s
        .split_once(['x', 'X'])
        .with_context(|| format!("--geometry: `{s}` is not DRAWSxTRIS"))?;
    let draws: u32 = d
        .trim()
        .parse()
        .with_context(|| format!("--geometry: `{d}` is not a number of draws"))?;
    let tris: u32 = t
        .trim()
        .parse()
        .with_context(|| format!("--geometry: `{t}` is not a number of triangles"))?;
    if draws == 0 || tris < 2 {
        bail!("--geometry: needs at least 1 draw of at least 2 triangles (many_draws' limits)");
    }
    Ok(Some(Workload { draws, tris }))
}

/// The geometry cost.
pub struct GeometryRow {
    pub workload: Workload,
    /// Captured frames (F) per run; each spread holds R·(F-1) periods.
    pub frames: u32,
    /// Runs per configuration (R).
    pub runs: u32,
    /// many_draws alone: start-to-start periods of frames 1..=F-1, ms.
    pub uncaptured: Spread,
    /// Full mode, geometry off: swap-to-swap periods of the captured frames, ms.
    pub full: Spread,
    /// Full mode with geometry (default budget): the same.
    pub geometry: Spread,
    /// The vertex budget the GEOM records carry (the agent's, after its caps).
    pub budget: u64,
    /// Per captured frame: vertices kept, dropped past the budget, draws missing.
    pub kept: Spread,
    pub dropped: Spread,
    pub missing: Spread,
    /// Why the first missing draw is missing, if any is.
    pub first_missing: Option<String>,
}

impl GeometryRow {
    /// Whether the budget holds the workload's every vertex.
    pub fn budget_covers(&self) -> bool {
        self.budget >= self.workload.vertices()
    }
}

fn program_args(w: Workload, frames: u32, report: bool) -> Vec<String> {
    let mut a: Vec<String> = [
        "--draws",
        &w.draws.to_string(),
        "--tris",
        &w.tris.to_string(),
        "--timing",
        "--frames",
        &frames.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if report {
        a.push("--report-frame-ms".into());
    }
    a
}

/// Measures the geometry cost of `workload` over `runs` runs of `frames` captured frames (at
/// least 3) per configuration.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    gpuheat: &Path,
    agent: &Path,
    many_draws: &Path,
    scratch: &Path,
    workload: Workload,
    frames: u32,
    runs: u32,
    limit: Duration,
) -> Result<GeometryRow> {
    let frames = frames.max(3);
    let runs = runs.max(1);
    let (mut uncaptured, mut full, mut geometry) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for run in 1..=runs {
        uncaptured.extend(uncaptured_run(many_draws, workload, frames, limit)?);
        full.extend(
            captured_run(
                gpuheat, agent, many_draws, scratch, workload, frames, false, limit,
            )
            .with_context(|| format!("run {run}"))?
            .0,
        );
        let (periods, session) = captured_run(
            gpuheat, agent, many_draws, scratch, workload, frames, true, limit,
        )
        .with_context(|| format!("run {run}"))?;
        geometry.extend(periods);
        last = Some(session);
    }
    let Some(session) = last else {
        bail!("no geometry run");
    };
    row(
        workload,
        frames,
        runs,
        Spread::of(&uncaptured),
        Spread::of(&full),
        Spread::of(&geometry),
        &session,
    )
}

/// many_draws alone: the start-to-start periods of frames 1..=F-1, ms.
fn uncaptured_run(
    many_draws: &Path,
    workload: Workload,
    frames: u32,
    limit: Duration,
) -> Result<Vec<f64>> {
    let mut cmd = Command::new(many_draws);
    cmd.args(program_args(workload, frames + 1, true));
    let out = run_bounded(cmd, limit)?;
    reported_periods(&out, "many_draws", frames)
}

/// One captured run, full mode with or without geometry: the swap-to-swap periods of the
/// captured frames, and the session.
#[allow(clippy::too_many_arguments)]
fn captured_run(
    gpuheat: &Path,
    agent: &Path,
    many_draws: &Path,
    scratch: &Path,
    workload: Workload,
    frames: u32,
    with_geometry: bool,
    limit: Duration,
) -> Result<(Vec<f64>, gpuheat_session::Session)> {
    // The program runs past the capture (--skip 1, then F frames, then 2 more).
    let args = program_args(workload, frames + 3, false);
    let file = scratch.join(format!("geometry-{}.gpuheat", u8::from(with_geometry)));
    let env: &[(&str, &str)] = if with_geometry {
        &[]
    } else {
        &[(env::GEOMETRY_VERTICES, "0")]
    };
    let what = if with_geometry {
        "many_draws, full mode with geometry"
    } else {
        "many_draws, full mode without geometry"
    };
    let (session, periods) = capture_run(
        gpuheat, agent, &file, frames, false, many_draws, &args, env, limit,
    )
    .context(what)?;
    let _ = std::fs::remove_file(&file);
    if !with_geometry && session.geometry.iter().any(|g| !g.draws.is_empty()) {
        bail!("{}=0 still recorded geometry", env::GEOMETRY_VERTICES);
    }
    Ok((periods, session))
}

/// The row: the three spreads, and what the (last) geometry session recorded.
fn row(
    workload: Workload,
    frames: u32,
    runs: u32,
    uncaptured: Spread,
    full: Spread,
    geometry: Spread,
    session: &gpuheat_session::Session,
) -> Result<GeometryRow> {
    let per_frame = |f: &dyn Fn(&gpuheat_session::FrameGeometry) -> u64| -> Spread {
        let v: Vec<f64> = session
            .frames
            .iter()
            .map(|fr| {
                session
                    .geometry
                    .iter()
                    .filter(|g| g.frame == fr.index)
                    .map(f)
                    .sum::<u64>() as f64
            })
            .collect();
        Spread::of(&v)
    };
    let kept = per_frame(&|g| g.draws.iter().map(|d| d.positions.len() as u64).sum());
    let dropped = per_frame(&|g| g.draws.iter().map(|d| d.dropped_vertices).sum());
    let missing = per_frame(&|g| g.missing.len() as u64);
    let budget = session
        .geometry
        .first()
        .map(|g| g.vertex_budget)
        .context("the geometry session holds no GEOM record")?;
    Ok(GeometryRow {
        workload,
        frames,
        runs,
        uncaptured,
        full,
        geometry,
        budget,
        kept,
        dropped,
        missing,
        first_missing: session
            .geometry
            .iter()
            .flat_map(|g| &g.missing)
            .next()
            .map(|m| format!("call {}: {}", m.call, m.reason)),
    })
}

/// The geometry cost as JSON.
pub fn to_json(g: &GeometryRow) -> Value {
    json!({
        "workload": format!(
            "many_draws --draws {} --tris {} --timing",
            g.workload.draws, g.workload.tris
        ),
        "frame_time": "uncaptured: start-to-start periods of frames 1..F-1; captured: swap-to-swap periods of the F captured frames; pooled over the runs",
        "captured_frames": g.frames,
        "runs": g.runs,
        "uncaptured_ms": spread_json(&g.uncaptured),
        "full_ms": spread_json(&g.full),
        "geometry_ms": spread_json(&g.geometry),
        "geometry_vs_full": ratio_json(&g.geometry, &g.full),
        "geometry_vs_uncaptured": ratio_json(&g.geometry, &g.uncaptured),
        "full_vs_uncaptured": ratio_json(&g.full, &g.uncaptured),
        "vertex_budget": g.budget,
        "vertices_per_frame": g.workload.vertices(),
        "budget_covers_workload": g.budget_covers(),
        "kept_vertices_per_frame": spread_json(&g.kept),
        "dropped_vertices_per_frame": spread_json(&g.dropped),
        "missing_draws_per_frame": spread_json(&g.missing),
        "first_missing": g.first_missing,
    })
}

/// The geometry cost as a table.
pub fn print(g: &GeometryRow) {
    println!();
    println!(
        "geometry cost (many_draws --draws {} --tris {} --timing; {} runs of {} captured frames, \
         round-robin, frame times pooled)",
        g.workload.draws, g.workload.tris, g.runs, g.frames
    );
    println!(
        "{:<14} {:>36} {:>22} {:>22}",
        "", "frame ms: median (Q1-Q3, min-max)", "vs uncapt.", "vs full"
    );
    for (name, s) in [
        ("uncapt.", &g.uncaptured),
        ("full", &g.full),
        ("full+geometry", &g.geometry),
    ] {
        println!(
            "{name:<14} {:>36} {:>22} {:>22}",
            s.text(),
            s.ratio_text(&g.uncaptured),
            s.ratio_text(&g.full)
        );
    }
    println!(
        "vertex budget {} per frame, the workload makes {} ({}); per frame: kept {:.0} \
         ({:.0}-{:.0}), dropped {:.0} ({:.0}-{:.0}), draws missing {:.0} ({:.0}-{:.0}){}",
        g.budget,
        g.workload.vertices(),
        if g.budget_covers() {
            "covered"
        } else {
            "NOT covered: the rest is dropped"
        },
        g.kept.median,
        g.kept.min,
        g.kept.max,
        g.dropped.median,
        g.dropped.min,
        g.dropped.max,
        g.missing.median,
        g.missing.min,
        g.missing.max,
        g.first_missing
            .as_ref()
            .map(|m| format!("; first missing: {m}"))
            .unwrap_or_default()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads() {
        assert_eq!(
            parse_workload("1000x1000").unwrap(),
            Some(Workload {
                draws: 1000,
                tris: 1000
            })
        );
        assert_eq!(parse_workload("").unwrap(), None);
        assert_eq!(parse_workload(" 0 ").unwrap(), None);
        assert!(parse_workload("1000").is_err());
        assert!(parse_workload("10x1").is_err());
        assert_eq!(
            parse_workload("1000x1000").unwrap().unwrap().vertices(),
            3_000_000
        );
    }
}
