//! The real GL entry points this crate calls, and the enums it uses.
//!
//! The crate never calls through the program's symbols (they are hooked): [`GlFns::load`]
//! takes the real function pointers from a loader the agent supplies (the real
//! `eglGetProcAddress` / `glXGetProcAddressARB`). Those loaders return context-independent
//! dispatch stubs, so one [`GlFns`] serves every context of the process; which of the core and
//! `EXT` variants may be called in a given context is decided per context by
//! [`crate::ContextCounters`].
//!
//! `glGetError` is deliberately absent: calling it would consume the program's error flags.

use std::ffi::{c_void, CStr};

/// `GLenum`.
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

/// `GL_VENDOR`.
pub const VENDOR: GLenum = 0x1F00;
/// `GL_RENDERER`.
pub const RENDERER: GLenum = 0x1F01;
/// `GL_VERSION`.
pub const VERSION: GLenum = 0x1F02;
/// `GL_EXTENSIONS`.
pub const EXTENSIONS: GLenum = 0x1F03;
/// `GL_NUM_EXTENSIONS`.
pub const NUM_EXTENSIONS: GLenum = 0x821D;

/// `GL_SAMPLES_PASSED`.
pub const SAMPLES_PASSED: GLenum = 0x8914;
/// `GL_ANY_SAMPLES_PASSED`.
pub const ANY_SAMPLES_PASSED: GLenum = 0x8C2F;
/// `GL_ANY_SAMPLES_PASSED_CONSERVATIVE`.
pub const ANY_SAMPLES_PASSED_CONSERVATIVE: GLenum = 0x8D6A;
/// `GL_TIME_ELAPSED`.
pub const TIME_ELAPSED: GLenum = 0x88BF;
/// `GL_TIMESTAMP`.
pub const TIMESTAMP: GLenum = 0x8E28;
/// `GL_QUERY_COUNTER_BITS`.
pub const QUERY_COUNTER_BITS: GLenum = 0x8864;
/// `GL_CURRENT_QUERY`.
pub const CURRENT_QUERY: GLenum = 0x8865;
/// `GL_QUERY_RESULT`.
pub const QUERY_RESULT: GLenum = 0x8866;
/// `GL_QUERY_RESULT_AVAILABLE`.
pub const QUERY_RESULT_AVAILABLE: GLenum = 0x8867;
/// `GL_GPU_DISJOINT_EXT`.
pub const GPU_DISJOINT_EXT: GLenum = 0x8FBB;
/// `GL_QUERY_BUFFER`.
pub const QUERY_BUFFER: GLenum = 0x9192;
/// `GL_QUERY_BUFFER_BINDING`.
pub const QUERY_BUFFER_BINDING: GLenum = 0x9193;

/// `GL_VERTICES_SUBMITTED`.
pub const VERTICES_SUBMITTED: GLenum = 0x82EE;
/// `GL_PRIMITIVES_SUBMITTED`.
pub const PRIMITIVES_SUBMITTED: GLenum = 0x82EF;
/// `GL_VERTEX_SHADER_INVOCATIONS`.
pub const VERTEX_SHADER_INVOCATIONS: GLenum = 0x82F0;
/// `GL_TESS_CONTROL_SHADER_PATCHES`.
pub const TESS_CONTROL_SHADER_PATCHES: GLenum = 0x82F1;
/// `GL_TESS_EVALUATION_SHADER_INVOCATIONS`.
pub const TESS_EVALUATION_SHADER_INVOCATIONS: GLenum = 0x82F2;
/// `GL_GEOMETRY_SHADER_INVOCATIONS`.
pub const GEOMETRY_SHADER_INVOCATIONS: GLenum = 0x887F;
/// `GL_GEOMETRY_SHADER_PRIMITIVES_EMITTED`.
pub const GEOMETRY_SHADER_PRIMITIVES_EMITTED: GLenum = 0x82F3;
/// `GL_FRAGMENT_SHADER_INVOCATIONS`.
pub const FRAGMENT_SHADER_INVOCATIONS: GLenum = 0x82F4;
/// `GL_COMPUTE_SHADER_INVOCATIONS`.
pub const COMPUTE_SHADER_INVOCATIONS: GLenum = 0x82F5;
/// `GL_CLIPPING_INPUT_PRIMITIVES`.
pub const CLIPPING_INPUT_PRIMITIVES: GLenum = 0x82F6;
/// `GL_CLIPPING_OUTPUT_PRIMITIVES`.
pub const CLIPPING_OUTPUT_PRIMITIVES: GLenum = 0x82F7;

