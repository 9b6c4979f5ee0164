//! The records a session holds. The agent produces them, the session file stores each as one
//! chunk, and the inspector reads them back. Everything a reader needs to interpret a record
//! (function names, parameter kinds, counter names and units) is itself stored in the session,
//! so a session stays readable when the agent's tables change.

use serde::{Deserialize, Serialize};

/// First record of every session: who was captured, how, and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Version of the gpuheat agent that produced the session.
    pub agent_version: String,
    /// Process id of the captured program.
    pub pid: u32,
    /// Path of the captured program's executable.
    pub exe: String,
    /// Command line of the captured program.
    pub args: Vec<String>,
    /// Capture mode.
    pub mode: CaptureMode,
    /// Frames skipped before the capture started.
    pub skip: u32,
    /// Frames the capture was asked for.
    pub frames_requested: u32,
    /// CLOCK_MONOTONIC time (ns) that all `*_ns` timestamps in the session are relative to.
    pub clock_origin_ns: u64,
    /// Wall-clock time of the capture start, seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// Remarks from the agent for the report (e.g. how frames were delimited).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Frames the agent ran its capture on, unrecorded, right before the first captured frame,
    /// so that the first captured frame does not pay its first-time costs (the driver's shader
    /// variants for the agent's queries, its query objects, its buffers' pages); it may run
    /// more (while its writer is still busy with the capture's start). `Some(0)`: the capture
    /// needed none (an earlier capture of the process warmed the context up in this mode).
    /// `None` in sessions of agents from before the warm-up (their first frame after an
    /// attach is such a frame) and in INFO records the CLI wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_frames: Option<u32>,
}

/// How much the agent measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureMode {
    /// Calls and pipelined GPU timestamps only; cheap enough to leave on.
    Timeline,
    /// Timeline plus serialized per-draw timing, pipeline statistics and samples passed.
    Full,
}

/// How an argument or return value is stored in [`Call::args`] and how to print it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// Signed integer, sign-extended to 64 bits.
    Int,
    /// Unsigned integer, zero-extended.
    Uint,
    /// GLenum (or EGLenum): print as its symbolic name.
    Enum,
    /// GLbitfield: print as `A | B`.
    Bitfield,
    /// GLboolean / EGLBoolean / Bool.
    Bool,
    /// 32-bit float, stored as its bit pattern.
    F32,
    /// 64-bit float, stored as its bit pattern.
    F64,
    /// Any pointer or opaque handle, stored as its address.
    Ptr,
}

/// What an entry point does, as far as the capture cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallClass {
    /// Anything that only sets or reads state.
    State,
    /// glDraw* / glMultiDraw*: a draw call.
    Draw,
    /// Any other call that makes the GPU work (clears, blits, dispatches, copies, mipmaps).
    Work,
    /// Ends a frame (eglSwapBuffers, glXSwapBuffers and their variants).
    Swap,
}

impl CallClass {
    /// Whether a call of this class makes the GPU work: a draw, or other work
    /// ([`CallClass::Work`]). These are the calls the agent brackets and times.
    pub fn is_work(self) -> bool {
        matches!(self, CallClass::Draw | CallClass::Work)
    }
}

/// One parameter of an entry point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamInfo {
    /// The parameter's name in the registry, e.g. `mode`.
    pub name: String,
    /// The C type as the registry spells it, e.g. `const GLchar *`.
    pub c_type: String,
    /// How the value is stored and printed.
    pub kind: ValueKind,
    /// The registry's `len` attribute for array parameters, e.g. `count*4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<String>,
    /// The registry's enum group for GLenum/GLbitfield parameters, e.g. `PrimitiveType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// One entry point the agent wraps; [`Call::func`] indexes [`FunctionTable::functions`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionInfo {
    /// The entry point's name, e.g. `glDrawArrays`.
    pub name: String,
    /// Its parameters, in call order.
    pub params: Vec<ParamInfo>,
    /// `None` for `void`.
    pub ret: Option<ValueKind>,
    /// What the call does, as far as the capture cares.
    pub class: CallClass,
}

/// The agent's table of entry points, stored once per session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTable {
    /// Entry points, indexed by [`Call::func`].
    pub functions: Vec<FunctionInfo>,
}

impl FunctionTable {
    /// The entry points' names, indexed by [`Call::func`].
    pub fn names(&self) -> Vec<&str> {
        self.functions.iter().map(|f| f.name.as_str()).collect()
    }

    /// Whether entry point `func` ([`Call::func`]) makes the GPU work ([`CallClass::is_work`]);
    /// no for an index outside the table.
    pub fn is_work(&self, func: u16) -> bool {
        self.functions
            .get(usize::from(func))
            .is_some_and(|f| f.class.is_work())
    }
}

/// A counter the agent knows about; [`CounterValue::counter`] indexes the context's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterInfo {
    /// Stable machine name, e.g. `gpu_time_serialized`, `samples_passed`.
    pub name: String,
    /// Unit of the value, e.g. `ns`, `fragments`, `invocations`.
    pub unit: String,
    /// One line for people.
    pub description: String,
    /// Whether this context could measure it.
    pub available: bool,
    /// Why not, when unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
}

/// The client API a context speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientApi {
    /// Desktop OpenGL.
    Gl,
    /// OpenGL ES.
    Gles,
    /// OpenVG.
    Vg,
    /// Vulkan: the "context" is a device (its calls name it by the loader's dispatch key).
    Vulkan,
}

