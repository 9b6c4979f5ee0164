//! Offscreen heat cost (issue 11, [`measure_offscreen`]): heat.rs's comparison on a frame whose
//! cost is spent in a framebuffer object, `offscreen_pass --api gles --timing` (defaults:
//! 512x512 window, one 256x256 RGBA8 texture target, a 64-iteration pass into it, composited
//! onto a quarter of the window). Every frame's time is kept, so each figure carries its
//! spread over frames:
//!
//! - `uncaptured`: offscreen_pass alone, `--frames F+1 --report-frame-ms`: each frame's
//!   start-to-start period (its draws, glFinish and swap), frames 1..=F-1 (frame 0 compiles
//!   the shaders on first use);
//! - `full`, `full+heat`: `gpuheat run --mode full [--heat] --skip 1 --frames F
//!   --keep-running`: the swap-to-swap periods of the F captured frames (F-1 values).
//!
//! Each is given as median, quartiles and range over its frames; `ratio` = captured median /
//! uncaptured median, with the interval from the quartiles (captured Q1 / uncaptured Q3 to
//! captured Q3 / uncaptured Q1). Memory: per frame, the session bytes of the HEAT (window),
//! HTGT (offscreen targets) and FLOW (what draws sampled) chunks as written (chunk headers
//! included, payloads as stored: LZ4-compressed where the writer compressed them, so mostly
//! empty maps cost little), each also per pixel of the maps it holds; the GPU bytes of the
//! painter: [`GPU_SHARED_BYTES_PER_PIXEL`] per pixel of the largest target plus
//! [`GPU_TARGET_BYTES_PER_PIXEL`] per pixel of every target (the window and each offscreen
//! target at its own size).

use anyhow::{bail, Context, Result};
use gpuheat_session::{ChunkKind, ChunkReader, Session};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::heat::{
    capture_run, reported_periods, GPU_SHARED_BYTES_PER_PIXEL, GPU_TARGET_BYTES_PER_PIXEL,
};
use crate::programs::run_bounded;
use crate::table::{median, ratio_json, spread_json, Spread};

/// One offscreen target of the heat-captured session, as the HTGT records describe it.
pub struct TargetInfo {
    pub id: u32,
    pub width: u32,
    pub height: u32,
    /// The GL internal format (0 when unknown).
    pub format: u32,
}

/// The offscreen heat cost.
pub struct OffscreenRow {
    /// Captured frames (F); the periods are F-1 values each.
    pub frames: u32,
    /// offscreen_pass alone: start-to-start periods of frames 1..=F-1, ms.
    pub uncaptured: Spread,
    /// Full mode: swap-to-swap periods of the captured frames, ms.
    pub full: Spread,
    /// Full mode with heat: the same.
    pub heat: Spread,
    /// The window's size.
    pub width: u32,
    pub height: u32,
    /// The distinct offscreen targets the HTGT records name (over the capture).
    pub targets: Vec<TargetInfo>,
    /// Per frame (median over the captured frames): session bytes of the window's HEAT
    /// records, of the HTGT records, of the FLOW records, and of the frame's calls (FRMC).
    pub heat_bytes: Spread,
    pub target_bytes: Spread,
    pub flow_bytes: Spread,
    pub frame_bytes: Spread,
    /// Painted draws per frame into offscreen targets (HTGT draw lists), median.
    pub offscreen_draws: f64,
    /// The same maps' bytes per frame uncompressed, as decoded (median): HEAT heat f32 +
    /// overdraw u32 + RGBA8 colour; HTGT heat + overdraw; FLOW kept coverage (one byte per
    /// pixel of a consumer's box).
    pub raw_heat_bytes: f64,
    pub raw_target_bytes: f64,
    pub raw_flow_bytes: f64,
}

impl OffscreenRow {
    /// Pixels of every offscreen target.
    pub fn target_pixels(&self) -> u64 {
        self.targets
            .iter()
            .map(|t| u64::from(t.width) * u64::from(t.height))
            .sum()
    }