/// `glGetString`.
pub type GetStringFn = unsafe extern "system" fn(GLenum) -> *const GLubyte;
/// `glGetStringi`.
pub type GetStringiFn = unsafe extern "system" fn(GLenum, GLuint) -> *const GLubyte;
/// `glGetIntegerv`.
pub type GetIntegervFn = unsafe extern "system" fn(GLenum, *mut GLint);
/// `glFinish`.
pub type FinishFn = unsafe extern "system" fn();
/// `glGenQueries` / `glDeleteQueries` (and their `EXT` variants).
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
/// `glBindBuffer`.
pub type BindBufferFn = unsafe extern "system" fn(GLenum, GLuint);

/// The real GL functions gpuheat's counters call. Required ones are plain function pointers;
/// the rest are `None` when the loader did not know them. A non-null pointer does not mean the
/// current context supports the function (loaders hand out stubs for any name):
/// [`crate::ContextCounters::new`] checks versions and extensions before using any of them.
#[derive(Debug, Clone, Copy)]
pub struct GlFns {
    /// `glGetString` (required).
    pub get_string: GetStringFn,
    /// `glGetIntegerv` (required).
    pub get_integerv: GetIntegervFn,
    /// `glFinish` (required).
    pub finish: FinishFn,
    /// `glGetStringi` (GL 3.0 / GLES 3.0).
    pub get_stringi: Option<GetStringiFn>,
    /// `glGenQueries` (GL 1.5 / GLES 3.0).
    pub gen_queries: Option<GenQueriesFn>,
    /// `glDeleteQueries`.
    pub delete_queries: Option<DeleteQueriesFn>,
    /// `glBeginQuery`.
    pub begin_query: Option<BeginQueryFn>,
    /// `glEndQuery`.
    pub end_query: Option<EndQueryFn>,
    /// `glGetQueryiv`.
    pub get_queryiv: Option<GetQueryivFn>,
    /// `glGetQueryObjectuiv`.
    pub get_query_objectuiv: Option<GetQueryObjectuivFn>,
    /// `glGetQueryObjectui64v` (GL 3.3 / GL_ARB_timer_query).
    pub get_query_objectui64v: Option<GetQueryObjectui64vFn>,
    /// `glQueryCounter` (GL 3.3 / GL_ARB_timer_query).
    pub query_counter: Option<QueryCounterFn>,
    /// `glGenQueriesEXT` (GLES 2 with GL_EXT_disjoint_timer_query or occlusion_query_boolean).
    pub gen_queries_ext: Option<GenQueriesFn>,
    /// `glDeleteQueriesEXT`.
    pub delete_queries_ext: Option<DeleteQueriesFn>,
    /// `glBeginQueryEXT`.
    pub begin_query_ext: Option<BeginQueryFn>,
    /// `glEndQueryEXT`.
    pub end_query_ext: Option<EndQueryFn>,
    /// `glGetQueryivEXT`.
    pub get_queryiv_ext: Option<GetQueryivFn>,
    /// `glGetQueryObjectuivEXT`.
    pub get_query_objectuiv_ext: Option<GetQueryObjectuivFn>,
    /// `glGetQueryObjectui64vEXT` (GL_EXT_disjoint_timer_query, GL_EXT_timer_query).
    pub get_query_objectui64v_ext: Option<GetQueryObjectui64vFn>,
    /// `glQueryCounterEXT` (GL_EXT_disjoint_timer_query).
    pub query_counter_ext: Option<QueryCounterFn>,
    /// `glBindBuffer` (to unbind `GL_QUERY_BUFFER` around read-backs and restore it).
    pub bind_buffer: Option<BindBufferFn>,
}

