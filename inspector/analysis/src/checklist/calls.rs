//! Checklist rules that read the calls themselves, frame by frame: queries that make a
//! threaded driver wait, uploads and object churn during frames, shader compiles in frames
//! and first-use compile hitches, uncompressed textures, non-indexed triangle lists, GL 1.x
//! immediate mode, render-to-texture by read-back, and frames that render the same thing
//! again.
//!
//! Frame 0 holds a launched program's set-up (context, shaders, textures), so the "during
//! frames" rules start at frame 1. Calls a VG library makes inside a VG call are the
//! library's, not the program's (`Nested`), and are left out.

use super::context::Context;
use super::finding::{Cost, Evidence, Finding, Severity};
use super::rule::{Family, Rule};
use crate::enums::enum_name;
use crate::measure::cost::emits_vertex;
use crate::measure::nested::Nested;
use gpuheat_session::{Call, CallClass, CaptureMode, Frame, Session, Upload, ValueKind};
// Fx: small integer keys looked up per call.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeMap;

/// Texels from which an uncompressed texture is worth compressing (256 × 256).
const LARGE_TEXTURE_TEXELS: u64 = 256 * 256;
/// Vertices from which a non-indexed triangle list is worth indexing or stripping.
const LIST_VERTICES: u64 = 96;
/// Share of a list's positions that repeat an earlier one, measured from recorded geometry,
/// below which indexing would save little.
const REPEATED_SHARE: f64 = 0.25;
/// A draw's first occurrence costing this many times its later median is a compile hitch…
const HITCH_RATIO: f64 = 10.0;
/// …when it is also at least this much CPU time above it (ns): a quarter of a millisecond,
/// well above the scheduler's noise on a draw call, and what a small shader variant costs
/// llvmpipe to compile.
const HITCH_NS: u64 = 250_000;
/// Later occurrences a hitch is measured against.
const HITCH_LATER: usize = 2;
/// Share of the frame's duration from which state queries are a warning, not info.
const QUERY_SHARE: f64 = 0.01;
/// Queries per frame from which they are a warning, whatever their time.
const QUERY_CALLS: usize = 10;

/// Bytes per frame of data uploaded again from which the repeats are called out.
const REPEATED_BYTES: u64 = 1024;

use crate::enums::gl::{ALREADY_SIGNALED, PIXEL_PACK_BUFFER, TIMEOUT_EXPIRED, TRIANGLES};

/// The rules of this family, in the order the catalogue lists them.
pub(super) const RULES: &[&Rule] = &[
    &PIPELINE_STALL,
    &SYNC_CALLS,
    &TEXTURE_UPLOAD_IN_FRAME,
    &UNCOMPRESSED_TEXTURES,
    &OBJECTS_PER_FRAME,
    &COMPILE_IN_FRAME,
    &FIRST_USE_COMPILE,
    &NO_STRIPS_OR_INDICES,
    &IMMEDIATE_MODE,
    &READBACK_RTT,
    &IDENTICAL_FRAMES,
    &SAME_UPLOAD,
    &RENDERER_UNCHECKED,
];

/// Runs `rule` on the frames from `first` on (1: the frames after a launched program's
/// set-up, for the "during frames" rules).
fn frames(
    ctx: &Context,
    first: u64,
    rule: fn(&Calls, &Frame, &mut Vec<Finding>),
    out: &mut Vec<Finding>,
) {
    let calls = Calls::of_context(ctx);
    for f in ctx.s.frames.iter().filter(|f| f.index >= first) {
        rule(&calls, f, out);
    }
}

/// `pipeline-stall`.
pub(super) const PIPELINE_STALL: Rule = Rule {
    id: "pipeline-stall",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "calls that make the CPU wait for the GPU",
    check: |ctx, out| frames(ctx, 1, stalls, out),
};

/// `sync-calls`.
pub(super) const SYNC_CALLS: Rule = Rule {
    id: "sync-calls",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "glGet* or glGetError during frames",
    check: |ctx, out| frames(ctx, 1, state_queries, out),
};

/// `texture-upload-in-frame`.
pub(super) const TEXTURE_UPLOAD_IN_FRAME: Rule = Rule {
    id: "texture-upload-in-frame",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "texture data uploaded while frames render",
    check: |ctx, out| frames(ctx, 1, texture_uploads, out),
};

/// `uncompressed-textures`.
pub(super) const UNCOMPRESSED_TEXTURES: Rule = Rule {
    id: "uncompressed-textures",
    family: Family::Calls,
    severity: Severity::Info,
    summary: "large colour textures uploaded uncompressed",
    check: |ctx, out| frames(ctx, 0, uncompressed_textures, out),
};

/// `objects-per-frame`.
pub(super) const OBJECTS_PER_FRAME: Rule = Rule {
    id: "objects-per-frame",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "GL objects created and deleted every frame",
    check: |ctx, out| frames(ctx, 1, object_churn, out),
};

/// `compile-in-frame`.
pub(super) const COMPILE_IN_FRAME: Rule = Rule {
    id: "compile-in-frame",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "shaders compiled or programs linked during frames",
    check: |ctx, out| frames(ctx, 1, compiles, out),
};

/// `first-use-compile`.
pub(super) const FIRST_USE_COMPILE: Rule = Rule {
    id: "first-use-compile",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "a draw's first occurrence costs far more CPU time than its later ones",
    check: |ctx, out| first_use_hitches(&Calls::of_context(ctx), &ctx.walk.gathered.programs, out),
};

