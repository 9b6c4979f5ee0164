//! Diff mode (`gpuheat view A --diff B`): session B read on its own loader, then compared
//! with A on a background thread ([`gpuheat_analysis::compare::diff::diff`] for the draws,
//! [`gpuheat_analysis::compare::heat::heat_diff`] for the pixels), and the CPU-made images the Diff
//! tab shows: each side's heat map of its shown frame and the difference map.
//!
//! The images are small (one texel per frame pixel) and change only with the frame or the
//! palette, so they are made on the CPU and handed to egui as textures rather than given a
//! GPU pass of their own.

use crate::load::{LoadState, Loaded, Loader};
use gpuheat_analysis::compare::diff::{diff, Diff, DiffOptions};
use gpuheat_analysis::compare::heat::{diverging, heat_diff, HeatDiff, NOISE_GREY};
use gpuheat_analysis::measure::aggregate::SessionStats;
use gpuheat_analysis::open::Damage;
use gpuheat_analysis::palette::{blend, position, Palette, Scale, ALPHA};
use gpuheat_session::HeatMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;

/// Two sessions compared.
pub struct DiffData {
    /// Session B, loaded and analysed as A is.
    pub b: Arc<Loaded>,
    /// The draw-by-draw comparison of A and B.
    pub diff: Diff,
    /// The pixel-by-pixel comparison, or why there is none (no heat, different sizes): shown
    /// as a message in place of the difference map.
    pub heat: Result<HeatDiff, String>,
}

/// A row of the diff table: a matched pair, or a draw on one side only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffRow {
    /// Index into [`Diff::matched`].
    Matched(usize),
    /// Index into [`Diff::only_a`].
    OnlyA(usize),
    /// Index into [`Diff::only_b`].
    OnlyB(usize),
}

impl DiffData {
    /// The draws of a row: (index in A's [`SessionStats::draws`], in B's).
    pub fn draws(&self, row: DiffRow) -> (Option<usize>, Option<usize>) {
        let d = &self.diff;
        match row {
            DiffRow::Matched(i) => d
                .matched
                .get(i)
                .map_or((None, None), |m| (Some(m.a), Some(m.b))),
            DiffRow::OnlyA(i) => (d.only_a.get(i).copied(), None),
            DiffRow::OnlyB(i) => (None, d.only_b.get(i).copied()),
        }
    }

    /// Every row, in table order: matched pairs (as the diff ranks them), then A's only, then
    /// B's only.
    pub fn rows(&self) -> impl Iterator<Item = DiffRow> + '_ {
        let d = &self.diff;
        (0..d.matched.len())
            .map(DiffRow::Matched)
            .chain((0..d.only_a.len()).map(DiffRow::OnlyA))
            .chain((0..d.only_b.len()).map(DiffRow::OnlyB))
    }

    /// The row holding A's draw `a` (index in A's statistics).
    pub fn row_of_a(&self, a: usize) -> Option<DiffRow> {
        let d = &self.diff;
        d.matched
            .iter()
            .position(|m| m.a == a)
            .map(DiffRow::Matched)
            .or_else(|| d.only_a.iter().position(|&i| i == a).map(DiffRow::OnlyA))
    }

    /// The row holding B's draw `b`.
    pub fn row_of_b(&self, b: usize) -> Option<DiffRow> {
        let d = &self.diff;
        d.matched
            .iter()
            .position(|m| m.b == b)
            .map(DiffRow::Matched)
            .or_else(|| d.only_b.iter().position(|&i| i == b).map(DiffRow::OnlyB))
    }

    /// B's frame shown beside A's frame `a_frame`: the same frame number when B has it with a
    /// heat map (two runs of one program number their frames alike), else B's first
    /// heat-mapped frame.
    pub fn b_frame(&self, a_frame: Option<u64>) -> Option<u64> {
        a_frame
            .filter(|&f| self.b.frame(f).is_some_and(|e| e.heat.is_some()))
            .or_else(|| self.b.default_frame())
    }
}

/// The diff row of the draw that put the most heat on pixel (`x`, `y`) (GL window
/// coordinates) of frame `frame` of side A (`in_b` false) or B: a click on either map selects
/// that draw and its match.
pub fn row_at(d: &DiffData, a: &Loaded, in_b: bool, frame: u64, x: u32, y: u32) -> Option<DiffRow> {
    let (l, stats) = if in_b {
        (&*d.b, &d.diff.b.stats)
    } else {
        (a, &d.diff.a.stats)
    };
    let top = gpuheat_analysis::measure::pick::pick(&l.session, frame, x, y)?
        .draws
        .first()?
        .call;
    let i = stats.find(frame, top)?;
    if in_b {
        d.row_of_b(i)
    } else {
        d.row_of_a(i)
    }
}

