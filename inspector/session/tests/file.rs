//! Session files: writing, reading back, and what damage does.

use gpuheat_session::*;
use gpuheat_testkit::sample::*;
use gpuheat_testkit::{Scratch, XorShift};

/// The records of a typical session: metadata, `frames` frames, pipelined batches, an end.
fn session_records(frames: u64) -> Vec<Record> {
    let mut records = vec![
        Record::Info(info()),
        Record::Functions(functions()),
        Record::Context(context()),
        Record::Modules(modules()),
    ];
    for i in 0..frames {
        records.push(Record::Frame(frame(10 + i, 12 + i as usize)));
        if i > 0 {
            records.push(Record::Pipelined(pipelined(10 + i - 1)));
        }
    }
    records.push(Record::End(end()));
    records
}

fn write_session(path: &std::path::Path, records: &[Record]) -> SessionWriter {
    let mut writer = SessionWriter::create(path).unwrap();
    for r in records {
        writer.append(r).unwrap();
    }
    writer
}

fn expected_session(records: &[Record]) -> Session {
    Session::from_records(records.iter().cloned()).unwrap()
}

#[test]
fn every_record_round_trips_through_a_file() {
    let dir = Scratch::new("gpuheat-session-test", "round-trip");
    let path = dir.join("s.gpuheat");
    let records = every_record();
    let writer = write_session(&path, &records);
    assert_eq!(writer.frames_written(), 1);
    assert_eq!(writer.chunks_written(), records.len() as u64);
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(writer.bytes_written(), size);
    assert_eq!(writer.path(), path);
    writer.finish().unwrap();

    assert_eq!(std::fs::read(&path).unwrap(), file_bytes(&records));
    let s = Session::open(&path).unwrap();
    assert_eq!(s.info, info());
    assert_eq!(s.functions, functions());
    assert_eq!(s.contexts, vec![context()]);
    assert_eq!(s.modules, Some(modules()));
    assert_eq!(s.frames, vec![frame(11, 40)]);
    assert_eq!(s.pipelined, vec![pipelined(11)]);
    assert_eq!(s.end, Some(end()));
    assert_eq!(s.truncated_at, None);
    assert_eq!(Session::open_lenient(&path).unwrap(), s);
    assert_eq!(Session::from_reader(&file_bytes(&records)[..]).unwrap(), s);
}

#[test]
fn wire_chunks_are_stored_as_they_came() {
    let dir = Scratch::new("gpuheat-session-test", "wire");
    let records = session_records(4);
    let wire: Vec<u8> = records.iter().flat_map(encode).collect();

    // The receiver's way: read checked chunks, store them without re-encoding.
    let by_chunk = dir.join("by-chunk.gpuheat");
    let mut writer = SessionWriter::create(&by_chunk).unwrap();
    for chunk in std::iter::from_fn({
        let mut reader = ChunkReader::new(&wire[..]);
        move || reader.read_chunk().unwrap()
    }) {
        writer.append_chunk(&chunk).unwrap();
    }
    assert_eq!(writer.frames_written(), 4);
    assert_eq!(writer.chunks_written(), records.len() as u64);
    drop(writer);

    // Raw bytes, several chunks at a time, checked by the writer.
    let by_bytes = dir.join("by-bytes.gpuheat");
    let mut writer = SessionWriter::create(&by_bytes).unwrap();
    let split = encode(&records[0]).len() + encode(&records[1]).len();
    writer.append_encoded(&wire[..split]).unwrap();
    writer.append_encoded(&wire[split..]).unwrap();
    writer.append_encoded(&[]).unwrap();
    assert_eq!(writer.frames_written(), 4);
    assert_eq!(writer.chunks_written(), records.len() as u64);
    assert_eq!(
        writer.bytes_written(),
        (FILE_HEADER_LEN + wire.len()) as u64
    );
    drop(writer);

    let expected = expected_session(&records);
    assert_eq!(Session::open(&by_chunk).unwrap(), expected);
    assert_eq!(Session::open(&by_bytes).unwrap(), expected);
    assert_eq!(std::fs::read(&by_bytes).unwrap(), file_bytes(&records));
}

