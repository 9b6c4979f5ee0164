//! Pre-flight: who the target is, whether we may trace it, what it maps, and where (in the
//! target's own address space) dlopen, dlerror and the safe-point functions are.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::elf::{self, FileBytes, Image, Module};
use crate::procfs;
use crate::{InjectError, Symbol, TargetInfo};

/// The safe-point functions: the entry of a buffer swap is a call boundary on the render
/// thread, outside the loader and malloc locks.
pub(crate) const SAFE_POINTS: [&str; 2] = ["eglSwapBuffers", "glXSwapBuffers"];

/// glibc-internal flag `__libc_dlopen_mode` needs to behave like dlopen.
const RTLD_DLOPEN: u64 = 0x8000_0000;

/// What [`inject`](crate::inject) needs beyond [`TargetInfo`].
pub(crate) struct Plan {
    pub info: TargetInfo,
    /// Extra bits or-ed into the dlopen flags (`__RTLD_DLOPEN` for `__libc_dlopen_mode`).
    pub dlopen_extra_flags: u64,
    /// `dlerror` in the same library as `dlopen`, if it has one.
    pub dlerror: Option<u64>,
}

/// Whether a file name is one of the GL/GLES/EGL/GLX/VG API libraries (or a glvnd vendor
/// library).
pub(crate) fn is_graphics_library(file_name: &str) -> bool {
    let stem = file_name.split(".so").next().unwrap_or(file_name);
    matches!(
        stem,
        "libEGL" | "libGL" | "libGLX" | "libGLESv2" | "libGLESv1_CM" | "libOpenGL" | "libOpenVG"
    ) || stem.starts_with("libEGL_")
        || stem.starts_with("libGLX_")
}

/// A glvnd vendor library (`libEGL_mesa.so.0`, `libGLX_nvidia.so.0`).
fn is_vendor_library(file_name: &str) -> bool {
    file_name.starts_with("libEGL_") || file_name.starts_with("libGLX_")
}

/// The "not permitted" error, with the Yama setting spelled out.
pub(crate) fn not_permitted(pid: i32) -> InjectError {
    let scope = procfs::yama_scope();
    let scope_text = match scope {
        None => "absent (no Yama LSM)".to_string(),
        Some(0) => "0 (classic: same uid may trace)".to_string(),
        Some(1) => "1 (restricted: only descendants, unless CAP_SYS_PTRACE)".to_string(),
        Some(2) => "2 (admin-only: CAP_SYS_PTRACE required)".to_string(),
        Some(3) => "3 (no attach at all, until reboot)".to_string(),
        Some(n) => format!("{n} (unknown)"),
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let remedy = permission_remedy(pid, scope, root, procfs::have_cap_sys_ptrace());
    InjectError::NotPermitted {
        pid,
        scope: scope_text,
        remedy,
    }
}

/// What to do about a refused ptrace, given the Yama scope and what we already are: telling
/// root to run as root, or a process holding CAP_SYS_PTRACE to get it, helps nobody.
fn permission_remedy(pid: i32, scope: Option<u8>, root: bool, cap: bool) -> String {
    let who = if root {
        "root with CAP_SYS_PTRACE"
    } else {
        "a process with CAP_SYS_PTRACE"
    };
    match scope {
        Some(3) => "scope 3 cannot be lowered until reboot; start the program under `gpuheat run` instead".to_string(),
        // Yama allows what the capability allows: the target itself refuses.
        _ if cap => format!(
            "nothing gpuheat can add: we already run as {who}, so pid {pid} itself refuses tracing{}: it is non-dumpable (setuid, or a hardened daemon that called prctl(PR_SET_DUMPABLE, 0)), protected by a security module (SELinux, AppArmor, Landlock) or owned by another user namespace; start the program under `gpuheat run` instead",
            if pid == 1 { " (it is the init process)" } else { "" }
        ),
        None | Some(0) if root => "we run as root but without CAP_SYS_PTRACE (containers drop it: `docker run --cap-add SYS_PTRACE`); or the target is non-dumpable or protected by a security module".to_string(),
        None | Some(0) => "run as root or with CAP_SYS_PTRACE (the target may be non-dumpable or protected by another LSM)".to_string(),
        Some(_) if root => "we run as root but without CAP_SYS_PTRACE (containers drop it: `docker run --cap-add SYS_PTRACE`), or `sudo sysctl kernel.yama.ptrace_scope=0`".to_string(),
        Some(_) => "`sudo sysctl kernel.yama.ptrace_scope=0`, or run as root / as the same user with CAP_SYS_PTRACE".to_string(),
    }
}

fn is_descendant_of_us(pid: i32) -> bool {
    let me = std::process::id() as i32;
    let mut p = pid;
    for _ in 0..64 {
        match procfs::parent_pid(p) {
            Some(pp) if pp == me => return true,
            Some(pp) if pp > 1 => p = pp,
            _ => return false,
        }
    }
    false
}

/// Reads the target's status and checks existence, user and tracer. Returns the process
/// id (the thread-group id, if `pid` named a thread) and its status.
pub(crate) fn identity(pid: i32) -> Result<(i32, procfs::Status), InjectError> {
    if pid <= 0 {
        return Err(InjectError::NoSuchProcess { pid });
    }
    let status = match procfs::read_status(pid) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(InjectError::NoSuchProcess { pid })
        }
        Err(e) => return Err(InjectError::io(format!("reading /proc/{pid}/status"), e)),
    };
    if status.state == 'Z' || status.state == 'X' {
        return Err(InjectError::NoSuchProcess { pid });
    }
    let pid = if status.tgid > 0 { status.tgid } else { pid };
    // SAFETY: getuid has no preconditions.
    let our_uid = unsafe { libc::getuid() };
    if !procfs::have_cap_sys_ptrace() {
        if let Some(&uid) = status.uids.iter().find(|&&u| u != our_uid) {
            return Err(InjectError::OtherUser { pid, uid, our_uid });
        }
    }
    if status.tracer_pid != 0 {
        return Err(already_traced(pid, status.tracer_pid));
    }
    Ok((pid, status))
}

