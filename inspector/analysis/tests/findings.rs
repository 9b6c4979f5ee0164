//! Every rule of the checklist on small synthetic sessions: it fires on its trigger, stays
//! quiet just below its threshold, and on a frame of one draw. The thresholds are those
//! docs/ARCHITECTURE.md ("Analysis") documents, not read from the code.

use gpuheat_analysis::analyse;
use gpuheat_analysis::checklist::{check, for_call, Finding, Severity};
use gpuheat_session::Session;
use gpuheat_testkit::{FrameBuilder, SessionBuilder, CONTEXT};

fn findings(s: &Session) -> Vec<Finding> {
    check(s, &analyse(s))
}

/// The findings of rule `rule`.
fn of<'a>(found: &'a [Finding], rule: &str) -> Vec<&'a Finding> {
    found.iter().filter(|f| f.rule == rule).collect()
}

/// The calls rule `rule` flagged, in order.
fn calls(found: &[Finding], rule: &str) -> Vec<u32> {
    let mut c: Vec<u32> = of(found, rule).iter().filter_map(|f| f.call).collect();
    c.sort_unstable();
    c
}

fn one_frame(build: impl FnOnce(&mut FrameBuilder)) -> Session {
    SessionBuilder::new().frame(build).build()
}

// dominant-draw: ≥ 25% of the frame's GPU time and ≥ 4× its fair share (of the N work
// calls, 4/N, or of the fragments), in a frame of two draws or more; a problem from half the
// frame. Serialized time, or pipelined time where the context says it is
// meaningful; the draw's time at least the noise floor (10 µs). Times below are in µs × 1000.

/// `n` draws of no GPU time: they make the frame one of many work calls.
fn fillers(f: &mut FrameBuilder, n: usize) {
    for _ in 0..n {
        f.draw(0);
    }
}

#[test]
fn dominant_draw_fires_from_a_quarter_of_the_frame_and_not_below() {
    let mut d = [0; 4];
    let s = one_frame(|f| {
        // 1 ms in all: 24.9%, 25.1%, 25%, 25%, among 20 work calls (a fair share of 5%).
        d = [
            f.draw(249_000),
            f.draw(251_000),
            f.draw(250_000),
            f.draw(250_000),
        ];
        fillers(f, 16);
    });
    let found = findings(&s);
    assert_eq!(calls(&found, "dominant-draw"), vec![d[1], d[2], d[3]]);
    for f in of(&found, "dominant-draw") {
        assert_eq!(f.severity, Severity::Warning, "{f:?}");
        assert_eq!(f.frame, s.frames[0].index);
    }
}

#[test]
fn a_large_share_of_a_few_draws_is_not_dominant_unless_far_above_its_fragments() {
    // Three draws: 60% is under 4/3 of the frame, and the draw has 60% of the fragments.
    let s = one_frame(|f| {
        let d = [f.draw(600_000), f.draw(200_000), f.draw(200_000)];
        for (c, n) in d.into_iter().zip([60_000, 20_000, 20_000]) {
            f.counter(c, "fragment_shader_invocations", n);
        }
    });
    assert!(of(&findings(&s), "dominant-draw").is_empty());
    // The same time on 1% of the fragments: far above its share of the pixels.
    let mut hot = 0;
    let s = one_frame(|f| {
        let d = [f.draw(600_000), f.draw(200_000), f.draw(200_000)];
        hot = d[0];
        for (c, n) in d.into_iter().zip([1_000, 49_500, 49_500]) {
            f.counter(c, "fragment_shader_invocations", n);
        }
    });
    assert_eq!(calls(&findings(&s), "dominant-draw"), vec![hot]);
}

#[test]
fn dominant_draw_is_a_problem_from_half_the_frame() {
    let mut d = [0; 3];
    let s = one_frame(|f| {
        d = [f.draw(500_000), f.draw(250_000), f.draw(250_000)];
        fillers(f, 17);
    });
    let found = findings(&s);
    let flagged = of(&found, "dominant-draw");
    let sev = |call| {
        flagged
            .iter()
            .find(|f| f.call == Some(call))
            .unwrap()
            .severity
    };
    assert_eq!(sev(d[0]), Severity::Error);
    assert_eq!(sev(d[1]), Severity::Warning);

    // Just under half: a warning.
    let s = one_frame(|f| {
        d = [f.draw(499_000), f.draw(250_000), f.draw(251_000)];
        fillers(f, 17);
    });
    let found = findings(&s);
    let f = of(&found, "dominant-draw");
    assert_eq!(
        f.iter().find(|f| f.call == Some(d[0])).unwrap().severity,
        Severity::Warning
    );
}

