//! Issue 2 acceptance: launch-mode capture of the example programs on llvmpipe.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// This file's tests run one at a time: one of them compares GPU times with frame times, and
/// another test's captures running beside it on two cores move them by 30% (measured: a sum
/// of draws 1.30× the frame in a full run, 0.89–1.16 alone).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Per-frame (calls, draws, work calls) as each example documents them (examples/README.md).
fn expected(name: &str, n: u64) -> (u64, u64, u64) {
    match name {
        "overdraw" | "tiny_batches" | "proc_loaded" => (2 * n + 6, n, n + 1),
        "state_churn" => (8 * n + 2, n, n + 1),
        "fill_cost" => (15, 3, 4),
        "hot_spot" => (3 * n + 9, n + 1, n + 2),
        _ => unreachable!(),
    }
}

#[test]
fn calls_and_draws_per_frame_match_the_examples_documentation() {
    let _serial = serial();
    let dir = scratch("counts");
    let cases: [(&str, &[&str], u64); 6] = [
        ("hot_spot", &["--layers", "2", "--loop", "3"], 2),
        ("overdraw", &["--layers", "5"], 5),
        ("proc_loaded", &["--layers", "3"], 3),
        ("state_churn", &["--draws", "37"], 37),
        ("tiny_batches", &["--draws", "1500"], 1500),
        ("fill_cost", &["--loop", "2", "--size", "128x128"], 0),
    ];
    for api in ["gles", "gl"] {
        for (name, args, n) in cases {
            let mut example_args = vec!["--api", api];
            example_args.extend_from_slice(args);
            for mode in ["timeline", "full"] {
                let s = capture(
                    &dir,
                    name,
                    &["--frames", "3", "--mode", mode],
                    &example_args,
                );
                let r = report(&s);
                let frames = r["frames"].as_array().unwrap();
                assert_eq!(frames.len(), 3, "{name} {api} {mode}");
                let (calls, draws, work) = expected(name, n);
                for f in frames {
                    assert_eq!(
                        f["calls"].as_u64(),
                        Some(calls),
                        "{name} {api} {mode} calls"
                    );
                    assert_eq!(
                        f["draws"].as_u64(),
                        Some(draws),
                        "{name} {api} {mode} draws"
                    );
                    assert_eq!(
                        f["work_calls"].as_u64(),
                        Some(work),
                        "{name} {api} {mode} work"
                    );
                }
            }
        }
    }
}

#[test]
fn samples_passed_equal_the_fragments_of_the_geometry() {
    let _serial = serial();
    let dir = scratch("samples");
    // Both ways of timing a call count the same: isolated (a drain around each call) and
    // deferred (queries of the call's own, read at the frame's end).
    for timing in ["isolated", "deferred"] {
        samples_passed_with(&dir, timing);
    }
}

