//! Cost flowing from offscreen passes to the screen (`gpuheat_analysis::measure::flow`), on small
//! sessions built in code: each test checks the passes, the costs, the remainders and that
//! `Σ total(screen) + Σ remainders = Σ T_d` of every painted draw.

use gpuheat_analysis::measure::flow::{
    frame_flow, summarise, FrameFlowCost, RemainderKind, TargetKey,
};
use gpuheat_session::Session;
use gpuheat_testkit::{texture_target, SessionBuilder, CONTEXT};

const SCREEN: TargetKey = TargetKey {
    context: CONTEXT,
    id: 0,
};

fn key(id: u32) -> TargetKey {
    TargetKey {
        context: CONTEXT,
        id,
    }
}

/// The flow of the session's only frame, checked for conservation within 1e-4 relative.
fn flow(s: &Session) -> FrameFlowCost {
    let f = frame_flow(s, s.frames[0].index).expect("the frame has maps");
    let (screens, rest, painted) = f.balance();
    assert!(
        (screens + rest - painted).abs() <= 1e-4 * painted.max(1.0),
        "screen {screens} + remainders {rest} != painted {painted}"
    );
    f
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} != {b}");
}

fn at(map: &[f64], x: usize, y: usize) -> f64 {
    map[y * 64 + x]
}

#[test]
fn work_calls_no_map_holds_are_named_not_placed() {
    // A clear (600 ns) and a draw the screen's map holds (4 µs): the clear has no fragments,
    // so it is listed as not placed, and the frame's work is 4.6 µs.
    let mut clear = 0;
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64);
            clear = f.clear(600);
            let d = f.draw(4_000);
            f.cover(d, [0, 0, 32, 32]);
        })
        .build();
    let f = flow(&s);
    assert_eq!(f.unplaced.len(), 1, "{:?}", f.unplaced);
    let u = &f.unplaced[0];
    assert_eq!(
        (u.call, u.function.as_str(), u.ns),
        (clear, "glClear", 600.0)
    );
    let (screens, rest, painted) = f.balance();
    let unplaced: f64 = f.unplaced.iter().map(|u| u.ns).sum();
    close(screens + rest + unplaced, 4_600.0);
    close(painted, 4_000.0);
    let sum = summarise(&s).unwrap();
    assert_eq!(sum.unplaced.len(), 1);
    assert_eq!(
        (sum.unplaced[0].function.as_str(), sum.unplaced[0].ns.median),
        ("glClear", 600.0)
    );
}

#[test]
fn one_pass_flows_to_the_pixels_that_sampled_it() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64).target(texture_target(1, 7, 32, 32));
            let a = f.draw(4_000);
            f.cover_target(a, 1, [0, 0, 32, 32]);
            let b = f.draw(1_000);
            f.cover(b, [0, 0, 16, 16]).samples(b, &[7]);
        })
        .build();
    let f = flow(&s);
    assert_eq!(f.passes.len(), 2);
    assert!(f.remainders.is_empty(), "{:?}", f.remainders);
    let t = f.target(key(1)).unwrap();
    assert_eq!(
        (t.label.as_str(), t.own_ns, t.total_ns),
        ("1", 4_000.0, 4_000.0)
    );
    assert_eq!(t.consumers, vec![1]);
    assert_eq!(t.feeds, vec![SCREEN]);
    let total = f.total_map(SCREEN).unwrap();
    close(total.iter().sum(), 5_000.0);
    close(at(&total, 3, 3), 5_000.0 / 256.0);
    assert_eq!(at(&total, 20, 20), 0.0);
    // The own map is untouched: the screen's own cost is the consumer's.
    let own: f32 = f.target(SCREEN).unwrap().own.iter().sum();
    assert!((f64::from(own) - 1_000.0).abs() < 1e-2);
    assert!(f.spreading.contains("evenly"));
}

