//! Capturing real sessions for the viewer's tests: the `gpuheat` CLI and the example
//! programs built next to this test (`cargo build --workspace`, which `make test` runs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory the workspace's binaries are built into (this test runs from its `deps/`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps dir");
    let dir = if deps.ends_with("deps") {
        deps.parent().unwrap().to_path_buf()
    } else {
        deps.to_path_buf()
    };
    for needed in ["gpuheat", "libgpuheat_agent.so"] {
        assert!(
            dir.join(needed).is_file(),
            "{} missing: run `cargo build --workspace` (make test does)",
            dir.join(needed).display()
        );
    }
    dir
}

pub use gpuheat_testkit::Scratch;

/// A fresh scratch directory for one test, removed on drop.
pub fn scratch(test: &str) -> Scratch {
    Scratch::new("gpuheat-viz", test)
}

/// `gpuheat run GPUHEAT_ARGS -- EXAMPLE EXAMPLE_ARGS`, bounded in time; the session's path.
pub fn capture(dir: &Path, example: &str, gpuheat_args: &[&str], example_args: &[&str]) -> PathBuf {
    let bin = bin_dir();
    let exe = bin.join(example);
    assert!(
        exe.is_file(),
        "{} missing: run `cargo build --workspace`",
        exe.display()
    );
    let session = dir.join(format!("{example}.gpuheat"));
    let out = Command::new("timeout")
        .arg("-k5")
        .arg("240")
        .arg(bin.join("gpuheat"))
        .arg("run")
        .arg("-o")
        .arg(&session)
        .args(gpuheat_args)
        .arg("--")
        .arg(&exe)
        .args(example_args)
        .output()
        .expect("spawn gpuheat");
    assert!(
        out.status.success(),
        "gpuheat run {example} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    session
}

/// A heat-mapped, geometry-recording capture of `hot_spot` (3 frames).
pub fn hot_spot(dir: &Path) -> PathBuf {
    capture(
        dir,
        "hot_spot",
        &["--mode", "full", "--heat", "--frames", "3"],
        &[],
    )
}

/// RGB of pixel (`x`, `y`) of an RGBA image `width` wide.
pub fn px(rgba: &[u8], width: u32, x: u32, y: u32) -> [u8; 3] {
    let i = ((y * width + x) * 4) as usize;
    [rgba[i], rgba[i + 1], rgba[i + 2]]
}

pub fn close(a: [u8; 3], b: [u8; 3], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tolerance)
}
