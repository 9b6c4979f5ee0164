//! Serialized timing measures a draw's own cost on llvmpipe, where pipelined timestamps do
//! not: a quarter of the area costs about a quarter, four times the shader loop about four
//! times. Only ratios are asserted (medians of several draws).

mod common;

use common::{value, Scene};
use gpuheat_counters::catalogue::GPU_TIME_SERIALIZED;
use gpuheat_examples::gfx::{Api, LOOP_FS};
use gpuheat_examples::gl::*;
use gpuheat_session::CaptureMode;

const W: u32 = 256;
const H: u32 = 256;
const REPS: usize = 5;

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

#[test]
fn serialized_time_is_proportional_to_work() {
    let s = Scene::new(Api::Gl, W, H, Some(LOOP_FS));
    let u_iterations = s.rp.program.uniform("u_iterations").unwrap();
    let mut cc = s.counters();
    let mut call = 0;
    // One serialized time of a draw of `rect` with the loop run `iterations` times.
    let mut measure = |iterations: i32, rect: (u32, u32, u32, u32)| {
        // SAFETY: the scene's EGL context is current on this thread, and every pointer passed
        // points to a live value of the size GL writes.
        unsafe { glUniform1i(u_iterations, iterations) };
        let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, call, rect);
        call += 1;
        value(&values, GPU_TIME_SERIALIZED).unwrap()
    };
    // Warm-up (shader variants get compiled on first use).
    for _ in 0..REPS {
        measure(8, (0, 0, W, H));
    }
    // The three draws take turns, so a slow spell of the machine (another process starting
    // or ending on the cores llvmpipe renders with) lands on all three rather than on
    // whichever was being measured then; each figure is the median of its turns.
    let (mut full, mut quarter, mut full_x4) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..REPS {
        full.push(measure(128, (0, 0, W, H)));
        quarter.push(measure(128, (0, 0, W / 2, H / 2)));
        full_x4.push(measure(512, (0, 0, W, H)));
    }
    let (full, quarter, full_x4) = (median(full), median(quarter), median(full_x4));
    let area_ratio = quarter as f64 / full as f64;
    let loop_ratio = full_x4 as f64 / full as f64;
    println!(
        "serialized: full {full} ns, quarter {quarter} ns (x{area_ratio:.3}), \
         4x loop {full_x4} ns (x{loop_ratio:.3}), overhead {} ns",
        cc.serialized_overhead_ns()
    );
    assert!(
        (0.15..=0.4).contains(&area_ratio),
        "quarter/full = {area_ratio}"
    );
    assert!(
        (3.0..=5.0).contains(&loop_ratio),
        "4x loop / 1x loop = {loop_ratio}"
    );
    assert!(
        (2.5..=6.7).contains(&(1.0 / area_ratio)),
        "full/quarter = {}",
        1.0 / area_ratio
    );
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, true) };
    assert_eq!(
        batches.iter().map(|b| b.times.len()).sum::<usize>(),
        call as usize
    );
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}
