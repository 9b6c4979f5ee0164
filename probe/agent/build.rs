//! Generates one wrapper per entry point of gl.xml, egl.xml and glx.xml (GL 1.0–4.6,
//! GLES 1.1–3.2, EGL, GLX and all their extensions) and of the OpenVG 1.1 table
//! (`probe/registry/openvg.xml`: openvg.h and vgu.h), plus the tables the runtime and the
//! session need. Nothing is written by hand per function: behaviour differences come from the
//! `class` and `role` computed here from the name. The few EGL, GLX and VG enum values the
//! agent's own code needs are generated here too ([`ENUMS`]), so none is typed by hand.

use gpuheat_registry::{CType, Command, Registry};
use std::fmt::Write as _;

/// Most parameters any entry point has (vguComputeWarpQuadToQuad has 17, glCopyImageSubData
/// 15).
const MAX_ARGS: usize = 17;

/// Calls that make the GPU work without a name saying so. GL 1.x display lists run their
/// draws inside `glCallList(s)`; the agent brackets them only where that is legal (not
/// between `glBegin` and `glEnd`, not while a list is being compiled: see the `primitive_*`
/// and `list_*` roles).
const WORK_CALLS: [&str; 2] = ["glCallList", "glCallLists"];

/// The OpenVG calls that make the VG pipeline work: drawing, clearing, pixel copies and
/// transfers, masks and image filters. In full mode each is timed between two `vgFinish`.
const VG_WORK_CALLS: [&str; 22] = [
    "vgClear",
    "vgDrawPath",
    "vgDrawImage",
    "vgDrawGlyph",
    "vgDrawGlyphs",
    "vgClearImage",
    "vgCopyImage",
    "vgSetPixels",
    "vgWritePixels",
    "vgGetPixels",
    "vgReadPixels",
    "vgCopyPixels",
    "vgMask",
    "vgRenderToMask",
    "vgFillMaskLayer",
    "vgCopyMask",
    "vgColorMatrix",
    "vgConvolve",
    "vgSeparableConvolve",
    "vgGaussianBlur",
    "vgLookup",
    "vgLookupSingle",
];

/// Calls that may wait (for the GPU, a fence, a read-back) while the program's thread is
/// not running: for them, as for work calls and swaps, thread CPU time and wall time differ,
/// so the wrappers read the thread's CPU clock (a system call) around them. Around any
/// other call the thread runs the whole time: its CPU time is its wall time.
const WAITING_CALLS: [&str; 16] = [
    "glFinish",
    "glFlush",
    "glReadPixels",
    "glReadnPixels",
    "glGetTexImage",
    "glGetBufferSubData",
    "glClientWaitSync",
    "glWaitSync",
    "glGetQueryObjectuiv",
    "glGetQueryObjectui64v",
    "glMapBufferRange",
    "eglClientWaitSync",
    "eglWaitGL",
    "eglWaitClient",
    "vgFinish",
    "vgFlush",
];

/// The OpenVG calls that change a path's data or capabilities: the agent keeps each path's
/// data from its creation on (programs build paths once and draw them every frame), so they
/// run a hook even outside captured frames.
const VG_PATH_CALLS: [&str; 15] = [
    "vgCreatePath",
    "vgClearPath",
    "vgDestroyPath",
    "vgAppendPathData",
    "vgModifyPathCoords",
    "vgAppendPath",
    "vgTransformPath",
    "vgInterpolatePath",
    "vgRemovePathCapabilities",
    "vguLine",
    "vguPolygon",
    "vguRect",
    "vguRoundRect",
    "vguEllipse",
    "vguArc",
];

/// The EGL, GLX, OpenVG and VGU enums the agent's own code uses (the wrappers pass every
/// value through and need none), generated into `crate::enums` with their registry values, by
/// the Rust type the code uses them as: `EGLint`, `int` and `VGint` parameters are `i32`; path
/// capabilities, image formats and VGU values `u32`; path segments the `u8`s of a `VGubyte`
/// segment array. A name the registries do not know, know with two values, or give a value
/// its type cannot hold fails the build.
const ENUMS: &[(&str, &[&str])] = &[
    (
        "i32",
        &[
            // The drawable's size (contexts.rs).
            "EGL_DRAW",
            "EGL_WIDTH",
            "EGL_HEIGHT",
            "GLX_WIDTH",
            "GLX_HEIGHT",
            // The VG state a draw is recorded with (vg.rs).
            "VG_MATRIX_MODE",
            "VG_MATRIX_PATH_USER_TO_SURFACE",
            "VG_MATRIX_IMAGE_USER_TO_SURFACE",
            "VG_FILL_RULE",
            "VG_SCISSORING",
            "VG_SCISSOR_RECTS",
            "VG_STROKE_LINE_WIDTH",
            "VG_STROKE_CAP_STYLE",
            "VG_STROKE_JOIN_STYLE",
            "VG_STROKE_MITER_LIMIT",
            "VG_STROKE_DASH_PATTERN",
            "VG_STROKE_DASH_PHASE",
            "VG_IMAGE_FORMAT",
            "VG_IMAGE_WIDTH",
            "VG_IMAGE_HEIGHT",
        ],
    ),
    (
        "u32",
        &[
            // Path capabilities (vgpaths.rs, vg.rs).
            "VG_PATH_CAPABILITY_APPEND_FROM",
            "VG_PATH_CAPABILITY_APPEND_TO",
            "VG_PATH_CAPABILITY_MODIFY",
            "VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS",
            "VG_PATH_CAPABILITY_ALL",
            // vguArc's arc types, and VGU's first error code.
            "VGU_ARC_OPEN",
            "VGU_ARC_CHORD",
            "VGU_ARC_PIE",
            "VGU_BAD_HANDLE_ERROR",
            // Image formats whose pixel size uploads are hashed with (vg.rs).
            "VG_sRGBX_8888",
            "VG_sRGBA_8888",
            "VG_sRGBA_8888_PRE",
            "VG_sRGB_565",
            "VG_sRGBA_5551",
            "VG_sRGBA_4444",
            "VG_sL_8",
            "VG_lRGBX_8888",
            "VG_lRGBA_8888",
            "VG_lRGBA_8888_PRE",
            "VG_lL_8",
            "VG_A_8",
            "VG_BW_1",
            "VG_A_1",
            "VG_A_4",
        ],
    ),
    (
        "u8",
        &[
            // Path segment commands, absolute (vgpaths.rs; `| 1` makes one relative).
            "VG_CLOSE_PATH",
            "VG_MOVE_TO",
            "VG_LINE_TO",
            "VG_HLINE_TO",
            "VG_VLINE_TO",
            "VG_SCCWARC_TO",
            "VG_SCWARC_TO",
        ],
    ),
];