/// What the agent learned about a rendering context the first time it was current.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextInfo {
    /// The context handle (EGLContext / GLXContext) as the program sees it.
    pub handle: u64,
    /// The client API it speaks.
    pub api: ClientApi,
    /// `GL_VENDOR`.
    pub vendor: String,
    /// `GL_RENDERER`.
    pub renderer: String,
    /// `GL_VERSION`.
    pub version: String,
    /// Counters in the order [`CounterValue::counter`] refers to them.
    pub counters: Vec<CounterInfo>,
    /// Whether pipelined per-draw GPU time measures a draw's own cost on this renderer.
    pub pipelined_meaningful: bool,
    /// Why (or why not), for the report.
    pub pipelined_note: String,
    /// Median cost (ns) of an empty serialized bracket, subtracted from serialized times.
    #[serde(default)]
    pub serialized_overhead_ns: u64,
}

/// One mapped module of the captured process, for turning call sites into module + offset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// Path of the mapped file.
    pub path: String,
    /// First address of the mapping.
    pub start: u64,
    /// End of the mapping (exclusive).
    pub end: u64,
    /// File offset that `start` maps.
    pub file_offset: u64,
}

/// The modules mapped when the capture started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleMap {
    /// The file-backed executable mappings, as /proc/PID/maps lists them.
    pub modules: Vec<Module>,
}

/// One intercepted call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// Index into [`FunctionTable::functions`].
    pub func: u16,
    /// Kernel thread id of the caller.
    pub thread: u32,
    /// Context handle current on the calling thread (0 when none).
    pub context: u64,
    /// CLOCK_MONOTONIC at entry, relative to [`SessionInfo::clock_origin_ns`].
    pub begin_ns: u64,
    /// Wall time spent in the real call.
    pub duration_ns: u64,
    /// Thread CPU time spent in the real call, read around work calls, swaps and calls that
    /// may wait (glFinish, read-backs, fence waits); around any other call the thread runs
    /// throughout, and this is its wall time (reading the CPU clock is a system call, costlier
    /// than most GL calls).
    pub cpu_ns: u64,
    /// Arguments, one per parameter, encoded per [`ParamInfo::kind`].
    pub args: Vec<u64>,
    /// Return value, when the function returns one.
    pub ret: Option<u64>,
    /// Return address of the call into the wrapper: the program's call site.
    pub callsite: u64,
}

/// A measured counter value of one work call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterValue {
    /// Index into the call's [`ContextInfo::counters`].
    pub counter: u16,
    /// The counter's delta over the call.
    pub value: u64,
}

/// Counter values of a frame's work calls that landed after the frame was sent (`LATE`,
/// postcard): Vulkan's queries are read once the command buffer ran. The reader merges them
/// into the frame's [`Frame::samples`], so nothing downstream tells them apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateSamples {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The values, by call.
    pub samples: Vec<DrawSample>,
}

/// Counter deltas measured around one work call (draw, clear, blit, dispatch, copy, mipmap).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawSample {
    /// Index of the call in [`Frame::calls`].
    pub call: u32,
    /// Counters measured immediately (serialized time, statistics, samples passed).
    pub values: Vec<CounterValue>,
}

/// One captured frame: the calls from the previous swap up to and including this frame's swap.
///
/// Stored as postcard, which is not self-describing: the field order of this type and of
/// [`Call`], [`DrawSample`] and [`CounterValue`] is the format, and `skip_serializing_if` must
/// not be used on them. Changing them needs a new chunk kind, so that older sessions stay
/// readable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Frame number counted from the program's first swap.
    pub index: u64,
    /// CLOCK_MONOTONIC when the frame began (after the previous frame's swap returned, or at
    /// the capture's start), relative to [`SessionInfo::clock_origin_ns`].
    pub begin_ns: u64,
    /// CLOCK_MONOTONIC after this frame's swap returned, on the same clock.
    pub end_ns: u64,
    /// Every intercepted call of the frame, in call order, the swap last.
    pub calls: Vec<Call>,
    /// Counter deltas of the frame's work calls.
    pub samples: Vec<DrawSample>,
}

/// GPU time of a work call from pipelined timestamp queries, read back frames later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipelinedTime {
    /// Index of the call in its frame's [`Frame::calls`].
    pub call: u32,
    /// GPU time between the timestamps written before and after the call.
    pub gpu_ns: u64,
}

/// Pipelined times of one frame, sent once the queries have landed.
///
/// Stored as postcard, like [`Frame`]: field order is the format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelinedBatch {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// GL_GPU_DISJOINT_EXT was raised: the times of this batch are not trustworthy.
    pub disjoint: bool,
    /// The calls that have a time.
    pub times: Vec<PipelinedTime>,
}

/// Why a capture ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// All requested frames were captured.
    Complete,
    /// The user stopped it.
    Stopped,
    /// The program exited or died before the capture completed.
    TargetExited,
    /// No frame arrived within the CLI's timeout (the program stopped rendering, or the
    /// agent could not start the capture); the session keeps what arrived.
    TimedOut,
    /// The agent ended the capture itself, to leave the program alone ([`EndInfo::detail`]
    /// says why: the GPU was further behind the program than it may make it wait).
    Abandoned,
}

/// Last record of a finished session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndInfo {
    /// Why the capture ended.
    pub reason: EndReason,
    /// Frames written to the session.
    pub frames_captured: u64,
    /// Events the agent had to drop because the writer could not keep up (0 means none lost).
    pub dropped_calls: u64,
    /// More about the end, for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Whether the program asked GL who renders (`glGetString(GL_RENDERER)`,
    /// `glGetString(GL_VERSION)`, `glGetStringi`) since the agent was loaded; `None` in
    /// sessions of agents that did not watch, and in END records the CLI wrote itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renderer_query: Option<RendererQuery>,
}

impl EndInfo {
    /// Why the agent abandoned the capture, when it did ([`EndReason::Abandoned`]).
    pub fn abandoned_because(&self) -> Option<&str> {
        (self.reason == EndReason::Abandoned)
            .then(|| self.detail.as_deref().unwrap_or("no reason given"))
    }
}

