//! The central view: the pass's image, the mouse on it (pan, zoom, pick, orbit), and the
//! legend; and the progress shown while the session loads.

use super::context::{colour, gradient_strip, Context};
use crate::load::{Loaded, Stage};
use crate::options::{Quantity, Tab};
use crate::state::{HeatView, UiState};
use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Sense, Stroke};
use gpuheat_analysis::palette::label;
use gpuheat_analysis::palette::{Palette, Scale, ANDROID};

pub fn loading(ui: &mut egui::Ui, cx: &Context) {
    ui.vertical_centered(|ui| {
        ui.add_space(ui.available_height() * 0.35);
        if let Some(e) = cx.error {
            ui.heading(RichError(e).text());
            return;
        }
        let (text, fraction) = match cx.stage {
            Some(Stage::Reading { done, total }) => (
                format!(
                    "reading the session: {:.1} of {:.1} MB",
                    *done as f64 / 1e6,
                    *total as f64 / 1e6
                ),
                if *total > 0 {
                    Some(*done as f32 / *total as f32)
                } else {
                    None
                },
            ),
            Some(Stage::Analysing) => ("analysing draws…".to_string(), None),
            Some(Stage::Checking) => ("running the checklist…".to_string(), None),
            None => ("starting…".to_string(), None),
        };
        ui.label(text);
        if let Some(f) = fraction {
            ui.add(egui::ProgressBar::new(f.min(1.0)).desired_width(320.0));
        }
    });
}

struct RichError<'a>(&'a str);

impl RichError<'_> {
    fn text(&self) -> egui::RichText {
        egui::RichText::new(format!("cannot load the session: {}", self.0))
            .color(Color32::from_rgb(0xf2, 0x6a, 0x5a))
    }
}

/// Rounds to whole physical pixels so the view's texels land 1:1 on the screen.
pub(super) fn snap(rect: Rect, ppp: f32) -> Rect {
    Rect::from_min_max(
        ((rect.min.to_vec2() * ppp).round() / ppp).to_pos2(),
        ((rect.max.to_vec2() * ppp).round() / ppp).to_pos2(),
    )
}

/// Takes the rest of the panel for a view, snapped to whole pixels, and records its size and
/// place in physical pixels (what the offscreen passes render into).
pub fn allocate_view(
    ui: &mut egui::Ui,
    state: &mut UiState,
    sense: Sense,
) -> (Rect, egui::Response) {
    let ppp = ui.ctx().pixels_per_point();
    let rect = snap(ui.available_rect_before_wrap(), ppp);
    let response = ui.allocate_rect(rect, sense);
    state.view_px = [
        (rect.width() * ppp).round().max(1.0) as u32,
        (rect.height() * ppp).round().max(1.0) as u32,
    ];
    state.view_at = [
        (rect.min.x * ppp).round().max(0.0) as u32,
        (rect.min.y * ppp).round().max(0.0) as u32,
    ];
    (rect, response)
}

pub fn show(ui: &mut egui::Ui, state: &mut UiState, cx: &mut Context, l: &Loaded) {
    let ppp = ui.ctx().pixels_per_point();
    state.thumb_rects.clear();
    if let (Tab::Heat | Tab::Surface, Some(t)) = (state.tab, cx.thumbs) {
        selector(ui, state, cx, t);
    }
    let (rect, response) = allocate_view(ui, state, Sense::click_and_drag());
    let painter = ui.painter_at(rect);
    if let Some((tex, _)) = cx.view {
        painter.image(
            tex,
            rect,
            Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
            Color32::WHITE,
        );
    }
    let Some(frame) = state.frame.and_then(|f| l.frame(f)) else {
        centre_text(&painter, rect, "the session has no frames");
        return;
    };
    match state.tab {
        Tab::Heat => heat(ui, state, cx, l, frame, rect, &response, ppp),
        Tab::Mesh => mesh(ui, state, cx, l, rect, &response, ppp),
        // Shown by `ui::diff::view` instead.
        Tab::Diff => {}
        Tab::Surface => {
            if cx.shown.is_none() {
                centre_text(&painter, rect, &no_map(frame));
                return;
            }
            orbit(ui, &mut state.surface_camera, &response);
            heat_legend(&painter, rect, state, cx);
        }
    }
}

