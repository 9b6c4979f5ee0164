//! Small sessions built in code, for the unit tests of the crates that read sessions (the
//! `testing` feature; enable it in `[dev-dependencies]` only).
//!
//! A [`SessionBuilder`] starts from a full-mode session with one context ([`CONTEXT`]) that
//! offers every counter in [`COUNTERS`], and a function table ([`function_table`]) holding the
//! entry points the analysis reads: draws, clears, the state setters, the calls that stall, a
//! swap. Each [`SessionBuilder::frame`] gets a [`FrameBuilder`] to record calls, counter
//! values, pipelined times, a heat map painted from rectangles, and geometry; the frame's swap
//! is appended when the closure returns. The records are those a capture writes, with
//! consistent numbers (heat conserved, overdraw counted), so code under test cannot tell them
//! from a real session's.
//!
//! ```
//! use gpuheat_session::testing::SessionBuilder;
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

use crate::model::{
    Call, CallClass, CaptureMode, ClientApi, ContextInfo, ContextState, CounterInfo, CounterValue,
    DrawCoverage, DrawGeometry, DrawSample, Frame, FrameGeometry, FunctionInfo, FunctionTable,
    GeometryMissing, HeatMap, HeatMissing, Module, ModuleMap, ParamInfo, PipelinedBatch,
    PipelinedTime, ProgramInfo, SessionInfo, ValueKind,
};
use crate::reader::Session;

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
                states: Vec::new(),
                heat: Vec::new(),
                heat_missing: Vec::new(),
                target_heat: Vec::new(),
                flow: Vec::new(),
                geometry: Vec::new(),
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
            functions: &self.session.functions,
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
            covers: Vec::new(),
            geometry: Vec::new(),
            missing: Vec::new(),
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
        s.heat_missing.extend(built.missing);
        s.geometry.extend(built.geometry);
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

    /// The session.
    pub fn build(self) -> Session {
        self.session
    }
}

/// One rectangle a draw covers once: x0, y0, x1, y1 (exclusive), GL window coordinates.
type Rect = [u32; 4];

/// Records the calls and measurements of one frame (see [`SessionBuilder::frame`]).
#[derive(Debug)]
pub struct FrameBuilder<'a> {
    functions: &'a FunctionTable,
    contexts: &'a [ContextInfo],
    frame: Frame,
    context: u64,
    clock_ns: u64,
    pipelined: Vec<PipelinedTime>,
    disjoint: bool,
    /// One map per context, painted from `covers` at the end.
    maps: Vec<HeatMap>,
    covers: Vec<(u64, u32, Rect)>,
    geometry: Vec<FrameGeometry>,
    missing: Vec<HeatMissing>,
}

/// What a [`FrameBuilder`] made.
struct Built {
    frame: Frame,
    pipelined: Vec<PipelinedTime>,
    disjoint: bool,
    maps: Vec<HeatMap>,
    geometry: Vec<FrameGeometry>,
    missing: Vec<HeatMissing>,
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

    /// Records a call of `name` (an entry point of [`function_table`]) with `args`, taking
    /// [`CALL_NS`] of wall and CPU time; returns its index in the frame.
    pub fn call(&mut self, name: &str, args: &[u64]) -> u32 {
        let func = self
            .functions
            .functions
            .iter()
            .position(|f| f.name == name)
            .unwrap_or_else(|| panic!("{name} is not in the testing function table"));
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

    /// Sets the call site (return address) of call `call`: calls made from one line of a loop
    /// share it. By default each call has its own.
    pub fn at(&mut self, call: u32, callsite: u64) -> &mut Self {
        self.frame.calls[call as usize].callsite = callsite;
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
        self.covers.push((self.context, call, rect));
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
            .map(|&(_, call, _)| self.serialized_ns(call))
            .collect();
        for map in &mut self.maps {
            let mine: Vec<(u32, Rect, u64)> = covers
                .iter()
                .zip(&times)
                .filter(|((context, _, _), _)| *context == map.context)
                .map(|(&(_, call, rect), &t)| (call, rect, t))
                .collect();
            // N_d and the bounding box of each draw first: the heat of a pixel needs them.
            let mut draws: Vec<DrawCoverage> = Vec::new();
            for &(call, r, t) in &mine {
                let area = u64::from(r[2] - r[0]) * u64::from(r[3] - r[1]);
                match draws.iter_mut().find(|d| d.call == call) {
                    Some(d) => {
                        d.fragments += area;
                        d.bbox = [
                            d.bbox[0].min(r[0]),
                            d.bbox[1].min(r[1]),
                            d.bbox[2].max(r[2]),
                            d.bbox[3].max(r[3]),
                        ];
                    }
                    None => draws.push(DrawCoverage {
                        call,
                        fragments: area,
                        time_ns: t,
                        bbox: r,
                    }),
                }
            }
            for &(call, r, _) in &mine {
                let d = draws.iter().find(|d| d.call == call).expect("listed above");
                let per_fragment = if d.fragments > 0 {
                    d.time_ns as f64 / d.fragments as f64
                } else {
                    0.0
                };
                for y in r[1]..r[3] {
                    for x in r[0]..r[2] {
                        let i = y as usize * map.width as usize + x as usize;
                        map.overdraw[i] += 1;
                        map.heat[i] += per_fragment as f32;
                    }
                }
            }
            draws.sort_by_key(|d| d.call);
            map.draws = draws;
        }
        Built {
            frame: self.frame,
            pipelined: self.pipelined,
            disjoint: self.disjoint,
            maps: self.maps,
            geometry: self.geometry,
            missing: self.missing,
        }
    }
}