#[test]
fn a_chain_reaches_the_screen_and_a_pick_splits_it_by_pass() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64)
                .target(texture_target(1, 7, 16, 16))
                .target(texture_target(2, 8, 16, 16));
            let a = f.draw(3_000);
            f.cover_target(a, 1, [0, 0, 16, 16]);
            let b = f.draw(2_000);
            f.cover_target(b, 2, [0, 0, 16, 16]).samples(b, &[7]);
            let c = f.draw(1_000);
            f.cover(c, [0, 0, 10, 10]).samples(c, &[8]);
        })
        .build();
    let f = flow(&s);
    assert!(f.remainders.is_empty());
    assert_eq!(f.target(key(2)).unwrap().total_ns, 5_000.0);
    assert_eq!(f.target(key(1)).unwrap().feeds, vec![key(2)]);
    let total = f.total_map(SCREEN).unwrap();
    close(total.iter().sum(), 6_000.0);
    // The chain's own map of target 2 holds A's cost too.
    let t2 = f.total_map(key(2)).unwrap();
    close(t2.iter().sum(), 5_000.0);

    let p = f.pick(SCREEN, 5, 5).unwrap();
    close(p.own_ns, 10.0);
    close(p.total_ns, 60.0);
    let parts: Vec<(&str, f64)> = p
        .upstream
        .iter()
        .map(|u| (u.label.as_str(), u.ns))
        .collect();
    assert_eq!(parts.len(), 2);
    assert_eq!((parts[0].0, parts[1].0), ("1", "2"));
    close(parts[0].1, 30.0);
    close(parts[1].1, 20.0);
    close(p.upstream[0].share, 0.5);
    assert_eq!(p.upstream[0].calls, vec![0]);
    assert!(f.pick(SCREEN, 40, 40).unwrap().upstream.is_empty());
    assert!(f.pick(SCREEN, 64, 0).is_none());
}

#[test]
fn one_texture_feeding_two_consumers_is_split_by_their_fragments() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64).target(texture_target(1, 7, 8, 8));
            let a = f.draw(3_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let b = f.draw(100);
            f.cover(b, [0, 0, 10, 10]).samples(b, &[7]);
            let c = f.draw(200);
            f.cover(c, [20, 20, 30, 40]).samples(c, &[7]);
        })
        .build();
    let f = flow(&s);
    assert_eq!(f.draws[1].inflow_ns, 1_000.0);
    assert_eq!(f.draws[2].inflow_ns, 2_000.0);
    let total = f.total_map(SCREEN).unwrap();
    close(at(&total, 1, 1), (100.0 + 1_000.0) / 100.0);
    close(at(&total, 25, 35), (200.0 + 2_000.0) / 200.0);
    assert_eq!(f.target(key(1)).unwrap().consumers, vec![1, 2]);
}

#[test]
fn a_pass_nothing_samples_is_a_named_remainder() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64).target(texture_target(1, 7, 8, 8));
            let a = f.draw(3_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let b = f.draw(1_000);
            f.cover(b, [0, 0, 10, 10]);
        })
        .build();
    let f = flow(&s);
    assert_eq!(f.remainders.len(), 1);
    let r = &f.remainders[0];
    assert_eq!(
        (r.kind, r.label.as_str(), r.ns, r.pass),
        (RemainderKind::NotSampled, "1", 3_000.0, Some(0))
    );
    assert!(r.kind.why().contains("read back"));
    close(f.total_map(SCREEN).unwrap().iter().sum(), 1_000.0);
}

#[test]
fn a_chain_that_ends_offscreen_is_one_remainder_holding_its_upstream() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64)
                .target(texture_target(1, 7, 8, 8))
                .target(texture_target(2, 8, 8, 8));
            let a = f.draw(3_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let b = f.draw(500);
            f.cover_target(b, 2, [0, 0, 8, 8]).samples(b, &[7]);
            let c = f.draw(100);
            f.cover(c, [0, 0, 4, 4]);
        })
        .build();
    let f = flow(&s);
    assert_eq!(f.remainders.len(), 1);
    assert_eq!(f.remainders[0].label, "2");
    assert_eq!(f.remainders[0].ns, 3_500.0);
}