impl GlFns {
    /// Loads the functions through `loader` (the real `eglGetProcAddress` or
    /// `glXGetProcAddressARB`, or `dlsym` on the real library). Fails when one of the required
    /// functions (`glGetString`, `glGetIntegerv`, `glFinish`) is missing.
    ///
    /// # Safety
    /// `loader` must return, for each name, either null or a pointer to the GL function of
    /// that name with its C signature.
    pub unsafe fn load(mut loader: impl FnMut(&CStr) -> *const c_void) -> Result<GlFns, String> {
        macro_rules! opt {
            ($name:literal, $ty:ty) => {{
                let p = loader($name);
                if p.is_null() {
                    None
                } else {
                    // SAFETY: the caller promises `p` is this function with this signature.
                    Some(unsafe { std::mem::transmute::<*const c_void, $ty>(p) })
                }
            }};
        }
        macro_rules! req {
            ($name:literal, $ty:ty) => {
                opt!($name, $ty).ok_or_else(|| {
                    format!("the GL loader does not know {}", $name.to_string_lossy())
                })?
            };
        }
        Ok(GlFns {
            get_string: req!(c"glGetString", GetStringFn),
            get_integerv: req!(c"glGetIntegerv", GetIntegervFn),
            finish: req!(c"glFinish", FinishFn),
            get_stringi: opt!(c"glGetStringi", GetStringiFn),
            gen_queries: opt!(c"glGenQueries", GenQueriesFn),
            delete_queries: opt!(c"glDeleteQueries", DeleteQueriesFn),
            begin_query: opt!(c"glBeginQuery", BeginQueryFn),
            end_query: opt!(c"glEndQuery", EndQueryFn),
            get_queryiv: opt!(c"glGetQueryiv", GetQueryivFn),
            get_query_objectuiv: opt!(c"glGetQueryObjectuiv", GetQueryObjectuivFn),
            get_query_objectui64v: opt!(c"glGetQueryObjectui64v", GetQueryObjectui64vFn),
            query_counter: opt!(c"glQueryCounter", QueryCounterFn),
            gen_queries_ext: opt!(c"glGenQueriesEXT", GenQueriesFn),
            delete_queries_ext: opt!(c"glDeleteQueriesEXT", DeleteQueriesFn),
            begin_query_ext: opt!(c"glBeginQueryEXT", BeginQueryFn),
            end_query_ext: opt!(c"glEndQueryEXT", EndQueryFn),
            get_queryiv_ext: opt!(c"glGetQueryivEXT", GetQueryivFn),
            get_query_objectuiv_ext: opt!(c"glGetQueryObjectuivEXT", GetQueryObjectuivFn),
            get_query_objectui64v_ext: opt!(c"glGetQueryObjectui64vEXT", GetQueryObjectui64vFn),
            query_counter_ext: opt!(c"glQueryCounterEXT", QueryCounterFn),
            bind_buffer: opt!(c"glBindBuffer", BindBufferFn),
        })
    }

    /// `glGetString(name)` as an owned string ("" when null).
    ///
    /// # Safety
    /// A GL context must be current on this thread.
    pub unsafe fn string(&self, name: GLenum) -> String {
        cstr_to_string(unsafe { (self.get_string)(name) })
    }

    /// `glGetIntegerv(pname)` for a single-valued `pname`.
    ///
    /// # Safety
    /// A GL context must be current and `pname` valid in it (else a GL error is left behind).
    pub unsafe fn integer(&self, pname: GLenum) -> GLint {
        // Room for a few values in case a driver writes more than one.
        let mut v = [0 as GLint; 4];
        unsafe { (self.get_integerv)(pname, v.as_mut_ptr()) };
        v[0]
    }
}

pub(crate) fn cstr_to_string(p: *const GLubyte) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: GL strings are NUL-terminated and live as long as the context.
    unsafe { CStr::from_ptr(p.cast()) }
        .to_string_lossy()
        .into_owned()
}

