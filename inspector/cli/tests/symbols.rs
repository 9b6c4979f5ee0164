//! Call sites of a real capture back to source lines: `gpuheat run` of the hot_spot example
//! (built in the dev profile, with DWARF), its session's module map and call sites through
//! gpuheat-symbols, against the lines of the example's source.

mod common;

use common::*;
use gpuheat_session::{Frame, Session};
use gpuheat_symbols::Symbolizer;
use std::time::Instant;

const SOURCE: &str = include_str!("../../../examples/src/bin/hot_spot.rs");

/// 1-based lines of the example's source satisfying `pred`.
fn lines_where(pred: impl Fn(&str) -> bool) -> Vec<u32> {
    SOURCE
        .lines()
        .enumerate()
        .filter(|(_, l)| pred(l))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

fn name(s: &Session, func: u16) -> &str {
    &s.functions.functions[func as usize].name
}

/// Indices of the frame's glDrawArrays calls, in call order.
fn draws(s: &Session, f: &Frame) -> Vec<usize> {
    (0..f.calls.len())
        .filter(|&i| name(s, f.calls[i].func) == "glDrawArrays")
        .collect()
}

#[test]
fn the_hot_draws_call_site_is_its_line_in_hot_spot_rs() {
    let marker = "// gpuheat: the hot draw";
    let hot_line = lines_where(|l| l.trim_end().ends_with(marker));
    assert_eq!(hot_line.len(), 1, "one marked line");
    let hot_line = hot_line[0];
    assert!(SOURCE
        .lines()
        .nth(hot_line as usize - 1)
        .unwrap()
        .contains("glDrawArrays("));
    // The K cheap quads are drawn from the other glDrawArrays line of the frame loop.
    let cheap_line = lines_where(|l| {
        l.trim_start().starts_with("glDrawArrays(GL_TRIANGLE_STRIP") && !l.contains(marker)
    });
    assert_eq!(cheap_line.len(), 1);
    let clear_line = lines_where(|l| l.trim() == "glClear(GL_COLOR_BUFFER_BIT);");
    assert_eq!(clear_line.len(), 1);

    let dir = scratch("symbols-hot-spot");
    let (spot, layers) = (8u64, 3usize);
    for api in ["gl", "gles"] {
        let path = capture(
            &dir,
            "hot_spot",
            &["--mode", "full", "--frames", "2"],
            &[
                "--api", api, "--size", "96x64", "--spot", "8", "--loop", "50", "--layers", "3",
            ],
        );
        let s = Session::open(&path).unwrap();
        let modules = s.modules.as_ref().expect("the session has a module map");
        let mut symbols = Symbolizer::new(modules);
        assert_eq!(s.frames.len(), 2, "{api}");
        for f in &s.frames {
            let d = draws(&s, f);
            // K cheap full-screen quads, then the hot square (the example's documented order).
            assert_eq!(d.len(), layers + 1, "{api} frame {}", f.index);
            let hot = *d.last().unwrap();

            if api == "gl" {
                // The hot square is the draw that passes S·S samples (GLES has no
                // samples-passed query on llvmpipe).
                let ctx = s
                    .contexts
                    .iter()
                    .find(|c| c.handle == f.calls[hot].context)
                    .unwrap();
                let sp = ctx
                    .counters
                    .iter()
                    .position(|c| c.name == "samples_passed")
                    .unwrap() as u16;
                let sample = f.samples.iter().find(|x| x.call as usize == hot).unwrap();
                let passed = sample.values.iter().find(|v| v.counter == sp).unwrap();
                assert_eq!(passed.value, spot * spot, "{api}");
            }

            let l = symbols.resolve(f.calls[hot].callsite);
            let frame = l.program_frame().unwrap_or_else(|| panic!("{api}: {l:#}"));
            assert!(
                frame
                    .file
                    .as_deref()
                    .unwrap()
                    .ends_with("examples/src/bin/hot_spot.rs"),
                "{api}: {l:#}"
            );
            assert_eq!(frame.line, Some(hot_line), "{api}: {l:#}");
            assert!(
                frame
                    .function
                    .as_deref()
                    .unwrap()
                    .starts_with("hot_spot::main"),
                "{api}: {l:#}"
            );
            assert_eq!(l.innermost(), Some(frame), "no std frame inside: {l:#}");
            assert!(l.module().unwrap().ends_with("/hot_spot"), "{l}");
            assert!(
                l.to_string().contains(&format!("hot_spot.rs:{hot_line} ")),
                "{l}"
            );
            eprintln!("{api} frame {}: hot draw at {l}", f.index);

            for &c in &d[..layers] {
                let l = symbols.resolve(f.calls[c].callsite);
                assert_eq!(l.innermost().unwrap().line, Some(cheap_line[0]), "{l:#}");
            }
            let clear = (0..f.calls.len())
                .find(|&i| name(&s, f.calls[i].func) == "glClear")
                .unwrap();
            let l = symbols.resolve(f.calls[clear].callsite);
            assert_eq!(l.innermost().unwrap().line, Some(clear_line[0]), "{l:#}");
        }

        // Every call of the session, as a UI would: few distinct sites, the rest cached.
        let calls: Vec<u64> = s
            .frames
            .iter()
            .flat_map(|f| f.calls.iter().map(|c| c.callsite))
            .collect();
        let mut fresh = Symbolizer::new(modules);
        let t = Instant::now();
        let mut unresolved = 0;
        for &a in &calls {
            unresolved += usize::from(!fresh.resolve(a).has_line());
        }
        eprintln!(
            "{api}: {} calls, {} distinct call sites, {unresolved} without a line, \
             symbolized in {:?} (cold)",
            calls.len(),
            fresh.cached_addresses(),
            t.elapsed()
        );
        assert_eq!(unresolved, 0, "every call site of hot_spot has a line");
    }
}
