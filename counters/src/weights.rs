//! Heat weighted on the GPU, for draws timed deferred: their time `T` is not known on the
//! CPU until the frame's end, so the painter cannot pass `T/N` as a uniform. Instead the GPU
//! writes `T`'s two timestamps and `N` (the replay's samples passed) into a slot of our
//! buffer (`ARB_query_buffer_object`: `glGetQueryObjectui64v` with `GL_QUERY_BUFFER` bound,
//! no CPU wait), and the weighting passes read the slot as instanced vertex attributes of our
//! own vertex array and compute `T/N` in the vertex shader. The CPU reads the slots once, at
//! the flush, for the draws' listed times and fragments.
//!
//! Only desktop GL 3.3+ with query buffer objects ([`gpu_weighting`]); elsewhere heat times
//! its draws isolated.

use gpuheat_session::ClientApi;

use std::ffi::c_void;

use crate::gl::*;
use crate::readback::Source;

/// Whether a context of `api` and version `major.minor`, with `has_extension`, can weigh
/// heat on the GPU: desktop GL 3.3 (integer attributes, divisors, GLSL 3.30) with query
/// buffer objects (GL 4.4 or `GL_ARB_query_buffer_object`).
pub fn gpu_weighting(
    api: ClientApi,
    (major, minor): (u32, u32),
    has_extension: impl Fn(&str) -> bool,
) -> bool {
    api == ClientApi::Gl
        && (major, minor) >= (3, 3)
        && ((major, minor) >= (4, 4) || has_extension("GL_ARB_query_buffer_object"))
}

/// Whether the work stencil of a context of `api` and version `major.minor` can be a texture
/// the weighting passes sample: a stencil-only texture (GL 4.4 or `GL_ARB_texture_stencil8`;
/// GLES 3.2 or `GL_OES_texture_stencil8`) read as its stencil index (GL 4.3 or
/// `GL_ARB_stencil_texturing`; GLES 3.1), stored with `glTexStorage2D` (GL 4.2 or
/// `GL_ARB_texture_storage`; GLES 3.0). Then a deferred draw's weight, and that of a draw
/// putting more than one fragment on a pixel, takes one pass reading `c(p)` ([`SAMPLED_FS`],
/// [`SAMPLED_SHARE_FS`]) instead of eight stencil-tested bit passes over the whole target.
pub fn stencil_sampling(
    api: ClientApi,
    (major, minor): (u32, u32),
    has_extension: impl Fn(&str) -> bool,
) -> bool {
    let at_least = |v: (u32, u32), ext: &str| (major, minor) >= v || has_extension(ext);
    match api {
        ClientApi::Gl => {
            at_least((4, 4), "GL_ARB_texture_stencil8")
                && at_least((4, 3), "GL_ARB_stencil_texturing")
                && at_least((4, 2), "GL_ARB_texture_storage")
        }
        ClientApi::Gles => (major, minor) >= (3, 1) && at_least((3, 2), "GL_OES_texture_stencil8"),
        ClientApi::Vg | ClientApi::Vulkan => false,
    }
}

/// The fragment stage of the one weighting pass over a stencil texture: `c(p)` read from the
/// work stencil (`u_count`, our unit, the target's pixel at the same coordinates as the work
/// stencil's), `c·T/N` into the heat map and `c` into the overdraw map, nothing where `c` is
/// 0. With [`WEIGHT_VS`].
pub(crate) const SAMPLED_FS: &str = "uniform highp usampler2D u_count;\n\
flat in float v_share;\n\
layout(location = 0) out vec4 o0;\n\
layout(location = 1) out vec4 o1;\n\
void main() {\n\
  uint c = texelFetch(u_count, ivec2(gl_FragCoord.xy), 0).r;\n\
  if (c == 0u) discard;\n\
  o0 = vec4(float(c) * v_share);\n\
  o1 = vec4(float(c));\n\
}\n";

/// The entry points of a sampled work stencil ([`stencil_sampling`]), all required: taken
/// from [`ThermalFns`]'s optional ones when the work stencil is made.
#[derive(Clone, Copy)]
pub(crate) struct SampleFns {
    pub gen_textures: unsafe extern "system" fn(GLsizei, *mut GLuint),
    pub delete_textures: unsafe extern "system" fn(GLsizei, *const GLuint),
    pub tex_storage_2d: unsafe extern "system" fn(GLenum, GLsizei, GLenum, GLsizei, GLsizei),
    pub tex_parameteri: unsafe extern "system" fn(GLenum, GLenum, GLint),
    pub framebuffer_texture_2d: unsafe extern "system" fn(GLenum, GLenum, GLenum, GLuint, GLint),
    pub bind_sampler: unsafe extern "system" fn(GLuint, GLuint),
    pub uniform1i: unsafe extern "system" fn(GLint, GLint),
}