/// `no-strips-or-indices`.
pub(super) const NO_STRIPS_OR_INDICES: Rule = Rule {
    id: "no-strips-or-indices",
    family: Family::Calls,
    severity: Severity::Info,
    summary: "large non-indexed triangle lists",
    check: |ctx, out| frames(ctx, 1, non_indexed_lists, out),
};

/// `immediate-mode`.
pub(super) const IMMEDIATE_MODE: Rule = Rule {
    id: "immediate-mode",
    family: Family::Calls,
    severity: Severity::Info,
    summary: "GL 1.x immediate mode: a function call per vertex attribute",
    check: |ctx, out| frames(ctx, 1, immediate_blocks, out),
};

/// `readback-rtt`.
pub(super) const READBACK_RTT: Rule = Rule {
    id: "readback-rtt",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "render-to-texture through a read-back and an upload",
    check: |ctx, out| frames(ctx, 1, readback_to_texture, out),
};

/// `identical-frames`.
pub(super) const IDENTICAL_FRAMES: Rule = Rule {
    id: "identical-frames",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "consecutive frames with the same calls and arguments",
    check: |ctx, out| identical_frames(ctx, &Calls::of_context(ctx), out),
};

/// `same-upload`.
pub(super) const SAME_UPLOAD: Rule = Rule {
    id: "same-upload",
    family: Family::Calls,
    severity: Severity::Warning,
    summary: "the same bytes uploaded again into a buffer or texture",
    check: |ctx, out| same_uploads(&Calls::of_context(ctx), out),
};

/// `renderer-unchecked`.
pub(super) const RENDERER_UNCHECKED: Rule = Rule {
    id: "renderer-unchecked",
    family: Family::Calls,
    severity: Severity::Info,
    summary: "the program never asks which renderer it runs on",
    check: |ctx, out| renderer_unchecked(&Calls::of_context(ctx), out),
};

/// The session's calls by name, with the VG library's own left out.
struct Calls<'a> {
    s: &'a Session,
    names: &'a [&'a str],
    nested: &'a Nested,
    /// What each upload call copied in, by frame and call (the agent's `UPLD` records).
    uploads: &'a HashMap<(u64, u32), &'a Upload>,
}

impl<'a> Calls<'a> {
    fn of_context(ctx: &'a Context) -> Calls<'a> {
        Calls {
            s: ctx.s,
            names: &ctx.names,
            nested: &ctx.nested,
            uploads: &ctx.uploads,
        }
    }

    /// The program's own calls of frame `f`: index, name and call.
    fn of(&self, f: &'a Frame) -> impl Iterator<Item = (u32, &'a str, &'a Call)> + '_ {
        f.calls.iter().enumerate().filter_map(move |(i, c)| {
            let i = i as u32;
            if self.nested.parent(f.index, i).is_some() {
                return None;
            }
            let name = base_name(self.names.get(usize::from(c.func))?);
            Some((i, name, c))
        })
    }

    /// The argument of `c` called `param`, by the function table's parameter names.
    fn arg(&self, c: &Call, param: &str) -> Option<u64> {
        let info = self.s.functions.functions.get(usize::from(c.func))?;
        let i = info.params.iter().position(|p| p.name == param)?;
        c.args.get(i).copied()
    }

    /// The name of enum argument `param` of `c`.
    fn enum_arg(&self, c: &Call, param: &str) -> String {
        let info = &self.s.functions.functions[usize::from(c.func)];
        let group = info
            .params
            .iter()
            .find(|p| p.name == param)
            .and_then(|p| p.group.as_deref());
        match self.arg(c, param) {
            Some(v) => enum_name(v, group).map_or_else(|| format!("{v:#x}"), str::to_string),
            None => "?".into(),
        }
    }
}

/// `glTexImage2DEXT` → `glTexImage2D`: extension aliases behave as the core call.
fn base_name(name: &str) -> &str {
    for suffix in ["EXT", "OES", "ARB", "KHR"] {
        if let Some(b) = name.strip_suffix(suffix) {
            return b;
        }
    }
    name
}

/// "glGetError ×3, glGetIntegerv ×1", most frequent first.
fn tally(counts: &BTreeMap<&str, u64>) -> String {
    let mut v: Vec<(&&str, &u64)> = counts.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(n, k)| format!("{n} ×{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Evidence of `calls` with a tally of their entry points (also returned, for titles).
fn tallied<'a>(calls: &[(u32, &'a str, &Call)]) -> (Evidence, BTreeMap<&'a str, u64>) {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, n, _) in calls {
        *counts.entry(n).or_default() += 1;
    }
    let mut e = Evidence::calls(calls.iter().map(|(i, _, _)| *i));
    for (n, k) in &counts {
        e = e.with(n, k);
    }
    (e, counts)
}

/// Σ CPU time of `calls`.
fn cpu(calls: &[(u32, &str, &Call)]) -> u64 {
    calls.iter().map(|(_, _, c)| c.cpu_ns).sum()
}

/// Calls that ask the driver for state or errors: a threaded or deferred driver must finish
/// the work queued before them to answer.
fn is_query(name: &str) -> bool {
    (name.starts_with("glGet") && !name.starts_with("glGetQueryObject"))
        || name.starts_with("glIs")
        || name == "glCheckFramebufferStatus"
}

