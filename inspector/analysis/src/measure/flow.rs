//! Cost flowing downstream: within one frame, the cost of producing a texture (its render
//! target's passes) flows into the draws that sample it, and from them into the pixels they
//! cover, so the screen's **total** map holds everything upstream of each pixel.
//!
//! Inputs are a frame's `HEAT` (the screen's own heat per context), `HTGT` (offscreen
//! targets' own heat; several records of one context and target add up) and `FLOW` records
//! (per painted draw: its target, the textures it sampled, its coverage). Pure logic, no I/O.
//!
//! - **Passes.** Walking the frame's painted draws in call order (one numbering for all
//!   contexts, so call order is time order), a draw into target X joins X's current pass,
//!   unless that pass already has a consumer: then it starts a new one (ping-pong: the same
//!   target redrawn after being read is a second pass).
//! - **Consumers.** A draw consumes pass P when a texture it sampled is a texture attachment
//!   of P's target and P is the latest pass written into a target holding that texture (a blit
//!   or a copy reading a renderbuffer names it as `Attachment::flow_key` does, and consumes
//!   its pass the same way).
//!   Texture names are matched across the contexts of the frame (contexts of one share group
//!   share names; two unrelated contexts with the same texture name would be confused: a known
//!   limit). A draw sampling a texture of the target it draws into (a feedback loop) does not
//!   consume that target's pass, and a note says so.
//! - **Cost.** `cost(P) = Σ_{d∈P} (T_d + inflow_d)` over P's draws with fragments, and
//!   `inflow_d = Σ_{P consumed by d} cost(P)·N_d / Σ_{consumers c of P} N_c`: a texture feeding
//!   several draws is split by their fragments. Consumption only looks back in time, so passes
//!   are costed in the order of their last draw.
//! - **Maps.** `total_X(p) = own_X(p) + Σ_{d into X} inflow_d·c_d(p)/N_d`, with `c_d` the
//!   draw's kept coverage; a consumer without kept coverage gets its inflow evenly over its
//!   bounding box, and the result notes it. Within a consumer the inflow is spread **evenly over
//!   its fragments** ([`SPREADING`]): the texture coordinates it sampled are not recovered.
//! - **Remainders.** What cannot reach a screen pixel is named, never dropped: a pass not
//!   sampled in the frame, a pass whose consumers drew no fragments, a draw with no fragments
//!   or one the agent could not paint, a screen consumer with neither coverage nor a box. So `Σ total(screen) + Σ remainders =
//!   Σ T_d` over every painted draw of the frame ([`FrameFlowCost::balance`]).

use crate::measure::cost::serialized_ns;
use crate::measure::nested::Nested;
use crate::measure::stats::Summary;
use gpuheat_session::{Attachment, DrawFlow, RenderTarget, Session};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

/// How a consumer's inflow is spread over its pixels, said with every result.
pub const SPREADING: &str =
    "evenly over the consumer's fragments (texture coordinates not recovered)";

/// A framebuffer a draw went to: the default framebuffer of `context` (`id` 0, the screen) or
/// an offscreen render target of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TargetKey {
    /// The context, as in [`gpuheat_session::ContextInfo::handle`].
    pub context: u64,
    /// [`RenderTarget::id`], 0 for the default framebuffer.
    pub id: u32,
}

impl TargetKey {
    /// Whether this is a default framebuffer.
    pub fn is_screen(&self) -> bool {
        self.id == 0
    }
}

/// Why some cost did not reach a screen pixel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum RemainderKind {
    /// A pass nothing sampled in this frame.
    NotSampled,
    /// A pass whose consumers drew no fragments, so there is nothing to split it by.
    ConsumersDrewNothing,
    /// A draw that produced no fragments: its time has no pixel.
    NoFragments,
    /// A draw the agent could not paint (its flow entry's note says why): its time has no
    /// pixel.
    NotPainted,
    /// A screen draw's inflow with neither kept coverage nor a non-empty box to place it on.
    NoCoverage,
}

impl RemainderKind {
    /// What it means, in a sentence for the report.
    pub fn why(self) -> &'static str {
        match self {
            RemainderKind::NotSampled => {
                "not sampled in this frame: read back, copied, sampled in a later frame or by compute"
            }
            RemainderKind::ConsumersDrewNothing => {
                "sampled only by draws that produced no fragments"
            }
            RemainderKind::NoFragments => "the draw produced no fragments",
            RemainderKind::NotPainted => "the draw could not be painted",
            RemainderKind::NoCoverage => {
                "the consumer's coverage was not kept and its box is empty"
            }
        }
    }

    /// A short name (`not-sampled`, …) for tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            RemainderKind::NotSampled => "not-sampled",
            RemainderKind::ConsumersDrewNothing => "consumers-drew-nothing",
            RemainderKind::NoFragments => "no-fragments",
            RemainderKind::NotPainted => "not-painted",
            RemainderKind::NoCoverage => "no-coverage",
        }
    }
}

/// Cost of a frame that reaches no screen pixel, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Remainder {
    /// Why.
    pub kind: RemainderKind,
    /// The target it was drawn into (of the pass, or of the draw).
    pub target: TargetKey,
    /// The target as [`Labels::label`] prints it.
    pub label: String,
    /// The pass (index in [`FrameFlowCost::passes`]), for pass remainders.
    pub pass: Option<usize>,
    /// The draw (call index), for draw remainders.
    pub call: Option<u32>,
    /// How much, in ns (including what flowed into it from upstream).
    pub ns: f64,
    /// The agent's reason, for [`RemainderKind::NotPainted`]; empty otherwise.
    pub note: String,
}

/// A work call whose time no map holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unplaced {
    /// Index in the frame's calls.
    pub call: u32,
    /// Its entry point, e.g. `glClear`.
    pub function: String,
    /// Its serialized time, in ns.
    pub ns: f64,
}

