//! Thermal painting (`gpuheat run --heat`): the agent paints each captured frame's heat and
//! overdraw maps on the GPU inside the program (real llvmpipe, both APIs), and the maps
//! conserve the draws' measured time.

mod common;

use common::*;
use gpuheat_session::{HeatMap, Session};
use std::path::Path;
use std::process::Command;

const APIS: [&str; 2] = ["gl", "gles"];

/// The (API, timing) pairs heat is checked in: both APIs timed isolated, and timed deferred,
/// which desktop GL weighs on the GPU (`weights.rs`) and GLES tallies (`tally.rs`), its
/// records added on the CPU (llvmpipe's default) and on the GPU (`deferred-gpu`, a hardware
/// renderer's default: [`timing`]).
const TIMED: [(&str, &str); 5] = [
    ("gl", "isolated"),
    ("gl", "deferred"),
    ("gles", "isolated"),
    ("gles", "deferred"),
    ("gles", "deferred-gpu"),
];

/// `gpuheat run --heat` of an example: the session and its heat maps (one per frame).
fn heat_capture(dir: &Path, name: &str, frames: u32, example_args: &[&str]) -> Session {
    heat_capture_timed(dir, name, frames, "auto", example_args)
}

/// [`heat_capture`] with `--timing` as [`timing`] labels it.
fn heat_capture_timed(
    dir: &Path,
    name: &str,
    frames: u32,
    timing: &str,
    example_args: &[&str],
) -> Session {
    let n = frames.to_string();
    let path = capture_timed(dir, name, &["--heat", "--frames", &n], timing, example_args);
    let s = Session::open(&path).unwrap();
    assert!(
        s.heat_missing.is_empty(),
        "{name} {example_args:?}: heat maps missing: {:?}",
        s.heat_missing
    );
    assert_eq!(s.heat.len(), frames as usize, "{name}: one map per frame");
    s
}

fn at(map: &HeatMap, x: u32, y: u32) -> usize {
    (y * map.width + x) as usize
}

#[test]
fn heat_is_conserved_on_every_example() {
    let dir = scratch("thermal-conservation");
    for (api, timing) in TIMED {
        for (name, args) in [
            ("overdraw", &["--layers", "5", "--size", "96x64"][..]),
            ("tiny_batches", &["--draws", "300", "--size", "96x64"][..]),
            ("fill_cost", &["--loop", "4", "--size", "96x64"][..]),
            ("state_churn", &["--draws", "20", "--size", "96x64"][..]),
            ("proc_loaded", &["--layers", "3", "--size", "96x64"][..]),
            ("call_cost", &["--calls", "200", "--size", "96x64"][..]),
            (
                "hot_spot",
                &["--size", "96x64", "--spot", "8", "--loop", "50"][..],
            ),
        ] {
            let mut a = vec!["--api", api];
            a.extend_from_slice(args);
            let s = heat_capture_timed(&dir, name, 2, timing, &a);
            for map in &s.heat {
                map.validate().unwrap();
                assert_eq!((map.width, map.height), (96, 64), "{name} {api} {timing}");
                let what = format!("{name} {api} {timing} frame {}", map.frame);
                let err = conservation_error(&map.heat, &map.draws, &what);
                assert!(
                    err < 0.01,
                    "{name} {api} {timing}: Σ heat off by {:.3}%",
                    err * 100.0
                );
                let total: u64 = map.draws.iter().map(|d| d.fragments).sum();
                let overdraw: u64 = map.overdraw.iter().map(|&v| u64::from(v)).sum();
                assert_eq!(overdraw, total, "{name} {api} {timing}: Σ overdraw = Σ N_d");
                assert_eq!(
                    map.colour.len(),
                    4 * 96 * 64,
                    "{name} {api} {timing}: colour saved"
                );
            }
        }
    }
}

