//! Geometry capture: the post-transform (clip-space) positions of each draw of a captured
//! frame, recorded by replaying the draw under transform feedback with a shadow program.
//!
//! For a draw made with program `P`, the shadow program `S` links `P`'s vertex (and
//! fragment) stage again with `glTransformFeedbackVaryings(S, ["gl_Position"],
//! GL_INTERLEAVED_ATTRIBS)` and `P`'s attribute locations. `P` itself is never touched:
//! relinking it would reset its uniforms. `S` is built from the shader objects attached to
//! `P`, or, when the program detached them after linking (as most programs do), from the
//! sources the agent read when it saw `P` link ([`ProgramLink`]). `S` is cached per `P` with
//! the generation of `P`'s last link the agent saw, so a relink (or a deletion and reuse of
//! the name) builds a new `S` instead of returning stale positions. A draw with no program
//! current (fixed-function vertex processing) is replayed with the context's fixed-function
//! shadow (`ftransform()`, `shadow.rs`), and a display list (`glCallList(s)`) by running it
//! again under the shadow (`lists.rs`).
//!
//! Each replay: `P`'s default-block uniform values and uniform block bindings are copied to
//! `S`, rasterization is discarded, our transform feedback object records into the replay's
//! own range of our one buffer (at most what the frame's vertex budget has left, whole
//! primitives only), and the draw is re-issued with its own arguments and the program's
//! vertex arrays. A `GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN` query counts what was kept, a
//! `GL_PRIMITIVES_GENERATED` query what the draw made (where the context has it; else the
//! count follows from the draw's arguments), and the difference is the draw's
//! `dropped_vertices`.
//!
//! Nothing is read back at the draw: reading a query result or mapping the buffer there
//! waits for the GPU to finish what was queued before (on llvmpipe it also flushes the
//! scene). The
//! replays stay pending, each with its range and its two queries from a pool, and are read
//! back together when the frame is taken at its swap ([`GeometryCapture::take`]), when the
//! program switches away from the context ([`GeometryCapture::settle`]) or at the context's
//! next captured frame: one wait per frame. The budget counts a pending replay's whole
//! range until the read-back gives back what it did not hold (primitive restart makes fewer
//! vertices than the arguments say). The buffer and the pool are bounded (`replay.rs`): past
//! them what is pending is read back early, mid-frame.
//!
//! Invisibility: as in [`crate::thermal`], and with the same toolkit (`state.rs`), the
//! program's pending GL error is taken first and raised again afterwards, errors of ours are
//! drained (and make the draw's geometry missing, with the error), and every binding touched
//! is restored: current program, transform feedback object, the generic transform feedback
//! buffer binding and `GL_RASTERIZER_DISCARD`. Framebuffers are never written (rasterization
//! is discarded).
//!
//! Files, each depending only on those below it: `draw.rs` (a draw call's plan: primitive and
//! vertex count), `uniforms.rs` (copying `P`'s uniforms to `S`), `shadow.rs` (building and
//! caching `S`, and the fixed-function shadow), `replay.rs` (replays under transform
//! feedback and their read-back), `lists.rs` (display lists: counted, then recorded, inside
//! saved state; it extends this file's capture), and this file (the per-context capture:
//! checks, the frame's vertex budget, the reasons a draw is missing).
//!
//! A draw whose positions cannot be recorded gets a [`GeometryMissing`] with the reason,
//! never a silent hole.

mod distinct;
mod draw;
mod lists;
mod replay;
mod shadow;
mod uniforms;

use gpuheat_session::{
    ClientApi, DrawGeometry, FrameGeometry, GeometryMissing, MAX_GEOMETRY_VERTICES,
};

use crate::gl::*;
use crate::state::{drain_errors, ErrorScope, NOT_RENDERING};

use draw::{plan, Plan};
pub use draw::{BlockShape, DrawCall};
pub use lists::lists_changed;
pub use replay::{recycle, release_pool};
use replay::{Feedback, Replay, Resolved};
pub use shadow::{link_sources, ProgramLink};
use shadow::{Shadow, Shadows};

/// Default per-frame vertex budget: 4 Mi vertices, 64 MiB of positions.
pub const DEFAULT_VERTEX_BUDGET: u64 = 4 << 20;

