//! `gpuheat diff A B`: did my change help, and did it break anything else? Draw by draw, with
//! the noise of both captures, the heat difference and a CI gate.

use crate::heatmap::{diffmap, write_png};
use crate::open::open;
use crate::shown;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use gpuheat_analysis::compare::diff::{
    diff, Comparison, Diff, DiffOptions, DrawDiff, Gate, MatchedBy, Verdict, FRAME_CPU,
    FRAME_CPU_BEYOND_DRIFT, FRAME_GPU, FRAME_GPU_BEYOND_DRIFT, FRAME_PRESENT, FRAME_WALL,
};
use gpuheat_analysis::compare::heat::{
    heat_diff, heat_diff_of, HeatDiff, HeatDiffError, MapChoice,
};
use gpuheat_analysis::compare::target::{target_diff, TargetDiff};
use gpuheat_analysis::measure::aggregate::DrawStats;
use gpuheat_analysis::measure::aggregate::{CALL_TIME, CPU_TIME};
use gpuheat_analysis::measure::flow::{frame_costs, frames_with_maps, roles, Labels};
use gpuheat_analysis::measure::hitch::{WatchDiff, WatchSide};
use gpuheat_session::Session;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when `--fail-if-slower` finds a regression (1 is kept for errors).
pub const EXIT_SLOWER: u8 = 3;

#[derive(Args)]
pub struct DiffArgs {
    /// The baseline session.
    a: PathBuf,
    /// The session to compare with it.
    b: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write heat(B) − heat(A) per pixel as a PNG (see -o).
    #[arg(long)]
    heat: bool,
    /// The heat-difference PNG.
    #[arg(short, long, default_value = "diff.png", requires = "heat")]
    output: PathBuf,
    /// With --heat: the render target whose maps are compared, `screen` or an offscreen
    /// target's name in A as `gpuheat report A` prints it; found in B by its role (context,
    /// framebuffer object, size, format) [default: screen].
    #[arg(long, value_name = "ID|screen", requires = "heat")]
    target: Option<String>,
    /// With --heat: compare total-cost maps (own cost plus the offscreen passes upstream)
    /// [the default when A's frames have offscreen targets].
    #[arg(long, requires = "heat", conflicts_with = "own")]
    total: bool,
    /// With --heat: compare own-cost maps (only the target's own draws).
    #[arg(long, requires = "heat")]
    own: bool,
    /// Exit with status 3 when the typical frame's GPU time (the sum of its draws' medians)
    /// got slower by more than PCT percent, counting only draws changed beyond noise, added
    /// or removed; the text names them.
    #[arg(long, value_name = "PCT")]
    fail_if_slower: Option<f64>,
    /// Smallest change called significant, in percent, as a factor either way (100: twice
    /// or half) [default: 100 on a software rasterizer such as llvmpipe, where one draw
    /// measures up to 1.9x apart between captures; 5 on a GPU].
    #[arg(long, value_name = "PCT")]
    min_change: Option<f64>,
    /// False discovery rate: the expected share of noise among the rows called significant.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Judge raw times: do not take out the drift common to every matched draw (the
    /// machine's speed between the captures).
    #[arg(long)]
    absolute: bool,
    /// How many rows of each table to print.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Compare what damaged (truncated or corrupted) sessions still hold instead of failing.
    #[arg(long)]
    partial: bool,
}

