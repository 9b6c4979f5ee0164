//! The OpenVG checklist (issue 12): rules that read a VG program's calls and the VG records
//! ([`VgCall`], [`VgPath`]) the way [`crate::checklist`] reads a GL program's.
//!
//! A VG program's calls are ordinary calls of its frames, found by name. State the capture
//! never saw set (anything set before the first captured frame) is unknown, and a rule never
//! guesses it: a call is redundant only against a value the capture saw.

use super::context::VgIndex;
use super::finding::{Cost, Evidence, Finding, Severity};
use super::rule::{Family, Rule};
use crate::enums::vg;
use gpuheat_session::{Call, HeatMap, Session, VgCall, VgDraw, VgPath};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Fewest captured frames an every-frame rule (churn, sync) needs: one frame is no pattern.
const EVERY_FRAME_MIN: usize = 2;
/// Share of the captured frames, in percent, in which objects must be created and destroyed
/// for [`object_churn`] to call it a per-frame habit (a frame that skips it, e.g. a loading
/// frame, does not hide it).
const CHURN_PERCENT: usize = 80;
/// Drawing segments (all but `MOVE_TO`) from which a path counts as complex.
const TINY_MIN_SEGMENTS: usize = 16;
/// Covered pixels per drawing segment under which a complex path is drawn too small for its
/// detail to show.
const TINY_PIXELS_PER_SEGMENT: f64 = 4.0;
/// Redundant VG state calls per frame from which they are called out (and 10% of the frame's
/// VG state calls, as the GL rule).
const REDUNDANT_VG_CALLS: usize = 5;

/// `VG_PATH_CAPABILITY_ALL`.
const PATH_CAPABILITY_ALL: u64 = vg::PATH_CAPABILITY_ALL as u64;
/// `VG_MATRIX_MODE`: which matrix the matrix functions change.
const MATRIX_MODE: u64 = vg::MATRIX_MODE as u64;
/// `VG_MATRIX_IMAGE_USER_TO_SURFACE`, the one matrix mode that may be projective.
const MATRIX_IMAGE_USER_TO_SURFACE: u64 = vg::MATRIX_IMAGE_USER_TO_SURFACE as u64;
/// `VG_PAINT_COLOR`, which `vgSetColor` sets as well.
const PAINT_COLOR: u64 = vg::PAINT_COLOR as u64;
/// `VG_STROKE_PATH` and `VG_FILL_PATH`.
const PAINT_MODES: [u64; 2] = [vg::STROKE_PATH as u64, vg::FILL_PATH as u64];

/// The column-major identity, as `vgGetMatrix` returns it.
const IDENTITY: [f32; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

/// The rules of this family, in the order the catalogue lists them.
pub(super) const RULES: &[&Rule] = &[
    &VG_OBJECT_CHURN,
    &VG_IMAGE_REUPLOAD,
    &VG_TINY_COMPLEX_PATH,
    &VG_REDUNDANT_STATE,
    &VG_PATH_ALL_CAPABILITIES,
    &VG_SYNC_EVERY_FRAME,
];

/// `vg-object-churn`.
pub(super) const VG_OBJECT_CHURN: Rule = Rule {
    id: "vg-object-churn",
    family: Family::Vg,
    severity: Severity::Warning,
    summary: "VG objects created and destroyed every frame",
    check: |ctx, out| object_churn(ctx.s, out),
};

/// `vg-image-reupload`.
pub(super) const VG_IMAGE_REUPLOAD: Rule = Rule {
    id: "vg-image-reupload",
    family: Family::Vg,
    severity: Severity::Warning,
    summary: "the same VG image data uploaded again",
    check: |ctx, out| image_reupload(ctx.s, &ctx.vg, out),
};

/// `vg-tiny-complex-path`.
pub(super) const VG_TINY_COMPLEX_PATH: Rule = Rule {
    id: "vg-tiny-complex-path",
    family: Family::Vg,
    severity: Severity::Warning,
    summary: "complex VG paths drawn tiny",
    check: |ctx, out| tiny_complex_paths(ctx.s, &ctx.vg, out),
};

/// `vg-redundant-state`.
pub(super) const VG_REDUNDANT_STATE: Rule = Rule {
    id: "vg-redundant-state",
    family: Family::Vg,
    severity: Severity::Info,
    summary: "VG state set to what is already current",
    check: |ctx, out| redundant_state(ctx.s, &ctx.vg, out),
};

/// `vg-path-all-capabilities`.
pub(super) const VG_PATH_ALL_CAPABILITIES: Rule = Rule {
    id: "vg-path-all-capabilities",
    family: Family::Vg,
    severity: Severity::Info,
    summary: "VG paths created with every capability",
    check: |ctx, out| all_capabilities(ctx.s, out),
};

/// `vg-sync-every-frame`.
pub(super) const VG_SYNC_EVERY_FRAME: Rule = Rule {
    id: "vg-sync-every-frame",
    family: Family::Vg,
    severity: Severity::Warning,
    summary: "vgFinish or a read-back every frame",
    check: |ctx, out| sync_every_frame(ctx.s, out),
};

/// The entry point's name of `call` (empty for an index outside the table).
fn name<'a>(s: &'a Session, call: &Call) -> &'a str {
    s.functions
        .functions
        .get(call.func as usize)
        .map_or("", |f| f.name.as_str())
}

/// The `i`-th argument, 0 when the call has fewer.
fn arg(call: &Call, i: usize) -> u64 {
    call.args.get(i).copied().unwrap_or(0)
}

/// A float argument: its `f32` bits are the low 32 bits.
fn float_arg(call: &Call, i: usize) -> f32 {
    f32::from_bits(arg(call, i) as u32)
}

