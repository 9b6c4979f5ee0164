//! Heat of draws timed deferred where the GPU cannot weigh them itself: GLES has no query
//! buffer objects, so a timestamp's result never reaches GPU memory and `T/N` is known on
//! the CPU only, at the frame's end ([`crate::weights`] is desktop GL's way). And, where the
//! GPU weighs them, the coverage of the draws that feed later ones (the flow's), which would
//! otherwise be read back draw by draw.
//!
//! Each such draw is replayed into the work stencil as any other; then one pass of ours
//! samples `c(p)` there, adds it to the draw's `Σ c` and appends a record (pixel, draw, `c`)
//! for each covered pixel to a storage buffer of ours, with an atomic counter: no wait. The
//! maps are the same sums as the GPU passes' (`heat(p) = Σ_d c_d(p)·T_d/N_d`), added in
//! another order, in one of two places ([`resolves_on_gpu`]):
//! - **on the CPU**: the flush, after its one wait for the frame, reads the records once,
//!   reads each draw's timestamp pair (landed by then), takes `N` and the box of each draw
//!   from its records (exact), and adds `c·T/N` and `c` into the targets' maps it read back;
//! - **on the GPU** (a hardware renderer's way): before the maps are read, the flush reads
//!   each draw's `Σ c`, box (found by the pass, on the coverage's edge) and timestamps (a
//!   wait), uploads each draw's `T/N`, and one pass per target draws a point per record into
//!   its maps ([`resolve_vs`]): no record crosses to the CPU, but where a draw keeps its
//!   coverage for the flow.
//!
//! Where: GLES 3.1 with the disjoint timer query, or GL 4.3, with storage blocks in the
//! fragment stage and a sampled work stencil ([`supported`]). The records a frame may hold are
//! bounded ([`MAX_RECORDS`], [`MAX_RECORDS_RESOLVED`]; 8 bytes each). The pass also counts each
//! draw's records that did not fit, so where the buffer filled up the flush knows which draws
//! lost records: they are listed unpainted with the reason (the map keeps the others, exact),
//! and the buffer is made large enough for the next frame. Beyond the bound, resolved on the
//! GPU, the tally is read and resolved in the middle of the frame whenever the draws taken
//! since its last read could fill it ([`Tally::must_drain`]: a wait each, bounded by the
//! frame's covered pixels, none per draw); on the CPU, which has no map to add a part to
//! before the flush, the painter stops deferring ([`Tally::exhausted`]: heat goes back to
//! isolated timing on that context). A frame tallies [`MAX_TALLIED`] draws at most; later
//! ones are timed isolated ([`Tally::full`]).

use gpuheat_session::ClientApi;

use std::ffi::c_void;

use crate::gl::*;
use crate::weights::StorageBinding;

/// Whether a context of `api` and version `major.minor`, with `has_extension`, and
/// `fragment_blocks` storage blocks allowed in the fragment stage, can tally draws: storage
/// buffers and their atomics (GLES 3.1, GL 4.3), a work stencil that is sampled
/// ([`crate::weights::stencil_sampling`]), and on GLES draws timed deferred carrying a
/// timestamp pair (`GL_EXT_disjoint_timer_query`). GLES 3.1 and GL 4.3 allow 0 fragment
/// storage blocks.
pub fn supported(
    api: ClientApi,
    (major, minor): (u32, u32),
    has_extension: impl Fn(&str) -> bool,
    fragment_blocks: i32,
) -> bool {
    let stages = match api {
        ClientApi::Gles => (major, minor) >= (3, 1) && has_extension("GL_EXT_disjoint_timer_query"),
        ClientApi::Gl => (major, minor) >= (4, 3),
        ClientApi::Vg | ClientApi::Vulkan => false,
    };
    stages
        && fragment_blocks >= 1
        && crate::weights::stencil_sampling(api, (major, minor), &has_extension)
}

/// The stages' header on a context of `gles` or desktop GL: GLSL ES 3.10 or GLSL 4.30
/// (storage buffers), `highp` integers (the pixel index).
pub(crate) fn header(gles: bool) -> &'static str {
    if gles {
        "#version 310 es\nprecision highp float;\nprecision highp int;\n"
    } else {
        "#version 430 core\n"
    }
}

/// The storage block both stages see: the count (padded to 16 bytes), each draw's `Σ c` and
/// lost records, its box (x0, y0, x1, y1; found where the GPU resolves), its weight and target
/// for the resolve ([`resolve_vs`]), then the records.
fn block(binding: u32, access: &str) -> String {
    format!(
        "layout(std430, binding = {binding}) {access}buffer Tally {{ uint used; uint pad_[3]; \
uint sums[{MAX_TALLIED}]; uint lost[{MAX_TALLIED}]; uint boxes[{boxes}]; \
uvec2 weights[{MAX_TALLIED}]; uvec2 records[]; }};\n",
        boxes = 4 * MAX_TALLIED
    )
}

/// The fragment stage of the tally pass (with the painter's full-screen vertex stage, colour
/// writes off): where the work stencil (`u_count`) holds `c > 0`, one record of the pixel's
/// index in the `u_width`-wide target, the draw `u_draw` and `c`, and `c` added to the draw's
/// `Σ c`. Records past the buffer's end are counted, not stored: the count says how large the
/// next frame's buffer must be, the draw's lost count that it lost some. With `boxes` (where
/// the GPU resolves, so no record is read on the CPU) the pass also finds the draw's box, as
/// the weighting pass does ([`crate::weights::sampled_box_fs`]: atomics only on the
/// coverage's edge).
pub(crate) fn tally_fs(binding: u32, boxes: bool) -> String {
    let find_box = if boxes {
        format!("  uint b = u_draw * 4u;\n{}", crate::weights::BOX_EDGES)
    } else {
        String::new()
    };
    format!(
        "{block}\
uniform highp usampler2D u_count;\n\
uniform uint u_draw;\n\
uniform uint u_width;\n\
uint at(ivec2 p) {{ return texelFetch(u_count, p, 0).r; }}\n\
void main() {{\n\
  ivec2 p = ivec2(gl_FragCoord.xy);\n\
  uint c = at(p);\n\
  if (c == 0u) return;\n\
  atomicAdd(sums[u_draw], c);\n\
  uint i = atomicAdd(used, 1u);\n\
  if (i < uint(records.length()))\n\
    records[i] = uvec2(uint(p.y) * u_width + uint(p.x), (u_draw << 8) | c);\n\
  else\n\
    atomicAdd(lost[u_draw], 1u);\n\
{find_box}}}\n",
        block = block(binding, "")
    )
}