impl SampleFns {
    /// The sampling entry points of `f`, or `None` when one is missing (the stencil then
    /// stays a renderbuffer, weighed by the bit passes).
    pub fn of(f: &ThermalFns) -> Option<SampleFns> {
        Some(SampleFns {
            gen_textures: f.gen_textures?,
            delete_textures: f.delete_textures?,
            tex_storage_2d: f.tex_storage_2d?,
            tex_parameteri: f.tex_parameteri?,
            framebuffer_texture_2d: f.framebuffer_texture_2d?,
            bind_sampler: f.bind_sampler?,
            uniform1i: f.uniform1i?,
        })
    }

    /// A `w`×`h` `GL_STENCIL_INDEX8` texture of one level, filtered `NEAREST` (an integer
    /// texture with any other filter is incomplete and samples as 0), for the work stencil.
    ///
    /// # Safety
    /// A context with [`stencil_sampling`] must be current and `f` its real functions; the
    /// active unit's `GL_TEXTURE_2D` binding is changed (the caller saved it).
    pub unsafe fn stencil_texture(&self, f: &ThermalFns, w: u32, h: u32) -> GLuint {
        let mut texture = 0;
        // SAFETY: our caller's promise; `texture` is ours, just generated.
        unsafe {
            (self.gen_textures)(1, &mut texture);
            (f.bind_texture)(TEXTURE_2D, texture);
            (self.tex_storage_2d)(TEXTURE_2D, 1, STENCIL_INDEX8, w as GLsizei, h as GLsizei);
            for pname in [TEXTURE_MIN_FILTER, TEXTURE_MAG_FILTER] {
                (self.tex_parameteri)(TEXTURE_2D, pname, NEAREST as GLint);
            }
        }
        texture
    }

    /// Runs `pass` with `texture` bound on texture unit `unit`, no sampler object there (a
    /// program's sampler would override the texture's filters), and that unit's binding,
    /// sampler and the active unit put back afterwards.
    ///
    /// # Safety
    /// As [`SampleFns::stencil_texture`]; `unit` below `GL_MAX_COMBINED_TEXTURE_IMAGE_UNITS`.
    pub unsafe fn with_texture(
        &self,
        f: &ThermalFns,
        unit: u32,
        texture: GLuint,
        pass: impl FnOnce(),
    ) {
        // SAFETY: our caller's promise; what is bound is put back before returning.
        unsafe {
            let active = f.integer(ACTIVE_TEXTURE) as GLenum;
            (f.active_texture)(TEXTURE0 + unit);
            let bound = f.integer(TEXTURE_BINDING_2D) as GLuint;
            let sampler = f.integer(SAMPLER_BINDING) as GLuint;
            (f.bind_texture)(TEXTURE_2D, texture);
            (self.bind_sampler)(unit, 0);
            pass();
            (self.bind_sampler)(unit, sampler);
            (f.bind_texture)(TEXTURE_2D, bound);
            (f.active_texture)(active);
        }
    }
}

/// Whether the one weighting pass of a context whose work stencil is sampled finds each
/// deferred draw's box: storage buffers and their atomics in the fragment stage, cleared and
/// fenced on the GPU, need GL 4.3; and not on a `software` rasterizer
/// ([`crate::software_rasterizer`]), which runs every instruction of the pass for every pixel
/// of the target, discarded or not: neverball's frame under `--heat --timing deferred` went
/// from 454 to 860-990 ms on llvmpipe with boxes found (the many-draws bench at 1,000 draws of
/// 256x256, 23-30x the uncaptured frame without them, 38-39x with them), where a GPU only
/// runs the box code for covered pixels on an edge. (`auto` never times llvmpipe deferred.)
pub fn gpu_boxes(api: ClientApi, (major, minor): (u32, u32), software: bool) -> bool {
    api == ClientApi::Gl && (major, minor) >= (4, 3) && !software
}

/// [`SAMPLED_FS`] that also finds the draw's box `u_slot` in the storage buffer at `binding`
/// (GLSL 4.30): a covered pixel lowers or raises a side of the box with an atomic only where
/// it lies beyond the box so far (a plain load first; a stale value only costs an atomic
/// more) and its neighbour on that side is not covered (or it is on the stencil's border).
/// A GPU has many thousand fragments in flight, which would all find the box empty at first
/// and serialize their atomics on its four words: the edge test keeps them to the coverage's
/// perimeter, and the neighbours' texels are cached. Outside the target the work stencil is 0
/// (cleared whole before each replay), so the box stays inside it.
pub(crate) fn sampled_box_fs(binding: u32) -> String {
    format!(
        "layout(std430, binding = {binding}) buffer Boxes {{ uint boxes[]; }};\n\
uniform highp usampler2D u_count;\n\
uniform uint u_slot;\n\
flat in float v_share;\n\
layout(location = 0) out vec4 o0;\n\
layout(location = 1) out vec4 o1;\n\
uint at(ivec2 p) {{ return texelFetch(u_count, p, 0).r; }}\n\
void main() {{\n\
  ivec2 p = ivec2(gl_FragCoord.xy);\n\
  uint c = at(p);\n\
  if (c == 0u) discard;\n\
  o0 = vec4(float(c) * v_share);\n\
  o1 = vec4(float(c));\n\
  uint b = u_slot * 4u;\n\
{BOX_EDGES}}}\n"
    )
}

