//! Which draws a pixel's heat came from.
//!
//! A heat map stores the summed map `heat(p) = Σ_d c_d(p)·T_d/N_d` and, per draw, its time
//! `T_d`, its fragment total `N_d` and its bounding box; it does not store `c_d(p)`, the
//! fragments draw `d` produced at `p` (one map per draw would cost a frame's worth of memory
//! per draw). `c_d(p)` is recovered from the draw's recorded post-transform geometry
//! ([`gpuheat_session::FrameGeometry`]): the number of its triangles whose rasterization
//! covers `p`, decided with the same rules the GPU uses (vertices snapped to 1/256 pixel, pixel
//! centres sampled, the top-left rule on shared edges, so the two triangles of a quad count a
//! pixel on their diagonal once). A draw without geometry counts as covering every pixel of
//! its bounding box once, and the pick says it is an estimate ([`PickMethod::BoundingBox`]).

use gpuheat_session::{DrawCoverage, DrawGeometry, FrameGeometry, HeatMap, Session};
use serde::Serialize;

/// Sub-pixel precision of the snapped vertex positions: 8 bits, as llvmpipe and most GPUs.
const SUBPIXEL: f64 = 256.0;

/// How the draws' coverage of the pixel was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PickMethod {
    /// Every draw in the list had recorded geometry: coverage is counted triangle by triangle.
    Geometry,
    /// At least one draw had no geometry and was assumed to cover its bounding box once.
    BoundingBox,
}

/// One draw's part of a pixel's heat.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PixelShare {
    /// Index of the draw in its frame's calls.
    pub call: u32,
    /// Fragments the draw produced at the pixel, `c_d(p)`.
    pub fragments: u32,
    /// The draw's heat at the pixel, `c_d(p)·T_d/N_d`, in ns.
    pub heat_ns: f64,
    /// `heat_ns` over the sum of the listed draws' `heat_ns`.
    pub share: f64,
}

/// The draws that touched one pixel, ranked by their share of its heat.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PixelPick {
    /// Column of the pixel, from the left: GL window coordinates (origin bottom left), as in
    /// [`HeatMap`].
    pub x: u32,
    /// Row of the pixel, from the bottom.
    pub y: u32,
    /// The measured heat of the pixel, from the map, in ns.
    pub heat_ns: f64,
    /// The measured fragments at the pixel, from the map: `Σ_d c_d(p)`.
    pub overdraw: u32,
    /// Highest share first; ties in call order.
    pub draws: Vec<PixelShare>,
    /// Whether coverage came from geometry for every draw or from a bounding box for some.
    pub method: PickMethod,
}

/// The heat map of `frame`, when the session has one.
pub fn heat_map(s: &Session, frame: u64) -> Option<&HeatMap> {
    s.heat.iter().find(|m| m.frame == frame)
}

/// The geometry recorded for the frame a heat map paints.
pub fn geometry_for<'a>(s: &'a Session, map: &HeatMap) -> Option<&'a FrameGeometry> {
    s.geometry
        .iter()
        .find(|g| g.frame == map.frame && g.context == map.context)
}

/// The draws of `frame` that produced fragments at pixel (`x`, `y`), ranked by their share of
/// its heat; `None` when the frame has no heat map or the pixel is outside it.
pub fn pick(s: &Session, frame: u64, x: u32, y: u32) -> Option<PixelPick> {
    let map = heat_map(s, frame)?;
    if x >= map.width || y >= map.height {
        return None;
    }
    let i = y as usize * map.width as usize + x as usize;
    let geometry = geometry_for(s, map);
    let mut method = PickMethod::Geometry;
    let mut draws = Vec::new();
    for d in map
        .draws
        .iter()
        .filter(|d| d.fragments > 0 && in_bbox(d, x, y))
    {
        let fragments = match geometry.and_then(|g| g.draws.iter().find(|g| g.call == d.call)) {
            Some(g) => coverage(g, x, y),
            None => {
                method = PickMethod::BoundingBox;
                1
            }
        };
        if fragments == 0 {
            continue;
        }
        draws.push(PixelShare {
            call: d.call,
            fragments,
            heat_ns: f64::from(fragments) * d.time_ns as f64 / d.fragments as f64,
            share: 0.0,
        });
    }
    let total: f64 = draws.iter().map(|d| d.heat_ns).sum();
    for d in &mut draws {
        d.share = if total > 0.0 { d.heat_ns / total } else { 0.0 };
    }
    draws.sort_by(|a, b| b.heat_ns.total_cmp(&a.heat_ns).then(a.call.cmp(&b.call)));
    Some(PixelPick {
        x,
        y,
        heat_ns: f64::from(map.heat[i]),
        overdraw: map.overdraw[i],
        draws,
        method,
    })
}

