//! The `AGNT` record (the agent's waits for the GPU in a captured frame, and where its own
//! time went), read and written as the agent does, and absent from older sessions without
//! harm.

use gpuheat_session::{decode, encode, AgentFrame, AgentTimes, PaintGpu, Record, Session};
use gpuheat_testkit::fixture;
use gpuheat_testkit::sample::{every_record, file_bytes};

#[test]
fn an_agent_frame_round_trips_and_lands_in_the_session() {
    let agent = AgentFrame {
        frame: 11,
        waits: 2002,
        deferred: 0,
        own: AgentTimes {
            counters_ns: 12_500_000,
            results_ns: 3_500_000,
            paint_ns: 1,
            maps_ns: 2,
            geometry_ns: 3,
            paint_gpu: Some(PaintGpu {
                replay_ns: 2_684_000,
                weight_ns: 21_490_000,
                untimed: 0,
            }),
        },
    };
    let record = Record::AgentFrame(agent.clone());
    let chunk = encode(&record);
    assert_eq!(&chunk[..4], b"AGNT");
    assert_eq!(
        decode(&chunk).unwrap().unwrap().into_record(),
        Some(record.clone())
    );
    let mut records = every_record();
    records.push(record);
    let s = Session::from_reader(&file_bytes(&records)[..]).unwrap();
    assert_eq!(s.agent_frames, vec![agent]);
}

#[test]
fn a_record_of_an_agent_that_did_not_defer_reads_as_none_deferred() {
    // An AGNT record as the agent wrote it before deferred timing: no `deferred` field.
    let json = br#"{"frame":3,"waits":22}"#;
    let old: AgentFrame = serde_json::from_slice(json).unwrap();
    assert_eq!(
        old,
        AgentFrame {
            frame: 3,
            waits: 22,
            deferred: 0,
            own: AgentTimes::default(),
        }
    );
}

#[test]
fn a_record_of_an_agent_that_did_not_time_itself_reads_as_zero_times() {
    // An AGNT record as the agent wrote it before it timed its own work: no `own` field.
    let json = br#"{"frame":3,"waits":1,"deferred":22}"#;
    let old: AgentFrame = serde_json::from_slice(json).unwrap();
    assert_eq!((old.deferred, old.own.total_ns()), (22, 0));
}

#[test]
fn times_without_the_heat_passes_gpu_time_read_as_none_and_write_without_it() {
    // As an agent before the heat passes were timed on the GPU wrote it.
    let json = br#"{"frame":3,"waits":1,"deferred":0,"own":{"paint_ns":5}}"#;
    let old: AgentFrame = serde_json::from_slice(json).unwrap();
    assert_eq!((old.own.paint_ns, old.own.paint_gpu), (5, None));
    let written = serde_json::to_string(&old).unwrap();
    assert!(!written.contains("paint_gpu"), "{written}");
}

#[test]
fn sessions_of_agents_that_did_not_count_have_none() {
    for v in ["v1-hot_spot", "v2-hot_spot", "v3-hot_spot"] {
        let s = Session::open(fixture(v)).unwrap();
        assert!(s.agent_frames.is_empty(), "{v}");
    }
}