#[test]
fn a_small_expensive_draw_is_the_hottest() {
    let dir = scratch("thermal-hot-spot");
    // hot_spot: 3 cheap full-screen quads, then a 24x24 square at (W/2, H/2) running 300
    // loop iterations per fragment: little total time, the highest cost per pixel.
    let (w, h, spot) = (256u32, 256u32, 24u32);
    let (x0, y0) = (w / 2, h / 2);
    for api in APIS {
        let s = heat_capture(&dir, "hot_spot", 2, &["--api", api]);
        for map in &s.heat {
            let inside =
                |x: u32, y: u32| (x0..x0 + spot).contains(&x) && (y0..y0 + spot).contains(&y);
            let (mut coolest_inside, mut hottest_outside) = (f32::MAX, 0f32);
            for y in 0..h {
                for x in 0..w {
                    let v = map.heat[at(map, x, y)];
                    if inside(x, y) {
                        coolest_inside = coolest_inside.min(v);
                    } else {
                        hottest_outside = hottest_outside.max(v);
                    }
                }
            }
            assert!(
                coolest_inside > hottest_outside,
                "{api}: coolest hot-square pixel {coolest_inside} ns <= hottest other pixel {hottest_outside} ns"
            );
            // Its total time is not the largest: only the per-pixel map singles it out.
            let square = map
                .draws
                .iter()
                .find(|d| d.fragments == u64::from(spot * spot))
                .expect("hot square");
            assert_eq!(square.bbox, [x0, y0, x0 + spot, y0 + spot], "{api}");
        }
    }
    // Timed deferred on desktop GL, the weighting pass finds each draw's box on the GPU
    // (`weights::gpu_boxes`), on hardware only: the square's in every frame (the boxes start
    // empty again after each frame's read), the full-screen quads' the whole target. On a
    // software rasterizer, which would run the box code for every pixel of every draw, a
    // deferred draw lists its target's box (`counters/tests/thermal_paths.rs` runs the box
    // finding itself on llvmpipe). Deferred times on llvmpipe are not the calls' cost, so
    // only the boxes and fragments are checked here.
    let s = heat_capture_timed(&dir, "hot_spot", 3, "deferred", &["--api", "gl"]);
    let software = s.contexts.iter().any(|c| c.renderer.contains("llvmpipe"));
    let square = if software {
        [0, 0, w, h]
    } else {
        [x0, y0, x0 + spot, y0 + spot]
    };
    for map in &s.heat {
        let boxes: Vec<[u32; 4]> = map.draws.iter().map(|d| d.bbox).collect();
        assert_eq!(
            boxes,
            [[0, 0, w, h], [0, 0, w, h], [0, 0, w, h], square],
            "frame {}",
            map.frame
        );
        let fragments: Vec<u64> = map.draws.iter().map(|d| d.fragments).collect();
        let (full, hot) = (u64::from(w * h), u64::from(spot * spot));
        assert_eq!(fragments, [full, full, full, hot], "frame {}", map.frame);
    }
}

#[test]
fn draws_inside_a_time_elapsed_query_of_the_programs_own_are_painted() {
    // hot_spot --time-query 1 wraps its draws in a GL_TIME_ELAPSED query, as mpv wraps each
    // of its passes: a replay only makes that query read longer, so every draw is painted
    // (3 full-screen quads of 256x256 and the 24x24 square), the map conserving their time.
    let dir = scratch("thermal-time-query");
    let s = heat_capture(&dir, "hot_spot", 2, &["--api", "gl", "--time-query", "1"]);
    for map in &s.heat {
        let mut fragments: Vec<u64> = map.draws.iter().map(|d| d.fragments).collect();
        fragments.sort_unstable();
        assert_eq!(fragments, [576, 65_536, 65_536, 65_536], "{:?}", map.draws);
        let err = conservation_error(&map.heat, &map.draws, "hot_spot --time-query 1");
        assert!(err < 1e-4, "heat conserves the draws' time: {err}");
    }
}

