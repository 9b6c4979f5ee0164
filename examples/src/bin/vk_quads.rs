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
//! frames 0..N-2>`), `--help`.
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

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ash::vk;
use gpuheat_examples::{layer_colour, report_frame_periods};

const NAME: &str = "vk_quads";

const USAGE: &str = "\
vk_quads - Q quads per frame (whole / quarter of the target, same looping fragment shader) in Vulkan

USAGE: vk_quads [OPTIONS]          (needs DISPLAY: an X11 window and VK_KHR_xlib_surface)

OPTIONS:
  --size WxH          window and swapchain size in pixels (default: 256x256)
  --frames N          draw N frames then exit (default: 0 = run until SIGTERM/SIGINT)
  --quads Q           quads per frame, even ones whole, odd ones the top-left quarter (default: 2)
  --loop L            fragment shader loop iterations, the same for every quad (default: 200)
  --checksum          after the last frame print checksum <FNV-1a 64 of the last image's bytes>
  --report-frame-ms   at exit print frame_ms_frames=<start-to-start ms of frames 0..N-2>
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
";

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
}

fn parse_size(v: &str) -> Result<(u32, u32), String> {
    let err = || format!("--size: expected WxH (e.g. 256x256), got {v:?}");
    let (w, h) = v.split_once(['x', 'X']).ok_or_else(err)?;
    let w: u32 = w.parse().map_err(|_| err())?;
    let h: u32 = h.parse().map_err(|_| err())?;
    if !(2..=16384).contains(&w) || !(2..=16384).contains(&h) {
        return Err(format!("--size: each side must be in 2..=16384, got {v:?}"));
    }
    Ok((w, h))
}

fn parse_uint(flag: &str, v: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = v
        .parse::<u64>()
        .map_err(|_| format!("--{flag}: expected an unsigned integer, got {v:?}"))?;
    if n < min || n > max {
        return Err(format!("--{flag}: must be in {min}..={max}, got {n}"));
    }
    Ok(n)
}

