//! Draw identity, per-identity statistics and the diff on small synthetic sessions: the
//! logic alone (real captures are compared in the CLI's tests).

use gpuheat_analysis::compare::diff::{diff, DiffOptions, MatchedBy, Verdict};
use gpuheat_analysis::measure::aggregate::{aggregate, first_use};
use gpuheat_analysis::measure::identity::{identify, ProgramKey};
use gpuheat_session::Session;
use gpuheat_testkit::{SessionBuilder, GL_TRIANGLES};

/// A deterministic noise source: factors in [1 − spread, 1 + spread].
struct Noise(u64);

impl Noise {
    fn factor(&mut self, spread: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let u = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        1.0 + spread * (2.0 * u - 1.0)
    }
}

/// One draw of the synthetic program: its call site, vertex count and time.
#[derive(Clone, Copy)]
struct Draw {
    site: u64,
    count: u64,
    ns: f64,
}

const LOOP: u64 = 0x40_1000;
const HOT: u64 = 0x40_2000;

fn quads(k: usize) -> Vec<Draw> {
    let mut v: Vec<Draw> = (0..k)
        .map(|_| Draw {
            site: LOOP,
            count: 4,
            ns: 600_000.0,
        })
        .collect();
    v.push(Draw {
        site: HOT,
        count: 4,
        ns: 2_000_000.0,
    });
    v
}

/// `frames` frames of: glUseProgram(program), then `draws`, each time × noise × `machine`.
fn session(seed: u64, frames: usize, draws: &[Draw], machine: f64, program: u32) -> Session {
    let mut noise = Noise(seed);
    let mut b = SessionBuilder::new();
    for _ in 0..frames {
        b = b.frame(|f| {
            f.call("glUseProgram", &[u64::from(program)]);
            for d in draws {
                let t = (d.ns * machine * noise.factor(0.15)) as u64;
                let c = f.call("glDrawArrays", &[GL_TRIANGLES, 0, d.count]);
                f.at(c, d.site);
                f.counter(c, "gpu_time_serialized", t);
            }
        });
    }
    b.build()
}

#[test]
fn draws_from_one_loop_are_told_apart_by_their_order() {
    let s = session(1, 3, &quads(3), 1.0, 7);
    let ids = identify(&s);
    assert_eq!(ids.keys.len(), 4);
    let ordinals: Vec<u32> = ids.keys.iter().map(|k| k.ordinal).collect();
    assert_eq!(ordinals, [0, 1, 2, 0]);
    assert!(ids.keys.iter().all(|k| k.program == ProgramKey::Name(7)));
    // Every frame has the same four identities, in the same order.
    for f in &ids.frames {
        let order: Vec<u32> = f.iter().map(|&(_, id)| id).collect();
        assert_eq!(order, [0, 1, 2, 3]);
    }
}

#[test]
fn a_program_record_names_the_program_by_its_sources() {
    // Two runs where the same shaders got different GL names: with PROG records they are
    // the same program; without, they are not.
    let hash = 0xfeed_beef_0000_0001;
    let named = |name: u32, prog: bool| {
        let mut b = SessionBuilder::new();
        if prog {
            b = b.program(gpuheat_testkit::CONTEXT, name, hash);
        }
        b.frame(|f| {
            f.call("glUseProgram", &[u64::from(name)]);
            f.draw(1_000);
        })
        .build()
    };
    let (a, b) = (identify(&named(3, true)), identify(&named(9, true)));
    assert_eq!(a.keys[0].program, ProgramKey::Sources(hash));
    assert_eq!(a.hashes[0].full, b.hashes[0].full);
    let (a, b) = (identify(&named(3, false)), identify(&named(9, false)));
    assert_ne!(a.hashes[0].full, b.hashes[0].full);
}

#[test]
fn the_program_current_before_a_frame_carries_over() {
    // Frame 1 binds program 5; frame 2 draws without binding: still program 5.
    let s = SessionBuilder::new()
        .start_state(gpuheat_testkit::CONTEXT, 2)
        .frame(|f| {
            f.draw(1_000);
            f.call("glUseProgram", &[5]);
        })
        .frame(|f| {
            f.draw(1_000);
        })
        .build();
    let ids = identify(&s);
    assert_eq!(ids.keys[0].program, ProgramKey::Name(2));
    let second = ids.frames[1][0].1 as usize;
    assert_eq!(ids.keys[second].program, ProgramKey::Name(5));
}

