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
