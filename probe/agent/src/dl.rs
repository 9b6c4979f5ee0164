//! `dlsym` interposition (launch mode). Programs that load GL themselves (`dlopen("libEGL.so.1")`
//! then `dlsym`, as glmark2, SDL and glad-based loaders do) never call the exported wrappers
//! by symbol; handing them our wrapper from `dlsym` brings them in. dlsym is not in the
//! Khronos registry, so this one wrapper is written by hand.
//!
//! The agent must stay invisible: a lookup answers what it would without the agent, with our
//! wrapper standing in for the real function it found. glibc answers `RTLD_DEFAULT` from the
//! agent (its caller), whose preloaded exports come first: a lookup that only the agent's own
//! wrapper answers is redone as the program would see it (after the agent, then in the
//! calling module's own scope, where a plugin's private libEGL is) and fails when nothing real
//! is there, e.g. `dlsym(RTLD_DEFAULT, "eglGetDisplay")` before libEGL is loaded.

use crate::{callsite, hook, real};
use libc::{c_char, c_void};
use std::ffi::CStr;

/// The interposed `dlsym`: GL/EGL/GLX entry points come back as our wrappers.
///
/// A program's own `dlsym(RTLD_NEXT, …)` is answered relative to the agent (which glibc sees
/// as the caller): for a preloaded agent that is the object right after the program anyway.
///
/// # Safety
/// Same contract as libc's `dlsym`.
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let caller = callsite::caller!() as usize;
    // SAFETY: the caller's arguments, forwarded.
    let p = unsafe { real::real_dlsym_raw(handle, name) };
    if p.is_null() || name.is_null() {
        return p;
    }
    // SAFETY: a NUL-terminated name (the real dlsym just read it).
    let own = unsafe { CStr::from_ptr(name) }
        .to_bytes()
        .starts_with(b"gpuheat_");
    let p = if own {
        // The agent's own entries (the Vulkan loader looks up the layer's negotiation
        // function in it): nobody else defines them, and no wrapper stands for them.
        return p;
    } else if real::in_agent(p as usize) {
        // SAFETY: a NUL-terminated name (the real dlsym just read it).
        let name = unsafe { CStr::from_ptr(name) };
        match std::panic::catch_unwind(|| as_without_agent(handle, name, caller)) {
            Ok(Some(q)) => q,
            _ => {
                // What the program would have got: a failed lookup, with its dlerror().
                // SAFETY: a valid name, the pseudo-handle of an empty search.
                return unsafe { real::real_dlsym_raw(libc::RTLD_NEXT, name.as_ptr()) };
            }
        }
    } else {
        p as usize
    };
    hook::proc_address(name as usize, p, caller as u64) as *mut c_void
}

/// The answer to a lookup the agent's own export answered, had the agent not been there:
/// the next definition in the global scope, else the one in the calling module's scope.
fn as_without_agent(handle: *mut c_void, name: &CStr, caller: usize) -> Option<usize> {
    let next = real::real_dlsym(libc::RTLD_NEXT, name);
    if real::acceptable(next) {
        return Some(next);
    }
    if !handle.is_null() {
        // A handle whose scope holds the agent (dlopen(NULL)): the global scope, done above.
        return None;
    }
    // SAFETY: Dl_info is plain data; dladdr only reads the loader's tables and fills the
    // local `info`.
    let (found, info) = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        (libc::dladdr(caller as *const c_void, &mut info) != 0, info)
    };
    if !found || info.dli_fname.is_null() || real::in_agent(caller) {
        return None;
    }
    // SAFETY: the caller's module is loaded; RTLD_NOLOAD never loads anything.
    let h = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if h.is_null() {
        return None;
    }
    let q = real::real_dlsym(h, name);
    // SAFETY: the reference taken above.
    unsafe { libc::dlclose(h) };
    real::acceptable(q).then_some(q)
}
