//! The legends' text: Hack Regular, the open font egui ships (`epaint_default_fonts`; MIT and
//! the Bitstream Vera licence, both allowing redistribution), rasterised by `ab_glyph` with
//! antialiasing, at a size that follows the map so that a 1080p legend reads as well as a
//! small one. Hack covers Latin, Greek and Cyrillic and the usual signs (µ, ×, –, −).
//!
//! The binary already holds the font (the viewer's egui draws with it), so the legends cost
//! no second copy.

use ab_glyph::{point, Font, FontRef, GlyphId, PxScale, ScaleFont};

/// Smallest text size in pixels (one em): below it antialiased strokes blur together.
const MIN_PX: f32 = 12.0;
/// Largest text size: past it a legend takes more room than it helps.
const MAX_PX: f32 = 48.0;
/// Map rows per pixel of text size: a 1080-row map gets 24-pixel text, which still reads
/// when the image is shown scaled down to fit a 1080p screen.
const ROWS_PER_PX: f32 = 45.0;

/// The legend font at one size.
pub struct Face {
    font: FontRef<'static>,
    scale: PxScale,
}

impl Face {
    /// The face for the legend of a map `rows` pixels high.
    pub fn for_rows(rows: u32) -> Face {
        Face::with_size((rows as f32 / ROWS_PER_PX).round().clamp(MIN_PX, MAX_PX))
    }

    /// The face at `px` pixels per em.
    pub fn with_size(px: f32) -> Face {
        // Compiled in, not input: it parses unless the font crate itself is broken, which the
        // tests below would show.
        let font = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR)
            .expect("the bundled legend font parses");
        Face {
            font,
            scale: PxScale::from(px),
        }
    }

    /// Pixels per em.
    pub fn size(&self) -> f32 {
        self.scale.y
    }

    /// Distance from one line's top to the next's: ascent to descent plus the font's gap.
    pub fn line_height(&self) -> u32 {
        let s = self.font.as_scaled(self.scale);
        (s.height() + s.line_gap()).ceil() as u32
    }

    /// Each glyph of `text` with its origin's x, and the x past the last glyph. Origins are
    /// whole pixels: strokes then fall on pixel columns and stay crisp.
    fn layout(&self, text: &str) -> (Vec<(GlyphId, f32)>, f32) {
        let s = self.font.as_scaled(self.scale);
        let mut glyphs = Vec::with_capacity(text.len());
        let mut x = 0.0f32;
        let mut previous: Option<GlyphId> = None;
        for c in text.chars() {
            let id = s.glyph_id(c);
            if let Some(p) = previous {
                x += s.kern(p, id);
            }
            glyphs.push((id, x.round()));
            x += s.h_advance(id);
            previous = Some(id);
        }
        (glyphs, x)
    }

    /// Width in pixels of `text` as [`Face::draw`] draws it.
    pub fn width(&self, text: &str) -> u32 {
        self.layout(text).1.ceil() as u32
    }

    /// Draws `text` with its line's top-left corner at (`x`, `y`) into an RGB image of
    /// `width` × `height` (top row first), blending `colour` over what is there by each
    /// pixel's coverage, clipping at the edges.
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &self,
        rgb: &mut [u8],
        width: u32,
        height: u32,
        x: i64,
        y: i64,
        text: &str,
        colour: [u8; 3],
    ) {
        let s = self.font.as_scaled(self.scale);
        let baseline = s.ascent().round();
        for (id, gx) in self.layout(text).0 {
            let glyph = id.with_scale_and_position(self.scale, point(gx, baseline));
            let Some(outline) = s.outline_glyph(glyph) else {
                continue; // a space
            };
            let bounds = outline.px_bounds();
            let (left, top) = (x + bounds.min.x as i64, y + bounds.min.y as i64);
            outline.draw(|dx, dy, coverage| {
                let (px, py) = (left + i64::from(dx), top + i64::from(dy));
                if px < 0 || py < 0 || px >= i64::from(width) || py >= i64::from(height) {
                    return;
                }
                let at = (py as usize * width as usize + px as usize) * 3;
                let c = coverage.clamp(0.0, 1.0);
                for (under, over) in rgb[at..at + 3].iter_mut().zip(colour) {
                    let (u, o) = (linear(*under), linear(over));
                    *under = encoded(u + (o - u) * c);
                }
            });
        }
    }
}

