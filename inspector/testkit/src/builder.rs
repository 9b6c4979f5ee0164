//! The one session builder of the workspace's tests.
//!
//! A [`SessionBuilder`] starts from a full-mode session with one context ([`CONTEXT`]) that
//! offers every counter in [`COUNTERS`], and a function table ([`function_table`]) holding the
//! entry points the analysis reads: draws, clears, the state setters, the calls that stall, a
//! swap; OpenVG entry points (`vg…`) join the table on their first call, as a capture's table
//! holds them. Each [`SessionBuilder::frame`] gets a [`FrameBuilder`] to record calls, counter
//! values, pipelined times, a heat map painted from rectangles, offscreen render targets
//! painted the same way ([`FrameBuilder::target`]), what draws sampled (the `FLOW` records,
//! [`FrameBuilder::samples`]), geometry, and the OpenVG records of VG calls
//! ([`FrameBuilder::vg_draw_path`], [`FrameBuilder::vg_record`], [`SessionBuilder::vg_path`]);
//! the frame's swap is appended when the closure returns. The records are those a capture
//! writes, with consistent numbers (heat conserved, overdraw counted), so code under test
//! cannot tell them from a real session's.
//!
//! ```
//! use gpuheat_testkit::SessionBuilder;
//!
//! let s = SessionBuilder::new()
//!     .frame(|f| {
//!         f.clear(100);
//!         let d = f.draw(2_000);
//!         f.heat_map(64, 64).cover(d, [0, 0, 32, 32]);
//!     })
//!     .build();
//! assert_eq!(s.frames[0].calls.len(), 3); // clear, draw, swap
//! assert_eq!(s.heat[0].overdraw.iter().sum::<u32>(), 32 * 32);
//! ```
//!
//! A pass into a texture, then a draw on screen sampling it:
//!
//! ```
//! use gpuheat_testkit::{texture_target, SessionBuilder};
//!
//! let s = SessionBuilder::new()
//!     .frame(|f| {
//!         f.heat_map(64, 64).target(texture_target(1, 7, 32, 32));
//!         let pass = f.draw(5_000);
//!         f.cover_target(pass, 1, [0, 0, 32, 32]);
//!         let show = f.draw(1_000);
//!         f.cover(show, [0, 0, 16, 16]).samples(show, &[7]);
//!     })
//!     .build();
//! assert_eq!(s.target_heat[0].draws[0].time_ns, 5_000);
//! let flows = &s.flow[0].draws;
//! assert_eq!((flows[0].target, flows[1].target), (1, 0));
//! assert_eq!(flows[1].coverage.len(), 16 * 16); // kept: it sampled a texture drawn before
//! ```

use gpuheat_session::{
    Attachment, Call, CallClass, CaptureMode, ClientApi, ContextInfo, ContextState, CounterInfo,
    CounterValue, DrawCoverage, DrawFlow, DrawGeometry, DrawSample, Frame, FrameFlow,
    FrameGeometry, FunctionInfo, FunctionTable, GeometryMissing, HeatMap, HeatMissing, Module,
    ModuleMap, ParamInfo, PipelinedBatch, PipelinedTime, ProgramInfo, Record, RenderTarget,
    SessionInfo, TargetHeat, ValueKind, VgCall,
};
use gpuheat_session::{Session, SessionWriter};
use std::path::Path;

/// The handle of the context a builder starts with; calls are recorded on it unless a frame
/// switches with [`FrameBuilder::on_context`].
pub const CONTEXT: u64 = 0x1000;
/// The thread every call is recorded on.
pub const THREAD: u32 = 100;
/// `GL_TRIANGLES`, the mode of [`FrameBuilder::draw`].
pub const GL_TRIANGLES: u64 = 0x0004;
/// `GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT`, the mask of [`FrameBuilder::clear`].
pub const CLEAR_MASK: u64 = 0x4000 | 0x0100;
/// Wall and CPU time of a call unless set with [`FrameBuilder::timed`].
pub const CALL_NS: u64 = 1_000;
/// Vertex budget of the geometry records.
pub const VERTEX_BUDGET: u64 = 1 << 20;

/// The counters of every builder context, name and unit, in the order
/// [`CounterValue::counter`] indexes them.
pub const COUNTERS: [(&str, &str); 4] = [
    ("gpu_time_serialized", "ns"),
    ("gpu_time_pipelined", "ns"),
    ("samples_passed", "fragments"),
    ("fragment_shader_invocations", "invocations"),
];

/// One parameter: name, kind, enum group.
type Param = (&'static str, ValueKind, Option<&'static str>);

const ENUM: ValueKind = ValueKind::Enum;
const INT: ValueKind = ValueKind::Int;
const UINT: ValueKind = ValueKind::Uint;
const PTR: ValueKind = ValueKind::Ptr;
const F32: ValueKind = ValueKind::F32;

