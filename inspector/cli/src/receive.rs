//! The live receiver: a private Unix socket the agent connects to, and the loop that stores
//! every chunk it sends into the session file as it arrives.

use anyhow::{Context, Result};
use gpuheat_session::{
    CaptureMode, ChunkKind, ChunkReader, EndInfo, EndReason, FunctionTable, Record, SessionError,
    SessionInfo, SessionWriter,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::cell::Cell;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A socket in a fresh directory only this user can enter; removed on drop.
pub struct Endpoint {
    dir: PathBuf,
    pub socket: PathBuf,
    listener: UnixListener,
}

impl Endpoint {
    pub fn new() -> Result<Endpoint> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("gpuheat-{}-{}", std::process::id(), nanos()));
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        let socket = dir.join("agent.sock");
        let listener = UnixListener::bind(&socket)
            .with_context(|| format!("cannot listen on {}", socket.display()))?;
        listener.set_nonblocking(true)?;
        Ok(Endpoint {
            dir,
            socket,
            listener,
        })
    }

    /// Waits for the agent to connect, asking `still_waiting` between tries whether to go on.
    pub fn accept(&self, mut still_waiting: impl FnMut() -> Result<()>) -> Result<UnixStream> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    check_peer(&stream)?;
                    stream.set_nonblocking(false)?;
                    return Ok(stream);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    still_waiting()?;
                    self.wait_readable(Duration::from_millis(20));
                }
                Err(e) => return Err(e).context("accepting the agent's connection"),
            }
        }
    }

    /// Sleeps until a connection is pending or `bound` passes: a fixed sleep between tries
    /// delayed every attach's first frame by up to its length.
    fn wait_readable(&self, bound: Duration) {
        use std::os::fd::AsRawFd;
        let mut fds = libc::pollfd {
            fd: self.listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the listener this value owns, for the call's duration.
        // An error (EINTR from Ctrl-C) just ends the wait early; the caller tries again.
        unsafe { libc::poll(&mut fds, 1, bound.as_millis() as libc::c_int) };
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Only a process of our own user may feed us a session.
fn check_peer(stream: &UnixStream) -> Result<()> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    use std::os::fd::AsRawFd;
    // SAFETY: valid socket fd and out-buffer of the right size.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    // SAFETY: no preconditions.
    let me = unsafe { libc::geteuid() };
    if rc != 0 || cred.uid != me {
        anyhow::bail!("refused a connection from uid {} (expected {me})", cred.uid);
    }
    Ok(())
}

/// Set by SIGINT: stop capturing and keep what was captured.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes Ctrl-C end the capture cleanly instead of killing gpuheat.
pub fn catch_ctrl_c() {
    // SAFETY: the handler only stores to an atomic.
    unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
}

/// How a capture ended.
pub struct Received {
    pub frames: u64,
    pub bytes: u64,
    pub end: Option<EndInfo>,
}

/// The chunks the receiver stores without decoding: the bulk ones ([`ChunkKind::BULK`]) and
/// the function table.
const STORED_AS_IS: [ChunkKind; ChunkKind::BULK.len() + 1] = {
    let mut kinds = [ChunkKind::FUNCTIONS; ChunkKind::BULK.len() + 1];
    let mut i = 0;
    while i < ChunkKind::BULK.len() {
        kinds[i] = ChunkKind::BULK[i];
        i += 1;
    }
    kinds
};

/// Copies chunks from the agent into the session until the agent's END record, or the
/// stream ends, or `keep_waiting` (asked whenever nothing arrived for 200 ms) says to give
/// up, or nothing at all arrived for `idle_limit` (the session then ends with
/// [`EndReason::TimedOut`]). Every chunk is flushed to the file as it arrives; `on_chunk`
/// runs after each is stored, with its kind and, unless it is bulk data stored without
/// decoding ([`STORED_AS_IS`]), its record. When the agent sent no END, one is written; when it
/// did not even send its INFO and function table (no capture started), `fallback` describes
/// the program instead, so the session stays readable.
pub fn pump(
    stream: UnixStream,
    writer: &mut SessionWriter,
    frames_wanted: u32,
    idle_limit: Option<Duration>,
    fallback: &Fallback,
    mut keep_waiting: impl FnMut() -> bool,
    mut on_chunk: impl FnMut(&mut SessionWriter, ChunkKind, Option<&Record>) -> Result<()>,
) -> Result<Received> {
    stream.set_read_timeout(Some(Duration::from_millis(200)))?;
    let last_chunk = Cell::new(Instant::now());
    let timed_out = Cell::new(false);
    let mut wait = || {
        if idle_limit.is_some_and(|limit| last_chunk.get().elapsed() >= limit) {
            timed_out.set(true);
            return false;
        }
        keep_waiting()
    };
    // Bulk chunks are stored as they come, checked but not decoded: decoding every call of
    // every frame would take as much of the program's machine as the agent's encoding. So is
    // the function table (3,500 entry points of JSON, which nothing here reads): it comes
    // right before the first frame, and decoding it delayed that frame.
    let mut reader = ChunkReader::new(RetryRead {
        inner: stream,
        keep_waiting: &mut wait,
    })
    .without_decoding(&STORED_AS_IS);
    let progress = Progress::new(frames_wanted);
    let mut end = None;
    let (mut saw_info, mut saw_functions) = (false, false);
    loop {
        match reader.read_chunk() {
            Ok(Some(chunk)) => {
                last_chunk.set(Instant::now());
                let record = chunk.record();
                saw_info |= matches!(record, Some(Record::Info(_)));
                saw_functions |= chunk.kind() == ChunkKind::FUNCTIONS;
                if let Some(Record::End(e)) = record {
                    end = Some(e.clone());
                }
                writer.append_chunk(&chunk).context("writing the session")?;
                if chunk.kind().is_frame() {
                    progress.show(writer.frames_written(), writer.bytes_written());
                }
                on_chunk(writer, chunk.kind(), record)?;
                if end.is_some() {
                    break;
                }
            }
            // The program went away mid-stream, or we stopped waiting: keep what arrived.
            Ok(None)
            | Err(SessionError::Io { .. })
            | Err(SessionError::Stream { .. })
            | Err(SessionError::Truncated { .. }) => break,
            Err(e) => return Err(e).context("reading from the agent"),
        }
    }
    progress.done();
    if end.is_none() {
        let reason = if timed_out.get() {
            EndReason::TimedOut
        } else if INTERRUPTED.load(Ordering::SeqCst) {
            EndReason::Stopped
        } else {
            EndReason::TargetExited
        };
        if !saw_info {
            writer.append(&Record::Info(fallback.info()))?;
        }
        if !saw_functions {
            writer.append(&Record::Functions(FunctionTable {
                functions: Vec::new(),
            }))?;
        }
        let info = EndInfo {
            reason,
            frames_captured: writer.frames_written(),
            dropped_calls: 0,
            detail: None,
            // The agent did not say; the CLI cannot know.
            renderer_query: None,
        };
        writer.append(&Record::End(info.clone()))?;
        end = Some(info);
    }
    Ok(Received {
        frames: writer.frames_written(),
        bytes: writer.bytes_written(),
        end,
    })
}

/// What the CLI knows about the program, for a session whose agent never started a capture.
pub struct Fallback {
    /// The program.
    pub pid: i32,
    /// The capture that was asked for.
    pub mode: CaptureMode,
    /// Frames asked for.
    pub frames: u32,
    /// Frames to skip.
    pub skip: u32,
    /// Why the CLI wrote the INFO record itself.
    pub note: String,
}

impl Fallback {
    /// An INFO record from /proc and the request.
    fn info(&self) -> SessionInfo {
        let pid = self.pid;
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let args = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_else(|_| vec![exe.clone()]);
        SessionInfo {
            agent_version: gpuheat_session::control::VERSION.to_string(),
            pid: pid as u32,
            exe,
            args,
            mode: self.mode,
            skip: self.skip,
            frames_requested: self.frames,
            clock_origin_ns: 0,
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            notes: vec![self.note.clone()],
            warmup_frames: None,
        }
    }
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// A socket reader that keeps waiting through read timeouts for as long as its owner wants,
/// so a stalled program never hangs gpuheat.
struct RetryRead<'a, F: FnMut() -> bool> {
    inner: UnixStream,
    keep_waiting: &'a mut F,
}

impl<F: FnMut() -> bool> std::io::Read for RetryRead<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    if !(self.keep_waiting)() {
                        return Ok(0);
                    }
                }
                other => return other,
            }
        }
    }
}

