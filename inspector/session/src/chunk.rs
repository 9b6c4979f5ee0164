//! The chunk encoding, the same on the wire (agent to CLI) and on disk, so the CLI can store
//! what the agent sends without re-encoding it.
//!
//! A chunk is a 20-byte little-endian header followed by the stored payload:
//!
//! | bytes  | field        | meaning                                            |
//! |--------|--------------|----------------------------------------------------|
//! | 0..4   | `kind`       | fourcc of the record kind, e.g. `b"FRAM"` as u32 LE |
//! | 4..8   | `flags`      | bit 0: LZ4 (block format); bit 1: zstd (one frame)  |
//! | 8..12  | `raw_len`    | payload length before compression                  |
//! | 12..16 | `stored_len` | payload length as stored                           |
//! | 16..20 | `crc32`      | CRC-32 (IEEE) of the stored payload bytes          |
//!
//! Metadata records (info, functions, contexts, modules, end) are JSON so later versions can
//! add fields with `#[serde(default)]`; the bulk records are postcard because they are most of
//! the bytes, except frames, which are columns of predicted values ([`crate::columns`], `FRMC`)
//! compressed with zstd since format version 2 (version 1's postcard `FRAM` chunks still
//! decode), and geometry, each draw's distinct positions with indices in byte planes
//! ([`crate::planes`], `GEOP`) since version 3 (the postcard `GEOM` chunks of versions 1 and 2 still decode). Readers skip kinds
//! they do not know.

use std::io::{self, Read};

use serde::de::DeserializeOwned;

use crate::error::SessionError;
pub use crate::kind::{ChunkKind, MAX_CHUNK_LEN};
use crate::model::{FrameFlow, FrameGeometry, FrameUploads, HeatMap, Record, TargetHeat};

/// Length of a chunk header.
pub const CHUNK_HEADER_LEN: usize = 20;

/// Chunk flag: the stored payload is LZ4 block compressed and expands to `raw_len` bytes.
pub const FLAG_LZ4: u32 = 1;

/// Chunk flag: the stored payload is one zstd frame that expands to `raw_len` bytes (format
/// version 2; never together with [`FLAG_LZ4`]).
pub const FLAG_ZSTD: u32 = 2;

/// The flags this build understands; a known kind with any other flag set cannot be decoded.
const KNOWN_FLAGS: u32 = FLAG_LZ4 | FLAG_ZSTD;

/// zstd level of frame chunks: level 1 already gets the entropy coding that matters on
/// columns of predicted values (level 3 gains little) at a few ns per call on the writer.
const ZSTD_FRAME_LEVEL: i32 = 1;

/// zstd level of the function table: encoded once per process (the agent caches the chunk),
/// so a slow level is affordable; 9 halves LZ4's size (96 to 43 KB for the GL/EGL table).
const ZSTD_FUNCTIONS_LEVEL: i32 = 9;

/// How a chunk kind's payload is compressed: zstd for frames (most of a session's bytes) and
/// for the function table (the largest fixed cost), LZ4 for the rest, whose size this format
/// version leaves as it was.
fn zstd_level(kind: ChunkKind) -> Option<i32> {
    match kind {
        ChunkKind::FRAME_COLUMNS => Some(ZSTD_FRAME_LEVEL),
        ChunkKind::FUNCTIONS => Some(ZSTD_FUNCTIONS_LEVEL),
        _ => None,
    }
}

/// Largest zstd window a reader accepts (16 MiB, 2^24): writers at the levels above use at
/// most 8 MiB, and a damaged frame header must not make the decoder allocate up to its default.
const ZSTD_WINDOW_LOG_MAX: u32 = 24;

