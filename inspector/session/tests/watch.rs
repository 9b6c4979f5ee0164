//! The `TRIG` and `WTCH` records of a watch (`gpuheat attach --trigger`), read and written as
//! the agent does, and absent from captures without harm.

use gpuheat_session::{decode, encode, Record, Session, TriggerHit, WatchStatus};
use gpuheat_testkit::fixture;
use gpuheat_testkit::sample::{every_record, file_bytes};

fn hit() -> TriggerHit {
    TriggerHit {
        number: 1,
        frame: 29,
        rule: "frame-ms>35".into(),
        value_ns: 144_600_000,
        kept_first: 20,
        kept_last: 30,
        full_first: 31,
        full_frames: 3,
    }
}

#[test]
fn trigger_and_watch_records_round_trip_and_land_in_the_session() {
    let status = |frames_watched| WatchStatus {
        frames_watched,
        ring_frames: 10,
        ring_capacity: 10,
        ring_bytes: 12_345,
        ring_limit_bytes: 64 << 20,
        triggers: 1,
    };
    let records = [Record::Trigger(hit()), Record::Watch(status(60))];
    for (record, fourcc) in records.iter().zip([b"TRIG", b"WTCH"]) {
        let chunk = encode(record);
        assert_eq!(&chunk[..4], fourcc);
        assert_eq!(
            decode(&chunk).unwrap().unwrap().into_record().as_ref(),
            Some(record)
        );
    }
    let mut all = every_record();
    all.push(Record::Watch(status(5)));
    all.extend(records);
    let s = Session::from_reader(&file_bytes(&all)[..]).unwrap();
    assert_eq!(s.triggers, vec![hit()]);
    // The last status has the totals.
    assert_eq!(s.watch, Some(status(60)));
}

#[test]
fn a_trigger_says_which_frames_are_watched_and_which_full() {
    let h = hit();
    assert!(!h.keeps_watched(19));
    assert!(h.keeps_watched(20) && h.keeps_watched(29) && h.keeps_watched(30));
    assert!(!h.keeps_watched(31));
    assert!(!h.is_full(30));
    assert!(h.is_full(31) && h.is_full(33));
    assert!(!h.is_full(34));
}

#[test]
fn captures_have_no_trigger_and_no_watch() {
    for v in ["v1-hot_spot", "v2-hot_spot", "v3-hot_spot"] {
        let s = Session::open(fixture(v)).unwrap();
        assert!(s.triggers.is_empty() && s.watch.is_none(), "{v}");
    }
}
