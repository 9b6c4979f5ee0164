//! Conversion between VG's 32-bit RGBA image formats and GL's RGBA8 bytes.
//!
//! VG names channels from the most significant byte of a 32-bit word (`VG_sRGBA_8888`:
//! R in bits 31–24, A in bits 7–0), with bit 6 of the format moving alpha first (ARGB)
//! and bit 7 swapping red and blue (BGRA). The library stores non-premultiplied RGBA8;
//! sRGB and linear formats are treated alike (no colour-space conversion).

use crate::consts::*;

/// Whether this implementation handles `format` (the 8888 family).
pub fn supported(format: VGenum) -> bool {
    (0..0x100).contains(&format) && matches!(format & 0x3F, 0 | 1 | 2 | 7 | 8 | 9)
}

/// (has alpha, premultiplied, alpha in the most significant byte) of a supported format.
fn layout(format: VGenum) -> (bool, bool, bool) {
    let base = format & 0x3F;
    (
        !matches!(base, 0 | 7),
        matches!(base, 2 | 9),
        format & 0x40 != 0,
    )
}

/// Decodes one pixel word of `format` to non-premultiplied RGBA8.
pub fn decode(format: VGenum, word: u32) -> [u8; 4] {
    let (has_alpha, pre, alpha_first) = layout(format);
    let bgr = format & 0x80 != 0;
    let b = word.to_be_bytes();
    let (a, c) = if alpha_first {
        (b[0], [b[1], b[2], b[3]])
    } else {
        (b[3], [b[0], b[1], b[2]])
    };
    let mut rgb = if bgr { [c[2], c[1], c[0]] } else { c };
    let a = if has_alpha { a } else { 255 };
    if pre && a > 0 && a < 255 {
        for v in &mut rgb {
            *v = ((*v as u32 * 255 + a as u32 / 2) / a as u32).min(255) as u8;
        }
    }
    [rgb[0], rgb[1], rgb[2], a]
}

/// Encodes non-premultiplied RGBA8 as one pixel word of `format`.
pub fn encode(format: VGenum, px: [u8; 4]) -> u32 {
    let (has_alpha, pre, alpha_first) = layout(format);
    let bgr = format & 0x80 != 0;
    let a = if has_alpha { px[3] } else { 255 };
    let mut rgb = [px[0], px[1], px[2]];
    if pre {
        for v in &mut rgb {
            *v = ((*v as u32 * a as u32 + 127) / 255) as u8;
        }
    }
    let c = if bgr { [rgb[2], rgb[1], rgb[0]] } else { rgb };
    let bytes = if alpha_first {
        [a, c[0], c[1], c[2]]
    } else {
        [c[0], c[1], c[2], a]
    };
    u32::from_be_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_round_trip() {
        assert!(supported(VG_sRGBA_8888) && supported(VG_sABGR_8888));
        assert!(!supported(3) && !supported(-1));
        assert_eq!(decode(VG_sRGBA_8888, 0x1122_3344), [0x11, 0x22, 0x33, 0x44]);
        assert_eq!(decode(VG_sABGR_8888, 0x4433_2211), [0x11, 0x22, 0x33, 0x44]);
        assert_eq!(decode(VG_sRGBX_8888, 0x1122_3300), [0x11, 0x22, 0x33, 0xFF]);
        for f in [VG_sRGBA_8888, VG_sABGR_8888, VG_lRGBA_8888] {
            assert_eq!(decode(f, encode(f, [1, 2, 3, 4])), [1, 2, 3, 4]);
        }
        assert_eq!(decode(VG_sRGBA_8888_PRE, 0x4000_0080), [0x80, 0, 0, 0x80]);
    }
}
