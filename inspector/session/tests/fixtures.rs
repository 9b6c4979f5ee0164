//! Every released format version stays readable: the fixture of each (see
//! `tests/fixtures/README.md`) opens with this build and holds what it was captured with.

use gpuheat_session::{ChunkKind, ChunkReader, FileHeader, Session};
use gpuheat_testkit::fixture;
use std::collections::HashMap;

/// How many chunks of each kind the fixture `name` holds.
fn chunk_kinds(name: &str) -> HashMap<ChunkKind, usize> {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let (_, mut chunks) = ChunkReader::from_file_start(&bytes[..]).unwrap();
    let mut kinds = HashMap::new();
    while let Some(chunk) = chunks.read_chunk().unwrap() {
        *kinds.entry(chunk.kind()).or_insert(0) += 1;
    }
    kinds
}

/// What every fixture holds: the same capture command, so the same frames, heat and geometry.
fn hot_spot_fixture(name: &str, version: u32) -> Session {
    let path = fixture(name);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(FileHeader::parse(&bytes).unwrap().version, version);
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
    s
}

#[test]
fn version_1_session_opens_with_its_frames_heat_and_geometry() {
    let s = hot_spot_fixture("v1-hot_spot", 1);
    // Version 1 sessions have no program records: draws fall back to program names.
    assert!(s.programs.is_empty());
}

#[test]
fn version_2_session_opens_with_its_frames_heat_geometry_and_programs() {
    // Its frames are columnar chunks.
    let kinds = chunk_kinds("v2-hot_spot");
    assert_eq!(kinds.get(&ChunkKind::FRAME), None);
    assert_eq!(kinds[&ChunkKind::FRAME_COLUMNS], 4);
    let s = hot_spot_fixture("v2-hot_spot", 2);
    assert_eq!(s.programs.len(), 1);
    // The same program, so the same call sequence as version 1's capture.
    let v1 = hot_spot_fixture("v1-hot_spot", 1);
    let funcs = |s: &Session| -> Vec<Vec<u16>> {
        s.frames
            .iter()
            .map(|f| f.calls.iter().map(|c| c.func).collect())
            .collect()
    };
    let names = |s: &Session, f: &[Vec<u16>]| -> Vec<Vec<String>> {
        f.iter()
            .map(|calls| {
                calls
                    .iter()
                    .map(|&i| s.functions.functions[usize::from(i)].name.clone())
                    .collect()
            })
            .collect()
    };
    assert_eq!(names(&s, &funcs(&s)), names(&v1, &funcs(&v1)));
}

#[test]
fn version_3_session_holds_geometry_in_planes_equal_to_version_2s() {
    let kinds = chunk_kinds("v3-hot_spot");
    assert_eq!(kinds.get(&ChunkKind::GEOMETRY), None);
    assert_eq!(kinds[&ChunkKind::GEOMETRY_PLANES], 4);
    let s = hot_spot_fixture("v3-hot_spot", 3);
    // The same program and size, so bit for bit the positions version 2's postcard held.
    let v2 = hot_spot_fixture("v2-hot_spot", 2);
    let bits = |s: &Session| -> Vec<(u32, Vec<[u32; 4]>)> {
        s.geometry
            .iter()
            .flat_map(|g| &g.draws)
            .map(|d| {
                (
                    d.call,
                    d.positions.iter().map(|p| p.map(f32::to_bits)).collect(),
                )
            })
            .collect()
    };
    let (got, want) = (bits(&s), bits(&v2));
    assert!(!want.is_empty() && want.iter().all(|(_, p)| !p.is_empty()));
    assert_eq!(got, want);
}

/// Records and fields added after a fixture was written read as absent, never as an error:
/// no uploads, programs without sources, start states without the context facts, an END
/// without the renderer query.
#[test]
fn fixtures_read_without_the_fields_added_since() {
    for (name, version) in [("v1-hot_spot", 1), ("v2-hot_spot", 2)] {
        let s = hot_spot_fixture(name, version);
        assert!(s.uploads.is_empty(), "{name}");
        assert!(s.programs.iter().all(|p| p.sources.is_empty()), "{name}");
        for st in &s.states {
            assert_eq!(
                (st.samples, st.depth_bits, st.depth_test, &st.texture_2d),
                (None, None, None, &None),
                "{name}"
            );
        }
        assert_eq!(
            s.end.as_ref().and_then(|e| e.renderer_query),
            None,
            "{name}"
        );
    }
}