/// The entry points of [`function_table`], with the class the agent's generator gives them.
const FUNCTIONS: &[(&str, CallClass, &[Param])] = &[
    (
        "glClear",
        CallClass::Work,
        &[("mask", ValueKind::Bitfield, Some("ClearBufferMask"))],
    ),
    (
        "glDrawArrays",
        CallClass::Draw,
        &[
            ("mode", ENUM, Some("PrimitiveType")),
            ("first", INT, None),
            ("count", INT, None),
        ],
    ),
    (
        "glDrawElements",
        CallClass::Draw,
        &[
            ("mode", ENUM, Some("PrimitiveType")),
            ("count", INT, None),
            ("type", ENUM, Some("DrawElementsType")),
            ("indices", PTR, None),
        ],
    ),
    (
        "glBlitFramebuffer",
        CallClass::Work,
        &[
            ("srcX0", INT, None),
            ("srcY0", INT, None),
            ("srcX1", INT, None),
            ("srcY1", INT, None),
            ("dstX0", INT, None),
            ("dstY0", INT, None),
            ("dstX1", INT, None),
            ("dstY1", INT, None),
            ("mask", ValueKind::Bitfield, Some("ClearBufferMask")),
            ("filter", ENUM, Some("BlitFramebufferFilter")),
        ],
    ),
    (
        "glBindBuffer",
        CallClass::State,
        &[
            ("target", ENUM, Some("BufferTargetARB")),
            ("buffer", UINT, None),
        ],
    ),
    (
        "glBindTexture",
        CallClass::State,
        &[
            ("target", ENUM, Some("TextureTarget")),
            ("texture", UINT, None),
        ],
    ),
    (
        "glBindFramebuffer",
        CallClass::State,
        &[
            ("target", ENUM, Some("FramebufferTarget")),
            ("framebuffer", UINT, None),
        ],
    ),
    (
        "glEnable",
        CallClass::State,
        &[("cap", ENUM, Some("EnableCap"))],
    ),
    (
        "glDisable",
        CallClass::State,
        &[("cap", ENUM, Some("EnableCap"))],
    ),
    ("glUseProgram", CallClass::State, &[("program", UINT, None)]),
    (
        "glBindVertexArray",
        CallClass::State,
        &[("array", UINT, None)],
    ),
    (
        "glBlendFunc",
        CallClass::State,
        &[
            ("sfactor", ENUM, Some("BlendingFactor")),
            ("dfactor", ENUM, Some("BlendingFactor")),
        ],
    ),
    (
        "glDepthMask",
        CallClass::State,
        &[("flag", ValueKind::Bool, None)],
    ),
    (
        "glViewport",
        CallClass::State,
        &[
            ("x", INT, None),
            ("y", INT, None),
            ("width", INT, None),
            ("height", INT, None),
        ],
    ),
    (
        "glClearColor",
        CallClass::State,
        &[
            ("red", F32, None),
            ("green", F32, None),
            ("blue", F32, None),
            ("alpha", F32, None),
        ],
    ),
    (
        "glUniform1f",
        CallClass::State,
        &[("location", INT, None), ("v0", F32, None)],
    ),
    (
        "glUniform4fv",
        CallClass::State,
        &[
            ("location", INT, None),
            ("count", INT, None),
            ("value", PTR, None),
        ],
    ),
    (
        "glUniformBlockBinding",
        CallClass::State,
        &[
            ("program", UINT, None),
            ("uniformBlockIndex", UINT, None),
            ("uniformBlockBinding", UINT, None),
        ],
    ),
    ("glFlush", CallClass::State, &[]),
    (
        "glBegin",
        CallClass::State,
        &[("mode", ENUM, Some("PrimitiveType"))],
    ),
    (
        "glVertex2f",
        CallClass::State,
        &[("x", F32, None), ("y", F32, None)],
    ),
    (
        "glColor4f",
        CallClass::State,
        &[
            ("red", F32, None),
            ("green", F32, None),
            ("blue", F32, None),
            ("alpha", F32, None),
        ],
    ),
    ("glEnd", CallClass::Draw, &[]),
    ("glFinish", CallClass::State, &[]),
    ("glGetError", CallClass::State, &[]),
    (
        "glReadPixels",
        CallClass::State,
        &[
            ("x", INT, None),
            ("y", INT, None),
            ("width", INT, None),
            ("height", INT, None),
            ("format", ENUM, Some("PixelFormat")),
            ("type", ENUM, Some("PixelType")),
            ("pixels", PTR, None),
        ],
    ),
    (
        "glReadnPixels",
        CallClass::State,
        &[
            ("x", INT, None),
            ("y", INT, None),
            ("width", INT, None),
            ("height", INT, None),
            ("format", ENUM, Some("PixelFormat")),
            ("type", ENUM, Some("PixelType")),
            ("bufSize", INT, None),
            ("data", PTR, None),
        ],
    ),
    (
        "glGetTexImage",
        CallClass::State,
        &[
            ("target", ENUM, Some("TextureTarget")),
            ("level", INT, None),
            ("format", ENUM, Some("PixelFormat")),
            ("type", ENUM, Some("PixelType")),
            ("pixels", PTR, None),
        ],
    ),
    (
        "glGetBufferSubData",
        CallClass::State,
        &[
            ("target", ENUM, Some("BufferTargetARB")),
            ("offset", INT, None),
            ("size", INT, None),
            ("data", PTR, None),
        ],
    ),
    (
        "glClientWaitSync",
        CallClass::State,
        &[
            ("sync", PTR, None),
            ("flags", ValueKind::Bitfield, Some("SyncObjectMask")),
            ("timeout", UINT, None),
        ],
    ),
    (
        "glGetIntegerv",
        CallClass::State,
        &[("pname", ENUM, Some("GetPName")), ("data", PTR, None)],
    ),
    (
        "glTexImage2D",
        CallClass::State,
        &[
            ("target", ENUM, Some("TextureTarget")),
            ("level", INT, None),
            ("internalformat", INT, Some("InternalFormat")),
            ("width", INT, None),
            ("height", INT, None),
            ("border", INT, None),
            ("format", ENUM, Some("PixelFormat")),
            ("type", ENUM, Some("PixelType")),
            ("pixels", PTR, None),
        ],
    ),
    (
        "glTexSubImage2D",
        CallClass::State,
        &[
            ("target", ENUM, Some("TextureTarget")),
            ("level", INT, None),
            ("xoffset", INT, None),
            ("yoffset", INT, None),
            ("width", INT, None),
            ("height", INT, None),
            ("format", ENUM, Some("PixelFormat")),
            ("type", ENUM, Some("PixelType")),
            ("pixels", PTR, None),
        ],
    ),
    (
        "glTexStorage2D",
        CallClass::State,
        &[
            ("target", ENUM, Some("TextureTarget")),
            ("levels", INT, None),
            ("internalformat", ENUM, Some("InternalFormat")),
            ("width", INT, None),
            ("height", INT, None),
        ],
    ),
    (
        "glCompressedTexImage2D",
        CallClass::State,
        &[
            ("target", ENUM, Some("TextureTarget")),
            ("level", INT, None),
            ("internalformat", ENUM, Some("InternalFormat")),
            ("width", INT, None),
            ("height", INT, None),
            ("border", INT, None),
            ("imageSize", INT, None),
            ("data", PTR, None),
        ],
    ),
    (
        "glGenTextures",
        CallClass::State,
        &[("n", INT, None), ("textures", PTR, None)],
    ),
    (
        "glDeleteTextures",
        CallClass::State,
        &[("n", INT, None), ("textures", PTR, None)],
    ),
    (
        "glGenBuffers",
        CallClass::State,
        &[("n", INT, None), ("buffers", PTR, None)],
    ),
    (
        "glDeleteBuffers",
        CallClass::State,
        &[("n", INT, None), ("buffers", PTR, None)],
    ),
    (
        "glBufferData",
        CallClass::State,
        &[
            ("target", ENUM, Some("BufferTargetARB")),
            ("size", INT, None),
            ("data", PTR, None),
            ("usage", ENUM, Some("BufferUsageARB")),
        ],
    ),
    (
        "glCreateShader",
        CallClass::State,
        &[("type", ENUM, Some("ShaderType"))],
    ),
    (
        "glCompileShader",
        CallClass::State,
        &[("shader", UINT, None)],
    ),
    (
        "glLinkProgram",
        CallClass::State,
        &[("program", UINT, None)],
    ),
    (
        "glGetString",
        CallClass::State,
        &[("name", ENUM, Some("StringName"))],
    ),
    (
        "eglSwapBuffers",
        CallClass::Swap,
        &[("dpy", PTR, None), ("surface", PTR, None)],
    ),
];

