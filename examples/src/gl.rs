//! Hand-written raw FFI for the EGL and GL entry points the examples use.
//!
//! Every function here is an `extern "C"` import resolved by the dynamic linker from
//! `libEGL.so.1` / `libGLESv2.so.2` (libglvnd). That is deliberate: gpuheat's launch mode
//! interposes these symbols with `LD_PRELOAD`, and its attach mode hooks them in place, so
//! the examples must never call through `eglGetProcAddress` pointers. The one exception
//! is `eglGetPlatformDisplayEXT` (an extension entry point that libEGL does not export),
//! which [`crate::gfx::Gfx::new`] looks up with [`eglGetProcAddress`].
//!
//! glvnd's `libGLESv2` dispatches every `gl*` symbol to whatever context is current, so
//! the same imports drive both the GLES 3.2 and the desktop GL 4.5 core context. Only
//! functions that exist in GLES 3.2 are declared (desktop-only ones such as
//! `glQueryCounter` are not exported by `libGLESv2`).
//!
//! On x86_64 rustc emits these calls through the GOT (`call *sym@GOTPCREL(%rip)`, i.e.
//! "no-plt" with full RELRO) rather than through PLT stubs; the GOT entries are bound by
//! symbol lookup, so `LD_PRELOAD` interposition works the same.

// The Khronos names and types document themselves (the registry and the EGL/GL specs say
// what each one is), so the imports carry no doc comments of their own.
#![allow(
    missing_docs,
    non_snake_case,
    non_camel_case_types,
    clippy::missing_safety_doc
)]

use std::os::raw::{c_char, c_float, c_int, c_uchar, c_uint, c_void};

// ---------------------------------------------------------------------------------------
// EGL types and constants
// ---------------------------------------------------------------------------------------

pub type EGLBoolean = c_uint;
pub type EGLint = i32;
pub type EGLenum = c_uint;
pub type EGLDisplay = *mut c_void;
pub type EGLConfig = *mut c_void;
pub type EGLSurface = *mut c_void;
pub type EGLContext = *mut c_void;
pub type EGLNativeDisplayType = *mut c_void;

pub const EGL_FALSE: EGLBoolean = 0;
pub const EGL_TRUE: EGLBoolean = 1;
pub const EGL_DEFAULT_DISPLAY: EGLNativeDisplayType = std::ptr::null_mut();
pub const EGL_NO_DISPLAY: EGLDisplay = std::ptr::null_mut();
pub const EGL_NO_CONTEXT: EGLContext = std::ptr::null_mut();
pub const EGL_NO_SURFACE: EGLSurface = std::ptr::null_mut();

pub const EGL_SUCCESS: EGLint = 0x3000;
pub const EGL_ALPHA_SIZE: EGLint = 0x3021;
pub const EGL_BLUE_SIZE: EGLint = 0x3022;
pub const EGL_GREEN_SIZE: EGLint = 0x3023;
pub const EGL_RED_SIZE: EGLint = 0x3024;
pub const EGL_DEPTH_SIZE: EGLint = 0x3025;
pub const EGL_STENCIL_SIZE: EGLint = 0x3026;
pub const EGL_CONFIG_ID: EGLint = 0x3028;
pub const EGL_SAMPLES: EGLint = 0x3031;
pub const EGL_SURFACE_TYPE: EGLint = 0x3033;
pub const EGL_NONE: EGLint = 0x3038;
pub const EGL_RENDERABLE_TYPE: EGLint = 0x3040;
pub const EGL_VENDOR: EGLint = 0x3053;
pub const EGL_VERSION: EGLint = 0x3054;
pub const EGL_EXTENSIONS: EGLint = 0x3055;
pub const EGL_HEIGHT: EGLint = 0x3056;
pub const EGL_WIDTH: EGLint = 0x3057;
pub const EGL_PBUFFER_BIT: EGLint = 0x0001;
pub const EGL_OPENGL_ES2_BIT: EGLint = 0x0004;
pub const EGL_OPENGL_BIT: EGLint = 0x0008;
pub const EGL_OPENGL_ES3_BIT: EGLint = 0x0040;
pub const EGL_OPENGL_ES_API: EGLenum = 0x30A0;
pub const EGL_OPENGL_API: EGLenum = 0x30A2;
pub const EGL_CONTEXT_MAJOR_VERSION: EGLint = 0x3098;
pub const EGL_CONTEXT_MINOR_VERSION: EGLint = 0x30FB;
pub const EGL_CONTEXT_OPENGL_PROFILE_MASK: EGLint = 0x30FD;
pub const EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT: EGLint = 0x0001;
pub const EGL_PLATFORM_SURFACELESS_MESA: EGLenum = 0x31DD;

