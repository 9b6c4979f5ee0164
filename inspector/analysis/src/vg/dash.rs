//! Dashing: a path cut into the "on" intervals of the stroke's dash pattern, before the
//! stroke is tessellated.

use lyon_path::iterator::PathIterator;
use lyon_path::math::Point;
use lyon_path::{Event, Path};

/// `path` cut into the "on" intervals of `pattern` (on, off, on… lengths, user units;
/// negative ones count as 0 and an odd last one is ignored, as OpenVG says), starting
/// `phase` into it; `None` when the pattern leaves the stroke solid. The pattern carries on
/// from one subpath to the next (`VG_DASH_PHASE_RESET` defaults to false and is not
/// recorded); a dash never bridges two subpaths. Each dash is an open subpath, capped at
/// both ends.
pub(crate) fn dash(path: &Path, pattern: &[f32], phase: f32, tolerance: f32) -> Option<Path> {
    let pattern: Vec<f32> = pattern[..pattern.len() / 2 * 2]
        .iter()
        .map(|v| if v.is_finite() { v.max(0.0) } else { 0.0 })
        .collect();
    let total: f32 = pattern.iter().sum();
    if pattern.is_empty() || !(total > 0.0 && total.is_finite()) {
        return None;
    }
    let phase = if phase.is_finite() { phase } else { 0.0 };
    let mut d = Dasher {
        pattern: &pattern,
        index: 0,
        left: 0.0,
        open: false,
        b: Path::builder(),
    };
    d.start(phase.rem_euclid(total));
    for event in path.iter().flattened(tolerance) {
        match event {
            Event::Line { from, to } => d.walk(from, to),
            Event::End { last, first, close } => {
                if close {
                    d.walk(last, first);
                }
                d.stop();
            }
            _ => {}
        }
    }
    d.stop();
    Some(d.b.build())
}

/// Where the dash walker is in the pattern, and whether a dash is open.
struct Dasher<'a> {
    pattern: &'a [f32],
    index: usize,
    /// What remains of the current pattern entry.
    left: f32,
    open: bool,
    b: lyon_path::path::Builder,
}

impl Dasher<'_> {
    /// Starts `into` user units into the pattern (0 ≤ into < its total).
    fn start(&mut self, mut into: f32) {
        let mut i = 0;
        // Bounded by the pattern's length: the total exceeds `into`.
        for _ in 0..self.pattern.len() {
            if into < self.pattern[i] {
                break;
            }
            into -= self.pattern[i];
            i = (i + 1) % self.pattern.len();
        }
        self.index = i;
        self.left = self.pattern[i] - into;
    }

    fn stop(&mut self) {
        if self.open {
            self.b.end(false);
            self.open = false;
        }
    }

    /// Walks the segment from → to, adding the parts under "on" intervals.
    fn walk(&mut self, from: Point, to: Point) {
        let len = (to - from).length();
        if len.is_nan() || len <= 0.0 {
            return;
        }
        let mut pos = 0.0;
        // Zero-length entries advance the index without moving; a segment crosses at most
        // one whole pattern per its total length, so this bounds the loop.
        let mut steps = 0usize;
        while pos < len && steps < 1 << 24 {
            steps += 1;
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

#[cfg(test)]
mod tests {
    //! Expected dashes worked out by hand from the OpenVG 1.1 rules (section 8.7.4), not
    //! from the OpenVG fixture library's dasher, which this walker shares its shape with: a
    //! fault common to both would pass any comparison of the two.

    use super::dash;
    use lyon_path::math::point;
    use lyon_path::{Event, Path};

    /// The dashes of `path`, each the points of its polyline.
    fn dashes(path: &Path, pattern: &[f32], phase: f32) -> Vec<Vec<[f32; 2]>> {
        let d = dash(path, pattern, phase, 0.01).expect("a dashing pattern");
        let mut out: Vec<Vec<[f32; 2]>> = Vec::new();
        for e in d.iter() {
            match e {
                Event::Begin { at } => out.push(vec![at.to_array()]),
                Event::Line { to, .. } => out.last_mut().unwrap().push(to.to_array()),
                Event::End { close, .. } => assert!(!close, "a dash is open"),
                other => panic!("a dash is made of lines: {other:?}"),
            }
        }
        out
    }

    fn assert_close(got: &[Vec<[f32; 2]>], want: &[&[[f32; 2]]]) {
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.len(), w.len(), "{got:?}");
            for (a, b) in g.iter().zip(*w) {
                assert!(
                    (a[0] - b[0]).abs() < 1e-4 && (a[1] - b[1]).abs() < 1e-4,
                    "{got:?}"
                );
            }
        }
    }

    #[test]
    fn dashes_turn_corners_and_the_closing_side_is_dashed() {
        // A closed 40 × 40 square (perimeter 160) under [50 on, 10 off]: on over 0–50,
        // 60–110 and 120–160 of the outline, the first two round a corner each; the last
        // runs down the closing side and stops where the subpath does.
        let mut b = Path::builder();
        b.begin(point(0.0, 0.0));
        b.line_to(point(40.0, 0.0));
        b.line_to(point(40.0, 40.0));
        b.line_to(point(0.0, 40.0));
        b.end(true);
        let got = dashes(&b.build(), &[50.0, 10.0], 0.0);
        assert_close(
            &got,
            &[
                &[[0.0, 0.0], [40.0, 0.0], [40.0, 10.0]],
                &[[40.0, 20.0], [40.0, 40.0], [10.0, 40.0]],
                &[[0.0, 40.0], [0.0, 0.0]],
            ],
        );
    }

    #[test]
    fn the_pattern_carries_on_into_the_next_subpath_and_a_negative_phase_wraps() {
        // Two 15-long lines under [10, 10]: 0–10 on; the off interval's last 5 units fall
        // at the start of the second line (VG_DASH_PHASE_RESET is false).
        let mut b = Path::builder();
        b.begin(point(0.0, 0.0));
        b.line_to(point(15.0, 0.0));
        b.end(false);
        b.begin(point(0.0, 10.0));
        b.line_to(point(15.0, 10.0));
        b.end(false);
        let two = b.build();
        assert_close(
            &dashes(&two, &[10.0, 10.0], 0.0),
            &[&[[0.0, 0.0], [10.0, 0.0]], &[[5.0, 10.0], [15.0, 10.0]]],
        );
        // Phase −5 is phase 15 (a whole pattern added): 5 off first, then on 5–15, 25–30.
        let mut b = Path::builder();
        b.begin(point(0.0, 0.0));
        b.line_to(point(30.0, 0.0));
        b.end(false);
        assert_close(
            &dashes(&b.build(), &[10.0, 10.0], -5.0),
            &[&[[5.0, 0.0], [15.0, 0.0]], &[[25.0, 0.0], [30.0, 0.0]]],
        );
    }
}
