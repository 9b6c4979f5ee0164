//! Why a watched frame triggered (`measure::hitch`), on small synthetic watches whose causes
//! are known by construction: a steady frame of one clear and two draws, and a hitch frame
//! that adds a burst of draws from another call site, an upload, and work outside GL.

use gpuheat_analysis::measure::hitch::hitches;
use gpuheat_session::{FrameUploads, Session, TriggerHit, Upload};
use gpuheat_testkit::builder::{FrameBuilder, SessionBuilder};

const MS: u64 = 1_000_000;
/// Call sites: the steady draws, the burst, the upload.
const STEADY: u64 = 0x50_0000;
const BURST: u64 = 0x60_0000;
const UPLOAD: u64 = 0x70_0000;

fn steady(f: &mut FrameBuilder) {
    f.clear(0);
    for _ in 0..2 {
        let d = f.draw_untimed();
        f.at(d, STEADY)
            .timed(d, MS / 10, MS / 10)
            .pipelined(d, MS / 5);
    }
}

/// Frames 1-10: 6 is the hitch (5 burst draws of 2 ms on the GPU, a 30 ms upload of 4 MiB,
/// 5 ms outside GL); 3 is long too (25 ms outside GL), so it is no steady frame; 9 and 10 are
/// the full-mode frames after the trigger.
fn watch(rule: &str, value_ns: u64) -> Session {
    // Frame 6's wall time: the steady frame's, 35 ms of upload and own work, the burst.
    let mut b = SessionBuilder::new();
    for i in 1..=10u64 {
        b = b.frame(|f| {
            steady(f);
            if i == 3 {
                f.elapse(25 * MS);
            }
            if i == 6 {
                for _ in 0..5 {
                    let d = f.draw_untimed();
                    f.at(d, BURST).pipelined(d, 2 * MS);
                }
                let u = f.call(
                    "glTexImage2D",
                    &[0x0DE1, 0, 0x8058, 1024, 1024, 0, 0x1908, 0x1401, 0xAB],
                );
                // The upload's 30 ms are the frame's too; 5 ms more go outside GL.
                f.at(u, UPLOAD).timed(u, 30 * MS, 30 * MS);
                f.elapse(35 * MS);
            }
        });
    }
    let mut s = b.build();
    let call = s.frames[5]
        .calls
        .iter()
        .position(|c| c.callsite == UPLOAD)
        .unwrap() as u32;
    s.uploads.push(FrameUploads {
        frame: 6,
        uploads: vec![Upload {
            call,
            bytes: 4 << 20,
            hash: Some(7),
            unhashed: None,
        }],
    });
    s.triggers.push(TriggerHit {
        number: 1,
        frame: 6,
        rule: rule.into(),
        value_ns,
        kept_first: 1,
        kept_last: 8,
        full_first: 9,
        full_frames: 2,
    });
    s
}

#[test]
fn the_hitch_frame_is_explained_by_its_upload_its_burst_and_its_own_work() {
    let s = watch("frame-ms>20", 40 * MS);
    let h = &hitches(&s)[0];
    assert_eq!((h.number, h.frame), (1, 6));
    // Frame 3 crossed the rule too: not steady.
    assert_eq!(h.steady_frames, [1, 2, 4, 5, 7, 8]);
    assert_eq!(h.full_frames, [9, 10]);
    let names: Vec<&str> = h.causes.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(names, ["glTexImage2D", "glDrawArrays", ""], "{}", h.summary);
    let upload = &h.causes[0];
    assert_eq!(upload.upload_bytes, 4 << 20);
    assert!((upload.extra_gl_ms - 30.0).abs() < 1e-9);
    let burst = &h.causes[1];
    assert_eq!((burst.calls, burst.usual_calls), (5, 0.0));
    assert!((burst.extra_gpu_ms - 10.0).abs() < 1e-9);
    // The 5 ms between calls, beyond the steady frames' own gaps.
    assert!(
        (h.causes[2].extra_gl_ms - 5.0).abs() < 0.01,
        "{}",
        h.summary
    );
    // The steady draws are the same in every frame: not a cause.
    assert!(h.causes.iter().all(|c| !c.callsite.contains("500000")));
    assert!(
        h.summary
            .starts_with("frame 6 took 40.0 ms (frame-ms>20) against a median of"),
        "{}",
        h.summary
    );
    assert!(h.summary.contains("1 more glTexImage2D"), "{}", h.summary);
    assert!(
        h.summary.contains("uploading 4.0 MiB: +30.0 ms in GL"),
        "{}",
        h.summary
    );
    assert!(h.summary.contains("5 more glDrawArrays"), "{}", h.summary);
    assert!(h.summary.contains("+10.0 ms GPU"), "{}", h.summary);
    // Totals: the GPU total is the steady 0.4 ms plus the burst's 10.
    let gpu = h.totals.iter().find(|t| t.what == "gpu").unwrap();
    assert!((gpu.frame_ms.unwrap() - 10.4).abs() < 1e-9);
    assert!((gpu.median_ms.unwrap() - 0.4).abs() < 1e-9);
}