/// The "already traced" error. TracerPid names the tracing *thread*; report its process.
pub(crate) fn already_traced(pid: i32, tracer_tid: i32) -> InjectError {
    let (tracer, tracer_name) = match procfs::read_status(tracer_tid) {
        Ok(t) if t.tgid > 0 => {
            let name = procfs::read_status(t.tgid)
                .map(|p| p.name)
                .unwrap_or(t.name);
            (t.tgid, name)
        }
        _ => (tracer_tid, "?".to_string()),
    };
    InjectError::AlreadyTraced {
        pid,
        tracer,
        tracer_name,
    }
}

/// Predicts a Yama refusal without attaching. `inject` does not use this (a target may
/// have named us with PR_SET_PTRACER); it maps the real EPERM instead.
pub(crate) fn predict_yama(pid: i32) -> Result<(), InjectError> {
    let cap = procfs::have_cap_sys_ptrace();
    let refused = match procfs::yama_scope() {
        Some(3) => true,
        Some(2) => !cap,
        Some(1) => !cap && !is_descendant_of_us(pid),
        _ => false,
    };
    if refused {
        Err(not_permitted(pid))
    } else {
        Ok(())
    }
}

/// A loaded module's ELF, parsed lazily.
struct Loaded {
    module: Module,
    data: FileBytes,
}

impl Loaded {
    fn open(pid: i32, module: &Module) -> Result<Self, InjectError> {
        let data = module.read(pid).map_err(|e| {
            InjectError::io(format!("reading {} (mapped by pid {pid})", module.path), e)
        })?;
        Ok(Loaded {
            module: module.clone(),
            data,
        })
    }

    /// Absolute address of the function `name` in the target.
    fn function(&self, name: &str) -> Result<Option<u64>, InjectError> {
        let image = Image::parse(&self.data, Path::new(&self.module.path))?;
        let Some(sym) = image.find_function(name) else {
            return Ok(None);
        };
        address(&self.module, &image, sym.value).map(Some)
    }
}

/// Where a symbol of value `value` in `image`, the file of `module`, is in the target.
fn address(module: &Module, image: &Image, value: u64) -> Result<u64, InjectError> {
    let bias = module.load_bias(image).ok_or_else(|| InjectError::Elf {
        path: PathBuf::from(&module.path),
        message: "no PT_LOAD segment matches its mappings in the target".into(),
    })?;
    Ok(bias.wrapping_add(value))
}

