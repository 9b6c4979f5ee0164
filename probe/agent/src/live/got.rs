//! Layer (a): GOT entries of every loaded module.
//!
//! For each module other than the agent, the GL/EGL/GLX stack itself (libglvnd, Mesa's
//! libraries and drivers) and the C library/loader, every `R_X86_64_JUMP_SLOT` (PLT calls of
//! C programs) and `R_X86_64_GLOB_DAT` (`-fno-plt` and rustc's `call *f@GOTPCREL`, address
//! taking) relocation naming a wrapped entry point gets the wrapper's address; `dlsym` and
//! `dlopen` get the thunks of [`super::dlfcn`]. Before a slot is overwritten, what it held
//! becomes the entry point's real function if none is recorded yet, except when that value
//! cannot be the real function:
//! - it lies in the module itself: a lazily bound JUMP_SLOT still pointing at its PLT;
//! - it leads to one of our wrappers: a PLT entry (a non-PIE program's canonical function
//!   address) whose GOT slot we already redirected, or a wrapper itself.
//!
//! Then the address is looked up by name: in the module's own scope (`dlopen(RTLD_NOLOAD)` +
//! `dlsym`), in the GL libraries, and through the real `eglGetProcAddress`/
//! `glXGetProcAddressARB`. A slot whose real function cannot be found is left alone.
//!
//! Stores are single aligned 8-byte writes; a RELRO'd page is made writable for the store
//! and restored. Modules are remembered by (bias, dynamic section, name); the loader's
//! `dlpi_adds`/`dlpi_subs` counters make a call with nothing new nearly free.

use super::mem::{self, Maps};
use super::wrapper as wrapper_address;
use super::{dlfcn, elf, inline, Ctx, HookReport};
use crate::{real, table};
use libc::c_void;
use std::collections::HashSet;
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What layer (a) remembers between calls.
#[derive(Default)]
pub(crate) struct GotState {
    scanned: HashSet<(usize, usize, String)>,
    counts: Option<(u64, u64)>,
    noted: HashSet<String>,
}

/// Libraries whose GOTs are never touched: the GL stack (its internal calls are not the
/// program's, and patching them could loop), the C library and the loader.
fn is_skipped_library(base: &str) -> bool {
    const PREFIXES: [&str; 13] = [
        "libGLdispatch.",
        "libGLX",
        "libEGL",
        "libGL.so",
        "libGLESv1_CM.",
        "libGLESv2.",
        "libOpenGL.",
        "libglapi.",
        "libgallium",
        "libnvidia-",
        "linux-vdso",
        "libc.so",
        "ld-linux",
    ];
    PREFIXES.iter().any(|p| base.starts_with(p)) || base.contains("_dri.so")
}

/// Libraries that define GL/EGL/GLX entry points, searched when a name must be resolved.
pub(crate) const GL_LIBS: [&CStr; 7] = [
    c"libEGL.so.1",
    c"libGLESv2.so.2",
    c"libOpenGL.so.0",
    c"libGL.so.1",
    c"libGLX.so.0",
    c"libGLESv1_CM.so.1",
    c"libglapi.so.0",
];

/// Scans the modules loaded since the last call (all of them when `force`).
pub(crate) fn patch_modules(st: &mut GotState, ctx: &Ctx, report: &mut HookReport, force: bool) {
    let counts = elf::load_counters();
    if !force && st.counts == Some(counts) {
        return;
    }
    if st.counts.is_some_and(|(_, subs)| subs != counts.1) {
        // Something was unloaded: a new module may sit where an old one was. Rescanning is
        // safe, slots already holding our wrappers are skipped.
        st.scanned.clear();
    }
    let (modules, adds, subs) = elf::modules();
    st.counts = Some((adds, subs));
    let maps = Maps::read();
    for m in modules {
        let key = m.key();
        if st.scanned.contains(&key) {
            continue;
        }
        if ctx.agent_module(&m) || is_skipped_library(m.basename()) {
            st.scanned.insert(key);
            continue;
        }
        // Hold a reference so the module cannot go away while we read and write it.
        // SAFETY: plain dlopen calls; RTLD_NOLOAD never loads anything.
        let h = unsafe {
            match m.dlopen_name() {
                None => libc::dlopen(std::ptr::null(), libc::RTLD_LAZY),
                Some(n) => libc::dlopen(n.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD),
            }
        };
        if h.is_null() {
            st.scanned.insert(key);
            continue;
        }
        // SAFETY: the module is pinned by `h`.
        unsafe { patch_module(st, &m, h, ctx, &maps, report) };
        // SAFETY: the reference taken above.
        unsafe { libc::dlclose(h) };
        st.scanned.insert(key);
        report.modules += 1;
    }
    // Our own dl* calls must not leave an error for the program's next dlerror().
    // SAFETY: dlerror has no preconditions.
    unsafe { libc::dlerror() };
}

