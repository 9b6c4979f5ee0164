//! `gpuheat heatmap`: render a frame's thermal painting (the `HEAT` record) to a PNG.
//!
//! The map is alpha-blended over the frame's colour buffer (or black when the agent could
//! not read it), flipped to image order, with a legend strip below: the palette from zero
//! to the map's maximum, the maximum's value, and the unit.
//!
//! `--draw CALL` cannot show one draw's own share: the record holds the summed map only
//! (one float target per frame keeps the GPU pass cheap), and a draw's share is not
//! recoverable from the sum. So it shows the whole frame's map and outlines the draw's
//! coverage box in white, and the legend says so.

mod colours;
pub mod diffmap;
mod font;
mod render;

pub use colours::{PaletteArg, ScaleArg};

use crate::shown;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use gpuheat_session::{CaptureMode, HeatMap, Session};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct HeatmapArgs {
    /// Session file.
    session: PathBuf,
    /// Frame number (as `gpuheat report` numbers them); default: the first frame with a map.
    #[arg(long)]
    frame: Option<u64>,
    /// Outline this draw's coverage box (its call index in the frame). The map stays the
    /// whole frame's: per-draw shares are not stored.
    #[arg(long, value_name = "CALL")]
    draw: Option<u32>,
    /// Colour map; android is the "Debug GPU overdraw" key.
    #[arg(long, value_enum, default_value_t = PaletteArg::Inferno)]
    palette: PaletteArg,
    /// Value scale.
    #[arg(long, value_enum, default_value_t = ScaleArg::Linear)]
    scale: ScaleArg,
    /// Show fragments per pixel (overdraw) instead of ns per pixel.
    #[arg(long)]
    overdraw: bool,
    /// Output PNG.
    #[arg(short, long, default_value = "heat.png")]
    output: PathBuf,
}

pub fn heatmap(args: HeatmapArgs) -> Result<ExitCode> {
    let session = Session::open(&args.session).with_context(|| shown(&args.session))?;
    let map = pick(&session, &args.session, args.frame)?;
    if map.width == 0 || map.height == 0 {
        bail!(
            "the heat map of frame {} is empty ({}x{})",
            map.frame,
            map.width,
            map.height
        );
    }
    let draw = match args.draw {
        None => None,
        Some(call) => Some(
            map.draws
                .iter()
                .copied()
                .find(|d| d.call == call)
                .ok_or_else(|| {
                    let calls: Vec<String> = map.draws.iter().map(|d| d.call.to_string()).collect();
                    anyhow!(
                        "frame {} has no draw {call} in its heat map; its draws: {}",
                        map.frame,
                        list(&calls)
                    )
                })?,
        ),
    };
    let image = render::render(
        map,
        &render::Options {
            palette: args.palette.into(),
            scale: args.scale.into(),
            overdraw: args.overdraw,
            draw,
        },
    );
    write_png(&args.output, &image)
        .map_err(|e| anyhow!("cannot write {}: {e}", shown(&args.output)))?;
    println!(
        "{}: frame {}, {}x{} map, {}",
        shown(&args.output),
        map.frame,
        map.width,
        map.height,
        if args.overdraw {
            "fragments per pixel"
        } else {
            "ns per pixel"
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The map of `frame`, or the first one; a one-line reason when there is none.
fn pick<'a>(session: &'a Session, path: &Path, frame: Option<u64>) -> Result<&'a HeatMap> {
    let with_maps: Vec<String> = session.heat.iter().map(|m| m.frame.to_string()).collect();
    match frame {
        Some(n) => {
            if let Some(map) = gpuheat_analysis::pick::heat_map(session, n) {
                return Ok(map);
            }
            if let Some(missing) = session.heat_missing.iter().find(|m| m.frame == n) {
                bail!("no heat map for frame {n}: {}", missing.reason);
            }
            if with_maps.is_empty() {
                bail!(
                    "no heat map for frame {n}: {} holds no heat maps: {}",
                    shown(path),
                    why_no_maps(session)
                );
            }
            bail!(
                "no heat map for frame {n}; frames with maps: {}",
                list(&with_maps)
            )
        }
        None => {
            if let Some(map) = session.heat.first() {
                return Ok(map);
            }
            match session.heat_missing.first() {
                Some(missing) => bail!(
                    "no heat map in {}: frame {}: {}",
                    shown(path),
                    missing.frame,
                    missing.reason
                ),
                None => bail!("no heat map in {}: {}", shown(path), why_no_maps(session)),
            }
        }
    }
}

/// Why a session without a heat map or a reason for one has none, and the command that
/// captures one: painting is asked for with `--heat` (full mode only).
fn why_no_maps(session: &Session) -> String {
    if session.frames.is_empty() {
        return "the session holds no captured frame".into();
    }
    let (why, flags) = match session.info.mode {
        CaptureMode::Full => ("it was captured without --heat", "--heat"),
        CaptureMode::Timeline => (
            "it was captured in timeline mode, and heat needs full mode",
            "--mode full --heat",
        ),
    };
    let again = match &session.attach {
        Some(_) => format!("gpuheat attach {} {flags}", session.info.pid),
        None => format!("gpuheat run {flags} -- {}", shell_words(&session.info.args)),
    };
    format!("{why}; capture again to paint its frames: {again}")
}

/// A command line as a shell reads it back: words with spaces or quotes single-quoted.
fn shell_words(args: &[String]) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    args.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(safe) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `a, b, c`, shortened after 20 items.
fn list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    let mut s = items
        .iter()
        .take(20)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > 20 {
        s.push_str(&format!(" and {} more", items.len() - 20));
    }
    s
}

/// Writes an RGB image as a PNG.
pub fn write_png(path: &Path, image: &render::Image) -> Result<()> {
    let file = File::create(path).map_err(|e| anyhow!("{e}"))?;
    let mut out = BufWriter::new(file);
    let mut encoder = png::Encoder::new(&mut out, image.width, image.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&image.rgb)?;
    writer.finish()?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shell_words;

    #[test]
    fn command_lines_read_back_as_the_same_words() {
        let words = |a: &[&str]| shell_words(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            words(&["./overdraw", "--size", "64x48"]),
            "./overdraw --size 64x48"
        );
        assert_eq!(
            words(&["/opt/my app/run", "it's", ""]),
            "'/opt/my app/run' 'it'\\''s' ''"
        );
    }
}