/// What the agent saw of the program asking which GL it runs on: a program that never asks
/// cannot be choosing its paths by renderer or version. Only the program's own calls count
/// (not the agent's, nor the GL stack's), outside captures too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RendererQuery {
    /// `glGetString(GL_RENDERER)` was called.
    pub renderer: bool,
    /// `glGetString(GL_VERSION)` was called.
    pub version: bool,
    /// `glGetStringi` was called (any name: extensions, mostly).
    pub stringi: bool,
    /// How the agent came into the process, which says how far back "never" goes.
    pub loaded: AgentLoad,
}

impl RendererQuery {
    /// Whether any of the three queries was seen.
    pub fn seen(&self) -> bool {
        self.renderer || self.version || self.stringi
    }

    /// `Some(false)` only when the agent watched from the program's start and saw none;
    /// `None` when it came by attach and saw none (calls before the attach are unknown).
    pub fn ever(&self) -> Option<bool> {
        match (self.seen(), self.loaded) {
            (true, _) => Some(true),
            (false, AgentLoad::Launch) => Some(false),
            (false, AgentLoad::Attach) => None,
        }
    }
}

/// How the agent was loaded into the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentLoad {
    /// Preloaded at the program's start (`gpuheat run`): it saw every call.
    Launch,
    /// Injected into the running program (`gpuheat attach`): calls before that are unknown.
    Attach,
}

/// How `gpuheat attach` got into the running program, written by the CLI when the first
/// captured frame arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttachInfo {
    /// Thread that ran the injected call (the render thread).
    pub thread: i32,
    /// The function the render thread was stopped at, e.g. `eglSwapBuffers`.
    pub safe_point: String,
    /// From the `gpuheat attach` command's start to the first captured frame.
    pub latency_ns: u64,
    /// How long the render thread was held for the injection: the frame-time hiccup the
    /// program saw.
    pub hiccup_ns: u64,
    /// The whole injection, from seizing the threads to detaching them.
    pub injection_ns: u64,
}

/// A captured frame in which the agent did first-time work of its own (measured a context,
/// made its painter or geometry capture, waited for its writer): the frame's times include
/// that work, so it is no steady-state frame. Stored as the `WARM` chunk (JSON), sent after
/// the frame; analysis reads the marks through `gpuheat_analysis::measure::warmup`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmUp {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// What the agent did in it, one short line each.
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// What the agent cost in one captured frame: how often it made the program's threads wait
/// for the GPU (its own `glFinish`, read-backs, reads of query results not known to have
/// landed: `gpuheat_counters::waits`). A wait is a CPU–GPU round trip, which on a real GPU
/// is what a capture costs. Stored as the `AGNT` chunk (JSON), sent after the frame; sessions
/// of agents that did not count have none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentFrame {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// Waits for the GPU during the frame, on every thread.
    pub waits: u64,
    /// Work calls of the frame timed deferred: a timestamp pair and queries read with the
    /// frame's one wait at its end, instead of a drain before and after each (absent from
    /// older sessions: 0).
    #[serde(default)]
    pub deferred: u64,
    /// Where the agent's own time went in the frame, on every thread (absent from older
    /// sessions: zeros).
    #[serde(default)]
    pub own: AgentTimes,
}

/// The agent's own CPU-side time in one captured frame, by what it did, ns (wall time on the
/// threads that did it, its waits for the GPU included). On a real GPU a wait is rare and
/// these are what a capture costs the program: each is a count of GL calls of ours times the
/// driver's cost of one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentTimes {
    /// The brackets around work calls: timestamps, samples-passed and pipeline-statistics
    /// queries begun and ended, and the drains of isolated timing.
    #[serde(default)]
    pub counters_ns: u64,
    /// Reading the results of calls timed deferred at the frame's end, and the pipelined
    /// timestamp pairs that landed (timeline mode's only reads; not counted before this
    /// session's agent).
    #[serde(default)]
    pub results_ns: u64,
    /// Painting heat: each draw replayed and weighted, its state saved and restored.
    #[serde(default)]
    pub paint_ns: u64,
    /// The heat maps and colour read back at the frame's end.
    #[serde(default)]
    pub maps_ns: u64,
    /// Geometry capture: each draw replayed under transform feedback, and read back.
    #[serde(default)]
    pub geometry_ns: u64,
    /// The GPU time of the heat painter's own passes, where it weighs heat on the GPU and
    /// times them (absent elsewhere, and from agents before it). Not in
    /// [`AgentTimes::total_ns`]: the GPU's time, beside the CPU's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paint_gpu: Option<PaintGpu>,
}

/// The GPU time of the heat painter's own passes in one frame, ns: on a real GPU what heat
/// costs the program's frame, as its next frame queues behind them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaintGpu {
    /// The work stencil cleared and each draw replayed into it, summed over the draws.
    pub replay_ns: u64,
    /// The weighting passes adding each draw's `c·T/N` to the maps.
    pub weight_ns: u64,
    /// Painted draws not timed (past the painter's budget of stamps, or a replay that
    /// failed).
    #[serde(default)]
    pub untimed: u64,
}

impl AgentTimes {
    /// The sum of the parts, ns.
    pub fn total_ns(&self) -> u64 {
        self.counters_ns + self.results_ns + self.paint_ns + self.maps_ns + self.geometry_ns
    }
}

/// A watched frame that crossed a trigger's threshold (`gpuheat attach --trigger`). Stored as
/// the `TRIG` chunk (JSON), right before the frames it kept: the watched frames
/// `kept_first..=kept_last` (timeline mode, the triggering one among them) and then the
/// `full_frames` frames from `full_first` on, captured in full mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerHit {
    /// 1 for the watch's first trigger, and so on.
    pub number: u32,
    /// The frame that crossed the threshold.
    pub frame: u64,
    /// The rule it crossed, as written (`frame-ms>20`).
    pub rule: String,
    /// What the frame measured, in nanoseconds.
    pub value_ns: u64,
    /// The first watched frame kept (timeline mode): the ring's oldest.
    pub kept_first: u64,
    /// The last watched frame kept: the triggering one, or a later one watched before the
    /// triggering frame's value was known (`gpu-ms`).
    pub kept_last: u64,
    /// The first frame captured in full mode after the trigger.
    pub full_first: u64,
    /// Frames asked for in full mode (fewer arrive when the watch is stopped among them).
    pub full_frames: u32,
}

