//! The checklist's one pass of the state tracker ([`super::track`]) over the whole capture
//! (state outlives frames): per frame the redundant and eclipsed setters, and for each draw
//! what the state rules judge (depth, client arrays, textures, masks, blending, samples),
//! gathered once for every rule of the state family.

use super::track::{track_with, FrameState, View};
use crate::measure::cost::Analysis;
use crate::measure::nested::Nested;
use gpuheat_session::{Call, CallClass, Frame, Session};
// Fx: small integer keys looked up per draw.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

pub(super) use crate::enums::gl::{
    BLEND, COLOR_ATTACHMENT0, DEPTH, DEPTH_ATTACHMENT, DEPTH_BUFFER_BIT, DEPTH_STENCIL,
    DEPTH_STENCIL_ATTACHMENT, DEPTH_TEST, ELEMENT_ARRAY_BUFFER, LINEAR, NEAREST,
    ONE_MINUS_SRC_ALPHA, READ_FRAMEBUFFER, TEXTURE_2D, TEXTURE_2D_MULTISAMPLE, TEXTURE_MIN_FILTER,
    ZERO,
};
/// `GL_FRAGMENT_SHADER`, as a program's stages are recorded.
pub(super) const FRAGMENT_SHADER: u32 = crate::enums::gl::FRAGMENT_SHADER as u32;

/// A texture counts as minified when it has this many texels per fragment of the draw
/// (2 × 2: a level of detail of 1).
pub(super) const MINIFIED_TEXELS_PER_FRAGMENT: u64 = 4;
/// Share of a frame's fragments drawn with colour writes off from which the pass is called
/// out.
pub(super) const MASKED_SHARE: f64 = 0.25;
/// Share of the surface a discarding draw must cover to be called out.
pub(super) const DISCARD_SHARE: f64 = 0.2;

/// What the state walk gathered, for the rules to judge once it is done.
#[derive(Default)]
pub(super) struct Gathered {
    /// Per frame: draws with the depth test on into a framebuffer with depth that the frame
    /// did not clear first.
    pub(super) depth_uncleared: Vec<(u64, u32, u64)>,
    /// (frame, draw, attributes read from client memory, client indices).
    pub(super) client: Vec<(u64, u32, Vec<u64>, bool)>,
    /// (frame, draw, texture, texels, fragments, min filter).
    pub(super) minified: Vec<(u64, u32, u64, u64, u64, u64)>,
    /// (frame, upload call, texture, the draw that used it earlier in the frame).
    pub(super) modified: Vec<(u64, u32, u64, u32)>,
    /// (frame, draw, fragments) of draws with every colour write off.
    pub(super) masked: Vec<(u64, u32, u64)>,
    /// (frame, draw, fragments, surface pixels) of draws whose program discards.
    pub(super) discarding: Vec<(u64, u32, u64, u64)>,
    /// (frame, draw, program) of blended draws whose output is opaque.
    pub(super) blended_opaque: Vec<(u64, u32, u64)>,
    /// Samples of each draw's framebuffer: `None` when unknown.
    pub(super) draw_samples: Vec<Option<u64>>,
    /// Whether any multisampled storage was made.
    pub(super) multisample_storage: bool,
    /// The program in use at each draw, by (frame, call).
    pub(super) programs: HashMap<(u64, u32), u64>,
}

/// What the one tracker pass found: per frame, the redundant and eclipsed setters; over the
/// capture, what the state rules judge.
pub(super) struct Walk {
    /// Redundant and eclipsed setters per frame.
    pub(super) states: Vec<FrameState>,
    /// What the state rules judge.
    pub(super) gathered: Gathered,
}

/// Fragments of each draw, by (frame, call): the heat maps' exact counts where painted,
/// else the fragment-shader counter, else samples passed.
pub(super) fn fragments(s: &Session, a: &Analysis) -> HashMap<(u64, u32), u64> {
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

/// Walks every call with the tracker once and gathers what the state rules judge
/// (`fragments`: of each draw, by frame and call).
pub(super) fn walk(s: &Session, nested: &Nested, fragments: &HashMap<(u64, u32), u64>) -> Walk {
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
            Some(list) => list
                .iter()
                .filter_map(|&t| gpuheat_session::sampled_texture(t))
                .map(u64::from)
                .collect(),
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
    let states = track_with(s, nested, &mut visit);
    Walk {
        states,
        gathered: g,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
