//! The writer thread: turns per-thread call buffers into session chunks and streams them to
//! the CLI. The program's threads only ever hand it whole buffers through a bounded channel.

use crate::clock;
use crate::generated::MAX_ARGS;
use gpuheat_session::{CounterValue, EndInfo, Record};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments kept inline in a [`RawCall`]; calls with more (texture uploads, a few others)
/// keep them all in a box.
pub(crate) const INLINE_ARGS: usize = 6;

/// A recorded call, as kept in the per-thread buffer until the writer takes it. Small (144
/// bytes): every call of a captured frame is written into one, so its size is memory
/// traffic on the program's thread.
pub(crate) struct RawCall {
    /// [`crate::clock::ticks`] before and after the real call.
    pub begin: u64,
    pub end: u64,
    pub ctx: u64,
    pub site: u64,
    /// Thread CPU time of the call, when read (`generated::CPU`); [`NO_CPU`]: its wall time.
    pub cpu: u64,
    pub ret: u64,
    pub seq: u32,
    pub tid: u32,
    pub func: u16,
    pub nargs: u8,
    pub has_ret: bool,
    args: [u64; INLINE_ARGS],
    more_args: Option<Box<[u64; MAX_ARGS]>>,
    pub values: Vec<CounterValue>,
}

/// [`RawCall::cpu`] when the thread's CPU clock was not read around the call.
pub(crate) const NO_CPU: u64 = u64::MAX;

impl RawCall {
    /// A record of nothing: what a buffer slot holds before [`RawCall::set`] fills it.
    pub const EMPTY: RawCall = RawCall {
        begin: 0,
        end: 0,
        ctx: 0,
        site: 0,
        cpu: NO_CPU,
        ret: 0,
        seq: 0,
        tid: 0,
        func: 0,
        nargs: 0,
        has_ret: false,
        args: [0; INLINE_ARGS],
        more_args: None,
        values: Vec::new(),
    };

    /// A call of entry point `func` with `args` (at most [`MAX_ARGS`] kept), nothing measured.
    pub fn new(func: u16, args: &[u64]) -> RawCall {
        let mut call = RawCall::EMPTY;
        call.set(func, args);
        call
    }

    /// Makes this the record of a call of `func` with `args` (at most [`MAX_ARGS`] kept).
    #[inline]
    pub fn set(&mut self, func: u16, args: &[u64]) {
        let n = args.len().min(MAX_ARGS);
        self.func = func;
        self.nargs = n as u8;
        if n <= INLINE_ARGS {
            self.args[..n].copy_from_slice(&args[..n]);
        } else {
            let mut all = Box::new([0u64; MAX_ARGS]);
            all[..n].copy_from_slice(&args[..n]);
            self.more_args = Some(all);
        }
    }

    /// The call's arguments.
    pub fn args(&self) -> &[u64] {
        let n = usize::from(self.nargs);
        match &self.more_args {
            Some(all) => &all[..n.min(MAX_ARGS)],
            None => &self.args[..n.min(INLINE_ARGS)],
        }
    }

    /// The return value, when the entry point has one.
    pub fn ret(&self) -> Option<u64> {
        self.has_ret.then_some(self.ret)
    }
}

/// Calls buffered per thread before they are handed to the writer in one message.
pub(crate) const BUFFER_CALLS: usize = 8192;

/// Buffers the writer has emptied, kept for the threads to fill again: a new buffer's pages
/// are faulted in as calls are written to it (about 15 ns per call), a reused one's are not.
static POOL: std::sync::Mutex<Vec<Vec<RawCall>>> = std::sync::Mutex::new(Vec::new());
/// Most emptied buffers kept (about 1.2 MB each): a frame of 20,000 calls fills three, and
/// the writer hands them back a frame or two later.
const POOL_BUFFERS: usize = 24;

/// An empty buffer of [`BUFFER_CALLS`] calls, reused when the writer returned one.
pub(crate) fn fresh_buffer() -> Vec<RawCall> {
    let reused = POOL.lock().ok().and_then(|mut p| p.pop());
    reused.unwrap_or_else(|| Vec::with_capacity(BUFFER_CALLS))
}

