//! A recorded path's segments turned back into geometry: the 13 OpenVG 1.1 segment types,
//! absolute and relative, as a `lyon` path in user space (arcs become cubic Béziers).

use gpuheat_session::VgPath;
use lyon_path::geom::{ArcFlags, SvgArc};
use lyon_path::math::{point, vector, Angle, Point};
use lyon_path::Path;

/// `VGPathSegment` values (the command without its abs/rel bit, shifted down).
pub(crate) const CLOSE: u8 = 0;
pub(crate) const MOVE: u8 = 1;
pub(crate) const LINE: u8 = 2;
pub(crate) const HLINE: u8 = 3;
pub(crate) const VLINE: u8 = 4;
pub(crate) const QUAD: u8 = 5;
pub(crate) const CUBIC: u8 = 6;
pub(crate) const SQUAD: u8 = 7;
pub(crate) const SCUBIC: u8 = 8;
pub(crate) const SCCWARC: u8 = 9;
pub(crate) const SCWARC: u8 = 10;
pub(crate) const LCCWARC: u8 = 11;

/// The abs/rel bit of a segment command (`VG_RELATIVE`).
const RELATIVE: u8 = 1;

/// The path's geometry in user space; `Ok(None)` when a coordinate is not finite (OpenVG
/// leaves such a path's rendering undefined; gpuheat counts it as drawing nothing). Err
/// when the record itself is inconsistent (an unknown segment, a wrong coordinate count).
pub fn decode(p: &VgPath) -> Result<Option<Path>, String> {
    p.validate()?;
    if p.coords.iter().any(|c| !c.is_finite()) {
        return Ok(None);
    }
    let mut b = Path::builder();
    let mut coords = p.coords.iter().copied();
    // Validated above: every segment finds its coordinates.
    let mut next = move || coords.next().unwrap_or(0.0);
    // OpenVG 1.1 section 8.5: s the subpath's start, o the last point, c the last control
    // point (what a smooth curve reflects: for lines, moves and arcs the end point itself).
    let origin = point(0.0, 0.0);
    let (mut s, mut o, mut c) = (origin, origin, origin);
    let mut open = false;
    for &command in &p.segments {
        let kind = command >> 1;
        let base = if command & RELATIVE != 0 {
            o.to_vector()
        } else {
            vector(0.0, 0.0)
        };
        let pt = |next: &mut dyn FnMut() -> f32| {
            let x = next();
            let y = next();
            point(x, y) + base
        };
        if kind == MOVE {
            let to = pt(&mut next);
            if open {
                b.end(false);
            }
            b.begin(to);
            open = true;
            (s, o, c) = (to, to, to);
            continue;
        }
        if kind == CLOSE {
            if open {
                b.end(true);
                open = false;
            }
            (o, c) = (s, s);
            continue;
        }
        // A drawing segment with no subpath open starts one where the pen is: (0, 0) at
        // the path's start, the closed subpath's start after a CLOSE_PATH.
        if !open {
            b.begin(o);
            s = o;
            open = true;
        }
        match kind {
            LINE | HLINE | VLINE => {
                let to = match kind {
                    HLINE => point(next() + base.x, o.y),
                    VLINE => point(o.x, next() + base.y),
                    _ => pt(&mut next),
                };
                b.line_to(to);
                (o, c) = (to, to);
            }
            QUAD | SQUAD => {
                let ctrl = if kind == QUAD {
                    pt(&mut next)
                } else {
                    o + (o - c)
                };
                let to = pt(&mut next);
                b.quadratic_bezier_to(ctrl, to);
                (o, c) = (to, ctrl);
            }
            CUBIC | SCUBIC => {
                let c1 = if kind == CUBIC {
                    pt(&mut next)
                } else {
                    o + (o - c)
                };
                let c2 = pt(&mut next);
                let to = pt(&mut next);
                b.cubic_bezier_to(c1, c2, to);
                (o, c) = (to, c2);
            }
            _ => {
                let (rh, rv, rot) = (next(), next(), next());
                let to = pt(&mut next);
                arc(&mut b, o, to, [rh, rv, rot], kind);
                (o, c) = (to, to);
            }
        }
    }
    if open {
        b.end(false);
    }
    Ok(Some(b.build()))
}

