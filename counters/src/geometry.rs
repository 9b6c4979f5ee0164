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
//! the name) builds a new `S` instead of returning stale positions.
//!
//! Each replay: `P`'s default-block uniform values and uniform block bindings are copied to
//! `S`, rasterization is discarded, our transform feedback object records into our buffer
//! (at most what the frame's vertex budget has left, whole primitives only), and the draw is
//! re-issued with its own arguments and the program's vertex arrays. A
//! `GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN` query counts what was kept, a
//! `GL_PRIMITIVES_GENERATED` query what the draw made (where the context has it; else the
//! count follows from the draw's arguments), and the difference is the draw's
//! `dropped_vertices`.
//!
//! Invisibility: as in [`crate::thermal`], the program's pending GL error is taken first
//! and raised again afterwards, errors of ours are drained (and make the draw's geometry
//! missing, with the error), and every binding touched is restored: current program,
//! transform feedback object, the generic transform feedback buffer binding and
//! `GL_RASTERIZER_DISCARD`. Framebuffers are never written (rasterization is discarded).
//!
//! A draw whose positions cannot be recorded gets a [`GeometryMissing`] with the reason,
//! never a silent hole.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::Arc;

use gpuheat_session::{
    ClientApi, DrawGeometry, FrameGeometry, GeometryMissing, MAX_GEOMETRY_VERTICES,
};

use crate::gl::{GLenum, GLint, GLsizei, GLsizeiptr, GLuint, GeometryFns};
use crate::thermal::{drain_errors, int, ints4, raise, set_enabled, ThermalFns};

/// Default per-frame vertex budget: 4 Mi vertices, 64 MiB of positions.
pub const DEFAULT_VERTEX_BUDGET: u64 = 4 << 20;

/// Bytes of one recorded vertex (`vec4` clip position).
const VERTEX_BYTES: u64 = 16;

const NO_ERROR: GLenum = 0;
const POINTS: GLenum = 0;
const LINES: GLenum = 1;
const TRIANGLES: GLenum = 4;
const CURRENT_PROGRAM: GLenum = 0x8B8D;
const VIEWPORT: GLenum = 0x0BA2;
const RASTERIZER_DISCARD: GLenum = 0x8C89;
const TRANSFORM_FEEDBACK: GLenum = 0x8E22;
const TRANSFORM_FEEDBACK_ACTIVE: GLenum = 0x8E24;
const TRANSFORM_FEEDBACK_BINDING: GLenum = 0x8E25;
const TRANSFORM_FEEDBACK_BUFFER: GLenum = 0x8C8E;
const TRANSFORM_FEEDBACK_BUFFER_BINDING: GLenum = 0x8C8F;
const INTERLEAVED_ATTRIBS: GLenum = 0x8C8C;
const PRIMITIVES_GENERATED: GLenum = 0x8C87;
const TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN: GLenum = 0x8C88;
const QUERY_RESULT: GLenum = 0x8866;
const STREAM_READ: GLenum = 0x88E1;
const MAP_READ_BIT: u32 = 0x0001;
const PROGRAM_PIPELINE_BINDING: GLenum = 0x825A;
const DELETE_STATUS: GLenum = 0x8B80;
const LINK_STATUS: GLenum = 0x8B82;
const COMPILE_STATUS: GLenum = 0x8B81;
const INFO_LOG_LENGTH: GLenum = 0x8B84;
const ATTACHED_SHADERS: GLenum = 0x8B85;
const ACTIVE_UNIFORMS: GLenum = 0x8B86;
const ACTIVE_ATTRIBUTES: GLenum = 0x8B89;
const SHADER_TYPE: GLenum = 0x8B4F;
const SHADER_SOURCE_LENGTH: GLenum = 0x8B88;
const ACTIVE_UNIFORM_BLOCKS: GLenum = 0x8A36;
const UNIFORM_BLOCK_INDEX: GLenum = 0x8A3A;
const UNIFORM_BLOCK_BINDING: GLenum = 0x8A3F;
const VERTEX_SHADER: GLenum = 0x8B31;
const FRAGMENT_SHADER: GLenum = 0x8B30;
const GEOMETRY_SHADER: GLenum = 0x8DD9;
const TESS_EVALUATION_SHADER: GLenum = 0x8E87;
const TESS_CONTROL_SHADER: GLenum = 0x8E88;
const COMPUTE_SHADER: GLenum = 0x91B9;
const UNIFORM_INTERFACE: GLenum = 0x92E1;
const SHADER_STORAGE_BLOCK: GLenum = 0x92E6;
const ACTIVE_RESOURCES: GLenum = 0x92F5;
const REFERENCED_BY_VERTEX_SHADER: GLenum = 0x930A;
const ACTIVE_SUBROUTINE_UNIFORM_LOCATIONS: GLenum = 0x8E47;
const ATOMIC_COUNTER_TYPE: GLenum = 0x92DB;

/// What the agent learned about a program by watching it link: a generation that changes at
/// every link or deletion of that name, and the sources of the shaders attached at the link.
#[derive(Debug, Clone, Default)]
pub struct ProgramLink {
    /// Changes whenever the program is relinked or deleted; 0 when never seen.
    pub generation: u64,
    /// (stage, source) of each shader attached when it was linked, if they had sources.
    pub sources: Option<Arc<[(GLenum, CString)]>>,
}

