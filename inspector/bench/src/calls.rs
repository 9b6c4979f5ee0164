//! Call cost: what gpuheat adds to every non-draw GL call, outside and inside a capture, as
//! a ratio against the direct call measured in the same run, and the session bytes each
//! captured call costs.
//!
//! The workload is the `call_cost` example: M `glUniform1f` calls per frame (values that
//! always change, so the driver never skips one), one tiny draw, `eglSwapBuffers`. With
//! `--report-call-ns` it times its M-call loop with CLOCK_MONOTONIC every frame and prints
//! the per-frame ns per call at exit, so the cost is measured inside the program, around the
//! calls only (no start-up, no swap, no capture hand-off at the frame end).
//!
//! Configurations, all with the same M and F (`--frames`), run `--runs` times each,
//! round-robin (run 1 of every configuration, then run 2, …) so that drift of the machine
//! spreads over all of them:
//!
//! | configuration | command |
//! |---|---|
//! | `direct` | `call_cost` alone: the baseline |
//! | `preloaded` | `LD_PRELOAD=libgpuheat_agent.so call_cost`, no `GPUHEAT_SOCKET`: the agent is dormant |
//! | `outside capture` | `gpuheat run --skip 1000000 --frames 1 -- call_cost`: connected, counting frames, never recording (gpuheat fails when the program ends first; expected) |
//! | `inside capture, timeline` | `gpuheat run --mode timeline --skip 1 --frames F-2 --keep-running -- call_cost` |
//! | `inside capture, full` | the same with `--mode full` |
//! | `apitrace` | `apitrace trace --api egl -o FILE call_cost`, only when `apitrace` is on PATH |
//!
//! Every configuration is measured over the same frames, 1 ..= F-2: the frames the capture
//! configurations record (frame 0 holds the first use of every path; frame F-1 runs after
//! the capture ended). A run's value is the median ns per call over those frames; a
//! configuration's value is the median of its runs' values; `ratio` is that value divided by
//! `direct`'s, `added` their difference.
//!
//! Bytes per call (capture configurations): the session file's size divided by the calls in
//! its frames (`Session::open`, `frames[i].calls.len()`); `frame B/call` counts only the
//! frame chunks (`FRMC`: columns of predicted values, zstd; `FRAM`, postcard and LZ4, in
//! version-1 sessions), without the fixed metadata (function table, contexts, modules). For
//! `apitrace`: the trace file's size divided by F·(M+2) (its few set-up calls are not
//! counted in the divisor).

use anyhow::{bail, Context, Result};
use gpuheat_session::control::env;
use gpuheat_session::{ChunkReader, Session};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::programs::{run_bounded, Tools};
use crate::table::median;

/// What the call-cost bench runs.
pub struct CallPlan {
    /// call_cost's client API (`--api`).
    pub api: String,
    /// glUniform1f calls per frame (M).
    pub calls: u32,
    /// Frames per run (F).
    pub frames: u32,
    /// Runs per configuration.
    pub runs: u32,
    /// How long one run may take.
    pub timeout: Duration,
    /// The results go out as JSON: no progress line.
    pub json: bool,
}

/// The configurations, in table order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Config {
    Direct,
    Preloaded,
    Outside,
    Timeline,
    Full,
    Apitrace,
}

impl Config {
    const ALL: [Config; 6] = [
        Config::Direct,
        Config::Preloaded,
        Config::Outside,
        Config::Timeline,
        Config::Full,
        Config::Apitrace,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Config::Direct => "direct",
            Config::Preloaded => "preloaded",
            Config::Outside => "outside capture",
            Config::Timeline => "inside capture, timeline",
            Config::Full => "inside capture, full",
            Config::Apitrace => "apitrace",
        }
    }

    fn detail(self) -> &'static str {
        match self {
            Config::Direct => "call_cost alone (baseline)",
            Config::Preloaded => "LD_PRELOAD agent, no GPUHEAT_SOCKET (dormant)",
            Config::Outside => "gpuheat run --skip 1000000: connected, not recording",
            Config::Timeline => "gpuheat run --mode timeline, frames 1..=F-2 recorded",
            Config::Full => "gpuheat run --mode full, frames 1..=F-2 recorded",
            Config::Apitrace => "apitrace trace --api egl",
        }
    }

    fn captures(self) -> bool {
        matches!(self, Config::Timeline | Config::Full)
    }
}

