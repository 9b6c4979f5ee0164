//! Heat per render target (issue 11) on the examples that render into textures:
//! `offscreen_pass` (a costly pass P into texture T, composited by C onto a rectangle of the
//! window, beside a cheap draw D) and `chain` (A into TA, B samples TA into TB, X and Y sample
//! TB on the window, 1 : 3). Real programs under `gpuheat run --heat` on llvmpipe, both APIs.
//!
//! Checked against the examples' documented numbers (examples/README.md): the window's own
//! map holds only the window's draws; each offscreen target has its own map, named by its
//! texture, whose Σ heat is Σ T_d of the draws into it (1e-4 relative) with the documented
//! fragments; the FLOW records say which texture each draw sampled; and the frames stay
//! bit-identical with and without `--heat`.
//!
//! The total-cost tests run the inspector's flow (`gpuheat_analysis::measure::flow`) on those records
//! and check the documented split: all of P's cost on C's rectangle, evenly; TA's cost
//! flowing whole into B, and TB's (T_A + T_B) into X and Y 1 : 3, the same per pixel; Σ total
//! heat of the screen = Σ T_d of every painted draw (1e-4), nothing left over.

mod common;

use common::*;
use gpuheat_analysis::measure::flow::{frame_flow, FrameFlowCost, TargetKey};
use gpuheat_session::{Attachment, DrawFlow, HeatMap, Session, TargetHeat};
use std::path::PathBuf;
use std::sync::OnceLock;

const APIS: [&str; 2] = ["gl", "gles"];
/// The sessions each test checks, by label: both APIs as `auto` times them (isolated on
/// llvmpipe), and GLES timed deferred, whose draws are tallied (`counters/src/tally.rs`: exact
/// boxes and coverage from their records, read at the flush). Desktop GL timed deferred lists
/// its target's box on a software rasterizer (`weights::gpu_boxes`), so it is not here. GLES
/// timed deferred is also run with the tally's records added on the GPU (a hardware
/// renderer's default), its boxes found by the tally pass ([`common::timing`]).
const RUNS: [(&str, &str, &str); 4] = [
    ("gl", "auto", "gl"),
    ("gles", "auto", "gles"),
    ("gles", "deferred", "gles, deferred"),
    (
        "gles",
        "deferred-gpu",
        "gles, deferred, resolved on the GPU",
    ),
];
const GL_RGBA8: u32 = 0x8058;
/// The bound on conservation: Σ heat against Σ T_d, relative.
const CONSERVATION: f64 = 1e-4;
/// Frames captured per session; both are checked.
const FRAMES: u32 = 2;

/// offscreen_pass as the tests run it: W×H window, S×S texture.
const OFF_W: u32 = 96;
const OFF_H: u32 = 64;
const OFF_S: u32 = 32;
/// chain: W×H window, A×A texture TA, B×B texture TB (B = A/2).
const CH_W: u32 = 128;
const CH_H: u32 = 64;
const CH_A: u32 = 64;
const CH_B: u32 = CH_A / 2;

/// One `gpuheat run --heat --frames 2` session per API, made once for the whole file.
fn sessions(
    cell: &'static OnceLock<Vec<(&'static str, Session)>>,
    name: &str,
    args: &[&str],
) -> &'static [(&'static str, Session)] {
    cell.get_or_init(|| {
        let dir: PathBuf = shared_scratch(&format!("offscreen-{name}"));
        RUNS.iter()
            .enumerate()
            .map(|(i, &(api_name, timing, api))| {
                let sub = dir.join(i.to_string());
                std::fs::create_dir_all(&sub).unwrap();
                let mut a = vec!["--api", api_name];
                a.extend_from_slice(args);
                let frames = FRAMES.to_string();
                let flags = ["--heat", "--frames", &frames];
                let path = capture_timed(&sub, name, &flags, timing, &a);
                let s = Session::open(&path).unwrap();
                assert!(
                    s.heat_missing.is_empty(),
                    "{name} {api}: heat maps missing: {:?}",
                    s.heat_missing
                );
                assert_eq!(
                    s.heat.len(),
                    FRAMES as usize,
                    "{name} {api}: one map per frame"
                );
                (api, s)
            })
            .collect()
    })
}

