//! The capture state every thread reads: whether frames are being recorded, the frame being
//! recorded, the order of calls within it, and what the capture records. A leaf: plain
//! atomics, written by the runtime (one writer at a time, under its lock), read lock-free by
//! the wrappers.

use gpuheat_session::control::Timing;
use gpuheat_session::CaptureMode;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// True while frames are being captured.
static RECORDING: AtomicBool = AtomicBool::new(false);
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
/// How the capture in progress times work calls ([`Timing`] as 0, 1, 2).
static TIMING: AtomicU8 = AtomicU8::new(0);
/// The capture in progress reads the thread's CPU clock ([`Settings::cpu_clock`]).
static CPU_CLOCK: AtomicBool = AtomicBool::new(true);
/// The thread that swapped last: its calls may be timed deferred, their results being read
/// at its swap or when it makes another context current (0: none yet).
static SWAP_THREAD: AtomicU32 = AtomicU32::new(0);

thread_local! {
    static THIS_THREAD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The calling thread's id, asked of the kernel once per thread.
fn this_thread() -> u32 {
    THIS_THREAD
        .try_with(|t| {
            if t.get() == 0 {
                // SAFETY: gettid has no preconditions.
                t.set(unsafe { libc::gettid() } as u32);
            }
            t.get()
        })
        .unwrap_or(0)
}

/// Whether the current frame is being captured.
#[inline(always)]
pub fn recording() -> bool {
    RECORDING.load(Relaxed)
}

/// What a capture records, set when it starts.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Timeline or full.
    pub mode: CaptureMode,
    /// Paint heat maps (full mode only).
    pub heat: bool,
    /// Record post-transform positions (full mode only).
    pub geometry: bool,
    /// How work calls are timed (full mode only).
    pub timing: Timing,
    /// Read the thread's CPU clock around work calls, swaps and calls that may wait (a
    /// system call each: a watch's timeline frames go without, their calls' CPU time being
    /// their wall time).
    pub cpu_clock: bool,
}

/// Starts recording with `settings`; the frame in progress is recorded as `first_frame`.
pub fn start(settings: Settings, first_frame: u64) {
    STARTS.fetch_add(1, Relaxed);
    switch(settings);
    FRAME.store(first_frame, Relaxed);
    CALL_SEQ.store(0, Relaxed);
    RECORDING.store(true, Relaxed);
}

/// Goes on recording with other settings from the next frame on (a watch turning to full
/// mode after a trigger, and back): the same capture, its frames numbered on.
pub fn switch(settings: Settings) {
    let full = settings.mode == CaptureMode::Full;
    FULL_MODE.store(full, Relaxed);
    HEAT.store(full && settings.heat, Relaxed);
    GEOMETRY.store(full && settings.geometry, Relaxed);
    CPU_CLOCK.store(settings.cpu_clock, Relaxed);
    TIMING.store(
        match settings.timing {
            Timing::Auto => 0,
            Timing::Isolated => 1,
            Timing::Deferred => 2,
        },
        Relaxed,
    );
}

/// Frames numbered from here on are warm-up frames: the capture runs on them as on any
/// captured frame (brackets, painting, geometry, recording), so that the driver compiles the
/// shader variants the agent's queries need, the agent makes its query objects and faults in
/// its buffers, but nothing of them is sent (`writer` drops them). Far above any frame a
/// program reaches, so no numbering of real frames collides.
pub const WARMUP_FRAMES: u64 = 1 << 62;

/// Whether frame number `frame` is a warm-up frame.
pub fn is_warmup(frame: u64) -> bool {
    frame >= WARMUP_FRAMES
}

/// Goes on recording, the frame in progress numbered `frame`: the switch from warm-up frames
/// to captured ones. Not a new capture ([`generation`] stays): what was sent once per capture
/// during the warm-up (VG path data) was sent to the same session.
pub fn renumber(frame: u64) {
    FRAME.store(frame, Relaxed);
    CALL_SEQ.store(0, Relaxed);
}

/// First-time work the agent did in the frame being recorded (measuring a context, making
/// its painter): the frame's times include it, and the CLI is told (a `WARM` record).
static SETUP: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes first-time work of the agent's in the frame being recorded (rare: once per context
/// and kind of work).
pub fn note_setup(what: String) {
    if recording() {
        let mut s = SETUP.lock().unwrap_or_else(|e| e.into_inner());
        // Bounded: a program making contexts every frame must not grow this without end.
        if s.len() < 16 {
            s.push(what);
        }
    }
}

