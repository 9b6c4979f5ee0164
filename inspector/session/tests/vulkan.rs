//! The Vulkan layer's records (`VKRP`, `VKFR`, `LATE`), read and written as the agent does:
//! late samples join their frame's samples in call order, and values of a frame the session
//! lacks are dropped.

use gpuheat_session::{
    decode, encode, CounterValue, DrawSample, LateSamples, Record, Session, VkAttachment, VkFrame,
    VkPassBegin, VkRenderPass, VkSubmit,
};
use gpuheat_testkit::sample::{every_record, file_bytes};

fn pass() -> VkRenderPass {
    VkRenderPass {
        handle: 0x55,
        attachments: vec![VkAttachment {
            format: 44,
            samples: 1,
            load_op: 1,
            store_op: 0,
            stencil_load_op: 2,
            stencil_store_op: 1,
            initial_layout: 0,
            final_layout: 1_000_001_002,
        }],
        subpasses: 1,
    }
}

fn value(counter: u16, value: u64) -> CounterValue {
    CounterValue { counter, value }
}

#[test]
fn vulkan_records_round_trip_and_late_samples_join_their_frame() {
    let mut all = every_record();
    let frame = all
        .iter()
        .find_map(|r| match r {
            Record::Frame(f) => Some(f.clone()),
            _ => None,
        })
        .expect("a frame among the sample records");
    let vk_frame = VkFrame {
        frame: frame.index,
        begins: vec![VkPassBegin {
            call: 0,
            render_pass: 0x55,
            framebuffer: 0x66,
        }],
        submits: vec![VkSubmit {
            call: 1,
            command_buffers: vec![0xc0, 0xc1],
            recorded_before: 1,
        }],
        isolated: 0,
    };
    // One value for a call that has a sample already, one for a call that has none, and one
    // for a frame the session lacks.
    let had = frame.samples.first().map(|s| s.call).unwrap_or(0);
    let new_call = frame.calls.len() as u32 + 7;
    let late = LateSamples {
        frame: frame.index,
        samples: vec![
            DrawSample {
                call: new_call,
                values: vec![value(2, 16_384)],
            },
            DrawSample {
                call: had,
                values: vec![value(2, 65_536)],
            },
        ],
    };
    let lost = LateSamples {
        frame: frame.index + 1000,
        samples: vec![DrawSample {
            call: 0,
            values: vec![value(2, 1)],
        }],
    };
    let records = [
        Record::VkRenderPass(pass()),
        Record::VkFrame(vk_frame.clone()),
        Record::LateSamples(late),
    ];
    for (record, fourcc) in records.iter().zip([b"VKRP", b"VKFR", b"LATE"]) {
        let chunk = encode(record);
        assert_eq!(&chunk[..4], fourcc);
        assert_eq!(
            decode(&chunk).unwrap().unwrap().into_record().as_ref(),
            Some(record)
        );
    }
    all.extend(records);
    all.push(Record::LateSamples(lost));
    let s = Session::from_reader(&file_bytes(&all)[..]).unwrap();
    assert_eq!(s.vk_render_passes, vec![pass()]);
    assert_eq!(s.vk_frames, vec![vk_frame]);
    let f = s.frames.iter().find(|f| f.index == frame.index).unwrap();
    let calls: Vec<u32> = f.samples.iter().map(|x| x.call).collect();
    let mut sorted = calls.clone();
    sorted.sort();
    assert_eq!(calls, sorted, "samples stay in call order");
    let of = |call: u32| f.samples.iter().find(|x| x.call == call).unwrap();
    assert_eq!(of(new_call).values, vec![value(2, 16_384)]);
    assert!(of(had).values.contains(&value(2, 65_536)));
    assert_eq!(s.frames.len(), frame_count(&all));
}

fn frame_count(records: &[Record]) -> usize {
    records
        .iter()
        .filter(|r| matches!(r, Record::Frame(_)))
        .count()
}

#[test]
fn gl_sessions_have_no_vulkan_records() {
    let s = Session::from_reader(&file_bytes(&every_record())[..]).unwrap();
    assert!(s.vk_render_passes.is_empty() && s.vk_frames.is_empty());
}
