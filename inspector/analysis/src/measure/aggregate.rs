//! A session's draws aggregated by identity ([`crate::measure::identity`]): for each draw, the median
//! and spread over the captured frames of every counter measured on it, with a first
//! occurrence that is an outlier (a shader compiled on first use) labelled and left out of
//! the steady-state figures. Frames the capture's own first-time work made unsteady
//! ([`crate::measure::warmup`]) are left out of every figure. Frames are gathered in parallel.

use crate::measure::cost::RankedBy;
use crate::measure::identity::{identify, DrawKey, Identities, KeyHashes};
use crate::measure::pick::heat_map;
use crate::measure::stats::Summary;
use crate::measure::warmup::WarmUp;
use gpuheat_session::{CallClass, ContextInfo, Frame, PipelinedIndex, Session};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;

/// Serialized GPU time (full mode).
pub const GPU_SERIALIZED: &str = gpuheat_session::counter_names::GPU_TIME_SERIALIZED;
/// Pipelined GPU time.
pub const GPU_PIPELINED: &str = gpuheat_session::counter_names::GPU_TIME_PIPELINED;
/// Thread CPU time spent inside the call.
pub const CPU_TIME: &str = gpuheat_session::counter_names::CPU_TIME;
/// Wall time spent inside the call.
pub const CALL_TIME: &str = "call_time";
/// Fragments the draw produced, from the frame's heat map.
pub const FRAGMENTS: &str = "fragments";

/// A first occurrence is an outlier when its CPU time in the call is at least this many times
/// the median of the later ones …
const FIRST_USE_RATIO: f64 = 5.0;
/// … and exceeds it by at least this much (ns): a shader compile, not scheduling jitter.
const FIRST_USE_EXCESS_NS: f64 = 200_000.0;

/// Frame-to-frame spread of the GPU time (relative) above which a capture of a program
/// drawing the same frame over and over was disturbed: on this machine, quiet captures of
/// `hot_spot` vary 2–8%, captures made while compilers ran 30–70%.
pub const DISTURBED_SPREAD: f64 = 0.25;

/// A metric measured on draws.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metric {
    /// Machine name, e.g. `gpu_time_serialized`, `samples_passed`.
    pub name: String,
    /// Unit, e.g. `ns`, `fragments`.
    pub unit: String,
}

/// A first occurrence left out of the steady-state figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FirstUse {
    /// The frame of the first occurrence.
    pub frame: u64,
    /// Its call index.
    pub call: u32,
    /// Its CPU time in the call, ns.
    pub cpu_ns: f64,
    /// The median CPU time of the later occurrences, ns.
    pub steady_cpu_ns: f64,
}

/// One draw identity of a session, over the frames it occurs in.
#[derive(Debug, Clone, Serialize)]
pub struct DrawStats {
    /// What identifies it.
    pub key: DrawKey,
    /// The hashes it is matched by across sessions.
    #[serde(skip)]
    pub hashes: KeyHashes,
    /// The call as source text (first occurrence), enums by name.
    pub text: String,
    /// `file:line function` of the call site, when debug info says.
    pub source: Option<String>,
    /// Where it occurs: (frame index, call index), in frame order.
    pub occurrences: Vec<(u64, u32)>,
    /// The first occurrence, when it was an outlier left out of `metrics`.
    pub first_use: Option<FirstUse>,
    /// Per metric (the order of [`SessionStats::metrics`]): summary of the steady-state
    /// values, `None` when never measured.
    pub metrics: Vec<Option<Summary>>,
    /// Per metric, the steady-state values, one per occurrence that measured it, sorted.
    #[serde(skip)]
    pub samples: Vec<Vec<f64>>,
}

impl DrawStats {
    /// The summary of metric `m`.
    pub fn metric(&self, m: usize) -> Option<&Summary> {
        self.metrics.get(m).and_then(Option::as_ref)
    }
}