/// Two watches' lines: how often each hitched, and which causes went or came.
fn watch_text(w: &WatchDiff, o: &mut String) {
    let side = |s: &Option<WatchSide>| match s {
        None => "a capture, not a watch".to_string(),
        Some(s) => format!(
            "{} trigger{} in {} watched frames ({:.1} per 1,000){}",
            s.triggers,
            if s.triggers == 1 { "" } else { "s" },
            s.frames_watched,
            s.per_thousand,
            match (s.median_ms, s.steady_ms) {
                (Some(m), Some(st)) => format!(", median {m:.1} ms against steady {st:.1} ms"),
                (Some(m), None) => format!(", median {m:.1} ms"),
                _ => String::new(),
            }
        ),
    };
    let _ = writeln!(
        o,
        "
watch    A: {}",
        side(&w.a)
    );
    let _ = writeln!(o, "         B: {}", side(&w.b));
    let total = |s: &Option<WatchSide>| s.as_ref().map_or(0, |s| s.triggers);
    for site in w.sites.iter().take(8) {
        let verdict = match (site.in_a, site.in_b) {
            (_, 0) => "  gone in B",
            (0, _) => "  new in B",
            _ => "",
        };
        let _ = writeln!(
            o,
            "  {} at {}: named by {} of A's {} triggers, {} of B's {}{verdict}",
            site.function,
            site.at,
            site.in_a,
            total(&w.a),
            site.in_b,
            total(&w.b)
        );
    }
}

pub fn run(args: DiffArgs) -> Result<ExitCode> {
    if !(0.0..1.0).contains(&args.alpha) || args.alpha == 0.0 {
        bail!(
            "--alpha must be between 0 and 1 (exclusive), not {}",
            args.alpha
        );
    }
    if let Some(m) = args.min_change.filter(|m| *m < 0.0 || !m.is_finite()) {
        bail!("--min-change must be a percentage of 0 or more, not {m}");
    }
    if let Some(p) = args.fail_if_slower.filter(|p| *p < 0.0 || !p.is_finite()) {
        bail!("--fail-if-slower must be a percentage of 0 or more, not {p}");
    }
    let (a, b) = rayon::join(
        || open(&args.a, args.partial).map(|o| o.session),
        || open(&args.b, args.partial).map(|o| o.session),
    );
    let (a, b) = (a?, b?);
    let choice = if args.heat {
        let choice = map_choice(&a, &args)?;
        // Checked before the (longer) comparison so that a wrong size fails fast.
        heat_of(&a, &b, choice, 1.0, 0.0).map_err(|e| anyhow!("--heat: {e}"))?;
        choice
    } else {
        None
    };
    let opts = DiffOptions {
        alpha: args.alpha,
        min_change: args.min_change.map(|m| m / 100.0),
        absolute: args.absolute,
    };
    let d = diff(&a, &b, &opts);
    let watched = gpuheat_analysis::measure::hitch::compare(&a, &b);
    if args.heat {
        let drift = d.drift.map_or(1.0, |d| d.factor);
        let h = heat_of(&a, &b, choice, drift, d.min_change).map_err(|e| anyhow!("--heat: {e}"))?;
        write_png(&args.output, &diffmap::render(&h, drift))
            .map_err(|e| anyhow!("cannot write {}: {e}", shown(&args.output)))?;
        let which = match choice {
            None => "the screen's own cost".to_string(),
            Some(c) => format!(
                "{} cost of the {}",
                if c.total { "total" } else { "own" },
                c.role
            ),
        };
        eprintln!(
            "{}: heat(B){} - heat(A) of {which}, {}x{}, medians of {} and {} frames; Σ {:+.3} ms per frame",
            shown(&args.output),
            if drift != 1.0 {
                format!(" / {drift:.3} (the common drift)")
            } else {
                String::new()
            },
            h.width,
            h.height,
            h.frames.0,
            h.frames.1,
            h.total() / 1e6
        );
    }
    let targets = if a.target_heat.is_empty() && b.target_heat.is_empty() {
        Vec::new()
    } else {
        target_diff(&a, &b, &d)
    };
    let gate = args.fail_if_slower.map(|pct| (pct, d.gate(pct)));
    let out = if args.json {
        #[derive(Serialize)]
        struct JsonDiff<'a> {
            #[serde(flatten)]
            diff: &'a Diff,
            render_targets: &'a [TargetDiff],
            gate: Option<JsonGate<'a>>,
            /// Two watches (`attach --trigger`) compared; absent for captures.
            #[serde(skip_serializing_if = "Option::is_none")]
            watch: Option<&'a WatchDiff>,
        }
        #[derive(Serialize)]
        struct JsonGate<'a> {
            threshold_pct: f64,
            #[serde(flatten)]
            gate: &'a Gate,
        }
        let json = JsonDiff {
            diff: &d,
            render_targets: &targets,
            gate: gate.as_ref().map(|(pct, g)| JsonGate {
                threshold_pct: *pct,
                gate: g,
            }),
            watch: watched.as_ref(),
        };
        serde_json::to_string_pretty(&json)? + "\n"
    } else {
        let mut o = text(&d, &targets, gate.as_ref(), &args);
        if let Some(w) = &watched {
            watch_text(w, &mut o);
        }
        o
    };
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(match gate {
        Some((_, g)) if g.failed => ExitCode::from(EXIT_SLOWER),
        _ => ExitCode::SUCCESS,
    })
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// `1.234 ±0.056` in the metric's display unit (ms for ns).
fn value(c: &Comparison, s: Option<&gpuheat_analysis::measure::stats::Summary>) -> String {
    match s {
        None => "-".into(),
        Some(s) if c.unit == "ns" => format!("{} ±{}", ms(s.median), ms(1.4826 * s.mad)),
        Some(s) => format!("{:.0} ±{:.0}", s.median, 1.4826 * s.mad),
    }
}

