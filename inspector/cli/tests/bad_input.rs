//! Bad input gets one clear line on stderr and a non-zero exit: never a panic, never a hang.

mod common;
use common::*;

/// Asserts a failed run with a single-line error containing `needle`.
fn fails_with_one_line(args: &[&str], needle: &str) {
    let out = run_gpuheat(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: expected one line, got: {stderr}");
    assert!(
        lines[0].contains(needle),
        "{args:?}: `{}` lacks `{needle}`",
        lines[0]
    );
}

#[test]
fn a_missing_program() {
    let dir = scratch("missing");
    let out = dir.join("x.gpuheat");
    fails_with_one_line(
        &["run", "-o", out.to_str().unwrap(), "--", "/no/such/program"],
        "cannot start `/no/such/program`",
    );
}

#[test]
fn a_program_that_never_loads_gl() {
    let dir = scratch("nogl");
    let out = dir.join("x.gpuheat");
    fails_with_one_line(
        &["run", "-o", out.to_str().unwrap(), "--", "true"],
        "before making any GL",
    );
    fails_with_one_line(
        &[
            "run",
            "--timeout",
            "2",
            "-o",
            out.to_str().unwrap(),
            "--",
            "sleep",
            "30",
        ],
        "made no GL, GLES, EGL or Vulkan call within 2 s",
    );
}

#[test]
fn unwritable_output() {
    let exe = example("overdraw");
    fails_with_one_line(
        &[
            "run",
            "-o",
            "/nonexistent-dir/x.gpuheat",
            "--",
            exe.to_str().unwrap(),
        ],
        "cannot write session file /nonexistent-dir/x.gpuheat",
    );
    // Even root cannot create files under /proc.
    fails_with_one_line(
        &["run", "-o", "/proc/x.gpuheat", "--", exe.to_str().unwrap()],
        "cannot write session file",
    );
}

#[test]
fn damaged_sessions() {
    let dir = scratch("damaged");
    let good = capture(
        &dir,
        "overdraw",
        &["--frames", "3"],
        &["--api", "gl", "--layers", "2"],
    );
    let bytes = std::fs::read(&good).unwrap();

    let truncated = dir.join("truncated.gpuheat");
    std::fs::write(&truncated, &bytes[..bytes.len() - 7]).unwrap();
    fails_with_one_line(&["report", truncated.to_str().unwrap()], "truncated");
    // --partial still reports what the damaged file holds.
    let out = run_gpuheat(&["report", "--partial", "--json", truncated.to_str().unwrap()]);
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["frames"].as_array().unwrap().len(),
        3,
        "the End chunk was cut, not a frame"
    );

    let header_only = dir.join("header.gpuheat");
    std::fs::write(&header_only, &bytes[..5]).unwrap();
    fails_with_one_line(
        &["report", header_only.to_str().unwrap()],
        "not a gpuheat session",
    );

    let mut seed = 0x9e3779b97f4a7c15u64;
    for i in 0..20 {
        let len = 1 + (i * 997) % 5000;
        let random: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let f = dir.join(format!("random{i}.gpuheat"));
        std::fs::write(&f, random).unwrap();
        fails_with_one_line(&["report", f.to_str().unwrap()], "not a gpuheat session");
    }

    // A flipped byte inside a chunk is found by its checksum.
    let mut flipped = bytes.clone();
    let at = bytes.len() / 2;
    flipped[at] ^= 0x40;
    let f = dir.join("flipped.gpuheat");
    std::fs::write(&f, flipped).unwrap();
    fails_with_one_line(&["report", f.to_str().unwrap()], "corrupt");

    fails_with_one_line(
        &["report", dir.join("absent.gpuheat").to_str().unwrap()],
        "absent.gpuheat",
    );
}

#[test]
fn attaching_to_init_as_root_says_what_is_really_wrong() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root");
        return;
    }
    let dir = scratch("attach-init");
    let out = dir.join("init.gpuheat");
    let o = run_gpuheat(&["attach", "1", "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Whatever stops it (pid 1 refusing even root, or not being a GL program), telling
    // root to run as root is no help.
    assert!(!stderr.contains("run as root or"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn a_program_still_in_its_loader_is_waited_for_then_named() {
    use std::os::unix::process::CommandExt;
    // hot_spot stopped at its exec, before its dynamic loader maps a library: traced by this
    // test, it stays there, with ld-linux mapped and no libc (a script that starts a program
    // and attaches at once can catch it a few ms later, between libEGL and libc).
    let mut cmd = std::process::Command::new(example("hot_spot"));
    // SAFETY: ptrace(PTRACE_TRACEME) is async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(|| {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn hot_spot");
    let pid = child.id();
    // Its exec stops it for us, its tracer; detached with SIGSTOP it stays stopped, untraced
    // (a traced program is refused before its libraries are looked at).
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid out pointer.
    let waited = unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    assert_eq!(
        waited,
        pid as i32,
        "waitpid: {}",
        std::io::Error::last_os_error()
    );
    assert!(libc::WIFSTOPPED(status), "status {status:#x}");
    // SAFETY: `pid` is our tracee, in a ptrace stop.
    let detached = unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, libc::SIGSTOP) };
    assert_eq!(detached, 0, "detach: {}", std::io::Error::last_os_error());
    let dir = scratch("loading");
    let out = dir.join("x.gpuheat");
    let started = std::time::Instant::now();
    let result = std::panic::catch_unwind(|| {
        fails_with_one_line(
            &["attach", &pid.to_string(), "-o", out.to_str().unwrap()],
            "still loading its libraries",
        )
    });
    let waited = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    // The wait is bounded (2 s), and it waited.
    assert!(waited.as_secs_f64() > 1.5, "{waited:?}");
    assert!(!out.exists());
}

#[test]
fn attaching_to_a_kernel_thread_says_no_such_process() {
    // A kernel thread (`Kthread: 1`, Linux 6.x) has no mappings and no executable: it is no
    // process to attach to, whatever /proc/PID/exe says when read.
    let kthread = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/status"))
                .is_ok_and(|s| s.lines().any(|l| l == "Kthread:\t1"))
        });
    let Some(pid) = kthread else {
        eprintln!("skipped: no kernel thread says so in /proc/PID/status");
        return;
    };
    let dir = scratch("kthread");
    let out = dir.join("k.gpuheat");
    fails_with_one_line(
        &["attach", &pid.to_string(), "-o", out.to_str().unwrap()],
        &format!("no process with pid {pid}"),
    );
    assert!(!out.exists());
}
