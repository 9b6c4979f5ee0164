//! The agent's waits for the GPU per captured frame (`AGNT` records, `gpuheat_counters::waits`),
//! counted on real captures of `many_draws` at 10 and 1,000 draws. Timeline mode never waits
//! within a frame, whatever the draw count. Full mode timed deferred (`--timing deferred`,
//! `auto`'s choice on immediate-mode GPUs) waits once per frame whatever the draw count, every
//! work call timed so; with geometry, twice (its replays read once, no drain or index read per
//! draw). Full mode isolated (`auto`'s choice on llvmpipe) drains the GPU before
//! and after each work call, so it waits exactly twice per work call: N draws + 1 glClear.

mod common;

use common::{capture_env, scratch, GPU_RESOLVE};
use gpuheat_session::control::env;
use gpuheat_session::{AgentFrame, Session};
use std::path::Path;

/// Captures `frames` frames of `many_draws --draws draws --tris 2` with `flags`, geometry off
/// unless `geometry`, and returns the agent's record of each captured frame but the last
/// (which also waits for the capture's last pipelined timestamps).
fn agent_frames(
    dir: &Path,
    flags: &[&str],
    geometry: bool,
    draws: u32,
    frames: u32,
) -> Vec<AgentFrame> {
    agent_frames_of(dir, flags, geometry, draws, frames, "gles")
}

/// [`agent_frames`] of many_draws on a context of `api`.
fn agent_frames_of(
    dir: &Path,
    flags: &[&str],
    geometry: bool,
    draws: u32,
    frames: u32,
    api: &str,
) -> Vec<AgentFrame> {
    agent_frames_with(dir, flags, geometry, (draws, 2), frames, (api, &[]))
}

/// [`agent_frames_of`] with `tris` triangles a draw, and `extra` in the program's
/// environment.
fn agent_frames_with(
    dir: &Path,
    flags: &[&str],
    geometry: bool,
    (draws, tris): (u32, u32),
    frames: u32,
    (api, extra): (&str, &[(&str, &str)]),
) -> Vec<AgentFrame> {
    let (draws_s, tris_s, frames_s) = (draws.to_string(), tris.to_string(), frames.to_string());
    let program_frames = (frames + 2).to_string();
    let mut gpuheat_args = flags.to_vec();
    gpuheat_args.extend(["--frames", &frames_s]);
    let s = capture_env(
        dir,
        &format!("{draws}x{tris}"),
        "many_draws",
        &gpuheat_args,
        &[
            "--api",
            api,
            "--draws",
            &draws_s,
            "--tris",
            &tris_s,
            "--frames",
            &program_frames,
        ],
        &[
            &[(
                env::GEOMETRY_VERTICES,
                if geometry { "4194304" } else { "0" },
            )],
            extra,
        ]
        .concat(),
    );
    assert_eq!(
        s.agent_frames.len(),
        frames as usize,
        "one AGNT record per frame"
    );
    let indices: Vec<u64> = s.frames.iter().map(|f| f.index).collect();
    let counted: Vec<u64> = s.agent_frames.iter().map(|a| a.frame).collect();
    assert_eq!(counted, indices, "the records name the captured frames");
    s.agent_frames[..frames as usize - 1].to_vec()
}

/// [`agent_frames`]' waits.
fn waits(dir: &Path, flags: &[&str], draws: u32, frames: u32) -> Vec<u64> {
    agent_frames(dir, flags, false, draws, frames)
        .iter()
        .map(|a| a.waits)
        .collect()
}

#[test]
fn timeline_mode_never_waits_within_a_frame_whatever_the_draw_count() {
    let dir = scratch("waits-timeline");
    let few = waits(&dir, &["--mode", "timeline"], 10, 4);
    let many = waits(&dir, &["--mode", "timeline"], 1000, 4);
    assert!(few.iter().all(|&w| w == 0), "10 draws: {few:?}");
    assert!(many.iter().all(|&w| w == 0), "1,000 draws: {many:?}");
}

