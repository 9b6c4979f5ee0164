//! Two sessions compared draw by draw: which draws are the same ([`crate::measure::identity`] first,
//! then sequence alignment of what is left), how every measured counter of each changed, and
//! whether that change is beyond the noise of both sides.
//!
//! Each comparison is Mann–Whitney's rank test over the frames of both sides, with the
//! Hodges–Lehmann shift and its interval for "by how much". Comparing many draws at once,
//! the p-values of each metric are corrected with Benjamini–Hochberg, so a table of a hundred
//! unchanged draws does not show five "significant" ones. A change is reported as significant
//! only when it is also at least a factor `1 + min_change` either way
//! ([`DiffOptions::min_change`]): on llvmpipe the same draw measures up to 1.9× apart between
//! two captures, and a profiler that calls such drift a regression sends people chasing
//! nothing.

use crate::checklist::{check, Finding, Severity};
use crate::measure::aggregate::{
    aggregate, DrawStats, SessionStats, CALL_TIME, CPU_TIME, DISTURBED_SPREAD, FRAGMENTS,
    GPU_PIPELINED, GPU_SERIALIZED,
};
use crate::measure::stats::{
    benjamini_hochberg, hodges_lehmann, hodges_lehmann_ratio, mann_whitney, min_p_value, Shift,
    Summary,
};
use gpuheat_session::counter_names::{
    CLIPPING_OUTPUT_PRIMITIVES, FRAGMENT_SHADER_INVOCATIONS, SAMPLES_PASSED,
    VERTEX_SHADER_INVOCATIONS,
};
use gpuheat_session::Session;
use rayon::prelude::*;
use serde::Serialize;
use similar::{capture_diff_slices, Algorithm, DiffOp};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Smallest relative change called significant on a GPU, by default.
pub const MIN_CHANGE_GPU: f64 = 0.05;
/// … and on a software rasterizer, which shares the CPU with everything else: a factor of 2
/// either way. Measured on llvmpipe (2 cores, quiet): twelve captures of `hot_spot --loop 300
/// --spot 48`, one after the other: the same full-screen quad's median was 0.59–1.13 ms
/// (1.9×) from capture to capture, the hot square's 2.12–3.34 ms; within one capture the
/// frames vary a few percent, so a test over them alone calls such a change significant. Most
/// of it is common to every draw and taken out as the [`Drift`]; the factor covers the rest.
pub const MIN_CHANGE_SOFTWARE: f64 = 1.0;

/// Whether a ratio B/A is at least a factor `1 + min_change` either way.
pub fn beyond_factor(ratio: f64, min_change: f64) -> bool {
    ratio > 0.0 && ratio.ln().abs() >= (1.0 + min_change).ln() - 1e-12
}

/// A draw's CPU or wall time in the call must change by at least this much (ns) to be called
/// significant: two captures of the same program on this machine measured per-call CPU times
/// of 10 µs and 5 µs, a run-to-run difference that is no finding about a draw. The frames'
/// CPU and wall time are held to it too (`judge`).
pub const MIN_CALL_TIME_SHIFT_NS: f64 = 20_000.0;

/// How strict a diff is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffOptions {
    /// False discovery rate: significant rows of one metric are at most this share noise, in
    /// expectation.
    pub alpha: f64,
    /// Smallest change called significant, as a factor either way: 0.05 means B/A ≥ 1.05 or
    /// ≤ 1/1.05 (for a value that was 0, |change| ≥ 5% of the other); `None`:
    /// [`MIN_CHANGE_SOFTWARE`] when either side ran on a software rasterizer, else
    /// [`MIN_CHANGE_GPU`].
    pub min_change: Option<f64>,
    /// Judge raw times instead of times beyond the common drift ([`Drift`]).
    pub absolute: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            alpha: 0.05,
            min_change: None,
            absolute: false,
        }
    }
}

/// Fewest matched, timed draws from which a common drift is estimated: with fewer, a change
/// of one draw cannot be told from a change of the machine.
pub const DRIFT_MIN_DRAWS: usize = 3;

/// The factor by which all matched draws' GPU times moved together from A to B: the median
/// of their Hodges–Lehmann ratios. Two captures of the same program on a shared machine
/// differ this way (measured here: every draw 30% slower in a capture made while a compiler
/// ran), and a rank test over one capture's frames cannot see it, since every frame of a
/// capture shares the machine's state. Per-draw verdicts and the gate are judged beyond it;
/// a change common to every draw is therefore reported as the drift, and the raw frame times
/// are shown next to it, unjudged. The CPU-side times of the calls drift the same way (the
/// CPU is the machine's too): each has its own drift ([`Diff::call_drifts`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Drift {
    /// The draw metric that drifted: the ranking GPU time, [`CPU_TIME`] or [`CALL_TIME`].
    pub metric: &'static str,
    /// B / A common to the matched draws.
    pub factor: f64,
    /// Matched draws it was estimated from.
    pub draws: usize,
    /// Median absolute deviation of the draws' log-ratios around it: how uniform it is.
    pub spread: f64,
}

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly higher in B (slower, for times).
    Higher,
    /// Significantly lower in B (faster, for times).
    Lower,
    /// Within the noise of both sides.
    Noise,
    /// Too few values on a side for any change to be significant.
    TooFew,
}

impl Verdict {
    /// `slower`/`faster` for times, `more`/`fewer` for counts, `noise`, `too few`.
    pub fn word(self, unit: &str) -> &'static str {
        let time = unit == "ns";
        match self {
            Verdict::Higher if time => "slower",
            Verdict::Lower if time => "faster",
            Verdict::Higher => "more",
            Verdict::Lower => "fewer",
            Verdict::Noise => "noise",
            Verdict::TooFew => "too few",
        }
    }

    /// Whether the change is significant.
    pub fn significant(self) -> bool {
        matches!(self, Verdict::Higher | Verdict::Lower)
    }
}

/// One metric of one draw (or of the frames) in A and in B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The metric, e.g. `gpu_time_serialized`.
    pub metric: String,
    /// Its unit, e.g. `ns`.
    pub unit: String,
    /// Over A's frames.
    pub a: Option<Summary>,
    /// Over B's frames.
    pub b: Option<Summary>,
    /// B − A: the Hodges–Lehmann shift with its 95% interval.
    pub shift: Option<Shift>,
    /// B / A: the Hodges–Lehmann ratio with its 95% interval (on the logarithms), when every
    /// value is positive.
    pub ratio: Option<Shift>,
    /// The relative change: `ratio − 1`, else the shift over A's median (0.1 = 10% higher
    /// in B).
    pub relative: Option<f64>,
    /// Mann–Whitney's two-sided p-value.
    pub p: Option<f64>,
    /// The p-value corrected for the number of comparisons of this metric.
    pub q: Option<f64>,
    /// The conclusion.
    pub verdict: Verdict,
}

/// How a draw of A was found in B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Same identity: call site, entry point, program, arguments and order.
    Identity,
    /// Aligned in the draw stream by call site and entry point; its program, arguments or
    /// order changed.
    CallSite,
    /// Aligned in the draw stream by entry point, program and arguments; its call site moved
    /// (another build of the program).
    Shape,
}

