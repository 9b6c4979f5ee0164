//! The one error type of the crate. Every message is one line and names the remedy.

use std::path::PathBuf;
use std::time::Duration;

/// Why a [`check`](crate::check) or an [`inject`](crate::inject) failed.
///
/// Each variant's `Display` is a single line that says what went wrong and what to do about
/// it. Whatever the variant, the target has been left as it was found: breakpoints removed,
/// registers restored, every thread detached (see the crate documentation for the one
/// exception, a call that never returns).
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// There is no process with this pid (or it is a zombie).
    #[error("no process with pid {pid}: check the pid (`pgrep -a NAME`); it may have exited")]
    NoSuchProcess {
        /// The target.
        pid: i32,
    },

    /// The kernel refuses to let us ptrace the target.
    #[error(
        "not permitted to ptrace pid {pid}: kernel.yama.ptrace_scope = {scope}; fix: {remedy}"
    )]
    NotPermitted {
        /// The target.
        pid: i32,
        /// The value of /proc/sys/kernel/yama/ptrace_scope with its meaning, or a note that
        /// Yama is absent.
        scope: String,
        /// What to do.
        remedy: String,
    },

    /// The target runs as another user and we lack CAP_SYS_PTRACE.
    #[error(
        "pid {pid} belongs to uid {uid} but we run as uid {our_uid}: run as uid {uid}, or as root / with CAP_SYS_PTRACE"
    )]
    OtherUser {
        /// The target.
        pid: i32,
        /// The target's uid that differs from ours.
        uid: u32,
        /// Our real uid.
        our_uid: u32,
    },

    /// Another tracer (a debugger, strace, another profiler) is attached.
    #[error(
        "pid {pid} is already traced by pid {tracer} ({tracer_name}): detach that debugger/tracer first"
    )]
    AlreadyTraced {
        /// The target.
        pid: i32,
        /// The tracing process.
        tracer: i32,
        /// Its name.
        tracer_name: String,
    },

    /// No EGL/GLX/GL/GLES/VG library is mapped into the target.
    #[error(
        "pid {pid} has no EGL/GLX/GL/GLES/VG library mapped (looked for libEGL, libGL, libGLX, libGLESv2, libOpenGL, libOpenVG in /proc/{pid}/maps): is it a GL program, and has it loaded GL yet?"
    )]
    NoGraphicsLibrary {
        /// The target.
        pid: i32,
    },

    /// GL libraries are mapped, but no safe-point function could be located in them.
    #[error(
        "pid {pid} maps {libraries} but neither eglSwapBuffers (libEGL.so.1) nor glXSwapBuffers (libGLX.so.0/libGL.so.1) was found in them: the program's GL stack is not supported for attach"
    )]
    NoSafePoint {
        /// The target.
        pid: i32,
        /// The graphics libraries it maps.
        libraries: String,
    },

    /// The target's dynamic loader was still mapping its libraries (no libc yet) for the
    /// whole wait: it is starting, or hangs in its loader.
    #[error(
        "pid {pid} is still loading its libraries (its dynamic loader is mapped, libc is not, after {waited:?}): attach again once it has started"
    )]
    StillLoading {
        /// The target.
        pid: i32,
        /// How long the pre-flight waited.
        waited: std::time::Duration,
    },

    /// The target's dynamic loader entry point could not be found.
    #[error(
        "cannot find dlopen in pid {pid}'s own libc.so.6/libdl.so.2 ({detail}): the target must be dynamically linked against glibc or musl"
    )]
    DlopenNotFound {
        /// The target.
        pid: i32,
        /// Where we looked and what was missing.
        detail: String,
    },

    /// The target (or this host) is not an architecture the injector supports.
    #[error("unsupported architecture: {what} (only x86_64 targets are supported)")]
    UnsupportedArchitecture {
        /// What was found instead.
        what: String,
    },

    /// The target exited while we were attached.
    #[error("pid {pid} exited during {during}; nothing is left to clean up")]
    TargetExited {
        /// The target.
        pid: i32,
        /// The step of the injection.
        during: &'static str,
    },

    /// The target called exec while we were attached.
    #[error(
        "pid {pid} called exec during the injection; run the injection again on the new program"
    )]
    TargetExec {
        /// The target.
        pid: i32,
    },

    /// Not every thread of the target stopped in time (e.g. stuck in an uninterruptible
    /// system call).
    #[error(
        "threads of pid {pid} did not stop within {after:?} ({threads} still running): the program may be stuck in the kernel (state D); try again"
    )]
    StopTimeout {
        /// The target.
        pid: i32,
        /// How long we waited.
        after: Duration,
        /// Threads still running.
        threads: usize,
    },

    /// No thread reached eglSwapBuffers/glXSwapBuffers within the timeout.
    #[error(
        "pid {pid} did not call {safe_points} within {timeout:?} {}",
        safe_point_advice(*pid, *stopped)
    )]
    SafePointTimeout {
        /// The target.
        pid: i32,
        /// The functions a thread had to call, "eglSwapBuffers or glXSwapBuffers".
        safe_points: String,
        /// How long we waited.
        timeout: Duration,
        /// The program was stopped (group-stop) the whole time, and is left so.
        stopped: bool,
    },

    /// [`Request::cancel`](crate::Request::cancel) was set while waiting for the safe point.
    #[error(
        "cancelled while waiting for pid {pid} to swap; it was left {} and untraced, nothing loaded",
        if *stopped { "stopped" } else { "running" }
    )]
    Cancelled {
        /// The target.
        pid: i32,
        /// The program was stopped (group-stop), and is left so.
        stopped: bool,
    },

    /// dlopen returned NULL in the target; `message` is the target's dlerror().
    #[error(
        "dlopen(\"{library}\") failed in pid {pid}: {message} (the path is resolved in the target's mount namespace and working directory)"
    )]
    DlopenFailed {
        /// The target.
        pid: i32,
        /// The library as given.
        library: PathBuf,
        /// The target's dlerror() text.
        message: String,
    },

    /// The loaded library does not export `entry`.
    #[error(
        "the library {library} loaded into pid {pid} does not export a function `{entry}`: export it as extern \"C\" / #[no_mangle]"
    )]
    EntryNotFound {
        /// The target.
        pid: i32,
        /// The library as given.
        library: PathBuf,
        /// The function asked for.
        entry: String,
    },

    /// A function called in the target did not return in time.
    #[error(
        "{function} did not return within {after:?} in pid {pid}; the thread was put back at its safe point (locks it took may still be held)"
    )]
    CallTimeout {
        /// The target.
        pid: i32,
        /// The function called in the target.
        function: String,
        /// How long we waited.
        after: Duration,
    },

    /// A function called in the target crashed (the signal was not delivered).
    #[error(
        "{function} crashed in pid {pid} with signal {signal} (code {code}, address {address:#x}); the signal was suppressed and the thread put back at its safe point"
    )]
    CallCrashed {
        /// The target.
        pid: i32,
        /// The function called in the target.
        function: String,
        /// The signal number.
        signal: i32,
        /// The signal's si_code.
        code: i32,
        /// The faulting address.
        address: u64,
    },

    /// A system call of the injected call was refused by the target's seccomp filter.
    #[error(
        "{function} in pid {pid} was stopped by the target's seccomp filter (system call {syscall}); the program sandboxes itself and cannot load a library"
    )]
    Seccomp {
        /// The target.
        pid: i32,
        /// The function called in the target.
        function: String,
        /// The refused system call's number.
        syscall: i32,
    },

    /// The request itself is unusable.
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// A bug in the injector (it panicked); the target was restored and detached.
    #[error("internal error in the injector: {0} (the target was restored and detached; please report this)")]
    Internal(String),

    /// A ptrace request failed unexpectedly.
    #[error("ptrace {op} on thread {tid} failed: {errno}")]
    Ptrace {
        /// The ptrace request (ATTACH, CONT, …).
        op: &'static str,
        /// The thread.
        tid: i32,
        /// What ptrace returned.
        errno: nix::errno::Errno,
    },

    /// Reading /proc or the target's memory failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// An ELF file mapped by the target could not be parsed.
    #[error("cannot read ELF file {path}: {message}")]
    Elf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

