//! One viewer: the egui context and renderer, the background load, the user's state and the
//! GPU passes, and the frame loop they share (window or offscreen): run the UI, bring the
//! passes up to date with the state, render the current view into its texture, then egui
//! over everything into the output target.

use crate::diff::{row_at, DiffData, DiffImages, DiffLoader, DiffState};
use crate::error::VizError;
use crate::gpu::{colour_attachment, DepthIds, Gpu, Target, BACKGROUND};
use crate::heat_pass::{HeatParams, HeatPass, Outline};
use crate::live::{Live, LiveLink};
use crate::load::{LoadState, Loaded, Loader, Stage};
use crate::mesh_pass::{mesh_data, MeshParams, MeshPass};
use crate::metric::{normalize, Metric};
use crate::options::{Cost, Quantity, Tab, ViewOptions};
use crate::state::UiState;
use crate::surface_pass::{grid, Grid, SurfacePass};
use crate::targets::{self, ShownMap, Thumbnails};
use crate::ui::{self, MeshInfo, Symbols};
use gpuheat_analysis::measure::flow::{self, FrameFlowCost, TargetKey};
use gpuheat_analysis::open::Damage;
use gpuheat_analysis::palette::{
    choose_range, map_values, position, Palette, Range, RangeChoice, Scale,
};
use gpuheat_session::HeatMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The central view's textures.
struct View {
    target: Target,
    depth_ids: DepthIds,
    texture: egui::TextureId,
}

/// Which map is shown: the frame, the target asked for (`None`: the screen) and the cost.
type MapKey = (u64, Option<TargetKey>, Cost);

/// The map shown, with what it was made for.
type Current = (MapKey, Arc<ShownMap>);

/// What the passes hold now, to rebuild only what changed.
#[derive(Default)]
struct Shown {
    heat_map: Option<MapKey>,
    quantity: Option<Quantity>,
    palette: Option<Palette>,
    outline: Option<(MapKey, Option<u32>)>,
    mesh_frame: Option<u64>,
    mesh_colours: Option<(u64, Metric, Scale, Palette)>,
    surface: Option<(MapKey, Quantity, Scale, Palette, [u32; 2])>,
    /// What the view target holds when it shows the 3D tab: the camera and pass parameters
    /// it was rendered with. Rendering a million triangles costs a CPU rasterizer hundreds of
    /// milliseconds, so an unchanged 3D view is not rendered again; any mesh, colour or
    /// target change clears it.
    mesh_image: Option<String>,
    /// Likewise for the Heat tab (the parameters it was rendered with): a live view repaints
    /// sixty times a second, and re-rendering an unchanged map each time grew the viewer's
    /// memory on lavapipe by megabytes a second.
    heat_image: Option<String>,
    /// Likewise for the Surface tab (the camera it was rendered with).
    surface_image: Option<String>,
}

/// What a frame of the viewer produced for its host.
pub struct FrameOut {
    pub platform: egui::PlatformOutput,
    /// When egui wants the next frame.
    pub repaint_after: Duration,
}

pub struct App {
    pub gpu: Gpu,
    pub ctx: egui::Context,
    renderer: egui_wgpu::Renderer,
    loader: Loader,
    loaded: Option<Arc<Loaded>>,
    stage: Option<Stage>,
    error: Option<String>,
    pub state: UiState,
    opts: ViewOptions,
    heat: HeatPass,
    mesh: MeshPass,
    surface: SurfacePass,
    view: Option<View>,
    mesh_info: MeshInfo,
    grid: Option<(MapKey, Quantity, Grid)>,
    /// The default range of the shown map (map, quantity, scale), chosen like the PNG's.
    auto_range: Option<(MapKey, Quantity, Scale, Range)>,
    /// The cost flow of one frame (`None` for a frame without offscreen targets): computed
    /// once per frame change, since it walks the frame's draws and maps.
    flow: Option<(u64, Option<Arc<FrameFlowCost>>)>,
    /// The map shown, as asked for (the key) and as resolved.
    shown_map: Option<(MapKey, Option<Arc<ShownMap>>)>,
    /// The render-target selector's thumbnails.
    thumbs: Option<Thumbnails>,
    /// What [`UiState::flow_pick`] was computed for: map, resolved target, pixel.
    flow_pick_key: Option<(MapKey, Option<TargetKey>, (u32, u32))>,
    shown: Shown,
    symbols: Symbols,
    adapter: String,
    /// UI frames rendered so far.
    pub frames: u64,
    /// Requests in the options that the session cannot satisfy.
    pub rejected: Option<String>,
    /// Session B's load and comparison (diff mode).
    diff: Option<DiffLoader>,
    /// The comparison, once made.
    diff_data: Option<Arc<DiffData>>,
    /// Why there is no comparison yet (loading) or at all (B unreadable).
    diff_status: Option<String>,
    diff_images: Option<DiffImages>,
    /// B could not be read: nothing more will come.
    diff_failed: bool,
    /// The live view's stream and captures (`view --live`); `None` for a session file.
    live: Option<Live>,
}

