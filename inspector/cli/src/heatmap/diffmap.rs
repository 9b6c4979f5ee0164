//! Turning a [`HeatDiff`] into an RGB image: `heat(B) − heat(A)` on a symmetric diverging
//! scale, pixels within the noise band grey, with the legend below.

use super::render::{Image, Legend};
use gpuheat_analysis::compare::heat::{diverging, HeatDiff, NOISE_GREY};
use gpuheat_analysis::palette::label;

/// The colour of pixel `i`: grey within the noise band, else its place on ±`max`.
pub fn pixel(d: &HeatDiff, i: usize, max: f64) -> [u8; 3] {
    let diff = f64::from(d.diff[i]);
    if diff.abs() <= f64::from(d.noise[i]) {
        NOISE_GREY
    } else {
        diverging(diff, max)
    }
}

/// Renders the difference (flipped: GL rows are bottom first) with its legend; `drift` is
/// the factor B's heat was divided by (1: raw).
pub fn render(d: &HeatDiff, drift: f64) -> Image {
    let (w, h) = (d.width, d.height);
    let max = f64::from(d.max_abs());
    let mut lines = vec![
        (format!("-{}", label(max)), format!("+{}", label(max))),
        ("b - a, ns per pixel per frame".to_string(), String::new()),
        ("blue cheaper, red costlier".to_string(), String::new()),
        ("grey within noise".to_string(), String::new()),
    ];
    if drift != 1.0 {
        lines.push((
            format!("b divided by the drift {}", label(drift)),
            String::new(),
        ));
    }
    let legend = Legend::for_rows(h);
    let mut image = legend.image(w, h, lines.len());
    let row_len = w as usize * 3;
    for gl_y in 0..h as usize {
        let out_row = (h as usize - 1 - gl_y) * row_len;
        for x in 0..w as usize {
            let c = pixel(d, gl_y * w as usize + x, max);
            image.rgb[out_row + x * 3..out_row + x * 3 + 3].copy_from_slice(&c);
        }
    }
    // Left end: the largest improvement; right end: the largest regression.
    let scale = max.max(1.0);
    legend.paint(
        &mut image,
        h,
        &lines,
        |t| diverging((2.0 * t - 1.0) * scale, scale),
        None,
    );
    image
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(values: &[f32], noise: f32) -> HeatDiff {
        HeatDiff {
            width: values.len() as u32,
            height: 1,
            a: vec![0.0; values.len()],
            b: values.to_vec(),
            diff: values.to_vec(),
            noise: vec![noise; values.len()],
            frames: (3, 3),
        }
    }

    #[test]
    fn cheaper_is_blue_costlier_red_and_noise_grey() {
        let d = diff(&[-10.0, 10.0, 0.5, 0.0], 1.0);
        let img = render(&d, 1.0);
        let px = |x: usize| [img.rgb[x * 3], img.rgb[x * 3 + 1], img.rgb[x * 3 + 2]];
        assert!(px(0)[2] > px(0)[0], "cheaper: {:?}", px(0));
        assert!(px(1)[0] > px(1)[2], "costlier: {:?}", px(1));
        assert_eq!(px(2), NOISE_GREY);
        assert_eq!(px(3), NOISE_GREY);
        assert!(img.height > 1 + 12);
    }
}