/// Buffers made ready in the pool when a writer starts, their pages touched on the writer
/// thread, so that a program thread's first buffers of a capture fault nothing in; after
/// that, the buffers the writer hands back circulate.
const READY_BUFFERS: usize = 8;

/// Tops the pool up to [`READY_BUFFERS`] with touched buffers (on the writer thread).
fn prepare_buffers() {
    let missing = POOL
        .lock()
        .map_or(0, |p| READY_BUFFERS.saturating_sub(p.len()));
    for _ in 0..missing {
        let mut buf = Vec::with_capacity(BUFFER_CALLS);
        buf.resize_with(BUFFER_CALLS, || RawCall::new(0, &[]));
        recycle(buf);
    }
}

/// The writer is done with `buf`: its memory (already faulted in) serves the next buffer.
pub(crate) fn recycle(mut buf: Vec<RawCall>) {
    if buf.capacity() < BUFFER_CALLS {
        return;
    }
    buf.clear();
    if let Ok(mut p) = POOL.lock() {
        if p.len() < POOL_BUFFERS {
            p.push(buf);
        }
    }
}

/// Messages from the program's threads to the writer.
pub(crate) enum Msg {
    /// CLOCK_MONOTONIC origin that session times are relative to.
    Origin(u64),
    Calls {
        frame: u64,
        calls: Vec<RawCall>,
    },
    FrameEnd {
        frame: u64,
        begin: u64,
        end: u64,
    },
    Record(Record),
    /// The session's function table, built and encoded once per process on the writer thread.
    FunctionTable,
    End(EndInfo),
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
        loop {
            match self.tx.try_send(msg) {
                Ok(()) => {
                    self.shared.queued.fetch_add(1, Relaxed);
                    return;
                }
                Err(TrySendError::Full(m)) if Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(TrySendError::Full(Msg::Calls { calls, .. })) => {
                    self.shared.dropped.fetch_add(calls.len() as u64, Relaxed);
                    return;
                }
                Err(_) => return,
            }
        }
    }

    /// Waits (at most `limit`) until everything queued so far reached the socket.
    pub fn drain(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.shared.written.load(Relaxed) < self.shared.queued.load(Relaxed)
            && !self.shared.broken.load(Relaxed)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The CLI went away: nothing more can be sent.
    pub fn broken(&self) -> bool {
        self.shared.broken.load(Relaxed)
    }
}

