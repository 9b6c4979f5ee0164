//! What watching costs the program (`gpuheat attach --trigger`, and the live view streaming
//! every frame, `view --live` rendered offscreen; issue 26: at most 5% of its frame time on a
//! real GPU): `many_draws --draws N --tris 2 --timing --fps 0` runs flat out,
//! is watched for a few seconds in its middle by a rule that never fires, and reports every
//! frame's period itself (`--report-frame-ms`). The frames before the attach are the baseline,
//! measured in the same process; the frames well inside the watch are the watched ones; the
//! frames after the detach show the program back at its own speed; before and after together
//! are the baseline (on a small machine the program's own speed drifts over a run). With the ring's bytes at
//! the end (the watch keeps the last frames' encoded calls, bounded).

use anyhow::{bail, Context, Result};
use gpuheat_session::Session;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::table::{ratio_json, spread_json, Spread};

/// How long the program runs unwatched before the attach, watched, and after the detach.
const BEFORE: Duration = Duration::from_secs(2);
const WATCHED_S: u64 = 3;
const AFTER: Duration = Duration::from_secs(2);
/// Frames this close to a phase's edges are left out (the injection's hold, the warm-up
/// frame and the quiet frames after it, the detach).
const EDGE: Duration = Duration::from_millis(400);
/// The ring the bench watches with (frames).
const RING: u32 = 30;

/// One draw count's figures (frame periods in ms).
pub struct WatchRow {
    pub draws: u32,
    /// `trigger` (a ring of the last frames, nothing sent) or `live` (every frame streamed
    /// into the live view, rendered offscreen by `view --live --screenshot`).
    pub how: &'static str,
    /// The frames before the attach and after the detach together: the baseline (the
    /// program's own speed drifts over a run on a small machine; both sides bound it).
    pub unwatched: Spread,
    pub before: Spread,
    pub watched: Spread,
    pub after: Spread,
    /// Frames the watch judged, and the ring's bytes and frames at its end.
    pub frames_watched: u64,
    pub ring_bytes: u64,
    pub ring_frames: u32,
    pub ring_limit_bytes: u64,
}

/// Parses `--watch`: a comma-separated list of draw counts; empty or "0" means none.
pub fn parse_draws(s: &str) -> Result<Vec<u32>> {
    crate::table::parse_counts("--watch", s)
}

/// Watches `many_draws --draws N` for each count of `draws`.
pub fn measure(
    gpuheat: &Path,
    many_draws: &Path,
    scratch: &Path,
    draws: &[u32],
    timeout: Duration,
) -> Result<Vec<WatchRow>> {
    let mut rows = Vec::new();
    for &n in draws {
        for live in [false, true] {
            rows.push(row(gpuheat, many_draws, scratch, n, live, timeout)?);
        }
    }
    Ok(rows)
}

/// Frames the program is asked for: more than any run reaches; SIGUSR2 ends it (its frame
/// rate changes over a run, 2.7 then 0.6 ms a frame at 100 draws on llvmpipe here, so no
/// count fits every run).
const FRAMES: u64 = 50_000_000;

fn workload(n: u32, frames: u64) -> Vec<String> {
    [
        "--draws",
        &n.to_string(),
        "--tris",
        "2",
        "--timing",
        "--fps",
        "0",
        "--frames",
        &frames.to_string(),
        "--report-frame-ms",
    ]
    .map(str::to_string)
    .to_vec()
}

/// `frame_ms_frames=` of many_draws' output.
fn periods(stdout: &[u8]) -> Result<Vec<f64>> {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("frame_ms_frames="))
        .context("many_draws printed no frame_ms_frames=")?;
    line.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<f64>().context("a frame period"))
        .collect()
}