#[test]
fn where_k_equal_layers_overlap_heat_is_k_times_one_layer() {
    let dir = scratch("thermal-k-layers");
    // overdraw --layers 2 --offset 128 at 512x512: two identical 384x512 layers, the second
    // shifted right by 128 px: columns 0..128 hold layer 0 only, 384..512 layer 1 only,
    // 128..384 both. Where they overlap the heat must be the sum of the two single-layer
    // heats, i.e. 2x one layer's (their mean; the measured times of two equal layers differ
    // by a few percent of timing noise, which is not the map's doing).
    let (w, h) = (512u32, 512u32);
    for api in APIS {
        let args = [
            "--api", api, "--layers", "2", "--offset", "128", "--size", "512x512",
        ];
        let s = heat_capture(&dir, "overdraw", 5, &args);
        for map in &s.heat {
            let median_in = |x0: u32, x1: u32| {
                let mut v: Vec<f32> = (0..h)
                    .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                    .map(|(x, y)| map.heat[at(map, x, y)])
                    .collect();
                v.sort_by(f32::total_cmp);
                v[v.len() / 2]
            };
            let (h0, h1, both) = (median_in(0, 128), median_in(384, w), median_in(128, 384));
            assert!(map.overdraw.iter().enumerate().all(|(i, &k)| {
                let x = i as u32 % w;
                k == if (128..384).contains(&x) { 2 } else { 1 }
            }));
            let single = (h0 + h1) / 2.0;
            let ratio = both / single;
            eprintln!("{api} frame {}: one layer {h0:.3} / {h1:.3} ns/px, both {both:.3} ns/px, ratio {ratio:.4}", map.frame);
            assert!(
                (ratio - 2.0).abs() <= 0.2,
                "{api}: 2 layers carry {ratio:.3}x one layer's heat"
            );
            assert!(
                (both - (h0 + h1)).abs() <= 0.01 * (h0 + h1),
                "{api}: overlap heat is not the sum of its layers"
            );
        }
    }
}

#[test]
fn overdraw_map_counts_the_layers_exactly() {
    let dir = scratch("thermal-overdraw");
    let (w, h, k) = (80u32, 60u32, 7u32);
    for (api, timing) in TIMED {
        let size = format!("{w}x{h}");
        let layers = k.to_string();
        let s = heat_capture_timed(
            &dir,
            "overdraw",
            1,
            timing,
            &["--api", api, "--layers", &layers, "--size", &size],
        );
        let map = &s.heat[0];
        assert_eq!((map.width, map.height), (w, h));
        assert_eq!(map.draws.len() as u32, k, "{api}: K draws listed");
        for d in &map.draws {
            assert_eq!(d.fragments, u64::from(w * h), "{api}: N_d = W·H");
            assert_eq!(d.bbox, [0, 0, w, h], "{api}: full-screen box");
        }
        let single: f64 =
            map.draws.iter().map(|d| d.time_ns as f64).sum::<f64>() / f64::from(w * h);
        for (x, y) in [
            (0, 0),
            (w - 1, h - 1),
            (w / 2, h / 3),
            (3, h - 2),
            (w - 5, 1),
        ] {
            let i = at(map, x, y);
            assert_eq!(map.overdraw[i], k, "{api}: overdraw at ({x},{y})");
            let rel = (f64::from(map.heat[i]) - single).abs() / single;
            assert!(
                rel < 0.01,
                "{api}: heat at ({x},{y}) {} vs {single}",
                map.heat[i]
            );
        }
        assert!(
            map.overdraw.iter().all(|&v| v == k),
            "{api}: K layers everywhere"
        );
    }
}

/// GLES draws timed deferred are tallied (`counters/src/tally.rs`): each covered pixel a
/// record in a buffer of at first 2^20 records. 40 full-screen layers of 256×256 cover
/// 40 · 65,536 = 2,621,440 pixels, so the first frame's tally fills up after 16 layers at most:
/// the layers that lost records are listed unpainted with the reason, the map keeps the others
/// exactly, and the next frames, with the tally grown, paint all 40.
#[test]
fn a_full_tally_keeps_the_frame_and_grows_for_the_next() {
    // Its records added on the CPU, and on the GPU (where the buffer grows only after the
    // resolve read it).
    for timing in ["deferred", "deferred-gpu"] {
        full_tally_in(timing);
    }
}

fn full_tally_in(timing: &str) {
    let dir = scratch("thermal-tally");
    let s = heat_capture_timed(
        &dir,
        "overdraw",
        3,
        timing,
        &["--api", "gles", "--layers", "40", "--size", "256x256"],
    );
    let layer = 256 * 256u64;
    let first = &s.heat[0];
    let painted = first.draws.iter().filter(|d| d.fragments > 0).count() as u64;
    assert!(
        (1..=(1 << 20) / layer).contains(&painted),
        "{timing}: first frame: {painted} of 40 layers painted"
    );
    let notes: Vec<&str> = s
        .flow
        .iter()
        .filter(|f| f.frame == first.frame)
        .flat_map(|f| f.draws.iter())
        .map(|d| d.note.as_str())
        .filter(|n| n.contains("more than the 1048576 the tally held"))
        .collect();
    assert_eq!(
        notes.len() as u64,
        40 - painted,
        "each unpainted layer says why"
    );
    painted_layers_exactly(&s, timing);
}