/// The box finding of a fragment stage whose covered pixel `p` (count `at(p)`, from the
/// work stencil `u_count`) lowers or raises the sides of the box at `boxes[b..b + 4]` where
/// it lies on the coverage's edge ([`sampled_box_fs`]; the tally's pass too).
pub(crate) const BOX_EDGES: &str = "  uvec2 q = uvec2(p);\n\
  ivec2 size = textureSize(u_count, 0);\n\
  if (q.x < boxes[b] && (p.x == 0 || at(p - ivec2(1, 0)) == 0u))\n\
    atomicMin(boxes[b], q.x);\n\
  if (q.y < boxes[b + 1u] && (p.y == 0 || at(p - ivec2(0, 1)) == 0u))\n\
    atomicMin(boxes[b + 1u], q.y);\n\
  if (q.x + 1u > boxes[b + 2u] && (p.x + 1 >= size.x || at(p + ivec2(1, 0)) == 0u))\n\
    atomicMax(boxes[b + 2u], q.x + 1u);\n\
  if (q.y + 1u > boxes[b + 3u] && (p.y + 1 >= size.y || at(p + ivec2(0, 1)) == 0u))\n\
    atomicMax(boxes[b + 3u], q.y + 1u);\n";

/// Bytes of one draw's box: x0, y0, x1, y1 as `GLuint`s (x1, y1 past the last pixel).
const BOX_BYTES: usize = 16;

/// An empty box, as the boxes are cleared: the atomics lower x0, y0 and raise x1, y1.
const EMPTY_BOX: [u32; 4] = [u32::MAX, u32::MAX, 0, 0];

/// The entry points that bind a buffer of ours to a storage buffer binding for one pass and
/// put the program's binding back (GL 4.3, GLES 3.1), all required.
#[derive(Clone, Copy)]
pub(crate) struct StorageBinding {
    pub bind_buffer_base: unsafe extern "system" fn(GLenum, GLuint, GLuint),
    pub bind_buffer_range:
        unsafe extern "system" fn(GLenum, GLuint, GLuint, GLsizeiptr, GLsizeiptr),
    pub get_integeri_v: unsafe extern "system" fn(GLenum, GLuint, *mut GLint),
    pub get_integer64i_v: unsafe extern "system" fn(GLenum, GLuint, *mut i64),
}

impl StorageBinding {
    /// The binding entry points of `f`, or `None` when one is missing.
    pub fn of(f: &ThermalFns) -> Option<StorageBinding> {
        Some(StorageBinding {
            bind_buffer_base: f.bind_buffer_base?,
            bind_buffer_range: f.bind_buffer_range?,
            get_integeri_v: f.get_integeri_v?,
            get_integer64i_v: f.get_integer64i_v?,
        })
    }

    /// Runs `pass` with `buffer` bound to storage buffer `binding`, then puts the program's
    /// binding there (whole or a range) and its `GL_SHADER_STORAGE_BUFFER` binding back.
    ///
    /// # Safety
    /// A GL 4.3 or GLES 3.1 context must be current and `f` its real functions; `binding`
    /// below `GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS`, `buffer` ours.
    pub unsafe fn with_buffer(
        &self,
        f: &ThermalFns,
        binding: u32,
        buffer: GLuint,
        pass: impl FnOnce(),
    ) {
        // SAFETY: our caller's promise; what is bound is put back before returning.
        unsafe {
            let generic = f.integer(SHADER_STORAGE_BUFFER_BINDING) as GLuint;
            let mut name = 0;
            (self.get_integeri_v)(SHADER_STORAGE_BUFFER_BINDING, binding, &mut name);
            let (mut start, mut size) = (0i64, 0i64);
            (self.get_integer64i_v)(SHADER_STORAGE_BUFFER_START, binding, &mut start);
            (self.get_integer64i_v)(SHADER_STORAGE_BUFFER_SIZE, binding, &mut size);
            (self.bind_buffer_base)(SHADER_STORAGE_BUFFER, binding, buffer);
            pass();
            if size > 0 {
                (self.bind_buffer_range)(
                    SHADER_STORAGE_BUFFER,
                    binding,
                    name as GLuint,
                    start as GLsizeiptr,
                    size as GLsizeiptr,
                );
            } else {
                (self.bind_buffer_base)(SHADER_STORAGE_BUFFER, binding, name as GLuint);
            }
            (f.bind_buffer)(SHADER_STORAGE_BUFFER, generic);
        }
    }
}