/// The entry points a builder's calls refer to (see the module's description).
pub fn function_table() -> FunctionTable {
    let functions = FUNCTIONS
        .iter()
        .map(|&(name, class, params)| FunctionInfo {
            name: name.into(),
            params: params
                .iter()
                .map(|&(name, kind, group)| ParamInfo {
                    name: name.into(),
                    c_type: match kind {
                        ValueKind::Enum => "GLenum",
                        ValueKind::Bitfield => "GLbitfield",
                        ValueKind::Bool => "GLboolean",
                        ValueKind::F32 => "GLfloat",
                        ValueKind::F64 => "GLdouble",
                        ValueKind::Int => "GLint",
                        ValueKind::Uint => "GLuint",
                        ValueKind::Ptr => "void *",
                    }
                    .into(),
                    kind,
                    len: None,
                    group: group.map(Into::into),
                })
                .collect(),
            ret: match name {
                "eglSwapBuffers" => Some(ValueKind::Bool),
                "glGetError" | "glClientWaitSync" => Some(ValueKind::Enum),
                "glCreateShader" => Some(ValueKind::Uint),
                "glGetString" => Some(ValueKind::Ptr),
                _ => None,
            },
            class,
        })
        .collect();
    FunctionTable { functions }
}

/// A context as the agent describes it, offering every counter of [`COUNTERS`].
pub fn context(handle: u64) -> ContextInfo {
    ContextInfo {
        handle,
        api: ClientApi::Gl,
        vendor: "gpuheat".into(),
        renderer: "testing".into(),
        version: "4.5 (testing)".into(),
        counters: COUNTERS
            .iter()
            .map(|&(name, unit)| CounterInfo {
                name: name.into(),
                unit: unit.into(),
                description: format!("{name} (testing)"),
                available: true,
                unavailable_reason: None,
            })
            .collect(),
        pipelined_meaningful: true,
        pipelined_note: "testing".into(),
        serialized_overhead_ns: 0,
    }
}

/// Builds a [`Session`] frame by frame.
#[derive(Debug, Clone)]
pub struct SessionBuilder {
    session: Session,
    next_frame: u64,
    clock_ns: u64,
}

impl Default for SessionBuilder {
    fn default() -> Self {
        SessionBuilder::new()
    }
}

impl SessionBuilder {
    /// A full-mode session of no frames, with the context [`CONTEXT`] and the entry points
    /// of [`function_table`]; its first frame is numbered 1.
    pub fn new() -> Self {
        SessionBuilder {
            session: Session {
                info: SessionInfo {
                    agent_version: "testing".into(),
                    pid: 4242,
                    exe: "/usr/bin/testing".into(),
                    args: vec!["testing".into()],
                    mode: CaptureMode::Full,
                    skip: 1,
                    frames_requested: 0,
                    clock_origin_ns: 0,
                    started_unix_s: 0,
                    notes: Vec::new(),
                    warmup_frames: None,
                },
                functions: function_table(),
                contexts: vec![context(CONTEXT)],
                modules: None,
                frames: Vec::new(),
                pipelined: Vec::new(),
                end: None,
                attach: None,
                hooks: None,
                programs: Vec::new(),
                uploads: Vec::new(),
                states: Vec::new(),
                heat: Vec::new(),
                heat_missing: Vec::new(),
                target_heat: Vec::new(),
                flow: Vec::new(),
                vg_calls: Vec::new(),
                vg_paths: Vec::new(),
                geometry: Vec::new(),
                warmup: Vec::new(),
                agent_frames: Vec::new(),
                triggers: Vec::new(),
                watch: None,
                vk_render_passes: Vec::new(),
                vk_frames: Vec::new(),
                truncated_at: None,
            },
            next_frame: 1,
            clock_ns: 1_000_000,
        }
    }

    /// Sets the capture mode.
    pub fn mode(mut self, mode: CaptureMode) -> Self {
        self.session.info.mode = mode;
        self
    }

    /// Adds a context (with every counter), for frames that switch to it.
    pub fn context(mut self, handle: u64) -> Self {
        self.session.contexts.push(context(handle));
        self
    }

