//! The columnar frame payload (`FRMC` chunks, format version 2).
//!
//! A frame's calls are stored field by field rather than call by call, each field predicted
//! from the call before it, so that what a typical frame repeats (the same function, thread,
//! context, arguments that step by a constant, a call site or two) becomes runs of zero bytes
//! a general compressor removes, and what it does not (timings) sits together where an
//! entropy coder finds its few significant bits. On `call_cost` (gpuheat-bench) version 1's
//! `FRAM` chunks (a postcard [`Frame`], LZ4) took 10.4 bytes per call, these take 1.5 (zstd
//! level 1; the same columns under LZ4 would take about 2.6: LZ4 has no entropy stage).
//!
//! All integers are LEB128 varints; `zz(x)` is the zigzag form of a wrapping difference, so
//! any u64 (u64::MAX included) round-trips. The payload:
//!
//! | part | content |
//! |---|---|
//! | frame | `index`, `begin_ns`, `end_ns`, call count N |
//! | sites | count S, then S call sites, each `zz(site - previous site in the table)` |
//! | 10 columns | each a varint byte length, then its bytes (below) |
//! | samples | `Vec<DrawSample>` exactly as postcard writes it |
//!
//! Columns, one entry per call unless said otherwise (`prev` is the previous call of the
//! frame; for the first call thread and context 0, and its end the frame's `begin_ns`):
//!
//! | # | column | entry |
//! |---|---|---|
//! | 0 | func | `func` |
//! | 1 | thread | `zz(thread - prev.thread)` (as u32) |
//! | 2 | context | `zz(context - prev.context)` |
//! | 3 | begin | `zz(begin_ns - (prev.begin_ns + prev.duration_ns))`: the gap since the previous call returned, steadier than the distance between starts |
//! | 4 | duration | `duration_ns` |
//! | 5 | cpu | `zz(cpu_ns - duration_ns)`: 0 where the CPU clock was not read |
//! | 6 | shape | `2·args.len() + has_ret` |
//! | 7 | args | per argument k, `zz(arg - the k-th argument of the previous call of the same function)` (0 when that call had none) |
//! | 8 | ret | `ret`, only for calls that have one |
//! | 9 | site | index into the site table |
//!
//! Bytes after the samples are ignored, so a later revision can append a part that older
//! readers skip. Decoding checks every length against the bytes there are before
//! allocating, and a column that ends early or has bytes left over is an error.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::model::{Call, CounterValue, DrawSample, Frame};
use crate::varint::{put, unzigzag, unzigzag32, zigzag, zigzag32, Cursor};

/// Columns in the payload; the code names them by destructuring in this order.
const COLUMNS: usize = 10;
/// The function column, one entry per call: its length bounds the call count.
const FUNC: usize = 0;
const COLUMN_NAMES: [&str; COLUMNS] = [
    "func", "thread", "context", "begin", "duration", "cpu", "shape", "args", "ret", "site",
];

/// The fields of one call, borrowed, so a writer can encode from its own call records
/// without building a [`Call`].
#[derive(Debug, Clone, Copy)]
pub struct CallFields<'a> {
    /// [`Call::func`].
    pub func: u16,
    /// [`Call::thread`].
    pub thread: u32,
    /// [`Call::context`].
    pub context: u64,
    /// [`Call::begin_ns`].
    pub begin_ns: u64,
    /// [`Call::duration_ns`].
    pub duration_ns: u64,
    /// [`Call::cpu_ns`].
    pub cpu_ns: u64,
    /// [`Call::args`].
    pub args: &'a [u64],
    /// [`Call::ret`].
    pub ret: Option<u64>,
    /// [`Call::callsite`].
    pub callsite: u64,
}

impl<'a> From<&'a Call> for CallFields<'a> {
    fn from(c: &'a Call) -> Self {
        CallFields {
            func: c.func,
            thread: c.thread,
            context: c.context,
            begin_ns: c.begin_ns,
            duration_ns: c.duration_ns,
            cpu_ns: c.cpu_ns,
            args: &c.args,
            ret: c.ret,
            callsite: c.callsite,
        }
    }
}

/// Multiply-shift hashing for call-site addresses: SipHash's resistance to chosen keys buys
/// nothing for a table the encoder fills from its own calls, and costs a few ns per call.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Where [`FrameEncoder`] keeps the previous arguments of one function.
#[derive(Clone, Copy)]
struct ArgSlot {
    start: u32,
    cap: u32,
    len: u32,
}

/// Encodes frames as columnar payloads. Keep one per writer: its buffers and tables are
/// reused from frame to frame, so once they have grown to a frame's size, encoding
/// allocates nothing per call.
#[derive(Default)]
pub struct FrameEncoder {
    columns: [Vec<u8>; COLUMNS],
    samples: Vec<u8>,
    sample_count: u64,
    sites: Vec<u64>,
    site_index: HashMap<u64, u32, BuildHasherDefault<AddressHasher>>,
    /// Slot of each function in `prev_args` (`u32::MAX`: not called yet in this frame),
    /// indexed by function: a direct index is cheaper per call than any map.
    slot_of_func: Vec<u32>,
    slots: Vec<ArgSlot>,
    touched: Vec<u16>,
    prev_args: Vec<u64>,
    header: (u64, u64, u64),
    calls: u64,
    last: (u32, u64, u64),
}

