//! Which pipeline statistics a work call can move, so that full mode only asks for those.
//!
//! A statistics query costs as much to begin, end and read whether its stage ran or not: on
//! llvmpipe (desktop GL, 1,000 two-triangle draws a frame, timed deferred) the 11 statistics
//! were about 80% of full mode's own work, and the five no draw of a vertex-and-fragment
//! program can move (tessellation, geometry, compute) about 40%. A draw does not run a
//! compute shader, a dispatch runs nothing else, and a draw runs tessellation or geometry
//! shaders only when its program has them. Those counters are left out of the call's values
//! (not measured, shown as absent, never as a 0 nobody measured). Anything else a driver may
//! run its own shaders for (a clear, a blit, a copy) keeps every counter.
//!
//! A draw's program is the current one; its stages are read once per program and capture
//! ([`StageCache`]) with queries that fail on a program without the stage, inside an
//! [`ErrorScope`] that keeps the program's GL error. A separable program pipeline, a program
//! that is not linked, or a context without the queries count as having every stage.

use std::collections::HashMap;

use crate::catalogue;
use crate::gl::*;
use crate::state::{drain_errors, ErrorScope};

/// What kind of work call a bracket is taken around.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// A draw (`glDraw*`, `glMultiDraw*`): vertex processing and rasterization, with the
    /// tessellation and geometry stages its program has.
    Draw,
    /// A compute dispatch (`glDispatchCompute*`): compute invocations only.
    Dispatch,
    /// Any other work (clears, blits, copies, mipmaps), which a driver may carry out with
    /// shaders of its own: every counter.
    Other,
}

/// The optional stages of a draw's program, whose statistics count nothing without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stages {
    /// A tessellation control or evaluation shader.
    pub tessellation: bool,
    /// A geometry shader.
    pub geometry: bool,
}

impl Stages {
    /// Every stage: what an unknown program is taken to have.
    pub const ALL: Stages = Stages {
        tessellation: true,
        geometry: true,
    };
    /// Vertex and fragment processing only (and fixed-function processing).
    pub const NONE: Stages = Stages {
        tessellation: false,
        geometry: false,
    };
}

const fn bit(i: u16) -> u32 {
    1 << i
}

const TESSELLATION: u32 = bit(catalogue::TESS_CONTROL_SHADER_PATCHES)
    | bit(catalogue::TESS_EVALUATION_SHADER_INVOCATIONS);
const GEOMETRY: u32 = bit(catalogue::GEOMETRY_SHADER_INVOCATIONS)
    | bit(catalogue::GEOMETRY_SHADER_PRIMITIVES_EMITTED);
const COMPUTE: u32 = bit(catalogue::COMPUTE_SHADER_INVOCATIONS);

impl Stages {
    /// The stages with a counter among the catalogue bits `counters` (a context's usable
    /// ones: the stages worth asking a program about).
    pub(crate) fn counted_in(counters: u32) -> Stages {
        Stages {
            tessellation: counters & TESSELLATION != 0,
            geometry: counters & GEOMETRY != 0,
        }
    }
}

/// The catalogue bits of the query counters a call of `kind` cannot move (`stages`: its
/// program's, for a draw): the bracket leaves them out.
pub fn idle_counters(kind: CallKind, stages: Stages) -> u32 {
    match kind {
        CallKind::Draw => {
            let mut idle = COMPUTE;
            if !stages.tessellation {
                idle |= TESSELLATION;
            }
            if !stages.geometry {
                idle |= GEOMETRY;
            }
            idle
        }
        CallKind::Dispatch => {
            (bit(catalogue::SAMPLES_PASSED) | catalogue::PIPELINE_STATISTICS_MASK) & !COMPUTE
        }
        CallKind::Other => 0,
    }
}

/// The stages of each program a context's draws ran, read once per program and capture.
#[derive(Debug, Default)]
pub struct StageCache {
    /// The capture the entries were read in: a program may be relinked between captures,
    /// when the agent does not watch.
    capture: u64,
    /// Program name → (the generation of its last link the agent saw, its stages).
    programs: HashMap<GLuint, (u64, Stages)>,
}

/// Most programs remembered per context; beyond it the cache starts over.
const MOST_PROGRAMS: usize = 4096;

impl StageCache {
    /// The optional stages of the program the next draw runs, of those `asked` (the ones
    /// whose statistics the context counts; the others read `false`). `capture` names the
    /// capture, `link_generation` the generation of a program's last link the agent saw
    /// (0: never), and `pipelines` whether the context has separable program pipelines.
    ///
    /// # Safety
    /// The context `t` belongs to must be current, and be desktop GL 3.0 or later.
    pub unsafe fn current(
        &mut self,
        t: &ThermalFns,
        asked: Stages,
        capture: u64,
        pipelines: bool,
        link_generation: &dyn Fn(GLuint) -> u64,
    ) -> Stages {
        if !asked.tessellation && !asked.geometry {
            return Stages::NONE;
        }
        if self.capture != capture || self.programs.len() >= MOST_PROGRAMS {
            self.capture = capture;
            self.programs.clear();
        }
        // SAFETY: our caller's promise; `GL_CURRENT_PROGRAM` exists in GL 2.0+, and the
        // pipeline binding is asked only where the context has pipelines.
        let program = unsafe { t.integer(CURRENT_PROGRAM) } as GLuint;
        if program == 0 {
            // SAFETY: as above.
            let pipeline = pipelines && unsafe { t.integer(PROGRAM_PIPELINE_BINDING) } != 0;
            // Fixed-function processing has neither stage; a pipeline's stages are not read.
            return if pipeline { asked } else { Stages::NONE };
        }
        let generation = link_generation(program);
        if let Some(&(g, stages)) = self.programs.get(&program) {
            if g == generation {
                return stages;
            }
        }
        // SAFETY: our caller's promise.
        let stages = unsafe { program_stages(t, program, asked) };
        self.programs.insert(program, (generation, stages));
        stages
    }
}

