//! Errors of reading and writing sessions.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::kind::{ChunkKind, MAX_CHUNK_LEN};

/// Everything that can go wrong reading or writing a session.
///
/// Each variant's message is one complete line meant for a user, and none of them exposes
/// an underlying error through `source()`: the I/O cause is already part of the message, so a
/// caller that prints the whole error chain does not repeat it.
#[derive(Debug, Error)]
pub enum SessionError {
    /// The bytes are not a gpuheat session at all (wrong magic, too short, version 0).
    #[error("not a gpuheat session ({reason})")]
    NotASession {
        /// What gave it away, for the message.
        reason: String,
    },

    /// The file was written by a later gpuheat whose format this one cannot read.
    #[error("session format version {found} is newer than this gpuheat (reads up to {supported})")]
    NewerVersion {
        /// Version in the file.
        found: u32,
        /// Highest version this build reads.
        supported: u32,
    },

    /// The data ends inside a chunk; `offset` is where that incomplete chunk starts, so
    /// everything before it is intact.
    #[error("session truncated at byte {offset} (the last chunk is incomplete)")]
    Truncated {
        /// Byte offset of the start of the incomplete chunk.
        offset: u64,
    },

    /// A chunk's payload does not match its checksum.
    #[error("session corrupted at byte {offset}: checksum mismatch in {kind} chunk")]
    Corrupted {
        /// Byte offset of the start of the chunk.
        offset: u64,
        /// The kind the chunk header claims.
        kind: ChunkKind,
    },

    /// A chunk header claims a length no writer produces; refusing it keeps random or damaged
    /// bytes from causing huge allocations.
    #[error(
        "session corrupted at byte {offset}: {kind} chunk claims {len} bytes (the limit is {})",
        MAX_CHUNK_LEN
    )]
    TooLarge {
        /// Byte offset of the start of the chunk.
        offset: u64,
        /// The kind the chunk header claims.
        kind: ChunkKind,
        /// The claimed (stored or uncompressed) length.
        len: u64,
    },

    /// A chunk passed its checksum but its payload does not decode as its kind.
    #[error("session corrupted at byte {offset}: {kind} chunk does not decode ({detail})")]
    BadPayload {
        /// Byte offset of the start of the chunk.
        offset: u64,
        /// The kind the chunk header claims.
        kind: ChunkKind,
        /// What the decoder said.
        detail: String,
    },

    /// A record too big for one chunk was given to the encoder.
    #[error(
        "{kind} record is {len} bytes, over the {} limit of one chunk",
        MAX_CHUNK_LEN
    )]
    RecordTooLarge {
        /// Kind of the record.
        kind: ChunkKind,
        /// Its encoded payload length.
        len: u64,
    },

    /// A record every session needs is absent.
    #[error("session incomplete: it has no {kind} record")]
    MissingRecord {
        /// Kind of the missing record.
        kind: ChunkKind,
    },

    /// An I/O operation on a named file failed.
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        /// What was being done, e.g. `create`, `read`, `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        cause: io::Error,
    },

    /// Reading a stream (a socket, or a reader without a path) failed.
    #[error("session stream read failed at byte {offset}: {cause}")]
    Stream {
        /// Bytes of the stream consumed before the failure.
        offset: u64,
        /// The operating system's error.
        cause: io::Error,
    },

    /// An earlier write failed and could not be rolled back, so further chunks would land after
    /// a partial one and make the file unreadable past it.
    #[error("session file {} is unusable after an earlier write error", path.display())]
    WriterPoisoned {
        /// The file.
        path: PathBuf,
    },
}

impl SessionError {
    /// The byte offset of the chunk the error is about, for errors that are about one chunk.
    pub fn offset(&self) -> Option<u64> {
        match self {
            SessionError::Truncated { offset }
            | SessionError::Corrupted { offset, .. }
            | SessionError::TooLarge { offset, .. }
            | SessionError::BadPayload { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// Whether this error is about one damaged or incomplete chunk, so that the chunks before
    /// it can still be trusted (what [`Session::open_lenient`](crate::Session::open_lenient)
    /// salvages).
    pub fn is_chunk_damage(&self) -> bool {
        self.offset().is_some()
    }
}