/// Reads the stage and source of every shader attached to `program` (right after the
/// program linked, while they are still attached). `None` when it is not a program, has no
/// shaders attached or one of them has no source (a binary shader).
///
/// Only queries that cannot fail on a valid program are made, so no GL error is raised.
///
/// # Safety
/// A GL context must be current and `t`, `g` its real functions.
pub unsafe fn link_sources(
    t: &ThermalFns,
    g: &GeometryFns,
    program: GLuint,
) -> Option<Vec<(GLenum, CString)>> {
    unsafe {
        if program == 0 || (g.is_program)(program) == 0 {
            return None;
        }
        let shaders = attached_shaders(t, g, program);
        if shaders.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(shaders.len());
        for sh in shaders {
            let mut stage = 0;
            (t.get_shaderiv)(sh, SHADER_TYPE, &mut stage);
            let mut len = 0;
            (t.get_shaderiv)(sh, SHADER_SOURCE_LENGTH, &mut len);
            if len <= 1 {
                return None;
            }
            let mut buf = vec![0u8; len as usize];
            let mut got = 0;
            (g.get_shader_source)(sh, len, &mut got, buf.as_mut_ptr().cast());
            buf.truncate(got.clamp(0, len) as usize);
            out.push((stage as GLenum, CString::new(buf).ok()?));
        }
        Some(out)
    }
}

unsafe fn attached_shaders(t: &ThermalFns, g: &GeometryFns, program: GLuint) -> Vec<GLuint> {
    unsafe {
        let mut n = 0;
        (t.get_programiv)(program, ATTACHED_SHADERS, &mut n);
        if n <= 0 {
            return Vec::new();
        }
        let mut v = vec![0; n as usize];
        let mut got = 0;
        (g.get_attached_shaders)(program, n, &mut got, v.as_mut_ptr());
        v.truncate(got.clamp(0, n) as usize);
        v
    }
}

/// A draw call as the wrapper saw it: the entry point's name and its arguments (as the
/// session stores them: integers sign-extended, pointers as addresses).
#[derive(Debug, Clone, Copy)]
pub struct DrawCall<'a> {
    pub name: &'a str,
    pub args: &'a [u64],
}

/// How a draw is replayed and what it should produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    /// The transform feedback primitive: points, lines or triangles.
    primitive: GLenum,
    /// Vertices per primitive of `primitive`.
    per: u64,
    /// Vertices the draw makes once unrolled into `primitive`, from its arguments (primitive
    /// restart can make it fewer).
    expected: u64,
    /// The draw uses an element array.
    indexed: bool,
    /// The draw's mode is points, lines or triangles already (no strip to unroll).
    list: bool,
}

/// The entry point's name without its vendor suffix.
fn base_name(name: &str) -> &str {
    for suffix in [
        "ARB", "EXT", "OES", "ANGLE", "NV", "APPLE", "KHR", "IBM", "SUN",
    ] {
        if let Some(b) = name.strip_suffix(suffix) {
            return b;
        }
    }
    name
}

/// The transform feedback primitive of draw mode `mode`, and how many of its vertices
/// `count` vertices of that mode make once strips, fans and loops are unrolled.
fn unroll(mode: u32, count: u64) -> Result<(GLenum, u64), String> {
    let tri = |n: u64| (TRIANGLES, 3 * n);
    let line = |n: u64| (LINES, 2 * n);
    Ok(match mode {
        0x0 => (POINTS, count),
        0x1 => line(count / 2),
        0x2 => line(if count >= 2 { count } else { 0 }),
        0x3 => line(count.saturating_sub(1)),
        0x4 => tri(count / 3),
        0x5 | 0x6 | 0x9 => tri(count.saturating_sub(2)),
        0x7 => tri(count / 4 * 2),
        0x8 => tri(count.saturating_sub(2) / 2 * 2),
        0xA => line(count / 4),
        0xB => line(count.saturating_sub(3)),
        0xC => tri(count / 6),
        0xD => tri(count.saturating_sub(4) / 2),
        0xE => return Err("GL_PATCHES draws need a tessellation stage".into()),
        m => return Err(format!("unknown draw mode 0x{m:X}")),
    })
}

fn arg(args: &[u64], i: usize) -> Result<u64, String> {
    args.get(i)
        .copied()
        .ok_or_else(|| format!("the draw has no argument {i}"))
}

/// Reads `n` `GLsizei` counts from the program's memory at `ptr` (a multi-draw's counts).
fn client_counts(ptr: u64, n: u64) -> Result<Vec<i64>, String> {
    if ptr == 0 {
        return Err("the multi-draw's count array is null".into());
    }
    if n > 1 << 20 {
        return Err(format!("the multi-draw has {n} draws (more than 2^20)"));
    }
    // SAFETY: the program passed this array of `n` counts to the draw being wrapped, which
    // read it too; it is still valid inside the wrapper.
    let s = unsafe { std::slice::from_raw_parts(ptr as *const GLsizei, n as usize) };
    Ok(s.iter().map(|&c| i64::from(c)).collect())
}