fn offscreen_pass() -> &'static [(&'static str, Session)] {
    static CELL: OnceLock<Vec<(&'static str, Session)>> = OnceLock::new();
    let size = format!("{OFF_W}x{OFF_H}");
    let s = OFF_S.to_string();
    sessions(
        &CELL,
        "offscreen_pass",
        &["--size", &size, "--target", &s, "--loop", "8"],
    )
}

fn chain() -> &'static [(&'static str, Session)] {
    static CELL: OnceLock<Vec<(&'static str, Session)>> = OnceLock::new();
    let size = format!("{CH_W}x{CH_H}");
    let a = CH_A.to_string();
    sessions(
        &CELL,
        "chain",
        &[
            "--size", &size, "--target", &a, "--loop", "8", "--loop-b", "4",
        ],
    )
}

/// The frame's draw calls (every draw of both examples is a glDrawArrays).
fn draw_calls(s: &Session, frame: u64) -> Vec<u32> {
    calls_to(s, frame, "glDrawArrays")
        .into_iter()
        .map(|(i, _)| i)
        .collect()
}

/// The textures the frame binds with glBindTexture, in call order.
fn bound_textures(s: &Session, frame: u64) -> Vec<u32> {
    calls_to(s, frame, "glBindTexture")
        .into_iter()
        .map(|(_, args)| args[1] as u32)
        .collect()
}

/// The offscreen targets of `frame`, their records added up per (context, target) as the
/// session format says (heat and overdraw summed, draws concatenated), ordered by target id.
fn targets(s: &Session, frame: u64) -> Vec<TargetHeat> {
    let mut out: Vec<TargetHeat> = Vec::new();
    for t in s.target_heat.iter().filter(|t| t.frame == frame) {
        t.validate().unwrap();
        match out
            .iter_mut()
            .find(|o| o.context == t.context && o.target.id == t.target.id)
        {
            Some(o) => {
                assert_eq!(o.target, t.target, "one target id, two descriptions");
                for (a, b) in o.heat.iter_mut().zip(&t.heat) {
                    *a += b;
                }
                for (a, b) in o.overdraw.iter_mut().zip(&t.overdraw) {
                    *a += b;
                }
                o.draws.extend(t.draws.iter().cloned());
            }
            None => out.push(t.clone()),
        }
    }
    out.sort_by_key(|t| t.target.id);
    out
}

/// The FLOW draws of `frame` (all records of the frame added up), in call order.
fn flows(s: &Session, frame: u64) -> Vec<DrawFlow> {
    let mut v: Vec<DrawFlow> = s
        .flow
        .iter()
        .filter(|f| f.frame == frame)
        .flat_map(|f| {
            f.validate().unwrap();
            f.draws.iter().cloned()
        })
        .collect();
    v.sort_by_key(|d| d.call);
    v
}

fn flow_of(flows: &[DrawFlow], call: u32, what: &str) -> DrawFlow {
    flows
        .iter()
        .find(|d| d.call == call)
        .unwrap_or_else(|| panic!("{what}: no FLOW entry for call {call}: {flows:?}"))
        .clone()
}

/// Checks one window draw of the HEAT record: its fragments and box.
fn window_draw(map: &HeatMap, call: u32, fragments: u64, bbox: [u32; 4], what: &str) {
    let d = map
        .draws
        .iter()
        .find(|d| d.call == call)
        .unwrap_or_else(|| {
            panic!(
                "{what}: call {call} not in the window's map: {:?}",
                map.draws
            )
        });
    assert_eq!(d.fragments, fragments, "{what}: fragments of call {call}");
    assert_eq!(d.bbox, bbox, "{what}: box of call {call}");
}

/// Overdraw of the window map: 1 inside `rects`, 0 elsewhere.
fn overdraw_is_exactly(map: &HeatMap, rects: &[[u32; 4]], what: &str) {
    for y in 0..map.height {
        for x in 0..map.width {
            let inside = rects
                .iter()
                .any(|r| (r[0]..r[2]).contains(&x) && (r[1]..r[3]).contains(&y));
            assert_eq!(
                map.overdraw[(y * map.width + x) as usize],
                u32::from(inside),
                "{what}: overdraw at ({x},{y})"
            );
        }
    }
}

/// Checks a target's own map: a whole `side × side` RGBA8 texture drawn once by `call`.
fn texture_target(t: &TargetHeat, texture: u32, side: u32, call: u32, what: &str) {
    texture_target_as(t, texture, side, call, GL_RGBA8, what);
}

/// [`texture_target`] of internal format `format`.
fn texture_target_as(t: &TargetHeat, texture: u32, side: u32, call: u32, format: u32, what: &str) {
    assert_eq!(
        t.target.attachments,
        vec![Attachment::Texture {
            name: texture,
            level: 0,
            layer: 0
        }],
        "{what}: the target is the texture the program binds"
    );
    assert_ne!(t.target.id, 0, "{what}: target ids are never 0");
    assert_eq!((t.target.width, t.target.height), (side, side), "{what}");
    assert_eq!(t.target.format, format, "{what}: format");
    assert_eq!(t.draws.len(), 1, "{what}: one draw into it: {:?}", t.draws);
    let d = &t.draws[0];
    assert_eq!(d.call, call, "{what}: the pass's call");
    assert_eq!(d.fragments, u64::from(side * side), "{what}: fragments");
    assert_eq!(d.bbox, [0, 0, side, side], "{what}: box");
    assert!(
        t.overdraw.iter().all(|&v| v == 1),
        "{what}: every texel drawn once"
    );
    let err = conservation_error(&t.heat, &t.draws, what);
    assert!(err <= CONSERVATION, "{what}: Σ own heat off by {err:.2e}");
}

#[test]
fn offscreen_pass_window_map_holds_only_the_composite_and_the_cheap_draw() {
    let (w, h, s) = (OFF_W, OFF_H, OFF_S);
    let c_rect = [w / 2, h / 2, w / 2 + s, h / 2 + s];
    let d_rect = [0, 0, w / 2, h / 4];
    for (api, session) in offscreen_pass() {
        for map in &session.heat {
            let what = format!("offscreen_pass {api} frame {}", map.frame);
            map.validate().unwrap();
            assert_eq!((map.width, map.height), (w, h), "{what}");
            let [p, c, d] = draw_calls(session, map.frame)[..] else {
                panic!("{what}: three draws expected");
            };
            assert_eq!([p, c, d], [6, 12, 14], "{what}: documented call indices");
            window_draw(map, c, u64::from(s * s), c_rect, &what);
            window_draw(map, d, u64::from(d_rect[2] * d_rect[3]), d_rect, &what);
            assert!(
                map.draws.iter().all(|x| x.call != p || x.fragments == 0),
                "{what}: P drew into T, not the window"
            );
            overdraw_is_exactly(map, &[c_rect, d_rect], &what);
            let err = conservation_error(&map.heat, &map.draws, &what);
            assert!(err <= CONSERVATION, "{what}: Σ heat off by {err:.2e}");
        }
    }
}

#[test]
fn offscreen_pass_texture_has_its_own_map() {
    for (api, session) in offscreen_pass() {
        for map in &session.heat {
            let what = format!("offscreen_pass {api} frame {}", map.frame);
            let t = bound_textures(session, map.frame);
            assert_eq!(t.len(), 1, "{what}: one glBindTexture per frame");
            let targets = targets(session, map.frame);
            assert_eq!(
                targets.len(),
                1,
                "{what}: one offscreen target: {targets:?}"
            );
            texture_target(&targets[0], t[0], OFF_S, 6, &what);
        }
    }
}

#[test]
fn targets_of_every_colour_format_are_painted_and_feed_the_window() {
    // offscreen_pass --format F: T in RGBA16F, RG8, R8, RGB10_A2, SRGB8_ALPHA8 and the
    // integer RGBA8UI (values from the GL registry, gl.xml). The painter counts into its own
    // buffers, so T's format changes nothing: T's map is P's S² fragments, Σ = T_P, all of
    // it on C's rectangle, and the frames are bit-identical with and without --heat.
    let formats: [(&str, u32); 6] = [
        ("1", 0x881A),
        ("2", 0x822B),
        ("3", 0x8229),
        ("4", 0x8059),
        ("5", 0x8C43),
        ("6", 0x8D7C),
    ];
    let dir = scratch("offscreen-formats");
    let (size, side) = (format!("{OFF_W}x{OFF_H}"), OFF_S.to_string());
    for api in APIS {
        for (flag, format) in formats {
            let what = format!("offscreen_pass {api} --format {flag}");
            let args = [
                "--api", api, "--size", &size, "--target", &side, "--loop", "8", "--format", flag,
            ];
            let path = capture(&dir, "offscreen_pass", &["--heat", "--frames", "2"], &args);
            let s = Session::open(&path).unwrap();
            assert!(s.heat_missing.is_empty(), "{what}: {:?}", s.heat_missing);
            assert_eq!(s.heat.len(), 2, "{what}");
            for map in &s.heat {
                let t = bound_textures(&s, map.frame)[0];
                let targets = targets(&s, map.frame);
                assert_eq!(targets.len(), 1, "{what}: {targets:?}");
                texture_target_as(&targets[0], t, OFF_S, 6, format, &what);
                let t_p: f64 = targets[0].draws.iter().map(|d| d.time_ns as f64).sum();
                let fc = flow_conserved(&s, map, &what);
                let c = fc.draws.iter().find(|d| d.call == 12).expect("C");
                assert!(
                    (c.inflow_ns - t_p).abs() <= t_p * 1e-9 + 1e-9,
                    "{what}: C received {} of T_P = {t_p}",
                    c.inflow_ns
                );
            }
            let mut frames = args.to_vec();
            frames.extend(["--frames", "3", "--checksum"]);
            let (plain, traced) = checksums_plain_and_traced(
                &dir.join(format!("{api}-{flag}-keep.gpuheat")),
                "offscreen_pass",
                &["--heat", "--frames", "2"],
                &frames,
            );
            assert_eq!(traced, plain, "{what}");
        }
    }
}

#[test]
fn blits_and_copies_carry_the_pass_they_copy_onto_their_destination() {
    // offscreen_pass --blit 1: B = glBlitFramebuffer of T onto C's rectangle (call 11); --blit
    // 2: the same read from a renderbuffer P draws into. B writes S² window pixels and reads
    // what P drew: all of P's cost lands on its rectangle, nothing elsewhere; its own T_B is
    // spread over the same pixels.
    // --blit 3 and --copy 3: the same with glBlitNamedFramebuffer (call 10, no read
    // framebuffer bound) and glCopyTextureSubImage2D (call 7), which name their objects.
    // --copy 1|2: K = glCopyTexSubImage2D (call 8) or glCopyImageSubData (call 7) of T into U
    // right after P, C samples U: K is painted over U's S² texels as a target of its own and
    // consumes T's pass, C consumes K's: the window rectangle receives T_P + T_K (and the
    // clear of T) evenly, nothing elsewhere.
    // Every variant draws the same pixels as the plain composite, with and without the agent.
    let (w, h, s) = (OFF_W, OFF_H, OFF_S);
    let rect = [w / 2, h / 2, w / 2 + s, h / 2 + s];
    let dir = scratch("offscreen-blit");
    let (size, side) = (format!("{w}x{h}"), s.to_string());
    // (flag, value, the call that carries the pass, its function, whether it is a copy into U)
    let variants = [
        ("--blit", "1", 11, "glBlitFramebuffer", false),
        ("--blit", "2", 11, "glBlitFramebuffer", false),
        ("--blit", "3", 10, "glBlitNamedFramebuffer", false),
        ("--copy", "1", 8, "glCopyTexSubImage2D", true),
        ("--copy", "2", 7, "glCopyImageSubData", true),
        ("--copy", "3", 7, "glCopyTextureSubImage2D", true),
    ];
    // As `auto` times them (isolated here), and timed deferred: the blit's or copy's time is
    // then added over its place at the flush, to the map read back.
    let timings = [
        ("gl", "auto"),
        ("gles", "auto"),
        ("gl", "deferred"),
        ("gles", "deferred"),
        ("gles", "deferred-gpu"),
    ];
    for (api, timing) in timings {
        for (flag, value, call, function, copy) in variants {
            // The 3s name their objects (GL 4.5's direct state access): GL only.
            if value == "3" && api != "gl" {
                continue;
            }
            let args = [
                "--api", api, "--size", &size, "--target", &side, "--loop", "8", flag, value,
            ];
            let name = format!("{api} {timing} {flag}{value}");
            let flags = ["--heat", "--frames", "2"];
            let path = capture_timed(&dir, "offscreen_pass", &flags, timing, &args);
            let session = Session::open(&path).unwrap();
            assert!(
                session.heat_missing.is_empty(),
                "{name}: {:?}",
                session.heat_missing
            );
            for map in &session.heat {
                let what = format!(
                    "offscreen_pass {flag} {value} {api} {timing} frame {}",
                    map.frame
                );
                let calls = calls_to(&session, map.frame, function);
                assert_eq!(calls.len(), 1, "{what}");
                let b = calls[0].0;
                assert_eq!(b, call, "{what}: documented call index");
                let t = targets(&session, map.frame);
                let flows = flows(&session, map.frame);
                let flow = flow_of(&flows, b, &what);
                // P's target: the one P drew into (the first listed); what the carrier read.
                let source = t
                    .iter()
                    .find(|t| t.draws.iter().any(|d| d.call == 6))
                    .unwrap_or_else(|| panic!("{what}: no target of P in {t:?}"));
                let read = source.target.attachments[0];
                assert_eq!(
                    matches!(read, Attachment::Renderbuffer { .. }),
                    value == "2" && !copy,
                    "{what}: P's target {read:?}"
                );
                assert_eq!(
                    flow.sampled,
                    [read.flow_key()],
                    "{what}: what {function} read"
                );
                if copy {
                    assert_eq!(t.len(), 2, "{what}: T and U: {t:?}");
                    let u = t.iter().find(|t| t.target != source.target).unwrap();
                    assert_eq!(
                        (u.target.width, u.target.height),
                        (s, s),
                        "{what}: U's size"
                    );
                    assert_eq!(u.draws.len(), 1, "{what}: only K writes U");
                    assert_eq!(u.draws[0].call, b, "{what}");
                    assert_eq!(u.draws[0].fragments, u64::from(s * s), "{what}");
                    assert_eq!(
                        (flow.target, flow.bbox),
                        (u.target.id, [0, 0, s, s]),
                        "{what}: K's flow"
                    );
                    let u_name = u.target.attachments[0].flow_key();
                    let c = flow_of(&flows, b + 6, &what);
                    assert_eq!(c.sampled, [u_name], "{what}: C samples U");
                } else {
                    assert_eq!(t.len(), 1, "{what}: {t:?}");
                    window_draw(map, b, u64::from(s * s), rect, &what);
                    assert_eq!((flow.target, flow.bbox), (0, rect), "{what}: B's flow");
                }
                let upstream: f64 = t
                    .iter()
                    .flat_map(|t| &t.draws)
                    .map(|d| d.time_ns as f64)
                    .sum();
                let fc = flow_conserved(&session, map, &what);
                let screen = TargetKey {
                    context: map.context,
                    id: 0,
                };
                let per_pixel = upstream / f64::from(s * s);
                upstream_is(&upstream_map(&fc, screen), w, &[rect], per_pixel, &what);
            }
            let mut frames = args.to_vec();
            frames.extend(["--frames", "3", "--checksum"]);
            let (plain, traced) = checksums_plain_and_traced(
                &dir.join(format!("{name}-keep.gpuheat")),
                "offscreen_pass",
                &["--heat", "--frames", "2"],
                &frames,
            );
            assert_eq!(traced, plain, "{name}");
        }
    }
}

#[test]
fn offscreen_pass_composite_sampled_the_texture() {
    for (api, session) in offscreen_pass() {
        for map in &session.heat {
            let what = format!("offscreen_pass {api} frame {}", map.frame);
            let t = bound_textures(session, map.frame)[0];
            let target = targets(session, map.frame)
                .first()
                .unwrap_or_else(|| panic!("{what}: no offscreen target"))
                .target
                .id;
            let flows = flows(session, map.frame);
            let p = flow_of(&flows, 6, &what);
            assert_eq!((p.target, &p.sampled[..]), (target, &[][..]), "{what}: P");
            let c = flow_of(&flows, 12, &what);
            assert_eq!((c.target, &c.sampled[..]), (0, &[t][..]), "{what}: C");
            let s = OFF_S;
            assert_eq!(
                c.bbox,
                [OFF_W / 2, OFF_H / 2, OFF_W / 2 + s, OFF_H / 2 + s],
                "{what}: C's box"
            );
            // C sampled a texture drawn this frame: its coverage is kept (each pixel once),
            // or the note says why not.
            assert!(
                c.coverage.iter().all(|&v| v == 1)
                    && (c.coverage.len() == (s * s) as usize || !c.note.is_empty()),
                "{what}: C's coverage ({} values) / note {:?}",
                c.coverage.len(),
                c.note
            );
            let d = flow_of(&flows, 14, &what);
            assert_eq!((d.target, &d.sampled[..]), (0, &[][..]), "{what}: D");
        }
    }
}

#[test]
fn chain_window_map_holds_only_x_and_y() {
    let b = CH_B;
    let x_rect = [0, 0, b, b];
    let y_rect = [b, b, 4 * b, 2 * b];
    for (api, session) in chain() {
        for map in &session.heat {
            let what = format!("chain {api} frame {}", map.frame);
            map.validate().unwrap();
            assert_eq!((map.width, map.height), (CH_W, CH_H), "{what}");
            let calls = draw_calls(session, map.frame);
            assert_eq!(calls, [6, 12, 19, 21], "{what}: documented call indices");
            window_draw(map, 19, u64::from(b * b), x_rect, &what);
            window_draw(map, 21, u64::from(3 * b * b), y_rect, &what);
            assert!(
                map.draws
                    .iter()
                    .all(|x| (x.call != 6 && x.call != 12) || x.fragments == 0),
                "{what}: A and B drew into textures, not the window"
            );
            overdraw_is_exactly(map, &[x_rect, y_rect], &what);
            let err = conservation_error(&map.heat, &map.draws, &what);
            assert!(err <= CONSERVATION, "{what}: Σ heat off by {err:.2e}");
        }
    }
}

#[test]
fn chain_textures_have_their_own_maps() {
    for (api, session) in chain() {
        for map in &session.heat {
            let what = format!("chain {api} frame {}", map.frame);
            let [ta, tb] = bound_textures(session, map.frame)[..] else {
                panic!("{what}: two glBindTexture per frame (TA, then TB)");
            };
            let targets = targets(session, map.frame);
            assert_eq!(
                targets.len(),
                2,
                "{what}: two offscreen targets: {targets:?}"
            );
            let of = |tex: u32| {
                targets
                    .iter()
                    .find(|t| {
                        t.target.attachments.first().and_then(Attachment::texture) == Some(tex)
                    })
                    .unwrap_or_else(|| panic!("{what}: no target for texture {tex}: {targets:?}"))
            };
            texture_target(of(ta), ta, CH_A, 6, &format!("{what}, TA"));
            texture_target(of(tb), tb, CH_B, 12, &format!("{what}, TB"));
        }
    }
}

#[test]
fn chain_passes_sampled_what_the_chain_feeds_them() {
    let b = CH_B;
    for (api, session) in chain() {
        for map in &session.heat {
            let what = format!("chain {api} frame {}", map.frame);
            let [ta, tb] = bound_textures(session, map.frame)[..] else {
                panic!("{what}: two glBindTexture per frame");
            };
            let targets = targets(session, map.frame);
            let id_of = |tex: u32| {
                targets
                    .iter()
                    .find(|t| {
                        t.target.attachments.first().and_then(Attachment::texture) == Some(tex)
                    })
                    .map(|t| t.target.id)
                    .unwrap_or_else(|| panic!("{what}: no target for texture {tex}"))
            };
            let flows = flows(session, map.frame);
            let a = flow_of(&flows, 6, &what);
            assert_eq!(
                (a.target, &a.sampled[..]),
                (id_of(ta), &[][..]),
                "{what}: A"
            );
            let pb = flow_of(&flows, 12, &what);
            assert_eq!(
                (pb.target, &pb.sampled[..]),
                (id_of(tb), &[ta][..]),
                "{what}: B"
            );
            for (call, bbox, n) in [
                (19, [0, 0, b, b], b * b),
                (21, [b, b, 4 * b, 2 * b], 3 * b * b),
            ] {
                let d = flow_of(&flows, call, &what);
                assert_eq!(
                    (d.target, &d.sampled[..]),
                    (0, &[tb][..]),
                    "{what}: call {call}"
                );
                assert_eq!(d.bbox, bbox, "{what}: call {call}'s box");
                assert!(
                    d.coverage.iter().all(|&v| v == 1)
                        && (d.coverage.len() == n as usize || !d.note.is_empty()),
                    "{what}: call {call}'s coverage ({} values) / note {:?}",
                    d.coverage.len(),
                    d.note
                );
            }
        }
    }
}

#[test]
fn frames_are_bit_identical_with_offscreen_heat() {
    let dir = scratch("offscreen-identical");
    for (name, extra) in [
        (
            "offscreen_pass",
            &["--size", "96x64", "--target", "32", "--loop", "8"][..],
        ),
        (
            "chain",
            &["--size", "128x64", "--target", "64", "--loop", "8"][..],
        ),
    ] {
        for (api, label, _) in RUNS {
            let mut args = vec!["--api", api, "--frames", "4", "--checksum"];
            args.extend_from_slice(extra);
            let session = dir.join(format!("{name}-{api}-{label}.gpuheat"));
            let (timing, env) = common::timing(label);
            let flags = ["--heat", "--frames", "3", "--timing", timing];
            let (plain, traced) =
                checksums_plain_and_traced_env(&session, name, &flags, env, &args);
            assert_eq!(traced, plain, "{name} {api} {label}");
            let s = Session::open(&session).unwrap();
            assert_eq!(s.heat.len(), 3, "{name} {api}: {:?}", s.heat_missing);
        }
    }
}

/// The flow of `map`'s frame, checked for conservation: Σ total(screen) = Σ T_d of every
/// painted draw (1e-4 relative), with no remainder (everything drawn offscreen is sampled
/// by a draw that reaches the screen).
fn flow_conserved(session: &Session, map: &HeatMap, what: &str) -> FrameFlowCost {
    let fc = frame_flow(session, map.frame).unwrap_or_else(|| panic!("{what}: no flow"));
    assert!(
        fc.remainders.is_empty(),
        "{what}: remainders {:?}",
        fc.remainders
    );
    let (screen, rest, painted) = fc.balance();
    eprintln!("{what}: Σ total(screen) {screen:.1} ns, remainders {rest:.1}, Σ T_d {painted:.1}");
    if painted == 0.0 {
        assert_eq!(screen, 0.0, "{what}");
    } else {
        let err = (screen - painted).abs() / painted;
        assert!(err <= CONSERVATION, "{what}: Σ total heat off by {err:.2e}");
    }
    fc
}

/// `total - own` of the screen: what flowed in from upstream, per pixel.
fn upstream_map(fc: &FrameFlowCost, screen: TargetKey) -> Vec<f64> {
    let t = fc.target(screen).expect("screen target");
    let total = fc.total_map(screen).expect("screen total map");
    total
        .iter()
        .zip(&t.own)
        .map(|(&tot, &own)| tot - f64::from(own))
        .collect()
}

/// Every pixel of `up` is `inside` within `rects` (1e-6 relative, 1e-6 ns absolute) and 0
/// elsewhere.
fn upstream_is(up: &[f64], w: u32, rects: &[[u32; 4]], inside: f64, what: &str) {
    let tol = inside.abs() * 1e-6 + 1e-6;
    for (i, &v) in up.iter().enumerate() {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let hit = rects
            .iter()
            .any(|r| (r[0]..r[2]).contains(&x) && (r[1]..r[3]).contains(&y));
        let want = if hit { inside } else { 0.0 };
        assert!(
            (v - want).abs() <= tol,
            "{what}: upstream cost at ({x},{y}) {v} ns, expected {want}"
        );
    }
}

#[test]
fn offscreen_pass_total_map_puts_the_pass_on_the_composite() {
    let (w, h, s) = (OFF_W, OFF_H, OFF_S);
    let c_rect = [w / 2, h / 2, w / 2 + s, h / 2 + s];
    for (api, session) in offscreen_pass() {
        for map in &session.heat {
            let what = format!("offscreen_pass {api} frame {}", map.frame);
            let fc = flow_conserved(session, map, &what);
            let t_p = targets(session, map.frame)[0]
                .draws
                .iter()
                .map(|d| d.time_ns as f64)
                .sum::<f64>();
            let screen = TargetKey {
                context: map.context,
                id: 0,
            };
            // C consumed all of T's pass; D nothing.
            let c = fc
                .draws
                .iter()
                .find(|d| d.call == 12)
                .expect("C in the flow");
            assert!(
                (c.inflow_ns - t_p).abs() <= t_p * 1e-9 + 1e-9,
                "{what}: C received {} ns of T_P = {t_p}",
                c.inflow_ns
            );
            let d = fc
                .draws
                .iter()
                .find(|d| d.call == 14)
                .expect("D in the flow");
            assert_eq!(d.inflow_ns, 0.0, "{what}: D samples nothing");
            // Spread evenly over C's S×S pixels, nowhere else.
            let up = upstream_map(&fc, screen);
            upstream_is(&up, w, &[c_rect], t_p / f64::from(s * s), &what);
        }
    }
}

#[test]
fn chain_total_map_splits_the_chain_one_to_three_over_the_pixels_that_sampled_it() {
    let b = CH_B;
    let x_rect = [0, 0, b, b];
    let y_rect = [b, b, 4 * b, 2 * b];
    for (api, session) in chain() {
        for map in &session.heat {
            let what = format!("chain {api} frame {}", map.frame);
            let fc = flow_conserved(session, map, &what);
            let own = |call: u32| {
                let d = fc
                    .draws
                    .iter()
                    .find(|d| d.call == call)
                    .expect("draw in the flow");
                d.time_ns as f64
            };
            let (t_a, t_b) = (own(6), own(12));
            let inflow = |call: u32| {
                fc.draws
                    .iter()
                    .find(|d| d.call == call)
                    .map(|d| d.inflow_ns)
                    .unwrap()
            };
            let close = |a: f64, b: f64| (a - b).abs() <= b.abs() * 1e-9 + 1e-9;
            assert!(close(inflow(12), t_a), "{what}: B received all of A");
            assert!(
                close(inflow(19), (t_a + t_b) / 4.0),
                "{what}: X received {} of T_A + T_B = {}",
                inflow(19),
                t_a + t_b
            );
            assert!(
                close(inflow(21), 3.0 * (t_a + t_b) / 4.0),
                "{what}: Y received {} of T_A + T_B = {}",
                inflow(21),
                t_a + t_b
            );
            let screen = TargetKey {
                context: map.context,
                id: 0,
            };
            let up = upstream_map(&fc, screen);
            upstream_is(
                &up,
                CH_W,
                &[x_rect, y_rect],
                (t_a + t_b) / f64::from(4 * b * b),
                &what,
            );
            // A pixel of X was fed by both passes of the chain.
            let pick = fc.pick(screen, 1, 1).unwrap();
            assert_eq!(pick.upstream.len(), 2, "{what}: TA and TB fed X: {pick:?}");
        }
    }
}
