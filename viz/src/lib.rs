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

// Layers, each depending only on those above it in this list (nothing points back up; the
// panels never call into the app, they change the state it hands them; tests/layers.rs checks):
// leaves (error; options: Tab, Cost, Quantity, ViewOptions; camera; metric),
// gpu (the device, targets and the passes' shared set-up), the passes (heat_pass, mesh_pass,
// surface_pass), the session's data (load and live, then diff and targets), state (what the user
// chose: UiState, the selection), the panels (ui: its context, then the panels, then their
// layout), app (the App owning all of the above, one frame of it), then the drivers that run an
// App: shot (offscreen), then measure and window.
mod app;
mod camera;
mod diff;
mod error;
mod gpu;
mod heat_pass;
mod live;
mod load;
mod measure;
mod mesh_pass;
mod metric;
mod options;
mod shot;
mod state;
mod surface_pass;
mod targets;
mod ui;
mod window;

pub use error::VizError;
pub use live::LiveLink;
pub use measure::{measure, Measurements};
pub use options::{Cost, Tab, ViewOptions};
pub use shot::{live_screenshot, render_offscreen, screenshot, LiveShot, Shot};
pub use window::{open_live_window, open_window};

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
