//! Every reader of a session applies one damage policy: `heatmap` and `view` (pick and
//! screenshot) refuse a truncated session with a one-line error naming `--partial`, as
//! `report`, `checklist` and `diff` do, and with `--partial` read the frames before the
//! damage, saying so.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// The released hot_spot capture (format version 3), heat-mapped, 128×96.
fn fixture() -> PathBuf {
    gpuheat_testkit::fixture("v3-hot_spot")
}

/// The fixture without its last 7 bytes: its last chunk incomplete.
fn truncated(dir: &Path) -> PathBuf {
    let bytes = std::fs::read(fixture()).unwrap();
    let t = dir.join("truncated.gpuheat");
    std::fs::write(&t, &bytes[..bytes.len() - 7]).unwrap();
    t
}

#[test]
fn heatmap_and_view_refuse_a_truncated_session_without_partial() {
    let dir = scratch("damaged-readers");
    let t = truncated(&dir);
    let t = t.to_str().unwrap();
    let png = dir.join("heat.png");
    let png = png.to_str().unwrap();
    let shot = dir.join("shot.png");
    let shot = shot.to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &["heatmap", t, "-o", png],
        &["view", t, "--pick", "64,48", "--json"],
        &["view", t, "--pick", "64,48"],
        &["view", t, "--screenshot", shot, "--size", "320x240"],
    ];
    for args in commands {
        let out = run_gpuheat(args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("gpuheat: error: ") && err.contains("--partial"),
            "{args:?}: {err}"
        );
    }
    assert!(!Path::new(png).exists() && !Path::new(shot).exists());
    for args in commands {
        let mut a = args.to_vec();
        a.push("--partial");
        let out = run_gpuheat(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{a:?}: {err}");
        if args[0] != "view" || args[2] != "--screenshot" {
            assert!(
                err.contains("warning") && err.contains("damaged"),
                "{a:?}: {err}"
            );
        }
    }
    assert!(Path::new(png).exists() && Path::new(shot).exists());
}