/// `crate::enums`: one `pub const` per name of [`ENUMS`], upper case (`VG_sRGBX_8888` is
/// `VG_SRGBX_8888`), with its value from `regs`.
fn enums(regs: &[&Registry]) -> String {
    let mut out = String::new();
    for &(ty, names) in ENUMS {
        let max: u64 = match ty {
            "i32" => i32::MAX as u64,
            "u32" => u32::MAX.into(),
            "u8" => u8::MAX.into(),
            _ => panic!("ENUMS: no range known for {ty}"),
        };
        for &name in names {
            let mut values = regs
                .iter()
                .flat_map(|r| &r.enums)
                .filter(|e| e.name == name)
                .map(|e| e.value);
            let value = values
                .next()
                .unwrap_or_else(|| panic!("the registries have no {name}"));
            if let Some(other) = values.find(|&v| v != value) {
                panic!("the registries give {name} two values: 0x{value:X} and 0x{other:X}");
            }
            assert!(value <= max, "{name} = 0x{value:X} does not fit {ty}");
            writeln!(
                out,
                "/// `{name}`.\npub const {}: {ty} = 0x{value:04X};",
                name.to_ascii_uppercase()
            )
            .unwrap();
        }
    }
    out
}

fn class(name: &str) -> &'static str {
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
    if matches!(
        name,
        "eglSwapBuffers"
            | "eglSwapBuffersWithDamageKHR"
            | "eglSwapBuffersWithDamageEXT"
            | "eglSwapBuffersRegionNOK"
            | "eglSwapBuffersRegion2NOK"
            | "glXSwapBuffers"
    ) {
        "Swap"
    } else if VG_WORK_CALLS.contains(&name) {
        "Work"
    } else if any(&["glDrawBuffer"]) {
        "State"
    } else if any(&["glDrawPixels"]) || WORK_CALLS.contains(&name) {
        "Work"
    } else if any(&["glDraw", "glMultiDraw", "glRect"]) || name == "glEnd" {
        // glRect* draws a rectangle; glEnd ends a block of immediate mode, the draw the
        // agent brackets from its glBegin on (`hook::immediate_begin`).
        "Draw"
    } else if name == "glClear"
        || any(&[
            "glClearBuffer",
            "glClearNamedFramebuffer",
            "glClearNamedBuffer",
            "glClearTex",
            "glBlitFramebuffer",
            "glBlitNamedFramebuffer",
            "glDispatchCompute",
            "glCopyTex",
            "glCopyImageSubData",
            "glCopyMultiTex",
            "glGenerateMipmap",
            "glGenerateTextureMipmap",
            "glGenerateMultiTexMipmap",
        ])
    {
        "Work"
    } else {
        "State"
    }
}

/// Whether entry point `c` is plain: recorded and nothing more. No hook, no counters, no
/// upload to hash, no thread CPU time (it never waits), not OpenVG (whose calls are
/// translated), not glUseProgram (the agent notes the programs a frame uses), and nothing
/// refers to its place in the frame, so the recorder numbers it lazily.
fn plain(c: &Command) -> bool {
    role(c).is_none()
        && class(&c.name) == "State"
        && !WAITING_CALLS.contains(&c.name.as_str())
        && !c.name.starts_with("vg")
        && upload_spec(c).is_none()
        && !matches!(c.name.as_str(), "glUseProgram" | "glUseProgramObjectARB")
}

