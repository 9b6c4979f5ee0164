//! Thermal painting: per-pixel heat and overdraw maps of a captured frame, computed on the GPU
//! inside the program.
//!
//! For each draw `d` that renders to the default framebuffer, right after the draw (and after
//! its counter bracket), the same draw is replayed with the program's own state (program,
//! vertex arrays, viewport, scissor, culling, `discard`…) into our framebuffer `count`: a
//! stencil buffer cleared to 0, stencil test `ALWAYS` with `INCR` on both faces and colour
//! writes off, and no depth buffer (so the depth test passes). The stencil then holds
//! `c_d(p)`, the fragments the draw produced at `p` (saturating at 255 per pixel per draw:
//! `INCR` does not wrap). Where the context reads stencil back (desktop GL; GLES with
//! `GL_NV_read_stencil`, which Mesa has) the stencil is read as bytes: `c_d` itself, for
//! `N_d = Σ_p c_d(p)` and the coverage box. Elsewhere two passes of a full-screen triangle
//! into the count framebuffer's RGBA8 buffer mark red where the stencil is not 0 and green
//! where it is above 1, read back as bytes; without green `c_d` is the red mask, with it
//! eight "bit passes", stencil `EQUAL` on bit `b`, additive blending, sum `c_d(p)` into an
//! R32F target (`scratch`), read back as floats. Then, when no pixel has more than one
//! fragment (most draws), one pass, stencil not 0, adds `T_d/N_d` and 1 into the two R32F
//! targets of `accum` (heat, overdraw), scissored to the box; otherwise eight bit passes add
//! `2^b·T_d/N_d` and `2^b` into `accum`. At the frame's end (before the swap) the frame's
//! colour buffer and both maps are read back once and `accum` is cleared.
//!
//! Invisibility: every piece of state touched is saved and restored, and the program's
//! pending GL error is taken before the work and raised again after it, by the crate's
//! save/restore toolkit (`state.rs`); errors of our own are drained (and make the frame's map
//! missing, with the error, rather than wrong).
//!
//! Known limits: per-draw-buffer colour masks and blend enables (`glColorMaski`,
//! `glEnablei`) are restored through the non-indexed calls from draw buffer 0's values;
//! object names the program uses without generating them (allowed for some objects in GLES
//! and compatibility GL) may collide with ours; the program's own stencil test is replaced by
//! `ALWAYS` during the replay, so `c_d` counts the fragments the draw shaded, including ones
//! its stencil or depth test then rejected; `GL_OUT_OF_MEMORY` and
//! `GL_INVALID_FRAMEBUFFER_OPERATION` pending from the program cannot be raised again.

use std::collections::HashMap;
use std::ffi::c_void;

use gpuheat_session::{
    Attachment, ClientApi, DrawCoverage, DrawFlow, FrameFlow, HeatMap, RenderTarget, TargetHeat,
};

use crate::gl::*;
use crate::own_gpu::OwnStamps;
use crate::pool::Pool;
use crate::readback::{self, Pack, PackFns, Source};
use crate::state::{drain_errors, pack_defaults, ErrorScope, Piece, Saved, NOT_RENDERING};
use crate::tally::{
    self, Carried, ResolveProgram, Tallied, Tally, TallyFns, TallyProgram, TargetMaps,
};
use crate::targets::{self, Samplers};
use crate::weights::{
    self, BoxFns, BoxPass, SampleFns, Sampled, SampledProgram, Slot, WeightFns, Weights,
};
use crate::writes::Writes;

/// How a painted draw's time is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// Measured already (isolated timing), in ns.
    Known(u64),
    /// Measured already, in ns, and the draw's own pipeline statistics say no primitive came
    /// out of clipping ([`reached_nothing`]): it has no fragment to count, and is listed
    /// with none, without a replay or a read (most of neverball's draws).
    Unreached(u64),
    /// Timed deferred: its timestamp query pair (before, after), whose results the GPU
    /// writes for the weighting passes to read ([`crate::weights`]).
    Deferred(GLuint, GLuint),
}

/// Whether a draw measured with `values` (its counters, by catalogue index) reached
/// no pixel, by its own pipeline statistics: no primitive came out of clipping, and no
/// fragment was shaded. Our replay has the draw's state but our framebuffer, and clipping
/// does not look at the framebuffer, so it reaches none either. A context without those
/// statistics (GLES) says nothing here.
pub fn reached_nothing(values: &[gpuheat_session::CounterValue]) -> bool {
    let value = |c| values.iter().find(|v| v.counter == c).map(|v| v.value);
    value(crate::catalogue::CLIPPING_OUTPUT_PRIMITIVES) == Some(0)
        && value(crate::catalogue::FRAGMENT_SHADER_INVOCATIONS).unwrap_or(0) == 0
}

/// A listed draw's fragments while they wait for its slot to be read (weighted on the GPU).
const FRAGMENTS_PENDING: u64 = u64::MAX;
pub use crate::targets::{CopyCall, CopyDest, CopySource};

/// Whether a context can host the painter's targets: R32F colour buffers that blend.
/// `Err` says exactly why not.
pub fn support(
    api: ClientApi,
    major: u32,
    minor: u32,
    has_extension: impl Fn(&str) -> bool,
) -> Result<(), String> {
    match api {
        ClientApi::Gl if major >= 3 => Ok(()),
        ClientApi::Gl => Err(format!(
            "GL {major}.{minor} has no float colour buffers (heat maps need GL 3.0)"
        )),
        ClientApi::Gles if major < 3 => Err(format!(
            "GLES {major}.{minor} has no float colour buffers (heat maps need GLES 3.2, or 3.0 \
             with GL_EXT_color_buffer_float; no lower-precision path yet)"
        )),
        ClientApi::Gles => {
            if (major, minor) < (3, 2) && !has_extension("GL_EXT_color_buffer_float") {
                return Err(format!(
                    "GLES {major}.{minor} without GL_EXT_color_buffer_float has no float \
                     colour buffers"
                ));
            }
            if !has_extension("GL_EXT_float_blend") {
                return Err(format!(
                    "GLES {major}.{minor} without GL_EXT_float_blend cannot blend into 32-bit \
                     float colour buffers"
                ));
            }
            Ok(())
        }
        ClientApi::Vg => Err("OpenVG contexts draw no GL fragments".into()),
        ClientApi::Vulkan => Err("heat maps of Vulkan frames are not painted yet".into()),
    }
}

/// Whether `glReadPixels` of a context reads `GL_STENCIL_INDEX`: always in desktop GL, with
/// `GL_NV_read_stencil` in GLES (Mesa has it; the painter falls back to its mask passes when
/// a driver refuses anyway).
pub fn stencil_readable(api: ClientApi, has_extension: impl Fn(&str) -> bool) -> bool {
    match api {
        ClientApi::Gl => true,
        ClientApi::Gles => has_extension("GL_NV_read_stencil"),
        ClientApi::Vg | ClientApi::Vulkan => false,
    }
}

/// Most pixels of all of a context's maps together (screen and offscreen targets): 32 Mi
/// pixels, 256 MiB of GPU memory at 8 bytes per pixel. A target beyond it is not painted
/// (its draws say why).
pub const MAX_MAP_PIXELS: u64 = 32 << 20;
/// Most bytes of consumer coverage kept per context and frame (see [`DrawFlow::coverage`]).
pub const MAX_COVERAGE_BYTES: usize = 64 << 20;
/// Most offscreen targets a context remembers; beyond it the list starts again (ids are
/// never reused).
const MAX_KNOWN_TARGETS: usize = 1024;

/// The painter's working buffers, shared by every target: a stencil buffer (with an unused
/// RGBA8 colour buffer) the draws are replayed into, and an R32F buffer the counts are
/// turned into. At least as large as the largest target painted.
struct Work {
    width: u32,
    height: u32,
    /// count, scratch.
    fbos: [GLuint; 2],
    /// The count buffer without the stencil, where the stencil is sampled (drawing into a
    /// framebuffer with the sampled texture attached is a feedback loop): the one count pass
    /// of a context that cannot read its stencil back; 0 elsewhere.
    count_plain: GLuint,
    /// stencil, colour (RGBA8), scratch (R32F).
    rbs: [GLuint; 3],
    /// Set when the stencil (`rbs[0]`) is a texture the weighting pass samples
    /// ([`weights::stencil_sampling`]) rather than a renderbuffer.
    sampled: Option<SampleFns>,
}

impl Work {
    /// Attaches the work stencil to `fbo`, bound to `GL_FRAMEBUFFER`.
    ///
    /// # Safety
    /// The painter's context must be current, `f` its real functions, `fbo` ours and bound.
    unsafe fn attach_stencil(&self, f: &ThermalFns) {
        // SAFETY: our caller's promise; the stencil is ours.
        unsafe {
            match self.sampled {
                Some(s) => (s.framebuffer_texture_2d)(
                    FRAMEBUFFER,
                    STENCIL_ATTACHMENT,
                    TEXTURE_2D,
                    self.rbs[0],
                    0,
                ),
                None => (f.framebuffer_renderbuffer)(
                    FRAMEBUFFER,
                    STENCIL_ATTACHMENT,
                    RENDERBUFFER,
                    self.rbs[0],
                ),
            }
        }
    }
}

/// One target's accumulated maps (heat, overdraw), with the work stencil attached so the
/// bit passes can test it.
struct Accum {
    width: u32,
    height: u32,
    fbo: GLuint,
    /// The same maps without the stencil, where the stencil is a texture the weighting pass
    /// samples (drawing into a framebuffer with the sampled texture attached is a feedback
    /// loop); 0 elsewhere.
    plain: GLuint,
    /// heat (R32F), overdraw (R32F).
    rbs: [GLuint; 2],
    /// Whether a draw was painted into it since the last flush.
    used: bool,
}

/// A dispatch, blit or copy timed deferred: its time, once read at a flush, is added evenly
/// over its place in its target's map as read back ([`add_spreads`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PendingSpread {
    call: u32,
    target: u32,
    /// The target's width (the place's row length).
    width: u32,
    /// x0, y0, x1, y1 in the target's pixels, not empty.
    rect: [u32; 4],
    /// Its time, from its timestamp pair; `None` until a flush read it.
    time_ns: Option<u64>,
}

/// Adds each of `spreads` whose time is known and whose target is in `maps` evenly over its
/// place (`T/N` on each of its `N` pixels of the heat map; a spread shades no fragment, so
/// nothing on the overdraw); keeps the others, for a later flush.
fn add_spreads(spreads: &mut Vec<PendingSpread>, maps: &mut [TargetMaps<'_>]) {
    spreads.retain(|s| {
        let (Some(time_ns), Some(m)) = (s.time_ns, maps.iter_mut().find(|m| m.target == s.target))
        else {
            return true;
        };
        // A target made again at another size since drops what was painted at the old.
        if m.width == s.width {
            let [x0, y0, x1, y1] = s.rect;
            let n = u64::from(x1 - x0) * u64::from(y1 - y0);
            let share = (time_ns as f64 / n as f64) as f32;
            for y in y0..y1 {
                let row = (y * s.width) as usize;
                if let Some(pixels) = m.heat.get_mut(row + x0 as usize..row + x1 as usize) {
                    pixels.iter_mut().for_each(|h| *h += share);
                }
            }
        }
        false
    });
}

/// The draw and read framebuffer bindings, as pieces of saved state.
fn framebuffer_bindings(f: &ThermalFns) -> [Piece; 2] {
    let framebuffer = |query, target| Piece::Binding {
        query,
        target,
        bind: f.bind_framebuffer,
    };
    [
        framebuffer(DRAW_FRAMEBUFFER_BINDING, DRAW_FRAMEBUFFER),
        framebuffer(READ_FRAMEBUFFER_BINDING, READ_FRAMEBUFFER),
    ]
}

/// Each target's width in its maps now, for the tally's resolve ([`tally::Tally::read`]).
fn widths(accums: &HashMap<u32, Accum>) -> impl Fn(u32) -> Option<u32> + '_ {
    |id| accums.get(&id).map(|a| a.width)
}

impl Accum {
    fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

/// What a flush of a painter produced: the screen's map (or why there is none) when the
/// screen was flushed, each offscreen target's own map, and what the painted draws sampled.
#[derive(Debug, Default)]
pub struct Flushed {
    /// The default framebuffer's map, or why it is missing; `None` when the screen was not
    /// flushed (a switch away from the context in the middle of a frame).
    pub screen: Option<Result<HeatMap, String>>,
    /// Why this flush's offscreen maps are missing (a GL error of ours), when they are and
    /// the screen was not flushed.
    pub missing: Option<String>,
    /// Offscreen targets painted since the last flush.
    pub targets: Vec<TargetHeat>,
    /// The painted draws' flow, when there were any.
    pub flow: Option<FrameFlow>,
}

const VS: &str = "out vec2 unused_;\nvoid main() {\n  vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);\n  unused_ = p;\n  gl_Position = vec4(p, 0.0, 1.0);\n}\n";
const FS: &str = "uniform vec2 u_add;\nin vec2 unused_;\nlayout(location = 0) out vec4 o0;\nlayout(location = 1) out vec4 o1;\nvoid main() {\n  o0 = vec4(u_add.x);\n  o1 = vec4(u_add.y);\n}\n";

/// The clip distances a program enables, a compatibility profile's user clip planes
/// (`GL_CLIP_PLANEi` is `GL_CLIP_DISTANCEi`; GL 3.0 has at least 8).
const CLIP_PLANES: [GLenum; 8] = [
    CLIP_DISTANCE0,
    CLIP_DISTANCE0 + 1,
    CLIP_DISTANCE0 + 2,
    CLIP_DISTANCE0 + 3,
    CLIP_DISTANCE0 + 4,
    CLIP_DISTANCE0 + 5,
    CLIP_DISTANCE0 + 6,
    CLIP_DISTANCE0 + 7,
];

/// Per-context painter: the working buffers, each target's maps, and the draws of the frame
/// being painted.
pub struct Painter {
    gles: bool,
    /// How our R32F maps are read back: `GL_RED` (1 channel) where the context reads that
    /// ([`Painter::float_format`]), else `GL_RGBA`: a quarter of the bytes, and no
    /// conversion on the driver's side or ours.
    float_read: (GLenum, usize),
    /// Whether counts are read from the stencil directly (else through the mask passes);
    /// cleared the first time the driver refuses.
    stencil_readable: bool,
    unsupported: Option<String>,
    /// Our program, its `u_add` location and our empty vertex array, built once.
    program: Option<(GLuint, GLint, GLuint)>,
    /// Screen map size: the surface's when known, else the first painted draw's viewport.
    size: Option<[u32; 2]>,
    work: Option<Work>,
    /// Accumulated maps by target id (0: the default framebuffer).
    accums: HashMap<u32, Accum>,
    /// Offscreen targets this context drew into, by attachments and size.
    known: HashMap<(Vec<Attachment>, [u32; 2]), RenderTarget>,
    next_id: u32,
    /// The offscreen targets painted since the last flush, by id.
    pending_targets: HashMap<u32, RenderTarget>,
    /// Painted (or listed) draws by target id, since the last flush.
    draws: HashMap<u32, Vec<DrawCoverage>>,
    flow: Vec<DrawFlow>,
    /// The frame the pending draws belong to.
    frame: Option<u64>,
    coverage_bytes: usize,
    samplers: Samplers,
    /// The textures the last painted draw drew into (for the agent's list of textures drawn
    /// this frame).
    pub drawn_textures: Vec<u32>,
    /// First failure since the last flush: the maps are reported missing with it.
    failure: Option<String>,
    /// Draws listed without painting because the maps' budget was spent.
    pub skipped_budget: u32,
    /// Draws skipped because the program had a query active or transform feedback on.
    pub skipped_other: u32,
    /// The context has the fixed-function pipeline ([`Painter::set_compatibility`]).
    compatibility: bool,
    /// The draws of the VG call in flight whose coverage only they know.
    group: Option<Group>,
    /// Draws timed deferred may be weighted on the GPU here ([`Painter::set_weighting`]).
    weighting: bool,
    /// Draws timed deferred may be tallied here ([`Painter::set_tallying`]).
    tallying: bool,
    /// The tally of draws timed deferred, made on the first ([`crate::tally`]).
    tally: Option<Tally>,
    /// The GPU adds the tally's records into the maps ([`Painter::set_tally_resolve`]).
    tally_resolves: bool,
    /// The dispatch, blit or copy being painted is timed deferred: its spread waits for its
    /// time ([`Painter::spread`]).
    spreading_deferred: bool,
    /// Each such call of the frame with its timestamp pair, read at the flush.
    spread_stamps: Vec<(u32, [GLuint; 2])>,
    /// Their places, added into the maps read back at the flush (or a later one, for the
    /// screen in a flush on a switch away from the context).
    spreads: Vec<PendingSpread>,
    /// The tally's reads in the middle of the frame ([`Painter::drain_tally`]), whose draws
    /// the flush lists.
    drained: Vec<tally::Reading>,
    /// What tallied draws add to a target a flush did not read (the screen, in a flush on a
    /// switch away from the context), for the flush that reads it.
    carried: Vec<Carried>,
    /// The work stencil may be a sampled texture ([`Painter::set_stencil_sampling`]).
    stencil_sampling: bool,
    /// The weighting pass finds each deferred draw's box ([`Painter::set_gpu_boxes`]).
    gpu_boxes: bool,
    /// Keeps what a replayed draw's shaders could write ([`Painter::set_write_checks`]).
    writes: Option<Writes>,
    /// Our pixel-pack buffer, for a flush's one read ([`readback`]).
    pack: Pack,
    /// The one-pass programs, made with a sampled work stencil; without them (or where they
    /// do not build) the bit passes weigh draws with more than one fragment on a pixel.
    sampled: Option<Sampled>,
    /// The weighting program and slot buffers, made on the first deferred draw.
    weights: Option<Weights>,
    /// Draws of the frame timed deferred and their slots: their listed time (and, when
    /// painted on the GPU, fragments) come from the slot at the flush.
    deferred: HashMap<u32, Slot>,
    /// Our own passes' GPU time, where heat is weighted on the GPU; made on the first draw
    /// painted there (`None` inside after a try that found an entry point missing).
    stamps: Option<Option<OwnStamps>>,
}

/// The GL draws a VG library makes inside one VG call, counted together in the work stencil
/// (each pixel once, as the call covers it once) and painted as that call when it ends: the
/// call's time holds theirs, and on the host only a known path gives its coverage.
#[derive(Default)]
struct Group {
    /// Where the counted draws go; `None` until one is counted.
    dest: Option<Destination>,
    /// Why a draw of the call was not counted (the first reason).
    note: String,
}

impl std::fmt::Debug for Painter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Painter")
            .field("size", &self.size)
            .field("targets", &self.accums.len())
            .field("flow", &self.flow.len())
            .finish()
    }
}

