//! The performance checklist on the examples that misbehave on purpose: each one's documented
//! misbehaviour is found, with its documented numbers, and the well-behaved variants are not
//! flagged.

mod common;

use common::*;
use serde_json::Value;

/// The findings of a rule in a `report --json`.
fn findings<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

fn title(f: &Value) -> &str {
    f["title"].as_str().unwrap()
}

#[test]
fn state_churn_has_six_redundant_state_calls_per_draw() {
    // The example re-sets six values per draw to what they already are, and changes one
    // (u_rect): 7·D state calls, 6·D redundant once every slot has been seen. State outlives
    // frames, so only the first captured frame misses calls whose previous value was set
    // before the capture: four of the six, as the capture's start state records the program
    // in use and the vertex array.
    let dir = scratch("findings-state-churn");
    let d = 50;
    let s = capture(
        &dir,
        "state_churn",
        &["--frames", "3"],
        &["--draws", &d.to_string()],
    );
    let r = report(&s);
    let found = findings(&r, "redundant-state");
    let titles: Vec<&str> = found.iter().map(|f| title(f)).collect();
    assert_eq!(found.len(), 3, "{titles:?}");
    assert!(
        titles[0].starts_with(&format!("{} of {} ", 6 * d - 4, 7 * d)),
        "{titles:?}"
    );
    for t in &titles[1..] {
        assert!(t.starts_with(&format!("{} of {} ", 6 * d, 7 * d)), "{t}");
    }
}

#[test]
fn overdraw_layers_are_the_mean_overdraw() {
    // k full-screen layers shade every pixel k times.
    let dir = scratch("findings-overdraw");
    for k in [1, 6] {
        let s = capture(
            &dir,
            "overdraw",
            &["--heat", "--frames", "1"],
            &["--layers", &k.to_string(), "--size", "96x64"],
        );
        let r = report(&s);
        let found = findings(&r, "overdraw");
        if k == 1 {
            assert!(found.is_empty(), "one layer flagged: {found:?}");
        } else {
            assert_eq!(found.len(), 1);
            assert!(
                title(found[0]).contains(&format!("{k}.0 times on average (at most {k})")),
                "{}",
                title(found[0])
            );
        }
    }
}

#[test]
fn hot_spot_is_the_expensive_fragment_draw() {
    // The hot spot is each frame's last draw and its fragment shader loops L times per pixel
    // against 1 for the full-screen draws: its cost per fragment stands out. Judged on its
    // median over the steady frames, it is one finding, pointing at the last draw of its
    // frame. The rule compares only draws above the noise floor (10 µs, or 3x the context's
    // bracket overhead, docs/ARCHITECTURE.md): on llvmpipe the 256x256 quads take 0.3-0.6
    // ms; on an H100 they take 9-16 µs, mostly the bracket's own cost, and the rule must stay
    // silent rather than compare noise.
    let dir = scratch("findings-hot-spot");
    let s = capture(&dir, "hot_spot", &["--heat", "--frames", "5"], &[]);
    let r = report(&s);
    let found = findings(&r, "expensive-fragments");
    let session = gpuheat_session::Session::open(&s).unwrap();
    let warm = gpuheat_analysis::measure::warmup::WarmUp::of(&session);
    let steady: Vec<u64> = session
        .frames
        .iter()
        .map(|f| f.index)
        .filter(|&f| !warm.contains(f))
        .collect();
    assert!(steady.len() >= 4, "{steady:?}: steady frames of 5");
    // The report lists the others as warm-up frames, each with what the agent did in it.
    let listed = r["warmup"].as_array().map_or(0, Vec::len);
    assert_eq!(listed, 5 - steady.len(), "{}", r["warmup"]);
    for w in r["warmup"].as_array().into_iter().flatten() {
        assert!(!w["reasons"].as_array().unwrap().is_empty(), "{w}");
    }
    let overhead = session.contexts[0].serialized_overhead_ns;
    let floor = 10_000.max(3 * overhead);
    // The quads: the draws each frame's heat map says covered 65,536 fragments.
    let quad_calls: Vec<(u64, u32)> = session
        .heat
        .iter()
        .filter(|m| steady.contains(&m.frame))
        .flat_map(|m| {
            m.draws
                .iter()
                .filter(|d| d.fragments == 65_536)
                .map(move |d| (m.frame, d.call))
        })
        .collect();
    let mut quads: Vec<u64> = gpuheat_analysis::analyse(&session)
        .draws
        .iter()
        .filter(|d| quad_calls.contains(&(d.frame, d.call)))
        .filter_map(|d| d.gpu_serialized_ns)
        .collect();
    assert!(!quads.is_empty(), "no full-screen quad measured");
    quads.sort_unstable();
    let quad = quads[quads.len() / 2];
    if quad < floor {
        eprintln!("the full-screen quads take {quad} ns, under the {floor} ns floor: not judged");
        assert!(found.is_empty(), "{found:?}");
        return;
    }
    assert_eq!(found.len(), 1, "{found:?}");
    let frame = found[0]["frame"].as_u64().unwrap();
    let last_draw = frame_draws(&r, frame)
        .iter()
        .filter(|d| d["function"] == "glDrawArrays")
        .map(|d| d["call"].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(found[0]["call"].as_u64(), Some(last_draw));
    assert!(
        title(found[0]).contains(&format!("medians over {} frames", steady.len())),
        "{}",
        title(found[0])
    );
}

#[test]
fn many_tiny_draws_are_worth_batching() {
    let dir = scratch("findings-tiny");
    for (draws, flagged) in [(2000, true), (20, false)] {
        let s = capture(
            &dir,
            "tiny_batches",
            &["--frames", "1"],
            &["--draws", &draws.to_string()],
        );
        let r = report(&s);
        let found = findings(&r, "small-draws");
        assert_eq!(!found.is_empty(), flagged, "{draws} draws: {found:?}");
        if flagged {
            assert!(
                title(found[0]).starts_with(&format!("{draws} draws")),
                "{}",
                title(found[0])
            );
        }
    }
}

#[test]
fn glfinish_every_frame_is_a_stall() {
    let dir = scratch("findings-stall");
    for (timing, stalls) in [(true, 1), (false, 0)] {
        let mut args = vec!["--layers", "2", "--size", "64x64"];
        if timing {
            args.push("--timing");
        }
        let s = capture(&dir, "overdraw", &["--frames", "1"], &args);
        let r = report(&s);
        let found = findings(&r, "pipeline-stall");
        assert_eq!(found.len(), stalls, "--timing {timing}: {found:?}");
        if timing {
            assert!(title(found[0]).starts_with("glFinish"));
        }
    }
}