#[test]
fn a_first_use_outlier_is_labelled_and_left_out() {
    assert_eq!(first_use(vec![5e6, 1e4, 1.2e4, 0.9e4]), Some((5e6, 1e4)));
    // Jitter is not a first use: 3× and only 20 µs more.
    assert_eq!(first_use(vec![3e4, 1e4, 1e4]), None);
    assert_eq!(
        first_use(vec![5e6, 1e4]),
        None,
        "needs two later occurrences"
    );

    let s = SessionBuilder::new()
        .frame(|f| {
            let c = f.draw(437_000_000);
            f.timed(c, 40_000_000, 40_000_000);
        })
        .frame(|f| {
            let c = f.draw(105_000_000);
            f.timed(c, 20_000, 20_000);
        })
        .frame(|f| {
            let c = f.draw(104_000_000);
            f.timed(c, 20_000, 20_000);
        })
        .build();
    let st = aggregate(&s, false);
    let d = &st.draws[0];
    let fu = d.first_use.expect("first use");
    assert_eq!((fu.frame, fu.cpu_ns), (1, 40e6));
    let t = d.metric(st.rank_metric()).unwrap();
    assert_eq!((t.n, t.median), (2, 104.5e6));
    assert!(st.frames[0].first_use && !st.frames[1].first_use);
    assert_eq!(st.steady_frames().len(), 2);
}

#[test]
fn one_cheaper_draw_is_the_only_significant_change() {
    let a = session(1, 12, &quads(3), 1.0, 7);
    let mut cheap = quads(3);
    cheap[3].ns /= 4.0;
    let b = session(2, 12, &cheap, 1.0, 7);
    let d = diff(&a, &b, &DiffOptions::default());
    assert_eq!(d.matched.len(), 4);
    assert!(d.only_a.is_empty() && d.only_b.is_empty());
    let top = &d.matched[0];
    assert_eq!(d.a.stats.draws[top.a].key.callsite, "0x402000");
    assert_eq!(top.time().verdict, Verdict::Lower);
    let r = top.raw_time().ratio.unwrap();
    assert!((0.2..0.3).contains(&r.estimate), "{r:?}");
    for m in &d.matched[1..] {
        assert!(!m.time().verdict.significant(), "{:?}", m.time());
    }
    let gate = d.gate(10.0);
    assert!(!gate.failed, "{}", gate.reason);
    // The other way round it is a regression the gate catches, carried by that draw.
    let back = diff(&b, &a, &DiffOptions::default());
    let gate = back.gate(10.0);
    assert!(gate.failed, "{}", gate.reason);
    assert_eq!(gate.slower.len(), 1);
    assert_eq!(
        back.a.stats.draws[back.matched[gate.slower[0]].a]
            .key
            .callsite,
        "0x402000"
    );
}

#[test]
fn noise_alone_makes_no_significant_row_over_many_draws() {
    // 40 draws, 20 pairs of sessions that differ only by noise. Uncorrected, about 5% of the
    // 800 rows would pass p < 0.05; with every null true, Benjamini–Hochberg bounds the
    // chance that a pair shows any significant row by α = 5%: about 1 pair in 20.
    let draws: Vec<Draw> = (0..40)
        .map(|i| Draw {
            site: 0x40_0000 + 0x100 * i,
            count: 3,
            ns: 100_000.0 * (1.0 + i as f64),
        })
        .collect();
    let (mut significant, mut pairs_with_any, mut raw) = (0, 0, 0);
    for seed in 0..20 {
        let a = session(100 + seed, 10, &draws, 1.0, 1);
        let b = session(200 + seed, 10, &draws, 1.0, 1);
        let d = diff(&a, &b, &DiffOptions::default());
        assert_eq!(d.matched.len(), 40);
        let n = d
            .matched
            .iter()
            .filter(|m| m.time().verdict.significant())
            .count();
        significant += n;
        pairs_with_any += usize::from(n > 0);
        raw += d
            .matched
            .iter()
            .filter(|m| m.time().p.is_some_and(|p| p < 0.05))
            .count();
        assert!(!d.gate(10.0).failed);
    }
    assert!(raw >= 10, "uncorrected rows under 0.05: {raw}");
    assert!(
        pairs_with_any <= 2,
        "{pairs_with_any} of 20 pairs, {significant} rows"
    );
}

