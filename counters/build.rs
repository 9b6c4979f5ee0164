//! Generates the crate's GL constants (`crate::gl::VENDOR` …, upper case) from the Khronos registry the
//! agent's wrappers and the report's enum names also come from, so no value is typed by hand.
//! Only the names listed here are generated: a name the registry does not know, or knows with
//! two values, fails the build.

use gpuheat_registry::Registry;
use std::fmt::Write as _;

/// The `GL_` enums the crate uses, without the prefix.
const NAMES: &[&str] = &[
    // Strings and errors.
    "VENDOR",
    "RENDERER",
    "VERSION",
    "EXTENSIONS",
    "NUM_EXTENSIONS",
    "NO_ERROR",
    "INVALID_ENUM",
    "INVALID_VALUE",
    "INVALID_OPERATION",
    // Queries.
    "SAMPLES_PASSED",
    "ANY_SAMPLES_PASSED",
    "ANY_SAMPLES_PASSED_CONSERVATIVE",
    "TIME_ELAPSED",
    "TIMESTAMP",
    "QUERY_COUNTER_BITS",
    "CURRENT_QUERY",
    "QUERY_RESULT",
    "QUERY_RESULT_AVAILABLE",
    "GPU_DISJOINT_EXT",
    "QUERY_BUFFER",
    "QUERY_BUFFER_BINDING",
    "PRIMITIVES_GENERATED",
    "TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN",
    // Pipeline statistics.
    "VERTICES_SUBMITTED",
    "PRIMITIVES_SUBMITTED",
    "VERTEX_SHADER_INVOCATIONS",
    "TESS_CONTROL_SHADER_PATCHES",
    "TESS_EVALUATION_SHADER_INVOCATIONS",
    "GEOMETRY_SHADER_INVOCATIONS",
    "GEOMETRY_SHADER_PRIMITIVES_EMITTED",
    "FRAGMENT_SHADER_INVOCATIONS",
    "COMPUTE_SHADER_INVOCATIONS",
    "CLIPPING_INPUT_PRIMITIVES",
    "CLIPPING_OUTPUT_PRIMITIVES",
    // Framebuffers and renderbuffers.
    "FRAMEBUFFER",
    "DRAW_FRAMEBUFFER",
    "READ_FRAMEBUFFER",
    "DRAW_FRAMEBUFFER_BINDING",
    "READ_FRAMEBUFFER_BINDING",
    "FRAMEBUFFER_COMPLETE",
    "RENDERBUFFER",
    "RENDERBUFFER_BINDING",
    "COLOR_ATTACHMENT0",
    "COLOR_ATTACHMENT1",
    "STENCIL_ATTACHMENT",
    "STENCIL_INDEX8",
    "RGBA8",
    "R32F",
    "STENCIL",
    "COLOR",
    "READ_BUFFER",
    "DRAW_BUFFER0",
    "FRONT",
    "BACK",
    "FRONT_AND_BACK",
    // Fixed-function state.
    "VIEWPORT",
    "SCISSOR_BOX",
    "SCISSOR_TEST",
    "STENCIL_TEST",
    "BLEND",
    "CULL_FACE",
    "RASTERIZER_DISCARD",
    "POLYGON_MODE",
    "FILL",
    "STENCIL_FUNC",
    "STENCIL_VALUE_MASK",
    "STENCIL_FAIL",
    "STENCIL_PASS_DEPTH_FAIL",
    "STENCIL_PASS_DEPTH_PASS",
    "STENCIL_REF",
    "STENCIL_WRITEMASK",
    "STENCIL_BACK_FUNC",
    "STENCIL_BACK_FAIL",
    "STENCIL_BACK_PASS_DEPTH_FAIL",
    "STENCIL_BACK_PASS_DEPTH_PASS",
    "STENCIL_BACK_REF",
    "STENCIL_BACK_VALUE_MASK",
    "STENCIL_BACK_WRITEMASK",
    "ALWAYS",
    "EQUAL",
    "KEEP",
    "INCR",
    "COLOR_WRITEMASK",
    "BLEND_SRC_RGB",
    "BLEND_DST_RGB",
    "BLEND_SRC_ALPHA",
    "BLEND_DST_ALPHA",
    "BLEND_EQUATION_RGB",
    "BLEND_EQUATION_ALPHA",
    "ONE",
    "FUNC_ADD",
    // Pixel transfer.
    "PIXEL_PACK_BUFFER",
    "PIXEL_PACK_BUFFER_BINDING",
    "PACK_ALIGNMENT",
    "PACK_ROW_LENGTH",
    "PACK_SKIP_ROWS",
    "PACK_SKIP_PIXELS",
    "RED",
    "RGBA",
    "UNSIGNED_BYTE",
    // Programs and shaders.
    "CURRENT_PROGRAM",
    "VERTEX_ARRAY_BINDING",
    // The bindings the agent snapshots at a capture's start.
    "ARRAY_BUFFER_BINDING",
    "ELEMENT_ARRAY_BUFFER_BINDING",
    "PROGRAM_PIPELINE_BINDING",
    "DELETE_STATUS",
    "LINK_STATUS",
    "COMPILE_STATUS",
    "INFO_LOG_LENGTH",
    "ATTACHED_SHADERS",
    "ACTIVE_UNIFORMS",
    "ACTIVE_ATTRIBUTES",
    "SHADER_TYPE",
    "SHADER_SOURCE_LENGTH",
    "ACTIVE_UNIFORM_BLOCKS",
    "UNIFORM_BLOCK_INDEX",
    "UNIFORM_BLOCK_BINDING",
    "INVALID_INDEX",
    "VERTEX_SHADER",
    "FRAGMENT_SHADER",
    "GEOMETRY_SHADER",
    "TESS_EVALUATION_SHADER",
    "TESS_CONTROL_SHADER",
    "COMPUTE_SHADER",
    "UNIFORM",
    "SHADER_STORAGE_BLOCK",
    "ACTIVE_RESOURCES",
    "REFERENCED_BY_VERTEX_SHADER",
    "ACTIVE_SUBROUTINE_UNIFORM_LOCATIONS",
    // Transform feedback and buffers.
    "TRANSFORM_FEEDBACK",
    "TRANSFORM_FEEDBACK_ACTIVE",
    "TRANSFORM_FEEDBACK_BINDING",
    "TRANSFORM_FEEDBACK_BUFFER",
    "TRANSFORM_FEEDBACK_BUFFER_BINDING",
    "INTERLEAVED_ATTRIBS",
    "STREAM_READ",
    "MAP_READ_BIT",
    // Draw modes.
    "POINTS",
    "LINES",
    "LINE_LOOP",
    "LINE_STRIP",
    "TRIANGLES",
    "TRIANGLE_STRIP",
    "TRIANGLE_FAN",
    "QUADS",
    "QUAD_STRIP",
    "POLYGON",
    "LINES_ADJACENCY",
    "LINE_STRIP_ADJACENCY",
    "TRIANGLES_ADJACENCY",
    "TRIANGLE_STRIP_ADJACENCY",
    "PATCHES",
    // Uniform types.
    "FLOAT",
    "FLOAT_VEC2",
    "FLOAT_VEC3",
    "FLOAT_VEC4",
    "INT",
    "INT_VEC2",
    "INT_VEC3",
    "INT_VEC4",
    "BOOL",
    "BOOL_VEC2",
    "BOOL_VEC3",
    "BOOL_VEC4",
    "UNSIGNED_INT",
    "UNSIGNED_INT_VEC2",
    "UNSIGNED_INT_VEC3",
    "UNSIGNED_INT_VEC4",
    "FLOAT_MAT2",
    "FLOAT_MAT3",
    "FLOAT_MAT4",
    "FLOAT_MAT2x3",
    "FLOAT_MAT2x4",
    "FLOAT_MAT3x2",
    "FLOAT_MAT3x4",
    "FLOAT_MAT4x2",
    "FLOAT_MAT4x3",
    "SAMPLER_1D",
    "SAMPLER_2D_RECT_SHADOW",
    "SAMPLER_1D_ARRAY",
    "SAMPLER_CUBE_SHADOW",
    "INT_SAMPLER_1D",
    "UNSIGNED_INT_SAMPLER_BUFFER",
    "SAMPLER_EXTERNAL_OES",
    "SAMPLER_CUBE_MAP_ARRAY",
    "UNSIGNED_INT_SAMPLER_CUBE_MAP_ARRAY",
    "SAMPLER_2D_MULTISAMPLE",
    "UNSIGNED_INT_SAMPLER_2D_MULTISAMPLE_ARRAY",
    "IMAGE_1D",
    "UNSIGNED_INT_IMAGE_2D_MULTISAMPLE_ARRAY",
    "UNSIGNED_INT_ATOMIC_COUNTER",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let reg = Registry::load().expect("Khronos registry");
    let mut out = String::new();
    for &name in NAMES {
        let full = format!("GL_{name}");
        let mut values = reg.enums.iter().filter(|e| e.name == full).map(|e| e.value);
        let value = values
            .next()
            .unwrap_or_else(|| panic!("the Khronos registry has no {full}"));
        if let Some(other) = values.find(|&v| v != value) {
            panic!("the Khronos registry gives {full} two values: 0x{value:X} and 0x{other:X}");
        }
        let value = u32::try_from(value)
            .unwrap_or_else(|_| panic!("{full} = 0x{value:X} does not fit a GLenum"));
        // Rust names are upper case: `GL_FLOAT_MAT2x3` is `FLOAT_MAT2X3`.
        let rust = name.to_ascii_uppercase();
        writeln!(
            out,
            "/// `{full}`.\npub const {rust}: GLenum = 0x{value:04X};"
        )
        .unwrap();
    }
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("enums.rs");
    std::fs::write(dest, out).unwrap();
}
