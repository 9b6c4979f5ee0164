//! Live hooks: bringing a program's GL/EGL/GLX calls to our wrappers after the agent was
//! loaded into it with `dlopen` (attach mode), when symbol interposition no longer applies.
//!
//! Three layers, each described in its module:
//! - [`got`] (a): the GOT slots of every loaded module (JUMP_SLOT and GLOB_DAT), plus the
//!   program's `dlopen`/`dlsym` ([`dlfcn`]), so modules loaded later are patched too and
//!   `dlsym` hands out wrappers as in launch mode;
//! - [`dispatch`] (b): the GL dispatch table of the current context (libglvnd, else Mesa),
//!   which also catches `gl*` pointers the program cached before we came;
//! - [`inline`] (c): the entries of the EGL/GLX functions no table reaches (swaps, make
//!   current, GetProcAddress) in libEGL/libGLX, for pointers cached with the program's own
//!   `dlsym` before we came.
//!
//! [`install`] runs them in the order c, b, a: the inline hooks and the dispatch table fix
//! the real functions of their entry points (a trampoline, the table's old entry), which
//! the GOT layer must not replace with what a slot held (libEGL's hooked entry, a glvnd
//! stub that now leads back to the wrapper).
//!
//! Invariant for every layer: the real pointer of an entry point is never an address inside
//! the agent (a wrapper, the "missing" stub) and never code that leads back to a wrapper (the
//! table of real functions, `crate::real`, refuses both); a slot or table entry that already
//! holds our wrapper is not recorded as real.

mod dispatch;
mod dlfcn;
mod elf;
mod got;
mod inline;
mod mem;

use crate::generated::{FUNCTION_COUNT, NAMES};
use crate::{real, table};
use mem::Maps;
use std::collections::HashSet;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, TryLockError};

/// What one [`install`] (or [`on_new_modules`]) call changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookReport {
    /// GOT slots redirected to a wrapper or to our `dlopen`/`dlsym` in this call.
    pub got_patched: usize,
    /// Modules whose relocations were examined for the first time in this call (the agent
    /// and the GL/EGL/GLX stack are never examined).
    pub modules: usize,
    /// Dispatch-table entries redirected to a wrapper in this call (0 when the table was
    /// already patched).
    pub dispatch_patched: usize,
    /// Entry points whose code got an inline hook in this call.
    pub inline_hooked: Vec<String>,
    /// What was refused or left alone and why, tables patched, and the like: each fact
    /// once, in the call that first saw it.
    pub notes: Vec<String>,
}

impl HookReport {
    /// Everything redirected in this call.
    pub fn total(&self) -> usize {
        self.got_patched + self.dispatch_patched + self.inline_hooked.len()
    }

    /// Adds what a later install call did (an attach installs the layers in several calls).
    pub fn add(&mut self, more: HookReport) {
        self.got_patched += more.got_patched;
        self.modules += more.modules;
        self.dispatch_patched += more.dispatch_patched;
        self.inline_hooked.extend(more.inline_hooked);
        self.notes.extend(more.notes);
    }
}