/// Runtime behaviour beyond recording, with the index of the parameter it needs.
fn role(cmd: &Command) -> Option<(&'static str, usize)> {
    let n = cmd.params.len();
    match cmd.name.as_str() {
        "eglGetProcAddress" | "glXGetProcAddress" | "glXGetProcAddressARB" => {
            Some(("proc_address", 0))
        }
        "eglMakeCurrent" | "glXMakeCurrent" | "glXMakeContextCurrent" | "glXMakeCurrentReadSGI" => {
            Some(("made_current", n - 1))
        }
        "glBeginQuery" | "glBeginQueryARB" | "glBeginQueryEXT" | "glBeginQueryIndexed" => {
            Some(("query_began", 0))
        }
        "glEndQuery" | "glEndQueryARB" | "glEndQueryEXT" | "glEndQueryIndexed" => {
            Some(("query_ended", 0))
        }
        // GL_GPU_DISJOINT_EXT clears when read: the program's reads must see our reads' events.
        "glGetIntegerv" | "glGetInteger64v" | "glGetInteger64vEXT" | "glGetBooleanv" => {
            Some(("got_value", 0))
        }
        // Geometry capture rebuilds its shadow program after a relink, and reads the
        // shaders' sources at the link, while they are still attached.
        "glLinkProgram" | "glLinkProgramARB" | "glProgramBinary" | "glProgramBinaryOES" => {
            Some(("program_linked", 0))
        }
        "glDeleteProgram" | "glDeleteObjectARB" => Some(("program_deleted", 0)),
        // Whether the program ever asks which GL it runs on; only these wrappers look.
        "glGetString" => Some(("string_queried", 0)),
        "glGetStringi" => Some(("stringi_queried", 0)),
        // Where bracketing a call with queries would be an error or measure nothing.
        "glBegin" => Some(("primitive_began", 0)),
        "glEnd" => Some(("primitive_ended", 0)),
        "glNewList" => Some(("list_began", 0)),
        "glEndList" => Some(("list_ended", 0)),
        // What a display list generates, remembered by geometry, is forgotten.
        "glDeleteLists" => Some(("lists_deleted", 0)),
        name if VG_PATH_CALLS.contains(&name) => Some(("vg_path", 0)),
        _ => None,
    }
}

/// The work calls without fragments of their own whose time the heat map spreads over what
/// they write (`hook::Spread`'s variant), by name: the bound-object calls with their
/// extension aliases, the direct-state-access ones (GL 4.5, which name their objects in
/// their arguments) by their core names; 1D copies are left to the frame's not-placed work.
fn spread_kind(name: &str) -> Option<&'static str> {
    let is = |base: &str| {
        name.strip_prefix(base)
            .is_some_and(|suffix| ["", "EXT", "OES", "NV", "ARB"].contains(&suffix))
    };
    if name.starts_with("glDispatchCompute") {
        Some("Dispatch")
    } else if name.starts_with("glBlitFramebuffer") {
        Some("Blit")
    } else if name == "glBlitNamedFramebuffer" {
        Some("BlitNamed")
    } else if name == "glCopyTextureSubImage2D" {
        Some("CopyTextureSubImage2D")
    } else if name == "glCopyTextureSubImage3D" {
        Some("CopyTextureSubImage3D")
    } else if is("glCopyTexImage2D") {
        Some("CopyTexImage2D")
    } else if is("glCopyTexSubImage2D") {
        Some("CopyTexSubImage2D")
    } else if is("glCopyTexSubImage3D") {
        Some("CopyTexSubImage3D")
    } else if is("glCopyImageSubData") {
        Some("CopyImageSubData")
    } else {
        None
    }
}

