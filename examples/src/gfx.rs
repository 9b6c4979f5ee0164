//! Headless EGL set-up shared by the examples: Mesa's surfaceless platform (or an EGL device
//! where the driver lacks it), a pbuffer
//! surface, and a GLES 3.2 or desktop GL 4.5 core context made current on the calling
//! thread.
//!
//! Everything here is set-up: none of it runs inside an example's frame loop, except
//! [`Gfx::swap`] (one `eglSwapBuffers`).

use std::ffi::{CStr, CString};
use std::fmt;
use std::ptr;

use crate::gl::*;

/// Which client API the context speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// `eglBindAPI(EGL_OPENGL_ES_API)`, a GLES 3.2 context, `#version 300 es` shaders.
    Gles,
    /// `eglBindAPI(EGL_OPENGL_API)`, a GL 4.5 core context, `#version 330 core` shaders.
    Gl,
}

impl Api {
    /// Both APIs, GLES first.
    pub const ALL: [Api; 2] = [Api::Gles, Api::Gl];

    /// The name used on the command line: `gles` or `gl`.
    pub fn name(self) -> &'static str {
        match self {
            Api::Gles => "gles",
            Api::Gl => "gl",
        }
    }

    /// Parses `gles` / `gl` (as accepted by `--api`).
    pub fn parse(s: &str) -> Option<Api> {
        match s {
            "gles" => Some(Api::Gles),
            "gl" => Some(Api::Gl),
            _ => None,
        }
    }

    /// The header prepended to a compute shader by [`Gfx::compute_program`] (GL 4.3,
    /// GLES 3.1: the examples' contexts are 4.5 core and 3.2).
    pub fn compute_header(self) -> &'static str {
        match self {
            Api::Gles => {
                "#version 310 es\nprecision highp float;\nprecision highp int;\n\
                 precision highp image2D;\n"
            }
            Api::Gl => "#version 430 core\n",
        }
    }

    /// The header prepended to every shader source by [`Gfx::program`].
    pub fn shader_header(self) -> &'static str {
        match self {
            Api::Gles => "#version 300 es\nprecision highp float;\nprecision highp int;\n",
            Api::Gl => "#version 330 core\n",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A linked GL program. Plain handle: it lives as long as the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// The program object.
    pub id: GLuint,
}

impl Program {
    /// `glGetUniformLocation`; an error if the uniform does not exist (or was optimised out).
    pub fn uniform(&self, name: &str) -> Result<GLint, String> {
        let c = CString::new(name).map_err(|_| format!("bad uniform name {name:?}"))?;
        // SAFETY: `c` is a NUL-terminated string that outlives the call; the program's
        // context is current on this thread (examples use one thread and one context).
        let loc = unsafe { glGetUniformLocation(self.id, c.as_ptr()) };
        if loc < 0 {
            Err(format!("uniform `{name}` not found in program {}", self.id))
        } else {
            Ok(loc)
        }
    }
}

/// A vertex array object holding a unit quad: 4 vertices `(0,0) (1,0) (0,1) (1,1)` of
/// `vec2` at attribute location 0, drawn with `glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quad {
    /// The vertex array object.
    pub vao: GLuint,
    /// The buffer holding the vertices.
    pub vbo: GLuint,
}

impl Quad {
    /// Vertex count of the strip.
    pub const VERTICES: GLsizei = 4;
}