    /// Marks counter `name` of context `handle` unavailable for `reason` (`None`: no reason
    /// given).
    pub fn unavailable(mut self, handle: u64, name: &str, reason: Option<&str>) -> Self {
        let counter = self
            .session
            .contexts
            .iter_mut()
            .find(|c| c.handle == handle)
            .and_then(|c| c.counters.iter_mut().find(|c| c.name == name))
            .unwrap_or_else(|| panic!("no counter {name} on context {handle:#x}"));
        counter.available = false;
        counter.unavailable_reason = reason.map(Into::into);
        self
    }

    /// Adds a mapped module, so call sites inside it read as `name+offset`.
    pub fn module(mut self, path: &str, start: u64, end: u64, file_offset: u64) -> Self {
        self.session
            .modules
            .get_or_insert_with(|| ModuleMap {
                modules: Vec::new(),
            })
            .modules
            .push(Module {
                path: path.into(),
                start,
                end,
                file_offset,
            });
        self
    }

    /// Records context `handle`'s state at the start of the capture, with `program` in use.
    pub fn start_state(mut self, handle: u64, program: u32) -> Self {
        self.session.states.push(ContextState {
            context: handle,
            frame: self.next_frame,
            program,
            vertex_array: 0,
            array_buffer: 0,
            element_array_buffer: 0,
            draw_framebuffer: 0,
            read_framebuffer: 0,
            viewport: [0, 0, 64, 64],
            surface: Some([64, 64]),
            samples: None,
            sample_buffers: None,
            depth_bits: None,
            stencil_bits: None,
            depth_test: None,
            blend: None,
            cull_face: None,
            active_texture: None,
            texture_2d: None,
        });
        self
    }

    /// Records that context `handle` linked `program` from shaders whose sources hash to
    /// `source_hash` (a `PROG` record).
    pub fn program(mut self, handle: u64, program: u32, source_hash: u64) -> Self {
        self.session.programs.push(ProgramInfo {
            context: handle,
            program,
            source_hash,
            stages: vec![0x8B31, 0x8B30],
            sources: Vec::new(),
        });
        self
    }

    /// Numbers the next frame `index` (later frames follow it).
    pub fn frame_index(mut self, index: u64) -> Self {
        self.next_frame = index;
        self
    }

    /// Records the next frame: `build` makes its calls; its swap follows them.
    pub fn frame(mut self, build: impl FnOnce(&mut FrameBuilder)) -> Self {
        let mut f = FrameBuilder {
            functions: &mut self.session.functions,
            contexts: &self.session.contexts,
            frame: Frame {
                index: self.next_frame,
                begin_ns: self.clock_ns,
                end_ns: self.clock_ns,
                calls: Vec::new(),
                samples: Vec::new(),
            },
            context: CONTEXT,
            clock_ns: self.clock_ns,
            pipelined: Vec::new(),
            disjoint: false,
            maps: Vec::new(),
            targets: Vec::new(),
            covers: Vec::new(),
            sampled: Vec::new(),
            dropped: Vec::new(),
            flow: false,
            geometry: Vec::new(),
            missing: Vec::new(),
            vg: Vec::new(),
        };
        build(&mut f);
        let swap_context = f.context;
        f.context = CONTEXT;
        f.call("eglSwapBuffers", &[0x1, 0x2]);
        f.context = swap_context;
        let built = f.finish();
        self.clock_ns = built.frame.end_ns + 1_000_000;
        self.next_frame = built.frame.index + 1;
        let s = &mut self.session;
        s.info.frames_requested += 1;
        if !built.pipelined.is_empty() {
            s.pipelined.push(PipelinedBatch {
                frame: built.frame.index,
                disjoint: built.disjoint,
                times: built.pipelined,
            });
        }
        s.frames.push(built.frame);
        s.heat.extend(built.maps);
        s.target_heat.extend(built.targets);
        s.flow.extend(built.flow);
        s.heat_missing.extend(built.missing);
        s.geometry.extend(built.geometry);
        s.vg_calls.extend(built.vg);
        self
    }

    /// Records that the heat map of frame `frame` could not be made, and why.
    pub fn heat_missing(mut self, frame: u64, reason: &str) -> Self {
        self.session.heat_missing.push(HeatMissing {
            frame,
            context: CONTEXT,
            reason: reason.into(),
        });
        self
    }

    /// Marks frame `frame` as one the agent's own first-time work made unsteady (a `WARM`
    /// record), for `reason`.
    pub fn warmup(mut self, frame: u64, reason: &str) -> Self {
        self.session.warmup.push(gpuheat_session::WarmUp {
            frame,
            reasons: vec![reason.into()],
        });
        self
    }

    /// Makes the session an attach session (an `ATCH` record) whose agent ran `warmup_frames`
    /// unrecorded warm-up frames before the first captured one (`None`: an agent from before
    /// the warm-up).
    pub fn attached(mut self, warmup_frames: Option<u32>) -> Self {
        self.session.info.warmup_frames = warmup_frames;
        self.session.attach = Some(gpuheat_session::AttachInfo {
            thread: 1,
            safe_point: "eglSwapBuffers".into(),
            latency_ns: 100_000_000,
            hiccup_ns: 10_000_000,
            injection_ns: 20_000_000,
        });
        self
    }

    /// The session so far, for the other parts of the builder.
    pub(crate) fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// The session.
    pub fn build(self) -> Session {
        self.session
    }
}

/// One rectangle a draw covers once: x0, y0, x1, y1 (exclusive), GL window coordinates.
type Rect = [u32; 4];

/// A render target `id` whose one colour attachment is level 0 of texture `texture`, `width`
/// × `height`, `GL_RGBA8`, made with framebuffer object `id`.
pub fn texture_target(id: u32, texture: u32, width: u32, height: u32) -> RenderTarget {
    RenderTarget {
        id,
        framebuffer: id,
        attachments: vec![Attachment::Texture {
            name: texture,
            level: 0,
            layer: 0,
        }],
        width,
        height,
        format: 0x8058,
    }
}