/// The entry points of finding boxes on the GPU ([`gpu_boxes`]), all required.
#[derive(Clone, Copy)]
pub(crate) struct BoxFns {
    pub storage: StorageBinding,
    pub clear_buffer_data: unsafe extern "system" fn(GLenum, GLenum, GLenum, GLenum, *const c_void),
    pub memory_barrier: unsafe extern "system" fn(GLenum),
    pub uniform1ui: unsafe extern "system" fn(GLint, GLuint),
}

impl BoxFns {
    /// The box entry points of `f`, or `None` when one is missing.
    pub fn of(f: &ThermalFns) -> Option<BoxFns> {
        Some(BoxFns {
            storage: StorageBinding::of(f)?,
            clear_buffer_data: f.clear_buffer_data?,
            memory_barrier: f.memory_barrier?,
            uniform1ui: f.uniform1ui?,
        })
    }

    /// Empties every box of `buffer` (bound to `GL_ARRAY_BUFFER`), on the GPU.
    ///
    /// # Safety
    /// A GL 4.3 context must be current, `buffer` ours and bound to `GL_ARRAY_BUFFER` (the
    /// caller saved that binding).
    unsafe fn clear(&self) {
        // SAFETY: our caller's promise; the data is one RGBA32UI texel.
        unsafe {
            (self.clear_buffer_data)(
                ARRAY_BUFFER,
                RGBA32UI,
                RGBA_INTEGER,
                UNSIGNED_INT,
                EMPTY_BOX.as_ptr().cast(),
            );
        }
    }
}

/// Decodes the boxes of one buffer read back ([`BOX_BYTES`] each): `None` for a box no pixel
/// touched (the draw put no fragment on the target).
fn decode_boxes(bytes: &[u8]) -> Vec<Option<[u32; 4]>> {
    bytes
        .chunks_exact(BOX_BYTES)
        .map(|b| {
            let word = |i: usize| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4"));
            let bbox = [word(0), word(1), word(2), word(3)];
            (bbox[0] < bbox[2] && bbox[1] < bbox[3]).then_some(bbox)
        })
        .collect()
}

/// The same pass for a draw whose time is known on the CPU (timed isolated) and that put
/// more than one fragment on a pixel: `u_add` = (`T/N`, 1) a uniform, with the painter's
/// full-screen vertex stage. One pass instead of eight bit passes.
pub(crate) const SAMPLED_SHARE_FS: &str = "uniform highp usampler2D u_count;\n\
uniform vec2 u_add;\n\
in vec2 unused_;\n\
layout(location = 0) out vec4 o0;\n\
layout(location = 1) out vec4 o1;\n\
void main() {\n\
  uint c = texelFetch(u_count, ivec2(gl_FragCoord.xy), 0).r;\n\
  if (c == 0u) discard;\n\
  o0 = vec4(float(c) * u_add.x);\n\
  o1 = vec4(float(c) * u_add.y);\n\
}\n";

/// The count pass of a context that cannot read its stencil back (GLES without
/// `GL_NV_read_stencil`) where the work stencil is sampled: `c(p)` written as the red byte of
/// the RGBA8 count buffer (`c/255` stored in 8-bit unsigned normalized is `c` exactly, and the
/// stencil saturates at 255), 0 where the draw left none, with the painter's full-screen
/// vertex stage, blending off. One pass and one read of bytes, where the mask passes take two
/// passes, and eight more and a read of floats for a draw that put more than one fragment on
/// a pixel.
pub(crate) const SAMPLED_COUNT_FS: &str = "uniform highp usampler2D u_count;\n\
in vec2 unused_;\n\
layout(location = 0) out vec4 o0;\n\
void main() {\n\
  uint c = texelFetch(u_count, ivec2(gl_FragCoord.xy), 0).r;\n\
  o0 = vec4(float(c) / 255.0, 0.0, 0.0, 0.0);\n\
}\n";

/// A program of ours sampling the work stencil: its name and `u_count`'s location.
#[derive(Clone, Copy)]
pub(crate) struct SampledProgram {
    pub program: GLuint,
    pub count: GLint,
}

/// The weighting pass's box finding ([`SAMPLED_BOX_FS`]): `u_slot`'s location, the storage
/// buffer binding (the context's last, put back after each pass), the entry points.
#[derive(Clone, Copy)]
pub(crate) struct BoxPass {
    pub slot: GLint,
    pub binding: u32,
    pub fns: BoxFns,
}

