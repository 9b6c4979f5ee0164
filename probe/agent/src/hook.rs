//! The interposer: what the generated wrappers call. Real-function lookup with the
//! launch-mode start on a wrapper's first call, recording of one call, and the hooks some
//! entry points run for the runtime (swaps, MakeCurrent, GetProcAddress, queries, links).
//!
//! The hot path outside captured frames is [`real`] (one relaxed load) plus [`recording`]
//! (another). Inside captured frames a call is copied into a per-thread buffer without locks;
//! only calls that make the GPU work take the per-context counter lock.

use crate::calls::NewCall;
use crate::clock::{monotonic_ns, thread_cpu_ns, ticks};
use crate::generated::{wrapper_address, CLASSES, CPU, KINDS, NAMES, SPREADS, VG};
use crate::recorder::{self, Reentry};
use crate::{capture, contexts, programs, real, runtime, table, uploads, vg, vgpaths};
use gpuheat_counters::geometry::BlockShape;
use gpuheat_counters::gl::GPU_DISJOINT_EXT;
use gpuheat_counters::list_run::ListStart;
use gpuheat_counters::stages::CallKind;
use gpuheat_counters::thermal::{CopyCall, CopyDest, CopySource};
use gpuheat_counters::{Bracket, Weight};
use gpuheat_session::Attachment;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Whether the current frame is being captured.
#[inline(always)]
pub fn recording() -> bool {
    capture::recording()
}

/// Address of the real implementation of entry point `i`.
#[inline(always)]
pub fn real(i: usize) -> usize {
    match real::raw(i) {
        0 => first_call(i),
        p => p,
    }
}

/// A wrapper whose real function is not known yet: resolve it, and give launch mode its
/// chance to connect (after the resolution, never inside it).
#[cold]
fn first_call(i: usize) -> usize {
    let p = real::get(i);
    launch();
    p
}

/// Launch mode's connection, outside any lookup, and only from the program's own calls.
pub(crate) fn start_launch() {
    launch();
}

/// [`start_launch`], for the GL wrappers' first call.
fn launch() {
    if let Some(_inside) = Reentry::enter() {
        runtime::launch();
    }
}

/// One call in flight between [`enter`] and [`leave`]: what is known before the real call.
/// Kept small (no arguments: the wrapper holds them and passes them to both ends), so that
/// handing it from one end to the other is a few register moves, not a copy of the record;
/// [`leave`] writes the record once, into the thread's buffer.
pub struct Guard {
    func: u16,
    skip: bool,
    seq: u32,
    frame: u64,
    ctx: u64,
    site: u64,
    /// [`ticks`] just before the real call.
    begin: u64,
    /// Thread CPU time just before the real call (`CPU` calls only).
    c0: u64,
    bracket: Option<Bracket>,
    /// Wall time spent beginning the bracket, when a VG call is in flight (its child's cost).
    bracket_ns: u64,
}

/// After a work call's bracket was asked for: a capture that gave itself up there (the GPU
/// too far behind to measure, `contexts::caught_up`) ends now, not at a swap that such a
/// program may be slow to reach.
fn end_if_abandoned(bracketed: bool) {
    if !bracketed && !crate::capture::recording() {
        runtime::abandoned();
    }
}

/// Starts recording call `i` (only called while [`recording`]).
#[inline(never)]
pub fn enter(i: usize, site: u64, args: &[u64]) -> Guard {
    let mut g = Guard {
        func: i as u16,
        skip: true,
        seq: 0,
        frame: 0,
        ctx: 0,
        site,
        begin: 0,
        c0: 0,
        bracket: None,
        bracket_ns: 0,
    };
    let Some(inside) = Reentry::enter() else {
        return g;
    };
    let ok = catch_unwind(AssertUnwindSafe(|| {
        let (frame, seq) = recorder::take_place();
        g.frame = frame;
        g.seq = seq;
        g.ctx = recorder::current_context();
        let work = CLASSES[i].is_work();
        if VG[i] {
            vg::enter(i, frame, seq, g.ctx, args, work);
        } else if work && recorder::may_bracket() {
            let b0 = vg::inside().then(monotonic_ns);
            g.bracket = contexts::begin(g.ctx, b0.is_none(), SPREADS[i], KINDS[i]);
            g.bracket_ns = b0.map_or(0, |b0| monotonic_ns() - b0);
            end_if_abandoned(g.bracket.is_some());
        }
    }));
    g.skip = ok.is_err();
    drop(inside);
    // The CPU clock (a system call) first, so the wall time does not include it.
    if CPU[i] && crate::capture::cpu_clock() {
        g.c0 = thread_cpu_ns();
    }
    g.begin = ticks();
    g
}

