//! Per-context counter state: what a context can measure, and the bracket taken around each
//! work call.
//!
//! Invisibility rules kept here: `glGetError` is never called (and never loaded); nothing is
//! called that could raise a GL error (every target and entry point is checked against the
//! context's version and extensions first, and a query target the program has active is
//! skipped); the `GL_QUERY_BUFFER` binding is set to 0 around read-backs and restored;
//! `glEndQuery` is only called for queries begun here; `GL_GPU_DISJOINT_EXT`, which clears on
//! read, is handed back to the program through [`ContextCounters::program_read_disjoint`].

use std::collections::{HashSet, VecDeque};

use gpuheat_session::{
    CaptureMode, ClientApi, ContextInfo, CounterInfo, CounterValue, PipelinedBatch, PipelinedTime,
};

use crate::catalogue::{self, CounterKind, COUNTERS};
use crate::gl::{self, GLuint, GlFns};
use crate::state::Unbound;

/// Default cap on the timestamp query objects one context may hold.
pub const DEFAULT_TIMESTAMP_CAP: usize = 65_536;

/// Empty brackets timed to calibrate the serialized overhead (after a few warm-up ones).
const CALIBRATION_RUNS: usize = 50;
const CALIBRATION_WARMUP: usize = 5;

/// The query entry points a context may call (core or `EXT`, chosen by API and version).
#[derive(Debug, Clone, Copy)]
struct QueryFns {
    gen: gl::GenQueriesFn,
    delete: gl::DeleteQueriesFn,
    begin: gl::BeginQueryFn,
    end: gl::EndQueryFn,
    get_iv: gl::GetQueryivFn,
    get_uiv: gl::GetQueryObjectuivFn,
    /// 64-bit result read-back, when the context has it.
    get_ui64: Option<gl::GetQueryObjectui64vFn>,
}

/// Timestamp entry points plus the width of the counter.
#[derive(Debug, Clone, Copy)]
struct TimerFns {
    counter: gl::QueryCounterFn,
    get_ui64: gl::GetQueryObjectui64vFn,
    /// Mask of the valid timestamp bits (differences wrap modulo this).
    mask: u64,
}

/// One bracketed call whose timestamps are still on the GPU.
#[derive(Debug, Clone, Copy)]
struct Pending {
    frame: u64,
    call: u32,
    before: GLuint,
    after: GLuint,
    disjoint: bool,
}

/// A work call timed deferred whose results are still on the GPU: read by
/// [`ContextCounters::resolve`] at its frame's end.
#[derive(Debug, Clone, Copy)]
struct PendingCall {
    frame: u64,
    call: u32,
    timestamps: Option<(GLuint, GLuint)>,
    /// Catalogue indices (as bits) of the queries begun, and their objects.
    begun: u32,
    ids: [GLuint; COUNTERS.len()],
}

/// The counter values of a call timed deferred, known at its frame's end.
#[derive(Debug, Clone, PartialEq)]
pub struct LateValues {
    /// The call's frame and place in it.
    pub frame: u64,
    pub call: u32,
    /// In catalogue order, as [`ContextCounters::end`] would have returned them.
    pub values: Vec<CounterValue>,
}

/// What [`ContextCounters::resolve`] read.
#[derive(Debug, Default)]
pub struct Resolved {
    pub values: Vec<LateValues>,
    pub pipelined: Vec<PipelinedBatch>,
}

/// The samples taken before a work call, handed back to [`ContextCounters::end`] after it.
///
/// Every `Bracket` must be passed to `end` on the same context, with no other bracket begun in
/// between: queries are active while it lives.
#[derive(Debug)]
#[must_use = "a Bracket must be passed to ContextCounters::end (queries are active)"]
pub struct Bracket {
    mode: CaptureMode,
    /// Timestamp query pair (before, after), when one could be allocated.
    timestamps: Option<(GLuint, GLuint)>,
    /// Catalogue indices (as bits) of the queries begun.
    begun: u32,
    /// CLOCK_MONOTONIC when the call was about to be made (Full mode, isolated).
    start_ns: u64,
    /// Timed deferred: no drain, the queries' objects (`ids`) are the call's own.
    deferred: bool,
    ids: [GLuint; COUNTERS.len()],
}

/// Counter state of one GL/GLES context: its capabilities, its query objects and the pending
/// pipelined timestamps. Create it with [`ContextCounters::new`] while the context is current,
/// and only use it while that same context is current.
#[derive(Debug)]
pub struct ContextCounters {
    handle: u64,
    api: ClientApi,
    major: u32,
    minor: u32,
    vendor: String,
    renderer: String,
    version: String,
    extensions: HashSet<String>,
    counters: Vec<CounterInfo>,
    pipelined_meaningful: bool,
    pipelined_note: String,
    overhead_ns: u64,

    queries: Option<QueryFns>,
    timer: Option<TimerFns>,
    /// `GL_QUERY_BUFFER` exists (GL 4.4 / ARB_query_buffer_object): unbind around reads.
    query_buffer: bool,
    bind_buffer: Option<gl::BindFn>,
    /// `GL_GPU_DISJOINT_EXT` can be read.
    disjoint_ext: bool,

    /// Catalogue indices (as bits) of the begin/end queries this context can run.
    usable: u32,
    /// One query object per catalogue index, read back right after each call (0: not made).
    immediate: [GLuint; COUNTERS.len()],
    /// Free query objects per catalogue index for calls timed deferred (an object keeps the
    /// target it was first begun on), and how many were made.
    deferred_free: [Vec<GLuint>; COUNTERS.len()],
    deferred_allocated: usize,
    /// Calls timed deferred, in call order, waiting for [`ContextCounters::resolve`].
    deferred: VecDeque<PendingCall>,
    /// Program-active query targets, as bits (see `target_bit`).
    program_active: u32,

    free: Vec<GLuint>,
    allocated: usize,
    cap: usize,
    pending: VecDeque<Pending>,
    missed: u64,
    /// We read GL_GPU_DISJOINT_EXT as true (clearing it): the program must still see it.
    disjoint_for_program: bool,
}

/// Bit of a query target in `program_active`: the three occlusion targets, then the pipeline
/// statistics targets in catalogue order.
fn target_bit(target: u32) -> Option<u32> {
    match target {
        gl::SAMPLES_PASSED => Some(0),
        gl::ANY_SAMPLES_PASSED => Some(1),
        gl::ANY_SAMPLES_PASSED_CONSERVATIVE => Some(2),
        _ => {
            let stats = &COUNTERS[catalogue::FIRST_PIPELINE_STATISTIC as usize..]
                [..catalogue::PIPELINE_STATISTICS_COUNT];
            stats
                .iter()
                .position(|c| c.target == Some(target))
                .map(|i| 3 + i as u32)
        }
    }
}

