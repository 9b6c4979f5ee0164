//! Why a watched frame triggered (`gpuheat attach --trigger`): the triggering frame against
//! the steady frames kept around it, call site by call site. A hitch is nearly always more
//! calls of some site (a burst of draws, an upload that happens once in a while) or some
//! site's calls taking longer (a shader compiled at first use, a sync); both show as the
//! site's count or time in the triggering frame against its median over the steady frames.

use crate::measure::cost::{callsite, source, wall_ns};
use crate::measure::stats::Summary;
use gpuheat_session::control::{Trigger, TriggerMetric};
use gpuheat_session::{Frame, PipelinedIndex, Session, TriggerHit};
use gpuheat_symbols::Symbolizer;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// A triggering frame, explained.
#[derive(Debug, Clone, Serialize)]
pub struct Hitch {
    /// 1 for the watch's first trigger, and so on.
    pub number: u32,
    /// The triggering frame.
    pub frame: u64,
    /// The rule it crossed (`frame-ms>20`).
    pub rule: String,
    /// What it measured, in ms.
    pub value_ms: f64,
    /// The watched frames kept with it that did not cross the rule: what "usual" means here.
    pub steady_frames: Vec<u64>,
    /// The rule's metric over the steady frames (ms); `None` when none was kept.
    pub steady: Option<Summary>,
    /// The frame's totals against the steady frames' medians: wall, time in GL, GPU.
    pub totals: Vec<Total>,
    /// What made the difference, largest first.
    pub causes: Vec<Cause>,
    /// The frames captured in full mode after it that the session holds.
    pub full_frames: Vec<u64>,
    /// One line: the frame against its neighbours, and its causes.
    pub summary: String,
}

/// One of a frame's totals against the steady frames.
#[derive(Debug, Clone, Serialize)]
pub struct Total {
    /// `wall`, `in GL` (the calls' wall durations) or `gpu`.
    pub what: &'static str,
    /// The triggering frame's, in ms (`None`: not measured, e.g. no GPU times landed).
    pub frame_ms: Option<f64>,
    /// The steady frames' median and spread (1.4826·MAD), in ms.
    pub median_ms: Option<f64>,
    /// The spread (1.4826·MAD) of the steady frames, in ms.
    pub spread_ms: Option<f64>,
}

/// A call site whose calls made the triggering frame longer.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// The entry point.
    pub function: String,
    /// `module+0xoffset`.
    pub callsite: String,
    /// `file:line function`, when the program has line information.
    pub source: Option<String>,
    /// Calls from the site in the triggering frame.
    pub calls: u32,
    /// Their median in the steady frames.
    pub usual_calls: f64,
    /// Time in GL (the calls' wall durations) beyond the steady median, in ms.
    pub extra_gl_ms: f64,
    /// GPU time (pipelined) beyond the steady median, in ms.
    pub extra_gpu_ms: f64,
    /// Bytes the site's calls uploaded in the triggering frame.
    pub upload_bytes: u64,
    /// The site's calls in the triggering frame (indices in its calls; the first
    /// [`MAX_CAUSE_CALLS`]).
    pub frame_calls: Vec<u32>,
    /// How the report says it.
    pub text: String,
}

/// Per call site of one frame: calls, time in GL (the calls' wall durations: a call that
/// blocks costs the frame its wait, not only its CPU time), pipelined GPU time, uploaded bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Site {
    calls: u32,
    /// The first [`MAX_CAUSE_CALLS`] of them.
    first: [u32; MAX_CAUSE_CALLS],
    gl_ns: f64,
    gpu_ns: f64,
    uploads: u64,
}

/// What one frame measured.
struct Measured {
    wall_ns: f64,
    gl_ns: f64,
    gpu_ns: Option<f64>,
    sites: HashMap<(u32, u64), Site>,
}

/// A site's extra beyond this is noise: a few µs of CPU time jitter in any call.
const NOISE_FLOOR_NS: f64 = 50_000.0;
/// … or this many spreads of the site over the steady frames.
const NOISE_SPREADS: f64 = 3.0;
/// Most causes named.
const MAX_CAUSES: usize = 5;
/// Most calls a cause lists.
pub const MAX_CAUSE_CALLS: usize = 8;