/// The call index of draw `draw` of `stats` in frame `frame`, when it ran there.
pub fn call_in(stats: &SessionStats, draw: usize, frame: u64) -> Option<u32> {
    stats
        .draws
        .get(draw)?
        .occurrences
        .iter()
        .find(|(f, _)| *f == frame)
        .map(|&(_, c)| c)
}

/// The coverage box (GL window coordinates x0, y0, x1, y1, exclusive) of call `call` in the
/// heat map of frame `frame`, when it drew any fragment.
pub fn coverage_box(l: &Loaded, frame: u64, call: u32) -> Option<[u32; 4]> {
    let map = &l.session.heat[l.frame(frame)?.heat?];
    map.draws
        .iter()
        .find(|d| d.call == call && d.fragments > 0)
        .map(|d| d.bbox)
}

/// Where the comparison stands.
pub enum DiffState {
    /// Reading B, or waiting for A before comparing.
    Loading(&'static str),
    /// Compared.
    Ready(Arc<DiffData>),
    /// B could not be read.
    Failed(String),
}

/// Session B's load and the comparison that follows it.
pub struct DiffLoader {
    b: Loader,
    compute: Option<Receiver<DiffData>>,
    state: Option<Result<Arc<DiffData>, String>>,
}

impl DiffLoader {
    /// Starts reading `path` at once, alongside A.
    pub fn start(path: PathBuf, damage: Damage) -> DiffLoader {
        DiffLoader {
            b: Loader::start(path, damage),
            compute: None,
            state: None,
        }
    }

    /// Where it stands; never blocks. `a`: session A once loaded (the comparison starts then).
    pub fn poll(&mut self, a: Option<&Arc<Loaded>>) -> DiffState {
        if self.state.is_none() {
            match self.b.poll() {
                LoadState::Loading(_) => return DiffState::Loading("reading B…"),
                LoadState::Failed(e) => self.state = Some(Err(e)),
                LoadState::Ready(b) => {
                    let Some(a) = a else {
                        return DiffState::Loading("reading A…");
                    };
                    self.spawn(a, &b);
                    self.try_receive();
                }
            }
        }
        self.current()
    }

    /// Waits for B and the comparison with `a`.
    pub fn wait(&mut self, a: &Arc<Loaded>) -> Result<Arc<DiffData>, String> {
        if self.state.is_none() {
            match self.b.wait() {
                Err(e) => self.state = Some(Err(e)),
                Ok(b) => {
                    self.spawn(a, &b);
                    if let Some(rx) = &self.compute {
                        self.state = Some(match rx.recv() {
                            Ok(d) => Ok(Arc::new(d)),
                            Err(_) => Err("the comparing thread stopped".into()),
                        });
                    }
                }
            }
        }
        match self.current() {
            DiffState::Ready(d) => Ok(d),
            DiffState::Failed(e) => Err(e),
            DiffState::Loading(s) => Err(format!("the comparison did not finish ({s})")),
        }
    }

    fn current(&self) -> DiffState {
        match &self.state {
            Some(Ok(d)) => DiffState::Ready(d.clone()),
            Some(Err(e)) => DiffState::Failed(e.clone()),
            None => DiffState::Loading("comparing A and B…"),
        }
    }

    fn spawn(&mut self, a: &Arc<Loaded>, b: &Arc<Loaded>) {
        if self.compute.is_some() || self.state.is_some() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        let (a, b) = (a.clone(), b.clone());
        let spawned = std::thread::Builder::new()
            .name("gpuheat-viz-diff".into())
            .spawn(move || {
                // One after the other: each is parallel inside (rayon), so side by side they
                // would only contend for the same cores.
                let d = diff(&a.session, &b.session, &DiffOptions::default());
                // B's heat divided by the draws' common drift, as `gpuheat diff --heat` does.
                let drift = d.drift.map_or(1.0, |d| d.factor);
                let heat = heat_diff(&a.session, &b.session, drift, d.min_change)
                    .map_err(|e| e.to_string());
                let _ = tx.send(DiffData { b, diff: d, heat });
            });
        match spawned {
            Ok(_) => self.compute = Some(rx),
            Err(e) => self.state = Some(Err(format!("cannot start the comparing thread: {e}"))),
        }
    }

    fn try_receive(&mut self) {
        let Some(rx) = &self.compute else { return };
        match rx.try_recv() {
            Ok(d) => self.state = Some(Ok(Arc::new(d))),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                self.state = Some(Err("the comparing thread stopped".into()))
            }
        }
    }
}

