//! `gpuheat view --live PID` (and `gpuheat attach PID --live`): gets into a running program as
//! `attach` does, asks its agent to watch with a ring of 0 frames (every frame streamed in
//! timeline mode, the same records as a capture's), and hands the stream to the viewer's live
//! panel; its Capture buttons send `capture N full` on the same control socket. Closing the
//! viewer detaches; the program keeps running.

use crate::getin::{get_in, process_name};
use crate::receive::{self, Endpoint};
use crate::{agent, shown};
use anyhow::{Context, Result};
use gpuheat_session::control::{Command, Timing, Watch};
use gpuheat_session::{ChunkReader, Record};
use gpuheat_viz::{LiveLink, LiveShot, ViewOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::sync_channel;
use std::sync::Mutex;
use std::time::Duration;

/// Records the reader may be ahead of the viewer; beyond it the reader waits, the socket
/// fills and the agent's writer counts what it drops (`END`'s dropped calls).
const BACKLOG: usize = 1 << 16;

/// What a live view is asked for.
pub struct LiveRequest {
    pub pid: i32,
    /// Where captures and Save write [default: NAME-PID-live.gpuheat].
    pub output: Option<PathBuf>,
    /// Bounds the wait for a swap to get in at, and the agent's connection.
    pub timeout: Duration,
    /// Render offscreen to this PNG after watching as `LiveShot` says, instead of a window.
    pub screenshot: Option<(PathBuf, LiveShot)>,
    pub opts: ViewOptions,
}

pub fn live(req: LiveRequest) -> Result<ExitCode> {
    let pid = req.pid;
    let agent = agent::agent_library()?;
    let way = crate::getin::check(pid, &agent)?;
    let name = process_name(pid).unwrap_or_else(|| format!("pid{pid}"));
    let save_to = req
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{name}-{pid}-live.gpuheat")));
    // Fails now, not at the first capture, when the file cannot be written.
    drop(receive::create_session(&save_to)?);
    let _ = std::fs::remove_file(&save_to);
    let endpoint = Endpoint::new()?;
    receive::catch_ctrl_c();
    let watch = Command::Watch(Watch {
        ring: 0,
        frames: 3,
        max_triggers: 1,
        heat: false,
        timing: Timing::Auto,
        rules: Vec::new(),
    });
    let (_injected, _hooked, stream) =
        match get_in(pid, &way, &agent, &endpoint, req.timeout, &watch) {
            Ok(i) => i,
            Err(e) => return e.into_exit(),
        };
    // From here Ctrl-C ends gpuheat: its socket closes and the agent detaches on its own.
    // SAFETY: restoring the default action of a signal.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    stream.set_write_timeout(Some(Duration::from_secs(1)))?;
    let control = Mutex::new(stream.try_clone()?);
    let mut closer = stream.try_clone()?;
    let send = move |c: &Command| {
        control
            .lock()
            .map(|mut s| s.write_all(c.line().as_bytes()).is_ok())
            .unwrap_or(false)
    };
    if !send(&watch) {
        anyhow::bail!("the agent in pid {pid} closed its connection");
    }
    let (tx, rx) = sync_channel::<Record>(BACKLOG);
    let reader = std::thread::Builder::new()
        .name("gpuheat-live-reader".into())
        .spawn(move || {
            let mut r = ChunkReader::new(stream);
            while let Ok(Some(chunk)) = r.read_chunk() {
                let Some(record) = chunk.into_record() else {
                    continue;
                };
                if tx.send(record).is_err() {
                    break;
                }
            }
        })?;
    let link = LiveLink {
        records: rx,
        send: Box::new(send),
        save_to: save_to.clone(),
        title: format!("{name} (pid {pid})"),
    };
    let viewed = match &req.screenshot {
        Some((png, plan)) => gpuheat_viz::live_screenshot(link, req.opts, *plan, png)
            .map(|line| eprintln!("gpuheat: {}: {line}", shown(png))),
        None => gpuheat_viz::open_live_window(link, req.opts),
    };
    // Detach, then close the socket for every handle of it: the reader's read ends there
    // (the agent, told to detach, drains and closes its side too).
    let _ = closer.write_all(Command::Detach.line().as_bytes());
    let _ = closer.shutdown(std::net::Shutdown::Both);
    let _ = reader.join();
    drop(endpoint);
    viewed.with_context(|| format!("live view of pid {pid}"))?;
    eprintln!(
        "gpuheat: live view of {name} (pid {pid}) closed; detached, {name} keeps running{}",
        if save_to.exists() {
            format!("; captures in {}", shown(&save_to))
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}
