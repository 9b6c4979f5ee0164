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
    std::panic::catch_unwind(|| attach(&arg, Start::AtTheSwap))
        .unwrap_or(AttachStatus::Panicked)
        .code()
}

/// [`gpuheat_agent_attach`]'s work, for a caller inside the agent: the Vulkan layer's
/// wake-up, at a present.
pub(crate) fn attach_from(arg: &str) -> AttachStatus {
    std::panic::catch_unwind(|| attach(arg, Start::AtAPresent)).unwrap_or(AttachStatus::Panicked)
}

/// Where the attach entry runs, which decides whether a first capture may start there.
#[derive(Clone, Copy, PartialEq)]
enum Start {
    /// The injector's call at a swap's entry, on the render thread: a first attach starts the
    /// capture the argument names here ([`runtime::connect_and_start`]), and its warm-up runs
    /// from the frame after this swap, while the inline hooks and GOT slots go in.
    AtTheSwap,
    /// The Vulkan layer's wake-up: the capture starts at a present after the connection, as
    /// every capture did before.
    AtAPresent,
}

fn attach(arg: &str, at: Start) -> AttachStatus {
    let Some(arg) = AttachArg::parse(arg) else {
        return AttachStatus::BadArgument;
    };
    if !arg.version_matches() {
        return AttachStatus::VersionMismatch;
    }
    if runtime::connected() {
        return AttachStatus::AlreadyAttached;
    }
    // Only the dispatch table needs this thread (its current context); the other layers go
    // to a thread of ours, so the render thread is released sooner: an attach's hold is a
    // visible hitch in the program.
    let started = std::time::Instant::now();
    // Calls reach the wrappers from here on, context switches only once the inline hooks are
    // in (`finish`).
    crate::recorder::switches_unseen();
    let table = crate::live::install_dispatch();
    crate::writer::prepare_ahead();
    // A first attach: the GOT slots go in after the connection, while a capture warms up.
    let got_later = !crate::live::got_installed();
    let early = match (&arg.command, at) {
        (Some(command), Start::AtTheSwap) if got_later => Some(command),
        _ => None,
    };
    let connected = early.is_some_and(|command| {
        runtime::hooks_installing(true);
        let notes = vec![
            "attached to the running program".to_string(),
            format!(
                "live hooks: {} dispatch entries in {:.1} ms on the render thread; the inline \
                 hooks and GOT slots go in on the agent's thread while the capture warms up \
                 (the HOOK record)",
                table.dispatch_patched,
                started.elapsed().as_secs_f64() * 1e3
            ),
        ];
        let ok = UnixStream::connect(&arg.socket)
            .is_ok_and(|stream| runtime::connect_and_start(stream, origin(notes), command).is_ok());
        if !ok {
            runtime::hooks_installing(false);
        }
        ok
    });
    let held = started.elapsed();
    let socket = arg.socket.clone();
    // A panic on our thread must end quietly there, as everywhere in the agent.
    let rest = move || {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            finish(&socket, table, held, connected, got_later)
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
            finish(
                &arg.socket,
                HookReport::default(),
                held,
                connected,
                got_later,
            );
            AttachStatus::Ok
        }
    }
}

/// What a connection made by an attach adds to the session's INFO record.
fn origin(notes: Vec<String>) -> Origin {
    Origin {
        skip: 0,
        notes,
        loaded: gpuheat_session::AgentLoad::Attach,
    }
}

/// The layers that need no current context, the connection to the CLI unless the attach
/// entry made it (`connected`), then the `HOOK` record. A failure here shows on the CLI's
/// side as an agent that never connected.
///
/// On a first attach (`got_later`) the inline hooks (which bring the program's swaps and
/// context switches to the agent: until they are in, `recorder` asks for each thread's
/// context at every call) go in first and the GOT slots after the connection, while the
/// capture's warm-up frames run (`runtime::hooks_installing`), instead of the capture
/// waiting for them and then for another swap: on mpv that layer takes 20-55 ms on a 2-core
/// machine. A later attach finds the GOTs patched and only patches modules loaded since,
/// before connecting, as its capture's first frame may begin at once.
fn finish(
    socket: &str,
    table: HookReport,
    held: std::time::Duration,
    connected: bool,
    got_later: bool,
) {
    let started = std::time::Instant::now();
    let mut hooks = table;
    hooks.add(crate::live::install_inline());
    crate::recorder::switches_seen();
    if !got_later {
        hooks.add(crate::live::install_got());
    }
    let connected = connected || {
        runtime::hooks_installing(got_later);
        let notes = vec![
            "attached to the running program".to_string(),
            format!(
                "live hooks: {} dispatch entries in {:.1} ms on the render thread; inline: {}{} \
                 on the agent's thread in {:.1} ms{}",
                hooks.dispatch_patched,
                held.as_secs_f64() * 1e3,
                list(&hooks.inline_hooked),
                if got_later {
                    String::new()
                } else {
                    format!(", {} GOT slots", hooks.got_patched)
                },
                started.elapsed().as_secs_f64() * 1e3,
                if got_later {
                    "; the GOT slots go in while the capture warms up (the HOOK record)"
                } else {
                    ""
                }
            ),
        ];
        UnixStream::connect(socket)
            .is_ok_and(|stream| runtime::connect(stream, origin(notes), None).is_ok())
    };
    if got_later {
        // Also without a connection: a later attach expects them in.
        hooks.add(crate::live::install_got());
        runtime::hooks_installing(false);
    }
    if connected {
        hooks.notes.insert(
            0,
            format!(
                "live hooks: {} GOT slots in {} modules, {} dispatch entries, inline: {}; {:.1} \
                 ms on the render thread, {:.1} ms on the agent's thread",
                hooks.got_patched,
                hooks.modules,
                hooks.dispatch_patched,
                list(&hooks.inline_hooked),
                held.as_secs_f64() * 1e3,
                started.elapsed().as_secs_f64() * 1e3
            ),
        );
        outbox::send_record(Record::Hooks(summary(&hooks)));
    }
}

/// Entry points named in a note, or "none".
fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
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