/// Totals of one frame, for comparing frames as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FrameTotals {
    /// The frame, as in [`gpuheat_session::Frame::index`].
    pub index: u64,
    /// Σ of the ranking GPU time over the frame's work calls, ns (`None`: none measured).
    pub gpu_ns: Option<f64>,
    /// Σ CPU time in GL calls, ns.
    pub cpu_ns: f64,
    /// From the previous frame's end (or this frame's start) to this frame's end, ns.
    pub wall_ns: f64,
    /// Σ CPU time in the frame's presents (its swaps), ns: part of `cpu_ns`. A present is the
    /// window system's work more than the program's: on llvmpipe it copies the frame into
    /// the window, and es2gears' swaps, measured with no gpuheat in the process, took 88 to
    /// 1,011 µs of CPU each (averages over blocks of 500 swaps), in stretches of seconds,
    /// with nothing changed in the program.
    pub present_cpu_ns: f64,
    /// Σ wall time in the frame's presents, ns: part of `wall_ns` (with vsync, mostly the wait
    /// for the display).
    pub present_wall_ns: f64,
    /// Σ CPU time in the frame's work calls (draws, clears, blits, dispatches), ns: part of
    /// `cpu_ns`, the calls whose common drift diff estimates. The rest is state calls, and
    /// calls that wait for the GPU (a program's `glFinish` is most of its frame's CPU time in
    /// GL on a GPU), which do not follow the CPU's speed.
    pub work_cpu_ns: f64,
    /// Whether a draw's first-use outlier is in this frame (left out of the steady state).
    pub first_use: bool,
    /// Whether the capture's own first-time work made this frame unsteady
    /// ([`crate::measure::warmup`]; left out of the steady state).
    pub warmup: bool,
}

/// A session's draws by identity, costliest (by median ranking time) first.
#[derive(Debug, Clone, Serialize)]
pub struct SessionStats {
    /// The metrics measured, in the order of [`DrawStats::metrics`].
    pub metrics: Vec<Metric>,
    /// Which GPU time ranks the draws.
    pub ranked_by: RankedBy,
    /// Whether pipelined time measures a draw's own cost on some context of the session.
    pub pipelined_meaningful: bool,
    /// Every identity, costliest first.
    pub draws: Vec<DrawStats>,
    /// Per frame, in capture order.
    pub frames: Vec<FrameTotals>,
}

impl SessionStats {
    /// The index of metric `name`.
    pub fn metric_index(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m.name == name)
    }

    /// The index of the ranking GPU time.
    pub fn rank_metric(&self) -> usize {
        self.metric_index(self.ranked_by.counter())
            .expect("both GPU times are always listed")
    }

    /// The frames without a first-use outlier or warm-up (all frames when every frame has
    /// one).
    pub fn steady_frames(&self) -> Vec<&FrameTotals> {
        let steady: Vec<&FrameTotals> = self
            .frames
            .iter()
            .filter(|f| !f.first_use && !f.warmup)
            .collect();
        if steady.is_empty() {
            self.frames.iter().collect()
        } else {
            steady
        }
    }

    /// How much the steady frames' GPU time varies: 1.4826·MAD / median (`None` without GPU
    /// time). A capture of a fixed workload above [`DISTURBED_SPREAD`] was disturbed by
    /// something else on the machine.
    pub fn frame_spread(&self) -> Option<f64> {
        let gpu: Vec<f64> = self
            .steady_frames()
            .iter()
            .filter_map(|f| f.gpu_ns)
            .collect();
        Summary::of(&gpu)?.relative_spread()
    }

    /// The draw whose occurrences include (frame, call).
    pub fn find(&self, frame: u64, call: u32) -> Option<usize> {
        self.draws
            .iter()
            .position(|d| d.occurrences.binary_search(&(frame, call)).is_ok())
    }
}

