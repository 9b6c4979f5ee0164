//! The recorded calls a program thread collects until the writer takes them: a buffer of
//! fixed 64-byte records, one cache line each, written once per call with no allocation and
//! no copy of a template. What few calls have beyond it (more than [`INLINE_ARGS`]
//! arguments, a return value, the thread's CPU time, a duration longer than `u32` ticks) goes
//! into a word stream beside the records, and a work call's counter values into a list of
//! their own. The thread and the context are the buffer's: a thread hands its buffer over
//! when it moves to another context.

use crate::generated::MAX_ARGS;
use gpuheat_session::CounterValue;

/// Arguments kept in the record itself; the rest go to the buffer's words.
pub(crate) const INLINE_ARGS: usize = 4;

/// Calls per buffer before it is handed to the writer in one message.
pub(crate) const BUFFER_CALLS: usize = 8192;

/// Extra words a buffer has room for before it grows: two per call (a fifth and sixth
/// argument, or a return value and the CPU time) is more than most frames need.
const BUFFER_WORDS: usize = 2 * BUFFER_CALLS;

/// [`RawCall::seq`] of a call that has no place in its frame yet (see `recorder`).
pub(crate) const UNPLACED: u32 = u32::MAX;

const HAS_RET: u8 = 1;
const HAS_CPU: u8 = 2;
/// The duration did not fit in `ticks`: the end is among the extras.
const LONG: u8 = 4;

/// One recorded call: one cache line.
#[repr(C, align(64))]
pub(crate) struct RawCall {
    /// [`crate::clock::ticks`] before the real call.
    begin: u64,
    /// The program's call site.
    site: u64,
    args: [u64; INLINE_ARGS],
    /// Ticks from `begin` to the end of the real call, unless `LONG`.
    ticks: u32,
    /// The call's place in its frame, or [`UNPLACED`].
    pub seq: u32,
    func: u16,
    nargs: u8,
    flags: u8,
    /// Where the call's extras start in the buffer's words.
    extra: u32,
}

/// A call as it is added to a buffer.
pub(crate) struct NewCall<'a> {
    pub func: u16,
    pub site: u64,
    pub begin: u64,
    pub end: u64,
    pub seq: u32,
    pub args: &'a [u64],
    pub ret: Option<u64>,
    /// Thread CPU time of the call, when it was read.
    pub cpu: Option<u64>,
}

/// A call as the writer reads it back.
pub(crate) struct Call<'a> {
    pub func: u16,
    pub site: u64,
    pub begin: u64,
    pub end: u64,
    pub args: &'a [u64],
    pub ret: Option<u64>,
    pub cpu: Option<u64>,
    pub values: &'a [CounterValue],
}

/// One thread's recorded calls of one frame, on one context.
pub(crate) struct CallBuffer {
    pub frame: u64,
    pub tid: u32,
    pub ctx: u64,
    calls: Vec<RawCall>,
    words: Vec<u64>,
    /// (index in `calls`, values), in call order.
    values: Vec<(u32, Vec<CounterValue>)>,
    /// The places given to the [`UNPLACED`] records, in their order: (first place, count).
    runs: Vec<(u32, u32)>,
}

