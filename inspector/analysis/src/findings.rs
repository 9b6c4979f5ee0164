//! The performance checklist: rules that read a session's measured numbers and say what is
//! wrong and what to do, each finding tied to a frame and, where it has one, a call.
//!
//! Every rule works from measurements (serialized time, fragments from the heat map or the
//! fragment-shader counter, the overdraw map, the calls themselves); a rule whose inputs were
//! not captured stays silent rather than guess.

use crate::cost::{rank_time, Analysis, DrawCost};
use crate::pick::heat_map;
use gpuheat_session::{CallClass, Frame, HeatMap, Nested, Session};
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
/// A draw whose cost per fragment is this many times its frame's median is called out.
const FRAGMENT_COST_RATIO: f64 = 4.0;
/// Mean fragments per covered pixel from which overdraw is called out.
const OVERDRAW_MEAN: f64 = 3.0;
/// Draws per frame from which small draws are worth batching.
const MANY_DRAWS: usize = 100;
/// Redundant state calls per frame from which they are called out (and 10% of state calls).
const REDUNDANT_CALLS: usize = 10;
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
    redundant_state(s, &nested, &mut out);
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
        dominant_draws(f.index, draw_calls, &draws, &mut out);
        fragment_cost(f.index, &draws, &frags, &mut out);
        overdraw(map, f.index, &mut out);
        small_draws(map, f.index, draw_calls, &draws, &frags, &mut out);
        stalls(s, f, &nested, &mut out);
    }
    crate::callrules::check(s, &nested, &mut out);
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

