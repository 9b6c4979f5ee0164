//! Replays under transform feedback, read back once per frame.
//!
//! Each replay copies `P`'s uniforms to its shadow program `S`, discards rasterization, and
//! records `gl_Position` into its own range of our one buffer, with its own queries
//! (primitives written, primitives generated) from a pool, then puts back every binding it
//! touched. Nothing is read then: [`Feedback::resolve`] reads every pending replay's query
//! results and maps the buffer once, at the frame's end.
//!
//! Why: reading a query's `GL_QUERY_RESULT` or mapping the buffer right after the replay
//! waits for the GPU to finish everything queued before it (on llvmpipe it also flushes the
//! scene). Read back at the frame's end, the frame waits once, for work its swap waits for
//! anyway. (In full mode the serialized timing drains the pipeline around every draw already,
//! so on llvmpipe this measured the same as a wait per replay; see docs/ARCHITECTURE.md.)
//!
//! Bounds: the buffer holds at most the frame's vertex budget (16 bytes a vertex; it grows
//! by doubling each time it fills, reading back what is pending first, since reallocating
//! the store discards its contents, so a frame's draws soon fit it whole), and at most
//! [`MAX_PENDING`] replays wait at once (two query names each): past either, the pending
//! replays are read back early, mid-frame.

use gpuheat_session::{DrawGeometry, GeometryMissing};

use crate::gl::*;
use crate::pool::Pool;
use crate::state::{drain_errors, ErrorScope, Piece, Saved};

use super::distinct::Unroll;
use super::draw::Plan;
use super::shadow::Shadow;
use super::uniforms::copy_uniforms;

/// Bytes of one recorded vertex (`vec4` clip position).
pub(super) const VERTEX_BYTES: u64 = 16;

/// Most replays waiting to be read back; past it they are read back mid-frame. Bounds the
/// query pool at twice as many names.
pub(super) const MAX_PENDING: usize = 8192;

/// What a display list's replay range is filled with before it records: a NaN whose payload
/// no transform feedback writes, so the vertices written are those before the first one.
const SENTINEL: [f32; 4] = [f32::from_bits(0x7FC0_DEAD); 4];

/// Vertices of [`SENTINEL`] written per `glBufferSubData` (16 KiB on the stack).
const SENTINEL_BLOCK: usize = 1024;

/// Smallest allocation of our buffer, so small frames do not grow it draw by draw.
const MIN_BUFFER_BYTES: u64 = 1 << 20;

/// A replay recorded but not read back yet.
#[derive(Debug, Clone)]
struct Pending {
    call: u32,
    primitive: GLenum,
    /// Vertices per primitive.
    per: u64,
    /// Vertices its range has room for (whole primitives); 0: only counted.
    keep: u64,
    /// A distinct-vertex replay's indices, unrolled at the read-back.
    unroll: Option<Unroll>,
    /// Vertices the draw makes by its arguments (used without a generated query).
    expected: u64,
    viewport: [GLint; 4],
    /// Byte offset of its range in our buffer.
    offset: u64,
    /// Index of its written query in the pool; its generated query is the next one.
    query: usize,
    generated: bool,
    /// A display list's replay: the kind of primitive is learnt from what it wrote.
    deduce_kind: bool,
}

impl Pending {
    /// Vertices of the frame's budget it reserved: its range, or the unrolled vertices of a
    /// distinct-vertex replay.
    fn budget(&self) -> u64 {
        self.unroll
            .as_ref()
            .map_or(self.keep, |u| u.at.len() as u64)
    }
}

/// A replay read back: its geometry, or why it has none; and the vertices it had reserved
/// of the frame's budget (its range), so the caller can give back what it did not use.
pub(super) type Resolved = (u64, Result<DrawGeometry, GeometryMissing>);

/// Our transform feedback object and buffer.
#[derive(Debug)]
struct Objects {
    tfo: GLuint,
    buffer: GLuint,
    /// Bytes allocated for `buffer`.
    capacity: u64,
}

