//! What one VG draw covered, recomputed on the host: the path decoded, tessellated with
//! `lyon` (fill in surface space, stroke in user space then mapped), the triangles sampled
//! at pixel centres, clipped to the surface and the scissor rectangles.

use gpuheat_session::{VgDraw, VgPath, VgPathDraw, VgStroke, MAX_HEAT_PIXELS};
use lyon_path::math::{Point, Transform};
use lyon_path::{Event, Path};
use lyon_tessellation::{
    BuffersBuilder, FillOptions, FillRule, FillTessellator, FillVertex, LineCap, LineJoin,
    StrokeOptions, StrokeTessellator, StrokeVertex, VertexBuffers,
};

use super::dash::dash;
use super::decode::decode;
use super::raster::{snap, Mask};

/// Flattening tolerance on the surface, in pixels: well under what pixel-centre sampling
/// can tell apart.
pub const TOLERANCE_PX: f32 = 1.0 / 20.0;

// `VgPathDraw::paint_modes` bits are `VG_STROKE_PATH` and `VG_FILL_PATH`; caps other than
// round and square are butt, joins other than round and bevel miter.
use crate::enums::vg::{CAP_ROUND, CAP_SQUARE, EVEN_ODD, JOIN_BEVEL, JOIN_ROUND, NON_ZERO};
pub(crate) use crate::enums::vg::{FILL_PATH as FILL, STROKE_PATH as STROKE};

/// The pixels one VG draw covered, and the triangles it was recomputed from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Coverage {
    /// The covered pixels' bounding box: x0, y0, x1, y1 (exclusive), GL window
    /// coordinates (origin bottom left); all 0 when nothing was covered.
    pub bbox: [u32; 4],
    /// `c(p)` per pixel of `bbox`, row-major, bottom row first: 1 for the fill, 1 for the
    /// stroke (each a union however many triangles overlap), so 0, 1 or 2.
    pub counts: Vec<u8>,
    /// The triangles, surface coordinates, 3 vertices each (fill then stroke), before
    /// clipping.
    pub triangles: Vec<[f32; 2]>,
    /// The triangles' extent on the surface (min x, min y, max x, max y) before clipping;
    /// `None` without triangles.
    pub surface_bounds: Option<[f32; 4]>,
    /// The path's data was not known: the box `vgPathTransformedBounds` gave stands in for
    /// it, counted once per pixel.
    pub approximate: bool,
}

impl Coverage {
    /// `N = Σ_p c(p)`: the fragments the draw produced.
    pub fn fragments(&self) -> u64 {
        self.counts.iter().map(|&c| u64::from(c)).sum()
    }
}

/// What `draw` covered on a surface of `surface` (width, height) pixels; `path` is the data
/// of the drawn path's version, when known. Err with a one-line reason when the coverage
/// cannot be known (the path's data unknown and no bounds given, an inconsistent path
/// record, a surface too large). Non-finite coordinates or matrices draw nothing.
pub fn coverage(
    draw: &VgDraw,
    path: Option<&VgPath>,
    surface: [u32; 2],
) -> Result<Coverage, String> {
    let pixels = u64::from(surface[0]) * u64::from(surface[1]);
    if pixels > MAX_HEAT_PIXELS {
        return Err(format!(
            "surface {}x{} exceeds {MAX_HEAT_PIXELS} pixels",
            surface[0], surface[1]
        ));
    }
    let clip = [0, 0, i64::from(surface[0]), i64::from(surface[1])];
    match draw {
        VgDraw::Rect([x, y, w, h]) => {
            let (x0, y0) = (i64::from(*x), i64::from(*y));
            let (x1, y1) = (x0 + i64::from((*w).max(0)), y0 + i64::from((*h).max(0)));
            let r = [x0.max(0), y0.max(0), x1.min(clip[2]), y1.min(clip[3])];
            let mut mask = Mask::new(region(r));
            mask.bits.fill(1);
            let tris = quad([x0, y0, x1, y1].map(|v| v as f32));
            Ok(finish(&[mask], tris, false))
        }
        VgDraw::Image(d) => {
            let corners = [
                [0.0, 0.0],
                [d.width as f32, 0.0],
                [d.width as f32, d.height as f32],
            ]
            .into_iter()
            .chain([[0.0, d.height as f32]])
            .map(|p| project(&d.matrix, p))
            .collect::<Option<Vec<_>>>();
            // A corner at or behind w = 0 (OpenVG leaves that undefined) draws nothing.
            let Some(c) = corners else {
                return Ok(Coverage::default());
            };
            let tris = vec![c[0], c[1], c[2], c[0], c[2], c[3]];
            let masks = [rasterize(&tris, clip, surface)];
            Ok(finish(&masks, tris, false))
        }
        VgDraw::Path(d) => path_coverage(d, path, clip, surface),
    }
}

