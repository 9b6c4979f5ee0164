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
/// `control::AttachStatus` code. Installs the live hooks,
/// connects to the CLI's socket and waits for its commands on a thread of its own.
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
    let started = std::time::Instant::now();
    let hooks = crate::live::install();
    let hooked_in = started.elapsed();
    let Ok(stream) = UnixStream::connect(&arg.socket) else {
        return AttachStatus::ConnectFailed;
    };
    let notes = vec![
        "attached to the running program".to_string(),
        format!(
            "live hooks: {} GOT slots in {} modules, {} dispatch entries, inline: {}; installed in {:.1} ms on the render thread",
            hooks.got_patched,
            hooks.modules,
            hooks.dispatch_patched,
            if hooks.inline_hooked.is_empty() {
                "none".to_string()
            } else {
                hooks.inline_hooked.join(", ")
            },
            hooked_in.as_secs_f64() * 1e3
        ),
    ];
    match runtime::connect(stream, Origin { skip: 0, notes }, None) {
        Ok(()) => {
            outbox::send_record(Record::Hooks(summary(&hooks)));
            AttachStatus::Ok
        }
        Err(_) => AttachStatus::ConnectFailed,
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
