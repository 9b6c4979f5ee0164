//! How often the agent made the program's thread wait for the GPU: each of its own `glFinish`,
//! read-backs (`glReadPixels`, a buffer mapped for reading) and reads of query results that
//! were not known to have landed counts one. A wait costs a CPU–GPU round trip, which on a
//! real GPU, not the work measured, is what a capture costs (issue 25's target: at most 2 per
//! context per frame, whatever the draw count). Reads after a wait, of results it made land,
//! do not count again.
//!
//! One counter for the process: the agent takes it at each captured frame's end, so a frame's
//! figure holds the waits of every thread during that frame.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static WAITS: AtomicU64 = AtomicU64::new(0);

/// Counts one wait for the GPU.
pub fn note() {
    WAITS.fetch_add(1, Relaxed);
}

/// The waits counted since the last call, and starts counting again.
pub fn take() -> u64 {
    WAITS.swap(0, Relaxed)
}
