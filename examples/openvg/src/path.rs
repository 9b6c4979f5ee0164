//! Path storage and geometry: VG segment data as appended, its conversion to a `lyon`
//! path (arcs become cubic Béziers), bounds, dashing, and the VGU shapes' segment lists.

use lyon_path::geom::{
    euclid::Angle, ArcFlags, CubicBezierSegment, QuadraticBezierSegment, SvgArc,
};
use lyon_path::iterator::PathIterator;
use lyon_path::math::{point, vector, Point};
use lyon_path::{Event, Path};

use crate::consts::*;
use crate::matrix::Mat3;

/// A VG path object: its creation parameters and the segments appended so far.
#[derive(Clone, Debug)]
pub struct PathData {
    /// `VG_PATH_DATATYPE_*`.
    pub datatype: VGenum,
    /// Scale applied to every stored coordinate.
    pub scale: f32,
    /// Bias added after the scale.
    pub bias: f32,
    /// `VG_PATH_CAPABILITY_*` bits still allowed.
    pub caps: VGbitfield,
    /// Segment commands (segment type | `VG_ABSOLUTE`/`VG_RELATIVE`), as appended.
    pub segments: Vec<u8>,
    /// Stored coordinates (before scale and bias), as the datatype holds them.
    pub coords: Vec<f32>,
}

/// How many coordinates a segment command takes, or `None` for an invalid command.
pub fn coord_count(command: u8) -> Option<usize> {
    Some(match command & !1 {
        VG_CLOSE_PATH => 0,
        VG_MOVE_TO | VG_LINE_TO | VG_SQUAD_TO => 2,
        VG_HLINE_TO | VG_VLINE_TO => 1,
        VG_QUAD_TO | VG_SCUBIC_TO => 4,
        VG_CUBIC_TO => 6,
        VG_SCCWARC_TO | VG_SCWARC_TO | VG_LCCWARC_TO | VG_LCWARC_TO => 5,
        _ => return None,
    })
}

/// Bytes per coordinate of a datatype, or `None` for an invalid one.
pub fn datatype_size(datatype: VGenum) -> Option<usize> {
    match datatype {
        VG_PATH_DATATYPE_S_8 => Some(1),
        VG_PATH_DATATYPE_S_16 => Some(2),
        VG_PATH_DATATYPE_S_32 | VG_PATH_DATATYPE_F => Some(4),
        _ => None,
    }
}

/// Reads `n` coordinates of `datatype` from `data`.
///
/// # Safety
///
/// `data` must point to `n` readable values of the datatype (alignment is not required).
pub unsafe fn read_coords(datatype: VGenum, data: *const u8, n: usize) -> Vec<f32> {
    // SAFETY: the caller guarantees `n` values of the datatype's size at `data`;
    // read_unaligned copes with any alignment.
    unsafe {
        (0..n)
            .map(|i| match datatype {
                VG_PATH_DATATYPE_S_8 => *data.add(i) as i8 as f32,
                VG_PATH_DATATYPE_S_16 => {
                    std::ptr::read_unaligned(data.add(2 * i).cast::<i16>()) as f32
                }
                VG_PATH_DATATYPE_S_32 => {
                    std::ptr::read_unaligned(data.add(4 * i).cast::<i32>()) as f32
                }
                _ => std::ptr::read_unaligned(data.add(4 * i).cast::<f32>()),
            })
            .collect()
    }
}

impl PathData {
    /// An empty path.
    pub fn new(datatype: VGenum, scale: f32, bias: f32, caps: VGbitfield) -> PathData {
        PathData {
            datatype,
            scale,
            bias,
            caps,
            segments: Vec::new(),
            coords: Vec::new(),
        }
    }

    /// Coordinates the stored segments need in all.
    pub fn total_coords(segments: &[u8]) -> Option<usize> {
        segments.iter().map(|&s| coord_count(s)).sum()
    }