/// An integer argument, sign-extended by the agent.
fn int_arg(call: &Call, i: usize) -> i64 {
    arg(call, i) as i64
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `lo` or `lo–hi`.
fn range(lo: usize, hi: usize) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// Object kinds whose per-frame creation the churn rule looks for: the kind, the calls that
/// create one, the calls that destroy one.
const OBJECT_KINDS: [(&str, &[&str], &[&str]); 3] = [
    ("path", &["vgCreatePath"], &["vgDestroyPath"]),
    ("paint", &["vgCreatePaint"], &["vgDestroyPaint"]),
    (
        "image",
        &["vgCreateImage", "vgChildImage"],
        &["vgDestroyImage"],
    ),
];

/// `vg-object-churn`: paths, paints or images created and destroyed in (nearly) every frame;
/// one finding per kind, at the first such frame.
fn object_churn(s: &Session, out: &mut Vec<Finding>) {
    let frames = s.frames.len();
    if frames < EVERY_FRAME_MIN {
        return;
    }
    for (kind, creates, destroys) in OBJECT_KINDS {
        // (frame, first create, objects both created and destroyed).
        let mut churn: Vec<(u64, u32, usize)> = Vec::new();
        for f in &s.frames {
            let (mut made, mut freed, mut first) = (0usize, 0usize, None);
            for (i, c) in f.calls.iter().enumerate() {
                let n = name(s, c);
                if creates.contains(&n) {
                    made += 1;
                    first.get_or_insert(i as u32);
                } else if destroys.contains(&n) {
                    freed += 1;
                }
            }
            if let (Some(first), true) = (first, made.min(freed) > 0) {
                churn.push((f.index, first, made.min(freed)));
            }
        }
        if churn.len() < EVERY_FRAME_MIN || churn.len() * 100 < frames * CHURN_PERCENT {
            continue;
        }
        let lo = churn.iter().map(|c| c.2).min().unwrap_or(0);
        let hi = churn.iter().map(|c| c.2).max().unwrap_or(0);
        let noun = if hi == 1 {
            kind.to_string()
        } else {
            format!("{kind}s")
        };
        out.push(Finding {
            frame: churn[0].0,
            call: Some(churn[0].1),
            rule: VG_OBJECT_CHURN.id,
            severity: Severity::Warning,
            title: format!(
                "{} {noun} created and destroyed per frame, in {} of {frames} frames",
                range(lo, hi),
                churn.len()
            ),
            detail: format!(
                "Each {kind} is allocated by the VG implementation (paths with their data \
                 and tessellation caches, images with their texture storage) only to be \
                 freed before the next frame, and its cached work is lost with it."
            ),
            fix: "Create it once, outside the frame loop, and reuse it: change a paint with \
                  vgSetColor or vgSetParameter, a path's data with vgClearPath and \
                  vgAppendPathData or vgModifyPathCoords, an image's pixels with \
                  vgImageSubData."
                .into(),
            evidence: Evidence::calls([churn[0].1])
                .with("frames_with_churn", churn.len())
                .with("captured_frames", frames)
                .with("per_frame_min", lo)
                .with("per_frame_max", hi),
            cost: None,
        });
    }
}

/// Bits per pixel of a `VGImageFormat` (the channel order bits ignored), `None` when unknown.
fn format_bits(format: u64) -> Option<u64> {
    Some(match format & 0x3F {
        0 | 1 | 2 | 7 | 8 | 9 => 32,
        3..=5 => 16,
        6 | 10 | 11 => 8,
        12 | 13 => 1,
        14 => 4,
        _ => return None,
    })
}

/// Bytes an upload call read: `vgImageSubData(image, data, stride, format, x, y, w, h)` and
/// `vgWritePixels(data, stride, format, x, y, w, h)`.
fn upload_bytes(name: &str, call: &Call) -> Option<u64> {
    let (format, width, height) = match name {
        "vgImageSubData" => (arg(call, 3), int_arg(call, 6), int_arg(call, 7)),
        "vgWritePixels" => (arg(call, 2), int_arg(call, 5), int_arg(call, 6)),
        _ => return None,
    };
    let (width, height) = (u64::try_from(width).ok()?, u64::try_from(height).ok()?);
    // A damaged record's sizes must not overflow.
    width
        .checked_mul(format_bits(format)?)?
        .div_ceil(8)
        .checked_mul(height)
}

/// `vg-image-reupload`: uploads whose pixels hash to data uploaded before in the capture.
/// One finding for the session, at the first repeat.
fn image_reupload(s: &Session, vg: &VgIndex, out: &mut Vec<Finding>) {
    let mut seen: HashSet<u64> = HashSet::new();
    let mut repeated: HashSet<u64> = HashSet::new();
    let mut frames: HashSet<u64> = HashSet::new();
    let (mut repeats, mut bytes, mut sized) = (0usize, 0u64, true);
    let mut first = None;
    for v in &vg.ordered {
        let Some(hash) = v.upload else {
            continue;
        };
        if seen.insert(hash) {
            continue;
        }
        repeats += 1;
        repeated.insert(hash);
        frames.insert(v.frame);
        first.get_or_insert((v.frame, v.call));
        match vg
            .call(v.frame, v.call)
            .and_then(|c| upload_bytes(name(s, c), c))
        {
            Some(b) => bytes += b,
            None => sized = false,
        }
    }
    let Some((frame, call)) = first else {
        return;
    };
    let again = if sized {
        format!(", {bytes} bytes sent again")
    } else {
        String::new()
    };
    out.push(Finding {
        frame,
        call: Some(call),
        rule: VG_IMAGE_REUPLOAD.id,
        severity: if frames.len() >= EVERY_FRAME_MIN {
            Severity::Warning
        } else {
            Severity::Info
        },
        title: format!(
            "{} of image data already uploaded, in {}{again}",
            plural(repeats, "upload"),
            plural(frames.len(), "frame")
        ),
        detail: format!(
            "The same pixels ({} by content) went through the driver again: each \
             vgImageSubData or vgWritePixels copies its data and (on a GPU) writes texture \
             memory, and data that did not change is already there.",
            plural(repeated.len(), "distinct image")
        ),
        fix: "Upload an image once and draw it as often as needed; upload again only what \
              changed."
            .into(),
        evidence: {
            let mut e = Evidence::calls([call])
                .with("repeats", repeats)
                .with("distinct_images", repeated.len())
                .with("frames", frames.len());
            e.count = repeats as u64;
            if sized {
                e = e.with("bytes_again", bytes);
            }
            e
        },
        cost: None,
    });
}

/// The heat map of `frame` on `context`, else the frame's first.
fn heat_map_of(s: &Session, frame: u64, context: u64) -> Option<&HeatMap> {
    s.heat
        .iter()
        .find(|m| m.frame == frame && m.context == context)
        .or_else(|| s.heat.iter().find(|m| m.frame == frame))
}

/// Fragments a VG draw covered in `map`: its own entry, else the sum over its GL children
/// (a map may list the library's draws rather than the VG call).
fn vg_fragments(map: &HeatMap, v: &VgCall) -> Option<u64> {
    let of = |call: u32| map.draws.iter().find(|d| d.call == call);
    if let Some(d) = of(v.call) {
        return Some(d.fragments);
    }
    let children: Vec<u64> = v
        .children
        .iter()
        .filter_map(|&c| of(c).map(|d| d.fragments))
        .collect();
    (!children.is_empty()).then(|| children.iter().sum())
}

/// Segments of a path that draw something: all but `VG_MOVE_TO`.
fn drawing_segments(path: &VgPath) -> usize {
    path.segments.iter().filter(|&&seg| seg >> 1 != 1).count()
}

/// A path's tiny draws in one frame: first call, draws, segments, fragments in all.
type TinyDraws = (u32, usize, usize, u64);

/// `vg-tiny-complex-path`: a path of many segments drawn over few pixels. One finding per
/// frame and path, at its first such draw.
fn tiny_complex_paths(s: &Session, vg: &VgIndex, out: &mut Vec<Finding>) {
    let mut paths: HashMap<(u64, u64, u64), &VgPath> = HashMap::new();
    let mut any_context: HashMap<(u64, u64), &VgPath> = HashMap::new();
    for p in &s.vg_paths {
        paths.insert((p.context, p.path, p.serial), p);
        any_context.entry((p.path, p.serial)).or_insert(p);
    }
    let mut tiny: BTreeMap<(u64, u64, u64), TinyDraws> = BTreeMap::new();
    for v in &vg.ordered {
        let Some(VgDraw::Path(d)) = &v.draw else {
            continue;
        };
        if d.serial == 0 {
            continue;
        }
        let Some(path) = paths
            .get(&(v.context, d.path, d.serial))
            .or_else(|| any_context.get(&(d.path, d.serial)))
        else {
            continue;
        };
        let segments = drawing_segments(path);
        if segments < TINY_MIN_SEGMENTS {
            continue;
        }
        let Some(map) = heat_map_of(s, v.frame, v.context) else {
            continue;
        };
        // A draw that covered nothing (scissored, off the surface) is not drawn small.
        let Some(fragments) = vg_fragments(map, v).filter(|&n| n > 0) else {
            continue;
        };
        if (fragments as f64) / (segments as f64) >= TINY_PIXELS_PER_SEGMENT {
            continue;
        }
        let e = tiny
            .entry((v.frame, v.context, d.path))
            .or_insert((v.call, 0, segments, 0));
        e.1 += 1;
        e.2 = e.2.max(segments);
        e.3 += fragments;
    }
    for ((frame, _, path), (call, draws, segments, fragments)) in tiny {
        let per_draw = fragments as f64 / draws as f64;
        let times = if draws == 1 {
            String::new()
        } else {
            format!(" (drawn {draws} times)")
        };
        out.push(Finding {
            frame,
            call: Some(call),
            rule: VG_TINY_COMPLEX_PATH.id,
            severity: Severity::Warning,
            title: format!(
                "path {path:#x} of {segments} segments covers {per_draw:.0} px per draw, {:.2} \
                 px per segment{times}",
                per_draw / segments as f64
            ),
            detail: "Every segment is flattened, tessellated and sent to the GPU whatever \
                     size the path is drawn at; drawn this small its detail cannot show and \
                     the work is spent on geometry, not pixels."
                .into(),
            fix: "Draw a simpler path at small sizes (fewer segments: a level of detail), or \
                  draw the shape once into an image and draw the image."
                .into(),
            evidence: Evidence::calls([call])
                .with("path", format!("{path:#x}"))
                .with("segments", segments)
                .with("draws", draws)
                .with("fragments", fragments)
                .with("fragments_from", "heat map"),
            cost: None,
        });
    }
}

/// Where a VG state value is kept, per context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    /// A context parameter (`vgSet*`).
    Param(u64),
    /// The paint of a paint mode (`vgSetPaint`): 1 stroke, 2 fill.
    Paint(u64),
    /// A parameter of a path, paint or image (`vgSetParameter*`, `vgSetColor`).
    Object(u64, u64),
    /// The matrix of a matrix mode.
    Matrix(u64),
}