/// Colour of the selected render target's frame in the selector.
const SELECTED: Color32 = Color32::from_rgb(0x40, 0xff, 0xff);
/// Height of a thumbnail in the selector, points.
const THUMB_H: f32 = 54.0;

/// The render-target selector: a thumbnail of every target of the frame (screens first, then
/// offscreen targets in the flow's order) with its name, size and share of the frame's
/// painted time; a click shows that target's map.
fn selector(
    ui: &mut egui::Ui,
    state: &mut UiState,
    cx: &Context,
    thumbs: &crate::targets::Thumbnails,
) {
    let current = cx.shown.and_then(|m| m.key);
    let first_screen = thumbs
        .thumbs
        .iter()
        .find(|t| t.key.is_screen())
        .map(|t| t.key);
    egui::Frame::NONE
        .fill(Color32::from_gray(22))
        .inner_margin(4.0)
        .show(ui, |ui| {
            egui::ScrollArea::horizontal()
                .id_salt("targets")
                .show(ui, |ui| {
                    ui.horizontal(|ui| {
                        ui.vertical(|ui| {
                            ui.label(egui::RichText::new("render targets").small().strong());
                            ui.label(
                                egui::RichText::new("share of the frame's\npainted time")
                                    .small()
                                    .weak(),
                            );
                        });
                        for t in &thumbs.thumbs {
                            let selected = current == Some(t.key);
                            let stroke = if selected {
                                Stroke::new(2.0, SELECTED)
                            } else {
                                Stroke::new(1.0, Color32::from_gray(70))
                            };
                            let frame =
                                egui::Frame::NONE
                                    .stroke(stroke)
                                    .inner_margin(3.0)
                                    .show(ui, |ui| {
                                        ui.vertical(|ui| {
                                            let [w, h] = t.texture.size();
                                            let scale = THUMB_H / h.max(1) as f32;
                                            let size = vec2(
                                                (w as f32 * scale).min(THUMB_H * 2.5),
                                                THUMB_H,
                                            );
                                            let image =
                                                ui.add(egui::Image::new((t.texture.id(), size)));
                                            let ppp = ui.ctx().pixels_per_point();
                                            let r = image.rect;
                                            state.thumb_rects.push((
                                                t.label.clone(),
                                                [
                                                    (r.min.x * ppp).round() as u32,
                                                    (r.min.y * ppp).round() as u32,
                                                    (r.width() * ppp).round() as u32,
                                                    (r.height() * ppp).round() as u32,
                                                ],
                                            ));
                                            let name = if t.key.is_screen() {
                                                t.label.clone()
                                            } else {
                                                format!("target {}", t.label)
                                            };
                                            ui.label(
                                                egui::RichText::new(format!(
                                                    "{name} · {}x{}",
                                                    t.size[0], t.size[1]
                                                ))
                                                .small(),
                                            );
                                            ui.label(
                                                egui::RichText::new(format!(
                                                    "{:.1}% · {}",
                                                    t.share * 100.0,
                                                    crate::metric::duration(t.own_ns)
                                                ))
                                                .small(),
                                            );
                                        });
                                    });
                            let r = ui.interact(
                                frame.response.rect,
                                ui.make_persistent_id(("target", t.key.context, t.key.id)),
                                Sense::click(),
                            );
                            if r.clicked() {
                                let key = Some(t.key).filter(|k| Some(*k) != first_screen);
                                state.show_target(key, state.cost);
                            }
                            r.on_hover_text(format!(
                                "show {}: own cost {} ({:.1}% of the frame's painted time)",
                                t.label,
                                crate::metric::duration(t.own_ns),
                                t.share * 100.0
                            ));
                        }
                    });
                });
        });
}

