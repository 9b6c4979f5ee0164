//! Thermal painting: per-pixel heat and overdraw maps of a captured frame, computed on the GPU
//! inside the program.
//!
//! For each draw `d` that renders to the default framebuffer, right after the draw (and after
//! its counter bracket), the same draw is replayed with the program's own state (program,
//! vertex arrays, viewport, scissor, culling, `discard`…) into our framebuffer `count`: a
//! stencil buffer cleared to 0, stencil test `ALWAYS` with `INCR` on both faces and colour
//! writes off, and no depth buffer (so the depth test passes). The stencil then holds
//! `c_d(p)`, the fragments the draw produced at `p` (saturating at 255 per pixel per draw:
//! `INCR` does not wrap). Eight "bit passes" of a full-screen triangle, stencil `EQUAL` on bit
//! `b`, additive blending, turn the stencil into `c_d(p)` in an R32F target (`scratch`); it is
//! read back for `N_d = Σ_p c_d(p)` and the coverage box. Eight more bit passes add
//! `2^b·T_d/N_d` and `2^b` into the two R32F targets of `accum` (heat, overdraw), scissored to
//! the box. At the frame's end (before the swap) the frame's colour buffer and both maps are
//! read back once and `accum` is cleared.
//!
//! Invisibility: every piece of state touched is saved and restored (see [`Saved`]); the
//! program's pending GL error is taken before the work and raised again after it with a
//! known-invalid no-op, and errors of our own are drained (and make the frame's map missing,
//! with the error, rather than wrong).
//!
//! Known limits: per-draw-buffer colour masks and blend enables (`glColorMaski`,
//! `glEnablei`) are restored through the non-indexed calls from draw buffer 0's values;
//! object names the program uses without generating them (allowed for some objects in GLES
//! and compatibility GL) may collide with ours; the program's own stencil test is replaced by
//! `ALWAYS` during the replay, so `c_d` counts the fragments the draw shaded, including ones
//! its stencil or depth test then rejected; `GL_OUT_OF_MEMORY` and
//! `GL_INVALID_FRAMEBUFFER_OPERATION` pending from the program cannot be raised again.

use std::ffi::{c_char, c_void};

use gpuheat_session::{ClientApi, DrawCoverage, HeatMap};

use crate::gl::{GLenum, GLint, GLsizei, GLuint};

type GLboolean = u8;
type GLfloat = f32;

crate::gl::real_fns! {
    /// The real GL functions the painter calls (loaded like [`crate::GlFns`], from the real
    /// implementations, never the program's hooked entry points).
    pub struct ThermalFns {
        get_error: c"glGetError" = fn() -> GLenum;
        enable: c"glEnable" = fn(GLenum);
        disable: c"glDisable" = fn(GLenum);
        is_enabled: c"glIsEnabled" = fn(GLenum) -> GLboolean;
        get_integerv: c"glGetIntegerv" = fn(GLenum, *mut GLint);
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
        bind_buffer: c"glBindBuffer" = fn(GLenum, GLuint);
    }
    optional {
        /// `glPolygonMode` (desktop GL only).
        polygon_mode: c"glPolygonMode" = fn(GLenum, GLenum);
    }
}

