//! The released session files: one per format version, kept in the session crate (beside the
//! README saying how each was captured) and served from here, so every crate's tests name
//! them the same way and none keeps a copy.

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

#[cfg(test)]
mod tests {
    #[test]
    fn every_released_version_has_its_fixture() {
        for v in 1..=3 {
            assert!(super::fixture(&format!("v{v}-hot_spot")).is_file());
        }
    }
}
