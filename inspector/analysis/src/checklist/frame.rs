//! Checklist rules that read a frame's measured numbers: one draw holding a large share of
//! the frame's GPU time, a cost per fragment far above the frame's median, overdraw, many
//! small draws, and a watched frame that triggered (a hitch).
//!
//! Every rule works from measurements (serialized time, fragments from the heat map or the
//! fragment-shader counter, the overdraw map); a rule whose inputs were not captured stays
//! silent rather than guess.

use super::context::Context;
use super::finding::{Cost, Evidence, Finding, Severity};
use super::rule::{Family, Rule};
use crate::measure::cost::DrawCost;
use gpuheat_session::{Frame, HeatMap, Session};
// Fx: the per-frame fragment maps are the context's.
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// A draw taking at least this share of its frame's GPU time is called out.
const DOMINANT_SHARE: f64 = 0.25;
/// …in a frame of at least this many work calls (4× a fair share of 1/16 is the quarter), or
/// with this many times its share of the frame's fragments.
const DOMINANT_MIN_CALLS: usize = 16;
/// See [`DOMINANT_MIN_CALLS`].
const DOMINANT_OVER_FAIR: f64 = 4.0;
/// A draw whose cost per fragment is this many times its frame's median is called out.
const FRAGMENT_COST_RATIO: f64 = 4.0;
/// Draws of fewer fragments are not judged per fragment: their time is mostly the draw's
/// fixed cost (set-up, the timing bracket), which divided by a few fragments looks huge
/// (glmark2's `ideas` has 12-fragment draws of 0.095 ms: "7909 ns per fragment"). 256 is a
/// 16×16 block, 16 of llvmpipe's 4×4 tiles; `hot_spot`'s documented 24×24 spot (576) is
/// above it.
pub const MIN_FRAGMENTS: u64 = 256;
/// Serialized times under this are not judged (dominant-draw, expensive-fragments): timer
/// queries resolve a microsecond or so, and the calibrated bracket overhead subtracted from
/// each time varies between draws by about its own size.
pub const NOISE_FLOOR_NS: u64 = 10_000;
/// ...nor under this many times the context's calibrated bracket overhead: the error of the
/// subtraction is then at most about a third of the time, so a draw judged 4× the median is
/// at least 2× it. (Ten times, before, left llvmpipe's full-screen draws of a debug agent,
/// 330 µs against a 37 µs bracket, unjudged in half the runs: expensive-fragments then had
/// nothing to compare the hot spot with.)
pub const NOISE_OVERHEADS: u64 = 3;
/// Mean fragments per covered pixel from which overdraw is called out.
const OVERDRAW_MEAN: f64 = 3.0;
/// Draws per frame from which small draws are worth batching.
const MANY_DRAWS: usize = 100;

/// The rules of this family, in the order the catalogue lists them.
pub(super) const RULES: &[&Rule] = &[
    &DOMINANT_DRAW,
    &EXPENSIVE_FRAGMENTS,
    &OVERDRAW,
    &SMALL_DRAWS,
    &HITCH,
];

/// `hitch`: each trigger of a watch (`gpuheat attach --trigger`), its frame against the steady
/// frames kept around it and the call sites that made the difference (`measure::hitch`).
pub(super) const HITCH: Rule = Rule {
    id: "hitch",
    family: Family::Frame,
    severity: Severity::Warning,
    summary: "a watched frame took far longer than the frames around it",
    check: |ctx, out| {
        for h in crate::measure::hitch::hitches(ctx.s) {
            hitch(&h, out);
        }
    },
};