#[test]
fn a_machine_slower_everywhere_is_drift_not_a_draw_regression() {
    let a = session(1, 12, &quads(3), 1.0, 7);
    let b = session(2, 12, &quads(3), 1.15, 7);
    let d = diff(&a, &b, &DiffOptions::default());
    let drift = d.drift.expect("drift");
    assert!((1.05..1.25).contains(&drift.factor), "{drift:?}");
    assert!(d.matched.iter().all(|m| !m.time().verdict.significant()));
    // 15% together is within what a software rasterizer... here a "GPU": 5% allowance, so
    // a uniform 15% is beyond it and fails a 5% gate, but not a 20% one.
    assert!(d.gate(5.0).failed, "{}", d.gate(5.0).reason);
    assert!(!d.gate(20.0).failed);
    // Judged raw, every draw is slower.
    let raw = diff(
        &a,
        &b,
        &DiffOptions {
            absolute: true,
            ..DiffOptions::default()
        },
    );
    assert!(raw.drift.is_none());
    assert!(raw
        .matched
        .iter()
        .all(|m| m.time().verdict == Verdict::Higher));
}

/// [`cpu_session`] without GPU times, as a timeline capture records it.
fn timeline_session(seed: u64, frames: usize, cpu: [f64; 4]) -> Session {
    session_of(seed, frames, cpu, false)
}

/// `frames` frames of four draws at distinct call sites, each with 600 µs of GPU time and
/// `cpu[i]` ns of CPU (and wall) time in its call, × noise.
fn cpu_session(seed: u64, frames: usize, cpu: [f64; 4]) -> Session {
    session_of(seed, frames, cpu, true)
}

/// [`cpu_session`], its GPU times recorded when `gpu`.
fn session_of(seed: u64, frames: usize, cpu: [f64; 4], gpu: bool) -> Session {
    let mut noise = Noise(seed);
    let mut b = SessionBuilder::new();
    for _ in 0..frames {
        b = b.frame(|f| {
            f.call("glUseProgram", &[7]);
            for (i, ns) in cpu.iter().enumerate() {
                let c = f.call("glDrawArrays", &[GL_TRIANGLES, 0, 3]);
                f.at(c, 0x40_0000 + 0x100 * i as u64);
                if gpu {
                    f.counter(
                        c,
                        "gpu_time_serialized",
                        (600_000.0 * noise.factor(0.05)) as u64,
                    );
                }
                let t = (ns * noise.factor(0.05)) as u64;
                f.timed(c, t, t);
            }
        });
    }
    b.build()
}

#[test]
fn a_timeline_capture_is_ranked_by_cpu_time_and_judged_beyond_its_drift() {
    use gpuheat_analysis::measure::aggregate::CPU_TIME;
    // No GPU time (timeline mode): the draws are ranked by their CPU time in the call, and a
    // machine 1.6x busier moves them all together.
    let base = [100_000.0; 4];
    let a = timeline_session(1, 12, base);
    let d = diff(
        &a,
        &timeline_session(2, 12, base.map(|x| x * 1.6)),
        &DiffOptions::default(),
    );
    assert_eq!(d.matched[0].raw_time().metric, CPU_TIME);
    let drift = d.drift.expect("drift of the ranking time");
    assert!((1.45..1.75).contains(&drift.factor), "{drift:?}");
    assert!(d.matched.iter().all(|m| !m.time().verdict.significant()));
    // One call 4x the CPU time: that call alone.
    let mut one = base;
    one[2] *= 4.0;
    let d = diff(&a, &timeline_session(3, 12, one), &DiffOptions::default());
    for m in &d.matched {
        let slower = d.a.stats.draws[m.a].key.callsite == "0x400200";
        assert_eq!(m.time().verdict.significant(), slower, "{:?}", m.time());
    }
}

