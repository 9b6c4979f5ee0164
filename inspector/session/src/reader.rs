//! Reading sessions: chunk by chunk from a stream, or a whole file into a [`Session`].

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::chunk::{read_chunk_into, Chunk, ChunkHeader, ChunkKind};
use crate::error::SessionError;
use crate::header::{FileHeader, FILE_HEADER_LEN};
use crate::model::{
    AgentFrame, AttachInfo, ContextInfo, ContextState, EndInfo, Frame, FrameFlow, FrameGeometry,
    FrameUploads, FunctionTable, HeatMap, HeatMissing, HookSummary, LateSamples, ModuleMap,
    PipelinedBatch, ProgramInfo, Record, SessionInfo, TargetHeat, TriggerHit, WarmUp, WatchStatus,
};

/// Reads chunks one after another from a stream: a session file past its header, or the
/// agent's socket.
///
/// As an [`Iterator`] it yields decoded records, skips kinds this build does not know, ends at
/// a clean end of stream, and ends after yielding the first error. [`ChunkReader::read_chunk`]
/// gives the chunks themselves, bytes included, for a receiver that stores what it reads.
/// After any error the reader is finished and every further read returns `Ok(None)`, because
/// the stream position inside the bad chunk is unknown.
#[derive(Debug)]
pub struct ChunkReader<R> {
    inner: R,
    offset: u64,
    bytes: Vec<u8>,
    scratch: Vec<u8>,
    skipped: u64,
    finished: bool,
    undecoded: &'static [ChunkKind],
}

impl<R: Read> ChunkReader<R> {
    /// A reader of bare chunks (the wire format), counting offsets from 0.
    pub fn new(inner: R) -> Self {
        ChunkReader::with_offset(inner, 0)
    }

    /// A reader whose first chunk is at byte `offset` of the underlying file or stream, so
    /// offsets in errors and in [`Chunk::offset`] match it.
    pub fn with_offset(inner: R, offset: u64) -> Self {
        ChunkReader {
            inner,
            offset,
            bytes: Vec::new(),
            scratch: Vec::new(),
            skipped: 0,
            finished: false,
            undecoded: &[],
        }
    }

    /// A reader that checks chunks of the `kinds` given (length, checksum, flags) without
    /// decoding them: [`ChunkReader::read_chunk`] returns them with no record, for a reader
    /// that only passes them on (the CLI storing what the agent streams), where decoding
    /// every call of every frame would cost the program's machine as much as encoding did.
    pub fn without_decoding(mut self, kinds: &'static [ChunkKind]) -> Self {
        self.undecoded = kinds;
        self
    }

    /// Reads and checks the file header, then returns a reader positioned at the first chunk.
    pub fn from_file_start(mut inner: R) -> Result<(FileHeader, Self), SessionError> {
        let mut head = [0u8; FILE_HEADER_LEN];
        let mut got = 0;
        while got < head.len() {
            match inner.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(cause) => {
                    return Err(SessionError::Stream {
                        offset: got as u64,
                        cause,
                    })
                }
            }
        }
        let header = FileHeader::parse(&head[..got])?;
        Ok((
            header,
            ChunkReader::with_offset(inner, FILE_HEADER_LEN as u64),
        ))
    }

    /// The next chunk, or `Ok(None)` at a clean end of stream. Chunks of unknown kinds are
    /// returned too, with no record.
    pub fn read_chunk(&mut self) -> Result<Option<Chunk>, SessionError> {
        let offset = self.offset;
        Ok(self.advance()?.map(|(header, record)| {
            let bytes = std::mem::take(&mut self.bytes);
            Chunk::new(offset, header, bytes, record)
        }))
    }

    /// The next record, skipping chunks of unknown kinds, or `Ok(None)` at a clean end.
    pub fn read_record(&mut self) -> Result<Option<Record>, SessionError> {
        loop {
            match self.advance()? {
                None => return Ok(None),
                Some((_, Some(record))) => return Ok(Some(record)),
                Some((_, None)) => self.skipped += 1,
            }
        }
    }

    fn advance(&mut self) -> Result<Option<(ChunkHeader, Option<Record>)>, SessionError> {
        if self.finished {
            return Ok(None);
        }
        match read_chunk_into(
            &mut self.inner,
            self.offset,
            &mut self.bytes,
            &mut self.scratch,
            self.undecoded,
        ) {
            Ok(Some((header, record))) => {
                self.offset += header.chunk_len();
                Ok(Some((header, record)))
            }
            Ok(None) => {
                self.finished = true;
                Ok(None)
            }
            Err(e) => {
                self.finished = true;
                Err(e)
            }
        }
    }

    /// Byte offset of the next chunk: everything before it has been read and checked.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How many chunks of unknown kinds [`ChunkReader::read_record`] and the iterator skipped.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Gives the underlying reader back.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Iterator for ChunkReader<R> {
    type Item = Result<Record, SessionError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_record().transpose()
    }
}