fn hitch(h: &crate::measure::hitch::Hitch, out: &mut Vec<Finding>) {
    let usual = h.steady.map(|x| x.median);
    let title = match usual {
        Some(m) => format!(
            "frame took {:.1} ms ({}) against a median of {m:.1} ms over {} steady frames",
            h.value_ms,
            h.rule,
            h.steady_frames.len()
        ),
        None => format!("frame took {:.1} ms ({})", h.value_ms, h.rule),
    };
    let causes: Vec<&str> = h.causes.iter().map(|c| c.text.as_str()).collect();
    let detail = if causes.is_empty() {
        "No call site stands out beyond the noise: the time went to the program itself, or to work the captured calls do not show."
            .to_string()
    } else {
        format!(
            "What the frame did beyond its neighbours: {}.",
            causes.join("; ")
        )
    };
    let names = |f: &str| h.causes.iter().any(|c| c.function.contains(f));
    let mut fixes = Vec::new();
    if h.causes.iter().any(|c| c.upload_bytes > 0) {
        fixes.push(
            "upload ahead of time, or spread a large upload over frames (glTexSubImage2D in slices from a pixel buffer object)",
        );
    }
    if names("Compile") || names("LinkProgram") || names("ProgramBinary") {
        fixes.push("compile and link shaders at load time, not when first needed");
    }
    if h.steady.is_some() && h.causes.iter().any(|c| c.calls as f64 > c.usual_calls) {
        fixes.push("spread bursts of work over several frames, or make them cheaper");
    }
    fixes.push("compare the full-mode frames captured right after it (gpuheat report --per-frame)");
    let top = h.causes.first();
    out.push(Finding {
        frame: h.frame,
        call: top.and_then(|c| c.frame_calls.first().copied()),
        rule: HITCH.id,
        severity: Severity::Warning,
        title,
        detail,
        fix: {
            let mut f = fixes.join("; ");
            if let Some(c) = f.get_mut(0..1) {
                c.make_ascii_uppercase();
            }
            f + "."
        },
        evidence: Evidence::calls(top.map_or(&[][..], |c| &c.frame_calls[..]).iter().copied())
            .with("rule", &h.rule)
            .with("frame_ms", format!("{:.3}", h.value_ms))
            .with(
                "steady_median_ms",
                usual.map_or("unknown".into(), |m| format!("{m:.3}")),
            )
            .with("steady_frames", h.steady_frames.len()),
        cost: usual.map(|m| Cost {
            ns: ((h.value_ms - m).max(0.0) * 1e6) as u64,
            measured: format!("the frame's {} beyond the steady median", h.rule),
        }),
    });
}

/// Whether frame `f`'s times say what the program's frames cost. Frame 0 holds a launched
/// program's set-up: its times are first-use compiles and uploads. Likewise a frame the
/// capture's own first-time work made unsteady (`measure::warmup`: the agent's marks, or an
/// older agent's first frame after an attach, where the capture's set-up and the driver's
/// recompiles for it landed).
fn steady(ctx: &Context, f: &Frame) -> bool {
    f.index != 0 && !ctx.warmup.contains(f.index)
}

/// `dominant-draw`.
pub(super) const DOMINANT_DRAW: Rule = Rule {
    id: "dominant-draw",
    family: Family::Frame,
    severity: Severity::Warning,
    summary: "one draw holds a large share of its frame's GPU time",
    check: |ctx, out| {
        let mut seen = Vec::new();
        for (f, v) in ctx.frames().filter(|(f, _)| steady(ctx, f)) {
            dominant_shares(ctx.s, f, v.draw_calls, &v.draws, &v.fragments, &mut seen);
        }
        dominant_draws(by_identity(ctx, seen), out);
    },
};

/// `expensive-fragments`.
pub(super) const EXPENSIVE_FRAGMENTS: Rule = Rule {
    id: "expensive-fragments",
    family: Family::Frame,
    severity: Severity::Warning,
    summary: "a draw's cost per fragment is far above the median draw's",
    check: |ctx, out| {
        let mut seen = Vec::new();
        let (mut frames, mut painted) = (0, false);
        for (f, v) in ctx.frames().filter(|(f, _)| steady(ctx, f)) {
            frames += 1;
            painted |= v.map.is_some();
            for d in &v.draws {
                let (Some(&n), Some(t)) = (v.fragments.get(&d.call), d.gpu_serialized_ns) else {
                    continue;
                };
                if n >= MIN_FRAGMENTS && t >= noise_floor(ctx.s, f, d.call) {
                    seen.push(Seen {
                        frame: f.index,
                        draw: d,
                        figures: (n, t),
                    });
                }
            }
        }
        fragment_cost(by_identity(ctx, seen), frames, painted, out);
    },
};

