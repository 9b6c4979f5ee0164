//! What the program's `dlopen` and `dlsym` GOT slots point to once live hooks are in.
//!
//! glibc answers both relative to the *caller* (the return address it finds on the stack):
//! `dlsym(RTLD_NEXT, …)` searches after the caller's object, `dlopen` of a bare name uses the
//! caller's DT_RUNPATH/DT_RPATH and `$ORIGIN`. A Rust wrapper calling the real functions
//! would make the agent the caller. So the slots point to two small assembly thunks that
//! tail-jump to the real function with the program's return address untouched whenever
//! the caller matters, and go through Rust otherwise:
//!
//! - `dlsym`: `RTLD_NEXT` goes straight to the real `dlsym` (a program asking for the next
//!   definition is an interposer itself; what it gets leads to code we hook anyway). Any
//!   other handle: the real lookup, then, like the launch-mode interposer, a wrapped entry
//!   point comes back as our wrapper with the real address recorded. A `RTLD_DEFAULT`
//!   lookup that only the agent's own exports answer is retried in the caller's module's
//!   scope and otherwise fails, as it would without the agent.
//! - `dlopen`: a path with a `/` and no `$`, or a bare name from a caller module with no
//!   DT_RUNPATH/DT_RPATH, finds the same file whoever calls; those go through Rust, which
//!   calls the real `dlopen` and then [`super::on_new_modules`] so the new modules' GOTs are
//!   patched before the program uses them. Other calls tail-jump to the real `dlopen` and
//!   only mark modules as pending: they are patched at the next `dlsym`, `dlopen` or
//!   [`super::install`] (each swap).

use super::elf;
use super::wrapper as wrapper_address;
use crate::table;
use libc::{c_char, c_int, c_void};
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The real `dlsym`, read by the thunk.
static GPUHEAT_LIVE_REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);
/// The real `dlopen`, read by the thunk.
static GPUHEAT_LIVE_REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);

std::arch::global_asm!(
    ".pushsection .text.gpuheat_live_dlfcn,\"ax\",@progbits",
    ".globl gpuheat_live_dlsym_thunk",
    ".hidden gpuheat_live_dlsym_thunk",
    ".type gpuheat_live_dlsym_thunk,@function",
    ".p2align 4",
    "gpuheat_live_dlsym_thunk:",
    "cmp rdi, -1", // RTLD_NEXT
    "je 2f",
    "mov rdx, qword ptr [rsp]", // the caller, as a third argument
    "jmp {live_dlsym}",
    "2:",
    "jmp qword ptr [rip + {real_dlsym}]",
    ".size gpuheat_live_dlsym_thunk, . - gpuheat_live_dlsym_thunk",
    ".globl gpuheat_live_dlopen_thunk",
    ".hidden gpuheat_live_dlopen_thunk",
    ".type gpuheat_live_dlopen_thunk,@function",
    ".p2align 4",
    "gpuheat_live_dlopen_thunk:",
    "push rdi",
    "push rsi",
    "sub rsp, 8",
    "mov rdx, qword ptr [rsp + 24]", // the caller
    "call {caller_matters}",
    "add rsp, 8",
    "pop rsi",
    "pop rdi",
    "test eax, eax",
    "jnz 3f",
    "jmp {live_dlopen}",
    "3:",
    "jmp qword ptr [rip + {real_dlopen}]",
    ".size gpuheat_live_dlopen_thunk, . - gpuheat_live_dlopen_thunk",
    ".popsection",
    live_dlsym = sym live_dlsym,
    real_dlsym = sym GPUHEAT_LIVE_REAL_DLSYM,
    caller_matters = sym dlopen_caller_matters,
    live_dlopen = sym live_dlopen,
    real_dlopen = sym GPUHEAT_LIVE_REAL_DLOPEN,
);

extern "C" {
    fn gpuheat_live_dlsym_thunk();
    fn gpuheat_live_dlopen_thunk();
}

/// Finds the real `dlsym` and `dlopen` (those the program's own lookups would bind: the
/// global scope first). Returns false when either is missing.
pub(crate) fn init() -> bool {
    if GPUHEAT_LIVE_REAL_DLSYM.load(Ordering::Acquire) == 0 {
        let mut p = 0;
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5"] {
            // SAFETY: NUL-terminated strings.
            p = unsafe { libc::dlvsym(libc::RTLD_DEFAULT, c"dlsym".as_ptr(), version.as_ptr()) }
                as usize;
            if p != 0 {
                break;
            }
        }
        GPUHEAT_LIVE_REAL_DLSYM.store(p, Ordering::Release);
    }
    if GPUHEAT_LIVE_REAL_DLOPEN.load(Ordering::Acquire) == 0 {
        let p = crate::real::real_dlsym(libc::RTLD_DEFAULT, c"dlopen");
        GPUHEAT_LIVE_REAL_DLOPEN.store(p, Ordering::Release);
    }
    GPUHEAT_LIVE_REAL_DLSYM.load(Ordering::Acquire) != 0
        && GPUHEAT_LIVE_REAL_DLOPEN.load(Ordering::Acquire) != 0
}