/// One painted draw of the frame, with where its cost came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowDraw {
    /// Index in the frame's calls.
    pub call: u32,
    /// Where it drew.
    pub target: TargetKey,
    /// `N_d`, from the map.
    pub fragments: u64,
    /// `T_d`, in ns.
    pub time_ns: u64,
    /// Texture names it sampled.
    pub sampled: Vec<u32>,
    /// Its coverage box (GL window coordinates of its target, x1 and y1 exclusive).
    pub bbox: [u32; 4],
    /// `c_d(p)` inside `bbox`, bottom row first; empty when not kept.
    #[serde(skip)]
    pub coverage: Vec<u8>,
    /// The pass it belongs to.
    pub pass: usize,
    /// The passes it consumed, with the cost each sent it, in ns.
    pub consumed: Vec<(usize, f64)>,
    /// `inflow_d`: the sum of `consumed`'s costs.
    pub inflow_ns: f64,
    /// The part of `inflow_ns` that did not come from an earlier pass of the draw's own target
    /// (through a ping-pong chain): what its target's total counts, so that an earlier
    /// pass's cost is counted once in it. Equal to `inflow_ns` unless the target is redrawn
    /// from its own earlier content.
    pub fresh_inflow_ns: f64,
}

/// A maximal run of draws into one target not interrupted by a consumer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pass {
    /// Its target.
    pub target: TargetKey,
    /// Its draws (indices into [`FrameFlowCost::draws`]), in call order.
    pub draws: Vec<usize>,
    /// `Σ T_d` of its draws with fragments.
    pub own_ns: f64,
    /// `own_ns` plus everything that flowed into its draws.
    pub cost_ns: f64,
    /// The draws that consumed it (indices into [`FrameFlowCost::draws`]).
    pub consumers: Vec<usize>,
}

/// One framebuffer of the frame: its own cost and what flowed through it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetCost {
    /// Which.
    pub key: TargetKey,
    /// As [`Labels::label`] prints it.
    pub label: String,
    /// Its description from the `HTGT` record (attachments, format); `None` for a screen.
    pub target: Option<RenderTarget>,
    /// Width of its map in pixels.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// `Σ T_d` of the draws into it.
    pub own_ns: f64,
    /// Its passes' cost: own plus everything upstream.
    pub total_ns: f64,
    /// Its passes (indices into [`FrameFlowCost::passes`]).
    pub passes: Vec<usize>,
    /// Calls of the draws that consumed its passes.
    pub consumers: Vec<u32>,
    /// The targets those consumers drew into.
    pub feeds: Vec<TargetKey>,
    /// Own heat, ns per pixel, bottom row first (the record's map; records added up).
    #[serde(skip)]
    pub own: Vec<f32>,
    /// Fragments per pixel, same layout.
    #[serde(skip)]
    pub overdraw: Vec<u32>,
}

/// The cost flow of one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameFlowCost {
    /// The frame.
    pub frame: u64,
    /// Every framebuffer with a map, screens first, then by context and id.
    pub targets: Vec<TargetCost>,
    /// The passes, in the order they started.
    pub passes: Vec<Pass>,
    /// The painted draws, in call order.
    pub draws: Vec<FlowDraw>,
    /// What reaches no screen pixel.
    pub remainders: Vec<Remainder>,
    /// `Σ T_d` over every painted draw of the frame (screen and offscreen).
    pub painted_ns: f64,
    /// The frame's work calls with a time that no map holds: clears, blits, copies, mipmap
    /// generation (no fragments of their own), in call order. Their time is named, not
    /// placed: `Σ total(screen) + Σ remainders + Σ unplaced` is the time of every work call.
    pub unplaced: Vec<Unplaced>,
    /// How a consumer's inflow is spread ([`SPREADING`]).
    pub spreading: &'static str,
    /// What else the reader should know: consumers spread over their box, feedback loops,
    /// draws without flow records.
    pub notes: Vec<String>,
}

/// How the report and the CLI name targets: `screen` or the target's id, qualified as
/// `0xCONTEXT:screen` / `0xCONTEXT:ID` where several contexts would share the name.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    ambiguous_ids: Vec<u32>,
    several_screens: bool,
}

impl Labels {
    /// The names for the targets of every frame of `s`: a plain id unless two contexts use it.
    pub fn of(s: &Session) -> Labels {
        let mut ids: FxHashMap<u32, u64> = FxHashMap::default();
        let mut ambiguous_ids = Vec::new();
        for t in &s.target_heat {
            match ids.get(&t.target.id) {
                Some(&c) if c != t.context => ambiguous_ids.push(t.target.id),
                Some(_) => {}
                None => {
                    ids.insert(t.target.id, t.context);
                }
            }
        }
        ambiguous_ids.sort_unstable();
        ambiguous_ids.dedup();
        let mut screens: Vec<u64> = s.heat.iter().map(|m| m.context).collect();
        screens.sort_unstable();
        screens.dedup();
        Labels {
            ambiguous_ids,
            several_screens: screens.len() > 1,
        }
    }

    /// The name of `key`.
    pub fn label(&self, key: TargetKey) -> String {
        if key.is_screen() {
            if self.several_screens {
                format!("{:#x}:screen", key.context)
            } else {
                "screen".into()
            }
        } else if self.ambiguous_ids.contains(&key.id) {
            format!("{:#x}:{}", key.context, key.id)
        } else {
            key.id.to_string()
        }
    }
}

/// The frames of `s` with a map of any target (screen or offscreen), in order.
pub fn frames_with_maps(s: &Session) -> Vec<u64> {
    let mut frames: Vec<u64> = s
        .heat
        .iter()
        .map(|m| m.frame)
        .chain(s.target_heat.iter().map(|t| t.frame))
        .collect();
    frames.sort_unstable();
    frames.dedup();
    frames
}

/// The cost flow of `frame`; `None` when the frame has no map of any target.
pub fn frame_flow(s: &Session, frame: u64) -> Option<FrameFlowCost> {
    frame_flow_labelled(s, frame, &Labels::of(s))
}