/// The VG calls the redundant-state rule follows; each counts as a VG state call.
const VG_STATE: [&str; 17] = [
    "vgSetPaint",
    "vgSeti",
    "vgSetf",
    "vgSetiv",
    "vgSetfv",
    "vgSetParameteri",
    "vgSetParameterf",
    "vgSetParameteriv",
    "vgSetParameterfv",
    "vgSetColor",
    "vgLoadIdentity",
    "vgLoadMatrix",
    "vgMultMatrix",
    "vgTranslate",
    "vgScale",
    "vgShear",
    "vgRotate",
];

/// `a · b` of two column-major 3×3 matrices.
fn mul(a: &[f32; 9], b: &[f32; 9]) -> [f32; 9] {
    let mut m = [0.0f32; 9];
    for col in 0..3 {
        for row in 0..3 {
            m[col * 3 + row] = (0..3).map(|k| a[k * 3 + row] * b[col * 3 + k]).sum();
        }
    }
    m
}

/// The matrix a `vgMultMatrix`, `vgTranslate`, `vgScale`, `vgShear` or `vgRotate` multiplies
/// the current one by (on the right, as OpenVG 1.1 section 6.6 specifies).
fn operand(name: &str, call: &Call, values: Option<&[f32]>) -> Option<[f32; 9]> {
    let (a, b) = (float_arg(call, 0), float_arg(call, 1));
    Some(match name {
        "vgMultMatrix" => values?.try_into().ok()?,
        "vgTranslate" => [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, a, b, 1.0],
        "vgScale" => [a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, 1.0],
        "vgShear" => [1.0, b, 0.0, a, 1.0, 0.0, 0.0, 0.0, 1.0],
        "vgRotate" => {
            let (sin, cos) = a.to_radians().sin_cos();
            [cos, sin, 0.0, -sin, cos, 0.0, 0.0, 0.0, 1.0]
        }
        _ => return None,
    })
}

/// Matrices of the affine modes keep (0, 0, 1) as their last row whatever is loaded.
fn normalised(mode: u64, mut m: [f32; 9]) -> [f32; 9] {
    if mode != MATRIX_IMAGE_USER_TO_SURFACE {
        m[2] = 0.0;
        m[5] = 0.0;
        m[8] = 1.0;
    }
    m
}

fn to_values(m: &[f32; 9]) -> Vec<f64> {
    m.iter().map(|&v| f64::from(v)).collect()
}

/// The VG state the capture has seen set, per (context, slot).
#[derive(Default)]
struct VgState {
    known: HashMap<(u64, Slot), Vec<f64>>,
}

impl VgState {
    /// Sets `slot`; true when it already held `value`.
    fn set(&mut self, context: u64, slot: Slot, value: Vec<f64>) -> bool {
        self.known.insert((context, slot), value.clone()) == Some(value)
    }

    fn forget(&mut self, context: u64, slot: Slot) {
        self.known.remove(&(context, slot));
    }

    /// Forgets every parameter of object `handle` (destroyed, or newly made).
    fn forget_object(&mut self, context: u64, handle: u64) {
        self.known.retain(|(c, slot), _| {
            !(*c == context && matches!(slot, Slot::Object(h, _) if *h == handle))
        });
    }

    /// The current matrix mode, once the capture has seen it set.
    fn matrix_mode(&self, context: u64) -> Option<u64> {
        let v = self.known.get(&(context, Slot::Param(MATRIX_MODE)))?;
        Some(*v.first()? as u64)
    }

    /// Follows one call: `Some(redundant)` for a VG state call ([`VG_STATE`]), `None` for
    /// any other (objects made and destroyed forget their parameters).
    fn step(&mut self, name: &str, call: &Call, values: Option<&[f32]>) -> Option<bool> {
        let context = call.context;
        match name {
            "vgCreatePath" | "vgCreatePaint" | "vgCreateImage" | "vgChildImage"
            | "vgCreateFont" | "vgCreateMaskLayer" => {
                if let Some(h) = call.ret {
                    self.forget_object(context, h);
                }
                None
            }
            "vgDestroyPath" | "vgDestroyPaint" | "vgDestroyImage" | "vgDestroyFont"
            | "vgDestroyMaskLayer" => {
                let h = arg(call, 0);
                self.forget_object(context, h);
                if name == "vgDestroyPaint" {
                    // A paint made later may reuse the handle: setting it is a change.
                    for mode in PAINT_MODES {
                        if self.known.get(&(context, Slot::Paint(mode))) == Some(&vec![h as f64]) {
                            self.forget(context, Slot::Paint(mode));
                        }
                    }
                }
                None
            }
            _ if VG_STATE.contains(&name) => Some(self.apply(context, name, call, values)),
            _ => None,
        }
    }

