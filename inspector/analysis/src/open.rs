//! The one way a session is read for analysis, used by every command and the viewer: a
//! session cut short (the writer killed mid-chunk) or damaged is refused unless the caller
//! asks for what it still holds ([`Damage::Salvage`], the CLI's `--partial`), and OpenVG
//! draws are painted on the host from their recorded paths ([`crate::vg::complete`]) once,
//! here, so every reader sees the same heat.

use crate::vg::{complete, VgPainting};
use gpuheat_session::{Session, SessionError};
use std::io::Read;
use std::path::Path;

/// What to do with a session whose file ends early or is damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// Refuse it (an incomplete last chunk included), naming `--partial`.
    Refuse,
    /// Keep everything before the first damaged or incomplete chunk; the session's
    /// [`Session::truncated_at`] says where it stopped.
    Salvage,
}

impl Damage {
    /// [`Damage::Salvage`] when `partial`, else [`Damage::Refuse`].
    pub fn partial(partial: bool) -> Damage {
        if partial {
            Damage::Salvage
        } else {
            Damage::Refuse
        }
    }
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file could not be read, or is damaged.
    #[error(transparent)]
    Read(#[from] SessionError),
    /// Its last chunk is incomplete and [`Damage::Refuse`] was asked for.
    #[error(
        "session truncated at byte {at} (the last chunk is incomplete); `--partial` reads the \
         {frames} complete frames before it"
    )]
    Truncated {
        /// Where the readable part ends.
        at: u64,
        /// The complete frames before it.
        frames: usize,
    },
}

/// A session opened for analysis.
#[derive(Debug)]
pub struct Opened {
    /// The session, its VG draws painted.
    pub session: Session,
    /// What the host's VG painting did.
    pub painting: VgPainting,
}

/// Opens the session file at `path`.
pub fn open(path: &Path, damage: Damage) -> Result<Opened, OpenError> {
    let session = match damage {
        Damage::Refuse => Session::open(path),
        Damage::Salvage => Session::open_lenient(path),
    }?;
    finish(session, damage)
}

/// Reads a session from `reader`, as [`open`] does a file.
pub fn read(reader: impl Read, damage: Damage) -> Result<Opened, OpenError> {
    let session = match damage {
        Damage::Refuse => Session::from_reader(reader),
        Damage::Salvage => Session::from_reader_lenient(reader),
    }?;
    finish(session, damage)
}

fn finish(mut session: Session, damage: Damage) -> Result<Opened, OpenError> {
    if let (Some(at), Damage::Refuse) = (session.truncated_at, damage) {
        return Err(OpenError::Truncated {
            at,
            frames: session.frames.len(),
        });
    }
    let painting = complete(&mut session);
    Ok(Opened { session, painting })
}
