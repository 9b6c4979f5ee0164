//! From a session to the numbers a report shows: per-frame totals and per-draw costs.

use crate::enums;
use gpuheat_session::{
    CallClass, ContextInfo, Frame, FunctionInfo, PipelinedIndex, Session, ValueKind,
};
use gpuheat_symbols::{Location, Symbolizer};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Totals of one frame.
#[derive(Debug, Clone, Serialize)]
pub struct FrameStats {
    /// The frame, as in [`gpuheat_session::Frame::index`].
    pub index: u64,
    /// Every intercepted call, the swap included.
    pub calls: usize,
    /// glDraw* / glMultiDraw* calls, and OpenVG's vgDrawPath, vgDrawImage, vgDrawGlyph(s).
    pub draws: usize,
    /// Calls that make the GPU work (draws, clears, blits, dispatches, copies, mipmaps).
    pub work_calls: usize,
    /// From the end of the previous frame to this frame's swap, as the program lived it.
    pub wall_ms: f64,
    /// Thread CPU time spent inside GL calls.
    pub cpu_ms: f64,
    /// Sum of serialized per-draw GPU times (full mode).
    pub gpu_serialized_ms: Option<f64>,
    /// Sum of pipelined per-draw GPU times.
    pub gpu_pipelined_ms: Option<f64>,
}

/// One call that made the GPU work, with everything measured about it.
#[derive(Debug, Clone, Serialize)]
pub struct DrawCost {
    /// The frame the call is in, as in [`gpuheat_session::Frame::index`].
    pub frame: u64,
    /// Index of the call in its frame.
    pub call: u32,
    /// The entry point's name.
    pub function: String,
    /// The call as source text, enums by name.
    pub text: String,
    /// GPU time measured with the pipeline drained around the call (full mode), in ns.
    pub gpu_serialized_ns: Option<u64>,
    /// GPU time between timestamps around the call, others overlapping it, in ns.
    pub gpu_pipelined_ns: Option<u64>,
    /// Share of its frame's GPU time (by the ranking time).
    pub frame_share: Option<f64>,
    /// Thread CPU time spent inside the call.
    pub cpu_ns: u64,
    /// Counter name → value, for the counters measured on this call.
    pub counters: BTreeMap<String, u64>,
    /// `module+0xoffset` of the program's call.
    pub callsite: String,
    /// `file:line function` of the program's call, from debug info: the first frame of the
    /// program's own code when the call site is inlined library code.
    pub source: Option<String>,
    /// For a VG call of a VG library layered on GLES: the GL calls it made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Children>,
}

/// The calls a VG library made inside one VG call (its GL calls), which the VG call's time
/// includes.
#[derive(Debug, Clone, Serialize)]
pub struct Children {
    /// Calls made.
    pub calls: usize,
    /// Of them, work calls (GL draws, clears, copies).
    pub work_calls: usize,
    /// Sum of their serialized GPU times, when measured.
    pub gpu_serialized_ns: Option<u64>,
}

/// A counter a context could not measure.
#[derive(Debug, Clone, Serialize)]
pub struct Unavailable {
    /// The context, as a hex handle.
    pub context: String,
    /// The counter's name, e.g. `samples_passed`.
    pub counter: String,
    /// Why the context could not measure it.
    pub reason: String,
}

/// Everything `gpuheat report` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// Totals per frame, in capture order.
    pub frames: Vec<FrameStats>,
    /// Every work call of every frame, costliest first.
    pub draws: Vec<DrawCost>,
    /// Which time ranks the draws.
    pub ranked_by: RankedBy,
    /// The counters some context could not measure.
    pub unavailable: Vec<Unavailable>,
}

/// The GPU time draws are ranked by; serialized as the counter's name
/// (`gpu_time_serialized`, `gpu_time_pipelined`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankedBy {
    /// Serialized per-draw time (full mode): each draw measured alone.
    GpuTimeSerialized,
    /// Pipelined per-draw time: timestamps between draws that overlap on the GPU.
    GpuTimePipelined,
}

impl RankedBy {
    /// The counter this time is recorded under, as the JSON report names it.
    pub fn counter(self) -> &'static str {
        match self {
            RankedBy::GpuTimeSerialized => SERIALIZED,
            RankedBy::GpuTimePipelined => PIPELINED,
        }
    }
}

