//! The Diff tab: the draw table of A against B (median and spread of each side, the change,
//! its q-value and verdict) and the two sessions' heat maps side by side over the difference
//! map. Selecting a row outlines its draw in A's frame and its match in B's.

use super::context::{gradient_strip, Context};
use super::view::{allocate_view, centre_text, snap};
use crate::diff::{call_in, coverage_box, row_at, DiffImages, DiffRow};
use crate::load::Loaded;
use crate::state::UiState;
use egui::{pos2, vec2, Align2, Color32, FontId, Rect, RichText, Sense, Stroke};
use egui_extras::{Column as Col, TableBuilder};
use gpuheat_analysis::compare::diff::{Comparison, Verdict, WorkChange};
use gpuheat_analysis::compare::heat::{diverging, NOISE_GREY};
use gpuheat_analysis::measure::aggregate::SessionStats;
use gpuheat_analysis::measure::stats::Summary;
use gpuheat_analysis::palette::label;

const ROW_H: f32 = 18.0;

/// The outline of the selected draw and of its match, on A's and B's maps: a green no
/// palette here uses (inferno, turbo's ends, the diverging map), so it reads on any of them.
pub const HIGHLIGHT: Color32 = Color32::from_rgb(0x30, 0xff, 0x60);

/// The selected draw's box on the difference map: magenta, which the red–blue map lacks.
pub const DIFF_HIGHLIGHT: Color32 = Color32::from_rgb(0xff, 0x40, 0xff);

const SLOWER: Color32 = Color32::from_rgb(0xf2, 0x6a, 0x5a);
const FASTER: Color32 = Color32::from_rgb(0x6a, 0xa8, 0xf8);

fn verdict_colour(v: Verdict) -> Color32 {
    match v {
        Verdict::Higher => SLOWER,
        Verdict::Lower => FASTER,
        Verdict::Noise => Color32::from_gray(170),
        Verdict::TooFew => Color32::from_gray(120),
    }
}

/// ns as ms with three decimals: the table's unit, as `gpuheat diff` prints.
fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn summary_cell(s: Option<&Summary>) -> String {
    match s {
        Some(s) => format!("{} ±{}", ms(s.median), ms(s.mad)),
        None => "–".into(),
    }
}

/// A summary's cell with its sample count and quartiles on hover.
fn summary_label(ui: &mut egui::Ui, s: Option<&Summary>) {
    let r = ui.label(summary_cell(s));
    if let Some(s) = s {
        r.on_hover_text(format!(
            "{} frames; quartiles {} – {} ms; min {} max {} ms",
            s.n,
            ms(s.q1),
            ms(s.q3),
            ms(s.min),
            ms(s.max)
        ));
    }
}

fn no_data(ui: &mut egui::Ui, cx: &Context) -> bool {
    match &cx.diff {
        None => {
            ui.weak("no session B: open with --diff B");
            true
        }
        Some(d) if d.data.is_none() => {
            ui.weak(d.status.unwrap_or("comparing…"));
            true
        }
        Some(_) => false,
    }
}

