//! The chunk encoding on its own: what the agent sends and the CLI checks.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use gpuheat_session::*;
use gpuheat_testkit::sample::*;
use gpuheat_testkit::XorShift;

fn header_of(bytes: &[u8]) -> ChunkHeader {
    ChunkHeader::parse(bytes[..CHUNK_HEADER_LEN].try_into().unwrap())
}

#[test]
fn every_record_round_trips_through_encode_and_decode() {
    for record in every_record() {
        let bytes = encode(&record);
        let header = header_of(&bytes);
        assert_eq!(header.kind, record.kind());
        assert_eq!(&bytes[..4], &record.kind().fourcc());
        assert_eq!(header.stored_len as usize, bytes.len() - CHUNK_HEADER_LEN);
        assert_eq!(header.crc32, crc32fast::hash(&bytes[CHUNK_HEADER_LEN..]));
        if !header.is_compressed() {
            assert_eq!(header.raw_len, header.stored_len);
        }

        let chunk = decode(&bytes).unwrap().expect("a chunk");
        assert_eq!(chunk.offset(), 0);
        assert_eq!(chunk.kind(), record.kind());
        assert_eq!(chunk.encoded_len(), bytes.len());
        assert_eq!(chunk.bytes(), &bytes[..]);
        assert_eq!(chunk.header(), &header);
        assert_eq!(chunk.record(), Some(&record));
        assert_eq!(chunk.into_record(), Some(record));
    }
}

#[test]
fn kinds_are_the_documented_fourccs() {
    let expected: [(&[u8; 4], ChunkKind); 7] = [
        (b"INFO", ChunkKind::INFO),
        (b"FUNC", ChunkKind::FUNCTIONS),
        (b"CTX\0", ChunkKind::CONTEXT),
        (b"MODS", ChunkKind::MODULES),
        (b"FRMC", ChunkKind::FRAME_COLUMNS),
        (b"PIPE", ChunkKind::PIPELINED),
        (b"END\0", ChunkKind::END),
    ];
    for ((fourcc, kind), record) in expected.iter().zip(every_record()) {
        assert_eq!(kind.0, u32::from_le_bytes(**fourcc));
        assert_eq!(record.kind(), *kind);
        assert!(kind.is_known());
    }
    assert!(!ChunkKind::from_fourcc(*b"XTRA").is_known());
    // Version 1's frames, still read.
    assert_eq!(ChunkKind::FRAME.fourcc(), *b"FRAM");
    assert!(ChunkKind::FRAME.is_known() && ChunkKind::FRAME.is_frame());
    assert!(!ChunkKind::PIPELINED.is_frame());
}

#[test]
fn large_frames_are_compressed_and_incompressible_payloads_are_not() {
    let big = Record::Frame(frame(1, 5_000));
    let bytes = encode(&big);
    let header = header_of(&bytes);
    assert!(header.is_compressed());
    assert_eq!(header.flags, FLAG_ZSTD);
    assert!(header.stored_len < header.raw_len);
    assert_eq!(decode(&bytes).unwrap().unwrap().into_record(), Some(big));

    // So is the function table, the largest fixed cost.
    let table = Record::Functions(functions());
    let bytes = encode(&table);
    assert_eq!(header_of(&bytes).flags, FLAG_ZSTD);
    assert_eq!(decode(&bytes).unwrap().unwrap().into_record(), Some(table));

    // Every other kind keeps LZ4.
    let batch = Record::Pipelined(PipelinedBatch {
        frame: 1,
        disjoint: false,
        times: vec![PipelinedTime { call: 3, gpu_ns: 5 }; 2_000],
    });
    let bytes = encode(&batch);
    assert_eq!(header_of(&bytes).flags, FLAG_LZ4);
    assert_eq!(decode(&bytes).unwrap().unwrap().into_record(), Some(batch));

    let noise = XorShift::new(7).bytes(300);
    let bytes = encode_chunk(ChunkKind::from_fourcc(*b"XTRA"), &noise);
    let header = header_of(&bytes);
    assert_eq!(header.flags, 0);
    assert_eq!(header.raw_len, 300);
    assert_eq!(&bytes[CHUNK_HEADER_LEN..], &noise[..]);
}