impl FrameEncoder {
    /// Starts a frame, forgetting the previous one (but keeping the memory).
    pub fn begin(&mut self, index: u64, begin_ns: u64, end_ns: u64) {
        for c in &mut self.columns {
            c.clear();
        }
        self.samples.clear();
        self.sample_count = 0;
        self.sites.clear();
        self.site_index.clear();
        for &f in &self.touched {
            self.slot_of_func[usize::from(f)] = u32::MAX;
        }
        self.touched.clear();
        self.slots.clear();
        self.prev_args.clear();
        self.header = (index, begin_ns, end_ns);
        self.calls = 0;
        self.last = (0, 0, begin_ns);
    }

    /// Appends the frame's next call.
    pub fn push(&mut self, c: CallFields<'_>) {
        let [func, thread, context, begin, duration, cpu, shape, args, ret, site] =
            &mut self.columns;
        let (last_thread, last_context, last_end) = self.last;
        put(func, u64::from(c.func));
        put(
            thread,
            u64::from(zigzag32(c.thread.wrapping_sub(last_thread))),
        );
        put(context, zigzag(c.context.wrapping_sub(last_context)));
        put(begin, zigzag(c.begin_ns.wrapping_sub(last_end)));
        put(duration, c.duration_ns);
        put(cpu, zigzag(c.cpu_ns.wrapping_sub(c.duration_ns)));
        put(
            shape,
            ((c.args.len() as u64) << 1) | u64::from(c.ret.is_some()),
        );
        if let Some(r) = c.ret {
            put(ret, r);
        }
        self.last = (c.thread, c.context, c.begin_ns.wrapping_add(c.duration_ns));

        let f = usize::from(c.func);
        if f >= self.slot_of_func.len() {
            self.slot_of_func.resize(f + 1, u32::MAX);
        }
        let n = c.args.len() as u32;
        let slot = match self.slot_of_func[f] {
            u32::MAX => {
                self.touched.push(c.func);
                self.slot_of_func[f] = self.slots.len() as u32;
                self.slots.push(ArgSlot {
                    start: self.prev_args.len() as u32,
                    cap: n,
                    len: 0,
                });
                self.prev_args.resize(self.prev_args.len() + n as usize, 0);
                self.slots.len() - 1
            }
            s => s as usize,
        };
        let ArgSlot { start, len, .. } = self.slots[slot];
        let prev = &self.prev_args[start as usize..(start + len) as usize];
        for (k, &a) in c.args.iter().enumerate() {
            put(
                args,
                zigzag(a.wrapping_sub(prev.get(k).copied().unwrap_or(0))),
            );
        }
        // A function called with more arguments than before (only variadic-looking records
        // do) moves its slot to the end: the old one is abandoned until the next frame.
        if n > self.slots[slot].cap {
            let start = self.prev_args.len() as u32;
            self.prev_args.resize(self.prev_args.len() + n as usize, 0);
            self.slots[slot] = ArgSlot {
                start,
                cap: n,
                len: 0,
            };
        }
        let s = &mut self.slots[slot];
        s.len = n;
        self.prev_args[s.start as usize..(s.start + n) as usize].copy_from_slice(c.args);

        let index = match self.site_index.get(&c.callsite) {
            Some(&i) => i,
            None => {
                let i = self.sites.len() as u32;
                self.sites.push(c.callsite);
                self.site_index.insert(c.callsite, i);
                i
            }
        };
        put(site, u64::from(index));
        self.calls += 1;
    }

    /// Appends a counter sample of call `call` (its index in the frame).
    pub fn push_sample(&mut self, call: u32, values: &[CounterValue]) {
        put(&mut self.samples, u64::from(call));
        put(&mut self.samples, values.len() as u64);
        for v in values {
            put(&mut self.samples, u64::from(v.counter));
            put(&mut self.samples, v.value);
        }
        self.sample_count += 1;
    }

    /// Writes the frame's payload into `out` (cleared first).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.clear();
        let (index, begin_ns, end_ns) = self.header;
        for v in [index, begin_ns, end_ns, self.calls, self.sites.len() as u64] {
            put(out, v);
        }
        let mut prev = 0u64;
        for &s in &self.sites {
            put(out, zigzag(s.wrapping_sub(prev)));
            prev = s;
        }
        let columns: usize = self.columns.iter().map(Vec::len).sum();
        out.reserve(columns + COLUMNS * 5 + 10 + self.samples.len());
        for c in &self.columns {
            put(out, c.len() as u64);
            out.extend_from_slice(c);
        }
        put(out, self.sample_count);
        out.extend_from_slice(&self.samples);
    }

    /// Encodes a whole [`Frame`] record into `out` (cleared first).
    pub fn encode(&mut self, frame: &Frame, out: &mut Vec<u8>) {
        self.begin(frame.index, frame.begin_ns, frame.end_ns);
        for c in &frame.calls {
            self.push(c.into());
        }
        for s in &frame.samples {
            self.push_sample(s.call, &s.values);
        }
        self.finish(out);
    }
}