#[test]
fn dominant_draw_counts_every_work_call_but_needs_two_draws() {
    // The clear's time is part of the frame: the draw's share is 90%, but one draw dominates
    // nothing.
    let s = one_frame(|f| {
        f.clear(100_000);
        f.draw(900_000);
    });
    assert!(of(&findings(&s), "dominant-draw").is_empty());

    // Two draws: any work call over a quarter is flagged, a clear as much as a draw.
    let mut c = [0; 3];
    let s = one_frame(|f| {
        c = [f.clear(600_000), f.draw(300_000), f.draw(100_000)];
        fillers(f, 17);
    });
    assert_eq!(calls(&findings(&s), "dominant-draw"), vec![c[0], c[1]]);
}

#[test]
fn dominant_draw_needs_time_above_the_noise_floor() {
    // Half of a 20 µs frame: 10 µs, the floor, fires; 9.999 µs does not.
    let s = one_frame(|f| {
        f.draw(10_000);
        f.draw(5_000);
        f.draw(5_000);
        fillers(f, 17);
    });
    let found = findings(&s);
    let d = of(&found, "dominant-draw");
    assert_eq!(d.len(), 1, "{found:?}");
    assert!(d[0].title.contains("serialized GPU time"), "{}", d[0].title);
    assert!(d[0]
        .evidence
        .values
        .contains(&("measured".into(), "serialized GPU time".into())));
    let s = one_frame(|f| {
        f.draw(9_999);
        f.draw(5_000);
        f.draw(5_000);
        fillers(f, 17);
    });
    assert!(of(&findings(&s), "dominant-draw").is_empty());
    // The floor is also three times the context's calibrated bracket overhead.
    let mut s = one_frame(|f| {
        f.draw(500_000);
        f.draw(250_000);
        f.draw(250_000);
        fillers(f, 17);
    });
    s.contexts[0].serialized_overhead_ns = 166_667;
    assert!(of(&findings(&s), "dominant-draw").is_empty());
}

#[test]
fn dominant_draw_on_pipelined_time_only_where_it_is_meaningful() {
    // A timeline capture: pipelined times only. A clear at 95%.
    let timeline = || {
        SessionBuilder::new()
            .mode(gpuheat_session::CaptureMode::Timeline)
            .frame(|f| {
                let c = f.call("glClear", &[0x4000]);
                f.pipelined(c, 950_000);
                for _ in 0..19 {
                    let d = f.draw_untimed();
                    f.pipelined(d, 2_500);
                }
            })
            .build()
    };
    let s = timeline();
    let found = findings(&s);
    let d = of(&found, "dominant-draw");
    assert_eq!(d.len(), 1, "{found:?}");
    assert!(d[0].title.contains("pipelined GPU time"), "{}", d[0].title);
    // On a renderer where pipelined times say when the rasterizer got to a draw (llvmpipe),
    // nothing is judged on them.
    let mut s = timeline();
    s.contexts[0].pipelined_meaningful = false;
    assert!(of(&findings(&s), "dominant-draw").is_empty());
}

#[test]
fn dominant_draw_is_silent_without_gpu_times() {
    let s = one_frame(|f| {
        f.draw_untimed();
        f.draw_untimed();
    });
    assert!(of(&findings(&s), "dominant-draw").is_empty());
}

// expensive-fragments: cost per fragment ≥ 4× the frame's median; fragments from the heat
// map, else the fragment-shader counter; only draws of serialized time ≥ 10 µs and ≥ 256
// fragments count.

/// Draws of `ns` serialized time and `fragments` fragment-shader invocations each.
fn by_counter(f: &mut FrameBuilder, draws: &[(u64, u64)]) -> Vec<u32> {
    draws
        .iter()
        .map(|&(ns, n)| {
            let d = f.draw(ns);
            f.counter(d, "fragment_shader_invocations", n);
            d
        })
        .collect()
}