/// The optional stages of linked program `program`, of those `asked` ([`Stages::ALL`] when
/// it is not a linked program): a query of a stage's property fails on a program without
/// that stage. The program's pending GL error is kept.
///
/// # Safety
/// The context `t` belongs to must be current and have the stages asked (GL 3.2 for geometry
/// shaders, 4.0 for tessellation), whose queries are then valid names.
pub(crate) unsafe fn program_stages(t: &ThermalFns, program: GLuint, asked: Stages) -> Stages {
    // SAFETY: our caller's promise; each query writes one integer.
    unsafe {
        let scope = ErrorScope::enter(t);
        let mut linked = 0;
        (t.get_programiv)(program, LINK_STATUS, &mut linked);
        if drain_errors(t) != NO_ERROR || linked == 0 {
            scope.leave();
            return Stages::ALL;
        }
        let has = |pname: GLenum| {
            let mut value = 0;
            (t.get_programiv)(program, pname, &mut value);
            drain_errors(t) == NO_ERROR
        };
        let stages = Stages {
            tessellation: asked.tessellation
                && (has(TESS_CONTROL_OUTPUT_VERTICES) || has(TESS_GEN_MODE)),
            geometry: asked.geometry && has(GEOMETRY_VERTICES_OUT),
        };
        scope.leave();
        stages
    }
}

#[cfg(test)]
mod tests {
    use super::{idle_counters, CallKind, Stages};
    use crate::catalogue::{
        CLIPPING_INPUT_PRIMITIVES, CLIPPING_OUTPUT_PRIMITIVES, COMPUTE_SHADER_INVOCATIONS,
        FRAGMENT_SHADER_INVOCATIONS, GEOMETRY_SHADER_INVOCATIONS,
        GEOMETRY_SHADER_PRIMITIVES_EMITTED, GPU_TIME_PIPELINED, GPU_TIME_SERIALIZED,
        PIPELINE_STATISTICS_COUNT, PRIMITIVES_SUBMITTED, SAMPLES_PASSED,
        TESS_CONTROL_SHADER_PATCHES, TESS_EVALUATION_SHADER_INVOCATIONS, VERTEX_SHADER_INVOCATIONS,
        VERTICES_SUBMITTED,
    };

    fn has(mask: u32, i: u16) -> bool {
        mask & (1 << i) != 0
    }

    #[test]
    fn a_draw_of_a_vertex_and_fragment_program_leaves_out_the_five_other_stages() {
        let idle = idle_counters(CallKind::Draw, Stages::NONE);
        for i in [
            TESS_CONTROL_SHADER_PATCHES,
            TESS_EVALUATION_SHADER_INVOCATIONS,
            GEOMETRY_SHADER_INVOCATIONS,
            GEOMETRY_SHADER_PRIMITIVES_EMITTED,
            COMPUTE_SHADER_INVOCATIONS,
        ] {
            assert!(has(idle, i), "{i}");
        }
        assert_eq!(idle.count_ones(), 5);
        for i in [
            SAMPLES_PASSED,
            VERTICES_SUBMITTED,
            PRIMITIVES_SUBMITTED,
            VERTEX_SHADER_INVOCATIONS,
            FRAGMENT_SHADER_INVOCATIONS,
            CLIPPING_INPUT_PRIMITIVES,
            CLIPPING_OUTPUT_PRIMITIVES,
        ] {
            assert!(!has(idle, i), "{i}");
        }
    }

    #[test]
    fn a_draw_keeps_the_stages_its_program_has() {
        let geometry = idle_counters(
            CallKind::Draw,
            Stages {
                tessellation: false,
                geometry: true,
            },
        );
        assert!(!has(geometry, GEOMETRY_SHADER_INVOCATIONS));
        assert!(!has(geometry, GEOMETRY_SHADER_PRIMITIVES_EMITTED));
        assert!(has(geometry, TESS_CONTROL_SHADER_PATCHES));
        let all = idle_counters(CallKind::Draw, Stages::ALL);
        assert_eq!(all, 1 << COMPUTE_SHADER_INVOCATIONS);
    }

    #[test]
    fn a_dispatch_keeps_compute_invocations_only_and_other_work_everything() {
        let idle = idle_counters(CallKind::Dispatch, Stages::ALL);
        assert!(!has(idle, COMPUTE_SHADER_INVOCATIONS));
        assert!(has(idle, SAMPLES_PASSED));
        assert_eq!(idle.count_ones() as usize, PIPELINE_STATISTICS_COUNT);
        // Times are no query: never idle.
        assert!(!has(idle, GPU_TIME_SERIALIZED) && !has(idle, GPU_TIME_PIPELINED));
        assert_eq!(idle_counters(CallKind::Other, Stages::NONE), 0);
    }
}
