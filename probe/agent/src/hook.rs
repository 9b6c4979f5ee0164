//! What the generated wrappers call: real-function resolution, and recording of one call.
//!
//! The hot path outside captured frames is `real()` (one relaxed load) plus `recording()`
//! (another). Inside captured frames a call is copied into a per-thread buffer without locks;
//! only calls that make the GPU work take the per-context counter lock.

use crate::clock::{monotonic_ns, thread_cpu_ns};
use crate::generated::{wrapper_address, CLASSES, FUNCTION_COUNT, MAX_ARGS, NAMES};
use crate::{contexts, dl, runtime, table};
use gpuheat_counters::Bracket;
use gpuheat_session::{CallClass, CounterValue};
use std::cell::{Cell, RefCell};
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// True while frames are being captured.
pub(crate) static RECORDING: AtomicBool = AtomicBool::new(false);

static REAL: [AtomicUsize; FUNCTION_COUNT] = [const { AtomicUsize::new(0) }; FUNCTION_COUNT];

/// Whether the current frame is being captured.
#[inline(always)]
pub fn recording() -> bool {
    RECORDING.load(Relaxed)
}

/// Address of the real implementation of entry point `i`.
#[inline(always)]
pub fn real(i: usize) -> usize {
    match REAL[i].load(Relaxed) {
        0 => resolve(i),
        p => p,
    }
}

/// Stands in for an entry point no loaded library provides, so a wrapper never jumps to 0.
extern "C" fn missing() -> usize {
    0
}

#[cold]
fn resolve(i: usize) -> usize {
    runtime::init();
    let name = cname(i);
    let mut p = dl::real_dlsym(libc::RTLD_NEXT, name);
    if p == 0 {
        p = real_proc_address(name);
    }
    if p == 0 {
        p = missing as *const () as usize;
    }
    REAL[i].store(p, Relaxed);
    p
}

fn cname(i: usize) -> &'static CStr {
    CStr::from_bytes_with_nul(NAMES[i].as_bytes()).unwrap_or(c"")
}

/// Asks the real EGL or GLX loader for `name`: the one the program handed us through
/// `dlsym`/GetProcAddress when it loaded GL privately, else the next one in the global scope.
pub(crate) fn real_proc_address(name: &CStr) -> usize {
    for loader in [
        c"eglGetProcAddress",
        c"glXGetProcAddressARB",
        c"glXGetProcAddress",
    ] {
        let Some(idx) = table::index_of(loader.to_bytes()) else {
            continue;
        };
        let f = match REAL[idx].load(Relaxed) {
            0 => dl::real_dlsym(libc::RTLD_NEXT, loader),
            f => f,
        };
        if f == 0 || f == missing as *const () as usize {
            continue;
        }
        REAL[idx].store(f, Relaxed);
        // SAFETY: both loaders take a C string and return a function pointer.
        let get: unsafe extern "C" fn(*const libc::c_char) -> usize =
            unsafe { std::mem::transmute(f) };
        let p = unsafe { get(name.as_ptr()) };
        if p != 0 {
            return p;
        }
    }
    0
}

/// The real implementation of the entry point called `name`, if any library provides it.
pub(crate) fn real_by_name(name: &CStr) -> Option<usize> {
    let p = real(table::index_of(name.to_bytes())?);
    (p != missing as *const () as usize).then_some(p)
}

/// One call in flight between [`enter`] and [`leave`].
pub struct Guard {
    func: u16,
    nargs: u8,
    skip: bool,
    seq: u32,
    frame: u64,
    ctx: u64,
    site: u64,
    args: [u64; MAX_ARGS],
    bracket: Option<Bracket>,
    t0: u64,
    c0: u64,
}

/// A recorded call, as kept in the per-thread buffer until the writer takes it.
pub(crate) struct RawCall {
    pub func: u16,
    pub nargs: u8,
    pub seq: u32,
    pub tid: u32,
    pub ctx: u64,
    pub begin: u64,
    pub dur: u64,
    pub cpu: u64,
    pub ret: Option<u64>,
    pub site: u64,
    pub args: [u64; MAX_ARGS],
    pub values: Vec<CounterValue>,
}

/// Calls buffered per thread before they are handed to the writer in one message.
const BUFFER_CALLS: usize = 8192;

struct ThreadState {
    in_agent: Cell<bool>,
    tid: Cell<u32>,
    /// The context current on this thread; `None` until known.
    ctx: Cell<Option<u64>>,
    buf: RefCell<Vec<RawCall>>,
    buf_frame: Cell<u64>,
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            in_agent: Cell::new(false),
            tid: Cell::new(0),
            ctx: Cell::new(None),
            buf: RefCell::new(Vec::new()),
            buf_frame: Cell::new(0),
        }
    };
}

/// The context current on the calling thread (0 when none).
pub(crate) fn current_context() -> u64 {
    THREAD
        .try_with(|t| match t.ctx.get() {
            Some(c) => c,
            None => {
                let c = contexts::query_current_context();
                t.ctx.set(Some(c));
                c
            }
        })
        .unwrap_or(0)
}

