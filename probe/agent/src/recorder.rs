//! The per-thread recorder: the re-entrancy guard, the context current on the thread, and
//! the buffer recorded calls collect in until they are handed to the writer (at the end of
//! their frame, or when the buffer is full), without locks on the way.
//!
//! Every recorded call has a place in its frame's order (`RawCall::seq`), shared by all
//! threads. A plain call (one that nothing else refers to: `generated::PLAIN`) is recorded
//! without one, and the thread numbers its run of such calls when it must: when it takes
//! the place of a call that others refer to (a draw, a VG call, an upload), and when it
//! hands its buffer over. One atomic addition then serves the whole run; the places stay
//! dense, and a thread's calls keep their order.

use crate::calls::{fresh_buffer, CallBuffer, NewCall, UNPLACED};
use crate::capture;
use crate::contexts;
use crate::outbox;
use crate::writer::Msg;
use gpuheat_session::CounterValue;
use std::cell::{Cell, RefCell};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

struct ThreadState {
    /// The thread is running agent code: GL calls it makes are the agent's, not the program's.
    in_agent: Cell<bool>,
    tid: Cell<u32>,
    /// The context current on this thread and the [`SWITCHES`] epoch it was learnt in;
    /// `None` until known.
    ctx: Cell<Option<(u64, u64)>>,
    buf: RefCell<CallBuffer>,
    /// Between `glBegin` and `glEnd` (seen while recording; a capture starts at a swap,
    /// which is never inside one).
    in_primitive: Cell<bool>,
    /// Between `glNewList` and `glEndList`.
    compiling_list: Cell<bool>,
    /// Plain calls at the end of `buf` that have no place yet.
    unplaced: Cell<u32>,
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            in_agent: Cell::new(false),
            tid: Cell::new(0),
            ctx: Cell::new(None),
            buf: RefCell::new(CallBuffer::empty()),
            in_primitive: Cell::new(false),
            compiling_list: Cell::new(false),
            unplaced: Cell::new(0),
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

/// Whether the threads' remembered contexts can be trusted: an epoch, odd while a context
/// switch may happen unseen. A first attach starts its capture at the injection, before the
/// MakeCurrent hooks are in (they go in on the agent's thread); until then a thread's context
/// is asked of the window system at every call, and a context remembered before the hooks
/// went in is asked again once (gtk4-demo's GL areas switch contexts within a frame: a stale
/// one sent their calls, and the textures they draw into, to the window's context).
static SWITCHES: AtomicU64 = AtomicU64::new(0);

/// From now on a MakeCurrent may run without the agent seeing it (the attach entry, before
/// the inline hooks).
pub fn switches_unseen() {
    let _ = SWITCHES.fetch_update(SeqCst, SeqCst, |e| (e & 1 == 0).then_some(e + 1));
}

/// Every MakeCurrent is seen from now on (the inline hooks are in).
pub fn switches_seen() {
    let _ = SWITCHES.fetch_update(SeqCst, SeqCst, |e| (e & 1 == 1).then_some(e + 1));
}

/// The context current on the thread of `t`: remembered, or asked when the memory may be
/// stale (see [`SWITCHES`]).
#[inline]
fn thread_context(t: &ThreadState) -> u64 {
    let epoch = SWITCHES.load(Relaxed);
    match t.ctx.get() {
        Some((c, e)) if e == epoch && epoch & 1 == 0 => c,
        _ => {
            let c = contexts::query_current_context();
            t.ctx.set(Some((c, epoch)));
            c
        }
    }
}

/// The context current on the calling thread (0 when none).
pub fn current_context() -> u64 {
    THREAD.try_with(thread_context).unwrap_or(0)
}

/// A MakeCurrent succeeded on this thread: `ctx` is current now.
pub fn made_current(ctx: u64) {
    let _ = THREAD.try_with(|t| t.ctx.set(Some((ctx, SWITCHES.load(SeqCst)))));
}

/// `glBegin` (true) or `glEnd` (false) on this thread.
pub fn set_in_primitive(inside: bool) {
    let _ = THREAD.try_with(|t| t.in_primitive.set(inside));
}

/// Whether this thread is between the program's `glBegin` and `glEnd`.
pub fn in_primitive() -> bool {
    THREAD.try_with(|t| t.in_primitive.get()).unwrap_or(false)
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

/// Marks the thread as out of the agent when dropped (on unwinding too).
struct Leaving<'a>(&'a Cell<bool>);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Gives the thread's unplaced calls their places, in the order they were recorded: taken
/// from the frame being recorded when they belong to it, else from the late places.
fn place(t: &ThreadState, buf: &mut CallBuffer) -> Option<u32> {
    let n = t.unplaced.replace(0);
    if n == 0 {
        return None;
    }
    let first = if capture::frame() == buf.frame {
        capture::take_places(n).1
    } else {
        capture::take_late_places(n)
    };
    buf.place(first, n);
    Some(first.wrapping_add(n - 1))
}

/// The place of a call others will refer to, taken now (before its real call), with the
/// frame it belongs to: the thread's unplaced calls before it are placed first.
pub(crate) fn take_place() -> (u64, u32) {
    THREAD
        .try_with(|t| {
            if t.unplaced.get() != 0 {
                if let Ok(mut buf) = t.buf.try_borrow_mut() {
                    place(t, &mut buf);
                }
            }
            capture::take_places(1)
        })
        .unwrap_or_else(|_| capture::take_places(1))
}

/// Makes room for a call of `frame` on context `ctx` at the end of the thread's buffer: hands
/// the buffer over when it holds another frame's or another context's calls, gets one when
/// there is none.
#[inline(always)]
fn make_room(t: &ThreadState, buf: &mut CallBuffer, frame: u64, ctx: u64) {
    if buf.frame != frame || buf.ctx != ctx || !buf.has_room() {
        renew(t, buf, frame, ctx);
    }
}

/// [`make_room`]'s other case: the buffer is handed over (when it holds calls) and replaced.
#[cold]
#[inline(never)]
fn renew(t: &ThreadState, buf: &mut CallBuffer, frame: u64, ctx: u64) {
    if !buf.is_empty() {
        hand_over(t, buf);
    }
    if !buf.has_room() {
        *buf = fresh_buffer();
    }
    if t.tid.get() == 0 {
        // SAFETY: gettid has no preconditions.
        t.tid.set(unsafe { libc::gettid() } as u32);
    }
    (buf.frame, buf.ctx, buf.tid) = (frame, ctx, t.tid.get());
}

/// After a record was added: hands the buffer over when it is full.
#[inline(always)]
fn after_push(t: &ThreadState, buf: &mut CallBuffer) {
    if buf.full() {
        hand_over(t, buf);
    }
}

/// Places the buffer's calls and sends it to the writer; the thread gets a buffer without
/// memory in its stead (the next call takes one from the pool).
#[cold]
#[inline(never)]
fn hand_over(t: &ThreadState, buf: &mut CallBuffer) {
    place(t, buf);
    let full = std::mem::replace(buf, CallBuffer::empty());
    outbox::send(Msg::Calls(full));
}

/// Adds a recorded call of `frame` on context `ctx`, with its counter values, to the thread's
/// buffer (`call.seq`: its place, taken with [`take_place`]).
pub(crate) fn push(frame: u64, ctx: u64, call: &NewCall<'_>, values: Vec<CounterValue>) {
    let _ = THREAD.try_with(|t| {
        let mut buf = t.buf.borrow_mut();
        make_room(t, &mut buf, frame, ctx);
        buf.push(call);
        buf.attach_values(values);
        after_push(t, &mut buf);
    });
}

/// Adds a plain call (`generated::PLAIN`) of the frame being recorded on the thread's
/// context, without a place yet (`call.seq` is ignored). Nothing when the call is the
/// agent's own. Returns, when `placed` (the call is a VG call's child, which refers to it),
/// its frame and place. `args` are `call.args` again, as an array: generic over the argument
/// count, this is compiled (and inlined, thread-local access included) once per count, so a
/// wrapper's copy of its arguments is a few stores; through the slice alone the compiler
/// kept one shared, out-of-line copy with a `memcpy` per call.
#[inline(always)]
pub(crate) fn push_plain<const N: usize>(
    placed: bool,
    call: &NewCall<'_>,
    args: &[u64; N],
) -> Option<(u64, u32)> {
    push_plain_in(placed, None, call, args)
}

/// [`push_plain`] on context `ctx` when given (a Vulkan call names its device), else on the
/// thread's current GL context.
#[inline(always)]
pub(crate) fn push_plain_in<const N: usize>(
    placed: bool,
    ctx: Option<u64>,
    call: &NewCall<'_>,
    args: &[u64; N],
) -> Option<(u64, u32)> {
    THREAD
        .try_with(|t| {
            if t.in_agent.replace(true) {
                return None;
            }
            let _leaving = Leaving(&t.in_agent);
            let ctx = ctx.unwrap_or_else(|| thread_context(t));
            let frame = capture::frame();
            let mut buf = t.buf.borrow_mut();
            make_room(t, &mut buf, frame, ctx);
            buf.push(&NewCall {
                seq: UNPLACED,
                args,
                ..*call
            });
            t.unplaced.set(t.unplaced.get() + 1);
            let mut out = None;
            if placed {
                out = place(t, &mut buf).map(|seq| (frame, seq));
            }
            after_push(t, &mut buf);
            out
        })
        .ok()
        .flatten()
}

/// Hands the calling thread's buffered calls to the writer (at the end of its frame).
pub(crate) fn flush() {
    let _ = THREAD.try_with(|t| {
        let mut buf = t.buf.borrow_mut();
        if !buf.is_empty() {
            hand_over(t, &mut buf);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test process has no GL: an asked context is 0, a remembered one is what a
    /// MakeCurrent hook said. One test, as `SWITCHES` is the process's.
    #[test]
    fn a_context_remembered_while_switches_went_unseen_is_asked_again() {
        made_current(5);
        assert_eq!(current_context(), 5);
        switches_unseen();
        // Asked at every call, even right after a MakeCurrent the hooks saw.
        assert_eq!(current_context(), 0);
        made_current(7);
        assert_eq!(current_context(), 0);
        switches_seen();
        // What was remembered before is stale; what a hook says from now on holds.
        assert_eq!(current_context(), 0);
        made_current(9);
        assert_eq!(current_context(), 9);
        // A second "seen" (a re-attach finds the hooks in) changes nothing.
        switches_seen();
        assert_eq!(current_context(), 9);
    }
}