fn samples_passed_with(dir: &Path, timing: &str) {
    let flags = |frames: &'static str| ["--frames", frames, "--timing", timing];
    // Full-screen quads: every draw passes W·H samples. llvmpipe also runs helper invocations
    // for the 2×2 quads straddling the strip's diagonal, once per triangle: about 4·W extra
    // (+1.56% at 256², +0.78% at 512²), so the 1% bound needs at least 512².
    let (w, h) = (512u64, 512u64);
    let s = capture(
        dir,
        "overdraw",
        &flags("2"),
        &["--api", "gl", "--layers", "3", "--size", "512x512"],
    );
    let r = report(&s);
    for frame in [1, 2] {
        let draws: Vec<_> = frame_draws(&r, frame)
            .into_iter()
            .filter(|d| d["function"] == "glDrawArrays")
            .collect();
        assert_eq!(draws.len(), 3, "{timing}");
        for d in &draws {
            assert_eq!(counter(d, "samples_passed"), Some(w * h), "{timing}");
            let inv = counter(d, "fragment_shader_invocations").unwrap() as f64;
            let err = (inv - (w * h) as f64).abs() / (w * h) as f64;
            assert!(
                err < 0.01,
                "fragment shader invocations {inv} vs {} (helper invocations)",
                w * h
            );
            assert_eq!(counter(d, "vertices_submitted"), Some(4));
            assert_eq!(counter(d, "primitives_submitted"), Some(2));
        }
    }
    // Tiny pixel-aligned quads: S·S samples each.
    let s = capture(
        dir,
        "tiny_batches",
        &flags("1"),
        &["--api", "gl", "--draws", "300", "--quad", "5"],
    );
    let r = report(&s);
    let draws: Vec<_> = frame_draws(&r, 1)
        .into_iter()
        .filter(|d| d["function"] == "glDrawArrays")
        .collect();
    assert_eq!(draws.len(), 300);
    assert!(draws
        .iter()
        .all(|d| counter(d, "samples_passed") == Some(25)));
    // A quarter of the area passes a quarter of the samples.
    let s = capture(
        dir,
        "fill_cost",
        &flags("1"),
        &["--api", "gl", "--loop", "1", "--size", "256x256"],
    );
    let r = report(&s);
    let draws: Vec<_> = frame_draws(&r, 1)
        .into_iter()
        .filter(|d| d["function"] == "glDrawArrays")
        .collect();
    let samples: Vec<_> = draws.iter().map(|d| counter(d, "samples_passed")).collect();
    assert_eq!(samples, [Some(65536), Some(16384), Some(65536)], "{timing}");
}

#[test]
fn gles_contexts_report_unavailable_counters_with_reasons_not_zeros() {
    let _serial = serial();
    let dir = scratch("gles-unavailable");
    let s = capture(
        &dir,
        "overdraw",
        &["--frames", "1"],
        &["--api", "gles", "--layers", "2"],
    );
    let r = report(&s);
    let unavailable = r["unavailable"].as_array().unwrap();
    let names: Vec<_> = unavailable
        .iter()
        .map(|u| u["counter"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"samples_passed") && names.contains(&"fragment_shader_invocations"));
    assert!(unavailable
        .iter()
        .all(|u| !u["reason"].as_str().unwrap().is_empty()));
    for d in frame_draws(&r, 1) {
        assert!(
            counter(&d, "samples_passed").is_none(),
            "unavailable counter reported as a value"
        );
        assert!(d["gpu_serialized_ns"].as_u64().is_some());
    }
    // llvmpipe defers rasterization: the session says pipelined times are not per-draw cost;
    // a GPU that renders each draw as submitted (NVIDIA's) says they are.
    let ctx = &r["contexts"][0];
    let deferred = ctx["renderer"].as_str().unwrap().contains("llvmpipe");
    assert_eq!(ctx["pipelined_meaningful"], !deferred);
}

