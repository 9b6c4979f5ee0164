//! The table of real functions: for every wrapped entry point, the address of the
//! implementation the program would have called without the agent. A leaf: it depends on
//! nothing of the agent but the generated names.
//!
//! Invariant: a slot holds 0 (not resolved yet) or a real implementation, never an address
//! inside the agent (a wrapper, the [`missing`] stub) nor code that jumps into the agent
//! (a PLT entry whose GOT slot holds a wrapper). Every store goes through [`acceptable`], or
//! (`set_checked`) the same check made by the caller on a snapshot of the mappings.
//! An entry point no loaded library defines resolves to [`missing`] without being stored, so
//! it is looked up again once the loader has loaded something new (a program that dlopens
//! libEGL after its first GL call, as Qt's EGL plugin does).
//!
//! Resolution never starts or touches the capture: it may run at any time, from any wrapper,
//! also inside the agent's own initialisation.

use crate::generated::{FUNCTION_COUNT, NAMES};
use crate::table;
use libc::{c_char, c_int, c_void, dl_phdr_info, size_t};
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

static REAL: [AtomicUsize; FUNCTION_COUNT] = [const { AtomicUsize::new(0) }; FUNCTION_COUNT];
/// The loader's count of loaded objects when entry point `i` was last found missing (0:
/// never): nothing new to find while it stays the same.
static MISSING_AT: [AtomicU64; FUNCTION_COUNT] = [const { AtomicU64::new(0) }; FUNCTION_COUNT];

/// Address of the real implementation of entry point `i` ([`missing`] when none is loaded).
#[inline(always)]
pub fn get(i: usize) -> usize {
    match REAL[i].load(Relaxed) {
        0 => resolve(i),
        p => p,
    }
}

/// The recorded real function of entry point `i` (0 if none), without resolving.
pub fn raw(i: usize) -> usize {
    REAL[i].load(Relaxed)
}

/// Records `p` as the real function of entry point `i`; refused (false) when `p` is not
/// [`acceptable`].
pub fn set(i: usize, p: usize) -> bool {
    if !acceptable(p) {
        return false;
    }
    REAL[i].store(p, Relaxed);
    true
}

/// [`set`] for a caller that has checked `p` itself against a snapshot of the process's
/// mappings (`live`: a dispatch table of 3,000 entries would otherwise cost two system calls
/// per entry, on the render thread `gpuheat attach` holds): `acceptable_here` must say
/// whether `p` is, or jumps into, the agent, as [`acceptable`] does by reading memory.
pub fn set_checked(i: usize, p: usize, leads_to_agent: bool) -> bool {
    if p == 0 || leads_to_agent || in_agent(p) {
        return false;
    }
    REAL[i].store(p, Relaxed);
    true
}

/// Records `p` as the real function of entry point `i` unless one is recorded already.
pub fn set_if_unset(i: usize, p: usize) {
    if acceptable(p) {
        let _ = REAL[i].compare_exchange(0, p, Relaxed, Relaxed);
    }
}

/// Stands in for an entry point no loaded library provides, so a wrapper never jumps to 0.
extern "C" fn missing_stub() -> usize {
    0
}

/// The address a wrapper calls for an entry point no loaded library provides.
pub fn missing() -> usize {
    missing_stub as *const () as usize
}

/// The real implementation of the entry point called `name`, if a loaded library has one.
pub fn by_name(name: &CStr) -> Option<usize> {
    let p = get(table::index_of(name.to_bytes())?);
    (p != missing()).then_some(p)
}

#[cold]
fn resolve(i: usize) -> usize {
    let generation = load_count();
    if MISSING_AT[i].load(Relaxed) == generation {
        return missing();
    }
    let Ok(name) = CStr::from_bytes_with_nul(NAMES[i].as_bytes()) else {
        return missing();
    };
    let p = lookup(name);
    if p == 0 {
        MISSING_AT[i].store(generation, Relaxed);
        return missing();
    }
    match REAL[i].compare_exchange(0, p, Relaxed, Relaxed) {
        Ok(_) => p,
        Err(other) => other,
    }
}