impl Record {
    /// The chunk kind this record is stored as.
    pub fn kind(&self) -> ChunkKind {
        match self {
            Record::Info(_) => ChunkKind::INFO,
            Record::Functions(_) => ChunkKind::FUNCTIONS,
            Record::Context(_) => ChunkKind::CONTEXT,
            Record::Modules(_) => ChunkKind::MODULES,
            Record::Frame(_) => ChunkKind::FRAME_COLUMNS,
            Record::Pipelined(_) => ChunkKind::PIPELINED,
            Record::End(_) => ChunkKind::END,
            Record::Attach(_) => ChunkKind::ATTACH,
            Record::State(_) => ChunkKind::STATE,
            Record::Heat(_) => ChunkKind::HEAT,
            Record::HeatMissing(_) => ChunkKind::HEAT_MISSING,
            Record::Geometry(_) => ChunkKind::GEOMETRY_PLANES,
            Record::Hooks(_) => ChunkKind::HOOKS,
            Record::Program(_) => ChunkKind::PROGRAM,
            Record::TargetHeat(_) => ChunkKind::TARGET_HEAT,
            Record::Flow(_) => ChunkKind::FLOW,
            Record::VgCall(_) => ChunkKind::VG_CALL,
            Record::VgPath(_) => ChunkKind::VG_PATH,
            Record::Uploads(_) => ChunkKind::UPLOADS,
            Record::WarmUp(_) => ChunkKind::WARM_UP,
            Record::AgentFrame(_) => ChunkKind::AGENT_FRAME,
            Record::Trigger(_) => ChunkKind::TRIGGER,
            Record::Watch(_) => ChunkKind::WATCH,
            Record::VkRenderPass(_) => ChunkKind::VK_RENDER_PASS,
            Record::VkFrame(_) => ChunkKind::VK_FRAME,
            Record::LateSamples(_) => ChunkKind::LATE_SAMPLES,
        }
    }
}

/// The 20-byte header in front of every chunk's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// What the payload holds.
    pub kind: ChunkKind,
    /// [`FLAG_LZ4`], [`FLAG_ZSTD`] and future flags.
    pub flags: u32,
    /// Payload length before compression.
    pub raw_len: u32,
    /// Payload length as stored after the header.
    pub stored_len: u32,
    /// CRC-32 of the stored payload.
    pub crc32: u32,
}

impl ChunkHeader {
    /// Reads a header; any 20 bytes are a header, the checks come when the payload is read.
    pub fn parse(bytes: &[u8; CHUNK_HEADER_LEN]) -> Self {
        let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        ChunkHeader {
            kind: ChunkKind(word(0)),
            flags: word(4),
            raw_len: word(8),
            stored_len: word(12),
            crc32: word(16),
        }
    }

    /// The header's 20 bytes.
    pub fn to_bytes(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut out = [0u8; CHUNK_HEADER_LEN];
        for (i, word) in [
            self.kind.0,
            self.flags,
            self.raw_len,
            self.stored_len,
            self.crc32,
        ]
        .into_iter()
        .enumerate()
        {
            out[i * 4..i * 4 + 4].copy_from_slice(&word.to_le_bytes());
        }
        out
    }

    /// Header plus stored payload.
    pub fn chunk_len(&self) -> u64 {
        CHUNK_HEADER_LEN as u64 + u64::from(self.stored_len)
    }

    /// Whether the payload is compressed (LZ4 or zstd).
    pub fn is_compressed(&self) -> bool {
        self.flags & (FLAG_LZ4 | FLAG_ZSTD) != 0
    }
}

/// Encodes a record as one chunk (header and payload).
///
/// # Panics
///
/// When the record's payload exceeds [`MAX_CHUNK_LEN`], which readers would refuse; only a
/// frame of millions of calls gets there. Code that cannot rule that out (the agent, inside
/// the captured program) should call [`try_encode`].
pub fn encode(record: &Record) -> Vec<u8> {
    match try_encode(record) {
        Ok(bytes) => bytes,
        Err(e) => panic!("{e}"),
    }
}

/// Encodes a record as one chunk, or says why it cannot be one.
pub fn try_encode(record: &Record) -> Result<Vec<u8>, SessionError> {
    let mut out = Vec::new();
    try_encode_into(
        record,
        &mut Vec::new(),
        &mut ChunkEncoder::default(),
        &mut out,
    )?;
    Ok(out)
}

