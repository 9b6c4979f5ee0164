//! Launch mode on real programs from Debian, under Xvfb: glmark2-es2 (loads EGL and GLES with
//! dlopen + dlsym, renders to an X11 window) and glxgears (GLX, compatibility profile).

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A private Xvfb server on a display number it picks itself; killed on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb missing: run scripts/install-deps.sh");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Xvfb { child, display: format!(":{}", line.trim()) }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_on_display(display: &str, args: &[&str]) -> std::process::Output {
    let out = Command::new("timeout")
        .args(["-k5", "120"])
        .arg(gpuheat())
        .args(args)
        .env("DISPLAY", display)
        .output()
        .unwrap();
    assert!(out.status.success(), "gpuheat {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn glmark2_es2_is_captured_with_its_draws_and_counters() {
    let x = Xvfb::start();
    let dir = scratch("glmark2");
    let session = dir.join("glmark2.gpuheat");
    let program = which("glmark2-es2");
    run_on_display(
        &x.display,
        &["run", "--frames", "3", "--skip", "10", "-o", session.to_str().unwrap(), "--", &program,
            "-b", "build:duration=60", "--size", "320x240"],
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
    assert!(draw["text"].as_str().unwrap().starts_with("glDrawArrays(GL_TRIANGLES, 0, "));
    assert!(draw["gpu_serialized_ns"].as_u64().unwrap() > 0);
    assert!(draw["callsite"].as_str().unwrap().starts_with("glmark2-es2+0x"));
    assert!(r["contexts"][0]["version"].as_str().unwrap().starts_with("OpenGL ES"));
}

#[test]
fn glxgears_is_captured_through_glx() {
    let x = Xvfb::start();
    let dir = scratch("glxgears");
    let session = dir.join("glxgears.gpuheat");
    let program = which("glxgears");
    run_on_display(&x.display, &["run", "--frames", "3", "-o", session.to_str().unwrap(), "--", &program]);
    let r = report(&session);
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    for f in frames {
        // glxgears clears once and draws its gears from display lists.
        assert_eq!(f["work_calls"].as_u64(), Some(1), "{f}");
        assert_eq!(f["calls"], frames[0]["calls"]);
    }
    assert!(r["contexts"][0]["version"].as_str().unwrap().contains("Compatibility Profile"));
}

fn which(program: &str) -> String {
    let out = Command::new("which").arg(program).output().unwrap();
    assert!(out.status.success(), "{program} missing: run scripts/install-deps.sh");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
