//! A tiny 5×7 bitmap font for the heat map legend: digits, lowercase letters and the few
//! signs numbers and units need. Uppercase letters are drawn as lowercase; anything else as
//! `?`.

/// Glyph width in pixels.
pub const GLYPH_W: u32 = 5;
/// Glyph height in pixels.
pub const GLYPH_H: u32 = 7;
/// Horizontal distance from one glyph to the next.
pub const ADVANCE: u32 = GLYPH_W + 1;

/// Each glyph is 7 rows, top row first; bit 4 of a row is its leftmost pixel.
const GLYPHS: [(char, [u8; 7]); 49] = [
    (' ', [0, 0, 0, 0, 0, 0, 0]),
    (
        '0',
        [
            0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110,
        ],
    ),
    (
        '1',
        [
            0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110,
        ],
    ),
    (
        '2',
        [
            0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111,
        ],
    ),
    (
        '3',
        [
            0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110,
        ],
    ),
    (
        '4',
        [
            0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010,
        ],
    ),
    (
        '5',
        [
            0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110,
        ],
    ),
    (
        '6',
        [
            0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110,
        ],
    ),
    (
        '7',
        [
            0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000,
        ],
    ),
    (
        '8',
        [
            0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110,
        ],
    ),
    (
        '9',
        [
            0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100,
        ],
    ),
    (
        'a',
        [
            0b00000, 0b00000, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111,
        ],
    ),
    (
        'b',
        [
            0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b11110,
        ],
    ),
    (
        'c',
        [
            0b00000, 0b00000, 0b01110, 0b10000, 0b10000, 0b10001, 0b01110,
        ],
    ),
    (
        'd',
        [
            0b00001, 0b00001, 0b01101, 0b10011, 0b10001, 0b10001, 0b01111,
        ],
    ),
    (
        'e',
        [
            0b00000, 0b00000, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110,
        ],
    ),
    (
        'f',
        [
            0b00110, 0b01001, 0b01000, 0b11100, 0b01000, 0b01000, 0b01000,
        ],
    ),
    (
        'g',
        [
            0b00000, 0b01111, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110,
        ],
    ),
    (
        'h',
        [
            0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001,
        ],
    ),
    (
        'i',
        [
            0b00100, 0b00000, 0b01100, 0b00100, 0b00100, 0b00100, 0b01110,
        ],
    ),
    (
        'j',
        [
            0b00010, 0b00000, 0b00110, 0b00010, 0b00010, 0b10010, 0b01100,
        ],
    ),
    (
        'k',
        [
            0b10000, 0b10000, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010,
        ],
    ),
    (
        'l',
        [
            0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110,
        ],
    ),
    (
        'm',
        [
            0b00000, 0b00000, 0b11010, 0b10101, 0b10101, 0b10001, 0b10001,
        ],
    ),
    (
        'n',
        [
            0b00000, 0b00000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001,
        ],
    ),
    (
        'o',
        [
            0b00000, 0b00000, 0b01110, 0b10001, 0b10001, 0b10001, 0b01110,
        ],
    ),
    (
        'p',
        [
            0b00000, 0b00000, 0b11110, 0b10001, 0b11110, 0b10000, 0b10000,
        ],
    ),
    (
        'q',
        [
            0b00000, 0b00000, 0b01101, 0b10011, 0b01111, 0b00001, 0b00001,
        ],
    ),
    (
        'r',
        [
            0b00000, 0b00000, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000,
        ],
    ),
    (
        's',
        [
            0b00000, 0b00000, 0b01110, 0b10000, 0b01110, 0b00001, 0b11110,
        ],
    ),
    (
        't',
        [
            0b01000, 0b01000, 0b11100, 0b01000, 0b01000, 0b01001, 0b00110,
        ],
    ),
    (
        'u',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b10011, 0b01101,
        ],
    ),
    (
        'v',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100,
        ],
    ),
    (
        'w',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b10101, 0b10101, 0b01010,
        ],
    ),
    (
        'x',
        [
            0b00000, 0b00000, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001,
        ],
    ),
    (
        'y',
        [
            0b00000, 0b00000, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110,
        ],
    ),
    (
        'z',
        [
            0b00000, 0b00000, 0b11111, 0b00010, 0b00100, 0b01000, 0b11111,
        ],
    ),
    (
        '.',
        [
            0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b01100,
        ],
    ),
    (
        ',',
        [
            0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b00100, 0b01000,
        ],
    ),
    (
        ':',
        [
            0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b01100, 0b00000,
        ],
    ),
    (
        ';',
        [
            0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b00100, 0b01000,
        ],
    ),
    (
        '-',
        [
            0b00000, 0b00000, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000,
        ],
    ),
    (
        '+',
        [
            0b00000, 0b00100, 0b00100, 0b11111, 0b00100, 0b00100, 0b00000,
        ],
    ),
    (
        '(',
        [
            0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00100, 0b00010,
        ],
    ),
    (
        ')',
        [
            0b01000, 0b00100, 0b00010, 0b00010, 0b00010, 0b00100, 0b01000,
        ],
    ),
    (
        '/',
        [
            0b00000, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b00000,
        ],
    ),
    (
        '=',
        [
            0b00000, 0b00000, 0b11111, 0b00000, 0b11111, 0b00000, 0b00000,
        ],
    ),
    (
        '\'',
        [
            0b00100, 0b00100, 0b01000, 0b00000, 0b00000, 0b00000, 0b00000,
        ],
    ),
    (
        '?',
        [
            0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b00000, 0b00100,
        ],
    ),
];