impl App {
    /// A viewer rendering into `output_format` targets; starts loading `session` at once.
    pub fn new(
        gpu: Gpu,
        output_format: wgpu::TextureFormat,
        session: PathBuf,
        opts: ViewOptions,
    ) -> App {
        let ctx = egui::Context::default();
        ctx.set_visuals(egui::Visuals::dark());
        let renderer = egui_wgpu::Renderer::new(
            &gpu.device,
            output_format,
            egui_wgpu::RendererOptions {
                // Exact colours: a palette colour reaches the screen as the palette gave it.
                dithering: false,
                ..Default::default()
            },
        );
        let heat = HeatPass::new(&gpu);
        let mesh = MeshPass::new(&gpu);
        let surface = SurfacePass::new(&gpu);
        let adapter = gpu.describe();
        App {
            loader: Loader::start(session, Damage::partial(opts.partial)),
            diff: opts
                .diff
                .clone()
                .map(|b| DiffLoader::start(b, Damage::partial(opts.partial))),
            diff_data: None,
            diff_status: None,
            diff_images: None,
            diff_failed: false,
            loaded: None,
            stage: None,
            error: None,
            state: UiState::new(&opts),
            opts,
            ctx,
            renderer,
            heat,
            mesh,
            surface,
            view: None,
            mesh_info: MeshInfo::default(),
            grid: None,
            auto_range: None,
            flow: None,
            shown_map: None,
            thumbs: None,
            flow_pick_key: None,
            shown: Shown::default(),
            symbols: Symbols::new(),
            adapter,
            frames: 0,
            rejected: None,
            live: None,
            gpu,
        }
    }

    /// A live viewer: `link`'s stream in the live panel, and its captures, once there are
    /// some, in the usual tabs (each capture rewrites the session file, which is reloaded).
    pub fn new_live(
        gpu: Gpu,
        output_format: wgpu::TextureFormat,
        link: LiveLink,
        opts: ViewOptions,
    ) -> App {
        let path = link.save_to.clone();
        let mut app = App::new(gpu, output_format, path, opts);
        // Nothing to load until the first capture.
        app.loader = Loader::idle();
        app.live = Some(Live::new(link));
        app
    }

    /// Whether this viewer is a live view (`view --live`).
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// The live view, in live mode.
    pub fn live(&mut self) -> Option<&mut Live> {
        self.live.as_mut()
    }

    /// Takes in the live stream; after a capture, loads the session it wrote.
    fn poll_live(&mut self) {
        let Some(live) = &mut self.live else {
            return;
        };
        if live.poll() {
            let path = live.save_to().to_path_buf();
            self.loader = Loader::start(path, Damage::partial(false));
            self.loaded = None;
            self.error = None;
            self.stage = None;
            // Every cache is keyed by frame number, and the new session numbers its frames
            // as the old one did.
            self.shown = Shown::default();
            self.flow = None;
            self.shown_map = None;
            self.thumbs = None;
            self.grid = None;
            self.auto_range = None;
            self.flow_pick_key = None;
            self.mesh_info = MeshInfo::default();
        }
        if !live.ended {
            // The stream goes on: keep painting.
            self.ctx.request_repaint_after(LIVE_REPAINT);
        }
    }

    pub fn loaded(&self) -> Option<&Arc<Loaded>> {
        self.loaded.as_ref()
    }

    pub fn load_error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Whether all that was asked for is in: the session and, in diff mode, the comparison
    /// (or why there is none).
    pub fn ready(&self) -> bool {
        self.loaded.is_some()
            && (self.diff.is_none() || self.diff_data.is_some() || self.diff_failed)
    }

    /// Why session B could not be compared (diff mode).
    pub fn diff_error(&self) -> Option<&str> {
        self.diff_status.as_deref().filter(|_| self.diff_failed)
    }

