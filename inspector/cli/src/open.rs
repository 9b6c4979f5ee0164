//! The one way every command reads a session: [`gpuheat_analysis::open`] (damage refused
//! unless `--partial`, VG draws painted), with the CLI's wording around it.

use crate::shown;
use anyhow::{Context as _, Result};
use gpuheat_analysis::open::{Damage, Opened};
use std::path::Path;

/// Opens a session for reading it out: a truncated or damaged one is refused with a one-line
/// error naming `--partial`, or with `partial` read up to the damage with a warning.
pub fn open(path: &Path, partial: bool) -> Result<Opened> {
    let opened = gpuheat_analysis::open::open(path, Damage::partial(partial))
        .with_context(|| shown(path))?;
    if let Some(at) = opened.session.truncated_at {
        eprintln!(
            "gpuheat: warning: {} is damaged at byte {at}; using the {} frames before it",
            shown(path),
            opened.session.frames.len()
        );
    }
    Ok(opened)
}
