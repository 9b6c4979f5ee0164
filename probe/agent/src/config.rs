//! What the CLI asked for, passed through the environment in launch mode.

use gpuheat_session::CaptureMode;

/// Environment variable naming the CLI's socket; without it the agent stays dormant.
pub const SOCKET_ENV: &str = "GPUHEAT_SOCKET";

/// The capture request.
#[derive(Debug, Clone)]
pub struct Config {
    pub socket: String,
    pub frames: u32,
    pub skip: u32,
    pub mode: CaptureMode,
    /// `GPUHEAT_HEAT=1`: paint heat maps of the captured frames.
    pub heat: bool,
}

impl Config {
    /// Reads the request; `None` when the agent was loaded without a CLI to talk to.
    pub fn from_env() -> Option<Config> {
        let socket = std::env::var(SOCKET_ENV).ok().filter(|s| !s.is_empty())?;
        let num = |k: &str, d: u32| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(d)
        };
        let mode = match std::env::var("GPUHEAT_MODE").as_deref() {
            Ok("timeline") => CaptureMode::Timeline,
            _ => CaptureMode::Full,
        };
        Some(Config {
            socket,
            frames: num("GPUHEAT_FRAMES", 1).max(1),
            skip: num("GPUHEAT_SKIP", 1),
            mode,
            heat: std::env::var("GPUHEAT_HEAT").as_deref() == Ok("1"),
        })
    }
}
