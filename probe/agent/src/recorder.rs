//! The per-thread recorder: the re-entrancy guard, the context current on the thread, and
//! the buffer recorded calls collect in until they are handed to the writer (at the end of
//! their frame, or when the buffer is full), without locks on the way.

use crate::contexts;
use crate::outbox;
use crate::writer::{fresh_buffer, Msg, RawCall, BUFFER_CALLS};
use std::cell::{Cell, RefCell};

struct ThreadState {
    /// The thread is running agent code: GL calls it makes are the agent's, not the program's.
    in_agent: Cell<bool>,
    tid: Cell<u32>,
    /// The context current on this thread; `None` until known.
    ctx: Cell<Option<u64>>,
    buf: RefCell<Vec<RawCall>>,
    buf_frame: Cell<u64>,
    /// Between `glBegin` and `glEnd` (seen while recording; a capture starts at a swap,
    /// which is never inside one).
    in_primitive: Cell<bool>,
    /// Between `glNewList` and `glEndList`.
    compiling_list: Cell<bool>,
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            in_agent: Cell::new(false),
            tid: Cell::new(0),
            ctx: Cell::new(None),
            buf: RefCell::new(Vec::new()),
            buf_frame: Cell::new(0),
            in_primitive: Cell::new(false),
            compiling_list: Cell::new(false),
        }
    };
}

/// The calling thread is inside the agent while one of these lives; [`Reentry::enter`] gives
/// none when it already is (a GL call the agent itself made reached a wrapper), or when the
/// thread is being torn down.
pub struct Reentry(());

impl Reentry {
    /// Enters the agent on this thread, unless it is already inside.
    #[inline]
    pub fn enter() -> Option<Reentry> {
        let first = THREAD
            .try_with(|t| !t.in_agent.replace(true))
            .unwrap_or(false);
        // Not `then_some`: its argument is built either way, and dropping a refused guard
        // would mark the thread as out of the agent while the agent is still running.
        if first {
            Some(Reentry(()))
        } else {
            None
        }
    }
}

impl Drop for Reentry {
    #[inline]
    fn drop(&mut self) {
        let _ = THREAD.try_with(|t| t.in_agent.set(false));
    }
}

/// Whether the call being wrapped comes from the program rather than from the agent itself
/// (whose GL calls reach the wrappers too once the dispatch table is hooked).
pub fn from_program() -> bool {
    THREAD.try_with(|t| !t.in_agent.get()).unwrap_or(false)
}

/// The context current on the calling thread (0 when none).
pub fn current_context() -> u64 {
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

/// A MakeCurrent succeeded on this thread: `ctx` is current now.
pub fn made_current(ctx: u64) {
    let _ = THREAD.try_with(|t| t.ctx.set(Some(ctx)));
}

/// `glBegin` (true) or `glEnd` (false) on this thread.
pub fn set_in_primitive(inside: bool) {
    let _ = THREAD.try_with(|t| t.in_primitive.set(inside));
}

/// `glNewList` (true) or `glEndList` (false) on this thread.
pub fn set_compiling_list(compiling: bool) {
    let _ = THREAD.try_with(|t| t.compiling_list.set(compiling));
}

/// Whether a work call may be bracketed with the counters' queries here: not between
/// `glBegin` and `glEnd` (queries there are errors the program would see) and not while a
/// display list is being compiled (the call is stored, not run).
pub fn may_bracket() -> bool {
    THREAD
        .try_with(|t| !t.in_primitive.get() && !t.compiling_list.get())
        .unwrap_or(false)
}

/// Adds a recorded call of `frame` to the thread's buffer: `fill` writes it in place, into
/// its slot of the buffer (a record moved in would be copied once more on the hot path).
#[inline]
pub(crate) fn push(frame: u64, fill: impl FnOnce(&mut RawCall)) {
    let _ = THREAD.try_with(|t| {
        if t.tid.get() == 0 {
            // SAFETY: gettid has no preconditions.
            t.tid.set(unsafe { libc::gettid() } as u32);
        }
        let mut buf = t.buf.borrow_mut();
        if t.buf_frame.get() != frame && !buf.is_empty() {
            hand_over(t.buf_frame.get(), std::mem::take(&mut *buf));
        }
        t.buf_frame.set(frame);
        if buf.capacity() == 0 {
            *buf = fresh_buffer();
        }
        buf.push(RawCall::EMPTY);
        if let Some(raw) = buf.last_mut() {
            fill(raw);
            raw.tid = t.tid.get();
        }
        if buf.len() >= BUFFER_CALLS {
            hand_over(frame, std::mem::replace(&mut *buf, fresh_buffer()));
        }
    });
}

/// Hands the calling thread's buffered calls to the writer (at the end of its frame).
pub(crate) fn flush() {
    let _ = THREAD.try_with(|t| {
        let mut buf = t.buf.borrow_mut();
        if !buf.is_empty() {
            hand_over(t.buf_frame.get(), std::mem::take(&mut *buf));
        }
    });
}

fn hand_over(frame: u64, calls: Vec<RawCall>) {
    outbox::send(Msg::Calls { frame, calls });
}
