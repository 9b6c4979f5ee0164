//! From a session to what a user is shown: per-frame totals and per-draw costs ([`cost`]),
//! the performance checklist ([`findings`]), which draws a pixel's heat came from ([`pick`]),
//! how offscreen passes' cost flows to the pixels they feed ([`flow`]),
//! the colour scales heat is painted with ([`palette`]), and the heat of OpenVG draws,
//! recomputed from their paths ([`vg`]). The report, the heat-map PNG and
//! the viewer all draw on this crate, so they agree on every number.

pub mod aggregate;
mod callrules;
pub mod cost;
pub mod diff;
pub mod enums;
pub mod findings;
pub mod flow;
pub mod heatdiff;
pub mod identity;
pub mod palette;
pub mod pick;
mod staterules;
pub mod statetrack;
pub mod stats;
pub mod targetdiff;
#[cfg(test)]
mod testkit;
pub mod vg;
mod vgrules;

pub use cost::{
    analyse, call_text, ms, rank_time, Analysis, Children, DrawCost, FrameStats, RankedBy,
    Unavailable,
};
