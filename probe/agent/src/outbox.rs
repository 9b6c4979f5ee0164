//! Where every layer sends what it has for the CLI: the writer of the current connection, if
//! any. Lower layers (the per-context counters, the per-thread recorder) send through here
//! without knowing about connections; the runtime opens and closes it.

use crate::writer::{Msg, Writer};
use gpuheat_session::Record;
use std::sync::{Arc, Mutex, MutexGuard};

static OUTBOX: Mutex<Option<Arc<Writer>>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<Arc<Writer>>> {
    OUTBOX.lock().unwrap_or_else(|e| e.into_inner())
}

fn current() -> Option<Arc<Writer>> {
    lock().clone()
}

/// Makes `writer` the destination of everything sent from now on.
pub(crate) fn open(writer: Arc<Writer>) {
    *lock() = Some(writer);
}

/// Stops sending to `writer` (if it is still the current one).
pub(crate) fn close(writer: &Arc<Writer>) {
    let mut slot = lock();
    if slot.as_ref().is_some_and(|w| Arc::ptr_eq(w, writer)) {
        *slot = None;
    }
}

/// Sends `msg` to the CLI; dropped when no CLI is connected.
pub(crate) fn send(msg: Msg) {
    if let Some(w) = current() {
        w.send(msg);
    }
}

/// Sends a record to the CLI.
pub(crate) fn send_record(record: Record) {
    send(Msg::Record(record));
}

/// Whether a CLI is connected and reachable.
pub(crate) fn connected() -> bool {
    current().is_some_and(|w| !w.broken())
}