    /// Waits for the session (offscreen use).
    pub fn wait_loaded(&mut self) -> Result<(), VizError> {
        let a = self.loader.wait().map_err(VizError::Request)?;
        self.poll();
        if let Some(d) = &mut self.diff {
            let data = d.wait(&a).map_err(VizError::Request)?;
            self.diff_ready(data);
        }
        Ok(())
    }

    /// Takes in the finished comparison and resolves the options that refer to it.
    fn diff_ready(&mut self, data: Arc<DiffData>) {
        if self.diff_data.is_some() {
            return;
        }
        self.diff_status = None;
        let s = &mut self.state;
        let in_b = self.opts.select_in_b;
        if let (Some(call), Some(frame)) = (self.opts.select_draw, s.frame) {
            let frame = if in_b {
                data.b_frame(Some(frame))
            } else {
                Some(frame)
            };
            let row = frame.and_then(|f| {
                if in_b {
                    data.row_of_b(data.diff.b.stats.find(f, call)?)
                } else {
                    data.row_of_a(data.diff.a.stats.find(f, call)?)
                }
            });
            match row {
                Some(r) => s.select_row(&data, r),
                None if in_b => {
                    let text = format!(
                        "B's frame {} has no draw {call}",
                        frame.map_or("–".into(), |f| f.to_string())
                    );
                    s.notice = Some(text.clone());
                    self.rejected = Some(text);
                }
                // A's draw was checked against A's frame already.
                None => {}
            }
        } else if let (Some((x, y)), Some(frame), Some(a)) = (self.opts.pick, s.frame, &self.loaded)
        {
            // A picked pixel of A selects, as a click on A's map does, the draw with the most
            // heat there and its match.
            if let Some(r) = row_at(&data, a, false, frame, x, y) {
                s.select_row(&data, r);
            }
        }
        self.diff_data = Some(data);
    }

    fn poll(&mut self) {
        if self.loaded.is_some() || self.error.is_some() {
            self.poll_diff();
            return;
        }
        match self.loader.poll() {
            LoadState::Loading(s) => self.stage = Some(s),
            LoadState::Failed(e) => self.error = Some(e),
            LoadState::Ready(l) => {
                self.apply_options(&l);
                self.loaded = Some(l);
            }
        }
        self.poll_diff();
    }

    fn poll_diff(&mut self) {
        if self.diff_data.is_some() {
            return;
        }
        let Some(d) = &mut self.diff else { return };
        match d.poll(self.loaded.as_ref()) {
            DiffState::Loading(s) => self.diff_status = Some(s.into()),
            DiffState::Failed(e) => {
                self.diff_status = Some(format!("cannot compare: {e}"));
                self.diff_failed = true;
            }
            DiffState::Ready(data) => self.diff_ready(data),
        }
    }

