//! Per-context counter state, created the first time a context is seen during a capture.

use crate::enums::{EGL_DRAW, EGL_HEIGHT, EGL_WIDTH, GLX_HEIGHT, GLX_WIDTH};
use crate::writer::Msg;
use crate::{capture, outbox, real, table};
use gpuheat_counters::geometry::{self, BlockShape, DrawCall};
use gpuheat_counters::gl::{ListFns, MatrixFns};
use gpuheat_counters::immediate::Block;
use gpuheat_counters::list_run::{ListRun, ListStart};
use gpuheat_counters::stages::{self, CallKind, StageCache, Stages};
use gpuheat_counters::{
    thermal, Bracket, ContextCounters, GeometryCapture, GeometryFns, GlFns, Painter, ProgramLink,
    ThermalFns, Weight,
};
use gpuheat_session::control::Timing;
use gpuheat_session::{
    ClientApi, ContextState, CounterValue, FrameGeometry, HeatMissing, PipelinedBatch, Record,
};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};

/// The agent's own GL function pointers: the real implementations behind the wrappers, so
/// our calls never pass through them.
static GL: OnceLock<Option<GlFns>> = OnceLock::new();

#[derive(Default)]
struct Entry {
    counters: Option<ContextCounters>,
    /// What captures have run on this context so far ([`WARM_FULL`], [`WARM_HEAT`],
    /// [`WARM_GEOMETRY`], [`WARM_TIMELINE`]): a capture that asks for nothing more needs no
    /// warm-up.
    warm: u8,
    /// Query targets the program has active (all targets, not only the counters' ones).
    program_queries: Vec<u32>,
    /// The draw surface's size, when the window system told us.
    surface: Option<[u32; 2]>,
    /// Thermal painting of captured frames (`--heat`).
    painter: Option<Painter>,
    /// Post-transform positions of captured draws (full mode).
    geometry: Option<GeometryCapture>,
    /// The stages of the programs its draws ran, for the statistics worth asking about.
    stages: StageCache,
    /// The capture's first drain on this context was preceded by a bounded wait
    /// ([`caught_up`]); cleared at each capture's start ([`capture_starts`]).
    caught_up: bool,
}

/// Geometry capture's extra real GL functions (`Err`: why there are none).
fn geometry_fns() -> Result<&'static GeometryFns, String> {
    let gl = gl().ok_or("the real GL functions could not be loaded")?;
    gl.geometry.as_ref().map_err(Clone::clone)
}

/// What the agent saw of each program name's links, across contexts: programs of sharing
/// contexts share names, and an over-eager invalidation only costs a rebuild. Names of
/// unrelated contexts can collide; the latest link wins (a known limit).
static LINKS: OnceLock<Mutex<HashMap<u32, ProgramLink>>> = OnceLock::new();
/// Generations handed out to links and deletions (0 means "never seen").
static LINK_GENERATION: AtomicU64 = AtomicU64::new(1);

fn links() -> std::sync::MutexGuard<'static, HashMap<u32, ProgramLink>> {
    LINKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The stage and source (without its NUL) of each shader attached to `program`, read with
/// queries that raise no GL error (`None`: not a program, no shader attached, a binary
/// shader, or the functions to read them are missing). The program's context must be current.
pub fn attached_sources(program: u32) -> Option<Vec<(u32, CString)>> {
    match (thermal_fns(), geometry_fns()) {
        // SAFETY: our callers run on the program's thread with its context current.
        (Ok(t), Ok(g)) => unsafe { geometry::link_sources(t, g, program) },
        _ => None,
    }
}

/// The program `program` was just linked (or loaded from a binary) by the program: a new
/// generation for geometry capture, with its shaders' sources (read at the link, while they
/// were still attached).
pub fn program_linked(program: u32, sources: Option<Vec<(u32, CString)>>) {
    let generation = LINK_GENERATION.fetch_add(1, Relaxed);
    links().insert(
        program,
        ProgramLink {
            generation,
            sources: sources.map(Arc::from),
        },
    );
}

/// The program deleted `program`: whatever comes next under that name is another program.
pub fn program_deleted(program: u32) {
    let generation = LINK_GENERATION.fetch_add(1, Relaxed);
    links().insert(
        program,
        ProgramLink {
            generation,
            sources: None,
        },
    );
}

fn link_of(program: u32) -> ProgramLink {
    links().get(&program).cloned().unwrap_or_default()
}

/// The geometry capture of `ctx`, created the first time (checking the context can do it).
fn geometry_capture<'a>(entry: &'a mut Entry, ctx: u64, gl: &GlFns) -> &'a mut GeometryCapture {
    if entry.geometry.is_none() {
        capture::note_setup(format!("made the geometry capture of context {ctx:#x}"));
        let c = counters(entry, ctx, gl);
        let (api, major, minor) = c.api_version();
        let support = geometry::support(api, major, minor, |e| c.has_extension(e))
            .and_then(|relaxed| thermal_fns().and(geometry_fns()).map(|_| relaxed));
        entry.geometry = Some(
            GeometryCapture::new(api, major, minor, support, crate::config::geometry_budget())
                .with_vertex_program_arb(c.has_extension("GL_ARB_vertex_program"))
                .with_fixed_function(has_fixed_function(c)),
        );
    }
    entry.geometry.as_mut().expect("geometry")
}

