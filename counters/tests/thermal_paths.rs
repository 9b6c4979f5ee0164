//! Heat painting's three ways of counting a draw's fragments per pixel, on real GL 4.5 and
//! GLES 3.2 contexts (Mesa llvmpipe): reading the stencil back directly, and what drivers
//! without `GL_NV_read_stencil` take: one pass writing the sampled stencil as bytes, or the
//! mask passes where the stencil cannot be sampled. All give the overdraw the rectangles'
//! geometry says and conserve the draws' time.

mod common;

use common::Scene;
use gpuheat_counters::catalogue::GPU_TIME_SERIALIZED;
use gpuheat_counters::thermal::{self, Painter};
use gpuheat_counters::Weight;
use gpuheat_examples::gfx::Api;
use gpuheat_examples::gl::*;
use gpuheat_session::CaptureMode;
use gpuheat_session::{ClientApi, HeatMap};

const W: u32 = 64;
const H: u32 = 48;

/// Rectangles (x, y, w, h) of each painted draw: the first draw's two overlap (two fragments
/// per pixel where they do), the second is a single small one.
const DRAWS: [&[(u32, u32, u32, u32)]; 2] =
    [&[(0, 0, 32, 32), (16, 8, 32, 32)], &[(40, 30, 10, 6)]];
/// Serialized times given to the painter for each draw, ns.
const TIMES: [u64; 2] = [6_000, 1_000];

fn client(api: Api) -> ClientApi {
    match api {
        Api::Gles => ClientApi::Gles,
        Api::Gl => ClientApi::Gl,
    }
}

/// Fragments of `rects` at pixel (x, y).
fn covered(rects: &[(u32, u32, u32, u32)], x: u32, y: u32) -> u32 {
    rects
        .iter()
        .filter(|r| x >= r.0 && x < r.0 + r.2 && y >= r.1 && y < r.1 + r.3)
        .count() as u32
}

/// Every pixel's overdraw is the number of `DRAWS`' rectangles covering it.
fn assert_overdraw_is_the_rectangles(map: &HeatMap, label: &str) {
    for y in 0..H {
        for x in 0..W {
            let want: u32 = DRAWS.iter().map(|d| covered(d, x, y)).sum();
            assert_eq!(
                map.overdraw[(y * W + x) as usize],
                want,
                "{label}: ({x},{y})"
            );
        }
    }
}

/// Paints `DRAWS` with a painter that reads the stencil (`stencil`) or takes the mask passes,
/// and weighs a draw with two fragments on a pixel in one pass over the sampled stencil
/// (`sampling`) or in eight bit passes; returns the frame's screen map.
fn paint(scene: &Scene, api: Api, stencil: bool, sampling: bool) -> HeatMap {
    let t = scene.gl.thermal.as_ref().expect("painting functions");
    let mut painter = Painter::new(client(api), None, Some([W, H]), stencil);
    painter.set_stencil_sampling(sampling);
    for (i, rects) in DRAWS.iter().enumerate() {
        let replay = || {
            for r in rects.iter() {
                scene.draw_rect(r.0, r.1, r.2, r.3);
            }
        };
        replay();
        // SAFETY: the scene's context is current on this thread and `t` its real functions.
        unsafe {
            painter.paint(
                t,
                1,
                i as u32 + 1,
                Weight::Known(TIMES[i]),
                false,
                &|_| false,
                &replay,
            )
        };
    }
    assert_eq!(painter.weighs_in_one_pass(), sampling, "{api:?}");
    // SAFETY: as above.
    let flushed = unsafe { painter.finish(t, 1, scene.gfx.context as u64) };
    flushed
        .screen
        .expect("the screen was flushed")
        .expect("the screen's map")
}

