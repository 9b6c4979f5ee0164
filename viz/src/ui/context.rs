//! What every panel reads besides the state: the [`Context`] the app fills in each frame (the
//! session, the view's texture, the mesh, the comparison, the map shown), the symbol cache,
//! and the colours the panels share. The panels' leaf: `mod.rs` lays them out above it.

use crate::diff::{DiffData, DiffImages};
use crate::live::Live;
use crate::load::{Loaded, Stage};
use crate::mesh_pass::MeshDraw;
use crate::targets::{ShownMap, Thumbnails};
use gpuheat_analysis::palette::Palette;
use gpuheat_session::ModuleMap;
use gpuheat_symbols::Symbolizer;
use std::collections::HashMap;

/// The current frame's mesh, as the UI describes it.
#[derive(Default)]
pub struct MeshInfo {
    /// By slot.
    pub draws: Vec<MeshDraw>,
    /// Work calls of the frame without triangles in the mesh.
    pub without_geometry: usize,
    /// Draws with geometry but no triangles (points, lines): not shown.
    pub untriangled: usize,
    /// The frame had no geometry record at all.
    pub no_record: bool,
    /// Triangles left out (a vertex behind the eye).
    pub clipped: u64,
    /// Metric range over the mesh's draws (the legend's ends).
    pub range: Option<(f64, f64)>,
}

/// Source locations, resolved on demand (loading DWARF is slow) and remembered.
pub struct Symbols {
    modules: Option<ModuleMap>,
    symbolizer: Option<Symbolizer>,
    cache: HashMap<u64, String>,
}

impl Symbols {
    pub fn new() -> Symbols {
        Symbols {
            modules: None,
            symbolizer: None,
            cache: HashMap::new(),
        }
    }

    pub fn resolve(&mut self, loaded: &Loaded, addr: u64) -> String {
        if let Some(s) = self.cache.get(&addr) {
            return s.clone();
        }
        let text = match &loaded.session.modules {
            Some(map) => {
                if self.modules.as_ref() != Some(map) {
                    self.modules = Some(map.clone());
                    self.symbolizer = Some(Symbolizer::new(map));
                }
                match &mut self.symbolizer {
                    Some(s) => s.resolve(addr).to_string(),
                    None => format!("{addr:#x}"),
                }
            }
            None => format!("{addr:#x} (the session has no module map)"),
        };
        self.cache.insert(addr, text.clone());
        text
    }
}

/// What the panels need besides the state.
pub struct Context<'a> {
    pub loaded: Option<&'a Loaded>,
    pub stage: Option<&'a Stage>,
    pub error: Option<&'a str>,
    /// The central view's texture and its size in pixels.
    pub view: Option<(egui::TextureId, [u32; 2])>,
    pub mesh: &'a MeshInfo,
    pub symbols: &'a mut Symbols,
    pub adapter: &'a str,
    /// The current map's default range, for the current quantity and scale (0 to a high
    /// percentile when a few outliers would wash it out, else to its maximum).
    pub auto_range: (f32, f32),
    /// How that range was chosen and what it clips, while it is the range shown.
    pub auto: Option<gpuheat_analysis::palette::Range>,
    /// Diff mode's comparison; `None` without `--diff`.
    pub diff: Option<DiffView<'a>>,
    /// The map the Heat and Surface tabs show (the chosen target and cost); `None` when the
    /// frame has no map.
    pub shown: Option<&'a ShownMap>,
    /// The render-target selector's thumbnails (frames with offscreen targets).
    pub thumbs: Option<&'a Thumbnails>,
    /// The live view's stream and captures (`view --live`).
    pub live: Option<&'a mut Live>,
}

/// What the Diff tab shows.
pub struct DiffView<'a> {
    /// The comparison, once made.
    pub data: Option<&'a DiffData>,
    /// Loading progress, or why there is no comparison.
    pub status: Option<&'a str>,
    /// The images of the shown frames.
    pub images: Option<&'a DiffImages>,
}

/// Colour of a severity.
pub fn severity_colour(s: gpuheat_analysis::checklist::Severity) -> egui::Color32 {
    use gpuheat_analysis::checklist::Severity;
    match s {
        Severity::Info => egui::Color32::from_rgb(0x8a, 0xb4, 0xf8),
        Severity::Warning => egui::Color32::from_rgb(0xf2, 0xc0, 0x4a),
        Severity::Error => egui::Color32::from_rgb(0xf2, 0x6a, 0x5a),
    }
}

/// A palette colour for egui.
pub fn colour(palette: Palette, t: f64) -> egui::Color32 {
    let [r, g, b] = palette.colour_at(t);
    egui::Color32::from_rgb(r, g, b)
}

/// Paints a legend's colour strip over `strip`: 64 cells, `colour_at(0)` at the left end to
/// `colour_at(1)` at the right (each cell overlaps the next by half a point, leaving no seam).
pub fn gradient_strip(
    painter: &egui::Painter,
    strip: egui::Rect,
    colour_at: impl Fn(f64) -> egui::Color32,
) {
    let n = 64;
    for k in 0..n {
        let t = f64::from(k) / f64::from(n - 1);
        let x0 = strip.left() + strip.width() * k as f32 / n as f32;
        let r = egui::Rect::from_min_max(
            egui::pos2(x0, strip.top()),
            egui::pos2(x0 + strip.width() / n as f32 + 0.5, strip.bottom()),
        );
        painter.rect_filled(r, 0.0, colour_at(t));
    }
}