/// [`frame_flow`] with the names already made (for many frames of one session).
pub fn frame_flow_labelled(s: &Session, frame: u64, labels: &Labels) -> Option<FrameFlowCost> {
    build(s, frame, labels, true)
}

/// [`frame_flow_labelled`] without the maps: costs, passes and remainders only (for many
/// frames of a long session).
pub fn frame_costs(s: &Session, frame: u64, labels: &Labels) -> Option<FrameFlowCost> {
    build(s, frame, labels, false)
}

/// What a render target is for, the same in every frame and in another capture of the same
/// program: the context's place among the session's contexts, the framebuffer object, size
/// and format, and its rank among the frame's targets that share those. Target ids follow
/// texture names, which a program's texture pool changes from frame to frame (gtk4 alternates
/// two); a role does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TargetRole {
    /// Index of the context in [`Session::contexts`].
    pub context: usize,
    /// Whether it is the context's default framebuffer.
    pub screen: bool,
    /// The framebuffer object (0 for the screen).
    pub framebuffer: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Internal format of its first attachment (a GL enum, 0 for the screen or unknown).
    pub format: u32,
    /// Rank among the frame's targets with the same context, framebuffer, size and format.
    pub nth: u32,
}

impl std::fmt::Display for TargetRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.screen {
            return write!(f, "screen of context #{}", self.context);
        }
        write!(
            f,
            "context #{} framebuffer {} {}x{}",
            self.context, self.framebuffer, self.width, self.height
        )?;
        if self.nth > 0 {
            write!(f, " (#{})", self.nth + 1)?;
        }
        Ok(())
    }
}

/// The role of each of `flow`'s targets, in the same order.
pub fn roles(s: &Session, flow: &FrameFlowCost) -> Vec<TargetRole> {
    let mut out: Vec<TargetRole> = Vec::with_capacity(flow.targets.len());
    for t in &flow.targets {
        let context = s
            .contexts
            .iter()
            .position(|c| c.handle == t.key.context)
            .unwrap_or(s.contexts.len());
        let mut role = TargetRole {
            context,
            screen: t.key.is_screen(),
            framebuffer: t.target.as_ref().map_or(0, |r| r.framebuffer),
            width: t.width,
            height: t.height,
            format: t.target.as_ref().map_or(0, |r| r.format),
            nth: 0,
        };
        role.nth = out
            .iter()
            .filter(|r| TargetRole { nth: 0, ..**r } == role)
            .count() as u32;
        out.push(role);
    }
    out
}