/// Whether a context can record geometry, and how: `Ok(true)` when transform feedback
/// takes any draw (indexed, strips) and `GL_PRIMITIVES_GENERATED` exists (GL 3.1+ with
/// transform feedback objects, GLES 3.2 or GLES 3.x with geometry shaders), `Ok(false)` for
/// GLES 3.0/3.1 (only non-indexed lists of points, lines and triangles that fit the buffer).
pub fn support(
    api: ClientApi,
    major: u32,
    minor: u32,
    has_extension: impl Fn(&str) -> bool,
) -> Result<bool, String> {
    match api {
        ClientApi::Gl if (major, minor) >= (4, 0) => Ok(true),
        ClientApi::Gl
            if (major, minor) >= (3, 1) && has_extension("GL_ARB_transform_feedback2") =>
        {
            Ok(true)
        }
        ClientApi::Gl => Err(format!(
            "GL {major}.{minor} has no transform feedback objects (geometry needs GL 4.0, or \
             3.1 with GL_ARB_transform_feedback2)"
        )),
        ClientApi::Gles if major < 3 => Err(format!(
            "GLES {major}.{minor} has no transform feedback (geometry needs GLES 3.0)"
        )),
        ClientApi::Gles => Ok((major, minor) >= (3, 2)
            || has_extension("GL_OES_geometry_shader")
            || has_extension("GL_EXT_geometry_shader")),
        ClientApi::Vg => Err("OpenVG contexts have no vertex stage".into()),
        ClientApi::Vulkan => Err("geometry of Vulkan draws is not captured yet".into()),
    }
}

/// Per-context geometry capture: the shadow programs, our objects, and the geometry of the
/// frame being captured.
pub struct GeometryCapture {
    /// GLES 3.1+ or GL 4.1+ (program pipelines exist).
    pipelines: bool,
    /// The context has `GL_ARB_vertex_program`, whose enabled assembly program replaces the
    /// fixed transform.
    vertex_program_arb: bool,
    /// The context has the fixed-function pipeline, whose render mode may be selection or
    /// feedback.
    fixed_function: bool,
    unsupported: Option<String>,
    relaxed: bool,
    /// The draw being captured may not wait for the GPU (see [`GeometryCapture::capture`]).
    no_wait: bool,
    /// The primitive restart capabilities this context has (a distinct-vertex replay needs
    /// them off).
    restart: &'static [GLenum],
    budget: u64,
    feedback: Feedback,
    shadows: Shadows,
    frame: Option<FrameGeometry>,
    /// Frames finished but not yet taken (a frame whose swap came from another thread).
    finished: Vec<FrameGeometry>,
    /// Vertices of the frame's budget taken: those held in `frame`, and the room of each
    /// replay still pending.
    used: u64,
    /// The functions of the last capture, for [`GeometryCapture::take`] to read back what is
    /// pending with.
    fns: Option<(ThermalFns, GeometryFns)>,
    /// What `glCallList(name)` generated when last counted: its primitive and primitives
    /// (`lists.rs`), so that later calls record without counting first; valid while the
    /// process made and deleted no list since (the generation of [`lists_changed`]).
    list_counts: std::collections::HashMap<u64, (GLenum, u64)>,
    list_counts_of: u64,
    /// Calls recorded from a remembered count, not read back yet, and their list: one that
    /// dropped vertices (the list grew, or the budget ran out) is counted again next time.
    from_counts: std::collections::HashMap<u32, u64>,
}

impl std::fmt::Debug for GeometryCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeometryCapture")
            .field("budget", &self.budget)
            .field("used", &self.used)
            .field("pending", &self.feedback.pending())
            .field("shadows", &self.shadows.len())
            .finish()
    }
}