// Enums.
const NO_ERROR: GLenum = 0;
const INVALID_ENUM: GLenum = 0x0500;
const INVALID_VALUE: GLenum = 0x0501;
const INVALID_OPERATION: GLenum = 0x0502;
const FRAMEBUFFER: GLenum = 0x8D40;
const DRAW_FRAMEBUFFER: GLenum = 0x8CA9;
const READ_FRAMEBUFFER: GLenum = 0x8CA8;
const DRAW_FRAMEBUFFER_BINDING: GLenum = 0x8CA6;
const READ_FRAMEBUFFER_BINDING: GLenum = 0x8CAA;
const FRAMEBUFFER_COMPLETE: GLenum = 0x8CD5;
const RENDERBUFFER: GLenum = 0x8D41;
const RENDERBUFFER_BINDING: GLenum = 0x8CA7;
const COLOR_ATTACHMENT0: GLenum = 0x8CE0;
const COLOR_ATTACHMENT1: GLenum = 0x8CE1;
const STENCIL_ATTACHMENT: GLenum = 0x8D20;
const STENCIL_INDEX8: GLenum = 0x8D48;
const RGBA8: GLenum = 0x8058;
const R32F: GLenum = 0x822E;
const STENCIL: GLenum = 0x1802;
const COLOR: GLenum = 0x1800;
const CURRENT_PROGRAM: GLenum = 0x8B8D;
const DELETE_STATUS: GLenum = 0x8B80;
const VERTEX_ARRAY_BINDING: GLenum = 0x85B5;
const VIEWPORT: GLenum = 0x0BA2;
const SCISSOR_BOX: GLenum = 0x0C10;
const SCISSOR_TEST: GLenum = 0x0C11;
const STENCIL_TEST: GLenum = 0x0B90;
const BLEND: GLenum = 0x0BE2;
const CULL_FACE: GLenum = 0x0B44;
const RASTERIZER_DISCARD: GLenum = 0x8C89;
const POLYGON_MODE: GLenum = 0x0B40;
const FILL: GLenum = 0x1B02;
const FRONT: GLenum = 0x0404;
const BACK: GLenum = 0x0405;
const FRONT_AND_BACK: GLenum = 0x0408;
const STENCIL_FUNC: GLenum = 0x0B92;
const STENCIL_VALUE_MASK: GLenum = 0x0B93;
const STENCIL_FAIL: GLenum = 0x0B94;
const STENCIL_PASS_DEPTH_FAIL: GLenum = 0x0B95;
const STENCIL_PASS_DEPTH_PASS: GLenum = 0x0B96;
const STENCIL_REF: GLenum = 0x0B97;
const STENCIL_WRITEMASK: GLenum = 0x0B98;
const STENCIL_BACK_FUNC: GLenum = 0x8800;
const STENCIL_BACK_FAIL: GLenum = 0x8801;
const STENCIL_BACK_PASS_DEPTH_FAIL: GLenum = 0x8802;
const STENCIL_BACK_PASS_DEPTH_PASS: GLenum = 0x8803;
const STENCIL_BACK_REF: GLenum = 0x8CA3;
const STENCIL_BACK_VALUE_MASK: GLenum = 0x8CA4;
const STENCIL_BACK_WRITEMASK: GLenum = 0x8CA5;
const ALWAYS: GLenum = 0x0207;
const EQUAL: GLenum = 0x0202;
const KEEP: GLenum = 0x1E00;
const INCR: GLenum = 0x1E02;
const COLOR_WRITEMASK: GLenum = 0x0C23;
const BLEND_SRC_RGB: GLenum = 0x80C9;
const BLEND_DST_RGB: GLenum = 0x80C8;
const BLEND_SRC_ALPHA: GLenum = 0x80CB;
const BLEND_DST_ALPHA: GLenum = 0x80CA;
const BLEND_EQUATION_RGB: GLenum = 0x8009;
const BLEND_EQUATION_ALPHA: GLenum = 0x883D;
const ONE: GLenum = 1;
const FUNC_ADD: GLenum = 0x8006;
const PIXEL_PACK_BUFFER: GLenum = 0x88EB;
const PIXEL_PACK_BUFFER_BINDING: GLenum = 0x88ED;
const PACK_ALIGNMENT: GLenum = 0x0D05;
const PACK_ROW_LENGTH: GLenum = 0x0D02;
const PACK_SKIP_ROWS: GLenum = 0x0D03;
const PACK_SKIP_PIXELS: GLenum = 0x0D04;
const READ_BUFFER: GLenum = 0x0C02;
const DRAW_BUFFER0: GLenum = 0x8825;
const TRANSFORM_FEEDBACK_ACTIVE: GLenum = 0x8E24;
const RED: GLenum = 0x1903;
const RGBA: GLenum = 0x1908;
const FLOAT: GLenum = 0x1406;
const UNSIGNED_BYTE: GLenum = 0x1401;
const TRIANGLES: GLenum = 0x0004;
const VERTEX_SHADER: GLenum = 0x8B31;
const FRAGMENT_SHADER: GLenum = 0x8B30;
const LINK_STATUS: GLenum = 0x8B82;
const COMPILE_STATUS: GLenum = 0x8B81;

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
    }
}