#[test]
fn damaged_wire_chunks_are_rejected_and_nothing_of_them_is_stored() {
    let dir = Scratch::new("gpuheat-session-test", "reject");
    let path = dir.join("s.gpuheat");
    let mut writer = write_session(&path, &session_records(1)[..2]);
    let before = writer.bytes_written();

    let good = encode(&Record::Frame(frame(1, 30)));
    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 1;
    match writer.append_encoded(&flipped) {
        Err(SessionError::Corrupted { offset, kind }) => {
            assert_eq!(offset, before);
            assert_eq!(kind, ChunkKind::FRAME_COLUMNS);
        }
        other => panic!("{other:?}"),
    }
    // A good chunk followed by a cut one: all or nothing.
    let partial = [&good[..], &good[..good.len() - 1]].concat();
    match writer.append_encoded(&partial) {
        Err(SessionError::Truncated { offset }) => assert_eq!(offset, before + good.len() as u64),
        other => panic!("{other:?}"),
    }
    assert_eq!(writer.bytes_written(), before);
    assert_eq!(writer.frames_written(), 0);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), before);

    writer.append_encoded(&good).unwrap();
    assert_eq!(writer.frames_written(), 1);
    drop(writer);
    let s = Session::open(&path).unwrap();
    assert_eq!(s.frames, vec![frame(1, 30)]);
    assert_eq!(s.truncated_at, None);
}

#[test]
fn a_file_cut_anywhere_in_its_last_chunk_keeps_every_earlier_frame() {
    let dir = Scratch::new("gpuheat-session-test", "cut");
    let path = dir.join("s.gpuheat");
    let mut records = session_records(5);
    records.pop(); // the End: the capture was killed while writing the last frame
    records.push(Record::Frame(frame(99, 25)));
    let bytes = file_bytes(&records);
    let last_start = bytes.len() - encode(records.last().unwrap()).len();
    let expected_frames: Vec<Frame> = (0..5).map(|i| frame(10 + i, 12 + i as usize)).collect();

    for cut in last_start..=bytes.len() {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let s = Session::open(&path).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let lenient = Session::open_lenient(&path).unwrap();
        assert_eq!(s, lenient);
        if cut == last_start {
            // Cut at a chunk boundary: nothing to tell it from a session that just ended.
            assert_eq!(s.truncated_at, None);
            assert_eq!(s.frames, expected_frames);
        } else if cut == bytes.len() {
            assert_eq!(s.truncated_at, None);
            assert_eq!(s.frames.len(), 6);
        } else {
            assert_eq!(s.truncated_at, Some(last_start as u64), "cut at {cut}");
            assert_eq!(s.frames, expected_frames, "cut at {cut}");
            assert_eq!(s.pipelined.len(), 4);
            assert_eq!(s.end, None);
        }
    }
}

#[test]
fn a_file_cut_inside_the_header_or_before_the_tables_is_an_error_never_a_panic() {
    let dir = Scratch::new("gpuheat-session-test", "short");
    let path = dir.join("s.gpuheat");
    let bytes = file_bytes(&session_records(1));
    let info_end = FILE_HEADER_LEN + encode(&Record::Info(info())).len();
    let functions_end = info_end + encode(&Record::Functions(functions())).len();

    for cut in 0..functions_end {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let err = Session::open(&path).expect_err("too short to be a session");
        match (cut, &err) {
            (0..=15, SessionError::NotASession { .. }) => {}
            (16, SessionError::MissingRecord { kind }) => assert_eq!(*kind, ChunkKind::INFO),
            (c, SessionError::Truncated { offset }) if c > 16 && c < info_end => {
                assert_eq!(*offset, FILE_HEADER_LEN as u64)
            }
            (c, SessionError::MissingRecord { kind }) if c == info_end => {
                assert_eq!(*kind, ChunkKind::FUNCTIONS)
            }
            (c, SessionError::Truncated { offset }) if c > info_end && c < functions_end => {
                assert_eq!(*offset, info_end as u64)
            }
            _ => panic!("cut at {cut}: {err:?}"),
        }
        assert!(Session::open_lenient(&path).is_err());
    }
    std::fs::write(&path, &bytes[..functions_end]).unwrap();
    assert!(Session::open(&path).unwrap().frames.is_empty());
    std::fs::write(&path, &bytes[..5]).unwrap();
    assert_eq!(
        Session::open(&path).unwrap_err().to_string(),
        "not a gpuheat session (5 bytes, too short for the 16-byte header)"
    );
    std::fs::write(&path, b"").unwrap();
    assert_eq!(
        Session::open(&path).unwrap_err().to_string(),
        "not a gpuheat session (empty file)"
    );
}

