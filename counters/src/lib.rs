//! Counters: what gpuheat measures and how.
//!
//! - [`gl`]: the one table of real GL entry points ([`GlFns`], loaded once through the
//!   agent's loader, never through the program's hooked symbols), the GL types and the
//!   constants, generated from the Khronos registry.
//! - [`catalogue`]: the fixed, ordered list of counters; a counter's index there is the `u16`
//!   of [`gpuheat_session::CounterValue::counter`].
//! - `state` (internal): the invisibility toolkit heat painting and geometry capture share:
//!   the program's GL state saved and restored around our work, its GL errors kept.
//! - [`facts`]: the default framebuffer and a few pieces of state at a capture's start,
//!   read without the program seeing it.
//! - [`stages`]: which pipeline statistics a work call can move (a draw's program stages,
//!   read once per program), so that the bracket asks for those only.
//! - [`ContextCounters`]: per-context capabilities and the bracket taken around each work call:
//!   serialized timing (drain, time, drain) with samples passed and pipeline statistics read
//!   right after the call, or deferred (a timestamp pair and the queries, read at the frame's
//!   end by [`ContextCounters::resolve`]), and pipelined timestamp pairs read back frames later
//!   by [`ContextCounters::poll`].
//! - [`backlog`]: how far the GPU is behind the program, asked on a fence with a bound
//!   before a capture's first drain (a program that never waits may be minutes ahead).
//! - `own_gpu` (internal): the heat painter's own passes timed on the GPU (timestamps around
//!   each draw's replay and weighting, read at the flush).
//! - `readback` (internal): a flush's read-backs (colour, maps, slots) issued into one
//!   pixel-pack buffer and fetched with one wait where the context allows it.
//! - [`weights`]: heat weighted on the GPU for draws timed deferred (`T/N` from a buffer the
//!   GPU writes the queries' results into).
//! - [`tally`]: each covered pixel of a draw timed deferred appended on the GPU as a record,
//!   read once at the flush: GLES draws (no query buffer objects, so the GPU cannot compute
//!   `T/N`) weighed there on the CPU, and every such draw's coverage for the flow without a
//!   read of its own.
//! - [`writes`]: the storage and atomic counter buffers a replayed draw's shaders
//!   could write, copied aside before heat's replay and back after it.
//! - [`thermal`]: per-pixel heat and overdraw maps of a captured frame.
//! - [`list_run`]: a display list run again as the program's call ran it (from the matrices
//!   it started from, its state put back as the call left it), for heat and geometry.
//! - [`geometry`]: each draw's post-transform positions, by transform feedback replay.
//! - [`immediate`]: a GL 1.x `glBegin`…`glEnd` block recorded as it runs, to be run again.
//! - [`vulkan`]: per-command GPU time in Vulkan command buffers, from timestamp pools read
//!   once the command buffer has run (through `ash`; nothing of GL).
//! - [`waits`]: how often the agent made the program's thread wait for the GPU (a leaf every
//!   module above notes into).
//! - [`pool`]: large read-back buffers the writer thread hands back for the next frame (a
//!   leaf, used by [`thermal`] and [`geometry`]).
//!
//! Each module depends only on those listed before it, but for [`waits`] and [`pool`],
//! leaves.

pub mod backlog;
pub mod catalogue;
mod context;
pub mod facts;
pub mod geometry;
pub mod gl;
pub mod immediate;
pub mod list_run;
mod own_gpu;
pub mod pool;
mod readback;
pub mod stages;
mod state;
pub mod tally;
mod targets;
pub mod thermal;
pub mod vulkan;
pub mod waits;
pub mod weights;
pub mod writes;

pub use catalogue::{CounterDef, CounterKind, COUNTERS};

/// The mask of a timestamp counter `bits` wide (`GL_QUERY_COUNTER_BITS`, Vulkan's
/// `timestampValidBits`): its values, and the differences between them, wrap modulo it.
pub(crate) fn timestamp_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}
pub use context::{
    monotonic_ns, parse_version, pipelined_caveat, replay_changes_query, software_rasterizer,
    Bracket, ContextCounters, DEFAULT_TIMESTAMP_CAP,
};
pub use geometry::{GeometryCapture, ProgramLink};
pub use gl::{GeometryFns, GlFns, ThermalFns};
pub use thermal::{Painter, Weight};

#[cfg(test)]
mod tests {
    #[test]
    fn a_timestamp_mask_keeps_the_counters_bits() {
        assert_eq!(super::timestamp_mask(64), u64::MAX);
        assert_eq!(super::timestamp_mask(36), (1 << 36) - 1);
        assert_eq!(super::timestamp_mask(0), 0);
    }
}
