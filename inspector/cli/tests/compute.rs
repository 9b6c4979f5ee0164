//! Heat of compute dispatches (issue 24): `compute_pass` stores an S×S `GL_RGBA16F` image
//! with a costly dispatch K, then composites it with a draw C onto the window rectangle
//! (W/2, H/2, S, S), beside a cheap draw D. Real program under `gpuheat run --heat` on
//! llvmpipe, both APIs.
//!
//! Checked against the example's documented numbers (its doc comment): K's image is a render
//! target of its own (no framebuffer, the image's texture, S×S, `GL_RGBA16F`) whose map holds
//! K's time evenly, T_K / S² on every texel; C consumes it and puts all of it on its
//! rectangle, T_K / S² per pixel, nothing elsewhere; Σ of the window's total map is
//! T_K + T_C + T_D; and the frames stay bit-identical with and without `--heat`.

mod common;

use common::*;
use gpuheat_analysis::measure::flow::{frame_flow, TargetKey};
use gpuheat_session::{Attachment, Session};

/// The (API, timing) pairs checked: as `auto` times them (isolated on llvmpipe), and timed
/// deferred, where the dispatch's time is added over its image at the flush, on the CPU, to
/// the map read back (with the GLES tally's records added on the CPU, and on the GPU:
/// [`timing`]).
const RUNS: [(&str, &str); 5] = [
    ("gl", "auto"),
    ("gles", "auto"),
    ("gl", "deferred"),
    ("gles", "deferred"),
    ("gles", "deferred-gpu"),
];
const W: u32 = 96;
const H: u32 = 64;
const S: u32 = 32;
/// `GL_RGBA16F`, from the GL registry (gl.xml).
const GL_RGBA16F: u32 = 0x881A;
/// The bound on conservation, relative.
const CONSERVATION: f64 = 1e-4;

fn example_args(api: &str) -> Vec<String> {
    ["--api", api, "--size", &format!("{W}x{H}")]
        .into_iter()
        .map(str::to_string)
        .chain(["--target", &S.to_string(), "--loop", "8"].map(str::to_string))
        .collect()
}

#[test]
fn a_dispatch_costs_its_image_and_flows_to_the_draw_that_samples_it() {
    let dir = scratch("compute-pass");
    for (api, timing) in RUNS {
        let args = example_args(api);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let flags = ["--heat", "--frames", "2"];
        let path = capture_timed(&dir, "compute_pass", &flags, timing, &args);
        let s = Session::open(&path).unwrap();
        assert!(s.heat_missing.is_empty(), "{api}: {:?}", s.heat_missing);
        assert_eq!(s.heat.len(), 2, "{api}: one screen map per frame");
        let frames = gpuheat_analysis::analyse(&s).frames;
        for map in &s.heat {
            let what = format!("{api} {timing} frame {}", map.frame);
            let (k, bind) = (
                calls_to(&s, map.frame, "glDispatchCompute")[0].0,
                calls_to(&s, map.frame, "glBindImageTexture")[0].1.clone(),
            );
            let draws = calls_to(&s, map.frame, "glDrawArrays");
            let (c, d) = (draws[0].0, draws[1].0);

            // K's image: a target of its own, T at level 0, S×S, RGBA16F, T_K / S² per texel.
            let image: Vec<_> = s
                .target_heat
                .iter()
                .filter(|t| t.frame == map.frame && t.draws.iter().any(|x| x.call == k))
                .collect();
            assert_eq!(image.len(), 1, "{what}: K's target records");
            let t = image[0];
            assert_eq!(
                t.target.framebuffer, 0,
                "{what}: a dispatch has no framebuffer"
            );
            assert_eq!(
                t.target.attachments,
                [Attachment::Texture {
                    name: bind[1] as u32,
                    level: 0,
                    layer: 0
                }],
                "{what}"
            );
            assert_eq!((t.target.width, t.target.height), (S, S), "{what}");
            assert_eq!(t.target.format, GL_RGBA16F, "{what}");
            let t_k = t.draws.iter().find(|x| x.call == k).unwrap().time_ns as f64;
            assert!(t_k > 0.0, "{what}: K measured no time");
            let per_texel = t_k / f64::from(S * S);
            for &v in &t.heat {
                assert!(
                    (f64::from(v) - per_texel).abs() <= per_texel * 1e-6,
                    "{what}: a texel of K's image holds {v} ns, expected {per_texel}"
                );
            }
            let sum: f64 = t.heat.iter().map(|&v| f64::from(v)).sum();
            assert!(
                (sum - t_k).abs() <= t_k * CONSERVATION,
                "{what}: Σ {sum} vs {t_k}"
            );

            // The window: C's rectangle receives all of K's cost, evenly; nothing elsewhere;
            // Σ total = T_K + T_C + T_D.
            let fc = frame_flow(&s, map.frame).expect("flow");
            assert!(fc.remainders.is_empty(), "{what}: {:?}", fc.remainders);
            let screen = TargetKey {
                context: map.context,
                id: 0,
            };
            let own = &fc.target(screen).expect("screen").own;
            let total = fc.total_map(screen).expect("screen total");
            let rect = [W / 2, H / 2, W / 2 + S, H / 2 + S];
            for (i, (&tot, &o)) in total.iter().zip(own).enumerate() {
                let (x, y) = (i as u32 % W, i as u32 / W);
                let inside = (rect[0]..rect[2]).contains(&x) && (rect[1]..rect[3]).contains(&y);
                let up = tot - f64::from(o);
                let want = if inside { per_texel } else { 0.0 };
                assert!(
                    (up - want).abs() <= per_texel * 1e-5 + 1e-6,
                    "{what}: upstream cost at ({x},{y}) {up} ns, expected {want}"
                );
            }
            let time = |call: u32| {
                map.draws
                    .iter()
                    .find(|x| x.call == call)
                    .map_or(0.0, |x| x.time_ns as f64)
            };
            let expected = t_k + time(c) + time(d);
            let got: f64 = total.iter().sum();
            assert!(
                (got - expected).abs() <= expected * CONSERVATION,
                "{what}: Σ total {got} vs T_K + T_C + T_D = {expected}"
            );
            // The clear has no fragments: named, not placed; with it, every work call's time
            // is accounted for (the report's frame total).
            let names: Vec<&str> = fc.unplaced.iter().map(|u| u.function.as_str()).collect();
            assert_eq!(names, ["glClear"], "{what}");
            let unplaced: f64 = fc.unplaced.iter().map(|u| u.ns).sum();
            let frame_ns = frames
                .iter()
                .find(|f| f.index == map.frame)
                .and_then(|f| f.gpu_serialized_ms)
                .unwrap()
                * 1e6;
            assert!(
                (got + unplaced - frame_ns).abs() <= frame_ns * CONSERVATION,
                "{what}: Σ total {got} + not placed {unplaced} vs every work call {frame_ns}"
            );
        }
    }
}

