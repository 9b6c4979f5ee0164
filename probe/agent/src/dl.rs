//! `dlsym` interposition. Programs that load GL themselves (`dlopen("libEGL.so.1")` then
//! `dlsym`, as glmark2, SDL and glad-based loaders do) never call the exported wrappers by
//! symbol; handing them our wrapper from `dlsym` brings them in. dlsym is not in the Khronos
//! registry, so this one wrapper is written by hand.
//!
//! The agent's own lookups must go to the real `dlsym`, never through this wrapper, or
//! resolving a real GL function would return our own wrapper.

use crate::hook;
use libc::{c_char, c_void};
use std::sync::OnceLock;

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

fn real_dlsym_fn() -> Option<DlsymFn> {
    static REAL: OnceLock<usize> = OnceLock::new();
    let p = *REAL.get_or_init(|| {
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            // SAFETY: NUL-terminated strings; dlvsym is not interposed.
            let p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
            if !p.is_null() {
                return p as usize;
            }
        }
        0
    });
    // SAFETY: a non-zero `p` is libc's dlsym.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, DlsymFn>(p) })
}

/// The real `dlsym`, for the agent's own lookups. `RTLD_NEXT` is relative to the agent.
pub(crate) fn real_dlsym(handle: *mut c_void, name: &std::ffi::CStr) -> usize {
    match real_dlsym_fn() {
        // SAFETY: valid handle or pseudo-handle, NUL-terminated name.
        Some(f) => unsafe { f(handle, name.as_ptr()) as usize },
        None => 0,
    }
}

/// The interposed `dlsym`: GL/EGL/GLX entry points come back as our wrappers.
///
/// A program's own `dlsym(RTLD_NEXT, …)` is answered relative to the agent (which glibc sees
/// as the caller): for a preloaded agent that is the object right after the program anyway.
///
/// # Safety
/// Same contract as libc's `dlsym`.
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let Some(real) = real_dlsym_fn() else {
        return std::ptr::null_mut();
    };
    let p = real(handle, name);
    if p.is_null() || name.is_null() {
        return p;
    }
    hook::proc_address(name as usize, p as usize) as *mut c_void
}
