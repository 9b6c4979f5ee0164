//! From a map value to a colour: the `colorous` gradients and the Android "Debug GPU
//! overdraw" key, on a linear or logarithmic scale, and the range a map is painted on
//! ([`choose_range`]: by default clipped at a high percentile when a few outlier pixels would
//! wash the map out).

use serde::Serialize;

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
    /// Position of `v` on the palette, in [0, 1], for a map whose largest value is `max`:
    /// [`position`] on the range 0–`max`, with 0 for no heat and for an empty map.
    pub fn position(self, v: f64, max: f64) -> f64 {
        if max <= 0.0 {
            return 0.0;
        }
        position(v, 0.0, max, self, false).unwrap_or(0.0)
    }
}

/// Position of map value `v` on the palette for the range `lo`–`hi` on `scale`, in [0, 1];
/// `None` for no tint (no value, or below the range). With `android_layers` the value is a
/// layer count and lands in its band of the Android key (1, 2, 3, 4+ layers), whatever the
/// range. The viewer's heat shader (`viz/src/shaders/heat.wgsl`) maps a range the same way.
pub fn position(v: f64, lo: f64, hi: f64, scale: Scale, android_layers: bool) -> Option<f64> {
    if v <= 0.0 || v < lo {
        return None;
    }
    if android_layers {
        return Some((v.round().clamp(1.0, ANDROID.len() as f64) - 1.0) / 3.0);
    }
    if hi <= lo {
        return Some(1.0);
    }
    let t = match scale {
        Scale::Linear => (v - lo) / (hi - lo),
        Scale::Log => (v.ln_1p() - lo.ln_1p()) / (hi.ln_1p() - lo.ln_1p()),
    };
    Some(t.clamp(0.0, 1.0))
}

/// Percentile of a map's non-zero pixels that the default (`auto`) linear range ends at.
pub const AUTO_PERCENTILE: f64 = 0.995;

/// The default range clips only when the maximum is at least this many times
/// [`AUTO_PERCENTILE`]'s value: a few outlier pixels then hold most of the scale (glmark2-es2
/// `ideas`: a maximum of 85,619 ns per pixel against a 99th percentile of 601), while a map
/// whose top is not an outlier keeps its maximum and clips nothing.
pub const OUTLIER_FACTOR: f64 = 2.0;

/// Colour of the pixels above the range (clipped), opaque, for the gradients: magenta, which
/// none of inferno, turbo and viridis contain.
pub const CLIPPED: [u8; 3] = [0xff, 0x00, 0xff];
/// Colour of clipped pixels with the Android key, whose pink band is close to magenta.
pub const CLIPPED_ANDROID: [u8; 3] = [0x00, 0xff, 0xff];

impl Palette {
    /// The colour clipped pixels are painted with ([`CLIPPED`], [`CLIPPED_ANDROID`]).
    pub fn clipped(self) -> [u8; 3] {
        match self {
            Palette::Android => CLIPPED_ANDROID,
            _ => CLIPPED,
        }
    }

    /// The name of [`Palette::clipped`], for legends.
    pub fn clipped_name(self) -> &'static str {
        match self {
            Palette::Android => "cyan",
            _ => "magenta",
        }
    }
}

/// How the top of a map's range is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeChoice {
    /// From the distribution: the [`AUTO_PERCENTILE`] of the non-zero pixels when the maximum
    /// is an outlier ([`OUTLIER_FACTOR`]) on a linear scale; the maximum otherwise (a log
    /// scale already shows both ends).
    Auto,
    /// The map's maximum: nothing clipped.
    Max,
    /// A given value, in the map's unit.
    Fixed(f64),
}

/// How the range's top was found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum RangeTop {
    /// The maximum.
    Max,
    /// A percentile (0–1) of the non-zero pixels.
    Percentile(f64),
    /// Given.
    Fixed,
}

/// The range a map is painted on: 0 to `hi`, with `clipped` pixels above it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Range {
    /// Top of the range.
    pub hi: f64,
    /// The map's maximum.
    pub max: f64,
    /// Pixels whose value is above `hi`.
    pub clipped: u64,
    /// How `hi` was chosen.
    pub top: RangeTop,
}

impl Range {
    /// A legend note on the clipped pixels (`None` when nothing is clipped): `"12 px above
    /// 601 (99.5th percentile; max 85619) in magenta"`.
    pub fn note(&self, palette: Palette) -> Option<String> {
        if self.clipped == 0 {
            return None;
        }
        let how = match self.top {
            RangeTop::Percentile(q) => format!("{} percentile; ", ordinal(q * 100.0)),
            RangeTop::Max | RangeTop::Fixed => String::new(),
        };
        Some(format!(
            "{} px above {} ({how}max {}) in {}",
            self.clipped,
            label(self.hi),
            label(self.max),
            palette.clipped_name()
        ))
    }
}

/// `99.5th`, `99th`, `50th`.
fn ordinal(p: f64) -> String {
    let n = if p == p.round() {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    };
    format!("{n}th")
}

