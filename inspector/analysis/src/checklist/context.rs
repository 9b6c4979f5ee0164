//! What every rule of the checklist reads, computed once per check: the session and its
//! analysis, which GL calls a VG library made (not the program's), each frame's work calls,
//! the fragments of each draw, the session's uploads by call, and the one state-tracker pass.

use super::walk::{fragments, walk, Walk};
use crate::measure::cost::{Analysis, DrawCost};
use crate::measure::nested::Nested;
use gpuheat_session::{Session, Upload};
// Fx: small integer keys looked up per call.
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Everything a rule reads. Built by [`super::check`]; rules only read it.
pub struct Context<'a> {
    /// The session checked.
    pub(super) s: &'a Session,
    /// The GL calls a VG library makes inside a VG call: the library's, not the program's.
    pub(super) nested: Nested,
    /// The first frame after an attach, where the capture's own set-up lands.
    pub(super) first_after_attach: Option<u64>,
    /// Each frame's work calls, by frame index, in call order.
    pub(super) draws: BTreeMap<u64, Vec<&'a DrawCost>>,
    /// Each frame's glDraw* calls, by frame index.
    pub(super) draw_calls: HashMap<u64, usize>,
    /// Fragments of each draw by (frame, call): the heat maps' exact counts where painted,
    /// else the fragment-shader counter, else samples passed.
    pub(super) fragments: HashMap<(u64, u32), u64>,
    /// Entry point names, by function index.
    pub(super) names: Vec<&'a str>,
    /// What each upload call copied in, by frame and call (the agent's `UPLD` records).
    pub(super) uploads: HashMap<(u64, u32), &'a Upload>,
    /// The state tracker's one pass over the capture.
    pub(super) walk: Walk,
}

impl<'a> Context<'a> {
    /// The context of session `s` and its analysis `a`.
    pub fn new(s: &'a Session, a: &'a Analysis) -> Context<'a> {
        let fragments = fragments(s, a);
        Context::with_fragments(s, a, fragments)
    }

    /// [`Context::new`] with the fragments of each draw given (tests give them where a
    /// session built by hand has no heat map).
    pub(super) fn with_fragments(
        s: &'a Session,
        a: &'a Analysis,
        fragments: HashMap<(u64, u32), u64>,
    ) -> Context<'a> {
        let nested = Nested::of(&s.vg_calls);
        let mut draws: BTreeMap<u64, Vec<&DrawCost>> = BTreeMap::new();
        for d in &a.draws {
            draws.entry(d.frame).or_default().push(d);
        }
        for list in draws.values_mut() {
            list.sort_by_key(|d| d.call);
        }
        let draw_calls = a.frames.iter().map(|st| (st.index, st.draws)).collect();
        let first_after_attach = s
            .attach
            .as_ref()
            .and_then(|_| s.frames.first())
            .map(|f| f.index);
        let uploads = s
            .uploads
            .iter()
            .flat_map(|fu| fu.uploads.iter().map(move |u| ((fu.frame, u.call), u)))
            .collect();
        let walk = walk(s, &nested, &fragments);
        Context {
            s,
            nested,
            first_after_attach,
            draws,
            draw_calls,
            fragments,
            names: s.functions.names(),
            uploads,
            walk,
        }
    }

    /// The work calls of frame `index`, in call order.
    pub(super) fn draws(&self, index: u64) -> &[&'a DrawCost] {
        self.draws.get(&index).map_or(&[], Vec::as_slice)
    }

    /// How many glDraw* calls frame `index` made.
    pub(super) fn draw_calls(&self, index: u64) -> usize {
        self.draw_calls.get(&index).copied().unwrap_or(0)
    }
}
