//! The left panel: the frame's draws (every work call, with its cost and every counter,
//! sortable by any column) and the frame's full call list.

use super::context::{colour, severity_colour};
use crate::load::Loaded;
use crate::metric::Metric;
use crate::state::{Column, ListTab, UiState};
use egui::{Color32, RichText};
use egui_extras::{Column as Col, TableBuilder};
use gpuheat_analysis::checklist::Severity;
use gpuheat_analysis::DrawCost;

const ROW_H: f32 = 18.0;

/// The findings about call `call` of frame `frame` (the call they point at, or one of the
/// calls of their evidence): the most severe one's severity, and one line per finding for
/// the hover text.
fn marker(l: &Loaded, frame: u64, call: u32) -> Option<(Severity, String)> {
    let mut worst: Option<Severity> = None;
    let mut lines = Vec::new();
    for f in l
        .findings
        .iter()
        .filter(|f| f.frame == frame && (f.call == Some(call) || f.evidence.calls.contains(&call)))
    {
        worst = worst.max(Some(f.severity));
        lines.push(format!("[{}] {}", f.rule, f.title));
        if !f.fix.is_empty() {
            lines.push(format!("    fix: {}", f.fix));
        }
    }
    worst.map(|w| (w, lines.join("\n")))
}

/// A dot in the colour of the most severe finding about the call, its findings on hover.
fn finding_dot(ui: &mut egui::Ui, l: &Loaded, frame: u64, call: u32) {
    if let Some((severity, text)) = marker(l, frame, call) {
        ui.label(RichText::new("●").small().color(severity_colour(severity)))
            .on_hover_text(text);
    }
}

pub fn show(ui: &mut egui::Ui, state: &mut UiState, l: &Loaded) {
    ui.horizontal(|ui| {
        ui.selectable_value(&mut state.list, ListTab::Draws, "Draws");
        ui.selectable_value(&mut state.list, ListTab::Calls, "Calls");
        if let Some(f) = state.frame.and_then(|f| l.frame(f)) {
            let s = &l.analysis.frames[f.stats_pos];
            ui.weak(format!("{} work calls, {} calls", f.draws.len(), s.calls));
        }
    });
    ui.separator();
    match state.list {
        ListTab::Draws => draw_table(ui, state, l),
        ListTab::Calls => call_list(ui, state, l),
    }
}

fn sort_key(d: &DrawCost, c: &Column) -> (Option<f64>, String) {
    match c {
        Column::Call => (Some(f64::from(d.call)), String::new()),
        Column::Function => (None, d.function.clone()),
        Column::Metric(m) => (m.value(d), String::new()),
    }
}

/// The function column's text: the entry point, but for a block of immediate mode (drawn as
/// one draw, recorded at its `glEnd`) the block, `glBegin(GL_QUADS) … glEnd()`, as its
/// draw text names it.
fn function_label<'a>(function: &'a str, text: &'a str) -> &'a str {
    match text.split_once(':') {
        Some((block, _)) if function == "glEnd" && block.starts_with("glBegin") => block,
        _ => function,
    }
}

