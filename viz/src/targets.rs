//! Render targets in the viewer (issue 11): the frame's cost flow (computed once per frame
//! change, it walks the frame's draws and maps), the map the Heat and Surface tabs show (the
//! screen's or an offscreen target's, own or total cost) presented as the [`HeatMap`] the
//! heat pass, the surface and the range already take, and the selector's thumbnails.

use crate::load::{FrameEntry, Loaded};
use crate::options::{Cost, Quantity};
use gpuheat_analysis::measure::flow::{FrameFlowCost, TargetKey};
use gpuheat_analysis::palette::{
    blend, choose_range, label, position, Palette, RangeChoice, Scale, ALPHA,
};
use gpuheat_session::HeatMap;

impl Cost {
    /// The cost shown: the one chosen, by default total where the frame has offscreen
    /// targets (as `gpuheat heatmap`); own on a frame without them, where both are the same
    /// map (so choosing does not remake it).
    pub fn resolve(chosen: Option<Cost>, entry: &FrameEntry) -> Cost {
        match chosen {
            _ if !entry.targets => Cost::Own,
            Some(c) => c,
            None => Cost::Total,
        }
    }
}

/// The map shown in the Heat and Surface tabs.
pub struct ShownMap {
    /// Its target; `None` for the screen of a frame without offscreen targets (no flow).
    pub key: Option<TargetKey>,
    /// The target as printed (`screen`, `3`).
    pub label: String,
    /// Which cost it holds.
    pub cost: Cost,
    /// Values (own or total), fragments and, for a screen, the colour buffer (an offscreen
    /// target has none in the session), as the heat pass draws them.
    pub map: HeatMap,
    /// Cost that flowed into this target from upstream passes, ns (0 for own cost).
    pub upstream_ns: f64,
    /// Cost of the frame that reaches no screen pixel (flow remainders), ns.
    pub unplaced_ns: f64,
    /// How upstream cost is spread within a consumer ([`FrameFlowCost::spreading`]).
    pub spreading: &'static str,
    /// Whether the frame has offscreen targets (the selector and the toggle are shown).
    pub flow: bool,
}

impl ShownMap {
    /// Whether it is a default framebuffer.
    pub fn is_screen(&self) -> bool {
        self.key.is_none_or(|k| k.is_screen())
    }

    /// What the map is, in a line: `total cost of screen`, `own cost of target 1 (32x32)`;
    /// `None` for a frame without offscreen targets, whose one map needs no name.
    pub fn title(&self, quantity: Quantity) -> Option<String> {
        if !self.flow {
            return None;
        }
        let what = if self.is_screen() {
            self.label.clone()
        } else {
            format!(
                "target {} ({}x{})",
                self.label, self.map.width, self.map.height
            )
        };
        if quantity == Quantity::Overdraw {
            // Fragments are the target's own: nothing flows into them.
            return Some(format!("overdraw of {what}"));
        }
        Some(match self.cost {
            Cost::Own => format!("own cost of {what}"),
            Cost::Total if self.upstream_ns > 0.0 => format!("total cost of {what}"),
            Cost::Total => format!("total cost of {what} (= own: nothing flows into it)"),
        })
    }

    /// What the legend must add about the map: where upstream cost went within a consumer,
    /// and what reaches no screen pixel.
    pub fn notes(&self, quantity: Quantity) -> Vec<String> {
        let mut notes = Vec::new();
        if quantity == Quantity::Overdraw || !self.flow || self.cost == Cost::Own {
            return notes;
        }
        if self.upstream_ns > 0.0 {
            notes.push(format!(
                "{} ms from upstream passes, spread {}",
                label(self.upstream_ns / 1e6),
                self.spreading
            ));
        }
        if self.is_screen() && self.unplaced_ns > 0.0 {
            notes.push(format!(
                "{} ms of the frame reach no screen pixel (see gpuheat report)",
                label(self.unplaced_ns / 1e6)
            ));
        }
        notes
    }
}

