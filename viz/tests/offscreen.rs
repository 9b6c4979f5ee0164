//! The viewer rendered offscreen (lavapipe, no display) from real captured sessions.

mod common;

use common::{capture, close, hot_spot, px, scratch};
use gpuheat_analysis::palette::{blend, Palette, ALPHA};
use gpuheat_session::Session;
use gpuheat_viz::{render_offscreen, screenshot, Tab, ViewOptions};

#[test]
fn heat_tab_paints_the_hottest_pixel_with_the_hot_end_of_the_palette() {
    let dir = scratch("heat");
    let session = hot_spot(&dir);
    let s = Session::open(&session).unwrap();
    let map = s
        .heat
        .first()
        .expect("hot_spot captured with --heat has a heat map");
    let shot = render_offscreen(session.clone(), ViewOptions::default()).unwrap();
    assert_eq!((shot.width, shot.height), (1280, 800));

    // Non-trivial: panels, text, the map.
    let mut colours: Vec<[u8; 3]> = shot
        .rgba
        .chunks_exact(4)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 300, "only {} colours", colours.len());

    // The hottest pixel of the map, where the view shows it (fit to the view, centred).
    let (hot, _) = map
        .heat
        .iter()
        .enumerate()
        .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
    let (hx, hy) = (
        (hot as u32 % map.width) as f32 + 0.5,
        (hot as u32 / map.width) as f32 + 0.5,
    );
    let [vx, vy, vw, vh] = shot.view.map(|v| v as f32);
    let zoom = (vw / map.width as f32).min(vh / map.height as f32) * 0.96;
    let sx = vx + vw / 2.0 + (hx - map.width as f32 / 2.0) * zoom;
    let sy = vy + vh / 2.0 - (hy - map.height as f32 / 2.0) * zoom;
    let frame_colour = &map.colour[hot * 4..hot * 4 + 3];
    let want = blend(
        Palette::Inferno.colour_at(1.0),
        [frame_colour[0], frame_colour[1], frame_colour[2]],
        ALPHA,
    );
    let got = px(&shot.rgba, shot.width, sx as u32, sy as u32);
    assert!(
        close(got, want, 2),
        "hottest pixel shows {got:?}, want {want:?}"
    );

    // And the PNG path writes a readable image of the same size.
    let png = dir.join("heat.png");
    screenshot(session, ViewOptions::default(), &png).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (1280, 800));
}

#[test]
fn the_hottest_draw_selected_in_3d_is_painted_the_hot_colour() {
    let dir = scratch("mesh");
    let session = hot_spot(&dir);
    let s = Session::open(&session).unwrap();
    let a = gpuheat_analysis::analyse(&s);
    let geometry = s
        .geometry
        .first()
        .expect("a full-mode capture records the draws' geometry (GEOM)");
    let frame = geometry.frame;
    let with_geometry: Vec<u32> = geometry
        .draws
        .iter()
        .filter(|d| d.primitive == 4)
        .map(|d| d.call)
        .collect();
    let hottest = a
        .draws
        .iter()
        .filter(|d| d.frame == frame && with_geometry.contains(&d.call))
        .max_by_key(|d| d.gpu_serialized_ns)
        .expect("a draw with geometry")
        .call;
    let opts = ViewOptions {
        tab: Tab::Mesh,
        frame: Some(frame),
        select_draw: Some(hottest),
        size: (1024, 700),
        ..Default::default()
    };
    let shot = render_offscreen(session, opts).unwrap();
    let ids = shot.ids.as_ref().expect("the 3D tab reads its ID target");
    let [vx, vy, vw, _] = shot.view;
    let hot = Palette::Inferno.colour_at(1.0);
    let (mut seen, mut hot_px) = (0, 0);
    for (i, &call) in ids.iter().enumerate() {
        if call != hottest {
            continue;
        }
        seen += 1;
        let (x, y) = (vx + i as u32 % vw, vy + i as u32 / vw);
        if close(px(&shot.rgba, shot.width, x, y), hot, 2) {
            hot_px += 1;
        }
    }
    assert!(
        seen >= 50,
        "draw {hottest} covers only {seen} pixels of the 3D view"
    );
    // Overlays (legend, notes) may cover a few of its pixels.
    assert!(
        hot_px * 10 >= seen * 9,
        "{hot_px} of draw {hottest}'s {seen} pixels are the hot colour {hot:?}"
    );
}