impl TriggerHit {
    /// Whether `frame` is one of the watched (timeline-mode) frames this trigger kept.
    pub fn keeps_watched(&self, frame: u64) -> bool {
        (self.kept_first..=self.kept_last).contains(&frame)
    }

    /// Whether `frame` is one of the frames captured in full mode after this trigger.
    pub fn is_full(&self, frame: u64) -> bool {
        frame >= self.full_first && frame - self.full_first < u64::from(self.full_frames)
    }
}

/// How a watch went, sent about once a second while it runs and once at its end (the last
/// one has the totals). Stored as the `WTCH` chunk (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchStatus {
    /// Frames watched so far (timeline mode), kept or not.
    pub frames_watched: u64,
    /// Frames the ring holds now.
    pub ring_frames: u32,
    /// The most frames it holds.
    pub ring_capacity: u32,
    /// Bytes the ring holds now (encoded frames waiting for a trigger).
    pub ring_bytes: u64,
    /// The most bytes it holds: older frames leave first when a frame would pass it.
    pub ring_limit_bytes: u64,
    /// Triggers so far.
    pub triggers: u32,
}

/// What the agent hooked when `gpuheat attach` injected it, sent right after it connects,
/// before any frame: lets the CLI say what it is waiting on when no frame comes (e.g. no swap
/// entry point reached a wrapper). Stored as the `HOOK` chunk (JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookSummary {
    /// GOT slots redirected to wrappers (and to the agent's `dlopen`/`dlsym`).
    pub got_slots: u64,
    /// Modules whose relocations were examined.
    pub modules: u64,
    /// Dispatch-table entries redirected to wrappers.
    pub dispatch_entries: u64,
    /// Entry points whose code got an inline hook, e.g. `glXSwapBuffers`.
    pub inline: Vec<String>,
    /// Swap entry points (`eglSwapBuffers`, `glXSwapBuffers`, ...) whose real function is
    /// known, so the program's swaps through them reach the agent: a capture waits on these.
    pub swap_entry_points: Vec<String>,
    /// What was refused or left alone, and why.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The GL state a context was in when a capture started: what the program bound before the
/// first captured call, so that call can be understood without the frames before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextState {
    /// The context handle, as in [`ContextInfo::handle`].
    pub context: u64,
    /// The first captured frame.
    pub frame: u64,
    /// `GL_CURRENT_PROGRAM`.
    pub program: u32,
    /// `GL_VERTEX_ARRAY_BINDING`.
    pub vertex_array: u32,
    /// `GL_ARRAY_BUFFER_BINDING`.
    pub array_buffer: u32,
    /// `GL_ELEMENT_ARRAY_BUFFER_BINDING` (of the bound vertex array).
    pub element_array_buffer: u32,
    /// `GL_DRAW_FRAMEBUFFER_BINDING`.
    pub draw_framebuffer: u32,
    /// `GL_READ_FRAMEBUFFER_BINDING`.
    pub read_framebuffer: u32,
    /// x, y, width, height.
    pub viewport: [i32; 4],
    /// Size of the current draw surface (window or pbuffer), when the window system says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<[u32; 2]>,
    /// `GL_SAMPLES` of the default framebuffer (0: not multisampled). This and the fields
    /// below are `None` in sessions written before they were recorded, or when the context
    /// could not be asked without risk (GL or GLES before 3.0, functions missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    /// `GL_SAMPLE_BUFFERS` of the default framebuffer (0 or 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_buffers: Option<u32>,
    /// Depth bits of the default framebuffer (0: none), from its `GL_DEPTH` attachment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth_bits: Option<u32>,
    /// Stencil bits of the default framebuffer (0: none), from its `GL_STENCIL` attachment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stencil_bits: Option<u32>,
    /// `glIsEnabled(GL_DEPTH_TEST)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth_test: Option<bool>,
    /// `glIsEnabled(GL_BLEND)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blend: Option<bool>,
    /// `glIsEnabled(GL_CULL_FACE)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cull_face: Option<bool>,
    /// `GL_ACTIVE_TEXTURE`, as GL gives it (`GL_TEXTURE0 + unit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_texture: Option<u32>,
    /// The texture bound to `GL_TEXTURE_2D` on units 0, 1, … (index = unit; 0: none), for
    /// the first `min(GL_MAX_COMBINED_TEXTURE_IMAGE_UNITS, 16)` units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texture_2d: Option<Vec<u32>>,
}

/// Largest map a [`HeatMap`] may hold, in pixels (8192 × 8192); the cap keeps a damaged
/// record from asking for huge allocations.
pub const MAX_HEAT_PIXELS: u64 = 64 << 20;

/// The time and fragment coverage of one draw of a heat-mapped frame.
///
/// Stored as postcard inside [`HeatMap`]: field order is the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawCoverage {
    /// Index of the draw in its frame's [`Frame::calls`].
    pub call: u32,
    /// Fragments the draw produced over the whole map: `N_d = Σ_p c_d(p)`.
    pub fragments: u64,
    /// The draw's measured (serialized) time `T_d`, in ns.
    pub time_ns: u64,
    /// Bounding box of the pixels the draw covered: x0, y0, x1, y1 (x1, y1 exclusive), in GL
    /// window coordinates (origin bottom left).
    pub bbox: [u32; 4],
}