/// [`frame_flow_labelled`]; without `maps` the targets' own maps are left empty (the costs,
/// passes and remainders do not need them), so a summary over many frames stays small.
fn build(s: &Session, frame: u64, labels: &Labels, maps: bool) -> Option<FrameFlowCost> {
    let mut notes = Vec::new();
    // Targets: screens (HEAT per context) and offscreen targets (HTGT per context and id,
    // records added up).
    let mut targets: Vec<TargetCost> = Vec::new();
    let mut painted: Vec<(TargetKey, gpuheat_session::DrawCoverage)> = Vec::new();
    let mut add = |key: TargetKey,
                   target: Option<&RenderTarget>,
                   w: u32,
                   h: u32,
                   heat: &[f32],
                   overdraw: &[u32],
                   draws: &[gpuheat_session::DrawCoverage],
                   notes: &mut Vec<String>| {
        let i = match targets.iter().position(|t| t.key == key) {
            Some(i) => i,
            None => {
                let n = if maps { w as usize * h as usize } else { 0 };
                targets.push(TargetCost {
                    key,
                    label: labels.label(key),
                    target: target.cloned(),
                    width: w,
                    height: h,
                    own_ns: 0.0,
                    total_ns: 0.0,
                    passes: Vec::new(),
                    consumers: Vec::new(),
                    feeds: Vec::new(),
                    own: vec![0.0; n],
                    overdraw: vec![0; n],
                });
                targets.len() - 1
            }
        };
        let t = &mut targets[i];
        if (t.width, t.height) != (w, h) || (maps && heat.len() != t.own.len()) {
            notes.push(format!(
                "{}: a {w}x{h} record of a {}x{} target was left out",
                t.label, t.width, t.height
            ));
            return;
        }
        for (a, b) in t.own.iter_mut().zip(heat) {
            *a += if b.is_finite() && *b > 0.0 { *b } else { 0.0 };
        }
        for (a, b) in t.overdraw.iter_mut().zip(overdraw) {
            *a = a.saturating_add(*b);
        }
        for d in draws {
            painted.push((key, *d));
        }
    };
    for m in s.heat.iter().filter(|m| m.frame == frame) {
        let key = TargetKey {
            context: m.context,
            id: 0,
        };
        add(
            key,
            None,
            m.width,
            m.height,
            &m.heat,
            &m.overdraw,
            &m.draws,
            &mut notes,
        );
    }
    for t in s.target_heat.iter().filter(|t| t.frame == frame) {
        let key = TargetKey {
            context: t.context,
            id: t.target.id,
        };
        add(
            key,
            Some(&t.target),
            t.target.width,
            t.target.height,
            &t.heat,
            &t.overdraw,
            &t.draws,
            &mut notes,
        );
    }
    if targets.is_empty() {
        return None;
    }
    targets.sort_by_key(|t| (!t.key.is_screen(), t.key));

    // What each painted draw sampled, from the FLOW records of every context of the frame.
    let mut flows: FxHashMap<u32, (u64, &DrawFlow)> = FxHashMap::default();
    for f in s.flow.iter().filter(|f| f.frame == frame) {
        for d in &f.draws {
            flows.entry(d.call).or_insert((f.context, d));
        }
    }
    // A call listed in several maps (an unpainted draw is listed in the screen's with 0
    // fragments): the entry with fragments wins.
    painted.sort_by_key(|(_, d)| (d.call, std::cmp::Reverse(d.fragments)));
    painted.dedup_by_key(|(_, d)| d.call);
    let mut draws: Vec<FlowDraw> = Vec::with_capacity(painted.len());
    let mut unpainted: FxHashMap<u32, String> = FxHashMap::default();
    let mut without_flow = 0usize;
    for (key, d) in &painted {
        let f = flows.get(&d.call).map(|&(_, f)| f);
        if f.is_none() {
            without_flow += 1;
        }
        // Where a draw without fragments went: its map lists it (on the screen's list when
        // it was not painted), its flow entry says which target it drew into.
        let key = match flows.get(&d.call) {
            Some(&(context, f)) if d.fragments == 0 => TargetKey {
                context,
                id: f.target,
            },
            _ => *key,
        };
        if let Some(f) = f.filter(|f| d.fragments == 0 && f.note.starts_with("not painted")) {
            unpainted.insert(d.call, f.note.clone());
        }
        let coverage = f.map(|f| f.coverage.clone()).unwrap_or_default();
        let bbox = match f {
            Some(f) if !f.coverage.is_empty() => f.bbox,
            _ => d.bbox,
        };
        draws.push(FlowDraw {
            call: d.call,
            target: key,
            fragments: d.fragments,
            time_ns: d.time_ns,
            sampled: f.map(|f| f.sampled.clone()).unwrap_or_default(),
            bbox,
            coverage,
            pass: 0,
            consumed: Vec::new(),
            inflow_ns: 0.0,
            fresh_inflow_ns: 0.0,
        });
    }
    if without_flow > 0 && draws.len() > without_flow {
        notes.push(format!(
            "{without_flow} painted draws have no FLOW entry: read as sampling nothing"
        ));
    } else if without_flow > 0 && targets.iter().any(|t| !t.key.is_screen()) {
        notes.push("the frame has no FLOW records: no cost flows between targets".into());
    }
    let mut orphans: Vec<u32> = flows
        .keys()
        .copied()
        .filter(|c| !painted.iter().any(|(_, d)| d.call == *c))
        .collect();
    orphans.sort_unstable();
    if !orphans.is_empty() {
        notes.push(format!(
            "calls {}: in FLOW but in no map (no time known); left out",
            join(&orphans)
        ));
    }
    for t in &mut targets {
        t.own_ns = draws
            .iter()
            .filter(|d| d.target == t.key)
            .map(|d| d.time_ns as f64)
            .sum();
    }

    // Passes and consumers, in call order.
    let attachments: FxHashMap<TargetKey, Vec<u32>> = targets
        .iter()
        .filter_map(|t| {
            let r = t.target.as_ref()?;
            Some((
                t.key,
                r.attachments.iter().map(Attachment::flow_key).collect(),
            ))
        })
        .collect();
    let mut passes: Vec<Pass> = Vec::new();
    let mut current: FxHashMap<TargetKey, usize> = FxHashMap::default();
    let mut latest: FxHashMap<u32, usize> = FxHashMap::default();
    let mut feedback: Vec<u32> = Vec::new();
    for (di, d) in draws.iter_mut().enumerate() {
        let key = d.target;
        let mut consumed: Vec<usize> = Vec::new();
        for tex in &d.sampled {
            let Some(&p) = latest.get(tex) else { continue };
            if passes[p].target == key {
                feedback.push(d.call);
                continue;
            }
            if !consumed.contains(&p) {
                consumed.push(p);
            }
        }
        let p = match current.get(&key) {
            Some(&p) if passes[p].consumers.is_empty() => p,
            _ => {
                passes.push(Pass {
                    target: key,
                    draws: Vec::new(),
                    own_ns: 0.0,
                    cost_ns: 0.0,
                    consumers: Vec::new(),
                });
                current.insert(key, passes.len() - 1);
                passes.len() - 1
            }
        };
        passes[p].draws.push(di);
        for &q in &consumed {
            passes[q].consumers.push(di);
        }
        d.pass = p;
        d.consumed = consumed.into_iter().map(|q| (q, 0.0)).collect();
        for &tex in attachments.get(&key).into_iter().flatten() {
            latest.insert(tex, p);
        }
    }
    feedback.dedup();
    if !feedback.is_empty() {
        notes.push(format!(
            "calls {} sampled a texture of the target they draw into (a feedback loop): not counted as consuming it",
            join(&feedback)
        ));
    }

    // Costs, in the order of each pass's last draw: whatever a draw consumed ended before it.
    let mut order: Vec<usize> = (0..passes.len()).collect();
    order.sort_by_key(|&p| passes[p].draws.last().copied().unwrap_or(0));
    let mut remainders = Vec::new();
    for &p in &order {
        let mut own = 0.0;
        let mut cost = 0.0;
        for k in 0..passes[p].draws.len() {
            let di = passes[p].draws[k];
            let d = &draws[di];
            if d.fragments == 0 {
                if d.time_ns > 0 {
                    let note = unpainted.get(&d.call).cloned().unwrap_or_default();
                    remainders.push(Remainder {
                        kind: if note.is_empty() {
                            RemainderKind::NoFragments
                        } else {
                            RemainderKind::NotPainted
                        },
                        target: d.target,
                        label: labels.label(d.target),
                        pass: None,
                        call: Some(d.call),
                        ns: d.time_ns as f64,
                        note,
                    });
                }
                continue;
            }
            let mut inflow = 0.0;
            let mut consumed = draws[di].consumed.clone();
            for (q, ns) in &mut consumed {
                let total_n: u64 = passes[*q]
                    .consumers
                    .iter()
                    .map(|&c| draws[c].fragments)
                    .sum();
                *ns = passes[*q].cost_ns * draws[di].fragments as f64 / total_n as f64;
                inflow += *ns;
            }
            draws[di].consumed = consumed;
            draws[di].inflow_ns = inflow;
            own += draws[di].time_ns as f64;
            cost += draws[di].time_ns as f64 + inflow;
        }
        passes[p].own_ns = own;
        passes[p].cost_ns = cost;
    }
    for (p, pass) in passes.iter().enumerate() {
        if pass.target.is_screen() || pass.cost_ns == 0.0 {
            continue;
        }
        let kind = if pass.consumers.is_empty() {
            RemainderKind::NotSampled
        } else if pass.consumers.iter().all(|&c| draws[c].fragments == 0) {
            RemainderKind::ConsumersDrewNothing
        } else {
            continue;
        };
        remainders.push(Remainder {
            kind,
            target: pass.target,
            label: labels.label(pass.target),
            pass: Some(p),
            call: None,
            ns: pass.cost_ns,
            note: String::new(),
        });
    }
    // Screen consumers whose inflow has no place.
    let mut spread_over_box: Vec<u32> = Vec::new();
    for d in &draws {
        if d.inflow_ns == 0.0 || !d.coverage.is_empty() {
            continue;
        }
        let [x0, y0, x1, y1] = d.bbox;
        if x1 > x0 && y1 > y0 {
            spread_over_box.push(d.call);
        } else if d.target.is_screen() {
            remainders.push(Remainder {
                kind: RemainderKind::NoCoverage,
                target: d.target,
                label: labels.label(d.target),
                pass: None,
                call: Some(d.call),
                ns: d.inflow_ns,
                note: String::new(),
            });
        } else {
            notes.push(format!(
                "call {}: coverage not kept and box empty: its inflow is in its pass's cost but not in {}'s total map",
                d.call,
                labels.label(d.target)
            ));
        }
    }
    if !spread_over_box.is_empty() {
        notes.push(format!(
            "calls {}: coverage not kept, inflow spread evenly over the draw's box",
            join(&spread_over_box)
        ));
    }
    remainders.sort_by(|a, b| b.ns.total_cmp(&a.ns));

    // Per target: passes, total, consumers and what they feed.
    for d in draws.iter_mut() {
        d.fresh_inflow_ns = d.inflow_ns;
    }
    for t in &mut targets {
        let passes_of_t = passes.iter().filter(|p| p.target == t.key).count();
        if passes_of_t > 1 {
            t.total_ns = reentry_free_total(&passes, &mut draws, &order, t.key);
        }
        for (p, pass) in passes.iter().enumerate() {
            if pass.target != t.key {
                continue;
            }
            t.passes.push(p);
            if passes_of_t == 1 {
                t.total_ns += pass.cost_ns;
            }
            for &c in &pass.consumers {
                t.consumers.push(draws[c].call);
                if !t.feeds.contains(&draws[c].target) {
                    t.feeds.push(draws[c].target);
                }
            }
        }
        t.consumers.sort_unstable();
        t.consumers.dedup();
    }
    let painted_ns = draws.iter().map(|d| d.time_ns as f64).sum();
    let unplaced = unplaced(s, frame, &draws);
    Some(FrameFlowCost {
        frame,
        targets,
        passes,
        draws,
        remainders,
        painted_ns,
        unplaced,
        spreading: SPREADING,
        notes,
    })
}

