//! How often the agent made the program's thread wait for the GPU: each of its own `glFinish`,
//! read-backs (`glReadPixels`, a buffer mapped for reading) and reads of query results that
//! were not known to have landed counts one. A wait costs a CPU–GPU round trip, which on a
//! real GPU, not the work measured, is what a capture costs (issue 25's target: at most 2 per
//! context per frame, whatever the draw count). Reads after a wait, of results it made land,
//! do not count again.
//!
//! Beside it, the work calls timed deferred (a timestamp pair and queries read at the frame's
//! end, [`crate::context::ContextCounters::resolve`]): calls that cost no wait of their own.
//!
//! One counter of each for the process: the agent takes them at each captured frame's end, so
//! a frame's figures hold every thread's during that frame.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static WAITS: AtomicU64 = AtomicU64::new(0);
static DEFERRED: AtomicU64 = AtomicU64::new(0);

/// Counts one wait for the GPU.
pub fn note() {
    WAITS.fetch_add(1, Relaxed);
}

/// The waits counted since the last call, and starts counting again.
pub fn take() -> u64 {
    WAITS.swap(0, Relaxed)
}

/// Counts one work call timed deferred.
pub fn note_deferred() {
    DEFERRED.fetch_add(1, Relaxed);
}

/// The work calls timed deferred since the last call, and starts counting again.
pub fn take_deferred() -> u64 {
    DEFERRED.swap(0, Relaxed)
}
