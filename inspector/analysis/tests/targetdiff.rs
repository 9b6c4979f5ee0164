//! Render targets compared across two sessions (`gpuheat_analysis::compare::target`) and their
//! roles (`flow::roles`), on small sessions built in code.

use gpuheat_analysis::compare::diff::{diff, DiffOptions, Verdict};
use gpuheat_analysis::compare::heat::{heat_diff_of, MapChoice};
use gpuheat_analysis::compare::target::target_diff;
use gpuheat_analysis::measure::flow::{frame_flow, roles};
use gpuheat_session::Session;
use gpuheat_testkit::{texture_target, SessionBuilder};

/// `frames` frames: a pass of `pass_ns` (± a few percent, deterministic) into a 32×32
/// texture, composited onto a 16×16 square of a 64×64 screen by a 1 µs draw. With
/// `alternate`, odd frames render into a second texture of the same framebuffer (a pool).
fn session(frames: usize, pass_ns: f64, alternate: bool) -> Session {
    let mut b = SessionBuilder::new();
    for i in 0..frames {
        let jitter = 1.0 + 0.03 * ((i * 7 % 5) as f64 - 2.0) / 2.0;
        let (id, texture) = if alternate && i % 2 == 1 {
            (2, 8)
        } else {
            (1, 7)
        };
        b = b.frame(|f| {
            let mut target = texture_target(id, texture, 32, 32);
            target.framebuffer = 1;
            f.heat_map(64, 64).target(target);
            let pass = f.draw((pass_ns * jitter) as u64);
            f.cover_target(pass, id, [0, 0, 32, 32]);
            let composite = f.draw(1_000_000);
            f.cover(composite, [16, 16, 32, 32])
                .samples(composite, &[texture]);
        });
    }
    b.build()
}

#[test]
fn a_texture_pool_keeps_one_role_across_frames() {
    let s = session(4, 4e6, true);
    let mut seen = Vec::new();
    for (i, f) in s.frames.iter().enumerate() {
        let flow = frame_flow(&s, f.index).unwrap();
        let r = roles(&s, &flow);
        assert_eq!(r.len(), 2, "screen and the pass");
        assert!(r[0].screen);
        seen.push(r[1]);
        // The ids differ from frame to frame; the role does not.
        assert_eq!(flow.targets[1].key.id, if i % 2 == 0 { 1 } else { 2 });
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    assert_eq!(
        seen[0].to_string(),
        "context #0 framebuffer 1 32x32",
        "named by what it is"
    );
}

#[test]
fn a_cheaper_pass_is_lower_in_its_target_and_in_the_screens_total_only() {
    let (a, b) = (session(12, 8e6, false), session(12, 2e6, true));
    let d = diff(&a, &b, &DiffOptions::default());
    let t = target_diff(&a, &b, &d);
    assert_eq!(t.len(), 2, "{t:#?}");
    let pass = t.iter().find(|x| !x.role.screen).unwrap();
    assert_eq!(pass.frames, (12, 12));
    assert_eq!(pass.own.verdict, Verdict::Lower, "{:?}", pass.own);
    let ratio = pass.own.ratio.unwrap().estimate;
    assert!((ratio - 0.25).abs() < 0.02, "{ratio}");
    let screen = t.iter().find(|x| x.role.screen).unwrap();
    assert_eq!(screen.own.verdict, Verdict::Noise, "{:?}", screen.own);
    assert_eq!(screen.total.verdict, Verdict::Lower, "{:?}", screen.total);

    // Pixel by pixel, the screen's total map is 6 ms cheaper over the composite's square,
    // 6e6 / 256 ns per pixel, and unchanged elsewhere.
    let role = screen.role;
    let h = heat_diff_of(&a, &b, MapChoice { role, total: true }, 1.0, d.min_change).unwrap();
    let inside = h.diff[20 * 64 + 20];
    assert!(
        (f64::from(inside) + 6e6 / 256.0).abs() < 0.05 * 6e6 / 256.0,
        "{inside}"
    );
    assert_eq!(h.diff[2 * 64 + 2], 0.0);
    assert!((h.total() + 6e6).abs() < 0.05 * 6e6, "{}", h.total());
}

#[test]
fn a_target_on_one_side_only_is_too_few_to_judge() {
    let a = session(6, 4e6, false);
    let b = SessionBuilder::new()
        .frame(|f| {
            f.heat_map(64, 64);
            let d = f.draw(1_000_000);
            f.cover(d, [16, 16, 32, 32]);
        })
        .build();
    let d = diff(&a, &b, &DiffOptions::default());
    let t = target_diff(&a, &b, &d);
    let pass = t.iter().find(|x| !x.role.screen).unwrap();
    assert_eq!(
        (pass.label_a.as_deref(), pass.label_b.as_deref()),
        (Some("1"), None)
    );
    assert_eq!(pass.own.verdict, Verdict::TooFew);
}
