//! Issue 26's triggers: `gpuheat attach PID --trigger RULE` watches a running program in
//! timeline mode and keeps each frame that crosses the rule, with the frames before it and
//! full-mode frames after it. Driven on `hitch`, whose every N-th frame uploads a 16 MiB
//! texture and draws a burst of B heavy quads (see its --help): the hitch frames must all be
//! caught and named, no steady frame may trigger unless the program's own clock saw it slow
//! too (a loaded machine stalls a steady frame past the rule: a real slow frame, rightly
//! caught), and the program must draw the same frames as without gpuheat.

mod common;

use common::{example, gpuheat, report, scratch};
use serde_json::Value;
use std::process::{Command, Stdio};

/// hitch's period and burst here, and its default cheap layers.
const EVERY: u64 = 20;
const BURST: u64 = 20;
const LAYERS: u64 = 3;
/// Frames the program renders: 12 s at 60 fps (more with its hitches), time to attach and
/// watch for 8 s.
const FRAMES: u64 = 720;

/// The rule the test watches with, and the program's own threshold for a slow frame: lower,
/// since its swap-to-swap clock and the agent's frame bounds differ by the agent's work in
/// the swap.
const RULE_MS: u64 = 50;
const SLOW_MS: u64 = 40;

/// The value of the `key=` line that hitch printed at its end.
fn printed(stdout: &[u8], key: &str) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix(key).map(str::to_string))
        .unwrap_or_else(|| panic!("hitch printed no {key}"))
}

/// The last frame's checksum that `hitch --checksum` prints.
fn last_checksum(stdout: &[u8]) -> String {
    printed(stdout, "checksum=")
}