#[test]
fn cpu_times_moving_together_are_drift_too() {
    use gpuheat_analysis::compare::diff::{FRAME_CPU, FRAME_CPU_BEYOND_DRIFT, FRAME_WALL};
    use gpuheat_analysis::measure::aggregate::{CALL_TIME, CPU_TIME};
    let row = |d: &gpuheat_analysis::compare::diff::Diff, name: &str| {
        d.frames.iter().find(|c| c.metric == name).unwrap().clone()
    };
    let base = [100_000.0; 4];
    let a = cpu_session(1, 12, base);
    // Every call 1.6× the CPU time, the GPU times unchanged: the machine's CPU was busier (two
    // captures of one es2gears on llvmpipe moved by +54% this way).
    let busy = cpu_session(2, 12, base.map(|x| x * 1.6));
    let d = diff(&a, &busy, &DiffOptions::default());
    let cpu = d
        .call_drifts
        .iter()
        .find(|x| x.metric == CPU_TIME)
        .expect("CPU drift");
    assert!((1.45..1.75).contains(&cpu.factor), "{cpu:?}");
    assert!(d.call_drifts.iter().any(|x| x.metric == CALL_TIME));
    for m in &d.matched {
        for c in &m.metrics {
            assert!(!m.judged(c).verdict.significant(), "{:?}", m.judged(c));
        }
    }
    // The raw frame rows are shown, unjudged; their rows beyond the drift are noise.
    let raw = row(&d, FRAME_CPU);
    assert!(!d.frame_row_judged(&raw) && raw.ratio.unwrap().estimate > 1.4);
    // The wall time is judged raw: in full mode it is mostly the agent's waits for the GPU,
    // which no call's wall time holds.
    assert!(d.frame_row_judged(&row(&d, FRAME_WALL)));
    let beyond = row(&d, FRAME_CPU_BEYOND_DRIFT);
    assert!(d.frame_row_judged(&beyond));
    assert_eq!(beyond.verdict, Verdict::Noise);
    // One call 4× the CPU time, the others as in A: that call is the change, at draw and
    // frame level.
    let mut one = base;
    one[2] *= 4.0;
    let d = diff(&a, &cpu_session(3, 12, one), &DiffOptions::default());
    for m in &d.matched {
        let c = m.metrics.iter().find(|c| c.metric == CPU_TIME).unwrap();
        let slower = d.a.stats.draws[m.a].key.callsite == "0x400200";
        assert_eq!(
            m.judged(c).verdict.significant(),
            slower,
            "{:?}",
            m.judged(c)
        );
    }
    assert_eq!(row(&d, FRAME_CPU_BEYOND_DRIFT).verdict, Verdict::Higher);
    // --absolute judges the raw rows.
    let abs = diff(
        &a,
        &busy,
        &DiffOptions {
            absolute: true,
            ..DiffOptions::default()
        },
    );
    assert!(abs.call_drifts.is_empty());
    let raw = row(&abs, FRAME_CPU);
    assert!(abs.frame_row_judged(&raw));
    assert_eq!(raw.verdict, Verdict::Higher);
}

#[test]
fn inserted_removed_and_changed_draws() {
    let a = session(1, 6, &quads(3), 1.0, 7);
    // One more quad from the loop: only in B; the rest match by identity.
    let b = session(2, 6, &quads(4), 1.0, 7);
    let d = diff(&a, &b, &DiffOptions::default());
    assert_eq!((d.matched.len(), d.only_a.len(), d.only_b.len()), (4, 0, 1));
    assert_eq!(d.b.stats.draws[d.only_b[0]].key.ordinal, 3);
    assert!(d
        .matched
        .iter()
        .all(|m| m.matched_by == MatchedBy::Identity));

    // The hot draw now draws 6 vertices: same call site, another draw: aligned by site.
    let mut changed = quads(3);
    changed[3].count = 6;
    let c = session(3, 6, &changed, 1.0, 7);
    let d = diff(&a, &c, &DiffOptions::default());
    assert_eq!(d.matched.len(), 4);
    assert!(d.only_a.is_empty() && d.only_b.is_empty());
    let hot = d
        .matched
        .iter()
        .find(|m| d.a.stats.draws[m.a].key.callsite == "0x402000")
        .unwrap();
    assert_eq!(hot.matched_by, MatchedBy::CallSite);

    // Another build: every call site moved, the draws did not: aligned by shape.
    let moved: Vec<Draw> = quads(3)
        .into_iter()
        .map(|d| Draw {
            site: d.site + 0x40,
            ..d
        })
        .collect();
    let e = session(4, 6, &moved, 1.0, 7);
    let d = diff(&a, &e, &DiffOptions::default());
    assert_eq!(d.matched.len(), 4);
    assert!(d.matched.iter().all(|m| m.matched_by == MatchedBy::Shape));
}