/// The records a capture of `session` would have written, in an order a reader accepts: for
/// writing a built session to a file (`SessionWriter`) and testing the commands that open one.
pub fn records(session: &Session) -> Vec<Record> {
    let s = session;
    let mut out = vec![
        Record::Info(s.info.clone()),
        Record::Functions(s.functions.clone()),
    ];
    out.extend(s.contexts.iter().cloned().map(Record::Context));
    out.extend(s.modules.iter().cloned().map(Record::Modules));
    out.extend(s.programs.iter().cloned().map(Record::Program));
    out.extend(s.states.iter().cloned().map(Record::State));
    out.extend(s.frames.iter().cloned().map(Record::Frame));
    out.extend(s.pipelined.iter().cloned().map(Record::Pipelined));
    out.extend(s.heat.iter().cloned().map(Record::Heat));
    out.extend(s.heat_missing.iter().cloned().map(Record::HeatMissing));
    out.extend(s.target_heat.iter().cloned().map(Record::TargetHeat));
    out.extend(s.flow.iter().cloned().map(Record::Flow));
    out.extend(s.vg_paths.iter().cloned().map(Record::VgPath));
    out.extend(s.vg_calls.iter().cloned().map(Record::VgCall));
    out.extend(s.geometry.iter().cloned().map(Record::Geometry));
    out.extend(s.end.iter().cloned().map(Record::End));
    out
}

/// Writes `session` to a session file at `path`, as a capture would have (see [`records`]),
/// for the tests of the commands and the viewer that open one.
pub fn write(session: &Session, path: &Path) {
    let mut w =
        SessionWriter::create(path).unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
    for r in records(session) {
        w.append(&r)
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
    w.finish()
        .unwrap_or_else(|e| panic!("finishing {}: {e}", path.display()));
}

/// Records the calls and measurements of one frame (see [`SessionBuilder::frame`]).
#[derive(Debug)]
pub struct FrameBuilder<'a> {
    /// Mutable: VG entry points join it on first use.
    functions: &'a mut FunctionTable,
    contexts: &'a [ContextInfo],
    pub(crate) frame: Frame,
    pub(crate) context: u64,
    clock_ns: u64,
    pipelined: Vec<PipelinedTime>,
    disjoint: bool,
    /// One map per context, painted from `covers` at the end.
    maps: Vec<HeatMap>,
    /// Offscreen targets' maps, painted the same way.
    targets: Vec<TargetHeat>,
    /// (context, target id (0: the screen), call, rectangle).
    covers: Vec<(u64, u32, u32, Rect)>,
    /// What each draw sampled: (call, texture names).
    sampled: Vec<(u32, Vec<u32>)>,
    /// Draws whose coverage was not kept, and the note saying why.
    dropped: Vec<(u32, String)>,
    /// Whether this frame writes `FLOW` records.
    flow: bool,
    geometry: Vec<FrameGeometry>,
    missing: Vec<HeatMissing>,
    /// The OpenVG records of this frame's VG calls.
    pub(crate) vg: Vec<VgCall>,
}

/// What a [`FrameBuilder`] made.
struct Built {
    frame: Frame,
    pipelined: Vec<PipelinedTime>,
    disjoint: bool,
    maps: Vec<HeatMap>,
    targets: Vec<TargetHeat>,
    flow: Vec<FrameFlow>,
    geometry: Vec<FrameGeometry>,
    missing: Vec<HeatMissing>,
    vg: Vec<VgCall>,
}