/// The target to show of a frame: `want` when the frame has it, else its screen, else its
/// first target.
pub fn resolve_target(flow: &FrameFlowCost, want: Option<TargetKey>) -> Option<TargetKey> {
    want.filter(|k| flow.target(*k).is_some())
        .or_else(|| {
            flow.targets
                .iter()
                .find(|t| t.key.is_screen())
                .map(|t| t.key)
        })
        .or_else(|| flow.targets.first().map(|t| t.key))
}

/// The map of `entry` to show: without a flow, the frame's screen map as recorded; with one,
/// target `want` (see [`resolve_target`]) with `cost`. `None` when the frame has no map.
pub fn shown_map(
    l: &Loaded,
    entry: &FrameEntry,
    flow: Option<&FrameFlowCost>,
    want: Option<TargetKey>,
    cost: Cost,
) -> Option<ShownMap> {
    let Some(flow) = flow else {
        let m = &l.session.heat[entry.heat?];
        return Some(ShownMap {
            key: None,
            label: "screen".into(),
            cost: Cost::Own,
            map: m.clone(),
            upstream_ns: 0.0,
            unplaced_ns: 0.0,
            spreading: gpuheat_analysis::measure::flow::SPREADING,
            flow: false,
        });
    };
    let key = resolve_target(flow, want)?;
    let t = flow.target(key)?;
    let map = flow.heat_map(&l.session, key, cost == Cost::Total)?;
    Some(ShownMap {
        key: Some(key),
        label: t.label.clone(),
        cost,
        map,
        upstream_ns: match cost {
            Cost::Total => (t.total_ns - t.own_ns).max(0.0),
            Cost::Own => 0.0,
        },
        unplaced_ns: flow.remainders.iter().map(|r| r.ns).sum(),
        spreading: flow.spreading,
        flow: true,
    })
}

/// Longest side of a thumbnail, in texels.
pub const THUMB: u32 = 96;

/// One render target in the selector.
pub struct Thumb {
    /// Which.
    pub key: TargetKey,
    /// As printed.
    pub label: String,
    /// Its map's size in pixels.
    pub size: [u32; 2],
    /// Its own cost over the frame's painted time (Σ T_d of every painted draw).
    pub share: f64,
    /// Its own cost, ns.
    pub own_ns: f64,
    /// Its map, painted as the big map would be (same cost, quantity, palette and scale;
    /// its own default range), at most [`THUMB`] texels a side.
    pub texture: egui::TextureHandle,
}

/// The selector's thumbnails of one frame.
pub struct Thumbnails {
    /// What they were made for: frame, cost, quantity, palette, scale.
    pub key: (u64, Cost, Quantity, Palette, Scale),
    /// Screens first, then offscreen targets in the flow's order.
    pub thumbs: Vec<Thumb>,
}

impl Thumbnails {
    /// Paints a thumbnail of every target of `flow`.
    pub fn make(
        ctx: &egui::Context,
        l: &Loaded,
        entry: &FrameEntry,
        flow: &FrameFlowCost,
        key: (u64, Cost, Quantity, Palette, Scale),
    ) -> Thumbnails {
        let (_, cost, quantity, palette, scale) = key;
        let thumbs = flow
            .targets
            .iter()
            .filter_map(|t| {
                let values: Vec<f64> = match (quantity, cost) {
                    (Quantity::Overdraw, _) => t.overdraw.iter().map(|&o| f64::from(o)).collect(),
                    (Quantity::Heat, Cost::Total) => flow.total_map(t.key)?,
                    (Quantity::Heat, Cost::Own) => t.own.iter().map(|&v| f64::from(v)).collect(),
                };
                let colour = if t.key.is_screen() {
                    entry
                        .heat
                        .map(|i| &l.session.heat[i])
                        .filter(|m| m.context == t.key.context)
                        .map_or(&[][..], |m| &m.colour[..])
                } else {
                    &[]
                };
                let android = palette == Palette::Android && quantity == Quantity::Overdraw;
                let image = thumbnail(
                    [t.width, t.height],
                    &values,
                    colour,
                    android,
                    palette,
                    scale,
                );
                Some(Thumb {
                    key: t.key,
                    label: t.label.clone(),
                    size: [t.width, t.height],
                    share: if flow.painted_ns > 0.0 {
                        t.own_ns / flow.painted_ns
                    } else {
                        0.0
                    },
                    own_ns: t.own_ns,
                    texture: ctx.load_texture(
                        format!("target-{:x}-{}", t.key.context, t.key.id),
                        image,
                        egui::TextureOptions::LINEAR,
                    ),
                })
            })
            .collect();
        Thumbnails { key, thumbs }
    }
}