impl<R: Read> std::iter::FusedIterator for ChunkReader<R> {}

/// A whole session in memory.
///
/// When a record that should appear once (info, functions, modules, end) appears more than
/// once, the first is kept: frames refer to the function table they were recorded against.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Who was captured, how, and when.
    pub info: SessionInfo,
    /// The entry points [`crate::Call::func`] indexes.
    pub functions: FunctionTable,
    /// Every context the capture saw, in the order they first became current.
    pub contexts: Vec<ContextInfo>,
    /// The process's modules, when the agent sent them.
    pub modules: Option<ModuleMap>,
    /// Captured frames, in the order they were written.
    pub frames: Vec<Frame>,
    /// Pipelined GPU times, in the order they were written (look them up with
    /// [`Session::pipelined_index`]).
    pub pipelined: Vec<PipelinedBatch>,
    /// How the capture ended; `None` when the session was cut short.
    pub end: Option<EndInfo>,
    /// How `gpuheat attach` got in; `None` for launch-mode sessions.
    pub attach: Option<AttachInfo>,
    /// The state of each context when the capture started.
    pub states: Vec<ContextState>,
    /// Thermal paintings of captured frames, in the order they were written.
    pub heat: Vec<HeatMap>,
    /// Frames whose heat map could not be made, and why.
    pub heat_missing: Vec<HeatMissing>,
    /// Own heat of offscreen render targets, in the order written (several records of one
    /// frame, context and target add up).
    pub target_heat: Vec<TargetHeat>,
    /// What painted draws sampled, per frame and context, in the order written.
    pub flow: Vec<FrameFlow>,
    /// VG calls with children or coverage, in the order written.
    pub vg_calls: Vec<crate::vg::VgCall>,
    /// The data of VG paths the captured frames drew, one record per version.
    pub vg_paths: Vec<crate::vg::VgPath>,
    /// Post-transform positions of the draws of captured frames (full mode), in the order
    /// they were written.
    pub geometry: Vec<FrameGeometry>,
    /// What the agent hooked, for `gpuheat attach` sessions.
    pub hooks: Option<HookSummary>,
    /// Programs the agent saw link, named by their sources' hash, in the order they linked.
    pub programs: Vec<ProgramInfo>,
    /// Each captured frame's uploads (client memory copied into textures and buffers: size
    /// and content hash per call), in the order written; frames without uploads have none.
    pub uploads: Vec<FrameUploads>,
    /// Captured frames the agent's own first-time work made unsteady, in the order written
    /// (none in sessions of agents that did not mark them).
    pub warmup: Vec<WarmUp>,
    /// What the agent cost in each captured frame, in the order written (none in sessions of
    /// agents that did not count).
    pub agent_frames: Vec<AgentFrame>,
    /// The triggers of a watch (`gpuheat attach --trigger`), in order; none in a capture.
    pub triggers: Vec<TriggerHit>,
    /// How the watch went (its last status); `None` in a capture.
    pub watch: Option<WatchStatus>,
    /// The Vulkan render pass objects the captured frames began; none in GL sessions.
    pub vk_render_passes: Vec<crate::vulkan::VkRenderPass>,
    /// Each captured Vulkan frame's render pass instances, in the order written.
    pub vk_frames: Vec<crate::vulkan::VkFrame>,
    /// Where the readable part of the file ends, when it ends before the file does: the byte
    /// offset of an incomplete last chunk (or, from [`Session::open_lenient`], of the first
    /// damaged one). Everything before it was read.
    pub truncated_at: Option<u64>,
}

/// How strictly a reader treats damaged chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// Only an incomplete last chunk is tolerated.
    Strict,
    /// Stop at the first damaged chunk and keep what came before.
    Lenient,
}

