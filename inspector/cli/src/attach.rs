//! `gpuheat attach PID|--name NAME`: get into a program that is already running, capture,
//! detach. The program keeps running throughout.

use crate::receive::{self, Endpoint};
use crate::{agent, shown, Mode};
use anyhow::{bail, Context, Result};
use clap::Args;
use gpuheat_session::{AttachInfo, EndReason, Record};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct AttachArgs {
    /// Process id of the running program.
    #[arg(required_unless_present = "name")]
    pid: Option<i32>,
    /// Attach to the process with this exact name (its /proc/PID/comm or executable name).
    #[arg(long, conflicts_with = "pid")]
    name: Option<String>,
    /// Frames to capture.
    #[arg(long, short = 'n', default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// What to measure (see `gpuheat run --help`).
    #[arg(long, value_enum, default_value_t = Mode::Full)]
    mode: Mode,
    /// Paint each captured frame's heat and overdraw maps on the GPU (needs `--mode full`).
    #[arg(long)]
    heat: bool,
    /// Session file to write [default: <name>-<pid>.gpuheat].
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Seconds to wait for the program to reach a frame boundary (a swap).
    #[arg(long, default_value_t = 10)]
    timeout: u64,
}

/// Result codes of the agent's `gpuheat_agent_attach` (probe/agent/src/attach.rs).
const OK: i32 = 0;
const VERSION_MISMATCH: i32 = 2;
const ALREADY_ATTACHED: i32 = 3;
/// How long a stopped capture may take to deliver its last frame.
const STOP_GRACE: Duration = Duration::from_secs(3);

pub fn attach(args: AttachArgs) -> Result<ExitCode> {
    if args.heat && !matches!(args.mode, Mode::Full) {
        bail!("--heat needs --mode full (heat spreads each draw's serialized time)");
    }
    let start = Instant::now();
    let pid = match (args.pid, &args.name) {
        (Some(pid), _) => pid,
        (None, Some(name)) => find_by_name(name)?,
        (None, None) => unreachable!("clap requires one"),
    };
    gpuheat_inject::check(pid)?;
    let name = process_name(pid).unwrap_or_else(|| format!("pid{pid}"));
    let agent = agent::agent_library()?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{name}-{pid}.gpuheat")));
    let mut writer = receive::create_session(&output)?;
    let endpoint = Endpoint::new()?;
    receive::catch_ctrl_c();

    let arg = format!(
        "{}\n{}",
        endpoint.socket.display(),
        env!("CARGO_PKG_VERSION")
    );
    let injected = gpuheat_inject::inject(&gpuheat_inject::Request {
        pid,
        library: &agent,
        entry: "gpuheat_agent_attach",
        arg: &arg,
        timeout: Duration::from_secs(args.timeout),
    });
    let injected = match injected {
        Ok(i) => i,
        Err(e) => {
            let _ = std::fs::remove_file(&output);
            return Err(e.into());
        }
    };
    match injected.entry_result {
        OK => {}
        VERSION_MISMATCH => {
            let _ = std::fs::remove_file(&output);
            bail!(
                "pid {pid} already holds a gpuheat agent of another version than this gpuheat ({}); restart the program to load this one",
                env!("CARGO_PKG_VERSION")
            )
        }
        ALREADY_ATTACHED => {
            let _ = std::fs::remove_file(&output);
            bail!("pid {pid} is already being captured by another gpuheat")
        }
        code => {
            let _ = std::fs::remove_file(&output);
            bail!("the agent could not start in pid {pid} (code {code})")
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let stream = endpoint.accept(|| {
        if !alive(pid) {
            bail!("pid {pid} exited during the attach");
        }
        if Instant::now() > deadline {
            bail!("the agent in pid {pid} did not connect back");
        }
        Ok(())
    })?;
    let mut control = stream.try_clone()?;
    let mode = match args.mode {
        Mode::Full => "full",
        Mode::Timeline => "timeline",
    };
    let heat = if args.heat { " heat" } else { "" };
    writeln!(control, "capture {} {mode}{heat}", args.frames).context("talking to the agent")?;

    let hiccup = injected.stopped_for;
    let mut first_frame = None;
    let mut stop_deadline: Option<Instant> = None;
    let received = receive::pump(
        stream,
        &mut writer,
        args.frames,
        || {
            if receive::interrupted() {
                // Ctrl-C: ask for the capture to end at the frame boundary, keep what arrives.
                let deadline = *stop_deadline.get_or_insert_with(|| {
                    let _ = writeln!(control, "stop");
                    Instant::now() + STOP_GRACE
                });
                return Instant::now() < deadline;
            }
            alive(pid)
        },
        |w| {
            if first_frame.is_none() {
                let latency = start.elapsed();
                first_frame = Some(latency);
                w.append(&Record::Attach(AttachInfo {
                    thread: injected.thread,
                    safe_point: injected.safe_point.clone(),
                    latency_ns: latency.as_nanos() as u64,
                    hiccup_ns: hiccup.as_nanos() as u64,
                    injection_ns: injected.total.as_nanos() as u64,
                }))?;
            }
            Ok(())
        },
    )?;
    // Hooks stay in the program and pass calls through from now on.
    let _ = writeln!(control, "detach");
    writer.finish().context("finishing the session")?;

    eprintln!(
        "gpuheat: attached to {name} (pid {pid}) at {} on thread {}: render thread held {:.1} ms, first frame {:.0} ms after start",
        injected.safe_point,
        injected.thread,
        ms(hiccup),
        first_frame.map(ms).unwrap_or(f64::NAN)
    );
    let summary = format!(
        "{} frame{} in {} ({})",
        received.frames,
        if received.frames == 1 { "" } else { "s" },
        shown(&output),
        receive::size(received.bytes)
    );
    match received.end.as_ref().map(|e| &e.reason) {
        Some(EndReason::Complete) => {
            eprintln!("gpuheat: captured {summary}; detached, {name} keeps running; see `gpuheat report {}`", shown(&output));
            Ok(ExitCode::SUCCESS)
        }
        Some(EndReason::Stopped) => {
            eprintln!("gpuheat: stopped; kept {summary}; detached");
            Ok(ExitCode::from(130))
        }
        _ => bail!(
            "pid {pid} exited after {} of {} frames; the session keeps them: {}",
            received.frames,
            args.frames,
            shown(&output)
        ),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn alive(pid: i32) -> bool {
    // A zombie is as good as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

fn process_name(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The one process whose comm or executable file name is exactly `name`.
fn find_by_name(name: &str) -> Result<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let comm = process_name(pid);
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if comm.as_deref() == Some(name) || exe.as_deref() == Some(name) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            found.push((pid, cmdline));
        }
    }
    match found.len() {
        0 => bail!("no process named `{name}` (gpuheat attach PID takes a process id)"),
        1 => Ok(found[0].0),
        _ => {
            let list: Vec<String> = found.iter().map(|(p, c)| format!("{p} ({c})")).collect();
            bail!(
                "{} processes are named `{name}`: {}; pick one with gpuheat attach PID",
                found.len(),
                list.join(", ")
            )
        }
    }
}