/// The thermal painting of one captured frame: where its GPU time went, pixel by pixel.
///
/// `heat(p) = Σ_d c_d(p) · T_d / N_d`, with `c_d(p)` the fragments draw `d` produced at pixel
/// `p`, `N_d` their sum and `T_d` the draw's measured time, so `Σ_p heat(p)` is the time of
/// the draws that produced fragments. Stored as postcard, like [`Frame`]: field order is the
/// format, and changing it needs a new chunk kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeatMap {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The context that rendered it, as in [`ContextInfo::handle`].
    pub context: u64,
    /// Width of the map in pixels (the frame's surface).
    pub width: u32,
    /// Height of the map in pixels.
    pub height: u32,
    /// Row-major, bottom row first (GL order), ns per pixel: `heat(p) = Σ_d c_d(p)·T_d/N_d`.
    pub heat: Vec<f32>,
    /// Fragments per pixel: `Σ_d c_d(p)`; same layout as `heat`.
    pub overdraw: Vec<u32>,
    /// The frame's colour buffer, RGBA8, bottom row first; empty when it could not be read.
    pub colour: Vec<u8>,
    /// The draws that make up the map.
    pub draws: Vec<DrawCoverage>,
}

impl HeatMap {
    /// Number of pixels, `width × height`.
    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// Checks that the buffers match the size: `heat` and `overdraw` hold `width × height`
    /// values, `colour` is empty or holds `4 × width × height` bytes, and the map is at most
    /// [`MAX_HEAT_PIXELS`]. Says what is wrong otherwise.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.pixels();
        if n > MAX_HEAT_PIXELS {
            return Err(format!(
                "heat map {}x{} exceeds {MAX_HEAT_PIXELS} pixels",
                self.width, self.height
            ));
        }
        if self.heat.len() as u64 != n {
            return Err(format!(
                "heat map {}x{} has {} heat values",
                self.width,
                self.height,
                self.heat.len()
            ));
        }
        if self.overdraw.len() as u64 != n {
            return Err(format!(
                "heat map {}x{} has {} overdraw values",
                self.width,
                self.height,
                self.overdraw.len()
            ));
        }
        if !self.colour.is_empty() && self.colour.len() as u64 != 4 * n {
            return Err(format!(
                "heat map {}x{} has {} colour bytes, expected 0 or {}",
                self.width,
                self.height,
                self.colour.len(),
                4 * n
            ));
        }
        Ok(())
    }
}

/// A colour attachment of an offscreen render target, as the draws found it bound.
///
/// Stored as postcard inside [`TargetHeat`]: variant and field order are the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Attachment {
    /// A texture image: its name, mipmap level and layer (array layer, 3D slice or cube face
    /// 0–5; 0 otherwise).
    Texture {
        /// The texture object's name.
        name: u32,
        /// Mipmap level.
        level: u32,
        /// Layer, slice or cube face.
        layer: u32,
    },
    /// A renderbuffer.
    Renderbuffer {
        /// The renderbuffer object's name.
        name: u32,
    },
}

impl Attachment {
    /// The texture's name, when this attachment is a texture image.
    pub fn texture(&self) -> Option<u32> {
        match *self {
            Attachment::Texture { name, .. } => Some(name),
            Attachment::Renderbuffer { .. } => None,
        }
    }

    /// How [`DrawFlow::sampled`] names what this attachment holds: a texture by its name, a
    /// renderbuffer by its name with [`SAMPLED_RENDERBUFFER`] set.
    pub fn flow_key(&self) -> u32 {
        match *self {
            Attachment::Texture { name, .. } => name,
            Attachment::Renderbuffer { name } => name | SAMPLED_RENDERBUFFER,
        }
    }
}

/// Set in a [`DrawFlow::sampled`] entry that names a renderbuffer (read by a blit or a copy)
/// rather than a texture. GL names are small counters in every driver seen; a renderbuffer
/// named 2³¹ or more would be read as another one (never seen, and only its flow is wrong).
pub const SAMPLED_RENDERBUFFER: u32 = 1 << 31;

/// The texture a [`DrawFlow::sampled`] entry names, `None` for a renderbuffer.
pub fn sampled_texture(key: u32) -> Option<u32> {
    (key & SAMPLED_RENDERBUFFER == 0).then_some(key)
}

/// An offscreen render target: the colour attachments a framebuffer object's draw buffers
/// wrote to. Draws with the same attachments are the same target, whichever framebuffer
/// object they were made with (programs often re-attach one framebuffer per pass).
///
/// Stored as postcard inside [`TargetHeat`]: field order is the format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderTarget {
    /// The agent's number for it, unique within its context for the whole capture and never
    /// 0 ([`DrawFlow::target`] uses 0 for the default framebuffer).
    pub id: u32,
    /// The framebuffer object the first draw into it was made with.
    pub framebuffer: u32,
    /// The colour attachments of its draw buffers, in draw-buffer order; a draw into several
    /// (MRT) counts once, for the target.
    pub attachments: Vec<Attachment>,
    /// Width in pixels (of the first attachment).
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Internal format of the first attachment, a GL enum (0 when unknown).
    pub format: u32,
}

/// The thermal painting of one offscreen render target in one frame: the same
/// `heat(p) = Σ_d c_d(p)·T_d/N_d` as [`HeatMap`], over the draws into this target only
/// ("own" cost). A context may send several for the same frame and target (one each time
/// it is switched away from); they add up.
///
/// Stored as postcard: field order is the format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetHeat {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The context that drew, as in [`ContextInfo::handle`].
    pub context: u64,
    /// Which target, and its size.
    pub target: RenderTarget,
    /// Row-major, bottom row first (GL order), ns per pixel; `width × height` values.
    pub heat: Vec<f32>,
    /// Fragments per pixel, same layout.
    pub overdraw: Vec<u32>,
    /// The draws that make up the map.
    pub draws: Vec<DrawCoverage>,
}

