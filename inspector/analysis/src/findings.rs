//! The performance checklist: rules that read a session's measured numbers and say what is
//! wrong and what to do, each finding tied to a frame and, where it has one, a call.
//!
//! Every rule works from measurements (serialized time, fragments from the heat map or the
//! fragment-shader counter, the overdraw map, the calls themselves); a rule whose inputs were
//! not captured stays silent rather than guess.

use crate::cost::{Analysis, DrawCost};
use crate::pick::heat_map;
use gpuheat_session::{Frame, HeatMap, Nested, Session};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// How much a finding matters (`gpuheat checklist --fail-on` compares against it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; costs little on its own.
    #[default]
    Info,
    /// Costs measurable time; worth fixing.
    Warning,
    /// Holds a large part of the frame: fix it first.
    Error,
}

/// What a finding is based on: the calls (indices in the frame's calls), how many there are
/// in all, and the measured values and arguments that matter, as name and text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// The calls, in frame order; at most [`MAX_EVIDENCE_CALLS`] of them.
    pub calls: Vec<u32>,
    /// How many calls (or events) the finding counts, `calls` holding the first of them.
    pub count: u64,
    /// Measured values and arguments, e.g. `("fragments", "65536")`.
    pub values: Vec<(String, String)>,
}

/// Most calls a finding's evidence lists; [`Evidence::count`] has the total.
pub const MAX_EVIDENCE_CALLS: usize = 32;

impl Evidence {
    /// Evidence of `calls` (all of them counted, the first [`MAX_EVIDENCE_CALLS`] kept).
    pub fn calls(calls: impl IntoIterator<Item = u32>) -> Evidence {
        let mut e = Evidence::default();
        for c in calls {
            if e.calls.len() < MAX_EVIDENCE_CALLS {
                e.calls.push(c);
            }
            e.count += 1;
        }
        e
    }

    /// Adds a named value.
    pub fn with(mut self, name: &str, value: impl std::fmt::Display) -> Evidence {
        self.values.push((name.to_string(), value.to_string()));
        self
    }
}

/// The time a finding costs, where it can be measured, and how it was measured (e.g. "CPU
/// time of the 1,200 redundant calls").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// Nanoseconds per frame.
    pub ns: u64,
    /// What was measured.
    pub measured: String,
}

/// One checklist result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Finding {
    /// The frame, as in [`gpuheat_session::Frame::index`].
    pub frame: u64,
    /// The call it is about (index in the frame's calls); `None` for the frame as a whole.
    pub call: Option<u32>,
    /// Stable rule id, e.g. `overdraw` (one of [`RULES`]).
    pub rule: &'static str,
    /// How much it matters.
    pub severity: Severity,
    /// One line: what is wrong, with the measured figure.
    pub title: String,
    /// Why it costs.
    pub detail: String,
    /// What to do about it.
    pub fix: String,
    /// The calls, counts and values it rests on.
    pub evidence: Evidence,
    /// The time it costs per frame, where that can be measured.
    pub cost: Option<Cost>,
}

/// A rule of the checklist: its id, the severity it usually reports, and one line on what it
/// looks for (`gpuheat checklist --rule` takes the ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id.
    pub id: &'static str,
    /// What it looks for.
    pub summary: &'static str,
}

