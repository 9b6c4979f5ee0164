//! Two sessions compared: [`diff`] draw by draw (identities matched, changes judged against
//! both sides' spread with the false discovery rate controlled), [`heat`] pixel by pixel, and
//! [`target`] render target by render target.
//!
//! Layers: `diff`, then `heat` and `target` (which use its verdicts).

pub mod diff;

pub mod heat;

pub mod target;