/// Resolves the target's dlopen (and dlerror): glibc ≥ 2.34 has it in libc.so.6, older
/// glibc in libdl.so.2 (only if the program loaded it), musl in its libc; as the last
/// resort glibc's private `__libc_dlopen_mode` (no dlerror then).
fn find_dlopen(pid: i32, modules: &[Module]) -> Result<(Symbol, Option<u64>, u64), InjectError> {
    let mut tried = Vec::new();
    let candidates = |pred: &dyn Fn(&str) -> bool| -> Vec<&Module> {
        modules.iter().filter(|m| pred(m.file_name())).collect()
    };
    let is_libdl = |n: &str| n.starts_with("libdl.so") || n.starts_with("libdl-2.");
    let is_musl = |n: &str| n.starts_with("ld-musl-") || n.starts_with("libc.musl-");
    for pred in [&is_libc as &dyn Fn(&str) -> bool, &is_libdl, &is_musl] {
        for m in candidates(pred) {
            tried.push(m.file_name().to_string());
            let loaded = Loaded::open(pid, m)?;
            if let Some(addr) = loaded.function("dlopen")? {
                let dlerror = loaded.function("dlerror")?;
                let sym = Symbol {
                    name: "dlopen".into(),
                    library: PathBuf::from(&m.path),
                    address: addr,
                };
                return Ok((sym, dlerror, 0));
            }
        }
    }
    for m in candidates(&is_libc) {
        let loaded = Loaded::open(pid, m)?;
        if let Some(addr) = loaded.function("__libc_dlopen_mode")? {
            let sym = Symbol {
                name: "__libc_dlopen_mode".into(),
                library: PathBuf::from(&m.path),
                address: addr,
            };
            return Ok((sym, None, RTLD_DLOPEN));
        }
    }
    Err(InjectError::DlopenNotFound {
        pid,
        detail: if tried.is_empty() {
            "no libc mapped".into()
        } else {
            format!("looked in {}", tried.join(", "))
        },
    })
}

/// Reads the ELF machine of the target's executable.
fn exe_machine(pid: i32) -> Result<(u8, u16), InjectError> {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(format!("/proc/{pid}/exe"))
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| InjectError::io(format!("reading /proc/{pid}/exe"), e))?;
    let class = head[4];
    let machine = if head[5] == object::elf::ELFDATA2MSB {
        u16::from_be_bytes([head[18], head[19]])
    } else {
        u16::from_le_bytes([head[18], head[19]])
    };
    Ok((class, machine))
}

/// Longest a pre-flight waits for a program whose dynamic loader is still mapping its
/// libraries: a script that starts a program and attaches at once (`make demo`) came between
/// libEGL and libc, with no dlopen to call yet.
const LOADING_BOUND: Duration = Duration::from_secs(2);