fn in_bbox(d: &DrawCoverage, x: u32, y: u32) -> bool {
    let [x0, y0, x1, y1] = d.bbox;
    x0 <= x && x < x1 && y0 <= y && y < y1
}

/// Window coordinates (GL: origin bottom left, in pixels) of a clip-space position drawn with
/// `viewport`; `None` behind the eye (w ≤ 0), where the GPU would have clipped.
pub fn window_xy(viewport: [i32; 4], clip: [f32; 4]) -> Option<[f64; 2]> {
    let w = f64::from(clip[3]);
    if w <= 0.0 || !w.is_finite() {
        return None;
    }
    let [vx, vy, vw, vh] = viewport.map(f64::from);
    let nx = f64::from(clip[0]) / w;
    let ny = f64::from(clip[1]) / w;
    Some([vx + (nx + 1.0) * 0.5 * vw, vy + (ny + 1.0) * 0.5 * vh])
}

/// Fragments a draw's triangles produce at pixel (`x`, `y`): how many of them cover its
/// centre. Points and lines are not counted (their footprint depends on state not recorded).
pub fn coverage(g: &DrawGeometry, x: u32, y: u32) -> u32 {
    if g.primitive != 4 {
        return 0;
    }
    // Pixel centre in sub-pixel units: (x + 0.5) · 256.
    let p = [
        (i64::from(x) * 2 + 1) * (SUBPIXEL as i64 / 2),
        (i64::from(y) * 2 + 1) * (SUBPIXEL as i64 / 2),
    ];
    let mut n = 0;
    for t in g.positions.chunks_exact(3) {
        let snapped = [t[0], t[1], t[2]].map(|v| window_xy(g.viewport, v).map(snap));
        if let [Some(a), Some(b), Some(c)] = snapped {
            if covers(a, b, c, p) {
                n += 1;
            }
        }
    }
    n
}

fn snap(v: [f64; 2]) -> [i64; 2] {
    v.map(|c| (c * SUBPIXEL).round() as i64)
}

/// Whether triangle (a, b, c) covers sample point p, with the top-left fill rule so a point
/// on an edge shared by two triangles belongs to exactly one.
fn covers(a: [i64; 2], b: [i64; 2], c: [i64; 2], p: [i64; 2]) -> bool {
    let area = cross(a, b, c);
    if area == 0 {
        return false;
    }
    // Counter-clockwise (y up) order, so "inside" is the positive side of every edge.
    let (a, b, c) = if area > 0 { (a, b, c) } else { (a, c, b) };
    [(a, b), (b, c), (c, a)].iter().all(|&(e0, e1)| {
        let w = cross(e0, e1, p);
        w > 0 || (w == 0 && top_left(e0, e1))
    })
}

/// (b - a) × (p - a).
fn cross(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> i64 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// For a counter-clockwise triangle with y up: a left edge runs downwards, a top edge runs
/// right to left.
fn top_left(a: [i64; 2], b: [i64; 2]) -> bool {
    let d = [b[0] - a[0], b[1] - a[1]];
    d[1] < 0 || (d[1] == 0 && d[0] < 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A w×h-pixel quad at (x0, y0) in a 64×64 viewport, as two triangles sharing a diagonal,
    /// in clip space.
    fn quad(x0: f32, y0: f32, w: f32, h: f32) -> DrawGeometry {
        let clip = |x: f32, y: f32| [x / 32.0 - 1.0, y / 32.0 - 1.0, 0.0, 1.0];
        let (a, b, c, d) = (
            clip(x0, y0),
            clip(x0 + w, y0),
            clip(x0, y0 + h),
            clip(x0 + w, y0 + h),
        );
        DrawGeometry {
            call: 0,
            primitive: 4,
            positions: vec![a, b, c, c, b, d],
            dropped_vertices: 0,
            viewport: [0, 0, 64, 64],
        }
    }

    #[test]
    fn a_quad_covers_each_of_its_pixels_once() {
        // The count the GPU gives: a pixel-aligned w×h quad produces w·h fragments, one each,
        // including the pixels whose centres lie on the shared diagonal.
        let g = quad(8.0, 4.0, 16.0, 16.0);
        let mut total = 0;
        for y in 0..64 {
            for x in 0..64 {
                let c = coverage(&g, x, y);
                assert!(c <= 1, "pixel {x},{y} counted {c} times");
                let inside = (8..24).contains(&x) && (4..20).contains(&y);
                assert_eq!(c == 1, inside, "pixel {x},{y}");
                total += c;
            }
        }
        assert_eq!(total, 16 * 16);
    }

    #[test]
    fn behind_the_eye_is_not_covered() {
        let mut g = quad(0.0, 0.0, 64.0, 64.0);
        for v in &mut g.positions {
            v[3] = -1.0;
        }
        assert_eq!(coverage(&g, 10, 10), 0);
    }
}
