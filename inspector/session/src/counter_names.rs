//! The names of gpuheat's counters, spelled once.
//!
//! They cross the process boundary: the agent lists each context's counters by name in its
//! `CTX` record ([`crate::CounterInfo::name`]), and everything that reads a session finds a
//! counter by its name there, never by its position. A session file keeps them, so a name is
//! never changed or reused; new counters get new names. What each counter measures, its unit
//! and how it is measured are `gpuheat-counters`' catalogue, which lists them in [`ALL`]'s
//! order.

/// GPU time of the call alone, the pipeline drained before and after it (ns).
pub const GPU_TIME_SERIALIZED: &str = "gpu_time_serialized";
/// GPU time between timestamps written before and after the call, without stalling (ns).
pub const GPU_TIME_PIPELINED: &str = "gpu_time_pipelined";
/// Samples that passed the depth and stencil tests.
pub const SAMPLES_PASSED: &str = "samples_passed";
/// Vertices fetched by the primitive assembly stage (a pipeline statistic).
pub const VERTICES_SUBMITTED: &str = "vertices_submitted";
/// Primitives assembled from the submitted vertices (a pipeline statistic).
pub const PRIMITIVES_SUBMITTED: &str = "primitives_submitted";
/// Vertex shader invocations (a pipeline statistic).
pub const VERTEX_SHADER_INVOCATIONS: &str = "vertex_shader_invocations";
/// Patches processed by the tessellation control shader (a pipeline statistic).
pub const TESS_CONTROL_SHADER_PATCHES: &str = "tess_control_shader_patches";
/// Tessellation evaluation shader invocations (a pipeline statistic).
pub const TESS_EVALUATION_SHADER_INVOCATIONS: &str = "tess_evaluation_shader_invocations";
/// Geometry shader invocations (a pipeline statistic).
pub const GEOMETRY_SHADER_INVOCATIONS: &str = "geometry_shader_invocations";
/// Primitives emitted by the geometry shader (a pipeline statistic).
pub const GEOMETRY_SHADER_PRIMITIVES_EMITTED: &str = "geometry_shader_primitives_emitted";
/// Fragment shader invocations (a pipeline statistic).
pub const FRAGMENT_SHADER_INVOCATIONS: &str = "fragment_shader_invocations";
/// Compute shader invocations (a pipeline statistic).
pub const COMPUTE_SHADER_INVOCATIONS: &str = "compute_shader_invocations";
/// Primitives that entered the clipping stage (a pipeline statistic).
pub const CLIPPING_INPUT_PRIMITIVES: &str = "clipping_input_primitives";
/// Primitives that left the clipping stage (a pipeline statistic).
pub const CLIPPING_OUTPUT_PRIMITIVES: &str = "clipping_output_primitives";
/// Thread CPU time spent inside the call, measured by the agent (ns).
pub const CPU_TIME: &str = "cpu_time";

/// Every counter name, in the order of `gpuheat-counters`' catalogue.
pub const ALL: [&str; 15] = [
    GPU_TIME_SERIALIZED,
    GPU_TIME_PIPELINED,
    SAMPLES_PASSED,
    VERTICES_SUBMITTED,
    PRIMITIVES_SUBMITTED,
    VERTEX_SHADER_INVOCATIONS,
    TESS_CONTROL_SHADER_PATCHES,
    TESS_EVALUATION_SHADER_INVOCATIONS,
    GEOMETRY_SHADER_INVOCATIONS,
    GEOMETRY_SHADER_PRIMITIVES_EMITTED,
    FRAGMENT_SHADER_INVOCATIONS,
    COMPUTE_SHADER_INVOCATIONS,
    CLIPPING_INPUT_PRIMITIVES,
    CLIPPING_OUTPUT_PRIMITIVES,
    CPU_TIME,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;

    /// The names are part of the format: the oldest fixture, written by a real capture
    /// before the names were constants, lists exactly these, in this order.
    #[test]
    fn names_are_those_the_version_1_fixture_was_captured_with() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/v1-hot_spot.gpuheat"
        );
        let session = Session::open(path).unwrap();
        assert!(!session.contexts.is_empty());
        for ctx in &session.contexts {
            let names: Vec<&str> = ctx.counters.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ALL);
        }
    }
}