/// Records the post-transform positions of draw `call` of `frame` (`name`, `args`: the
/// entry point and its arguments; `replay` re-issues it; `start`: for a display list call,
/// the matrices it started from; `block`: for a `glEnd`, what the agent saw of its block).
/// `deferred`: the draw was timed deferred, so the replay neither waits for the GPU nor is
/// drained after.
#[allow(clippy::too_many_arguments)]
pub fn geometry(
    ctx: u64,
    frame: u64,
    call: u32,
    name: &str,
    args: &[u64],
    (start, block): (Option<&ListStart>, Option<BlockShape>),
    deferred: bool,
    replay: &dyn Fn(),
) {
    let Some(gl) = gl() else { return };
    with_entry(ctx, |e| {
        let program_query = counting_query(e);
        let capture = geometry_capture(e, ctx, gl);
        match (thermal_fns(), geometry_fns()) {
            // SAFETY: `ctx` is current on this thread; `replay` re-issues `name(args)`; `gl`
            // holds its real functions.
            (Ok(t), Ok(g)) => unsafe {
                capture.capture(
                    t,
                    g,
                    frame,
                    ctx,
                    call,
                    DrawCall {
                        name,
                        args,
                        list: matrix_fns().map(|fns| ListRun { fns, start }),
                        block,
                    },
                    program_query,
                    deferred,
                    &link_of,
                    replay,
                );
                // Drained now, as the draw itself was by its serialized bracket (geometry is
                // full mode's), so the next draw meets the GPU as it would without geometry.
                // Left to the next draw's bracket, the replay changed that draw's measured
                // time: in hot_spot captures, the layers that followed a replay measured
                // 0.64-0.66 ms in 2 of 5 captures, the first layer (after a clear, no
                // replay) 1.06-1.28 ms; the diff tests saw it as a change between captures
                // of the same program. A deferred draw's next one is not drained either: its
                // "before" timestamp is written once the replay is done.
                if !deferred {
                    (gl.finish)();
                    gpuheat_counters::waits::note();
                }
            },
            (Err(why), _) | (_, Err(why)) => capture.missing_draw(frame, ctx, call, why),
        }
    });
}

/// The painter's real GL functions (`Err`: why there are none).
fn thermal_fns() -> Result<&'static ThermalFns, String> {
    let gl = gl().ok_or("the real GL functions could not be loaded")?;
    gl.thermal.as_ref().map_err(Clone::clone)
}

/// The painter of `ctx`, created the first time (checking the context can host it).
fn painter<'a>(entry: &'a mut Entry, ctx: u64, gl: &GlFns) -> &'a mut Painter {
    if entry.painter.is_none() {
        capture::note_setup(format!("made the heat painter of context {ctx:#x}"));
        let surface = entry.surface;
        let c = counters(entry, ctx, gl);
        let (api, major, minor) = c.api_version();
        let unsupported = thermal::support(api, major, minor, |e| c.has_extension(e))
            .err()
            .or_else(|| thermal_fns().err());
        let stencil = thermal::stencil_readable(api, |e| c.has_extension(e));
        let mut p = Painter::new(api, unsupported, surface, stencil);
        p.set_compatibility(has_fixed_function(c));
        p.set_write_checks(gpuheat_counters::writes::supported(
            api,
            (major, minor),
            |e| c.has_extension(e),
        ));
        p.set_weighting(weighs_on_gpu(c));
        p.set_tallying(gpuheat_counters::tally::supported(
            api,
            (major, minor),
            |e| c.has_extension(e),
            storage_blocks(gl, api, (major, minor), FRAGMENT_STORAGE_BLOCKS),
        ));
        p.set_tally_resolve(gpuheat_counters::tally::resolves_on_gpu(
            crate::config::tally_on_gpu(),
            c.software(),
            storage_blocks(gl, api, (major, minor), VERTEX_STORAGE_BLOCKS),
        ));
        p.set_stencil_sampling(gpuheat_counters::weights::stencil_sampling(
            api,
            (major, minor),
            |e| c.has_extension(e),
        ));
        p.set_gpu_boxes(gpuheat_counters::weights::gpu_boxes(
            api,
            (major, minor),
            c.software(),
        ));
        entry.painter = Some(p);
    }
    entry.painter.as_mut().expect("painter")
}

static CONTEXTS: OnceLock<Mutex<HashMap<u64, Entry>>> = OnceLock::new();

/// The real function called `name` (null when no loaded library has it), for the loaders of
/// the agent's own GL function tables.
fn real_fn(name: &std::ffi::CStr) -> *const std::ffi::c_void {
    real::by_name(name).unwrap_or_else(|| real::proc_address(name)) as *const std::ffi::c_void
}

