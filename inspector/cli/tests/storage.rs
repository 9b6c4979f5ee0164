//! A draw whose fragment shader writes the program's memory (`storage_writes`: a storage
//! buffer counter and an atomic counter, one per fragment, read back by the program each
//! frame). Heat runs the draw again: the buffers it writes are kept aside and put back, so
//! the program still counts its draw's fragments once, and the draw is painted with them; a
//! draw whose program stores to an image is not run again at all.

mod common;

use common::*;
use gpuheat_session::Session;

/// The example's default size, and its rectangle's fragments, (W/2)·(H/2).
const W: u64 = 128;
const H: u64 = 96;
const FRAGMENTS: u64 = (W / 2) * (H / 2);

/// The program's own line of counts, printed at exit.
fn counts(stdout: &[u8]) -> Option<String> {
    result_line(stdout, "storage")
}

/// Captures `storage_writes` with heat (its last frames, which it counts), on `api`.
fn heat_capture(dir: &std::path::Path, api: &str, image: bool) -> (String, Session) {
    let image = if image { "1" } else { "0" };
    let (session, out) = capture_with_output(
        dir,
        "storage_writes",
        &["--heat", "--skip", "2", "--frames", "3", "--keep-running"],
        &["--api", api, "--frames", "6", "--image", image],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = counts(&out.stdout).unwrap_or_else(|| panic!("{api}: no counts: {stderr}"));
    (line, Session::open(&session).unwrap())
}

#[test]
fn a_draw_that_writes_storage_counts_its_fragments_once_and_is_painted() {
    let dir = scratch("storage-writes");
    let expected = format!("storage={FRAGMENTS} atomic={FRAGMENTS}");
    for api in ["gl", "gles"] {
        let plain = std::process::Command::new(example("storage_writes"))
            .args(["--api", api, "--frames", "3"])
            .output()
            .unwrap();
        assert!(plain.status.success(), "{plain:?}");
        assert_eq!(counts(&plain.stdout).as_deref(), Some(expected.as_str()));
        let (line, s) = heat_capture(&dir, api, false);
        // Every frame, the captured ones included: the replay's writes were undone.
        assert_eq!(line, expected, "{api}: the program's own counts");
        assert_eq!(s.heat.len(), 3, "{api}: {:?}", s.heat_missing);
        for m in &s.heat {
            let f = s.frames.iter().find(|f| f.index == m.frame).unwrap();
            assert_eq!(f.calls.len(), 18, "{api}: the example's calls per frame");
            let work = f
                .calls
                .iter()
                .filter(|c| s.functions.functions[c.func as usize].class.is_work())
                .count();
            assert_eq!(work, 2, "{api}: the example's work calls per frame");
            let draws: Vec<_> = m.draws.iter().filter(|d| d.fragments > 0).collect();
            assert_eq!(draws.len(), 1, "{api} frame {}: {:?}", m.frame, m.draws);
            assert_eq!(draws[0].fragments, FRAGMENTS, "{api} frame {}", m.frame);
            let err = conservation_error(&m.heat, &m.draws, api);
            assert!(err <= 1e-4, "{api} frame {}: {err}", m.frame);
        }
    }
}

#[test]
fn a_draw_that_stores_to_an_image_is_not_run_again() {
    let dir = scratch("storage-writes-image");
    for api in ["gl", "gles"] {
        let (line, s) = heat_capture(&dir, api, true);
        assert_eq!(
            line,
            format!("storage={FRAGMENTS} atomic={FRAGMENTS}"),
            "{api}"
        );
        assert_eq!(s.heat.len(), 3, "{api}: {:?}", s.heat_missing);
        for flow in &s.flow {
            let notes: Vec<&str> = flow.draws.iter().map(|d| d.note.as_str()).collect();
            assert!(
                notes
                    .iter()
                    .any(|n| n.contains("not painted") && n.contains("image")),
                "{api} frame {}: {notes:?}",
                flow.frame
            );
        }
        for m in &s.heat {
            assert!(
                m.draws.iter().all(|d| d.fragments == 0),
                "{api}: {:?}",
                m.draws
            );
        }
    }
}
