//! Frames in columns (`FRMC`, format version 2): every frame comes back as it went in, and
//! damaged payloads are errors that say where, never panics.

use gpuheat_session::columns::decode_frame;
use gpuheat_session::*;
use gpuheat_testkit::sample::*;
use gpuheat_testkit::{Scratch, XorShift};

fn payload(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::new();
    FrameEncoder::default().encode(frame, &mut out);
    out
}

fn call(func: u16, thread: u32, context: u64, begin_ns: u64, args: Vec<u64>) -> Call {
    Call {
        func,
        thread,
        context,
        begin_ns,
        duration_ns: 50,
        cpu_ns: 50,
        args,
        ret: None,
        callsite: 0x5555_0000_1234,
    }
}

/// Frames that exercise every prediction: interleaved threads and contexts, time going
/// backwards across threads, extreme values, argument counts that change for a function,
/// return values, no call site, samples.
fn edge_frames() -> Vec<Frame> {
    let empty = Frame {
        index: 0,
        begin_ns: 0,
        end_ns: 0,
        calls: Vec::new(),
        samples: Vec::new(),
    };
    let mut interleaved = Vec::new();
    for i in 0..40u64 {
        let thread = [100, 200, 100, 300][i as usize % 4];
        let context = [0xAAAA_0000, 0, 0xBBBB_0000][i as usize % 3];
        // Another thread's call may have begun before this one's predecessor returned.
        let begin = 10_000 + i * 90 - (i % 4) * 120;
        let mut c = call((i % 5) as u16, thread, context, begin, vec![i, 7, i * i]);
        c.cpu_ns = if i % 3 == 0 { 12 } else { c.duration_ns };
        c.duration_ns += i * 3;
        if i % 3 != 0 {
            c.cpu_ns = c.duration_ns;
        }
        c.ret = (i % 7 == 0).then_some(i << 40);
        c.callsite = [0, 0x7f00_0000_1000, 0x5555_0000_2000][i as usize % 3];
        interleaved.push(c);
    }
    let interleaved = Frame {
        index: 7,
        begin_ns: 9_000,
        end_ns: 20_000,
        calls: interleaved,
        samples: vec![
            DrawSample {
                call: 3,
                values: vec![CounterValue {
                    counter: 2,
                    value: u64::MAX,
                }],
            },
            DrawSample {
                call: 39,
                values: Vec::new(),
            },
        ],
    };
    let max = u64::MAX;
    let extremes = Frame {
        index: max,
        begin_ns: max,
        end_ns: 0,
        calls: vec![
            Call {
                func: u16::MAX,
                thread: u32::MAX,
                context: max,
                begin_ns: max,
                duration_ns: max,
                cpu_ns: 0,
                args: vec![max, 0, max, 1 << 63],
                ret: Some(max),
                callsite: max,
            },
            Call {
                func: u16::MAX,
                thread: 0,
                context: 0,
                begin_ns: 0,
                duration_ns: 0,
                cpu_ns: max,
                // Fewer arguments than the previous call of the function, then more.
                args: vec![0],
                ret: Some(0),
                callsite: 0,
            },
            Call {
                func: u16::MAX,
                thread: u32::MAX,
                context: 1,
                begin_ns: max / 2,
                duration_ns: 1,
                cpu_ns: 1,
                args: (0..40).map(|k| max - k).collect(),
                ret: None,
                callsite: max,
            },
            Call {
                func: 0,
                thread: 1,
                context: max - 1,
                begin_ns: 3,
                duration_ns: max - 2,
                cpu_ns: 5,
                args: Vec::new(),
                ret: None,
                callsite: 0,
            },
        ],
        samples: Vec::new(),
    };
    vec![empty, interleaved, extremes, frame(3, 500)]
}

#[test]
fn frames_round_trip_through_columns_and_chunks() {
    let mut encoder = FrameEncoder::default();
    let mut out = Vec::new();
    // One encoder for all of them, as a writer keeps it: nothing of one frame leaks into the
    // next.
    for f in edge_frames().iter().chain(edge_frames().iter().rev()) {
        encoder.encode(f, &mut out);
        assert_eq!(&decode_frame(&out).unwrap(), f, "frame {}", f.index);
        let chunk = encode(&Record::Frame(f.clone()));
        assert_eq!(&chunk[..4], b"FRMC");
        let decoded = decode(&chunk).unwrap().unwrap();
        assert_eq!(decoded.kind(), ChunkKind::FRAME_COLUMNS);
        assert!(decoded.kind().is_frame());
        assert_eq!(decoded.record(), Some(&Record::Frame(f.clone())));
    }
}

#[test]
fn frame_chunks_are_zstd_compressed_and_much_smaller_than_postcard() {
    let f = frame(1, 5_000);
    let chunk = encode(&Record::Frame(f.clone()));
    let header = ChunkHeader::parse(chunk[..CHUNK_HEADER_LEN].try_into().unwrap());
    assert_eq!(header.flags, FLAG_ZSTD);
    assert!(header.is_compressed());
    let postcard_lz4 = encode_chunk(ChunkKind::FRAME, &postcard::to_allocvec(&f).unwrap());
    assert!(
        chunk.len() * 2 < postcard_lz4.len(),
        "columns {} bytes, postcard+LZ4 {}",
        chunk.len(),
        postcard_lz4.len()
    );
}