#[derive(Default)]
struct State {
    self_bound: bool,
    got: got::GotState,
    dispatch: dispatch::DispatchState,
    inline: InlineState,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
/// Set when modules may have been loaded and nobody patched them yet.
static PENDING: AtomicBool = AtomicBool::new(false);
/// (function, trampoline) of every inline hook, also keyed by the patched address.
static INLINE_MAP: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Installs every live hook. Idempotent: a second call patches only what is new (modules
/// loaded since, a dispatch table that became current since or whose entries the GL
/// library refilled, an EGL/GLX library loaded since) and costs little when nothing is
/// (one `dl_iterate_phdr` step and one pass over the table's entries), so it can run at
/// every swap.
///
/// Must be called on the thread whose GL context is current: the dispatch table is the
/// calling thread's. Without a current context the table is skipped (noted) and patched by a
/// later call. Never panics into the caller.
pub fn install() -> HookReport {
    install_layers(Layers::ALL)
}

/// Only the dispatch table of the calling thread's current context (layer b): the one layer
/// that must run on the render thread, so an attach holds that thread for this alone and
/// leaves the rest to [`install_inline`] and [`install_got`].
pub fn install_dispatch() -> HookReport {
    install_layers(Layers {
        table: true,
        ..Layers::NONE
    })
}

/// The inline hooks (and the agent's own GOT), on a thread of the agent's while the program
/// runs on: they need no current context, and they bring the program's swaps to the agent,
/// so a capture can begin its warm-up while [`install_got`] is still at work. A few
/// milliseconds: about ten entry points.
pub fn install_inline() -> HookReport {
    install_layers(Layers {
        inline: true,
        ..Layers::NONE
    })
}

/// The GOT slots of every module, after [`install_inline`], on a thread of the agent's while
/// the program runs on: 20-55 ms for mpv's 237 modules on a 2-core machine the program keeps
/// busy. Calls that reach a slot before it is patched pass through unrecorded, as before any
/// hook; a capture's first recorded frame begins at a swap after all of it is done.
pub fn install_got() -> HookReport {
    install_layers(Layers {
        got: true,
        ..Layers::NONE
    })
}

/// Whether the GOT layer ran in this process before (an earlier attach): then a new one only
/// patches modules loaded since, in a millisecond or two.
pub fn got_installed() -> bool {
    let guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    guard.as_ref().is_some_and(|st| st.got.installed())
}

/// Which layers one [`install_layers`] call installs.
#[derive(Clone, Copy)]
struct Layers {
    /// (b) the current context's dispatch table.
    table: bool,
    /// (c) the inline hooks, with the agent's own GOT.
    inline: bool,
    /// (a) the GOT slots of the program's modules.
    got: bool,
}

impl Layers {
    const NONE: Layers = Layers {
        table: false,
        inline: false,
        got: false,
    };
    const ALL: Layers = Layers {
        table: true,
        inline: true,
        got: true,
    };
}

/// The `layers` asked for, in the order c, b, a.
fn install_layers(layers: Layers) -> HookReport {
    let r = std::panic::catch_unwind(|| {
        let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
        let st = guard.get_or_insert_with(State::default);
        let mut report = HookReport::default();
        // Both hooking layers look up through the real dlsym; the GOT layer's note says when
        // it is missing.
        let dl_found = !(layers.inline || layers.got) || dlfcn::init();
        if layers.got && !dl_found {
            report
                .notes
                .push("dlfcn: real dlopen/dlsym not found; their slots left alone".into());
        }
        // Each step's time, for the note that says where the render thread's hold went.
        let mut clock = std::time::Instant::now();
        let mut steps: Vec<String> = Vec::new();
        let mut lap = |what: &str| {
            steps.push(format!(
                "{:.1} ms {what}",
                clock.elapsed().as_secs_f64() * 1e3
            ));
            clock = std::time::Instant::now();
        };
        if layers.inline {
            if !st.self_bound {
                st.self_bound = true;
                bind_agent_to_itself(&mut report);
            }
            lap("for the agent's own GOT");
            hook_inline_targets(&mut st.inline, &mut report);
            lap("inline");
        }
        if layers.table || layers.got {
            let ctx = Ctx::new();
            let maps = Maps::read();
            lap("reading the process's maps");
            if layers.table {
                dispatch::patch_current(&mut st.dispatch, &ctx, &maps, &mut report);
                lap("for the dispatch table");
            }
            if layers.got {
                PENDING.store(false, Ordering::SeqCst);
                got::patch_modules(&mut st.got, &ctx, &mut report, false);
                drain_pending(st, &mut report);
                lap("for the GOT slots");
            }
        }
        report
            .notes
            .push(format!("live hooks took {}", steps.join(", ")));
        // SAFETY: clears what our own failed RTLD_NOLOAD lookups left for dlerror().
        unsafe { libc::dlerror() };
        report
    });
    r.unwrap_or_else(|_| HookReport {
        notes: vec!["live hooks: internal error, stopped".into()],
        ..HookReport::default()
    })
}

/// Patches the GOTs of modules loaded since the last call (and inline-hooks a libEGL or
/// libGLX loaded since). Our `dlopen` calls it after every successful load; it is cheap
/// when nothing is new. Does nothing before the first [`install`]. When another thread is
/// inside [`install`] it leaves the work to that thread.
pub fn on_new_modules() {
    PENDING.store(true, Ordering::SeqCst);
    let _ = std::panic::catch_unwind(|| {
        let mut guard = match STATE.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        let Some(st) = guard.as_mut() else {
            return;
        };
        let mut report = HookReport::default();
        drain_pending(st, &mut report);
        // SAFETY: as in install().
        unsafe { libc::dlerror() };
    });
}

/// Marks modules as possibly new (a `dlopen` we could not follow).
fn mark_pending() {
    PENDING.store(true, Ordering::SeqCst);
}

/// Runs [`on_new_modules`] when something was marked or the loader's counters moved.
fn check_new_modules() {
    let moved = {
        let guard = match STATE.try_lock() {
            Ok(g) => g,
            Err(_) => return,
        };
        match guard.as_ref() {
            Some(st) => st.got_counts_changed(),
            None => return,
        }
    };
    if moved || PENDING.load(Ordering::SeqCst) {
        on_new_modules();
    }
}

impl State {
    fn got_counts_changed(&self) -> bool {
        self.got.counts_changed()
    }
}

fn drain_pending(st: &mut State, report: &mut HookReport) {
    let ctx = Ctx::new();
    got::patch_modules(&mut st.got, &ctx, report, false);
    while PENDING.swap(false, Ordering::SeqCst) {
        hook_inline_targets(&mut st.inline, report);
        let ctx = Ctx::new();
        got::patch_modules(&mut st.got, &ctx, report, false);
    }
}

/// Test-only entry (harmless in production): runs [`install`], prints its report on one
/// stderr line (`gpuheat-live: got=N modules=N dispatch=N inline=a,b notes=[...]`), returns
/// the number of things redirected.
#[no_mangle]
pub extern "C" fn gpuheat_live_install_for_test() -> i32 {
    let r = install();
    eprintln!(
        "gpuheat-live: got={} modules={} dispatch={} inline={} notes={:?}",
        r.got_patched,
        r.modules,
        r.dispatch_patched,
        r.inline_hooked.join(","),
        r.notes
    );
    r.total() as i32
}

/// Address of the wrapper of entry point `i` as the agent itself defines it (0 if unknown).
///
/// Not `generated::wrapper_address`: that takes the address of an exported function, which
/// in a shared object goes through the agent's own GOT, and the loader binds those entries
/// with the global scope first. In a process where the agent was `dlopen`ed after libEGL and
/// libGLESv2, `wrapper_address(i)` is therefore the *real* function, not ours (launch mode
/// is unaffected: there the preloaded agent comes first). `dlsym` on the agent's own handle
/// searches its local scope, which starts with the agent.
pub(crate) fn wrapper(i: usize) -> usize {
    static WRAPPERS: OnceLock<Vec<usize>> = OnceLock::new();
    let all = WRAPPERS.get_or_init(|| {
        let ctx = Ctx::new();
        // SAFETY: Dl_info is plain data.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr fills `info` for an address inside the agent.
        let ok = unsafe { libc::dladdr(wrapper as *const () as *const _, &mut info) };
        let handle = if ok != 0 && !info.dli_fname.is_null() {
            // SAFETY: the agent's own file name; the reference is kept (never unloaded).
            unsafe { libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD) }
        } else {
            std::ptr::null_mut()
        };
        (0..FUNCTION_COUNT)
            .map(|i| {
                let generated = crate::generated::wrapper_address(i);
                if ctx.in_agent(generated) {
                    return generated;
                }
                let Ok(name) = CStr::from_bytes_with_nul(NAMES[i].as_bytes()) else {
                    return 0;
                };
                let p = if handle.is_null() {
                    0
                } else {
                    crate::real::real_dlsym(handle, name)
                };
                if ctx.in_agent(p) {
                    p
                } else {
                    0
                }
            })
            .collect()
    });
    all.get(i).copied().unwrap_or(0)
}

/// Points the agent's own GOT entries for its wrappers at the wrappers.
///
/// The generated code takes wrapper addresses (`generated::wrapper_address`, which
/// `hook::proc_address` hands out for `eglGetProcAddress` and `dlsym`) through the agent's
/// GOT. Loaded after libEGL/libGLESv2, the agent finds those entries bound to the real
/// functions (the loader searches the global scope first): the GetProcAddress wrappers would
/// hand out the real function. This re-binds them to the agent's definitions, which is what
/// linking with `-Bsymbolic-functions` would do; in launch mode they already are.
fn bind_agent_to_itself(report: &mut HookReport) {
    let ctx = Ctx::new();
    let (modules, _, _) = elf::modules();
    let Some(me) = modules.iter().find(|m| ctx.agent_module(m)) else {
        return;
    };
    let maps = Maps::read();
    let mut rebound = 0;
    // SAFETY: the agent cannot be unloaded while it runs.
    for imp in unsafe { elf::imports(me, elf::OURS) } {
        let Some(i) = table::index_of(imp.name.to_bytes()) else {
            continue;
        };
        let w = wrapper(i);
        // SAFETY: a GOT slot of the agent.
        let cur = unsafe {
            (*(imp.slot as *const std::sync::atomic::AtomicUsize)).load(Ordering::Acquire)
        };
        // SAFETY: an aligned GOT slot of the agent itself, pointed at its own wrapper.
        if w != 0 && cur != w && unsafe { mem::write_word(&maps, imp.slot, w) } {
            rebound += 1;
        }
    }
    if rebound > 0 {
        report.notes.push(format!(
            "agent: {rebound} own GOT entries re-bound from the GL libraries to the wrappers"
        ));
    }
}

/// Address ranges and lookups shared by the layers.
pub(crate) struct Ctx {
    agent: &'static [(usize, usize)],
}

impl Ctx {
    fn new() -> Ctx {
        Ctx {
            agent: crate::real::agent_segments(),
        }
    }