/// The vertex stage of the resolve: one point per record (`gl_VertexID`), at its pixel of
/// the `u_width`-wide, `u_size` target `u_target`, carrying `c·T/N` and `c` from its draw's
/// weight (`T/N`'s bits, target: [`Tally::read`] uploads them); a record of another target's
/// draw, or of a draw that adds nothing, is put outside the clip volume.
pub(crate) fn resolve_vs(binding: u32) -> String {
    format!(
        "{block}\
uniform uint u_target;\n\
uniform uint u_width;\n\
uniform vec2 u_size;\n\
flat out float v_heat;\n\
flat out float v_count;\n\
void main() {{\n\
  uvec2 r = records[gl_VertexID];\n\
  uvec2 w = weights[r.y >> 8];\n\
  float c = float(r.y & 255u);\n\
  v_heat = c * uintBitsToFloat(w.x);\n\
  v_count = c;\n\
  gl_PointSize = 1.0;\n\
  vec2 xy = (vec2(float(r.x % u_width), float(r.x / u_width)) + 0.5) / u_size * 2.0 - 1.0;\n\
  gl_Position = w.y == u_target ? vec4(xy, 0.0, 1.0) : vec4(2.0, 2.0, 2.0, 1.0);\n\
}}\n",
        block = block(binding, "readonly ")
    )
}

/// The fragment stage of the resolve: adds its point's heat and count into the target's
/// maps (additive blending).
pub(crate) const RESOLVE_FS: &str = "flat in float v_heat;\n\
flat in float v_count;\n\
layout(location = 0) out vec4 o0;\n\
layout(location = 1) out vec4 o1;\n\
void main() {\n\
  o0 = vec4(v_heat);\n\
  o1 = vec4(v_count);\n\
}\n";

/// Most draws a frame tallies, as many as desktop GL weighs on the GPU
/// ([`crate::weights::MAX_SLOTS`]): later ones are timed isolated.
pub const MAX_TALLIED: usize = crate::weights::MAX_SLOTS as usize;
/// Byte offsets in the buffer: after the count (padded to 16), each draw's `Σ c`, its lost
/// records, its box (4 words), its weight and target (2 words), then the records.
const SUMS_AT: usize = 16;
const LOST_AT: usize = SUMS_AT + 4 * MAX_TALLIED;
const BOXES_AT: usize = LOST_AT + 4 * MAX_TALLIED;
const WEIGHTS_AT: usize = BOXES_AT + 16 * MAX_TALLIED;
const HEADER_BYTES: usize = WEIGHTS_AT + 8 * MAX_TALLIED;
/// Bytes of one record: the pixel's index, then the draw's index shifted by 8 bits or'd with
/// its count there.
const RECORD_BYTES: usize = 8;
/// Records of the first buffer, at least (1 Mi: 8 MiB).
const FIRST_RECORDS: u64 = 1 << 20;
/// Most records a frame may hold where the CPU adds them: 32 Mi, 256 MiB, as much as the
/// maps' bound ([`crate::thermal::MAX_MAP_PIXELS`]).
pub const MAX_RECORDS: u64 = 32 << 20;
/// Most records where the GPU resolves them (no record crosses to the CPU): 64 Mi, 512 MiB,
/// a thousand full-screen layers at 256×256.
pub const MAX_RECORDS_RESOLVED: u64 = 64 << 20;
/// A box no pixel has touched yet (the atomics lower and raise its sides).
const EMPTY_BOX: [u32; 4] = [u32::MAX, u32::MAX, 0, 0];
/// The weight of a draw whose records add nothing in the resolve (its target never matches).
const NO_TARGET: u32 = u32::MAX;

/// The mask of the current context's timestamps, asked with `get_queryiv`
/// (`GL_QUERY_COUNTER_BITS`; all bits where it says none).
///
/// # Safety
/// A context with timer queries must be current and `get_queryiv` its real function.
pub(crate) unsafe fn stamp_mask(
    get_queryiv: unsafe extern "system" fn(GLenum, GLenum, *mut GLint),
) -> u64 {
    let mut bits = 0;
    // SAFETY: our caller's promise.
    unsafe { get_queryiv(TIMESTAMP, QUERY_COUNTER_BITS, &mut bits) };
    match bits {
        1..=63 => crate::timestamp_mask(bits as u32),
        _ => u64::MAX,
    }
}

/// The time between the results of timestamp pair (before, after), read with `get` (it
/// waits where they have not landed), modulo `mask` ([`stamp_mask`]).
///
/// # Safety
/// The pair's context must be current, `get` its real function and both queries ended.
pub(crate) unsafe fn pair_time(
    get: unsafe extern "system" fn(GLuint, GLenum, *mut u64),
    [before, after]: [GLuint; 2],
    mask: u64,
) -> u64 {
    let (mut t0, mut t1) = (0u64, 0u64);
    // SAFETY: our caller's promise.
    unsafe {
        get(before, QUERY_RESULT, &mut t0);
        get(after, QUERY_RESULT, &mut t1);
    }
    t1.wrapping_sub(t0) & mask
}

/// The entry points of the tally, all required.
#[derive(Clone, Copy)]
pub(crate) struct TallyFns {
    storage: StorageBinding,
    gen_buffers: unsafe extern "system" fn(GLsizei, *mut GLuint),
    buffer_data: unsafe extern "system" fn(GLenum, GLsizeiptr, *const c_void, GLenum),
    buffer_sub_data: unsafe extern "system" fn(GLenum, GLsizeiptr, GLsizeiptr, *const c_void),
    map_buffer_range:
        unsafe extern "system" fn(GLenum, GLsizeiptr, GLsizeiptr, GLenum) -> *mut c_void,
    unmap_buffer: unsafe extern "system" fn(GLenum) -> GLboolean,
    memory_barrier: unsafe extern "system" fn(GLenum),
    uniform1ui: unsafe extern "system" fn(GLint, GLuint),
    get_query_objectui64v: unsafe extern "system" fn(GLuint, GLenum, *mut u64),
    get_queryiv: unsafe extern "system" fn(GLenum, GLenum, *mut GLint),
}