#[test]
fn expensive_fragments_fire_from_four_times_the_median() {
    let mut d = Vec::new();
    // 10, 10 and 40 ns per fragment: the median is 10, the third is 4x.
    let s = one_frame(|f| {
        d = by_counter(f, &[(20_480, 2048), (40_960, 4096), (81_920, 2048)]);
    });
    let found = findings(&s);
    assert_eq!(calls(&found, "expensive-fragments"), vec![d[2]]);
    assert_eq!(
        of(&found, "expensive-fragments")[0].severity,
        Severity::Warning
    );

    let f = of(&found, "expensive-fragments")[0];
    assert!(f.evidence.values.contains(&(
        "fragments_from".into(),
        "fragment_shader_invocations counter".into()
    )));
    assert_eq!(f.cost.as_ref().unwrap().ns, 81_920 - 20_480);

    // 3.99x: quiet.
    let s = one_frame(|f| {
        d = by_counter(f, &[(20_480, 2048), (40_960, 4096), (81_715, 2048)]);
    });
    assert!(of(&findings(&s), "expensive-fragments").is_empty());
}

#[test]
fn expensive_fragments_ignore_tiny_and_short_draws() {
    // 256 fragments at 40 ns each fires; 255 fragments at 400 ns each (the fixed cost of a
    // small draw) is not judged.
    let mut d = Vec::new();
    let s = one_frame(|f| {
        d = by_counter(f, &[(20_480, 2048), (20_480, 2048), (10_240, 256)]);
    });
    assert_eq!(calls(&findings(&s), "expensive-fragments"), vec![d[2]]);
    let s = one_frame(|f| {
        by_counter(f, &[(20_480, 2048), (20_480, 2048), (102_000, 255)]);
    });
    assert!(of(&findings(&s), "expensive-fragments").is_empty());
    // Below the noise floor (9,999 ns) a draw is not judged, however few ns the others take.
    let s = one_frame(|f| {
        by_counter(f, &[(10_240, 4096), (10_240, 4096), (9_999, 1024)]);
    });
    assert!(of(&findings(&s), "expensive-fragments").is_empty());
}

#[test]
fn expensive_fragments_need_serialized_time() {
    // Pipelined times overlap other draws: no cost per fragment from them.
    let s = SessionBuilder::new()
        .mode(gpuheat_session::CaptureMode::Timeline)
        .frame(|f| {
            for (ns, n) in [(20_480, 2048), (20_480, 2048), (81_920, 2048)] {
                let d = f.draw_untimed();
                f.pipelined(d, ns);
                f.counter(d, "fragment_shader_invocations", n);
            }
        })
        .build();
    assert!(of(&findings(&s), "expensive-fragments").is_empty());
}

#[test]
fn expensive_fragments_take_fragments_from_the_heat_map_first() {
    // By the counter every draw costs 10 ns per fragment; by the map the third covered a
    // quarter of what the others did for the same time: 40 ns per fragment against a median
    // of 10.
    let mut d = Vec::new();
    let s = one_frame(|f| {
        d = by_counter(f, &[(40_960, 4096), (40_960, 4096), (40_960, 4096)]);
        f.heat_map(128, 128)
            .cover(d[0], [0, 0, 64, 64]) // 4096 fragments: 10 ns each
            .cover(d[1], [0, 0, 64, 64]) // 4096: 10 ns each
            .cover(d[2], [0, 0, 32, 32]); // 1024: 40 ns each
    });
    assert_eq!(calls(&findings(&s), "expensive-fragments"), vec![d[2]]);
}

