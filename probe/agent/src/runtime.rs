//! The capture's life: connecting to the CLI, counting frames, starting and ending the capture.

use crate::clock::monotonic_ns;
use crate::config::Config;
use crate::hook::{self, RawCall, RECORDING};
use crate::writer::{Msg, Writer};
use crate::{contexts, table};
use gpuheat_session::{EndInfo, EndReason, Module, ModuleMap, Record, SessionInfo};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, Once, OnceLock};

static INIT: Once = Once::new();
static AGENT: OnceLock<Agent> = OnceLock::new();

/// Frame number of the frame being recorded.
static FRAME: AtomicU64 = AtomicU64::new(0);
/// Order of the next call within the frame being recorded, across threads.
static CALL_SEQ: AtomicU32 = AtomicU32::new(0);

struct Agent {
    config: Config,
    writer: Writer,
    frames: Mutex<Frames>,
}

/// Frame accounting, touched once per swap.
struct Frames {
    swaps: u64,
    captured: u32,
    done: bool,
    frame_begin: u64,
    origin: u64,
}

/// Connects to the CLI the first time any entry point is resolved; a no-op without one.
pub fn init() {
    INIT.call_once(|| {
        let _ = std::panic::catch_unwind(|| {
            let Some(config) = Config::from_env() else {
                return;
            };
            let Ok(writer) = Writer::connect(&config.socket) else {
                return;
            };
            let start_now = config.skip == 0;
            let agent = Agent {
                config,
                writer,
                frames: Mutex::new(Frames {
                    swaps: 0,
                    captured: 0,
                    done: false,
                    frame_begin: 0,
                    origin: 0,
                }),
            };
            let agent = AGENT.get_or_init(|| agent);
            if start_now {
                let mut f = agent.frames.lock().unwrap_or_else(|e| e.into_inner());
                start_capture(agent, &mut f);
            }
        });
    });
}

/// (frame, order within frame) of the call being recorded.
pub fn next_call() -> (u64, u32) {
    (FRAME.load(Relaxed), CALL_SEQ.fetch_add(1, Relaxed))
}

/// Passes a thread's buffered calls to the writer.
pub(crate) fn hand_over(frame: u64, calls: Vec<RawCall>) {
    if let Some(agent) = AGENT.get() {
        agent.writer.send(Msg::Calls { frame, calls });
    }
}

/// Sends a record to the CLI.
pub(crate) fn send_record(record: Record) {
    if let Some(agent) = AGENT.get() {
        agent.writer.send(Msg::Record(record));
    }
}

/// The capture mode asked for.
pub(crate) fn mode() -> gpuheat_session::CaptureMode {
    AGENT
        .get()
        .map(|a| a.config.mode)
        .unwrap_or(gpuheat_session::CaptureMode::Timeline)
}

fn start_capture(agent: &Agent, f: &mut Frames) {
    let now = monotonic_ns();
    f.origin = now;
    f.frame_begin = now;
    let info = SessionInfo {
        agent_version: env!("CARGO_PKG_VERSION").to_string(),
        pid: std::process::id(),
        exe: std::fs::read_link("/proc/self/exe")
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        args: std::env::args().collect(),
        mode: agent.config.mode,
        skip: agent.config.skip,
        frames_requested: agent.config.frames,
        clock_origin_ns: now,
        started_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        notes: Vec::new(),
    };
    agent.writer.send(Msg::Origin(now));
    agent.writer.send(Msg::Record(Record::Info(info)));
    agent
        .writer
        .send(Msg::Record(Record::Functions(table::function_table())));
    agent.writer.send(Msg::Record(Record::Modules(modules())));
    FRAME.store(f.swaps, Relaxed);
    CALL_SEQ.store(0, Relaxed);
    // Measure the context's counters now, not inside the first captured draw.
    contexts::prepare(hook::current_context());
    RECORDING.store(true, Relaxed);
}

/// Called after every swap on the swapping thread.
pub fn frame_ended() {
    let Some(agent) = AGENT.get() else { return };
    let mut f = agent.frames.lock().unwrap_or_else(|e| e.into_inner());
    f.swaps += 1;
    if f.done {
        return;
    }
    if !RECORDING.load(Relaxed) {
        if f.swaps >= u64::from(agent.config.skip) {
            start_capture(agent, &mut f);
        }
        return;
    }
    let frame = FRAME.load(Relaxed);
    let last = f.captured + 1 >= agent.config.frames;
    if last {
        RECORDING.store(false, Relaxed);
    }
    hook::flush_thread();
    let end = monotonic_ns();
    agent.writer.send(Msg::FrameEnd {
        frame,
        begin: f.frame_begin,
        end,
    });
    for batch in contexts::poll(hook::current_context(), last) {
        agent
            .writer
            .send(Msg::Record(gpuheat_session::Record::Pipelined(batch)));
    }
    f.captured += 1;
    if last {
        f.done = true;
        agent.writer.send(Msg::End(EndInfo {
            reason: EndReason::Complete,
            frames_captured: u64::from(f.captured),
            dropped_calls: 0,
            detail: None,
        }));
    } else {
        FRAME.store(frame + 1, Relaxed);
        CALL_SEQ.store(0, Relaxed);
        f.frame_begin = monotonic_ns();
    }
}

/// Executable mappings of this process, for turning call sites into module + offset.
fn modules() -> ModuleMap {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let modules = maps
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let range = parts.next()?;
            let perms = parts.next()?;
            let offset = parts.next()?;
            let path = parts.nth(2)?;
            if !perms.contains('x') || !path.starts_with('/') {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            Some(Module {
                path: path.to_string(),
                start: u64::from_str_radix(start, 16).ok()?,
                end: u64::from_str_radix(end, 16).ok()?,
                file_offset: u64::from_str_radix(offset, 16).ok()?,
            })
        })
        .collect();
    ModuleMap { modules }
}
