//! `vk_quads`: a small Vulkan program (on `ash`) drawing Q quads per frame into an X11
//! window's swapchain, each with the same fragment shader whose cost is a loop of L
//! iterations, so that per-draw GPU time is proportional to the quad's pixels: the quarter
//! quad costs about a quarter of the whole one.
//!
//! Flags: `--size WxH` (default 256x256, each side 2..=16384) window and swapchain size,
//! `--frames N` (default 0 = run until SIGTERM/SIGINT, which end the run cleanly after the
//! frame in progress), `--quads Q` (default 2, min 1), `--loop L` (default 200) fragment
//! shader loop iterations, `--checksum` (after the last frame print `checksum <16 hex
//! digits>`), `--report-frame-ms` (at exit print `frame_ms_frames=<start-to-start ms of
//! frames 0..N-2>`), `--bad RULE` (repeatable: commit one Vulkan performance mistake on
//! purpose, see "Misbehaviours" below), `--help`.
//!
//! Needs an X display (`DISPLAY`, e.g. Xvfb) and a Vulkan driver with VK_KHR_xlib_surface
//! (lavapipe has no VK_EXT_headless_surface). The Vulkan loader (`libvulkan.so.1`) is
//! dlopened; `libX11` is linked.
//!
//! Set-up (before frame 0's first call, not counted): X window W×H (mapped); instance
//! (API 1.1, VK_KHR_surface + VK_KHR_xlib_surface); the first physical device with a queue
//! family that has graphics and can present to the window; device with VK_KHR_swapchain and
//! one queue; swapchain W×H (the window's size; any other surface extent is an error),
//! B8G8R8A8_UNORM (else the first format offered), usage COLOR_ATTACHMENT | TRANSFER_SRC,
//! present mode IMMEDIATE, else MAILBOX, else FIFO, minImageCount + 1 images; one image view
//! and framebuffer per image; one render pass (one colour attachment: loadOp CLEAR to
//! (0, 0, 0, 1), storeOp STORE, UNDEFINED → PRESENT_SRC_KHR); one shader module (WGSL
//! compiled to SPIR-V by naga at start-up, entry points `vs_main` and `fs_main`); one
//! pipeline layout with one push-constant range (VERTEX | FRAGMENT, 48 bytes:
//! `rect: vec4<f32>` = x0, y0, x1, y1 in NDC, `color: vec4<f32>`, `loops: u32`, 12 bytes
//! padding); one graphics pipeline (no vertex buffers: the vertex shader makes the quad's
//! 6 vertices = 2 triangles from `vertex_index`; triangle list, no culling, dynamic
//! viewport and scissor, additive blending ONE + ONE so that lavapipe's binner cannot drop
//! quad 0's work in the tiles quad 1 covers, as it would for opaque draws); one command pool
//! (RESET_COMMAND_BUFFER), one primary command buffer, one fence (created signalled), two
//! semaphores (image acquired, rendering finished). One frame in flight.
//!
//! Quads: quad k covers the whole target for even k and the top-left (W/2)×(H/2) rectangle
//! (integer division; exactly a quarter of the area when W and H are even) for odd k. Edges
//! lie on pixel edges. All quads use the same pipeline and loop count L; quad k's colour is
//! half of `layer_colour(k)` (see the crate), alpha 1.
//!
//! A *frame* is every Vulkan call from just after the previous `vkQueuePresentKHR` up to and
//! including this frame's `vkQueuePresentKHR` (frame 0 also holds the set-up). Per-frame call
//! sequence (fixed, the same for every frame):
//!
//! ```text
//!  1 vkWaitForFences(fence, wait all, UINT64_MAX)
//!  2 vkResetFences(fence)
//!  3 vkAcquireNextImageKHR(swapchain, UINT64_MAX, acquired, VK_NULL_HANDLE) -> i
//!  4 vkResetCommandBuffer(cb, 0)
//!  5 vkBeginCommandBuffer(cb, ONE_TIME_SUBMIT)
//!  6 vkCmdBeginRenderPass(render pass, framebuffer i, 0,0,W,H, clear (0,0,0,1), INLINE)
//!  7 vkCmdBindPipeline(GRAPHICS, pipeline)
//!  8 vkCmdSetViewport(0, 1, {0, 0, W, H, 0, 1})
//!  9 vkCmdSetScissor(0, 1, {0, 0, W, H})
//!    Q x { vkCmdPushConstants(layout, VERTEX|FRAGMENT, 0, 48, {rect_k, color_k, L})
//!          vkCmdDraw(6, 1, 0, 0) }
//! 10 vkCmdEndRenderPass
//! 11 vkEndCommandBuffer
//! 12 vkQueueSubmit(1 submit: wait acquired at COLOR_ATTACHMENT_OUTPUT, cb, signal rendered; fence)
//! 13 vkQueuePresentKHR(wait rendered, swapchain, i)
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls = 13 + 2Q; default **17**
//! - draws = Q; default 2; submits 1; render passes 1; vertices 6 per draw (2 triangles)
//! - fragments: W·H for even quads, (W/2)(H/2) for odd ones; default 65 536 / 16 384
//! - cost per fragment ∝ L, the same for every quad, so per-draw GPU time of quad 1 is
//!   about a quarter of quad 0's (each whole quad ≈ 4 × each quarter quad).
//!
//! `--checksum`: after the last frame's present (outside every frame): vkDeviceWaitIdle, a
//! host-visible buffer of W·H·4 bytes, one one-off command buffer (pipeline barrier
//! PRESENT_SRC_KHR → TRANSFER_SRC_OPTIMAL, vkCmdCopyImageToBuffer of the last presented
//! image, barrier back to PRESENT_SRC_KHR), vkQueueSubmit, vkQueueWaitIdle, then the FNV-1a
//! 64 hash of the image's bytes (rows tightly packed, in the swapchain format's byte order)
//! printed as `checksum <16 hex digits>`. Every frame draws the same picture, so the
//! checksum is the same for every run with the same flags on the same driver.
//!
//! Errors (no display, no loader, no device, an out-of-date swapchain) print one line
//! `vk_quads: ...` on stderr and exit 1; a bad command line exits 2.
//!
//! Misbehaviours: `--bad RULE` (repeatable; the values combine; an unknown one is an error,
//! exit 2) makes every frame commit one Vulkan performance mistake on purpose. None changes
//! the picture: the `--checksum` is the one without `--bad` (same other flags). Without
//! `--bad` nothing above changes. Per frame, with Q quads:
//!
//! - `submits`: one command buffer per quad (Q allocated at set-up instead of 1), each with
//!   its own render pass instance and its own vkQueueSubmit. Quad 0's uses the render pass
//!   above (CLEAR); quad k ≥ 1's a second render pass (created at set-up, compatible: same
//!   attachments) whose colour attachment is loadOp LOAD, storeOp STORE, PRESENT_SRC_KHR →
//!   PRESENT_SRC_KHR. Every render pass then has two dependencies (from and to
//!   SUBPASS_EXTERNAL, colour writes before colour reads and writes at
//!   COLOR_ATTACHMENT_OUTPUT), so that each instance follows the earlier submits' writes
//!   and layout transitions. Each command buffer sets its own pipeline, viewport and
//!   scissor. Only the first submit waits for the acquire semaphore; only the last signals
//!   the rendered semaphore and the fence. Quad 0's vkCmdBeginRenderPass has 1 clear value,
//!   the others' none. Calls 4 + 11Q (default 26; 70 with `--quads 6`), submits Q, render
//!   passes Q, draws Q:
//!
//! ```text
//!  1 vkWaitForFences  2 vkResetFences  3 vkAcquireNextImageKHR -> i
//!    Q x { vkResetCommandBuffer(cb_k)  vkBeginCommandBuffer(cb_k, ONE_TIME_SUBMIT)
//!          vkCmdBeginRenderPass(k = 0: CLEAR render pass, else the LOAD one; framebuffer i)
//!          vkCmdBindPipeline  vkCmdSetViewport  vkCmdSetScissor
//!          vkCmdPushConstants(quad k)  vkCmdDraw(6, 1, 0, 0)
//!          vkCmdEndRenderPass  vkEndCommandBuffer
//!          vkQueueSubmit(1 submit: cb_k; k = 0 waits acquired; k = Q-1 signals rendered
//!                        and the fence, the others signal nothing, fence VK_NULL_HANDLE) }
//!  4 vkQueuePresentKHR(wait rendered, swapchain, i)
//! ```
//!
//! - `create`: the graphics pipeline is re-created every frame: vkDestroyPipeline(the
//!   previous one; in frame 0 the set-up one, never used) right after vkWaitForFences, and
//!   vkCreateGraphicsPipelines (the set-up pipeline's create info, no cache) right after
//!   vkResetCommandBuffer, before vkBeginCommandBuffer; this frame's vkCmdBindPipeline binds
//!   the new one. +2 calls: 15 + 2Q (default 19).
//! - `redundant`: vkCmdBindPipeline(GRAPHICS, the same pipeline) again between each quad's
//!   vkCmdPushConstants and vkCmdDraw. +Q calls: 13 + 3Q (default 19), Q of the Q + 1
//!   binds redundant.
//! - `barrier`: vkCmdPipelineBarrier(ALL_COMMANDS → ALL_COMMANDS, dependencyFlags 0, one
//!   VkMemoryBarrier MEMORY_WRITE → MEMORY_READ | MEMORY_WRITE, no buffer or image
//!   barriers) right after vkBeginCommandBuffer, before vkCmdBeginRenderPass. +1 call: 14 +
//!   2Q (default 18).
//! - `load-store`: the render pass's colour attachment is loadOp LOAD instead of CLEAR, and
//!   vkCmdClearAttachments(colour attachment 0, (0, 0, 0, 1), one rect 0,0,W,H, layers
//!   0..1) right after vkCmdSetScissor, before the first vkCmdPushConstants, clears it
//!   instead. LOAD needs a defined initial layout (VUID-VkAttachmentDescription-format-06699
//!   forbids UNDEFINED), so it is PRESENT_SRC_KHR, the layout every frame leaves the image
//!   in; a swapchain image's first frame, whose layout is still UNDEFINED, uses a third
//!   render pass, colour loadOp DONT_CARE from UNDEFINED, with the same calls (lavapipe
//!   acquires image 0 every frame: only frame 0 does). The render pass also gets a depth
//!   attachment (the first of D16_UNORM, X8_D24_UNORM_PACK32, D32_SFLOAT usable as one;
//!   loadOp CLEAR to 1.0, storeOp STORE, stencil DONT_CARE, UNDEFINED →
//!   DEPTH_STENCIL_ATTACHMENT_OPTIMAL): one W×H depth image shared by every framebuffer (2
//!   views each), which the pipeline does not use (depth test and writes off) and nothing
//!   reads: stored for nothing. The render pass dependency adds the depth clear and store
//!   (LATE_FRAGMENT_TESTS writes before EARLY/LATE_FRAGMENT_TESTS writes) and a colour
//!   read for the LOAD. vkCmdBeginRenderPass has 2 clear values (colour (0, 0, 0, 1),
//!   depth 1.0 / stencil 0). +1 call: 14 + 2Q (default 18).
//!
//! Combined: calls = (13 + 2Q, or 4 + 11Q with `submits`) + 2 (`create`) + Q
//! (`redundant`) + 1 (`barrier`) + 1 (`load-store`). With `submits` the pipeline creation,
//! the barrier and the vkCmdClearAttachments are in the first command buffer only (at the
//! places above among cb_0's calls), the redundant binds in every one; with `load-store`
//! every render pass instance has the depth attachment (CLEAR / STORE) and 2 clear values.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ash::vk;
use gpuheat_examples::{args, layer_colour, report_frame_periods};

