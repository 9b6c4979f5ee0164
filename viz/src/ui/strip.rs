//! The frame strip: one bar per frame in time order, its height the frame's cost; click a
//! bar to show that frame.

use super::context::colour;
use crate::load::Loaded;
use crate::state::UiState;
use egui::{Color32, Rect, Sense, Stroke};

pub fn show(ui: &mut egui::Ui, state: &mut UiState, l: &Loaded) {
    let max = l.frames.iter().map(|f| f.cost_ms).fold(0.0, f64::max);
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.set_width(110.0);
            ui.small(l.strip_unit);
            ui.small(format!("max {max:.2}"));
            if let Some(f) = state.frame.and_then(|f| l.frame(f)) {
                ui.small(format!("frame {}: {:.3}", f.index, f.cost_ms));
            }
        });
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, Color32::from_gray(24));
        let n = l.frames.len().max(1);
        let w = rect.width() / n as f32;
        let bar_of = |x: f32| (((x - rect.left()) / w).floor() as usize).min(n - 1);
        let selected = state.frame.and_then(|f| l.frame_pos(f));
        let hovered = response.hover_pos().map(|p| bar_of(p.x));
        // Many frames share a pixel column: draw the tallest of each column.
        let columns = rect.width().max(1.0) as usize;
        let mut column_max = vec![0.0f64; columns.min(n)];
        let per_col = n as f64 / column_max.len() as f64;
        for (i, f) in l.frames.iter().enumerate() {
            let c = ((i as f64 / per_col) as usize).min(column_max.len() - 1);
            column_max[c] = column_max[c].max(f.cost_ms);
        }
        let col_w = rect.width() / column_max.len() as f32;
        for (c, &cost) in column_max.iter().enumerate() {
            let h = if max > 0.0 {
                (cost / max) as f32 * (rect.height() - 4.0)
            } else {
                0.0
            };
            let x0 = rect.left() + c as f32 * col_w;
            let bar = Rect::from_min_max(
                egui::pos2(
                    x0 + if col_w > 3.0 { 1.0 } else { 0.0 },
                    rect.bottom() - h.max(1.0),
                ),
                egui::pos2(x0 + col_w, rect.bottom()),
            );
            let t = if max > 0.0 { cost / max } else { 0.0 };
            let colour = colour(state.palette, 0.25 + 0.75 * t);
            painter.rect_filled(bar, 0.0, colour);
        }
        if let Some(s) = selected {
            let x = rect.left() + (s as f32 + 0.5) * w;
            painter.line_segment(
                [egui::pos2(x, rect.top()), egui::pos2(x, rect.bottom())],
                Stroke::new(2.0, Color32::WHITE),
            );
        }
        if let Some(h) = hovered {
            let f = &l.frames[h];
            let stats = &l.analysis.frames[f.stats_pos];
            response.clone().on_hover_ui_at_pointer(|ui| {
                ui.strong(format!("frame {}", f.index));
                ui.label(format!("{:.3} {}", f.cost_ms, l.strip_unit));
                ui.label(format!(
                    "{} calls, {} draws, wall {:.2} ms, CPU in GL {:.2} ms",
                    stats.calls, stats.draws, stats.wall_ms, stats.cpu_ms
                ));
                if f.heat.is_none() {
                    ui.weak(match &f.heat_missing {
                        Some(r) => format!("no heat map: {r}"),
                        None => "no heat map".into(),
                    });
                }
            });
        }
        if response.clicked() || response.dragged() {
            if let Some(p) = response.interact_pointer_pos() {
                state.set_frame(l.frames[bar_of(p.x)].index);
            }
        }
    });
}
