//! `gpuheat-bench`: what gpuheat adds to every non-draw GL call, outside and inside a
//! capture, as a ratio against the direct call measured in the same run, and the session
//! bytes each captured call costs.
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
//!
//! Then, unless `--attaches 0`, attach latency and hiccup, first attaches apart from re-attaches (attach.rs), unless
//! `--heat-layers ""`, the cost of a heat-captured frame against the same frame uncaptured
//! and the memory of the maps (heat.rs), and, unless `--offscreen-frames 0`, the same for a
//! frame whose cost is spent in an offscreen render target (`offscreen_pass`, heat.rs),
//! with its spread over frames and the per-target maps' memory, and, unless `--geometry ""`,
//! the cost of full mode's geometry capture on `many_draws` (1,000 draws × 1,000 triangles),
//! against full mode without it and the frame uncaptured (geometry.rs).
//!
//! `gpuheat`, `call_cost` and `libgpuheat_agent.so` are taken from the directory of this
//! executable (`cargo build --release --workspace`, then `target/release/gpuheat-bench`).

mod analysis;
mod attach;
mod clock;
mod geometry;
mod heat;
mod targets;
mod viewer;

use anyhow::{bail, Context, Result};
use clap::Parser;
use gpuheat_session::control::env;
use gpuheat_session::{ChunkReader, Session};
use serde_json::{json, Value};
use std::io::{IsTerminal, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "gpuheat-bench",
    about = "Added cost per non-draw GL call outside and inside a gpuheat capture, against the direct call"
)]
struct Opts {
    /// glUniform1f calls per frame (call_cost --calls).
    #[arg(long, short = 'm', default_value_t = 20000, value_parser = clap::value_parser!(u32).range(1..))]
    calls: u32,
    /// Frames per run; frames 1..=F-2 are measured [default: 30, 12 with --quick].
    #[arg(long, short = 'f', value_parser = clap::value_parser!(u32).range(3..))]
    frames: Option<u32>,
    /// Runs per configuration; the median run counts [default: 5, 3 with --quick].
    #[arg(long, short = 'r', value_parser = clap::value_parser!(u32).range(1..))]
    runs: Option<u32>,
    /// Client API of call_cost's context.
    #[arg(long, default_value = "gles", value_parser = ["gles", "gl"])]
    api: String,
    /// Fewer frames and runs (about 2 s instead of about 6 s on llvmpipe, 2 cores).
    #[arg(long)]
    quick: bool,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Fresh targets to measure attach latency and hiccup on, each attached twice: a first
    /// attach and a re-attach (0: skip).
    #[arg(long, default_value_t = 5)]
    attaches: usize,
    /// Draw counts for the heat-cost runs (overdraw --layers N), comma-separated; empty or 0: skip.
    #[arg(long, default_value = "10,100,1000")]
    heat_layers: String,
    /// Captured frames of the offscreen heat-cost runs (offscreen_pass); 0: skip.
    #[arg(long, default_value_t = 12)]
    offscreen_frames: u32,
    /// Workload of the geometry-cost runs, DRAWSxTRIS (many_draws --draws D --tris T); empty
    /// or 0: skip.
    #[arg(long, default_value = "1000x1000")]
    geometry: String,
    /// Captured frames of the geometry-cost runs (each figure holds F-1 frame times).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(3..))]
    geometry_frames: u32,
    /// Runs per configuration of the geometry cost, round-robin; frame times are pooled.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    geometry_runs: u32,
    /// Seconds one run may take before it is killed and the bench fails.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Measure the viewer instead (viewer.rs): first paint and UI frame times on large
    /// sessions captured from many_draws.
    #[arg(long)]
    viewer: bool,
    /// With --viewer: draws per frame of the large sessions.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    viewer_draws: u32,
    /// With --viewer: triangles per draw of the geometry session (draws × tris = triangles).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(2..))]
    viewer_tris: u32,
    /// Measure analysis instead (analysis.rs): `gpuheat report` and `gpuheat diff` on two
    /// sessions of --analysis-frames × --analysis-draws draws captured from many_draws.
    #[arg(long)]
    analysis: bool,
    /// With --analysis: frames per session.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    analysis_frames: u32,
    /// With --analysis: draws per frame.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    analysis_draws: u32,
    /// With --viewer: frames of the timeline session.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    viewer_frames: u32,
}

/// The configurations, in table order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Config {
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

    fn name(self) -> &'static str {
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