/// [`try_encode`] into `out`, serializing into `payload` and compressing through `encoder`
/// (each cleared first): a writer that encodes record after record reuses them instead of
/// allocating (and faulting in) buffers the size of each record; a frame's geometry is
/// tens of megabytes.
pub fn try_encode_into(
    record: &Record,
    payload: &mut Vec<u8>,
    encoder: &mut ChunkEncoder,
    out: &mut Vec<u8>,
) -> Result<(), SessionError> {
    // Serializing these types cannot fail: JSON because every map key is a string and every
    // float finite-or-bits, postcard because every sequence has a known length.
    payload.clear();
    macro_rules! json {
        ($v:expr, $what:literal) => {
            serde_json::to_writer(&mut *payload, $v).expect(concat!($what, " serializes to JSON"))
        };
    }
    macro_rules! post {
        ($v:expr, $what:literal) => {
            *payload = postcard::to_extend($v, std::mem::take(payload))
                .expect(concat!($what, " serializes to postcard"))
        };
    }
    match record {
        Record::Info(v) => json!(v, "SessionInfo"),
        Record::Functions(v) => json!(v, "FunctionTable"),
        Record::Context(v) => json!(v, "ContextInfo"),
        Record::Modules(v) => json!(v, "ModuleMap"),
        Record::End(v) => json!(v, "EndInfo"),
        Record::Attach(v) => json!(v, "AttachInfo"),
        Record::State(v) => json!(v, "ContextState"),
        Record::HeatMissing(v) => json!(v, "HeatMissing"),
        Record::Hooks(v) => json!(v, "HookSummary"),
        Record::Program(v) => json!(v, "ProgramInfo"),
        Record::WarmUp(v) => json!(v, "WarmUp"),
        Record::AgentFrame(v) => json!(v, "AgentFrame"),
        Record::Trigger(v) => json!(v, "TriggerHit"),
        Record::Watch(v) => json!(v, "WatchStatus"),
        Record::VkRenderPass(v) => json!(v, "VkRenderPass"),
        Record::VkFrame(v) => json!(v, "VkFrame"),
        Record::Heat(v) => post!(v, "HeatMap"),
        Record::Frame(v) => crate::columns::FrameEncoder::default().encode(v, payload),
        Record::TargetHeat(v) => post!(v, "TargetHeat"),
        Record::Flow(v) => post!(v, "FrameFlow"),
        Record::VgCall(v) => post!(v, "VgCall"),
        Record::VgPath(v) => post!(v, "VgPath"),
        Record::Uploads(v) => post!(v, "FrameUploads"),
        Record::Geometry(v) => crate::planes::encode(v, payload, &mut encoder.planes),
        Record::Pipelined(v) => post!(v, "PipelinedBatch"),
        Record::LateSamples(v) => post!(v, "LateSamples"),
    }
    encoder.encode_into(record.kind(), payload, out)
}

/// Frames an arbitrary payload as a chunk of `kind`, compressing it when that makes it
/// smaller. For kinds this crate does not define (and for tests of how readers skip them).
///
/// # Panics
///
/// When `payload` exceeds [`MAX_CHUNK_LEN`].
pub fn encode_chunk(kind: ChunkKind, payload: &[u8]) -> Vec<u8> {
    match try_encode_chunk(kind, payload) {
        Ok(bytes) => bytes,
        Err(e) => panic!("{e}"),
    }
}

/// [`encode_chunk`], saying why the payload cannot be one chunk instead of panicking.
pub fn try_encode_chunk(kind: ChunkKind, payload: &[u8]) -> Result<Vec<u8>, SessionError> {
    let mut out = Vec::new();
    ChunkEncoder::default().encode_into(kind, payload, &mut out)?;
    Ok(out)
}

/// Compresses chunk after chunk with reused state: the compressed bytes' buffer (so its
/// pages are not faulted in anew for every chunk) and the zstd context (about a megabyte of
/// tables that would otherwise be allocated per frame).
#[derive(Default)]
pub struct ChunkEncoder {
    /// zstd's output.
    compressed: Vec<u8>,
    /// LZ4's output, apart from zstd's: it is only grown, never cleared (zeroing tens of
    /// megabytes per geometry chunk showed in the writer's profile), and zstd sets the other's
    /// length to what it wrote.
    lz4: Vec<u8>,
    /// The geometry encoder's tables and buffers.
    planes: crate::planes::Scratch,
    /// The context and the level it is set to.
    zstd: Option<(zstd::bulk::Compressor<'static>, i32)>,
}

impl ChunkEncoder {
    /// [`try_encode_chunk`] into `out` (cleared first). Frame chunks
    /// ([`ChunkKind::FRAME_COLUMNS`]) and the function table are compressed with zstd, every
    /// other kind with LZ4; either is stored only when smaller than the payload.
    pub fn encode_into(
        &mut self,
        kind: ChunkKind,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), SessionError> {
        if payload.len() > MAX_CHUNK_LEN as usize {
            return Err(SessionError::RecordTooLarge {
                kind,
                len: payload.len() as u64,
            });
        }
        let (flag, n) = if let Some(level) = zstd_level(kind) {
            (FLAG_ZSTD, self.zstd(payload, level))
        } else {
            let bound = lz4_flex::block::get_maximum_output_size(payload.len());
            if self.lz4.len() < bound {
                self.lz4.resize(bound, 0);
            }
            let n = lz4_flex::block::compress_into(payload, &mut self.lz4).ok();
            (FLAG_LZ4, n)
        };
        let out_of = if flag == FLAG_LZ4 {
            &self.lz4
        } else {
            &self.compressed
        };
        let (flags, stored): (u32, &[u8]) = match n {
            Some(n) if n < payload.len() => (flag, &out_of[..n]),
            _ => (0, payload),
        };
        write_chunk(kind, flags, payload.len(), stored, out);
        Ok(())
    }