/// Every trigger of the session, explained, in order.
pub fn hitches(s: &Session) -> Vec<Hitch> {
    if s.triggers.is_empty() {
        return Vec::new();
    }
    let pipelined = s.pipelined_index();
    let by_index: BTreeMap<u64, usize> = s
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| (f.index, i))
        .collect();
    let uploads: HashMap<(u64, u32), u64> = s
        .uploads
        .iter()
        .flat_map(|u| u.uploads.iter().map(move |x| ((u.frame, x.call), x.bytes)))
        .collect();
    let measure = |fi: usize| -> Measured {
        let f = &s.frames[fi];
        let prev = fi.checked_sub(1).map(|p| &s.frames[p]);
        measure_frame(prev, f, &pipelined, &uploads)
    };
    let mut symbols = s.modules.as_ref().map(Symbolizer::new);
    let mut out = Vec::new();
    for hit in &s.triggers {
        // Frames a live view asked for (rule `capture`) are no hitch.
        let (Some(&ti), Some(rule)) = (by_index.get(&hit.frame), Trigger::parse(&hit.rule)) else {
            continue;
        };
        let rule = Some(rule);
        let metric = |m: &Measured| match rule.map(|r| r.metric) {
            Some(TriggerMetric::GpuMs) => m.gpu_ns,
            _ => Some(m.wall_ns),
        };
        let target = measure(ti);
        let mut steady_frames = Vec::new();
        let mut steady = Vec::new();
        for (&index, &fi) in by_index.range(hit.kept_first..=hit.kept_last) {
            if index == hit.frame {
                continue;
            }
            let m = measure(fi);
            // Another frame over the threshold is a hitch too, not what "usual" means.
            if rule.is_some_and(|r| metric(&m).is_some_and(|v| r.fires(v as u64))) {
                continue;
            }
            steady_frames.push(index);
            steady.push(m);
        }
        let full_frames: Vec<u64> = by_index
            .keys()
            .copied()
            .filter(|&i| hit.is_full(i))
            .collect();
        out.push(explain(
            s,
            hit,
            &target,
            &steady,
            steady_frames,
            full_frames,
            &mut symbols,
            &metric,
        ));
    }
    out
}

fn measure_frame(
    prev: Option<&Frame>,
    f: &Frame,
    pipelined: &PipelinedIndex,
    uploads: &HashMap<(u64, u32), u64>,
) -> Measured {
    let mut sites: HashMap<(u32, u64), Site> = HashMap::new();
    let mut gpu: Option<f64> = None;
    for (i, c) in f.calls.iter().enumerate() {
        let site = sites.entry((u32::from(c.func), c.callsite)).or_default();
        if let Some(slot) = site.first.get_mut(site.calls as usize) {
            *slot = i as u32;
        }
        site.calls += 1;
        site.gl_ns += c.duration_ns as f64;
        if let Some(t) = pipelined.get(f.index, i as u32).filter(|t| !t.disjoint) {
            site.gpu_ns += t.gpu_ns as f64;
            *gpu.get_or_insert(0.0) += t.gpu_ns as f64;
        }
        site.uploads += uploads.get(&(f.index, i as u32)).copied().unwrap_or(0);
    }
    Measured {
        wall_ns: wall_ns(prev, f) as f64,
        gl_ns: f.calls.iter().map(|c| c.duration_ns as f64).sum(),
        gpu_ns: gpu,
        sites,
    }
}