#[test]
fn stencil_read_and_mask_passes_count_the_same_fragments() {
    for api in Api::ALL {
        let scene = Scene::new(api, W, H, None);
        let cc = scene.counters();
        assert!(
            thermal::stencil_readable(client(api), |e| cc.has_extension(e)),
            "{api:?}: Mesa reads the stencil in both APIs"
        );
        let read = paint(&scene, api, true, false);
        let passes = paint(&scene, api, false, false);
        // llvmpipe's GL 4.5 and GLES 3.2 sample stencil textures.
        assert!(
            gpuheat_counters::weights::stencil_sampling(
                client(api),
                (cc.api_version().1, cc.api_version().2),
                |e| cc.has_extension(e)
            ),
            "{api:?}"
        );
        let sampled = Some(paint(&scene, api, true, true));
        // Unread stencil, sampled: counted by one pass into bytes, weighed by one pass.
        let counted = Some(paint(&scene, api, false, true));
        for map in [&read, &passes]
            .into_iter()
            .chain(sampled.as_ref())
            .chain(counted.as_ref())
        {
            assert_eq!((map.width, map.height), (W, H), "{api:?}");
            assert_overdraw_is_the_rectangles(map, &format!("{api:?}"));
            let fragments: Vec<u64> = map.draws.iter().map(|d| d.fragments).collect();
            // 32² twice, and 10×6.
            assert_eq!(fragments, vec![2 * 32 * 32, 60], "{api:?}");
            let sum: f64 = map.heat.iter().map(|&h| f64::from(h)).sum();
            let want = (TIMES[0] + TIMES[1]) as f64;
            assert!(
                (sum - want).abs() < want * 1e-4,
                "{api:?}: Σ heat {sum} vs {want}"
            );
        }
        assert_eq!(read.heat, passes.heat, "{api:?}");
        assert_eq!(read.draws, passes.draws, "{api:?}");
        for sampled in sampled.iter().chain(&counted) {
            // One pass adds c·T/N where the bit passes add 2^b·T/N per bit: equal up to the
            // float rounding of the sums.
            for (a, b) in sampled.heat.iter().zip(&read.heat) {
                assert!((a - b).abs() <= b.abs() * 1e-6, "{api:?}: {a} vs {b}");
            }
            assert_eq!(sampled.overdraw, read.overdraw, "{api:?}");
            assert_eq!(sampled.draws, read.draws, "{api:?}");
        }
        // SAFETY: as above: the program sees no error of ours.
        assert_eq!(unsafe { glGetError() }, GL_NO_ERROR, "{api:?}");
    }
}

/// Paints `DRAWS` timed deferred, weighted on the GPU, the work stencil sampled by one pass
/// (`sampling`) or tested by eight bit passes; the screen's map and the draws' times as
/// `resolve` reads their timestamp pairs.
fn weighted(scene: &Scene, sampling: bool, boxes: bool) -> (HeatMap, Vec<u64>) {
    let mut cc = scene.counters();
    let t = scene.gl.thermal.as_ref().expect("painting functions");
    let (client_api, major, minor) = cc.api_version();
    let has = |e: &str| cc.has_extension(e);
    assert!(gpuheat_counters::weights::gpu_weighting(
        client_api,
        (major, minor),
        has
    ));
    assert!(
        gpuheat_counters::weights::stencil_sampling(client_api, (major, minor), has),
        "llvmpipe's GL 4.5 samples stencil textures"
    );
    let mut painter = Painter::new(client(Api::Gl), None, Some([W, H]), true);
    painter.set_weighting(true);
    painter.set_stencil_sampling(sampling);
    painter.set_gpu_boxes(boxes);
    for (i, rects) in DRAWS.iter().enumerate() {
        let replay = || {
            for r in rects.iter() {
                scene.draw_rect(r.0, r.1, r.2, r.3);
            }
        };
        let call = i as u32 + 1;
        // SAFETY: the scene's context is current on this thread and `t` its real functions.
        unsafe {
            let bracket = cc.begin(&scene.gl, CaptureMode::Full, true, 0);
            assert!(bracket.is_deferred());
            let (before, after) = bracket.timestamps().expect("a timestamp pair");
            replay();
            assert!(cc.end(&scene.gl, bracket, 1, call).is_empty());
            let weight = Weight::Deferred(before, after);
            painter.paint(t, 1, call, weight, false, &|_| false, &replay);
        }
    }
    assert_eq!(painter.weighs_in_one_pass(), sampling);
    // SAFETY: as above.
    let flushed = unsafe { painter.finish(t, 1, scene.gfx.context as u64) };
    let map = flushed.screen.expect("flushed").expect("the screen's map");
    // SAFETY: as above.
    let resolved = unsafe { cc.resolve(&scene.gl) };
    let times: Vec<u64> = resolved
        .values
        .iter()
        .map(|l| {
            l.values
                .iter()
                .find(|v| v.counter == GPU_TIME_SERIALIZED)
                .expect("a time")
                .value
        })
        .collect();
    (map, times)
}

