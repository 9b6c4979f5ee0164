//! Runs every example binary headless: exit status, stdout format, deterministic
//! checksums on both APIs, `--help`, and command-line errors.

use std::process::{Command, Output};

const BINS: [(&str, &str); 6] = [
    ("overdraw", env!("CARGO_BIN_EXE_overdraw")),
    ("state_churn", env!("CARGO_BIN_EXE_state_churn")),
    ("tiny_batches", env!("CARGO_BIN_EXE_tiny_batches")),
    ("fill_cost", env!("CARGO_BIN_EXE_fill_cost")),
    ("offscreen_pass", env!("CARGO_BIN_EXE_offscreen_pass")),
    ("chain", env!("CARGO_BIN_EXE_chain")),
];

fn run(exe: &str, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("spawning {exe}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs with `--frames 3 --checksum`, asserts success and the exact stdout shape, and
/// returns the checksum.
fn checksum(name: &str, exe: &str, api: &str, extra: &[&str]) -> String {
    let mut args = vec!["--frames", "3", "--checksum", "--api", api];
    args.extend_from_slice(extra);
    let out = run(exe, &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{name} {args:?}: {:?}\nstderr: {stderr}",
        out.status
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let expected_lines = if extra.contains(&"--timing") { 2 } else { 1 };
    assert_eq!(
        lines.len(),
        expected_lines,
        "{name} {args:?}: stdout {stdout:?}"
    );
    let sum = lines[0]
        .strip_prefix("checksum=")
        .unwrap_or_else(|| panic!("{name} {args:?}: no checksum line in {stdout:?}"));
    assert!(
        sum.len() == 16
            && sum
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{name}: bad checksum {sum:?}"
    );
    sum.to_string()
}

fn deterministic(name: &str, exe: &str) {
    for api in ["gles", "gl"] {
        let a = checksum(name, exe, api, &[]);
        let b = checksum(name, exe, api, &[]);
        assert_eq!(a, b, "{name} --api {api}: checksums differ between runs");
        // A glFinish before every swap (as a profiler's flushes/queries would add) must
        // not change the picture either.
        let c = checksum(name, exe, api, &["--timing"]);
        assert_eq!(a, c, "{name} --api {api}: --timing changes the checksum");
    }
}

#[test]
fn overdraw_is_deterministic() {
    deterministic(BINS[0].0, BINS[0].1);
}

#[test]
fn state_churn_is_deterministic() {
    deterministic(BINS[1].0, BINS[1].1);
}

#[test]
fn tiny_batches_is_deterministic() {
    deterministic(BINS[2].0, BINS[2].1);
}

#[test]
fn fill_cost_is_deterministic() {
    deterministic(BINS[3].0, BINS[3].1);
}

#[test]
fn offscreen_pass_is_deterministic() {
    deterministic(BINS[4].0, BINS[4].1);
}

#[test]
fn chain_is_deterministic() {
    deterministic(BINS[5].0, BINS[5].1);
}

#[test]
fn fixed_function_is_deterministic() {
    // `--api` is ignored (always a compatibility context): both runs of `deterministic`
    // draw the same.
    deterministic("fixed_function", env!("CARGO_BIN_EXE_fixed_function"));
    let gl = checksum(
        "fixed_function",
        env!("CARGO_BIN_EXE_fixed_function"),
        "gl",
        &[],
    );
    let gles = checksum(
        "fixed_function",
        env!("CARGO_BIN_EXE_fixed_function"),
        "gles",
        &[],
    );
    assert_eq!(gl, gles);
}

/// `storage_writes` prints its counts after the checksum: both the same run to run, and the
/// counts the rectangle's (W/2)·(H/2) fragments at the default 128x96.
#[test]
fn storage_writes_is_deterministic_and_counts_its_fragments() {
    let exe = env!("CARGO_BIN_EXE_storage_writes");
    for api in ["gles", "gl"] {
        let args = ["--frames", "3", "--checksum", "--api", api];
        let (a, b) = (run(exe, &args), run(exe, &args));
        assert!(a.status.success() && b.status.success(), "{a:?} {b:?}");
        let (a, b) = (text(&a.stdout), text(&b.stdout));
        assert_eq!(a, b, "--api {api}: runs differ");
        let lines: Vec<&str> = a.lines().collect();
        assert_eq!(lines.len(), 2, "--api {api}: {a:?}");
        assert!(lines[0].starts_with("checksum="), "{a:?}");
        assert_eq!(lines[1], "storage=3072 atomic=3072", "--api {api}");
    }
}

#[test]
fn immediate_mode_is_deterministic() {
    deterministic("immediate_mode", env!("CARGO_BIN_EXE_immediate_mode"));
}

/// The offscreen examples' own flags change what reaches the window (the textures' content
/// is what the window shows), and their size checks are usage errors.
#[test]
fn offscreen_flags_change_the_image_and_bad_sizes_are_usage_errors() {
    let (name, exe) = BINS[4];
    let base = checksum(name, exe, "gles", &["--size", "96x64", "--target", "32"]);
    let looped = checksum(
        name,
        exe,
        "gles",
        &["--size", "96x64", "--target", "32", "--loop", "3"],
    );
    assert_ne!(base, looped, "{name}: --loop changes T, which C shows");
    let (name, exe) = BINS[5];
    let base = checksum(name, exe, "gl", &["--size", "128x64", "--target", "64"]);
    let b_loop = checksum(
        name,
        exe,
        "gl",
        &["--size", "128x64", "--target", "64", "--loop-b", "5"],
    );
    assert_ne!(
        base, b_loop,
        "{name}: --loop-b changes TB, which X and Y show"
    );
    for (exe, bad) in [
        (BINS[4].1, &["--target", "300"][..]),
        (BINS[4].1, &["--size", "64x2", "--target", "1"]),
        (BINS[5].1, &["--target", "255"]),
        (BINS[5].1, &["--target", "300"]),
        (BINS[5].1, &["--size", "512x200"]),
    ] {
        let mut args = vec!["--frames", "1"];
        args.extend_from_slice(bad);
        let out = run(exe, &args);
        assert_eq!(out.status.code(), Some(2), "{exe} {args:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(text(&out.stderr).lines().count(), 1, "{exe} {args:?}");
    }
}

/// `offscreen_pass --report-frame-ms` (gpuheat-bench's per-frame times): N-1 periods after
/// the checksum and frame_ms lines; a usage error without `--timing`.
#[test]
fn offscreen_pass_reports_each_frames_period() {
    let (name, exe) = BINS[4];
    let args = [
        "--frames",
        "4",
        "--timing",
        "--checksum",
        "--report-frame-ms",
        "--size",
        "64x64",
        "--target",
        "16",
    ];
    let out = run(exe, &args);
    assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout:?}");
    assert!(lines[0].starts_with("checksum=") && lines[1].starts_with("frame_ms="));
    let periods: Vec<f64> = lines[2]
        .strip_prefix("frame_ms_frames=")
        .unwrap_or_else(|| panic!("no frame_ms_frames line in {stdout:?}"))
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(periods.len(), 3, "{stdout:?}");
    assert!(periods.iter().all(|&p| p > 0.0 && p.is_finite()));
    let out = run(exe, &["--frames", "4", "--report-frame-ms"]);
    assert_eq!(out.status.code(), Some(2), "{name}: needs --timing");
    assert_eq!(text(&out.stderr).lines().count(), 1);
}

#[test]
fn example_flags_change_the_image() {
    let (name, exe) = BINS[0];
    let k8 = checksum(name, exe, "gles", &[]);
    let k3 = checksum(name, exe, "gles", &["--layers", "3", "--size", "64x32"]);
    assert_ne!(k8, k3);
    let (name, exe) = BINS[2];
    checksum(name, exe, "gl", &["--draws=10", "--quad=2"]);
    let (name, exe) = BINS[3];
    checksum(name, exe, "gles", &["--loop", "2", "--size", "64x64"]);
    let (name, exe) = BINS[1];
    checksum(name, exe, "gl", &["--draws", "3"]);
}

#[test]
fn timing_prints_frame_ms() {
    let (name, exe) = BINS[1];
    let out = run(
        exe,
        &["--frames", "4", "--timing", "--checksum", "--draws", "5"],
    );
    assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout:?}");
    assert!(lines[0].starts_with("checksum="), "{stdout:?}");
    let ms: f64 = lines[1]
        .strip_prefix("frame_ms=")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("bad frame_ms line in {stdout:?}"));
    assert!(ms >= 0.0 && ms.is_finite());
}

#[test]
fn help_and_bad_flags() {
    for (name, exe) in BINS {
        let out = run(exe, &["--help"]);
        assert!(out.status.success(), "{name} --help");
        let help = text(&out.stdout);
        for s in [
            "--frames",
            "--api",
            "--size",
            "--timing",
            "--checksum",
            "calls",
            "draws",
        ] {
            assert!(help.contains(s), "{name} --help lacks {s}");
        }

        for bad in [
            &["--bogus"][..],
            &["--frames", "x"],
            &["--api", "vulkan"],
            &["--size", "0x0"],
        ] {
            let out = run(exe, bad);
            assert_eq!(out.status.code(), Some(2), "{name} {bad:?}");
            assert!(out.stdout.is_empty(), "{name} {bad:?}: stdout not empty");
            let err = text(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{name} {bad:?}: stderr {err:?}");
            assert!(err.starts_with(&format!("{name}: ")), "{err:?}");
        }
    }
    // Example-specific checks after parsing are usage errors too.
    let out = run(BINS[2].1, &["--draws", "5000", "--frames", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).lines().count(), 1);
}
