//! `egl_probe`: what the dynamic loader answers about EGL before and after the program loads
//! it, the way Qt's xcb EGL plugin meets it: `dlsym(RTLD_DEFAULT, "eglGetDisplay")` while no
//! libEGL is loaded, then `dlopen("libEGL.so.1", RTLD_LOCAL)` and the calls through what
//! `dlsym` on that handle returns. A profiler preloaded into it must not change a line of the
//! output (gpuheat's agent exports every EGL entry point, so a careless one answers the first
//! lookup itself, or calls nothing real behind its wrappers).
//!
//! Output, one line each (no flags but `--help`; any other argument is a usage error, one
//! line on stderr and exit 2; exits 0 unless the output could not be written):
//!
//! ```text
//! before: eglGetDisplay=absent|present
//! after: eglGetDisplay=absent|present
//! display: none|some          eglGetDisplay(EGL_DEFAULT_DISPLAY) through the handle
//! initialize: ok|failed       eglInitialize on it (only when there is one)
//! global: eglGetDisplay=absent|present   RTLD_DEFAULT again (libEGL is not global)
//! ```
//!
//! No GL frame is drawn: this example has no expected numbers.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::io::Write;

extern "C" {
    fn dlopen(file: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

const RTLD_NOW: c_int = 2;
const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();

fn presence(p: *mut c_void) -> &'static str {
    if p.is_null() {
        "absent"
    } else {
        "present"
    }
}

fn lookup(handle: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: a valid handle (or RTLD_DEFAULT) and a NUL-terminated name.
    unsafe { dlsym(handle, name.as_ptr()) }
}

fn main() {
    if let Some(arg) = std::env::args().nth(1) {
        if arg == "--help" {
            println!(
                "egl_probe: prints what dlsym answers about eglGetDisplay before and after \
                 libEGL is loaded (no flags; see examples/README.md)"
            );
            return;
        }
        eprintln!("egl_probe: unknown argument {arg:?} (it takes none)");
        std::process::exit(2);
    }
    let mut out = Vec::new();
    let before = lookup(RTLD_DEFAULT, c"eglGetDisplay");
    writeln!(out, "before: eglGetDisplay={}", presence(before)).unwrap();
    // SAFETY: a NUL-terminated library name.
    let egl = unsafe { dlopen(c"libEGL.so.1".as_ptr(), RTLD_NOW) };
    let get_display = if egl.is_null() {
        std::ptr::null_mut()
    } else {
        lookup(egl, c"eglGetDisplay")
    };
    writeln!(out, "after: eglGetDisplay={}", presence(get_display)).unwrap();
    if !get_display.is_null() {
        // SAFETY: EGL's signatures.
        let (display, initialized) = unsafe {
            let get_display: unsafe extern "C" fn(*mut c_void) -> *mut c_void =
                std::mem::transmute(get_display);
            let display = get_display(std::ptr::null_mut());
            let init = lookup(egl, c"eglInitialize");
            let initialized = !display.is_null() && !init.is_null() && {
                let init: unsafe extern "C" fn(*mut c_void, *mut i32, *mut i32) -> u32 =
                    std::mem::transmute(init);
                let (mut major, mut minor) = (0, 0);
                init(display, &mut major, &mut minor) != 0
            };
            (display, initialized)
        };
        writeln!(
            out,
            "display: {}",
            if display.is_null() { "none" } else { "some" }
        )
        .unwrap();
        if !display.is_null() {
            let result = if initialized { "ok" } else { "failed" };
            writeln!(out, "initialize: {result}").unwrap();
        }
    }
    let global = lookup(RTLD_DEFAULT, c"eglGetDisplay");
    writeln!(out, "global: eglGetDisplay={}", presence(global)).unwrap();
    if std::io::stdout().write_all(&out).is_err() {
        std::process::exit(1);
    }
}