const OCCLUSION_BITS: u32 = 0b111;

/// Whether replaying a draw (the painter's, the geometry capture's) while the program has a
/// query of `target` active would change the query's result: every counting query does
/// (samples, primitives, pipeline statistics). A time-elapsed query only measures longer, as
/// every bracket of full mode already makes it: mpv wraps each of its passes in one, and
/// treating those like counting queries left its heat map empty.
pub fn replay_changes_query(target: u32) -> bool {
    target != gl::TIME_ELAPSED && target != gl::TIMESTAMP
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Parses a `GL_VERSION` string: `"4.5 (Core Profile) Mesa 22.3.6"`,
/// `"OpenGL ES 3.2 Mesa 22.3.6"`, `"OpenGL ES-CM 1.1"`. Returns the API and major.minor
/// (0.0 when no number is found).
pub fn parse_version(version: &str) -> (ClientApi, u32, u32) {
    let (api, rest) = match version.strip_prefix("OpenGL ES") {
        Some(rest) => (ClientApi::Gles, rest),
        None => (ClientApi::Gl, version),
    };
    let start = rest
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(rest.len());
    let mut nums = rest[start..]
        .split(|c: char| !c.is_ascii_digit())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    let major = nums.next().unwrap_or(0);
    let minor = nums.next().unwrap_or(0);
    (api, major, minor)
}

/// Why pipelined per-call time does not measure a call's own cost on this renderer, or `None`
/// when it does (an immediate-mode GPU). Recognises software rasterizers (llvmpipe, softpipe,
/// swr, SwiftShader, Mesa's swrast) and tile-based GPUs (Mali, Adreno, PowerVR, Apple,
/// Vivante, VideoCore V3D/VC4, and the Lima, Panfrost, Freedreno and Asahi drivers).
pub fn pipelined_caveat(vendor: &str, renderer: &str) -> Option<String> {
    if let Some(name) = software_rasterizer(renderer) {
        return Some(software_note(name));
    }
    let lower = renderer.to_ascii_lowercase();
    let has = |key: &str| has_token(&lower, key);
    const TILED: &[(&str, &str)] = &[
        ("mali", "Mali"),
        ("panfrost", "Mali (Panfrost)"),
        ("lima", "Mali (Lima)"),
        ("adreno", "Adreno"),
        ("freedreno", "Adreno (Freedreno)"),
        ("fd", "Adreno (Freedreno)"),
        ("powervr", "PowerVR"),
        ("apple", "Apple"),
        ("agx", "Apple"),
        ("asahi", "Apple (Asahi)"),
        ("vivante", "Vivante"),
        ("etnaviv", "Vivante (etnaviv)"),
        ("v3d", "VideoCore (V3D)"),
        ("vc4", "VideoCore (VC4)"),
        ("videocore", "VideoCore"),
    ];
    for &(key, name) in TILED {
        if has(key) {
            return Some(tiled_note(name));
        }
    }
    let vendor = vendor.to_ascii_lowercase();
    const TILED_VENDORS: &[(&str, &str)] = &[
        ("arm", "Mali"),
        ("qualcomm", "Adreno"),
        ("imagination", "PowerVR"),
        ("broadcom", "VideoCore"),
        ("vivante", "Vivante"),
        ("apple", "Apple"),
    ];
    for &(key, name) in TILED_VENDORS {
        if vendor
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|t| t == key)
        {
            return Some(tiled_note(name));
        }
    }
    None
}

/// Whether `lower` (a lower-case renderer string) has a token equal to `key`, or `key`
/// followed by digits only ("mali400", "fd307").
fn has_token(lower: &str, key: &str) -> bool {
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .any(|t| {
            t.strip_prefix(key)
                .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
        })
}

/// The software rasterizer `renderer` names (llvmpipe, softpipe, swr, SwiftShader, Mesa's
/// swrast), or `None` for hardware.
pub fn software_rasterizer(renderer: &str) -> Option<&'static str> {
    let lower = renderer.to_ascii_lowercase();
    const SOFTWARE: &[(&str, &str)] = &[
        ("llvmpipe", "llvmpipe"),
        ("softpipe", "softpipe"),
        ("swr", "OpenSWR"),
        ("openswr", "OpenSWR"),
        ("swiftshader", "SwiftShader"),
    ];
    SOFTWARE
        .iter()
        .find(|(key, _)| has_token(&lower, key))
        .map(|&(_, name)| name)
        .or_else(|| {
            lower
                .contains("software rasterizer")
                .then_some("Mesa's software rasterizer")
        })
}

fn software_note(name: &str) -> String {
    format!(
        "{name} is a software rasterizer that defers rasterization until the pipeline is \
         flushed: pipelined timestamps do not measure a call's own cost (small draws read 0); \
         use gpu_time_serialized"
    )
}

fn tiled_note(name: &str) -> String {
    format!(
        "{name} is a tile-based GPU: the fragment work of a render pass runs after all its \
         draws are submitted, so pipelined timestamps do not measure a draw's own cost; use \
         gpu_time_serialized"
    )
}

impl Bracket {
    /// Whether the call is timed deferred: nothing waited for the GPU around it.
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// The call's timestamp query pair (before, after), when it has one: a deferred call's
    /// time, for heat weighted on the GPU ([`crate::weights`]). The objects stay the call's
    /// until its frame's [`ContextCounters::resolve`].
    pub fn timestamps(&self) -> Option<(GLuint, GLuint)> {
        self.timestamps
    }
}