/// Draws timed deferred, weighted on the GPU (`weights.rs`), by the one pass over the sampled
/// stencil (finding the draws' boxes or not)
/// and by the bit passes: the same fragments and overdraw as the CPU's count, each draw's
/// listed time its timestamp pair's (as `resolve` reads it), the map conserving those times,
/// and the rectangles' boxes, with no read-back of the counts.
#[test]
fn weighted_on_the_gpu_counts_and_conserves_as_the_cpu_does() {
    let scene = Scene::new(Api::Gl, W, H, None);
    // Boxes are found on the GPU only by the one pass (the agent asks for them on hardware
    // alone: `weights::gpu_boxes`; llvmpipe runs the same shader here).
    for (sampling, finds_boxes) in [(true, true), (true, false), (false, true)] {
        let (map, times) = weighted(&scene, sampling, finds_boxes);
        let listed: Vec<u64> = map.draws.iter().map(|d| d.time_ns).collect();
        assert_eq!(
            listed, times,
            "sampling {sampling}: the listed times are the pairs'"
        );
        let fragments: Vec<u64> = map.draws.iter().map(|d| d.fragments).collect();
        assert_eq!(fragments, vec![2 * 32 * 32, 60], "sampling {sampling}");
        // The one pass finds each draw's box, the rectangles' union; the bit passes cannot,
        // and list the target's.
        let boxes: Vec<[u32; 4]> = map.draws.iter().map(|d| d.bbox).collect();
        let want = if sampling && finds_boxes {
            vec![[0, 0, 48, 40], [40, 30, 50, 36]]
        } else {
            vec![[0, 0, W, H]; 2]
        };
        assert_eq!(boxes, want, "sampling {sampling}");
        assert_overdraw_is_the_rectangles(&map, &format!("sampling {sampling}"));
        let sum: f64 = map.heat.iter().map(|&h| f64::from(h)).sum();
        let want: f64 = times.iter().map(|&t| t as f64).sum();
        assert!(
            (sum - want).abs() <= want * 1e-4,
            "sampling {sampling}: Σ heat {sum} vs Σ T {want}"
        );
        // Where only the small draw lies, its share: T/N; where the first draw's two
        // rectangles overlap, twice its share.
        for ((x, y), draw, c) in [((49, 33), 1, 1.0), ((20, 20), 0, 2.0), ((2, 2), 0, 1.0)] {
            let n = [2.0 * 32.0 * 32.0, 60.0][draw];
            let share = c * times[draw] as f64 / n;
            let got = f64::from(map.heat[(y * W + x) as usize]);
            assert!(
                (got - share).abs() <= share * 1e-4,
                "sampling {sampling}: ({x},{y}) {got} vs {share}"
            );
        }
        // SAFETY: as above: the program sees no error of ours.
        assert_eq!(unsafe { glGetError() }, GL_NO_ERROR, "sampling {sampling}");
    }
}