/// Intersection of two x, y, w, h boxes (empty boxes have w or h 0).
fn intersect(a: [GLint; 4], b: [GLint; 4]) -> [GLint; 4] {
    let x0 = a[0].max(b[0]);
    let y0 = a[1].max(b[1]);
    let x1 = (a[0] + a[2]).min(b[0] + b[2]);
    let y1 = (a[1] + a[3]).min(b[1] + b[3]);
    [x0, y0, (x1 - x0).max(0), (y1 - y0).max(0)]
}

/// `N_d = Σ_p c_d(p)`, the box of the pixels with `c_d > 0` (x0, y0, x1, y1, the upper
/// bounds exclusive; all 0 when none) and the largest `c_d`, row by row: the scan runs once
/// per painted draw over the whole target, so it stays on bytes.
fn total_and_box(counts: &[u8], w: u32) -> (u64, [u32; 4], u8) {
    let mut n = 0u64;
    let mut most = 0u8;
    let mut bbox = [u32::MAX, u32::MAX, 0, 0];
    for (y, row) in counts.chunks_exact(w.max(1) as usize).enumerate() {
        let Some(first) = row.iter().position(|&c| c != 0) else {
            continue;
        };
        let last = row.iter().rposition(|&c| c != 0).unwrap_or(first);
        let live = &row[first..=last];
        n += live.iter().map(|&c| u64::from(c)).sum::<u64>();
        most = most.max(live.iter().copied().max().unwrap_or(0));
        let y = y as u32;
        bbox[0] = bbox[0].min(first as u32);
        bbox[1] = bbox[1].min(y);
        bbox[2] = bbox[2].max(last as u32 + 1);
        bbox[3] = bbox[3].max(y + 1);
    }
    if n == 0 {
        bbox = [0; 4];
    }
    (n, bbox, most)
}

/// `c_d(p)` inside `bbox` of a `w`-wide count buffer.
fn crop(counts: &[u8], w: u32, bbox: [u32; 4]) -> Vec<u8> {
    let [x0, y0, x1, y1] = bbox;
    let mut out = Vec::with_capacity(((x1 - x0) * (y1 - y0)) as usize);
    for y in y0..y1 {
        let row = (y * w) as usize;
        out.extend_from_slice(&counts[row + x0 as usize..row + x1 as usize]);
    }
    out
}

/// How a painted draw timed deferred gets its weight.
#[derive(Clone, Copy)]
enum Deferral {
    /// Timed isolated: its time is known.
    None,
    /// Weighted on the GPU from its slot, `N` counted by the samples query.
    Slot(Slot, GLuint),
    /// Tallied ([`crate::tally`]), with its timestamp pair (before, after).
    Tally([GLuint; 2]),
}

/// Where a draw goes, decided before it is painted.
#[derive(Clone, Copy)]
struct Destination {
    /// 0: the default framebuffer; else the target's id.
    id: u32,
    width: u32,
    height: u32,
}

impl Painter {
    /// A painter for a context of `api` (with `unsupported` the reason it cannot paint, from
    /// [`support`]); `surface`: the draw surface's size when known; `stencil_readable`:
    /// whether `glReadPixels` takes `GL_STENCIL_INDEX` ([`stencil_readable`]).
    pub fn new(
        api: ClientApi,
        unsupported: Option<String>,
        surface: Option<[u32; 2]>,
        stencil_readable: bool,
    ) -> Painter {
        Painter {
            gles: api == ClientApi::Gles,
            float_read: if api == ClientApi::Gles {
                (RGBA, 4)
            } else {
                (RED, 1)
            },
            stencil_readable,
            unsupported,
            program: None,
            size: surface.filter(|s| s[0] > 0 && s[1] > 0),
            work: None,
            accums: HashMap::new(),
            known: HashMap::new(),
            next_id: 1,
            pending_targets: HashMap::new(),
            draws: HashMap::new(),
            flow: Vec::new(),
            frame: None,
            coverage_bytes: 0,
            samplers: Samplers::default(),
            drawn_textures: Vec::new(),
            failure: None,
            skipped_budget: 0,
            skipped_other: 0,
            group: None,
            compatibility: false,
            weighting: false,
            tallying: false,
            tally: None,
            tally_resolves: false,
            spreading_deferred: false,
            spread_stamps: Vec::new(),
            spreads: Vec::new(),
            drained: Vec::new(),
            carried: Vec::new(),
            stencil_sampling: false,
            gpu_boxes: false,
            writes: None,
            pack: Pack::default(),
            sampled: None,
            weights: None,
            deferred: HashMap::new(),
            stamps: None,
        }
    }

    /// Tells the painter its context can weigh heat on the GPU
    /// ([`weights::gpu_weighting`]): draws timed deferred are painted there.
    pub fn set_weighting(&mut self, weighting: bool) {
        self.weighting = weighting;
    }

    /// Tells the painter its context can tally draws timed deferred ([`tally::supported`]):
    /// where they are not weighted on the GPU, their counts are appended to a buffer the
    /// flush reads once and weighs on the CPU. Call before the first paint.
    pub fn set_tallying(&mut self, tallying: bool) {
        self.tallying = tallying;
    }

    /// Tells the painter where its tally's records are added ([`tally::resolves_on_gpu`]): on
    /// the GPU (`true`: a resolve pass before the flush reads the maps) or on the CPU. Call
    /// before the first paint.
    pub fn set_tally_resolve(&mut self, on_gpu: bool) {
        self.tally_resolves = on_gpu;
    }

    /// Whether this painter can paint draws timed deferred (weighted on the GPU, or tallied):
    /// elsewhere, and once a frame needed more than the tally may hold, heat needs each draw's
    /// time when it is painted.
    pub fn defers(&self) -> bool {
        self.weighting
            || (self.tallying
                && self.stencil_sampling
                && !self
                    .tally
                    .as_ref()
                    .is_some_and(|t| t.exhausted() || t.full()))
    }

    /// Tells the painter its context can sample a stencil texture
    /// ([`weights::stencil_sampling`]): draws weighted on the GPU then take one pass reading
    /// their counts instead of eight bit passes. Call before the first paint.
    pub fn set_stencil_sampling(&mut self, sampling: bool) {
        self.stencil_sampling = sampling;
    }

    /// Tells the painter its context finds boxes on the GPU ([`weights::gpu_boxes`]): with a
    /// sampled stencil, the one weighting pass also finds each deferred draw's box (else it
    /// is listed with its target's). Call before the first paint.
    pub fn set_gpu_boxes(&mut self, boxes: bool) {
        self.gpu_boxes = boxes;
    }

    /// Tells the painter its context has the program interface queries
    /// ([`crate::writes::supported`]): before each replay it reads what the draw's programs
    /// can write, keeps the storage and atomic counter buffers they use aside and puts them
    /// back after (a replay would write them a second time), and does not replay a draw whose
    /// program has images. Call before the first paint.
    pub fn set_write_checks(&mut self, checks: bool) {
        self.writes = checks.then(Writes::default);
    }

    /// Tells the painter its context has the fixed-function pipeline (a compatibility
    /// profile, or GL before 3.1), whose fixed state (the alpha test, the polygon stipple,
    /// user clip planes, which Mesa applies to a shader that does not write `gl_ClipVertex`)
    /// applies to our passes too: its own passes turn them off (a program that left the alpha
    /// test on had the heat of its draws discarded where T/N was under the reference:
    /// neverball lost 0.3-0.6% of its map).
    pub fn set_compatibility(&mut self, compatibility: bool) {
        self.compatibility = compatibility;
    }

    /// Whether draws putting more than one fragment on a pixel, and every draw weighted on
    /// the GPU, take one pass over the sampled stencil (known once a draw was painted; else
    /// the eight bit passes).
    pub fn weighs_in_one_pass(&self) -> bool {
        self.sampled.is_some()
    }

    /// Turns off the state of the program's our passes must not go through (saved by
    /// [`Painter::save`]): on desktop GL the logic op and the clip distances, and in a
    /// fixed-function context its alpha test and polygon stipple too.
    ///
    /// # Safety
    /// As [`Painter::save`].
    unsafe fn own_passes(&self, f: &ThermalFns) {
        if !self.gles {
            // SAFETY: our caller's promise; both exist in every desktop GL 3.0+ profile.
            unsafe {
                // Enabled, the logic op turns blending off, even where it has no effect of
                // its own (our float buffers): each pass would overwrite the map instead of
                // adding to it (xscreensaver's quasicrystal, XOR-drawn, kept 2% of its map).
                (f.disable)(COLOR_LOGIC_OP);
                // Our vertex shader writes no gl_ClipDistance; a program's enabled distances
                // (and a compatibility profile's user clip planes) would clip our passes.
                for plane in CLIP_PLANES {
                    (f.disable)(plane);
                }
            }
        }
        if self.compatibility {
            // SAFETY: our caller's promise; both capabilities exist in a compatibility
            // profile.
            unsafe {
                (f.disable)(ALPHA_TEST);
                (f.disable)(POLYGON_STIPPLE);
            }
        }
    }

    /// Sets the surface size (when the window system says, e.g. at a capture's start).
    pub fn set_surface(&mut self, surface: [u32; 2]) {
        if surface[0] > 0 && surface[1] > 0 {
            self.size = Some(surface);
        }
    }

    /// The frame whose draws are painted and not yet flushed, if any.
    pub fn pending_frame(&self) -> Option<u64> {
        self.frame
            .filter(|_| !self.flow.is_empty() || self.draws.values().any(|d| !d.is_empty()))
    }

    /// Whether draws to the default framebuffer are painted and not yet flushed.
    pub fn has_screen_draws(&self) -> bool {
        self.draws.get(&0).is_some_and(|d| !d.is_empty())
    }

    fn list(&mut self, target: u32, call: u32, time_ns: u64) {
        self.draws.entry(target).or_default().push(DrawCoverage {
            call,
            fragments: 0,
            time_ns,
            bbox: [0; 4],
        });
    }

    fn fail(&mut self, why: String) {
        if self.failure.is_none() {
            self.failure = Some(why);
        }
    }

