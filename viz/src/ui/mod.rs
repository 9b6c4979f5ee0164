//! The egui side: what the user chose ([`UiState`]) and the panels that show and change it.
//! The GPU passes read the state after each UI pass (see `app.rs`).

mod diff;
mod draws;
mod inspector;
mod strip;
mod toolbar;
mod view;

use crate::camera::OrbitCamera;
use crate::heat_pass::Quantity;
use crate::load::{Loaded, Stage};
use crate::mesh_pass::MeshDraw;
use crate::metric::Metric;
use crate::targets::{ShownMap, Thumbnails};
use crate::{Cost, Tab};
use gpuheat_analysis::measure::flow::{PixelFlow, TargetKey};
use gpuheat_analysis::measure::pick::PixelPick;
use gpuheat_analysis::palette::{Palette, Scale};
use gpuheat_session::ModuleMap;
use gpuheat_symbols::Symbolizer;
use std::collections::HashMap;

/// Pan and zoom of the Heat tab.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatView {
    /// Map coordinates at the view's centre.
    pub center: [f32; 2],
    /// View pixels per map pixel.
    pub zoom: f32,
    /// Follow the view's size, showing the whole map.
    pub fit: bool,
}

/// Which list the left panel shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListTab {
    Draws,
    Calls,
}

/// A column of the draw list.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Call,
    Function,
    Metric(Metric),
}

/// Everything the user chose; the passes follow it.
pub struct UiState {
    pub tab: Tab,
    pub frame: Option<u64>,
    /// Selected draw: call index within the frame.
    pub selected: Option<u32>,
    /// Picked pixel (GL window coordinates) and what the pick found.
    pub pick: Option<(u32, u32)>,
    pub pick_result: Option<PixelPick>,
    /// Where the picked pixel's total cost came from (the upstream passes that fed it), on
    /// the shown target's map; filled in by the app from the frame's cost flow.
    pub flow_pick: Option<PixelFlow>,
    /// The render target asked for; `None`: the screen. A frame without it shows its screen.
    pub target: Option<TargetKey>,
    /// Own or total cost asked for; `None`: total when the frame has offscreen targets.
    pub cost: Option<Cost>,
    pub palette: Palette,
    pub scale: Scale,
    pub quantity: Quantity,
    /// Manual value range of the map; `None` follows the frame (its default range).
    pub range: Option<(f32, f32)>,
    pub alpha: f32,
    pub show_frame: bool,
    /// What colours the meshes.
    pub metric: Metric,
    pub heat_view: HeatView,
    pub mesh_camera: OrbitCamera,
    pub surface_camera: OrbitCamera,
    /// World units between consecutive draws in the 3D tab (0: as rendered).
    pub explode: f32,
    pub depth_scale: f32,
    pub shade: bool,
    pub sort: (Column, bool),
    pub list: ListTab,
    /// Scroll the lists to the selection on the next pass.
    pub scroll_to_selection: bool,
    /// The central view's size in physical pixels, as laid out by the last pass.
    pub view_px: [u32; 2],
    /// Its top left corner in the window, physical pixels.
    pub view_at: [u32; 2],
    /// A click in the 3D view waiting for its ID read-back (view pixels).
    pub id_click: Option<[u32; 2]>,
    /// One line for the status bar (a rejected request, say).
    pub notice: Option<String>,
    /// The selected row of the diff table (diff mode).
    pub diff_row: Option<crate::diff::DiffRow>,
    /// The render-target selector's thumbnails as laid out by the last pass: each target's
    /// name and its thumbnail's image rectangle (x, y, width, height, physical pixels).
    pub thumb_rects: Vec<(String, [u32; 4])>,
}

