//! `gpuheat attach PID|--name NAME`: get into a program that is already running, capture,
//! detach. The program keeps running throughout.

use crate::getin::{alive, find_by_name, get_in, process_name, process_state, Hooked};
use crate::receive::{self, Endpoint};
use crate::{agent, shown, Mode, TimingArg};
use anyhow::{bail, Context, Result};
use clap::Args;
use gpuheat_session::control::{self, Command, Timing, Trigger, TriggerMetric, Watch};
use gpuheat_session::{AttachInfo, ChunkKind, EndReason, HookSummary, Record, TriggerHit};
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
    /// Frames to capture (with --trigger: after each trigger, in full mode).
    #[arg(long, short = 'n', default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Watch every frame in timeline mode instead of capturing now; a frame that crosses
    /// this rule is kept with the frames before it, and the next --frames frames are captured
    /// in full mode. RULE: frame-ms>MS (the frame's wall time) or gpu-ms>MS (its work calls'
    /// GPU time); repeat for several (any one triggers).
    #[arg(long = "trigger", value_name = "RULE", value_parser = parse_trigger)]
    triggers: Vec<Trigger>,
    /// With --trigger: watched frames kept before a triggering one.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=10_000), requires = "triggers")]
    ring: u32,
    /// Open the live view instead of capturing: the program's frames stream into the viewer
    /// (as `gpuheat view --live PID`); -o names where its captures go.
    #[arg(long, conflicts_with_all = ["triggers", "mode", "heat", "frames"])]
    live: bool,
    /// With --trigger: end after this many triggers.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), requires = "triggers")]
    max_triggers: u32,
    /// What to measure (see `gpuheat run --help`).
    #[arg(long, value_enum, default_value_t = Mode::FULL)]
    mode: Mode,
    /// Paint each captured frame's heat and overdraw maps on the GPU (needs `--mode full`).
    #[arg(long)]
    heat: bool,
    /// How `--mode full` times each draw (see `gpuheat run --help`).
    #[arg(long, value_enum, default_value_t = TimingArg(Timing::Auto))]
    timing: TimingArg,
    /// Session file to write [default: <name>-<pid>.gpuheat].
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Seconds to wait for the program to swap: to get in at a frame boundary, and then for
    /// the captured frames (gpuheat gives up when nothing arrives for this long). With
    /// --trigger: how long to watch [default: 300].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
}

/// How long a capture waits for the program by default, and how long a watch lasts.
const CAPTURE_TIMEOUT_S: u64 = 10;
const WATCH_TIMEOUT_S: u64 = 300;

fn parse_trigger(rule: &str) -> Result<Trigger, String> {
    Trigger::parse(rule).ok_or_else(|| {
        let metrics: Vec<&str> = control::TriggerMetric::ALL
            .iter()
            .map(|m| m.word())
            .collect();
        format!(
            "`{rule}` is not a trigger rule: write METRIC>MS, METRIC one of {}, MS a positive number of milliseconds (e.g. frame-ms>20)",
            metrics.join(", ")
        )
    })
}

/// How long a stopped capture may take to deliver its last frame.
const STOP_GRACE: Duration = Duration::from_secs(3);