#[test]
fn empty_input_is_a_clean_end() {
    assert!(decode(&[]).unwrap().is_none());
    let mut reader = ChunkReader::new(&[][..]);
    assert!(reader.read_chunk().unwrap().is_none());
    assert!(ChunkReader::new(&[][..]).next().is_none());
}

#[test]
fn every_cut_of_a_chunk_is_truncated_at_its_start() {
    let bytes = encode(&Record::Frame(frame(3, 30)));
    for cut in 1..bytes.len() {
        match decode(&bytes[..cut]) {
            Err(SessionError::Truncated { offset: 0 }) => {}
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // Behind another chunk, the offset is where the cut chunk starts.
    let first = encode(&Record::End(end()));
    for cut in 1..bytes.len() {
        let mut stream = first.clone();
        stream.extend_from_slice(&bytes[..cut]);
        let mut reader = ChunkReader::new(&stream[..]);
        assert!(matches!(reader.next(), Some(Ok(Record::End(_)))));
        match reader.next() {
            Some(Err(SessionError::Truncated { offset })) => {
                assert_eq!(offset, first.len() as u64)
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
        assert!(reader.next().is_none(), "fused after the error");
    }
}

#[test]
fn every_flipped_payload_byte_is_a_checksum_mismatch() {
    for record in [Record::Frame(frame(2, 20)), Record::Info(info())] {
        let bytes = encode(&record);
        for i in CHUNK_HEADER_LEN..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x20;
            match decode(&bad) {
                Err(SessionError::Corrupted { offset: 0, kind }) => assert_eq!(kind, record.kind()),
                other => panic!("flip at {i}: {other:?}"),
            }
        }
    }
}

#[test]
fn absurd_lengths_are_refused_before_allocating() {
    let good = encode(&Record::End(end()));
    let mut header = header_of(&good);
    header.stored_len = u32::MAX;
    match decode(&header.to_bytes()) {
        Err(SessionError::TooLarge {
            offset: 0,
            kind,
            len,
        }) => {
            assert_eq!(kind, ChunkKind::END);
            assert_eq!(len, u64::from(u32::MAX));
        }
        other => panic!("{other:?}"),
    }

    let mut header = header_of(&good);
    header.raw_len = MAX_CHUNK_LEN + 1;
    let mut bytes = header.to_bytes().to_vec();
    bytes.extend_from_slice(&good[CHUNK_HEADER_LEN..]);
    assert!(matches!(
        decode(&bytes),
        Err(SessionError::TooLarge { len, .. }) if len == u64::from(MAX_CHUNK_LEN) + 1
    ));

    // A compressed payload claiming far more than LZ4 can expand to: refused as damaged,
    // without zero-filling the claimed size first.
    let payload = [0u8; 8];
    let header = ChunkHeader {
        kind: ChunkKind::FRAME,
        flags: FLAG_LZ4,
        raw_len: MAX_CHUNK_LEN,
        stored_len: 8,
        crc32: crc32fast::hash(&payload),
    };
    let mut bytes = header.to_bytes().to_vec();
    bytes.extend_from_slice(&payload);
    match decode(&bytes) {
        Err(SessionError::BadPayload { detail, .. }) => assert!(detail.contains("claims")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn payloads_that_do_not_decode_are_bad_payload() {
    let cases: Vec<(ChunkKind, Vec<u8>)> = vec![
        (ChunkKind::INFO, b"{}".to_vec()),
        (ChunkKind::FUNCTIONS, b"not json at all".to_vec()),
        (
            ChunkKind::END,
            br#"{"reason":"exploded","frames_captured":1,"dropped_calls":0}"#.to_vec(),
        ),
        (ChunkKind::FRAME, vec![0xff; 40]),
        (ChunkKind::FRAME_COLUMNS, vec![0xff; 40]),
        (ChunkKind::PIPELINED, vec![]),
    ];
    for (kind, payload) in cases {
        match decode(&encode_chunk(kind, &payload)) {
            Err(SessionError::BadPayload {
                offset: 0, kind: k, ..
            }) => assert_eq!(k, kind),
            other => panic!("{kind}: {other:?}"),
        }
    }

    // Uncompressed (a record too short for LZ4 to shorten), but the lengths disagree.
    let short = gpuheat_session::EndInfo {
        renderer_query: None,
        ..end()
    };
    let mut bytes = encode_chunk(ChunkKind::END, &serde_json::to_vec(&short).unwrap());
    assert_eq!(header_of(&bytes).flags, 0);
    bytes[8] ^= 1;
    assert!(matches!(
        decode(&bytes),
        Err(SessionError::BadPayload { .. })
    ));

    // Compressed data that is not LZ4.
    let mut bytes = encode(&Record::Pipelined(PipelinedBatch {
        frame: 0,
        disjoint: false,
        times: vec![PipelinedTime { call: 1, gpu_ns: 2 }; 500],
    }));
    assert!(header_of(&bytes).is_compressed());
    let stored = bytes.len() - CHUNK_HEADER_LEN;
    bytes.truncate(CHUNK_HEADER_LEN);
    bytes.extend_from_slice(&vec![0xf0; stored]);
    let crc = crc32fast::hash(&bytes[CHUNK_HEADER_LEN..]);
    bytes[16..20].copy_from_slice(&crc.to_le_bytes());
    match decode(&bytes) {
        Err(SessionError::BadPayload { detail, .. }) => {
            assert!(detail.starts_with("lz4"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn metadata_from_a_later_version_with_more_fields_still_decodes() {
    let mut json = serde_json::to_value(info()).unwrap();
    json["gpu_model"] = "from the future".into();
    json.as_object_mut().unwrap().remove("notes"); // and an older writer's lack of it
    let bytes = encode_chunk(ChunkKind::INFO, &serde_json::to_vec(&json).unwrap());
    let Some(Record::Info(got)) = decode(&bytes).unwrap().unwrap().into_record() else {
        panic!("not info")
    };
    assert_eq!(
        got,
        SessionInfo {
            notes: vec![],
            ..info()
        }
    );
}

#[test]
fn unknown_flags_fail_known_kinds_but_unknown_kinds_are_still_skipped() {
    let payload = serde_json::to_vec(&end()).unwrap();
    let header = ChunkHeader {
        kind: ChunkKind::END,
        flags: 0b100,
        raw_len: payload.len() as u32,
        stored_len: payload.len() as u32,
        crc32: crc32fast::hash(&payload),
    };
    let mut bytes = header.to_bytes().to_vec();
    bytes.extend_from_slice(&payload);
    match decode(&bytes) {
        Err(SessionError::BadPayload { detail, .. }) => assert!(detail.contains("flags")),
        other => panic!("{other:?}"),
    }
    bytes[..4].copy_from_slice(b"ZSTD");
    let chunk = decode(&bytes).unwrap().unwrap();
    assert_eq!(chunk.record(), None);
    assert_eq!(chunk.kind().to_string(), "ZSTD");
}

#[test]
fn unknown_kinds_are_skipped_by_the_iterator_and_shown_by_read_chunk() {
    let mut stream = encode(&Record::Frame(frame(0, 5)));
    let unknown_at = stream.len() as u64;
    stream.extend(encode_chunk(
        ChunkKind::from_fourcc(*b"XTRA"),
        b"a record from the future",
    ));
    stream.extend(encode(&Record::Frame(frame(1, 5))));

    let mut reader = ChunkReader::new(&stream[..]);
    let records: Vec<Record> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        records,
        vec![Record::Frame(frame(0, 5)), Record::Frame(frame(1, 5))]
    );
    assert_eq!(reader.skipped(), 1);
    assert_eq!(reader.offset(), stream.len() as u64);

    let mut reader = ChunkReader::new(&stream[..]);
    reader.read_chunk().unwrap().unwrap();
    let unknown = reader.read_chunk().unwrap().unwrap();
    assert_eq!(unknown.offset(), unknown_at);
    assert_eq!(unknown.kind(), ChunkKind::from_fourcc(*b"XTRA"));
    assert!(unknown.record().is_none());
    let (bytes, _) = unknown.into_parts();
    assert_eq!(&bytes[CHUNK_HEADER_LEN..], b"a record from the future");
    assert!(reader.read_chunk().unwrap().unwrap().record().is_some());
    assert!(reader.read_chunk().unwrap().is_none());
}

#[test]
fn read_chunk_leaves_the_reader_at_the_next_chunk() {
    let a = encode(&Record::Modules(modules()));
    let b = encode(&Record::Pipelined(pipelined(4)));
    let stream = [a.clone(), b.clone()].concat();
    let mut rest = &stream[..];
    let first = read_chunk(&mut rest, 100).unwrap().unwrap();
    assert_eq!(first.offset(), 100);
    assert_eq!(rest.len(), b.len());
    let second = read_chunk(&mut rest, 100 + a.len() as u64)
        .unwrap()
        .unwrap();
    assert_eq!(second.into_record(), Some(Record::Pipelined(pipelined(4))));
    assert!(read_chunk(&mut rest, 0).unwrap().is_none());
}

/// The live path: chunks arrive over a Unix socket in small, uneven pieces.
#[test]
fn chunks_arrive_over_a_socket_in_pieces() {
    let records = every_record();
    let stream: Vec<u8> = records.iter().flat_map(encode).collect();
    let (mut tx, rx) = UnixStream::pair().unwrap();
    let sender = std::thread::spawn(move || {
        for (i, piece) in stream.chunks(7).enumerate() {
            tx.write_all(piece).unwrap();
            if i % 16 == 0 {
                tx.flush().unwrap();
                std::thread::yield_now();
            }
        }
        // Dropping the socket is the clean end.
    });
    let mut reader = ChunkReader::new(rx);
    let mut got = Vec::new();
    while let Some(chunk) = reader.read_chunk().unwrap() {
        got.push(chunk.into_record().unwrap());
    }
    sender.join().unwrap();
    assert_eq!(got, records);
}

#[test]
fn a_sender_dying_mid_chunk_is_truncation_at_that_chunk() {
    let first = encode(&Record::Info(info()));
    let second = encode(&Record::Frame(frame(0, 50)));
    let (mut tx, rx) = UnixStream::pair().unwrap();
    let sent = [&first[..], &second[..second.len() / 2]].concat();
    let sender = std::thread::spawn(move || tx.write_all(&sent).unwrap());
    let mut reader = ChunkReader::new(rx);
    assert!(matches!(reader.next(), Some(Ok(Record::Info(_)))));
    sender.join().unwrap();
    match reader.next() {
        Some(Err(SessionError::Truncated { offset })) => assert_eq!(offset, first.len() as u64),
        other => panic!("{other:?}"),
    }
    assert!(reader.next().is_none());
    let mut rx = reader.into_inner();
    assert_eq!(rx.read(&mut [0u8; 8]).unwrap(), 0);
}

#[test]
fn errors_read_as_one_line_for_a_user() {
    let cases = [
        (
            SessionError::NotASession { reason: "bad magic".into() },
            "not a gpuheat session (bad magic)",
        ),
        (
            SessionError::Truncated { offset: 1234 },
            "session truncated at byte 1234 (the last chunk is incomplete)",
        ),
        (
            SessionError::Corrupted { offset: 1234, kind: ChunkKind::FRAME },
            "session corrupted at byte 1234: checksum mismatch in FRAM chunk",
        ),
        (
            SessionError::NewerVersion { found: 3, supported: 1 },
            "session format version 3 is newer than this gpuheat (reads up to 1)",
        ),
        (
            SessionError::TooLarge { offset: 16, kind: ChunkKind(0xdead_beef), len: 1 << 31 },
            "session corrupted at byte 16: 0xdeadbeef chunk claims 2147483648 bytes (the limit is 268435456)",
        ),
        (
            SessionError::MissingRecord { kind: ChunkKind::FUNCTIONS },
            "session incomplete: it has no FUNC record",
        ),
        (
            SessionError::Io {
                action: "read",
                path: "/tmp/x.gpuheat".into(),
                cause: std::io::Error::from_raw_os_error(5),
            },
            "cannot read /tmp/x.gpuheat: Input/output error (os error 5)",
        ),
    ];
    for (error, text) in cases {
        assert_eq!(error.to_string(), text);
        assert!(std::error::Error::source(&error).is_none());
    }
}
