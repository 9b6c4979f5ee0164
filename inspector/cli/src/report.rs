//! `gpuheat report SESSION`: where the time went, as text or JSON.

use crate::open::open;
use anyhow::Result;
use clap::Args;
use gpuheat_analysis::checklist::{self, Finding, Severity};
use gpuheat_analysis::measure::aggregate::{aggregate, DrawStats, SessionStats};
use gpuheat_analysis::measure::flow::{self, FlowSummary};
use gpuheat_analysis::open::Opened;
use gpuheat_analysis::{analyse, ms, rank_time, Analysis, RankedBy};
use gpuheat_session::{EndReason, Session};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// The session file.
    session: PathBuf,
    /// How many of the costliest draws to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// List the costliest work calls frame by frame instead of draws aggregated over the
    /// frames (median and spread per draw).
    #[arg(long)]
    per_frame: bool,
    /// Report what a damaged (truncated or corrupted) session still holds instead of failing.
    #[arg(long)]
    partial: bool,
}

pub fn report(args: ReportArgs) -> Result<ExitCode> {
    let Opened { session, painting } = open(&args.session, args.partial)?;
    let analysis = analyse(&session);
    let found = checklist::check(&session, &analysis);
    let stats = aggregate(&session, true);
    // Render targets only when the session has offscreen ones: otherwise the screen's own
    // map is all there is, and the frame table already has its cost.
    let targets = if session.target_heat.is_empty() {
        None
    } else {
        flow::summarise(&session)
    };
    let out = if args.json {
        json(
            &session,
            &analysis,
            &stats,
            &found,
            targets.as_ref(),
            &painting,
            args.top,
        )?
    } else {
        let mut o = text(&session, &analysis, &stats, &found, targets.as_ref(), &args);
        vg_text(&session, &painting, &mut o);
        o
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = stdout.write_all(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct JsonReport<'a> {
    session: &'a gpuheat_session::SessionInfo,
    contexts: &'a [gpuheat_session::ContextInfo],
    end: Option<&'a gpuheat_session::EndInfo>,
    attach: Option<&'a gpuheat_session::AttachInfo>,
    states: &'a [gpuheat_session::ContextState],
    frames: &'a [gpuheat_analysis::FrameStats],
    /// The frames left out of the figures because the capture's own first-time work landed
    /// in them (`measure::warmup`), with the agent's reasons; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warmup: Vec<WarmUpFrame>,
    /// What the agent cost in each captured frame (its waits for the GPU); absent in sessions
    /// of agents that did not count.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    agent_frames: &'a [gpuheat_session::AgentFrame],
    ranked_by: RankedBy,
    /// Metrics of `draws`, in the order of each draw's `metrics`.
    metrics: &'a [gpuheat_analysis::measure::aggregate::Metric],
    /// Draws aggregated by identity over the frames, costliest median first.
    draws: &'a [DrawStats],
    top_draws: &'a [gpuheat_analysis::DrawCost],
    unavailable: &'a [gpuheat_analysis::Unavailable],
    findings: &'a [Finding],
    /// Render targets (screens and offscreen) with own and total cost over the frames, and
    /// the remainders; absent without offscreen targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    render_targets: Option<&'a FlowSummary>,
    /// What the host's VG painting did; absent without VG draws.
    #[serde(skip_serializing_if = "Option::is_none")]
    vg_painting: Option<&'a gpuheat_analysis::vg::VgPainting>,
    /// How the watch went (`attach --trigger`); absent for a capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    watch: Option<&'a gpuheat_session::WatchStatus>,
    /// Each trigger's frame against the steady frames kept around it, with its causes;
    /// absent for a capture.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hitches: Vec<gpuheat_analysis::measure::hitch::Hitch>,
}

/// A warm-up frame, as the JSON report lists it.
#[derive(Serialize)]
struct WarmUpFrame {
    frame: u64,
    /// What the agent did in it; empty for an older agent's first frame after an attach.
    reasons: Vec<String>,
}

fn json(
    s: &Session,
    a: &Analysis,
    stats: &SessionStats,
    found: &[Finding],
    targets: Option<&FlowSummary>,
    painting: &gpuheat_analysis::vg::VgPainting,
    top: usize,
) -> Result<String> {
    let report = JsonReport {
        session: &s.info,
        contexts: &s.contexts,
        end: s.end.as_ref(),
        attach: s.attach.as_ref(),
        states: &s.states,
        frames: &a.frames,
        warmup: gpuheat_analysis::measure::warmup::WarmUp::of(s)
            .frames()
            .map(|frame| WarmUpFrame {
                frame,
                reasons: gpuheat_analysis::measure::warmup::reasons(s, frame),
            })
            .collect(),
        agent_frames: &s.agent_frames,
        ranked_by: a.ranked_by,
        metrics: &stats.metrics,
        draws: &stats.draws[..top.min(stats.draws.len())],
        top_draws: &a.draws[..top.min(a.draws.len())],
        unavailable: &a.unavailable,
        findings: found,
        render_targets: targets,
        vg_painting: s
            .vg_calls
            .iter()
            .any(|c| c.draw.is_some())
            .then_some(painting),
        watch: s.watch.as_ref(),
        hitches: gpuheat_analysis::measure::hitch::hitches(s),
    };
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

/// A watch's lines: what was watched and kept, and each trigger against its steady frames.
fn watch_text(s: &Session, w: &gpuheat_session::WatchStatus, end: &str, o: &mut String) {
    if w.ring_capacity == 0 {
        // A live view's stream: nothing held, every frame sent.
        let captures = s.triggers.iter().filter(|t| t.number == 0).count();
        let _ = writeln!(
            o,
            "live     {} frames streamed into the live view; {} capture{} taken from it, {} frames kept",
            w.frames_watched,
            captures,
            if captures == 1 { "" } else { "s" },
            s.frames.len()
        );
        return;
    }
    let _ = writeln!(
        o,
        "watch    {} frames watched in timeline mode, {} trigger{}, {} frames kept, {end}; ring of {} frames (at most {} MB)",
        w.frames_watched,
        w.triggers,
        if w.triggers == 1 { "" } else { "s" },
        s.frames.len(),
        w.ring_capacity,
        w.ring_limit_bytes >> 20
    );
    for h in gpuheat_analysis::measure::hitch::hitches(s) {
        let _ = writeln!(o, "trigger  {}: {}", h.number, h.summary);
        let span = |v: &[u64]| match (v.first(), v.last()) {
            (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
            (Some(a), _) => a.to_string(),
            _ => "none".to_string(),
        };
        let totals: Vec<String> = h
            .totals
            .iter()
            .filter_map(|t| {
                Some(format!(
                    "{} {:.2} ms (usually {:.2} ±{:.2})",
                    t.what, t.frame_ms?, t.median_ms?, t.spread_ms?
                ))
            })
            .collect();
        let _ = writeln!(
            o,
            "         {}; steady frames {}, full-mode frames after it {}",
            totals.join(", "),
            span(&h.steady_frames),
            span(&h.full_frames)
        );
    }
}

fn opt_ms(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
}

fn text(
    s: &Session,
    a: &Analysis,
    stats: &SessionStats,
    found: &[Finding],
    flow: Option<&FlowSummary>,
    args: &ReportArgs,
) -> String {
    let top = args.top;
    let mut o = String::new();
    let i = &s.info;
    let end = match s.end.as_ref().map(|e| &e.reason) {
        Some(EndReason::Complete) => "complete",
        Some(EndReason::Stopped) => "stopped by the user",
        Some(EndReason::TargetExited) => "program exited during the capture",
        Some(EndReason::TimedOut) => "timed out: no more frames arrived",
        Some(EndReason::Abandoned) => "abandoned by the agent, to leave the program alone",
        None => "no end record: gpuheat stopped during the capture",
    };
    let _ = writeln!(o, "program  {} (pid {})", i.args.join(" "), i.pid);
    match &s.watch {
        None => {
            let _ = writeln!(
                o,
                "capture  {:?} mode, {} of {} frames, {end}",
                i.mode,
                s.frames.len(),
                i.frames_requested
            );
        }
        Some(w) => watch_text(s, w, end, &mut o),
    }
    if let Some(why) = s.end.as_ref().and_then(|e| e.abandoned_because()) {
        let _ = writeln!(o, "         {why}");
    }
    if let Some(a) = &s.attach {
        let _ = writeln!(o, "{}", attach_line(a, s.watch.is_some()));
    }
    if let Some(line) = agent_waits_line(&s.agent_frames) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(line) = agent_time_line(&s.agent_frames) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(line) = agent_gpu_line(&s.agent_frames, &s.contexts) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(line) = deferred_line(&s.agent_frames, &s.contexts) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(line) = vulkan_line(&s.vk_frames) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(dropped) = s.end.as_ref().map(|e| e.dropped_calls).filter(|&d| d > 0) {
        let _ = writeln!(
            o,
            "warning  {dropped} calls were dropped because the writer fell behind"
        );
    }
    for c in &s.contexts {
        let _ = writeln!(
            o,
            "context  {:#x}: {} on {} ({})",
            c.handle, c.version, c.renderer, c.vendor
        );
        let verdict = if c.pipelined_meaningful {
            "meaningful"
        } else {
            "NOT meaningful"
        };
        let _ = writeln!(
            o,
            "         pipelined per-draw GPU time is {verdict} here: {}",
            c.pipelined_note
        );
    }
    for st in &s.states {
        let [x, y, w, h] = st.viewport;
        let surface = st
            .surface
            .map(|[w, h]| format!(", surface {w}x{h}"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "state    at frame {} (context {:#x}): program {}, vertex array {}, array buffer {}, element buffer {}, draw/read framebuffer {}/{}, viewport {x},{y} {w}x{h}{surface}",
            st.frame, st.context, st.program, st.vertex_array, st.array_buffer, st.element_array_buffer,
            st.draw_framebuffer, st.read_framebuffer
        );
    }
    geometry_text(s, &mut o);
    // One line per reason: "GLES context: no pipeline statistics query" covers eleven counters.
    let mut by_reason: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for u in &a.unavailable {
        match by_reason
            .iter_mut()
            .find(|(c, r, _)| *c == u.context && *r == u.reason)
        {
            Some((_, _, names)) => names.push(&u.counter),
            None => by_reason.push((&u.context, &u.reason, vec![&u.counter])),
        }
    }
    for (context, reason, names) in by_reason {
        let _ = writeln!(
            o,
            "unavail  {reason} (context {context}): {}",
            names.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "\n{:>7} {:>7} {:>6} {:>6} {:>9} {:>9} {:>14} {:>13}",
        "frame", "calls", "draws", "work", "wall ms", "cpu ms", "gpu ms serial", "gpu ms piped"
    );
    let warmup = gpuheat_analysis::measure::warmup::WarmUp::of(s);
    for f in &a.frames {
        // Left out of the draws' figures below, and of diffs.
        let warm = if warmup.contains(f.index) {
            let why = gpuheat_analysis::measure::warmup::reasons(s, f.index);
            if why.is_empty() {
                "  warm-up: the first frame after an attach (left out of the figures)".to_string()
            } else {
                format!("  warm-up: {} (left out of the figures)", why.join("; "))
            }
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "{:>7} {:>7} {:>6} {:>6} {:>9.3} {:>9.3} {:>14} {:>13}{warm}",
            f.index,
            f.calls,
            f.draws,
            f.work_calls,
            f.wall_ms,
            f.cpu_ms,
            opt_ms(f.gpu_serialized_ms),
            opt_ms(f.gpu_pipelined_ms)
        );
    }
    if let Some(flow) = flow {
        targets_text(flow, &mut o);
    }
    if !args.per_frame {
        identity_text(stats, a, top, &mut o);
        findings_text(found, &mut o);
        return o;
    }
    let shown_draws = &a.draws[..top.min(a.draws.len())];
    let basis = match a.ranked_by {
        RankedBy::GpuTimeSerialized => "serialized",
        RankedBy::GpuTimePipelined => "pipelined",
    };
    let _ = writeln!(
        o,
        "\ntop {} of {} work calls by {basis} GPU time",
        shown_draws.len(),
        a.draws.len()
    );
    let _ = writeln!(
        o,
        "{:>3} {:>6} {:>5} {:>10} {:>6} {:>10} {:>10} {:>8}  call",
        "#", "frame", "call", "gpu ms", "frame", "samples", "fs inv", "cpu us"
    );
    for (n, d) in shown_draws.iter().enumerate() {
        let counter = |name: &str| {
            d.counters
                .get(name)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "-".into())
        };
        let _ = writeln!(
            o,
            "{:>3} {:>6} {:>5} {:>10} {:>6} {:>10} {:>10} {:>8.1}  {}  @{}{}",
            n + 1,
            d.frame,
            d.call,
            rank_time(d)
                .map(|t| format!("{:.4}", ms(t)))
                .unwrap_or_else(|| "-".into()),
            d.frame_share
                .map(|s| format!("{:.1}%", s * 100.0))
                .unwrap_or_else(|| "-".into()),
            counter(gpuheat_session::counter_names::SAMPLES_PASSED),
            counter(gpuheat_session::counter_names::FRAGMENT_SHADER_INVOCATIONS),
            d.cpu_ns as f64 / 1e3,
            d.text,
            d.callsite,
            d.source
                .as_deref()
                .map(|s| format!(" {}", short_source(s)))
                .unwrap_or_default()
        );
        if let Some(c) = &d.children {
            let _ = writeln!(o, "{}", children_text(c));
        }
        let others: Vec<String> = d
            .counters
            .iter()
            .filter(|(k, v)| {
                **v != 0
                    && !matches!(
                        k.as_str(),
                        gpuheat_session::counter_names::SAMPLES_PASSED
                            | gpuheat_session::counter_names::FRAGMENT_SHADER_INVOCATIONS
                    )
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !others.is_empty() {
            let _ = writeln!(o, "{:>55}{}", "", others.join(" "));
        }
    }
    findings_text(found, &mut o);
    o
}

/// The draws aggregated by identity: median and spread over the frames of the ranking time,
/// CPU time and the counters that matter most, first-use outliers named.
/// `↳ 23 GL calls (1 work, 0.044 ms GPU)`: what a VG call's library did inside it.
fn children_text(c: &gpuheat_analysis::Children) -> String {
    let gpu = c
        .gpu_serialized_ns
        .map(|t| format!(", {:.4} ms GPU", ms(t)))
        .unwrap_or_default();
    format!(
        "{:>44}↳ {} calls of its library inside ({} work{gpu})",
        "", c.calls, c.work_calls
    )
}

fn identity_text(stats: &SessionStats, a: &Analysis, top: usize, o: &mut String) {
    let children: std::collections::HashMap<(u64, u32), &gpuheat_analysis::Children> = a
        .draws
        .iter()
        .filter_map(|d| Some(((d.frame, d.call), d.children.as_ref()?)))
        .collect();
    let rank = stats.rank_metric();
    let basis = match stats.ranked_by {
        RankedBy::GpuTimeSerialized => "serialized",
        RankedBy::GpuTimePipelined => "pipelined",
    };
    let shown = &stats.draws[..top.min(stats.draws.len())];
    let _ = writeln!(
        o,
        "\ntop {} of {} draws by median {basis} GPU time over the frames (spread: 1.4826 x MAD; --per-frame for every call)",
        shown.len(),
        stats.draws.len()
    );
    let _ = writeln!(
        o,
        "{:>3} {:>10} {:>9} {:>6} {:>10} {:>10} {:>8}  call",
        "#", "gpu ms", "±spread", "frames", "samples", "fragments", "cpu us"
    );
    let median_of = |d: &DrawStats, name: &str| {
        stats
            .metric_index(name)
            .and_then(|k| d.metric(k))
            .map(|m| format!("{:.0}", m.median))
            .unwrap_or_else(|| "-".into())
    };
    for (n, d) in shown.iter().enumerate() {
        let (t, spread) = match d.metric(rank) {
            Some(m) => (
                format!("{:.4}", m.median / 1e6),
                format!("{:.4}", 1.4826 * m.mad / 1e6),
            ),
            None => ("-".into(), "-".into()),
        };
        let cpu = stats
            .metric_index(gpuheat_analysis::measure::aggregate::CPU_TIME)
            .and_then(|k| d.metric(k))
            .map_or(0.0, |m| m.median / 1e3);
        let ordinal = if d.key.ordinal > 0 {
            format!(" #{}", d.key.ordinal + 1)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "{:>3} {t:>10} {spread:>9} {:>6} {:>10} {:>10} {cpu:>8.1}  {}{ordinal}  @{}{}",
            n + 1,
            d.occurrences.len(),
            median_of(d, gpuheat_session::counter_names::SAMPLES_PASSED),
            median_of(d, gpuheat_analysis::measure::aggregate::FRAGMENTS),
            d.text,
            d.key.callsite,
            d.source
                .as_deref()
                .map(|s| format!(" {}", short_source(s)))
                .unwrap_or_default()
        );
        if let Some(c) = d.occurrences.first().and_then(|k| children.get(k)) {
            let _ = writeln!(o, "{}", children_text(c));
        }
        if let Some(f) = d.first_use {
            let _ = writeln!(
                o,
                "{:>44}first use in frame {} left out: {:.2} ms CPU in the call, {:.3} ms after (a shader compiled on first use?)",
                "",
                f.frame,
                f.cpu_ns / 1e6,
                f.steady_cpu_ns / 1e6
            );
        }
    }
}

/// What the GEOM records hold: draws with positions, vertices against the per-frame budget,
/// and the draws left out, grouped by reason. There is one record per frame and context, so
/// frames and contexts are counted apart.
/// What the host's VG painting did, when the session has VG draws: how many were painted
/// from their paths, from bounds only, and why the others were not, counted by reason.
fn vg_text(s: &Session, p: &gpuheat_analysis::vg::VgPainting, o: &mut String) {
    let draws = s.vg_calls.iter().filter(|c| c.draw.is_some()).count();
    if draws == 0 {
        return;
    }
    if !p.requested {
        let _ = writeln!(
            o,
            "\nvg       {draws} VG draws, not painted: the capture asked for no heat (--heat)"
        );
        return;
    }
    let approx = if p.approximate > 0 {
        format!(
            " ({} from their bounding box only: path data unknown)",
            p.approximate
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "\nvg       {draws} VG draws: {} painted on the host from their recorded paths{approx}",
        p.painted
    );
    let mut reasons: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (_, _, why) in &p.not_painted {
        *reasons.entry(why.as_str()).or_default() += 1;
    }
    for (why, n) in reasons {
        let _ = writeln!(o, "         {n} not painted: {why}");
    }
}

fn geometry_text(s: &Session, o: &mut String) {
    if s.geometry.is_empty() {
        return;
    }
    let with: usize = s.geometry.iter().map(|g| g.draws.len()).sum();
    let frames: BTreeSet<u64> = s.geometry.iter().map(|g| g.frame).collect();
    let contexts: BTreeSet<u64> = s.geometry.iter().map(|g| g.context).collect();
    let max_vertices = s.geometry.iter().map(|g| g.vertices()).max().unwrap_or(0);
    let budget = s
        .geometry
        .iter()
        .map(|g| g.vertex_budget)
        .max()
        .unwrap_or(0);
    let cut: u64 = s
        .geometry
        .iter()
        .flat_map(|g| &g.draws)
        .map(|d| d.dropped_vertices)
        .sum();
    let (on_contexts, per) = if contexts.len() > 1 {
        (
            format!(" on {} contexts", contexts.len()),
            "frame and context",
        )
    } else {
        (String::new(), "frame")
    };
    let _ = writeln!(
        o,
        "geometry {with} draws with post-transform positions in {} {}{on_contexts}; at most {max_vertices} vertices in a {per} (budget {budget} per {per}){}",
        frames.len(),
        if frames.len() == 1 { "frame" } else { "frames" },
        if cut > 0 {
            format!(", {cut} vertices beyond the budget not kept")
        } else {
            String::new()
        }
    );
    let reasons = s
        .geometry
        .iter()
        .flat_map(|g| &g.missing)
        .map(|m| m.reason.as_str());
    for line in missing_geometry_lines(reasons) {
        let _ = writeln!(o, "         {line}");
    }
}

/// The report's attach line: where the render thread was held and for how long, and when
/// the first frame (or the watch) began, with the part of it spent getting in (`injection`:
/// gpuheat gets in at a swap, so a program that presents no frame, loading or waiting for
/// input, keeps it waiting), where the session has it.
fn attach_line(a: &gpuheat_session::AttachInfo, watching: bool) -> String {
    let getting_in = if a.injection_ns > 0 {
        format!(
            " ({:.0} ms of it getting in, at the program's swap)",
            a.injection_ns as f64 / 1e6
        )
    } else {
        String::new()
    };
    format!(
        "attach   at {} on thread {}: render thread held {:.1} ms, {} {:.0} ms after the command{getting_in}",
        a.safe_point,
        a.thread,
        a.hiccup_ns as f64 / 1e6,
        if watching { "watching from" } else { "first frame" },
        a.latency_ns as f64 / 1e6
    )
}

/// Most program names a grouped line of [`missing_geometry_lines`] lists.
const PROGRAMS_LISTED: usize = 8;

/// The lines saying why draws have no geometry, in the order their reasons first occur: draws
/// with the same reason together, and reasons that differ only in the program they start
/// with ("program 12 has no shaders attached…") as one line naming the programs (the lowest
/// [`PROGRAMS_LISTED`] by number), so a toolkit whose 14 programs were all linked before the
/// attach reads as one cause, not 14.
fn missing_geometry_lines<'a>(reasons: impl Iterator<Item = &'a str>) -> Vec<String> {
    struct Group<'a> {
        /// The reason, less its leading program name when `named`.
        key: &'a str,
        named: bool,
        programs: Vec<&'a str>,
        draws: usize,
    }
    let mut groups: Vec<Group<'a>> = Vec::new();
    for reason in reasons {
        let (key, program) = match split_program(reason) {
            Some((program, rest)) => (rest, Some(program)),
            None => (reason, None),
        };
        let named = program.is_some();
        let i = match groups.iter().position(|g| g.key == key && g.named == named) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    key,
                    named,
                    programs: Vec::new(),
                    draws: 0,
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.draws += 1;
        if let Some(p) = program.filter(|p| !g.programs.contains(p)) {
            g.programs.push(p);
        }
    }
    let draws = |n: usize| format!("{n} draw{}", if n == 1 { "" } else { "s" });
    groups
        .into_iter()
        .map(|g| match g.programs.as_slice() {
            [] => format!("{} without geometry: {}", draws(g.draws), g.key),
            [p] => format!("{} without geometry: program {p}{}", draws(g.draws), g.key),
            many => {
                let mut sorted = many.to_vec();
                sorted.sort_by_key(|p| p.parse::<u64>().unwrap_or(u64::MAX));
                let mut names = sorted[..many.len().min(PROGRAMS_LISTED)].join(", ");
                if many.len() > PROGRAMS_LISTED {
                    names.push_str(", …");
                }
                format!(
                    "{} without geometry in {} programs ({names}): each program{}",
                    draws(g.draws),
                    many.len(),
                    g.key
                )
            }
        })
        .collect()
}

/// `("12", " has no shaders…")` from `"program 12 has no shaders…"`: the program's name and
/// what follows it, for a reason that starts with one.
fn split_program(reason: &str) -> Option<(&str, &str)> {
    let rest = reason.strip_prefix("program ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0).then(|| rest.split_at(digits))
}

/// `examples/src/bin/hot_spot.rs:127 hot_spot::main` without the directories above the
/// file's project-relative part: the last three path components are enough to find it.
pub fn short_source(source: &str) -> &str {
    let path_end = source.find(' ').unwrap_or(source.len());
    let path = &source[..path_end];
    let mut cut = 0;
    for (n, (i, _)) in path.rmatch_indices('/').enumerate() {
        if n == 3 {
            cut = i + 1;
            break;
        }
    }
    &source[cut..]
}

/// `1.234 ±0.010` ms: a median and its MAD.
fn ms_spread(s: &gpuheat_analysis::measure::stats::Summary) -> String {
    format!("{:.3} ±{:.3}", s.median / 1e6, s.mad / 1e6)
}

/// The render targets' own and total cost over the frames, what consumed them, and the cost
/// that reaches no screen pixel.
fn targets_text(f: &FlowSummary, o: &mut String) {
    let _ = writeln!(
        o,
        "
render targets in {} frames with maps (ms per frame, median ±MAD; total = own + upstream passes)",
        f.frames
    );
    let _ = writeln!(
        o,
        "{:<16} {:>11} {:>15} {:>15} {:>6} {:>7} {:>9}  attachments, format; feeds",
        "target", "size", "own ms", "total ms", "share", "passes", "consumers"
    );
    for t in &f.targets {
        let (size, what) = match &t.target {
            Some(r) => {
                let attachments: Vec<String> = r
                    .attachments
                    .iter()
                    .map(|a| match *a {
                        gpuheat_session::Attachment::Texture { name, level, layer } => {
                            let mut s = format!("texture {name}");
                            if level > 0 || layer > 0 {
                                s.push_str(&format!(" level {level} layer {layer}"));
                            }
                            s
                        }
                        gpuheat_session::Attachment::Renderbuffer { name } => {
                            format!("renderbuffer {name}")
                        }
                    })
                    .collect();
                let format =
                    gpuheat_analysis::enums::enum_name(u64::from(r.format), Some("InternalFormat"))
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("{:#x}", r.format));
                (
                    format!("{}x{}", r.width, r.height),
                    format!("{}, {format}", attachments.join(" + ")),
                )
            }
            None => ("-".into(), "default framebuffer".into()),
        };
        let what = if t.also.is_empty() {
            what
        } else {
            format!(
                "{what}; also {} (framebuffer {} drawing into another texture)",
                t.also.join(", "),
                t.role.framebuffer
            )
        };
        let feeds = if t.feeds.is_empty() {
            String::new()
        } else {
            format!("; feeds {}", t.feeds.join(", "))
        };
        let frames = if t.frames < f.frames {
            format!(" (in {} frames)", t.frames)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "{:<16} {:>11} {:>15} {:>15} {:>5.1}% {:>7} {:>9}  {what}{feeds}{frames}",
            t.label,
            size,
            ms_spread(&t.own_ns),
            ms_spread(&t.total_ns),
            t.own_share * 100.0,
            t.passes,
            t.consumers,
        );
    }
    if f.remainders.is_empty() {
        let _ = writeln!(
            o,
            "remainders: none; every painted draw's cost reaches the screen"
        );
    } else {
        let _ = writeln!(
            o,
            "remainders (cost that reaches no screen pixel, ms per frame it occurs in):"
        );
        for r in &f.remainders {
            let note = if r.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.note)
            };
            let _ = writeln!(
                o,
                "  {:<24} {:<16} {:>15} in {} frames: {}{note}",
                r.kind.name(),
                r.label,
                ms_spread(&r.ns),
                r.frames,
                r.why
            );
        }
    }
    if !f.unplaced.is_empty() {
        let _ = writeln!(
            o,
            "not placed (work calls with no fragments of their own; ms per frame they occur in):"
        );
        for u in &f.unplaced {
            let _ = writeln!(
                o,
                "  {:<41} {:>15} in {} frames, {} per frame",
                u.function,
                ms_spread(&u.ns),
                u.frames,
                u.calls
            );
        }
    }
    let _ = writeln!(o, "upstream cost is spread {}", f.spreading);
    for n in &f.notes {
        let _ = writeln!(o, "note: {n}");
    }
}

/// The checklist's findings, most severe first, the same rule over many frames on one line
/// (its figures those of the first frame listed); shared by `report` and `checklist`.
pub fn findings_text(found: &[Finding], o: &mut String) {
    if found.is_empty() {
        let _ = writeln!(o, "\nfindings: none");
        return;
    }
    let mut sorted: Vec<&Finding> = found.iter().collect();
    sorted.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.rule.cmp(b.rule))
            .then(a.call.cmp(&b.call))
            .then(a.frame.cmp(&b.frame))
    });
    let _ = writeln!(o, "\nfindings ({})", found.len());
    let mut i = 0;
    while i < sorted.len() {
        let f = sorted[i];
        let same = sorted[i..]
            .iter()
            .take_while(|g| g.rule == f.rule && g.call == f.call)
            .count();
        let severity = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        let place = match f.call {
            Some(c) => format!("frame {} call {c}", f.frame),
            None => format!("frame {}", f.frame),
        };
        let more = if same > 1 {
            format!(" (and {} more frames)", same - 1)
        } else {
            String::new()
        };
        let _ = writeln!(o, "{severity:>8}  {}: {place}{more}: {}", f.rule, f.title);
        let _ = writeln!(o, "{:>10}{}", "", f.detail);
        if !f.fix.is_empty() {
            let _ = writeln!(o, "{:>10}fix: {}", "", f.fix);
        }
        if let Some(c) = &f.cost {
            let _ = writeln!(
                o,
                "{:>10}cost: {:.3} ms per frame, {}",
                "",
                c.ns as f64 / 1e6,
                c.measured
            );
        }
        i += same;
    }
}

/// The agent's waits for the GPU per captured frame, as the report's `agent` line says them
/// (`None` for a session of an agent that did not count).
fn agent_waits_line(frames: &[gpuheat_session::AgentFrame]) -> Option<String> {
    let waits: Vec<f64> = frames.iter().map(|f| f.waits as f64).collect();
    let w = gpuheat_analysis::measure::stats::Summary::of(&waits)?;
    Some(format!(
        "agent    waited for the GPU {} times per frame (median of {} frame{}, {}-{}): its own glFinish, read-backs and query reads",
        w.median,
        w.n,
        if w.n == 1 { "" } else { "s" },
        w.min,
        w.max
    ))
}

/// Where the agent's own time went per captured frame, medians of each part (`None` for a
/// session of an agent that did not time it): what a capture costs the program on a GPU
/// where it no longer waits.
fn agent_time_line(frames: &[gpuheat_session::AgentFrame]) -> Option<String> {
    let median = |part: &dyn Fn(&gpuheat_session::AgentTimes) -> u64| {
        let v: Vec<f64> = frames.iter().map(|f| part(&f.own) as f64 / 1e6).collect();
        gpuheat_analysis::measure::stats::Summary::of(&v).map_or(0.0, |s| s.median)
    };
    let total = median(&|t| t.total_ns());
    if total <= 0.0 {
        return None;
    }
    let parts: [(&str, f64); 5] = [
        ("counters' brackets", median(&|t| t.counters_ns)),
        ("reading results", median(&|t| t.results_ns)),
        ("painting heat", median(&|t| t.paint_ns)),
        ("reading maps back", median(&|t| t.maps_ns)),
        ("geometry", median(&|t| t.geometry_ns)),
    ];
    let named: Vec<String> = parts
        .iter()
        // As printed: a part under half a microsecond reads 0.000.
        .filter(|(_, ms)| *ms >= 0.0005)
        .map(|(what, ms)| format!("{ms:.3} {what}"))
        .collect();
    Some(format!(
        "         its own work took {total:.3} ms per frame (medians, ms): {}",
        named.join(", ")
    ))
}

/// The GPU time of the heat painter's own passes per frame, medians over the frames that
/// timed them (`None` where none did): on a real GPU, what heat costs the program's frame.
fn agent_gpu_line(
    frames: &[gpuheat_session::AgentFrame],
    contexts: &[gpuheat_session::ContextInfo],
) -> Option<String> {
    let timed: Vec<gpuheat_session::PaintGpu> =
        frames.iter().filter_map(|f| f.own.paint_gpu).collect();
    let median = |part: &dyn Fn(&gpuheat_session::PaintGpu) -> u64| {
        let v: Vec<f64> = timed.iter().map(|t| part(t) as f64 / 1e6).collect();
        gpuheat_analysis::measure::stats::Summary::of(&v).map(|s| s.median)
    };
    let total = median(&|t| t.replay_ns + t.weight_ns)?;
    let mut line = format!(
        "         its heat passes took {total:.3} ms of GPU per frame (medians of {} frame{}, ms): {:.3} replaying the draws into its stencil, {:.3} weighting them into the maps",
        timed.len(),
        if timed.len() == 1 { "" } else { "s" },
        median(&|t| t.replay_ns).unwrap_or(0.0),
        median(&|t| t.weight_ns).unwrap_or(0.0),
    );
    let untimed = median(&|t| t.untimed).unwrap_or(0.0) * 1e6;
    if untimed > 0.0 {
        line.push_str(&format!(" ({untimed} draws a frame not timed)"));
    }
    // The stamps are timestamps: where they do not mark a call's own work done, neither do
    // they a pass's.
    if let Some(c) = contexts.iter().find(|c| !c.pipelined_meaningful) {
        line.push_str(&format!(
            "\ncaution  {} writes a timestamp when it rasterizes, not when the work before it is done: the heat passes' GPU times there are not their cost",
            c.renderer
        ));
    }
    Some(line)
}

/// What a Vulkan session's frames submitted, as the report's `vulkan` line says it: submits,
/// command buffers and render passes per frame (medians), and the command buffers recorded
/// before the capture, whose draws are in no captured frame and untimed (a program that
/// records its command buffers once, as vkcube does). `None` without Vulkan frames.
fn vulkan_line(frames: &[gpuheat_session::VkFrame]) -> Option<String> {
    let median = |f: &dyn Fn(&gpuheat_session::VkFrame) -> usize| {
        let v: Vec<f64> = frames.iter().map(|x| f(x) as f64).collect();
        gpuheat_analysis::measure::stats::Summary::of(&v).map(|s| s.median)
    };
    let submits = median(&|f| f.submits.len())?;
    let cbs = median(&|f| f.submits.iter().map(|s| s.command_buffers.len()).sum())?;
    let before = median(&|f| f.submits.iter().map(|s| s.recorded_before as usize).sum())?;
    let passes = median(&|f| f.begins.len())?;
    let isolated = median(&|f| f.isolated as usize)?;
    let mut line = format!(
        "vulkan   per frame (median of {} frames): {submits} queue submits running {cbs} command buffers, {passes} render passes begun",
        frames.len()
    );
    if isolated > 0.0 {
        line.push_str(&format!(
            "; {isolated} commands isolated by barriers (outside render passes: draws inside one are timed, not isolated)"
        ));
    }
    if before > 0.0 {
        line.push_str(&format!(
            "; {before} command buffers were recorded before the capture: their draws are in no captured frame and untimed (capture from the program's start with `gpuheat run --skip 0` to see them)"
        ));
    }
    Some(line)
}

/// How many work calls per frame were timed deferred, and, where a context's timestamps do
/// not bracket a call's own work, that their times are not its cost (`None` when none was).
fn deferred_line(
    frames: &[gpuheat_session::AgentFrame],
    contexts: &[gpuheat_session::ContextInfo],
) -> Option<String> {
    let deferred: Vec<f64> = frames.iter().map(|f| f.deferred as f64).collect();
    let d = gpuheat_analysis::measure::stats::Summary::of(&deferred)?;
    if d.max == 0.0 {
        return None;
    }
    let mut line = format!(
        "         {} work calls per frame timed deferred (median, {}-{}): timestamp pairs and queries read once at the frame's end, no drain around each",
        d.median, d.min, d.max
    );
    // One line per renderer: a toolkit makes several contexts on one.
    let mut renderers: Vec<&str> = contexts
        .iter()
        .filter(|c| !c.pipelined_meaningful)
        .map(|c| c.renderer.as_str())
        .collect();
    renderers.sort_unstable();
    renderers.dedup();
    for r in renderers {
        line.push_str(&format!(
            "\ncaution  {r} does not write a timestamp when a call's own work is done: \
             deferred serialized times there are not the calls' cost (counts are exact); \
             `--timing isolated` measures the cost"
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::{
        agent_gpu_line, agent_time_line, agent_waits_line, attach_line, deferred_line,
        geometry_text, missing_geometry_lines, split_program,
    };

    #[test]
    fn the_attach_line_says_how_much_of_the_first_frames_wait_was_getting_in() {
        let mut a = gpuheat_session::AttachInfo {
            thread: 7,
            safe_point: "glXSwapBuffers".into(),
            latency_ns: 2_637_800_000,
            hiccup_ns: 17_800_000,
            injection_ns: 2_178_900_000,
        };
        assert_eq!(
            attach_line(&a, false),
            "attach   at glXSwapBuffers on thread 7: render thread held 17.8 ms, first frame \
             2638 ms after the command (2179 ms of it getting in, at the program's swap)"
        );
        // A session without the injection's time says nothing of it.
        a.injection_ns = 0;
        assert!(attach_line(&a, true).ends_with("watching from 2638 ms after the command"));
    }

    #[test]
    fn a_reason_names_its_program_only_when_it_starts_with_one() {
        assert_eq!(
            split_program("program 12 has no vertex stage"),
            Some(("12", " has no vertex stage"))
        );
        assert_eq!(
            split_program("program 7's vertex shader uses a shader storage block"),
            Some(("7", "'s vertex shader uses a shader storage block"))
        );
        assert_eq!(split_program("program is not linked"), None);
        assert_eq!(split_program("no program is current"), None);
    }

    #[test]
    fn draws_missing_geometry_for_one_cause_in_many_programs_read_as_one_line() {
        let detached = |p: u32| format!("program {p} has no shaders attached");
        let mut reasons: Vec<String> = Vec::new();
        // Ten programs with the same cause, program 3 drawn twice; another cause; one program
        // with a cause of its own.
        for p in (1..=10).rev() {
            reasons.push(detached(p));
        }
        reasons.push(detached(3));
        reasons.push("no program is current (fixed-function vertex processing)".into());
        reasons.push("program 40's vertex shader uses an image".into());
        reasons.push("no program is current (fixed-function vertex processing)".into());
        let lines = missing_geometry_lines(reasons.iter().map(String::as_str));
        assert_eq!(
            lines,
            [
                "11 draws without geometry in 10 programs (1, 2, 3, 4, 5, 6, 7, 8, …): each \
                 program has no shaders attached",
                "2 draws without geometry: no program is current (fixed-function vertex \
                 processing)",
                "1 draw without geometry: program 40's vertex shader uses an image",
            ]
        );
    }

    #[test]
    fn the_agent_time_line_names_the_parts_that_took_time() {
        let frame = |counters_ns, maps_ns| gpuheat_session::AgentFrame {
            frame: 1,
            waits: 0,
            deferred: 0,
            own: gpuheat_session::AgentTimes {
                counters_ns,
                maps_ns,
                ..Default::default()
            },
        };
        assert_eq!(agent_time_line(&[frame(0, 0)]), None);
        let line = agent_time_line(&[
            frame(2_000_000, 0),
            frame(4_000_000, 1_000_000),
            frame(3_000_000, 0),
        ])
        .unwrap();
        assert!(
            line.contains("took 3.000 ms per frame (medians, ms): 3.000 counters' brackets"),
            "{line}"
        );
        assert!(!line.contains("maps"), "{line}");
    }

    #[test]
    fn the_heat_passes_line_gives_the_gpu_medians_of_the_frames_that_timed_them() {
        let frame = |paint_gpu| gpuheat_session::AgentFrame {
            frame: 1,
            waits: 0,
            deferred: 0,
            own: gpuheat_session::AgentTimes {
                paint_gpu,
                ..Default::default()
            },
        };
        let gpu = |replay_ms: u64, weight_ms: u64| {
            Some(gpuheat_session::PaintGpu {
                replay_ns: replay_ms * 1_000_000,
                weight_ns: weight_ms * 1_000_000,
                untimed: 0,
            })
        };
        assert_eq!(agent_gpu_line(&[frame(None)], &[]), None);
        let line = agent_gpu_line(
            &[
                frame(gpu(2, 10)),
                frame(None),
                frame(gpu(4, 20)),
                frame(gpu(3, 30)),
            ],
            &[],
        )
        .unwrap();
        assert!(
            line.contains("took 24.000 ms of GPU per frame (medians of 3 frames, ms): 3.000 replaying the draws into its stencil, 20.000 weighting"),
            "{line}"
        );
        assert!(!line.contains("not timed"), "{line}");
        assert!(!line.contains("caution"), "{line}");
    }

    #[test]
    fn the_agent_line_gives_the_median_and_range_of_the_waits() {
        let frames = |w: &[u64]| -> Vec<gpuheat_session::AgentFrame> {
            w.iter()
                .enumerate()
                .map(|(i, &waits)| gpuheat_session::AgentFrame {
                    frame: i as u64,
                    waits,
                    deferred: 0,
                    own: Default::default(),
                })
                .collect()
        };
        assert_eq!(agent_waits_line(&[]), None);
        let line = agent_waits_line(&frames(&[23, 22, 22])).unwrap();
        assert!(
            line.contains(" 22 times per frame (median of 3 frames, 22-23)"),
            "{line}"
        );
        let line = agent_waits_line(&frames(&[4, 1])).unwrap();
        assert!(
            line.contains(" 2.5 times per frame (median of 2 frames, 1-4)"),
            "{line}"
        );
        assert_eq!(deferred_line(&frames(&[4, 1]), &[]), None);
        let deferred: Vec<_> = [(1, 101), (1, 99)]
            .iter()
            .map(|&(waits, deferred)| gpuheat_session::AgentFrame {
                frame: 1,
                waits,
                deferred,
                own: Default::default(),
            })
            .collect();
        let line = deferred_line(&deferred, &[]).unwrap();
        assert!(
            line.contains(" 100 work calls per frame timed deferred (median, 99-101)"),
            "{line}"
        );
        assert!(!line.contains("caution"), "{line}");
        // Two contexts on a software rasterizer and one on a GPU: one caution, for the first.
        let context = |handle, renderer: &str, meaningful| gpuheat_session::ContextInfo {
            handle,
            api: gpuheat_session::ClientApi::Gl,
            vendor: String::new(),
            renderer: renderer.into(),
            version: String::new(),
            counters: Vec::new(),
            pipelined_meaningful: meaningful,
            pipelined_note: String::new(),
            serialized_overhead_ns: 0,
        };
        let contexts = [
            context(1, "llvmpipe", false),
            context(2, "llvmpipe", false),
            context(3, "NVIDIA H100", true),
        ];
        let line = deferred_line(&deferred, &contexts).unwrap();
        assert_eq!(line.matches("caution").count(), 1, "{line}");
        assert!(line.contains("caution  llvmpipe does not"), "{line}");
    }
    use gpuheat_testkit::{SessionBuilder, CONTEXT};

    /// A triangle in clip space.
    const TRIANGLE: [[f32; 4]; 3] = [
        [-1.0, -1.0, 0.0, 1.0],
        [1.0, -1.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
    ];

    fn geometry_line(contexts: &[u64], frames: usize) -> String {
        let mut b = SessionBuilder::new();
        for &c in &contexts[1..] {
            b = b.context(c);
        }
        for _ in 0..frames {
            b = b.frame(|f| {
                for &c in contexts {
                    f.on_context(c);
                    let d = f.draw(100);
                    f.geometry(d, TRIANGLE.to_vec());
                }
            });
        }
        let mut o = String::new();
        geometry_text(&b.build(), &mut o);
        o
    }

    #[test]
    fn geometry_counts_frames_not_records() {
        // Three frames on two contexts are six records, and three frames.
        let two = geometry_line(&[CONTEXT, CONTEXT + 1], 3);
        assert!(
            two.starts_with(
                "geometry 6 draws with post-transform positions in 3 frames on 2 contexts; \
                 at most 3 vertices in a frame and context"
            ),
            "{two}"
        );
        let one = geometry_line(&[CONTEXT], 3);
        assert!(
            one.starts_with(
                "geometry 3 draws with post-transform positions in 3 frames; at most 3 \
                 vertices in a frame (budget"
            ),
            "{one}"
        );
        let single = geometry_line(&[CONTEXT], 1);
        assert!(single.contains(" in 1 frame;"), "{single}");
    }
}