impl UiState {
    pub fn new(opts: &crate::ViewOptions) -> UiState {
        UiState {
            tab: opts.tab,
            frame: opts.frame,
            // A call of B's frame means nothing in A's: the diff resolves it once loaded.
            selected: opts.select_draw.filter(|_| !opts.select_in_b),
            pick: opts.pick,
            pick_result: None,
            flow_pick: None,
            target: None,
            cost: opts.cost,
            palette: opts.palette,
            scale: opts.scale,
            quantity: Quantity::Heat,
            range: None,
            alpha: gpuheat_analysis::palette::ALPHA as f32,
            show_frame: true,
            metric: Metric::GpuSerialized,
            heat_view: HeatView {
                center: [0.0; 2],
                zoom: 1.0,
                fit: true,
            },
            mesh_camera: default_mesh_camera(),
            surface_camera: default_surface_camera(),
            explode: 0.0,
            depth_scale: 0.5,
            shade: false,
            sort: (Column::Call, false),
            list: ListTab::Draws,
            scroll_to_selection: true,
            view_px: [1, 1],
            view_at: [0, 0],
            id_click: None,
            notice: None,
            diff_row: None,
            thumb_rects: Vec::new(),
        }
    }

    /// Selects a frame, dropping what belonged to the previous one.
    pub fn set_frame(&mut self, frame: u64) {
        if self.frame != Some(frame) {
            self.frame = Some(frame);
            self.selected = None;
            self.pick = None;
            self.pick_result = None;
            self.flow_pick = None;
        }
    }

    /// Shows render target `key` (`None`: the screen) with `cost`, dropping the pick and the
    /// manual range, which belonged to the map shown before.
    pub fn show_target(&mut self, key: Option<TargetKey>, cost: Option<Cost>) {
        if (self.target, self.cost) != (key, cost) {
            self.target = key;
            self.cost = cost;
            self.pick = None;
            self.pick_result = None;
            self.flow_pick = None;
            self.range = None;
        }
    }

    pub fn select(&mut self, call: Option<u32>) {
        self.selected = call;
        self.scroll_to_selection = true;
    }
}

pub fn default_mesh_camera() -> OrbitCamera {
    OrbitCamera::new(-0.5, 0.35, 3.0)
}

pub fn default_surface_camera() -> OrbitCamera {
    OrbitCamera::new(-0.35, 0.75, 3.1)
}

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
}

/// What the Diff tab shows.
pub struct DiffView<'a> {
    /// The comparison, once made.
    pub data: Option<&'a crate::diff::DiffData>,
    /// Loading progress, or why there is no comparison.
    pub status: Option<&'a str>,
    /// The images of the shown frames.
    pub images: Option<&'a crate::diff::DiffImages>,
}

/// One UI pass.
pub fn show(ui: &mut egui::Ui, state: &mut UiState, cx: &mut Context) {
    toolbar::top(ui, state, cx);
    let Some(loaded) = cx.loaded else {
        egui::CentralPanel::default().show(ui, |ui| view::loading(ui, cx));
        return;
    };
    egui::Panel::bottom("strip")
        .resizable(false)
        .exact_size(72.0)
        .show(ui, |ui| strip::show(ui, state, loaded));
    if state.tab == Tab::Diff {
        // The diff table needs the width (A, B, change, significance): it takes the left
        // panel, the images the rest; the inspector belongs to the single-session tabs.
        let max_list = (ui.available_width() * 0.6).max(260.0);
        egui::Panel::left("diff-table")
            .resizable(true)
            .default_size(620.0_f32.min(max_list))
            .min_size(240.0)
            .max_size(max_list)
            .show(ui, |ui| diff::table(ui, state, cx));
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ui, |ui| diff::view(ui, state, cx, loaded));
        state.scroll_to_selection = false;
        return;
    }
    // The draw table has a column per counter (fifteen on desktop GL): it scrolls sideways
    // inside a panel capped at 40% of the window, so the view and the inspector keep their
    // room.
    let max_list = (ui.available_width() * 0.4).max(240.0);
    egui::Panel::left("lists")
        .resizable(true)
        .default_size(400.0_f32.min(max_list))
        .min_size(220.0)
        .max_size(max_list)
        .show(ui, |ui| {
            egui::ScrollArea::horizontal()
                .id_salt("lists-sideways")
                .show(ui, |ui| draws::show(ui, state, loaded));
        });
    egui::Panel::right("inspector")
        .resizable(true)
        .default_size(330.0)
        .min_size(220.0)
        .show(ui, |ui| inspector::show(ui, state, cx, loaded));
    egui::CentralPanel::default()
        .frame(egui::Frame::NONE)
        .show(ui, |ui| view::show(ui, state, cx, loaded));
    state.scroll_to_selection = false;
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
