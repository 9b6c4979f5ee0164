//! What a checklist rule reports: a [`Finding`] with its [`Severity`], the [`Evidence`] it
//! rests on and the [`Cost`] it measures. A leaf: every rule family and the catalogue use it.

use serde::Serialize;

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
    /// The id of the rule that found it, e.g. `overdraw` (one of [`super::rules`]); set by
    /// the checklist from the rule that ran, so it is always in the catalogue.
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

/// The findings about one call of one frame.
pub fn for_call(findings: &[Finding], frame: u64, call: u32) -> impl Iterator<Item = &Finding> {
    findings
        .iter()
        .filter(move |f| f.frame == frame && f.call == Some(call))
}