#[test]
fn three_frames_are_too_few_to_call_anything() {
    let a = session(1, 3, &quads(3), 1.0, 7);
    let mut cheap = quads(3);
    cheap[3].ns /= 4.0;
    let b = session(2, 3, &cheap, 1.0, 7);
    let d = diff(&a, &b, &DiffOptions::default());
    assert!(
        d.warnings.iter().any(|w| w.contains("too few")),
        "{:?}",
        d.warnings
    );
    assert!(d
        .matched
        .iter()
        .all(|m| m.time().verdict == Verdict::TooFew));
}

/// `frames` frames of one draw and one state call; each frame's CPU time in GL is about
/// `cpu_ns` (the draw's, with noise), its draw `gpu_ns` of GPU time; frames in `slow` take
/// `slow_factor` times both.
fn steady_program(
    seed: u64,
    frames: u64,
    cpu_ns: f64,
    gpu_ns: f64,
    slow: &[u64],
    slow_factor: f64,
) -> SessionBuilder {
    let mut noise = Noise(seed);
    let mut b = SessionBuilder::new();
    for k in 1..=frames {
        let f = if slow.contains(&k) { slow_factor } else { 1.0 };
        b = b.frame_index(k).frame(|fr| {
            fr.call("glUseProgram", &[3]);
            let c = fr.call("glDrawArrays", &[GL_TRIANGLES, 0, 6]);
            let cpu = (cpu_ns * f * noise.factor(0.05)) as u64;
            fr.timed(c, cpu, cpu);
            fr.counter(
                c,
                "gpu_time_serialized",
                (gpu_ns * f * noise.factor(0.05)) as u64,
            );
        });
    }
    b
}

#[test]
fn warm_up_frames_are_left_out_of_the_draws_and_the_frames() {
    use gpuheat_analysis::measure::warmup::{is_warmup, WarmUp};
    // Frames 1 and 2 ten times slower, as the first captured frames after an attach were
    // before the agent warmed up; the agent marked them.
    let marked = steady_program(5, 12, 200_000.0, 1_000_000.0, &[1, 2], 10.0)
        .attached(Some(1))
        .warmup(1, "measured context 0x1")
        .warmup(2, "made the heat painter of context 0x1")
        .build();
    assert!(is_warmup(&marked, 1) && is_warmup(&marked, 2) && !is_warmup(&marked, 3));
    let st = aggregate(&marked, false);
    assert!(st.frames[0].warmup && st.frames[1].warmup && !st.frames[2].warmup);
    assert_eq!(st.steady_frames().len(), 10);
    let t = st.draws[0].metric(st.rank_metric()).unwrap();
    assert_eq!(t.n, 10, "the draw's figures leave the marked frames out");
    assert!(t.max < 2_000_000.0, "{t:?}");
    // Against a capture of the same program without slow frames: nothing changed.
    let clean = steady_program(6, 12, 200_000.0, 1_000_000.0, &[], 1.0)
        .attached(Some(1))
        .build();
    assert!(WarmUp::of(&clean).is_empty());
    let d = diff(&clean, &marked, &DiffOptions::default());
    for c in &d.frames {
        assert!(!c.verdict.significant(), "{c:?}");
    }
    assert!(d.matched.iter().all(|m| !m.time().verdict.significant()));
    // Unmarked, the second slow frame is a steady frame (the first is taken for a shader
    // compiled on first use), and in the figures.
    let unmarked = steady_program(5, 12, 200_000.0, 1_000_000.0, &[1, 2], 10.0)
        .attached(Some(1))
        .build();
    let st = aggregate(&unmarked, false);
    assert!(!st.frames[1].warmup && !st.frames[1].first_use);
    assert!(st.draws[0].metric(st.rank_metric()).unwrap().max > 5_000_000.0);
}