/// A draw of A and its match in B.
#[derive(Debug, Clone, Serialize)]
pub struct DrawDiff {
    /// Index in A's [`SessionStats::draws`].
    pub a: usize,
    /// Index in B's [`SessionStats::draws`].
    pub b: usize,
    /// How they were matched.
    pub matched_by: MatchedBy,
    /// Every metric measured on either side, in A's metric order then B's extra ones.
    pub metrics: Vec<Comparison>,
    /// Index in `metrics` of the ranking GPU time.
    pub rank: usize,
    /// The ranking GPU time with B's values divided by the common drift, when there is one:
    /// what the verdict of the draw is.
    pub time_beyond_drift: Option<Comparison>,
    /// The CPU-side times ([`CPU_TIME`], [`CALL_TIME`]) with B's values divided by their
    /// common drift ([`Diff::call_drifts`]): what their verdicts are.
    pub calls_beyond_drift: Vec<Comparison>,
    /// When its time changed significantly together with the work it did: which work, and
    /// whether the time per unit of it changed too.
    pub work: Option<WorkChange>,
}

/// Work counters a draw's time moves with, in the order a time change is put down to one:
/// shaded fragments first, as they drive most draws' cost.
pub const WORK_METRICS: [&str; 5] = [
    FRAGMENT_SHADER_INVOCATIONS,
    SAMPLES_PASSED,
    FRAGMENTS,
    VERTEX_SHADER_INVOCATIONS,
    CLIPPING_OUTPUT_PRIMITIVES,
];

/// A draw whose time changed significantly along with a work counter that changed
/// significantly the same way. An animated program drew 5× the fragments in one capture
/// (neverball's title screen replays a game): its draws took 5× the time, and calling them
/// "slower" would send the user after a regression the program's code does not have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkChange {
    /// The work counter ([`WORK_METRICS`]).
    pub metric: String,
    /// B / A of its medians; infinite where A did none of it.
    pub ratio: f64,
    /// B / A of the time per unit of that work; `None` where a side did none of it.
    pub per_unit: Option<f64>,
    /// Whether the time per unit did not move the time's way beyond the diff's threshold:
    /// the time moved with the work, and the draw is no slower (faster) at it.
    pub explains: bool,
}

/// `fragment_shader_invocations x4.57, time per unit x0.97`, as `diff` and the viewer say it.
impl std::fmt::Display for WorkChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.ratio.is_finite() {
            write!(f, "{} x{:.2}", self.metric, self.ratio)?;
        } else {
            write!(f, "{} from none in A", self.metric)?;
        }
        match self.per_unit {
            Some(r) => write!(f, ", time per unit x{r:.2}"),
            None => Ok(()),
        }
    }
}

/// The work change behind a significant time change of `d`, if a work counter changed
/// significantly the same way.
fn work_change(d: &DrawDiff, min_change: f64) -> Option<WorkChange> {
    let t = d.time();
    if !t.verdict.significant() {
        return None;
    }
    let c = WORK_METRICS.iter().find_map(|w| {
        d.metrics
            .iter()
            .find(|c| c.metric == *w && c.verdict == t.verdict)
    })?;
    let (a, b) = (c.a?.median, c.b?.median);
    let ratio = if a > 0.0 { b / a } else { f64::INFINITY };
    let time_ratio = match (t.a, t.b) {
        (Some(x), Some(y)) if x.median > 0.0 => Some(y.median / x.median),
        _ => None,
    };
    let per_unit = match time_ratio {
        Some(r) if ratio.is_finite() && ratio > 0.0 => Some(r / ratio),
        _ => None,
    };
    // The work explains the change when it moved at least as far as the time, beyond the
    // threshold: a draw that did 30x the fragments in 10x the time (its fixed cost shared
    // by more of them) is no slower at its work.
    let factor = 1.0 + min_change;
    let explains = per_unit.is_none_or(|r| match t.verdict {
        Verdict::Higher => r < factor,
        _ => r > 1.0 / factor,
    });
    Some(WorkChange {
        metric: c.metric.clone(),
        ratio,
        per_unit,
        explains,
    })
}

impl DrawDiff {
    /// The judged comparison of the ranking GPU time: beyond the drift when there is one,
    /// else raw.
    pub fn time(&self) -> &Comparison {
        self.time_beyond_drift
            .as_ref()
            .unwrap_or(&self.metrics[self.rank])
    }

    /// The raw comparison of the ranking GPU time.
    pub fn raw_time(&self) -> &Comparison {
        &self.metrics[self.rank]
    }

    /// The judged comparison of metric row `c` of [`DrawDiff::metrics`]: beyond its drift
    /// when one was taken out, else `c` itself.
    pub fn judged<'a>(&'a self, c: &'a Comparison) -> &'a Comparison {
        if c.metric == self.raw_time().metric {
            return self.time();
        }
        self.calls_beyond_drift
            .iter()
            .find(|x| x.metric == c.metric)
            .unwrap_or(c)
    }

    /// Whether the draw's time changed significantly and its work explains it.
    pub fn moved_with_work(&self) -> bool {
        self.work.as_ref().is_some_and(|w| w.explains)
    }
}

/// A finding that is in one session and not in the other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingChange {
    /// The rule, e.g. `overdraw`.
    pub rule: &'static str,
    /// Its severity.
    pub severity: Severity,
    /// The title of one occurrence.
    pub title: String,
    /// The draw it is about (as its call text), `None` for a frame-wide finding.
    pub draw: Option<String>,
    /// In how many of its session's checked frames it fired …
    pub frames: usize,
    /// … of how many ([`Side::finding_frames`]).
    pub of: usize,
}

/// What describes a side of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// The program and its arguments.
    pub command: String,
    /// Capture mode, e.g. `full`.
    pub mode: String,
    /// Renderer strings of its contexts.
    pub renderers: Vec<String>,
    /// Surface or heat-map size, when known.
    pub size: Option<[u32; 2]>,
    /// Whether a context ran on a software rasterizer (llvmpipe and the like).
    pub software: bool,
    /// Frames captured.
    pub frames: usize,
    /// Frames without a first-use outlier.
    pub steady_frames: usize,
    /// The draws by identity.
    pub stats: SessionStats,
    /// The checklist's findings, over `finding_frames` of the frames.
    #[serde(skip)]
    pub findings: Vec<Finding>,
    /// Frames the checklist ran on (at most [`FINDING_FRAMES`], evenly spaced).
    pub finding_frames: usize,
}