fn state_queries(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let found: Vec<_> = calls.of(f).filter(|(_, n, _)| is_query(n)).collect();
    if found.is_empty() {
        return;
    }
    let (evidence, counts) = tallied(&found);
    let wall: u64 = found.iter().map(|(_, _, c)| c.duration_ns).sum();
    let frame_ns = f.end_ns.saturating_sub(f.begin_ns).max(1);
    let severity = if found.len() >= QUERY_CALLS || wall as f64 >= QUERY_SHARE * frame_ns as f64 {
        Severity::Warning
    } else {
        Severity::Info
    };
    out.push(Finding {
        frame: f.index,
        call: Some(found[0].0),
        rule: SYNC_CALLS.id,
        severity,
        title: format!(
            "{} state {} in the frame ({}), {:.3} ms",
            found.len(),
            if found.len() == 1 { "query" } else { "queries" },
            tally(&counts),
            wall as f64 / 1e6
        ),
        detail: "A glGet* or glGetError is answered only once the driver has caught up with \
                 the calls before it: a threaded driver (Mesa's glthread, most mobile drivers) \
                 stops and waits. The answers rarely change from one frame to the next."
            .into(),
        fix: "Query once at start-up and keep the values in the program; check errors in \
              debug builds only, or with a KHR_debug callback."
            .into(),
        evidence: evidence.with("wall_ns", wall),
        cost: Some(Cost {
            ns: wall,
            measured: "wall time of the queries".into(),
        }),
    });
}

/// Entry points that copy client memory into a texture.
fn is_texture_upload(name: &str) -> bool {
    matches!(
        name,
        "glTexImage1D"
            | "glTexImage2D"
            | "glTexImage3D"
            | "glTexSubImage1D"
            | "glTexSubImage2D"
            | "glTexSubImage3D"
            | "glCompressedTexImage2D"
            | "glCompressedTexImage3D"
            | "glCompressedTexSubImage2D"
            | "glCompressedTexSubImage3D"
            | "glTextureSubImage2D"
            | "glTextureSubImage3D"
    )
}

/// Bytes upload call `i` of frame `frame` read, as the agent measured them (`UPLD`; sessions
/// recorded before it have none). The agent owns the size rules (formats, types, unpack
/// state): they are not written again here.
fn upload_bytes(calls: &Calls, frame: u64, i: u32) -> Option<u64> {
    calls.uploads.get(&(frame, i)).map(|u| u.bytes)
}

fn texture_uploads(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let found: Vec<_> = calls
        .of(f)
        .filter(|(_, n, c)| is_texture_upload(n) && calls.arg(c, "pixels").unwrap_or(1) != 0)
        .collect();
    if found.is_empty() {
        return;
    }
    let bytes: u64 = found
        .iter()
        .filter_map(|(i, _, _)| upload_bytes(calls, f.index, *i))
        .sum();
    let (evidence, _) = tallied(&found);
    let spent = cpu(&found);
    out.push(Finding {
        frame: f.index,
        call: Some(found[0].0),
        rule: TEXTURE_UPLOAD_IN_FRAME.id,
        severity: Severity::Warning,
        title: format!(
            "{} texture {} during the frame, {} bytes, {:.3} ms of CPU time",
            found.len(),
            if found.len() == 1 {
                "upload"
            } else {
                "uploads"
            },
            bytes,
            spent as f64 / 1e6
        ),
        detail: "Texture data copied in while frames render costs CPU time in the frame and \
                 can make the driver wait for draws still using the texture."
            .into(),
        fix: "Load textures at start-up, or stream them from a pixel unpack buffer a frame \
              ahead; reuse textures rather than re-specifying them."
            .into(),
        evidence: evidence.with("bytes", bytes),
        cost: Some(Cost {
            ns: spent,
            measured: "CPU time of the uploads".into(),
        }),
    });
}

/// Internal formats that hold 8-bit colour: the ones compressed formats replace.
fn is_plain_colour(name: &str) -> bool {
    matches!(
        name,
        "GL_RGB"
            | "GL_RGBA"
            | "GL_RGB8"
            | "GL_RGBA8"
            | "GL_SRGB8"
            | "GL_SRGB8_ALPHA8"
            | "GL_SRGB_ALPHA"
            | "GL_LUMINANCE"
            | "GL_LUMINANCE_ALPHA"
            | "GL_BGRA"
            | "GL_BGRA8_EXT"
            | "GL_RGB565"
            | "GL_RGBA4"
            | "GL_RGB5_A1"
    )
}

/// Large 8-bit colour textures uploaded with data (render targets, specified without data,
/// cannot be compressed and are left alone).
fn uncompressed_textures(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    for (i, n, c) in calls.of(f) {
        if !matches!(n, "glTexImage2D" | "glTexImage3D") {
            continue;
        }
        if calls.arg(c, "pixels") == Some(0) || calls.arg(c, "level") != Some(0) {
            continue;
        }
        let format = calls.enum_arg(c, "internalformat");
        if !is_plain_colour(&format) {
            continue;
        }
        let w = calls.arg(c, "width").unwrap_or(0);
        let h = calls.arg(c, "height").unwrap_or(0);
        let d = calls.arg(c, "depth").unwrap_or(1);
        let texels = w.saturating_mul(h).saturating_mul(d);
        if texels < LARGE_TEXTURE_TEXELS {
            continue;
        }
        let bytes = upload_bytes(calls, f.index, i);
        out.push(Finding {
            frame: f.index,
            call: Some(i),
            rule: UNCOMPRESSED_TEXTURES.id,
            severity: Severity::Info,
            title: format!(
                "{w}×{h} texture uploaded uncompressed as {format}{}",
                bytes.map(|b| format!(", {b} bytes")).unwrap_or_default()
            ),
            detail: "An uncompressed colour texture takes 4 to 8 times the memory and memory \
                     bandwidth of a compressed one each time it is sampled."
                .into(),
            fix: "Ship it in a compressed format the GPU samples directly (ETC2, which every \
                  GLES 3 device has; ASTC; BC/S3TC on desktop)."
                .into(),
            evidence: Evidence::calls([i])
                .with("internalformat", &format)
                .with("width", w)
                .with("height", h)
                .with("bytes", bytes.map_or("unknown".into(), |b| b.to_string())),
            cost: None,
        });
    }
}

