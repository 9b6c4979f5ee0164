//! The fixed, ordered list of counters gpuheat knows about.
//!
//! A counter's position in [`COUNTERS`] is the `u16` stored in
//! [`gpuheat_session::CounterValue::counter`], and [`crate::ContextCounters::info`] lists the
//! counters of a context in this same order, each marked available or not. The order never
//! changes: new counters are appended. Their names cross the process boundary and are spelled
//! once, in [`gpuheat_session::counter_names`], which lists them in this order.

use crate::gl;
use gpuheat_session::counter_names as names;

/// How a counter is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterKind {
    /// CLOCK_MONOTONIC around the call, with the pipeline drained before and after it.
    Serialized,
    /// A pair of `glQueryCounter(GL_TIMESTAMP)` queries, read back frames later.
    Timestamp,
    /// A query begun before the call and ended after it (`glBeginQuery(target)`).
    Query,
    /// Measured by the agent itself (thread CPU time of the call); listed for completeness.
    Agent,
}

/// One entry of the catalogue: what a counter is, its unit and how it is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDef {
    /// Stable machine name, e.g. `samples_passed`.
    pub name: &'static str,
    /// Unit of the value, e.g. `ns`, `samples`, `invocations`.
    pub unit: &'static str,
    /// One line for people.
    pub description: &'static str,
    /// How the value is obtained.
    pub kind: CounterKind,
    /// The GL query target that measures it (`GL_TIMESTAMP`, `GL_SAMPLES_PASSED`, a pipeline
    /// statistics target), or `None` when no GL query is involved.
    pub target: Option<u32>,
}

/// Index of `gpu_time_serialized`.
pub const GPU_TIME_SERIALIZED: u16 = 0;
/// Index of `gpu_time_pipelined`.
pub const GPU_TIME_PIPELINED: u16 = 1;
/// Index of `samples_passed`.
pub const SAMPLES_PASSED: u16 = 2;
/// Index of the first of the 11 pipeline statistics (`vertices_submitted`).
pub const FIRST_PIPELINE_STATISTIC: u16 = 3;
/// Index of `vertices_submitted`.
pub const VERTICES_SUBMITTED: u16 = 3;
/// Index of `primitives_submitted`.
pub const PRIMITIVES_SUBMITTED: u16 = 4;
/// Index of `vertex_shader_invocations`.
pub const VERTEX_SHADER_INVOCATIONS: u16 = 5;
/// Index of `tess_control_shader_patches`.
pub const TESS_CONTROL_SHADER_PATCHES: u16 = 6;
/// Index of `tess_evaluation_shader_invocations`.
pub const TESS_EVALUATION_SHADER_INVOCATIONS: u16 = 7;
/// Index of `geometry_shader_invocations`.
pub const GEOMETRY_SHADER_INVOCATIONS: u16 = 8;
/// Index of `geometry_shader_primitives_emitted`.
pub const GEOMETRY_SHADER_PRIMITIVES_EMITTED: u16 = 9;
/// Index of `fragment_shader_invocations`.
pub const FRAGMENT_SHADER_INVOCATIONS: u16 = 10;
/// Index of `compute_shader_invocations`.
pub const COMPUTE_SHADER_INVOCATIONS: u16 = 11;
/// Index of `clipping_input_primitives`.
pub const CLIPPING_INPUT_PRIMITIVES: u16 = 12;
/// Index of `clipping_output_primitives`.
pub const CLIPPING_OUTPUT_PRIMITIVES: u16 = 13;
/// Index of `cpu_time`.
pub const CPU_TIME: u16 = 14;
/// Number of pipeline statistics counters.
pub const PIPELINE_STATISTICS_COUNT: usize = 11;
/// The catalogue bits of the pipeline statistics counters.
pub const PIPELINE_STATISTICS_MASK: u32 =
    ((1 << PIPELINE_STATISTICS_COUNT) - 1) << FIRST_PIPELINE_STATISTIC;

const fn query(
    name: &'static str,
    unit: &'static str,
    description: &'static str,
    target: u32,
) -> CounterDef {
    CounterDef {
        name,
        unit,
        description,
        kind: CounterKind::Query,
        target: Some(target),
    }
}

