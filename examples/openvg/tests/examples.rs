//! The VG example programs (`examples/vg_*.rs`: the clean scene and one per VG rule) run
//! through the shared library, print their final frame's checksum and draw exactly the
//! areas their documentation states (rectangle 1 200 px, circle π·20² within 1 %, line
//! 600 px, image 256 px, the tiny polygons 4 × 12 px).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

/// The examples that draw the clean scene unchanged (each adds only its rule's trigger).
const LIKE_CLEAN: [&str; 5] = [
    "vg_churn",
    "vg_reupload",
    "vg_redundant",
    "vg_all_caps",
    "vg_sync",
];

/// Runs example `name` with `--frames frames`; its `key=value` output.
fn run(name: &str, frames: u32) -> HashMap<String, String> {
    // target/debug/deps/<this test> → target/debug
    let exe = std::env::current_exe().unwrap();
    let profile: PathBuf = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let example = profile.join("examples").join(name);
    assert!(
        example.exists(),
        "{} (built by cargo test)",
        example.display()
    );
    // deps/ holds the library this build linked the example against.
    let out = Command::new(&example)
        .args(["--frames", &frames.to_string()])
        .env("LD_LIBRARY_PATH", profile.join("deps"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn count(out: &HashMap<String, String>, colour: &str) -> u64 {
    out.get(colour)
        .unwrap_or_else(|| panic!("no {colour}= in {out:?}"))
        .parse()
        .unwrap()
}

/// Checks the clean scene's areas and the white pixels; returns the checksum.
fn check_scene(name: &str, out: &HashMap<String, String>, white: u64) -> String {
    assert_eq!(count(out, "red"), 1200, "{name} rectangle");
    let circle = count(out, "green") as f64;
    let analytic = std::f64::consts::PI * 20.0 * 20.0;
    assert!(
        (circle - analytic).abs() / analytic < 0.01,
        "{name} circle {circle} vs {analytic:.1}"
    );
    assert_eq!(count(out, "blue"), 600, "{name} line");
    assert_eq!(count(out, "yellow"), 256, "{name} image");
    assert_eq!(count(out, "white"), white, "{name} polygons");
    assert_eq!(count(out, "other"), 0, "{name}: {out:?}");
    let drawn: u64 = ["red", "green", "blue", "yellow", "white"]
        .iter()
        .map(|c| count(out, c))
        .sum();
    assert_eq!(count(out, "black") + drawn, 128 * 128, "{name}");
    let crc = out
        .get("frame_crc")
        .unwrap_or_else(|| panic!("{name}: no frame_crc"));
    assert!(
        crc.len() == 16 && crc.chars().all(|c| c.is_ascii_hexdigit()),
        "{name}: frame_crc={crc}"
    );
    crc.clone()
}

#[test]
fn the_clean_scene_draws_its_documented_areas_the_same_in_every_frame_count() {
    let three = check_scene("vg_clean", &run("vg_clean", 3), 0);
    for frames in [1, 5] {
        let crc = check_scene("vg_clean", &run("vg_clean", frames), 0);
        assert_eq!(crc, three, "--frames {frames}");
    }
}

#[test]
fn each_rule_example_draws_the_clean_scene_bit_identically() {
    let clean = check_scene("vg_clean", &run("vg_clean", 3), 0);
    for name in LIKE_CLEAN {
        let crc = check_scene(name, &run(name, 3), 0);
        assert_eq!(crc, clean, "{name}");
    }
}

#[test]
fn the_tiny_paths_example_adds_four_twelve_pixel_polygons() {
    let clean = check_scene("vg_clean", &run("vg_clean", 3), 0);
    let crc = check_scene("vg_tiny_paths", &run("vg_tiny_paths", 3), 48);
    assert_ne!(crc, clean);
}
