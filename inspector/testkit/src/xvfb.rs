//! A private X server for tests that need a window system: `Xvfb` on a display number it
//! picks itself (`-displayfd`, so parallel tests never race for one), ended on drop.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest a test waits for Xvfb to say its display number.
const START_BOUND: Duration = Duration::from_secs(10);

/// A running `Xvfb`; SIGTERM on drop, so it removes its socket and lock file.
pub struct Xvfb {
    child: Child,
    /// `:N`, for `DISPLAY`.
    pub display: String,
}

impl Xvfb {
    /// Starts one with a 640×480×24 screen.
    ///
    /// # Panics
    /// When Xvfb is missing or gives no display number within 10 s.
    pub fn start() -> Xvfb {
        Xvfb::with_screen("640x480x24")
    }

    /// Starts one with screen `geometry` (`WIDTHxHEIGHTxDEPTH`).
    ///
    /// # Panics
    /// As [`Xvfb::start`].
    pub fn with_screen(geometry: &str) -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                geometry,
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb missing: run scripts/install-deps.sh");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Made before the wait, so a panic below still ends the server.
        let mut x = Xvfb {
            child,
            display: String::new(),
        };
        match rx.recv_timeout(START_BOUND) {
            Ok(line) if !line.trim().is_empty() => x.display = format!(":{}", line.trim()),
            _ => panic!("Xvfb gave no display number within {START_BOUND:?}"),
        }
        x
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM, so Xvfb removes its /tmp/.X11-unix socket and /tmp/.XN-lock file (SIGKILL
        // leaves both behind); SIGKILL only if it does not exit within 2 s.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
