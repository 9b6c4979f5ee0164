//! What a draw is measured by: the columns of the draw list and the colour of the 3D view,
//! all read from [`DrawCost`].

use gpuheat_analysis::palette::Scale;
use gpuheat_analysis::DrawCost;

/// A column of the draw list, and a choice of colour for the meshes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Serialized GPU time (full mode): the draw alone on the GPU.
    GpuSerialized,
    /// Pipelined GPU time, between timestamps.
    GpuPipelined,
    /// Share of the frame's GPU time.
    FrameShare,
    /// CPU time in the GL call.
    Cpu,
    /// A counter of the session's catalogue, by name (e.g. `samples_passed`).
    Counter(String),
}

impl Metric {
    /// Short column title.
    pub fn title(&self) -> String {
        match self {
            Metric::GpuSerialized => "GPU µs".into(),
            Metric::GpuPipelined => "GPU pipelined µs".into(),
            Metric::FrameShare => "share".into(),
            Metric::Cpu => "CPU µs".into(),
            Metric::Counter(name) => name.clone(),
        }
    }

    /// Name and unit, for the legend and menus.
    pub fn describe(&self, unit: Option<&str>) -> String {
        match self {
            Metric::GpuSerialized => "GPU time, serialized (ns)".into(),
            Metric::GpuPipelined => "GPU time, pipelined (ns)".into(),
            Metric::FrameShare => "share of the frame's GPU time".into(),
            Metric::Cpu => "CPU time in the call (ns)".into(),
            Metric::Counter(name) => match unit {
                Some(u) if !u.is_empty() => format!("{name} ({u})"),
                _ => name.clone(),
            },
        }
    }

    /// The draw's value, `None` where it was not measured.
    pub fn value(&self, d: &DrawCost) -> Option<f64> {
        match self {
            Metric::GpuSerialized => d.gpu_serialized_ns.map(|v| v as f64),
            Metric::GpuPipelined => d.gpu_pipelined_ns.map(|v| v as f64),
            Metric::FrameShare => d.frame_share,
            Metric::Cpu => Some(d.cpu_ns as f64),
            Metric::Counter(name) => d.counters.get(name).map(|&v| v as f64),
        }
    }

    /// The value as the list shows it.
    pub fn cell(&self, d: &DrawCost) -> String {
        match (self, self.value(d)) {
            (_, None) => "–".into(),
            (Metric::FrameShare, Some(v)) => format!("{:.1}%", v * 100.0),
            (Metric::GpuSerialized | Metric::GpuPipelined | Metric::Cpu, Some(v)) => {
                format!("{:.1}", v / 1e3)
            }
            (Metric::Counter(_), Some(v)) => format!("{v:.0}"),
        }
    }
}

/// Positions of `values` in [0, 1], min–max normalized on `scale`; `None` stays `None`.
/// When all values are equal they all sit at 1 (each is the hottest).
pub fn normalize(values: &[Option<f64>], scale: Scale) -> Vec<Option<f64>> {
    let f = |v: f64| match scale {
        Scale::Linear => v,
        Scale::Log => v.max(0.0).ln_1p(),
    };
    let present = values.iter().flatten().map(|&v| f(v));
    let (lo, hi) = present.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    values
        .iter()
        .map(|v| {
            v.map(|v| {
                if hi > lo {
                    ((f(v) - lo) / (hi - lo)).clamp(0.0, 1.0)
                } else {
                    1.0
                }
            })
        })
        .collect()
}

/// `1.23 ms`, `456 µs`, `78 ns`.
pub fn duration(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_normalization() {
        let n = normalize(&[Some(2.0), None, Some(4.0), Some(3.0)], Scale::Linear);
        assert_eq!(n, vec![Some(0.0), None, Some(1.0), Some(0.5)]);
        assert_eq!(normalize(&[Some(5.0)], Scale::Log), vec![Some(1.0)]);
        let log = normalize(&[Some(0.0), Some(10.0), Some(1000.0)], Scale::Log);
        assert!(log[1].unwrap() > 0.3);
    }

    #[test]
    fn durations() {
        assert_eq!(duration(1_500_000.0), "1.50 ms");
        assert_eq!(duration(2_500.0), "2.5 µs");
        assert_eq!(duration(12.0), "12 ns");
    }
}