/// The work calls of `frame` with a serialized time that `draws` (every call some map lists)
/// does not hold, leaving out the GL calls a VG library made inside a VG call (the VG call
/// holds their time).
fn unplaced(s: &Session, frame: u64, draws: &[FlowDraw]) -> Vec<Unplaced> {
    let Some(fi) = s.frames.iter().position(|f| f.index == frame) else {
        return Vec::new();
    };
    let f = &s.frames[fi];
    let listed: FxHashSet<u32> = draws.iter().map(|d| d.call).collect();
    let nested = Nested::of(&s.vg_calls);
    let funcs = &s.functions.functions;
    f.samples
        .iter()
        .filter(|d| !listed.contains(&d.call) && nested.parent(frame, d.call).is_none())
        .filter_map(|d| {
            let info = funcs.get(usize::from(f.calls.get(d.call as usize)?.func))?;
            if !info.class.is_work() {
                return None;
            }
            Some(Unplaced {
                call: d.call,
                function: info.name.clone(),
                ns: serialized_ns(s, fi, d.call)? as f64,
            })
        })
        .collect()
}

/// `1, 2, 3`.
/// The total cost of target `key` when it is drawn in several passes: each pass's own time
/// and inflow, except what reached a pass from an earlier pass of the same target (directly
/// or through other targets, as in a ping-pong blur), which that earlier pass already counts.
/// Sets those draws' [`FlowDraw::fresh_inflow_ns`]. `order`: the passes by their last draw.
fn reentry_free_total(
    passes: &[Pass],
    draws: &mut [FlowDraw],
    order: &[usize],
    key: TargetKey,
) -> f64 {
    // What each pass passes on, with the target's own passes passing on nothing.
    let mut onward = vec![0.0; passes.len()];
    let mut total = 0.0;
    for &p in order {
        let mut cost = 0.0;
        for &di in &passes[p].draws {
            let d = &mut draws[di];
            if d.fragments == 0 {
                continue;
            }
            let fresh: f64 = d
                .consumed
                .iter()
                .filter(|&&(q, _)| passes[q].cost_ns > 0.0)
                .map(|&(q, ns)| onward[q] * ns / passes[q].cost_ns)
                .sum();
            if passes[p].target == key {
                d.fresh_inflow_ns = fresh;
            }
            cost += d.time_ns as f64 + fresh;
        }
        if passes[p].target == key {
            total += cost;
        } else {
            onward[p] = cost;
        }
    }
    total
}