/// Decodes a columnar frame payload; the error says which part is wrong, for
/// [`SessionError::BadPayload`](crate::SessionError::BadPayload).
pub fn decode_frame(raw: &[u8]) -> Result<Frame, String> {
    let mut head = Cursor::new(raw, "frame header");
    let index = head.varint()?;
    let begin_ns = head.varint()?;
    let end_ns = head.varint()?;
    let calls = head.varint()?;
    let site_count = head.varint()?;
    // Every site and every call takes at least one byte, so neither count can exceed what is
    // left; checking it before allocating keeps a damaged count from asking for gigabytes.
    if site_count > head.remaining() {
        return Err(format!(
            "{site_count} call sites in {} bytes",
            head.remaining()
        ));
    }
    let mut sites = Vec::with_capacity(site_count as usize);
    let mut prev = 0u64;
    for _ in 0..site_count {
        prev = unzigzag(head.varint()?, prev);
        sites.push(prev);
    }
    let mut columns: [Cursor<'_>; COLUMNS] =
        std::array::from_fn(|i| Cursor::new(&[], COLUMN_NAMES[i]));
    for (i, column) in columns.iter_mut().enumerate() {
        let len = head.varint()?;
        if len > head.remaining() {
            return Err(format!(
                "column {} claims {len} bytes, {} left",
                COLUMN_NAMES[i],
                head.remaining()
            ));
        }
        *column = Cursor::new(head.take(len as usize), COLUMN_NAMES[i]);
    }
    if calls > columns[FUNC].remaining() {
        return Err(format!(
            "{calls} calls but {} bytes of functions",
            columns[FUNC].remaining()
        ));
    }
    let samples: Vec<DrawSample> = postcard::take_from_bytes(head.rest())
        .map(|(s, _)| s)
        .map_err(|e| format!("samples: postcard: {e}"))?;

    let [func, thread, context, begin, duration, cpu, shape, args, ret, site] = &mut columns;
    let mut out: Vec<Call> = Vec::with_capacity(calls as usize);
    // The previous call of each function, as an index into `out` (`usize::MAX`: none yet).
    let mut last_of_func: Vec<usize> = Vec::new();
    let (mut last_thread, mut last_context, mut last_end) = (0u32, 0u64, begin_ns);
    for i in 0..calls as usize {
        let at = |e: String| format!("call {i}: {e}");
        let f = u16::try_from(func.varint().map_err(at)?)
            .map_err(|_| at("function index over 65535".into()))?;
        let t = u32::try_from(thread.varint().map_err(at)?)
            .map_err(|_| at("thread delta over 32 bits".into()))?;
        let thread_id = last_thread.wrapping_add(unzigzag32(t));
        let context_id = unzigzag(context.varint().map_err(at)?, last_context);
        let begin_ns = unzigzag(begin.varint().map_err(at)?, last_end);
        let duration_ns = duration.varint().map_err(at)?;
        let cpu_ns = unzigzag(cpu.varint().map_err(at)?, duration_ns);
        let s = shape.varint().map_err(at)?;
        let n = s >> 1;
        // Each argument takes at least a byte of the args column.
        if n > args.remaining() {
            return Err(at(format!(
                "{n} arguments, {} bytes of arguments left",
                args.remaining()
            )));
        }
        if usize::from(f) >= last_of_func.len() {
            last_of_func.resize(usize::from(f) + 1, usize::MAX);
        }
        let prev: &[u64] = match last_of_func[usize::from(f)] {
            usize::MAX => &[],
            j => &out[j].args,
        };
        let mut call_args = Vec::with_capacity(n as usize);
        for k in 0..n as usize {
            let base = prev.get(k).copied().unwrap_or(0);
            call_args.push(unzigzag(args.varint().map_err(at)?, base));
        }
        let r = if s & 1 == 1 {
            Some(ret.varint().map_err(at)?)
        } else {
            None
        };
        let site_at = site.varint().map_err(at)?;
        let callsite = *usize::try_from(site_at)
            .ok()
            .and_then(|k| sites.get(k))
            .ok_or_else(|| at(format!("call site {site_at} of {}", sites.len())))?;
        last_of_func[usize::from(f)] = i;
        (last_thread, last_context, last_end) =
            (thread_id, context_id, begin_ns.wrapping_add(duration_ns));
        out.push(Call {
            func: f,
            thread: thread_id,
            context: context_id,
            begin_ns,
            duration_ns,
            cpu_ns,
            args: call_args,
            ret: r,
            callsite,
        });
    }
    for c in &columns {
        if c.remaining() > 0 {
            return Err(format!(
                "column {}: {} bytes after the last call",
                c.name,
                c.remaining()
            ));
        }
    }
    Ok(Frame {
        index,
        begin_ns,
        end_ns,
        calls: out,
        samples,
    })
}