#[test]
fn a_target_redrawn_after_being_read_is_a_second_pass() {
    // Ping-pong: 1 → 2 → 1 → screen; the screen reads 1's second pass.
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64)
                .target(texture_target(1, 7, 8, 8))
                .target(texture_target(2, 8, 8, 8));
            let a = f.draw(100);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let b = f.draw(200);
            f.cover_target(b, 2, [0, 0, 8, 8]).samples(b, &[7]);
            let c = f.draw(300);
            f.cover_target(c, 1, [0, 0, 8, 8]).samples(c, &[8]);
            let d = f.draw(400);
            f.cover(d, [0, 0, 8, 8]).samples(d, &[7]);
        })
        .build();
    let f = flow(&s);
    let t1 = f.target(key(1)).unwrap();
    assert_eq!(t1.passes.len(), 2);
    let costs: Vec<f64> = f.passes.iter().map(|p| p.cost_ns).collect();
    assert_eq!(costs, vec![100.0, 300.0, 600.0, 1_000.0]);
    assert!(f.remainders.is_empty(), "{:?}", f.remainders);
    close(f.total_map(SCREEN).unwrap().iter().sum(), 1_000.0);
    assert_eq!(t1.own_ns, 400.0);
    // 1's content cost a + b + c: what its second pass got back from its first (through 2)
    // is counted once, in the first.
    assert_eq!(t1.total_ns, 600.0);
    close(f.total_map(key(1)).unwrap().iter().sum(), 600.0);
    let d = f.draws.iter().find(|d| d.call == 2).unwrap();
    assert_eq!((d.inflow_ns, d.fresh_inflow_ns), (300.0, 200.0));
}

#[test]
fn sampling_the_target_being_drawn_is_feedback_not_consumption() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64).target(texture_target(1, 7, 8, 8));
            let a = f.draw(100);
            f.cover_target(a, 1, [0, 0, 8, 8]).samples(a, &[7]);
            let b = f.draw(100);
            f.cover_target(b, 1, [0, 0, 8, 8]).samples(b, &[7]);
            let c = f.draw(50);
            f.cover(c, [0, 0, 8, 8]).samples(c, &[7]);
        })
        .build();
    let f = flow(&s);
    assert_eq!(f.target(key(1)).unwrap().passes.len(), 1);
    assert_eq!(f.passes[0].cost_ns, 200.0);
    assert!(
        f.notes.iter().any(|n| n.contains("feedback")),
        "{:?}",
        f.notes
    );
    close(f.total_map(SCREEN).unwrap().iter().sum(), 250.0);
}