fn plan(draw: DrawCall<'_>) -> Result<Plan, String> {
    let name = base_name(draw.name);
    let a = draw.args;
    if name.contains("Indirect") {
        return Err(format!(
            "{}: indirect draws keep their vertex counts in a GPU buffer and are not replayed",
            draw.name
        ));
    }
    if name.starts_with("glDrawTransformFeedback") {
        return Err(format!(
            "{}: draws sourced from a transform feedback object are not replayed",
            draw.name
        ));
    }
    if name.starts_with("glDrawTex") {
        return Err(format!(
            "{}: draws a screen-aligned rectangle with no vertex stage",
            draw.name
        ));
    }
    // (index of the count, index of the instance count, indexed)
    let single = match name {
        "glDrawArrays" => Some((2, None, false)),
        "glDrawArraysInstanced" | "glDrawArraysInstancedBaseInstance" => Some((2, Some(3), false)),
        "glDrawElements" | "glDrawElementsBaseVertex" => Some((1, None, true)),
        "glDrawRangeElements" | "glDrawRangeElementsBaseVertex" => Some((3, None, true)),
        "glDrawElementsInstanced"
        | "glDrawElementsInstancedBaseVertex"
        | "glDrawElementsInstancedBaseInstance"
        | "glDrawElementsInstancedBaseVertexBaseInstance" => Some((1, Some(4), true)),
        _ => None,
    };
    let mode = arg(a, 0)? as u32;
    let (counts, instances, indexed) = match (single, name) {
        (Some((c, i, indexed)), _) => {
            let instances = match i {
                Some(i) => arg(a, i)? as i64,
                None => 1,
            };
            (vec![arg(a, c)? as i64], instances, indexed)
        }
        (None, "glMultiDrawArrays") => (client_counts(arg(a, 2)?, arg(a, 3)?)?, 1, false),
        (None, "glMultiDrawElements" | "glMultiDrawElementsBaseVertex") => {
            (client_counts(arg(a, 1)?, arg(a, 4)?)?, 1, true)
        }
        _ => {
            return Err(format!(
                "{}: this draw call is not replayed under transform feedback",
                draw.name
            ))
        }
    };
    let (primitive, _) = unroll(mode, 0)?;
    let mut expected = 0u64;
    for c in counts {
        expected += unroll(mode, c.max(0) as u64)?.1;
    }
    expected = expected.saturating_mul(instances.max(0) as u64);
    let per = match primitive {
        POINTS => 1,
        LINES => 2,
        _ => 3,
    };
    Ok(Plan {
        primitive,
        per,
        expected,
        indexed,
        list: matches!(mode, 0 | 1 | 4),
    })
}

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
    }
}

/// How one default-block uniform of `P` is copied to `S`.
#[derive(Debug, Clone, Copy)]
struct UniformCopy {
    from: GLint,
    to: GLint,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    F(u8),
    I(u8),
    U(u8),
    /// Matrix: columns, rows.
    M(u8, u8),
}

fn kind_of(ty: GLenum) -> Option<Kind> {
    Some(match ty {
        0x1406 => Kind::F(1),
        0x8B50 => Kind::F(2),
        0x8B51 => Kind::F(3),
        0x8B52 => Kind::F(4),
        0x1404 | 0x8B56 => Kind::I(1),
        0x8B53 | 0x8B57 => Kind::I(2),
        0x8B54 | 0x8B58 => Kind::I(3),
        0x8B55 | 0x8B59 => Kind::I(4),
        0x1405 => Kind::U(1),
        0x8DC6 => Kind::U(2),
        0x8DC7 => Kind::U(3),
        0x8DC8 => Kind::U(4),
        0x8B5A => Kind::M(2, 2),
        0x8B5B => Kind::M(3, 3),
        0x8B5C => Kind::M(4, 4),
        0x8B65 => Kind::M(2, 3),
        0x8B66 => Kind::M(2, 4),
        0x8B67 => Kind::M(3, 2),
        0x8B68 => Kind::M(3, 4),
        0x8B69 => Kind::M(4, 2),
        0x8B6A => Kind::M(4, 3),
        // Samplers: their texture unit.
        0x8B5D..=0x8B64
        | 0x8DC0..=0x8DC5
        | 0x8DC9..=0x8DD8
        | 0x8D66
        | 0x900C..=0x900F
        | 0x9108..=0x910D => Kind::I(1),
        _ => return None,
    })
}

fn is_image(ty: GLenum) -> bool {
    (0x904C..=0x906C).contains(&ty) || ty == ATOMIC_COUNTER_TYPE
}

/// A built shadow program and what each replay copies into it.
#[derive(Debug)]
struct Shadow {
    program: GLuint,
    uniforms: Vec<UniformCopy>,
    /// (block index in `P`, block index in `S`).
    blocks: Vec<(GLuint, GLuint)>,
}

#[derive(Debug)]
struct CacheEntry {
    generation: u64,
    shadow: Result<Shadow, String>,
}

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

/// Per-context geometry capture: the shadow programs, our objects, and the geometry of the
/// frame being captured.
pub struct GeometryCapture {
    /// GLES 3.1+ or GL 4.1+ (program pipelines exist).
    pipelines: bool,
    /// GLES 3.1+ or GL 4.3+ (program resources: storage blocks, images).
    resources: bool,
    /// GL 4.0+ (subroutines).
    subroutines: bool,
    unsupported: Option<String>,
    relaxed: bool,
    budget: u64,
    objects: Option<Objects>,
    cache: HashMap<GLuint, CacheEntry>,
    frame: Option<FrameGeometry>,
    /// Frames finished but not yet taken (a frame whose swap came from another thread).
    finished: Vec<FrameGeometry>,
    /// Vertices held in `frame`.
    used: u64,
}