/// A heat map as an image (rows top first): tinted with `palette` on the range 0–`max`
/// where it has heat, the frame's own colour dimmed where it has none, so A and B painted
/// on one range read alike.
pub fn heat_image(map: &HeatMap, max: f32, palette: Palette, scale: Scale) -> egui::ColorImage {
    let (w, h) = (map.width as usize, map.height as usize);
    let mut rgb = Vec::with_capacity(w * h * 3);
    for row in (0..h).rev() {
        for x in 0..w {
            let p = row * w + x;
            let bg = match map.colour.get(p * 4..p * 4 + 3) {
                Some(c) => [c[0] / 3, c[1] / 3, c[2] / 3],
                None => [0, 0, 0],
            };
            let v = f64::from(map.heat[p]);
            let c = match position(v, 0.0, f64::from(max), scale, false) {
                Some(t) => blend(palette.colour_at(t), bg, ALPHA),
                None => bg,
            };
            rgb.extend_from_slice(&c);
        }
    }
    egui::ColorImage::from_rgb([w, h], &rgb)
}

/// The difference map as an image (rows top first) and its symmetric range: blue where B is
/// cheaper, red where it is slower, [`NOISE_GREY`] within the noise band.
pub fn diff_image(h: &HeatDiff) -> (egui::ColorImage, f32) {
    let (w, ht) = (h.width as usize, h.height as usize);
    // The scale's end is the largest change beyond the noise: a pixel within the noise is
    // grey anyway and must not squash the colours of the real changes.
    let max = h
        .diff
        .iter()
        .zip(&h.noise)
        .filter(|(d, n)| d.abs() > **n)
        .fold(0.0f32, |m, (d, _)| m.max(d.abs()));
    let mut rgb = Vec::with_capacity(w * ht * 3);
    for row in (0..ht).rev() {
        for x in 0..w {
            let p = row * w + x;
            let d = h.diff[p];
            let c = if d.abs() <= h.noise[p] || !d.is_finite() {
                NOISE_GREY
            } else {
                diverging(f64::from(d), f64::from(max))
            };
            rgb.extend_from_slice(&c);
        }
    }
    (egui::ColorImage::from_rgb([w, ht], &rgb), max)
}

/// The largest heat of a map (0 without any).
pub fn max_heat(map: &HeatMap) -> f32 {
    map.heat
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f32::max)
}

/// The Diff tab's images, as egui textures.
pub struct DiffImages {
    /// What they were made for: A's frame, B's frame, palette, scale.
    pub key: (Option<u64>, Option<u64>, Palette, Scale),
    /// A's heat map of its shown frame, and its size in pixels.
    pub a: Option<(egui::TextureHandle, [u32; 2])>,
    /// B's, likewise.
    pub b: Option<(egui::TextureHandle, [u32; 2])>,
    /// The difference map, and its size.
    pub diff: Option<(egui::TextureHandle, [u32; 2])>,
    /// The range both heat maps are painted on: 0 to the larger maximum of the two.
    pub heat_max: f32,
    /// The difference map's symmetric range: ±`diff_max`.
    pub diff_max: f32,
}

impl DiffImages {
    /// Paints the images of A's frame `a_frame` and B's matching frame.
    pub fn make(
        ctx: &egui::Context,
        a: &Loaded,
        d: &DiffData,
        a_frame: Option<u64>,
        palette: Palette,
        scale: Scale,
    ) -> DiffImages {
        let b_frame = d.b_frame(a_frame);
        fn map(l: &Loaded, f: Option<u64>) -> Option<&HeatMap> {
            Some(&l.session.heat[l.frame(f?)?.heat?])
        }
        let (ma, mb) = (map(a, a_frame), map(&d.b, b_frame));
        let heat_max = ma.map_or(0.0, max_heat).max(mb.map_or(0.0, max_heat));
        let options = egui::TextureOptions::NEAREST;
        let texture = |name: &str, m: Option<&HeatMap>| {
            m.map(|m| {
                let image = heat_image(m, heat_max, palette, scale);
                (ctx.load_texture(name, image, options), [m.width, m.height])
            })
        };
        let (diff, diff_max) = match &d.heat {
            Ok(h) => {
                let (image, max) = diff_image(h);
                (
                    Some((
                        ctx.load_texture("diff-map", image, options),
                        [h.width, h.height],
                    )),
                    max,
                )
            }
            Err(_) => (None, 0.0),
        };
        DiffImages {
            key: (a_frame, b_frame, palette, scale),
            a: texture("diff-a", ma),
            b: texture("diff-b", mb),
            diff,
            heat_max,
            diff_max,
        }
    }
}