impl TallyFns {
    /// The tally's entry points of `f` (a GLES context's if `gles`: its timer queries are the
    /// `*EXT` ones); `Err` naming the first one missing.
    pub fn of(f: &ThermalFns, gles: bool) -> Result<TallyFns, String> {
        let missing = |name: &str| format!("{name} is missing (the deferred tally needs it)");
        Ok(TallyFns {
            storage: StorageBinding::of(f).ok_or_else(|| missing("glBindBufferBase & co"))?,
            gen_buffers: f.gen_buffers_t.ok_or_else(|| missing("glGenBuffers"))?,
            buffer_data: f.buffer_data_t.ok_or_else(|| missing("glBufferData"))?,
            buffer_sub_data: f
                .buffer_sub_data_t
                .ok_or_else(|| missing("glBufferSubData"))?,
            map_buffer_range: f
                .map_buffer_range_t
                .ok_or_else(|| missing("glMapBufferRange"))?,
            unmap_buffer: f.unmap_buffer_t.ok_or_else(|| missing("glUnmapBuffer"))?,
            memory_barrier: f.memory_barrier.ok_or_else(|| missing("glMemoryBarrier"))?,
            uniform1ui: f.uniform1ui.ok_or_else(|| missing("glUniform1ui"))?,
            get_query_objectui64v: if gles {
                f.get_query_objectui64v_ext_t
                    .ok_or_else(|| missing("glGetQueryObjectui64vEXT"))?
            } else {
                f.get_query_objectui64v_t
                    .ok_or_else(|| missing("glGetQueryObjectui64v"))?
            },
            get_queryiv: if gles {
                f.get_queryiv_ext_t
                    .ok_or_else(|| missing("glGetQueryivEXT"))?
            } else {
                f.get_queryiv_t.ok_or_else(|| missing("glGetQueryiv"))?
            },
        })
    }
}

/// The tally program: its name and uniforms' locations.
#[derive(Clone, Copy)]
pub(crate) struct TallyProgram {
    pub program: GLuint,
    pub count: GLint,
    pub draw: GLint,
    pub width: GLint,
}

/// The resolve program ([`resolve_vs`], [`RESOLVE_FS`]): its name and uniforms' locations.
#[derive(Clone, Copy)]
pub(crate) struct ResolveProgram {
    pub program: GLuint,
    pub target: GLint,
    pub width: GLint,
    pub size: GLint,
}

/// Whether the GPU adds a context's tallied records into the maps (a resolve pass before
/// the flush reads them: a second wait a frame, as the weights need the frame's times, but
/// no record crosses to the CPU), rather than the CPU (after the one read). `choice`: the
/// agent's setting (`Some(true)`: GPU, `Some(false)`: CPU); by default the GPU, where its
/// renderer is hardware (a software rasterizer runs the points pass on the CPU anyway, and
/// adds records cheaper there) and the vertex stage may read storage blocks (GLES 3.1 and GL
/// 4.3 allow it none).
pub fn resolves_on_gpu(choice: Option<bool>, software: bool, vertex_blocks: i32) -> bool {
    vertex_blocks >= 1 && choice.unwrap_or(!software)
}

/// One draw tallied this frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tallied {
    pub call: u32,
    /// Its target's id, and that target's width (the records' row length).
    pub target: u32,
    pub width: u32,
    /// Its timestamp pair (before, after), ended, when the tally weighs it; `None` for a draw
    /// weighed on the GPU, tallied for its coverage alone.
    pub stamps: Option<[GLuint; 2]>,
    /// It samples a texture drawn earlier in the frame: its coverage is kept for the flow
    /// ([`Reading::coverages`]).
    pub coverage: bool,
}

/// What the flush learns of one tallied draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Weighed {
    pub call: u32,
    pub target: u32,
    pub time_ns: u64,
    /// `N`: its fragments, `Σ c`.
    pub fragments: u64,
    /// Its box (x0, y0, x1, y1, upper bounds exclusive; all 0 when it covered nothing).
    pub bbox: [u32; 4],
    /// All its records were stored (the buffer did not fill up under it): only then does it
    /// add to the maps, and are `fragments` and `bbox` its own.
    pub complete: bool,
    /// The tally weighs it (it has its timestamps); else the GPU did, and only its coverage
    /// and box come from here.
    pub weighs: bool,
}

/// A flush's read of the tally: the frame's records, its draws, and each one weighed.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// (pixel index, draw << 8 | c), as the pass stored them.
    pub records: Vec<[u32; 2]>,
    pub tallied: Vec<Tallied>,
    /// [`weigh`]'s, in the order of `tallied`.
    pub draws: Vec<Weighed>,
    /// Why the draws not [`Weighed::complete`] lost records (empty when none did).
    pub incomplete: String,
    /// Where the GPU adds the records ([`resolves_on_gpu`]): `records` then holds them only
    /// where a draw keeps its coverage, and [`Reading::add_into`] adds nothing.
    pub resolve: Option<Resolve>,
}

/// The resolve a flush draws before it reads the maps: one point per stored record, into
/// each target with a draw that adds to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resolve {
    pub points: u64,
    /// Target ids, ascending.
    pub targets: Vec<u32>,
}

/// A target's maps as read back (row 0 at the bottom), for [`Reading::add_into`].
pub(crate) struct TargetMaps<'m> {
    pub target: u32,
    pub width: u32,
    pub heat: &'m mut [f32],
    pub overdraw: &'m mut [u32],
}

/// Heat and overdraw a record adds to a target not read by the flush that read the record
/// (the screen, in a flush on a switch away from the context): added by a later flush.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Carried {
    pub target: u32,
    pub width: u32,
    pub pixel: u32,
    pub heat: f32,
    pub count: u32,
}

