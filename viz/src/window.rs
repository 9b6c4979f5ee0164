//! The windowed viewer: winit (X11), a wgpu surface, egui-winit for input; optionally takes
//! a screenshot of the real window once the session has loaded, and exits.

use crate::app::App;
use crate::error::{one_line, VizError};
use crate::gpu::{read_texture, Gpu, Target};
use crate::options::ViewOptions;
use crate::shot::write_png;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::platform::x11::EventLoopBuilderExtX11;
use winit::window::{Window, WindowId};

/// Frames rendered after loading before the screenshot, for egui's layout to settle.
const SETTLE_FRAMES: u64 = 4;

struct Running {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    app: App,
    egui: egui_winit::State,
    next_repaint: Option<Instant>,
    frames_loaded: u64,
}

struct Runner {
    /// The live view's link, taken when the window opens (`None`: a session file).
    live: Option<crate::live::LiveLink>,
    session: PathBuf,
    opts: ViewOptions,
    shot: Option<PathBuf>,
    running: Option<Running>,
    result: Result<(), VizError>,
}

/// Opens the viewer in a window. With `screenshot_and_exit`, writes a PNG of the window
/// once the session has loaded and closes it.
pub fn open_window(
    session: PathBuf,
    opts: ViewOptions,
    screenshot_and_exit: Option<PathBuf>,
) -> Result<(), VizError> {
    // Any thread: the CLI calls this from main, a test harness from one of its threads.
    let event_loop = EventLoop::builder()
        .with_any_thread(true)
        .build()
        .map_err(|e| VizError::NoDisplay(one_line(&e.to_string())))?;
    let mut runner = Runner {
        live: None,
        session,
        opts,
        shot: screenshot_and_exit,
        running: None,
        result: Ok(()),
    };
    event_loop
        .run_app(&mut runner)
        .map_err(|e| VizError::Surface(one_line(&e.to_string())))?;
    if runner.result.is_ok() {
        if let Some(r) = &runner.running {
            if let Some(e) = r.app.load_error() {
                return Err(VizError::Request(e.to_string()));
            }
        }
    }
    runner.result
}

/// Opens the live viewer in a window on `link`'s stream; returns when the window closes.
pub fn open_live_window(link: crate::live::LiveLink, opts: ViewOptions) -> Result<(), VizError> {
    let event_loop = EventLoop::builder()
        .with_any_thread(true)
        .build()
        .map_err(|e| VizError::NoDisplay(one_line(&e.to_string())))?;
    let mut runner = Runner {
        session: link.save_to.clone(),
        live: Some(link),
        opts,
        shot: None,
        running: None,
        result: Ok(()),
    };
    event_loop
        .run_app(&mut runner)
        .map_err(|e| VizError::Surface(one_line(&e.to_string())))?;
    runner.result
}

fn pick_format(caps: &wgpu::SurfaceCapabilities) -> Option<wgpu::TextureFormat> {
    // egui wants a gamma-space target; the viewer's passes write gamma-space bytes.
    [
        wgpu::TextureFormat::Rgba8Unorm,
        wgpu::TextureFormat::Bgra8Unorm,
    ]
    .into_iter()
    .find(|f| caps.formats.contains(f))
    .or_else(|| caps.formats.first().copied())
}

impl Runner {
    fn start(&mut self, el: &ActiveEventLoop) -> Result<Running, VizError> {
        let (w, h) = self.opts.size;
        let name = self
            .session
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let attrs = Window::default_attributes()
            .with_title(format!("gpuheat — {name}"))
            .with_inner_size(PhysicalSize::new(w.max(320), h.max(240)));
        let window = Arc::new(
            el.create_window(attrs)
                .map_err(|e| VizError::NoDisplay(one_line(&e.to_string())))?,
        );
        let display = el.owned_display_handle();
        let (gpu, surface) = Gpu::new(
            |backends| {
                wgpu::Instance::new(wgpu::InstanceDescriptor {
                    backends,
                    ..wgpu::InstanceDescriptor::new_with_display_handle(Box::new(display.clone()))
                })
            },
            |instance| instance.create_surface(window.clone()).ok(),
        )?;
        let surface = surface
            .ok_or_else(|| VizError::Surface("the adapter cannot present to this window".into()))?;
        let caps = surface.get_capabilities(&gpu.adapter);
        let format = pick_format(&caps)
            .ok_or_else(|| VizError::Surface("the surface offers no format".into()))?;
        let mut usage = wgpu::TextureUsages::RENDER_ATTACHMENT;
        if caps.usages.contains(wgpu::TextureUsages::COPY_SRC) {
            usage |= wgpu::TextureUsages::COPY_SRC;
        }
        let size = window.inner_size();
        let config = wgpu::SurfaceConfiguration {
            usage,
            format,
            color_space: Default::default(),
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps
                .alpha_modes
                .first()
                .copied()
                .unwrap_or(wgpu::CompositeAlphaMode::Auto),
            view_formats: vec![],
        };
        surface.configure(&gpu.device, &config);
        let max_side = gpu.device.limits().max_texture_dimension_2d as usize;
        let app = match self.live.take() {
            Some(link) => App::new_live(gpu, format, link, self.opts.clone()),
            None => App::new(gpu, format, self.session.clone(), self.opts.clone()),
        };
        let egui = egui_winit::State::new(
            app.ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            window.theme(),
            Some(max_side),
        );
        window.request_redraw();
        Ok(Running {
            window,
            surface,
            config,
            app,
            egui,
            next_repaint: Some(Instant::now()),
            frames_loaded: 0,
        })
    }