/// The program's state the painter touches, taken before and put back after.
struct Saved {
    draw_fb: GLint,
    read_fb: GLint,
    program: GLint,
    vertex_array: GLint,
    renderbuffer: GLint,
    viewport: [GLint; 4],
    scissor_box: [GLint; 4],
    scissor_test: bool,
    stencil_test: bool,
    blend: bool,
    cull_face: bool,
    rasterizer_discard: bool,
    polygon_mode: Option<GLint>,
    /// func, ref, value mask, fail, zfail, zpass, writemask: front, back.
    stencil: [[GLint; 7]; 2],
    color_mask: [GLint; 4],
    blend_func: [GLint; 4],
    blend_eq: [GLint; 2],
    pack_buffer: GLint,
    pack: [GLint; 4],
}

const PACK_NAMES: [GLenum; 4] = [
    PACK_ALIGNMENT,
    PACK_ROW_LENGTH,
    PACK_SKIP_ROWS,
    PACK_SKIP_PIXELS,
];
const STENCIL_NAMES: [[GLenum; 7]; 2] = [
    [
        STENCIL_FUNC,
        STENCIL_REF,
        STENCIL_VALUE_MASK,
        STENCIL_FAIL,
        STENCIL_PASS_DEPTH_FAIL,
        STENCIL_PASS_DEPTH_PASS,
        STENCIL_WRITEMASK,
    ],
    [
        STENCIL_BACK_FUNC,
        STENCIL_BACK_REF,
        STENCIL_BACK_VALUE_MASK,
        STENCIL_BACK_FAIL,
        STENCIL_BACK_PASS_DEPTH_FAIL,
        STENCIL_BACK_PASS_DEPTH_PASS,
        STENCIL_BACK_WRITEMASK,
    ],
];

pub(crate) unsafe fn int(f: &ThermalFns, name: GLenum) -> GLint {
    let mut v = [0 as GLint; 4];
    unsafe { (f.get_integerv)(name, v.as_mut_ptr()) };
    v[0]
}

pub(crate) unsafe fn ints4(f: &ThermalFns, name: GLenum) -> [GLint; 4] {
    let mut v = [0 as GLint; 16];
    unsafe { (f.get_integerv)(name, v.as_mut_ptr()) };
    [v[0], v[1], v[2], v[3]]
}

pub(crate) unsafe fn set_enabled(f: &ThermalFns, cap: GLenum, on: bool) {
    unsafe {
        if on {
            (f.enable)(cap)
        } else {
            (f.disable)(cap)
        }
    }
}

impl Saved {
    unsafe fn take(f: &ThermalFns, desktop: bool) -> Saved {
        unsafe {
            let on = |cap| (f.is_enabled)(cap) != 0;
            let mut stencil = [[0; 7]; 2];
            for (face, names) in stencil.iter_mut().zip(STENCIL_NAMES) {
                for (v, n) in face.iter_mut().zip(names) {
                    *v = int(f, n);
                }
            }
            Saved {
                draw_fb: int(f, DRAW_FRAMEBUFFER_BINDING),
                read_fb: int(f, READ_FRAMEBUFFER_BINDING),
                program: int(f, CURRENT_PROGRAM),
                vertex_array: int(f, VERTEX_ARRAY_BINDING),
                renderbuffer: int(f, RENDERBUFFER_BINDING),
                viewport: ints4(f, VIEWPORT),
                scissor_box: ints4(f, SCISSOR_BOX),
                scissor_test: on(SCISSOR_TEST),
                stencil_test: on(STENCIL_TEST),
                blend: on(BLEND),
                cull_face: on(CULL_FACE),
                rasterizer_discard: on(RASTERIZER_DISCARD),
                polygon_mode: f
                    .polygon_mode
                    .filter(|_| desktop)
                    .map(|_| int(f, POLYGON_MODE)),
                stencil,
                color_mask: ints4(f, COLOR_WRITEMASK),
                blend_func: [
                    int(f, BLEND_SRC_RGB),
                    int(f, BLEND_DST_RGB),
                    int(f, BLEND_SRC_ALPHA),
                    int(f, BLEND_DST_ALPHA),
                ],
                blend_eq: [int(f, BLEND_EQUATION_RGB), int(f, BLEND_EQUATION_ALPHA)],
                pack_buffer: int(f, PIXEL_PACK_BUFFER_BINDING),
                pack: PACK_NAMES.map(|n| int(f, n)),
            }
        }
    }