impl Carried {
    /// Adds each of `carried` into its target's maps in `maps`; keeps those whose target is
    /// not there.
    pub fn add_into(carried: &mut Vec<Carried>, maps: &mut [TargetMaps<'_>]) {
        carried.retain(|c| {
            let Some(m) = maps.iter_mut().find(|m| m.target == c.target) else {
                return true;
            };
            add(m, c.width, c.pixel, c.heat, c.count);
            false
        });
    }
}

/// Adds `heat` and `count` at `pixel` of a `width`-wide target into `m`, where its width is
/// the same (a target made again at another size since drops what was painted at the old).
fn add(m: &mut TargetMaps<'_>, width: u32, pixel: u32, heat: f32, count: u32) {
    if m.width != width {
        return;
    }
    let p = pixel as usize;
    if let (Some(h), Some(o)) = (m.heat.get_mut(p), m.overdraw.get_mut(p)) {
        *h += heat;
        *o += count;
    }
}

impl Reading {
    /// The coverage of each draw that keeps it ([`Tallied::coverage`]) and is complete: its
    /// `c` at each pixel of its box, row by row from the box's bottom row (as the painter
    /// crops a count buffer); `None` for the others. One pass over the records.
    pub fn coverages(&self) -> Vec<Option<Vec<u8>>> {
        let mut out: Vec<Option<Vec<u8>>> = self
            .tallied
            .iter()
            .zip(&self.draws)
            .map(|(t, d)| {
                let [x0, y0, x1, y1] = d.bbox;
                let len = (x1 - x0) as usize * (y1 - y0) as usize;
                (t.coverage && d.complete && d.fragments > 0).then(|| vec![0u8; len])
            })
            .collect();
        if out.iter().all(Option::is_none) {
            return out;
        }
        for &[pixel, packed] in &self.records {
            let draw = (packed >> 8) as usize;
            let (Some(Some(c)), Some(t), Some(d)) = (
                out.get_mut(draw),
                self.tallied.get(draw),
                self.draws.get(draw),
            ) else {
                continue;
            };
            let w = t.width.max(1);
            let (x, y) = (pixel % w, pixel / w);
            let [x0, y0, x1, _] = d.bbox;
            let at = (y - y0) as usize * (x1 - x0) as usize + (x - x0) as usize;
            if let Some(v) = c.get_mut(at) {
                *v = (packed & 0xFF) as u8;
            }
        }
        out
    }

    /// Adds each record's `c·T/N` and `c` into its draw's target's maps in `maps`; records
    /// of a target not there go to `left`.
    pub fn add_into(&self, maps: &mut [TargetMaps<'_>], left: &mut Vec<Carried>) {
        if self.resolve.is_some() {
            return;
        }
        // Per draw: its share T/N and where its target is in `maps`.
        let per_draw: Vec<(f64, Option<usize>)> = self
            .draws
            .iter()
            .map(|d| {
                let share = if d.fragments == 0 {
                    0.0
                } else {
                    d.time_ns as f64 / d.fragments as f64
                };
                (share, maps.iter().position(|m| m.target == d.target))
            })
            .collect();
        for &[pixel, packed] in &self.records {
            let (draw, count) = ((packed >> 8) as usize, packed & 0xFF);
            let (Some(t), Some(&(share, at))) = (self.tallied.get(draw), per_draw.get(draw)) else {
                continue;
            };
            // Weighed on the GPU (tallied for its coverage), or lost records: adds nothing.
            if !self.draws[draw].complete || !self.draws[draw].weighs {
                continue;
            }
            let heat = (f64::from(count) * share) as f32;
            match at {
                Some(i) => add(&mut maps[i], t.width, pixel, heat, count),
                None => left.push(Carried {
                    target: t.target,
                    width: t.width,
                    pixel,
                    heat,
                    count,
                }),
            }
        }
    }
}

/// Each tallied draw's `N` and box from the frame's `records` (pixel index in the draw's
/// target, `draw << 8 | c`), and its time: `times[i]` for draw `i` of `tallied`, `lost[i]`
/// the records the pass could not store for it (the buffer was full).
pub(crate) fn weigh(
    records: &[[u32; 2]],
    tallied: &[Tallied],
    times: &[u64],
    lost: &[u32],
) -> Vec<Weighed> {
    let mut out: Vec<Weighed> = tallied
        .iter()
        .zip(times)
        .map(|(t, &time_ns)| Weighed {
            call: t.call,
            target: t.target,
            time_ns,
            fragments: 0,
            bbox: [u32::MAX, u32::MAX, 0, 0],
            complete: true,
            weighs: t.stamps.is_some(),
        })
        .collect();
    for &[pixel, packed] in records {
        let draw = (packed >> 8) as usize;
        let (Some(d), Some(t)) = (out.get_mut(draw), tallied.get(draw)) else {
            continue;
        };
        let w = t.width.max(1);
        let (x, y) = (pixel % w, pixel / w);
        d.fragments += u64::from(packed & 0xFF);
        d.bbox = [
            d.bbox[0].min(x),
            d.bbox[1].min(y),
            d.bbox[2].max(x + 1),
            d.bbox[3].max(y + 1),
        ];
    }
    for (i, d) in out.iter_mut().enumerate() {
        d.complete = lost.get(i) == Some(&0);
        if !d.complete {
            d.fragments = 0;
        }
        if d.fragments == 0 {
            d.bbox = [0; 4];
        }
    }
    out
}

/// Each tallied draw's `N`, box and time as the pass counted them on the GPU (where it
/// resolves: no record is read): `sums[i]` its `Σ c`, `lost[i]` the records it lost, `boxes[i]`
/// its box ([`EMPTY_BOX`] where it covered nothing).
pub(crate) fn counted(
    tallied: &[Tallied],
    times: &[u64],
    sums: &[u32],
    lost: &[u32],
    boxes: &[[u32; 4]],
) -> Vec<Weighed> {
    tallied
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let complete = lost.get(i) == Some(&0);
            let fragments = if complete {
                sums.get(i).map_or(0, |&s| u64::from(s))
            } else {
                0
            };
            let bbox = match boxes.get(i) {
                Some(&b) if fragments > 0 && b != EMPTY_BOX => b,
                _ => [0; 4],
            };
            Weighed {
                call: t.call,
                target: t.target,
                time_ns: times.get(i).copied().unwrap_or(0),
                fragments,
                bbox,
                complete,
                weighs: t.stamps.is_some(),
            }
        })
        .collect()
}

