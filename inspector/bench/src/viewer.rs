//! Viewer (`gpuheat-bench --viewer`): how `gpuheat view` feels on large sessions, rendered
//! offscreen by the viewer's own code (`gpuheat_viz::measure`: the same App, passes and egui
//! UI as the window, on lavapipe or llvmpipe).
//!
//! Three sessions, captured in this run from the `many_draws` example with `gpuheat run`:
//!
//! | session | capture | what it stresses |
//! |---|---|---|
//! | `baseline` | `many_draws --draws 10 --tris 10`, full mode, heat, 1 frame | the UI's own cost |
//! | `1M triangles` | `many_draws --draws D --tris T` (default 1,000 × 1,000), full mode, heat, 1 frame | the 3D tab on 3·D·T recorded vertices |
//! | `frames × draws` | `many_draws --draws D --tris 2` for F frames (default 1,000), timeline mode | opening a session of F·D draws without blocking the UI |
//!
//! Per session: first paint (from the call to the first UI frame, while the session still
//! loads on its thread), load time, the longest and the median UI frame while loading (a
//! UI that blocks shows one frame as long as the load), then the median and p95 frame on the
//! 3D and Heat tabs. Ratios are against `baseline`, measured in the same run.

use anyhow::{bail, Context, Result};
use gpuheat_viz::{Measurements, Tab, ViewOptions};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::programs::run_bounded;

/// What to capture for the viewer benchmark.
pub struct ViewerPlan {
    /// Draws per frame and triangles per draw of the large geometry session.
    pub draws: u32,
    pub tris: u32,
    /// Frames of the timeline session.
    pub frames: u32,
}

/// One session's measurements.
pub struct ViewerRow {
    pub label: &'static str,
    pub session_bytes: u64,
    pub m: Measurements,
}

