//! Counters on a real GLES 3.2 context (Mesa llvmpipe): no samples-passed and no pipeline
//! statistics (each with a reason), serialized and pipelined time available.

mod common;

use common::{value, Scene};
use gpuheat_counters::catalogue::*;
use gpuheat_examples::gfx::Api;
use gpuheat_examples::gl::*;
use gpuheat_session::counter_names as names;
use gpuheat_session::{CaptureMode, ClientApi};

const W: u32 = 160;
const H: u32 = 96;

#[test]
fn gles_reports_what_it_cannot_measure() {
    let s = Scene::new(Api::Gles, W, H, None);
    let cc = s.counters();
    let info = cc.info();
    println!("{info:#?}");
    assert_eq!(info.api, ClientApi::Gles);
    assert!(info.version.starts_with("OpenGL ES 3."), "{}", info.version);
    let by_name = |n: &str| info.counters.iter().find(|c| c.name == n).unwrap();
    assert!(by_name(names::GPU_TIME_SERIALIZED).available);
    assert!(by_name(names::CPU_TIME).available);
    let pipelined = by_name(names::GPU_TIME_PIPELINED);
    assert!(pipelined.available, "{:?}", pipelined.unavailable_reason);
    let samples = by_name(names::SAMPLES_PASSED);
    assert!(!samples.available);
    assert!(samples
        .unavailable_reason
        .as_deref()
        .unwrap()
        .contains("GLES context"));
    for c in &info.counters[FIRST_PIPELINE_STATISTIC as usize..][..PIPELINE_STATISTICS_COUNT] {
        assert!(!c.available, "{}", c.name);
        assert_eq!(
            c.unavailable_reason.as_deref(),
            Some("GLES context: no pipeline statistics query")
        );
    }
    // llvmpipe defers rasterization to the frame's end, so pipelined timestamps do not
    // bracket a draw's work; a GPU that renders draws as submitted (NVIDIA's, seen on an
    // H100) makes them meaningful.
    let deferred = info.renderer.contains("llvmpipe");
    assert_eq!(
        info.pipelined_meaningful, !deferred,
        "{}",
        info.pipelined_note
    );
    assert!(!deferred || info.pipelined_note.contains("llvmpipe"));
    assert!(cc.has_extension("GL_EXT_disjoint_timer_query"));
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

#[test]
fn gles_brackets_time_only() {
    let s = Scene::new(Api::Gles, W, H, None);
    let mut cc = s.counters();
    for call in 0..6u32 {
        let mode = if call < 3 {
            CaptureMode::Full
        } else {
            CaptureMode::Timeline
        };
        let values = s.bracketed_rect(&mut cc, mode, 7, call, (0, 0, W, H));
        match mode {
            CaptureMode::Full => {
                // Only the serialized time: unavailable counters are left out, never 0.
                assert_eq!(values.len(), 1, "{values:?}");
                assert!(value(&values, GPU_TIME_SERIALIZED).is_some());
            }
            CaptureMode::Timeline => assert!(values.is_empty()),
        }
    }
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, true) };
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].frame, 7);
    assert!(!batches[0].disjoint);
    let calls: Vec<u32> = batches[0].times.iter().map(|t| t.call).collect();
    assert_eq!(calls, [0, 1, 2, 3, 4, 5]);
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// GL_GPU_DISJOINT_EXT clears on read: a disjoint event the program saw marks the pending
/// times, and the program's own reads are answered correctly.
#[test]
fn gles_disjoint_bookkeeping() {
    let s = Scene::new(Api::Gles, W, H, None);
    let mut cc = s.counters();
    assert!(!cc.program_read_disjoint(false));
    s.bracketed_rect(&mut cc, CaptureMode::Timeline, 1, 0, (0, 0, W, H));
    // The program read GL_GPU_DISJOINT_EXT and got true: our pending pair is suspect.
    assert!(cc.program_read_disjoint(true));
    s.bracketed_rect(&mut cc, CaptureMode::Timeline, 2, 0, (0, 0, W, H));
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, true) };
    assert_eq!(batches.len(), 2);
    assert!(
        batches[0].disjoint,
        "in flight when the disjoint event was seen"
    );
    assert!(
        !batches[1].disjoint,
        "begun after it (llvmpipe never raises the flag)"
    );
    assert!(!cc.program_read_disjoint(false));
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}