/// A plain call's clock stamp, just before its real call.
#[inline(always)]
pub fn stamp() -> u64 {
    ticks()
}

/// Records a call of plain entry point `i` (`generated::PLAIN`: no hook, no counters, no CPU
/// clock, nothing refers to it) that began at `begin` ([`stamp`]) and returned just now.
/// The whole record is written here, once, after the real call: the wrapper does nothing
/// before it but read the clock.
#[inline(never)]
pub fn plain<const N: usize>(i: usize, site: u64, begin: u64, args: &[u64; N], ret: Option<u64>) {
    let end = ticks();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let call = plain_call(i, site, begin, end, args, ret);
        if let Some((frame, seq)) = recorder::push_plain(vg::inside(), &call, args) {
            vg::child(frame, seq, 0, None);
        }
    }));
}

/// The record of a plain call of entry point `i` (no place yet, no CPU time) that ran from
/// `begin` to `end`.
#[inline(always)]
fn plain_call<'a>(
    i: usize,
    site: u64,
    begin: u64,
    end: u64,
    args: &'a [u64],
    ret: Option<u64>,
) -> NewCall<'a> {
    NewCall {
        func: i as u16,
        site,
        begin,
        end,
        seq: 0,
        args,
        ret,
        cpu: None,
    }
}

/// [`plain`] for a Vulkan call, on its device's context `ctx`; `placed` when something else
/// refers to it (a command timed in its command buffer): then its frame and place.
#[inline(never)]
pub fn plain_in<const N: usize>(
    i: usize,
    ctx: u64,
    placed: bool,
    site: u64,
    begin: u64,
    args: &[u64; N],
    ret: Option<u64>,
) -> Option<(u64, u32)> {
    let end = ticks();
    catch_unwind(AssertUnwindSafe(|| {
        let call = plain_call(i, site, begin, end, args, ret);
        recorder::push_plain_in(placed, Some(ctx), &call, args)
    }))
    .ok()
    .flatten()
}

/// [`enter`] for the wrappers that run hooks even outside captured frames.
#[inline(always)]
pub fn enter_if_recording(i: usize, site: u64, args: &[u64]) -> Option<Guard> {
    recording().then(|| enter(i, site, args))
}

/// Finishes recording a call (`args` as given to [`enter`]) with its return value.
#[inline(never)]
pub fn leave(mut g: Guard, args: &[u64], ret: Option<u64>) {
    let end = ticks();
    let func = usize::from(g.func);
    // Read at the end only where it was read at the start (a watch may turn the clock on
    // inside the swap that ends its frame).
    let cpu = (CPU[func] && g.c0 != 0).then(|| thread_cpu_ns().saturating_sub(g.c0));
    if g.skip {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let nested = vg::inside();
        let bracketed = g.bracket.is_some();
        // A deferred call's time is its timestamp pair, known to the GPU only.
        let pair = g
            .bracket
            .as_ref()
            .filter(|b| b.is_deferred())
            .and_then(Bracket::timestamps);
        let e0 = nested.then(monotonic_ns);
        let (frame, seq) = (g.frame, g.seq);
        let values = if VG[func] {
            match Reentry::enter() {
                Some(_inside) => vg::leave(func, args),
                None => Vec::new(),
            }
        } else {
            match g.bracket.take() {
                Some(b) => contexts::end(g.ctx, b, frame, seq),
                None => Vec::new(),
            }
        };
        if bracketed {
            // Read by `leave_draw` and `leave_spread`, for bracketed calls only.
            let weight = match pair {
                Some((before, after)) => Some(Weight::Deferred(before, after)),
                None => serialized_of(&values).map(|t| {
                    // A draw's own statistics may say it reached no pixel (`leave_draw`
                    // paints it so; a blit or dispatch has no primitives but writes pixels).
                    // Only heat reads it.
                    if KINDS[func] == CallKind::Draw
                        && capture::heat()
                        && gpuheat_counters::thermal::reached_nothing(&values)
                    {
                        Weight::Unreached(t)
                    } else {
                        Weight::Known(t)
                    }
                }),
            };
            LAST_WEIGHT.with(|w| w.set(weight));
        }
        let serialized = (nested && !VG[func]).then(|| serialized_of(&values));
        let call = NewCall {
            func: g.func,
            site: g.site,
            begin: g.begin,
            end,
            seq,
            args,
            ret,
            cpu,
        };
        recorder::push(frame, g.ctx, &call, values);
        if let Some(serialized) = serialized {
            // The agent's bracket around this child ran inside the VG call's timing.
            let overhead = if bracketed {
                g.bracket_ns + e0.map_or(0, |e0| monotonic_ns() - e0)
            } else {
                0
            };
            vg::child(frame, seq, overhead, serialized);
        }
        if use_program(g.func) {
            // Named at this thread's swap if the agent never saw it link (attach mode).
            programs::used(args.first().copied().unwrap_or(0) as u32);
        }
    }));
}

