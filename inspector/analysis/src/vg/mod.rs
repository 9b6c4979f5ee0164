//! OpenVG thermal painting on the host. A VG context draws no GL fragments of its own that
//! the agent could count, so the coverage of each `vgDrawPath`, `vgDrawImage` and `vgClear`
//! is recomputed here from what the agent recorded (the path's segments, the matrix, the
//! stroke, the scissor): [`coverage`] tessellates and rasterizes one draw, [`complete`]
//! spreads each draw's serialized time over its pixels into the session's heat maps and
//! adds its triangles to the frame's geometry, and [`path_features`] summarizes a path.
//!
//! - `decode`: segments (all 13 types, absolute and relative) to a `lyon` path.
//! - `raster`: triangles to pixels, sampled at pixel centres with a tie rule.
//! - `coverage`: fill and stroke tessellation, clipping.
//! - `dash`: the stroke's dash pattern applied to the path.
//! - `paint`: session completion.

mod coverage;
mod dash;
mod decode;
mod paint;
mod raster;

pub use coverage::{coverage, Coverage, TOLERANCE_PX};
pub use paint::{complete, VgPainting};

use gpuheat_session::VgPath;

/// Segment types of OpenVG 1.1 (`VGPathSegment`, the command shifted right by one).
pub const SEGMENT_TYPES: usize = 13;

/// What a path is made of, for reports: how many segments of each type, its data type and
/// capabilities, and its extent in user space.
#[derive(Debug, Clone, PartialEq)]
pub struct PathFeatures {
    /// Segments per `VGPathSegment` (index = command >> 1: close, move, line, hline,
    /// vline, quad, cubic, squad, scubic, sccwarc, scwarc, lccwarc, lcwarc), absolute and
    /// relative together.
    pub segments: [u32; SEGMENT_TYPES],
    /// Coordinates the segments take.
    pub coords: usize,
    /// `VG_PATH_DATATYPE_*` the program created the path with.
    pub datatype: u32,
    /// `VG_PATH_CAPABILITY_*` bits.
    pub capabilities: u32,
    /// The tight extent of the geometry in user space (curve extrema, not control points):
    /// min x, min y, max x, max y; `None` for an empty path, an inconsistent record, or a
    /// non-finite coordinate.
    pub user_bounds: Option<[f32; 4]>,
}

/// The [`PathFeatures`] of one path record.
pub fn path_features(p: &VgPath) -> PathFeatures {
    let mut segments = [0u32; SEGMENT_TYPES];
    for &s in &p.segments {
        if let Some(n) = segments.get_mut(usize::from(s >> 1)) {
            *n += 1;
        }
    }
    PathFeatures {
        segments,
        coords: p.coords.len(),
        datatype: p.datatype,
        capabilities: p.capabilities,
        user_bounds: decode::decode(p)
            .ok()
            .flatten()
            .and_then(|path| decode::bounds(&path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_count_segments_and_bound_a_cubic_tightly() {
        // MOVE (0,0), CUBIC (0,100) (100,100) (100,0), LINE_REL (0,-10), CLOSE. The curve's
        // control points reach y = 100 but the curve itself only 75 (at t = ½).
        let p = VgPath {
            context: 1,
            path: 9,
            serial: 3,
            datatype: 3,
            capabilities: 0xfff,
            segments: vec![2, 12, 5, 0],
            coords: vec![0.0, 0.0, 0.0, 100.0, 100.0, 100.0, 100.0, 0.0, 0.0, -10.0],
        };
        let f = path_features(&p);
        let mut want = [0u32; SEGMENT_TYPES];
        want[0] = 1;
        want[1] = 1;
        want[2] = 1;
        want[6] = 1;
        assert_eq!(f.segments, want);
        assert_eq!(f.coords, 10);
        assert_eq!((f.datatype, f.capabilities), (3, 0xfff));
        let b = f.user_bounds.unwrap();
        for (got, exp) in b.iter().zip([0.0, -10.0, 100.0, 75.0]) {
            assert!((got - exp).abs() < 1e-3, "{b:?}");
        }
    }

    #[test]
    fn features_of_a_bad_record_have_no_bounds() {
        let p = VgPath {
            context: 1,
            path: 9,
            serial: 3,
            datatype: 3,
            capabilities: 0,
            segments: vec![2, 4],
            coords: vec![0.0, 0.0, 1.0],
        };
        let f = path_features(&p);
        assert_eq!(f.user_bounds, None);
        assert_eq!(f.segments[1..3], [1, 1]);
    }
}
