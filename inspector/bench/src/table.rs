//! The figures every bench prints, and their shapes as text and JSON: the median, and a
//! sample's spread (median, quartiles, range) with ratios between spreads.

use serde_json::{json, Value};

/// Median (mean of the two middle values for an even count; NaN for none).
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median, quartiles and range of a sample (NaN for none); quartiles by linear
/// interpolation between order statistics.
#[derive(Clone, Copy, Debug)]
pub struct Spread {
    pub n: usize,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        let q = |p: f64| -> f64 {
            if v.is_empty() {
                return f64::NAN;
            }
            let at = p * (v.len() - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
        };
        Spread {
            n: v.len(),
            median: q(0.5),
            q1: q(0.25),
            q3: q(0.75),
            min: v.first().copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
        }
    }

    /// `self / base` of the medians, and the interval from the quartiles.
    pub fn ratio(&self, base: &Spread) -> (f64, f64, f64) {
        (
            self.median / base.median,
            self.q1 / base.q3,
            self.q3 / base.q1,
        )
    }

    /// [`Spread::ratio`] as text: `r.rrx (lo-hi)`.
    pub fn ratio_text(&self, base: &Spread) -> String {
        let (r, lo, hi) = self.ratio(base);
        format!("{r:.2}x ({lo:.2}-{hi:.2})")
    }

    /// `median (Q1–Q3, min–max)` in ms.
    pub fn text(&self) -> String {
        format!(
            "{:.2} ({:.2}-{:.2}, {:.2}-{:.2})",
            self.median, self.q1, self.q3, self.min, self.max
        )
    }
}

/// A spread as JSON.
pub fn spread_json(s: &Spread) -> Value {
    json!({"median": s.median, "q1": s.q1, "q3": s.q3, "min": s.min, "max": s.max, "n": s.n})
}

/// `s / base` as JSON: the ratio of the medians and its interval from the quartiles.
pub fn ratio_json(s: &Spread, base: &Spread) -> Value {
    let (r, lo, hi) = s.ratio(base);
    json!({"median": r, "from_quartiles": [lo, hi]})
}

/// Parses a comma-separated list of counts given to `flag`; empty or "0" entries mean none.
pub fn parse_counts(flag: &str, s: &str) -> anyhow::Result<Vec<u32>> {
    use anyhow::Context;
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: u32 = part
            .parse()
            .with_context(|| format!("{flag}: `{part}` is not a number"))?;
        if n > 0 {
            out.push(n);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_small_samples() {
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!((s.n, s.median, s.q1, s.q3), (5, 3.0, 2.0, 4.0));
        assert_eq!((s.min, s.max), (1.0, 5.0));
        // Even count: interpolated between the middle order statistics.
        let s = Spread::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((s.median, s.q1, s.q3), (2.5, 1.75, 3.25));
        let one = Spread::of(&[7.0]);
        assert_eq!(
            (one.median, one.q1, one.q3, one.min, one.max),
            (7.0, 7.0, 7.0, 7.0, 7.0)
        );
        assert!(Spread::of(&[]).median.is_nan());
    }

    #[test]
    fn ratio_interval_comes_from_the_quartiles() {
        let base = Spread::of(&[9.0, 10.0, 11.0]);
        let captured = Spread::of(&[18.0, 20.0, 22.0]);
        let (r, lo, hi) = captured.ratio(&base);
        assert_eq!(r, 2.0);
        assert_eq!(lo, 19.0 / 10.5);
        assert_eq!(hi, 21.0 / 9.5);
        assert!(lo < r && r < hi);
    }
}
