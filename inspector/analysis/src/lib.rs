//! From a session to what a user is shown. The report, the heat-map PNG and the viewer all
//! draw on this crate, so they agree on every number.
//!
//! Rooms, each depending only on those above it (nothing points up; `make lint` checks the
//! crate has no import circle):
//!
//! 1. [`enums`] and [`palette`]: leaves (GL/VG enum names and constants generated from the
//!    registries; the colour scales heat is painted with).
//! 2. [`measure`]: per-frame totals and per-draw costs, draw identities and their statistics
//!    over frames, which draws a pixel's heat came from, how offscreen passes' cost flows to
//!    the pixels they feed.
//! 3. [`vg`]: the heat of OpenVG draws, painted on the host from their recorded paths.
//! 4. [`open`]: the one way a session is read for analysis (damage policy, VG painting).
//! 5. [`checklist`]: the performance checklist, one catalogue of rules.
//! 6. [`compare`]: two sessions compared draw by draw, pixel by pixel and target by target.

pub mod enums;
pub mod palette;

pub mod measure;

pub mod vg;

pub mod open;

pub mod checklist;

pub mod compare;

pub use measure::cost::{
    analyse, call_text, draw_text, ms, rank_time, Analysis, Children, DrawCost, FrameStats,
    RankedBy, Unavailable,
};