#[test]
fn a_gpu_rule_compares_gpu_time_and_keeps_long_cpu_frames_as_steady() {
    let s = watch("gpu-ms>5", 10_400_000);
    let h = &hitches(&s)[0];
    // Frame 3 is long on the CPU, not on the GPU: steady for this rule.
    assert_eq!(h.steady_frames, [1, 2, 3, 4, 5, 7, 8]);
    let steady = h.steady.unwrap();
    assert!((steady.median - 0.4).abs() < 1e-9);
    assert!(
        h.summary
            .starts_with("frame 6 took on the GPU 10.4 ms (gpu-ms>5)"),
        "{}",
        h.summary
    );
    // Work outside GL is no cause of GPU time.
    assert!(
        h.causes.iter().all(|c| !c.function.is_empty()),
        "{}",
        h.summary
    );
}

#[test]
fn a_gpu_rule_that_fired_on_the_first_times_to_land_gives_the_frames_total() {
    // The agent judged the frame when 6 ms of its 10.4 had landed (the rest still queued).
    let s = watch("gpu-ms>5", 6_000_000);
    let h = &hitches(&s)[0];
    assert!((h.value_ms - 10.4).abs() < 1e-9, "{}", h.summary);
    assert!(
        h.summary.starts_with(
            "frame 6 took on the GPU 10.4 ms (gpu-ms>5, fired at 6.0 ms as its first times landed)"
        ),
        "{}",
        h.summary
    );
}

#[test]
fn without_a_steady_frame_the_costliest_sites_are_named_with_their_own_times() {
    let mut s = watch("frame-ms>20", 40 * MS);
    // Only the hitch frame was kept.
    s.triggers[0].kept_first = 6;
    s.triggers[0].kept_last = 6;
    let h = &hitches(&s)[0];
    assert!(h.steady.is_none() && h.steady_frames.is_empty());
    assert!(
        h.summary
            .contains("with no steady frame kept to compare (every frame kept crossed the rule); its costliest call sites: 1 glTexImage2D at 0x700000, uploading 4.0 MiB: 30.0 ms in GL"),
        "{}",
        h.summary
    );
    assert!(!h.summary.contains("more"), "{}", h.summary);
    assert!(!h.summary.contains('+'), "{}", h.summary);
}

#[test]
fn a_capture_has_no_hitch_and_a_trigger_whose_frame_was_not_kept_is_left_out() {
    let mut s = watch("frame-ms>20", 40 * MS);
    assert_eq!(hitches(&s).len(), 1);
    s.triggers[0].frame = 99;
    assert!(hitches(&s).is_empty());
    s.triggers.clear();
    assert!(hitches(&s).is_empty());
}

#[test]
fn the_checklist_reports_each_hitch_with_its_causes_and_its_cost() {
    let s = watch("frame-ms>20", 40 * MS);
    let a = gpuheat_analysis::analyse(&s);
    let found = gpuheat_analysis::checklist::check(&s, &a);
    let hitch: Vec<_> = found.iter().filter(|f| f.rule == "hitch").collect();
    assert_eq!(hitch.len(), 1);
    let f = hitch[0];
    assert_eq!(f.frame, 6);
    // Linked to the top cause's call: the upload.
    let upload = s.frames[5]
        .calls
        .iter()
        .position(|c| c.callsite == UPLOAD)
        .unwrap() as u32;
    assert_eq!(f.call, Some(upload));
    assert!(
        f.title
            .starts_with("frame took 40.0 ms (frame-ms>20) against a median of"),
        "{}",
        f.title
    );
    assert!(f.detail.contains("uploading 4.0 MiB"), "{}", f.detail);
    assert!(f.fix.starts_with("Upload ahead of time"), "{}", f.fix);
    let median = hitches(&s)[0].steady.unwrap().median;
    assert_eq!(f.cost.as_ref().unwrap().ns, ((40.0 - median) * 1e6) as u64);
    // A capture has none.
    let mut plain = s.clone();
    plain.triggers.clear();
    let found = gpuheat_analysis::checklist::check(&plain, &gpuheat_analysis::analyse(&plain));
    assert!(found.iter().all(|f| f.rule != "hitch"));
}

#[test]
fn two_watches_compare_by_trigger_rate_and_by_the_causes_each_named() {
    use gpuheat_analysis::measure::hitch::compare;
    use gpuheat_session::WatchStatus;
    let status = |frames_watched, triggers| WatchStatus {
        frames_watched,
        ring_frames: 10,
        ring_capacity: 30,
        ring_bytes: 1000,
        ring_limit_bytes: 64 << 20,
        triggers,
    };
    let mut a = watch("frame-ms>20", 40 * MS);
    a.watch = Some(status(500, 1));
    // B: the same program after the fix: watched, nothing triggered.
    let mut b = watch("frame-ms>20", 40 * MS);
    b.triggers.clear();
    b.watch = Some(status(400, 0));
    let d = compare(&a, &b).unwrap();
    let (sa, sb) = (d.a.unwrap(), d.b.unwrap());
    assert_eq!((sa.frames_watched, sa.triggers), (500, 1));
    assert!((sa.per_thousand - 2.0).abs() < 1e-9);
    assert_eq!(sa.median_ms, Some(40.0));
    assert_eq!((sb.triggers, sb.median_ms), (0, None));
    let upload = d
        .sites
        .iter()
        .find(|s| s.function == "glTexImage2D")
        .unwrap();
    assert_eq!((upload.in_a, upload.in_b), (1, 0));
    assert_eq!(upload.at, "0x700000");
    // Captures have no watch to compare.
    a.watch = None;
    b.watch = None;
    assert!(compare(&a, &b).is_none());
}
