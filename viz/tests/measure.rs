//! A large session opens without blocking the UI: frames are painted while it loads.

mod common;

use common::{capture, scratch};
use gpuheat_viz::{measure, ViewOptions};

#[test]
fn the_ui_paints_while_a_large_session_loads() {
    let dir = scratch("measure");
    // 200 frames of 1,000 draws: 200,000 draws to read and analyse.
    let session = capture(
        &dir,
        "many_draws",
        &["--mode", "timeline", "--frames", "200"],
        &["--draws", "1000", "--tris", "2"],
    );
    let opts = ViewOptions {
        size: (1024, 640),
        ..Default::default()
    };
    let m = measure(session, opts).unwrap();
    assert_eq!(m.frames, 200);
    assert!(m.draws >= 200_000, "{} draws", m.draws);
    assert!(m.loading_frames >= 1, "no UI frame while loading: {m:?}");
    assert!(m.first_paint_ms > 0.0 && m.load_ms > 0.0, "{m:?}");
    // A UI frame while loading is far shorter than the load itself.
    assert!(m.loading_frame_ms_median < m.load_ms, "{m:?}");
    assert!(
        m.heat_frame_ms_median > 0.0 && m.mesh_frame_ms_median > 0.0,
        "{m:?}"
    );
}