    fn redraw(&mut self, el: &ActiveEventLoop) -> Result<(), VizError> {
        let Some(r) = &mut self.running else {
            return Ok(());
        };
        let frame = match r.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t)
            | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                r.surface.configure(&r.app.gpu.device, &r.config);
                r.window.request_redraw();
                return Ok(());
            }
            other => {
                // Timeout or occluded: try again on the next redraw.
                let _ = other;
                r.next_repaint = Some(Instant::now() + Duration::from_millis(16));
                return Ok(());
            }
        };
        let view = frame.texture.create_view(&Default::default());
        let raw = r.egui.take_egui_input(&r.window);
        let ppp = egui_winit::pixels_per_point(&r.app.ctx, &r.window);
        let out = r
            .app
            .frame(raw, &view, [r.config.width, r.config.height], ppp)?;
        r.egui.handle_platform_output(&r.window, out.platform);
        if r.app.ready() {
            r.frames_loaded += 1;
        }
        let mut done = false;
        if let Some(path) = &self.shot {
            if let Some(e) = r.app.load_error().or(r.app.diff_error()) {
                return Err(VizError::Request(e.to_string()));
            }
            if let Some(rej) = &r.app.rejected {
                return Err(VizError::Request(rej.clone()));
            }
            if r.frames_loaded >= SETTLE_FRAMES {
                let size = [r.config.width, r.config.height];
                let rgba = if r.config.usage.contains(wgpu::TextureUsages::COPY_SRC) {
                    read_texture(&r.app.gpu, &frame.texture, [0, 0], size)?
                } else {
                    // The surface cannot be read: render the same frame into a texture.
                    let t = Target::with_format(&r.app.gpu.device, size, "shot", r.config.format);
                    let raw = r.egui.take_egui_input(&r.window);
                    r.app.frame(raw, &t.view, size, ppp)?;
                    read_texture(&r.app.gpu, &t.texture, [0, 0], size)?
                };
                let rgba = to_rgba(rgba, r.config.format);
                write_png(path, size[0], size[1], &rgba)?;
                done = true;
            }
        }
        r.window.pre_present_notify();
        r.app.gpu.queue.present(frame);
        if done {
            el.exit();
            return Ok(());
        }
        r.next_repaint = if self.shot.is_some() {
            Some(Instant::now())
        } else if r.app.is_live() {
            // The stream goes on whether or not the user moves: sixty times a second.
            Some(Instant::now() + crate::app::LIVE_REPAINT)
        } else {
            Instant::now().checked_add(out.repaint_after)
        };
        Ok(())
    }
}

/// BGRA surfaces read back as BGRA: swap to RGBA for the PNG.
fn to_rgba(mut pixels: Vec<u8>, format: wgpu::TextureFormat) -> Vec<u8> {
    if matches!(
        format,
        wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb
    ) {
        for p in pixels.chunks_exact_mut(4) {
            p.swap(0, 2);
        }
    }
    pixels
}

impl ApplicationHandler for Runner {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        match self.start(el) {
            Ok(r) => self.running = Some(r),
            Err(e) => {
                self.result = Err(e);
                el.exit();
            }
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(r) = &mut self.running else { return };
        let response = r.egui.on_window_event(&r.window, &event);
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::Resized(size) => {
                r.config.width = size.width.max(1);
                r.config.height = size.height.max(1);
                r.surface.configure(&r.app.gpu.device, &r.config);
                r.window.request_redraw();
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw(el) {
                    self.result = Err(e);
                    el.exit();
                }
                return;
            }
            _ => {}
        }
        if response.repaint {
            r.window.request_redraw();
        }
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        let Some(r) = &mut self.running else { return };
        match r.next_repaint {
            Some(t) if t <= Instant::now() => {
                r.next_repaint = None;
                r.window.request_redraw();
                el.set_control_flow(ControlFlow::Wait);
            }
            Some(t) => el.set_control_flow(ControlFlow::WaitUntil(t)),
            None => el.set_control_flow(ControlFlow::Wait),
        }
    }
}
