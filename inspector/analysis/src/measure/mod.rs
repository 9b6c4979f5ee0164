//! What a session measured, arranged for reading: [`cost`] (per-frame totals and per-draw
//! costs), [`identity`] (which draws are the same across frames and sessions), [`aggregate`]
//! (a draw's figures over frames, by identity), [`stats`] (medians, spreads and tests),
//! [`pick`] (which draws a pixel's heat came from), [`flow`] (how offscreen passes' cost
//! reaches the pixels they feed), [`warmup`] (which frames the capture's own first-time
//! work made unsteady) and [`hitch`] (why a watched frame triggered).
//!
//! Layers, lowest first: `nested`, `stats`, `pick`, `warmup`; `cost`; `identity`; `aggregate`;
//! `flow`; `hitch`.

pub mod nested;

pub mod warmup;

pub mod stats;

pub mod pick;

pub mod cost;

pub mod identity;

pub mod aggregate;

pub mod flow;

pub mod hitch;
