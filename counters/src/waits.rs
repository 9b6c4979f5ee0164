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
//! And the agent's own time by what it did ([`Phase`], [`timed`]): on a real GPU, once the
//! waits are gone, a capture's cost is the GL calls the agent adds, and this says which.
//!
//! One counter of each for the process: the agent takes them at each captured frame's end, so
//! a frame's figures hold every thread's during that frame.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use gpuheat_session::{AgentTimes, PaintGpu};

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

/// What the agent's time went to ([`AgentTimes`]'s fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The brackets around work calls.
    Counters,
    /// Reading the results of calls timed deferred, and the pipelined timestamp pairs.
    Results,
    /// Painting heat.
    Paint,
    /// Reading the maps back.
    Maps,
    /// Geometry capture.
    Geometry,
}

static PHASES: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

std::thread_local! {
    /// Whether this thread is inside [`timed`] work already.
    static TIMING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work`, adding its wall time to `phase`. Two clock reads (a vDSO call, tens of ns)
/// against a bracket's GL calls (on an H100, 12 to 16 us per draw in full mode). Work timed
/// inside other timed work (a geometry capture that settles the last frame's replays first)
/// counts once, in the outer phase.
pub fn timed<R>(phase: Phase, work: impl FnOnce() -> R) -> R {
    if TIMING.with(|t| t.replace(true)) {
        return work();
    }
    /// Lowers the flag however `work` ends (a panic the agent catches further up included).
    struct Down;
    impl Drop for Down {
        fn drop(&mut self) {
            TIMING.with(|t| t.set(false));
        }
    }
    let _down = Down;
    let start = Instant::now();
    let out = work();
    PHASES[phase as usize].fetch_add(start.elapsed().as_nanos() as u64, Relaxed);
    out
}

/// The painter's own GPU time since the last [`take_times`] (replays, weighting), and the
/// draws of it not timed; `GPU_MEASURED` says a flush read any.
static GPU: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
static GPU_MEASURED: AtomicBool = AtomicBool::new(false);

/// Adds what a flush read of the painter's own GPU time ([`crate::own_gpu`]).
pub(crate) fn add_gpu(own: crate::own_gpu::OwnGpu) {
    GPU[0].fetch_add(own.replay_ns, Relaxed);
    GPU[1].fetch_add(own.weight_ns, Relaxed);
    GPU[2].fetch_add(own.untimed, Relaxed);
    GPU_MEASURED.store(true, Relaxed);
}

/// The agent's time by phase since the last call, and starts counting again.
pub fn take_times() -> AgentTimes {
    let take = |p: Phase| PHASES[p as usize].swap(0, Relaxed);
    AgentTimes {
        counters_ns: take(Phase::Counters),
        results_ns: take(Phase::Results),
        paint_ns: take(Phase::Paint),
        maps_ns: take(Phase::Maps),
        geometry_ns: take(Phase::Geometry),
        paint_gpu: GPU_MEASURED.swap(false, Relaxed).then(|| PaintGpu {
            replay_ns: GPU[0].swap(0, Relaxed),
            weight_ns: GPU[1].swap(0, Relaxed),
            untimed: GPU[2].swap(0, Relaxed),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timed_work_is_added_to_its_phase_once_and_taken_once() {
        take_times();
        let v = timed(Phase::Maps, || {
            std::thread::sleep(std::time::Duration::from_millis(2));
            7
        });
        assert_eq!(v, 7);
        let t = take_times();
        assert!(t.maps_ns >= 2_000_000 && t.total_ns() >= t.maps_ns, "{t:?}");
        assert_eq!(take_times().maps_ns, 0);

        // Timed work inside timed work counts once, in the outer phase (one test: the
        // counters are the process's, which tests running beside each other would share).
        timed(Phase::Geometry, || {
            timed(Phase::Maps, || {
                std::thread::sleep(std::time::Duration::from_millis(20))
            })
        });
        let t = take_times();
        assert!(t.geometry_ns >= 20_000_000 && t.maps_ns == 0, "{t:?}");
        // The flag is down again: the next timed work counts.
        timed(Phase::Geometry, || {
            std::thread::sleep(std::time::Duration::from_millis(2))
        });
        assert!(take_times().geometry_ns >= 2_000_000);
    }
}
