//! The right panel: the picked pixel (which draws made its heat), the selected draw (call,
//! source line, counters, coverage, findings), or the frame's summary and findings.

use super::context::{colour, severity_colour, Context};
use crate::load::Loaded;
use crate::metric::{duration, Metric};
use crate::state::UiState;
use egui::{Color32, RichText};
use gpuheat_analysis::checklist::{self, Finding};
use gpuheat_analysis::measure::pick::PickMethod;

pub fn show(ui: &mut egui::Ui, state: &mut UiState, cx: &mut Context, l: &Loaded) {
    let Some(frame) = state.frame else {
        ui.weak("no frame");
        return;
    };
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            if state.pick_result.is_some() || state.flow_pick.is_some() {
                pick(ui, state, cx, l, frame);
                ui.separator();
            }
            match state.selected {
                Some(call) => draw(ui, state, cx, l, frame, call),
                None => summary(ui, state, l, frame),
            }
        });
}

fn pick(ui: &mut egui::Ui, state: &mut UiState, cx: &Context, l: &Loaded, frame: u64) {
    let Some((x, y)) = state.pick else { return };
    ui.horizontal(|ui| {
        ui.heading(format!("Pixel {x}, {y}"));
        if let Some(m) = cx.shown.filter(|m| !m.is_screen()) {
            ui.label(format!("of target {}", m.label));
        }
        if ui
            .small_button("×")
            .on_hover_text("clear the pick")
            .clicked()
        {
            state.pick = None;
            state.pick_result = None;
            state.flow_pick = None;
        }
    });
    upstream(ui, state);
    let Some(p) = state.pick_result.clone() else {
        return;
    };
    if state.flow_pick.is_some() {
        ui.add_space(4.0);
        ui.strong("Own draws at this pixel");
    }
    ui.label(format!(
        "heat {} · {} fragment{}",
        duration(p.heat_ns),
        p.overdraw,
        if p.overdraw == 1 { "" } else { "s" }
    ));
    ui.weak(match p.method {
        PickMethod::Geometry => "coverage counted from the draws' triangles",
        PickMethod::BoundingBox => {
            "estimate: a draw without geometry is assumed to cover its box once"
        }
    });
    if p.draws.is_empty() {
        ui.weak("no draw produced fragments here");
        return;
    }
    egui::Grid::new("pick")
        .striped(true)
        .num_columns(4)
        .show(ui, |ui| {
            ui.strong("call");
            ui.strong("share");
            ui.strong("heat");
            ui.strong("frags");
            ui.end_row();
            for s in &p.draws {
                let name = l
                    .draw(frame, s.call)
                    .map_or(String::new(), |d| d.function.clone());
                let text = RichText::new(format!("{} {name}", s.call));
                let selected = state.selected == Some(s.call);
                if ui
                    .selectable_label(selected, text)
                    .on_hover_text("select this draw")
                    .clicked()
                {
                    state.select(Some(s.call));
                }
                share_bar(ui, state, s.share);
                ui.label(duration(s.heat_ns));
                ui.label(s.fragments.to_string());
                ui.end_row();
            }
        });
}

/// Where the pixel's total cost came from: its target's own draws and each upstream pass
/// (`FrameFlowCost::pick`), largest first.
fn upstream(ui: &mut egui::Ui, state: &mut UiState) {
    let Some(f) = state.flow_pick.clone() else {
        return;
    };
    ui.label(format!(
        "total {} = own {} + {} from {} upstream pass{}",
        duration(f.total_ns),
        duration(f.own_ns),
        duration(f.total_ns - f.own_ns),
        f.upstream.len(),
        if f.upstream.len() == 1 { "" } else { "es" }
    ));
    if f.upstream.is_empty() {
        ui.weak("no offscreen pass fed this pixel");
        return;
    }
    ui.add(
        egui::Label::new(
            RichText::new(format!("upstream cost spread {}", f.spreading))
                .small()
                .weak(),
        )
        .wrap(),
    );
    egui::Grid::new("upstream")
        .striped(true)
        .num_columns(3)
        .show(ui, |ui| {
            ui.strong("pass");
            ui.strong("share");
            ui.strong("cost here");
            ui.end_row();
            if f.own_ns > 0.0 {
                ui.label("own draws");
                share_bar(
                    ui,
                    state,
                    if f.total_ns > 0.0 {
                        f.own_ns / f.total_ns
                    } else {
                        0.0
                    },
                );
                ui.label(duration(f.own_ns));
                ui.end_row();
            }
            for u in &f.upstream {
                // A pass of hundreds of draws: the first few name it.
                let mut calls: Vec<String> = u.calls.iter().take(6).map(u32::to_string).collect();
                if u.calls.len() > 6 {
                    calls.push(format!("… ({} draws)", u.calls.len()));
                }
                let text = format!("target {} · calls {}", u.label, calls.join(", "));
                let first = u.calls.first().copied();
                if ui
                    .selectable_label(first.is_some() && state.selected == first, text)
                    .on_hover_text(format!("pass {}: select its first draw", u.pass))
                    .clicked()
                {
                    state.select(first);
                }
                share_bar(ui, state, u.share);
                ui.label(duration(u.ns));
                ui.end_row();
            }
        });
}

