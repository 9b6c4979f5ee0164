//! The writer thread: turns per-thread call buffers into session chunks and streams them to
//! the CLI. The program's threads only ever hand it whole buffers through a bounded channel.

use crate::calls::{self, CallBuffer};
use crate::clock;
use crate::generated::MAX_ARGS;
use gpuheat_session::{CounterValue, EndInfo, Module, ModuleMap, Record, TriggerHit, WatchStatus};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Messages from the program's threads to the writer.
pub(crate) enum Msg {
    /// CLOCK_MONOTONIC origin that session times are relative to.
    Origin(u64),
    /// A thread's calls of one frame (`CallBuffer::frame`).
    Calls(CallBuffer),
    /// Counter values of calls timed deferred, read after their calls were handed over:
    /// merged into their frame's samples at its `FrameEnd`, which must come after.
    Late {
        frame: u64,
        values: Vec<(u32, Vec<CounterValue>)>,
    },
    FrameEnd {
        frame: u64,
        begin: u64,
        end: u64,
    },
    Record(Record),
    /// The session's function table, built and encoded once per process on the writer thread.
    FunctionTable,
    /// The process's module map ([`modules`]), read on the writer thread: /proc/self/maps of
    /// a program with 1,400 mappings (mpv) takes 2-4 ms to read and parse, which the render
    /// thread need not wait for at a capture's start.
    Modules,
    /// A watch begins watching (again): from the next frame on, frames and the records of
    /// their own are kept in a ring of this many frames ([`Ring`]) instead of sent.
    Hold {
        frames: u32,
    },
    /// A watched frame triggered: the trigger record is sent (with the ring's frames filled
    /// in), then the ring's frames; what follows is sent as it comes until the next `Hold`.
    Release(TriggerHit),
    End(EndInfo),
}

/// Executable mappings of this process, for turning call sites into module + offset.
fn modules() -> ModuleMap {
    let maps = gpuheat_procmaps::read_self().unwrap_or_default();
    let modules = maps
        .into_iter()
        .filter(|m| m.perms.exec && m.path.as_deref().is_some_and(|p| p.starts_with('/')))
        .map(|m| Module {
            path: m.path.unwrap_or_default(),
            start: m.start,
            end: m.end,
            file_offset: m.offset,
        })
        .collect();
    ModuleMap { modules }
}

/// The encoded FUNC chunk: 3,500 entry points with their parameters take a while to encode,
/// and every capture of the process sends the same table.
fn function_chunk() -> &'static [u8] {
    static CHUNK: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    CHUNK.get_or_init(|| {
        gpuheat_session::try_encode(&Record::Functions(crate::table::function_table()))
            .unwrap_or_default()
    })
}

/// The first-time work of a connection's writer, done ahead on a thread of its own as soon
/// as a CLI is coming (at the attach entry, at launch mode's connection): the function table
/// encoded and the call buffers' pages touched. Done by the writer itself, the first captured
/// frames waited behind the table and competed with it for the machine's cores.
pub(crate) fn prepare_ahead() {
    let _ = std::thread::Builder::new()
        .name("gpuheat-prepare".into())
        .spawn(|| {
            let _ = std::panic::catch_unwind(|| {
                function_chunk();
                calls::prepare_buffers();
            });
        });
}

/// Messages in flight at most; beyond it senders wait (bounded) and then drop.
const QUEUE: usize = 256;
/// Longest a program thread waits for the writer before dropping a buffer.
const MAX_WAIT: Duration = Duration::from_secs(2);

/// Counters shared between the senders and the writer thread of one connection.
#[derive(Default)]
struct Shared {
    dropped: AtomicU64,
    broken: AtomicBool,
    /// Messages queued and messages written, so exit and detach can wait for the queue.
    queued: AtomicU64,
    written: AtomicU64,
}

/// One connection to the CLI. Dropping it ends the writer thread once the queue is written.
pub(crate) struct Writer {
    tx: SyncSender<Msg>,
    shared: Arc<Shared>,
}

impl Writer {
    pub fn start(stream: UnixStream) -> std::io::Result<Writer> {
        let (tx, rx) = sync_channel(QUEUE);
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        std::thread::Builder::new()
            .name("gpuheat-writer".into())
            .spawn(move || run(stream, rx, &theirs))?;
        Ok(Writer { tx, shared })
    }

