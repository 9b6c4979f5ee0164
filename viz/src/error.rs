//! The viewer's errors: each one line a user can act on.

use std::path::PathBuf;

/// Why the viewer could not show or render a session.
#[derive(Debug, thiserror::Error)]
pub enum VizError {
    /// Neither Vulkan nor GL offered an adapter.
    #[error("no GPU adapter (tried Vulkan, then GL): install mesa-vulkan-drivers")]
    NoAdapter,
    /// The adapter refused a device.
    #[error("the GPU adapter {adapter} refused a device: {reason}")]
    NoDevice {
        /// The adapter's name.
        adapter: String,
        /// What wgpu said.
        reason: String,
    },
    /// No window system to open a window on.
    #[error("cannot open a window: {0} (set DISPLAY, or render offscreen with --screenshot)")]
    NoDisplay(String),
    /// The window could not be rendered to.
    #[error("cannot draw into the window: {0}")]
    Surface(String),
    /// wgpu reported a validation or out-of-memory error.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The session could not be read.
    #[error("{path}: {reason}")]
    Session {
        /// The session file.
        path: PathBuf,
        /// Why it could not be read.
        reason: String,
    },
    /// The requested frame, draw or pixel does not exist.
    #[error("{0}")]
    Request(String),
    /// The screenshot could not be written.
    #[error("cannot write {path}: {reason}")]
    Write {
        /// The PNG file.
        path: PathBuf,
        /// The I/O or encoder error.
        reason: String,
    },
}

/// The first line of an error message, so a wgpu validation report stays one line.
pub(crate) fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unknown error");
    line.to_string()
}
