//! How the viewer feels on a large session, measured offscreen: time to the first UI frame,
//! UI frame times while the session loads in the background, and frame times on the 3D and
//! Heat tabs once it has.

use crate::app::{App, LOADING_REPAINT};
use crate::error::VizError;
use crate::gpu::{Gpu, Target, COLOUR_FORMAT};
use crate::options::{Cost, Tab, ViewOptions};
use crate::shot::raw_input;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Frames timed on each tab after loading.
const TIMED_FRAMES: usize = 30;
/// The shortest pause between UI frames while loading (a 60 Hz display); otherwise frames
/// come as the viewer asks for them (it repaints its progress a few times a second).
const MIN_FRAME_PERIOD: Duration = Duration::from_micros(16_667);

/// What [`measure`] found. Frame times include waiting for the GPU to finish the frame.
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    /// From the call to the first UI frame rendered (before the session has loaded).
    pub first_paint_ms: f64,
    /// From the start of loading (read, analysis, checklist, index) to the viewer having it.
    pub load_ms: f64,
    /// UI frames rendered while loading.
    pub loading_frames: usize,
    /// The slowest of them.
    pub loading_frame_ms_max: f64,
    /// Their median.
    pub loading_frame_ms_median: f64,
    /// The first 3D frame, which builds and uploads the frame's mesh.
    pub mesh_first_frame_ms: f64,
    /// 3D frames while the camera orbits: every triangle is drawn again each frame.
    pub mesh_frame_ms_median: f64,
    /// Their 95th percentile.
    pub mesh_frame_ms_p95: f64,
    /// 3D frames with the camera still: the view is not redrawn, only the UI.
    pub mesh_idle_frame_ms_median: f64,
    /// The first Heat frame (uploads the map).
    pub heat_first_frame_ms: f64,
    /// Later Heat frames: median.
    pub heat_frame_ms_median: f64,
    /// Later Heat frames: 95th percentile.
    pub heat_frame_ms_p95: f64,
    /// Computing one frame's cost flow (`gpuheat_analysis::measure::flow::frame_flow`), which the
    /// viewer does once per frame change on frames with offscreen targets: median over up to
    /// [`SWITCHES`] such frames; 0 without any.
    pub flow_ms_median: f64,
    /// Its spread: the median absolute deviation.
    pub flow_ms_mad: f64,
    /// Heat-tab UI frames right after a frame change (the flow, the shown map, the selector's
    /// thumbnails made and uploaded): median over up to [`SWITCHES`] changes.
    pub frame_switch_ms_median: f64,
    /// Their median absolute deviation.
    pub frame_switch_ms_mad: f64,
    /// Heat-tab UI frames right after switching between own and total cost.
    pub cost_switch_ms_median: f64,
    /// Render targets (screens and offscreen) of the last frame shown.
    pub targets: usize,
    /// Frames in the session.
    pub frames: usize,
    /// Work calls of every frame of the session.
    pub draws: usize,
    /// Triangles of the frame shown on the 3D tab.
    pub triangles: u64,
    /// The wgpu adapter rendered on, e.g. `llvmpipe (LLVM 19.1.7, 256 bits)`.
    pub adapter: String,
}

fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let i = ((s.len() - 1) as f64 * p).round() as usize;
    s[i]
}

/// Frame and cost switches timed.
pub const SWITCHES: usize = 10;