/// Everything `gpuheat diff` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// The baseline.
    pub a: Side,
    /// The new capture.
    pub b: Side,
    /// What makes the comparison doubtful (different driver, size, mode, programs, too few
    /// frames).
    pub warnings: Vec<String>,
    /// The options it was made with.
    pub alpha: f64,
    /// The smallest relative change called significant.
    pub min_change: f64,
    /// The smallest serialized-time change called significant, ns: the larger calibrated
    /// cost of an empty serialized bracket of the two sessions' contexts.
    pub resolution_ns: f64,
    /// What `resolution_ns` is.
    pub resolution_reason: &'static str,
    /// Why that threshold: given, or chosen for the renderer.
    pub min_change_reason: String,
    /// The common drift of the matched draws' times, when it was taken out of the verdicts.
    pub drift: Option<Drift>,
    /// The common drift as estimated, also when it was not taken out (`--absolute`).
    pub drift_seen: Option<Drift>,
    /// The common drifts of the draws' CPU-side times ([`CPU_TIME`], [`CALL_TIME`]), taken
    /// out of their verdicts, CPU time's also out of the frames' CPU time in GL (none with
    /// `--absolute`).
    pub call_drifts: Vec<Drift>,
    /// Per-frame totals: GPU (ranking time), CPU in GL calls, wall, present; then, for each
    /// drift taken out, the total with B divided by it (`frame_gpu_time_beyond_drift`,
    /// `frame_cpu_time_beyond_drift`), which is judged in place of the raw row
    /// ([`Diff::frame_row_judged`]).
    pub frames: Vec<Comparison>,
    /// Matched draws: significant changes first (largest absolute GPU-time shift first), then
    /// the rest by absolute shift.
    pub matched: Vec<DrawDiff>,
    /// Draws only in A (indices in A's draws).
    pub only_a: Vec<usize>,
    /// Draws only in B (indices in B's draws).
    pub only_b: Vec<usize>,
    /// Findings of B that A did not have.
    pub findings_appeared: Vec<FindingChange>,
    /// Findings of A that B no longer has.
    pub findings_disappeared: Vec<FindingChange>,
}

/// What `--fail-if-slower` concluded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// Whether the frames' GPU time got slower than the threshold, beyond noise.
    pub failed: bool,
    /// Why, in one line.
    pub reason: String,
    /// The typical frame of A: the sum of its draws' median GPU times, ns.
    pub typical_ns: f64,
    /// What B adds to it beyond noise, ns.
    pub net_ns: f64,
    /// The frames' GPU-time comparison, for the record (beyond the drift when there is one).
    pub frames: Option<Comparison>,
    /// Matched draws (indices in [`Diff::matched`]) that got significantly slower, largest
    /// shift first.
    pub slower: Vec<usize>,
    /// Draws only in B (indices in B's draws), costliest first.
    pub added: Vec<usize>,
    /// When the gate failed with no draw significantly slower or added (every draw slower
    /// together): the matched draws whose time grew the most (indices in [`Diff::matched`], at
    /// most 5).
    pub contributors: Vec<usize>,
}

/// Compares session `b` against the baseline `a`.
pub fn diff(a: &Session, b: &Session, opts: &DiffOptions) -> Diff {
    let (side_a, side_b) = rayon::join(|| side(a), || side(b));
    let (min_change, min_change_reason) = match opts.min_change {
        Some(m) => (m, "given".to_string()),
        None if side_a.software || side_b.software => (
            MIN_CHANGE_SOFTWARE,
            "software rasterizer: the same draw measures up to 1.9x apart between captures"
                .to_string(),
        ),
        None => (MIN_CHANGE_GPU, "GPU".to_string()),
    };
    let opts = &DiffOptions {
        min_change: Some(min_change),
        ..*opts
    };
    let mut warnings = doubts(a, b, &side_a, &side_b, opts);
    let (pairs, only_a, only_b) = match_draws(&side_a.stats, &side_b.stats);
    let mut matched: Vec<DrawDiff> = pairs
        .par_iter()
        .map(|&(ia, ib, ref how)| draw_diff(&side_a.stats, &side_b.stats, ia, ib, how.clone()))
        .collect();
    // Also on a software rasterizer, where the captures' speed modes were once thought to
    // move some draws and not others: 11 captures of one running es2gears drifted -52% to
    // +78% from one to the next with the draws' ratios within 1-23% of each other, and 12 of
    // one hot_spot gave 43 of 132 ordered pairs a significant draw judged raw, 18 judged
    // beyond the drift (mostly llvmpipe's lazy clear). The threshold (2×) covers what is left.
    // The draws' ranking time: their GPU time, or their CPU time in the call where the
    // sessions measured none (timeline mode, `draw_diff`'s fallback), whose drift is then the
    // ranking one.
    let rank_metric = match matched.first() {
        Some(m) if m.raw_time().metric == CPU_TIME => CPU_TIME,
        _ => side_a.stats.ranked_by.counter(),
    };
    let estimated = common_drift(&matched, rank_metric);
    let drift = if opts.absolute { None } else { estimated };
    // The CPU-side times too: 11 captures of one running es2gears on llvmpipe moved the
    // draws' CPU time in the call by a common +57% from one capture to the next, with the
    // frame's GPU time (+101%) and wall time (+60%), while no draw changed beyond the others.
    let call_drifts: Vec<Drift> = if opts.absolute {
        Vec::new()
    } else {
        [CPU_TIME, CALL_TIME]
            .into_iter()
            .filter(|&m| m != rank_metric)
            .filter_map(|m| common_drift(&matched, m))
            .collect()
    };
    let mut frames = frame_comparisons(&side_a.stats, &side_b.stats, drift, &call_drifts);
    matched.par_iter_mut().for_each(|m| {
        if let Some(d) = drift {
            m.time_beyond_drift = beyond_drift(&side_a.stats, &side_b.stats, m, m.rank, d.factor);
        }
        m.calls_beyond_drift = call_drifts
            .iter()
            .filter_map(|d| {
                let k = m.metrics.iter().position(|c| c.metric == d.metric)?;
                (k != m.rank)
                    .then(|| beyond_drift(&side_a.stats, &side_b.stats, m, k, d.factor))
                    .flatten()
            })
            .collect();
    });
    // The resolution of a serialized time: timed isolated, the calibrated cost of an empty
    // bracket, which is subtracted from every measurement and itself varies by that much
    // between captures; timed deferred, nothing is subtracted (a timestamp pair written
    // around the call), and the floor is the timer's.
    let deferred = [a, b].map(timed_deferred);
    let resolution_ns = [a, b]
        .iter()
        .zip(deferred)
        .map(|(s, deferred)| {
            if deferred {
                DEFERRED_RESOLUTION_NS
            } else {
                s.contexts
                    .iter()
                    .map(|c| c.serialized_overhead_ns as f64)
                    .fold(0.0, f64::max)
            }
        })
        .fold(0.0, f64::max);
    let resolution_reason = if deferred.iter().all(|&d| d) {
        "timed deferred: timestamp pairs around each call, their resolution"
    } else {
        "an empty bracket's cost, their resolution"
    };
    judge(&mut matched, &mut frames, opts, resolution_ns);
    for m in matched.iter_mut() {
        m.work = work_change(m, min_change);
    }
    matched.sort_by(|x, y| {
        let (tx, ty) = (x.time(), y.time());
        let sig = |c: &Comparison| !c.verdict.significant();
        let size = |c: &Comparison| c.shift.map_or(0.0, |s| -s.estimate.abs());
        sig(tx)
            .cmp(&sig(ty))
            .then(size(tx).total_cmp(&size(ty)))
            .then(x.a.cmp(&y.a))
    });
    let (findings_appeared, findings_disappeared) = finding_changes(&side_a, &side_b, &pairs);
    let tests = matched
        .iter()
        .filter(|m| m.time().verdict != Verdict::TooFew)
        .count();
    let (na, nb) = (side_a.steady_frames, side_b.steady_frames);
    if tests > 1
        && min_p_value(na, nb) <= opts.alpha
        && min_p_value(na, nb) * tests as f64 > opts.alpha
    {
        warnings.push(format!(
            "{na} and {nb} steady frames against {tests} draws compared: one draw alone cannot be \
             significant after the correction for the number of draws; capture more frames \
             (--frames 12)"
        ));
    }
    if matched.is_empty() && !(side_a.stats.draws.is_empty() && side_b.stats.draws.is_empty()) {
        warnings
            .push("no draw of A matched one of B: the sessions share nothing to compare".into());
    }
    Diff {
        a: side_a,
        b: side_b,
        warnings,
        alpha: opts.alpha,
        min_change,
        min_change_reason,
        resolution_ns,
        resolution_reason,
        drift,
        drift_seen: estimated,
        call_drifts,
        frames,
        matched,
        only_a,
        only_b,
        findings_appeared,
        findings_disappeared,
    }
}