/// The serialized GPU time among a call's counter values.
fn serialized_of(values: &[gpuheat_session::CounterValue]) -> Option<u64> {
    values
        .iter()
        .find(|v| v.counter == gpuheat_counters::catalogue::GPU_TIME_SERIALIZED)
        .map(|v| v.value)
}

/// Whether entry point `func` is glUseProgram or glUseProgramObjectARB.
fn use_program(func: u16) -> bool {
    static INDICES: std::sync::OnceLock<[Option<usize>; 2]> = std::sync::OnceLock::new();
    let [a, b] = INDICES.get_or_init(|| {
        [
            table::index_of(b"glUseProgram"),
            table::index_of(b"glUseProgramObjectARB"),
        ]
    });
    [*a, *b].contains(&Some(usize::from(func)))
}

/// [`leave`] for draws and display lists: after the call is recorded, paints it into the
/// frame's heat map when the capture asked for one, and records its post-transform
/// positions in full mode (`replay` calls the real function again with the
/// same arguments).
#[inline(never)]
pub fn leave_draw(g: Guard, args: &[u64], replay: &dyn Fn()) {
    leave_replayed(g, args, Rerun::Draw, replay);
}

/// Before a program's `glCallList(s)`, ahead of [`enter`] (outside the call's time): where
/// heat or geometry will run the list again, the matrices its call starts from.
pub fn list_start() -> Option<ListStart> {
    if !(capture::heat() || capture::geometry()) || !from_program() || !recorder::may_bracket() {
        return None;
    }
    let _inside = Reentry::enter()?;
    catch_unwind(|| contexts::list_start(recorder::current_context()))
        .ok()
        .flatten()
}

/// [`leave_draw`] for `glCallList(s)`: the list runs again as the program's call ran, from
/// `start` (read by [`list_start`]), its state put back as the call left it.
#[inline(never)]
pub fn leave_list(g: Guard, args: &[u64], start: Option<ListStart>, replay: &dyn Fn()) {
    leave_replayed(g, args, Rerun::List(start.as_ref()), replay);
}

/// What a replayed call is, beyond its arguments.
#[derive(Clone, Copy)]
enum Rerun<'a> {
    /// A draw its arguments describe.
    Draw,
    /// A display list call, with the matrices it started from where they were read.
    List(Option<&'a ListStart>),
    /// A `glBegin`…`glEnd` block, run again from its recording, with what the agent saw
    /// of it where it knows.
    Block(Option<BlockShape>),
}

/// [`leave_draw`], [`leave_list`] and a block's `glEnd`: the call was recorded; `rerun` says
/// what it was.
fn leave_replayed(g: Guard, args: &[u64], rerun: Rerun<'_>, replay: &dyn Fn()) {
    let list = match rerun {
        Rerun::List(start) => Some(start),
        Rerun::Draw | Rerun::Block(_) => None,
    };
    // A VG library's draws are painted as their VG call: on the host from its path, or,
    // when the host cannot know its coverage, from theirs counted together (`vg_child`).
    let bracketed = !g.skip && g.bracket.is_some();
    let live = bracketed && !vg::inside();
    let vg_child = bracketed && capture::heat() && vg::inside() && vg::counts_children();
    let paint = live && capture::heat();
    let geometry = live && capture::geometry();
    let (ctx, seq, frame, func) = (g.ctx, g.seq, g.frame, usize::from(g.func));
    leave(g, args, None);
    if !paint && !geometry && !vg_child {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    // A list run again for heat must not move the program's matrices (its geometry replay
    // saves them itself, `DrawCall::list`).
    let listed = list.map(|start| move || contexts::run_list(start, replay));
    let painted: &dyn Fn() = match &listed {
        Some(run) => run,
        None => replay,
    };
    if vg_child {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let t0 = monotonic_ns();
            contexts::count_vg_draw(ctx, frame, painted);
            vg::agent_ns(monotonic_ns() - t0);
        }));
    }
    if paint {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            if let Some(weight) = LAST_WEIGHT.with(Cell::get) {
                contexts::paint(ctx, frame, seq, weight, painted);
            }
        }));
    }
    if geometry {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let name = NAMES[func].trim_end_matches('\0');
            let deferred = matches!(LAST_WEIGHT.with(Cell::get), Some(Weight::Deferred(..)));
            let start = list.flatten();
            let block = match rerun {
                Rerun::Block(shape) => shape,
                Rerun::Draw | Rerun::List(_) => None,
            };
            contexts::geometry(
                ctx,
                frame,
                seq,
                name,
                args,
                (start, block),
                deferred,
                replay,
            );
        }));
    }
}