/// Starts recording call `i` (only called while [`recording`]).
#[inline(never)]
pub fn enter(i: usize, site: u64, args: &[u64]) -> Guard {
    let mut g = Guard {
        func: i as u16,
        nargs: args.len().min(MAX_ARGS) as u8,
        skip: true,
        seq: 0,
        frame: 0,
        ctx: 0,
        site,
        args: [0; MAX_ARGS],
        bracket: None,
        t0: 0,
        c0: 0,
    };
    let reentered = THREAD
        .try_with(|t| t.in_agent.replace(true))
        .unwrap_or(true);
    if reentered {
        return g;
    }
    let ok = catch_unwind(AssertUnwindSafe(|| {
        g.args[..g.nargs as usize].copy_from_slice(&args[..g.nargs as usize]);
        let (frame, seq) = runtime::next_call();
        g.frame = frame;
        g.seq = seq;
        g.ctx = current_context();
        if matches!(CLASSES[i], CallClass::Draw | CallClass::Work) {
            g.bracket = contexts::begin(g.ctx);
        }
    }));
    g.skip = ok.is_err();
    let _ = THREAD.try_with(|t| t.in_agent.set(false));
    g.t0 = monotonic_ns();
    g.c0 = thread_cpu_ns();
    g
}

/// [`enter`] for the wrappers that run hooks even outside captured frames.
#[inline(always)]
pub fn enter_if_recording(i: usize, site: u64, args: &[u64]) -> Option<Guard> {
    recording().then(|| enter(i, site, args))
}

/// Finishes recording a call with its return value.
#[inline(never)]
pub fn leave(g: Guard, ret: Option<u64>) {
    let c1 = thread_cpu_ns();
    let t1 = monotonic_ns();
    if g.skip {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let values = match g.bracket {
            Some(b) => contexts::end(g.ctx, b, g.frame, g.seq),
            None => Vec::new(),
        };
        let serialized = values
            .iter()
            .find(|v| v.counter == gpuheat_counters::catalogue::GPU_TIME_SERIALIZED)
            .map(|v| v.value);
        LAST_SERIALIZED.with(|t| t.set(serialized));
        let raw = RawCall {
            func: g.func,
            nargs: g.nargs,
            seq: g.seq,
            tid: 0,
            ctx: g.ctx,
            begin: g.t0,
            dur: t1.saturating_sub(g.t0),
            cpu: c1.saturating_sub(g.c0),
            ret,
            site: g.site,
            args: g.args,
            values,
        };
        push(g.frame, raw);
    }));
}

/// [`leave`] for draws: after the call is recorded, paints it into the frame's heat map when
/// the capture asked for one, and records its post-transform positions in full mode
/// (`replay` calls the real draw again with the same arguments).
#[inline(never)]
pub fn leave_draw(g: Guard, replay: &dyn Fn()) {
    let live = !g.skip && g.bracket.is_some();
    let paint = live && runtime::heat();
    let geometry = live && runtime::geometry();
    let (ctx, seq, frame, func) = (g.ctx, g.seq, g.frame, g.func as usize);
    let (args, nargs) = (g.args, g.nargs as usize);
    leave(g, None);
    if !paint && !geometry {
        return;
    }
    let reentered = THREAD
        .try_with(|t| t.in_agent.replace(true))
        .unwrap_or(true);
    if reentered {
        return;
    }
    if paint {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let time = LAST_SERIALIZED.with(|t| t.get());
            if let Some(time) = time {
                contexts::paint(ctx, seq, time, replay);
            }
        }));
    }
    if geometry {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let name = NAMES[func].trim_end_matches('\0');
            contexts::geometry(ctx, frame, seq, name, &args[..nargs], replay);
        }));
    }
    let _ = THREAD.try_with(|t| t.in_agent.set(false));
}

