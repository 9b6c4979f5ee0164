//! Issue 12, first step: the agent wraps every OpenVG 1.1 and VGU function (generated from
//! `probe/registry/openvg.xml` like the GL wrappers), so a VG program's vg* calls are recorded
//! in launch mode next to the GL calls its VG library makes for them, and its frames are
//! unchanged. The program is `examples/openvg`'s `vg_rect` (a 30×40 red rectangle, 1,200
//! pixels, drawn with vgClear and vgDrawPath in every frame) on the test VG library, which
//! draws with GLES 3 on llvmpipe.

mod common;
use common::*;
use std::process::Command;

#[test]
fn vg_calls_are_recorded_beside_the_gl_calls_of_their_library() {
    let bin = gpuheat().parent().unwrap().to_path_buf();
    let exe = bin.join("examples").join("vg_rect");
    assert!(
        exe.is_file(),
        "{} missing: run `cargo test --workspace` (it builds the examples)",
        exe.display()
    );
    let dir = scratch("openvg");
    let session = dir.join("vg.gpuheat");
    let plain = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &bin)
        .args(["--frames", "4"])
        .output()
        .unwrap();
    let out = Command::new("timeout")
        .args(["-k5", "120"])
        .arg(gpuheat())
        .env("LD_LIBRARY_PATH", &bin)
        .args(["run", "--frames", "2", "--skip", "0", "-o"])
        .arg(&session)
        .arg("--")
        .arg(&exe)
        .args(["--frames", "4"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same pixels with and without the agent.
    let red = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.starts_with("red="))
            .map(str::to_string)
    };
    assert_eq!(red(&plain).as_deref(), Some("red=1200"));
    assert_eq!(red(&out), red(&plain));

    let s = gpuheat_session::Session::open(&session).unwrap();
    let names: Vec<&str> = s
        .functions
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    // Every function of openvg.h (87) and vgu.h (9) of OpenVG 1.1 has a wrapper.
    let vg = names.iter().filter(|n| n.starts_with("vg")).count();
    assert_eq!(vg, 96, "wrapped vg*/vgu* functions");
    assert_eq!(s.frames.len(), 2);
    // Frame 1 (after the set-up frame): vgClear, then vgDrawPath, each followed by the GL
    // calls the library made for it, called from the library.
    let frame = &s.frames[1];
    let calls: Vec<&str> = frame
        .calls
        .iter()
        .map(|c| names[usize::from(c.func)])
        .collect();
    let at = |name: &str| calls.iter().position(|n| *n == name);
    let (clear, draw) = (
        at("vgClear").expect("vgClear"),
        at("vgDrawPath").expect("vgDrawPath"),
    );
    assert!(clear < draw, "{calls:?}");
    assert_eq!(
        calls.iter().filter(|n| n.starts_with("vg")).count(),
        2,
        "{calls:?}"
    );
    assert!(
        calls[clear..draw].contains(&"glClear"),
        "vgClear's glClear: {calls:?}"
    );
    assert!(
        calls[draw..].iter().any(|n| n.starts_with("glDraw")),
        "vgDrawPath's draw: {calls:?}"
    );
}

/// The fixture's VG examples, built by `cargo test --workspace`, with the library beside
/// the CLI.
fn vg_example(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let bin = gpuheat().parent().unwrap().to_path_buf();
    let exe = bin.join("examples").join(name);
    assert!(
        exe.is_file(),
        "{} missing: run `cargo test --workspace` (it builds the examples)",
        exe.display()
    );
    (exe, bin)
}

/// The `frame_crc=` line a VG example prints after its last frame.
fn frame_crc(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix("frame_crc=").map(str::to_string))
        .expect("frame_crc line")
}

/// Runs a VG example plainly (`frames` frames) and returns its final frame's checksum.
fn plain_crc(name: &str, frames: &str) -> String {
    let (exe, lib) = vg_example(name);
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .args(["--frames", frames])
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}");
    frame_crc(&out.stdout)
}