/// Every rule of the checklist, GL and VG, in the order `gpuheat checklist` lists them.
pub const RULES: &[Rule] = &[
    Rule {
        id: "dominant-draw",
        summary: "one draw holds a large share of its frame's GPU time",
    },
    Rule {
        id: "expensive-fragments",
        summary: "a draw's cost per fragment is far above its frame's median",
    },
    Rule {
        id: "overdraw",
        summary: "covered pixels are shaded several times on average",
    },
    Rule {
        id: "small-draws",
        summary: "many draws of few fragments each",
    },
    Rule {
        id: "redundant-state",
        summary: "state calls that set what is already current",
    },
    Rule {
        id: "eclipsed-state",
        summary: "state calls overwritten before any draw used them",
    },
    Rule {
        id: "pipeline-stall",
        summary: "calls that make the CPU wait for the GPU",
    },
    Rule {
        id: "sync-calls",
        summary: "glGet* or glGetError during frames",
    },
    Rule {
        id: "texture-upload-in-frame",
        summary: "texture data uploaded while frames render",
    },
    Rule {
        id: "uncompressed-textures",
        summary: "large colour textures uploaded uncompressed",
    },
    Rule {
        id: "objects-per-frame",
        summary: "GL objects created and deleted every frame",
    },
    Rule {
        id: "compile-in-frame",
        summary: "shaders compiled or programs linked during frames",
    },
    Rule {
        id: "first-use-compile",
        summary: "a draw's first occurrence costs far more CPU time than its later ones",
    },
    Rule {
        id: "no-strips-or-indices",
        summary: "large non-indexed triangle lists",
    },
    Rule {
        id: "readback-rtt",
        summary: "render-to-texture through a read-back and an upload",
    },
    Rule {
        id: "identical-frames",
        summary: "consecutive frames with the same calls and arguments",
    },
    Rule {
        id: "same-upload",
        summary: "the same bytes uploaded again into a buffer or texture",
    },
    Rule {
        id: "renderer-unchecked",
        summary: "the program never asks which renderer it runs on",
    },
    Rule {
        id: "vg-object-churn",
        summary: "VG objects created and destroyed every frame",
    },
    Rule {
        id: "vg-image-reupload",
        summary: "the same VG image data uploaded again",
    },
    Rule {
        id: "vg-tiny-complex-path",
        summary: "complex VG paths drawn tiny",
    },
    Rule {
        id: "vg-redundant-state",
        summary: "VG state set to what is already current",
    },
    Rule {
        id: "vg-path-all-capabilities",
        summary: "VG paths created with every capability",
    },
    Rule {
        id: "vg-sync-every-frame",
        summary: "vgFinish or a read-back every frame",
    },
];

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
/// ...nor under this many times the context's calibrated bracket overhead (the error of the
/// subtraction is then at most about a tenth of the time).
pub const NOISE_OVERHEADS: u64 = 10;
/// Mean fragments per covered pixel from which overdraw is called out.
const OVERDRAW_MEAN: f64 = 3.0;
/// Draws per frame from which small draws are worth batching.
const MANY_DRAWS: usize = 100;
/// Redundant (or eclipsed) state calls per frame from which they are called out...
pub const STATE_RULE_CALLS: usize = 10;
/// ...when they are also at least this share of the frame's state calls.
pub const STATE_RULE_SHARE: f64 = 0.10;
/// Calls that make the CPU wait for the GPU.
const STALLS: [&str; 6] = [
    "glFinish",
    "glReadPixels",
    "glReadnPixels",
    "glGetTexImage",
    "glGetBufferSubData",
    "glClientWaitSync",
];