#[test]
fn contexts_sharing_a_texture_name_flow_into_each_other() {
    const OTHER: u64 = 0x2000;
    let s = SessionBuilder::new()
        .context(OTHER)
        .frame(|f| {
            f.on_context(OTHER).target(texture_target(1, 7, 8, 8));
            let a = f.draw(3_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            // The window's context has a target 1 of its own, never sampled.
            f.on_context(CONTEXT)
                .heat_map(64, 64)
                .target(texture_target(1, 5, 8, 8));
            let b = f.draw(700);
            f.cover_target(b, 1, [0, 0, 8, 8]);
            let c = f.draw(1_000);
            f.cover(c, [0, 0, 10, 10]).samples(c, &[7]);
        })
        .build();
    let f = flow(&s);
    let other = TargetKey {
        context: OTHER,
        id: 1,
    };
    assert_eq!(f.target(other).unwrap().label, "0x2000:1");
    assert_eq!(f.target(other).unwrap().feeds, vec![SCREEN]);
    close(f.total_map(SCREEN).unwrap().iter().sum(), 4_000.0);
    assert_eq!(f.remainders.len(), 1);
    assert_eq!(f.remainders[0].label, "0x1000:1");
    assert_eq!(f.remainders[0].ns, 700.0);
    // Ids that collide need the context; the error lists the choices.
    assert_eq!(f.find("0x2000:1").unwrap().key, other);
    assert_eq!(f.find("screen").unwrap().key, SCREEN);
    assert_eq!(f.find("0x1000:0").unwrap().key, SCREEN);
    let e = f.find("1").unwrap_err();
    assert!(e.contains("0x1000:1") && e.contains("0x2000:1"), "{e}");
}

#[test]
fn lost_coverage_empty_consumers_and_empty_draws_are_accounted_for() {
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64)
                .target(texture_target(1, 7, 8, 8))
                .target(texture_target(2, 8, 8, 8));
            let a = f.draw(3_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            // Consumer without kept coverage: spread over its box [0,0,4,4] ∪ [6,6,8,8].
            let b = f.draw(100);
            f.cover(b, [0, 0, 4, 4])
                .cover(b, [6, 6, 8, 8])
                .samples(b, &[7])
                .coverage_dropped(b, "coverage budget");
            let c = f.draw(500);
            f.cover_target(c, 2, [0, 0, 8, 8]);
            // Target 2's only consumer draws nothing.
            let d = f.draw(40);
            f.cover(d, [0, 0, 0, 0]).samples(d, &[8]);
        })
        .build();
    let f = flow(&s);
    let kinds: Vec<(RemainderKind, f64)> = f.remainders.iter().map(|r| (r.kind, r.ns)).collect();
    assert_eq!(
        kinds,
        vec![
            (RemainderKind::ConsumersDrewNothing, 500.0),
            (RemainderKind::NoFragments, 40.0)
        ]
    );
    assert!(f
        .notes
        .iter()
        .any(|n| n.contains("spread evenly over the draw's box")));
    let total = f.total_map(SCREEN).unwrap();
    // 3,000 ns over the 8×8 box, the own 100 ns over its 20 fragments.
    close(at(&total, 5, 5), 3_000.0 / 64.0);
    close(at(&total, 1, 1), 3_000.0 / 64.0 + 100.0 / 20.0);
}

#[test]
fn records_of_one_target_sent_in_pieces_add_up() {
    let build = || {
        SessionBuilder::new()
            .frame(|f| {
                f.heat_map(64, 64).target(texture_target(1, 7, 8, 8));
                let a = f.draw(1_000);
                f.cover_target(a, 1, [0, 0, 8, 8]);
                let b = f.draw(3_000);
                f.cover_target(b, 1, [0, 0, 4, 8]);
                let c = f.draw(100);
                f.cover(c, [0, 0, 10, 10]).samples(c, &[7]);
            })
            .build()
    };
    let whole = build();
    let mut split = build();
    // The context flushed between a and b: two HTGT and two FLOW records.
    let mut t2 = split.target_heat[0].clone();
    let t1 = &mut split.target_heat[0];
    for (h, h2) in t1.heat.iter_mut().zip(t2.heat.iter_mut()) {
        *h *= 0.25;
        *h2 *= 0.75;
    }
    t2.overdraw.iter_mut().for_each(|o| *o = 0);
    t2.draws = t1.draws.split_off(1);
    split.target_heat.push(t2);
    let mut f2 = split.flow[0].clone();
    f2.draws = split.flow[0].draws.split_off(1);
    split.flow.push(f2);
    let (a, b) = (flow(&whole), flow(&split));
    assert_eq!(a.passes.len(), b.passes.len());
    assert_eq!(a.target(key(1)).unwrap().own_ns, 4_000.0);
    assert_eq!(b.target(key(1)).unwrap().own_ns, 4_000.0);
    assert_eq!(
        b.target(key(1)).unwrap().overdraw,
        a.target(key(1)).unwrap().overdraw
    );
    close(
        b.total_map(SCREEN).unwrap().iter().sum(),
        a.total_map(SCREEN).unwrap().iter().sum(),
    );
}