/// Object kinds by the creating and deleting entry points' names.
fn object_kind(name: &str) -> Option<(&'static str, bool)> {
    const KINDS: [(&str, &str, &str); 9] = [
        ("textures", "Textures", "Textures"),
        ("buffers", "Buffers", "Buffers"),
        ("framebuffers", "Framebuffers", "Framebuffers"),
        ("renderbuffers", "Renderbuffers", "Renderbuffers"),
        ("vertex arrays", "VertexArrays", "VertexArrays"),
        ("samplers", "Samplers", "Samplers"),
        ("queries", "Queries", "Queries"),
        ("shaders", "Shader", "Shader"),
        ("programs", "Program", "Program"),
    ];
    for (kind, created, deleted) in KINDS {
        for prefix in ["glGen", "glCreate"] {
            if name.strip_prefix(prefix) == Some(created) {
                return Some((kind, true));
            }
        }
        if name.strip_prefix("glDelete") == Some(deleted) {
            return Some((kind, false));
        }
    }
    None
}

/// Objects created and deleted in one frame; shaders and programs only when the frame does
/// not compile them (then `compile-in-frame` says it).
fn object_churn(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let compiles = calls.of(f).any(|(_, n, _)| is_compile(n));
    let mut made: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut found = Vec::new();
    for (i, n, c) in calls.of(f) {
        if let Some((kind, created)) = object_kind(n) {
            if compiles && matches!(kind, "shaders" | "programs") {
                continue;
            }
            let k = made.entry(kind).or_default();
            if created {
                k.0 += 1;
            } else {
                k.1 += 1;
            }
            found.push((i, n, c));
        }
    }
    let churned: Vec<(&str, (u64, u64))> = made
        .into_iter()
        .filter(|(_, (c, d))| *c > 0 && *d > 0)
        .collect();
    if churned.is_empty() {
        return;
    }
    let kinds: Vec<&str> = churned.iter().map(|(k, _)| *k).collect();
    found.retain(|(_, n, _)| object_kind(n).is_some_and(|(k, _)| kinds.contains(&k)));
    let spent = cpu(&found);
    let mut evidence = Evidence::calls(found.iter().map(|(i, _, _)| *i));
    for (k, (c, d)) in &churned {
        evidence = evidence.with(k, format!("{c} created, {d} deleted"));
    }
    out.push(Finding {
        frame: f.index,
        call: Some(found[0].0),
        rule: OBJECTS_PER_FRAME.id,
        severity: Severity::Warning,
        title: format!(
            "{} created and deleted during the frame, {:.3} ms of CPU time",
            kinds.join(", "),
            spent as f64 / 1e6
        ),
        detail: "Creating and deleting GL objects costs driver work and memory allocation \
                 every frame, and an object deleted while the GPU still uses it is kept alive \
                 by the driver until it is done."
            .into(),
        fix: "Create objects once at start-up and reuse them; update their contents instead."
            .into(),
        evidence,
        cost: Some(Cost {
            ns: spent,
            measured: "CPU time of the create and delete calls".into(),
        }),
    });
}

/// Calls that compile or link shaders.
fn is_compile(name: &str) -> bool {
    matches!(
        name,
        "glCompileShader" | "glLinkProgram" | "glProgramBinary" | "glCreateShaderProgramv"
    )
}

fn compiles(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let found: Vec<_> = calls.of(f).filter(|(_, n, _)| is_compile(n)).collect();
    if found.is_empty() {
        return;
    }
    let (evidence, _) = tallied(&found);
    let spent = cpu(&found);
    out.push(Finding {
        frame: f.index,
        call: Some(found[0].0),
        rule: COMPILE_IN_FRAME.id,
        severity: Severity::Warning,
        title: format!(
            "{} shader {} during the frame, {:.3} ms of CPU time",
            found.len(),
            if found.len() == 1 {
                "compile or link"
            } else {
                "compiles and links"
            },
            spent as f64 / 1e6
        ),
        detail: "Compiling and linking shaders takes milliseconds of CPU time; inside a frame \
                 it shows as a stutter."
            .into(),
        fix: "Compile and link every program at start-up (or on a loading screen), and keep \
              them."
            .into(),
        evidence,
        cost: Some(Cost {
            ns: spent,
            measured: "CPU time of the compile and link calls".into(),
        }),
    });
}

