//! The fixtures several crates' tests share: the released session files (one per format
//! version, kept in the session crate beside the README saying how each was captured) and
//! the scenes built in code that more than one crate draws, served from here so that none
//! keeps a copy.

use crate::builder::{texture_target, FrameBuilder};
use std::path::PathBuf;

/// The folder of the released fixtures, `inspector/session/tests/fixtures`.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../session/tests/fixtures")
}

/// The path of fixture `name` (`"v3-hot_spot"`: `v3-hot_spot.gpuheat`); panics when there
/// is no such file, naming it.
pub fn fixture(name: &str) -> PathBuf {
    let path = fixtures_dir().join(format!("{name}.gpuheat"));
    assert!(path.is_file(), "no fixture {}", path.display());
    path
}

/// The offscreen-pass scene the heat map, viewer and `view` tests share: a 64×48 screen map;
/// target 1 (texture 7, 32×32) drawn for 100,000 ns and sampled by a screen draw over
/// [8, 8, 24, 24) (1,000 ns); target 2 (texture 8, 16×16) drawn for 500 ns and never
/// sampled. Returns the calls: the pass into target 1, the one into target 2, the screen draw.
pub fn offscreen_passes(f: &mut FrameBuilder) -> [u32; 3] {
    f.heat_map(64, 48)
        .target(texture_target(1, 7, 32, 32))
        .target(texture_target(2, 8, 16, 16));
    let pass = f.draw(100_000);
    f.cover_target(pass, 1, [0, 0, 32, 32]);
    let unread = f.draw(500);
    f.cover_target(unread, 2, [0, 0, 16, 16]);
    let show = f.draw(1_000);
    f.cover(show, [8, 8, 24, 24]).samples(show, &[7]);
    [pass, unread, show]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_released_version_has_its_fixture() {
        for v in 1..=3 {
            assert!(super::fixture(&format!("v{v}-hot_spot")).is_file());
        }
    }
}
