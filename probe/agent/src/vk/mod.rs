//! The agent as a Vulkan layer (`VK_LAYER_GPUHEAT_capture`).
//!
//! Vulkan inserts layers when the instance and device are created, so the agent cannot reach
//! a Vulkan program by hooking symbols after the fact: `gpuheat run` enables this layer with
//! the loader's environment, and a program started with the layer dormant (`gpuheat
//! vulkan-env`) is woken by `gpuheat attach` like any other: the layer is this same library,
//! so the runtime, the writer and the control contract are the GL agent's.
//!
//! Layers (the wrappers and tables generated from vk.xml are `crate::generated::vk`):
//! `layer` (the loader's
//! interface, the dispatch tables, recording) < `track` (timestamps in the command buffers
//! recorded during a capture, read after their submits) < `wake` (a dormant layer's
//! wake-up by `gpuheat attach`).

pub mod layer;
pub mod track;
mod wake;

/// A Vulkan instance was made: the runtime also polls the layer's timestamps at each
/// captured frame's end, and a program launched with the agent connects now (GL programs do
/// at their first call).
pub(crate) fn started() {
    crate::runtime::also_poll(track::poll);
    crate::hook::start_launch();
}

/// After a present outside captured frames.
#[inline]
pub(crate) fn dormant_present() {
    wake::at_present();
}
