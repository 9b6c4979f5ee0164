//! Tests of [`super::coverage`] on hand-built draws.

use super::*;
use crate::enums::vg::{CAP_BUTT, JOIN_MITER};
use gpuheat_session::VgImageDraw;
use std::f64::consts::PI;

pub(crate) const IDENTITY: [f32; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
const SURFACE: [u32; 2] = [128, 128];

pub(crate) fn vg_path(segments: &[u8], coords: &[f32]) -> VgPath {
    VgPath {
        context: 1,
        path: 7,
        serial: 1,
        datatype: 3,
        capabilities: 0,
        segments: segments.to_vec(),
        coords: coords.to_vec(),
    }
}

pub(crate) fn solid(width: f32, cap: u32) -> VgStroke {
    VgStroke {
        width,
        cap,
        join: JOIN_MITER,
        miter_limit: 4.0,
        dash: Vec::new(),
        dash_phase: 0.0,
    }
}

pub(crate) fn path_draw(paint_modes: u32, matrix: [f32; 9], stroke: VgStroke) -> VgPathDraw {
    VgPathDraw {
        path: 7,
        serial: 1,
        paint_modes,
        matrix,
        fill_rule: NON_ZERO,
        stroke,
        bounds: None,
        scissor: Vec::new(),
    }
}

fn cover(d: &VgPathDraw, p: &VgPath) -> Coverage {
    coverage(&VgDraw::Path(d.clone()), Some(p), SURFACE).unwrap()
}

fn fill(p: &VgPath) -> Coverage {
    cover(&path_draw(FILL, IDENTITY, solid(1.0, CAP_BUTT)), p)
}

/// vguRect(x, y, w, h): MOVE_TO, HLINE_TO, VLINE_TO, HLINE_TO, CLOSE_PATH.
pub(crate) fn rect(x: f32, y: f32, w: f32, h: f32) -> VgPath {
    vg_path(&[2, 6, 8, 6, 0], &[x, y, x + w, y + h, x])
}

/// The count at surface pixel (x, y), 0 outside the box.
fn at(c: &Coverage, x: u32, y: u32) -> u8 {
    let b = c.bbox;
    if x < b[0] || y < b[1] || x >= b[2] || y >= b[3] {
        return 0;
    }
    c.counts[((y - b[1]) * (b[2] - b[0]) + (x - b[0])) as usize]
}

#[test]
fn a_vgu_rect_covers_its_pixels_exactly() {
    let c = fill(&rect(10.0, 20.0, 30.0, 40.0));
    assert_eq!(c.fragments(), 1200);
    assert_eq!(c.bbox, [10, 20, 40, 60]);
    assert!(c.counts.iter().all(|&v| v == 1));
    assert_eq!(c.surface_bounds, Some([10.0, 20.0, 40.0, 60.0]));
    assert!(!c.approximate);
}

#[test]
fn a_vgu_ellipse_circle_covers_pi_r_squared() {
    // vguEllipse(cx, cy, 2r, 2r): MOVE_TO (cx+r, cy), SCCWARC_TO (r, r, 0, cx−r, cy),
    // SCCWARC_TO (r, r, 0, cx+r, cy), CLOSE_PATH.
    let (cx, cy, r) = (64.0f32, 60.0f32, 50.0f32);
    let p = vg_path(
        &[2, 18, 18, 0],
        &[cx + r, cy, r, r, 0.0, cx - r, cy, r, r, 0.0, cx + r, cy],
    );
    let c = fill(&p);
    let want = PI * f64::from(r * r);
    let got = c.fragments() as f64;
    eprintln!(
        "circle r=50: {got} px, pi r^2 = {want:.1}, {:+.3}%",
        (got / want - 1.0) * 100.0
    );
    assert!((got / want - 1.0).abs() < 0.01, "{got} vs {want}");
    assert_eq!(c.bbox, [14, 10, 114, 110]);
}

#[test]
fn relative_and_smooth_segments_cover_like_their_absolute_spelling() {
    // The same rectangle with relative segments.
    let rel = vg_path(&[3, 7, 9, 7, 0], &[10.0, 20.0, 30.0, 40.0, -30.0]);
    assert_eq!(
        fill(&rel).counts,
        fill(&rect(10.0, 20.0, 30.0, 40.0)).counts
    );
    // A wave of a quad and a smooth quad, closed: the same as the explicit quads.
    let smooth = vg_path(
        &[2, 10, 14, 4, 0],
        &[10.0, 40.0, 30.0, 80.0, 50.0, 40.0, 90.0, 40.0, 90.0, 10.0],
    );
    let explicit = vg_path(
        &[2, 10, 10, 4, 0],
        &[
            10.0, 40.0, 30.0, 80.0, 50.0, 40.0, 70.0, 0.0, 90.0, 40.0, 90.0, 10.0,
        ],
    );
    let (a, b) = (fill(&smooth), fill(&explicit));
    assert!(a.fragments() > 1000);
    assert_eq!((a.bbox, a.counts), (b.bbox, b.counts));
}

#[test]
fn a_pentagram_is_hollow_under_even_odd_and_full_under_non_zero() {
    // Five points on a circle of radius 40 around (64, 64), joined every second one.
    let mut coords = Vec::new();
    for k in [0, 2, 4, 1, 3] {
        let a = PI / 2.0 + f64::from(k) * 2.0 * PI / 5.0;
        coords.extend([
            (64.0 + 40.0 * a.cos()) as f32,
            (64.0 + 40.0 * a.sin()) as f32,
        ]);
    }
    let p = vg_path(&[2, 4, 4, 4, 4, 0], &coords);
    let mut d = path_draw(FILL, IDENTITY, solid(1.0, CAP_BUTT));
    d.fill_rule = EVEN_ODD;
    let even_odd = cover(&d, &p);
    d.fill_rule = NON_ZERO;
    let non_zero = cover(&d, &p);
    // The centre, inside the inner pentagon (radius ≈ 15).
    assert_eq!(at(&even_odd, 64, 64), 0);
    assert_eq!(at(&non_zero, 64, 64), 1);
    // A point's tip is covered either way.
    assert_eq!(at(&even_odd, 64, 100), 1);
    assert_eq!(at(&non_zero, 64, 100), 1);
    let hole = non_zero.fragments() - even_odd.fragments();
    eprintln!(
        "pentagram: non-zero {} px, even-odd {} px, hole {hole} px",
        non_zero.fragments(),
        even_odd.fragments()
    );
    assert!(hole > 500, "{hole}");
}

#[test]
fn a_stroked_line_covers_length_times_width_plus_its_caps() {
    let line = vg_path(&[2, 4], &[10.0, 50.0, 110.0, 50.0]);
    let butt = cover(&path_draw(STROKE, IDENTITY, solid(6.0, CAP_BUTT)), &line);
    assert_eq!(butt.fragments(), 600);
    assert_eq!(butt.bbox, [10, 47, 110, 53]);
    let square = cover(&path_draw(STROKE, IDENTITY, solid(6.0, CAP_SQUARE)), &line);
    assert_eq!(square.fragments(), 636);
    let round = cover(&path_draw(STROKE, IDENTITY, solid(6.0, CAP_ROUND)), &line);
    let want = 600.0 + PI * 9.0;
    eprintln!(
        "stroke 100 x 6: butt {} px, square {} px, round {} px (600 + 9 pi = {want:.1})",
        butt.fragments(),
        square.fragments(),
        round.fragments()
    );
    assert!((round.fragments() as f64 - want).abs() < 8.0);
    // Filling a line covers nothing.
    assert_eq!(fill(&line).fragments(), 0);
}

#[test]
fn a_dashed_line_covers_its_dashes() {
    let line = vg_path(&[2, 4], &[10.0, 50.0, 110.0, 50.0]);
    let mut s = solid(6.0, CAP_BUTT);
    s.dash = vec![10.0, 10.0];
    let c = cover(&path_draw(STROKE, IDENTITY, s.clone()), &line);
    assert_eq!(c.fragments(), 300);
    assert_eq!(at(&c, 15, 50), 1);
    assert_eq!(at(&c, 25, 50), 0);
    // Half a dash of phase shifts the pattern: the line now starts 5 units into a dash.
    s.dash_phase = 5.0;
    let c = cover(&path_draw(STROKE, IDENTITY, s.clone()), &line);
    assert_eq!(c.fragments(), 300);
    assert_eq!(at(&c, 12, 50), 1);
    assert_eq!(at(&c, 17, 50), 0);
    // An odd last entry is ignored; all-zero patterns leave the stroke solid.
    s.dash = vec![10.0, 10.0, 3.0];
    s.dash_phase = 0.0;
    assert_eq!(
        cover(&path_draw(STROKE, IDENTITY, s.clone()), &line).fragments(),
        300
    );
    s.dash = vec![0.0, 0.0];
    assert_eq!(
        cover(&path_draw(STROKE, IDENTITY, s), &line).fragments(),
        600
    );
}

#[test]
fn fill_and_stroke_count_once_each() {
    let p = rect(20.0, 20.0, 40.0, 40.0);
    let c = cover(
        &path_draw(FILL | STROKE, IDENTITY, solid(4.0, CAP_BUTT)),
        &p,
    );
    // Stroke ring 44² − 36² = 640 px, half of it (40² − 36² = 304) over the fill.
    assert_eq!(c.bbox, [18, 18, 62, 62]);
    assert_eq!(c.counts.iter().filter(|&&v| v == 2).count(), 304);
    assert_eq!(c.fragments(), 1600 + 640);
    assert!(c.counts.iter().all(|&v| v <= 2));
}

#[test]
fn the_matrix_moves_scales_and_turns_the_path() {
    let p = rect(0.0, 0.0, 30.0, 40.0);
    let translate = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 10.0, 20.0, 1.0];
    let c = cover(&path_draw(FILL, translate, solid(1.0, CAP_BUTT)), &p);
    assert_eq!((c.fragments(), c.bbox), (1200, [10, 20, 40, 60]));
    let scale = [2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 5.0, 5.0, 1.0];
    let c = cover(&path_draw(FILL, scale, solid(1.0, CAP_BUTT)), &p);
    assert_eq!((c.fragments(), c.bbox), (4800, [5, 5, 65, 85]));
    // 90° counter-clockwise, then to (100, 10): x' = −y + 100, y' = x + 10.
    let turn = [0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 100.0, 10.0, 1.0];
    let c = cover(&path_draw(FILL, turn, solid(1.0, CAP_BUTT)), &p);
    assert_eq!((c.fragments(), c.bbox), (1200, [60, 10, 100, 40]));
    // A stroke's width scales with the matrix too: 100 × 6 user units at scale 2.
    let line = vg_path(&[2, 4], &[0.0, 20.0, 50.0, 20.0]);
    let c = cover(&path_draw(STROKE, scale, solid(3.0, CAP_BUTT)), &line);
    assert_eq!((c.fragments(), c.bbox), (600, [5, 42, 105, 48]));
}

