//! Which captured frames are not the program's steady state because of the capture itself:
//! frames whose times include the agent's own first-time work. Statistics, the diff and the
//! viewer's default frame leave them out; the checklist's timing rules can too
//! ([`WarmUp::contains`]).
//!
//! Two sources, both from the session alone:
//! - the agent's `WARM` records: a captured frame in which it measured a new context, made its
//!   painter or geometry capture, or waited for its writer;
//! - an attach session whose agent did not warm up
//!   ([`gpuheat_session::SessionInfo::warmup_frames`] `None`: every agent before the warm-up
//!   existed): its first captured frame, which held the agent's set-up of the context (its
//!   counters measured, its query objects made) and the driver's compiles for its queries.
//!   Such a capture was slower than the next over all its frames too (es2gears_x11 on
//!   llvmpipe: 0.25-0.38 against 0.11-0.16 ms of CPU time in GL per frame), which no mark of
//!   one frame undoes: capture again for figures to compare.

use gpuheat_session::Session;
use std::collections::BTreeSet;

/// The warm-up frames of a session, by frame number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarmUp {
    frames: BTreeSet<u64>,
}

impl WarmUp {
    /// The warm-up frames of `s`.
    pub fn of(s: &Session) -> WarmUp {
        let mut frames: BTreeSet<u64> = s.warmup.iter().map(|w| w.frame).collect();
        if s.attach.is_some() && s.info.warmup_frames.is_none() {
            if let Some(first) = s.frames.iter().map(|f| f.index).min() {
                frames.insert(first);
            }
        }
        WarmUp { frames }
    }

    /// Whether frame `index` is a warm-up frame.
    pub fn contains(&self, index: u64) -> bool {
        self.frames.contains(&index)
    }

    /// The warm-up frames, in order.
    pub fn frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.frames.iter().copied()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// Whether frame `index` of `s` is a warm-up frame (see [`WarmUp`]; build one with
/// [`WarmUp::of`] to ask about many frames).
pub fn is_warmup(s: &Session, index: u64) -> bool {
    WarmUp::of(s).contains(index)
}

/// The reasons the agent gave for frame `index`, when it marked it.
pub fn reasons(s: &Session, index: u64) -> Vec<String> {
    s.warmup
        .iter()
        .filter(|w| w.frame == index)
        .flat_map(|w| w.reasons.iter().cloned())
        .collect()
}