/// Runs every rule over every frame; findings come sorted by frame, then most severe first.
pub fn check(s: &Session, a: &Analysis) -> Vec<Finding> {
    let mut by_frame: BTreeMap<u64, Vec<&DrawCost>> = BTreeMap::new();
    for d in &a.draws {
        by_frame.entry(d.frame).or_default().push(d);
    }
    let mut out = Vec::new();
    // The GL calls a VG library makes inside a VG call are the library's, not the
    // program's: the GL rules about calls leave them to the VG rules.
    let nested = Nested::of(&s.vg_calls);
    let first_after_attach = s
        .attach
        .as_ref()
        .and_then(|_| s.frames.first())
        .map(|f| f.index);
    state_rules(s, &nested, &mut out);
    for f in &s.frames {
        let mut draws = by_frame.remove(&f.index).unwrap_or_default();
        draws.sort_by_key(|d| d.call);
        let draw_calls = a
            .frames
            .iter()
            .find(|st| st.index == f.index)
            .map_or(0, |st| st.draws);
        // One look-up of the frame's map and of its draws' fragments serves every rule.
        let map = heat_map(s, f.index);
        let frags = fragments(map, &draws);
        let floor = |call: u32| noise_floor(s, f, call);
        // Frame 0 holds a launched program's set-up: its times are first-use compiles and
        // uploads, not what the frames cost. Likewise the first frame after an attach, where
        // the capture's own set-up (queries, the painter's programs) and the driver's
        // recompiles for it land.
        if f.index != 0 && Some(f.index) != first_after_attach {
            dominant_draws(s, f, draw_calls, &draws, &frags, &floor, &mut out);
            fragment_cost(f.index, &draws, &frags, map.is_some(), &floor, &mut out);
        }
        if let Some(m) = map {
            overdraw(&m.overdraw, None, f.index, &mut out);
        }
        // Offscreen targets' own maps (several records of one target add up).
        let mut targets: BTreeMap<(u64, u32), Vec<u32>> = BTreeMap::new();
        for t in s.target_heat.iter().filter(|t| t.frame == f.index) {
            let sum = targets.entry((t.context, t.target.id)).or_default();
            if sum.len() < t.overdraw.len() {
                sum.resize(t.overdraw.len(), 0);
            }
            for (a, b) in sum.iter_mut().zip(&t.overdraw) {
                *a += b;
            }
        }
        for ((_, id), o) in &targets {
            overdraw(o, Some(*id), f.index, &mut out);
        }
        small_draws(map, f.index, draw_calls, &draws, &frags, &mut out);
        if f.index != 0 {
            stalls(s, f, &nested, &mut out);
        }
    }
    let fragments = crate::staterules::fragments(s, a);
    let programs = crate::staterules::check(s, &nested, &fragments, &mut out);
    crate::callrules::check(s, &nested, &programs, &mut out);
    crate::vgrules::check(s, &mut out);
    crate::callrules::subsume(&mut out);
    out.sort_by(|a, b| {
        a.frame
            .cmp(&b.frame)
            .then(b.severity.cmp(&a.severity))
            .then(a.call.cmp(&b.call))
    });
    out
}

/// The findings about one call of one frame.
pub fn for_call(findings: &[Finding], frame: u64, call: u32) -> impl Iterator<Item = &Finding> {
    findings
        .iter()
        .filter(move |f| f.frame == frame && f.call == Some(call))
}

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

/// `draw_calls` counts the frame's glDraw* calls: a frame of one draw (and a clear) has no
/// draw that dominates others. Shares are of serialized time when the frame has any (each
/// draw measured alone); else of pipelined time, but only when every work call's context
/// says pipelined times measure a draw's own cost there (not on llvmpipe, where they measure
/// when the rasterizer got to it). The draw's own time must be above the noise floor.
#[allow(clippy::too_many_arguments)]
fn dominant_draws(
    s: &Session,
    f: &Frame,
    draw_calls: usize,
    draws: &[&DrawCost],
    frags: &HashMap<u32, u64>,
    floor: &dyn Fn(u32) -> u64,
    out: &mut Vec<Finding>,
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
    let measured = if serialized {
        "serialized GPU time"
    } else {
        "pipelined GPU time"
    };
    // A frame's largest draw always holds a good share of a few draws: among few, it
    // dominates only far above its share of the fragments.
    let many = times.len() >= DOMINANT_MIN_CALLS;
    let fragments: u64 = times.iter().filter_map(|(d, _)| frags.get(&d.call)).sum();
    for (d, t) in times {
        let share = t as f64 / total as f64;
        let pixel_share = frags
            .get(&d.call)
            .filter(|_| fragments > 0)
            .map(|&n| n as f64 / fragments as f64);
        let above_fair = many || pixel_share.is_some_and(|p| share >= DOMINANT_OVER_FAIR * p);
        if share >= DOMINANT_SHARE && above_fair && t >= floor(d.call) {
            out.push(Finding {
                frame: f.index,
                call: Some(d.call),
                rule: "dominant-draw",
                severity: if share >= 0.5 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                title: format!(
                    "{} takes {:.0}% of the frame's {measured} ({:.3} of {:.3} ms)",
                    d.function,
                    share * 100.0,
                    t as f64 / 1e6,
                    total as f64 / 1e6
                ),
                detail: "One draw out of many holds a large share of the frame: it is where \
                         an optimisation pays first."
                    .into(),
                fix: "Its fragment cost and coverage say whether to shade less or cover \
                      fewer pixels."
                    .into(),
                evidence: Evidence::calls([d.call])
                    .with("measured", measured)
                    .with("share", format!("{share:.3}"))
                    .with("gpu_ns", t)
                    .with("frame_gpu_ns", total)
                    .with("work_calls", draws.len())
                    .with(
                        "fragment_share",
                        pixel_share.map_or("unknown".into(), |p| format!("{p:.3}")),
                    ),
                cost: Some(Cost {
                    ns: t,
                    measured: format!("the draw's {measured}"),
                }),
            });
        }
    }
}

