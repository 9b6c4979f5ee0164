//! The gpuheat agent, loaded into the program being profiled (LD_PRELOAD in launch mode).
//!
//! Every GL/GLES/EGL/GLX entry point is exported by a wrapper generated from the Khronos
//! registry (see `build.rs`). Outside captured frames a wrapper checks one flag and forwards
//! the call. Inside, it records the call into a per-thread buffer and, for calls that make the
//! GPU work, brackets them with the counters of `gpuheat-counters`. A writer thread turns the
//! buffers into session chunks and streams them to the `gpuheat` CLI over a Unix socket.
//!
//! Nothing here may take the program down: every entry from the program into agent logic is
//! behind `catch_unwind`, waits are bounded, and buffers are capped.

// Layers, each depending only on those above it in this list:
// leaves (generated tables, enums, table, real, capture, clock, callsite, config, calls), writer, outbox,
// contexts, programs, uploads, recorder, vgpaths, vg, runtime, then the interposer (hook, dl), live
// hooks, attach, and the Vulkan layer (vk: its dormant wake-up acts as the attach entry).
mod attach;
mod calls;
mod callsite;
mod capture;
mod clock;
mod config;
mod contexts;
mod dl;
pub mod enums;
pub mod hook;
pub mod live;
mod outbox;
mod programs;
mod real;
mod recorder;
mod runtime;
mod table;
mod uploads;
mod vg;
mod vgpaths;
pub mod vk;
mod writer;

/// Generated from the Khronos registry by build.rs.
#[allow(clippy::all)]
pub mod generated {
    use gpuheat_counters::stages::CallKind;
    use gpuheat_session::{CallClass, ValueKind};
    /// (name, C type, kind, len, group) of one parameter.
    pub type ParamDesc = (
        &'static str,
        &'static str,
        ValueKind,
        Option<&'static str>,
        Option<&'static str>,
    );
    include!(concat!(env!("OUT_DIR"), "/generated.rs"));

    /// The Vulkan layer's wrappers and tables, generated from the system's vk.xml
    /// (`crate::vk`'s layer hands them to the loader).
    #[allow(missing_docs)]
    pub mod vk {
        use super::ParamDesc;
        use gpuheat_session::{CallClass, ValueKind};
        include!(concat!(env!("OUT_DIR"), "/vk_generated.rs"));
    }
}
