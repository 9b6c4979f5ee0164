//! What the Vulkan layer costs a program (`--vulkan N,...`, default 10,100,1000 draws):
//! `vk_quads --quads N --loop 0 --size 64x64` (13 + 2N Vulkan calls per frame: one
//! vkCmdPushConstants and one vkCmdDraw per quad, each draw cheap, so the layer's cost shows),
//! on a private Xvfb, in four configurations, each run R times (`--runs`) round-robin (the
//! order turned by one each run, so that drift of a shared machine spreads over all of them):
//!
//! - `plain`: the program alone (no gpuheat layer in its environment);
//! - `dormant`: started with `gpuheat vulkan-env`'s environment: the layer in, no CLI
//!   connected (it forwards the calls, and reads the clock at each present to look for a
//!   wake-up);
//! - `timeline`: under `gpuheat run --mode timeline --skip 10 --frames F`: every call recorded;
//! - `full`: the same with `--mode full`: every draw also bracketed by the layer's timestamps.
//!
//! Every configuration's frame time is the program's own (`--report-frame-ms`: start-to-start
//! periods, which hold each frame's present and so the layer's frame-end work), for the same
//! frames: the captured frames but the first and the last (the capture's start and end),
//! frames 11..=F+8 counted from 0; pooled over the runs, as median, quartiles and range. The
//! captured runs' sessions are checked: F frames, those indices, and how many draws of a
//! frame carry a pipelined GPU time (timestamps were written), which names the timeline row.
//!
//! Derived, each per run (from that run's median frames) and given as its spread over the
//! runs: nanoseconds added per Vulkan call, dormant ((b − a) / calls per frame) and recorded
//! ((c − a) / calls, and (d − a) / calls with the timestamps), and session bytes per captured
//! call (file size / (F × calls per frame)). The frame ratio with timestamps is (d) / (a), the
//! interval from the quartiles.
//!
//! Skipped, with the reason printed, where there is no Xvfb, no Vulkan loader
//! (`libvulkan.so.1`), no `vk_quads` beside the bench, or where vk_quads cannot draw on the
//! Xvfb (no Vulkan device that presents to it).

use anyhow::{bail, Context, Result};
use gpuheat_session::control::env;
use gpuheat_session::Session;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::programs::{run_bounded, Output};
use crate::table::{ratio_json, spread_json, Spread};

/// vk_quads' window and swapchain size, and its fragment loop (cheap draws).
const SIZE: &str = "64x64";
const LOOP: &str = "0";
/// Frames let pass before the capture (frame 0 holds the set-up; lavapipe's first frames at
/// 1,000 draws run 2-3x slower than the later ones).
const SKIP: u32 = 10;
/// The variables that put Vulkan layers into a program: cleared for every run, so that only
/// the configuration's own environment inserts ours.
const LAYER_VARS: [&str; 4] = [
    "VK_INSTANCE_LAYERS",
    "VK_LOADER_LAYERS_ENABLE",
    "VK_ADD_LAYER_PATH",
    "VK_LAYER_PATH",
];

/// What the Vulkan bench measures.
pub struct VkPlan {
    /// Draw counts (vk_quads --quads N).
    pub draws: Vec<u32>,
    /// Captured frames per captured run (F, at least 4); the measured frames are the F-2
    /// inside them.
    pub frames: u32,
    /// Runs per configuration, round-robin.
    pub runs: u32,
    /// Limit on each program run.
    pub timeout: Duration,
}

/// Parses `--vulkan`: a comma-separated list of draw counts; empty or "0" means none.
pub fn parse_draws(s: &str) -> Result<Vec<u32>> {
    crate::table::parse_counts("--vulkan", s)
}

/// The four configurations, in their round-robin order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Config {
    Plain,
    Dormant,
    Timeline,
    Full,
}

const CONFIGS: [Config; 4] = [
    Config::Plain,
    Config::Dormant,
    Config::Timeline,
    Config::Full,
];

