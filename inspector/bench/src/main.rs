//! `gpuheat-bench`: what gpuheat adds to every non-draw GL call, outside and inside a
//! capture, as a ratio against the direct call measured in the same run, and the session
//! bytes each captured call costs (calls.rs).
//!
//! Then, unless `--attaches 0`, attach latency and hiccup, first attaches apart from re-attaches (attach.rs), unless
//! `--heat-layers ""`, the cost of a heat-captured frame against the same frame uncaptured
//! and the memory of the maps (heat.rs), and, unless `--offscreen-frames 0`, the same for a
//! frame whose cost is spent in an offscreen render target (`offscreen_pass`, offscreen.rs),
//! with its spread over frames and the per-target maps' memory, and, unless `--geometry ""`,
//! the cost of full mode's geometry capture on `many_draws` (1,000 draws × 1,000 triangles),
//! against full mode without it and the frame uncaptured (geometry.rs), and, unless
//! `--waits ""`, the agent's waits for the GPU per frame in each mode (waits.rs), and, unless
//! `--watch ""`, what watching with `attach --trigger` costs the program's frames (watch.rs),
//! and, unless `--vulkan ""`, what the Vulkan layer costs `vk_quads`' frames and calls:
//! dormant, recording (timeline) and timing (full) (vulkan.rs; skipped with the reason where
//! there is no Xvfb or Vulkan loader). `--vulkan-only` runs that section alone.
//!
//! `gpuheat`, `call_cost` and `libgpuheat_agent.so` are taken from the directory of this
//! executable (`cargo build --release --workspace`, then `target/release/gpuheat-bench`).
//!
//! The default run is suite.rs; `--viewer` and `--analysis` measure the viewer (viewer.rs)
//! and the analysis commands (analysis.rs) instead. This file parses the arguments and
//! dispatches; each bench prints its own rows, with the figures' shapes in table.rs.

mod analysis;
mod attach;
mod calls;
mod clock;
mod geometry;
mod heat;
mod offscreen;
mod programs;
mod suite;
mod table;
mod targets;
mod viewer;
mod vulkan;
mod waits;
mod watch;

use anyhow::Result;
use clap::Parser;
use std::path::Path;
use std::time::Duration;

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
    /// Draw counts of the agent-waits runs (many_draws --draws N, every capture mode),
    /// comma-separated; empty or 0: skip.
    #[arg(long, default_value = "10,100,1000")]
    waits: String,
    /// Draw counts of the watch-cost runs (many_draws --draws N watched by `attach
    /// --trigger`), comma-separated; empty or 0: skip.
    #[arg(long, default_value = "1000")]
    watch: String,
    /// Draw counts of the Vulkan-layer runs (vk_quads --quads N --loop 0 --size 64x64: plain,
    /// layer dormant, captured in timeline and in full mode), comma-separated; empty or 0: skip.
    #[arg(long, default_value = "10,100,1000")]
    vulkan: String,
    /// Captured frames of each Vulkan captured run (frames 2..F-1 of them are measured, and
    /// the same frames of the uncaptured runs) [default: 30, 16 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u32).range(4..))]
    vulkan_frames: Option<u32>,
    /// Run only the Vulkan-layer rows (--vulkan LIST), none of the GL benches.
    #[arg(long)]
    vulkan_only: bool,
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
    let vulkan = vulkan_plan(&opts)?;
    if opts.vulkan_only {
        return vulkan_main(&opts, vulkan);
    }
    let heat_layers = heat::parse_layers(&opts.heat_layers)?;
    let geometry = geometry::parse_workload(&opts.geometry)?;
    let waits = waits::parse_draws(&opts.waits)?;
    let watch = watch::parse_draws(&opts.watch)?;
    suite::run(&suite::Plan {
        calls: calls::CallPlan {
            api: opts.api.clone(),
            calls: opts.calls,
            frames: opts.frames.unwrap_or(if opts.quick { 12 } else { 30 }),
            runs: opts.runs.unwrap_or(if opts.quick { 3 } else { 5 }),
            timeout: Duration::from_secs(opts.timeout),
            json: opts.json,
        },
        attaches: opts.attaches,
        heat_layers,
        offscreen_frames: opts.offscreen_frames,
        geometry,
        geometry_frames: opts.geometry_frames,
        geometry_runs: opts.geometry_runs,
        waits,
        watch,
        vulkan,
    })
}

/// The Vulkan rows' plan (`--vulkan`, `--vulkan-frames`, `--runs`); `None` for no draw count.
fn vulkan_plan(opts: &Opts) -> Result<Option<vulkan::VkPlan>> {
    let draws = vulkan::parse_draws(&opts.vulkan)?;
    if draws.is_empty() {
        return Ok(None);
    }
    Ok(Some(vulkan::VkPlan {
        draws,
        frames: opts
            .vulkan_frames
            .unwrap_or(if opts.quick { 16 } else { 30 }),
        runs: opts.runs.unwrap_or(if opts.quick { 3 } else { 5 }),
        timeout: Duration::from_secs(opts.timeout),
    }))
}

/// `--vulkan-only`: the Vulkan rows alone (vulkan.rs).
fn vulkan_main(opts: &Opts, plan: Option<vulkan::VkPlan>) -> Result<()> {
    let Some(plan) = plan else {
        anyhow::bail!("--vulkan-only needs draw counts in --vulkan");
    };
    let result = programs::in_scratch(|tools, scratch| {
        vulkan::measure(&tools.gpuheat, &tools.agent, scratch, &plan)
    })?;
    if opts.json {
        let doc = serde_json::json!({ "vulkan": vulkan::to_json(&result) });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        vulkan::print(&result);
    }
    Ok(())
}

/// `--viewer`: captures the viewer's sessions and measures it (viewer.rs).
fn viewer_main(opts: &Opts) -> Result<()> {
    let plan = viewer::ViewerPlan {
        draws: opts.viewer_draws,
        tris: opts.viewer_tris,
        frames: opts.viewer_frames,
    };
    many_draws_bench(
        opts,
        |gpuheat, many_draws, scratch, limit| {
            viewer::measure(gpuheat, many_draws, scratch, &plan, limit)
        },
        |rows| viewer::to_json(rows),
        |rows| viewer::to_text(rows),
    )
}

/// `--analysis`: captures two large sessions and times report and diff (analysis.rs).
fn analysis_main(opts: &Opts) -> Result<()> {
    let plan = analysis::AnalysisPlan {
        frames: opts.analysis_frames,
        draws: opts.analysis_draws,
        runs: opts.runs.unwrap_or(3),
    };
    many_draws_bench(
        opts,
        |gpuheat, many_draws, scratch, limit| {
            analysis::measure(gpuheat, many_draws, scratch, &plan, limit)
        },
        analysis::to_json,
        analysis::to_text,
    )
}

/// Runs a bench on sessions captured from many_draws (`measure(gpuheat, many_draws, scratch,
/// limit)`) in a fresh scratch directory, and prints its result as JSON or as text.
fn many_draws_bench<T>(
    opts: &Opts,
    measure: impl FnOnce(&Path, &Path, &Path, Duration) -> Result<T>,
    to_json: impl Fn(&T) -> serde_json::Value,
    to_text: impl Fn(&T) -> String,
) -> Result<()> {
    let result = programs::in_scratch(|tools, scratch| {
        measure(
            &tools.gpuheat,
            &tools.many_draws,
            scratch,
            Duration::from_secs(opts.timeout),
        )
    })?;
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&result))?);
    } else {
        print!("{}", to_text(&result));
    }
    Ok(())
}