#[test]
fn the_first_frame_of_an_attach_without_warm_up_is_a_warm_up_frame() {
    use gpuheat_analysis::measure::warmup::WarmUp;
    // Agents before the warm-up ran none (SessionInfo::warmup_frames None): their first frame
    // after an attach held the capture's first-time work.
    let old = steady_program(7, 5, 200_000.0, 1_000_000.0, &[], 1.0)
        .attached(None)
        .build();
    assert_eq!(WarmUp::of(&old).frames().collect::<Vec<_>>(), vec![1]);
    let new = steady_program(7, 5, 200_000.0, 1_000_000.0, &[], 1.0)
        .attached(Some(1))
        .build();
    assert!(WarmUp::of(&new).is_empty());
    // A later capture of the same process needed none: its agent said so.
    let again = steady_program(7, 5, 200_000.0, 1_000_000.0, &[], 1.0)
        .attached(Some(0))
        .build();
    assert!(WarmUp::of(&again).is_empty());
    // A launched program's frames are its own (frame 0 is its set-up, the checklist's to
    // judge).
    let launched = steady_program(7, 5, 200_000.0, 1_000_000.0, &[], 1.0).build();
    assert!(WarmUp::of(&launched).is_empty());
    // Every frame a warm-up frame (a one-frame attach): its values are all there is.
    let one = steady_program(7, 1, 200_000.0, 1_000_000.0, &[], 1.0)
        .attached(None)
        .build();
    let st = aggregate(&one, false);
    assert_eq!(st.draws[0].metric(st.rank_metric()).unwrap().n, 1);
}

#[test]
fn frame_rows_are_held_to_the_draws_noise_model() {
    use gpuheat_analysis::compare::diff::{FRAME_CPU, FRAME_GPU};
    let row = |d: &gpuheat_analysis::compare::diff::Diff, name: &str| {
        d.frames.iter().find(|c| c.metric == name).unwrap().verdict
    };
    // CPU time in GL 15 µs apart in every frame (0.047 against 0.062 ms, as two captures of
    // one program on an H100 measured): consistent over ten frames a side, but below the
    // shift a draw's CPU time must make, and the draws agree it is noise.
    let a = steady_program(8, 10, 47_000.0, 1_000_000.0, &[], 1.0).build();
    let b = steady_program(9, 10, 62_000.0, 1_000_000.0, &[], 1.0).build();
    let d = diff(&a, &b, &DiffOptions::default());
    assert_eq!(row(&d, FRAME_CPU), Verdict::Noise);
    assert_eq!(row(&d, FRAME_GPU), Verdict::Noise);
    // Ten times the CPU time is a change, at frame level as at draw level.
    let c = steady_program(10, 10, 470_000.0, 1_000_000.0, &[], 1.0).build();
    let d = diff(&a, &c, &DiffOptions::default());
    assert_eq!(row(&d, FRAME_CPU), Verdict::Higher);
}

#[test]
fn presents_are_shown_apart_and_never_judged() {
    use gpuheat_analysis::compare::diff::{FRAME_CPU, FRAME_PRESENT, FRAME_WALL};
    // The same program, its presents ten times costlier in B: es2gears on llvmpipe, with no
    // gpuheat in the process, spent 88 to 1,011 µs of CPU per swap in stretches of seconds.
    let program = |seed: u64, present_ns: f64| {
        let mut noise = Noise(seed);
        let mut b = SessionBuilder::new();
        for k in 1..=10 {
            b = b.frame_index(k).frame(|fr| {
                let c = fr.call("glDrawArrays", &[GL_TRIANGLES, 0, 6]);
                let cpu = (100_000.0 * noise.factor(0.05)) as u64;
                fr.timed(c, cpu, cpu);
                fr.counter(
                    c,
                    "gpu_time_serialized",
                    (1_000_000.0 * noise.factor(0.05)) as u64,
                );
                let present = (present_ns * noise.factor(0.05)) as u64;
                fr.elapse(present);
                let s = fr.call("eglSwapBuffers", &[0x1, 0x2]);
                fr.timed(s, present, present);
            });
        }
        b.build()
    };
    let (a, b) = (program(11, 100_000.0), program(12, 1_000_000.0));
    let d = diff(&a, &b, &DiffOptions::default());
    let row = |name: &str| d.frames.iter().find(|c| c.metric == name).unwrap();
    // The program's own share of the frame did not change …
    assert_eq!(row(FRAME_CPU).verdict, Verdict::Noise);
    assert_eq!(row(FRAME_WALL).verdict, Verdict::Noise);
    let cpu = row(FRAME_CPU).a.as_ref().unwrap().median;
    assert!((90_000.0..115_000.0).contains(&cpu), "{cpu}");
    // … the present's did, and is shown with its size, untested.
    let present = row(FRAME_PRESENT);
    let shift = present.shift.unwrap().estimate;
    assert!((800_000.0..1_000_000.0).contains(&shift), "{shift}");
    assert_eq!(present.q, None);
    assert_eq!(present.verdict, Verdict::Noise);
}