/// The catalogue, in [`gpuheat_session::CounterValue::counter`] order.
pub const COUNTERS: &[CounterDef] = &[
    CounterDef {
        name: names::GPU_TIME_SERIALIZED,
        unit: "ns",
        description: "GPU time of the call alone: pipeline drained before and after it, \
                      minus the calibrated cost of an empty bracket",
        kind: CounterKind::Serialized,
        target: None,
    },
    CounterDef {
        name: names::GPU_TIME_PIPELINED,
        unit: "ns",
        description: "GPU time between timestamps written before and after the call, \
                      without stalling; blurred by overlap between calls",
        kind: CounterKind::Timestamp,
        target: Some(gl::TIMESTAMP),
    },
    query(
        names::SAMPLES_PASSED,
        "samples",
        "Samples that passed the depth and stencil tests",
        gl::SAMPLES_PASSED,
    ),
    query(
        names::VERTICES_SUBMITTED,
        "vertices",
        "Vertices fetched by the primitive assembly stage",
        gl::VERTICES_SUBMITTED,
    ),
    query(
        names::PRIMITIVES_SUBMITTED,
        "primitives",
        "Primitives assembled from the submitted vertices",
        gl::PRIMITIVES_SUBMITTED,
    ),
    query(
        names::VERTEX_SHADER_INVOCATIONS,
        "invocations",
        "Vertex shader invocations",
        gl::VERTEX_SHADER_INVOCATIONS,
    ),
    query(
        names::TESS_CONTROL_SHADER_PATCHES,
        "patches",
        "Patches processed by the tessellation control shader",
        gl::TESS_CONTROL_SHADER_PATCHES,
    ),
    query(
        names::TESS_EVALUATION_SHADER_INVOCATIONS,
        "invocations",
        "Tessellation evaluation shader invocations",
        gl::TESS_EVALUATION_SHADER_INVOCATIONS,
    ),
    query(
        names::GEOMETRY_SHADER_INVOCATIONS,
        "invocations",
        "Geometry shader invocations",
        gl::GEOMETRY_SHADER_INVOCATIONS,
    ),
    query(
        names::GEOMETRY_SHADER_PRIMITIVES_EMITTED,
        "primitives",
        "Primitives emitted by the geometry shader",
        gl::GEOMETRY_SHADER_PRIMITIVES_EMITTED,
    ),
    query(
        names::FRAGMENT_SHADER_INVOCATIONS,
        "invocations",
        "Fragment shader invocations",
        gl::FRAGMENT_SHADER_INVOCATIONS,
    ),
    query(
        names::COMPUTE_SHADER_INVOCATIONS,
        "invocations",
        "Compute shader invocations",
        gl::COMPUTE_SHADER_INVOCATIONS,
    ),
    query(
        names::CLIPPING_INPUT_PRIMITIVES,
        "primitives",
        "Primitives that entered the clipping stage",
        gl::CLIPPING_INPUT_PRIMITIVES,
    ),
    query(
        names::CLIPPING_OUTPUT_PRIMITIVES,
        "primitives",
        "Primitives that left the clipping stage",
        gl::CLIPPING_OUTPUT_PRIMITIVES,
    ),
    CounterDef {
        name: names::CPU_TIME,
        unit: "ns",
        description: "Thread CPU time spent inside the call (measured by the agent)",
        kind: CounterKind::Agent,
        target: None,
    },
];

/// Index of the counter called `name` in [`COUNTERS`].
pub fn index_of(name: &str) -> Option<u16> {
    COUNTERS
        .iter()
        .position(|c| c.name == name)
        .map(|i| i as u16)
}

/// The counter at `index`, if any.
pub fn get(index: u16) -> Option<&'static CounterDef> {
    COUNTERS.get(index as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_match_names() {
        let expect = [
            (GPU_TIME_SERIALIZED, names::GPU_TIME_SERIALIZED),
            (GPU_TIME_PIPELINED, names::GPU_TIME_PIPELINED),
            (SAMPLES_PASSED, names::SAMPLES_PASSED),
            (VERTICES_SUBMITTED, names::VERTICES_SUBMITTED),
            (PRIMITIVES_SUBMITTED, names::PRIMITIVES_SUBMITTED),
            (VERTEX_SHADER_INVOCATIONS, names::VERTEX_SHADER_INVOCATIONS),
            (
                TESS_CONTROL_SHADER_PATCHES,
                names::TESS_CONTROL_SHADER_PATCHES,
            ),
            (
                TESS_EVALUATION_SHADER_INVOCATIONS,
                names::TESS_EVALUATION_SHADER_INVOCATIONS,
            ),
            (
                GEOMETRY_SHADER_INVOCATIONS,
                names::GEOMETRY_SHADER_INVOCATIONS,
            ),
            (
                GEOMETRY_SHADER_PRIMITIVES_EMITTED,
                names::GEOMETRY_SHADER_PRIMITIVES_EMITTED,
            ),
            (
                FRAGMENT_SHADER_INVOCATIONS,
                names::FRAGMENT_SHADER_INVOCATIONS,
            ),
            (
                COMPUTE_SHADER_INVOCATIONS,
                names::COMPUTE_SHADER_INVOCATIONS,
            ),
            (CLIPPING_INPUT_PRIMITIVES, names::CLIPPING_INPUT_PRIMITIVES),
            (
                CLIPPING_OUTPUT_PRIMITIVES,
                names::CLIPPING_OUTPUT_PRIMITIVES,
            ),
            (CPU_TIME, names::CPU_TIME),
        ];
        assert_eq!(expect.len(), COUNTERS.len());
        for (i, name) in expect {
            assert_eq!(get(i).unwrap().name, name);
            assert_eq!(index_of(name), Some(i));
        }
        assert_eq!(index_of("nope"), None);
    }

    /// The catalogue lists every name the session format knows, in the same order.
    #[test]
    fn catalogue_order_is_the_sessions() {
        let catalogue: Vec<&str> = COUNTERS.iter().map(|c| c.name).collect();
        assert_eq!(catalogue, names::ALL);
    }

    #[test]
    fn statistics_are_contiguous_queries_with_distinct_targets() {
        let stats = &COUNTERS[FIRST_PIPELINE_STATISTIC as usize..][..PIPELINE_STATISTICS_COUNT];
        let mut targets: Vec<u32> = stats.iter().map(|c| c.target.unwrap()).collect();
        assert!(stats.iter().all(|c| c.kind == CounterKind::Query));
        targets.sort_unstable();
        targets.dedup();
        assert_eq!(targets.len(), PIPELINE_STATISTICS_COUNT);
        assert!(!targets.contains(&gl::SAMPLES_PASSED));
    }
}