/// What each draw weighs in the resolve: `T/N`'s bits and its target, or [`NO_TARGET`] where
/// its records add nothing (lost some, covered nothing, or weighed on the GPU already), or
/// where its target is now `width_of` another width than when it was tallied (`tallied`):
/// a target made again at another size since drops what was painted at the old, as the CPU
/// drops such records ([`add`]), instead of placing them by the new width.
fn resolve_weights(
    draws: &[Weighed],
    tallied: &[Tallied],
    width_of: &dyn Fn(u32) -> Option<u32>,
) -> Vec<[u32; 2]> {
    draws
        .iter()
        .zip(tallied)
        .map(|(d, t)| {
            let same_size = width_of(d.target) == Some(t.width);
            if d.weighs && d.complete && d.fragments > 0 && same_size {
                let share = d.time_ns as f64 / d.fragments as f64;
                [(share as f32).to_bits(), d.target]
            } else {
                [0, NO_TARGET]
            }
        })
        .collect()
}

/// A context's tally: the program, the buffer of records, and the draws of the frame.
pub(crate) struct Tally {
    fns: TallyFns,
    pub program: TallyProgram,
    /// Where the GPU adds the records ([`resolves_on_gpu`]), its program; the pass then also
    /// finds each draw's box.
    pub resolve: Option<ResolveProgram>,
    /// The storage buffer binding the pass uses (the context's last; the program's binding
    /// there is put back after each pass).
    binding: u32,
    buffer: GLuint,
    /// Records the buffer holds.
    capacity: u64,
    /// Records it may hold: [`MAX_RECORDS`] ([`MAX_RECORDS_RESOLVED`] where the GPU resolves),
    /// or fewer where the context's storage blocks are smaller (`GL_MAX_SHADER_STORAGE_BLOCK_SIZE`, 128 MiB at least in GLES 3.1).
    most: u64,
    draws: Vec<Tallied>,
    /// Draws of the last frame read, whose counts the next frame's first pass empties
    /// ([`MAX_TALLIED`] after an allocation).
    dirty: usize,
    /// The timestamps' valid bits.
    mask: u64,
    exhausted: bool,
    /// Records the buffer must hold from the next frame (0: as many as now): where the GPU
    /// resolves, the store is replaced only after the resolve read it ([`Tally::settle`]).
    grow: u64,
    /// A frame needed more records than the bound: the tally is read whenever it could fill
    /// up ([`Tally::must_drain`]).
    drains: bool,
    /// Records the draws taken since the last read may have stored at most.
    bound: u64,
}

impl Tally {
    /// A tally running `program` (and `resolve`'s, where the GPU resolves) with storage
    /// binding `binding`, its buffer holding at least `hint` records, and at most what a
    /// storage block of `block_bytes` addresses.
    ///
    /// # Safety
    /// A context with [`supported`] must be current and `f` its real functions; the
    /// `GL_SHADER_STORAGE_BUFFER` binding is changed (the caller saved it).
    pub unsafe fn new(
        f: &ThermalFns,
        fns: TallyFns,
        (program, resolve): (TallyProgram, Option<ResolveProgram>),
        binding: u32,
        hint: u64,
        block_bytes: u64,
    ) -> Tally {
        let bound = if resolve.is_some() {
            MAX_RECORDS_RESOLVED
        } else {
            MAX_RECORDS
        };
        let most =
            (block_bytes.saturating_sub(HEADER_BYTES as u64) / RECORD_BYTES as u64).min(bound);
        // SAFETY: our caller's promise.
        let mask = unsafe { stamp_mask(fns.get_queryiv) };
        let mut tally = Tally {
            fns,
            program,
            resolve,
            binding,
            buffer: 0,
            capacity: 0,
            most,
            draws: Vec::new(),
            dirty: 0,
            mask,
            exhausted: false,
            grow: 0,
            drains: false,
            bound: 0,
        };
        // SAFETY: our caller's promise.
        unsafe { tally.allocate(f, hint.max(FIRST_RECORDS).min(most)) };
        tally
    }

    /// (Re)allocates the buffer for `records` records.
    ///
    /// # Safety
    /// As [`Tally::new`].
    unsafe fn allocate(&mut self, f: &ThermalFns, records: u64) {
        // SAFETY: our caller's promise; the buffer is ours.
        unsafe {
            if self.buffer == 0 {
                (self.fns.gen_buffers)(1, &mut self.buffer);
            }
            (f.bind_buffer)(SHADER_STORAGE_BUFFER, self.buffer);
            let bytes = HEADER_BYTES as u64 + records * RECORD_BYTES as u64;
            (self.fns.buffer_data)(
                SHADER_STORAGE_BUFFER,
                bytes as GLsizeiptr,
                std::ptr::null(),
                DYNAMIC_READ,
            );
        }
        self.capacity = records;
        // A new store's contents are undefined: the next frame's first pass sets every
        // draw's counts.
        self.dirty = MAX_TALLIED;
    }

    /// Makes the buffer as large as the last read found the frame needed, once nothing
    /// reads it any more (after the resolve, where the GPU resolves).
    ///
    /// # Safety
    /// As [`Tally::new`].
    pub unsafe fn settle(&mut self, f: &ThermalFns) {
        let records = std::mem::take(&mut self.grow);
        if records > 0 {
            // SAFETY: our caller's promise.
            unsafe { self.allocate(f, records) };
        }
    }

    /// Whether a frame needed more records than [`MAX_RECORDS`]: the context's draws are
    /// timed isolated from then on.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Whether draws were tallied since the last read.
    pub fn is_empty(&self) -> bool {
        self.draws.is_empty()
    }

    /// Whether a draw tallied since the last read has its timestamps (the tally weighs it):
    /// else every one is tallied for its coverage alone, and nothing needs resolving.
    pub fn weighs(&self) -> bool {
        self.draws.iter().any(|d| d.stamps.is_some())
    }

