//! The loaded modules and their dynamic relocations, read from memory.
//!
//! Modules come from `dl_iterate_phdr`; each one's `PT_DYNAMIC` gives the symbol and string
//! tables and the two relocation tables (`DT_JMPREL`, `DT_RELA`). glibc rewrites the pointer
//! entries of a writable dynamic section to absolute addresses, other loaders (and glibc for
//! read-only dynamic sections) leave them relative to the load bias: a value below the bias
//! is taken as relative. Every table read is bounds-checked against the module's `PT_LOAD`
//! segments, so an odd module is skipped rather than crashing the program.

use libc::{c_int, c_void, dl_phdr_info, size_t};
use std::ffi::{CStr, CString};

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;

const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_RELAENT: i64 = 9;
const DT_STRSZ: i64 = 10;
const DT_RPATH: i64 = 15;
const DT_PLTREL: i64 = 20;
const DT_JMPREL: i64 = 23;
const DT_RUNPATH: i64 = 29;

/// `R_X86_64_GLOB_DAT`: a GOT entry holding a symbol's address (`-fno-plt` calls, rustc's
/// `call *f@GOTPCREL`, address-taking).
const R_GLOB_DAT: u32 = 6;
/// `R_X86_64_JUMP_SLOT`: a PLT's GOT entry (possibly still unresolved with lazy binding).
const R_JUMP_SLOT: u32 = 7;

/// One loaded object, as `dl_iterate_phdr` described it.
#[derive(Clone, Debug)]
pub(crate) struct Module {
    /// `dlpi_name`: empty for the main program.
    pub name: String,
    /// Load bias.
    pub base: usize,
    /// `PT_LOAD` segments as absolute [start, end) ranges.
    pub segments: Vec<(usize, usize)>,
    /// Absolute address of the dynamic section (0 when there is none).
    pub dynamic: usize,
    /// Position in `dl_iterate_phdr`'s order (0 is the main program).
    pub order: usize,
}

impl Module {
    /// Whether `p` lies inside one of the module's segments.
    pub fn contains(&self, p: usize) -> bool {
        self.segments.iter().any(|&(s, e)| p >= s && p < e)
    }

    fn contains_range(&self, p: usize, len: usize) -> bool {
        let Some(end) = p.checked_add(len) else {
            return false;
        };
        self.segments.iter().any(|&(s, e)| p >= s && end <= e)
    }

    /// File name without directories.
    pub fn basename(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// What `dlopen(…, RTLD_NOLOAD)` needs to find this module again (None: main program).
    pub fn dlopen_name(&self) -> Option<CString> {
        if self.order == 0 || self.name.is_empty() {
            None
        } else {
            CString::new(self.name.as_bytes()).ok()
        }
    }

    /// Identity for "already scanned": the same file loaded at the same place.
    pub fn key(&self) -> (usize, usize, String) {
        (self.base, self.dynamic, self.name.clone())
    }
}

struct Collect {
    modules: Vec<Module>,
    adds: u64,
    subs: u64,
}

unsafe extern "C" fn collect_cb(info: *mut dl_phdr_info, size: size_t, data: *mut c_void) -> c_int {
    // SAFETY: the loader passes a valid dl_phdr_info (and its program headers) and
    // `data` is the `Collect` of `modules`.
    unsafe {
        let out = &mut *(data as *mut Collect);
        let info = &*info;
        if size >= std::mem::size_of::<dl_phdr_info>() {
            out.adds = info.dlpi_adds;
            out.subs = info.dlpi_subs;
        }
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(info.dlpi_name)
                .to_string_lossy()
                .into_owned()
        };
        let base = info.dlpi_addr as usize;
        let mut segments = Vec::new();
        let mut dynamic = 0;
        if !info.dlpi_phdr.is_null() {
            for k in 0..info.dlpi_phnum as usize {
                let ph = &*info.dlpi_phdr.add(k);
                let start = base.wrapping_add(ph.p_vaddr as usize);
                match ph.p_type {
                    PT_LOAD => segments.push((start, start.wrapping_add(ph.p_memsz as usize))),
                    PT_DYNAMIC => dynamic = start,
                    _ => {}
                }
            }
        }
        let order = out.modules.len();
        out.modules.push(Module {
            name,
            base,
            segments,
            dynamic,
            order,
        });
        0
    }
}