fn join(calls: &[u32]) -> String {
    calls
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One upstream pass's part of a pixel's total cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Upstream {
    /// The pass (index in [`FrameFlowCost::passes`]).
    pub pass: usize,
    /// Its target, as printed.
    pub label: String,
    /// The calls of its draws.
    pub calls: Vec<u32>,
    /// The part of the pixel's total that the pass's own draws spent, in ns.
    pub ns: f64,
    /// `ns` over the pixel's total.
    pub share: f64,
}

/// Where one pixel's total cost came from: its target's own draws, and each upstream pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PixelFlow {
    /// Column, GL window coordinates.
    pub x: u32,
    /// Row, from the bottom.
    pub y: u32,
    /// Own heat of the pixel, ns.
    pub own_ns: f64,
    /// Total (own plus upstream), ns.
    pub total_ns: f64,
    /// Upstream passes, largest first; with `own_ns` they add up to `total_ns`.
    pub upstream: Vec<Upstream>,
    /// How inflow is spread within a consumer.
    pub spreading: &'static str,
}

impl FrameFlowCost {
    /// The target named `name` (`screen`, an id, `0xCONTEXT:ID`, `0xCONTEXT:screen`, as
    /// [`Labels`] prints them); the error lists the choices.
    pub fn find(&self, name: &str) -> Result<&TargetCost, String> {
        let name = name.trim();
        if let Some(t) = self.targets.iter().find(|t| t.label == name) {
            return Ok(t);
        }
        // The qualified form is always accepted, and `screen` means the only screen.
        let qualified = |t: &&TargetCost| {
            let id = if t.key.is_screen() {
                "screen".to_string()
            } else {
                t.key.id.to_string()
            };
            name == format!("{:#x}:{id}", t.key.context)
                || name == format!("{:#x}:{}", t.key.context, t.key.id)
        };
        if let Some(t) = self.targets.iter().find(qualified) {
            return Ok(t);
        }
        let choices: Vec<&str> = self.targets.iter().map(|t| t.label.as_str()).collect();
        let screens = self.targets.iter().filter(|t| t.key.is_screen()).count();
        if name == "screen" && screens == 0 {
            return Err(format!(
                "frame {} has no screen map; its targets: {}",
                self.frame,
                choices.join(", ")
            ));
        }
        Err(format!(
            "frame {} has no target {name}; its targets: {}",
            self.frame,
            choices.join(", ")
        ))
    }

    /// The target of `key`.
    pub fn target(&self, key: TargetKey) -> Option<&TargetCost> {
        self.targets.iter().find(|t| t.key == key)
    }

    /// The total map of `key` (own plus upstream), ns per pixel, bottom row first.
    pub fn total_map(&self, key: TargetKey) -> Option<Vec<f64>> {
        let t = self.target(key)?;
        let mut map: Vec<f64> = t.own.iter().map(|&v| f64::from(v)).collect();
        for d in self.draws.iter().filter(|d| d.target == key) {
            place(d, t.width, t.height, d.fresh_inflow_ns, |i, v| map[i] += v);
        }
        Some(map)
    }

