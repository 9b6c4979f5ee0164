//! The checklist's rules over calls on small synthetic sessions: each fires on its trigger,
//! with the trigger's calls as evidence, and stays quiet just below its threshold (or in
//! frame 0, which holds a launched program's set-up).

use gpuheat_analysis::analyse;
use gpuheat_analysis::checklist::{check, Finding, Severity};
use gpuheat_session::Session;
use gpuheat_testkit::{FrameBuilder, SessionBuilder};

const TEXTURE_2D: u64 = 0x0DE1;
const RGBA: u64 = 0x1908;
const RGBA8: u64 = 0x8058;
const UNSIGNED_BYTE: u64 = 0x1401;
const ETC2_RGBA8: u64 = 0x9278;
const VIEWPORT: u64 = 0x0BA2;
const TRIANGLES: u64 = 4;
const TRIANGLE_STRIP: u64 = 5;
const DATA: u64 = 0x7000_0000;

fn of(s: &Session, rule: &str) -> Vec<Finding> {
    check(s, &analyse(s))
        .into_iter()
        .filter(|f| f.rule == rule)
        .collect()
}

/// Frames 0..n, each built by `build` with its index.
fn frames(n: u64, build: impl Fn(&mut FrameBuilder, u64)) -> Session {
    let mut b = SessionBuilder::new().frame_index(0);
    for i in 0..n {
        b = b.frame(|f| {
            build(f, i);
            f.draw(1000);
        });
    }
    b.build()
}

fn tex_image(f: &mut FrameBuilder, w: u64, h: u64, internal: u64, pixels: u64) -> u32 {
    f.call(
        "glTexImage2D",
        &[
            TEXTURE_2D,
            0,
            internal,
            w,
            h,
            0,
            RGBA,
            UNSIGNED_BYTE,
            pixels,
        ],
    )
}

#[test]
fn state_queries_in_frames_are_sync_calls_and_set_up_queries_are_not() {
    let mut s = frames(3, |f, i| {
        f.call("glGetIntegerv", &[VIEWPORT, DATA]);
        if i == 2 {
            for _ in 0..9 {
                f.call("glGetError", &[]);
            }
        }
    });
    // 10 ms frames: one 1 µs query is below 1% of the frame.
    for f in &mut s.frames {
        f.end_ns = f.begin_ns + 10_000_000;
    }
    let found = of(&s, "sync-calls");
    let by_frame: Vec<(u64, u64, Severity)> = found
        .iter()
        .map(|f| (f.frame, f.evidence.count, f.severity))
        .collect();
    // Frame 0 is set-up; one query is info, ten a warning.
    assert_eq!(
        by_frame,
        vec![(1, 1, Severity::Info), (2, 10, Severity::Warning)]
    );
    assert_eq!(found[0].evidence.calls, vec![0]);
    assert!(
        found[1].title.contains("glGetError ×9, glGetIntegerv ×1"),
        "{}",
        found[1].title
    );
}

#[test]
fn texture_uploads_during_frames_count_their_bytes() {
    let s = frames(2, |f, _| {
        tex_image(f, 128, 128, RGBA8, DATA);
        f.call(
            "glTexSubImage2D",
            &[TEXTURE_2D, 0, 0, 0, 16, 8, RGBA, UNSIGNED_BYTE, DATA],
        );
        // Storage without data uploads nothing.
        tex_image(f, 64, 64, RGBA8, 0);
    });
    // The bytes each upload read, as the agent records them (UPLD).
    let mut s = s;
    for frame in [0, 1] {
        let upload = |call, bytes| gpuheat_session::Upload {
            call,
            bytes,
            hash: Some(u64::from(call) + 10 * frame),
            unhashed: None,
        };
        s.uploads.push(gpuheat_session::FrameUploads {
            frame,
            uploads: vec![upload(0, 128 * 128 * 4), upload(1, 16 * 8 * 4)],
        });
    }
    let found = of(&s, "texture-upload-in-frame");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].frame, 1);
    assert_eq!(found[0].evidence.calls, vec![0, 1]);
    let bytes = 128 * 128 * 4 + 16 * 8 * 4;
    assert!(found[0]
        .evidence
        .values
        .contains(&("bytes".into(), bytes.to_string())));
}

