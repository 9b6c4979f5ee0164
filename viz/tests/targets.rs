//! Render targets in the viewer (issue 11), rendered offscreen: the screen's total-cost map
//! by default where the frame has offscreen targets, the own-cost map on request, an
//! offscreen target's own map when selected, and a picked pixel's upstream passes. On a
//! session built in code (`gpuheat_testkit`, exact numbers) and on a real capture of
//! the `chain` example (A → B → two window quads).

mod common;

use common::{capture, close, px, scratch};
use gpuheat_analysis::measure::flow::{self, FrameFlowCost};
use gpuheat_analysis::palette::{blend, choose_range, Palette, RangeChoice, Scale, ALPHA};
use gpuheat_session::Session;
use gpuheat_viz::{render_offscreen, Cost, Shot, ViewOptions};
use std::path::{Path, PathBuf};

/// The screen of the built session.
const W: u32 = 64;
const H: u32 = 48;

/// `gpuheat_testkit::offscreen_passes` (a 64×48 screen; target 1 (texture 7, 32×32) costs
/// 100,000 ns and is sampled by a screen draw over [8, 8, 24, 24) (1,000 ns); target 2
/// (texture 8, 16×16) costs 500 ns and is never sampled) and a screen draw over the right
/// third that costs 2,000 ns and samples nothing.
fn flow_session(dir: &Path) -> PathBuf {
    use gpuheat_testkit::{offscreen_passes, write, SessionBuilder};
    let s = SessionBuilder::new()
        .frame(|f| {
            offscreen_passes(f);
            let side = f.draw(2_000);
            f.cover(side, [40, 0, 64, 48]);
        })
        .build();
    let path = dir.join("flow.gpuheat");
    write(&s, &path);
    path
}

/// Where the centre of map pixel (`x`, `y`) of a `w` × `h` map lands in the shot: the Heat
/// tab fits the map to its view, centred.
fn on_screen(shot: &Shot, w: u32, h: u32, x: u32, y: u32) -> (u32, u32) {
    let [vx, vy, vw, vh] = shot.view.map(|v| v as f32);
    let zoom = (vw / w as f32).min(vh / h as f32) * 0.96;
    let sx = vx + vw / 2.0 + (x as f32 + 0.5 - w as f32 / 2.0) * zoom;
    let sy = vy + vh / 2.0 - (y as f32 + 0.5 - h as f32 / 2.0) * zoom;
    (sx as u32, sy as u32)
}

/// The colour the Heat tab paints value `v` on the default range of `values` (inferno,
/// linear), over the frame colour `under`.
fn painted(values: &[f64], v: f64, under: [u8; 3]) -> [u8; 3] {
    let nonzero: Vec<f64> = values.iter().copied().filter(|&v| v > 0.0).collect();
    let r = choose_range(&nonzero, RangeChoice::Auto, Scale::Linear);
    if v <= 0.0 {
        return under;
    }
    if v > r.hi {
        return Palette::Inferno.clipped();
    }
    // The shader looks the palette up at one of 256 texels.
    let t = ((v / r.hi).clamp(0.0, 1.0) * 255.0).round() / 255.0;
    blend(Palette::Inferno.colour_at(t), under, ALPHA)
}

/// Asserts that the shot shows `values` (a `w` × `h` map, bottom row first) at `points`, over
/// `colour` (the frame's RGBA, or black where the target has none).
fn assert_shows(
    shot: &Shot,
    (w, h): (u32, u32),
    values: &[f64],
    colour: Option<&[u8]>,
    points: &[(u32, u32)],
    what: &str,
) {
    for &(x, y) in points {
        let i = (y * w + x) as usize;
        let under = colour.map_or([0, 0, 0], |c| [c[i * 4], c[i * 4 + 1], c[i * 4 + 2]]);
        let want = painted(values, values[i], under);
        let (sx, sy) = on_screen(shot, w, h, x, y);
        let got = px(&shot.rgba, shot.width, sx, sy);
        assert!(
            close(got, want, 3),
            "{what}: pixel {x},{y} (value {}) shows {got:?}, want {want:?}",
            values[i]
        );
    }
}

fn flow_of(session: &Path) -> FrameFlowCost {
    let s = Session::open(session).unwrap();
    let frame = flow::frames_with_maps(&s)[0];
    flow::frame_flow(&s, frame).unwrap()
}

