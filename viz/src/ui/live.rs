//! The live panel (`gpuheat view --live PID`): the program's frame times as they stream in
//! (wall, time in GL, GPU), the draws of the last frames by identity with their median and
//! spread, the findings the window raises, the calls of the frame under the cursor, and the
//! Capture and Save buttons. Captured frames open in the usual tabs below it.

use crate::live::{Live, CHART};
use egui::{Color32, Sense, Stroke};

const WALL: Color32 = Color32::from_rgb(230, 230, 230);
const GL: Color32 = Color32::from_rgb(90, 160, 255);
const GPU: Color32 = Color32::from_rgb(255, 150, 40);

/// Frames a Capture button asks for.
pub const CAPTURE_FRAMES: u32 = 3;

pub fn show(ui: &mut egui::Ui, live: &mut Live) {
    let stats = summary(live);
    ui.horizontal(|ui| {
        ui.strong(format!("live: {}", live.title()));
        ui.label(stats);
        if live.ended {
            ui.colored_label(Color32::from_rgb(255, 120, 120), "the stream ended");
        }
        ui.separator();
        let busy = live.capturing() || live.ended;
        if ui
            .add_enabled(
                !busy,
                egui::Button::new(format!("Capture {CAPTURE_FRAMES}")),
            )
            .on_hover_text("the next frames in full mode: per-draw times, counters, geometry")
            .clicked()
        {
            live.capture(CAPTURE_FRAMES, false);
        }
        if ui
            .add_enabled(!busy, egui::Button::new("Capture with heat"))
            .on_hover_text("the same, with each frame's heat map")
            .clicked()
        {
            live.capture(CAPTURE_FRAMES, true);
        }
        if ui
            .button("Save")
            .on_hover_text(format!(
                "the window's frames and the captures, to {}",
                live.save_to().display()
            ))
            .clicked()
        {
            if let Err(e) = live.write(true) {
                live.status = e;
            }
        }
        ui.small(&live.status);
    });
    chart(ui, live);
    ui.columns(2, |cols| {
        table(&mut cols[0], live);
        calls(&mut cols[1], live);
    });
}

/// `120 frames/s, frame 8.3 ms (p95 9.1)`, over the chart's frames.
fn summary(live: &Live) -> String {
    let mut wall: Vec<f64> = live.chart.iter().map(|p| p.wall_ms).collect();
    if wall.is_empty() {
        return "waiting for the first frame".into();
    }
    wall.sort_by(f64::total_cmp);
    let q = |p: f64| wall[((wall.len() - 1) as f64 * p).round() as usize];
    let total: f64 = wall.iter().sum();
    format!(
        "{} frames{}, {:.0} frames/s, frame {:.2} ms (p95 {:.2})",
        live.received,
        if live.missing > 0 {
            format!(" ({} missing)", live.missing)
        } else {
            String::new()
        },
        if total > 0.0 {
            1e3 * wall.len() as f64 / total
        } else {
            0.0
        },
        q(0.5),
        q(0.95)
    )
}

/// The frame-time chart: a line per measure over the last [`CHART`] frames; hovering picks
/// the frame whose calls are listed.
fn chart(ui: &mut egui::Ui, live: &mut Live) {
    let size = egui::vec2(ui.available_width(), 110.0);
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, Color32::from_gray(24));
    let points: Vec<_> = live.chart.iter().copied().collect();
    if points.is_empty() {
        return;
    }
    let mut top: f64 = points
        .iter()
        .map(|p| p.wall_ms.max(p.gl_ms).max(p.gpu_ms.unwrap_or(0.0)))
        .fold(0.0, f64::max);
    // The top is a round number of ms, so the scale does not jitter every frame.
    top = [
        1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 5000.0,
    ]
    .into_iter()
    .find(|&t| t >= top)
    .unwrap_or(top);
    let step = rect.width() / CHART as f32;
    let x_of = |i: usize| rect.left() + (CHART - points.len() + i) as f32 * step;
    let y_of = |ms: f64| rect.bottom() - ((ms / top) as f32).min(1.0) * (rect.height() - 4.0);
    for (colour, value) in [
        (
            WALL,
            &(|p: &crate::live::Point| Some(p.wall_ms)) as &dyn Fn(_) -> Option<f64>,
        ),
        (GL, &|p: &crate::live::Point| Some(p.gl_ms)),
        (GPU, &|p: &crate::live::Point| p.gpu_ms),
    ] {
        let line: Vec<egui::Pos2> = points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some(egui::pos2(x_of(i), y_of(value(p)?))))
            .collect();
        painter.add(egui::Shape::line(line, Stroke::new(1.0, colour)));
    }
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("{top:.0} ms"),
        egui::FontId::monospace(10.0),
        Color32::GRAY,
    );
    for (k, (name, colour)) in [("wall", WALL), ("in GL", GL), ("GPU", GPU)]
        .iter()
        .enumerate()
    {
        painter.text(
            rect.left_top() + egui::vec2(60.0 + 50.0 * k as f32, 2.0),
            egui::Align2::LEFT_TOP,
            *name,
            egui::FontId::monospace(10.0),
            *colour,
        );
    }
    if let Some(pos) = response.hover_pos() {
        let i = ((pos.x - rect.left()) / step) as isize - (CHART - points.len()) as isize;
        if let Some(p) = usize::try_from(i).ok().and_then(|i| points.get(i)) {
            live.cursor = Some(p.index);
        }
    }
    if let Some(c) = live.cursor {
        if let Some(i) = points.iter().position(|p| p.index == c) {
            let x = x_of(i);
            painter.line_segment(
                [egui::pos2(x, rect.top()), egui::pos2(x, rect.bottom())],
                Stroke::new(1.0, Color32::from_gray(140)),
            );
        }
    }
}

/// The draws of the window, costliest median first, and its findings.
fn table(ui: &mut egui::Ui, live: &Live) {
    let Some(t) = live.table() else {
        ui.small("draws over the last frames: waiting for frames");
        return;
    };
    ui.small(format!(
        "draws over the last {} frames, by median pipelined GPU time (±spread)",
        t.frames
    ));
    egui::ScrollArea::vertical()
        .id_salt("live-table")
        .max_height(180.0)
        .show(ui, |ui| {
            egui::Grid::new("live-draws").striped(true).show(ui, |ui| {
                for r in t.rows.iter().take(15) {
                    ui.monospace(format!("{:>9.1} us", r.median_us));
                    ui.monospace(format!("±{:.1}", r.spread_us));
                    ui.monospace(format!("{:>4}", r.frames));
                    ui.label(&r.text)
                        .on_hover_text(r.source.as_deref().unwrap_or("no source line"));
                    ui.end_row();
                }
            });
            for f in &t.findings {
                ui.small(f);
            }
        });
}

/// The calls of the frame under the chart's cursor (the last frame otherwise).
fn calls(ui: &mut egui::Ui, live: &Live) {
    let frame = live.cursor.or(live.chart.back().map(|p| p.index));
    let Some(frame) = frame else {
        return;
    };
    let Some(calls) = live.calls_of(frame) else {
        ui.small(format!("frame {frame}: its calls are no longer held"));
        return;
    };
    ui.small(format!("frame {frame}: {} calls", calls.len()));
    egui::ScrollArea::vertical()
        .id_salt("live-calls")
        .max_height(180.0)
        .show(ui, |ui| {
            for (text, ms) in calls.iter().take(400) {
                ui.monospace(format!("{:>8.3} ms  {text}", ms));
            }
        });
}