    /// The painter's GPU bytes: the shared buffers at the largest target's size, and each
    /// target's own (the window's and every offscreen target's) at its size.
    pub fn gpu_bytes(&self) -> u64 {
        let window = u64::from(self.width) * u64::from(self.height);
        let largest = self
            .targets
            .iter()
            .map(|t| u64::from(t.width) * u64::from(t.height))
            .fold(window, u64::max);
        largest * GPU_SHARED_BYTES_PER_PIXEL
            + (window + self.target_pixels()) * GPU_TARGET_BYTES_PER_PIXEL
    }

    /// Session bytes of the maps (HEAT + HTGT + FLOW) per frame, median of each summed.
    pub fn map_bytes_per_frame(&self) -> f64 {
        self.heat_bytes.median + self.target_bytes.median + self.flow_bytes.median
    }
}

fn offscreen_args(frames: u32) -> Vec<String> {
    [
        "--api",
        "gles",
        "--timing",
        "--report-frame-ms",
        "--frames",
        &frames.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Measures the offscreen heat cost over `frames` captured frames (at least 3).
pub fn measure_offscreen(
    gpuheat: &Path,
    agent: &Path,
    offscreen_pass: &Path,
    scratch: &Path,
    frames: u32,
    limit: Duration,
) -> Result<OffscreenRow> {
    let frames = frames.max(3);
    let mut cmd = Command::new(offscreen_pass);
    cmd.args(offscreen_args(frames + 1));
    let out = run_bounded(cmd, limit)?;
    let uncaptured = Spread::of(&reported_periods(&out, "offscreen_pass", frames)?);
    let (full, _) = offscreen_captured(
        gpuheat,
        agent,
        offscreen_pass,
        scratch,
        frames,
        false,
        limit,
    )
    .context("offscreen_pass, full mode")?;
    let (heat, file) =
        offscreen_captured(gpuheat, agent, offscreen_pass, scratch, frames, true, limit)
            .context("offscreen_pass, full mode with heat")?;
    let row = offscreen_memory(&file, frames, uncaptured, full, heat);
    let _ = std::fs::remove_file(&file);
    row
}

/// One captured run of offscreen_pass: the swap-to-swap periods, and the session's path.
fn offscreen_captured(
    gpuheat: &Path,
    agent: &Path,
    offscreen_pass: &Path,
    scratch: &Path,
    frames: u32,
    heat: bool,
    limit: Duration,
) -> Result<(Spread, std::path::PathBuf)> {
    let file = scratch.join(format!("offscreen-{}.gpuheat", u8::from(heat)));
    // The program runs past the capture (--skip 1, then F frames, then 2 more).
    let args = offscreen_args(frames + 3);
    let (session, periods) = capture_run(
        gpuheat,
        agent,
        &file,
        frames,
        heat,
        offscreen_pass,
        &args,
        &[],
        limit,
    )?;
    if heat {
        if let Some(m) = session.heat_missing.first() {
            bail!("frame {} has no heat map: {}", m.frame, m.reason);
        }
    } else {
        let _ = std::fs::remove_file(&file);
    }
    Ok((Spread::of(&periods), file))
}

/// The heat session's targets and the bytes its map chunks take per frame.
fn offscreen_memory(
    file: &Path,
    frames: u32,
    uncaptured: Spread,
    full: Spread,
    heat: Spread,
) -> Result<OffscreenRow> {
    let session =
        Session::open(file).with_context(|| format!("reading session {}", file.display()))?;
    let map = session
        .heat
        .first()
        .context("the --heat session holds no HEAT record")?;
    let mut targets: Vec<TargetInfo> = Vec::new();
    for t in &session.target_heat {
        if !targets.iter().any(|o| o.id == t.target.id) {
            targets.push(TargetInfo {
                id: t.target.id,
                width: t.target.width,
                height: t.target.height,
                format: t.target.format,
            });
        }
    }
    let index: Vec<u64> = session.frames.iter().map(|f| f.index).collect();
    let mut offscreen_draws: Vec<f64> = index
        .iter()
        .map(|&f| {
            session
                .target_heat
                .iter()
                .filter(|t| t.frame == f)
                .map(|t| t.draws.len() as u64)
                .sum::<u64>() as f64
        })
        .collect();
    let offscreen_draws = median(&mut offscreen_draws);
    let raw = |bytes_of: &dyn Fn(u64) -> u64| {
        let mut v: Vec<f64> = index.iter().map(|&f| bytes_of(f) as f64).collect();
        median(&mut v)
    };
    let raw_heat_bytes = raw(&|f| {
        session
            .heat
            .iter()
            .filter(|m| m.frame == f)
            .map(|m| (m.heat.len() * 4 + m.overdraw.len() * 4 + m.colour.len()) as u64)
            .sum()
    });
    let raw_target_bytes = raw(&|f| {
        session
            .target_heat
            .iter()
            .filter(|t| t.frame == f)
            .map(|t| (t.heat.len() * 4 + t.overdraw.len() * 4) as u64)
            .sum()
    });
    let raw_flow_bytes = raw(&|f| {
        session
            .flow
            .iter()
            .filter(|x| x.frame == f)
            .flat_map(|x| &x.draws)
            .map(|d| d.coverage.len() as u64)
            .sum()
    });

    // Bytes per frame of each record kind, from the chunks as written. The frame of a map
    // chunk is not in its header, so the per-frame values are the chunks of one kind in
    // order, grouped by the record's frame from the decoded session (same order).
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?,
    );
    let (_, mut chunks) = ChunkReader::from_file_start(reader)?;
    let (mut heat_len, mut target_len, mut flow_len, mut frame_len) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    while let Some(chunk) = chunks.read_chunk()? {
        let len = chunk.header().chunk_len();
        match chunk.kind() {
            k if k == ChunkKind::HEAT => heat_len.push(len),
            k if k == ChunkKind::TARGET_HEAT => target_len.push(len),
            k if k == ChunkKind::FLOW => flow_len.push(len),
            k if k.is_frame() => frame_len.push(len),
            _ => {}
        }
    }
    let per_frame = |lens: &[u64], frame_of: &dyn Fn(usize) -> Option<u64>| -> Spread {
        let mut sums = vec![0f64; index.len()];
        for (i, &len) in lens.iter().enumerate() {
            if let Some(at) = frame_of(i).and_then(|f| index.iter().position(|&x| x == f)) {
                sums[at] += len as f64;
            }
        }
        Spread::of(&sums)
    };
    Ok(OffscreenRow {
        frames,
        uncaptured,
        full,
        heat,
        width: map.width,
        height: map.height,
        heat_bytes: per_frame(&heat_len, &|i| session.heat.get(i).map(|m| m.frame)),
        target_bytes: per_frame(&target_len, &|i| {
            session.target_heat.get(i).map(|t| t.frame)
        }),
        flow_bytes: per_frame(&flow_len, &|i| session.flow.get(i).map(|f| f.frame)),
        frame_bytes: per_frame(&frame_len, &|i| session.frames.get(i).map(|f| f.index)),
        targets,
        offscreen_draws,
        raw_heat_bytes,
        raw_target_bytes,
        raw_flow_bytes,
    })
}

/// The offscreen heat cost as JSON.
pub fn to_json(o: &OffscreenRow) -> Value {
    let spread = spread_json;
    let ratio = |s: &Spread| ratio_json(s, &o.uncaptured);
    let window_px = u64::from(o.width) * u64::from(o.height);
    json!({
        "workload": "offscreen_pass --api gles --timing (512x512 window, 256x256 texture target, 64 iterations)",
        "frame_time": "uncaptured: start-to-start periods of frames 1..F-1; captured: swap-to-swap periods of the F captured frames",
        "captured_frames": o.frames,
        "uncaptured_ms": spread(&o.uncaptured),
        "full_ms": spread(&o.full),
        "heat_ms": spread(&o.heat),
        "full_ratio": ratio(&o.full),
        "heat_ratio": ratio(&o.heat),
        "window": [o.width, o.height],
        "targets": o.targets.iter().map(|t| json!({
            "id": t.id, "width": t.width, "height": t.height, "format": t.format,
        })).collect::<Vec<Value>>(),
        "offscreen_draws_per_frame": o.offscreen_draws,
        "gpu_bytes_per_pixel": {
            "of_the_largest_target": GPU_SHARED_BYTES_PER_PIXEL,
            "of_each_target": GPU_TARGET_BYTES_PER_PIXEL,
        },
        "gpu_bytes": o.gpu_bytes(),
        "session_bytes_per_frame": {
            "heat": spread(&o.heat_bytes),
            "target_heat": spread(&o.target_bytes),
            "flow": spread(&o.flow_bytes),
            "frame_calls": spread(&o.frame_bytes),
            "maps_total_median": o.map_bytes_per_frame(),
            "uncompressed": {
                "heat": o.raw_heat_bytes,
                "target_heat": o.raw_target_bytes,
                "flow_coverage": o.raw_flow_bytes,
            },
        },
        "session_bytes_per_pixel": {
            "heat": o.heat_bytes.median / window_px as f64,
            "target_heat": (o.target_pixels() > 0).then(|| o.target_bytes.median / o.target_pixels() as f64),
        },
    })
}

/// The offscreen heat cost as a table.
pub fn print(o: &OffscreenRow) {
    println!();
    println!(
        "offscreen heat cost (offscreen_pass --api gles --timing: {}x{} window, {}; {} captured frames)",
        o.width,
        o.height,
        if o.targets.is_empty() {
            "no offscreen target painted (HTGT records: none)".to_string()
        } else {
            o.targets
                .iter()
                .map(|t| format!("target {} {}x{}", t.id, t.width, t.height))
                .collect::<Vec<_>>()
                .join(", ")
        },
        o.frames
    );
    println!(
        "{:<10} {:>36} {:>22}",
        "", "frame ms: median (Q1-Q3, min-max)", "ratio (from quartiles)"
    );
    for (name, s) in [
        ("uncapt.", &o.uncaptured),
        ("full", &o.full),
        ("full+heat", &o.heat),
    ] {
        println!(
            "{name:<10} {:>36} {:>22}",
            s.text(),
            s.ratio_text(&o.uncaptured)
        );
    }
    let window_px = u64::from(o.width) * u64::from(o.height);
    let per_px = |b: f64, px: u64| {
        if px == 0 {
            "-".to_string()
        } else {
            format!("{:.2} B/px", b / px as f64)
        }
    };
    println!(
        "session bytes per frame (median, min-max): HEAT {:.0} ({:.0}-{:.0}; {}), HTGT {:.0} ({:.0}-{:.0}; {}), \
         FLOW {:.0} ({:.0}-{:.0}), calls (FRMC) {:.0}; maps in all {:.0}",
        o.heat_bytes.median,
        o.heat_bytes.min,
        o.heat_bytes.max,
        per_px(o.heat_bytes.median, window_px),
        o.target_bytes.median,
        o.target_bytes.min,
        o.target_bytes.max,
        per_px(o.target_bytes.median, o.target_pixels()),
        o.flow_bytes.median,
        o.flow_bytes.min,
        o.flow_bytes.max,
        o.frame_bytes.median,
        o.map_bytes_per_frame()
    );
    println!(
        "uncompressed (as decoded, median per frame): HEAT {:.0} ({}), HTGT {:.0} ({}), FLOW coverage {:.0}",
        o.raw_heat_bytes,
        per_px(o.raw_heat_bytes, window_px),
        o.raw_target_bytes,
        per_px(o.raw_target_bytes, o.target_pixels()),
        o.raw_flow_bytes
    );
    println!(
        "GPU bytes: {} = {} B/px of the largest target + {} B/px x ({} window px + {} offscreen target px); \
         {} offscreen draws painted per frame (median)",
        o.gpu_bytes(),
        GPU_SHARED_BYTES_PER_PIXEL,
        GPU_TARGET_BYTES_PER_PIXEL,
        window_px,
        o.target_pixels(),
        o.offscreen_draws
    );
}