/// The one-pass programs over a sampled work stencil, and the texture unit they sample on
/// (the context's last, the one a program is least likely to hold a texture on; its binding
/// is put back after each pass anyway).
#[derive(Clone, Copy)]
pub(crate) struct Sampled {
    /// [`SAMPLED_FS`] (or [`SAMPLED_BOX_FS`] with `boxes`): `T/N` from a draw's slot.
    pub weighted: SampledProgram,
    /// Set when the weighted pass also finds the draw's box.
    pub boxes: Option<BoxPass>,
    /// [`SAMPLED_SHARE_FS`]: `T/N` a uniform, at `u_add`'s location.
    pub shared: SampledProgram,
    pub share: GLint,
    /// [`SAMPLED_COUNT_FS`].
    pub count: SampledProgram,
    pub unit: u32,
}

/// Bytes of one slot: the "before" and "after" timestamps and the replay's samples passed,
/// each a `GLuint64`, then padding.
pub(crate) const SLOT_BYTES: usize = 32;

/// Slots of the first buffer; each later one doubles, up to [`MAX_SLOTS`] in a frame.
const FIRST_SLOTS: u32 = 1024;

/// Most slots a frame may use (2 MiB of buffers); later draws are listed unpainted.
pub(crate) const MAX_SLOTS: u32 = 1 << 16;

/// The vertex stage of the weighting passes: our full-screen triangle, and the draw's
/// `T/N` from its slot (64-bit values as pairs of 32-bit words, little-endian).
pub(crate) const WEIGHT_VS: &str = "layout(location = 0) in uvec4 a_times;\n\
layout(location = 1) in uvec2 a_samples;\n\
flat out float v_share;\n\
float wide(uint lo, uint hi) { return float(hi) * 4294967296.0 + float(lo); }\n\
void main() {\n\
  vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);\n\
  uint borrow = a_times.z < a_times.x ? 1u : 0u;\n\
  float t = wide(a_times.z - a_times.x, a_times.w - a_times.y - borrow);\n\
  float n = wide(a_samples.x, a_samples.y);\n\
  v_share = n > 0.0 ? t / n : 0.0;\n\
  gl_Position = vec4(p, 0.0, 1.0);\n\
}\n";

/// The fragment stage: `u_add.x` (the bit's weight) times the share into the heat map,
/// `u_add.y` into the overdraw map.
pub(crate) const WEIGHT_FS: &str = "uniform vec2 u_add;\n\
flat in float v_share;\n\
layout(location = 0) out vec4 o0;\n\
layout(location = 1) out vec4 o1;\n\
void main() {\n\
  o0 = vec4(u_add.x * v_share);\n\
  o1 = vec4(u_add.y);\n\
}\n";

/// A draw's slot: which buffer, which index in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub buffer: usize,
    pub index: u32,
}

impl Slot {
    /// Byte offset of the slot in its buffer.
    pub fn offset(self) -> usize {
        self.index as usize * SLOT_BYTES
    }
}

/// What a slot read back holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotValues {
    /// The draw's time: after − before (ns).
    pub time_ns: u64,
    /// The replay's samples passed: the draw's fragments `N`.
    pub fragments: u64,
    /// The draw's box when the weighting pass found it ([`BoxPass`]); `None` when it did
    /// not look, or the draw covered nothing.
    pub bbox: Option<[u32; 4]>,
}

/// Decodes the slots of one buffer read back (`SLOT_BYTES` each).
pub(crate) fn decode(bytes: &[u8]) -> Vec<SlotValues> {
    bytes
        .chunks_exact(SLOT_BYTES)
        .map(|s| {
            let word = |i: usize| u64::from_le_bytes(s[i * 8..i * 8 + 8].try_into().expect("8"));
            SlotValues {
                time_ns: word(1).wrapping_sub(word(0)),
                fragments: word(2),
                bbox: None,
            }
        })
        .collect()
}

/// The entry points weighting calls, all required: taken from [`ThermalFns`]'s optional ones
/// once, when a painter first weighs a draw.
#[derive(Clone, Copy)]
pub(crate) struct WeightFns {
    pub gen_queries: unsafe extern "system" fn(GLsizei, *mut GLuint),
    pub begin_query: unsafe extern "system" fn(GLenum, GLuint),
    pub end_query: unsafe extern "system" fn(GLenum),
    pub get_query_objectui64v: unsafe extern "system" fn(GLuint, GLenum, *mut u64),
    pub gen_buffers: unsafe extern "system" fn(GLsizei, *mut GLuint),
    pub delete_buffers: unsafe extern "system" fn(GLsizei, *const GLuint),
    pub buffer_data: unsafe extern "system" fn(GLenum, GLsizeiptr, *const c_void, GLenum),
    pub vertex_attrib_i_pointer:
        unsafe extern "system" fn(GLuint, GLint, GLenum, GLsizei, *const c_void),
    pub vertex_attrib_divisor: unsafe extern "system" fn(GLuint, GLuint),
    pub enable_vertex_attrib_array: unsafe extern "system" fn(GLuint),
    /// Skips the weighting pass of a draw whose replay reached no pixel (GL 3.0 has it;
    /// without it every pass runs).
    pub conditional: Option<Conditional>,
}

