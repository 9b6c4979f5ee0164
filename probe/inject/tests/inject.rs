//! The injector against real processes: the workspace's `overdraw` example (EGL
//! surfaceless, GLES, llvmpipe), and small C programs compiled from tests/data.

mod common;

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use gpuheat_inject::{check, inject, InjectError, Request};

const TIMEOUT: Duration = Duration::from_secs(10);

fn request<'a>(pid: i32, library: &'a Path, arg: &'a str) -> Request<'a> {
    Request {
        pid,
        library,
        entry: "test_entry",
        arg,
        timeout: TIMEOUT,
        cancel: None,
    }
}

/// "pid=P tid=T calls=N ctor=1" as written by test_entry: (P, T, N).
fn read_marker(path: &Path) -> (i32, i32, u32) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("entry did not write {}: {e}", path.display()));
    let mut fields = text
        .split_whitespace()
        .map(|f| f.split_once('=').unwrap().1);
    let pid = fields.next().unwrap().parse().unwrap();
    let tid = fields.next().unwrap().parse().unwrap();
    let calls = fields.next().unwrap().parse().unwrap();
    assert_eq!(
        fields.next(),
        Some("1"),
        "the library's constructor did not run"
    );
    (pid, tid, calls)
}

/// The tid written by the thread test_entry starts (waits for it).
fn read_thread_marker(marker: &Path) -> i32 {
    let path = marker.with_extension("txt.thread");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(tid) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| t.trim().strip_prefix("tid=")?.parse().ok())
        {
            return tid;
        }
        assert!(Instant::now() < deadline, "the entry's thread never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn check_describes_overdraw() {
    let mut t = Target::spawn(&example("overdraw"), &["--api", "gles"]);
    t.wait_checkable();
    let info = check(t.pid()).unwrap();
    assert_eq!(info.pid, t.pid());
    assert_eq!(info.name, "overdraw");
    assert!(info.threads >= 1);
    assert!(
        info.graphics_libraries
            .iter()
            .any(|p| p.to_string_lossy().contains("libEGL.so")),
        "{:?}",
        info.graphics_libraries
    );
    let swap = info
        .safe_points
        .iter()
        .find(|s| s.name == "eglSwapBuffers")
        .expect("eglSwapBuffers found");
    assert!(swap.library.to_string_lossy().contains("libEGL.so"));
    assert_eq!(info.dlopen.name, "dlopen");
    assert!(info.dlopen.library.to_string_lossy().contains("libc.so"));
    // The pre-flight does not disturb the target.
    assert_free_and_running(&mut t);
}

#[test]
fn injects_into_overdraw_which_keeps_rendering() {
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let marker = dir.path().join("marker.txt");
    let mut t = Target::spawn(&example("overdraw"), &["--api", "gles"]);
    t.wait_checkable();

    let r = inject(&request(t.pid(), &lib, marker.to_str().unwrap())).unwrap();
    eprintln!(
        "overdraw: safe point {} on thread {}, render thread held {:?}, total {:?}",
        r.safe_point, r.thread, r.stopped_for, r.total
    );
    assert_eq!(r.entry_result, 42);
    assert_eq!(r.safe_point, "eglSwapBuffers");
    // overdraw renders on its main thread.
    assert_eq!(r.thread, t.pid());
    assert!(r.stopped_for <= r.total);
    let (pid, tid, calls) = read_marker(&marker);
    assert_eq!((pid, tid, calls), (t.pid(), r.thread, 1));
    // The thread the entry started runs (it was created while we were attached).
    let worker = read_thread_marker(&marker);
    assert_ne!(worker, r.thread);
    assert!(Path::new(&format!("/proc/{}/task/{worker}", t.pid())).exists());

    assert_free_and_running(&mut t);
    std::thread::sleep(Duration::from_secs(1));
    assert_free_and_running(&mut t);
    assert_progresses(&mut t, Duration::from_millis(500));
}

