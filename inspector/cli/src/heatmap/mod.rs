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

pub use colours::{parse_range, PaletteArg, ScaleArg};

use crate::shown;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use gpuheat_analysis::measure::flow;
use gpuheat_analysis::palette::RangeChoice;
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
    /// Which render target: `screen` (the default framebuffer, the default) or an offscreen
    /// target's id as `gpuheat report` prints it (`3`, or `0x5555aa:3` when contexts share
    /// ids).
    #[arg(long, value_name = "ID|screen")]
    target: Option<String>,
    /// The total-cost map: the target's own cost plus the cost of the offscreen passes whose
    /// textures its draws sampled, spread over those draws' fragments (the default when the
    /// frame has offscreen targets).
    #[arg(long, conflicts_with = "own")]
    total: bool,
    /// The own-cost map: only the draws into this target (the default without offscreen
    /// targets, where both are the same).
    #[arg(long)]
    own: bool,
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
    /// Top of the colour range: `auto` clips a few outlier pixels at the 99.5th percentile
    /// of the non-zero pixels (linear scale; they are painted magenta and counted in the
    /// legend), `max` paints the whole range, a number sets it (in the map's unit).
    #[arg(long, value_name = "auto|max|VALUE", default_value = "auto", value_parser = parse_range)]
    range: RangeChoice,
    /// Show fragments per pixel (overdraw) instead of ns per pixel.
    #[arg(long)]
    overdraw: bool,
    /// Output PNG.
    #[arg(short, long, default_value = "heat.png")]
    output: PathBuf,
    /// Paint what a damaged (truncated or corrupted) session still holds instead of failing.
    #[arg(long)]
    partial: bool,
}