/// `overdraw`: the screen's map, then each offscreen target's own (several records of one
/// target add up).
pub(super) const OVERDRAW: Rule = Rule {
    id: "overdraw",
    family: Family::Frame,
    severity: Severity::Warning,
    summary: "covered pixels are shaded several times on average",
    check: |ctx, out| {
        for (f, v) in ctx.frames() {
            if let Some(m) = v.map {
                overdraw(&m.overdraw, None, f.index, out);
            }
            let mut targets: BTreeMap<(u64, u32), Vec<u32>> = BTreeMap::new();
            for t in ctx.s.target_heat.iter().filter(|t| t.frame == f.index) {
                let sum = targets.entry((t.context, t.target.id)).or_default();
                if sum.len() < t.overdraw.len() {
                    sum.resize(t.overdraw.len(), 0);
                }
                for (a, b) in sum.iter_mut().zip(&t.overdraw) {
                    *a += b;
                }
            }
            for ((_, id), o) in &targets {
                overdraw(o, Some(*id), f.index, out);
            }
        }
    },
};

/// `small-draws`.
pub(super) const SMALL_DRAWS: Rule = Rule {
    id: "small-draws",
    family: Family::Frame,
    severity: Severity::Warning,
    summary: "many draws of few fragments each",
    check: |ctx, out| {
        for (f, v) in ctx.frames() {
            let (draws, frags) = (&v.draws, &v.fragments);
            small_draws(v.map, f.index, v.draw_calls, draws, frags, out);
        }
    },
};

/// The least serialized time of call `call` of frame `f` that rule judges: [`NOISE_FLOOR_NS`]
/// or [`NOISE_OVERHEADS`] times its context's calibrated bracket overhead, the larger.
fn noise_floor(s: &Session, f: &Frame, call: u32) -> u64 {
    let overhead = f
        .calls
        .get(call as usize)
        .and_then(|c| s.contexts.iter().find(|x| x.handle == c.context))
        .map_or(0, |x| x.serialized_overhead_ns);
    NOISE_FLOOR_NS.max(NOISE_OVERHEADS * overhead)
}

/// One occurrence, in a steady frame, of a draw that a rule judges, with the figures it
/// judges it by.
struct Seen<'a, T> {
    frame: u64,
    draw: &'a DrawCost,
    figures: T,
}

/// The occurrences grouped by draw identity (the same draw in every frame), in order of
/// first appearance; a call without an identity stands alone. A rule judges each group by its
/// medians: one slow frame (a preemption, a page fault) does not make a draw expensive.
fn by_identity<'a, T>(ctx: &Context, seen: Vec<Seen<'a, T>>) -> Vec<Vec<Seen<'a, T>>> {
    let mut groups: Vec<Vec<Seen<T>>> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::default();
    for s in seen {
        match ctx.identity.get(&(s.frame, s.draw.call)) {
            Some(&id) => {
                let g = *index.entry(id).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(s);
            }
            None => groups.push(vec![s]),
        }
    }
    groups
}

/// The median of `values` (the upper one of an even count, so it is a value seen).
fn median_of<T: Copy + PartialOrd>(values: impl Iterator<Item = T>) -> Option<T> {
    let mut v: Vec<T> = values.collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied()
}

/// The occurrence of a group whose `key` is the group's median: the one a finding points at.
fn representative<'g, 'a, T>(group: &'g [Seen<'a, T>], key: impl Fn(&T) -> f64) -> &'g Seen<'a, T> {
    let mut order: Vec<&Seen<T>> = group.iter().collect();
    order.sort_by(|a, b| key(&a.figures).total_cmp(&key(&b.figures)));
    order[order.len() / 2]
}

/// What expensive-fragments judges of one draw in one frame: its fragments and its
/// serialized time.
type Fragments = (u64, u64);