fn row(
    gpuheat: &Path,
    many_draws: &Path,
    scratch: &Path,
    n: u32,
    live: bool,
    timeout: Duration,
) -> Result<WatchRow> {
    let started = Instant::now();
    let mut target = Command::new(many_draws)
        .args(workload(n, FRAMES))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting many_draws")?;
    std::thread::sleep(BEFORE);
    let session = scratch.join(format!("watch-{n}.gpuheat"));
    let attach_at = started.elapsed();
    let pid = target.id().to_string();
    let mut cmd = Command::new("timeout");
    cmd.args(["-k5", &timeout.as_secs().to_string()])
        .arg(gpuheat);
    if live {
        cmd.args(["view", "--live", &pid, "--screenshot"])
            .arg(scratch.join(format!("live-{n}.png")))
            .args(["--live-seconds", &WATCHED_S.to_string()]);
    } else {
        cmd.args(["attach", &pid])
            // Never fires: the watch's cost, not a capture's.
            .args(["--trigger", "frame-ms>1000000", "--ring", &RING.to_string()])
            .args(["--timeout", &WATCHED_S.to_string(), "-o"])
            .arg(&session);
    }
    let out = cmd.output()?;
    let detach_at = started.elapsed();
    std::thread::sleep(AFTER);
    // SAFETY: kill(2) on our own child; SIGUSR2 ends its frame loop (run_frames).
    unsafe { libc::kill(target.id() as i32, libc::SIGUSR2) };
    if !out.status.success() {
        let _ = target.kill();
        bail!(
            "gpuheat {} failed: {}",
            if live {
                "view --live"
            } else {
                "attach --trigger"
            },
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let done = target.wait_with_output()?;
    let exit_at = started.elapsed();
    let p = periods(&done.stdout)?;
    let (status, watching_from) = if live {
        // "N frames streamed, …" on stderr; the stream begins after the injection and the
        // warm-up, a second at most here.
        let text = String::from_utf8_lossy(&out.stderr);
        let frames = text
            .split(" frames streamed")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let status = gpuheat_session::WatchStatus {
            frames_watched: frames,
            ring_frames: 0,
            ring_capacity: 0,
            ring_bytes: 0,
            ring_limit_bytes: 0,
            triggers: 0,
        };
        (status, attach_at + Duration::from_secs(1))
    } else {
        let s = Session::open(&session)?;
        let status = s.watch.clone().context("the watch sent no status")?;
        let from = attach_at + Duration::from_nanos(s.attach.as_ref().map_or(0, |a| a.latency_ns));
        (status, from)
    };
    // Frame k starts at its offset from frame 0, which started when the periods (and the
    // last frame, about one period) end at the program's exit.
    let last = Spread::of(&p).median;
    let span: f64 = p.iter().sum::<f64>() + last;
    let frame0 = exit_at.as_secs_f64() * 1e3 - span;
    let mut at = frame0;
    let (mut before, mut watched, mut after) = (Vec::new(), Vec::new(), Vec::new());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let edge = ms(EDGE);
    for &x in &p {
        let (start, end) = (at, at + x);
        at = end;
        if start > 1e3 && end < ms(attach_at) - edge {
            before.push(x);
        } else if start > ms(watching_from) + edge && end < ms(detach_at) - edge {
            watched.push(x);
        } else if start > ms(detach_at) + edge && end < ms(exit_at) - edge {
            after.push(x);
        }
    }
    if before.len() < 10 || watched.len() < 10 || after.len() < 10 {
        bail!(
            "watch bench at {n} draws: too few frames to compare ({} before, {} watched, {} after)",
            before.len(),
            watched.len(),
            after.len()
        );
    }
    let unwatched: Vec<f64> = before.iter().chain(&after).copied().collect();
    Ok(WatchRow {
        draws: n,
        how: if live { "live" } else { "trigger" },
        unwatched: Spread::of(&unwatched),
        before: Spread::of(&before),
        watched: Spread::of(&watched),
        after: Spread::of(&after),
        frames_watched: status.frames_watched,
        ring_bytes: status.ring_bytes,
        ring_frames: status.ring_frames,
        ring_limit_bytes: status.ring_limit_bytes,
    })
}

/// The rows as a table.
pub fn print(rows: &[WatchRow]) {
    println!();
    println!(
        "watch cost: many_draws --tris 2 --timing --fps 0; trigger: a rule that never fires, ring {RING} frames; live: every frame streamed into view --live (offscreen); frame period ms, median (Q1-Q3, min-max)"
    );
    println!(
        "{:>6} {:>8}  {:>28}  {:>28}  {:>16}  {:>28}  {:>9}  {:>15}",
        "draws",
        "how",
        "before the attach",
        "watched",
        "watched/unwatched",
        "after the detach",
        "watched",
        "ring at the end"
    );
    for r in rows {
        let (ratio, lo, hi) = r.watched.ratio(&r.unwatched);
        println!(
            "{:>6} {:>8}  {:>28}  {:>28}  {:>5.3} [{:.2}-{:.2}]  {:>28}  {:>9}  {:>7.1} KB/{:>3} fr",
            r.draws,
            r.how,
            r.before.text(),
            r.watched.text(),
            ratio,
            lo,
            hi,
            r.after.text(),
            r.frames_watched,
            r.ring_bytes as f64 / 1e3,
            r.ring_frames
        );
    }
    if let Some(r) = rows.first() {
        println!(
            "unwatched: the frames before the attach and after the detach; the ring holds at most {} frames and {} MB; issue 26's target: watched/unwatched <= 1.05 on a real GPU",
            RING,
            r.ring_limit_bytes >> 20
        );
    }
}

/// The rows as JSON.
pub fn to_json(rows: &[WatchRow]) -> Value {
    json!(rows
        .iter()
        .map(|r| json!({
            "draws": r.draws,
            "how": r.how,
            "before_ms": spread_json(&r.before),
            "watched_ms": spread_json(&r.watched),
            "after_ms": spread_json(&r.after),
            "unwatched_ms": spread_json(&r.unwatched),
            "watched_over_unwatched": ratio_json(&r.watched, &r.unwatched),
            "frames_watched": r.frames_watched,
            "ring_bytes": r.ring_bytes,
            "ring_frames": r.ring_frames,
            "ring_capacity": RING,
            "ring_limit_bytes": r.ring_limit_bytes,
        }))
        .collect::<Vec<_>>())
}
