//! The `WARM` record (a captured frame the agent's own first-time work made unsteady) and
//! `SessionInfo::warmup_frames`, read and written as the agent does, and absent from older
//! sessions without harm.

use gpuheat_session::{decode, encode, Record, Session, SessionInfo, WarmUp};
use gpuheat_testkit::fixture;
use gpuheat_testkit::sample::{every_record, file_bytes, info};

fn warm(frame: u64) -> WarmUp {
    WarmUp {
        frame,
        reasons: vec!["measured context 0x5555 (its counters and brackets)".into()],
    }
}

#[test]
fn a_warm_up_mark_round_trips_and_lands_in_the_session() {
    let record = Record::WarmUp(warm(11));
    let chunk = encode(&record);
    assert_eq!(&chunk[..4], b"WARM");
    assert_eq!(
        decode(&chunk).unwrap().unwrap().into_record(),
        Some(record.clone())
    );
    let mut records = every_record();
    records.push(record);
    let s = Session::from_reader(&file_bytes(&records)[..]).unwrap();
    assert_eq!(s.warmup, vec![warm(11)]);
}

#[test]
fn sessions_written_before_the_warm_up_read_as_none() {
    // An INFO record as agents before the field wrote it.
    let mut json = serde_json::to_value(info()).unwrap();
    json.as_object_mut().unwrap().remove("warmup_frames");
    let old: SessionInfo = serde_json::from_value(json).unwrap();
    assert_eq!(old.warmup_frames, None);
    // A mark with no reasons (the field is optional too).
    let bare: WarmUp = serde_json::from_str(r#"{"frame":3}"#).unwrap();
    assert_eq!(bare.reasons, Vec::<String>::new());
    for v in ["v1-hot_spot", "v2-hot_spot", "v3-hot_spot"] {
        let s = Session::open(fixture(v)).unwrap();
        assert!(s.warmup.is_empty(), "{v}");
        assert_eq!(s.info.warmup_frames, None, "{v}");
    }
}