#[test]
fn full_mode_timed_deferred_waits_once_per_frame_whatever_the_draw_count() {
    let dir = scratch("waits-deferred");
    let flags = ["--mode", "full", "--timing", "deferred"];
    let mut per_count = Vec::new();
    for draws in [10u32, 1000] {
        let frames = agent_frames(&dir, &flags, false, draws, 4);
        let work_calls = u64::from(draws) + 1;
        assert!(
            frames.iter().all(|a| a.deferred == work_calls),
            "{draws} draws: every work call timed deferred: {frames:?}"
        );
        per_count.push(frames.iter().map(|a| a.waits).collect::<Vec<_>>());
    }
    assert_eq!(per_count[0], per_count[1], "waits at 10 and 1,000 draws");
    assert!(
        per_count[0].iter().all(|&w| w == 1),
        "one wait per frame: {per_count:?}"
    );
    // With geometry: its replays read back once at the frame's end, with no drain after
    // each and no index buffer read (a deferred draw is replayed as drawn), and after the
    // calls' results have waited for the frame, which the replays are part of: their read
    // finds them done and waits no more (it was counted as a second wait before).
    let with_geometry: Vec<Vec<u64>> = [10u32, 1000]
        .iter()
        .map(|&draws| {
            agent_frames(&dir, &flags, true, draws, 4)
                .iter()
                .map(|a| a.waits)
                .collect()
        })
        .collect();
    // (Where the frame was done before either read, none waits: the release build here.)
    assert!(
        with_geometry.iter().flatten().all(|&w| w <= 1),
        "one wait per frame at most with geometry: {with_geometry:?}"
    );
}

#[test]
fn geometry_that_outgrows_its_buffer_waits_once_a_frame_once_it_has_grown() {
    // 100 draws of 3,000 vertices: 4.8 MB of positions a frame against a first buffer of
    // 1 MiB. The first frame reads back early each time the buffer fills and grows it; from
    // then on the frame's replays fit and are read once, at its end. (Before the buffer grew
    // whenever it filled, each frame waited 6 times here.)
    let dir = scratch("waits-geometry-growth");
    let flags = ["--mode", "full", "--timing", "deferred"];
    let frames = agent_frames_with(&dir, &flags, true, (100, 1000), 6, ("gl", &[]));
    let later: Vec<u64> = frames[2..].iter().map(|a| a.waits).collect();
    assert!(
        later.iter().all(|&w| w <= 2),
        "frames after the first two wait once for the replays (and once for the results): \
         {frames:?}"
    );
}

#[test]
fn a_display_list_is_counted_once_then_recorded_without_a_wait() {
    // fixed_function calls 4 display lists a frame (A, C, and D twice). Geometry learns what
    // a list generates by running it once and reading the count back (a wait); the count is
    // remembered by the list's name, so from the second frame on each call records at once
    // and the frame waits only for its replays (and its calls' results). Before, it waited 4
    // times in every frame. The positions are the same in every frame.
    let s = geometry_session("waits-lists", "fixed_function");
    let waits: Vec<u64> = s.agent_frames.iter().map(|a| a.waits).collect();
    assert!(
        waits[1..waits.len() - 1].iter().all(|&w| w <= 2),
        "frames after the first: {waits:?}"
    );
    same_vertices_in_every_frame(&s);
}

#[test]
fn a_text_of_display_lists_is_counted_once_then_recorded_without_a_wait() {
    // fixed_function --text 1 draws its moving list twice with one glCallLists of two names
    // through the list base, as a display list font draws text. The call's count is
    // remembered by its names, so from the second frame on it records at once, as a
    // glCallList does, and the frame waits once, for its calls' results, after which its
    // replays are done too. Before, the text was counted (a wait) in every frame: 2 a frame.
    let s = geometry_session_with("waits-text", "fixed_function", &["--text", "1"]);
    let waits: Vec<u64> = s.agent_frames.iter().map(|a| a.waits).collect();
    assert!(
        waits[1..waits.len() - 1].iter().all(|&w| w <= 1),
        "frames after the first: {waits:?}"
    );
    same_vertices_in_every_frame(&s);
}