/// Every loaded module, with the loader's (adds, subs) counters.
pub(crate) fn modules() -> (Vec<Module>, u64, u64) {
    let mut c = Collect {
        modules: Vec::new(),
        adds: 0,
        subs: 0,
    };
    // SAFETY: the callback only reads what the loader hands it.
    unsafe { libc::dl_iterate_phdr(Some(collect_cb), &mut c as *mut Collect as *mut c_void) };
    (c.modules, c.adds, c.subs)
}

unsafe extern "C" fn counters_cb(
    info: *mut dl_phdr_info,
    size: size_t,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid dl_phdr_info; `data` is the pair of
    // `load_counters`.
    unsafe {
        let out = &mut *(data as *mut (u64, u64));
        if size >= std::mem::size_of::<dl_phdr_info>() {
            *out = ((*info).dlpi_adds, (*info).dlpi_subs);
        }
        1 // the counters are global: the first module is enough
    }
}

/// The loader's counters of modules loaded and unloaded so far (cheap: stops at the first
/// module).
pub(crate) fn load_counters() -> (u64, u64) {
    let mut c = (0u64, 0u64);
    // SAFETY: as above.
    unsafe { libc::dl_iterate_phdr(Some(counters_cb), &mut c as *mut (u64, u64) as *mut c_void) };
    c
}

/// One GOT entry the dynamic linker fills with a symbol's address.
#[derive(Clone, Debug)]
pub(crate) struct Import {
    /// Absolute address of the GOT slot.
    pub slot: usize,
    /// The symbol's name (without version).
    pub name: &'static CStr,
}

#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