/// Takes the first-time work noted since the last call.
pub fn take_setup() -> Vec<String> {
    std::mem::take(&mut *SETUP.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Captures started so far in this process: what was sent to one capture's CLI is not known
/// to the next.
pub fn generation() -> u64 {
    STARTS.load(Relaxed)
}

static STARTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Stops recording (calls pass straight through again).
pub fn stop() {
    RECORDING.store(false, Relaxed);
}

/// Why the capture gave itself up, for the runtime that ends it ([`abandon`]).
static ABANDONED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Stops recording at once and leaves `why` for the runtime, which ends the capture with it
/// (an `END` record whose reason is `Abandoned`) right after the work call that found it, or
/// at the start swap or the next swap: for what the agent must not do to the program, found
/// in the middle of a frame.
pub fn abandon(why: String) {
    stop();
    let mut slot = ABANDONED.lock().unwrap_or_else(|e| e.into_inner());
    slot.get_or_insert(why);
}

/// Why the capture gave itself up since the last call, if it did.
pub fn take_abandoned() -> Option<String> {
    ABANDONED.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Counts a swap; returns the number of swaps seen so far.
pub fn count_swap() -> u64 {
    SWAPS.fetch_add(1, Relaxed) + 1
}

/// Swaps seen so far.
pub fn swaps() -> u64 {
    SWAPS.load(Relaxed)
}

/// The frame being recorded.
pub fn frame() -> u64 {
    FRAME.load(Relaxed)
}

/// Moves on to the next recorded frame.
pub fn next_frame() {
    FRAME.fetch_add(1, Relaxed);
    CALL_SEQ.store(0, Relaxed);
}

/// Takes the next `n` places in the order of the frame being recorded: (that frame, the
/// first place). One atomic addition serves a whole run of a thread's calls (the recorder
/// numbers its plain calls only when it must: see `recorder`).
#[inline(always)]
pub fn take_places(n: u32) -> (u64, u32) {
    (FRAME.load(Relaxed), CALL_SEQ.fetch_add(n, Relaxed))
}

/// Places for calls that a thread recorded in a frame that has ended since (a thread other
/// than the swapping one, between its calls and its hand-over): above every place of a live
/// frame, so they sort after its calls and shift none of them.
pub fn take_late_places(n: u32) -> u32 {
    (LATE_SEQ.fetch_add(n, Relaxed) & (LATE_PLACES - 1)) | LATE_PLACES
}

/// The first place [`take_late_places`] hands out.
pub const LATE_PLACES: u32 = 1 << 31;

static LATE_SEQ: AtomicU32 = AtomicU32::new(0);

/// The mode of the capture in progress.
pub fn mode() -> CaptureMode {
    if FULL_MODE.load(Relaxed) {
        CaptureMode::Full
    } else {
        CaptureMode::Timeline
    }
}

/// Whether the capture in progress reads the thread's CPU clock around the calls that have it.
#[inline(always)]
pub fn cpu_clock() -> bool {
    CPU_CLOCK.load(Relaxed)
}

/// Whether the capture in progress paints heat maps.
pub fn heat() -> bool {
    HEAT.load(Relaxed)
}

/// Whether the capture in progress records geometry.
pub fn geometry() -> bool {
    GEOMETRY.load(Relaxed)
}

/// How the capture in progress times work calls.
pub fn timing() -> Timing {
    match TIMING.load(Relaxed) {
        1 => Timing::Isolated,
        2 => Timing::Deferred,
        _ => Timing::Auto,
    }
}

/// Notes that the calling thread swaps.
pub fn note_swap_thread() {
    SWAP_THREAD.store(this_thread(), Relaxed);
}

/// Whether the calling thread is the one that swapped last.
pub fn on_swap_thread() -> bool {
    let t = this_thread();
    t != 0 && SWAP_THREAD.load(Relaxed) == t
}

/// What the program asked of `glGetString`/`glGetStringi` since the agent was loaded: bits
/// [`ASKED_RENDERER`], [`ASKED_VERSION`], [`ASKED_STRINGI`]. Written only by those two
/// wrappers, once per bit (a load first, so a program asking every frame does not keep a
/// cache line bouncing).
static RENDERER_QUERIES: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// `glGetString(GL_RENDERER)`.
pub const ASKED_RENDERER: u8 = 1;
/// `glGetString(GL_VERSION)`.
pub const ASKED_VERSION: u8 = 2;
/// `glGetStringi`.
pub const ASKED_STRINGI: u8 = 4;

/// The program made the query `bit`.
pub fn note_renderer_query(bit: u8) {
    if RENDERER_QUERIES.load(Relaxed) & bit == 0 {
        RENDERER_QUERIES.fetch_or(bit, Relaxed);
    }
}

/// The queries the program made so far.
pub fn renderer_queries() -> u8 {
    RENDERER_QUERIES.load(Relaxed)
}
