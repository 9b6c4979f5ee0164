//! The crate's one table of real GL entry points ([`GlFns`]), its loader, the GL types and
//! the constants (generated from the Khronos registry by `build.rs`).
//!
//! The crate never calls through the program's symbols (they are hooked): [`GlFns::load`]
//! takes the real function pointers from a loader the agent supplies (the real
//! `eglGetProcAddress` / `glXGetProcAddressARB`, or `dlsym` on the real library). Those
//! loaders return context-independent dispatch stubs, so one table, loaded once, serves every
//! context of the process; which entry points may be called in a given context is decided per
//! context (by [`crate::ContextCounters`], [`crate::thermal::support`] and
//! [`crate::geometry::support`]).
//!
//! The table has three tiers, each entry point declared once: what the counters need
//! ([`GlFns`]'s own fields: three required, the query functions optional), and two groups
//! that load all-or-nothing, so a missing entry point disables one feature with its name as
//! the reason: [`ThermalFns`] (state queries and setters, framebuffers, our own program: heat
//! painting, and the save/restore of `state.rs`) and [`GeometryFns`] (program
//! introspection, uniforms, transform feedback). A group copies the few entry points it
//! shares with the tier below instead of declaring them again.
//!
//! `glGetError` is loaded only into [`ThermalFns`], whose users take the program's pending
//! error first and raise it again afterwards (`state.rs`); the counters
//! never call it (it would consume the program's error flags).

use std::ffi::{c_char, c_void, CStr};

/// `GLenum` (also `GLbitfield`).
pub type GLenum = u32;
/// `GLuint`.
pub type GLuint = u32;
/// `GLint`.
pub type GLint = i32;
/// `GLsizei`.
pub type GLsizei = i32;
/// `GLubyte`.
pub type GLubyte = u8;
/// `GLuint64`.
pub type GLuint64 = u64;
/// `GLfloat`.
pub type GLfloat = f32;
/// `GLboolean`.
pub type GLboolean = u8;
/// `GLintptr` / `GLsizeiptr`.
pub type GLsizeiptr = isize;

/// The `GL_*` constants the crate uses, generated from the Khronos registry (`build.rs`).
mod enums {
    use super::GLenum;
    include!(concat!(env!("OUT_DIR"), "/enums.rs"));
}
pub use enums::*;

/// `glGetString`.
pub type GetStringFn = unsafe extern "system" fn(GLenum) -> *const GLubyte;
/// `glGetStringi`.
pub type GetStringiFn = unsafe extern "system" fn(GLenum, GLuint) -> *const GLubyte;
/// `glGetIntegerv`.
pub type GetIntegervFn = unsafe extern "system" fn(GLenum, *mut GLint);
/// `glFinish`.
pub type FinishFn = unsafe extern "system" fn();
/// `glGenQueries` (and `EXT`).
pub type GenQueriesFn = unsafe extern "system" fn(GLsizei, *mut GLuint);
/// `glDeleteQueries` (and `EXT`).
pub type DeleteQueriesFn = unsafe extern "system" fn(GLsizei, *const GLuint);
/// `glBeginQuery` (and `EXT`).
pub type BeginQueryFn = unsafe extern "system" fn(GLenum, GLuint);
/// `glEndQuery` (and `EXT`).
pub type EndQueryFn = unsafe extern "system" fn(GLenum);
/// `glGetQueryiv` (and `EXT`).
pub type GetQueryivFn = unsafe extern "system" fn(GLenum, GLenum, *mut GLint);
/// `glGetQueryObjectuiv` (and `EXT`).
pub type GetQueryObjectuivFn = unsafe extern "system" fn(GLuint, GLenum, *mut GLuint);
/// `glGetQueryObjectui64v` (and `EXT`).
pub type GetQueryObjectui64vFn = unsafe extern "system" fn(GLuint, GLenum, *mut GLuint64);
/// `glQueryCounter` (and `EXT`).
pub type QueryCounterFn = unsafe extern "system" fn(GLuint, GLenum);
/// `GLsync`: a fence object's handle.
pub type GLsync = *const c_void;
/// `glFenceSync`.
pub type FenceSyncFn = unsafe extern "system" fn(GLenum, GLenum) -> GLsync;
/// `glClientWaitSync` (flags are a `GLbitfield`).
pub type ClientWaitSyncFn = unsafe extern "system" fn(GLsync, GLenum, GLuint64) -> GLenum;
/// `glDeleteSync`.
pub type DeleteSyncFn = unsafe extern "system" fn(GLsync);
/// `glBindBuffer`, and every `glBindX(target, name)` of the same shape (framebuffers,
/// renderbuffers, transform feedback objects).
pub type BindFn = unsafe extern "system" fn(GLenum, GLuint);