fn path_coverage(
    d: &VgPathDraw,
    path: Option<&VgPath>,
    clip: [i64; 4],
    size: [u32; 2],
) -> Result<Coverage, String> {
    let clip = scissor_clip(clip, &d.scissor);
    let Some(data) = path else {
        let Some(b) = d.bounds else {
            return Err(format!(
                "path {:#x}: its data is unknown (built before the agent came, or over its budget) and it lacks VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS for a box",
                d.path
            ));
        };
        if b.iter().any(|v| !v.is_finite()) {
            return Ok(Coverage {
                approximate: true,
                ..Coverage::default()
            });
        }
        let tris = quad(b);
        let mut mask = rasterize(&tris, clip, size);
        if !d.scissor.is_empty() {
            mask.scissor(&d.scissor);
        }
        return Ok(finish(&[mask], tris, true));
    };
    let Some(user) = decode(data)? else {
        return Ok(Coverage::default());
    };
    if d.matrix[..8].iter().any(|v| !v.is_finite()) {
        return Ok(Coverage::default());
    }
    // The path-user-to-surface matrix is affine in OpenVG (its last row is forced to
    // 0, 0, 1), so only its first two rows count.
    let m = &d.matrix;
    let to_surface = Transform::new(m[0], m[1], m[3], m[4], m[6], m[7]);
    let mut tris = Vec::new();
    let mut masks = Vec::new();
    if d.paint_modes & FILL != 0 {
        let t = fill(&user.clone().transformed(&to_surface), d.fill_rule)?;
        masks.push(rasterize(&t, clip, size));
        tris.extend(t);
    }
    if d.paint_modes & STROKE != 0 {
        let t = stroke(&user, &d.stroke, m)?;
        masks.push(rasterize(&t, clip, size));
        tris.extend(t);
    }
    if !d.scissor.is_empty() {
        for mask in &mut masks {
            mask.scissor(&d.scissor);
        }
    }
    Ok(finish(&masks, tris, false))
}

/// The fill's triangles (surface space).
fn fill(path: &Path, rule: u32) -> Result<Vec<[f32; 2]>, String> {
    if !finite(path) {
        return Ok(Vec::new());
    }
    let options = FillOptions::tolerance(TOLERANCE_PX).with_fill_rule(match rule {
        NON_ZERO => FillRule::NonZero,
        EVEN_ODD => FillRule::EvenOdd,
        // OpenVG's default; the API accepts no other value.
        _ => FillRule::EvenOdd,
    });
    let mut mesh: VertexBuffers<[f32; 2], u32> = VertexBuffers::new();
    let mut out = BuffersBuilder::new(&mut mesh, |v: FillVertex| v.position().to_array());
    guarded("fill", || {
        FillTessellator::new().tessellate_path(path, &options, &mut out)
    })?;
    Ok(mesh
        .indices
        .iter()
        .map(|&i| mesh.vertices[i as usize])
        .collect())
}