/// One run of one configuration.
struct RunOut {
    /// The measured frames' periods (ms).
    periods: Vec<f64>,
    /// Captured runs: the session's size in bytes, and the median draws with a pipelined
    /// time per captured frame.
    session_bytes: Option<u64>,
    timed_draws: Option<f64>,
}

/// One draw count's figures.
pub struct VkRow {
    pub draws: u32,
    pub calls_per_frame: u32,
    /// Frame periods (ms) pooled over the runs.
    pub plain: Spread,
    pub dormant: Spread,
    pub timeline: Spread,
    pub full: Spread,
    /// Per run, spread over the runs: ns added per Vulkan call.
    pub dormant_ns_per_call: Spread,
    pub timeline_ns_per_call: Spread,
    pub full_ns_per_call: Spread,
    /// Per run, spread over the runs: session bytes per captured call.
    pub timeline_bytes_per_call: Spread,
    pub full_bytes_per_call: Spread,
    /// Median draws of a captured frame that carry a pipelined GPU time (timestamps written),
    /// the median over the runs.
    pub timeline_timed_draws: f64,
    pub full_timed_draws: f64,
}

/// The Vulkan section: measured, or why not.
pub enum Vulkan {
    Skipped(String),
    Measured {
        display: String,
        runs: u32,
        frames: u32,
        rows: Vec<VkRow>,
    },
}

/// vk_quads beside this executable.
fn vk_quads() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.join("vk_quads");
    p.is_file().then_some(p)
}

/// Whether the Vulkan loader can be loaded.
fn has_loader() -> bool {
    // SAFETY: dlopen with a NUL-terminated name; the handle is closed at once.
    unsafe {
        let lib = libc::dlopen(
            c"libvulkan.so.1".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL,
        );
        if lib.is_null() {
            return false;
        }
        libc::dlclose(lib);
        true
    }
}

/// A private Xvfb on a display number it picks itself (`-displayfd`); ended on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts one and waits (at most 10 s) for its display number; `Err` is the reason to
    /// skip.
    fn start() -> std::result::Result<Xvfb, String> {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "640x480x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("no Xvfb ({e})"))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut x = Xvfb {
            child,
            display: String::new(),
        };
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) if !line.trim().is_empty() => {
                x.display = format!(":{}", line.trim());
                Ok(x)
            }
            _ => Err("Xvfb gave no display number within 10 s".into()),
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM, so that Xvfb removes its socket and lock file; SIGKILL after 2 s.
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every run shares.
struct Ctx<'a> {
    gpuheat: &'a Path,
    agent: &'a Path,
    vk_quads: &'a Path,
    scratch: &'a Path,
    display: &'a str,
    /// `gpuheat vulkan-env`'s variables.
    dormant_env: Vec<(String, String)>,
    frames: u32,
    timeout: Duration,
}