pub(crate) fn gl() -> Option<&'static GlFns> {
    GL.get_or_init(|| {
        // SAFETY: the loader returns real function pointers or null.
        // The real implementations, not the program's entry points: once the dispatch table
        // is hooked, those lead back into our wrappers.
        unsafe { GlFns::load(real_fn) }.ok()
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
        capture::note_setup(format!(
            "measured context {ctx:#x} (its counters and brackets)"
        ));
        // SAFETY: `ctx` is current on this thread.
        let mut c = unsafe { ContextCounters::new(gl, ctx) };
        for &t in &entry.program_queries {
            c.note_program_query(t, true);
        }
        outbox::send_record(Record::Context(c.info()));
        c
    })
}

/// The CTX records of every context measured so far, for a new connection: a context is
/// measured once per process, but each session needs its description.
pub fn known() -> Vec<Record> {
    let Some(map) = CONTEXTS.get() else {
        return Vec::new();
    };
    let map = map.lock().unwrap_or_else(|e| e.into_inner());
    map.values()
        .filter_map(|e| e.counters.as_ref())
        .map(|c| Record::Context(c.info()))
        .collect()
}

/// A timeline capture ran on the context.
pub const WARM_TIMELINE: u8 = 1;
/// A full-mode capture ran on it (its queries begun, so the driver has their shader variants).
pub const WARM_FULL: u8 = 2;
/// It was painted.
pub const WARM_HEAT: u8 = 4;
/// Its geometry was recorded.
pub const WARM_GEOMETRY: u8 = 8;

/// The warm bits a capture with `settings` needs.
pub fn warm_bits(settings: capture::Settings) -> u8 {
    let full = settings.mode == gpuheat_session::CaptureMode::Full;
    let mut bits = if full { WARM_FULL } else { WARM_TIMELINE };
    if full && settings.heat {
        bits |= WARM_HEAT;
    }
    if full && settings.geometry {
        bits |= WARM_GEOMETRY;
    }
    bits
}

/// Whether captures with every one of `bits` have run on `ctx` (a frame of theirs ended).
pub fn is_warm(ctx: u64, bits: u8) -> bool {
    ctx != 0 && with_entry(ctx, |e| e.counters.is_some() && e.warm & bits == bits)
}

/// A frame of a capture needing `bits` ended on `ctx`.
pub fn mark_warm(ctx: u64, bits: u8) {
    if ctx != 0 {
        with_entry(ctx, |e| e.warm |= bits);
    }
}

/// Measures `ctx` ahead of its first captured draw.
pub fn prepare(ctx: u64) {
    if ctx == 0 {
        return;
    }
    if let Some(gl) = gl() {
        with_entry(ctx, |e| {
            if caught_up(e, gl) {
                counters(e, ctx, gl);
            }
        });
    }
}

/// A capture starts: its first drain on each context waits for the program's backlog, bounded,
/// again ([`caught_up`]). Before the start swap measures the context (launch mode), so that
/// this wait is the start's first-time work, which belongs to no frame.
pub fn capture_starts() {
    if let Some(map) = CONTEXTS.get() {
        let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
        map.values_mut().for_each(|e| e.caught_up = false);
    }
}

/// Longest the agent lets a capture's first drain on a context wait for work the program
/// queued before it ([`caught_up`]). A program that waits for its frames is a few frames
/// ahead at most (a second on llvmpipe's slowest scenes here); one that never waits can be
/// minutes ahead.
const BACKLOG_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Before the first drain of this capture on `e`'s context (current here): waits at most
/// [`BACKLOG_LIMIT`] for the GPU to finish what the program queued. Past it, the capture is
/// abandoned (every bracket would wait behind that backlog, freezing the program) and
/// `false` returned; contexts without fences go on as before.
fn caught_up(e: &mut Entry, gl: &GlFns) -> bool {
    if std::mem::replace(&mut e.caught_up, true) {
        return true;
    }
    // SAFETY: `e`'s context is current on this thread (our callers' promise).
    let backlog = unsafe { gpuheat_counters::backlog::wait_bounded(gl, BACKLOG_LIMIT) };
    if backlog != gpuheat_counters::backlog::Backlog::Behind {
        return true;
    }
    capture::abandon(format!(
        "the GPU was more than {} s behind the program when the capture began (its frames \
         are queued, not drawn: it never waits for them); measuring would have frozen it that \
         long. Capture it from its start with `gpuheat run`, or make it wait for its frames \
         (a swap to a window, glFinish or a fence)",
        BACKLOG_LIMIT.as_secs()
    ));
    false
}