/// Address for the program's `dlsym` slots (0 until [`init`] succeeded).
pub(crate) fn dlsym_thunk() -> usize {
    if GPUHEAT_LIVE_REAL_DLSYM.load(Ordering::Acquire) == 0 {
        0
    } else {
        gpuheat_live_dlsym_thunk as *const () as usize
    }
}

/// Address for the program's `dlopen` slots (0 until [`init`] succeeded).
pub(crate) fn dlopen_thunk() -> usize {
    if GPUHEAT_LIVE_REAL_DLOPEN.load(Ordering::Acquire) == 0 {
        0
    } else {
        gpuheat_live_dlopen_thunk as *const () as usize
    }
}

fn real_dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let f = GPUHEAT_LIVE_REAL_DLSYM.load(Ordering::Acquire);
    if f == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: `f` is libc's dlsym, called with the caller's handle and name.
    unsafe {
        let f: unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void =
            std::mem::transmute(f);
        f(handle, name)
    }
}

/// The module containing `addr`.
fn module_of(addr: usize) -> Option<elf::Module> {
    elf::modules().0.into_iter().find(|m| m.contains(addr))
}

/// `dlsym` for every handle but `RTLD_NEXT`, called by the thunk with the caller's address.
unsafe extern "C" fn live_dlsym(
    handle: *mut c_void,
    name: *const c_char,
    caller: usize,
) -> *mut c_void {
    // SAFETY: called by the thunk with the program's dlsym arguments (libc's
    // contract: a handle or pseudo-handle and a NUL-terminated name); dlopen/dlclose
    // take our own references to loaded modules.
    unsafe {
        let mut p = real_dlsym(handle, name);
        if name.is_null() {
            return p;
        }
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let ctx = super::Ctx::new();
            if handle.is_null() && (p.is_null() || ctx.in_agent(p as usize)) {
                // RTLD_DEFAULT from the agent sees the global scope and the agent's own exports;
                // from the caller it sees the global scope and the caller's local scope.
                p = std::ptr::null_mut();
                if let Some(m) = module_of(caller).filter(|m| !ctx.agent_module(m)) {
                    let h = match m.dlopen_name() {
                        None => libc::dlopen(std::ptr::null(), libc::RTLD_LAZY),
                        Some(n) => libc::dlopen(n.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD),
                    };
                    if !h.is_null() {
                        let q = real_dlsym(h, name);
                        libc::dlclose(h);
                        if !q.is_null() && !ctx.in_agent(q as usize) {
                            p = q;
                        }
                    }
                }
                if p.is_null() {
                    // Reproduce the real lookup's failure for dlerror().
                    real_dlsym(handle, name);
                    return None;
                }
            }
            super::check_new_modules();
            if p.is_null() {
                return None;
            }
            let i = table::index_of(CStr::from_ptr(name).to_bytes())?;
            if ctx.in_agent(p as usize) {
                return Some(p);
            }
            ctx.set_real_if_unset(i, p as usize);
            libc::dlerror(); // our own lookups succeeded or failed: the program's call succeeded
            let w = wrapper_address(i);
            (w != 0 && ctx.real_ok(crate::real::raw(i))).then_some(w as *mut c_void)
        }));
        match out {
            Ok(Some(q)) => q,
            Ok(None) => p,
            Err(_) => p,
        }
    }
}

/// Whether glibc's answer to this `dlopen` depends on who calls it.
unsafe extern "C" fn dlopen_caller_matters(
    file: *const c_char,
    _flags: c_int,
    caller: usize,
) -> c_int {
    // SAFETY: called by the thunk with the program's dlopen arguments (a
    // NUL-terminated file name or null); modules are only read.
    unsafe {
        let r = std::panic::catch_unwind(|| {
            if file.is_null() {
                return false;
            }
            let f = CStr::from_ptr(file).to_bytes();
            if f.contains(&b'$') {
                return true;
            }
            if f.contains(&b'/') {
                return false;
            }
            match module_of(caller) {
                Some(m) => elf::dyn_info(&m).is_none_or(|d| d.has_search_path),
                None => true,
            }
        });
        let matters = r.unwrap_or(true);
        if matters {
            // The new modules are patched later (next dlsym, dlopen or swap).
            super::mark_pending();
        }
        c_int::from(matters)
    }
}

/// `dlopen` where the caller does not matter: the real call, then the new modules' GOTs.
unsafe extern "C" fn live_dlopen(file: *const c_char, flags: c_int) -> *mut c_void {
    // SAFETY: the thunk only reaches here once the real dlopen is known, with the
    // program's arguments; errno is this thread's.
    unsafe {
        let f = GPUHEAT_LIVE_REAL_DLOPEN.load(Ordering::Acquire);
        // SAFETY: libc's dlopen (the thunk is only installed once it is known).
        let f: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void = std::mem::transmute(f);
        let h = f(file, flags);
        if !h.is_null() {
            let errno = *libc::__errno_location();
            super::on_new_modules();
            *libc::__errno_location() = errno;
        }
        h
    }
}
