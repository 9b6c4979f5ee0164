//! What one clock stamp costs on this machine, the floor under the per-call target: the agent
//! reads the clock twice around every recorded call (before and after the real call), with
//! the TSC where the kernel keeps time with it, else CLOCK_MONOTONIC (`probe/agent/src/clock.rs`).

use std::hint::black_box;
use std::time::Instant;

/// Median ns per read of `read` over 7 rounds of 200,000 reads.
fn cost(mut read: impl FnMut() -> u64) -> f64 {
    const READS: u32 = 200_000;
    let mut rounds: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let mut sum = 0u64;
            for _ in 0..READS {
                sum = sum.wrapping_add(read());
            }
            black_box(sum);
            t.elapsed().as_nanos() as f64 / f64::from(READS)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

/// ns per read of the time-stamp counter (x86_64 only), and of CLOCK_MONOTONIC.
pub fn stamp_costs() -> (Option<f64>, f64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC has no preconditions.
    let tsc = Some(cost(|| unsafe { core::arch::x86_64::_rdtsc() }));
    #[cfg(not(target_arch = "x86_64"))]
    let tsc = None;
    let start = Instant::now();
    let monotonic = cost(|| start.elapsed().as_nanos() as u64);
    (tsc, monotonic)
}