/// `gpuheat run --keep-running` of a VG example (6 frames, frames 2–4 captured): the
/// session, opened and completed with the VG heat, and the program's final checksum.
fn launch(dir: &std::path::Path, name: &str) -> (gpuheat_session::Session, String) {
    let (exe, lib) = vg_example(name);
    let session = dir.join(format!("{name}.gpuheat"));
    let out = Command::new("timeout")
        .args(["-k5", "180"])
        .arg(gpuheat())
        .env("LD_LIBRARY_PATH", &lib)
        .args([
            "run",
            "--keep-running",
            "--heat",
            "--frames",
            "3",
            "--skip",
            "1",
            "-o",
        ])
        .arg(&session)
        .arg("--")
        .arg(&exe)
        .args(["--frames", "6"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The program's vgGetError, read once after its frames, saw no error: the agent's own VG
    // calls (drains, state reads) raised none.
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l == "vg_error=0x0000"),
        "{name}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    (open(&session), frame_crc(&out.stdout))
}

fn open(path: &std::path::Path) -> gpuheat_session::Session {
    let mut s = gpuheat_session::Session::open(path).unwrap();
    gpuheat_analysis::vg::complete(&mut s);
    s
}

/// Per captured frame: (VG calls, VG work calls, vgDrawPath calls), counting only calls the
/// program made (not those a VG call made inside it).
fn vg_counts(s: &gpuheat_session::Session) -> Vec<(usize, usize, usize)> {
    let nested = gpuheat_analysis::measure::nested::Nested::of(&s.vg_calls);
    s.frames
        .iter()
        .map(|f| {
            let top: Vec<&gpuheat_session::FunctionInfo> = f
                .calls
                .iter()
                .enumerate()
                .filter(|(i, _)| nested.parent(f.index, *i as u32).is_none())
                .map(|(_, c)| &s.functions.functions[usize::from(c.func)])
                .filter(|i| i.name.starts_with("vg"))
                .collect();
            (
                top.len(),
                top.iter()
                    .filter(|i| i.class == gpuheat_session::CallClass::Work)
                    .count(),
                top.iter().filter(|i| i.name == "vgDrawPath").count(),
            )
        })
        .collect()
}

/// The serialized time of call `call` of `f`.
fn serialized(s: &gpuheat_session::Session, f: &gpuheat_session::Frame, call: u32) -> Option<u64> {
    let ctx = s
        .contexts
        .iter()
        .find(|c| c.handle == f.calls[call as usize].context)?;
    f.samples
        .iter()
        .find(|x| x.call == call)?
        .values
        .iter()
        .find(|v| ctx.counters[usize::from(v.counter)].name == "gpu_time_serialized")
        .map(|v| v.value)
}

/// Issue 12's acceptance on the clean VG scene (examples/openvg `vg_clean`, 128×128: a
/// 30×40 rectangle, a circle r = 20, a 100-long line of width 6, a 16×16 image): exact VG
/// call counts per frame, the path features equal to the analytic ones, the coverage of each
/// draw within 1% of its area, Σ heat = Σ draw time within 1%, the library's GL calls as
/// children whose time the VG call's covers, and the same final frame with and without
/// the agent.
#[test]
fn the_clean_vg_scene_is_counted_measured_and_painted_exactly() {
    let dir = scratch("openvg-clean");
    let (s, traced) = launch(&dir, "vg_clean");
    assert_eq!(
        traced,
        plain_crc("vg_clean", "6"),
        "frames differ under the agent"
    );
    // Documented in vg_clean.rs: 7 VG calls, 5 of them work, 3 vgDrawPath per frame.
    assert_eq!(vg_counts(&s), vec![(7, 5, 3); 3]);

    let path = |draw: &gpuheat_session::VgPathDraw| {
        s.vg_paths
            .iter()
            .find(|p| p.path == draw.path && p.serial == draw.serial)
            .expect("the drawn version of the path was sent")
    };
    let mut areas = Vec::new();
    for f in &s.frames {
        let heat = s
            .heat
            .iter()
            .find(|h| h.frame == f.index)
            .expect("a heat map per frame");
        let mut painted_time = 0.0;
        for c in s.vg_calls.iter().filter(|c| c.frame == f.index) {
            let info = &s.functions.functions[usize::from(f.calls[c.call as usize].func)];
            let name = &info.name;
            if info.class != gpuheat_session::CallClass::Work {
                // State calls are listed for the calls their library made (its current
                // context), not for time.
                assert!(c.draw.is_none(), "{name}");
                continue;
            }
            let time = serialized(&s, f, c.call).expect("VG work calls are timed");
            // The VG call's time covers the GL calls its library made inside it.
            let children: u64 = c
                .children
                .iter()
                .filter_map(|&k| serialized(&s, f, k))
                .sum();
            assert!(
                time >= children,
                "{name}: {time} ns < children's {children} ns"
            );
            if name == "vgDrawPath" {
                let child_names: Vec<&str> = c
                    .children
                    .iter()
                    .map(|&k| {
                        s.functions.functions[usize::from(f.calls[k as usize].func)]
                            .name
                            .as_str()
                    })
                    .collect();
                assert_eq!(
                    child_names
                        .iter()
                        .filter(|n| **n == "glDrawElements")
                        .count(),
                    1,
                    "{child_names:?}"
                );
            }
            let Some(gpuheat_session::VgDraw::Path(d)) = &c.draw else {
                if let Some(cov) = heat.draws.iter().find(|d| d.call == c.call) {
                    painted_time += cov.time_ns as f64;
                    areas.push((name.clone(), cov.fragments));
                }
                continue;
            };
            let p = path(d);
            let features = gpuheat_analysis::vg::path_features(p);
            let bounds = features.user_bounds.unwrap();
            let cov = heat
                .draws
                .iter()
                .find(|x| x.call == c.call)
                .expect("every vgDrawPath is painted");
            painted_time += cov.time_ns as f64;
            assert_eq!(cov.time_ns, time);
            match p.segments.as_slice() {
                // vguRect: MOVE_TO, HLINE_TO, VLINE_TO, HLINE_TO, CLOSE_PATH.
                [2, 6, 8, 6, 0] => {
                    assert_eq!(bounds, [10.0, 20.0, 40.0, 60.0]);
                    areas.push(("rect".into(), cov.fragments));
                }
                // vguEllipse: MOVE_TO, two SCCWARC_TO, CLOSE_PATH.
                [2, 18, 18, 0] => {
                    for (got, want) in bounds.iter().zip([60.0, 60.0, 100.0, 100.0]) {
                        assert!((got - want).abs() < 0.01, "{bounds:?}");
                    }
                    areas.push(("circle".into(), cov.fragments));
                }
                // vguLine: MOVE_TO, LINE_TO.
                [2, 4] => {
                    assert_eq!(bounds, [10.0, 110.0, 110.0, 110.0]);
                    assert_eq!(d.stroke.width, 6.0);
                    areas.push(("line".into(), cov.fragments));
                }
                other => panic!("unexpected path {other:?}"),
            }
            assert_eq!(features.coords, p.coords.len());
        }
        // Σ heat = Σ draw time (within 1%).
        let sum: f64 = heat.heat.iter().map(|&h| f64::from(h)).sum();
        assert!(
            (sum - painted_time).abs() <= 0.01 * painted_time,
            "Σ heat {sum} vs Σ time {painted_time}"
        );
    }
    let area = |what: &str| -> Vec<u64> {
        areas
            .iter()
            .filter(|(n, _)| n == what)
            .map(|&(_, a)| a)
            .collect()
    };
    let within = |got: &[u64], want: f64| {
        assert_eq!(got.len(), 3, "{areas:?}");
        for &g in got {
            assert!(
                (g as f64 - want).abs() <= 0.01 * want,
                "{g} px vs {want} ({areas:?})"
            );
        }
    };
    within(&area("rect"), 1200.0);
    within(&area("circle"), std::f64::consts::PI * 400.0);
    within(&area("line"), 600.0);
    within(&area("vgDrawImage"), 256.0);
    within(&area("vgClear"), 128.0 * 128.0);
}

/// Attach mode on a running VG program: the same counts as launch mode, the program keeps
/// running after the agent leaves, and its frames are those it draws alone.
#[test]
fn attaching_to_a_running_vg_program_sees_the_same_calls_and_leaves_it_running() {
    let dir = scratch("openvg-attach");
    let (exe, lib) = vg_example("vg_clean");
    let stdout = dir.join("vg_clean.out");
    let mut child = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .args(["--frames", "0"])
        .stdout(std::fs::File::create(&stdout).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_frame_loop(pid);
    let session = dir.join("attach.gpuheat");
    let out = run_gpuheat(&[
        "attach",
        &pid.to_string(),
        "--frames",
        "3",
        "-o",
        session.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(child.try_wait().unwrap().is_none(), "the program died");
    // SAFETY: kill(2) on our own child: it finishes its frame, prints and exits.
    unsafe { libc::kill(pid as i32, libc::SIGUSR1) };
    let status = child.wait().unwrap();
    assert!(status.success());
    let printed = std::fs::read(&stdout).unwrap();
    assert_eq!(frame_crc(&printed), plain_crc("vg_clean", "3"));
    let s = open(&session);
    assert_eq!(vg_counts(&s), vec![(7, 5, 3); 3]);
    // The paths were built before the agent came: their draws are counted and timed, but
    // their data is unknown, so they carry no version.
    let draws: Vec<&gpuheat_session::VgPathDraw> = s
        .vg_calls
        .iter()
        .filter_map(|c| match &c.draw {
            Some(gpuheat_session::VgDraw::Path(d)) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(draws.len(), 9);
    // The library's GL calls are hooked too (its GOT): each vgDrawPath has its draw.
    assert!(s
        .vg_calls
        .iter()
        .filter(|c| matches!(c.draw, Some(gpuheat_session::VgDraw::Path(_))))
        .all(|c| !c.children.is_empty()));
}

/// Each VG checklist rule fires on the example made to trigger it, and no VG rule fires on
/// the clean scene.
#[test]
fn each_vg_rule_fires_on_its_example_and_none_on_the_clean_scene() {
    let dir = scratch("openvg-rules");
    let rules = [
        ("vg_clean", None),
        ("vg_churn", Some("vg-object-churn")),
        ("vg_reupload", Some("vg-image-reupload")),
        ("vg_tiny_paths", Some("vg-tiny-complex-path")),
        ("vg_redundant", Some("vg-redundant-state")),
        ("vg_all_caps", Some("vg-path-all-capabilities")),
        ("vg_sync", Some("vg-sync-every-frame")),
    ];
    for (name, rule) in rules {
        let (s, traced) = launch(&dir, name);
        assert_eq!(traced, plain_crc(name, "6"), "{name}: frames differ");
        let a = gpuheat_analysis::measure::cost::analyse_with(&s, false);
        let found = gpuheat_analysis::checklist::check(&s, &a);
        let vg: Vec<&str> = found
            .iter()
            .map(|f| f.rule)
            .filter(|r| r.starts_with("vg-"))
            .collect();
        match rule {
            None => assert!(vg.is_empty(), "{name}: {vg:?}"),
            Some(rule) => assert!(
                !vg.is_empty() && vg.iter().all(|r| *r == rule),
                "{name}: {vg:?}, want only {rule}"
            ),
        }
    }
}