impl ContextCounters {
    /// Inspects the current context (API, version, extensions, renderer), decides which
    /// counters it can measure and why not, and calibrates the serialized bracket overhead
    /// (median of 50 empty brackets). Takes a few milliseconds.
    ///
    /// # Safety
    /// The context must be current on this thread, and `gl` loaded for this process.
    pub unsafe fn new(gl: &GlFns, handle: u64) -> ContextCounters {
        // SAFETY: the context is current (our caller's promise), and each GL call of this
        // function is one the context's version and extensions were checked to have (the
        // three strings and GL_EXTENSIONS exist in every version).
        let vendor = unsafe { gl.string(gl::VENDOR) };
        // SAFETY: as above.
        let renderer = unsafe { gl.string(gl::RENDERER) };
        // SAFETY: as above.
        let version = unsafe { gl.string(gl::VERSION) };
        let (api, major, minor) = parse_version(&version);
        let ver = |maj: u32, min: u32| (major, minor) >= (maj, min);
        let is_gl = api == ClientApi::Gl;

        let mut extensions = HashSet::new();
        match gl.get_stringi {
            Some(get_stringi) if ver(3, 0) => {
                // SAFETY: as above (GL_NUM_EXTENSIONS and glGetStringi exist from 3.0).
                let n = unsafe { gl.integer(gl::NUM_EXTENSIONS) }.max(0) as u32;
                for i in 0..n {
                    // SAFETY: as above; `i` is below GL_NUM_EXTENSIONS.
                    let s = gl::cstr_to_string(unsafe { get_stringi(gl::EXTENSIONS, i) });
                    if !s.is_empty() {
                        extensions.insert(s);
                    }
                }
            }
            _ => {
                // SAFETY: as above.
                let all = unsafe { gl.string(gl::EXTENSIONS) };
                extensions.extend(all.split_whitespace().map(str::to_owned));
            }
        }
        let has = |e: &str| extensions.contains(e);

        // Query entry points.
        let core_queries = (is_gl && ver(1, 5)) || (!is_gl && ver(3, 0));
        let ext_queries = !is_gl
            && !ver(3, 0)
            && ver(2, 0)
            && (has("GL_EXT_disjoint_timer_query") || has("GL_EXT_occlusion_query_boolean"));
        let ui64_core = is_gl && (ver(3, 3) || has("GL_ARB_timer_query"));
        let ui64_ext = !is_gl && has("GL_EXT_disjoint_timer_query");
        let get_ui64 = if ui64_core {
            gl.get_query_objectui64v
        } else if ui64_ext {
            gl.get_query_objectui64v_ext
        } else {
            None
        };
        let pick = |core: bool, ext: bool| -> Option<QueryFns> {
            if core {
                Some(QueryFns {
                    gen: gl.gen_queries?,
                    delete: gl.delete_queries?,
                    begin: gl.begin_query?,
                    end: gl.end_query?,
                    get_iv: gl.get_queryiv?,
                    get_uiv: gl.get_query_objectuiv?,
                    get_ui64,
                })
            } else if ext {
                Some(QueryFns {
                    gen: gl.gen_queries_ext?,
                    delete: gl.delete_queries_ext?,
                    begin: gl.begin_query_ext?,
                    end: gl.end_query_ext?,
                    get_iv: gl.get_queryiv_ext?,
                    get_uiv: gl.get_query_objectuiv_ext?,
                    get_ui64,
                })
            } else {
                None
            }
        };
        let query_buffer = is_gl && (ver(4, 4) || has("GL_ARB_query_buffer_object"));
        // Reading a result with a query buffer bound would write into the program's buffer:
        // without glBindBuffer to unbind it, read nothing.
        let mut queries = pick(core_queries, ext_queries);
        if query_buffer && gl.bind_buffer.is_none() {
            queries = None;
        }
        let no_queries_reason = if query_buffer && gl.bind_buffer.is_none() {
            "glBindBuffer is missing (needed to unbind GL_QUERY_BUFFER)".to_string()
        } else if is_gl {
            format!("GL {major}.{minor}: no query objects (GL < 1.5)")
        } else {
            format!("GLES {major}.{minor}: no query objects")
        };

        // Timestamps.
        let mut timer = None;
        let timer_reason: Option<String>;
        let timer_supported = if is_gl {
            ui64_core && gl.query_counter.is_some()
        } else {
            ui64_ext && gl.query_counter_ext.is_some()
        };
        match queries {
            None => timer_reason = Some(no_queries_reason.clone()),
            Some(_) if !timer_supported => {
                timer_reason = Some(if is_gl {
                    format!("no GL_ARB_timer_query (GL {major}.{minor} < 3.3)")
                } else {
                    "no GL_EXT_disjoint_timer_query".to_string()
                })
            }
            Some(q) => {
                let mut bits = 0;
                // SAFETY: as above: the context has timer queries (`timer_supported`).
                unsafe { (q.get_iv)(gl::TIMESTAMP, gl::QUERY_COUNTER_BITS, &mut bits) };
                let counter = if is_gl {
                    gl.query_counter
                } else {
                    gl.query_counter_ext
                };
                match (bits, counter, get_ui64) {
                    (b, Some(counter), Some(get_ui64)) if b > 0 => {
                        timer = Some(TimerFns {
                            counter,
                            get_ui64,
                            mask: crate::timestamp_mask(b as u32),
                        });
                        timer_reason = None;
                    }
                    _ => timer_reason = Some("the driver's timestamp counter has 0 bits".into()),
                }
            }
        }

        // Begin/end queries: samples passed and pipeline statistics.
        let stats_supported = is_gl && (ver(4, 6) || has("GL_ARB_pipeline_statistics_query"));
        let mut counters = Vec::with_capacity(COUNTERS.len());
        let mut usable = 0u32;
        for (i, def) in COUNTERS.iter().enumerate() {
            let reason: Option<String> = match def.kind {
                CounterKind::Serialized | CounterKind::Agent => None,
                CounterKind::Timestamp => timer_reason.clone(),
                CounterKind::Query if queries.is_none() => Some(no_queries_reason.clone()),
                CounterKind::Query if i == catalogue::SAMPLES_PASSED as usize => {
                    if is_gl {
                        None
                    } else {
                        Some(
                            "GLES context: no GL_SAMPLES_PASSED query (GLES has only boolean \
                             occlusion queries)"
                                .into(),
                        )
                    }
                }
                CounterKind::Query if !is_gl => {
                    Some("GLES context: no pipeline statistics query".into())
                }
                CounterKind::Query if !stats_supported => Some(format!(
                    "no GL_ARB_pipeline_statistics_query (GL {major}.{minor})"
                )),
                CounterKind::Query => match i as u16 {
                    catalogue::TESS_CONTROL_SHADER_PATCHES
                    | catalogue::TESS_EVALUATION_SHADER_INVOCATIONS
                        if !(ver(4, 0) || has("GL_ARB_tessellation_shader")) =>
                    {
                        Some("no tessellation shaders (GL < 4.0)".into())
                    }
                    catalogue::GEOMETRY_SHADER_INVOCATIONS
                    | catalogue::GEOMETRY_SHADER_PRIMITIVES_EMITTED
                        if !ver(3, 2) =>
                    {
                        Some("no geometry shaders (GL < 3.2)".into())
                    }
                    catalogue::COMPUTE_SHADER_INVOCATIONS
                        if !(ver(4, 3) || has("GL_ARB_compute_shader")) =>
                    {
                        Some("no compute shaders (GL < 4.3)".into())
                    }
                    _ => None,
                },
            };
            if def.kind == CounterKind::Query && reason.is_none() {
                usable |= 1 << i;
            }
            counters.push(CounterInfo {
                name: def.name.to_string(),
                unit: def.unit.to_string(),
                description: def.description.to_string(),
                available: reason.is_none(),
                unavailable_reason: reason,
            });
        }

        let (pipelined_meaningful, pipelined_note) =
            match (&timer_reason, pipelined_caveat(&vendor, &renderer)) {
                (Some(why), _) => (false, format!("no pipelined timing: {why}")),
                (None, Some(why)) => (false, why),
                (None, None) => (
                    true,
                    format!(
                        "{renderer} renders each draw as it is submitted: pipelined timestamps \
                     bracket a draw's own work (blurred by overlap between neighbouring draws)"
                    ),
                ),
            };

        let mut cc = ContextCounters {
            handle,
            api,
            major,
            minor,
            vendor,
            renderer,
            version,
            disjoint_ext: !is_gl && has("GL_EXT_disjoint_timer_query"),
            extensions,
            counters,
            pipelined_meaningful,
            pipelined_note,
            overhead_ns: 0,
            queries,
            timer,
            query_buffer,
            bind_buffer: gl.bind_buffer,
            usable,
            immediate: [0; COUNTERS.len()],
            deferred_free: std::array::from_fn(|_| Vec::new()),
            deferred_allocated: 0,
            deferred: VecDeque::new(),
            program_active: 0,
            free: Vec::new(),
            allocated: 0,
            cap: DEFAULT_TIMESTAMP_CAP,
            pending: VecDeque::with_capacity(1024),
            missed: 0,
            disjoint_for_program: false,
        };
        // SAFETY: the context is current (our caller's promise) and `cc` describes it.
        unsafe {
            cc.seed_program_active();
            cc.overhead_ns = cc.calibrate(gl);
        }
        cc
    }