    /// Gives back what the compressed bytes' buffers grew to past `bytes` (after a capture's
    /// largest records), keeping the zstd context.
    pub fn shrink_to(&mut self, bytes: usize) {
        for buffer in [&mut self.compressed, &mut self.lz4] {
            buffer.clear();
            buffer.shrink_to(bytes);
        }
        self.planes.shrink_to(bytes);
    }

    /// Compresses `payload` into `self.compressed`; `None` when zstd fails (it cannot into a
    /// buffer of `compress_bound` bytes; the payload is then stored as it is).
    fn zstd(&mut self, payload: &[u8], level: i32) -> Option<usize> {
        if self.zstd.is_none() {
            let mut c = zstd::bulk::Compressor::new(level).ok()?;
            // The chunk's CRC-32 already covers the stored bytes.
            c.include_checksum(false).ok()?;
            self.zstd = Some((c, level));
        }
        let (c, at) = self.zstd.as_mut()?;
        if *at != level {
            c.set_compression_level(level).ok()?;
            *at = level;
        }
        self.compressed.clear();
        self.compressed
            .reserve(zstd::zstd_safe::compress_bound(payload.len()));
        c.compress_to_buffer(payload, &mut self.compressed).ok()
    }
}

/// Writes header and stored payload into `out` (cleared first).
fn write_chunk(kind: ChunkKind, flags: u32, raw_len: usize, stored: &[u8], out: &mut Vec<u8>) {
    let header = ChunkHeader {
        kind,
        flags,
        raw_len: raw_len as u32,
        stored_len: stored.len() as u32,
        crc32: crc32fast::hash(stored),
    };
    out.clear();
    out.reserve(CHUNK_HEADER_LEN + stored.len());
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(stored);
}

/// One chunk that passed every check: complete, checksum right, payload decoded (or of a kind
/// this build skips). Only the decoder makes these, so [`Chunk::bytes`] is known to be a
/// valid chunk and can be stored without checking it again.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    offset: u64,
    header: ChunkHeader,
    bytes: Vec<u8>,
    record: Option<Record>,
}

impl Chunk {
    pub(crate) fn new(
        offset: u64,
        header: ChunkHeader,
        bytes: Vec<u8>,
        record: Option<Record>,
    ) -> Self {
        Chunk {
            offset,
            header,
            bytes,
            record,
        }
    }

    /// Byte offset of the chunk in the stream or file it was read from.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The chunk's header.
    pub fn header(&self) -> &ChunkHeader {
        &self.header
    }

    /// The chunk's kind.
    pub fn kind(&self) -> ChunkKind {
        self.header.kind
    }

    /// The chunk exactly as read: header and stored payload.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Length of header and stored payload: how far the chunk extends from [`Chunk::offset`].
    pub fn encoded_len(&self) -> usize {
        self.bytes.len()
    }

    /// The decoded record; `None` for a kind this build does not know.
    pub fn record(&self) -> Option<&Record> {
        self.record.as_ref()
    }

    /// The decoded record, dropping the bytes.
    pub fn into_record(self) -> Option<Record> {
        self.record
    }

    /// The bytes and the decoded record.
    pub fn into_parts(self) -> (Vec<u8>, Option<Record>) {
        (self.bytes, self.record)
    }
}

/// Decodes the chunk at the start of `bytes`; offsets in errors count from the slice start.
///
/// Returns `Ok(None)` when `bytes` is empty (a clean end at a chunk boundary),
/// `Ok(Some(chunk))` with `chunk.record() == None` for a kind to skip, and otherwise
/// [`SessionError::Truncated`], [`SessionError::Corrupted`], [`SessionError::TooLarge`] or
/// [`SessionError::BadPayload`]. Bytes after the first chunk are not looked at.
pub fn decode(bytes: &[u8]) -> Result<Option<Chunk>, SessionError> {
    let mut reader = bytes;
    read_chunk(&mut reader, 0)
}