/// What one run measured.
struct Sample {
    /// Median ns per call over the measured frames.
    ns: f64,
    /// The capture's session (capture configurations) or trace (apitrace).
    file: Option<FileStats>,
}

/// Size of what a run wrote, per call.
#[derive(Clone, Default)]
pub struct FileStats {
    bytes: u64,
    /// Bytes of the frame chunks only (sessions).
    frame_bytes: Option<u64>,
    calls: u64,
    frames: u64,
    /// Calls the agent dropped (End record); 0 means the session holds every call.
    dropped: u64,
    pub renderer: Option<String>,
}

impl FileStats {
    pub fn per_call(&self) -> f64 {
        self.bytes as f64 / self.calls.max(1) as f64
    }
    pub fn frame_per_call(&self) -> Option<f64> {
        self.frame_bytes
            .map(|b| b as f64 / self.calls.max(1) as f64)
    }
}

/// The call-cost bench over the programs in `tools`, writing into `scratch`.
pub struct Bench<'a> {
    pub plan: &'a CallPlan,
    pub tools: &'a Tools,
    pub scratch: &'a Path,
}

/// One configuration's runs, or why it was skipped.
pub struct Outcome {
    pub config: Config,
    samples: Vec<Sample>,
    skipped: Option<String>,
}

impl Outcome {
    pub fn ns_runs(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.ns).collect()
    }
    pub fn ns(&self) -> Option<f64> {
        (!self.samples.is_empty()).then(|| median(&mut self.ns_runs()))
    }
    /// The median ns per call and its runs' min and max.
    pub fn ns_spread(&self) -> Option<(f64, f64, f64)> {
        let runs = self.ns_runs();
        let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        self.ns().map(|n| (n, lo, hi))
    }
    /// File statistics of the run with the median size per call.
    pub fn file(&self) -> Option<FileStats> {
        let mut files: Vec<FileStats> =
            self.samples.iter().filter_map(|s| s.file.clone()).collect();
        if files.is_empty() {
            return None;
        }
        files.sort_by(|a, b| a.per_call().total_cmp(&b.per_call()));
        Some(files[files.len() / 2].clone())
    }
}