fn no_map(frame: &crate::load::FrameEntry) -> String {
    match &frame.heat_missing {
        Some(r) => format!("frame {}: no heat map: {r}", frame.index),
        None => format!(
            "frame {} has no heat map (capture with --mode full --heat)",
            frame.index
        ),
    }
}

pub(super) fn centre_text(painter: &egui::Painter, rect: Rect, text: &str) {
    painter.text(
        rect.center(),
        Align2::CENTER_CENTER,
        text,
        FontId::proportional(15.0),
        Color32::from_gray(200),
    );
}

fn orbit(ui: &egui::Ui, cam: &mut crate::camera::OrbitCamera, response: &egui::Response) {
    if response.dragged() {
        let d = response.drag_delta();
        cam.drag(d.x, d.y);
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            cam.zoom(scroll);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn heat(
    ui: &egui::Ui,
    state: &mut UiState,
    cx: &Context,
    l: &Loaded,
    frame: &crate::load::FrameEntry,
    rect: Rect,
    response: &egui::Response,
    ppp: f32,
) {
    let painter = ui.painter_at(rect);
    let Some(shown) = cx.shown else {
        centre_text(&painter, rect, &no_map(frame));
        return;
    };
    let map = &shown.map;
    let (mw, mh) = (map.width as f32, map.height as f32);
    let (vw, vh) = (state.view_px[0] as f32, state.view_px[1] as f32);
    let hv = &mut state.heat_view;
    if hv.fit {
        hv.center = [mw * 0.5, mh * 0.5];
        hv.zoom = (vw / mw.max(1.0)).min(vh / mh.max(1.0)) * 0.96;
    }
    let to_map = |p: egui::Pos2, hv: &HeatView| {
        let v = (p - rect.min) * ppp;
        [
            hv.center[0] + (v.x - vw * 0.5) / hv.zoom,
            hv.center[1] - (v.y - vh * 0.5) / hv.zoom,
        ]
    };
    let to_screen = |m: [f32; 2], hv: &HeatView| {
        rect.min
            + vec2(
                (m[0] - hv.center[0]) * hv.zoom + vw * 0.5,
                (hv.center[1] - m[1]) * hv.zoom + vh * 0.5,
            ) / ppp
    };
    if response.dragged() {
        let d = response.drag_delta() * ppp;
        hv.center[0] -= d.x / hv.zoom;
        hv.center[1] += d.y / hv.zoom;
        hv.fit = false;
    }
    if response.double_clicked() {
        hv.fit = true;
    }
    if let Some(pointer) = response.hover_pos() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            let before = to_map(pointer, hv);
            hv.zoom = (hv.zoom * (scroll * 0.003).exp()).clamp(0.02, 256.0);
            let v = (pointer - rect.min) * ppp;
            hv.center = [
                before[0] - (v.x - vw * 0.5) / hv.zoom,
                before[1] + (v.y - vh * 0.5) / hv.zoom,
            ];
            hv.fit = false;
        }
        let m = to_map(pointer, hv);
        if m[0] >= 0.0 && m[1] >= 0.0 && m[0] < mw && m[1] < mh {
            let (x, y) = (m[0] as u32, m[1] as u32);
            let i = (y * map.width + x) as usize;
            response.clone().on_hover_ui_at_pointer(|ui| {
                ui.label(format!("pixel {x}, {y}"));
                let what = match (shown.flow, shown.cost) {
                    (true, crate::options::Cost::Total) => "total cost",
                    (true, crate::options::Cost::Own) => "own cost",
                    (false, _) => "heat",
                };
                ui.label(format!(
                    "{what} {:.2} ns · {} fragments",
                    map.heat[i], map.overdraw[i]
                ));
                ui.weak(if shown.flow {
                    "click: which draws and upstream passes made it"
                } else {
                    "click: which draws made it"
                });
            });
            if response.clicked() {
                state.pick = Some((x, y));
                // The draws' ranking reads the screen's geometry: only on the screen the
                // pick ranks (its first map); the upstream passes come with the flow.
                let ranked = gpuheat_analysis::measure::pick::heat_map(&l.session, frame.index)
                    .is_some_and(|m| {
                        shown
                            .key
                            .is_none_or(|k| k.is_screen() && k.context == m.context)
                    });
                state.pick_result = if ranked {
                    gpuheat_analysis::measure::pick::pick(&l.session, frame.index, x, y)
                } else {
                    None
                };
                state.flow_pick = None;
            }
        }
    }
    if let Some((x, y)) = state.pick {
        let c = to_screen([x as f32 + 0.5, y as f32 + 0.5], &state.heat_view);
        let r = (state.heat_view.zoom / ppp * 0.5).max(6.0);
        painter.circle_stroke(c, r, Stroke::new(2.5, Color32::BLACK));
        painter.circle_stroke(c, r, Stroke::new(1.2, Color32::from_rgb(0x40, 0xff, 0xff)));
    }
    heat_legend(&painter, rect, state, cx);
}