    /// Saves the state painting and the read-backs change; restored when the guard drops.
    ///
    /// # Safety
    /// This painter's context must be current (GL 3.0+ or GLES 3.0+, as [`support`] checks),
    /// and `f` its real functions.
    unsafe fn save<'f>(&self, f: &'f ThermalFns) -> Saved<'f> {
        let [draw, read] = framebuffer_bindings(f);
        let mut pieces = vec![
            draw,
            read,
            Piece::Program,
            Piece::VertexArray,
            Piece::Binding {
                query: RENDERBUFFER_BINDING,
                target: RENDERBUFFER,
                bind: f.bind_renderbuffer,
            },
            Piece::Viewport,
            Piece::ScissorBox,
            Piece::Enabled(SCISSOR_TEST),
            Piece::Enabled(STENCIL_TEST),
            Piece::Enabled(BLEND),
            Piece::Enabled(CULL_FACE),
            Piece::Enabled(RASTERIZER_DISCARD),
        ];
        if !self.gles {
            pieces.push(Piece::PolygonMode);
            pieces.push(Piece::Enabled(COLOR_LOGIC_OP));
            pieces.extend(CLIP_PLANES.map(Piece::Enabled));
        }
        if self.compatibility {
            pieces.extend([Piece::Enabled(ALPHA_TEST), Piece::Enabled(POLYGON_STIPPLE)]);
        }
        pieces.extend([
            Piece::Stencil,
            Piece::ColorMask,
            Piece::Blend,
            Piece::Binding {
                query: PIXEL_PACK_BUFFER_BINDING,
                target: PIXEL_PACK_BUFFER,
                bind: f.bind_buffer,
            },
            Piece::Pack,
        ]);
        pieces.extend(self.buffer_pieces(f));
        // SAFETY: our caller's promise; every piece exists in GL 3.0+ and GLES 3.0+ (polygon
        // mode only taken on desktop GL, the buffer bindings only where `weighting`).
        unsafe { Saved::take(f, &pieces) }
    }

    /// Paints draw `call` of frame `frame` (frame order) whose serialized time is `time_ns`
    /// into the map of the target it draws into (the default framebuffer or an offscreen
    /// target); `replay` calls the real draw again with the same arguments. `program_query`
    /// tells that the program has a query of its own active (the replay would add to it).
    /// `drawn_this_frame(t)`: texture `t` was drawn into earlier in this frame (by any
    /// context), so a draw sampling it keeps its coverage for the cost flowing downstream.
    /// The caller flushes first when [`Painter::pending_frame`] is another frame.
    ///
    /// # Safety
    /// The context this painter belongs to must be current, and `f` its real functions.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn paint(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        call: u32,
        weight: Weight,
        program_query: bool,
        drawn_this_frame: &dyn Fn(u32) -> bool,
        replay: &dyn Fn(),
    ) {
        let time_ns = match weight {
            Weight::Known(t) | Weight::Unreached(t) => t,
            // Known at the flush, from the draw's slot.
            Weight::Deferred(..) => 0,
        };
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions, which `placed` passes on to the closure.
        unsafe {
            self.placed(f, frame, call, time_ns, "call", |p| {
                let slot = match weight {
                    Weight::Known(_) | Weight::Unreached(_) => Deferral::None,
                    Weight::Deferred(before, after) if !p.weighting && p.tallying => {
                        Deferral::Tally([before, after])
                    }
                    Weight::Deferred(before, after) => match p.take_slot(f, before, after) {
                        Ok(s) => {
                            p.deferred.insert(call, s.0);
                            Deferral::Slot(s.0, s.1)
                        }
                        Err(why) => {
                            p.list(0, call, 0);
                            return p.fail(why);
                        }
                    },
                };
                p.paint_inner(
                    f,
                    call,
                    time_ns,
                    slot,
                    matches!(weight, Weight::Unreached(_)),
                    program_query,
                    drawn_this_frame,
                    replay,
                )
            })
        };
    }

    /// A slot for a draw timed deferred, its timestamps' results written there by the GPU,
    /// and the samples query its replay counts into.
    ///
    /// # Safety
    /// As [`Painter::paint`]; `before` and `after` are the draw's ended timestamp queries.
    unsafe fn take_slot(
        &mut self,
        f: &ThermalFns,
        before: GLuint,
        after: GLuint,
    ) -> Result<(Slot, GLuint), String> {
        if !self.weighting {
            return Err(
                "a draw timed deferred reached a painter that cannot weigh on the GPU".into(),
            );
        }
        // SAFETY: our caller's promise; the bindings changed are saved (`weighting`: the
        // context has GL_QUERY_BUFFER) and every name bound is ours.
        unsafe {
            if self.weights.is_none() {
                let fns = WeightFns::of(f)?;
                let (program, uniform) = self.build(f, weights::WEIGHT_VS, weights::WEIGHT_FS)?;
                let mut w = Weights::new(fns, program, uniform);
                // Box buffers no pass writes stay empty: their draws keep the target's box.
                w.boxes = if self.gpu_boxes && self.stencil_sampling {
                    BoxFns::of(f)
                } else {
                    None
                };
                self.weights = Some(w);
            }
            let _saved = Saved::take(f, &self.buffer_pieces(f));
            let w = self.weights.as_mut().expect("weights");
            let (slot, query) = w.next(f)?;
            (f.bind_buffer)(QUERY_BUFFER, w.buffers[slot.buffer].0);
            let at = slot.offset();
            let get = w.fns.get_query_objectui64v;
            get(before, QUERY_RESULT, at as *mut u64);
            get(after, QUERY_RESULT, (at + 8) as *mut u64);
            Ok((slot, query))
        }
    }

    /// The buffer bindings weighting changes: `GL_ARRAY_BUFFER` and `GL_QUERY_BUFFER`.
    fn buffer_pieces(&self, f: &ThermalFns) -> Vec<Piece> {
        if !self.weighting {
            return Vec::new();
        }
        vec![
            Piece::Binding {
                query: ARRAY_BUFFER_BINDING,
                target: ARRAY_BUFFER,
                bind: f.bind_buffer,
            },
            Piece::Binding {
                query: QUERY_BUFFER_BINDING,
                target: QUERY_BUFFER,
                bind: f.bind_buffer,
            },
        ]
    }

    /// Counts a draw a VG library makes inside a VG call into that call's coverage (see
    /// [`Group`]); [`Painter::paint_vg_call`] paints it when the call ends. Arguments as for
    /// [`Painter::paint`]. The caller flushes first when [`Painter::pending_frame`] is
    /// another frame.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn count_vg_draw(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        program_query: bool,
        replay: &dyn Fn(),
    ) {
        self.frame.get_or_insert(frame);
        self.group.get_or_insert_with(Group::default);
        if self.unsupported.is_some() || self.failure.is_some() {
            return;
        }
        // SAFETY: our caller's promise.
        let ours = unsafe {
            let errors = ErrorScope::enter(f);
            self.count_vg_draw_inner(f, program_query, replay);
            errors.leave()
        };
        if ours != NO_ERROR {
            self.fail(format!(
                "GL error 0x{ours:04X} while counting a VG call's draw (the map would be wrong)"
            ));
        }
    }

    unsafe fn count_vg_draw_inner(
        &mut self,
        f: &ThermalFns,
        program_query: bool,
        replay: &dyn Fn(),
    ) {
        let skip = |p: &mut Painter, why: String| {
            let g = p.group.get_or_insert_with(Group::default);
            if g.note.is_empty() {
                g.note = format!("a draw of its VG library not counted: {why}");
            }
        };
        // SAFETY: as in `paint_inner`.
        unsafe {
            drain_errors(f);
            let dest = match self.destination(f) {
                Ok(d) => d,
                Err((why, true)) => return self.fail(why),
                Err((why, false)) => return skip(self, why),
            };
            if program_query
                || f.integer(TRANSFORM_FEEDBACK_ACTIVE) != 0
                || f.current_program_deleting()
            {
                let why = "the program had a query of its own active, transform feedback on, \
                           or its program flagged for deletion";
                return skip(self, why.into());
            }
            let first = match self.group.as_ref().and_then(|g| g.dest) {
                None => true,
                Some(d) if d.id == dest.id => false,
                Some(d) => {
                    let why = format!("it drew into target {} after target {}", dest.id, d.id);
                    return skip(self, why);
                }
            };
            let saved = self.save(f);
            let (w, h) = (dest.width, dest.height);
            if let Err(e) = self.ensure(f, dest.id, w, h) {
                return self.fail(e);
            }
            let counting = self.work.as_ref().expect("work").fbos;
            // 1 where any of the call's draws falls: the call covers a pixel once however
            // many passes its library makes over it (stencil, cover, clean-up).
            count_state(f, &saved, counting[0], [w, h], first, (1, REPLACE));
            let before = drain_errors(f);
            if before != NO_ERROR {
                return self.fail(format!(
                    "GL error 0x{before:04X} setting up the count of a VG call's draw"
                ));
            }
            replay();
            // The draw itself raises an error: it drew nothing.
            if drain_errors(f) == NO_ERROR {
                if let Some(g) = self.group.as_mut() {
                    g.dest = Some(dest);
                }
            }
        }
    }

    /// Ends VG call `call` of `frame`, whose serialized time is `time_ns`: when its library's
    /// draws were counted ([`Painter::count_vg_draw`]) the time is spread over the pixels
    /// they covered, each counted once, and the call is listed in its target's draws
    /// (with 0 fragments and why when none could be counted); `false` when it made no draw
    /// (nothing listed: the host paints the call from its path when it can).
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn paint_vg_call(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        call: u32,
        time_ns: u64,
    ) -> bool {
        let Some(group) = self.group.take() else {
            return false;
        };
        self.frame.get_or_insert(frame);
        let Some(dest) = group.dest else {
            let why = if group.note.is_empty() {
                "each draw of its VG library raised a GL error".to_string()
            } else {
                group.note
            };
            self.unpainted(call, time_ns, 0, Vec::new(), why);
            return true;
        };
        if self.unsupported.is_some() || self.failure.is_some() {
            self.list(dest.id, call, time_ns);
            return true;
        }
        // SAFETY: our caller's promise.
        let ours = unsafe {
            let errors = ErrorScope::enter(f);
            self.paint_vg_call_inner(f, call, time_ns, dest, group.note);
            errors.leave()
        };
        if ours != NO_ERROR {
            self.fail(format!(
                "GL error 0x{ours:04X} while painting VG call {call} (the map would be wrong)"
            ));
        }
        true
    }

    unsafe fn paint_vg_call_inner(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        dest: Destination,
        note: String,
    ) {
        // SAFETY: as in `paint_inner`; the work stencil holds the call's count.
        unsafe {
            let saved = self.save(f);
            let (w, h) = (dest.width, dest.height);
            if let Err(e) = self.ensure(f, dest.id, w, h) {
                self.list(dest.id, call, time_ns);
                return self.fail(e);
            }
            let counting = self.work.as_ref().expect("work").fbos;
            let accum = self.accums[&dest.id].fbo;
            let (program, uniform, vao) = self.program.expect("program");
            let counts = self.our_passes_and_counts(f, counting, uniform, program, vao, w, h);
            let (n, bbox, _) = total_and_box(&counts, w);
            if n > 0 {
                self.add_share(
                    f,
                    [accum, 0],
                    uniform,
                    bbox,
                    time_ns as f64 / n as f64,
                    true,
                );
            }
            drop(saved);
            self.painted(dest.id, call, n, time_ns, bbox);
            self.flow.push(DrawFlow {
                call,
                target: dest.id,
                sampled: Vec::new(),
                bbox,
                coverage: Vec::new(),
                note,
            });
        }
    }

    /// Where the current draw goes (the bound draw framebuffer): the default framebuffer at
    /// the surface's size, or an offscreen target, registered the first time. `Err`: the draw
    /// cannot be painted, and whether that fails the frame's maps.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    unsafe fn destination(&mut self, f: &ThermalFns) -> Result<Destination, (String, bool)> {
        // SAFETY: our caller's promise; both queries read state only.
        let (framebuffer, viewport) = unsafe {
            (
                f.integer(DRAW_FRAMEBUFFER_BINDING) as u32,
                f.integers4(VIEWPORT),
            )
        };
        let extent = || {
            let [x, y, w, h] = viewport;
            (w > 0 && h > 0).then(|| [(x.max(0) + w) as u32, (y.max(0) + h) as u32])
        };
        if framebuffer == 0 {
            if self.size.is_none() {
                self.size = extent();
            }
            let [width, height] = self.size.ok_or((
                "the surface size is unknown and the viewport is empty".to_string(),
                true,
            ))?;
            return Ok(Destination {
                id: 0,
                width,
                height,
            });
        }
        // SAFETY: our caller's promise (context current); the size probe's error, if any,
        // is drained here.
        let found = unsafe {
            let found = targets::draw_target(f, framebuffer, self.gles);
            drain_errors(f);
            found
        };
        if found.attachments.is_empty() {
            return Err((
                format!("framebuffer {framebuffer} has no colour or depth attachment to paint"),
                false,
            ));
        }
        // A texture whose size GL cannot tell (GLES 3.0) is taken to be the viewport's extent.
        let [width, height] = found.size.or_else(extent).ok_or((
            format!("framebuffer {framebuffer}'s size is unknown and the viewport is empty"),
            false,
        ))?;
        self.drawn_textures = found
            .attachments
            .iter()
            .filter_map(Attachment::texture)
            .collect();
        self.register(
            framebuffer,
            found.attachments,
            [width, height],
            found.format,
        )
    }

    /// The offscreen target of `attachments` at `size`, numbered the first time it is seen;
    /// `Err` when its maps would go over the budget.
    fn register(
        &mut self,
        framebuffer: u32,
        attachments: Vec<Attachment>,
        [width, height]: [u32; 2],
        format: u32,
    ) -> Result<Destination, (String, bool)> {
        if self.known.len() >= MAX_KNOWN_TARGETS {
            self.known.clear();
        }
        let key = (attachments.clone(), [width, height]);
        let next_id = &mut self.next_id;
        let target = self.known.entry(key).or_insert_with(|| {
            let id = *next_id;
            *next_id += 1;
            RenderTarget {
                id,
                framebuffer,
                attachments,
                width,
                height,
                format,
            }
        });
        let id = target.id;
        let target = target.clone();
        self.pending_targets.entry(id).or_insert(target);
        let fits = self.accums.contains_key(&id)
            || self.accums.values().map(Accum::pixels).sum::<u64>()
                + u64::from(width) * u64::from(height)
                <= MAX_MAP_PIXELS;
        if !fits {
            return Err((
                format!(
                    "target {id} ({width}x{height}) is over the maps' budget of \
                     {MAX_MAP_PIXELS} pixels per context"
                ),
                false,
            ));
        }
        Ok(Destination { id, width, height })
    }

    /// Runs `paint` (the painting of a draw, a dispatch, a blit or a copy) for call `call` of
    /// frame `frame` in its own error scope: a painter that has failed or cannot paint here
    /// only lists the call; a GL error of ours fails the painter, naming `kind`.
    ///
    /// # Safety
    /// As [`Painter::paint`]; `paint` may assume the same.
    unsafe fn placed(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        call: u32,
        time_ns: u64,
        kind: &str,
        paint: impl FnOnce(&mut Self),
    ) {
        crate::waits::timed(crate::waits::Phase::Paint, || {
            self.frame.get_or_insert(frame);
            self.drawn_textures.clear();
            if self.unsupported.is_some() || self.failure.is_some() {
                self.list(0, call, time_ns);
                return;
            }
            // SAFETY: our caller's promise: this painter's context is current and `f` its real
            // functions.
            let ours = unsafe {
                let errors = ErrorScope::enter(f);
                paint(self);
                errors.leave()
            };
            if ours != NO_ERROR {
                self.fail(format!(
                    "GL error 0x{ours:04X} while painting {kind} {call} (the map would be wrong)"
                ));
            }
        })
    }

    /// Paints compute dispatch `call` of frame `frame`, of serialized time `time_ns`: a
    /// dispatch has no fragments, so its time is spread evenly over the texels of the image
    /// level it stores to (`T/N` on each of its `N` texels), that level being a render target
    /// of its own (several images: one target, as several draw buffers are), so the draws
    /// that later sample it carry the cost downstream, and it consumes what it samples like
    /// a draw. A dispatch storing to no image (storage buffers only) is listed unpainted with
    /// why. Timed deferred (`weight`), its time is added at the flush ([`Painter::spread`]).
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn dispatch(&mut self, f: &ThermalFns, frame: u64, call: u32, weight: Weight) {
        let time_ns = self.spread_weight(call, weight);
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions, which `placed` passes on to the closure.
        unsafe {
            self.placed(f, frame, call, time_ns, "dispatch", |p| {
                p.dispatch_inner(f, call, time_ns)
            })
        };
    }

    /// The time of a dispatch, blit or copy `call` to spread now (0 where it is timed
    /// deferred: its timestamp pair is kept for the flush, and its spread waits for it).
    fn spread_weight(&mut self, call: u32, weight: Weight) -> u64 {
        self.spreading_deferred = false;
        match weight {
            Weight::Known(t) | Weight::Unreached(t) => t,
            Weight::Deferred(before, after) => {
                // Without maps, no flush reads the stamps: the call is listed without its time.
                if self.unsupported.is_none() {
                    self.spreading_deferred = true;
                    self.spread_stamps.push((call, [before, after]));
                }
                0
            }
        }
    }

    unsafe fn dispatch_inner(&mut self, f: &ThermalFns, call: u32, time_ns: u64) {
        // SAFETY: `dispatch`'s caller's promise: this painter's context is current and `f`
        // its real functions; the objects bound are our maps, and `saved` restores what is
        // changed.
        unsafe {
            let (sampled, note) = match self.samplers.sampled(f, self.compatibility) {
                Ok(s) => (s, String::new()),
                Err(why) => (Vec::new(), why),
            };
            let stored = self.samplers.stored(f);
            drain_errors(f);
            let stored = match stored {
                Ok(s) if s.is_empty() => {
                    let why = "a compute dispatch storing to no image (storage buffers only): \
                               its time has no texel"
                        .to_string();
                    return self.unpainted(call, time_ns, 0, sampled, why);
                }
                Ok(s) => s,
                Err(why) => return self.unpainted(call, time_ns, 0, sampled, why),
            };
            let (size, format) = targets::size_of(f, &stored[0]);
            drain_errors(f);
            let Some(size) = size else {
                let why = format!(
                    "the size of the image it stores to ({:?}) is unknown: not a 2D texture, \
                     or no glGetTexLevelParameteriv (GLES 3.0)",
                    stored[0]
                );
                return self.unpainted(call, time_ns, 0, sampled, why);
            };
            let textures: Vec<u32> = stored.iter().filter_map(Attachment::texture).collect();
            let dest = match self.register(0, stored, size, format) {
                Ok(d) => d,
                Err((why, _)) => {
                    self.skipped_budget += 1;
                    return self.unpainted(call, time_ns, 0, sampled, why);
                }
            };
            self.spread(
                f,
                dest,
                [0, 0, size[0], size[1]],
                call,
                time_ns,
                sampled,
                note,
            );
            self.drawn_textures = textures;
        }
    }

    /// Paints blit `call` of frame `frame` (`glBlitFramebuffer`, serialized time `time_ns`,
    /// destination rectangle `dst` = x0, y0, x1, y1 as passed): its time spread evenly over the
    /// destination pixels it writes (scissored, clipped to the target), and the texture or
    /// renderbuffer it reads as what it sampled, so a pass it copies flows on. The default
    /// framebuffer as source is said in the flow's note: its cost is on its own map already.
    /// Timed deferred (`weight`), its time is added at the flush ([`Painter::spread`]).
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn blit(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        call: u32,
        weight: Weight,
        dst: [GLint; 4],
    ) {
        let time_ns = self.spread_weight(call, weight);
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions, which `placed` passes on to the closure.
        unsafe {
            self.placed(f, frame, call, time_ns, "blit", |p| {
                p.blit_inner(f, call, time_ns, dst)
            })
        };
    }

    /// [`Painter::blit`] of a `glBlitNamedFramebuffer` (GL 4.5), whose framebuffers
    /// (`read`, `draw`; 0 the default one) its arguments name instead of the bindings: they
    /// are bound while it is painted, and the program's bindings put back.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn blit_named(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        call: u32,
        weight: Weight,
        [read, draw]: [GLuint; 2],
        dst: [GLint; 4],
    ) {
        // SAFETY: our caller's promise; `_saved` puts the program's bindings back.
        unsafe {
            let _saved = Saved::take(f, &framebuffer_bindings(f));
            (f.bind_framebuffer)(READ_FRAMEBUFFER, read);
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, draw);
            self.blit(f, frame, call, weight, dst);
        }
    }

    unsafe fn blit_inner(&mut self, f: &ThermalFns, call: u32, time_ns: u64, dst: [GLint; 4]) {
        // SAFETY: `blit`'s caller's promise: this painter's context is current and `f` its
        // real functions.
        unsafe {
            let (mut sampled, note) = read_framebuffer_source(f);
            drain_errors(f);
            let Some(dest) = self.draw_destination(f, call, time_ns, &mut sampled) else {
                return;
            };
            let (w, h) = (dest.width as GLint, dest.height as GLint);
            let [x0, y0, x1, y1] = dst;
            let mut rect = [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)];
            if (f.is_enabled)(SCISSOR_TEST) != 0 {
                let [sx, sy, sw, sh] = f.integers4(SCISSOR_BOX);
                rect = [
                    rect[0].max(sx),
                    rect[1].max(sy),
                    rect[2].min(sx + sw),
                    rect[3].min(sy + sh),
                ];
            }
            let clip = |v: GLint, hi: GLint| v.clamp(0, hi) as u32;
            let rect = [
                clip(rect[0], w),
                clip(rect[1], h),
                clip(rect[2], w),
                clip(rect[3], h),
            ];
            if rect[2] <= rect[0] || rect[3] <= rect[1] {
                let why = "its destination rectangle is empty".to_string();
                return self.unpainted(call, time_ns, dest.id, sampled, why);
            }
            self.spread(f, dest, rect, call, time_ns, sampled, note);
        }
    }

    /// Paints copy `call` of frame `frame` (serialized time `time_ns`): its time spread evenly
    /// over the texels it writes, `rect` (x0, y0, x1, y1 in the destination's level, clipped
    /// to it), the destination being a target of its own (as a dispatch's images are), and
    /// what it reads as what it sampled, so a pass it copies flows on to the destination's
    /// consumers. Timed deferred (`weight`), its time is added at the flush
    /// ([`Painter::spread`]).
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn copy(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        call: u32,
        weight: Weight,
        copy: &CopyCall,
    ) {
        let time_ns = self.spread_weight(call, weight);
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions, which `placed` passes on to the closure.
        unsafe {
            self.placed(f, frame, call, time_ns, "copy", |p| {
                p.copy_inner(f, call, time_ns, copy)
            })
        };
    }

    unsafe fn copy_inner(&mut self, f: &ThermalFns, call: u32, time_ns: u64, copy: &CopyCall) {
        // SAFETY: `copy`'s caller's promise: this painter's context is current and `f` its
        // real functions; the queries restore what they bind.
        unsafe {
            let (sampled, note) = match copy.source {
                CopySource::ReadFramebuffer => read_framebuffer_source(f),
                CopySource::Object(a) => (vec![a.flow_key()], String::new()),
            };
            drain_errors(f);
            let (dest, size, format) = targets::copy_destination(f, &copy.dest);
            drain_errors(f);
            let (Some(dest), Some(size)) = (dest, size) else {
                let why = format!(
                    "the size of what it writes ({:?}) is unknown: a texture of a kind other \
                     than 2D, cube map, 3D or 2D array, or no glGetTexLevelParameteriv \
                     (GLES 3.0)",
                    copy.dest
                );
                return self.unpainted(call, time_ns, 0, sampled, why);
            };
            let textures: Vec<u32> = dest.texture().into_iter().collect();
            let target = match self.register(0, vec![dest], size, format) {
                Ok(d) => d,
                Err((why, _)) => {
                    self.skipped_budget += 1;
                    return self.unpainted(call, time_ns, 0, sampled, why);
                }
            };
            let [x0, y0, x1, y1] = copy.rect;
            let rect = [
                x0.min(size[0]),
                y0.min(size[1]),
                x1.min(size[0]),
                y1.min(size[1]),
            ];
            if rect[2] <= rect[0] || rect[3] <= rect[1] {
                let why = "its destination rectangle is empty".to_string();
                return self.unpainted(call, time_ns, target.id, sampled, why);
            }
            self.spread(f, target, rect, call, time_ns, sampled, note);
            self.drawn_textures = textures;
        }
    }

    /// Adds `time_ns` evenly over `rect` (x0, y0, x1, y1 in `dest`'s pixels, not empty) of
    /// `dest`'s heat map, nothing on its overdraw (the call shades no fragment), and lists
    /// call `call` with `rect`'s pixels as its fragments, its box `rect` and no kept coverage
    /// (its inflow is spread over the box): for the work calls without fragments of their own.
    /// A call timed deferred has no time yet: it is listed and its place kept, and the flush
    /// adds `T/N` over the place into the map it read back, on the CPU (a uniform share needs
    /// no pass, and so no wait for `T` before the maps are read).
    ///
    /// # Safety
    /// As [`Painter::paint`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn spread(
        &mut self,
        f: &ThermalFns,
        dest: Destination,
        rect: [u32; 4],
        call: u32,
        time_ns: u64,
        sampled: Vec<u32>,
        note: String,
    ) {
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions; the objects bound are our maps, and `saved` restores what is changed.
        unsafe {
            let saved = self.save(f);
            let (w, h) = (dest.width, dest.height);
            if let Err(e) = self.ensure(f, dest.id, w, h) {
                self.list(0, call, time_ns);
                return self.fail(e);
            }
            let accum = self.accums[&dest.id].fbo;
            let (program, uniform, vao) = self.program.expect("program");
            let n = u64::from(rect[2] - rect[0]) * u64::from(rect[3] - rect[1]);
            if self.spreading_deferred {
                self.spreads.push(PendingSpread {
                    call,
                    target: dest.id,
                    width: w,
                    rect,
                    time_ns: None,
                });
            } else {
                // One pass of our program over the rectangle: T/N on each pixel.
                self.our_pass_state(f, program, vao, w, h);
                into_box(f, accum, rect);
                (f.disable)(STENCIL_TEST);
                (f.uniform2f)(uniform, (time_ns as f64 / n as f64) as f32, 0.0);
                (f.draw_arrays)(TRIANGLES, 0, 3);
            }
            drop(saved);
            self.painted(dest.id, call, n, time_ns, rect);
            self.flow.push(DrawFlow {
                call,
                target: dest.id,
                sampled,
                bbox: rect,
                coverage: Vec::new(),
                note,
            });
        }
    }

    /// [`Painter::destination`] for call `call` (serialized time `time_ns`) that samples
    /// `sampled`; when the call cannot be painted there, it is listed unpainted with why
    /// (`sampled` taken into its flow), or the painter fails, and `None` is returned.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    unsafe fn draw_destination(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        sampled: &mut Vec<u32>,
    ) -> Option<Destination> {
        // SAFETY: our caller's promise.
        match unsafe { self.destination(f) } {
            Ok(d) => Some(d),
            Err((why, true)) => {
                self.list(0, call, time_ns);
                self.fail(why);
                None
            }
            Err((why, false)) => {
                self.skipped_budget += 1;
                self.unpainted(call, time_ns, 0, std::mem::take(sampled), why);
                None
            }
        }
    }

    /// Records that call `call` was painted into target `target`'s map: its `n` fragments,
    /// its time and box in the target's list, the map marked as holding something.
    fn painted(&mut self, target: u32, call: u32, n: u64, time_ns: u64, bbox: [u32; 4]) {
        if let Some(a) = self.accums.get_mut(&target) {
            a.used = true;
        }
        self.draws.entry(target).or_default().push(DrawCoverage {
            call,
            fragments: n,
            time_ns,
            bbox,
        });
    }

    /// Records a draw that is not painted, with why, in the screen's list (0 fragments) and
    /// in the flow.
    fn unpainted(&mut self, call: u32, time_ns: u64, target: u32, sampled: Vec<u32>, why: String) {
        self.list(0, call, time_ns);
        self.flow.push(DrawFlow {
            call,
            target,
            sampled,
            bbox: [0; 4],
            coverage: Vec::new(),
            note: format!("not painted: {why}"),
        });
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn paint_inner(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        slot: Deferral,
        unreached: bool,
        program_query: bool,
        drawn_this_frame: &dyn Fn(u32) -> bool,
        replay: &dyn Fn(),
    ) {
        // SAFETY: `paint`'s caller's promise: this painter's context is current (GL 3.0+ or
        // GLES 3.0+, `support` checked) and `f` its real functions; the objects bound are our
        // targets or the program's saved bindings, and `saved` restores what is changed.
        unsafe {
            let (mut sampled, mut note) = match self.samplers.sampled(f, self.compatibility) {
                Ok(s) => (s, String::new()),
                Err(why) => (Vec::new(), why),
            };
            drain_errors(f);
            let Some(dest) = self.draw_destination(f, call, time_ns, &mut sampled) else {
                return;
            };
            if program_query
                || f.integer(TRANSFORM_FEEDBACK_ACTIVE) != 0
                || f.current_program_deleting()
            {
                self.skipped_other += 1;
                let why = "the program had a query of its own active, transform feedback on, \
                           or its program flagged for deletion"
                    .to_string();
                return self.unpainted(call, time_ns, dest.id, sampled, why);
            }
            if self.compatibility && f.not_rendering() {
                self.skipped_other += 1;
                return self.unpainted(call, time_ns, dest.id, sampled, NOT_RENDERING.into());
            }
            let saved = self.save(f);
            let (w, h) = (dest.width, dest.height);
            if let Err(e) = self.ensure(f, dest.id, w, h) {
                self.list(0, call, time_ns);
                return self.fail(e);
            }
            // After `ensure`: a listing reaches the flush only with its target's maps made.
            if unreached {
                drop(saved);
                self.painted(dest.id, call, 0, time_ns, [0; 4]);
                return self.flow.push(DrawFlow {
                    call,
                    target: dest.id,
                    sampled,
                    bbox: [0; 4],
                    coverage: Vec::new(),
                    note,
                });
            }
            // What the replay could write of the program's, kept aside until it is done.
            let kept = match self.writes.as_mut().map(|w| w.keep(f)) {
                None | Some(Ok(None)) => None,
                Some(Ok(Some(kept))) => Some(kept),
                Some(Err(why)) => {
                    drop(saved);
                    self.skipped_other += 1;
                    return self.unpainted(call, time_ns, dest.id, sampled, why);
                }
            };
            let work = self.work.as_ref().expect("work");
            let counting = work.fbos;
            let (accum, plain) = {
                let a = &self.accums[&dest.id];
                (a.fbo, a.plain)
            };
            let (program, uniform, vao) = self.program.expect("program");

            let begun = self.stamp(f);
            // Count: replay the draw with the program's own state into our stencil, clipped
            // to the target's size (our stencil may be larger).
            count_state(f, &saved, counting[0], [w, h], true, (0, INCR));
            let before = drain_errors(f);
            if before != NO_ERROR {
                self.file_stamps([begun, 0, 0]);
                self.list(0, call, time_ns);
                return self.fail(format!(
                    "GL error 0x{before:04X} setting up the count of call {call}"
                ));
            }
            // Weighted on the GPU, `N` is the replay's samples passed, written into the slot.
            let fns = self.weights.as_ref().map(|w| w.fns);
            let (samples, tallied) = match slot {
                Deferral::None => (None, None),
                Deferral::Slot(s, query) => (Some((s, query)).zip(fns), None),
                Deferral::Tally(stamps) => (None, Some(stamps)),
            };
            if let Some(((_, query), fns)) = samples {
                (fns.begin_query)(SAMPLES_PASSED, query);
            }
            replay();
            if let Some((_, fns)) = samples {
                (fns.end_query)(SAMPLES_PASSED);
            }
            if let Some(kept) = kept {
                kept.restore(f);
            }
            let replayed_at = self.stamp(f);
            let replayed = drain_errors(f);
            if replayed != NO_ERROR {
                self.file_stamps([begun, replayed_at, 0]);
                // The draw itself raises this error: it drew nothing.
                return self.list(0, call, time_ns);
            }
            let keeps_coverage = sampled.iter().any(|&t| drawn_this_frame(t));
            // This draw in the tally: weighed there with its timestamps, else (weighed on the
            // GPU) for its coverage alone.
            let tallied_draw = |stamps, coverage| Tallied {
                call,
                target: dest.id,
                width: w,
                stamps,
                coverage,
            };
            // `counts` stays empty where they are not read: on the GPU without a consumer.
            let (counts, n, bbox) = match samples {
                Some(((slot, query), fns)) => {
                    let buffer = self.weights.as_ref().expect("weights").buffers[slot.buffer].0;
                    (f.bind_buffer)(QUERY_BUFFER, buffer);
                    (fns.get_query_objectui64v)(
                        query,
                        QUERY_RESULT,
                        (slot.offset() + 16) as *mut u64,
                    );
                    // Counts are read back only for a consumer's coverage (the flow's), where
                    // the tally cannot keep it for the flush.
                    let tallies = keeps_coverage && self.tallying && self.stencil_sampling;
                    let (counts, n, bbox) = if keeps_coverage && !tallies {
                        let counts =
                            self.our_passes_and_counts(f, counting, uniform, program, vao, w, h);
                        let (n, bbox, _) = total_and_box(&counts, w);
                        (counts, n, bbox)
                    } else {
                        (Vec::new(), FRAGMENTS_PENDING, [0, 0, w, h])
                    };
                    let weigh = || self.add_weighted(f, [accum, plain], vao, w, h, slot, bbox);
                    let conditional = fns.conditional.map(|c| c.run(f, query, weigh));
                    match conditional {
                        None => weigh(),
                        Some(Ok(())) => {}
                        Some(Err(e)) => {
                            self.list(0, call, time_ns);
                            return self.fail(format!(
                                "GL error 0x{e:04X} weighting call {call} on the GPU"
                            ));
                        }
                    }
                    if tallies {
                        let draw = tallied_draw(None, true);
                        if let Err(why) = self.tally_pass(f, draw, h, plain, vao) {
                            self.list(0, call, time_ns);
                            return self.fail(why);
                        }
                    }
                    (counts, n, bbox)
                }
                None if tallied.is_some() => {
                    // A consumer's coverage comes from its records at the flush: no read.
                    let draw = tallied_draw(tallied, keeps_coverage);
                    if let Err(why) = self.tally_pass(f, draw, h, plain, vao) {
                        self.list(0, call, time_ns);
                        return self.fail(why);
                    }
                    (Vec::new(), FRAGMENTS_PENDING, [0, 0, w, h])
                }
                None => {
                    let counts =
                        self.our_passes_and_counts(f, counting, uniform, program, vao, w, h);
                    let (n, bbox, most) = total_and_box(&counts, w);
                    if n > 0 {
                        self.add_share(
                            f,
                            [accum, plain],
                            uniform,
                            bbox,
                            time_ns as f64 / n as f64,
                            most <= 1,
                        );
                    }
                    (counts, n, bbox)
                }
            };
            let weighed = self.stamp(f);
            self.file_stamps([begun, replayed_at, weighed]);
            drop(saved);
            self.painted(dest.id, call, n, time_ns, bbox);
            // A consumer of a texture drawn this frame keeps where its fragments fell.
            let mut coverage = Vec::new();
            if n > 0 && keeps_coverage && !counts.is_empty() {
                coverage = self.keep_coverage(&counts, w, bbox, &mut note);
            }
            self.flow.push(DrawFlow {
                call,
                target: dest.id,
                sampled,
                bbox,
                coverage,
                note,
            });
        }
    }

    /// A timestamp of [`OwnStamps`] now, where heat is weighted on the GPU (0: none).
    ///
    /// # Safety
    /// This painter's context must be current and `f` its real functions.
    unsafe fn stamp(&mut self, f: &ThermalFns) -> GLuint {
        if !self.weighting {
            return 0;
        }
        let stamps = self.stamps.get_or_insert_with(|| {
            let mut bits = 0;
            if let Some(get) = f.get_queryiv_t {
                // SAFETY: our caller's promise.
                unsafe { get(TIMESTAMP, QUERY_COUNTER_BITS, &mut bits) };
            }
            OwnStamps::of(f, bits)
        });
        // SAFETY: our caller's promise.
        stamps.as_mut().map_or(0, |s| unsafe { s.stamp() })
    }

    /// Files a painted draw's stamps ([`OwnStamps::file`]).
    fn file_stamps(&mut self, stamps: [GLuint; 3]) {
        if let Some(Some(s)) = self.stamps.as_mut() {
            s.file(stamps);
        }
    }

    /// A tallied consumer's coverage (inside its box, [`tally::Reading::coverages`]), within
    /// the frame's budget for it; past the budget, none, and `note` says so.
    fn keep_tallied_coverage(&mut self, coverage: Vec<u8>, note: &mut String) -> Vec<u8> {
        if self.coverage_budget(coverage.len(), note) {
            coverage
        } else {
            Vec::new()
        }
    }

    /// Takes `len` bytes of the frame's consumer coverage budget; `false`, and `note` says
    /// so (when it says nothing yet), past it.
    fn coverage_budget(&mut self, len: usize, note: &mut String) -> bool {
        if self.coverage_bytes + len <= MAX_COVERAGE_BYTES {
            self.coverage_bytes += len;
            return true;
        }
        if note.is_empty() {
            *note = format!(
                "coverage not kept: the frame's {MAX_COVERAGE_BYTES} bytes of consumer coverage \
                 are spent"
            );
        }
        false
    }

    /// A consumer's coverage inside `bbox` (from `counts`, `w` wide), within the frame's
    /// budget for it; past the budget, none, and `note` says so.
    fn keep_coverage(
        &mut self,
        counts: &[u8],
        w: u32,
        bbox: [u32; 4],
        note: &mut String,
    ) -> Vec<u8> {
        let len = ((bbox[2] - bbox[0]) * (bbox[3] - bbox[1])) as usize;
        if self.coverage_budget(len, note) {
            crop(counts, w, bbox)
        } else {
            Vec::new()
        }
    }

    /// Adds `c·T/N` and `c` into the target's maps (`[accum, plain]`: with and without the
    /// work stencil attached, `w`×`h`), `c` the work stencil's count, inside `bbox`, `T/N`
    /// computed by the GPU from `slot`: in one pass sampling the stencil where it is a texture
    /// (`plain` not 0), else in eight passes adding `2^b·T/N` and `2^b` where bit b is set.
    ///
    /// # Safety
    /// As [`Painter::add_share`], with the program's state saved (its array buffer binding
    /// included) and the weights made.
    #[allow(clippy::too_many_arguments)]
    unsafe fn add_weighted(
        &self,
        f: &ThermalFns,
        [accum, plain]: [GLuint; 2],
        vao: GLuint,
        w: u32,
        h: u32,
        slot: Slot,
        bbox: [u32; 4],
    ) {
        let weights = self.weights.as_ref().expect("weights");
        let fns = weights.fns;
        let sampled = self.sampled.filter(|_| plain != 0);
        let program = sampled.map_or(weights.program, |s| s.weighted.program);
        // SAFETY: our caller's promise; the vertex array and buffer are ours, the attributes
        // read one slot inside the buffer (every vertex reads element 0: divisor 1).
        unsafe {
            self.our_pass_state(f, program, vao, w, h);
            (f.stencil_op_separate)(FRONT_AND_BACK, KEEP, KEEP, KEEP);
            (f.stencil_mask_separate)(FRONT_AND_BACK, 0);
            (f.bind_buffer)(ARRAY_BUFFER, weights.buffers[slot.buffer].0);
            let at = slot.offset();
            (fns.vertex_attrib_i_pointer)(0, 4, UNSIGNED_INT, 0, at as *const c_void);
            (fns.vertex_attrib_i_pointer)(1, 2, UNSIGNED_INT, 0, (at + 16) as *const c_void);
            for index in [0, 1] {
                (fns.vertex_attrib_divisor)(index, 1);
                (fns.enable_vertex_attrib_array)(index);
            }
            if let Some(s) = sampled {
                let boxes = s.boxes.zip(weights.box_buffers.get(slot.buffer).copied());
                let Some((b, buffer)) = boxes else {
                    return self.sampled_pass(f, plain, bbox, s.weighted, s.unit);
                };
                (b.fns.uniform1ui)(b.slot, slot.index);
                return b.fns.storage.with_buffer(f, b.binding, buffer, || {
                    self.sampled_pass(f, plain, bbox, s.weighted, s.unit)
                });
            }
            into_box(f, accum, bbox);
            Self::bit_passes(
                f,
                weights.uniform,
                &|b| ((1u32 << b) as f32, (1u32 << b) as f32),
                false,
            );
        }
    }

    /// Appends `draw`'s counts (the work stencil, `draw.width`×`h`) to the tally, the tally
    /// made on the first such draw; `plain`: the target's maps without the stencil, drawn
    /// into with colour writes off (the pass writes only our buffer).
    ///
    /// # Safety
    /// As [`Painter::add_weighted`], the program's state saved.
    unsafe fn tally_pass(
        &mut self,
        f: &ThermalFns,
        draw: Tallied,
        h: u32,
        plain: GLuint,
        vao: GLuint,
    ) -> Result<(), String> {
        let work = self.work.as_ref().expect("work");
        let (Some(fns), Some(sampled)) = (work.sampled, self.sampled) else {
            return Err(
                "a draw timed deferred reached a painter whose work stencil is not \
                        sampled: the tally cannot read its counts"
                    .into(),
            );
        };
        let (texture, w) = (work.rbs[0], draw.width);
        // SAFETY: our caller's promise; the program, texture, buffer and framebuffer are ours.
        unsafe {
            if self.tally.is_none() {
                let hint = 4 * u64::from(work.width) * u64::from(work.height);
                self.tally = Some(self.build_tally(f, hint)?);
            }
            let pixels = u64::from(w) * u64::from(h);
            if self.tally.as_ref().is_some_and(|t| t.must_drain(pixels)) {
                self.drain_tally(f)?;
            }
            let tally = self.tally.as_mut().expect("tally");
            let index = tally.take(draw, pixels)?;
            let program = tally.program;
            self.our_pass_state(f, program.program, vao, w, h);
            into_box(f, plain, [0, 0, w, h]);
            (f.disable)(STENCIL_TEST);
            (f.color_mask)(0, 0, 0, 0);
            (fns.uniform1i)(program.count, sampled.unit as GLint);
            let tally = self.tally.as_ref().expect("tally");
            fns.with_texture(f, sampled.unit, texture, || {
                tally.pass(f, index, w, || (f.draw_arrays)(TRIANGLES, 0, 3));
            });
        }
        Ok(())
    }

    /// Reads the tally in the middle of the frame, before it could fill up
    /// ([`Tally::must_drain`]): its records resolved into the maps on the GPU (or, tallied
    /// for their coverage alone, read), its draws kept for the flush to list. A wait.
    ///
    /// # Safety
    /// As [`Painter::tally_pass`].
    unsafe fn drain_tally(&mut self, f: &ThermalFns) -> Result<(), String> {
        // SAFETY: our caller's promise; the bindings the read changes are put back.
        let reading = unsafe {
            match self.resolve_tally(f) {
                Some(r) => r?,
                None => {
                    let _bindings = Saved::take(f, &tally_bindings(f));
                    let width_of = widths(&self.accums);
                    self.tally
                        .as_mut()
                        .expect("tally")
                        .read(f, false, &width_of)?
                }
            }
        };
        self.drained.push(reading);
        Ok(())
    }

    /// Builds the tally's program ([`tally::tally_fs`], on the context's last storage buffer
    /// binding) and buffer (room for `hint` records at least).
    ///
    /// # Safety
    /// As [`Painter::build_program`].
    unsafe fn build_tally(&self, f: &ThermalFns, hint: u64) -> Result<Tally, String> {
        let fns = TallyFns::of(f, self.gles)?;
        // SAFETY: our caller's promise; the uniform names are NUL-terminated, the storage
        // buffer binding changed by the allocation is put back.
        unsafe {
            let bindings = f.integer(MAX_SHADER_STORAGE_BUFFER_BINDINGS);
            if bindings < 1 {
                return Err("no storage buffer binding for the deferred tally".into());
            }
            let binding = bindings as u32 - 1;
            let header = tally::header(self.gles);
            let fs = tally::tally_fs(binding, self.tally_resolves);
            let (program, _) = self.build_with(f, header, VS, &fs)?;
            let at = |program: GLuint, name: &std::ffi::CStr| {
                (f.get_uniform_location)(program, name.as_ptr())
            };
            let program = TallyProgram {
                program,
                count: at(program, c"u_count"),
                draw: at(program, c"u_draw"),
                width: at(program, c"u_width"),
            };
            if program.count < 0 || program.draw < 0 || program.width < 0 {
                return Err("the deferred tally's program lacks a uniform".into());
            }
            let resolve = if self.tally_resolves {
                let vs = tally::resolve_vs(binding);
                let (resolve, _) = self.build_with(f, header, &vs, tally::RESOLVE_FS)?;
                let r = ResolveProgram {
                    program: resolve,
                    target: at(resolve, c"u_target"),
                    width: at(resolve, c"u_width"),
                    size: at(resolve, c"u_size"),
                };
                if r.target < 0 || r.width < 0 || r.size < 0 {
                    return Err("the deferred tally's resolve program lacks a uniform".into());
                }
                Some(r)
            } else {
                None
            };
            // Read as a GLint: clamped to 2 GiB where larger, which is plenty.
            let block = f.integer(MAX_SHADER_STORAGE_BLOCK_SIZE).max(0) as u64;
            let _binding = Saved::take(f, &[storage_binding(f)]);
            Ok(Tally::new(f, fns, (program, resolve), binding, hint, block))
        }
    }

    /// Reads the time of each dispatch, blit or copy of the frame timed deferred (`waited`: a
    /// read of the flush already waited for the GPU to finish the frame, else this read
    /// waits, and is counted), gives it to its pending spread, and returns it by call, for
    /// the listings.
    ///
    /// # Safety
    /// As [`Painter::read_back`].
    unsafe fn spread_times(
        &mut self,
        f: &ThermalFns,
        waited: bool,
    ) -> HashMap<u32, weights::SlotValues> {
        let stamps = std::mem::take(&mut self.spread_stamps);
        if stamps.is_empty() {
            return HashMap::new();
        }
        let (get, bits) = if self.gles {
            (f.get_query_objectui64v_ext_t, f.get_queryiv_ext_t)
        } else {
            (f.get_query_objectui64v_t, f.get_queryiv_t)
        };
        let (Some(get), Some(bits)) = (get, bits) else {
            self.fail("the timestamps of a deferred dispatch, blit or copy cannot be read".into());
            return HashMap::new();
        };
        if !waited {
            crate::waits::note();
        }
        // SAFETY: our caller's promise; the queries are the calls' own pairs, ended.
        unsafe {
            let mask = tally::stamp_mask(bits);
            stamps
                .into_iter()
                .map(|(call, pair)| {
                    let time_ns = tally::pair_time(get, pair, mask);
                    for s in self.spreads.iter_mut().filter(|s| s.call == call) {
                        s.time_ns.get_or_insert(time_ns);
                    }
                    let values = weights::SlotValues {
                        time_ns,
                        fragments: 0,
                        bbox: None,
                    };
                    (call, values)
                })
                .collect()
        }
    }

    /// Where the GPU resolves the tally ([`Painter::set_tally_resolve`]) and draws were
    /// tallied: reads the tally ([`Tally::read`], a wait) and draws its records into each
    /// target's maps, before the flush reads them; `None` elsewhere.
    ///
    /// # Safety
    /// As [`Painter::read_back`], the program's state saved.
    unsafe fn resolve_tally(&mut self, f: &ThermalFns) -> Option<Result<tally::Reading, String>> {
        // Draws weighed on the GPU, tallied for their coverage, add nothing: their records
        // are read after the maps' wait, as on the CPU.
        let t = self.tally.as_mut().filter(|t| t.weighs())?;
        t.resolve?;
        let mut pieces = tally_bindings(f).to_vec();
        if !self.gles {
            pieces.push(Piece::Enabled(PROGRAM_POINT_SIZE));
        }
        if self.compatibility {
            pieces.push(Piece::Enabled(POINT_SMOOTH));
        }
        // SAFETY: our caller's promise; the programs, framebuffers and buffer are ours, and
        // what the passes change beyond the saved state is put back by `_saved`.
        unsafe {
            let _saved = Saved::take(f, &pieces);
            let width_of = widths(&self.accums);
            let reading = match t.read(f, false, &width_of) {
                Ok(r) => r,
                Err(why) => return Some(Err(why)),
            };
            let (Some(resolve), Some((_, _, vao)), Some(tally)) =
                (&reading.resolve, self.program, self.tally.as_ref())
            else {
                return Some(Ok(reading));
            };
            let program = tally.resolve.expect("resolve").program;
            for id in &resolve.targets {
                let Some(a) = self.accums.get(id).filter(|a| a.plain != 0) else {
                    continue;
                };
                self.our_pass_state(f, program, vao, a.width, a.height);
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, a.plain);
                (f.disable)(STENCIL_TEST);
                if !self.gles {
                    // Else the program's glPointSize sizes our points.
                    (f.enable)(PROGRAM_POINT_SIZE);
                }
                if self.compatibility {
                    // A smooth point would also touch its neighbours.
                    (f.disable)(POINT_SMOOTH);
                }
                tally.resolve_pass(f, *id, [a.width, a.height], resolve.points);
            }
            if let Some(t) = self.tally.as_mut() {
                t.settle(f);
            }
            Some(Ok(reading))
        }
    }

    /// Gives each draw of the frame timed deferred its time, and its fragments and box when
    /// weighted on the GPU, from its slot (`read`: what the flush read of the slots, see
    /// [`Weights::sources`]).
    fn fill_deferred(&mut self, read: &[Vec<weights::SlotValues>]) {
        let deferred = std::mem::take(&mut self.deferred);
        let values = deferred
            .into_iter()
            .filter_map(|(call, slot)| {
                let v = read
                    .get(slot.buffer)
                    .and_then(|b| b.get(slot.index as usize))?;
                Some((call, *v))
            })
            .collect();
        self.fill(values);
    }

    /// Gives each tallied draw of the frame its time, fragments and box, from the tally's
    /// read ([`tally::weigh`]); one that lost records (`why`) is listed unpainted.
    fn fill_tallied(
        &mut self,
        weighed: &[tally::Weighed],
        coverages: Vec<Option<Vec<u8>>>,
        why: &str,
    ) {
        // Each draw's place in the flow, looked up once: a frame may tally 65,536 draws.
        let places: HashMap<u32, usize> = self
            .flow
            .iter()
            .enumerate()
            .map(|(i, fl)| (fl.call, i))
            .collect();
        for (d, coverage) in weighed.iter().zip(coverages) {
            let Some(&at) = places.get(&d.call) else {
                continue;
            };
            if !d.complete {
                let flow = &mut self.flow[at];
                flow.coverage.clear();
                // Weighed on the GPU, it is painted; only its coverage is missing.
                flow.note = if d.weighs {
                    format!("not painted: {why}")
                } else {
                    format!("coverage not kept: {why}")
                };
                continue;
            }
            let Some(coverage) = coverage else {
                continue;
            };
            let mut note = std::mem::take(&mut self.flow[at].note);
            let kept = self.keep_tallied_coverage(coverage, &mut note);
            let flow = &mut self.flow[at];
            flow.note = note;
            flow.coverage = kept;
            flow.bbox = d.bbox;
        }
        let values = weighed
            .iter()
            .filter(|d| d.weighs)
            .map(|d| {
                let v = weights::SlotValues {
                    time_ns: d.time_ns,
                    fragments: d.fragments,
                    bbox: (d.fragments > 0).then_some(d.bbox),
                };
                (d.call, v)
            })
            .collect();
        self.fill(values);
    }

    /// Gives each listed draw in `values` (by call) its time, and its fragments and box
    /// where they were pending; a box found this way replaces the target's in the flow too.
    fn fill(&mut self, values: HashMap<u32, weights::SlotValues>) {
        if values.is_empty() {
            return;
        }
        // Boxes found on the GPU, for the flow too.
        let mut found = HashMap::new();
        for list in self.draws.values_mut() {
            for d in list.iter_mut() {
                let Some(v) = values.get(&d.call) else {
                    continue;
                };
                d.time_ns = v.time_ns;
                if d.fragments == FRAGMENTS_PENDING {
                    d.fragments = v.fragments;
                    if let Some(bbox) = v.bbox {
                        d.bbox = bbox;
                        found.insert(d.call, bbox);
                    } else if v.fragments == 0 {
                        d.bbox = [0; 4];
                        found.insert(d.call, [0; 4]);
                    }
                }
            }
        }
        for flow in &mut self.flow {
            if let Some(&bbox) = found.get(&flow.call).filter(|_| flow.coverage.is_empty()) {
                flow.bbox = bbox;
            }
        }
    }

    /// Sets the state every pass of our own program runs in: the compatibility state off
    /// ([`Painter::own_passes`]), no scissor, culling or rasterizer discard, filled polygons,
    /// our program and empty vertex array, a `w`×`h` viewport, additive blending, every
    /// colour channel written. Callers set the framebuffer, scissor and stencil they need.
    ///
    /// # Safety
    /// As [`Painter::save`], with that state saved.
    unsafe fn our_pass_state(&self, f: &ThermalFns, program: GLuint, vao: GLuint, w: u32, h: u32) {
        // SAFETY: our caller's promise; `program` and `vao` are ours.
        unsafe {
            self.own_passes(f);
            (f.disable)(SCISSOR_TEST);
            (f.disable)(CULL_FACE);
            (f.disable)(RASTERIZER_DISCARD);
            if let (Some(pm), false) = (f.polygon_mode, self.gles) {
                pm(FRONT_AND_BACK, FILL);
            }
            (f.use_program)(program);
            (f.bind_vertex_array)(vao);
            (f.viewport)(0, 0, w as GLsizei, h as GLsizei);
            (f.enable)(BLEND);
            (f.blend_func_separate)(ONE, ONE, ONE, ONE);
            (f.blend_equation_separate)(FUNC_ADD, FUNC_ADD);
            (f.color_mask)(1, 1, 1, 1);
        }
    }

    /// Sets up our passes (full-screen triangles of our own program over the target's area,
    /// additive, tested against the work stencil, which they leave alone) and reads `c(p)`,
    /// the count the replays left in the work stencil, as bytes.
    ///
    /// # Safety
    /// This painter's context must be current with `f` its real functions, the program's
    /// state saved, and `counting`, `program`, `uniform` and `vao` this painter's work objects
    /// for a `w`×`h` target.
    #[allow(clippy::too_many_arguments)]
    unsafe fn our_passes_and_counts(
        &mut self,
        f: &ThermalFns,
        counting: [GLuint; 2],
        uniform: GLint,
        program: GLuint,
        vao: GLuint,
        w: u32,
        h: u32,
    ) -> Vec<u8> {
        // SAFETY: our caller's promise; every object bound is ours.
        unsafe {
            self.our_pass_state(f, program, vao, w, h);
            (f.stencil_op_separate)(FRONT_AND_BACK, KEEP, KEEP, KEEP);
            (f.stencil_mask_separate)(FRONT_AND_BACK, 0);

            // c_d(p) as bytes: the stencil itself where the context can read it (desktop
            // GL, GLES with GL_NV_read_stencil): one read, no passes. Where the stencil is
            // sampled, one pass writes it as the red bytes of the RGBA8 buffer, read back
            // (`SAMPLED_COUNT_FS`). Elsewhere two passes
            // into the RGBA8 buffer say where and whether: red where c_d ≥ 1, green where
            // c_d ≥ 2, read back as bytes (a quarter of an R32F read on GLES, the drivers'
            // fast format). Without green, c_d is red. With it, the eight bit passes sum c_d
            // into the R32F buffer, read back as floats.
            (f.bind_framebuffer)(READ_FRAMEBUFFER, counting[0]);
            pack_defaults(f);
            let stencil = if self.stencil_readable {
                self.read_stencil(f, w, h)
            } else {
                None
            };
            let work = self.work.as_ref().expect("work");
            let sampled_count = self
                .sampled
                .zip(work.sampled)
                .filter(|_| stencil.is_none() && work.count_plain != 0);
            match (stencil, sampled_count) {
                (Some(c), _) => c,
                (None, Some((s, fns))) => {
                    let (plain, texture) = (work.count_plain, work.rbs[0]);
                    (f.bind_framebuffer)(DRAW_FRAMEBUFFER, plain);
                    (f.disable)(STENCIL_TEST);
                    (f.disable)(BLEND);
                    (f.use_program)(s.count.program);
                    (fns.uniform1i)(s.count.count, s.unit as GLint);
                    fns.with_texture(f, s.unit, texture, || {
                        (f.draw_arrays)(TRIANGLES, 0, 3);
                    });
                    // Back to what our passes after the count expect.
                    (f.enable)(BLEND);
                    (f.enable)(STENCIL_TEST);
                    (f.use_program)(program);
                    (f.bind_framebuffer)(READ_FRAMEBUFFER, plain);
                    self.read_red(f, w, h)
                }
                (None, None) => {
                    (f.bind_framebuffer)(DRAW_FRAMEBUFFER, counting[0]);
                    (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
                    (f.uniform2f)(uniform, 1.0, 1.0);
                    (f.color_mask)(1, 0, 0, 0);
                    (f.stencil_func_separate)(FRONT_AND_BACK, NOTEQUAL, 0, 0xFF);
                    (f.draw_arrays)(TRIANGLES, 0, 3);
                    (f.color_mask)(0, 1, 0, 0);
                    (f.stencil_func_separate)(FRONT_AND_BACK, LESS, 1, 0xFF);
                    (f.draw_arrays)(TRIANGLES, 0, 3);
                    (f.color_mask)(1, 1, 1, 1);
                    let (mask, overlapping) = self.read_mask(f, w, h);
                    if overlapping {
                        (f.bind_framebuffer)(DRAW_FRAMEBUFFER, counting[1]);
                        (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
                        Self::bit_passes(
                            f,
                            uniform,
                            &|b| ((1u32 << b) as f32, (1u32 << b) as f32),
                            false,
                        );
                        (f.bind_framebuffer)(READ_FRAMEBUFFER, counting[1]);
                        // Exact: the stencil saturates at 255.
                        let floats = self.read_floats(f, w, h);
                        floats.iter().map(|&c| c.clamp(0.0, 255.0) as u8).collect()
                    } else {
                        mask
                    }
                }
            }
        }
    }

    /// Our passes over the work stencil, `add(b)` the (heat, overdraw) added where bit `b`
    /// of the count is set; `single`: every count is at most 1, one pass where it is not 0.
    ///
    /// # Safety
    /// As [`Painter::our_passes_and_counts`], after it set the passes up.
    unsafe fn bit_passes(
        f: &ThermalFns,
        uniform: GLint,
        add: &dyn Fn(u32) -> (f32, f32),
        single: bool,
    ) {
        // SAFETY: our caller's promise.
        unsafe {
            if single {
                (f.stencil_func_separate)(FRONT_AND_BACK, NOTEQUAL, 0, 0xFF);
                let (x, y) = add(0);
                (f.uniform2f)(uniform, x, y);
                (f.draw_arrays)(TRIANGLES, 0, 3);
                return;
            }
            for b in 0..8u32 {
                (f.stencil_func_separate)(FRONT_AND_BACK, EQUAL, 1 << b, 1 << b);
                let (x, y) = add(b);
                (f.uniform2f)(uniform, x, y);
                (f.draw_arrays)(TRIANGLES, 0, 3);
            }
        }
    }

    /// Adds `2^b·share` and `2^b` into the target's maps (`accum`) where bit b of the count
    /// is set, inside `bbox` only.
    ///
    /// # Safety
    /// As [`Painter::bit_passes`].
    unsafe fn add_share(
        &self,
        f: &ThermalFns,
        [accum, plain]: [GLuint; 2],
        uniform: GLint,
        bbox: [u32; 4],
        share: f64,
        single: bool,
    ) {
        // SAFETY: our caller's promise; `accum` and `plain` are ours.
        unsafe {
            if let Some(s) = self.sampled.filter(|_| !single && plain != 0) {
                (f.use_program)(s.shared.program);
                (f.uniform2f)(s.share, share as f32, 1.0);
                return self.sampled_pass(f, plain, bbox, s.shared, s.unit);
            }
            into_box(f, accum, bbox);
            Self::bit_passes(
                f,
                uniform,
                &|b| {
                    let k = f64::from(1u32 << b);
                    ((k * share) as f32, k as f32)
                },
                single,
            );
        }
    }

    /// One pass of `program` (bound, its uniforms but `u_count` set) adding `c` times its
    /// weight into the target's maps through `plain` (the maps without the stencil), inside
    /// `bbox`, `c` sampled from the work stencil texture on `unit`.
    ///
    /// # Safety
    /// As [`Painter::bit_passes`], with the work stencil a texture (`Work::sampled`).
    unsafe fn sampled_pass(
        &self,
        f: &ThermalFns,
        plain: GLuint,
        bbox: [u32; 4],
        program: SampledProgram,
        unit: u32,
    ) {
        let work = self.work.as_ref().expect("work");
        let fns = work.sampled.expect("a sampled stencil");
        // SAFETY: our caller's promise; the texture and framebuffer are ours.
        unsafe {
            into_box(f, plain, bbox);
            (f.disable)(STENCIL_TEST);
            (fns.uniform1i)(program.count, unit as GLint);
            fns.with_texture(f, unit, work.rbs[0], || {
                (f.draw_arrays)(TRIANGLES, 0, 3);
            });
        }
    }

    /// Reads the RGBA8 colour buffer of the bound read framebuffer: red as a 0/1 mask, and
    /// whether any green is set.
    ///
    /// # Safety
    /// As [`Painter::read_floats`], with an RGBA8 colour buffer.
    unsafe fn read_mask(&self, f: &ThermalFns, w: u32, h: u32) -> (Vec<u8>, bool) {
        // SAFETY: our caller's promise.
        let v = unsafe { self.read_rgba8(f, w, h) };
        let green = v.chunks_exact(4).any(|p| p[1] != 0);
        let mask = v.chunks_exact(4).map(|p| u8::from(p[0] != 0)).collect();
        (mask, green)
    }

    /// Reads the RGBA8 colour buffer of the bound read framebuffer: its red bytes.
    ///
    /// # Safety
    /// As [`Painter::read_mask`].
    unsafe fn read_red(&self, f: &ThermalFns, w: u32, h: u32) -> Vec<u8> {
        // SAFETY: our caller's promise.
        let v = unsafe { self.read_rgba8(f, w, h) };
        v.chunks_exact(4).map(|p| p[0]).collect()
    }

    /// Reads the RGBA8 colour buffer of the bound read framebuffer, `w`×`h` pixels.
    ///
    /// # Safety
    /// As [`Painter::read_mask`].
    unsafe fn read_rgba8(&self, f: &ThermalFns, w: u32, h: u32) -> Vec<u8> {
        let mut v = vec![0u8; w as usize * h as usize * 4];
        // SAFETY: our caller's promise (context current, a complete read framebuffer of at
        // least `w`×`h` bound, pack state at its defaults); `v` holds `w`×`h` RGBA8 pixels,
        // exactly what the read writes.
        unsafe {
            crate::waits::note();
            (f.read_pixels)(
                0,
                0,
                w as GLsizei,
                h as GLsizei,
                RGBA,
                UNSIGNED_BYTE,
                v.as_mut_ptr().cast(),
            )
        };
        v
    }

    /// How our R32F buffers are read, with `GL_FLOAT`: the format and its channels. GL reads
    /// `GL_RED`; GLES reads the always-supported `GL_RGBA`/`GL_FLOAT` pair unless its second,
    /// implementation-chosen pair for our maps is `GL_RED`/`GL_FLOAT` (GLES 3.0 §4.3.2; Mesa
    /// and NVIDIA offer it), found by [`Painter::probe_float_read`].
    fn float_format(&self) -> (GLenum, usize) {
        self.float_read
    }

    /// On GLES, asks the context which second format it reads our R32F maps as (framebuffer
    /// `fbo`, complete, its first colour attachment one of them): `GL_RED`/`GL_FLOAT` takes
    /// a quarter of the bytes of the `GL_RGBA` read, which the driver widens pixel by pixel.
    /// Leaves `fbo` bound as the read framebuffer (the caller restores it).
    ///
    /// # Safety
    /// This painter's context must be current, and `f` its real functions.
    unsafe fn probe_float_read(&mut self, f: &ThermalFns, fbo: GLuint) {
        if !self.gles {
            return;
        }
        // SAFETY: our caller's promise; the framebuffer is ours.
        unsafe {
            (f.bind_framebuffer)(READ_FRAMEBUFFER, fbo);
            (f.read_buffer)(COLOR_ATTACHMENT0);
            let format = f.integer(IMPLEMENTATION_COLOR_READ_FORMAT) as GLenum;
            let ty = f.integer(IMPLEMENTATION_COLOR_READ_TYPE) as GLenum;
            // An error leaves both unread (0): the RGBA read stays.
            if drain_errors(f) == NO_ERROR && (format, ty) == (RED, FLOAT) {
                self.float_read = (RED, 1);
            }
        }
    }

    /// Reads the R32F colour buffer of the bound read framebuffer (its read buffer already
    /// chosen), as [`Painter::float_format`] says.
    ///
    /// # Safety
    /// This painter's context must be current with `f` its real functions, a complete read
    /// framebuffer of at least `w`×`h` bound, and the pack state at its defaults.
    unsafe fn read_floats(&self, f: &ThermalFns, w: u32, h: u32) -> Vec<f32> {
        let n = w as usize * h as usize;
        let (format, channels) = self.float_format();
        let mut v = vec![0f32; n * channels];
        // SAFETY: our caller's promise (context current, a complete read framebuffer of at
        // least `w`×`h` bound, pack state at its defaults); `v` holds `w`×`h`×`channels`
        // floats, exactly what the read writes.
        unsafe {
            crate::waits::note();
            (f.read_pixels)(
                0,
                0,
                w as GLsizei,
                h as GLsizei,
                format,
                FLOAT,
                v.as_mut_ptr().cast(),
            )
        };
        if channels == 1 {
            v
        } else {
            v.chunks_exact(channels).map(|c| c[0]).collect()
        }
    }

    /// Reads the stencil of the bound read framebuffer as bytes; `None` (and the painter
    /// stops trying) when the driver refuses the read.
    ///
    /// # Safety
    /// As [`Painter::read_floats`], the read framebuffer with a stencil attachment.
    unsafe fn read_stencil(&mut self, f: &ThermalFns, w: u32, h: u32) -> Option<Vec<u8>> {
        let mut v = vec![0u8; w as usize * h as usize];
        // SAFETY: our caller's promise; `v` holds `w`×`h` bytes, exactly what a read of
        // `GL_STENCIL_INDEX`/`GL_UNSIGNED_BYTE` at pack alignment 4 writes for any `w` (rows
        // padded to 4 bytes would overrun: the alignment is set to 1 around the read).
        unsafe {
            (f.pixel_storei)(PACK_ALIGNMENT, 1);
            crate::waits::note();
            (f.read_pixels)(
                0,
                0,
                w as GLsizei,
                h as GLsizei,
                STENCIL_INDEX,
                UNSIGNED_BYTE,
                v.as_mut_ptr().cast(),
            );
            (f.pixel_storei)(PACK_ALIGNMENT, 4);
            if drain_errors(f) != NO_ERROR {
                self.stencil_readable = false;
                return None;
            }
        }
        Some(v)
    }

    /// Makes sure the working buffers cover `w`×`h` and target `id` has its maps at that
    /// size, (re)creating what is missing; our program is built once. Leaves framebuffer and
    /// renderbuffer bindings changed (the caller restores them).
    ///
    /// # Safety
    /// This painter's context must be current, and `f` its real functions.
    unsafe fn ensure(&mut self, f: &ThermalFns, id: u32, w: u32, h: u32) -> Result<(), String> {
        // SAFETY: our caller's promise; every name bound is ours.
        unsafe {
            if self.program.is_none() {
                self.program = Some(self.build_program(f)?);
            }
            let covered = self
                .work
                .as_ref()
                .is_some_and(|k| k.width >= w && k.height >= h);
            if !covered {
                let (ww, wh) = match &self.work {
                    Some(k) => (k.width.max(w), k.height.max(h)),
                    None => (w, h),
                };
                self.create_work(f, ww, wh)?;
            }
            let sampled_stencil = self.work.as_ref().is_some_and(|k| k.sampled.is_some());
            if sampled_stencil && self.sampled.is_none() && self.stencil_sampling {
                // Once: where they do not build, the bit passes stay.
                self.sampled = self.build_sampled(f).ok();
                self.stencil_sampling = self.sampled.is_some();
            }
            let sized = self
                .accums
                .get(&id)
                .is_some_and(|a| (a.width, a.height) == (w, h));
            if !sized {
                if let Some(old) = self.accums.remove(&id) {
                    delete_accum(f, &old);
                }
                let accum = self.create_accum(f, w, h)?;
                if self.float_read.1 != 1 {
                    self.probe_float_read(f, accum.fbo);
                }
                self.accums.insert(id, accum);
            }
            Ok(())
        }
    }

    /// (Re)creates the working buffers at `w`×`h` and attaches the new stencil to every
    /// target's maps.
    unsafe fn create_work(&mut self, f: &ThermalFns, w: u32, h: u32) -> Result<(), String> {
        // SAFETY: our caller's promise; every name bound is ours, just generated.
        unsafe {
            if let Some(old) = self.work.take() {
                (f.delete_framebuffers)(2, old.fbos.as_ptr());
                if old.count_plain != 0 {
                    (f.delete_framebuffers)(1, &old.count_plain);
                }
                match old.sampled {
                    Some(s) => {
                        (s.delete_textures)(1, &old.rbs[0]);
                        (f.delete_renderbuffers)(2, old.rbs[1..].as_ptr());
                    }
                    None => (f.delete_renderbuffers)(3, old.rbs.as_ptr()),
                }
            }
            // Kept the painter's whole life: a target's `plain` framebuffer exists only
            // where the stencil is a texture.
            let sampled = if self.stencil_sampling {
                SampleFns::of(f)
            } else {
                None
            };
            self.stencil_sampling = sampled.is_some();
            let mut fbos = [0; 2];
            let mut rbs = [0; 3];
            (f.gen_framebuffers)(2, fbos.as_mut_ptr());
            let formats = match sampled {
                Some(s) => {
                    let _unit = Saved::take(
                        f,
                        &[Piece::Binding {
                            query: TEXTURE_BINDING_2D,
                            target: TEXTURE_2D,
                            bind: f.bind_texture,
                        }],
                    );
                    rbs[0] = s.stencil_texture(f, w, h);
                    (f.gen_renderbuffers)(2, rbs[1..].as_mut_ptr());
                    &[RGBA8, R32F][..]
                }
                None => {
                    (f.gen_renderbuffers)(3, rbs.as_mut_ptr());
                    &[STENCIL_INDEX8, RGBA8, R32F][..]
                }
            };
            let first = rbs.len() - formats.len();
            for (rb, &format) in rbs[first..].iter().zip(formats) {
                (f.bind_renderbuffer)(RENDERBUFFER, *rb);
                (f.renderbuffer_storage)(RENDERBUFFER, format, w as GLsizei, h as GLsizei);
            }
            let mut count_plain = 0;
            if sampled.is_some() && !self.stencil_readable {
                (f.gen_framebuffers)(1, &mut count_plain);
                attach(f, count_plain, &[(COLOR_ATTACHMENT0, rbs[1])]);
                (f.read_buffer)(COLOR_ATTACHMENT0);
            }
            let work = Work {
                width: w,
                height: h,
                fbos,
                count_plain,
                rbs,
                sampled,
            };
            for (fbo, colour) in fbos.into_iter().zip([rbs[1], rbs[2]]) {
                attach(f, fbo, &[(COLOR_ATTACHMENT0, colour)]);
                work.attach_stencil(f);
            }
            (f.read_buffer)(COLOR_ATTACHMENT0);
            for a in self.accums.values() {
                (f.bind_framebuffer)(FRAMEBUFFER, a.fbo);
                work.attach_stencil(f);
            }
            self.work = Some(work);
            complete(f, "count", fbos[0], w, h)?;
            complete(f, "scratch", fbos[1], w, h)?;
            if count_plain != 0 {
                complete(f, "unstencilled count", count_plain, w, h)?;
            }
            let e = drain_errors(f);
            if e != NO_ERROR {
                return Err(format!(
                    "GL error 0x{e:04X} creating the painter's {w}x{h} working buffers"
                ));
            }
            Ok(())
        }
    }

    /// A target's maps at `w`×`h`, cleared, with the working stencil attached.
    unsafe fn create_accum(&self, f: &ThermalFns, w: u32, h: u32) -> Result<Accum, String> {
        let work = self.work.as_ref().expect("work");
        // SAFETY: our caller's promise; every name bound is ours, just generated.
        unsafe {
            let mut fbos = [0; 2];
            let mut rbs = [0; 2];
            let count = if work.sampled.is_some() { 2 } else { 1 };
            (f.gen_framebuffers)(count, fbos.as_mut_ptr());
            (f.gen_renderbuffers)(2, rbs.as_mut_ptr());
            for rb in rbs {
                (f.bind_renderbuffer)(RENDERBUFFER, rb);
                (f.renderbuffer_storage)(RENDERBUFFER, R32F, w as GLsizei, h as GLsizei);
            }
            let maps = [(COLOR_ATTACHMENT0, rbs[0]), (COLOR_ATTACHMENT1, rbs[1])];
            for (i, &fbo) in fbos[..count as usize].iter().enumerate() {
                attach(f, fbo, &maps);
                if i == 0 {
                    work.attach_stencil(f);
                }
                (f.draw_buffers)(2, [COLOR_ATTACHMENT0, COLOR_ATTACHMENT1].as_ptr());
            }
            let accum = Accum {
                width: w,
                height: h,
                fbo: fbos[0],
                plain: fbos[1],
                rbs,
                used: false,
            };
            for (fbo, name) in [(accum.fbo, "maps"), (accum.plain, "unstencilled maps")] {
                if fbo == 0 {
                    continue;
                }
                if let Err(e) = complete(f, name, fbo, w, h) {
                    delete_accum(f, &accum);
                    return Err(e);
                }
            }
            let fbo = accum.fbo;
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbo);
            (f.disable)(SCISSOR_TEST);
            (f.color_mask)(1, 1, 1, 1);
            clear_maps(f);
            let e = drain_errors(f);
            if e != NO_ERROR {
                delete_accum(f, &accum);
                return Err(format!(
                    "GL error 0x{e:04X} creating the painter's {w}x{h} maps"
                ));
            }
            Ok(accum)
        }
    }

    /// Builds our program (full-screen triangle, `u_add` written to both outputs) and our
    /// empty vertex array.
    ///
    /// # Safety
    /// This painter's context must be current, and `f` its real functions.
    unsafe fn build_program(&self, f: &ThermalFns) -> Result<(GLuint, GLint, GLuint), String> {
        // SAFETY: our caller's promise.
        unsafe {
            let (program, uniform) = self.build(f, VS, FS)?;
            let mut vao = 0;
            (f.gen_vertex_arrays)(1, &mut vao);
            Ok((program, uniform, vao))
        }
    }

    /// Builds the one-pass weighting program over a sampled work stencil
    /// ([`weights::SAMPLED_FS`]), sampling on the context's last texture unit.
    ///
    /// # Safety
    /// As [`Painter::build_program`].
    unsafe fn build_sampled(&self, f: &ThermalFns) -> Result<Sampled, String> {
        // SAFETY: our caller's promise; the uniform name is NUL-terminated.
        unsafe {
            let program = |vs, fs| -> Result<(SampledProgram, GLint), String> {
                let (program, add) = self.build(f, vs, fs)?;
                let count = (f.get_uniform_location)(program, c"u_count".as_ptr());
                if count < 0 {
                    return Err("a sampled weighting program has no u_count".into());
                }
                Ok((SampledProgram { program, count }, add))
            };
            let (shared, share) = program(VS, weights::SAMPLED_SHARE_FS)?;
            let (count, _) = program(VS, weights::SAMPLED_COUNT_FS)?;
            let units = f.integer(MAX_COMBINED_TEXTURE_IMAGE_UNITS);
            if units < 1 || share < 0 {
                return Err("no texture unit, or no u_add, for the sampled passes".into());
            }
            // Where the boxes' program does not build, the plain one weighs without them.
            let (weighted, boxes) = match self.build_box_pass(f) {
                Some(found) => found,
                None => (program(weights::WEIGHT_VS, weights::SAMPLED_FS)?.0, None),
            };
            Ok(Sampled {
                weighted,
                boxes,
                shared,
                share,
                count,
                unit: units as u32 - 1,
            })
        }
    }

    /// The weighting program that also finds boxes ([`weights::sampled_box_fs`]) on the
    /// context's last storage buffer binding, where [`Painter::set_gpu_boxes`] allows it and
    /// the fragment stage has storage blocks; `None` elsewhere or when it does not build.
    ///
    /// # Safety
    /// As [`Painter::build_program`].
    unsafe fn build_box_pass(&self, f: &ThermalFns) -> Option<(SampledProgram, Option<BoxPass>)> {
        if !self.gpu_boxes {
            return None;
        }
        let fns = BoxFns::of(f)?;
        // SAFETY: our caller's promise; the uniform names are NUL-terminated.
        unsafe {
            let bindings = f.integer(MAX_SHADER_STORAGE_BUFFER_BINDINGS);
            if bindings < 1 || f.integer(MAX_FRAGMENT_SHADER_STORAGE_BLOCKS) < 1 {
                return None;
            }
            let binding = bindings as u32 - 1;
            let fs = weights::sampled_box_fs(binding);
            let (program, _) = self
                .build_with(f, "#version 430 core\n", weights::WEIGHT_VS, &fs)
                .ok()?;
            let count = (f.get_uniform_location)(program, c"u_count".as_ptr());
            let slot = (f.get_uniform_location)(program, c"u_slot".as_ptr());
            if count < 0 || slot < 0 {
                return None;
            }
            Some((
                SampledProgram { program, count },
                Some(BoxPass { slot, binding, fns }),
            ))
        }
    }

    /// Builds a program of ours from the bodies of its two stages; with its `u_add` location.
    ///
    /// # Safety
    /// As [`Painter::build_program`].
    unsafe fn build(&self, f: &ThermalFns, vs: &str, fs: &str) -> Result<(GLuint, GLint), String> {
        let header = if self.gles {
            "#version 300 es\nprecision highp float;\n"
        } else {
            "#version 330 core\n"
        };
        // SAFETY: our caller's promise.
        unsafe { self.build_with(f, header, vs, fs) }
    }

    /// [`Painter::build`] with the stages' `header` (version, precision) given.
    ///
    /// # Safety
    /// As [`Painter::build_program`].
    unsafe fn build_with(
        &self,
        f: &ThermalFns,
        header: &str,
        vs: &str,
        fs: &str,
    ) -> Result<(GLuint, GLint), String> {
        // SAFETY: our caller's promise; `src` outlives the glShaderSource call that copies it,
        // and the uniform name is NUL-terminated.
        unsafe {
            let program = (f.create_program)();
            for (stage, body) in [(VERTEX_SHADER, vs), (FRAGMENT_SHADER, fs)] {
                let src = std::ffi::CString::new(format!("{header}{body}")).expect("no NUL");
                let sh = (f.create_shader)(stage);
                (f.shader_source)(sh, 1, &src.as_ptr(), std::ptr::null());
                (f.compile_shader)(sh);
                let mut ok = 0;
                (f.get_shaderiv)(sh, COMPILE_STATUS, &mut ok);
                (f.attach_shader)(program, sh);
                (f.delete_shader)(sh);
                if ok == 0 {
                    return Err("the painter's shader does not compile in this context".into());
                }
            }
            (f.link_program)(program);
            let mut ok = 0;
            (f.get_programiv)(program, LINK_STATUS, &mut ok);
            if ok == 0 {
                return Err("the painter's program does not link in this context".into());
            }
            let uniform = (f.get_uniform_location)(program, c"u_add".as_ptr());
            Ok((program, uniform))
        }
    }

    /// Ends the frame at its swap: [`Painter::flush`] with the screen, labelled `frame` when
    /// nothing was painted. Call before the swap, with the frame's context current.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn finish(&mut self, f: &ThermalFns, frame: u64, context: u64) -> Flushed {
        self.frame.get_or_insert(frame);
        // SAFETY: our caller's promise.
        unsafe { self.flush(f, context, true) }
    }

    /// Reads back and clears the maps of every offscreen target painted since the last
    /// flush, and (`with_screen`) the default framebuffer's map with the frame's colour
    /// buffer; hands over the painted draws' flow. Without the screen (a switch away from
    /// the context in the middle of a frame) its draws stay pending.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn flush(&mut self, f: &ThermalFns, context: u64, with_screen: bool) -> Flushed {
        // SAFETY: our caller's promise, passed on.
        crate::waits::timed(crate::waits::Phase::Maps, || unsafe {
            self.flush_timed(f, context, with_screen)
        })
    }

    /// [`Self::flush`]'s work, which it times ([`crate::waits::timed`]).
    unsafe fn flush_timed(&mut self, f: &ThermalFns, context: u64, with_screen: bool) -> Flushed {
        let screen_drawn = self.has_screen_draws();
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions.
        let mut read = (self.unsupported.is_none()).then(|| unsafe {
            let errors = ErrorScope::enter(f);
            let saved = self.save(f);
            pack_defaults(f);
            (f.disable)(SCISSOR_TEST);
            (f.color_mask)(1, 1, 1, 1);
            let read = self.read_back(f, with_screen, screen_drawn);
            if let Some(Some(stamps)) = self.stamps.as_mut() {
                // The read-back waited for the frame: the stamps have landed. `saved` holds
                // the query buffer binding (weighting).
                (f.bind_buffer)(QUERY_BUFFER, 0);
                crate::waits::add_gpu(stamps.read());
            }
            drop(saved);
            (read, errors.leave())
        });
        if let Some((r, _)) = &mut read {
            self.fill(std::mem::take(&mut r.spread_times));
            self.fill_deferred(&r.slots);
            let (weighed, coverages, why) = std::mem::take(&mut r.tallied);
            self.fill_tallied(&weighed, coverages, &why);
            for d in std::mem::take(&mut self.drained) {
                self.fill_tallied(&d.draws, d.coverages(), &d.incomplete);
            }
        }
        let frame = self.frame.unwrap_or(0);
        let mut draws = std::mem::take(&mut self.draws);
        let screen_draws = draws.remove(&0).unwrap_or_default();
        let flow = std::mem::take(&mut self.flow);
        let pending = std::mem::take(&mut self.pending_targets);
        let failure = self.failure.take();
        let (budget, other) = (self.skipped_budget, self.skipped_other);
        self.coverage_bytes = 0;
        self.samplers.clear();
        if let Some(w) = &mut self.writes {
            w.frame_ended();
        }
        if with_screen {
            self.frame = None;
            self.skipped_budget = 0;
            self.skipped_other = 0;
        } else {
            if !screen_draws.is_empty() {
                self.draws.insert(0, screen_draws.clone());
            } else {
                self.frame = None;
            }
        }
        let mut out = Flushed {
            flow: (!flow.is_empty()).then_some(FrameFlow {
                frame,
                context,
                draws: flow,
            }),
            ..Flushed::default()
        };
        let Some((read, ours)) = read else {
            if with_screen {
                out.screen = self.unsupported.clone().map(Err);
            }
            return out;
        };
        let failure = failure.or_else(|| {
            (ours != NO_ERROR || read.failed)
                .then(|| format!("GL error 0x{ours:04X} reading the maps back at the frame's end"))
        });
        if let Some(why) = failure {
            out.flow = None;
            if with_screen {
                out.screen = Some(Err(why));
            } else {
                out.missing = Some(why);
            }
            return out;
        }
        out.targets = read
            .targets
            .into_iter()
            .filter_map(|(id, heat, overdraw)| {
                Some(TargetHeat {
                    frame,
                    context,
                    target: pending.get(&id)?.clone(),
                    heat,
                    overdraw,
                    draws: draws.remove(&id).unwrap_or_default(),
                })
            })
            .collect();
        out.screen = read.screen.map(|s| {
            s.map(|([w, h], colour, heat, overdraw)| HeatMap {
                frame,
                context,
                width: w,
                height: h,
                heat,
                overdraw,
                colour,
                draws: screen_draws,
            })
            .map_err(|why| {
                if why.is_empty() {
                    format!(
                        "no draw reached the default framebuffer ({budget} over the maps' \
                         budget, {other} skipped for the program's queries, transform feedback \
                         or a program flagged for deletion) and the surface size is unknown"
                    )
                } else {
                    why
                }
            })
        });
        out
    }

    /// Reads back, in one wait where the context allows it ([`readback`]), the slots of the
    /// draws weighted on the GPU, each offscreen target painted since the last flush (and
    /// deletes the maps of targets that were not: a program that stopped drawing into
    /// them), and (`with_screen`) the frame's colour buffer and the screen's maps; clears the
    /// maps read. `screen_drawn`: draws reached the default framebuffer (for why its size may
    /// be unknown).
    ///
    /// # Safety
    /// As [`Painter::flush`], inside its error scope with [`Painter::save`]'s state saved,
    /// pack state at its defaults, scissor off and colour writes on.
    unsafe fn read_back(
        &mut self,
        f: &ThermalFns,
        with_screen: bool,
        screen_drawn: bool,
    ) -> ReadBack {
        let (format, channels) = self.float_format();
        let floats = |fbo, buffer, [w, h]: [u32; 2]| Source::Pixels {
            fbo,
            buffer,
            w,
            h,
            format,
            ty: FLOAT,
            bytes: 4 * channels,
        };
        let maps = |fbo, size| {
            [
                floats(fbo, COLOR_ATTACHMENT0, size),
                floats(fbo, COLOR_ATTACHMENT1, size),
            ]
        };
        // SAFETY: our caller's promise; every framebuffer and buffer read is ours (or the
        // default framebuffer), complete and as large as its read.
        unsafe {
            // Where the GPU adds the tally's records, it does so before the maps are read
            // (with a wait of its own: the weights need the frame's times).
            let resolved = self.resolve_tally(f);
            let waited = resolved.is_some();
            let mut sources = Vec::new();
            let weighs = !self.deferred.is_empty();
            if let Some(w) = self.weights.as_ref().filter(|_| weighs) {
                sources.extend(w.sources());
            }
            let slot_reads = sources.len();
            // Offscreen targets: (id, size, maps framebuffer), in id order.
            let mut targets = Vec::new();
            let mut ids: Vec<u32> = self.accums.keys().copied().filter(|&id| id != 0).collect();
            ids.sort_unstable();
            for id in ids {
                let a = self.accums.get_mut(&id).expect("accum");
                if !a.used {
                    let a = self.accums.remove(&id).expect("accum");
                    delete_accum(f, &a);
                    continue;
                }
                a.used = false;
                let size = [a.width, a.height];
                sources.extend(maps(a.fbo, size));
                targets.push((id, size, a.fbo));
            }
            // The screen: its size, and whether its maps are read (a draw reached it at
            // that size), else zeros.
            let screen = match (with_screen, self.size) {
                (false, _) => None,
                (true, None) => Some(Err(if screen_drawn {
                    String::new()
                } else {
                    "the frame has no draw and the surface size is unknown".to_string()
                })),
                (true, Some(size)) => {
                    (f.bind_framebuffer)(DRAW_FRAMEBUFFER, 0);
                    let draw_buffer = f.integer(DRAW_BUFFER0) as GLenum;
                    let buffer = if draw_buffer == FRONT || draw_buffer == BACK {
                        draw_buffer
                    } else {
                        BACK
                    };
                    sources.push(Source::Pixels {
                        fbo: 0,
                        buffer,
                        w: size[0],
                        h: size[1],
                        format: RGBA,
                        ty: UNSIGNED_BYTE,
                        bytes: 4,
                    });
                    let sized = self
                        .accums
                        .get_mut(&0)
                        .filter(|a| [a.width, a.height] == size)
                        .map(|a| {
                            a.used = false;
                            a.fbo
                        });
                    if let Some(fbo) = sized {
                        sources.extend(maps(fbo, size));
                    }
                    Some(Ok((size, sized)))
                }
            };
            let pack = PackFns::of(f, self.gles);
            let mut read = readback::read(f, pack.as_ref().map(|p| (p, &mut self.pack)), &sources);
            let read_fbos = targets
                .iter()
                .map(|t| t.2)
                .chain(screen.iter().flatten().filter_map(|s| s.1));
            for fbo in read_fbos {
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbo);
                clear_maps(f);
            }
            let mut failed = false;
            let slots = match self.weights.as_mut().filter(|_| weighs) {
                Some(w) => {
                    let parts: Vec<Option<Vec<u8>>> = (0..slot_reads)
                        .map(|i| read.append(f, i, Vec::new()))
                        .collect();
                    failed |= parts.iter().any(Option::is_none);
                    let parts: Vec<Option<&[u8]>> = parts.iter().map(|p| p.as_deref()).collect();
                    w.finish(f, &parts)
                }
                None => Vec::new(),
            };
            let mut next = slot_reads;
            let mut targets: Vec<(u32, Vec<f32>, Vec<u32>)> = targets
                .into_iter()
                .map(|(id, size, _)| {
                    let maps = take_maps(f, &mut read, next, size, channels, &mut failed);
                    next += 2;
                    (id, maps.0, maps.1)
                })
                .collect();
            let mut screen = screen.map(|s| {
                s.map(|(size, sized)| {
                    // An unreadable colour buffer leaves the map without its picture.
                    let colour = read.len(next).map_or_else(Vec::new, |len| {
                        read.append(f, next, COLOUR_POOL.take(len))
                            .unwrap_or_default()
                    });
                    next += 1;
                    let n = size[0] as usize * size[1] as usize;
                    let (heat, overdraw) = match sized {
                        Some(_) => take_maps(f, &mut read, next, size, channels, &mut failed),
                        None => (vec![0.0; n], vec![0; n]),
                    };
                    (size, colour, heat, overdraw)
                })
            });
            // The tally's records join the maps just read (a read above waited for the frame
            // where there was one).
            let mut tallied = (Vec::new(), Vec::new(), String::new());
            let reading = match self
                .tally
                .as_mut()
                .filter(|t| !t.is_empty() && resolved.is_none())
            {
                Some(t) => {
                    let _bindings = Saved::take(f, &tally_bindings(f));
                    let width_of = widths(&self.accums);
                    Some(t.read(f, !sources.is_empty(), &width_of))
                }
                None => resolved,
            };
            let mut maps: Vec<TargetMaps<'_>> = targets
                .iter_mut()
                .filter_map(|(id, heat, overdraw)| {
                    let width = self.accums.get(id)?.width;
                    Some(TargetMaps {
                        target: *id,
                        width,
                        heat,
                        overdraw,
                    })
                })
                .collect();
            if let Some(Ok((size, _, heat, overdraw))) = screen.as_mut() {
                maps.push(TargetMaps {
                    target: 0,
                    width: size[0],
                    heat,
                    overdraw,
                });
            }
            Carried::add_into(&mut self.carried, &mut maps);
            // A read above waited for the frame where there was one.
            let spread_times = self.spread_times(f, waited || !sources.is_empty());
            add_spreads(&mut self.spreads, &mut maps);
            match reading {
                Some(Ok(r)) => {
                    r.add_into(&mut maps, &mut self.carried);
                    let coverages = r.coverages();
                    tallied = (r.draws, coverages, r.incomplete);
                }
                Some(Err(why)) => self.fail(why),
                None => {}
            }
            drop(maps);
            if with_screen {
                // The screen was read (or its map is missing): nothing is carried further.
                self.carried.clear();
                self.spreads.clear();
            }
            ReadBack {
                spread_times,
                slots,
                tallied,
                targets,
                screen,
                failed,
            }
        }
    }
}