/// A draw timed deferred whose replay reaches no pixel (a rectangle beyond the viewport,
/// clipped away) is weighed under conditional rendering on its replay's samples query: it
/// is listed with 0 fragments and adds nothing, the visible draw after it keeps its 60
/// fragments and its whole time, and the program sees no error. The same inside the
/// program's own conditional rendering (on a query that passed), which GL does not nest:
/// our begin fails there, the passes run under the program's condition, and the program's
/// `glEndConditionalRender` still closes its own.
#[test]
fn a_draw_that_reaches_no_pixel_adds_nothing_and_its_pass_is_conditional() {
    let scene = Scene::new(Api::Gl, W, H, None);
    let t = scene.gl.thermal.as_ref().expect("painting functions");
    let (begin_conditional, end_conditional) = (
        t.begin_conditional_render
            .expect("GL 3.0 conditional rendering"),
        t.end_conditional_render
            .expect("GL 3.0 conditional rendering"),
    );
    let rects: [(u32, u32, u32, u32); 2] = [(W + 8, H + 8, 8, 8), (40, 30, 10, 6)];
    for programs_own in [false, true] {
        let label = format!("inside the program's conditional rendering: {programs_own}");
        let mut cc = scene.counters();
        let mut painter = Painter::new(client(Api::Gl), None, Some([W, H]), true);
        painter.set_weighting(true);
        painter.set_stencil_sampling(true);
        let mut query = 0;
        // SAFETY: the scene's context is current on this thread; `query` is the program's.
        unsafe {
            if programs_own {
                glGenQueries(1, &mut query);
                glBeginQuery(GL_SAMPLES_PASSED, query);
                scene.draw_rect(0, 0, 4, 4);
                glEndQuery(GL_SAMPLES_PASSED);
                begin_conditional(query, gpuheat_counters::gl::QUERY_WAIT);
            }
        }
        for (i, r) in rects.iter().enumerate() {
            let replay = || scene.draw_rect(r.0, r.1, r.2, r.3);
            // SAFETY: as above, and `t` the context's real functions.
            unsafe {
                let bracket = cc.begin(&scene.gl, CaptureMode::Full, true, 0);
                let (before, after) = bracket.timestamps().expect("a timestamp pair");
                replay();
                cc.end(&scene.gl, bracket, 1, i as u32 + 1);
                let weight = Weight::Deferred(before, after);
                painter.paint(t, 1, i as u32 + 1, weight, false, &|_| false, &replay);
            }
        }
        // SAFETY: as above.
        unsafe {
            if programs_own {
                end_conditional();
                assert_eq!(glGetError(), GL_NO_ERROR, "{label}: the program's end");
                glDeleteQueries(1, &query);
            }
        }
        // SAFETY: as above.
        let flushed = unsafe { painter.finish(t, 1, scene.gfx.context as u64) };
        let map = flushed.screen.expect("flushed").expect("the screen's map");
        let fragments: Vec<u64> = map.draws.iter().map(|d| d.fragments).collect();
        assert_eq!(fragments, vec![0, 60], "{label}");
        let visible = map.draws[1].time_ns as f64;
        let sum: f64 = map.heat.iter().map(|&h| f64::from(h)).sum();
        assert!(
            (sum - visible).abs() <= visible * 1e-4,
            "{label}: Σ heat {sum} vs the visible draw's {visible}"
        );
        let overdraw: u32 = map.overdraw.iter().sum();
        assert_eq!(overdraw, 60, "{label}");
        // SAFETY: as above: the program sees no error of ours.
        assert_eq!(unsafe { glGetError() }, GL_NO_ERROR, "{label}");
        // SAFETY: as above.
        unsafe { cc.resolve(&scene.gl) };
    }
}

/// A draw timed isolated whose own pipeline statistics said no primitive came out of
/// clipping (`Weight::Unreached`, what the agent gives such a draw) is listed with 0
/// fragments and its time, and is never replayed; the draws around it paint as before.
#[test]
fn a_draw_its_statistics_say_reached_nothing_is_not_replayed() {
    let scene = Scene::new(Api::Gl, W, H, None);
    let t = scene.gl.thermal.as_ref().expect("painting functions");
    let mut painter = Painter::new(client(Api::Gl), None, Some([W, H]), true);
    let replays = std::cell::Cell::new(0);
    let visible = (40, 30, 10, 6);
    for (call, weight) in [
        (1, Weight::Unreached(TIMES[0])),
        (2, Weight::Known(TIMES[1])),
    ] {
        let replay = || {
            replays.set(replays.get() + 1);
            scene.draw_rect(visible.0, visible.1, visible.2, visible.3);
        };
        // SAFETY: the scene's context is current on this thread and `t` its real functions.
        unsafe { painter.paint(t, 1, call, weight, false, &|_| false, &replay) };
    }
    assert_eq!(
        replays.get(),
        1,
        "only the draw that reached pixels is replayed"
    );
    // SAFETY: as above.
    let flushed = unsafe { painter.finish(t, 1, scene.gfx.context as u64) };
    let map = flushed.screen.expect("flushed").expect("the screen's map");
    let listed: Vec<(u32, u64, u64)> = map
        .draws
        .iter()
        .map(|d| (d.call, d.fragments, d.time_ns))
        .collect();
    assert_eq!(listed, vec![(1, 0, TIMES[0]), (2, 60, TIMES[1])]);
    let sum: f64 = map.heat.iter().map(|&h| f64::from(h)).sum();
    let want = TIMES[1] as f64;
    assert!((sum - want).abs() <= want * 1e-4, "Σ heat {sum} vs {want}");
    assert_eq!(map.overdraw.iter().sum::<u32>(), 60);
    // SAFETY: as above: the program sees no error of ours.
    assert_eq!(unsafe { glGetError() }, GL_NO_ERROR);
}
