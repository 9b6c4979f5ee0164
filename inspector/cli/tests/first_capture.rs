//! Issue 24 (part 3): the first capture after `gpuheat attach` injects the agent measures the
//! program's steady state, as later captures of the same running program do. The agent runs
//! the capture, unrecorded, on warm-up frames first; nothing of them reaches the session.

mod common;
use common::*;
use gpuheat_session::Session;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn attach(dir: &Path, pid: &str, name: &str, extra: &[&str]) -> PathBuf {
    let session = dir.join(format!("{name}.gpuheat"));
    let mut args = vec!["attach", pid, "-o", session.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run_gpuheat(&args);
    assert!(
        out.status.success(),
        "attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    session
}

/// Every frame number a record of `s` refers to.
fn record_frames(s: &Session) -> Vec<u64> {
    let mut v: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
    v.extend(s.pipelined.iter().map(|b| b.frame));
    v.extend(s.heat.iter().map(|h| h.frame));
    v.extend(s.heat_missing.iter().map(|h| h.frame));
    v.extend(s.target_heat.iter().map(|t| t.frame));
    v.extend(s.flow.iter().map(|f| f.frame));
    v.extend(s.geometry.iter().map(|g| g.frame));
    v.extend(s.uploads.iter().map(|u| u.frame));
    v.extend(s.states.iter().map(|st| st.frame));
    v.extend(s.warmup.iter().map(|w| w.frame));
    v
}

#[test]
fn the_first_capture_after_the_injection_measures_what_the_next_one_does() {
    let dir = scratch("first-capture");
    // hot_spot's frame is fixed (its README: 3K + 9 calls, K + 1 draws, K + 2 work calls): two
    // captures of the running program measure the same work, so a diff of them has nothing
    // to find. Before the warm-up, the first capture's frames spent twice the CPU time in GL
    // of the next capture's, and `diff` called that "faster".
    let target = Running::start(
        "hot_spot",
        &["--api", "gles", "--loop", "300", "--spot", "48"],
    );
    let first = attach(&dir, &target.pid(), "first", &["--frames", "10"]);
    let second = attach(&dir, &target.pid(), "second", &["--frames", "10"]);
    // The first capture warms up; the second finds the context warm and starts at once.
    for (path, warmed_up) in [(&first, true), (&second, false)] {
        let s = Session::open(path).unwrap();
        match s.info.warmup_frames {
            Some(n) => assert_eq!(n >= 1, warmed_up, "{n} warm-up frames"),
            None => panic!("the agent did not say whether it warmed up"),
        }
        let indices: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
        assert_eq!(
            indices,
            (1..=10).collect::<Vec<u64>>(),
            "{}",
            path.display()
        );
        assert!(s.frames.iter().all(|f| f.calls.len() == 18));
        // The state snapshot is of the first captured frame, not of a warm-up frame.
        assert_eq!(s.states.len(), 1);
        assert_eq!(s.states[0].frame, 1);
        // What the agent did for the first time (measuring the context, making the geometry
        // capture) happened in the warm-up: no captured frame carries it.
        assert!(s.warmup.is_empty(), "{:?}", s.warmup);
        let frames = record_frames(&s);
        assert!(
            frames.iter().all(|f| (1..=10).contains(f)),
            "a record of a warm-up frame reached the session: {frames:?}"
        );
    }
    let out = run_gpuheat(&[
        "diff",
        "--json",
        first.to_str().unwrap(),
        second.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        d["matched"].as_array().unwrap().len(),
        5,
        "4 draws and a clear"
    );
    assert!(d["only_a"].as_array().unwrap().is_empty());
    assert!(d["only_b"].as_array().unwrap().is_empty());
    // A draw's time is judged beyond the common drift of the draws (the machine's speed
    // between the captures), as diff reports it; its other metrics as measured. The clear's
    // GPU time is left out, as in tests/diff.rs: llvmpipe clears lazily, and between any two
    // captures of the same program its serialized time moves 2-4x on its own (12 captures of
    // one hot_spot: 26 of 132 ordered pairs flagged the clear and nothing else, the first
    // capture after the injection or not; 107-393 µs over 24 captures of fresh hot_spots, with
    // this session's agent and the one before it alike).
    let draws = &d["a"]["stats"]["draws"];
    let is_clear =
        |m: &Value| draws[m["a"].as_u64().unwrap() as usize]["key"]["function"] == "glClear";
    let matched = d["matched"].as_array().unwrap();
    assert_eq!(matched.iter().filter(|m| is_clear(m)).count(), 1);
    for m in matched {
        let rank = m["rank"].as_u64().unwrap() as usize;
        let clear = is_clear(m);
        for (i, c) in m["metrics"].as_array().unwrap().iter().enumerate() {
            if clear && i == rank {
                continue;
            }
            let c = if i == rank { judged(m) } else { c };
            assert!(!significant(c), "draw {}: {c}", m["a"]);
        }
    }
    // Not the wall time: the example paces itself to 60 fps on a schedule, so after the
    // attach held it, it renders back to back until it has caught up (a clean-clone CI run:
    // 4.1 ms median frames in the first capture against 16.7 in the second). That is the
    // program's pacing answering the hiccup, not what a frame costs.
    for c in d["frames"].as_array().unwrap() {
        if c["metric"] == "frame_wall_time" {
            continue;
        }
        assert!(!significant(c), "frames: {c}");
    }
}

#[test]
fn warm_up_frames_of_a_heat_capture_leave_nothing_in_the_session() {
    let dir = scratch("first-capture-heat");
    let target = Running::start("offscreen_pass", &["--api", "gles", "--loop", "16"]);
    let path = attach(&dir, &target.pid(), "heat", &["--frames", "3", "--heat"]);
    let s = Session::open(&path).unwrap();
    let indices: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
    assert_eq!(indices, vec![1, 2, 3]);
    // The painter was made in the warm-up, so its maps start with frame 1 and no frame is
    // marked.
    let mut painted: Vec<u64> = s.heat.iter().map(|h| h.frame).collect();
    painted.dedup();
    assert_eq!(painted, vec![1, 2, 3]);
    assert!(!s.target_heat.is_empty());
    assert!(s.warmup.is_empty(), "{:?}", s.warmup);
    let frames = record_frames(&s);
    assert!(frames.iter().all(|f| (1..=3).contains(f)), "{frames:?}");
}

#[test]
fn launch_mode_warms_up_on_a_skipped_frame() {
    let dir = scratch("first-capture-launch");
    // `--skip 2`: frames 0 and 1 pass uncaptured, and the capture warms up on frame 1; the
    // captured frames are numbered by the program's swaps as before.
    let path = capture(
        &dir,
        "hot_spot",
        &["--skip", "2", "--frames", "3"],
        &["--api", "gles", "--frames", "12"],
    );
    let s = Session::open(&path).unwrap();
    assert!(
        s.info.warmup_frames >= Some(1),
        "{:?}",
        s.info.warmup_frames
    );
    let indices: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
    assert_eq!(indices, vec![2, 3, 4]);
    assert_eq!(s.states.first().map(|st| st.frame), Some(2));
    assert!(s.warmup.is_empty(), "{:?}", s.warmup);
    // With `--skip 1` the frame before the capture is the program's set-up, frame 0: no
    // warm-up.
    let path = capture(
        &dir,
        "hot_spot",
        &["--skip", "1", "--frames", "2"],
        &["--api", "gles", "--frames", "12"],
    );
    let s = Session::open(&path).unwrap();
    assert_eq!(s.info.warmup_frames, Some(0));
    let indices: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
    assert_eq!(indices, vec![1, 2]);
}
