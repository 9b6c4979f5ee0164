//! Checklist rules that need the state a draw runs in, read from the state tracker
//! ([`crate::statetrack::track_with`]): depth buffers not cleared, client-side vertex arrays,
//! minified textures without mipmaps, textures modified after a draw used them in the same
//! frame, no multisampling, colour-masked and discard-heavy passes, and blending on opaque
//! output. What the capture did not see (state set before it, a texture created before it)
//! is unknown, and a rule that would need it stays silent.

use crate::cost::Analysis;
use crate::findings::{Cost, Evidence, Finding, Severity};
use crate::statetrack::{track_with, View};
use gpuheat_session::{Call, CallClass, Frame, Nested, Session};
// Fx: small integer keys looked up per draw.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

const DEPTH_BUFFER_BIT: u64 = 0x0100;
const DEPTH_TEST: u64 = 0x0B71;
const BLEND: u64 = 0x0BE2;
const DEPTH: u64 = 0x1801;
const DEPTH_STENCIL: u64 = 0x84F9;
const TEXTURE_2D: u64 = 0x0DE1;
const TEXTURE_MIN_FILTER: u64 = 0x2801;
const NEAREST: u64 = 0x2600;
const LINEAR: u64 = 0x2601;
const ELEMENT_ARRAY_BUFFER: u64 = 0x8893;
const READ_FRAMEBUFFER: u64 = 0x8CA8;
const DEPTH_ATTACHMENT: u64 = 0x8D00;
const DEPTH_STENCIL_ATTACHMENT: u64 = 0x821A;
const COLOR_ATTACHMENT0: u64 = 0x8CE0;
const TEXTURE_2D_MULTISAMPLE: u64 = 0x9100;
const FRAGMENT_SHADER: u32 = 0x8B30;
const ZERO: u64 = 0;
const ONE_MINUS_SRC_ALPHA: u64 = 0x0303;

/// A texture counts as minified when it has this many texels per fragment of the draw
/// (2 × 2: a level of detail of 1).
const MINIFIED_TEXELS_PER_FRAGMENT: u64 = 4;
/// Share of a frame's fragments drawn with colour writes off from which the pass is called
/// out.
const MASKED_SHARE: f64 = 0.25;
/// Share of the surface a discarding draw must cover to be called out.
const DISCARD_SHARE: f64 = 0.2;

/// What the state walk gathered, for the rules to judge once it is done.
#[derive(Default)]
struct Gathered {
    /// Per frame: draws with the depth test on into a framebuffer with depth that the frame
    /// did not clear first.
    depth_uncleared: Vec<(u64, u32, u64)>,
    /// (frame, draw, attributes read from client memory, client indices).
    client: Vec<(u64, u32, Vec<u64>, bool)>,
    /// (frame, draw, texture, texels, fragments, min filter).
    minified: Vec<(u64, u32, u64, u64, u64, u64)>,
    /// (frame, upload call, texture, the draw that used it earlier in the frame).
    modified: Vec<(u64, u32, u64, u32)>,
    /// (frame, draw, fragments) of draws with every colour write off.
    masked: Vec<(u64, u32, u64)>,
    /// (frame, draw, fragments, surface pixels) of draws whose program discards.
    discarding: Vec<(u64, u32, u64, u64)>,
    /// (frame, draw, program) of blended draws whose output is opaque.
    blended_opaque: Vec<(u64, u32, u64)>,
    /// Samples of each draw's framebuffer: `None` when unknown.
    draw_samples: Vec<Option<u64>>,
    /// Whether any multisampled storage was made.
    multisample_storage: bool,
    /// The program in use at each draw, by (frame, call).
    programs: HashMap<(u64, u32), u64>,
}

/// Runs the rules; returns the program in use at each draw (by frame and call), for the
/// rules that judge draws by program.
pub(crate) fn check(
    s: &Session,
    nested: &Nested,
    fragments: &HashMap<(u64, u32), u64>,
    out: &mut Vec<Finding>,
) -> HashMap<(u64, u32), u64> {
    let g = gather(s, nested, fragments);
    report(s, &g, fragments, out);
    g.programs
}

/// Fragments of each draw, by (frame, call): the heat maps' exact counts where painted,
/// else the fragment-shader counter, else samples passed.
pub(crate) fn fragments(s: &Session, a: &Analysis) -> HashMap<(u64, u32), u64> {
    let mut m = HashMap::default();
    for d in &a.draws {
        let c = &d.counters;
        if let Some(n) = c
            .get(gpuheat_session::counter_names::FRAGMENT_SHADER_INVOCATIONS)
            .or_else(|| c.get(gpuheat_session::counter_names::SAMPLES_PASSED))
        {
            m.insert((d.frame, d.call), *n);
        }
    }
    for h in &s.heat {
        for d in &h.draws {
            m.insert((h.frame, d.call), d.fragments);
        }
    }
    for t in &s.target_heat {
        for d in &t.draws {
            m.insert((t.frame, d.call), d.fragments);
        }
    }
    m
}