/// [`leave`] for the work calls with no fragments of their own that the heat map places:
/// compute dispatches (over the images they store to), blits (over their destination
/// rectangle, in the framebuffer bound or named) and copies (over the texels they write).
#[inline(never)]
pub fn leave_spread(g: Guard, args: &[u64], kind: Spread) {
    let paint = !g.skip && g.bracket.is_some() && !vg::inside() && capture::heat();
    let (ctx, seq, frame) = (g.ctx, g.seq, g.frame);
    leave(g, args, None);
    if !paint {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // Timed isolated, its time; timed deferred, its timestamp pair, read at the flush.
        let Some(weight) = LAST_WEIGHT.with(Cell::get) else {
            return;
        };
        match kind {
            Spread::Dispatch => contexts::dispatch(ctx, frame, seq, weight),
            Spread::Blit => {
                // GLint arguments, recorded widened: their low 32 bits are the value.
                let at = |i: usize| args.get(i).map_or(0, |&v| v as u32 as i32);
                contexts::blit(ctx, frame, seq, weight, [at(4), at(5), at(6), at(7)]);
            }
            Spread::BlitNamed => {
                // (readFramebuffer, drawFramebuffer, then glBlitFramebuffer's arguments)
                let at = |i: usize| args.get(i).map_or(0, |&v| v as u32 as i32);
                let framebuffers = [at(0) as u32, at(1) as u32];
                let dst = [at(6), at(7), at(8), at(9)];
                contexts::blit_named(ctx, frame, seq, weight, framebuffers, dst);
            }
            copy => {
                if let Some(copy) = copy_call(copy, args) {
                    contexts::copy(ctx, frame, seq, weight, &copy);
                }
            }
        }
    }));
}

/// A copy call's destination, source and written texels from its arguments (GLenum, GLint
/// and GLsizei, recorded widened: their low 32 bits are the value); `None` for another kind
/// or a negative size (an error the call raised: it wrote nothing).
fn copy_call(kind: Spread, args: &[u64]) -> Option<CopyCall> {
    use gpuheat_counters::gl::RENDERBUFFER;
    let at = |i: usize| args.get(i).map_or(0, |&v| v as u32);
    let signed = |i: usize| at(i) as i32;
    let rect = |x: usize, y: usize, w: usize, h: usize| -> Option<[u32; 4]> {
        let (x, y, w, h) = (signed(x), signed(y), signed(w), signed(h));
        (x >= 0 && y >= 0 && w >= 0 && h >= 0).then(|| {
            let (x, y) = (x as u32, y as u32);
            [x, y, x.saturating_add(w as u32), y.saturating_add(h as u32)]
        })
    };
    // The sub-image copies write level `args[1]` of the texture bound to target `args[0]`,
    // or, in their direct-state-access forms (the same arguments after it), of texture
    // `args[0]` itself.
    let dest = |layer: u32| match kind {
        Spread::CopyTextureSubImage2D | Spread::CopyTextureSubImage3D => CopyDest::Texture {
            name: at(0),
            level: at(1),
            layer,
        },
        _ => CopyDest::Bound {
            target: at(0),
            level: at(1),
            layer,
        },
    };
    Some(match kind {
        // (target, level, internalformat, x, y, width, height, border)
        Spread::CopyTexImage2D => CopyCall {
            dest: dest(0),
            source: CopySource::ReadFramebuffer,
            rect: [0, 0, at(5), at(6)],
        },
        // (target or texture, level, xoffset, yoffset, x, y, width, height)
        Spread::CopyTexSubImage2D | Spread::CopyTextureSubImage2D => CopyCall {
            dest: dest(0),
            source: CopySource::ReadFramebuffer,
            rect: rect(2, 3, 6, 7)?,
        },
        // (target or texture, level, xoffset, yoffset, zoffset, x, y, width, height)
        Spread::CopyTexSubImage3D | Spread::CopyTextureSubImage3D => CopyCall {
            dest: dest(at(4)),
            source: CopySource::ReadFramebuffer,
            rect: rect(2, 3, 7, 8)?,
        },
        // (srcName, srcTarget, srcLevel, srcX, srcY, srcZ,
        //  dstName, dstTarget, dstLevel, dstX, dstY, dstZ, srcWidth, srcHeight, srcDepth):
        // a copy of several slices is spread over the first one's texels.
        Spread::CopyImageSubData => CopyCall {
            dest: CopyDest::Named {
                name: at(6),
                target: at(7),
                level: at(8),
                layer: at(11),
            },
            source: CopySource::Object(if at(1) == RENDERBUFFER {
                Attachment::Renderbuffer { name: at(0) }
            } else {
                Attachment::Texture {
                    name: at(0),
                    level: at(2),
                    layer: at(5),
                }
            }),
            rect: rect(9, 10, 12, 13)?,
        },
        Spread::Dispatch | Spread::Blit | Spread::BlitNamed => return None,
    })
}

