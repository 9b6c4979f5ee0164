//! Robust statistics for noisy per-frame measurements: summaries (median, quartiles, MAD), a
//! rank test for "did it change", a distribution-free confidence interval for "by how much",
//! and the Benjamini–Hochberg correction that keeps many comparisons at once from turning
//! noise into findings. Pure functions over slices; no I/O.
//!
//! llvmpipe measures identical draws 2× apart between frames, so nothing here assumes normal
//! noise: the test is Mann–Whitney's U (exact for small samples without ties, the normal
//! approximation with tie correction otherwise), the interval the Hodges–Lehmann one that
//! inverts it.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// Median, spread and range of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// The median (mean of the two middle values for an even count).
    pub median: f64,
    /// First quartile (linear interpolation between order statistics).
    pub q1: f64,
    /// Third quartile.
    pub q3: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// Summarises `values` (any order; NaNs must have been left out). `None` when empty.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let median = quantile_sorted(&v, 0.5);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        Some(Summary {
            n: v.len(),
            median,
            q1: quantile_sorted(&v, 0.25),
            q3: quantile_sorted(&v, 0.75),
            mad: quantile_sorted(&dev, 0.5),
            min: v[0],
            max: v[v.len() - 1],
        })
    }

    /// Interquartile range, `q3 − q1`.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }

    /// The spread relative to the median (`1.4826·MAD / median`, the normal-consistent
    /// scale), `None` for a zero median.
    pub fn relative_spread(&self) -> Option<f64> {
        (self.median != 0.0).then(|| 1.4826 * self.mad / self.median.abs())
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted values, interpolating linearly between order
/// statistics (type 7, as R and NumPy default to).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// The median of values in any order (NaN when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, 0.5)
}

/// Two-sided p-value of Mann–Whitney's U test that `a` and `b` come from the same
/// distribution. Exact (enumerating the U distribution) when there are no ties and
/// `a.len() + b.len() ≤ 60`; otherwise the normal approximation with tie and continuity
/// corrections. `None` when either side is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Average ranks over ties; Σ(t³ − t) for the variance's tie correction.
    let mut rank_a = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let rank = (i + j) as f64 / 2.0 + 1.0;
        rank_a += rank * all[i..=j].iter().filter(|e| e.1).count() as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let (nf, mf) = (n as f64, m as f64);
    let u = rank_a - nf * (nf + 1.0) / 2.0;
    if ties == 0.0 && n + m <= 60 {
        let u = u.round() as usize;
        let dist = cached_u_distribution(n, m);
        let total: f64 = dist.iter().sum();
        let low: f64 = dist[..=u].iter().sum::<f64>() / total;
        let high: f64 = dist[u..].iter().sum::<f64>() / total;
        return Some((2.0 * low.min(high)).min(1.0));
    }
    let mean = nf * mf / 2.0;
    let n_all = nf + mf;
    let var = nf * mf / 12.0 * ((n_all + 1.0) - ties / (n_all * (n_all - 1.0)));
    if var <= 0.0 {
        // Every value is the same: no evidence of a difference.
        return Some(1.0);
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    Some((2.0 * (1.0 - standard_normal().cdf(z))).min(1.0))
}

