//! One shape for every rule of the checklist: a [`Rule`] declares its id, [`Family`], usual
//! severity and summary once, next to the function that checks it, and every function has the
//! same signature over one [`Context`].

use super::context::Context;
use super::finding::{Finding, Severity};
use serde::Serialize;

/// What a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// A frame's measured numbers: serialized times, fragments, overdraw maps.
    Frame,
    /// The GL state a call runs in, from the one state-tracker pass.
    State,
    /// The program's GL calls themselves, frame by frame.
    Calls,
    /// A VG program's calls and the VG records.
    Vg,
    /// A Vulkan program's calls and the layer's render pass records.
    Vulkan,
}

/// Checks a rule over the whole session, appending its findings. The findings' `rule` is set
/// by the checklist from the [`Rule`] the function belongs to.
pub type Check = fn(&Context, &mut Vec<Finding>);

/// A rule of the checklist (`gpuheat checklist --rule` takes the ids).
#[derive(Clone, Copy)]
pub struct Rule {
    /// Stable id, e.g. `overdraw`.
    pub id: &'static str,
    /// What it reads.
    pub family: Family,
    /// The severity it usually reports (a finding may say more, or less, where the measured
    /// share is large or small).
    pub severity: Severity,
    /// One line on what it looks for.
    pub summary: &'static str,
    /// The function that checks it.
    pub check: Check,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("id", &self.id)
            .field("family", &self.family)
            .field("severity", &self.severity)
            .field("summary", &self.summary)
            .finish()
    }
}