/// Which kind of [`leave_spread`] call.
#[derive(Clone, Copy)]
pub enum Spread {
    /// `glDispatchCompute*`.
    Dispatch,
    /// `glBlitFramebuffer` (and its extension aliases).
    Blit,
    /// `glBlitNamedFramebuffer` (GL 4.5): its framebuffers named in its arguments.
    BlitNamed,
    /// `glCopyTexImage2D` (and its aliases).
    CopyTexImage2D,
    /// `glCopyTexSubImage2D` (and its aliases).
    CopyTexSubImage2D,
    /// `glCopyTexSubImage3D` (and its aliases).
    CopyTexSubImage3D,
    /// `glCopyImageSubData` (and its aliases).
    CopyImageSubData,
    /// `glCopyTextureSubImage2D` (GL 4.5): its texture named in its arguments.
    CopyTextureSubImage2D,
    /// `glCopyTextureSubImage3D` (GL 4.5).
    CopyTextureSubImage3D,
}

/// [`leave`] for the calls that copy the program's memory into GL (build.rs's
/// `upload_spec`): after the call is recorded (so its time does not include ours), the bytes
/// it read and their hash.
#[inline(never)]
pub fn leave_upload(g: Guard, args: &[u64], spec: &uploads::Spec) {
    let (skip, ctx, seq, frame) = (g.skip, g.ctx, g.seq, g.frame);
    leave(g, args, None);
    if skip {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the arguments the program just passed to the real upload function, which
        // read the memory they describe; `ctx` is current on this thread.
        unsafe { uploads::record(spec, frame, seq, ctx, args) }
    }));
}

/// glGetString, after the real call: the program asked for the renderer or the version.
pub fn string_queried(name: u64, _: u64) {
    use gpuheat_counters::gl::{RENDERER, VERSION};
    if !from_program() {
        return;
    }
    match name as u32 {
        RENDERER => capture::note_renderer_query(capture::ASKED_RENDERER),
        VERSION => capture::note_renderer_query(capture::ASKED_VERSION),
        _ => {}
    }
}

/// glGetStringi, after the real call.
pub fn stringi_queried(_: u64, _: u64) {
    if from_program() {
        capture::note_renderer_query(capture::ASKED_STRINGI);
    }
}

thread_local! {
    /// The time of the last work call this thread bracketed, for [`leave_draw`] and
    /// [`leave_spread`]: its serialized time, or, timed deferred, its timestamp pair.
    static LAST_WEIGHT: Cell<Option<Weight>> = const { Cell::new(None) };
}