/// The transform feedback objects of one context (made at the first replay), its query
/// pool, and the replays waiting to be read back.
#[derive(Debug, Default)]
pub(super) struct Feedback {
    /// The context has the `GL_QUERY_BUFFER` binding (GL 4.4+), set to 0 around reads.
    query_buffer: bool,
    objects: Option<Objects>,
    /// Query names, two per pending replay (written, generated), reused frame after frame.
    queries: Vec<GLuint>,
    pending: Vec<Pending>,
    /// Bytes of the buffer the pending replays' ranges take.
    end: u64,
    /// Replays read back early (buffer full, pool full) not yet handed to the caller.
    early: Vec<Resolved>,
}

/// What a replay needs besides the draw: the program, its shadow, and where it goes.
pub(super) struct Replay<'a> {
    pub(super) program: GLuint,
    pub(super) shadow: &'a Shadow,
    pub(super) plan: Plan,
    /// Vertices to keep (whole primitives of `plan`).
    pub(super) keep: u64,
    /// The frame's vertex budget (the buffer never grows past it).
    pub(super) budget: u64,
    /// `GL_PRIMITIVES_GENERATED` counts what the draw made; else the plan's count stands.
    pub(super) generated_query: bool,
    /// The draw's index in its frame.
    pub(super) call: u32,
    /// The entry point (for messages).
    pub(super) name: &'a str,
    /// `replay` draws the distinct vertices as points (`plan` says so): the read-back
    /// unrolls them through these indices into `primitive`.
    pub(super) unroll: Option<(Unroll, GLenum)>,
    /// A display list's replay (`lists.rs`): its range is filled with [`SENTINEL`] first,
    /// and the kind of primitive it made is learnt from the vertices written per primitive
    /// (Mesa does not check a list's primitives against the transform feedback's, and
    /// records them as they are).
    pub(super) deduce_kind: bool,
}

impl Feedback {
    /// Nothing made yet, for a context with (or without) the `GL_QUERY_BUFFER` binding.
    pub(super) fn new(query_buffer: bool) -> Feedback {
        Feedback {
            query_buffer,
            ..Feedback::default()
        }
    }

