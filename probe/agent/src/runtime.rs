//! The capture's life: the connection to the CLI, counting frames, starting and ending
//! captures on request, detaching.
//!
//! One connection at a time. In launch mode it is opened from the environment the first time
//! any entry point is resolved and asks for one capture; in attach mode `gpuheat attach`
//! injects a call to [`crate::attach`], which opens it, and then sends commands (see
//! [`Command`]). When the CLI goes away the agent goes dormant: hooks stay in place and pass
//! calls straight through.

use crate::clock::monotonic_ns;
use crate::config::Config;
use crate::contexts;
use crate::hook::{self, RawCall, RECORDING};
use crate::writer::{Msg, Writer};
use gpuheat_session::{CaptureMode, EndInfo, EndReason, Module, ModuleMap, Record, SessionInfo};
use std::io::BufRead;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::Duration;

static INIT: Once = Once::new();
static AGENT: Mutex<Option<Arc<Agent>>> = Mutex::new(None);

/// Swaps seen since the agent was loaded.
static SWAPS: AtomicU64 = AtomicU64::new(0);
/// Frame number of the frame being recorded.
static FRAME: AtomicU64 = AtomicU64::new(0);
/// Order of the next call within the frame being recorded, across threads.
static CALL_SEQ: AtomicU32 = AtomicU32::new(0);
/// Mode of the capture in progress.
static FULL_MODE: AtomicBool = AtomicBool::new(false);
/// The capture in progress paints heat maps (full mode with `heat`).
static HEAT: AtomicBool = AtomicBool::new(false);
/// The capture in progress records each draw's post-transform positions (full mode, with a
/// non-zero vertex budget).
static GEOMETRY: AtomicBool = AtomicBool::new(false);

/// Longest the program's exit, or a detach, waits for queued chunks to reach the CLI.
const DRAIN: Duration = Duration::from_secs(3);

/// A capture the CLI asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub frames: u32,
    pub mode: CaptureMode,
    /// Paint heat maps of the captured frames (full mode only).
    pub heat: bool,
    /// Start at the first swap with `SWAPS >= start_after`.
    pub start_after: u64,
}

/// Commands the CLI sends, one per line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// `capture FRAMES timeline|full [heat]`: capture from the next frame on; `heat` (full
    /// mode only) paints each captured frame's heat map.
    Capture {
        frames: u32,
        mode: CaptureMode,
        heat: bool,
    },
    /// `stop`: end the capture at the end of the current frame.
    Stop,
    /// `detach`: stop, send what is queued, close the connection, go dormant.
    Detach,
}

impl Command {
    pub fn parse(line: &str) -> Option<Command> {
        let mut words = line.split_whitespace();
        match words.next()? {
            "capture" => {
                let frames = words.next()?.parse().ok().filter(|&n| n > 0)?;
                let mode = match words.next()? {
                    "timeline" => CaptureMode::Timeline,
                    "full" => CaptureMode::Full,
                    _ => return None,
                };
                let heat = match words.next() {
                    None => false,
                    Some("heat") if mode == CaptureMode::Full => true,
                    Some(_) => return None,
                };
                if words.next().is_some() {
                    return None;
                }
                Some(Command::Capture { frames, mode, heat })
            }
            "stop" => Some(Command::Stop),
            "detach" => Some(Command::Detach),
            _ => None,
        }
    }
}

/// What a connection adds to the session's INFO record.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub skip: u32,
    pub notes: Vec<String>,
}

struct Agent {
    writer: Writer,
    state: Mutex<State>,
    origin: Origin,
}

#[derive(Default)]
struct State {
    request: Option<Request>,
    active: Option<Active>,
    stop: bool,
    detach: bool,
    info_sent: bool,
}