/// An sRGB-encoded channel in linear light (the 2.2 power curve). Coverage is a share of the
/// pixel's light, so it is blended in linear light: blended as encoded values, a 1-pixel
/// stroke that half covers two pixels comes out dim grey and small text looks thin.
fn linear(v: u8) -> f32 {
    (f32::from(v) / 255.0).powf(2.2)
}

/// The inverse of [`linear`].
fn encoded(l: f32) -> u8 {
    (l.clamp(0.0, 1.0).powf(1.0 / 2.2) * 255.0).round() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHITE: [u8; 3] = [255; 3];

    /// `text` drawn white on black at `px`, with the image's size.
    fn drawn(face: &Face, text: &str) -> (Vec<u8>, u32, u32) {
        let (w, h) = (face.width(text) + 2, face.line_height());
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        face.draw(&mut rgb, w, h, 1, 0, text, WHITE);
        (rgb, w, h)
    }

    #[test]
    fn the_size_follows_the_map_within_bounds() {
        assert_eq!(Face::for_rows(48).size(), MIN_PX);
        assert_eq!(Face::for_rows(1080).size(), 24.0);
        assert_eq!(Face::for_rows(100_000).size(), MAX_PX);
        let (small, large) = (Face::for_rows(256), Face::for_rows(1080));
        assert!(large.line_height() > small.line_height());
        assert!(large.width("0.125 ms") > small.width("0.125 ms"));
    }

    #[test]
    fn non_ascii_signs_have_glyphs_of_their_own() {
        let face = Face::with_size(20.0);
        let s = face.font.as_scaled(face.scale);
        let notdef = s.glyph_id('\u{fffe}');
        for c in "µs × – − é ü".chars().filter(|c| *c != ' ') {
            let id = s.glyph_id(c);
            assert_ne!(id, notdef, "{c} has no glyph");
            let (rgb, _, _) = drawn(&face, &c.to_string());
            assert!(rgb.iter().any(|&v| v > 0), "{c} draws nothing");
        }
        // Distinct shapes: a hyphen, an en dash and a minus are not drawn alike.
        let shapes: Vec<Vec<u8>> = ["-", "–", "×", "x"]
            .iter()
            .map(|t| drawn(&face, t).0)
            .collect();
        for (i, a) in shapes.iter().enumerate() {
            for b in &shapes[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn strokes_are_solid_and_edges_clip() {
        let face = Face::with_size(20.0);
        let (rgb, w, h) = drawn(&face, "1 ms");
        // A vertical stem at 20 px covers whole pixels: pure white ones.
        assert!(rgb.chunks(3).any(|p| p == WHITE));
        // Nothing is drawn outside the glyphs' columns: the last column stays black.
        let last = (0..h).all(|y| {
            let at = ((y * w + w - 1) * 3) as usize;
            rgb[at..at + 3] == [0, 0, 0]
        });
        assert!(last);
        // Blending is in linear light: half coverage of white over black is 186, not 128.
        assert_eq!(encoded(linear(255) * 0.5), 186);
        assert_eq!(encoded(linear(0)), 0);
        assert_eq!(encoded(linear(200)), 200);
        // Partly outside the image on every side: clipped, not a panic.
        let mut small = vec![0u8; 4 * 4 * 3];
        face.draw(&mut small, 4, 4, -6, -8, "88", WHITE);
        face.draw(&mut small, 4, 4, 3, 2, "88", WHITE);
        assert_eq!(face.width(""), 0);
    }
}