/// Median of the frames' values.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[test]
fn serialized_time_is_proportional_to_the_work() {
    let _serial = serial();
    let dir = scratch("proportional");
    for api in ["gles", "gl"] {
        // The program times its own frames (`--timing`: glFinish before each swap, the median
        // printed at exit) in the same process that is captured: llvmpipe runs whole
        // processes in speed modes up to 1.9× apart (twelve captures of hot_spot), so a
        // frame time from another run of the program is no reference. 15 frames, of which
        // frames 3–7 are captured: the median is an uncaptured frame's.
        let session = dir.join(format!("fill_cost-{api}.gpuheat"));
        let exe = example("fill_cost");
        let out = run_gpuheat(&[
            "run",
            "--keep-running",
            "--frames",
            "5",
            "--skip",
            "2",
            "-o",
            session.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
            "--api",
            api,
            "--frames",
            "15",
            "--timing",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = report(&session);
        let (mut quarter, mut heavy, mut sums) = (vec![], vec![], vec![]);
        for f in r["frames"].as_array().unwrap() {
            let frame = f["index"].as_u64().unwrap();
            let t: Vec<f64> = frame_draws(&r, frame)
                .iter()
                .filter(|d| d["function"] == "glDrawArrays")
                .map(|d| d["gpu_serialized_ns"].as_u64().unwrap() as f64)
                .collect();
            quarter.push(t[1] / t[0]);
            heavy.push(t[2] / t[0]);
            sums.push(f["gpu_serialized_ms"].as_f64().unwrap());
        }
        let (q, c) = (median(quarter), median(heavy));
        // About a quarter: the draw's fixed cost (set-up, rasterizer threads waking) is not
        // divided by four, and a clean-clone CI run measured 0.302 on GLES.
        assert!(
            (0.2..=0.33).contains(&q),
            "{api}: quarter area costs {q:.3}x the full screen"
        );
        // Under 4: the per-draw set-up and each fragment's work outside the loop are not
        // multiplied. 3.5-3.95 alone, 2.94 once in a clean-clone CI run (a 5 frames' median).
        // A timing that gave draw C a neighbour's time would put this near 0.3 (B's) or 1
        // (A's), far below 2.5.
        assert!((2.5..=5.0).contains(&c), "{api}: 4x the loop costs {c:.3}x");

        let stdout = String::from_utf8_lossy(&out.stdout);
        let plain: f64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("frame_ms="))
            .expect("frame_ms line")
            .trim()
            .parse()
            .unwrap();
        let sum = median(sums);
        let ratio = sum / plain;
        // Measured on llvmpipe (2 cores): 0.89–1.16 (median 0.99) over 18 runs of this test
        // alone; 1.29 and 1.30 for `gl` in two full `make test` runs on a fresh clone, with
        // this file's tests already one at a time (cause not found; llvmpipe changes speed
        // within a process too), and 1.61 for `gl` in a clean-clone CI run of 2026-11-27. A
        // draw counted twice, or a frame's work missing, is 2× off: the band stops short of it.
        eprintln!("{api}: serialized sum / frame = {ratio:.3}");
        assert!(
            (0.6..=1.8).contains(&ratio),
            "{api}: draws sum to {sum:.1} ms, frame takes {plain:.1} ms"
        );
    }
}

#[test]
fn the_programs_framebuffer_is_bit_identical_with_the_agent() {
    let _serial = serial();
    let dir = scratch("identical");
    for (name, extra) in [
        ("overdraw", &["--layers", "4"][..]),
        ("state_churn", &["--draws", "50"][..]),
    ] {
        for api in ["gles", "gl"] {
            let mut args = vec!["--api", api, "--frames", "4", "--checksum"];
            args.extend_from_slice(extra);
            for mode in ["full", "timeline"] {
                let session = dir.join(format!("{name}-{api}-{mode}.gpuheat"));
                let flags = ["--frames", "3", "--mode", mode];
                let (plain, traced) = checksums_plain_and_traced(&session, name, &flags, &args);
                assert_eq!(traced, plain, "{name} {api} {mode}");
            }
        }
    }
}

#[test]
fn a_capture_cut_off_by_kill_9_keeps_every_completed_frame() {
    let _serial = serial();
    let dir = scratch("kill9");
    let session = dir.join("killed.gpuheat");
    let exe = example("overdraw");
    let child = Command::new(gpuheat())
        .args(["run", "--frames", "100000", "--mode", "timeline", "-o"])
        .arg(&session)
        .arg("--")
        .arg(&exe)
        .args(["--api", "gl", "--layers", "2"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a few frames are on disk, then kill the program (not gpuheat) with SIGKILL.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let pid = loop {
        assert!(std::time::Instant::now() < deadline, "no frames arrived");
        if let Ok(s) = gpuheat_session::Session::open_lenient(&session) {
            if s.frames.len() >= 5 {
                break s.info.pid;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // SAFETY: plain kill(2) of the example we started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("killed by signal 9"), "{stderr}");
    let s = gpuheat_session::Session::open(&session).expect("session readable after kill -9");
    assert!(s.frames.len() >= 5);
    assert_eq!(
        s.end.unwrap().reason,
        gpuheat_session::EndReason::TargetExited
    );
    for f in &s.frames {
        assert_eq!(f.calls.len(), 2 * 2 + 6, "frame {} incomplete", f.index);
    }
}