    /// Whether `p` is inside the agent (a wrapper, the "missing" stub, a thunk).
    pub fn in_agent(&self, p: usize) -> bool {
        self.agent.iter().any(|&(s, e)| p >= s && p < e)
    }

    /// Whether `m` is the agent.
    pub fn agent_module(&self, m: &elf::Module) -> bool {
        self.agent.first().is_some_and(|&(s, _)| m.contains(s))
    }

    /// Whether `p` may be recorded as a real function.
    pub fn real_ok(&self, p: usize) -> bool {
        p != 0 && !self.in_agent(p)
    }

    /// Whether `p` is ours or jumps (PLT entry, relay) into the agent.
    pub fn leads_to_agent(&self, maps: &Maps, p: usize) -> bool {
        // SAFETY: follow_jumps only reads mapped memory.
        p == 0 || self.in_agent(p) || self.in_agent(unsafe { inline::follow_jumps(maps, p, 3) })
    }

    /// `p`, or the trampoline when `p` is a function we inline-hooked.
    pub fn through_inline(&self, p: usize) -> usize {
        let map = INLINE_MAP.lock().unwrap_or_else(|e| e.into_inner());
        map.iter().find(|&&(f, _)| f == p).map_or(p, |&(_, t)| t)
    }

    /// Records `p` as the real function of entry point `i` unless a valid one is recorded.
    pub fn set_real_if_unset(&self, i: usize, p: usize) {
        if !self.real_ok(real::raw(i)) && self.real_ok(p) {
            real::set(i, self.through_inline(p));
        }
    }
}

/// What layer (c) remembers.
#[derive(Default)]
struct InlineState {
    /// The loader's counters at the last pass: nothing new to hook while they stay.
    counts: Option<(u64, u64)>,
    /// Functions already hooked or refused (by address).
    tried: HashSet<usize>,
    /// (function, trampoline, name) of the hooks in place.
    hooks: Vec<(usize, usize, String)>,
}

/// The entry points of one group of [`INLINE_TARGETS`].
enum Names {
    /// These, by name.
    These(&'static [&'static str]),
    /// Every wrapped entry point whose name starts with this.
    Prefixed(&'static str),
}

impl Names {
    fn list(&self) -> Vec<&'static str> {
        match self {
            Names::These(names) => names.to_vec(),
            Names::Prefixed(prefix) => crate::generated::NAMES
                .iter()
                .map(|n| n.trim_end_matches('\0'))
                .filter(|n| n.starts_with(prefix))
                .collect(),
        }
    }
}