/// What the program bound before the capture: current program, vertex array, buffers,
/// framebuffers, viewport, the draw surface's size when `query_surface` (the EGL query
/// resets the thread's EGL error, so only right after a successful swap), and the default
/// framebuffer's samples, depth and stencil bits, depth test, blending, culling and 2D
/// texture bindings (`facts::start_facts`, which keeps the program's GL error). Only on GL and
/// GLES 3.0+, where every queried name exists, so no query can raise a GL error.
pub fn snapshot(ctx: u64, frame: u64, query_surface: bool) -> Option<ContextState> {
    use gpuheat_counters::gl::{
        ARRAY_BUFFER_BINDING, CURRENT_PROGRAM, DRAW_FRAMEBUFFER_BINDING,
        ELEMENT_ARRAY_BUFFER_BINDING, READ_FRAMEBUFFER_BINDING, VERTEX_ARRAY_BINDING, VIEWPORT,
    };
    if ctx == 0 {
        return None;
    }
    let gl = gl()?;
    let (api, major, _) = with_entry(ctx, |e| e.counters.as_ref().map(|c| c.api_version()))?;
    if major < 3 || api == ClientApi::Vg {
        return None;
    }
    // SAFETY: the context is current on this thread; every name exists in GL/GLES 3.0+.
    let get = |name: u32| unsafe { gl.integer(name) } as u32;
    let surface = query_surface
        .then(egl_surface_size)
        .flatten()
        .or_else(glx_surface_size);
    if let Some(size) = surface {
        with_entry(ctx, |e| {
            e.surface = Some(size);
            if let Some(p) = e.painter.as_mut() {
                p.set_surface(size);
            }
        });
    }
    let mut viewport = [0i32; 4];
    // SAFETY: GL_VIEWPORT writes four integers.
    unsafe { (gl.get_integerv)(VIEWPORT, viewport.as_mut_ptr()) };
    // SAFETY: the context is current on this thread and is GL or GLES 3.0+.
    let facts = thermal_fns()
        .map(|t| unsafe { gpuheat_counters::facts::start_facts(t) })
        .unwrap_or_default();
    Some(ContextState {
        context: ctx,
        frame,
        program: get(CURRENT_PROGRAM),
        vertex_array: get(VERTEX_ARRAY_BINDING),
        array_buffer: get(ARRAY_BUFFER_BINDING),
        element_array_buffer: get(ELEMENT_ARRAY_BUFFER_BINDING),
        draw_framebuffer: get(DRAW_FRAMEBUFFER_BINDING),
        read_framebuffer: get(READ_FRAMEBUFFER_BINDING),
        viewport,
        surface,
        samples: facts.samples,
        sample_buffers: facts.sample_buffers,
        depth_bits: facts.depth_bits,
        stencil_bits: facts.stencil_bits,
        depth_test: facts.depth_test,
        blend: facts.blend,
        cull_face: facts.cull_face,
        active_texture: facts.active_texture,
        texture_2d: facts.texture_2d,
    })
}

/// Width and height of the current EGL draw surface.
fn egl_surface_size() -> Option<[u32; 2]> {
    // Only a program that swaps through EGL has an EGL surface; a GLX program must not be
    // sent into an EGL library it never initialised.
    let swaps_with_egl = table::index_of(b"eglSwapBuffers").is_some_and(|i| real::raw(i) != 0);
    if !swaps_with_egl {
        return None;
    }
    let display = real::by_name(c"eglGetCurrentDisplay")?;
    let surface = real::by_name(c"eglGetCurrentSurface")?;
    let query = real::by_name(c"eglQuerySurface")?;
    // SAFETY: the real EGL functions, with their C signatures.
    unsafe {
        let display: unsafe extern "C" fn() -> usize = std::mem::transmute(display);
        let surface: unsafe extern "C" fn(i32) -> usize = std::mem::transmute(surface);
        let query: unsafe extern "C" fn(usize, usize, i32, *mut i32) -> u32 =
            std::mem::transmute(query);
        let (d, s) = (display(), surface(EGL_DRAW));
        if d == 0 || s == 0 {
            return None;
        }
        let (mut w, mut h) = (0, 0);
        (query(d, s, EGL_WIDTH, &mut w) != 0 && query(d, s, EGL_HEIGHT, &mut h) != 0)
            .then_some([w as u32, h as u32])
    }
}

/// Width and height of the current GLX drawable (GLX has no error state a query could reset).
fn glx_surface_size() -> Option<[u32; 2]> {
    // Only a program that swaps through GLX has a GLX drawable.
    let swaps_with_glx = table::index_of(b"glXSwapBuffers").is_some_and(|i| real::raw(i) != 0);
    if !swaps_with_glx {
        return None;
    }
    let display = real::by_name(c"glXGetCurrentDisplay")?;
    let drawable = real::by_name(c"glXGetCurrentDrawable")?;
    let query = real::by_name(c"glXQueryDrawable")?;
    // SAFETY: the real GLX functions, with their C signatures.
    unsafe {
        let display: unsafe extern "C" fn() -> usize = std::mem::transmute(display);
        let drawable: unsafe extern "C" fn() -> usize = std::mem::transmute(drawable);
        let query: unsafe extern "C" fn(usize, usize, i32, *mut u32) = std::mem::transmute(query);
        let (d, w) = (display(), drawable());
        if d == 0 || w == 0 {
            return None;
        }
        let (mut width, mut height) = (0, 0);
        query(d, w, GLX_WIDTH, &mut width);
        query(d, w, GLX_HEIGHT, &mut height);
        (width > 0 && height > 0).then_some([width, height])
    }
}

/// The limit on storage blocks of one shader stage (the fragment's or the vertex's).
const FRAGMENT_STORAGE_BLOCKS: u32 = gpuheat_counters::gl::MAX_FRAGMENT_SHADER_STORAGE_BLOCKS;
const VERTEX_STORAGE_BLOCKS: u32 = gpuheat_counters::gl::MAX_VERTEX_SHADER_STORAGE_BLOCKS;