/// Before every swap: the frame's heat map is finished while its colour buffer is intact,
/// and a block left open is closed.
pub fn before_swap() {
    if !recording() {
        return;
    }
    if let Some(open) = BLOCK.with(|b| b.borrow_mut().take()) {
        abandon(open);
    }
    if !capture::heat() {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(|| runtime::heat_frame_end(recorder::current_context()));
}

/// eglGetProcAddress & co (and `dlsym`), called from `site`: hands out our wrapper and
/// remembers the real function behind it. The GL stack's own lookups get the real answer.
pub fn proc_address(name: usize, real_fn: usize, site: u64) -> usize {
    if name == 0 || real_fn == 0 || real::in_gl_stack(site as usize) {
        return real_fn;
    }
    let out = catch_unwind(|| {
        // SAFETY: GetProcAddress takes a NUL-terminated string.
        let bytes = unsafe { std::ffi::CStr::from_ptr(name as *const libc::c_char) }.to_bytes();
        match table::index_of(bytes) {
            Some(i) => {
                real::set_if_unset(i, real_fn);
                wrapper_address(i)
            }
            None => real_fn,
        }
    })
    .unwrap_or(real_fn);
    if out != real_fn {
        // Calls may now reach the wrapper without ever resolving through it.
        launch();
    }
    out
}

/// eglMakeCurrent & co, before the real call: the context being left still holds the
/// offscreen maps it painted, its geometry replays and the results of its calls timed
/// deferred, read back now while it is current.
pub fn before_make_current() {
    if !recording() || capture::mode() != gpuheat_session::CaptureMode::Full {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(|| contexts::switching_away(recorder::current_context()));
}

/// eglMakeCurrent & co, after the real call: remember which context this thread now uses.
pub fn made_current(ctx: u64, ok: u64) {
    if ok != 0 {
        recorder::made_current(ctx);
    }
}

fn from_program() -> bool {
    recorder::from_program()
}

/// glBeginQuery & co: the program's own active queries must never collide with ours.
pub fn query_began(target: u64, _: u64) {
    if !from_program() {
        return;
    }
    let ctx = recorder::current_context();
    let _ = catch_unwind(|| contexts::note_program_query(ctx, target as u32, true));
}

/// glEndQuery & co.
pub fn query_ended(target: u64, _: u64) {
    if !from_program() {
        return;
    }
    let ctx = recorder::current_context();
    let _ = catch_unwind(|| contexts::note_program_query(ctx, target as u32, false));
}

/// glGetIntegerv & co, after the real call: the program reading GL_GPU_DISJOINT_EXT gets the
/// disjoint events our own reads consumed.
pub fn got_value(pname: u32, data: usize, width: usize) {
    if pname != GPU_DISJOINT_EXT || data == 0 || !from_program() {
        return;
    }
    let ctx = recorder::current_context();
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

/// glLinkProgram & co, after the real call: the program's PROG record (named by its
/// shaders' sources, read while they are still attached) and, for geometry capture, a new
/// generation of its shadow with those sources. Only once a CLI has connected (before that,
/// in launch mode without a CLI, the agent makes no GL call of its own), and then also while
/// detached, for the next connection. Links are rare: the few queries stay off the hot path.
pub fn program_linked(program: u64, _: u64) {
    if !from_program() || !runtime::has_connected() {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(|| {
        let program = program as u32;
        let sources = contexts::attached_sources(program);
        programs::linked(recorder::current_context(), program, sources.as_deref());
        if crate::config::geometry_budget() > 0 {
            contexts::program_linked(program, sources);
        }
    });
}

/// glDeleteProgram & co: the name may come back as another program.
pub fn program_deleted(program: u64, _: u64) {
    if !from_program() {
        return;
    }
    let _ = catch_unwind(|| {
        contexts::program_deleted(program as u32);
        // Nothing was named before a CLI connected (and asking which context is current
        // would be the agent's first call into the window system).
        if runtime::has_connected() {
            programs::deleted(recorder::current_context(), program as u32);
        }
    });
}

/// The OpenVG calls that build paths (entry point `i`, its arguments as recorded, its
/// result), after the real call, captured or not: the agent keeps every path's data.
pub fn vg_path(i: usize, args: &[u64], ret: u64) {
    if !from_program() {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(|| {
        let name = NAMES[i].trim_end_matches('\0');
        // SAFETY: the arguments the program just passed to the real call, which read them.
        unsafe { vgpaths::changed(recorder::current_context(), name, args, ret) };
    });
}

/// A `glBegin`…`glEnd` block of the program being drawn on this thread
/// ([`immediate_begin`]): a draw that no call's arguments describe, timed from before its
/// `glBegin` to after its `glEnd` (no query may be issued between) and recorded in `glEnd`'s
/// place.
struct OpenBlock {
    ctx: u64,
    /// The place of its `glBegin`, where the bracket lands if its `glEnd` never comes.
    frame: u64,
    seq: u32,
    bracket: Option<Bracket>,
    /// With heat or geometry, which run it again: the display list recording it.
    list: Option<gpuheat_counters::immediate::Block>,
    /// Its recording ended (at its glEnd): a second `glEndList` would be an error the
    /// program sees.
    closed: bool,
    /// Its `glBegin`'s mode.
    mode: u32,
}

thread_local! {
    static BLOCK: std::cell::RefCell<Option<OpenBlock>> = const { std::cell::RefCell::new(None) };
}

/// glBegin, after [`enter`] and before the real call: a block of the program's own (not
/// compiled into its display list, not inside another block) opens its bracket and, where
/// heat or geometry will run it again, its recording. The guard's clocks start again after
/// our work, which is no part of the program's glBegin.
pub fn immediate_begin(g: &mut Option<Guard>, args: &[u64]) {
    let Some(g) = g.as_mut().filter(|g| !g.skip) else {
        return;
    };
    if !from_program() || !recorder::may_bracket() {
        return;
    }
    let Some(inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let nested = vg::inside();
        let record = !nested && (capture::heat() || capture::geometry());
        let (bracket, list) = contexts::begin_block(g.ctx, !nested, record);
        end_if_abandoned(bracket.is_some());
        if bracket.is_some() || list.is_some() {
            let block = OpenBlock {
                ctx: g.ctx,
                frame: g.frame,
                seq: g.seq,
                bracket,
                list,
                closed: false,
                // GLenum, recorded widened.
                mode: args.first().map_or(0, |&m| m as u32),
            };
            if let Some(stale) = BLOCK.with(|b| b.borrow_mut().replace(block)) {
                abandon(stale);
            }
        }
    }));
    drop(inside);
    if g.c0 != 0 {
        g.c0 = thread_cpu_ns();
    }
    g.begin = ticks();
}

/// glBegin, after the real call: no query may be issued until glEnd.
pub fn primitive_began(_: u64, _: u64) {
    if recording() && from_program() {
        recorder::set_in_primitive(true);
    }
}

/// glEnd, after the real call: the block's recording ends, inside the glEnd's time (Mesa runs
/// a block compiled and executed when its list ends).
pub fn primitive_ended(_: u64, _: u64) {
    if !from_program() {
        return;
    }
    recorder::set_in_primitive(false);
    // A block opens only while recording, and recording changes only at a swap.
    if !recording() {
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(|| {
        BLOCK.with(|b| {
            let mut b = b.borrow_mut();
            let Some(open) = b.as_mut().filter(|o| o.ctx == recorder::current_context()) else {
                return;
            };
            if let (Some(list), Some(f), false) =
                (open.list.as_ref(), contexts::list_fns(), open.closed)
            {
                // SAFETY: the block's context is current, after its glEnd.
                unsafe { list.close(f) };
                open.closed = true;
            }
        })
    });
}

/// glEnd, last: the call recorded with the block's bracket (begun before its glBegin), its
/// heat painted and its geometry recorded by running the recorded block again.
pub fn leave_immediate(g: Option<Guard>, args: &[u64]) {
    // Not recording: no block was opened (a stale one is closed at the swap).
    let Some(mut g) = g else {
        return;
    };
    let open = BLOCK.with(|b| b.borrow_mut().take());
    // The block's own glEnd, its recording (where there is one) ended at it.
    let ours = |o: &OpenBlock| o.ctx == g.ctx && !g.skip && (o.closed || o.list.is_none());
    match open {
        Some(mut open) if ours(&open) => {
            g.bracket = open.bracket.take();
            match (open.list, contexts::list_fns()) {
                (Some(list), Some(f)) => {
                    // The calls between its glBegin and its glEnd (placed in order: the
                    // glEnd's place came after theirs), one at least per vertex.
                    let shape = (open.frame == g.frame).then(|| BlockShape {
                        mode: open.mode,
                        vertices_at_most: u64::from(g.seq.saturating_sub(open.seq + 1)),
                    });
                    // SAFETY: the block's context is current; its list ended at the glEnd.
                    leave_replayed(g, args, Rerun::Block(shape), &|| unsafe { list.replay(f) });
                    if let Some(_inside) = Reentry::enter() {
                        // SAFETY: as above.
                        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { list.delete(f) }));
                    }
                }
                // Nothing runs it again (no heat or geometry, or no list name was given):
                // timed only.
                _ => leave(g, args, None),
            }
        }
        other => {
            if let Some(open) = other {
                abandon(open);
            }
            leave(g, args, None);
        }
    }
}

/// A block whose glEnd the agent did not see on its context (a program that swaps or
/// switches contexts inside a block is in error; this only keeps ours from outliving it):
/// its recording ends where that is legal and its bracket closes on its glBegin's place.
fn abandon(open: OpenBlock) {
    if open.ctx != recorder::current_context() || recorder::in_primitive() {
        // Nothing of ours can be ended here without an error the program would see.
        return;
    }
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let (Some(list), Some(f)) = (open.list, contexts::list_fns()) {
            // SAFETY: the block's context is current, outside any block; its list is
            // still being compiled unless `closed`.
            unsafe {
                if !open.closed {
                    list.close(f);
                }
                list.delete(f);
            }
        }
        if let Some(b) = open.bracket {
            contexts::end(open.ctx, b, open.frame, open.seq);
        }
    }));
}