#[test]
fn a_draw_whose_time_moved_with_its_fragments_is_not_called_slower() {
    // Two draws 1 ms each in A. In B the first shades 4x the fragments in 4x the time (an
    // animated scene: neverball's title screen drew 5x the fragments in one capture), the
    // second takes 4x the time for the same fragments: only the second got slower.
    let program = |seed: u64, work: f64, time: f64, slowed: f64| {
        let mut noise = Noise(seed);
        let mut b = SessionBuilder::new();
        for k in 1..=12 {
            b = b.frame_index(k).frame(|fr| {
                for (first, work, time) in [(0, work, time), (6, 1.0, slowed)] {
                    let c = fr.call("glDrawArrays", &[GL_TRIANGLES, first, 6]);
                    fr.timed(c, 50_000, 50_000);
                    let ns = 1_000_000.0 * time * noise.factor(0.05);
                    fr.counter(c, "gpu_time_serialized", ns as u64);
                    let fragments = (65_536.0 * work) as u64;
                    fr.counter(c, "fragment_shader_invocations", fragments);
                    fr.counter(c, "samples_passed", fragments);
                }
            });
        }
        b.build()
    };
    let (a, b) = (program(21, 1.0, 1.0, 1.0), program(22, 4.0, 4.0, 4.0));
    // On a GPU's threshold (5%), both draws' times are significant.
    let opts = DiffOptions {
        min_change: Some(0.05),
        ..DiffOptions::default()
    };
    let d = diff(&a, &b, &opts);
    assert_eq!(d.matched.len(), 2);
    let by_first = |first: u32| {
        d.matched
            .iter()
            .find(|m| {
                d.a.stats.draws[m.a]
                    .text
                    .contains(&format!(", {first}, 6)"))
            })
            .unwrap()
    };
    let (grown, slowed) = (by_first(0), by_first(6));
    assert_eq!(grown.time().verdict, Verdict::Higher);
    assert_eq!(slowed.time().verdict, Verdict::Higher);
    let work = grown.work.as_ref().expect("the grown draw's work change");
    assert_eq!(work.metric, "fragment_shader_invocations");
    assert!((work.ratio - 4.0).abs() < 1e-9, "{}", work.ratio);
    let per_unit = work.per_unit.unwrap();
    assert!((0.85..1.18).contains(&per_unit), "{per_unit}");
    // As diff's text and the viewer say it.
    let said = work.to_string();
    assert!(
        said.starts_with("fragment_shader_invocations x4.00, time per unit x"),
        "{said}"
    );
    assert!(grown.moved_with_work());
    // Same fragments: no work change to put it down to.
    assert!(slowed.work.is_none() && !slowed.moved_with_work());
    // A draw that did 30x the work in 10x the time is not slower at it either.
    let (a, b) = (program(23, 1.0, 1.0, 1.0), program(24, 30.0, 10.0, 1.0));
    let d = diff(&a, &b, &opts);
    let m = d.matched.iter().find(|m| m.work.is_some()).unwrap();
    assert_eq!(m.time().verdict, Verdict::Higher);
    assert!(m.moved_with_work(), "{:?}", m.work);
}