/// The upload entry points (calls that copy the program's memory into a texture or buffer)
/// and where their size and data arguments are, as a `crate::uploads::Spec` expression:
/// decided here once per entry point, from the name and the registry's parameter names, so
/// no wrapper but these pays anything for uploads.
fn upload_spec(cmd: &Command) -> Option<String> {
    let name = cmd.name.as_str();
    let base = ["EXT", "OES", "ARB"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name);
    let param = |n: &str| cmd.params.iter().position(|p| p.name == n);
    let idx = |i: Option<usize>| i.map_or("crate::uploads::NONE".to_string(), |i| i.to_string());
    let data = param("pixels")
        .or_else(|| param("data"))
        .or_else(|| param("bits"));
    let dims = |rest: &str| -> Option<u8> {
        match rest {
            "Image1D" | "SubImage1D" => Some(1),
            "Image2D" | "SubImage2D" => Some(2),
            "Image3D" | "SubImage3D" => Some(3),
            _ => None,
        }
    };
    let texture = |prefix: &str| {
        ["Tex", "Texture", "MultiTex"]
            .iter()
            .find_map(|t| base.strip_prefix(prefix)?.strip_prefix(t).and_then(dims))
    };
    if let Some(d) = texture("gl") {
        let (w, f, t) = (param("width")?, param("format")?, param("type")?);
        let h = if d >= 2 { Some(param("height")?) } else { None };
        let z = if d >= 3 { Some(param("depth")?) } else { None };
        return Some(format!(
            "crate::uploads::Spec::Pixels {{ dims: {d}, width: {w}, height: {}, depth: {}, format: {f}, ty: {t}, data: {} }}",
            idx(h),
            idx(z),
            data?
        ));
    }
    if texture("glCompressed").is_some() {
        return Some(format!(
            "crate::uploads::Spec::Compressed {{ size: {}, data: {} }}",
            param("imageSize")?,
            data?
        ));
    }
    let buffer = ["glBuffer", "glNamedBuffer"]
        .iter()
        .any(|p| matches!(base.strip_prefix(p), Some("Data" | "SubData" | "Storage")));
    if buffer {
        return Some(format!(
            "crate::uploads::Spec::Buffer {{ size: {}, data: {} }}",
            param("size")?,
            data?
        ));
    }
    None
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The agent's references to its own exported wrappers (wrapper_address) must resolve to
    // the wrappers even when it is dlopen'ed after libEGL/libGL, not to the first definition
    // in the global scope.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    let reg = Registry::load().expect("Khronos registry");
    let vg = Registry::load_vg().expect("OpenVG table");
    // Sorted by name across both: the runtime binary-searches the names.
    let mut cmds: Vec<&Command> = reg
        .commands
        .iter()
        .chain(&vg.commands)
        .filter(|c| c.params.len() <= MAX_ARGS)
        .collect();
    cmds.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = String::new();
    let n = cmds.len();
    writeln!(
        out,
        "/// Number of wrapped entry points.\npub const FUNCTION_COUNT: usize = {n};"
    )
    .unwrap();
    writeln!(
        out,
        "/// Most arguments of any wrapped entry point.\npub const MAX_ARGS: usize = {MAX_ARGS};"
    )
    .unwrap();

    // Names, nul-terminated for dlsym, sorted so lookups can binary-search.
    out.push_str("/// Entry point names, sorted, each ending in a NUL byte.\npub static NAMES: [&str; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        writeln!(out, "    \"{}\\0\",", c.name).unwrap();
    }
    out.push_str("];\n");
    out.push_str("/// What each entry point does for the capture.\npub static CLASSES: [CallClass; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        writeln!(out, "    CallClass::{},", class(&c.name)).unwrap();
    }
    out.push_str("];\n");
    out.push_str("/// Whether the thread's CPU time is read around each entry point (work calls, swaps,\n/// calls that may wait); around the others it equals the call's wall time.\npub static CPU: [bool; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        let measured = class(&c.name) != "State" || WAITING_CALLS.contains(&c.name.as_str());
        writeln!(out, "    {measured},").unwrap();
    }
    out.push_str("];\n");
    out.push_str("/// Whether each entry point is plain: recorded and nothing more, by `hook::plain`.\npub static PLAIN: [bool; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        writeln!(out, "    {},", plain(c)).unwrap();
    }
    out.push_str("];\n");
    out.push_str("/// Whether each entry point belongs to OpenVG or VGU.\npub static VG: [bool; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        writeln!(out, "    {},", c.name.starts_with("vg")).unwrap();
    }
    out.push_str("];\n");
    out.push_str("/// Whether the heat map spreads each entry point's time over what it writes\n/// (`hook::leave_spread`): a dispatch, a blit, a copy.\npub static SPREADS: [bool; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        writeln!(out, "    {},", spread_kind(&c.name).is_some()).unwrap();
    }
    out.push_str("];\n");
    out.push_str("/// What each entry point's bracket may ask for (`gpuheat_counters::stages`): a draw, a\n/// compute dispatch, or other work (and calls that are no work).\npub static KINDS: [CallKind; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        let kind = if class(&c.name) == "Draw" {
            "Draw"
        } else if spread_kind(&c.name) == Some("Dispatch") {
            "Dispatch"
        } else {
            "Other"
        };
        writeln!(out, "    CallKind::{kind},").unwrap();
    }
    out.push_str("];\n");

    // Parameter descriptions for the session's function table.
    out.push_str("/// Parameters of each entry point: (name, C type, kind, len, group).\npub static PARAMS: [&[ParamDesc]; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        out.push_str("    &[");
        for p in &c.params {
            write!(
                out,
                "({:?}, {:?}, ValueKind::{}, {:?}, {:?}), ",
                p.name,
                p.c_type,
                p.ty.value_kind(),
                p.len,
                p.group
            )
            .unwrap();
        }
        out.push_str("],\n");
    }
    out.push_str("];\n");
    out.push_str("/// Return kind of each entry point (None for void).\npub static RETURNS: [Option<ValueKind>; FUNCTION_COUNT] = [\n");
    for c in &cmds {
        if c.ret == CType::Void {
            out.push_str("    None,\n");
        } else {
            writeln!(out, "    Some(ValueKind::{}),", c.ret.value_kind()).unwrap();
        }
    }
    out.push_str("];\n");

    // The address of each wrapper, for GetProcAddress substitution.
    out.push_str("/// Address of the wrapper of entry point `i`.\npub fn wrapper_address(i: usize) -> usize {\n    match i {\n");
    for (i, c) in cmds.iter().enumerate() {
        writeln!(
            out,
            "        {i} => wrappers::{} as *const () as usize,",
            c.name
        )
        .unwrap();
    }
    out.push_str("        _ => 0,\n    }\n}\n");

    out.push_str(WRAPPERS_DOC);
    out.push_str("#[allow(non_snake_case, unused_parens, clippy::missing_safety_doc, clippy::too_many_arguments, clippy::unnecessary_cast, clippy::useless_transmute, unused_unsafe)]\npub mod wrappers {\n    use crate::hook;\n");
    for (i, c) in cmds.iter().enumerate() {
        wrapper(&mut out, i, c);
    }
    out.push_str("}\n");

    let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(dir.join("generated.rs"), out).unwrap();
    println!("cargo:rerun-if-env-changed=GPUHEAT_VK_XML");
    println!(
        "cargo:rerun-if-changed={}",
        Registry::vk_xml_path().display()
    );
    let vk = Registry::load_vk().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("vk_generated.rs"), vulkan(&vk, n)).unwrap();
    std::fs::write(dir.join("enums.rs"), enums(&[&reg, &vg])).unwrap();
}