/// What dominant-draw judges of one draw in one frame.
#[derive(Clone, Copy)]
struct Share {
    /// The draw's time (serialized, else pipelined).
    ns: u64,
    /// The frame's total of those times.
    frame_ns: u64,
    /// `ns` over `frame_ns`.
    share: f64,
    /// The draw's share of the frame's fragments, when known.
    pixel_share: Option<f64>,
    /// Far enough above its fair share: of many work calls, or 4× its share of fragments.
    above_fair: bool,
    /// The draw's time is above the noise floor.
    above_floor: bool,
    /// Serialized time (else pipelined).
    serialized: bool,
    /// The frame's work calls that have a time.
    work_calls: usize,
}

/// `draw_calls` counts the frame's glDraw* calls: a frame of one draw (and a clear) has no
/// draw that dominates others. Shares are of serialized time when the frame has any (each
/// draw measured alone); else of pipelined time, but only when every work call's context
/// says pipelined times measure a draw's own cost there (not on llvmpipe, where they measure
/// when the rasterizer got to it). Adds each timed draw's share of frame `f` to `seen`.
fn dominant_shares<'a>(
    s: &Session,
    f: &Frame,
    draw_calls: usize,
    draws: &[&'a DrawCost],
    frags: &HashMap<u32, u64>,
    seen: &mut Vec<Seen<'a, Share>>,
) {
    if draw_calls < 2 {
        return;
    }
    let serialized = draws.iter().any(|d| d.gpu_serialized_ns.is_some());
    let times: Vec<(&DrawCost, u64)> = if serialized {
        draws
            .iter()
            .filter_map(|d| Some((*d, d.gpu_serialized_ns?)))
            .collect()
    } else {
        let meaningful = draws.iter().all(|d| {
            f.calls
                .get(d.call as usize)
                .and_then(|c| s.contexts.iter().find(|x| x.handle == c.context))
                .is_some_and(|x| x.pipelined_meaningful)
        });
        if !meaningful {
            return;
        }
        draws
            .iter()
            .filter_map(|d| Some((*d, d.gpu_pipelined_ns?)))
            .collect()
    };
    let total: u64 = times.iter().map(|(_, t)| t).sum();
    if total == 0 {
        return;
    }
    // A frame's largest draw always holds a good share of a few draws: among few, it
    // dominates only far above its share of the fragments.
    let many = times.len() >= DOMINANT_MIN_CALLS;
    let fragments: u64 = times.iter().filter_map(|(d, _)| frags.get(&d.call)).sum();
    for &(d, t) in &times {
        let share = t as f64 / total as f64;
        let pixel_share = frags
            .get(&d.call)
            .filter(|_| fragments > 0)
            .map(|&n| n as f64 / fragments as f64);
        seen.push(Seen {
            frame: f.index,
            draw: d,
            figures: Share {
                ns: t,
                frame_ns: total,
                share,
                pixel_share,
                above_fair: many || pixel_share.is_some_and(|p| share >= DOMINANT_OVER_FAIR * p),
                above_floor: t >= noise_floor(s, f, d.call),
                serialized,
                work_calls: times.len(),
            },
        });
    }
}