    /// Replays pending (recorded, not read back).
    pub(super) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Replays the draw (`replay`) with `r.shadow` in place of the current program, keeping
    /// at most `r.keep` vertices in its own range of our buffer; the positions and counts are
    /// read by [`Feedback::resolve`]. Reads back what is pending first when the buffer or the
    /// query pool is full (taken with [`Feedback::take_early`]).
    ///
    /// # Safety
    /// The context these objects belong to must be current (with `r.program` current in it,
    /// no transform feedback active), `t`, `g` its real functions, and `replay` must issue
    /// the draw `r.plan` was made from.
    pub(super) unsafe fn record(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        r: Replay<'_>,
        replay: &dyn Fn(),
    ) -> Result<(), String> {
        // Nothing fits: a 4-byte range still lets the queries count the draw (no primitive,
        // not even a point, fits in it); the room taken keeps the next range 16-aligned.
        let (range, room) = if r.keep == 0 {
            (4, VERTEX_BYTES)
        } else {
            (r.keep * VERTEX_BYTES, r.keep * VERTEX_BYTES)
        };
        // SAFETY: our caller's promise (the context is current); `ensure` restores the
        // bindings it changes.
        unsafe {
            if self.pending.len() >= MAX_PENDING {
                self.read_back_early(t, g);
            }
            self.ensure(t, g, room, r.budget)?;
        }
        let Some(o) = self.objects.as_ref() else {
            return Err("no transform feedback objects".into());
        };
        let (tfo, buffer, offset) = (o.tfo, o.buffer, self.end);
        let query = 2 * self.pending.len();
        // SAFETY: our caller's promise: the context is current and transform feedback exists
        // in it (GL 3.1+ with transform feedback objects, GLES 3.0+), so every piece does;
        // our objects are live names of this context, `shadow` was linked from `program`,
        // and `saved` puts back every binding changed here.
        unsafe {
            if self.queries.len() < query + 2 {
                let old = self.queries.len();
                self.queries.resize(query + 2, 0);
                (g.gen_queries)(2, self.queries[old..].as_mut_ptr());
            }
            let (written_q, generated_q) = (self.queries[query], self.queries[query + 1]);
            let saved = Saved::take(
                t,
                &[
                    Piece::Program,
                    Piece::Binding {
                        query: TRANSFORM_FEEDBACK_BINDING,
                        target: TRANSFORM_FEEDBACK,
                        bind: g.bind_transform_feedback,
                    },
                    Piece::Binding {
                        query: TRANSFORM_FEEDBACK_BUFFER_BINDING,
                        target: TRANSFORM_FEEDBACK_BUFFER,
                        bind: t.bind_buffer,
                    },
                    Piece::Enabled(RASTERIZER_DISCARD),
                ],
            );
            let viewport = t.integers4(VIEWPORT);
            (t.use_program)(r.shadow.program);
            copy_uniforms(
                t,
                g,
                r.program,
                &r.shadow.uniforms,
                &r.shadow.blocks,
                r.shadow.program,
            );
            (g.bind_transform_feedback)(TRANSFORM_FEEDBACK, tfo);
            (g.bind_buffer_range)(
                TRANSFORM_FEEDBACK_BUFFER,
                0,
                buffer,
                offset as GLsizeiptr,
                range as GLsizeiptr,
            );
            (t.enable)(RASTERIZER_DISCARD);
            if r.deduce_kind && r.keep > 0 {
                // Through the generic binding `glBindBufferRange` just set (put back by
                // `saved`), in pieces of a fixed block: a list's range may be the whole
                // budget (64 MiB by default).
                let fill = [SENTINEL; SENTINEL_BLOCK];
                let mut at = 0;
                while at < r.keep {
                    let n = (r.keep - at).min(SENTINEL_BLOCK as u64);
                    (g.buffer_sub_data)(
                        TRANSFORM_FEEDBACK_BUFFER,
                        (offset + at * VERTEX_BYTES) as GLsizeiptr,
                        (n * VERTEX_BYTES) as GLsizeiptr,
                        fill.as_ptr().cast(),
                    );
                    at += n;
                }
            }
            let e = drain_errors(t);
            if e != NO_ERROR {
                return Err(format!("GL error 0x{e:04X} setting up the replay"));
            }
            (g.begin_query)(TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN, written_q);
            if r.generated_query {
                (g.begin_query)(PRIMITIVES_GENERATED, generated_q);
            }
            (g.begin_transform_feedback)(r.plan.primitive);
            replay();
            let replayed = drain_errors(t);
            (g.end_transform_feedback)();
            (g.end_query)(TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN);
            if r.generated_query {
                (g.end_query)(PRIMITIVES_GENERATED);
            }
            if replayed != NO_ERROR {
                drain_errors(t);
                return Err(format!(
                    "GL error 0x{replayed:04X} replaying {} under transform feedback",
                    r.name
                ));
            }
            // A query that did not begin has no result to read at the frame's end.
            let e = drain_errors(t);
            if e != NO_ERROR {
                return Err(format!("GL error 0x{e:04X} ending the replay's queries"));
            }
            drop(saved);
            let (primitive, unroll) = match r.unroll {
                Some((u, primitive)) => (primitive, Some(u)),
                None => (r.plan.primitive, None),
            };
            self.pending.push(Pending {
                call: r.call,
                primitive,
                per: r.plan.per,
                keep: r.keep,
                unroll,
                expected: r.plan.expected,
                viewport,
                offset,
                query,
                generated: r.generated_query,
                deduce_kind: r.deduce_kind,
            });
            self.end = offset + room;
        }
        Ok(())
    }

    /// Forgets the last pending replay (its draw turned out to have raised an error of ours
    /// after it was recorded); its range and queries are reused.
    pub(super) fn forget_last(&mut self, call: u32) {
        if self.pending.last().is_some_and(|p| p.call == call) {
            if let Some(p) = self.pending.pop() {
                self.end = p.offset;
            }
        }
    }

    /// Replays read back early since the last call (the buffer or query pool was full).
    pub(super) fn take_early(&mut self) -> Vec<Resolved> {
        std::mem::take(&mut self.early)
    }

    /// Lists every pending replay as missing, with `reason`, without GL (for a frame that
    /// ended where its context could not be made to read them).
    pub(super) fn abandon(&mut self, reason: &str) -> Vec<Resolved> {
        self.end = 0;
        let mut out = self.take_early();
        out.extend(self.pending.drain(..).map(|p| {
            (
                p.budget(),
                Err(GeometryMissing {
                    call: p.call,
                    reason: reason.to_string(),
                }),
            )
        }));
        out
    }

