//! Issue 26's live view: `gpuheat view --live PID` on a running example, rendered offscreen
//! (`--screenshot`, no display): the frames stream in, a capture taken from the live view
//! shows in the usual tabs and is written to the session, and the program keeps running and
//! drawing what it drew.

mod common;

use common::{
    example, gpuheat, read_png, scratch, sigusr1_checksum as checksum_of, wait_for_frame_loop,
};
use gpuheat_session::Session;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn a_live_view_streams_frames_and_shows_a_capture_taken_from_it() {
    let dir = scratch("live");
    let out = dir.join("hot_spot.out");
    let mut target = Command::new(example("hot_spot"))
        .args(["--fps", "60"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = target.id();
    wait_for_frame_loop(pid);
    let before = checksum_of(&out, pid);
    let png = dir.join("live.png");
    let session = dir.join("live.gpuheat");
    let run = Command::new("timeout")
        .args(["-k5", "180"])
        .arg(gpuheat())
        .args(["view", "--live", &pid.to_string(), "--screenshot"])
        .arg(&png)
        .args([
            "--live-seconds",
            "3",
            "--live-capture",
            "2",
            "--live-heat",
            "-o",
        ])
        .arg(&session)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "view --live failed: {stderr}");
    // "N frames streamed, 2 captured frames shown": about 60 a second for 3 s.
    let streamed: u64 = stderr
        .split(" frames streamed")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(streamed >= 30, "{stderr}");
    // Every frame accounted for: none of the program's frame numbers skipped.
    assert!(stderr.contains("(0 missing)"), "{stderr}");
    assert!(stderr.contains("2 captured frames shown"), "{stderr}");
    assert!(
        stderr.contains("detached, hot_spot keeps running"),
        "{stderr}"
    );

    // The capture: two full-mode frames with their heat maps, asked for (rule `capture`).
    let s = Session::open(&session).unwrap();
    assert_eq!(s.frames.len(), 2);
    assert!(s.frames.iter().all(|f| !f.samples.is_empty()), "full mode");
    assert_eq!(s.heat.len(), 2);
    let t = &s.triggers[0];
    assert_eq!(
        (t.number, t.rule.as_str(), t.full_frames),
        (0, "capture", 2)
    );
    assert_eq!(t.full_first, s.frames[0].index);

    // The image: the live chart's wall-time line (light grey) above, the captured frame's
    // heat map (the hot square's bright pixels) below.
    let img = read_png(&png);
    assert_eq!((img.width, img.height), (1280, 800));
    let count = |y0: u32, y1: u32, want: &dyn Fn([u8; 3]) -> bool| {
        (y0..y1)
            .flat_map(|y| (0..img.width).map(move |x| (x, y)))
            .filter(|&(x, y)| want(img.px(x, y)))
            .count()
    };
    // Below the chart's legend row; anti-aliased, so light greys rather than the one colour.
    let wall_line = count(95, 190, &|[r, g, b]| {
        r.min(g).min(b) > 150 && r.max(g).max(b) - r.min(g).min(b) < 16
    });
    assert!(
        wall_line > 30,
        "no frame-time line in the chart ({wall_line} pixels)"
    );
    let hot = count(400, 760, &|[r, g, b]| r > 200 && g > 180 && b > 100);
    assert!(hot > 50, "no heat map of the capture ({hot} bright pixels)");

    // The program goes on, drawing the same frame.
    std::thread::sleep(Duration::from_millis(300));
    assert!(target.try_wait().unwrap().is_none(), "hot_spot died");
    assert_eq!(checksum_of(&out, pid), before);
    let _ = target.kill();
    let _ = target.wait();
}

#[test]
fn a_live_view_of_no_program_is_a_one_line_error() {
    let out = Command::new(gpuheat())
        .args([
            "view",
            "--live",
            "999999999",
            "--screenshot",
            "/tmp/none.png",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A session and --live together are refused by the argument parser.
    let out = Command::new(gpuheat())
        .args(["view", "some.gpuheat", "--live", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