    /// Stores a value as the datatype would hold it (integer types round, saturating).
    fn quantize(&self, raw: f32) -> f32 {
        match self.datatype {
            VG_PATH_DATATYPE_S_8 => raw.round().clamp(-128.0, 127.0),
            VG_PATH_DATATYPE_S_16 => raw.round().clamp(-32768.0, 32767.0),
            VG_PATH_DATATYPE_S_32 => raw.round().clamp(i32::MIN as f32, i32::MAX as f32),
            _ => raw,
        }
    }

    /// Appends segments whose coordinates are given in user units (the VGU functions and
    /// vgAppendPath): each is stored as `(v − bias) / scale` in the path's datatype.
    pub fn append_user(&mut self, segments: &[u8], values: &[f32]) {
        self.segments.extend_from_slice(segments);
        for &v in values {
            let raw = self.quantize((v - self.bias) / self.scale);
            self.coords.push(raw);
        }
    }

    /// The path's coordinates in user units (`stored · scale + bias`).
    pub fn user_coords(&self) -> impl Iterator<Item = f32> + '_ {
        self.coords.iter().map(|&c| c * self.scale + self.bias)
    }

    /// Walks the path's geometry in user space, calling `sink(segment index, op)`:
    /// relative coordinates resolved, horizontal and vertical lines and smooth curves
    /// expanded, arcs approximated by cubic Béziers; a drawing segment without an open
    /// subpath first opens one at the current point (`Op::Begin` with its index).
    pub fn walk(&self, mut sink: impl FnMut(usize, Op)) {
        let mut coords = self.user_coords();
        let mut next = move || coords.next().unwrap_or(0.0);
        let origin = point(0.0, 0.0);
        let (mut start, mut cur, mut ctrl) = (origin, origin, origin);
        let mut open = false;
        let mut prev_kind = VG_CLOSE_PATH;
        for (index, &command) in self.segments.iter().enumerate() {
            let kind = command & !1;
            let rel = command & 1 == VG_RELATIVE;
            let base = if rel {
                cur.to_vector()
            } else {
                vector(0.0, 0.0)
            };
            let pt = |x: f32, y: f32| point(x, y) + base;
            let ensure_open = |open: &mut bool, sink: &mut dyn FnMut(usize, Op)| {
                if !*open {
                    sink(index, Op::Begin(cur));
                    *open = true;
                }
            };
            match kind {
                VG_CLOSE_PATH => {
                    if open {
                        sink(
                            index,
                            Op::End {
                                close: true,
                                from: cur,
                                to: start,
                            },
                        );
                        open = false;
                    }
                    cur = start;
                    ctrl = start;
                }
                VG_MOVE_TO => {
                    let p = pt(next(), next());
                    if open {
                        sink(
                            index,
                            Op::End {
                                close: false,
                                from: cur,
                                to: cur,
                            },
                        );
                    }
                    sink(index, Op::Begin(p));
                    open = true;
                    (start, cur, ctrl) = (p, p, p);
                }
                VG_LINE_TO | VG_HLINE_TO | VG_VLINE_TO => {
                    let p = match kind {
                        VG_LINE_TO => pt(next(), next()),
                        VG_HLINE_TO => point(next() + base.x, cur.y),
                        _ => point(cur.x, next() + base.y),
                    };
                    ensure_open(&mut open, &mut sink);
                    sink(index, Op::Line(cur, p));
                    (cur, ctrl) = (p, p);
                }
                VG_QUAD_TO | VG_SQUAD_TO => {
                    let c = if kind == VG_QUAD_TO {
                        pt(next(), next())
                    } else if matches!(prev_kind, VG_QUAD_TO | VG_SQUAD_TO) {
                        cur + (cur - ctrl)
                    } else {
                        cur
                    };
                    let p = pt(next(), next());
                    ensure_open(&mut open, &mut sink);
                    sink(index, Op::Quad(cur, c, p));
                    (cur, ctrl) = (p, c);
                }
                VG_CUBIC_TO | VG_SCUBIC_TO => {
                    let c1 = if kind == VG_CUBIC_TO {
                        pt(next(), next())
                    } else if matches!(prev_kind, VG_CUBIC_TO | VG_SCUBIC_TO) {
                        cur + (cur - ctrl)
                    } else {
                        cur
                    };
                    let c2 = pt(next(), next());
                    let p = pt(next(), next());
                    ensure_open(&mut open, &mut sink);
                    sink(index, Op::Cubic(cur, c1, c2, p));
                    (cur, ctrl) = (p, c2);
                }
                _ => {
                    let (rh, rv, rot) = (next(), next(), next());
                    let p = pt(next(), next());
                    ensure_open(&mut open, &mut sink);
                    let arc = SvgArc {
                        from: cur,
                        to: p,
                        radii: vector(rh.abs(), rv.abs()),
                        x_rotation: Angle::degrees(rot),
                        flags: ArcFlags {
                            large_arc: matches!(kind, VG_LCCWARC_TO | VG_LCWARC_TO),
                            // VG's y axis points up, so counter-clockwise is the
                            // positive-angle direction, SVG's "sweep".
                            sweep: matches!(kind, VG_SCCWARC_TO | VG_LCCWARC_TO),
                        },
                    };
                    if cur != p {
                        if arc.is_straight_line() {
                            sink(index, Op::Line(cur, p));
                        } else {
                            arc.for_each_cubic_bezier(&mut |c: &CubicBezierSegment<f32>| {
                                sink(index, Op::Cubic(c.from, c.ctrl1, c.ctrl2, c.to));
                            });
                        }
                    }
                    (cur, ctrl) = (p, p);
                }
            }
            prev_kind = kind;
        }
        if open {
            sink(
                self.segments.len(),
                Op::End {
                    close: false,
                    from: cur,
                    to: cur,
                },
            );
        }
    }

    /// The path as a `lyon` path in user space (see [`PathData::walk`]).
    pub fn to_lyon(&self) -> Path {
        let mut b = Path::builder();
        self.walk(|_, op| match op {
            Op::Begin(p) => {
                b.begin(p);
            }
            Op::Line(_, p) => {
                b.line_to(p);
            }
            Op::Quad(_, c, p) => {
                b.quadratic_bezier_to(c, p);
            }
            Op::Cubic(_, c1, c2, p) => {
                b.cubic_bezier_to(c1, c2, p);
            }
            Op::End { close, .. } => b.end(close),
        });
        b.build()
    }

    /// The canonical form used by path interpolation: every segment absolute, horizontal
    /// and vertical lines as lines, smooth curves as full ones, arcs with their five
    /// values; returns the segment commands and their user-unit coordinates.
    pub fn canonical(&self) -> (Vec<u8>, Vec<f32>) {
        let mut coords = self.user_coords();
        let mut next = move || coords.next().unwrap_or(0.0);
        let (mut segs, mut vals) = (Vec::new(), Vec::new());
        let origin = point(0.0, 0.0);
        let (mut start, mut cur, mut ctrl) = (origin, origin, origin);
        let mut prev_kind = VG_CLOSE_PATH;
        for &command in &self.segments {
            let kind = command & !1;
            let base = if command & 1 == VG_RELATIVE {
                cur.to_vector()
            } else {
                vector(0.0, 0.0)
            };
            let pt = |x: f32, y: f32| point(x, y) + base;
            match kind {
                VG_CLOSE_PATH => {
                    segs.push(VG_CLOSE_PATH);
                    (cur, ctrl) = (start, start);
                }
                VG_MOVE_TO | VG_LINE_TO | VG_HLINE_TO | VG_VLINE_TO => {
                    let p = match kind {
                        VG_HLINE_TO => point(next() + base.x, cur.y),
                        VG_VLINE_TO => point(cur.x, next() + base.y),
                        _ => pt(next(), next()),
                    };
                    segs.push(if kind == VG_MOVE_TO {
                        VG_MOVE_TO_ABS
                    } else {
                        VG_LINE_TO_ABS
                    });
                    vals.extend([p.x, p.y]);
                    if kind == VG_MOVE_TO {
                        start = p;
                    }
                    (cur, ctrl) = (p, p);
                }
                VG_QUAD_TO | VG_SQUAD_TO => {
                    let c = if kind == VG_QUAD_TO {
                        pt(next(), next())
                    } else if matches!(prev_kind, VG_QUAD_TO | VG_SQUAD_TO) {
                        cur + (cur - ctrl)
                    } else {
                        cur
                    };
                    let p = pt(next(), next());
                    segs.push(VG_QUAD_TO_ABS);
                    vals.extend([c.x, c.y, p.x, p.y]);
                    (cur, ctrl) = (p, c);
                }
                VG_CUBIC_TO | VG_SCUBIC_TO => {
                    let c1 = if kind == VG_CUBIC_TO {
                        pt(next(), next())
                    } else if matches!(prev_kind, VG_CUBIC_TO | VG_SCUBIC_TO) {
                        cur + (cur - ctrl)
                    } else {
                        cur
                    };
                    let c2 = pt(next(), next());
                    let p = pt(next(), next());
                    segs.push(VG_CUBIC_TO_ABS);
                    vals.extend([c1.x, c1.y, c2.x, c2.y, p.x, p.y]);
                    (cur, ctrl) = (p, c2);
                }
                _ => {
                    let (rh, rv, rot) = (next(), next(), next());
                    let p = pt(next(), next());
                    segs.push(kind | VG_ABSOLUTE);
                    vals.extend([rh, rv, rot, p.x, p.y]);
                    (cur, ctrl) = (p, p);
                }
            }
            prev_kind = kind;
        }
        (segs, vals)
    }

    /// Length of segments `first .. first + count` (moves count nothing; a close counts
    /// its closing line), curves measured by flattening to `tolerance`.
    pub fn length(&self, first: usize, count: usize, tolerance: f32) -> f32 {
        let mut total = 0.0;
        self.walk(|i, op| {
            if (first..first + count).contains(&i) {
                total += op.length(tolerance);
            }
        });
        total
    }

    /// The point and unit tangent at `distance` along segments `first .. first + count`,
    /// clamped to the range's ends; `None` when the range has no drawing segment.
    pub fn point_along(
        &self,
        first: usize,
        count: usize,
        distance: f32,
        tolerance: f32,
    ) -> Option<(Point, lyon_path::math::Vector)> {
        let mut pieces: Vec<(Point, Point)> = Vec::new();
        self.walk(|i, op| {
            if (first..first + count).contains(&i) {
                op.flatten(tolerance, &mut |a, b| pieces.push((a, b)));
            }
        });
        let (mut a, mut b) = *pieces.first()?;
        let mut left = distance.max(0.0);
        for &(p, q) in &pieces {
            (a, b) = (p, q);
            let len = (q - p).length();
            if left <= len {
                break;
            }
            left -= len;
        }
        let len = (b - a).length();
        let t = if len > 0.0 {
            (left / len).min(1.0)
        } else {
            1.0
        };
        let dir = if len > 0.0 {
            (b - a) / len
        } else {
            vector(1.0, 0.0)
        };
        Some((a.lerp(b, t), dir))
    }
}