#[test]
fn large_uncompressed_colour_textures_are_found_and_small_or_compressed_ones_are_not() {
    let s = frames(1, |f, _| {
        tex_image(f, 256, 256, RGBA8, DATA); // 65,536 texels: the threshold.
        tex_image(f, 256, 255, RGBA, DATA); // Just below.
        tex_image(f, 512, 512, RGBA8, 0); // A render target: no data.
        f.call(
            "glCompressedTexImage2D",
            &[TEXTURE_2D, 0, ETC2_RGBA8, 512, 512, 0, 262_144, DATA],
        );
    });
    let found = of(&s, "uncompressed-textures");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].call, Some(0));
    assert!(found[0].title.contains("GL_RGBA8"), "{}", found[0].title);
}

#[test]
fn objects_created_and_deleted_in_a_frame_are_churn_and_created_alone_are_not() {
    let s = frames(3, |f, i| {
        f.call("glGenTextures", &[1, DATA]);
        if i == 2 {
            f.call("glDeleteTextures", &[1, DATA]);
        }
        f.call("glGenBuffers", &[1, DATA]);
    });
    let found = of(&s, "objects-per-frame");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].frame, 2);
    assert_eq!(found[0].evidence.calls, vec![0, 1]);
    assert!(found[0].title.starts_with("textures created and deleted"));
}

#[test]
fn compiles_during_frames_are_found_and_set_up_compiles_are_not() {
    let s = frames(2, |f, _| {
        let c = f.call("glCompileShader", &[3]);
        f.timed(c, 2_000_000, 2_000_000);
        f.call("glLinkProgram", &[4]);
    });
    let found = of(&s, "compile-in-frame");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].frame, 1);
    assert_eq!(found[0].evidence.count, 2);
    assert!(found[0].cost.as_ref().unwrap().ns >= 2_000_000);
}

#[test]
fn a_first_draw_far_above_its_later_ones_is_a_hitch_and_just_below_is_not() {
    // The draw from call site 0x1234 first appears in frame 1 at `first` ns of CPU time, then
    // takes 100 µs in frames 2..=4.
    let session = |first: u64| {
        frames(5, |f, i| {
            if i >= 1 {
                let d = f.draw(1000);
                f.at(d, 0x1234);
                let cpu = if i == 1 { first } else { 100_000 };
                f.timed(d, cpu, cpu);
            }
        })
    };
    let found = of(&session(2_000_000), "first-use-compile");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].frame, found[0].call), (1, Some(0)));
    // 9.9× the later median, and 20× but under 0.25 ms above it.
    assert!(of(&session(990_000), "first-use-compile").is_empty());
    let small = frames(5, |f, i| {
        if i >= 1 {
            let d = f.draw(1000);
            f.at(d, 0x1234);
            let cpu = if i == 1 { 200_000 } else { 10_000 };
            f.timed(d, cpu, cpu);
        }
    });
    assert!(of(&small, "first-use-compile").is_empty());
}

#[test]
fn long_non_indexed_triangle_lists_are_found_and_strips_are_not() {
    let s = frames(2, |f, _| {
        f.call("glDrawArrays", &[TRIANGLES, 0, 96]);
        f.call("glDrawArrays", &[TRIANGLES, 0, 93]);
        f.call("glDrawArrays", &[TRIANGLE_STRIP, 0, 3000]);
    });
    let found = of(&s, "no-strips-or-indices");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].evidence.calls, vec![0]);
}

#[test]
fn a_list_whose_recorded_positions_do_not_repeat_is_left_alone() {
    // 300 vertices, each distinct: indices would save nothing.
    let distinct: Vec<[f32; 4]> = (0..300).map(|i| [i as f32, 0.0, 0.0, 1.0]).collect();
    // 300 vertices, half repeating earlier ones.
    let shared: Vec<[f32; 4]> = (0..300)
        .map(|i| [(i % 150) as f32, 0.0, 0.0, 1.0])
        .collect();
    let s = frames(2, |f, _| {
        let a = f.call("glDrawArrays", &[TRIANGLES, 0, 300]);
        f.geometry(a, distinct.clone());
        let b = f.call("glDrawArrays", &[TRIANGLES, 0, 300]);
        f.geometry(b, shared.clone());
    });
    let found = of(&s, "no-strips-or-indices");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].evidence.calls, vec![1]);
}

#[test]
fn a_read_back_uploaded_into_a_texture_of_its_size_is_render_to_texture() {
    let s = frames(2, |f, _| {
        f.call("glReadPixels", &[0, 0, 64, 32, RGBA, UNSIGNED_BYTE, DATA]);
        f.call(
            "glTexSubImage2D",
            &[TEXTURE_2D, 0, 0, 0, 64, 16, RGBA, UNSIGNED_BYTE, DATA],
        );
        f.call(
            "glTexSubImage2D",
            &[TEXTURE_2D, 0, 0, 0, 64, 32, RGBA, UNSIGNED_BYTE, DATA],
        );
    });
    let found = of(&s, "readback-rtt");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].evidence.calls, vec![0, 2]);
}