#[test]
fn every_truncation_and_byte_flip_of_a_payload_is_an_error_or_a_frame() {
    for f in edge_frames().iter().take(3) {
        let good = payload(f);
        for len in 0..good.len() {
            // The samples at the end are a postcard sequence: cutting into it always fails;
            // cutting anywhere before it leaves a column short.
            let err = decode_frame(&good[..len]).expect_err("a truncated payload");
            assert!(!err.is_empty());
        }
        for i in 0..good.len() {
            for bit in [0x01, 0x80] {
                let mut bad = good.clone();
                bad[i] ^= bit;
                let _ = decode_frame(&bad);
            }
        }
    }
}

#[test]
fn random_payloads_never_panic() {
    let mut rng = XorShift::new(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let len = rng.below(200) as usize;
        let mut bytes = rng.bytes(len);
        // Small leading values reach the columns more often than random ones would.
        for b in bytes.iter_mut().take(12) {
            if rng.below(2) == 0 {
                *b &= 0x0f;
            }
        }
        let _ = decode_frame(&bytes);
    }
}

#[test]
fn a_damaged_columnar_chunk_is_a_bad_payload_naming_its_kind() {
    let f = frame(2, 50);
    let raw = payload(&f);
    // Checksummed, so the payload decoder (not the CRC) finds the damage.
    let short = encode_chunk(ChunkKind::FRAME_COLUMNS, &raw[..raw.len() / 2]);
    match decode(&short) {
        Err(SessionError::BadPayload { kind, detail, .. }) => {
            assert_eq!(kind, ChunkKind::FRAME_COLUMNS);
            assert!(
                detail.contains("column") || detail.contains("ends inside"),
                "{detail}"
            );
        }
        other => panic!("{other:?}"),
    }

    // A zstd frame cut short, its checksum recomputed.
    let chunk = encode(&Record::Frame(f));
    let header = ChunkHeader::parse(chunk[..CHUNK_HEADER_LEN].try_into().unwrap());
    let stored = &chunk[CHUNK_HEADER_LEN..CHUNK_HEADER_LEN + header.stored_len as usize / 2];
    let cut = ChunkHeader {
        stored_len: stored.len() as u32,
        crc32: crc32fast::hash(stored),
        ..header
    };
    let mut bytes = cut.to_bytes().to_vec();
    bytes.extend_from_slice(stored);
    match decode(&bytes) {
        Err(SessionError::BadPayload { kind, detail, .. }) => {
            assert_eq!(kind, ChunkKind::FRAME_COLUMNS);
            assert!(detail.starts_with("zstd"), "{detail}");
        }
        other => panic!("{other:?}"),
    }

    // The raw length in the header disagrees with what the frame expands to.
    let longer = ChunkHeader {
        raw_len: header.raw_len + 1,
        ..header
    };
    let mut bytes = longer.to_bytes().to_vec();
    bytes.extend_from_slice(&chunk[CHUNK_HEADER_LEN..]);
    match decode(&bytes) {
        Err(SessionError::BadPayload { detail, .. }) => {
            assert!(detail.contains("header says"), "{detail}");
        }
        other => panic!("{other:?}"),
    }

    // Both compressors at once is no chunk any writer makes.
    let both = ChunkHeader {
        flags: FLAG_LZ4 | FLAG_ZSTD,
        ..header
    };
    let mut bytes = both.to_bytes().to_vec();
    bytes.extend_from_slice(&chunk[CHUNK_HEADER_LEN..]);
    assert!(matches!(
        decode(&bytes),
        Err(SessionError::BadPayload { .. })
    ));
}

#[test]
fn version_1_files_with_postcard_frames_still_open() {
    let dir = Scratch::new("gpuheat-session-test", "version-1");
    let path = dir.join("v1.gpuheat");
    let frames = [frame(5, 30), frame(6, 0), frame(7, 300)];
    let mut bytes = FileHeader {
        version: 1,
        flags: 0,
    }
    .to_bytes()
    .to_vec();
    for r in [
        Record::Info(info()),
        Record::Functions(functions()),
        Record::Context(context()),
        Record::Modules(modules()),
    ] {
        bytes.extend(encode(&r));
    }
    for f in &frames {
        // What version 1 wrote: the Frame record's postcard bytes, LZ4 when smaller.
        let chunk = encode_chunk(ChunkKind::FRAME, &postcard::to_allocvec(f).unwrap());
        assert_eq!(&chunk[..4], b"FRAM");
        bytes.extend(chunk);
    }
    bytes.extend(encode(&Record::End(end())));
    std::fs::write(&path, &bytes).unwrap();

    assert_eq!(FileHeader::parse(&bytes).unwrap().version, 1);
    let s = Session::open(&path).unwrap();
    assert_eq!(s.frames, frames);
    assert_eq!(s.truncated_at, None);
    assert_eq!(s.end, Some(end()));
}