/// Aggregates the draws of `s` by identity. `sources`: resolve call sites to source lines
/// (reads the program's debug info; leave it off for speed when only numbers are needed).
pub fn aggregate(s: &Session, sources: bool) -> SessionStats {
    let ids = identify(s);
    let metrics = metrics(s);
    let pipelined = s.pipelined_index();
    let contexts: HashMap<u64, &ContextInfo> = s.contexts.iter().map(|c| (c.handle, c)).collect();
    // Per frame: each work call's values, metric-major within the call.
    let values: Vec<Vec<f64>> = s
        .frames
        .par_iter()
        .zip(ids.frames.par_iter())
        .map(|(f, draws)| frame_values(s, f, draws, &metrics, &contexts, &pipelined))
        .collect();
    let ranked_by = if values
        .iter()
        .any(|v| v.chunks(metrics.len()).any(|d| !d[0].is_nan()))
    {
        RankedBy::GpuTimeSerialized
    } else {
        RankedBy::GpuTimePipelined
    };
    let rank = metrics
        .iter()
        .position(|m| m.name == ranked_by.counter())
        .expect("listed");
    let cpu = metrics
        .iter()
        .position(|m| m.name == CPU_TIME)
        .expect("listed");

    // Warm-up frames give no value, unless every frame is one (a one-frame capture still
    // shows what it measured).
    let warmup = WarmUp::of(s);
    let mut warm: Vec<bool> = s.frames.iter().map(|f| warmup.contains(f.index)).collect();
    if warm.iter().all(|&w| w) {
        warm.fill(false);
    }
    // Occurrences per identity, in frame order.
    let mut occurrences: Vec<Vec<(usize, usize)>> = vec![Vec::new(); ids.keys.len()];
    for (fi, draws) in ids.frames.iter().enumerate() {
        for (di, &(_, id)) in draws.iter().enumerate() {
            occurrences[id as usize].push((fi, di));
        }
    }
    let m = metrics.len();
    let mut draws: Vec<DrawStats> = occurrences
        .par_iter()
        .enumerate()
        .map(|(id, occ)| {
            let value = |&(fi, di): &(usize, usize), k: usize| values[fi][di * m + k];
            let counted: Vec<(usize, usize)> =
                occ.iter().copied().filter(|&(fi, _)| !warm[fi]).collect();
            let first_use = first_use(counted.iter().map(|o| value(o, cpu)).collect::<Vec<_>>())
                .map(|(cpu_ns, steady_cpu_ns)| {
                    let (fi, di) = counted[0];
                    FirstUse {
                        frame: s.frames[fi].index,
                        call: ids.frames[fi][di].0,
                        cpu_ns,
                        steady_cpu_ns,
                    }
                });
            let steady = &counted[usize::from(first_use.is_some())..];
            // Sorted once here: every statistic sorts its input, and sorting sorted values
            // is a linear pass.
            let samples: Vec<Vec<f64>> = (0..m)
                .map(|k| {
                    let mut v: Vec<f64> = steady
                        .iter()
                        .map(|o| value(o, k))
                        .filter(|v| !v.is_nan())
                        .collect();
                    v.sort_by(f64::total_cmp);
                    v
                })
                .collect();
            DrawStats {
                key: ids.keys[id].clone(),
                hashes: ids.hashes[id],
                text: ids.texts[id].clone(),
                source: None,
                occurrences: occ
                    .iter()
                    .map(|&(fi, di)| (s.frames[fi].index, ids.frames[fi][di].0))
                    .collect(),
                first_use,
                metrics: samples.iter().map(|v| Summary::of(v)).collect(),
                samples,
            }
        })
        .collect();
    if sources {
        resolve_sources(s, &ids, &mut draws);
    }
    let first_use_frames: Vec<u64> = draws
        .iter()
        .filter_map(|d| d.first_use.map(|f| f.frame))
        .collect();
    let mut prev = None;
    let frames = s
        .frames
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(i, (f, v))| {
            let ranked: Vec<f64> = v
                .chunks(m)
                .map(|d| d[rank])
                .filter(|x| !x.is_nan())
                .collect();
            let presents = || {
                f.calls.iter().filter(|c| {
                    s.functions
                        .functions
                        .get(usize::from(c.func))
                        .is_some_and(|info| info.class == CallClass::Swap)
                })
            };
            let t = FrameTotals {
                index: f.index,
                gpu_ns: (!ranked.is_empty()).then(|| ranked.iter().sum()),
                cpu_ns: f.calls.iter().map(|c| c.cpu_ns as f64).sum(),
                wall_ns: crate::measure::cost::wall_ns(prev, f) as f64,
                present_cpu_ns: presents().map(|c| c.cpu_ns as f64).sum(),
                present_wall_ns: presents().map(|c| c.duration_ns as f64).sum(),
                work_cpu_ns: f
                    .calls
                    .iter()
                    .filter(|c| s.functions.is_work(c.func))
                    .map(|c| c.cpu_ns as f64)
                    .sum(),
                first_use: first_use_frames.contains(&f.index),
                warmup: warm[i],
            };
            prev = Some(f);
            t
        })
        .collect();
    draws.sort_by(|a, b| {
        let t = |d: &DrawStats| d.metric(rank).map_or(-1.0, |s| s.median);
        t(b).total_cmp(&t(a))
            .then(a.occurrences.cmp(&b.occurrences))
    });
    SessionStats {
        metrics,
        ranked_by,
        pipelined_meaningful: s.contexts.iter().any(|c| c.pipelined_meaningful),
        draws,
        frames,
    }
}