#[test]
fn expensive_fragments_judge_a_draw_by_its_median_over_frames() {
    // Three frames of the same three draws at 10, 10 and 40 ns per fragment. In the second
    // frame the first draw took 4x its time once (a preemption): its median over the frames
    // is still 10 ns, so it is not flagged. The 40 ns draw is one finding, not one per frame,
    // and states the medians over its three frames.
    let third = std::cell::Cell::new(0);
    let frame = |spike: u64| {
        let third = &third;
        move |f: &mut FrameBuilder| {
            let d = by_counter(f, &[(20_480 * spike, 2048), (20_480, 2048), (81_920, 2048)]);
            third.set(d[2]);
        }
    };
    let s = SessionBuilder::new()
        .frame_index(1)
        .frame(frame(1))
        .frame(frame(4))
        .frame(frame(1))
        .build();
    let found = findings(&s);
    let e = of(&found, "expensive-fragments");
    assert_eq!(e.len(), 1, "{found:?}");
    assert_eq!(e[0].call, Some(third.get()));
    assert!(
        e[0].title.contains("medians over 3 frames"),
        "{}",
        e[0].title
    );
    assert!(
        e[0].title.contains("4.0x the median draw's"),
        "{}",
        e[0].title
    );
    assert!(e[0]
        .evidence
        .values
        .contains(&("ns_per_fragment_range".into(), "40.00-40.00".into())));

    // The spike alone, in one frame of three: nothing.
    let s = SessionBuilder::new()
        .frame_index(1)
        .frame(|f| {
            by_counter(f, &[(20_480, 2048), (20_480, 2048)]);
        })
        .frame(|f| {
            by_counter(f, &[(81_920, 2048), (20_480, 2048)]);
        })
        .frame(|f| {
            by_counter(f, &[(20_480, 2048), (20_480, 2048)]);
        })
        .build();
    assert!(of(&findings(&s), "expensive-fragments").is_empty());
}

#[test]
fn dominant_draw_is_judged_on_its_median_share() {
    // Twenty draws of 10 µs; in one frame of three, the first took 300 µs (61% of that
    // frame): its median share is 5%, not a dominant draw. A draw at 40% in every frame is
    // one finding over the three frames.
    let frame = |first: u64| {
        move |f: &mut FrameBuilder| {
            f.draw(first);
            for _ in 0..19 {
                f.draw(10_000);
            }
        }
    };
    let s = SessionBuilder::new()
        .frame_index(1)
        .frame(frame(10_000))
        .frame(frame(300_000))
        .frame(frame(10_000))
        .build();
    assert!(of(&findings(&s), "dominant-draw").is_empty());
    let s = SessionBuilder::new()
        .frame_index(1)
        .frame(frame(127_000))
        .frame(frame(127_000))
        .frame(frame(127_000))
        .build();
    let found = findings(&s);
    let d = of(&found, "dominant-draw");
    assert_eq!(d.len(), 1, "{found:?}");
    assert!(
        d[0].title.contains("medians over 3 frames"),
        "{}",
        d[0].title
    );
}

#[test]
fn expensive_fragments_need_two_measured_draws() {
    // One draw: no median to compare with.
    let s = one_frame(|f| {
        f.clear(50);
        by_counter(f, &[(100_000, 10)]);
    });
    assert!(of(&findings(&s), "expensive-fragments").is_empty());

    // Without fragment counts the rule stays silent.
    let s = one_frame(|f| {
        f.draw(1000);
        f.draw(1000);
        f.draw(100_000);
    });
    assert!(of(&findings(&s), "expensive-fragments").is_empty());
}

// overdraw: mean fragments per covered pixel ≥ 3, from the overdraw map; a problem from
// twice that.

#[test]
fn overdraw_fires_from_three_layers_on_average() {
    let s = one_frame(|f| {
        let d: Vec<u32> = (0..3).map(|_| f.draw(100)).collect();
        let map = f.heat_map(10, 10);
        for &d in &d {
            map.cover(d, [0, 0, 10, 10]);
        }
    });
    let found = findings(&s);
    let o = of(&found, "overdraw");
    assert_eq!(o.len(), 1, "{found:?}");
    assert_eq!(o[0].severity, Severity::Warning);
    assert_eq!(o[0].call, None);
}

#[test]
fn overdraw_is_quiet_just_below_three() {
    // Two full layers and a third over 99 of the 100 pixels: 2.99 on average.
    let s = one_frame(|f| {
        let d: Vec<u32> = (0..3).map(|_| f.draw(100)).collect();
        f.heat_map(10, 10)
            .cover(d[0], [0, 0, 10, 10])
            .cover(d[1], [0, 0, 10, 10])
            .cover(d[2], [0, 0, 10, 9])
            .cover(d[2], [0, 9, 9, 10]);
    });
    assert!(of(&findings(&s), "overdraw").is_empty());
}