/// One step of a path's geometry in user space, with its starting point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// A subpath starts here.
    Begin(Point),
    /// A line from → to.
    Line(Point, Point),
    /// A quadratic Bézier from, control, to.
    Quad(Point, Point, Point),
    /// A cubic Bézier from, control 1, control 2, to.
    Cubic(Point, Point, Point, Point),
    /// The subpath ends at `from`; when closed, with a line back to `to`.
    End {
        /// Closed by a line to the subpath's start.
        close: bool,
        /// The current point.
        from: Point,
        /// The subpath's start.
        to: Point,
    },
}

impl Op {
    /// Calls `f` for each line of the op flattened to `tolerance`.
    pub fn flatten(&self, tolerance: f32, f: &mut dyn FnMut(Point, Point)) {
        match *self {
            Op::Begin(_) => {}
            Op::Line(a, b) => f(a, b),
            Op::Quad(from, ctrl, to) => QuadraticBezierSegment { from, ctrl, to }
                .for_each_flattened(tolerance, &mut |l| f(l.from, l.to)),
            Op::Cubic(from, ctrl1, ctrl2, to) => CubicBezierSegment {
                from,
                ctrl1,
                ctrl2,
                to,
            }
            .for_each_flattened(tolerance, &mut |l| f(l.from, l.to)),
            Op::End { close, from, to } => {
                if close {
                    f(from, to)
                }
            }
        }
    }

