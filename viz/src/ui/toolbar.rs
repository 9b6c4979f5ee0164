//! The top bar: session, frame, tab, palette and scale, and the current tab's controls.

use super::context::Context;
use crate::load::Loaded;
use crate::options::{Cost, Quantity, Tab};
use crate::state::{default_mesh_camera, default_surface_camera, UiState};
use gpuheat_analysis::compare::diff::FRAME_GPU_BEYOND_DRIFT;
use gpuheat_analysis::palette::{Palette, Scale};

const PALETTES: [(Palette, &str); 4] = [
    (Palette::Inferno, "inferno"),
    (Palette::Turbo, "turbo"),
    (Palette::Viridis, "viridis"),
    (Palette::Android, "android"),
];

pub fn palette_name(p: Palette) -> &'static str {
    PALETTES
        .iter()
        .find(|(q, _)| *q == p)
        .map_or("?", |(_, n)| n)
}

pub fn top(ui: &mut egui::Ui, state: &mut UiState, cx: &mut Context) {
    egui::Panel::top("toolbar").show(ui, |ui| {
        ui.add_space(2.0);
        ui.horizontal(|ui| {
            ui.strong("gpuheat");
            if let Some(l) = cx.loaded {
                let name = l
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                ui.label(name).on_hover_text(format!(
                    "{} ({:.1} MB, loaded in {:.0} ms)",
                    l.path.display(),
                    l.bytes as f64 / 1e6,
                    l.load_ms
                ));
                ui.separator();
                frame_picker(ui, state, l);
            }
            ui.separator();
            for (tab, name) in [
                (Tab::Heat, "Heat"),
                (Tab::Mesh, "3D"),
                (Tab::Surface, "Surface"),
            ] {
                ui.selectable_value(&mut state.tab, tab, name);
            }
            if cx.diff.is_some() {
                ui.selectable_value(&mut state.tab, Tab::Diff, "Diff");
            }
            ui.separator();
            egui::ComboBox::from_id_salt("palette")
                .selected_text(palette_name(state.palette))
                .width(80.0)
                .show_ui(ui, |ui| {
                    for (p, n) in PALETTES {
                        ui.selectable_value(&mut state.palette, p, n);
                    }
                });
            egui::ComboBox::from_id_salt("scale")
                .selected_text(match state.scale {
                    Scale::Linear => "linear",
                    Scale::Log => "log",
                })
                .width(64.0)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut state.scale, Scale::Linear, "linear");
                    ui.selectable_value(&mut state.scale, Scale::Log, "log");
                });
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                ui.weak(cx.adapter);
                if let Some(n) = &state.notice {
                    ui.colored_label(egui::Color32::from_rgb(0xf2, 0xc0, 0x4a), n);
                }
            });
        });
        ui.horizontal(|ui| match state.tab {
            Tab::Heat => heat_controls(ui, state, cx),
            Tab::Mesh => mesh_controls(ui, state, cx),
            Tab::Diff => diff_controls(ui, cx),
            Tab::Surface => {
                quantity(ui, state);
                cost(ui, state, cx);
                range(ui, state, cx);
                if ui.button("reset camera").clicked() {
                    state.surface_camera = default_surface_camera();
                }
            }
        });
        ui.add_space(2.0);
    });
}

fn frame_picker(ui: &mut egui::Ui, state: &mut UiState, l: &Loaded) {
    let Some(current) = state.frame.and_then(|f| l.frame_pos(f)) else {
        ui.label("no frames");
        return;
    };
    let last = l.frames.len() - 1;
    ui.label("frame");
    if ui
        .add_enabled(
            current > 0,
            egui::Button::new(egui::RichText::new("◀").monospace()),
        )
        .clicked()
    {
        state.set_frame(l.frames[current - 1].index);
    }
    let mut pos = current;
    let r = ui.add(
        egui::DragValue::new(&mut pos)
            .range(0..=last)
            .custom_formatter(|p, _| {
                l.frames
                    .get(p as usize)
                    .map_or(String::new(), |f| f.index.to_string())
            })
            .custom_parser(|s| {
                let n: u64 = s.trim().parse().ok()?;
                l.frame_pos(n).map(|p| p as f64)
            }),
    );
    if r.changed() && pos != current {
        state.set_frame(l.frames[pos].index);
    }
    if ui
        .add_enabled(
            current < last,
            egui::Button::new(egui::RichText::new("▶").monospace()),
        )
        .clicked()
    {
        state.set_frame(l.frames[current + 1].index);
    }
    ui.weak(format!("{} frames", l.frames.len()));
}

fn quantity(ui: &mut egui::Ui, state: &mut UiState) {
    let before = state.quantity;
    ui.selectable_value(&mut state.quantity, Quantity::Heat, "heat")
        .on_hover_text("GPU time spread over the pixels each draw covered (ns per pixel)");
    ui.selectable_value(&mut state.quantity, Quantity::Overdraw, "overdraw")
        .on_hover_text("fragments per pixel");
    if state.quantity != before {
        state.range = None;
    }
}