impl Diff {
    /// The frames' GPU-time comparison as judged (beyond the drift when there is one), when
    /// measured.
    pub fn frame_gpu(&self) -> Option<&Comparison> {
        self.frames
            .iter()
            .find(|c| c.metric == FRAME_GPU_BEYOND_DRIFT)
            .or(self.frames.first())
            .filter(|c| c.a.is_some() && c.b.is_some())
    }

    /// Whether frame row `c` has a verdict: not the presents (never judged), nor a raw total
    /// whose drift was taken out (its row beyond the drift is judged instead).
    pub fn frame_row_judged(&self, c: &Comparison) -> bool {
        judged_frame_row(&self.frames, &c.metric)
    }

    /// `--fail-if-slower pct`: whether the typical frame got slower by more than `pct`
    /// percent, counting only what is beyond noise.
    ///
    /// The typical frame is the sum of A's draws' medians. What B adds to it is the shift
    /// (beyond the drift) of every matched draw judged significant, either way, plus the
    /// draws only in B, minus those only in A: draws within noise add nothing, so noise does
    /// not accumulate over many draws, and a disturbance that slows a different draw in each
    /// frame (which moves the frames' sums but no draw's median) does not fail the gate. A
    /// drift that is itself a slowdown beyond `pct` plus the renderer's run-to-run allowance
    /// ([`Diff::min_change`]) fails it too, every draw slower together, except on a software
    /// rasterizer, whose captures drift by up to 1.5× as a whole (see [`MIN_CHANGE_SOFTWARE`]):
    /// there only `--absolute` judges a uniform change.
    pub fn gate(&self, pct: f64) -> Gate {
        let rank_a = self.a.stats.rank_metric();
        let rank_b = self.b.stats.rank_metric();
        let median = |side: &Side, rank: usize, i: usize| {
            side.stats.draws[i].metric(rank).map_or(0.0, |m| m.median)
        };
        let typical: f64 = (0..self.a.stats.draws.len())
            .map(|i| median(&self.a, rank_a, i))
            .sum();
        let mut added = self.only_b.clone();
        added.sort_by(|&x, &y| median(&self.b, rank_b, y).total_cmp(&median(&self.b, rank_b, x)));
        let mut slower: Vec<usize> = (0..self.matched.len())
            .filter(|&i| self.matched[i].time().verdict == Verdict::Higher)
            .collect();
        let shift = |i: usize| self.matched[i].time().shift.map_or(0.0, |s| s.estimate);
        slower.sort_by(|&x, &y| shift(y).total_cmp(&shift(x)));
        let significant: f64 = (0..self.matched.len())
            .filter(|&i| self.matched[i].time().verdict.significant())
            .map(shift)
            .sum();
        let net = significant
            + self
                .only_b
                .iter()
                .map(|&i| median(&self.b, rank_b, i))
                .sum::<f64>()
            - self
                .only_a
                .iter()
                .map(|&i| median(&self.a, rank_a, i))
                .sum::<f64>();
        let frames = self.frame_gpu().cloned();
        let relative = if typical > 0.0 { net / typical } else { 0.0 };
        let drift = self.drift.map_or(0.0, |d| d.factor - 1.0);
        let (failed, reason) = if typical <= 0.0 {
            (false, "no GPU time was measured on both sides".to_string())
        } else if 100.0 * relative > pct {
            (
                true,
                format!(
                    "the typical frame ({:.3} ms) is {:+.1}% slower beyond noise: {:+.3} ms from \
                     draws significantly changed, added or removed",
                    typical / 1e6,
                    100.0 * relative,
                    net / 1e6
                ),
            )
        } else if !(self.a.software || self.b.software)
            && 100.0 * drift > pct + 100.0 * self.min_change
        {
            (
                true,
                format!(
                    "every draw got slower together ({:+.1}%), beyond the {:.0}% runs drift by here",
                    100.0 * drift,
                    100.0 * self.min_change
                ),
            )
        } else {
            (
                false,
                match (self.drift, self.drift_seen) {
                    (Some(d), _) => format!(
                        "the typical frame ({:.3} ms) changed {:+.1}% beyond noise; the common drift, taken out, is {:+.1}%",
                        typical / 1e6,
                        100.0 * relative,
                        100.0 * (d.factor - 1.0)
                    ),
                    (None, Some(d)) => format!(
                        "the typical frame ({:.3} ms) changed {:+.1}% beyond noise; the draws' median drift, not taken out, is {:+.1}%",
                        typical / 1e6,
                        100.0 * relative,
                        100.0 * (d.factor - 1.0)
                    ),
                    (None, None) => format!(
                        "the typical frame ({:.3} ms) changed {:+.1}% beyond noise",
                        typical / 1e6,
                        100.0 * relative
                    ),
                },
            )
        };
        let contributors = if failed && slower.is_empty() && added.is_empty() {
            let mut grew: Vec<usize> = (0..self.matched.len())
                .filter(|&i| shift(i) > 0.0)
                .collect();
            grew.sort_by(|&x, &y| shift(y).total_cmp(&shift(x)));
            grew.truncate(5);
            grew
        } else {
            Vec::new()
        };
        Gate {
            failed,
            reason,
            typical_ns: typical,
            net_ns: net,
            frames,
            slower,
            added,
            contributors,
        }
    }
}

/// The frames' GPU time with B divided by the common drift.
pub const FRAME_GPU_BEYOND_DRIFT: &str = "frame_gpu_time_beyond_drift";
/// The frames' CPU time in GL calls with B divided by the draws' CPU-time drift.
pub const FRAME_CPU_BEYOND_DRIFT: &str = "frame_cpu_time_beyond_drift";