/// The draw table.
pub fn table(ui: &mut egui::Ui, state: &mut UiState, cx: &Context) {
    if no_data(ui, cx) {
        return;
    }
    let Some(d) = cx.diff.as_ref().and_then(|d| d.data) else {
        return;
    };
    let diff = &d.diff;
    let (sa, sb) = (&diff.a.stats, &diff.b.stats);
    let a_frame = state.frame;
    let b_frame = d.b_frame(a_frame);
    ui.horizontal(|ui| {
        ui.strong("Draws, A vs B");
        ui.weak(format!(
            "medians ±MAD over {} / {} steady frames, ms; q: false-discovery-corrected p",
            diff.a.steady_frames, diff.b.steady_frames
        ));
    });
    ui.separator();
    let rows: Vec<DiffRow> = d.rows().collect();
    if rows.is_empty() {
        ui.weak("neither session has draws");
        return;
    }
    let selected_row = state
        .diff_row
        .and_then(|r| rows.iter().position(|&x| x == r));
    let mut table = TableBuilder::new(ui)
        .id_salt("diff-draws")
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
        .column(Col::auto().at_least(44.0))
        .column(Col::initial(150.0).at_least(60.0).clip(true))
        .column(Col::auto().at_least(70.0))
        .column(Col::auto().at_least(70.0))
        .column(Col::auto().at_least(50.0))
        .column(Col::auto().at_least(44.0))
        .column(Col::auto().at_least(40.0))
        .column(Col::remainder().at_least(50.0));
    if state.scroll_to_selection {
        if let Some(r) = selected_row {
            table = table.scroll_to_row(r, Some(egui::Align::Center));
        }
    }
    let mut clicked = None;
    table
        .header(ROW_H + 2.0, |mut h| {
            for (title, tip) in [
                (
                    "call",
                    "the draw's call index in A's shown frame (b: in B's)",
                ),
                ("draw", "the call as made, its source line on hover"),
                ("A", "A's median ±MAD, ms"),
                ("B", "B's median ±MAD, ms"),
                ("Δ ms", "B − A: Hodges–Lehmann shift"),
                ("Δ %", "the shift relative to A's median"),
                ("q", "Mann–Whitney p, Benjamini–Hochberg corrected"),
                (
                    "verdict",
                    "beyond the noise of both sides and the minimum change?",
                ),
            ] {
                h.col(|ui| {
                    ui.strong(title).on_hover_text(tip);
                });
            }
        })
        .body(|body| {
            body.rows(ROW_H, rows.len(), |mut row| {
                let r = rows[row.index()];
                let (ia, ib) = d.draws(r);
                let draw = ia.map(|i| &sa.draws[i]).or(ib.map(|i| &sb.draws[i]));
                row.set_selected(state.diff_row == Some(r));
                let call = match (ia, ib) {
                    (Some(i), _) => a_frame
                        .and_then(|f| call_in(sa, i, f))
                        .map(|c| c.to_string()),
                    (None, Some(i)) => b_frame
                        .and_then(|f| call_in(sb, i, f))
                        .map(|c| format!("b:{c}")),
                    _ => None,
                };
                row.col(|ui| {
                    ui.monospace(call.unwrap_or_else(|| "–".into()));
                });
                row.col(|ui| {
                    let text = draw.map_or("", |d| d.text.as_str());
                    let source = draw
                        .and_then(|d| d.source.as_deref())
                        .unwrap_or("no source line");
                    ui.label(text).on_hover_text(format!("{text}\n{source}"));
                });
                match r {
                    DiffRow::Matched(i) => {
                        let m = &diff.matched[i];
                        let work = m.work.as_ref().filter(|_| m.moved_with_work());
                        comparison_cells(&mut row, m.time(), work)
                    }
                    DiffRow::OnlyA(_) | DiffRow::OnlyB(_) => {
                        fn rank(side: &SessionStats, i: usize) -> Option<&Summary> {
                            side.draws[i].metric(side.rank_metric())
                        }
                        row.col(|ui| summary_label(ui, ia.and_then(|i| rank(sa, i))));
                        row.col(|ui| summary_label(ui, ib.and_then(|i| rank(sb, i))));
                        for _ in 0..3 {
                            row.col(|ui| {
                                ui.weak("–");
                            });
                        }
                        row.col(|ui| {
                            let (word, colour) = if ia.is_some() {
                                ("only in A", FASTER)
                            } else {
                                ("only in B", SLOWER)
                            };
                            ui.label(RichText::new(word).color(colour));
                        });
                    }
                }
                if row.response().clicked() {
                    clicked = Some(r);
                }
            });
        });
    if let Some(r) = clicked {
        if state.diff_row == Some(r) {
            state.diff_row = None;
            state.selected = None;
        } else {
            state.select_row(d, r);
            state.scroll_to_selection = false;
        }
    }
}