/// Most bytes each of the maps' pools keeps: four 1920×1080 maps.
const MAP_POOL_BYTES: usize = 4 * 1920 * 1080 * 4;
static HEAT_POOL: Pool<f32> = Pool::new(MAP_POOL_BYTES);
static COUNT_POOL: Pool<u32> = Pool::new(MAP_POOL_BYTES);
static COLOUR_POOL: Pool<u8> = Pool::new(MAP_POOL_BYTES);

/// Gives back a map's buffers once its record is written (the writer thread's call), for the
/// next frame's read-back ([`crate::pool`]).
pub fn recycle(heat: Vec<f32>, overdraw: Vec<u32>, colour: Vec<u8>) {
    HEAT_POOL.give([heat]);
    COUNT_POOL.give([overdraw]);
    COLOUR_POOL.give([colour]);
}

/// Frees the maps' pools (at a capture's end).
pub fn release_pools() {
    HEAT_POOL.release();
    COUNT_POOL.release();
    COLOUR_POOL.release();
}

/// The screen's read: its size, colour (empty when unreadable), heat and overdraw.
type ScreenRead = ([u32; 2], Vec<u8>, Vec<f32>, Vec<u32>);

/// What a flush read back ([`Painter::read_back`]).
struct ReadBack {
    /// The time of each dispatch, blit or copy timed deferred, by call.
    spread_times: HashMap<u32, weights::SlotValues>,
    /// Each slot buffer's values, when draws were weighted on the GPU.
    slots: Vec<Vec<weights::SlotValues>>,
    /// The tallied draws, weighed ([`crate::tally`]), the coverage of those that feed a
    /// later draw, and why those not complete lost records.
    tallied: (Vec<tally::Weighed>, Vec<Option<Vec<u8>>>, String),
    /// Each offscreen target read: id, heat, overdraw.
    targets: Vec<(u32, Vec<f32>, Vec<u32>)>,
    /// The screen, when asked for: its size, colour (empty when unreadable), heat and
    /// overdraw; `Err("")` when its size is unknown though draws reached it.
    screen: Option<Result<ScreenRead, String>>,
    /// A read of the maps or slots raised a GL error.
    failed: bool,
}

