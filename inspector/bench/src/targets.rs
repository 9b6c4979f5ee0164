//! Issue 13's capture-cost targets against what this run measured: one row per target, each
//! figure a ratio or difference against a baseline measured in the same run.

use serde_json::{json, Value};

/// One target's row.
pub struct Row {
    /// What is measured.
    pub what: &'static str,
    /// The target, in words.
    pub goal: &'static str,
    /// The measured figure with its baseline and spread, or why there is none.
    pub measured: String,
    /// Whether the target is met; `None` when this run did not measure it.
    pub met: Option<bool>,
}

/// The figures the rows are made from, each `None` when its part of the bench was skipped.
#[derive(Default)]
pub struct Figures {
    /// Timeline capture's ns per call, its runs' min and max, and the direct call's.
    pub timeline_ns: Option<(f64, f64, f64)>,
    pub direct_ns: Option<f64>,
    pub apitrace_ns: Option<f64>,
    /// Full capture's ns per call, its runs' min and max.
    pub full_ns: Option<(f64, f64, f64)>,
    pub timeline_bytes_per_call: Option<f64>,
    pub apitrace_bytes_per_call: Option<f64>,
    /// Heat-captured frame / uncaptured frame at the largest draw count, and that count.
    pub heat: Option<(u32, f64)>,
    /// First attach: render thread held, median, min, max (ms).
    pub first_attach_ms: Option<(f64, f64, f64)>,
    /// Geometry capture: frame with / frame without, median and the quartile interval.
    pub geometry: Option<(f64, f64, f64)>,
    /// ns per read of the time-stamp counter (where there is one) and of CLOCK_MONOTONIC:
    /// the agent reads one of them twice around every recorded call.
    pub stamp_ns: Option<(Option<f64>, f64)>,
}

/// The rows, in the order.
pub fn rows(f: &Figures) -> Vec<Row> {
    let none = |why: &str| (why.to_string(), None);
    let per_call = match (f.timeline_ns, f.direct_ns) {
        (Some((t, lo, hi)), Some(d)) => {
            let vs_apitrace = f.apitrace_ns.map(|a| (a - d) / (t - d).max(0.01));
            let stamps = f.stamp_ns.map_or(String::new(), |(tsc, mono)| match tsc {
                Some(tsc) => format!("; a clock stamp costs {tsc:.1} ns here (TSC; CLOCK_MONOTONIC {mono:.1}), two per call"),
                None => format!("; a clock stamp costs {mono:.1} ns here (CLOCK_MONOTONIC), two per call"),
            });
            (
                format!(
                    "{:.1} ns added ({t:.1} [{lo:.1}..{hi:.1}] vs direct {d:.1}){}{stamps}",
                    t - d,
                    vs_apitrace.map_or(", apitrace not measured".to_string(), |r| format!(
                        "; apitrace adds {:.1}: {r:.1}x ours",
                        f.apitrace_ns.unwrap_or(0.0) - d
                    ))
                ),
                Some(t - d <= 30.0 && vs_apitrace.is_none_or(|r| r >= 3.0)),
            )
        }
        _ => none("not measured"),
    };
    let full_extra = match (f.full_ns, f.timeline_ns) {
        (Some((full, full_lo, _)), Some((t, _, hi))) => (
            format!(
                "{:.1} ns per call over timeline's (full's fastest run {full_lo:.1}, timeline's slowest {hi:.1})",
                full - t,
            ),
            // Between two configurations of one run the machine's noise is the runs' spread
            // (tens of ns on a shared machine), or a few ns on a quiet one: full mode adds
            // something only when even its fastest run is slower than every timeline run.
            Some(full_lo <= hi.max(t + 5.0)),
        ),
        _ => none("not measured"),
    };
    let bytes = match f.timeline_bytes_per_call {
        Some(b) => (
            format!(
                "{b:.2} B/call{}",
                f.apitrace_bytes_per_call
                    .map_or(", apitrace not measured".to_string(), |a| format!(
                        "; apitrace {a:.2} B/call"
                    ))
            ),
            Some(b <= 4.0 && f.apitrace_bytes_per_call.is_none_or(|a| b < a)),
        ),
        None => none("not measured"),
    };
    let heat = match f.heat {
        Some((layers, r)) => (format!("{r:.2}x at {layers} draws"), Some(r <= 3.0)),
        None => none("not measured (--heat-layers)"),
    };
    let attach = match f.first_attach_ms {
        Some((m, lo, hi)) => (format!("{m:.1} ms [{lo:.1}..{hi:.1}]"), Some(m <= 16.0)),
        None => none("not measured (--attaches 0)"),
    };
    let geometry = match f.geometry {
        Some((r, lo, hi)) => (format!("{r:.2}x [{lo:.2}..{hi:.2}]"), Some(r <= 1.5)),
        None => none("not measured (--geometry '')"),
    };
    [
        (
            "per call, timeline capture",
            "<= 30 ns added, >= 3x cheaper than apitrace",
            per_call,
        ),
        (
            "per call, full over timeline",
            "nothing added to non-work calls",
            full_extra,
        ),
        (
            "session size, timeline",
            "<= 4 B/call, smaller than apitrace",
            bytes,
        ),
        (
            "heat-captured frame",
            "<= 3x the uncaptured frame at 1,000 draws",
            heat,
        ),
        ("first attach, render thread held", "<= 16 ms", attach),
        (
            "geometry capture (full mode)",
            "<= 1.5x the frame without it",
            geometry,
        ),
    ]
    .into_iter()
    .map(|(what, goal, (measured, met))| Row {
        what,
        goal,
        measured,
        met,
    })
    .collect()
}

