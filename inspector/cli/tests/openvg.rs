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