    unsafe fn restore(&self, f: &ThermalFns) {
        unsafe {
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, self.draw_fb as GLuint);
            (f.bind_framebuffer)(READ_FRAMEBUFFER, self.read_fb as GLuint);
            (f.use_program)(self.program as GLuint);
            (f.bind_vertex_array)(self.vertex_array as GLuint);
            (f.bind_renderbuffer)(RENDERBUFFER, self.renderbuffer as GLuint);
            let [x, y, w, h] = self.viewport;
            (f.viewport)(x, y, w, h);
            let [x, y, w, h] = self.scissor_box;
            (f.scissor)(x, y, w, h);
            set_enabled(f, SCISSOR_TEST, self.scissor_test);
            set_enabled(f, STENCIL_TEST, self.stencil_test);
            set_enabled(f, BLEND, self.blend);
            set_enabled(f, CULL_FACE, self.cull_face);
            set_enabled(f, RASTERIZER_DISCARD, self.rasterizer_discard);
            if let (Some(pm), Some(mode)) = (f.polygon_mode, self.polygon_mode) {
                pm(FRONT_AND_BACK, mode as GLenum);
            }
            for (face, s) in [FRONT, BACK].into_iter().zip(self.stencil) {
                (f.stencil_func_separate)(face, s[0] as GLenum, s[1], s[2] as GLuint);
                (f.stencil_op_separate)(face, s[3] as GLenum, s[4] as GLenum, s[5] as GLenum);
                (f.stencil_mask_separate)(face, s[6] as GLuint);
            }
            let m = self.color_mask.map(|v| u8::from(v != 0));
            (f.color_mask)(m[0], m[1], m[2], m[3]);
            let b = self.blend_func.map(|v| v as GLenum);
            (f.blend_func_separate)(b[0], b[1], b[2], b[3]);
            (f.blend_equation_separate)(self.blend_eq[0] as GLenum, self.blend_eq[1] as GLenum);
            (f.bind_buffer)(PIXEL_PACK_BUFFER, self.pack_buffer as GLuint);
            for (n, v) in PACK_NAMES.into_iter().zip(self.pack) {
                (f.pixel_storei)(n, v);
            }
        }
    }
}

/// Pixel-pack state for our read-backs: no pack buffer, tight rows.
unsafe fn pack_defaults(f: &ThermalFns) {
    unsafe {
        (f.bind_buffer)(PIXEL_PACK_BUFFER, 0);
        (f.pixel_storei)(PACK_ALIGNMENT, 4);
        (f.pixel_storei)(PACK_ROW_LENGTH, 0);
        (f.pixel_storei)(PACK_SKIP_ROWS, 0);
        (f.pixel_storei)(PACK_SKIP_PIXELS, 0);
    }
}

/// Takes every pending GL error (ours); returns the first.
pub(crate) unsafe fn drain_errors(f: &ThermalFns) -> GLenum {
    let mut first = NO_ERROR;
    for _ in 0..32 {
        let e = unsafe { (f.get_error)() };
        if e == NO_ERROR {
            break;
        }
        if first == NO_ERROR {
            first = e;
        }
    }
    first
}

/// Raises `e` again (the program's pending error we took) with a known-invalid no-op call.
pub(crate) unsafe fn raise(f: &ThermalFns, e: GLenum) {
    unsafe {
        match e {
            INVALID_ENUM => (f.enable)(0),
            INVALID_VALUE => (f.viewport)(0, 0, -1, -1),
            INVALID_OPERATION => (f.bind_vertex_array)(0x7fff_fff0),
            _ => {}
        }
    }
}

/// The GPU objects of one context's painter, sized to the map.
struct Targets {
    width: u32,
    height: u32,
    program: GLuint,
    uniform: GLint,
    vao: GLuint,
    /// count, scratch, accum.
    fbos: [GLuint; 3],
    /// stencil, colour (RGBA8), scratch (R32F), heat (R32F), overdraw (R32F).
    rbs: [GLuint; 5],
}