#[test]
fn surface_tab_and_a_picked_pixel_render() {
    let dir = scratch("surface");
    let session = hot_spot(&dir);
    let opts = ViewOptions {
        tab: Tab::Surface,
        pick: Some((140, 140)),
        size: (900, 600),
        ..Default::default()
    };
    let shot = render_offscreen(session.clone(), opts).unwrap();
    // The hot spot stands up: some pixels of the view are the palette's hot end, shaded.
    let [vx, vy, vw, vh] = shot.view;
    let mut warm = 0;
    for y in vy..vy + vh {
        for x in vx..vx + vw {
            let [r, g, b] = px(&shot.rgba, shot.width, x, y);
            if r > 150 && g > 120 && b < 140 {
                warm += 1;
            }
        }
    }
    assert!(warm > 20, "{warm} warm pixels on the surface");

    // Requests the session cannot satisfy are one-line errors, not panics.
    let bad = ViewOptions {
        select_draw: Some(9999),
        ..Default::default()
    };
    let e = render_offscreen(session.clone(), bad)
        .err()
        .expect("no draw 9999")
        .to_string();
    assert!(e.contains("no draw 9999") && !e.contains('\n'), "{e}");
    let missing = render_offscreen(dir.join("nope.gpuheat"), ViewOptions::default())
        .err()
        .expect("no file")
        .to_string();
    assert!(
        missing.contains("nope.gpuheat") && !missing.contains('\n'),
        "{missing}"
    );
}

/// `HIGHLIGHT` of viz/src/ui/diff.rs: the outline of the selected draw on A's and B's maps.
const DIFF_SELECTED: [u8; 3] = [0x30, 0xff, 0x60];

#[test]
fn diff_tab_picks_a_pixel_of_a_and_outlines_its_draw_and_its_match() {
    // Two runs of hot_spot, B's hot square 30 times cheaper. Picking a pixel inside A's hot
    // square selects that draw; its match in B is the same square: both are outlined, one
    // in the left half of the view's top (A's map), one in its right half (B's map).
    let dir = scratch("diff");
    let (da, db) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&da).unwrap();
    std::fs::create_dir_all(&db).unwrap();
    let a = capture(
        &da,
        "hot_spot",
        &["--heat", "--frames", "4"],
        &["--loop", "300"],
    );
    let b = capture(
        &db,
        "hot_spot",
        &["--heat", "--frames", "4"],
        &["--loop", "10"],
    );
    let opts = ViewOptions {
        tab: Tab::Diff,
        diff: Some(b),
        pick: Some((140, 140)),
        size: (1280, 800),
        ..Default::default()
    };
    let shot = render_offscreen(a, opts).unwrap();
    let [vx, vy, vw, vh] = shot.view;
    let (mut left, mut right) = (0, 0);
    for y in vy..vy + vh / 2 {
        for x in vx..vx + vw {
            if close(px(&shot.rgba, shot.width, x, y), DIFF_SELECTED, 8) {
                if x < vx + vw / 2 {
                    left += 1;
                } else {
                    right += 1;
                }
            }
        }
    }
    // A 24-pixel square shown at about 1.2 view pixels per map pixel: a 2-pixel ring of
    // about 4 × 30 × 2 pixels.
    assert!(
        left >= 150 && right >= 150,
        "outline pixels: {left} on A's map, {right} on B's"
    );
}

#[test]
fn a_few_outlier_pixels_are_marked_and_the_rest_keeps_the_scale() {
    use gpuheat_testkit::{write, SessionBuilder};
    // 64×48 at 1 ns per pixel, with one 2×2 block at 40,000 ns: the default range ends at the
    // 99.5th percentile (1 ns), the block is painted in the clipped colour, the rest is the
    // hot end.
    let dir = scratch("outliers");
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 48);
            let bg = f.draw(64 * 48);
            f.cover(bg, [0, 0, 64, 48]);
            let spike = f.draw(160_000);
            f.cover(spike, [40, 30, 42, 32]);
        })
        .build();
    let session = dir.join("spike.gpuheat");
    write(&s, &session);
    let shot = render_offscreen(session, ViewOptions::default()).unwrap();
    let [vx, vy, vw, vh] = shot.view.map(|v| v as f32);
    let zoom = (vw / 64.0).min(vh / 48.0) * 0.96;
    let at = |x: f32, y: f32| {
        let sx = vx + vw / 2.0 + (x - 32.0) * zoom;
        let sy = vy + vh / 2.0 - (y - 24.0) * zoom;
        px(&shot.rgba, shot.width, sx as u32, sy as u32)
    };
    let clipped = Palette::Inferno.clipped();
    let got = at(41.0, 31.0);
    assert!(close(got, clipped, 2), "the spike shows {got:?}");
    let hot = blend(Palette::Inferno.colour_at(1.0), [0, 0, 0], ALPHA);
    let got = at(10.0, 10.0);
    assert!(close(got, hot, 2), "the rest shows {got:?}, want {hot:?}");
}
