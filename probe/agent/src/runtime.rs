//! The capture's life: the connection to the CLI, counting frames, starting and ending
//! captures on request, detaching.
//!
//! One connection at a time. In launch mode it is opened from the environment the first time
//! the program reaches a wrapper ([`launch`]) and asks for one capture; in attach mode
//! `gpuheat attach` injects a call to the agent's attach entry, which opens it ([`connect`]),
//! and then sends commands (see [`Command`]). When the CLI goes away the agent goes dormant: hooks stay in place and pass
//! calls straight through.

use crate::capture::{self, Settings};
use crate::clock::monotonic_ns;
use crate::writer::{Msg, Writer};
use crate::{contexts, outbox, programs, recorder, uploads};
use gpuheat_session::control::{Command, LaunchRequest, Timing, TriggerMetric, Watch};
use gpuheat_session::{
    AgentFrame, AgentLoad, CaptureMode, EndInfo, EndReason, PipelinedBatch, Record, RendererQuery,
    SessionInfo, TriggerHit, WarmUp,
};
use std::io::BufRead;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Relaxed, SeqCst},
};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::Duration;

static LAUNCH: Once = Once::new();
/// Launch mode with `--skip 0`: the capture starts with the frame in progress, right after
/// the connection is made (never inside [`LAUNCH`]: starting a capture resolves entry points,
/// and resolution may be what is running the launch).
static START_NOW: AtomicBool = AtomicBool::new(false);
static AGENT: Mutex<Option<Arc<Agent>>> = Mutex::new(None);
/// A CLI connected at some point: from then on the agent names the programs it sees link,
/// also while detached, for the next connection.
static HAS_CONNECTED: AtomicBool = AtomicBool::new(false);

/// Longest the program's exit, or a detach, waits for queued chunks to reach the CLI while
/// none of them does (`Writer::drain`).
const DRAIN: Duration = Duration::from_secs(3);

/// Frames the capture runs on, unrecorded, before its first captured frame
/// ([`capture::WARMUP_FRAMES`]): the first frame a capture brackets pays the driver's
/// compiles of shader variants for the agent's queries, the agent's query objects, its
/// painter's and geometry capture's set-up and page faults. Measured on es2gears_x11
/// (llvmpipe, full mode, a loaded 2-core machine) before the warm-up: the first capture after
/// an attach spent 0.25-0.38 ms per frame in GL, over all its frames, the next capture of the
/// same program 0.11-0.16, and `gpuheat diff` called the next one faster; with it the pairs'
/// draw and frame rows were noise.
const WARMUP: u32 = 1;
/// The warm-up also goes on while the writer still works through what the capture's start
/// queued (the module map, the contexts' records, and the function table when its encoding
/// ahead, `writer::prepare_ahead`, has not finished): on a machine with few cores that work
/// slows the program's first captured frames. At most this many frames more …
const WARMUP_MORE_FRAMES: u32 = 30;
/// … and this long.
const WARMUP_MORE_NS: u64 = 200_000_000;
/// Set while an attach still patches the GOT slots, after its connection
/// ([`hooks_installing`]): a capture's warm-up goes on meanwhile, as calls through slots not
/// yet patched would be missing from a recorded frame. At most this long: past it the first
/// frame is recorded and marked (a `WARM` record).
static HOOKING: AtomicBool = AtomicBool::new(false);
const WARMUP_HOOKS_NS: u64 = 2_000_000_000;

/// An attach's hooks are still going in (`true`) or are all in (`false`).
pub fn hooks_installing(on: bool) {
    HOOKING.store(on, SeqCst);
}

/// A capture the CLI asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub frames: u32,
    pub mode: CaptureMode,
    /// Paint heat maps of the captured frames (full mode only).
    pub heat: bool,
    /// How work calls are timed (full mode only).
    pub timing: Timing,
    /// Start at the first swap with `SWAPS >= start_after`.
    pub start_after: u64,
    /// Number of the first captured frame; `None`: the number of swaps seen so far (launch
    /// mode, where that counts from the program's start).
    pub first_frame: Option<u64>,
    /// Warm-up frames run from swap `start_after` on, before the first captured frame.
    pub warmup: u32,
    /// Warm-up frames it may add while the writer is busy ([`WARMUP_MORE_FRAMES`] in attach
    /// mode; none in launch mode, whose frames are numbered by the program's swaps and asked
    /// for by number: a short program would end before them).
    pub warmup_more: u32,
}