#[test]
fn the_summary_gives_each_target_its_median_over_frames() {
    let mut b = SessionBuilder::new();
    for t in [1_000, 2_000, 3_000] {
        b = b.frame(|f| {
            f.heat_map(64, 64).target(texture_target(1, 7, 8, 8));
            let a = f.draw(t);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let c = f.draw(100);
            f.cover(c, [0, 0, 10, 10]).samples(c, &[7]);
            let u = f.draw(50);
            f.cover_target(u, 1, [0, 0, 8, 8]);
        });
    }
    let s = b.build();
    let sum = summarise(&s).unwrap();
    assert_eq!(sum.frames, 3);
    assert_eq!(sum.targets[0].label, "screen");
    assert_eq!(sum.targets[0].total_ns.median, 2_100.0);
    let t1 = &sum.targets[1];
    assert_eq!((t1.label.as_str(), t1.frames), ("1", 3));
    assert_eq!(t1.own_ns.median, 2_050.0);
    assert_eq!(t1.own_ns.min, 1_050.0);
    assert_eq!((t1.passes, t1.consumers), (2.0, 1.0));
    assert_eq!(t1.feeds, vec!["screen".to_string()]);
    // The draw after the consumer starts a second pass that nothing reads.
    assert_eq!(sum.remainders.len(), 1);
    assert_eq!(sum.remainders[0].kind, RemainderKind::NotSampled);
    assert_eq!(sum.remainders[0].ns.median, 50.0);
}

#[test]
fn a_draw_the_agent_could_not_paint_counts_for_its_target_as_a_remainder() {
    // The agent lists an unpainted draw in the screen's map with 0 fragments and says in its
    // flow entry where it drew and why.
    let mut s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64).target(texture_target(1, 7, 8, 8));
            let a = f.draw(1_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let b = f.draw(300);
            f.cover(b, [0, 0, 0, 0]);
            let c = f.draw(100);
            f.cover(c, [0, 0, 4, 4]).samples(c, &[7]);
        })
        .build();
    let entry = s.flow[0].draws.iter_mut().find(|d| d.call == 1).unwrap();
    entry.target = 1;
    entry.note = "not painted: the program had a query of its own active".into();
    let f = flow(&s);
    let r = &f.remainders[0];
    assert_eq!(
        (r.kind, r.label.as_str(), r.ns, r.call),
        (RemainderKind::NotPainted, "1", 300.0, Some(1))
    );
    assert!(r.note.contains("query of its own"));
    // It belongs to target 1 (own 1,300 ns), not to the screen (100 ns), and its pass.
    assert_eq!(f.target(key(1)).unwrap().own_ns, 1_300.0);
    assert_eq!(f.target(SCREEN).unwrap().own_ns, 100.0);
    assert_eq!(f.target(key(1)).unwrap().passes.len(), 1);
    close(f.total_map(SCREEN).unwrap().iter().sum(), 1_100.0);
}

#[test]
fn a_diamond_is_picked_once_per_pass_and_adds_up_to_the_pixel() {
    // A → B and A → C (split 1:3 by fragments), B and C → the screen draw D.
    let s = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64)
                .target(texture_target(1, 7, 8, 8))
                .target(texture_target(2, 8, 8, 8))
                .target(texture_target(3, 9, 8, 8));
            let a = f.draw(4_000);
            f.cover_target(a, 1, [0, 0, 8, 8]);
            let b = f.draw(1_000);
            f.cover_target(b, 2, [0, 0, 4, 4]).samples(b, &[7]);
            let c = f.draw(2_000);
            f.cover_target(c, 3, [0, 0, 8, 6]).samples(c, &[7]);
            let d = f.draw(800);
            f.cover(d, [0, 0, 8, 8]).samples(d, &[8, 9]);
        })
        .build();
    let f = flow(&s);
    assert!(f.remainders.is_empty());
    let total = f.total_map(SCREEN).unwrap();
    close(total.iter().sum(), 7_800.0);
    let p = f.pick(SCREEN, 3, 3).unwrap();
    close(p.total_ns, at(&total, 3, 3));
    close(
        p.own_ns + p.upstream.iter().map(|u| u.ns).sum::<f64>(),
        p.total_ns,
    );
    // Per pixel of D's 64: A 4,000, B 1,000, C 2,000, own 800.
    let ns = |label: &str| p.upstream.iter().find(|u| u.label == label).unwrap().ns;
    close(ns("1"), 4_000.0 / 64.0);
    close(ns("2"), 1_000.0 / 64.0);
    close(ns("3"), 2_000.0 / 64.0);
    close(p.own_ns, 800.0 / 64.0);
}