/// Declares a struct of real GL function pointers and its loader: `required` functions are
/// plain pointers (loading fails naming the first one the loader does not know), `optional`
/// ones are `Option`s. A non-null pointer does not mean the current context supports the
/// function: callers check versions and extensions before calling.
macro_rules! real_fns {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $field:ident : $cname:literal = fn($($arg:ty),*) $(-> $ret:ty)? ; )*
        }
        optional {
            $( $(#[$ometa:meta])* $ofield:ident : $ocname:literal = fn($($oarg:ty),*) $(-> $oret:ty)? ; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        #[allow(missing_docs)]
        pub struct $name {
            $( pub $field: unsafe extern "system" fn($($arg),*) $(-> $ret)?, )*
            $( $(#[$ometa])* pub $ofield: Option<unsafe extern "system" fn($($oarg),*) $(-> $oret)?>, )*
        }

        impl $name {
            /// Loads the functions through `loader`; fails naming the first required one
            /// missing.
            ///
            /// # Safety
            /// `loader` must return, for each name, null or the GL function of that name.
            pub unsafe fn load(
                mut loader: impl FnMut(&std::ffi::CStr) -> *const std::ffi::c_void,
            ) -> Result<$name, String> {
                Ok($name {
                    $( $field: {
                        let p = loader($cname);
                        if p.is_null() {
                            return Err(format!(
                                "the GL loader does not know {}",
                                $cname.to_string_lossy()
                            ));
                        }
                        // SAFETY: the caller promises `p` is this function.
                        unsafe {
                            std::mem::transmute::<
                                *const std::ffi::c_void,
                                unsafe extern "system" fn($($arg),*) $(-> $ret)?,
                            >(p)
                        }
                    }, )*
                    $( $ofield: {
                        let p = loader($ocname);
                        // SAFETY: as above.
                        (!p.is_null()).then(|| unsafe {
                            std::mem::transmute::<
                                *const std::ffi::c_void,
                                unsafe extern "system" fn($($oarg),*) $(-> $oret)?,
                            >(p)
                        })
                    }, )*
                })
            }
        }
    };
}
pub(crate) use real_fns;

/// `GLfloat`.
pub type GLfloat = f32;
/// `GLboolean`.
pub type GLboolean = u8;
/// `GLintptr` / `GLsizeiptr`.
pub type GLsizeiptr = isize;

real_fns! {
    /// The real GL functions geometry capture calls beyond [`crate::ThermalFns`]: shader and
    /// program introspection, uniform copies, transform feedback, buffers and queries.
    pub struct GeometryFns {
        is_program: c"glIsProgram" = fn(GLuint) -> GLboolean;
        delete_program: c"glDeleteProgram" = fn(GLuint);
        get_attached_shaders: c"glGetAttachedShaders" = fn(GLuint, GLsizei, *mut GLsizei, *mut GLuint);
        get_shader_source: c"glGetShaderSource" = fn(GLuint, GLsizei, *mut GLsizei, *mut std::ffi::c_char);
        get_program_info_log: c"glGetProgramInfoLog" = fn(GLuint, GLsizei, *mut GLsizei, *mut std::ffi::c_char);
        get_shader_info_log: c"glGetShaderInfoLog" = fn(GLuint, GLsizei, *mut GLsizei, *mut std::ffi::c_char);
        get_active_attrib: c"glGetActiveAttrib" = fn(GLuint, GLuint, GLsizei, *mut GLsizei, *mut GLint, *mut GLenum, *mut std::ffi::c_char);
        get_attrib_location: c"glGetAttribLocation" = fn(GLuint, *const std::ffi::c_char) -> GLint;
        bind_attrib_location: c"glBindAttribLocation" = fn(GLuint, GLuint, *const std::ffi::c_char);
        transform_feedback_varyings: c"glTransformFeedbackVaryings" = fn(GLuint, GLsizei, *const *const std::ffi::c_char, GLenum);
        get_active_uniform: c"glGetActiveUniform" = fn(GLuint, GLuint, GLsizei, *mut GLsizei, *mut GLint, *mut GLenum, *mut std::ffi::c_char);
        get_active_uniformsiv: c"glGetActiveUniformsiv" = fn(GLuint, GLsizei, *const GLuint, GLenum, *mut GLint);
        get_uniformfv: c"glGetUniformfv" = fn(GLuint, GLint, *mut GLfloat);
        get_uniformiv: c"glGetUniformiv" = fn(GLuint, GLint, *mut GLint);
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
        get_active_uniform_block_name: c"glGetActiveUniformBlockName" = fn(GLuint, GLuint, GLsizei, *mut GLsizei, *mut std::ffi::c_char);
        get_uniform_block_index: c"glGetUniformBlockIndex" = fn(GLuint, *const std::ffi::c_char) -> GLuint;
        uniform_block_binding: c"glUniformBlockBinding" = fn(GLuint, GLuint, GLuint);
        gen_transform_feedbacks: c"glGenTransformFeedbacks" = fn(GLsizei, *mut GLuint);
        bind_transform_feedback: c"glBindTransformFeedback" = fn(GLenum, GLuint);
        begin_transform_feedback: c"glBeginTransformFeedback" = fn(GLenum);
        end_transform_feedback: c"glEndTransformFeedback" = fn();
        gen_buffers: c"glGenBuffers" = fn(GLsizei, *mut GLuint);
        buffer_data: c"glBufferData" = fn(GLenum, GLsizeiptr, *const std::ffi::c_void, GLenum);
        bind_buffer_range: c"glBindBufferRange" = fn(GLenum, GLuint, GLuint, GLsizeiptr, GLsizeiptr);
        map_buffer_range: c"glMapBufferRange" = fn(GLenum, GLsizeiptr, GLsizeiptr, u32) -> *mut std::ffi::c_void;
        unmap_buffer: c"glUnmapBuffer" = fn(GLenum) -> GLboolean;
        gen_queries: c"glGenQueries" = fn(GLsizei, *mut GLuint);
        begin_query: c"glBeginQuery" = fn(GLenum, GLuint);
        end_query: c"glEndQuery" = fn(GLenum);
        get_query_objectuiv: c"glGetQueryObjectuiv" = fn(GLuint, GLenum, *mut GLuint);
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