struct Active {
    request: Request,
    captured: u32,
    frame_begin: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn current() -> Option<Arc<Agent>> {
    lock(&AGENT).clone()
}

/// Launch mode: connects to the CLI named in the environment the first time any entry point
/// is resolved; a no-op without one.
pub fn init() {
    INIT.call_once(|| {
        let _ = std::panic::catch_unwind(|| {
            let Some(config) = Config::from_env() else {
                return;
            };
            let Ok(stream) = UnixStream::connect(&config.socket) else {
                return;
            };
            let request = Request {
                frames: config.frames,
                mode: config.mode,
                heat: config.heat && config.mode == CaptureMode::Full,
                start_after: u64::from(config.skip),
            };
            let origin = Origin {
                skip: config.skip,
                notes: vec!["launched with the agent preloaded".into()],
            };
            if connect(stream, origin, Some(request)).is_ok() && config.skip == 0 {
                // Nothing to wait for: the frame in progress is the first captured one.
                if let Some(agent) = current() {
                    let mut st = lock(&agent.state);
                    st.request = None;
                    start_capture(&agent, &mut st, request, false);
                }
            }
        });
    });
}

/// Whether a CLI is connected.
pub fn connected() -> bool {
    current().is_some_and(|a| !a.writer.broken())
}

/// Takes over `stream` as the connection to the CLI and starts listening for its commands.
pub fn connect(
    stream: UnixStream,
    origin: Origin,
    request: Option<Request>,
) -> std::io::Result<()> {
    let commands = stream.try_clone()?;
    let writer = Writer::start(stream)?;
    let agent = Arc::new(Agent {
        writer,
        state: Mutex::new(State {
            request,
            ..State::default()
        }),
        origin,
    });
    *lock(&AGENT) = Some(agent.clone());
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(drain_at_exit) };
    });
    std::thread::Builder::new()
        .name("gpuheat-control".into())
        .spawn(move || listen(commands, &agent))?;
    Ok(())
}

/// Runs at the program's exit: frames captured just before a normal exit are still sent.
extern "C" fn drain_at_exit() {
    if let Some(agent) = current() {
        agent.writer.drain(DRAIN);
    }
}

/// The control thread: applies the CLI's commands until it disconnects.
fn listen(stream: UnixStream, agent: &Arc<Agent>) {
    for line in std::io::BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        match Command::parse(&line) {
            Some(Command::Capture { frames, mode, heat }) => {
                let mut st = lock(&agent.state);
                if st.active.is_none() {
                    st.stop = false;
                    st.request = Some(Request {
                        frames,
                        mode,
                        heat,
                        start_after: SWAPS.load(Relaxed) + 1,
                    });
                }
            }
            Some(Command::Stop) => lock(&agent.state).stop = true,
            Some(Command::Detach) => {
                let capturing = {
                    let mut st = lock(&agent.state);
                    st.detach = true;
                    st.stop = true;
                    st.active.is_some()
                };
                if !capturing {
                    detach(agent);
                    return;
                }
                // The capture ends at the next swap, which detaches.
            }
            None => {}
        }
    }
    // The CLI is gone: whatever was being captured has nowhere to go.
    RECORDING.store(false, Relaxed);
    detach(agent);
}

/// Sends what is queued and drops the connection; hooks stay and pass calls through.
fn detach(agent: &Arc<Agent>) {
    RECORDING.store(false, Relaxed);
    agent.writer.drain(DRAIN);
    let mut slot = lock(&AGENT);
    if slot.as_ref().is_some_and(|a| Arc::ptr_eq(a, agent)) {
        *slot = None;
    }
}

/// (frame, order within frame) of the call being recorded.
pub fn next_call() -> (u64, u32) {
    (FRAME.load(Relaxed), CALL_SEQ.fetch_add(1, Relaxed))
}

/// Passes a thread's buffered calls to the writer.
pub(crate) fn hand_over(frame: u64, calls: Vec<RawCall>) {
    if let Some(agent) = current() {
        agent.writer.send(Msg::Calls { frame, calls });
    }
}

/// Sends a record to the CLI.
pub(crate) fn send_record(record: Record) {
    if let Some(agent) = current() {
        agent.writer.send(Msg::Record(record));
    }
}

/// The mode of the capture in progress.
pub(crate) fn mode() -> CaptureMode {
    if FULL_MODE.load(Relaxed) {
        CaptureMode::Full
    } else {
        CaptureMode::Timeline
    }
}

/// Whether the capture in progress paints heat maps.
pub(crate) fn heat() -> bool {
    HEAT.load(Relaxed)
}

/// Whether the capture in progress records geometry.
pub(crate) fn geometry() -> bool {
    GEOMETRY.load(Relaxed)
}

/// Before the swap that ends a captured frame: its heat map (or why there is none).
pub(crate) fn heat_frame_end(ctx: u64) {
    let record = contexts::heat_frame_end(ctx, FRAME.load(Relaxed));
    send_record(record);
}