/// Appends an OpenVG arc from `from` to `to` with radii and rotation (degrees) `r`: the SVG
/// elliptical arc with the large-arc flag of LCCWARC/LCWARC and the sweep of the
/// counter-clockwise kinds. VG's y axis points up, so counter-clockwise is the direction
/// of increasing angle, SVG's positive sweep.
fn arc(b: &mut lyon_path::path::Builder, from: Point, to: Point, r: [f32; 3], kind: u8) {
    let (large_arc, sweep) = match kind {
        SCCWARC => (false, true),
        SCWARC => (false, false),
        LCCWARC => (true, true),
        _ => (true, false),
    };
    let svg = SvgArc {
        from,
        to,
        radii: vector(r[0].abs(), r[1].abs()),
        x_rotation: Angle::degrees(r[2]),
        flags: ArcFlags { large_arc, sweep },
    };
    // OpenVG, like SVG, draws an arc with a zero radius as a line; equal endpoints draw
    // nothing more than the point.
    if svg.is_straight_line() {
        b.line_to(to);
        return;
    }
    let mut last = from;
    svg.for_each_cubic_bezier(&mut |seg| {
        b.cubic_bezier_to(seg.ctrl1, seg.ctrl2, seg.to);
        last = seg.to;
    });
    // The Béziers end within rounding of `to`; land exactly on it so the next segment and
    // a CLOSE_PATH start where the program said.
    if last != to {
        b.line_to(to);
    }
}