/// glNewList: calls until glEndList are compiled into the list, not run; a list made again
/// generates what geometry remembered of it no more.
pub fn list_began(_: u64, _: u64) {
    if from_program() {
        recorder::set_compiling_list(true);
        gpuheat_counters::geometry::lists_changed();
    }
}

/// glDeleteLists: a name made again later is another list.
pub fn lists_deleted(_: u64, _: u64) {
    if from_program() {
        gpuheat_counters::geometry::lists_changed();
    }
}

/// glEndList.
pub fn list_ended(_: u64, _: u64) {
    if from_program() {
        recorder::set_compiling_list(false);
    }
}

/// After every swap (`ok`: its result): frame accounting, starting and ending the capture.
pub fn swapped(ok: u64) {
    let Some(_inside) = Reentry::enter() else {
        return;
    };
    let _ = catch_unwind(|| runtime::frame_ended(ok != 0));
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_counters::gl::{RENDERBUFFER, TEXTURE_2D, TEXTURE_2D_ARRAY};

    /// Arguments as the wrappers record them: each widened to 64 bits from its 32-bit value.
    fn widened(args: &[i64]) -> Vec<u64> {
        args.iter().map(|&v| v as i32 as u32 as u64).collect()
    }

    #[test]
    fn copies_are_read_from_their_arguments() {
        let sub2d = widened(&[TEXTURE_2D as i64, 1, 3, 4, 10, 20, 30, 40]);
        assert_eq!(
            copy_call(Spread::CopyTexSubImage2D, &sub2d),
            Some(CopyCall {
                dest: CopyDest::Bound {
                    target: TEXTURE_2D,
                    level: 1,
                    layer: 0
                },
                source: CopySource::ReadFramebuffer,
                rect: [3, 4, 33, 44],
            })
        );
        // Direct state access: the texture by name, its kind asked at the painting.
        let dsa2d = widened(&[9, 1, 3, 4, 10, 20, 30, 40]);
        assert_eq!(
            copy_call(Spread::CopyTextureSubImage2D, &dsa2d),
            Some(CopyCall {
                dest: CopyDest::Texture {
                    name: 9,
                    level: 1,
                    layer: 0
                },
                source: CopySource::ReadFramebuffer,
                rect: [3, 4, 33, 44],
            })
        );
        let dsa3d = widened(&[9, 0, 1, 2, 4, 0, 0, 8, 8]);
        let c = copy_call(Spread::CopyTextureSubImage3D, &dsa3d).unwrap();
        assert_eq!(
            (c.dest, c.rect),
            (
                CopyDest::Texture {
                    name: 9,
                    level: 0,
                    layer: 4
                },
                [1, 2, 9, 10]
            )
        );
        let negative = widened(&[9, 0, 0, 0, 0, 0, -1, 8]);
        assert_eq!(copy_call(Spread::CopyTextureSubImage2D, &negative), None);
        let sub3d = widened(&[TEXTURE_2D_ARRAY as i64, 0, 0, 0, 5, 0, 0, 8, 8]);
        let c = copy_call(Spread::CopyTexSubImage3D, &sub3d).unwrap();
        assert_eq!(
            (c.dest, c.rect),
            (
                CopyDest::Bound {
                    target: TEXTURE_2D_ARRAY,
                    level: 0,
                    layer: 5
                },
                [0, 0, 8, 8]
            )
        );
        let image = widened(&[
            7,
            RENDERBUFFER as i64,
            0,
            0,
            0,
            0,
            9,
            TEXTURE_2D as i64,
            2,
            16,
            32,
            0,
            64,
            64,
            1,
        ]);
        assert_eq!(
            copy_call(Spread::CopyImageSubData, &image),
            Some(CopyCall {
                dest: CopyDest::Named {
                    name: 9,
                    target: TEXTURE_2D,
                    level: 2,
                    layer: 0
                },
                source: CopySource::Object(Attachment::Renderbuffer { name: 7 }),
                rect: [16, 32, 80, 96],
            })
        );
        // A negative size is an error the call raised: nothing was written.
        let negative = widened(&[TEXTURE_2D as i64, 0, 0, 0, 0, 0, -1, 4]);
        assert_eq!(copy_call(Spread::CopyTexSubImage2D, &negative), None);
        assert_eq!(copy_call(Spread::Blit, &negative), None);
    }
}
