//! Checklist rules that need the state a call runs in, all from the one state-tracker pass
//! ([`super::walk`]): setters that set what is already current or that are overwritten
//! before any draw used them, depth buffers not cleared, client-side vertex arrays, minified
//! textures without mipmaps, textures modified after a draw used them in the same frame, no
//! multisampling, colour-masked and discard-heavy passes, and blending on opaque output.
//! What the capture did not see (state set before it, a texture created before it) is
//! unknown, and a rule that would need it stays silent.

use super::context::Context;
use super::finding::{Cost, Evidence, Finding, Severity};
use super::rule::{Family, Rule};
use super::walk::{DISCARD_SHARE, MASKED_SHARE, NEAREST};
use gpuheat_session::{Frame, Session};
use std::collections::BTreeMap;
// Fx: small integer keys looked up per draw.
use rustc_hash::FxHashSet as HashSet;

/// Redundant (or eclipsed) state calls per frame from which they are called out...
pub const STATE_RULE_CALLS: usize = 10;
/// ...when they are also at least this share of the frame's state calls.
pub const STATE_RULE_SHARE: f64 = 0.10;

/// The rules of this family, in the order the catalogue lists them.
pub(super) const RULES: &[&Rule] = &[
    &REDUNDANT_STATE,
    &ECLIPSED_STATE,
    &DEPTH_NOT_CLEARED,
    &CLIENT_ARRAYS,
    &MIPMAPS_UNUSED,
    &TEXTURE_MODIFIED,
    &COLORMASK_HEAVY,
    &DISCARD_HEAVY,
    &BLEND_OPAQUE,
    &NO_MULTISAMPLING,
];

/// `redundant-state`.
pub(super) const REDUNDANT_STATE: Rule = Rule {
    id: "redundant-state",
    family: Family::State,
    severity: Severity::Info,
    summary: "state calls that set what is already current",
    check: |ctx, out| setters(ctx, Setters::Redundant, out),
};

/// `eclipsed-state`.
pub(super) const ECLIPSED_STATE: Rule = Rule {
    id: "eclipsed-state",
    family: Family::State,
    severity: Severity::Info,
    summary: "state calls overwritten before any draw used them",
    check: |ctx, out| setters(ctx, Setters::Eclipsed, out),
};

/// Which setters [`setters`] judges.
#[derive(Clone, Copy)]
enum Setters {
    Redundant,
    Eclipsed,
}

/// Redundant or eclipsed setters, from the tracker's one pass: state outlives frames, so it
/// ran over the whole capture, and each frame is judged on its own calls. The calls nested
/// in a VG call (a VG library's own) change the tracked state but are not counted.
fn setters(ctx: &Context, which: Setters, out: &mut Vec<Finding>) {
    let s = ctx.s;
    for fs in &ctx.walk.states {
        let Some(f) = s.frames.iter().find(|f| f.index == fs.frame) else {
            continue;
        };
        let (rule, calls, what, detail, fix) = match which {
            Setters::Redundant => (
                REDUNDANT_STATE.id,
                &fs.redundant,
                "set the value already set",
                "Each redundant call still goes through the driver (validation, and on \
                 some drivers a state rebuild at the next draw) and changes nothing.",
                "Track the bound state in the program (or its engine) and skip calls that \
                 change nothing.",
            ),
            Setters::Eclipsed => (
                ECLIPSED_STATE.id,
                &fs.eclipsed,
                "were overwritten before any draw used them",
                "Each eclipsed call set state that a later call replaced before any draw, \
                 clear, blit, query or read-back used it: its whole cost is wasted.",
                "Set state just before the draw that needs it, once, instead of setting and \
                 resetting it (e.g. restoring defaults after each draw).",
            ),
        };
        {
            let n = calls.len();
            if !state_calls_fire(n, fs.state_calls) {
                continue;
            }
            let mut per_entry: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
            let mut cpu = 0;
            for &i in calls.iter() {
                let c = &f.calls[i as usize];
                let name = s
                    .functions
                    .functions
                    .get(usize::from(c.func))
                    .map_or("?", |f| f.name.as_str());
                let e = per_entry.entry(name).or_default();
                e.0 += 1;
                e.1 += c.cpu_ns;
                cpu += c.cpu_ns;
            }
            let mut top: Vec<(&str, (u64, u64))> = per_entry.into_iter().collect();
            top.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
            let names: Vec<String> = top
                .iter()
                .take(3)
                .map(|(name, (k, _))| format!("{name} {k}"))
                .collect();
            let mut evidence =
                Evidence::calls(calls.iter().copied()).with("state_calls", fs.state_calls);
            for (name, (k, ns)) in &top {
                evidence = evidence.with(name, format!("{k} calls, {ns} ns"));
            }
            out.push(Finding {
                frame: f.index,
                call: calls.first().copied(),
                rule,
                severity: Severity::Info,
                title: format!(
                    "{n} of {} state calls {what} ({})",
                    fs.state_calls,
                    names.join(", ")
                ),
                detail: detail.into(),
                fix: fix.into(),
                evidence,
                cost: Some(Cost {
                    ns: cpu,
                    measured: format!(
                        "time spent in the {n} calls (the thread's CPU time; wall time for \
                         calls the agent does not read the CPU clock around)"
                    ),
                }),
            });
        }
    }
}

