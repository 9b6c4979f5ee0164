//! `call_cost` (the example behind gpuheat-bench): the per-frame numbers its documentation
//! gives (examples/README.md), as gpuheat captures them, and the format of its
//! `--report-call-ns` output. No timing is asserted here: speed lives in `gpuheat-bench`.

mod common;
use common::*;
use std::process::Command;

/// glUniform1f calls per frame; small to keep the test fast.
const M: u64 = 500;

#[test]
fn calls_draws_and_work_per_frame_match_the_documentation() {
    let dir = scratch("call-cost-counts");
    let m = M.to_string();
    for api in ["gles", "gl"] {
        for mode in ["timeline", "full"] {
            let s = capture(
                &dir,
                "call_cost",
                &["--frames", "3", "--mode", mode],
                &["--api", api, "--calls", &m],
            );
            let r = report(&s);
            let frames = r["frames"].as_array().unwrap();
            assert_eq!(frames.len(), 3, "{api} {mode}");
            for f in frames {
                assert_eq!(f["calls"].as_u64(), Some(M + 2), "{api} {mode} calls");
                assert_eq!(f["draws"].as_u64(), Some(1), "{api} {mode} draws");
                assert_eq!(f["work_calls"].as_u64(), Some(1), "{api} {mode} work");
            }
            for frame in 1..=3 {
                let work = frame_draws(&r, frame);
                assert_eq!(work.len(), 1, "{api} {mode} frame {frame}");
                assert_eq!(work[0]["function"], "glDrawArrays");
                assert_eq!(
                    work[0]["call"].as_u64(),
                    Some(M),
                    "the draw follows the M calls"
                );
                if api == "gl" && mode == "full" {
                    assert_eq!(counter(&work[0], "samples_passed"), Some(16), "4x4 quad");
                }
            }
        }
    }
    // --timing adds exactly one glFinish per frame.
    let s = capture(
        &dir,
        "call_cost",
        &["--frames", "2", "--mode", "timeline"],
        &["--calls", &m, "--timing"],
    );
    let r = report(&s);
    for f in r["frames"].as_array().unwrap() {
        assert_eq!(f["calls"].as_u64(), Some(M + 3));
        assert_eq!(f["draws"].as_u64(), Some(1));
        assert_eq!(f["work_calls"].as_u64(), Some(1));
    }
}

/// The lines gpuheat-bench parses: `call_ns=X` and `call_ns_frames=f0,...` (one per frame),
/// and nothing else on stdout.
fn check_report_lines(stdout: &str, frames: usize) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "stdout: {stdout:?}");
    let median: f64 = lines[0]
        .strip_prefix("call_ns=")
        .expect("call_ns= line")
        .parse()
        .expect("call_ns number");
    let per_frame: Vec<f64> = lines[1]
        .strip_prefix("call_ns_frames=")
        .expect("call_ns_frames= line")
        .split(',')
        .map(|v| v.parse().expect("per-frame number"))
        .collect();
    assert_eq!(per_frame.len(), frames);
    assert!(median > 0.0 && per_frame.iter().all(|&v| v > 0.0));
    let (lo, hi) = per_frame
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    assert!(
        lo <= median && median <= hi,
        "median {median} of {per_frame:?}"
    );
}

#[test]
fn report_call_ns_prints_the_median_and_every_frame() {
    let m = M.to_string();
    let out = Command::new(example("call_cost"))
        .args(["--frames", "4", "--calls", &m, "--report-call-ns"])
        .output()
        .expect("spawn call_cost");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_report_lines(&String::from_utf8_lossy(&out.stdout), 4);

    // Under `gpuheat run --keep-running` the program finishes its frames and its stdout
    // passes through gpuheat's (how gpuheat-bench reads it inside a capture).
    let dir = scratch("call-cost-report");
    let session = dir.join("call_cost.gpuheat");
    let exe = example("call_cost");
    let out = Command::new("timeout")
        .args(["-k5", "240"])
        .arg(gpuheat())
        .args(["run", "-o", session.to_str().unwrap()])
        .args(["--mode", "timeline", "--skip", "1", "--frames", "2"])
        .args(["--keep-running", "--"])
        .arg(exe)
        .args(["--frames", "4", "--calls", &m, "--report-call-ns"])
        .output()
        .expect("spawn gpuheat");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_report_lines(&String::from_utf8_lossy(&out.stdout), 4);

    // A bad value and the switch without --frames are usage errors (exit 2).
    let code = |args: &[&str]| {
        Command::new(example("call_cost"))
            .args(args)
            .output()
            .expect("spawn call_cost")
            .status
            .code()
    };
    assert_eq!(code(&["--calls", "0", "--frames", "1"]), Some(2));
    assert_eq!(code(&["--report-call-ns"]), Some(2));
}