#[test]
fn frames_with_the_same_calls_and_arguments_are_identical_and_any_change_is_not() {
    // Frames 1 and 2 are the same; frame 3 sets another value.
    let s = frames(4, |f, i| {
        let v = if i == 3 { 2.0f32 } else { 1.0 };
        f.call("glUniform1f", &[0, u64::from(v.to_bits())]);
    });
    let found = of(&s, "identical-frames");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].frame, 2);
}

#[test]
fn identical_frames_cost_what_the_frame_costs_the_program_not_the_capture() {
    // Full mode: each frame's work calls took 1 ms and 3 ms measured alone, whatever the
    // capture stretched the frame to: the repeat cost 4 ms of GPU time.
    let s = frames(3, |f, _| {
        f.draw(1_000_000);
        f.draw(3_000_000);
    });
    let found = of(&s, "identical-frames");
    assert_eq!(found.len(), 1, "frame 0 is the set-up's: {found:?}");
    let cost = found[0].cost.as_ref().unwrap();
    assert_eq!(cost.ns, 4_001_000, "{cost:?}");
    assert!(cost.measured.contains("one at a time"), "{cost:?}");

    // A timeline capture where pipelined timestamps mean a call's own cost: their sum.
    let s = SessionBuilder::new()
        .mode(gpuheat_session::CaptureMode::Timeline)
        .frame_index(1)
        .frame(|f| {
            let d = f.draw_untimed();
            f.pipelined(d, 700_000);
        })
        .frame(|f| {
            let d = f.draw_untimed();
            f.pipelined(d, 700_000);
        })
        .build();
    let found = of(&s, "identical-frames");
    assert_eq!(found.len(), 1, "{found:?}");
    let cost = found[0].cost.as_ref().unwrap();
    assert_eq!(cost.ns, 700_000, "{cost:?}");
    assert!(cost.measured.contains("pipelined"), "{cost:?}");
}

#[test]
fn frames_passing_data_the_capture_cannot_see_are_not_called_identical() {
    let s = frames(3, |f, _| {
        f.call("glUniform4fv", &[0, 1, DATA]);
    });
    // The testing table's pointers are not `const`: the same frames are identical…
    assert_eq!(of(&s, "identical-frames").len(), 1);
    // …and a real session's `const GLfloat *value` makes them unknown.
    let mut s = s;
    for f in &mut s.functions.functions {
        for p in &mut f.params {
            if p.name == "value" {
                p.c_type = "const GLfloat *".into();
            }
        }
    }
    assert!(of(&s, "identical-frames").is_empty());
}

#[test]
fn a_draw_first_seen_in_the_captures_first_frame_is_not_a_hitch() {
    // An attach capture starts at frame 1: its first frame is only the first seen.
    let mut b = SessionBuilder::new();
    for i in 1..5 {
        b = b.frame(|f| {
            let d = f.draw(1000);
            f.at(d, 0x1234);
            let cpu = if i == 1 { 2_000_000 } else { 10_000 };
            f.timed(d, cpu, cpu);
        });
    }
    assert!(of(&b.build(), "first-use-compile").is_empty());
}

/// Frames 0..3 each uploading `bytes` of content `hash(frame)` at call 0.
fn uploads(bytes: u64, hash: impl Fn(u64) -> u64) -> Session {
    let mut s = frames(3, |f, _| {
        tex_image(f, 16, 16, RGBA8, DATA);
    });
    for f in &s.frames.clone() {
        s.uploads.push(gpuheat_session::FrameUploads {
            frame: f.index,
            uploads: vec![gpuheat_session::Upload {
                call: 0,
                bytes,
                hash: Some(hash(f.index)),
                unhashed: None,
            }],
        });
    }
    s
}

