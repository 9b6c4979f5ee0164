//! VG's 3×3 matrices, stored as the API passes them: column-major
//! `[sx, shy, w0, shx, sy, w1, tx, ty, w2]`, so `x' = sx·x + shx·y + tx`.

/// A 3×3 matrix in VG's (column-major) layout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat3(pub [f32; 9]);

impl Mat3 {
    /// The identity.
    pub const IDENTITY: Mat3 = Mat3([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);

    /// Element at `row`, `col` (0-based).
    pub fn at(&self, row: usize, col: usize) -> f32 {
        self.0[col * 3 + row]
    }

    /// `self · other`: `other` applies first (VG's vgMultMatrix, vgTranslate, … all
    /// right-multiply the current matrix).
    pub fn mul(&self, other: &Mat3) -> Mat3 {
        let mut out = [0.0f32; 9];
        for row in 0..3 {
            for col in 0..3 {
                out[col * 3 + row] = (0..3).map(|k| self.at(row, k) * other.at(k, col)).sum();
            }
        }
        Mat3(out)
    }

    /// The same matrix with its last row forced to (0, 0, 1), as VG does for every matrix
    /// mode but the image one.
    pub fn affine(mut self) -> Mat3 {
        self.0[2] = 0.0;
        self.0[5] = 0.0;
        self.0[8] = 1.0;
        self
    }

    /// Translation by (tx, ty).
    pub fn translate(tx: f32, ty: f32) -> Mat3 {
        Mat3([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, tx, ty, 1.0])
    }

    /// Scale by (sx, sy).
    pub fn scale(sx: f32, sy: f32) -> Mat3 {
        Mat3([sx, 0.0, 0.0, 0.0, sy, 0.0, 0.0, 0.0, 1.0])
    }

    /// Shear: `x' = x + shx·y`, `y' = shy·x + y`.
    pub fn shear(shx: f32, shy: f32) -> Mat3 {
        Mat3([1.0, shy, 0.0, shx, 1.0, 0.0, 0.0, 0.0, 1.0])
    }

    /// Counter-clockwise rotation by `degrees`.
    pub fn rotate(degrees: f32) -> Mat3 {
        let (s, c) = degrees.to_radians().sin_cos();
        Mat3([c, s, 0.0, -s, c, 0.0, 0.0, 0.0, 1.0])
    }

    /// Applies the matrix to a point (with the projective divide).
    pub fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        let m = &self.0;
        let w = m[2] * x + m[5] * y + m[8];
        let w = if w == 0.0 { 1.0 } else { w };
        (
            (m[0] * x + m[3] * y + m[6]) / w,
            (m[1] * x + m[4] * y + m[7]) / w,
        )
    }

    /// The inverse, or `None` when the matrix is singular.
    pub fn inverse(&self) -> Option<Mat3> {
        let a = |r, c| self.at(r, c) as f64;
        let det = a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1))
            - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
            + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
        if det.abs() < 1e-12 || !det.is_finite() {
            return None;
        }
        let mut out = [0.0f32; 9];
        for row in 0..3 {
            for col in 0..3 {
                // Inverse = adjugate / det: element (row, col) is the cofactor of (col, row).
                let (r0, r1) = others(col);
                let (c0, c1) = others(row);
                let minor = a(r0, c0) * a(r1, c1) - a(r0, c1) * a(r1, c0);
                let sign = if (row + col) % 2 == 0 { 1.0 } else { -1.0 };
                out[col * 3 + row] = (sign * minor / det) as f32;
            }
        }
        Some(Mat3(out))
    }

    /// How much the matrix scales lengths at most (the larger singular value of its linear
    /// part), used to pick a flattening tolerance in user space.
    pub fn max_scale(&self) -> f32 {
        let m = &self.0;
        let (a, b, c, d) = (m[0], m[1], m[3], m[4]);
        let s1 = a * a + b * b + c * c + d * d;
        let det = a * d - b * c;
        let s2 = ((s1 * s1 - 4.0 * det * det).max(0.0)).sqrt();
        ((s1 + s2) / 2.0).sqrt()
    }
}

fn others(i: usize) -> (usize, usize) {
    match i {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translate_then_scale_applies_scale_first() {
        let m = Mat3::translate(10.0, 20.0).mul(&Mat3::scale(2.0, 3.0));
        assert_eq!(m.apply(1.0, 1.0), (12.0, 23.0));
    }

    #[test]
    fn inverse_round_trips() {
        let m = Mat3::translate(5.0, -3.0)
            .mul(&Mat3::rotate(30.0))
            .mul(&Mat3::scale(2.0, 0.5));
        let p = m.inverse().unwrap().mul(&m);
        for (x, y) in p.0.iter().zip(Mat3::IDENTITY.0.iter()) {
            assert!((x - y).abs() < 1e-5, "{p:?}");
        }
        assert!(Mat3::scale(0.0, 1.0).inverse().is_none());
    }

    #[test]
    fn rotation_is_counter_clockwise() {
        let (x, y) = Mat3::rotate(90.0).apply(1.0, 0.0);
        assert!(x.abs() < 1e-6 && (y - 1.0).abs() < 1e-6);
        assert!((Mat3::scale(3.0, 2.0).max_scale() - 3.0).abs() < 1e-5);
    }
}