/// What a connection adds to the session's INFO and END records.
#[derive(Debug, Clone)]
pub struct Origin {
    pub skip: u32,
    pub notes: Vec<String>,
    /// Preloaded at the program's start, or injected by an attach.
    pub loaded: AgentLoad,
}

struct Agent {
    writer: Arc<Writer>,
    state: Mutex<State>,
    origin: Origin,
}

#[derive(Default)]
struct State {
    request: Option<Request>,
    /// The watch the pending request starts.
    watch: Option<Watch>,
    active: Option<Active>,
    stop: bool,
    detach: bool,
    info_sent: bool,
    /// The capture started from the attach argument ([`connect_and_start`]): the CLI's first
    /// `capture` or `watch` on the socket is that one, and is taken as done.
    early: bool,
}

struct Active {
    request: Request,
    captured: u32,
    /// Warm-up frames still to run before the first captured one.
    warm_left: u32,
    /// Warm-up frames run so far, and when the warm-up began.
    warmed: u32,
    warm_since: u64,
    /// What the capture warms up (`contexts::warm_bits`), noted at each frame's end.
    warm: u8,
    frame_begin: u64,
    /// A watch's state, when the capture is one.
    watch: Option<Watching>,
}

/// Watched frames after the warm-up and after each trigger's full-mode frames that no rule
/// judges: the writer still sends what the agent just produced, and on a machine with few
/// cores that work slows the program's next frame or two (a trigger there would be the
/// agent's own doing).
const QUIET_FRAMES: u32 = 2;

/// A watch in progress ([`Command::Watch`]).
struct Watching {
    spec: Watch,
    /// Full-mode frames still to capture for the last trigger; 0 while watching.
    full_left: u32,
    /// Triggers so far.
    triggers: u32,
    /// The first frame of the current stretch of watching: pipelined times of earlier frames
    /// (full-mode ones) are not judged.
    since: u64,
    /// Watched frames still to pass before the rules judge one ([`QUIET_FRAMES`]).
    quiet: u32,
    /// A `capture` the CLI sent during the watch: frames, heat, timing; taken at the next
    /// frame end that is not capturing already.
    take: Option<(u32, bool, Timing)>,
}

impl Watching {
    /// The first rule `frame` crosses, with its value: `frame_ns` its wall time, `gpu` its
    /// pipelined times where they landed at this frame end.
    fn judge(
        &self,
        frame: u64,
        frame_ns: u64,
        gpu: &[PipelinedBatch],
    ) -> Option<(u64, String, u64)> {
        if self.full_left > 0 || self.quiet > 0 {
            return None;
        }
        let gpu_ns = |f: u64| -> Option<u64> {
            let batches: Vec<&PipelinedBatch> =
                gpu.iter().filter(|b| b.frame == f && !b.disjoint).collect();
            (!batches.is_empty()).then(|| {
                batches
                    .iter()
                    .flat_map(|b| &b.times)
                    .map(|t| t.gpu_ns)
                    .sum()
            })
        };
        for rule in &self.spec.rules {
            let hit = match rule.metric {
                TriggerMetric::FrameMs => Some((frame, frame_ns)),
                // Each frame's times land once; frames from before this stretch of watching
                // (full-mode ones, or quiet ones) are not judged.
                TriggerMetric::GpuMs => gpu
                    .iter()
                    .map(|b| b.frame)
                    .filter(|&f| f >= self.since)
                    .find_map(|f| gpu_ns(f).filter(|&ns| rule.fires(ns)).map(|ns| (f, ns))),
            };
            if let Some((f, ns)) = hit.filter(|&(_, ns)| rule.fires(ns)) {
                return Some((f, rule.to_string(), ns));
            }
        }
        None
    }

    /// The settings of the frames captured after a trigger.
    fn full_settings(&self) -> Settings {
        Settings {
            mode: CaptureMode::Full,
            heat: self.spec.heat,
            geometry: crate::config::geometry_budget() > 0,
            timing: self.spec.timing,
            cpu_clock: true,
        }
    }
}

/// The rule a `TRIG` record names for frames taken by a `capture` during a watch.
pub const CAPTURE_RULE: &str = "capture";

