//! The render targets of two sessions compared: each target's own cost (its draws) and total
//! cost (with the passes upstream of it) per frame in A and in B, matched by their role (the
//! context's place, framebuffer object, size, format and rank), and judged like a draw's
//! time: Mann–Whitney over the frames, corrected for the number of targets, significant
//! only beyond the diff's factor and its serialized-time resolution, with the common drift
//! taken out where the diff takes it out.

use crate::compare::diff::{compare, sampled, verdict, Comparison, Diff, Verdict, FINDING_FRAMES};
use crate::measure::flow::{frame_costs, frames_with_maps, roles, Labels, TargetRole};
use crate::measure::stats::{benjamini_hochberg, min_p_value};
use gpuheat_session::Session;
use serde::Serialize;

/// One render target in A and in B.
#[derive(Debug, Clone, Serialize)]
pub struct TargetDiff {
    /// What it is for.
    pub role: TargetRole,
    /// Its name in A, as `gpuheat report A` prints it (`None`: only in B).
    pub label_a: Option<String>,
    /// Its name in B (`None`: only in A).
    pub label_b: Option<String>,
    /// Frames of A and of B it was drawn in.
    pub frames: (usize, usize),
    /// Σ T_d of its own draws per frame (`target_own_time`, ns).
    pub own: Comparison,
    /// Own plus what flowed in from the passes it sampled (`target_total_time`, ns).
    pub total: Comparison,
}

/// Per-frame own and total cost of each role of `s` (at most [`FINDING_FRAMES`] frames,
/// evenly spaced), with the role's first name.
fn per_role(s: &Session) -> Vec<(TargetRole, String, Vec<f64>, Vec<f64>)> {
    let s = sampled(s, FINDING_FRAMES);
    let labels = Labels::of(&s);
    let mut out: Vec<(TargetRole, String, Vec<f64>, Vec<f64>)> = Vec::new();
    for frame in frames_with_maps(&s) {
        let Some(flow) = frame_costs(&s, frame, &labels) else {
            continue;
        };
        for (t, role) in flow.targets.iter().zip(roles(&s, &flow)) {
            match out.iter_mut().find(|(r, ..)| *r == role) {
                Some((_, _, own, total)) => {
                    own.push(t.own_ns);
                    total.push(t.total_ns);
                }
                None => out.push((role, t.label.clone(), vec![t.own_ns], vec![t.total_ns])),
            }
        }
    }
    out
}

/// Compares the render targets of `a` and `b` with the judgement `d` was made with (its
/// factor, resolution, drift and α). Targets in both first, by A's own cost, largest first.
pub fn target_diff(a: &Session, b: &Session, d: &Diff) -> Vec<TargetDiff> {
    let (ra, rb) = rayon::join(|| per_role(a), || per_role(b));
    let drift = d.drift.map_or(1.0, |x| x.factor);
    let scaled = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| x / drift).collect() };
    let mut out: Vec<TargetDiff> = Vec::new();
    let empty: (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let roles_in_order = ra.iter().map(|(r, ..)| *r).chain(
        rb.iter()
            .map(|(r, ..)| *r)
            .filter(|r| !ra.iter().any(|x| x.0 == *r)),
    );
    for role in roles_in_order.collect::<Vec<_>>() {
        let ea = ra.iter().find(|x| x.0 == role);
        let eb = rb.iter().find(|x| x.0 == role);
        let (own_a, total_a) = ea.map_or((&empty.0, &empty.1), |x| (&x.2, &x.3));
        let (own_b, total_b) = eb.map_or((&empty.0, &empty.1), |x| (&x.2, &x.3));
        out.push(TargetDiff {
            role,
            label_a: ea.map(|x| x.1.clone()),
            label_b: eb.map(|x| x.1.clone()),
            frames: (own_a.len(), own_b.len()),
            own: compare("target_own_time", "ns", own_a, &scaled(own_b)),
            total: compare("target_total_time", "ns", total_a, &scaled(total_b)),
        });
    }
    judge(&mut out, d);
    out.sort_by(|x, y| {
        let both = |t: &TargetDiff| t.label_a.is_some() && t.label_b.is_some();
        let own = |t: &TargetDiff| t.own.a.as_ref().map_or(0.0, |s| s.median);
        both(y).cmp(&both(x)).then(own(y).total_cmp(&own(x)))
    });
    out
}

/// Verdicts for each family (own, total) over the targets, corrected for their number.
fn judge(targets: &mut [TargetDiff], d: &Diff) {
    for pick in [
        (|t: &mut TargetDiff| &mut t.own) as fn(&mut TargetDiff) -> &mut Comparison,
        |t: &mut TargetDiff| &mut t.total,
    ] {
        let mut family: Vec<&mut Comparison> = targets.iter_mut().map(pick).collect();
        let tested: Vec<usize> = (0..family.len())
            .filter(|&i| {
                let c = &family[i];
                let n = |s: &Option<crate::measure::stats::Summary>| s.as_ref().map_or(0, |s| s.n);
                c.p.is_some() && min_p_value(n(&c.a), n(&c.b)) <= d.alpha
            })
            .collect();
        let p: Vec<f64> = tested.iter().map(|&i| family[i].p.unwrap_or(1.0)).collect();
        for (&i, q) in tested.iter().zip(benjamini_hochberg(&p)) {
            let c = &mut family[i];
            c.q = Some(q);
            c.verdict = verdict(c, q, d.alpha, d.min_change, d.resolution_ns);
        }
        for c in family.iter_mut() {
            if c.q.is_none() && c.verdict != Verdict::TooFew {
                c.verdict = Verdict::TooFew;
            }
        }
    }
}