/// Reads one chunk from `reader`; `offset` is the reader's position, used in errors and in
/// [`Chunk::offset`]. Outcomes as for [`decode`], plus [`SessionError::Stream`] when the
/// reader fails. Reads exactly the chunk's bytes, so the reader is left at the next chunk.
pub fn read_chunk<R: Read + ?Sized>(
    reader: &mut R,
    offset: u64,
) -> Result<Option<Chunk>, SessionError> {
    let mut bytes = Vec::new();
    let mut scratch = Vec::new();
    Ok(
        read_chunk_into(reader, offset, &mut bytes, &mut scratch, &[])?
            .map(|(header, record)| Chunk::new(offset, header, bytes, record)),
    )
}

/// The decoder behind [`read_chunk`], with caller-owned buffers so a reader going through a
/// whole file does not allocate per chunk: `bytes` receives header and stored payload,
/// `scratch` the decompressed payload. Chunks of the kinds in `undecoded` are checked (length,
/// checksum, flags) but not decoded: they come back without a record, like unknown kinds.
pub(crate) fn read_chunk_into<R: Read + ?Sized>(
    reader: &mut R,
    offset: u64,
    bytes: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    undecoded: &[ChunkKind],
) -> Result<Option<(ChunkHeader, Option<Record>)>, SessionError> {
    let stream = |cause: io::Error| SessionError::Stream { offset, cause };
    bytes.clear();

    let mut head = [0u8; CHUNK_HEADER_LEN];
    let got = read_full(reader, &mut head).map_err(stream)?;
    if got == 0 {
        return Ok(None);
    }
    if got < CHUNK_HEADER_LEN {
        return Err(SessionError::Truncated { offset });
    }
    let header = ChunkHeader::parse(&head);
    let kind = header.kind;
    for len in [header.stored_len, header.raw_len] {
        if len > MAX_CHUNK_LEN {
            return Err(SessionError::TooLarge {
                offset,
                kind,
                len: len.into(),
            });
        }
    }

    bytes.extend_from_slice(&head);
    let stored_len = header.stored_len as usize;
    // Reserve no more than a modest amount up front: the length is not yet known to be real
    // until the bytes have arrived and the checksum matches.
    bytes.reserve(stored_len.min(1 << 20));
    reader
        .take(stored_len as u64)
        .read_to_end(bytes)
        .map_err(stream)?;
    if bytes.len() < CHUNK_HEADER_LEN + stored_len {
        return Err(SessionError::Truncated { offset });
    }
    let stored = &bytes[CHUNK_HEADER_LEN..];
    if crc32fast::hash(stored) != header.crc32 {
        return Err(SessionError::Corrupted { offset, kind });
    }
    if !kind.is_known() {
        return Ok(Some((header, None)));
    }

    let bad = |detail: String| SessionError::BadPayload {
        offset,
        kind,
        detail,
    };
    if header.flags & !KNOWN_FLAGS != 0 || header.flags == FLAG_LZ4 | FLAG_ZSTD {
        return Err(bad(format!("unsupported chunk flags {:#x}", header.flags)));
    }
    if undecoded.contains(&kind) {
        return Ok(Some((header, None)));
    }
    let raw: &[u8] = if header.flags & FLAG_ZSTD != 0 {
        // Streamed into `scratch`, which grows only as bytes really come out: zstd can expand
        // a few bytes into megabytes, so no ratio bounds `raw_len` the way it does for LZ4,
        // and reserving what a damaged header claims could ask for 256 MiB.
        scratch.clear();
        let zstd_err = |e: io::Error| bad(format!("zstd: {e}"));
        let mut decoder = zstd::stream::read::Decoder::with_buffer(stored).map_err(zstd_err)?;
        decoder
            .window_log_max(ZSTD_WINDOW_LOG_MAX)
            .map_err(zstd_err)?;
        let n = decoder
            .single_frame()
            .take(u64::from(header.raw_len) + 1)
            .read_to_end(scratch)
            .map_err(zstd_err)?;
        if n != header.raw_len as usize {
            return Err(bad(format!(
                "zstd: expanded to {}{n} bytes, header says {}",
                if n > header.raw_len as usize {
                    "over "
                } else {
                    ""
                },
                header.raw_len
            )));
        }
        scratch
    } else if header.is_compressed() {
        // LZ4 expands at most ~255 times; anything claiming more is damaged, and refusing it
        // here avoids zero-filling up to MAX_CHUNK_LEN for a few stored bytes.
        if u64::from(header.raw_len) > u64::from(header.stored_len) * 256 + 64 {
            return Err(bad(format!(
                "claims {} bytes uncompressed from {} stored",
                header.raw_len, header.stored_len
            )));
        }
        scratch.clear();
        scratch.resize(header.raw_len as usize, 0);
        let n = lz4_flex::block::decompress_into(stored, scratch)
            .map_err(|e| bad(format!("lz4: {e}")))?;
        if n != scratch.len() {
            return Err(bad(format!(
                "lz4: expanded to {n} bytes, header says {}",
                header.raw_len
            )));
        }
        scratch
    } else {
        if header.raw_len != header.stored_len {
            return Err(bad(format!(
                "uncompressed but raw length {} differs from stored length {}",
                header.raw_len, header.stored_len
            )));
        }
        stored
    };
    let record = decode_payload(kind, raw).map_err(bad)?;
    Ok(Some((header, Some(record))))
}