/// The rows as a table.
pub fn print(rows: &[Row]) {
    println!();
    println!("capture-cost targets (issue 13), each against its baseline in this run:");
    println!("{:<34} {:<46} {:<5} measured", "target", "goal", "met");
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        println!("{:<34} {:<46} {:<5} {}", r.what, r.goal, met, r.measured);
    }
}

/// The rows as JSON.
pub fn json(rows: &[Row]) -> Value {
    Value::Array(
        rows.iter()
            .map(
                |r| json!({"target": r.what, "goal": r.goal, "measured": r.measured, "met": r.met}),
            )
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_call_target_needs_both_the_added_time_and_the_apitrace_ratio() {
        let mut f = Figures {
            timeline_ns: Some((40.0, 39.0, 41.0)),
            direct_ns: Some(20.0),
            apitrace_ns: Some(80.0),
            ..Figures::default()
        };
        // 20 ns added, apitrace adds 60: 3x.
        assert_eq!(rows(&f)[0].met, Some(true));
        f.apitrace_ns = Some(70.0);
        assert_eq!(rows(&f)[0].met, Some(false));
        f.apitrace_ns = None;
        f.timeline_ns = Some((51.0, 50.0, 52.0));
        assert_eq!(rows(&f)[0].met, Some(false));
    }

    #[test]
    fn full_mode_adds_nothing_when_its_runs_overlap_timelines() {
        let mut f = Figures {
            timeline_ns: Some((100.0, 90.0, 130.0)),
            full_ns: Some((140.0, 125.0, 150.0)),
            ..Figures::default()
        };
        assert_eq!(rows(&f)[1].met, Some(true));
        f.full_ns = Some((140.0, 131.0, 150.0));
        assert_eq!(rows(&f)[1].met, Some(false));
        // Runs with no spread still allow a few ns.
        f.timeline_ns = Some((100.0, 100.0, 100.0));
        f.full_ns = Some((104.0, 104.0, 104.0));
        assert_eq!(rows(&f)[1].met, Some(true));
    }

    #[test]
    fn unmeasured_targets_say_so() {
        let r = rows(&Figures::default());
        assert_eq!(r.len(), 6);
        assert!(r.iter().all(|r| r.met.is_none()));
        assert!(r[4].measured.contains("--attaches 0"));
    }
}