/// `eglGetPlatformDisplayEXT`, obtained through [`eglGetProcAddress`].
pub type PFNEGLGETPLATFORMDISPLAYEXTPROC = unsafe extern "C" fn(
    platform: EGLenum,
    native_display: *mut c_void,
    attrib_list: *const EGLint,
) -> EGLDisplay;

#[link(name = "EGL")]
extern "C" {
    pub fn eglGetError() -> EGLint;
    pub fn eglGetProcAddress(procname: *const c_char) -> *mut c_void;
    pub fn eglQueryString(dpy: EGLDisplay, name: EGLint) -> *const c_char;
    pub fn eglInitialize(dpy: EGLDisplay, major: *mut EGLint, minor: *mut EGLint) -> EGLBoolean;
    pub fn eglTerminate(dpy: EGLDisplay) -> EGLBoolean;
    pub fn eglChooseConfig(
        dpy: EGLDisplay,
        attrib_list: *const EGLint,
        configs: *mut EGLConfig,
        config_size: EGLint,
        num_config: *mut EGLint,
    ) -> EGLBoolean;
    pub fn eglGetConfigAttrib(
        dpy: EGLDisplay,
        config: EGLConfig,
        attribute: EGLint,
        value: *mut EGLint,
    ) -> EGLBoolean;
    pub fn eglBindAPI(api: EGLenum) -> EGLBoolean;
    pub fn eglQueryAPI() -> EGLenum;
    pub fn eglCreatePbufferSurface(
        dpy: EGLDisplay,
        config: EGLConfig,
        attrib_list: *const EGLint,
    ) -> EGLSurface;
    pub fn eglDestroySurface(dpy: EGLDisplay, surface: EGLSurface) -> EGLBoolean;
    pub fn eglCreateContext(
        dpy: EGLDisplay,
        config: EGLConfig,
        share_context: EGLContext,
        attrib_list: *const EGLint,
    ) -> EGLContext;
    pub fn eglDestroyContext(dpy: EGLDisplay, ctx: EGLContext) -> EGLBoolean;
    pub fn eglMakeCurrent(
        dpy: EGLDisplay,
        draw: EGLSurface,
        read: EGLSurface,
        ctx: EGLContext,
    ) -> EGLBoolean;
    pub fn eglGetCurrentContext() -> EGLContext;
    pub fn eglSwapBuffers(dpy: EGLDisplay, surface: EGLSurface) -> EGLBoolean;
    pub fn eglSwapInterval(dpy: EGLDisplay, interval: EGLint) -> EGLBoolean;
}

// ---------------------------------------------------------------------------------------
// GL types and constants
// ---------------------------------------------------------------------------------------

pub type GLenum = c_uint;
pub type GLboolean = c_uchar;
pub type GLbitfield = c_uint;
pub type GLint = c_int;
pub type GLuint = c_uint;
pub type GLsizei = c_int;
pub type GLfloat = c_float;
pub type GLchar = c_char;
pub type GLubyte = c_uchar;
pub type GLint64 = i64;
pub type GLuint64 = u64;
pub type GLsizeiptr = isize;
pub type GLintptr = isize;

pub const GL_FALSE: GLboolean = 0;
pub const GL_TRUE: GLboolean = 1;
pub const GL_NO_ERROR: GLenum = 0;

pub const GL_DEPTH_BUFFER_BIT: GLbitfield = 0x0000_0100;
pub const GL_STENCIL_BUFFER_BIT: GLbitfield = 0x0000_0400;
pub const GL_COLOR_BUFFER_BIT: GLbitfield = 0x0000_4000;