#[test]
fn overdraw_counts_only_covered_pixels_and_is_a_problem_from_six() {
    // Six layers over a quarter of a map: uncovered pixels do not dilute the mean.
    let s = one_frame(|f| {
        let d: Vec<u32> = (0..6).map(|_| f.draw(100)).collect();
        let map = f.heat_map(20, 20);
        for &d in &d {
            map.cover(d, [0, 0, 10, 10]);
        }
    });
    let found = findings(&s);
    let o = of(&found, "overdraw");
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].severity, Severity::Error);
    assert!(o[0].title.contains("6.0 times"), "{}", o[0].title);
}

#[test]
fn overdraw_of_a_one_draw_frame_is_its_own_layers() {
    // One draw painting each pixel once: no overdraw.
    let s = one_frame(|f| {
        let d = f.draw(100);
        f.heat_map(10, 10).cover(d, [0, 0, 10, 10]);
    });
    assert!(of(&findings(&s), "overdraw").is_empty());

    // One draw whose triangles stack three deep: its fragments are wasted all the same.
    let s = one_frame(|f| {
        let d = f.draw(100);
        let map = f.heat_map(10, 10);
        for _ in 0..3 {
            map.cover(d, [0, 0, 10, 10]);
        }
    });
    assert_eq!(of(&findings(&s), "overdraw").len(), 1);
}

#[test]
fn overdraw_needs_the_map() {
    let s = one_frame(|f| {
        for _ in 0..5 {
            let d = f.draw(100);
            f.counter(d, "fragment_shader_invocations", 100_000);
        }
    });
    assert!(of(&findings(&s), "overdraw").is_empty());
}

// small-draws: ≥ 100 draws with a median under 1% of the surface.

/// `n` draws covering `pixels` pixels each (a row of a 100 × 100 map: 1% is 100 pixels).
fn small_draws_frame(n: usize, pixels: u32) -> Session {
    one_frame(|f| {
        let d: Vec<u32> = (0..n).map(|_| f.draw(10)).collect();
        let map = f.heat_map(100, 100);
        for &d in &d {
            map.cover(d, [0, 0, pixels, 1]);
        }
    })
}

#[test]
fn small_draws_fire_from_a_hundred_draws_under_one_percent() {
    let found = findings(&small_draws_frame(100, 99));
    let f = of(&found, "small-draws");
    assert_eq!(f.len(), 1, "{found:?}");
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(
        f[0].title.starts_with("100 draws in one frame"),
        "{}",
        f[0].title
    );
}

#[test]
fn small_draws_are_quiet_below_a_hundred_draws_or_at_one_percent() {
    assert!(of(&findings(&small_draws_frame(99, 99)), "small-draws").is_empty());
    assert!(of(&findings(&small_draws_frame(100, 100)), "small-draws").is_empty());
}

#[test]
fn small_draws_without_a_map_compare_the_counter_with_4096_fragments() {
    // Without a heat map the surface is unknown: 1% of a 640x640 surface stands in.
    for (fragments, fires) in [(4095, true), (4096, false)] {
        let s = one_frame(|f| {
            for _ in 0..100 {
                let d = f.draw(10);
                f.counter(d, "fragment_shader_invocations", fragments);
            }
        });
        assert_eq!(
            of(&findings(&s), "small-draws").len(),
            usize::from(fires),
            "{fragments} fragments"
        );
    }
}

#[test]
fn small_draws_without_any_size_go_by_the_count() {
    // A timeline capture measures no fragments: a hundred draws are worth batching anyway.
    let s = SessionBuilder::new()
        .mode(gpuheat_session::CaptureMode::Timeline)
        .frame(|f| {
            for _ in 0..100 {
                f.draw_untimed();
            }
        })
        .build();
    let found = findings(&s);
    let f = of(&found, "small-draws");
    assert_eq!(f.len(), 1, "{found:?}");
    assert!(!f[0].title.contains("median"), "{}", f[0].title);
}

#[test]
fn small_draws_count_draws_not_clears() {
    // 99 draws and a clear are not 100 draws.
    let s = one_frame(|f| {
        f.clear(10);
        for _ in 0..99 {
            let d = f.draw(10);
            f.counter(d, "fragment_shader_invocations", 1);
        }
    });
    assert!(of(&findings(&s), "small-draws").is_empty());
}

#[test]
fn small_draws_of_a_one_draw_frame_are_quiet() {
    assert!(of(&findings(&small_draws_frame(1, 1)), "small-draws").is_empty());
}

// redundant-state: setters that set the value already set, tracked across the capture per
// context and slot (uniforms per program); ≥ 10 and ≥ 10% of the frame's state calls.

