//! Runs `checklist` clean and with every `--bad RULE` on both APIs: exit status, checksums
//! (unchanged by `--timing`; the same picture as the clean program exactly where the rule
//! changes no pixel), frames that change (clean) or repeat (`identical-frames`), `--help`
//! and the README naming every rule, and command-line errors.

use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_checklist");

const RULES: [&str; 23] = [
    "mipmaps-unused",
    "sync-calls",
    "depth-not-cleared",
    "client-arrays",
    "renderer-unchecked",
    "texture-modified",
    "texture-upload-in-frame",
    "uncompressed-textures",
    "no-strips-or-indices",
    "no-multisampling",
    "redundant-state",
    "eclipsed-state",
    "same-upload",
    "objects-per-frame",
    "compile-in-frame",
    "first-use-compile",
    "readback-rtt",
    "identical-frames",
    "colormask-heavy",
    "discard-heavy",
    "blend-opaque",
    "overdraw",
    "stall",
];

/// Rules that change calls but not one pixel of the clean program's picture.
const SAME_PICTURE: [&str; 11] = [
    "sync-calls",
    "client-arrays",
    "renderer-unchecked",
    "uncompressed-textures",
    "no-strips-or-indices",
    "redundant-state",
    "eclipsed-state",
    "objects-per-frame",
    "colormask-heavy",
    "blend-opaque",
    "stall",
];

/// Frames per run: enough for first-use-compile's late program (first drawn in frame 5).
const FRAMES: &str = "6";

fn run(args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("spawning {EXE}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `checklist` with `args` and `--checksum`, asserts exit 0 and the stdout shape
/// (`checksum=`, then `frame_ms=` with `--timing`), returns the checksum.
fn checksum(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--checksum");
    let out = run(&all);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "checklist {all:?}: {:?}\nstderr: {stderr}",
        out.status
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let timing = all.contains(&"--timing");
    assert_eq!(lines.len(), 1 + timing as usize, "{all:?}: {stdout:?}");
    if timing {
        assert!(lines[1].starts_with("frame_ms="), "{all:?}: {stdout:?}");
    }
    let sum = lines[0]
        .strip_prefix("checksum=")
        .unwrap_or_else(|| panic!("{all:?}: no checksum in {stdout:?}"));
    assert_eq!(sum.len(), 16, "{all:?}: {sum:?}");
    sum.to_string()
}

fn every_rule(api: &str) {
    let clean = checksum(&["--frames", FRAMES, "--api", api]);
    assert_eq!(
        clean,
        checksum(&["--frames", FRAMES, "--api", api, "--timing"]),
        "clean --api {api}: --timing changes the picture"
    );
    for rule in RULES {
        let args = ["--frames", FRAMES, "--api", api, "--bad", rule];
        if rule == "client-arrays" && api == "gl" {
            let out = run(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
            let err = text(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
            assert!(err.starts_with("checklist: "), "{err:?}");
            continue;
        }
        let sum = checksum(&args);
        let mut timed = args.to_vec();
        timed.push("--timing");
        assert_eq!(
            sum,
            checksum(&timed),
            "{args:?}: --timing changes the picture"
        );
        if SAME_PICTURE.contains(&rule) {
            assert_eq!(sum, clean, "{args:?}: must draw the clean picture");
        } else {
            assert_ne!(sum, clean, "{args:?}: must change the picture");
        }
    }
}

#[test]
fn every_rule_on_gles() {
    every_rule("gles");
}

#[test]
fn every_rule_on_gl() {
    every_rule("gl");
}

#[test]
fn clean_frames_differ_identical_frames_do_not() {
    for api in ["gles", "gl"] {
        let at = |frames: &str, bad: &[&str]| {
            let mut args = vec!["--frames", frames, "--api", api];
            args.extend_from_slice(bad);
            checksum(&args)
        };
        assert_ne!(
            at("2", &[]),
            at("3", &[]),
            "clean --api {api}: frames repeat"
        );
        let frozen = ["--bad", "identical-frames"];
        assert_eq!(
            at("2", &frozen),
            at("3", &frozen),
            "identical-frames --api {api}: frames differ"
        );
    }
}

#[test]
fn help_and_readme_name_every_rule_and_bad_flags_are_usage_errors() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("examples/README.md");
    for rule in RULES {
        assert!(help.contains(rule), "--help lacks {rule}");
        assert!(
            readme.contains(&format!("| `{rule}`")),
            "README's checklist table lacks {rule}"
        );
    }
    for s in [
        "--bad RULE",
        "--frames",
        "--api",
        "--timing",
        "calls",
        "draws",
    ] {
        assert!(help.contains(s), "--help lacks {s}");
    }
    for bad in [
        &["--bad", "bogus"][..],
        &["--bad"],
        &["--bad=nope"],
        &["--size", "256x256"],
        &["--frames", "x"],
    ] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err:?}");
        assert!(err.starts_with("checklist: "), "{bad:?}: {err:?}");
    }
    // Repeating a rule is the same as giving it once; rules combine.
    assert_eq!(
        checksum(&["--frames", "2", "--bad", "overdraw", "--bad=overdraw"]),
        checksum(&["--frames", "2", "--bad", "overdraw"])
    );
    checksum(&[
        "--frames",
        "2",
        "--bad",
        "sync-calls",
        "--bad",
        "redundant-state",
        "--size",
        "400x300",
    ]);
}