pub const GL_POINTS: GLenum = 0x0000;
pub const GL_LINES: GLenum = 0x0001;
pub const GL_TRIANGLES: GLenum = 0x0004;
pub const GL_TRIANGLE_STRIP: GLenum = 0x0005;

pub const GL_ZERO: GLenum = 0;
pub const GL_ONE: GLenum = 1;
pub const GL_SRC_ALPHA: GLenum = 0x0302;
pub const GL_ONE_MINUS_SRC_ALPHA: GLenum = 0x0303;

pub const GL_CULL_FACE: GLenum = 0x0B44;
pub const GL_DEPTH_TEST: GLenum = 0x0B71;
pub const GL_STENCIL_TEST: GLenum = 0x0B90;
pub const GL_BLEND: GLenum = 0x0BE2;
pub const GL_SCISSOR_TEST: GLenum = 0x0C11;
pub const GL_DITHER: GLenum = 0x0BD0;

pub const GL_VIEWPORT: GLenum = 0x0BA2;
pub const GL_PACK_ALIGNMENT: GLenum = 0x0D05;
pub const GL_UNPACK_ALIGNMENT: GLenum = 0x0CF5;
pub const GL_MAX_TEXTURE_SIZE: GLenum = 0x0D33;
pub const GL_CURRENT_PROGRAM: GLenum = 0x8B8D;
pub const GL_VERTEX_ARRAY_BINDING: GLenum = 0x85B5;
pub const GL_MAJOR_VERSION: GLenum = 0x821B;
pub const GL_MINOR_VERSION: GLenum = 0x821C;

pub const GL_VENDOR: GLenum = 0x1F00;
pub const GL_RENDERER: GLenum = 0x1F01;
pub const GL_VERSION: GLenum = 0x1F02;
pub const GL_EXTENSIONS: GLenum = 0x1F03;
pub const GL_SHADING_LANGUAGE_VERSION: GLenum = 0x8B8C;

pub const GL_UNSIGNED_BYTE: GLenum = 0x1401;
pub const GL_FLOAT: GLenum = 0x1406;
pub const GL_RGBA: GLenum = 0x1908;

pub const GL_ARRAY_BUFFER: GLenum = 0x8892;
pub const GL_STATIC_DRAW: GLenum = 0x88E4;

pub const GL_FRAGMENT_SHADER: GLenum = 0x8B30;
pub const GL_VERTEX_SHADER: GLenum = 0x8B31;
pub const GL_COMPUTE_SHADER: GLenum = 0x91B9;
pub const GL_RGBA16F: GLenum = 0x881A;
pub const GL_RG8: GLenum = 0x822B;
pub const GL_R8: GLenum = 0x8229;
pub const GL_RGB10_A2: GLenum = 0x8059;
pub const GL_SRGB8_ALPHA8: GLenum = 0x8C43;
pub const GL_RGBA8UI: GLenum = 0x8D7C;
pub const GL_WRITE_ONLY: GLenum = 0x88B9;
pub const GL_TEXTURE_FETCH_BARRIER_BIT: GLbitfield = 0x0000_0008;
pub const GL_BUFFER_UPDATE_BARRIER_BIT: GLbitfield = 0x0000_0200;
pub const GL_SHADER_STORAGE_BUFFER: GLenum = 0x90D2;
pub const GL_ATOMIC_COUNTER_BUFFER: GLenum = 0x92C0;
pub const GL_DYNAMIC_DRAW: GLenum = 0x88E8;
pub const GL_MAP_READ_BIT: GLbitfield = 0x0001;
pub const GL_R32UI: GLenum = 0x8236;
pub const GL_COMPILE_STATUS: GLenum = 0x8B81;
pub const GL_LINK_STATUS: GLenum = 0x8B82;
pub const GL_INFO_LOG_LENGTH: GLenum = 0x8B84;