/// Measures every draw count of `plan` (see the module's doc), or says why it cannot.
pub fn measure(gpuheat: &Path, agent: &Path, scratch: &Path, plan: &VkPlan) -> Result<Vulkan> {
    let Some(vk_quads) = vk_quads() else {
        return Ok(Vulkan::Skipped(
            "vk_quads not found next to gpuheat-bench (cargo build --release -p gpuheat-examples)"
                .into(),
        ));
    };
    if !has_loader() {
        return Ok(Vulkan::Skipped(
            "no Vulkan loader (libvulkan.so.1 does not load)".into(),
        ));
    }
    let xvfb = match Xvfb::start() {
        Ok(x) => x,
        Err(why) => return Ok(Vulkan::Skipped(why)),
    };
    let mut ctx = Ctx {
        gpuheat,
        agent,
        vk_quads: &vk_quads,
        scratch,
        display: &xvfb.display,
        dormant_env: Vec::new(),
        frames: plan.frames.max(4),
        timeout: plan.timeout,
    };
    // Can vk_quads draw here at all? Its error is the reason to skip.
    let probe = run_bounded(ctx.program(1, 2), ctx.timeout)?;
    if !probe.status.success() {
        return Ok(Vulkan::Skipped(format!(
            "vk_quads cannot draw on Xvfb {}: {}",
            xvfb.display,
            probe.stderr.trim()
        )));
    }
    ctx.dormant_env = vulkan_env(gpuheat, agent, ctx.timeout)?;
    let rows = plan
        .draws
        .iter()
        .map(|&n| ctx.row(n, plan.runs.max(1)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Vulkan::Measured {
        display: xvfb.display.clone(),
        runs: plan.runs.max(1),
        frames: ctx.frames,
        rows,
    })
}

/// `gpuheat vulkan-env`'s `export K='V'` lines as variables.
fn vulkan_env(gpuheat: &Path, agent: &Path, limit: Duration) -> Result<Vec<(String, String)>> {
    let mut cmd = Command::new(gpuheat);
    cmd.arg("vulkan-env").env(env::AGENT, agent);
    for v in LAYER_VARS {
        cmd.env_remove(v);
    }
    let out = run_bounded(cmd, limit)?;
    if !out.status.success() {
        bail!("gpuheat vulkan-env: {}", out.stderr.trim());
    }
    let vars = parse_exports(&out.stdout);
    if vars.is_empty() {
        bail!("gpuheat vulkan-env printed no export line");
    }
    Ok(vars)
}

/// `export K='V'` lines (single-quoted, `'\''` for a quote) as (K, V).
fn parse_exports(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().strip_prefix("export ")?.split_once('=')?;
            let v = v.strip_prefix('\'')?.strip_suffix('\'')?;
            Some((k.to_string(), v.replace(r"'\''", "'")))
        })
        .collect()
}

/// vk_quads' `frame_ms_frames=` line.
fn periods(out: &Output) -> Result<Vec<f64>> {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("frame_ms_frames="))
        .with_context(|| {
            format!(
                "vk_quads ({}) printed no frame_ms_frames=; stderr: {}",
                out.status,
                out.stderr.trim()
            )
        })?;
    line.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<f64>().context("a frame period"))
        .collect()
}

