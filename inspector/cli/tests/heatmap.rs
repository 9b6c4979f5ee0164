//! `gpuheat heatmap`: rendering a session's heat map to a PNG and reading it back.
//!
//! No capture produces `HEAT` records yet (the agent's shadow pass is still to come), so the
//! sessions here hold the records of a real launch-mode capture of the `overdraw` example plus
//! a `HEAT` record computed from its real frame: K full-screen quads each cover all W·H pixels,
//! so overdraw(p) = K everywhere and heat(p) = Σ_d T_d / (W·H), T_d being the frame's real
//! serialized draw times, which is what the GPU pass must produce for that frame.

mod common;

use common::*;
use gpuheat_session::{
    CallClass, DrawCoverage, HeatMap, HeatMissing, Record, Session, SessionWriter,
};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const W: u32 = 64;
const H: u32 = 48;
const K: u64 = 3;

/// The real capture, made once for all tests.
fn real_session() -> &'static (PathBuf, Session) {
    static REAL: OnceLock<(PathBuf, Session)> = OnceLock::new();
    REAL.get_or_init(|| {
        let dir = shared_scratch("heatmap-capture");
        let path = capture(
            &dir,
            "overdraw",
            &["--frames", "1"],
            &["--api", "gl", "--layers", "3", "--size", "64x48"],
        );
        let s = Session::open(&path).unwrap();
        (path, s)
    })
}

/// The real session's records, as a new session would hold them.
fn real_records(s: &Session) -> Vec<Record> {
    let mut records = vec![
        Record::Info(s.info.clone()),
        Record::Functions(s.functions.clone()),
    ];
    records.extend(s.contexts.iter().cloned().map(Record::Context));
    records.extend(s.modules.iter().cloned().map(Record::Modules));
    records.extend(s.states.iter().cloned().map(Record::State));
    records.extend(s.frames.iter().cloned().map(Record::Frame));
    records.extend(s.pipelined.iter().cloned().map(Record::Pipelined));
    records
}

/// The map the GPU pass must produce for the captured overdraw frame.
fn expected_map(s: &Session) -> HeatMap {
    assert_eq!(s.frames.len(), 1);
    let frame = &s.frames[0];
    let mut draws = Vec::new();
    let mut context = 0;
    for (i, call) in frame.calls.iter().enumerate() {
        if s.functions.functions[call.func as usize].class != CallClass::Draw {
            continue;
        }
        context = call.context;
        let ctx = s
            .contexts
            .iter()
            .find(|c| c.handle == call.context)
            .unwrap();
        let serialized = ctx
            .counters
            .iter()
            .position(|c| c.name == "gpu_time_serialized" && c.available)
            .expect("serialized timing on this context") as u16;
        let sample = frame.samples.iter().find(|d| d.call == i as u32).unwrap();
        let t = sample
            .values
            .iter()
            .find(|v| v.counter == serialized)
            .unwrap()
            .value;
        draws.push(DrawCoverage {
            call: i as u32,
            fragments: u64::from(W * H),
            time_ns: t,
            bbox: [0, 0, W, H],
        });
    }
    assert_eq!(draws.len() as u64, K, "the overdraw example draws K quads");
    let total: u64 = draws.iter().map(|d| d.time_ns).sum();
    assert!(total > 0);
    let n = (W * H) as usize;
    HeatMap {
        frame: frame.index,
        context,
        width: W,
        height: H,
        heat: vec![(total as f64 / n as f64) as f32; n],
        overdraw: vec![K as u32; n],
        colour: Vec::new(),
        draws,
    }
}

fn write_session(path: &Path, records: &[Record]) {
    let mut w = SessionWriter::create(path).unwrap();
    for r in records {
        w.append(r).unwrap();
    }
    w.finish().unwrap();
}

/// A session with the real records and the expected heat map.
fn heat_session(dir: &Path) -> (PathBuf, HeatMap) {
    let (_, s) = real_session();
    let map = expected_map(s);
    let mut records = real_records(s);
    records.push(Record::Heat(map.clone()));
    let path = dir.join("heat.gpuheat");
    write_session(&path, &records);
    (path, map)
}

fn heatmap(args: &[&str]) -> (bool, String) {
    let (ok, _, stderr) = heatmap_out(args);
    (ok, stderr)
}

