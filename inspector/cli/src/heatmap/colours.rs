//! The `--palette` and `--scale` options of `gpuheat heatmap` and `gpuheat view`: clap's
//! side of [`gpuheat_analysis::palette`], which stays free of the command line.

use clap::ValueEnum;
use gpuheat_analysis::palette::{Palette, RangeChoice, Scale};

/// The colour map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PaletteArg {
    /// colorous INFERNO: black, purple, orange, pale yellow.
    Inferno,
    /// colorous TURBO: blue, green, yellow, red.
    Turbo,
    /// colorous VIRIDIS: purple, teal, yellow.
    Viridis,
    /// Android's "Debug GPU overdraw" key: true colour, blue, green, pink, red.
    Android,
}

impl From<PaletteArg> for Palette {
    fn from(p: PaletteArg) -> Self {
        match p {
            PaletteArg::Inferno => Palette::Inferno,
            PaletteArg::Turbo => Palette::Turbo,
            PaletteArg::Viridis => Palette::Viridis,
            PaletteArg::Android => Palette::Android,
        }
    }
}

/// How values map onto the palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScaleArg {
    /// `v / max`.
    Linear,
    /// `ln(1 + v) / ln(1 + max)`: shows cool regions next to a few very hot pixels.
    Log,
}

impl From<ScaleArg> for Scale {
    fn from(s: ScaleArg) -> Self {
        match s {
            ScaleArg::Linear => Scale::Linear,
            ScaleArg::Log => Scale::Log,
        }
    }
}

/// `--range`: `auto` (from the distribution), `max` (the whole range) or a value in the map's
/// unit.
pub fn parse_range(s: &str) -> Result<RangeChoice, String> {
    match s {
        "auto" => Ok(RangeChoice::Auto),
        "max" => Ok(RangeChoice::Max),
        _ => match s.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(RangeChoice::Fixed(v)),
            _ => Err(format!(
                "{s:?} is not auto, max or a positive number (the top of the range, in the map's unit)"
            )),
        },
    }
}
