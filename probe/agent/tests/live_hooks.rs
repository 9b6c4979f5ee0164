//! Live hooks (`gpuheat_agent::live`) in a real program on the real driver (Mesa llvmpipe,
//! EGL surfaceless), no mocks.
//!
//! `tests/data/live_target.c` is compiled with gcc: it renders, caches pointers the way GL
//! loaders do, then `dlopen`s the agent (RTLD_NOW, not global), calls its test entry
//! `gpuheat_live_install_for_test` twice and keeps rendering through every path. It checks
//! from C, independently of the agent, that each path enters our wrappers (structure: GOT,
//! dispatch table, hooked code; behaviour: hardware execute breakpoints on the wrappers) and
//! prints the framebuffer hash, which must equal a run without the agent. Variants: the
//! program built with `-fno-plt` (GLOB_DAT instead of JUMP_SLOT relocations), and Mesa's
//! own dispatch table instead of libglvnd's.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

struct Built {
    target: PathBuf,
    target_noplt: PathBuf,
    plugin: PathBuf,
}

fn gcc(args: &[&str]) {
    let out = Command::new("gcc")
        .args(args)
        .output()
        .expect("gcc must be installed (scripts/install-deps.sh)");
    assert!(
        out.status.success(),
        "gcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The test program, its -fno-plt twin and the plugin, compiled once per test binary.
fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live_hooks");
        std::fs::create_dir_all(&dir).unwrap();
        let src = data.join("live_target.c");
        let plugin_src = data.join("live_plugin.c");
        let b = Built {
            target: dir.join("live_target"),
            target_noplt: dir.join("live_target_noplt"),
            plugin: dir.join("libliveplugin.so"),
        };
        let s = |p: &Path| p.to_str().unwrap().to_string();
        gcc(&[
            "-O1",
            "-g",
            "-Wall",
            "-o",
            &s(&b.target),
            &s(&src),
            "-lEGL",
            "-lGLESv2",
            "-ldl",
        ]);
        gcc(&[
            "-O1",
            "-g",
            "-Wall",
            "-fno-plt",
            "-o",
            &s(&b.target_noplt),
            &s(&src),
            "-lEGL",
            "-lGLESv2",
            "-ldl",
        ]);
        gcc(&[
            "-O1",
            "-Wall",
            "-shared",
            "-fPIC",
            "-o",
            &s(&b.plugin),
            &s(&plugin_src),
            "-lGLESv2",
        ]);
        b
    })
}

/// The agent library this test was built with: `cargo test` (re)builds it in
/// target/debug/deps/ (only `cargo build` copies it to target/debug/), so take the newer.
fn agent_so() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libgpuheat_agent.so"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("libgpuheat_agent.so not found near {}", deps.display()))
}

fn run(exe: &Path, agent: Option<&Path>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.arg(agent.map_or("none".into(), |a| a.to_str().unwrap().to_string()))
        .arg(&built().plugin)
        .env_remove("GPUHEAT_SOCKET")
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the test program")
}

/// The numbers of one `gpuheat-live:` report line.
#[derive(Debug, Default, PartialEq)]
struct Report {
    got: usize,
    modules: usize,
    dispatch: usize,
    inline: Vec<String>,
}

fn reports(stderr: &str) -> Vec<Report> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("gpuheat-live: "))
        .map(|l| {
            let mut r = Report::default();
            for field in l.split(' ') {
                match field.split_once('=') {
                    Some(("got", v)) => r.got = v.parse().unwrap(),
                    Some(("modules", v)) => r.modules = v.parse().unwrap(),
                    Some(("dispatch", v)) => r.dispatch = v.parse().unwrap(),
                    Some(("inline", v)) => {
                        r.inline = v
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect()
                    }
                    _ => {}
                }
            }
            r
        })
        .collect()
}

fn hash(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("hash="))
        .unwrap_or_else(|| panic!("no hash line in:\n{stdout}"))
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