    /// Applies one VG state call; true when it changed nothing the capture knew of.
    fn apply(&mut self, context: u64, name: &str, call: &Call, values: Option<&[f32]>) -> bool {
        // An array argument's values: from the VG record, or none at all for a count of 0.
        let array = |count: usize| -> Option<Vec<f64>> {
            match values {
                Some(v) => Some(v.iter().map(|&x| f64::from(x)).collect()),
                None => (int_arg(call, count) == 0).then(Vec::new),
            }
        };
        let int = |i: usize| vec![int_arg(call, i) as i32 as f64];
        let float = |i: usize| vec![f64::from(float_arg(call, i))];
        let (slot, value) = match name {
            "vgSetPaint" => {
                let (paint, modes) = (arg(call, 0), arg(call, 1));
                let mut all = modes & 3 != 0;
                for mode in PAINT_MODES.into_iter().filter(|m| modes & m != 0) {
                    all &= self.set(context, Slot::Paint(mode), vec![paint as f64]);
                }
                return all;
            }
            "vgSeti" => (Slot::Param(arg(call, 0)), Some(int(1))),
            "vgSetf" => (Slot::Param(arg(call, 0)), Some(float(1))),
            "vgSetiv" | "vgSetfv" => (Slot::Param(arg(call, 0)), array(1)),
            "vgSetParameteri" => (Slot::Object(arg(call, 0), arg(call, 1)), Some(int(2))),
            "vgSetParameterf" => (Slot::Object(arg(call, 0), arg(call, 1)), Some(float(2))),
            "vgSetParameteriv" | "vgSetParameterfv" => {
                (Slot::Object(arg(call, 0), arg(call, 1)), array(2))
            }
            "vgSetColor" => {
                // What vgGetParameterfv(paint, VG_PAINT_COLOR) then returns.
                let rgba = arg(call, 1) as u32;
                let c = |shift: u32| f64::from(((rgba >> shift) & 0xFF) as f32 / 255.0);
                (
                    Slot::Object(arg(call, 0), PAINT_COLOR),
                    Some(vec![c(24), c(16), c(8), c(0)]),
                )
            }
            _ => return self.apply_matrix(context, name, call, values),
        };
        match value {
            Some(v) => self.set(context, slot, v),
            None => {
                self.forget(context, slot);
                false
            }
        }
    }

    /// The matrix functions, on the current matrix mode's matrix.
    fn apply_matrix(
        &mut self,
        context: u64,
        name: &str,
        call: &Call,
        values: Option<&[f32]>,
    ) -> bool {
        let loaded = match name {
            "vgLoadIdentity" => Some(IDENTITY),
            "vgLoadMatrix" => values.and_then(|v| v.try_into().ok()),
            _ => None,
        };
        let by = operand(name, call, values);
        // Multiplying by the identity changes nothing, whatever the matrix.
        let no_op = by == Some(IDENTITY);
        let Some(mode) = self.matrix_mode(context) else {
            // Which matrix changed is unknown: none is known any more.
            if !no_op {
                self.known
                    .retain(|(c, slot), _| !(*c == context && matches!(slot, Slot::Matrix(_))));
            }
            return no_op;
        };
        let slot = Slot::Matrix(mode);
        let next = match (loaded, by) {
            (Some(m), _) => Some(normalised(mode, m)),
            (None, Some(b)) => self.known.get(&(context, slot)).map(|cur| {
                let cur: Vec<f32> = cur.iter().map(|&v| v as f32).collect();
                let cur: [f32; 9] = cur.try_into().unwrap_or(IDENTITY);
                normalised(mode, mul(&cur, &b))
            }),
            (None, None) => None,
        };
        match next {
            Some(m) => self.set(context, slot, to_values(&m)) || no_op,
            None => {
                self.forget(context, slot);
                no_op
            }
        }
    }
}

/// `vg-redundant-state`: VG state calls that set the value already set, tracked across the
/// capture per context, reported per frame.
fn redundant_state(s: &Session, vg: &VgIndex, out: &mut Vec<Finding>) {
    let mut state = VgState::default();
    for f in &s.frames {
        let (mut state_calls, mut redundant) = (0usize, 0usize);
        let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
        let mut first = None;
        let (mut ids, mut cpu) = (Vec::new(), 0u64);
        for (i, c) in f.calls.iter().enumerate() {
            let n = name(s, c);
            let values = vg
                .calls
                .get(&(f.index, i as u32))
                .filter(|v| !v.values.is_empty())
                .map(|v| v.values.as_slice());
            let Some(same) = state.step(n, c, values) else {
                continue;
            };
            state_calls += 1;
            if same {
                redundant += 1;
                *by_name.entry(n).or_default() += 1;
                first.get_or_insert(i as u32);
                ids.push(i as u32);
                cpu += c.cpu_ns;
            }
        }
        if redundant >= REDUNDANT_VG_CALLS && redundant * 10 >= state_calls {
            let mut top: Vec<(&str, usize)> = by_name.into_iter().collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let top_counts = top.clone();
            let top: Vec<String> = top
                .iter()
                .take(3)
                .map(|(n, k)| format!("{n} ×{k}"))
                .collect();
            out.push(Finding {
                frame: f.index,
                call: first,
                rule: VG_REDUNDANT_STATE.id,
                severity: Severity::Info,
                title: format!(
                    "{redundant} of {state_calls} VG state calls set the value already set ({})",
                    top.join(", ")
                ),
                detail: "Each call still goes through the VG implementation, which may \
                         revalidate its paint, matrices and GL state for the next draw."
                    .into(),
                fix: "Keep track of the paint, parameters and matrix set and skip calls that \
                      change nothing; set a paint once per mode instead of before every draw."
                    .into(),
                evidence: {
                    let mut e = Evidence::calls(ids).with("state_calls", state_calls);
                    for (n, k) in &top_counts {
                        e = e.with(n, k);
                    }
                    e
                },
                cost: Some(Cost {
                    ns: cpu,
                    measured: format!("time spent in the {redundant} redundant calls"),
                }),
            });
        }
    }
}

/// Path calls that need no capability beyond `APPEND_TO` and `MODIFY` (the path's own
/// data), with the argument that names the path: drawing and building it.
const PATH_BUILDS: [(&str, usize); 14] = [
    ("vgDrawPath", 0),
    ("vgRenderToMask", 0),
    ("vgAppendPathData", 0),
    ("vgModifyPathCoords", 0),
    ("vgClearPath", 0),
    ("vgDestroyPath", 0),
    ("vgAppendPath", 0),
    ("vgSetGlyphToPath", 2),
    ("vguLine", 0),
    ("vguPolygon", 0),
    ("vguRect", 0),
    ("vguRoundRect", 0),
    ("vguEllipse", 0),
    ("vguArc", 0),
];

/// Calls that need a capability `APPEND_TO`/`MODIFY` do not give, with the arguments that
/// may name a path.
const PATH_USES: [(&str, &[usize]); 14] = [
    ("vgPathBounds", &[0]),
    ("vgPathTransformedBounds", &[0]),
    ("vgPathLength", &[0]),
    ("vgPointAlongPath", &[0]),
    ("vgTransformPath", &[0, 1]),
    ("vgInterpolatePath", &[0, 1, 2]),
    ("vgAppendPath", &[1]),
    ("vgRemovePathCapabilities", &[0]),
    ("vgGetPathCapabilities", &[0]),
    ("vgGetParameteri", &[0]),
    ("vgGetParameterf", &[0]),
    ("vgGetParameteriv", &[0]),
    ("vgGetParameterfv", &[0]),
    ("vgGetParameterVectorSize", &[0]),
];

