//! Triangles to pixels, the way GL samples them and the way `crate::measure::pick` recovers them:
//! vertices snapped to 1/256 pixel, a pixel covered when its centre (x + ½, y + ½) is inside
//! a triangle, and a centre exactly on an edge going to one side only (the top-left rule),
//! so triangles sharing an edge never both claim it.

/// Sub-pixel steps per pixel of the snapped vertices (8 bits, as `crate::measure::pick` and
/// llvmpipe).
const SUBPIXEL: i64 = 256;
/// Snapped coordinates are clamped to ±2^50 sub-pixel units (2^42 pixels, far outside any
/// surface) so the edge functions fit `i128`.
const LIMIT: i64 = 1 << 50;

/// A vertex in window coordinates snapped to 1/256 pixel; `None` when not finite.
pub(crate) fn snap(v: [f64; 2]) -> Option<[i64; 2]> {
    v.iter()
        .all(|c| c.is_finite())
        .then(|| v.map(|c| ((c * SUBPIXEL as f64).round() as i64).clamp(-LIMIT, LIMIT)))
}

/// Pixels of a window of the surface, one byte each (0 or 1), row-major, bottom row first.
#[derive(Debug, Clone)]
pub(crate) struct Mask {
    /// The window: x0, y0, x1, y1 (exclusive), surface pixels.
    pub region: [i64; 4],
    /// 1 where covered.
    pub bits: Vec<u8>,
}

impl Mask {
    /// An empty mask over `region` (x0 ≤ x1, y0 ≤ y1).
    pub fn new(region: [i64; 4]) -> Mask {
        let n = (region[2] - region[0]).max(0) * (region[3] - region[1]).max(0);
        Mask {
            region,
            bits: vec![0; n as usize],
        }
    }

    fn width(&self) -> i64 {
        self.region[2] - self.region[0]
    }