/// Occlusion query targets. `GL_SAMPLES_PASSED` is desktop GL only; GLES has only the
/// boolean `GL_ANY_SAMPLES_PASSED*` targets.
pub const GL_SAMPLES_PASSED: GLenum = 0x8914;
pub const GL_ANY_SAMPLES_PASSED: GLenum = 0x8C2F;
pub const GL_ANY_SAMPLES_PASSED_CONSERVATIVE: GLenum = 0x8D6A;
pub const GL_TIME_ELAPSED: GLenum = 0x88BF;
pub const GL_QUERY_RESULT: GLenum = 0x8866;
pub const GL_QUERY_RESULT_AVAILABLE: GLenum = 0x8867;

pub const GL_TEXTURE_2D: GLenum = 0x0DE1;
pub const GL_TEXTURE0: GLenum = 0x84C0;
pub const GL_TEXTURE_MAG_FILTER: GLenum = 0x2800;
pub const GL_TEXTURE_MIN_FILTER: GLenum = 0x2801;
pub const GL_TEXTURE_WRAP_S: GLenum = 0x2802;
pub const GL_TEXTURE_WRAP_T: GLenum = 0x2803;
pub const GL_NEAREST: GLint = 0x2600;
pub const GL_LINEAR: GLint = 0x2601;
pub const GL_CLAMP_TO_EDGE: GLint = 0x812F;
pub const GL_RGBA8: GLint = 0x8058;

pub const GL_FRAMEBUFFER: GLenum = 0x8D40;
pub const GL_COLOR_ATTACHMENT0: GLenum = 0x8CE0;
pub const GL_FRAMEBUFFER_COMPLETE: GLenum = 0x8CD5;

pub const GL_READ_FRAMEBUFFER: GLenum = 0x8CA8;
pub const GL_DRAW_FRAMEBUFFER: GLenum = 0x8CA9;
pub const GL_RENDERBUFFER: GLenum = 0x8D41;
pub const GL_DEPTH_ATTACHMENT: GLenum = 0x8D00;
pub const GL_DEPTH_COMPONENT24: GLenum = 0x81A6;
pub const GL_MAX_SAMPLES: GLenum = 0x8D57;
pub const GL_SAMPLES: GLenum = 0x80A9;

pub const GL_LESS: GLenum = 0x0201;
pub const GL_LEQUAL: GLenum = 0x0203;

pub const GL_ELEMENT_ARRAY_BUFFER: GLenum = 0x8893;
pub const GL_COPY_WRITE_BUFFER: GLenum = 0x8F37;
pub const GL_STREAM_DRAW: GLenum = 0x88E0;
pub const GL_UNSIGNED_SHORT: GLenum = 0x1403;

pub const GL_LINEAR_MIPMAP_LINEAR: GLint = 0x2703;
pub const GL_TEXTURE_MAX_LEVEL: GLenum = 0x813D;
pub const GL_NUM_COMPRESSED_TEXTURE_FORMATS: GLenum = 0x86A2;
pub const GL_COMPRESSED_TEXTURE_FORMATS: GLenum = 0x86A3;
/// ETC2 RGB8, 8 bytes per 4x4 block; core in GLES 3.0 and GL 4.3.
pub const GL_COMPRESSED_RGB8_ETC2: GLenum = 0x9274;