/// One life of a path handle, from its creation (or first sight) to its destruction.
struct PathLife {
    path: u64,
    /// Where it was made, or (made before the capture) first drawn.
    frame: u64,
    call: u32,
    /// Made by a `vgCreatePath` of the capture.
    created: bool,
    all: bool,
    drawn: bool,
    used: bool,
}

/// The lives of the path handles, in the order they began.
struct PathLives {
    lives: Vec<PathLife>,
    /// (context, handle) → its current life.
    current: HashMap<(u64, u64), usize>,
    /// Paths whose recorded data says they have every capability: those made before the
    /// capture are known only so.
    recorded_all: HashSet<(u64, u64)>,
}

impl PathLives {
    fn begin(&mut self, context: u64, life: PathLife) -> usize {
        self.current.insert((context, life.path), self.lives.len());
        self.lives.push(life);
        self.lives.len() - 1
    }

    /// The current life of path `h`: one made in the capture, else one first seen now with
    /// every capability (made before the capture); `None` for any other handle.
    fn life(&mut self, context: u64, h: u64, frame: u64, call: u32) -> Option<usize> {
        if let Some(&l) = self.current.get(&(context, h)) {
            return Some(l);
        }
        if h == 0 || !self.recorded_all.contains(&(context, h)) {
            return None;
        }
        let life = PathLife {
            path: h,
            frame,
            call,
            created: false,
            all: true,
            drawn: false,
            used: false,
        };
        Some(self.begin(context, life))
    }
}

/// `vg-path-all-capabilities`: paths made with `VG_PATH_CAPABILITY_ALL` that the capture
/// only draws and builds. One finding per path.
fn all_capabilities(s: &Session, out: &mut Vec<Finding>) {
    let mut p = PathLives {
        lives: Vec::new(),
        current: HashMap::new(),
        recorded_all: s
            .vg_paths
            .iter()
            .filter(|p| u64::from(p.capabilities) & PATH_CAPABILITY_ALL == PATH_CAPABILITY_ALL)
            .map(|p| (p.context, p.path))
            .collect(),
    };
    for f in &s.frames {
        for (i, c) in f.calls.iter().enumerate() {
            let (n, call) = (name(s, c), i as u32);
            if n == "vgCreatePath" {
                if let Some(h) = c.ret.filter(|&h| h != 0) {
                    let life = PathLife {
                        path: h,
                        frame: f.index,
                        call,
                        created: true,
                        all: arg(c, 6) & PATH_CAPABILITY_ALL == PATH_CAPABILITY_ALL,
                        drawn: false,
                        used: false,
                    };
                    p.begin(c.context, life);
                }
                continue;
            }
            if let Some(&(_, a)) = PATH_BUILDS.iter().find(|(b, _)| *b == n) {
                let Some(l) = p.life(c.context, arg(c, a), f.index, call) else {
                    continue;
                };
                let life = &mut p.lives[l];
                match n {
                    "vgDrawPath" | "vgRenderToMask" if !life.drawn => {
                        life.drawn = true;
                        if !life.created {
                            (life.frame, life.call) = (f.index, call);
                        }
                    }
                    // vgClearPath sets the capabilities anew.
                    "vgClearPath" => {
                        life.all = arg(c, 1) & PATH_CAPABILITY_ALL == PATH_CAPABILITY_ALL;
                    }
                    "vgDestroyPath" => {
                        p.current.remove(&(c.context, arg(c, 0)));
                    }
                    _ => {}
                }
            }
            if let Some(&(_, args)) = PATH_USES.iter().find(|(u, _)| *u == n) {
                for &a in args {
                    if let Some(l) = p.life(c.context, arg(c, a), f.index, call) {
                        p.lives[l].used = true;
                    }
                }
            }
        }
    }
    for l in p.lives.iter().filter(|l| l.all && l.drawn && !l.used) {
        out.push(Finding {
            frame: l.frame,
            call: Some(l.call),
            rule: VG_PATH_ALL_CAPABILITIES.id,
            severity: Severity::Info,
            title: format!(
                "path {:#x} has every capability (VG_PATH_CAPABILITY_ALL) and is only drawn",
                l.path
            ),
            detail: "With every capability the implementation must keep what bounds, \
                     length, point-along-path, transform and interpolation queries need (the \
                     original segments and coordinates, often in float) beside its own \
                     drawing form, and cannot discard or compact them."
                .into(),
            fix: "Ask only for the capabilities the program uses \
                  (VG_PATH_CAPABILITY_APPEND_TO to build it, none to only draw it), or \
                  remove the others with vgRemovePathCapabilities once it is built."
                .into(),
            evidence: Evidence::calls([l.call]).with("path", format!("{:#x}", l.path)),
            cost: None,
        });
    }
}

/// The calls that wait for the VG pipeline to finish.
const VG_SYNC: [&str; 3] = ["vgFinish", "vgReadPixels", "vgGetPixels"];

/// `vg-sync-every-frame`: a call of [`VG_SYNC`] in every captured frame; one finding per
/// entry point, at its first frame.
fn sync_every_frame(s: &Session, out: &mut Vec<Finding>) {
    let frames = s.frames.len();
    if frames < EVERY_FRAME_MIN {
        return;
    }
    for sync in VG_SYNC {
        let mut first = None;
        let (mut calls, mut wall) = (0usize, 0u64);
        let mut every = true;
        for f in &s.frames {
            let mut here = false;
            for (i, c) in f.calls.iter().enumerate() {
                if name(s, c) == sync {
                    here = true;
                    calls += 1;
                    wall += c.duration_ns;
                    first.get_or_insert((f.index, i as u32));
                }
            }
            every &= here;
        }
        let Some((frame, call)) = first.filter(|_| every) else {
            continue;
        };
        out.push(Finding {
            frame,
            call: Some(call),
            rule: VG_SYNC_EVERY_FRAME.id,
            severity: Severity::Warning,
            title: format!(
                "{sync} in each of the {frames} frames ({}, {:.3} ms per frame on the calling \
                 thread)",
                plural(calls, "call"),
                wall as f64 / frames as f64 / 1e6
            ),
            detail: "The CPU stops until the VG pipeline has drawn everything queued, every \
                     frame, so the CPU and the GPU (or VG core) no longer overlap."
                .into(),
            fix: "Let eglSwapBuffers end the frame; read pixels back only when needed, or a \
                  frame later."
                .into(),
            evidence: {
                let mut e = Evidence::calls([call])
                    .with("frames", frames)
                    .with("wall_ns", wall);
                e.count = calls as u64;
                e
            },
            cost: Some(Cost {
                ns: wall / frames as u64,
                measured: format!("wall time of {sync} on the calling thread, per frame"),
            }),
        });
    }
}

#[cfg(test)]
mod tests {
    //! Each rule on small synthetic sessions: it fires on its trigger and stays quiet on the
    //! clean sequence beside it, built with the workspace's one session builder (its VG
    //! entry points join the function table on first call, as a capture's table holds them).

    use super::*;
    use crate::enums::gl;

