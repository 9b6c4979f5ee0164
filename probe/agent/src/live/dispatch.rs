//! Layer (b): the GL dispatch table of the calling thread's current context.
//!
//! With libglvnd (the usual Linux stack) every `gl*` entry point a program can reach, the
//! exports of libGL/libOpenGL/libGLESv2 and the pointers `eglGetProcAddress` and
//! `glXGetProcAddress` hand out, is a stub in libGLdispatch or in those libraries:
//! `mov rax, [rip+_glapi_tls_Current@GOTTPOFF]; mov r11, fs:[rax]; jmp [r11 + 8*slot]`.
//! Replacing `table[slot]` with our wrapper therefore also catches pointers the program
//! cached before we came. glvnd has one table per vendor (not per context), allocated on the
//! heap, and refills an entry only when a new name is first looked up (then the next
//! [`patch_current`] puts the wrapper back).
//!
//! Slots are read from the stubs themselves: the library exports where there are some (no side
//! effect), else the stub `__glDispatchGetProcAddress` returns. That call registers the name
//! with glvnd exactly as the program's own `eglGetProcAddress` of it would (glad-style loaders
//! look up every name at start-up anyway).
//!
//! Without libglvnd (Mesa's own libGL), the table is Mesa's (`_glapi_get_dispatch`, offsets
//! from `_glapi_get_proc_offset`). Mesa swaps tables inside `glBegin`/`glEnd`, while
//! compiling display lists and for glthread, so there a swap may find a new table; entries of
//! a later table that disagree with the real function already recorded are left alone
//! (counted as conflicts) since one wrapper has one real function.
//! `GPUHEAT_LIVE_DISPATCH=glvnd|mesa|off` overrides the choice (tests use it).
//!
//! The real function of a patched entry is the table's old entry: for glvnd that is the
//! vendor's function (Mesa's own glapi stub), never a glvnd stub, which would lead back to the
//! wrapper. This layer therefore owns the real pointer of the entry points it patched and
//! overrides what the GOT layer or a GetProcAddress lookup recorded.

use super::wrapper as wrapper_address;
use super::{mem::Maps, Ctx, HookReport};
use crate::generated::{FUNCTION_COUNT, NAMES};
use crate::real;
use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind, Register};
use libc::{c_char, c_int, c_void};
use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Clone, Copy)]
enum Kind {
    Glvnd {
        thread_state: unsafe extern "C" fn() -> *mut c_void,
        get_current: unsafe extern "C" fn() -> *mut usize,
        get_proc: unsafe extern "C" fn(*const c_char) -> usize,
    },
    Mesa {
        get_context: unsafe extern "C" fn() -> *mut c_void,
        get_dispatch: unsafe extern "C" fn() -> *mut usize,
        get_offset: unsafe extern "C" fn(*const c_char) -> c_int,
    },
}

/// What layer (b) remembers between calls.
#[derive(Default)]
pub(crate) struct DispatchState {
    kind: Option<Kind>,
    /// (function index, table slot) of every entry point with a slot.
    slots: Option<Vec<(usize, usize)>>,
    /// Tables patched so far.
    pub tables: Vec<usize>,
    /// Entry points whose real pointer this layer set.
    owned: Vec<bool>,
    wrapper_index: Option<HashMap<usize, usize>>,
    noted_no_context: bool,
    conflicts_noted: usize,
}

fn nolod(lib: &CStr) -> *mut c_void {
    // SAFETY: NUL-terminated name; RTLD_NOLOAD never loads anything.
    unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) }
}

fn sym(h: *mut c_void, name: &CStr) -> usize {
    if h.is_null() {
        0
    } else {
        crate::real::real_dlsym(h, name)
    }
}