/// Parses the arguments (without the program name); `None` for `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Opts>, String> {
    let mut o = Opts {
        width: 256,
        height: 256,
        frames: 0,
        quads: 2,
        loops: 200,
        checksum: false,
        report: false,
    };
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let Some(body) = arg.strip_prefix("--") else {
            return Err(format!("unexpected argument {arg:?} (see --help)"));
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        let switch = |inline: &Option<String>| match inline {
            Some(_) => Err(format!("--{name} takes no value")),
            None => Ok(()),
        };
        let mut value = |inline: Option<String>| match inline {
            Some(v) => Ok(v),
            None => it.next().ok_or_else(|| format!("--{name} needs a value")),
        };
        let max32 = u32::MAX as u64;
        match name.as_str() {
            "help" => {
                switch(&inline)?;
                return Ok(None);
            }
            "checksum" => {
                switch(&inline)?;
                o.checksum = true;
            }
            "report-frame-ms" => {
                switch(&inline)?;
                o.report = true;
            }
            "size" => (o.width, o.height) = parse_size(&value(inline)?)?,
            "frames" => o.frames = parse_uint("frames", &value(inline)?, 0, u64::MAX)?,
            "quads" => o.quads = parse_uint("quads", &value(inline)?, 1, 1 << 20)? as u32,
            "loop" => o.loops = parse_uint("loop", &value(inline)?, 0, max32)? as u32,
            _ => return Err(format!("unknown flag --{name} (see --help)")),
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
    framebuffers: Vec<vk::Framebuffer>,
    shader: vk::ShaderModule,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    acquired: vk::Semaphore,
    rendered: vk::Semaphore,
    readback: vk::Buffer,
    readback_memory: vk::DeviceMemory,
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
    fn new(x: &XWindow) -> Result<Vk, String> {
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
            framebuffers: Vec::new(),
            shader: vk::ShaderModule::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::CommandPool::null(),
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            acquired: vk::Semaphore::null(),
            rendered: vk::Semaphore::null(),
            readback: vk::Buffer::null(),
            readback_memory: vk::DeviceMemory::null(),
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

        let attachments = [vk::AttachmentDescription::default()
            .format(format.format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::PRESENT_SRC_KHR)];
        let color_ref = [vk::AttachmentReference::default()
            .attachment(0)
            .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
        let subpasses = [vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref)];
        // The acquire semaphore is waited on at COLOR_ATTACHMENT_OUTPUT: the layout
        // transition from UNDEFINED must wait for it too.
        let deps = [vk::SubpassDependency::default()
            .src_subpass(vk::SUBPASS_EXTERNAL)
            .dst_subpass(0)
            .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .dst_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .src_access_mask(vk::AccessFlags::empty())
            .dst_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)];
        let info = vk::RenderPassCreateInfo::default()
            .attachments(&attachments)
            .subpasses(&subpasses)
            .dependencies(&deps);
        // SAFETY: `info` and its arrays live across the call.
        self.render_pass =
            unsafe { d.create_render_pass(&info, None) }.map_err(failed("vkCreateRenderPass"))?;
        for &view in &self.views.clone() {
            let views = [view];
            let info = vk::FramebufferCreateInfo::default()
                .render_pass(self.render_pass)
                .attachments(&views)
                .width(extent.width)
                .height(extent.height)
                .layers(1);
            // SAFETY: the view and render pass are this device's and compatible.
            let fb = unsafe { d.create_framebuffer(&info, None) }
                .map_err(failed("vkCreateFramebuffer"))?;
            self.framebuffers.push(fb);
        }
        Ok(())
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
        let info = vk::GraphicsPipelineCreateInfo::default()
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
        // SAFETY: every state struct lives across the call; module, layout and render pass
        // are this device's.
        let pipelines =
            unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
                .map_err(|(_, r)| failed("vkCreateGraphicsPipelines")(r))?;
        self.pipeline = pipelines[0];
        Ok(())
    }

    /// Creates the command pool and buffer, the fence and the semaphores.
    fn create_sync(&mut self) -> Result<(), String> {
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
                .command_buffer_count(1);
            self.cmd = d
                .allocate_command_buffers(&info)
                .map_err(failed("vkAllocateCommandBuffers"))?[0];
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

    /// One frame: exactly the 13 + 2Q calls of the module's doc. Returns the image presented.
    fn frame(&self, quads: &[[u8; PUSH_SIZE as usize]]) -> Result<u32, String> {
        let d = self.device();
        let sc = self.swapchain_fn();
        let cb = self.cmd;
        let full = vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: self.extent,
        };
        // SAFETY: every handle is this device's; with one frame in flight the fence wait
        // makes the command buffer and the semaphores free for reuse; every info struct
        // lives across its call.
        unsafe {
            d.wait_for_fences(&[self.fence], true, u64::MAX)
                .map_err(failed("vkWaitForFences"))?;
            d.reset_fences(&[self.fence])
                .map_err(failed("vkResetFences"))?;
            let (image, _suboptimal) = sc
                .acquire_next_image(self.swapchain, u64::MAX, self.acquired, vk::Fence::null())
                .map_err(failed("vkAcquireNextImageKHR"))?;
            d.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(failed("vkResetCommandBuffer"))?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(cb, &begin)
                .map_err(failed("vkBeginCommandBuffer"))?;
            let clear = [vk::ClearValue {
                color: vk::ClearColorValue {
                    float32: [0.0, 0.0, 0.0, 1.0],
                },
            }];
            let rp = vk::RenderPassBeginInfo::default()
                .render_pass(self.render_pass)
                .framebuffer(self.framebuffers[image as usize])
                .render_area(full)
                .clear_values(&clear);
            d.cmd_begin_render_pass(cb, &rp, vk::SubpassContents::INLINE);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            let viewport = vk::Viewport {
                x: 0.0,
                y: 0.0,
                width: self.extent.width as f32,
                height: self.extent.height as f32,
                min_depth: 0.0,
                max_depth: 1.0,
            };
            d.cmd_set_viewport(cb, 0, &[viewport]);
            d.cmd_set_scissor(cb, 0, &[full]);
            let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
            for q in quads {
                d.cmd_push_constants(cb, self.layout, stages, 0, q);
                d.cmd_draw(cb, 6, 1, 0, 0);
            }
            d.cmd_end_render_pass(cb);
            d.end_command_buffer(cb)
                .map_err(failed("vkEndCommandBuffer"))?;
            let waits = [self.acquired];
            let wait_stages = [vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT];
            let cbs = [cb];
            let signals = [self.rendered];
            let submit = vk::SubmitInfo::default()
                .wait_semaphores(&waits)
                .wait_dst_stage_mask(&wait_stages)
                .command_buffers(&cbs)
                .signal_semaphores(&signals);
            d.queue_submit(self.queue, &[submit], self.fence)
                .map_err(failed("vkQueueSubmit"))?;
            let swapchains = [self.swapchain];
            let indices = [image];
            let present = vk::PresentInfoKHR::default()
                .wait_semaphores(&signals)
                .swapchains(&swapchains)
                .image_indices(&indices);
            sc.queue_present(self.queue, &present)
                .map_err(failed("vkQueuePresentKHR"))?;
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
    let mut vk = Vk::new(&window)?;
    vk.create_device()?;
    vk.create_swapchain(o.width, o.height)?;
    vk.create_pipeline()?;
    vk.create_sync()?;
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
