//! Running the real gpuheat CLI on the real example programs (Mesa llvmpipe, EGL surfaceless).
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub fn gpuheat() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gpuheat"))
}

/// An example program, built by `cargo build --workspace` next to gpuheat.
pub fn example(name: &str) -> PathBuf {
    let p = gpuheat().parent().unwrap().join(name);
    assert!(
        p.is_file(),
        "{} missing: run `cargo build --workspace` (make test does)",
        p.display()
    );
    let agent = gpuheat().parent().unwrap().join("libgpuheat_agent.so");
    assert!(
        agent.is_file(),
        "{} missing: run `cargo build --workspace`",
        agent.display()
    );
    p
}

pub use gpuheat_testkit::Scratch;
// Not every test binary starts an X server.
#[allow(unused_imports)]
pub use gpuheat_testkit::Xvfb;

/// Directories of [`shared_scratch`], removed when the test process exits.
static SHARED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

extern "C" fn remove_shared() {
    if let Ok(dirs) = SHARED.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A scratch directory for what several tests of one file share (a capture made once and
/// kept in a `static`, which is never dropped): removed when the test process exits, also
/// after failed tests (the harness exits through `exit`, which runs `atexit` handlers).
pub fn shared_scratch(test: &str) -> PathBuf {
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain extern "C" function that touches only a static.
        unsafe { libc::atexit(remove_shared) };
    });
    // The exit handler removes it instead of a drop.
    let path = scratch(test).keep();
    SHARED.lock().unwrap().push(path.clone());
    path
}

/// A fresh scratch directory for one test, removed on drop.
pub fn scratch(test: &str) -> Scratch {
    Scratch::new("gpuheat-test", test)
}

/// Runs `gpuheat ARGS`, bounded in time so a hang fails instead of blocking CI.
pub fn run_gpuheat(args: &[&str]) -> Output {
    let out = Command::new("timeout")
        .arg("-k5")
        .arg("240")
        .arg(gpuheat())
        .args(args)
        .output()
        .expect("spawn gpuheat");
    assert_ne!(out.status.code(), Some(124), "gpuheat {args:?} timed out");
    out
}

/// `gpuheat run` an example and return the session path; panics with stderr on failure.
pub fn capture(dir: &Path, name: &str, gpuheat_args: &[&str], example_args: &[&str]) -> PathBuf {
    capture_with_output(dir, name, gpuheat_args, example_args).0
}

/// The environment that has the agent add the deferred tally's records on the GPU
/// (`gpuheat_counters::tally::resolves_on_gpu`), which it does by default on hardware only.
pub const GPU_RESOLVE: (&str, &str) = (gpuheat_session::control::env::TALLY_RESOLVE, "gpu");

/// The environment that has the agent add the deferred tally's records on the CPU, which it
/// does by default on a software rasterizer only.
pub const CPU_RESOLVE: (&str, &str) = (gpuheat_session::control::env::TALLY_RESOLVE, "cpu");

/// A timing as the tests label it: `--timing`'s value, and the environment that goes with
/// it. `deferred` adds the tally's records on the CPU ([`CPU_RESOLVE`]), `deferred-gpu` is
/// `deferred` with them resolved on the GPU ([`GPU_RESOLVE`]): both ways are tested whatever
/// the renderer would choose (llvmpipe: the CPU; a GPU: the GPU).
pub fn timing(label: &str) -> (&str, &'static [(&'static str, &'static str)]) {
    match label {
        "deferred" => ("deferred", &[CPU_RESOLVE]),
        "deferred-gpu" => ("deferred", &[GPU_RESOLVE]),
        other => (other, &[]),
    }
}

/// [`capture`] with `--timing` and its environment from a label of [`timing`].
pub fn capture_timed(
    dir: &Path,
    name: &str,
    gpuheat_args: &[&str],
    label: &str,
    example_args: &[&str],
) -> PathBuf {
    let (timing, env) = timing(label);
    let mut args = gpuheat_args.to_vec();
    args.extend(["--timing", timing]);
    capture_with_env(dir, name, &args, example_args, env)
}

