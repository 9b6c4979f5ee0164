//! The programs the bench runs, found next to it, and running one with a time limit.

use anyhow::{bail, Context, Result};
use gpuheat_session::control::env;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The programs the bench runs.
pub struct Tools {
    pub gpuheat: PathBuf,
    pub call_cost: PathBuf,
    pub overdraw: PathBuf,
    pub offscreen_pass: PathBuf,
    pub many_draws: PathBuf,
    pub agent: PathBuf,
    pub apitrace: Option<PathBuf>,
}

impl Tools {
    fn find() -> Result<Tools> {
        let exe = std::env::current_exe().context("locating gpuheat-bench")?;
        let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
        let need = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                bail!(
                    "{} not found next to gpuheat-bench: run `cargo build --release --workspace` (make bench does)",
                    p.display()
                )
            }
        };
        Ok(Tools {
            gpuheat: need("gpuheat")?,
            call_cost: need("call_cost")?,
            overdraw: need("overdraw")?,
            offscreen_pass: need("offscreen_pass")?,
            many_draws: need("many_draws")?,
            agent: need("libgpuheat_agent.so")?,
            apitrace: on_path("apitrace"),
        })
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// A fresh scratch directory for this run's sessions (the caller removes it).
fn scratch_dir() -> Result<PathBuf> {
    let scratch = std::env::temp_dir().join(format!("gpuheat-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    Ok(scratch)
}

/// Finds the programs, then runs `measure` with them and a fresh scratch directory, which is
/// removed afterwards whatever `measure` returned.
pub fn in_scratch<T>(measure: impl FnOnce(&Tools, &Path) -> Result<T>) -> Result<T> {
    let tools = Tools::find()?;
    let scratch = scratch_dir()?;
    let result = measure(&tools, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// What a program run with [`run_bounded`] said, and how it ended.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` in its own process group, collecting stdout and stderr until every process
/// holding them ends (a program left running by `gpuheat run --keep-running` included). Past
/// `limit` the whole group is killed and the run fails.
pub fn run_bounded(mut cmd: Command, limit: Duration) -> Result<Output> {
    for var in [
        "LD_PRELOAD",
        env::SOCKET,
        env::FRAMES,
        env::SKIP,
        env::MODE,
        env::GEOMETRY_VERTICES,
    ] {
        if !cmd.get_envs().any(|(k, v)| k == var && v.is_some()) {
            cmd.env_remove(var);
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().with_context(|| format!("starting {shown}"))?;
    let pgid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    for (which, mut pipe) in [
        (
            0,
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        ),
        (1, Box::new(child.stderr.take().unwrap())),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send((which, String::from_utf8_lossy(&buf).into_owned()));
        });
    }
    drop(tx);
    let deadline = Instant::now() + limit;
    let (mut stdout, mut stderr) = (None, None);
    while stdout.is_none() || stderr.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((0, s)) => stdout = Some(s),
            Ok((_, s)) => stderr = Some(s),
            Err(_) => {
                // SAFETY: signalling the process group this function created.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                let _ = child.wait();
                bail!("{shown} still running after {} s; killed", limit.as_secs());
            }
        }
    }
    let status = child.wait()?;
    Ok(Output {
        status,
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
    })
}
