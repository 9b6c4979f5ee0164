//! Settings the agent reads from the program's environment (names in the control contract,
//! `gpuheat_session::control::env`).

use gpuheat_session::control::env;

/// The per-frame vertex budget of geometry capture (0: off): [`env::GEOMETRY_VERTICES`],
/// most post-transform vertices full-mode capture keeps per frame and context (default
/// [`gpuheat_counters::geometry::DEFAULT_VERTEX_BUDGET`], 64 MiB of positions; capped at the
/// session's limit). Read from the program's environment, so it applies in attach mode too
/// when the program was started with it.
pub fn geometry_budget() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        std::env::var(env::GEOMETRY_VERTICES)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(gpuheat_counters::geometry::DEFAULT_VERTEX_BUDGET)
            .min(gpuheat_session::MAX_GEOMETRY_VERTICES)
    })
}

/// Where the deferred tally's records are added, when [`env::TALLY_RESOLVE`] says: `gpu`
/// (`Some(true)`) or `cpu`; `None` lets the agent choose
/// ([`gpuheat_counters::tally::resolves_on_gpu`]).
pub fn tally_on_gpu() -> Option<bool> {
    match std::env::var(env::TALLY_RESOLVE).ok()?.trim() {
        "gpu" => Some(true),
        "cpu" => Some(false),
        _ => None,
    }
}