impl Session {
    /// Reads a session file.
    ///
    /// An incomplete last chunk (the writer was killed) is tolerated and reported in
    /// [`Session::truncated_at`]; a damaged chunk is an error ([`SessionError::Corrupted`],
    /// [`SessionError::BadPayload`], [`SessionError::TooLarge`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Session, SessionError> {
        Session::open_with(path.as_ref(), Strictness::Strict)
    }

    /// Reads a session file, keeping everything before the first damaged chunk and marking its
    /// offset in [`Session::truncated_at`]; for salvaging what [`Session::open`] refuses.
    pub fn open_lenient(path: impl AsRef<Path>) -> Result<Session, SessionError> {
        Session::open_with(path.as_ref(), Strictness::Lenient)
    }

    fn open_with(path: &Path, strictness: Strictness) -> Result<Session, SessionError> {
        let with_path = |action: &'static str| {
            move |cause| SessionError::Io {
                action,
                path: path.to_path_buf(),
                cause,
            }
        };
        let file = File::open(path).map_err(with_path("open"))?;
        let reader = BufReader::with_capacity(256 << 10, file);
        Session::read(reader, strictness).map_err(|e| match e {
            SessionError::Stream { cause, .. } => with_path("read")(cause),
            other => other,
        })
    }

    /// Reads a session (file header and chunks) from any reader, as [`Session::open`] does.
    pub fn from_reader<R: Read>(reader: R) -> Result<Session, SessionError> {
        Session::read(reader, Strictness::Strict)
    }

    /// Reads a session from any reader, as [`Session::open_lenient`] does.
    pub fn from_reader_lenient<R: Read>(reader: R) -> Result<Session, SessionError> {
        Session::read(reader, Strictness::Lenient)
    }

    /// Assembles a session from records already decoded (for instance by a live receiver).
    pub fn from_records<I: IntoIterator<Item = Record>>(
        records: I,
    ) -> Result<Session, SessionError> {
        let mut builder = Builder::default();
        for record in records {
            builder.push(record);
        }
        builder.finish(None)
    }

    fn read<R: Read>(reader: R, strictness: Strictness) -> Result<Session, SessionError> {
        let (_header, mut chunks) = ChunkReader::from_file_start(reader)?;
        let mut builder = Builder::default();
        let stop = loop {
            match chunks.read_record() {
                Ok(Some(record)) => builder.push(record),
                Ok(None) => break None,
                Err(e @ SessionError::Truncated { .. }) => break Some(e),
                Err(e) if strictness == Strictness::Lenient && e.is_chunk_damage() => {
                    break Some(e)
                }
                Err(e) => return Err(e),
            }
        };
        builder.finish(stop)
    }

    /// An index of the pipelined GPU times by (frame index, call index).
    pub fn pipelined_index(&self) -> PipelinedIndex {
        PipelinedIndex::new(&self.pipelined)
    }
}

/// Collects records into a [`Session`].
#[derive(Default)]
struct Builder {
    info: Option<SessionInfo>,
    functions: Option<FunctionTable>,
    contexts: Vec<ContextInfo>,
    modules: Option<ModuleMap>,
    frames: Vec<Frame>,
    pipelined: Vec<PipelinedBatch>,
    end: Option<EndInfo>,
    attach: Option<AttachInfo>,
    states: Vec<ContextState>,
    heat: Vec<HeatMap>,
    heat_missing: Vec<HeatMissing>,
    target_heat: Vec<TargetHeat>,
    flow: Vec<FrameFlow>,
    vg_calls: Vec<crate::vg::VgCall>,
    vg_paths: Vec<crate::vg::VgPath>,
    geometry: Vec<FrameGeometry>,
    hooks: Option<HookSummary>,
    programs: Vec<ProgramInfo>,
    uploads: Vec<FrameUploads>,
    warmup: Vec<WarmUp>,
    agent_frames: Vec<AgentFrame>,
    triggers: Vec<TriggerHit>,
    watch: Option<WatchStatus>,
    vk_render_passes: Vec<crate::vulkan::VkRenderPass>,
    vk_frames: Vec<crate::vulkan::VkFrame>,
    late: Vec<LateSamples>,
}

impl Builder {
    fn push(&mut self, record: Record) {
        match record {
            Record::Info(v) => {
                self.info.get_or_insert(v);
            }
            Record::Functions(v) => {
                self.functions.get_or_insert(v);
            }
            Record::Context(v) => self.contexts.push(v),
            Record::Modules(v) => {
                self.modules.get_or_insert(v);
            }
            Record::Frame(v) => self.frames.push(v),
            Record::Pipelined(v) => self.pipelined.push(v),
            Record::End(v) => {
                self.end.get_or_insert(v);
            }
            Record::Attach(v) => {
                self.attach.get_or_insert(v);
            }
            Record::State(v) => self.states.push(v),
            Record::Heat(v) => self.heat.push(v),
            Record::HeatMissing(v) => self.heat_missing.push(v),
            Record::TargetHeat(v) => self.target_heat.push(v),
            Record::Flow(v) => self.flow.push(v),
            Record::VgCall(v) => self.vg_calls.push(v),
            Record::VgPath(v) => self.vg_paths.push(v),
            Record::Geometry(v) => self.geometry.push(v),
            Record::Hooks(v) => {
                self.hooks.get_or_insert(v);
            }
            Record::Program(v) => self.programs.push(v),
            Record::Uploads(v) => self.uploads.push(v),
            Record::WarmUp(v) => self.warmup.push(v),
            Record::AgentFrame(v) => self.agent_frames.push(v),
            Record::Trigger(v) => self.triggers.push(v),
            // The last one has the totals.
            Record::Watch(v) => self.watch = Some(v),
            Record::VkRenderPass(v) => self.vk_render_passes.push(v),
            Record::VkFrame(v) => self.vk_frames.push(v),
            Record::LateSamples(v) => self.late.push(v),
        }
    }