    /// Length of the op flattened to `tolerance`.
    pub fn length(&self, tolerance: f32) -> f32 {
        let mut total = 0.0;
        self.flatten(tolerance, &mut |a, b| total += (b - a).length());
        total
    }
}

/// The tight axis-aligned bounds `(min, max)` of a path's geometry (curve extrema
/// included), or `None` for a path without points.
pub fn bounds(path: &Path) -> Option<(Point, Point)> {
    let mut lo = point(f32::INFINITY, f32::INFINITY);
    let mut hi = point(f32::NEG_INFINITY, f32::NEG_INFINITY);
    let mut add = |p: Point| {
        lo = lo.min(p);
        hi = hi.max(p);
    };
    for event in path.iter() {
        match event {
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
    (lo.x <= hi.x).then_some((lo, hi))
}

/// `path` with every point mapped through `m` (affine: Béziers map to Béziers of the
/// mapped control points).
pub fn transformed(path: &Path, m: &Mat3) -> Path {
    let t = lyon_path::math::Transform::new(m.0[0], m.0[1], m.0[3], m.0[4], m.0[6], m.0[7]);
    path.clone().transformed(&t)
}

/// The dashed version of `path`: its outline flattened to `tolerance`, cut into the "on"
/// intervals of `pattern` (on, off, on, off… lengths; an odd last entry is ignored)
/// starting `phase` into the pattern. With `reset` the pattern restarts at each subpath,
/// otherwise it carries on across them. Each dash is an open subpath.
pub fn dash(path: &Path, pattern: &[f32], phase: f32, reset: bool, tolerance: f32) -> Path {
    let pattern: Vec<f32> = pattern[..pattern.len() / 2 * 2]
        .iter()
        .map(|v| v.max(0.0))
        .collect();
    let total: f32 = pattern.iter().sum();
    if pattern.is_empty() || total <= 0.0 || !total.is_finite() {
        return path.clone();
    }
    let mut d = Dasher {
        pattern: &pattern,
        phase,
        index: 0,
        left: 0.0,
        open: false,
        b: Path::builder(),
    };
    d.restart();
    for event in path.iter().flattened(tolerance) {
        match event {
            Event::Begin { .. } if reset => d.restart(),
            Event::Line { from, to } => d.walk(from, to),
            Event::End { last, first, close } => {
                if close {
                    d.walk(last, first);
                }
                // A dash never bridges two subpaths.
                d.stop();
            }
            _ => {}
        }
    }
    d.stop();
    d.b.build()
}

/// The dash walker's state: where in the pattern it is, and whether a dash is open.
struct Dasher<'a> {
    pattern: &'a [f32],
    phase: f32,
    index: usize,
    left: f32,
    open: bool,
    b: lyon_path::path::Builder,
}

impl Dasher<'_> {
    /// Back to `phase` into the pattern.
    fn restart(&mut self) {
        let total: f32 = self.pattern.iter().sum();
        let mut p = self.phase.rem_euclid(total);
        let mut i = 0;
        while p >= self.pattern[i] && p > 0.0 {
            p -= self.pattern[i];
            i = (i + 1) % self.pattern.len();
        }
        self.index = i;
        self.left = self.pattern[i] - p;
    }

    fn stop(&mut self) {
        if self.open {
            self.b.end(false);
            self.open = false;
        }
    }

    /// Walks the segment from → to, emitting the parts under "on" intervals.
    fn walk(&mut self, from: Point, to: Point) {
        let len = (to - from).length();
        let mut pos = 0.0;
        // Bounded: zero-length pattern entries cannot loop forever on one segment.
        let mut guard = 0;
        while pos < len && guard < 1_000_000 {
            guard += 1;
            let step = self.left.min(len - pos);
            let on = self.index.is_multiple_of(2);
            if on {
                if !self.open {
                    self.b.begin(from.lerp(to, pos / len));
                    self.open = true;
                }
                self.b.line_to(from.lerp(to, (pos + step) / len));
            }
            pos += step;
            self.left -= step;
            if self.left <= 0.0 {
                if on {
                    self.stop();
                }
                self.index = (self.index + 1) % self.pattern.len();
                self.left = self.pattern[self.index];
            }
        }
    }
}