/// A comparison's cells; `work`: the work change that explains its time's change (the draw
/// drew more or less, and is listed apart from the slower and faster ones, as `diff` does).
fn comparison_cells(row: &mut egui_extras::TableRow, c: &Comparison, work: Option<&WorkChange>) {
    row.col(|ui| summary_label(ui, c.a.as_ref()));
    row.col(|ui| summary_label(ui, c.b.as_ref()));
    row.col(|ui| {
        ui.label(
            c.shift
                .map_or("–".into(), |s| format!("{:+.3}", s.estimate / 1e6)),
        )
        .on_hover_text(
            c.shift
                .map(|s| format!("95% interval {} to {} ms", ms(s.low), ms(s.high)))
                .unwrap_or_default(),
        );
    });
    row.col(|ui| {
        ui.label(
            c.relative
                .map_or("–".into(), |r| format!("{:+.1}", r * 100.0)),
        );
    });
    row.col(|ui| {
        ui.label(c.q.map_or("–".into(), |q| format!("{q:.3}")));
    });
    row.col(|ui| match work {
        Some(w) => {
            let word = if c.verdict == Verdict::Higher {
                "more work"
            } else {
                "less work"
            };
            ui.label(RichText::new(word).color(Color32::from_gray(200)))
                .on_hover_text(format!(
                    "{w}: the time moved with the work; the draw is no {} at it",
                    c.verdict.word(&c.unit)
                ));
        }
        None => {
            ui.label(RichText::new(c.verdict.word(&c.unit)).color(verdict_colour(c.verdict)));
        }
    });
}

/// Where an image of `size` pixels lands in `area`: as large as fits, centred, on whole
/// pixels.
fn place(area: Rect, size: [u32; 2], ppp: f32) -> Rect {
    let (w, h) = (size[0].max(1) as f32, size[1].max(1) as f32);
    let scale = (area.width() / w).min(area.height() / h);
    snap(
        Rect::from_center_size(area.center(), vec2(w * scale, h * scale)),
        ppp,
    )
}

/// A GL coverage box (origin bottom left, exclusive ends) on an image of `size` pixels
/// shown at `at`.
fn box_on(at: Rect, size: [u32; 2], b: [u32; 4]) -> Rect {
    let sx = at.width() / size[0].max(1) as f32;
    let sy = at.height() / size[1].max(1) as f32;
    let h = size[1] as f32;
    Rect::from_min_max(
        pos2(
            at.left() + b[0] as f32 * sx,
            at.top() + (h - b[3] as f32) * sy,
        ),
        pos2(
            at.left() + b[2] as f32 * sx,
            at.top() + (h - b[1] as f32) * sy,
        ),
    )
}

/// Outlines `r` just outside its pixels, in whole pixels, so the draw's own pixels stay
/// visible and the colour is exact.
fn outline(painter: &egui::Painter, r: Rect, colour: Color32, ppp: f32) {
    let w = 2.0 / ppp;
    let r = snap(r.expand(w), ppp);
    painter.rect_stroke(
        r.shrink(w * 0.5),
        0.0,
        Stroke::new(w, colour),
        egui::StrokeKind::Middle,
    );
}

fn title(painter: &egui::Painter, at: Rect, text: &str) {
    painter.text(
        at.left_top() + vec2(0.0, -4.0),
        Align2::LEFT_BOTTOM,
        text,
        FontId::proportional(12.0),
        Color32::from_gray(220),
    );
}