impl GeometryCapture {
    /// Geometry capture for a context of `api` `major.minor` (`support`: what
    /// [`support`] said), keeping at most `budget` vertices per frame (capped at the
    /// session's [`MAX_GEOMETRY_VERTICES`]).
    pub fn new(
        api: ClientApi,
        major: u32,
        minor: u32,
        support: Result<bool, String>,
        budget: u64,
    ) -> GeometryCapture {
        let gles = api == ClientApi::Gles;
        let at_least =
            |gl: (u32, u32), es: (u32, u32)| (major, minor) >= if gles { es } else { gl };
        GeometryCapture {
            pipelines: at_least((4, 1), (3, 1)),
            vertex_program_arb: false,
            fixed_function: false,
            relaxed: *support.as_ref().unwrap_or(&false),
            no_wait: false,
            restart: match (gles, major, minor) {
                (true, ..) => &[PRIMITIVE_RESTART_FIXED_INDEX],
                (false, ..) if at_least((4, 3), (3, 0)) => {
                    &[PRIMITIVE_RESTART, PRIMITIVE_RESTART_FIXED_INDEX]
                }
                (false, ..) if at_least((3, 1), (3, 0)) => &[PRIMITIVE_RESTART],
                _ => &[],
            },
            unsupported: support.err(),
            budget: budget.min(MAX_GEOMETRY_VERTICES),
            // GL_QUERY_BUFFER: GL 4.4 (GLES has none).
            feedback: Feedback::new(!gles && (major, minor) >= (4, 4)),
            shadows: Shadows::new(at_least((4, 3), (3, 1)), !gles && (major, minor) >= (4, 0)),
            frame: None,
            finished: Vec::new(),
            used: 0,
            fns: None,
            list_counts: std::collections::HashMap::new(),
            list_counts_of: 0,
            from_counts: std::collections::HashMap::new(),
        }
    }

    /// Whether the context has `GL_ARB_vertex_program` (a draw with no GLSL program
    /// current may then run an assembly program instead of the fixed transform).
    pub fn with_vertex_program_arb(mut self, has: bool) -> GeometryCapture {
        self.vertex_program_arb = has;
        self
    }

    /// Whether the context has the fixed-function pipeline (a compatibility profile, or GL
    /// before 3.1): its draws may run in `GL_SELECT` or `GL_FEEDBACK` render mode.
    pub fn with_fixed_function(mut self, has: bool) -> GeometryCapture {
        self.fixed_function = has;
        self
    }