impl TargetHeat {
    /// Checks the buffers against the size, like [`HeatMap::validate`].
    pub fn validate(&self) -> Result<(), String> {
        let (w, h) = (self.target.width, self.target.height);
        let n = u64::from(w) * u64::from(h);
        if n > MAX_HEAT_PIXELS {
            return Err(format!(
                "target map {w}x{h} exceeds {MAX_HEAT_PIXELS} pixels"
            ));
        }
        if self.heat.len() as u64 != n || self.overdraw.len() as u64 != n {
            return Err(format!(
                "target map {w}x{h} has {} heat and {} overdraw values",
                self.heat.len(),
                self.overdraw.len()
            ));
        }
        Ok(())
    }
}

/// What one painted draw fed on: where it drew, the textures it could sample, and (when
/// it sampled a texture drawn in the same frame) how its fragments spread, so that the
/// producing passes' cost can flow to its pixels.
///
/// Stored as postcard inside [`FrameFlow`]: field order is the format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawFlow {
    /// Index of the draw in its frame's [`Frame::calls`].
    pub call: u32,
    /// Where it drew: 0 for the default framebuffer, else a [`RenderTarget::id`] of the same
    /// context.
    pub target: u32,
    /// Textures bound, at the draw, to the units its program's samplers read (names, shared
    /// by the contexts of a share group), without repeats; for a blit or a copy, what it
    /// reads, a renderbuffer as [`Attachment::flow_key`] names it.
    pub sampled: Vec<u32>,
    /// The draw's coverage box, as in [`DrawCoverage::bbox`].
    pub bbox: [u32; 4],
    /// `c_d(p)` inside `bbox`, row-major, bottom row first, saturating at 255; empty when not
    /// kept (see `note`).
    pub coverage: Vec<u8>,
    /// Why the coverage was not kept when the draw sampled a texture drawn this frame (a
    /// memory budget), or why its samplers could not be read; empty otherwise.
    pub note: String,
}

/// The flow records of one context in one frame: what each of its painted draws sampled.
/// Several may come for the same frame and context; they add up.
///
/// Stored as postcard: field order is the format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameFlow {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The context that drew, as in [`ContextInfo::handle`].
    pub context: u64,
    /// Its painted draws (to any target), in call order.
    pub draws: Vec<DrawFlow>,
}

impl FrameFlow {
    /// Checks each kept coverage against its box.
    pub fn validate(&self) -> Result<(), String> {
        for d in &self.draws {
            let [x0, y0, x1, y1] = d.bbox;
            if x1 < x0 || y1 < y0 {
                return Err(format!("call {}: inverted box {:?}", d.call, d.bbox));
            }
            let n = u64::from(x1 - x0) * u64::from(y1 - y0);
            if n > MAX_HEAT_PIXELS {
                return Err(format!("call {}: box {:?} too large", d.call, d.bbox));
            }
            if !d.coverage.is_empty() && d.coverage.len() as u64 != n {
                return Err(format!(
                    "call {}: {} coverage values for a box of {n} pixels",
                    d.call,
                    d.coverage.len()
                ));
            }
        }
        Ok(())
    }
}

/// A heat map that could not be made, and why: a frame never gets a silent empty map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeatMissing {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The context that rendered it, as in [`ContextInfo::handle`].
    pub context: u64,
    /// Why there is no map, in one line.
    pub reason: String,
}

/// Most vertices one [`FrameGeometry`] may hold (16 Mi, 256 MiB of positions); the cap keeps a
/// damaged record from asking for huge allocations. The agent's own bound is lower and is
/// recorded in [`FrameGeometry::vertex_budget`].
pub const MAX_GEOMETRY_VERTICES: u64 = 16 << 20;

/// The post-transform positions of one draw: what its vertex shader wrote to `gl_Position`.
///
/// Stored as postcard inside [`FrameGeometry`]: field order is the format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawGeometry {
    /// Index of the draw in its frame's [`Frame::calls`].
    pub call: u32,
    /// Primitive of `positions`, as a GL enum: `GL_POINTS` (0), `GL_LINES` (1) or
    /// `GL_TRIANGLES` (4). Strips, fans and loops arrive unrolled into these.
    pub primitive: u32,
    /// Clip-space x, y, z, w of each vertex, primitives unrolled (3 per triangle).
    pub positions: Vec<[f32; 4]>,
    /// Vertices the draw produced beyond what was kept (0 when `positions` is complete).
    pub dropped_vertices: u64,
    /// The viewport at the draw: x, y, width, height (clip → window coordinates).
    pub viewport: [i32; 4],
}

/// A draw of a geometry-captured frame whose positions could not be recorded, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeometryMissing {
    /// Index of the draw in its frame's [`Frame::calls`].
    pub call: u32,
    /// Why, in one line.
    pub reason: String,
}

/// The geometry of the draws of one captured frame (full mode).
///
/// Stored as postcard, like [`Frame`]: field order is the format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameGeometry {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The context that rendered it, as in [`ContextInfo::handle`].
    pub context: u64,
    /// Most vertices the agent keeps for one frame; draws past it are cut short
    /// ([`DrawGeometry::dropped_vertices`]) or listed in `missing`.
    pub vertex_budget: u64,
    /// The draws whose positions were recorded.
    pub draws: Vec<DrawGeometry>,
    /// The draws whose positions could not be recorded, and why.
    pub missing: Vec<GeometryMissing>,
}

impl FrameGeometry {
    /// Vertices held over all draws.
    pub fn vertices(&self) -> u64 {
        self.draws.iter().map(|d| d.positions.len() as u64).sum()
    }