/// The frame row judged in place of raw frame row `metric` when its drift is taken out.
fn beyond_name(metric: &str) -> &'static str {
    match metric {
        FRAME_GPU => FRAME_GPU_BEYOND_DRIFT,
        FRAME_CPU => FRAME_CPU_BEYOND_DRIFT,
        _ => "",
    }
}

/// Whether frame row `metric` of `frames` has a verdict: not the presents (never judged), nor
/// a raw total whose row beyond its drift is among `frames` (that row is judged instead).
fn judged_frame_row(frames: &[Comparison], metric: &str) -> bool {
    let beyond = beyond_name(metric);
    metric != FRAME_PRESENT && !frames.iter().any(|x| x.metric == beyond)
}

/// The frames' GPU time (the ranking time summed over their work calls).
pub const FRAME_GPU: &str = "frame_gpu_time";
/// The frames' CPU time in GL calls, their presents left out ([`FRAME_PRESENT`]).
pub const FRAME_CPU: &str = "frame_cpu_time";
/// The frames' wall time, their presents left out: the time the program took to make the
/// frame, its own pacing included.
pub const FRAME_WALL: &str = "frame_wall_time";
/// The wall time of the frames' presents (swaps): the window system's share of the frame
/// (the copy into the window on a software rasterizer, the wait for the display with
/// vsync). Shown, never judged: the same program's presents move up to 11× between
/// stretches of its run with nothing changed
/// ([`crate::measure::aggregate::FrameTotals::present_cpu_ns`]), and a profiler that calls
/// that a change in the program sends its users chasing the window system.
pub const FRAME_PRESENT: &str = "frame_present_time";

/// The common drift of the matched draws' raw `metric` (see [`Drift`]).
fn common_drift(matched: &[DrawDiff], metric: &'static str) -> Option<Drift> {
    let logs: Vec<f64> = matched
        .iter()
        .filter_map(|m| m.metrics.iter().find(|c| c.metric == metric)?.ratio)
        .map(|r| r.estimate.ln())
        .collect();
    if logs.len() < DRIFT_MIN_DRAWS {
        return None;
    }
    let s = Summary::of(&logs)?;
    Some(Drift {
        metric,
        factor: s.median.exp(),
        draws: logs.len(),
        spread: s.mad,
    })
}

/// Metric `k` of draw pair `m` with B's values divided by `factor`.
fn beyond_drift(
    a: &SessionStats,
    b: &SessionStats,
    m: &DrawDiff,
    k: usize,
    factor: f64,
) -> Option<Comparison> {
    let raw = &m.metrics[k];
    let (ka, kb) = (a.metric_index(&raw.metric)?, b.metric_index(&raw.metric)?);
    let xa = &a.draws[m.a].samples[ka];
    let xb: Vec<f64> = b.draws[m.b].samples[kb]
        .iter()
        .map(|v| v / factor)
        .collect();
    raw.ratio?;
    Some(compare(&raw.metric, &raw.unit, xa, &xb))
}

/// The checklist runs on at most this many frames of a side, evenly spaced: whether a finding
/// holds in most frames needs no thousand of them, and the checklist over every draw of a
/// million-draw session was a third of a diff's time.
pub const FINDING_FRAMES: usize = 100;

/// `s` with at most `n` of its frames, evenly spaced, and the records of those frames.
pub(crate) fn sampled(s: &Session, n: usize) -> std::borrow::Cow<'_, Session> {
    if s.frames.len() <= n {
        return std::borrow::Cow::Borrowed(s);
    }
    let step = s.frames.len() as f64 / n as f64;
    let frames: Vec<gpuheat_session::Frame> = (0..n)
        .map(|i| s.frames[(i as f64 * step) as usize].clone())
        .collect();
    let kept: std::collections::HashSet<u64> = frames.iter().map(|f| f.index).collect();
    std::borrow::Cow::Owned(Session {
        info: s.info.clone(),
        functions: s.functions.clone(),
        contexts: s.contexts.clone(),
        modules: s.modules.clone(),
        frames,
        pipelined: s
            .pipelined
            .iter()
            .filter(|b| kept.contains(&b.frame))
            .cloned()
            .collect(),
        end: s.end.clone(),
        attach: s.attach.clone(),
        states: s.states.clone(),
        heat: s
            .heat
            .iter()
            .filter(|h| kept.contains(&h.frame))
            .cloned()
            .collect(),
        heat_missing: s.heat_missing.clone(),
        target_heat: s
            .target_heat
            .iter()
            .filter(|h| kept.contains(&h.frame))
            .cloned()
            .collect(),
        vg_calls: s
            .vg_calls
            .iter()
            .filter(|c| kept.contains(&c.frame))
            .cloned()
            .collect(),
        vg_paths: s.vg_paths.clone(),
        flow: s
            .flow
            .iter()
            .filter(|h| kept.contains(&h.frame))
            .cloned()
            .collect(),
        geometry: s
            .geometry
            .iter()
            .filter(|g| kept.contains(&g.frame))
            .cloned()
            .collect(),
        hooks: s.hooks.clone(),
        programs: s.programs.clone(),
        triggers: s.triggers.clone(),
        watch: s.watch.clone(),
        vk_render_passes: s.vk_render_passes.clone(),
        vk_frames: s
            .vk_frames
            .iter()
            .filter(|p| kept.contains(&p.frame))
            .cloned()
            .collect(),
        uploads: s
            .uploads
            .iter()
            .filter(|u| kept.contains(&u.frame))
            .cloned()
            .collect(),
        agent_frames: s
            .agent_frames
            .iter()
            .filter(|a| kept.contains(&a.frame))
            .cloned()
            .collect(),
        warmup: s
            .warmup
            .iter()
            .filter(|w| kept.contains(&w.frame))
            .cloned()
            .collect(),
        truncated_at: s.truncated_at,
    })
}

/// The smallest change of a time from deferred timestamp pairs called significant, ns. On an
/// H100 a 16 us draw measured within 0.5 us over 9 frames; 1 us keeps a margin over that and
/// over a GPU timer's tick (tens of ns).
const DEFERRED_RESOLUTION_NS: f64 = 1_000.0;

/// Whether every work call of `s`'s frames that the agent counted was timed deferred (its
/// `AGNT` records; none, as from older agents: no).
fn timed_deferred(s: &Session) -> bool {
    let counted: HashMap<u64, u64> = s
        .agent_frames
        .iter()
        .map(|a| (a.frame, a.deferred))
        .collect();
    let mut seen = false;
    for f in &s.frames {
        let Some(&deferred) = counted.get(&f.index) else {
            continue;
        };
        let work = f
            .calls
            .iter()
            .filter(|c| s.functions.is_work(c.func))
            .count() as u64;
        if work == 0 {
            continue;
        }
        if deferred < work {
            return false;
        }
        seen = true;
    }
    seen
}

