//! Test sessions and fixtures for every gpuheat crate's tests, in one place: use it as a
//! `[dev-dependency]` only (it panics on a test's mistakes, and depends on
//! `gpuheat-session` and nothing else of the workspace, so any crate's tests can use it).
//!
//! - [`SessionBuilder`]: small sessions built in code, frame by frame, GL and OpenVG alike
//!   (see [`builder`]); [`session`] builds one from bare call sequences.
//! - [`sample`]: one record of every kind, as a capture of a real program holds them, for the
//!   session file's own tests.
//! - [`fixture`]: the released session files kept in `inspector/session/tests/fixtures`;
//!   [`offscreen_passes`]: the offscreen scene several crates' tests draw.
//! - [`Scratch`]: a temporary directory removed on drop; [`XorShift`]: a seeded PRNG;
//!   [`Xvfb`]: a private X server.

pub mod builder;
mod fixture;
mod rng;
pub mod sample;
mod scratch;
mod seq;
mod vg;
mod vg_table;
mod xvfb;

pub use builder::{
    context, function_table, records, texture_target, write, FrameBuilder, SessionBuilder, CALL_NS,
    CLEAR_MASK, CONTEXT, COUNTERS, GL_TRIANGLES, THREAD, VERTEX_BUDGET,
};
pub use fixture::{fixture, fixtures_dir, offscreen_passes};
pub use rng::XorShift;
pub use scratch::Scratch;
pub use seq::{session, Seq};
pub use vg::{path_draw, IDENTITY};
pub use xvfb::Xvfb;
