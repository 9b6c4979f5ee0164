//! The image filters (`vgColorMatrix`, `vgConvolve`, `vgSeparableConvolve`,
//! `vgGaussianBlur`, `vgLookup`, `vgLookupSingle`) on the CPU copies of images, in
//! non-premultiplied colour from 0 to 1 (the filter format parameters and the channel
//! mask are not applied), and the VGU warp matrices.

use crate::consts::*;

/// A source image for filtering: RGBA8 rows, bottom first.
pub struct Src<'a> {
    /// The pixels.
    pub pixels: &'a [u8],
    /// Width.
    pub width: i32,
    /// Height.
    pub height: i32,
}

impl Src<'_> {
    /// Pixel (x, y) as floats, coordinates outside handled by `tiling`
    /// (`VG_TILE_FILL` gives `fill`).
    pub fn at(&self, x: i32, y: i32, tiling: VGenum, fill: [f32; 4]) -> [f32; 4] {
        let wrap = |v: i32, n: i32| -> Option<i32> {
            if (0..n).contains(&v) {
                return Some(v);
            }
            match tiling {
                VG_TILE_PAD => Some(v.clamp(0, n - 1)),
                VG_TILE_REPEAT => Some(v.rem_euclid(n)),
                VG_TILE_REFLECT => {
                    let m = v.rem_euclid(2 * n);
                    Some(if m < n { m } else { 2 * n - 1 - m })
                }
                _ => None,
            }
        };
        match (wrap(x, self.width), wrap(y, self.height)) {
            (Some(x), Some(y)) => {
                let i = (y as usize * self.width as usize + x as usize) * 4;
                let p = &self.pixels[i..i + 4];
                [0, 1, 2, 3].map(|c| p[c] as f32 / 255.0)
            }
            _ => fill,
        }
    }
}

/// Float colour to RGBA8 (clamped).
pub fn to_u8(c: [f32; 4]) -> [u8; 4] {
    c.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
}

