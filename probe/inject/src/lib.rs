//! Loads a shared library into an already-running GL program and calls one function of it,
//! at a safe point.
//!
//! [`inject`] does, with ptrace:
//!
//! 1. **Pre-flight** ([`check`]): the process exists, is ours to trace, nobody traces it,
//!    it maps an EGL/GLX/GL/GLES/VG library, and `dlopen`, `dlerror` and the safe-point
//!    functions `eglSwapBuffers` / `glXSwapBuffers` are located *in the target's own
//!    mappings* (/proc/PID/maps plus the ELF files on disk, rebased by their load bias).
//! 2. **Attach**: `PTRACE_SEIZE` + `PTRACE_INTERRUPT` of every thread (re-listing
//!    /proc/PID/task until it is stable; `PTRACE_O_TRACECLONE` catches the rest), then an
//!    `int3` at the entry of each safe-point function, then every thread runs again.
//! 3. **Safe point**: the first thread that traps there (the render thread, at a call
//!    boundary, holding no loader or malloc lock) is held; the breakpoints are lifted at
//!    once; threads that trapped meanwhile are rewound and resumed. Signals the program
//!    receives meanwhile are delivered, group-stops kept.
//!    The entry function is looked up in the library's file before the safe point, so the
//!    held thread waits only for the load bias after the `dlopen`.
//! 4. **Calls**: the held thread's general and full XSAVE state is saved; below its red
//!    zone go the library path, the argument and a return address of 0; it runs
//!    `dlopen(path, RTLD_NOW)` (then `dlerror()` on failure), then `entry(arg)`; each call
//!    ends in a SIGSEGV at address 0 that is caught and never delivered. The other threads
//!    keep running meanwhile, so a lock one of them holds cannot deadlock the call.
//! 5. **Restore**: all threads are stopped, the saved state put back exactly (the render
//!    thread re-executes the swap from its entry), and every thread detached. This also
//!    happens on every error path, and in `Drop` (best effort, never panicking).
//!
//! Bounds: attaching and detaching 2 s each, the safe point [`Request::timeout`] (or earlier
//! through [`Request::cancel`]), each injected call [`CALL_BOUND`].
//!
//! Children the program forks while the breakpoints are in are caught
//! (`PTRACE_O_TRACEFORK`), cleaned and released; an `exec` voids the injection. All ptrace
//! work runs on a short-lived thread, so nothing can stay attached after [`inject`] returns.
//!
//! Limits:
//! - x86_64 only (the CPU-specific code is confined to `arch`).
//! - The library path is opened by the target, in its mount namespace.
//! - Only `eglSwapBuffers` (libEGL) and `glXSwapBuffers` (libGLX/libGL) are safe points: a
//!   program that swaps only through `eglSwapBuffersWithDamage*`, or through a vendor
//!   library with another name, times out.
//! - A call that crashes or does not return within [`CALL_BOUND`] is abandoned by putting
//!   the thread back at its safe point; locks the call took stay taken.
//! - The return fault is a SIGSEGV: if the render thread blocks SIGSEGV or the program
//!   ignores it, the kernel resets that to the default (as for any fault). A target with
//!   user shadow stacks (CET) enabled is not supported.

mod arch;
mod elf;
mod error;
mod procfs;
mod target;
#[cfg(target_arch = "x86_64")]
mod tracer;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use error::InjectError;

/// How long each injected call (`dlopen`, `dlerror`, the entry) may run.
pub const CALL_BOUND: Duration = Duration::from_secs(5);

/// What to inject where.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Process id of the target (a thread id is accepted and mapped to its process).
    pub pid: i32,
    /// The shared library to load. A relative path is made absolute against this
    /// process's working directory; the target opens it in its own mount namespace.
    pub library: &'a Path,
    /// Exported function of `library` to call, signature
    /// `extern "C" fn(*const c_char) -> i32`.
    pub entry: &'a str,
    /// The string passed to `entry`.
    pub arg: &'a str,
    /// How long to wait for the program to reach a safe point (to swap buffers).
    pub timeout: Duration,
    /// Set (e.g. by a SIGINT handler) to give up waiting for the safe point early; the
    /// target is then restored and released as after a timeout.
    pub cancel: Option<&'a AtomicBool>,
}

