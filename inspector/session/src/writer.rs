//! Writing session files, one chunk at a time as data arrives.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::chunk::{read_chunk_into, try_encode, Chunk, ChunkKind};
use crate::error::SessionError;
use crate::header::{FileHeader, FILE_HEADER_LEN};
use crate::model::Record;

/// Appends chunks to a new session file.
///
/// Each chunk goes to the operating system in one write as soon as it is appended (there is no
/// buffer in between), so if gpuheat is killed, the file holds every chunk appended before
/// and at most one incomplete chunk, which readers recognize and drop. Only
/// [`SessionWriter::finish`] waits for the data to reach the disk.
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    bytes: u64,
    frames: u64,
    chunks: u64,
    poisoned: bool,
}

impl SessionWriter {
    /// Creates (or truncates) the file at `path` and writes the file header.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, SessionError> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|cause| SessionError::Io {
                action: "create",
                path: path.clone(),
                cause,
            })?;
        let mut writer = SessionWriter {
            file,
            path,
            bytes: 0,
            frames: 0,
            chunks: 0,
            poisoned: false,
        };
        writer.write(&FileHeader::current().to_bytes())?;
        debug_assert_eq!(writer.bytes, FILE_HEADER_LEN as u64);
        Ok(writer)
    }

    /// Encodes and appends a record.
    pub fn append(&mut self, record: &Record) -> Result<(), SessionError> {
        let bytes = try_encode(record)?;
        self.write(&bytes)?;
        self.count(record.kind());
        Ok(())
    }

    /// Appends bytes holding one or more whole encoded chunks, as they came over the wire.
    ///
    /// Every chunk is decoded first and nothing is written unless all of them are valid, so a
    /// chunk damaged in transit is rejected rather than stored; offsets in the error are where
    /// the chunk would have been in the file. Chunks of unknown kinds are valid and kept, so
    /// a newer agent's records survive an older CLI.
    pub fn append_encoded(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        let mut rest = bytes;
        let mut offset = self.bytes;
        let (mut chunk_bytes, mut scratch) = (Vec::new(), Vec::new());
        let (mut chunks, mut frames) = (0, 0);
        while let Some((header, _record)) =
            read_chunk_into(&mut rest, offset, &mut chunk_bytes, &mut scratch, &[])?
        {
            offset += header.chunk_len();
            chunks += 1;
            frames += u64::from(header.kind.is_frame());
        }
        self.write(bytes)?;
        self.chunks += chunks;
        self.frames += frames;
        Ok(())
    }

    /// Appends a chunk a [`crate::ChunkReader`] already checked, without decoding it again.
    pub fn append_chunk(&mut self, chunk: &Chunk) -> Result<(), SessionError> {
        self.write(chunk.bytes())?;
        self.count(chunk.kind());
        Ok(())
    }

    /// Waits until everything appended is on disk, then closes the file.
    pub fn finish(self) -> Result<(), SessionError> {
        if self.poisoned {
            return Err(SessionError::WriterPoisoned { path: self.path });
        }
        self.file.sync_all().map_err(|cause| SessionError::Io {
            action: "sync",
            path: self.path.clone(),
            cause,
        })
    }

    /// Frame records appended so far.
    pub fn frames_written(&self) -> u64 {
        self.frames
    }

    /// Size of the file so far, header included.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Chunks appended so far (any kind).
    pub fn chunks_written(&self) -> u64 {
        self.chunks
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn count(&mut self, kind: ChunkKind) {
        self.chunks += 1;
        if kind.is_frame() {
            self.frames += 1;
        }
    }

    /// Writes `bytes` at the end of the good part of the file. On failure (disk full, say)
    /// the partial write is cut off again, so that a later append does not land after garbage;
    /// if even that fails, the writer refuses further appends.
    fn write(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        if self.poisoned {
            return Err(SessionError::WriterPoisoned {
                path: self.path.clone(),
            });
        }
        if let Err(cause) = self.file.write_all(bytes) {
            let good = self.bytes;
            let rolled_back = self.file.set_len(good).is_ok()
                && self
                    .file
                    .seek(SeekFrom::Start(good))
                    .is_ok_and(|at| at == good);
            self.poisoned = !rolled_back;
            return Err(SessionError::Io {
                action: "write",
                path: self.path.clone(),
                cause,
            });
        }
        self.bytes += bytes.len() as u64;
        Ok(())
    }
}