/// Finds `name` the way the program's own references would: the next definition after the
/// agent, then the global scope, then the GL libraries loaded privately (a plugin's libEGL),
/// then the real GetProcAddress of the entry point's own window-system API. 0 when none.
fn lookup(name: &CStr) -> usize {
    for handle in [libc::RTLD_NEXT, libc::RTLD_DEFAULT] {
        let p = real_dlsym(handle, name);
        if acceptable(p) {
            return p;
        }
    }
    let p = in_gl_libraries(name);
    if p != 0 {
        return p;
    }
    proc_address(name)
}

/// The real GetProcAddress answer for `name`, asking only loaders that may know it: EGL for
/// `egl*`, GLX for `glX*`, either for `gl*` (0 when none answers).
pub fn proc_address(name: &CStr) -> usize {
    let bytes = name.to_bytes();
    let egl = !bytes.starts_with(b"glX");
    let glx = !bytes.starts_with(b"egl");
    let loaders: [(&CStr, bool); 3] = [
        (c"eglGetProcAddress", egl),
        (c"glXGetProcAddressARB", glx),
        (c"glXGetProcAddress", glx),
    ];
    for (loader, wanted) in loaders {
        if !wanted {
            continue;
        }
        let Some(idx) = table::index_of(loader.to_bytes()) else {
            continue;
        };
        // Not `get`: a loader is found without asking another loader.
        let mut f = REAL[idx].load(Relaxed);
        if f == 0 {
            f = [libc::RTLD_NEXT, libc::RTLD_DEFAULT]
                .into_iter()
                .map(|h| real_dlsym(h, loader))
                .find(|&p| acceptable(p))
                .unwrap_or_else(|| in_gl_libraries(loader));
            if f == 0 {
                continue;
            }
            set_if_unset(idx, f);
        }
        // SAFETY: both loaders take a C string and return a function pointer.
        let p = unsafe {
            let get: unsafe extern "C" fn(*const c_char) -> usize = std::mem::transmute(f);
            get(name.as_ptr())
        };
        if acceptable(p) {
            return p;
        }
    }
    0
}

/// Libraries that define GL/EGL/GLX entry points.
const GL_LIBRARIES: [&str; 6] = [
    "libEGL",
    "libGLX",
    "libGL.so",
    "libGLESv2",
    "libGLESv1_CM",
    "libOpenGL",
];

/// Whether `p` lies in the GL stack itself (libglvnd, Mesa's libraries and drivers): its
/// calls to GetProcAddress or `dlsym` are the stack's own plumbing, not the program's (glvnd's
/// libGL.so.1 loads its GLX functions lazily through libGLX; handing it our wrapper would
/// make its export lead back to the wrapper whose real function it is).
pub fn in_gl_stack(p: usize) -> bool {
    const STACK: [&str; 4] = ["libGLdispatch", "libglapi", "libgallium", "libGLESv1_CM"];
    // SAFETY: Dl_info is plain data; dladdr only reads the loader's tables.
    let info = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(p as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return false;
        }
        info
    };
    // SAFETY: the loader's NUL-terminated file name.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    let base = path.rsplit(|&b| b == b'/').next().unwrap_or(&[]);
    GL_LIBRARIES
        .iter()
        .chain(STACK.iter())
        .any(|l| base.starts_with(l.as_bytes()))
        || base.windows(7).any(|w| w == b"_dri.so")
}

/// `name` in a loaded GL or OpenVG library, however it was loaded (a plugin's private
/// dependency is in no scope the agent searches by default). libOpenVG is not part of the GL
/// stack for [`in_gl_stack`]: a VG library layered on GLES is one of the program's modules,
/// whose GL calls are the children of its VG calls.
fn in_gl_libraries(name: &CStr) -> usize {
    for path in loaded_objects() {
        let base = path.to_bytes().rsplit(|&b| b == b'/').next().unwrap_or(&[]);
        if !GL_LIBRARIES
            .iter()
            .chain(&["libOpenVG"])
            .any(|l| base.starts_with(l.as_bytes()))
        {
            continue;
        }
        // SAFETY: RTLD_NOLOAD never loads anything; the reference is dropped below.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        let p = real_dlsym(h, name);
        // SAFETY: the reference taken above.
        unsafe { libc::dlclose(h) };
        if acceptable(p) {
            return p;
        }
    }
    0
}