/// Fragments of each draw: the heat map's exact count when painted, else the fragment-shader
/// counter.
fn fragments(map: Option<&HeatMap>, draws: &[&DrawCost]) -> HashMap<u32, u64> {
    if let Some(map) = map {
        return map.draws.iter().map(|d| (d.call, d.fragments)).collect();
    }
    draws
        .iter()
        .filter_map(|d| {
            let n = d
                .counters
                .get(gpuheat_session::counter_names::FRAGMENT_SHADER_INVOCATIONS)?;
            Some((d.call, *n))
        })
        .collect()
}

/// Cost per fragment against the frame's median, over the draws it can be trusted for:
/// serialized time (full mode; pipelined times overlap other draws) above the noise floor,
/// and at least [`MIN_FRAGMENTS`] fragments.
fn fragment_cost(
    frame: u64,
    draws: &[&DrawCost],
    frags: &HashMap<u32, u64>,
    from_map: bool,
    floor: &dyn Fn(u32) -> u64,
    out: &mut Vec<Finding>,
) {
    let per_fragment: Vec<(&DrawCost, u64, u64, f64)> = draws
        .iter()
        .filter_map(|d| {
            let n = *frags.get(&d.call)?;
            let t = d.gpu_serialized_ns?;
            (n >= MIN_FRAGMENTS && t >= floor(d.call)).then(|| (*d, n, t, t as f64 / n as f64))
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
    for (d, n, t, c) in per_fragment {
        let ratio = c / median;
        if ratio >= FRAGMENT_COST_RATIO {
            out.push(Finding {
                frame,
                call: Some(d.call),
                rule: "expensive-fragments",
                severity: Severity::Warning,
                title: format!(
                    "{c:.1} ns per fragment ({n} fragments, {:.3} ms serialized), {ratio:.1}x \
                     the frame's median ({median:.2} ns)",
                    t as f64 / 1e6
                ),
                detail: "Each pixel this draw covers costs far more than the frame's other \
                         draws: its fragment shader is the expense."
                    .into(),
                fix: "Shade less (fewer texture reads and loop iterations, lower precision) \
                      or cover fewer pixels."
                    .into(),
                evidence: Evidence::calls([d.call])
                    .with("measured", "serialized GPU time")
                    .with("serialized_ns", t)
                    .with("fragments", n)
                    .with("fragments_from", source)
                    .with("ns_per_fragment", format!("{c:.2}"))
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
                    measured: "the draw's serialized GPU time above the frame's median cost \
                               per fragment"
                        .into(),
                }),
            });
        }
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
            rule: "overdraw",
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
        rule: "small-draws",
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

/// Redundant and eclipsed setters, from the state tracker ([`crate::statetrack`]): state
/// outlives frames, so it runs over the whole capture, and each frame is judged on its own
/// calls. The calls `nested` in a VG call (a VG library's own) change the tracked state but
/// are not counted.
fn state_rules(s: &Session, nested: &Nested, out: &mut Vec<Finding>) {
    for fs in crate::statetrack::track(s, nested) {
        let Some(f) = s.frames.iter().find(|f| f.index == fs.frame) else {
            continue;
        };
        let rules = [
            (
                "redundant-state",
                &fs.redundant,
                "set the value already set",
                "Each redundant call still goes through the driver (validation, and on \
                 some drivers a state rebuild at the next draw) and changes nothing.",
                "Track the bound state in the program (or its engine) and skip calls that \
                 change nothing.",
            ),
            (
                "eclipsed-state",
                &fs.eclipsed,
                "were overwritten before any draw used them",
                "Each eclipsed call set state that a later call replaced before any draw, \
                 clear, blit, query or read-back used it: its whole cost is wasted.",
                "Set state just before the draw that needs it, once, instead of setting and \
                 resetting it (e.g. restoring defaults after each draw).",
            ),
        ];
        for (rule, calls, what, detail, fix) in rules {
            let n = calls.len();
            if !state_calls_fire(n, fs.state_calls) {
                continue;
            }
            let mut per_entry: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
            let mut cpu = 0;
            for &i in calls.iter() {
                let c = &f.calls[i as usize];
                let name = s
                    .functions
                    .functions
                    .get(usize::from(c.func))
                    .map_or("?", |f| f.name.as_str());
                let e = per_entry.entry(name).or_default();
                e.0 += 1;
                e.1 += c.cpu_ns;
                cpu += c.cpu_ns;
            }
            let mut top: Vec<(&str, (u64, u64))> = per_entry.into_iter().collect();
            top.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
            let names: Vec<String> = top
                .iter()
                .take(3)
                .map(|(name, (k, _))| format!("{name} {k}"))
                .collect();
            let mut evidence =
                Evidence::calls(calls.iter().copied()).with("state_calls", fs.state_calls);
            for (name, (k, ns)) in &top {
                evidence = evidence.with(name, format!("{k} calls, {ns} ns"));
            }
            out.push(Finding {
                frame: f.index,
                call: calls.first().copied(),
                rule,
                severity: Severity::Info,
                title: format!(
                    "{n} of {} state calls {what} ({})",
                    fs.state_calls,
                    names.join(", ")
                ),
                detail: detail.into(),
                fix: fix.into(),
                evidence,
                cost: Some(Cost {
                    ns: cpu,
                    measured: format!(
                        "time spent in the {n} calls (the thread's CPU time; wall time for \
                         calls the agent does not read the CPU clock around)"
                    ),
                }),
            });
        }
    }
}

/// Whether `n` redundant (or eclipsed) calls among a frame's `state_calls` are worth a
/// finding: at least [`STATE_RULE_CALLS`] and [`STATE_RULE_SHARE`] of the state calls.
fn state_calls_fire(n: usize, state_calls: usize) -> bool {
    n >= STATE_RULE_CALLS && n as f64 >= STATE_RULE_SHARE * state_calls as f64
}

/// GL calls that wait for the GPU; those a VG library makes (`nested` in a VG call, e.g. the
/// glFinish inside vgFinish) are the VG rule's (`vg-sync-every-frame`).
fn stalls(s: &Session, f: &Frame, nested: &Nested, out: &mut Vec<Finding>) {
    for (i, c) in f.calls.iter().enumerate() {
        if nested.parent(f.index, i as u32).is_some() {
            continue;
        }
        let Some(info) = s.functions.functions.get(c.func as usize) else {
            continue;
        };
        if STALLS.contains(&info.name.as_str()) {
            out.push(Finding {
                frame: f.index,
                call: Some(i as u32),
                rule: "pipeline-stall",
                severity: Severity::Warning,
                title: format!(
                    "{} waits for the GPU ({:.3} ms on the calling thread)",
                    info.name,
                    c.duration_ns as f64 / 1e6
                ),
                detail: "The CPU stops until the GPU has finished everything queued, so the \
                         two no longer overlap."
                    .into(),
                fix: "Read back asynchronously (pixel buffer objects, fences polled a frame \
                      later) or not at all."
                    .into(),
                evidence: Evidence::calls([i as u32]).with("wall_ns", c.duration_ns),
                cost: Some(Cost {
                    ns: c.duration_ns,
                    measured: "the call's wall time".into(),
                }),
            });
        }
    }
}