const NAME: &str = "vk_quads";

const USAGE: &str = "\
vk_quads - Q quads per frame (whole / quarter of the target, same looping fragment shader) in Vulkan

USAGE: vk_quads [OPTIONS]          (needs DISPLAY: an X11 window and VK_KHR_xlib_surface)

OPTIONS:
  --size WxH          window and swapchain size in pixels (default: 256x256)
  --frames N          draw N frames then exit (default: 0 = run until SIGTERM/SIGINT)
  --quads Q           quads per frame, even ones whole, odd ones the top-left quarter (default: 2)
  --loop L            fragment shader loop iterations, the same for every quad (default: 200)
  --fill BYTES        each frame, right after vkBeginCommandBuffer (outside the render pass),
                      vkCmdFillBuffer of a BYTES-byte buffer nothing reads: one more call per
                      frame, work whose cost grows with BYTES (a multiple of 4; default 0: none)
  --checksum          after the last frame print checksum <FNV-1a 64 of the last image's bytes>
  --report-frame-ms   at exit print frame_ms_frames=<start-to-start ms of frames 0..N-2>
  --bad RULE          commit one Vulkan performance mistake every frame (repeatable, the
                      values combine; the picture and --checksum stay the same):
                      submits, create, redundant, barrier, load-store (see MISBEHAVIOURS)
  --help              print this help

EXPECTED NUMBERS:
  frame = every Vulkan call after the previous vkQueuePresentKHR up to this frame's one
  per frame: vkWaitForFences, vkResetFences, vkAcquireNextImageKHR, vkResetCommandBuffer,
             vkBeginCommandBuffer, vkCmdBeginRenderPass, vkCmdBindPipeline,
             vkCmdSetViewport, vkCmdSetScissor,
             Q x (vkCmdPushConstants 48 bytes {rect, color, L}, vkCmdDraw(6, 1, 0, 0)),
             vkCmdEndRenderPass, vkEndCommandBuffer, vkQueueSubmit, vkQueuePresentKHR
  calls         = 13 + 2Q   default 17
  draws         = Q         default 2
  submits       = 1, render passes = 1, vertices = 6 per draw
  fragments     = W*H for even quads, (W/2)*(H/2) for odd quads   default 65536 / 16384
  per-draw GPU time: quad 1 ~ 1/4 of quad 0 (same shader, same L, a quarter of the pixels)
  --checksum adds one copy to a buffer after the last present, in no frame

MISBEHAVIOURS (--bad RULE; per frame, Q quads, default Q = 2):
  submits     one command buffer, render pass instance and vkQueueSubmit per quad: per quad
              vkResetCommandBuffer, vkBeginCommandBuffer, vkCmdBeginRenderPass (quad 0: the
              CLEAR render pass; the others: a second one, colour loadOp LOAD,
              PRESENT_SRC_KHR -> PRESENT_SRC_KHR), vkCmdBindPipeline, vkCmdSetViewport,
              vkCmdSetScissor, vkCmdPushConstants, vkCmdDraw, vkCmdEndRenderPass,
              vkEndCommandBuffer, vkQueueSubmit (the first waits for the acquire, the last
              signals the present's semaphore and the fence; clear values: quad 0's 1, the
              others' 0), between vkAcquireNextImageKHR and vkQueuePresentKHR
              calls = 4 + 11Q (default 26, --quads 6: 70), submits = render passes = Q
  create      vkDestroyPipeline (the previous pipeline) right after vkWaitForFences and
              vkCreateGraphicsPipelines right after vkResetCommandBuffer; the new pipeline
              draws this frame                          calls = 15 + 2Q (default 19)
  redundant   vkCmdBindPipeline (same pipeline) again right before each vkCmdDraw
                                                        calls = 13 + 3Q (default 19)
  barrier     vkCmdPipelineBarrier ALL_COMMANDS -> ALL_COMMANDS, one global memory barrier
              MEMORY_WRITE -> MEMORY_READ|MEMORY_WRITE, right after vkBeginCommandBuffer
                                                        calls = 14 + 2Q (default 18)
  load-store  colour loadOp LOAD (PRESENT_SRC_KHR -> PRESENT_SRC_KHR) instead of CLEAR,
              cleared by vkCmdClearAttachments (whole target, (0,0,0,1)) right after
              vkCmdSetScissor (an image's first frame, still UNDEFINED, uses a third render
              pass with loadOp DONT_CARE: LOAD needs a defined layout); plus a depth
              attachment (CLEAR, STORE) the pipeline never tests or writes and nothing
              reads; vkCmdBeginRenderPass gets 2 clear values
                                                        calls = 14 + 2Q (default 18)
  combined    calls = (13 + 2Q, or 4 + 11Q with submits) + 2 create + Q redundant
              + 1 barrier + 1 load-store; with submits the created pipeline, the barrier and
              the clear go in the first command buffer only, redundant binds in each
";

/// The `--bad` values given: each makes every frame commit one Vulkan performance mistake
/// (see the module's doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bad {
    /// One command buffer, render pass instance and vkQueueSubmit per quad.
    submits: bool,
    /// The graphics pipeline destroyed and created anew every frame.
    create: bool,
    /// vkCmdBindPipeline again, the same pipeline, before every vkCmdDraw.
    redundant: bool,
    /// A full ALL_COMMANDS → ALL_COMMANDS memory barrier at the start of the frame.
    barrier: bool,
    /// Colour loadOp LOAD + vkCmdClearAttachments instead of CLEAR, and a depth attachment
    /// cleared and stored that nothing uses.
    load_store: bool,
}

