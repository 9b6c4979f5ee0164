//! Heat map records (`HEAT`, `HMIS`): encoding, validation on decode, and a session file that
//! holds them.

use gpuheat_session::*;
use gpuheat_testkit::sample::*;
use gpuheat_testkit::Scratch;

fn heat_map(frame: u64, width: u32, height: u32, with_colour: bool) -> HeatMap {
    let n = (width * height) as usize;
    HeatMap {
        frame,
        context: 0x5555_0000_1234,
        width,
        height,
        heat: (0..n).map(|i| i as f32 * 0.5 + 0.25).collect(),
        overdraw: (0..n).map(|i| (i % 5) as u32).collect(),
        colour: if with_colour {
            (0..4 * n).map(|i| (i * 7) as u8).collect()
        } else {
            Vec::new()
        },
        draws: vec![
            DrawCoverage {
                call: 3,
                fragments: n as u64,
                time_ns: 1_234_567,
                bbox: [0, 0, width, height],
            },
            DrawCoverage {
                call: 9,
                fragments: 0,
                time_ns: 42,
                bbox: [0, 0, 0, 0],
            },
        ],
    }
}

fn missing(frame: u64) -> HeatMissing {
    HeatMissing {
        frame,
        context: 0x5555_0000_1234,
        reason: "GLES 2 context without float render targets".into(),
    }
}

/// Encodes a `HEAT` chunk from a map without checking it, as a damaged or hostile writer could.
fn raw_heat_chunk(map: &HeatMap) -> Vec<u8> {
    encode_chunk(ChunkKind::HEAT, &postcard::to_allocvec(map).unwrap())
}

#[test]
fn kinds_are_heat_and_hmis() {
    assert_eq!(&ChunkKind::HEAT.fourcc(), b"HEAT");
    assert_eq!(&ChunkKind::HEAT_MISSING.fourcc(), b"HMIS");
    assert!(ChunkKind::HEAT.is_known());
    assert!(ChunkKind::HEAT_MISSING.is_known());
    assert_eq!(
        Record::Heat(heat_map(0, 1, 1, false)).kind(),
        ChunkKind::HEAT
    );
    assert_eq!(
        Record::HeatMissing(missing(0)).kind(),
        ChunkKind::HEAT_MISSING
    );
}

#[test]
fn heat_records_round_trip_through_encode_and_decode() {
    for record in [
        Record::Heat(heat_map(4, 16, 9, true)),
        Record::Heat(heat_map(5, 7, 3, false)),
        Record::Heat(heat_map(6, 0, 0, false)),
        Record::HeatMissing(missing(7)),
    ] {
        let bytes = encode(&record);
        assert_eq!(&bytes[..4], &record.kind().fourcc());
        let chunk = decode(&bytes).unwrap().expect("a chunk");
        assert_eq!(chunk.into_record(), Some(record));
    }
}

#[test]
fn hmis_is_json_and_heat_is_compressed_when_uniform() {
    let bytes = encode(&Record::HeatMissing(missing(2)));
    let header = ChunkHeader::parse(bytes[..CHUNK_HEADER_LEN].try_into().unwrap());
    if !header.is_compressed() {
        let json: serde_json::Value = serde_json::from_slice(&bytes[CHUNK_HEADER_LEN..]).unwrap();
        assert_eq!(json["frame"], 2);
    }

    let mut map = heat_map(1, 256, 256, true);
    map.heat.iter_mut().for_each(|h| *h = 17.5);
    map.overdraw.iter_mut().for_each(|o| *o = 3);
    map.colour.iter_mut().for_each(|c| *c = 200);
    let bytes = encode(&Record::Heat(map.clone()));
    let header = ChunkHeader::parse(bytes[..CHUNK_HEADER_LEN].try_into().unwrap());
    assert!(header.is_compressed());
    assert!(bytes.len() < 256 * 256 / 4, "{} bytes", bytes.len());
    assert_eq!(
        decode(&bytes).unwrap().unwrap().into_record(),
        Some(Record::Heat(map))
    );
}

#[test]
fn inconsistent_maps_are_bad_payloads() {
    let good = heat_map(1, 8, 4, true);
    assert_eq!(good.validate(), Ok(()));
    let mut cases = Vec::new();
    let mut m = good.clone();
    m.heat.pop();
    cases.push((m, "heat values"));
    let mut m = good.clone();
    m.overdraw.push(1);
    cases.push((m, "overdraw values"));
    let mut m = good.clone();
    m.colour.truncate(4 * 8 * 4 - 4);
    cases.push((m, "colour bytes"));
    let mut m = good.clone();
    m.width = 9;
    cases.push((m, "heat values"));
    // Claims more than 64M pixels; the buffers are small, so only the size check catches it.
    let mut m = heat_map(1, 0, 0, false);
    m.width = 8193;
    m.height = 8192;
    cases.push((m, "exceeds"));

    for (map, what) in cases {
        assert!(map.validate().unwrap_err().contains(what), "{what}");
        match decode(&raw_heat_chunk(&map)) {
            Err(SessionError::BadPayload { kind, detail, .. }) => {
                assert_eq!(kind, ChunkKind::HEAT);
                assert!(detail.contains(what), "{detail}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    // The largest allowed size passes the size check (and then fails on the buffers).
    let mut m = heat_map(1, 0, 0, false);
    m.width = 8192;
    m.height = 8192;
    assert!(m.validate().unwrap_err().contains("heat values"));
}

#[test]
fn a_session_file_keeps_heat_maps_and_missing_ones_in_order() {
    let dir = Scratch::new("gpuheat-session-test", "heat-session");
    let path = dir.join("s.gpuheat");
    let mut records = every_record();
    records.push(Record::Heat(heat_map(11, 32, 24, true)));
    records.push(Record::HeatMissing(missing(12)));
    records.push(Record::Heat(heat_map(13, 5, 5, false)));
    let mut writer = SessionWriter::create(&path).unwrap();
    for r in &records {
        writer.append(r).unwrap();
    }
    writer.finish().unwrap();

    let s = Session::open(&path).unwrap();
    assert_eq!(s.truncated_at, None);
    assert_eq!(
        s.heat,
        vec![heat_map(11, 32, 24, true), heat_map(13, 5, 5, false)]
    );
    assert_eq!(s.heat_missing, vec![missing(12)]);
    assert_eq!(s, Session::from_records(records).unwrap());

    // A session without them reads as before, with both lists empty.
    let s = Session::from_records(every_record()).unwrap();
    assert!(s.heat.is_empty() && s.heat_missing.is_empty());
}

#[test]
fn a_damaged_heat_map_fails_strict_open_and_is_cut_off_by_lenient_open() {
    let dir = Scratch::new("gpuheat-session-test", "heat-damaged");
    let path = dir.join("s.gpuheat");
    let mut bytes = file_bytes(&every_record());
    let good_len = bytes.len() as u64;
    let mut bad = heat_map(3, 4, 4, false);
    bad.overdraw.clear();
    bytes.extend_from_slice(&raw_heat_chunk(&bad));
    std::fs::write(&path, &bytes).unwrap();

    match Session::open(&path) {
        Err(SessionError::BadPayload { offset, kind, .. }) => {
            assert_eq!(offset, good_len);
            assert_eq!(kind, ChunkKind::HEAT);
        }
        other => panic!("{other:?}"),
    }
    let s = Session::open_lenient(&path).unwrap();
    assert_eq!(s.truncated_at, Some(good_len));
    assert!(s.heat.is_empty());
}