/// The rows of `c`'s glyph.
pub fn glyph(c: char) -> [u8; 7] {
    let c = c.to_ascii_lowercase();
    GLYPHS
        .iter()
        .find(|(g, _)| *g == c)
        .or_else(|| GLYPHS.iter().find(|(g, _)| *g == '?'))
        .map(|(_, rows)| *rows)
        .expect("the table has '?'")
}

/// Width in pixels of `text` drawn with [`draw`].
pub fn text_width(text: &str) -> u32 {
    let n = text.chars().count() as u32;
    (n * ADVANCE).saturating_sub(1)
}

/// Draws `text` with its top-left corner at (`x`, `y`) into an RGB image of `width` ×
/// `height` (top row first), clipping at the edges.
pub fn draw(rgb: &mut [u8], width: u32, height: u32, x: i64, y: i64, text: &str, colour: [u8; 3]) {
    for (i, c) in text.chars().enumerate() {
        let gx = x + i as i64 * i64::from(ADVANCE);
        for (row, bits) in glyph(c).iter().enumerate() {
            for col in 0..GLYPH_W {
                if bits & (1 << (GLYPH_W - 1 - col)) == 0 {
                    continue;
                }
                let (px, py) = (gx + i64::from(col), y + row as i64);
                if px < 0 || py < 0 || px >= i64::from(width) || py >= i64::from(height) {
                    continue;
                }
                let at = (py as usize * width as usize + px as usize) * 3;
                rgb[at..at + 3].copy_from_slice(&colour);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_is_unique_and_fits_five_columns() {
        for (i, (c, rows)) in GLYPHS.iter().enumerate() {
            assert!(rows.iter().all(|r| *r < 32), "{c}");
            for (d, other) in &GLYPHS[i + 1..] {
                assert_ne!(c, d);
                assert!(rows != other || *c == ' ', "{c} and {d} look the same");
            }
        }
        for c in "0123456789.e-+ abcdefghijklmnopqrstuvwxyz".chars() {
            assert!(GLYPHS.iter().any(|(g, _)| *g == c), "{c} missing");
        }
        assert_eq!(glyph('N'), glyph('n'));
        assert_eq!(glyph('\u{e9}'), glyph('?'));
    }

    #[test]
    fn text_is_drawn_and_clipped() {
        let (w, h) = (8u32, 8u32);
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        draw(&mut rgb, w, h, 0, 0, "1", [255; 3]);
        // Row 0 of '1' is 00100: only column 2 is set.
        assert_eq!(
            &rgb[..15],
            &[0, 0, 0, 0, 0, 0, 255, 255, 255, 0, 0, 0, 0, 0, 0]
        );
        draw(&mut rgb, w, h, -3, 5, "88", [9; 3]);
        assert_eq!(text_width("88"), 11);
    }
}