fn run(mut stream: UnixStream, rx: Receiver<Msg>, shared: &Shared) {
    prepare_buffers();
    let mut scratch = Scratch::default();
    let mut origin = 0u64;
    let mut pending: BTreeMap<u64, Vec<Vec<RawCall>>> = BTreeMap::new();
    let write_bytes = |stream: &mut UnixStream, bytes: &[u8]| {
        if stream.write_all(bytes).is_err() {
            shared.broken.store(true, Relaxed);
        }
    };
    let write = |stream: &mut UnixStream, record: &Record, scratch: &mut Scratch| {
        // A record too large to encode is dropped rather than taking the program down.
        if gpuheat_session::try_encode_into(
            record,
            &mut scratch.payload,
            &mut scratch.encoder,
            &mut scratch.chunk,
        )
        .is_ok()
        {
            write_bytes(stream, &scratch.chunk);
        }
    };
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Origin(o) => origin = o,
            Msg::Calls { frame, calls } => pending.entry(frame).or_default().push(calls),
            Msg::FrameEnd { frame, begin, end } => {
                let buffers = pending.remove(&frame).unwrap_or_default();
                // Calls of earlier frames that arrived late cannot be placed any more.
                let stale: Vec<u64> = pending.range(..frame).map(|(&k, _)| k).collect();
                for k in stale {
                    let n: usize = pending
                        .remove(&k)
                        .map_or(0, |v| v.iter().map(Vec::len).sum());
                    shared.dropped.fetch_add(n as u64, Relaxed);
                }
                if frame_chunk(frame, begin, end, origin, &buffers, &mut scratch).is_ok() {
                    write_bytes(&mut stream, &scratch.chunk);
                }
                for b in buffers {
                    recycle(b);
                }
            }
            Msg::Record(r) => write(&mut stream, &r, &mut scratch),
            Msg::FunctionTable => write_bytes(&mut stream, function_chunk()),
            Msg::End(mut end) => {
                end.dropped_calls = shared.dropped.swap(0, Relaxed);
                write(&mut stream, &Record::End(end), &mut scratch);
                let _ = stream.flush();
                scratch.shrink();
            }
        }
        shared.written.fetch_add(1, Relaxed);
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
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
    buffers: &[Vec<RawCall>],
    scratch: &mut Scratch,
) -> Result<(), gpuheat_session::SessionError> {
    let mut calls: Vec<&RawCall> = buffers.iter().flatten().collect();
    // One thread's buffers arrive in call order; several threads' interleave. `seq` is the
    // call's index in the frame: pipelined times and samples refer to it.
    if !calls.is_sorted_by_key(|c| c.seq) {
        calls.sort_by_key(|c| c.seq);
    }
    let clock = clock::Converter::now();
    let frame = &mut scratch.frame;
    frame.begin(
        index,
        begin.saturating_sub(origin),
        end.saturating_sub(origin),
    );
    for c in &calls {
        let duration = clock.between(c.begin, c.end);
        frame.push(gpuheat_session::CallFields {
            func: c.func,
            thread: c.tid,
            context: c.ctx,
            begin_ns: clock.ns(c.begin).saturating_sub(origin),
            duration_ns: duration,
            cpu_ns: if c.cpu == NO_CPU { duration } else { c.cpu },
            args: c.args(),
            ret: c.ret(),
            callsite: c.site,
        });
    }
    for c in calls.iter().filter(|c| !c.values.is_empty()) {
        frame.push_sample(c.seq, &c.values);
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
    use gpuheat_session::{Call, CounterValue, DrawSample, Frame};

    fn raw(seq: u32, nargs: u8, values: Vec<CounterValue>) -> RawCall {
        let args: Vec<u64> = (0..u64::from(nargs)).map(|k| 1000 + k).collect();
        let mut c = RawCall::new(7, &args);
        c.seq = seq;
        c.tid = 42;
        c.ctx = 0xC0FFEE;
        c.begin = 5_000 + u64::from(seq);
        c.end = 5_100 + u64::from(seq);
        c.cpu = if seq.is_multiple_of(2) { 60 } else { NO_CPU };
        (c.ret, c.has_ret) = (9, seq == 1);
        c.site = 0xABC;
        c.values = values;
        c
    }

    #[test]
    fn a_frame_chunk_decodes_to_the_frame_record_of_its_calls() {
        let v = vec![CounterValue {
            counter: 0,
            value: 77,
        }];
        // Two buffers, calls out of order across them, as threads hand them over.
        let buffers = vec![
            vec![raw(2, 3, Vec::new()), raw(0, 0, v.clone())],
            vec![raw(1, 17, Vec::new())],
        ];
        let mut scratch = Scratch::default();
        frame_chunk(3, 4_000, 9_000, 1_000, &buffers, &mut scratch).unwrap();
        let chunk = gpuheat_session::decode(&scratch.chunk).unwrap().unwrap();
        let Some(gpuheat_session::Record::Frame(f)) = chunk.into_record() else {
            panic!("not a frame");
        };
        let clock = clock::Converter::now();
        let call = |c: &RawCall| Call {
            func: 7,
            thread: 42,
            context: 0xC0FFEE,
            begin_ns: clock.ns(c.begin).saturating_sub(1_000),
            duration_ns: clock.between(c.begin, c.end),
            cpu_ns: if c.cpu == NO_CPU {
                clock.between(c.begin, c.end)
            } else {
                c.cpu
            },
            args: c.args().to_vec(),
            ret: c.ret(),
            callsite: 0xABC,
        };
        let want = Frame {
            index: 3,
            begin_ns: 3_000,
            end_ns: 8_000,
            calls: vec![
                call(&buffers[0][1]),
                call(&buffers[1][0]),
                call(&buffers[0][0]),
            ],
            samples: vec![DrawSample { call: 0, values: v }],
        };
        assert_eq!(f, want);
        assert_eq!(f.calls[1].args.len(), 17);
        assert_eq!(f.calls[2].args, [1000, 1001, 1002]);
        assert_eq!(std::mem::size_of::<RawCall>(), 144);
    }
}