#[test]
fn scissor_rectangles_clip_to_their_union() {
    let p = rect(10.0, 20.0, 30.0, 40.0);
    let mut d = path_draw(FILL, IDENTITY, solid(1.0, CAP_BUTT));
    d.scissor = vec![[0, 0, 20, 128]];
    let c = cover(&d, &p);
    assert_eq!((c.fragments(), c.bbox), (400, [10, 20, 20, 60]));
    d.scissor = vec![[0, 0, 20, 128], [30, 50, 100, 100]];
    let c = cover(&d, &p);
    assert_eq!(c.fragments(), 400 + 10 * 10);
    assert_eq!(c.bbox, [10, 20, 40, 60]);
}

#[test]
fn the_surface_clips_what_falls_outside() {
    let c = fill(&rect(-10.0, 100.0, 30.0, 40.0));
    assert_eq!((c.fragments(), c.bbox), (20 * 28, [0, 100, 20, 128]));
    assert_eq!(c.surface_bounds, Some([-10.0, 100.0, 20.0, 140.0]));
    let clear = coverage(&VgDraw::Rect([-5, -5, 20, 20]), None, SURFACE).unwrap();
    assert_eq!((clear.fragments(), clear.bbox), (225, [0, 0, 15, 15]));
}

#[test]
fn an_image_covers_its_mapped_rectangle() {
    let image = |matrix| {
        VgDraw::Image(VgImageDraw {
            image: 3,
            width: 16,
            height: 8,
            format: 0,
            matrix,
        })
    };
    let m = [2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 5.0, 5.0, 1.0];
    let c = coverage(&image(m), None, SURFACE).unwrap();
    assert_eq!((c.fragments(), c.bbox), (512, [5, 5, 37, 21]));
    assert_eq!(c.triangles.len(), 6);
    // Projective: w = 2 everywhere halves the image after the translation.
    let m = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 8.0, 8.0, 2.0];
    let c = coverage(&image(m), None, SURFACE).unwrap();
    assert_eq!((c.fragments(), c.bbox), (32, [4, 4, 12, 8]));
    // A corner behind the eye draws nothing.
    let m = [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    assert_eq!(coverage(&image(m), None, SURFACE).unwrap().fragments(), 0);
}