impl std::fmt::Debug for GeometryCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeometryCapture")
            .field("budget", &self.budget)
            .field("used", &self.used)
            .field("shadows", &self.cache.len())
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
            resources: at_least((4, 3), (3, 1)),
            subroutines: !gles && (major, minor) >= (4, 0),
            relaxed: *support.as_ref().unwrap_or(&false),
            unsupported: support.err(),
            budget: budget.min(MAX_GEOMETRY_VERTICES),
            objects: None,
            cache: HashMap::new(),
            frame: None,
            finished: Vec::new(),
            used: 0,
        }
    }

    /// The per-frame vertex budget.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    fn frame_mut(&mut self, frame: u64, context: u64) -> &mut FrameGeometry {
        if self.frame.as_ref().is_some_and(|g| g.frame != frame) {
            let done = self.frame.take().expect("frame");
            self.finished.push(done);
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

    /// Takes the geometry of the frames up to `frame` (inclusive) recorded so far.
    pub fn take(&mut self, frame: u64) -> Vec<FrameGeometry> {
        let mut out = std::mem::take(&mut self.finished);
        if self.frame.as_ref().is_some_and(|g| g.frame <= frame) {
            out.extend(self.frame.take());
            self.used = 0;
        }
        out.retain(|g| g.frame <= frame);
        out
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
    /// saw of a program's links.
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
        link: &dyn Fn(GLuint) -> ProgramLink,
        replay: &dyn Fn(),
    ) {
        self.frame_mut(frame, context);
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
        let plan = match plan(draw) {
            Ok(p) => p,
            Err(why) => return self.missing(frame, context, call, why),
        };
        if !self.relaxed && (plan.indexed || !plan.list) {
            return self.missing(
                frame,
                context,
                call,
                format!(
                    "{}: GLES 3.0/3.1 without geometry shaders allows only non-indexed \
                     lists under transform feedback",
                    draw.name
                ),
            );
        }
        unsafe {
            let pending = (t.get_error)();
            let result = self.replay(t, g, plan, draw, link, replay);
            let ours = drain_errors(t);
            raise(t, pending);
            match result {
                Ok(mut d) if ours == NO_ERROR => {
                    d.call = call;
                    self.used += d.positions.len() as u64;
                    self.frame_mut(frame, context).draws.push(d);
                }
                Ok(_) => self.missing(
                    frame,
                    context,
                    call,
                    format!("GL error 0x{ours:04X} reading the replay back"),
                ),
                Err(why) => self.missing(frame, context, call, why),
            }
        }
    }

    unsafe fn replay(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        plan: Plan,
        draw: DrawCall<'_>,
        link: &dyn Fn(GLuint) -> ProgramLink,
        replay: &dyn Fn(),
    ) -> Result<DrawGeometry, String> {
        unsafe {
            if int(t, TRANSFORM_FEEDBACK_ACTIVE) != 0 {
                return Err("the program's own transform feedback is active".into());
            }
            let program = int(t, CURRENT_PROGRAM) as GLuint;
            if program == 0 {
                if self.pipelines && int(t, PROGRAM_PIPELINE_BINDING) != 0 {
                    return Err("separable program pipelines are not replayed".into());
                }
                return Err("no program is current (fixed-function vertex processing)".into());
            }
            let mut deleting = 0;
            (t.get_programiv)(program, DELETE_STATUS, &mut deleting);
            if deleting != 0 {
                return Err(format!(
                    "program {program} is flagged for deletion (switching away from it \
                     would delete it)"
                ));
            }
            let e = drain_errors(t);
            if e != NO_ERROR {
                return Err(format!("GL error 0x{e:04X} reading the draw's state"));
            }
            let generation = link(program).generation;
            let stale = self
                .cache
                .get(&program)
                .is_some_and(|c| c.generation != generation);
            if stale {
                if let Some(CacheEntry { shadow: Ok(s), .. }) = self.cache.remove(&program) {
                    (g.delete_program)(s.program);
                }
            }
            if !self.cache.contains_key(&program) {
                let shadow = self.build(t, g, program, &link(program));
                let e = drain_errors(t);
                let shadow = match (shadow, e) {
                    (Ok(s), NO_ERROR) => Ok(s),
                    (Ok(s), e) => {
                        (g.delete_program)(s.program);
                        Err(format!("GL error 0x{e:04X} building the shadow program"))
                    }
                    (Err(why), _) => Err(why),
                };
                self.cache
                    .insert(program, CacheEntry { generation, shadow });
            }
            let shadow = match &self.cache[&program].shadow {
                Ok(s) => s,
                Err(why) => return Err(why.clone()),
            };
            let (shadow_program, uniforms, blocks) = (
                shadow.program,
                shadow.uniforms.clone(),
                shadow.blocks.clone(),
            );

            // Whole primitives that fit in what the frame's budget has left.
            let left = self.budget.saturating_sub(self.used) / plan.per * plan.per;
            let keep = left.min(plan.expected);
            if !self.relaxed && keep < plan.expected {
                // GLES 3.0 rejects a draw that overflows the buffer instead of clipping it.
                return Ok(DrawGeometry {
                    call: 0,
                    primitive: plan.primitive,
                    positions: Vec::new(),
                    dropped_vertices: plan.expected,
                    viewport: ints4(t, VIEWPORT),
                });
            }
            // Nothing fits: a 4-byte range still lets the queries count the draw.
            let bytes = if keep == 0 { 4 } else { keep * VERTEX_BYTES };
            self.ensure_objects(t, g, bytes)?;
            let o = self.objects.as_ref().expect("objects");
            let (tfo, buffer, queries) = (o.tfo, o.buffer, o.queries);

            let saved_tfo = int(t, TRANSFORM_FEEDBACK_BINDING) as GLuint;
            let saved_buffer = int(t, TRANSFORM_FEEDBACK_BUFFER_BINDING) as GLuint;
            let saved_discard = (t.is_enabled)(RASTERIZER_DISCARD) != 0;
            let viewport = ints4(t, VIEWPORT);
            let restore = || {
                (t.use_program)(program);
                (g.bind_transform_feedback)(TRANSFORM_FEEDBACK, saved_tfo);
                (t.bind_buffer)(TRANSFORM_FEEDBACK_BUFFER, saved_buffer);
                set_enabled(t, RASTERIZER_DISCARD, saved_discard);
            };

            (t.use_program)(shadow_program);
            copy_uniforms(g, program, &uniforms, &blocks, shadow_program);
            (g.bind_transform_feedback)(TRANSFORM_FEEDBACK, tfo);
            (g.bind_buffer_range)(TRANSFORM_FEEDBACK_BUFFER, 0, buffer, 0, bytes as GLsizeiptr);
            (t.enable)(RASTERIZER_DISCARD);
            let e = drain_errors(t);
            if e != NO_ERROR {
                restore();
                return Err(format!("GL error 0x{e:04X} setting up the replay"));
            }
            (g.begin_query)(TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN, queries[0]);
            if self.relaxed {
                (g.begin_query)(PRIMITIVES_GENERATED, queries[1]);
            }
            (g.begin_transform_feedback)(plan.primitive);
            replay();
            let replayed = drain_errors(t);
            (g.end_transform_feedback)();
            (g.end_query)(TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN);
            if self.relaxed {
                (g.end_query)(PRIMITIVES_GENERATED);
            }
            if replayed != NO_ERROR {
                drain_errors(t);
                restore();
                return Err(format!(
                    "GL error 0x{replayed:04X} replaying {} under transform feedback",
                    draw.name
                ));
            }
            let mut written = 0;
            (g.get_query_objectuiv)(queries[0], QUERY_RESULT, &mut written);
            let generated = if self.relaxed {
                let mut n = 0;
                (g.get_query_objectuiv)(queries[1], QUERY_RESULT, &mut n);
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
                    restore();
                    return Err(format!(
                        "mapping the transform feedback buffer failed (GL error 0x{e:04X})"
                    ));
                }
                let src = std::slice::from_raw_parts(p as *const [f32; 4], held as usize);
                positions = src.to_vec();
                (g.unmap_buffer)(TRANSFORM_FEEDBACK_BUFFER);
            }
            restore();
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
    /// `bytes` (never past the frame budget). Leaves the generic transform feedback buffer
    /// binding changed (the caller restores it).
    unsafe fn ensure_objects(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        bytes: u64,
    ) -> Result<(), String> {
        unsafe {
            if self.objects.is_none() {
                let mut tfo = 0;
                (g.gen_transform_feedbacks)(1, &mut tfo);
                let mut buffer = 0;
                (g.gen_buffers)(1, &mut buffer);
                let mut queries = [0; 2];
                (g.gen_queries)(2, queries.as_mut_ptr());
                self.objects = Some(Objects {
                    tfo,
                    buffer,
                    capacity: 0,
                    queries,
                });
            }
            let o = self.objects.as_mut().expect("objects");
            if o.capacity < bytes {
                // Grow geometrically, within the budget, so a frame of growing draws does
                // not reallocate at every draw.
                let cap = bytes
                    .next_power_of_two()
                    .min((self.budget * VERTEX_BYTES).max(bytes));
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
            Ok(())
        }
    }

    /// Builds the shadow program of `program`.
    unsafe fn build(
        &self,
        t: &ThermalFns,
        g: &GeometryFns,
        program: GLuint,
        link: &ProgramLink,
    ) -> Result<Shadow, String> {
        unsafe {
            let mut linked = 0;
            (t.get_programiv)(program, LINK_STATUS, &mut linked);
            if linked == 0 {
                return Err(format!("program {program} is not linked"));
            }
            let attached = attached_shaders(t, g, program);
            let mut stages = Vec::new();
            for &sh in &attached {
                let mut stage = 0;
                (t.get_shaderiv)(sh, SHADER_TYPE, &mut stage);
                stages.push(stage as GLenum);
            }
            let sources = if attached.is_empty() {
                match &link.sources {
                    Some(s) => {
                        stages = s.iter().map(|(stage, _)| *stage).collect();
                        Some(s.clone())
                    }
                    None => {
                        return Err(format!(
                            "program {program} has no shaders attached and gpuheat did not \
                             see it link (its shaders were detached before the agent was \
                             loaded, or it came from a binary)"
                        ))
                    }
                }
            } else {
                None
            };
            if let Some(&s) = stages.iter().find(|&&s| {
                matches!(
                    s,
                    GEOMETRY_SHADER | TESS_CONTROL_SHADER | TESS_EVALUATION_SHADER
                )
            }) {
                let what = if s == GEOMETRY_SHADER {
                    "a geometry"
                } else {
                    "a tessellation"
                };
                return Err(format!(
                    "program {program} has {what} stage (only vertex-stage positions are \
                     recorded)"
                ));
            }
            if stages.contains(&COMPUTE_SHADER) || !stages.contains(&VERTEX_SHADER) {
                return Err(format!("program {program} has no vertex stage"));
            }
            self.check_side_effects(t, g, program)?;

            let shadow = (t.create_program)();
            if shadow == 0 {
                return Err("glCreateProgram failed for the shadow program".into());
            }
            let fail = |why: String| -> Result<Shadow, String> {
                (g.delete_program)(shadow);
                Err(why)
            };
            match &sources {
                None => {
                    for &sh in &attached {
                        (t.attach_shader)(shadow, sh);
                    }
                }
                Some(sources) => {
                    for (stage, src) in sources.iter() {
                        let sh = (t.create_shader)(*stage);
                        (t.shader_source)(sh, 1, &src.as_ptr(), std::ptr::null());
                        (t.compile_shader)(sh);
                        let mut ok = 0;
                        (t.get_shaderiv)(sh, COMPILE_STATUS, &mut ok);
                        let log = shader_log(t, g, sh);
                        (t.attach_shader)(shadow, sh);
                        // Flagged now, freed with the shadow program.
                        (t.delete_shader)(sh);
                        if ok == 0 {
                            return fail(format!(
                                "the shader source saved at program {program}'s link does \
                                 not compile again: {log}"
                            ));
                        }
                    }
                }
            }
            for (name, location) in active_attributes(t, g, program) {
                (g.bind_attrib_location)(shadow, location as GLuint, name.as_ptr());
            }
            let varying = c"gl_Position";
            (g.transform_feedback_varyings)(shadow, 1, &varying.as_ptr(), INTERLEAVED_ATTRIBS);
            (t.link_program)(shadow);
            let mut ok = 0;
            (t.get_programiv)(shadow, LINK_STATUS, &mut ok);
            if ok == 0 {
                let log = program_log(t, g, shadow);
                return fail(format!(
                    "the shadow program of program {program} does not link: {log}"
                ));
            }
            let uniforms = match uniform_copies(t, g, program, shadow) {
                Ok(u) => u,
                Err(why) => return fail(why),
            };
            let blocks = uniform_blocks(t, g, program, shadow);
            Ok(Shadow {
                program: shadow,
                uniforms,
                blocks,
            })
        }
    }

    /// A replay runs `P`'s vertex shader again: one that writes memory (storage blocks,
    /// images, atomic counters) would write twice, and switching programs resets
    /// subroutine selections.
    unsafe fn check_side_effects(
        &self,
        t: &ThermalFns,
        g: &GeometryFns,
        program: GLuint,
    ) -> Result<(), String> {
        unsafe {
            if self.subroutines {
                if let Some(stage_iv) = g.get_program_stageiv {
                    for stage in [VERTEX_SHADER, FRAGMENT_SHADER] {
                        let mut n = 0;
                        stage_iv(program, stage, ACTIVE_SUBROUTINE_UNIFORM_LOCATIONS, &mut n);
                        if n > 0 {
                            return Err(format!(
                                "program {program} uses subroutines (switching programs for \
                                 the replay would reset the program's selection)"
                            ));
                        }
                    }
                }
            }
            if !self.resources {
                return Ok(());
            }
            let (Some(interface_iv), Some(resource_iv)) =
                (g.get_program_interfaceiv, g.get_program_resourceiv)
            else {
                return Ok(());
            };
            let by_vertex = |interface: GLenum, index: GLuint| {
                let mut v = 0;
                resource_iv(
                    program,
                    interface,
                    index,
                    1,
                    &REFERENCED_BY_VERTEX_SHADER,
                    1,
                    std::ptr::null_mut(),
                    &mut v,
                );
                v != 0
            };
            let mut blocks = 0;
            interface_iv(program, SHADER_STORAGE_BLOCK, ACTIVE_RESOURCES, &mut blocks);
            if (0..blocks.max(0) as GLuint).any(|i| by_vertex(SHADER_STORAGE_BLOCK, i)) {
                return Err(format!(
                    "program {program}'s vertex shader uses a shader storage block (a replay \
                     could write to it a second time)"
                ));
            }
            let mut n = 0;
            (t.get_programiv)(program, ACTIVE_UNIFORMS, &mut n);
            for i in 0..n.max(0) as GLuint {
                let (_, _, ty) = active_uniform(g, program, i);
                if is_image(ty) && by_vertex(UNIFORM_INTERFACE, i) {
                    return Err(format!(
                        "program {program}'s vertex shader uses an image or atomic counter (a \
                         replay could write to it a second time)"
                    ));
                }
            }
            Ok(())
        }
    }
}

unsafe fn program_log(t: &ThermalFns, g: &GeometryFns, program: GLuint) -> String {
    unsafe {
        let mut len = 0;
        (t.get_programiv)(program, INFO_LOG_LENGTH, &mut len);
        let mut buf = vec![0u8; len.clamp(1, 4096) as usize];
        (g.get_program_info_log)(
            program,
            buf.len() as GLsizei,
            std::ptr::null_mut(),
            buf.as_mut_ptr().cast(),
        );
        first_line(&buf)
    }
}

unsafe fn shader_log(t: &ThermalFns, g: &GeometryFns, shader: GLuint) -> String {
    unsafe {
        let mut len = 0;
        (t.get_shaderiv)(shader, INFO_LOG_LENGTH, &mut len);
        let mut buf = vec![0u8; len.clamp(1, 4096) as usize];
        (g.get_shader_info_log)(
            shader,
            buf.len() as GLsizei,
            std::ptr::null_mut(),
            buf.as_mut_ptr().cast(),
        );
        first_line(&buf)
    }
}

/// The first non-empty line of a NUL-terminated log (reasons are one line).
fn first_line(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end])
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no log")
        .to_string()
}

