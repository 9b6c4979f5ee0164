//! Helpers for the injector's tests: real target processes, test programs compiled from
//! tests/data with the system C compiler, /proc probes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// target/debug (the test executable lives in target/debug/deps).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executable in target/<profile>/deps")
        .to_path_buf()
}

/// A workspace example program, e.g. `overdraw`.
pub fn example(name: &str) -> PathBuf {
    let p = target_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: build the workspace first (`cargo build --workspace`)",
        p.display()
    );
    p
}

/// A fresh private directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "gpuheat-inject-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn cc(args: &[&std::ffi::OsStr]) {
    let out = Command::new("cc")
        .args(args)
        .output()
        .expect("running cc (gcc must be installed)");
    assert!(
        out.status.success(),
        "cc {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles tests/data/test_entry.c into `dir/libgpuheat_inject_test.so`.
pub fn build_test_library(dir: &Path) -> PathBuf {
    let out = dir.join("libgpuheat_inject_test.so");
    cc(&[
        "-O2".as_ref(),
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-pthread".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        data("test_entry.c").as_os_str(),
    ]);
    out
}

/// Compiles tests/data/`src` into the executable `dir/name`, with extra linker flags.
pub fn build_program(dir: &Path, src: &str, name: &str, libs: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let src = data(src);
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "-O2".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        src.as_os_str(),
    ];
    args.extend(libs.iter().map(std::ffi::OsStr::new));
    cc(&args);
    out
}

/// A child process killed (and reaped) on drop.
pub struct Target {
    pub child: Child,
}

impl Target {
    pub fn spawn(program: &Path, args: &[&str]) -> Self {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", program.display()));
        Target { child }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for a line "ready" on the child's stdout.
    pub fn wait_ready_line(&mut self) {
        let stdout = self.child.stdout.as_mut().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read");
        assert_eq!(line.trim(), "ready", "target did not start");
    }

    /// Waits until the pre-flight accepts the target (its GL library is mapped).
    pub fn wait_checkable(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match gpuheat_inject::check(self.pid()) {
                Ok(_) => return,
                Err(e) if Instant::now() >= deadline => panic!("target never checkable: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `State:` letter from /proc/PID/stat (R, S, D, T, t, Z…).
pub fn state(pid: i32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.chars().next().unwrap()
}

/// User CPU time in clock ticks (field 14 of /proc/PID/stat).
pub fn utime(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split_whitespace().nth(11).unwrap().parse().unwrap()
}

/// TracerPid of the process and of each of its threads (all must be 0 after an injection).
pub fn tracers(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).expect("task dir") {
        let tid = e.unwrap().file_name();
        let status =
            std::fs::read_to_string(format!("/proc/{pid}/task/{}/status", tid.to_string_lossy()))
                .unwrap_or_default();
        if let Some(v) = status.lines().find_map(|l| l.strip_prefix("TracerPid:")) {
            out.push(v.trim().parse().unwrap());
        }
    }
    out
}

/// Asserts the target is alive, untraced (every thread) and not stopped.
pub fn assert_free_and_running(t: &mut Target) {
    assert!(t.is_alive(), "target died");
    let pid = t.pid();
    let tr = tracers(pid);
    assert!(tr.iter().all(|&x| x == 0), "still traced: {tr:?}");
    let s = state(pid);
    assert!(s != 't' && s != 'T', "target left stopped (state {s})");
}

/// Context switches of the target's main thread: it switches at least once per frame (the
/// examples pace their frames with a sleep when running until killed, and block on the
/// rasterizer otherwise), and not at all while stopped.
fn switches(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .filter(|l| l.contains("ctxt_switches:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// Asserts the target keeps running its frame loop over `window` (CPU time or context
/// switches advance; a paced program uses little CPU).
pub fn assert_progresses(t: &mut Target, window: Duration) {
    let pid = t.pid();
    let before = (utime(pid), switches(pid));
    std::thread::sleep(window);
    assert!(t.is_alive(), "target died");
    let after = (utime(pid), switches(pid));
    assert!(
        after.0 > before.0 || after.1 > before.1 + 5,
        "target made no progress: (utime, context switches) {before:?} -> {after:?}"
    );
}