impl CallBuffer {
    /// A buffer without memory yet (a thread's before its first recorded call).
    pub const fn empty() -> CallBuffer {
        CallBuffer {
            frame: 0,
            tid: 0,
            ctx: 0,
            calls: Vec::new(),
            words: Vec::new(),
            values: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// An empty buffer with room for [`BUFFER_CALLS`] calls.
    pub fn new() -> CallBuffer {
        CallBuffer {
            calls: Vec::with_capacity(BUFFER_CALLS),
            words: Vec::with_capacity(BUFFER_WORDS),
            ..CallBuffer::empty()
        }
    }

    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Whether the buffer has had its memory (a buffer taken from the pool has).
    pub fn has_room(&self) -> bool {
        self.calls.capacity() >= BUFFER_CALLS
    }

    /// Whether it is time to hand the buffer over.
    pub fn full(&self) -> bool {
        self.calls.len() >= BUFFER_CALLS
    }

    /// Empties the buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.calls.clear();
        self.words.clear();
        self.values.clear();
        self.runs.clear();
    }

    /// Adds a call (at most [`MAX_ARGS`] of its arguments are kept).
    #[inline(always)]
    pub fn push(&mut self, c: &NewCall<'_>) {
        let n = c.args.len().min(MAX_ARGS);
        let mut args = [0u64; INLINE_ARGS];
        let inline = n.min(INLINE_ARGS);
        args[..inline].copy_from_slice(&c.args[..inline]);
        let span = c.end.wrapping_sub(c.begin);
        let mut flags = 0;
        let extra = self.words.len() as u32;
        if n > INLINE_ARGS {
            self.words.extend_from_slice(&c.args[INLINE_ARGS..n]);
        }
        if let Some(r) = c.ret {
            flags |= HAS_RET;
            self.words.push(r);
        }
        if let Some(cpu) = c.cpu {
            flags |= HAS_CPU;
            self.words.push(cpu);
        }
        let ticks = match u32::try_from(span) {
            Ok(t) if c.end >= c.begin => t,
            _ => {
                flags |= LONG;
                self.words.push(c.end);
                0
            }
        };
        let record = RawCall {
            begin: c.begin,
            site: c.site,
            args,
            ticks,
            seq: c.seq,
            func: c.func,
            nargs: n as u8,
            flags,
            extra,
        };
        self.calls.push(record);
    }

    /// Attaches counter values to the call added last.
    pub fn attach_values(&mut self, values: Vec<CounterValue>) {
        if values.is_empty() || self.calls.is_empty() {
            return;
        }
        self.values.push(((self.calls.len() - 1) as u32, values));
    }

    /// Gives the next `count` [`UNPLACED`] records (the oldest not placed yet) the places
    /// `first..first + count`, without touching them: the writer reads the places back with
    /// [`CallBuffer::places`].
    pub fn place(&mut self, first: u32, count: u32) {
        self.runs.push((first, count));
    }

    /// Every record's place, in record order.
    pub fn places(&self) -> impl Iterator<Item = u32> + '_ {
        let mut runs = self
            .runs
            .iter()
            .flat_map(|&(first, n)| (0..n).map(move |k| first.wrapping_add(k)));
        self.calls.iter().map(move |c| {
            if c.seq == UNPLACED {
                runs.next().unwrap_or(UNPLACED)
            } else {
                c.seq
            }
        })
    }

    /// The records.
    #[cfg(test)]
    pub fn records(&self) -> &[RawCall] {
        &self.calls
    }

    /// Call `i`, whole; `spill` holds its arguments when they do not all fit in the record.
    pub fn get<'a>(&'a self, i: usize, spill: &'a mut [u64; MAX_ARGS]) -> Call<'a> {
        let r = &self.calls[i];
        let n = usize::from(r.nargs);
        let mut w = r.extra as usize;
        let args: &[u64] = if n <= INLINE_ARGS {
            &r.args[..n]
        } else {
            spill[..INLINE_ARGS].copy_from_slice(&r.args);
            let rest = n - INLINE_ARGS;
            for (k, a) in spill[INLINE_ARGS..n].iter_mut().enumerate() {
                *a = self.words.get(w + k).copied().unwrap_or(0);
            }
            w += rest;
            &spill[..n]
        };
        let mut next = || {
            let v = self.words.get(w).copied().unwrap_or(0);
            w += 1;
            v
        };
        let ret = (r.flags & HAS_RET != 0).then(&mut next);
        let cpu = (r.flags & HAS_CPU != 0).then(&mut next);
        let end = if r.flags & LONG != 0 {
            next()
        } else {
            r.begin.wrapping_add(u64::from(r.ticks))
        };
        let values = match self.values.binary_search_by_key(&(i as u32), |(k, _)| *k) {
            Ok(k) => &self.values[k].1[..],
            Err(_) => &[],
        };
        Call {
            func: r.func,
            site: r.site,
            begin: r.begin,
            end,
            args,
            ret,
            cpu,
            values,
        }
    }
}

/// Buffers the writer has emptied, kept for the threads to fill again: a new buffer's pages
/// are faulted in as calls are written to it (about 15 ns per call), a reused one's are not.
static POOL: std::sync::Mutex<Vec<CallBuffer>> = std::sync::Mutex::new(Vec::new());
/// Most emptied buffers kept (about 650 KB each): a frame of 20,000 calls fills three, and
/// the writer hands them back a frame or two later.
const POOL_BUFFERS: usize = 24;