    /// Learns which of our targets the program already has active (it may have begun a query
    /// before gpuheat attached). Only targets the context supports are asked about.
    unsafe fn seed_program_active(&mut self) {
        let Some(q) = self.queries else { return };
        let ver = |maj: u32, min: u32| (self.major, self.minor) >= (maj, min);
        let mut targets: Vec<u32> = Vec::new();
        if self.usable & (1 << catalogue::SAMPLES_PASSED) != 0 {
            targets.push(gl::SAMPLES_PASSED);
            if ver(3, 3) || self.has_extension("GL_ARB_occlusion_query2") {
                targets.push(gl::ANY_SAMPLES_PASSED);
            }
            if ver(4, 3) || self.has_extension("GL_ARB_ES3_compatibility") {
                targets.push(gl::ANY_SAMPLES_PASSED_CONSERVATIVE);
            }
        }
        for (i, def) in COUNTERS.iter().enumerate() {
            if i != catalogue::SAMPLES_PASSED as usize && self.usable & (1 << i) != 0 {
                targets.extend(def.target);
            }
        }
        for target in targets {
            let mut id = 0;
            // SAFETY: the context is current (our caller's promise) and has `target`.
            unsafe { (q.get_iv)(target, gl::CURRENT_QUERY, &mut id) };
            self.note_program_query(target, id != 0);
        }
    }

    /// Median raw cost of an empty Full bracket.
    unsafe fn calibrate(&mut self, gl: &GlFns) -> u64 {
        let mut runs = Vec::with_capacity(CALIBRATION_RUNS);
        for i in 0..CALIBRATION_WARMUP + CALIBRATION_RUNS {
            // SAFETY: the context is current (our caller's promise); no bracket is open.
            let bracket = unsafe { self.begin(gl, CaptureMode::Full, false, 0) };
            let timestamps = bracket.timestamps;
            // SAFETY: as above; `bracket` is the one just begun.
            let elapsed = unsafe { self.close(gl, &bracket) };
            if let Some((a, b)) = timestamps {
                // Finished and never read: the objects can be written again.
                self.free.push(a);
                self.free.push(b);
            }
            if i >= CALIBRATION_WARMUP {
                runs.push(elapsed);
            }
        }
        runs.sort_unstable();
        runs[runs.len() / 2]
    }

    /// Whether `deferred` timing can be had here: timestamps and query objects.
    pub fn can_defer(&self) -> bool {
        self.timer.is_some() && self.queries.is_some()
    }

    /// Whether this renderer's pipelined timestamps bracket a call's own work.
    pub fn pipelined_meaningful(&self) -> bool {
        self.pipelined_meaningful
    }

    /// Whether the renderer is a software rasterizer ([`software_rasterizer`]).
    pub fn software(&self) -> bool {
        software_rasterizer(&self.renderer).is_some()
    }

    /// Takes the "before" samples of a work call; call [`ContextCounters::end`] right after
    /// the call. Full mode, isolated: `glFinish` (drains earlier work, untimed), begins
    /// samples-passed and the pipeline-statistics queries (except targets the program has
    /// active), writes the "before" timestamp and reads CLOCK_MONOTONIC last. Full mode,
    /// `deferred` (honoured where [`ContextCounters::can_defer`]): the same queries on objects
    /// of the call's own and the timestamp, no drain; the values come from
    /// [`ContextCounters::resolve`]. Timeline mode: only the timestamp. The query counters
    /// whose catalogue bits `idle` sets are left out: the call cannot move them
    /// ([`crate::stages::idle_counters`]).
    ///
    /// # Safety
    /// This context must be current on this thread, and no other bracket of it open.
    pub unsafe fn begin(
        &mut self,
        gl: &GlFns,
        mode: CaptureMode,
        deferred: bool,
        idle: u32,
    ) -> Bracket {
        // SAFETY: our caller's promise, passed on.
        crate::waits::timed(crate::waits::Phase::Counters, || unsafe {
            self.begin_timed(gl, mode, deferred, idle)
        })
    }

    /// Whether this context counts any pipeline statistic (desktop GL 3.0+ with
    /// `GL_ARB_pipeline_statistics_query`).
    pub fn has_statistics(&self) -> bool {
        self.usable & catalogue::PIPELINE_STATISTICS_MASK != 0
    }

    /// The optional stages whose pipeline statistics this context counts (the ones
    /// [`crate::stages::StageCache::current`] is worth asking about).
    pub fn counted_stages(&self) -> crate::stages::Stages {
        crate::stages::Stages::counted_in(self.usable)
    }