#[test]
fn other_files_are_not_sessions() {
    let dir = Scratch::new("gpuheat-session-test", "other");
    let path = dir.join("notes.txt");
    std::fs::write(&path, "GPU heat notes: nothing to see here\n").unwrap();
    assert_eq!(
        Session::open(&path).unwrap_err().to_string(),
        "not a gpuheat session (bad magic)"
    );
    std::fs::write(&path, b"GPU").unwrap();
    assert!(matches!(
        Session::open(&path),
        Err(SessionError::NotASession { .. })
    ));

    let mut bytes = file_bytes(&session_records(1));
    bytes[8..12].copy_from_slice(&0u32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        Session::open(&path),
        Err(SessionError::NotASession { .. })
    ));
}

#[test]
fn a_newer_format_version_names_both_versions() {
    let dir = Scratch::new("gpuheat-session-test", "newer");
    let path = dir.join("s.gpuheat");
    let mut bytes = file_bytes(&session_records(1));
    let newer = FORMAT_VERSION + 1;
    bytes[8..12].copy_from_slice(&newer.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let err = Session::open(&path).unwrap_err();
    assert!(matches!(
        err,
        SessionError::NewerVersion {
            found,
            supported: FORMAT_VERSION
        } if found == newer
    ));
    assert_eq!(
        err.to_string(),
        format!(
            "session format version {newer} is newer than this gpuheat (reads up to {FORMAT_VERSION})"
        )
    );
    assert!(Session::open_lenient(&path).is_err());
}

#[test]
fn reserved_header_flags_are_ignored() {
    let mut bytes = file_bytes(&session_records(2));
    bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        Session::from_reader(&bytes[..]).unwrap(),
        expected_session(&session_records(2))
    );
}

#[test]
fn a_flipped_payload_byte_is_corrupted_and_lenient_reading_salvages_what_precedes_it() {
    let dir = Scratch::new("gpuheat-session-test", "flip");
    let path = dir.join("s.gpuheat");
    let records = session_records(5);
    let bytes = file_bytes(&records);
    // The third frame's chunk.
    let index = records
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r, Record::Frame(_)))
        .nth(2)
        .unwrap()
        .0;
    let start: usize = FILE_HEADER_LEN
        + records[..index]
            .iter()
            .map(|r| encode(r).len())
            .sum::<usize>();
    let mut bad = bytes.clone();
    bad[start + CHUNK_HEADER_LEN + 3] ^= 0x01;
    std::fs::write(&path, &bad).unwrap();

    let err = Session::open(&path).unwrap_err();
    match err {
        SessionError::Corrupted { offset, kind } => {
            assert_eq!(offset, start as u64);
            assert_eq!(kind, ChunkKind::FRAME_COLUMNS);
        }
        ref other => panic!("{other:?}"),
    }
    assert_eq!(
        err.to_string(),
        format!("session corrupted at byte {start}: checksum mismatch in FRMC chunk")
    );

    let salvaged = Session::open_lenient(&path).unwrap();
    assert_eq!(salvaged.truncated_at, Some(start as u64));
    assert_eq!(salvaged.frames, vec![frame(10, 12), frame(11, 13)]);
    assert_eq!(salvaged.end, None);
    assert_eq!(salvaged, Session::from_reader_lenient(&bad[..]).unwrap());
}

#[test]
fn an_unknown_chunk_kind_in_the_middle_is_skipped() {
    let dir = Scratch::new("gpuheat-session-test", "unknown");
    let path = dir.join("s.gpuheat");
    let records = session_records(3);
    let mut writer = SessionWriter::create(&path).unwrap();
    for (i, r) in records.iter().enumerate() {
        writer.append(r).unwrap();
        if i == 5 {
            let future = encode_chunk(ChunkKind::from_fourcc(*b"XTRA"), &[7u8; 500]);
            writer.append_encoded(&future).unwrap();
            let noise = encode_chunk(ChunkKind(0xffff_fffe), &XorShift::new(3).bytes(64));
            writer.append_encoded(&noise).unwrap();
        }
    }
    assert_eq!(writer.chunks_written(), records.len() as u64 + 2);
    drop(writer);
    let s = Session::open(&path).unwrap();
    assert_eq!(s, expected_session(&records));
    assert_eq!(s.frames.len(), 3);
}