    /// Target `key`'s own or `total` map as a [`gpuheat_session::HeatMap`] (what the heat
    /// map renderers take): its overdraw, its draws' coverage and, for a screen, the frame's
    /// colour buffer from `s` (offscreen targets have none in the session).
    pub fn heat_map(
        &self,
        s: &Session,
        key: TargetKey,
        total: bool,
    ) -> Option<gpuheat_session::HeatMap> {
        let t = self.target(key)?;
        let heat: Vec<f32> = if total {
            self.total_map(key)?.into_iter().map(|v| v as f32).collect()
        } else {
            t.own.clone()
        };
        let colour = if key.is_screen() {
            s.heat
                .iter()
                .find(|m| m.frame == self.frame && m.context == key.context)
                .map(|m| m.colour.clone())
                .filter(|c| c.len() == t.own.len() * 4)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let draws = self
            .draws
            .iter()
            .filter(|d| d.target == key)
            .map(|d| gpuheat_session::DrawCoverage {
                call: d.call,
                fragments: d.fragments,
                time_ns: d.time_ns,
                bbox: d.bbox,
            })
            .collect();
        Some(gpuheat_session::HeatMap {
            frame: self.frame,
            context: key.context,
            width: t.width,
            height: t.height,
            heat,
            overdraw: t.overdraw.clone(),
            colour,
            draws,
        })
    }

    /// `Σ total(screen)` over every screen, `Σ remainders`, and `Σ T_d` of every painted
    /// draw: the first two add up to the third (up to float rounding).
    pub fn balance(&self) -> (f64, f64, f64) {
        let screens: f64 = self
            .targets
            .iter()
            .filter(|t| t.key.is_screen())
            .filter_map(|t| self.total_map(t.key))
            .map(|m| m.iter().sum::<f64>())
            .sum();
        let rest = self.remainders.iter().map(|r| r.ns).sum();
        (screens, rest, self.painted_ns)
    }

    /// Where pixel (`x`, `y`) of `key`'s total map got its cost: the upstream passes that fed
    /// it, each with its part (a pass's cost splits into its own draws' time and what flowed
    /// into them, in proportion, recursively). `None` outside the map.
    pub fn pick(&self, key: TargetKey, x: u32, y: u32) -> Option<PixelFlow> {
        let t = self.target(key)?;
        if x >= t.width || y >= t.height {
            return None;
        }
        let i = y as usize * t.width as usize + x as usize;
        let own_ns = f64::from(t.own[i]);
        // What reaches the pixel from each pass, then each pass's part split, latest pass
        // first, into its own time and what it received: one sweep back in time, linear
        // however many paths lead to a pass (a recursion would follow each path).
        let mut reaching = vec![0.0; self.passes.len()];
        for d in self.draws.iter().filter(|d| d.target == key) {
            let mut at = 0.0;
            place_at(d, x, y, d.inflow_ns, &mut at);
            if at == 0.0 || d.inflow_ns == 0.0 {
                continue;
            }
            for &(q, ns) in &d.consumed {
                reaching[q] += at * ns / d.inflow_ns;
            }
        }
        let mut order: Vec<usize> = (0..self.passes.len()).collect();
        order.sort_by_key(|&p| std::cmp::Reverse(self.passes[p].draws.last().copied()));
        let mut credit = vec![0.0; self.passes.len()];
        for p in order {
            let (amount, pass) = (reaching[p], &self.passes[p]);
            if amount == 0.0 || pass.cost_ns <= 0.0 {
                continue;
            }
            credit[p] = amount * pass.own_ns / pass.cost_ns;
            for &di in &pass.draws {
                for &(q, ns) in &self.draws[di].consumed {
                    // q ended before this draw, so before p's last: it comes later in order.
                    reaching[q] += amount * ns / pass.cost_ns;
                }
            }
        }
        let upstream_ns: f64 = credit.iter().sum();
        let total_ns = own_ns + upstream_ns;
        let mut upstream: Vec<Upstream> = credit
            .iter()
            .enumerate()
            .filter(|(_, &ns)| ns > 0.0)
            .map(|(p, &ns)| Upstream {
                pass: p,
                label: self
                    .target(self.passes[p].target)
                    .map_or_else(String::new, |t| t.label.clone()),
                calls: self.passes[p]
                    .draws
                    .iter()
                    .map(|&d| self.draws[d].call)
                    .collect(),
                ns,
                share: if total_ns > 0.0 { ns / total_ns } else { 0.0 },
            })
            .collect();
        upstream.sort_by(|a, b| b.ns.total_cmp(&a.ns).then(a.pass.cmp(&b.pass)));
        Some(PixelFlow {
            x,
            y,
            own_ns,
            total_ns,
            upstream,
            spreading: SPREADING,
        })
    }
}

/// Spreads `amount` over draw `d`'s pixels in a `w` × `h` map: by its kept coverage, else
/// evenly over its box; calls `put(index, value)`.
fn place(d: &FlowDraw, w: u32, h: u32, amount: f64, mut put: impl FnMut(usize, f64)) {
    if amount == 0.0 {
        return;
    }
    let [x0, y0, x1, y1] = d.bbox;
    let (x1, y1) = (x1.min(w), y1.min(h));
    if x1 <= x0 || y1 <= y0 {
        return;
    }
    let bw = (d.bbox[2] - x0) as usize;
    let sum: u64 = d.coverage.iter().map(|&c| u64::from(c)).sum();
    if sum > 0 {
        for y in y0..y1 {
            for x in x0..x1 {
                let c = d.coverage[(y - y0) as usize * bw + (x - x0) as usize];
                if c > 0 {
                    put(
                        y as usize * w as usize + x as usize,
                        amount * f64::from(c) / sum as f64,
                    );
                }
            }
        }
    } else {
        let area = f64::from(x1 - x0) * f64::from(y1 - y0);
        for y in y0..y1 {
            for x in x0..x1 {
                put(y as usize * w as usize + x as usize, amount / area);
            }
        }
    }
}

/// The part of `amount` that [`place`] puts at pixel (`x`, `y`), added to `at`.
fn place_at(d: &FlowDraw, x: u32, y: u32, amount: f64, at: &mut f64) {
    let [x0, y0, x1, y1] = d.bbox;
    if amount == 0.0 || x < x0 || x >= x1 || y < y0 || y >= y1 {
        return;
    }
    let sum: u64 = d.coverage.iter().map(|&c| u64::from(c)).sum();
    if sum > 0 {
        let bw = (x1 - x0) as usize;
        let c = d.coverage[(y - y0) as usize * bw + (x - x0) as usize];
        *at += amount * f64::from(c) / sum as f64;
    } else {
        *at += amount / (f64::from(x1 - x0) * f64::from(y1 - y0));
    }
}

/// One render target over the frames of a session, for `report`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetSummary {
    /// Which (in its first frame).
    pub key: TargetKey,
    /// What it is for: rows are per role, so a texture pool's targets are one row.
    pub role: TargetRole,
    /// As printed (its first frame's name).
    pub label: String,
    /// Its other names in other frames (a texture pool alternating textures).
    pub also: Vec<String>,
    /// Its description (from its first frame); `None` for a screen.
    pub target: Option<RenderTarget>,
    /// Frames it has a map in.
    pub frames: usize,
    /// Own cost (Σ T_d of its draws) per frame, ns.
    pub own_ns: Summary,
    /// Total cost (its passes, with everything upstream) per frame, ns.
    pub total_ns: Summary,
    /// Its share of the frame's painted time (own / Σ T_d), median over frames.
    pub own_share: f64,
    /// Passes per frame, median.
    pub passes: f64,
    /// Consuming draws per frame, median.
    pub consumers: f64,
    /// Targets its consumers drew into, over all frames.
    pub feeds: Vec<String>,
}

/// One kind of remainder of one target over the frames of a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemainderSummary {
    /// Why.
    pub kind: RemainderKind,
    /// `kind`'s sentence.
    pub why: &'static str,
    /// The target, as printed.
    pub label: String,
    /// Frames it occurs in.
    pub frames: usize,
    /// ns per frame it occurs in.
    pub ns: Summary,
    /// The first agent's reason seen ([`Remainder::note`]); empty when none.
    pub note: String,
}

/// The work calls of one entry point whose time no map holds, over the frames.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnplacedSummary {
    /// The entry point, e.g. `glClear`.
    pub function: String,
    /// Frames it occurs in.
    pub frames: usize,
    /// Calls per frame it occurs in (median).
    pub calls: f64,
    /// ns per frame it occurs in (all its calls of the frame).
    pub ns: Summary,
}

/// Render targets and remainders over the frames of a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSummary {
    /// Frames with maps.
    pub frames: usize,
    /// Every target, screens first, then by median total cost.
    pub targets: Vec<TargetSummary>,
    /// Remainders by kind and target, largest median first.
    pub remainders: Vec<RemainderSummary>,
    /// Work calls whose time no map holds (clears, blits, copies), by entry point, largest
    /// median first.
    pub unplaced: Vec<UnplacedSummary>,
    /// Notes of the frames, each once.
    pub notes: Vec<String>,
    /// How inflow is spread within a consumer.
    pub spreading: &'static str,
}

