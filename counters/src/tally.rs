//! Heat of draws timed deferred where the GPU cannot weigh them itself: GLES has no query
//! buffer objects, so a timestamp's result never reaches GPU memory and `T/N` is known on
//! the CPU only, at the frame's end ([`crate::weights`] is desktop GL's way). And, where the
//! GPU weighs them, the coverage of the draws that feed later ones (the flow's), which would
//! otherwise be read back draw by draw.
//!
//! Each such draw is replayed into the work stencil as any other; then one pass of ours
//! samples `c(p)` there and appends a record (pixel, draw, `c`) for each covered pixel to a
//! storage buffer of ours, with an atomic counter: no wait. The flush, after its one wait for
//! the frame, reads the records once, reads each draw's timestamp pair (landed by then),
//! takes `N` and the box of each draw from its records (exact), and adds `c·T/N` and `c`
//! into the targets' maps it read back. The maps are the same sums as the GPU passes'
//! (`heat(p) = Σ_d c_d(p)·T_d/N_d`), added in another order.
//!
//! Where: GLES 3.1 with the disjoint timer query, or GL 4.3, with storage blocks in the
//! fragment stage and a sampled work stencil ([`supported`]). The records a frame may hold are bounded
//! ([`MAX_RECORDS`], 8 bytes each). The pass also counts each draw's covered pixels, so
//! where the buffer filled up the flush knows which draws lost records: they are listed
//! unpainted with the reason (the map keeps the others, exact), and the buffer is made large
//! enough for the next frame; beyond the bound the painter stops deferring
//! ([`Tally::exhausted`]: heat goes back to isolated timing on that context). A frame
//! tallies [`MAX_TALLIED`] draws at most; later ones are timed isolated ([`Tally::full`]).

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

/// The fragment stage of the tally pass (with the painter's full-screen vertex stage, colour
/// writes off): where the work stencil (`u_count`) holds `c > 0`, one record of the pixel's
/// index in the `u_width`-wide target, the draw `u_draw` and `c`, and one more covered pixel
/// in the draw's count. Records past the buffer's end are counted, not stored: the count says
/// how large the next frame's buffer must be, the draw's count that it lost some.
pub(crate) fn tally_fs(binding: u32) -> String {
    format!(
        "layout(std430, binding = {binding}) buffer Tally {{ uint used; uint pad_[3]; uint covered[{MAX_TALLIED}]; uvec2 records[]; }};\n\
uniform highp usampler2D u_count;\n\
uniform uint u_draw;\n\
uniform uint u_width;\n\
void main() {{\n\
  ivec2 p = ivec2(gl_FragCoord.xy);\n\
  uint c = texelFetch(u_count, p, 0).r;\n\
  if (c == 0u) return;\n\
  atomicAdd(covered[u_draw], 1u);\n\
  uint i = atomicAdd(used, 1u);\n\
  if (i < uint(records.length()))\n\
    records[i] = uvec2(uint(p.y) * u_width + uint(p.x), (u_draw << 8) | c);\n\
}}\n"
    )
}

/// Most draws a frame tallies, as many as desktop GL weighs on the GPU
/// ([`crate::weights::MAX_SLOTS`]): later ones are timed isolated.
pub const MAX_TALLIED: usize = crate::weights::MAX_SLOTS as usize;
/// Bytes before the records: the count (padded to 16), then each draw's covered pixels.
const HEADER_BYTES: usize = 16 + 4 * MAX_TALLIED;
/// Bytes of one record: the pixel's index, then the draw's index shifted by 8 bits or'd with
/// its count there.
const RECORD_BYTES: usize = 8;
/// Records of the first buffer, at least (1 Mi: 8 MiB).
const FIRST_RECORDS: u64 = 1 << 20;
/// Most records a frame may hold: 32 Mi, 256 MiB, as much as the maps' bound
/// ([`crate::thermal::MAX_MAP_PIXELS`]).
pub const MAX_RECORDS: u64 = 32 << 20;

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
/// target, `draw << 8 | c`), and its time: `times[i]` for draw `i` of `tallied`, `covered[i]`
/// the pixels the pass found it covering (more than its records where the buffer filled up).
pub(crate) fn weigh(
    records: &[[u32; 2]],
    tallied: &[Tallied],
    times: &[u64],
    covered: &[u32],
) -> Vec<Weighed> {
    let mut stored = vec![0u32; tallied.len()];
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
        stored[draw] += 1;
        d.fragments += u64::from(packed & 0xFF);
        d.bbox = [
            d.bbox[0].min(x),
            d.bbox[1].min(y),
            d.bbox[2].max(x + 1),
            d.bbox[3].max(y + 1),
        ];
    }
    for (i, d) in out.iter_mut().enumerate() {
        d.complete = covered.get(i).is_some_and(|&c| c == stored[i]);
        if !d.complete {
            d.fragments = 0;
        }
        if d.fragments == 0 {
            d.bbox = [0; 4];
        }
    }
    out
}