/// Vertex shader (without `#version`) mapping the unit quad onto a pixel rectangle.
///
/// Uniforms: `u_rect` = (x, y, width, height) in pixels, origin bottom-left (window
/// coordinates); `u_viewport` = (width, height) of the viewport in pixels. With integer
/// rectangle values and a viewport equal to the surface, the quad edges land exactly on
/// pixel edges, so the quad covers exactly `width × height` pixels (pixel centres sit at
/// half-integers and never on an edge).
pub const RECT_VS: &str = r"layout(location = 0) in vec2 a_pos;
uniform vec4 u_rect;
uniform vec2 u_viewport;
void main() {
    vec2 px = u_rect.xy + a_pos * u_rect.zw;
    gl_Position = vec4(px / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
";

/// Fragment shader (without `#version`) writing exactly the uniform colour `u_color`.
///
/// It multiplies by `step(0.0, gl_FragCoord.x)`, which is always 1.0, only so that the
/// shader reads `gl_FragCoord`: that keeps llvmpipe off its 8-bit "linear" fast path for
/// constant-colour shaders, whose blend rounding differs from the normal path and which it
/// takes or not depending on flush points and active queries. Without this, a profiler
/// that adds a query or a `glFinish` would change the rendered picture (and checksum).
pub const SOLID_FS: &str = r"uniform vec4 u_color;
out vec4 o_color;
void main() {
    o_color = u_color * step(0.0, gl_FragCoord.x);
}
";

/// Fragment shader (without `#version`) of `fill_cost`: `u_iterations` iterations of real
/// math seeded from `gl_FragCoord` and `u_color`, so the cost per fragment is proportional
/// to `u_iterations` and the loop cannot be optimised away. Use with
/// [`Gfx::rect_program_with`]; output alpha is 1.
pub const LOOP_FS: &str = r"uniform vec4 u_color;
uniform int u_iterations;
out vec4 o_color;
void main() {
    vec3 v = vec3(gl_FragCoord.xy * (1.0 / 97.0), 0.5) * u_color.rgb;
    for (int i = 0; i < u_iterations; ++i) {
        v = fract(v * 1.7 + sin(v.yzx * 3.0 + float(i) * 0.013));
    }
    o_color = vec4(v * 0.25, 1.0);
}
";

/// Vertex shader (without `#version`) of the textured quads: [`RECT_VS`] that also passes
/// the unit-quad position on as the texture coordinate `v_uv` ((0,0) at the rectangle's
/// lower-left corner, (1,1) at its upper-right), so the quad shows the whole texture.
pub const TEX_VS: &str = r"layout(location = 0) in vec2 a_pos;
uniform vec4 u_rect;
uniform vec2 u_viewport;
out vec2 v_uv;
void main() {
    v_uv = a_pos;
    vec2 px = u_rect.xy + a_pos * u_rect.zw;
    gl_Position = vec4(px / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
";

/// Fragment shader (without `#version`) compositing a texture: `texture(u_tex, v_uv)`.
///
/// Multiplied by `step(0.0, gl_FragCoord.x)` (always 1.0) for the reason given at
/// [`SOLID_FS`]: a shader that only copies a texel is what llvmpipe's "linear" fast path
/// takes or not depending on flushes, and its rounding differs.
pub const TEX_FS: &str = r"uniform sampler2D u_tex;
in vec2 v_uv;
out vec4 o_color;
void main() {
    o_color = texture(u_tex, v_uv) * step(0.0, gl_FragCoord.x);
}
";

/// Fragment shader (without `#version`) of a pass that reads a texture and then runs
/// [`LOOP_FS`]'s loop: `u_iterations` iterations seeded from `texture(u_tex, v_uv)` and
/// `gl_FragCoord`, so its cost per fragment is proportional to `u_iterations`, like
/// [`LOOP_FS`], and its output depends on every texel it read. Output alpha is 1.
pub const TEX_LOOP_FS: &str = r"uniform sampler2D u_tex;
uniform int u_iterations;
in vec2 v_uv;
out vec4 o_color;
void main() {
    vec3 v = texture(u_tex, v_uv).rgb + vec3(gl_FragCoord.xy * (1.0 / 89.0), 0.25);
    for (int i = 0; i < u_iterations; ++i) {
        v = fract(v * 1.7 + sin(v.yzx * 3.0 + float(i) * 0.013));
    }
    o_color = vec4(v * 0.25, 1.0);
}
";

/// [`TEX_VS`] + a fragment shader reading `uniform sampler2D u_tex`, with its uniform
/// locations.
#[derive(Clone, Copy, Debug)]
pub struct TexProgram {
    /// The linked program.
    pub program: Program,
    /// `uniform vec4 u_rect`: x, y, width, height in pixels, origin bottom left.
    pub u_rect: GLint,
    /// `uniform vec2 u_viewport`: the viewport size in pixels.
    pub u_viewport: GLint,
}

/// A texture with a framebuffer object whose only colour attachment (0) is the texture's
/// level 0: a render target that later draws sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderTexture {
    /// The `GL_TEXTURE_2D`, RGBA8, one level, clamped to its edges.
    pub texture: GLuint,
    /// The framebuffer object drawing into it.
    pub framebuffer: GLuint,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// [`RECT_VS`] + [`SOLID_FS`] with their uniform locations.
#[derive(Clone, Copy, Debug)]
pub struct RectProgram {
    /// The linked program.
    pub program: Program,
    /// `uniform vec4 u_rect`: x, y, width, height in pixels, origin bottom left.
    pub u_rect: GLint,
    /// `uniform vec2 u_viewport`: the viewport size in pixels.
    pub u_viewport: GLint,
    /// `uniform vec4 u_color`: the fragment colour.
    pub u_color: GLint,
}

/// An EGL display + pbuffer surface + context, current on the thread that created it.
///
/// Not `Send`: the context is current on the creating thread. Several `Gfx` may exist at
/// once on different threads. Dropping releases the context and destroys the context and
/// surface; it does not `eglTerminate` the (process-wide) display.
pub struct Gfx {
    /// The context's client API.
    pub api: Api,
    /// Surface width in pixels.
    pub width: u32,
    /// Surface height in pixels.
    pub height: u32,
    /// The headless EGL display (surfaceless, or an EGL device).
    pub display: EGLDisplay,
    /// The RGBA8 pbuffer config.
    pub config: EGLConfig,
    /// The pbuffer surface.
    pub surface: EGLSurface,
    /// The context, current on the creating thread.
    pub context: EGLContext,
    /// [`Gfx::program`] leaves the shaders attached (deleting them only flags them), instead
    /// of detaching them after the link.
    pub keep_shaders: bool,
}

fn egl_err(what: &str) -> String {
    // SAFETY: eglGetError takes no arguments and is valid on any thread at any time.
    let code = unsafe { eglGetError() };
    format!("{what} failed (EGL error 0x{code:04X})")
}

/// `EGL_EXT_platform_device`'s platform, for drivers without Mesa's surfaceless one.
const EGL_PLATFORM_DEVICE_EXT: EGLenum = 0x313F;

/// `eglQueryDevicesEXT` (EGL_EXT_device_enumeration).
type QueryDevices = unsafe extern "C" fn(
    max: EGLint,
    devices: *mut *mut std::ffi::c_void,
    n: *mut EGLint,
) -> EGLBoolean;

/// An initialized headless display: Mesa's surfaceless platform where the driver has it
/// (llvmpipe, every Mesa driver), else the first EGL device (NVIDIA's driver, whose
/// surfaceless platform is missing or has no pbuffer configs), so the examples run on a
/// real GPU without a window system.
///
/// # Safety
/// EGL must be loadable; the pointers eglGetProcAddress gives are transmuted to the
/// registry signatures of the names asked for.
unsafe fn open_display() -> Result<EGLDisplay, String> {
    // SAFETY: our caller's promise.
    unsafe {
        let f = eglGetProcAddress(c"eglGetPlatformDisplayEXT".as_ptr());
        if f.is_null() {
            return Err("eglGetPlatformDisplayEXT is not available".into());
        }
        let get_platform_display: PFNEGLGETPLATFORMDISPLAYEXTPROC = std::mem::transmute(f);
        let usable = |display: EGLDisplay| {
            let (mut major, mut minor) = (0, 0);
            if display == EGL_NO_DISPLAY
                || eglInitialize(display, &mut major, &mut minor) != EGL_TRUE
            {
                return false;
            }
            let attribs = [EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE];
            let mut n = 0;
            eglChooseConfig(display, attribs.as_ptr(), ptr::null_mut(), 0, &mut n) == EGL_TRUE
                && n > 0
        };
        let surfaceless = get_platform_display(
            EGL_PLATFORM_SURFACELESS_MESA,
            EGL_DEFAULT_DISPLAY,
            ptr::null(),
        );
        if usable(surfaceless) {
            return Ok(surfaceless);
        }
        let surfaceless_error = egl_err("eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)");
        let q = eglGetProcAddress(c"eglQueryDevicesEXT".as_ptr());
        if !q.is_null() {
            let query: QueryDevices = std::mem::transmute(q);
            let mut devices = [ptr::null_mut(); 8];
            let mut n = 0;
            if query(devices.len() as EGLint, devices.as_mut_ptr(), &mut n) == EGL_TRUE {
                for &device in &devices[..n.clamp(0, 8) as usize] {
                    let display =
                        get_platform_display(EGL_PLATFORM_DEVICE_EXT, device, ptr::null());
                    if usable(display) {
                        return Ok(display);
                    }
                }
            }
        }
        Err(format!(
            "{surfaceless_error}, and no EGL device has pbuffer configs"
        ))
    }
}

impl Gfx {
    /// Creates the display, a `width × height` RGBA8 pbuffer, a context for `api`, and makes
    /// them current. Viewport is left at its default (the whole surface).
    pub fn new(api: Api, width: u32, height: u32) -> Result<Gfx, String> {
        Gfx::create(api, width, height, false)
    }

    /// As [`Gfx::new`] with a desktop GL context of the compatibility profile (the highest
    /// version the driver has: Mesa llvmpipe gives 4.5), where the GL 1.x fixed-function
    /// pipeline, matrix stacks and display lists still exist (`fixed_function`).
    pub fn new_compat(width: u32, height: u32) -> Result<Gfx, String> {
        Gfx::create(Api::Gl, width, height, true)
    }

    fn create(api: Api, width: u32, height: u32, compat: bool) -> Result<Gfx, String> {
        if width == 0 || height == 0 || width > 16384 || height > 16384 {
            return Err(format!("bad surface size {width}x{height}"));
        }
        // SAFETY: EGL is called with a display it returned, NONE-terminated attribute arrays
        // and out-pointers to locals that outlive each call; `eglGetPlatformDisplayEXT` is
        // the pointer eglGetProcAddress gave for that name, transmuted to its registry
        // signature.
        // SAFETY: see `open_display`; the rest calls EGL with the display it returned,
        // NONE-terminated attribute arrays and out-pointers to locals that outlive each call.
        unsafe {
            let display = open_display()?;

            let (egl_api, renderable) = match api {
                Api::Gles => (EGL_OPENGL_ES_API, EGL_OPENGL_ES3_BIT),
                Api::Gl => (EGL_OPENGL_API, EGL_OPENGL_BIT),
            };
            if eglBindAPI(egl_api) != EGL_TRUE {
                return Err(egl_err(&format!("eglBindAPI({api})")));
            }

            #[rustfmt::skip]
            let config_attribs = [
                EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
                EGL_RENDERABLE_TYPE, renderable,
                EGL_RED_SIZE, 8,
                EGL_GREEN_SIZE, 8,
                EGL_BLUE_SIZE, 8,
                EGL_ALPHA_SIZE, 8,
                EGL_SAMPLES, 0,
                EGL_NONE,
            ];
            let mut configs = [ptr::null_mut(); 64];
            let mut n = 0;
            if eglChooseConfig(
                display,
                config_attribs.as_ptr(),
                configs.as_mut_ptr(),
                configs.len() as EGLint,
                &mut n,
            ) != EGL_TRUE
            {
                return Err(egl_err("eglChooseConfig"));
            }
            // Prefer an exact RGBA8888 config (eglChooseConfig sorts deeper colour first).
            let attrib = |c: EGLConfig, a: EGLint| {
                let mut v = 0;
                eglGetConfigAttrib(display, c, a, &mut v);
                v
            };
            let config = configs[..n.max(0) as usize]
                .iter()
                .copied()
                .find(|&c| {
                    [EGL_RED_SIZE, EGL_GREEN_SIZE, EGL_BLUE_SIZE, EGL_ALPHA_SIZE]
                        .iter()
                        .all(|&a| attrib(c, a) == 8)
                })
                .ok_or_else(|| format!("no RGBA8 pbuffer EGL config for {api}"))?;

            let surface_attribs = [
                EGL_WIDTH,
                width as EGLint,
                EGL_HEIGHT,
                height as EGLint,
                EGL_NONE,
            ];
            let surface = eglCreatePbufferSurface(display, config, surface_attribs.as_ptr());
            if surface == EGL_NO_SURFACE {
                return Err(egl_err(&format!(
                    "eglCreatePbufferSurface({width}x{height})"
                )));
            }

            #[rustfmt::skip]
            let context_attribs: &[EGLint] = match api {
                // No version asked: EGL then gives a compatibility context.
                Api::Gl if compat => &[EGL_NONE],
                Api::Gles => &[
                    EGL_CONTEXT_MAJOR_VERSION, 3,
                    EGL_CONTEXT_MINOR_VERSION, 2,
                    EGL_NONE,
                ],
                Api::Gl => &[
                    EGL_CONTEXT_MAJOR_VERSION, 4,
                    EGL_CONTEXT_MINOR_VERSION, 5,
                    EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                    EGL_NONE,
                ],
            };
            let context =
                eglCreateContext(display, config, EGL_NO_CONTEXT, context_attribs.as_ptr());
            if context == EGL_NO_CONTEXT {
                let e = egl_err(&format!(
                    "eglCreateContext({})",
                    match api {
                        Api::Gles => "GLES 3.2",
                        Api::Gl if compat => "GL compatibility profile",
                        Api::Gl => "GL 4.5 core",
                    }
                ));
                eglDestroySurface(display, surface);
                return Err(e);
            }
            let gfx = Gfx {
                api,
                width,
                height,
                display,
                config,
                surface,
                context,
                keep_shaders: false,
            };
            if eglMakeCurrent(display, surface, surface, context) != EGL_TRUE {
                let e = egl_err("eglMakeCurrent");
                eglDestroyContext(display, context);
                eglDestroySurface(display, surface);
                std::mem::forget(gfx);
                return Err(e);
            }
            Ok(gfx)
        }
    }

    /// Surface area in pixels, `width × height`.
    pub fn pixels(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    /// One `eglSwapBuffers` (a no-op for pbuffers in Mesa, but it is the frame delimiter a
    /// profiler sees). Calls `eglGetError` only on failure.
    pub fn swap(&self) -> Result<(), String> {
        // SAFETY: the display and surface were created by `Gfx::new` and live until drop.
        if unsafe { eglSwapBuffers(self.display, self.surface) } == EGL_TRUE {
            Ok(())
        } else {
            Err(egl_err("eglSwapBuffers"))
        }
    }

    /// One `glFinish`.
    pub fn finish(&self) {
        // SAFETY: the context is current on this thread (see `Gfx::new`).
        unsafe { glFinish() }
    }

    /// One `glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE)` of the whole surface
    /// (rows bottom-up, 4 bytes per pixel; the default pack alignment of 4 suits RGBA8).
    pub fn read_pixels(&self) -> Vec<u8> {
        let mut buf = vec![0u8; self.pixels() as usize * 4];
        // SAFETY: `buf` holds W·H·4 bytes, what GL_RGBA/GL_UNSIGNED_BYTE of the whole
        // surface writes at the default pack alignment; the context is current.
        unsafe {
            glReadPixels(
                0,
                0,
                self.width as GLsizei,
                self.height as GLsizei,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                buf.as_mut_ptr().cast(),
            );
        }
        buf
    }

    /// FNV-1a 64 of [`Gfx::read_pixels`] (exactly one GL call: `glReadPixels`).
    pub fn checksum(&self) -> u64 {
        fnv1a64(&self.read_pixels())
    }

    /// `glGetError` as a `Result`, naming `what` on failure. Set-up only.
    pub fn check(&self, what: &str) -> Result<(), String> {
        // SAFETY: the context is current on this thread.
        let e = unsafe { glGetError() };
        if e == GL_NO_ERROR {
            Ok(())
        } else {
            Err(format!("{what}: GL error 0x{e:04X}"))
        }
    }

    /// The end of a set-up: blending and the depth, stencil and scissor tests off (as every
    /// example's set-up documents), then [`Gfx::check`] naming `what`.
    pub fn finish_setup(&self, what: &str) -> Result<(), String> {
        // SAFETY: the context is current on this thread.
        unsafe {
            glDisable(GL_BLEND);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_SCISSOR_TEST);
        }
        self.check(what)
    }

    /// The window's two programs of the composite scenes (`offscreen_pass`, `compute_pass`):
    /// C, `fs` sampling unit 0 over the S×S rectangle (W/2, H/2, `side`, `side`), and D, a
    /// solid (0.2, 0.6, 0.3, 1) rectangle (0, 0, W/2, H/4); their uniforms set (D's program
    /// left bound).
    pub fn composite_programs(
        &self,
        fs: &str,
        side: u32,
    ) -> Result<(TexProgram, RectProgram), String> {
        let (w, h) = (self.width as i32, self.height as i32);
        let p_tex = self.tex_program(fs, (self.width, self.height))?;
        // SAFETY: the context is current on this thread, p_tex being bound.
        unsafe {
            glUniform4f(
                p_tex.u_rect,
                (w / 2) as f32,
                (h / 2) as f32,
                side as f32,
                side as f32,
            );
        }
        let p_solid = self.rect_program()?;
        // SAFETY: as above, p_solid being bound.
        unsafe {
            glUniform4f(p_solid.u_rect, 0.0, 0.0, (w / 2) as f32, (h / 4) as f32);
            glUniform4f(p_solid.u_color, 0.2, 0.6, 0.3, 1.0);
        }
        Ok((p_tex, p_solid))
    }

    /// `glGetString(name)` as a Rust string (empty if null).
    pub fn gl_string(&self, name: GLenum) -> String {
        // SAFETY: glGetString returns null or a NUL-terminated string owned by the driver
        // that stays valid while the context lives; it is copied before returning.
        unsafe {
            let p = glGetString(name);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p.cast()).to_string_lossy().into_owned()
            }
        }
    }

    /// Compiles `vs` and `fs` (bodies without `#version`; [`Api::shader_header`] is
    /// prepended) and links them. Errors carry the stage and the driver's info log.
    pub fn program(&self, vs: &str, fs: &str) -> Result<Program, String> {
        self.program_with(self.api.shader_header(), vs, fs)
    }

    /// Like [`Gfx::program`], with the GL 4.3 / GLES 3.1 header ([`Api::compute_header`]):
    /// storage blocks, atomic counters and images in the vertex and fragment stages.
    pub fn storage_program(&self, vs: &str, fs: &str) -> Result<Program, String> {
        self.program_with(self.api.compute_header(), vs, fs)
    }

    fn program_with(&self, header: &str, vs: &str, fs: &str) -> Result<Program, String> {
        // SAFETY: the context is current on this thread; every pointer passed is to a local
        // that outlives the call, with the length GL is told.
        unsafe {
            let v = compile_with(header, self.api, GL_VERTEX_SHADER, vs)?;
            let f = match compile_with(header, self.api, GL_FRAGMENT_SHADER, fs) {
                Ok(f) => f,
                Err(e) => {
                    glDeleteShader(v);
                    return Err(e);
                }
            };
            let p = glCreateProgram();
            glAttachShader(p, v);
            glAttachShader(p, f);
            glLinkProgram(p);
            if !self.keep_shaders {
                glDetachShader(p, v);
                glDetachShader(p, f);
            }
            glDeleteShader(v);
            glDeleteShader(f);
            let mut ok = 0;
            glGetProgramiv(p, GL_LINK_STATUS, &mut ok);
            if ok == 0 {
                let mut len = 0;
                glGetProgramiv(p, GL_INFO_LOG_LENGTH, &mut len);
                let mut log = vec![0u8; len.max(1) as usize];
                glGetProgramInfoLog(
                    p,
                    log.len() as GLsizei,
                    ptr::null_mut(),
                    log.as_mut_ptr().cast(),
                );
                glDeleteProgram(p);
                return Err(format!(
                    "program link failed ({}): {}",
                    self.api,
                    log_text(&log)
                ));
            }
            self.check("linking program")?;
            Ok(Program { id: p })
        }
    }

    /// Compiles compute shader `body` (without `#version`; [`Api::compute_header`] is
    /// prepended) and links it alone.
    pub fn compute_program(&self, body: &str) -> Result<Program, String> {
        // SAFETY: the context is current on this thread.
        unsafe {
            let c = compile_with(self.api.compute_header(), self.api, GL_COMPUTE_SHADER, body)?;
            let p = glCreateProgram();
            glAttachShader(p, c);
            glLinkProgram(p);
            glDetachShader(p, c);
            glDeleteShader(c);
            let mut ok = 0;
            glGetProgramiv(p, GL_LINK_STATUS, &mut ok);
            if ok == 0 {
                glDeleteProgram(p);
                return Err(format!("compute program link failed ({})", self.api));
            }
            self.check("linking compute program")?;
            Ok(Program { id: p })
        }
    }

    /// Builds [`RECT_VS`] + [`SOLID_FS`], sets `u_viewport` to the surface size and
    /// `u_color` to opaque white, and leaves the program bound (`glUseProgram`).
    pub fn rect_program(&self) -> Result<RectProgram, String> {
        self.rect_program_with(SOLID_FS)
    }

    /// Like [`Gfx::rect_program`] but with a custom fragment shader body, which must
    /// declare `uniform vec4 u_color;` and use it.
    pub fn rect_program_with(&self, fs: &str) -> Result<RectProgram, String> {
        let program = self.program(RECT_VS, fs)?;
        let rp = RectProgram {
            program,
            u_rect: program.uniform("u_rect")?,
            u_viewport: program.uniform("u_viewport")?,
            u_color: program.uniform("u_color")?,
        };
        // SAFETY: plain GL calls on the current context with a program it linked.
        unsafe {
            glUseProgram(program.id);
            glUniform2f(rp.u_viewport, self.width as f32, self.height as f32);
            glUniform4f(rp.u_color, 1.0, 1.0, 1.0, 1.0);
        }
        self.check("setting up rect program")?;
        Ok(rp)
    }

    /// Builds [`TEX_VS`] + `fs` (which must declare and use `uniform sampler2D u_tex`), sets
    /// `u_viewport` to `viewport` and `u_tex` to texture unit 0, and leaves the program
    /// bound (`glUseProgram`).
    pub fn tex_program(&self, fs: &str, viewport: (u32, u32)) -> Result<TexProgram, String> {
        let program = self.program(TEX_VS, fs)?;
        let tp = TexProgram {
            program,
            u_rect: program.uniform("u_rect")?,
            u_viewport: program.uniform("u_viewport")?,
        };
        let u_tex = program.uniform("u_tex")?;
        // SAFETY: plain GL calls on the current context with a program it linked.
        unsafe {
            glUseProgram(program.id);
            glUniform2f(tp.u_viewport, viewport.0 as f32, viewport.1 as f32);
            glUniform1i(u_tex, 0);
        }
        self.check("setting up texture program")?;
        Ok(tp)
    }

    /// Creates a `width × height` RGBA8 texture (one level, `filter` for minification and
    /// magnification, clamped to its edges, contents undefined until drawn) and a framebuffer
    /// object with it as colour attachment 0. Leaves the texture bound to unit 0's
    /// `GL_TEXTURE_2D` and framebuffer 0 bound; an incomplete framebuffer is an error.
    pub fn render_texture(
        &self,
        width: u32,
        height: u32,
        filter: GLint,
    ) -> Result<RenderTexture, String> {
        self.render_texture_as(width, height, filter, GL_RGBA8 as GLenum)
    }

    /// [`Gfx::render_texture`] in sized internal format `format`: `GL_RGBA8` as
    /// `glTexImage2D` makes it, any other with immutable storage (`glTexStorage2D`: any
    /// colour-renderable format, integer ones included).
    pub fn render_texture_as(
        &self,
        width: u32,
        height: u32,
        filter: GLint,
        format: GLenum,
    ) -> Result<RenderTexture, String> {
        let (mut texture, mut framebuffer) = (0, 0);
        // SAFETY: the context is current; the out-pointers are to locals and glTexImage2D
        // is given no pixels (null: storage only).
        let status = unsafe {
            glActiveTexture(GL_TEXTURE0);
            glGenTextures(1, &mut texture);
            glBindTexture(GL_TEXTURE_2D, texture);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
            if format == GL_RGBA8 as GLenum {
                // Mutable storage, as the examples have always made it (their set-up calls
                // are documented).
                glTexImage2D(
                    GL_TEXTURE_2D,
                    0,
                    GL_RGBA8,
                    width as GLsizei,
                    height as GLsizei,
                    0,
                    GL_RGBA,
                    GL_UNSIGNED_BYTE,
                    ptr::null(),
                );
            } else {
                glTexStorage2D(
                    GL_TEXTURE_2D,
                    1,
                    format,
                    width as GLsizei,
                    height as GLsizei,
                );
            }
            colour_framebuffer(&mut framebuffer, || {
                glFramebufferTexture2D(
                    GL_FRAMEBUFFER,
                    GL_COLOR_ATTACHMENT0,
                    GL_TEXTURE_2D,
                    texture,
                    0,
                )
            })
        };
        self.check("creating render texture")?;
        if status != GL_FRAMEBUFFER_COMPLETE {
            return Err(format!(
                "framebuffer of a {width}x{height} texture of format 0x{format:04X} incomplete \
                 (status 0x{status:04X})"
            ));
        }
        Ok(RenderTexture {
            texture,
            framebuffer,
            width,
            height,
        })
    }

    /// A framebuffer object whose colour attachment 0 is a `width`×`height` `GL_RGBA8`
    /// renderbuffer (`glRenderbufferStorageMultisample` with 0 samples); its name.
    pub fn render_renderbuffer(&self, width: u32, height: u32) -> Result<GLuint, String> {
        let (mut renderbuffer, mut framebuffer) = (0, 0);
        // SAFETY: the context is current; the out-pointers are to locals.
        let status = unsafe {
            glGenRenderbuffers(1, &mut renderbuffer);
            glBindRenderbuffer(GL_RENDERBUFFER, renderbuffer);
            glRenderbufferStorageMultisample(
                GL_RENDERBUFFER,
                0,
                GL_RGBA8 as GLenum,
                width as GLsizei,
                height as GLsizei,
            );
            colour_framebuffer(&mut framebuffer, || {
                glFramebufferRenderbuffer(
                    GL_FRAMEBUFFER,
                    GL_COLOR_ATTACHMENT0,
                    GL_RENDERBUFFER,
                    renderbuffer,
                )
            })
        };
        self.check("creating a render renderbuffer")?;
        if status != GL_FRAMEBUFFER_COMPLETE {
            return Err(format!(
                "framebuffer of a {width}x{height} renderbuffer incomplete (status 0x{status:04X})"
            ));
        }
        Ok(framebuffer)
    }

    /// Creates a VAO + VBO holding the unit quad (see [`Quad`]) and leaves the VAO bound.
    pub fn unit_quad(&self) -> Result<Quad, String> {
        const VERTS: [f32; 8] = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let (mut vao, mut vbo) = (0, 0);
        // SAFETY: the context is current; glBufferData reads `size_of_val(&VERTS)` bytes of
        // the constant, and the out-pointers are to locals.
        unsafe {
            glGenVertexArrays(1, &mut vao);
            glBindVertexArray(vao);
            glGenBuffers(1, &mut vbo);
            glBindBuffer(GL_ARRAY_BUFFER, vbo);
            glBufferData(
                GL_ARRAY_BUFFER,
                std::mem::size_of_val(&VERTS) as GLsizeiptr,
                VERTS.as_ptr().cast(),
                GL_STATIC_DRAW,
            );
            glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 8, ptr::null());
            glEnableVertexAttribArray(0);
        }
        self.check("creating unit quad")?;
        Ok(Quad { vao, vbo })
    }
}

impl Drop for Gfx {
    fn drop(&mut self) {
        // SAFETY: the display, surface and context were created by `Gfx::new` and are
        // destroyed once, here.
        unsafe {
            if eglGetCurrentContext() == self.context {
                eglMakeCurrent(self.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            }
            eglDestroyContext(self.display, self.context);
            eglDestroySurface(self.display, self.surface);
        }
    }
}

/// Compiles shader `body` of `stage` with `header` (the `#version` line and precisions)
/// prepended.
unsafe fn compile_with(
    header: &str,
    api: Api,
    stage: GLenum,
    body: &str,
) -> Result<GLuint, String> {
    let stage_name = match stage {
        GL_VERTEX_SHADER => "vertex",
        GL_COMPUTE_SHADER => "compute",
        _ => "fragment",
    };
    let srcs = [
        header.as_ptr().cast::<GLchar>(),
        body.as_ptr().cast::<GLchar>(),
    ];
    let lens = [header.len() as GLint, body.len() as GLint];
    // SAFETY: the caller made a context current; `srcs` and `lens` describe two live
    // strings by pointer and length, and the log buffer is as long as GL is told.
    unsafe {
        let s = glCreateShader(stage);
        if s == 0 {
            return Err(format!("glCreateShader({stage_name}) failed"));
        }
        glShaderSource(s, 2, srcs.as_ptr(), lens.as_ptr());
        glCompileShader(s);
        let mut ok = 0;
        glGetShaderiv(s, GL_COMPILE_STATUS, &mut ok);
        if ok == 0 {
            let mut len = 0;
            glGetShaderiv(s, GL_INFO_LOG_LENGTH, &mut len);
            let mut log = vec![0u8; len.max(1) as usize];
            glGetShaderInfoLog(
                s,
                log.len() as GLsizei,
                ptr::null_mut(),
                log.as_mut_ptr().cast(),
            );
            glDeleteShader(s);
            return Err(format!(
                "{stage_name} shader compile failed ({api}): {}",
                log_text(&log)
            ));
        }
        Ok(s)
    }
}

fn log_text(log: &[u8]) -> String {
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    String::from_utf8_lossy(&log[..end]).trim().to_string()
}

/// FNV-1a, 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Makes a framebuffer object into `framebuffer`, binds it, lets `attach` attach its colour
/// buffer, and returns its completeness status with framebuffer 0 bound again.
///
/// # Safety
/// A context must be current on this thread and `attach` valid GL calls on it.
unsafe fn colour_framebuffer(framebuffer: &mut GLuint, attach: impl FnOnce()) -> GLenum {
    // SAFETY: our caller's promise; the out-pointer is the caller's.
    unsafe {
        glGenFramebuffers(1, framebuffer);
        glBindFramebuffer(GL_FRAMEBUFFER, *framebuffer);
        attach();
        let status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn api_names_round_trip() {
        for api in Api::ALL {
            assert_eq!(Api::parse(api.name()), Some(api));
        }
        assert_eq!(Api::parse("vulkan"), None);
    }
}