    // The VG enums the tests' calls pass, as the calls record them (64-bit arguments).
    const FILL_RULE: u64 = vg::FILL_RULE as u64;
    const EVEN_ODD: u64 = vg::EVEN_ODD as u64;
    const NON_ZERO: u64 = vg::NON_ZERO as u64;
    const STROKE_LINE_WIDTH: u64 = vg::STROKE_LINE_WIDTH as u64;
    const CLEAR_COLOR: u64 = vg::CLEAR_COLOR as u64;
    const PAINT_TYPE: u64 = vg::PAINT_TYPE as u64;
    const PAINT_TYPE_COLOR: u64 = vg::PAINT_TYPE_COLOR as u64;
    use gpuheat_testkit::{FrameBuilder, SessionBuilder};

    type VgFrame<'a> = FrameBuilder<'a>;

    /// The checklist run on a session under construction.
    trait Findings {
        /// The findings of `rule`; every VG finding says why apart from what to do, and rests
        /// on evidence.
        fn findings(&self, rule: &str) -> Vec<Finding>;
    }

    impl Findings for SessionBuilder {
        fn findings(&self, rule: &str) -> Vec<Finding> {
            let s = self.clone().build();
            let found: Vec<Finding> = crate::checklist::check(&s, &crate::analyse(&s))
                .into_iter()
                .filter(|f| f.rule == rule)
                .collect();
            for f in &found {
                assert!(!f.detail.is_empty() && !f.fix.is_empty(), "{f:?}");
                assert!(
                    !f.evidence.calls.is_empty() && f.evidence.count > 0,
                    "{f:?}"
                );
            }
            found
        }
    }

    /// `vgDrawPath` of path `path`, version `serial`, covering `fragments` pixels of the
    /// frame's 64 × 64 map.
    fn draw_path(f: &mut VgFrame, path: u64, serial: u64, fragments: u32) -> u32 {
        let c = f.vg_draw_path(path, serial);
        f.cover_pixels(c, fragments);
        c
    }

    fn f32_arg(v: f32) -> u64 {
        u64::from(v.to_bits())
    }

    // vg_object_churn

