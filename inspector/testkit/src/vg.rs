//! The OpenVG side of the builder: VG entry points as a capture's function table holds them,
//! the `VGCL` records of VG calls and the `VGPA` path data the agent sends.

use crate::builder::{FrameBuilder, SessionBuilder, CONTEXT};
use gpuheat_session::{VgCall, VgDraw, VgPath, VgPathDraw, VgStroke};

/// The identity matrix, column-major as `vgLoadMatrix` takes it.
pub const IDENTITY: [f32; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

/// What a `vgDrawPath(path, VG_FILL_PATH)` of data version `serial` records: the identity
/// matrix, `VG_EVEN_ODD`, the default stroke, no scissor; tests change the fields they need.
pub fn path_draw(path: u64, serial: u64) -> VgPathDraw {
    VgPathDraw {
        path,
        serial,
        paint_modes: 2,
        matrix: IDENTITY,
        fill_rule: 0x1900,
        stroke: VgStroke {
            width: 1.0,
            cap: 0x1700,
            join: 0x1800,
            miter_limit: 4.0,
            dash: Vec::new(),
            dash_phase: 0.0,
        },
        bounds: None,
        scissor: Vec::new(),
    }
}

impl SessionBuilder {
    /// Records the data of path `path` (on [`CONTEXT`]), version `serial`, as the agent sends
    /// it: `segments` (VG segment commands) with every coordinate 1.0, for the rules that
    /// count segments; a test that paints a path sets `coords` in the built session.
    pub fn vg_path(mut self, path: u64, serial: u64, capabilities: u32, segments: Vec<u8>) -> Self {
        let coords = segments
            .iter()
            .map(|&s| VgPath::coords_of(s).expect("a VG segment command"))
            .sum();
        self.session_mut().vg_paths.push(VgPath {
            context: CONTEXT,
            path,
            serial,
            datatype: 3,
            capabilities,
            segments,
            coords: vec![1.0; coords],
        });
        self
    }
}

impl FrameBuilder<'_> {
    /// The OpenVG record of call `call` (made, empty, on first use): its GL children, draw,
    /// upload and the values it passed by pointer.
    pub fn vg_record(&mut self, call: u32) -> &mut VgCall {
        let i = match self.vg.iter().position(|v| v.call == call) {
            Some(i) => i,
            None => {
                self.vg.push(VgCall {
                    frame: self.frame.index,
                    context: self.context,
                    call,
                    children: Vec::new(),
                    draw: None,
                    upload: None,
                    values: Vec::new(),
                });
                self.vg.len() - 1
            }
        };
        &mut self.vg[i]
    }

    /// A VG call of `name` passing `values` by pointer (`vgLoadMatrix`, `vgSetfv`…).
    pub fn vg_values(&mut self, name: &str, args: &[u64], values: &[f32]) -> u32 {
        let c = self.call(name, args);
        self.vg_record(c).values = values.to_vec();
        c
    }

    /// `vgImageSubData` of a `w`×`h` `VG_sRGBA_8888` region of `image` whose pixels hash to
    /// `hash`.
    pub fn vg_upload(&mut self, image: u64, w: u64, h: u64, hash: u64) -> u32 {
        let c = self.call("vgImageSubData", &[image, 0x1000, w * 4, 1, 0, 0, w, h]);
        self.vg_record(c).upload = Some(hash);
        c
    }

    /// `vgDrawPath(path, VG_FILL_PATH)` of data version `serial`, drawn as [`path_draw`] says;
    /// paint its pixels with [`FrameBuilder::cover`] or [`FrameBuilder::cover_pixels`].
    pub fn vg_draw_path(&mut self, path: u64, serial: u64) -> u32 {
        let c = self.call("vgDrawPath", &[path, 2]);
        self.vg_record(c).draw = Some(VgDraw::Path(path_draw(path, serial)));
        c
    }
}
