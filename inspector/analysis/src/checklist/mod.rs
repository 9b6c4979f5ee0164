//! The performance checklist: rules that read a session's measured numbers and say what is
//! wrong and what to do, each finding tied to a frame and, where it has one, a call.
//!
//! Every rule has one shape ([`Rule`]: an id, a family, its usual severity, a summary and one
//! function over one [`Context`]), declared next to its function in its family's file; the
//! [`catalogue`] assembles them. Layers, lowest first: `finding` (what a rule reports);
//! `track` (the GL state tracker) and `walk` (its one pass for the checklist); `context`
//! (what every rule reads); `rule`; the families `frame`, `state`, `calls`, `vg` and `vulkan`;
//! `catalogue`; then [`check`], here, which runs them all.
//!
//! A rule whose inputs were not captured stays silent rather than guess.

mod finding;
pub mod track;
mod walk;

mod context;
mod rule;

mod calls;
mod frame;
mod state;
mod vg;
mod vulkan;

pub mod catalogue;

pub use catalogue::{rule, rules};
pub use context::Context;
pub use finding::{for_call, Cost, Evidence, Finding, Severity, MAX_EVIDENCE_CALLS};
pub use frame::{MIN_FRAGMENTS, NOISE_FLOOR_NS, NOISE_OVERHEADS};
pub use rule::{Check, Family, Rule};
pub use state::{STATE_RULE_CALLS, STATE_RULE_SHARE};

use crate::measure::cost::Analysis;
use gpuheat_session::Session;
// Fx: small integer keys looked up per finding.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Runs every rule of the catalogue over the session; findings come sorted by frame, then
/// most severe first, then by call (rules in catalogue order where those are equal).
pub fn check(s: &Session, a: &Analysis) -> Vec<Finding> {
    run(&Context::new(s, a))
}

/// [`check`] over a context already built.
fn run(ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in rules() {
        let start = out.len();
        (rule.check)(ctx, &mut out);
        for f in &mut out[start..] {
            debug_assert_eq!(f.rule, rule.id, "a rule reports only its own id");
            f.rule = rule.id;
        }
    }
    subsume(&mut out);
    out.sort_by(|a, b| {
        a.frame
            .cmp(&b.frame)
            .then(b.severity.cmp(&a.severity))
            .then(a.call.cmp(&b.call))
    });
    out
}

/// Drops the general findings that a more specific one of the same frame covers
/// ([`catalogue::SUBSUMES`]).
fn subsume(out: &mut Vec<Finding>) {
    let mut covered: HashMap<(u64, &str), HashSet<u32>> = HashMap::default();
    for f in out.iter() {
        for (specific, general) in catalogue::SUBSUMES {
            if f.rule == specific.id {
                for g in general.iter() {
                    covered
                        .entry((f.frame, g.id))
                        .or_default()
                        .extend(f.evidence.calls.iter().copied());
                }
            }
        }
    }
    out.retain(|f| {
        let Some(calls) = covered.get(&(f.frame, f.rule)) else {
            return true;
        };
        let listed = f.evidence.calls.len() as u64 == f.evidence.count;
        !(listed
            && !f.evidence.calls.is_empty()
            && f.evidence.calls.iter().all(|c| calls.contains(c)))
    });
}
