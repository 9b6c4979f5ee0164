//! GL 1.x immediate mode (`immediate_mode`, on llvmpipe's compatibility profile): each
//! `glBegin` … `glEnd` block and each `glRectf` is a draw, timed, painted and given its
//! geometry, with the fragments and corners the example documents; the program renders the
//! same and sees no error of ours.

mod common;

use common::*;
use gpuheat_session::{CallClass, Session};

/// The example's default size.
const W: u32 = 128;
const H: u32 = 96;

/// Each draw's entry point and its pixels (x0, y0, x1, y1 in window coordinates), as the
/// example's doc gives them: the left half, 32×32 at (80, 16), 16×16 at (96, 64).
const DRAWS: [(&str, [u32; 4]); 3] = [
    ("glEnd", [0, 0, 64, 96]),
    ("glEnd", [80, 16, 112, 48]),
    ("glRectf", [96, 64, 112, 80]),
];

fn area([x0, y0, x1, y1]: [u32; 4]) -> u64 {
    u64::from((x1 - x0) * (y1 - y0))
}

fn inside([x0, y0, x1, y1]: [u32; 4], x: u32, y: u32) -> bool {
    x >= x0 && x < x1 && y >= y0 && y < y1
}

/// The draws of a captured frame: (call index, entry point), in call order.
fn draws(s: &Session, frame: u64) -> Vec<(u32, String)> {
    let f = s.frames.iter().find(|f| f.index == frame).unwrap();
    f.calls
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let info = &s.functions.functions[usize::from(c.func)];
            (info.class == CallClass::Draw).then(|| (i as u32, info.name.clone()))
        })
        .collect()
}

