//! What the user chose ([`UiState`]): the tab, frame, selection, pick, target, palette and the
//! cameras. The app owns it, hands it to the panels, which change it (they never reach back
//! into the app), and after each UI pass brings the GPU passes up to date with it.

use crate::camera::OrbitCamera;
use crate::diff::{call_in, DiffData, DiffRow};
use crate::metric::Metric;
use crate::options::{Cost, Quantity, Tab, ViewOptions};
use gpuheat_analysis::measure::flow::{PixelFlow, TargetKey};
use gpuheat_analysis::measure::pick::PixelPick;
use gpuheat_analysis::palette::{Palette, Scale};

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
    pub diff_row: Option<DiffRow>,
    /// The render-target selector's thumbnails as laid out by the last pass: each target's
    /// name and its thumbnail's image rectangle (x, y, width, height, physical pixels).
    pub thumb_rects: Vec<(String, [u32; 4])>,
}

impl UiState {
    pub fn new(opts: &ViewOptions) -> UiState {
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

    /// Selects a row of the diff table; A's draw in the shown frame becomes the selection of
    /// the other tabs too.
    pub fn select_row(&mut self, d: &DiffData, row: DiffRow) {
        self.diff_row = Some(row);
        self.scroll_to_selection = true;
        let (a, _) = d.draws(row);
        self.selected = match (a, self.frame) {
            (Some(a), Some(f)) => call_in(&d.diff.a.stats, a, f),
            _ => None,
        };
    }
}

pub fn default_mesh_camera() -> OrbitCamera {
    OrbitCamera::new(-0.5, 0.35, 3.0)
}

pub fn default_surface_camera() -> OrbitCamera {
    OrbitCamera::new(-0.35, 0.75, 3.1)
}