/// The central area: A | B on top, the difference map below.
pub fn view(ui: &mut egui::Ui, state: &mut UiState, cx: &Context, a: &Loaded) {
    let ppp = ui.ctx().pixels_per_point();
    let (rect, response) = allocate_view(ui, state, Sense::click());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_rgb(0x12, 0x12, 0x16));
    let Some(dv) = &cx.diff else {
        centre_text(&painter, rect, "no session B: open with --diff B");
        return;
    };
    let (Some(d), Some(images)) = (dv.data, dv.images) else {
        centre_text(&painter, rect, dv.status.unwrap_or("comparing…"));
        return;
    };
    let (a_frame, b_frame) = (images.key.0, images.key.1);
    let pad = 22.0;
    let top = Rect::from_min_max(rect.min, pos2(rect.max.x, rect.center().y));
    let bottom = Rect::from_min_max(pos2(rect.min.x, rect.center().y), rect.max);
    let left = Rect::from_min_max(top.min, pos2(top.center().x, top.max.y)).shrink(pad * 0.5);
    let right = Rect::from_min_max(pos2(top.center().x, top.min.y), top.max).shrink(pad * 0.5);
    let left = Rect::from_min_max(left.min + vec2(0.0, pad * 0.5), left.max);
    let right = Rect::from_min_max(right.min + vec2(0.0, pad * 0.5), right.max);
    // Room at the bottom for the legend.
    let lower = Rect::from_min_max(
        bottom.min + vec2(pad * 0.5, pad),
        bottom.max - vec2(pad * 0.5, 76.0),
    );

    let (sel_a, sel_b) = match state.diff_row {
        Some(r) => d.draws(r),
        None => (None, None),
    };
    let box_a = sel_a
        .zip(a_frame)
        .and_then(|(i, f)| Some((f, call_in(&d.diff.a.stats, i, f)?)))
        .and_then(|(f, c)| coverage_box(a, f, c));
    let box_b = sel_b
        .zip(b_frame)
        .and_then(|(i, f)| Some((f, call_in(&d.diff.b.stats, i, f)?)))
        .and_then(|(f, c)| coverage_box(&d.b, f, c));

    let name = |l: &Loaded| {
        l.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let frame_text = |f: Option<u64>| f.map_or("no frame".into(), |f| format!("frame {f}"));
    let mut clicked = None;
    for (side, area, img, frame, l, b) in [
        ("A", left, &images.a, a_frame, a, box_a),
        ("B", right, &images.b, b_frame, &*d.b, box_b),
    ] {
        let head = format!("{side}: {} · {}", name(l), frame_text(frame));
        match img {
            Some((tex, size)) => {
                let at = place(area, *size, ppp);
                painter.image(
                    tex.id(),
                    at,
                    Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
                    Color32::WHITE,
                );
                title(&painter, at, &head);
                if let Some(b) = b {
                    outline(&painter, box_on(at, *size, b), HIGHLIGHT, ppp);
                }
                if let (Some(p), Some(f)) = (response.interact_pointer_pos(), frame) {
                    if response.clicked() && at.contains(p) {
                        let [x, y] = map_pixel(at, *size, p);
                        clicked = Some(row_at(d, a, side == "B", f, x, y));
                    }
                }
                if let Some(p) = response.hover_pos().filter(|p| at.contains(*p)) {
                    let [x, y] = map_pixel(at, *size, p);
                    response.clone().on_hover_ui_at_pointer(|ui| {
                        ui.label(format!("{side}: pixel {x}, {y}"));
                        ui.weak("click: select the draw with the most heat here");
                    });
                }
            }
            None => {
                title(&painter, area, &head);
                centre_text(&painter, area, &format!("{side}'s frame has no heat map"));
            }
        }
    }

    match (&d.heat, &images.diff) {
        (Ok(h), Some((tex, size))) => {
            let at = place(lower, *size, ppp);
            painter.image(
                tex.id(),
                at,
                Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
                Color32::WHITE,
            );
            title(
                &painter,
                at,
                &format!(
                    "B − A: median heat per pixel over {} / {} frames",
                    h.frames.0, h.frames.1
                ),
            );
            if let Some(b) = box_a.or(box_b) {
                outline(&painter, box_on(at, *size, b), DIFF_HIGHLIGHT, ppp);
            }
            if let Some(p) = response.hover_pos().filter(|p| at.contains(*p)) {
                let [x, y] = map_pixel(at, *size, p);
                let i = (y * size[0] + x) as usize;
                response.clone().on_hover_ui_at_pointer(|ui| {
                    ui.label(format!("pixel {x}, {y}"));
                    ui.label(format!(
                        "A {} ns · B {} ns · B − A {} ns (noise ±{} ns)",
                        label(f64::from(h.a[i])),
                        label(f64::from(h.b[i])),
                        label(f64::from(h.diff[i])),
                        label(f64::from(h.noise[i]))
                    ));
                });
            }
            legend(&painter, bottom, images);
        }
        (Err(e), _) => {
            // The draws still compare; only the pixels cannot: say why where the map would be.
            ui.put(
                lower.shrink(20.0),
                egui::Label::new(
                    RichText::new(format!("no difference map: {e}"))
                        .size(13.0)
                        .color(Color32::from_rgb(0xf2, 0xc0, 0x4a)),
                )
                .wrap(),
            );
        }
        (Ok(_), None) => centre_text(&painter, lower, "painting the difference map…"),
    }
    match clicked {
        Some(Some(r)) => state.select_row(d, r),
        // A click where no draw of the table put heat clears the selection.
        Some(None) => {
            state.diff_row = None;
            state.selected = None;
        }
        None => {}
    }
}