#[link(name = "GLESv2")]
extern "C" {
    pub fn glGetError() -> GLenum;
    pub fn glGetString(name: GLenum) -> *const GLubyte;
    pub fn glGetIntegerv(pname: GLenum, data: *mut GLint);
    pub fn glFinish();
    pub fn glFlush();

    pub fn glViewport(x: GLint, y: GLint, width: GLsizei, height: GLsizei);
    pub fn glScissor(x: GLint, y: GLint, width: GLsizei, height: GLsizei);
    pub fn glClearColor(red: GLfloat, green: GLfloat, blue: GLfloat, alpha: GLfloat);
    pub fn glClear(mask: GLbitfield);
    pub fn glEnable(cap: GLenum);
    pub fn glDisable(cap: GLenum);
    pub fn glIsEnabled(cap: GLenum) -> GLboolean;
    pub fn glBlendFunc(sfactor: GLenum, dfactor: GLenum);
    pub fn glColorMask(red: GLboolean, green: GLboolean, blue: GLboolean, alpha: GLboolean);
    pub fn glDepthMask(flag: GLboolean);
    pub fn glDepthFunc(func: GLenum);
    pub fn glPixelStorei(pname: GLenum, param: GLint);
    pub fn glReadPixels(
        x: GLint,
        y: GLint,
        width: GLsizei,
        height: GLsizei,
        format: GLenum,
        type_: GLenum,
        pixels: *mut c_void,
    );

    pub fn glCreateShader(type_: GLenum) -> GLuint;
    pub fn glDeleteShader(shader: GLuint);
    pub fn glShaderSource(
        shader: GLuint,
        count: GLsizei,
        string: *const *const GLchar,
        length: *const GLint,
    );
    pub fn glCompileShader(shader: GLuint);
    pub fn glGetShaderiv(shader: GLuint, pname: GLenum, params: *mut GLint);
    pub fn glGetShaderInfoLog(
        shader: GLuint,
        buf_size: GLsizei,
        length: *mut GLsizei,
        info_log: *mut GLchar,
    );
    pub fn glCreateProgram() -> GLuint;
    pub fn glDeleteProgram(program: GLuint);
    pub fn glAttachShader(program: GLuint, shader: GLuint);
    pub fn glDetachShader(program: GLuint, shader: GLuint);
    pub fn glLinkProgram(program: GLuint);
    pub fn glGetProgramiv(program: GLuint, pname: GLenum, params: *mut GLint);
    pub fn glGetProgramInfoLog(
        program: GLuint,
        buf_size: GLsizei,
        length: *mut GLsizei,
        info_log: *mut GLchar,
    );
    pub fn glUseProgram(program: GLuint);
    pub fn glGetUniformLocation(program: GLuint, name: *const GLchar) -> GLint;
    pub fn glUniform1i(location: GLint, v0: GLint);
    pub fn glUniform1f(location: GLint, v0: GLfloat);
    pub fn glUniform2f(location: GLint, v0: GLfloat, v1: GLfloat);
    pub fn glUniform4f(location: GLint, v0: GLfloat, v1: GLfloat, v2: GLfloat, v3: GLfloat);

    pub fn glGenBuffers(n: GLsizei, buffers: *mut GLuint);
    pub fn glDeleteBuffers(n: GLsizei, buffers: *const GLuint);
    pub fn glBindBuffer(target: GLenum, buffer: GLuint);
    pub fn glBufferData(target: GLenum, size: GLsizeiptr, data: *const c_void, usage: GLenum);
    pub fn glBufferSubData(target: GLenum, offset: GLintptr, size: GLsizeiptr, data: *const c_void);
    pub fn glBindBufferBase(target: GLenum, index: GLuint, buffer: GLuint);
    pub fn glMapBufferRange(
        target: GLenum,
        offset: GLintptr,
        length: GLsizeiptr,
        access: GLbitfield,
    ) -> *mut c_void;
    pub fn glUnmapBuffer(target: GLenum) -> GLboolean;
    pub fn glGenVertexArrays(n: GLsizei, arrays: *mut GLuint);
    pub fn glDeleteVertexArrays(n: GLsizei, arrays: *const GLuint);
    pub fn glBindVertexArray(array: GLuint);
    pub fn glVertexAttribPointer(
        index: GLuint,
        size: GLint,
        type_: GLenum,
        normalized: GLboolean,
        stride: GLsizei,
        pointer: *const c_void,
    );
    pub fn glEnableVertexAttribArray(index: GLuint);

    pub fn glDrawArrays(mode: GLenum, first: GLint, count: GLsizei);
    pub fn glDrawElements(mode: GLenum, count: GLsizei, type_: GLenum, indices: *const c_void);

    pub fn glGenTextures(n: GLsizei, textures: *mut GLuint);
    pub fn glBindTexture(target: GLenum, texture: GLuint);
    pub fn glDeleteTextures(n: GLsizei, textures: *const GLuint);
    pub fn glActiveTexture(texture: GLenum);
    pub fn glTexParameteri(target: GLenum, pname: GLenum, param: GLint);
    pub fn glTexImage2D(
        target: GLenum,
        level: GLint,
        internalformat: GLint,
        width: GLsizei,
        height: GLsizei,
        border: GLint,
        format: GLenum,
        type_: GLenum,
        pixels: *const c_void,
    );
    pub fn glTexSubImage2D(
        target: GLenum,
        level: GLint,
        xoffset: GLint,
        yoffset: GLint,
        width: GLsizei,
        height: GLsizei,
        format: GLenum,
        type_: GLenum,
        pixels: *const c_void,
    );
    pub fn glCompressedTexImage2D(
        target: GLenum,
        level: GLint,
        internalformat: GLenum,
        width: GLsizei,
        height: GLsizei,
        border: GLint,
        image_size: GLsizei,
        data: *const c_void,
    );
    pub fn glGenFramebuffers(n: GLsizei, framebuffers: *mut GLuint);
    pub fn glBindFramebuffer(target: GLenum, framebuffer: GLuint);
    pub fn glFramebufferTexture2D(
        target: GLenum,
        attachment: GLenum,
        textarget: GLenum,
        texture: GLuint,
        level: GLint,
    );
    pub fn glCheckFramebufferStatus(target: GLenum) -> GLenum;
    pub fn glGenRenderbuffers(n: GLsizei, renderbuffers: *mut GLuint);
    pub fn glBindRenderbuffer(target: GLenum, renderbuffer: GLuint);
    pub fn glRenderbufferStorageMultisample(
        target: GLenum,
        samples: GLsizei,
        internalformat: GLenum,
        width: GLsizei,
        height: GLsizei,
    );
    pub fn glFramebufferRenderbuffer(
        target: GLenum,
        attachment: GLenum,
        renderbuffertarget: GLenum,
        renderbuffer: GLuint,
    );
    pub fn glCopyTexSubImage2D(
        target: GLenum,
        level: GLint,
        xoffset: GLint,
        yoffset: GLint,
        x: GLint,
        y: GLint,
        width: GLsizei,
        height: GLsizei,
    );
    pub fn glCopyImageSubData(
        src_name: GLuint,
        src_target: GLenum,
        src_level: GLint,
        src_x: GLint,
        src_y: GLint,
        src_z: GLint,
        dst_name: GLuint,
        dst_target: GLenum,
        dst_level: GLint,
        dst_x: GLint,
        dst_y: GLint,
        dst_z: GLint,
        src_width: GLsizei,
        src_height: GLsizei,
        src_depth: GLsizei,
    );
    pub fn glBlitFramebuffer(
        src_x0: GLint,
        src_y0: GLint,
        src_x1: GLint,
        src_y1: GLint,
        dst_x0: GLint,
        dst_y0: GLint,
        dst_x1: GLint,
        dst_y1: GLint,
        mask: GLbitfield,
        filter: GLenum,
    );

    pub fn glDispatchCompute(x: GLuint, y: GLuint, z: GLuint);
    pub fn glMemoryBarrier(barriers: GLbitfield);
    pub fn glBindImageTexture(
        unit: GLuint,
        texture: GLuint,
        level: GLint,
        layered: GLboolean,
        layer: GLint,
        access: GLenum,
        format: GLenum,
    );
    pub fn glTexStorage2D(
        target: GLenum,
        levels: GLsizei,
        internalformat: GLenum,
        width: GLsizei,
        height: GLsizei,
    );

    pub fn glGenQueries(n: GLsizei, ids: *mut GLuint);
    pub fn glDeleteQueries(n: GLsizei, ids: *const GLuint);
    pub fn glBeginQuery(target: GLenum, id: GLuint);
    pub fn glEndQuery(target: GLenum);
    pub fn glGetQueryObjectuiv(id: GLuint, pname: GLenum, params: *mut GLuint);
}