    /// Checks the record against [`MAX_GEOMETRY_VERTICES`] and that every primitive is one
    /// of points, lines or triangles with a whole number of vertices.
    pub fn validate(&self) -> Result<(), String> {
        if self.vertices() > MAX_GEOMETRY_VERTICES {
            return Err(format!(
                "geometry of frame {} holds {} vertices, more than {MAX_GEOMETRY_VERTICES}",
                self.frame,
                self.vertices()
            ));
        }
        for d in &self.draws {
            let per = match d.primitive {
                0 => 1,
                1 => 2,
                4 => 3,
                p => return Err(format!("geometry of call {} has primitive {p:#x}", d.call)),
            };
            if d.positions.len() % per != 0 {
                return Err(format!(
                    "geometry of call {} has {} vertices, not a whole number of primitives",
                    d.call,
                    d.positions.len()
                ));
            }
        }
        Ok(())
    }
}

/// A program the agent saw link during the connection, named by what it runs: a hash of its
/// shaders' stages and sources ([`source_hash`]). The same shaders give the same hash in every
/// run, so draws can be matched across sessions by their program even when the GL names
/// differ. Stored as the `PROG` chunk (JSON); sent at most once per link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramInfo {
    /// The context that linked it, as in [`ContextInfo::handle`].
    pub context: u64,
    /// The program's GL name.
    pub program: u32,
    /// [`source_hash`] of the shaders attached when it linked.
    pub source_hash: u64,
    /// The shader stages (GL enums, e.g. `GL_VERTEX_SHADER`), in the order hashed.
    pub stages: Vec<u32>,
    /// The shaders' sources, in the order of `stages` (empty in sessions written before they
    /// were recorded), each cut to [`MAX_SHADER_SOURCE`] bytes and all together to
    /// [`MAX_PROGRAM_SOURCES`] by [`bounded_sources`]: a cut one ends with
    /// [`TRUNCATED_MARKER`]. `source_hash` is always of the whole sources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

/// Most bytes of one shader's source a [`ProgramInfo`] keeps (64 KiB).
pub const MAX_SHADER_SOURCE: usize = 64 << 10;

/// Most bytes of all a program's sources a [`ProgramInfo`] keeps (256 KiB): a program of
/// many large stages is cut, the later stages first.
pub const MAX_PROGRAM_SOURCES: usize = 256 << 10;

/// What ends a source [`bounded_sources`] cut (a GLSL comment on a line of its own), before
/// the number of bytes the whole source had.
pub const TRUNCATED_MARKER: &str = "\n// gpuheat: source truncated, whole length ";

/// The sources as a [`ProgramInfo`] keeps them: each lossily decoded as UTF-8 and cut (on a
/// character boundary, the cut marked with [`TRUNCATED_MARKER`] and the whole length) so
/// that none exceeds [`MAX_SHADER_SOURCE`] and all together not [`MAX_PROGRAM_SOURCES`]
/// bytes (past that, a source left no room keeps only its marker, a few dozen bytes).
pub fn bounded_sources<'a>(sources: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
    let mut left = MAX_PROGRAM_SOURCES;
    sources
        .into_iter()
        .map(|bytes| {
            let text = String::from_utf8_lossy(bytes);
            let room = left.min(MAX_SHADER_SOURCE);
            let kept = if text.len() <= room {
                text.into_owned()
            } else {
                let marker = format!("{TRUNCATED_MARKER}{} bytes\n", bytes.len());
                let mut cut = room.saturating_sub(marker.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                let mut kept = text[..cut].to_string();
                kept.push_str(&marker);
                kept
            };
            left = left.saturating_sub(kept.len());
            kept
        })
        .collect()
}

/// Most bytes of client memory the agent hashes in one frame, over all its uploads (64 MiB):
/// later uploads of the frame get their size and [`Unhashed::FrameBudget`].
pub const UPLOAD_FRAME_BUDGET: u64 = 64 << 20;

/// Most bytes the agent hashes for one upload (256 MiB, a chunk's cap): a larger one gets
/// [`Unhashed::TooLarge`].
pub const MAX_UPLOAD_HASHED: u64 = 256 << 20;

/// Why an [`Upload`] has no content hash.
///
/// Stored as postcard inside [`FrameUploads`]: variant order is the format (new variants go
/// last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Unhashed {
    /// A texture upload with a `GL_PIXEL_UNPACK_BUFFER` bound: the pointer is an offset into
    /// that buffer, and the bytes are GL's, not the program's.
    UnpackBuffer,
    /// The data pointer was null: storage only (`glTexImage*`), or a buffer's contents left
    /// undefined (`glBufferData`).
    NullData,
    /// The frame's hashing budget ([`UPLOAD_FRAME_BUDGET`]) was spent by earlier uploads.
    FrameBudget,
    /// Larger than [`MAX_UPLOAD_HASHED`] on its own.
    TooLarge,
    /// The size could not be computed: a format/type pair the agent has no size for, a
    /// negative or overflowing size, or unpack state it could not read; `bytes` is then 0.
    UnknownSize,
}

/// One call of a captured frame that copied client memory into GL: `glTexImage*`,
/// `glTexSubImage*`, `glCompressedTex(Sub)Image*`, `glBufferData`, `glBufferSubData`,
/// `glBufferStorage` and their DSA, EXT, OES and ARB forms.
///
/// Stored as postcard inside [`FrameUploads`]: field order is the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upload {
    /// Index of the call in its frame's [`Frame::calls`].
    pub call: u32,
    /// Bytes of pixels or data the call reads: for a texture, `width × height × depth` pixel
    /// groups of the format and type's size (row padding and the unpack skips not counted),
    /// for a compressed one its `imageSize`, for a buffer its `size`.
    pub bytes: u64,
    /// XXH3-64 (seed 0) of those bytes, read row after row (image after image) as the
    /// unpack state (alignment, row length, image height, skips) lays them out in memory;
    /// for buffers and compressed images, the `bytes` from the pointer on.
    pub hash: Option<u64>,
    /// Why there is no hash (`Some` exactly when `hash` is `None`).
    pub unhashed: Option<Unhashed>,
}

