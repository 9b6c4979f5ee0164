//! How far the GPU is behind the program, asked with a bound before a capture's first drain.
//!
//! A capture's first wait for the GPU (the calibration of a context's brackets, a drain of
//! isolated timing, a query read) waits for everything the program queued before it. A
//! program that never waits for its frames can be far ahead of its GPU: on llvmpipe, a
//! program drawing into a pbuffer (whose swap is no flush) queues minutes of work. neverball
//! under SDL's offscreen driver, 8 s after its start: a `glFinish` took 57 s, with no agent
//! loaded. An unbounded first `glFinish` froze such a program that long under an attach.
//! [`wait_bounded`] waits on a fence with a limit instead, so the agent can leave the program
//! alone when the GPU is further behind than that.

use std::ffi::CStr;
use std::time::Duration;

use gpuheat_session::ClientApi;

use crate::context::parse_version;
use crate::gl::{self, GlFns};

/// What [`wait_bounded`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backlog {
    /// Everything queued before the call finished within the limit.
    CaughtUp,
    /// The limit passed first: the GPU is further behind than that.
    Behind,
    /// The context has no fences (GL before 3.2, GLES before 3.0) or the wait failed: the
    /// caller's next wait is unbounded, as before.
    Unknown,
}

/// Waits, at most `limit`, for the GPU to finish what the current context queued so far
/// (flushing it). One wait for the GPU, noted in [`crate::waits`] when it waited.
///
/// # Safety
/// A context must be current on this thread, and `gl` loaded for this process.
pub unsafe fn wait_bounded(gl: &GlFns, limit: Duration) -> Backlog {
    let (Some(fence_sync), Some(client_wait), Some(delete_sync)) =
        (gl.fence_sync, gl.client_wait_sync, gl.delete_sync)
    else {
        return Backlog::Unknown;
    };
    // SAFETY: a context is current (our caller's promise); GL_VERSION is always valid.
    let version = unsafe { (gl.get_string)(gl::VERSION) };
    if version.is_null() {
        return Backlog::Unknown;
    }
    // SAFETY: GL returns a NUL-terminated string that lives as long as the context.
    let version = unsafe { CStr::from_ptr(version.cast()) }.to_string_lossy();
    if !has_fences(parse_version(&version)) {
        return Backlog::Unknown;
    }
    // SAFETY: fences exist in this context (its version says so); the flags and the condition
    // are the only valid ones, so no GL error is raised into the program's flags.
    unsafe {
        let fence = fence_sync(gl::SYNC_GPU_COMMANDS_COMPLETE, 0);
        if fence.is_null() {
            return Backlog::Unknown;
        }
        let ns = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
        let r = crate::waits::timed(crate::waits::Phase::Counters, || {
            client_wait(fence, gl::SYNC_FLUSH_COMMANDS_BIT, ns)
        });
        delete_sync(fence);
        crate::waits::note();
        judge(r)
    }
}

/// Whether a context of this API and version has fence objects.
fn has_fences((api, major, minor): (ClientApi, u32, u32)) -> bool {
    match api {
        ClientApi::Gl => (major, minor) >= (3, 2),
        ClientApi::Gles => major >= 3,
        ClientApi::Vg | ClientApi::Vulkan => false,
    }
}

/// What `glClientWaitSync`'s result says.
fn judge(result: gl::GLenum) -> Backlog {
    match result {
        gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Backlog::CaughtUp,
        gl::TIMEOUT_EXPIRED => Backlog::Behind,
        _ => Backlog::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_come_with_gl_3_2_and_gles_3() {
        assert!(has_fences((ClientApi::Gl, 3, 2)));
        assert!(has_fences((ClientApi::Gl, 4, 6)));
        assert!(!has_fences((ClientApi::Gl, 3, 1)));
        assert!(!has_fences((ClientApi::Gl, 2, 1)));
        assert!(has_fences((ClientApi::Gles, 3, 0)));
        assert!(!has_fences((ClientApi::Gles, 2, 0)));
    }

    #[test]
    fn a_wait_that_timed_out_is_behind_and_a_failed_one_unknown() {
        assert_eq!(judge(gl::ALREADY_SIGNALED), Backlog::CaughtUp);
        assert_eq!(judge(gl::CONDITION_SATISFIED), Backlog::CaughtUp);
        assert_eq!(judge(gl::TIMEOUT_EXPIRED), Backlog::Behind);
        // GL_WAIT_FAILED (0x911D), or anything else.
        assert_eq!(judge(0x911D), Backlog::Unknown);
    }
}