const GL_TEXTURE_2D: u64 = 0x0DE1;
const GL_BLEND: u64 = 0x0BE2;

/// One bind and then `repeats` binds of the same texture.
fn binds(f: &mut FrameBuilder, repeats: usize) -> u32 {
    f.call("glBindTexture", &[GL_TEXTURE_2D, 5]);
    let first = f.call("glBindTexture", &[GL_TEXTURE_2D, 5]);
    for _ in 1..repeats {
        f.call("glBindTexture", &[GL_TEXTURE_2D, 5]);
    }
    first
}

#[test]
fn redundant_state_fires_from_ten_repeats() {
    let mut first = 0;
    let s = one_frame(|f| {
        first = binds(f, 10);
        f.draw(100);
    });
    let found = findings(&s);
    let r = of(&found, "redundant-state");
    assert_eq!(r.len(), 1, "{found:?}");
    assert_eq!(r[0].severity, Severity::Info);
    // It points at the first redundant call.
    assert_eq!(r[0].call, Some(first));
    assert!(
        r[0].title.starts_with("10 of 11 state calls"),
        "{}",
        r[0].title
    );

    let s = one_frame(|f| {
        binds(f, 9);
        f.draw(100);
    });
    assert!(of(&findings(&s), "redundant-state").is_empty());
}

#[test]
fn redundant_state_needs_a_tenth_of_the_state_calls() {
    // 10 redundant of 100 state calls (11 binds and 89 distinct uniforms): fires; of 101: no.
    for (uniforms, fires) in [(89u64, true), (90, false)] {
        let s = one_frame(|f| {
            binds(f, 10);
            for loc in 0..uniforms {
                f.call("glUniform1f", &[loc, 0]);
            }
        });
        assert_eq!(
            of(&findings(&s), "redundant-state").len(),
            usize::from(fires),
            "{uniforms} uniforms"
        );
    }
}

#[test]
fn redundant_state_is_tracked_across_frames() {
    // The first frame sets the texture; every bind of the second repeats it.
    let s = SessionBuilder::new()
        .frame(|f| {
            f.call("glBindTexture", &[GL_TEXTURE_2D, 5]);
        })
        .frame(|f| {
            for _ in 0..10 {
                f.call("glBindTexture", &[GL_TEXTURE_2D, 5]);
            }
        })
        .build();
    let found = findings(&s);
    let r = of(&found, "redundant-state");
    assert_eq!(r.len(), 1, "{found:?}");
    assert_eq!(r[0].frame, s.frames[1].index);
}

#[test]
fn enable_and_disable_share_a_slot() {
    // Alternating is never redundant; repeating glEnable is.
    let s = one_frame(|f| {
        for _ in 0..10 {
            f.call("glEnable", &[GL_BLEND]);
            f.call("glDisable", &[GL_BLEND]);
        }
    });
    assert!(of(&findings(&s), "redundant-state").is_empty());
    let s = one_frame(|f| {
        for _ in 0..11 {
            f.call("glEnable", &[GL_BLEND]);
        }
    });
    assert_eq!(of(&findings(&s), "redundant-state").len(), 1);
}

#[test]
fn uniforms_belong_to_the_program_in_use() {
    // The same value for the same location of eleven programs: nothing is set twice.
    let s = one_frame(|f| {
        for program in 1..=11 {
            f.call("glUseProgram", &[program]);
            f.call("glUniform1f", &[0, 7]);
        }
    });
    let found = findings(&s);
    assert!(of(&found, "redundant-state").is_empty(), "{found:?}");

    // Within one program, the repeats are redundant.
    let s = one_frame(|f| {
        f.call("glUseProgram", &[1]);
        for _ in 0..11 {
            f.call("glUniform1f", &[0, 7]);
        }
    });
    assert_eq!(of(&findings(&s), "redundant-state").len(), 1);
}

