//! Finding the agent library that gets loaded into the program.

use anyhow::{bail, Result};
use std::path::PathBuf;

/// File name of the agent library cargo builds.
pub const AGENT_FILE: &str = "libgpuheat_agent.so";

/// The agent library: `$GPUHEAT_AGENT`, else next to this executable (where cargo puts both).
pub fn agent_library() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(gpuheat_session::control::env::AGENT) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p.canonicalize().unwrap_or(p));
        }
        bail!("GPUHEAT_AGENT names {}, which is not a file", p.display());
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let candidates = [
        dir.join(AGENT_FILE),
        dir.join("../lib/gpuheat").join(AGENT_FILE),
    ];
    for c in &candidates {
        if c.is_file() {
            return Ok(c.canonicalize().unwrap_or_else(|_| c.clone()));
        }
    }
    bail!(
        "agent library {AGENT_FILE} not found in {} (build it with `cargo build -p gpuheat-agent`, or set GPUHEAT_AGENT)",
        dir.display()
    )
}