/// Whether `p` may be recorded as a real function: not 0, not inside the agent, and not code
/// that jumps into the agent within three hops (PLT entries and relays).
pub fn acceptable(p: usize) -> bool {
    let mut at = p;
    for _ in 0..4 {
        if at == 0 || in_agent(at) {
            return false;
        }
        match jump_target(at) {
            Some(next) => at = next,
            None => return true,
        }
    }
    true
}

/// Where the jump at `p` goes: `jmp rel32`, `jmp rel8`, `jmp [rip+disp32]` (optionally after
/// `endbr64` and a `bnd` prefix); `None` for anything else or memory that cannot be read.
fn jump_target(p: usize) -> Option<usize> {
    let mut code = [0u8; 12];
    if !read_memory(p, &mut code) {
        return None;
    }
    let mut k = 0;
    if code.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        k = 4;
    }
    if code[k] == 0xf2 {
        k += 1;
    }
    let rel32 =
        |at: usize| i32::from_le_bytes([code[at], code[at + 1], code[at + 2], code[at + 3]]);
    match code[k] {
        0xe9 => Some((p + k + 5).wrapping_add_signed(rel32(k + 1) as isize)),
        0xeb => Some((p + k + 2).wrapping_add_signed(code[k + 1] as i8 as isize)),
        0xff if code[k + 1] == 0x25 => {
            let slot = (p + k + 6).wrapping_add_signed(rel32(k + 2) as isize);
            let mut word = [0u8; 8];
            read_memory(slot, &mut word).then(|| usize::from_le_bytes(word))
        }
        _ => None,
    }
}

/// Copies memory at `p` into `out` through the kernel, so an unmapped address is an error,
/// never a fault.
fn read_memory(p: usize, out: &mut [u8]) -> bool {
    let local = libc::iovec {
        iov_base: out.as_mut_ptr() as *mut c_void,
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: p as *mut c_void,
        iov_len: out.len(),
    };
    // SAFETY: reads our own memory into `out`; the kernel checks the source range.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == out.len() as isize
}

/// Whether `p` lies in one of the agent's own segments.
pub fn in_agent(p: usize) -> bool {
    agent_segments().iter().any(|&(s, e)| p >= s && p < e)
}

/// The agent's loaded segments (found by the address of this function).
pub fn agent_segments() -> &'static [(usize, usize)] {
    static SEG: OnceLock<Vec<(usize, usize)>> = OnceLock::new();
    SEG.get_or_init(|| {
        let mut found = (agent_segments as *const () as usize, Vec::new());
        // SAFETY: the callback only reads what the loader hands it.
        unsafe {
            libc::dl_iterate_phdr(Some(segments_cb), &mut found as *mut _ as *mut c_void);
        }
        found.1
    })
}

unsafe extern "C" fn segments_cb(info: *mut dl_phdr_info, _: size_t, data: *mut c_void) -> c_int {
    // SAFETY: the loader passes a valid record; `data` is the tuple of `agent_segments`.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut (usize, Vec<(usize, usize)>))) };
    let base = info.dlpi_addr as usize;
    let mut segments = Vec::new();
    for k in 0..info.dlpi_phnum as usize {
        // SAFETY: `dlpi_phnum` headers follow `dlpi_phdr`.
        let ph = unsafe { &*info.dlpi_phdr.add(k) };
        if ph.p_type == libc::PT_LOAD {
            let start = base.wrapping_add(ph.p_vaddr as usize);
            segments.push((start, start.wrapping_add(ph.p_memsz as usize)));
        }
    }
    if segments.iter().any(|&(s, e)| found.0 >= s && found.0 < e) {
        found.1 = segments;
        return 1;
    }
    0
}