/// `draw_calls` counts the frame's glDraw* calls: a frame of one draw (and a clear) has no
/// draw that dominates others.
fn dominant_draws(frame: u64, draw_calls: usize, draws: &[&DrawCost], out: &mut Vec<Finding>) {
    if draw_calls < 2 {
        return;
    }
    for d in draws {
        let (Some(share), Some(t)) = (d.frame_share, rank_time(d)) else {
            continue;
        };
        if share >= DOMINANT_SHARE {
            out.push(Finding {
                frame,
                call: Some(d.call),
                rule: "dominant-draw",
                severity: if share >= 0.5 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                title: format!(
                    "{} takes {:.0}% of the frame's GPU time ({:.3} ms)",
                    d.function,
                    share * 100.0,
                    t as f64 / 1e6
                ),
                detail: "One draw out of many holds a large share of the frame: it is where \
                         an optimisation pays first."
                    .into(),
                fix: "Its fragment cost and coverage say whether to shade less or cover \
                      fewer pixels."
                    .into(),
                evidence: Evidence::calls([d.call])
                    .with("share", format!("{:.3}", share))
                    .with("serialized_ns", t),
                cost: Some(Cost {
                    ns: t,
                    measured: "the draw's GPU time".into(),
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
            let n = d.counters.get("fragment_shader_invocations")?;
            Some((d.call, *n))
        })
        .collect()
}

fn fragment_cost(
    frame: u64,
    draws: &[&DrawCost],
    frags: &HashMap<u32, u64>,
    out: &mut Vec<Finding>,
) {
    let per_fragment: Vec<(&DrawCost, f64)> = draws
        .iter()
        .filter_map(|d| {
            let n = *frags.get(&d.call)?;
            let t = d.gpu_serialized_ns?;
            (n > 0).then(|| (*d, t as f64 / n as f64))
        })
        .collect();
    if per_fragment.len() < 2 {
        return;
    }
    let mut costs: Vec<f64> = per_fragment.iter().map(|(_, c)| *c).collect();
    costs.sort_by(f64::total_cmp);
    let median = costs[costs.len() / 2];
    if median <= 0.0 {
        return;
    }
    for (d, c) in per_fragment {
        let ratio = c / median;
        if ratio >= FRAGMENT_COST_RATIO {
            out.push(Finding {
                frame,
                call: Some(d.call),
                rule: "expensive-fragments",
                severity: Severity::Warning,
                title: format!(
                    "{:.1} ns per fragment, {ratio:.1}x the frame's median ({median:.2} ns)",
                    c
                ),
                detail: "Each pixel this draw covers costs far more than the frame's other \
                         draws: its fragment shader is the expense."
                    .into(),
                fix: "Shade less (fewer texture reads and loop iterations, lower precision) \
                      or cover fewer pixels."
                    .into(),
                evidence: Evidence::calls([d.call])
                    .with("fragments", frags[&d.call])
                    .with("ns_per_fragment", format!("{c:.2}"))
                    .with("median_ns_per_fragment", format!("{median:.2}")),
                cost: d.gpu_serialized_ns.map(|t| Cost {
                    ns: t - (median * frags[&d.call] as f64).min(t as f64) as u64,
                    measured: "the draw's GPU time above the frame's median cost per fragment"
                        .into(),
                }),
            });
        }
    }
}

fn overdraw(map: Option<&HeatMap>, frame: u64, out: &mut Vec<Finding>) {
    let Some(map) = map else {
        return;
    };
    let covered = map.overdraw.iter().filter(|&&n| n > 0).count();
    if covered == 0 {
        return;
    }
    let total: u64 = map.overdraw.iter().map(|&n| u64::from(n)).sum();
    let max = map.overdraw.iter().copied().max().unwrap_or(0);
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
                "each covered pixel is shaded {mean:.1} times on average (at most {max})"
            ),
            detail: "Fragments that a later draw covers are wasted work.".into(),
            fix: "Draw opaque geometry front to back with the depth test on, skip layers that \
                  are hidden, and keep blended layers small."
                .into(),
            evidence: Evidence::default()
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

/// State setters whose whole effect is their arguments, and whether the first argument names
/// the slot they set (a target or capability) rather than a value.
const SETTERS: [(&str, bool); 21] = [
    ("glBindBuffer", true),
    ("glBindTexture", true),
    ("glBindFramebuffer", true),
    ("glBindRenderbuffer", true),
    ("glBindSampler", true),
    ("glEnable", true),
    ("glDisable", true),
    ("glUseProgram", false),
    ("glBindVertexArray", false),
    ("glActiveTexture", false),
    ("glBlendFunc", false),
    ("glBlendFuncSeparate", false),
    ("glBlendEquation", false),
    ("glDepthFunc", false),
    ("glDepthMask", false),
    ("glColorMask", false),
    ("glCullFace", false),
    ("glFrontFace", false),
    ("glViewport", false),
    ("glScissor", false),
    ("glClearColor", false),
];

/// A setter's name (glDisable as glEnable), the slot it sets, and the program for uniforms.
type StateSlot<'a> = (&'a str, u64, u64);

/// Where a state call's value is kept: calls with the same key overwrite each other.
/// glEnable and glDisable share a slot per capability; glUniform* values belong to the
/// program in use, so it is part of their key.
fn state_key<'a>(name: &'a str, args: &[u64], program: u64) -> Option<StateSlot<'a>> {
    let first = args.first().copied().unwrap_or(0);
    if name.starts_with("glUniform") && !name.starts_with("glUniformBlock") {
        return Some((name, first, program));
    }
    let &(_, slot) = SETTERS.iter().find(|(n, _)| *n == name)?;
    let name = if name == "glDisable" {
        "glEnable"
    } else {
        name
    };
    Some((name, if slot { first } else { 0 }, 0))
}

/// `GL_ARRAY_BUFFER`: the buffer binding the start state records.
const GL_ARRAY_BUFFER: u64 = 0x8892;

/// The slots whose values the capture's start state records, per context, with those values
/// as the setter's arguments: the program in use, the vertex array, the array buffer and the
/// viewport.
fn start_slots(s: &Session) -> Vec<(u64, StateSlot<'static>, Vec<u64>)> {
    let mut slots = Vec::new();
    for st in &s.states {
        let int = |v: i32| i64::from(v) as u64;
        slots.push((
            st.context,
            ("glUseProgram", 0, 0),
            vec![u64::from(st.program)],
        ));
        slots.push((
            st.context,
            ("glBindVertexArray", 0, 0),
            vec![u64::from(st.vertex_array)],
        ));
        slots.push((
            st.context,
            ("glBindBuffer", GL_ARRAY_BUFFER, 0),
            vec![GL_ARRAY_BUFFER, u64::from(st.array_buffer)],
        ));
        slots.push((
            st.context,
            ("glViewport", 0, 0),
            st.viewport.iter().map(|&v| int(v)).collect(),
        ));
    }
    slots
}

/// Redundant state calls, tracked across the whole capture (state outlives frames), reported
/// per frame. A slot's value before its first captured call is unknown, except for the slots
/// the capture's start state records ([`start_slots`]). The calls `nested` in a VG call (a VG
/// library's own) change the tracked state but are not counted.
fn redundant_state(s: &Session, nested: &Nested, out: &mut Vec<Finding>) {
    let start = start_slots(s);
    let mut program: HashMap<u64, u64> = s
        .states
        .iter()
        .map(|st| (st.context, u64::from(st.program)))
        .collect();
    // (context, slot) → (set by glEnable rather than glDisable, arguments).
    let mut last: HashMap<(u64, StateSlot), (bool, &[u64])> = start
        .iter()
        .map(|(c, slot, args)| ((*c, *slot), (true, &args[..])))
        .collect();
    for f in &s.frames {
        let (mut state_calls, mut redundant) = (0usize, 0usize);
        let mut example = None;
        for (i, c) in f.calls.iter().enumerate() {
            let Some(info) = s.functions.functions.get(c.func as usize) else {
                continue;
            };
            if info.class != CallClass::State {
                continue;
            }
            let prog = program.get(&c.context).copied().unwrap_or(0);
            let Some(key) = state_key(&info.name, &c.args, prog) else {
                continue;
            };
            let counted = nested.parent(f.index, i as u32).is_none();
            state_calls += usize::from(counted);
            let enable = info.name != "glDisable";
            let value = if info.name == "glEnable" || info.name == "glDisable" {
                &c.args[..0]
            } else {
                &c.args[..]
            };
            if let Some((was_enable, prev)) = last.insert((c.context, key), (enable, value)) {
                if was_enable == enable && prev == value && counted {
                    redundant += 1;
                    example.get_or_insert(i as u32);
                }
            }
            if info.name == "glUseProgram" {
                program.insert(c.context, c.args.first().copied().unwrap_or(0));
            }
        }
        if redundant >= REDUNDANT_CALLS && redundant * 10 >= state_calls {
            out.push(Finding {
                frame: f.index,
                call: example,
                rule: "redundant-state",
                severity: Severity::Info,
                title: format!(
                    "{redundant} of {state_calls} state calls set the value already set"
                ),
                detail: "Each redundant call still goes through the driver's validation.".into(),
                fix: "Track the bound state in the program and skip calls that change \
                      nothing."
                    .into(),
                ..Default::default()
            });
        }
    }
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