/// The programs the bench runs.
struct Tools {
    gpuheat: PathBuf,
    call_cost: PathBuf,
    overdraw: PathBuf,
    offscreen_pass: PathBuf,
    many_draws: PathBuf,
    agent: PathBuf,
    apitrace: Option<PathBuf>,
}

impl Tools {
    fn find() -> Result<Tools> {
        let exe = std::env::current_exe().context("locating gpuheat-bench")?;
        let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
        let need = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                bail!(
                    "{} not found next to gpuheat-bench: run `cargo build --release --workspace` (make bench does)",
                    p.display()
                )
            }
        };
        Ok(Tools {
            gpuheat: need("gpuheat")?,
            call_cost: need("call_cost")?,
            overdraw: need("overdraw")?,
            offscreen_pass: need("offscreen_pass")?,
            many_draws: need("many_draws")?,
            agent: need("libgpuheat_agent.so")?,
            apitrace: on_path("apitrace"),
        })
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
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
struct FileStats {
    bytes: u64,
    /// Bytes of the frame chunks only (sessions).
    frame_bytes: Option<u64>,
    calls: u64,
    frames: u64,
    /// Calls the agent dropped (End record); 0 means the session holds every call.
    dropped: u64,
    renderer: Option<String>,
}

impl FileStats {
    fn per_call(&self) -> f64 {
        self.bytes as f64 / self.calls.max(1) as f64
    }
    fn frame_per_call(&self) -> Option<f64> {
        self.frame_bytes
            .map(|b| b as f64 / self.calls.max(1) as f64)
    }
}

struct Bench {
    opts: Opts,
    tools: Tools,
    scratch: PathBuf,
    calls: u32,
    frames: u32,
    runs: u32,
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("gpuheat-bench: error: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let opts = Opts::parse();
    if opts.viewer {
        gpuheat_viz::quiet_wayland_probe();
        return viewer_main(&opts);
    }
    if opts.analysis {
        return analysis_main(&opts);
    }
    let heat_layers = heat::parse_layers(&opts.heat_layers)?;
    let geometry_workload = geometry::parse_workload(&opts.geometry)?;
    let tools = Tools::find()?;
    let frames = opts.frames.unwrap_or(if opts.quick { 12 } else { 30 });
    let runs = opts.runs.unwrap_or(if opts.quick { 3 } else { 5 });
    let scratch = std::env::temp_dir().join(format!("gpuheat-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let bench = Bench {
        calls: opts.calls,
        frames,
        runs,
        opts,
        tools,
        scratch,
    };
    let started = Instant::now();
    let result = bench.run_all().and_then(|results| {
        let attach = match bench.opts.attaches {
            0 => None,
            n => Some(attach::measure(
                &bench.tools.gpuheat,
                &bench.tools.overdraw,
                &bench.scratch,
                n,
            )?),
        };
        let heat = if heat_layers.is_empty() {
            None
        } else {
            Some(heat::measure(
                &bench.tools.gpuheat,
                &bench.tools.agent,
                &bench.tools.overdraw,
                &bench.scratch,
                &heat_layers,
                Duration::from_secs(bench.opts.timeout),
            )?)
        };
        let offscreen = match bench.opts.offscreen_frames {
            0 => None,
            n => Some(heat::measure_offscreen(
                &bench.tools.gpuheat,
                &bench.tools.agent,
                &bench.tools.offscreen_pass,
                &bench.scratch,
                n,
                Duration::from_secs(bench.opts.timeout),
            )?),
        };
        let geometry = match geometry_workload {
            None => None,
            Some(w) => Some(geometry::measure(
                &bench.tools.gpuheat,
                &bench.tools.agent,
                &bench.tools.many_draws,
                &bench.scratch,
                w,
                bench.opts.geometry_frames,
                bench.opts.geometry_runs,
                Duration::from_secs(bench.opts.timeout),
            )?),
        };
        Ok((results, attach, heat, offscreen, geometry))
    });
    let _ = std::fs::remove_dir_all(&bench.scratch);
    let (results, attach, heat, offscreen, geometry) = result?;
    bench.print(
        &results,
        Extras {
            attach: attach.as_ref(),
            heat: heat.as_deref(),
            offscreen: offscreen.as_ref(),
            geometry: geometry.as_ref(),
        },
        started.elapsed(),
    )
}

/// `--viewer`: captures the viewer's sessions and measures it (viewer.rs).
fn viewer_main(opts: &Opts) -> Result<()> {
    let tools = Tools::find()?;
    let scratch = scratch_dir()?;
    let plan = viewer::ViewerPlan {
        draws: opts.viewer_draws,
        tris: opts.viewer_tris,
        frames: opts.viewer_frames,
    };
    let rows = viewer::measure(
        &tools.gpuheat,
        &tools.many_draws,
        &scratch,
        &plan,
        Duration::from_secs(opts.timeout),
    );
    let _ = std::fs::remove_dir_all(&scratch);
    let rows = rows?;
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&viewer::to_json(&rows))?);
    } else {
        print!("{}", viewer::to_text(&rows));
    }
    Ok(())
}