const SERIALIZED: &str = gpuheat_session::counter_names::GPU_TIME_SERIALIZED;
const PIPELINED: &str = gpuheat_session::counter_names::GPU_TIME_PIPELINED;

/// The serialized time of call `call` of frame `s.frames[fi]`, read through its context's
/// counter names.
pub fn serialized_ns(s: &Session, fi: usize, call: u32) -> Option<u64> {
    let f = &s.frames[fi];
    let ctx = f.calls.get(call as usize)?.context;
    let info = s.contexts.iter().find(|c| c.handle == ctx)?;
    let sample = f.samples.iter().find(|d| d.call == call)?;
    sample.values.iter().find_map(|v| {
        (info.counters.get(usize::from(v.counter))?.name == SERIALIZED).then_some(v.value)
    })
}

/// Per-frame totals and per-draw costs of a session, the draws costliest first. Frames are
/// analysed in parallel; call sites are resolved to source lines once each, afterwards.
pub fn analyse(s: &Session) -> Analysis {
    analyse_with(s, true)
}

/// [`analyse`] for the checklist alone: without `texts`, the draws' call text, call site and
/// source line are left empty and the draws stay in frame order (formatting and sorting them
/// is most of the work on a million draws).
pub fn analyse_with(s: &Session, texts: bool) -> Analysis {
    let pipelined = s.pipelined_index();
    let contexts: BTreeMap<u64, &ContextInfo> = s.contexts.iter().map(|c| (c.handle, c)).collect();
    let funcs = &s.functions.functions;
    let nested = crate::measure::nested::Nested::of(&s.vg_calls);
    let prevs: Vec<Option<&gpuheat_session::Frame>> = std::iter::once(None)
        .chain(s.frames.iter().map(Some))
        .collect();
    let per_frame: Vec<(FrameStats, Vec<(DrawCost, u64)>)> = s
        .frames
        .par_iter()
        .zip(prevs.par_iter())
        .map(|(f, prev)| {
            let mut stats = FrameStats {
                index: f.index,
                calls: f.calls.len(),
                draws: 0,
                work_calls: 0,
                wall_ms: ms(wall_ns(*prev, f)),
                // A VG call's thread CPU time includes its children's.
                cpu_ms: ms(f
                    .calls
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| nested.parent(f.index, *i as u32).is_none())
                    .map(|(_, c)| c.cpu_ns)
                    .sum()),
                gpu_serialized_ms: None,
                gpu_pipelined_ms: None,
            };
            let samples: BTreeMap<u32, _> = f.samples.iter().map(|s| (s.call, &s.values)).collect();
            let serialized_of = |call: u32| {
                let values = samples.get(&call)?;
                let ctx = contexts.get(&f.calls.get(call as usize)?.context)?;
                values
                    .iter()
                    .find(|v| {
                        ctx.counters
                            .get(v.counter as usize)
                            .is_some_and(|c| c.name == SERIALIZED)
                    })
                    .map(|v| v.value)
            };
            let mut draws = Vec::new();
            for (i, call) in f.calls.iter().enumerate() {
                let Some(info) = funcs.get(call.func as usize) else {
                    continue;
                };
                // A VG call's GL calls are counted in it, not again at the top.
                if nested.parent(f.index, i as u32).is_some() {
                    continue;
                }
                let kids = nested.children(f.index, i as u32);
                let children = (!kids.is_empty()).then(|| {
                    let work: Vec<u32> = kids
                        .iter()
                        .copied()
                        .filter(|&k| {
                            f.calls
                                .get(k as usize)
                                .and_then(|c| funcs.get(c.func as usize))
                                .is_some_and(|i| i.class.is_work())
                        })
                        .collect();
                    let times: Vec<u64> = work.iter().filter_map(|&k| serialized_of(k)).collect();
                    Children {
                        calls: kids.len(),
                        work_calls: work.len(),
                        gpu_serialized_ns: (!times.is_empty()).then(|| times.iter().sum()),
                    }
                });
                match info.class {
                    CallClass::Draw => stats.draws += 1,
                    // A VG program's draws (its library's GL draws are their children).
                    CallClass::Work if info.name.starts_with("vgDraw") => stats.draws += 1,
                    CallClass::Work => {}
                    _ => continue,
                }
                stats.work_calls += 1;
                let mut counters = BTreeMap::new();
                if let (Some(values), Some(ctx)) =
                    (samples.get(&(i as u32)), contexts.get(&call.context))
                {
                    for v in values.iter() {
                        if let Some(c) = ctx.counters.get(v.counter as usize) {
                            counters.insert(c.name.clone(), v.value);
                        }
                    }
                }
                let serialized = counters.remove(SERIALIZED);
                let piped =
                    pipelined_ns(&pipelined, f.index, i as u32).or(counters.remove(PIPELINED));
                add(&mut stats.gpu_serialized_ms, serialized);
                add(&mut stats.gpu_pipelined_ms, piped);
                draws.push((
                    DrawCost {
                        frame: f.index,
                        call: i as u32,
                        function: info.name.clone(),
                        text: if texts {
                            draw_text(s, f, i as u32)
                        } else {
                            String::new()
                        },
                        gpu_serialized_ns: serialized,
                        gpu_pipelined_ns: piped,
                        frame_share: None,
                        cpu_ns: call.cpu_ns,
                        counters,
                        callsite: if texts {
                            callsite(s, call.callsite)
                        } else {
                            String::new()
                        },
                        source: None,
                        children,
                    },
                    call.callsite,
                ));
            }
            let total: u64 = draws.iter().filter_map(|(d, _)| rank_time(d)).sum();
            if total > 0 {
                for (d, _) in draws.iter_mut() {
                    d.frame_share = rank_time(d).map(|t| t as f64 / total as f64);
                }
            }
            (stats, draws)
        })
        .collect();
    let mut symbols = s.modules.as_ref().filter(|_| texts).map(Symbolizer::new);
    let mut sources: BTreeMap<u64, Option<String>> = BTreeMap::new();
    let mut frames = Vec::with_capacity(per_frame.len());
    let mut draws = Vec::new();
    for (stats, frame_draws) in per_frame {
        frames.push(stats);
        for (mut d, addr) in frame_draws {
            d.source = sources
                .entry(addr)
                .or_insert_with(|| symbols.as_mut().and_then(|y| source(&y.resolve(addr))))
                .clone();
            draws.push(d);
        }
    }
    let ranked_by = if draws.iter().any(|d| d.gpu_serialized_ns.is_some()) {
        RankedBy::GpuTimeSerialized
    } else {
        RankedBy::GpuTimePipelined
    };
    if texts {
        draws.sort_by(|a, b| {
            rank_time(b)
                .cmp(&rank_time(a))
                .then(a.frame.cmp(&b.frame))
                .then(a.call.cmp(&b.call))
        });
    }
    let mut unavailable = Vec::new();
    for ctx in &s.contexts {
        for c in ctx.counters.iter().filter(|c| !c.available) {
            unavailable.push(Unavailable {
                context: format!("{:#x}", ctx.handle),
                counter: c.name.clone(),
                reason: c
                    .unavailable_reason
                    .clone()
                    .unwrap_or_else(|| "not offered by the driver".into()),
            });
        }
    }
    Analysis {
        frames,
        draws,
        ranked_by,
        unavailable,
    }
}