/// The generated module's documentation, with the one safety argument every wrapper's
/// `unsafe` block refers to.
const WRAPPERS_DOC: &str = "\
/// The exported wrappers, one per entry point.
///
/// # Safety invariant (every wrapper's `unsafe` block rests on it)
///
/// Wrapper `i` has exactly the C signature gl.xml/egl.xml/glx.xml give entry point `i`, so
/// the program calls it as it would call the real function, with the same contract.
/// `hook::real(i)` is the real implementation of that same entry point (the table of real
/// functions never holds an address inside the agent), or the agent's `missing` stub, which
/// takes no argument and returns 0 (only reached when no loaded library provides the entry
/// point, where the program's own call would not have been valid either). Transmuting it to
/// the entry point's signature and calling it with the caller's arguments, unchanged,
/// therefore keeps the caller's contract. The `hook::*` calls around it read the arguments
/// as plain integers and never dereference them, except the documented roles (`got_value`
/// reads the value the real call just wrote where the program asked it to).
";

/// A wrapper's signature as the generated code spells it: parameters `a0..`, their Rust
/// types, each as the u64 recorded for it, and the return type and its recorded form.
struct Signature {
    /// `a0: u32`, …
    params: Vec<String>,
    /// `u32`, …
    types: Vec<&'static str>,
    /// `a0`, …
    args: Vec<String>,
    /// `(a0 as u64)`, …
    recorded: Vec<String>,
    ret: &'static str,
    /// `None`, or `Some(...)` of `r`, the call's result.
    ret_u64: String,
}

fn signature(c: &Command) -> Signature {
    let arg = |k: usize| format!("a{k}");
    Signature {
        params: c
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| format!("{}: {}", arg(k), p.ty.rust()))
            .collect(),
        types: c.params.iter().map(|p| p.ty.rust()).collect(),
        args: (0..c.params.len()).map(arg).collect(),
        recorded: c
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| p.ty.to_u64(&arg(k)))
            .collect(),
        ret: c.ret.rust(),
        ret_u64: if c.ret == CType::Void {
            "None".to_string()
        } else {
            format!("Some({})", c.ret.to_u64("r"))
        },
    }
}

fn wrapper(out: &mut String, i: usize, c: &Command) {
    let Signature {
        params,
        types,
        args,
        recorded,
        ret,
        ret_u64,
    } = signature(c);
    let call = format!("real({})", args.join(", "));
    writeln!(
        out,
        "    /// `{}`: recorded while capturing, then forwarded to the real function.\n    #[no_mangle]\n    pub unsafe extern \"C\" fn {}({}) -> {ret} {{\n        // SAFETY: the module's safety invariant.\n        unsafe {{",
        c.name,
        c.name,
        params.join(", ")
    )
    .unwrap();
    writeln!(
        out,
        "        let real: unsafe extern \"C\" fn({}) -> {ret} = ::core::mem::transmute(hook::real({i}));",
        types.join(", ")
    )
    .unwrap();
    match role(c) {
        None if plain(c) => {
            // Nothing before the real call but a clock stamp; the record is written after it.
            writeln!(out, "        if !hook::recording() {{ return {call}; }}").unwrap();
            writeln!(out, "        let site = crate::callsite::caller!();").unwrap();
            writeln!(out, "        let begin = hook::stamp();").unwrap();
            writeln!(out, "        let r = {call};").unwrap();
            writeln!(
                out,
                "        hook::plain({i}, site, begin, &[{}], {ret_u64});\n        r",
                recorded.join(", ")
            )
            .unwrap();
        }
        None if class(&c.name) != "Swap" => {
            writeln!(out, "        if !hook::recording() {{ return {call}; }}").unwrap();
            writeln!(out, "        let site = crate::callsite::caller!();").unwrap();
            writeln!(
                out,
                "        let args: [u64; {}] = [{}];",
                recorded.len(),
                recorded.join(", ")
            )
            .unwrap();
            if WORK_CALLS.contains(&c.name.as_str()) {
                // A display list may move the matrices for good: its replays start from
                // those its call started from, read before the call's time begins.
                writeln!(out, "        let start = hook::list_start();").unwrap();
            }
            writeln!(out, "        let g = hook::enter({i}, site, &args);").unwrap();
            writeln!(out, "        let r = {call};").unwrap();
            if WORK_CALLS.contains(&c.name.as_str()) {
                writeln!(
                    out,
                    "        hook::leave_list(g, &args, start, &|| {call});\n        r"
                )
                .unwrap();
            } else if class(&c.name) == "Draw" && c.ret == CType::Void {
                // The heat map replays the draw, with the same arguments, into its counter;
                // geometry capture replays it under transform feedback (display lists, above,
                // too: counters' geometry/lists.rs learns their vertex count by running
                // them).
                writeln!(
                    out,
                    "        hook::leave_draw(g, &args, &|| {call});\n        r"
                )
                .unwrap();
            } else if let Some(kind) = spread_kind(&c.name) {
                // The heat map spreads its time over what it writes: the images a dispatch
                // stores to, a blit's destination rectangle, a copy's destination texels.
                writeln!(
                    out,
                    "        hook::leave_spread(g, &args, hook::Spread::{kind});\n        r"
                )
                .unwrap();
            } else if let Some(spec) = upload_spec(c).filter(|_| c.ret == CType::Void) {
                // Its size and content hash, after the call is recorded.
                writeln!(
                    out,
                    "        hook::leave_upload(g, &args, &{spec});\n        r"
                )
                .unwrap();
            } else {
                writeln!(out, "        hook::leave(g, &args, {ret_u64});\n        r").unwrap();
            }
        }
        role => {
            // Swaps and the calls the runtime must see even outside captured frames.
            writeln!(out, "        let site = crate::callsite::caller!();").unwrap();
            writeln!(
                out,
                "        let args: [u64; {}] = [{}];",
                recorded.len(),
                recorded.join(", ")
            )
            .unwrap();
            writeln!(
                out,
                "        let {}g = hook::enter_if_recording({i}, site, &args);",
                if c.name == "glBegin" { "mut " } else { "" }
            )
            .unwrap();
            if c.name == "glBegin" {
                // The block's bracket (and its recording) opens before the real glBegin.
                writeln!(out, "        hook::immediate_begin(&mut g, &args);").unwrap();
            }
            if class(&c.name) == "Swap" {
                // The frame's heat map is read back with its colour buffer, before the swap.
                writeln!(out, "        hook::before_swap();").unwrap();
            }
            if matches!(role, Some(("made_current", _))) {
                // The context being left is still current: its offscreen maps are read now.
                writeln!(out, "        hook::before_make_current();").unwrap();
            }
            writeln!(out, "        let r = {call};").unwrap();
            match role {
                Some(("proc_address", k)) => {
                    writeln!(out, "        let r = hook::proc_address(a{k}, r, site);").unwrap()
                }
                Some(("vg_path", _)) => {
                    // The path store reads every argument, and the result (the new handle,
                    // VGU's error code).
                    let ret = if c.ret == CType::Void {
                        "0".to_string()
                    } else {
                        c.ret.to_u64("r")
                    };
                    writeln!(out, "        hook::vg_path({i}, &args, {ret});").unwrap()
                }
                Some(("got_value", _)) => {
                    let width = match c.params[1].c_type.as_str() {
                        "GLint64 *" | "GLint64EXT *" => 8,
                        "GLboolean *" => 1,
                        _ => 4,
                    };
                    writeln!(out, "        hook::got_value(a0, a1, {width});").unwrap()
                }
                Some((name, k)) => {
                    let arg = if k < c.params.len() {
                        format!("a{k} as u64")
                    } else {
                        "0".to_string()
                    };
                    let ok = if c.ret == CType::Void {
                        "1"
                    } else {
                        "r as u64"
                    };
                    writeln!(out, "        hook::{name}({arg}, {ok});").unwrap()
                }
                None => {}
            }
            if c.name == "glEnd" {
                writeln!(out, "        hook::leave_immediate(g, &args);").unwrap();
            } else {
                writeln!(
                    out,
                    "        if let Some(g) = g {{ hook::leave(g, &args, {ret_u64}); }}"
                )
                .unwrap();
            }
            if class(&c.name) == "Swap" {
                let ok = if c.ret == CType::Void {
                    "1"
                } else {
                    "r as u64"
                };
                writeln!(out, "        hook::swapped({ok});").unwrap();
            }
            writeln!(out, "        r").unwrap();
        }
    }
    out.push_str("        }\n    }\n");
}

