//! `gpuheat`: capture where each frame's GPU time goes, and report it.

mod agent;
mod attach;
mod checklist;
mod diff;
mod getin;
mod heatmap;
mod live;
mod open;
mod receive;
mod report;
mod run;
mod view;
mod vulkan;

use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};
use gpuheat_session::{control, CaptureMode};
use std::path::PathBuf;
use std::process::ExitCode;

/// Per-draw, per-counter GPU cost of OpenGL / OpenGL ES programs.
#[derive(Parser)]
#[command(name = "gpuheat", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How much the agent measures: the session's [`CaptureMode`] as a command-line value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode(pub CaptureMode);

impl Mode {
    /// Timeline plus serialized per-draw timing (the default).
    pub const FULL: Mode = Mode(CaptureMode::Full);
}

impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &[Mode(CaptureMode::Timeline), Mode(CaptureMode::Full)]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            CaptureMode::Timeline => "Calls and pipelined GPU timestamps only: cheap, no stalls",
            CaptureMode::Full => {
                "Timeline plus serialized per-draw timing, pipeline statistics and samples passed"
            }
        };
        Some(PossibleValue::new(control::mode_word(self.0)).help(help))
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(control::mode_word(self.0))
    }
}

/// How full mode times each work call: the contract's [`control::Timing`] as a command-line
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingArg(pub control::Timing);

impl ValueEnum for TimingArg {
    fn value_variants<'a>() -> &'a [Self] {
        use control::Timing;
        &[
            TimingArg(Timing::Auto),
            TimingArg(Timing::Isolated),
            TimingArg(Timing::Deferred),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        use control::Timing;
        let help = match self.0 {
            Timing::Auto => {
                "Deferred where the GPU's timestamps bracket a call's own work (immediate-mode \
                 GPUs), isolated elsewhere (software rasterizers, tile-based GPUs)"
            }
            Timing::Isolated => {
                "Finish the pipeline before and after each work call: exact everywhere, one \
                 wait for the GPU per call"
            }
            Timing::Deferred => {
                "Timestamp pairs and queries read once at each frame's end: no wait per call \
                 (counts stay exact; times are the renderer's timestamps)"
            }
        };
        Some(PossibleValue::new(control::timing_word(self.0)).help(help))
    }
}

impl std::fmt::Display for TimingArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(control::timing_word(self.0))
    }
}

#[derive(Subcommand)]
enum Command {
    /// Start a program with the agent preloaded and capture frames.
    Run(run::RunArgs),
    /// Get into a running program, capture frames, and leave it running.
    Attach(attach::AttachArgs),
    /// Print per-frame totals and the costliest draws of a session.
    Report(report::ReportArgs),
    /// The performance checklist: what each finding costs and how to fix it; `--fail-on`
    /// gives CI an exit status.
    Checklist(checklist::ChecklistArgs),
    /// Compare two sessions draw by draw: what got faster, what got slower, beyond noise.
    Diff(diff::DiffArgs),
    /// Render a frame's thermal painting (per-pixel cost map) to a PNG.
    Heatmap(heatmap::HeatmapArgs),
    /// Open the viewer: heat map, 3D meshes and heat surface linked to draws, calls, source
    /// lines and findings (or render it to a PNG with --screenshot).
    View(view::ViewArgs),
    /// Print the environment that starts a Vulkan program with gpuheat's layer in, dormant
    /// until `gpuheat attach` (`eval "$(gpuheat vulkan-env)"`).
    VulkanEnv(vulkan::VulkanEnvArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Attach(args) => attach::attach(args),
        Command::VulkanEnv(args) => vulkan::vulkan_env(args),

        Command::Report(args) => report::report(args),
        Command::Checklist(args) => checklist::checklist(args),
        Command::Diff(args) => diff::run(args),
        Command::Heatmap(args) => heatmap::heatmap(args),
        Command::View(args) => {
            gpuheat_viz::quiet_wayland_probe();
            view::view(args)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // One line: the chain of contexts, outermost first.
            let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("gpuheat: error: {}", msg.join(": "));
            ExitCode::FAILURE
        }
    }
}

/// A path for messages, relative when that is shorter.
pub fn shown(path: &std::path::Path) -> String {
    path.display().to_string()
}

/// Default session path for a program: `<program name>.gpuheat` in the current directory.
pub fn default_output(program: &str) -> PathBuf {
    let name = std::path::Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    PathBuf::from(format!("{name}.gpuheat"))
}