/// The stroke's triangles: tessellated in user space (widths, caps, joins and dashes are
/// user units), then mapped to the surface by `m`.
fn stroke(path: &Path, s: &VgStroke, m: &[f32; 9]) -> Result<Vec<[f32; 2]>, String> {
    let scale = max_scale(m);
    if !(s.width > 0.0 && s.width.is_finite()) || scale <= 0.0 || !finite(path) {
        return Ok(Vec::new());
    }
    // A tolerance of TOLERANCE_PX on the surface, whatever the matrix's scale.
    let tolerance = (f64::from(TOLERANCE_PX) / scale) as f32;
    let dashed;
    let path = match dash(path, &s.dash, s.dash_phase, tolerance) {
        Some(d) => {
            dashed = d;
            &dashed
        }
        None => path,
    };
    let cap = match s.cap {
        CAP_ROUND => LineCap::Round,
        CAP_SQUARE => LineCap::Square,
        _ => LineCap::Butt,
    };
    let join = match s.join {
        JOIN_ROUND => LineJoin::Round,
        JOIN_BEVEL => LineJoin::Bevel,
        // lyon's miter turns into a bevel past the limit, as OpenVG's does.
        _ => LineJoin::Miter,
    };
    let miter = if s.miter_limit.is_finite() {
        s.miter_limit.max(StrokeOptions::MINIMUM_MITER_LIMIT)
    } else {
        StrokeOptions::DEFAULT_MITER_LIMIT
    };
    let options = StrokeOptions::tolerance(tolerance)
        .with_line_width(s.width)
        .with_line_cap(cap)
        .with_line_join(join)
        .with_miter_limit(miter);
    let mut mesh: VertexBuffers<[f32; 2], u32> = VertexBuffers::new();
    let mut out = BuffersBuilder::new(&mut mesh, |v: StrokeVertex| v.position().to_array());
    guarded("stroke", || {
        StrokeTessellator::new().tessellate_path(path, &options, &mut out)
    })?;
    Ok(mesh
        .indices
        .iter()
        .map(|&i| {
            let [x, y] = mesh.vertices[i as usize];
            [m[0] * x + m[3] * y + m[6], m[1] * x + m[4] * y + m[7]]
        })
        .collect())
}

/// Runs a tessellation, its error or a panic inside `lyon` (paths come from any program,
/// and one odd path must not take the report down) turned into a one-line reason.
fn guarded<E: std::fmt::Debug>(
    what: &str,
    run: impl FnOnce() -> Result<(), E>,
) -> Result<(), String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("{what} tessellation failed: {e:?}")),
        Err(_) => Err(format!("{what} tessellation failed inside lyon")),
    }
}

/// The largest factor by which the 2 × 2 part of `m` stretches a length (its largest
/// singular value).
fn max_scale(m: &[f32; 9]) -> f64 {
    let [a, c, _, b, d, ..] = m.map(f64::from);
    let t = a * a + b * b + c * c + d * d;
    let det = a * d - b * c;
    ((t + (t * t - 4.0 * det * det).max(0.0).sqrt()) / 2.0).sqrt()
}

/// Whether every point of `path` is finite.
fn finite(path: &Path) -> bool {
    path.iter().all(|e| {
        let ok = |p: Point| p.x.is_finite() && p.y.is_finite();
        match e {
            Event::Begin { at } => ok(at),
            Event::Line { to, .. } => ok(to),
            Event::Quadratic { ctrl, to, .. } => ok(ctrl) && ok(to),
            Event::Cubic {
                ctrl1, ctrl2, to, ..
            } => ok(ctrl1) && ok(ctrl2) && ok(to),
            Event::End { .. } => true,
        }
    })
}

/// `p` through the (possibly projective) matrix `m`, divided by w; `None` when w ≤ 0 or
/// the result is not finite.
fn project(m: &[f32; 9], p: [f32; 2]) -> Option<[f32; 2]> {
    let [x, y] = p.map(f64::from);
    let m = m.map(f64::from);
    let w = m[2] * x + m[5] * y + m[8];
    let sx = (m[0] * x + m[3] * y + m[6]) / w;
    let sy = (m[1] * x + m[4] * y + m[7]) / w;
    let out = [sx as f32, sy as f32];
    (w > 0.0 && out.iter().all(|v| v.is_finite())).then_some(out)
}

/// The two triangles of box `b` (x0, y0, x1, y1).
fn quad(b: [f32; 4]) -> Vec<[f32; 2]> {
    let [x0, y0, x1, y1] = b;
    vec![[x0, y0], [x1, y0], [x1, y1], [x0, y0], [x1, y1], [x0, y1]]
}

/// `r` with its far corner at least its near one.
fn region(r: [i64; 4]) -> [i64; 4] {
    [r[0], r[1], r[2].max(r[0]), r[3].max(r[1])]
}

/// The clip window narrowed to the scissor rectangles' extent, when there are any.
fn scissor_clip(clip: [i64; 4], rects: &[[i32; 4]]) -> [i64; 4] {
    if rects.is_empty() {
        return clip;
    }
    let mut e = [i64::MAX, i64::MAX, i64::MIN, i64::MIN];
    for s in rects {
        let (x, y) = (i64::from(s[0]), i64::from(s[1]));
        let (w, h) = (i64::from(s[2].max(0)), i64::from(s[3].max(0)));
        e = [e[0].min(x), e[1].min(y), e[2].max(x + w), e[3].max(y + h)];
    }
    region([
        clip[0].max(e[0]),
        clip[1].max(e[1]),
        clip[2].min(e[2]),
        clip[3].min(e[3]),
    ])
}