/// Every map of `s` conserves its draws' time and its overdraw holds the painted layers; from
/// the second frame, every layer of 256×256 is painted.
fn painted_layers_exactly(s: &Session, what: &str) {
    for map in &s.heat {
        let what = format!("{what} frame {}", map.frame);
        assert!(conservation_error(&map.heat, &map.draws, &what) < 1e-4);
        let over: u64 = map.overdraw.iter().map(|&v| u64::from(v)).sum();
        let fragments: u64 = map.draws.iter().map(|d| d.fragments).sum();
        assert_eq!(
            over, fragments,
            "{what}: the overdraw map holds the painted layers"
        );
    }
    for map in &s.heat[1..] {
        assert!(
            map.draws.iter().all(|d| d.fragments == 256 * 256),
            "{what} frame {}: every layer painted from the second frame",
            map.frame
        );
    }
}

/// A frame whose draws cover more pixels than the tally may ever hold: 260 full-screen layers
/// of 256×256 are 17.0 Mi records, beyond llvmpipe's bound (its 128 MiB storage blocks hold
/// 16.5 Mi). Resolved on the GPU, the tally is then read and resolved in the middle of the
/// frame whenever its draws could fill it (a wait each), instead of timing every draw
/// isolated from then on (three waits a draw): every layer painted from the second frame,
/// the maps exact.
#[test]
fn a_frame_beyond_the_tallys_bound_is_resolved_in_parts() {
    let dir = scratch("thermal-drains");
    let layers = 260u64;
    let s = heat_capture_timed(
        &dir,
        "overdraw",
        3,
        "deferred-gpu",
        &["--api", "gles", "--layers", "260", "--size", "256x256"],
    );
    painted_layers_exactly(&s, "in parts");
    for map in &s.heat[1..] {
        assert!(
            map.overdraw.iter().all(|&v| u64::from(v) == layers),
            "frame {}: {layers} layers on every pixel",
            map.frame
        );
    }
    // The frames after the first wait a bounded number of times: the parts, the header, the
    // maps and the geometry's replays; isolated, they waited 3 times a layer.
    let waits: Vec<u64> = s.agent_frames.iter().map(|a| a.waits).collect();
    assert!(
        waits[1..].iter().all(|&w| w <= 6),
        "waits a frame: {waits:?}"
    );
    assert!(
        s.agent_frames[1..].iter().all(|a| a.deferred > layers),
        "every layer timed deferred: {:?}",
        s.agent_frames
    );
}

#[test]
fn fill_cost_is_hottest_where_its_three_draws_overlap() {
    let dir = scratch("thermal-fill");
    let (w, h) = (96u32, 64u32);
    for api in APIS {
        let s = heat_capture(
            &dir,
            "fill_cost",
            1,
            &["--api", api, "--loop", "16", "--size", "96x64"],
        );
        let map = &s.heat[0];
        let (hot, _) = map
            .heat
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        let (x, y) = (hot as u32 % w, hot as u32 / w);
        assert!(
            x < w / 2 && y < h / 2,
            "{api}: hottest pixel ({x},{y}) outside the lower-left quarter"
        );
        assert_eq!(map.overdraw[at(map, 1, 1)], 3, "{api}");
        assert_eq!(map.overdraw[at(map, w - 1, h - 1)], 2, "{api}");
        assert_eq!(map.draws[1].bbox, [0, 0, w / 2, h / 2], "{api}: B's box");
    }
}