/// Runs `exe` without and with the agent and checks everything the C side checked, the
/// picture, and the two install reports. Returns the first report.
fn live_run(exe: &Path, env: &[(&str, &str)]) -> Report {
    let plain = run(exe, None, env);
    let plain_out = String::from_utf8_lossy(&plain.stdout);
    assert!(
        plain.status.success(),
        "without the agent: {}\n{plain_out}\n{}",
        plain.status,
        String::from_utf8_lossy(&plain.stderr)
    );

    let live = run(exe, Some(&agent_so()), env);
    let out = String::from_utf8_lossy(&live.stdout);
    let err = String::from_utf8_lossy(&live.stderr);
    eprintln!("{out}{err}");
    assert!(
        live.status.success(),
        "with the agent: {} (failed checks above)",
        live.status
    );
    assert!(!out.contains("FAIL"));
    if out.contains("perf=unavailable") {
        eprintln!("warning: perf breakpoints unavailable: wrapper entries were not counted");
    } else {
        assert!(out.contains("check enter-cached-eglSwapBuffers ok"));
        assert!(out.contains("check enter-cached-glDrawArrays ok"));
    }
    // Bit-identical picture and no GL error with and without the agent.
    assert_eq!(hash(&out), hash(&plain_out));
    assert!(out.contains("error=0x0"));

    let r = reports(&err);
    assert_eq!(r.len(), 2, "two install reports expected:\n{err}");
    let first = &r[0];
    assert!(first.got > 0, "{first:?}");
    assert!(first.modules > 0, "{first:?}");
    assert!(first.dispatch > 0, "{first:?}");
    for name in ["eglSwapBuffers", "eglMakeCurrent", "eglGetProcAddress"] {
        assert!(first.inline.iter().any(|n| n == name), "{name}: {first:?}");
    }
    // The second install finds nothing new.
    assert_eq!(
        r[1],
        Report::default(),
        "second install must patch nothing:\n{err}"
    );
    r.into_iter().next().unwrap()
}

#[test]
fn plt_program_every_path_reaches_the_wrappers_and_renders_the_same() {
    let r = live_run(&built().target, &[]);
    eprintln!("report: {r:?}");
}

#[test]
fn no_plt_program_globdat_slots_are_patched() {
    let r = live_run(&built().target_noplt, &[]);
    eprintln!("report: {r:?}");
}

#[test]
fn mesa_dispatch_table_when_glvnd_is_not_used() {
    let r = live_run(&built().target, &[("GPUHEAT_LIVE_DISPATCH", "mesa")]);
    eprintln!("report: {r:?}");
}

#[test]
fn without_a_dispatch_layer_got_and_inline_hooks_still_hold() {
    // With the table left alone, the GOT and inline layers alone still give the same picture;
    // only the pointers cached from eglGetProcAddress before the attach are missed.
    let exe = &built().target;
    let env = [("GPUHEAT_LIVE_DISPATCH", "off")];
    let plain = run(exe, None, &env);
    let live = run(exe, Some(&agent_so()), &env);
    let out = String::from_utf8_lossy(&live.stdout);
    eprintln!("{out}{}", String::from_utf8_lossy(&live.stderr));
    let failed: Vec<&str> = out
        .lines()
        .filter(|l| l.ends_with("FAIL") || l.contains(" FAIL "))
        .filter_map(|l| l.split(' ').nth(1))
        .collect();
    assert!(failed.contains(&"dispatch-glDrawArrays"), "{failed:?}");
    for f in &failed {
        assert!(
            ["dispatch-glDrawArrays", "enter-cached-glDrawArrays"].contains(f),
            "only the table checks may fail: {failed:?}"
        );
    }
    assert!(out.contains("check got-glDrawArrays ok"));
    assert!(out.contains("check inline-eglSwapBuffers ok"));
    assert_eq!(
        hash(&out),
        hash(&String::from_utf8_lossy(&plain.stdout)),
        "same picture"
    );
    let r = reports(&String::from_utf8_lossy(&live.stderr));
    assert_eq!(r[0].dispatch, 0);
    assert_eq!(live.status.code(), Some(1), "only the table checks fail");
}