/// The dispatchable handle types: a command whose first parameter is one of these is
/// dispatched through the table of the instance (`0`) or device (`1`) that handle belongs to.
const VK_DISPATCH: [(&str, u8); 5] = [
    ("VkInstance", 0),
    ("VkPhysicalDevice", 0),
    ("VkDevice", 1),
    ("VkQueue", 1),
    ("VkCommandBuffer", 1),
];

/// What a Vulkan command does for the capture, as the GL classes say it: command-buffer
/// draws are draws; dispatches, copies, blits, clears, resolves and ray tracing are other
/// work; a present ends a frame.
fn vk_class(name: &str) -> &'static str {
    let any = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
    if name == "vkQueuePresentKHR" {
        "Swap"
    } else if any(&["vkCmdDraw"]) {
        "Draw"
    } else if any(&[
        "vkCmdDispatch",
        "vkCmdCopy",
        "vkCmdBlit",
        "vkCmdClear",
        "vkCmdResolve",
        "vkCmdFillBuffer",
        "vkCmdUpdateBuffer",
        "vkCmdTraceRays",
    ]) {
        "Work"
    } else {
        "State"
    }
}

/// What the layer does with a Vulkan command beyond recording it (`crate::vk::track::Role`):
/// the command-buffer work it times, the begin that gives a recording its timestamp pool, the
/// submits after which its times can be read.
fn vk_role(name: &str) -> &'static str {
    match name {
        "vkBeginCommandBuffer" => "Begin",
        "vkCmdExecuteCommands" => "Execute",
        "vkQueueSubmit" => "Submit",
        "vkQueueSubmit2" | "vkQueueSubmit2KHR" => "Submit2",
        "vkCreateRenderPass" => "RenderPass",
        "vkCreateRenderPass2" | "vkCreateRenderPass2KHR" => "RenderPass2",
        "vkDestroyRenderPass" => "DestroyRenderPass",
        "vkCmdBeginRenderPass" | "vkCmdBeginRenderPass2" | "vkCmdBeginRenderPass2KHR" => {
            "PassBegin"
        }
        "vkCmdBeginQuery" | "vkCmdBeginQueryIndexedEXT" => "QueryBegin",
        "vkCmdEndRenderPass"
        | "vkCmdEndRenderPass2"
        | "vkCmdEndRenderPass2KHR"
        | "vkCmdEndRendering"
        | "vkCmdEndRenderingKHR" => "PassEnd",
        "vkCmdBeginRendering" | "vkCmdBeginRenderingKHR" => "Rendering",
        "vkCmdEndQuery" | "vkCmdEndQueryIndexedEXT" => "QueryEnd",
        n if n.starts_with("vkCmd") && matches!(vk_class(n), "Draw" | "Work") => "Work",
        _ => "None",
    }
}

