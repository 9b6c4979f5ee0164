//! The memory a draw's shaders may write, kept across heat's replay of the draw.
//!
//! Heat runs each draw again with the program's own program: colour writes are off and its
//! framebuffer is ours, but a shader that stores into a storage buffer or adds to an atomic
//! counter (order-independent transparency's fragment lists, GPU picking, counters of what
//! was drawn) would do it a second time, in the program's own buffers. So before the
//! replay, the ranges bound at the binding points the program's storage blocks and atomic
//! counter buffers use are copied aside on the GPU (after a barrier that makes the draw's own
//! writes visible to copies), and copied back after it: the program finds its buffers as its
//! own draw left them. A program with image uniforms is not replayed at all (images are
//! textures of any kind and format; copying them back is not done): its draws are listed
//! unpainted, with the reason.
//!
//! What a program uses is read with the program interface queries (desktop GL 4.3 or
//! `GL_ARB_program_interface_query`, GLES 3.1), once per program and frame, for each stage
//! program of a separable pipeline too. Contexts without them have neither storage blocks nor
//! (but for GL 4.2's extensions, not checked) atomic counters or images.

use std::collections::HashMap;

use gpuheat_session::ClientApi;

use crate::gl::*;
use crate::state::{Piece, Saved};

/// The most bytes copied aside for one draw; a draw whose program writes more is not
/// replayed.
const MOST_BYTES: i64 = 64 << 20;

/// Whether a context has the program interface queries [`Writes`] needs.
pub fn supported(api: ClientApi, (major, minor): (u32, u32), has: impl Fn(&str) -> bool) -> bool {
    match api {
        ClientApi::Gl => (major, minor) >= (4, 3) || has("GL_ARB_program_interface_query"),
        ClientApi::Gles => (major, minor) >= (3, 1),
        _ => false,
    }
}

/// Whether uniform type `ty` is an image (any dimension and sample type).
pub(crate) fn is_image(ty: GLenum) -> bool {
    (IMAGE_1D..=UNSIGNED_INT_IMAGE_2D_MULTISAMPLE_ARRAY).contains(&ty)
}

/// What a program's shaders may write besides their outputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Uses {
    /// The binding points of its storage blocks.
    storage: Vec<GLuint>,
    /// The binding points of its atomic counter buffers.
    atomic: Vec<GLuint>,
    /// It has image uniforms.
    images: bool,
}

/// The functions [`Writes`] calls, all optional members of [`ThermalFns`].
#[derive(Clone, Copy)]
struct WriteFns {
    interface_iv: unsafe extern "system" fn(GLuint, GLenum, GLenum, *mut GLint),
    resource_iv: unsafe extern "system" fn(
        GLuint,
        GLenum,
        GLuint,
        GLsizei,
        *const GLenum,
        GLsizei,
        *mut GLsizei,
        *mut GLint,
    ),
    integeri_v: unsafe extern "system" fn(GLenum, GLuint, *mut GLint),
    integer64i_v: unsafe extern "system" fn(GLenum, GLuint, *mut i64),
    buffer_parameteri64v: unsafe extern "system" fn(GLenum, GLenum, *mut i64),
    memory_barrier: unsafe extern "system" fn(GLenum),
    copy: unsafe extern "system" fn(GLenum, GLenum, GLsizeiptr, GLsizeiptr, GLsizeiptr),
    gen_buffers: unsafe extern "system" fn(GLsizei, *mut GLuint),
    buffer_data: unsafe extern "system" fn(GLenum, GLsizeiptr, *const std::ffi::c_void, GLenum),
    pipeline_iv: Option<unsafe extern "system" fn(GLuint, GLenum, *mut GLint)>,
}

impl WriteFns {
    fn of(f: &ThermalFns) -> Option<WriteFns> {
        Some(WriteFns {
            interface_iv: f.get_program_interfaceiv_t?,
            resource_iv: f.get_program_resourceiv_t?,
            integeri_v: f.get_integeri_v?,
            integer64i_v: f.get_integer64i_v?,
            buffer_parameteri64v: f.get_buffer_parameteri64v?,
            memory_barrier: f.memory_barrier?,
            copy: f.copy_buffer_sub_data?,
            gen_buffers: f.gen_buffers_t?,
            buffer_data: f.buffer_data_t?,
            pipeline_iv: f.get_program_pipelineiv,
        })
    }
}

/// A painter's keeper of what its replays could write: the programs seen this frame and a
/// scratch buffer of ours.
#[derive(Default)]
pub(crate) struct Writes {
    programs: HashMap<GLuint, Uses>,
    scratch: GLuint,
    capacity: i64,
}

/// One buffer range copied aside: (buffer, offset, size, offset in the scratch buffer).
type Range = (GLuint, i64, i64, i64);