fn share_bar(ui: &mut egui::Ui, state: &UiState, share: f64) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(70.0, 12.0), egui::Sense::hover());
    let p = ui.painter();
    p.rect_filled(rect, 2.0, Color32::from_gray(40));
    let mut bar = rect;
    bar.set_width(rect.width() * share.clamp(0.0, 1.0) as f32);
    p.rect_filled(bar, 2.0, colour(state.palette, 0.3 + 0.7 * share));
    p.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        format!("{:.1}%", share * 100.0),
        egui::FontId::proportional(10.0),
        // The label sits over the bar's middle: dark on a long (bright) bar.
        if share > 0.5 {
            Color32::BLACK
        } else {
            Color32::WHITE
        },
    );
}

fn row(ui: &mut egui::Ui, name: &str, value: impl Into<egui::WidgetText>) {
    ui.label(name);
    ui.label(value);
    ui.end_row();
}

fn draw(
    ui: &mut egui::Ui,
    state: &mut UiState,
    cx: &mut Context,
    l: &Loaded,
    frame: u64,
    call: u32,
) {
    ui.horizontal(|ui| {
        ui.heading(format!("Draw {call}"));
        if ui
            .small_button("×")
            .on_hover_text("clear the selection")
            .clicked()
        {
            state.select(None);
        }
    });
    let Some(d) = l.draw(frame, call) else {
        ui.weak(format!("call {call} of frame {frame} is not a work call"));
        return;
    };
    ui.add(egui::Label::new(RichText::new(&d.text).monospace()).wrap());
    let callsite = l
        .frame(frame)
        .and_then(|f| l.session.frames[f.frame_pos].calls.get(call as usize))
        .map(|c| c.callsite);
    if let Some(addr) = callsite {
        let loc = cx.symbols.resolve(l, addr);
        ui.horizontal_wrapped(|ui| {
            ui.weak("at");
            ui.label(
                RichText::new(loc)
                    .monospace()
                    .color(Color32::from_rgb(0x9c, 0xd0, 0xff)),
            );
        });
    }
    ui.add_space(4.0);
    egui::CollapsingHeader::new("Cost")
        .default_open(true)
        .show(ui, |ui| {
            egui::Grid::new("cost")
                .striped(true)
                .num_columns(2)
                .show(ui, |ui| {
                    if let Some(t) = d.gpu_serialized_ns {
                        row(ui, "GPU, serialized", duration(t as f64));
                    }
                    if let Some(t) = d.gpu_pipelined_ns {
                        row(ui, "GPU, pipelined", duration(t as f64));
                    }
                    if let Some(s) = d.frame_share {
                        row(ui, "share of frame", format!("{:.1}%", s * 100.0));
                    }
                    row(ui, "CPU in call", duration(d.cpu_ns as f64));
                    for (name, v) in &d.counters {
                        let unit = l.units.get(name).map_or("", String::as_str);
                        row(ui, name, format!("{v} {unit}"));
                    }
                });
        });
    let entry = l.frame(frame);
    let map = entry.and_then(|f| f.heat).map(|i| &l.session.heat[i]);
    // A draw into an offscreen target has its coverage in that target's map.
    let find = |m: &gpuheat_session::HeatMap, painted: bool| {
        m.draws
            .iter()
            .find(|c| c.call == call && (c.fragments > 0 || !painted))
            .copied()
    };
    let cov = map
        .and_then(|m| find(m, true))
        .or_else(|| cx.shown.and_then(|m| find(&m.map, true)))
        .or_else(|| map.and_then(|m| find(m, false)));
    if let Some(cov) = cov {
        egui::CollapsingHeader::new("Coverage")
            .default_open(true)
            .show(ui, |ui| {
                egui::Grid::new("coverage")
                    .striped(true)
                    .num_columns(2)
                    .show(ui, |ui| {
                        row(ui, "fragments", cov.fragments.to_string());
                        row(ui, "time painted", duration(cov.time_ns as f64));
                        if cov.fragments > 0 {
                            row(
                                ui,
                                "per fragment",
                                duration(cov.time_ns as f64 / cov.fragments as f64),
                            );
                        }
                        let [x0, y0, x1, y1] = cov.bbox;
                        row(ui, "box", format!("{x0},{y0} – {x1},{y1}"));
                    });
            });
    }
    let geometry = entry
        .and_then(|f| f.geometry)
        .map(|i| &l.session.geometry[i]);
    if let Some(g) = geometry {
        if let Some(dg) = g.draws.iter().find(|x| x.call == call) {
            let prim = match dg.primitive {
                0 => "points",
                1 => "lines",
                _ => "triangles",
            };
            let per = match dg.primitive {
                0 => 1,
                1 => 2,
                _ => 3,
            };
            let mut text = format!("{} {prim}", dg.positions.len() / per);
            if dg.dropped_vertices > 0 {
                text.push_str(&format!(" ({} vertices not kept)", dg.dropped_vertices));
            }
            ui.label(format!("geometry: {text}"));
        } else if let Some(m) = g.missing.iter().find(|x| x.call == call) {
            ui.weak(format!("no geometry: {}", m.reason));
        }
    }
    findings_list(
        ui,
        state,
        checklist::for_call(&l.findings, frame, call),
        false,
    );
}

