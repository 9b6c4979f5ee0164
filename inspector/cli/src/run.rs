//! `gpuheat run -- APP ARGS`: launch mode. The agent is preloaded, counts the program's frames,
//! captures the requested ones and streams them back; then the program is ended (unless
//! `--keep-running`).

use crate::receive::{self, Endpoint};
use crate::{agent, default_output, shown, Mode, TimingArg};
use anyhow::{bail, Context, Result};
use clap::Args;
use gpuheat_session::control::{LaunchRequest, Timing};
use gpuheat_session::EndReason;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct RunArgs {
    /// Frames to capture.
    #[arg(long, short = 'n', default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Frames to let pass before capturing (the first frame usually includes the set-up).
    #[arg(long, default_value_t = 1)]
    skip: u32,
    /// What to measure: `full` isolates and times each draw (slow, exact); `timeline` records
    /// calls and pipelined GPU timestamps only (cheap).
    #[arg(long, value_enum, default_value_t = Mode::FULL)]
    mode: Mode,
    /// Session file to write [default: <program>.gpuheat].
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Leave the program running after the capture instead of ending it.
    #[arg(long)]
    keep_running: bool,
    /// Paint each captured frame's heat and overdraw maps on the GPU (needs `--mode full`);
    /// see `gpuheat heatmap`.
    #[arg(long)]
    heat: bool,
    /// How `--mode full` times each draw (heat always isolates).
    #[arg(long, value_enum, default_value_t = TimingArg(Timing::Auto))]
    timing: TimingArg,
    /// Seconds to wait for the program's first GL call before giving up.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    command: Vec<String>,
}

/// How long a program gets to exit after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let agent = agent::agent_library()?;
    let program = &args.command[0];
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(program));
    let mut writer = receive::create_session(&output)?;
    let endpoint = Endpoint::new()?;

    let mut preload = agent.display().to_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload = format!("{preload}:{}", old.to_string_lossy());
    }
    if args.heat && args.mode != Mode::FULL {
        bail!("--heat needs --mode full (heat spreads each draw's serialized time)");
    }
    if args.timing.0 != Timing::Auto && args.mode != Mode::FULL {
        bail!(
            "--timing {} needs --mode full (timeline mode never waits)",
            args.timing
        );
    }
    let request = LaunchRequest {
        socket: endpoint.socket.to_string_lossy().into_owned(),
        frames: args.frames,
        skip: args.skip,
        mode: args.mode.0,
        heat: args.heat,
        timing: args.timing.0,
    };
    let mut child = Command::new(program)
        .args(&args.command[1..])
        .env("LD_PRELOAD", preload)
        .envs(crate::vulkan::layer_env(&agent)?)
        .envs(request.to_env())
        .spawn()
        .with_context(|| format!("cannot start `{program}`"))?;
    receive::catch_ctrl_c();

    let deadline = Instant::now() + Duration::from_secs(args.timeout);
    let stream = endpoint.accept(|| {
        if let Some(status) = child.try_wait()? {
            bail!(
                "`{program}` {} before making any GL, GLES, EGL or Vulkan call (does it draw with GL or Vulkan?)",
                describe(status)
            );
        }
        if receive::interrupted() {
            bail!("interrupted before `{program}` made any GL call");
        }
        if Instant::now() > deadline {
            bail!(
                "`{program}` made no GL, GLES, EGL or Vulkan call within {} s (raise --timeout if it starts slowly)",
                args.timeout
            );
        }
        Ok(())
    });
    let stream = match stream {
        Ok(s) => s,
        Err(e) => {
            end_program(&mut child);
            let _ = std::fs::remove_file(&output);
            return Err(e);
        }
    };

    let mut exit_status = None;
    let received = receive::pump(
        stream,
        &mut writer,
        args.frames,
        None,
        &receive::Fallback {
            pid: child.id() as i32,
            mode: args.mode.0,
            frames: args.frames,
            skip: args.skip,
            note: "the agent started no capture: gpuheat wrote this INFO record".into(),
        },
        || {
            if exit_status.is_none() {
                exit_status = child.try_wait().ok().flatten();
            }
            exit_status.is_none() && !receive::interrupted()
        },
        |_, _, _| Ok(()),
    )?;
    writer.finish().context("finishing the session")?;

    let complete = matches!(
        received.end.as_ref().map(|e| &e.reason),
        Some(EndReason::Complete)
    );
    if !args.keep_running || !complete {
        end_program(&mut child);
    } else {
        eprintln!("gpuheat: `{program}` (pid {}) keeps running", child.id());
    }
    let summary = format!(
        "{} frame{} in {} ({})",
        received.frames,
        if received.frames == 1 { "" } else { "s" },
        shown(&output),
        receive::size(received.bytes)
    );
    if complete {
        eprintln!(
            "gpuheat: captured {summary}; see `gpuheat report {}`",
            shown(&output)
        );
        // Keep a --keep-running program's output flowing after we exit.
        return Ok(ExitCode::SUCCESS);
    }
    if receive::interrupted() {
        eprintln!("gpuheat: stopped; kept {summary}");
        return Ok(ExitCode::from(130));
    }
    if let Some(why) = received.end.as_ref().and_then(|e| e.abandoned_because()) {
        bail!("the capture of `{program}` was abandoned after {summary}: {why}");
    }
    let status = exit_status.or_else(|| child.try_wait().ok().flatten());
    let how = status
        .map(describe)
        .unwrap_or_else(|| "stopped sending".into());
    bail!(
        "`{program}` {how} after {} of {} frames; the session keeps them: {}",
        received.frames,
        args.frames,
        shown(&output)
    )
}

/// "exited with status 1", "was killed by signal 9".
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "exited".into(),
    }
}

/// SIGTERM, then SIGKILL after a grace period; always reaps.
fn end_program(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
