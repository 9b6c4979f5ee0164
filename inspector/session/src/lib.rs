//! The gpuheat session file: a magic and version, then self-describing chunks (kind, length,
//! checksum, compressed payload) appended as data arrives, so a crash of the target or of
//! gpuheat loses at most the chunk being written.
//!
//! The agent encodes records with [`encode`] and sends the chunks over its socket; the CLI
//! reads them with a [`ChunkReader`] and stores them with a [`SessionWriter`]; the inspector
//! reads the file back with [`Session::open`].

pub mod chunk;
pub mod columns;
pub mod control;
pub mod counter_names;
pub mod error;
pub mod header;
mod kind;
pub mod model;
mod planes;
pub mod reader;
mod varint;
pub mod vg;
pub mod vulkan;
pub mod writer;

pub use chunk::{
    decode, encode, encode_chunk, read_chunk, try_encode, try_encode_chunk, try_encode_into, Chunk,
    ChunkEncoder, ChunkHeader, ChunkKind, CHUNK_HEADER_LEN, FLAG_LZ4, FLAG_ZSTD, MAX_CHUNK_LEN,
};
pub use columns::{CallFields, FrameEncoder};
pub use error::SessionError;
pub use header::{FileHeader, FILE_HEADER_LEN, FORMAT_VERSION, MAGIC};
pub use model::*;
pub use reader::{CallGpuTime, ChunkReader, PipelinedIndex, Session};
pub use vg::{
    VgCall, VgDraw, VgImageDraw, VgPath, VgPathDraw, VgStroke, MAX_VG_CHILDREN, MAX_VG_PATH_COORDS,
};
pub use vulkan::{VkAttachment, VkFrame, VkPassBegin, VkRenderPass, VkSubmit};
pub use writer::SessionWriter;