/// The `--bad` values, as the error message lists them.
const BAD_VALUES: &str = "submits, create, redundant, barrier, load-store";

impl Bad {
    /// Turns `value` on (again is no change).
    fn set(&mut self, value: &str) -> Result<(), String> {
        let flag = match value {
            "submits" => &mut self.submits,
            "create" => &mut self.create,
            "redundant" => &mut self.redundant,
            "barrier" => &mut self.barrier,
            "load-store" => &mut self.load_store,
            _ => {
                return Err(format!(
                    "--bad: unknown value {value:?} (one of: {BAD_VALUES})"
                ));
            }
        };
        *flag = true;
        Ok(())
    }
}

/// The parsed command line.
#[derive(Clone, Copy, Debug)]
struct Opts {
    width: u32,
    height: u32,
    /// 0: until killed.
    frames: u64,
    quads: u32,
    loops: u32,
    checksum: bool,
    report: bool,
    bad: Bad,
    /// `--fill`: bytes of the buffer filled each frame (0: none).
    fill: u64,
}

fn parse_uint(flag: &str, v: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = args::parse_u64(flag, v)?;
    if n < min || n > max {
        return Err(format!("--{flag}: must be in {min}..={max}, got {n}"));
    }
    Ok(n)
}

/// Parses the arguments (without the program name); `None` for `--help`.
fn parse_args(argv: impl IntoIterator<Item = String>) -> Result<Option<Opts>, String> {
    let mut o = Opts {
        width: 256,
        height: 256,
        frames: 0,
        quads: 2,
        loops: 200,
        checksum: false,
        report: false,
        bad: Bad::default(),
        fill: 0,
    };
    let mut it = argv.into_iter();
    while let Some(flag) = args::next_flag(&mut it) {
        let mut flag = flag?;
        let max32 = u32::MAX as u64;
        match flag.name.as_str() {
            "help" => {
                flag.switch()?;
                return Ok(None);
            }
            "checksum" => {
                flag.switch()?;
                o.checksum = true;
            }
            "report-frame-ms" => {
                flag.switch()?;
                o.report = true;
            }
            "size" => (o.width, o.height) = args::parse_size(&flag.value()?, 2)?,
            "frames" => o.frames = parse_uint("frames", &flag.value()?, 0, u64::MAX)?,
            "quads" => o.quads = parse_uint("quads", &flag.value()?, 1, 1 << 20)? as u32,
            "loop" => o.loops = parse_uint("loop", &flag.value()?, 0, max32)? as u32,
            "bad" => o.bad.set(&flag.value()?)?,
            "fill" => {
                o.fill = parse_uint("fill", &flag.value()?, 0, 1 << 32)?;
                if !o.fill.is_multiple_of(4) {
                    return Err(format!("--fill: must be a multiple of 4, got {}", o.fill));
                }
            }
            name => return Err(format!("unknown flag --{name} (see --help)")),
        }
    }
    Ok(Some(o))
}

// --- Signals -------------------------------------------------------------------------------

/// Set by SIGTERM / SIGINT: the frame in progress is the last.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" {
    fn signal(signum: c_int, handler: usize) -> usize;
}

fn stop_on_signals() {
    const SIGINT: c_int = 2;
    const SIGTERM: c_int = 15;
    for sig in [SIGINT, SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { signal(sig, on_stop as *const () as usize) };
    }
}

// --- X11 -----------------------------------------------------------------------------------

/// Xlib's `Display` (opaque).
type XDisplay = c_void;

#[link(name = "X11")]
extern "C" {
    fn XOpenDisplay(name: *const c_char) -> *mut XDisplay;
    fn XDefaultScreen(dpy: *mut XDisplay) -> c_int;
    fn XRootWindow(dpy: *mut XDisplay, screen: c_int) -> c_ulong;
    #[allow(clippy::too_many_arguments)]
    fn XCreateSimpleWindow(
        dpy: *mut XDisplay,
        parent: c_ulong,
        x: c_int,
        y: c_int,
        width: c_uint,
        height: c_uint,
        border_width: c_uint,
        border: c_ulong,
        background: c_ulong,
    ) -> c_ulong;
    fn XMapWindow(dpy: *mut XDisplay, w: c_ulong) -> c_int;
    fn XFlush(dpy: *mut XDisplay) -> c_int;
    fn XDestroyWindow(dpy: *mut XDisplay, w: c_ulong) -> c_int;
    fn XCloseDisplay(dpy: *mut XDisplay) -> c_int;
}

/// The X connection and the window; destroyed and closed on drop.
struct XWindow {
    dpy: *mut XDisplay,
    win: c_ulong,
}

impl XWindow {
    fn open(width: u32, height: u32) -> Result<XWindow, String> {
        // SAFETY: a null name makes Xlib read DISPLAY; the result is checked for null.
        let dpy = unsafe { XOpenDisplay(std::ptr::null()) };
        if dpy.is_null() {
            let d = std::env::var("DISPLAY").unwrap_or_default();
            return Err(if d.is_empty() {
                "cannot open an X display: DISPLAY is not set".into()
            } else {
                format!("cannot open X display {d:?}")
            });
        }
        let mut x = XWindow { dpy, win: 0 };
        // SAFETY: `dpy` is the open connection; the root window belongs to it.
        unsafe {
            let root = XRootWindow(dpy, XDefaultScreen(dpy));
            x.win = XCreateSimpleWindow(dpy, root, 0, 0, width, height, 0, 0, 0);
            if x.win == 0 {
                return Err("XCreateSimpleWindow failed".into());
            }
            XMapWindow(dpy, x.win);
            XFlush(dpy);
        }
        Ok(x)
    }
}

impl Drop for XWindow {
    fn drop(&mut self) {
        // SAFETY: `dpy` is open and `win` (when not 0) was created on it; neither is used again.
        unsafe {
            if self.win != 0 {
                XDestroyWindow(self.dpy, self.win);
            }
            XCloseDisplay(self.dpy);
        }
    }
}

// --- Shaders -------------------------------------------------------------------------------

/// Both stages. Vulkan clip space (naga's ADJUST_COORDINATE_SPACE is off): y points down,
/// so rect (-1, -1, 0, 0) is the top-left quarter.
const WGSL: &str = r#"
struct Quad {
    rect: vec4<f32>,   // x0, y0, x1, y1 in NDC
    color: vec4<f32>,
    loops: u32,
}

var<immediate> q: Quad;

// Vertices 0..5 = (0,0) (1,0) (0,1) | (0,1) (1,0) (1,1): bit i of 0x32 is u, of 0x2c is v.
@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = select(q.rect.x, q.rect.z, ((0x32u >> i) & 1u) == 1u);
    let y = select(q.rect.y, q.rect.w, ((0x2cu >> i) & 1u) == 1u);
    return vec4<f32>(x, y, 0.0, 1.0);
}