/// What the fragment shader of each (context, program) does, from the last link seen:
/// whether it discards, and whether it writes only opaque colour.
fn fragment_shaders(s: &Session) -> HashMap<(u64, u64), (bool, bool)> {
    let mut out = HashMap::default();
    for p in &s.programs {
        for (stage, src) in p.stages.iter().zip(&p.sources) {
            if *stage == FRAGMENT_SHADER {
                out.insert(
                    (p.context, u64::from(p.program)),
                    (discards(src), writes_opaque(src)),
                );
            }
        }
    }
    out
}

/// Whether a fragment shader source discards.
fn discards(src: &str) -> bool {
    src.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == "discard")
}

/// Whether every colour the fragment shader writes has alpha 1 written as a literal: each
/// assignment to an output is `vec4(…, 1.0)` (or `1`). Sources it cannot read this way are
/// not opaque.
fn writes_opaque(src: &str) -> bool {
    let outputs: Vec<String> = src
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("out ").or_else(|| {
                l.split_once(") out ").map(|(_, r)| r) // layout(location = 0) out …
            })?;
            let name = rest.split_whitespace().nth(1)?;
            Some(name.trim_end_matches(';').to_string())
        })
        .chain(std::iter::once("gl_FragColor".to_string()))
        .collect();
    let mut assigned = 0;
    for stmt in src.split(';') {
        let Some((lhs, rhs)) = stmt.split_once('=') else {
            continue;
        };
        let lhs = lhs.split_whitespace().last().unwrap_or("");
        if !outputs.iter().any(|o| o == lhs) || rhs.starts_with('=') {
            continue;
        }
        assigned += 1;
        let rhs: String = rhs.chars().filter(|c| !c.is_whitespace()).collect();
        let Some(args) = rhs.strip_prefix("vec4(").and_then(|r| r.strip_suffix(')')) else {
            return false;
        };
        let last = args.rsplit(',').next().unwrap_or("");
        if !matches!(last, "1.0" | "1" | "1." | "1.0f") {
            return false;
        }
    }
    assigned > 0
}

