//! Offscreen rendering of the whole viewer (no window, no display) and PNG writing.

use crate::app::App;
use crate::error::VizError;
use crate::gpu::{read_texture, Gpu, Target, COLOUR_FORMAT};
use crate::options::{Tab, ViewOptions};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// UI frames rendered before the image is taken: egui settles its layout (fonts, table
/// column widths, panel sizes) over the first few.
const SETTLE_FRAMES: u32 = 4;

/// One offscreen image of the viewer.
pub struct Shot {
    /// Width of the image in pixels.
    pub width: u32,
    /// Height of the image in pixels.
    pub height: u32,
    /// RGBA8, rows top first.
    pub rgba: Vec<u8>,
    /// The central view in the image: x, y, width, height (pixels).
    pub view: [u32; 4],
    /// On the 3D tab: the call index of the draw at each pixel of the central view (rows top
    /// first, `view[2]` × `view[3]`), `u32::MAX` where there is none.
    pub ids: Option<Vec<u32>>,
    /// The adapter that rendered it, e.g. `Vulkan: llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub adapter: String,
    /// What the Heat tab's caption says of the map shown (which target, own or total cost,
    /// then how upstream cost was spread); empty for a frame without offscreen targets.
    pub caption: Vec<String>,
    /// The picked pixel's total cost by upstream pass, as the inspector lists it (frames
    /// with offscreen targets).
    pub upstream: Option<gpuheat_analysis::measure::flow::PixelFlow>,
    /// The render-target selector's thumbnails, left to right: each target's name and where
    /// its thumbnail is in the image (x, y, width, height); empty without offscreen targets.
    pub thumbnails: Vec<(String, [u32; 4])>,
}

/// A raw egui input for an offscreen frame at `time` seconds.
pub(crate) fn raw_input(time: f64) -> egui::RawInput {
    egui::RawInput {
        time: Some(time),
        predicted_dt: 1.0 / 60.0,
        focused: true,
        ..Default::default()
    }
}

/// Renders the viewer for `session` as `opts` says into memory, after the session loaded.
pub fn render_offscreen(session: PathBuf, opts: ViewOptions) -> Result<Shot, VizError> {
    let size = [opts.size.0.max(64), opts.size.1.max(64)];
    let gpu = Gpu::headless()?;
    let limit = gpu.device.limits().max_texture_dimension_2d;
    if size[0] > limit || size[1] > limit {
        return Err(VizError::Request(format!(
            "image size {}x{} exceeds the adapter's limit of {limit}",
            size[0], size[1]
        )));
    }
    let tab = opts.tab;
    let mut app = App::new(gpu, COLOUR_FORMAT, session, opts);
    app.wait_loaded()?;
    if let Some(r) = &app.rejected {
        return Err(VizError::Request(r.clone()));
    }
    let target = Target::new(&app.gpu.device, size, "screen");
    for i in 0..SETTLE_FRAMES {
        app.frame(raw_input(f64::from(i) / 60.0), &target.view, size, 1.0)?;
    }
    let rgba = read_texture(&app.gpu, &target.texture, [0, 0], size)?;
    let ids = if tab == Tab::Mesh {
        app.read_ids().map(|(ids, _)| ids)
    } else {
        None
    };
    let caption = app.caption();
    let upstream = app.state.flow_pick.clone();
    let thumbnails = app.state.thumb_rects.clone();
    let [vw, vh] = app.state.view_px;
    let [vx, vy] = app.state.view_at;
    Ok(Shot {
        width: size[0],
        height: size[1],
        rgba,
        view: [vx, vy, vw, vh],
        ids,
        adapter: app.gpu.describe(),
        caption,
        upstream,
        thumbnails,
    })
}

/// What a live screenshot waits for (`view --live PID --screenshot`): the stream for
/// `seconds`, and with `capture` a capture of that many frames asked at a third of it,
/// shown in the usual tabs once loaded.
#[derive(Debug, Clone, Copy)]
pub struct LiveShot {
    /// How long the stream is watched before the image is taken.
    pub seconds: f64,
    /// Frames a capture asks for (`None`: no capture), and whether with heat.
    pub capture: Option<(u32, bool)>,
}