thread_local! {
    /// The serialized time of the last draw this thread recorded, for [`leave_draw`].
    static LAST_SERIALIZED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Before every swap: the frame's heat map is finished while its colour buffer is intact.
pub fn before_swap() {
    if !recording() || !runtime::heat() {
        return;
    }
    let reentered = THREAD
        .try_with(|t| t.in_agent.replace(true))
        .unwrap_or(true);
    if reentered {
        return;
    }
    let _ = catch_unwind(|| runtime::heat_frame_end(current_context()));
    let _ = THREAD.try_with(|t| t.in_agent.set(false));
}

fn push(frame: u64, mut raw: RawCall) {
    let _ = THREAD.try_with(|t| {
        if t.tid.get() == 0 {
            // SAFETY: gettid has no preconditions.
            t.tid.set(unsafe { libc::gettid() } as u32);
        }
        raw.tid = t.tid.get();
        let mut buf = t.buf.borrow_mut();
        if t.buf_frame.get() != frame && !buf.is_empty() {
            runtime::hand_over(t.buf_frame.get(), std::mem::take(&mut *buf));
        }
        t.buf_frame.set(frame);
        if buf.capacity() == 0 {
            buf.reserve(BUFFER_CALLS);
        }
        buf.push(raw);
        if buf.len() >= BUFFER_CALLS {
            runtime::hand_over(
                frame,
                std::mem::replace(&mut *buf, Vec::with_capacity(BUFFER_CALLS)),
            );
        }
    });
}

/// Hands the calling thread's buffered calls to the writer (at the end of its frame).
pub(crate) fn flush_thread() {
    let _ = THREAD.try_with(|t| {
        let mut buf = t.buf.borrow_mut();
        if !buf.is_empty() {
            runtime::hand_over(t.buf_frame.get(), std::mem::take(&mut *buf));
        }
    });
}

/// eglGetProcAddress & co: hands out our wrapper and remembers the real function behind it.
pub fn proc_address(name: usize, real_fn: usize) -> usize {
    if name == 0 || real_fn == 0 {
        return real_fn;
    }
    catch_unwind(|| {
        // SAFETY: GetProcAddress takes a NUL-terminated string.
        let bytes = unsafe { std::ffi::CStr::from_ptr(name as *const libc::c_char) }.to_bytes();
        match table::index_of(bytes) {
            Some(i) => {
                // Calls may now reach the wrapper without ever resolving through it.
                runtime::init();
                let _ = REAL[i].compare_exchange(0, real_fn, Relaxed, Relaxed);
                wrapper_address(i)
            }
            None => real_fn,
        }
    })
    .unwrap_or(real_fn)
}

/// eglMakeCurrent & co, after the real call: remember which context this thread now uses.
pub fn made_current(ctx: u64, ok: u64) {
    if ok != 0 {
        let _ = THREAD.try_with(|t| t.ctx.set(Some(ctx)));
    }
}

/// Whether the call being wrapped comes from the program rather than from the agent itself
/// (whose GL calls reach the wrappers too once the dispatch table is hooked).
fn from_program() -> bool {
    THREAD.try_with(|t| !t.in_agent.get()).unwrap_or(false)
}

/// glBeginQuery & co: the program's own active queries must never collide with ours.
pub fn query_began(target: u64, _: u64) {
    if !from_program() {
        return;
    }
    let ctx = current_context();
    let _ = catch_unwind(|| contexts::note_program_query(ctx, target as u32, true));
}

/// glEndQuery & co.
pub fn query_ended(target: u64, _: u64) {
    if !from_program() {
        return;
    }
    let ctx = current_context();
    let _ = catch_unwind(|| contexts::note_program_query(ctx, target as u32, false));
}

/// GL_GPU_DISJOINT_EXT.
const GPU_DISJOINT_EXT: u32 = 0x8FBB;

/// glGetIntegerv & co, after the real call: the program reading GL_GPU_DISJOINT_EXT gets the
/// disjoint events our own reads consumed.
pub fn got_value(pname: u32, data: usize, width: usize) {
    if pname != GPU_DISJOINT_EXT || data == 0 || !from_program() {
        return;
    }
    let ctx = current_context();
    let _ = catch_unwind(|| {
        // SAFETY: the program passed a buffer for at least one value of `width` bytes.
        unsafe {
            let real = match width {
                8 => *(data as *const i64) != 0,
                1 => *(data as *const u8) != 0,
                _ => *(data as *const i32) != 0,
            };
            let Some(shown) = contexts::program_read_disjoint(ctx, real) else {
                return;
            };
            match width {
                8 => *(data as *mut i64) = i64::from(shown),
                1 => *(data as *mut u8) = u8::from(shown),
                _ => *(data as *mut i32) = i32::from(shown),
            }
        }
    });
}

/// glLinkProgram & co, after the real call: geometry capture's shadow of the program is stale,
/// and the shaders' sources can be read while they are still attached.
pub fn program_linked(program: u64, _: u64) {
    if !from_program() || !runtime::connected() || crate::config::geometry_budget() == 0 {
        return;
    }
    let reentered = THREAD
        .try_with(|t| t.in_agent.replace(true))
        .unwrap_or(true);
    if reentered {
        return;
    }
    let _ = catch_unwind(|| contexts::program_linked(program as u32));
    let _ = THREAD.try_with(|t| t.in_agent.set(false));
}

/// glDeleteProgram & co: the name may come back as another program.
pub fn program_deleted(program: u64, _: u64) {
    if !from_program() {
        return;
    }
    let _ = catch_unwind(|| contexts::program_deleted(program as u32));
}

/// After every swap (`ok`: its result): frame accounting, starting and ending the capture.
pub fn swapped(ok: u64) {
    let reentered = THREAD
        .try_with(|t| t.in_agent.replace(true))
        .unwrap_or(true);
    if reentered {
        return;
    }
    let _ = catch_unwind(|| runtime::frame_ended(ok != 0));
    let _ = THREAD.try_with(|t| t.in_agent.set(false));
}

/// Live hooks (`crate::live`): records `p` as the real function of entry point `i`.
pub(crate) fn set_real(i: usize, p: usize) {
    REAL[i].store(p, Relaxed);
}

/// Live hooks: the recorded real function of entry point `i` (0 if none), without resolving.
pub(crate) fn real_raw(i: usize) -> usize {
    REAL[i].load(Relaxed)
}