#[allow(clippy::too_many_arguments)]
fn explain(
    s: &Session,
    hit: &TriggerHit,
    target: &Measured,
    steady: &[Measured],
    steady_frames: Vec<u64>,
    full_frames: Vec<u64>,
    symbols: &mut Option<Symbolizer>,
    metric: &dyn Fn(&Measured) -> Option<f64>,
) -> Hitch {
    let ms = |ns: f64| ns / 1e6;
    let summary_of = |f: &dyn Fn(&Measured) -> Option<f64>| {
        let v: Vec<f64> = steady.iter().filter_map(f).collect();
        Summary::of(&v)
    };
    let total = |what, f: &dyn Fn(&Measured) -> Option<f64>| {
        let sum = summary_of(f);
        Total {
            what,
            frame_ms: f(target).map(ms),
            median_ms: sum.map(|x| ms(x.median)),
            spread_ms: sum.map(|x| ms(1.4826 * x.mad)),
        }
    };
    let totals = vec![
        total("wall", &|m| Some(m.wall_ns)),
        total("in GL", &|m| Some(m.gl_ns)),
        total("gpu", &|m| m.gpu_ns),
    ];
    let steady_metric = summary_of(metric).map(|x| Summary {
        median: ms(x.median),
        q1: ms(x.q1),
        q3: ms(x.q3),
        mad: ms(x.mad),
        min: ms(x.min),
        max: ms(x.max),
        ..x
    });

    // Every site of the frame and of the steady ones, against its median.
    let mut keys: Vec<(u32, u64)> = target.sites.keys().copied().collect();
    for m in steady {
        keys.extend(m.sites.keys().copied());
    }
    keys.sort_unstable();
    keys.dedup();
    // Without a steady frame (every frame kept crossed the rule: a program slower than the
    // threshold throughout) there is nothing to compare: the frame's costliest sites are
    // named with their own times.
    let compared = !steady.is_empty();
    let plus = if compared { "+" } else { "" };
    let mut causes: Vec<(f64, Cause)> = Vec::new();
    for key in keys {
        let now = target.sites.get(&key).copied().unwrap_or_default();
        let usual = |f: fn(&Site) -> f64| -> (f64, f64) {
            let v: Vec<f64> = steady
                .iter()
                .map(|m| m.sites.get(&key).map_or(0.0, f))
                .collect();
            match Summary::of(&v) {
                Some(x) => (x.median, 1.4826 * x.mad),
                None => (0.0, 0.0),
            }
        };
        let (calls, _) = usual(|x| f64::from(x.calls));
        let (cpu, cpu_spread) = usual(|x| x.gl_ns);
        let (gpu, gpu_spread) = usual(|x| x.gpu_ns);
        let extra_cpu = now.gl_ns - cpu;
        let extra_gpu = now.gpu_ns - gpu;
        let beyond = |extra: f64, spread: f64| extra > NOISE_FLOOR_NS.max(NOISE_SPREADS * spread);
        let more = f64::from(now.calls) - calls >= 1.0;
        let slower = beyond(extra_cpu, cpu_spread) || beyond(extra_gpu, gpu_spread);
        if !slower {
            continue;
        }
        let function = s
            .functions
            .functions
            .get(key.0 as usize)
            .map_or_else(|| format!("function {}", key.0), |f| f.name.clone());
        let src = symbols
            .as_mut()
            .and_then(|y| source(&y.resolve(key.1)))
            .map(|x| short(&x).to_string());
        let site = callsite(s, key.1);
        let at = src.clone().unwrap_or_else(|| site.clone());
        let mut text = if !compared {
            format!("{} {function} at {at}", now.calls)
        } else if more {
            let extra = f64::from(now.calls) - calls;
            format!(
                "{} more {function} at {at} ({} in the frame, usually {})",
                fmt_count(extra),
                now.calls,
                fmt_count(calls)
            )
        } else {
            format!("{function} at {at} took longer")
        };
        if now.uploads > 0 {
            text.push_str(&format!(", uploading {}", bytes(now.uploads)));
        }
        let mut parts = Vec::new();
        if beyond(extra_cpu, cpu_spread) {
            parts.push(format!("{plus}{:.1} ms in GL", ms(extra_cpu)));
        }
        if beyond(extra_gpu, gpu_spread) {
            parts.push(format!("{plus}{:.1} ms GPU", ms(extra_gpu)));
        }
        text.push_str(&format!(": {}", parts.join(", ")));
        causes.push((
            extra_cpu.max(extra_gpu),
            Cause {
                function,
                callsite: site,
                source: src,
                calls: now.calls,
                usual_calls: calls,
                extra_gl_ms: ms(extra_cpu),
                extra_gpu_ms: ms(extra_gpu),
                upload_bytes: now.uploads,
                frame_calls: now.first[..(now.calls as usize).min(MAX_CAUSE_CALLS)].to_vec(),
                text,
            },
        ));
    }
    causes.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut causes: Vec<Cause> = causes
        .into_iter()
        .take(MAX_CAUSES)
        .map(|(_, c)| c)
        .collect();
    // Wall time the GL calls do not explain: the program's own work, or its waits elsewhere.
    let outside = |m: &Measured| m.wall_ns - m.gl_ns;
    let (usual_outside, outside_spread) = {
        let v: Vec<f64> = steady.iter().map(outside).collect();
        Summary::of(&v).map_or((0.0, 0.0), |x| (x.median, 1.4826 * x.mad))
    };
    let extra_outside = outside(target) - usual_outside;
    let wall_rule = metric(target) == Some(target.wall_ns);
    if wall_rule && extra_outside > NOISE_FLOOR_NS.max(NOISE_SPREADS * outside_spread) {
        causes.push(Cause {
            function: String::new(),
            callsite: String::new(),
            source: None,
            calls: 0,
            usual_calls: 0.0,
            extra_gl_ms: ms(extra_outside),
            extra_gpu_ms: 0.0,
            upload_bytes: 0,
            frame_calls: Vec::new(),
            text: format!(
                "{plus}{:.1} ms outside GL calls (the program's own work between them, or waiting)",
                ms(extra_outside)
            ),
        });
    }
    // A GPU rule fires on the times landed by then: a frame whose heavy work is still queued
    // has more to come (on an H200, `hitch` fired at 30.2 ms, its first heavy draw's, and its
    // 20 draws took 605 ms in all). Its value is the frame's total, kept with the frame.
    let gpu_rule = matches!(
        Trigger::parse(&hit.rule).map(|r| r.metric),
        Some(TriggerMetric::GpuMs)
    );
    let fired_ms = ms(hit.value_ns as f64);
    let value_ms = match target.gpu_ns {
        Some(total) if gpu_rule => fired_ms.max(ms(total)),
        _ => fired_ms,
    };
    let fired_at = if value_ms > fired_ms * 1.01 {
        format!(", fired at {fired_ms:.1} ms as its first times landed")
    } else {
        String::new()
    };
    let against = match &steady_metric {
        Some(x) => format!(
            "against a median of {:.1} ms (±{:.1}) over {} steady frame{}",
            x.median,
            1.4826 * x.mad,
            x.n,
            if x.n == 1 { "" } else { "s" }
        ),
        None => "with no steady frame kept to compare (every frame kept crossed the rule); its costliest call sites".to_string(),
    };
    let what = if gpu_rule { "took on the GPU" } else { "took" };
    let named = if causes.is_empty() {
        "no call site stands out beyond the noise".to_string()
    } else {
        causes
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    // Where pipelined times do not measure a call's own work, a GPU cause may be earlier
    // calls' deferred work landing on it: the frame's GPU total stands, the attribution less.
    let deferring = s.contexts.iter().find(|c| !c.pipelined_meaningful);
    let gpu_named = causes.iter().any(|c| c.text.contains(" ms GPU"));
    let caveat = match deferring {
        Some(c) if gpu_named => format!(
            " (GPU times are pipelined; on {} a call's may hold earlier calls' deferred work)",
            c.renderer
        ),
        _ => String::new(),
    };
    let summary = format!(
        "frame {} {what} {value_ms:.1} ms ({}{fired_at}) {against}: {named}{caveat}",
        hit.frame, hit.rule
    );
    Hitch {
        number: hit.number,
        frame: hit.frame,
        rule: hit.rule.clone(),
        value_ms,
        steady_frames,
        steady: steady_metric,
        totals,
        causes: std::mem::take(&mut causes),
        full_frames,
        summary,
    }
}

/// `20` or `1.5`.
fn fmt_count(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

/// `16.0 MiB`.
fn bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// `hitch.rs:195` of `examples/src/bin/hitch.rs:195 hitch::main::{{closure}}`: the file's
/// name and line, which is what a person looks for in a one-line summary.
fn short(source: &str) -> &str {
    let place = source.split(' ').next().unwrap_or(source);
    place.rsplit('/').next().unwrap_or(place)
}

/// One side of [`WatchDiff`]: how often it hitched.
#[derive(Debug, Clone, Serialize)]
pub struct WatchSide {
    /// Frames watched (timeline mode), kept or not.
    pub frames_watched: u64,
    /// Triggers.
    pub triggers: usize,
    /// Triggers per 1,000 watched frames.
    pub per_thousand: f64,
    /// The triggering frames' median value (ms).
    pub median_ms: Option<f64>,
    /// The steady frames' median, the median over the triggers (ms).
    pub steady_ms: Option<f64>,
}

/// A call site named as a cause in either watch, and how often.
#[derive(Debug, Clone, Serialize)]
pub struct SiteDiff {
    /// The entry point.
    pub function: String,
    /// `file:line` where known, else `module+0xoffset`.
    pub at: String,
    /// Triggers of A and of B naming it.
    pub in_a: usize,
    /// See `in_a`.
    pub in_b: usize,
}

/// Two watches compared (`gpuheat diff` of sessions made with `attach --trigger`): how often
/// each hitched and which causes went or came. A fix shows as a cause named in A's triggers
/// and in none of B's.
#[derive(Debug, Clone, Serialize)]
pub struct WatchDiff {
    /// `None` for a side that is a capture, not a watch.
    pub a: Option<WatchSide>,
    /// See `a`.
    pub b: Option<WatchSide>,
    /// Every site either side named, most triggers first.
    pub sites: Vec<SiteDiff>,
}

fn side(s: &Session, hitches: &[Hitch]) -> Option<WatchSide> {
    let w = s.watch.as_ref()?;
    let mut values: Vec<f64> = hitches.iter().map(|h| h.value_ms).collect();
    let mut steady: Vec<f64> = hitches
        .iter()
        .filter_map(|h| h.steady.map(|x| x.median))
        .collect();
    let median = |v: &mut Vec<f64>| Summary::of(v).map(|x| x.median);
    Some(WatchSide {
        frames_watched: w.frames_watched,
        triggers: hitches.len(),
        per_thousand: if w.frames_watched == 0 {
            0.0
        } else {
            1e3 * hitches.len() as f64 / w.frames_watched as f64
        },
        median_ms: median(&mut values),
        steady_ms: median(&mut steady),
    })
}

/// Compares the watches of `a` and `b`; `None` when neither is one.
pub fn compare(a: &Session, b: &Session) -> Option<WatchDiff> {
    if a.watch.is_none() && b.watch.is_none() {
        return None;
    }
    let (ha, hb) = (hitches(a), hitches(b));
    let mut sites: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for (list, on_a) in [(&ha, true), (&hb, false)] {
        for h in list.iter() {
            let mut named: Vec<(String, String)> = h
                .causes
                .iter()
                .filter(|c| !c.function.is_empty())
                .map(|c| {
                    let at = c.source.clone().unwrap_or_else(|| c.callsite.clone());
                    (c.function.clone(), at)
                })
                .collect();
            named.sort();
            named.dedup();
            for key in named {
                let n = sites.entry(key).or_default();
                if on_a {
                    n.0 += 1;
                } else {
                    n.1 += 1;
                }
            }
        }
    }
    let mut sites: Vec<SiteDiff> = sites
        .into_iter()
        .map(|((function, at), (in_a, in_b))| SiteDiff {
            function,
            at,
            in_a,
            in_b,
        })
        .collect();
    sites.sort_by_key(|s| std::cmp::Reverse(s.in_a + s.in_b));
    Some(WatchDiff {
        a: side(a, &ha),
        b: side(b, &hb),
        sites,
    })
}