    /// Reads every pending replay back: its query results (the first waits for the GPU to
    /// reach it), then its positions from one mapping of the buffer; returns them with those
    /// read back early, in the order they were recorded. Takes and raises again the
    /// program's pending GL error, and puts back every binding it changes.
    ///
    /// # Safety
    /// The context these objects belong to must be current, and `t`, `g` its real functions.
    pub(super) unsafe fn resolve(&mut self, t: &ThermalFns, g: &GeometryFns) -> Vec<Resolved> {
        let mut out = self.take_early();
        if self.pending.is_empty() {
            return out;
        }
        // SAFETY: our caller's promise.
        let errors = unsafe { ErrorScope::enter(t) };
        let first = out.len();
        // SAFETY: our caller's promise.
        unsafe { self.read(t, g, &mut out) };
        let e = errors.leave();
        if e != NO_ERROR {
            // An error anywhere in the read-back makes its every value suspect.
            for (_, r) in &mut out[first..] {
                if let Ok(d) = r {
                    *r = Err(GeometryMissing {
                        call: d.call,
                        reason: format!("GL error 0x{e:04X} reading the replay back"),
                    });
                }
            }
        }
        out
    }

    /// [`Feedback::resolve`] into `early`, for a read-back forced mid-frame (in its own
    /// error scope, so an error of the read-back is not taken for the replay's).
    ///
    /// # Safety
    /// As [`Feedback::resolve`].
    unsafe fn read_back_early(&mut self, t: &ThermalFns, g: &GeometryFns) {
        // SAFETY: our caller's promise.
        self.early = unsafe { self.resolve(t, g) };
    }