/// The uploads of one captured frame, all threads and contexts of the process together, in
/// call order. Sent only for frames with uploads.
///
/// Stored as postcard (`UPLD`): field order is the format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameUploads {
    /// The frame, as in [`Frame::index`].
    pub frame: u64,
    /// The frame's uploads, in call order.
    pub uploads: Vec<Upload>,
}

impl FrameUploads {
    /// Checks that each upload has a hash or a reason, not both, and that calls are in order.
    pub fn validate(&self) -> Result<(), String> {
        for u in &self.uploads {
            if u.hash.is_some() == u.unhashed.is_some() {
                return Err(format!(
                    "upload at call {} has {} hash and {} reason",
                    u.call,
                    if u.hash.is_some() { "a" } else { "no" },
                    if u.unhashed.is_some() { "a" } else { "no" },
                ));
            }
        }
        if !self.uploads.is_sorted_by_key(|u| u.call) {
            return Err(format!("uploads of frame {} out of call order", self.frame));
        }
        Ok(())
    }

    /// Uploads left without a hash because the frame's budget was spent.
    pub fn over_budget(&self) -> usize {
        self.uploads
            .iter()
            .filter(|u| u.unhashed == Some(Unhashed::FrameBudget))
            .count()
    }
}

/// FNV-1a (64 bit) over each shader's stage (u32, little endian), source length (u64, little
/// endian) and source bytes, in the order given. Stable across runs, builds and machines: the
/// agent and the inspector both name programs with it.
pub fn source_hash<'a>(shaders: impl IntoIterator<Item = (u32, &'a [u8])>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    for (stage, source) in shaders {
        eat(&stage.to_le_bytes());
        eat(&(source.len() as u64).to_le_bytes());
        eat(source);
    }
    h
}

/// Everything a chunk can hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// Who was captured, how, and when.
    Info(SessionInfo),
    /// The entry points calls refer to.
    Functions(FunctionTable),
    /// A context, the first time it was current.
    Context(ContextInfo),
    /// The process's modules.
    Modules(ModuleMap),
    /// One captured frame.
    Frame(Frame),
    /// Pipelined times of a frame.
    Pipelined(PipelinedBatch),
    /// How the capture ended.
    End(EndInfo),
    /// How `gpuheat attach` got in.
    Attach(AttachInfo),
    /// A context's state at the capture's start.
    State(ContextState),
    /// A frame's heat map.
    Heat(HeatMap),
    /// Why a frame has no heat map.
    HeatMissing(HeatMissing),
    /// The geometry of a frame's draws.
    Geometry(FrameGeometry),
    /// What an attached agent hooked, sent right after it connects.
    Hooks(HookSummary),
    /// A program the agent saw link, named by its sources' hash.
    Program(ProgramInfo),
    /// An offscreen render target's own heat in a frame.
    TargetHeat(TargetHeat),
    /// What a frame's painted draws sampled.
    Flow(FrameFlow),
    /// A VG call with children or coverage (`VGCL`).
    VgCall(crate::vg::VgCall),
    /// The data of a VG path (`VGPT`).
    VgPath(crate::vg::VgPath),
    /// The uploads of a captured frame, with their sizes and content hashes (`UPLD`).
    Uploads(FrameUploads),
    /// A captured frame the agent's own first-time work made unsteady (`WARM`).
    WarmUp(WarmUp),
    /// What the agent cost in a captured frame (`AGNT`).
    AgentFrame(AgentFrame),
    /// A watched frame that crossed a trigger's threshold (`TRIG`).
    Trigger(TriggerHit),
    /// How a watch goes (`WTCH`).
    Watch(WatchStatus),
    /// A Vulkan render pass object a captured frame began (`VKRP`).
    VkRenderPass(crate::vulkan::VkRenderPass),
    /// What the Vulkan layer saw of a captured frame beyond its calls (`VKFR`).
    VkFrame(crate::vulkan::VkFrame),
    /// Counter values of a frame's calls that landed after it was sent (`LATE`).
    LateSamples(LateSamples),
}

impl Record {
    /// The frame a record is about (its [`Frame::index`]), for the records sent about one
    /// frame; `None` for the others (INFO, FUNC, CTX, MODS, PROG, END, watch status …).
    pub fn frame(&self) -> Option<u64> {
        Some(match self {
            Record::Frame(f) => f.index,
            Record::Pipelined(b) => b.frame,
            Record::Heat(h) => h.frame,
            Record::HeatMissing(h) => h.frame,
            Record::TargetHeat(t) => t.frame,
            Record::Flow(f) => f.frame,
            Record::Geometry(g) => g.frame,
            Record::VgCall(c) => c.frame,
            Record::Uploads(u) => u.frame,
            Record::State(s) => s.frame,
            Record::WarmUp(w) => w.frame,
            Record::AgentFrame(a) => a.frame,
            Record::VkFrame(v) => v.frame,
            Record::LateSamples(v) => v.frame,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::source_hash;

    #[test]
    fn source_hash_is_fnv1a_of_stage_length_and_source() {
        // FNV-1a 64 of no bytes is its offset basis; of "a" it is the published test vector.
        assert_eq!(source_hash([]), 0xcbf2_9ce4_8422_2325);
        let one = source_hash([(0x8B31, &b"a"[..])]);
        let mut bytes = 0x8B31u32.to_le_bytes().to_vec();
        bytes.extend(1u64.to_le_bytes());
        bytes.push(b'a');
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(one, h);
        // Order and stage matter: a vertex and a fragment shader swapped are another program.
        let vs = (0x8B31, &b"v"[..]);
        let fs = (0x8B30, &b"f"[..]);
        assert_ne!(source_hash([vs, fs]), source_hash([fs, vs]));
    }
}