impl Ctx<'_> {
    /// vk_quads at `quads` draws for `frames` frames, reporting its frame periods, on the
    /// Xvfb, with no layer variable.
    fn program(&self, quads: u32, frames: u32) -> Command {
        let mut cmd = Command::new(self.vk_quads);
        self.workload(&mut cmd, quads, frames);
        cmd.env("DISPLAY", self.display);
        for v in LAYER_VARS {
            cmd.env_remove(v);
        }
        cmd
    }

    fn workload(&self, cmd: &mut Command, quads: u32, frames: u32) {
        cmd.args([
            "--quads",
            &quads.to_string(),
            "--loop",
            LOOP,
            "--size",
            SIZE,
        ])
        .args(["--frames", &frames.to_string(), "--report-frame-ms"]);
    }

    /// The measured frames: frames SKIP+1 ..= SKIP+F-2 (the captured ones but the first and
    /// the last).
    fn measured(&self) -> std::ops::RangeInclusive<usize> {
        (SKIP + 1) as usize..=(SKIP + self.frames - 2) as usize
    }

    /// One uncaptured run (plain, or with the dormant layer).
    fn uncaptured(&self, n: u32, dormant: bool) -> Result<RunOut> {
        // Periods of frames 0..=SKIP+F-2: SKIP+F frames.
        let mut cmd = self.program(n, SKIP + self.frames);
        if dormant {
            cmd.envs(self.dormant_env.iter().map(|(k, v)| (k, v)));
        }
        let what = if dormant { "dormant layer" } else { "plain" };
        let out = run_bounded(cmd, self.timeout)?;
        if !out.status.success() {
            bail!("vk_quads --quads {n} ({what}): {}", out.stderr.trim());
        }
        let p = periods(&out)?;
        let periods = p
            .get(self.measured())
            .with_context(|| format!("vk_quads --quads {n} ({what}): {} periods", p.len()))?
            .to_vec();
        Ok(RunOut {
            periods,
            session_bytes: None,
            timed_draws: None,
        })
    }

    /// One captured run (`gpuheat run --mode MODE`); the program goes on after the capture
    /// until gpuheat ends it (SIGTERM), its frame count a bound only.
    fn captured(&self, n: u32, mode: &str, run: u32) -> Result<RunOut> {
        let file = self
            .scratch
            .join(format!("vulkan-{n}-{mode}-{run}.gpuheat"));
        let mut cmd = Command::new(self.gpuheat);
        cmd.env(env::AGENT, self.agent)
            .env("DISPLAY", self.display)
            .args(["run", "--mode", mode, "--timeout", "60"])
            .args([
                "--skip",
                &SKIP.to_string(),
                "--frames",
                &self.frames.to_string(),
            ])
            .arg("-o")
            .arg(&file)
            .arg("--")
            .arg(self.vk_quads);
        for v in LAYER_VARS {
            cmd.env_remove(v);
        }
        self.workload(&mut cmd, n, SKIP + self.frames + 100_000);
        let out = run_bounded(cmd, self.timeout)?;
        if !out.status.success() {
            bail!(
                "gpuheat run --mode {mode} -- vk_quads --quads {n}: {}",
                out.stderr.trim()
            );
        }
        let bytes = std::fs::metadata(&file)
            .with_context(|| format!("reading {}", file.display()))?
            .len();
        let session =
            Session::open(&file).with_context(|| format!("reading {}", file.display()))?;
        let _ = std::fs::remove_file(&file);
        let indices: Vec<u64> = session.frames.iter().map(|f| f.index).collect();
        let expected: Vec<u64> = (SKIP as u64..(SKIP + self.frames) as u64).collect();
        if indices != expected {
            bail!(
                "{mode} session of vk_quads --quads {n}: frames {indices:?}, expected {}..={}",
                SKIP,
                SKIP + self.frames - 1
            );
        }
        let calls = u64::from(13 + 2 * n);
        if let Some(f) = session
            .frames
            .iter()
            .find(|f| f.calls.len() as u64 != calls)
        {
            bail!(
                "{mode} session of vk_quads --quads {n}: frame {} holds {} calls, expected {calls}",
                f.index,
                f.calls.len()
            );
        }
        // Pipelined times per captured frame: the draws the layer stamped.
        let mut timed: Vec<f64> = indices
            .iter()
            .map(|&i| {
                session
                    .pipelined
                    .iter()
                    .filter(|b| b.frame == i)
                    .map(|b| b.times.len())
                    .sum::<usize>() as f64
            })
            .collect();
        let p = periods(&out)?;
        let periods = p
            .get(self.measured())
            .with_context(|| {
                format!(
                    "vk_quads --quads {n} under gpuheat run --mode {mode}: {} periods",
                    p.len()
                )
            })?
            .to_vec();
        Ok(RunOut {
            periods,
            session_bytes: Some(bytes),
            timed_draws: Some(crate::table::median(&mut timed)),
        })
    }

    fn one(&self, n: u32, config: Config, run: u32) -> Result<RunOut> {
        match config {
            Config::Plain => self.uncaptured(n, false),
            Config::Dormant => self.uncaptured(n, true),
            Config::Timeline => self.captured(n, "timeline", run),
            Config::Full => self.captured(n, "full", run),
        }
    }

    /// Every configuration at `n` draws, `runs` times round-robin.
    fn row(&self, n: u32, runs: u32) -> Result<VkRow> {
        // outs[config][run]
        let mut outs: Vec<Vec<RunOut>> = CONFIGS.iter().map(|_| Vec::new()).collect();
        for r in 0..runs {
            for k in 0..CONFIGS.len() {
                let c = (k + r as usize) % CONFIGS.len();
                let out = self
                    .one(n, CONFIGS[c], r)
                    .with_context(|| format!("vulkan bench, {n} draws, {:?}", CONFIGS[c]))?;
                outs[c].push(out);
            }
        }
        let calls = 13 + 2 * n;
        let pooled = |c: usize| -> Spread {
            let all: Vec<f64> = outs[c]
                .iter()
                .flat_map(|o| o.periods.iter().copied())
                .collect();
            Spread::of(&all)
        };
        let run_median = |c: usize, r: usize| Spread::of(&outs[c][r].periods).median;
        let ns_per_call = |c: usize| -> Spread {
            let v: Vec<f64> = (0..runs as usize)
                .map(|r| (run_median(c, r) - run_median(0, r)) * 1e6 / f64::from(calls))
                .collect();
            Spread::of(&v)
        };
        let bytes_per_call = |c: usize| -> Spread {
            let v: Vec<f64> = outs[c]
                .iter()
                .filter_map(|o| o.session_bytes)
                .map(|b| b as f64 / (f64::from(self.frames) * f64::from(calls)))
                .collect();
            Spread::of(&v)
        };
        let timed = |c: usize| -> f64 {
            let mut v: Vec<f64> = outs[c].iter().filter_map(|o| o.timed_draws).collect();
            crate::table::median(&mut v)
        };
        Ok(VkRow {
            draws: n,
            calls_per_frame: calls,
            plain: pooled(0),
            dormant: pooled(1),
            timeline: pooled(2),
            full: pooled(3),
            dormant_ns_per_call: ns_per_call(1),
            timeline_ns_per_call: ns_per_call(2),
            full_ns_per_call: ns_per_call(3),
            timeline_bytes_per_call: bytes_per_call(2),
            full_bytes_per_call: bytes_per_call(3),
            timeline_timed_draws: timed(2),
            full_timed_draws: timed(3),
        })
    }
}

