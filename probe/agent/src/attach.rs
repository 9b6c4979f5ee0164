//! The entry point `gpuheat attach` calls inside the running program, through the injector,
//! on the render thread stopped at the entry of a swap (so its context is current and it holds
//! no loader or allocator lock).

use crate::runtime::{self, Origin};
use std::ffi::{c_char, CStr};
use std::os::unix::net::UnixStream;

/// Results of [`gpuheat_agent_attach`], shared with the CLI.
pub mod status {
    pub const OK: i32 = 0;
    pub const BAD_ARGUMENT: i32 = 1;
    pub const VERSION_MISMATCH: i32 = 2;
    pub const ALREADY_ATTACHED: i32 = 3;
    pub const CONNECT_FAILED: i32 = 4;
    pub const PANICKED: i32 = 5;
}

/// Called by the injector with `"<socket path>\n<CLI version>"`: installs the live hooks,
/// connects to the CLI's socket and waits for its commands on a thread of its own.
///
/// # Safety
/// `arg` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn gpuheat_agent_attach(arg: *const c_char) -> i32 {
    if arg.is_null() {
        return status::BAD_ARGUMENT;
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let arg = unsafe { CStr::from_ptr(arg) }
        .to_string_lossy()
        .into_owned();
    std::panic::catch_unwind(|| attach(&arg)).unwrap_or(status::PANICKED)
}

fn attach(arg: &str) -> i32 {
    let Some((socket, version)) = arg.split_once('\n') else {
        return status::BAD_ARGUMENT;
    };
    if version != env!("CARGO_PKG_VERSION") {
        return status::VERSION_MISMATCH;
    }
    if runtime::connected() {
        return status::ALREADY_ATTACHED;
    }
    let hooks = crate::live::install();
    let Ok(stream) = UnixStream::connect(socket) else {
        return status::CONNECT_FAILED;
    };
    let notes = vec![
        "attached to the running program".to_string(),
        format!(
            "live hooks: {} GOT slots in {} modules, {} dispatch entries, inline: {}",
            hooks.got_patched,
            hooks.modules,
            hooks.dispatch_patched,
            if hooks.inline_hooked.is_empty() {
                "none".to_string()
            } else {
                hooks.inline_hooked.join(", ")
            }
        ),
    ];
    match runtime::connect(stream, Origin { skip: 0, notes }, None) {
        Ok(()) => status::OK,
        Err(_) => status::CONNECT_FAILED,
    }
}