/// Reads `at` and `at + 1` of `read` as a `size` target's heat and overdraw maps (float
/// pixels of `channels` channels), into vectors of the maps' pools; zeros, and `failed` set,
/// where one failed.
///
/// # Safety
/// As [`readback::Read::append`].
unsafe fn take_maps(
    f: &ThermalFns,
    read: &mut readback::Read<'_>,
    at: usize,
    size: [u32; 2],
    channels: usize,
    failed: &mut bool,
) -> (Vec<f32>, Vec<u32>) {
    let n = size[0] as usize * size[1] as usize;
    // SAFETY: our caller's promise.
    let (heat, overdraw) = unsafe {
        (
            read.floats(f, at, channels, HEAT_POOL.take(n)),
            read.counts(f, at + 1, channels, COUNT_POOL.take(n)),
        )
    };
    match (heat, overdraw) {
        (Some(heat), Some(overdraw)) if heat.len() == n && overdraw.len() == n => (heat, overdraw),
        _ => {
            *failed = true;
            (vec![0.0; n], vec![0; n])
        }
    }
}

/// The generic storage buffer binding, which the tally's allocation and passes change.
fn storage_binding(f: &ThermalFns) -> Piece {
    Piece::Binding {
        query: SHADER_STORAGE_BUFFER_BINDING,
        target: SHADER_STORAGE_BUFFER,
        bind: f.bind_buffer,
    }
}

