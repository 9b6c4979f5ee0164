//! Geometry capture (full mode): every draw of a captured frame gets its post-transform
//! positions (a GEOM record per frame), recorded by transform feedback replay inside the
//! program on real llvmpipe, both APIs. The expectations come from the examples' documented
//! numbers: the rectangle each draw's uniforms ask for, the triangles each draw makes.

mod common;

use common::*;
use gpuheat_session::{CallClass, DrawGeometry, FrameGeometry, Session};
use std::process::Command;

const APIS: [&str; 2] = ["gles", "gl"];
const TRIANGLES: u32 = 4;

/// The window-space bounding rectangle (x0, y0, x1, y1) of a draw's positions: clip →
/// normalized device → window with the recorded viewport.
fn window_rect(d: &DrawGeometry) -> [f64; 4] {
    let [vx, vy, vw, vh] = d.viewport.map(f64::from);
    let mut r = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for p in &d.positions {
        let w = f64::from(p[3]);
        assert!(w > 0.0, "call {}: w = {w}", d.call);
        let x = vx + (f64::from(p[0]) / w + 1.0) / 2.0 * vw;
        let y = vy + (f64::from(p[1]) / w + 1.0) / 2.0 * vh;
        r = [r[0].min(x), r[1].min(y), r[2].max(x), r[3].max(y)];
    }
    r
}

fn assert_rect(what: &str, got: [f64; 4], want: [u32; 4]) {
    let [x, y, w, h] = want.map(f64::from);
    let want = [x, y, x + w, y + h];
    for (g, e) in got.iter().zip(want) {
        assert!(
            (g - e).abs() < 1e-3,
            "{what}: window rect {got:?}, expected {want:?}"
        );
    }
}

/// The draws of each frame of `s`, as call indices, from its frame records.
fn draw_calls(s: &Session) -> Vec<(u64, Vec<u32>)> {
    s.frames
        .iter()
        .map(|f| {
            let calls = f
                .calls
                .iter()
                .enumerate()
                .filter(|(_, c)| s.functions.functions[c.func as usize].class == CallClass::Draw)
                .map(|(i, _)| i as u32)
                .collect();
            (f.index, calls)
        })
        .collect()
}

/// One GEOM record per captured frame, each listing every draw of its frame with
/// geometry (none missing), in call order.
fn complete_geometry<'a>(s: &'a Session, what: &str) -> Vec<&'a FrameGeometry> {
    let frames = draw_calls(s);
    assert_eq!(s.geometry.len(), frames.len(), "{what}: one GEOM per frame");
    frames
        .iter()
        .map(|(index, calls)| {
            let g = s
                .geometry
                .iter()
                .find(|g| g.frame == *index)
                .unwrap_or_else(|| panic!("{what}: no GEOM for frame {index}"));
            g.validate().unwrap();
            assert!(g.missing.is_empty(), "{what}: missing {:?}", g.missing);
            let got: Vec<u32> = g.draws.iter().map(|d| d.call).collect();
            assert_eq!(&got, calls, "{what} frame {index}: draws with geometry");
            g
        })
        .collect()
}