/// Walks every call with the tracker and gathers what the rules judge.
fn gather(s: &Session, nested: &Nested, fragments: &HashMap<(u64, u32), u64>) -> Gathered {
    let shaders = fragment_shaders(s);
    let depth_bits: HashMap<u64, u32> = s
        .states
        .iter()
        .filter_map(|st| Some((st.context, st.depth_bits?)))
        .collect();
    let default_samples: HashMap<u64, u32> = s
        .states
        .iter()
        .filter_map(|st| Some((st.context, st.samples?)))
        .collect();
    let surfaces: HashMap<u64, u64> = s
        .states
        .iter()
        .filter_map(|st| {
            let [w, h] = st.surface?;
            Some((st.context, u64::from(w) * u64::from(h)))
        })
        .collect();
    // The pixels of the map each painted draw went into.
    let mut map_pixels: HashMap<(u64, u32), u64> = HashMap::default();
    for h in &s.heat {
        for d in &h.draws {
            map_pixels.insert((h.frame, d.call), h.pixels());
        }
    }
    for t in &s.target_heat {
        for d in &t.draws {
            let px = u64::from(t.target.width) * u64::from(t.target.height);
            map_pixels.insert((t.frame, d.call), px);
        }
    }
    let sampled: HashMap<(u64, u32), &[u32]> = s
        .flow
        .iter()
        .flat_map(|f| {
            f.draws
                .iter()
                .map(move |d| ((f.frame, d.call), &d.sampled[..]))
        })
        .collect();
    let names = s.functions.names();
    let draw_class: Vec<bool> = s
        .functions
        .functions
        .iter()
        .map(|f| f.class == CallClass::Draw)
        .collect();

    let mut g = Gathered::default();
    // (context, framebuffer) with a depth attachment seen; renderbuffer and framebuffer
    // colour samples seen.
    let mut has_depth: HashSet<(u64, u64)> = HashSet::default();
    let mut rb_samples: HashMap<(u64, u64), u64> = HashMap::default();
    let mut fb_samples: HashMap<(u64, u64), u64> = HashMap::default();
    // Level-0 texels of textures specified in the capture.
    let mut texels: HashMap<(u64, u64), u64> = HashMap::default();
    // Per frame: framebuffers whose depth was cleared; textures drawn with, and by which draw.
    let mut frame_seen = u64::MAX;
    let mut cleared: HashSet<(u64, u64)> = HashSet::default();
    let mut drawn_with: HashMap<(u64, u64), u32> = HashMap::default();

    let mut visit = |f: &Frame, i: u32, c: &Call, v: &View| {
        if f.index != frame_seen {
            frame_seen = f.index;
            cleared.clear();
            drawn_with.clear();
        }
        let Some(&name) = names.get(usize::from(c.func)) else {
            return;
        };
        let name = name.trim_end_matches("EXT").trim_end_matches("OES");
        let arg = |k: usize| c.args.get(k).copied().unwrap_or(0);
        let ctx = c.context;
        let bound = |target: u64| -> Option<u64> {
            if target == READ_FRAMEBUFFER {
                None // Attachments of the read framebuffer: not followed.
            } else {
                v.draw_framebuffer()
            }
        };
        match name {
            "glClear" if arg(0) & DEPTH_BUFFER_BIT != 0 => {
                if let Some(fb) = v.draw_framebuffer() {
                    cleared.insert((ctx, fb));
                }
            }
            "glClearBufferfv" | "glClearBufferfi" | "glClearBufferiv"
                if matches!(arg(0), DEPTH | DEPTH_STENCIL) =>
            {
                if let Some(fb) = v.draw_framebuffer() {
                    cleared.insert((ctx, fb));
                }
            }
            "glInvalidateFramebuffer" | "glDiscardFramebuffer" => {
                if let Some(fb) = bound(arg(0)) {
                    cleared.insert((ctx, fb));
                }
            }
            "glFramebufferRenderbuffer"
            | "glFramebufferTexture2D"
            | "glFramebufferTexture"
            | "glFramebufferTexture2DMultisample" => {
                if let Some(fb) = bound(arg(0)) {
                    if matches!(arg(1), DEPTH_ATTACHMENT | DEPTH_STENCIL_ATTACHMENT) {
                        has_depth.insert((ctx, fb));
                    }
                    if arg(1) == COLOR_ATTACHMENT0 {
                        let samples = match name {
                            "glFramebufferRenderbuffer" => rb_samples.get(&(ctx, arg(3))).copied(),
                            "glFramebufferTexture2DMultisample" => Some(arg(5)),
                            "glFramebufferTexture2D" if arg(2) == TEXTURE_2D_MULTISAMPLE => Some(2),
                            _ => Some(0),
                        };
                        match samples {
                            Some(n) => fb_samples.insert((ctx, fb), n),
                            None => fb_samples.remove(&(ctx, fb)),
                        };
                    }
                }
                if name == "glFramebufferTexture2DMultisample" && arg(5) > 1 {
                    g.multisample_storage = true;
                }
            }
            "glRenderbufferStorage" => {
                if let Some(rb) = v.renderbuffer() {
                    rb_samples.insert((ctx, rb), 0);
                }
            }
            "glRenderbufferStorageMultisample" => {
                if let Some(rb) = v.renderbuffer() {
                    rb_samples.insert((ctx, rb), arg(1));
                }
                if arg(1) > 1 {
                    g.multisample_storage = true;
                }
            }
            "glTexStorage2DMultisample"
            | "glTexImage2DMultisample"
            | "glTexStorage3DMultisample" => g.multisample_storage = true,
            "glTexImage2D" | "glCompressedTexImage2D" if arg(0) == TEXTURE_2D && arg(1) == 0 => {
                if let Some(t) = v.active_texture(TEXTURE_2D) {
                    texels.insert((ctx, t), arg(3).saturating_mul(arg(4)));
                }
            }
            "glTexStorage2D" if arg(0) == TEXTURE_2D => {
                if let Some(t) = v.active_texture(TEXTURE_2D) {
                    texels.insert((ctx, t), arg(3).saturating_mul(arg(4)));
                }
            }
            _ => {}
        }
        // Uploads into a texture a draw of this frame already used.
        if f.index >= 1
            && nested.parent(f.index, i).is_none()
            && matches!(
                name,
                "glTexImage2D"
                    | "glTexSubImage2D"
                    | "glCompressedTexImage2D"
                    | "glCompressedTexSubImage2D"
                    | "glCopyTexSubImage2D"
            )
            && arg(0) == TEXTURE_2D
        {
            if let Some(t) = v.active_texture(TEXTURE_2D) {
                if let Some(&draw) = drawn_with.get(&(ctx, t)) {
                    g.modified.push((f.index, i, t, draw));
                }
            }
        }
        if !draw_class
            .get(usize::from(c.func))
            .copied()
            .unwrap_or(false)
        {
            return;
        }
        let program = v.program();
        if let Some(p) = program {
            g.programs.insert((f.index, i), p);
        }
        let fb = v.draw_framebuffer();
        let textures = v.textures(TEXTURE_2D);
        for (_, t) in &textures {
            drawn_with.entry((ctx, *t)).or_insert(i);
        }
        if f.index == 0 || nested.parent(f.index, i).is_some() {
            return;
        }
        g.draw_samples.push(fb.and_then(|fb| {
            if fb == 0 {
                default_samples.get(&ctx).map(|&n| u64::from(n))
            } else {
                fb_samples.get(&(ctx, fb)).copied()
            }
        }));
        let frags = fragments.get(&(f.index, i)).copied();
        // Depth test on, into a framebuffer with depth, not cleared this frame.
        if let (Some(true), Some(fb)) = (v.enabled(DEPTH_TEST), fb) {
            let depth = if fb == 0 {
                depth_bits.get(&ctx).is_some_and(|&b| b > 0)
            } else {
                has_depth.contains(&(ctx, fb))
            };
            if depth && !cleared.contains(&(ctx, fb)) {
                g.depth_uncleared.push((f.index, i, fb));
            }
        }
        // Client memory read by the draw.
        let attributes = v.client_arrays().unwrap_or_default();
        let client_indices = names[usize::from(c.func)].starts_with("glDrawElements")
            && v.buffer(ELEMENT_ARRAY_BUFFER) == Some(0)
            && arg(3) != 0;
        if !attributes.is_empty() || client_indices {
            g.client.push((f.index, i, attributes, client_indices));
        }
        // Minified textures without mipmaps: those the draw sampled (the heat capture's
        // flow says), else the one on the active unit.
        let candidates: Vec<u64> = match sampled.get(&(f.index, i)) {
            Some(list) => list.iter().map(|&t| u64::from(t)).collect(),
            None => v.active_texture(TEXTURE_2D).into_iter().collect(),
        };
        if let Some(n) = frags.filter(|&n| n > 0) {
            for t in candidates {
                let filter = v.texture_parameter(t, TEXTURE_2D, TEXTURE_MIN_FILTER);
                let (Some(filter @ (NEAREST | LINEAR)), Some(&size)) =
                    (filter, texels.get(&(ctx, t)))
                else {
                    continue;
                };
                if size >= MINIFIED_TEXELS_PER_FRAGMENT * n {
                    g.minified.push((f.index, i, t, size, n, filter));
                }
            }
        }
        if v.color_mask() == Some([false; 4]) {
            g.masked.push((f.index, i, frags.unwrap_or(0)));
        }
        if let Some(p) = program {
            if let Some(&(discarding, opaque)) = shaders.get(&(ctx, p)) {
                let surface = map_pixels
                    .get(&(f.index, i))
                    .copied()
                    .or_else(|| v.viewport().map(|[_, _, w, h]| w.saturating_mul(h)))
                    .or_else(|| surfaces.get(&ctx).copied())
                    .unwrap_or(0);
                if discarding {
                    if let Some(n) = frags {
                        g.discarding.push((f.index, i, n, surface));
                    }
                }
                if opaque && v.enabled(BLEND) == Some(true) {
                    let dst = v.blend_func().map(|(_, d)| d);
                    if matches!(dst, Some(ONE_MINUS_SRC_ALPHA | ZERO)) {
                        g.blended_opaque.push((f.index, i, p));
                    }
                }
            }
        }
    };
    track_with(s, nested, &mut visit);
    g
}

