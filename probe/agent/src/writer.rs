//! The writer thread: turns per-thread call buffers into session chunks and streams them to
//! the CLI. The program's threads only ever hand it whole buffers through a bounded channel.

use crate::generated::MAX_ARGS;
use gpuheat_session::{Call, CounterValue, DrawSample, EndInfo, Frame, Record};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A recorded call, as kept in the per-thread buffer until the writer takes it.
pub(crate) struct RawCall {
    pub func: u16,
    pub nargs: u8,
    pub seq: u32,
    pub tid: u32,
    pub ctx: u64,
    pub begin: u64,
    pub dur: u64,
    pub cpu: u64,
    pub ret: Option<u64>,
    pub site: u64,
    pub args: [u64; MAX_ARGS],
    pub values: Vec<CounterValue>,
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
    let mut origin = 0u64;
    let mut pending: BTreeMap<u64, Vec<RawCall>> = BTreeMap::new();
    let write_bytes = |stream: &mut UnixStream, bytes: &[u8]| {
        if stream.write_all(bytes).is_err() {
            shared.broken.store(true, Relaxed);
        }
    };
    let write = |stream: &mut UnixStream, record: &Record| {
        // A record too large to encode is dropped rather than taking the program down.
        if let Ok(bytes) = gpuheat_session::try_encode(record) {
            write_bytes(stream, &bytes);
        }
    };
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Origin(o) => origin = o,
            Msg::Calls { frame, calls } => pending.entry(frame).or_default().extend(calls),
            Msg::FrameEnd { frame, begin, end } => {
                let calls = pending.remove(&frame).unwrap_or_default();
                // Calls of earlier frames that arrived late cannot be placed any more.
                let stale: Vec<u64> = pending.range(..frame).map(|(&k, _)| k).collect();
                for k in stale {
                    let n = pending.remove(&k).map_or(0, |v| v.len());
                    shared.dropped.fetch_add(n as u64, Relaxed);
                }
                let record = Record::Frame(frame_record(frame, begin, end, origin, calls));
                write(&mut stream, &record);
            }
            Msg::Record(r) => write(&mut stream, &r),
            Msg::FunctionTable => write_bytes(&mut stream, function_chunk()),
            Msg::End(mut end) => {
                end.dropped_calls = shared.dropped.swap(0, Relaxed);
                write(&mut stream, &Record::End(end));
                let _ = stream.flush();
            }
        }
        shared.written.fetch_add(1, Relaxed);
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn frame_record(index: u64, begin: u64, end: u64, origin: u64, mut raw: Vec<RawCall>) -> Frame {
    raw.sort_by_key(|c| c.seq);
    let mut samples = Vec::new();
    let calls = raw
        .into_iter()
        .map(|c| {
            // `seq` is the call's index in the frame (pipelined times refer to it too).
            if !c.values.is_empty() {
                samples.push(DrawSample {
                    call: c.seq,
                    values: c.values,
                });
            }
            let n = (c.nargs as usize).min(MAX_ARGS);
            Call {
                func: c.func,
                thread: c.tid,
                context: c.ctx,
                begin_ns: c.begin.saturating_sub(origin),
                duration_ns: c.dur,
                cpu_ns: c.cpu,
                args: c.args[..n].to_vec(),
                ret: c.ret,
                callsite: c.site,
            }
        })
        .collect();
    Frame {
        index,
        begin_ns: begin.saturating_sub(origin),
        end_ns: end.saturating_sub(origin),
        calls,
        samples,
    }
}