/// The roles whose hook runs outside captured frames too: the layer keeps every render pass
/// object from the program's start (a render pass is made once, long before any capture).
fn vk_role_always(role: &str) -> bool {
    matches!(role, "RenderPass" | "RenderPass2" | "DestroyRenderPass")
}

/// The hook a role runs after the call (`r`: its result), as a statement.
fn vk_role_hook(role: &str) -> Option<&'static str> {
    Some(match role {
        "Begin" => "track::began(a0 as u64, a1 as u64, r == 0);",
        "Execute" => "track::executed(a0 as u64, a1 as u64, a2 as u64);",
        "Submit" => "track::submit(a1 as u64, a2 as u64, r == 0, place);",
        "Submit2" => "track::submit2(a1 as u64, a2 as u64, r == 0, place);",
        "RenderPass" => "track::render_pass_created(a1 as u64, a3 as u64, r == 0, false);",
        "RenderPass2" => "track::render_pass_created(a1 as u64, a3 as u64, r == 0, true);",
        "DestroyRenderPass" => "track::render_pass_destroyed(a1 as u64);",
        "QueryBegin" => "track::app_query(a0 as u64, 1);",
        "PassEnd" => "track::in_pass(a0 as u64, false);",
        "Rendering" => "track::in_pass(a0 as u64, true);",
        "QueryEnd" => "track::app_query(a0 as u64, -1);",
        _ => return None,
    })
}

/// `vk_generated.rs`: the Vulkan layer's wrappers and tables. Command `j` of [`VK_NAMES`] is
/// entry point `first + j` of the session's function table (after every GL and VG one), so
/// the recorder, the writer and the session treat its calls as they treat GL's. Only commands
/// that take a dispatchable handle first are wrapped (the global ones, such as
/// `vkEnumerateInstanceVersion`, never reach a layer); a command with a type the registry
/// model does not know fails the build, as do too many parameters.
fn vulkan(reg: &Registry, first: usize) -> String {
    let bad: Vec<_> = reg
        .skipped
        .iter()
        .filter(|s| s.why != gpuheat_registry::vk::OTHER_PLATFORM)
        .collect();
    assert!(bad.is_empty(), "vk.xml commands of unknown types: {bad:?}");
    let cmds: Vec<(&Command, u8)> = reg
        .commands
        .iter()
        .filter_map(|c| {
            let base = c.params.first()?.c_type.as_str();
            let level = VK_DISPATCH.iter().find(|(t, _)| *t == base)?.1;
            assert!(
                c.params.len() <= MAX_ARGS,
                "{} has too many parameters",
                c.name
            );
            Some((c, level))
        })
        .collect();
    assert!(
        first + cmds.len() <= usize::from(u16::MAX),
        "function ids are u16"
    );
    let mut out = String::new();
    let n = cmds.len();
    writeln!(
        out,
        "/// Number of wrapped Vulkan commands.\npub const VK_COUNT: usize = {n};"
    )
    .unwrap();
    writeln!(
        out,
        "/// The function-table index of Vulkan command 0.\npub const VK_FIRST: usize = {first};"
    )
    .unwrap();
    out.push_str("/// Command names, sorted.\npub static VK_NAMES: [&str; VK_COUNT] = [\n");
    for (c, _) in &cmds {
        writeln!(out, "    {:?},", c.name).unwrap();
    }
    out.push_str("];\n/// Dispatch level of each command: 0 instance, 1 device.\npub static VK_LEVEL: [u8; VK_COUNT] = [\n");
    for (_, level) in &cmds {
        writeln!(out, "    {level},").unwrap();
    }
    out.push_str("];\n/// What the layer does with each command beyond recording it.\npub static VK_ROLES: [crate::vk::track::Role; VK_COUNT] = [\n");
    for (c, _) in &cmds {
        writeln!(out, "    crate::vk::track::Role::{},", vk_role(&c.name)).unwrap();
    }
    out.push_str("];\n/// What each command does for the capture.\npub static VK_CLASSES: [CallClass; VK_COUNT] = [\n");
    for (c, _) in &cmds {
        writeln!(out, "    CallClass::{},", vk_class(&c.name)).unwrap();
    }
    out.push_str("];\n/// Parameters of each command: (name, C type, kind, len, group).\npub static VK_PARAMS: [&[ParamDesc]; VK_COUNT] = [\n");
    for (c, _) in &cmds {
        out.push_str("    &[");
        for p in &c.params {
            write!(
                out,
                "({:?}, {:?}, ValueKind::{}, {:?}, None), ",
                p.name,
                p.c_type,
                p.ty.value_kind(),
                p.len
            )
            .unwrap();
        }
        out.push_str("],\n");
    }
    out.push_str("];\n/// Return kind of each command (None for void).\npub static VK_RETURNS: [Option<ValueKind>; VK_COUNT] = [\n");
    for (c, _) in &cmds {
        if c.ret == CType::Void {
            out.push_str("    None,\n");
        } else {
            writeln!(out, "    Some(ValueKind::{}),", c.ret.value_kind()).unwrap();
        }
    }
    out.push_str("];\n/// Address of the wrapper of command `j`.\npub fn vk_wrapper_address(j: usize) -> usize {\n    match j {\n");
    for (j, (c, _)) in cmds.iter().enumerate() {
        writeln!(
            out,
            "        {j} => wrappers::{} as *const () as usize,",
            c.name
        )
        .unwrap();
    }
    out.push_str("        _ => 0,\n    }\n}\n");
    out.push_str(VK_WRAPPERS_DOC);
    out.push_str("#[allow(non_snake_case, unused_parens, clippy::missing_safety_doc, clippy::too_many_arguments, clippy::unnecessary_cast, clippy::useless_transmute, unused_unsafe)]\npub mod wrappers {\n    use crate::vk::{layer, track};\n");
    for (j, (c, _)) in cmds.iter().enumerate() {
        vk_wrapper(&mut out, j, c);
    }
    out.push_str("}\n");
    out
}