#[test]
fn injecting_twice_reuses_the_loaded_library() {
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let mut t = Target::spawn(&example("overdraw"), &["--api", "gles"]);
    t.wait_checkable();
    for n in 1..=2u32 {
        let marker = dir.path().join(format!("marker{n}.txt"));
        let r = inject(&request(t.pid(), &lib, marker.to_str().unwrap())).unwrap();
        assert_eq!(r.entry_result, 42);
        assert_eq!(read_marker(&marker), (t.pid(), r.thread, n));
        assert_free_and_running(&mut t);
    }
    assert_progresses(&mut t, Duration::from_millis(500));
}

#[test]
fn registers_survive_the_injection() {
    // A C program that verifies callee-saved registers, its stack, MXCSR and the x87
    // control word across every eglSwapBuffers call, and exits 3 on a mismatch.
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let prog = build_program(dir.path(), "swapper.c", "swapper", &["-lEGL"]);
    let mut t = Target::spawn(&prog, &[]);
    t.wait_ready_line();
    let mut held = Vec::new();
    for n in 1..=5u32 {
        let marker = dir.path().join(format!("m{n}.txt"));
        let r = inject(&request(t.pid(), &lib, marker.to_str().unwrap())).unwrap();
        assert_eq!(r.entry_result, 42);
        assert_eq!(read_marker(&marker).2, n);
        held.push(r.stopped_for);
    }
    eprintln!("swapper: render thread held {held:?}");
    std::thread::sleep(Duration::from_millis(300));
    if !t.is_alive() {
        let mut out = String::new();
        let _ = t.child.stdout.take().unwrap().read_to_string(&mut out);
        panic!("swapper died: {:?} {out}", t.child.try_wait());
    }
    assert_free_and_running(&mut t);
    assert_progresses(&mut t, Duration::from_millis(300));
}

fn overdraw_checksum(inject_into: Option<&Path>) -> String {
    let mut t = Target::spawn(
        &example("overdraw"),
        &["--api", "gles", "--frames", "2000", "--checksum"],
    );
    if let Some(lib) = inject_into {
        t.wait_checkable();
        std::thread::sleep(Duration::from_millis(100));
        let marker = lib.with_extension("marker");
        let r = inject(&request(t.pid(), lib, marker.to_str().unwrap())).unwrap();
        assert_eq!(r.entry_result, 42);
        assert!(
            t.is_alive(),
            "overdraw finished before the injection: raise --frames"
        );
    }
    let mut out = String::new();
    t.child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = t.child.wait().unwrap();
    assert!(status.success(), "overdraw failed: {status:?} {out}");
    out.lines()
        .find_map(|l| l.strip_prefix("checksum="))
        .unwrap_or_else(|| panic!("no checksum in {out:?}"))
        .to_string()
}

#[test]
fn rendering_is_identical_with_an_injection() {
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let plain = overdraw_checksum(None);
    let injected = overdraw_checksum(Some(&lib));
    assert_eq!(plain, injected);
}

#[test]
fn program_without_gl_is_refused() {
    let mut t = Target::spawn(Path::new("sleep"), &["30"]);
    std::thread::sleep(Duration::from_millis(50));
    let lib = Path::new("/nonexistent.so");
    let e = inject(&request(t.pid(), lib, "x")).unwrap_err();
    assert!(matches!(e, InjectError::NoGraphicsLibrary { .. }), "{e}");
    assert!(
        e.to_string().contains("no EGL/GLX/GL/GLES/VG library"),
        "{e}"
    );
    assert!(matches!(
        check(t.pid()),
        Err(InjectError::NoGraphicsLibrary { .. })
    ));
    assert_free_and_running(&mut t);
}

#[test]
fn bogus_pid_is_no_such_process() {
    let lib = Path::new("/nonexistent.so");
    for pid in [0, -5, 0x3fff_fff0] {
        let e = inject(&request(pid, lib, "x")).unwrap_err();
        assert!(matches!(e, InjectError::NoSuchProcess { .. }), "{pid}: {e}");
        assert!(e.to_string().contains("no process with pid"), "{e}");
        assert!(matches!(check(pid), Err(InjectError::NoSuchProcess { .. })));
    }
}

