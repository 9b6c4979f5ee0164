//! Getting into a running program: the agent loaded at a swap by the injector, its attach
//! entry's status turned into one-line errors, its connection back, and the /proc look-ups
//! around it. `attach` and the live view both start here.

use crate::receive::{self, Endpoint};
use anyhow::{bail, Context, Result};
use gpuheat_session::control::{self, AttachArg, AttachStatus};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long the agent may take to connect back once its entry point returned.
const CONNECT_BOUND: Duration = Duration::from_secs(5);

/// Why [`get_in`] did not get in.
pub(crate) enum NotIn {
    /// Ctrl-C before the injection: the program is as it was.
    Cancelled(String),
    /// Anything else, said in one line.
    Failed(anyhow::Error),
}

impl NotIn {
    /// The command's end: 130 after Ctrl-C, the error otherwise.
    pub(crate) fn into_exit(self) -> Result<ExitCode> {
        match self {
            NotIn::Cancelled(why) => {
                eprintln!("gpuheat: stopped before getting in: {why}");
                Ok(ExitCode::from(130))
            }
            NotIn::Failed(e) => Err(e),
        }
    }
}

/// How to get into a program.
pub(crate) enum Way {
    /// Inject the agent with ptrace at a GL swap.
    Inject(gpuheat_inject::TargetInfo),
    /// Wake the agent that is in already as a dormant Vulkan layer (`gpuheat vulkan-env`).
    Wake,
}

/// The pre-flight of getting into `pid`: a GL program is injected into; a program without GL
/// whose Vulkan loader holds `agent` as its dormant layer is woken; anything else is the
/// injector's one-line error (no GL in the target, permission, …).
pub(crate) fn check(pid: i32, agent: &std::path::Path) -> Result<Way> {
    match gpuheat_inject::check(pid) {
        Ok(t) => Ok(Way::Inject(t)),
        Err(_) if crate::vulkan::dormant_layer(pid, agent) => Ok(Way::Wake),
        Err(_) if crate::vulkan::maps_vulkan(pid) && crate::vulkan::asked_for_layer(pid) => {
            Err(anyhow::anyhow!(
                "pid {pid} was started with gpuheat's Vulkan layer enabled, but its loader did not load it \
                 (the layer manifest is missing, or names an agent library that is gone): run \
                 `eval \"$(gpuheat vulkan-env)\"` again and restart the program"
            ))
        }
        Err(e) if crate::vulkan::maps_vulkan(pid) => Err(anyhow::anyhow!(
            "{e}; it draws with Vulkan, whose layers are inserted only at start: start it with \
             `eval \"$(gpuheat vulkan-env)\"` first (or under `gpuheat run`), then attach"
        )),
        Err(e) => Err(e.into()),
    }
}

/// How long an attach waits for the program's swap before it says it is waiting.
const WAITING_NOTICE_AFTER: Duration = Duration::from_secs(1);

/// Gets into `pid` the `way` [`check`] found, and waits (bounded) for the agent to connect
/// back to `endpoint`: the injection (or wake-up), the entry's status turned into one-line
/// errors, and the connection, as `attach` and the live view both need them. `first` is the
/// command the caller sends first once connected: the agent learns it with the injection,
/// so a first capture can warm up from the injected frame on.
pub(crate) fn get_in(
    pid: i32,
    way: &Way,
    agent: &std::path::Path,
    endpoint: &Endpoint,
    timeout: Duration,
    first: &control::Command,
) -> Result<
    (
        gpuheat_inject::Injected,
        Hooked,
        std::os::unix::net::UnixStream,
    ),
    NotIn,
> {
    let arg = AttachArg::new(endpoint.socket.to_string_lossy())
        .with_command(first.clone())
        .to_string();
    let injected = std::thread::scope(|s| {
        let (done, waiting) = std::sync::mpsc::channel::<()>();
        // A program that presents no frame (a menu waiting for input, a level loading) keeps
        // the attach waiting for its swap, silently up to the timeout: say so, on a terminal
        // only (a script's stderr keeps its one line per outcome).
        if std::io::stderr().is_terminal() {
            s.spawn(move || {
                if waiting.recv_timeout(WAITING_NOTICE_AFTER)
                    == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                {
                    eprintln!(
                        "gpuheat: waiting for pid {pid} to present a frame: gpuheat gets in at a swap (at most {} s, --timeout; Ctrl-C stops)",
                        timeout.as_secs()
                    );
                }
            });
        }
        let injected = match way {
            Way::Inject(_) => gpuheat_inject::inject(&gpuheat_inject::Request {
                pid,
                library: agent,
                entry: control::ATTACH_ENTRY,
                arg: &arg,
                timeout,
                cancel: Some(&receive::INTERRUPTED),
            })
            .map_err(|e| match e {
                gpuheat_inject::InjectError::Cancelled { .. } => NotIn::Cancelled(e.to_string()),
                e => NotIn::Failed(e.into()),
            }),
            Way::Wake => wake(pid, &arg, timeout),
        };
        drop(done);
        injected
    })?;
    let refused = |why: String| NotIn::Failed(anyhow::anyhow!(why));
    match AttachStatus::from_code(injected.entry_result) {
        Some(AttachStatus::Ok) => {}
        Some(AttachStatus::VersionMismatch) => {
            return Err(refused(format!(
                "pid {pid} already holds a gpuheat agent of another version than this gpuheat ({}); restart the program to load this one",
                control::VERSION
            )))
        }
        Some(AttachStatus::AlreadyAttached) => {
            return Err(refused(format!(
                "pid {pid} is already being captured by another gpuheat"
            )))
        }
        other => {
            return Err(refused(format!(
                "the agent could not start in pid {pid} ({})",
                match other {
                    Some(s) => format!("{s:?}"),
                    None => format!("code {}", injected.entry_result),
                }
            )))
        }
    }
    let hooked = Hooked::new(&injected, way);
    let deadline = Instant::now() + CONNECT_BOUND;
    let stream = endpoint
        .accept(|| {
            if !alive(pid) {
                bail!("pid {pid} exited during the attach");
            }
            if receive::interrupted() {
                bail!("stopped while the agent in pid {pid} was connecting; it goes dormant");
            }
            if Instant::now() > deadline {
                bail!("the agent in pid {pid} did not connect back ({hooked})");
            }
            Ok(())
        })
        .map_err(NotIn::Failed)?;
    Ok((injected, hooked, stream))
}