#[test]
fn every_hitch_is_caught_and_named_and_no_steady_frame_triggers() {
    let dir = scratch("trigger");
    let hitch_args = [
        "--every",
        &EVERY.to_string(),
        "--burst",
        &BURST.to_string(),
        "--frames",
        &FRAMES.to_string(),
        "--checksum",
    ]
    .map(|s| s.to_string());
    // The frames it draws alone, unpaced: the reference checksum of its last frame.
    let plain = Command::new(example("hitch"))
        .args(&hitch_args)
        .output()
        .unwrap();
    assert!(plain.status.success());
    let want = last_checksum(&plain.stdout);

    let target = Command::new(example("hitch"))
        .args(&hitch_args)
        .args(["--fps", "60", "--slow-ms", &SLOW_MS.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    common::wait_for_frame_loop(target.id());
    let session = dir.join("hitch.gpuheat");
    // A steady frame takes 16.7 ms (paced at 60 fps), a hitch frame well over 100 ms on
    // llvmpipe (its upload alone): 50 ms is far from both.
    let out = Command::new("timeout")
        .args(["-k5", "60"])
        .arg(gpuheat())
        .args(["attach", &pid, "--trigger", &format!("frame-ms>{RULE_MS}")])
        .args(["--frames", "2"])
        .args(["--ring", "10", "--max-triggers", "100", "--timeout", "8"])
        .arg("-o")
        .arg(&session)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "attach --trigger failed: {stderr}");
    // The program goes on to its last frame and draws what it draws alone.
    let done = target.wait_with_output().unwrap();
    assert!(done.status.success());
    assert_eq!(
        last_checksum(&done.stdout),
        want,
        "the watched program drew other frames"
    );

    let r: Value = report(&session);
    let triggers = r["hitches"].as_array().expect("no hitches in the report");
    let printed_triggers = stderr.lines().filter(|l| l.contains(": trigger ")).count();
    assert_eq!(
        printed_triggers,
        triggers.len(),
        "one line per trigger: {stderr}"
    );
    let frames = r["frames"].as_array().unwrap();
    let calls_of = |index: u64| {
        frames
            .iter()
            .find(|f| f["index"] == index)
            .map(|f| f["calls"].as_u64().unwrap())
    };
    let frame_of = |h: &Value| h["frame"].as_u64().unwrap();
    // A hitch frame, by its calls (hitch --help: 3K + 3B + 10, and its upload), or a steady
    // one (3K + 10).
    let hitch_calls = Some(3 * LAYERS + 3 * BURST + 11);
    let steady_calls = Some(3 * LAYERS + 10);
    let (hitches, others): (Vec<&Value>, Vec<&Value>) = triggers
        .iter()
        .partition(|h| calls_of(frame_of(h)) == hitch_calls);
    // A steady frame triggers only when the program itself saw a frame that slow: never more
    // such triggers than its own slow steady frames.
    let slow_steady = printed(&done.stdout, "slow_frames=")
        .split(',')
        .filter(|i| !i.is_empty())
        .map(|i| i.parse::<u64>().unwrap())
        .filter(|i| (i + 1) % EVERY != 0)
        .count();
    for h in &others {
        assert_eq!(
            calls_of(frame_of(h)),
            steady_calls,
            "neither hitch nor steady: {h}"
        );
    }
    assert!(
        others.len() <= slow_steady,
        "{} triggers on steady frames, the program saw {slow_steady} steady frames over \
         {SLOW_MS} ms: {others:?}",
        others.len()
    );
    let watched = r["watch"]["frames_watched"].as_u64().unwrap();
    // Watched for 8 s (at 60 fps, less when the machine is loaded: a hitch frame took
    // 150-700 ms here): a hitch every 20 frames, and each one caught.
    assert!(hitches.len() >= 3, "{} triggers: {stderr}", hitches.len());
    assert!(
        hitches.len() as u64 >= watched / EVERY - 1,
        "{} triggers in {watched} watched frames, a hitch every {EVERY}: {stderr}",
        hitches.len()
    );
    let frame_numbers: Vec<u64> = hitches.iter().map(|h| frame_of(h)).collect();
    for h in &hitches {
        // Named: the upload and the burst, each with its count.
        let summary = h["summary"].as_str().unwrap();
        let causes = h["causes"].as_array().unwrap();
        let upload = causes
            .iter()
            .find(|c| c["function"] == "glTexImage2D")
            .unwrap_or_else(|| panic!("the upload is not named: {summary}"));
        assert_eq!(upload["upload_bytes"], 2048 * 2048 * 4, "{summary}");
        let burst = causes
            .iter()
            .find(|c| c["function"] == "glDrawArrays" && c["calls"] == BURST)
            .unwrap_or_else(|| panic!("the burst is not named: {summary}"));
        assert_eq!(burst["usual_calls"], 0.0, "{summary}");
        assert!(summary.contains("16.0 MiB"), "{summary}");
        // The steady frames around it are steady ones, and the full-mode frames came.
        let steady = h["steady_frames"].as_array().unwrap();
        assert!(!steady.is_empty(), "{summary}");
        for f in steady {
            assert_eq!(calls_of(f.as_u64().unwrap()), steady_calls);
        }
        assert_eq!(h["full_frames"].as_array().unwrap().len(), 2, "{h}");
    }
    // Every hitch between the first and the last trigger was caught: they are one period
    // apart, the program's frames being the agent's swaps.
    for pair in frame_numbers.windows(2) {
        assert_eq!(
            pair[1] - pair[0],
            EVERY,
            "a hitch was missed: {frame_numbers:?}"
        );
    }
    // The checklist has a `hitch` finding on each of them, linked to a call of the frame.
    let out = Command::new(gpuheat())
        .args(["checklist", "--json", "--rule", "hitch"])
        .arg(&session)
        .output()
        .unwrap();
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<u64> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(found, frame_numbers);
    // Diff of two watches compares how often each hitched and what each named.
    let out = Command::new(gpuheat())
        .args(["diff", "--json"])
        .args([&session, &session])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["watch"]["a"]["triggers"], hitches.len());
    let upload = d["watch"]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["function"] == "glTexImage2D")
        .expect("the upload in the watch diff");
    assert_eq!(upload["in_a"], hitches.len());
    // The ring is bounded, and says by how much.
    assert_eq!(r["watch"]["ring_capacity"], 10);
    assert!(r["watch"]["ring_limit_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn bad_trigger_rules_are_one_line_errors() {
    for (args, want) in [
        (&["--trigger", "fps<20"][..], "is not a trigger rule"),
        (&["--trigger", "frame-ms>0"][..], "is not a trigger rule"),
        (&["--ring", "5"][..], "--trigger"),
        (
            &["--trigger", "frame-ms>20", "--mode", "timeline"][..],
            "leave out --mode timeline",
        ),
    ] {
        let out = Command::new(gpuheat())
            .args(["attach", "1"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