#[test]
fn an_immediate_mode_block_is_recorded_without_a_count() {
    // immediate_mode draws 2 glBegin/glEnd blocks and a glRectf a frame. A block is run
    // again from the display list that recorded it, which says nothing of its vertices; its
    // glBegin's mode and the calls the program made up to its glEnd (one at least per vertex)
    // bound what it makes, and a rectangle is two triangles, so each records at once, with no
    // count read back first: from the first frame, the frame waits once, for its calls'
    // results, after which its replays are done too (their read finds them available).
    // Before, 4 times a frame; with the rectangle counted, twice.
    let s = geometry_session("waits-blocks", "immediate_mode");
    let waits: Vec<u64> = s.agent_frames.iter().map(|a| a.waits).collect();
    assert!(
        waits[..waits.len() - 1].iter().all(|&w| w <= 1),
        "every frame: {waits:?}"
    );
    same_vertices_in_every_frame(&s);
}

/// `example --frames 7` captured for 5 frames with geometry, timed deferred.
fn geometry_session(scratch_name: &str, name: &str) -> Session {
    geometry_session_with(scratch_name, name, &[])
}

/// [`geometry_session`] with `args` added to the example's.
fn geometry_session_with(scratch_name: &str, name: &str, args: &[&str]) -> Session {
    let example_args: Vec<&str> = ["--frames", "7"].iter().chain(args).copied().collect();
    capture_env(
        &scratch(scratch_name),
        "deferred",
        name,
        &["--timing", "deferred", "--frames", "5"],
        &example_args,
        &[(env::GEOMETRY_VERTICES, "4194304")],
    )
}

/// Every captured frame of `s` recorded its draws' vertices, the same in each.
fn same_vertices_in_every_frame(s: &Session) {
    let vertices: Vec<Vec<usize>> = s
        .geometry
        .iter()
        .map(|g| g.draws.iter().map(|d| d.positions.len()).collect())
        .collect();
    assert!(
        vertices.windows(2).all(|w| w[0] == w[1])
            && vertices.iter().all(|v| !v.is_empty())
            && s.geometry.iter().all(|g| g.missing.is_empty()),
        "every frame records the same vertices, none missing: {vertices:?}"
    );
}

#[test]
fn heat_of_deferred_draws_waits_as_often_at_10_and_1000_draws_on_gl_and_gles() {
    // Desktop GL: each draw's T and N reach the weighting passes through a buffer the GPU
    // writes; only the frame's one read waits (the slots, boxes, maps and colour, fetched
    // together from one pixel-pack buffer), after which the calls' results are ready. GLES
    // (no query buffer objects): each draw's counts are appended on the GPU to the tally,
    // read after that same one wait and weighed on the CPU (`tally.rs`); or, resolved on the
    // GPU (a hardware renderer's default), read before the maps (for the frame's times) and
    // drawn into them: a second wait.
    let dir = scratch("waits-heat-deferred");
    let flags = ["--mode", "full", "--heat", "--timing", "deferred"];
    let gpu = [GPU_RESOLVE];
    for (api, extra) in [("gl", &[][..]), ("gles", &[][..]), ("gles", &gpu[..])] {
        let per_count: Vec<Vec<AgentFrame>> = [10u32, 1000]
            .iter()
            .map(|&draws| agent_frames_with(&dir, &flags, false, (draws, 2), 4, (api, extra)))
            .collect();
        let api = format!("{api} {extra:?}");
        for (frames, draws) in per_count.iter().zip([10u64, 1000]) {
            assert!(
                frames.iter().all(|a| a.deferred == draws + 1),
                "{api}, {draws} draws: every work call (draws and the clear) deferred: \
                 {frames:?}"
            );
        }
        let waits = |i: usize| per_count[i].iter().map(|a| a.waits).collect::<Vec<_>>();
        assert_eq!(waits(0), waits(1), "{api}: waits at 10 and 1,000 draws");
        assert!(
            waits(0).iter().all(|&w| w <= 2),
            "{api}: issue 25's target, at most 2 a frame: {:?}",
            waits(0)
        );
    }
}

