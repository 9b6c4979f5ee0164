//! Per-frame totals and per-draw costs on small synthetic sessions.

use gpuheat_analysis::{analyse, call_text, ms, rank_time, RankedBy};
use gpuheat_session::CaptureMode;
use gpuheat_testkit::{SessionBuilder, CALL_NS, CONTEXT};

#[test]
fn frame_totals_count_calls_draws_and_work() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.clear(1_000);
            f.call("glUseProgram", &[1]);
            f.draw(2_000);
            f.draw(3_000);
            f.call(
                "glBlitFramebuffer",
                &[0, 0, 1, 1, 0, 0, 1, 1, 0x4000, 0x2600],
            );
        })
        .build();
    let a = analyse(&s);
    assert_eq!(a.frames.len(), 1);
    let f = &a.frames[0];
    assert_eq!(f.index, s.frames[0].index);
    // Five calls and the swap.
    assert_eq!(f.calls, 6);
    assert_eq!(f.draws, 2);
    // The clear, the two draws and the blit.
    assert_eq!(f.work_calls, 4);
    assert_eq!(f.cpu_ms, ms(6 * CALL_NS));
    // The blit has no measured time: it adds nothing.
    assert_eq!(f.gpu_serialized_ms, Some(ms(6_000)));
    assert_eq!(f.gpu_pipelined_ms, None);
    assert_eq!(a.draws.len(), 4);
}

#[test]
fn wall_time_runs_from_the_previous_frames_end() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.draw(1);
        })
        .frame(|f| {
            f.draw(1);
        })
        .build();
    let a = analyse(&s);
    let (f0, f1) = (&s.frames[0], &s.frames[1]);
    // The first frame from its own start, later ones from the end of the one before.
    assert_eq!(a.frames[0].wall_ms, ms(f0.end_ns - f0.begin_ns));
    assert_eq!(a.frames[1].wall_ms, ms(f1.end_ns - f0.end_ns));
    assert!(
        f1.begin_ns > f0.end_ns,
        "the builder leaves a gap between frames"
    );
}

#[test]
fn draws_are_ranked_costliest_first_with_their_share_of_the_frame() {
    let mut calls = [0; 3];
    let s = SessionBuilder::new()
        .frame(|f| calls = [f.clear(100), f.draw(600), f.draw(300)])
        .frame(|f| {
            f.draw(600);
        })
        .build();
    let a = analyse(&s);
    assert_eq!(a.ranked_by, RankedBy::GpuTimeSerialized);
    let order: Vec<(u64, u32, Option<u64>)> = a
        .draws
        .iter()
        .map(|d| (d.frame, d.call, rank_time(d)))
        .collect();
    let (first, second) = (s.frames[0].index, s.frames[1].index);
    // Equal times: the earlier frame first.
    assert_eq!(
        order,
        vec![
            (first, calls[1], Some(600)),
            (second, 0, Some(600)),
            (first, calls[2], Some(300)),
            (first, calls[0], Some(100)),
        ]
    );
    let share = |frame, call| {
        a.draws
            .iter()
            .find(|d| d.frame == frame && d.call == call)
            .unwrap()
            .frame_share
    };
    assert_eq!(share(first, calls[1]), Some(0.6));
    assert_eq!(share(first, calls[0]), Some(0.1));
    // Alone in its frame.
    assert_eq!(share(second, 0), Some(1.0));
}

#[test]
fn counters_are_listed_by_name_without_the_times() {
    let mut d = 0;
    let s = SessionBuilder::new()
        .frame(|f| {
            d = f.draw(500);
            f.counter(d, "samples_passed", 64)
                .counter(d, "fragment_shader_invocations", 80);
        })
        .build();
    let a = analyse(&s);
    let draw = &a.draws[0];
    assert_eq!(draw.call, d);
    assert_eq!(draw.gpu_serialized_ns, Some(500));
    let names: Vec<(&str, u64)> = draw
        .counters
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        names,
        vec![("fragment_shader_invocations", 80), ("samples_passed", 64)]
    );
    assert_eq!(draw.cpu_ns, CALL_NS);
}

#[test]
fn timeline_sessions_rank_by_pipelined_time() {
    let mut d = [0; 2];
    let s = SessionBuilder::new()
        .mode(CaptureMode::Timeline)
        .frame(|f| {
            d = [f.draw_untimed(), f.draw_untimed()];
            f.pipelined(d[0], 250).pipelined(d[1], 750);
        })
        .build();
    let a = analyse(&s);
    assert_eq!(a.ranked_by, RankedBy::GpuTimePipelined);
    assert_eq!(a.frames[0].gpu_serialized_ms, None);
    assert_eq!(a.frames[0].gpu_pipelined_ms, Some(ms(1_000)));
    assert_eq!(a.draws[0].call, d[1]);
    assert_eq!(a.draws[0].gpu_pipelined_ns, Some(750));
    assert_eq!(a.draws[0].frame_share, Some(0.75));
}