/// Non-indexed triangle lists of many vertices; where the frame's geometry was recorded, only
/// those whose positions repeat (so indices would save vertex work).
fn non_indexed_lists(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let geometry: HashMap<u32, &[[f32; 4]]> = calls
        .s
        .geometry
        .iter()
        .filter(|g| g.frame == f.index)
        .flat_map(|g| g.draws.iter().map(|d| (d.call, d.positions.as_slice())))
        .collect();
    let mut found = Vec::new();
    let mut vertices = 0u64;
    let mut repeated = (0u64, 0u64);
    for (i, n, c) in calls.of(f) {
        if !n.starts_with("glDrawArrays") || calls.arg(c, "mode") != Some(TRIANGLES) {
            continue;
        }
        let count = calls.arg(c, "count").unwrap_or(0);
        if count < LIST_VERTICES {
            continue;
        }
        if let Some(p) = geometry.get(&i) {
            let r = repeated_positions(p);
            if (r as f64) < REPEATED_SHARE * p.len() as f64 {
                continue;
            }
            repeated.0 += r;
            repeated.1 += p.len() as u64;
        }
        vertices += count;
        found.push((i, n, c));
    }
    if found.is_empty() {
        return;
    }
    let mut evidence = Evidence::calls(found.iter().map(|(i, _, _)| *i)).with("vertices", vertices);
    if repeated.1 > 0 {
        evidence = evidence.with(
            "repeated_positions",
            format!("{} of {}", repeated.0, repeated.1),
        );
    }
    out.push(Finding {
        frame: f.index,
        call: Some(found[0].0),
        rule: NO_STRIPS_OR_INDICES.id,
        severity: Severity::Info,
        title: format!(
            "{} non-indexed triangle-list {} of {vertices} vertices",
            found.len(),
            if found.len() == 1 { "draw" } else { "draws" }
        ),
        detail: "glDrawArrays with GL_TRIANGLES shades every shared vertex once per triangle \
                 that uses it; a mesh's vertices are typically shared by about six triangles."
            .into(),
        fix: "Draw meshes with glDrawElements and an index buffer (ordered for the vertex \
              cache), or as triangle strips."
            .into(),
        evidence,
        cost: None,
    });
}

/// The frame's `glBegin` … `glEnd` blocks (each thread's own): one finding with every block's
/// `glEnd` (the draw), the calls inside them and their vertices, and what the blocks' calls
/// cost on the CPU but the drawing itself: the wall time of each `glBegin` and of the calls
/// inside, the `glEnd`, which draws, left out.
fn immediate_blocks(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    // Per thread: (wall ns, calls inside, vertices) of its open block.
    let mut open: HashMap<u32, (u64, u64, u64)> = HashMap::default();
    let mut ends = Vec::new();
    let (mut ns, mut inside, mut vertices) = (0u64, 0u64, 0u64);
    for (i, n, c) in calls.of(f) {
        match n {
            "glBegin" => {
                open.insert(c.thread, (c.duration_ns, 0, 0));
            }
            "glEnd" => {
                if let Some((t, k, v)) = open.remove(&c.thread) {
                    ends.push(i);
                    ns += t;
                    inside += k;
                    vertices += v;
                }
            }
            _ => {
                if let Some(block) = open.get_mut(&c.thread) {
                    block.0 += c.duration_ns;
                    block.1 += 1;
                    if emits_vertex(n) {
                        block.2 += 1;
                    }
                }
            }
        }
    }
    let Some(&first) = ends.first() else {
        return;
    };
    let blocks = ends.len();
    out.push(Finding {
        frame: f.index,
        call: Some(first),
        rule: IMMEDIATE_MODE.id,
        severity: Severity::Info,
        title: format!(
            "{blocks} glBegin/glEnd {}: {inside} calls inside for {vertices} vertices",
            if blocks == 1 { "block" } else { "blocks" }
        ),
        detail: "Immediate mode hands the driver each vertex attribute through a call of its \
                 own, and the driver copies them all into a buffer again every frame; a vertex \
                 array in a buffer object draws the same block with one call."
            .into(),
        fix: "Keep the vertices in a buffer object (glBufferData once, glBufferSubData for \
              what changes) and draw each block with one glDrawArrays or glDrawElements; \
              blocks that never change can go into display lists as a first step."
            .into(),
        evidence: Evidence::calls(ends)
            .with("calls_inside", inside)
            .with("vertices", vertices),
        cost: Some(Cost {
            ns,
            measured: "wall time of the blocks' glBegin and the calls inside them (glEnd, \
                       which draws, left out)"
                .into(),
        }),
    });
}

/// Positions equal to an earlier one of the same list.
fn repeated_positions(p: &[[f32; 4]]) -> u64 {
    let mut seen = HashSet::with_capacity_and_hasher(p.len(), Default::default());
    p.iter()
        .filter(|v| !seen.insert(v.map(f32::to_bits)))
        .count() as u64
}