/// The settings of watched frames.
fn watch_settings() -> Settings {
    Settings {
        mode: CaptureMode::Timeline,
        heat: false,
        geometry: false,
        timing: Timing::Auto,
        // A system call around each work call: at 1,000 draws a frame, most of what watching
        // cost the program on llvmpipe besides the timestamps.
        cpu_clock: false,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn current() -> Option<Arc<Agent>> {
    lock(&AGENT).clone()
}

/// Launch mode: connects to the CLI named in the environment the first time the program
/// reaches a wrapper (a no-op without one, and after the first time), then starts the
/// capture when it begins with the frame in progress.
pub fn launch() {
    LAUNCH.call_once(|| {
        let _ = std::panic::catch_unwind(connect_from_env);
    });
    if START_NOW.swap(false, Relaxed) {
        let _ = std::panic::catch_unwind(|| {
            if let Some(agent) = current() {
                let mut st = lock(&agent.state);
                if let Some(request) = st.request.take() {
                    start_capture(&agent, &mut st, request, StartPoint::FirstCall);
                }
            }
        });
    }
}

fn connect_from_env() {
    let Some(config) = LaunchRequest::from_process_env() else {
        return;
    };
    let Ok(stream) = UnixStream::connect(&config.socket) else {
        return;
    };
    crate::writer::prepare_ahead();
    // The warm-up takes frames the program would have skipped anyway, and starts at a swap:
    // frame k runs from the k-th swap, so with `--skip 1` the one frame before the capture is
    // frame 0, which starts at the program's first call, not at a swap (and is its own
    // set-up, whose costs no warm-up takes away).
    let warmup = config.skip.saturating_sub(1).min(WARMUP);
    let request = Request {
        frames: config.frames,
        mode: config.mode,
        heat: config.heat && config.mode == CaptureMode::Full,
        timing: config.timing,
        start_after: u64::from(config.skip - warmup),
        first_frame: None,
        warmup,
        warmup_more: 0,
    };
    let origin = Origin {
        skip: config.skip,
        notes: vec!["launched with the agent preloaded".into()],
        loaded: AgentLoad::Launch,
    };
    if connect(stream, origin, Some(request)).is_ok() && config.skip == 0 {
        // Nothing to wait for: the frame in progress is the first captured one.
        START_NOW.store(true, Relaxed);
    }
}

/// Whether a CLI is connected.
pub fn connected() -> bool {
    current().is_some() && outbox::connected()
}

/// Whether a CLI ever connected (it may have gone since).
pub fn has_connected() -> bool {
    HAS_CONNECTED.load(Relaxed)
}

/// Takes over `stream` as the connection to the CLI and starts listening for its commands.
pub fn connect(
    stream: UnixStream,
    origin: Origin,
    request: Option<Request>,
) -> std::io::Result<()> {
    let commands = stream.try_clone()?;
    let writer = Arc::new(Writer::start(stream)?);
    HAS_CONNECTED.store(true, Relaxed);
    // The programs named during an earlier connection (or while detached) are not linked
    // again: the new session gets their PROG records now.
    programs::open(writer.clone());
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

/// The capture an attach's `capture` or `watch` command asks for, starting at the first swap
/// numbered `start_after` or later, with the watch it starts; `None` for other commands.
fn attach_request(command: Command, start_after: u64) -> Option<(Request, Option<Watch>)> {
    let request = |frames, mode, heat, timing| Request {
        frames,
        mode,
        heat,
        timing,
        start_after,
        first_frame: Some(1),
        warmup: WARMUP,
        warmup_more: WARMUP_MORE_FRAMES,
    };
    match command {
        Command::Capture {
            frames,
            mode,
            heat,
            timing,
        } => Some((request(frames, mode, heat, timing), None)),
        // Warmed up in full mode, as the frames after a trigger will be captured: their
        // first-time costs are paid before anything is watched.
        Command::Watch(watch) => Some((
            request(u32::MAX, CaptureMode::Full, watch.heat, watch.timing),
            Some(watch),
        )),
        Command::Stop | Command::Detach => None,
    }
}

/// Attach mode, on the render thread at the entry of the swap the injector stopped it at:
/// connects as [`connect`] does and starts the capture `command` asks for at once, so that
/// its warm-up runs from the frame after this swap (the swap itself is not hooked, and no
/// frame of ours ends at it). One frame of the program sooner than a capture started at a
/// swap after the connection: on mpv under llvmpipe, 75 ms of the first frame's latency.
pub fn connect_and_start(
    stream: UnixStream,
    origin: Origin,
    command: &Command,
) -> std::io::Result<()> {
    connect(stream, origin, None)?;
    let (Some(agent), Some((request, watch))) =
        (current(), attach_request(command.clone(), capture::swaps()))
    else {
        return Ok(());
    };
    let mut st = lock(&agent.state);
    // The CLI sends its command only after the injection returns; if it were here already,
    // that one starts the capture.
    if st.active.is_none() && st.request.is_none() {
        st.early = true;
        st.watch = watch;
        start_capture(&agent, &mut st, request, StartPoint::Injected);
    }
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
            Some(command @ (Command::Capture { .. } | Command::Watch(_))) => {
                let mut st = lock(&agent.state);
                if std::mem::take(&mut st.early) {
                    continue;
                }
                if let Some(w) = st.active.as_mut().and_then(|a| a.watch.as_mut()) {
                    // During a watch: take the next frames in full mode, the watch going on.
                    if let Command::Capture {
                        frames,
                        mode: CaptureMode::Full,
                        heat,
                        timing,
                    } = command
                    {
                        w.take = Some((frames, heat, timing));
                    }
                } else if st.active.is_none() {
                    if let Some((request, watch)) = attach_request(command, capture::swaps() + 1) {
                        st.stop = false;
                        st.request = Some(request);
                        st.watch = watch;
                    }
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
    capture::stop();
    detach(agent);
}

/// Sends what is queued and drops the connection; hooks stay and pass calls through.
fn detach(agent: &Arc<Agent>) {
    capture::stop();
    agent.writer.drain(DRAIN);
    outbox::close(&agent.writer);
    let mut slot = lock(&AGENT);
    if slot.as_ref().is_some_and(|a| Arc::ptr_eq(a, agent)) {
        *slot = None;
    }
}

/// Before the swap that ends a captured frame: its heat map (or why there is none).
pub(crate) fn heat_frame_end(ctx: u64) {
    for record in contexts::heat_frame_end(ctx, capture::frame()) {
        outbox::send_record(record);
    }
}

/// Where a capture starts: at a swap (with its result), or at the program's first call into
/// GL (launch mode with `--skip 0`), where nothing is current yet and the GL libraries may
/// still be running their constructors, so nothing may be asked of them.
#[derive(Clone, Copy)]
enum StartPoint {
    Swap {
        ok: bool,
    },
    FirstCall,
    /// At the entry of the swap an attach's injection stopped the render thread at, with a
    /// warm-up ahead (no state snapshot here: the swap has not run).
    Injected,
}

fn start_capture(agent: &Agent, st: &mut State, request: Request, at: StartPoint) {
    let now = monotonic_ns();
    // An earlier capture's reason to give up is not this one's; its backlog check neither.
    capture::take_abandoned();
    contexts::capture_starts();
    let settings = Settings {
        mode: request.mode,
        heat: request.heat,
        geometry: crate::config::geometry_budget() > 0,
        timing: request.timing,
        cpu_clock: true,
    };
    let warm = contexts::warm_bits(settings);
    // A context an earlier capture of the process ran on in this mode is warm already: the
    // warm-up is the first capture's, and a later one starts at once, unless an attach's
    // hooks are still going in.
    let hooking = HOOKING.load(SeqCst);
    let request = Request {
        warmup: if hooking {
            request.warmup.max(1)
        } else if contexts::is_warm(recorder::current_context(), warm) {
            0
        } else {
            request.warmup
        },
        ..request
    };
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
            // A watch asks for its full-mode frames, per trigger.
            frames_requested: st
                .watch
                .as_ref()
                .map_or(request.frames, |w| w.frames.saturating_mul(w.max_triggers)),
            clock_origin_ns: now,
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            notes: {
                let mut notes = agent.origin.notes.clone();
                if let Some(w) = &st.watch {
                    notes.push(watch_note(w));
                }
                notes
            },
            warmup_frames: Some(request.warmup),
        };
        agent.writer.send(Msg::Origin(now));
        agent.writer.send(Msg::Record(Record::Info(info)));
        agent.writer.send(Msg::FunctionTable);
        agent.writer.send(Msg::Modules);
        // Contexts measured during an earlier connection are not measured again.
        for record in contexts::known() {
            agent.writer.send(Msg::Record(record));
        }
    }
    match at {
        StartPoint::Swap { ok } => {
            capture::note_swap_thread();
            // Measure the context's counters now, not inside the first captured draw.
            contexts::prepare(recorder::current_context());
            if request.warmup == 0 {
                snapshot(agent, request, ok);
            }
        }
        // The render thread is held for the injection: the warm-up frame's first draw
        // measures the context (5-10 ms on mpv), as it is no captured frame.
        StartPoint::Injected => capture::note_swap_thread(),
        StartPoint::FirstCall => {}
    }
    let watch = st.watch.take().map(|spec| Watching {
        spec,
        full_left: 0,
        triggers: 0,
        since: 0,
        quiet: QUIET_FRAMES,
        take: None,
    });
    st.active = Some(Active {
        request,
        captured: 0,
        warm_left: request.warmup,
        warmed: 0,
        warm_since: now,
        warm,
        frame_begin: monotonic_ns(),
        watch,
    });
    uploads::clear();
    // First-time work before the first frame belongs to no frame, nor do its waits.
    capture::take_setup();
    gpuheat_counters::waits::take();
    gpuheat_counters::waits::take_deferred();
    gpuheat_counters::waits::take_times();
    let first = if request.warmup > 0 {
        capture::WARMUP_FRAMES
    } else {
        request.first_frame.unwrap_or_else(capture::swaps)
    };
    capture::start(settings, first);
    if let Some(why) = capture::take_abandoned() {
        // Measuring the context at this swap found the GPU too far behind. No detach here:
        // the CLI leaves after the END, and its leaving detaches (`listen`).
        end_abandoned(agent, st, why);
        return;
    }
    if request.warmup == 0 {
        if let Some(active) = st.active.as_mut() {
            begin_watching(agent, active, first);
        }
    }
}

/// A watch's warmed-up capture turns to watching, from frame `frame` on (also after each
/// trigger's full-mode frames); a no-op for a capture.
fn begin_watching(agent: &Agent, active: &mut Active, frame: u64) {
    let Some(w) = active.watch.as_mut() else {
        return;
    };
    w.since = frame;
    w.quiet = QUIET_FRAMES;
    capture::switch(watch_settings());
    agent.writer.send(Msg::Hold {
        frames: w.spec.ring,
    });
}

/// The INFO note of a watch: what it keeps, and when it triggers.
fn watch_note(w: &Watch) -> String {
    let rules: Vec<String> = w.rules.iter().map(|r| r.to_string()).collect();
    format!(
        "watched in timeline mode, keeping the last {} frames in a ring of at most {} MB; on {}: the frames kept, then {} frame{} in full mode{}; at most {} trigger{}",
        w.ring,
        crate::writer::RING_LIMIT_BYTES >> 20,
        rules.join(" or "),
        w.frames,
        if w.frames == 1 { "" } else { "s" },
        if w.heat { " with heat" } else { "" },
        w.max_triggers,
        if w.max_triggers == 1 { "" } else { "s" },
    )
}

/// The first captured frame begins (at a swap whose result was `ok`): record what the
/// program bound before its first call.
fn snapshot(agent: &Agent, request: Request, ok: bool) {
    let first_frame = request.first_frame.unwrap_or_else(capture::swaps);
    let ctx = recorder::current_context();
    // eglQuerySurface resets the thread's EGL error: only after a swap that succeeded.
    if let Some(state) = contexts::snapshot(ctx, first_frame, ok) {
        // Bound before the capture: the frame may use it without a glUseProgram.
        programs::used(state.program);
        agent.writer.send(Msg::Record(Record::State(state)));
    }
}

/// A warm-up frame ended (at a swap whose result was `swap_ok`): what it recorded goes
/// nowhere (the writer drops warm-up frames), its frame-end work runs as a captured frame's
/// would; after the last one, the first captured frame begins. `false` when the capture was
/// asked to stop meanwhile (the caller ends it).
fn warmup_frame_ended(agent: &Agent, st: &mut State, swap_ok: bool) -> bool {
    let Some(active) = st.active.as_mut() else {
        return false;
    };
    // Asked before this frame's own hand-over, which the writer has not had time to drop.
    let writer_busy = !agent.writer.idle();
    let frame = capture::frame();
    recorder::flush();
    let _ = uploads::take(frame);
    let ctx = recorder::current_context();
    capture::note_swap_thread();
    // Dropped by the writer with the rest of the warm-up frame: read to free their queries.
    for msg in contexts::resolve(ctx) {
        agent.writer.send(msg);
    }
    contexts::mark_warm(ctx, active.warm);
    // Naming the programs used (linked before an attach) is first-time work too.
    programs::name_used(ctx, contexts::attached_sources);
    if capture::geometry() {
        for record in contexts::geometry_frame_end(ctx, frame) {
            agent.writer.send(Msg::Record(record));
        }
    }
    for batch in contexts::poll(ctx, false) {
        agent.writer.send(Msg::Record(Record::Pipelined(batch)));
    }
    // A warm-up frame's waits are not the capture's.
    gpuheat_counters::waits::take();
    gpuheat_counters::waits::take_deferred();
    gpuheat_counters::waits::take_times();
    active.warm_left -= 1;
    active.warmed += 1;
    let warming_for = monotonic_ns().saturating_sub(active.warm_since);
    let busy = writer_busy
        && active.warmed < active.request.warmup + active.request.warmup_more
        && warming_for < WARMUP_MORE_NS;
    let hooking = HOOKING.load(SeqCst);
    if active.warm_left == 0 && (busy || (hooking && warming_for < WARMUP_HOOKS_NS)) {
        active.warm_left = 1;
    }
    if st.stop {
        return false;
    }
    if active.warm_left > 0 {
        capture::next_frame();
    } else {
        let request = active.request;
        snapshot(agent, request, swap_ok);
        uploads::clear();
        capture::take_setup();
        let first = request.first_frame.unwrap_or_else(capture::swaps);
        capture::renumber(first);
        if hooking {
            capture::note_setup(
                "the attach was still patching GOT slots when the frame began: calls through \
                 slots not yet patched are missing from it"
                    .into(),
            );
        }
        if let Some(active) = st.active.as_mut() {
            begin_watching(agent, active, first);
        }
    }
    if let Some(active) = st.active.as_mut() {
        active.frame_begin = monotonic_ns();
    }
    true
}

/// The capture gave itself up ([`capture::abandon`], noticed right after the work call that
/// did it, on the thread that recorded): ends it now rather than at a swap that a program
/// far ahead of its GPU may not reach for long.
pub fn abandoned() {
    let Some(why) = capture::take_abandoned() else {
        return;
    };
    if let Some(agent) = current() {
        let mut guard = lock(&agent.state);
        if end_abandoned(&agent, &mut guard, why) {
            drop(guard);
            detach(&agent);
        }
    }
}

/// Ends the active capture with an `END` whose reason is `Abandoned`: the frame in progress
/// goes (the writer drops its calls at the END), the frames captured before it stay. `true`
/// when the connection is to be dropped now (a detach was asked for), which the caller does
/// once it let go of the state.
fn end_abandoned(agent: &Agent, st: &mut State, why: String) -> bool {
    let Some(active) = st.active.take() else {
        return false;
    };
    capture::stop();
    recorder::flush();
    st.stop = false;
    agent.writer.send(Msg::End(EndInfo {
        reason: EndReason::Abandoned,
        frames_captured: u64::from(active.captured),
        dropped_calls: 0,
        detail: Some(why),
        renderer_query: Some(renderer_query(agent.origin.loaded)),
    }));
    st.detach
}

/// What the runtime does not measure itself (the Vulkan layer's pipelined times and
/// records, `crate::vk`), polled with GL's at each captured frame's end (`true`: the
/// capture's last).
type MorePoll = fn(bool) -> (Vec<PipelinedBatch>, Vec<Record>);
static MORE_PIPELINED: std::sync::OnceLock<MorePoll> = std::sync::OnceLock::new();

/// Has `poll` polled at every captured frame's end, with GL's pipelined times.
pub fn also_poll(poll: MorePoll) {
    let _ = MORE_PIPELINED.set(poll);
}

/// Called after every swap on the swapping thread; `swap_ok` is what the swap returned.
pub fn frame_ended(swap_ok: bool) {
    let swaps = capture::count_swap();
    let Some(agent) = current() else {
        return;
    };
    // The call clock's rate, refined at every swap while a CLI is connected.
    crate::clock::anchor();
    let mut guard = lock(&agent.state);
    let st = &mut *guard;
    let Some(active) = st.active.as_mut() else {
        match st.request {
            Some(r) if swaps >= r.start_after => {
                st.request = None;
                start_capture(&agent, st, r, StartPoint::Swap { ok: swap_ok });
            }
            _ => {}
        }
        return;
    };
    if let Some(why) = capture::take_abandoned() {
        if end_abandoned(&agent, st, why) {
            drop(guard);
            detach(&agent);
        }
        return;
    }
    if active.warm_left > 0 {
        if warmup_frame_ended(&agent, st, swap_ok) {
            return;
        }
        // Stopped before any frame was captured.
        capture::stop();
        st.active = None;
        st.stop = false;
        agent.writer.send(Msg::End(EndInfo {
            reason: EndReason::Stopped,
            frames_captured: 0,
            dropped_calls: 0,
            detail: Some("stopped during the warm-up, before the first captured frame".into()),
            renderer_query: Some(renderer_query(agent.origin.loaded)),
        }));
        if st.detach {
            drop(guard);
            detach(&agent);
        }
        return;
    }
    let frame = capture::frame();
    if active.watch.is_none() || capture::mode() == CaptureMode::Full {
        contexts::mark_warm(recorder::current_context(), active.warm);
    }
    active.captured += 1;
    // A watch ends with its last trigger's last full-mode frame.
    let watch_done = active
        .watch
        .as_ref()
        .is_some_and(|w| w.full_left == 1 && w.triggers >= w.spec.max_triggers);
    let last = active.captured >= active.request.frames || st.stop || watch_done;
    if last {
        capture::stop();
    }
    recorder::flush();
    let end = monotonic_ns();
    let begin = active.frame_begin;
    let ctx = recorder::current_context();
    capture::note_swap_thread();
    // After the frame's end time, the frame's one wait for its calls timed deferred, whose
    // values join their calls before the frame is written.
    for msg in contexts::resolve(ctx) {
        agent.writer.send(msg);
    }
    agent.writer.send(Msg::FrameEnd { frame, begin, end });
    if let Some(u) = uploads::take(frame) {
        agent.writer.send(Msg::Record(Record::Uploads(u)));
    }
    let setup = capture::take_setup();
    if !setup.is_empty() {
        agent.writer.send(Msg::Record(Record::WarmUp(WarmUp {
            frame,
            reasons: setup,
        })));
    }
    // Programs the frame used that the agent never saw link (linked before an attach), while
    // their shaders are still attached; the context is current here, right after its swap.
    // After the frame's end time, so the queries are not counted in the frame.
    programs::name_used(recorder::current_context(), contexts::attached_sources);
    if capture::geometry() {
        for record in contexts::geometry_frame_end(recorder::current_context(), frame) {
            agent.writer.send(Msg::Record(record));
        }
    }
    let mut batches = contexts::poll(recorder::current_context(), last);
    if let Some(poll) = MORE_PIPELINED.get() {
        let (more, records) = poll(last);
        batches.extend(more);
        for record in records {
            agent.writer.send(Msg::Record(record));
        }
    }
    let judged = match active.watch.as_ref() {
        Some(w) if !last => w.judge(frame, end.saturating_sub(begin), &batches),
        _ => None,
    };
    for batch in batches {
        agent.writer.send(Msg::Record(Record::Pipelined(batch)));
    }
    // After the frame's end work (maps, geometry read-backs, the last poll): the frame's own.
    agent
        .writer
        .send(Msg::Record(Record::AgentFrame(AgentFrame {
            frame,
            waits: gpuheat_counters::waits::take(),
            deferred: gpuheat_counters::waits::take_deferred(),
            own: gpuheat_counters::waits::take_times(),
        })));
    if !last {
        if let Some(w) = active.watch.as_mut() {
            if let Some((hit, rule, value_ns)) = judged {
                w.triggers += 1;
                w.full_left = w.spec.frames;
                agent.writer.send(Msg::Release(TriggerHit {
                    number: w.triggers,
                    frame: hit,
                    rule,
                    value_ns,
                    // The writer fills in what its ring held.
                    kept_first: hit,
                    kept_last: frame,
                    full_first: frame + 1,
                    full_frames: w.spec.frames,
                }));
                capture::switch(w.full_settings());
            } else if let Some((frames, heat, timing)) = w.take.take_if(|_| w.full_left == 0) {
                // Asked for: not a trigger (number 0, not counted against the watch's
                // triggers), the frames after this one in full mode all the same.
                w.full_left = frames;
                agent.writer.send(Msg::Release(TriggerHit {
                    number: 0,
                    frame,
                    rule: CAPTURE_RULE.to_string(),
                    value_ns: end.saturating_sub(begin),
                    kept_first: frame,
                    kept_last: frame,
                    full_first: frame + 1,
                    full_frames: frames,
                }));
                capture::switch(Settings {
                    heat,
                    timing,
                    ..w.full_settings()
                });
            } else if w.full_left > 0 {
                w.full_left -= 1;
                if w.full_left == 0 {
                    begin_watching(&agent, active, frame + 1);
                }
            } else {
                w.quiet = w.quiet.saturating_sub(1);
            }
        }
        capture::next_frame();
        active.frame_begin = monotonic_ns();
        return;
    }
    let complete = active.captured >= active.request.frames || watch_done;
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
        renderer_query: Some(renderer_query(agent.origin.loaded)),
    }));
    if st.detach {
        drop(guard);
        detach(&agent);
    }
}