/// How many storage blocks a shader stage (its limit's name `stage`) of the current context
/// (`api`, `version`) may use: GLES 3.1 and GL 4.3 allow none (0 before them, where it is
/// not asked).
fn storage_blocks(gl: &GlFns, api: ClientApi, version: (u32, u32), stage: u32) -> i32 {
    let since = match api {
        ClientApi::Gles => (3, 1),
        ClientApi::Gl => (4, 3),
        ClientApi::Vg | ClientApi::Vulkan => return 0,
    };
    if version < since {
        return 0;
    }
    // SAFETY: the context is current on this thread (the painter is made there), and both
    // names exist in GLES 3.1 and GL 4.3.
    unsafe { gl.integer(stage) }
}

/// Whether heat of `c`'s draws timed deferred is weighted on the GPU.
fn weighs_on_gpu(c: &ContextCounters) -> bool {
    let (api, major, minor) = c.api_version();
    gpuheat_counters::weights::gpu_weighting(api, (major, minor), |e| c.has_extension(e))
}

/// Before a work call. `may_defer`: nothing needs the call's time before its frame ends (it
/// is not a VG call's child, whose time its parent sums). It is then timed deferred when the
/// capture's timing allows it here: while painting heat, a draw only on a context whose
/// painter paints draws timed deferred (weighed on the GPU, or tallied; elsewhere the painter
/// needs the time at once), a call whose time the map `spreads` over its place (a dispatch, a
/// blit, a copy) on any (the flush adds it to the map read back); only on the thread that swaps (its
/// contexts' results are read at the swap, or when it makes another context current, before
/// the frame is written); with `Timing::Auto`, where the renderer's timestamps bracket a
/// call's own work. A warm-up frame without heat times deferred wherever it may: its times
/// are dropped, and the wait per call of isolated timing is no first-time work (the queries,
/// their shader variants and the timestamp pairs are the same), so the warm-up costs about
/// the program's own frame instead of a full-mode one (neverball on llvmpipe: 56 against
/// 135-160 ms). With heat, the painter's isolated path would be left cold.
///
/// A call of `kind` is asked only for the statistics it can move (`stages.rs`): a draw's
/// program's stages are read once per program and capture.
pub fn begin(ctx: u64, may_defer: bool, spreads: bool, kind: CallKind) -> Option<Bracket> {
    if ctx == 0 {
        return None;
    }
    let gl = gl()?;
    let mode = capture::mode();
    let heat = capture::heat();
    let may_defer = may_defer && capture::on_swap_thread();
    let timing = if !heat && capture::is_warmup(capture::frame()) {
        Timing::Deferred
    } else {
        capture::timing()
    };
    with_entry(ctx, |e| {
        if !caught_up(e, gl) {
            return None;
        }
        let idle = if mode == gpuheat_session::CaptureMode::Full {
            idle_counters(e, ctx, gl, kind)
        } else {
            0
        };
        // A spread's time is added at the flush on any painter: a uniform share of the place.
        let paints_deferred = !heat || !may_defer || spreads || painter(e, ctx, gl).defers();
        let c = counters(e, ctx, gl);
        let deferred = may_defer
            && paints_deferred
            && match timing {
                Timing::Auto => c.pipelined_meaningful(),
                Timing::Isolated => false,
                Timing::Deferred => true,
            };
        // SAFETY: `ctx` is current on this thread.
        Some(unsafe { c.begin(gl, mode, deferred, idle) })
    })
}

/// Whether the context has the fixed-function pipeline: immediate mode, the matrices, and the
/// state (alpha test, clip planes) that applies to any shader's output. A compatibility
/// profile (Mesa and NVIDIA name it by `GL_ARB_compatibility`), or GL before 3.1, which had
/// no other kind.
fn has_fixed_function(c: &ContextCounters) -> bool {
    let (api, major, minor) = c.api_version();
    api == ClientApi::Gl && ((major, minor) < (3, 1) || c.has_extension("GL_ARB_compatibility"))
}

/// Before a `glBegin` of the program on `ctx` (current here, outside any block and any list
/// being compiled): where the context has immediate mode (a compatibility context, or GL
/// before 3.1), the block's bracket and, when `record` (heat or geometry will run it again),
/// the display list recording it ([`gpuheat_counters::immediate`]). The list opens after the
/// bracket began: its name's lookup is no part of the block's time.
pub fn begin_block(ctx: u64, may_defer: bool, record: bool) -> (Option<Bracket>, Option<Block>) {
    let Some(gl) = gl().filter(|_| ctx != 0) else {
        return (None, None);
    };
    let immediate = with_entry(ctx, |e| has_fixed_function(counters(e, ctx, gl)));
    if !immediate {
        return (None, None);
    }
    let bracket = begin(ctx, may_defer, false, CallKind::Draw);
    let list = match gl.lists.as_ref() {
        // SAFETY: `ctx` is a compatibility context current here, outside any block and list
        // (our caller's promise); the program's glBegin follows.
        Ok(f) if record => unsafe { Block::open(f) },
        _ => None,
    };
    (bracket, list)
}