/// Longest a live screenshot waits past its `seconds` for its capture to load.
const LIVE_SHOT_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// Renders the live viewer offscreen: `link`'s stream for `plan.seconds` (a UI frame every
/// 16 ms, as the window paints), a capture if asked, then writes the image to `out`.
/// Returns a line on what it showed (frames received, the capture's frames).
pub fn live_screenshot(
    link: crate::live::LiveLink,
    opts: ViewOptions,
    plan: LiveShot,
    out: &Path,
) -> Result<String, VizError> {
    let size = [opts.size.0.max(64), opts.size.1.max(64)];
    let gpu = Gpu::headless()?;
    let mut app = App::new_live(gpu, COLOUR_FORMAT, link, opts);
    let target = Target::new(&app.gpu.device, size, "screen");
    let start = std::time::Instant::now();
    let capture_at = plan.seconds / 3.0;
    let mut asked = false;
    let mut settled = 0;
    // Each UI frame's time (taking in the stream, the panels, rendering): the live view must
    // keep up with 60 per second.
    let mut ui_ms: Vec<f64> = Vec::new();
    loop {
        let t = start.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        app.frame(raw_input(t), &target.view, size, 1.0)?;
        // Offscreen nothing waits for the GPU as a window's present does: without it a UI
        // frame submitted faster than a CPU rasterizer draws it queued up (the heat view on
        // lavapipe: 8-10 MB a second, without end).
        app.gpu.wait();
        ui_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        if let (Some((frames, heat)), false) = (plan.capture, asked) {
            if t >= capture_at {
                if let Some(live) = app.live() {
                    live.capture(frames, heat);
                }
                asked = true;
            }
        }
        let captured = plan.capture.is_none() || app.loaded().is_some();
        if t >= plan.seconds && captured {
            settled += 1;
            if settled >= SETTLE_FRAMES {
                break;
            }
        }
        if start.elapsed() > std::time::Duration::from_secs_f64(plan.seconds) + LIVE_SHOT_GRACE {
            return Err(VizError::Request(format!(
                "the live view's capture did not arrive within {} s",
                LIVE_SHOT_GRACE.as_secs()
            )));
        }
        if app.live().is_some_and(|l| l.ended) && !captured {
            return Err(VizError::Request(
                "the stream ended before the capture arrived".into(),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(16));
    }
    let rgba = read_texture(&app.gpu, &target.texture, [0, 0], size)?;
    write_png(out, size[0], size[1], &rgba)?;
    let frames = app.loaded().map_or(0, |l| l.frames.len());
    let received = app.live().map_or(0, |l| l.received);
    let missing = app.live().map_or(0, |l| l.missing);
    ui_ms.sort_by(f64::total_cmp);
    let q = |p: f64| ui_ms[((ui_ms.len() - 1) as f64 * p).round() as usize];
    Ok(format!(
        "{received} frames streamed ({missing} missing), {frames} captured frames shown; {} UI frames, median {:.1} ms (p95 {:.1})",
        ui_ms.len(),
        q(0.5),
        q(0.95)
    ))
}

/// Renders the viewer offscreen and writes it to `out` as a PNG.
pub fn screenshot(session: PathBuf, opts: ViewOptions, out: &Path) -> Result<(), VizError> {
    let shot = render_offscreen(session, opts)?;
    write_png(out, shot.width, shot.height, &shot.rgba)
}

/// Writes RGBA8 rows (top first) as an RGB PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), VizError> {
    let fail = |reason: String| VizError::Write {
        path: path.to_path_buf(),
        reason,
    };
    let file = File::create(path).map_err(|e| fail(e.to_string()))?;
    let mut out = BufWriter::new(file);
    let rgb: Vec<u8> = rgba
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| fail(e.to_string()))?;
    writer
        .write_image_data(&rgb)
        .map_err(|e| fail(e.to_string()))?;
    writer.finish().map_err(|e| fail(e.to_string()))?;
    out.flush().map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_testkit::{texture_target, write, Scratch, SessionBuilder};

    /// Runs one offscreen UI frame with `events`.
    fn frame(
        app: &mut App,
        target: &Target,
        size: [u32; 2],
        t: &mut f64,
        events: Vec<egui::Event>,
    ) {
        *t += 1.0 / 60.0;
        let mut raw = raw_input(*t);
        raw.events = events;
        app.frame(raw, &target.view, size, 1.0).unwrap();
    }

    /// A click (real egui pointer events) on a thumbnail of the render-target selector shows
    /// that target's map.
    #[test]
    fn clicking_a_thumbnail_shows_that_target() {
        let dir = Scratch::new("gpuheat-viz", "click-target");
        let s = SessionBuilder::new()
            .frame(|f| {
                f.heat_map(64, 48).target(texture_target(1, 7, 32, 32));
                let pass = f.draw(100_000);
                f.cover_target(pass, 1, [0, 0, 32, 32]);
                let show = f.draw(1_000);
                f.cover(show, [8, 8, 24, 24]).samples(show, &[7]);
            })
            .build();
        let path = dir.join("flow.gpuheat");
        write(&s, &path);

        let size = [1280, 800];
        let gpu = Gpu::headless().unwrap();
        let mut app = App::new(gpu, COLOUR_FORMAT, path, ViewOptions::default());
        app.wait_loaded().unwrap();
        let target = Target::new(&app.gpu.device, size, "screen");
        let mut t = 0.0;
        for _ in 0..SETTLE_FRAMES {
            frame(&mut app, &target, size, &mut t, Vec::new());
        }
        assert_eq!(app.caption()[0], "total cost of screen");
        let (_, [x, y, w, h]) = app
            .state
            .thumb_rects
            .iter()
            .find(|(n, _)| n == "1")
            .cloned()
            .expect("target 1's thumbnail");
        let at = egui::pos2((x + w / 2) as f32, (y + h / 2) as f32);
        let button = |pressed| egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        };
        frame(
            &mut app,
            &target,
            size,
            &mut t,
            vec![egui::Event::PointerMoved(at)],
        );
        frame(&mut app, &target, size, &mut t, vec![button(true)]);
        frame(&mut app, &target, size, &mut t, vec![button(false)]);
        frame(&mut app, &target, size, &mut t, Vec::new());
        assert_eq!(app.state.target.map(|k| k.id), Some(1));
        assert_eq!(
            app.caption(),
            ["total cost of target 1 (32x32) (= own: nothing flows into it)"]
        );
    }
}
