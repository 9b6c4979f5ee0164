//! One replay under transform feedback: `P`'s uniforms copied to its shadow program `S`,
//! rasterization discarded, our transform feedback object recording `gl_Position` into our
//! buffer, the draw re-issued, then the positions read back and every binding touched
//! restored.

use gpuheat_session::DrawGeometry;

use crate::gl::*;
use crate::state::{drain_errors, Piece, Saved};

use super::draw::Plan;
use super::shadow::Shadow;
use super::uniforms::copy_uniforms;

/// Bytes of one recorded vertex (`vec4` clip position).
pub(super) const VERTEX_BYTES: u64 = 16;

/// Our transform feedback object, its buffer and our two queries.
#[derive(Debug)]
struct Objects {
    tfo: GLuint,
    buffer: GLuint,
    /// Bytes allocated for `buffer`.
    capacity: u64,
    /// primitives written, primitives generated.
    queries: [GLuint; 2],
}

/// The transform feedback objects of one context, made at the first replay.
#[derive(Debug, Default)]
pub(super) struct Feedback {
    objects: Option<Objects>,
}

impl Feedback {
    /// Replays the draw (`replay`, the entry point `name`) with `shadow` in place of the
    /// current program `program`, keeping at most `keep` vertices (whole primitives of
    /// `plan`; the buffer never grows past `budget` vertices). With `generated_query`,
    /// `GL_PRIMITIVES_GENERATED` counts what the draw made; else the plan's count stands.
    ///
    /// # Safety
    /// The context these objects belong to must be current (with `program` current in it,
    /// no transform feedback active), `t`, `g` its real functions, and `replay` must issue
    /// the draw `plan` was made from.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn record(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        program: GLuint,
        shadow: &Shadow,
        plan: Plan,
        keep: u64,
        budget: u64,
        generated_query: bool,
        name: &str,
        replay: &dyn Fn(),
    ) -> Result<DrawGeometry, String> {
        // SAFETY: our caller's promise: the context is current and transform feedback exists
        // in it (GL 3.1+ with transform feedback objects, GLES 3.0+), so every piece does.
        let saved = unsafe {
            Saved::take(
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
            )
        };
        // Nothing fits: a 4-byte range still lets the queries count the draw.
        let bytes = if keep == 0 { 4 } else { keep * VERTEX_BYTES };
        // SAFETY: our caller's promise (the context is current).
        let o = unsafe { self.ensure(t, g, bytes, budget)? };
        // SAFETY: our caller's promise; our objects are live names of this context, `shadow`
        // was linked from `program`, and `saved` puts back every binding changed here.
        unsafe {
            let viewport = t.integers4(VIEWPORT);
            (t.use_program)(shadow.program);
            copy_uniforms(
                t,
                g,
                program,
                &shadow.uniforms,
                &shadow.blocks,
                shadow.program,
            );
            (g.bind_transform_feedback)(TRANSFORM_FEEDBACK, o.tfo);
            (g.bind_buffer_range)(
                TRANSFORM_FEEDBACK_BUFFER,
                0,
                o.buffer,
                0,
                bytes as GLsizeiptr,
            );
            (t.enable)(RASTERIZER_DISCARD);
            let e = drain_errors(t);
            if e != NO_ERROR {
                return Err(format!("GL error 0x{e:04X} setting up the replay"));
            }
            (g.begin_query)(TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN, o.queries[0]);
            if generated_query {
                (g.begin_query)(PRIMITIVES_GENERATED, o.queries[1]);
            }
            (g.begin_transform_feedback)(plan.primitive);
            replay();
            let replayed = drain_errors(t);
            (g.end_transform_feedback)();
            (g.end_query)(TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN);
            if generated_query {
                (g.end_query)(PRIMITIVES_GENERATED);
            }
            if replayed != NO_ERROR {
                drain_errors(t);
                return Err(format!(
                    "GL error 0x{replayed:04X} replaying {name} under transform feedback"
                ));
            }
            let mut written = 0;
            (g.get_query_objectuiv)(o.queries[0], QUERY_RESULT, &mut written);
            let generated = if generated_query {
                let mut n = 0;
                (g.get_query_objectuiv)(o.queries[1], QUERY_RESULT, &mut n);
                u64::from(n) * plan.per
            } else {
                plan.expected
            };
            let held = (u64::from(written) * plan.per).min(keep);
            let mut positions = Vec::new();
            if held > 0 {
                let p = (g.map_buffer_range)(
                    TRANSFORM_FEEDBACK_BUFFER,
                    0,
                    (held * VERTEX_BYTES) as GLsizeiptr,
                    MAP_READ_BIT,
                );
                if p.is_null() {
                    let e = drain_errors(t);
                    return Err(format!(
                        "mapping the transform feedback buffer failed (GL error 0x{e:04X})"
                    ));
                }
                // The mapping holds `held` vec4 positions: `held` never exceeds `keep`, the
                // vertices the bound range has room for.
                let src = std::slice::from_raw_parts(p as *const [f32; 4], held as usize);
                positions = src.to_vec();
                (g.unmap_buffer)(TRANSFORM_FEEDBACK_BUFFER);
            }
            drop(saved);
            Ok(DrawGeometry {
                call: 0,
                primitive: plan.primitive,
                positions,
                dropped_vertices: generated.saturating_sub(held),
                viewport,
            })
        }
    }

    /// Creates our transform feedback object, buffer and queries, and grows the buffer to
    /// `bytes` (never past `budget` vertices). Leaves the generic transform feedback buffer
    /// binding changed (the caller restores it).
    ///
    /// # Safety
    /// The context these objects belong to must be current, and `t`, `g` its real functions.
    unsafe fn ensure(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        bytes: u64,
        budget: u64,
    ) -> Result<&Objects, String> {
        // SAFETY: our caller's promise; the names bound are ours, just generated.
        unsafe {
            let o = self.objects.get_or_insert_with(|| {
                let mut tfo = 0;
                (g.gen_transform_feedbacks)(1, &mut tfo);
                let mut buffer = 0;
                (g.gen_buffers)(1, &mut buffer);
                let mut queries = [0; 2];
                (g.gen_queries)(2, queries.as_mut_ptr());
                Objects {
                    tfo,
                    buffer,
                    capacity: 0,
                    queries,
                }
            });
            if o.capacity < bytes {
                // Grow geometrically, within the budget, so a frame of growing draws does
                // not reallocate at every draw.
                let cap = bytes
                    .next_power_of_two()
                    .min((budget * VERTEX_BYTES).max(bytes));
                (t.bind_buffer)(TRANSFORM_FEEDBACK_BUFFER, o.buffer);
                (g.buffer_data)(
                    TRANSFORM_FEEDBACK_BUFFER,
                    cap as GLsizeiptr,
                    std::ptr::null(),
                    STREAM_READ,
                );
                let e = drain_errors(t);
                if e != NO_ERROR {
                    o.capacity = 0;
                    return Err(format!(
                        "GL error 0x{e:04X} allocating {cap} bytes for transform feedback"
                    ));
                }
                o.capacity = cap;
            }
            Ok(o)
        }
    }
}