/// `gpuheat heatmap ARGS`: success, stdout, stderr.
fn heatmap_out(args: &[&str]) -> (bool, String, String) {
    let out = run_gpuheat(&[&["heatmap"], args].concat());
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

fn one_line_error(stderr: &str) -> &str {
    let line = stderr.trim_end();
    assert_eq!(line.lines().count(), 1, "{stderr}");
    assert!(line.starts_with("gpuheat: error: "), "{stderr}");
    line
}

fn blend(fg: [u8; 3], alpha: f64) -> [u8; 3] {
    fg.map(|c| (f64::from(c) * alpha).round() as u8)
}

/// Every pixel of the map area has one colour; returns it.
fn uniform_map_colour(png: &Png) -> [u8; 3] {
    let first = png.px(0, 0);
    for y in 0..H {
        for x in 0..W {
            assert_eq!(png.px(x, y), first, "pixel ({x}, {y})");
        }
    }
    first
}

#[test]
fn heat_of_the_overdraw_frame_is_uniform_with_a_legend() {
    let dir = scratch("heatmap-heat");
    let (session, map) = heat_session(&dir);
    // Conservation, as the GPU pass must hold it: Σ_p heat(p) = Σ_d T_d.
    let sum: f64 = map.heat.iter().map(|&h| f64::from(h)).sum();
    let total: u64 = map.draws.iter().map(|d| d.time_ns).sum();
    assert!(
        (sum - total as f64).abs() <= total as f64 * 0.01,
        "{sum} vs {total}"
    );

    let out = dir.join("heat.png");
    let (ok, stderr) = heatmap(&[session.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let png = read_png(&out);
    assert_eq!(png.width, W);
    let legend = png.height - H;
    assert!(legend >= 24, "legend {legend} px");

    // Uniform heat: every pixel is the hot end, 60 % over black.
    let hot = colorous::INFERNO.eval_rational(255, 256);
    let hot = [hot.r, hot.g, hot.b];
    assert_eq!(uniform_map_colour(&png), blend(hot, 0.6));

    // Some legend row ends in the palette's hot end and starts at its cold end.
    let cold = colorous::INFERNO.eval_continuous(0.0);
    let strip = (H..png.height)
        .find(|&y| png.px(W - 1, y) == hot)
        .expect("a legend row ending in the hot end");
    assert_eq!(png.px(0, strip), [cold.r, cold.g, cold.b]);
    // Text below the strip: white, antialiased, so its strokes are light grey (the strip's
    // inferno colours never are).
    let white_text = |[r, g, b]: [u8; 3]| r == g && g == b && r >= 0xc0;
    assert!((strip + 1..png.height).any(|y| (0..W).any(|x| white_text(png.px(x, y)))));

    // Other palettes and the log scale render too, each uniform, with their own hot end.
    for (palette, gradient) in [("turbo", colorous::TURBO), ("viridis", colorous::VIRIDIS)] {
        let out = dir.join(format!("{palette}.png"));
        let (ok, stderr) = heatmap(&[
            session.to_str().unwrap(),
            "--palette",
            palette,
            "--scale",
            "log",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(ok, "{stderr}");
        let png = read_png(&out);
        let c = gradient.eval_continuous(1.0);
        assert_eq!(uniform_map_colour(&png), blend([c.r, c.g, c.b], 0.6));
    }
}

#[test]
fn android_overdraw_of_three_layers_is_pink_everywhere() {
    let dir = scratch("heatmap-android");
    let (session, map) = heat_session(&dir);
    let out = dir.join("overdraw.png");
    let frame = map.frame.to_string();
    let (ok, stderr) = heatmap(&[
        session.to_str().unwrap(),
        "--frame",
        &frame,
        "--overdraw",
        "--palette",
        "android",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let png = read_png(&out);
    assert_eq!((png.width, png.height - H >= 24), (W, true));
    // The android key's pink (0xff80c0) at 60 % over black.
    assert_eq!(uniform_map_colour(&png), blend([0xff, 0x80, 0xc0], 0.6));
}

#[test]
fn draw_box_is_outlined_in_white() {
    let dir = scratch("heatmap-draw");
    let (session, map) = heat_session(&dir);
    let call = map.draws[1].call.to_string();
    let out = dir.join("draw.png");
    let (ok, stdout, stderr) = heatmap_out(&[
        session.to_str().unwrap(),
        "--draw",
        &call,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    // It says which box it outlined.
    let [x0, y0, x1, y1] = map.draws[1].bbox;
    assert!(
        stdout.contains(&format!(
            "draw {call}: {} fragments, box ({x0}, {y0})-({x1}, {y1}) outlined",
            map.draws[1].fragments
        )),
        "{stdout}"
    );
    let png = read_png(&out);
    // The box is the whole map: its border is white, the inside the uniform heat colour.
    for (x, y) in [(0, 0), (W - 1, 0), (0, H - 1), (W - 1, H - 1), (W / 2, 0)] {
        assert_eq!(png.px(x, y), [255; 3], "({x}, {y})");
    }
    assert_ne!(png.px(W / 2, H / 2), [255; 3]);

    let (ok, stderr) = heatmap(&[
        session.to_str().unwrap(),
        "--draw",
        "100000",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        one_line_error(&stderr).contains("no draw 100000"),
        "{stderr}"
    );
}

#[test]
fn missing_maps_and_bad_outputs_are_one_line_errors() {
    let dir = scratch("heatmap-errors");
    let (real, s) = real_session();
    let out = dir.join("x.png");

    // The real capture was made without --heat: the error says how to get a map.
    let (ok, stderr) = heatmap(&[real.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(!ok);
    let line = one_line_error(&stderr);
    let program = example("overdraw");
    assert!(
        line.contains("no heat map")
            && line.contains("captured without --heat")
            && line.contains(&format!(
                "gpuheat run --heat -- {} --api gl",
                program.display()
            )),
        "{stderr}"
    );
    assert!(!out.exists());
    // So does asking for one frame of it.
    let (ok, stderr) = heatmap(&[
        real.to_str().unwrap(),
        "--frame",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        one_line_error(&stderr).contains("gpuheat run --heat -- "),
        "{stderr}"
    );

    // A bogus frame lists the frames that have maps.
    let (session, map) = heat_session(&dir);
    let (ok, stderr) = heatmap(&[
        session.to_str().unwrap(),
        "--frame",
        "999",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    let line = one_line_error(&stderr);
    assert!(
        line.contains("no heat map for frame 999")
            && line.contains(&format!("frames with maps: {}", map.frame)),
        "{stderr}"
    );

    // A frame whose map could not be made says why (and not how to ask for a map).
    let mut records = real_records(s);
    records.push(Record::HeatMissing(HeatMissing {
        frame: 7,
        context: map.context,
        reason: "no float render targets in this context".into(),
    }));
    let missing = dir.join("missing.gpuheat");
    write_session(&missing, &records);
    for args in [vec!["--frame", "7"], vec![]] {
        let mut all = vec![missing.to_str().unwrap()];
        all.extend(args);
        all.extend(["-o", out.to_str().unwrap()]);
        let (ok, stderr) = heatmap(&all);
        assert!(!ok);
        let line = one_line_error(&stderr);
        assert!(
            line.contains("no float render targets in this context") && !line.contains("--heat"),
            "{stderr}"
        );
    }

    // An unwritable output.
    let (ok, stderr) = heatmap(&[session.to_str().unwrap(), "-o", "/nonexistent/x.png"]);
    assert!(!ok);
    assert!(
        one_line_error(&stderr).contains("cannot write /nonexistent/x.png: "),
        "{stderr}"
    );
}

#[test]
fn a_timeline_capture_is_told_to_capture_in_full_mode_with_heat() {
    let dir = scratch("heatmap-timeline");
    let session = capture(
        &dir,
        "overdraw",
        &["--mode", "timeline", "--frames", "1"],
        &["--api", "gl", "--size", "64x48"],
    );
    let out = dir.join("x.png");
    let (ok, stderr) = heatmap(&[session.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(!ok);
    let line = one_line_error(&stderr);
    assert!(
        line.contains("timeline mode") && line.contains("gpuheat run --mode full --heat -- "),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// A session built in code: `gpuheat_testkit::offscreen_passes` (a 64×48 screen; target 1
/// (texture 7, 32×32) costs 100,000 ns and is sampled by a screen draw over [8, 8, 24, 24);
/// target 2 (texture 8) costs 500 ns and is never sampled), and a screen draw over the right
/// third that costs 2,000 ns and samples nothing.
fn flow_session(dir: &Path) -> PathBuf {
    use gpuheat_testkit::{offscreen_passes, records, SessionBuilder};
    let s = SessionBuilder::new()
        .frame(|f| {
            offscreen_passes(f);
            let side = f.draw(2_000);
            f.cover(side, [40, 0, 64, 48]);
        })
        .build();
    let path = dir.join("flow.gpuheat");
    write_session(&path, &records(&s));
    path
}

/// Image row of GL row `y` of a map `h` high.
fn row(h: u32, y: u32) -> u32 {
    h - 1 - y
}

#[test]
fn the_screen_shows_total_cost_by_default_and_own_cost_on_request() {
    let dir = scratch("heatmap-flow");
    let session = flow_session(&dir);
    let s = session.to_str().unwrap();
    let hot = colorous::INFERNO.eval_continuous(1.0);
    let hot = blend([hot.r, hot.g, hot.b], 0.6);

    let out = dir.join("total.png");
    let o = run_gpuheat(&["heatmap", s, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("total cost of screen"), "{stdout}");
    let total = read_png(&out);
    assert_eq!(total.width, W);
    // The consumer's pixels hold the texture's cost: the hot end; the side draw is nearly cold.
    assert_eq!(total.px(16, row(H, 16)), hot);
    let side_total = total.px(50, row(H, 10));

    let out = dir.join("own.png");
    let o = run_gpuheat(&["heatmap", s, "--own", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("own cost of screen"));
    let own = read_png(&out);
    // Own: the consumer (1,000 ns over 256 px) is still the hottest, but the side draw
    // (2,000 ns over 1,152 px) is no longer near zero on the scale.
    assert_eq!(own.px(16, row(H, 16)), hot);
    assert_ne!(own.px(50, row(H, 10)), side_total);
    // Outside every draw: untinted black in both.
    assert_eq!(own.px(30, row(H, 40)), [0, 0, 0]);
    assert_eq!(total.px(30, row(H, 40)), [0, 0, 0]);
}

#[test]
fn an_offscreen_target_has_its_own_map_and_unknown_ids_list_the_choices() {
    let dir = scratch("heatmap-target");
    let session = flow_session(&dir);
    let s = session.to_str().unwrap();
    let out = dir.join("t1.png");
    let o = run_gpuheat(&["heatmap", s, "--target", "1", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("target 1 (32x32)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let png = read_png(&out);
    assert_eq!(png.width, 32);
    let hot = colorous::INFERNO.eval_continuous(1.0);
    let first = png.px(0, 0);
    assert_eq!(first, blend([hot.r, hot.g, hot.b], 0.6));
    for y in 0..32 {
        for x in 0..32 {
            assert_eq!(png.px(x, y), first, "({x}, {y})");
        }
    }

    let (ok, stderr) = heatmap(&[s, "--target", "9", "-o", out.to_str().unwrap()]);
    assert!(!ok);
    let line = one_line_error(&stderr);
    assert!(
        line.contains("no target 9") && line.contains("screen, 1, 2"),
        "{stderr}"
    );
    let (ok, stderr) = heatmap(&[s, "--own", "--total", "-o", out.to_str().unwrap()]);
    assert!(!ok, "{stderr}");
}

#[test]
fn report_lists_render_targets_with_their_cost_and_remainders() {
    let dir = scratch("report-targets");
    let session = flow_session(&dir);
    let s = session.to_str().unwrap();
    let o = run_gpuheat(&["report", s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("render targets in 1 frames"), "{text}");
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
            .to_string()
    };
    let screen = line("screen ");
    // Own 3,000 ns; total 103,000 ns.
    assert!(
        screen.contains("0.003 ±0.000") && screen.contains("0.103 ±0.000"),
        "{screen}"
    );
    let t1 = line("1 ");
    assert!(
        t1.contains("32x32") && t1.contains("texture 7") && t1.contains("feeds screen"),
        "{t1}"
    );
    let rest = line("  not-sampled");
    assert!(
        rest.contains(" 2 ") && rest.contains("0.001 ±0.000"),
        "{rest}"
    );
    assert!(text.contains("evenly over the consumer's fragments"));

    let json = common::report(&session);
    let targets = json["render_targets"]["targets"].as_array().unwrap();
    let labels: Vec<&str> = targets
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, vec!["screen", "1", "2"]);
    assert_eq!(targets[0]["total_ns"]["median"], 103_000.0);
    assert_eq!(
        json["render_targets"]["remainders"][0]["kind"],
        "NotSampled"
    );
}

#[test]
fn a_few_outlier_pixels_are_clipped_unless_the_full_range_is_asked() {
    use gpuheat_testkit::{records, SessionBuilder};
    let dir = scratch("heatmap-range");
    // The whole screen at 1 ns per pixel, one pixel at 10,000 ns.
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(W, H);
            let bg = f.draw(u64::from(W * H));
            f.cover(bg, [0, 0, W, H]);
            let spike = f.draw(10_000);
            f.cover(spike, [5, 5, 6, 6]);
        })
        .build();
    let session = dir.join("spike.gpuheat");
    write_session(&session, &records(&s));
    let hot = colorous::INFERNO.eval_continuous(1.0);
    let hot = blend([hot.r, hot.g, hot.b], 0.6);

    let out = dir.join("auto.png");
    let (ok, stderr) = heatmap(&[session.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let png = read_png(&out);
    // The spike is magenta, opaque; the rest is the hot end of the range it is clipped at.
    assert_eq!(png.px(5, row(H, 5)), [0xff, 0x00, 0xff]);
    assert_eq!(png.px(30, row(H, 30)), hot);

    let out = dir.join("max.png");
    let (ok, stderr) = heatmap(&[
        session.to_str().unwrap(),
        "--range",
        "max",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let png = read_png(&out);
    assert_eq!(png.px(5, row(H, 5)), hot);
    assert_ne!(png.px(30, row(H, 30)), hot);

    let (ok, stderr) = heatmap(&[session.to_str().unwrap(), "--range", "lots"]);
    assert!(!ok);
    assert!(
        stderr.contains("not auto, max or a positive number"),
        "{stderr}"
    );
}

#[test]
fn a_pixel_pick_names_the_upstream_passes_of_its_total() {
    let dir = scratch("pick-upstream");
    let session = flow_session(&dir);
    let s = session.to_str().unwrap();
    // Inside the consumer: own 1,000/256 ns, plus target 1's 100,000/256 ns.
    let o = run_gpuheat(&["view", s, "--pick", "10,10", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["draws"][0]["call"], 2);
    let up = &v["upstream"];
    assert!(
        (up["total_ns"].as_f64().unwrap() - 101_000.0 / 256.0).abs() < 1e-3,
        "{up}"
    );
    assert_eq!(up["upstream"].as_array().unwrap().len(), 1);
    assert_eq!(up["upstream"][0]["label"], "1");
    assert_eq!(up["upstream"][0]["calls"], serde_json::json!([0]));
    let o = run_gpuheat(&["view", s, "--pick", "10,10"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("from 1 upstream passes") && text.contains("target 1  calls 0"),
        "{text}"
    );
    // Outside any consumer: no upstream.
    let o = run_gpuheat(&["view", s, "--pick", "50,10", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["upstream"]["upstream"], serde_json::json!([]));
}

#[test]
fn a_frame_whose_screen_could_not_be_painted_says_why_and_offers_its_targets() {
    use gpuheat_testkit::{records, texture_target, SessionBuilder};
    let dir = scratch("heatmap-no-screen");
    let s = SessionBuilder::new()
        .frame(|f| {
            f.target(texture_target(4, 9, 16, 16));
            let d = f.draw(1_000);
            f.cover_target(d, 4, [0, 0, 16, 16]);
            f.heat_missing("the default framebuffer is multisampled");
        })
        .build();
    let session = dir.join("no-screen.gpuheat");
    write_session(&session, &records(&s));
    let out = dir.join("x.png");
    for target in [None, Some("screen")] {
        let mut args = vec![session.to_str().unwrap(), "-o", out.to_str().unwrap()];
        if let Some(t) = target {
            args.extend(["--target", t]);
        }
        let (ok, stderr) = heatmap(&args);
        assert!(!ok);
        let line = one_line_error(&stderr);
        assert!(
            line.contains("the default framebuffer is multisampled")
                && line.contains("offscreen targets of frame 1: 4"),
            "{stderr}"
        );
    }
    let (ok, stderr) = heatmap(&[
        session.to_str().unwrap(),
        "--target",
        "4",
        "--own",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(read_png(&out).width, 16);
}
