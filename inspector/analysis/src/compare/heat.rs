//! The heat of two sessions compared pixel by pixel: `heat(B) − heat(A)`, each side the
//! per-pixel median over its heat-mapped frames (ns per pixel per frame), with a per-pixel
//! noise band from the spread of both sides, and the diverging colours it is painted with.

use crate::measure::flow::{frame_flow_labelled, frames_with_maps, roles, Labels, TargetRole};
use crate::measure::stats::quantile_sorted;
use gpuheat_session::{HeatMap, Session};
use rayon::prelude::*;
use std::fmt;

/// `heat(B) − heat(A)`, per pixel.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatDiff {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// A's median heat per pixel over its frames, ns; row-major, bottom row first (GL order).
    pub a: Vec<f32>,
    /// B's, likewise.
    pub b: Vec<f32>,
    /// `b − a`.
    pub diff: Vec<f32>,
    /// The noise band per pixel: a difference within ±`noise` is not told from noise
    /// (2 × the normal-consistent MADs of both sides, added in quadrature, and at least
    /// `min_change` × the smaller side: a change smaller than the diff's factor either way).
    pub noise: Vec<f32>,
    /// Heat-mapped frames of A and of B.
    pub frames: (usize, usize),
}

/// Why two sessions' heat cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeatDiffError {
    /// A side has no heat map (captured without `--heat`, or every frame's map missing).
    NoHeat {
        /// `A` or `B`.
        side: &'static str,
        /// Why, from the session's HMIS records when it has them.
        reason: String,
    },
    /// The maps are of different sizes.
    SizeMismatch {
        /// A's width and height.
        a: [u32; 2],
        /// B's.
        b: [u32; 2],
    },
}

impl fmt::Display for HeatDiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeatDiffError::NoHeat { side, reason } => write!(f, "{side} has no heat map: {reason}"),
            HeatDiffError::SizeMismatch { a, b } => write!(
                f,
                "the frames are of different sizes ({}x{} in A, {}x{} in B): heat can only be \
                 compared pixel by pixel at the same size",
                a[0], a[1], b[0], b[1]
            ),
        }
    }
}

impl std::error::Error for HeatDiffError {}

impl HeatDiff {
    /// The largest |difference|, for a symmetric colour scale.
    pub fn max_abs(&self) -> f32 {
        self.diff.iter().fold(0.0, |m, d| m.max(d.abs()))
    }

    /// Σ of the differences: B's frame time minus A's, over the painted draws (ns).
    pub fn total(&self) -> f64 {
        self.diff.iter().map(|&d| f64::from(d)).sum()
    }
}

/// Compares the heat of `a` and `b`, B's heat divided by `b_scale` first (the diff's common
/// drift, so that a machine slower everywhere does not paint every pixel; 1 for raw heat).
/// `min_change` is the diff's threshold ([`crate::compare::diff::Diff::min_change`]): a pixel whose
/// heat changed by less than that factor either way is within the noise, as a draw would be.
pub fn heat_diff(
    a: &Session,
    b: &Session,
    b_scale: f64,
    min_change: f64,
) -> Result<HeatDiff, HeatDiffError> {
    let ma = maps(a, "A")?;
    let mb = maps(b, "B")?;
    let size = |m: &[&HeatMap]| [m[0].width, m[0].height];
    let ha: Vec<&[f32]> = ma.iter().map(|h| &h.heat[..]).collect();
    let hb: Vec<&[f32]> = mb.iter().map(|h| &h.heat[..]).collect();
    compare_maps((size(&ma), &ha), (size(&mb), &hb), b_scale, min_change)
}

/// Most frames whose computed maps (offscreen or total) are held at once per side.
pub const MAP_FRAMES: usize = 32;

/// Which map of each frame [`heat_diff_of`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapChoice {
    /// The render target, by role (the same in both captures).
    pub role: TargetRole,
    /// Its total-cost map (own plus upstream) instead of its own.
    pub total: bool,
}

/// [`heat_diff`] of any render target's own or total map, matched by role. The maps are
/// computed per frame (at most [`MAP_FRAMES`] of a side, evenly spaced).
pub fn heat_diff_of(
    a: &Session,
    b: &Session,
    which: MapChoice,
    b_scale: f64,
    min_change: f64,
) -> Result<HeatDiff, HeatDiffError> {
    let (ma, mb) = rayon::join(|| chosen_maps(a, which, "A"), || chosen_maps(b, which, "B"));
    let (ma, mb) = (ma?, mb?);
    let ra: Vec<&[f32]> = ma.1.iter().map(|v| &v[..]).collect();
    let rb: Vec<&[f32]> = mb.1.iter().map(|v| &v[..]).collect();
    compare_maps((ma.0, &ra), (mb.0, &rb), b_scale, min_change)
}