    /// Reads the pending replays' results and positions into `out` and empties the list.
    ///
    /// # Safety
    /// As [`Feedback::resolve`] (errors are left for the caller's scope).
    unsafe fn read(&mut self, t: &ThermalFns, g: &GeometryFns, out: &mut Vec<Resolved>) {
        let query_buffer = self.query_buffer;
        let pending = std::mem::take(&mut self.pending);
        self.end = 0;
        let Some(o) = self.objects.as_ref() else {
            return;
        };
        let mut pieces = vec![Piece::Binding {
            query: COPY_READ_BUFFER_BINDING,
            target: COPY_READ_BUFFER,
            bind: t.bind_buffer,
        }];
        if query_buffer {
            pieces.push(Piece::Binding {
                query: QUERY_BUFFER_BINDING,
                target: QUERY_BUFFER,
                bind: t.bind_buffer,
            });
        }
        // SAFETY: our caller's promise; every query name was begun and ended by `record`
        // (a replay whose queries failed was never listed), the mapping covers the bytes
        // read (GL fails the map, returning null, when the buffer is shorter), and `saved`
        // puts back the bindings changed here.
        unsafe {
            let saved = Saved::take(t, &pieces);
            if query_buffer {
                // Query results go into a bound query buffer instead of our memory.
                (t.bind_buffer)(QUERY_BUFFER, 0);
            }
            // The first result read waits for the replays, unless they are done (a read of
            // the frame's results may have waited for them already): their last query says.
            // The mapping after it does not wait.
            if let Some(last) = pending.last() {
                let mut available = 0;
                let query = self.queries[last.query];
                (g.get_query_objectuiv)(query, QUERY_RESULT_AVAILABLE, &mut available);
                if available == 0 {
                    crate::waits::note();
                }
            }
            let counts: Vec<(u64, u64)> = pending
                .iter()
                .map(|p| {
                    let mut written = 0;
                    (g.get_query_objectuiv)(self.queries[p.query], QUERY_RESULT, &mut written);
                    if p.deduce_kind {
                        // Primitives written and generated; the vertices are counted in the
                        // mapping.
                        let mut n = 0;
                        if p.generated {
                            (g.get_query_objectuiv)(
                                self.queries[p.query + 1],
                                QUERY_RESULT,
                                &mut n,
                            );
                        }
                        return (u64::from(written), u64::from(n));
                    }
                    let held = (u64::from(written) * p.per).min(p.keep);
                    let generated = if p.generated {
                        let mut n = 0;
                        (g.get_query_objectuiv)(self.queries[p.query + 1], QUERY_RESULT, &mut n);
                        u64::from(n) * p.per
                    } else if p.keep >= p.expected {
                        // The range had room for every vertex the draw can make: nothing
                        // was dropped, whatever primitive restart left out.
                        held
                    } else {
                        p.expected
                    };
                    (held, generated)
                })
                .collect();
            let bytes = pending
                .iter()
                .zip(&counts)
                .map(|(p, &(held, _))| {
                    p.offset + if p.deduce_kind { p.keep } else { held } * VERTEX_BYTES
                })
                .max()
                .unwrap_or(0);
            let mut mapped: *const [f32; 4] = std::ptr::null();
            let mut map_error = NO_ERROR;
            if bytes > 0 {
                (t.bind_buffer)(COPY_READ_BUFFER, o.buffer);
                mapped =
                    (g.map_buffer_range)(COPY_READ_BUFFER, 0, bytes as GLsizeiptr, MAP_READ_BIT)
                        as *const [f32; 4];
                if mapped.is_null() {
                    map_error = drain_errors(t);
                }
            }
            for (p, &(held, generated)) in pending.iter().zip(&counts) {
                let missing = |reason: String| {
                    Err(GeometryMissing {
                        call: p.call,
                        reason,
                    })
                };
                let mut primitive = p.primitive;
                let result = match &p.unroll {
                    _ if p.deduce_kind => {
                        if held == 0 {
                            // Nothing fitted: at least a vertex per primitive was dropped.
                            Ok((Vec::new(), generated))
                        } else if mapped.is_null() {
                            missing(format!(
                                "mapping the transform feedback buffer failed (GL error \
                                 0x{map_error:04X})"
                            ))
                        } else {
                            // The mapping holds this whole range (`bytes` covers it).
                            let range = std::slice::from_raw_parts(
                                mapped.add((p.offset / VERTEX_BYTES) as usize),
                                p.keep as usize,
                            );
                            match deduce(range, held, generated) {
                                Ok((positions, dropped, kind)) => {
                                    primitive = kind;
                                    Ok((positions, dropped))
                                }
                                Err(why) => missing(why),
                            }
                        }
                    }
                    Some(u) if held != u64::from(u.span) => missing(format!(
                        "its replay as {} distinct vertices wrote {held}",
                        u.span
                    )),
                    None if held == 0 => Ok((Vec::new(), generated)),
                    _ if mapped.is_null() => missing(format!(
                        "mapping the transform feedback buffer failed (GL error 0x{map_error:04X})"
                    )),
                    unroll => {
                        // The mapping holds `bytes` from offset 0, and `bytes` is at least
                        // this range's end; offsets are multiples of 16, as the mapping is
                        // aligned.
                        let range = std::slice::from_raw_parts(
                            mapped.add((p.offset / VERTEX_BYTES) as usize),
                            held as usize,
                        );
                        match unroll {
                            // Every index is below the span, which is what `range` holds.
                            Some(u) => {
                                let mut positions = pooled(u.at.len());
                                positions.extend(u.at.iter().map(|&i| range[i as usize]));
                                Ok((positions, 0))
                            }
                            None => {
                                let mut positions = pooled(range.len());
                                positions.extend_from_slice(range);
                                Ok((positions, generated.saturating_sub(held)))
                            }
                        }
                    }
                };
                out.push((
                    p.budget(),
                    result.map(|(positions, dropped_vertices)| DrawGeometry {
                        call: p.call,
                        primitive,
                        positions,
                        dropped_vertices,
                        viewport: p.viewport,
                    }),
                ));
            }
            if !mapped.is_null() {
                (g.unmap_buffer)(COPY_READ_BUFFER);
            }
            drop(saved);
        }
    }