    /// Whether the context has separable program pipelines (GL 4.1,
    /// `GL_ARB_separate_shader_objects`), whose binding a draw with no program uses.
    pub fn has_pipelines(&self) -> bool {
        self.api == ClientApi::Gl
            && ((self.major, self.minor) >= (4, 1)
                || self.has_extension("GL_ARB_separate_shader_objects"))
    }

    /// [`Self::begin`]'s work, which it times ([`crate::waits::timed`]).
    unsafe fn begin_timed(
        &mut self,
        gl: &GlFns,
        mode: CaptureMode,
        deferred: bool,
        idle: u32,
    ) -> Bracket {
        let mut begun = 0u32;
        let mut ids = [0; COUNTERS.len()];
        let mut deferred = mode == CaptureMode::Full && deferred && self.can_defer();
        // The pair is the deferred call's only time: without one (the pool at its cap), the
        // call is isolated instead.
        let mut pair = None;
        if deferred {
            // SAFETY: this context is current (our caller's promise).
            pair = unsafe { self.alloc_pair() };
            deferred = pair.is_some();
        }
        if mode == CaptureMode::Full && !deferred {
            // SAFETY: this context is current (our caller's promise).
            unsafe { (gl.finish)() };
            crate::waits::note();
        }
        if mode == CaptureMode::Full {
            if let Some(q) = self.queries {
                let mut bits = self.usable & !idle;
                while bits != 0 {
                    let i = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if self.program_has(i) {
                        continue;
                    }
                    let Some(target) = COUNTERS[i].target else {
                        continue;
                    };
                    let id = if deferred {
                        // SAFETY: as above.
                        unsafe { self.deferred_query(q, i) }
                    } else {
                        if self.immediate[i] == 0 {
                            // SAFETY: as above; the slot has room for one name.
                            unsafe { (q.gen)(1, &mut self.immediate[i]) };
                        }
                        self.immediate[i]
                    };
                    if id == 0 {
                        continue;
                    }
                    // SAFETY: as above; `target` is usable here and not active (the
                    // program has no query on it, and no bracket of ours is open).
                    unsafe { (q.begin)(target, id) };
                    begun |= 1 << i;
                    ids[i] = id;
                }
            }
        }
        let mut timestamps = None;
        if let Some(t) = self.timer {
            if pair.is_none() {
                // SAFETY: as above.
                pair = unsafe { self.alloc_pair() };
            }
            if let Some((a, b)) = pair {
                // SAFETY: as above; `a` is a free query object of this context.
                unsafe { (t.counter)(a, gl::TIMESTAMP) };
                timestamps = Some((a, b));
            } else {
                self.missed += 1;
            }
        }
        let start_ns = if mode == CaptureMode::Full && !deferred {
            monotonic_ns()
        } else {
            0
        };
        Bracket {
            mode,
            timestamps,
            begun,
            start_ns,
            deferred,
            ids,
        }
    }

    /// A free query object for catalogue index `i` of a call timed deferred (0 when none can
    /// be made: the pool is at its cap).
    unsafe fn deferred_query(&mut self, q: QueryFns, i: usize) -> GLuint {
        if let Some(id) = self.deferred_free[i].pop() {
            return id;
        }
        let n = self
            .deferred_allocated
            .clamp(16, 1024)
            .min(self.cap.saturating_sub(self.deferred_allocated));
        if n == 0 {
            return 0;
        }
        let free = &mut self.deferred_free[i];
        free.resize(n, 0);
        // SAFETY: this context is current (our caller's promise); the slice has room for the
        // `n` names.
        unsafe { (q.gen)(n as i32, free.as_mut_ptr()) };
        self.deferred_allocated += n;
        free.retain(|&id| id != 0);
        free.pop().unwrap_or(0)
    }