/// The chosen map of each sampled frame of `s` that has the role, at its most common size.
fn chosen_maps(
    s: &Session,
    which: MapChoice,
    side: &'static str,
) -> Result<([u32; 2], Vec<Vec<f32>>), HeatDiffError> {
    let frames = frames_with_maps(s);
    let step = (frames.len() as f64 / MAP_FRAMES as f64).max(1.0);
    let labels = Labels::of(s);
    let mut out: Vec<([u32; 2], Vec<f32>)> = Vec::new();
    let mut i = 0.0;
    while (i as usize) < frames.len() {
        let frame = frames[i as usize];
        i += step;
        let Some(flow) = frame_flow_labelled(s, frame, &labels) else {
            continue;
        };
        let Some(pos) = roles(s, &flow).iter().position(|r| *r == which.role) else {
            continue;
        };
        let t = &flow.targets[pos];
        let map = if which.total {
            match flow.total_map(t.key) {
                Some(m) => m.into_iter().map(|v| v as f32).collect(),
                None => continue,
            }
        } else {
            t.own.clone()
        };
        out.push(([t.width, t.height], map));
    }
    let Some(size) = most_common(out.iter().map(|(s, _)| *s)) else {
        return Err(HeatDiffError::NoHeat {
            side,
            reason: format!("no frame has a map of the {}", which.role),
        });
    };
    Ok((
        size,
        out.into_iter()
            .filter(|(s, _)| *s == size)
            .map(|(_, m)| m)
            .collect(),
    ))
}

/// The most frequent of `sizes` (the first of equals).
fn most_common(sizes: impl Iterator<Item = [u32; 2]>) -> Option<[u32; 2]> {
    let mut counts: Vec<([u32; 2], usize)> = Vec::new();
    for size in sizes {
        match counts.iter_mut().find(|(s, _)| *s == size) {
            Some(e) => e.1 += 1,
            None => counts.push((size, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(s, _)| s)
}

/// Per-pixel medians of both sides' maps, their difference and its noise band.
fn compare_maps(
    (sa, ma): ([u32; 2], &[&[f32]]),
    (sb, mb): ([u32; 2], &[&[f32]]),
    b_scale: f64,
    min_change: f64,
) -> Result<HeatDiff, HeatDiffError> {
    if sa != sb {
        return Err(HeatDiffError::SizeMismatch { a: sa, b: sb });
    }
    let n = (sa[0] * sa[1]) as usize;
    let (a_med, a_mad) = per_pixel(ma, n);
    let (mut b_med, mut b_mad) = per_pixel(mb, n);
    if b_scale > 0.0 && b_scale != 1.0 {
        let k = (1.0 / b_scale) as f32;
        b_med
            .iter_mut()
            .chain(b_mad.iter_mut())
            .for_each(|v| *v *= k);
    }
    let diff = b_med.iter().zip(&a_med).map(|(b, a)| b - a).collect();
    let m = min_change.max(0.0) as f32;
    let noise = a_mad
        .iter()
        .zip(&b_mad)
        .zip(a_med.iter().zip(&b_med))
        .map(|((x, y), (va, vb))| (2.0 * 1.4826 * (x * x + y * y).sqrt()).max(m * va.min(*vb)))
        .collect();
    Ok(HeatDiff {
        width: sa[0],
        height: sa[1],
        a: a_med,
        b: b_med,
        diff,
        noise,
        frames: (ma.len(), mb.len()),
    })
}

/// A session's heat maps of its most common size (a resized window leaves a few of another).
fn maps<'a>(s: &'a Session, side: &'static str) -> Result<Vec<&'a HeatMap>, HeatDiffError> {
    let Some(size) = most_common(s.heat.iter().map(|h| [h.width, h.height])) else {
        let reason = s
            .heat_missing
            .first()
            .map(|m| m.reason.clone())
            .unwrap_or_else(|| "it was captured without --heat".into());
        return Err(HeatDiffError::NoHeat { side, reason });
    };
    Ok(s.heat
        .iter()
        .filter(|h| [h.width, h.height] == size)
        .collect())
}

/// Per-pixel median and MAD over the maps.
fn per_pixel(maps: &[&[f32]], n: usize) -> (Vec<f32>, Vec<f32>) {
    (0..n)
        .into_par_iter()
        .map_init(Vec::new, |v: &mut Vec<f64>, p| {
            v.clear();
            v.extend(maps.iter().map(|m| {
                let h = m[p];
                if h.is_finite() && h > 0.0 {
                    f64::from(h)
                } else {
                    0.0
                }
            }));
            v.sort_by(f64::total_cmp);
            let med = quantile_sorted(v, 0.5);
            for x in v.iter_mut() {
                *x = (*x - med).abs();
            }
            v.sort_by(f64::total_cmp);
            (med as f32, quantile_sorted(v, 0.5) as f32)
        })
        .unzip()
}

/// The colour of a difference `d` on a symmetric scale of ±`max`: blue for cheaper in B, red
/// for more expensive, the palette's pale middle for no change (colorous RED_BLUE, reversed).
pub fn diverging(d: f64, max: f64) -> [u8; 3] {
    let t = if max > 0.0 {
        (0.5 - 0.5 * d / max).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let c = colorous::RED_BLUE.eval_continuous(t);
    [c.r, c.g, c.b]
}

/// The colour of a pixel within the noise band: neutral grey, so that only changes beyond
/// the noise carry colour.
pub const NOISE_GREY: [u8; 3] = [0x80, 0x80, 0x80];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diverging_ends_are_red_and_blue() {
        let slower = diverging(1.0, 1.0);
        let faster = diverging(-1.0, 1.0);
        assert!(slower[0] > slower[2], "{slower:?}");
        assert!(faster[2] > faster[0], "{faster:?}");
        let mid = diverging(0.0, 1.0);
        assert!(mid.iter().all(|&c| c > 0xd0), "{mid:?}");
        assert_eq!(diverging(5.0, 0.0), mid);
    }
}
