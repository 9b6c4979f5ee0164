//! `proc_loaded`: the overdraw frame, but every per-frame call goes through a function
//! pointer resolved once at start-up, the way glad-, epoxy- and SDL-based programs work:
//! `dlopen("libEGL.so.1")`, `dlsym(…, "eglGetProcAddress")`, then `eglGetProcAddress` for
//! every GL and EGL function of the frame (eglSwapBuffers included). No per-frame call goes
//! through a dynamic symbol, so a profiler that only interposes symbols sees none of them; it
//! must hand out its own pointers (launch mode) or hook what the pointers lead to (attach).
//!
//! Flags: `--layers K` (default 4, min 1), `--size WxH` (default 256x256), plus the common
//! flags (`--frames N`, `--api gles|gl`, `--checksum`; `--timing` adds a glFinish through its
//! pointer too).
//!
//! Set-up (before frame 0, not counted) is the overdraw set-up, through the linked symbols.
//!
//! Per-frame call sequence (fixed), all through `eglGetProcAddress` pointers:
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0.05, 0.05, 0.1, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! K x { glUniform4f(u_color, r_k, g_k, b_k, 0.25)
//!       glDrawArrays(GL_TRIANGLE_STRIP, 0, 4) }
//! [glFinish]                                   only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame (as overdraw with K layers):
//!
//! - calls      = 2K + 6   (+1 glFinish with `--timing`); default 14
//! - draws      = K; default 4
//! - work calls = K + 1; default 5
//! - samples passed per draw = W·H (default 65 536)
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.

use gpuheat_examples::args::{IntFlag, Spec};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, layer_colour, main_with, median_ms};
use std::ffi::{c_char, c_int, c_void};
use std::time::Instant;

const SPEC: Spec = Spec {
    name: "proc_loaded",
    about: "the overdraw frame, every call through eglGetProcAddress pointers",
    default_size: (256, 256),
    flags: &[IntFlag {
        name: "layers",
        value: "K",
        default: 4,
        min: 1,
        help: "number of stacked full-screen quads per frame",
    }],
    expected: "\
per frame (all through eglGetProcAddress pointers): glViewport, glClearColor, glClear,
           glUseProgram, glBindVertexArray, K x (glUniform4f, glDrawArrays), [glFinish], eglSwapBuffers
calls      = 2K + 6  (+1 with --timing)       default 14
draws      = K                                default 4
work calls = K + 1                            default 5
samples passed per draw = W*H                 default 65536",
};

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}
const RTLD_NOW: c_int = 2;

type GetProc = unsafe extern "C" fn(*const c_char) -> *mut c_void;

/// Declares the pointer table and its loader in one place.
macro_rules! pointers {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        #[allow(non_snake_case)]
        struct Pointers { $($name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)* }

        impl Pointers {
            /// Resolves every pointer through `get`.
            ///
            /// # Safety
            ///
            /// `get` must be `eglGetProcAddress`, which returns each name's entry point with
            /// the registry's signature, as declared here.
            unsafe fn load(get: GetProc) -> Result<Pointers, String> {
                Ok(Pointers { $($name: {
                    // SAFETY: the name is NUL-terminated; a non-null result is the entry
                    // point of that name, whose signature the table declares.
                    let p = unsafe { get(concat!(stringify!($name), "\0").as_ptr().cast()) };
                    if p.is_null() {
                        return Err(format!("eglGetProcAddress({}) returned NULL", stringify!($name)));
                    }
                    // SAFETY: see above; a function pointer and a data pointer have one size.
                    unsafe {
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(p)
                    }
                },)* })
            }
        }
    };
}

pointers! {
    glViewport: fn(GLint, GLint, GLsizei, GLsizei);
    glClearColor: fn(GLfloat, GLfloat, GLfloat, GLfloat);
    glClear: fn(GLbitfield);
    glUseProgram: fn(GLuint);
    glBindVertexArray: fn(GLuint);
    glUniform4f: fn(GLint, GLfloat, GLfloat, GLfloat, GLfloat);
    glDrawArrays: fn(GLenum, GLint, GLsizei);
    glFinish: fn();
    eglSwapBuffers: fn(EGLDisplay, EGLSurface) -> EGLBoolean;
}

fn main() {
    main_with(&SPEC, |args| {
        let layers = args.get("layers");
        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program()?;
        let quad = gfx.unit_quad()?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let colours: Vec<[f32; 4]> = (0..layers).map(layer_colour).collect();
        // SAFETY: plain GL set-up on the current context; dlopen/dlsym with valid strings.
        let p = unsafe {
            glUniform4f(rp.u_rect, 0.0, 0.0, w as f32, h as f32);
            glDisable(GL_DEPTH_TEST);
            glEnable(GL_BLEND);
            glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
            let egl = dlopen(c"libEGL.so.1".as_ptr(), RTLD_NOW);
            if egl.is_null() {
                return Err("dlopen(libEGL.so.1) failed".into());
            }
            let get = dlsym(egl, c"eglGetProcAddress".as_ptr());
            if get.is_null() {
                return Err("dlsym(eglGetProcAddress) failed".into());
            }
            Pointers::load(std::mem::transmute::<*mut c_void, GetProc>(get))?
        };
        gfx.check("proc_loaded set-up")?;

        let mut times = Vec::new();
        let mut i = 0u64;
        while !matches!(args.frames, Some(n) if i >= n) {
            let t0 = Instant::now();
            // SAFETY: pointers to the real entry points, called on the current context.
            unsafe {
                (p.glViewport)(0, 0, w, h);
                (p.glClearColor)(0.05, 0.05, 0.1, 1.0);
                (p.glClear)(GL_COLOR_BUFFER_BIT);
                (p.glUseProgram)(rp.program.id);
                (p.glBindVertexArray)(quad.vao);
                for c in &colours {
                    (p.glUniform4f)(rp.u_color, c[0], c[1], c[2], c[3]);
                    (p.glDrawArrays)(GL_TRIANGLE_STRIP, 0, 4);
                }
                if args.timing {
                    (p.glFinish)();
                }
                if (p.eglSwapBuffers)(gfx.display, gfx.surface) == 0 {
                    return Err("eglSwapBuffers failed".into());
                }
            }
            if args.timing {
                times.push(t0.elapsed());
            }
            i += 1;
        }
        if args.checksum {
            println!("checksum={:016x}", gfx.checksum());
        }
        if args.timing {
            println!("frame_ms={:.3}", median_ms(&mut times));
        }
        Ok(())
    });
}