#[test]
fn content_uploaded_again_is_a_same_upload_from_a_kilobyte() {
    // The same content every frame (first at set-up, frame 0).
    let found = of(&uploads(1024, |_| 7), "same-upload");
    assert_eq!(
        found.iter().map(|f| f.frame).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(found[0].evidence.calls, vec![0]);
    assert!(found[0]
        .evidence
        .values
        .contains(&("first_uploaded".into(), "frame 0 call 0".into())));
    // Below a kilobyte, or new content each frame: quiet.
    assert!(of(&uploads(1023, |_| 7), "same-upload").is_empty());
    assert!(of(&uploads(4096, |f| f), "same-upload").is_empty());
}

#[test]
fn a_program_seen_from_its_start_that_never_asks_for_the_renderer() {
    use gpuheat_session::{AgentLoad, EndInfo, EndReason, RendererQuery};
    let with = |renderer: bool, loaded: AgentLoad| {
        let mut s = frames(2, |_, _| {});
        s.end = Some(EndInfo {
            reason: EndReason::Complete,
            frames_captured: 2,
            dropped_calls: 0,
            detail: None,
            renderer_query: Some(RendererQuery {
                renderer,
                version: false,
                stringi: false,
                loaded,
            }),
        });
        s
    };
    assert_eq!(
        of(&with(false, AgentLoad::Launch), "renderer-unchecked").len(),
        1
    );
    assert!(of(&with(true, AgentLoad::Launch), "renderer-unchecked").is_empty());
    // Attached: what the program asked before is unknown.
    assert!(of(&with(false, AgentLoad::Attach), "renderer-unchecked").is_empty());
}

#[test]
fn immediate_mode_blocks_are_found_with_their_calls_vertices_and_cost() {
    const QUADS: u64 = 7;
    let s = frames(3, |f, i| {
        f.call("glBegin", &[QUADS]);
        f.call("glColor4f", &[0, 0, 0, 0]);
        for _ in 0..4 {
            f.call("glVertex2f", &[0, 0]);
        }
        f.call("glEnd", &[]);
        if i == 2 {
            // A glEnd with no glBegin ends no block.
            f.call("glEnd", &[]);
        }
    });
    let found = of(&s, "immediate-mode");
    // Frame 0 is set-up.
    assert_eq!(
        found.iter().map(|f| f.frame).collect::<Vec<_>>(),
        vec![1, 2]
    );
    for f in &found {
        assert_eq!(f.evidence.calls, vec![6], "the block's glEnd");
        assert_eq!(f.evidence.count, 1);
        let value = |k: &str| {
            f.evidence
                .values
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(value("calls_inside").as_deref(), Some("5"));
        assert_eq!(value("vertices").as_deref(), Some("4"));
        // glBegin and the five calls inside, the glEnd left out.
        assert_eq!(
            f.cost.as_ref().map(|c| c.ns),
            Some(6 * gpuheat_testkit::CALL_NS)
        );
    }
    // No block, no finding.
    assert!(of(&frames(3, |_, _| {}), "immediate-mode").is_empty());
}

#[test]
fn a_fence_that_had_signalled_or_a_poll_is_no_stall_and_a_wait_is() {
    const FENCE: u64 = 0x5000;
    const FLUSH: u64 = 1;
    const ALREADY_SIGNALED: u64 = 0x911A;
    const TIMEOUT_EXPIRED: u64 = 0x911B;
    const CONDITION_SATISFIED: u64 = 0x911C;
    // Frame 0 is set-up; in frames 1-4, one glClientWaitSync each: (timeout, result).
    let waits = [
        (1_000_000_000, ALREADY_SIGNALED),
        (0, TIMEOUT_EXPIRED),
        (1_000_000_000, CONDITION_SATISFIED),
        (1_000_000, TIMEOUT_EXPIRED),
    ];
    let s = frames(5, |f, i| {
        if let Some(&(timeout, result)) = i.checked_sub(1).and_then(|k| waits.get(k as usize)) {
            f.made("glClientWaitSync", &[FENCE, FLUSH, timeout], result);
        }
    });
    let stalled: Vec<u64> = of(&s, "pipeline-stall").iter().map(|f| f.frame).collect();
    // Polled a frame later and already signalled (mpv), or polled with no timeout: the CPU
    // did not wait. Satisfied after waiting, or timed out after waiting: it did.
    assert_eq!(stalled, [3, 4]);
}

#[test]
fn a_read_back_into_a_pixel_pack_buffer_is_no_stall_and_one_into_memory_is() {
    const PIXEL_PACK_BUFFER: u64 = 0x88EB;
    let read =
        |f: &mut FrameBuilder| f.call("glReadPixels", &[0, 0, 64, 64, RGBA, UNSIGNED_BYTE, 0]);
    let s = frames(2, |f, i| {
        if i == 1 {
            f.call("glBindBuffer", &[PIXEL_PACK_BUFFER, 7]);
            read(f); // queued into buffer 7: no wait
            f.call("glBindBuffer", &[PIXEL_PACK_BUFFER, 0]);
            read(f); // into the program's memory: the CPU waits
        }
    });
    let found = of(&s, "pipeline-stall");
    let calls: Vec<Vec<u32>> = found.iter().map(|f| f.evidence.calls.clone()).collect();
    assert_eq!(
        calls,
        [vec![3]],
        "only the read-back into memory: {found:?}"
    );
}