const VS: &str = "out vec2 unused_;\nvoid main() {\n  vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);\n  unused_ = p;\n  gl_Position = vec4(p, 0.0, 1.0);\n}\n";
const FS: &str = "uniform vec2 u_add;\nin vec2 unused_;\nlayout(location = 0) out vec4 o0;\nlayout(location = 1) out vec4 o1;\nvoid main() {\n  o0 = vec4(u_add.x);\n  o1 = vec4(u_add.y);\n}\n";

/// Per-context painter: the targets, and the draws of the frame being painted.
pub struct Painter {
    gles: bool,
    unsupported: Option<String>,
    targets: Option<Targets>,
    /// Our program, its `u_add` location and our empty vertex array, built once.
    program: Option<(GLuint, GLint, GLuint)>,
    /// Map size: the surface's when known, else the first painted draw's viewport.
    size: Option<[u32; 2]>,
    draws: Vec<DrawCoverage>,
    /// First failure in this frame: the map is reported missing with it.
    failure: Option<String>,
    /// Draws listed without painting, and why (for the failure-free summary).
    pub skipped_offscreen: u32,
    /// Draws skipped because the program had a query active or transform feedback on.
    pub skipped_other: u32,
}

impl std::fmt::Debug for Painter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Painter")
            .field("size", &self.size)
            .field("draws", &self.draws.len())
            .finish()
    }
}

impl Painter {
    /// A painter for a context of `api` (with `unsupported` the reason it cannot paint, from
    /// [`support`]); `surface`: the draw surface's size when known.
    pub fn new(api: ClientApi, unsupported: Option<String>, surface: Option<[u32; 2]>) -> Painter {
        Painter {
            gles: api == ClientApi::Gles,
            unsupported,
            targets: None,
            program: None,
            size: surface.filter(|s| s[0] > 0 && s[1] > 0),
            draws: Vec::new(),
            failure: None,
            skipped_offscreen: 0,
            skipped_other: 0,
        }
    }

    /// Sets the surface size (when the window system says, e.g. at a capture's start).
    pub fn set_surface(&mut self, surface: [u32; 2]) {
        if surface[0] > 0 && surface[1] > 0 {
            self.size = Some(surface);
        }
    }