/// The display-list functions of [`begin_block`]'s lists.
pub fn list_fns() -> Option<&'static ListFns> {
    gl()?.lists.as_ref().ok()
}

/// The matrix and attribute stack functions a display list's replay saves and restores.
fn matrix_fns() -> Option<&'static MatrixFns> {
    gl()?.matrices.as_ref().ok()
}

/// Before the program's `glCallList(s)` on `ctx` (current here, outside `glBegin`/`glEnd`):
/// the matrices it starts from, which heat and geometry run the list again from (`None` on a
/// context without the fixed-function matrices, where the call is an error anyway).
pub fn list_start(ctx: u64) -> Option<ListStart> {
    let (gl, m, t) = (gl()?, matrix_fns()?, thermal_fns().ok()?);
    if ctx == 0 || !with_entry(ctx, |e| has_fixed_function(counters(e, ctx, gl))) {
        return None;
    }
    // SAFETY: `ctx` is a compatibility context current here, outside glBegin/glEnd (our
    // caller's promise): the matrix queries raise no error.
    Some(unsafe { ListStart::read(t, m) })
}

/// Runs `replay` (the program's display list call again, for heat) as the program's call
/// ran: from `start`, its matrices and attributes put back as the call left them (a list
/// that translates with no push and pop would otherwise move the program's next draws).
/// Nothing runs when the state cannot be saved.
pub fn run_list(start: Option<&ListStart>, replay: &dyn Fn()) {
    let (Some(fns), Ok(t)) = (matrix_fns(), thermal_fns()) else {
        return;
    };
    // SAFETY: a compatibility context is current (the program just called a list in it),
    // outside glBegin/glEnd, inside the painter's error scope; `replay` calls the list.
    let _ = unsafe { ListRun { fns, start }.run(t, replay) };
}

/// The counters a call of `kind` on `ctx` (current here) cannot move
/// ([`stages::idle_counters`]); a draw's program's stages from the entry's cache. Contexts
/// without pipeline statistics (GLES) ask nothing.
fn idle_counters(e: &mut Entry, ctx: u64, gl: &GlFns, kind: CallKind) -> u32 {
    let c = counters(e, ctx, gl);
    if !c.has_statistics() {
        return 0;
    }
    let (asked, pipelines) = (c.counted_stages(), c.has_pipelines());
    let stages = match (kind, thermal_fns()) {
        (CallKind::Draw, Ok(t)) => {
            // SAFETY: `ctx` is current on this thread and counts pipeline statistics
            // (desktop GL 3.0+).
            unsafe {
                e.stages
                    .current(t, asked, capture::generation(), pipelines, &|p| {
                        link_of(p).generation
                    })
            }
        }
        _ => Stages::ALL,
    };
    stages::idle_counters(kind, stages)
}