// ---------------------------------------------------------------------------------------
// GL 1.x fixed function (compatibility contexts only: `fixed_function`), from glvnd's
// libOpenGL, which dispatches to the current context like libGLESv2 (which does not export
// these).
// ---------------------------------------------------------------------------------------

pub const GL_MODELVIEW: GLenum = 0x1700;
pub const GL_PROJECTION: GLenum = 0x1701;
pub const GL_VERTEX_ARRAY: GLenum = 0x8074;
pub const GL_QUADS: GLenum = 0x0007;
pub const GL_ALPHA_TEST: GLenum = 0x0BC0;
pub const GL_EQUAL: GLenum = 0x0202;
pub const GL_CLIP_PLANE0: GLenum = 0x3000;
pub const GL_COMPILE: GLenum = 0x1300;
pub const GL_UNSIGNED_INT: GLenum = 0x1405;
pub const GL_MATRIX_MODE: GLenum = 0x0BA0;
pub const GL_MODELVIEW_STACK_DEPTH: GLenum = 0x0BA3;
pub const GL_PROJECTION_STACK_DEPTH: GLenum = 0x0BA4;
pub const GL_MODELVIEW_MATRIX: GLenum = 0x0BA6;
pub const GL_PROJECTION_MATRIX: GLenum = 0x0BA7;
pub const GL_TEXTURE: GLenum = 0x1702;
pub const GL_TEXTURE_MATRIX: GLenum = 0x0BA8;
pub const GL_CURRENT_RASTER_POSITION: GLenum = 0x0B07;
pub const GL_RENDER: GLenum = 0x1C00;
pub const GL_COLOR_LOGIC_OP: GLenum = 0x0BF2;
pub const GL_COPY: GLenum = 0x1503;
pub const GL_FEEDBACK: GLenum = 0x1C01;
pub const GL_2D: GLenum = 0x0600;