    /// Whether the frame tallied [`MAX_TALLIED`] draws: later ones are timed isolated.
    pub fn full(&self) -> bool {
        self.draws.len() >= MAX_TALLIED
    }

    /// Takes `draw` into the frame, into a target of `pixels` (its tally pass stores one
    /// record per covered pixel at most): its index in the records; `Err` past
    /// [`MAX_TALLIED`].
    pub fn take(&mut self, draw: Tallied, pixels: u64) -> Result<u32, String> {
        if self.full() {
            return Err(format!(
                "the frame tallied {MAX_TALLIED} draws timed deferred, the most it may"
            ));
        }
        self.draws.push(draw);
        self.bound += pixels;
        Ok(self.draws.len() as u32 - 1)
    }

    /// Whether the tally must be read (and resolved) before a draw into a target of
    /// `pixels` is taken: once a frame needed more records than it may ever hold
    /// ([`MAX_RECORDS_RESOLVED`], resolved on the GPU), whenever the draws taken since the
    /// last read could fill it with this one.
    pub fn must_drain(&self, pixels: u64) -> bool {
        self.drains && !self.draws.is_empty() && self.bound + pixels > self.capacity
    }

    /// Runs the tally pass of draw `index` (from [`Tally::take`]) over a `width`-wide target:
    /// `draw` draws the full-screen triangle with the program bound, its `u_count` set and
    /// the work stencil bound; our buffer is bound to [`Tally`]'s binding meanwhile (the
    /// frame's first pass empties it first).
    ///
    /// # Safety
    /// As [`Tally::new`], with the painter's pass state set and the program's saved.
    pub unsafe fn pass(&self, f: &ThermalFns, index: u32, width: u32, draw: impl FnOnce()) {
        let fns = self.fns;
        // SAFETY: our caller's promise; the buffer is ours.
        unsafe {
            (fns.uniform1ui)(self.program.draw, index);
            (fns.uniform1ui)(self.program.width, width);
            fns.storage.with_buffer(f, self.binding, self.buffer, || {
                // No barrier between passes: the count is only ever changed by atomics,
                // which add in any order, and the records are read after the frame's
                // barrier. The last frame's passes were done when its records were mapped.
                if index == 0 {
                    self.clear_counts();
                }
                draw();
            });
        }
    }

    /// Empties the count (with its padding) and the last frame's draws' sums, lost records
    /// and (where the GPU resolves) boxes, in our buffer bound to `GL_SHADER_STORAGE_BUFFER`.
    ///
    /// # Safety
    /// As [`Tally::pass`].
    unsafe fn clear_counts(&self) {
        let zeros = vec![0u32; 4 * self.dirty.max(4)];
        let mut parts: Vec<(usize, Vec<u32>)> = vec![
            (0, zeros[..4].to_vec()),
            (SUMS_AT, zeros[..self.dirty].to_vec()),
            (LOST_AT, zeros[..self.dirty].to_vec()),
        ];
        if self.resolve.is_some() {
            parts.push((BOXES_AT, EMPTY_BOX.repeat(self.dirty)));
        }
        for (at, words) in parts.into_iter().filter(|(_, w)| !w.is_empty()) {
            // SAFETY: our caller's promise; the range lies inside the header.
            unsafe {
                (self.fns.buffer_sub_data)(
                    SHADER_STORAGE_BUFFER,
                    at as GLsizeiptr,
                    (4 * words.len()) as GLsizeiptr,
                    words.as_ptr().cast(),
                )
            };
        }
    }

    /// Runs the resolve into target `target`'s maps (`width`×`height`, drawn into with the
    /// resolve program bound, additive blending, and `GL_PROGRAM_POINT_SIZE` where GL has it):
    /// `points` points of [`Resolve::points`], our buffer bound meanwhile.
    ///
    /// # Safety
    /// As [`Tally::pass`], after [`Tally::read`] uploaded the weights.
    pub unsafe fn resolve_pass(
        &self,
        f: &ThermalFns,
        target: u32,
        [width, height]: [u32; 2],
        points: u64,
    ) {
        let (fns, Some(r)) = (self.fns, self.resolve) else {
            return;
        };
        // SAFETY: our caller's promise; the buffer is ours, the points read its records.
        unsafe {
            (fns.uniform1ui)(r.target, target);
            (fns.uniform1ui)(r.width, width);
            (f.uniform2f)(r.size, width as f32, height as f32);
            fns.storage.with_buffer(f, self.binding, self.buffer, || {
                (f.draw_arrays)(POINTS, 0, points as GLsizei);
            });
        }
    }