#[allow(clippy::too_many_arguments)]
fn mesh(
    ui: &egui::Ui,
    state: &mut UiState,
    cx: &Context,
    l: &Loaded,
    rect: Rect,
    response: &egui::Response,
    ppp: f32,
) {
    let painter = ui.painter_at(rect);
    let info = cx.mesh;
    orbit(ui, &mut state.mesh_camera, response);
    if response.clicked() {
        if let Some(p) = response.interact_pointer_pos() {
            let v = (p - rect.min) * ppp;
            state.id_click = Some([v.x.max(0.0) as u32, v.y.max(0.0) as u32]);
        }
    }
    let mut lines = Vec::new();
    if info.no_record {
        lines.push("this frame has no geometry (capture with --mode full)".to_string());
    }
    let triangles: u64 = info.draws.iter().map(|d| u64::from(d.triangles)).sum();
    lines.push(format!(
        "{} draws shown ({triangles} triangles)",
        info.draws.len()
    ));
    // Points and lines have their positions recorded; only the mesh leaves them out.
    let missing = info.without_geometry.saturating_sub(info.untriangled);
    if missing > 0 {
        lines.push(format!("{missing} draws without geometry"));
    }
    if info.untriangled > 0 {
        lines.push(format!(
            "{} draws of points or lines (positions recorded; the mesh shows triangles)",
            info.untriangled
        ));
    }
    if info.clipped > 0 {
        lines.push(format!(
            "{} triangles behind the eye left out",
            info.clipped
        ));
    }
    let dropped: u64 = info.draws.iter().map(|d| d.dropped_vertices).sum();
    if dropped > 0 {
        lines.push(format!(
            "{dropped} vertices over the capture budget not shown"
        ));
    }
    lines.push("drag: rotate · wheel: zoom · click: select".into());
    for (i, t) in lines.iter().enumerate() {
        painter.text(
            rect.left_top() + vec2(10.0, 8.0 + 16.0 * i as f32),
            Align2::LEFT_TOP,
            t,
            FontId::proportional(13.0),
            Color32::from_gray(if i + 1 == lines.len() { 150 } else { 220 }),
        );
    }
    if info.draws.is_empty() {
        return;
    }
    let unit = match &state.metric {
        crate::metric::Metric::Counter(n) => l.units.get(n).map(String::as_str),
        _ => None,
    };
    let (lo, hi) = match info.range {
        Some(r) => (label(r.0), label(r.1)),
        None => ("–".into(), "not measured".into()),
    };
    legend(
        &painter,
        rect,
        state.palette,
        false,
        &lo,
        &hi,
        &format!(
            "{}, per draw, min–max over the frame{}",
            state.metric.describe(unit),
            if state.scale == Scale::Log {
                ", log"
            } else {
                ""
            }
        ),
    );
}