pub fn attach(args: AttachArgs) -> Result<ExitCode> {
    if args.heat && args.mode != Mode::FULL {
        bail!("--heat needs --mode full (heat spreads each draw's serialized time)");
    }
    if args.timing.0 != Timing::Auto && args.mode != Mode::FULL {
        bail!(
            "--timing {} needs --mode full (timeline mode never waits)",
            args.timing
        );
    }
    if args.triggers.len() > control::MAX_TRIGGERS {
        bail!(
            "at most {} --trigger rules (any one of them triggers)",
            control::MAX_TRIGGERS
        );
    }
    if args.live {
        let pid = match (args.pid, &args.name) {
            (Some(pid), _) => pid,
            (None, Some(name)) => find_by_name(name)?,
            (None, None) => unreachable!("clap requires one"),
        };
        return crate::live::live(crate::live::LiveRequest {
            pid,
            output: args.output.clone(),
            timeout: Duration::from_secs(args.timeout.unwrap_or(CAPTURE_TIMEOUT_S)),
            screenshot: None,
            // The Heat tab, inferno, linear, 1280x800.
            opts: gpuheat_viz::ViewOptions::default(),
        });
    }
    let watching = !args.triggers.is_empty();
    if watching && args.mode != Mode::FULL {
        bail!("--trigger captures the frames after a trigger in full mode: leave out --mode timeline (watched frames are timeline already)");
    }
    let start = Instant::now();
    let pid = match (args.pid, &args.name) {
        (Some(pid), _) => pid,
        (None, Some(name)) => find_by_name(name)?,
        (None, None) => unreachable!("clap requires one"),
    };
    let agent = agent::agent_library()?;
    let way = crate::getin::check(pid, &agent)?;
    let name = process_name(pid).unwrap_or_else(|| format!("pid{pid}"));
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{name}-{pid}.gpuheat")));
    let mut writer = receive::create_session(&output)?;
    let endpoint = Endpoint::new()?;
    // From here on Ctrl-C is ours: every stage below checks it and ends cleanly.
    receive::catch_ctrl_c();
    let timeout_s = args.timeout.unwrap_or(if watching {
        WATCH_TIMEOUT_S
    } else {
        CAPTURE_TIMEOUT_S
    });
    // A watch bounds the wait for a swap, and for nothing arriving, as a capture does; its own
    // length is the timeout.
    let timeout = Duration::from_secs(if watching {
        timeout_s.min(CAPTURE_TIMEOUT_S)
    } else {
        timeout_s
    });

    let capture = if watching {
        Command::Watch(Watch {
            ring: args.ring,
            frames: args.frames,
            max_triggers: args.max_triggers,
            heat: args.heat,
            timing: args.timing.0,
            rules: args.triggers.clone(),
        })
    } else {
        Command::Capture {
            frames: args.frames,
            mode: args.mode.0,
            heat: args.heat,
            timing: args.timing.0,
        }
    };
    let (injected, hooked, stream) = match get_in(pid, &way, &agent, &endpoint, timeout, &capture) {
        Ok(i) => i,
        Err(e) => {
            drop(writer);
            let _ = std::fs::remove_file(&output);
            return e.into_exit();
        }
    };
    // Commands are a few bytes, but never let a wedged agent block us on a full socket.
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    let mut control = stream.try_clone()?;
    control
        .write_all(capture.line().as_bytes())
        .context("talking to the agent")?;

    let hiccup = injected.stopped_for;
    let mut first_frame = None;
    let mut seen = Seen::default();
    let mut stop_deadline: Option<Instant> = None;
    let watch_ends = Instant::now() + Duration::from_secs(timeout_s);
    let mut hits: Vec<TriggerHit> = Vec::new();
    let mut watched = 0u64;
    let wanted = if watching {
        (args.ring + args.frames).saturating_mul(args.max_triggers)
    } else {
        args.frames
    };
    let received = receive::pump(
        stream,
        &mut writer,
        wanted,
        Some(timeout),
        &receive::Fallback {
            pid,
            mode: args.mode.0,
            frames: args.frames,
            skip: 0,
            note: "attached, but the agent started no capture: gpuheat wrote this INFO record"
                .into(),
        },
        || {
            if receive::interrupted() || (watching && Instant::now() >= watch_ends) {
                // Ctrl-C, or a watch's time is up: ask for the capture to end at the frame
                // boundary, keep what arrives.
                let deadline = *stop_deadline.get_or_insert_with(|| {
                    let _ = control.write_all(Command::Stop.line().as_bytes());
                    Instant::now() + STOP_GRACE
                });
                return Instant::now() < deadline;
            }
            alive(pid)
        },
        |w, kind, record| {
            if let Some(record) = record {
                seen.note(record);
                match record {
                    Record::Trigger(hit) => {
                        eprintln!("gpuheat: {}", trigger_line(hit));
                        hits.push(hit.clone());
                    }
                    Record::Watch(status) => watched = status.frames_watched,
                    _ => {}
                }
            }
            // A watch's first frame is the first it watched: its status says it began.
            let began = kind.is_frame() || (watching && kind == ChunkKind::WATCH);
            if began && first_frame.is_none() {
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
    // Hooks stay in the program and pass calls through from now on. A wedged agent never
    // reads this; closing the socket below detaches it all the same.
    let _ = control.write_all(Command::Detach.line().as_bytes());
    drop(control);
    writer.finish().context("finishing the session")?;

    if let Some(first) = first_frame {
        eprintln!(
            "gpuheat: attached to {name} (pid {pid}) at {} on thread {}: render thread held {:.1} ms, {} {:.0} ms after start",
            injected.safe_point,
            injected.thread,
            ms(hiccup),
            if watching { "watching from" } else { "first frame" },
            ms(first)
        );
    }
    let summary = format!(
        "{} frame{} in {} ({})",
        received.frames,
        if received.frames == 1 { "" } else { "s" },
        shown(&output),
        receive::size(received.bytes)
    );
    if watching {
        return watch_ended(
            &received,
            &hits,
            watched,
            &name,
            &output,
            timeout_s,
            args.max_triggers,
        );
    }
    match received.end.as_ref().map(|e| &e.reason) {
        Some(EndReason::Complete) => {
            eprintln!("gpuheat: captured {summary}; detached, {name} keeps running; see `gpuheat report {}`", shown(&output));
            Ok(ExitCode::SUCCESS)
        }
        Some(EndReason::Stopped) => {
            eprintln!("gpuheat: stopped; kept {summary}; detached");
            Ok(ExitCode::from(130))
        }
        Some(EndReason::Abandoned) => bail!(
            "the capture of {name} (pid {pid}) was abandoned after {} of {} frames: {}; detached, {name} {}; the session keeps what arrived: {}",
            received.frames,
            args.frames,
            received.end.as_ref().and_then(|e| e.abandoned_because()).unwrap_or_default(),
            left_as(pid),
            shown(&output)
        ),
        Some(EndReason::TimedOut) => bail!(
            "no frame arrived from {name} (pid {pid}) for {} s after {} of {} frames ({}); detached, {name} {}; the session keeps what arrived: {}",
            timeout_s,
            received.frames,
            args.frames,
            seen.describe(&hooked),
            left_as(pid),
            shown(&output)
        ),
        _ => bail!(
            "pid {pid} exited after {} of {} frames; the session keeps them: {}",
            received.frames,
            args.frames,
            shown(&output)
        ),
    }
}

/// "trigger 1: frame 4211 measured 48.2 ms (frame-ms>20): kept watched frames 4182-4211,
/// capturing frames 4212-4214 in full mode". A GPU time "reached" its value: the frame's times
/// that had landed when it fired, its later ones still on the GPU.
fn trigger_line(hit: &TriggerHit) -> String {
    let gpu = Trigger::parse(&hit.rule).is_some_and(|r| r.metric == TriggerMetric::GpuMs);
    format!(
        "trigger {}: frame {} {} {:.1} ms ({}): kept watched frames {}-{}, capturing frames {}-{} in full mode",
        hit.number,
        hit.frame,
        if gpu { "reached" } else { "measured" },
        hit.value_ns as f64 / 1e6,
        hit.rule,
        hit.kept_first,
        hit.kept_last,
        hit.full_first,
        hit.full_first + u64::from(hit.full_frames).saturating_sub(1),
    )
}

/// How a watch ended: its summary line and exit status.
fn watch_ended(
    received: &receive::Received,
    hits: &[TriggerHit],
    watched: u64,
    name: &str,
    output: &std::path::Path,
    timeout_s: u64,
    max_triggers: u32,
) -> Result<ExitCode> {
    let kept = format!(
        "watched {watched} frames, {} trigger{}; kept {} frames in {} ({})",
        hits.len(),
        if hits.len() == 1 { "" } else { "s" },
        received.frames,
        shown(output),
        receive::size(received.bytes)
    );
    let reason = received.end.as_ref().map(|e| &e.reason);
    match reason {
        Some(EndReason::Complete) | Some(EndReason::Stopped) if !receive::interrupted() => {
            let why = if hits.len() as u32 >= max_triggers {
                "all triggers taken".to_string()
            } else {
                format!("{timeout_s} s up")
            };
            eprintln!(
                "gpuheat: {why}: {kept}; detached, {name} keeps running{}",
                if hits.is_empty() {
                    String::new()
                } else {
                    format!("; see `gpuheat report {}`", shown(output))
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(EndReason::Complete) | Some(EndReason::Stopped) => {
            eprintln!("gpuheat: stopped: {kept}; detached");
            Ok(ExitCode::from(130))
        }
        Some(EndReason::TimedOut) => bail!(
            "{name} stopped rendering for {CAPTURE_TIMEOUT_S} s while being watched: {kept}; detached"
        ),
        _ => bail!("{name} exited while being watched: {kept}"),
    }
}

/// What the agent told about itself before the stream went quiet.
#[derive(Default)]
struct Seen {
    /// The agent's notes (its INFO record: how it hooked, how frames are delimited).
    notes: Vec<String>,
    /// Renderers of the contexts it saw.
    renderers: Vec<String>,
    /// What it hooked (its HOOK record, sent right after it connected).
    hooks: Option<HookSummary>,
}

impl Seen {
    fn note(&mut self, record: &Record) {
        match record {
            Record::Info(info) => self.notes.extend(info.notes.iter().cloned()),
            Record::Hooks(h) => self.hooks = Some(h.clone()),
            Record::Context(c) if !self.renderers.contains(&c.renderer) => {
                self.renderers.push(c.renderer.clone())
            }
            _ => {}
        }
    }

    /// "hooked: …; renderer …", from the agent's own words when it sent them.
    fn describe(&self, hooked: &Hooked) -> String {
        let mut parts = vec![hooked.to_string()];
        match &self.hooks {
            Some(h) => {
                let list = |v: &[String]| {
                    if v.is_empty() {
                        "none".to_string()
                    } else {
                        v.join(", ")
                    }
                };
                parts.push(format!(
                    "the agent hooked swap entry points {}, {} GOT slots in {} modules, {} dispatch entries, inline {}",
                    list(&h.swap_entry_points),
                    h.got_slots,
                    h.modules,
                    h.dispatch_entries,
                    list(&h.inline)
                ));
            }
            // An agent without the HOOK record says it in its INFO notes, if at all.
            None => parts.extend(
                self.notes
                    .iter()
                    .filter(|n| n.starts_with("live hooks"))
                    .cloned(),
            ),
        }
        if !self.renderers.is_empty() {
            parts.push(format!("renderer {}", self.renderers.join(", ")));
        }
        parts.join("; ")
    }
}

/// "keeps running", or "is stopped (SIGSTOP)" for a program in a group stop.
fn left_as(pid: i32) -> String {
    match process_state(pid) {
        Some('T') | Some('t') => format!("is stopped (state T; `kill -CONT {pid}` resumes it)"),
        _ => "keeps running".to_string(),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_line_names_what_was_hooked() {
        let hooked = Hooked {
            safe_point: "glXSwapBuffers".into(),
            libraries: vec!["libGLX.so.0".into(), "libGL.so.1".into()],
        };
        let mut seen = Seen::default();
        assert_eq!(
            seen.describe(&hooked),
            "got in at glXSwapBuffers; the program maps libGLX.so.0, libGL.so.1"
        );
        seen.note(&Record::Hooks(HookSummary {
            got_slots: 12,
            modules: 30,
            dispatch_entries: 0,
            inline: vec![],
            swap_entry_points: vec!["glXSwapBuffers".into()],
            notes: vec![],
        }));
        let text = seen.describe(&hooked);
        assert!(
            text.ends_with("the agent hooked swap entry points glXSwapBuffers, 12 GOT slots in 30 modules, 0 dispatch entries, inline none"),
            "{text}"
        );
        assert!(!text.contains('\n'));
    }
}