/// The Vulkan wrappers' module documentation, with their one safety argument.
const VK_WRAPPERS_DOC: &str = "\
/// The layer's wrappers, one per command; never exported (the loader takes them from the
/// layer's `vkGetInstanceProcAddr`/`vkGetDeviceProcAddr`), so a program that preloads the
/// agent for GL still calls its Vulkan loader directly.
///
/// # Safety invariant (every wrapper's `unsafe` block rests on it)
///
/// Wrapper `j` has exactly the C signature vk.xml gives command `j`, and is handed out only
/// for a command the next layer or driver provides. `layer::next(j, a0)` is that provider's
/// function for the instance or device the dispatchable handle `a0` belongs to (found by the
/// loader's dispatch pointer, the handle's first word, which the Vulkan loader contract says
/// every dispatchable object starts with). Calling it with the caller's arguments, unchanged,
/// keeps the caller's contract. The recording reads the arguments as plain integers; only the
/// roles (`crate::vk::track`) read what some point to, as the command's contract makes valid:
/// a begin info, an array of secondaries, submit infos, a render pass's create info and the
/// handle it returned, a render pass begin info.
";

fn vk_wrapper(out: &mut String, j: usize, c: &Command) {
    let Signature {
        params,
        types,
        args,
        recorded,
        ret,
        ret_u64,
    } = signature(c);
    let call = format!("next({})", args.join(", "));
    let present = vk_class(&c.name) == "Swap";
    let role = vk_role(&c.name);
    writeln!(
        out,
        "    /// `{}`: recorded while capturing, then forwarded to the next layer.\n    pub unsafe extern \"system\" fn {}({}) -> {ret} {{\n        // SAFETY: the module's safety invariant.\n        unsafe {{",
        c.name,
        c.name,
        params.join(", ")
    )
    .unwrap();
    writeln!(
        out,
        "        let next: unsafe extern \"system\" fn({}) -> {ret} = ::core::mem::transmute(layer::next({j}, a0 as usize));",
        types.join(", ")
    )
    .unwrap();
    if present {
        // A present ends the frame, captured or not (VK_SUBOPTIMAL_KHR is a success).
        writeln!(out, "        if !layer::recording() {{ let r = {call}; layer::presented(r >= 0); return r; }}").unwrap();
    } else if vk_role_always(role) {
        let hook = vk_role_hook(role).unwrap();
        writeln!(
            out,
            "        if !layer::recording() {{ let r = {call}; {hook} return r; }}"
        )
        .unwrap();
    } else {
        writeln!(out, "        if !layer::recording() {{ return {call}; }}").unwrap();
    }
    writeln!(out, "        let site = crate::callsite::caller!();").unwrap();
    writeln!(
        out,
        "        let args: [u64; {}] = [{}];",
        recorded.len(),
        recorded.join(", ")
    )
    .unwrap();
    if role == "Work" {
        let draw = vk_class(&c.name) == "Draw";
        writeln!(
            out,
            "        let opened = track::before_work(a0 as u64, {draw});"
        )
        .unwrap();
    }
    writeln!(out, "        let begin = layer::stamp();").unwrap();
    writeln!(out, "        let r = {call};").unwrap();
    // The roles that need the call's place in the frame (its pipelined time, the render
    // pass or submit records name it) record it placed.
    if matches!(role, "Work" | "PassBegin" | "Submit" | "Submit2") {
        writeln!(
            out,
            "        let place = layer::record_placed({j}, site, begin, &args, {ret_u64});"
        )
        .unwrap();
    } else {
        writeln!(
            out,
            "        layer::record({j}, site, begin, &args, {ret_u64});"
        )
        .unwrap();
    }
    match role {
        "Work" => writeln!(out, "        track::after_work(a0 as u64, place, opened);").unwrap(),
        "PassBegin" => writeln!(
            out,
            "        track::pass_began(a0 as u64, a1 as u64, place);"
        )
        .unwrap(),
        _ => {}
    }
    if let Some(hook) = vk_role_hook(role) {
        writeln!(out, "        {hook}").unwrap();
    }
    if present {
        writeln!(out, "        layer::presented(r >= 0);").unwrap();
    }
    writeln!(out, "        r").unwrap();
    out.push_str("        }\n    }\n");
}
