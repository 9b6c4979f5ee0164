//! Turning a [`HeatMap`] into an RGB image: the map over the frame, then the legend below.

use super::font::Face;
use gpuheat_analysis::palette::{blend, choose_range, Palette, RangeChoice, Scale, ALPHA, ANDROID};
use gpuheat_analysis::palette::{label, map_values};
use gpuheat_session::{DrawCoverage, HeatMap};
use std::ops::Range;

/// What to draw.
#[derive(Clone, Debug)]
pub struct Options {
    pub palette: Palette,
    pub scale: Scale,
    /// How the top of the range is chosen; pixels above it are painted in the palette's
    /// clipped colour and counted in the legend.
    pub range: RangeChoice,
    /// Show fragments per pixel instead of ns per pixel.
    pub overdraw: bool,
    /// Outline this draw's coverage box.
    pub draw: Option<DrawCoverage>,
    /// Which map this is (`total cost of screen`), put before the unit; empty: none.
    pub title: String,
    /// Further legend notes, each its own sentence.
    pub notes: Vec<String>,
}

/// An RGB8 image, top row first.
#[derive(Debug)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// Smallest legend height in pixels.
pub const MIN_LEGEND_H: u32 = 24;
/// First row of the palette strip, counted from the legend's top.
const STRIP_TOP: u32 = 2;
/// Smallest height of the palette strip; it grows with the text.
const MIN_STRIP_H: u32 = 10;
const TEXT: [u8; 3] = [0xff, 0xff, 0xff];
/// Width of the clipped colour's block at the strip's right end.
const CLIP_MARK: u32 = 4;
const OUTLINE: [u8; 3] = [0xff, 0xff, 0xff];

/// The map's values as f64, and the unit they are in.
fn values(map: &HeatMap, overdraw: bool) -> (Vec<f64>, &'static str) {
    let unit = if overdraw {
        "fragments per pixel"
    } else {
        "ns per pixel per frame"
    };
    (map_values(map, overdraw), unit)
}

/// The colour of one pixel's value, or `None` for no tint; `max` is the top of the range.
fn tint(v: f64, max: f64, opts: &Options) -> Option<[u8; 3]> {
    if v <= 0.0 {
        return None;
    }
    if opts.palette == Palette::Android && opts.overdraw {
        // The Android key counts layers, whatever the scale.
        let layers = v.round().clamp(1.0, 4.0) as usize;
        return Some(ANDROID[layers - 1]);
    }
    Some(opts.palette.colour_at(opts.scale.position(v, max)))
}