    /// Turns the options into state now that the session is known; what it cannot honour
    /// is kept in [`App::rejected`] and shown.
    fn apply_options(&mut self, l: &Loaded) {
        let s = &mut self.state;
        s.metric = l.ranked_by.clone();
        let mut rejected = Vec::new();
        match self.opts.frame {
            Some(f) if l.frame(f).is_some() => s.frame = Some(f),
            Some(f) => {
                let first = l.frames.first().map(|e| e.index);
                let last = l.frames.last().map(|e| e.index);
                rejected.push(match (first, last) {
                    (Some(a), Some(b)) => format!("no frame {f} (frames {a}–{b})"),
                    _ => format!("no frame {f}: the session has no frames"),
                });
                s.frame = l.default_frame();
            }
            None => s.frame = l.default_frame(),
        }
        if let (Some(call), Some(frame), false) =
            (self.opts.select_draw, s.frame, self.opts.select_in_b)
        {
            if l.draw(frame, call).is_none() {
                let calls: Vec<String> = l
                    .frame(frame)
                    .map(|f| {
                        f.draws
                            .iter()
                            .take(20)
                            .map(|&i| l.analysis.draws[i].call.to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                rejected.push(format!(
                    "frame {frame} has no draw {call}; its work calls: {}",
                    if calls.is_empty() {
                        "none".into()
                    } else {
                        calls.join(", ")
                    }
                ));
                s.selected = None;
            }
        }
        let mut offscreen = None;
        if let (Some(name), Some(frame)) = (self.opts.target.as_deref(), s.frame) {
            let name = name.trim();
            let flow = l
                .frame(frame)
                .filter(|e| e.targets)
                .and_then(|_| flow::frame_flow_labelled(&l.session, frame, &l.labels));
            match &flow {
                Some(ff) => match ff.find(name) {
                    Ok(t) => {
                        s.target = Some(t.key).filter(|k| !k.is_screen());
                        offscreen = s.target.map(|_| (t.label.clone(), t.width, t.height));
                    }
                    Err(e) => rejected.push(e),
                },
                None if name == "screen" => {}
                None => {
                    let with: Vec<String> = l
                        .frames
                        .iter()
                        .filter(|f| f.targets)
                        .map(|f| f.index.to_string())
                        .collect();
                    rejected.push(format!(
                        "frame {frame} has no offscreen render target maps (target {name}); frames with them: {}",
                        if with.is_empty() {
                            "none".into()
                        } else {
                            with.join(", ")
                        }
                    ));
                }
            }
            self.flow = Some((frame, flow.map(Arc::new)));
        }
        if let (Some((x, y)), Some(frame), Some((name, w, h))) =
            (self.opts.pick, s.frame, &offscreen)
        {
            // A pixel of an offscreen target: no draw ranking (that needs the screen's
            // geometry); its upstream passes come from the flow.
            if x >= *w || y >= *h {
                rejected.push(format!(
                    "cannot pick pixel {x},{y} of target {name} of frame {frame}: it is {w}x{h}"
                ));
                s.pick = None;
            }
        } else if let (Some((x, y)), Some(frame)) = (self.opts.pick, s.frame) {
            s.pick_result = gpuheat_analysis::measure::pick::pick(&l.session, frame, x, y);
            if s.pick_result.is_none() {
                let size = l
                    .frame(frame)
                    .and_then(|f| f.heat)
                    .map(|i| &l.session.heat[i])
                    .map(|m| format!("its heat map is {}x{}", m.width, m.height));
                rejected.push(format!(
                    "cannot pick pixel {x},{y} of frame {frame}: {}",
                    size.unwrap_or_else(|| "it has no heat map".into())
                ));
                s.pick = None;
            }
        }
        if !rejected.is_empty() {
            let text = rejected.join("; ");
            s.notice = Some(text.clone());
            self.rejected = Some(text);
        }
    }

    /// The session, the frame shown, and the map shown (the chosen target and cost) with
    /// what it was made for; [`App::update_shown`] keeps it current.
    fn current_map(&self) -> Option<(Arc<Loaded>, u64, Option<Current>)> {
        let l = self.loaded.clone()?;
        let f = l.frame(self.state.frame?)?.index;
        let shown = self
            .shown_map
            .as_ref()
            .filter(|(k, _)| k.0 == f)
            .and_then(|(k, m)| Some((*k, m.clone()?)));
        Some((l, f, shown))
    }

    /// Brings the frame's cost flow, the shown map, the flow pick and the selector's
    /// thumbnails up to date with the state; each is remade only when what it depends on
    /// changed.
    fn update_shown(&mut self) {
        let Some(l) = self.loaded.clone() else { return };
        let Some(entry) = self.state.frame.and_then(|f| l.frame(f)) else {
            return;
        };
        let frame = entry.index;
        if self.flow.as_ref().map(|f| f.0) != Some(frame) {
            let ff = entry
                .targets
                .then(|| flow::frame_flow_labelled(&l.session, frame, &l.labels))
                .flatten()
                .map(Arc::new);
            self.flow = Some((frame, ff));
        }
        let ff = self.flow.as_ref().and_then(|f| f.1.clone());
        let s = &mut self.state;
        let cost = Cost::resolve(s.cost, entry);
        let key: MapKey = (frame, s.target, cost);
        if self.shown_map.as_ref().map(|m| m.0) != Some(key) {
            let m = targets::shown_map(&l, entry, ff.as_deref(), s.target, cost);
            self.shown_map = Some((key, m.map(Arc::new)));
        }
        let resolved = self
            .shown_map
            .as_ref()
            .and_then(|m| m.1.as_ref())
            .and_then(|m| m.key);
        let pick_key = s.pick.map(|p| (key, resolved, p));
        if pick_key != self.flow_pick_key {
            s.flow_pick = match (pick_key, &ff) {
                (Some((_, Some(k), (x, y))), Some(ff)) => ff.pick(k, x, y),
                _ => None,
            };
            self.flow_pick_key = pick_key;
            self.ctx.request_repaint();
        }
        let wants_thumbs = matches!(s.tab, Tab::Heat | Tab::Surface);
        match &ff {
            Some(ff) if wants_thumbs => {
                let tkey = (frame, cost, s.quantity, s.palette, s.scale);
                if self.thumbs.as_ref().map(|t| t.key) != Some(tkey) {
                    self.thumbs = Some(Thumbnails::make(&self.ctx, &l, entry, ff, tkey));
                }
            }
            Some(_) => {}
            None => self.thumbs = None,
        }
    }

    /// What the Heat tab's caption says of the map shown: which map, then its notes.
    pub fn caption(&self) -> Vec<String> {
        let Some((_, _, Some((_, m)))) = self.current_map() else {
            return Vec::new();
        };
        let q = self.state.quantity;
        m.title(q).into_iter().chain(m.notes(q)).collect()
    }

    /// The shown map's default range: from the distribution of its pixels, clipping a few
    /// outliers on a linear scale (`palette::choose_range`, as `gpuheat heatmap` does),
    /// whichever target and cost it shows.
    fn auto_range(&mut self) -> Option<Range> {
        let (_, _, Some((key, shown))) = self.current_map()? else {
            return None;
        };
        let (q, scale) = (self.state.quantity, self.state.scale);
        if let Some((k, qq, sc, r)) = self.auto_range {
            if k == key && qq == q && sc == scale {
                return Some(r);
            }
        }
        let values = map_values(&shown.map, q == Quantity::Overdraw);
        let android = self.state.palette == Palette::Android && q == Quantity::Overdraw;
        let choice = if android {
            RangeChoice::Max
        } else {
            RangeChoice::Auto
        };
        let r = choose_range(&values, choice, scale);
        self.auto_range = Some((key, q, scale, r));
        Some(r)
    }

    /// One UI frame into `target` (`size` pixels, `ppp` pixels per point).
    pub fn frame(
        &mut self,
        mut raw: egui::RawInput,
        target: &wgpu::TextureView,
        size: [u32; 2],
        ppp: f32,
    ) -> Result<FrameOut, VizError> {
        self.poll_live();
        self.poll();
        raw.screen_rect = Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(size[0] as f32, size[1] as f32) / ppp,
        ));
        raw.viewports
            .entry(egui::ViewportId::ROOT)
            .or_default()
            .native_pixels_per_point = Some(ppp);
        self.update_shown();
        let auto = self.auto_range();
        let auto_range = auto.map_or((0.0, 1.0), |r| (0.0, r.hi as f32));
        self.sync_diff_images();
        let loaded = self.loaded.clone();
        let shown = self.current_map().and_then(|(_, _, m)| m).map(|(_, m)| m);
        let diff = self.diff.as_ref().map(|_| ui::DiffView {
            data: self.diff_data.as_deref(),
            status: self.diff_status.as_deref(),
            images: self.diff_images.as_ref(),
        });
        let mut cx = ui::Context {
            loaded: loaded.as_deref(),
            stage: self.stage.as_ref(),
            error: self.error.as_deref(),
            view: self.view.as_ref().map(|v| (v.texture, v.target.size)),
            mesh: &self.mesh_info,
            symbols: &mut self.symbols,
            adapter: &self.adapter,
            auto_range,
            auto: auto.filter(|_| self.state.range.is_none()),
            diff,
            shown: shown.as_deref(),
            thumbs: self.thumbs.as_ref(),
            live: self.live.as_mut(),
        };
        let state = &mut self.state;
        let mut output = self.ctx.run_ui(raw, |ui| ui::show(ui, state, &mut cx));
        let mut textures = std::mem::take(&mut output.textures_delta);
        let diff_pending = self.diff.is_some() && self.diff_data.is_none() && !self.diff_failed;
        if (self.loaded.is_none() && self.error.is_none()) || diff_pending {
            // Progress a few times a second: on a CPU rasterizer every frame costs the
            // loading thread time.
            self.ctx.request_repaint_after(LOADING_REPAINT);
        }

        // The UI may have chosen another target or cost.
        self.update_shown();
        self.sync();
        self.ensure_view();
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        self.render_view(&mut encoder, auto_range);
        let device = &self.gpu.device;

        for (id, deltas) in &textures.set {
            for delta in deltas {
                self.renderer
                    .update_texture(device, &self.gpu.queue, *id, delta);
            }
        }
        let jobs = self.ctx.tessellate(output.shapes, output.pixels_per_point);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: size,
            pixels_per_point: output.pixels_per_point,
        };
        let extra =
            self.renderer
                .update_buffers(device, &self.gpu.queue, &mut encoder, &jobs, &screen);
        {
            let mut pass = encoder
                .begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("egui"),
                    color_attachments: &[colour_attachment(
                        target,
                        wgpu::LoadOp::Clear(BACKGROUND),
                    )],
                    ..Default::default()
                })
                .forget_lifetime();
            self.renderer.render(&mut pass, &jobs, &screen);
        }
        self.gpu
            .queue
            .submit(extra.into_iter().chain([encoder.finish()]));
        for id in &textures.free {
            self.renderer.free_texture(id);
        }
        textures.clear();
        if let Some([x, y]) = self.state.id_click.take() {
            self.pick_mesh(x, y);
        }
        self.frames += 1;
        // Frees what finished frames used (egui's buffers, the passes' uploads).
        let _ = self.gpu.device.poll(wgpu::PollType::Poll);
        self.gpu.check()?;
        let repaint_after = output
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(Duration::MAX, |v| v.repaint_delay);
        Ok(FrameOut {
            platform: output.platform_output,
            repaint_after,
        })
    }

    /// Selects the draw under view pixel (`x`, `y`) of the 3D view, from the ID target.
    fn pick_mesh(&mut self, x: u32, y: u32) {
        if self.state.tab != Tab::Mesh {
            return;
        }
        let Some(v) = &self.view else { return };
        match v.depth_ids.read(&self.gpu, x, y) {
            Some(0) => self.state.select(None),
            Some(slot) => {
                let call = self.mesh_info.draws.get(slot as usize - 1).map(|d| d.call);
                self.state.select(call);
            }
            None => {}
        }
        self.ctx.request_repaint();
    }

    /// The ID target of the last 3D frame (slot + 1 per view pixel, rows top first) mapped
    /// to call indices (`u32::MAX`: nothing), and its size.
    pub fn read_ids(&self) -> Option<(Vec<u32>, [u32; 2])> {
        let v = self.view.as_ref()?;
        let slots = v.depth_ids.read_all(&self.gpu)?;
        let calls = slots
            .into_iter()
            .map(|s| match s {
                0 => u32::MAX,
                s => self
                    .mesh_info
                    .draws
                    .get(s as usize - 1)
                    .map_or(u32::MAX, |d| d.call),
            })
            .collect();
        Some((calls, v.depth_ids.size))
    }

    fn ensure_view(&mut self) {
        let size = self.state.view_px;
        if self.view.as_ref().is_some_and(|v| v.target.size == size) {
            return;
        }
        let device = &self.gpu.device;
        let target = Target::new(device, size, "view");
        let depth_ids = DepthIds::new(device, target.size);
        let texture = match &self.view {
            Some(v) => {
                self.renderer.update_egui_texture_from_wgpu_texture(
                    device,
                    &target.view,
                    wgpu::FilterMode::Nearest,
                    v.texture,
                );
                v.texture
            }
            None => self.renderer.register_native_texture(
                device,
                &target.view,
                wgpu::FilterMode::Nearest,
            ),
        };
        self.view = Some(View {
            target,
            depth_ids,
            texture,
        });
        self.shown.mesh_image = None;
        self.shown.heat_image = None;
        self.shown.surface_image = None;
    }

    /// Brings the passes up to date with the state; heavy work only when its inputs changed.
    fn sync(&mut self) {
        let Some((l, frame, shown)) = self.current_map() else {
            return;
        };
        let s = &self.state;
        let key = shown.as_ref().map(|(k, _)| *k);
        let shown = shown.map(|(_, m)| m);
        let map: Option<&HeatMap> = shown.as_ref().map(|m| &m.map);
        if self.shown.heat_map.is_none() || self.shown.heat_map != key {
            match map {
                Some(m) => self.heat.set_map(&self.gpu, m, s.quantity),
                None => self.heat.clear(),
            }
            self.shown.heat_image = None;
            self.shown.heat_map = key;
            self.shown.quantity = Some(s.quantity);
            self.shown.outline = None;
        } else if self.shown.quantity != Some(s.quantity) {
            if let Some(m) = map {
                self.heat.set_quantity(&self.gpu, m, s.quantity);
                self.shown.heat_image = None;
            }
            self.shown.quantity = Some(s.quantity);
        }
        if self.shown.palette != Some(s.palette) {
            self.heat.set_palette(&self.gpu, s.palette);
            self.shown.heat_image = None;
            self.shown.palette = Some(s.palette);
        }
        if let (Some(k), Some(m)) = (key, &shown) {
            if self.shown.outline != Some((k, s.selected)) {
                let outline = if m.is_screen() {
                    outline_for(&l, frame, s.selected)
                } else {
                    // Offscreen draws' geometry is not drawn through the screen's
                    // viewport: their coverage box.
                    draw_box(&m.map, s.selected)
                };
                self.heat.set_outline(&self.gpu, &outline);
                self.shown.heat_image = None;
                self.shown.outline = Some((k, s.selected));
            }
        }
        match s.tab {
            Tab::Mesh => self.sync_mesh(&l, frame),
            Tab::Surface => {
                if let (Some(k), Some(m)) = (key, &shown) {
                    self.sync_surface(&m.map, k);
                }
            }
            Tab::Heat | Tab::Diff => {}
        }
    }

    /// Remakes the Diff tab's images when the frame, palette or scale changed.
    fn sync_diff_images(&mut self) {
        if self.state.tab != Tab::Diff {
            return;
        }
        let (Some(l), Some(d)) = (&self.loaded, &self.diff_data) else {
            return;
        };
        let s = &self.state;
        let key = (s.frame, d.b_frame(s.frame), s.palette, s.scale);
        if self.diff_images.as_ref().is_some_and(|i| i.key == key) {
            return;
        }
        self.diff_images = Some(DiffImages::make(
            &self.ctx, l, d, s.frame, s.palette, s.scale,
        ));
    }

    fn sync_mesh(&mut self, l: &Loaded, frame: u64) {
        let Some(entry) = l.frame(frame) else { return };
        if self.shown.mesh_frame != Some(frame) {
            let extent = entry
                .heat
                .map(|i| &l.session.heat[i])
                .map(|m| [m.width, m.height]);
            let geometry = entry.geometry.map(|i| &l.session.geometry[i]);
            let data = geometry.map(|g| mesh_data(g, extent));
            let draws = l.analysis.frames[entry.stats_pos].draws;
            self.mesh_info = match &data {
                Some(d) => MeshInfo {
                    draws: d.draws.clone(),
                    untriangled: d.untriangled,
                    without_geometry: draws.saturating_sub(d.draws.len()),
                    no_record: false,
                    clipped: d.clipped,
                    range: None,
                },
                None => MeshInfo {
                    without_geometry: draws,
                    no_record: true,
                    ..Default::default()
                },
            };
            match &data {
                Some(d) => self.mesh.set_mesh(&self.gpu, d),
                None => self.mesh.clear(),
            }
            self.shown.mesh_frame = Some(frame);
            self.shown.mesh_colours = None;
            self.shown.mesh_image = None;
        }
        let s = &self.state;
        let key = (frame, s.metric.clone(), s.scale, s.palette);
        if self.shown.mesh_colours.as_ref() != Some(&key) {
            let values: Vec<Option<f64>> = self
                .mesh_info
                .draws
                .iter()
                .map(|d| l.draw(frame, d.call).and_then(|c| s.metric.value(c)))
                .collect();
            let present = values.iter().flatten();
            let lo = present.clone().copied().fold(f64::INFINITY, f64::min);
            let hi = present.copied().fold(f64::NEG_INFINITY, f64::max);
            self.mesh_info.range = (lo <= hi).then_some((lo, hi));
            let colours: Vec<[u8; 3]> = normalize(&values, s.scale)
                .into_iter()
                .map(|t| t.map_or(UNMEASURED, |t| s.palette.colour_at(t)))
                .collect();
            self.mesh.set_colours(&self.gpu, &colours);
            self.shown.mesh_colours = Some(key);
            self.shown.mesh_image = None;
        }
    }

    fn sync_surface(&mut self, map: &HeatMap, frame: MapKey) {
        let s = &self.state;
        let (lo, hi) = s
            .range
            .unwrap_or(self.auto_range.map_or((0.0, 1.0), |a| (0.0, a.3.hi as f32)));
        let key = (
            frame,
            s.quantity,
            s.scale,
            s.palette,
            [lo.to_bits(), hi.to_bits()],
        );
        if self.shown.surface.as_ref() == Some(&key) {
            return;
        }
        if !matches!(&self.grid, Some((f, q, _)) if *f == frame && *q == s.quantity) {
            let values = map_values(map, s.quantity == Quantity::Overdraw);
            self.grid = Some((frame, s.quantity, grid(map, &values)));
        }
        let Some((_, _, g)) = &self.grid else { return };
        let android = s.palette == Palette::Android && s.quantity == Quantity::Overdraw;
        let scale = s.scale;
        self.surface.set_grid(&self.gpu, g, s.palette, |v| {
            position(v, f64::from(lo), f64::from(hi), scale, android)
        });
        self.shown.surface = Some(key);
        self.shown.surface_image = None;
    }

    fn render_view(&mut self, encoder: &mut wgpu::CommandEncoder, auto_range: (f32, f32)) {
        let Some(v) = &self.view else { return };
        let s = &self.state;
        if s.tab != Tab::Mesh {
            self.shown.mesh_image = None;
        }
        if s.tab != Tab::Heat {
            self.shown.heat_image = None;
        }
        if s.tab != Tab::Surface {
            self.shown.surface_image = None;
        }
        let aspect = v.target.size[0] as f32 / v.target.size[1].max(1) as f32;
        match s.tab {
            Tab::Heat if self.heat.has_map() => {
                let (lo, hi) = s.range.unwrap_or(auto_range);
                let params = HeatParams {
                    center: s.heat_view.center,
                    zoom: s.heat_view.zoom,
                    lo,
                    hi,
                    clipped: Some(s.palette.clipped().map(|c| f32::from(c) / 255.0)),
                    log: s.scale == Scale::Log,
                    android_layers: s.palette == Palette::Android
                        && s.quantity == Quantity::Overdraw,
                    alpha: s.alpha,
                    show_frame: s.show_frame,
                };
                let key = format!("{params:?}");
                if self.shown.heat_image.as_deref() == Some(key.as_str()) {
                    return;
                }
                self.heat
                    .render(&self.gpu, encoder, &v.target.view, v.target.size, &params);
                self.shown.heat_image = Some(key);
            }
            Tab::Heat | Tab::Diff => clear(encoder, &v.target.view),
            Tab::Mesh => {
                let selected = s.selected.and_then(|c| {
                    let slot = self.mesh_info.draws.iter().position(|d| d.call == c)?;
                    Some((slot as u32, self.mesh_info.draws[slot].vertices.clone()))
                });
                let params = MeshParams {
                    view_proj: s.mesh_camera.view_proj(aspect),
                    depth_scale: s.depth_scale,
                    explode: s.explode,
                    selected,
                    shade: s.shade,
                };
                let key = format!("{params:?}");
                if self.shown.mesh_image.as_deref() == Some(key.as_str()) {
                    return;
                }
                self.mesh
                    .render(&self.gpu, encoder, &v.target.view, &v.depth_ids, &params);
                self.shown.mesh_image = Some(key);
            }
            Tab::Surface => {
                let view_proj = s.surface_camera.view_proj(aspect);
                let key = format!("{view_proj:?}");
                if self.shown.surface_image.as_deref() == Some(key.as_str()) {
                    return;
                }
                self.surface
                    .render(&self.gpu, encoder, &v.target.view, &v.depth_ids, view_proj);
                self.shown.surface_image = Some(key);
            }
        }
    }
}

