//! The dormant layer's wake-up: a program started with the layer in but no CLI
//! (`gpuheat vulkan-env`) costs a clock read per present, and every
//! `control::vulkan::WAKE_CHECK_MS` one look for the file `gpuheat attach` leaves for it.
//! Found, the file's attach argument is acted on here, on the presenting thread, as the
//! injector would have the attach entry act on it at a GL swap: Vulkan needs no ptrace, since
//! the layer is in already.

use crate::clock::monotonic_ns;
use crate::runtime;
use gpuheat_session::control::vulkan::{wake_dir, wake_file, wake_status_file, WAKE_CHECK_MS};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static NEXT_LOOK: AtomicU64 = AtomicU64::new(0);

/// At a present outside captured frames: looks for a wake-up when it is time.
#[inline]
pub fn at_present() {
    let now = monotonic_ns();
    if now < NEXT_LOOK.load(Relaxed) {
        return;
    }
    NEXT_LOOK.store(now + WAKE_CHECK_MS * 1_000_000, Relaxed);
    let _ = std::panic::catch_unwind(look);
}

#[cold]
fn look() {
    if runtime::connected() {
        return;
    }
    // SAFETY: neither call has preconditions.
    let (uid, pid) = unsafe { (libc::geteuid(), libc::getpid()) };
    let file = wake_file(uid, pid);
    let Ok(arg) = std::fs::read_to_string(&file) else {
        return;
    };
    let _ = std::fs::remove_file(&file);
    // Anybody's file in a folder others can write is nobody's wake-up.
    let trusted = std::fs::symlink_metadata(wake_dir(uid))
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
    if !trusted {
        return;
    }
    let status = crate::attach::attach_from(arg.trim());
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let _ = std::fs::write(
        wake_status_file(uid, pid),
        format!("{} {tid}", status.code()),
    );
}