    /// Reads the frame's counts and timestamps (`waited`: a read of the flush already waited
    /// for the GPU to finish the frame, else this read waits, and is counted; `width_of`: each
    /// target's width in the maps now, for the resolve) and starts the
    /// next frame. On the CPU it reads the records and weighs them ([`weigh`]); where the GPU
    /// resolves, it takes each draw's `N` and box as the pass counted them ([`counted`]),
    /// uploads the draws' weights for [`Tally::resolve_pass`] and reads the records only for
    /// the coverage a draw keeps. Where the frame's draws covered more pixels than the buffer
    /// held, it is made large enough for the next frame (within its bound; after the resolve,
    /// [`Tally::settle`]), and the draws that lost records are incomplete. `Err` when a read
    /// failed.
    ///
    /// # Safety
    /// As [`Tally::new`]; the `GL_COPY_READ_BUFFER` and `GL_SHADER_STORAGE_BUFFER` bindings
    /// are changed (the caller saved them).
    pub unsafe fn read(
        &mut self,
        f: &ThermalFns,
        waited: bool,
        width_of: &dyn Fn(u32) -> Option<u32>,
    ) -> Result<Reading, String> {
        let draws = std::mem::take(&mut self.draws);
        self.dirty = draws.len();
        self.bound = 0;
        let fns = self.fns;
        // SAFETY: our caller's promise; the buffer is ours, mapped only for reading what it
        // holds.
        unsafe {
            (fns.memory_barrier)(BUFFER_UPDATE_BARRIER_BIT);
            (f.bind_buffer)(COPY_READ_BUFFER, self.buffer);
            if !waited {
                crate::waits::note();
            }
            let n = draws.len();
            let used = u64::from(self.map_words::<u32>(f, 0, 1)?[0]);
            let lost: Vec<u32> = self.map_words(f, LOST_AT, n)?;
            let stored = used.min(self.capacity);
            let records = |keep: bool| {
                if keep && stored > 0 {
                    self.map_words::<[u32; 2]>(f, HEADER_BYTES, stored as usize)
                } else {
                    Ok(Vec::new())
                }
            };
            let times: Vec<u64> = draws
                .iter()
                .map(|d| {
                    d.stamps.map_or(0, |pair| {
                        pair_time(fns.get_query_objectui64v, pair, self.mask)
                    })
                })
                .collect();
            let (weighed, records, resolve) = if self.resolve.is_some() {
                let sums: Vec<u32> = self.map_words(f, SUMS_AT, n)?;
                let boxes: Vec<[u32; 4]> = self.map_words(f, BOXES_AT, n)?;
                let weighed = counted(&draws, &times, &sums, &lost, &boxes);
                // Records cross to the CPU only for the coverage a draw keeps for the flow.
                let keeps = draws
                    .iter()
                    .zip(&weighed)
                    .any(|(t, d)| t.coverage && d.complete && d.fragments > 0);
                let weights = resolve_weights(&weighed, &draws, width_of);
                (fns.buffer_sub_data)(
                    COPY_READ_BUFFER,
                    WEIGHTS_AT as GLsizeiptr,
                    (8 * weights.len()) as GLsizeiptr,
                    weights.as_ptr().cast(),
                );
                (fns.memory_barrier)(SHADER_STORAGE_BARRIER_BIT);
                let mut targets: Vec<u32> = weights
                    .iter()
                    .filter(|w| w[1] != NO_TARGET)
                    .map(|w| w[1])
                    .collect();
                targets.sort_unstable();
                targets.dedup();
                let resolve = Resolve {
                    points: stored,
                    targets,
                };
                (weighed, records(keeps)?, Some(resolve))
            } else {
                let records = records(true)?;
                (weigh(&records, &draws, &times, &lost), records, None)
            };
            let mut incomplete = String::new();
            if used > self.capacity {
                // Room to spare for the next frame, within the bound.
                let need = used.next_power_of_two().min(self.most);
                incomplete = format!(
                    "the frame's draws timed deferred covered {used} pixels, more than the {} \
                     the tally held",
                    self.capacity
                );
                if used > self.most && self.resolve.is_some() {
                    // Resolved on the GPU, the tally can be read and resolved in the middle
                    // of a frame: a wait each time it could fill up, none per draw.
                    self.drains = true;
                    self.grow = self.most;
                    incomplete += &format!(
                        " (at most {}): from the next frame it is read whenever its draws \
                         could fill it",
                        self.most
                    );
                } else if used > self.most {
                    self.exhausted = true;
                    incomplete += &format!(
                        " (at most {}): this context's draws are timed isolated from now on",
                        self.most
                    );
                } else {
                    self.grow = need;
                    if self.resolve.is_none() {
                        self.settle(f);
                    }
                    incomplete += "; it holds enough from the next frame";
                }
            }
            Ok(Reading {
                draws: weighed,
                records,
                tallied: draws,
                incomplete,
                resolve,
            })
        }
    }

