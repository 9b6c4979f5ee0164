//! The real window under Xvfb: opens, screenshots itself, closes.

mod common;

use common::{hot_spot, scratch};
use gpuheat_viz::{open_window, ViewOptions};
use std::time::{Duration, Instant};

#[test]
fn a_window_opens_screenshots_itself_and_closes() {
    let dir = scratch("window");
    let session = hot_spot(&dir);
    let xvfb = gpuheat_testkit::Xvfb::with_screen("1280x800x24");
    let display = xvfb.display.clone();
    // This test binary holds only this test: nothing else reads the environment meanwhile.
    std::env::set_var("DISPLAY", &display);
    std::env::remove_var("WAYLAND_DISPLAY");
    let png = dir.join("window.png");
    let opts = ViewOptions {
        size: (1000, 640),
        ..Default::default()
    };
    let started = Instant::now();
    open_window(session, opts, Some(png.clone())).unwrap();
    assert!(started.elapsed() < Duration::from_secs(120));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let (w, h) = (reader.info().width, reader.info().height);
    assert_eq!((w, h), (1000, 640));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    let mut colours: Vec<&[u8]> = buf.chunks_exact(3).collect();
    colours.sort();
    colours.dedup();
    assert!(
        colours.len() > 200,
        "window screenshot has {} colours",
        colours.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