/// The segments and user-unit coordinates of `vguArc`: an elliptical arc of the ellipse
/// centred at (x, y) with the given width and height, from `start` through `extent`
/// degrees (counter-clockwise when positive), in steps of at most 180°; `arc_type` adds
/// the chord (`VGU_ARC_CHORD`) or the two radii (`VGU_ARC_PIE`).
pub fn vgu_arc(
    x: f32,
    y: f32,
    width: f32,
    height: f32,
    start: f32,
    extent: f32,
    arc_type: VGenum,
) -> (Vec<u8>, Vec<f32>) {
    let (rx, ry) = (width / 2.0, height / 2.0);
    let at = |deg: f32| {
        let (s, c) = deg.to_radians().sin_cos();
        (x + rx * c, y + ry * s)
    };
    let (mut segs, mut vals) = (Vec::new(), Vec::new());
    let (sx, sy) = at(start);
    if arc_type == VGU_ARC_PIE {
        segs.extend([VG_MOVE_TO_ABS, VG_LINE_TO_ABS]);
        vals.extend([x, y, sx, sy]);
    } else {
        segs.push(VG_MOVE_TO_ABS);
        vals.extend([sx, sy]);
    }
    let extent = extent.clamp(-360.0, 360.0);
    let steps = (extent.abs() / 180.0).ceil().max(1.0) as usize;
    let command = if extent >= 0.0 {
        VG_SCCWARC_TO_ABS
    } else {
        VG_SCWARC_TO_ABS
    };
    for i in 1..=steps {
        let (px, py) = at(start + extent * i as f32 / steps as f32);
        segs.push(command);
        vals.extend([rx, ry, 0.0, px, py]);
    }
    if arc_type == VGU_ARC_PIE || arc_type == VGU_ARC_CHORD {
        segs.push(VG_CLOSE_PATH);
    }
    (segs, vals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(datatype: VGenum, segs: &[u8], vals: &[f32]) -> PathData {
        let mut p = PathData::new(datatype, 1.0, 0.0, VG_PATH_CAPABILITY_ALL);
        p.append_user(segs, vals);
        p
    }

    #[test]
    fn relative_and_axis_lines_resolve_to_a_rectangle() {
        let p = path(
            VG_PATH_DATATYPE_F,
            &[
                VG_MOVE_TO_ABS,
                VG_HLINE_TO_REL,
                VG_VLINE_TO_REL,
                VG_HLINE_TO_REL,
                VG_CLOSE_PATH,
            ],
            &[10.0, 20.0, 30.0, 40.0, -30.0],
        );
        let (lo, hi) = bounds(&p.to_lyon()).unwrap();
        assert_eq!((lo, hi), (point(10.0, 20.0), point(40.0, 60.0)));
    }

    #[test]
    fn arcs_bound_a_circle() {
        let (segs, vals) = vgu_arc(50.0, 50.0, 40.0, 40.0, 0.0, 360.0, VGU_ARC_OPEN);
        assert_eq!(segs.len(), 3);
        let (lo, hi) = bounds(&path(VG_PATH_DATATYPE_F, &segs, &vals).to_lyon()).unwrap();
        for (got, want) in [(lo.x, 30.0), (lo.y, 30.0), (hi.x, 70.0), (hi.y, 70.0)] {
            assert!((got - want).abs() < 0.05, "{lo:?} {hi:?}");
        }
    }

    #[test]
    fn integer_datatypes_round_with_scale_and_bias() {
        let mut p = PathData::new(VG_PATH_DATATYPE_S_8, 0.5, 1.0, 0);
        p.append_user(&[VG_MOVE_TO_ABS], &[3.0, 200.0]);
        assert_eq!(p.coords, vec![4.0, 127.0]);
        assert_eq!(p.user_coords().collect::<Vec<_>>(), vec![3.0, 64.5]);
        let raw = [1i16, -2];
        // SAFETY: two i16 values at a live array.
        let v = unsafe { read_coords(VG_PATH_DATATYPE_S_16, raw.as_ptr().cast(), 2) };
        assert_eq!(v, vec![1.0, -2.0]);
    }

    #[test]
    fn length_point_along_and_canonical_form() {
        let p = path(
            VG_PATH_DATATYPE_F,
            &[
                VG_MOVE_TO_ABS,
                VG_HLINE_TO_REL,
                VG_VLINE_TO_REL,
                VG_CLOSE_PATH,
            ],
            &[0.0, 0.0, 30.0, 40.0],
        );
        // 30 + 40 + the closing 50.
        assert!((p.length(0, 4, 0.01) - 120.0).abs() < 1e-3);
        assert!((p.length(1, 1, 0.01) - 30.0).abs() < 1e-3);
        let (pt, t) = p.point_along(0, 4, 45.0, 0.01).unwrap();
        assert!(
            (pt.x - 30.0).abs() < 1e-4 && (pt.y - 15.0).abs() < 1e-4,
            "{pt:?}"
        );
        assert!((t.y - 1.0).abs() < 1e-5);
        let (segs, vals) = p.canonical();
        assert_eq!(
            segs,
            vec![
                VG_MOVE_TO_ABS,
                VG_LINE_TO_ABS,
                VG_LINE_TO_ABS,
                VG_CLOSE_PATH
            ]
        );
        assert_eq!(vals, vec![0.0, 0.0, 30.0, 0.0, 30.0, 40.0]);
        let (c, _) = vgu_arc(0.0, 0.0, 20.0, 20.0, 0.0, 90.0, VGU_ARC_OPEN);
        let arc = path(
            VG_PATH_DATATYPE_F,
            &c,
            &vgu_arc(0.0, 0.0, 20.0, 20.0, 0.0, 90.0, VGU_ARC_OPEN).1,
        );
        let quarter = std::f32::consts::PI * 10.0 / 2.0;
        let got = arc.length(0, 2, 0.001);
        // Measured 15.694 vs 15.708: arcs are drawn as cubic Béziers (lyon), then
        // flattened, each slightly short of the true curve.
        assert!((got / quarter - 1.0).abs() < 2e-3, "{got} vs {quarter}");
    }

    #[test]
    fn dashes_cover_the_on_intervals() {
        let line = path(
            VG_PATH_DATATYPE_F,
            &[VG_MOVE_TO_ABS, VG_LINE_TO_ABS],
            &[0.0, 0.0, 100.0, 0.0],
        )
        .to_lyon();
        let dashed = dash(&line, &[10.0, 5.0], 0.0, false, 0.1);
        let begins = dashed
            .iter()
            .filter(|e| matches!(e, Event::Begin { .. }))
            .count();
        // 100 = 6 full periods of 15 (90) + a 10-long dash.
        assert_eq!(begins, 7);
        assert_eq!(coord_count(VG_SCWARC_TO_REL), Some(5));
        assert_eq!(coord_count(26), None);
    }
}