/// A map of `size` (`values` bottom row first; `colour` its RGBA colour buffer, or empty)
/// reduced to at most [`THUMB`] texels a side by block maximum (a small hot spot stays
/// visible), rows top first, tinted on its own default range over the dimmed colour buffer
/// (black without one); `android`: overdraw in the Android key.
pub fn thumbnail(
    size: [u32; 2],
    values: &[f64],
    colour: &[u8],
    android: bool,
    palette: Palette,
    scale: Scale,
) -> egui::ColorImage {
    let [width, height] = size;
    let (w, h) = (width.max(1), height.max(1));
    let f = w.max(h).div_ceil(THUMB).max(1);
    let (tw, th) = (w.div_ceil(f), h.div_ceil(f));
    if values.len() != width as usize * height as usize {
        return egui::ColorImage::filled([tw as usize, th as usize], egui::Color32::BLACK);
    }
    let choice = if android {
        RangeChoice::Max
    } else {
        RangeChoice::Auto
    };
    // Its own default range, chosen as the big map's is.
    let hi = choose_range(values, choice, scale).hi;
    let mut cell = vec![0f64; (tw * th) as usize];
    for y in 0..height {
        for x in 0..width {
            let v = values[(y * width + x) as usize];
            let c = &mut cell[((y / f) * tw + x / f) as usize];
            if v > *c {
                *c = v;
            }
        }
    }
    let mut rgb = Vec::with_capacity((tw * th * 3) as usize);
    for ty in (0..th).rev() {
        for tx in 0..tw {
            // The colour buffer at the block's centre.
            let (cx, cy) = ((tx * f + f / 2).min(w - 1), (ty * f + f / 2).min(h - 1));
            let p = (cy * w + cx) as usize * 4;
            let bg = match colour.get(p..p + 3) {
                Some(c) => [c[0] / 3, c[1] / 3, c[2] / 3],
                None => [0, 0, 0],
            };
            let v = cell[(ty * tw + tx) as usize];
            let c = if v > hi && !android {
                palette.clipped()
            } else {
                match position(v, 0.0, hi, scale, android) {
                    Some(t) => blend(palette.colour_at(t), bg, ALPHA),
                    None => bg,
                }
            };
            rgb.extend_from_slice(&c);
        }
    }
    egui::ColorImage::from_rgb([tw as usize, th as usize], &rgb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thumbnail_keeps_a_one_pixel_hot_spot_and_its_aspect() {
        // 300 × 150: reduced by 4 to 75 × 38; one hot pixel among cold ones survives as a
        // hot texel (block maximum), in its block, rows top first.
        let (w, h) = (300, 150);
        let mut values = vec![0.0; (w * h) as usize];
        values[(10 * w + 200) as usize] = 50.0;
        let img = thumbnail([w, h], &values, &[], false, Palette::Inferno, Scale::Linear);
        assert_eq!(img.size, [75, 38]);
        let hot = Palette::Inferno.colour_at(1.0);
        let want = blend(hot, [0, 0, 0], ALPHA);
        let at = |x: usize, y: usize| {
            let c = img.pixels[y * 75 + x];
            [c.r(), c.g(), c.b()]
        };
        // GL row 10 is block row 2, image row 38 - 1 - 2.
        assert_eq!(at(50, 35), want);
        assert_eq!(at(10, 10), [0, 0, 0]);
    }

    #[test]
    fn a_small_map_is_not_enlarged() {
        let img = thumbnail(
            [32, 16],
            &[2.0; 512],
            &[],
            false,
            Palette::Inferno,
            Scale::Linear,
        );
        assert_eq!(img.size, [32, 16]);
    }
}