/// Captures the three sessions and measures the viewer on each.
pub fn measure(
    gpuheat: &Path,
    many_draws: &Path,
    scratch: &Path,
    plan: &ViewerPlan,
    limit: Duration,
) -> Result<Vec<ViewerRow>> {
    let d = plan.draws.to_string();
    let t = plan.tris.to_string();
    let f = plan.frames.to_string();
    let f_program = (plan.frames + 3).to_string();
    let sessions: [(&'static str, Vec<&str>, Vec<&str>); 3] = [
        (
            "baseline",
            vec!["--mode", "full", "--heat", "--frames", "1"],
            vec!["--draws", "10", "--tris", "10", "--frames", "4"],
        ),
        (
            "1M triangles",
            vec!["--mode", "full", "--heat", "--frames", "1"],
            vec!["--draws", &d, "--tris", &t, "--frames", "4"],
        ),
        (
            "frames x draws",
            vec!["--mode", "timeline", "--frames", &f],
            vec!["--draws", &d, "--tris", "2", "--frames", &f_program],
        ),
    ];
    let mut rows = Vec::new();
    for (label, run_args, program_args) in sessions {
        let file = scratch.join(format!("viewer-{}.gpuheat", rows.len()));
        capture(gpuheat, many_draws, &file, &run_args, &program_args, limit)
            .with_context(|| format!("capturing the {label} session"))?;
        let session_bytes = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        let m = gpuheat_viz::measure(
            file.clone(),
            ViewOptions {
                tab: Tab::Mesh,
                size: (1280, 800),
                ..ViewOptions::default()
            },
        )
        .with_context(|| format!("measuring the viewer on the {label} session"))?;
        let _ = std::fs::remove_file(&file);
        rows.push(ViewerRow {
            label,
            session_bytes,
            m,
        });
    }
    Ok(rows)
}

/// `gpuheat run` of many_draws into `file`, skipping its first frame, bounded by `limit`.
pub(crate) fn capture(
    gpuheat: &Path,
    many_draws: &Path,
    file: &Path,
    run_args: &[&str],
    program_args: &[&str],
    limit: Duration,
) -> Result<()> {
    let mut cmd = Command::new(gpuheat);
    cmd.arg("run")
        .arg("-o")
        .arg(file)
        .args(["--timeout", "120", "--skip", "1"])
        .args(run_args)
        .arg("--")
        .arg(many_draws)
        .args(program_args);
    let out = run_bounded(cmd, limit)?;
    if !out.status.success() {
        bail!("gpuheat run ({}): {}", out.status, out.stderr.trim());
    }
    Ok(())
}

/// The rows as JSON, ratios against the first (baseline) row.
pub fn to_json(rows: &[ViewerRow]) -> Value {
    let base = &rows[0].m;
    Value::Array(
        rows.iter()
            .map(|r| {
                let m = &r.m;
                json!({
                    "session": r.label,
                    "session_bytes": r.session_bytes,
                    "frames": m.frames,
                    "draws": m.draws,
                    "triangles": m.triangles,
                    "first_paint_ms": m.first_paint_ms,
                    "first_paint_ratio": m.first_paint_ms / base.first_paint_ms,
                    "load_ms": m.load_ms,
                    "loading_frames": m.loading_frames,
                    "loading_frame_ms_max": m.loading_frame_ms_max,
                    "loading_frame_ms_median": m.loading_frame_ms_median,
                    "mesh_first_frame_ms": m.mesh_first_frame_ms,
                    "mesh_frame_ms_median": m.mesh_frame_ms_median,
                    "mesh_frame_ms_p95": m.mesh_frame_ms_p95,
                    "mesh_frame_ratio": m.mesh_frame_ms_median / base.mesh_frame_ms_median,
                    "mesh_idle_frame_ms_median": m.mesh_idle_frame_ms_median,
                    "heat_frame_ms_median": m.heat_frame_ms_median,
                    "heat_frame_ms_p95": m.heat_frame_ms_p95,
                    "heat_frame_ratio": m.heat_frame_ms_median / base.heat_frame_ms_median,
                    "adapter": m.adapter,
                })
            })
            .collect(),
    )
}

/// The rows as a table, ratios against the first (baseline) row.
pub fn to_text(rows: &[ViewerRow]) -> String {
    let base = &rows[0].m;
    let mut o = format!(
        "viewer (offscreen 1280x800 on {}; ratios against baseline)\n",
        base.adapter
    );
    o += &format!(
        "{:<15} {:>7} {:>6} {:>10} {:>9} {:>16} {:>9} {:>22} {:>22} {:>8} {:>16}\n",
        "session",
        "MB",
        "frames",
        "draws",
        "triangles",
        "first paint ms",
        "load ms",
        "loading frame max/med",
        "3D orbit med/p95 (x)",
        "3D still",
        "heat frame med"
    );
    for r in rows {
        let m = &r.m;
        o += &format!(
            "{:<15} {:>7.1} {:>6} {:>10} {:>9} {:>16} {:>9.0} {:>22} {:>22} {:>8.1} {:>16}\n",
            r.label,
            r.session_bytes as f64 / 1e6,
            m.frames,
            m.draws,
            m.triangles,
            format!(
                "{:.1} ({:.2}x)",
                m.first_paint_ms,
                m.first_paint_ms / base.first_paint_ms
            ),
            m.load_ms,
            format!(
                "{:.1}/{:.1} ({})",
                m.loading_frame_ms_max, m.loading_frame_ms_median, m.loading_frames
            ),
            format!(
                "{:.1}/{:.1} ({:.2}x)",
                m.mesh_frame_ms_median,
                m.mesh_frame_ms_p95,
                m.mesh_frame_ms_median / base.mesh_frame_ms_median
            ),
            m.mesh_idle_frame_ms_median,
            format!(
                "{:.1} ({:.2}x)",
                m.heat_frame_ms_median,
                m.heat_frame_ms_median / base.heat_frame_ms_median
            ),
        );
    }
    o += "loading frame = a UI frame rendered while the session loads on its own thread (count in \
          parentheses); 3D orbit = the Mesh tab redrawing the frame's geometry as the camera turns \
          (first frame, the mesh upload, excluded); 3D still = the same view unchanged (not \
          redrawn, only the UI)\n";
    o
}