    /// Creates our transform feedback object and buffer at the first replay, and makes room
    /// for `room` more bytes after the pending ranges: when they do not fit, what is pending
    /// is read back (into `early`) and the buffer starts over, grown (by doubling, never past
    /// `budget` vertices unless one draw's range needs more).
    ///
    /// # Safety
    /// The context these objects belong to must be current, and `t`, `g` its real functions,
    /// inside the caller's [`ErrorScope`].
    unsafe fn ensure(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        room: u64,
        budget: u64,
    ) -> Result<(), String> {
        // SAFETY: our caller's promise; the names made are ours.
        unsafe {
            if self.objects.is_none() {
                let mut tfo = 0;
                (g.gen_transform_feedbacks)(1, &mut tfo);
                let mut buffer = 0;
                (g.gen_buffers)(1, &mut buffer);
                self.objects = Some(Objects {
                    tfo,
                    buffer,
                    capacity: 0,
                });
            }
            let capacity = self.objects.as_ref().map_or(0, |o| o.capacity);
            if self.end + room <= capacity {
                return Ok(());
            }
            if !self.pending.is_empty() {
                self.read_back_early(t, g);
            }
            // The frame needs more than the buffer holds: it grows now that it is empty,
            // within the budget, or every later frame like this one would wait here again
            // (a read-back each time it fills: 100 draws of 3,000 vertices waited 6 times a
            // frame in a 1 MiB buffer, whose growth only a single draw too large for it made).
            let most = budget * VERTEX_BYTES;
            let cap = (capacity * 2).max(MIN_BUFFER_BYTES).min(most).max(room);
            if cap <= capacity {
                return Ok(());
            }
            let Some(o) = self.objects.as_mut() else {
                return Err("no transform feedback objects".into());
            };
            // Through the copy-read binding, which transform feedback never uses, so a
            // program's active transform feedback is never in the way.
            let saved = Saved::take(
                t,
                &[Piece::Binding {
                    query: COPY_READ_BUFFER_BINDING,
                    target: COPY_READ_BUFFER,
                    bind: t.bind_buffer,
                }],
            );
            (t.bind_buffer)(COPY_READ_BUFFER, o.buffer);
            (g.buffer_data)(
                COPY_READ_BUFFER,
                cap as GLsizeiptr,
                std::ptr::null(),
                STREAM_READ,
            );
            let e = drain_errors(t);
            drop(saved);
            if e != NO_ERROR {
                o.capacity = 0;
                return Err(format!(
                    "GL error 0x{e:04X} allocating {cap} bytes for transform feedback"
                ));
            }
            o.capacity = cap;
        }
        Ok(())
    }
}

/// The positions a display list's replay wrote into its `range` (those before the first
/// [`SENTINEL`]) for `written` primitives, and their kind (from the vertices per primitive),
/// with the vertices dropped of `generated` primitives (0: not counted, none dropped). A list
/// that mixes kinds writes a number of vertices no single kind explains (except as many
/// triangles as points, which reads as lines).
fn deduce(
    range: &[[f32; 4]],
    written: u64,
    generated: u64,
) -> Result<(Vec<[f32; 4]>, u64, GLenum), String> {
    let sentinel = SENTINEL.map(f32::to_bits);
    let v = range
        .iter()
        .position(|x| x.map(f32::to_bits) == sentinel)
        .unwrap_or(range.len()) as u64;
    let per = v / written.max(1);
    if written == 0 || !v.is_multiple_of(written) || !(1..=3).contains(&per) {
        return Err(format!(
            "the display list mixes kinds of primitive: its replay wrote {v} vertices for \
             {written} primitives (one transform feedback records one kind)"
        ));
    }
    let kind = [POINTS, LINES, TRIANGLES][per as usize - 1];
    let mut positions = pooled(v as usize);
    positions.extend_from_slice(&range[..v as usize]);
    Ok((positions, (generated * per).saturating_sub(v), kind))
}

/// Position buffers the writer is done with, kept for the next frame's read-back: a frame of
/// 1,000 draws reads back 1,000 buffers (48 MB at 3M vertices), and allocating them anew each
/// frame on the program's thread faulted their pages in again (about a sixth of its time in a
/// geometry-captured frame of `many_draws`).
static POOL: Pool<[f32; 4]> = Pool::new(POOL_BYTES);

/// Most bytes the pool keeps: the default vertex budget's.
const POOL_BYTES: usize = (super::DEFAULT_VERTEX_BUDGET * VERTEX_BYTES) as usize;

/// An empty buffer with room for `len` positions, from the pool when it has one.
fn pooled(len: usize) -> Vec<[f32; 4]> {
    POOL.take(len)
}

/// Gives back a frame's position buffers once they are written (the writer thread's call),
/// within [`POOL_BYTES`].
pub fn recycle(buffers: impl IntoIterator<Item = Vec<[f32; 4]>>) {
    POOL.give(buffers);
}

/// Frees the pool (at a capture's end: the program keeps nothing of ours between captures).
pub fn release_pool() {
    POOL.release();
}