/// Groups `(frame, call, …)` items by frame, in order.
fn by_frame<T>(items: &[T], frame: impl Fn(&T) -> u64) -> Vec<(u64, Vec<&T>)> {
    let mut out: Vec<(u64, Vec<&T>)> = Vec::new();
    for it in items {
        let f = frame(it);
        match out.last_mut() {
            Some((g, list)) if *g == f => list.push(it),
            _ => out.push((f, vec![it])),
        }
    }
    out
}

fn frame_of(s: &Session, index: u64) -> Option<&Frame> {
    s.frames.iter().find(|f| f.index == index)
}

fn cpu_of(s: &Session, frame: u64, calls: impl IntoIterator<Item = u32>) -> u64 {
    let Some(f) = frame_of(s, frame) else {
        return 0;
    };
    calls
        .into_iter()
        .filter_map(|c| f.calls.get(c as usize))
        .map(|c| c.cpu_ns)
        .sum()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn report(s: &Session, g: &Gathered, fragments: &HashMap<(u64, u32), u64>, out: &mut Vec<Finding>) {
    for (frame, list) in by_frame(&g.depth_uncleared, |d| d.0) {
        let fbs: HashSet<u64> = list.iter().map(|d| d.2).collect();
        out.push(Finding {
            frame,
            call: Some(list[0].1),
            rule: "depth-not-cleared",
            severity: Severity::Warning,
            title: format!(
                "{} with the depth test on into a depth buffer the frame did not clear",
                plural(list.len(), "draw", "draws")
            ),
            detail: "A depth buffer kept from the previous frame must be loaded (on tiled GPUs, \
                     read from memory into the tile) and holds last frame's depths, which can \
                     reject this frame's fragments."
                .into(),
            fix: "Clear depth together with colour at the start of each frame (one glClear with \
                  GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT), or invalidate it."
                .into(),
            evidence: Evidence::calls(list.iter().map(|d| d.1)).with(
                "framebuffers",
                fbs.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            cost: None,
        });
    }
    for (frame, list) in by_frame(&g.client, |d| d.0) {
        let attributes: HashSet<u64> = list.iter().flat_map(|d| d.2.iter().copied()).collect();
        let indexed = list.iter().filter(|d| d.3).count();
        let spent = cpu_of(s, frame, list.iter().map(|d| d.1));
        let mut attrs: Vec<u64> = attributes.into_iter().collect();
        attrs.sort_unstable();
        out.push(Finding {
            frame,
            call: Some(list[0].1),
            rule: "client-arrays",
            severity: Severity::Warning,
            title: format!(
                "{} read vertices or indices from client memory, {:.3} ms of CPU time",
                plural(list.len(), "draw", "draws"),
                spent as f64 / 1e6
            ),
            detail: "Without a buffer object the driver copies the vertex data (and indices) \
                     out of the program's memory at every draw, and the GPU cannot keep it."
                .into(),
            fix: "Put vertices and indices in buffer objects (glBufferData once, at start-up) \
                  and point the attributes at them."
                .into(),
            evidence: Evidence::calls(list.iter().map(|d| d.1))
                .with(
                    "client_attributes",
                    attrs
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                )
                .with("draws_with_client_indices", indexed),
            cost: Some(Cost {
                ns: spent,
                measured: "CPU time of the draws that copy client memory".into(),
            }),
        });
    }
    for (frame, list) in by_frame(&g.minified, |d| d.0) {
        let &&(_, call, t, size, n, filter) = list.first().expect("one");
        out.push(Finding {
            frame,
            call: Some(call),
            rule: "mipmaps-unused",
            severity: Severity::Warning,
            title: format!(
                "{} minified without mipmaps: texture {t} of {size} texels drawn on {n} \
                 fragments with {}",
                plural(list.len(), "texture", "textures"),
                if filter == NEAREST {
                    "GL_NEAREST"
                } else {
                    "GL_LINEAR"
                }
            ),
            detail: "A texture drawn smaller than it is, sampled without mipmaps, reads texels \
                     scattered over memory for every fragment (cache misses, bandwidth) and \
                     shimmers as it moves."
                .into(),
            fix: "Generate mipmaps (glGenerateMipmap, or ship them) and use a mipmap minifying \
                  filter such as GL_LINEAR_MIPMAP_LINEAR."
                .into(),
            evidence: Evidence::calls(list.iter().map(|d| d.1))
                .with("texture", t)
                .with("texels", size)
                .with("fragments", n),
            cost: None,
        });
    }
    for (frame, list) in by_frame(&g.modified, |d| d.0) {
        let spent = cpu_of(s, frame, list.iter().map(|d| d.1));
        let &&(_, call, t, draw) = list.first().expect("one");
        out.push(Finding {
            frame,
            call: Some(call),
            rule: "texture-modified",
            severity: Severity::Warning,
            title: format!(
                "{} changed a texture a draw of this frame already used (texture {t}, drawn at \
                 call {draw}), {:.3} ms",
                plural(list.len(), "upload", "uploads"),
                spent as f64 / 1e6
            ),
            detail: "The driver must wait for the earlier draw to finish with the texture, or \
                     copy it, before the new data can land."
                .into(),
            fix: "Update textures before the frame draws with them, or cycle between two \
                  textures."
                .into(),
            evidence: Evidence::calls(list.iter().map(|d| d.1))
                .with("texture", t)
                .with("earlier_draw", draw),
            cost: Some(Cost {
                ns: spent,
                measured: "CPU time of the uploads".into(),
            }),
        });
    }
    for (frame, list) in by_frame(&g.masked, |d| d.0) {
        let masked: u64 = list.iter().map(|d| d.2).sum();
        let all: u64 = fragments
            .iter()
            .filter(|((f, _), _)| *f == frame)
            .map(|(_, n)| n)
            .sum();
        if all == 0 || (masked as f64) < MASKED_SHARE * all as f64 {
            continue;
        }
        out.push(Finding {
            frame,
            call: Some(list[0].1),
            rule: "colormask-heavy",
            severity: Severity::Info,
            title: format!(
                "{} with every colour write off: {masked} of the frame's {all} fragments",
                plural(list.len(), "draw", "draws")
            ),
            detail: "A pass that writes no colour (a depth pre-pass, a stencil pass) shades and \
                     rasterizes its geometry a second time; it pays only when the depth it lays \
                     down saves more shading later, and on some GPUs colour masking itself is \
                     slow."
                .into(),
            fix: "Measure the frame without the pass; draw opaque geometry front to back \
                  instead where that is enough."
                .into(),
            evidence: Evidence::calls(list.iter().map(|d| d.1))
                .with("masked_fragments", masked)
                .with("frame_fragments", all),
            cost: None,
        });
    }
    for &(frame, call, n, surface) in &g.discarding {
        if surface == 0 || (n as f64) < DISCARD_SHARE * surface as f64 {
            continue;
        }
        out.push(Finding {
            frame,
            call: Some(call),
            rule: "discard-heavy",
            severity: Severity::Info,
            title: format!(
                "a draw whose fragment shader discards covers {n} fragments ({:.0}% of the \
                 surface)",
                100.0 * n as f64 / surface as f64
            ),
            detail: "A shader that may discard turns off early depth testing on most GPUs, so \
                     every fragment is shaded before it is known to be hidden."
                .into(),
            fix: "Use blending or alpha-to-coverage, or cut the geometry to the visible shape; \
                  keep discarding shaders to small draws."
                .into(),
            evidence: Evidence::calls([call])
                .with("fragments", n)
                .with("surface_pixels", surface),
            cost: None,
        });
    }
    for (frame, list) in by_frame(&g.blended_opaque, |d| d.0) {
        out.push(Finding {
            frame,
            call: Some(list[0].1),
            rule: "blend-opaque",
            severity: Severity::Warning,
            title: format!(
                "{} blended whose fragment shader writes alpha 1.0",
                plural(list.len(), "draw", "draws")
            ),
            detail: "With alpha 1 this blend function gives the source colour: the blending \
                     reads the framebuffer for nothing, and keeps the GPU from treating the draw \
                     as opaque."
                .into(),
            fix: "glDisable(GL_BLEND) around draws that are opaque.".into(),
            evidence: Evidence::calls(list.iter().map(|d| d.1)).with("program", list[0].2),
            cost: None,
        });
    }
    let known: Option<Vec<u64>> = g.draw_samples.iter().copied().collect();
    if let Some(samples) = known {
        if !samples.is_empty() && samples.iter().all(|&n| n <= 1) && !g.multisample_storage {
            let frame = s
                .frames
                .iter()
                .map(|f| f.index)
                .find(|&i| i >= 1)
                .unwrap_or(0);
            out.push(Finding {
                frame,
                call: None,
                rule: "no-multisampling",
                severity: Severity::Info,
                title: format!(
                    "every draw renders into a single-sampled framebuffer ({} draws)",
                    samples.len()
                ),
                detail: "Without multisampling, polygon edges alias (stair steps that crawl as \
                         things move); on most GPUs 4× multisampling costs little."
                    .into(),
                fix: "Render into a multisampled framebuffer (an EGL/GLX config with samples, \
                      or a glRenderbufferStorageMultisample target resolved with \
                      glBlitFramebuffer)."
                    .into(),
                evidence: Evidence::default().with("draws", samples.len()),
                cost: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each rule on small sessions of a launched program seen from its start (frame 0 its
    //! set-up): it fires on its trigger and stays quiet just below its threshold.

    use super::*;
    use crate::testkit::{session, Seq};
    use gpuheat_session::testing::CONTEXT;
    use gpuheat_session::ProgramInfo;

    const FRAMEBUFFER: u64 = 0x8D40;
    const RENDERBUFFER: u64 = 0x8D41;
    const COLOR_BUFFER_BIT: u64 = 0x4000;
    const ARRAY_BUFFER: u64 = 0x8892;
    const FLOAT: u64 = 0x1406;
    const RGBA8: u64 = 0x8058;
    const RGBA: u64 = 0x1908;
    const UNSIGNED_BYTE: u64 = 0x1401;
    const SRC_ALPHA: u64 = 0x0302;
    const ONE: u64 = 1;
    const DATA: u64 = 0x7000_0000;

    /// The rules' findings of `rule` on frames 0.. (`fragments` of draws by frame and call).
    fn run(frames: &[Seq], fragments: &[((u64, u32), u64)], rule: &str) -> Vec<Finding> {
        run_on(session(frames, None, 0), fragments, rule)
    }

    fn run_on(s: Session, fragments: &[((u64, u32), u64)], rule: &str) -> Vec<Finding> {
        let frags: HashMap<(u64, u32), u64> = fragments.iter().copied().collect();
        let mut out = Vec::new();
        check(&s, &Nested::default(), &frags, &mut out);
        out.retain(|f| f.rule == rule);
        out
    }

    const DEPTH_FBO: Seq = &[
        ("glBindFramebuffer", &[FRAMEBUFFER, 5]),
        (
            "glFramebufferRenderbuffer",
            &[FRAMEBUFFER, DEPTH_ATTACHMENT, RENDERBUFFER, 1],
        ),
        ("glEnable", &[DEPTH_TEST]),
    ];

    #[test]
    fn depth_tested_draws_into_an_uncleared_depth_buffer() {
        let f = run(
            &[
                DEPTH_FBO,
                &[
                    ("glClear", &[COLOR_BUFFER_BIT]),
                    ("glDrawArrays", &[4, 0, 3]),
                ],
            ],
            &[],
            "depth-not-cleared",
        );
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].frame, f[0].evidence.calls.clone()), (1, vec![1]));
        // Cleared with colour: quiet; a framebuffer without depth: quiet.
        let cleared: Seq = &[
            ("glClear", &[COLOR_BUFFER_BIT | DEPTH_BUFFER_BIT]),
            ("glDrawArrays", &[4, 0, 3]),
        ];
        assert!(run(&[DEPTH_FBO, cleared], &[], "depth-not-cleared").is_empty());
        let no_depth: Seq = &[
            ("glBindFramebuffer", &[FRAMEBUFFER, 5]),
            ("glEnable", &[DEPTH_TEST]),
        ];
        let draw: Seq = &[("glDrawArrays", &[4, 0, 3])];
        assert!(run(&[no_depth, draw], &[], "depth-not-cleared").is_empty());
    }

    #[test]
    fn attributes_set_without_an_array_buffer_are_client_arrays() {
        let client: Seq = &[
            ("glEnableVertexAttribArray", &[0]),
            ("glVertexAttribPointer", &[0, 3, FLOAT, 0, 0, DATA]),
        ];
        let draw: Seq = &[("glDrawArrays", &[4, 0, 3])];
        let f = run(&[client, draw], &[], "client-arrays");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.calls, vec![0]);
        let buffered: Seq = &[
            ("glBindBuffer", &[ARRAY_BUFFER, 7]),
            ("glEnableVertexAttribArray", &[0]),
            ("glVertexAttribPointer", &[0, 3, FLOAT, 0, 0, 0]),
        ];
        assert!(run(&[buffered, draw], &[], "client-arrays").is_empty());
        // Set, but not enabled: not read.
        let disabled: Seq = &[("glVertexAttribPointer", &[0, 3, FLOAT, 0, 0, DATA])];
        assert!(run(&[disabled, draw], &[], "client-arrays").is_empty());
    }

    /// A 64×64 texture (4,096 texels) with a `GL_LINEAR` minifying filter.
    const LINEAR_TEXTURE: Seq = &[
        ("glBindTexture", &[TEXTURE_2D, 3]),
        (
            "glTexImage2D",
            &[TEXTURE_2D, 0, RGBA8, 64, 64, 0, RGBA, UNSIGNED_BYTE, DATA],
        ),
        ("glTexParameteri", &[TEXTURE_2D, TEXTURE_MIN_FILTER, LINEAR]),
    ];

    #[test]
    fn a_texture_of_four_texels_per_fragment_without_mipmaps_is_minified() {
        let draw: Seq = &[("glDrawArrays", &[4, 0, 3])];
        let f = run(&[LINEAR_TEXTURE, draw], &[((1, 0), 1024)], "mipmaps-unused");
        assert_eq!(f.len(), 1);
        assert!(f[0]
            .evidence
            .values
            .contains(&("texels".into(), "4096".into())));
        assert!(run(&[LINEAR_TEXTURE, draw], &[((1, 0), 1025)], "mipmaps-unused").is_empty());
        // A mipmap filter: quiet.
        let mipmapped: Seq = &[
            ("glBindTexture", &[TEXTURE_2D, 3]),
            (
                "glTexImage2D",
                &[TEXTURE_2D, 0, RGBA8, 64, 64, 0, RGBA, UNSIGNED_BYTE, DATA],
            ),
            ("glTexParameteri", &[TEXTURE_2D, TEXTURE_MIN_FILTER, 0x2703]),
        ];
        assert!(run(&[mipmapped, draw], &[((1, 0), 16)], "mipmaps-unused").is_empty());
    }

    #[test]
    fn an_upload_into_a_texture_drawn_earlier_in_the_frame_modifies_it() {
        let upload = (
            "glTexSubImage2D",
            &[TEXTURE_2D, 0, 0, 0, 8, 8, RGBA, UNSIGNED_BYTE, DATA][..],
        );
        let draw = ("glDrawArrays", &[4u64, 0, 3][..]);
        let after: Seq = &[draw, upload];
        let f = run(&[LINEAR_TEXTURE, after], &[], "texture-modified");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.calls, vec![1]);
        let before: Seq = &[upload, draw];
        assert!(run(&[LINEAR_TEXTURE, before], &[], "texture-modified").is_empty());
    }

    fn colour_target(
        storage: (&'static str, &'static [u64]),
    ) -> Vec<(&'static str, &'static [u64])> {
        vec![
            ("glBindRenderbuffer", &[RENDERBUFFER, 1]),
            storage,
            ("glBindFramebuffer", &[FRAMEBUFFER, 5]),
            (
                "glFramebufferRenderbuffer",
                &[FRAMEBUFFER, COLOR_ATTACHMENT0, RENDERBUFFER, 1],
            ),
        ]
    }

    #[test]
    fn draws_into_single_sampled_storage_only_are_no_multisampling() {
        let draw: Seq = &[("glDrawArrays", &[4, 0, 3])];
        let single = colour_target(("glRenderbufferStorage", &[RENDERBUFFER, RGBA8, 64, 64]));
        let f = run(&[&single, draw], &[], "no-multisampling");
        assert_eq!(f.len(), 1);
        let msaa = colour_target((
            "glRenderbufferStorageMultisample",
            &[RENDERBUFFER, 4, RGBA8, 64, 64],
        ));
        assert!(run(&[&msaa, draw], &[], "no-multisampling").is_empty());
        // The window's samples unknown (no STAT): quiet.
        assert!(run(&[&[], draw], &[], "no-multisampling").is_empty());
    }

    #[test]
    fn colour_masked_draws_from_a_quarter_of_the_fragments() {
        let frame: Seq = &[
            ("glColorMask", &[0, 0, 0, 0]),
            ("glDrawArrays", &[4, 0, 3]),
            ("glColorMask", &[1, 1, 1, 1]),
            ("glDrawArrays", &[4, 0, 3]),
        ];
        let f = run(
            &[&[], frame],
            &[((1, 1), 250), ((1, 3), 750)],
            "colormask-heavy",
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.calls, vec![1]);
        assert!(run(
            &[&[], frame],
            &[((1, 1), 249), ((1, 3), 751)],
            "colormask-heavy"
        )
        .is_empty());
    }

    /// A session whose program 9 has fragment shader `fs`, drawn with in frame 1.
    fn with_program(fs: &str, frame: Seq) -> Session {
        let set_up: Seq = &[("glViewport", &[0, 0, 100, 10]), ("glUseProgram", &[9])];
        let mut s = session(&[set_up, frame], None, 0);
        s.programs.push(ProgramInfo {
            context: CONTEXT,
            program: 9,
            source_hash: 1,
            stages: vec![0x8B31, FRAGMENT_SHADER],
            sources: vec!["void main() {}".into(), fs.into()],
        });
        s
    }

    #[test]
    fn a_discarding_draw_from_a_fifth_of_its_surface() {
        let fs = "out vec4 o;\nvoid main() {\n  if (gl_FragCoord.x < 2.0) discard;\n  o = vec4(1.0);\n}\n";
        let draw: Seq = &[("glDrawArrays", &[4, 0, 3])];
        // The viewport's 1,000 pixels.
        let f = run_on(with_program(fs, draw), &[((1, 0), 200)], "discard-heavy");
        assert_eq!(f.len(), 1);
        assert!(run_on(with_program(fs, draw), &[((1, 0), 199)], "discard-heavy").is_empty());
        let keeps = "out vec4 o;\nvoid main() { o = vec4(1.0); }\n";
        assert!(run_on(
            with_program(keeps, draw),
            &[((1, 0), 1000)],
            "discard-heavy"
        )
        .is_empty());
    }

    #[test]
    fn blending_an_opaque_output_over_the_framebuffer() {
        let opaque = "layout(location = 0) out vec4 o_color;\nvoid main() {\n  o_color = vec4(0.5, 0.2, 0.1, 1.0);\n}\n";
        let translucent = "out vec4 o;\nvoid main() { o = vec4(0.5, 0.2, 0.1, 0.5); }\n";
        let blended: Seq = &[
            ("glEnable", &[BLEND]),
            ("glBlendFunc", &[SRC_ALPHA, ONE_MINUS_SRC_ALPHA]),
            ("glDrawArrays", &[4, 0, 3]),
        ];
        let f = run_on(with_program(opaque, blended), &[], "blend-opaque");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.calls, vec![2]);
        assert!(run_on(with_program(translucent, blended), &[], "blend-opaque").is_empty());
        // Additive blending adds even opaque colour: quiet.
        let additive: Seq = &[
            ("glEnable", &[BLEND]),
            ("glBlendFunc", &[ONE, ONE]),
            ("glDrawArrays", &[4, 0, 3]),
        ];
        assert!(run_on(with_program(opaque, additive), &[], "blend-opaque").is_empty());
    }

    #[test]
    fn opaque_output_is_read_from_the_source() {
        assert!(writes_opaque(
            "out vec4 c;\nvoid main() { c = vec4(x, 1.0); }"
        ));
        assert!(writes_opaque(
            "void main() { gl_FragColor = vec4(c.rgb, 1); }"
        ));
        assert!(!writes_opaque(
            "out vec4 c;\nvoid main() { c = texture(s, uv); }"
        ));
        assert!(!writes_opaque(
            "out vec4 c;\nvoid main() { c = vec4(1.0); c = vec4(x, 0.5); }"
        ));
        assert!(!writes_opaque("void main() {}"));
        assert!(discards("if (a) discard;"));
        assert!(!discards("float discarded = 1.0;"));
    }
}