/// (name, size, type) of active uniform `i` of `program`.
unsafe fn active_uniform(g: &GeometryFns, program: GLuint, i: GLuint) -> (CString, GLint, GLenum) {
    let mut buf = [0u8; 256];
    let (mut len, mut size, mut ty) = (0, 0, 0);
    unsafe {
        (g.get_active_uniform)(
            program,
            i,
            buf.len() as GLsizei,
            &mut len,
            &mut size,
            &mut ty,
            buf.as_mut_ptr().cast::<c_char>(),
        )
    };
    let name = CString::new(&buf[..len.clamp(0, 255) as usize]).unwrap_or_default();
    (name, size, ty)
}

/// Active vertex attributes of `program` with their locations (built-ins left out).
unsafe fn active_attributes(
    t: &ThermalFns,
    g: &GeometryFns,
    program: GLuint,
) -> Vec<(CString, GLint)> {
    let mut out = Vec::new();
    unsafe {
        let mut n = 0;
        (t.get_programiv)(program, ACTIVE_ATTRIBUTES, &mut n);
        for i in 0..n.max(0) as GLuint {
            let mut buf = [0u8; 256];
            let (mut len, mut size, mut ty) = (0, 0, 0);
            (g.get_active_attrib)(
                program,
                i,
                buf.len() as GLsizei,
                &mut len,
                &mut size,
                &mut ty,
                buf.as_mut_ptr().cast::<c_char>(),
            );
            let Ok(name) = CString::new(&buf[..len.clamp(0, 255) as usize]) else {
                continue;
            };
            if name.as_bytes().starts_with(b"gl_") || name.as_bytes().is_empty() {
                continue;
            }
            let location = (g.get_attrib_location)(program, name.as_ptr());
            if location >= 0 {
                out.push((name, location));
            }
        }
    }
    out
}