impl Bench<'_> {
    pub fn run_all(&self) -> Result<Vec<Outcome>> {
        let mut outcomes: Vec<Outcome> = Config::ALL
            .iter()
            .map(|&config| Outcome {
                config,
                samples: Vec::new(),
                skipped: (config == Config::Apitrace && self.tools.apitrace.is_none()).then(|| {
                    "apitrace not on PATH (Debian/Ubuntu: apt-get install apitrace)".to_string()
                }),
            })
            .collect();
        let progress = !self.plan.json && std::io::stderr().is_terminal();
        for run in 0..self.plan.runs {
            for o in outcomes.iter_mut().filter(|o| o.skipped.is_none()) {
                if progress {
                    eprint!(
                        "\rgpuheat-bench: run {}/{} {:<28}",
                        run + 1,
                        self.plan.runs,
                        o.config.name()
                    );
                }
                let sample = self
                    .run_once(o.config, run)
                    .with_context(|| format!("{} (run {})", o.config.name(), run + 1))?;
                o.samples.push(sample);
            }
        }
        if progress {
            eprint!("\r{:<70}\r", "");
        }
        Ok(outcomes)
    }

    /// call_cost's arguments for every configuration.
    fn program_args(&self) -> Vec<String> {
        vec![
            "--api".into(),
            self.plan.api.clone(),
            "--calls".into(),
            self.plan.calls.to_string(),
            "--frames".into(),
            self.plan.frames.to_string(),
            "--report-call-ns".into(),
        ]
    }

    /// The measured frames: 1 ..= F-2, the frames the capture configurations record.
    fn measured(&self) -> std::ops::RangeInclusive<u64> {
        1..=(self.plan.frames as u64 - 2)
    }

    fn run_once(&self, config: Config, run: u32) -> Result<Sample> {
        let t = &self.tools;
        let file = self
            .scratch
            .join(format!("{}-{run}", config.name().replace([' ', ','], "_")));
        let mut cmd = match config {
            Config::Direct => Command::new(&t.call_cost),
            Config::Preloaded => {
                let mut c = Command::new(&t.call_cost);
                c.env("LD_PRELOAD", &t.agent);
                c
            }
            Config::Outside | Config::Timeline | Config::Full => {
                let mut c = Command::new(&t.gpuheat);
                c.env(env::AGENT, &t.agent)
                    .arg("run")
                    .arg("-o")
                    .arg(&file)
                    .args(["--timeout", "60"]);
                if config == Config::Outside {
                    c.args(["--skip", "1000000", "--frames", "1"]);
                } else {
                    let mode = if config == Config::Full {
                        "full"
                    } else {
                        "timeline"
                    };
                    c.args(["--mode", mode, "--skip", "1", "--frames"])
                        .arg((self.plan.frames - 2).to_string())
                        .arg("--keep-running");
                }
                c.arg("--").arg(&t.call_cost);
                c
            }
            Config::Apitrace => {
                let mut c = Command::new(t.apitrace.as_ref().expect("skipped without apitrace"));
                c.args(["trace", "--api", "egl", "-o"])
                    .arg(&file)
                    .arg("--")
                    .arg(&t.call_cost);
                c
            }
        };
        cmd.args(self.program_args());
        let out = run_bounded(cmd, self.plan.timeout)?;
        // gpuheat fails when the program exits before the (never reached) frame to capture.
        let must_succeed = config != Config::Outside;
        let per_frame = match parse_frames(&out.stdout) {
            Some(v) if out.status.success() || !must_succeed => v,
            _ => bail!(
                "{} ({}): no call_ns_frames= line on stdout; stderr: {}",
                config.detail(),
                out.status,
                out.stderr.trim()
            ),
        };
        if per_frame.len() != self.plan.frames as usize {
            bail!(
                "call_cost reported {} frames, expected {}",
                per_frame.len(),
                self.plan.frames
            );
        }
        let mut wanted: Vec<u64> = self.measured().collect();
        let stats = if config.captures() {
            let (stats, indices) = self.session_stats(&file)?;
            wanted = indices;
            Some(stats)
        } else if config == Config::Apitrace {
            let bytes = std::fs::metadata(&file)
                .with_context(|| format!("apitrace wrote no {}", file.display()))?
                .len();
            Some(FileStats {
                bytes,
                frame_bytes: None,
                calls: self.plan.frames as u64 * (self.plan.calls as u64 + 2),
                frames: self.plan.frames as u64,
                dropped: 0,
                renderer: None,
            })
        } else {
            None
        };
        let _ = std::fs::remove_file(&file);
        let mut values: Vec<f64> = wanted
            .iter()
            .filter_map(|&i| per_frame.get(i as usize).copied())
            .collect();
        if values.is_empty() {
            bail!("no measured frame");
        }
        Ok(Sample {
            ns: median(&mut values),
            file: stats,
        })
    }

    /// Size per call of a capture's session, and the indices of the frames it holds.
    fn session_stats(&self, path: &Path) -> Result<(FileStats, Vec<u64>)> {
        let session =
            Session::open(path).with_context(|| format!("reading session {}", path.display()))?;
        let bytes = std::fs::metadata(path)?.len();
        let indices: Vec<u64> = session.frames.iter().map(|f| f.index).collect();
        let expected: Vec<u64> = self.measured().collect();
        if indices != expected {
            bail!("the session holds frames {indices:?}, expected {expected:?}");
        }
        let calls: u64 = session.frames.iter().map(|f| f.calls.len() as u64).sum();
        let per_frame = self.plan.calls as u64 + 2;
        if let Some(f) = session
            .frames
            .iter()
            .find(|f| f.calls.len() as u64 != per_frame)
        {
            bail!(
                "frame {} holds {} calls, call_cost documents M + 2 = {per_frame}",
                f.index,
                f.calls.len()
            );
        }
        let file = std::fs::File::open(path)?;
        let (_, mut chunks) = ChunkReader::from_file_start(std::io::BufReader::new(file))?;
        let mut frame_bytes = 0;
        while let Some(chunk) = chunks.read_chunk()? {
            if chunk.kind().is_frame() {
                frame_bytes += chunk.header().chunk_len();
            }
        }
        let renderer = session
            .contexts
            .first()
            .map(|c| format!("{} ({})", c.renderer, c.version));
        Ok((
            FileStats {
                bytes,
                frame_bytes: Some(frame_bytes),
                calls,
                frames: session.frames.len() as u64,
                dropped: session.end.as_ref().map_or(0, |e| e.dropped_calls),
                renderer,
            },
            indices,
        ))
    }
}