#[test]
fn pipelined_times_from_a_disjoint_batch_are_dropped() {
    let s = SessionBuilder::new()
        .frame(|f| {
            let d = f.draw_untimed();
            f.pipelined(d, 250).disjoint();
        })
        .build();
    let a = analyse(&s);
    assert_eq!(a.draws[0].gpu_pipelined_ns, None);
    assert_eq!(a.draws[0].frame_share, None);
    assert_eq!(a.frames[0].gpu_pipelined_ms, None);
}

#[test]
fn a_pipelined_counter_stands_in_for_a_missing_batch() {
    let s = SessionBuilder::new()
        .frame(|f| {
            let d = f.draw(900);
            f.counter(d, "gpu_time_pipelined", 400);
        })
        .build();
    let a = analyse(&s);
    assert_eq!(a.draws[0].gpu_pipelined_ns, Some(400));
    assert_eq!(a.draws[0].gpu_serialized_ns, Some(900));
    assert!(a.draws[0].counters.is_empty());
    // Serialized time ranks when there is any.
    assert_eq!(a.ranked_by, RankedBy::GpuTimeSerialized);
}

#[test]
fn ranked_by_serializes_as_the_counters_name() {
    for (mode, name) in [
        (CaptureMode::Full, "gpu_time_serialized"),
        (CaptureMode::Timeline, "gpu_time_pipelined"),
    ] {
        let s = SessionBuilder::new()
            .mode(mode)
            .frame(|f| {
                if mode == CaptureMode::Full {
                    f.draw(1);
                } else {
                    f.draw_untimed();
                }
            })
            .build();
        let a = analyse(&s);
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["ranked_by"], name);
        assert_eq!(a.ranked_by.counter(), name);
    }
}

#[test]
fn unavailable_counters_say_why() {
    let s = SessionBuilder::new()
        .unavailable(CONTEXT, "samples_passed", Some("no occlusion queries"))
        .unavailable(CONTEXT, "fragment_shader_invocations", None)
        .build();
    let a = analyse(&s);
    let got: Vec<(&str, &str, &str)> = a
        .unavailable
        .iter()
        .map(|u| (u.context.as_str(), u.counter.as_str(), u.reason.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("0x1000", "samples_passed", "no occlusion queries"),
            (
                "0x1000",
                "fragment_shader_invocations",
                "not offered by the driver"
            ),
        ]
    );
    assert!(a.frames.is_empty() && a.draws.is_empty());
}

#[test]
fn calls_read_as_source_text() {
    let s = SessionBuilder::new().build();
    let f = |name: &str| {
        s.functions
            .functions
            .iter()
            .find(|f| f.name == name)
            .unwrap()
    };
    assert_eq!(
        call_text(f("glDrawArrays"), &[4, 0, 3]),
        "glDrawArrays(GL_TRIANGLES, 0, 3)"
    );
    assert_eq!(
        call_text(f("glClear"), &[0x4100]),
        "glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT)"
    );
    // Sign-extended integers, booleans, floats by bit pattern, null pointers.
    assert_eq!(
        call_text(f("glViewport"), &[(-8i64) as u64, 0, 64, 48]),
        "glViewport(-8, 0, 64, 48)"
    );
    assert_eq!(call_text(f("glDepthMask"), &[0]), "glDepthMask(false)");
    assert_eq!(
        call_text(f("glUniform1f"), &[2, u64::from(0.5f32.to_bits())]),
        "glUniform1f(2, 0.5)"
    );
    assert_eq!(
        call_text(f("glDrawElements"), &[4, 6, 0x1403, 0]),
        "glDrawElements(GL_TRIANGLES, 6, GL_UNSIGNED_SHORT, NULL)"
    );
    // A value with no name in its group stays a number.
    assert_eq!(
        call_text(f("glDrawArrays"), &[0x1234_5678_9abc, 0, 3]),
        "glDrawArrays(0x123456789abc, 0, 3)"
    );
}

#[test]
fn call_sites_read_as_module_and_offset() {
    // The builder's call sites start at 0x400000.
    let s = SessionBuilder::new()
        .module("/opt/app/bin/app", 0x3f_f000, 0x50_0000, 0x2000)
        .frame(|f| {
            f.draw(1);
        })
        .build();
    let a = analyse(&s);
    assert_eq!(a.draws[0].callsite, "app+0x3000");
    // A module file that does not exist has no source line (and is no error).
    assert_eq!(a.draws[0].source, None);

    let s = SessionBuilder::new()
        .frame(|f| {
            f.draw(1);
        })
        .build();
    assert_eq!(analyse(&s).draws[0].callsite, "0x400000");
}