fn resolve_kind() -> Option<Kind> {
    let choice = std::env::var(gpuheat_session::control::env::LIVE_DISPATCH).unwrap_or_default();
    let glvnd = || {
        // The handle is kept: libGLdispatch stays loaded while we hold its functions.
        let h = nolod(c"libGLdispatch.so.0");
        let (a, b, c) = (
            sym(h, c"__glDispatchGetCurrentThreadState"),
            sym(h, c"_glapi_get_current"),
            sym(h, c"__glDispatchGetProcAddress"),
        );
        (a != 0 && b != 0 && c != 0).then(|| unsafe {
            // SAFETY: libglvnd's ABI for these three exports.
            Kind::Glvnd {
                thread_state: std::mem::transmute::<usize, unsafe extern "C" fn() -> *mut c_void>(a),
                get_current: std::mem::transmute::<usize, unsafe extern "C" fn() -> *mut usize>(b),
                get_proc: std::mem::transmute::<usize, unsafe extern "C" fn(*const c_char) -> usize>(
                    c,
                ),
            }
        })
    };
    let mesa = || {
        let h = nolod(c"libglapi.so.0");
        let (a, b, c) = (
            sym(h, c"_glapi_get_context"),
            sym(h, c"_glapi_get_dispatch"),
            sym(h, c"_glapi_get_proc_offset"),
        );
        (a != 0 && b != 0 && c != 0).then(|| unsafe {
            // SAFETY: Mesa's glapi ABI for these three exports.
            Kind::Mesa {
                get_context: std::mem::transmute::<usize, unsafe extern "C" fn() -> *mut c_void>(a),
                get_dispatch: std::mem::transmute::<usize, unsafe extern "C" fn() -> *mut usize>(b),
                get_offset: std::mem::transmute::<
                    usize,
                    unsafe extern "C" fn(*const c_char) -> c_int,
                >(c),
            }
        })
    };
    match choice.as_str() {
        "off" => None,
        "mesa" => mesa(),
        "glvnd" => glvnd(),
        _ => glvnd().or_else(mesa),
    }
}

/// The table slot a glvnd stub jumps through: the displacement of its
/// `jmp qword ptr [reg + 8*slot]`, after a TLS (`fs:`) load of the table pointer.
pub(crate) fn glvnd_slot(maps: &Maps, stub: usize) -> Option<usize> {
    let n = maps.readable_len(stub, 32);
    if n < 16 {
        return None;
    }
    // SAFETY: `n` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(stub as *const u8, n) };
    let mut d = Decoder::with_ip(64, bytes, stub as u64, DecoderOptions::NONE);
    let mut saw_tls = false;
    for _ in 0..5 {
        let ins = d.decode();
        if ins.is_invalid() {
            return None;
        }
        if ins.mnemonic() == Mnemonic::Endbr64 {
            continue;
        }
        if ins.op_count() > 0
            && (0..ins.op_count()).any(|k| ins.op_kind(k) == OpKind::Memory)
            && ins.memory_segment() == Register::FS
        {
            saw_tls = true;
            continue;
        }
        if ins.mnemonic() == Mnemonic::Jmp && ins.op0_kind() == OpKind::Memory {
            let disp = ins.memory_displacement64() as i64;
            let ok = saw_tls
                && ins.memory_base() != Register::None
                && ins.memory_base() != Register::RIP
                && ins.memory_index() == Register::None
                && disp >= 0
                && disp % 8 == 0;
            return ok.then_some(disp as usize / 8);
        }
        if ins.mnemonic() != Mnemonic::Mov {
            return None;
        }
    }
    None
}

fn compute_slots(kind: Kind, maps: &Maps) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    match kind {
        Kind::Glvnd { get_proc, .. } => {
            let libs: Vec<*mut c_void> = [
                c"libOpenGL.so.0",
                c"libGLESv2.so.2",
                c"libGL.so.1",
                c"libGLESv1_CM.so.1",
            ]
            .iter()
            .map(|l| nolod(l))
            .filter(|h| !h.is_null())
            .collect();
            for (i, name) in NAMES.iter().enumerate() {
                if !name.starts_with("gl") || name.starts_with("glX") {
                    continue;
                }
                let Ok(cname) = CStr::from_bytes_with_nul(name.as_bytes()) else {
                    continue;
                };
                let exported = libs
                    .iter()
                    .map(|&h| sym(h, cname))
                    .find_map(|p| (p != 0).then(|| glvnd_slot(maps, p)).flatten());
                let slot = exported.or_else(|| {
                    // SAFETY: glvnd's __glDispatchGetProcAddress takes a C string.
                    let stub = unsafe { get_proc(cname.as_ptr()) };
                    (stub != 0).then(|| glvnd_slot(maps, stub)).flatten()
                });
                if let Some(s) = slot {
                    out.push((i, s));
                }
            }
            for h in libs {
                // SAFETY: handles from dlopen(RTLD_NOLOAD) above.
                unsafe { libc::dlclose(h) };
            }
        }
        Kind::Mesa { get_offset, .. } => {
            for (i, name) in NAMES.iter().enumerate() {
                if !name.starts_with("gl") || name.starts_with("glX") {
                    continue;
                }
                // SAFETY: NUL-terminated name.
                let off = unsafe { get_offset(name.as_ptr() as *const c_char) };
                if off >= 0 {
                    out.push((i, off as usize));
                }
            }
        }
    }
    out
}