/// A frame's wall time, as the program lived it: from the previous frame's end when the
/// session holds the frame before it, else from its own begin (the first frame, and the first
/// after a gap: a watch keeps stretches of frames).
pub fn wall_ns(prev: Option<&gpuheat_session::Frame>, f: &gpuheat_session::Frame) -> u64 {
    let start = prev
        .filter(|p| p.index + 1 == f.index)
        .map_or(f.begin_ns, |p| p.end_ns);
    f.end_ns.saturating_sub(start)
}

/// The time a draw is ranked by: serialized when measured, else pipelined.
pub fn rank_time(d: &DrawCost) -> Option<u64> {
    d.gpu_serialized_ns.or(d.gpu_pipelined_ns)
}

fn pipelined_ns(index: &PipelinedIndex, frame: u64, call: u32) -> Option<u64> {
    index
        .get(frame, call)
        .filter(|t| !t.disjoint)
        .map(|t| t.gpu_ns)
}

fn add(total: &mut Option<f64>, v: Option<u64>) {
    if let Some(v) = v {
        *total = Some(total.unwrap_or(0.0) + ms(v));
    }
}

/// Nanoseconds as milliseconds.
pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// `glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)`.
pub fn call_text(info: &FunctionInfo, args: &[u64]) -> String {
    let shown: Vec<String> = info
        .params
        .iter()
        .zip(args)
        .map(|(p, &v)| match p.kind {
            ValueKind::Int => (v as i64).to_string(),
            ValueKind::Uint => v.to_string(),
            ValueKind::Enum => enums::enum_name(v, p.group.as_deref())
                .map(str::to_string)
                .unwrap_or_else(|| format!("{v:#x}")),
            ValueKind::Bitfield => enums::bitfield(v, p.group.as_deref()),
            ValueKind::Bool => if v == 0 { "false" } else { "true" }.to_string(),
            ValueKind::F32 => format!("{}", f32::from_bits(v as u32)),
            ValueKind::F64 => format!("{}", f64::from_bits(v)),
            ValueKind::Ptr => {
                if v == 0 {
                    "NULL".to_string()
                } else {
                    format!("{v:#x}")
                }
            }
        })
        .collect();
    format!("{}({})", info.name, shown.join(", "))
}