#[test]
fn blocks_and_rectangles_are_draws_with_their_fragments_heat_and_corners() {
    let dir = scratch("immediate-full");
    let file = capture(
        &dir,
        "immediate_mode",
        &["--frames", "3", "--heat"],
        &["--frames", "6"],
    );
    let s = Session::open(&file).unwrap();
    let r = report(&file);
    assert_eq!(s.frames.len(), 3);
    for f in &s.frames {
        let found = draws(&s, f.index);
        let names: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["glEnd", "glEnd", "glRectf"], "frame {}", f.index);
        // Each draw's samples passed: its rectangle's pixels.
        let work = frame_draws(&r, f.index);
        for ((call, name), (_, rect)) in found.iter().zip(DRAWS) {
            let d = work
                .iter()
                .find(|d| d["call"].as_u64() == Some(u64::from(*call)))
                .unwrap_or_else(|| panic!("frame {} {name} (call {call}) is timed", f.index));
            assert_eq!(
                counter(d, "samples_passed"),
                Some(area(rect)),
                "frame {} {name}",
                f.index
            );
            assert!(d["gpu_serialized_ns"].as_u64().is_some(), "{d}");
        }
        // A block's text names it, its vertices counted.
        let texts: Vec<&str> = work
            .iter()
            .filter(|d| d["function"] == "glEnd")
            .map(|d| d["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "glBegin(GL_QUADS) … glEnd(): 4 vertices",
                "glBegin(GL_TRIANGLES) … glEnd(): 6 vertices"
            ]
        );
    }

    // The checklist names the blocks: their glEnds, the 10 glVertex2f calls inside.
    let out = run_gpuheat(&["checklist", "--json", file.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<&serde_json::Value> = findings["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "immediate-mode")
        .collect();
    assert_eq!(found.len(), s.frames.len(), "{findings}");
    for f in found {
        let frame = f["frame"].as_u64().unwrap();
        let ends: Vec<u64> = draws(&s, frame)
            .iter()
            .filter(|(_, n)| n == "glEnd")
            .map(|(i, _)| u64::from(*i))
            .collect();
        assert_eq!(evidence_calls(f), ends, "{f}");
        assert_eq!(
            f["title"], "2 glBegin/glEnd blocks: 10 calls inside for 10 vertices",
            "{f}"
        );
    }

    // Heat: each draw painted over its rectangle, nothing elsewhere, its time conserved.
    assert_eq!(s.heat.len(), 3, "{:?}", s.heat_missing);
    for m in &s.heat {
        assert_eq!((m.width, m.height), (W, H));
        let calls: Vec<u32> = draws(&s, m.frame).iter().map(|d| d.0).collect();
        for (call, (name, rect)) in calls.iter().zip(DRAWS) {
            let d = m.draws.iter().find(|d| d.call == *call).unwrap();
            assert_eq!(d.fragments, area(rect), "frame {} {name}", m.frame);
        }
        for y in 0..H {
            for x in 0..W {
                let want = DRAWS.iter().filter(|(_, r)| inside(*r, x, y)).count() as u32;
                assert_eq!(m.overdraw[(y * W + x) as usize], want, "({x},{y})");
            }
        }
        let what = format!("frame {}", m.frame);
        assert!(
            conservation_error(&m.heat, &m.draws, &what) <= 1e-4,
            "{what}"
        );
    }

    // Geometry: two triangles per draw (the quad and the rectangle split), every corner of
    // its rectangle among them, clip w 1 (identity matrices).
    assert_eq!(s.geometry.len(), 3);
    for g in &s.geometry {
        assert!(g.missing.is_empty(), "{:?}", g.missing);
        let calls: Vec<u32> = draws(&s, g.frame).iter().map(|d| d.0).collect();
        assert_eq!(g.draws.iter().map(|d| d.call).collect::<Vec<_>>(), calls);
        for (d, (name, [x0, y0, x1, y1])) in g.draws.iter().zip(DRAWS) {
            assert_eq!(d.positions.len(), 6, "{name}");
            let ndc = |v: u32, size: u32| f64::from(v) / f64::from(size) * 2.0 - 1.0;
            let corners = [
                [ndc(x0, W), ndc(y0, H)],
                [ndc(x1, W), ndc(y0, H)],
                [ndc(x0, W), ndc(y1, H)],
                [ndc(x1, W), ndc(y1, H)],
            ];
            for p in &d.positions {
                assert!((p[3] - 1.0).abs() < 1e-6, "{name}: {p:?}");
                assert!(
                    corners.iter().any(|c| (f64::from(p[0]) - c[0]).abs() < 1e-5
                        && (f64::from(p[1]) - c[1]).abs() < 1e-5),
                    "{name}: {p:?} is none of {corners:?}"
                );
            }
            for c in corners {
                assert!(
                    d.positions
                        .iter()
                        .any(|p| (f64::from(p[0]) - c[0]).abs() < 1e-5
                            && (f64::from(p[1]) - c[1]).abs() < 1e-5),
                    "{name}: corner {c:?} missing from {:?}",
                    d.positions
                );
            }
        }
    }
}

#[test]
fn immediate_mode_renders_the_same_and_sees_no_error_under_each_mode() {
    let dir = scratch("immediate-checksum");
    for (tag, flags) in [
        ("timeline", &["--mode", "timeline"][..]),
        ("full", &["--mode", "full"][..]),
        ("heat", &["--heat"][..]),
    ] {
        let session = dir.join(format!("{tag}.gpuheat"));
        let (plain, traced) = checksums_plain_and_traced(
            &session,
            "immediate_mode",
            &[&["--frames", "3"], flags].concat(),
            &["--frames", "6", "--checksum"],
        );
        // The program checks glGetError after its frames and fails when it is set.
        assert_eq!(traced, plain, "{tag}");
        let s = Session::open(&session).unwrap();
        for f in &s.frames {
            assert_eq!(draws(&s, f.index).len(), 3, "{tag} frame {}", f.index);
        }
        if tag == "timeline" {
            // Timeline mode times each block with its timestamp pair.
            let timed: usize = s
                .pipelined
                .iter()
                .filter_map(|b| Some((s.frames.iter().find(|f| f.index == b.frame)?, b)))
                .flat_map(|(f, b)| b.times.iter().map(move |t| (f, t)))
                .filter(|(f, t)| {
                    f.calls
                        .get(t.call as usize)
                        .is_some_and(|c| s.functions.functions[usize::from(c.func)].name == "glEnd")
                })
                .count();
            assert!(timed >= 2 * s.frames.len(), "{timed} glEnd times");
        }
    }
}