    /// The per-frame vertex budget.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    fn frame_mut(&mut self, frame: u64, context: u64) -> &mut FrameGeometry {
        if self.frame.as_ref().is_some_and(|g| g.frame != frame) {
            // Replays still pending here had no chance to be read back (callers read them
            // before moving on when they can): their draws say so.
            let lost = self.feedback.abandon(
                "the frame ended where its replays could not be read back (no GL functions)",
            );
            self.settle_into_frame(lost);
            if let Some(done) = self.frame.take() {
                self.finished.push(done);
            }
            self.used = 0;
        }
        let budget = self.budget;
        self.frame.get_or_insert_with(|| FrameGeometry {
            frame,
            context,
            vertex_budget: budget,
            draws: Vec::new(),
            missing: Vec::new(),
        })
    }

    /// Takes the geometry of the frames up to `frame` (inclusive) recorded so far, reading
    /// back the replays still pending first (one wait for the GPU, at most, per frame).
    ///
    /// This capture's context must be current on this thread when replays are pending (as
    /// it is wherever [`GeometryCapture::capture`] was just called on it); elsewhere use
    /// [`GeometryCapture::take_read`]. With another context current the read-back goes to
    /// that context's objects: GL fails the mapping or reads within it, so the positions may
    /// be wrong but no memory outside what GL mapped is read.
    pub fn take(&mut self, frame: u64) -> Vec<FrameGeometry> {
        if let Some((t, g)) = self.fns {
            // SAFETY: our caller's promise (above): the context is current; `t`, `g` are the
            // functions the pending replays were recorded with. See the doc for the case of
            // another context: GL validates every name and range we pass.
            unsafe { self.settle(&t, &g) };
        }
        self.take_read(frame)
    }

    /// Takes the geometry of the frames up to `frame` (inclusive) that holds no replay still
    /// pending, without any GL call: for a context not current on this thread, whose frame
    /// is read back where it is current (its next capture, its switch away, its swap).
    pub fn take_read(&mut self, frame: u64) -> Vec<FrameGeometry> {
        let mut out = std::mem::take(&mut self.finished);
        if self.feedback.pending() == 0 && self.frame.as_ref().is_some_and(|g| g.frame <= frame) {
            out.extend(self.frame.take());
            self.used = 0;
        }
        out.retain(|g| g.frame <= frame);
        out
    }

    /// Reads back every pending replay into the frame being captured (one wait for the GPU).
    ///
    /// # Safety
    /// This capture's context must be current, `t` and `g` its real functions.
    pub unsafe fn settle(&mut self, t: &ThermalFns, g: &GeometryFns) {
        // SAFETY: our caller's promise, passed on.
        crate::waits::timed(crate::waits::Phase::Geometry, || unsafe {
            self.settle_timed(t, g)
        })
    }

    /// [`Self::settle`]'s work, which it times ([`crate::waits::timed`]).
    unsafe fn settle_timed(&mut self, t: &ThermalFns, g: &GeometryFns) {
        if self.feedback.pending() == 0 {
            return;
        }
        // SAFETY: our caller's promise.
        let done = unsafe { self.feedback.resolve(t, g) };
        self.settle_into_frame(done);
    }

    /// Files read-back replays into the frame being captured, in draw order, and gives the
    /// frame's budget back what a replay reserved but did not hold.
    fn settle_into_frame(&mut self, done: Vec<Resolved>) {
        if done.is_empty() {
            return;
        }
        let Some(frame) = self.frame.as_mut() else {
            return;
        };
        for (room, r) in done {
            let call = match &r {
                Ok(d) => d.call,
                Err(m) => m.call,
            };
            if let Some(list) = self.from_counts.remove(&call) {
                if !matches!(&r, Ok(d) if d.dropped_vertices == 0) {
                    self.list_counts.remove(&list);
                }
            }
            match r {
                Ok(d) => {
                    self.used = self.used.saturating_sub(room) + d.positions.len() as u64;
                    frame.draws.push(d);
                }
                Err(m) => {
                    self.used = self.used.saturating_sub(room);
                    frame.missing.push(m);
                }
            }
        }
        // Replays answered at once (e.g. a GLES 3.0 draw that cannot fit) came in before
        // earlier ones still pending.
        frame.draws.sort_by_key(|d| d.call);
        frame.missing.sort_by_key(|m| m.call);
    }

    fn missing(&mut self, frame: u64, context: u64, call: u32, reason: String) {
        self.frame_mut(frame, context)
            .missing
            .push(GeometryMissing { call, reason });
    }

    /// Lists draw `call` of `frame` as missing its geometry, with `reason` (for callers that
    /// cannot even try, e.g. without the GL functions).
    pub fn missing_draw(&mut self, frame: u64, context: u64, call: u32, reason: String) {
        self.missing(frame, context, call, reason);
    }

    /// Records the geometry of draw `call` of `frame` (or why it cannot): `replay` issues
    /// the draw again with its own arguments; `program_query` tells that the program has a
    /// query of its own active (a replay would count in it); `link` says what the agent
    /// saw of a program's links. `no_wait`: the draw was timed deferred, so nothing may wait
    /// for the GPU here: its indices are not read back from a buffer for a distinct-vertex
    /// replay (mapping waits for the GPU), it is replayed as drawn, unless the context allows
    /// nothing else (GLES 3.0/3.1 without geometry shaders).
    ///
    /// # Safety
    /// The context this capture belongs to must be current, `t` and `g` its real functions,
    /// and `draw` the arguments `replay` re-issues.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn capture(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        frame: u64,
        context: u64,
        call: u32,
        draw: DrawCall<'_>,
        program_query: bool,
        no_wait: bool,
        link: &dyn Fn(GLuint) -> ProgramLink,
        replay: &dyn Fn(),
    ) {
        crate::waits::timed(crate::waits::Phase::Geometry, || {
            self.no_wait = no_wait && self.relaxed;
            if self.frame.as_ref().is_some_and(|g| g.frame != frame) {
                // SAFETY: our caller's promise: this capture's context is current.
                unsafe { self.settle(t, g) };
            }
            self.frame_mut(frame, context);
            if self.fns.is_none() {
                self.fns = Some((*t, *g));
            }
            if let Some(why) = &self.unsupported {
                let why = why.clone();
                return self.missing(frame, context, call, why);
            }
            if program_query {
                return self.missing(
                    frame,
                    context,
                    call,
                    "the program has a query of its own active (a replay would count in it)".into(),
                );
            }
            // SAFETY: our caller's promise; the pipeline is fixed.
            if self.fixed_function && unsafe { t.not_rendering() } {
                return self.missing(frame, context, call, NOT_RENDERING.into());
            }
            // A display list's vertex count is known only by running it (`lists.rs`).
            let plan = if lists::is_list(draw.name) {
                if !self.relaxed {
                    return self.missing(frame, context, call, strict_reason(draw.name));
                }
                None
            } else {
                match plan(draw) {
                    Ok(p) => Some(p),
                    Err(why) => return self.missing(frame, context, call, why),
                }
            };
            let maybe_distinct = distinct::candidate(draw.name, draw.args).is_some();
            if let Some(plan) = plan {
                if !self.relaxed && (!plan.list || (plan.indexed && !maybe_distinct)) {
                    return self.missing(frame, context, call, strict_reason(draw.name));
                }
            }
            // SAFETY: our caller's promise: this capture's context is current, `t` and `g` its
            // real functions, and `replay` re-issues `draw`.
            let (result, ours) = unsafe {
                let errors = ErrorScope::enter(t);
                let result = self.replay(t, g, plan, draw, call, link, replay);
                (result, errors.leave())
            };
            // Replays read back early (our buffer or query pool was full) belong to this frame.
            let early = self.feedback.take_early();
            self.settle_into_frame(early);
            match result {
                Ok(Recorded::Now(mut d)) if ours == NO_ERROR => {
                    d.call = call;
                    self.used += d.positions.len() as u64;
                    self.frame_mut(frame, context).draws.push(d);
                }
                Ok(Recorded::Pending(_)) if ours == NO_ERROR => {}
                Ok(r) => {
                    if let Recorded::Pending(room) = r {
                        self.feedback.forget_last(call);
                        self.used = self.used.saturating_sub(room);
                    }
                    self.missing(
                        frame,
                        context,
                        call,
                        format!("GL error 0x{ours:04X} replaying the draw"),
                    )
                }
                Err(why) => self.missing(frame, context, call, why),
            }
        })
    }

    /// The unroll of `draw` when it can be replayed as its distinct vertices
    /// ([`distinct`]): a plain indexed list draw, primitive restart (the context's `restart`
    /// capabilities) off, indices readable (any GL error of the attempt drained), a span
    /// that saves vertices.
    ///
    /// # Safety
    /// As [`GeometryCapture::capture`], inside an [`ErrorScope`].
    unsafe fn distinct(
        restart: &[GLenum],
        no_wait: bool,
        t: &ThermalFns,
        g: &GeometryFns,
        draw: DrawCall<'_>,
        plan: Plan,
    ) -> Option<distinct::Unroll> {
        let (_, count, ty, indices) = distinct::candidate(draw.name, draw.args)?;
        // SAFETY: our caller's promise; `restart` lists only capabilities this context has,
        // and the draw with these arguments just succeeded.
        unsafe {
            if restart.iter().any(|&cap| (t.is_enabled)(cap) != 0) {
                return None;
            }
            if no_wait && t.integer(ELEMENT_ARRAY_BUFFER_BINDING) != 0 {
                return None;
            }
            let read = distinct::read_indices(t, g, count, ty, indices).ok()?;
            let u = distinct::unroll(read, plan.expected)?;
            // `glDrawArrays` takes them as GLint and GLsizei.
            (u.first <= i32::MAX as u32 && u.span <= i32::MAX as u32).then_some(u)
        }
    }

    /// The program whose vertex stage the draw ran (0: fixed-function vertex processing)
    /// and the shadow that replays it: the current program's, or the fixed-function one.
    ///
    /// # Safety
    /// As [`GeometryCapture::capture`], inside an [`ErrorScope`].
    unsafe fn vertex_stage<'s>(
        shadows: &'s mut Shadows,
        (pipelines, vertex_program_arb): (bool, bool),
        t: &ThermalFns,
        g: &GeometryFns,
        link: &dyn Fn(GLuint) -> ProgramLink,
    ) -> Result<(GLuint, &'s Shadow), String> {
        // SAFETY: our caller's promise: the context is current (GL 3.1+ or GLES 3.0+, as
        // `support` checked, so every name queried exists; `VERTEX_PROGRAM_ARB` only where
        // the context has the extension).
        unsafe {
            if t.integer(TRANSFORM_FEEDBACK_ACTIVE) != 0 {
                return Err("the program's own transform feedback is active".into());
            }
            let program = t.integer(CURRENT_PROGRAM) as GLuint;
            if program == 0 {
                if pipelines && t.integer(PROGRAM_PIPELINE_BINDING) != 0 {
                    return Err("separable program pipelines are not replayed".into());
                }
                if vertex_program_arb && (t.is_enabled)(VERTEX_PROGRAM_ARB) != 0 {
                    return Err(
                        "an ARB assembly vertex program is enabled (only GLSL programs and \
                         the fixed-function transform are replayed)"
                            .into(),
                    );
                }
            } else if t.current_program_deleting() {
                return Err(format!(
                    "program {program} is flagged for deletion (switching away from it \
                     would delete it)"
                ));
            }
            let e = drain_errors(t);
            if e != NO_ERROR {
                return Err(format!("GL error 0x{e:04X} reading the draw's state"));
            }
            let shadow = if program == 0 {
                shadows.fixed_function(t, g)?
            } else {
                shadows.get(t, g, program, link)?
            };
            Ok((program, shadow))
        }
    }

    /// Checks the draw's state, finds (or builds) the shadow of its vertex stage and
    /// replays the draw with what the frame's budget has left (`plan` `None`: a display
    /// list, planned by running it, `lists.rs`).
    ///
    /// # Safety
    /// As [`GeometryCapture::capture`], inside an [`ErrorScope`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn replay(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        plan: Option<Plan>,
        draw: DrawCall<'_>,
        call: u32,
        link: &dyn Fn(GLuint) -> ProgramLink,
        replay: &dyn Fn(),
    ) -> Result<Recorded, String> {
        // SAFETY: our caller's promise: the context is current, `replay` re-issues `draw`.
        unsafe {
            let Some(plan) = plan else {
                return self.replay_list(t, g, draw, call, link, replay);
            };
            let flags = (self.pipelines, self.vertex_program_arb);
            let (program, shadow) = Self::vertex_stage(&mut self.shadows, flags, t, g, link)?;

            // Whole primitives that fit in what the frame's budget has left.
            let left = self.budget.saturating_sub(self.used) / plan.per * plan.per;
            let keep = left.min(plan.expected);
            if !self.relaxed && keep < plan.expected {
                // GLES 3.0 rejects a draw that overflows the buffer instead of clipping it.
                return Ok(Recorded::Now(DrawGeometry {
                    call: 0,
                    primitive: plan.primitive,
                    positions: Vec::new(),
                    dropped_vertices: plan.expected,
                    viewport: t.integers4(VIEWPORT),
                }));
            }
            let distinct = if keep == plan.expected {
                Self::distinct(self.restart, self.no_wait, t, g, draw, plan)
            } else {
                None
            };
            if let Some(u) = distinct {
                let (first, span) = (u.first as GLint, u.span as GLsizei);
                self.feedback.record(
                    t,
                    g,
                    Replay {
                        program,
                        shadow,
                        plan: Plan {
                            primitive: POINTS,
                            per: 1,
                            expected: u64::from(u.span),
                            indexed: false,
                            list: true,
                        },
                        keep: u64::from(u.span),
                        budget: self.budget,
                        generated_query: false,
                        call,
                        name: draw.name,
                        unroll: Some((u, plan.primitive)),
                        deduce_kind: false,
                    },
                    &|| (t.draw_arrays)(POINTS, first, span),
                )?;
                self.used += keep;
                return Ok(Recorded::Pending(keep));
            }
            if !self.relaxed && plan.indexed {
                return Err(strict_reason(draw.name));
            }
            self.feedback.record(
                t,
                g,
                Replay {
                    program,
                    shadow,
                    plan,
                    keep,
                    budget: self.budget,
                    generated_query: self.relaxed && keep < plan.expected,
                    call,
                    name: draw.name,
                    unroll: None,
                    deduce_kind: false,
                },
                replay,
            )?;
            // The room is the budget's until the read-back says what the draw held.
            self.used += keep;
            Ok(Recorded::Pending(keep))
        }
    }
}

/// Why a draw of a GLES 3.0/3.1 context without geometry shaders has no positions.
fn strict_reason(name: &str) -> String {
    format!(
        "{name}: GLES 3.0/3.1 without geometry shaders allows only non-indexed lists under \
         transform feedback (and its indices could not be replayed as distinct vertices)"
    )
}

/// What a replay gave.
enum Recorded {
    /// Its geometry, known without reading anything back.
    Now(DrawGeometry),
    /// Recorded, read back at the frame's end; the vertices of the budget it reserved.
    Pending(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_by_version() {
        assert_eq!(support(ClientApi::Gl, 4, 5, |_| false), Ok(true));
        assert_eq!(support(ClientApi::Gles, 3, 2, |_| false), Ok(true));
        assert_eq!(support(ClientApi::Gles, 3, 0, |_| false), Ok(false));
        assert!(support(ClientApi::Gles, 2, 0, |_| true).is_err());
        assert!(support(ClientApi::Gl, 3, 3, |_| false).is_err());
    }
}