fn side(s: &Session) -> Side {
    let (stats, (findings, finding_frames)) = rayon::join(
        || aggregate(s, true),
        || {
            let checked = sampled(s, FINDING_FRAMES);
            let findings = check(
                &checked,
                &crate::measure::cost::analyse_with(&checked, false),
            );
            (findings, checked.frames.len())
        },
    );
    let mut renderers: Vec<String> = s.contexts.iter().map(|c| c.renderer.clone()).collect();
    renderers.dedup();
    let size = s
        .heat
        .first()
        .map(|h| [h.width, h.height])
        .or_else(|| s.states.iter().find_map(|st| st.surface));
    let mut command = vec![s.info.exe.clone()];
    command.extend(s.info.args.iter().skip(1).cloned());
    Side {
        command: command.join(" "),
        mode: format!("{:?}", s.info.mode).to_lowercase(),
        renderers,
        size,
        software: s
            .contexts
            .iter()
            .any(|c| !c.pipelined_meaningful && c.pipelined_note.contains("software rasterizer")),
        frames: stats.frames.len(),
        steady_frames: stats.steady_frames().len(),
        stats,
        findings,
        finding_frames,
    }
}

/// What makes comparing `a` and `b` doubtful, one line each.
fn doubts(a: &Session, b: &Session, sa: &Side, sb: &Side, opts: &DiffOptions) -> Vec<String> {
    let mut out = Vec::new();
    if a.info.pid == b.info.pid
        && a.info.started_unix_s == b.info.started_unix_s
        && a.info.clock_origin_ns == b.info.clock_origin_ns
    {
        out.push("A and B are the same capture: every change is zero by construction".into());
    }
    let name = |s: &Session| {
        std::path::Path::new(&s.info.exe)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if name(a) != name(b) {
        out.push(format!(
            "different programs ({} vs {}): only draws with the same shape can match",
            name(a),
            name(b)
        ));
    }
    if sa.renderers != sb.renderers {
        out.push(format!(
            "different renderers ({} vs {}): times are not comparable",
            sa.renderers.join(", "),
            sb.renderers.join(", ")
        ));
    }
    if sa.mode != sb.mode {
        out.push(format!(
            "different capture modes ({} vs {}): only the times both measured are compared",
            sa.mode, sb.mode
        ));
    }
    if let (Some(x), Some(y)) = (sa.size, sb.size) {
        if x != y {
            out.push(format!(
                "different surface sizes ({}x{} vs {}x{}): per-pixel work differs",
                x[0], x[1], y[0], y[1]
            ));
        }
    }
    if sa.stats.ranked_by != sb.stats.ranked_by {
        out.push("one side has serialized GPU times and the other not".into());
    }
    for (label, side) in [("A", sa), ("B", sb)] {
        if let Some(spread) = side.stats.frame_spread().filter(|&x| x > DISTURBED_SPREAD) {
            out.push(format!(
                "{label}'s frames vary by ±{:.0}% in GPU time: if the program draws the same \
                 frame each time, something else used the machine during that capture; \
                 capture it again",
                100.0 * spread
            ));
        }
    }
    for (label, s) in [("A", a), ("B", b)] {
        if s.truncated_at.is_some() {
            out.push(format!(
                "{label} is cut short: only its readable frames are compared"
            ));
        }
    }
    let (na, nb) = (sa.steady_frames, sb.steady_frames);
    if min_p_value(na, nb) > opts.alpha {
        out.push(format!(
            "{na} and {nb} steady frames are too few for any change to be significant at \
             {}: capture 5 or more frames per side (--frames 10)",
            opts.alpha
        ));
    }
    out
}

/// Pairs of (A index, B index, how), then A's and B's unmatched draws.
#[allow(clippy::type_complexity)]
fn match_draws(
    a: &SessionStats,
    b: &SessionStats,
) -> (Vec<(usize, usize, MatchedBy)>, Vec<usize>, Vec<usize>) {
    let mut pairs = Vec::new();
    let by_full: HashMap<u64, usize> = b
        .draws
        .iter()
        .enumerate()
        .map(|(i, d)| (d.hashes.full, i))
        .collect();
    let mut used_b = vec![false; b.draws.len()];
    let mut left_a = Vec::new();
    for (ia, d) in a.draws.iter().enumerate() {
        match by_full.get(&d.hashes.full) {
            Some(&ib) if !used_b[ib] => {
                used_b[ib] = true;
                pairs.push((ia, ib, MatchedBy::Identity));
            }
            _ => left_a.push(ia),
        }
    }
    let mut left_b: Vec<usize> = (0..b.draws.len()).filter(|&i| !used_b[i]).collect();
    // What is left is aligned as streams, in the order draws appear in a frame.
    order_in_frame(a, &mut left_a);
    order_in_frame(b, &mut left_b);
    let passes: [(fn(&DrawStats) -> u64, MatchedBy); 2] = [
        (|d| d.hashes.site, MatchedBy::CallSite),
        (|d| d.hashes.shape, MatchedBy::Shape),
    ];
    for (by, how) in passes {
        let ka: Vec<u64> = left_a.iter().map(|&i| by(&a.draws[i])).collect();
        let kb: Vec<u64> = left_b.iter().map(|&i| by(&b.draws[i])).collect();
        let mut taken_a = HashSet::new();
        let mut taken_b = HashSet::new();
        for op in capture_diff_slices(Algorithm::Myers, &ka, &kb) {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for k in 0..len {
                    taken_a.insert(old_index + k);
                    taken_b.insert(new_index + k);
                    pairs.push((left_a[old_index + k], left_b[new_index + k], how.clone()));
                }
            }
        }
        left_a = keep_untaken(left_a, &taken_a);
        left_b = keep_untaken(left_b, &taken_b);
    }
    left_a.sort_unstable();
    left_b.sort_unstable();
    (pairs, left_a, left_b)
}

fn keep_untaken(v: Vec<usize>, taken: &HashSet<usize>) -> Vec<usize> {
    v.into_iter()
        .enumerate()
        .filter(|(k, _)| !taken.contains(k))
        .map(|(_, i)| i)
        .collect()
}

/// Sorts draw indices by their median position among their frame's calls.
fn order_in_frame(s: &SessionStats, draws: &mut [usize]) {
    let pos = |i: &usize| {
        let calls: Vec<f64> = s.draws[*i]
            .occurrences
            .iter()
            .map(|&(_, c)| f64::from(c))
            .collect();
        crate::measure::stats::median(&calls)
    };
    draws.sort_by(|x, y| pos(x).total_cmp(&pos(y)).then(x.cmp(y)));
}