/// [`capture`] with `env` set for gpuheat and the program.
pub fn capture_with_env(
    dir: &Path,
    name: &str,
    gpuheat_args: &[&str],
    example_args: &[&str],
    env: &[(&str, &str)],
) -> PathBuf {
    let session = dir.join(format!("{name}.gpuheat"));
    let mut cmd = Command::new("timeout");
    cmd.arg("-k5").arg("240").arg(gpuheat());
    cmd.args(["run", "-o", session.to_str().unwrap()])
        .args(gpuheat_args)
        .arg("--")
        .arg(example(name))
        .args(example_args);
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("spawn gpuheat");
    assert!(
        out.status.success(),
        "gpuheat run {name} {gpuheat_args:?} {example_args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    session
}

/// [`capture`], with the run's output (with `--keep-running`, what the example printed).
pub fn capture_with_output(
    dir: &Path,
    name: &str,
    gpuheat_args: &[&str],
    example_args: &[&str],
) -> (PathBuf, Output) {
    let session = dir.join(format!("{name}.gpuheat"));
    let exe = example(name);
    let mut args: Vec<&str> = vec!["run", "-o", session.to_str().unwrap()];
    args.extend_from_slice(gpuheat_args);
    args.push("--");
    args.push(exe.to_str().unwrap());
    args.extend_from_slice(example_args);
    let out = run_gpuheat(&args);
    assert!(
        out.status.success(),
        "gpuheat {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (session, out)
}

/// `gpuheat run` of an example with extra environment for the program; the session.
pub fn capture_env(
    dir: &Path,
    tag: &str,
    name: &str,
    gpuheat_args: &[&str],
    example_args: &[&str],
    env: &[(&str, &str)],
) -> gpuheat_session::Session {
    let session: PathBuf = dir.join(format!("{name}-{tag}.gpuheat"));
    let exe = example(name);
    let mut cmd = Command::new("timeout");
    cmd.arg("-k5").arg("240").arg(gpuheat());
    cmd.args(["run", "-o", session.to_str().unwrap()]);
    cmd.args(gpuheat_args)
        .arg("--")
        .arg(&exe)
        .args(example_args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("spawn gpuheat");
    assert!(
        out.status.success(),
        "gpuheat run {name} {example_args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    gpuheat_session::Session::open(&session).unwrap()
}

/// The line an example prints at exit for `key` (`key=…`), or its `varied=…` line when its
/// frames disagreed.
pub fn result_line(stdout: &[u8], key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    String::from_utf8_lossy(stdout)
        .lines()
        .find(|l| l.starts_with(&prefix) || l.starts_with("varied="))
        .map(str::to_string)
}

/// The `checksum=` line an example prints with `--checksum`.
pub fn checksum(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix("checksum=").map(str::to_string))
        .expect("checksum line")
}

/// Checksums of an example's final frame run plainly and under `gpuheat run --keep-running
/// FLAGS` (the program ends after its own `--frames` and prints its checksum).
pub fn checksums_plain_and_traced(
    session: &Path,
    name: &str,
    flags: &[&str],
    example_args: &[&str],
) -> (String, String) {
    checksums_plain_and_traced_env(session, name, flags, &[], example_args)
}

/// [`checksums_plain_and_traced`] with `env` set for the traced run.
pub fn checksums_plain_and_traced_env(
    session: &Path,
    name: &str,
    flags: &[&str],
    env: &[(&str, &str)],
    example_args: &[&str],
) -> (String, String) {
    let exe = example(name);
    let plain = Command::new(&exe).args(example_args).output().unwrap();
    assert!(plain.status.success(), "{name} {example_args:?}");
    let mut run = vec!["run", "--keep-running"];
    run.extend_from_slice(flags);
    run.extend_from_slice(&["-o", session.to_str().unwrap(), "--", exe.to_str().unwrap()]);
    run.extend_from_slice(example_args);
    let traced = Command::new("timeout")
        .arg("-k5")
        .arg("240")
        .arg(gpuheat())
        .args(&run)
        .envs(env.iter().copied())
        .output()
        .expect("spawn gpuheat");
    assert!(
        traced.status.success(),
        "{}",
        String::from_utf8_lossy(&traced.stderr)
    );
    (checksum(&plain.stdout), checksum(&traced.stdout))
}

/// `gpuheat report --json` of a session, every work call included.
pub fn report(session: &Path) -> Value {
    let out = run_gpuheat(&[
        "report",
        "--json",
        "--top",
        "1000000",
        session.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("report JSON")
}

/// The work calls of one frame, in call order.
pub fn frame_draws(report: &Value, frame: u64) -> Vec<Value> {
    let mut v: Vec<Value> = report["top_draws"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["frame"].as_u64() == Some(frame))
        .cloned()
        .collect();
    v.sort_by_key(|d| d["call"].as_u64());
    v
}

/// A counter of a work call, when measured.
pub fn counter(draw: &Value, name: &str) -> Option<u64> {
    draw["counters"][name].as_u64()
}

/// A PNG read back as RGB8.
pub struct Png {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Png {
    pub fn px(&self, x: u32, y: u32) -> [u8; 3] {
        let at = (y * self.width + x) as usize * 3;
        self.rgb[at..at + 3].try_into().unwrap()
    }
}

/// Reads a PNG gpuheat wrote.
pub fn read_png(path: &Path) -> Png {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let rgb = match info.color_type {
        png::ColorType::Rgb => buf[..info.buffer_size()].to_vec(),
        png::ColorType::Rgba => buf[..info.buffer_size()]
            .chunks(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        other => panic!("colour type {other:?}"),
    };
    Png {
        width: info.width,
        height: info.height,
        rgb,
    }
}

/// Waits until the program installed its SIGUSR1 handler, i.e. entered its frame loop.
pub fn wait_for_frame_loop(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .unwrap()
            .trim();
        if u64::from_str_radix(caught, 16).unwrap() & (1 << (libc::SIGUSR1 - 1)) != 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "program never reached its frame loop"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The calls a `--json` finding's evidence names.
pub fn evidence_calls(f: &Value) -> Vec<u64> {
    f["evidence"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect()
}

/// Named value `name` of a `--json` finding's evidence.
pub fn evidence_value<'a>(f: &'a Value, name: &str) -> Option<&'a str> {
    f["evidence"]["values"]
        .as_array()?
        .iter()
        .find(|v| v[0] == name)
        .and_then(|v| v[1].as_str())
}

/// An example started normally (not under gpuheat), in its frame loop once started, killed
/// on drop: the program a test attaches to.
pub struct Running(pub Child);

impl Running {
    /// Starts example `name` with `args` and waits for its frame loop.
    pub fn start(name: &str, args: &[&str]) -> Running {
        let child = Command::new(example(name))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_frame_loop(child.id());
        Running(child)
    }

    /// Its pid, as `gpuheat attach` takes it.
    pub fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Index and arguments of frame `frame`'s calls to `function`.
pub fn calls_to(s: &gpuheat_session::Session, frame: u64, function: &str) -> Vec<(u32, Vec<u64>)> {
    let f = s
        .frames
        .iter()
        .find(|f| f.index == frame)
        .unwrap_or_else(|| panic!("no frame {frame}"));
    f.calls
        .iter()
        .enumerate()
        .filter(|(_, c)| s.functions.functions[usize::from(c.func)].name == function)
        .map(|(i, c)| (i as u32, c.args.clone()))
        .collect()
}

/// Asks running example `pid` (SIGUSR1) for the checksum of the frame it just swapped, and
/// reads it from the end of its stdout file (bounded: 10 s).
pub fn sigusr1_checksum(stdout: &Path, pid: u32) -> String {
    let before = std::fs::read_to_string(stdout)
        .unwrap_or_default()
        .lines()
        .count();
    // SAFETY: kill(2) on a child of the test.
    unsafe { libc::kill(pid as i32, libc::SIGUSR1) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(stdout).unwrap_or_default();
        if let Some(line) = text.lines().nth(before) {
            return line
                .strip_prefix("checksum=")
                .expect("checksum line")
                .to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no checksum from the program"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `gpuheat ARGS` on `display`, killed after `secs` (a hang fails the test instead of
/// blocking it).
pub fn gpuheat_within(secs: u32, display: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.args(["-k5", &secs.to_string()])
        .arg(gpuheat())
        .args(args);
    if let Some(d) = display {
        cmd.env("DISPLAY", d);
    }
    let out = cmd.output().unwrap();
    assert_ne!(
        out.status.code(),
        Some(124),
        "gpuheat {args:?} did not return within {secs} s: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `out`, after checking that the command it came from (`what`) succeeded.
pub fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The path of `program` when it is installed; `None` (and a printed reason: the test skips)
/// when not.
pub fn installed(program: &str) -> Option<String> {
    let out = Command::new("which").arg(program).output().ok()?;
    if !out.status.success() {
        eprintln!("skipped: {program} is not installed (scripts/install-deps.sh installs it)");
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A matched draw's ranking time in `gpuheat diff --json`, raw.
pub fn time(m: &Value) -> &Value {
    &m["metrics"][m["rank"].as_u64().unwrap() as usize]
}

/// The comparison a matched draw's verdict is: its time beyond the common drift, when one was
/// taken out, else the raw one.
pub fn judged(m: &Value) -> &Value {
    match &m["time_beyond_drift"] {
        Value::Null => time(m),
        c => c,
    }
}

/// Whether a comparison of `gpuheat diff --json` is a significant change.
pub fn significant(c: &Value) -> bool {
    matches!(c["verdict"].as_str(), Some("higher" | "lower"))
}

/// Σ_p heat(p) against Σ T_d of the draws with fragments: the relative error. Draws that
/// measured 0 ns (possible for small draws on llvmpipe once the bracket cost is taken off)
/// must leave the map at 0.
pub fn conservation_error(
    heat: &[f32],
    draws: &[gpuheat_session::DrawCoverage],
    what: &str,
) -> f64 {
    let painted: f64 = heat.iter().map(|&v| f64::from(v)).sum();
    let expected: f64 = draws
        .iter()
        .filter(|d| d.fragments > 0)
        .map(|d| d.time_ns as f64)
        .sum();
    if expected == 0.0 {
        assert_eq!(
            painted, 0.0,
            "{what}: no time measured, yet heat: {draws:?}"
        );
        return 0.0;
    }
    let err = (painted - expected).abs() / expected;
    eprintln!("{what}: Σ T_d = {expected} ns, Σ heat = {painted:.1}, relative error {err:.2e}");
    err
}
