//! OpenVG records: what the agent adds to a frame's calls when a program draws with OpenVG.
//!
//! - [`VgCall`]: one VG call of a captured frame that drew, uploaded pixels, passed values by
//!   pointer, or made calls of its own
//!   (a VG library layered on GLES makes GL calls inside each VG call: they are its
//!   `children`, recorded in the frame like any call but not counted again at the top).
//! - [`VgPath`]: the data of a path as the program built it, sent once per version, so the
//!   inspector can recompute what a draw covered (tessellation on the host).
//!
//! Both are stored as postcard: field order is the format.

use serde::{Deserialize, Serialize};

/// Most children one [`VgCall`] may list, and most coordinates one [`VgPath`] may hold: caps
/// that keep a damaged record from asking for huge allocations.
pub const MAX_VG_CHILDREN: usize = 1 << 20;
/// See [`MAX_VG_CHILDREN`].
pub const MAX_VG_PATH_COORDS: usize = 16 << 20;

/// One VG call of a captured frame with something more to say than its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VgCall {
    /// The frame, as in [`crate::Frame::index`].
    pub frame: u64,
    /// The context current during the call, as in [`crate::ContextInfo::handle`].
    pub context: u64,
    /// Index of the VG call in its frame's [`crate::Frame::calls`].
    pub call: u32,
    /// Indices (in the same frame) of the calls the VG library made inside this one, in
    /// call order: the GL calls of a VG library layered on GLES.
    pub children: Vec<u32>,
    /// What the call drew, for the VG draws (`vgDrawPath`, `vgDrawImage`, `vgClear`).
    pub draw: Option<VgDraw>,
    /// For the calls that upload pixels (`vgImageSubData`, `vgWritePixels`): FNV-1a 64 of
    /// the bytes uploaded, rows as the call read them, so the same data uploaded again shows.
    pub upload: Option<u64>,
    /// For the calls that pass an array of values by pointer (`vgLoadMatrix`,
    /// `vgMultMatrix`, `vgSetfv`, `vgSetiv`, `vgSetParameterfv`, `vgSetParameteriv`): the
    /// values, integers converted to `f32`; empty otherwise.
    pub values: Vec<f32>,
}

/// What a VG draw covered, as the agent saw the VG state at the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VgDraw {
    /// `vgDrawPath`.
    Path(VgPathDraw),
    /// `vgDrawImage`.
    Image(VgImageDraw),
    /// `vgClear` (and the other calls that fill a surface rectangle): x, y, width, height
    /// in surface pixels, origin bottom left.
    Rect([i32; 4]),
}

/// A `vgDrawPath`, with the state that decides its coverage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VgPathDraw {
    /// The path handle.
    pub path: u64,
    /// The version of the path's data drawn ([`VgPath::serial`]); 0 when its data is not
    /// known (the path was built before the agent arrived, or its data was over budget).
    pub serial: u64,
    /// `VG_STROKE_PATH` (1), `VG_FILL_PATH` (2) or both (as OpenVG 1.1 numbers them).
    pub paint_modes: u32,
    /// The path-user-to-surface matrix, as `vgGetMatrix` returns it (column-major:
    /// sx, shy, w0, shx, sy, w1, tx, ty, w2).
    pub matrix: [f32; 9],
    /// `VG_EVEN_ODD` (0x1900) or `VG_NON_ZERO` (0x1901).
    pub fill_rule: u32,
    /// The stroke parameters.
    pub stroke: VgStroke,
    /// Bounding box on the surface (min x, min y, max x, max y) from
    /// `vgPathTransformedBounds`, when the path allows it and its data is not known.
    pub bounds: Option<[f32; 4]>,
    /// The scissor rectangles (x, y, width, height) when scissoring is on; empty when off.
    pub scissor: Vec<[i32; 4]>,
}

/// The stroke parameters of a context at a draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VgStroke {
    /// `VG_STROKE_LINE_WIDTH`, in user units.
    pub width: f32,
    /// `VG_STROKE_CAP_STYLE`: `VG_CAP_BUTT` (0x1700), `_ROUND`, `_SQUARE`.
    pub cap: u32,
    /// `VG_STROKE_JOIN_STYLE`: `VG_JOIN_MITER` (0x1800), `_ROUND`, `_BEVEL`.
    pub join: u32,
    /// `VG_STROKE_MITER_LIMIT`.
    pub miter_limit: f32,
    /// `VG_STROKE_DASH_PATTERN` (empty: solid).
    pub dash: Vec<f32>,
    /// `VG_STROKE_DASH_PHASE`.
    pub dash_phase: f32,
}