/// The map pixel (GL window coordinates, origin bottom left) under screen point `p` of an
/// image of `size` pixels shown at `at`.
fn map_pixel(at: Rect, size: [u32; 2], p: egui::Pos2) -> [u32; 2] {
    let x = ((p.x - at.left()) / at.width() * size[0] as f32).max(0.0) as u32;
    let row = ((p.y - at.top()) / at.height() * size[1] as f32).max(0.0) as u32;
    [
        x.min(size[0].saturating_sub(1)),
        size[1].saturating_sub(1).saturating_sub(row),
    ]
}

/// The diverging scale ±max with its ends, and what grey means, at the bottom left.
fn legend(painter: &egui::Painter, area: Rect, images: &DiffImages) {
    let max = f64::from(images.diff_max);
    let w = 240.0f32.min(area.width() - 24.0).max(60.0);
    let bg = Rect::from_min_size(
        pos2(area.left() + 10.0, area.bottom() - 72.0),
        vec2(w + 16.0 + 70.0, 62.0),
    );
    painter.rect_filled(bg, 4.0, Color32::from_black_alpha(190));
    let strip = Rect::from_min_size(bg.min + vec2(8.0, 8.0), vec2(w, 12.0));
    gradient_strip(painter, strip, |t| {
        let [r, g, b] = diverging((2.0 * t - 1.0) * max, max);
        Color32::from_rgb(r, g, b)
    });
    let grey = Rect::from_min_size(pos2(strip.right() + 10.0, strip.top()), vec2(12.0, 12.0));
    let [r, g, b] = NOISE_GREY;
    painter.rect_filled(grey, 0.0, Color32::from_rgb(r, g, b));
    let font = FontId::proportional(11.0);
    painter.text(
        grey.right_center() + vec2(4.0, 0.0),
        Align2::LEFT_CENTER,
        "noise",
        font.clone(),
        Color32::WHITE,
    );
    for (x, align, text) in [
        (strip.left(), Align2::LEFT_TOP, format!("-{}", label(max))),
        (strip.center().x, Align2::CENTER_TOP, "0".to_string()),
        (strip.right(), Align2::RIGHT_TOP, format!("+{}", label(max))),
    ] {
        painter.text(
            pos2(x, strip.bottom() + 2.0),
            align,
            text,
            font.clone(),
            Color32::WHITE,
        );
    }
    painter.text(
        pos2(strip.left(), strip.bottom() + 15.0),
        Align2::LEFT_TOP,
        "ns per pixel per frame, B − A: blue cheaper in B, red slower",
        font.clone(),
        Color32::from_gray(200),
    );
    painter.text(
        pos2(strip.left(), strip.bottom() + 29.0),
        Align2::LEFT_TOP,
        format!(
            "A's and B's maps above: one range, 0–{} ns per pixel",
            label(f64::from(images.heat_max))
        ),
        font,
        Color32::from_gray(170),
    );
}