/// The smallest box holding the path (curve extrema included): min x, min y, max x, max y;
/// `None` for a path with no points.
pub fn bounds(path: &Path) -> Option<[f32; 4]> {
    use lyon_path::geom::{CubicBezierSegment, QuadraticBezierSegment};
    use lyon_path::Event;
    let mut b = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    let mut add = |p: Point| {
        b = [b[0].min(p.x), b[1].min(p.y), b[2].max(p.x), b[3].max(p.y)];
    };
    for e in path.iter() {
        match e {
            Event::Begin { at } => add(at),
            Event::Line { to, .. } => add(to),
            Event::Quadratic { from, ctrl, to } => {
                let bb = QuadraticBezierSegment { from, ctrl, to }.bounding_box();
                add(bb.min);
                add(bb.max);
            }
            Event::Cubic {
                from,
                ctrl1,
                ctrl2,
                to,
            } => {
                let bb = CubicBezierSegment {
                    from,
                    ctrl1,
                    ctrl2,
                    to,
                }
                .bounding_box();
                add(bb.min);
                add(bb.max);
            }
            Event::End { .. } => {}
        }
    }
    (b[0] <= b[2] && b[1] <= b[3]).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lyon_path::Event;

    pub(crate) fn path(segments: &[u8], coords: &[f32]) -> VgPath {
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

    /// The endpoints of every event, in order ("M", "L", "Q", "C", "Z"/"E" for closed/open
    /// ends) with the control points of curves.
    fn events(p: &Path) -> Vec<(char, Vec<[f32; 2]>)> {
        p.iter()
            .map(|e| match e {
                Event::Begin { at } => ('M', vec![at.to_array()]),
                Event::Line { to, .. } => ('L', vec![to.to_array()]),
                Event::Quadratic { ctrl, to, .. } => ('Q', vec![ctrl.to_array(), to.to_array()]),
                Event::Cubic {
                    ctrl1, ctrl2, to, ..
                } => ('C', vec![ctrl1.to_array(), ctrl2.to_array(), to.to_array()]),
                Event::End { close, .. } => (if close { 'Z' } else { 'E' }, vec![]),
            })
            .collect()
    }

    #[test]
    fn relative_lines_move_from_the_last_point() {
        // MOVE_TO_REL (10, 20), HLINE_TO_REL 30, VLINE_TO_REL 40, LINE_TO_REL (-30, 0), CLOSE.
        let p = path(&[3, 7, 9, 5, 0], &[10.0, 20.0, 30.0, 40.0, -30.0, 0.0]);
        let e = events(&decode(&p).unwrap().unwrap());
        assert_eq!(
            e,
            vec![
                ('M', vec![[10.0, 20.0]]),
                ('L', vec![[40.0, 20.0]]),
                ('L', vec![[40.0, 60.0]]),
                ('L', vec![[10.0, 60.0]]),
                ('Z', vec![]),
            ]
        );
    }

    #[test]
    fn smooth_curves_reflect_the_last_control_point() {
        // MOVE_TO (0,0); QUAD_TO (10,10) (20,0); SQUAD_TO (40,0): control 2·(20,0) − (10,10)
        // = (30,−10); SCUBIC_TO_REL (10,0)(20,0) reflects that control: (50,10), then
        // (50,0) and (60,0); CUBIC_TO_REL; SCUBIC_TO reflects the cubic's second control.
        let p = path(
            &[2, 10, 14, 17, 13, 16],
            &[
                0.0, 0.0, // move
                10.0, 10.0, 20.0, 0.0, // quad
                40.0, 0.0, // squad
                10.0, 0.0, 20.0, 0.0, // scubic rel
                0.0, 5.0, 5.0, 5.0, 10.0, 0.0, // cubic rel from (60,0)
                90.0, 0.0, 100.0, 0.0, // scubic abs
            ],
        );
        let e = events(&decode(&p).unwrap().unwrap());
        assert_eq!(e[2], ('Q', vec![[30.0, -10.0], [40.0, 0.0]]));
        assert_eq!(e[3], ('C', vec![[50.0, 10.0], [50.0, 0.0], [60.0, 0.0]]));
        assert_eq!(e[4], ('C', vec![[60.0, 5.0], [65.0, 5.0], [70.0, 0.0]]));
        // Reflection of (65,5) about (70,0).
        assert_eq!(e[5], ('C', vec![[75.0, -5.0], [90.0, 0.0], [100.0, 0.0]]));
    }

    #[test]
    fn a_smooth_curve_after_a_line_starts_at_the_pen() {
        // MOVE (0,0), LINE (10,0), SQUAD (20,0): the control is the pen, (10,0).
        let p = path(&[2, 4, 14], &[0.0, 0.0, 10.0, 0.0, 20.0, 0.0]);
        let e = events(&decode(&p).unwrap().unwrap());
        assert_eq!(e[2], ('Q', vec![[10.0, 0.0], [20.0, 0.0]]));
    }

    #[test]
    fn counter_clockwise_arcs_turn_towards_positive_angles() {
        // From (10,0) to (-10,0) around the origin: counter-clockwise (y up) passes (0,10).
        for (kind, top) in [(SCCWARC, true), (SCWARC, false)] {
            let p = path(&[2, kind << 1], &[10.0, 0.0, 10.0, 10.0, 0.0, -10.0, 0.0]);
            let b = bounds(&decode(&p).unwrap().unwrap()).unwrap();
            if top {
                assert!((b[3] - 10.0).abs() < 0.01 && b[1].abs() < 0.01, "{b:?}");
            } else {
                assert!((b[1] + 10.0).abs() < 0.01 && b[3].abs() < 0.01, "{b:?}");
            }
        }
        // Radius 10 from (10,0) to (0,10): of the two circles through both points, the
        // large counter-clockwise arc is the three quarters round the one centred (10,10).
        let p = path(&[2, LCCWARC << 1], &[10.0, 0.0, 10.0, 10.0, 0.0, 0.0, 10.0]);
        let b = bounds(&decode(&p).unwrap().unwrap()).unwrap();
        for (got, want) in b.iter().zip([0.0, 0.0, 20.0, 20.0]) {
            assert!((got - want).abs() < 0.01, "{b:?}");
        }
    }

    #[test]
    fn an_arc_turns_its_ellipse_by_the_rotation_in_degrees() {
        // Half ellipses rh 20, rv 10 turned 90° (so 10 wide, 20 tall): from (0,−20) to
        // (0,20) clockwise (y up: leftwards first, through (−10,0)), then back, relative,
        // large clockwise (either half is "large") through (10,0).
        let p = path(
            &[2, 20, 25],
            &[
                0.0, -20.0, 20.0, 10.0, 90.0, 0.0, 20.0, 20.0, 10.0, 90.0, 0.0, -40.0,
            ],
        );
        let b = bounds(&decode(&p).unwrap().unwrap()).unwrap();
        for (got, want) in b.iter().zip([-10.0, -20.0, 10.0, 20.0]) {
            assert!((got - want).abs() < 0.01, "{b:?}");
        }
    }

    #[test]
    fn a_path_with_a_non_finite_coordinate_draws_nothing() {
        let p = path(&[2, 4], &[0.0, 0.0, f32::NAN, 1.0]);
        assert!(decode(&p).unwrap().is_none());
    }

    #[test]
    fn an_inconsistent_record_is_an_error() {
        assert!(decode(&path(&[2, 4], &[0.0, 0.0, 1.0])).is_err());
        assert!(decode(&path(&[40], &[])).is_err());
    }
}
