//! What a view shows: the tab, the render target's cost and the quantity a map's values are
//! read as, and the [`ViewOptions`] a viewer starts from. A leaf: the state, the passes and
//! the panels all speak of these.

use gpuheat_analysis::palette::{Palette, Scale};
use std::path::PathBuf;

/// The view shown in the central area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tab {
    /// The thermal map over the frame.
    #[default]
    Heat,
    /// The frame's geometry in 3D, coloured per draw.
    Mesh,
    /// The heat map as a 3D surface.
    Surface,
    /// Two sessions compared (needs [`ViewOptions::diff`]).
    Diff,
}

/// Which cost a render target's map shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cost {
    /// Only the draws into the target, as recorded.
    Own,
    /// Own plus the cost of every offscreen pass upstream of it, spread over the pixels of
    /// the draws that sampled it (`gpuheat_analysis::measure::flow::FrameFlowCost::total_map`).
    Total,
}

/// What the viewer shows first (and, offscreen, what the image shows).
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The view shown first.
    pub tab: Tab,
    /// Frame number (as in the session); default: the first frame with a heat map, else the
    /// first frame.
    pub frame: Option<u64>,
    /// Selected draw: its call index within the frame.
    pub select_draw: Option<u32>,
    /// `select_draw` is a call of session B's shown frame (diff mode), not of A's.
    pub select_in_b: bool,
    /// Session B to compare with (diff mode); the session opened is A, the baseline.
    pub diff: Option<PathBuf>,
    /// Picked pixel, in GL window coordinates of the frame (origin bottom left). In diff mode
    /// without `select_draw` it also selects the draw with the most heat there (A's map).
    pub pick: Option<(u32, u32)>,
    /// The render target shown in the Heat and Surface tabs: `screen` or an offscreen
    /// target's name as `gpuheat report` prints it (`3`, `0x5555aa:3`); default: the screen.
    pub target: Option<String>,
    /// Own or total cost; default: total when the frame has offscreen targets, else own
    /// (they are the same then).
    pub cost: Option<Cost>,
    /// Colour map of the heat map, the surface and the meshes.
    pub palette: Palette,
    /// How values map onto the palette.
    pub scale: Scale,
    /// Window (or image) size in pixels.
    pub size: (u32, u32),
    /// Show what a damaged (truncated or corrupted) session still holds instead of refusing
    /// it (`gpuheat view --partial`).
    pub partial: bool,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            tab: Tab::Heat,
            frame: None,
            select_draw: None,
            select_in_b: false,
            diff: None,
            pick: None,
            target: None,
            cost: None,
            palette: Palette::Inferno,
            scale: Scale::Linear,
            size: (1280, 800),
            partial: false,
        }
    }
}

/// What the map's values mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// ns per pixel: `Σ_d c_d(p)·T_d/N_d`.
    Heat,
    /// Fragments per pixel.
    Overdraw,
}

impl Quantity {
    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Heat => "ns per pixel",
            Quantity::Overdraw => "fragments per pixel",
        }
    }
}
