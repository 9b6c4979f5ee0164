//! The agent's waits for the GPU per captured frame (`AGNT` records, `gpuheat_counters::waits`),
//! counted on real captures of `many_draws` at 10 and 1,000 draws. Timeline mode never waits
//! within a frame, whatever the draw count. Full mode today drains the GPU before and after
//! each work call (its serialized bracket), so it waits exactly twice per work call: N draws +
//! 1 glClear. Issue 25 takes full mode to at most 2 per context per frame; this test then
//! asserts the two counts equal in every mode.

mod common;

use common::{example, gpuheat, scratch};
use gpuheat_session::control::env;
use gpuheat_session::Session;
use std::path::Path;
use std::process::Command;

/// Captures `frames` frames of `many_draws --draws draws --tris 2` with `flags`, geometry off,
/// and returns the waits of each captured frame but the last (which also waits for the
/// capture's last pipelined timestamps).
fn waits(dir: &Path, flags: &[&str], draws: u32, frames: u32) -> Vec<u64> {
    let file = dir.join(format!("waits-{draws}.gpuheat"));
    let out = Command::new("timeout")
        .args(["-k5", "240"])
        .arg(gpuheat())
        .env(env::GEOMETRY_VERTICES, "0")
        .arg("run")
        .arg("-o")
        .arg(&file)
        .args(flags)
        .args(["--frames", &frames.to_string(), "--"])
        .arg(example("many_draws"))
        .args(["--draws", &draws.to_string(), "--tris", "2", "--frames"])
        .arg((frames + 2).to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gpuheat run {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = Session::open(&file).unwrap();
    assert_eq!(
        s.agent_frames.len(),
        frames as usize,
        "one AGNT record per frame"
    );
    let indices: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
    let counted: Vec<u64> = s.agent_frames.iter().map(|a| a.frame).collect();
    assert_eq!(counted, indices, "the records name the captured frames");
    s.agent_frames[..frames as usize - 1]
        .iter()
        .map(|a| a.waits)
        .collect()
}

#[test]
fn timeline_mode_never_waits_within_a_frame_whatever_the_draw_count() {
    let dir = scratch("waits-timeline");
    let few = waits(&dir, &["--mode", "timeline"], 10, 4);
    let many = waits(&dir, &["--mode", "timeline"], 1000, 4);
    assert!(few.iter().all(|&w| w == 0), "10 draws: {few:?}");
    assert!(many.iter().all(|&w| w == 0), "1,000 draws: {many:?}");
}

#[test]
fn full_mode_waits_twice_per_work_call() {
    // Today's full mode (issue 25 open): a drain before and after each work call.
    let dir = scratch("waits-full");
    for draws in [10u32, 1000] {
        let w = waits(&dir, &["--mode", "full"], draws, 4);
        let work_calls = u64::from(draws) + 1;
        assert!(
            w.iter().all(|&n| n == 2 * work_calls),
            "{draws} draws: {w:?}, expected {} per frame",
            2 * work_calls
        );
    }
}