#[test]
fn sessions_without_info_or_functions_are_refused() {
    let records = session_records(2);
    let without = |kind: ChunkKind| -> Vec<Record> {
        records
            .iter()
            .filter(|r| r.kind() != kind)
            .cloned()
            .collect()
    };
    let err = Session::from_reader(&file_bytes(&without(ChunkKind::INFO))[..]).unwrap_err();
    assert_eq!(err.to_string(), "session incomplete: it has no INFO record");
    let err = Session::from_reader(&file_bytes(&without(ChunkKind::FUNCTIONS))[..]).unwrap_err();
    assert_eq!(err.to_string(), "session incomplete: it has no FUNC record");
    assert!(Session::from_records(without(ChunkKind::INFO)).is_err());
}

#[test]
fn repeated_singletons_keep_the_first() {
    let mut records = session_records(1);
    let mut other = info();
    other.pid = 1;
    records.push(Record::Info(other));
    records.push(Record::End(EndInfo {
        reason: EndReason::Stopped,
        ..end()
    }));
    let s = Session::from_reader(&file_bytes(&records)[..]).unwrap();
    assert_eq!(s.info, info());
    assert_eq!(s.end, Some(end()));
}

#[test]
fn pipelined_times_are_found_by_frame_and_call() {
    let s = Session::from_reader(&file_bytes(&session_records(4))[..]).unwrap();
    let index = s.pipelined_index();
    assert_eq!(index.len(), 3 * 4);
    assert!(!index.is_empty());
    for batch in &s.pipelined {
        for t in &batch.times {
            assert_eq!(
                index.get(batch.frame, t.call),
                Some(CallGpuTime {
                    gpu_ns: t.gpu_ns,
                    disjoint: batch.disjoint
                })
            );
        }
    }
    assert_eq!(index.get(10, 0), None);
    assert_eq!(index.get(99, 1), None);
    assert_eq!(index.get(11, 1).map(|t| t.disjoint), Some(true));
    assert_eq!(index.get(12, 4).map(|t| t.disjoint), Some(false));

    let later = PipelinedBatch {
        frame: 10,
        disjoint: false,
        times: vec![PipelinedTime { call: 1, gpu_ns: 5 }],
    };
    let index = PipelinedIndex::new(&[pipelined(10), later]);
    assert_eq!(
        index.get(10, 1),
        Some(CallGpuTime {
            gpu_ns: 5,
            disjoint: false
        })
    );
    assert!(PipelinedIndex::default().is_empty());
}

#[test]
fn io_errors_name_the_file() {
    let dir = Scratch::new("gpuheat-session-test", "io");
    let missing_dir = dir.join("no/such/dir/s.gpuheat");
    let err = SessionWriter::create(&missing_dir).unwrap_err();
    assert!(matches!(
        err,
        SessionError::Io {
            action: "create",
            ..
        }
    ));
    assert!(err
        .to_string()
        .starts_with(&format!("cannot create {}: ", missing_dir.display())));

    let missing = dir.join("missing.gpuheat");
    let err = Session::open(&missing).unwrap_err();
    assert!(matches!(err, SessionError::Io { action: "open", .. }));
    assert!(err.to_string().contains("missing.gpuheat"));

    // A directory opens but cannot be read.
    let err = Session::open(&*dir).unwrap_err();
    assert!(
        matches!(err, SessionError::Io { action: "read", .. }),
        "{err:?}"
    );
}

#[test]
fn create_replaces_an_existing_file() {
    let dir = Scratch::new("gpuheat-session-test", "replace");
    let path = dir.join("s.gpuheat");
    std::fs::write(&path, vec![1u8; 10_000]).unwrap();
    let writer = write_session(&path, &session_records(1));
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        writer.bytes_written()
    );
    assert_eq!(
        Session::open(&path).unwrap(),
        expected_session(&session_records(1))
    );
}