fn range(ui: &mut egui::Ui, state: &mut UiState, cx: &Context) {
    let (mut lo, mut hi) = state.range.unwrap_or(cx.auto_range);
    ui.label("range");
    let speed = (cx.auto_range.1 / 200.0).max(0.01);
    let a = ui.add(
        egui::DragValue::new(&mut lo)
            .speed(speed)
            .range(0.0..=f32::MAX),
    );
    ui.label("–");
    let b = ui.add(
        egui::DragValue::new(&mut hi)
            .speed(speed)
            .range(0.0..=f32::MAX),
    );
    if a.changed() || b.changed() {
        state.range = Some((lo.min(hi), hi.max(lo)));
    }
    ui.weak(state.quantity.unit());
    if ui
        .add_enabled(state.range.is_some(), egui::Button::new("auto"))
        .on_hover_text(
            "0 to the 99.5th percentile of the map's non-zero pixels when a few outliers would wash it out (they are marked), else to its maximum",
        )
        .clicked()
    {
        state.range = None;
    }
    let clipping = cx.auto.is_some_and(|r| r.clipped > 0);
    if ui
        .add_enabled(clipping, egui::Button::new("max"))
        .on_hover_text("0 to the map's maximum: nothing clipped")
        .clicked()
    {
        if let Some(r) = cx.auto {
            state.range = Some((0.0, r.max as f32));
        }
    }
}

/// The own/total toggle, for frames with offscreen targets (without, both are the same).
fn cost(ui: &mut egui::Ui, state: &mut UiState, cx: &Context) {
    let Some(m) = cx.shown.filter(|m| m.flow) else {
        return;
    };
    ui.separator();
    let own = ui
        .selectable_label(m.cost == Cost::Own, "own")
        .on_hover_text("only the draws into this target");
    let total = ui
        .selectable_label(m.cost == Cost::Total, "total")
        .on_hover_text(format!(
            "own cost plus the cost of the offscreen passes upstream, spread {}",
            m.spreading
        ));
    if own.clicked() {
        state.show_target(state.target, Some(Cost::Own));
    } else if total.clicked() {
        state.show_target(state.target, Some(Cost::Total));
    }
}

fn heat_controls(ui: &mut egui::Ui, state: &mut UiState, cx: &Context) {
    quantity(ui, state);
    cost(ui, state, cx);
    ui.separator();
    range(ui, state, cx);
    ui.separator();
    ui.label("opacity");
    ui.add(egui::Slider::new(&mut state.alpha, 0.0..=1.0).show_value(false));
    ui.checkbox(&mut state.show_frame, "frame");
    if ui
        .button("fit")
        .on_hover_text("show the whole map (double-click the map)")
        .clicked()
    {
        state.heat_view.fit = true;
    }
}

fn mesh_controls(ui: &mut egui::Ui, state: &mut UiState, cx: &Context) {
    ui.label("colour by");
    let unit = |m: &crate::metric::Metric| match m {
        crate::metric::Metric::Counter(n) => {
            cx.loaded.and_then(|l| l.units.get(n)).map(String::as_str)
        }
        _ => None,
    };
    egui::ComboBox::from_id_salt("metric")
        .selected_text(state.metric.describe(unit(&state.metric)))
        .width(220.0)
        .show_ui(ui, |ui| {
            if let Some(l) = cx.loaded {
                for m in l.metrics() {
                    let text = m.describe(unit(&m));
                    ui.selectable_value(&mut state.metric, m, text);
                }
            }
        });
    ui.separator();
    ui.label("explode");
    ui.add(egui::Slider::new(&mut state.explode, 0.0..=0.2).show_value(false))
        .on_hover_text("pull the draws apart along depth, in call order");
    ui.label("depth");
    ui.add(egui::Slider::new(&mut state.depth_scale, 0.0..=2.0).show_value(false));
    ui.checkbox(&mut state.shade, "shade");
    if ui.button("reset camera").clicked() {
        state.mesh_camera = default_mesh_camera();
    }
}

fn diff_controls(ui: &mut egui::Ui, cx: &Context) {
    let Some(d) = &cx.diff else {
        ui.weak("no session B: open with --diff B");
        return;
    };
    match d.data {
        Some(data) => {
            let name = data
                .b
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            ui.label(format!("B: {name}"))
                .on_hover_text(data.b.path.display().to_string());
            ui.separator();
            let diff = &data.diff;
            ui.weak(format!(
                "{} matched, {} only in A, {} only in B",
                diff.matched.len(),
                diff.only_a.len(),
                diff.only_b.len()
            ));
            if let Some(f) = diff.frame_gpu() {
                ui.separator();
                let change = f
                    .relative
                    .map_or("–".into(), |r| format!("{:+.1}%", r * 100.0));
                // Judged beyond the common drift when one was taken out: say so, as the
                // raw frames may have moved far more (the machine's speed).
                let beyond = if f.metric == FRAME_GPU_BEYOND_DRIFT {
                    " beyond drift"
                } else {
                    ""
                };
                ui.label(format!(
                    "frame GPU time{beyond} {change} ({})",
                    f.verdict.word(&f.unit)
                ));
            }
            for w in diff.warnings.iter().take(1) {
                ui.separator();
                ui.colored_label(egui::Color32::from_rgb(0xf2, 0xc0, 0x4a), w);
            }
        }
        None => {
            ui.weak(d.status.unwrap_or("comparing…"));
        }
    }
}