fn draw_diff(a: &SessionStats, b: &SessionStats, ia: usize, ib: usize, how: MatchedBy) -> DrawDiff {
    let (da, db) = (&a.draws[ia], &b.draws[ib]);
    let mut metrics = Vec::new();
    let mut names: Vec<&str> = a.metrics.iter().map(|m| m.name.as_str()).collect();
    for m in &b.metrics {
        if !names.contains(&m.name.as_str()) {
            names.push(&m.name);
        }
    }
    for name in &names {
        if *name == GPU_PIPELINED && !(a.pipelined_meaningful || b.pipelined_meaningful) {
            // Not a draw's own cost on either renderer: comparing it would only add noise.
            continue;
        }
        let (ma, mb) = (a.metric_index(name), b.metric_index(name));
        let unit = ma
            .map(|i| a.metrics[i].unit.clone())
            .or_else(|| mb.map(|i| b.metrics[i].unit.clone()))
            .unwrap_or_default();
        let xa = ma.map_or(&[][..], |i| &da.samples[i][..]);
        let xb = mb.map_or(&[][..], |i| &db.samples[i][..]);
        if xa.is_empty() && xb.is_empty() {
            continue;
        }
        metrics.push(compare(name, &unit, xa, xb));
    }
    let rank_name = a.ranked_by.counter();
    let rank = metrics
        .iter()
        .position(|c| c.metric == rank_name)
        .or_else(|| metrics.iter().position(|c| c.metric == CPU_TIME))
        .unwrap_or(0);
    DrawDiff {
        a: ia,
        b: ib,
        matched_by: how,
        metrics,
        rank,
        time_beyond_drift: None,
        calls_beyond_drift: Vec::new(),
        work: None,
    }
}

/// An unjudged comparison of two samples (the verdict is set by [`judge`]).
pub fn compare(metric: &str, unit: &str, a: &[f64], b: &[f64]) -> Comparison {
    let sa = Summary::of(a);
    let shift = hodges_lehmann(a, b, 0.05);
    let ratio = hodges_lehmann_ratio(a, b, 0.05);
    let relative = match (ratio, sa, shift) {
        (Some(r), _, _) => Some(r.estimate - 1.0),
        (None, Some(s), Some(sh)) if s.median != 0.0 => Some(sh.estimate / s.median.abs()),
        _ => None,
    };
    Comparison {
        metric: metric.to_string(),
        unit: unit.to_string(),
        a: sa,
        b: Summary::of(b),
        shift,
        ratio,
        relative,
        p: mann_whitney(a, b),
        q: None,
        verdict: if min_p_value(a.len(), b.len()) > 0.05 {
            Verdict::TooFew
        } else {
            Verdict::Noise
        },
    }
}

/// Per-frame comparisons: the ranking GPU time, CPU time in GL calls and wall time, over the
/// steady frames of each side.
fn frame_comparisons(
    a: &SessionStats,
    b: &SessionStats,
    drift: Option<Drift>,
    call_drifts: &[Drift],
) -> Vec<Comparison> {
    type Totals = crate::measure::aggregate::FrameTotals;
    let (fa, fb) = (a.steady_frames(), b.steady_frames());
    let gpu = |f: &[&Totals]| -> Vec<f64> { f.iter().filter_map(|t| t.gpu_ns).collect() };
    let cpu =
        |f: &[&Totals]| -> Vec<f64> { f.iter().map(|t| t.cpu_ns - t.present_cpu_ns).collect() };
    let wall =
        |f: &[&Totals]| -> Vec<f64> { f.iter().map(|t| t.wall_ns - t.present_wall_ns).collect() };
    let present = |f: &[&Totals]| -> Vec<f64> { f.iter().map(|t| t.present_wall_ns).collect() };
    let (gpu_a, gpu_b) = (gpu(&fa), gpu(&fb));
    let (cpu_a, cpu_b) = (cpu(&fa), cpu(&fb));
    let mut out = vec![
        compare(FRAME_GPU, "ns", &gpu_a, &gpu_b),
        compare(FRAME_CPU, "ns", &cpu_a, &cpu_b),
        compare(FRAME_WALL, "ns", &wall(&fa), &wall(&fb)),
        compare(FRAME_PRESENT, "ns", &present(&fa), &present(&fb)),
    ];
    let beyond = |name, x: &[f64], y: &[f64], factor: f64| {
        let scaled: Vec<f64> = y.iter().map(|v| v / factor).collect();
        compare(name, "ns", x, &scaled)
    };
    if let Some(d) = drift {
        out.push(beyond(FRAME_GPU_BEYOND_DRIFT, &gpu_a, &gpu_b, d.factor));
    }
    // The frame's CPU time in GL drifts with its work calls' CPU time, over which the drift is
    // estimated: that part is divided by it, the rest (state calls, and waits for the GPU: a
    // program's glFinish of 4 ms, against 0.05 ms in its draws, on an H100, where the draws'
    // -22% divided into the whole frame read +27% "slower") is left as measured. Its wall
    // time does not follow its calls' wall time: in full mode it is mostly the agent's waits
    // for the GPU (neverball on llvmpipe: 86 of 142 ms), and divided by the calls' drift
    // (-49% in one pair) it read +176% where it had moved +41%. It is judged raw.
    if let Some(d) = call_drifts.iter().find(|d| d.metric == CPU_TIME) {
        let beyond_b: Vec<f64> = fb
            .iter()
            .map(|t| t.cpu_ns - t.present_cpu_ns - t.work_cpu_ns + t.work_cpu_ns / d.factor)
            .collect();
        out.push(compare(FRAME_CPU_BEYOND_DRIFT, "ns", &cpu_a, &beyond_b));
    }
    out
}

/// Corrects each metric's p-values for the number of comparisons (draws and frames together)
/// and sets the verdicts.
fn judge(
    matched: &mut [DrawDiff],
    frames: &mut [Comparison],
    opts: &DiffOptions,
    resolution_ns: f64,
) {
    let rank_family = matched
        .first()
        .map(|d| d.raw_time().metric.clone())
        .unwrap_or_else(|| GPU_SERIALIZED.to_string());
    // Families: one per metric name; frame totals join the family of the draw time they sum.
    let mut families: BTreeMap<String, Vec<&mut Comparison>> = BTreeMap::new();
    for d in matched.iter_mut() {
        for c in d.metrics.iter_mut() {
            families.entry(c.metric.clone()).or_default().push(c);
        }
        for c in d
            .time_beyond_drift
            .iter_mut()
            .chain(d.calls_beyond_drift.iter_mut())
        {
            families
                .entry(format!("{} beyond drift", c.metric))
                .or_default()
                .push(c);
        }
    }
    // Each frame row is one more test of the family of the draw metric it sums, so the rows
    // are held to the draws' false discovery rate rather than tested alone.
    // A raw total whose drift was taken out is shown, not judged: its row beyond the drift is.
    let judged: Vec<bool> = frames
        .iter()
        .map(|c| judged_frame_row(frames, &c.metric))
        .collect();
    for (c, _) in frames.iter_mut().zip(judged).filter(|(_, j)| *j) {
        let family = match c.metric.as_str() {
            FRAME_GPU => rank_family.clone(),
            FRAME_GPU_BEYOND_DRIFT => format!("{rank_family} beyond drift"),
            FRAME_CPU => CPU_TIME.to_string(),
            FRAME_CPU_BEYOND_DRIFT => format!("{CPU_TIME} beyond drift"),
            FRAME_WALL => CALL_TIME.to_string(),
            other => other.to_string(),
        };
        families.entry(family).or_default().push(c);
    }
    for (_, mut family) in families {
        let tested: Vec<usize> = (0..family.len())
            .filter(|&i| family[i].p.is_some() && family[i].verdict != Verdict::TooFew)
            .collect();
        let p: Vec<f64> = tested.iter().map(|&i| family[i].p.unwrap_or(1.0)).collect();
        let q = benjamini_hochberg(&p);
        for (&i, q) in tested.iter().zip(q) {
            let c = &mut family[i];
            c.q = Some(q);
            // A frame's CPU and wall time are held to a draw's least significant shift: the
            // same program captured twice on an H100 gave frames 0.047 and 0.062 ms of CPU
            // time in GL (+27.5%, q < 0.05 over 10 frames a side) while every draw was noise.
            let call_time = [
                CPU_TIME,
                CALL_TIME,
                FRAME_CPU,
                FRAME_WALL,
                FRAME_CPU_BEYOND_DRIFT,
            ]
            .contains(&c.metric.as_str());
            let serialized = c.metric == GPU_SERIALIZED
                || c.metric == FRAME_GPU_BEYOND_DRIFT
                || c.metric == FRAME_GPU;
            let min_change = opts.min_change.unwrap_or(MIN_CHANGE_GPU);
            let min_shift = if call_time {
                MIN_CALL_TIME_SHIFT_NS
            } else if serialized {
                resolution_ns
            } else {
                0.0
            };
            c.verdict = verdict(c, q, opts.alpha, min_change, min_shift);
        }
    }
}