fn heat_legend(painter: &egui::Painter, rect: Rect, state: &UiState, cx: &Context) {
    let (lo, hi) = state.range.unwrap_or(cx.auto_range);
    let android = state.palette == Palette::Android && state.quantity == Quantity::Overdraw;
    let mut title = state.quantity.unit().to_string();
    if state.quantity == Quantity::Heat {
        title.push_str(" per frame");
    }
    if state.scale == Scale::Log && !android {
        title.push_str(", log scale");
    }
    if state.range.is_some() {
        title.push_str(", manual range");
    }
    if let Some(note) = cx.auto.and_then(|r| r.note(state.palette)) {
        title.push_str(&format!("; ▲ {note}"));
    }
    if let Some(m) = cx.shown {
        caption(
            painter,
            rect,
            m.title(state.quantity),
            &m.notes(state.quantity),
        );
    }
    let (lo, hi) = if android {
        ("1".to_string(), "4+".to_string())
    } else {
        (label(f64::from(lo)), label(f64::from(hi)))
    };
    legend(painter, rect, state.palette, android, &lo, &hi, &title);
}

/// Which map is shown and what to know about it (how upstream cost was spread), at the
/// view's top left.
fn caption(painter: &egui::Painter, rect: Rect, title: Option<String>, notes: &[String]) {
    let Some(title) = title else { return };
    let font = FontId::proportional(12.0);
    let mut y = rect.top() + 8.0;
    for (i, line) in std::iter::once(&title).chain(notes).enumerate() {
        let galley = painter.layout(
            line.clone(),
            font.clone(),
            if i == 0 {
                Color32::WHITE
            } else {
                Color32::from_gray(210)
            },
            (rect.width() - 28.0).max(80.0),
        );
        let at = pos2(rect.left() + 10.0, y);
        painter.rect_filled(
            Rect::from_min_size(at - vec2(4.0, 2.0), galley.size() + vec2(8.0, 4.0)),
            3.0,
            Color32::from_black_alpha(190),
        );
        y += galley.size().y + 5.0;
        painter.galley(at, galley, Color32::WHITE);
    }
}

/// The palette strip with its ends and what it measures, at the view's bottom left.
fn legend(
    painter: &egui::Painter,
    rect: Rect,
    palette: Palette,
    android_layers: bool,
    lo: &str,
    hi: &str,
    title: &str,
) {
    let w = 240.0f32.min(rect.width() - 24.0).max(60.0);
    let bg = Rect::from_min_size(
        pos2(rect.left() + 10.0, rect.bottom() - 58.0),
        vec2(w + 16.0, 48.0),
    );
    painter.rect_filled(bg, 4.0, Color32::from_black_alpha(190));
    let strip = Rect::from_min_size(bg.min + vec2(8.0, 8.0), vec2(w, 12.0));
    if android_layers {
        for (k, c) in ANDROID.iter().enumerate() {
            let x0 = strip.left() + strip.width() * k as f32 / 4.0;
            let r = Rect::from_min_max(
                pos2(x0, strip.top()),
                pos2(x0 + strip.width() / 4.0, strip.bottom()),
            );
            painter.rect_filled(r, 0.0, Color32::from_rgb(c[0], c[1], c[2]));
        }
    } else {
        gradient_strip(painter, strip, |t| colour(palette, t));
    }
    let font = FontId::proportional(11.0);
    painter.text(
        pos2(strip.left(), strip.bottom() + 2.0),
        Align2::LEFT_TOP,
        lo,
        font.clone(),
        Color32::WHITE,
    );
    painter.text(
        pos2(strip.right(), strip.bottom() + 2.0),
        Align2::RIGHT_TOP,
        hi,
        font.clone(),
        Color32::WHITE,
    );
    painter.text(
        pos2(strip.left(), strip.bottom() + 15.0),
        Align2::LEFT_TOP,
        title,
        font,
        Color32::from_gray(200),
    );
}