/// A context's tally: the program, the buffer of records, and the draws of the frame.
pub(crate) struct Tally {
    fns: TallyFns,
    pub program: TallyProgram,
    /// The storage buffer binding the pass uses (the context's last; the program's binding
    /// there is put back after each pass).
    binding: u32,
    buffer: GLuint,
    /// Records the buffer holds.
    capacity: u64,
    /// Records it may hold: [`MAX_RECORDS`], or fewer where the context's storage blocks are
    /// smaller (`GL_MAX_SHADER_STORAGE_BLOCK_SIZE`, 128 MiB at least in GLES 3.1).
    most: u64,
    draws: Vec<Tallied>,
    /// Draws of the last frame read, whose covered counts the next frame's first pass zeroes.
    dirty: usize,
    /// The timestamps' valid bits.
    mask: u64,
    exhausted: bool,
}

impl Tally {
    /// A tally running `program` with storage binding `binding`, its buffer holding at least
    /// `hint` records, and at most what a storage block of `block_bytes` addresses.
    ///
    /// # Safety
    /// A context with [`supported`] must be current and `f` its real functions; the
    /// `GL_SHADER_STORAGE_BUFFER` binding is changed (the caller saved it).
    pub unsafe fn new(
        f: &ThermalFns,
        fns: TallyFns,
        program: TallyProgram,
        binding: u32,
        hint: u64,
        block_bytes: u64,
    ) -> Tally {
        let most = (block_bytes.saturating_sub(HEADER_BYTES as u64) / RECORD_BYTES as u64)
            .min(MAX_RECORDS);
        let mut bits = 0;
        // SAFETY: our caller's promise.
        unsafe { (fns.get_queryiv)(TIMESTAMP, QUERY_COUNTER_BITS, &mut bits) };
        let mask = match bits {
            1..=63 => (1u64 << bits) - 1,
            _ => u64::MAX,
        };
        let mut tally = Tally {
            fns,
            program,
            binding,
            buffer: 0,
            capacity: 0,
            most,
            draws: Vec::new(),
            dirty: 0,
            mask,
            exhausted: false,
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
            // A new store's contents are undefined: every draw's count starts at 0.
            let zeros = vec![0u8; HEADER_BYTES];
            (self.fns.buffer_sub_data)(
                SHADER_STORAGE_BUFFER,
                0,
                HEADER_BYTES as GLsizeiptr,
                zeros.as_ptr().cast(),
            );
        }
        self.capacity = records;
        self.dirty = 0;
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

    /// Whether the frame tallied [`MAX_TALLIED`] draws: later ones are timed isolated.
    pub fn full(&self) -> bool {
        self.draws.len() >= MAX_TALLIED
    }

    /// Takes `draw` into the frame: its index in the records; `Err` past [`MAX_TALLIED`].
    pub fn take(&mut self, draw: Tallied) -> Result<u32, String> {
        if self.full() {
            return Err(format!(
                "the frame tallied {MAX_TALLIED} draws timed deferred, the most it may"
            ));
        }
        self.draws.push(draw);
        Ok(self.draws.len() as u32 - 1)
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
                    // The count (with its padding) and the last frame's draws' counts.
                    let zeros = vec![0u8; 16 + 4 * self.dirty];
                    (fns.buffer_sub_data)(
                        SHADER_STORAGE_BUFFER,
                        0,
                        zeros.len() as GLsizeiptr,
                        zeros.as_ptr().cast(),
                    );
                }
                draw();
            });
        }
    }

    /// Reads the frame's records, its draws' covered counts and timestamps (`waited`: a read
    /// of the flush already waited for the GPU to finish the frame, else this read waits, and
    /// is counted), weighs them ([`weigh`]) and starts the next frame. Where the frame's draws
    /// covered more pixels than the buffer held, it is made large enough for the next frame
    /// (within [`MAX_RECORDS`]), and the draws that lost records are incomplete. `Err` when a
    /// read failed.
    ///
    /// # Safety
    /// As [`Tally::new`]; the `GL_COPY_READ_BUFFER` and `GL_SHADER_STORAGE_BUFFER` bindings
    /// are changed (the caller saved them).
    pub unsafe fn read(&mut self, f: &ThermalFns, waited: bool) -> Result<Reading, String> {
        let draws = std::mem::take(&mut self.draws);
        self.dirty = draws.len();
        let fns = self.fns;
        // SAFETY: our caller's promise; the buffer is ours, mapped only for reading what it
        // holds.
        unsafe {
            (fns.memory_barrier)(BUFFER_UPDATE_BARRIER_BIT);
            (f.bind_buffer)(COPY_READ_BUFFER, self.buffer);
            if !waited {
                crate::waits::note();
            }
            let head: Vec<u32> = self.map_words(f, 0, 4 + draws.len())?;
            let used = u64::from(head[0]);
            let covered = &head[4..];
            let stored = used.min(self.capacity);
            let records = if stored == 0 {
                Vec::new()
            } else {
                self.map_words::<[u32; 2]>(f, HEADER_BYTES, stored as usize)?
            };
            let times: Vec<u64> = draws
                .iter()
                .map(|d| {
                    let Some([before, after]) = d.stamps else {
                        return 0;
                    };
                    let (mut t0, mut t1) = (0u64, 0u64);
                    (fns.get_query_objectui64v)(before, QUERY_RESULT, &mut t0);
                    (fns.get_query_objectui64v)(after, QUERY_RESULT, &mut t1);
                    t1.wrapping_sub(t0) & self.mask
                })
                .collect();
            let weighed = weigh(&records, &draws, &times, covered);
            let mut incomplete = String::new();
            if used > self.capacity {
                let need = used.next_power_of_two();
                incomplete = format!(
                    "the frame's draws timed deferred covered {used} pixels, more than the {} \
                     the tally held",
                    self.capacity
                );
                if need > self.most {
                    self.exhausted = true;
                    incomplete += &format!(
                        " (at most {}): this context's draws are timed isolated from now on",
                        self.most
                    );
                } else {
                    self.allocate(f, need);
                    incomplete += "; it holds enough from the next frame";
                }
            }
            Ok(Reading {
                draws: weighed,
                records,
                tallied: draws,
                incomplete,
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
    fn each_draw_is_weighed_by_its_own_records() {
        // A 4-wide target: draw 0 covers (1,0) once and (2,1) twice; draw 1 nothing; draw 2
        // covers (3,2) once.
        let tallied = [draw(10, 0, 4), draw(11, 0, 4), draw(12, 5, 4)];
        let records = [[1, 1], [4 + 2, 2], [8 + 3, (2 << 8) | 1]];
        let w = weigh(&records, &tallied, &[300, 50, 70], &[2, 0, 1]);
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
            draws: weigh(&records, &tallied, &[300, 70], &[2, 1]),
            records,
            tallied,
            incomplete: String::new(),
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
        // Draw 1 covered 3 pixels but only 1 record was stored: it is incomplete, lists no
        // fragments, and its stored record is not added; draw 0 stays exact.
        let tallied = vec![draw(10, 0, 4), draw(11, 0, 4)];
        let records = vec![[1, 1], [2, (1 << 8) | 1]];
        let reading = Reading {
            draws: weigh(&records, &tallied, &[100, 90], &[1, 3]),
            records,
            tallied,
            incomplete: String::new(),
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