fn summary(ui: &mut egui::Ui, state: &mut UiState, l: &Loaded, frame: u64) {
    let Some(entry) = l.frame(frame) else { return };
    let s = &l.analysis.frames[entry.stats_pos];
    ui.heading(format!("Frame {frame}"));
    egui::Grid::new("frame")
        .striped(true)
        .num_columns(2)
        .show(ui, |ui| {
            row(ui, "calls", s.calls.to_string());
            row(ui, "draws", s.draws.to_string());
            row(ui, "work calls", s.work_calls.to_string());
            row(ui, "wall", format!("{:.3} ms", s.wall_ms));
            row(ui, "CPU in GL", format!("{:.3} ms", s.cpu_ms));
            if let Some(g) = s.gpu_serialized_ms {
                row(ui, "GPU, serialized", format!("{g:.3} ms"));
            }
            if let Some(g) = s.gpu_pipelined_ms {
                row(ui, "GPU, pipelined", format!("{g:.3} ms"));
            }
        });
    match (entry.heat, &entry.heat_missing) {
        (Some(_), _) => {}
        (None, Some(r)) => {
            ui.weak(format!("no heat map: {r}"));
        }
        (None, None) => {
            ui.weak("no heat map (capture with --mode full --heat)");
        }
    }
    // The costliest draw, to start from.
    let hottest = entry
        .draws
        .iter()
        .map(|&i| &l.analysis.draws[i])
        .filter_map(|d| {
            Metric::GpuSerialized
                .value(d)
                .or(Metric::GpuPipelined.value(d))
                .map(|v| (v, d))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((v, d)) = hottest {
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            ui.label("hottest:");
            if ui
                .link(format!("call {} {} ({})", d.call, d.function, duration(v)))
                .clicked()
            {
                state.select(Some(d.call));
            }
        });
    }
    let frame_findings = l.findings.iter().filter(|f| f.frame == frame);
    findings_list(ui, state, frame_findings, true);
}

fn findings_list<'a>(
    ui: &mut egui::Ui,
    state: &mut UiState,
    items: impl Iterator<Item = &'a Finding>,
    link_calls: bool,
) {
    let items: Vec<&Finding> = items.collect();
    egui::CollapsingHeader::new(format!("Findings ({})", items.len()))
        .default_open(true)
        .show(ui, |ui| {
            if items.is_empty() {
                ui.weak("none");
            }
            for f in items {
                ui.horizontal_wrapped(|ui| {
                    ui.label(
                        RichText::new(format!("{:?}", f.severity))
                            .small()
                            .color(severity_colour(f.severity)),
                    );
                    ui.label(RichText::new(&f.title).strong());
                });
                ui.horizontal_wrapped(|ui| {
                    if let (true, Some(c)) = (link_calls, f.call) {
                        if ui.link(format!("call {c}")).clicked() {
                            state.select(Some(c));
                        }
                    }
                    ui.weak(format!("[{}]", f.rule));
                });
                ui.add(egui::Label::new(RichText::new(&f.detail).small()).wrap());
                if !f.fix.is_empty() {
                    ui.add(
                        egui::Label::new(RichText::new(format!("Fix: {}", f.fix)).small()).wrap(),
                    );
                }
                ui.add_space(4.0);
            }
        });
}