/// [`frame_flow`] over every frame with maps, summarised per target (median and spread over
/// the frames); `None` when no frame has a map.
pub fn summarise(s: &Session) -> Option<FlowSummary> {
    let labels = Labels::of(s);
    // One frame at a time, without its maps: a long capture is never all in memory.
    let frames = frames_with_maps(s)
        .into_iter()
        .filter_map(|f| build(s, f, &labels, false));
    struct Acc {
        key: TargetKey,
        also: Vec<String>,
        target: Option<RenderTarget>,
        own: Vec<f64>,
        total: Vec<f64>,
        share: Vec<f64>,
        passes: Vec<f64>,
        consumers: Vec<f64>,
        feeds: Vec<String>,
    }
    let mut acc: Vec<(TargetRole, String, Acc)> = Vec::new();
    let mut rem: Vec<(RemainderKind, String, Vec<f64>, String)> = Vec::new();
    // Per entry point: calls and ns of each frame it occurs in.
    let mut unplaced: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut count = 0usize;
    for f in frames {
        count += 1;
        for (t, role) in f.targets.iter().zip(roles(s, &f)) {
            let i = match acc.iter().position(|(r, _, _)| *r == role) {
                Some(i) => i,
                None => {
                    acc.push((
                        role,
                        t.label.clone(),
                        Acc {
                            key: t.key,
                            also: Vec::new(),
                            target: t.target.clone(),
                            own: Vec::new(),
                            total: Vec::new(),
                            share: Vec::new(),
                            passes: Vec::new(),
                            consumers: Vec::new(),
                            feeds: Vec::new(),
                        },
                    ));
                    acc.len() - 1
                }
            };
            let (_, first, a) = &mut acc[i];
            if t.label != *first && !a.also.contains(&t.label) {
                a.also.push(t.label.clone());
            }
            a.own.push(t.own_ns);
            a.total.push(t.total_ns);
            a.share.push(if f.painted_ns > 0.0 {
                t.own_ns / f.painted_ns
            } else {
                0.0
            });
            a.passes.push(t.passes.len() as f64);
            a.consumers.push(t.consumers.len() as f64);
            for k in &t.feeds {
                let l = labels.label(*k);
                if !a.feeds.contains(&l) {
                    a.feeds.push(l);
                }
            }
        }
        // One value per frame and (kind, target).
        let mut this: Vec<(RemainderKind, String, f64, String)> = Vec::new();
        for r in &f.remainders {
            match this
                .iter_mut()
                .find(|(k, l, _, _)| *k == r.kind && *l == r.label)
            {
                Some(e) => e.2 += r.ns,
                None => this.push((r.kind, r.label.clone(), r.ns, r.note.clone())),
            }
        }
        for (k, l, ns, note) in this {
            match rem.iter_mut().find(|(k2, l2, _, _)| *k2 == k && *l2 == l) {
                Some(e) => e.2.push(ns),
                None => rem.push((k, l, vec![ns], note)),
            }
        }
        let mut this: Vec<(&str, f64, f64)> = Vec::new();
        for u in &f.unplaced {
            match this.iter_mut().find(|(n, _, _)| *n == u.function) {
                Some(e) => (e.1, e.2) = (e.1 + 1.0, e.2 + u.ns),
                None => this.push((&u.function, 1.0, u.ns)),
            }
        }
        for (name, calls, ns) in this {
            match unplaced.iter_mut().find(|(n, _, _)| n == name) {
                Some(e) => {
                    e.1.push(calls);
                    e.2.push(ns);
                }
                None => unplaced.push((name.to_string(), vec![calls], vec![ns])),
            }
        }
        for n in &f.notes {
            // Frame-specific call numbers differ; keep the first few distinct notes.
            if !notes.contains(n) && notes.len() < 20 {
                notes.push(n.clone());
            }
        }
    }
    let median = |v: &[f64]| crate::measure::stats::median(v);
    let mut targets: Vec<TargetSummary> = acc
        .into_iter()
        .filter_map(|(role, label, a)| {
            Some(TargetSummary {
                key: a.key,
                role,
                label,
                also: a.also,
                target: a.target,
                frames: a.own.len(),
                own_ns: Summary::of(&a.own)?,
                total_ns: Summary::of(&a.total)?,
                own_share: median(&a.share),
                passes: median(&a.passes),
                consumers: median(&a.consumers),
                feeds: a.feeds,
            })
        })
        .collect();
    targets.sort_by(|a, b| {
        (!a.key.is_screen())
            .cmp(&!b.key.is_screen())
            .then(b.total_ns.median.total_cmp(&a.total_ns.median))
            .then(a.key.cmp(&b.key))
    });
    let mut remainders: Vec<RemainderSummary> = rem
        .into_iter()
        .filter_map(|(kind, label, v, note)| {
            Some(RemainderSummary {
                kind,
                why: kind.why(),
                label,
                frames: v.len(),
                ns: Summary::of(&v)?,
                note,
            })
        })
        .collect();
    remainders.sort_by(|a, b| b.ns.median.total_cmp(&a.ns.median));
    let mut unplaced: Vec<UnplacedSummary> = unplaced
        .into_iter()
        .filter_map(|(function, calls, ns)| {
            Some(UnplacedSummary {
                function,
                frames: ns.len(),
                calls: median(&calls),
                ns: Summary::of(&ns)?,
            })
        })
        .collect();
    unplaced.sort_by(|a, b| b.ns.median.total_cmp(&a.ns.median));
    if count == 0 {
        return None;
    }
    Some(FlowSummary {
        frames: count,
        targets,
        remainders,
        unplaced,
        notes,
        spreading: SPREADING,
    })
}