// L iterations of a chain the compiler cannot shorten (the count is a push constant); the
// result moves the colour by less than 1/1000, the same for every fragment, frame and run.
@fragment
fn fs_main() -> @location(0) vec4<f32> {
    var v = q.color.x;
    for (var i = 0u; i < q.loops; i++) {
        v = fract(v * 1.0001 + 0.00001);
    }
    return vec4<f32>(q.color.rgb + vec3<f32>(v / 1024.0), 1.0);
}
"#;

/// Size of the push-constant block (`Quad`, WGSL layout: 36 bytes rounded to 16).
const PUSH_SIZE: u32 = 48;

fn compile_wgsl() -> Result<Vec<u32>, String> {
    use naga::back::spv;
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    let module = naga::front::wgsl::parse_str(WGSL)
        .map_err(|e| format!("WGSL: {}", e.emit_to_string(WGSL)))?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::IMMEDIATES)
        .validate(&module)
        .map_err(|e| format!("WGSL validation: {e:?}"))?;
    let mut opts = spv::Options::default();
    opts.flags.remove(spv::WriterFlags::ADJUST_COORDINATE_SPACE);
    opts.force_loop_bounding = false;
    spv::write_vec(&module, &info, &opts, None).map_err(|e| format!("SPIR-V: {e}"))
}

/// The push constants of quad `k`.
fn quad_constants(k: u32, width: u32, height: u32, loops: u32) -> [u8; PUSH_SIZE as usize] {
    let rect = if k.is_multiple_of(2) {
        [-1.0, -1.0, 1.0, 1.0]
    } else {
        let ndc = |p: u32, size: u32| 2.0 * p as f32 / size as f32 - 1.0;
        [-1.0, -1.0, ndc(width / 2, width), ndc(height / 2, height)]
    };
    let c = layer_colour(k);
    let color = [c[0] * 0.5, c[1] * 0.5, c[2] * 0.5, 1.0];
    let mut out = [0u8; PUSH_SIZE as usize];
    for (i, f) in rect.iter().chain(color.iter()).enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&f.to_ne_bytes());
    }
    out[32..36].copy_from_slice(&loops.to_ne_bytes());
    out
}

/// FNV-1a 64.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

// --- Vulkan --------------------------------------------------------------------------------

/// Maps a failed Vulkan call to a message naming it.
fn failed(call: &'static str) -> impl Fn(vk::Result) -> String {
    move |r| format!("{call} failed: {r}")
}

/// Every Vulkan object of the program. Handles start null and are filled in as set-up goes;
/// drop waits for the device and destroys whatever exists (destroying a null handle is a
/// no-op), so an error half-way through set-up still cleans up.
struct Vk {
    instance: ash::Instance,
    surface_fn: ash::khr::surface::Instance,
    surface: vk::SurfaceKHR,
    physical: vk::PhysicalDevice,
    device: Option<ash::Device>,
    swapchain_fn: Option<ash::khr::swapchain::Device>,
    queue_family: u32,
    queue: vk::Queue,
    swapchain: vk::SwapchainKHR,
    extent: vk::Extent2D,
    format: vk::Format,
    images: Vec<vk::Image>,
    views: Vec<vk::ImageView>,
    render_pass: vk::RenderPass,
    /// `--bad submits`: the render pass of quads 1.. (colour loadOp LOAD).
    load_pass: vk::RenderPass,
    /// `--bad load-store`: the render pass of an image's first frame (colour loadOp
    /// DONT_CARE from UNDEFINED: LOAD needs a defined layout).
    fresh_pass: vk::RenderPass,
    /// Per swapchain image: rendered and presented in an earlier frame.
    presented: Vec<bool>,
    /// `--bad load-store`: the depth attachment shared by every framebuffer.
    depth_image: vk::Image,
    depth_memory: vk::DeviceMemory,
    depth_view: vk::ImageView,
    depth_format: vk::Format,
    framebuffers: Vec<vk::Framebuffer>,
    shader: vk::ShaderModule,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::CommandPool,
    /// One, or one per quad with `--bad submits`.
    cmds: Vec<vk::CommandBuffer>,
    fence: vk::Fence,
    acquired: vk::Semaphore,
    rendered: vk::Semaphore,
    readback: vk::Buffer,
    readback_memory: vk::DeviceMemory,
    /// `--fill`: the buffer filled each frame.
    fill: vk::Buffer,
    fill_memory: vk::DeviceMemory,
    bad: Bad,
    /// Kept last: the loader must outlive every call above.
    _entry: ash::Entry,
}

impl Drop for Vk {
    fn drop(&mut self) {
        // SAFETY: every handle was created from this instance / device and is destroyed once,
        // children before parents, after the device is idle; null handles are ignored.
        unsafe {
            if let Some(d) = &self.device {
                let _ = d.device_wait_idle();
                d.destroy_buffer(self.readback, None);
                d.free_memory(self.readback_memory, None);
                d.destroy_buffer(self.fill, None);
                d.free_memory(self.fill_memory, None);
                d.destroy_semaphore(self.rendered, None);
                d.destroy_semaphore(self.acquired, None);
                d.destroy_fence(self.fence, None);
                d.destroy_command_pool(self.pool, None);
                d.destroy_pipeline(self.pipeline, None);
                d.destroy_pipeline_layout(self.layout, None);
                d.destroy_shader_module(self.shader, None);
                for &f in &self.framebuffers {
                    d.destroy_framebuffer(f, None);
                }
                d.destroy_image_view(self.depth_view, None);
                d.destroy_image(self.depth_image, None);
                d.free_memory(self.depth_memory, None);
                d.destroy_render_pass(self.load_pass, None);
                d.destroy_render_pass(self.fresh_pass, None);
                d.destroy_render_pass(self.render_pass, None);
                for &v in &self.views {
                    d.destroy_image_view(v, None);
                }
                if let Some(s) = &self.swapchain_fn {
                    s.destroy_swapchain(self.swapchain, None);
                }
                d.destroy_device(None);
            }
            self.surface_fn.destroy_surface(self.surface, None);
            self.instance.destroy_instance(None);
        }
    }
}

