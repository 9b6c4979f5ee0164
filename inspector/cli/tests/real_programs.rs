//! Launch mode on real programs from Debian, under Xvfb: glmark2-es2 (loads EGL and GLES with
//! dlopen + dlsym, renders to an X11 window) and glxgears (GLX, compatibility profile).

mod common;
use common::*;
use std::process::{Command, Stdio};

fn run_on_display(display: &str, args: &[&str]) -> std::process::Output {
    ok(
        gpuheat_within(120, Some(display), args),
        &format!("gpuheat {args:?}"),
    )
}

#[test]
fn glmark2_es2_is_captured_with_its_draws_and_counters() {
    let x = Xvfb::start();
    let dir = scratch("glmark2");
    let session = dir.join("glmark2.gpuheat");
    let program = which("glmark2-es2");
    run_on_display(
        &x.display,
        &[
            "run",
            "--frames",
            "3",
            "--skip",
            "10",
            "-o",
            session.to_str().unwrap(),
            "--",
            &program,
            "-b",
            "build:duration=60",
            "--size",
            "320x240",
        ],
    );
    let r = report(&session);
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    // The `build` scene draws its one model once per frame, after one clear.
    for f in frames {
        assert_eq!(f["draws"].as_u64(), Some(1), "{f}");
        assert_eq!(f["work_calls"].as_u64(), Some(2), "{f}");
        assert_eq!(f["calls"], frames[0]["calls"]);
    }
    let draw = frame_draws(&r, frames[0]["index"].as_u64().unwrap())
        .into_iter()
        .find(|d| d["function"] == "glDrawArrays")
        .unwrap();
    assert!(draw["text"]
        .as_str()
        .unwrap()
        .starts_with("glDrawArrays(GL_TRIANGLES, 0, "));
    assert!(draw["gpu_serialized_ns"].as_u64().unwrap() > 0);
    assert!(draw["callsite"]
        .as_str()
        .unwrap()
        .starts_with("glmark2-es2+0x"));
    assert!(r["contexts"][0]["version"]
        .as_str()
        .unwrap()
        .starts_with("OpenGL ES"));
    // Its programs are named by their shaders, linked during the set-up, before the
    // skipped frames ended; the captured draws' program among them.
    let s = gpuheat_session::Session::open(&session).unwrap();
    let bound = s.states.first().expect("state snapshot");
    assert!(
        s.programs
            .iter()
            .any(|p| (p.context, p.program) == (bound.context, bound.program)),
        "{:?} {bound:?}",
        s.programs
    );
    // GL_FRAGMENT_SHADER, GL_VERTEX_SHADER: sorted by stage.
    assert!(
        s.programs.iter().all(|p| p.stages == [0x8B30, 0x8B31]),
        "{:?}",
        s.programs
    );
}

#[test]
fn glxgears_is_captured_through_glx() {
    let x = Xvfb::start();
    let dir = scratch("glxgears");
    let session = dir.join("glxgears.gpuheat");
    let program = which("glxgears");
    run_on_display(
        &x.display,
        &[
            "run",
            "--frames",
            "3",
            "-o",
            session.to_str().unwrap(),
            "--",
            &program,
        ],
    );
    let r = report(&session);
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    for f in frames {
        // glxgears clears once and draws its three gears from display lists (glCallList is
        // work: defect 6 of issue 9).
        assert_eq!(f["work_calls"].as_u64(), Some(4), "{f}");
        assert_eq!(f["calls"], frames[0]["calls"]);
    }
    assert!(r["contexts"][0]["version"]
        .as_str()
        .unwrap()
        .contains("Compatibility Profile"));
}

fn which(program: &str) -> String {
    let out = Command::new("which").arg(program).output().unwrap();
    assert!(
        out.status.success(),
        "{program} missing: run scripts/install-deps.sh"
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn glmark2_es2_attached_mid_run_matches_launch_mode() {
    let x = Xvfb::start();
    let dir = scratch("glmark2-attach");
    let program = which("glmark2-es2");
    let scene = ["-b", "build:duration=120", "--size", "320x240"];

    let launched = dir.join("launched.gpuheat");
    let mut args = vec![
        "run",
        "--frames",
        "3",
        "--skip",
        "10",
        "-o",
        launched.to_str().unwrap(),
        "--",
        &program,
    ];
    args.extend_from_slice(&scene);
    run_on_display(&x.display, &args);
    let launched = report(&launched);

    // Started by hand, as a user would; attached once it has been running for a while.
    let mut child = Command::new(&program)
        .args(scene)
        .env("DISPLAY", &x.display)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let attached = dir.join("attached.gpuheat");
    let pid = child.id().to_string();
    let out = run_on_display(
        &x.display,
        &[
            "attach",
            &pid,
            "--frames",
            "5",
            "-o",
            attached.to_str().unwrap(),
        ],
    );
    let still_running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(still_running, "glmark2 died after the attach");
    let attached = report(&attached);
    let frames = attached["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 5, "{}", String::from_utf8_lossy(&out.stderr));
    let want = &launched["frames"][0];
    for f in frames {
        assert_eq!(f["draws"], want["draws"], "{f}");
        assert_eq!(f["work_calls"], want["work_calls"], "{f}");
        assert_eq!(f["calls"], want["calls"], "{f}");
    }
}