/// The modules `pid` maps, once its dynamic loader has mapped libc (bounded by
/// [`LOADING_BOUND`]; a program without a loader, static or musl, as it is).
fn loaded_modules(pid: i32) -> Result<Vec<Module>, InjectError> {
    let deadline = Instant::now() + LOADING_BOUND;
    loop {
        let maps = match procfs::read_maps(pid) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(InjectError::NoSuchProcess { pid })
            }
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(not_permitted(pid))
            }
            Err(e) => return Err(InjectError::io(format!("reading /proc/{pid}/maps"), e)),
        };
        if maps.is_empty() {
            // Kernel threads and exiting processes have no mappings.
            return Err(InjectError::NoSuchProcess { pid });
        }
        let modules = elf::modules(&maps);
        let named = |pred: fn(&str) -> bool| modules.iter().any(|m| pred(m.file_name()));
        let loading = named(|n| n.starts_with("ld-linux")) && !named(is_libc);
        if !loading {
            return Ok(modules);
        }
        if Instant::now() >= deadline {
            return Err(InjectError::StillLoading {
                pid,
                waited: LOADING_BOUND,
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// glibc's libc, by file name.
fn is_libc(name: &str) -> bool {
    name.starts_with("libc.so") || name.starts_with("libc-2.")
}

/// Everything the pre-flight finds out; `predict` also predicts a Yama refusal.
pub(crate) fn plan(pid: i32, predict: bool) -> Result<Plan, InjectError> {
    let (pid, status) = identity(pid)?;
    if predict {
        predict_yama(pid)?;
    }
    // Before the executable is read: a kernel thread or an exiting process has no mappings
    // and is named as no such process, not as an unreadable /proc/PID/exe.
    let modules = loaded_modules(pid)?;
    let (class, machine) = exe_machine(pid)?;
    if class != object::elf::ELFCLASS64 {
        return Err(InjectError::UnsupportedArchitecture {
            what: format!("pid {pid} is a 32-bit program"),
        });
    }
    check_machine(pid, machine)?;

    let graphics: Vec<&Module> = modules
        .iter()
        .filter(|m| is_graphics_library(m.file_name()))
        .collect();
    if graphics.is_empty() {
        return Err(InjectError::NoGraphicsLibrary { pid });
    }
    let mut safe_points: Vec<Symbol> = Vec::new();
    // The API libraries export the swap functions; glvnd vendor libraries
    // (libEGL_mesa, libGLX_nvidia…) do not, and can be large.
    for m in graphics
        .iter()
        .filter(|m| !is_vendor_library(m.file_name()))
    {
        let loaded = Loaded::open(pid, m)?;
        for name in SAFE_POINTS {
            if let Some(address) = loaded.function(name)? {
                if !safe_points.iter().any(|s| s.address == address) {
                    safe_points.push(Symbol {
                        name: name.into(),
                        library: PathBuf::from(&m.path),
                        address,
                    });
                }
            }
        }
    }
    if safe_points.is_empty() {
        return Err(InjectError::NoSafePoint {
            pid,
            libraries: graphics
                .iter()
                .map(|m| m.file_name())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let (dlopen, dlerror, dlopen_extra_flags) = find_dlopen(pid, &modules)?;
    let threads = procfs::task_ids(pid).map(|t| t.len()).unwrap_or(0);
    Ok(Plan {
        info: TargetInfo {
            pid,
            name: status.name,
            threads,
            graphics_libraries: graphics.iter().map(|m| PathBuf::from(&m.path)).collect(),
            safe_points,
            dlopen,
            ptrace_scope: procfs::yama_scope(),
            seccomp_filter: status.seccomp != 0,
        },
        dlopen_extra_flags,
        dlerror,
    })
}

#[cfg(target_arch = "x86_64")]
fn check_machine(pid: i32, machine: u16) -> Result<(), InjectError> {
    if machine == crate::arch::ELF_MACHINE {
        Ok(())
    } else {
        Err(InjectError::UnsupportedArchitecture {
            what: format!(
                "pid {pid} is ELF machine {machine}, this injector drives {}",
                crate::arch::NAME
            ),
        })
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn check_machine(_pid: i32, _machine: u16) -> Result<(), InjectError> {
    Err(InjectError::UnsupportedArchitecture {
        what: format!("this host is {}", std::env::consts::ARCH),
    })
}

/// The injected library's entry point looked up in its file before the target is stopped:
/// reading and searching the file (tens of megabytes with debug information) took 20–25 ms
/// of the render thread's hold when done after the `dlopen`; only the load bias is left for
/// then.
pub(crate) struct PreparedEntry {
    data: FileBytes,
    /// Device (major, minor) and inode of the file read, to check the target mapped the same.
    id: (u32, u32, u64),
    /// The symbol's value in the file.
    value: u64,
}

/// Reads `path` as this process sees it and finds `entry` in it; `None` when the file cannot
/// be read or has no such function (the lookup after the `dlopen` then reads the target's
/// view of the file, and reports what is wrong).
pub(crate) fn prepare_entry(path: &Path, entry: &str) -> Option<PreparedEntry> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let data = FileBytes::open(path).ok()?;
    let value = Image::parse(&data, path).ok()?.find_function(entry)?.value;
    Some(PreparedEntry {
        data,
        id: (libc::major(md.dev()), libc::minor(md.dev()), md.ino()),
        value,
    })
}

/// Where the library `path` (as passed to dlopen) is mapped in the target now, and the
/// absolute address of `entry` in it, the file already searched when `prepared` is the file
/// the target mapped.
pub(crate) fn find_entry_with(
    pid: i32,
    path: &Path,
    entry: &str,
    prepared: Option<&PreparedEntry>,
) -> Result<Option<u64>, InjectError> {
    let Some(module) = locate(pid, path)? else {
        return Ok(None);
    };
    if let Some(p) = prepared.filter(|p| p.is_file_of(&module)) {
        let image = Image::parse(&p.data, Path::new(&module.path))?;
        return address(&module, &image, p.value).map(Some);
    }
    Loaded::open(pid, &module)?.function(entry)
}

/// The absolute addresses of `names` in the library `path` as the target maps it now (each
/// `None` when absent; all `None` when the library is not loaded), the file opened once and
/// `prepared`'s mapping used when it is that file.
pub(crate) fn find_functions(
    pid: i32,
    path: &Path,
    names: &[&str],
    prepared: Option<&PreparedEntry>,
) -> Result<Vec<Option<u64>>, InjectError> {
    let Some(module) = locate(pid, path)? else {
        return Ok(vec![None; names.len()]);
    };
    let loaded;
    let data: &[u8] = match prepared.filter(|p| p.is_file_of(&module)) {
        Some(p) => &p.data,
        None => {
            loaded = Loaded::open(pid, &module)?;
            &loaded.data
        }
    };
    let image = Image::parse(data, Path::new(&module.path))?;
    names
        .iter()
        .map(|name| match image.find_function(name) {
            Some(sym) => address(&module, &image, sym.value).map(Some),
            None => Ok(None),
        })
        .collect()
}

impl PreparedEntry {
    /// Whether `module`, as the target maps it, is the file this was read from.
    fn is_file_of(&self, module: &Module) -> bool {
        let first = &module.mappings[0];
        (self.id.0, self.id.1) == first.dev && self.id.2 == first.inode
    }
}

/// The module of the library `path` (as passed to dlopen) in the target now, if mapped.
fn locate(pid: i32, path: &Path) -> Result<Option<Module>, InjectError> {
    use std::os::unix::fs::MetadataExt;
    let maps = procfs::read_maps(pid)
        .map_err(|e| InjectError::io(format!("reading /proc/{pid}/maps"), e))?;
    let modules = elf::modules(&maps);
    // Identify the file by device and inode as seen in the target's mount namespace;
    // fall back to comparing paths.
    let in_target = PathBuf::from(format!("/proc/{pid}/root{}", path.display()));
    let id = std::fs::metadata(&in_target)
        .or_else(|_| std::fs::metadata(path))
        .ok()
        .map(|md| {
            let dev = md.dev();
            (libc::major(dev), libc::minor(dev), md.ino())
        });
    let canonical = std::fs::canonicalize(&in_target)
        .ok()
        .and_then(|p| {
            p.strip_prefix(format!("/proc/{pid}/root"))
                .ok()
                .map(|p| Path::new("/").join(p))
        })
        .unwrap_or_else(|| path.to_path_buf());
    let by_id = modules.iter().find(|m| {
        let first = &m.mappings[0];
        id.is_some_and(|(maj, min, ino)| first.dev == (maj, min) && first.inode == ino)
    });
    Ok(by_id
        .or_else(|| {
            modules
                .iter()
                .find(|m| Path::new(&m.path) == canonical || Path::new(&m.path) == path)
        })
        .cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphics_library_names() {
        for yes in [
            "libEGL.so.1",
            "libEGL.so",
            "libGL.so.1",
            "libGLX.so.0",
            "libGLESv2.so.2",
            "libGLESv1_CM.so.1",
            "libOpenGL.so.0",
            "libOpenVG.so.1",
            "libEGL_mesa.so.0",
            "libGLX_nvidia.so.0",
        ] {
            assert!(is_graphics_library(yes), "{yes}");
        }
        for no in [
            "libGLU.so.1",
            "libGLEW.so.2.2",
            "libglib-2.0.so.0",
            "libc.so.6",
            "libGLdispatch.so.0",
        ] {
            assert!(!is_graphics_library(no), "{no}");
        }
    }

    #[test]
    fn remedies_fit_who_we_are() {
        // As root with the capability: never "run as root".
        let r = permission_remedy(1, None, true, true);
        assert!(!r.contains("run as root or"), "{r}");
        assert!(
            r.contains("pid 1 itself refuses") && r.contains("init process"),
            "{r}"
        );
        let r = permission_remedy(42, Some(1), true, true);
        assert!(!r.contains("sysctl") && !r.contains("init"), "{r}");
        // Root without the capability: name the missing capability.
        let r = permission_remedy(42, Some(0), true, false);
        assert!(r.contains("without CAP_SYS_PTRACE"), "{r}");
        // A plain user: root or the capability helps.
        let r = permission_remedy(42, None, false, false);
        assert!(r.contains("run as root or with CAP_SYS_PTRACE"), "{r}");
        let r = permission_remedy(42, Some(3), true, true);
        assert!(r.contains("until reboot"), "{r}");
    }
}