#[test]
fn the_screen_shows_its_total_cost_by_default_and_its_own_cost_on_request() {
    let dir = scratch("targets-total");
    let session = flow_session(&dir);
    let ff = flow_of(&session);
    let screen = ff.targets[0].key;
    let total = ff.total_map(screen).unwrap();
    let own: Vec<f64> = ff.targets[0].own.iter().map(|&v| f64::from(v)).collect();
    // The consumer, the side draw, and a pixel no draw covered.
    let points = [(16, 16), (8, 8), (23, 23), (50, 10), (63, 47), (30, 40)];

    let shot = render_offscreen(session.clone(), ViewOptions::default()).unwrap();
    assert_shows(&shot, (W, H), &total, None, &points, "total (default)");
    // The consumer holds the texture's cost: the hot end.
    let hot = blend(Palette::Inferno.colour_at(1.0), [0, 0, 0], ALPHA);
    let (sx, sy) = on_screen(&shot, W, H, 16, 16);
    assert!(close(px(&shot.rgba, shot.width, sx, sy), hot, 2));
    assert_eq!(
        shot.caption[0], "total cost of screen",
        "{:?}",
        shot.caption
    );
    // The selector: the screen, then targets 1 and 2, left to right above the map, each a
    // thumbnail of its map as shown (total cost, its own range): the consumer hot on the
    // screen's, targets 1 and 2 uniformly hot.
    let names: Vec<&str> = shot.thumbnails.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["screen", "1", "2"]);
    assert!(shot.thumbnails.windows(2).all(|w| w[0].1[0] < w[1].1[0]));
    for (name, [x, y, w, h]) in &shot.thumbnails {
        assert!(
            y + h <= shot.view[1],
            "{name}'s thumbnail overlaps the view"
        );
        let at = |fx: f32, fy: f32| {
            let (sx, sy) = (*x as f32 + fx * *w as f32, *y as f32 + fy * *h as f32);
            px(&shot.rgba, shot.width, sx as u32, sy as u32)
        };
        let (centre, cold) = match name.as_str() {
            // Map pixel (16, 16) of 64 × 48, rows top first; (30, 40) no draw covered.
            "screen" => (
                (16.0 / 64.0, 1.0 - 16.0 / 48.0),
                Some((30.0 / 64.0, 1.0 - 40.0 / 48.0)),
            ),
            _ => ((0.5, 0.5), None),
        };
        let got = at(centre.0, centre.1);
        assert!(
            close(got, hot, 3),
            "{name}'s thumbnail shows {got:?}, want {hot:?}"
        );
        if let Some((cx, cy)) = cold {
            assert_eq!(
                at(cx, cy),
                [0, 0, 0],
                "{name}'s thumbnail where nothing drew"
            );
        }
    }
    assert!(
        shot.caption[1]
            .contains("from upstream passes, spread evenly over the consumer's fragments"),
        "{:?}",
        shot.caption
    );
    // Target 2 is sampled by nothing: its 500 ns reach no screen pixel, and the caption says so.
    assert!(
        shot.caption
            .iter()
            .any(|c| c.contains("reach no screen pixel")),
        "{:?}",
        shot.caption
    );

    let own_opts = ViewOptions {
        cost: Some(Cost::Own),
        ..Default::default()
    };
    let shot = render_offscreen(session.clone(), own_opts).unwrap();
    assert_shows(&shot, (W, H), &own, None, &points, "own");
    assert_eq!(shot.caption, ["own cost of screen"]);
    // The side draw is warm on the own map (2,000 ns over 1,152 px against the consumer's
    // 1,000 over 256), near cold on the total one.
    let (sx, sy) = on_screen(&shot, W, H, 50, 10);
    assert_ne!(
        px(&shot.rgba, shot.width, sx, sy),
        painted(&total, total[(10 * W + 50) as usize], [0; 3])
    );
}

#[test]
fn selecting_an_offscreen_target_shows_its_own_map_without_a_frame_under_it() {
    let dir = scratch("targets-offscreen");
    let session = flow_session(&dir);
    let ff = flow_of(&session);
    let t1 = ff.find("1").unwrap();
    let values: Vec<f64> = t1.own.iter().map(|&v| f64::from(v)).collect();
    // 100,000 ns over 1,024 px.
    assert!((values[0] - 100_000.0 / 1024.0).abs() < 1e-3);
    let opts = ViewOptions {
        target: Some("1".into()),
        ..Default::default()
    };
    let shot = render_offscreen(session.clone(), opts).unwrap();
    // Clear of the legend (bottom left) and the caption (top left).
    let points = [(16, 16), (31, 20), (28, 4), (3, 12)];
    assert_shows(&shot, (32, 32), &values, None, &points, "target 1");
    // Nothing flows into target 1: its total is its own, and the caption says so.
    assert_eq!(
        shot.caption,
        ["total cost of target 1 (32x32) (= own: nothing flows into it)"]
    );

    // A target the frame does not have: one line naming the choices.
    let bad = ViewOptions {
        target: Some("9".into()),
        ..Default::default()
    };
    let e = render_offscreen(session.clone(), bad)
        .err()
        .expect("no target 9")
        .to_string();
    assert!(
        e.contains("no target 9") && e.contains("screen, 1, 2") && !e.contains('\n'),
        "{e}"
    );
    let outside = ViewOptions {
        target: Some("2".into()),
        pick: Some((20, 3)),
        ..Default::default()
    };
    let e = render_offscreen(session, outside)
        .err()
        .expect("pixel outside target 2")
        .to_string();
    assert!(e.contains("it is 16x16") && !e.contains('\n'), "{e}");
}