/// A `vgDrawImage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VgImageDraw {
    /// The image handle.
    pub image: u64,
    /// `VG_IMAGE_WIDTH`, `VG_IMAGE_HEIGHT`.
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// `VG_IMAGE_FORMAT`, a `VGImageFormat`.
    pub format: u32,
    /// The image-user-to-surface matrix (column-major, as [`VgPathDraw::matrix`]).
    pub matrix: [f32; 9],
}

/// The data of a path: its segments and their coordinates, as appended by the program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VgPath {
    /// The context the path was created in.
    pub context: u64,
    /// The path handle.
    pub path: u64,
    /// Changes with every change of the data; [`VgPathDraw::serial`] refers to it.
    pub serial: u64,
    /// `VG_PATH_DATATYPE_S_8` (0), `_S_16`, `_S_32`, `_F` (3).
    pub datatype: u32,
    /// `VG_PATH_CAPABILITY_*` bits the path was created with, less those removed since.
    pub capabilities: u32,
    /// Segment commands as the program gave them (`VGPathSegment | VGPathAbsRel`).
    pub segments: Vec<u8>,
    /// Every coordinate, in segment order, with the path's scale and bias applied.
    pub coords: Vec<f32>,
}

impl VgPath {
    /// Coordinates taken by the segment command `command` (the abs/rel bit ignored), or
    /// `None` for a command OpenVG 1.1 does not define.
    pub fn coords_of(command: u8) -> Option<usize> {
        Some(match command >> 1 {
            0 => 0,      // VG_CLOSE_PATH
            1 | 2 => 2,  // VG_MOVE_TO, VG_LINE_TO
            3 | 4 => 1,  // VG_HLINE_TO, VG_VLINE_TO
            5 => 4,      // VG_QUAD_TO
            6 => 6,      // VG_CUBIC_TO
            7 => 2,      // VG_SQUAD_TO
            8 => 4,      // VG_SCUBIC_TO
            9..=12 => 5, // VG_SCCWARC_TO, VG_SCWARC_TO, VG_LCCWARC_TO, VG_LCWARC_TO
            _ => return None,
        })
    }

    /// Checks that the coordinates are exactly those the segments take, within the caps.
    pub fn validate(&self) -> Result<(), String> {
        if self.coords.len() > MAX_VG_PATH_COORDS {
            return Err(format!("path {:#x}: too many coordinates", self.path));
        }
        let mut n = 0usize;
        for &s in &self.segments {
            n += Self::coords_of(s)
                .ok_or_else(|| format!("path {:#x}: unknown segment {s:#x}", self.path))?;
        }
        if n != self.coords.len() {
            return Err(format!(
                "path {:#x}: segments take {n} coordinates, {} recorded",
                self.path,
                self.coords.len()
            ));
        }
        Ok(())
    }
}

impl VgCall {
    /// Checks the children against their cap and that each comes after the call.
    pub fn validate(&self) -> Result<(), String> {
        if self.children.len() > MAX_VG_CHILDREN {
            return Err(format!("call {}: too many children", self.call));
        }
        if self.children.iter().any(|&c| c <= self.call) {
            return Err(format!("call {}: a child precedes it", self.call));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_per_segment_follow_the_specification() {
        // (VGPathSegment, coordinates) from OpenVG 1.1 table 8; the low bit is abs/rel.
        let table = [
            (0u8, 0usize),
            (2, 2),
            (4, 2),
            (6, 1),
            (8, 1),
            (10, 4),
            (12, 6),
            (14, 2),
            (16, 4),
            (18, 5),
            (20, 5),
            (22, 5),
            (24, 5),
        ];
        for (seg, n) in table {
            assert_eq!(VgPath::coords_of(seg), Some(n));
            assert_eq!(VgPath::coords_of(seg | 1), Some(n));
        }
        assert_eq!(VgPath::coords_of(26), None);
    }

    #[test]
    fn a_path_validates_its_coordinate_count() {
        let mut p = VgPath {
            context: 1,
            path: 2,
            serial: 1,
            datatype: 3,
            capabilities: 0,
            segments: vec![2, 4, 4, 0],
            coords: vec![0.0; 6],
        };
        assert!(p.validate().is_ok());
        p.coords.pop();
        assert!(p.validate().is_err());
        p.segments.push(40);
        assert!(p.validate().is_err());
    }
}