    /// Marks the pixels whose centres triangle (a, b, c) covers (either winding); the
    /// vertices are snapped ([`snap`]).
    pub fn triangle(&mut self, t: [[i64; 2]; 3]) {
        let mut v = t;
        let area = cross(v[0], v[1], v[2]);
        if area == 0 {
            return;
        }
        // Counter-clockwise (y up), so the inside is left of every edge.
        if area < 0 {
            v.swap(1, 2);
        }
        let edges = [(v[0], v[1]), (v[1], v[2]), (v[2], v[0])];
        let ymin = v.iter().map(|p| p[1]).min().unwrap_or(0);
        let ymax = v.iter().map(|p| p[1]).max().unwrap_or(0);
        // Rows whose centre (2y + 1)·128 lies in [ymin, ymax].
        let half = SUBPIXEL / 2;
        let r = self.region;
        let y0 = (ymin - half).div_euclid(SUBPIXEL);
        let y0 = if y0 * SUBPIXEL + half < ymin {
            y0 + 1
        } else {
            y0
        }
        .max(r[1]);
        let y1 = ((ymax - half).div_euclid(SUBPIXEL) + 1).min(r[3]);
        let w = self.width();
        for y in y0..y1 {
            let yc = y * SUBPIXEL + half;
            // Where the row's centre line crosses the triangle (in floating point, widened by
            // a pixel), so that the exact test below decides every centre near an edge.
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for &(a, b) in &edges {
                if yc < a[1].min(b[1]) || yc > a[1].max(b[1]) {
                    continue;
                }
                let (ax, bx) = (a[0] as f64, b[0] as f64);
                if a[1] == b[1] {
                    lo = lo.min(ax.min(bx));
                    hi = hi.max(ax.max(bx));
                } else {
                    let x = ax + (yc - a[1]) as f64 * (bx - ax) / (b[1] - a[1]) as f64;
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
            if lo > hi {
                continue;
            }
            let px = |s: f64| (s / SUBPIXEL as f64 - 0.5) as i64;
            let x0 = px(lo).saturating_sub(2).max(r[0]);
            let x1 = px(hi).saturating_add(2).min(r[2]);
            let row = ((y - r[1]) * w) as usize;
            for x in x0..x1 {
                let p = [x * SUBPIXEL + half, yc];
                if edges.iter().all(|&(a, b)| inside(a, b, p)) {
                    self.bits[row + (x - r[0]) as usize] = 1;
                }
            }
        }
    }

    /// Clears every pixel outside the union of `rects` (x, y, width, height).
    pub fn scissor(&mut self, rects: &[[i32; 4]]) {
        let r = self.region;
        let w = self.width();
        for y in r[1]..r[3] {
            for x in r[0]..r[2] {
                let kept = rects.iter().any(|s| {
                    let (sx, sy) = (i64::from(s[0]), i64::from(s[1]));
                    x >= sx
                        && y >= sy
                        && x < sx + i64::from(s[2].max(0))
                        && y < sy + i64::from(s[3].max(0))
                });
                if !kept {
                    self.bits[((y - r[1]) * w + (x - r[0])) as usize] = 0;
                }
            }
        }
    }
}

/// (b − a) × (p − a): twice the signed area of (a, b, p), positive when counter-clockwise
/// with y up. Exact: the clamped coordinates keep the products within `i128`.
fn cross(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> i128 {
    let d = |u: i64, v: i64| i128::from(u) - i128::from(v);
    d(b[0], a[0]) * d(p[1], a[1]) - d(b[1], a[1]) * d(p[0], a[0])
}

/// Whether `p` is inside edge a → b of a counter-clockwise triangle, a centre exactly on the
/// edge counting for left edges (running down) and top edges (running right to left), the
/// rule `crate::measure::pick` applies: of two triangles sharing an edge, exactly one claims it.
fn inside(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> bool {
    let e = cross(a, b, p);
    if e != 0 {
        return e > 0;
    }
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    dy < 0 || (dy == 0 && dx < 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A triangle given in pixels, snapped.
    fn tri(t: [[f32; 2]; 3]) -> [[i64; 2]; 3] {
        t.map(|p| snap([f64::from(p[0]), f64::from(p[1])]).unwrap())
    }

    fn count(m: &Mask) -> usize {
        m.bits.iter().map(|&b| usize::from(b)).sum()
    }

    #[test]
    fn a_square_split_in_two_counts_each_pixel_once() {
        // The diagonal passes through pixel centres (i + ½, i + ½): each goes to one side.
        let mut m = Mask::new([0, 0, 16, 16]);
        let t1 = [[0.5, 0.5], [8.5, 0.5], [8.5, 8.5]];
        let t2 = [[0.5, 0.5], [8.5, 8.5], [0.5, 8.5]];
        let mut both = Mask::new([0, 0, 16, 16]);
        m.triangle(tri(t1));
        let a = count(&m);
        both.triangle(tri(t1));
        both.triangle(tri(t2));
        let mut only2 = Mask::new([0, 0, 16, 16]);
        only2.triangle(tri(t2));
        // Disjoint halves, together the 8 × 8 centres of the square's half-open area.
        assert_eq!(a + count(&only2), 64);
        assert_eq!(count(&both), 64);
    }

    #[test]
    fn a_fan_around_a_pixel_centre_claims_it_once() {
        let c = [4.5f32, 4.5];
        let ring = [[1.0f32, 1.0], [8.0, 1.0], [8.0, 8.0], [1.0, 8.0]];
        let mut total = 0;
        for i in 0..4 {
            let mut m = Mask::new([0, 0, 10, 10]);
            m.triangle(tri([c, ring[i], ring[(i + 1) % 4]]));
            total += m.bits[4 * 10 + 4] as usize;
        }
        assert_eq!(total, 1);
    }

    #[test]
    fn scissoring_keeps_the_union_of_rectangles() {
        let mut m = Mask::new([0, 0, 10, 10]);
        m.triangle(tri([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]));
        m.triangle(tri([[0.0, 0.0], [10.0, 10.0], [0.0, 10.0]]));
        assert_eq!(count(&m), 100);
        m.scissor(&[[0, 0, 3, 3], [2, 2, 3, 3]]);
        assert_eq!(count(&m), 9 + 9 - 1);
    }
}