/// The bindings a read of the tally changes: the generic storage buffer and
/// `GL_COPY_READ_BUFFER`, which it maps.
fn tally_bindings(f: &ThermalFns) -> [Piece; 2] {
    [
        storage_binding(f),
        Piece::Binding {
            query: COPY_READ_BUFFER_BINDING,
            target: COPY_READ_BUFFER,
            bind: f.bind_buffer,
        },
    ]
}

/// Binds `fbo` and attaches each renderbuffer at its point.
///
/// # Safety
/// A context must be current, `f` its real functions, and the names its live objects.
unsafe fn attach(f: &ThermalFns, fbo: GLuint, list: &[(GLenum, GLuint)]) {
    // SAFETY: our caller's promise.
    unsafe {
        (f.bind_framebuffer)(FRAMEBUFFER, fbo);
        for &(at, rb) in list {
            (f.framebuffer_renderbuffer)(FRAMEBUFFER, at, RENDERBUFFER, rb);
        }
    }
}

/// `Err` says which of our framebuffers is incomplete.
///
/// # Safety
/// As [`attach`].
unsafe fn complete(f: &ThermalFns, name: &str, fbo: GLuint, w: u32, h: u32) -> Result<(), String> {
    // SAFETY: our caller's promise.
    let s = unsafe {
        (f.bind_framebuffer)(FRAMEBUFFER, fbo);
        (f.check_framebuffer_status)(FRAMEBUFFER)
    };
    if s == FRAMEBUFFER_COMPLETE {
        Ok(())
    } else {
        Err(format!(
            "the painter's {name} framebuffer ({w}x{h}) is incomplete: \
             glCheckFramebufferStatus = 0x{s:04X}"
        ))
    }
}