#[test]
fn program_that_never_swaps_times_out_and_is_left_alone() {
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let prog = build_program(dir.path(), "no_swap.c", "no_swap", &[]);
    let mut t = Target::spawn(&prog, &[]);
    t.wait_ready_line();
    let timeout = Duration::from_millis(800);
    let marker = dir.path().join("never.txt");
    let start = Instant::now();
    let e = inject(&Request {
        timeout,
        ..request(t.pid(), &lib, marker.to_str().unwrap())
    })
    .unwrap_err();
    let took = start.elapsed();
    assert!(matches!(e, InjectError::SafePointTimeout { .. }), "{e}");
    assert!(e.to_string().contains("eglSwapBuffers"), "{e}");
    assert!(took >= timeout, "gave up early: {took:?}");
    assert!(took < timeout + Duration::from_secs(3), "took {took:?}");
    assert!(!marker.exists());
    assert_free_and_running(&mut t);
    // Still sleeping normally (its nanosleep was restarted, not broken).
    std::thread::sleep(Duration::from_millis(1200));
    assert_free_and_running(&mut t);
    assert!(eventually(|| state(t.pid()) == 'S'), "not sleeping");
}

#[test]
fn cancel_ends_the_wait_early_and_leaves_the_program_alone() {
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let prog = build_program(dir.path(), "no_swap.c", "no_swap", &[]);
    let mut t = Target::spawn(&prog, &[]);
    t.wait_ready_line();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let marker = dir.path().join("never.txt");
    let start = Instant::now();
    let e = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        inject(&Request {
            cancel: Some(&cancel),
            ..request(t.pid(), &lib, marker.to_str().unwrap())
        })
        .unwrap_err()
    });
    let took = start.elapsed();
    assert!(
        matches!(e, InjectError::Cancelled { stopped: false, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("left running"), "{e}");
    assert!(
        took < Duration::from_secs(3),
        "took {took:?} (timeout 10 s)"
    );
    assert!(!marker.exists());
    assert_free_and_running(&mut t);
}

/// Whether `cond` holds within a second (states change asynchronously after a detach).
fn eventually(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

#[test]
fn stopped_program_times_out_and_stays_stopped() {
    let mut t = Target::spawn(&example("overdraw"), &["--api", "gles"]);
    t.wait_checkable();
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(t.pid(), libc::SIGSTOP) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while state(t.pid()) != 'T' && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let lib = Path::new("/nonexistent.so");
    let e = inject(&Request {
        timeout: Duration::from_millis(500),
        ..request(t.pid(), lib, "x")
    })
    .unwrap_err();
    assert!(
        matches!(e, InjectError::SafePointTimeout { stopped: true, .. }),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("it is stopped") && !text.contains("left running"),
        "{text}"
    );
    // A detached thread of a stopped group wakes up briefly and stops itself again.
    assert!(
        eventually(|| state(t.pid()) == 'T'),
        "the SIGSTOP must stay in effect"
    );
    assert!(tracers(t.pid()).iter().all(|&x| x == 0));
    let cpu = utime(t.pid());
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(state(t.pid()), 'T');
    assert_eq!(utime(t.pid()), cpu, "a stopped program ran");
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(t.pid(), libc::SIGCONT) };
    std::thread::sleep(Duration::from_millis(100));
    assert_free_and_running(&mut t);
    assert_progresses(&mut t, Duration::from_millis(500));
}

#[test]
fn missing_library_reports_dlerror_and_target_survives() {
    let mut t = Target::spawn(&example("overdraw"), &["--api", "gles"]);
    t.wait_checkable();
    let lib = Path::new("/nonexistent/dir/libgpuheat_nope.so");
    let e = inject(&request(t.pid(), lib, "x")).unwrap_err();
    let InjectError::DlopenFailed { ref message, .. } = e else {
        panic!("expected DlopenFailed, got {e}");
    };
    // glibc: "<path>: cannot open shared object file: No such file or directory".
    assert!(
        message.contains("libgpuheat_nope.so") && message.contains("No such file"),
        "{message}"
    );
    assert!(e.to_string().contains(message.as_str()));
    assert_free_and_running(&mut t);
    assert_progresses(&mut t, Duration::from_millis(500));
}

#[test]
fn missing_entry_is_reported_and_target_survives() {
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let mut t = Target::spawn(&example("overdraw"), &["--api", "gles"]);
    t.wait_checkable();
    let e = inject(&Request {
        entry: "no_such_entry",
        ..request(t.pid(), &lib, "x")
    })
    .unwrap_err();
    assert!(matches!(e, InjectError::EntryNotFound { .. }), "{e}");
    assert_free_and_running(&mut t);
    assert_progresses(&mut t, Duration::from_millis(500));
}

#[test]
fn already_traced_target_is_refused() {
    let dir = TempDir::new();
    let prog = build_program(dir.path(), "no_swap.c", "no_swap", &[]);
    let mut t = Target::spawn(&prog, &[]);
    t.wait_ready_line();
    // Trace it ourselves (PTRACE_SEIZE does not stop it).
    // SAFETY: plain ptrace requests on our own child.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_SEIZE,
            t.pid(),
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    assert_eq!(r, 0, "PTRACE_SEIZE");
    let e = check(t.pid()).unwrap_err();
    assert!(matches!(e, InjectError::AlreadyTraced { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("already traced by pid {}", std::process::id())),
        "{e}"
    );
    // Killing a seized tracee is fine; Drop kills and reaps it.
    drop(t);
}

#[test]
fn forked_children_do_not_inherit_breakpoints() {
    // The program forks a child every ~10 ms that calls eglSwapBuffers; it never swaps
    // itself, so the breakpoints stay in for the whole timeout.
    let dir = TempDir::new();
    let prog = build_program(dir.path(), "forker.c", "forker", &["-lEGL"]);
    let mut t = Target::spawn(&prog, &[]);
    t.wait_ready_line();
    let lib = Path::new("/nonexistent.so");
    let e = inject(&Request {
        timeout: Duration::from_millis(700),
        ..request(t.pid(), lib, "x")
    })
    .unwrap_err();
    assert!(matches!(e, InjectError::SafePointTimeout { .. }), "{e}");
    std::thread::sleep(Duration::from_millis(200));
    if !t.is_alive() {
        let mut out = String::new();
        let _ = t.child.stdout.take().unwrap().read_to_string(&mut out);
        panic!("forker exited: {:?} {out}", t.child.try_wait());
    }
    assert_free_and_running(&mut t);
}

#[test]
fn signals_arriving_during_the_injection_are_delivered() {
    // Real-time signals are queued one by one, so a swallowed one shows in the count.
    let dir = TempDir::new();
    let lib = build_test_library(dir.path());
    let prog = build_program(dir.path(), "signals.c", "signals", &["-lEGL"]);
    let mut t = Target::spawn(&prog, &[]);
    t.wait_ready_line();
    let pid = t.pid();
    const SENT: usize = 400;
    let sender = std::thread::spawn(move || {
        for _ in 0..SENT {
            // SAFETY: kill(2) on our own child.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGRTMIN() + 1) }, 0);
            std::thread::sleep(Duration::from_micros(250));
        }
    });
    for n in 1..=4u32 {
        let marker = dir.path().join(format!("s{n}.txt"));
        let r = inject(&request(pid, &lib, marker.to_str().unwrap())).unwrap();
        assert_eq!(r.entry_result, 42);
    }
    sender.join().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid, libc::SIGUSR2) };
    let mut out = String::new();
    t.child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(t.child.wait().unwrap().success());
    assert!(
        out.lines().any(|l| l == format!("count={SENT}")),
        "signals lost: {out:?}"
    );
}