/// A draw dominates when, over the steady frames it was drawn in, its median share is at
/// least [`DOMINANT_SHARE`], it was above its fair share and above the noise floor in at
/// least half of them.
fn dominant_draws(groups: Vec<Vec<Seen<Share>>>, out: &mut Vec<Finding>) {
    for g in groups {
        let half =
            |p: fn(&Share) -> bool| 2 * g.iter().filter(|x| p(&x.figures)).count() >= g.len();
        let Some(share) = median_of(g.iter().map(|x| x.figures.share)) else {
            continue;
        };
        if share < DOMINANT_SHARE || !half(|x| x.above_fair) || !half(|x| x.above_floor) {
            continue;
        }
        let rep = representative(&g, |x| x.share);
        let d = rep.draw;
        let t = median_of(g.iter().map(|x| x.figures.ns)).unwrap_or(0);
        let total = median_of(g.iter().map(|x| x.figures.frame_ns)).unwrap_or(0);
        let measured = if rep.figures.serialized {
            "serialized GPU time"
        } else {
            "pipelined GPU time"
        };
        let over = medians_over(g.len());
        out.push(Finding {
            frame: rep.frame,
            call: Some(d.call),
            rule: DOMINANT_DRAW.id,
            severity: if share >= 0.5 {
                Severity::Error
            } else {
                Severity::Warning
            },
            title: format!(
                "{} takes {:.0}% of the frame's {measured} ({:.3} of {:.3} ms{over})",
                d.function,
                share * 100.0,
                t as f64 / 1e6,
                total as f64 / 1e6
            ),
            detail: "One draw out of many holds a large share of the frame: it is where an \
                     optimisation pays first."
                .into(),
            fix: "Its fragment cost and coverage say whether to shade less or cover fewer \
                  pixels."
                .into(),
            evidence: Evidence::calls([d.call])
                .with("measured", measured)
                .with("share", format!("{share:.3}"))
                .with("share_range", range(g.iter().map(|x| x.figures.share), 3))
                .with("frames", g.len())
                .with("gpu_ns", t)
                .with("frame_gpu_ns", total)
                .with("work_calls", rep.figures.work_calls)
                .with(
                    "fragment_share",
                    rep.figures
                        .pixel_share
                        .map_or("unknown".into(), |p| format!("{p:.3}")),
                ),
            cost: Some(Cost {
                ns: t,
                measured: format!("the draw's {measured}"),
            }),
        });
    }
}

/// `min-max` of `values`, with `digits` decimals.
fn range(values: impl Iterator<Item = f64>, digits: usize) -> String {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    format!("{lo:.digits$}-{hi:.digits$}")
}

/// Cost per fragment of each draw (its median time over its median fragments, over the
/// steady frames it was drawn in) against the median draw's, over the draws it can be
/// trusted for: serialized time (full mode; pipelined times overlap other draws) above the
/// noise floor, and at least [`MIN_FRAGMENTS`] fragments. `frames` counts the steady frames.
fn fragment_cost(
    groups: Vec<Vec<Seen<Fragments>>>,
    frames: usize,
    from_map: bool,
    out: &mut Vec<Finding>,
) {
    let per_fragment: Vec<(&[Seen<Fragments>], u64, u64, f64)> = groups
        .iter()
        .filter_map(|g| {
            let n = median_of(g.iter().map(|x| x.figures.0))?;
            let t = median_of(g.iter().map(|x| x.figures.1))?;
            Some((g.as_slice(), n, t, t as f64 / n as f64))
        })
        .collect();
    if per_fragment.len() < 2 {
        return;
    }
    let mut costs: Vec<f64> = per_fragment.iter().map(|p| p.3).collect();
    costs.sort_by(f64::total_cmp);
    let median = costs[costs.len() / 2];
    if median <= 0.0 {
        return;
    }
    let source = if from_map {
        "heat map"
    } else {
        "fragment_shader_invocations counter"
    };
    let whose = if frames > 1 {
        "the median draw's"
    } else {
        "the frame's median"
    };
    for (g, n, t, c) in per_fragment {
        let ratio = c / median;
        if ratio < FRAGMENT_COST_RATIO {
            continue;
        }
        let rep = representative(g, |&(n, t)| t as f64 / n as f64);
        let d = rep.draw;
        let over = medians_over(g.len());
        out.push(Finding {
            frame: rep.frame,
            call: Some(d.call),
            rule: EXPENSIVE_FRAGMENTS.id,
            severity: Severity::Warning,
            title: format!(
                "{c:.1} ns per fragment ({n} fragments, {:.3} ms serialized{over}), \
                 {ratio:.1}x {whose} ({median:.2} ns)",
                t as f64 / 1e6
            ),
            detail: "Each pixel this draw covers costs far more than the frame's other draws: \
                     its fragment shader is the expense."
                .into(),
            fix: "Shade less (fewer texture reads and loop iterations, lower precision) or \
                  cover fewer pixels."
                .into(),
            evidence: Evidence::calls([d.call])
                .with("measured", "serialized GPU time")
                .with("serialized_ns", t)
                .with("fragments", n)
                .with("fragments_from", source)
                .with("frames", g.len())
                .with("ns_per_fragment", format!("{c:.2}"))
                .with(
                    "ns_per_fragment_range",
                    range(g.iter().map(|x| x.figures.1 as f64 / x.figures.0 as f64), 2),
                )
                .with("median_ns_per_fragment", format!("{median:.2}"))
                .with(
                    "draws_compared",
                    format!(
                        "{} (at least {MIN_FRAGMENTS} fragments and above the noise floor)",
                        costs.len()
                    ),
                ),
            cost: Some(Cost {
                ns: t - (median * n as f64).min(t as f64) as u64,
                measured: format!("the draw's serialized GPU time above {whose} cost per fragment"),
            }),
        });
    }
}