#[test]
fn frames_are_bit_identical_with_a_heat_capture_of_a_dispatch() {
    let dir = scratch("compute-identical");
    for (api, label) in RUNS {
        let mut args = example_args(api);
        args.extend(["--frames", "3", "--checksum"].map(str::to_string));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let session = dir.join(format!("{api}-{label}.gpuheat"));
        let (timing, env) = common::timing(label);
        let (plain, traced) = checksums_plain_and_traced_env(
            &session,
            "compute_pass",
            &["--heat", "--frames", "2", "--timing", timing],
            env,
            &args,
        );
        assert_eq!(traced, plain, "{api} {label}");
    }
}

/// Each work call of `compute_pass` is asked only for the counters it can move (issue 25):
/// the dispatch K for its compute invocations, one per texel (S·S, the example's G×G groups
/// of 8×8), and no samples or vertex counts; the draws C and D for their samples (S·S and
/// (W/2)·(H/4), the example's numbers) and vertex counts, and no compute, tessellation or
/// geometry counts (their programs have neither stage); the clear for everything. Both
/// timings of full mode, desktop GL (GLES has no statistics).
#[test]
fn each_work_call_is_asked_for_the_counters_it_can_move() {
    let dir = scratch("compute-stages");
    let args = example_args("gl");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for timing in ["isolated", "deferred"] {
        let path = capture(
            &dir,
            "compute_pass",
            &["--frames", "2", "--timing", timing],
            &args,
        );
        let r = report(&path);
        for frame in [1, 2] {
            let what = format!("{timing} frame {frame}");
            let calls = frame_draws(&r, frame);
            let named = |f: &str| -> Vec<&serde_json::Value> {
                calls.iter().filter(|d| d["function"] == f).collect()
            };
            let (k, draws, clear) = (
                named("glDispatchCompute"),
                named("glDrawArrays"),
                named("glClear"),
            );
            assert_eq!((k.len(), draws.len(), clear.len()), (1, 2, 1), "{what}");
            let k = k[0];
            assert_eq!(
                counter(k, "compute_shader_invocations"),
                Some(u64::from(S * S)),
                "{what}"
            );
            for absent in [
                "samples_passed",
                "vertices_submitted",
                "vertex_shader_invocations",
                "fragment_shader_invocations",
                "clipping_input_primitives",
            ] {
                assert_eq!(counter(k, absent), None, "{what}: the dispatch's {absent}");
            }
            assert!(
                k["gpu_serialized_ns"].as_u64().is_some(),
                "{what}: K's time"
            );
            let expected = [u64::from(S * S), u64::from(W / 2 * (H / 4))];
            for (d, samples) in draws.iter().zip(expected) {
                assert_eq!(counter(d, "samples_passed"), Some(samples), "{what}");
                assert_eq!(counter(d, "vertices_submitted"), Some(4), "{what}");
                assert_eq!(counter(d, "primitives_submitted"), Some(2), "{what}");
                for absent in [
                    "compute_shader_invocations",
                    "tess_control_shader_patches",
                    "tess_evaluation_shader_invocations",
                    "geometry_shader_invocations",
                    "geometry_shader_primitives_emitted",
                ] {
                    assert_eq!(counter(d, absent), None, "{what}: a draw's {absent}");
                }
            }
            // Other work keeps every counter a driver may move.
            assert!(
                counter(clear[0], "compute_shader_invocations").is_some(),
                "{what}: the clear's counters {}",
                clear[0]["counters"]
            );
        }
    }
}