/// The ranges a draw's replay could write, copied aside ([`Writes::keep`]); put back by
/// [`Kept::restore`].
pub(crate) struct Kept {
    fns: WriteFns,
    scratch: GLuint,
    ranges: Vec<Range>,
}

/// The copy bindings our copies use, saved and put back.
fn copy_bindings(f: &ThermalFns) -> [Piece; 2] {
    [
        Piece::Binding {
            query: COPY_READ_BUFFER_BINDING,
            target: COPY_READ_BUFFER,
            bind: f.bind_buffer,
        },
        Piece::Binding {
            query: COPY_WRITE_BUFFER_BINDING,
            target: COPY_WRITE_BUFFER,
            bind: f.bind_buffer,
        },
    ]
}

impl Writes {
    /// A new frame: programs may have been relinked since.
    pub(crate) fn frame_ended(&mut self) {
        self.programs.clear();
    }

    /// Before the replay of the draw about to be painted: `Ok(None)` when its programs
    /// write no buffer, `Ok(Some(kept))` with the buffers they may write copied aside,
    /// `Err(why)` when the draw must not be run again.
    ///
    /// # Safety
    /// The context `f` belongs to must be current, with the program interface queries
    /// ([`supported`]), outside `glBegin`/`glEnd`, inside an [`crate::state::ErrorScope`].
    pub(crate) unsafe fn keep(&mut self, f: &ThermalFns) -> Result<Option<Kept>, String> {
        let Some(fns) = WriteFns::of(f) else {
            return Ok(None);
        };
        // SAFETY: our caller's promise; every query below exists where the program
        // interface queries do.
        unsafe {
            let mut uses = Uses::default();
            for program in current_programs(f, fns) {
                let u = self
                    .programs
                    .entry(program)
                    .or_insert_with(|| program_uses(fns, program));
                uses.storage.extend(&u.storage);
                uses.atomic.extend(&u.atomic);
                uses.images |= u.images;
            }
            if uses.images {
                return Err(
                    "its program has image uniforms (a replay could store to the \
                            program's images a second time)"
                        .into(),
                );
            }
            if uses.storage.is_empty() && uses.atomic.is_empty() {
                return Ok(None);
            }
            let _bindings = Saved::take(f, &copy_bindings(f));
            let mut ranges: Vec<Range> = Vec::new();
            let mut total = 0;
            let bound = [
                (
                    &uses.storage,
                    SHADER_STORAGE_BUFFER_BINDING,
                    SHADER_STORAGE_BUFFER_START,
                    SHADER_STORAGE_BUFFER_SIZE,
                ),
                (
                    &uses.atomic,
                    ATOMIC_COUNTER_BUFFER_BINDING,
                    ATOMIC_COUNTER_BUFFER_START,
                    ATOMIC_COUNTER_BUFFER_SIZE,
                ),
            ];
            for (points, binding, start, size) in bound {
                for &point in points {
                    let mut name = 0;
                    (fns.integeri_v)(binding, point, &mut name);
                    if name == 0 {
                        continue;
                    }
                    let (mut offset, mut len) = (0, 0);
                    (fns.integer64i_v)(start, point, &mut offset);
                    (fns.integer64i_v)(size, point, &mut len);
                    if len == 0 {
                        // Bound whole (glBindBufferBase): the buffer's size from its start.
                        (f.bind_buffer)(COPY_READ_BUFFER, name as GLuint);
                        (fns.buffer_parameteri64v)(COPY_READ_BUFFER, BUFFER_SIZE, &mut len);
                        len -= offset;
                    }
                    let range = (name as GLuint, offset, len, total);
                    if len > 0
                        && !ranges
                            .iter()
                            .any(|r| (r.0, r.1, r.2) == (range.0, offset, len))
                    {
                        ranges.push(range);
                        total += len;
                    }
                }
            }
            let ours = crate::state::drain_errors(f);
            if ours != NO_ERROR {
                return Err(format!(
                    "GL error 0x{ours:04X} reading which buffers its program can write"
                ));
            }
            if ranges.is_empty() {
                return Ok(None);
            }
            if total > MOST_BYTES {
                return Err(format!(
                    "its program may write {total} bytes of storage and atomic counter buffers \
                     (a replay keeps at most {MOST_BYTES} aside)"
                ));
            }
            if self.scratch == 0 {
                (fns.gen_buffers)(1, &mut self.scratch);
            }
            (f.bind_buffer)(COPY_WRITE_BUFFER, self.scratch);
            if self.capacity < total {
                let capacity = (total as u64).next_power_of_two() as i64;
                (fns.buffer_data)(
                    COPY_WRITE_BUFFER,
                    capacity as GLsizeiptr,
                    std::ptr::null(),
                    STREAM_COPY,
                );
                self.capacity = capacity;
            }
            // The draw's own shader writes reach what the copies read.
            (fns.memory_barrier)(BUFFER_UPDATE_BARRIER_BIT);
            for &(buffer, offset, len, at) in &ranges {
                (f.bind_buffer)(COPY_READ_BUFFER, buffer);
                (fns.copy)(
                    COPY_READ_BUFFER,
                    COPY_WRITE_BUFFER,
                    offset as _,
                    at as _,
                    len as _,
                );
            }
            Ok(Some(Kept {
                fns,
                scratch: self.scratch,
                ranges,
            }))
        }
    }
}

