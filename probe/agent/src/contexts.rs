//! Per-context counter state, created the first time a context is seen during a capture.

use crate::{hook, runtime};
use gpuheat_counters::{Bracket, ContextCounters, GlFns};
use gpuheat_session::{CounterValue, PipelinedBatch, Record};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The agent's own GL function pointers: the real implementations behind the wrappers, so
/// our calls never pass through them.
static GL: OnceLock<Option<GlFns>> = OnceLock::new();

#[derive(Default)]
struct Entry {
    counters: Option<ContextCounters>,
    /// Query targets the program had active before we measured this context.
    program_queries: Vec<u32>,
}

static CONTEXTS: OnceLock<Mutex<HashMap<u64, Entry>>> = OnceLock::new();

fn gl() -> Option<&'static GlFns> {
    GL.get_or_init(|| {
        // SAFETY: the loader returns real function pointers or null.
        // The real implementations, not the program's entry points: once the dispatch table
        // is hooked, those lead back into our wrappers.
        unsafe {
            GlFns::load(|name| {
                hook::real_by_name(name).unwrap_or_else(|| hook::real_proc_address(name))
                    as *const std::ffi::c_void
            })
        }
        .ok()
    })
    .as_ref()
}

fn with_entry<R>(ctx: u64, f: impl FnOnce(&mut Entry) -> R) -> R {
    let map = CONTEXTS.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    f(map.entry(ctx).or_default())
}

/// Counters of `ctx`, measuring the context the first time (it must be current).
fn counters<'a>(entry: &'a mut Entry, ctx: u64, gl: &GlFns) -> &'a mut ContextCounters {
    entry.counters.get_or_insert_with(|| {
        // SAFETY: `ctx` is current on this thread.
        let mut c = unsafe { ContextCounters::new(gl, ctx) };
        for &t in &entry.program_queries {
            c.note_program_query(t, true);
        }
        runtime::send_record(Record::Context(c.info()));
        c
    })
}

/// Measures `ctx` ahead of its first captured draw.
pub fn prepare(ctx: u64) {
    if ctx == 0 {
        return;
    }
    if let Some(gl) = gl() {
        with_entry(ctx, |e| {
            counters(e, ctx, gl);
        });
    }
}

/// Before a work call.
pub fn begin(ctx: u64) -> Option<Bracket> {
    if ctx == 0 {
        return None;
    }
    let gl = gl()?;
    let mode = runtime::mode();
    // SAFETY: `ctx` is current on this thread.
    with_entry(ctx, |e| {
        Some(unsafe { counters(e, ctx, gl).begin(gl, mode) })
    })
}

/// After a work call.
pub fn end(ctx: u64, bracket: Bracket, frame: u64, call: u32) -> Vec<CounterValue> {
    let Some(gl) = gl() else { return Vec::new() };
    // SAFETY: `ctx` is current on this thread.
    with_entry(ctx, |e| unsafe {
        counters(e, ctx, gl).end(gl, bracket, frame, call)
    })
}

/// At a frame end: pipelined results that have landed (all of them when `wait`).
pub fn poll(ctx: u64, wait: bool) -> Vec<PipelinedBatch> {
    let Some(gl) = gl() else { return Vec::new() };
    with_entry(ctx, |e| match e.counters.as_mut() {
        // SAFETY: `ctx` is current on this thread.
        Some(c) => unsafe { c.poll(gl, wait) },
        None => Vec::new(),
    })
}

/// The program began or ended a query of `target`.
pub fn note_program_query(ctx: u64, target: u32, active: bool) {
    with_entry(ctx, |e| {
        e.program_queries.retain(|&t| t != target);
        if active {
            e.program_queries.push(target);
        }
        if let Some(c) = e.counters.as_mut() {
            c.note_program_query(target, active);
        }
    });
}

/// The program read GL_GPU_DISJOINT_EXT and got `real`: what it should see instead, when this
/// context's counters exist.
pub fn program_read_disjoint(ctx: u64, real: bool) -> Option<bool> {
    let map = CONTEXTS.get()?;
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    Some(
        map.get_mut(&ctx)?
            .counters
            .as_mut()?
            .program_read_disjoint(real),
    )
}

/// Asks EGL, then GLX, which context is current (for threads we saw no MakeCurrent on).
pub fn query_current_context() -> u64 {
    for name in [c"eglGetCurrentContext", c"glXGetCurrentContext"] {
        if let Some(f) = hook::real_by_name(name) {
            // SAFETY: both functions take no argument and return a handle.
            let c = unsafe { std::mem::transmute::<usize, unsafe extern "C" fn() -> usize>(f)() };
            if c != 0 {
                return c as u64;
            }
        }
    }
    0
}
