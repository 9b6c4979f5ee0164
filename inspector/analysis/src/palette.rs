//! From a map value to a colour: the `colorous` gradients and the Android "Debug GPU
//! overdraw" key, on a linear or logarithmic scale.

/// The colour map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    /// colorous INFERNO: black, purple, orange, pale yellow.
    Inferno,
    /// colorous TURBO: blue, green, yellow, red.
    Turbo,
    /// colorous VIRIDIS: purple, teal, yellow.
    Viridis,
    /// Android's "Debug GPU overdraw" key: true colour, blue, green, pink, red.
    Android,
}

/// How values map onto the palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// `v / max`.
    Linear,
    /// `ln(1 + v) / ln(1 + max)`: shows cool regions next to a few very hot pixels.
    Log,
}

/// The Android key's colours for 1, 2, 3 and 4+ layers (0 layers: true colour, no tint).
pub const ANDROID: [[u8; 3]; 4] = [
    [0x30, 0x60, 0xff], // blue
    [0x30, 0xd0, 0x30], // green
    [0xff, 0x80, 0xc0], // pink
    [0xff, 0x20, 0x20], // red
];

/// Opacity of the map over the frame where the value is above zero.
pub const ALPHA: f64 = 0.6;

impl Palette {
    /// The colour at position `t` in [0, 1] of the palette; for android, `t` is quantized
    /// into the four tinted bands (see [`android_band`]).
    pub fn colour_at(self, t: f64) -> [u8; 3] {
        let gradient = match self {
            Palette::Inferno => colorous::INFERNO,
            Palette::Turbo => colorous::TURBO,
            Palette::Viridis => colorous::VIRIDIS,
            Palette::Android => return ANDROID[android_band(t).max(1) as usize - 1],
        };
        let c = gradient.eval_continuous(t);
        [c.r, c.g, c.b]
    }
}

/// Which band of the Android key a scaled heat value `t` in (0, 1] falls in: 1 (blue) below
/// a quarter of the maximum, 2 (green) below half, 3 (pink) below three quarters, 4 (red)
/// above; 0 for `t <= 0`. Together with 0 (no tint), five bands, like the overdraw key.
pub fn android_band(t: f64) -> u32 {
    if t <= 0.0 {
        0
    } else {
        1 + ((t * 4.0).floor() as u32).min(3)
    }
}

impl Scale {
    /// Position of `v` on the palette, in [0, 1], for a map whose largest value is `max`.
    pub fn position(self, v: f64, max: f64) -> f64 {
        if max <= 0.0 || v <= 0.0 {
            return 0.0;
        }
        let t = match self {
            Scale::Linear => v / max,
            Scale::Log => v.ln_1p() / max.ln_1p(),
        };
        t.clamp(0.0, 1.0)
    }
}

/// `fg` over `bg` with opacity `alpha`.
pub fn blend(fg: [u8; 3], bg: [u8; 3], alpha: f64) -> [u8; 3] {
    let mix = |f: u8, b: u8| (f64::from(f) * alpha + f64::from(b) * (1.0 - alpha)).round() as u8;
    [mix(fg[0], bg[0]), mix(fg[1], bg[1]), mix(fg[2], bg[2])]
}

/// A compact number for legends: `0`, `512`, `4.57`, `1.50e7` (only digits, `.`, `-`, `e`, so
/// the PNG legend's bitmap font has every glyph).
pub fn label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v == v.round() && v.abs() < 1e6 {
        format!("{v:.0}")
    } else if (0.01..1e5).contains(&v.abs()) {
        let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 3) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.2e}")
    }
}

/// A heat map's values as f64: its heat (ns per pixel), or with `overdraw` its fragments per
/// pixel. NaN or negative heat cannot come from a sound pass and reads as no heat.
pub fn map_values(map: &gpuheat_session::HeatMap, overdraw: bool) -> Vec<f64> {
    if overdraw {
        map.overdraw.iter().map(|&o| f64::from(o)).collect()
    } else {
        map.heat
            .iter()
            .map(|&h| {
                if h.is_finite() && h > 0.0 {
                    f64::from(h)
                } else {
                    0.0
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_map_zero_and_max_to_the_ends() {
        for s in [Scale::Linear, Scale::Log] {
            assert_eq!(s.position(0.0, 10.0), 0.0);
            assert_eq!(s.position(10.0, 10.0), 1.0);
            assert_eq!(s.position(5.0, 0.0), 0.0);
        }
        assert_eq!(Scale::Linear.position(2.5, 10.0), 0.25);
        assert!(Scale::Log.position(2.5, 10.0) > 0.5);
    }

    #[test]
    fn android_bands() {
        assert_eq!(android_band(0.0), 0);
        assert_eq!(android_band(0.01), 1);
        assert_eq!(android_band(0.3), 2);
        assert_eq!(android_band(0.6), 3);
        assert_eq!(android_band(0.8), 4);
        assert_eq!(android_band(1.0), 4);
        assert_eq!(Palette::Android.colour_at(1.0), ANDROID[3]);
    }

    #[test]
    fn gradient_ends_are_colorous_ends() {
        let hot = colorous::INFERNO.eval_rational(255, 256);
        assert_eq!(Palette::Inferno.colour_at(1.0), [hot.r, hot.g, hot.b]);
        assert_eq!(blend([200, 100, 0], [0, 0, 0], ALPHA), [120, 60, 0]);
        assert_eq!(blend([200, 100, 0], [10, 20, 30], 0.0), [10, 20, 30]);
    }

    #[test]
    fn labels_are_short() {
        assert_eq!(label(0.0), "0");
        assert_eq!(label(512.0), "512");
        assert_eq!(label(4.56789), "4.57");
        assert_eq!(label(0.5), "0.500");
        assert_eq!(label(123.456), "123");
        assert_eq!(label(1.5e7), "1.50e7");
        assert_eq!(label(0.00012), "1.20e-4");
    }
}