#[link(name = "OpenGL")]
extern "C" {
    // GL 4.5 direct state access.
    pub fn glBlitNamedFramebuffer(
        read: GLuint,
        draw: GLuint,
        src_x0: GLint,
        src_y0: GLint,
        src_x1: GLint,
        src_y1: GLint,
        dst_x0: GLint,
        dst_y0: GLint,
        dst_x1: GLint,
        dst_y1: GLint,
        mask: GLbitfield,
        filter: GLenum,
    );
    pub fn glCopyTextureSubImage2D(
        texture: GLuint,
        level: GLint,
        xoffset: GLint,
        yoffset: GLint,
        x: GLint,
        y: GLint,
        width: GLsizei,
        height: GLsizei,
    );
    pub fn glMatrixMode(mode: GLenum);
    pub fn glLoadMatrixf(m: *const GLfloat);
    pub fn glEnableClientState(array: GLenum);
    pub fn glAlphaFunc(func: GLenum, reference: GLfloat);
    pub fn glClipPlane(plane: GLenum, equation: *const f64);
    pub fn glVertexPointer(size: GLint, ty: GLenum, stride: GLsizei, pointer: *const c_void);
    pub fn glColor4f(red: GLfloat, green: GLfloat, blue: GLfloat, alpha: GLfloat);
    pub fn glGenLists(range: GLsizei) -> GLuint;
    pub fn glListBase(base: GLuint);
    pub fn glNewList(list: GLuint, mode: GLenum);
    pub fn glEndList();
    pub fn glCallList(list: GLuint);
    pub fn glCallLists(n: GLsizei, ty: GLenum, lists: *const c_void);
    pub fn glBegin(mode: GLenum);
    pub fn glEnd();
    pub fn glVertex3f(x: GLfloat, y: GLfloat, z: GLfloat);
    pub fn glVertex2f(x: GLfloat, y: GLfloat);
    pub fn glRectf(x1: GLfloat, y1: GLfloat, x2: GLfloat, y2: GLfloat);
    pub fn glPushMatrix();
    pub fn glPopMatrix();
    pub fn glTranslatef(x: GLfloat, y: GLfloat, z: GLfloat);
    pub fn glGetFloatv(pname: GLenum, data: *mut GLfloat);
    pub fn glRasterPos2f(x: GLfloat, y: GLfloat);
    pub fn glFeedbackBuffer(size: GLsizei, ty: GLenum, buffer: *mut GLfloat);
    pub fn glTexCoord2f(s: GLfloat, t: GLfloat);
    pub fn glLoadIdentity();
    pub fn glLogicOp(opcode: GLenum);
    pub fn glRenderMode(mode: GLenum) -> GLint;
    pub fn glBitmap(
        width: GLsizei,
        height: GLsizei,
        xorig: GLfloat,
        yorig: GLfloat,
        xmove: GLfloat,
        ymove: GLfloat,
        bitmap: *const GLubyte,
    );
}