/// Entry points hooked inline, with the libraries that define them (first loaded wins: for
/// GLX, libglvnd's libGL.so.1 forwards to libGLX.so.0, so hooking both would enter the
/// wrapper twice).
///
/// OpenVG has no dispatch table to patch, and a patched GOT slot is not enough for it: an
/// optimizing compiler treats GOT loads as invariant and keeps a function's address in a
/// register across a frame loop (seen: a release build of our VG example, attached, showed
/// vgClear and none of its six other VG calls per frame), so every VG entry point of the
/// library is hooked at its entry.
const INLINE_TARGETS: [(&[&CStr], Names); 3] = [
    (
        &[c"libEGL.so.1"],
        Names::These(&[
            "eglSwapBuffers",
            "eglMakeCurrent",
            "eglGetProcAddress",
            "eglSwapBuffersWithDamageKHR",
            "eglSwapBuffersWithDamageEXT",
        ]),
    ),
    (
        &[c"libGLX.so.0", c"libGL.so.1"],
        Names::These(&[
            "glXSwapBuffers",
            "glXMakeCurrent",
            "glXMakeContextCurrent",
            "glXGetProcAddressARB",
            "glXGetProcAddress",
        ]),
    ),
    (&[c"libOpenVG.so.1", c"libOpenVG.so"], Names::Prefixed("vg")),
];