/// Decodes a raw (uncompressed) payload of a known kind.
fn decode_payload(kind: ChunkKind, raw: &[u8]) -> Result<Record, String> {
    fn json<T: DeserializeOwned>(raw: &[u8]) -> Result<T, String> {
        serde_json::from_slice(raw).map_err(|e| format!("json: {e}"))
    }
    fn post<T: DeserializeOwned>(raw: &[u8]) -> Result<T, String> {
        // Trailing bytes are allowed, so a later version could append data an older reader
        // can ignore.
        postcard::from_bytes(raw).map_err(|e| format!("postcard: {e}"))
    }
    Ok(match kind {
        ChunkKind::INFO => Record::Info(json(raw)?),
        ChunkKind::FUNCTIONS => Record::Functions(json(raw)?),
        ChunkKind::CONTEXT => Record::Context(json(raw)?),
        ChunkKind::MODULES => Record::Modules(json(raw)?),
        ChunkKind::END => Record::End(json(raw)?),
        ChunkKind::ATTACH => Record::Attach(json(raw)?),
        ChunkKind::STATE => Record::State(json(raw)?),
        ChunkKind::FRAME => Record::Frame(post(raw)?),
        ChunkKind::FRAME_COLUMNS => Record::Frame(crate::columns::decode_frame(raw)?),
        ChunkKind::PIPELINED => Record::Pipelined(post(raw)?),
        ChunkKind::HEAT => {
            let map: HeatMap = post(raw)?;
            map.validate()?;
            Record::Heat(map)
        }
        ChunkKind::HEAT_MISSING => Record::HeatMissing(json(raw)?),
        ChunkKind::HOOKS => Record::Hooks(json(raw)?),
        ChunkKind::PROGRAM => Record::Program(json(raw)?),
        ChunkKind::WARM_UP => Record::WarmUp(json(raw)?),
        ChunkKind::AGENT_FRAME => Record::AgentFrame(json(raw)?),
        ChunkKind::TRIGGER => Record::Trigger(json(raw)?),
        ChunkKind::WATCH => Record::Watch(json(raw)?),
        ChunkKind::VK_RENDER_PASS => Record::VkRenderPass(json(raw)?),
        ChunkKind::VK_FRAME => Record::VkFrame(json(raw)?),
        ChunkKind::LATE_SAMPLES => Record::LateSamples(post(raw)?),
        ChunkKind::GEOMETRY | ChunkKind::GEOMETRY_PLANES => {
            let geometry: FrameGeometry = if kind == ChunkKind::GEOMETRY {
                post(raw)?
            } else {
                crate::planes::decode(raw)?
            };
            geometry.validate()?;
            Record::Geometry(geometry)
        }
        ChunkKind::TARGET_HEAT => {
            let map: TargetHeat = post(raw)?;
            map.validate()?;
            Record::TargetHeat(map)
        }
        ChunkKind::FLOW => {
            let flow: FrameFlow = post(raw)?;
            flow.validate()?;
            Record::Flow(flow)
        }
        ChunkKind::VG_CALL => {
            let call: crate::vg::VgCall = post(raw)?;
            call.validate()?;
            Record::VgCall(call)
        }
        ChunkKind::VG_PATH => {
            let path: crate::vg::VgPath = post(raw)?;
            path.validate()?;
            Record::VgPath(path)
        }
        ChunkKind::UPLOADS => {
            let uploads: FrameUploads = post(raw)?;
            uploads.validate()?;
            Record::Uploads(uploads)
        }
        other => return Err(format!("no decoder for {other}")),
    })
}