/// Breaks `text` into lines at spaces, each as long as `fits` allows (a longer word gets its
/// own line and is clipped when drawn).
fn wrap(text: &str, fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(line) if fits(&format!("{line} {word}")) => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The legend below a map: the palette strip, then lines of text, all sized to the map.
pub(super) struct Legend {
    face: Face,
    /// The strip's rows, counted from the legend's top.
    strip: Range<u32>,
}

impl Legend {
    /// The legend of a map `rows` pixels high.
    pub(super) fn for_rows(rows: u32) -> Legend {
        let face = Face::for_rows(rows);
        let strip_h = ((face.size() * 0.75).round() as u32).max(MIN_STRIP_H);
        Legend {
            face,
            strip: STRIP_TOP..STRIP_TOP + strip_h,
        }
    }

    /// Blank pixels left and right of the text.
    fn margin(&self) -> u32 {
        (self.face.size() / 3.0).round() as u32
    }

    /// Whether `text` fits on one line of an image `w` pixels wide.
    fn fits(&self, text: &str, w: u32) -> bool {
        self.face.width(text) + 2 * self.margin() <= w
    }

    /// The first text line's top, counted from the legend's top.
    fn text_top(&self) -> u32 {
        self.strip.end + (self.face.size() / 4.0).round() as u32
    }

    /// The height of a legend of `lines` text lines under its palette strip.
    pub(super) fn height(&self, lines: usize) -> u32 {
        self.text_top() + self.face.line_height() * lines as u32 + 1
    }

    /// A black image `w` pixels wide with room for the map's `map_h` rows and, below them,
    /// this legend with `lines` text lines (at least [`MIN_LEGEND_H`] rows).
    pub(super) fn image(&self, w: u32, map_h: u32, lines: usize) -> Image {
        let height = map_h + self.height(lines).max(MIN_LEGEND_H);
        Image {
            width: w,
            height,
            rgb: vec![0u8; w as usize * height as usize * 3],
        }
    }

    /// Paints the legend into `image`, the map's `map_h` rows with the legend's below them:
    /// the palette strip, `colour(t)` for t from 0 at the left to 1
    /// at the right, with `clipped`'s block at its right end when pixels are above the range,
    /// then the text lines, each a left-aligned and a right-aligned part.
    pub(super) fn paint(
        &self,
        image: &mut Image,
        map_h: u32,
        lines: &[(String, String)],
        colour: impl Fn(f64) -> [u8; 3],
        clipped: Option<[u8; 3]>,
    ) {
        let (w, rgb) = (image.width, &mut image.rgb);
        let row_len = w as usize * 3;
        for x in 0..w {
            let t = if w > 1 {
                f64::from(x) / f64::from(w - 1)
            } else {
                1.0
            };
            let c = match clipped {
                Some(c) if x >= w.saturating_sub(CLIP_MARK) => c,
                _ => colour(t),
            };
            for y in self.strip.clone() {
                let at = (map_h + y) as usize * row_len + x as usize * 3;
                rgb[at..at + 3].copy_from_slice(&c);
            }
        }
        self.text(rgb, w, image.height, map_h, lines);
    }

    /// Draws the legend's lines below a map of height `map_h`: each a left-aligned and a
    /// right-aligned part, under the palette strip.
    fn text(&self, rgb: &mut [u8], w: u32, total_h: u32, map_h: u32, lines: &[(String, String)]) {
        let line_h = self.face.line_height();
        for (n, (left, right)) in lines.iter().enumerate() {
            let y = i64::from(map_h + self.text_top() + line_h * n as u32);
            let margin = i64::from(self.margin());
            self.face.draw(rgb, w, total_h, margin, y, left, TEXT);
            if !right.is_empty() {
                let x = i64::from(w) - i64::from(self.face.width(right)) - margin;
                self.face.draw(rgb, w, total_h, x, y, right, TEXT);
            }
        }
    }
}

/// Renders the map (flipped: GL rows are bottom first) over the frame's colour buffer, or
/// over black when there is none, with the legend below it.
pub fn render(map: &HeatMap, opts: &Options) -> Image {
    let (w, h) = (map.width, map.height);
    let (vals, unit) = values(map, opts.overdraw);
    let android_layers = opts.palette == Palette::Android && opts.overdraw;
    let range = if android_layers {
        // The Android key counts layers: no range to choose.
        choose_range(&vals, RangeChoice::Max, opts.scale)
    } else {
        choose_range(&vals, opts.range, opts.scale)
    };
    let max = range.hi;

    // Legend text: scale labels, then unit and notes, wrapped to the width.
    let legend = Legend::for_rows(h);
    let (lo, hi) = if opts.palette == Palette::Android && opts.overdraw {
        ("0".to_string(), "4+".to_string())
    } else {
        ("0".to_string(), label(max))
    };
    let mut lines: Vec<(String, String)> = Vec::new();
    if legend.fits(&format!("{lo} {hi}"), w) {
        lines.push((lo, hi));
    } else {
        lines.push((lo, String::new()));
        lines.push((String::new(), hi));
    }
    let mut title = if opts.title.is_empty() {
        unit.to_string()
    } else {
        format!("{}, {unit}", opts.title)
    };
    if opts.scale == Scale::Log && !android_layers {
        title.push_str(", log scale");
    }
    if let Some(note) = range.note(opts.palette) {
        title.push_str(&format!("; {note}"));
    }
    for note in &opts.notes {
        title.push_str(&format!("; {note}"));
    }
    if let Some(d) = opts.draw {
        title.push_str(&format!(
            "; white box: draw {} ({} fragments, {} ns), whole frame shown",
            d.call, d.fragments, d.time_ns
        ));
    }
    lines.extend(
        wrap(&title, |line| legend.fits(line, w))
            .into_iter()
            .map(|l| (l, String::new())),
    );
    let mut image = legend.image(w, h, lines.len());

    let rgb = &mut image.rgb;
    let row_len = w as usize * 3;

    // The map, flipped.
    for gl_y in 0..h as usize {
        let out_row = (h as usize - 1 - gl_y) * row_len;
        for x in 0..w as usize {
            let i = gl_y * w as usize + x;
            let bg = if map.colour.is_empty() {
                [0, 0, 0]
            } else {
                [
                    map.colour[i * 4],
                    map.colour[i * 4 + 1],
                    map.colour[i * 4 + 2],
                ]
            };
            let px = if range.clipped > 0 && vals[i] > max {
                // Above the range: opaque, in a colour the palette does not hold.
                opts.palette.clipped()
            } else {
                match tint(vals[i], max, opts) {
                    Some(c) => blend(c, bg, ALPHA),
                    None => bg,
                }
            };
            rgb[out_row + x * 3..out_row + x * 3 + 3].copy_from_slice(&px);
        }
    }

    // The draw's box, in GL coordinates (x1, y1 exclusive), clipped to the map.
    if let Some(d) = opts.draw {
        let [x0, y0, x1, y1] = d.bbox;
        let (x1, y1) = (x1.min(w), y1.min(h));
        if x0 < x1 && y0 < y1 {
            let mut put = |x: u32, gl_y: u32| {
                let at = (h - 1 - gl_y) as usize * row_len + x as usize * 3;
                rgb[at..at + 3].copy_from_slice(&OUTLINE);
            };
            for x in x0..x1 {
                put(x, y0);
                put(x, y1 - 1);
            }
            for y in y0..y1 {
                put(x0, y);
                put(x1 - 1, y);
            }
        }
    }

    // The palette strip: position 0 at the left, 1 at the right; the clipped colour past its
    // hot end when pixels are above the range.
    let clipped = (range.clipped > 0).then(|| opts.palette.clipped());
    legend.paint(
        &mut image,
        h,
        &lines,
        |t| {
            if opts.palette == Palette::Android && opts.overdraw {
                // Five blocks: true colour (grey here), 1, 2, 3, 4+ layers.
                match ((t * 5.0).floor() as usize).min(4) {
                    0 => [0x80, 0x80, 0x80],
                    n => ANDROID[n - 1],
                }
            } else {
                opts.palette.colour_at(t)
            }
        },
        clipped,
    );
    image
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_analysis::palette::CLIPPED;

    fn map(w: u32, h: u32) -> HeatMap {
        let n = (w * h) as usize;
        HeatMap {
            frame: 0,
            context: 1,
            width: w,
            height: h,
            heat: (0..n).map(|i| i as f32).collect(),
            overdraw: (0..n).map(|i| (i % 6) as u32).collect(),
            colour: Vec::new(),
            draws: Vec::new(),
        }
    }

    fn opts(palette: Palette, overdraw: bool) -> Options {
        Options {
            palette,
            scale: Scale::Linear,
            range: RangeChoice::Auto,
            overdraw,
            draw: None,
            title: String::new(),
            notes: Vec::new(),
        }
    }

    fn px(img: &Image, x: u32, y: u32) -> [u8; 3] {
        let at = (y * img.width + x) as usize * 3;
        img.rgb[at..at + 3].try_into().unwrap()
    }

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(
            wrap("ns per pixel per frame", |l| l.len() <= 10),
            vec!["ns per", "pixel per", "frame"]
        );
        assert_eq!(
            wrap("abcdefghijkl x", |l| l.len() <= 4),
            vec!["abcdefghijkl", "x"]
        );
    }

    #[test]
    fn bottom_gl_row_is_the_last_image_row_and_zero_is_untinted() {
        let m = map(4, 3);
        let img = render(&m, &opts(Palette::Inferno, false));
        assert_eq!(img.width, 4);
        assert!(img.height >= 3 + MIN_LEGEND_H);
        // Pixel 0 (GL bottom left) has heat 0: black, no tint, at image row 2.
        assert_eq!(px(&img, 0, 2), [0, 0, 0]);
        // The hottest pixel (GL top right) is at image row 0.
        let hot = Palette::Inferno.colour_at(1.0);
        assert_eq!(px(&img, 3, 0), blend(hot, [0, 0, 0], ALPHA));
        // The strip's right end is the hot end.
        assert_eq!(px(&img, 3, 3 + STRIP_TOP), hot);
    }

    #[test]
    fn android_overdraw_counts_layers_and_colour_shows_through() {
        let mut m = map(6, 1);
        m.colour = vec![100; 6 * 4];
        let img = render(&m, &opts(Palette::Android, true));
        assert_eq!(px(&img, 0, 0), [100, 100, 100]);
        for layers in 1..=5 {
            let want = ANDROID[layers.min(4) - 1];
            assert_eq!(px(&img, layers as u32, 0), blend(want, [100; 3], ALPHA));
        }
    }

    #[test]
    fn outliers_are_clipped_in_their_own_colour_unless_the_full_range_is_asked() {
        // 1,000 pixels of 50 ns and one of 10,000.
        let mut m = map(1001, 1);
        m.heat = [50.0; 1000].into_iter().chain([10_000.0]).collect();
        let img = render(&m, &opts(Palette::Inferno, false));
        let hot = Palette::Inferno.colour_at(1.0);
        assert_eq!(px(&img, 1000, 0), CLIPPED);
        assert_eq!(px(&img, 999, 0), blend(hot, [0, 0, 0], ALPHA));
        assert_eq!(px(&img, 1000, 1 + STRIP_TOP), CLIPPED);
        let mut full = opts(Palette::Inferno, false);
        full.range = RangeChoice::Max;
        let img = render(&m, &full);
        assert_eq!(px(&img, 1000, 0), blend(hot, [0, 0, 0], ALPHA));
        assert_ne!(px(&img, 999, 0), blend(hot, [0, 0, 0], ALPHA));
        assert_eq!(px(&img, 1000, 1 + STRIP_TOP), hot);
    }

    #[test]
    fn the_draw_box_is_outlined() {
        let m = map(8, 8);
        let mut o = opts(Palette::Viridis, false);
        o.draw = Some(DrawCoverage {
            call: 2,
            fragments: 9,
            time_ns: 5,
            bbox: [1, 1, 4, 4],
        });
        let img = render(&m, &o);
        // GL (1,1) is image row 6; GL (3,3) image row 4; the inside GL (2,2) is not white.
        assert_eq!(px(&img, 1, 6), OUTLINE);
        assert_eq!(px(&img, 3, 4), OUTLINE);
        assert_eq!(px(&img, 1, 4), OUTLINE);
        assert_ne!(px(&img, 2, 5), OUTLINE);
        assert_ne!(px(&img, 4, 6), OUTLINE);
    }
}