#[test]
fn draws_that_feed_the_flow_cost_no_wait_of_their_own_when_deferred() {
    // `chain`: B samples TA, X and Y sample TB, each a consumer whose coverage the flow keeps.
    // Timed deferred, that coverage comes from the tally's records at the flush (GL 4.3 and
    // GLES 3.1: `tally.rs`), not from a read of its counts per draw: the frame's one wait.
    // (With the counts read, desktop GL waited 4 times a frame here.)
    let dir = scratch("waits-consumers");
    for api in ["gl", "gles"] {
        let s = capture_env(
            &dir,
            api,
            "chain",
            &["--heat", "--timing", "deferred", "--frames", "4"],
            &[
                "--api", api, "--size", "128x64", "--target", "64", "--frames", "6",
            ],
            &[(env::GEOMETRY_VERTICES, "0")],
        );
        assert!(s.heat_missing.is_empty(), "{api}: {:?}", s.heat_missing);
        let frames = &s.agent_frames[..s.agent_frames.len() - 1];
        assert!(
            frames.iter().all(|a| a.deferred == 7 && a.waits == 1),
            "{api}: 7 work calls deferred and one wait in every frame: {frames:?}"
        );
        let kept = s
            .flow
            .iter()
            .flat_map(|f| f.draws.iter())
            .filter(|d| !d.coverage.is_empty())
            .count();
        assert_eq!(
            kept,
            3 * 4,
            "{api}: B, X and Y keep their coverage in all 4 frames"
        );
    }
}

#[test]
fn full_mode_isolated_waits_twice_per_work_call() {
    // A drain before and after each work call.
    let dir = scratch("waits-full");
    for draws in [10u32, 1000] {
        let w = waits(&dir, &["--mode", "full", "--timing", "isolated"], draws, 4);
        let work_calls = u64::from(draws) + 1;
        assert!(
            w.iter().all(|&n| n == 2 * work_calls),
            "{draws} draws: {w:?}, expected {} per frame",
            2 * work_calls
        );
    }
}

#[test]
fn heat_isolated_waits_once_more_per_painted_draw_and_once_for_the_flush_on_gl_and_gles() {
    // Beyond the two drains of each work call, each painted draw reads its count once (the
    // stencil on GL; on GLES, without GL_NV_read_stencil, the mask of its coverage: many_draws'
    // triangles never overlap, so no float read follows), and the frame's maps (the screen's
    // colour, heat and overdraw) come back in one read: GLES's pack buffer is fetched by
    // mapping it, having no glGetBufferSubData.
    let dir = scratch("waits-heat-isolated");
    for api in ["gl", "gles"] {
        for draws in [10u32, 100] {
            let w: Vec<u64> = agent_frames_of(
                &dir,
                &["--mode", "full", "--heat", "--timing", "isolated"],
                false,
                draws,
                4,
                api,
            )
            .iter()
            .map(|a| a.waits)
            .collect();
            let expected = 2 * (u64::from(draws) + 1) + u64::from(draws) + 1;
            assert!(
                w.iter().all(|&n| n == expected),
                "{api}, {draws} draws: {w:?}, expected {expected} per frame"
            );
        }
    }
}

