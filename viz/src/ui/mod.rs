//! The egui side: the panels that show the state ([`UiState`]) and change it, laid out by
//! [`show`]. The GPU passes read the state after each UI pass (see `app.rs`).
//!
//! Inside: `context` (what the panels read, their shared colours) at the bottom, then the
//! panels (`view`, then `diff`, which reuses its helpers; `draws`, `inspector`, `strip`,
//! `toolbar`), then this file's layout over them.

mod context;
mod diff;
mod draws;
mod inspector;
mod live;
mod strip;
mod toolbar;
mod view;

pub use context::{Context, DiffView, MeshInfo, Symbols};

use crate::options::Tab;
use crate::state::UiState;

/// One UI pass.
pub fn show(ui: &mut egui::Ui, state: &mut UiState, cx: &mut Context) {
    toolbar::top(ui, state, cx);
    if let Some(live) = cx.live.as_deref_mut() {
        egui::Panel::top("live")
            .resizable(true)
            .default_size(360.0)
            .show(ui, |ui| live::show(ui, live));
    }
    let Some(loaded) = cx.loaded else {
        egui::CentralPanel::default().show(ui, |ui| {
            if cx.live.is_some() {
                ui.centered_and_justified(|ui| {
                    ui.label(
                        "Capture a few frames: they open here, in the Heat, 3D and Surface tabs.",
                    )
                });
            } else {
                view::loading(ui, cx)
            }
        });
        return;
    };
    egui::Panel::bottom("strip")
        .resizable(false)
        .exact_size(72.0)
        .show(ui, |ui| strip::show(ui, state, loaded));
    if state.tab == Tab::Diff {
        // The diff table needs the width (A, B, change, significance): it takes the left
        // panel, the images the rest; the inspector belongs to the single-session tabs.
        let max_list = (ui.available_width() * 0.6).max(260.0);
        egui::Panel::left("diff-table")
            .resizable(true)
            .default_size(620.0_f32.min(max_list))
            .min_size(240.0)
            .max_size(max_list)
            .show(ui, |ui| diff::table(ui, state, cx));
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ui, |ui| diff::view(ui, state, cx, loaded));
        state.scroll_to_selection = false;
        return;
    }
    // The draw table has a column per counter (fifteen on desktop GL): it scrolls sideways
    // inside a panel capped at 40% of the window, so the view and the inspector keep their
    // room.
    let max_list = (ui.available_width() * 0.4).max(240.0);
    egui::Panel::left("lists")
        .resizable(true)
        .default_size(400.0_f32.min(max_list))
        .min_size(220.0)
        .max_size(max_list)
        .show(ui, |ui| {
            egui::ScrollArea::horizontal()
                .id_salt("lists-sideways")
                .show(ui, |ui| draws::show(ui, state, loaded));
        });
    egui::Panel::right("inspector")
        .resizable(true)
        .default_size(330.0)
        .min_size(220.0)
        .show(ui, |ui| inspector::show(ui, state, cx, loaded));
    egui::CentralPanel::default()
        .frame(egui::Frame::NONE)
        .show(ui, |ui| view::show(ui, state, cx, loaded));
    state.scroll_to_selection = false;
}