#[repr(C)]
struct Rela {
    offset: u64,
    info: u64,
    addend: i64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

/// The parts of a dynamic section the hooks use.
#[derive(Default, Debug)]
pub(crate) struct DynInfo {
    strtab: usize,
    strsz: usize,
    symtab: usize,
    rela: usize,
    relasz: usize,
    relaent: usize,
    jmprel: usize,
    pltrelsz: usize,
    pltrel: i64,
    /// DT_RPATH or DT_RUNPATH present.
    pub has_search_path: bool,
}

/// Reads the module's dynamic section.
///
/// # Safety
/// The module must still be loaded (hold a `dlopen(RTLD_NOLOAD)` reference).
pub(crate) unsafe fn dyn_info(m: &Module) -> Option<DynInfo> {
    if m.dynamic == 0 || !m.contains_range(m.dynamic, std::mem::size_of::<Dyn>()) {
        return None;
    }
    let abs = |v: u64| -> usize {
        let v = v as usize;
        if m.base != 0 && v < m.base {
            v.wrapping_add(m.base)
        } else {
            v
        }
    };
    let mut d = DynInfo {
        relaent: std::mem::size_of::<Rela>(),
        ..DynInfo::default()
    };
    let mut p = m.dynamic as *const Dyn;
    for _ in 0..4096 {
        if !m.contains_range(p as usize, std::mem::size_of::<Dyn>()) {
            return None;
        }
        // SAFETY: `p` lies inside the loaded module's segments (checked above), which stay
        // mapped while the caller holds its reference.
        let e = unsafe { &*p };
        match e.tag {
            DT_NULL => break,
            DT_PLTRELSZ => d.pltrelsz = e.val as usize,
            DT_STRTAB => d.strtab = abs(e.val),
            DT_SYMTAB => d.symtab = abs(e.val),
            DT_RELA => d.rela = abs(e.val),
            DT_RELASZ => d.relasz = e.val as usize,
            DT_RELAENT => d.relaent = e.val as usize,
            DT_STRSZ => d.strsz = e.val as usize,
            DT_PLTREL => d.pltrel = e.val as i64,
            DT_JMPREL => d.jmprel = abs(e.val),
            DT_RPATH | DT_RUNPATH => d.has_search_path = true,
            _ => {}
        }
        p = p.wrapping_add(1);
    }
    Some(d)
}

/// The first bytes of every name the live hooks redirect: the GL, GLX, EGL, OpenVG and VGU
/// entry points, and `dlopen`/`dlsym`.
pub(crate) const OURS: &[&[u8]] = &[b"gl", b"eg", b"vg", b"dl"];

/// The module's `R_X86_64_GLOB_DAT` and `R_X86_64_JUMP_SLOT` relocations with their symbol
/// names, for the names that start with one of `prefixes` (checked on the name's first bytes
/// before anything else: a large library such as libLLVM has 100,000 relocations, and this
/// runs on the render thread while `gpuheat attach` holds it). Names are borrowed from the
/// module's string table (`'static` as long as the module stays loaded: callers use them only
/// while holding a reference).
///
/// # Safety
/// As [`dyn_info`].
pub(crate) unsafe fn imports(m: &Module, prefixes: &[&[u8]]) -> Vec<Import> {
    let mut out = Vec::new();
    // SAFETY: the caller holds the module loaded.
    let Some(d) = (unsafe { dyn_info(m) }) else {
        return out;
    };
    if d.symtab == 0 || d.strtab == 0 || d.relaent != std::mem::size_of::<Rela>() {
        return out;
    }
    let mut tables = vec![(d.rela, d.relasz)];
    // DT_PLTREL says whether .rela.plt holds Rela (7) or Rel (17) entries; x86-64 uses Rela.
    if d.pltrel == DT_RELA || d.pltrel == 0 {
        tables.push((d.jmprel, d.pltrelsz));
    }
    for (table, size) in tables {
        if table == 0 || size == 0 || !m.contains_range(table, size) {
            continue;
        }
        let n = size / std::mem::size_of::<Rela>();
        // SAFETY: the table lies inside the module's segments (checked above).
        let relas = unsafe { std::slice::from_raw_parts(table as *const Rela, n) };
        for r in relas {
            let kind = (r.info & 0xffff_ffff) as u32;
            if kind != R_GLOB_DAT && kind != R_JUMP_SLOT {
                continue;
            }
            let sym_index = (r.info >> 32) as usize;
            let slot = m.base.wrapping_add(r.offset as usize);
            if sym_index == 0 || !slot.is_multiple_of(8) || !m.contains_range(slot, 8) {
                continue;
            }
            let sym = d.symtab + sym_index * std::mem::size_of::<Sym>();
            if !m.contains_range(sym, std::mem::size_of::<Sym>()) {
                continue;
            }
            // SAFETY: the symbol entry lies inside the module (checked above).
            let name_off = unsafe { (*(sym as *const Sym)).name } as usize;
            if d.strsz != 0 && name_off >= d.strsz {
                continue;
            }
            let name_ptr = d.strtab + name_off;
            let longest = prefixes.iter().map(|p| p.len()).max().unwrap_or(0);
            if !m.contains_range(name_ptr, longest.max(1)) {
                continue;
            }
            // SAFETY: `longest` bytes of the string table (checked above); a shorter name's
            // NUL ends the comparison before any byte past it matters.
            let head = unsafe { std::slice::from_raw_parts(name_ptr as *const u8, longest) };
            if !prefixes.iter().any(|p| head.get(..p.len()) == Some(*p)) {
                continue;
            }
            // SAFETY: a name in the module's string table, NUL-terminated; it lives as long
            // as the module, which the caller keeps loaded while using it (see above).
            let name: &'static CStr =
                unsafe { &*(CStr::from_ptr(name_ptr as *const libc::c_char) as *const CStr) };
            out.push(Import { slot, name });
        }
    }
    out
}