#[test]
fn a_picked_screen_pixel_lists_the_upstream_pass_that_fed_it() {
    let dir = scratch("targets-pick");
    let session = flow_session(&dir);
    let opts = ViewOptions {
        pick: Some((16, 16)),
        ..Default::default()
    };
    let shot = render_offscreen(session.clone(), opts).unwrap();
    let p = shot.upstream.expect("the pick's upstream passes");
    // The consumer's pixel: its own 1,000/256 ns, and target 1's 100,000 ns spread over the
    // consumer's 256 fragments.
    assert!((p.own_ns - 1_000.0 / 256.0).abs() < 1e-3, "{p:?}");
    assert_eq!(p.upstream.len(), 1, "{p:?}");
    let u = &p.upstream[0];
    assert_eq!(u.label, "1");
    assert!((u.ns - 100_000.0 / 256.0).abs() < 1e-3, "{p:?}");
    assert!((u.share - 100.0 / 101.0).abs() < 1e-6, "{p:?}");
    assert!((p.own_ns + u.ns - p.total_ns).abs() < 1e-6, "{p:?}");

    // Off the consumer: no upstream pass.
    let opts = ViewOptions {
        pick: Some((50, 10)),
        ..Default::default()
    };
    let p = render_offscreen(session, opts).unwrap().upstream.unwrap();
    assert!(p.upstream.is_empty(), "{p:?}");
}

#[test]
fn on_a_real_chain_the_screens_total_map_is_hot_where_the_texture_is_composited() {
    // chain 128×64, TA 64×64, TB 32×32: A → TA, B samples TA → TB, X samples TB over
    // [0, 32)², Y over x ∈ [32, 128), y ∈ [32, 64); 1 : 3.
    let dir = scratch("targets-chain");
    let session = capture(
        &dir,
        "chain",
        &["--heat", "--frames", "1"],
        &[
            "--size", "128x64", "--target", "64", "--loop", "8", "--loop-b", "4",
        ],
    );
    let s = Session::open(&session).unwrap();
    let ff = flow_of(&session);
    let screen = ff.targets.iter().find(|t| t.key.is_screen()).unwrap();
    assert_eq!(ff.targets.len(), 3, "screen, TA's target, TB's target");
    let total = ff.total_map(screen.key).unwrap();
    let colour = s.heat[0].colour.clone();
    assert_eq!(colour.len(), (128 * 64 * 4) as usize);
    // Inside X, inside Y, and outside both (the frame's colour, untinted), clear of the
    // legend and the caption.
    let points = [(5, 20), (20, 30), (40, 40), (100, 45), (10, 45), (80, 10)];
    let shot = render_offscreen(session.clone(), ViewOptions::default()).unwrap();
    assert_shows(
        &shot,
        (128, 64),
        &total,
        Some(&colour),
        &points,
        "chain total",
    );
    // X and Y split TB's pass (with TA's inside it) by their fragments, 1 : 3: each of their
    // pixels gets (T_A + T_B) / (4 B²) over its own heat.
    let passes: f64 = ff
        .targets
        .iter()
        .filter(|t| !t.key.is_screen())
        .map(|t| t.own_ns)
        .sum();
    for (x, y) in [(5, 20), (100, 45)] {
        let i = (y * 128 + x) as usize;
        let upstream = total[i] - f64::from(screen.own[i]);
        let want = passes / (4.0 * 32.0 * 32.0);
        assert!(
            (upstream - want).abs() <= 1e-4 * want,
            "{x},{y}: {upstream} ns from upstream, want {want}"
        );
    }
    assert_eq!(shot.caption[0], "total cost of screen");

    // The pick inside Y lists both passes upstream, adding up to the pixel's total.
    let opts = ViewOptions {
        pick: Some((100, 60)),
        ..Default::default()
    };
    let p = render_offscreen(session.clone(), opts)
        .unwrap()
        .upstream
        .unwrap();
    let mut labels: Vec<&str> = p.upstream.iter().map(|u| u.label.as_str()).collect();
    labels.sort_unstable();
    let mut offscreen: Vec<&str> = ff
        .targets
        .iter()
        .filter(|t| !t.key.is_screen())
        .map(|t| t.label.as_str())
        .collect();
    offscreen.sort_unstable();
    assert_eq!(labels, offscreen, "{p:?}");
    let sum = p.own_ns + p.upstream.iter().map(|u| u.ns).sum::<f64>();
    assert!((sum - p.total_ns).abs() <= 1e-6 * p.total_ns, "{p:?}");
    assert!((p.total_ns - total[60 * 128 + 100]).abs() <= 1e-4 * p.total_ns);

    // TA's target selected: its own map, uniform (pass A fills it), without a frame under it.
    let ta = ff
        .targets
        .iter()
        .find(|t| t.width == 64 && !t.key.is_screen())
        .unwrap();
    let values: Vec<f64> = ta.own.iter().map(|&v| f64::from(v)).collect();
    let opts = ViewOptions {
        target: Some(ta.label.clone()),
        cost: Some(Cost::Own),
        ..Default::default()
    };
    let shot = render_offscreen(session, opts).unwrap();
    assert_shows(
        &shot,
        (64, 64),
        &values,
        None,
        &[(32, 32), (60, 30), (40, 12)],
        "TA's target",
    );
}