impl Vk {
    /// Loads Vulkan, creates the instance and the window's surface.
    fn new(x: &XWindow, bad: Bad) -> Result<Vk, String> {
        // SAFETY: loading libvulkan.so.1 runs its initialisers, which is what it is for.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| format!("cannot load the Vulkan loader (libvulkan.so.1): {e}"))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"vk_quads")
            .api_version(vk::API_VERSION_1_1);
        let exts = [
            ash::khr::surface::NAME.as_ptr(),
            ash::khr::xlib_surface::NAME.as_ptr(),
        ];
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&exts);
        // SAFETY: `info` and what it points to live across the call.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(failed(
            "vkCreateInstance (VK_KHR_surface, VK_KHR_xlib_surface)",
        ))?;
        let surface_fn = ash::khr::surface::Instance::new(&entry, &instance);
        let mut v = Vk {
            instance,
            surface_fn,
            surface: vk::SurfaceKHR::null(),
            physical: vk::PhysicalDevice::null(),
            device: None,
            swapchain_fn: None,
            queue_family: 0,
            queue: vk::Queue::null(),
            swapchain: vk::SwapchainKHR::null(),
            extent: vk::Extent2D::default(),
            format: vk::Format::UNDEFINED,
            images: Vec::new(),
            views: Vec::new(),
            render_pass: vk::RenderPass::null(),
            load_pass: vk::RenderPass::null(),
            fresh_pass: vk::RenderPass::null(),
            presented: Vec::new(),
            depth_image: vk::Image::null(),
            depth_memory: vk::DeviceMemory::null(),
            depth_view: vk::ImageView::null(),
            depth_format: vk::Format::UNDEFINED,
            framebuffers: Vec::new(),
            shader: vk::ShaderModule::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::CommandPool::null(),
            cmds: Vec::new(),
            fence: vk::Fence::null(),
            acquired: vk::Semaphore::null(),
            rendered: vk::Semaphore::null(),
            readback: vk::Buffer::null(),
            readback_memory: vk::DeviceMemory::null(),
            fill: vk::Buffer::null(),
            fill_memory: vk::DeviceMemory::null(),
            bad,
            _entry: entry,
        };
        let xlib_fn = ash::khr::xlib_surface::Instance::new(&v._entry, &v.instance);
        let sinfo = vk::XlibSurfaceCreateInfoKHR::default()
            .dpy(x.dpy)
            .window(x.win);
        // SAFETY: `x` holds an open display and a window on it, which outlive the surface
        // (the caller drops this `Vk` before the window).
        v.surface = unsafe { xlib_fn.create_xlib_surface(&sinfo, None) }
            .map_err(failed("vkCreateXlibSurfaceKHR"))?;
        Ok(v)
    }

    fn device(&self) -> &ash::Device {
        self.device.as_ref().expect("device created in set-up")
    }

    fn swapchain_fn(&self) -> &ash::khr::swapchain::Device {
        self.swapchain_fn
            .as_ref()
            .expect("swapchain created in set-up")
    }

    /// Picks the physical device and queue family, creates the device and its queue.
    fn create_device(&mut self) -> Result<(), String> {
        // SAFETY: the instance is valid; the surface belongs to it.
        let physicals = unsafe { self.instance.enumerate_physical_devices() }
            .map_err(failed("vkEnumeratePhysicalDevices"))?;
        let mut pick = None;
        'outer: for &pd in &physicals {
            // SAFETY: `pd` comes from this instance.
            let families = unsafe {
                self.instance
                    .get_physical_device_queue_family_properties(pd)
            };
            for (i, f) in families.iter().enumerate() {
                let i = i as u32;
                // SAFETY: `pd`, family `i` and the surface are this instance's.
                let present = unsafe {
                    self.surface_fn
                        .get_physical_device_surface_support(pd, i, self.surface)
                }
                .map_err(failed("vkGetPhysicalDeviceSurfaceSupportKHR"))?;
                if f.queue_flags.contains(vk::QueueFlags::GRAPHICS) && present {
                    pick = Some((pd, i));
                    break 'outer;
                }
            }
        }
        let Some((pd, family)) = pick else {
            return Err(format!(
                "no Vulkan device with a graphics queue that can present to the window \
                 ({} device(s))",
                physicals.len()
            ));
        };
        self.physical = pd;
        self.queue_family = family;
        let prio = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let exts = [ash::khr::swapchain::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&exts);
        // SAFETY: `pd` is this instance's; `info` lives across the call.
        let device = unsafe { self.instance.create_device(pd, &info, None) }
            .map_err(failed("vkCreateDevice (VK_KHR_swapchain)"))?;
        // SAFETY: queue 0 of `family` was requested above.
        self.queue = unsafe { device.get_device_queue(family, 0) };
        self.swapchain_fn = Some(ash::khr::swapchain::Device::new(&self.instance, &device));
        self.device = Some(device);
        Ok(())
    }

    /// Creates the swapchain, its views, the render pass and the framebuffers.
    fn create_swapchain(&mut self, width: u32, height: u32) -> Result<(), String> {
        let (pd, surface) = (self.physical, self.surface);
        // SAFETY: the physical device and surface are this instance's.
        let (caps, formats, modes) = unsafe {
            (
                self.surface_fn
                    .get_physical_device_surface_capabilities(pd, surface)
                    .map_err(failed("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?,
                self.surface_fn
                    .get_physical_device_surface_formats(pd, surface)
                    .map_err(failed("vkGetPhysicalDeviceSurfaceFormatsKHR"))?,
                self.surface_fn
                    .get_physical_device_surface_present_modes(pd, surface)
                    .map_err(failed("vkGetPhysicalDeviceSurfacePresentModesKHR"))?,
            )
        };
        let want = vk::Format::B8G8R8A8_UNORM;
        let format = formats
            .iter()
            .find(|f| f.format == want)
            .or(formats.first())
            .copied()
            .ok_or("the surface offers no format")?;
        let format = vk::SurfaceFormatKHR {
            format: if format.format == vk::Format::UNDEFINED {
                want
            } else {
                format.format
            },
            color_space: format.color_space,
        };
        let mode = [
            vk::PresentModeKHR::IMMEDIATE,
            vk::PresentModeKHR::MAILBOX,
            vk::PresentModeKHR::FIFO,
        ]
        .into_iter()
        .find(|m| modes.contains(m))
        .unwrap_or(vk::PresentModeKHR::FIFO);
        let extent = if caps.current_extent.width == u32::MAX {
            vk::Extent2D { width, height }
        } else {
            caps.current_extent
        };
        if (extent.width, extent.height) != (width, height) {
            return Err(format!(
                "the window's surface is {}x{}, not the {width}x{height} asked for",
                extent.width, extent.height
            ));
        }
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        if !caps.supported_usage_flags.contains(usage) {
            return Err(format!(
                "the surface does not support {usage:?} swapchain images"
            ));
        }
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let alpha = if caps
            .supported_composite_alpha
            .contains(vk::CompositeAlphaFlagsKHR::OPAQUE)
        {
            vk::CompositeAlphaFlagsKHR::OPAQUE
        } else {
            vk::CompositeAlphaFlagsKHR::from_raw(
                caps.supported_composite_alpha.as_raw()
                    & caps.supported_composite_alpha.as_raw().wrapping_neg(),
            )
        };
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(alpha)
            .present_mode(mode)
            .clipped(true);
        let sc = self.swapchain_fn().clone();
        // SAFETY: the surface and device are valid; `info` lives across the call.
        self.swapchain =
            unsafe { sc.create_swapchain(&info, None) }.map_err(failed("vkCreateSwapchainKHR"))?;
        // SAFETY: the swapchain was just created.
        self.images = unsafe { sc.get_swapchain_images(self.swapchain) }
            .map_err(failed("vkGetSwapchainImagesKHR"))?;
        self.extent = extent;
        self.format = format.format;

        let d = self.device().clone();
        for &image in &self.images.clone() {
            let info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format.format)
                .subresource_range(color_range());
            // SAFETY: `image` is a swapchain image of this device.
            let view =
                unsafe { d.create_image_view(&info, None) }.map_err(failed("vkCreateImageView"))?;
            self.views.push(view);
        }

        if self.bad.load_store {
            self.create_depth()?;
        }
        let (load, clear, dont_care) = (
            vk::AttachmentLoadOp::LOAD,
            vk::AttachmentLoadOp::CLEAR,
            vk::AttachmentLoadOp::DONT_CARE,
        );
        let (undefined, present) = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::PRESENT_SRC_KHR);
        if self.bad.load_store {
            // LOAD needs a defined layout (VUID-VkAttachmentDescription-format-06699): an
            // image is PRESENT_SRC_KHR once presented, UNDEFINED before its first use.
            self.render_pass = self.make_render_pass(load, present)?;
            self.fresh_pass = self.make_render_pass(dont_care, undefined)?;
        } else {
            self.render_pass = self.make_render_pass(clear, undefined)?;
        }
        if self.bad.submits {
            self.load_pass = self.make_render_pass(load, present)?;
        }
        self.presented = vec![false; self.images.len()];
        let attachment_count = if self.bad.load_store { 2 } else { 1 };
        for &view in &self.views.clone() {
            let views = [view, self.depth_view];
            let info = vk::FramebufferCreateInfo::default()
                .render_pass(self.render_pass)
                .attachments(&views[..attachment_count])
                .width(extent.width)
                .height(extent.height)
                .layers(1);
            // SAFETY: the views and render pass are this device's and compatible.
            let fb = unsafe { d.create_framebuffer(&info, None) }
                .map_err(failed("vkCreateFramebuffer"))?;
            self.framebuffers.push(fb);
        }
        Ok(())
    }

    /// `--bad load-store`: the W×H depth image, its memory and view, which every framebuffer
    /// shares.
    fn create_depth(&mut self) -> Result<(), String> {
        let d = self.device().clone();
        let candidates = [
            vk::Format::D16_UNORM,
            vk::Format::X8_D24_UNORM_PACK32,
            vk::Format::D32_SFLOAT,
        ];
        let format = candidates
            .into_iter()
            .find(|&f| {
                // SAFETY: the physical device is this instance's.
                let props = unsafe {
                    self.instance
                        .get_physical_device_format_properties(self.physical, f)
                };
                props
                    .optimal_tiling_features
                    .contains(vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT)
            })
            .ok_or("no depth format (D16_UNORM, X8_D24_UNORM_PACK32, D32_SFLOAT) is usable")?;
        self.depth_format = format;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width: self.extent.width,
                height: self.extent.height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: every handle is this device's (or its physical device's); the infos live
        // across their calls; the memory is bound before the view is made.
        unsafe {
            self.depth_image = d
                .create_image(&info, None)
                .map_err(failed("vkCreateImage"))?;
            let req = d.get_image_memory_requirements(self.depth_image);
            let props = self
                .instance
                .get_physical_device_memory_properties(self.physical);
            let allowed = |i: &u32| req.memory_type_bits & (1 << i) != 0;
            let local = |i: &u32| {
                props.memory_types[*i as usize]
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            };
            let type_index = (0..props.memory_type_count)
                .find(|i| allowed(i) && local(i))
                .or_else(|| (0..props.memory_type_count).find(allowed))
                .ok_or("no memory type for the depth image")?;
            let info = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(type_index);
            self.depth_memory = d
                .allocate_memory(&info, None)
                .map_err(failed("vkAllocateMemory"))?;
            d.bind_image_memory(self.depth_image, self.depth_memory, 0)
                .map_err(failed("vkBindImageMemory"))?;
            let info = vk::ImageViewCreateInfo::default()
                .image(self.depth_image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format)
                .subresource_range(vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::DEPTH,
                    ..color_range()
                });
            self.depth_view = d
                .create_image_view(&info, None)
                .map_err(failed("vkCreateImageView"))?;
        }
        Ok(())
    }

    /// A render pass whose colour attachment has `load_op` from `initial` (storeOp STORE,
    /// final PRESENT_SRC_KHR), with `--bad load-store`'s depth attachment. The render passes
    /// of one run differ only there, so they are all compatible with every framebuffer and
    /// the pipeline (their dependencies must be identical too).
    fn make_render_pass(
        &self,
        load_op: vk::AttachmentLoadOp,
        initial: vk::ImageLayout,
    ) -> Result<vk::RenderPass, String> {
        let depth = self.bad.load_store;
        let attachments = [
            vk::AttachmentDescription::default()
                .format(self.format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(load_op)
                .store_op(vk::AttachmentStoreOp::STORE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(initial)
                .final_layout(vk::ImageLayout::PRESENT_SRC_KHR),
            // `--bad load-store` only: cleared and stored, never tested, written or read.
            vk::AttachmentDescription::default()
                .format(self.depth_format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL),
        ];
        let color_ref = [vk::AttachmentReference::default()
            .attachment(0)
            .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
        let depth_ref = vk::AttachmentReference::default()
            .attachment(1)
            .layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
        let mut subpass = vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref);
        if depth {
            subpass = subpass.depth_stencil_attachment(&depth_ref);
        }
        // The acquire semaphore is waited on at COLOR_ATTACHMENT_OUTPUT: the layout
        // transition from UNDEFINED must wait for it too. A LOAD also reads the colour; with
        // `--bad submits` the earlier submits' colour (and depth) writes and final layout
        // transitions must be done first, hence the second dependency, towards the next
        // render pass instance. The same for every render pass of a run.
        let mut src_stage = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT;
        let mut dst_stage = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT;
        let mut src_access = vk::AccessFlags::empty();
        let mut dst_access = vk::AccessFlags::COLOR_ATTACHMENT_WRITE;
        if self.bad.submits {
            src_access |= vk::AccessFlags::COLOR_ATTACHMENT_WRITE;
        }
        if self.bad.submits || self.bad.load_store {
            dst_access |= vk::AccessFlags::COLOR_ATTACHMENT_READ;
        }
        if depth {
            src_stage |= vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
            dst_stage |= vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS
                | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
            src_access |= vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE;
            dst_access |= vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE;
        }
        let deps = [
            vk::SubpassDependency::default()
                .src_subpass(vk::SUBPASS_EXTERNAL)
                .dst_subpass(0)
                .src_stage_mask(src_stage)
                .dst_stage_mask(dst_stage)
                .src_access_mask(src_access)
                .dst_access_mask(dst_access),
            vk::SubpassDependency::default()
                .src_subpass(0)
                .dst_subpass(vk::SUBPASS_EXTERNAL)
                .src_stage_mask(src_stage)
                .dst_stage_mask(dst_stage)
                .src_access_mask(
                    dst_access
                        & (vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                            | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE),
                )
                .dst_access_mask(dst_access | vk::AccessFlags::COLOR_ATTACHMENT_READ),
        ];
        let dep_count = if self.bad.submits { 2 } else { 1 };
        let attachment_count = if depth { 2 } else { 1 };
        let info = vk::RenderPassCreateInfo::default()
            .attachments(&attachments[..attachment_count])
            .subpasses(std::slice::from_ref(&subpass))
            .dependencies(&deps[..dep_count]);
        // SAFETY: `info` and its arrays live across the call.
        unsafe { self.device().create_render_pass(&info, None) }
            .map_err(failed("vkCreateRenderPass"))
    }

    /// Creates the shader module, pipeline layout and pipeline.
    fn create_pipeline(&mut self) -> Result<(), String> {
        let d = self.device().clone();
        let code = compile_wgsl()?;
        let info = vk::ShaderModuleCreateInfo::default().code(&code);
        // SAFETY: `code` is SPIR-V from naga's validated module.
        self.shader = unsafe { d.create_shader_module(&info, None) }
            .map_err(failed("vkCreateShaderModule"))?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT)
            .offset(0)
            .size(PUSH_SIZE)];
        let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges);
        // SAFETY: `info` lives across the call.
        self.layout = unsafe { d.create_pipeline_layout(&info, None) }
            .map_err(failed("vkCreatePipelineLayout"))?;
        self.pipeline = self.new_pipeline()?;
        Ok(())
    }

    /// Creates a graphics pipeline from the shader module, layout and render pass: at
    /// set-up, and with `--bad create` in every frame.
    fn new_pipeline(&self) -> Result<vk::Pipeline, String> {
        let d = self.device();

        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(self.shader)
                .name(c"vs_main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(self.shader)
                .name(c"fs_main"),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
            .blend_enable(true)
            .src_color_blend_factor(vk::BlendFactor::ONE)
            .dst_color_blend_factor(vk::BlendFactor::ONE)
            .color_blend_op(vk::BlendOp::ADD)
            .src_alpha_blend_factor(vk::BlendFactor::ONE)
            .dst_alpha_blend_factor(vk::BlendFactor::ONE)
            .alpha_blend_op(vk::BlendOp::ADD)
            .color_write_mask(vk::ColorComponentFlags::RGBA)];
        let blend =
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        // `--bad load-store`: the subpass has a depth attachment, which the pipeline ignores.
        let depth = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(false)
            .depth_write_enable(false)
            .depth_compare_op(vk::CompareOp::ALWAYS)
            .max_depth_bounds(1.0);
        let mut info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(self.layout)
            .render_pass(self.render_pass)
            .subpass(0);
        if self.bad.load_store {
            info = info.depth_stencil_state(&depth);
        }
        // SAFETY: every state struct lives across the call; module, layout and render pass
        // are this device's.
        let pipelines =
            unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
                .map_err(|(_, r)| failed("vkCreateGraphicsPipelines")(r))?;
        Ok(pipelines[0])
    }

    /// Creates the command pool and buffer, the fence and the semaphores.
    /// `buffers`: 1, or Q with `--bad submits`.
    fn create_sync(&mut self, buffers: u32) -> Result<(), String> {
        let d = self.device().clone();
        let info = vk::CommandPoolCreateInfo::default()
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
            .queue_family_index(self.queue_family);
        // SAFETY: the create infos live across their calls; the pool is this device's.
        unsafe {
            self.pool = d
                .create_command_pool(&info, None)
                .map_err(failed("vkCreateCommandPool"))?;
            let info = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(buffers);
            self.cmds = d
                .allocate_command_buffers(&info)
                .map_err(failed("vkAllocateCommandBuffers"))?;
            let info = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
            self.fence = d
                .create_fence(&info, None)
                .map_err(failed("vkCreateFence"))?;
            let info = vk::SemaphoreCreateInfo::default();
            self.acquired = d
                .create_semaphore(&info, None)
                .map_err(failed("vkCreateSemaphore"))?;
            self.rendered = d
                .create_semaphore(&info, None)
                .map_err(failed("vkCreateSemaphore"))?;
        }
        Ok(())
    }

    /// One frame: exactly the 13 + 2Q calls of the module's doc, or with `--bad` those its
    /// values describe. Returns the image presented.
    /// `--fill`: the buffer of `size` bytes filled each frame.
    fn create_fill(&mut self, size: u64) -> Result<(), String> {
        let d = self.device().clone();
        // SAFETY: a buffer and its memory of this device, bound once before any use.
        unsafe {
            let info = vk::BufferCreateInfo::default()
                .size(size)
                .usage(vk::BufferUsageFlags::TRANSFER_DST)
                .sharing_mode(vk::SharingMode::EXCLUSIVE);
            self.fill = d
                .create_buffer(&info, None)
                .map_err(failed("vkCreateBuffer"))?;
            let req = d.get_buffer_memory_requirements(self.fill);
            let props = self
                .instance
                .get_physical_device_memory_properties(self.physical);
            let type_index = (0..props.memory_type_count)
                .find(|&i| req.memory_type_bits & (1 << i) != 0)
                .ok_or("no memory type for the --fill buffer")?;
            let info = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(type_index);
            self.fill_memory = d
                .allocate_memory(&info, None)
                .map_err(failed("vkAllocateMemory"))?;
            d.bind_buffer_memory(self.fill, self.fill_memory, 0)
                .map_err(failed("vkBindBufferMemory"))?;
        }
        Ok(())
    }

    fn frame(&mut self, quads: &[[u8; PUSH_SIZE as usize]]) -> Result<u32, String> {
        let d = self.device().clone();
        let sc = self.swapchain_fn().clone();
        let bad = self.bad;
        let full = vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: self.extent,
        };
        // One batch of all the quads (one command buffer, one submit), or one per quad.
        let batches: Vec<&[[u8; PUSH_SIZE as usize]]> = if bad.submits {
            quads.chunks(1).collect()
        } else {
            vec![quads]
        };
        // SAFETY: every handle is this device's; with one frame in flight the fence wait
        // makes the command buffers, the semaphores and the previous pipeline free for reuse
        // or destruction (the fence is signalled by the frame's last submit, after all its
        // earlier ones); every info struct lives across its call.
        unsafe {
            d.wait_for_fences(&[self.fence], true, u64::MAX)
                .map_err(failed("vkWaitForFences"))?;
            if bad.create {
                d.destroy_pipeline(self.pipeline, None);
                self.pipeline = vk::Pipeline::null();
            }
            d.reset_fences(&[self.fence])
                .map_err(failed("vkResetFences"))?;
            let (image, _suboptimal) = sc
                .acquire_next_image(self.swapchain, u64::MAX, self.acquired, vk::Fence::null())
                .map_err(failed("vkAcquireNextImageKHR"))?;
            let clear = [
                vk::ClearValue {
                    color: vk::ClearColorValue {
                        float32: [0.0, 0.0, 0.0, 1.0],
                    },
                },
                vk::ClearValue {
                    depth_stencil: vk::ClearDepthStencilValue {
                        depth: 1.0,
                        stencil: 0,
                    },
                },
            ];
            // The colour's CLEAR value, and the depth's with `--bad load-store`; none for
            // `--bad submits`' LOAD render passes without a depth attachment.
            let clear_count = |k: usize| match (bad.load_store, k) {
                (true, _) => 2,
                (false, 0) => 1,
                (false, _) => 0,
            };
            let viewport = vk::Viewport {
                x: 0.0,
                y: 0.0,
                width: self.extent.width as f32,
                height: self.extent.height as f32,
                min_depth: 0.0,
                max_depth: 1.0,
            };
            let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
            let last = batches.len() - 1;
            for (k, batch) in batches.iter().enumerate() {
                let cb = self.cmds[k];
                d.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                    .map_err(failed("vkResetCommandBuffer"))?;
                if bad.create && k == 0 {
                    self.pipeline = self.new_pipeline()?;
                }
                let begin = vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                d.begin_command_buffer(cb, &begin)
                    .map_err(failed("vkBeginCommandBuffer"))?;
                if self.fill != vk::Buffer::null() && k == 0 {
                    d.cmd_fill_buffer(cb, self.fill, 0, vk::WHOLE_SIZE, 0x5eed_5eed);
                }
                if bad.barrier && k == 0 {
                    let all = vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
                        .dst_access_mask(
                            vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
                        );
                    d.cmd_pipeline_barrier(
                        cb,
                        vk::PipelineStageFlags::ALL_COMMANDS,
                        vk::PipelineStageFlags::ALL_COMMANDS,
                        vk::DependencyFlags::empty(),
                        &[all],
                        &[],
                        &[],
                    );
                }
                let render_pass = if k > 0 {
                    self.load_pass
                } else if bad.load_store && !self.presented[image as usize] {
                    self.fresh_pass
                } else {
                    self.render_pass
                };
                let rp = vk::RenderPassBeginInfo::default()
                    .render_pass(render_pass)
                    .framebuffer(self.framebuffers[image as usize])
                    .render_area(full)
                    .clear_values(&clear[..clear_count(k)]);
                d.cmd_begin_render_pass(cb, &rp, vk::SubpassContents::INLINE);
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
                d.cmd_set_viewport(cb, 0, &[viewport]);
                d.cmd_set_scissor(cb, 0, &[full]);
                if bad.load_store && k == 0 {
                    let attachment = vk::ClearAttachment {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        color_attachment: 0,
                        clear_value: clear[0],
                    };
                    let rect = vk::ClearRect {
                        rect: full,
                        base_array_layer: 0,
                        layer_count: 1,
                    };
                    d.cmd_clear_attachments(cb, &[attachment], &[rect]);
                }
                for q in batch.iter() {
                    d.cmd_push_constants(cb, self.layout, stages, 0, q);
                    if bad.redundant {
                        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
                    }
                    d.cmd_draw(cb, 6, 1, 0, 0);
                }
                d.cmd_end_render_pass(cb);
                d.end_command_buffer(cb)
                    .map_err(failed("vkEndCommandBuffer"))?;
                let waits = [self.acquired];
                let wait_stages = [vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT];
                let cbs = [cb];
                let signals = [self.rendered];
                let (wait_n, signal_n, fence) = match (k == 0, k == last) {
                    (first, true) => (first as usize, 1, self.fence),
                    (first, false) => (first as usize, 0, vk::Fence::null()),
                };
                let submit = vk::SubmitInfo::default()
                    .wait_semaphores(&waits[..wait_n])
                    .wait_dst_stage_mask(&wait_stages[..wait_n])
                    .command_buffers(&cbs)
                    .signal_semaphores(&signals[..signal_n]);
                d.queue_submit(self.queue, &[submit], fence)
                    .map_err(failed("vkQueueSubmit"))?;
            }
            let swapchains = [self.swapchain];
            let indices = [image];
            let signals = [self.rendered];
            let present = vk::PresentInfoKHR::default()
                .wait_semaphores(&signals)
                .swapchains(&swapchains)
                .image_indices(&indices);
            sc.queue_present(self.queue, &present)
                .map_err(failed("vkQueuePresentKHR"))?;
            self.presented[image as usize] = true;
            Ok(image)
        }
    }

    /// After the last frame: copies swapchain image `image` to a host-visible buffer and
    /// returns the FNV-1a 64 of its bytes.
    fn checksum(&mut self, image: u32) -> Result<u64, String> {
        let d = self.device().clone();
        let (w, h) = (self.extent.width, self.extent.height);
        let size = w as u64 * h as u64 * 4;
        // SAFETY: all handles are this device's; the device is idle before the copy is
        // recorded, the copy is waited for before the memory is read, and the mapping covers
        // the buffer's `size` bytes.
        unsafe {
            d.device_wait_idle().map_err(failed("vkDeviceWaitIdle"))?;
            let info = vk::BufferCreateInfo::default()
                .size(size)
                .usage(vk::BufferUsageFlags::TRANSFER_DST)
                .sharing_mode(vk::SharingMode::EXCLUSIVE);
            self.readback = d
                .create_buffer(&info, None)
                .map_err(failed("vkCreateBuffer"))?;
            let req = d.get_buffer_memory_requirements(self.readback);
            let props = self
                .instance
                .get_physical_device_memory_properties(self.physical);
            let want =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let type_index = (0..props.memory_type_count)
                .find(|&i| {
                    req.memory_type_bits & (1 << i) != 0
                        && props.memory_types[i as usize].property_flags.contains(want)
                })
                .ok_or("no host-visible, coherent memory type for the read-back buffer")?;
            let info = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(type_index);
            self.readback_memory = d
                .allocate_memory(&info, None)
                .map_err(failed("vkAllocateMemory"))?;
            d.bind_buffer_memory(self.readback, self.readback_memory, 0)
                .map_err(failed("vkBindBufferMemory"))?;

            let info = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cb = d
                .allocate_command_buffers(&info)
                .map_err(failed("vkAllocateCommandBuffers"))?[0];
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(cb, &begin)
                .map_err(failed("vkBeginCommandBuffer"))?;
            let img = self.images[image as usize];
            let to_src = vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::empty())
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ)
                .old_layout(vk::ImageLayout::PRESENT_SRC_KHR)
                .new_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(img)
                .subresource_range(color_range());
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_src],
            );
            let region = vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    base_array_layer: 0,
                    layer_count: 1,
                })
                .image_extent(vk::Extent3D {
                    width: w,
                    height: h,
                    depth: 1,
                });
            d.cmd_copy_image_to_buffer(
                cb,
                img,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                self.readback,
                &[region],
            );
            let back = vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_READ)
                .dst_access_mask(vk::AccessFlags::empty())
                .old_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
                .new_layout(vk::ImageLayout::PRESENT_SRC_KHR)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(img)
                .subresource_range(color_range());
            let host = vk::BufferMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .buffer(self.readback)
                .offset(0)
                .size(vk::WHOLE_SIZE);
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST | vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                vk::DependencyFlags::empty(),
                &[],
                &[host],
                &[back],
            );
            d.end_command_buffer(cb)
                .map_err(failed("vkEndCommandBuffer"))?;
            let cbs = [cb];
            let submit = vk::SubmitInfo::default().command_buffers(&cbs);
            d.queue_submit(self.queue, &[submit], vk::Fence::null())
                .map_err(failed("vkQueueSubmit"))?;
            d.queue_wait_idle(self.queue)
                .map_err(failed("vkQueueWaitIdle"))?;
            let ptr = d
                .map_memory(self.readback_memory, 0, size, vk::MemoryMapFlags::empty())
                .map_err(failed("vkMapMemory"))?;
            let bytes = std::slice::from_raw_parts(ptr as *const u8, size as usize);
            let sum = fnv1a64(bytes);
            d.unmap_memory(self.readback_memory);
            d.free_command_buffers(self.pool, &cbs);
            Ok(sum)
        }
    }
}

fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// Writes one line to stdout and flushes, ignoring errors (e.g. a closed pipe).
fn emit(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn run(o: &Opts) -> Result<(), String> {
    stop_on_signals();
    let window = XWindow::open(o.width, o.height)?;
    // Dropped before `window`: the surface goes before the window and the display.
    let mut vk = Vk::new(&window, o.bad)?;
    vk.create_device()?;
    vk.create_swapchain(o.width, o.height)?;
    vk.create_pipeline()?;
    vk.create_sync(if o.bad.submits { o.quads } else { 1 })?;
    if o.fill > 0 {
        vk.create_fill(o.fill)?;
    }
    let quads: Vec<_> = (0..o.quads)
        .map(|k| quad_constants(k, o.width, o.height, o.loops))
        .collect();

    let mut starts = Vec::new();
    let mut last = None;
    let mut i: u64 = 0;
    while o.frames == 0 || i < o.frames {
        if o.report {
            starts.push(Instant::now());
        }
        last = Some(vk.frame(&quads)?);
        i += 1;
        if STOP.load(Ordering::SeqCst) {
            break;
        }
    }
    if o.checksum {
        if let Some(image) = last {
            let sum = vk.checksum(image)?;
            emit(&format!("checksum {sum:016x}"));
        }
    }
    if o.report {
        report_frame_periods(&starts);
    }
    drop(vk);
    drop(window);
    Ok(())
}

fn main() {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("{NAME}: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&opts) {
        eprintln!("{NAME}: {}", e.replace('\n', " "));
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Option<Opts>, String> {
        parse_args(a.iter().map(|s| s.to_string()))
    }

    #[test]
    fn args() {
        let o = parse(&[]).unwrap().unwrap();
        assert_eq!(
            (o.width, o.height, o.frames, o.quads, o.loops),
            (256, 256, 0, 2, 200)
        );
        let o = parse(&[
            "--size=64x32",
            "--frames",
            "3",
            "--quads=5",
            "--loop",
            "0",
            "--checksum",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (o.width, o.height, o.frames, o.quads, o.loops),
            (64, 32, 3, 5, 0)
        );
        assert!(o.checksum && !o.report);
        assert!(parse(&["--help"]).unwrap().is_none());
        for bad in [
            &["--quads", "0"][..],
            &["--size", "1x4"],
            &["--bogus"],
            &["x"],
            &["--checksum=1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_values() {
        let o = parse(&[]).unwrap().unwrap();
        assert_eq!(o.bad, Bad::default());
        let o = parse(&["--bad", "barrier", "--bad=redundant", "--bad", "barrier"])
            .unwrap()
            .unwrap();
        assert_eq!(
            o.bad,
            Bad {
                barrier: true,
                redundant: true,
                ..Bad::default()
            }
        );
        let o = parse(&["--bad", "submits", "--bad", "create", "--bad", "load-store"])
            .unwrap()
            .unwrap();
        assert!(o.bad.submits && o.bad.create && o.bad.load_store);
        assert!(!o.bad.redundant && !o.bad.barrier);
        let e = parse(&["--bad", "stall"]).unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("\"stall\""), "{e}");
        for v in ["submits", "create", "redundant", "barrier", "load-store"] {
            assert!(e.contains(v), "{e}");
            assert!(USAGE.contains(v), "{v}");
        }
        assert!(parse(&["--bad"]).is_err());
        assert!(parse(&["--bad="]).is_err());
        assert!(parse(&["--bad", "load_store"]).is_err());
    }

    #[test]
    fn wgsl_compiles() {
        assert!(!compile_wgsl().unwrap().is_empty());
    }

    #[test]
    fn fnv() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn quarter_rect() {
        let q = quad_constants(1, 256, 256, 7);
        let f = |i: usize| f32::from_ne_bytes(q[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!([f(0), f(1), f(2), f(3)], [-1.0, -1.0, 0.0, 0.0]);
        assert_eq!(u32::from_ne_bytes(q[32..36].try_into().unwrap()), 7);
    }
}