/// What the program asked GL about itself since the agent was loaded.
fn renderer_query(loaded: AgentLoad) -> RendererQuery {
    let asked = capture::renderer_queries();
    RendererQuery {
        renderer: asked & capture::ASKED_RENDERER != 0,
        version: asked & capture::ASKED_VERSION != 0,
        stringi: asked & capture::ASKED_STRINGI != 0,
        loaded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_session::control::Trigger;
    use gpuheat_session::PipelinedTime;

    fn watching(rules: &[&str]) -> Watching {
        Watching {
            spec: Watch {
                ring: 10,
                frames: 3,
                max_triggers: 2,
                heat: false,
                timing: Timing::Auto,
                rules: rules.iter().map(|r| Trigger::parse(r).unwrap()).collect(),
            },
            full_left: 0,
            triggers: 0,
            since: 10,
            quiet: 0,
            take: None,
        }
    }

    fn batch(frame: u64, times: &[u64], disjoint: bool) -> PipelinedBatch {
        PipelinedBatch {
            frame,
            disjoint,
            times: times
                .iter()
                .enumerate()
                .map(|(i, &gpu_ns)| PipelinedTime {
                    call: i as u32,
                    gpu_ns,
                })
                .collect(),
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_frame_over_its_wall_time_rule_triggers_at_once() {
        let w = watching(&["frame-ms>20"]);
        assert_eq!(w.judge(12, 20 * MS, &[]), None);
        assert_eq!(
            w.judge(12, 20 * MS + 1, &[]),
            Some((12, "frame-ms>20".to_string(), 20 * MS + 1))
        );
    }

    #[test]
    fn a_gpu_rule_judges_the_frames_whose_times_landed() {
        let w = watching(&["frame-ms>100", "gpu-ms>5"]);
        // Frame 11's times land at frame 13's end: 3 + 4 ms over two calls.
        let landed = [batch(11, &[3 * MS, 4 * MS], false)];
        assert_eq!(
            w.judge(13, MS, &landed),
            Some((11, "gpu-ms>5".to_string(), 7 * MS))
        );
        // Disjoint times are not trusted; frames from before the watch began (full-mode
        // ones) are not judged.
        assert_eq!(w.judge(13, MS, &[batch(11, &[9 * MS], true)]), None);
        assert_eq!(w.judge(13, MS, &[batch(9, &[9 * MS], false)]), None);
        assert_eq!(w.judge(13, MS, &[batch(11, &[MS], false)]), None);
    }

    #[test]
    fn nothing_is_judged_while_quiet_or_capturing_a_trigger() {
        let mut w = watching(&["frame-ms>20"]);
        w.quiet = 1;
        assert_eq!(w.judge(12, 90 * MS, &[]), None);
        w.quiet = 0;
        w.full_left = 2;
        assert_eq!(w.judge(12, 90 * MS, &[]), None);
    }

    #[test]
    fn a_watch_note_says_what_it_keeps_and_when_it_triggers() {
        let w = watching(&["frame-ms>20", "gpu-ms>12.5"]);
        assert_eq!(
            watch_note(&w.spec),
            "watched in timeline mode, keeping the last 10 frames in a ring of at most 64 MB; on frame-ms>20 or gpu-ms>12.5: the frames kept, then 3 frames in full mode; at most 2 triggers"
        );
    }
}