/// Whether `n` redundant (or eclipsed) calls among a frame's `state_calls` are worth a
/// finding: at least [`STATE_RULE_CALLS`] and [`STATE_RULE_SHARE`] of the state calls.
fn state_calls_fire(n: usize, state_calls: usize) -> bool {
    n >= STATE_RULE_CALLS && n as f64 >= STATE_RULE_SHARE * state_calls as f64
}

/// `depth-not-cleared`.
pub(super) const DEPTH_NOT_CLEARED: Rule =
    Rule {
        id: "depth-not-cleared",
        family: Family::State,
        severity: Severity::Warning,
        summary: "draws depth-test into a depth buffer the frame did not clear",
        check: |ctx, out| {
            let g = &ctx.walk.gathered;
            for (frame, list) in by_frame(&g.depth_uncleared, |d| d.0) {
                let fbs: HashSet<u64> = list.iter().map(|d| d.2).collect();
                out.push(Finding {
            frame,
            call: Some(list[0].1),
            rule: DEPTH_NOT_CLEARED.id,
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
        },
    };

/// `client-arrays`.
pub(super) const CLIENT_ARRAYS: Rule = Rule {
    id: "client-arrays",
    family: Family::State,
    severity: Severity::Warning,
    summary: "draws read vertices or indices from client memory",
    check: |ctx, out| {
        let (s, g) = (ctx.s, &ctx.walk.gathered);
        for (frame, list) in by_frame(&g.client, |d| d.0) {
            let attributes: HashSet<u64> = list.iter().flat_map(|d| d.2.iter().copied()).collect();
            let indexed = list.iter().filter(|d| d.3).count();
            let spent = cpu_of(s, frame, list.iter().map(|d| d.1));
            let mut attrs: Vec<u64> = attributes.into_iter().collect();
            attrs.sort_unstable();
            out.push(Finding {
                frame,
                call: Some(list[0].1),
                rule: CLIENT_ARRAYS.id,
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
    },
};

/// `mipmaps-unused`.
pub(super) const MIPMAPS_UNUSED: Rule =
    Rule {
        id: "mipmaps-unused",
        family: Family::State,
        severity: Severity::Warning,
        summary: "textures minified without mipmaps",
        check: |ctx, out| {
            let g = &ctx.walk.gathered;
            for (frame, list) in by_frame(&g.minified, |d| d.0) {
                let &&(_, call, t, size, n, filter) = list.first().expect("one");
                out.push(Finding {
            frame,
            call: Some(call),
            rule: MIPMAPS_UNUSED.id,
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
        },
    };

/// `texture-modified`.
pub(super) const TEXTURE_MODIFIED: Rule = Rule {
    id: "texture-modified",
    family: Family::State,
    severity: Severity::Warning,
    summary: "a texture changed after a draw of the same frame used it",
    check: |ctx, out| {
        let (s, g) = (ctx.s, &ctx.walk.gathered);
        for (frame, list) in by_frame(&g.modified, |d| d.0) {
            let spent = cpu_of(s, frame, list.iter().map(|d| d.1));
            let &&(_, call, t, draw) = list.first().expect("one");
            out.push(Finding {
                frame,
                call: Some(call),
                rule: TEXTURE_MODIFIED.id,
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
    },
};

/// `colormask-heavy`.
pub(super) const COLORMASK_HEAVY: Rule = Rule {
    id: "colormask-heavy",
    family: Family::State,
    severity: Severity::Info,
    summary: "much of a frame drawn with every colour write off",
    check: |ctx, out| {
        let (g, fragments) = (&ctx.walk.gathered, &ctx.fragments);
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
                rule: COLORMASK_HEAVY.id,
                severity: Severity::Info,
                title: format!(
                    "{} with every colour write off: {masked} of the frame's {all} fragments",
                    plural(list.len(), "draw", "draws")
                ),
                detail:
                    "A pass that writes no colour (a depth pre-pass, a stencil pass) shades and \
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
    },
};

/// `discard-heavy`.
pub(super) const DISCARD_HEAVY: Rule = Rule {
    id: "discard-heavy",
    family: Family::State,
    severity: Severity::Info,
    summary: "a draw whose fragment shader discards covers much of the surface",
    check: |ctx, out| {
        let g = &ctx.walk.gathered;
        for &(frame, call, n, surface) in &g.discarding {
            if surface == 0 || (n as f64) < DISCARD_SHARE * surface as f64 {
                continue;
            }
            out.push(Finding {
                frame,
                call: Some(call),
                rule: DISCARD_HEAVY.id,
                severity: Severity::Info,
                title: format!(
                    "a draw whose fragment shader discards covers {n} fragments ({:.0}% of the \
                 surface)",
                    100.0 * n as f64 / surface as f64
                ),
                detail: "A shader that may discard turns off early depth testing on most GPUs, so \
                     every fragment is shaded before it is known to be hidden."
                    .into(),
                fix:
                    "Use blending or alpha-to-coverage, or cut the geometry to the visible shape; \
                  keep discarding shaders to small draws."
                        .into(),
                evidence: Evidence::calls([call])
                    .with("fragments", n)
                    .with("surface_pixels", surface),
                cost: None,
            });
        }
    },
};

/// `blend-opaque`.
pub(super) const BLEND_OPAQUE: Rule = Rule {
    id: "blend-opaque",
    family: Family::State,
    severity: Severity::Warning,
    summary: "blending on draws whose fragment shader writes opaque colour",
    check: |ctx, out| {
        let g = &ctx.walk.gathered;
        for (frame, list) in by_frame(&g.blended_opaque, |d| d.0) {
            out.push(Finding {
                frame,
                call: Some(list[0].1),
                rule: BLEND_OPAQUE.id,
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
    },
};

/// `no-multisampling`.
pub(super) const NO_MULTISAMPLING: Rule = Rule {
    id: "no-multisampling",
    family: Family::State,
    severity: Severity::Info,
    summary: "every draw renders into a single-sampled framebuffer",
    check: |ctx, out| {
        let (s, g) = (ctx.s, &ctx.walk.gathered);
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
                    rule: NO_MULTISAMPLING.id,
                    severity: Severity::Info,
                    title: format!(
                        "every draw renders into a single-sampled framebuffer ({} draws)",
                        samples.len()
                    ),
                    detail:
                        "Without multisampling, polygon edges alias (stair steps that crawl as \
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
    },
};

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

#[cfg(test)]
mod tests {
    //! Each rule on small sessions of a launched program seen from its start (frame 0 its
    //! set-up): it fires on its trigger and stays quiet just below its threshold.

    use super::*;
    use gpuheat_session::ProgramInfo;
    use gpuheat_testkit::{session, Seq, CONTEXT};

    use crate::checklist::walk::*;
    use crate::enums::gl::{
        ARRAY_BUFFER, COLOR_BUFFER_BIT, FLOAT, FRAMEBUFFER, LINEAR_MIPMAP_LINEAR, ONE,
        RENDERBUFFER, RGBA, RGBA8, SRC_ALPHA, UNSIGNED_BYTE, VERTEX_SHADER,
    };
    /// A client-memory address (any non-zero pointer value).
    const DATA: u64 = 0x7000_0000;

    /// The rules' findings of `rule` on frames 0.. (`fragments` of draws by frame and call).
    fn run(frames: &[Seq], fragments: &[((u64, u32), u64)], rule: &str) -> Vec<Finding> {
        run_on(session(frames, None, 0), fragments, rule)
    }

    fn run_on(s: Session, fragments: &[((u64, u32), u64)], rule: &str) -> Vec<Finding> {
        let frags = fragments.iter().copied().collect();
        let a = crate::analyse(&s);
        let ctx = Context::with_fragments(&s, &a, frags);
        let mut out = Vec::new();
        (crate::checklist::rule(rule).expect("a rule").check)(&ctx, &mut out);
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
            (
                "glTexParameteri",
                &[TEXTURE_2D, TEXTURE_MIN_FILTER, LINEAR_MIPMAP_LINEAR],
            ),
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
            stages: vec![VERTEX_SHADER as u32, FRAGMENT_SHADER],
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
}