/// Paths of the loaded objects, in load order.
fn loaded_objects() -> Vec<std::ffi::CString> {
    unsafe extern "C" fn cb(info: *mut dl_phdr_info, _: size_t, data: *mut c_void) -> c_int {
        // SAFETY: as in `segments_cb`; `data` is the vector below.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<std::ffi::CString>)) };
        if !info.dlpi_name.is_null() {
            // SAFETY: the loader's NUL-terminated name.
            let name = unsafe { CStr::from_ptr(info.dlpi_name) };
            if !name.is_empty() {
                out.push(name.to_owned());
            }
        }
        0
    }
    let mut out: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: the callback only reads what the loader hands it.
    unsafe { libc::dl_iterate_phdr(Some(cb), &mut out as *mut _ as *mut c_void) };
    out
}

/// The loader's count of objects loaded so far (cheap: stops at the first object).
fn load_count() -> u64 {
    unsafe extern "C" fn cb(info: *mut dl_phdr_info, size: size_t, data: *mut c_void) -> c_int {
        if size >= std::mem::size_of::<dl_phdr_info>() {
            // SAFETY: as in `segments_cb`; `data` is the counter below.
            unsafe { *(data as *mut u64) = (*info).dlpi_adds };
        }
        1
    }
    let mut n = 0u64;
    // SAFETY: the callback only reads what the loader hands it.
    unsafe { libc::dl_iterate_phdr(Some(cb), &mut n as *mut u64 as *mut c_void) };
    n
}

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

fn real_dlsym_fn() -> Option<DlsymFn> {
    static REAL_DLSYM: OnceLock<usize> = OnceLock::new();
    let p = *REAL_DLSYM.get_or_init(|| {
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

/// The real `dlsym`, for the agent's own lookups (never the agent's interposed `dlsym`).
/// `RTLD_NEXT` and `RTLD_DEFAULT` are relative to the agent.
pub fn real_dlsym(handle: *mut c_void, name: &CStr) -> usize {
    match real_dlsym_fn() {
        // SAFETY: valid handle or pseudo-handle, NUL-terminated name.
        Some(f) => unsafe { f(handle, name.as_ptr()) as usize },
        None => 0,
    }
}

/// The real `dlsym` with a raw name, for the interposer.
///
/// # Safety
/// Same contract as libc's `dlsym`.
pub unsafe fn real_dlsym_raw(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    match real_dlsym_fn() {
        // SAFETY: forwarded contract.
        Some(f) => unsafe { f(handle, name) },
        None => std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_never_a_real_function() {
        assert!(!acceptable(missing()));
        assert!(!acceptable(0));
        assert!(!acceptable(acceptable as *const () as usize));
        assert!(acceptable(libc::getpid as *const () as usize));
    }

    #[test]
    fn code_that_jumps_into_the_agent_is_never_a_real_function() {
        // A relay like the ones PLT entries and inline hooks use: endbr64; jmp [rip+0]; dq F.
        let relay = |target: usize| {
            // SAFETY: a fresh private anonymous page, written before it is read.
            unsafe {
                let page = libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                ) as *mut u8;
                assert_ne!(page as *mut c_void, libc::MAP_FAILED);
                let code = [0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0, 0, 0, 0];
                std::ptr::copy_nonoverlapping(code.as_ptr(), page, code.len());
                std::ptr::copy_nonoverlapping(
                    target.to_le_bytes().as_ptr(),
                    page.add(code.len()),
                    8,
                );
                page as usize
            }
        };
        let to_agent = relay(missing());
        let to_libc = relay(libc::getpid as *const () as usize);
        assert!(!acceptable(to_agent));
        assert!(acceptable(to_libc));
        let i = table::index_of(b"glFlush").unwrap();
        assert!(!set(i, to_agent));
        assert_ne!(raw(i), to_agent);
        for p in [to_agent, to_libc] {
            // SAFETY: the pages mapped above.
            unsafe { libc::munmap(p as *mut c_void, 4096) };
        }
    }

    #[test]
    fn an_api_that_is_not_loaded_resolves_to_missing() {
        // The unit-test binary links no EGL: nothing may answer for it, and `set` refuses
        // the agent's own code.
        let i = table::index_of(b"eglGetCurrentContext").unwrap();
        assert_eq!(get(i), missing());
        assert_eq!(raw(i), 0);
        assert!(!set(i, missing()));
        assert_eq!(raw(i), 0);
        assert_eq!(proc_address(c"eglGetCurrentContext"), 0);
    }
}