impl CallPlan {
    /// The header and the table of configurations, against `base`.
    pub fn print(&self, outcomes: &[Outcome], renderer: Option<&String>, base: f64) {
        let m = self.frames - 2;
        println!(
            "gpuheat-bench: call_cost --api {} --calls {} (glUniform1f), {} frames per run, \
             measured frames 1..={m}, median of {} runs",
            self.api, self.calls, self.frames, self.runs
        );
        if let Some(r) = renderer {
            println!("renderer: {r}");
        }
        println!();
        println!(
            "{:<26} {:>9} {:>19} {:>9} {:>8} {:>8} {:>8}",
            "configuration", "ns/call", "runs min..max", "added ns", "ratio", "B/call", "frame B"
        );
        for o in outcomes {
            if let Some(why) = &o.skipped {
                println!("{:<26} skipped: {why}", o.config.name());
                continue;
            }
            let ns = o.ns().unwrap_or(f64::NAN);
            let runs = o.ns_runs();
            let (lo, hi) = runs
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
            let file = o.file();
            let bytes = file
                .as_ref()
                .map_or("-".to_string(), |f| format!("{:.1}", f.per_call()));
            let frame_bytes = file
                .as_ref()
                .and_then(FileStats::frame_per_call)
                .map_or("-".to_string(), |b| format!("{b:.1}"));
            println!(
                "{:<26} {:>9.2} {:>19} {:>9.2} {:>8.2} {:>8} {:>8}",
                o.config.name(),
                ns,
                format!("{lo:.2}..{hi:.2}"),
                ns - base,
                ns / base,
                bytes,
                frame_bytes
            );
            if let Some(f) = file.filter(|f| f.dropped > 0) {
                println!(
                    "{:<26} warning: the agent dropped {} calls; B/call is low",
                    "", f.dropped
                );
            }
        }
    }
}

/// The direct call's ns per call: the baseline of every ratio.
pub fn base(outcomes: &[Outcome]) -> Result<f64> {
    outcomes
        .iter()
        .find(|o| o.config == Config::Direct)
        .and_then(Outcome::ns)
        .context("no direct measurement")
}

/// The renderer the sessions name, if any run wrote one.
pub fn renderer(outcomes: &[Outcome]) -> Option<String> {
    outcomes
        .iter()
        .find_map(|o| o.file().and_then(|f| f.renderer))
}

/// The configurations as JSON, against `base`.
pub fn json(outcomes: &[Outcome], base: f64) -> Vec<Value> {
    outcomes
        .iter()
        .map(|o| {
            let ns = o.ns();
            let file = o.file();
            json!({
                "name": o.config.name(),
                "what": o.config.detail(),
                "skipped": o.skipped,
                "ns_per_call": ns,
                "ns_per_call_runs": o.ns_runs(),
                "added_ns_per_call": ns.map(|v| v - base),
                "ratio_vs_direct": ns.map(|v| v / base),
                "bytes_per_call": file.as_ref().map(FileStats::per_call),
                "frame_bytes_per_call": file.as_ref().and_then(FileStats::frame_per_call),
                "file_bytes": file.as_ref().map(|f| f.bytes),
                "file_calls": file.as_ref().map(|f| f.calls),
                "file_frames": file.as_ref().map(|f| f.frames),
                "dropped_calls": file.as_ref().map(|f| f.dropped),
            })
        })
        .collect()
}

/// What the table's columns mean, and how long the whole bench took.
pub fn print_note(elapsed: Duration) {
    println!();
    println!(
        "ns/call: CLOCK_MONOTONIC around the M calls of each frame, median over the measured \
         frames, then over runs; ratio = ns/call / direct's; B/call = session (or trace) \
         file bytes / calls in it; frame B = frame chunks only. {:.0} s.",
        elapsed.as_secs_f64()
    );
}

/// `call_ns_frames=a,b,c` from call_cost's stdout.
fn parse_frames(stdout: &str) -> Option<Vec<f64>> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("call_ns_frames="))?;
    line.split(',').map(|v| v.trim().parse().ok()).collect()
}