/// A successful injection.
#[derive(Clone, Debug)]
pub struct Injected {
    /// Thread id that ran the calls (the thread that swapped: the render thread).
    pub thread: i32,
    /// What `entry` returned.
    pub entry_result: i32,
    /// The function the thread was stopped at, e.g. `eglSwapBuffers`.
    pub safe_point: String,
    /// How long the render thread was held: from its trap at the safe point until it was
    /// detached (includes `dlopen` and the entry).
    pub stopped_for: Duration,
    /// The whole injection, pre-flight to detach.
    pub total: Duration,
}

/// A function located in the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Function name.
    pub name: String,
    /// The mapped file that defines it (as /proc/PID/maps names it).
    pub library: PathBuf,
    /// Its address in the target.
    pub address: u64,
}

/// What [`check`] found out about a target that can be injected into.
#[derive(Clone, Debug)]
pub struct TargetInfo {
    /// The process id (thread-group id).
    pub pid: i32,
    /// Its command name (/proc/PID/comm).
    pub name: String,
    /// Number of threads right now.
    pub threads: usize,
    /// The EGL/GLX/GL/GLES/VG libraries it maps.
    pub graphics_libraries: Vec<PathBuf>,
    /// The safe-point functions found (`eglSwapBuffers`, `glXSwapBuffers`).
    pub safe_points: Vec<Symbol>,
    /// The target's own `dlopen` (or glibc's `__libc_dlopen_mode` as a last resort).
    pub dlopen: Symbol,
    /// /proc/sys/kernel/yama/ptrace_scope, `None` without Yama.
    pub ptrace_scope: Option<u8>,
    /// The target runs under a seccomp filter (it may refuse the system calls dlopen needs).
    pub seccomp_filter: bool,
}

/// Pre-flight: checks that `pid` exists, that we may trace it (user, tracer, Yama
/// prediction), that it maps a GL library with a safe-point function, and where its
/// `dlopen` is. Does not attach; the target is not disturbed.
pub fn check(pid: i32) -> Result<TargetInfo, InjectError> {
    target::plan(pid, true).map(|p| p.info)
}

/// Loads `req.library` into `req.pid` at a safe point and calls `req.entry(req.arg)` there.
///
/// On success and on every error the target is left running untraced, with no breakpoint
/// in its code and the render thread's registers exactly as they were (see the crate
/// documentation for the limits). The library stays loaded once `dlopen` succeeded.
pub fn inject(req: &Request) -> Result<Injected, InjectError> {
    #[cfg(target_arch = "x86_64")]
    {
        // All ptrace work happens on a short-lived thread of its own: ptrace requests must
        // come from the attaching thread, waits on it cannot see other threads' tracees,
        // and if anything stays attached (a thread that could not be stopped in time) the
        // kernel detaches it when this thread exits, so no tracee outlives the call.
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("gpuheat-inject".into())
                .spawn_scoped(scope, || inject_x86_64(req))
                .map_err(|e| InjectError::io("starting the injector thread", e))?
                .join()
                .unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Err(InjectError::Internal(what))
                })
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = req;
        Err(InjectError::UnsupportedArchitecture {
            what: format!("this host is {}", std::env::consts::ARCH),
        })
    }
}

/// The path and argument as the NUL-terminated bytes written into the target.
#[cfg(target_arch = "x86_64")]
fn c_bytes(what: &str, bytes: &[u8]) -> Result<Vec<u8>, InjectError> {
    if bytes.contains(&0) {
        return Err(InjectError::InvalidRequest(format!(
            "{what} contains a NUL byte"
        )));
    }
    let mut v = bytes.to_vec();
    v.push(0);
    Ok(v)
}