    /// Writes the "after" timestamp and ends the queries; in Full mode also finishes the
    /// pipeline. Returns the raw elapsed time (Full mode), 0 otherwise.
    unsafe fn close(&mut self, gl: &GlFns, bracket: &Bracket) -> u64 {
        if let (Some(t), Some((_, b))) = (self.timer, bracket.timestamps) {
            // SAFETY: this context is current (our caller's promise); `b` is the bracket's.
            unsafe { (t.counter)(b, gl::TIMESTAMP) };
        }
        if let Some(q) = self.queries {
            let mut bits = bracket.begun;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(target) = COUNTERS[i].target {
                    // SAFETY: as above; the bracket began a query on `target`.
                    unsafe { (q.end)(target) };
                }
            }
        }
        if bracket.mode == CaptureMode::Full && !bracket.deferred {
            // SAFETY: as above.
            unsafe { (gl.finish)() };
            crate::waits::note();
            monotonic_ns().saturating_sub(bracket.start_ns)
        } else {
            0
        }
    }

    /// Takes the "after" samples of the call bracketed by `bracket` and returns the values
    /// measured now, in catalogue order: in Full mode the serialized time (elapsed minus the
    /// calibrated overhead, at least 0), samples passed and the pipeline statistics; nothing
    /// in Timeline mode, nor for a call timed deferred, whose values [`ContextCounters::resolve`]
    /// reads. The timestamp pair is queued for [`ContextCounters::poll`] as `(frame, call)`.
    /// Counters the context cannot measure, or whose target the program had active, are left
    /// out (never reported as 0).
    ///
    /// # Safety
    /// This context must be current, and `bracket` come from its last [`ContextCounters::begin`].
    pub unsafe fn end(
        &mut self,
        gl: &GlFns,
        bracket: Bracket,
        frame: u64,
        call: u32,
    ) -> Vec<CounterValue> {
        // SAFETY: our caller's promise, passed on.
        crate::waits::timed(crate::waits::Phase::Counters, || unsafe {
            self.end_timed(gl, bracket, frame, call)
        })
    }

    /// [`Self::end`]'s work, which it times ([`crate::waits::timed`]).
    unsafe fn end_timed(
        &mut self,
        gl: &GlFns,
        bracket: Bracket,
        frame: u64,
        call: u32,
    ) -> Vec<CounterValue> {
        // SAFETY: our caller's promise: this context is current and `bracket` its last.
        let elapsed = unsafe { self.close(gl, &bracket) };
        if bracket.deferred {
            crate::waits::note_deferred();
            self.deferred.push_back(PendingCall {
                frame,
                call,
                timestamps: bracket.timestamps,
                begun: bracket.begun,
                ids: bracket.ids,
            });
            return Vec::new();
        }
        if let Some((before, after)) = bracket.timestamps {
            self.pending.push_back(Pending {
                frame,
                call,
                before,
                after,
                disjoint: false,
            });
        }
        if bracket.mode != CaptureMode::Full {
            return Vec::new();
        }
        let mut values = Vec::with_capacity(1 + bracket.begun.count_ones() as usize);
        values.push(CounterValue {
            counter: catalogue::GPU_TIME_SERIALIZED,
            value: elapsed.saturating_sub(self.overhead_ns),
        });
        if let (Some(q), true) = (self.queries, bracket.begun != 0) {
            // SAFETY: our caller's promise (this context is current).
            let unbound = unsafe { self.unbind_query_buffer(gl) };
            // SAFETY: as above; the queries have ended and no query buffer is bound.
            unsafe { read_results(q, bracket.begun, &bracket.ids, &mut values) };
            drop(unbound);
        }
        values
    }

    /// Reads the results of every call timed deferred (the first read waits for the GPU: one
    /// wait for all of them), in call order: each call's values as [`ContextCounters::end`]
    /// would have returned them, its serialized time being its timestamp pair's difference,
    /// and that pair again as its pipelined time. Their query objects go back to the pools.
    ///
    /// # Safety
    /// This context must be current on this thread, with no bracket open.
    pub unsafe fn resolve(&mut self, gl: &GlFns) -> Resolved {
        // SAFETY: our caller's promise, passed on.
        crate::waits::timed(crate::waits::Phase::Results, || unsafe {
            self.resolve_timed(gl)
        })
    }

    /// [`Self::resolve`]'s work, which it times ([`crate::waits::timed`]).
    unsafe fn resolve_timed(&mut self, gl: &GlFns) -> Resolved {
        let mut out = Resolved::default();
        let Some(q) = self.queries else {
            return out;
        };
        if self.deferred.is_empty() {
            return out;
        }
        // SAFETY: our caller's promise (this context is current).
        let unbound = unsafe { self.unbind_query_buffer(gl) };
        // A wait only where the GPU is still behind: with every result of the last call
        // available (a read-back of the heat painter's already waited for the frame),
        // results of earlier calls are too (a GPU completes one context's queries in order;
        // llvmpipe has rasterized the whole frame by then), and reading them does not block.
        let ready = self.deferred.back().is_some_and(|p| {
            let mut ids: Vec<GLuint> = p.timestamps.map(|(_, after)| after).into_iter().collect();
            let mut bits = p.begun;
            while bits != 0 {
                ids.push(p.ids[bits.trailing_zeros() as usize]);
                bits &= bits - 1;
            }
            ids.iter().all(|&id| {
                let mut available = 0u32;
                // SAFETY: as above; `id` ended, no query buffer is bound (the result lands
                // here, not in a buffer).
                unsafe { (q.get_uiv)(id, gl::QUERY_RESULT_AVAILABLE, &mut available) };
                available != 0
            })
        });
        if !ready {
            crate::waits::note();
        }
        while let Some(p) = self.deferred.pop_front() {
            let mut values = Vec::with_capacity(1 + p.begun.count_ones() as usize);
            if let (Some(t), Some((before, after))) = (self.timer, p.timestamps) {
                // SAFETY: as above; both were written (no query buffer is bound).
                let gpu_ns = unsafe { self.read_pair(t, before, after) };
                values.push(CounterValue {
                    counter: catalogue::GPU_TIME_SERIALIZED,
                    value: gpu_ns,
                });
                let time = PipelinedTime {
                    call: p.call,
                    gpu_ns,
                };
                push_time(&mut out.pipelined, p.frame, false, time);
            }
            // SAFETY: as above; the call's queries have ended.
            unsafe { read_results(q, p.begun, &p.ids, &mut values) };
            let mut bits = p.begun;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.deferred_free[i].push(p.ids[i]);
            }
            out.values.push(LateValues {
                frame: p.frame,
                call: p.call,
                values,
            });
        }
        drop(unbound);
        // SAFETY: as above.
        unsafe { self.check_disjoint(gl, &mut out.pipelined) };
        out
    }

    /// Reads both timestamps of a pair whose results were written (no query buffer bound)
    /// and gives the objects back to the pool: the time between them.
    ///
    /// # Safety
    /// This context must be current on this thread.
    unsafe fn read_pair(&mut self, t: TimerFns, before: GLuint, after: GLuint) -> u64 {
        let (mut t0, mut t1) = (0u64, 0u64);
        // SAFETY: our caller's promise; both are timestamp queries this context wrote.
        unsafe {
            (t.get_ui64)(before, gl::QUERY_RESULT, &mut t0);
            (t.get_ui64)(after, gl::QUERY_RESULT, &mut t1);
        }
        self.free.push(before);
        self.free.push(after);
        t1.wrapping_sub(t0) & t.mask
    }

    /// After timestamps were read back: on GLES, when `GL_GPU_DISJOINT_EXT` was raised, marks
    /// `batches` and every still-pending pair disjoint, and keeps the flag for the program
    /// (reading it cleared it).
    ///
    /// # Safety
    /// This context must be current on this thread.
    unsafe fn check_disjoint(&mut self, gl: &GlFns, batches: &mut [PipelinedBatch]) {
        // SAFETY: our caller's promise; the context has GL_EXT_disjoint_timer_query
        // (`disjoint_ext`).
        if self.disjoint_ext && unsafe { gl.integer(gl::GPU_DISJOINT_EXT) } != 0 {
            self.disjoint_for_program = true;
            self.mark_disjoint();
            for b in batches {
                b.disjoint = true;
            }
        }
    }

    /// Calls timed deferred still waiting for [`ContextCounters::resolve`].
    pub fn deferred_pending(&self) -> usize {
        self.deferred.len()
    }

    /// Reads back pending timestamp pairs, in call order, grouped into one batch per run of
    /// calls of the same frame. Without `wait`, stops at the first pair whose result is not
    /// available yet (no stall), so a frame's times may arrive in more than one batch; each
    /// bracketed call appears exactly once overall. With `wait`, reads everything (for the
    /// last captured frame). On GLES, `GL_GPU_DISJOINT_EXT` is checked after the read-back;
    /// when raised, the batches returned now and every still-pending pair are marked disjoint.
    ///
    /// # Safety
    /// This context must be current on this thread.
    pub unsafe fn poll(&mut self, gl: &GlFns, wait: bool) -> Vec<PipelinedBatch> {
        // SAFETY: our caller's promise, passed on.
        crate::waits::timed(crate::waits::Phase::Results, || unsafe {
            self.poll_timed(gl, wait)
        })
    }

    /// [`Self::poll`]'s work, which it times ([`crate::waits::timed`]).
    unsafe fn poll_timed(&mut self, gl: &GlFns, wait: bool) -> Vec<PipelinedBatch> {
        let mut batches: Vec<PipelinedBatch> = Vec::new();
        let (Some(t), Some(q)) = (self.timer, self.queries) else {
            return batches;
        };
        if self.pending.is_empty() {
            return batches;
        }
        if wait {
            // The first read may wait; the later ones read queries written before it.
            crate::waits::note();
        }
        // SAFETY: our caller's promise (this context is current).
        let unbound = unsafe { self.unbind_query_buffer(gl) };
        let available = |id: GLuint| {
            let mut available = 0u32;
            // SAFETY: as above; `id` is a timestamp query this context wrote.
            unsafe { (q.get_uiv)(id, gl::QUERY_RESULT_AVAILABLE, &mut available) };
            available != 0
        };
        // The leading pairs known to have landed: a GPU writes one context's timestamps in
        // order, so a frame whose last pair has landed has landed whole, and one question a
        // frame does instead of one a pair (a landed pair then costs two GL calls, not three;
        // llvmpipe showed no difference beyond its noise, 0.23-0.40 ms a frame of 1,000).
        let mut landed = if wait { self.pending.len() } else { 0 };
        while landed < self.pending.len() {
            let frame = self.pending[landed].frame;
            let end = self
                .pending
                .iter()
                .skip(landed)
                .take_while(|p| p.frame == frame)
                .count()
                + landed;
            if !available(self.pending[end - 1].after) {
                break;
            }
            landed = end;
        }
        while let Some(&p) = self.pending.front() {
            // Past the frames known landed, pair by pair: a frame's first calls may have.
            if landed == 0 && !available(p.after) {
                break;
            }
            landed = landed.saturating_sub(1);
            self.pending.pop_front();
            // SAFETY: as above (both were written; no query buffer is bound).
            let gpu_ns = unsafe { self.read_pair(t, p.before, p.after) };
            let time = PipelinedTime {
                call: p.call,
                gpu_ns,
            };
            push_time(&mut batches, p.frame, p.disjoint, time);
        }
        drop(unbound);
        // SAFETY: as above.
        unsafe { self.check_disjoint(gl, &mut batches) };
        batches
    }

    /// Tells the counters that the program itself began (`active = true`) or ended a query on
    /// `target` (`glBeginQuery`, `glEndQuery` and the `Indexed` variants), so a bracket never
    /// begins a query on a target the program has active. The three occlusion targets count
    /// as one.
    pub fn note_program_query(&mut self, target: u32, active: bool) {
        if let Some(bit) = target_bit(target) {
            if active {
                self.program_active |= 1 << bit;
            } else {
                self.program_active &= !(1 << bit);
            }
        }
    }

    /// For the agent's wrapper of the program's own read of `GL_GPU_DISJOINT_EXT`
    /// (`glGetIntegerv` and friends): pass what the real call returned, and hand the program
    /// the returned value instead. The flag clears on read, so a disjoint event gpuheat
    /// consumed in [`ContextCounters::poll`] is given back here; one the program consumed
    /// marks the pending pipelined times disjoint.
    pub fn program_read_disjoint(&mut self, real_value: bool) -> bool {
        if real_value {
            self.mark_disjoint();
        }
        let seen = real_value || self.disjoint_for_program;
        self.disjoint_for_program = false;
        seen
    }

    fn mark_disjoint(&mut self) {
        for p in &mut self.pending {
            p.disjoint = true;
        }
    }

    fn program_has(&self, index: usize) -> bool {
        if index == catalogue::SAMPLES_PASSED as usize {
            return self.program_active & OCCLUSION_BITS != 0;
        }
        COUNTERS[index]
            .target
            .and_then(target_bit)
            .is_some_and(|bit| self.program_active & (1 << bit) != 0)
    }

    /// Two free timestamp query objects, growing the pool up to the cap.
    unsafe fn alloc_pair(&mut self) -> Option<(GLuint, GLuint)> {
        if self.free.len() < 2 {
            let q = self.queries?;
            let want = self.allocated.clamp(64, 4096);
            let n = want.min(self.cap.saturating_sub(self.allocated));
            if n > 0 {
                let old = self.free.len();
                self.free.resize(old + n, 0);
                // SAFETY: this context is current (our caller's promise); the slice has room
                // for the `n` names.
                unsafe { (q.gen)(n as i32, self.free[old..].as_mut_ptr()) };
                self.allocated += n;
                self.free.retain(|&id| id != 0);
            }
            if self.free.len() < 2 {
                return None;
            }
        }
        let b = self.free.pop()?;
        let a = self.free.pop()?;
        Some((a, b))
    }

    /// Unbinds `GL_QUERY_BUFFER` while the guard lives, when the context has the binding and
    /// the program has a buffer bound there (query results would be written into it).
    ///
    /// # Safety
    /// This context must be current on this thread, and stay current while the guard lives.
    unsafe fn unbind_query_buffer(&self, gl: &GlFns) -> Option<Unbound> {
        let bind = self.bind_buffer.filter(|_| self.query_buffer)?;
        // SAFETY: our caller's promise; `query_buffer` says the binding exists here.
        unsafe {
            Unbound::take(
                gl.get_integerv,
                gl::QUERY_BUFFER_BINDING,
                gl::QUERY_BUFFER,
                bind,
            )
        }
    }

    /// Sets the most timestamp query objects this context may hold (default
    /// [`DEFAULT_TIMESTAMP_CAP`]). Beyond it, a bracketed call simply gets no pipelined time.
    pub fn set_timestamp_cap(&mut self, cap: usize) {
        self.cap = cap;
    }

    /// Brackets that got no pipelined time because the query pool was at its cap.
    pub fn missed_pipelined(&self) -> u64 {
        self.missed
    }

    /// Timestamp query objects this context holds (free or pending).
    pub fn timestamp_queries(&self) -> usize {
        self.allocated
    }

    /// Timestamp pairs still waiting for [`ContextCounters::poll`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whether counter `index` of the catalogue can be measured in this context.
    pub fn available(&self, index: u16) -> bool {
        self.counters
            .get(index as usize)
            .is_some_and(|c| c.available)
    }

    /// Whether the context advertises extension `name` (e.g. `GL_ARB_timer_query`).
    pub fn has_extension(&self, name: &str) -> bool {
        self.extensions.contains(name)
    }

    /// The client API and its major and minor version.
    pub fn api_version(&self) -> (ClientApi, u32, u32) {
        (self.api, self.major, self.minor)
    }

    /// Median cost of an empty serialized bracket (ns), subtracted from serialized times.
    pub fn serialized_overhead_ns(&self) -> u64 {
        self.overhead_ns
    }

    /// What this context is and can measure, for the session's `Context` record.
    pub fn info(&self) -> ContextInfo {
        ContextInfo {
            handle: self.handle,
            api: self.api,
            vendor: self.vendor.clone(),
            renderer: self.renderer.clone(),
            version: self.version.clone(),
            counters: self.counters.clone(),
            pipelined_meaningful: self.pipelined_meaningful,
            pipelined_note: self.pipelined_note.clone(),
            serialized_overhead_ns: self.overhead_ns,
        }
    }

    /// Deletes every query object of this context (pending results are dropped). Only needed
    /// when the context lives on; destroying the context frees them too.
    ///
    /// # Safety
    /// This context must be current on this thread, with no bracket open.
    pub unsafe fn release(mut self, _gl: &GlFns) {
        let Some(q) = self.queries else { return };
        let mut ids: Vec<GLuint> = std::mem::take(&mut self.free);
        ids.extend(self.pending.drain(..).flat_map(|p| [p.before, p.after]));
        ids.extend(self.immediate.iter().copied().filter(|&id| id != 0));
        for p in std::mem::take(&mut self.deferred) {
            ids.extend(p.timestamps.into_iter().flat_map(|(a, b)| [a, b]));
            ids.extend(p.ids.iter().copied().filter(|&id| id != 0));
        }
        for free in &mut self.deferred_free {
            ids.append(free);
        }
        if !ids.is_empty() {
            // SAFETY: this context is current (our caller's promise); `ids` are its query
            // objects, none active.
            unsafe { (q.delete)(ids.len() as i32, ids.as_ptr()) };
        }
    }
}