/// How often the progress is repainted while the session loads.
pub const LOADING_REPAINT: Duration = Duration::from_millis(250);

/// How often a live view repaints while frames stream in (60 per second).
pub const LIVE_REPAINT: Duration = Duration::from_millis(16);

/// Colour of a draw whose metric was not measured.
const UNMEASURED: [u8; 3] = [96, 96, 104];

/// The selected draw's footprint: its triangles when recorded, else its coverage box.
fn outline_for(l: &Loaded, frame: u64, selected: Option<u32>) -> Outline {
    let Some(call) = selected else {
        return Outline::None;
    };
    let Some(entry) = l.frame(frame) else {
        return Outline::None;
    };
    let geometry = entry
        .geometry
        .map(|i| &l.session.geometry[i])
        .and_then(|g| g.draws.iter().find(|d| d.call == call && d.primitive == 4));
    if let Some(g) = geometry {
        if !g.positions.is_empty() {
            return Outline::Triangles {
                positions: g.positions.clone(),
                viewport: g.viewport,
            };
        }
    }
    match entry.heat {
        Some(i) => draw_box(&l.session.heat[i], selected),
        None => Outline::None,
    }
}

/// The selected draw's coverage box in `map`, when it drew there.
fn draw_box(map: &HeatMap, selected: Option<u32>) -> Outline {
    let coverage = selected.and_then(|call| map.draws.iter().find(|d| d.call == call));
    match coverage {
        Some(c) if c.fragments > 0 => Outline::Box(c.bbox),
        _ => Outline::None,
    }
}

fn clear(encoder: &mut wgpu::CommandEncoder, view: &wgpu::TextureView) {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("clear"),
        color_attachments: &[colour_attachment(view, wgpu::LoadOp::Clear(BACKGROUND))],
        ..Default::default()
    });
}
