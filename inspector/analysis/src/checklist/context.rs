//! What every rule of the checklist reads, computed once per check: the session, which GL
//! calls a VG library made (not the program's), each frame's work calls with its heat map and
//! their fragments, the fragments of each draw over the capture, the session's uploads by
//! call, the VG records by call, and the one state-tracker pass.

use super::walk::{fragments, walk, Walk};
use crate::measure::cost::{Analysis, DrawCost, FrameStats};
use crate::measure::identity::identify;
use crate::measure::nested::Nested;
use crate::measure::pick::heat_map;
use crate::measure::warmup::WarmUp;
use gpuheat_session::{Call, Frame, HeatMap, Session, Upload, VgCall};
// Fx: small integer keys looked up per call.
use rustc_hash::FxHashMap as HashMap;

/// Everything a rule reads. Built by [`super::check`]; rules only read it.
pub struct Context<'a> {
    /// The session checked.
    pub(super) s: &'a Session,
    /// The GL calls a VG library makes inside a VG call: the library's, not the program's.
    pub(super) nested: Nested,
    /// The frames the capture's own first-time work made unsteady (the agent's marks, or an
    /// older agent's first frame after an attach).
    pub(super) warmup: WarmUp,
    /// Each frame as the frame rules read it, by frame index.
    views: HashMap<u64, FrameView<'a>>,
    /// Fragments of each draw by (frame, call): the heat maps' exact counts where painted,
    /// else the fragment-shader counter, else samples passed.
    pub(super) fragments: HashMap<(u64, u32), u64>,
    /// Entry point names, by function index.
    pub(super) names: Vec<&'a str>,
    /// What each upload call copied in, by frame and call (the agent's `UPLD` records).
    pub(super) uploads: HashMap<(u64, u32), &'a Upload>,
    /// The VG records, looked up by call.
    pub(super) vg: VgIndex<'a>,
    /// The state tracker's one pass over the capture.
    pub(super) walk: Walk,
    /// The identity of each work call by (frame, call): the same draw in every frame, for the
    /// rules that judge a draw by its median over the frames.
    pub(super) identity: HashMap<(u64, u32), u32>,
}

/// One frame as the frame rules read it.
#[derive(Default)]
pub(super) struct FrameView<'a> {
    /// Its work calls, in call order.
    pub(super) draws: Vec<&'a DrawCost>,
    /// How many of them are glDraw* calls.
    pub(super) draw_calls: usize,
    /// Its screen heat map, when painted.
    pub(super) map: Option<&'a HeatMap>,
    /// Fragments of its draws by call: the heat map's exact count when painted, else the
    /// fragment-shader counter.
    pub(super) fragments: HashMap<u32, u64>,
    /// Its totals (times, calls).
    pub(super) stats: Option<&'a FrameStats>,
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
        let mut views: HashMap<u64, FrameView> = HashMap::default();
        for d in &a.draws {
            views.entry(d.frame).or_default().draws.push(d);
        }
        for st in &a.frames {
            let v = views.entry(st.index).or_default();
            v.draw_calls = st.draws;
            v.stats = Some(st);
        }
        for f in &s.frames {
            let v = views.entry(f.index).or_default();
            v.draws.sort_by_key(|d| d.call);
            v.map = heat_map(s, f.index);
            v.fragments = frame_fragments(v.map, &v.draws);
        }
        let warmup = WarmUp::of(s);
        let uploads = s
            .uploads
            .iter()
            .flat_map(|fu| fu.uploads.iter().map(move |u| ((fu.frame, u.call), u)))
            .collect();
        let walk = walk(s, &nested, &fragments);
        let identities = identify(s);
        let identity = s
            .frames
            .iter()
            .zip(&identities.frames)
            .flat_map(|(f, calls)| calls.iter().map(move |&(c, id)| ((f.index, c), id)))
            .collect();
        Context {
            s,
            nested,
            warmup,
            views,
            fragments,
            names: s.functions.names(),
            uploads,
            vg: VgIndex::new(s),
            walk,
            identity,
        }
    }

    /// Frame `index`'s view.
    pub(super) fn view(&self, index: u64) -> Option<&FrameView<'a>> {
        self.views.get(&index)
    }

    /// The session's frames in order, each with its view.
    pub(super) fn frames(&self) -> impl Iterator<Item = (&'a Frame, &FrameView<'a>)> + '_ {
        let s = self.s;
        s.frames
            .iter()
            .filter_map(|f| Some((f, self.views.get(&f.index)?)))
    }
}

/// Fragments of each draw: the heat map's exact count when painted, else the fragment-shader
/// counter.
fn frame_fragments(map: Option<&HeatMap>, draws: &[&DrawCost]) -> HashMap<u32, u64> {
    if let Some(map) = map {
        return map.draws.iter().map(|d| (d.call, d.fragments)).collect();
    }
    draws
        .iter()
        .filter_map(|d| {
            let n = d
                .counters
                .get(gpuheat_session::counter_names::FRAGMENT_SHADER_INVOCATIONS)?;
            Some((d.call, *n))
        })
        .collect()
}

/// The VG records, looked up by call.
pub(super) struct VgIndex<'a> {
    /// (frame, call) → the call's VG record.
    pub(super) calls: HashMap<(u64, u32), &'a VgCall>,
    /// The VG records in capture order (frame, then call).
    pub(super) ordered: Vec<&'a VgCall>,
    /// frame → the frame.
    pub(super) frames: HashMap<u64, &'a Frame>,
}

impl<'a> VgIndex<'a> {
    /// The index of session `s`'s VG records.
    pub(super) fn new(s: &'a Session) -> Self {
        let mut ordered: Vec<&VgCall> = s.vg_calls.iter().collect();
        ordered.sort_by_key(|v| (v.frame, v.call));
        VgIndex {
            calls: ordered.iter().map(|v| ((v.frame, v.call), *v)).collect(),
            ordered,
            frames: s.frames.iter().map(|f| (f.index, f)).collect(),
        }
    }

    /// Call `call` of frame `frame`.
    pub(super) fn call(&self, frame: u64, call: u32) -> Option<&'a Call> {
        self.frames.get(&frame)?.calls.get(call as usize)
    }
}
