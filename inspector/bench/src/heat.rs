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
//!
//! Offscreen targets (issue 11, [`measure_offscreen`]): the same comparison on a frame whose
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
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::{median, run_bounded};

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

/// Median, quartiles and range of a sample (NaN for none); quartiles by linear
/// interpolation between order statistics.
#[derive(Clone, Copy, Debug)]
pub struct Spread {
    pub n: usize,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        let q = |p: f64| -> f64 {
            if v.is_empty() {
                return f64::NAN;
            }
            let at = p * (v.len() - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
        };
        Spread {
            n: v.len(),
            median: q(0.5),
            q1: q(0.25),
            q3: q(0.75),
            min: v.first().copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
        }
    }

    /// `self / base` of the medians, and the interval from the quartiles.
    pub fn ratio(&self, base: &Spread) -> (f64, f64, f64) {
        (
            self.median / base.median,
            self.q1 / base.q3,
            self.q3 / base.q1,
        )
    }

    /// `median (Q1–Q3, min–max)` in ms.
    pub fn text(&self) -> String {
        format!(
            "{:.2} ({:.2}-{:.2}, {:.2}-{:.2})",
            self.median, self.q1, self.q3, self.min, self.max
        )
    }
}

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

/// The frame periods an example printed with `--report-frame-ms` (its `frame_ms_frames=`
/// line of `frames` values), without the first (frame 0 compiles shaders on first use).
pub fn reported_periods(out: &crate::Output, program: &str, frames: u32) -> Result<Vec<f64>> {
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
    let offscreen_draws = crate::median(&mut offscreen_draws);
    let raw = |bytes_of: &dyn Fn(u64) -> u64| {
        let mut v: Vec<f64> = index.iter().map(|&f| bytes_of(f) as f64).collect();
        crate::median(&mut v)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_small_samples() {
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!((s.n, s.median, s.q1, s.q3), (5, 3.0, 2.0, 4.0));
        assert_eq!((s.min, s.max), (1.0, 5.0));
        // Even count: interpolated between the middle order statistics.
        let s = Spread::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((s.median, s.q1, s.q3), (2.5, 1.75, 3.25));
        let one = Spread::of(&[7.0]);
        assert_eq!(
            (one.median, one.q1, one.q3, one.min, one.max),
            (7.0, 7.0, 7.0, 7.0, 7.0)
        );
        assert!(Spread::of(&[]).median.is_nan());
    }

    #[test]
    fn ratio_interval_comes_from_the_quartiles() {
        let base = Spread::of(&[9.0, 10.0, 11.0]);
        let captured = Spread::of(&[18.0, 20.0, 22.0]);
        let (r, lo, hi) = captured.ratio(&base);
        assert_eq!(r, 2.0);
        assert_eq!(lo, 19.0 / 10.5);
        assert_eq!(hi, 21.0 / 9.5);
        assert!(lo < r && r < hi);
    }
}