impl WeightFns {
    /// The weighting entry points of `f`; `Err` naming the first one missing (GL 3.3 with
    /// query buffer objects has them all), so that no draw is listed as painted that the
    /// passes could not paint.
    pub fn of(f: &ThermalFns) -> Result<WeightFns, String> {
        let missing = |name: &str| format!("{name} is missing (the GPU weighting needs it)");
        // The flush reads the slots with it ([`crate::readback`]).
        f.get_buffer_sub_data
            .ok_or_else(|| missing("glGetBufferSubData"))?;
        Ok(WeightFns {
            gen_queries: f.gen_queries_t.ok_or_else(|| missing("glGenQueries"))?,
            begin_query: f.begin_query_t.ok_or_else(|| missing("glBeginQuery"))?,
            end_query: f.end_query_t.ok_or_else(|| missing("glEndQuery"))?,
            get_query_objectui64v: f
                .get_query_objectui64v_t
                .ok_or_else(|| missing("glGetQueryObjectui64v"))?,
            gen_buffers: f.gen_buffers_t.ok_or_else(|| missing("glGenBuffers"))?,
            delete_buffers: f
                .delete_buffers_t
                .ok_or_else(|| missing("glDeleteBuffers"))?,
            buffer_data: f.buffer_data_t.ok_or_else(|| missing("glBufferData"))?,
            vertex_attrib_i_pointer: f
                .vertex_attrib_i_pointer
                .ok_or_else(|| missing("glVertexAttribIPointer"))?,
            vertex_attrib_divisor: f
                .vertex_attrib_divisor
                .ok_or_else(|| missing("glVertexAttribDivisor"))?,
            enable_vertex_attrib_array: f
                .enable_vertex_attrib_array
                .ok_or_else(|| missing("glEnableVertexAttribArray"))?,
            conditional: f
                .begin_conditional_render
                .zip(f.end_conditional_render)
                .map(|(begin, end)| Conditional { begin, end }),
        })
    }
}

/// Conditional rendering on a replay's samples-passed query: a draw whose replay reached no
/// pixel adds nothing, yet its weighting pass covers the whole target. Under `--heat
/// --timing deferred` 221 of neverball's 284 painted draws a frame reached no pixel (llvmpipe,
/// 800x600). The GPU decides (`GL_QUERY_WAIT`) with the count it has already: the slot's copy
/// of that count waited for it, so no wait is added, and none on the CPU.
#[derive(Clone, Copy)]
pub(crate) struct Conditional {
    begin: unsafe extern "system" fn(GLuint, GLenum),
    end: unsafe extern "system" fn(),
}

impl Conditional {
    /// Runs `pass` where the replay counted by `samples` reached a pixel, or wherever the
    /// program's own conditional rendering is active: GL does not nest it, and our begin then
    /// fails with `GL_INVALID_OPERATION`, taken here (the program's condition then rules our
    /// pass, as it ruled the replay). `Err`: an error of ours was pending before the begin
    /// (the pass is not run; the map is wrong anyway).
    ///
    /// # Safety
    /// The context `f` belongs to must be current, inside an [`crate::state::ErrorScope`],
    /// and `samples` a samples-passed query it ended.
    pub unsafe fn run(
        &self,
        f: &ThermalFns,
        samples: GLuint,
        pass: impl FnOnce(),
    ) -> Result<(), GLenum> {
        // SAFETY: our caller's promise.
        unsafe {
            let earlier = (f.get_error)();
            if earlier != NO_ERROR {
                return Err(earlier);
            }
            (self.begin)(samples, QUERY_WAIT);
            let nested = (f.get_error)() != NO_ERROR;
            pass();
            if !nested {
                (self.end)();
            }
            Ok(())
        }
    }
}

/// The weighting program and the frame's slot buffers of one painter.
pub(crate) struct Weights {
    pub fns: WeightFns,
    pub program: GLuint,
    /// `u_add`'s location.
    pub uniform: GLint,
    /// (buffer, slots it holds); a frame fills them in order.
    pub buffers: Vec<(GLuint, u32)>,
    /// Slots used in the last buffer.
    pub used: u32,
    /// One samples-passed query object per slot ever used (index: slots before it).
    pub queries: Vec<GLuint>,
    /// Where the weighting pass finds boxes: one box buffer per slot buffer, the same slots.
    pub boxes: Option<BoxFns>,
    pub box_buffers: Vec<GLuint>,
}