#[test]
fn frames_are_bit_identical_with_heat_capture() {
    let dir = scratch("thermal-identical");
    for (name, extra) in [
        ("overdraw", &["--layers", "4"][..]),
        ("fill_cost", &["--loop", "4"][..]),
    ] {
        for api in APIS {
            let mut args = vec![
                "--api",
                api,
                "--frames",
                "4",
                "--checksum",
                "--size",
                "128x96",
            ];
            args.extend_from_slice(extra);
            for label in ["isolated", "deferred", "deferred-gpu"] {
                let session = dir.join(format!("{name}-{api}-{label}.gpuheat"));
                let (timing, env) = common::timing(label);
                let flags = ["--heat", "--frames", "3", "--timing", timing];
                let (plain, traced) =
                    checksums_plain_and_traced_env(&session, name, &flags, env, &args);
                // The program checks glGetError after its frames: it stays clean.
                assert_eq!(traced, plain, "{name} {api} {label}");
                let s = Session::open(&session).unwrap();
                assert_eq!(s.heat.len(), 3, "{name} {api}: {:?}", s.heat_missing);
            }
        }
    }
}

#[test]
fn heatmap_renders_a_real_heat_session() {
    let dir = scratch("thermal-png");
    for api in APIS {
        let session = capture(
            &dir,
            "overdraw",
            &["--heat", "--frames", "1"],
            &["--api", api, "--layers", "3", "--size", "64x48"],
        );
        let png = dir.join(format!("{api}.png"));
        let out = run_gpuheat(&[
            "heatmap",
            session.to_str().unwrap(),
            "-o",
            png.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{api}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(png.is_file());
    }
}

#[test]
fn heat_needs_full_mode() {
    let exe = example("overdraw");
    let out = run_gpuheat(&[
        "run",
        "--heat",
        "--mode",
        "timeline",
        "--",
        exe.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--heat needs --mode full"));
}

#[test]
fn the_heat_png_of_an_attached_program_puts_its_hot_spot_at_the_palettes_hot_end() {
    let dir = scratch("thermal-attach-png");
    // hot_spot started on its own (256x256, a 24x24 square at (128, 128)), then attached.
    let mut target = Command::new(example("hot_spot"))
        .args(["--api", "gl"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let session = dir.join("attached.gpuheat");
    let png = dir.join("heat.png");
    let pid = target.id().to_string();
    let attached = run_gpuheat(&[
        "attach",
        &pid,
        "--heat",
        "--frames",
        "2",
        "-o",
        session.to_str().unwrap(),
    ]);
    let rendered = run_gpuheat(&[
        "heatmap",
        session.to_str().unwrap(),
        "-o",
        png.to_str().unwrap(),
    ]);
    let still_running = target.try_wait().unwrap().is_none();
    let _ = target.kill();
    let _ = target.wait();
    assert!(
        attached.status.success(),
        "{}",
        String::from_utf8_lossy(&attached.stderr)
    );
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    assert!(still_running, "hot_spot died");

    let map = &Session::open(&session).unwrap().heat[0];
    let (w, h) = (map.width, map.height);
    assert_eq!((w, h), (256, 256));
    let hottest = (0..w * h)
        .max_by(|&a, &b| map.heat[a as usize].total_cmp(&map.heat[b as usize]))
        .unwrap();
    let (hx, hy) = (hottest % w, hottest / w);
    assert!(
        (128..152).contains(&hx) && (128..152).contains(&hy),
        "hottest pixel at ({hx}, {hy})"
    );

    let img = read_png(&png);
    assert_eq!(img.width, w);
    assert!(img.height >= h + 24, "a legend below the map");
    // The legend's gradient strip runs from the cold end (left) to the hot end (right).
    let hot_end = colorous::INFERNO.eval_continuous(1.0);
    let strip = img.px(w - 1, h + 5);
    let close = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 2);
    assert!(
        close(strip, [hot_end.r, hot_end.g, hot_end.b]),
        "legend hot end {strip:?}"
    );
    // The hottest pixel is the hot end, blended (alpha 0.6) over the frame at that pixel; PNG
    // rows run top-down, GL rows bottom-up.
    let i = hottest as usize * 4;
    let under = [map.colour[i], map.colour[i + 1], map.colour[i + 2]];
    let blend = |f: u8, b: u8| (f64::from(f) * 0.6 + f64::from(b) * 0.4).round() as u8;
    let want = [
        blend(strip[0], under[0]),
        blend(strip[1], under[1]),
        blend(strip[2], under[2]),
    ];
    assert!(
        close(img.px(hx, h - 1 - hy), want),
        "hottest pixel {:?}, want {want:?}",
        img.px(hx, h - 1 - hy)
    );
}