/// A fresh scratch directory for this run's sessions (the caller removes it).
fn scratch_dir() -> Result<PathBuf> {
    let scratch = std::env::temp_dir().join(format!("gpuheat-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    Ok(scratch)
}

/// `--analysis`: captures two large sessions and times report and diff (analysis.rs).
fn analysis_main(opts: &Opts) -> Result<()> {
    let tools = Tools::find()?;
    let scratch = scratch_dir()?;
    let plan = analysis::AnalysisPlan {
        frames: opts.analysis_frames,
        draws: opts.analysis_draws,
        runs: opts.runs.unwrap_or(3),
    };
    let result = analysis::measure(
        &tools.gpuheat,
        &tools.many_draws,
        &scratch,
        &plan,
        Duration::from_secs(opts.timeout),
    );
    let _ = std::fs::remove_dir_all(&scratch);
    let result = result?;
    if opts.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&analysis::to_json(&result))?
        );
    } else {
        print!("{}", analysis::to_text(&result));
    }
    Ok(())
}

/// One configuration's runs, or why it was skipped.
struct Outcome {
    config: Config,
    samples: Vec<Sample>,
    skipped: Option<String>,
}

impl Outcome {
    fn ns_runs(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.ns).collect()
    }
    fn ns(&self) -> Option<f64> {
        (!self.samples.is_empty()).then(|| median(&mut self.ns_runs()))
    }
    /// The median ns per call and its runs' min and max.
    fn ns_spread(&self) -> Option<(f64, f64, f64)> {
        let runs = self.ns_runs();
        let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        self.ns().map(|n| (n, lo, hi))
    }
    /// File statistics of the run with the median size per call.
    fn file(&self) -> Option<FileStats> {
        let mut files: Vec<FileStats> =
            self.samples.iter().filter_map(|s| s.file.clone()).collect();
        if files.is_empty() {
            return None;
        }
        files.sort_by(|a, b| a.per_call().total_cmp(&b.per_call()));
        Some(files[files.len() / 2].clone())
    }
}