/// Wakes the dormant layer of `pid` with the attach argument `arg`: leaves the wake-up file
/// for it and waits (at most `timeout`) for its answer, which the caller reads as the attach
/// entry's status. The program's next present takes it, so a program that presents no frame
/// is reported as such.
fn wake(
    pid: i32,
    arg: &str,
    timeout: std::time::Duration,
) -> Result<gpuheat_inject::Injected, NotIn> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let fail = |e: anyhow::Error| NotIn::Failed(e);
    let started = std::time::Instant::now();
    let uid = crate::vulkan::uid();
    let dir = control::vulkan::wake_dir(uid);
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir)
        .with_context(|| format!("cannot make {}", dir.display()))
        .map_err(fail)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(fail(anyhow::anyhow!(
            "{} is not a folder of yours closed to others; remove it and attach again",
            dir.display()
        )));
    }
    let file = control::vulkan::wake_file(uid, pid);
    let status = control::vulkan::wake_status_file(uid, pid);
    let _ = std::fs::remove_file(&status);
    let tmp = dir.join(format!(".{pid}.{}", std::process::id()));
    std::fs::write(&tmp, arg)
        .and_then(|()| std::fs::rename(&tmp, &file))
        .with_context(|| format!("cannot write {}", file.display()))
        .map_err(fail)?;
    let deadline = started + timeout;
    let (code, thread) = loop {
        let answer = std::fs::read_to_string(&status).ok().and_then(|t| {
            let mut words = t.split_whitespace().map(str::parse::<i32>);
            Some((words.next()?.ok()?, words.next()?.ok()?))
        });
        if let Some(answer) = answer {
            let _ = std::fs::remove_file(&status);
            break answer;
        }
        let gone = |why: String| {
            let _ = std::fs::remove_file(&file);
            why
        };
        if !alive(pid) {
            return Err(fail(anyhow::anyhow!(gone(format!(
                "pid {pid} exited during the attach"
            )))));
        }
        if crate::receive::interrupted() {
            return Err(NotIn::Cancelled(gone(
                "interrupted before the layer woke up".into(),
            )));
        }
        if std::time::Instant::now() > deadline {
            return Err(fail(anyhow::anyhow!(gone(format!(
                "pid {pid} presented no Vulkan frame within {} s, so its gpuheat layer never woke up (is it drawing?)",
                timeout.as_secs()
            )))));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    Ok(gpuheat_inject::Injected {
        thread,
        entry_result: code,
        safe_point: "vkQueuePresentKHR (the dormant layer woke up)".into(),
        stopped_for: std::time::Duration::ZERO,
        total: started.elapsed(),
    })
}

/// What the CLI knows was hooked, for messages when no frame comes.
pub(crate) struct Hooked {
    pub(crate) safe_point: String,
    pub(crate) libraries: Vec<String>,
}

impl Hooked {
    fn new(injected: &gpuheat_inject::Injected, way: &Way) -> Hooked {
        let libraries = match way {
            Way::Inject(target) => target
                .graphics_libraries
                .iter()
                .map(|p| {
                    p.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| p.display().to_string())
                })
                .collect(),
            Way::Wake => vec!["libvulkan.so.1 with gpuheat's layer".into()],
        };
        Hooked {
            safe_point: injected.safe_point.clone(),
            libraries,
        }
    }
}

impl std::fmt::Display for Hooked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "got in at {}; the program maps {}",
            self.safe_point,
            if self.libraries.is_empty() {
                "no GL library".to_string()
            } else {
                self.libraries.join(", ")
            }
        )
    }
}

/// The state letter of /proc/PID/stat (`R`, `S`, `T`, `Z` …); `None` when it is gone.
pub(crate) fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

pub(crate) fn alive(pid: i32) -> bool {
    // A zombie is as good as gone.
    process_state(pid).is_some_and(|s| s != 'Z' && s != 'X')
}

pub(crate) fn process_name(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The one process whose comm or executable file name is exactly `name`.
pub(crate) fn find_by_name(name: &str) -> Result<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let comm = process_name(pid);
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if comm.as_deref() == Some(name) || exe.as_deref() == Some(name) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            found.push((pid, cmdline));
        }
    }
    match found.len() {
        0 => bail!("no process named `{name}` (gpuheat attach PID takes a process id)"),
        1 => Ok(found[0].0),
        _ => {
            let list: Vec<String> = found.iter().map(|(p, c)| format!("{p} ({c})")).collect();
            bail!(
                "{} processes are named `{name}`: {}; pick one with gpuheat attach PID",
                found.len(),
                list.join(", ")
            )
        }
    }
}