/// The default-block uniforms of `from` and where each element lives in `to`.
unsafe fn uniform_copies(
    t: &ThermalFns,
    g: &GeometryFns,
    from: GLuint,
    to: GLuint,
) -> Result<Vec<UniformCopy>, String> {
    let mut out = Vec::new();
    unsafe {
        let mut n = 0;
        (t.get_programiv)(from, ACTIVE_UNIFORMS, &mut n);
        for i in 0..n.max(0) as GLuint {
            let mut block = -1;
            (g.get_active_uniformsiv)(from, 1, &i, UNIFORM_BLOCK_INDEX, &mut block);
            if block >= 0 {
                continue;
            }
            let (name, size, ty) = active_uniform(g, from, i);
            if name.as_bytes().starts_with(b"gl_") {
                continue;
            }
            if is_image(ty) {
                // Only fragment-stage images reach here (check_side_effects): nothing to copy
                // for a replay whose rasterization is discarded.
                continue;
            }
            let Some(kind) = kind_of(ty) else {
                return Err(format!(
                    "uniform {} has a type (0x{ty:04X}) gpuheat does not copy",
                    name.to_string_lossy()
                ));
            };
            let bytes = name.as_bytes();
            let base = bytes.strip_suffix(b"[0]").unwrap_or(bytes);
            for e in 0..size.max(1) {
                let element = if size > 1 {
                    let mut v = base.to_vec();
                    v.extend_from_slice(format!("[{e}]").as_bytes());
                    CString::new(v).unwrap_or_default()
                } else {
                    name.clone()
                };
                let from_loc = (t.get_uniform_location)(from, element.as_ptr());
                let to_loc = (t.get_uniform_location)(to, element.as_ptr());
                if from_loc >= 0 && to_loc >= 0 {
                    out.push(UniformCopy {
                        from: from_loc,
                        to: to_loc,
                        kind,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// (index in `from`, index in `to`) of every uniform block of `from`.
unsafe fn uniform_blocks(
    t: &ThermalFns,
    g: &GeometryFns,
    from: GLuint,
    to: GLuint,
) -> Vec<(GLuint, GLuint)> {
    const INVALID_INDEX: GLuint = u32::MAX;
    let mut out = Vec::new();
    unsafe {
        let mut n = 0;
        (t.get_programiv)(from, ACTIVE_UNIFORM_BLOCKS, &mut n);
        for i in 0..n.max(0) as GLuint {
            let mut buf = [0u8; 256];
            let mut len = 0;
            (g.get_active_uniform_block_name)(
                from,
                i,
                buf.len() as GLsizei,
                &mut len,
                buf.as_mut_ptr().cast::<c_char>(),
            );
            let Ok(name) = CString::new(&buf[..len.clamp(0, 255) as usize]) else {
                continue;
            };
            let j = (g.get_uniform_block_index)(to, name.as_ptr());
            if j != INVALID_INDEX {
                out.push((i, j));
            }
        }
    }
    out
}

/// Copies `from`'s uniform values and block bindings into `to` (the current program).
unsafe fn copy_uniforms(
    g: &GeometryFns,
    from: GLuint,
    uniforms: &[UniformCopy],
    blocks: &[(GLuint, GLuint)],
    to: GLuint,
) {
    unsafe {
        for u in uniforms {
            match u.kind {
                Kind::F(n) => {
                    let mut v = [0f32; 4];
                    (g.get_uniformfv)(from, u.from, v.as_mut_ptr());
                    let set = [g.uniform1fv, g.uniform2fv, g.uniform3fv, g.uniform4fv];
                    set[n as usize - 1](u.to, 1, v.as_ptr());
                }
                Kind::I(n) => {
                    let mut v = [0i32; 4];
                    (g.get_uniformiv)(from, u.from, v.as_mut_ptr());
                    let set = [g.uniform1iv, g.uniform2iv, g.uniform3iv, g.uniform4iv];
                    set[n as usize - 1](u.to, 1, v.as_ptr());
                }
                Kind::U(n) => {
                    let mut v = [0u32; 4];
                    (g.get_uniformuiv)(from, u.from, v.as_mut_ptr());
                    let set = [g.uniform1uiv, g.uniform2uiv, g.uniform3uiv, g.uniform4uiv];
                    set[n as usize - 1](u.to, 1, v.as_ptr());
                }
                Kind::M(c, r) => {
                    let mut v = [0f32; 16];
                    (g.get_uniformfv)(from, u.from, v.as_mut_ptr());
                    let set = match (c, r) {
                        (2, 2) => g.uniform_matrix2fv,
                        (3, 3) => g.uniform_matrix3fv,
                        (2, 3) => g.uniform_matrix2x3fv,
                        (2, 4) => g.uniform_matrix2x4fv,
                        (3, 2) => g.uniform_matrix3x2fv,
                        (3, 4) => g.uniform_matrix3x4fv,
                        (4, 2) => g.uniform_matrix4x2fv,
                        (4, 3) => g.uniform_matrix4x3fv,
                        _ => g.uniform_matrix4fv,
                    };
                    set(u.to, 1, 0, v.as_ptr());
                }
            }
        }
        for &(i, j) in blocks {
            let mut binding = 0;
            (g.get_active_uniform_blockiv)(from, i, UNIFORM_BLOCK_BINDING, &mut binding);
            (g.uniform_block_binding)(to, j, binding.max(0) as GLuint);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, args: &[u64]) -> Result<Plan, String> {
        plan(DrawCall { name, args })
    }

    #[test]
    fn unrolled_counts() {
        assert_eq!(unroll(5, 4), Ok((TRIANGLES, 6)));
        assert_eq!(unroll(5, 2), Ok((TRIANGLES, 0)));
        assert_eq!(unroll(6, 5), Ok((TRIANGLES, 9)));
        assert_eq!(unroll(4, 7), Ok((TRIANGLES, 6)));
        assert_eq!(unroll(2, 3), Ok((LINES, 6)));
        assert_eq!(unroll(3, 3), Ok((LINES, 4)));
        assert_eq!(unroll(1, 5), Ok((LINES, 4)));
        assert_eq!(unroll(0, 5), Ok((POINTS, 5)));
        assert_eq!(unroll(7, 8), Ok((TRIANGLES, 12)));
        assert!(unroll(0xE, 3).is_err());
    }

    #[test]
    fn plans() {
        let d = p("glDrawArrays", &[5, 0, 4]).unwrap();
        assert_eq!(
            (d.primitive, d.per, d.expected, d.indexed),
            (TRIANGLES, 3, 6, false)
        );
        let d = p("glDrawElements", &[4, 300, 0x1403, 0]).unwrap();
        assert_eq!((d.expected, d.indexed, d.list), (300, true, true));
        let d = p("glDrawElementsInstancedEXT", &[4, 6, 0x1403, 0, 3]).unwrap();
        assert_eq!(d.expected, 18);
        let d = p("glDrawArraysInstancedBaseInstance", &[1, 0, 4, 2, 0]).unwrap();
        assert_eq!((d.primitive, d.expected), (LINES, 8));
        let counts: [GLsizei; 2] = [4, 5];
        let d = p("glMultiDrawArrays", &[5, 0, counts.as_ptr() as u64, 2]).unwrap();
        assert_eq!(d.expected, 6 + 9);
        assert!(p("glDrawElementsIndirect", &[4, 0x1405, 0])
            .unwrap_err()
            .contains("indirect"));
        assert!(p("glDrawTexiOES", &[0, 0, 0, 1, 1]).is_err());
        assert!(p("glMultiDrawArrays", &[4, 0, 0, 2]).is_err());
    }

    #[test]
    fn support_by_version() {
        assert_eq!(support(ClientApi::Gl, 4, 5, |_| false), Ok(true));
        assert_eq!(support(ClientApi::Gles, 3, 2, |_| false), Ok(true));
        assert_eq!(support(ClientApi::Gles, 3, 0, |_| false), Ok(false));
        assert!(support(ClientApi::Gles, 2, 0, |_| true).is_err());
        assert!(support(ClientApi::Gl, 3, 3, |_| false).is_err());
    }

    #[test]
    fn logs_are_one_line() {
        assert_eq!(
            first_line(b"\n  0:1(1): error: x\nmore\0junk"),
            "0:1(1): error: x"
        );
        assert_eq!(first_line(b"\0"), "no log");
    }
}
