//! The gpuheat session file: a magic and version, then self-describing chunks (kind, length,
//! checksum, compressed payload) appended as data arrives, so a crash of the target or of
//! gpuheat loses at most the chunk being written.

pub mod model;

pub use model::*;