fn draw_table(ui: &mut egui::Ui, state: &mut UiState, l: &Loaded) {
    let Some(frame) = state.frame.and_then(|f| l.frame(f)) else {
        ui.weak("no frame");
        return;
    };
    if frame.draws.is_empty() {
        ui.weak("this frame has no work calls");
        return;
    }
    let mut metrics = vec![
        Metric::GpuSerialized,
        Metric::GpuPipelined,
        Metric::FrameShare,
        Metric::Cpu,
    ];
    metrics.extend(l.counters.iter().cloned().map(Metric::Counter));
    // Columns nobody measured in this session are left out.
    metrics.retain(|m| {
        l.analysis
            .draws
            .iter()
            .take(4096)
            .any(|d| m.value(d).is_some())
    });
    let mut rows: Vec<&DrawCost> = frame.draws.iter().map(|&i| &l.analysis.draws[i]).collect();
    let (col, descending) = &state.sort;
    rows.sort_by(|a, b| {
        let (ka, kb) = (sort_key(a, col), sort_key(b, col));
        // Unmeasured values sort last either way.
        let o = match (ka.0, kb.0) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => return std::cmp::Ordering::Less,
            (None, Some(_)) => return std::cmp::Ordering::Greater,
            (None, None) => ka.1.cmp(&kb.1),
        };
        let o = if *descending { o.reverse() } else { o };
        o.then(a.call.cmp(&b.call))
    });
    let selected_row = state
        .selected
        .and_then(|c| rows.iter().position(|d| d.call == c));
    let max_share = rows
        .iter()
        .filter_map(|d| d.frame_share)
        .fold(0.0, f64::max);

    let mut table = TableBuilder::new(ui)
        .id_salt(("draws", frame.index))
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
        .column(Col::auto().at_least(36.0))
        .column(Col::initial(120.0).at_least(60.0).clip(true));
    for _ in &metrics {
        table = table.column(Col::auto().at_least(48.0));
    }
    if state.scroll_to_selection {
        if let Some(r) = selected_row {
            table = table.scroll_to_row(r, Some(egui::Align::Center));
        }
    }
    let mut clicked = None;
    let mut new_sort = None;
    let mut header_cols = vec![Column::Call, Column::Function];
    header_cols.extend(metrics.iter().cloned().map(Column::Metric));
    table
        .header(ROW_H + 2.0, |mut header| {
            for c in &header_cols {
                header.col(|ui| {
                    let title = match c {
                        Column::Call => "call".to_string(),
                        Column::Function => "function".to_string(),
                        Column::Metric(m) => m.title(),
                    };
                    let arrow = if &state.sort.0 == c {
                        if state.sort.1 {
                            "▼"
                        } else {
                            "▲"
                        }
                    } else {
                        ""
                    };
                    let r = ui
                        .add(
                            egui::Label::new(RichText::new(title).strong())
                                .sense(egui::Sense::click()),
                        )
                        .on_hover_text("sort");
                    if !arrow.is_empty() {
                        // The arrows are in the monospace font only.
                        ui.label(RichText::new(arrow).monospace().small());
                    }
                    if r.clicked() {
                        new_sort = Some(c.clone());
                    }
                });
            }
        })
        .body(|body| {
            body.rows(ROW_H, rows.len(), |mut row| {
                let d = rows[row.index()];
                row.set_selected(state.selected == Some(d.call));
                row.col(|ui| {
                    ui.monospace(d.call.to_string());
                });
                row.col(|ui| {
                    ui.label(function_label(&d.function, &d.text))
                        .on_hover_text(&d.text);
                    finding_dot(ui, l, d.frame, d.call);
                });
                for m in &metrics {
                    row.col(|ui| {
                        let text = m.cell(d);
                        if *m == Metric::FrameShare {
                            if let Some(s) = d.frame_share {
                                let t = if max_share > 0.0 { s / max_share } else { 0.0 };
                                let c = colour(state.palette, 0.2 + 0.8 * t);
                                ui.label(RichText::new(text).color(c));
                                return;
                            }
                        }
                        ui.label(text);
                    });
                }
                if row.response().clicked() {
                    clicked = Some(d.call);
                }
            });
        });
    if let Some(c) = new_sort {
        state.sort = if state.sort.0 == c {
            (c, !state.sort.1)
        } else {
            // Costs read best largest first; call and name in order.
            let descending = matches!(c, Column::Metric(_));
            (c, descending)
        };
    }
    if let Some(c) = clicked {
        let again = state.selected == Some(c);
        state.selected = if again { None } else { Some(c) };
    }
}

fn call_list(ui: &mut egui::Ui, state: &mut UiState, l: &Loaded) {
    let Some(entry) = state.frame.and_then(|f| l.frame(f)) else {
        ui.weak("no frame");
        return;
    };
    let frame = &l.session.frames[entry.frame_pos];
    let funcs = &l.session.functions.functions;
    let mut table = TableBuilder::new(ui)
        .id_salt(("calls", entry.index))
        .striped(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
        .column(Col::auto().at_least(40.0))
        .column(Col::remainder().clip(true));
    if state.scroll_to_selection {
        if let Some(c) = state.selected {
            table = table.scroll_to_row(c as usize, Some(egui::Align::Center));
        }
    }
    let mut clicked = None;
    table
        .header(ROW_H + 2.0, |mut h| {
            h.col(|ui| {
                ui.strong("#");
            });
            h.col(|ui| {
                ui.strong("call");
            });
        })
        .body(|body| {
            body.rows(ROW_H, frame.calls.len(), |mut row| {
                let i = row.index();
                let call = &frame.calls[i];
                let info = funcs.get(call.func as usize);
                let work = info.is_some_and(|f| f.class.is_work());
                row.set_selected(state.selected == Some(i as u32));
                row.col(|ui| {
                    ui.monospace(i.to_string());
                });
                row.col(|ui| {
                    let text = match info {
                        Some(f) => gpuheat_analysis::call_text(f, &call.args),
                        None => format!("<function {}>", call.func),
                    };
                    let rt = RichText::new(text).monospace();
                    ui.label(if work {
                        rt.color(Color32::from_rgb(0xff, 0xc8, 0x70))
                    } else {
                        rt
                    });
                    finding_dot(ui, l, entry.index, i as u32);
                });
                if work && row.response().clicked() {
                    clicked = Some(i as u32);
                }
            });
        });
    if let Some(c) = clicked {
        state.selected = Some(c);
    }
}

#[cfg(test)]
mod tests {
    use super::function_label;

    #[test]
    fn a_block_of_immediate_mode_is_named_by_its_begin_and_end() {
        let block = "glBegin(GL_QUADS) … glEnd(): 4 vertices";
        assert_eq!(
            function_label("glEnd", block),
            "glBegin(GL_QUADS) … glEnd()"
        );
        // A glEnd whose glBegin was not captured, and any other draw: the entry point.
        assert_eq!(function_label("glEnd", "glEnd()"), "glEnd");
        assert_eq!(
            function_label("glDrawArrays", "glDrawArrays(GL_TRIANGLES, 0, 3)"),
            "glDrawArrays"
        );
    }
}