fn start_capture(agent: &Agent, st: &mut State, request: Request, swap_ok: bool) {
    let now = monotonic_ns();
    if !st.info_sent {
        st.info_sent = true;
        let info = SessionInfo {
            agent_version: env!("CARGO_PKG_VERSION").to_string(),
            pid: std::process::id(),
            exe: std::fs::read_link("/proc/self/exe")
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            args: std::env::args().collect(),
            mode: request.mode,
            skip: agent.origin.skip,
            frames_requested: request.frames,
            clock_origin_ns: now,
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            notes: agent.origin.notes.clone(),
        };
        agent.writer.send(Msg::Origin(now));
        agent.writer.send(Msg::Record(Record::Info(info)));
        agent.writer.send(Msg::FunctionTable);
        agent.writer.send(Msg::Record(Record::Modules(modules())));
    }
    FULL_MODE.store(request.mode == CaptureMode::Full, Relaxed);
    HEAT.store(request.heat && request.mode == CaptureMode::Full, Relaxed);
    GEOMETRY.store(
        request.mode == CaptureMode::Full && crate::config::geometry_budget() > 0,
        Relaxed,
    );
    FRAME.store(SWAPS.load(Relaxed), Relaxed);
    CALL_SEQ.store(0, Relaxed);
    // Measure the context's counters now, not inside the first captured draw, and record
    // what the program bound before the first captured call.
    let ctx = hook::current_context();
    contexts::prepare(ctx);
    // eglQuerySurface resets the thread's EGL error: only after a swap that succeeded.
    if let Some(state) = contexts::snapshot(ctx, SWAPS.load(Relaxed), swap_ok) {
        agent.writer.send(Msg::Record(Record::State(state)));
    }
    st.active = Some(Active {
        request,
        captured: 0,
        frame_begin: monotonic_ns(),
    });
    RECORDING.store(true, Relaxed);
}

/// Called after every swap on the swapping thread; `swap_ok` is what the swap returned.
pub fn frame_ended(swap_ok: bool) {
    SWAPS.fetch_add(1, Relaxed);
    let Some(agent) = current() else {
        return;
    };
    let mut guard = lock(&agent.state);
    let st = &mut *guard;
    let Some(active) = st.active.as_mut() else {
        match st.request {
            Some(r) if SWAPS.load(Relaxed) >= r.start_after => {
                st.request = None;
                start_capture(&agent, st, r, swap_ok);
            }
            _ => {}
        }
        return;
    };
    let frame = FRAME.load(Relaxed);
    active.captured += 1;
    let last = active.captured >= active.request.frames || st.stop;
    if last {
        RECORDING.store(false, Relaxed);
    }
    hook::flush_thread();
    let end = monotonic_ns();
    let begin = active.frame_begin;
    agent.writer.send(Msg::FrameEnd { frame, begin, end });
    if geometry() {
        for record in contexts::geometry_frame_end(hook::current_context(), frame) {
            agent.writer.send(Msg::Record(record));
        }
    }
    for batch in contexts::poll(hook::current_context(), last) {
        agent.writer.send(Msg::Record(Record::Pipelined(batch)));
    }
    if !last {
        FRAME.store(frame + 1, Relaxed);
        CALL_SEQ.store(0, Relaxed);
        active.frame_begin = monotonic_ns();
        return;
    }
    let complete = active.captured >= active.request.frames;
    let captured = active.captured;
    st.active = None;
    st.stop = false;
    agent.writer.send(Msg::End(EndInfo {
        reason: if complete {
            EndReason::Complete
        } else {
            EndReason::Stopped
        },
        frames_captured: u64::from(captured),
        dropped_calls: 0,
        detail: None,
    }));
    if st.detach {
        drop(guard);
        detach(&agent);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(
            Command::parse("capture 10 full"),
            Some(Command::Capture {
                frames: 10,
                mode: CaptureMode::Full,
                heat: false,
            })
        );
        assert_eq!(
            Command::parse("capture 2 full heat"),
            Some(Command::Capture {
                frames: 2,
                mode: CaptureMode::Full,
                heat: true,
            })
        );
        assert_eq!(Command::parse("capture 2 timeline heat"), None);
        assert_eq!(Command::parse("capture 2 full heat x"), None);
        assert_eq!(Command::parse("capture 0 full"), None);
        assert_eq!(Command::parse("capture 3 fast"), None);
        assert_eq!(Command::parse(" stop "), Some(Command::Stop));
        assert_eq!(Command::parse("detach"), Some(Command::Detach));
        assert_eq!(Command::parse(""), None);
    }
}