    pub fn send(&self, msg: Msg) {
        if self.shared.broken.load(Relaxed) {
            return;
        }
        let deadline = Instant::now() + MAX_WAIT;
        let mut msg = msg;
        let mut waited = false;
        loop {
            match self.tx.try_send(msg) {
                Ok(()) => {
                    self.shared.queued.fetch_add(1, Relaxed);
                    return;
                }
                Err(TrySendError::Full(m)) if Instant::now() < deadline => {
                    msg = m;
                    if !waited {
                        waited = true;
                        crate::capture::note_setup("waited for the agent's writer".into());
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(TrySendError::Full(Msg::Calls(calls))) => {
                    self.shared.dropped.fetch_add(calls.len() as u64, Relaxed);
                    calls::recycle(calls);
                    return;
                }
                Err(_) => return,
            }
        }
    }

    /// Waits until everything queued so far reached the socket, or until nothing more has
    /// reached it for `stall` (the CLI stopped reading), and at most [`DRAIN_MOST`]: a slow
    /// CLI that keeps reading (a loaded machine, megabytes of geometry queued at a program's
    /// exit) gets the end of the session, a stuck one costs `stall`.
    pub fn drain(&self, stall: Duration) {
        let start = Instant::now();
        let (mut seen, mut since) = (self.shared.written.load(Relaxed), start);
        loop {
            let written = self.shared.written.load(Relaxed);
            if written >= self.shared.queued.load(Relaxed) || self.shared.broken.load(Relaxed) {
                return;
            }
            let now = Instant::now();
            if written != seen {
                (seen, since) = (written, now);
            }
            if now - since >= stall || now - start >= DRAIN_MOST {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Whether everything queued so far has been written (or can never be).
    pub fn idle(&self) -> bool {
        self.shared.written.load(Relaxed) >= self.shared.queued.load(Relaxed)
            || self.shared.broken.load(Relaxed)
    }

    /// The CLI went away: nothing more can be sent.
    pub fn broken(&self) -> bool {
        self.shared.broken.load(Relaxed)
    }
}

/// Longest [`Writer::drain`] waits while the CLI keeps reading.
const DRAIN_MOST: Duration = Duration::from_secs(30);

/// Most bytes a watch's ring holds (its frames encoded and compressed as they would be sent):
/// older frames leave first. At 1.5 bytes per call a frame of 20,000 calls takes about 30 KB,
/// so the cap only binds for rings of thousands of such frames.
pub(crate) const RING_LIMIT_BYTES: u64 = 64 << 20;
/// How often a watch sends its status (also what tells the CLI the program still renders
/// while nothing else is sent).
const STATUS_EVERY: Duration = Duration::from_secs(1);

/// A watch's ring: the last watched frames, each as the chunks that would have been sent for
/// it (its frame chunk, then its pipelined times, uploads and other records as they came).
struct Ring {
    frames: VecDeque<(u64, Vec<u8>)>,
    capacity: u32,
    bytes: u64,
    /// Frames watched since the watch began, kept or not.
    watched: u64,
    triggers: u32,
    /// When the last status went out.
    status_at: Instant,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            frames: VecDeque::new(),
            capacity: 0,
            bytes: 0,
            watched: 0,
            triggers: 0,
            status_at: Instant::now(),
        }
    }

    /// Holds `chunk` as frame `frame`'s first bytes, letting the oldest frames go past the
    /// capacity or the byte cap (their buffers are reused).
    fn push(&mut self, frame: u64, chunk: &[u8]) {
        self.watched += 1;
        let mut reuse = None;
        while !self.frames.is_empty()
            && (self.frames.len() >= self.capacity as usize
                || self.bytes + chunk.len() as u64 > RING_LIMIT_BYTES)
        {
            if let Some((_, old)) = self.frames.pop_front() {
                self.bytes -= old.len() as u64;
                reuse = Some(old);
            }
        }
        // Room for the frame's later records too (pipelined times, uploads), so a held frame's
        // buffer is allocated once and reused, never grown record by record: growing them
        // each frame fragmented the heap (es2gears watched at 850 fps grew 9 MB in 4 minutes,
        // 45 bytes a frame; flat since).
        let mut bytes = reuse.unwrap_or_else(|| Vec::with_capacity(2 * chunk.len() + 4096));
        bytes.clear();
        bytes.extend_from_slice(chunk);
        self.bytes += bytes.len() as u64;
        self.frames.push_back((frame, bytes));
    }

    /// Appends `chunk` to frame `frame`'s bytes; `false` when the ring does not hold it.
    fn append(&mut self, frame: u64, chunk: &[u8]) -> bool {
        match self.frames.iter_mut().find(|(f, _)| *f == frame) {
            Some((_, bytes)) => {
                bytes.extend_from_slice(chunk);
                self.bytes += chunk.len() as u64;
                true
            }
            None => false,
        }
    }

    fn status(&self) -> WatchStatus {
        WatchStatus {
            frames_watched: self.watched,
            ring_frames: self.frames.len() as u32,
            ring_capacity: self.capacity,
            ring_bytes: self.bytes,
            ring_limit_bytes: RING_LIMIT_BYTES,
            triggers: self.triggers,
        }
    }

    fn clear(&mut self) {
        self.frames.clear();
        self.bytes = 0;
    }
}

fn run(mut stream: UnixStream, rx: Receiver<Msg>, shared: &Shared) {
    calls::prepare_buffers();
    let mut scratch = Scratch::default();
    // A watch holds frames here while `holding`; `sent` is the newest frame sent, whose
    // late records (pipelined times landing frames later) still go out.
    let mut ring: Option<Ring> = None;
    let mut holding = false;
    let mut sent: Option<u64> = None;
    // Frame chunks sent in this capture: a watch's END counts these, not the frames watched.
    let mut frames_sent = 0u64;
    let mut origin = 0u64;
    let mut pending: BTreeMap<u64, Vec<CallBuffer>> = BTreeMap::new();
    let mut late: BTreeMap<u64, Vec<(u32, Vec<CounterValue>)>> = BTreeMap::new();
    let write_bytes = |stream: &mut UnixStream, bytes: &[u8]| {
        if stream.write_all(bytes).is_err() {
            shared.broken.store(true, Relaxed);
        }
    };
    // A record too large to encode is dropped rather than taking the program down.
    let encode = |record: &Record, scratch: &mut Scratch| {
        gpuheat_session::try_encode_into(
            record,
            &mut scratch.payload,
            &mut scratch.encoder,
            &mut scratch.chunk,
        )
        .is_ok()
    };
    let write = |stream: &mut UnixStream, record: &Record, scratch: &mut Scratch| {
        if encode(record, scratch) {
            write_bytes(stream, &scratch.chunk);
        }
    };
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Origin(o) => origin = o,
            // Warm-up frames run the capture for its first-time costs; nothing of them is
            // sent.
            Msg::Calls(calls) if crate::capture::is_warmup(calls.frame) => calls::recycle(calls),
            Msg::Record(r) if warmup_record(&r) => recycle(r),
            Msg::Calls(calls) => pending.entry(calls.frame).or_default().push(calls),
            Msg::Late { frame, .. } if crate::capture::is_warmup(frame) => {}
            Msg::Late { frame, values } => late.entry(frame).or_default().extend(values),
            Msg::FrameEnd { frame, begin, end } => {
                let buffers = pending.remove(&frame).unwrap_or_default();
                let mut values = late.remove(&frame).unwrap_or_default();
                values.sort_unstable_by_key(|(seq, _)| *seq);
                late.retain(|&k, _| k > frame);
                // Calls of earlier frames that arrived late cannot be placed any more.
                let stale: Vec<u64> = pending.range(..frame).map(|(&k, _)| k).collect();
                for k in stale {
                    for b in pending.remove(&k).unwrap_or_default() {
                        shared.dropped.fetch_add(b.len() as u64, Relaxed);
                        calls::recycle(b);
                    }
                }
                if frame_chunk(frame, begin, end, origin, &buffers, &values, &mut scratch).is_ok() {
                    match ring.as_mut().filter(|_| holding) {
                        Some(ring) => {
                            ring.push(frame, &scratch.chunk);
                            if ring.status_at.elapsed() >= STATUS_EVERY {
                                ring.status_at = Instant::now();
                                write(&mut stream, &Record::Watch(ring.status()), &mut scratch);
                            }
                        }
                        None => {
                            write_bytes(&mut stream, &scratch.chunk);
                            sent = Some(frame);
                            frames_sent += 1;
                        }
                    }
                }
                for b in buffers {
                    calls::recycle(b);
                }
            }
            Msg::Record(r) => {
                match (r.frame(), ring.as_mut().filter(|_| holding)) {
                    // A watched frame's own record: held with it, sent if it was sent, and
                    // dropped if the frame left the ring.
                    (Some(frame), Some(ring)) => {
                        if encode(&r, &mut scratch)
                            && !ring.append(frame, &scratch.chunk)
                            && sent.is_some_and(|s| frame <= s)
                        {
                            write_bytes(&mut stream, &scratch.chunk);
                        }
                    }
                    _ => write(&mut stream, &r, &mut scratch),
                }
                recycle(r);
            }
            Msg::FunctionTable => write_bytes(&mut stream, function_chunk()),
            Msg::Modules => write(&mut stream, &Record::Modules(modules()), &mut scratch),
            Msg::Hold { frames } => {
                let first = ring.is_none();
                let ring = ring.get_or_insert_with(Ring::new);
                ring.capacity = frames;
                ring.clear();
                // A ring of 0 frames streams: every frame goes out as it ends.
                holding = frames > 0;
                // Tells the CLI at once that the watch began.
                if first {
                    ring.status_at = Instant::now();
                    write(&mut stream, &Record::Watch(ring.status()), &mut scratch);
                }
            }
            Msg::Release(mut hit) => {
                if let Some(ring) = ring.as_mut() {
                    ring.triggers += 1;
                    hit.kept_first = ring.frames.front().map_or(hit.frame, |(f, _)| *f);
                    hit.kept_last = ring.frames.back().map_or(hit.frame, |(f, _)| *f);
                    write(&mut stream, &Record::Trigger(hit), &mut scratch);
                    for (frame, bytes) in ring.frames.drain(..) {
                        write_bytes(&mut stream, &bytes);
                        sent = Some(frame);
                        frames_sent += 1;
                    }
                    ring.bytes = 0;
                    write(&mut stream, &Record::Watch(ring.status()), &mut scratch);
                }
                holding = false;
            }
            Msg::End(mut end) => {
                // Calls and values of frames that never ended (a capture stopped or abandoned
                // mid-frame) go with it.
                late.clear();
                for buffers in std::mem::take(&mut pending).into_values() {
                    buffers.into_iter().for_each(calls::recycle);
                }
                // A watch's last status has its totals; the frames still held triggered
                // nothing and go.
                if let Some(mut ring) = ring.take() {
                    write(&mut stream, &Record::Watch(ring.status()), &mut scratch);
                    ring.clear();
                    end.frames_captured = frames_sent;
                }
                holding = false;
                sent = None;
                frames_sent = 0;
                end.dropped_calls = shared.dropped.swap(0, Relaxed);
                write(&mut stream, &Record::End(end), &mut scratch);
                let _ = stream.flush();
                scratch.shrink();
                gpuheat_counters::geometry::release_pool();
                gpuheat_counters::thermal::release_pools();
            }
        }
        shared.written.fetch_add(1, Relaxed);
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Gives a written (or dropped) record's large buffers back to their pools, for the next
/// frame's read-backs.
fn recycle(r: Record) {
    match r {
        Record::Geometry(g) => {
            gpuheat_counters::geometry::recycle(g.draws.into_iter().map(|d| d.positions))
        }
        Record::Heat(m) => gpuheat_counters::thermal::recycle(m.heat, m.overdraw, m.colour),
        Record::TargetHeat(t) => gpuheat_counters::thermal::recycle(t.heat, t.overdraw, Vec::new()),
        _ => {}
    }
}

/// Whether `r` belongs to a warm-up frame ([`crate::capture::WARMUP_FRAMES`]).
fn warmup_record(r: &Record) -> bool {
    r.frame().is_some_and(crate::capture::is_warmup)
}

/// The writer's buffers and encoder state, reused from frame to frame (a frame of 20,000
/// calls is a few hundred KB of payload: allocating it anew each time faults its pages in
/// again, and the zstd context is about a megabyte of tables).
#[derive(Default)]
struct Scratch {
    frame: gpuheat_session::FrameEncoder,
    payload: Vec<u8>,
    encoder: gpuheat_session::ChunkEncoder,
    chunk: Vec<u8>,
    /// (place, buffer, index) of the frame's calls.
    order: Vec<(u32, u32, u32)>,
}

/// What [`Scratch::shrink`] lets each buffer keep between captures.
const SCRATCH_KEPT: usize = 4 << 20;

impl Scratch {
    /// Gives back what a capture's largest records (a frame's geometry: tens of megabytes)
    /// grew the buffers to, so the program does not hold it between captures.
    fn shrink(&mut self) {
        for b in [&mut self.payload, &mut self.chunk] {
            b.clear();
            b.shrink_to(SCRATCH_KEPT);
        }
        self.encoder.shrink_to(SCRATCH_KEPT);
    }
}

/// The frame chunk of a frame's calls, encoded straight from the threads' buffers into
/// `scratch.chunk`: the columns of a [`gpuheat_session::Frame`] record without building one
/// (no allocation per call).
fn frame_chunk(
    index: u64,
    begin: u64,
    end: u64,
    origin: u64,
    buffers: &[CallBuffer],
    late: &[(u32, Vec<CounterValue>)],
    scratch: &mut Scratch,
) -> Result<(), gpuheat_session::SessionError> {
    // (buffer, index in it) of every call. One thread's buffers arrive in call order; several
    // threads' interleave. `seq` is the call's place in the frame: pipelined times and
    // samples refer to it.
    let order = &mut scratch.order;
    order.clear();
    for (b, buf) in buffers.iter().enumerate() {
        order.extend(
            buf.places()
                .enumerate()
                .map(|(i, seq)| (seq, b as u32, i as u32)),
        );
    }
    if !order.is_sorted() {
        order.sort_unstable();
    }
    let clock = clock::Converter::now();
    let frame = &mut scratch.frame;
    frame.begin(
        index,
        begin.saturating_sub(origin),
        end.saturating_sub(origin),
    );
    let mut spill = [0; MAX_ARGS];
    let mut late = late.iter().peekable();
    let mut merged = Vec::new();
    for &(seq, b, i) in order.iter() {
        let buf = &buffers[b as usize];
        let c = buf.get(i as usize, &mut spill);
        let duration = clock.between(c.begin, c.end);
        frame.push(gpuheat_session::CallFields {
            func: c.func,
            thread: buf.tid,
            context: buf.ctx,
            begin_ns: clock.ns(c.begin).saturating_sub(origin),
            duration_ns: duration,
            cpu_ns: c.cpu.unwrap_or(duration),
            args: c.args,
            ret: c.ret,
            callsite: c.site,
        });
        // Samples are a column of their own: pushed in call order beside the calls.
        while late.next_if(|(s, _)| *s < seq).is_some() {}
        match late.next_if(|(s, _)| *s == seq) {
            Some((_, values)) => {
                merged.clear();
                merged.extend_from_slice(c.values);
                merged.extend_from_slice(values);
                merged.sort_by_key(|v: &CounterValue| v.counter);
                frame.push_sample(seq, &merged);
            }
            None if !c.values.is_empty() => frame.push_sample(seq, c.values),
            None => {}
        }
    }
    frame.finish(&mut scratch.payload);
    scratch.encoder.encode_into(
        gpuheat_session::ChunkKind::FRAME_COLUMNS,
        &scratch.payload,
        &mut scratch.chunk,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::NewCall;
    use gpuheat_session::{Call, CounterValue, DrawSample, Frame};

    fn push(b: &mut CallBuffer, seq: u32, nargs: u8, values: Vec<CounterValue>) {
        let args: Vec<u64> = (0..u64::from(nargs)).map(|k| 1000 + k).collect();
        b.push(&NewCall {
            func: 7,
            site: 0xABC,
            begin: 5_000 + u64::from(seq),
            end: 5_100 + u64::from(seq),
            seq,
            args: &args,
            ret: (seq == 1).then_some(9),
            cpu: seq.is_multiple_of(2).then_some(60),
        });
        b.attach_values(values);
    }

    fn buffer(tid: u32) -> CallBuffer {
        let mut b = CallBuffer::new();
        (b.frame, b.tid, b.ctx) = (3, tid, 0xC0FFEE);
        b
    }

    #[test]
    fn the_ring_keeps_the_last_frames_with_their_late_records_within_its_caps() {
        let mut ring = Ring::new();
        ring.capacity = 3;
        for frame in 1..=5u64 {
            ring.push(frame, &[frame as u8; 10]);
        }
        let held: Vec<u64> = ring.frames.iter().map(|(f, _)| *f).collect();
        assert_eq!(held, [3, 4, 5]);
        assert_eq!(ring.bytes, 30);
        assert_eq!(ring.watched, 5);
        // A record of a held frame joins its bytes; one of a frame gone is refused.
        assert!(ring.append(4, &[0xEE; 6]));
        assert!(!ring.append(2, &[0xEE; 6]));
        assert_eq!(ring.bytes, 36);
        assert_eq!(ring.frames[1].1.len(), 16);
        let status = ring.status();
        assert_eq!(
            (status.ring_frames, status.ring_capacity, status.ring_bytes),
            (3, 3, 36)
        );
        assert_eq!(status.ring_limit_bytes, RING_LIMIT_BYTES);
        // The byte cap binds before the frame count: a frame as large as the cap leaves
        // only itself.
        let huge = vec![0u8; RING_LIMIT_BYTES as usize];
        ring.push(6, &huge);
        assert_eq!(ring.frames.len(), 1);
        assert_eq!(ring.bytes, RING_LIMIT_BYTES);
        ring.clear();
        assert_eq!((ring.frames.len(), ring.bytes), (0, 0));
    }

    #[test]
    fn a_frame_chunk_decodes_to_the_frame_record_of_its_calls() {
        let v = vec![CounterValue {
            counter: 0,
            value: 77,
        }];
        // Two buffers, calls out of order across them, as threads hand them over.
        let mut first = buffer(42);
        push(&mut first, 2, 3, Vec::new());
        push(&mut first, 0, 0, v.clone());
        let mut second = buffer(43);
        push(&mut second, 1, 17, Vec::new());
        let buffers = vec![first, second];
        let mut scratch = Scratch::default();
        // Late values (calls timed deferred) join a call's own, in counter order; one for a
        // place no call has is dropped.
        let value = |counter, value| CounterValue { counter, value };
        let late = vec![
            (0, vec![value(5, 3)]),
            (2, vec![value(0, 11)]),
            (9, vec![value(0, 1)]),
        ];
        frame_chunk(3, 4_000, 9_000, 1_000, &buffers, &late, &mut scratch).unwrap();
        let chunk = gpuheat_session::decode(&scratch.chunk).unwrap().unwrap();
        let Some(gpuheat_session::Record::Frame(f)) = chunk.into_record() else {
            panic!("not a frame");
        };
        let clock = clock::Converter::now();
        let call = |b: usize, i: usize| {
            let mut spill = [0; MAX_ARGS];
            let c = buffers[b].get(i, &mut spill);
            let duration = clock.between(c.begin, c.end);
            Call {
                func: 7,
                thread: buffers[b].tid,
                context: 0xC0FFEE,
                begin_ns: clock.ns(c.begin).saturating_sub(1_000),
                duration_ns: duration,
                cpu_ns: c.cpu.unwrap_or(duration),
                args: c.args.to_vec(),
                ret: c.ret,
                callsite: 0xABC,
            }
        };
        let want = Frame {
            index: 3,
            begin_ns: 3_000,
            end_ns: 8_000,
            calls: vec![call(0, 1), call(1, 0), call(0, 0)],
            samples: vec![
                DrawSample {
                    call: 0,
                    values: vec![v[0], value(5, 3)],
                },
                DrawSample {
                    call: 2,
                    values: vec![value(0, 11)],
                },
            ],
        };
        assert_eq!(f, want);
        assert_eq!(f.calls[1].args.len(), 17);
        assert_eq!(f.calls[1].thread, 43);
        assert_eq!(f.calls[2].args, [1000, 1001, 1002]);
    }
}