#[test]
fn hot_spot_quads_land_on_the_rectangles_their_uniforms_ask_for() {
    let dir = scratch("geometry-hot-spot");
    let (w, h, spot) = (96u32, 64u32, 8u32);
    for api in APIS {
        let size = format!("{w}x{h}");
        let args = [
            "--api", api, "--size", &size, "--spot", "8", "--loop", "5", "--frames", "4",
        ];
        let s = capture_env(
            &dir,
            api,
            "hot_spot",
            &["--mode", "full", "--frames", "2"],
            &args,
            &[],
        );
        // The report counts the frames that hold geometry (one context here).
        let path = dir.join(format!("hot_spot-{api}.gpuheat"));
        let out = run_gpuheat(&["report", path.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("geometry 8 draws with post-transform positions in 2 frames; "),
            "{text}"
        );
        for g in complete_geometry(&s, &format!("hot_spot {api}")) {
            assert_eq!(g.draws.len(), 4, "hot_spot {api}: K + 1 draws");
            assert_eq!(g.vertex_budget, 4 << 20);
            for (k, d) in g.draws.iter().enumerate() {
                let what = format!("hot_spot {api} frame {} draw {k}", g.frame);
                assert_eq!(d.primitive, TRIANGLES, "{what}");
                // A 4-vertex strip is 2 triangles, 6 vertices once unrolled.
                assert_eq!(d.positions.len(), 6, "{what}");
                assert_eq!(d.dropped_vertices, 0, "{what}");
                assert_eq!(d.viewport, [0, 0, w as i32, h as i32], "{what}");
                let want = if k < 3 {
                    [0, 0, w, h]
                } else {
                    [w / 2, h / 2, spot, spot]
                };
                assert_rect(&what, window_rect(d), want);
                for p in &d.positions {
                    assert_eq!((p[2], p[3]), (0.0, 1.0), "{what}: z, w");
                }
            }
        }
    }
}

/// many_draws' documented grid: tile i's window rectangle (x, y, w, h).
fn tile(i: u32, n: u32, w: u32, h: u32) -> [u32; 4] {
    let cols = (1..).find(|c| c * c >= n).unwrap();
    let rows = n.div_ceil(cols);
    let (c, r) = (i % cols, i / cols);
    let (x0, x1) = (c * w / cols, (c + 1) * w / cols);
    let (y0, y1) = (r * h / rows, (r + 1) * h / rows);
    [x0, y0, x1 - x0, y1 - y0]
}

#[test]
fn many_draws_tiles_have_3t_vertices_on_their_documented_rectangles() {
    let dir = scratch("geometry-many-draws");
    let (n, t, w, h) = (7u32, 5u32, 96u32, 64u32);
    // Timed deferred, a draw is replayed as drawn rather than through its indices read back
    // (which waits): the same vertices either way.
    for (api, timing) in APIS
        .iter()
        .flat_map(|&api| [(api, "isolated"), (api, "deferred")])
    {
        let tag = format!("{api}-{timing}");
        let s = capture_env(
            &dir,
            &tag,
            "many_draws",
            &["--mode", "full", "--frames", "2", "--timing", timing],
            &[
                "--api", api, "--size", "96x64", "--draws", "7", "--tris", "5", "--frames", "4",
            ],
            &[],
        );
        for g in complete_geometry(&s, &format!("many_draws {tag}")) {
            assert_eq!(g.draws.len(), n as usize);
            let mut triangles = 0;
            for (i, d) in g.draws.iter().enumerate() {
                let what = format!("many_draws {tag} frame {} tile {i}", g.frame);
                assert_eq!(d.primitive, TRIANGLES, "{what}");
                assert_eq!(d.positions.len(), 3 * t as usize, "{what}");
                assert_eq!(d.dropped_vertices, 0, "{what}");
                assert_rect(&what, window_rect(d), tile(i as u32, n, w, h));
                // The fan's shared vertices, shaded once each, come back bit for bit
                // wherever its indices repeat them.
                let bits: Vec<[u32; 4]> = d.positions.iter().map(|p| p.map(f32::to_bits)).collect();
                for (k, tri) in bits.chunks_exact(3).enumerate() {
                    assert_eq!(tri[0], bits[0], "{what}: triangle {k} starts at the corner");
                    if let Some(next) = bits.get(3 * k + 4) {
                        assert_eq!(tri[2], *next, "{what}: triangles {k} and {} share", k + 1);
                    }
                }
                triangles += d.positions.len() / 3;
            }
            assert_eq!(triangles, (n * t) as usize, "N·T triangles per frame");
            assert_eq!(g.vertices(), u64::from(3 * n * t));
        }
    }
}

#[test]
fn a_small_budget_keeps_whole_triangles_and_counts_the_rest() {
    let dir = scratch("geometry-budget");
    // 6 draws of 5 triangles (15 vertices each, 90 in all) against 40 vertices: 15, 15, then
    // 3 whole triangles (9) of the third, nothing of the rest.
    let s = capture_env(
        &dir,
        "budget",
        "many_draws",
        &["--mode", "full", "--frames", "2"],
        &[
            "--size", "96x64", "--draws", "6", "--tris", "5", "--frames", "4",
        ],
        &[("GPUHEAT_GEOMETRY_VERTICES", "40")],
    );
    for g in complete_geometry(&s, "many_draws budget") {
        assert_eq!(g.vertex_budget, 40);
        let held: Vec<usize> = g.draws.iter().map(|d| d.positions.len()).collect();
        let dropped: Vec<u64> = g.draws.iter().map(|d| d.dropped_vertices).collect();
        assert_eq!(held, [15, 15, 9, 0, 0, 0]);
        assert_eq!(dropped, [0, 0, 6, 15, 15, 15]);
        assert!(g.vertices() <= g.vertex_budget);
        assert_eq!(g.vertices() + dropped.iter().sum::<u64>(), 90);
        // What was kept is the start of the draw: the first triangles of tile 2.
        assert_rect("tile 0", window_rect(&g.draws[0]), tile(0, 6, 96, 64));
    }
}

#[test]
fn geometry_capture_can_be_turned_off_and_timeline_mode_has_none() {
    let dir = scratch("geometry-off");
    let args = [
        "--size", "96x64", "--draws", "4", "--tris", "3", "--frames", "4",
    ];
    let s = capture_env(
        &dir,
        "timeline",
        "many_draws",
        &["--mode", "timeline", "--frames", "2"],
        &args,
        &[],
    );
    assert_eq!(s.frames.len(), 2);
    assert!(s.geometry.is_empty(), "timeline mode records no geometry");
    let s = capture_env(
        &dir,
        "off",
        "many_draws",
        &["--mode", "full", "--frames", "2"],
        &args,
        &[("GPUHEAT_GEOMETRY_VERTICES", "0")],
    );
    assert_eq!(s.frames.len(), 2);
    assert!(s.geometry.is_empty(), "a budget of 0 turns geometry off");
}

#[test]
fn many_draws_renders_the_same_with_geometry_capture() {
    let dir = scratch("geometry-checksum");
    for (api, timing) in APIS
        .iter()
        .flat_map(|&api| [(api, "isolated"), (api, "deferred")])
    {
        let session = dir.join(format!("many-draws-{api}-{timing}.gpuheat"));
        let (plain, traced) = checksums_plain_and_traced(
            &session,
            "many_draws",
            &["--frames", "3", "--mode", "full", "--timing", timing],
            &[
                "--api",
                api,
                "--draws",
                "30",
                "--tris",
                "40",
                "--frames",
                "5",
                "--checksum",
            ],
        );
        assert_eq!(traced, plain, "many_draws {api} {timing}");
        let s = Session::open(&session).unwrap();
        assert_eq!(
            s.geometry.len(),
            3,
            "{api}: the traced run captured geometry"
        );
        for g in &s.geometry {
            assert_eq!(g.vertices(), 30 * 40 * 3);
        }
    }
}

/// `gpuheat attach --mode full` into a running hot_spot (with `extra` example flags): the
/// session, after checking the program kept running.
fn attach_hot_spot(dir: &std::path::Path, extra: &[&str]) -> Session {
    let mut child = Command::new(example("hot_spot"))
        .args(["--size", "96x64", "--spot", "8", "--loop", "5"])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_frame_loop(child.id());
    let session = dir.join(format!("attach{}.gpuheat", extra.len()));
    let pid = child.id().to_string();
    let out = run_gpuheat(&[
        "attach",
        &pid,
        "-o",
        session.to_str().unwrap(),
        "--frames",
        "2",
        "--mode",
        "full",
    ]);
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        out.status.success(),
        "attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(alive, "the program died");
    Session::open(&session).unwrap()
}

/// Attached to a program that linked its programs and detached their shaders before the
/// agent arrived, there is nothing to build a shadow program from, and every draw says so
/// instead of leaving a hole.
#[test]
fn attach_after_the_shaders_were_detached_reports_why_each_draw_is_missing() {
    let dir = scratch("geometry-attach");
    let s = attach_hot_spot(&dir, &[]);
    let frames = draw_calls(&s);
    assert_eq!(s.geometry.len(), frames.len());
    for (g, (index, calls)) in s.geometry.iter().zip(&frames) {
        assert_eq!(g.frame, *index);
        assert!(g.draws.is_empty());
        let missing: Vec<u32> = g.missing.iter().map(|m| m.call).collect();
        assert_eq!(&missing, calls, "every draw is listed as missing");
        for m in &g.missing {
            assert!(
                m.reason.contains("did not see it link") && !m.reason.contains('\n'),
                "reason: {}",
                m.reason
            );
        }
    }
}

/// Attached to a program whose shaders stay attached after linking (deleted, so only
/// flagged), the agent reads their sources and records every draw's geometry, as in launch
/// mode: 6 vertices per quad.
#[test]
fn attach_records_geometry_when_the_shaders_stay_attached() {
    let dir = scratch("geometry-attach-kept");
    let s = attach_hot_spot(&dir, &["--keep-shaders"]);
    let frames = draw_calls(&s);
    assert_eq!(s.geometry.len(), frames.len());
    for (g, (_, calls)) in s.geometry.iter().zip(&frames) {
        assert!(g.missing.is_empty(), "missing: {:?}", g.missing);
        let got: Vec<u32> = g.draws.iter().map(|d| d.call).collect();
        assert_eq!(&got, calls);
        for d in &g.draws {
            assert_eq!(d.positions.len(), 6, "call {}", d.call);
        }
    }
}

/// `fixed_function`'s documented matrices (rows, as its doc writes them) and vertices, typed
/// again here so the expected positions do not come from the program under test.
mod fixed {
    pub const P: [[f64; 4]; 4] = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 2.0, 0.0, 0.0],
        [0.0, 0.0, -1.25, -2.25],
        [0.0, 0.0, -1.0, 0.0],
    ];
    pub const MV_A: [[f64; 4]; 4] = [
        [1.0, 0.0, 0.0, -0.75],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, -3.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    pub const MV_B: [[f64; 4]; 4] = [
        [0.0, -0.5, 0.0, 0.75],
        [0.5, 0.0, 0.0, -0.25],
        [0.0, 0.0, 1.0, -2.5],
        [0.0, 0.0, 0.0, 1.0],
    ];
    pub const MV_C: [[f64; 4]; 4] = [
        [0.25, 0.0, 0.0, 0.0],
        [0.0, 0.25, 0.0, 0.25],
        [0.0, 0.0, 0.25, -2.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    /// MV_C · T and MV_C · T · T, T = translate(2, 0, 0): the moving list's two calls.
    pub const MV_D1: [[f64; 4]; 4] = [
        [0.25, 0.0, 0.0, 0.5],
        [0.0, 0.25, 0.0, 0.25],
        [0.0, 0.0, 0.25, -2.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    pub const MV_D2: [[f64; 4]; 4] = [
        [0.25, 0.0, 0.0, 1.0],
        [0.0, 0.25, 0.0, 0.25],
        [0.0, 0.0, 0.25, -2.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    pub const A: [[f64; 3]; 6] = [
        [-0.5, -0.5, 0.0],
        [0.5, -0.5, 0.0],
        [0.0, 0.5, 0.0],
        [-0.5, -0.5, -1.0],
        [0.5, -0.5, -1.0],
        [0.5, 0.5, -1.0],
    ];
    /// B's vertices (z 0) taken through its indices 0 1 2 2 1 3.
    pub const B: [[f64; 3]; 6] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
    ];
    pub const C: [[f64; 3]; 4] = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];

    /// P · MV · (v, 1).
    pub fn clip(mv: &[[f64; 4]; 4], v: [f64; 3]) -> [f64; 4] {
        let mul = |m: &[[f64; 4]; 4], x: [f64; 4]| {
            let mut out = [0.0; 4];
            for (o, row) in out.iter_mut().zip(m) {
                *o = row.iter().zip(x).map(|(a, b)| a * b).sum();
            }
            out
        };
        mul(&P, mul(mv, [v[0], v[1], v[2], 1.0]))
    }

    /// Window coordinates (x, y) of clip position `c` in viewport `[x, y, w, h]`.
    pub fn window(c: [f64; 4], viewport: [f64; 4]) -> [f64; 2] {
        [
            viewport[0] + (c[0] / c[3] + 1.0) / 2.0 * viewport[2],
            viewport[1] + (c[1] / c[3] + 1.0) / 2.0 * viewport[3],
        ]
    }
}

/// Each captured frame's calls and work calls.
fn calls_and_work(s: &Session) -> Vec<(usize, usize)> {
    s.frames
        .iter()
        .map(|f| {
            let work = f
                .calls
                .iter()
                .filter(|c| s.functions.functions[c.func as usize].class.is_work())
                .count();
            (f.calls.len(), work)
        })
        .collect()
}

fn close(got: [f32; 4], want: [f64; 4]) -> bool {
    got.iter()
        .zip(want)
        .all(|(&g, w)| (f64::from(g) - w).abs() <= 1e-5 * w.abs().max(1.0))
}

#[test]
fn fixed_function_vertices_land_where_their_matrices_say() {
    let dir = scratch("geometry-fixed-function");
    let (w, h) = (128.0, 96.0);
    let s = capture_env(
        &dir,
        "gl",
        "fixed_function",
        &["--frames", "2"],
        &["--size", "128x96", "--frames", "4"],
        &[],
    );
    assert_eq!(s.geometry.len(), 2, "one GEOM per captured frame");
    assert_eq!(
        calls_and_work(&s),
        [(21, 6); 2],
        "the example's calls and work calls"
    );
    for g in &s.geometry {
        g.validate().unwrap();
        assert!(g.missing.is_empty(), "missing: {:?}", g.missing);
        let f = s.frames.iter().find(|f| f.index == g.frame).unwrap();
        let name = |call: u32| {
            s.functions.functions[f.calls[call as usize].func as usize]
                .name
                .as_str()
        };
        let names: Vec<&str> = g.draws.iter().map(|d| name(d.call)).collect();
        assert_eq!(
            names,
            [
                "glDrawArrays",
                "glDrawElements",
                "glCallList",
                "glCallList",
                "glCallList"
            ],
            "frame {}",
            g.frame
        );
        for d in &g.draws {
            assert_eq!(d.primitive, TRIANGLES, "{}", name(d.call));
            assert_eq!(d.dropped_vertices, 0, "{}", name(d.call));
            assert_eq!(d.viewport, [0, 0, 128, 96], "{}", name(d.call));
            assert_eq!(d.positions.len(), 6, "{}", name(d.call));
        }
        // The arrays' vertices in their draw order (B's through its indices).
        for (d, (mv, vertices)) in g.draws[..2]
            .iter()
            .zip([(&fixed::MV_A, &fixed::A), (&fixed::MV_B, &fixed::B)])
        {
            for (i, (&got, &v)) in d.positions.iter().zip(vertices).enumerate() {
                let want = fixed::clip(mv, v);
                assert!(
                    close(got, want),
                    "{} vertex {i}: clip {got:?}, expected {want:?}",
                    name(d.call)
                );
                let [x, y] = fixed::window(want, [0.0, 0.0, w, h]);
                let got_xy = fixed::window(got.map(f64::from), [0.0, 0.0, w, h]);
                assert!(
                    (got_xy[0] - x).abs() < 1e-3 && (got_xy[1] - y).abs() < 1e-3,
                    "{} vertex {i}: window {got_xy:?}, expected {:?}",
                    name(d.call),
                    [x, y]
                );
            }
        }
        // Each list's quad: two triangles over its four corners (which diagonal splits it
        // is the driver's). The moving list's calls where their own calls drew: from the
        // matrices each started from, not from those it left.
        for (list, mv) in g.draws[2..]
            .iter()
            .zip([&fixed::MV_C, &fixed::MV_D1, &fixed::MV_D2])
        {
            assert_quad(list.call, &list.positions, mv);
        }
    }
}

/// `positions` (of call `call`) are a quad of `fixed::C` under `mv`: two triangles over its
/// four corners, every corner used, none degenerate.
fn assert_quad(call: u32, positions: &[[f32; 4]], mv: &[[f64; 4]; 4]) {
    let corners: Vec<[f64; 4]> = fixed::C.iter().map(|&v| fixed::clip(mv, v)).collect();
    let mut seen = [false; 4];
    for (i, &got) in positions.iter().enumerate() {
        let k = corners
            .iter()
            .position(|&c| close(got, c))
            .unwrap_or_else(|| panic!("call {call} vertex {i}: {got:?} is none of {corners:?}"));
        seen[k] = true;
    }
    assert_eq!(
        seen, [true; 4],
        "call {call}: every corner of the quad: {positions:?}"
    );
    for t in positions.chunks(3) {
        assert!(
            t[0] != t[1] && t[1] != t[2] && t[0] != t[2],
            "a degenerate triangle {t:?}"
        );
    }
}

#[test]
fn a_text_of_display_lists_lands_where_each_glyph_list_puts_it() {
    // `--text 1`: the moving list D drawn twice by one glCallLists of two names through the
    // list base, as a display list font draws two glyphs: the call's geometry is D1's quad
    // then D2's, from the matrices each run of D started from. Its count is remembered by
    // its names, so the later frames record it at once. Its heat covers both quads: 768
    // fragments.
    let dir = scratch("geometry-fixed-function-text");
    let s = capture_env(
        &dir,
        "gl",
        "fixed_function",
        &["--frames", "3", "--heat"],
        &["--size", "128x96", "--frames", "5", "--text", "1"],
        &[],
    );
    assert_eq!(s.geometry.len(), 3, "one GEOM per captured frame");
    assert_eq!(
        calls_and_work(&s),
        [(22, 5); 3],
        "the example's calls and work calls"
    );
    for g in &s.geometry {
        assert!(g.missing.is_empty(), "missing: {:?}", g.missing);
        let f = s.frames.iter().find(|f| f.index == g.frame).unwrap();
        let text = g
            .draws
            .iter()
            .find(|d| {
                s.functions.functions[f.calls[d.call as usize].func as usize].name == "glCallLists"
            })
            .unwrap_or_else(|| panic!("frame {}: no glCallLists geometry", g.frame));
        assert_eq!(text.primitive, TRIANGLES);
        assert_eq!(
            (text.positions.len(), text.dropped_vertices),
            (12, 0),
            "frame {}: two quads",
            g.frame
        );
        assert_quad(text.call, &text.positions[..6], &fixed::MV_D1);
        assert_quad(text.call, &text.positions[6..], &fixed::MV_D2);
    }
    assert_eq!(s.heat.len(), 3, "{:?}", s.heat_missing);
    for m in &s.heat {
        let f = s.frames.iter().find(|f| f.index == m.frame).unwrap();
        let text: Vec<u64> = m
            .draws
            .iter()
            .filter(|d| {
                s.functions.functions[f.calls[d.call as usize].func as usize].name == "glCallLists"
            })
            .map(|d| d.fragments)
            .collect();
        assert_eq!(text, [2 * 384], "frame {}: {:?}", m.frame, m.draws);
    }
}

#[test]
fn fixed_function_renders_the_same_and_sees_no_error_with_geometry_and_heat() {
    let dir = scratch("geometry-fixed-function-checksum");
    // Each frame also runs a list in GL_FEEDBACK mode: what the driver writes into the
    // program's buffer must not change either.
    let args = ["--frames", "5", "--checksum", "--feedback", "1"];
    let plain = Command::new(example("fixed_function"))
        .args(args)
        .output()
        .unwrap();
    assert!(plain.status.success(), "{plain:?}");
    // The last of the program's 5 frames is captured (the checksum is of it: a replay that
    // moved the program's matrices changes the frames it was captured in), and the program
    // is left to print it.
    let (session, traced) = capture_with_output(
        &dir,
        "fixed_function",
        &["--skip", "2", "--frames", "3", "--keep-running", "--heat"],
        &args,
    );
    let stderr = String::from_utf8_lossy(&traced.stderr);
    // The program checks glGetError after its frames and says so on stderr when it is set.
    assert!(!stderr.contains("GL error"), "{stderr}");
    assert_eq!(checksum(&traced.stdout), checksum(&plain.stdout));
    let feedback = |out: &[u8]| result_line(out, "feedback");
    let expected = feedback(&plain.stdout);
    assert!(
        expected.as_deref().is_some_and(|l| l != "feedback=0"),
        "{expected:?}"
    );
    assert_eq!(feedback(&traced.stdout), expected, "the program's feedback");
    let s = Session::open(&session).unwrap();
    assert_eq!(
        calls_and_work(&s),
        [(25, 7); 3],
        "the example's calls with --feedback 1"
    );
    assert_eq!(s.geometry.len(), 3, "the traced run captured geometry");
    for g in &s.geometry {
        assert_eq!(g.vertices(), 30, "frame {}: {:?}", g.frame, g.missing);
        // The list run in feedback mode: not run again, and said why.
        assert_eq!(g.missing.len(), 1, "frame {}: {:?}", g.frame, g.missing);
        assert!(
            g.missing[0].reason.contains("GL_FEEDBACK"),
            "{:?}",
            g.missing
        );
    }
    // Its heat: the program leaves the alpha test (GL_EQUAL 1) and a user clip plane on
    // (z <= -1 in eye space), which a compatibility profile applies to the painter's own
    // passes too unless it turns them off (neverball's clip planes lost 0.5-1% of its map):
    // each map holds its draws' time (1e-4), each of the five draws painted. Each list's
    // quad covers its 16 x 24 pixels (the moving list's calls from where each started; the
    // frames' checksum above says the program's own matrices were left as they were).
    assert_eq!(s.heat.len(), 3, "{:?}", s.heat_missing);
    for m in &s.heat {
        let painted: f64 = m.heat.iter().map(|&v| f64::from(v)).sum();
        let drawn: Vec<_> = m.draws.iter().filter(|d| d.fragments > 0).collect();
        assert_eq!(drawn.len(), 5, "frame {}: {:?}", m.frame, m.draws);
        let f = s.frames.iter().find(|f| f.index == m.frame).unwrap();
        let lists: Vec<u64> = drawn
            .iter()
            .filter(|d| {
                s.functions.functions[f.calls[d.call as usize].func as usize].name == "glCallList"
            })
            .map(|d| d.fragments)
            .collect();
        assert_eq!(lists, [384; 3], "frame {}: {:?}", m.frame, m.draws);
        let expected: f64 = drawn.iter().map(|d| d.time_ns as f64).sum();
        assert!(
            (painted - expected).abs() <= expected * 1e-4,
            "frame {}: Σ heat {painted} against Σ T {expected}",
            m.frame
        );
    }
}

/// Fixed-function texturing reads the textures bound to its enabled units: `fixed_function
/// --copy 1` copies 32x32 window pixels into texture X and draws X, with no program, over
/// 32x32 other pixels. The copy's cost reaches the screen through X, whose only consumer
/// is that block (it was left as "not sampled" while the painter read samplers of programs
/// only).
#[test]
fn fixed_function_texturing_carries_a_copy_to_the_screen() {
    let dir = scratch("geometry-fixed-function-copy");
    let session = capture(
        &dir,
        "fixed_function",
        &["--heat", "--skip", "2", "--frames", "3"],
        &["--copy", "1", "--frames", "6"],
    );
    let s = Session::open(&session).unwrap();
    assert_eq!(
        calls_and_work(&s),
        [(36, 8); 3],
        "the example's calls with --copy 1"
    );
    assert_eq!(s.flow.len(), 3, "a flow per frame");
    for flow in &s.flow {
        let f = s.frames.iter().find(|f| f.index == flow.frame).unwrap();
        let name = |call: u32| {
            s.functions.functions[f.calls[call as usize].func as usize]
                .name
                .as_str()
        };
        // X is what the copy wrote: the copy's own target.
        let copy = flow
            .draws
            .iter()
            .find(|d| name(d.call) == "glCopyTexSubImage2D")
            .unwrap_or_else(|| panic!("frame {}: {:?}", flow.frame, flow.draws));
        // The textured block (the frame's last glEnd) samples it.
        let block = flow
            .draws
            .iter()
            .rfind(|d| name(d.call) == "glEnd")
            .unwrap_or_else(|| panic!("frame {}: {:?}", flow.frame, flow.draws));
        assert!(block.call > copy.call, "frame {}", flow.frame);
        assert_eq!(block.sampled.len(), 1, "frame {}: {block:?}", flow.frame);
        let x = block.sampled[0];
        assert!(
            s.target_heat
                .iter()
                .filter(|t| t.frame == flow.frame)
                .any(|t| t.draws.iter().any(|d| d.call == copy.call)
                    && t.target.attachments.iter().any(|a| matches!(
                        a,
                        gpuheat_session::Attachment::Texture { name, .. } if *name == x
                    ))),
            "frame {}: the copy's target is texture {x}",
            flow.frame
        );
    }
    // The screen's map: the block's 32 x 32 fragments.
    for m in &s.heat {
        let f = s.frames.iter().find(|f| f.index == m.frame).unwrap();
        let blocks: Vec<u64> = m
            .draws
            .iter()
            .filter(|d| {
                s.functions.functions[f.calls[d.call as usize].func as usize].name == "glEnd"
            })
            .map(|d| d.fragments)
            .collect();
        assert_eq!(
            blocks.last(),
            Some(&1024),
            "frame {}: {:?}",
            m.frame,
            m.draws
        );
    }
    let report = run_gpuheat(&["report", session.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("remainders: none"),
        "the copy's cost reaches the screen:\n{text}"
    );
}