/// Patches the calling thread's current dispatch table (a no-op when it is the one patched
/// last time and still holds our wrappers). Adds the entries written to `report`.
pub(crate) fn patch_current(
    st: &mut DispatchState,
    ctx: &Ctx,
    maps: &Maps,
    report: &mut HookReport,
) {
    if st.kind.is_none() {
        st.kind = resolve_kind();
    }
    let Some(kind) = st.kind else {
        return;
    };
    // SAFETY: the ABI functions resolved above.
    let table = unsafe {
        match kind {
            Kind::Glvnd {
                thread_state,
                get_current,
                ..
            } => {
                if thread_state().is_null() {
                    std::ptr::null_mut()
                } else {
                    get_current()
                }
            }
            Kind::Mesa {
                get_context,
                get_dispatch,
                ..
            } => {
                if get_context().is_null() {
                    std::ptr::null_mut()
                } else {
                    get_dispatch()
                }
            }
        }
    };
    if table.is_null() {
        if !st.noted_no_context {
            st.noted_no_context = true;
            report
                .notes
                .push("dispatch: no context current on this thread; table not patched".into());
        }
        return;
    }
    if st.slots.is_none() {
        let slots = compute_slots(kind, maps);
        report.notes.push(format!(
            "dispatch: {} entry points have a {} table slot",
            slots.len(),
            match kind {
                Kind::Glvnd { .. } => "glvnd",
                Kind::Mesa { .. } => "Mesa",
            }
        ));
        st.slots = Some(slots);
        st.owned = vec![false; FUNCTION_COUNT];
    }
    let table = table as usize;
    let new_table = !st.tables.contains(&table);
    if new_table {
        // The table must be writable memory (heap in glvnd and Mesa).
        let writable = maps
            .region(table)
            .is_some_and(|r| r.prot & libc::PROT_WRITE != 0);
        if !writable {
            report.notes.push(format!(
                "dispatch: table {table:#x} is not writable; left alone"
            ));
            st.tables.push(table);
            return;
        }
    }
    let slots = st.slots.take().unwrap_or_default();
    let mut written = 0;
    let mut conflicts = 0;
    for &(i, slot) in &slots {
        // SAFETY: `slot` came from the stubs/offsets of this table's dispatch layer.
        let entry = unsafe { &*((table + slot * 8) as *const AtomicUsize) };
        let old = entry.load(Ordering::Relaxed);
        let wrapper = wrapper_address(i);
        if old == wrapper || old == 0 || wrapper == 0 {
            continue;
        }
        if ctx.in_agent(old) {
            // An alias sharing the slot (Mesa) already holds another wrapper: same function.
            let index = st.wrapper_index.get_or_insert_with(|| {
                (0..FUNCTION_COUNT)
                    .map(|j| (wrapper_address(j), j))
                    .collect()
            });
            if let Some(&j) = index.get(&old) {
                let r = real::raw(j);
                if !ctx.in_agent(r) && r != 0 {
                    ctx.set_real_if_unset(i, r);
                }
            }
            continue;
        }
        if st.owned[i] {
            if real::raw(i) != old {
                conflicts += 1;
                continue;
            }
        } else {
            let real = ctx.through_inline(old);
            if !real::set_checked(i, real, ctx.leads_to_agent(maps, real)) {
                // No real function to call: the wrapper would lead back to itself.
                continue;
            }
            st.owned[i] = true;
        }
        entry.store(wrapper, Ordering::Release);
        written += 1;
    }
    st.slots = Some(slots);
    if new_table {
        st.tables.push(table);
        report.notes.push(format!(
            "dispatch: patched {} table {table:#x} ({written} entries)",
            match kind {
                Kind::Glvnd { .. } => "glvnd",
                Kind::Mesa { .. } => "Mesa",
            }
        ));
    }
    if conflicts > st.conflicts_noted {
        st.conflicts_noted = conflicts;
        report.notes.push(format!(
            "dispatch: {conflicts} entries of table {table:#x} point elsewhere than the real \
             function already recorded; left unpatched"
        ));
    }
    report.dispatch_patched += written;
}
