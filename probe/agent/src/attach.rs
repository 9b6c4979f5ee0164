//! The entry point `gpuheat attach` calls inside the running program, through the injector,
//! on the render thread stopped at the entry of a swap (so its context is current and it holds
//! no loader or allocator lock).

use crate::generated::{CLASSES, FUNCTION_COUNT, NAMES};
use crate::live::HookReport;
use crate::runtime::{self, Origin};
use crate::{outbox, real};
use gpuheat_session::control::{AttachArg, AttachStatus};
use gpuheat_session::{CallClass, HookSummary, Record};
use std::ffi::{c_char, CStr};
use std::os::unix::net::UnixStream;

/// Called by the injector (`control::ATTACH_ENTRY`) with a `control::AttachArg`; returns an
/// `control::AttachStatus` code. Patches the current context's dispatch table here, then
/// installs the other live hooks, connects to the CLI's socket and waits for its commands on
/// threads of its own.
///
/// # Safety
/// `arg` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn gpuheat_agent_attach(arg: *const c_char) -> i32 {
    if arg.is_null() {
        return AttachStatus::BadArgument.code();
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let arg = unsafe { CStr::from_ptr(arg) }
        .to_string_lossy()
        .into_owned();
    std::panic::catch_unwind(|| attach(&arg))
        .unwrap_or(AttachStatus::Panicked)
        .code()
}

/// [`gpuheat_agent_attach`]'s work, for a caller inside the agent: the Vulkan layer's
/// wake-up, at a present.
pub(crate) fn attach_from(arg: &str) -> AttachStatus {
    std::panic::catch_unwind(|| attach(arg)).unwrap_or(AttachStatus::Panicked)
}

fn attach(arg: &str) -> AttachStatus {
    let Some(arg) = AttachArg::parse(arg) else {
        return AttachStatus::BadArgument;
    };
    if !arg.version_matches() {
        return AttachStatus::VersionMismatch;
    }
    if runtime::connected() {
        return AttachStatus::AlreadyAttached;
    }
    // Only the dispatch table needs this thread (its current context); the other layers,
    // the connection and the session's first records (the function table is compressed
    // hard) go to a thread of ours, so the render thread is released sooner: an attach's
    // hold is a visible hitch in the program.
    let started = std::time::Instant::now();
    let table = crate::live::install_dispatch();
    let held = started.elapsed();
    crate::writer::prepare_ahead();
    let socket = arg.socket.clone();
    // A panic on our thread must end quietly there, as everywhere in the agent.
    let rest = move || {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            finish(&socket, table, held)
        }));
    };
    match std::thread::Builder::new()
        .name("gpuheat-attach".into())
        .spawn(rest)
    {
        Ok(_) => AttachStatus::Ok,
        // No thread to be had: everything here, as the CLI still waits for the connection.
        // (The dispatch table's report went with the closure; its patch stays.)
        Err(_) => {
            finish(&arg.socket, HookReport::default(), held);
            AttachStatus::Ok
        }
    }
}

/// The layers that need no current context, then the connection to the CLI and the `HOOK`
/// record. A failure here shows on the CLI's side as an agent that never connected.
fn finish(socket: &str, table: HookReport, held: std::time::Duration) {
    let started = std::time::Instant::now();
    let mut hooks = crate::live::install_off_render_thread();
    let off_thread = started.elapsed();
    hooks.dispatch_patched += table.dispatch_patched;
    hooks.notes.splice(0..0, table.notes);
    let Ok(stream) = UnixStream::connect(socket) else {
        return;
    };
    let notes = vec![
        "attached to the running program".to_string(),
        format!(
            "live hooks: {} GOT slots in {} modules, {} dispatch entries, inline: {}; {:.1} ms \
             on the render thread (the dispatch table), {:.1} ms on the agent's thread",
            hooks.got_patched,
            hooks.modules,
            hooks.dispatch_patched,
            if hooks.inline_hooked.is_empty() {
                "none".to_string()
            } else {
                hooks.inline_hooked.join(", ")
            },
            held.as_secs_f64() * 1e3,
            off_thread.as_secs_f64() * 1e3
        ),
    ];
    if runtime::connect(
        stream,
        Origin {
            skip: 0,
            notes,
            loaded: gpuheat_session::AgentLoad::Attach,
        },
        None,
    )
    .is_ok()
    {
        outbox::send_record(Record::Hooks(summary(&hooks)));
    }
}

/// What the live hooks did, for the CLI to name when no frame comes.
fn summary(hooks: &HookReport) -> HookSummary {
    HookSummary {
        got_slots: hooks.got_patched as u64,
        modules: hooks.modules as u64,
        dispatch_entries: hooks.dispatch_patched as u64,
        inline: hooks.inline_hooked.clone(),
        swap_entry_points: (0..FUNCTION_COUNT)
            .filter(|&i| CLASSES[i] == CallClass::Swap && real::raw(i) != 0)
            .map(|i| NAMES[i].trim_end_matches('\0').to_string())
            .collect(),
        notes: hooks.notes.clone(),
    }
}