/// Chooses the range of a map's `values` (zeros and non-finite values are no heat).
pub fn choose_range(values: &[f64], choice: RangeChoice, scale: Scale) -> Range {
    let mut nonzero: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let max = nonzero.iter().copied().fold(0.0, f64::max);
    let above = |v: &[f64], hi: f64| v.iter().filter(|&&v| v > hi).count() as u64;
    match choice {
        RangeChoice::Max => Range {
            hi: max,
            max,
            clipped: 0,
            top: RangeTop::Max,
        },
        RangeChoice::Fixed(hi) => Range {
            hi,
            max,
            clipped: above(&nonzero, hi),
            top: RangeTop::Fixed,
        },
        RangeChoice::Auto => {
            let full = Range {
                hi: max,
                max,
                clipped: 0,
                top: RangeTop::Max,
            };
            if scale == Scale::Log || nonzero.is_empty() {
                return full;
            }
            let k = ((nonzero.len() - 1) as f64 * AUTO_PERCENTILE).round() as usize;
            let (_, &mut p, _) = nonzero.select_nth_unstable_by(k, f64::total_cmp);
            if p <= 0.0 || max < OUTLIER_FACTOR * p {
                return full;
            }
            Range {
                hi: p,
                max,
                clipped: above(&nonzero, p),
                top: RangeTop::Percentile(AUTO_PERCENTILE),
            }
        }
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
    fn a_range_from_zero_is_the_scale_position() {
        // `Scale::position` is `position` on 0–max: the same bits as its own former formula
        // (v / max, ln(1 + v) / ln(1 + max)), which the PNG's colours were made with.
        let values = [1e-9, 0.3, 1.0, 2.5, 10.0, 99.5, 1e6, f64::INFINITY];
        for v in values {
            for max in [1e-9, 0.5, 10.0, 1e6, f64::INFINITY] {
                let former = [
                    (v / max).clamp(0.0, 1.0),
                    (v.ln_1p() / max.ln_1p()).clamp(0.0, 1.0),
                ];
                for (s, f) in [Scale::Linear, Scale::Log].into_iter().zip(former) {
                    assert_eq!(s.position(v, max).to_bits(), f.to_bits(), "{v} {max}");
                    let p = position(v, 0.0, max, s, false).unwrap();
                    assert_eq!(p.to_bits(), f.to_bits(), "{v} {max}");
                }
            }
        }
        assert!(Scale::Linear.position(1.0, f64::NAN).is_nan());
        assert_eq!(position(0.0, 0.0, 10.0, Scale::Linear, false), None);
        assert_eq!(position(2.0, 3.0, 10.0, Scale::Linear, false), None);
        assert_eq!(position(5.0, 3.0, 3.0, Scale::Log, false), Some(1.0));
        assert_eq!(position(6.0, 2.0, 10.0, Scale::Linear, false), Some(0.5));
        // Android layers: 1, 2, 3, 4+ take the key's colours 1 to 4, whatever the range.
        for (layers, key) in [(1.0, 0), (2.0, 1), (3.0, 2), (7.0, 3)] {
            let t = position(layers, 0.0, 1.0, Scale::Log, true).unwrap();
            assert_eq!(Palette::Android.colour_at(t), ANDROID[key]);
        }
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
    fn a_few_outliers_are_clipped_at_the_percentile() {
        // 1,000 pixels of 1..=1000 ns and 3 outliers of 85,619: the range ends near the
        // 99.5th percentile and the outliers are counted.
        let mut v: Vec<f64> = (1..=1000).map(f64::from).collect();
        v.extend([85_619.0; 3]);
        v.extend([0.0; 500]);
        let r = choose_range(&v, RangeChoice::Auto, Scale::Linear);
        assert_eq!(r.top, RangeTop::Percentile(AUTO_PERCENTILE));
        assert_eq!(r.max, 85_619.0);
        assert!((990.0..=1000.0).contains(&r.hi), "{}", r.hi);
        assert_eq!(r.clipped, 3 + (1000 - r.hi as u64));
        let note = r.note(Palette::Inferno).unwrap();
        assert!(
            note.contains("px above")
                && note.contains("99.5th percentile")
                && note.contains("85619")
                && note.contains("magenta"),
            "{note}"
        );
        // Back to the full range, or the log scale: nothing clipped.
        for r in [
            choose_range(&v, RangeChoice::Max, Scale::Linear),
            choose_range(&v, RangeChoice::Auto, Scale::Log),
        ] {
            assert_eq!((r.hi, r.clipped, r.top), (85_619.0, 0, RangeTop::Max));
            assert_eq!(r.note(Palette::Inferno), None);
        }
        let r = choose_range(&v, RangeChoice::Fixed(999.5), Scale::Linear);
        assert_eq!((r.hi, r.clipped, r.top), (999.5, 4, RangeTop::Fixed));
    }

    #[test]
    fn a_map_without_outliers_keeps_its_maximum() {
        // Uniform, a gradient, a single pixel, nothing: the maximum is no outlier.
        let uniform = vec![7.0; 100];
        let gradient: Vec<f64> = (0..100).map(f64::from).collect();
        for v in [
            &uniform[..],
            &gradient[..],
            &[5.0][..],
            &[][..],
            &[0.0, f64::NAN][..],
        ] {
            let r = choose_range(v, RangeChoice::Auto, Scale::Linear);
            assert_eq!((r.clipped, r.top), (0, RangeTop::Max), "{v:?}");
            assert_eq!(r.hi, r.max);
        }
        // Just below the outlier factor: kept; at it: clipped.
        let mut v = vec![100.0; 1000];
        v[0] = 199.0;
        assert_eq!(
            choose_range(&v, RangeChoice::Auto, Scale::Linear).clipped,
            0
        );
        v[0] = 200.0;
        let r = choose_range(&v, RangeChoice::Auto, Scale::Linear);
        assert_eq!((r.hi, r.clipped), (100.0, 1));
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