/// Redirects the GOT slots of module `m` (pinned by the handle `h`).
///
/// # Safety
/// `m` must stay loaded for the call (`h` is a reference to it).
unsafe fn patch_module(
    st: &mut GotState,
    m: &elf::Module,
    h: *mut c_void,
    ctx: &Ctx,
    maps: &Maps,
    report: &mut HookReport,
) {
    // SAFETY: the caller keeps `m` loaded.
    for imp in unsafe { elf::imports(m, elf::OURS) } {
        let name = imp.name.to_bytes();
        let (target, index) = match name {
            b"dlsym" => (dlfcn::dlsym_thunk(), None),
            b"dlopen" => (dlfcn::dlopen_thunk(), None),
            _ => match table::index_of(name) {
                Some(i) => (wrapper_address(i), Some(i)),
                None => continue,
            },
        };
        if target == 0 {
            continue;
        }
        // SAFETY: an aligned GOT slot inside the loaded module (`elf::imports` checked it).
        let slot = unsafe { &*(imp.slot as *const AtomicUsize) };
        let cur = slot.load(Ordering::Acquire);
        if cur == target {
            continue;
        }
        if let Some(i) = index {
            if !ctx.leads_to_agent(maps, cur) {
                let candidate = if cur == 0 || m.contains(cur) {
                    resolve_by_name(imp.name, Some((m, h)), ctx, maps)
                } else {
                    Some(cur)
                };
                if let Some(c) = candidate {
                    ctx.set_real_if_unset(i, c);
                }
            }
            if !ctx.real_ok(real::raw(i)) {
                let what = format!(
                    "got: no real function for {} (in {}); slot left alone",
                    imp.name.to_string_lossy(),
                    display_name(m)
                );
                if st.noted.insert(what.clone()) {
                    report.notes.push(what);
                }
                continue;
            }
        }
        // SAFETY: a GOT slot of the module; `target` is a wrapper or thunk of the agent.
        if unsafe { mem::write_word(maps, imp.slot, target) } {
            report.got_patched += 1;
        } else {
            let what = format!(
                "got: could not write slot {:#x} of {}",
                imp.slot,
                display_name(m)
            );
            if st.noted.insert(what.clone()) {
                report.notes.push(what);
            }
        }
    }
}

fn display_name(m: &elf::Module) -> &str {
    if m.order == 0 {
        "the program"
    } else {
        m.basename()
    }
}

/// The real address of `name` as a program would bind it, never one of ours.
pub(crate) fn resolve_by_name(
    name: &CStr,
    module: Option<(&elf::Module, *mut c_void)>,
    ctx: &Ctx,
    maps: &Maps,
) -> Option<usize> {
    let ok = |p: usize| {
        p != 0
            && !ctx.leads_to_agent(maps, p)
            && module.is_none_or(|(m, _)| !m.contains(p) || !is_plt_like(maps, p))
    };
    if let Some((_, h)) = module {
        let p = crate::real::real_dlsym(h, name);
        if ok(p) {
            return Some(p);
        }
    }
    for lib in GL_LIBS {
        // SAFETY: RTLD_NOLOAD never loads anything.
        let h = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        let p = crate::real::real_dlsym(h, name);
        // SAFETY: the reference taken above.
        unsafe { libc::dlclose(h) };
        if ok(p) {
            return Some(p);
        }
    }
    let p = crate::real::proc_address(name);
    ok(p).then_some(p)
}

/// Whether `p` starts with an indirect jump through memory (a PLT entry).
fn is_plt_like(maps: &Maps, p: usize) -> bool {
    // SAFETY: `follow_jumps` only reads mapped memory.
    unsafe { inline::follow_jumps(maps, p, 1) != p }
}

impl GotState {
    /// Whether [`patch_modules`] ran at least once.
    pub(crate) fn installed(&self) -> bool {
        self.counts.is_some()
    }

    /// Whether modules were loaded or unloaded since the last scan.
    pub(crate) fn counts_changed(&self) -> bool {
        self.counts != Some(elf::load_counters())
    }
}
