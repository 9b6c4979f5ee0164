//! The real window under Xvfb: opens, screenshots itself, closes.

mod common;

use common::{hot_spot, scratch};
use gpuheat_viz::{open_window, ViewOptions};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM, so Xvfb removes its /tmp/.X11-unix socket and /tmp/.XN-lock file (SIGKILL
        // leaves both behind); SIGKILL only if it does not exit within 2 s.
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `Xvfb :N` on a free display number and waits for its socket.
fn xvfb() -> (Xvfb, String) {
    for n in 90..140 {
        let socket = format!("/tmp/.X11-unix/X{n}");
        if std::path::Path::new(&socket).exists()
            || std::path::Path::new(&format!("/tmp/.X{n}-lock")).exists()
        {
            continue;
        }
        let child = Command::new("Xvfb")
            .arg(format!(":{n}"))
            .args(["-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (package xvfb) must be installed");
        let x = Xvfb(child);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if std::path::Path::new(&socket).exists() {
                return (x, format!(":{n}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("no Xvfb display came up");
}

#[test]
fn a_window_opens_screenshots_itself_and_closes() {
    let dir = scratch("window");
    let session = hot_spot(&dir);
    let (_xvfb, display) = xvfb();
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