#[cfg(target_arch = "x86_64")]
fn inject_x86_64(req: &Request) -> Result<Injected, InjectError> {
    use std::os::unix::ffi::OsStrExt;
    use std::time::Instant;

    const RTLD_NOW: u64 = 2;
    let start = Instant::now();
    if req.entry.is_empty() {
        return Err(InjectError::InvalidRequest("empty entry name".into()));
    }
    let library = std::path::absolute(req.library)
        .map_err(|e| InjectError::io(format!("making {} absolute", req.library.display()), e))?;
    let path_bytes = c_bytes("the library path", library.as_os_str().as_bytes())?;
    let arg_bytes = c_bytes("the argument", req.arg.as_bytes())?;
    let _ = c_bytes("the entry name", req.entry.as_bytes())?;

    let plan = target::plan(req.pid, false)?;
    let pid = plan.info.pid;
    // Searched now, while the program runs on, rather than while its render thread is held.
    let prepared = target::prepare_entry(&library, req.entry);

    let mut session = tracer::Session::new(pid);
    session.attach(start + tracer::STOP_BOUND)?;
    // A library that is already loaded may have hooked the swap functions (gpuheat's agent
    // does, after which the program calls its wrappers, not the originals): its own exports of
    // the safe-point functions are safe points too.
    let mut safe_points = plan.info.safe_points.clone();
    let ours = target::find_functions(pid, &library, &target::SAFE_POINTS, prepared.as_ref())?;
    for (name, address) in target::SAFE_POINTS.iter().zip(ours) {
        if let Some(address) = address {
            if !safe_points.iter().any(|s| s.address == address) {
                safe_points.push(Symbol {
                    name: (*name).into(),
                    library: library.clone(),
                    address,
                });
            }
        }
    }
    session.install_breakpoints(&safe_points)?;
    let hit = session.wait_for_safe_point(start + req.timeout, req.timeout, req.cancel)?;

    let sp = arch::stack_pointer(session.hijack(hit.tid)?);
    // The strings go below the red zone; the call frames below them.
    let mut top = sp - arch::RED_ZONE;
    top -= arg_bytes.len() as u64;
    let arg_addr = top;
    top -= path_bytes.len() as u64;
    let path_addr = top;
    let frame_top = top & !0xf;
    session.write_memory(arg_addr, &arg_bytes)?;
    session.write_memory(path_addr, &path_bytes)?;

    let handle = session.call(
        &plan.info.dlopen.name,
        plan.info.dlopen.address,
        &[path_addr, RTLD_NOW | plan.dlopen_extra_flags],
        frame_top,
        CALL_BOUND,
    )?;
    if handle == 0 {
        let message = match plan.dlerror {
            Some(dlerror) => match session.call("dlerror", dlerror, &[], frame_top, CALL_BOUND)? {
                0 => "dlopen failed and dlerror() returned NULL".to_string(),
                p => session.read_c_string(p)?.replace(['\n', '\r'], " "),
            },
            None => {
                "dlopen failed (the target has no dlerror: glibc < 2.34 without libdl)".to_string()
            }
        };
        session.finish()?;
        return Err(InjectError::DlopenFailed {
            pid,
            library,
            message,
        });
    }
    let entry =
        target::find_entry_with(pid, &library, req.entry, prepared.as_ref())?.ok_or_else(|| {
            InjectError::EntryNotFound {
                pid,
                library: library.clone(),
                entry: req.entry.to_string(),
            }
        })?;
    let result = session.call(req.entry, entry, &[arg_addr], frame_top, CALL_BOUND)?;
    session.finish()?;
    let stopped_for = hit.at.elapsed();
    Ok(Injected {
        thread: hit.tid,
        entry_result: result as u32 as i32,
        safe_point: hit.name,
        stopped_for,
        total: start.elapsed(),
    })
}
