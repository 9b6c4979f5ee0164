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
    NoSuchProcess { pid: i32 },

    /// The kernel refuses to let us ptrace the target.
    #[error(
        "not permitted to ptrace pid {pid}: kernel.yama.ptrace_scope = {scope}; fix: {remedy}"
    )]
    NotPermitted {
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
    OtherUser { pid: i32, uid: u32, our_uid: u32 },

    /// Another tracer (a debugger, strace, another profiler) is attached.
    #[error(
        "pid {pid} is already traced by pid {tracer} ({tracer_name}): detach that debugger/tracer first"
    )]
    AlreadyTraced {
        pid: i32,
        tracer: i32,
        tracer_name: String,
    },

    /// No EGL/GLX/GL/GLES/VG library is mapped into the target.
    #[error(
        "pid {pid} has no EGL/GLX/GL/GLES/VG library mapped (looked for libEGL, libGL, libGLX, libGLESv2, libOpenGL, libOpenVG in /proc/{pid}/maps): is it a GL program, and has it loaded GL yet?"
    )]
    NoGraphicsLibrary { pid: i32 },

    /// GL libraries are mapped, but no safe-point function could be located in them.
    #[error(
        "pid {pid} maps {libraries} but neither eglSwapBuffers (libEGL.so.1) nor glXSwapBuffers (libGLX.so.0/libGL.so.1) was found in them: the program's GL stack is not supported for attach"
    )]
    NoSafePoint { pid: i32, libraries: String },

    /// The target's dynamic loader entry point could not be found.
    #[error(
        "cannot find dlopen in pid {pid}'s own libc.so.6/libdl.so.2 ({detail}): the target must be dynamically linked against glibc or musl"
    )]
    DlopenNotFound { pid: i32, detail: String },

    /// The target (or this host) is not an architecture the injector supports.
    #[error("unsupported architecture: {what} (only x86_64 targets are supported)")]
    UnsupportedArchitecture { what: String },

    /// The target exited while we were attached.
    #[error("pid {pid} exited during {during}; nothing is left to clean up")]
    TargetExited { pid: i32, during: &'static str },

    /// The target called exec while we were attached.
    #[error(
        "pid {pid} called exec during the injection; run the injection again on the new program"
    )]
    TargetExec { pid: i32 },

    /// Not every thread of the target stopped in time (e.g. stuck in an uninterruptible
    /// system call).
    #[error(
        "threads of pid {pid} did not stop within {after:?} ({threads} still running): the program may be stuck in the kernel (state D); try again"
    )]
    StopTimeout {
        pid: i32,
        after: Duration,
        threads: usize,
    },

    /// No thread reached eglSwapBuffers/glXSwapBuffers within the timeout.
    #[error(
        "pid {pid} did not call {safe_points} within {timeout:?} (is it paused, minimised or not rendering?); it was left running and untraced: make it render and try again, or raise the timeout"
    )]
    SafePointTimeout {
        pid: i32,
        safe_points: String,
        timeout: Duration,
    },

    /// dlopen returned NULL in the target; `message` is the target's dlerror().
    #[error(
        "dlopen(\"{library}\") failed in pid {pid}: {message} (the path is resolved in the target's mount namespace and working directory)"
    )]
    DlopenFailed {
        pid: i32,
        library: PathBuf,
        message: String,
    },

    /// The loaded library does not export `entry`.
    #[error(
        "the library {library} loaded into pid {pid} does not export a function `{entry}`: export it as extern \"C\" / #[no_mangle]"
    )]
    EntryNotFound {
        pid: i32,
        library: PathBuf,
        entry: String,
    },

    /// A function called in the target did not return in time.
    #[error(
        "{function} did not return within {after:?} in pid {pid}; the thread was put back at its safe point (locks it took may still be held)"
    )]
    CallTimeout {
        pid: i32,
        function: String,
        after: Duration,
    },

    /// A function called in the target crashed (the signal was not delivered).
    #[error(
        "{function} crashed in pid {pid} with signal {signal} (code {code}, address {address:#x}); the signal was suppressed and the thread put back at its safe point"
    )]
    CallCrashed {
        pid: i32,
        function: String,
        signal: i32,
        code: i32,
        address: u64,
    },

    /// A system call of the injected call was refused by the target's seccomp filter.
    #[error(
        "{function} in pid {pid} was stopped by the target's seccomp filter (system call {syscall}); the program sandboxes itself and cannot load a library"
    )]
    Seccomp {
        pid: i32,
        function: String,
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
        op: &'static str,
        tid: i32,
        errno: nix::errno::Errno,
    },

    /// Reading /proc or the target's memory failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },

    /// An ELF file mapped by the target could not be parsed.
    #[error("cannot read ELF file {path}: {message}")]
    Elf { path: PathBuf, message: String },
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