/// `-1.510 ms  -75.0% [-78.1, -71.9]%`.
fn change(c: &Comparison) -> String {
    let Some(shift) = c.shift else {
        return "-".into();
    };
    let abs = if c.unit == "ns" {
        format!("{:+.3} ms", shift.estimate / 1e6)
    } else {
        format!("{:+.0}", shift.estimate)
    };
    match (
        c.ratio,
        c.relative,
        c.a.map(|s| s.median.abs()).filter(|m| *m > 0.0),
    ) {
        (Some(r), _, _) => format!(
            "{abs} {:+.1}% [{:+.1}, {:+.1}]%",
            100.0 * (r.estimate - 1.0),
            100.0 * (r.low - 1.0),
            100.0 * (r.high - 1.0)
        ),
        (None, Some(rel), Some(m)) => format!(
            "{abs} {:+.1}% [{:+.1}, {:+.1}]%",
            100.0 * rel,
            100.0 * shift.low / m,
            100.0 * shift.high / m
        ),
        _ => abs,
    }
}

fn q(c: &Comparison) -> String {
    c.q.or(c.p)
        .map(|q| {
            if q < 0.001 {
                "<0.001".into()
            } else {
                format!("{q:.3}")
            }
        })
        .unwrap_or_else(|| "-".into())
}

fn draw_name(d: &DrawStats) -> String {
    let mut s = d.text.clone();
    if d.key.ordinal > 0 {
        let _ = write!(s, " #{}", d.key.ordinal + 1);
    }
    match &d.source {
        Some(src) => {
            let _ = write!(s, "  {}", crate::report::short_source(src));
        }
        None => {
            let _ = write!(s, "  @{}", d.key.callsite);
        }
    }
    s
}

/// Which map `--heat` compares: `None` for the screens' own maps as recorded (a session
/// without offscreen targets, no `--target` and no `--total`), else a target by its role in A.
fn map_choice(a: &Session, args: &DiffArgs) -> Result<Option<MapChoice>> {
    let offscreen = !a.target_heat.is_empty();
    let total = args.total || (offscreen && !args.own);
    if args.target.is_none() && !total {
        return Ok(None);
    }
    let want = args.target.as_deref().unwrap_or("screen");
    let labels = Labels::of(a);
    let mut names: Vec<String> = Vec::new();
    for frame in frames_with_maps(a) {
        let Some(flow) = frame_costs(a, frame, &labels) else {
            continue;
        };
        for (t, role) in flow.targets.iter().zip(roles(a, &flow)) {
            if t.label == want || (want == "screen" && t.key.is_screen()) {
                return Ok(Some(MapChoice { role, total }));
            }
            if !names.contains(&t.label) {
                names.push(t.label.clone());
            }
        }
    }
    bail!(
        "--target {want}: A has no such render target (its targets: {})",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )
}