#[test]
fn unknown_data_falls_back_to_the_bounds_or_fails() {
    let mut d = path_draw(FILL, IDENTITY, solid(1.0, CAP_BUTT));
    d.serial = 0;
    let e = coverage(&VgDraw::Path(d.clone()), None, SURFACE).unwrap_err();
    assert!(e.contains("unknown") && !e.contains('\n'), "{e}");
    d.bounds = Some([10.0, 20.0, 40.0, 60.0]);
    let c = coverage(&VgDraw::Path(d), None, SURFACE).unwrap();
    assert!(c.approximate);
    assert_eq!((c.fragments(), c.bbox), (1200, [10, 20, 40, 60]));
}

#[test]
fn non_finite_input_draws_nothing() {
    let p = vg_path(&[2, 4, 4, 0], &[0.0, 0.0, f32::INFINITY, 0.0, 10.0, 10.0]);
    assert_eq!(fill(&p).fragments(), 0);
    let mut m = IDENTITY;
    m[6] = f32::NAN;
    let c = cover(
        &path_draw(FILL | STROKE, m, solid(2.0, CAP_BUTT)),
        &rect(1.0, 1.0, 9.0, 9.0),
    );
    assert_eq!(c.fragments(), 0);
    // Coordinates that overflow on the way to the surface too.
    let huge = [1e30, 0.0, 0.0, 0.0, 1e30, 0.0, 0.0, 0.0, 1.0];
    let c = cover(
        &path_draw(FILL | STROKE, huge, solid(2.0, CAP_BUTT)),
        &rect(1e9, 1e9, 9e9, 9e9),
    );
    assert_eq!(c.fragments(), 0);
}

#[test]
fn an_oversized_surface_is_refused() {
    let e = coverage(&VgDraw::Rect([0, 0, 1, 1]), None, [100_000, 100_000]).unwrap_err();
    assert!(e.contains("exceeds"), "{e}");
}