impl FrameBuilder<'_> {
    /// The frame's number.
    pub fn index(&self) -> u64 {
        self.frame.index
    }

    /// Records the following calls on context `handle` (added with
    /// [`SessionBuilder::context`]).
    pub fn on_context(&mut self, handle: u64) -> &mut Self {
        assert!(
            self.contexts.iter().any(|c| c.handle == handle),
            "context {handle:#x} was not added to the session"
        );
        self.context = handle;
        self
    }

    /// Records a call of `name` (an entry point of [`function_table`], or an OpenVG one, which
    /// joins the table on its first call) with `args`, taking [`CALL_NS`] of wall and CPU
    /// time; returns its index in the frame.
    pub fn call(&mut self, name: &str, args: &[u64]) -> u32 {
        let table = &mut self.functions.functions;
        let func = match table.iter().position(|f| f.name == name) {
            Some(i) => i,
            None if name.starts_with("vg") => {
                table.push(crate::vg_table::entry_point(name, args.len()));
                table.len() - 1
            }
            None => panic!("{name} is not in the testing function table"),
        };
        let info = &self.functions.functions[func];
        assert_eq!(
            info.params.len(),
            args.len(),
            "{name} takes {} arguments",
            info.params.len()
        );
        let index = self.frame.calls.len() as u32;
        self.frame.calls.push(Call {
            func: func as u16,
            thread: THREAD,
            context: self.context,
            begin_ns: self.clock_ns,
            duration_ns: CALL_NS,
            cpu_ns: CALL_NS,
            args: args.to_vec(),
            ret: info.ret.map(|_| 1),
            callsite: 0x40_0000 + 0x10 * u64::from(index),
        });
        self.clock_ns += 2 * CALL_NS;
        self.frame.end_ns = self.clock_ns;
        index
    }

    /// Records a call of `name` with `args` that returned `ret` (a handle: `vgCreatePath`,
    /// `glCreateShader`…); returns its index.
    pub fn made(&mut self, name: &str, args: &[u64], ret: u64) -> u32 {
        let call = self.call(name, args);
        self.frame.calls[call as usize].ret = Some(ret);
        call
    }

    /// Sets the call site (return address) of call `call`: calls made from one line of a loop
    /// share it. By default each call has its own.
    pub fn at(&mut self, call: u32, callsite: u64) -> &mut Self {
        self.frame.calls[call as usize].callsite = callsite;
        self
    }

    /// Lets `ns` pass before the next call: the program's own work between its GL calls
    /// (the frame's wall time grows, no call's does).
    pub fn elapse(&mut self, ns: u64) -> &mut Self {
        self.clock_ns += ns;
        self.frame.end_ns = self.clock_ns;
        self
    }

    /// Sets the wall and CPU time of call `call`.
    pub fn timed(&mut self, call: u32, duration_ns: u64, cpu_ns: u64) -> &mut Self {
        let c = &mut self.frame.calls[call as usize];
        c.duration_ns = duration_ns;
        c.cpu_ns = cpu_ns;
        self
    }

    /// Records `glDrawArrays(GL_TRIANGLES, 0, 6)` that took `serialized_ns` of serialized GPU
    /// time; returns its index.
    pub fn draw(&mut self, serialized_ns: u64) -> u32 {
        let call = self.call("glDrawArrays", &[GL_TRIANGLES, 0, 6]);
        self.counter(call, "gpu_time_serialized", serialized_ns);
        call
    }

    /// Records `glDrawArrays(GL_TRIANGLES, 0, 6)` with no measurement (timeline mode).
    pub fn draw_untimed(&mut self) -> u32 {
        self.call("glDrawArrays", &[GL_TRIANGLES, 0, 6])
    }

    /// Records `glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT)` that took `serialized_ns`
    /// of serialized GPU time; returns its index.
    pub fn clear(&mut self, serialized_ns: u64) -> u32 {
        let call = self.call("glClear", &[CLEAR_MASK]);
        self.counter(call, "gpu_time_serialized", serialized_ns);
        call
    }

    /// Records counter `name` (one of [`COUNTERS`]) of call `call` as `value`.
    pub fn counter(&mut self, call: u32, name: &str, value: u64) -> &mut Self {
        let context = self.frame.calls[call as usize].context;
        let counter = self
            .contexts
            .iter()
            .find(|c| c.handle == context)
            .and_then(|c| c.counters.iter().position(|c| c.name == name))
            .unwrap_or_else(|| panic!("no counter {name} on context {context:#x}"))
            as u16;
        let sample = match self.frame.samples.iter().position(|s| s.call == call) {
            Some(i) => &mut self.frame.samples[i],
            None => {
                self.frame.samples.push(DrawSample {
                    call,
                    values: Vec::new(),
                });
                self.frame.samples.last_mut().expect("just pushed")
            }
        };
        sample.values.retain(|v| v.counter != counter);
        sample.values.push(CounterValue { counter, value });
        self
    }

    /// Records the pipelined GPU time of call `call`, as a batch read back later would.
    pub fn pipelined(&mut self, call: u32, gpu_ns: u64) -> &mut Self {
        self.pipelined.push(PipelinedTime { call, gpu_ns });
        self
    }

    /// Marks this frame's pipelined times as disjoint (GL_GPU_DISJOINT_EXT was raised).
    pub fn disjoint(&mut self) -> &mut Self {
        self.disjoint = true;
        self
    }

    /// Starts a `width` × `height` heat map of this frame on the current context; draws
    /// paint it with [`FrameBuilder::cover`].
    pub fn heat_map(&mut self, width: u32, height: u32) -> &mut Self {
        let n = width as usize * height as usize;
        self.maps.retain(|m| m.context != self.context);
        self.maps.push(HeatMap {
            frame: self.frame.index,
            context: self.context,
            width,
            height,
            heat: vec![0.0; n],
            overdraw: vec![0; n],
            colour: Vec::new(),
            draws: Vec::new(),
        });
        self
    }

    /// Paints draw `call` once over `rect` (x0, y0, x1, y1 exclusive) of the current
    /// context's heat map: one fragment per pixel, its serialized time spread over all the
    /// fragments it paints (`heat(p) = Σ_d c_d(p)·T_d/N_d`). Call it again for overlapping
    /// triangles of the same draw.
    pub fn cover(&mut self, call: u32, rect: Rect) -> &mut Self {
        let map = self
            .maps
            .iter()
            .find(|m| m.context == self.context)
            .expect("cover needs a heat_map on this context first");
        assert!(
            rect[0] <= rect[2]
                && rect[1] <= rect[3]
                && rect[2] <= map.width
                && rect[3] <= map.height,
            "{rect:?} is not inside the {}x{} map",
            map.width,
            map.height
        );
        self.covers.push((self.context, 0, call, rect));
        self
    }

    /// Paints draw `call` over `pixels` pixels of the current context's heat map, whole rows
    /// from its origin then part of one: for tests that need a draw's fragment count, not
    /// its shape.
    pub fn cover_pixels(&mut self, call: u32, pixels: u32) -> &mut Self {
        let width = self
            .maps
            .iter()
            .find(|m| m.context == self.context)
            .expect("cover_pixels needs a heat_map on this context first")
            .width;
        let (rows, rest) = (pixels / width, pixels % width);
        if rows > 0 {
            self.cover(call, [0, 0, width, rows]);
        }
        if rest > 0 || rows == 0 {
            self.cover(call, [0, rows, rest, rows + u32::from(rest > 0)]);
        }
        self
    }

    /// Starts the map of offscreen render target `target` (its id ≠ 0) of this frame on the
    /// current context; draws paint it with [`FrameBuilder::cover_target`]. The frame then
    /// writes `FLOW` records: one [`DrawFlow`] per painted draw of each context.
    pub fn target(&mut self, target: RenderTarget) -> &mut Self {
        assert_ne!(target.id, 0, "target id 0 is the default framebuffer");
        let n = target.width as usize * target.height as usize;
        self.targets
            .retain(|t| !(t.context == self.context && t.target.id == target.id));
        self.targets.push(TargetHeat {
            frame: self.frame.index,
            context: self.context,
            target,
            heat: vec![0.0; n],
            overdraw: vec![0; n],
            draws: Vec::new(),
        });
        self.flow = true;
        self
    }

    /// Paints draw `call` once over `rect` of offscreen target `id` of the current context,
    /// as [`FrameBuilder::cover`] does the screen. An empty rectangle lists the draw in the
    /// target's map with no fragments.
    pub fn cover_target(&mut self, call: u32, id: u32, rect: Rect) -> &mut Self {
        let t = self
            .targets
            .iter()
            .find(|t| t.context == self.context && t.target.id == id)
            .expect("cover_target needs target(..) on this context first");
        assert!(
            rect[0] <= rect[2]
                && rect[1] <= rect[3]
                && rect[2] <= t.target.width
                && rect[3] <= t.target.height,
            "{rect:?} is not inside the {}x{} target",
            t.target.width,
            t.target.height
        );
        self.covers.push((self.context, id, call, rect));
        self
    }

    /// Records that draw `call` sampled `textures` (names); the frame then writes `FLOW`
    /// records. Its coverage is kept when one of them is a target's texture drawn into by an
    /// earlier call of the frame, as the agent does.
    pub fn samples(&mut self, call: u32, textures: &[u32]) -> &mut Self {
        self.sampled.retain(|(c, _)| *c != call);
        self.sampled.push((call, textures.to_vec()));
        self.flow = true;
        self
    }

    /// Records that draw `call`'s coverage was not kept, with `note` saying why.
    pub fn coverage_dropped(&mut self, call: u32, note: &str) -> &mut Self {
        self.dropped.push((call, note.into()));
        self
    }

    /// Records the post-transform positions of draw `call` (clip space; triangles, 3
    /// vertices each) on the current context, with the viewport of its heat map (64 × 64
    /// without one).
    pub fn geometry(&mut self, call: u32, positions: Vec<[f32; 4]>) -> &mut Self {
        let viewport = self
            .maps
            .iter()
            .find(|m| m.context == self.context)
            .map_or([0, 0, 64, 64], |m| [0, 0, m.width as i32, m.height as i32]);
        self.frame_geometry().draws.push(DrawGeometry {
            call,
            primitive: GL_TRIANGLES as u32,
            positions,
            dropped_vertices: 0,
            viewport,
        });
        self
    }

    /// Records that draw `call`'s positions could not be captured, and why.
    pub fn geometry_missing(&mut self, call: u32, reason: &str) -> &mut Self {
        self.frame_geometry().missing.push(GeometryMissing {
            call,
            reason: reason.into(),
        });
        self
    }

    /// Records that this frame's heat map on the current context could not be made.
    pub fn heat_missing(&mut self, reason: &str) -> &mut Self {
        self.missing.push(HeatMissing {
            frame: self.frame.index,
            context: self.context,
            reason: reason.into(),
        });
        self
    }

    fn frame_geometry(&mut self) -> &mut FrameGeometry {
        let i = match self.geometry.iter().position(|g| g.context == self.context) {
            Some(i) => i,
            None => {
                self.geometry.push(FrameGeometry {
                    frame: self.frame.index,
                    context: self.context,
                    vertex_budget: VERTEX_BUDGET,
                    draws: Vec::new(),
                    missing: Vec::new(),
                });
                self.geometry.len() - 1
            }
        };
        &mut self.geometry[i]
    }

    /// The serialized time recorded for `call`, 0 without one.
    fn serialized_ns(&self, call: u32) -> u64 {
        let Some(c) = self.frame.calls.get(call as usize) else {
            return 0;
        };
        let Some(counter) = self
            .contexts
            .iter()
            .find(|ctx| ctx.handle == c.context)
            .and_then(|ctx| {
                ctx.counters
                    .iter()
                    .position(|k| k.name == "gpu_time_serialized")
            })
        else {
            return 0;
        };
        self.frame
            .samples
            .iter()
            .find(|s| s.call == call)
            .and_then(|s| s.values.iter().find(|v| usize::from(v.counter) == counter))
            .map_or(0, |v| v.value)
    }

    fn finish(mut self) -> Built {
        let covers = std::mem::take(&mut self.covers);
        let times: Vec<u64> = covers
            .iter()
            .map(|&(_, _, call, _)| self.serialized_ns(call))
            .collect();
        let mine = |context: u64, target: u32| -> Vec<(u32, Rect, u64)> {
            covers
                .iter()
                .zip(&times)
                .filter(|((c, t, _, _), _)| *c == context && *t == target)
                .map(|(&(_, _, call, rect), &t)| (call, rect, t))
                .collect()
        };
        for map in &mut self.maps {
            map.draws = paint(
                map.width,
                &mut map.heat,
                &mut map.overdraw,
                &mine(map.context, 0),
            );
        }
        for t in &mut self.targets {
            t.draws = paint(
                t.target.width,
                &mut t.heat,
                &mut t.overdraw,
                &mine(t.context, t.target.id),
            );
        }
        let flow = if self.flow {
            self.flows(&covers)
        } else {
            Vec::new()
        };
        Built {
            frame: self.frame,
            pipelined: self.pipelined,
            disjoint: self.disjoint,
            maps: self.maps,
            targets: self.targets,
            flow,
            geometry: self.geometry,
            missing: self.missing,
            vg: self.vg,
        }
    }

    /// One `FLOW` record per context with painted draws: each draw's target, what it
    /// sampled, its box and (when it sampled a texture drawn into earlier) its coverage.
    fn flows(&self, covers: &[(u64, u32, u32, Rect)]) -> Vec<FrameFlow> {
        let mut contexts: Vec<u64> = covers.iter().map(|c| c.0).collect();
        contexts.sort_unstable();
        contexts.dedup();
        let mut out = Vec::new();
        for context in contexts {
            let mut calls: Vec<(u32, u32)> = covers
                .iter()
                .filter(|c| c.0 == context)
                .map(|c| (c.2, c.1))
                .collect();
            calls.sort_unstable();
            calls.dedup();
            let mut draws = Vec::new();
            for (call, target) in calls {
                let rects: Vec<Rect> = covers
                    .iter()
                    .filter(|c| c.0 == context && c.2 == call && c.3[0] < c.3[2] && c.3[1] < c.3[3])
                    .map(|c| c.3)
                    .collect();
                let bbox = rects.iter().fold(None, |b: Option<Rect>, r| {
                    Some(match b {
                        None => *r,
                        Some(b) => [
                            b[0].min(r[0]),
                            b[1].min(r[1]),
                            b[2].max(r[2]),
                            b[3].max(r[3]),
                        ],
                    })
                });
                let bbox = bbox.unwrap_or([0; 4]);
                let sampled = self
                    .sampled
                    .iter()
                    .find(|(c, _)| *c == call)
                    .map(|(_, t)| t.clone())
                    .unwrap_or_default();
                // A texture drawn into by an earlier call of the frame, on any context.
                let drawn_before = sampled.iter().any(|&tex| {
                    covers.iter().any(|&(ctx, id, c, _)| {
                        id != 0
                            && c < call
                            && self.targets.iter().any(|t| {
                                t.context == ctx
                                    && t.target.id == id
                                    && t.target
                                        .attachments
                                        .iter()
                                        .any(|a| a.texture() == Some(tex))
                            })
                    })
                });
                let note = self
                    .dropped
                    .iter()
                    .find(|(c, _)| *c == call)
                    .map(|(_, n)| n.clone());
                let coverage = if drawn_before && note.is_none() {
                    let w = (bbox[2] - bbox[0]) as usize;
                    let mut cov = vec![0u8; w * (bbox[3] - bbox[1]) as usize];
                    for r in &rects {
                        for y in r[1]..r[3] {
                            for x in r[0]..r[2] {
                                let i = (y - bbox[1]) as usize * w + (x - bbox[0]) as usize;
                                cov[i] = cov[i].saturating_add(1);
                            }
                        }
                    }
                    cov
                } else {
                    Vec::new()
                };
                draws.push(DrawFlow {
                    call,
                    target,
                    sampled,
                    bbox,
                    coverage,
                    note: note.unwrap_or_default(),
                });
            }
            out.push(FrameFlow {
                frame: self.frame.index,
                context,
                draws,
            });
        }
        out
    }
}