/// Smallest two-sided p-value Mann–Whitney's test can give with `n` and `m` values: below
/// `α` or no sample of that size can ever be called different (3 frames against 3: 0.1).
pub fn min_p_value(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    // 2 / C(n+m, n), computed in floating point to stay finite for large samples.
    let k = n.min(m);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n + m - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// [`u_distribution`], computed once per (n, m) and thread: a diff tests every draw with the
/// same numbers of frames.
fn cached_u_distribution(n: usize, m: usize) -> std::rc::Rc<Vec<f64>> {
    type Cache = std::collections::HashMap<(usize, usize), std::rc::Rc<Vec<f64>>>;
    thread_local! {
        static CACHE: std::cell::RefCell<Cache> = Default::default();
    }
    CACHE.with(|c| {
        c.borrow_mut()
            .entry((n, m))
            .or_insert_with(|| std::rc::Rc::new(u_distribution(n, m)))
            .clone()
    })
}

/// Counts of each U value (0..=n·m) over all orderings of n values against m without ties.
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    // f[j][u] for the current i: arrangements of i a-values and j b-values with U = u.
    let max = n * m;
    let mut prev: Vec<Vec<f64>> = (0..=m)
        .map(|_| {
            let mut v = vec![0.0; max + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for i in 1..=n {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; m + 1];
        cur[0][0] = 1.0;
        for j in 1..=m {
            for u in 0..=i * j {
                // The largest value is an a-value (it exceeds all j b-values) or a b-value.
                let from_a = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_a + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev.swap_remove(m)
}

fn standard_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("the standard normal distribution")
}

/// The Hodges–Lehmann estimate of the shift from `a` to `b` (the median of all differences
/// `b_j − a_i`) with its distribution-free confidence interval at level `1 − alpha`, from the
/// normal approximation of U's distribution. Large samples are thinned to 64 evenly spaced
/// quantiles per side first, so the cost stays bounded (4,096 differences; a diff computes
/// this for every metric of every draw). `None` when either side is empty.
pub fn hodges_lehmann(a: &[f64], b: &[f64], alpha: f64) -> Option<Shift> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let a = thin(a, 64);
    let b = thin(b, 64);
    let mut d: Vec<f64> = Vec::with_capacity(a.len() * b.len());
    for y in &b {
        for x in &a {
            d.push(y - x);
        }
    }
    let (n, m) = (a.len() as f64, b.len() as f64);
    let z = standard_normal().inverse_cdf(1.0 - alpha / 2.0);
    let k = (n * m / 2.0 - z * (n * m * (n + m + 1.0) / 12.0).sqrt()).floor();
    let k = (k.max(1.0) as usize).min(d.len());
    // Three order statistics, each found in linear time: no full sort of n·m differences.
    let len = d.len();
    let mut nth = |i: usize| *d.select_nth_unstable_by(i, f64::total_cmp).1;
    let estimate = if len % 2 == 1 {
        nth(len / 2)
    } else {
        (nth(len / 2 - 1) + nth(len / 2)) / 2.0
    };
    Some(Shift {
        estimate,
        low: nth(k - 1),
        high: nth(len - k),
    })
}

/// The Hodges–Lehmann estimate of the ratio `b / a` with its interval: the shift of the
/// logarithms, so that the interval of a relative change never crosses −100%. `None` when a
/// side is empty or holds a value ≤ 0 (a ratio means nothing there).
pub fn hodges_lehmann_ratio(a: &[f64], b: &[f64], alpha: f64) -> Option<Shift> {
    if a.iter().chain(b).any(|&x| x <= 0.0 || !x.is_finite()) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let s = hodges_lehmann(&la, &lb, alpha)?;
    Some(Shift {
        estimate: s.estimate.exp(),
        low: s.low.exp(),
        high: s.high.exp(),
    })
}

/// A shift between two samples with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    /// Point estimate.
    pub estimate: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
}

/// `values` sorted and, when longer than `max`, reduced to `max` evenly spaced quantiles.
fn thin(values: &[f64], max: usize) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    if v.len() <= max {
        return v;
    }
    (0..max)
        .map(|i| quantile_sorted(&v, i as f64 / (max - 1) as f64))
        .collect()
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the order given: calling every test
/// with `q ≤ α` significant keeps the expected share of false discoveries among them at α.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let n = p.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut q = vec![1.0; n];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * n as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_small_sample() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((s.n, s.median, s.q1, s.q3), (5, 3.0, 2.0, 4.0));
        assert_eq!((s.min, s.max, s.mad), (1.0, 5.0, 1.0));
        assert_eq!(Summary::of(&[2.0, 4.0]).unwrap().median, 3.0);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn exact_u_distribution_matches_the_tables() {
        // n = m = 3: 20 orderings; U = 0 and U = 9 happen once each.
        let d = u_distribution(3, 3);
        assert_eq!(d.iter().sum::<f64>(), 20.0);
        assert_eq!((d[0], d[9], d[4]), (1.0, 1.0, 3.0));
        // Completely separated samples of 3 and 3: p = 2/20.
        let p = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        assert!((min_p_value(3, 3) - 0.1).abs() < 1e-12);
        // 5 against 5 separated: 2/252 (published tables: 0.0079).
        let p = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn identical_samples_are_not_different() {
        let a = [1.0, 1.0, 1.0, 1.0];
        assert_eq!(mann_whitney(&a, &a), Some(1.0));
        let b: Vec<f64> = (0..20).map(f64::from).collect();
        let p = mann_whitney(&b, &b).unwrap();
        assert!(p > 0.9, "{p}");
    }

    #[test]
    fn normal_approximation_agrees_with_the_exact_test() {
        // Interleaved values with one tie force the approximation; compare with the exact
        // p of the same samples without the tie.
        let a: Vec<f64> = (0..15).map(|i| f64::from(i) * 2.0).collect();
        let b: Vec<f64> = (0..15).map(|i| f64::from(i) * 2.0 + 3.0).collect();
        let exact = mann_whitney(&a, &b).unwrap();
        let mut tied = b.clone();
        tied[0] = a[1];
        let approx = mann_whitney(&a, &tied).unwrap();
        assert!((exact - approx).abs() < 0.05, "{exact} vs {approx}");
    }

    #[test]
    fn hodges_lehmann_recovers_a_shift() {
        let a: Vec<f64> = (0..30).map(|i| 100.0 + f64::from(i % 7)).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 50.0).collect();
        let s = hodges_lehmann(&a, &b, 0.05).unwrap();
        assert_eq!(s.estimate, 50.0);
        assert!(
            s.low <= 50.0 && s.high >= 50.0 && s.high - s.low < 6.0,
            "{s:?}"
        );
        // Large samples are thinned, and still centred on the shift.
        let a: Vec<f64> = (0..5000).map(|i| f64::from(i % 100)).collect();
        let b: Vec<f64> = a.iter().map(|x| x - 10.0).collect();
        let s = hodges_lehmann(&a, &b, 0.05).unwrap();
        assert!((s.estimate + 10.0).abs() < 1.0, "{s:?}");
    }

    #[test]
    fn ratio_interval_stays_positive() {
        let a: Vec<f64> = (0..12)
            .map(|i| 1000.0 * (1.0 + 0.5 * f64::from(i % 3)))
            .collect();
        let b: Vec<f64> = a.iter().map(|x| x / 4.0).collect();
        let r = hodges_lehmann_ratio(&a, &b, 0.05).unwrap();
        assert!((r.estimate - 0.25).abs() < 1e-9, "{r:?}");
        assert!(r.low > 0.0 && r.low <= 0.25 && r.high >= 0.25, "{r:?}");
        assert!(hodges_lehmann_ratio(&[0.0, 1.0], &[1.0], 0.05).is_none());
    }

    #[test]
    fn benjamini_hochberg_matches_a_worked_example() {
        let p = [0.01, 0.04, 0.03, 0.005];
        let q = benjamini_hochberg(&p);
        // Sorted: 0.005 → 0.02, 0.01 → 0.02, 0.03 → 0.04, 0.04 → 0.04.
        let expect = [0.02, 0.04, 0.04, 0.02];
        for (q, e) in q.iter().zip(expect) {
            assert!((q - e).abs() < 1e-12, "{q} vs {e}");
        }
        assert!(benjamini_hochberg(&[]).is_empty());
    }
}
