//! What a Vulkan session holds beyond the calls: the render pass objects the frames begin
//! (their attachments' formats, load and store operations and layouts, as the program
//! created them) and, per captured frame, which render pass and framebuffer each
//! `vkCmdBeginRenderPass` began and what each queue submit ran. Values are Vulkan's own enum values (`VkFormat`,
//! `VkAttachmentLoadOp`, …), as `i32`.

use serde::{Deserialize, Serialize};

/// One attachment of a render pass (`VkAttachmentDescription`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VkAttachment {
    /// `VkFormat`.
    pub format: i32,
    /// `VkSampleCountFlagBits`.
    pub samples: u32,
    /// `VkAttachmentLoadOp` of the colour or depth aspect.
    pub load_op: i32,
    /// `VkAttachmentStoreOp` of the colour or depth aspect.
    pub store_op: i32,
    /// `VkAttachmentLoadOp` of the stencil aspect.
    pub stencil_load_op: i32,
    /// `VkAttachmentStoreOp` of the stencil aspect.
    pub stencil_store_op: i32,
    /// `VkImageLayout` before the render pass.
    pub initial_layout: i32,
    /// `VkImageLayout` after it.
    pub final_layout: i32,
}

impl VkAttachment {
    /// Whether the format has a depth or stencil aspect (`VK_FORMAT_D16_UNORM` …
    /// `VK_FORMAT_D32_SFLOAT_S8_UINT`).
    pub fn is_depth_stencil(&self) -> bool {
        (124..=130).contains(&self.format)
    }
}

/// A render pass object (`VKRP`, JSON): sent once per capture for every render pass a
/// captured frame begins, as the layer saw it created (the layer keeps them from the
/// program's start, dormant too: creating one is rare).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VkRenderPass {
    /// The `VkRenderPass` handle.
    pub handle: u64,
    /// Its attachments, in order.
    pub attachments: Vec<VkAttachment>,
    /// Its subpasses.
    pub subpasses: u32,
}

/// One render pass instance a frame began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VkPassBegin {
    /// The `vkCmdBeginRenderPass(2)` call, its index in the frame's calls.
    pub call: u32,
    /// The render pass it began.
    pub render_pass: u64,
    /// The framebuffer it rendered to.
    pub framebuffer: u64,
}

/// One queue submit of a frame: the command buffers it ran, and how many of them were
/// recorded before the capture (their commands are in no captured frame, and untimed). A
/// recorded `vkCmd*` call names its command buffer first, so each command is attributed to
/// the submit (and the queue, the submit call's first argument) that ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VkSubmit {
    /// The `vkQueueSubmit(2)` call, its index in the frame's calls.
    pub call: u32,
    /// The command buffers it submitted, in order (secondaries they execute not listed).
    pub command_buffers: Vec<u64>,
    /// Of those, the ones recorded before the capture began.
    pub recorded_before: u32,
}

/// What the layer saw of one captured frame beyond its calls (`VKFR`, JSON): its render pass
/// instances and its submits, in call order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VkFrame {
    /// The frame, as in `Frame::index`.
    pub frame: u64,
    /// Its render pass begins.
    pub begins: Vec<VkPassBegin>,
    /// Its submits.
    #[serde(default)]
    pub submits: Vec<VkSubmit>,
    /// Commands recorded in it that `--timing isolated` isolated by barriers before and after
    /// (those outside render passes; a draw inside one can only be timed).
    #[serde(default)]
    pub isolated: u32,
}
