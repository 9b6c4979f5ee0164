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

/// `GPUHEAT_GEOMETRY_VERTICES`: most post-transform vertices full-mode capture keeps per frame
/// and context (default [`gpuheat_counters::geometry::DEFAULT_VERTEX_BUDGET`], 64 MiB of
/// positions; capped at the session's limit); `0` turns geometry capture off. Read from the
/// program's environment, so it applies in attach mode too when the program was started
/// with it.
pub const GEOMETRY_ENV: &str = "GPUHEAT_GEOMETRY_VERTICES";

/// The per-frame vertex budget of geometry capture (0: off).
pub fn geometry_budget() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        std::env::var(GEOMETRY_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(gpuheat_counters::geometry::DEFAULT_VERTEX_BUDGET)
            .min(gpuheat_session::MAX_GEOMETRY_VERTICES)
    })
}
