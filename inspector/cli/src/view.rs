//! `gpuheat view SESSION`: the viewer, in a window or rendered offscreen to a PNG; `--pick`
//! prints which draws a pixel's heat came from (and, with offscreen targets, which upstream
//! passes its total cost came from); `--diff B` compares the session with B.

use crate::heatmap::{PaletteArg, ScaleArg};
use crate::shown;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use gpuheat_analysis::measure::flow;
use gpuheat_analysis::measure::pick::{self, PickMethod};
use gpuheat_session::Session;
use gpuheat_viz::{Cost, Tab, ViewOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ViewArgs {
    /// The session file (A, the baseline, with --diff).
    #[arg(required_unless_present = "live")]
    session: Option<PathBuf>,
    /// Watch a running program instead: get into process PID as `gpuheat attach` does and
    /// stream its frames into the live panel (frame-time chart, per-draw table over the last
    /// frames, the frame under the cursor's calls); its Capture buttons take the next frames
    /// in full mode and show them in the usual tabs. Closing the viewer detaches.
    #[arg(long, value_name = "PID", conflicts_with_all = ["session", "diff", "pick"])]
    live: Option<i32>,
    /// With --live: where captures and Save write the session [default: NAME-PID-live.gpuheat].
    #[arg(long, short = 'o', requires = "live")]
    output: Option<PathBuf>,
    /// With --live --screenshot: seconds to watch before the image is taken.
    #[arg(long, default_value_t = 5.0, requires = "live")]
    live_seconds: f64,
    /// With --live --screenshot: take a capture of N frames a third of the way in, and show
    /// it in the image.
    #[arg(long, value_name = "N", requires = "live", value_parser = clap::value_parser!(u32).range(1..))]
    live_capture: Option<u32>,
    /// With --live-capture: the capture paints heat maps.
    #[arg(long, requires = "live_capture")]
    live_heat: bool,
    /// With --live: seconds to wait for the program to swap (to get in at a frame boundary).
    #[arg(long, default_value_t = 10, requires = "live")]
    timeout: u64,
    /// Compare with this session: A and B side by side with the difference map, and the
    /// draw table of A, B, the change and its significance (the Diff tab, shown first).
    #[arg(long, value_name = "B")]
    diff: Option<PathBuf>,
    /// Render offscreen to this PNG instead of opening a window (no display needed).
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// With --screenshot: open a real window, screenshot it and close it (needs a display).
    #[arg(long, requires = "screenshot")]
    window: bool,
    /// Which view to show first; default: diff with --diff, else heat.
    #[arg(long, value_enum)]
    tab: Option<TabArg>,
    /// Select a draw: `draw=CALL`, the call's index in its frame (as `gpuheat report` lists);
    /// with --diff also `draw=b:CALL`, a call of B's shown frame. In the Diff tab the draw's
    /// match on the other side is selected too.
    #[arg(long, value_name = "draw=CALL")]
    select: Option<String>,
    /// The frame to show (as `gpuheat report` numbers them); default: the first heat-mapped
    /// frame, else the first.
    #[arg(long)]
    frame: Option<u64>,
    /// Pick a pixel: `X,Y` in GL window coordinates (origin bottom left). Without a window or
    /// screenshot, prints the draws that touched it and exits. With --diff and no --select:
    /// selects the draw with the most heat at that pixel of A, and its match in B.
    #[arg(long, value_name = "X,Y")]
    pick: Option<String>,
    /// Which render target the Heat and Surface tabs show: `screen` (the default) or an
    /// offscreen target's id as `gpuheat report` prints it (`3`, or `0x5555aa:3` when contexts
    /// share ids). With --pick and no window, the pixel is of that target.
    #[arg(long, value_name = "ID|screen")]
    target: Option<String>,
    /// The total-cost map: the target's own cost plus the cost of the offscreen passes whose
    /// output it sampled, spread over the sampling draws' pixels (the default when the frame
    /// has offscreen targets).
    #[arg(long, conflicts_with = "own")]
    total: bool,
    /// The own-cost map: only the draws into the target.
    #[arg(long)]
    own: bool,
    /// Show what a damaged (truncated or corrupted) session still holds instead of failing.
    #[arg(long)]
    partial: bool,
    /// With --pick and no window: print the pick as JSON.
    #[arg(long, requires = "pick")]
    json: bool,
    /// Colour map.
    #[arg(long, value_enum, default_value_t = PaletteArg::Inferno)]
    palette: PaletteArg,
    /// How heat maps onto the palette.
    #[arg(long, value_enum, default_value_t = ScaleArg::Linear)]
    scale: ScaleArg,
    /// Window or screenshot size, `WxH`.
    #[arg(long, default_value = "1280x800")]
    size: String,
}

#[derive(Clone, Copy, ValueEnum)]
enum TabArg {
    /// The thermal map over the frame.
    Heat,
    /// The frame's geometry as meshes coloured by cost.
    #[value(name = "3d", alias = "mesh")]
    Mesh,
    /// The heat map as a 3D surface.
    Surface,
    /// With --diff: A and B side by side, the difference map and the diff's draw table.
    Diff,
}

pub fn view(args: ViewArgs) -> Result<ExitCode> {
    let size = parse_size(&args.size)?;
    if let Some(pid) = args.live {
        if args.screenshot.is_some() && args.window {
            bail!("--live --screenshot renders offscreen; --window is for session files");
        }
        if !(args.live_seconds.is_finite() && args.live_seconds > 0.0) {
            bail!("--live-seconds must be a positive number of seconds");
        }
        return crate::live::live(crate::live::LiveRequest {
            pid,
            output: args.output.clone(),
            timeout: std::time::Duration::from_secs(args.timeout.max(1)),
            screenshot: args.screenshot.clone().map(|png| {
                (
                    png,
                    gpuheat_viz::LiveShot {
                        seconds: args.live_seconds,
                        capture: args.live_capture.map(|n| (n, args.live_heat)),
                    },
                )
            }),
            opts: live_options(&args, size),
        });
    }
    let session = args
        .session
        .clone()
        .expect("clap requires it without --live");
    let select = args.select.as_deref().map(parse_select).transpose()?;
    if let Some(b) = &args.diff {
        if !b.exists() {
            bail!("{}: no such session file", shown(b));
        }
    } else {
        if matches!(args.tab, Some(TabArg::Diff)) {
            bail!("--tab diff needs a session to compare with: --diff B");
        }
        if matches!(select, Some((true, _))) {
            bail!("--select draw=b:CALL needs a session B: --diff B");
        }
    }
    let pick_xy = args.pick.as_deref().map(parse_pick).transpose()?;
    if !session.exists() {
        bail!("{}: no such session file", shown(&session));
    }
    if let (Some((x, y)), None) = (pick_xy, &args.screenshot) {
        return print_pick(&args, &session, x, y);
    }
    let opts = ViewOptions {
        tab: match (args.tab, &args.diff) {
            (None, Some(_)) | (Some(TabArg::Diff), _) => Tab::Diff,
            (None | Some(TabArg::Heat), _) => Tab::Heat,
            (Some(TabArg::Mesh), _) => Tab::Mesh,
            (Some(TabArg::Surface), _) => Tab::Surface,
        },
        frame: args.frame,
        select_draw: select.map(|(_, c)| c),
        select_in_b: select.is_some_and(|(b, _)| b),
        diff: args.diff.clone(),
        pick: pick_xy,
        target: args.target.clone(),
        cost: match (args.own, args.total) {
            (true, _) => Some(Cost::Own),
            (_, true) => Some(Cost::Total),
            _ => None,
        },
        palette: args.palette.into(),
        scale: args.scale.into(),
        size,
        partial: args.partial,
    };
    match (&args.screenshot, args.window) {
        (Some(out), false) => gpuheat_viz::screenshot(session.clone(), opts, out),
        (Some(out), true) => gpuheat_viz::open_window(session.clone(), opts, Some(out.clone())),
        (None, _) => gpuheat_viz::open_window(session.clone(), opts, None),
    }
    .with_context(|| shown(&session))?;
    Ok(ExitCode::SUCCESS)
}

/// The viewer's options for a live view: the tab, palette, scale and size asked for.
pub fn live_options(args: &ViewArgs, size: (u32, u32)) -> ViewOptions {
    ViewOptions {
        tab: match args.tab {
            Some(TabArg::Mesh) => Tab::Mesh,
            Some(TabArg::Surface) => Tab::Surface,
            _ => Tab::Heat,
        },
        target: args.target.clone(),
        palette: args.palette.into(),
        scale: args.scale.into(),
        size,
        ..ViewOptions::default()
    }
}

/// `gpuheat view S --pick X,Y` without a window: the ranked draws as text.
fn print_pick(args: &ViewArgs, session: &std::path::Path, x: u32, y: u32) -> Result<ExitCode> {
    let s = crate::open::open(session, args.partial)?.session;
    if let Some(name) = args.target.as_deref().filter(|t| t.trim() != "screen") {
        return print_target_pick(args, session, &s, name.trim(), x, y);
    }
    let frame = match args.frame {
        Some(f) => f,
        None => match s.heat.first() {
            Some(m) => m.frame,
            None => bail!(
                "{}: no heat map in this session (capture with --heat)",
                shown(session)
            ),
        },
    };
    let Some(p) = pick::pick(&s, frame, x, y) else {
        bail!("frame {frame} has no heat map containing pixel {x},{y}");
    };
    let funcs = &s.functions.functions;
    let calls = &s
        .frames
        .iter()
        .find(|f| f.index == frame)
        .context("the heat map's frame is not in the session")?
        .calls;
    // With offscreen targets, where the pixel's total cost came from upstream.
    let upstream = if s.target_heat.iter().any(|t| t.frame == frame) {
        let context = pick::heat_map(&s, frame).map(|m| m.context);
        flow::frame_flow(&s, frame).and_then(|ff| {
            ff.pick(
                flow::TargetKey {
                    context: context?,
                    id: 0,
                },
                x,
                y,
            )
        })
    } else {
        None
    };
    if args.json {
        #[derive(serde::Serialize)]
        struct WithUpstream<'a> {
            #[serde(flatten)]
            pick: &'a pick::PixelPick,
            /// The pixel's total cost by upstream pass (offscreen targets only).
            #[serde(skip_serializing_if = "Option::is_none")]
            upstream: Option<&'a flow::PixelFlow>,
        }
        let mut text = serde_json::to_string_pretty(&WithUpstream {
            pick: &p,
            upstream: upstream.as_ref(),
        })?;
        text.push('\n');
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        o,
        "frame {frame} pixel {x},{y}: heat {:.3} ns, {} fragments{}",
        p.heat_ns,
        p.overdraw,
        match p.method {
            PickMethod::Geometry => "",
            PickMethod::BoundingBox => " (some draws without geometry: bounding boxes assumed)",
        }
    );
    for d in &p.draws {
        let text = calls
            .get(d.call as usize)
            .and_then(|c| {
                funcs
                    .get(c.func as usize)
                    .map(|f| gpuheat_analysis::call_text(f, &c.args))
            })
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "call {:>6}  {:>5.1}%  {:>10.3} ns  {} fragments  {text}",
            d.call,
            d.share * 100.0,
            d.heat_ns,
            d.fragments
        );
    }
    if let Some(u) = &upstream {
        upstream_text(&mut o, "", u);
    }
    let _ = std::io::stdout().lock().write_all(o.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// `gpuheat view S --pick X,Y --target ID` without a window: where the pixel of an offscreen
/// target got its total cost (its own draws, and the passes upstream of it). The draws'
/// ranking needs the screen's geometry and is not made for an offscreen target.
fn print_target_pick(
    args: &ViewArgs,
    session: &std::path::Path,
    s: &Session,
    name: &str,
    x: u32,
    y: u32,
) -> Result<ExitCode> {
    let frame = match args.frame {
        Some(f) => f,
        None => match s.target_heat.first() {
            Some(t) => t.frame,
            None => bail!(
                "{}: no offscreen render target maps in this session (target {name})",
                shown(session)
            ),
        },
    };
    let ff = flow::frame_flow(s, frame).with_context(|| format!("frame {frame} has no maps"))?;
    let t = ff.find(name).map_err(|e| anyhow::anyhow!("{e}"))?;
    let Some(p) = ff.pick(t.key, x, y) else {
        bail!(
            "cannot pick pixel {x},{y} of target {} of frame {frame}: it is {}x{}",
            t.label,
            t.width,
            t.height
        );
    };
    if args.json {
        #[derive(serde::Serialize)]
        struct TargetPick<'a> {
            frame: u64,
            target: &'a str,
            /// The pixel's total cost by upstream pass.
            upstream: &'a flow::PixelFlow,
        }
        let mut text = serde_json::to_string_pretty(&TargetPick {
            frame,
            target: &t.label,
            upstream: &p,
        })?;
        text.push('\n');
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    upstream_text(
        &mut o,
        &format!("frame {frame} target {} pixel {x},{y}: ", t.label),
        &p,
    );
    let _ = std::io::stdout().lock().write_all(o.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// A pixel's total cost as its own part plus one line per upstream pass, after `lead`.
fn upstream_text(o: &mut String, lead: &str, p: &gpuheat_analysis::measure::flow::PixelFlow) {
    use std::fmt::Write as _;
    let _ = writeln!(
        o,
        "{lead}total {:.3} ns: own {:.3} ns + {:.3} ns from {} upstream passes (spread {})",
        p.total_ns,
        p.own_ns,
        p.total_ns - p.own_ns,
        p.upstream.len(),
        p.spreading
    );
    for up in &p.upstream {
        let calls: Vec<String> = up.calls.iter().map(u32::to_string).collect();
        let _ = writeln!(
            o,
            "pass {:>4}  {:>5.1}%  {:>10.3} ns  target {}  calls {}",
            up.pass,
            up.share * 100.0,
            up.ns,
            up.label,
            calls.join(", ")
        );
    }
}

/// `draw=CALL` → (false, CALL); `draw=b:CALL` → (true, CALL), a call of session B.
fn parse_select(v: &str) -> Result<(bool, u32)> {
    v.strip_prefix("draw=")
        .and_then(|n| match n.strip_prefix("b:") {
            Some(n) => Some((true, n.parse().ok()?)),
            None => Some((false, n.parse().ok()?)),
        })
        .with_context(|| {
            format!("--select {v}: expected draw=CALL (or draw=b:CALL with --diff), e.g. draw=16")
        })
}

fn parse_pick(v: &str) -> Result<(u32, u32)> {
    v.split_once(',')
        .and_then(|(x, y)| Some((x.trim().parse().ok()?, y.trim().parse().ok()?)))
        .with_context(|| format!("--pick {v}: expected X,Y, e.g. 128,96"))
}

fn parse_size(v: &str) -> Result<(u32, u32)> {
    v.split_once('x')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .filter(|&(w, h): &(u32, u32)| (64..=8192).contains(&w) && (64..=8192).contains(&h))
        .with_context(|| format!("--size {v}: expected WxH between 64 and 8192, e.g. 1280x800"))
}