/// The end of a [`InjectError::SafePointTimeout`] message: why, and what to do.
fn safe_point_advice(pid: i32, stopped: bool) -> String {
    if stopped {
        format!("because it is stopped (SIGSTOP or Ctrl-Z, state T); it was left stopped and untraced: resume it (`kill -CONT {pid}`) and try again")
    } else {
        "(is it paused, minimised or not rendering?); it was left running and untraced: make it render and try again, or raise the timeout".to_string()
    }
}

impl InjectError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        InjectError::Io {
            context: context.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_with_a_remedy() {
        let errors = [
            InjectError::NoSuchProcess { pid: 7 },
            InjectError::NotPermitted {
                pid: 7,
                scope: "1 (restricted)".into(),
                remedy: "`sudo sysctl kernel.yama.ptrace_scope=0`".into(),
            },
            InjectError::OtherUser {
                pid: 7,
                uid: 1000,
                our_uid: 1001,
            },
            InjectError::AlreadyTraced {
                pid: 7,
                tracer: 9,
                tracer_name: "gdb".into(),
            },
            InjectError::NoGraphicsLibrary { pid: 7 },
            InjectError::TargetExited {
                pid: 7,
                during: "attach",
            },
            InjectError::SafePointTimeout {
                pid: 7,
                safe_points: "eglSwapBuffers".into(),
                timeout: Duration::from_secs(2),
                stopped: false,
            },
            InjectError::SafePointTimeout {
                pid: 7,
                safe_points: "eglSwapBuffers".into(),
                timeout: Duration::from_secs(2),
                stopped: true,
            },
        ];
        for e in errors {
            let text = e.to_string();
            assert!(!text.contains('\n'), "{text}");
            assert!(text.contains("pid 7"), "{text}");
        }
        let e = InjectError::NotPermitted {
            pid: 1,
            scope: "2 (admin-only)".into(),
            remedy: "x".into(),
        };
        assert!(e.to_string().contains("kernel.yama.ptrace_scope = 2"));
    }
}