    fn list(&mut self, call: u32, time_ns: u64) {
        self.draws.push(DrawCoverage {
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

    /// Paints draw `call` (frame order) whose serialized time is `time_ns`; `replay` calls
    /// the real draw again with the same arguments. `program_query` tells that the program
    /// has a query of its own active (the replay would add to it).
    ///
    /// # Safety
    /// The context this painter belongs to must be current, and `f` its real functions.
    pub unsafe fn paint(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        program_query: bool,
        replay: &dyn Fn(),
    ) {
        if self.unsupported.is_some() || self.failure.is_some() {
            self.list(call, time_ns);
            return;
        }
        unsafe {
            let pending = (f.get_error)();
            self.paint_inner(f, call, time_ns, program_query, replay);
            let ours = drain_errors(f);
            if ours != NO_ERROR {
                self.fail(format!(
                    "GL error 0x{ours:04X} while painting call {call} (the map would be wrong)"
                ));
            }
            raise(f, pending);
        }
    }

    unsafe fn paint_inner(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        program_query: bool,
        replay: &dyn Fn(),
    ) {
        unsafe {
            if int(f, DRAW_FRAMEBUFFER_BINDING) != 0 {
                self.skipped_offscreen += 1;
                return self.list(call, time_ns);
            }
            if program_query
                || int(f, TRANSFORM_FEEDBACK_ACTIVE) != 0
                || current_program_deleting(f)
            {
                self.skipped_other += 1;
                return self.list(call, time_ns);
            }
            let saved = Saved::take(f, !self.gles);
            if self.size.is_none() {
                let [x, y, w, h] = saved.viewport;
                if w > 0 && h > 0 {
                    self.size = Some([(x.max(0) + w) as u32, (y.max(0) + h) as u32]);
                }
            }
            let Some([w, h]) = self.size else {
                self.list(call, time_ns);
                return self.fail("the surface size is unknown and the viewport is empty".into());
            };
            if self.targets.as_ref().map(|t| (t.width, t.height)) != Some((w, h)) {
                if let Err(e) = self.create_targets(f, w, h) {
                    saved.restore(f);
                    self.list(call, time_ns);
                    return self.fail(e);
                }
            }
            let t = self.targets.as_ref().expect("targets");
            let (fbos, program, uniform, vao) = (t.fbos, t.program, t.uniform, t.vao);

            // Count: replay the draw with the program's own state into our stencil.
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[0]);
            (f.disable)(SCISSOR_TEST);
            (f.stencil_mask_separate)(FRONT_AND_BACK, 0xFF);
            (f.clear_bufferiv)(STENCIL, 0, &0);
            set_enabled(f, SCISSOR_TEST, saved.scissor_test);
            (f.enable)(STENCIL_TEST);
            (f.stencil_func_separate)(FRONT_AND_BACK, ALWAYS, 0, 0xFF);
            (f.stencil_op_separate)(FRONT_AND_BACK, INCR, INCR, INCR);
            (f.color_mask)(0, 0, 0, 0);
            let before = drain_errors(f);
            if before != NO_ERROR {
                saved.restore(f);
                self.list(call, time_ns);
                return self.fail(format!(
                    "GL error 0x{before:04X} setting up the count of call {call}"
                ));
            }
            replay();
            let replayed = drain_errors(f);
            if replayed != NO_ERROR {
                // The draw itself raises this error: it drew nothing.
                saved.restore(f);
                return self.list(call, time_ns);
            }

            // Our passes: full-screen triangles of our own program.
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
            (f.stencil_op_separate)(FRONT_AND_BACK, KEEP, KEEP, KEEP);
            (f.stencil_mask_separate)(FRONT_AND_BACK, 0);
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[1]);
            (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
            let bit_passes = |add: &dyn Fn(u32) -> (f32, f32)| {
                for b in 0..8u32 {
                    (f.stencil_func_separate)(FRONT_AND_BACK, EQUAL, 1 << b, 1 << b);
                    let (x, y) = add(b);
                    (f.uniform2f)(uniform, x, y);
                    (f.draw_arrays)(TRIANGLES, 0, 3);
                }
            };
            bit_passes(&|b| ((1u32 << b) as f32, (1u32 << b) as f32));

            // Read c_d back: N_d and the coverage box.
            (f.bind_framebuffer)(READ_FRAMEBUFFER, fbos[1]);
            pack_defaults(f);
            let counts = self.read_floats(f, w, h);
            let mut n = 0u64;
            let mut bbox = [u32::MAX, u32::MAX, 0, 0];
            for (i, &c) in counts.iter().enumerate() {
                if c > 0.0 {
                    n += c as u64;
                    let (x, y) = ((i as u32) % w, (i as u32) / w);
                    bbox[0] = bbox[0].min(x);
                    bbox[1] = bbox[1].min(y);
                    bbox[2] = bbox[2].max(x + 1);
                    bbox[3] = bbox[3].max(y + 1);
                }
            }
            if n == 0 {
                bbox = [0; 4];
            } else {
                // Add 2^b·T/N and 2^b where bit b of c_d is set, inside the box only.
                let share = time_ns as f64 / n as f64;
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[2]);
                (f.enable)(SCISSOR_TEST);
                (f.scissor)(
                    bbox[0] as GLint,
                    bbox[1] as GLint,
                    (bbox[2] - bbox[0]) as GLsizei,
                    (bbox[3] - bbox[1]) as GLsizei,
                );
                bit_passes(&|b| {
                    let k = f64::from(1u32 << b);
                    ((k * share) as f32, k as f32)
                });
            }
            self.draws.push(DrawCoverage {
                call,
                fragments: n,
                time_ns,
                bbox,
            });
            saved.restore(f);
        }
    }

    /// Reads the R32F colour buffer of the bound read framebuffer (its read buffer already
    /// chosen): GL reads `GL_RED`, GLES the always-supported `GL_RGBA`/`GL_FLOAT` pair.
    unsafe fn read_floats(&self, f: &ThermalFns, w: u32, h: u32) -> Vec<f32> {
        let n = w as usize * h as usize;
        let (format, channels) = if self.gles { (RGBA, 4) } else { (RED, 1) };
        let mut v = vec![0f32; n * channels];
        unsafe {
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

    unsafe fn create_targets(&mut self, f: &ThermalFns, w: u32, h: u32) -> Result<(), String> {
        unsafe {
            self.release(f);
            let (program, uniform, vao) = match self.program {
                Some(p) => p,
                None => {
                    let p = self.build_program(f)?;
                    self.program = Some(p);
                    p
                }
            };
            let mut fbos = [0; 3];
            let mut rbs = [0; 5];
            (f.gen_framebuffers)(3, fbos.as_mut_ptr());
            (f.gen_renderbuffers)(5, rbs.as_mut_ptr());
            for (rb, format) in rbs.iter().zip([STENCIL_INDEX8, RGBA8, R32F, R32F, R32F]) {
                (f.bind_renderbuffer)(RENDERBUFFER, *rb);
                (f.renderbuffer_storage)(RENDERBUFFER, format, w as GLsizei, h as GLsizei);
            }
            let attach = |fbo: GLuint, list: &[(GLenum, GLuint)]| {
                (f.bind_framebuffer)(FRAMEBUFFER, fbo);
                for &(at, rb) in list {
                    (f.framebuffer_renderbuffer)(FRAMEBUFFER, at, RENDERBUFFER, rb);
                }
            };
            attach(
                fbos[0],
                &[(STENCIL_ATTACHMENT, rbs[0]), (COLOR_ATTACHMENT0, rbs[1])],
            );
            attach(
                fbos[1],
                &[(STENCIL_ATTACHMENT, rbs[0]), (COLOR_ATTACHMENT0, rbs[2])],
            );
            (f.read_buffer)(COLOR_ATTACHMENT0);
            attach(
                fbos[2],
                &[
                    (STENCIL_ATTACHMENT, rbs[0]),
                    (COLOR_ATTACHMENT0, rbs[3]),
                    (COLOR_ATTACHMENT1, rbs[4]),
                ],
            );
            (f.draw_buffers)(2, [COLOR_ATTACHMENT0, COLOR_ATTACHMENT1].as_ptr());
            let mut status = Ok(());
            for (name, fbo) in ["count", "scratch", "accum"].into_iter().zip(fbos) {
                (f.bind_framebuffer)(FRAMEBUFFER, fbo);
                let s = (f.check_framebuffer_status)(FRAMEBUFFER);
                if s != FRAMEBUFFER_COMPLETE && status.is_ok() {
                    status = Err(format!(
                        "the painter's {name} framebuffer ({w}x{h}) is incomplete: \
                         glCheckFramebufferStatus = 0x{s:04X}"
                    ));
                }
            }
            self.targets = Some(Targets {
                width: w,
                height: h,
                program,
                uniform,
                vao,
                fbos,
                rbs,
            });
            if status.is_ok() {
                // Start the accumulation at zero.
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[2]);
                (f.disable)(SCISSOR_TEST);
                (f.color_mask)(1, 1, 1, 1);
                (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
                (f.clear_bufferfv)(COLOR, 1, [0.0f32; 4].as_ptr());
            }
            let e = drain_errors(f);
            if e != NO_ERROR && status.is_ok() {
                status = Err(format!(
                    "GL error 0x{e:04X} creating the painter's {w}x{h} targets"
                ));
            }
            status
        }
    }

    unsafe fn build_program(&self, f: &ThermalFns) -> Result<(GLuint, GLint, GLuint), String> {
        let header = if self.gles {
            "#version 300 es\nprecision highp float;\n"
        } else {
            "#version 330 core\n"
        };
        unsafe {
            let program = (f.create_program)();
            for (stage, body) in [(VERTEX_SHADER, VS), (FRAGMENT_SHADER, FS)] {
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
            let mut vao = 0;
            (f.gen_vertex_arrays)(1, &mut vao);
            Ok((program, uniform, vao))
        }
    }

    /// Deletes the targets (the program and VAO go with the context).
    unsafe fn release(&mut self, f: &ThermalFns) {
        if let Some(t) = self.targets.take() {
            unsafe {
                (f.delete_framebuffers)(3, t.fbos.as_ptr());
                (f.delete_renderbuffers)(5, t.rbs.as_ptr());
            }
        }
    }

    /// Ends the frame: reads the colour buffer (the default framebuffer's draw buffer) and
    /// both maps, clears the accumulation for the next frame and returns the map, or why
    /// there is none. Call before the swap, with the frame's context current.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn finish(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        context: u64,
    ) -> Result<HeatMap, String> {
        let draws = std::mem::take(&mut self.draws);
        let failure = self.failure.take();
        let (offscreen, other) = (self.skipped_offscreen, self.skipped_other);
        self.skipped_offscreen = 0;
        self.skipped_other = 0;
        if let Some(why) = &self.unsupported {
            return Err(why.clone());
        }
        let Some([w, h]) = self.size else {
            return Err(if draws.is_empty() {
                "the frame has no draw and the surface size is unknown".into()
            } else {
                format!(
                    "no draw reached the default framebuffer ({offscreen} offscreen, {other} \
                     skipped for the program's queries, transform feedback or a program \
                     flagged for deletion) and the surface size is unknown"
                )
            });
        };
        unsafe {
            let pending = (f.get_error)();
            let result = self.finish_inner(f, w, h, frame, context, draws);
            let ours = drain_errors(f);
            raise(f, pending);
            if let Some(why) = failure {
                return Err(why);
            }
            if ours != NO_ERROR {
                return Err(format!(
                    "GL error 0x{ours:04X} reading the maps back at the frame's end"
                ));
            }
            result
        }
    }

    unsafe fn finish_inner(
        &mut self,
        f: &ThermalFns,
        w: u32,
        h: u32,
        frame: u64,
        context: u64,
        draws: Vec<DrawCoverage>,
    ) -> Result<HeatMap, String> {
        let n = w as usize * h as usize;
        unsafe {
            let saved = Saved::take(f, !self.gles);
            pack_defaults(f);
            // The frame's colour, from the default framebuffer's draw buffer.
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, 0);
            (f.bind_framebuffer)(READ_FRAMEBUFFER, 0);
            let draw_buffer = int(f, DRAW_BUFFER0) as GLenum;
            let read_buffer = int(f, READ_BUFFER) as GLenum;
            let source = if draw_buffer == FRONT || draw_buffer == BACK {
                draw_buffer
            } else {
                BACK
            };
            (f.read_buffer)(source);
            let mut colour = vec![0u8; 4 * n];
            (f.read_pixels)(
                0,
                0,
                w as GLsizei,
                h as GLsizei,
                RGBA,
                UNSIGNED_BYTE,
                colour.as_mut_ptr().cast(),
            );
            (f.read_buffer)(read_buffer);
            if drain_errors(f) != NO_ERROR {
                colour.clear();
            }
            let sized = self
                .targets
                .as_ref()
                .is_some_and(|t| (t.width, t.height) == (w, h));
            let (heat, overdraw) = if sized {
                let fbos = self.targets.as_ref().expect("targets").fbos;
                (f.bind_framebuffer)(READ_FRAMEBUFFER, fbos[2]);
                (f.read_buffer)(COLOR_ATTACHMENT0);
                let heat = self.read_floats(f, w, h);
                (f.read_buffer)(COLOR_ATTACHMENT1);
                let overdraw: Vec<u32> = self
                    .read_floats(f, w, h)
                    .into_iter()
                    .map(|v| v.round() as u32)
                    .collect();
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[2]);
                (f.disable)(SCISSOR_TEST);
                (f.color_mask)(1, 1, 1, 1);
                (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
                (f.clear_bufferfv)(COLOR, 1, [0.0f32; 4].as_ptr());
                (heat, overdraw)
            } else {
                (vec![0.0; n], vec![0; n])
            };
            saved.restore(f);
            Ok(HeatMap {
                frame,
                context,
                width: w,
                height: h,
                heat,
                overdraw,
                colour,
                draws,
            })
        }
    }
}

/// Whether the program in use is flagged for deletion: switching to the painter's program
/// would delete it, and restoring it would then fail, so such draws are not painted.
unsafe fn current_program_deleting(f: &ThermalFns) -> bool {
    unsafe {
        let program = int(f, CURRENT_PROGRAM);
        if program == 0 {
            return false;
        }
        let mut deleting = 0;
        (f.get_programiv)(program as GLuint, DELETE_STATUS, &mut deleting);
        deleting != 0
    }
}