/// The results of `ctx`'s calls timed deferred (one wait for all), for the writer: their
/// values as `Msg::Late` (before their frame's end) and their pipelined times.
pub fn resolve(ctx: u64) -> Vec<Msg> {
    let Some(gl) = gl() else { return Vec::new() };
    let resolved = with_entry(ctx, |e| match e.counters.as_mut() {
        // SAFETY: `ctx` is current on this thread.
        Some(c) => unsafe { c.resolve(gl) },
        None => Default::default(),
    });
    let mut out: Vec<Msg> = Vec::new();
    for late in resolved.values {
        match out.last_mut() {
            Some(Msg::Late { frame, values }) if *frame == late.frame => {
                values.push((late.call, late.values));
            }
            _ => out.push(Msg::Late {
                frame: late.frame,
                values: vec![(late.call, late.values)],
            }),
        }
    }
    out.extend(
        resolved
            .pipelined
            .into_iter()
            .map(|b| Msg::Record(Record::Pipelined(b))),
    );
    out
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

/// Textures drawn into during the frame being captured, by any context (texture names are
/// shared within a share group): a draw sampling one keeps its coverage, so the producing
/// pass's cost can flow to its pixels.
static DRAWN: Mutex<(u64, Vec<u32>)> = Mutex::new((0, Vec::new()));

/// Most textures remembered per frame as drawn into.
const MAX_DRAWN: usize = 4096;

fn drawn() -> std::sync::MutexGuard<'static, (u64, Vec<u32>)> {
    DRAWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The records a painter's flush produced, for frame `frame` of context `ctx`.
fn flushed_records(ctx: u64, frame: u64, out: thermal::Flushed) -> Vec<Record> {
    let missing = |reason: String| {
        Record::HeatMissing(HeatMissing {
            frame,
            context: ctx,
            reason,
        })
    };
    let mut records = Vec::new();
    match out.screen {
        Some(Ok(map)) => records.push(Record::Heat(map)),
        Some(Err(reason)) => records.push(missing(reason)),
        None => {}
    }
    records.extend(out.missing.map(missing));
    records.extend(out.targets.into_iter().map(Record::TargetHeat));
    records.extend(out.flow.map(Record::Flow));
    records
}

/// Paints draw `call` (serialized time `time_ns`) of frame `frame`; `replay` calls the real
/// draw again with the same arguments. Maps of an earlier frame this context still holds
/// (it drew and was never switched away from nor swapped) are sent first.
pub fn paint(ctx: u64, frame: u64, call: u32, weight: Weight, replay: &dyn Fn()) {
    with_painter(ctx, frame, |e, p, f, drawn| {
        let program_query = counting_query(e);
        // SAFETY: `ctx` is current on this thread (`with_painter`'s promise).
        unsafe { p.paint(f, frame, call, weight, program_query, drawn, replay) };
    });
}

/// Paints compute dispatch `call` (serialized time `time_ns`) of frame `frame`: its time
/// over the texels of the images it stores to (see [`Painter::dispatch`]).
pub fn dispatch(ctx: u64, frame: u64, call: u32, weight: Weight) {
    with_painter(ctx, frame, |_, p, f, _| {
        // SAFETY: `ctx` is current on this thread (`with_painter`'s promise).
        unsafe { p.dispatch(f, frame, call, weight) };
    });
}

/// Paints blit `call` (serialized time `time_ns`) of frame `frame` over its destination
/// rectangle `dst` (see [`Painter::blit`]).
pub fn blit(ctx: u64, frame: u64, call: u32, weight: Weight, dst: [i32; 4]) {
    with_painter(ctx, frame, |_, p, f, _| {
        // SAFETY: `ctx` is current on this thread (`with_painter`'s promise).
        unsafe { p.blit(f, frame, call, weight, dst) };
    });
}

/// [`blit`] of a `glBlitNamedFramebuffer`, its `[read, draw]` framebuffers named (see
/// [`Painter::blit_named`]).
pub fn blit_named(
    ctx: u64,
    frame: u64,
    call: u32,
    weight: Weight,
    framebuffers: [u32; 2],
    dst: [i32; 4],
) {
    with_painter(ctx, frame, |_, p, f, _| {
        // SAFETY: `ctx` is current on this thread (`with_painter`'s promise).
        unsafe { p.blit_named(f, frame, call, weight, framebuffers, dst) };
    });
}

/// Paints copy `call` (serialized time `time_ns`) of frame `frame` over the texels it writes
/// (see [`Painter::copy`]).
pub fn copy(ctx: u64, frame: u64, call: u32, weight: Weight, copy: &thermal::CopyCall) {
    with_painter(ctx, frame, |_, p, f, _| {
        // SAFETY: `ctx` is current on this thread (`with_painter`'s promise).
        unsafe { p.copy(f, frame, call, weight, copy) };
    });
}

/// Runs `paint` with `ctx`'s painter (`ctx` current on this thread), after sending the maps
/// of an earlier frame it still holds; `paint` gets whether a texture was drawn into earlier
/// in this frame. The textures it drew into join the frame's list.
fn with_painter(
    ctx: u64,
    frame: u64,
    paint: impl FnOnce(&Entry, &mut Painter, &ThermalFns, &dyn Fn(u32) -> bool),
) {
    // Without the functions the frame's end reports why (`heat_frame_end`).
    let (Some(gl), Ok(f)) = (gl(), thermal_fns()) else {
        return;
    };
    let (records, textures) = with_entry(ctx, |e| {
        let mut records = Vec::new();
        let p = painter(e, ctx, gl);
        if let Some(old) = p.pending_frame().filter(|&old| old != frame) {
            // SAFETY: `ctx` is current on this thread.
            let out = unsafe { p.flush(f, ctx, p.has_screen_draws()) };
            records = flushed_records(ctx, old, out);
        }
        let textures = {
            let d = drawn();
            if d.0 == frame {
                d.1.clone()
            } else {
                Vec::new()
            }
        };
        // Out of the entry while it paints, so `paint` may read the entry too.
        let Some(mut p) = e.painter.take() else {
            return (records, Vec::new());
        };
        paint(e, &mut p, f, &|t| textures.contains(&t));
        let drew = std::mem::take(&mut p.drawn_textures);
        e.painter = Some(p);
        (records, drew)
    });
    if !textures.is_empty() {
        let mut d = drawn();
        if d.0 != frame {
            *d = (frame, Vec::new());
        }
        for t in textures {
            if !d.1.contains(&t) && d.1.len() < MAX_DRAWN {
                d.1.push(t);
            }
        }
    }
    for r in records {
        outbox::send_record(r);
    }
}

/// Counts a draw a VG library made inside a VG call, painted by [`paint_vg_call`] (the
/// painter's `count_vg_draw`); returns after the replay has run on the GPU, so that the
/// caller's clock holds all of its cost.
pub fn count_vg_draw(ctx: u64, frame: u64, replay: &dyn Fn()) {
    let (Some(gl), Ok(f)) = (gl(), thermal_fns()) else {
        return;
    };
    let records = with_entry(ctx, |e| {
        let program_query = !e.program_queries.is_empty();
        let p = painter(e, ctx, gl);
        let mut records = Vec::new();
        if let Some(old) = p.pending_frame().filter(|&old| old != frame) {
            // SAFETY: `ctx` is current on this thread.
            let out = unsafe { p.flush(f, ctx, p.has_screen_draws()) };
            records = flushed_records(ctx, old, out);
        }
        // SAFETY: `ctx` is current on this thread.
        unsafe { p.count_vg_draw(f, frame, program_query, replay) };
        records
    });
    // SAFETY: the real glFinish of the current context.
    unsafe { (gl.finish)() };
    gpuheat_counters::waits::note();
    for r in records {
        outbox::send_record(r);
    }
}

/// Paints VG call `call` of `frame` (serialized time `time_ns`) over the coverage of the
/// draws [`count_vg_draw`] counted inside it; `false` when none was.
pub fn paint_vg_call(ctx: u64, frame: u64, call: u32, time_ns: u64) -> bool {
    let (Some(gl), Ok(f)) = (gl(), thermal_fns()) else {
        return false;
    };
    with_entry(ctx, |e| {
        let p = painter(e, ctx, gl);
        // SAFETY: `ctx` is current on this thread.
        unsafe { p.paint_vg_call(f, frame, call, time_ns) }
    })
}

/// The program is about to make another context current on this thread (or release
/// `ctx`): the offscreen maps `ctx` painted, and the geometry replays it recorded, are read
/// back while it is still current.
pub fn switching_away(ctx: u64) {
    if ctx == 0 {
        return;
    }
    // Its calls timed deferred are read while it is current, and reach their frame before
    // its end.
    for msg in resolve(ctx) {
        outbox::send(msg);
    }
    let (Some(_), Ok(f)) = (gl(), thermal_fns()) else {
        return;
    };
    if let Ok(g) = geometry_fns() {
        with_entry(ctx, |e| {
            if let Some(capture) = e.geometry.as_mut() {
                // SAFETY: `ctx` is current on this thread (the switch has not happened yet).
                unsafe { capture.settle(f, g) };
            }
        });
    }
    let records = with_entry(ctx, |e| {
        let Some(p) = e.painter.as_mut() else {
            return Vec::new();
        };
        let Some(frame) = p.pending_frame() else {
            return Vec::new();
        };
        // SAFETY: `ctx` is current on this thread (the switch has not happened yet).
        let out = unsafe { p.flush(f, ctx, false) };
        flushed_records(ctx, frame, out)
    });
    for r in records {
        outbox::send_record(r);
    }
}

/// After frame `frame` (swapped on a thread where `ctx` is current): the geometry records of
/// every context that drew in it, and an empty one for `ctx` when it drew nothing, so each
/// captured frame has one. `ctx`'s replays are read back here (the frame's one wait for its
/// transform feedback); another context's frame whose replays are still pending (current
/// on another thread) follows at a later frame's end, once read back where it is current.
pub fn geometry_frame_end(ctx: u64, frame: u64) -> Vec<Record> {
    let Some(map) = CONTEXTS.get() else {
        return Vec::new();
    };
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    let mut swapper_has_one = false;
    for (&c, e) in map.iter_mut() {
        if let Some(capture) = e.geometry.as_mut() {
            let frames = if c == ctx {
                capture.take(frame)
            } else {
                capture.take_read(frame)
            };
            for g in frames {
                swapper_has_one |= c == ctx && g.frame == frame;
                out.push(Record::Geometry(g));
            }
        }
    }
    if !swapper_has_one && ctx != 0 && map.get(&ctx).is_some_and(|e| e.counters.is_some()) {
        out.push(Record::Geometry(FrameGeometry {
            frame,
            context: ctx,
            vertex_budget: crate::config::geometry_budget(),
            draws: Vec::new(),
            missing: Vec::new(),
        }));
    }
    out
}

/// Ends frame `frame`'s painting (before its swap): the HEAT record (or why it is missing),
/// and the swapping context's offscreen maps and flow.
pub fn heat_frame_end(ctx: u64, frame: u64) -> Vec<Record> {
    let missing = |reason: String| {
        vec![Record::HeatMissing(HeatMissing {
            frame,
            context: ctx,
            reason,
        })]
    };
    if ctx == 0 {
        return missing("no GL context is current on the swapping thread".into());
    }
    let Some(gl) = gl() else {
        return missing("the real GL functions could not be loaded".into());
    };
    let f = match thermal_fns() {
        Ok(f) => f,
        Err(e) => return missing(e),
    };
    with_entry(ctx, |e| {
        let p = painter(e, ctx, gl);
        let label = p.pending_frame().unwrap_or(frame);
        // SAFETY: `ctx` is current on this thread.
        let out = unsafe { p.finish(f, frame, ctx) };
        flushed_records(ctx, label, out)
    })
}

/// The program has a query active whose result a replay of ours would change (a time-elapsed
/// one only reads longer).
fn counting_query(e: &Entry) -> bool {
    e.program_queries
        .iter()
        .any(|&t| gpuheat_counters::replay_changes_query(t))
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
        if let Some(f) = real::by_name(name) {
            // SAFETY: both functions take no argument and return a handle.
            let c = unsafe { std::mem::transmute::<usize, unsafe extern "C" fn() -> usize>(f)() };
            if c != 0 {
                return c as u64;
            }
        }
    }
    0
}