#[test]
fn the_start_state_knows_the_program_vertex_array_and_viewport() {
    // The capture started with program 3, no vertex array and a 64x64 viewport: setting any
    // of them again is redundant from the first call.
    for (name, args) in [
        ("glUseProgram", &[3u64][..]),
        ("glBindVertexArray", &[0]),
        ("glViewport", &[0, 0, 64, 64]),
    ] {
        let s = SessionBuilder::new()
            .start_state(CONTEXT, 3)
            .frame(|f| {
                for _ in 0..10 {
                    f.call(name, args);
                }
            })
            .build();
        let found = findings(&s);
        let r = of(&found, "redundant-state");
        assert_eq!(r.len(), 1, "{name}: {found:?}");
        assert!(r[0].title.starts_with("10 of 10"), "{}", r[0].title);
    }
    // Without the start state the first call's predecessor is unknown: 9 of 10, quiet.
    let s = one_frame(|f| {
        for _ in 0..10 {
            f.call("glUseProgram", &[3]);
        }
    });
    assert!(of(&findings(&s), "redundant-state").is_empty());
}

#[test]
fn contexts_keep_their_own_state() {
    let other = CONTEXT + 1;
    let s = SessionBuilder::new()
        .context(other)
        .frame(|f| {
            for _ in 0..10 {
                f.on_context(CONTEXT);
                f.call("glBindTexture", &[GL_TEXTURE_2D, 5]);
                f.on_context(other);
                f.call("glBindTexture", &[GL_TEXTURE_2D, 6]);
            }
        })
        .build();
    // Each context repeats its own bind 9 times: 18 redundant of 20 calls.
    let found = findings(&s);
    let r = of(&found, "redundant-state");
    assert_eq!(r.len(), 1);
    assert!(r[0].title.starts_with("18 of 20"), "{}", r[0].title);
}

#[test]
fn redundant_state_in_a_one_draw_frame() {
    // The rule is about state calls, not draws: one draw does not silence it.
    let s = one_frame(|f| {
        binds(f, 10);
        f.draw(100);
    });
    assert_eq!(of(&findings(&s), "redundant-state").len(), 1);
}

// eclipsed-state: setters whose every path is set again before a draw, clear, blit, query
// or read-back used it; ≥ 10 and ≥ 10% of the frame's state calls.

/// `n` viewports of distinct sizes, then `others` uniforms of no known program (state calls
/// that are neither redundant nor eclipsed), then a draw.
fn viewports(n: u64, others: u64) -> Session {
    one_frame(|f| {
        for i in 0..n {
            f.call("glViewport", &[0, 0, 10 + i, 10]);
        }
        for loc in 0..others {
            f.call("glUniform1f", &[loc, 0]);
        }
        f.draw(100_000);
    })
}

#[test]
fn eclipsed_state_fires_from_ten_overwritten_calls() {
    let s = viewports(11, 0);
    let found = findings(&s);
    let e = of(&found, "eclipsed-state");
    assert_eq!(e.len(), 1, "{found:?}");
    assert_eq!(e[0].severity, Severity::Info);
    assert!(
        e[0].title.starts_with("10 of 11 state calls"),
        "{}",
        e[0].title
    );
    assert_eq!(e[0].call, Some(0));
    assert_eq!(e[0].evidence.count, 10);
    assert_eq!(e[0].evidence.calls, (0..10).collect::<Vec<u32>>());
    assert!(e[0]
        .evidence
        .values
        .contains(&("glViewport".into(), "10 calls, 10000 ns".into())));
    // Σ of the calls' CPU time (1 µs each in the builder).
    assert_eq!(e[0].cost.as_ref().unwrap().ns, 10_000);
    // Nine: quiet.
    assert!(of(&findings(&viewports(10, 0)), "eclipsed-state").is_empty());
}

#[test]
fn eclipsed_state_needs_a_tenth_of_the_state_calls() {
    // 10 eclipsed of 100 state calls fires; of 101, not.
    assert_eq!(of(&findings(&viewports(11, 89)), "eclipsed-state").len(), 1);
    assert!(of(&findings(&viewports(11, 90)), "eclipsed-state").is_empty());
}

