//! Analysis at scale (`gpuheat-bench --analysis`): how long `gpuheat report` and
//! `gpuheat diff` take on sessions of F frames × D draws (default 1,000 × 1,000, a million
//! draws per session), captured in this run from the `many_draws` example in timeline mode.
//!
//! Two captures of the same program and arguments, A and B. Timed in this process with the
//! analysis crate (the code the CLI runs), each step `runs` times, medians with the range:
//!
//! | step | what |
//! |---|---|
//! | `open` | `Session::open` of A: the baseline every ratio is against |
//! | `aggregate` | draws by identity with their statistics (`aggregate`, without symbols) |
//! | `report` | what `gpuheat report` computes: per-call costs, findings, aggregate |
//! | `diff` | `diff(A, B)`, both sessions already open (identity, statistics, matching, tests) |
//!
//! The target is the diff under 1 s.

use anyhow::{Context, Result};
use gpuheat_analysis::compare::diff::{diff, DiffOptions};
use gpuheat_session::Session;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// The size of the sessions.
pub struct AnalysisPlan {
    /// Frames per session.
    pub frames: u32,
    /// Draws per frame.
    pub draws: u32,
    /// Timed repetitions of each step.
    pub runs: u32,
}

/// One step's times, in seconds.
pub struct Step {
    pub label: &'static str,
    pub seconds: Vec<f64>,
}

impl Step {
    fn median(&self) -> f64 {
        let mut v = self.seconds.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn range(&self) -> (f64, f64) {
        let lo = self.seconds.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.seconds.iter().copied().fold(0.0, f64::max);
        (lo, hi)
    }
}

/// What was measured.
pub struct AnalysisResult {
    pub draws_per_session: u64,
    pub session_bytes: u64,
    pub matched: usize,
    pub steps: Vec<Step>,
}

/// Captures A and B and times the steps.
pub fn measure(
    gpuheat: &Path,
    many_draws: &Path,
    scratch: &Path,
    plan: &AnalysisPlan,
    limit: Duration,
) -> Result<AnalysisResult> {
    let a = scratch.join("analysis-a.gpuheat");
    let b = scratch.join("analysis-b.gpuheat");
    let (frames, program_frames) = (plan.frames.to_string(), (plan.frames + 3).to_string());
    let draws = plan.draws.to_string();
    for file in [&a, &b] {
        crate::viewer::capture(
            gpuheat,
            many_draws,
            file,
            &["--mode", "timeline", "--frames", &frames],
            &[
                "--draws",
                &draws,
                "--tris",
                "2",
                "--frames",
                &program_frames,
            ],
            limit,
        )?;
    }
    let session_bytes = std::fs::metadata(&a).map(|m| m.len()).unwrap_or(0);
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let sa = Session::open(&a).context("opening A")?;
    let sb = Session::open(&b).context("opening B")?;
    let work = |c: &gpuheat_session::Call| {
        sa.functions
            .functions
            .get(c.func as usize)
            .is_some_and(|f| {
                matches!(
                    f.class,
                    gpuheat_session::CallClass::Draw | gpuheat_session::CallClass::Work
                )
            })
    };
    let draws_per_session = sa
        .frames
        .iter()
        .map(|f| f.calls.iter().filter(|c| work(c)).count() as u64)
        .sum();
    let mut steps = vec![
        Step {
            label: "open",
            seconds: Vec::new(),
        },
        Step {
            label: "aggregate",
            seconds: Vec::new(),
        },
        Step {
            label: "report",
            seconds: Vec::new(),
        },
        Step {
            label: "diff",
            seconds: Vec::new(),
        },
    ];
    let mut matched = 0;
    for _ in 0..plan.runs {
        steps[0].seconds.push(time(&mut || {
            let _ = Session::open(&a);
        }));
        steps[1].seconds.push(time(&mut || {
            std::hint::black_box(gpuheat_analysis::measure::aggregate::aggregate(&sa, false));
        }));
        steps[2].seconds.push(time(&mut || {
            let analysis = gpuheat_analysis::analyse(&sa);
            std::hint::black_box(gpuheat_analysis::checklist::check(&sa, &analysis));
            std::hint::black_box(gpuheat_analysis::measure::aggregate::aggregate(&sa, true));
        }));
        steps[3].seconds.push(time(&mut || {
            matched = diff(&sa, &sb, &DiffOptions::default()).matched.len();
        }));
    }
    for file in [&a, &b] {
        let _ = std::fs::remove_file(file);
    }
    Ok(AnalysisResult {
        draws_per_session,
        session_bytes,
        matched,
        steps,
    })
}

/// The table.
pub fn to_text(r: &AnalysisResult) -> String {
    let base = r.steps[0].median();
    let mut o = format!(
        "analysis of sessions of {} draws ({:.1} MB each), {} matched by the diff; median of {} runs [range]\n",
        r.draws_per_session,
        r.session_bytes as f64 / 1e6,
        r.matched,
        r.steps[0].seconds.len()
    );
    o.push_str(&format!(
        "  {:<10} {:>10} {:>20} {:>8}\n",
        "step", "seconds", "range", "x open"
    ));
    for s in &r.steps {
        let (lo, hi) = s.range();
        o.push_str(&format!(
            "  {:<10} {:>10.3} {:>20} {:>8.2}\n",
            s.label,
            s.median(),
            format!("[{lo:.3}, {hi:.3}]"),
            s.median() / base
        ));
    }
    let d = r.steps[3].median();
    o.push_str(&format!(
        "  target: diff under 1 s: {} ({d:.3} s)\n",
        if d < 1.0 { "met" } else { "NOT met" }
    ));
    o
}

/// The same as JSON.
pub fn to_json(r: &AnalysisResult) -> Value {
    json!({
        "draws_per_session": r.draws_per_session,
        "session_bytes": r.session_bytes,
        "matched": r.matched,
        "steps": r.steps.iter().map(|s| json!({
            "step": s.label,
            "median_s": s.median(),
            "runs_s": s.seconds,
        })).collect::<Vec<_>>(),
    })
}