/// Paints `mine` (call, rectangle, T_d) into a map `width` wide: one fragment per pixel of
/// each rectangle, each draw's time spread over all its fragments; returns the draws.
fn paint(
    width: u32,
    heat: &mut [f32],
    overdraw: &mut [u32],
    mine: &[(u32, Rect, u64)],
) -> Vec<DrawCoverage> {
    // N_d and the bounding box of each draw first: the heat of a pixel needs them.
    let mut draws: Vec<DrawCoverage> = Vec::new();
    for &(call, r, t) in mine {
        let area = u64::from(r[2] - r[0]) * u64::from(r[3] - r[1]);
        match draws.iter_mut().find(|d| d.call == call) {
            Some(d) => {
                if area > 0 {
                    d.bbox = if d.fragments == 0 {
                        r
                    } else {
                        [
                            d.bbox[0].min(r[0]),
                            d.bbox[1].min(r[1]),
                            d.bbox[2].max(r[2]),
                            d.bbox[3].max(r[3]),
                        ]
                    };
                }
                d.fragments += area;
            }
            None => draws.push(DrawCoverage {
                call,
                fragments: area,
                time_ns: t,
                bbox: if area > 0 { r } else { [0; 4] },
            }),
        }
    }
    for &(call, r, _) in mine {
        let d = draws.iter().find(|d| d.call == call).expect("listed above");
        let per_fragment = if d.fragments > 0 {
            d.time_ns as f64 / d.fragments as f64
        } else {
            0.0
        };
        for y in r[1]..r[3] {
            for x in r[0]..r[2] {
                let i = y as usize * width as usize + x as usize;
                overdraw[i] += 1;
                heat[i] += per_fragment as f32;
            }
        }
    }
    draws.sort_by_key(|d| d.call);
    draws
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scratch;

    #[test]
    fn offscreen_targets_and_flow_survive_a_file() {
        let s = SessionBuilder::new()
            .frame(|f| {
                f.heat_map(8, 8).target(texture_target(3, 9, 4, 4));
                let a = f.draw(400);
                f.cover_target(a, 3, [0, 0, 4, 4])
                    .cover_target(a, 3, [0, 0, 2, 2]);
                let b = f.draw(100);
                f.cover(b, [2, 2, 6, 4]).samples(b, &[9]);
                let c = f.draw(50);
                f.cover(c, [0, 0, 1, 1])
                    .samples(c, &[9])
                    .coverage_dropped(c, "budget");
            })
            .build();
        let t = &s.target_heat[0];
        // Heat conserved in the target: Σ heat = T_d; the doubly covered corner has 2.
        let sum: f32 = t.heat.iter().sum();
        assert!((sum - 400.0).abs() < 1e-3, "{sum}");
        assert_eq!(t.overdraw[0], 2);
        assert_eq!(t.draws[0].fragments, 20);
        let flows = &s.flow[0].draws;
        assert_eq!(flows.len(), 3);
        assert!(flows[0].coverage.is_empty(), "sampled nothing");
        assert_eq!(flows[1].bbox, [2, 2, 6, 4]);
        assert_eq!(flows[1].coverage, vec![1; 8]);
        assert_eq!(
            (flows[2].coverage.len(), flows[2].note.as_str()),
            (0, "budget")
        );

        let dir = Scratch::new("gpuheat-testing", "flow-file");
        let path = dir.join("s.gpuheat");
        let mut w = SessionWriter::create(&path).unwrap();
        for r in records(&s) {
            w.append(&r).unwrap();
        }
        w.finish().unwrap();
        let back = Session::open(&path).unwrap();
        assert_eq!(back.target_heat, s.target_heat);
        assert_eq!(back.flow, s.flow);
        assert_eq!(back.heat, s.heat);
    }
}