/// Why a required entry point is missing.
fn unknown(name: &CStr) -> String {
    format!("the GL loader does not know {}", name.to_string_lossy())
}

/// One entry point through `$loader`: `None` when it returns null.
macro_rules! entry {
    ($loader:ident, $cname:literal, $ty:ty) => {{
        let p: *const c_void = $loader($cname);
        // SAFETY: `load`'s caller promises the loader returns null or the function named
        // `$cname` with its C signature, which `$ty` spells (a function pointer of the same
        // size as `p`).
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*const c_void, $ty>(p) })
    }};
}

/// Declares a group of [`GlFns`]: a struct of entry points that loads all or nothing.
/// `base` entries are copied from [`GlFns`]'s required ones, `shared` ones from its optional
/// ones (missing there fails the group), `required` and `optional` ones are loaded here.
macro_rules! gl_group {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            base { $( $bfield:ident : $bty:ty ; )* }
            shared { $( $sfield:ident : $sty:ty = $scname:literal ; )* }
            required {
                $( $field:ident : $cname:literal = fn($($arg:ty),*) $(-> $ret:ty)? ; )*
            }
            optional {
                $( $(#[$ometa:meta])* $ofield:ident : $ocname:literal
                    = fn($($oarg:ty),*) $(-> $oret:ty)? ; )*
            }
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        #[allow(missing_docs)] // Each field is the GL function its loader names.
        pub struct $name {
            $( pub $bfield: $bty, )*
            $( pub $sfield: $sty, )*
            $( pub $field: unsafe extern "system" fn($($arg),*) $(-> $ret)?, )*
            $( $(#[$ometa])* pub $ofield: Option<unsafe extern "system" fn($($oarg),*) $(-> $oret)?>, )*
        }

        impl $name {
            /// Loads the group (after `base`'s own entry points) through `loader`; fails
            /// naming the first required entry point missing.
            ///
            /// # Safety
            /// As [`GlFns::load`].
            unsafe fn load(
                base: &GlFns,
                loader: &mut impl FnMut(&CStr) -> *const c_void,
            ) -> Result<$name, String> {
                // A group may take nothing from the table.
                let _ = base;
                Ok($name {
                    $( $bfield: base.$bfield, )*
                    $( $sfield: base.$sfield.ok_or_else(|| unknown($scname))?, )*
                    $( $field: entry!(loader, $cname, unsafe extern "system" fn($($arg),*) $(-> $ret)?)
                        .ok_or_else(|| unknown($cname))?, )*
                    $( $ofield: entry!(loader, $ocname, unsafe extern "system" fn($($oarg),*) $(-> $oret)?), )*
                })
            }
        }
    };
}

/// Declares [`GlFns`]: required and optional entry points, and the groups loaded after them.
macro_rules! gl_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            required { $( $(#[$rmeta:meta])* $field:ident : $cname:literal = $ty:ty ; )* }
            optional { $( $(#[$ometa:meta])* $ofield:ident : $ocname:literal = $oty:ty ; )* }
            groups { $( $(#[$gmeta:meta])* $gfield:ident : $gty:ident ; )* }
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $name {
            $( $(#[$rmeta])* pub $field: $ty, )*
            $( $(#[$ometa])* pub $ofield: Option<$oty>, )*
            $( $(#[$gmeta])* pub $gfield: Result<$gty, String>, )*
        }

        impl $name {
            /// Loads every entry point through `loader` (the real `eglGetProcAddress` or
            /// `glXGetProcAddressARB`, or `dlsym` on the real library), once for the process.
            /// Fails when one of the table's own required entry points is missing; a group
            /// with one missing holds the reason instead.
            ///
            /// # Safety
            /// `loader` must return, for each name, either null or a pointer to the GL
            /// function of that name with its C signature.
            pub unsafe fn load(
                mut loader: impl FnMut(&CStr) -> *const c_void,
            ) -> Result<$name, String> {
                let mut table = $name {
                    $( $field: entry!(loader, $cname, $ty).ok_or_else(|| unknown($cname))?, )*
                    $( $ofield: entry!(loader, $ocname, $oty), )*
                    $( $gfield: Err(String::new()), )*
                };
                $(
                    // SAFETY: the loader is the one our caller vouched for.
                    table.$gfield = unsafe { $gty::load(&table, &mut loader) };
                )*
                Ok(table)
            }
        }
    };
}

gl_table! {
    /// The real GL functions gpuheat calls, loaded once per process. The counters' required
    /// ones are plain function pointers; the rest are `None` when the loader did not know
    /// them, and each group is `Err` naming the first of its functions the loader did not
    /// know. A non-null pointer does not mean the current context supports the function
    /// (loaders hand out stubs for any name): callers check versions and extensions first.
    pub struct GlFns {
        required {
            /// `glGetString`.
            get_string: c"glGetString" = GetStringFn;
            /// `glGetIntegerv`.
            get_integerv: c"glGetIntegerv" = GetIntegervFn;
            /// `glFinish`.
            finish: c"glFinish" = FinishFn;
        }
        optional {
            /// `glGetStringi` (GL 3.0 / GLES 3.0).
            get_stringi: c"glGetStringi" = GetStringiFn;
            /// `glGenQueries` (GL 1.5 / GLES 3.0).
            gen_queries: c"glGenQueries" = GenQueriesFn;
            /// `glDeleteQueries`.
            delete_queries: c"glDeleteQueries" = DeleteQueriesFn;
            /// `glBeginQuery`.
            begin_query: c"glBeginQuery" = BeginQueryFn;
            /// `glEndQuery`.
            end_query: c"glEndQuery" = EndQueryFn;
            /// `glGetQueryiv`.
            get_queryiv: c"glGetQueryiv" = GetQueryivFn;
            /// `glGetQueryObjectuiv`.
            get_query_objectuiv: c"glGetQueryObjectuiv" = GetQueryObjectuivFn;
            /// `glGetQueryObjectui64v` (GL 3.3 / GL_ARB_timer_query).
            get_query_objectui64v: c"glGetQueryObjectui64v" = GetQueryObjectui64vFn;
            /// `glQueryCounter` (GL 3.3 / GL_ARB_timer_query).
            query_counter: c"glQueryCounter" = QueryCounterFn;
            /// `glGenQueriesEXT` (GLES 2 with GL_EXT_disjoint_timer_query or
            /// occlusion_query_boolean).
            gen_queries_ext: c"glGenQueriesEXT" = GenQueriesFn;
            /// `glDeleteQueriesEXT`.
            delete_queries_ext: c"glDeleteQueriesEXT" = DeleteQueriesFn;
            /// `glBeginQueryEXT`.
            begin_query_ext: c"glBeginQueryEXT" = BeginQueryFn;
            /// `glEndQueryEXT`.
            end_query_ext: c"glEndQueryEXT" = EndQueryFn;
            /// `glGetQueryivEXT`.
            get_queryiv_ext: c"glGetQueryivEXT" = GetQueryivFn;
            /// `glGetQueryObjectuivEXT`.
            get_query_objectuiv_ext: c"glGetQueryObjectuivEXT" = GetQueryObjectuivFn;
            /// `glGetQueryObjectui64vEXT` (GL_EXT_disjoint_timer_query, GL_EXT_timer_query).
            get_query_objectui64v_ext: c"glGetQueryObjectui64vEXT" = GetQueryObjectui64vFn;
            /// `glQueryCounterEXT` (GL_EXT_disjoint_timer_query).
            query_counter_ext: c"glQueryCounterEXT" = QueryCounterFn;
            /// `glBindBuffer` (to unbind `GL_QUERY_BUFFER` around read-backs and restore it).
            bind_buffer: c"glBindBuffer" = BindFn;
            /// `glFenceSync` (GL 3.2 / GLES 3.0): the bounded wait of [`crate::backlog`].
            fence_sync: c"glFenceSync" = FenceSyncFn;
            /// `glClientWaitSync`.
            client_wait_sync: c"glClientWaitSync" = ClientWaitSyncFn;
            /// `glDeleteSync`.
            delete_sync: c"glDeleteSync" = DeleteSyncFn;
        }
        groups {
            /// Heat painting and state save/restore (`Err`: why there is none).
            thermal: ThermalFns;
            /// Geometry capture, beyond [`ThermalFns`] (`Err`: why there is none).
            geometry: GeometryFns;
            /// GL 1.x immediate mode recorded as it runs, to run it again
            /// ([`crate::immediate`]; `Err`: why there is none).
            lists: ListFns;
            /// The matrix and attribute stacks a display list's replay saves and restores
            /// ([`crate::list_run`]; `Err`: why there are none).
            matrices: MatrixFns;
        }
    }
}

gl_group! {
    /// The real GL functions heat painting and the save/restore of `state.rs` call:
    /// errors, capabilities, state queries and setters, framebuffers and renderbuffers, and
    /// the shader and program calls that build our own programs.
    pub struct ThermalFns {
        base {
            get_integerv: GetIntegervFn;
        }
        shared {
            bind_buffer: BindFn = c"glBindBuffer";
        }
        required {
            get_error: c"glGetError" = fn() -> GLenum;
            enable: c"glEnable" = fn(GLenum);
            disable: c"glDisable" = fn(GLenum);
            is_enabled: c"glIsEnabled" = fn(GLenum) -> GLboolean;
            bind_framebuffer: c"glBindFramebuffer" = fn(GLenum, GLuint);
            gen_framebuffers: c"glGenFramebuffers" = fn(GLsizei, *mut GLuint);
            delete_framebuffers: c"glDeleteFramebuffers" = fn(GLsizei, *const GLuint);
            framebuffer_renderbuffer: c"glFramebufferRenderbuffer" = fn(GLenum, GLenum, GLenum, GLuint);
            check_framebuffer_status: c"glCheckFramebufferStatus" = fn(GLenum) -> GLenum;
            gen_renderbuffers: c"glGenRenderbuffers" = fn(GLsizei, *mut GLuint);
            delete_renderbuffers: c"glDeleteRenderbuffers" = fn(GLsizei, *const GLuint);
            bind_renderbuffer: c"glBindRenderbuffer" = fn(GLenum, GLuint);
            renderbuffer_storage: c"glRenderbufferStorage" = fn(GLenum, GLenum, GLsizei, GLsizei);
            clear_bufferiv: c"glClearBufferiv" = fn(GLenum, GLint, *const GLint);
            clear_bufferfv: c"glClearBufferfv" = fn(GLenum, GLint, *const GLfloat);
            stencil_func_separate: c"glStencilFuncSeparate" = fn(GLenum, GLenum, GLint, GLuint);
            stencil_op_separate: c"glStencilOpSeparate" = fn(GLenum, GLenum, GLenum, GLenum);
            stencil_mask_separate: c"glStencilMaskSeparate" = fn(GLenum, GLuint);
            color_mask: c"glColorMask" = fn(GLboolean, GLboolean, GLboolean, GLboolean);
            blend_func_separate: c"glBlendFuncSeparate" = fn(GLenum, GLenum, GLenum, GLenum);
            blend_equation_separate: c"glBlendEquationSeparate" = fn(GLenum, GLenum);
            use_program: c"glUseProgram" = fn(GLuint);
            create_shader: c"glCreateShader" = fn(GLenum) -> GLuint;
            shader_source: c"glShaderSource" = fn(GLuint, GLsizei, *const *const c_char, *const GLint);
            compile_shader: c"glCompileShader" = fn(GLuint);
            attach_shader: c"glAttachShader" = fn(GLuint, GLuint);
            delete_shader: c"glDeleteShader" = fn(GLuint);
            create_program: c"glCreateProgram" = fn() -> GLuint;
            link_program: c"glLinkProgram" = fn(GLuint);
            get_programiv: c"glGetProgramiv" = fn(GLuint, GLenum, *mut GLint);
            get_shaderiv: c"glGetShaderiv" = fn(GLuint, GLenum, *mut GLint);
            get_uniform_location: c"glGetUniformLocation" = fn(GLuint, *const c_char) -> GLint;
            uniform2f: c"glUniform2f" = fn(GLint, GLfloat, GLfloat);
            gen_vertex_arrays: c"glGenVertexArrays" = fn(GLsizei, *mut GLuint);
            bind_vertex_array: c"glBindVertexArray" = fn(GLuint);
            draw_arrays: c"glDrawArrays" = fn(GLenum, GLint, GLsizei);
            viewport: c"glViewport" = fn(GLint, GLint, GLsizei, GLsizei);
            scissor: c"glScissor" = fn(GLint, GLint, GLsizei, GLsizei);
            read_pixels: c"glReadPixels" = fn(GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, *mut c_void);
            read_buffer: c"glReadBuffer" = fn(GLenum);
            draw_buffers: c"glDrawBuffers" = fn(GLsizei, *const GLenum);
            pixel_storei: c"glPixelStorei" = fn(GLenum, GLint);
            get_active_uniform: c"glGetActiveUniform" = fn(GLuint, GLuint, GLsizei, *mut GLsizei, *mut GLint, *mut GLenum, *mut c_char);
            get_uniformiv: c"glGetUniformiv" = fn(GLuint, GLint, *mut GLint);
            active_texture: c"glActiveTexture" = fn(GLenum);
            bind_texture: c"glBindTexture" = fn(GLenum, GLuint);
            get_framebuffer_attachment_parameteriv: c"glGetFramebufferAttachmentParameteriv" = fn(GLenum, GLenum, GLenum, *mut GLint);
            get_renderbuffer_parameteriv: c"glGetRenderbufferParameteriv" = fn(GLenum, GLenum, *mut GLint);
        }
        optional {
            /// `glPolygonMode` (desktop GL only).
            polygon_mode: c"glPolygonMode" = fn(GLenum, GLenum);
            /// `glGetTexLevelParameteriv` (GL, GLES 3.1): an offscreen target's size.
            get_tex_level_parameteriv: c"glGetTexLevelParameteriv" = fn(GLenum, GLint, GLenum, *mut GLint);
            /// `glGetTextureParameteriv` (GL 4.5): the kind (`GL_TEXTURE_TARGET`) of a texture
            /// a direct-state-access copy names.
            get_texture_parameteriv: c"glGetTextureParameteriv" = fn(GLuint, GLenum, *mut GLint);
            /// `glGetIntegeri_v` (GL 3.0, GLES 3.0): the image units a compute dispatch
            /// stores to.
            get_integeri_v: c"glGetIntegeri_v" = fn(GLenum, GLuint, *mut GLint);
            /// Heat weighted on the GPU (desktop GL with query buffer objects,
            /// [`crate::thermal::gpu_weighting`]): the replay's samples-passed query, the
            /// results written into our buffer, read as our vertex array's attributes.
            gen_queries_t: c"glGenQueries" = fn(GLsizei, *mut GLuint);
            /// `glBeginQuery`.
            begin_query_t: c"glBeginQuery" = fn(GLenum, GLuint);
            /// `glEndQuery`.
            end_query_t: c"glEndQuery" = fn(GLenum);
            /// `glGetQueryObjectui64v` (into the bound `GL_QUERY_BUFFER`).
            get_query_objectui64v_t: c"glGetQueryObjectui64v" = fn(GLuint, GLenum, *mut u64);
            /// `glQueryCounter` (GL 3.3): the painter's own GPU time (its `own_gpu` stamps).
            query_counter_t: c"glQueryCounter" = fn(GLuint, GLenum);
            /// `glGetQueryiv`: the timestamp counter's width.
            get_queryiv_t: c"glGetQueryiv" = fn(GLenum, GLenum, *mut GLint);
            /// `glGenBuffers`.
            gen_buffers_t: c"glGenBuffers" = fn(GLsizei, *mut GLuint);
            /// `glDeleteBuffers`.
            delete_buffers_t: c"glDeleteBuffers" = fn(GLsizei, *const GLuint);
            /// `glBufferData`.
            buffer_data_t: c"glBufferData" = fn(GLenum, GLsizeiptr, *const c_void, GLenum);
            /// `glGetBufferSubData` (desktop GL).
            get_buffer_sub_data: c"glGetBufferSubData" = fn(GLenum, GLsizeiptr, GLsizeiptr, *mut c_void);
            /// `glMapBufferRange` (GL 3.0, GLES 3.0): GLES's fetch of the flush's one read
            /// ([`crate::readback`]), having no `glGetBufferSubData`.
            map_buffer_range_t: c"glMapBufferRange" = fn(GLenum, GLsizeiptr, GLsizeiptr, GLenum) -> *mut c_void;
            /// `glUnmapBuffer`.
            unmap_buffer_t: c"glUnmapBuffer" = fn(GLenum) -> GLboolean;
            /// `glVertexAttribIPointer`.
            vertex_attrib_i_pointer: c"glVertexAttribIPointer" = fn(GLuint, GLint, GLenum, GLsizei, *const c_void);
            /// `glVertexAttribDivisor` (GL 3.3).
            vertex_attrib_divisor: c"glVertexAttribDivisor" = fn(GLuint, GLuint);
            /// `glEnableVertexAttribArray`.
            enable_vertex_attrib_array: c"glEnableVertexAttribArray" = fn(GLuint);
            /// The work stencil as a texture, sampled by the GPU weighting's one pass
            /// ([`crate::weights::stencil_sampling`]): `glGenTextures`.
            gen_textures: c"glGenTextures" = fn(GLsizei, *mut GLuint);
            /// `glDeleteTextures`.
            delete_textures: c"glDeleteTextures" = fn(GLsizei, *const GLuint);
            /// `glTexStorage2D` (GL 4.2, GLES 3.0).
            tex_storage_2d: c"glTexStorage2D" = fn(GLenum, GLsizei, GLenum, GLsizei, GLsizei);
            /// `glTexParameteri`.
            tex_parameteri: c"glTexParameteri" = fn(GLenum, GLenum, GLint);
            /// `glFramebufferTexture2D`.
            framebuffer_texture_2d: c"glFramebufferTexture2D" = fn(GLenum, GLenum, GLenum, GLuint, GLint);
            /// `glBindSampler` (GL 3.3): a sampler object of the program's on our unit would
            /// override the texture's filters.
            bind_sampler: c"glBindSampler" = fn(GLuint, GLuint);
            /// `glUniform1i`: our pass's sampler unit.
            uniform1i: c"glUniform1i" = fn(GLint, GLint);
            /// Each deferred draw's box found on the GPU ([`crate::weights::BoxFns`], GL 4.3):
            /// `glBindBufferBase`.
            bind_buffer_base: c"glBindBufferBase" = fn(GLenum, GLuint, GLuint);
            /// `glBindBufferRange`: a range binding of the program's put back.
            bind_buffer_range: c"glBindBufferRange" = fn(GLenum, GLuint, GLuint, GLsizeiptr, GLsizeiptr);
            /// `glGetInteger64i_v`: that range's start and size.
            get_integer64i_v: c"glGetInteger64i_v" = fn(GLenum, GLuint, *mut i64);
            /// `glClearBufferData`: the boxes start empty, on the GPU.
            clear_buffer_data: c"glClearBufferData" = fn(GLenum, GLenum, GLenum, GLenum, *const c_void);
            /// `glMemoryBarrier`: the pass's atomics are seen by the read of the boxes.
            memory_barrier: c"glMemoryBarrier" = fn(GLenum);
            /// `glUniform1ui`: the draw's box among them.
            uniform1ui: c"glUniform1ui" = fn(GLint, GLuint);
            /// `glCopyBufferSubData` (GL 3.1): the slots copied into the flush's one read
            /// ([`crate::readback`]).
            copy_buffer_sub_data: c"glCopyBufferSubData" = fn(GLenum, GLenum, GLsizeiptr, GLsizeiptr, GLsizeiptr);
            /// `glBeginConditionalRender` (GL 3.0): a draw weighted on the GPU whose replay
            /// reached no pixel skips its weighting pass.
            begin_conditional_render: c"glBeginConditionalRender" = fn(GLuint, GLenum);
            /// `glEndConditionalRender`.
            end_conditional_render: c"glEndConditionalRender" = fn();
            /// What a replayed draw's programs could write ([`crate::writes`], GL 4.3 / GLES
            /// 3.1): `glGetProgramInterfaceiv`.
            get_program_interfaceiv_t: c"glGetProgramInterfaceiv" = fn(GLuint, GLenum, GLenum, *mut GLint);
            /// `glGetProgramResourceiv`.
            get_program_resourceiv_t: c"glGetProgramResourceiv" = fn(GLuint, GLenum, GLuint, GLsizei, *const GLenum, GLsizei, *mut GLsizei, *mut GLint);
            /// `glGetBufferParameteri64v` (GL 3.2, GLES 3.0): a whole-bound buffer's size.
            get_buffer_parameteri64v: c"glGetBufferParameteri64v" = fn(GLenum, GLenum, *mut i64);
            /// `glGetProgramPipelineiv` (GL 4.1, GLES 3.1): a separable pipeline's programs.
            get_program_pipelineiv: c"glGetProgramPipelineiv" = fn(GLuint, GLenum, *mut GLint);
            /// The tally of GLES draws timed deferred ([`crate::tally`]): `glBufferSubData`,
            /// which empties it at a frame's first draw.
            buffer_sub_data_t: c"glBufferSubData" = fn(GLenum, GLsizeiptr, GLsizeiptr, *const c_void);
            /// `glGetQueryObjectui64vEXT` (`GL_EXT_disjoint_timer_query`): the tallied draws'
            /// timestamps, read at the flush.
            get_query_objectui64v_ext_t: c"glGetQueryObjectui64vEXT" = fn(GLuint, GLenum, *mut u64);
            /// `glGetQueryivEXT`: the timestamp counter's width.
            get_queryiv_ext_t: c"glGetQueryivEXT" = fn(GLenum, GLenum, *mut GLint);
        }
    }
}

gl_group! {
    /// The real GL functions geometry capture calls beyond [`ThermalFns`]: shader and program
    /// introspection, uniform copies, transform feedback, buffers and queries.
    pub struct GeometryFns {
        base {}
        shared {
            gen_queries: GenQueriesFn = c"glGenQueries";
            begin_query: BeginQueryFn = c"glBeginQuery";
            end_query: EndQueryFn = c"glEndQuery";
            get_query_objectuiv: GetQueryObjectuivFn = c"glGetQueryObjectuiv";
        }
        required {
            is_program: c"glIsProgram" = fn(GLuint) -> GLboolean;
            delete_program: c"glDeleteProgram" = fn(GLuint);
            get_attached_shaders: c"glGetAttachedShaders" = fn(GLuint, GLsizei, *mut GLsizei, *mut GLuint);
            get_shader_source: c"glGetShaderSource" = fn(GLuint, GLsizei, *mut GLsizei, *mut c_char);
            get_program_info_log: c"glGetProgramInfoLog" = fn(GLuint, GLsizei, *mut GLsizei, *mut c_char);
            get_shader_info_log: c"glGetShaderInfoLog" = fn(GLuint, GLsizei, *mut GLsizei, *mut c_char);
            get_active_attrib: c"glGetActiveAttrib" = fn(GLuint, GLuint, GLsizei, *mut GLsizei, *mut GLint, *mut GLenum, *mut c_char);
            get_attrib_location: c"glGetAttribLocation" = fn(GLuint, *const c_char) -> GLint;
            bind_attrib_location: c"glBindAttribLocation" = fn(GLuint, GLuint, *const c_char);
            transform_feedback_varyings: c"glTransformFeedbackVaryings" = fn(GLuint, GLsizei, *const *const c_char, GLenum);
            get_active_uniformsiv: c"glGetActiveUniformsiv" = fn(GLuint, GLsizei, *const GLuint, GLenum, *mut GLint);
            get_uniformfv: c"glGetUniformfv" = fn(GLuint, GLint, *mut GLfloat);
            get_uniformuiv: c"glGetUniformuiv" = fn(GLuint, GLint, *mut GLuint);
            uniform1fv: c"glUniform1fv" = fn(GLint, GLsizei, *const GLfloat);
            uniform2fv: c"glUniform2fv" = fn(GLint, GLsizei, *const GLfloat);
            uniform3fv: c"glUniform3fv" = fn(GLint, GLsizei, *const GLfloat);
            uniform4fv: c"glUniform4fv" = fn(GLint, GLsizei, *const GLfloat);
            uniform1iv: c"glUniform1iv" = fn(GLint, GLsizei, *const GLint);
            uniform2iv: c"glUniform2iv" = fn(GLint, GLsizei, *const GLint);
            uniform3iv: c"glUniform3iv" = fn(GLint, GLsizei, *const GLint);
            uniform4iv: c"glUniform4iv" = fn(GLint, GLsizei, *const GLint);
            uniform1uiv: c"glUniform1uiv" = fn(GLint, GLsizei, *const GLuint);
            uniform2uiv: c"glUniform2uiv" = fn(GLint, GLsizei, *const GLuint);
            uniform3uiv: c"glUniform3uiv" = fn(GLint, GLsizei, *const GLuint);
            uniform4uiv: c"glUniform4uiv" = fn(GLint, GLsizei, *const GLuint);
            uniform_matrix2fv: c"glUniformMatrix2fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix3fv: c"glUniformMatrix3fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix4fv: c"glUniformMatrix4fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix2x3fv: c"glUniformMatrix2x3fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix3x2fv: c"glUniformMatrix3x2fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix2x4fv: c"glUniformMatrix2x4fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix4x2fv: c"glUniformMatrix4x2fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix3x4fv: c"glUniformMatrix3x4fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            uniform_matrix4x3fv: c"glUniformMatrix4x3fv" = fn(GLint, GLsizei, GLboolean, *const GLfloat);
            get_active_uniform_blockiv: c"glGetActiveUniformBlockiv" = fn(GLuint, GLuint, GLenum, *mut GLint);
            get_active_uniform_block_name: c"glGetActiveUniformBlockName" = fn(GLuint, GLuint, GLsizei, *mut GLsizei, *mut c_char);
            get_uniform_block_index: c"glGetUniformBlockIndex" = fn(GLuint, *const c_char) -> GLuint;
            uniform_block_binding: c"glUniformBlockBinding" = fn(GLuint, GLuint, GLuint);
            gen_transform_feedbacks: c"glGenTransformFeedbacks" = fn(GLsizei, *mut GLuint);
            bind_transform_feedback: c"glBindTransformFeedback" = fn(GLenum, GLuint);
            begin_transform_feedback: c"glBeginTransformFeedback" = fn(GLenum);
            end_transform_feedback: c"glEndTransformFeedback" = fn();
            gen_buffers: c"glGenBuffers" = fn(GLsizei, *mut GLuint);
            buffer_data: c"glBufferData" = fn(GLenum, GLsizeiptr, *const c_void, GLenum);
            buffer_sub_data: c"glBufferSubData" = fn(GLenum, GLsizeiptr, GLsizeiptr, *const c_void);
            bind_buffer_range: c"glBindBufferRange" = fn(GLenum, GLuint, GLuint, GLsizeiptr, GLsizeiptr);
            map_buffer_range: c"glMapBufferRange" = fn(GLenum, GLsizeiptr, GLsizeiptr, GLenum) -> *mut c_void;
            unmap_buffer: c"glUnmapBuffer" = fn(GLenum) -> GLboolean;
        }
        optional {
            /// `glGetProgramResourceiv` (GL 4.3 / GLES 3.1): which stages use a resource.
            get_program_resourceiv: c"glGetProgramResourceiv" = fn(GLuint, GLenum, GLuint, GLsizei, *const GLenum, GLsizei, *mut GLsizei, *mut GLint);
            /// `glGetProgramInterfaceiv` (GL 4.3 / GLES 3.1).
            get_program_interfaceiv: c"glGetProgramInterfaceiv" = fn(GLuint, GLenum, GLenum, *mut GLint);
            /// `glGetProgramStageiv` (GL 4.0): subroutine uniforms.
            get_program_stageiv: c"glGetProgramStageiv" = fn(GLuint, GLenum, GLenum, *mut GLint);
        }
    }
}

gl_group! {
    /// The display-list functions that record a `glBegin`…`glEnd` block as it runs and run it
    /// again ([`crate::immediate`]); compatibility contexts only.
    pub struct ListFns {
        base {}
        shared {}
        required {
            gen_lists: c"glGenLists" = fn(GLsizei) -> GLuint;
            new_list: c"glNewList" = fn(GLuint, GLenum);
            end_list: c"glEndList" = fn();
            call_list: c"glCallList" = fn(GLuint);
            delete_lists: c"glDeleteLists" = fn(GLuint, GLsizei);
        }
        optional {}
    }
}

gl_group! {
    /// The matrix and attribute stacks of a compatibility context, which a display list run
    /// again by heat or geometry must leave as the program's call left them, and start from
    /// where the program's call started ([`crate::list_run`]).
    pub struct MatrixFns {
        base {}
        shared {}
        required {
            matrix_mode: c"glMatrixMode" = fn(GLenum);
            push_matrix: c"glPushMatrix" = fn();
            pop_matrix: c"glPopMatrix" = fn();
            load_matrixf: c"glLoadMatrixf" = fn(*const GLfloat);
            get_floatv: c"glGetFloatv" = fn(GLenum, *mut GLfloat);
            push_attrib: c"glPushAttrib" = fn(GLenum);
            pop_attrib: c"glPopAttrib" = fn();
        }
        optional {}
    }
}

impl GlFns {
    /// `glGetString(name)` as an owned string ("" when null).
    ///
    /// # Safety
    /// A GL context must be current on this thread.
    pub unsafe fn string(&self, name: GLenum) -> String {
        // SAFETY: a context is current (our caller's promise); `name` is any GLenum.
        cstr_to_string(unsafe { (self.get_string)(name) })
    }

    /// `glGetIntegerv(pname)` for a single-valued `pname`.
    ///
    /// # Safety
    /// A GL context must be current and `pname` valid in it (else a GL error is left behind).
    pub unsafe fn integer(&self, pname: GLenum) -> GLint {
        // SAFETY: as `integer` below: our caller's promise.
        unsafe { integer(self.get_integerv, pname) }
    }
}

/// `glGetIntegerv(pname)` through `get`, for a single-valued `pname`.
///
/// # Safety
/// A GL context must be current, `get` its real `glGetIntegerv` and `pname` valid in it.
pub(crate) unsafe fn integer(get: GetIntegervFn, pname: GLenum) -> GLint {
    // Room for a few values in case a driver writes more than one.
    let mut v = [0 as GLint; 4];
    // SAFETY: `v` has room for the value (and a few more); the rest is our caller's promise.
    unsafe { get(pname, v.as_mut_ptr()) };
    v[0]
}

/// `glGetIntegerv(pname)` through `get`, for a four-valued `pname` (viewport, masks).
///
/// # Safety
/// As [`integer`].
pub(crate) unsafe fn integers4(get: GetIntegervFn, pname: GLenum) -> [GLint; 4] {
    let mut v = [0 as GLint; 16];
    // SAFETY: `v` has room for the four values (and more); the rest is our caller's promise.
    unsafe { get(pname, v.as_mut_ptr()) };
    [v[0], v[1], v[2], v[3]]
}

/// Copies a GL string ("" when null).
pub(crate) fn cstr_to_string(p: *const GLubyte) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: GL strings are NUL-terminated and live as long as the context.
    unsafe { CStr::from_ptr(p.cast()) }
        .to_string_lossy()
        .into_owned()
}