impl Bench {
    fn run_all(&self) -> Result<Vec<Outcome>> {
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
        let progress = !self.opts.json && std::io::stderr().is_terminal();
        for run in 0..self.runs {
            for o in outcomes.iter_mut().filter(|o| o.skipped.is_none()) {
                if progress {
                    eprint!(
                        "\rgpuheat-bench: run {}/{} {:<28}",
                        run + 1,
                        self.runs,
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
            self.opts.api.clone(),
            "--calls".into(),
            self.calls.to_string(),
            "--frames".into(),
            self.frames.to_string(),
            "--report-call-ns".into(),
        ]
    }

    /// The measured frames: 1 ..= F-2, the frames the capture configurations record.
    fn measured(&self) -> std::ops::RangeInclusive<u64> {
        1..=(self.frames as u64 - 2)
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
                        .arg((self.frames - 2).to_string())
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
        let out = run_bounded(cmd, Duration::from_secs(self.opts.timeout))?;
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
        if per_frame.len() != self.frames as usize {
            bail!(
                "call_cost reported {} frames, expected {}",
                per_frame.len(),
                self.frames
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
                calls: self.frames as u64 * (self.calls as u64 + 2),
                frames: self.frames as u64,
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
        let per_frame = self.calls as u64 + 2;
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

    fn print(&self, outcomes: &[Outcome], extras: Extras<'_>, elapsed: Duration) -> Result<()> {
        let Extras {
            attach,
            heat,
            offscreen,
            geometry,
        } = extras;
        let base = outcomes
            .iter()
            .find(|o| o.config == Config::Direct)
            .and_then(Outcome::ns)
            .context("no direct measurement")?;
        let renderer = outcomes
            .iter()
            .find_map(|o| o.file().and_then(|f| f.renderer));
        let m = self.frames - 2;
        let of = |c: Config| outcomes.iter().find(|o| o.config == c);
        let figures = targets::Figures {
            timeline_ns: of(Config::Timeline).and_then(Outcome::ns_spread),
            direct_ns: Some(base),
            apitrace_ns: of(Config::Apitrace).and_then(Outcome::ns),
            full_ns: of(Config::Full).and_then(Outcome::ns_spread),
            timeline_bytes_per_call: of(Config::Timeline)
                .and_then(Outcome::file)
                .map(|f| f.per_call()),
            apitrace_bytes_per_call: of(Config::Apitrace)
                .and_then(Outcome::file)
                .map(|f| f.per_call()),
            heat: heat
                .and_then(|rows| rows.iter().max_by_key(|r| r.layers))
                .map(|r| (r.layers, r.heat_ms / r.uncaptured_ms)),
            first_attach_ms: attach.map(|a| {
                let h = heat::Spread::of(&a.first.hiccup_ms);
                (h.median, h.min, h.max)
            }),
            geometry: geometry.map(|g| g.geometry.ratio(&g.full)),
            stamp_ns: Some(clock::stamp_costs()),
        };
        let target_rows = targets::rows(&figures);
        if self.opts.json {
            let configs: Vec<Value> = outcomes
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
                .collect();
            let doc = json!({
                "workload": "call_cost: M x glUniform1f per frame, 1 draw, eglSwapBuffers",
                "api": self.opts.api,
                "renderer": renderer,
                "calls_per_frame": self.calls,
                "frames_per_run": self.frames,
                "measured_frames": [1, self.frames - 2],
                "runs": self.runs,
                "elapsed_s": elapsed.as_secs_f64(),
                "configurations": configs,
                "targets": targets::json(&target_rows),
                "attach": attach.map(|a| json!({
                    "rounds": a.first.hiccup_ms.len(),
                    "first": attaches_json(&a.first),
                    "again": attaches_json(&a.again),
                    "target_frame_ms": spread_json(&heat::Spread::of(&a.frame_ms)),
                })),
                "heat": heat.map(|rows| json!({
                    "workload": "overdraw --api gles --size 256x256 --layers N --timing",
                    "frame_time": "uncaptured: overdraw's frame_ms; captured: median swap-to-swap of frames 1..=3",
                    "gpu_bytes_per_pixel": heat::GPU_BYTES_PER_PIXEL,
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
                })),
                "offscreen": offscreen.map(offscreen_json),
                "geometry": geometry.map(geometry_json),
            });
            println!("{}", serde_json::to_string_pretty(&doc)?);
            return Ok(());
        }
        println!(
            "gpuheat-bench: call_cost --api {} --calls {} (glUniform1f), {} frames per run, \
             measured frames 1..={m}, median of {} runs",
            self.opts.api, self.calls, self.frames, self.runs
        );
        if let Some(r) = &renderer {
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
        if let Some(a) = attach {
            println!();
            let frame = heat::Spread::of(&a.frame_ms);
            println!(
                "attach (overdraw --api gles --timing; {} fresh targets, each attached twice; median [min..max]; target frame {:.2} ms):",
                a.first.hiccup_ms.len(),
                frame.median
            );
            for (name, x) in [("first attach", &a.first), ("re-attach", &a.again)] {
                let (l, h, i) = (
                    heat::Spread::of(&x.latency_ms),
                    heat::Spread::of(&x.hiccup_ms),
                    heat::Spread::of(&x.injection_ms),
                );
                println!(
                    "  {name:<13} render thread held {:.1} ms [{:.1}..{:.1}] = {:.1}x the frame; injection {:.1} ms; first frame {:.0} ms after the command",
                    h.median, h.min, h.max, h.median / frame.median, i.median, l.median
                );
            }
        }
        if let Some(rows) = heat {
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
                heat::GPU_BYTES_PER_PIXEL
            );
        }
        if let Some(o) = offscreen {
            print_offscreen(o);
        }
        if let Some(g) = geometry {
            print_geometry(g);
        }
        println!();
        println!(
            "ns/call: CLOCK_MONOTONIC around the M calls of each frame, median over the measured \
             frames, then over runs; ratio = ns/call / direct's; B/call = session (or trace) \
             file bytes / calls in it; frame B = frame chunks only. {:.0} s.",
            elapsed.as_secs_f64()
        );
        targets::print(&target_rows);
        Ok(())
    }
}

/// What the bench measured besides the per-call cost (each `None` when skipped).
struct Extras<'a> {
    attach: Option<&'a attach::AttachStats>,
    heat: Option<&'a [heat::HeatRow]>,
    offscreen: Option<&'a heat::OffscreenRow>,
    geometry: Option<&'a geometry::GeometryRow>,
}

/// A spread as JSON.
fn spread_json(s: &heat::Spread) -> Value {
    json!({"median": s.median, "q1": s.q1, "q3": s.q3, "min": s.min, "max": s.max, "n": s.n})
}

/// One kind of attach as JSON, each figure with its spread over the attaches.
fn attaches_json(a: &attach::Attaches) -> Value {
    json!({
        "latency_ms": spread_json(&heat::Spread::of(&a.latency_ms)),
        "hiccup_ms": spread_json(&heat::Spread::of(&a.hiccup_ms)),
        "injection_ms": spread_json(&heat::Spread::of(&a.injection_ms)),
    })
}

fn ratio_json(s: &heat::Spread, base: &heat::Spread) -> Value {
    let (r, lo, hi) = s.ratio(base);
    json!({"median": r, "from_quartiles": [lo, hi]})
}

/// The geometry cost as JSON.
fn geometry_json(g: &geometry::GeometryRow) -> Value {
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
fn print_geometry(g: &geometry::GeometryRow) {
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
        let (r, lo, hi) = s.ratio(&g.uncaptured);
        let (f, flo, fhi) = s.ratio(&g.full);
        println!(
            "{name:<14} {:>36} {:>22} {:>22}",
            s.text(),
            format!("{r:.2}x ({lo:.2}-{hi:.2})"),
            format!("{f:.2}x ({flo:.2}-{fhi:.2})")
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

/// The offscreen heat cost as JSON.
fn offscreen_json(o: &heat::OffscreenRow) -> Value {
    let spread = spread_json;
    let ratio = |s: &heat::Spread| {
        let (r, lo, hi) = s.ratio(&o.uncaptured);
        json!({"median": r, "from_quartiles": [lo, hi]})
    };
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
            "of_the_largest_target": heat::GPU_SHARED_BYTES_PER_PIXEL,
            "of_each_target": heat::GPU_TARGET_BYTES_PER_PIXEL,
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
fn print_offscreen(o: &heat::OffscreenRow) {
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
        let (r, lo, hi) = s.ratio(&o.uncaptured);
        println!(
            "{name:<10} {:>36} {:>22}",
            s.text(),
            format!("{r:.2}x ({lo:.2}-{hi:.2})")
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
        heat::GPU_SHARED_BYTES_PER_PIXEL,
        heat::GPU_TARGET_BYTES_PER_PIXEL,
        window_px,
        o.target_pixels(),
        o.offscreen_draws
    );
}

/// `call_ns_frames=a,b,c` from call_cost's stdout.
fn parse_frames(stdout: &str) -> Option<Vec<f64>> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("call_ns_frames="))?;
    line.split(',').map(|v| v.trim().parse().ok()).collect()
}

/// Median (mean of the two middle values for an even count; NaN for none).
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` in its own process group, collecting stdout and stderr until every process
/// holding them ends (a program left running by `gpuheat run --keep-running` included). Past
/// `limit` the whole group is killed and the run fails.
fn run_bounded(mut cmd: Command, limit: Duration) -> Result<Output> {
    for var in [
        "LD_PRELOAD",
        env::SOCKET,
        env::FRAMES,
        env::SKIP,
        env::MODE,
        env::GEOMETRY_VERTICES,
    ] {
        if !cmd.get_envs().any(|(k, v)| k == var && v.is_some()) {
            cmd.env_remove(var);
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().with_context(|| format!("starting {shown}"))?;
    let pgid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    for (which, mut pipe) in [
        (
            0,
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        ),
        (1, Box::new(child.stderr.take().unwrap())),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send((which, String::from_utf8_lossy(&buf).into_owned()));
        });
    }
    drop(tx);
    let deadline = Instant::now() + limit;
    let (mut stdout, mut stderr) = (None, None);
    while stdout.is_none() || stderr.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((0, s)) => stdout = Some(s),
            Ok((_, s)) => stderr = Some(s),
            Err(_) => {
                // SAFETY: signalling the process group this function created.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                let _ = child.wait();
                bail!("{shown} still running after {} s; killed", limit.as_secs());
            }
        }
    }
    let status = child.wait()?;
    Ok(Output {
        status,
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
    })
}