/// Median absolute deviation.
fn mad(v: &[f64]) -> f64 {
    let m = percentile(v, 0.5);
    let d: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    percentile(&d, 0.5)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Opens `session` offscreen at `opts.size` and times the UI (see [`Measurements`]).
pub fn measure(session: PathBuf, opts: ViewOptions) -> Result<Measurements, VizError> {
    let start = Instant::now();
    let size = [opts.size.0.max(64), opts.size.1.max(64)];
    let gpu = Gpu::headless()?;
    let mut app = App::new(gpu, COLOUR_FORMAT, session, opts);
    let target = Target::new(&app.gpu.device, size, "screen");
    let mut m = Measurements {
        adapter: app.gpu.describe(),
        ..Default::default()
    };
    let mut time = 0.0;
    let mut frame = |app: &mut App| -> Result<(f64, Duration), VizError> {
        let t = Instant::now();
        time += 1.0 / 60.0;
        let out = app.frame(raw_input(time), &target.view, size, 1.0)?;
        app.gpu.wait();
        Ok((ms(t.elapsed()), out.repaint_after))
    };
    let mut loading = Vec::new();
    loop {
        let t = Instant::now();
        let was_loading = app.loaded().is_none();
        let (f, after) = frame(&mut app)?;
        if loading.is_empty() && m.first_paint_ms == 0.0 {
            m.first_paint_ms = ms(start.elapsed());
        }
        if let Some(e) = app.load_error() {
            return Err(VizError::Request(e.to_string()));
        }
        if !was_loading {
            break;
        }
        if app.loaded().is_none() {
            loading.push(f);
        }
        let period = after.clamp(MIN_FRAME_PERIOD, LOADING_REPAINT);
        if let Some(rest) = period.checked_sub(t.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    let l = app.loaded().cloned().expect("loaded: the loop ends there");
    m.load_ms = l.load_ms;
    m.frames = l.frames.len();
    m.draws = l.analysis.draws.len();
    m.loading_frames = loading.len();
    m.loading_frame_ms_max = loading.iter().copied().fold(0.0, f64::max);
    m.loading_frame_ms_median = percentile(&loading, 0.5);

    app.state.tab = Tab::Mesh;
    m.mesh_first_frame_ms = frame(&mut app)?.0;
    let mut times = Vec::with_capacity(TIMED_FRAMES);
    for _ in 0..TIMED_FRAMES {
        // A moving camera: each frame really redraws every triangle.
        app.state.mesh_camera.drag(4.0, 0.0);
        times.push(frame(&mut app)?.0);
    }
    m.mesh_frame_ms_median = percentile(&times, 0.5);
    m.mesh_frame_ms_p95 = percentile(&times, 0.95);
    times.clear();
    for _ in 0..TIMED_FRAMES {
        times.push(frame(&mut app)?.0);
    }
    m.mesh_idle_frame_ms_median = percentile(&times, 0.5);
    if let Some(entry) = app.state.frame.and_then(|f| l.frame(f)) {
        m.triangles = entry
            .geometry
            .map(|i| &l.session.geometry[i])
            .map_or(0, |g| {
                g.draws
                    .iter()
                    .filter(|d| d.primitive == 4)
                    .map(|d| d.positions.len() as u64 / 3)
                    .sum()
            });
    }

    app.state.tab = Tab::Heat;
    m.heat_first_frame_ms = frame(&mut app)?.0;
    times.clear();
    for i in 0..TIMED_FRAMES {
        app.state.heat_view.fit = false;
        app.state.heat_view.zoom *= if i % 2 == 0 { 1.05 } else { 1.0 / 1.05 };
        times.push(frame(&mut app)?.0);
    }
    m.heat_frame_ms_median = percentile(&times, 0.5);
    m.heat_frame_ms_p95 = percentile(&times, 0.95);

    // Render targets: the flow alone, then whole UI frames after a frame or cost change.
    let with_targets: Vec<u64> = l
        .frames
        .iter()
        .filter(|f| f.targets)
        .map(|f| f.index)
        .take(SWITCHES)
        .collect();
    let mut flows = Vec::new();
    for &f in &with_targets {
        let t = Instant::now();
        let ff = gpuheat_analysis::measure::flow::frame_flow_labelled(&l.session, f, &l.labels);
        flows.push(ms(t.elapsed()));
        m.targets = ff.map_or(0, |ff| ff.targets.len());
    }
    m.flow_ms_median = percentile(&flows, 0.5);
    m.flow_ms_mad = mad(&flows);
    let frames: Vec<u64> = if with_targets.len() >= 2 {
        with_targets
    } else {
        l.frames.iter().map(|f| f.index).take(SWITCHES).collect()
    };
    if frames.len() >= 2 {
        times.clear();
        for k in 0..SWITCHES {
            app.state.set_frame(frames[k % frames.len()]);
            times.push(frame(&mut app)?.0);
        }
        m.frame_switch_ms_median = percentile(&times, 0.5);
        m.frame_switch_ms_mad = mad(&times);
    }
    times.clear();
    for k in 0..SWITCHES {
        let cost = if k % 2 == 0 { Cost::Own } else { Cost::Total };
        app.state.show_target(app.state.target, Some(cost));
        times.push(frame(&mut app)?.0);
    }
    m.cost_switch_ms_median = percentile(&times, 0.5);
    Ok(m)
}