    /// `stop` is the chunk error reading ended at, if it did not end cleanly; it is what gets
    /// reported when the damage took a required record with it, being the real cause.
    fn finish(mut self, stop: Option<SessionError>) -> Result<Session, SessionError> {
        let truncated_at = stop.as_ref().and_then(SessionError::offset);
        merge_late(&mut self.frames, std::mem::take(&mut self.late));
        let (info, functions) = match (self.info, self.functions) {
            (Some(info), Some(functions)) => (info, functions),
            (info, _) => {
                return Err(stop.unwrap_or(SessionError::MissingRecord {
                    kind: if info.is_none() {
                        ChunkKind::INFO
                    } else {
                        ChunkKind::FUNCTIONS
                    },
                }))
            }
        };
        Ok(Session {
            info,
            functions,
            contexts: self.contexts,
            modules: self.modules,
            frames: self.frames,
            pipelined: self.pipelined,
            end: self.end,
            attach: self.attach,
            states: self.states,
            heat: self.heat,
            heat_missing: self.heat_missing,
            target_heat: self.target_heat,
            flow: self.flow,
            vg_calls: self.vg_calls,
            vg_paths: self.vg_paths,
            geometry: self.geometry,
            hooks: self.hooks,
            programs: self.programs,
            uploads: self.uploads,
            warmup: self.warmup,
            agent_frames: self.agent_frames,
            triggers: self.triggers,
            watch: self.watch,
            vk_render_passes: self.vk_render_passes,
            vk_frames: self.vk_frames,
            truncated_at,
        })
    }
}

/// Merges late counter values into their frames' samples (values of a call that already has
/// a sample join it), keeping each frame's samples in call order; values of a frame the
/// session lacks (cut off by damage) are dropped.
fn merge_late(frames: &mut [Frame], late: Vec<LateSamples>) {
    if late.is_empty() {
        return;
    }
    let index: HashMap<u64, usize> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| (f.index, i))
        .collect();
    let mut touched = Vec::new();
    for l in late {
        let Some(&i) = index.get(&l.frame) else {
            continue;
        };
        let f = &mut frames[i];
        for s in l.samples {
            match f.samples.iter_mut().find(|x| x.call == s.call) {
                Some(x) => x.values.extend(s.values),
                None => f.samples.push(s),
            }
        }
        touched.push(i);
    }
    for i in touched {
        frames[i].samples.sort_by_key(|s| s.call);
    }
}

/// The pipelined GPU time of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallGpuTime {
    /// GPU time between the timestamps around the call.
    pub gpu_ns: u64,
    /// The batch saw GL_GPU_DISJOINT_EXT: the time is not trustworthy.
    pub disjoint: bool,
}

/// Pipelined GPU times by (frame index as in [`Frame::index`], call index in
/// [`Frame::calls`]). When two batches give a time for the same call, the later one wins.
///
/// Per frame, the times sorted by call: a look-up is one frame look-up and a binary search
/// (a report of a million draws looks up every one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PipelinedIndex {
    frames: HashMap<u64, Vec<(u32, CallGpuTime)>>,
    len: usize,
}

impl PipelinedIndex {
    /// Indexes the batches.
    pub fn new(batches: &[PipelinedBatch]) -> Self {
        let mut frames: HashMap<u64, Vec<(u32, CallGpuTime)>> = HashMap::new();
        for batch in batches {
            let times = frames.entry(batch.frame).or_default();
            times.extend(batch.times.iter().map(|t| {
                (
                    t.call,
                    CallGpuTime {
                        gpu_ns: t.gpu_ns,
                        disjoint: batch.disjoint,
                    },
                )
            }));
        }
        let mut len = 0;
        for times in frames.values_mut() {
            // Stable: of two times for one call, the later batch's comes last and is kept.
            times.sort_by_key(|(call, _)| *call);
            let mut kept: Vec<(u32, CallGpuTime)> = Vec::with_capacity(times.len());
            for &(call, t) in times.iter() {
                match kept.last_mut() {
                    Some(last) if last.0 == call => last.1 = t,
                    _ => kept.push((call, t)),
                }
            }
            len += kept.len();
            *times = kept;
        }
        PipelinedIndex { frames, len }
    }

    /// The pipelined time of call `call` of the frame whose [`Frame::index`] is `frame`.
    pub fn get(&self, frame: u64, call: u32) -> Option<CallGpuTime> {
        let times = self.frames.get(&frame)?;
        times
            .binary_search_by_key(&call, |(c, _)| *c)
            .ok()
            .map(|i| times[i].1)
    }

    /// Number of calls with a time.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no call has a time.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