/// A surface point in the clip space of a viewport covering the whole surface of `size`:
/// how the triangles are recorded as geometry.
pub(crate) fn to_clip(v: [f32; 2], size: [u32; 2]) -> [f32; 4] {
    let [w, h] = size.map(|v| v.max(1) as f32);
    [v[0] / w * 2.0 - 1.0, v[1] / h * 2.0 - 1.0, 0.0, 1.0]
}

/// A mask over the part of `clip` the triangles can reach, with the triangles sampled.
/// Each vertex goes through clip space ([`to_clip`]) and back as `crate::measure::pick` takes it,
/// so a pick rasterizing the recorded geometry finds exactly the pixels painted here.
fn rasterize(tris: &[[f32; 2]], clip: [i64; 4], size: [u32; 2]) -> Mask {
    let Some(b) = extent(tris) else {
        return Mask::new([0, 0, 0, 0]);
    };
    // Pixels whose centres could be inside: floor(min − ½) + 1 … ceil(max − ½), clamped
    // first so huge coordinates stay in range.
    let lim = |v: f32, lo: i64, hi: i64| f64::from(v).clamp(lo as f64 - 2.0, hi as f64 + 2.0);
    let r = region([
        ((lim(b[0], clip[0], clip[2]) - 0.5).floor() as i64).max(clip[0]),
        ((lim(b[1], clip[1], clip[3]) - 0.5).floor() as i64).max(clip[1]),
        ((lim(b[2], clip[0], clip[2]) + 0.5).ceil() as i64).min(clip[2]),
        ((lim(b[3], clip[1], clip[3]) + 0.5).ceil() as i64).min(clip[3]),
    ]);
    let mut mask = Mask::new(r);
    let viewport = [0, 0, size[0] as i32, size[1] as i32];
    let window =
        |v: [f32; 2]| crate::measure::pick::window_xy(viewport, to_clip(v, size)).and_then(snap);
    for t in tris.chunks_exact(3) {
        if let [Some(a), Some(b), Some(c)] = [t[0], t[1], t[2]].map(window) {
            mask.triangle([a, b, c]);
        }
    }
    mask
}

/// min x, min y, max x, max y of `points`; `None` when there are none.
fn extent(points: &[[f32; 2]]) -> Option<[f32; 4]> {
    let mut b = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    for p in points {
        b = [
            b[0].min(p[0]),
            b[1].min(p[1]),
            b[2].max(p[0]),
            b[3].max(p[1]),
        ];
    }
    (b[0] <= b[2] && b[1] <= b[3]).then_some(b)
}

/// Adds the masks up into per-pixel counts over their covered pixels' bounding box.
fn finish(masks: &[Mask], triangles: Vec<[f32; 2]>, approximate: bool) -> Coverage {
    let mut bbox = [i64::MAX, i64::MAX, i64::MIN, i64::MIN];
    for m in masks {
        let w = m.region[2] - m.region[0];
        for (i, _) in m.bits.iter().enumerate().filter(|(_, &b)| b != 0) {
            let (x, y) = (m.region[0] + i as i64 % w, m.region[1] + i as i64 / w);
            bbox = [
                bbox[0].min(x),
                bbox[1].min(y),
                bbox[2].max(x + 1),
                bbox[3].max(y + 1),
            ];
        }
    }
    let surface_bounds = extent(&triangles);
    if bbox[0] >= bbox[2] {
        return Coverage {
            triangles,
            surface_bounds,
            approximate,
            ..Coverage::default()
        };
    }
    let bw = bbox[2] - bbox[0];
    let mut counts = vec![0u8; (bw * (bbox[3] - bbox[1])) as usize];
    for m in masks {
        let w = m.region[2] - m.region[0];
        for (i, _) in m.bits.iter().enumerate().filter(|(_, &b)| b != 0) {
            let (x, y) = (m.region[0] + i as i64 % w, m.region[1] + i as i64 / w);
            counts[((y - bbox[1]) * bw + (x - bbox[0])) as usize] += 1;
        }
    }
    Coverage {
        // Inside the surface, whose sides fit u32.
        bbox: bbox.map(|v| v as u32),
        counts,
        triangles,
        surface_bounds,
        approximate,
    }
}

#[cfg(test)]
#[path = "coverage_tests.rs"]
mod tests;