/// Whether the first of `cpu` (one value per occurrence, in order) is a first-use outlier:
/// `Some((first, median of the rest))`. Needs two later occurrences to judge.
pub fn first_use(cpu: Vec<f64>) -> Option<(f64, f64)> {
    if cpu.len() < 3 {
        return None;
    }
    let rest = crate::measure::stats::median(&cpu[1..]);
    let first = cpu[0];
    (first >= FIRST_USE_RATIO * rest && first - rest >= FIRST_USE_EXCESS_NS)
        .then_some((first, rest))
}

/// The metrics of a session: the two GPU times, CPU and wall time in the call, every counter a
/// context offered, and fragments when there are heat maps.
fn metrics(s: &Session) -> Vec<Metric> {
    let ns = |name: &str| Metric {
        name: name.into(),
        unit: "ns".into(),
    };
    let mut out = vec![
        ns(GPU_SERIALIZED),
        ns(GPU_PIPELINED),
        ns(CPU_TIME),
        ns(CALL_TIME),
    ];
    for ctx in &s.contexts {
        for c in ctx.counters.iter().filter(|c| c.available) {
            if !out.iter().any(|m| m.name == c.name) && c.name != CPU_TIME {
                out.push(Metric {
                    name: c.name.clone(),
                    unit: c.unit.clone(),
                });
            }
        }
    }
    if !s.heat.is_empty() {
        out.push(Metric {
            name: FRAGMENTS.into(),
            unit: "fragments".into(),
        });
    }
    out
}

/// The values of each work call of frame `f` (NaN: not measured), metric-major per call.
fn frame_values(
    s: &Session,
    f: &Frame,
    draws: &[(u32, u32)],
    metrics: &[Metric],
    contexts: &HashMap<u64, &ContextInfo>,
    pipelined: &PipelinedIndex,
) -> Vec<f64> {
    let m = metrics.len();
    let mut out = vec![f64::NAN; draws.len() * m];
    let samples: HashMap<u32, &[gpuheat_session::CounterValue]> =
        f.samples.iter().map(|s| (s.call, &s.values[..])).collect();
    let heat = heat_map(s, f.index);
    let coverage: HashMap<u32, u64> = heat
        .map(|h| h.draws.iter().map(|d| (d.call, d.fragments)).collect())
        .unwrap_or_default();
    let index: HashMap<&str, usize> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name.as_str(), i))
        .collect();
    for (di, &(call, _)) in draws.iter().enumerate() {
        let row = &mut out[di * m..(di + 1) * m];
        let c = &f.calls[call as usize];
        row[2] = c.cpu_ns as f64;
        row[3] = c.duration_ns as f64;
        if let (Some(values), Some(ctx)) = (samples.get(&call), contexts.get(&c.context)) {
            for v in values.iter() {
                if let Some(k) = ctx
                    .counters
                    .get(v.counter as usize)
                    .and_then(|info| index.get(info.name.as_str()))
                {
                    row[*k] = v.value as f64;
                }
            }
        }
        if let Some(t) = pipelined.get(f.index, call).filter(|t| !t.disjoint) {
            row[1] = t.gpu_ns as f64;
        }
        if let (Some(&n), Some(&k)) = (coverage.get(&call), index.get(FRAGMENTS)) {
            row[k] = n as f64;
        }
    }
    out
}

fn resolve_sources(s: &Session, ids: &Identities, draws: &mut [DrawStats]) {
    let Some(map) = s.modules.as_ref() else {
        return;
    };
    let mut symbols = gpuheat_symbols::Symbolizer::new(map);
    let by_key: HashMap<&DrawKey, u64> = ids
        .keys
        .iter()
        .zip(&ids.addresses)
        .map(|(k, &a)| (k, a))
        .collect();
    for d in draws {
        if let Some(&addr) = by_key.get(&d.key) {
            d.source = crate::measure::cost::source(&symbols.resolve(addr));
        }
    }
}