/// Overdraw of one map: the screen's (`target` `None`) or an offscreen target's.
fn overdraw(map: &[u32], target: Option<u32>, frame: u64, out: &mut Vec<Finding>) {
    let covered = map.iter().filter(|&&n| n > 0).count();
    if covered == 0 {
        return;
    }
    let total: u64 = map.iter().map(|&n| u64::from(n)).sum();
    let max = map.iter().copied().max().unwrap_or(0);
    let mean = total as f64 / covered as f64;
    if mean >= OVERDRAW_MEAN {
        out.push(Finding {
            frame,
            call: None,
            rule: OVERDRAW.id,
            severity: if mean >= 2.0 * OVERDRAW_MEAN {
                Severity::Error
            } else {
                Severity::Warning
            },
            title: format!(
                "each covered pixel{} is shaded {mean:.1} times on average (at most {max})",
                target
                    .map(|t| format!(" of render target {t}"))
                    .unwrap_or_default()
            ),
            detail: "Fragments that a later draw covers are wasted work.".into(),
            fix: "Draw opaque geometry front to back with the depth test on, skip layers that \
                  are hidden, and keep blended layers small."
                .into(),
            evidence: Evidence::default()
                .with(
                    "target",
                    target.map_or("screen".to_string(), |t| t.to_string()),
                )
                .with("covered_pixels", covered)
                .with("fragments", total)
                .with("mean", format!("{mean:.2}"))
                .with("max", max),
            ..Default::default()
        });
    }
}

/// `draw_calls` counts the frame's glDraw* calls; `draws` holds all its work calls.
fn small_draws(
    map: Option<&HeatMap>,
    frame: u64,
    draw_calls: usize,
    draws: &[&DrawCost],
    frags: &HashMap<u32, u64>,
    out: &mut Vec<Finding>,
) {
    if draw_calls < MANY_DRAWS {
        return;
    }
    let mut sizes: Vec<u64> = draws
        .iter()
        .filter_map(|d| frags.get(&d.call).copied())
        .collect();
    sizes.sort_unstable();
    let median = sizes.get(sizes.len() / 2).copied();
    let pixels = map.map(|m| m.pixels());
    let small = match (median, pixels) {
        (Some(m), Some(p)) => m * 100 < p,
        (Some(m), None) => m < 4096,
        (None, _) => true,
    };
    if !small {
        return;
    }
    let cpu: u64 = draws.iter().map(|d| d.cpu_ns).sum();
    out.push(Finding {
        frame,
        call: None,
        rule: SMALL_DRAWS.id,
        severity: Severity::Warning,
        title: format!(
            "{draw_calls} draws in one frame{}, {:.3} ms of CPU time in them",
            median
                .map(|m| format!(", median {m} fragments each"))
                .unwrap_or_default(),
            cpu as f64 / 1e6
        ),
        detail: "Each draw call has a fixed CPU and driver cost; many small draws spend more \
                 on calls than on pixels."
            .into(),
        fix: "Batch them: merge buffers, use instancing or multi-draw.".into(),
        evidence: Evidence::default().with("draws", draw_calls).with(
            "median_fragments",
            median.map_or("unknown".into(), |m| m.to_string()),
        ),
        cost: Some(Cost {
            ns: cpu,
            measured: "CPU time of the frame's work calls".into(),
        }),
    });
}

/// ", medians over N frames" when a finding's figures are medians of `frames` > 1 frames.
fn medians_over(frames: usize) -> String {
    if frames > 1 {
        format!(", medians over {frames} frames")
    } else {
        String::new()
    }
}