    fn churn(f: &mut VgFrame) {
        f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 2], 7);
        f.made("vgCreatePaint", &[], 9);
        f.call("vgDrawPath", &[7, 2]);
        f.call("vgDestroyPaint", &[9]);
        f.call("vgDestroyPath", &[7]);
    }

    #[test]
    fn churn_fires_per_kind_when_every_frame_creates_and_destroys() {
        let vg = SessionBuilder::new().frame(churn).frame(churn).frame(churn);
        let found = vg.findings("vg-object-churn");
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].frame, 1);
        assert_eq!(found[0].call, Some(0));
        assert!(
            found[0]
                .title
                .starts_with("1 path created and destroyed per frame, in 3 of 3"),
            "{}",
            found[0].title
        );
        assert!(found[1].title.starts_with("1 paint "), "{}", found[1].title);
    }

    #[test]
    fn churn_allows_one_frame_in_five_without() {
        let clean = |f: &mut VgFrame| {
            f.call("vgDrawPath", &[7, 2]);
        };
        let vg = SessionBuilder::new()
            .frame(churn)
            .frame(churn)
            .frame(clean)
            .frame(churn)
            .frame(churn);
        assert_eq!(vg.findings("vg-object-churn").len(), 2);
        let vg = SessionBuilder::new()
            .frame(churn)
            .frame(clean)
            .frame(clean)
            .frame(churn)
            .frame(churn);
        assert!(vg.findings("vg-object-churn").is_empty());
    }

    #[test]
    fn churn_is_quiet_for_objects_made_once_and_for_one_frame() {
        let vg = SessionBuilder::new()
            .frame(|f| {
                f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 2], 7);
                f.call("vgDrawPath", &[7, 2]);
            })
            .frame(|f| {
                f.call("vgDrawPath", &[7, 2]);
            })
            .frame(|f| {
                f.call("vgDrawPath", &[7, 2]);
                f.call("vgDestroyPath", &[7]);
            });
        assert!(vg.findings("vg-object-churn").is_empty());
        assert!(SessionBuilder::new()
            .frame(churn)
            .findings("vg-object-churn")
            .is_empty());
    }

    // vg_image_reupload

    #[test]
    fn reupload_counts_repeats_of_earlier_data_and_their_bytes() {
        let vg = SessionBuilder::new()
            .frame(|f| {
                f.vg_upload(5, 16, 16, 0xABC);
                f.call("vgDrawImage", &[5]);
            })
            .frame(|f| {
                f.vg_upload(5, 16, 16, 0xABC);
            })
            .frame(|f| {
                f.vg_upload(5, 16, 16, 0xABC);
            });
        let found = vg.findings("vg-image-reupload");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].frame, found[0].call), (2, Some(0)));
        assert_eq!(found[0].severity, Severity::Warning);
        assert!(
            found[0]
                .title
                .starts_with("2 uploads of image data already uploaded, in 2 frames, 2048 bytes"),
            "{}",
            found[0].title
        );
    }

    #[test]
    fn reupload_is_quiet_when_every_upload_differs() {
        let vg = SessionBuilder::new()
            .frame(|f| {
                f.vg_upload(5, 16, 16, 1);
            })
            .frame(|f| {
                f.vg_upload(5, 16, 16, 2);
            });
        assert!(vg.findings("vg-image-reupload").is_empty());
    }

    #[test]
    fn upload_bytes_follow_the_format() {
        let c = |args: &[u64]| Call {
            func: 0,
            thread: 0,
            context: 0,
            begin_ns: 0,
            duration_ns: 0,
            cpu_ns: 0,
            args: args.to_vec(),
            ret: None,
            callsite: 0,
        };
        // VG_sRGB_565 | ARGB order bit, 10×3: 60 bytes; VG_BW_1, 10×3: 2 bytes a row.
        let sub = c(&[1, 0, 0, 3 | 0x40, 0, 0, 10, 3]);
        assert_eq!(upload_bytes("vgImageSubData", &sub), Some(60));
        let bw = c(&[0, 0, 12, 0, 0, 10, 3]);
        assert_eq!(upload_bytes("vgWritePixels", &bw), Some(6));
        let bad = c(&[0, 0, 99, 0, 0, 10, 3]);
        assert_eq!(upload_bytes("vgWritePixels", &bad), None);
    }

    // vg_tiny_complex_path

    /// A closed polygon of `n` points: MOVE_TO, n − 1 LINE_TO, CLOSE_PATH (absolute).
    fn polygon(n: usize) -> Vec<u8> {
        let mut s = vec![2u8];
        s.extend(std::iter::repeat_n(4u8, n - 1));
        s.push(0);
        s
    }

    #[test]
    fn a_complex_path_drawn_tiny_fires_once_per_frame_and_path() {
        // 64 drawing segments over 12 px, drawn 3 times.
        let vg = SessionBuilder::new()
            .vg_path(7, 1, 2, polygon(64))
            .frame(|f| {
                f.heat_map(64, 64);
                f.call("vgClear", &[0, 0, 64, 64]);
                for _ in 0..3 {
                    draw_path(f, 7, 1, 12);
                }
            });
        let found = vg.findings("vg-tiny-complex-path");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].call, Some(1));
        assert!(
            found[0]
                .title
                .starts_with("path 0x7 of 64 segments covers 12 px per draw, 0.19 px per segment (drawn 3 times)"),
            "{}",
            found[0].title
        );
    }

    #[test]
    fn tiny_paths_need_many_segments_few_pixels_and_the_data() {
        // 4 px per segment (256 over 64), 15 segments over 1 px, data unknown (serial 0),
        // serial without data: all quiet.
        let vg = SessionBuilder::new()
            .vg_path(7, 1, 2, polygon(64))
            .vg_path(8, 1, 2, polygon(15))
            .frame(|f| {
                f.heat_map(64, 64);
                draw_path(f, 7, 1, 256);
                draw_path(f, 8, 1, 1);
                draw_path(f, 7, 0, 1);
                draw_path(f, 7, 2, 1);
            });
        assert!(vg.findings("vg-tiny-complex-path").is_empty());
        // Without a heat map the pixels are unknown.
        let vg = SessionBuilder::new()
            .vg_path(7, 1, 2, polygon(64))
            .frame(|f| {
                f.vg_draw_path(7, 1);
            });
        assert!(vg.findings("vg-tiny-complex-path").is_empty());
    }

    #[test]
    fn tiny_path_pixels_come_from_the_gl_children_when_the_map_lists_them() {
        let vg = SessionBuilder::new()
            .vg_path(7, 1, 2, polygon(64))
            .frame(|f| {
                f.heat_map(64, 64);
                let d = f.vg_draw_path(7, 1);
                let child = f.call("glDrawElements", &[4, 300, gl::UNSIGNED_SHORT, 0]);
                f.vg_record(d).children.push(child);
                f.cover_pixels(child, 10);
                assert_eq!(d, 0);
            });
        assert_eq!(vg.findings("vg-tiny-complex-path").len(), 1);
    }

    // vg_redundant_state

    const MATRIX_PATH: u64 = vg::MATRIX_PATH_USER_TO_SURFACE as u64;
    const MATRIX_IMAGE: u64 = vg::MATRIX_IMAGE_USER_TO_SURFACE as u64;
    const TRANSLATE: [f32; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 10.0, 20.0, 1.0];

    /// Redundant calls of one frame of `calls` after a frame that set the values: the
    /// frame's call indices the rule counted.
    fn redundant_calls(
        setup: impl FnOnce(&mut VgFrame),
        calls: impl FnOnce(&mut VgFrame),
    ) -> Vec<u32> {
        let s = SessionBuilder::new().frame(setup).frame(calls).build();
        let mut state = VgState::default();
        let index = VgIndex::new(&s);
        let mut hits = Vec::new();
        for f in &s.frames {
            for (i, c) in f.calls.iter().enumerate() {
                let values = index
                    .calls
                    .get(&(f.index, i as u32))
                    .filter(|v| !v.values.is_empty())
                    .map(|v| v.values.as_slice());
                if state.step(name(&s, c), c, values) == Some(true) && f.index == 2 {
                    hits.push(i as u32);
                }
            }
        }
        hits
    }

    #[test]
    fn setters_with_the_current_value_are_redundant() {
        let hits = redundant_calls(
            |f| {
                f.call("vgSetPaint", &[9, 3]);
                f.call("vgSeti", &[FILL_RULE, EVEN_ODD]);
                f.call("vgSetf", &[STROKE_LINE_WIDTH, f32_arg(6.0)]);
                f.vg_values("vgSetfv", &[CLEAR_COLOR, 4, 0], &[0.0, 0.0, 0.0, 1.0]);
                f.call("vgSetColor", &[9, 0xFF00_00FF]);
                f.call("vgSetParameteri", &[9, PAINT_TYPE, PAINT_TYPE_COLOR]);
            },
            |f| {
                f.call("vgSetPaint", &[9, 1]); // 0: fill was 9
                f.call("vgSetPaint", &[10, 1]); // 1: changed
                f.call("vgSetPaint", &[9, 3]); // 2: fill changed back
                f.call("vgSeti", &[FILL_RULE, EVEN_ODD]); // 3
                f.call("vgSeti", &[FILL_RULE, NON_ZERO]); // 4: changed
                f.call("vgSetf", &[STROKE_LINE_WIDTH, f32_arg(6.0)]); // 5
                f.vg_values("vgSetfv", &[CLEAR_COLOR, 4, 0], &[0.0, 0.0, 0.0, 1.0]); // 6
                f.vg_values(
                    "vgSetParameterfv",
                    &[9, PAINT_COLOR, 4, 0],
                    &[1.0, 0.0, 0.0, 1.0],
                ); // 7: as vgSetColor
                f.call("vgSetColor", &[9, 0x00FF_00FF]); // 8: changed
                f.call("vgSetParameteri", &[9, PAINT_TYPE, PAINT_TYPE_COLOR]); // 9
                f.call("vgSetfv", &[CLEAR_COLOR, 4, 0]); // 10: values unknown
                f.call("vgSetfv", &[CLEAR_COLOR, 4, 0]); // 11: still unknown
            },
        );
        assert_eq!(hits, vec![0, 3, 5, 6, 7, 9]);
    }

    #[test]
    fn values_set_before_the_capture_are_unknown() {
        let hits = redundant_calls(
            |_| {},
            |f| {
                f.call("vgSetPaint", &[9, 1]);
                f.call("vgSeti", &[FILL_RULE, EVEN_ODD]);
                f.call("vgLoadIdentity", &[]);
                f.call("vgSetPaint", &[9, 1]); // 3: seen set at 0
            },
        );
        assert_eq!(hits, vec![3]);
    }

    #[test]
    fn matrices_are_tracked_per_matrix_mode() {
        let hits = redundant_calls(
            |f| {
                f.call("vgSeti", &[MATRIX_MODE, MATRIX_PATH]);
                f.call("vgLoadIdentity", &[]);
                f.call("vgTranslate", &[f32_arg(10.0), f32_arg(20.0)]);
            },
            |f| {
                f.vg_values("vgLoadMatrix", &[0], &TRANSLATE); // 0: the translate's product
                f.call("vgSeti", &[MATRIX_MODE, MATRIX_IMAGE]); // 1: changed
                f.vg_values("vgLoadMatrix", &[0], &TRANSLATE); // 2: image matrix unknown
                f.vg_values("vgLoadMatrix", &[0], &TRANSLATE); // 3
                f.call("vgSeti", &[MATRIX_MODE, MATRIX_PATH]); // 4: changed
                f.call("vgTranslate", &[f32_arg(-10.0), f32_arg(-20.0)]); // 5: to identity
                f.call("vgLoadIdentity", &[]); // 6
                f.call("vgScale", &[f32_arg(1.0), f32_arg(1.0)]); // 7: a no-op
                f.call("vgRotate", &[f32_arg(90.0)]); // 8
                f.call("vgLoadIdentity", &[]); // 9: changed
                f.call("vgLoadMatrix", &[0]); // 10: values not recorded
                f.call("vgLoadIdentity", &[]); // 11: matrix unknown
            },
        );
        assert_eq!(hits, vec![0, 3, 6, 7]);
    }

    #[test]
    fn redundant_state_fires_from_five_and_a_tenth_of_the_vg_state_calls() {
        let frame = |repeats: usize, others: u64| {
            move |f: &mut VgFrame| {
                for _ in 0..=repeats {
                    f.call("vgSetPaint", &[9, 1]);
                }
                for p in 0..others {
                    f.call("vgSeti", &[0x1200 + p, 1]);
                }
            }
        };
        let found = SessionBuilder::new()
            .frame(frame(5, 0))
            .findings("vg-redundant-state");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].call, Some(1));
        assert_eq!(
            found[0].title,
            "5 of 6 VG state calls set the value already set (vgSetPaint ×5)"
        );
        assert!(SessionBuilder::new()
            .frame(frame(4, 0))
            .findings("vg-redundant-state")
            .is_empty());
        // 5 of 50 fires, 5 of 51 not.
        assert_eq!(
            SessionBuilder::new()
                .frame(frame(5, 44))
                .findings("vg-redundant-state")
                .len(),
            1
        );
        assert!(SessionBuilder::new()
            .frame(frame(5, 45))
            .findings("vg-redundant-state")
            .is_empty());
    }

    #[test]
    fn alternating_paints_are_not_redundant() {
        let vg = SessionBuilder::new().frame(|f| {
            for _ in 0..10 {
                f.call("vgSetPaint", &[9, 1]);
                f.call("vgDrawPath", &[7, 2]);
                f.call("vgSetPaint", &[10, 1]);
                f.call("vgDrawPath", &[8, 2]);
            }
        });
        assert!(vg.findings("vg-redundant-state").is_empty());
    }

    #[test]
    fn a_destroyed_paints_handle_starts_afresh() {
        let hits = redundant_calls(
            |f| {
                f.call("vgSetPaint", &[9, 1]);
                f.call("vgSetColor", &[9, 0xFF]);
                f.call("vgDestroyPaint", &[9]);
                f.made("vgCreatePaint", &[], 9);
            },
            |f| {
                f.call("vgSetPaint", &[9, 1]);
                f.call("vgSetColor", &[9, 0xFF]);
            },
        );
        assert!(hits.is_empty(), "{hits:?}");
    }

    // vg_path_all_capabilities

    #[test]
    fn a_path_with_every_capability_only_drawn_fires_once() {
        let vg = SessionBuilder::new()
            .frame(|f| {
                f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 0xFFF], 7);
                f.call("vguRect", &[7, 0, 0, 0, 0]);
                f.call("vgDrawPath", &[7, 2]);
            })
            .frame(|f| {
                f.call("vgDrawPath", &[7, 2]);
            });
        let found = vg.findings("vg-path-all-capabilities");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].frame, found[0].call), (1, Some(0)));
        assert_eq!(found[0].severity, Severity::Info);
    }

    #[test]
    fn a_path_queried_or_made_with_fewer_capabilities_is_quiet() {
        let vg = SessionBuilder::new()
            .frame(|f| {
                f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 0xFFF], 7);
                f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 2], 8);
                f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 0xFFF], 9);
                f.call("vgDrawPath", &[7, 2]);
                f.call("vgDrawPath", &[8, 2]);
                f.call("vgDrawPath", &[9, 1]);
            })
            .frame(|f| {
                f.call("vgPathBounds", &[7, 0, 0, 0, 0]);
                f.call("vgAppendPath", &[8, 9]); // 9 is a source
            });
        assert!(vg.findings("vg-path-all-capabilities").is_empty());
        // Created with every capability, then cleared to APPEND_TO alone.
        let vg = SessionBuilder::new().frame(|f| {
            f.made("vgCreatePath", &[0, 3, f32_arg(1.0), 0, 0, 0, 0xFFF], 7);
            f.call("vgClearPath", &[7, 2]);
            f.call("vgDrawPath", &[7, 2]);
        });
        assert!(vg.findings("vg-path-all-capabilities").is_empty());
    }

    #[test]
    fn a_path_made_before_the_capture_is_known_by_its_recorded_capabilities() {
        let vg = SessionBuilder::new()
            .vg_path(7, 1, 0xFFF, polygon(4))
            .vg_path(8, 1, 2, polygon(4))
            .frame(|f| {
                f.heat_map(64, 64);
                f.call("vgClear", &[0, 0, 64, 64]);
                draw_path(f, 7, 1, 100);
                draw_path(f, 8, 1, 100);
            });
        let found = vg.findings("vg-path-all-capabilities");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].call, Some(1));
        assert!(
            found[0].title.starts_with("path 0x7 "),
            "{}",
            found[0].title
        );
    }

    // vg_sync_every_frame

    fn sync(f: &mut VgFrame) {
        f.call("vgDrawPath", &[7, 2]);
        let finish = f.call("vgFinish", &[]);
        let child = f.call("glFinish", &[]);
        f.vg_record(finish).children.push(child);
    }

    #[test]
    fn sync_in_every_frame_fires_once_and_not_as_a_gl_stall() {
        let vg = SessionBuilder::new().frame(sync).frame(sync).frame(sync);
        let found = vg.findings("vg-sync-every-frame");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].frame, found[0].call), (1, Some(1)));
        assert!(
            found[0]
                .title
                .starts_with("vgFinish in each of the 3 frames (3 calls, 0.001 ms per frame"),
            "{}",
            found[0].title
        );
        // The library's glFinish inside vgFinish is not the program's stall.
        assert!(vg.findings("pipeline-stall").is_empty());
    }

    #[test]
    fn sync_in_some_frames_or_one_frame_is_quiet() {
        let clean = |f: &mut VgFrame| {
            f.call("vgDrawPath", &[7, 2]);
        };
        let vg = SessionBuilder::new().frame(sync).frame(clean).frame(sync);
        assert!(vg.findings("vg-sync-every-frame").is_empty());
        assert!(SessionBuilder::new()
            .frame(sync)
            .findings("vg-sync-every-frame")
            .is_empty());
    }

    #[test]
    fn a_vg_librarys_gl_state_calls_are_not_counted_as_redundant() {
        // Each vgDrawPath binds the same GL state again; the program does not.
        let vg = SessionBuilder::new().frame(|f| {
            for _ in 0..20 {
                let d = f.call("vgDrawPath", &[7, 2]);
                let c = f.call("glUseProgram", &[3]);
                f.vg_record(d).children.push(c);
            }
        });
        assert!(vg.findings("redundant-state").is_empty());
    }

    // A clean frame sequence: nothing fires.
    #[test]
    fn a_clean_vg_scene_fires_no_vg_rule() {
        let mut vg =
            SessionBuilder::new()
                .vg_path(7, 1, 2, polygon(4))
                .vg_path(8, 1, 2, polygon(64));
        vg = vg.frame(|f| {
            f.made("vgCreatePaint", &[], 9);
            f.made("vgCreatePaint", &[], 10);
            f.call("vgSetPaint", &[11, 2]);
            f.vg_upload(5, 16, 16, 1);
        });
        for _ in 0..3 {
            vg = vg.frame(|f| {
                f.heat_map(64, 64);
                f.call("vgClear", &[0, 0, 64, 64]);
                f.call("vgSetPaint", &[9, 1]);
                draw_path(f, 7, 1, 1200);
                f.call("vgSetPaint", &[10, 1]);
                draw_path(f, 8, 1, 1257);
                f.call("vgDrawImage", &[5]);
            });
        }
        let s = vg.build();
        let all = crate::checklist::check(&s, &crate::analyse(&s));
        let vg_rules: Vec<&Finding> = all.iter().filter(|f| f.rule.starts_with("vg-")).collect();
        assert!(vg_rules.is_empty(), "{vg_rules:?}");
    }
}