/// [`heat_diff`] of the screens' recorded maps, or [`heat_diff_of`] the chosen ones.
fn heat_of(
    a: &Session,
    b: &Session,
    choice: Option<MapChoice>,
    b_scale: f64,
    min_change: f64,
) -> std::result::Result<HeatDiff, HeatDiffError> {
    match choice {
        None => heat_diff(a, b, b_scale, min_change),
        Some(c) => heat_diff_of(a, b, c, b_scale, min_change),
    }
}

/// One table row: verdict, A, B, the change with its interval, q, then `tail`.
fn row(o: &mut String, c: &Comparison, tail: &str) {
    let _ = writeln!(
        o,
        "  {:<8} {:>18}  {:>18}  {:<38} {:>7}{tail}",
        c.verdict.word(&c.unit),
        value(c, c.a.as_ref()),
        value(c, c.b.as_ref()),
        change(c),
        q(c)
    );
}

/// The render targets' table: own and total cost per frame, A against B.
fn targets_text(o: &mut String, targets: &[TargetDiff], top: usize) {
    if targets.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "
render targets (per frame; matched by context, framebuffer, size and format; total = own + upstream passes)
  {:<8} {:>18}  {:>18}  {:<38} {:>7}  target",
        "verdict", "A ms ±spread", "B ms ±spread", "change B - A [95% interval]", "q"
    );
    for t in targets.iter().take(top) {
        let named = |l: &String| {
            if l.ends_with("screen") {
                l.clone()
            } else {
                format!("target {l}")
            }
        };
        let (label_a, label_b) = (t.label_a.as_ref().map(named), t.label_b.as_ref().map(named));
        let name = match (&label_a, &label_b) {
            (Some(a), Some(b)) if a == b => a.clone(),
            (Some(a), Some(b)) => format!("{a} (in B: {b})"),
            (Some(a), None) => format!("{a} (only in A)"),
            (None, Some(b)) => format!("{b} (only in B)"),
            (None, None) => String::new(),
        };
        for (c, what) in [(&t.own, "own"), (&t.total, "total")] {
            if what == "total" && t.total.a == t.own.a && t.total.b == t.own.b {
                continue;
            }
            row(o, c, &format!("  {name} {what}: {}", t.role));
        }
    }
    if targets.len() > top {
        let _ = writeln!(o, "  … and {} more (--top)", targets.len() - top);
    }
}