/// A read-back into client memory followed by a texture upload of the same size: rendering
/// to a texture through the CPU.
fn readback_to_texture(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let mut reads: Vec<(u32, &Call, u64, u64)> = Vec::new();
    for (i, n, c) in calls.of(f) {
        if matches!(n, "glReadPixels" | "glReadnPixels") {
            let (Some(w), Some(h)) = (calls.arg(c, "width"), calls.arg(c, "height")) else {
                continue;
            };
            reads.push((i, c, w, h));
        } else if matches!(n, "glTexImage2D" | "glTexSubImage2D") {
            let size = (calls.arg(c, "width"), calls.arg(c, "height"));
            let Some(&(r, rc, w, h)) = reads
                .iter()
                .rev()
                .find(|(_, _, w, h)| size == (Some(*w), Some(*h)))
            else {
                continue;
            };
            let spent = rc.duration_ns + c.cpu_ns;
            out.push(Finding {
                frame: f.index,
                call: Some(i),
                rule: READBACK_RTT.id,
                severity: Severity::Warning,
                title: format!(
                    "{w}×{h} pixels read back (call {r}) and uploaded into a texture, {:.3} ms",
                    spent as f64 / 1e6
                ),
                detail: "Rendering to a texture through the CPU waits for the GPU to finish, \
                         copies the pixels out and back in, and stops the CPU and GPU from \
                         overlapping."
                    .into(),
                fix: "Render into the texture directly with a framebuffer object, or copy on \
                      the GPU (glCopyTexSubImage2D, glBlitFramebuffer)."
                    .into(),
                evidence: Evidence::calls([r, i]).with("width", w).with("height", h),
                cost: Some(Cost {
                    ns: spent,
                    measured: "wall time of the read-back and CPU time of the upload".into(),
                }),
            });
        }
    }
}

/// Draws whose first occurrence (after the capture's first frame) costs far more CPU time
/// than their later ones: the driver compiled a shader variant on first use. A draw is its call site, entry
/// point and program (one helper drawing with many programs is many draws).
fn first_use_hitches(calls: &Calls, programs: &HashMap<(u64, u32), u64>, out: &mut Vec<Finding>) {
    // (context, call site, entry point, program) → (frame, call, cpu) of each occurrence.
    type Site = (u64, u64, u16, Option<u64>);
    let mut seen: HashMap<Site, Vec<(u64, u32, u64)>> = HashMap::default();
    let mut first_frame: HashMap<Site, u64> = HashMap::default();
    for f in &calls.s.frames {
        for (i, _, c) in calls.of(f) {
            if calls.s.functions.functions[usize::from(c.func)].class != CallClass::Draw {
                continue;
            }
            let key = (
                c.context,
                c.callsite,
                c.func,
                programs.get(&(f.index, i)).copied(),
            );
            first_frame.entry(key).or_insert(f.index);
            seen.entry(key).or_default().push((f.index, i, c.cpu_ns));
        }
    }
    let first_captured = calls.s.frames.first().map_or(0, |f| f.index);
    let mut hitches: Vec<_> = seen
        .into_iter()
        // Not in the capture's first frame: frame 0 is a launched program's set-up, and the
        // first frame after an attach is only the first this capture saw.
        .filter(|(k, _)| first_frame[k] > first_captured)
        .filter_map(|(_, occ)| {
            let (frame, call, first) = occ[0];
            let mut later: Vec<u64> = occ[1..].iter().map(|o| o.2).collect();
            if later.len() < HITCH_LATER {
                return None;
            }
            later.sort_unstable();
            let median = later[later.len() / 2];
            let above = first.saturating_sub(median);
            (first as f64 >= HITCH_RATIO * median as f64 && above >= HITCH_NS).then_some((
                frame,
                call,
                first,
                median,
                later.len(),
                above,
            ))
        })
        .collect();
    hitches.sort_unstable();
    for (frame, call, first, median, n, above) in hitches {
        out.push(Finding {
            frame,
            call: Some(call),
            rule: FIRST_USE_COMPILE.id,
            severity: Severity::Warning,
            title: format!(
                "first draw from this call site took {:.3} ms of CPU time, {:.0}x its later \
                 median ({:.3} ms over {n})",
                first as f64 / 1e6,
                first as f64 / median.max(1) as f64,
                median as f64 / 1e6
            ),
            detail: "Drivers compile (part of) a shader when it is first drawn with, or when \
                     it is drawn with new state; in the middle of a session that is a stutter."
                .into(),
            fix: "Draw once with each program and state combination at start-up (off screen) \
                  so the compile happens there, or use program binaries."
                .into(),
            evidence: Evidence::calls([call])
                .with("first_cpu_ns", first)
                .with("later_median_cpu_ns", median)
                .with("later_occurrences", n),
            cost: Some(Cost {
                ns: above,
                measured: "CPU time of the first draw above its later median".into(),
            }),
        });
    }
}

/// Whether `c` passes a pointer to data the capture cannot see (so two calls with the same
/// arguments may still differ).
fn reads_unseen_memory(calls: &Calls, c: &Call) -> bool {
    let info = &calls.s.functions.functions[usize::from(c.func)];
    info.params.iter().zip(&c.args).any(|(p, &v)| {
        p.kind == ValueKind::Ptr && v != 0 && p.c_type.trim_start().starts_with("const")
    })
}

/// Whether call `x` of frame `fx` and call `y` of frame `fy` do the same: the same entry
/// point and arguments, and for uploads the same content (wherever it was read from); a call
/// reading memory the capture did not hash is never known to be the same.
fn same_call(
    calls: &Calls,
    (fx, ix, x): (u64, u32, &Call),
    (fy, iy, y): (u64, u32, &Call),
) -> bool {
    if x.func != y.func {
        return false;
    }
    match (calls.uploads.get(&(fx, ix)), calls.uploads.get(&(fy, iy))) {
        (Some(a), Some(b)) => {
            let info = &calls.s.functions.functions[usize::from(y.func)];
            let values_equal = info
                .params
                .iter()
                .zip(x.args.iter().zip(&y.args))
                .all(|(p, (a, b))| p.kind == ValueKind::Ptr || a == b);
            a.hash.is_some() && a.hash == b.hash && values_equal
        }
        _ => x.args == y.args && !reads_unseen_memory(calls, y),
    }
}