impl Weights {
    /// A painter's weighting state, with nothing allocated yet.
    pub fn new(fns: WeightFns, program: GLuint, uniform: GLint) -> Weights {
        Weights {
            fns,
            program,
            uniform,
            buffers: Vec::new(),
            used: 0,
            queries: Vec::new(),
            boxes: None,
            box_buffers: Vec::new(),
        }
    }

    /// The next free slot and its samples query, growing the buffers (a new one of twice the
    /// last's slots: the earlier ones keep what the GPU writes into them) up to
    /// [`MAX_SLOTS`] in the frame. `Err` when the frame has used them all.
    ///
    /// # Safety
    /// The painter's context must be current and `f` its real functions; the
    /// `GL_ARRAY_BUFFER` binding is changed (the caller saved it).
    pub unsafe fn next(&mut self, f: &ThermalFns) -> Result<(Slot, GLuint), String> {
        let fns = self.fns;
        if self.buffers.last().is_none_or(|&(_, n)| self.used == n) {
            let total: u32 = self.buffers.iter().map(|b| b.1).sum();
            let slots = self.buffers.last().map_or(FIRST_SLOTS, |b| b.1 * 2);
            if total + slots > MAX_SLOTS {
                return Err(format!(
                    "over the {MAX_SLOTS} draws a frame may weigh on the GPU"
                ));
            }
            // A buffer of ours of `bytes`, left bound to `GL_ARRAY_BUFFER`.
            let new_buffer = |bytes: usize| {
                let mut buffer = 0;
                // SAFETY: our caller's promise; `buffer` is ours, just generated.
                unsafe {
                    (fns.gen_buffers)(1, &mut buffer);
                    (f.bind_buffer)(ARRAY_BUFFER, buffer);
                    (fns.buffer_data)(
                        ARRAY_BUFFER,
                        bytes as GLsizeiptr,
                        std::ptr::null(),
                        DYNAMIC_COPY,
                    );
                }
                buffer
            };
            self.buffers
                .push((new_buffer(slots as usize * SLOT_BYTES), slots));
            if let Some(b) = self.boxes {
                let boxes = new_buffer(slots as usize * BOX_BYTES);
                // SAFETY: as above; the box buffer is ours and bound.
                unsafe { b.clear() };
                self.box_buffers.push(boxes);
            }
            self.used = 0;
        }
        let earlier: u32 = self.buffers[..self.buffers.len() - 1]
            .iter()
            .map(|b| b.1)
            .sum();
        let at = (earlier + self.used) as usize;
        while self.queries.len() <= at {
            let mut q = 0;
            // SAFETY: our caller's promise.
            unsafe { (fns.gen_queries)(1, &mut q) };
            if q == 0 {
                return Err("glGenQueries gave no name".into());
            }
            self.queries.push(q);
        }
        let slot = Slot {
            buffer: self.buffers.len() - 1,
            index: self.used,
        };
        self.used += 1;
        Ok((slot, self.queries[at]))
    }

    /// Slots (then boxes) in use in each buffer this frame: every buffer but the last is
    /// full.
    fn used_in(&self, i: usize) -> usize {
        if i + 1 == self.buffers.len() {
            self.used as usize
        } else {
            self.buffers[i].1 as usize
        }
    }

    /// What reading back this frame's slots takes ([`crate::readback`]): each slot buffer's
    /// used slots, then each box buffer's boxes. The boxes' atomics are fenced first.
    ///
    /// # Safety
    /// As [`Weights::next`].
    pub unsafe fn sources(&self) -> Vec<Source> {
        if let Some(b) = self.boxes {
            // SAFETY: our caller's promise (GL 4.3 where `boxes` is set).
            unsafe { (b.memory_barrier)(BUFFER_UPDATE_BARRIER_BIT) };
        }
        let slots = self
            .buffers
            .iter()
            .enumerate()
            .map(|(i, &(name, _))| Source::Buffer {
                name,
                len: self.used_in(i) * SLOT_BYTES,
            });
        let boxes = self
            .box_buffers
            .iter()
            .enumerate()
            .map(|(i, &name)| Source::Buffer {
                name,
                len: self.used_in(i) * BOX_BYTES,
            });
        slots.chain(boxes).collect()
    }