/// Draws into the maps framebuffer `accum`, scissored to `bbox` (x0, y0, x1, y1).
///
/// # Safety
/// The painter's context must be current, `f` its real functions, the program's state saved.
unsafe fn into_box(f: &ThermalFns, accum: GLuint, bbox: [u32; 4]) {
    // SAFETY: our caller's promise; `accum` is ours.
    unsafe {
        (f.bind_framebuffer)(DRAW_FRAMEBUFFER, accum);
        (f.enable)(SCISSOR_TEST);
        (f.scissor)(
            bbox[0] as GLint,
            bbox[1] as GLint,
            (bbox[2] - bbox[0]) as GLsizei,
            (bbox[3] - bbox[1]) as GLsizei,
        );
    }
}

/// Clears both maps of the accumulation framebuffer bound for drawing.
///
/// # Safety
/// As [`attach`]; scissor off and colour writes on.
unsafe fn clear_maps(f: &ThermalFns) {
    // SAFETY: our caller's promise.
    unsafe {
        (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
        (f.clear_bufferfv)(COLOR, 1, [0.0f32; 4].as_ptr());
    }
}

/// Deletes a target's maps (the shared stencil stays).
///
/// # Safety
/// As [`attach`].
unsafe fn delete_accum(f: &ThermalFns, a: &Accum) {
    // SAFETY: our caller's promise; the names are the accumulation's own.
    unsafe {
        (f.delete_framebuffers)(1, &a.fbo);
        if a.plain != 0 {
            (f.delete_framebuffers)(1, &a.plain);
        }
        (f.delete_renderbuffers)(2, a.rbs.as_ptr());
    }
}

/// Sets the work stencil up for counting a replay: `counting` bound for drawing, its stencil
/// cleared first when `clear`, every fragment of the replay applying `op` with reference
/// `reference` (`ALWAYS`, all bits written), colour off, the replay clipped to the program's
/// scissor (as `saved` holds it) and to the target's `w`×`h` (our stencil may be larger).
///
/// # Safety
/// A GL 3.0+ / GLES 3.0+ context must be current, `f` its real functions, and `counting` our
/// framebuffer with the work stencil; `saved` restores what is changed.
unsafe fn count_state(
    f: &ThermalFns,
    saved: &Saved<'_>,
    counting: GLuint,
    [w, h]: [u32; 2],
    clear: bool,
    (reference, op): (GLint, GLenum),
) {
    // SAFETY: our caller's promise.
    unsafe {
        (f.bind_framebuffer)(DRAW_FRAMEBUFFER, counting);
        (f.disable)(SCISSOR_TEST);
        (f.stencil_mask_separate)(FRONT_AND_BACK, 0xFF);
        if clear {
            (f.clear_bufferiv)(STENCIL, 0, &0);
        }
        let whole = [0, 0, w as GLint, h as GLint];
        let clip = if saved.enabled(SCISSOR_TEST) {
            intersect(saved.scissor_box(), whole)
        } else {
            whole
        };
        (f.enable)(SCISSOR_TEST);
        (f.scissor)(clip[0], clip[1], clip[2], clip[3]);
        (f.enable)(STENCIL_TEST);
        (f.stencil_func_separate)(FRONT_AND_BACK, ALWAYS, reference, 0xFF);
        (f.stencil_op_separate)(FRONT_AND_BACK, op, op, op);
        (f.color_mask)(0, 0, 0, 0);
    }
}

/// What a blit or `glCopyTex*` reads from the bound read framebuffer, for the flow, with a
/// note when that is the default framebuffer (its cost is on its own map already: flowing it
/// again would count it twice).
///
/// # Safety
/// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
unsafe fn read_framebuffer_source(f: &ThermalFns) -> (Vec<u32>, String) {
    // SAFETY: our caller's promise.
    match unsafe { targets::read_source(f) } {
        Some(a) => (vec![a.flow_key()], String::new()),
        None => (
            Vec::new(),
            "its source is the default framebuffer, whose cost stays on its own map".to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{crop, intersect};

    #[test]
    fn a_draw_reached_nothing_only_when_nothing_left_clipping_and_nothing_was_shaded() {
        use crate::catalogue::{
            CLIPPING_OUTPUT_PRIMITIVES as CLIPPED, FRAGMENT_SHADER_INVOCATIONS as SHADED,
            GPU_TIME_SERIALIZED as TIME,
        };
        let v = |pairs: &[(u16, u64)]| -> Vec<gpuheat_session::CounterValue> {
            pairs
                .iter()
                .map(|&(counter, value)| gpuheat_session::CounterValue { counter, value })
                .collect()
        };
        assert!(super::reached_nothing(&v(&[
            (TIME, 5),
            (CLIPPED, 0),
            (SHADED, 0)
        ])));
        assert!(super::reached_nothing(&v(&[(TIME, 5), (CLIPPED, 0)])));
        assert!(!super::reached_nothing(&v(&[
            (TIME, 5),
            (CLIPPED, 2),
            (SHADED, 0)
        ])));
        // A driver that shaded fragments of a draw it says clipped away is not believed.
        assert!(!super::reached_nothing(&v(&[(CLIPPED, 0), (SHADED, 40)])));
        // No statistics (GLES): nothing is known.
        assert!(!super::reached_nothing(&v(&[(TIME, 5)])));
    }

    #[test]
    fn a_scissor_box_is_clipped_to_the_target() {
        assert_eq!(
            intersect([10, 20, 100, 100], [0, 0, 64, 64]),
            [10, 20, 54, 44]
        );
        assert_eq!(intersect([70, 0, 10, 10], [0, 0, 64, 64])[2], 0);
        assert_eq!(intersect([-5, -5, 20, 20], [0, 0, 64, 64]), [0, 0, 15, 15]);
    }

    #[test]
    fn the_total_and_box_of_a_count_buffer_cover_its_pixels() {
        // 4×3, bottom row first: counts at (1,0)=2, (3,1)=1, (0,2)=3.
        let mut c = vec![0u8; 12];
        c[1] = 2;
        c[4 + 3] = 1;
        c[8] = 3;
        assert_eq!(super::total_and_box(&c, 4), (6, [0, 0, 4, 3], 3));
        c[8] = 0;
        assert_eq!(super::total_and_box(&c, 4), (3, [1, 0, 4, 2], 2));
        c[1] = 1;
        assert_eq!(super::total_and_box(&c, 4), (2, [1, 0, 4, 2], 1));
        assert_eq!(super::total_and_box(&[0; 12], 4), (0, [0; 4], 0));
        // Saturated pixels count 255 each: N_d does not wrap.
        assert_eq!(super::total_and_box(&[255; 12], 4).0, 12 * 255);
    }

    #[test]
    fn coverage_is_cropped_to_its_box() {
        // A 4×3 count buffer, bottom row first.
        let counts = [
            0, 0, 0, 0, //
            0, 1, 2, 0, //
            0, 255, 3, 0,
        ];
        assert_eq!(crop(&counts, 4, [1, 1, 3, 3]), vec![1, 2, 255, 3]);
        assert!(crop(&counts, 4, [0, 0, 0, 0]).is_empty());
    }
}