/// A spread of nanoseconds, which may be negative: `median (Q1..Q3, min..max)` in whole
/// numbers.
fn whole(s: &Spread) -> String {
    format!(
        "{:.0} ({:.0}..{:.0}, {:.0}..{:.0})",
        s.median, s.q1, s.q3, s.min, s.max
    )
}

/// The timeline row's name: whether its session carried timestamps.
fn timeline_label(rows: &[VkRow]) -> &'static str {
    if rows.iter().any(|r| r.timeline_timed_draws > 0.0) {
        "timeline (calls + timestamps per draw)"
    } else {
        "timeline (calls, no timestamps)"
    }
}

/// The section as a table: one column per draw count.
pub fn print(v: &Vulkan) {
    println!();
    let (display, runs, frames, rows) = match v {
        Vulkan::Skipped(why) => {
            println!("vulkan layer cost: skipped: {why}");
            return;
        }
        Vulkan::Measured {
            display,
            runs,
            frames,
            rows,
        } => (display, runs, frames, rows),
    };
    println!(
        "vulkan layer cost (vk_quads --quads N --loop {LOOP} --size {SIZE} on Xvfb {display}; \
         {runs} runs round-robin; frames {}..={} of each run (captured: --skip {SKIP} --frames \
         {frames}), the program's own periods pooled; ms: median (Q1-Q3, min-max), ns: median (Q1..Q3, min..max))",
        SKIP + 1,
        SKIP + frames - 2
    );
    let w = 34;
    let line = |label: &str, cells: Vec<String>| {
        print!("{label:<48}");
        for c in cells {
            print!(" {c:>w$}");
        }
        println!();
    };
    line(
        "",
        rows.iter().map(|r| format!("N = {}", r.draws)).collect(),
    );
    line(
        "Vulkan calls per frame (13 + 2N)",
        rows.iter().map(|r| r.calls_per_frame.to_string()).collect(),
    );
    let tl = timeline_label(rows);
    for (label, get) in [
        (
            "frame ms, plain (no layer)".to_string(),
            &(|r: &VkRow| r.plain) as &dyn Fn(&VkRow) -> Spread,
        ),
        ("frame ms, layer dormant".into(), &|r: &VkRow| r.dormant),
        (format!("frame ms, {tl}"), &|r: &VkRow| r.timeline),
        (
            "frame ms, full (timestamps per draw)".into(),
            &|r: &VkRow| r.full,
        ),
    ] {
        line(&label, rows.iter().map(|r| get(r).text()).collect());
    }
    let ratio = |s: &Spread, base: &Spread| {
        let (m, lo, hi) = s.ratio(base);
        format!("{m:.3}x [{lo:.2}-{hi:.2}]")
    };
    line(
        "frame ratio, dormant / plain",
        rows.iter().map(|r| ratio(&r.dormant, &r.plain)).collect(),
    );
    line(
        "frame ratio, timeline / plain",
        rows.iter().map(|r| ratio(&r.timeline, &r.plain)).collect(),
    );
    line(
        "frame ratio with timestamps (full / plain)",
        rows.iter().map(|r| ratio(&r.full, &r.plain)).collect(),
    );
    line(
        "ns per Vulkan call added, dormant",
        rows.iter().map(|r| whole(&r.dormant_ns_per_call)).collect(),
    );
    line(
        "ns per Vulkan call added, recorded",
        rows.iter()
            .map(|r| whole(&r.timeline_ns_per_call))
            .collect(),
    );
    line(
        "ns per Vulkan call added, full",
        rows.iter().map(|r| whole(&r.full_ns_per_call)).collect(),
    );
    line(
        "bytes per call, timeline session",
        rows.iter()
            .map(|r| r.timeline_bytes_per_call.text())
            .collect(),
    );
    line(
        "bytes per call, full session",
        rows.iter().map(|r| r.full_bytes_per_call.text()).collect(),
    );
    line(
        "draws timed per frame, timeline / full",
        rows.iter()
            .map(|r| {
                format!(
                    "{} / {} of {}",
                    r.timeline_timed_draws, r.full_timed_draws, r.draws
                )
            })
            .collect(),
    );
    println!(
        "ratios: median over median, [interval from the quartiles]; ns per call and bytes per \
         call: per run (its median frames; session size / ({frames} frames x calls)), spread \
         over the {runs} runs; full mode writes 3 timestamps per timed draw"
    );
}