fn text(d: &Diff, targets: &[TargetDiff], gate: Option<&(f64, Gate)>, args: &DiffArgs) -> String {
    let mut o = String::new();
    for (label, side, path) in [("A", &d.a, &args.a), ("B", &d.b, &args.b)] {
        let size = side
            .size
            .map(|s| format!(", {}x{}", s[0], s[1]))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "{label}  {}  ({}: {} mode, {} frames, {} steady{size}, {})",
            shown(path),
            side.command,
            side.mode,
            side.frames,
            side.steady_frames,
            side.renderers.join(", ")
        );
    }
    for w in &d.warnings {
        let _ = writeln!(o, "warning  {w}");
    }

    let _ = writeln!(
        o,
        "\nframes (steady)      {:>18}  {:>18}  {:<38} {:>7}  verdict",
        "A ms ±spread", "B ms ±spread", "change B - A [95% interval]", "p"
    );
    for c in &d.frames {
        let name = match c.metric.as_str() {
            FRAME_GPU => "GPU time",
            FRAME_CPU => "CPU time in GL",
            FRAME_WALL => "wall time",
            FRAME_PRESENT => "present",
            FRAME_GPU_BEYOND_DRIFT => "GPU beyond drift",
            FRAME_CPU_BEYOND_DRIFT => "CPU beyond drift",
            other => other,
        };
        let _ = writeln!(
            o,
            "  {name:<18} {:>18}  {:>18}  {:<38} {:>7}  {}",
            value(c, c.a.as_ref()),
            value(c, c.b.as_ref()),
            change(c),
            q(c),
            if d.frame_row_judged(c) {
                c.verdict.word(&c.unit)
            } else {
                "not judged"
            }
        );
    }
    if d.frames.iter().any(|c| c.metric == FRAME_PRESENT) {
        let _ = writeln!(
            o,
            "  (CPU time in GL and wall time leave the presents out: a present is the window \
             system's share of the frame, which moves up to 11x with nothing changed in the program)"
        );
    }

    targets_text(&mut o, targets, args.top);

    match (d.drift, d.drift_seen) {
        (Some(drift), _) => {
            let _ = writeln!(
                o,
                "\ndrift  every matched draw moved by {:+.1}% together (median of {} draws, spread {:.1}%): \
                 the machine's speed between the captures, or a change common to every draw;\n       \
                 draws are judged beyond it (--absolute: raw times)",
                100.0 * (drift.factor - 1.0),
                drift.draws,
                100.0 * drift.spread
            );
        }
        (None, Some(seen)) => {
            let _ = writeln!(
                o,
                "\ndrift  the matched draws moved by {:+.1}% in the median (spread {:.1}%); not taken out \
                 (--absolute): draws are judged on their raw times",
                100.0 * (seen.factor - 1.0),
                100.0 * seen.spread
            );
        }
        _ => {}
    }
    if !d.call_drifts.is_empty() {
        let moved: Vec<String> = d
            .call_drifts
            .iter()
            .map(|c| {
                format!(
                    "{} {:+.1}% (spread {:.1}%)",
                    match c.metric {
                        CPU_TIME => "CPU time in the call",
                        CALL_TIME => "wall time of the call",
                        other => other,
                    },
                    100.0 * (c.factor - 1.0),
                    100.0 * c.spread
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "       on the CPU: {}; taken out of the draws' rows, CPU time's also out of the frame's (its wall time is mostly waits for the GPU: judged raw)",
            moved.join(", ")
        );
    }
    // A draw whose time moved with its work is counted apart from the slower and faster.
    let count = |v: Verdict| {
        d.matched
            .iter()
            .filter(|m| m.time().verdict == v && !m.moved_with_work())
            .count()
    };
    let with_work = d.matched.iter().filter(|m| m.moved_with_work()).count();
    let aligned = d
        .matched
        .iter()
        .filter(|m| m.matched_by != MatchedBy::Identity)
        .count();
    let _ = writeln!(
        o,
        "\ndraws  {} matched ({} by stream alignment): {} slower, {} faster, {} changed with their work, {} within noise, {} too few frames; {} only in A, {} only in B",
        d.matched.len(),
        aligned,
        count(Verdict::Higher),
        count(Verdict::Lower),
        with_work,
        count(Verdict::Noise),
        count(Verdict::TooFew),
        d.only_a.len(),
        d.only_b.len()
    );
    let _ = writeln!(
        o,
        "       by {}; significant: q <= {} (Benjamini-Hochberg over the draws), a change of x{:.2} or more either way (+{:.0}% / -{:.0}%; {}; --min-change){}",
        d.a.stats.ranked_by.counter(),
        d.alpha,
        1.0 + d.min_change,
        100.0 * d.min_change,
        100.0 * (1.0 - 1.0 / (1.0 + d.min_change)),
        d.min_change_reason,
        if d.resolution_ns > 0.0 {
            format!(
                " and >= {:.0} us for serialized times ({})",
                d.resolution_ns / 1e3,
                d.resolution_reason
            )
        } else {
            String::new()
        }
    );
    let rows = |o: &mut String, title: &str, pick: &dyn Fn(&DrawDiff) -> bool| {
        let list: Vec<_> = d.matched.iter().filter(|m| pick(m)).collect();
        if list.is_empty() {
            return;
        }
        let _ = writeln!(
            o,
            "\n{title}\n  {:<8} {:>18}  {:>18}  {:<38} {:>7}  draw",
            "verdict", "A ms ±spread", "B ms ±spread", "change B - A [95% interval]", "q"
        );
        for m in list.iter().take(args.top) {
            let c = m.time();
            let (da, db) = (&d.a.stats.draws[m.a], &d.b.stats.draws[m.b]);
            let mut name = draw_name(da);
            match m.matched_by {
                MatchedBy::Identity => {}
                MatchedBy::CallSite => name.push_str("  (aligned: same call site, draw changed)"),
                MatchedBy::Shape => name.push_str("  (aligned: same draw, call site moved)"),
            }
            for (side, s) in [("A", da), ("B", db)] {
                if let Some(f) = s.first_use {
                    let _ = write!(
                        name,
                        "  [{side}: first use in frame {} left out, {:.1} ms CPU]",
                        f.frame,
                        f.cpu_ns / 1e6
                    );
                }
            }
            if let Some(w) = &m.work {
                let _ = write!(name, "  [{w}]");
            }
            row(o, c, &format!("  {name}"));
            for other in m
                .metrics
                .iter()
                .filter(|x| x.metric != c.metric)
                .map(|x| m.judged(x))
                .filter(|x| x.verdict.significant())
            {
                row(o, other, &format!("    {}", other.metric));
            }
        }
        if list.len() > args.top {
            let _ = writeln!(o, "  … and {} more (--top)", list.len() - args.top);
        }
    };
    rows(&mut o, "significant changes", &|m| {
        m.time().verdict.significant() && !m.moved_with_work()
    });
    rows(
        &mut o,
        "changed with their work (their time moved with a work counter, its time per unit not beyond the threshold: the program drew more or less)",
        &|m| m.moved_with_work(),
    );
    rows(&mut o, "within noise", &|m| !m.time().verdict.significant());

    for (title, side, list) in [
        ("only in A (removed)", &d.a, &d.only_a),
        ("only in B (added)", &d.b, &d.only_b),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n{title}");
        let rank = side.stats.rank_metric();
        for &i in list.iter().take(args.top) {
            let s = &side.stats.draws[i];
            let t = s
                .metric(rank)
                .map(|m| format!("{} ms ±{}", ms(m.median), ms(1.4826 * m.mad)))
                .unwrap_or_else(|| "- ms".into());
            let _ = writeln!(
                o,
                "  {t:>18}  in {} frames  {}",
                s.occurrences.len(),
                draw_name(s)
            );
        }
    }
    for (title, list) in [
        ("findings that appeared in B", &d.findings_appeared),
        ("findings that disappeared from A", &d.findings_disappeared),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n{title}");
        for f in list.iter().take(args.top) {
            let _ = writeln!(
                o,
                "  {:<8} {}: {} (in {} of {} frames)",
                format!("{:?}", f.severity).to_lowercase(),
                f.rule,
                f.title,
                f.frames,
                f.of
            );
        }
    }
    if let Some((pct, g)) = gate {
        let _ = writeln!(o);
        match &g.frames {
            None => {
                let _ = writeln!(
                    o,
                    "gate  no GPU time was measured on both sides: nothing to gate on (pass)"
                );
            }
            Some(c) => {
                let verdict = if g.failed { "FAIL" } else { "pass" };
                let _ = writeln!(
                    o,
                    "gate  {verdict} (threshold +{pct}%): {}; {} (p {})",
                    g.reason,
                    change(c),
                    q(c)
                );
            }
        }
        if g.failed {
            for &i in g.slower.iter().take(args.top) {
                let m = &d.matched[i];
                let _ = writeln!(
                    o,
                    "  slower  {}  {}",
                    change(m.time()),
                    draw_name(&d.a.stats.draws[m.a])
                );
            }
            for &i in g.contributors.iter() {
                let m = &d.matched[i];
                let _ = writeln!(
                    o,
                    "  grew    {}  {}  (not significant alone)",
                    change(m.time()),
                    draw_name(&d.a.stats.draws[m.a])
                );
            }
            let rank = d.b.stats.rank_metric();
            for &i in g.added.iter().take(args.top) {
                let s = &d.b.stats.draws[i];
                let t = s.metric(rank).map_or(0.0, |m| m.median);
                let _ = writeln!(o, "  added   +{} ms  {}", ms(t), draw_name(s));
            }
        }
    }
    o
}