/// The verdict of a tested comparison whose corrected p-value is `q`: significant when `q ≤
/// alpha`, the ratio is beyond `1 + min_change` either way (the relative change, for values
/// that are not all positive) and the shift is at least `min_shift`.
pub(crate) fn verdict(
    c: &Comparison,
    q: f64,
    alpha: f64,
    min_change: f64,
    min_shift: f64,
) -> Verdict {
    let big = match (c.ratio, c.relative, c.shift) {
        (_, _, Some(s)) if s.estimate.abs() < min_shift => false,
        (Some(r), _, _) => beyond_factor(r.estimate, min_change),
        // B/A as the relative change says, judged as a ratio is: a draw that fell 87% (some of
        // B's frames measured 0, so no ratio of all-positive values) is beyond 2× either way;
        // `r.abs() >= min_change` asked a fall to exceed the rise's 100% and never could.
        (None, Some(r), _) => r <= -1.0 || beyond_factor(1.0 + r, min_change),
        (None, None, Some(s)) => s.estimate != 0.0,
        _ => false,
    };
    match c.shift {
        Some(s) if q <= alpha && big => {
            if s.estimate > 0.0 {
                Verdict::Higher
            } else {
                Verdict::Lower
            }
        }
        _ => Verdict::Noise,
    }
}

/// Findings by (rule, draw identity) that only one side has in at least half its frames; B's
/// draws are mapped to A's through the matches. A finding at a threshold (a draw at 24–26%
/// of its frame) fires in some frames and not others; only one that holds in most frames
/// appearing or disappearing is news.
fn finding_changes(
    a: &Side,
    b: &Side,
    pairs: &[(usize, usize, MatchedBy)],
) -> (Vec<FindingChange>, Vec<FindingChange>) {
    let b_to_a: HashMap<usize, usize> = pairs.iter().map(|&(ia, ib, _)| (ib, ia)).collect();
    let ka = keyed_findings(a, &|i| (true, i));
    let kb = keyed_findings(b, &|i| b_to_a.get(&i).map_or((false, i), |&ia| (true, ia)));
    let change = |side: &Side, _: &FindingKey, n: usize, f: &Finding| {
        let draw = f
            .call
            .and_then(|c| side.stats.find(f.frame, c))
            .map(|i| side.stats.draws[i].text.clone());
        FindingChange {
            rule: f.rule,
            severity: f.severity,
            title: f.title.clone(),
            draw,
            frames: n,
            of: side.finding_frames,
        }
    };
    let held = |side: &Side, n: usize| 2 * n >= side.finding_frames.max(1);
    let present = |keyed: &BTreeMap<FindingKey, (usize, &Finding)>, side: &Side, k: &FindingKey| {
        keyed.get(k).is_some_and(|(n, _)| held(side, *n))
    };
    let appeared = kb
        .iter()
        .filter(|(k, (n, _))| held(b, *n) && !present(&ka, a, k))
        .map(|(k, (n, f))| change(b, k, *n, f))
        .collect();
    let disappeared = ka
        .iter()
        .filter(|(k, (n, _))| held(a, *n) && !present(&kb, b, k))
        .map(|(k, (n, f))| change(a, k, *n, f))
        .collect();
    (appeared, disappeared)
}

/// A finding's rule and its draw: (true, index in A) for A's draws and B's matched ones,
/// (false, index in B) for draws only in B; `None` for frame-wide findings.
type FindingKey = (&'static str, Option<(bool, usize)>);

/// A side's findings by key, with how many frames each fired in and one occurrence.
fn keyed_findings<'s>(
    side: &'s Side,
    map: &dyn Fn(usize) -> (bool, usize),
) -> BTreeMap<FindingKey, (usize, &'s Finding)> {
    let mut out: BTreeMap<FindingKey, (usize, &Finding)> = BTreeMap::new();
    for f in &side.findings {
        let draw = f.call.and_then(|c| side.stats.find(f.frame, c)).map(map);
        out.entry((f.rule, draw)).or_insert((0, f)).0 += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison of `a` and `b` judged alone (q = its p).
    fn judged(a: &[f64], b: &[f64], min_change: f64) -> Verdict {
        let c = compare(GPU_SERIALIZED, "ns", a, b);
        verdict(&c, c.p.unwrap(), 0.05, min_change, 0.0)
    }

    #[test]
    fn a_fall_is_judged_as_far_as_the_same_rise_where_no_ratio_exists() {
        let a = [
            1_000.0, 1_010.0, 990.0, 1_005.0, 995.0, 1_002.0, 998.0, 1_001.0,
        ];
        // 87% lower, one frame at 0: the ratio of all-positive values does not exist.
        let fell = [130.0, 0.0, 135.0, 128.0, 131.0, 129.0, 133.0, 127.0];
        let c = compare(GPU_SERIALIZED, "ns", &a, &fell);
        assert!(c.ratio.is_none() && c.relative.unwrap() < -0.8);
        assert_eq!(judged(&a, &fell, 1.0), Verdict::Lower);
        // 40% lower is within a 2x threshold either way, and beyond a 5% one.
        let less = [600.0, 0.0, 610.0, 590.0, 605.0, 595.0, 602.0, 598.0];
        assert_eq!(judged(&a, &less, 1.0), Verdict::Noise);
        assert_eq!(judged(&a, &less, 0.05), Verdict::Lower);
        // Down to nothing at all.
        assert_eq!(judged(&a, &[0.0; 8], 1.0), Verdict::Lower);
        // A rise past 2x with a 0 in A is judged as before.
        let mut a0 = a;
        a0[1] = 0.0;
        let rose = [
            2_600.0, 2_610.0, 2_590.0, 2_605.0, 2_595.0, 2_602.0, 2_598.0, 2_601.0,
        ];
        assert_eq!(judged(&a0, &rose, 1.0), Verdict::Higher);
    }
}
