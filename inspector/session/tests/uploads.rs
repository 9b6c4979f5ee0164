//! The `UPLD` record (a frame's uploads), shader sources in `PROG` and what they are bounded
//! to, read and written as the agent does.

use gpuheat_session::{
    bounded_sources, decode, encode, ChunkKind, FrameUploads, Record, Session, SessionError,
    Unhashed, Upload, MAX_PROGRAM_SOURCES, MAX_SHADER_SOURCE, TRUNCATED_MARKER,
};
use gpuheat_testkit::sample::{every_record, file_bytes, uploads};

#[test]
fn uploads_round_trip_and_land_in_the_session() {
    let record = Record::Uploads(uploads(11));
    let chunk = encode(&record);
    assert_eq!(&chunk[..4], b"UPLD");
    assert_eq!(decode(&chunk).unwrap().unwrap().into_record(), Some(record));
    let s = Session::from_reader(&file_bytes(&every_record())[..]).unwrap();
    assert_eq!(s.uploads, vec![uploads(11)]);
    assert_eq!(s.uploads[0].over_budget(), 1);
}

#[test]
fn an_upload_with_both_or_neither_of_hash_and_reason_is_refused() {
    for (hash, unhashed) in [(Some(1), Some(Unhashed::TooLarge)), (None, None)] {
        let bad = FrameUploads {
            frame: 2,
            uploads: vec![Upload {
                call: 0,
                bytes: 4,
                hash,
                unhashed,
            }],
        };
        assert!(bad.validate().is_err());
        match decode(&encode(&Record::Uploads(bad))) {
            Err(SessionError::BadPayload { kind, .. }) => assert_eq!(kind, ChunkKind::UPLOADS),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_reader_that_does_not_know_uploads_skips_them() {
    // What an older build does with a kind it does not know: the same bytes under an
    // unknown fourcc are checked and skipped, the rest of the session reads.
    let mut bytes = file_bytes(&every_record()[..4]);
    let mut unknown = encode(&Record::Uploads(uploads(3)));
    unknown[..4].copy_from_slice(b"UPLZ");
    let crc_ok = unknown.clone();
    bytes.extend_from_slice(&crc_ok);
    let s = Session::from_reader(&bytes[..]).unwrap();
    assert!(s.uploads.is_empty());
}

#[test]
fn sources_are_kept_whole_up_to_their_bounds_and_cut_with_a_marker_past_them() {
    let small = b"void main() {}".to_vec();
    assert_eq!(
        bounded_sources([&small[..]]),
        vec!["void main() {}".to_string()]
    );
    // One shader over its bound: cut on a character boundary, marked, within the bound.
    let mut big = "é".repeat(MAX_SHADER_SOURCE).into_bytes();
    big.extend_from_slice(b"tail");
    let kept = bounded_sources([&big[..]]);
    assert!(kept[0].len() <= MAX_SHADER_SOURCE);
    assert!(kept[0].contains(TRUNCATED_MARKER));
    assert!(kept[0].ends_with(&format!("{} bytes\n", big.len())));
    // Many shaders: all together within the program's bound, the later ones cut first.
    let each = vec![b'x'; MAX_SHADER_SOURCE];
    let kept = bounded_sources(std::iter::repeat_n(&each[..], 6));
    let total: usize = kept.iter().map(String::len).sum();
    assert!(total <= MAX_PROGRAM_SOURCES + 2 * 64, "{total}");
    assert_eq!(kept[0].len(), MAX_SHADER_SOURCE);
    assert!(!kept[0].contains(TRUNCATED_MARKER) && kept[0].len() == each.len());
    assert!(kept[5].starts_with(TRUNCATED_MARKER));
}
