//! Issue 3 acceptance: `gpuheat attach` into programs that were started normally.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An example program started normally (not under gpuheat); killed on drop.
struct Target {
    child: Child,
    stdout: PathBuf,
}

impl Target {
    fn start(dir: &Path, name: &str, args: &[&str]) -> Target {
        let stdout = dir.join(format!("{name}-{}.out", std::process::id()));
        let child = Command::new(example(name))
            .args(args)
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Target { child, stdout }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Counts entries of /proc/PID/<what> (task: threads, fd: descriptors).
    fn count(&self, what: &str) -> usize {
        std::fs::read_dir(format!("/proc/{}/{what}", self.child.id()))
            .unwrap()
            .count()
    }

    /// Asks the program (SIGUSR1) for the checksum of its current frame.
    fn checksum(&self) -> String {
        sigusr1_checksum(&self.stdout, self.child.id())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn attach(dir: &Path, pid: &str, extra: &[&str]) -> (PathBuf, std::process::Output) {
    let session = dir.join(format!("attach-{pid}-{}.gpuheat", extra.join("_")));
    let mut args = vec!["attach", pid, "-o", session.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run_gpuheat(&args);
    (session, out)
}

fn attach_ok(dir: &Path, pid: &str, extra: &[&str]) -> Value {
    let (session, out) = attach(dir, pid, extra);
    assert!(
        out.status.success(),
        "attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    report(&session)
}

/// (calls, draws, work calls) per frame of every frame of a report.
fn counts(r: &Value) -> Vec<(u64, u64, u64)> {
    r["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["calls"].as_u64().unwrap(),
                f["draws"].as_u64().unwrap(),
                f["work_calls"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn attach_sees_the_same_calls_and_draws_as_launch_mode() {
    let dir = scratch("attach-counts");
    let cases: [(&str, &[&str]); 5] = [
        ("overdraw", &["--layers", "5"]),
        ("state_churn", &["--draws", "37"]),
        ("tiny_batches", &["--draws", "1500"]),
        ("proc_loaded", &["--layers", "3"]),
        ("fill_cost", &["--loop", "2", "--size", "128x128"]),
    ];
    for api in ["gles", "gl"] {
        for (name, args) in cases {
            let mut example_args = vec!["--api", api];
            example_args.extend_from_slice(args);
            let launched = report(&capture(&dir, name, &["--frames", "3"], &example_args));
            let expected = counts(&launched)[0];
            let target = Target::start(&dir, name, &example_args);
            let attached = attach_ok(&dir, &target.pid(), &["--frames", "10"]);
            let got = counts(&attached);
            assert_eq!(got.len(), 10, "{name} {api}");
            assert!(
                got.iter().all(|&c| c == expected),
                "{name} {api}: attach {got:?}, launch {expected:?}"
            );
            // Full mode measured every work call of the attached frames.
            let draws = attached["top_draws"].as_array().unwrap();
            assert!(
                draws
                    .iter()
                    .all(|d| d["gpu_serialized_ns"].as_u64().is_some()),
                "{name} {api}"
            );
            assert!(attached["attach"]["latency_ns"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn fifty_attach_capture_detach_cycles_leave_the_program_intact() {
    let dir = scratch("attach-cycles");
    let reference = Command::new(example("overdraw"))
        .args([
            "--api",
            "gl",
            "--layers",
            "3",
            "--frames",
            "3",
            "--checksum",
        ])
        .output()
        .unwrap();
    let reference = String::from_utf8_lossy(&reference.stdout)
        .trim()
        .strip_prefix("checksum=")
        .unwrap()
        .to_string();
    let mut target = Target::start(&dir, "overdraw", &["--api", "gl", "--layers", "3"]);
    wait_for_frame_loop(target.child.id());
    assert_eq!(target.checksum(), reference);
    let pid = target.pid();
    let (mut threads, mut fds) = (0, 0);
    for cycle in 0..50 {
        let mode = if cycle % 2 == 0 { "full" } else { "timeline" };
        let r = attach_ok(&dir, &pid, &["--frames", "2", "--mode", mode]);
        assert_eq!(counts(&r), vec![(12, 3, 4); 2], "cycle {cycle}");
        assert!(target.alive(), "the program died in cycle {cycle}");
        // Detach is asynchronous in the program: give its threads a moment to wind down.
        std::thread::sleep(Duration::from_millis(50));
        if cycle == 0 {
            (threads, fds) = (target.count("task"), target.count("fd"));
        }
        assert!(
            target.count("task") <= threads + 2,
            "threads grow: cycle {cycle}"
        );
        assert!(
            target.count("fd") <= fds + 2,
            "descriptors grow: cycle {cycle}"
        );
    }
    assert_eq!(
        target.checksum(),
        reference,
        "the image changed after 50 attaches"
    );
}

#[test]
fn attach_reports_latency_and_hiccup() {
    let dir = scratch("attach-latency");
    let target = Target::start(&dir, "overdraw", &["--api", "gles"]);
    wait_for_frame_loop(target.child.id());
    let (session, out) = attach(&dir, &target.pid(), &["--frames", "3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("render thread held") && stderr.contains("first frame"),
        "{stderr}"
    );
    let s = gpuheat_session::Session::open(&session).unwrap();
    let a = s.attach.expect("attach record");
    assert!(a.latency_ns > 0 && a.hiccup_ns > 0 && a.hiccup_ns <= a.injection_ns);
    assert!(
        a.safe_point.starts_with("eglSwapBuffers"),
        "{}",
        a.safe_point
    );
    assert_eq!(s.info.pid.to_string(), target.pid());
    // What the program bound before the attach is in the session: its one program and VAO,
    // drawing to the 256x256 pbuffer (overdraw's default size) through framebuffer 0.
    let state = s.states.first().expect("state snapshot");
    assert!(state.program != 0 && state.vertex_array != 0, "{state:?}");
    assert_eq!(state.draw_framebuffer, 0);
    assert_eq!(state.viewport, [0, 0, 256, 256]);
    assert_eq!(state.surface, Some([256, 256]));
    assert_eq!(state.frame, s.frames[0].index);
}

/// Asserts a failed attach with a single-line error containing `needle`.
fn fails_with(args: &[&str], needle: &str) {
    let out = run_gpuheat(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
    assert!(
        lines[0].contains(needle),
        "{args:?}: `{}` lacks `{needle}`",
        lines[0]
    );
}

#[test]
fn attach_errors_are_one_line_with_the_remedy() {
    let dir = scratch("attach-errors");
    let out = dir.join("x.gpuheat");
    let o = out.to_str().unwrap();
    fails_with(
        &["attach", "999999999", "-o", o],
        "no process with pid 999999999",
    );
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let sleeper_pid = sleeper.id().to_string();
    fails_with(&["attach", &sleeper_pid, "-o", o], "no EGL");
    fails_with(
        &["attach", "--name", "no-such-program-here", "-o", o],
        "no process named",
    );

    // Two programs with the same name: refuse and list them.
    let a = Target::start(&dir, "tiny_batches", &["--draws", "10"]);
    let b = Target::start(&dir, "tiny_batches", &["--draws", "10"]);
    let out_ambiguous = run_gpuheat(&["attach", "--name", "tiny_batches", "-o", o]);
    let stderr = String::from_utf8_lossy(&out_ambiguous.stderr);
    assert!(!out_ambiguous.status.success());
    assert!(
        stderr.contains(&a.pid()) && stderr.contains(&b.pid()),
        "{stderr}"
    );
    drop((a, b));

    // Already traced by another tracer.
    let target = Target::start(&dir, "overdraw", &[]);
    let mut tracer = Command::new("strace")
        .args(["-o", "/dev/null", "-p", &target.pid()])
        .stderr(Stdio::null())
        .spawn()
        .expect("strace missing: run scripts/install-deps.sh");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(format!("/proc/{}/status", target.pid()))
        .unwrap()
        .lines()
        .any(|l| l.starts_with("TracerPid:") && l.trim() != "TracerPid:\t0")
    {
        assert!(Instant::now() < deadline, "strace did not attach");
        std::thread::sleep(Duration::from_millis(20));
    }
    fails_with(
        &["attach", &target.pid(), "-o", o],
        &format!("traced by pid {}", tracer.id()),
    );
    let _ = tracer.kill();
    let _ = tracer.wait();

    // Another user's process: gpuheat run as `nobody` may not trace root's program.
    let as_nobody = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(gpuheat())
        .args(["attach", &target.pid(), "-o", "/tmp/nobody.gpuheat"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&as_nobody.stderr);
    assert!(!as_nobody.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("belongs to uid 0") && stderr.contains("CAP_SYS_PTRACE"),
        "{stderr}"
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

/// Starts `gpuheat attach` on `pid` for a capture that would run for a long time, and waits
/// until `frames` frames are in its session.
// The child is returned to the caller, which waits for it; the lint cannot see that.
#[allow(clippy::zombie_processes)]
fn long_capture(session: &Path, pid: &str, frames: usize) -> Child {
    let mut child = Command::new(gpuheat())
        .args([
            "attach", pid, "--frames", "100000", "--mode", "timeline", "-o",
        ])
        .arg(session)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(s) = gpuheat_session::Session::open_lenient(session) {
            if s.frames.len() >= frames {
                return child;
            }
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no frames arrived");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_ends_an_attach_capture_cleanly_and_the_program_runs_on() {
    let dir = scratch("attach-ctrl-c");
    let mut target = Target::start(&dir, "overdraw", &["--layers", "2"]);
    wait_for_frame_loop(target.child.id());
    let session = dir.join("interrupted.gpuheat");
    let gpuheat_run = long_capture(&session, &target.pid(), 3);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(gpuheat_run.id() as i32, libc::SIGINT) };
    let out = gpuheat_run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
    let s = gpuheat_session::Session::open(&session).expect("a clean session");
    assert!(s.frames.len() >= 3);
    assert_eq!(s.end.unwrap().reason, gpuheat_session::EndReason::Stopped);
    assert!(
        s.frames.iter().all(|f| f.calls.len() == 2 * 2 + 6),
        "every kept frame is whole"
    );
    assert!(target.alive());
    // The agent let go: a new attach works at once.
    let r = attach_ok(&dir, &target.pid(), &["--frames", "2"]);
    assert_eq!(counts(&r), vec![(10, 2, 3); 2]);
}

#[test]
fn a_program_dying_during_an_attach_capture_leaves_a_readable_session() {
    let dir = scratch("attach-target-dies");
    let target = Target::start(&dir, "overdraw", &["--layers", "2"]);
    wait_for_frame_loop(target.child.id());
    let session = dir.join("died.gpuheat");
    let gpuheat_run = long_capture(&session, &target.pid(), 3);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(target.child.id() as i32, libc::SIGKILL) };
    let out = gpuheat_run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("exited after"), "{stderr}");
    let s = gpuheat_session::Session::open(&session).expect("readable after the program died");
    assert!(s.frames.len() >= 3);
    assert_eq!(
        s.end.unwrap().reason,
        gpuheat_session::EndReason::TargetExited
    );
}

/// Whether `pid` maps a file whose path contains `needle`.
fn maps(pid: u32, needle: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.contains(needle))
}

/// Whether the agent is in `pid`, connected, and the injector gone: its control thread runs
/// and nobody traces the program.
fn agent_settled(pid: u32) -> bool {
    let control = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.trim() == "gpuheat-control")
            })
        })
        .unwrap_or(false);
    control && state_and_tracer(pid).1 == "0"
}

/// Waits (bounded) until `cond` holds.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first letter of the State line of /proc/PID/status, and its TracerPid.
fn state_and_tracer(pid: u32) -> (char, String) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap()
            .trim()
            .to_string()
    };
    (field("State:").chars().next().unwrap(), field("TracerPid:"))
}

/// `gpuheat attach ARGS` in the background, stderr captured.
// The child is returned to the caller, which waits for it; the lint cannot see that.
#[allow(clippy::zombie_processes)]
fn attach_in_background(pid: &str, session: &Path, extra: &[&str]) -> Child {
    Command::new(gpuheat())
        .args(["attach", pid, "-o"])
        .arg(session)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a background gpuheat (at most `bound`), returning its output and how long the
/// wait took; kills it and fails when it overruns.
fn finish_within(child: Child, bound: Duration) -> (std::process::Output, Duration) {
    let start = Instant::now();
    let pid = child.id() as i32;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(bound + Duration::from_secs(10));
        // SAFETY: kill(2); the process is ours (or already reaped, then ESRCH or a pid that
        // is unlikely to be reused within the test).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    drop(watchdog);
    assert!(took <= bound, "gpuheat took {took:?}, more than {bound:?}");
    (out, took)
}

#[test]
fn a_program_that_stops_rendering_after_the_attach_ends_the_capture_within_the_timeout() {
    let dir = scratch("attach-stall");
    let mut target = Target::start(&dir, "stall", &[]);
    let pid = target.child.id();
    wait_until("libEGL in stall", || maps(pid, "libEGL"));
    let session = dir.join("stall.gpuheat");
    let start = Instant::now();
    let out = run_gpuheat(&[
        "attach",
        &target.pid(),
        "--timeout",
        "2",
        "-o",
        session.to_str().unwrap(),
    ]);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Two seconds without a frame, plus the injection and the detach.
    assert!(took < Duration::from_secs(8), "took {took:?}: {stderr}");
    assert!(took >= Duration::from_secs(2), "gave up early: {took:?}");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    for needle in [
        "no frame arrived from stall",
        "for 2 s after 0 of 3 frames",
        "got in at eglSwapBuffers",
        "libEGL",
        "detached, stall keeps running",
        session.to_str().unwrap(),
    ] {
        assert!(lines[0].contains(needle), "`{}` lacks `{needle}`", lines[0]);
    }
    // The session says what happened and the report reads it.
    let s = gpuheat_session::Session::open(&session).expect("a readable session");
    assert_eq!(s.frames.len(), 0);
    assert_eq!(s.end.unwrap().reason, gpuheat_session::EndReason::TimedOut);
    assert_eq!(s.info.pid, pid);
    let r = run_gpuheat(&["report", session.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("timed out"));
    // Detached cleanly: the program is alive, untraced, and the agent let go of it.
    assert!(target.alive());
    assert_eq!(state_and_tracer(pid).1, "0");
    assert!(
        maps(pid, "libgpuheat_agent"),
        "the agent stays loaded, dormant"
    );
}

/// Issue 24 (never change what a program draws; every wait bounded): a program that never
/// waits for its frames runs far ahead of its GPU. `fill_cost` draws into a pbuffer, whose swap
/// is no flush on llvmpipe: binning a frame costs next to nothing, rasterizing it about 20 ms
/// at `--loop 8`, so after a few seconds minutes of frames are queued (63 s here before the
/// first frame of an attach arrived). A capture's first drain waited for all of them, the
/// program frozen meanwhile. The agent now waits for that backlog a bounded time (5 s), then
/// abandons the capture with the reason, and the program runs on.
#[test]
fn a_program_far_ahead_of_its_gpu_is_left_alone_with_the_reason() {
    let dir = scratch("attach-backlog");
    let mut target = Target::start(
        &dir,
        "fill_cost",
        &["--loop", "8", "--frames", "1000000000"],
    );
    let pid = target.child.id();
    wait_until("libEGL in fill_cost", || maps(pid, "libEGL"));
    std::thread::sleep(Duration::from_secs(4));
    let session = dir.join("backlog.gpuheat");
    let start = Instant::now();
    let out = run_gpuheat(&[
        "attach",
        &target.pid(),
        "--frames",
        "1",
        "--timeout",
        "120",
        "-o",
        session.to_str().unwrap(),
    ]);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    for needle in [
        "the capture of fill_cost",
        "was abandoned after 0 of 1 frames",
        "more than 5 s behind the program",
        "gpuheat run",
        "detached, fill_cost keeps running",
        session.to_str().unwrap(),
    ] {
        assert!(lines[0].contains(needle), "`{}` lacks `{needle}`", lines[0]);
    }
    // Getting in and the agent's bounded wait, not the backlog's minutes.
    assert!(took < Duration::from_secs(45), "took {took:?}: {stderr}");
    let s = gpuheat_session::Session::open(&session).expect("a readable session");
    assert_eq!(s.frames.len(), 0);
    let end = s.end.expect("an END record");
    assert_eq!(end.reason, gpuheat_session::EndReason::Abandoned);
    assert!(end.detail.is_some_and(|d| d.contains("behind")));
    let r = run_gpuheat(&["report", session.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("abandoned by the agent"));
    // The program runs on, untraced: it keeps using the CPU (binning, rasterizing).
    assert!(target.alive());
    assert_eq!(state_and_tracer(pid).1, "0");
    let cpu = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        // Fields from the third (the state) on; utime and stime are the 14th and 15th, of
        // every thread of the process.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let before = cpu();
    std::thread::sleep(Duration::from_secs(1));
    let after = cpu();
    assert!(
        after > before,
        "fill_cost stopped running: {before} -> {after} ticks"
    );
}

#[test]
fn a_program_stopped_after_the_attach_is_said_to_be_stopped() {
    let dir = scratch("attach-stopped-later");
    let target = Target::start(&dir, "stall", &[]);
    let pid = target.child.id();
    wait_until("libEGL in stall", || maps(pid, "libEGL"));
    let session = dir.join("stopped.gpuheat");
    let child = attach_in_background(&target.pid(), &session, &["--timeout", "3"]);
    wait_until("the agent in stall", || agent_settled(pid));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    let (out, _) = finish_within(child, Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("stall is stopped"), "{stderr}");
    assert!(!stderr.contains("keeps running"), "{stderr}");
}

#[test]
fn a_stopped_program_that_never_swaps_is_said_to_be_stopped() {
    let dir = scratch("attach-stopped");
    let target = Target::start(&dir, "overdraw", &["--layers", "1"]);
    let pid = target.child.id();
    wait_for_frame_loop(pid);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    wait_until("the stop", || state_and_tracer(pid).0 == 'T');
    let session = dir.join("never.gpuheat");
    let o = session.to_str().unwrap();
    fails_with(
        &["attach", &target.pid(), "--timeout", "1", "-o", o],
        "because it is stopped",
    );
    let out = run_gpuheat(&["attach", &target.pid(), "--timeout", "1", "-o", o]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("left running"), "{stderr}");
    assert!(stderr.contains(&format!("kill -CONT {pid}")), "{stderr}");
    assert!(!session.exists(), "no session for a failed attach");
    wait_until("the stop to stay", || {
        state_and_tracer(pid) == ('T', "0".into())
    });
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
}

#[test]
fn ctrl_c_ends_attach_promptly_before_the_injection_and_while_waiting_for_frames() {
    let dir = scratch("attach-ctrl-c-stages");
    // Waiting for a stopped program to swap: Ctrl-C gives up at once, nothing loaded.
    let stopped = Target::start(&dir, "overdraw", &["--layers", "1"]);
    let spid = stopped.child.id();
    wait_for_frame_loop(spid);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(spid as i32, libc::SIGSTOP) };
    wait_until("the stop", || state_and_tracer(spid).0 == 'T');
    let session = dir.join("before.gpuheat");
    let child = attach_in_background(&stopped.pid(), &session, &["--timeout", "60"]);
    wait_until("gpuheat to trace the program", || {
        state_and_tracer(spid).1 != "0"
    });
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (out, _) = finish_within(child, Duration::from_secs(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("left stopped and untraced"), "{stderr}");
    assert!(!session.exists());
    wait_until("the program released", || {
        state_and_tracer(spid) == ('T', "0".into())
    });
    assert!(!maps(spid, "libgpuheat_agent"));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(spid as i32, libc::SIGCONT) };

    // Waiting for frames that never come: Ctrl-C stops, keeps a readable session, detaches.
    let mut stall = Target::start(&dir, "stall", &[]);
    let pid = stall.child.id();
    wait_until("libEGL in stall", || maps(pid, "libEGL"));
    let session = dir.join("waiting.gpuheat");
    let child = attach_in_background(&stall.pid(), &session, &["--timeout", "60"]);
    wait_until("the agent in stall", || agent_settled(pid));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // The stop grace (3 s) bounds the wait for a last frame.
    let (out, _) = finish_within(child, Duration::from_secs(6));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped; kept 0 frames"), "{stderr}");
    let s = gpuheat_session::Session::open(&session).expect("a readable session");
    assert_eq!(s.end.unwrap().reason, gpuheat_session::EndReason::Stopped);
    assert!(stall.alive());
    assert_eq!(state_and_tracer(pid).1, "0");
}