/// The section as JSON.
pub fn to_json(v: &Vulkan) -> Value {
    let (display, runs, frames, rows) = match v {
        Vulkan::Skipped(why) => return json!({ "skipped": why }),
        Vulkan::Measured {
            display,
            runs,
            frames,
            rows,
        } => (display, runs, frames, rows),
    };
    json!({
        "workload": format!("vk_quads --quads N --loop {LOOP} --size {SIZE}, 13 + 2N Vulkan calls per frame"),
        "display": display,
        "runs": runs,
        "captured_frames": frames,
        "skip": SKIP,
        "measured_frames": [SKIP + 1, SKIP + frames - 2],
        "frame_time": "the program's start-to-start periods (--report-frame-ms) of the measured frames, pooled over the runs",
        "per_call": "per run from its median frames, spread over the runs",
        "timeline_label": timeline_label(rows),
        "rows": rows.iter().map(|r| json!({
            "draws": r.draws,
            "calls_per_frame": r.calls_per_frame,
            "plain_ms": spread_json(&r.plain),
            "dormant_ms": spread_json(&r.dormant),
            "timeline_ms": spread_json(&r.timeline),
            "full_ms": spread_json(&r.full),
            "dormant_vs_plain": ratio_json(&r.dormant, &r.plain),
            "timeline_vs_plain": ratio_json(&r.timeline, &r.plain),
            "frame_ratio_with_timestamps": ratio_json(&r.full, &r.plain),
            "ns_per_call_added_dormant": spread_json(&r.dormant_ns_per_call),
            "ns_per_call_added_recorded": spread_json(&r.timeline_ns_per_call),
            "ns_per_call_added_full": spread_json(&r.full_ns_per_call),
            "bytes_per_call_timeline": spread_json(&r.timeline_bytes_per_call),
            "bytes_per_call_full": spread_json(&r.full_bytes_per_call),
            "timed_draws_per_frame_timeline": r.timeline_timed_draws,
            "timed_draws_per_frame_full": r.full_timed_draws,
        })).collect::<Vec<Value>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_are_unquoted() {
        let text =
            "export VK_ADD_LAYER_PATH='/a b/c'\nexport VK_INSTANCE_LAYERS='it'\\''s'\nnoise\n";
        assert_eq!(
            parse_exports(text),
            vec![
                ("VK_ADD_LAYER_PATH".to_string(), "/a b/c".to_string()),
                ("VK_INSTANCE_LAYERS".to_string(), "it's".to_string()),
            ]
        );
    }
}