    /// `n` values of `T` from byte `at` of our buffer, bound to `GL_COPY_READ_BUFFER`.
    ///
    /// # Safety
    /// As [`Tally::read`], the buffer holding them.
    unsafe fn map_words<T: Copy + Default>(
        &self,
        f: &ThermalFns,
        at: usize,
        n: usize,
    ) -> Result<Vec<T>, String> {
        let len = n * std::mem::size_of::<T>();
        // SAFETY: our caller's promise; the mapping holds `len` bytes, copied before the
        // unmap, into a vector of `n` values of a plain type.
        unsafe {
            let from = (self.fns.map_buffer_range)(
                COPY_READ_BUFFER,
                at as GLsizeiptr,
                len as GLsizeiptr,
                MAP_READ_BIT,
            );
            if from.is_null() {
                let e = crate::state::drain_errors(f);
                return Err(format!("GL error 0x{e:04X} mapping the deferred tally"));
            }
            let mut out = vec![T::default(); n];
            std::ptr::copy_nonoverlapping(from.cast::<u8>(), out.as_mut_ptr().cast::<u8>(), len);
            if (self.fns.unmap_buffer)(COPY_READ_BUFFER) == 0 {
                return Err("the deferred tally's store was lost while mapped".into());
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(call: u32, target: u32, width: u32) -> Tallied {
        Tallied {
            call,
            target,
            width,
            stamps: Some([0, 0]),
            coverage: true,
        }
    }

    #[test]
    fn a_tally_is_for_gles_3_1_with_timestamps_and_gl_4_3_with_fragment_storage() {
        let all = |_: &str| true;
        assert!(supported(ClientApi::Gles, (3, 2), all, 8));
        assert!(!supported(ClientApi::Gles, (3, 2), all, 0));
        assert!(!supported(ClientApi::Gles, (3, 0), all, 8));
        assert!(supported(ClientApi::Gl, (4, 6), all, 8));
        assert!(!supported(ClientApi::Gl, (4, 2), all, 8));
        assert!(!supported(ClientApi::Vg, (1, 1), all, 8));
        let no_timer = |e: &str| e != "GL_EXT_disjoint_timer_query";
        assert!(!supported(ClientApi::Gles, (3, 2), no_timer, 8));
    }

    #[test]
    fn the_gpu_resolves_on_hardware_whose_vertex_stage_reads_storage() {
        assert!(resolves_on_gpu(None, false, 16));
        assert!(
            !resolves_on_gpu(None, true, 16),
            "software adds records cheaper"
        );
        assert!(!resolves_on_gpu(None, false, 0), "GLES 3.1 may allow none");
        assert!(resolves_on_gpu(Some(true), true, 16));
        assert!(!resolves_on_gpu(Some(true), false, 0));
        assert!(!resolves_on_gpu(Some(false), false, 16));
    }

    #[test]
    fn counted_draws_take_the_gpus_sums_and_boxes_and_weigh_only_when_whole() {
        let mut coverage_only = draw(13, 2, 8);
        coverage_only.stamps = None;
        let tallied = [
            draw(10, 0, 4),
            draw(11, 0, 4),
            draw(12, 5, 4),
            coverage_only,
        ];
        let sums = [3, 0, 7, 5];
        let lost = [0, 0, 2, 0];
        let boxes = [[1, 0, 3, 2], EMPTY_BOX, [0, 0, 4, 4], [2, 2, 3, 3]];
        let w = counted(&tallied, &[300, 50, 70, 90], &sums, &lost, &boxes);
        assert_eq!(
            (w[0].fragments, w[0].bbox, w[0].time_ns),
            (3, [1, 0, 3, 2], 300)
        );
        assert!(w[0].complete && w[0].weighs);
        assert_eq!((w[1].fragments, w[1].bbox), (0, [0; 4]), "covered nothing");
        assert!(!w[2].complete, "lost records");
        assert_eq!((w[2].fragments, w[2].bbox), (0, [0; 4]));
        assert!(w[3].complete && !w[3].weighs);
        // Only draw 0 adds in the resolve, T/N = 100 per fragment, into target 0.
        let width_of = |target: u32| (target <= 5).then_some(4);
        let weights = resolve_weights(&w, &tallied, &width_of);
        assert_eq!(weights[0], [100.0f32.to_bits(), 0]);
        assert!(weights[1..].iter().all(|&[_, t]| t == NO_TARGET));
        // Target 0 made again 8 wide since: draw 0's records would land on other pixels.
        let resized = |target: u32| Some(if target == 0 { 8 } else { 4 });
        let weights = resolve_weights(&w, &tallied, &resized);
        assert!(weights.iter().all(|&[_, t]| t == NO_TARGET));
    }

    #[test]
    fn each_draw_is_weighed_by_its_own_records() {
        // A 4-wide target: draw 0 covers (1,0) once and (2,1) twice; draw 1 nothing; draw 2
        // covers (3,2) once.
        let tallied = [draw(10, 0, 4), draw(11, 0, 4), draw(12, 5, 4)];
        let records = [[1, 1], [4 + 2, 2], [8 + 3, (2 << 8) | 1]];
        let w = weigh(&records, &tallied, &[300, 50, 70], &[0, 0, 0]);
        assert!(w.iter().all(|d| d.complete));
        assert_eq!(w[0].fragments, 3);
        assert_eq!(w[0].bbox, [1, 0, 3, 2]);
        assert_eq!((w[1].fragments, w[1].bbox, w[1].time_ns), (0, [0; 4], 50));
        assert_eq!(
            (w[2].fragments, w[2].bbox, w[2].target),
            (1, [3, 2, 4, 3], 5)
        );
        // Their coverage in their boxes, bottom row first: draw 0's box is 2×2.
        let reading = Reading {
            records: records.to_vec(),
            tallied: tallied.to_vec(),
            draws: w,
            incomplete: String::new(),
            resolve: None,
        };
        let c = reading.coverages();
        assert_eq!(c[0].as_deref(), Some(&[1, 0, 0, 2][..]));
        assert_eq!(c[1], None, "draw 1 covered nothing");
        assert_eq!(c[2].as_deref(), Some(&[1][..]));
    }

    #[test]
    fn records_add_each_draws_time_over_its_fragments() {
        let tallied = vec![draw(10, 0, 4), draw(12, 5, 2)];
        let records = vec![[1, 1], [6, 2], [3, (1 << 8) | 1]];
        let reading = Reading {
            draws: weigh(&records, &tallied, &[300, 70], &[0, 0]),
            records,
            tallied,
            incomplete: String::new(),
            resolve: None,
        };
        let (mut heat, mut over) = (vec![0.0f32; 16], vec![0u32; 16]);
        let mut left = Vec::new();
        let mut maps = [TargetMaps {
            target: 0,
            width: 4,
            heat: &mut heat,
            overdraw: &mut over,
        }];
        reading.add_into(&mut maps, &mut left);
        // Draw 0: T/N = 100 per fragment; its pixel 6 has two.
        assert_eq!(heat[1], 100.0);
        assert_eq!(heat[6], 200.0);
        assert_eq!((over[1], over[6]), (1, 2));
        assert_eq!(
            heat.iter().sum::<f32>(),
            300.0,
            "Σ heat = T of the read target"
        );
        // Target 5 was not read: its record waits, and joins its maps at a later flush.
        assert_eq!(left.len(), 1);
        let (mut heat5, mut over5) = (vec![0.0f32; 4], vec![0u32; 4]);
        let mut later = [TargetMaps {
            target: 5,
            width: 2,
            heat: &mut heat5,
            overdraw: &mut over5,
        }];
        Carried::add_into(&mut left, &mut later);
        assert!(left.is_empty());
        assert_eq!((heat5[3], over5[3]), (70.0, 1));
    }

    #[test]
    fn a_draw_that_lost_records_adds_nothing() {
        // Draw 1 covered 3 pixels but only 1 record was stored (2 lost): it is incomplete, lists no
        // fragments, and its stored record is not added; draw 0 stays exact.
        let tallied = vec![draw(10, 0, 4), draw(11, 0, 4)];
        let records = vec![[1, 1], [2, (1 << 8) | 1]];
        let reading = Reading {
            draws: weigh(&records, &tallied, &[100, 90], &[0, 2]),
            records,
            tallied,
            incomplete: String::new(),
            resolve: None,
        };
        assert!(reading.draws[0].complete && !reading.draws[1].complete);
        assert_eq!(
            (reading.draws[1].fragments, reading.draws[1].bbox),
            (0, [0; 4])
        );
        let (mut heat, mut over) = (vec![0.0f32; 4], vec![0u32; 4]);
        let mut maps = [TargetMaps {
            target: 0,
            width: 4,
            heat: &mut heat,
            overdraw: &mut over,
        }];
        reading.add_into(&mut maps, &mut Vec::new());
        assert_eq!(heat, vec![0.0, 100.0, 0.0, 0.0]);
        assert_eq!(over, vec![0, 1, 0, 0]);
    }
}