/// `RTLD_DL_SYMENT` for `dladdr1`.
const RTLD_DL_SYMENT: libc::c_int = 1;

/// The library file `p` lies in and the size of the symbol covering it.
fn symbol_of(p: usize) -> Option<(String, usize)> {
    // SAFETY: Dl_info is plain data.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut sym: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: out-pointers to locals.
    let ok = unsafe { libc::dladdr1(p as *const _, &mut info, &mut sym, RTLD_DL_SYMENT) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a C string; the symbol entry is an Elf64_Sym.
    let file = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    let size = if !sym.is_null() && info.dli_saddr as usize == p {
        // SAFETY: dladdr1 pointed `sym` at the symbol's Elf64_Sym entry.
        unsafe { (*(sym as *const libc::Elf64_Sym)).st_size as usize }
    } else {
        0
    };
    Some((file, size))
}

fn same_library(file: &str, soname: &CStr) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    let want = soname.to_str().unwrap_or("");
    let stem = want.split(".so").next().unwrap_or(want);
    base == want || base.starts_with(&format!("{stem}.so"))
}

fn hook_inline_targets(st: &mut InlineState, report: &mut HookReport) {
    let counts = elf::load_counters();
    if st.counts == Some(counts) {
        return;
    }
    st.counts = Some(counts);
    let mut maps: Option<Maps> = None;
    for (libs, names) in &INLINE_TARGETS {
        // The first library of the list that is loaded.
        let Some((lib, handle)) = libs.iter().find_map(|lib| {
            // SAFETY: RTLD_NOLOAD never loads anything.
            let h = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
            (!h.is_null()).then_some((*lib, h))
        }) else {
            continue;
        };
        for name in names.list() {
            let Some(i) = table::index_of(name.as_bytes()) else {
                continue;
            };
            let cname = std::ffi::CString::new(name).unwrap_or_default();
            let mut func = crate::real::real_dlsym(handle, &cname);
            if func == 0 || !symbol_of(func).is_some_and(|(f, _)| same_library(&f, lib)) {
                // Extensions (eglSwapBuffersWithDamage*) are not exported: hook what the
                // real GetProcAddress hands out, which is what the program cached.
                func = if name.starts_with("egl") {
                    crate::real::proc_address(&cname)
                } else {
                    0
                };
            }
            if func == 0 || Ctx::new().in_agent(func) || wrapper(i) == 0 {
                continue;
            }
            if let Some(&(_, tramp, ref other)) = st.hooks.iter().find(|h| h.0 == func) {
                // Another name for a function already hooked.
                if other != name && !Ctx::new().real_ok(real::raw(i)) {
                    real::set(i, tramp);
                }
                continue;
            }
            if !st.tried.insert(func) {
                continue;
            }
            let size = symbol_of(func).map_or(0, |(_, s)| s);
            let maps = maps.get_or_insert_with(Maps::read);
            // SAFETY: `func` is an exported function of the EGL/GLX library.
            let r = unsafe {
                inline::hook(maps, func, size, wrapper(i), false, |tramp| {
                    real::set(i, tramp);
                })
            };
            match r {
                Ok(h) => {
                    let mut map = INLINE_MAP.lock().unwrap_or_else(|e| e.into_inner());
                    map.push((h.func, h.tramp));
                    if h.start != h.func {
                        map.push((h.start, h.tramp));
                    }
                    st.hooks.push((func, h.tramp, name.to_string()));
                    report.inline_hooked.push(name.to_string());
                }
                Err(e) => report
                    .notes
                    .push(format!("inline: {name} at {func:#x} not hooked: {e}")),
            }
        }
        // SAFETY: the reference taken above.
        unsafe { libc::dlclose(handle) };
    }
}
