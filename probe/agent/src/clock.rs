//! The clocks recorded calls read.
//!
//! Every recorded call is stamped twice, so the stamp must cost a few ns: [`ticks`] reads the
//! CPU's time-stamp counter where the kernel itself keeps time with it (an invariant TSC:
//! `constant_tsc` and `nonstop_tsc`, clocksource `tsc`), else CLOCK_MONOTONIC. Ticks become
//! CLOCK_MONOTONIC nanoseconds on the writer thread ([`Converter`]), through anchors
//! (a tick count and CLOCK_MONOTONIC read together) taken at every swap ([`anchor`]): the
//! rate is that between the first anchor and the latest, so it only gets more exact.
//!
//! Thread CPU time ([`thread_cpu_ns`]) is a system call (about 170 ns here): the wrappers
//! read it only around calls where it means something (see `generated::CPU`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns (vDSO, tens of ns).
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CPU time of the calling thread in ns.
pub fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Whether [`ticks`] reads the time-stamp counter (decided once, at the first stamp).
fn tsc() -> bool {
    static TSC: OnceLock<bool> = OnceLock::new();
    *TSC.get_or_init(|| cfg!(target_arch = "x86_64") && invariant_tsc())
}

/// The kernel keeps time with the TSC, and the CPU says it runs at a constant rate through
/// sleep states: then it is as monotonic across cores as CLOCK_MONOTONIC is.
fn invariant_tsc() -> bool {
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpu
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    source.trim() == "tsc" && has("constant_tsc") && has("nonstop_tsc")
}

/// A time stamp of the call clock: TSC ticks, or CLOCK_MONOTONIC ns without an invariant TSC.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if tsc() {
        // SAFETY: RDTSC has no preconditions; `tsc()` checked it is usable as a clock.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    monotonic_ns()
}

/// The first anchor (ticks, ns), and the latest.
static FIRST_T: AtomicU64 = AtomicU64::new(0);
static FIRST_NS: AtomicU64 = AtomicU64::new(0);
static LAST_T: AtomicU64 = AtomicU64::new(0);
static LAST_NS: AtomicU64 = AtomicU64::new(0);

/// Reads the two clocks together (the tighter of two tries) and keeps the pair as the
/// latest anchor (the first one too, the first time). Cheap: called at every swap.
pub fn anchor() {
    if !tsc() {
        return;
    }
    let pair = || {
        let t0 = ticks();
        let ns = monotonic_ns();
        let t1 = ticks();
        (t0 + (t1 - t0) / 2, ns, t1 - t0)
    };
    let (a, b) = (pair(), pair());
    let (t, ns, _) = if a.2 <= b.2 { a } else { b };
    if FIRST_T.load(Relaxed) == 0 {
        FIRST_NS.store(ns, Relaxed);
        FIRST_T.store(t, Relaxed);
    }
    LAST_NS.store(ns, Relaxed);
    LAST_T.store(t, Relaxed);
}

/// The conversion from ticks to CLOCK_MONOTONIC ns as the anchors stand now, to convert a
/// whole frame's stamps with one snapshot.
#[derive(Clone, Copy, Debug)]
pub struct Converter {
    /// Ticks are already ns (no invariant TSC).
    identity: bool,
    t0: u64,
    n0: u64,
    rate: f64,
}

impl Converter {
    /// The conversion as the anchors stand. Before two anchors far enough apart (1 ms) to
    /// give the rate, the first stamps of a process anchor now and use the nominal rate the
    /// kernel measured, from `/proc/cpuinfo`'s `cpu MHz`.
    pub fn now() -> Converter {
        if !tsc() {
            return Converter {
                identity: true,
                t0: 0,
                n0: 0,
                rate: 1.0,
            };
        }
        if FIRST_T.load(Relaxed) == 0 {
            anchor();
        }
        let (t0, n0) = (FIRST_T.load(Relaxed), FIRST_NS.load(Relaxed));
        let (t1, n1) = (LAST_T.load(Relaxed), LAST_NS.load(Relaxed));
        let rate = if n1.saturating_sub(n0) >= 1_000_000 && t1 > t0 {
            (n1 - n0) as f64 / (t1 - t0) as f64
        } else {
            nominal_ns_per_tick()
        };
        Converter {
            identity: false,
            t0,
            n0,
            rate,
        }
    }

    /// CLOCK_MONOTONIC ns of a [`ticks`] stamp.
    #[inline]
    pub fn ns(&self, t: u64) -> u64 {
        if self.identity {
            return t;
        }
        let dt = t as f64 - self.t0 as f64;
        (self.n0 as f64 + dt * self.rate).max(0.0) as u64
    }

    /// Nanoseconds between two [`ticks`] stamps.
    #[inline]
    pub fn between(&self, t0: u64, t1: u64) -> u64 {
        if self.identity {
            return t1.saturating_sub(t0);
        }
        (t1.saturating_sub(t0) as f64 * self.rate) as u64
    }
}

/// Nanoseconds per tick from the kernel's `cpu MHz` (1 GHz when unknown).
fn nominal_ns_per_tick() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|c| {
                c.lines()
                    .find(|l| l.starts_with("cpu MHz"))
                    .and_then(|l| l.split(':').nth(1))
                    .and_then(|v| v.trim().parse::<f64>().ok())
            })
            .filter(|mhz| *mhz > 0.0)
            .map_or(1.0, |mhz| 1e3 / mhz)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_convert_to_the_monotonic_clock() {
        anchor();
        let (t0, n0) = (ticks(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(20));
        anchor();
        let (t1, n1) = (ticks(), monotonic_ns());
        // Within 50 µs of CLOCK_MONOTONIC over 20 ms (the reads are not simultaneous).
        let c = Converter::now();
        for (t, n) in [(t0, n0), (t1, n1)] {
            let got = c.ns(t) as i64;
            assert!((got - n as i64).abs() < 50_000, "{got} vs {n}");
        }
        let d = c.between(t0, t1) as i64;
        assert!((d - (n1 - n0) as i64).abs() < 50_000, "{d}");
    }
}