/// Fills `buf` as far as the reader goes; returns how many bytes were read, fewer than
/// `buf.len()` only at end of stream. Unlike `read_exact` it tells a clean end (0) from a
/// partial header.
fn read_full<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_decodes_the_same_from_planes_and_from_version_2s_postcard() {
        use crate::model::{DrawGeometry, GeometryMissing};
        let g = FrameGeometry {
            frame: 300,
            context: u64::MAX,
            vertex_budget: 4 << 20,
            draws: vec![
                DrawGeometry {
                    call: 70_000,
                    primitive: 4,
                    positions: vec![
                        [1.5, -0.0, f32::MAX, f32::NAN],
                        [0.0, -1.0, 2.0, 1.0],
                        [0.25; 4],
                    ],
                    dropped_vertices: 129,
                    viewport: [0, -1, i32::MAX, i32::MIN],
                },
                DrawGeometry {
                    call: 0,
                    primitive: 0,
                    positions: Vec::new(),
                    dropped_vertices: 0,
                    viewport: [0; 4],
                },
            ],
            missing: vec![GeometryMissing {
                call: 3,
                reason: "shaders detached \u{e9}".into(),
            }],
        };
        // NaN is not equal to itself: compare the bits.
        let bits = |r: Option<Record>| match r {
            Some(Record::Geometry(mut g)) => {
                let p: Vec<Vec<[u32; 4]>> = g
                    .draws
                    .iter_mut()
                    .map(|d| {
                        std::mem::take(&mut d.positions)
                            .iter()
                            .map(|p| p.map(f32::to_bits))
                            .collect()
                    })
                    .collect();
                (g, p)
            }
            other => panic!("not geometry: {other:?}"),
        };
        let planes = encode(&Record::Geometry(g.clone()));
        assert_eq!(
            ChunkHeader::parse(planes[..CHUNK_HEADER_LEN].try_into().unwrap()).kind,
            ChunkKind::GEOMETRY_PLANES
        );
        let old = encode_chunk(ChunkKind::GEOMETRY, &postcard::to_allocvec(&g).unwrap());
        let want = bits(Some(Record::Geometry(g)));
        for chunk in [planes, old] {
            assert_eq!(bits(decode(&chunk).unwrap().unwrap().into_record()), want);
        }
    }

    #[test]
    fn lz4_expansion_bound_holds_for_the_most_compressible_input() {
        let raw = vec![0u8; 8 << 20];
        let stored = lz4_flex::block::compress(&raw);
        assert!(raw.len() as u64 <= stored.len() as u64 * 256 + 64);
        let chunk = encode_chunk(ChunkKind::FRAME, &raw);
        assert!(ChunkHeader::parse(chunk[..CHUNK_HEADER_LEN].try_into().unwrap()).is_compressed());
        // All zeros is a valid postcard frame (index 0, no calls) with trailing bytes.
        let record = decode(&chunk).unwrap().unwrap().into_record();
        assert!(matches!(record, Some(Record::Frame(f)) if f.index == 0 && f.calls.is_empty()));
    }

    #[test]
    fn kind_display() {
        assert_eq!(ChunkKind::FRAME.to_string(), "FRAM");
        assert_eq!(ChunkKind::CONTEXT.to_string(), "CTX");
        assert_eq!(ChunkKind::END.to_string(), "END");
        assert_eq!(ChunkKind(0x0102_0304).to_string(), "0x01020304");
        assert_eq!(ChunkKind(0).to_string(), "0x00000000");
        assert_eq!(ChunkKind::from_fourcc(*b"A\0B\0").to_string(), "0x00420041");
    }

    #[test]
    fn header_bytes_round_trip() {
        let h = ChunkHeader {
            kind: ChunkKind::PIPELINED,
            flags: 1,
            raw_len: 2,
            stored_len: 3,
            crc32: 0xdead_beef,
        };
        assert_eq!(ChunkHeader::parse(&h.to_bytes()), h);
        assert_eq!(&h.to_bytes()[..4], b"PIPE");
    }
}
