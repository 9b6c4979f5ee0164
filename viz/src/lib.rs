//! The gpuheat viewer behind `gpuheat view SESSION`: a winit window (or an offscreen target)
//! with egui panels on wgpu and three views of a captured frame:
//!
//! - **Heat**: the thermal map over the frame's colour buffer, with a pixel picker (which
//!   draws made this pixel's heat, and which upstream passes fed it) and the selected draw's
//!   pixels outlined; with offscreen render targets, a selector of every target of the frame
//!   (thumbnails with their share of the frame) and the own/total cost toggle;
//! - **Mesh** (3D): the frame's post-transform geometry, one colour per draw from the chosen
//!   metric, picked through an ID render target;
//! - **Surface**: the heat map as a height field;
//! - **Diff** (with `--diff B`): session A and session B side by side with the difference
//!   map, and the draw table of A, B, the change and its significance; selecting a draw
//!   highlights it and its match on both sides.
//!
//! Around them: the frame strip (cost per frame, in time order), the sortable draw list, the
//! frame's call list, and the inspector (call, source line, counters, findings).
//!
//! The session is read and analysed on a background thread, so a large session opens at once
//! and the UI paints its progress. The same UI renders offscreen ([`screenshot`],
//! [`render_offscreen`], [`measure`]) with no display, on lavapipe or llvmpipe.

mod app;
mod camera;
mod diff;
mod error;
mod gpu;
mod heat_pass;
mod load;
mod measure;
mod mesh_pass;
mod metric;
mod shot;
mod surface_pass;
mod targets;
mod ui;
mod window;

pub use error::VizError;
pub use measure::{measure, Measurements};
pub use shot::{render_offscreen, screenshot, Shot};
pub use window::open_window;

use gpuheat_analysis::palette::{Palette, Scale};
use std::path::PathBuf;

/// Keeps Mesa's Vulkan driver from printing "error: XDG_RUNTIME_DIR is invalid or not set"
/// on every start when there is no Wayland session (a terminal on X11, ssh, CI): its
/// Wayland probe calls libwayland, which prints that when the variable is unset. Pointing
/// the variable at the temporary directory (which holds no Wayland socket) makes the probe
/// fail quietly. Does nothing when the variable or `WAYLAND_DISPLAY` is set.
///
/// Call it at the start of `main`, before any thread exists: it changes the environment.
pub fn quiet_wayland_probe() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
}

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
