//! The 16-byte file header: magic, format version, reserved flags.

use crate::error::SessionError;

/// The first 8 bytes of every session file.
pub const MAGIC: [u8; 8] = *b"GPUHEAT\0";

/// The format version this build writes and the highest it reads. Bump it only for changes
/// older readers cannot skip over; new records get new chunk kinds and new fields get
/// `#[serde(default)]` instead.
pub const FORMAT_VERSION: u32 = 3;

/// Length of the file header: magic, version (u32 LE), reserved flags (u32 LE).
pub const FILE_HEADER_LEN: usize = 16;

/// The parsed file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// Format version of the file.
    pub version: u32,
    /// Reserved; written as 0. Readers ignore bits they do not know, so later versions may
    /// use them for hints that older readers can safely miss.
    pub flags: u32,
}

impl FileHeader {
    /// The header this build writes.
    pub fn current() -> Self {
        FileHeader {
            version: FORMAT_VERSION,
            flags: 0,
        }
    }

    /// The header's 16 bytes.
    pub fn to_bytes(&self) -> [u8; FILE_HEADER_LEN] {
        let mut out = [0u8; FILE_HEADER_LEN];
        out[..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&self.version.to_le_bytes());
        out[12..16].copy_from_slice(&self.flags.to_le_bytes());
        out
    }

    /// Parses and checks the start of a session file. `bytes` may be longer than the header;
    /// only the first [`FILE_HEADER_LEN`] bytes are looked at.
    pub fn parse(bytes: &[u8]) -> Result<Self, SessionError> {
        let not = |reason: String| SessionError::NotASession { reason };
        if bytes.is_empty() {
            return Err(not("empty file".into()));
        }
        // Check the magic on what there is first, so a short non-session file is reported as
        // "bad magic" rather than as a short session.
        let n = bytes.len().min(MAGIC.len());
        if bytes[..n] != MAGIC[..n] {
            return Err(not("bad magic".into()));
        }
        if bytes.len() < FILE_HEADER_LEN {
            return Err(not(format!(
                "{} bytes, too short for the {FILE_HEADER_LEN}-byte header",
                bytes.len()
            )));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        let flags = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
        if version == 0 {
            return Err(not("format version 0".into()));
        }
        if version > FORMAT_VERSION {
            return Err(SessionError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        Ok(FileHeader { version, flags })
    }
}
