//! Counters: what gpuheat measures and how.
//!
//! - [`catalogue`]: the fixed, ordered list of counters; a counter's index there is the `u16`
//!   of [`gpuheat_session::CounterValue::counter`].
//! - [`gl`]: the real GL entry points used (loaded through the agent's loader, never through
//!   the program's hooked symbols) and the enums.
//! - [`ContextCounters`]: per-context capabilities and the bracket taken around each work call:
//!   serialized timing (drain, time, drain), samples passed and pipeline statistics read right
//!   after the call, and pipelined timestamp pairs read back frames later by
//!   [`ContextCounters::poll`].
//! - [`thermal`]: per-pixel heat and overdraw maps of a captured frame.
//! - [`geometry`]: each draw's post-transform positions, by transform feedback replay.

pub mod catalogue;
mod context;
pub mod geometry;
pub mod gl;
pub mod thermal;

pub use catalogue::{CounterDef, CounterKind, COUNTERS};
pub use context::{
    monotonic_ns, parse_version, pipelined_caveat, Bracket, ContextCounters, DEFAULT_TIMESTAMP_CAP,
};
pub use geometry::{GeometryCapture, ProgramLink};
pub use gl::{GeometryFns, GlFns};
pub use thermal::{Painter, ThermalFns};