pub fn heatmap(args: HeatmapArgs) -> Result<ExitCode> {
    let session = crate::open::open(&args.session, args.partial)?.session;
    let shown_map = choose(&session, &args)?;
    let map = &shown_map.map;
    if map.width == 0 || map.height == 0 {
        bail!(
            "the {} map of frame {} is empty ({}x{})",
            shown_map.label,
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
                        "frame {} has no draw {call} in its {} map; its draws: {}",
                        map.frame,
                        shown_map.label,
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
            range: args.range,
            overdraw: args.overdraw,
            draw,
            title: shown_map.title.clone(),
            notes: shown_map.notes.clone(),
        },
    );
    write_png(&args.output, &image)
        .map_err(|e| anyhow!("cannot write {}: {e}", shown(&args.output)))?;
    println!(
        "{}: frame {}, {}, {}x{} map, {}",
        shown(&args.output),
        map.frame,
        if shown_map.title.is_empty() {
            shown_map.label.clone()
        } else {
            shown_map.title.clone()
        },
        map.width,
        map.height,
        if args.overdraw {
            "fragments per pixel"
        } else {
            "ns per pixel"
        }
    );
    if let Some(d) = draw {
        let [x0, y0, x1, y1] = d.bbox;
        println!(
            "draw {}: {} fragments, box ({x0}, {y0})-({x1}, {y1}) outlined, {:.3} ms",
            d.call,
            d.fragments,
            d.time_ns as f64 / 1e6
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The map to paint, as a [`HeatMap`] (an offscreen target's has no colour buffer).
struct ShownMap {
    map: HeatMap,
    /// The target as printed.
    label: String,
    /// Which map (`total cost of screen`); empty for a frame without offscreen targets.
    title: String,
    /// What the legend must say about it.
    notes: Vec<String>,
}

/// The map the arguments ask for: the frame's screen (or `--target`), own or total cost.
fn choose(session: &Session, args: &HeatmapArgs) -> Result<ShownMap> {
    let wants_screen = args.target.as_deref().is_none_or(|t| t == "screen");
    let has_targets = |frame: u64| session.target_heat.iter().any(|t| t.frame == frame);
    // Without offscreen targets (or their records) the screen's own map is the whole story.
    let frame = match args.frame {
        Some(n) => n,
        None => {
            let screen = session.heat.first().filter(|_| wants_screen);
            match screen
                .map(|m| m.frame)
                .or_else(|| flow::frames_with_maps(session).first().copied())
            {
                Some(f) => f,
                // No map of any target: the screen's reasons (HMIS, how to capture one).
                None => {
                    return Err(pick(session, &args.session, None)
                        .err()
                        .unwrap_or_else(|| anyhow!("no maps")))
                }
            }
        }
    };
    if !has_targets(frame) {
        if !wants_screen {
            let with: Vec<String> = flow::frames_with_maps(session)
                .into_iter()
                .filter(|&f| has_targets(f))
                .map(|f| f.to_string())
                .collect();
            bail!(
                "frame {frame} has no offscreen render target maps (target {}); frames with them: {}",
                args.target.as_deref().unwrap_or_default(),
                list(&with)
            );
        }
        let map = pick(session, &args.session, Some(frame))?;
        return Ok(ShownMap {
            map: map.clone(),
            label: "screen".into(),
            title: if args.total || args.own || !session.target_heat.is_empty() {
                "own cost = total cost of screen (no offscreen targets in this frame)".into()
            } else {
                String::new()
            },
            notes: Vec::new(),
        });
    }
    let ff =
        flow::frame_flow(session, frame).ok_or_else(|| anyhow!("frame {frame} has no maps"))?;
    let no_screen = !ff.targets.iter().any(|t| t.key.is_screen());
    let target = match args.target.as_deref() {
        None | Some("screen") if no_screen => {
            // Why the screen has no map (HMIS), and what the frame has instead.
            return Err(match pick(session, &args.session, Some(frame)) {
                Err(e) => anyhow!(
                    "{e}; offscreen targets of frame {frame}: {}",
                    list(&labels(&ff))
                ),
                Ok(_) => anyhow!("frame {frame} has no screen map"),
            });
        }
        None => ff
            .targets
            .iter()
            .find(|t| t.key.is_screen())
            .ok_or_else(|| match pick(session, &args.session, Some(frame)) {
                Err(e) => anyhow!(
                    "{e}; offscreen targets of frame {frame}: {}",
                    list(&labels(&ff))
                ),
                Ok(_) => anyhow!("frame {frame} has no screen map"),
            })?,
        Some(name) => ff.find(name).map_err(|e| anyhow!("{e}"))?,
    };
    let total = !args.own;
    let upstream = target.total_ns - target.own_ns;
    let mut notes = Vec::new();
    let title = if args.overdraw {
        // Fragments are the target's own: nothing flows into them.
        format!("overdraw of {}", describe(target))
    } else if total {
        if upstream > 0.0 {
            notes.push(format!(
                "{} ms from upstream passes, spread {}",
                gpuheat_analysis::palette::label(upstream / 1e6),
                flow::SPREADING
            ));
        }
        format!("total cost of {}", describe(target))
    } else {
        format!("own cost of {}", describe(target))
    };
    let rest: f64 = ff.remainders.iter().map(|r| r.ns).sum();
    if total && !args.overdraw && target.key.is_screen() && rest > 0.0 {
        notes.push(format!(
            "{} ms of the frame reach no screen pixel (see gpuheat report)",
            gpuheat_analysis::palette::label(rest / 1e6)
        ));
    }
    let map = ff
        .heat_map(session, target.key, total)
        .ok_or_else(|| anyhow!("target {} has no map in frame {frame}", target.label))?;
    Ok(ShownMap {
        map,
        label: target.label.clone(),
        title,
        notes,
    })
}

/// `screen` or `target 3 (256x256)`.
fn describe(t: &flow::TargetCost) -> String {
    if t.key.is_screen() {
        t.label.clone()
    } else {
        format!("target {} ({}x{})", t.label, t.width, t.height)
    }
}

fn labels(ff: &flow::FrameFlowCost) -> Vec<String> {
    ff.targets.iter().map(|t| t.label.clone()).collect()
}

/// The map of `frame`, or the first one; a one-line reason when there is none.
fn pick<'a>(session: &'a Session, path: &Path, frame: Option<u64>) -> Result<&'a HeatMap> {
    let with_maps: Vec<String> = session.heat.iter().map(|m| m.frame.to_string()).collect();
    match frame {
        Some(n) => {
            if let Some(map) = gpuheat_analysis::measure::pick::heat_map(session, n) {
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