/// Whether entry point `name` gives immediate mode a vertex (`glVertex2f` … `glVertex4sv`;
/// not `glVertexAttrib*` or `glVertexArray*`).
pub(crate) fn emits_vertex(name: &str) -> bool {
    name.starts_with("glVertex") && !name.starts_with("glVertexA")
}

/// The text of work call `call` of `frame`: [`call_text`], but for a `glEnd`, which ends a
/// block of immediate mode drawn as one draw, the block: `glBegin(GL_QUADS) … glEnd(): 4
/// vertices` (its `glBegin` the last one before it on the same thread, its vertices the
/// `glVertex*` calls between).
pub fn draw_text(s: &Session, frame: &Frame, call: u32) -> String {
    let Some(c) = frame.calls.get(call as usize) else {
        return String::new();
    };
    let info_of = |func: u16| s.functions.functions.get(usize::from(func));
    let Some(info) = info_of(c.func) else {
        return String::new();
    };
    let text = call_text(info, &c.args);
    if info.name != "glEnd" {
        return text;
    }
    let before = frame.calls[..call as usize]
        .iter()
        .rev()
        .filter(|b| b.thread == c.thread);
    let mut vertices = 0;
    for b in before {
        let Some(b_info) = info_of(b.func) else {
            continue;
        };
        match b_info.name.as_str() {
            "glBegin" => {
                let begin = call_text(b_info, &b.args);
                let plural = if vertices == 1 { "" } else { "es" };
                return format!("{begin} … {text}: {vertices} vertic{plural}");
            }
            // Another block's end: this one's glBegin was not captured.
            "glEnd" => break,
            name if emits_vertex(name) => vertices += 1,
            _ => {}
        }
    }
    text
}

/// `file:line function` of the program's own frame of a call site (the innermost frame when
/// every frame is library code); `None` without line information.
pub fn source(loc: &Location) -> Option<String> {
    let frame = loc.program_frame().or(loc.innermost())?;
    let file = frame.file.as_deref()?;
    let line = frame.line.map(|l| format!(":{l}")).unwrap_or_default();
    let function = frame.function.as_deref().unwrap_or("??");
    Some(format!("{file}{line} {function}"))
}

/// `overdraw+0x1a2b` for an address inside a mapped module.
pub(crate) fn callsite(s: &Session, addr: u64) -> String {
    let module = s
        .modules
        .as_ref()
        .and_then(|m| m.modules.iter().find(|m| m.start <= addr && addr < m.end));
    match module {
        Some(m) => {
            let name = m.path.rsplit('/').next().unwrap_or(&m.path);
            format!("{name}+{:#x}", addr - m.start + m.file_offset)
        }
        None => format!("{addr:#x}"),
    }
}