impl Kept {
    /// After the replay: copies the ranges back, as the program's draw left them.
    ///
    /// # Safety
    /// As [`Writes::keep`], on the same context, its scratch buffer still ours.
    pub(crate) unsafe fn restore(self, f: &ThermalFns) {
        // SAFETY: our caller's promise; every name bound is the program's buffer or ours.
        unsafe {
            let _bindings = Saved::take(f, &copy_bindings(f));
            // The replay's shader writes are done before the copies overwrite them.
            (self.fns.memory_barrier)(BUFFER_UPDATE_BARRIER_BIT);
            (f.bind_buffer)(COPY_READ_BUFFER, self.scratch);
            for (buffer, offset, len, at) in self.ranges {
                (f.bind_buffer)(COPY_WRITE_BUFFER, buffer);
                (self.fns.copy)(
                    COPY_READ_BUFFER,
                    COPY_WRITE_BUFFER,
                    at as _,
                    offset as _,
                    len as _,
                );
            }
        }
    }
}

/// The programs the next draw runs: the current one, or each stage's of a bound separable
/// pipeline.
///
/// # Safety
/// As [`Writes::keep`].
unsafe fn current_programs(f: &ThermalFns, fns: WriteFns) -> Vec<GLuint> {
    // SAFETY: our caller's promise; pipelines exist where program interface queries do.
    unsafe {
        let program = f.integer(CURRENT_PROGRAM) as GLuint;
        if program != 0 {
            return vec![program];
        }
        let pipeline = f.integer(PROGRAM_PIPELINE_BINDING) as GLuint;
        let Some(pipeline_iv) = fns.pipeline_iv.filter(|_| pipeline != 0) else {
            return Vec::new();
        };
        let mut programs = Vec::new();
        for stage in [
            VERTEX_SHADER,
            TESS_CONTROL_SHADER,
            TESS_EVALUATION_SHADER,
            GEOMETRY_SHADER,
            FRAGMENT_SHADER,
        ] {
            let mut p = 0;
            pipeline_iv(pipeline, stage, &mut p);
            if p != 0 && !programs.contains(&(p as GLuint)) {
                programs.push(p as GLuint);
            }
        }
        programs
    }
}

/// What `program`'s shaders may write.
///
/// # Safety
/// As [`Writes::keep`], `program` a linked program.
unsafe fn program_uses(fns: WriteFns, program: GLuint) -> Uses {
    let count = |interface: GLenum| {
        let mut n = 0;
        // SAFETY: our caller's promise.
        unsafe { (fns.interface_iv)(program, interface, ACTIVE_RESOURCES, &mut n) };
        0..n.max(0) as GLuint
    };
    let property = |interface: GLenum, i: GLuint, prop: GLenum| {
        let mut v = 0;
        // SAFETY: our caller's promise; one property into one value.
        unsafe {
            (fns.resource_iv)(
                program,
                interface,
                i,
                1,
                &prop,
                1,
                std::ptr::null_mut(),
                &mut v,
            )
        };
        v
    };
    let points = |interface: GLenum| -> Vec<GLuint> {
        count(interface)
            .map(|i| property(interface, i, BUFFER_BINDING) as GLuint)
            .collect()
    };
    Uses {
        storage: points(SHADER_STORAGE_BLOCK),
        atomic: points(ATOMIC_COUNTER_BUFFER),
        images: count(UNIFORM).any(|i| is_image(property(UNIFORM, i, TYPE) as GLenum)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_interface_queries_are_gl_4_3_or_gles_3_1() {
        let none = |_: &str| false;
        assert!(supported(ClientApi::Gl, (4, 3), none));
        assert!(!supported(ClientApi::Gl, (4, 2), none));
        assert!(supported(ClientApi::Gl, (3, 3), |e| e
            == "GL_ARB_program_interface_query"));
        assert!(supported(ClientApi::Gles, (3, 1), none));
        assert!(!supported(ClientApi::Gles, (3, 0), none));
    }

    #[test]
    fn images_are_every_image_type_and_nothing_else() {
        assert!(is_image(IMAGE_2D));
        assert!(is_image(UNSIGNED_INT_IMAGE_2D_MULTISAMPLE_ARRAY));
        assert!(!is_image(UNSIGNED_INT_ATOMIC_COUNTER));
        assert!(!is_image(SAMPLER_2D));
    }
}