/// The agent's own time, by what it did, follows what each mode does: timeline mode only
/// brackets its work calls (no heat painted, no maps, no geometry); full mode isolated drains
/// the GPU around each of them, so its brackets take longer than timeline's timestamps alone;
/// heat paints and reads maps back; geometry replays.
#[test]
fn the_agent_times_its_own_work_by_what_it_did() {
    let dir = scratch("waits-own-time");
    let median = |frames: &[AgentFrame], part: fn(&AgentFrame) -> u64| {
        let mut v: Vec<u64> = frames.iter().map(part).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let timeline = agent_frames(&dir, &["--mode", "timeline"], false, 100, 4);
    assert!(median(&timeline, |f| f.own.counters_ns) > 0, "{timeline:?}");
    for f in &timeline {
        assert_eq!(
            (f.own.paint_ns, f.own.maps_ns, f.own.geometry_ns),
            (0, 0, 0),
            "{f:?}"
        );
    }
    let isolated = agent_frames(
        &dir,
        &["--mode", "full", "--timing", "isolated"],
        false,
        100,
        4,
    );
    assert!(
        median(&isolated, |f| f.own.counters_ns) > median(&timeline, |f| f.own.counters_ns),
        "200 drains a frame take longer than 200 timestamps: {isolated:?} {timeline:?}"
    );
    let heat = agent_frames(&dir, &["--mode", "full", "--heat"], true, 100, 4);
    for part in [
        |f: &AgentFrame| f.own.paint_ns,
        |f: &AgentFrame| f.own.maps_ns,
        |f: &AgentFrame| f.own.geometry_ns,
    ] {
        assert!(median(&heat, part) > 0, "{heat:?}");
    }
    // Heat weighed on the CPU (GLES: no query buffers) has no GPU times of its passes; on
    // desktop GL, weighed on the GPU, every frame has them, every painted draw timed.
    assert!(heat.iter().all(|f| f.own.paint_gpu.is_none()), "{heat:?}");
    let gl = agent_frames_of(&dir, &["--mode", "full", "--heat"], false, 100, 4, "gl");
    for f in &gl {
        let gpu = f.own.paint_gpu.unwrap_or_else(|| panic!("{f:?}"));
        assert!(gpu.replay_ns + gpu.weight_ns > 0, "{f:?}");
        assert_eq!(gpu.untimed, 0, "{f:?}");
    }
}

#[test]
fn dispatches_blits_and_copies_under_heat_wait_for_nothing_of_their_own_when_deferred() {
    // A dispatch, blit or copy has no fragments: its time is spread evenly over what it
    // writes. Timed deferred, the flush adds that share to the map it read back, after the
    // frame's one wait, instead of timing the call isolated (two waits of its own) so its
    // share is known when it is painted. compute_pass: clear, dispatch, two draws;
    // offscreen_pass --blit 1 and --copy 1: five draws and clears around the blit or copy.
    let dir = scratch("waits-spreads");
    for api in ["gl", "gles"] {
        for (name, extra) in [
            ("compute_pass", &["--target", "32"][..]),
            ("offscreen_pass", &["--target", "32", "--blit", "1"][..]),
            ("offscreen_pass", &["--target", "32", "--copy", "1"][..]),
        ] {
            let mut args = vec!["--api", api, "--size", "96x64", "--frames", "6"];
            args.extend_from_slice(extra);
            let s = capture_env(
                &dir,
                &format!("{api}{}", extra.join("")),
                name,
                &["--heat", "--timing", "deferred", "--frames", "4"],
                &args,
                &[(env::GEOMETRY_VERTICES, "0")],
            );
            let what = format!("{name} {extra:?} {api}");
            assert!(s.heat_missing.is_empty(), "{what}: {:?}", s.heat_missing);
            let work = s
                .frames
                .iter()
                .map(|f| f.samples.len() as u64)
                .collect::<Vec<_>>();
            let frames = &s.agent_frames[..s.agent_frames.len() - 1];
            for (a, &n) in frames.iter().zip(&work) {
                assert!(
                    a.deferred == n && a.waits == 1,
                    "{what}: every one of the {n} work calls deferred and one wait: {a:?}"
                );
            }
        }
    }
}