/// The capture's progress bar on a terminal: `[###---] 3/10 frames, 1.2 MB, 0.4 s`, redrawn
/// in place at most ten times a second however fast frames come (also when a narrow terminal
/// wraps it), its clock running between frames; nothing at all when stderr is not a terminal.
struct Progress {
    bar: ProgressBar,
}

/// The bar's look; the template is a constant, so it parses (a test checks).
fn progress_style() -> Result<ProgressStyle, indicatif::style::TemplateError> {
    Ok(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} frames, {msg}, {secs}")?
            .progress_chars("#-")
            .with_key("secs", |state: &ProgressState, w: &mut dyn fmt::Write| {
                let _ = write!(w, "{:.1} s", state.elapsed().as_secs_f64());
            }),
    )
}

impl Progress {
    fn new(wanted: u32) -> Progress {
        let bar = ProgressBar::with_draw_target(
            Some(u64::from(wanted)),
            ProgressDrawTarget::stderr_with_hz(10),
        );
        if let Ok(style) = progress_style() {
            bar.set_style(style);
        }
        bar.set_message(megabytes(0));
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(100));
        }
        Progress { bar }
    }

    fn show(&self, frames: u64, bytes: u64) {
        self.bar.set_message(megabytes(bytes));
        self.bar.set_position(frames);
    }

    /// Leaves the last state on its line.
    fn done(&self) {
        self.bar.finish();
    }
}

/// `1.2 MB`, as the progress bar shows the session's size.
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Human-readable size.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// Checks up front that the session file can be written, before starting anything.
pub fn create_session(path: &Path) -> Result<SessionWriter> {
    SessionWriter::create(path).map_err(|e| match e {
        SessionError::Io { cause, .. } => {
            anyhow::anyhow!("cannot write session file {}: {cause}", path.display())
        }
        other => other.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_bar_looks_as_documented() {
        assert!(progress_style().is_ok());
        assert_eq!(megabytes(1_234_567), "1.2 MB");
    }

    #[test]
    fn every_bulk_kind_is_stored_as_is() {
        for k in ChunkKind::BULK {
            assert!(STORED_AS_IS.contains(&k), "{k}");
        }
    }
}
