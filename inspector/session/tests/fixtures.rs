//! Every released format version stays readable: the fixture of each (see
//! `tests/fixtures/README.md`) opens with this build and holds what it was captured with.

use gpuheat_session::{FileHeader, Session};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn version_1_session_opens_with_its_frames_heat_and_geometry() {
    let path = fixture("v1-hot_spot.gpuheat");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(FileHeader::parse(&bytes).unwrap().version, 1);
    let s = Session::open(&path).unwrap();
    assert!(s.truncated_at.is_none());
    // hot_spot's documented sequence with the default 3 layers: 18 calls, 4 draws and a
    // clear per frame.
    assert_eq!(s.frames.len(), 4);
    for f in &s.frames {
        assert_eq!(f.calls.len(), 18, "frame {}", f.index);
        assert_eq!(f.samples.len(), 5, "frame {}", f.index);
    }
    assert_eq!(s.heat.len(), 4);
    for h in &s.heat {
        assert_eq!((h.width, h.height), (128, 96));
        // Every pixel is covered by the 3 full-screen layers, the hot square's 24² pixels
        // by one more draw.
        let fragments: u64 = h.overdraw.iter().map(|&c| u64::from(c)).sum();
        assert_eq!(fragments, 3 * 128 * 96 + 24 * 24);
    }
    assert_eq!(s.geometry.len(), 4);
    // Version 1 sessions have no program records: draws fall back to program names.
    assert!(s.programs.is_empty());
}