/// An empty buffer of [`BUFFER_CALLS`] calls, reused when the writer returned one.
pub(crate) fn fresh_buffer() -> CallBuffer {
    let reused = POOL.lock().ok().and_then(|mut p| p.pop());
    reused.unwrap_or_else(CallBuffer::new)
}

/// Buffers made ready in the pool when a writer starts, their pages touched on the writer
/// thread, so that a program thread's first buffers of a capture fault nothing in; after
/// that, the buffers the writer hands back circulate.
const READY_BUFFERS: usize = 8;

/// Tops the pool up to [`READY_BUFFERS`] with touched buffers (on the writer thread).
pub(crate) fn prepare_buffers() {
    let missing = POOL
        .lock()
        .map_or(0, |p| READY_BUFFERS.saturating_sub(p.len()));
    for _ in 0..missing {
        let mut buf = CallBuffer::new();
        let blank = NewCall {
            func: 0,
            site: 0,
            begin: 0,
            end: 0,
            seq: 0,
            args: &[0, 0],
            ret: None,
            cpu: None,
        };
        for _ in 0..BUFFER_CALLS {
            buf.push(&blank);
        }
        buf.words.resize(BUFFER_WORDS, 0);
        recycle(buf);
    }
}

/// The writer is done with `buf`: its memory (already faulted in) serves the next buffer.
pub(crate) fn recycle(mut buf: CallBuffer) {
    if !buf.has_room() {
        return;
    }
    buf.clear();
    if let Ok(mut p) = POOL.lock() {
        if p.len() < POOL_BUFFERS {
            p.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unplaced_records_take_their_runs_places_in_order_around_placed_ones() {
        let mut b = CallBuffer::new();
        let mut add = |seq| {
            b.push(&NewCall {
                func: 1,
                site: 0,
                begin: 0,
                end: 1,
                seq,
                args: &[],
                ret: None,
                cpu: None,
            })
        };
        // Two plain calls, a VG call placed before its plain child, two more plain calls.
        for seq in [UNPLACED, UNPLACED, 12, UNPLACED, UNPLACED, UNPLACED] {
            add(seq);
        }
        b.place(10, 2);
        b.place(13, 1);
        b.place(20, 2);
        assert_eq!(b.places().collect::<Vec<_>>(), [10, 11, 12, 13, 20, 21]);
    }

    #[test]
    fn a_record_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<RawCall>(), 64);
    }

    #[test]
    fn calls_read_back_as_they_were_added() {
        let mut b = CallBuffer::new();
        let many: Vec<u64> = (0..17).map(|k| 100 + k).collect();
        let v = vec![CounterValue {
            counter: 3,
            value: 7,
        }];
        b.push(&NewCall {
            func: 1,
            site: 0xAB,
            begin: 1_000,
            end: 1_050,
            seq: 0,
            args: &[5, 6],
            ret: None,
            cpu: None,
        });
        b.push(&NewCall {
            func: 2,
            site: 0xCD,
            begin: 2_000,
            end: 2_000 + (1 << 33),
            seq: 1,
            args: &many,
            ret: Some(9),
            cpu: Some(40),
        });
        b.attach_values(v.clone());
        b.push(&NewCall {
            func: 3,
            site: 0,
            begin: 5_000,
            end: 4_000,
            seq: UNPLACED,
            args: &[],
            ret: Some(0),
            cpu: None,
        });
        let mut spill = [0; MAX_ARGS];
        let c = b.get(0, &mut spill);
        assert_eq!(
            (c.func, c.site, c.begin, c.end, c.args, c.ret, c.cpu),
            (1, 0xAB, 1_000, 1_050, &[5u64, 6][..], None, None)
        );
        assert!(c.values.is_empty());
        let c = b.get(1, &mut spill);
        assert_eq!(
            (c.end, c.args, c.ret, c.cpu),
            (2_000 + (1 << 33), &many[..], Some(9), Some(40))
        );
        assert_eq!(c.values, &v[..]);
        // A clock that went backwards keeps its end as read.
        let c = b.get(2, &mut spill);
        assert_eq!((c.end, c.ret), (4_000, Some(0)));
        assert_eq!(b.records()[2].seq, UNPLACED);
        b.place(7, 1);
        assert_eq!(b.places().collect::<Vec<_>>(), [0, 1, 7]);
        b.clear();
        assert!(b.is_empty() && b.has_room());
    }
}