/// The program never asked which renderer it runs on (known only when the agent was loaded
/// at its start).
fn renderer_unchecked(calls: &Calls, out: &mut Vec<Finding>) {
    let Some(q) = calls.s.end.as_ref().and_then(|e| e.renderer_query.as_ref()) else {
        return;
    };
    if q.ever() != Some(false) {
        return;
    }
    let Some(first) = calls.s.frames.first() else {
        return;
    };
    // The agent watches GL's renderer strings: a program that draws only with Vulkan reads
    // its device's properties instead, before any frame.
    let draws_with_gl = calls.s.frames.iter().flat_map(|f| &f.calls).any(|c| {
        let name = calls.names[usize::from(c.func)];
        name.starts_with("gl") || name.starts_with("egl")
    });
    if !draws_with_gl {
        return;
    }
    out.push(Finding {
        frame: first.index,
        call: None,
        rule: RENDERER_UNCHECKED.id,
        severity: Severity::Info,
        title: "the program never read GL_RENDERER, GL_VERSION or the extension list".into(),
        detail: "The same content runs on a GPU and on a software renderer such as llvmpipe, \
                 which is many times slower; a program that never asks cannot scale its \
                 content down or pick faster extensions."
            .into(),
        fix: "Read GL_RENDERER, GL_VERSION and the extensions at start-up and choose the \
              content's level of detail (and optional features) from them."
            .into(),
        evidence: Evidence::default()
            .with("loaded", "at the program's start")
            .with("glGetString(GL_RENDERER)", "never called"),
        cost: None,
    });
}

/// Uploads (texture or buffer) of content already uploaded earlier in the capture, per frame
/// from frame 1.
fn same_uploads(calls: &Calls, out: &mut Vec<Finding>) {
    let mut seen: HashMap<u64, (u64, u32)> = HashMap::default();
    for fu in &calls.s.uploads {
        let mut repeats = Vec::new();
        for u in &fu.uploads {
            let Some(h) = u.hash else { continue };
            if calls.nested.parent(fu.frame, u.call).is_some() {
                continue;
            }
            match seen.get(&h) {
                Some(&first) if fu.frame >= 1 => repeats.push((u, first)),
                Some(_) => {}
                None => {
                    seen.insert(h, (fu.frame, u.call));
                }
            }
        }
        let bytes: u64 = repeats.iter().map(|(u, _)| u.bytes).sum();
        if repeats.is_empty() || bytes < REPEATED_BYTES {
            continue;
        }
        let Some(frame) = calls.s.frames.iter().find(|f| f.index == fu.frame) else {
            continue;
        };
        let spent: u64 = repeats
            .iter()
            .filter_map(|(u, _)| frame.calls.get(u.call as usize))
            .map(|c| c.cpu_ns)
            .sum();
        let (first_frame, first_call) = repeats[0].1;
        out.push(Finding {
            frame: fu.frame,
            call: Some(repeats[0].0.call),
            rule: SAME_UPLOAD.id,
            severity: Severity::Warning,
            title: format!(
                "{} {} of data already uploaded ({bytes} bytes), {:.3} ms of CPU time",
                repeats.len(),
                if repeats.len() == 1 {
                    "upload"
                } else {
                    "uploads"
                },
                spent as f64 / 1e6
            ),
            detail: "The same bytes are copied into GL again: the copy, and the driver's wait \
                     for draws still using the old contents, buy nothing."
                .into(),
            fix: "Upload once and keep the buffer or texture; upload only what changed.".into(),
            evidence: Evidence::calls(repeats.iter().map(|(u, _)| u.call))
                .with("bytes", bytes)
                .with(
                    "first_uploaded",
                    format!("frame {first_frame} call {first_call}"),
                ),
            cost: Some(Cost {
                ns: spent,
                measured: "CPU time of the repeated uploads".into(),
            }),
        });
    }
}

/// Consecutive frames with the same calls and arguments (and no data the capture cannot
/// compare), drawing something: the program renders again what is already shown.
fn identical_frames(ctx: &Context, calls: &Calls, out: &mut Vec<Finding>) {
    let frames: Vec<&Frame> = calls.s.frames.iter().filter(|f| f.index >= 1).collect();
    for pair in frames.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.index != a.index + 1 || a.calls.len() != b.calls.len() {
            continue;
        }
        let draws = b
            .calls
            .iter()
            .filter(|c| calls.s.functions.functions[usize::from(c.func)].class == CallClass::Draw)
            .count();
        if draws == 0 {
            continue;
        }
        let same =
            a.calls.iter().zip(&b.calls).enumerate().all(|(i, (x, y))| {
                same_call(calls, (a.index, i as u32, x), (b.index, i as u32, y))
            });
        if !same {
            continue;
        }
        let cost = program_frame_cost(ctx, b);
        out.push(Finding {
            frame: b.index,
            call: None,
            rule: IDENTICAL_FRAMES.id,
            severity: Severity::Warning,
            title: format!(
                "frame {} repeats frame {}: the same {} calls with the same arguments",
                b.index,
                a.index,
                b.calls.len()
            ),
            detail: "Nothing changed, yet the frame was rendered again: the GPU and CPU time \
                     and the power it took bought nothing."
                .into(),
            fix: "Render only when something changes (damage tracking, a dirty flag), or \
                  present the last frame again."
                .into(),
            evidence: Evidence::default()
                .with("previous_frame", a.index)
                .with("calls", b.calls.len())
                .with("draws", draws),
            cost,
        });
    }
}