/// Adds a call's pipelined time to the last batch when it is of the same frame, else to a
/// new one: calls come in order, so a frame's times form one run.
fn push_time(batches: &mut Vec<PipelinedBatch>, frame: u64, disjoint: bool, time: PipelinedTime) {
    match batches.last_mut() {
        Some(b) if b.frame == frame => {
            b.times.push(time);
            b.disjoint |= disjoint;
        }
        _ => batches.push(PipelinedBatch {
            frame,
            disjoint,
            times: vec![time],
        }),
    }
}

/// Reads the results of the ended queries `begun` (catalogue indices as bits, objects in
/// `ids`) into `values`, in catalogue order.
///
/// # Safety
/// The context owning the queries must be current, with no query buffer bound.
unsafe fn read_results(q: QueryFns, begun: u32, ids: &[GLuint], values: &mut Vec<CounterValue>) {
    let mut bits = begun;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let id = ids[i];
        let value = match q.get_ui64 {
            Some(get_ui64) => {
                let mut v = 0u64;
                // SAFETY: our caller's promise; the query `id` has ended.
                unsafe { get_ui64(id, gl::QUERY_RESULT, &mut v) };
                v
            }
            None => {
                let mut v = 0u32;
                // SAFETY: as above.
                unsafe { (q.get_uiv)(id, gl::QUERY_RESULT, &mut v) };
                u64::from(v)
            }
        };
        values.push(CounterValue {
            counter: i as u16,
            value,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(
            parse_version("4.5 (Core Profile) Mesa 22.3.6"),
            (ClientApi::Gl, 4, 5)
        );
        assert_eq!(
            parse_version("OpenGL ES 3.2 Mesa 22.3.6"),
            (ClientApi::Gles, 3, 2)
        );
        assert_eq!(parse_version("OpenGL ES-CM 1.1"), (ClientApi::Gles, 1, 1));
        assert_eq!(
            parse_version("4.6.0 NVIDIA 535.54.03"),
            (ClientApi::Gl, 4, 6)
        );
        assert_eq!(parse_version(""), (ClientApi::Gl, 0, 0));
    }

    #[test]
    fn renderers() {
        let sw = |r: &str| pipelined_caveat("Mesa", r).is_some_and(|n| n.contains("software"));
        let tiled = |v: &str, r: &str| pipelined_caveat(v, r).is_some_and(|n| n.contains("tile"));
        assert!(sw("llvmpipe (LLVM 15.0.6, 256 bits)"));
        assert!(sw("softpipe"));
        assert!(sw("SWR (LLVM 12.0.0, 256 bits)"));
        assert!(sw("Google SwiftShader"));
        assert!(sw("Software Rasterizer"));
        assert!(tiled("ARM", "Mali-G52"));
        assert!(tiled("Panfrost", "Mali-G52 (Panfrost)"));
        assert!(tiled("lima", "Mali400"));
        assert!(tiled("Qualcomm", "Adreno (TM) 630"));
        assert!(tiled("freedreno", "FD307"));
        assert!(tiled("Imagination Technologies", "PowerVR Rogue GE8320"));
        assert!(tiled("Apple", "Apple M1"));
        assert!(tiled("etnaviv", "Vivante GC2000 rev 5108"));
        assert!(tiled("Broadcom", "V3D 4.2"));
        assert!(tiled("Broadcom", "VC4 V3D 2.1"));
        for (v, r) in [
            ("NVIDIA Corporation", "NVIDIA GeForce RTX 3080/PCIe/SSE2"),
            ("AMD", "AMD Radeon RX 6800 (navi21, LLVM 15.0.6, DRM 3.49)"),
            ("Intel", "Mesa Intel(R) UHD Graphics 620 (KBL GT2)"),
        ] {
            assert_eq!(pipelined_caveat(v, r), None, "{r}");
        }
    }

    #[test]
    fn target_bits_are_distinct() {
        let mut seen = 0u32;
        for t in [
            gl::SAMPLES_PASSED,
            gl::ANY_SAMPLES_PASSED,
            gl::ANY_SAMPLES_PASSED_CONSERVATIVE,
        ]
        .into_iter()
        .chain(COUNTERS[3..14].iter().map(|c| c.target.unwrap()))
        {
            let bit = target_bit(t).unwrap();
            assert_eq!(seen & (1 << bit), 0);
            seen |= 1 << bit;
        }
        assert_eq!(target_bit(gl::TIME_ELAPSED), None);
        assert!(!replay_changes_query(gl::TIME_ELAPSED));
        assert!(replay_changes_query(gl::SAMPLES_PASSED));
        assert!(replay_changes_query(gl::PRIMITIVES_GENERATED));
    }
}