    /// Decodes what [`Weights::sources`] read (`read`, in its order; a failed read gives no
    /// values), empties the boxes again, and starts the next frame with the largest buffer
    /// alone.
    ///
    /// # Safety
    /// As [`Weights::next`].
    pub unsafe fn finish(
        &mut self,
        f: &ThermalFns,
        read: &[Option<&[u8]>],
    ) -> Vec<Vec<SlotValues>> {
        let n = self.buffers.len();
        let mut out: Vec<Vec<SlotValues>> = (0..n)
            .map(|i| read.get(i).copied().flatten().map_or_else(Vec::new, decode))
            .collect();
        if let Some(b) = self.boxes {
            for (i, values) in out.iter_mut().enumerate() {
                let found = read.get(n + i).copied().flatten().unwrap_or_default();
                for (v, bbox) in values.iter_mut().zip(decode_boxes(found)) {
                    v.bbox = bbox;
                }
            }
            for &boxes in &self.box_buffers {
                // SAFETY: our caller's promise; the box buffer is ours, bound here.
                unsafe {
                    (f.bind_buffer)(ARRAY_BUFFER, boxes);
                    b.clear();
                }
            }
        }
        if self.buffers.len() > 1 {
            let keep = self.buffers.pop().expect("a buffer");
            let mut old: Vec<GLuint> = self.buffers.iter().map(|b| b.0).collect();
            let kept_boxes = self.box_buffers.pop();
            old.append(&mut self.box_buffers);
            // SAFETY: our caller's promise; the names are ours.
            unsafe { (self.fns.delete_buffers)(old.len() as GLsizei, old.as_ptr()) };
            self.buffers = vec![keep];
            self.box_buffers = kept_boxes.into_iter().collect();
        }
        self.used = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighting_needs_desktop_gl_with_query_buffers() {
        let none = |_: &str| false;
        let qbo = |e: &str| e == "GL_ARB_query_buffer_object";
        assert!(gpu_weighting(ClientApi::Gl, (4, 6), none));
        assert!(gpu_weighting(ClientApi::Gl, (4, 4), none));
        assert!(!gpu_weighting(ClientApi::Gl, (4, 3), none));
        assert!(gpu_weighting(ClientApi::Gl, (4, 3), qbo));
        assert!(!gpu_weighting(ClientApi::Gl, (3, 2), qbo));
        assert!(!gpu_weighting(ClientApi::Gles, (3, 2), qbo));
    }

    #[test]
    fn the_stencil_is_sampled_with_stencil_textures_and_texture_storage() {
        let none = |_: &str| false;
        assert!(stencil_sampling(ClientApi::Gl, (4, 5), none));
        assert!(stencil_sampling(ClientApi::Gl, (4, 4), none));
        assert!(!stencil_sampling(ClientApi::Gl, (4, 3), none));
        let stencil8 = |e: &str| e == "GL_ARB_texture_stencil8";
        assert!(stencil_sampling(ClientApi::Gl, (4, 3), stencil8));
        assert!(!stencil_sampling(ClientApi::Gl, (3, 3), stencil8));
        let all = |e: &str| {
            [
                "GL_ARB_texture_stencil8",
                "GL_ARB_stencil_texturing",
                "GL_ARB_texture_storage",
            ]
            .contains(&e)
        };
        assert!(stencil_sampling(ClientApi::Gl, (3, 3), all));
        assert!(stencil_sampling(ClientApi::Gles, (3, 2), none));
        let oes = |e: &str| e == "GL_OES_texture_stencil8";
        assert!(stencil_sampling(ClientApi::Gles, (3, 1), oes));
        assert!(!stencil_sampling(ClientApi::Gles, (3, 0), oes));
        assert!(!stencil_sampling(ClientApi::Vulkan, (4, 6), all));
    }

    #[test]
    fn boxes_decode_and_an_untouched_box_is_none() {
        let mut bytes = Vec::new();
        for w in [3u32, 4, 10, 6].into_iter().chain(EMPTY_BOX) {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        assert_eq!(decode_boxes(&bytes), [Some([3, 4, 10, 6]), None]);
        assert!(gpu_boxes(ClientApi::Gl, (4, 3), false));
        assert!(!gpu_boxes(ClientApi::Gl, (4, 6), true));
        assert!(!gpu_boxes(ClientApi::Gl, (4, 2), false));
        assert!(!gpu_boxes(ClientApi::Gles, (3, 2), false));
        let fs = sampled_box_fs(7);
        assert!(fs.contains("binding = 7)") && fs.contains("at(p - ivec2(1, 0)) == 0u"));
    }

    #[test]
    fn slots_decode_to_a_time_and_fragments() {
        let mut bytes = Vec::new();
        for (t0, t1, n) in [(1_000u64, 4_500u64, 640u64), (u64::MAX - 5, 10, 0)] {
            for w in [t0, t1, n, 0] {
                bytes.extend_from_slice(&w.to_le_bytes());
            }
        }
        let v = decode(&bytes);
        assert_eq!(
            v,
            [
                SlotValues {
                    time_ns: 3_500,
                    fragments: 640,
                    bbox: None
                },
                // The counter wrapped between the two timestamps.
                SlotValues {
                    time_ns: 16,
                    fragments: 0,
                    bbox: None
                }
            ]
        );
        assert_eq!(
            Slot {
                buffer: 0,
                index: 3
            }
            .offset(),
            96
        );
    }
}