/// `w × h` pixels computed by `f(x, y)`, as RGBA8 rows.
pub fn generate(w: i32, h: i32, mut f: impl FnMut(i32, i32) -> [f32; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(w.max(0) as usize * h.max(0) as usize * 4);
    for y in 0..h {
        for x in 0..w {
            out.extend_from_slice(&to_u8(f(x, y)));
        }
    }
    out
}

/// A 4×5 colour matrix (column-major, 20 values) applied to one colour.
pub fn color_matrix(m: &[f32], c: [f32; 4]) -> [f32; 4] {
    [0, 1, 2, 3].map(|row| {
        m[row] * c[0] + m[4 + row] * c[1] + m[8 + row] * c[2] + m[12 + row] * c[3] + m[16 + row]
    })
}

/// Convolution of `src` at (x, y) with a `kw × kh` kernel given column-major (`k(i, j)`),
/// shifted by (sx, sy): `Σ k(kw−1−i, kh−1−j) · src(x + i − sx, y + j − sy)`, then
/// `· scale + bias`.
#[allow(clippy::too_many_arguments)]
pub fn convolve_at(
    src: &Src,
    x: i32,
    y: i32,
    (kw, kh): (i32, i32),
    (sx, sy): (i32, i32),
    k: &dyn Fn(i32, i32) -> f32,
    scale: f32,
    bias: f32,
    tiling: VGenum,
    fill: [f32; 4],
) -> [f32; 4] {
    let mut sum = [0.0f32; 4];
    for i in 0..kw {
        for j in 0..kh {
            let w = k(kw - 1 - i, kh - 1 - j);
            if w == 0.0 {
                continue;
            }
            let p = src.at(x + i - sx, y + j - sy, tiling, fill);
            for c in 0..4 {
                sum[c] += w * p[c];
            }
        }
    }
    sum.map(|v| v * scale + bias)
}

/// A normalised Gaussian kernel of standard deviation `sigma`, radius ⌈3σ⌉.
pub fn gaussian(sigma: f32) -> Vec<f32> {
    let r = (3.0 * sigma).ceil().max(1.0) as i32;
    let k: Vec<f32> = (-r..=r)
        .map(|i| (-(i * i) as f32 / (2.0 * sigma * sigma)).exp())
        .collect();
    let total: f32 = k.iter().sum();
    k.into_iter().map(|v| v / total).collect()
}

/// The projective matrix (VG layout) taking the unit square's corners (0,0), (1,0),
/// (0,1), (1,1) to `q` in that order, or `None` when the quad is degenerate.
pub fn square_to_quad(q: [[f32; 2]; 4]) -> Option<[f32; 9]> {
    // Heckbert's construction, with the corners taken around the square.
    let (p0, p1, p2, p3) = (q[0], q[1], q[3], q[2]);
    let sx = p0[0] - p1[0] + p2[0] - p3[0];
    let sy = p0[1] - p1[1] + p2[1] - p3[1];
    let (a, b, c, d, e, f, g, h);
    if sx == 0.0 && sy == 0.0 {
        (a, b, c) = (p1[0] - p0[0], p2[0] - p1[0], p0[0]);
        (d, e, f) = (p1[1] - p0[1], p2[1] - p1[1], p0[1]);
        (g, h) = (0.0, 0.0);
    } else {
        let (dx1, dx2) = (p1[0] - p2[0], p3[0] - p2[0]);
        let (dy1, dy2) = (p1[1] - p2[1], p3[1] - p2[1]);
        let det = dx1 * dy2 - dx2 * dy1;
        if det == 0.0 {
            return None;
        }
        g = (sx * dy2 - dx2 * sy) / det;
        h = (dx1 * sy - sx * dy1) / det;
        (a, b, c) = (p1[0] - p0[0] + g * p1[0], p3[0] - p0[0] + h * p3[0], p0[0]);
        (d, e, f) = (p1[1] - p0[1] + g * p1[1], p3[1] - p0[1] + h * p3[1], p0[1]);
    }
    let m = [a, d, g, b, e, h, c, f, 1.0];
    let det = crate::matrix::Mat3(m).inverse();
    det.map(|_| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Mat3;

    #[test]
    fn warp_maps_the_square_corners() {
        let q = [[10.0, 10.0], [50.0, 20.0], [5.0, 40.0], [60.0, 70.0]];
        let m = Mat3(square_to_quad(q).unwrap());
        for (corner, want) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
            .iter()
            .zip(q)
        {
            let (x, y) = m.apply(corner.0, corner.1);
            assert!(
                (x - want[0]).abs() < 1e-3 && (y - want[1]).abs() < 1e-3,
                "{x},{y}"
            );
        }
        assert!(square_to_quad([[0.0, 0.0]; 4]).is_none());
    }

    #[test]
    fn gaussian_sums_to_one_and_tiling_wraps() {
        let k = gaussian(1.5);
        assert_eq!(k.len(), 11);
        assert!((k.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        let px = [0u8, 0, 0, 0, 255, 255, 255, 255];
        let s = Src {
            pixels: &px,
            width: 2,
            height: 1,
        };
        assert_eq!(s.at(2, 0, VG_TILE_REPEAT, [0.5; 4])[0], 0.0);
        assert_eq!(s.at(2, 0, VG_TILE_REFLECT, [0.5; 4])[0], 1.0);
        assert_eq!(s.at(-1, 0, VG_TILE_PAD, [0.5; 4])[0], 0.0);
        assert_eq!(s.at(0, 5, VG_TILE_FILL, [0.5; 4])[0], 0.5);
        let m: Vec<f32> = (0..20)
            .map(|i| if i % 5 == 0 { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(color_matrix(&m, [0.1, 0.2, 0.3, 0.4]), [0.1, 0.2, 0.3, 0.4]);
    }
}