/// What frame `f` costs the program itself, not under the capture: a full-mode capture
/// stretches a frame many times (117 ms for a 3.2 ms frame on an H100), so its duration says
/// nothing of what rendering it again wasted. The GPU's time for it, in order of trust:
/// pipelined timestamps where the renderer makes them mean a call's own cost (the program's
/// own pace), else the sum of its work calls measured one at a time; a timeline capture's
/// duration is the program's own within a few percent. `None` when nothing says.
fn program_frame_cost(ctx: &Context, f: &Frame) -> Option<Cost> {
    let stats = ctx.view(f.index)?.stats?;
    let meaningful =
        !ctx.s.contexts.is_empty() && ctx.s.contexts.iter().all(|c| c.pipelined_meaningful);
    let ns = |ms: f64| (ms * 1e6).round() as u64;
    if let Some(ms) = stats.gpu_pipelined_ms.filter(|_| meaningful) {
        return Some(Cost {
            ns: ns(ms),
            measured: "the frame's GPU time from pipelined timestamps (the program's own pace)"
                .into(),
        });
    }
    if let Some(ms) = stats.gpu_serialized_ms {
        return Some(Cost {
            ns: ns(ms),
            measured: "the frame's GPU time, its work calls measured one at a time".into(),
        });
    }
    (ctx.s.info.mode == CaptureMode::Timeline).then(|| Cost {
        ns: f.end_ns.saturating_sub(f.begin_ns),
        measured: "the frame's duration in a timeline capture (the program's own, within a \
                   few percent)"
            .into(),
    })
}

/// Calls that make the CPU wait for the GPU.
const STALLS: [&str; 6] = [
    "glFinish",
    "glReadPixels",
    "glReadnPixels",
    "glGetTexImage",
    "glGetBufferSubData",
    "glClientWaitSync",
];

/// Whether `c`, a call of one of [`STALLS`] named `name`, made the CPU wait: a
/// `glClientWaitSync` whose fence had signalled before it (`GL_ALREADY_SIGNALED`: a fence
/// polled a frame later, as the rule's own fix says, and as mpv does) did not, nor did one
/// that timed out with a timeout of 0 (a poll). Without its result (an older session), it is
/// taken to have waited.
fn waited(calls: &Calls, name: &str, c: &Call) -> bool {
    if name != "glClientWaitSync" {
        return true;
    }
    match c.ret {
        Some(ALREADY_SIGNALED) => false,
        Some(TIMEOUT_EXPIRED) => calls.arg(c, "timeout") != Some(0),
        _ => true,
    }
}

/// The read-backs that write into the buffer bound to `GL_PIXEL_PACK_BUFFER` when one is:
/// queued, then, not waited for (the rule's own fix).
const PACKED: [&str; 3] = ["glReadPixels", "glReadnPixels", "glGetTexImage"];

/// GL calls that wait for the GPU; those a VG library makes (`nested` in a VG call, e.g. the
/// glFinish inside vgFinish) are the VG rule's (`vg-sync-every-frame`). A read-back into a
/// pixel pack buffer bound earlier in the frame is none (one bound before the frame is not
/// seen: its read-backs are still listed).
fn stalls(calls: &Calls, f: &Frame, out: &mut Vec<Finding>) {
    let (s, nested) = (calls.s, calls.nested);
    // Per context: whether a pixel pack buffer is bound, as the frame's calls have set it.
    let mut packing: Vec<(u64, bool)> = Vec::new();
    for (i, c) in f.calls.iter().enumerate() {
        let Some(info) = s.functions.functions.get(c.func as usize) else {
            continue;
        };
        let name = info.name.as_str();
        if base_name(name) == "glBindBuffer" && calls.arg(c, "target") == Some(PIXEL_PACK_BUFFER) {
            let bound = calls.arg(c, "buffer").is_some_and(|b| b as u32 != 0);
            match packing.iter_mut().find(|(ctx, _)| *ctx == c.context) {
                Some(p) => p.1 = bound,
                None => packing.push((c.context, bound)),
            }
        }
        if nested.parent(f.index, i as u32).is_some() {
            continue;
        }
        let into_buffer = PACKED.contains(&name)
            && packing
                .iter()
                .any(|&(ctx, bound)| ctx == c.context && bound);
        if STALLS.contains(&name) && !into_buffer && waited(calls, name, c) {
            out.push(Finding {
                frame: f.index,
                call: Some(i as u32),
                rule: PIPELINE_STALL.id,
                severity: Severity::Warning,
                title: format!(
                    "{} waits for the GPU ({:.3} ms on the calling thread)",
                    info.name,
                    c.duration_ns as f64 / 1e6
                ),
                detail: "The CPU stops until the GPU has finished everything queued, so the \
                         two no longer overlap."
                    .into(),
                fix: "Read back asynchronously (pixel buffer objects, fences polled a frame \
                      later) or not at all."
                    .into(),
                evidence: Evidence::calls([i as u32]).with("wall_ns", c.duration_ns),
                cost: Some(Cost {
                    ns: c.duration_ns,
                    measured: "the call's wall time".into(),
                }),
            });
        }
    }
}