#[test]
fn readers_end_an_eclipse_and_flushes_do_not() {
    // A draw, a clear, a query or a read-back between two sets uses the first.
    for reader in [
        ("glDrawArrays", &[4u64, 0, 3][..]),
        ("glClear", &[0x4000]),
        ("glReadPixels", &[0, 0, 1, 1, 0x1908, 0x1401, 0x1000]),
    ] {
        let s = one_frame(|f| {
            for i in 0..11 {
                f.call("glViewport", &[0, 0, 10 + i, 10]);
                f.call(reader.0, reader.1);
            }
        });
        assert!(
            of(&findings(&s), "eclipsed-state").is_empty(),
            "{}",
            reader.0
        );
    }
    // glFlush and glGetError read no state.
    for between in ["glFlush", "glGetError"] {
        let s = one_frame(|f| {
            for i in 0..11 {
                f.call("glViewport", &[0, 0, 10 + i, 10]);
                f.call(between, &[]);
            }
            f.draw(100_000);
        });
        assert_eq!(of(&findings(&s), "eclipsed-state").len(), 1, "{between}");
    }
}

#[test]
fn redundant_calls_are_not_also_eclipsed() {
    // Ten repeats of a blend function, then another one, then a draw: the repeats are
    // redundant (they changed nothing), the first set is eclipsed by the last.
    let s = one_frame(|f| {
        for _ in 0..11 {
            f.call("glBlendFunc", &[0x0302, 0x0303]);
        }
        f.call("glBlendFunc", &[1, 0]);
        f.draw(100_000);
    });
    let found = findings(&s);
    assert_eq!(of(&found, "redundant-state").len(), 1);
    assert!(of(&found, "eclipsed-state").is_empty(), "{found:?}");
}

// pipeline-stall: glFinish, glReadPixels, glReadnPixels, glGetTexImage, glGetBufferSubData,
// glClientWaitSync.

#[test]
fn every_stalling_call_is_flagged_and_others_are_not() {
    let stalls: [(&str, &[u64]); 6] = [
        ("glFinish", &[]),
        ("glReadPixels", &[0, 0, 1, 1, 0x1908, 0x1401, 0x1000]),
        ("glReadnPixels", &[0, 0, 1, 1, 0x1908, 0x1401, 4, 0x1000]),
        ("glGetTexImage", &[GL_TEXTURE_2D, 0, 0x1908, 0x1401, 0x1000]),
        ("glGetBufferSubData", &[0x8892, 0, 4, 0x1000]),
        ("glClientWaitSync", &[0x2000, 1, 1_000_000]),
    ];
    let mut flagged = Vec::new();
    let s = one_frame(|f| {
        f.draw(100);
        f.call("glFlush", &[]);
        f.call("glGetError", &[]);
        for (name, args) in stalls {
            let c = f.call(name, args);
            f.timed(c, 2_500_000, 10_000);
            flagged.push(c);
        }
    });
    let found = findings(&s);
    assert_eq!(calls(&found, "pipeline-stall"), flagged);
    for f in of(&found, "pipeline-stall") {
        assert_eq!(f.severity, Severity::Warning);
        // The wall time the calling thread waited.
        assert!(f.title.contains("2.500 ms"), "{}", f.title);
    }
}

#[test]
fn a_stall_in_a_one_draw_frame_is_flagged() {
    let mut c = 0;
    let s = one_frame(|f| {
        f.draw(100);
        c = f.call("glFinish", &[]);
    });
    let found = findings(&s);
    assert_eq!(calls(&found, "pipeline-stall"), vec![c]);
    assert_eq!(for_call(&found, s.frames[0].index, c).count(), 1);
}

// The checklist as a whole.

#[test]
fn a_plain_one_draw_frame_has_no_findings() {
    let s = one_frame(|f| {
        f.clear(100);
        let d = f.draw(1000);
        f.counter(d, "fragment_shader_invocations", 4096);
        f.heat_map(64, 64).cover(d, [0, 0, 64, 64]);
    });
    assert_eq!(findings(&s), Vec::<Finding>::new());
}

#[test]
fn findings_come_by_frame_then_most_severe_first() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.call("glFinish", &[]);
            f.draw(100_000);
            f.draw(900_000);
            fillers(f, 18);
        })
        .frame(|f| {
            f.draw(100_000);
            f.draw(100_000);
            fillers(f, 18);
        })
        .build();
    let found = findings(&s);
    let order: Vec<(u64, Severity)> = found.iter().map(|f| (f.frame, f.severity)).collect();
    let first = s.frames[0].index;
    let second = s.frames[1].index;
    assert_eq!(
        order,
        vec![
            (first, Severity::Error),   // the 90% draw
            (first, Severity::Warning), // glFinish
            (second, Severity::Error),  // 50% each
            (second, Severity::Error),
        ]
    );
}
