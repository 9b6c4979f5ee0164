//! Generates the enum-name tables the report uses to print GLenum / GLbitfield arguments by
//! name, from the same Khronos registry the agent's wrappers come from.

use gpuheat_registry::Registry;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Prefers core names (no vendor suffix) when several names share a value.
fn rank(name: &str) -> usize {
    let suffixed = [
        "_ARB", "_EXT", "_KHR", "_OES", "_NV", "_AMD", "_SGIX", "_SGIS", "_APPLE", "_ATI", "_IBM",
        "_INTEL", "_MESA", "_QCOM", "_ANGLE", "_IMG", "_ARM", "_3DFX", "_SUN", "_HP", "_PGI",
        "_OML", "_SGI", "_INGR", "_MESAX", "_WIN", "_REND", "_S3", "_GREMEDY", "_OVR", "_DMP",
        "_FJ", "_VIV", "_SUNX", "_SEC",
    ];
    usize::from(suffixed.iter().any(|s| name.ends_with(s))) * 1000 + name.len()
}

// The state tracker's hand-written table (`src/checklist/track/table.rs`), read here to generate
// the shapes of the setters it names.
#[allow(dead_code)]
mod table {
    include!("src/checklist/track/table.rs");
}

/// The `GL_` enums the crate names (without the prefix), generated as `crate::enums::gl::*`
/// (`u64`, as call arguments are recorded): a name the registry does not know fails the build.
const GL_NAMES: &[&str] = &[
    // Buffers, clears and framebuffers.
    "ARRAY_BUFFER",
    "ELEMENT_ARRAY_BUFFER",
    "COLOR_BUFFER_BIT",
    "DEPTH_BUFFER_BIT",
    "FRAMEBUFFER",
    "DRAW_FRAMEBUFFER",
    "READ_FRAMEBUFFER",
    "RENDERBUFFER",
    "COLOR_ATTACHMENT0",
    "DEPTH_ATTACHMENT",
    "STENCIL_ATTACHMENT",
    "DEPTH_STENCIL_ATTACHMENT",
    "DEPTH",
    "DEPTH_STENCIL",
    "FRONT",
    "BACK",
    "FRONT_AND_BACK",
    "VIEWPORT",
    // Capabilities, blending and tests.
    "DEPTH_TEST",
    "BLEND",
    "CULL_FACE",
    "SCISSOR_TEST",
    "STENCIL_TEST",
    "POLYGON_OFFSET_FILL",
    "SAMPLE_ALPHA_TO_COVERAGE",
    "SAMPLE_COVERAGE",
    "RASTERIZER_DISCARD",
    "DITHER",
    "ZERO",
    "ONE",
    "SRC_ALPHA",
    "ONE_MINUS_SRC_ALPHA",
    "ALWAYS",
    // Textures.
    "TEXTURE0",
    "TEXTURE1",
    "TEXTURE_2D",
    "TEXTURE_2D_MULTISAMPLE",
    "TEXTURE_MIN_FILTER",
    "NEAREST",
    "LINEAR",
    "LINEAR_MIPMAP_LINEAR",
    "RGBA",
    "RGBA8",
    // Types, primitives and shader stages.
    "UNSIGNED_BYTE",
    "UNSIGNED_SHORT",
    "FLOAT",
    "TRIANGLES",
    "VERTEX_SHADER",
    "FRAGMENT_SHADER",
    // A read-back into a buffer object does not wait.
    "PIXEL_PACK_BUFFER",
    // glClientWaitSync's results: whether it waited.
    "ALREADY_SIGNALED",
    "TIMEOUT_EXPIRED",
];

/// The `VG_` enums the crate names (without the prefix), generated as `crate::enums::vg::*`
/// (`u32`, OpenVG's `VGenum`): a name the OpenVG table does not know fails the build.
const VG_NAMES: &[&str] = &[
    "STROKE_PATH",
    "FILL_PATH",
    "EVEN_ODD",
    "NON_ZERO",
    "CAP_BUTT",
    "CAP_ROUND",
    "CAP_SQUARE",
    "JOIN_MITER",
    "JOIN_ROUND",
    "JOIN_BEVEL",
    "FILL_RULE",
    "STROKE_LINE_WIDTH",
    "CLEAR_COLOR",
    "PAINT_TYPE",
    "PAINT_TYPE_COLOR",
    "MATRIX_MODE",
    "MATRIX_PATH_USER_TO_SURFACE",
    "MATRIX_IMAGE_USER_TO_SURFACE",
    "PAINT_COLOR",
    "PATH_CAPABILITY_ALL",
];

/// `pub const NAME: ty = value;` for each of `names`, looked up as `prefix` + name in
/// `values`; a name it lacks, or a value that does not fit `ty`, fails the build.
fn constants(
    names: &[&str],
    prefix: &str,
    ty: &str,
    max: u64,
    values: &BTreeMap<&str, u64>,
) -> String {
    let mut out = String::new();
    for n in names {
        let full = format!("{prefix}{n}");
        let Some(&v) = values.get(full.as_str()) else {
            panic!("{full} is not in the registry: fix the name in build.rs");
        };
        assert!(v <= max, "{full} = {v:#x} does not fit {ty}");
        writeln!(out, "/// `{full}`.\npub const {n}: {ty} = {v:#x};").unwrap();
    }
    out
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/checklist/track/table.rs");
    let reg = Registry::load().expect("Khronos registry");
    // OpenVG's enums are named only through their parameter's group: their values collide
    // with GL's, so they never enter the by-value table a parameter without a group falls
    // back to (every VG enum parameter has one; the registry's tests check it).
    let vg = Registry::load_vg().expect("OpenVG table");
    let mut by_value: BTreeMap<u64, &str> = BTreeMap::new();
    let mut by_name: BTreeMap<&str, u64> = BTreeMap::new();
    for e in &vg.enums {
        by_name.insert(&e.name, e.value);
    }
    for e in &reg.enums {
        by_name.insert(&e.name, e.value);
        if e.bitmask || e.value <= 1 {
            continue; // 0 and 1 have dozens of names; only a group can say which.
        }
        let slot = by_value.entry(e.value).or_insert(&e.name);
        if rank(&e.name) < rank(slot) {
            *slot = &e.name;
        }
    }
    let mut out = String::new();
    out.push_str(
        "/// (value, preferred name), sorted by value.\npub static BY_VALUE: &[(u64, &str)] = &[\n",
    );
    for (v, n) in &by_value {
        writeln!(out, "    ({v}, {n:?}),").unwrap();
    }
    out.push_str(
        "];\n/// (name, value), sorted by name.\npub static BY_NAME: &[(&str, u64)] = &[\n",
    );
    for (n, v) in &by_name {
        writeln!(out, "    ({n:?}, {v}),").unwrap();
    }
    out.push_str("];\n/// (group, member names), sorted by group.\npub static GROUPS: &[(&str, &[&str])] = &[\n");
    let mut groups: Vec<_> = reg.groups.iter().chain(&vg.groups).collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    groups.dedup_by(|a, b| a.name == b.name);
    for g in groups {
        writeln!(out, "    ({:?}, &{:?}),", g.name, g.members).unwrap();
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("enums.rs");
    std::fs::write(dest, out).unwrap();
    let gl_values: BTreeMap<&str, u64> = reg
        .enums
        .iter()
        .map(|e| (e.name.as_str(), e.value))
        .collect();
    let vg_values: BTreeMap<&str, u64> = vg
        .enums
        .iter()
        .map(|e| (e.name.as_str(), e.value))
        .collect();
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out_dir.join("gl_consts.rs"),
        constants(GL_NAMES, "GL_", "u64", u64::MAX, &gl_values),
    )
    .unwrap();
    std::fs::write(
        out_dir.join("vg_consts.rs"),
        constants(VG_NAMES, "VG_", "u32", u64::from(u32::MAX), &vg_values),
    )
    .unwrap();
    let setters = setters(&reg);
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("setters.rs");
    std::fs::write(dest, setters).unwrap();
}

/// Vendor suffixes an entry point may end with after its type suffix.
const VENDORS: [&str; 14] = [
    "ARB", "EXT", "OES", "KHR", "NV", "AMD", "APPLE", "ANGLE", "SGIS", "SGIX", "ATI", "MESA",
    "IMG", "QCOM",
];

/// Whether `rest` (what follows a table prefix in a command's name) is a type suffix: an
/// optional `Matrix2`/`Matrix4x3`, an optional component count, an optional type (`f`, `i`,
/// `ui`, `Iiv`...), an optional `v`, then an optional vendor suffix.
fn type_suffix(rest: &str) -> bool {
    let mut r = rest;
    for v in VENDORS {
        if let Some(s) = r.strip_suffix(v) {
            r = s;
            break;
        }
    }
    if let Some(s) = r.strip_prefix("Matrix") {
        let b = s.as_bytes();
        if b.is_empty() || !(b'2'..=b'4').contains(&b[0]) {
            return false;
        }
        r = &s[1..];
        if let Some(s) = r.strip_prefix('x') {
            let b = s.as_bytes();
            if b.is_empty() || !(b'2'..=b'4').contains(&b[0]) {
                return false;
            }
            r = &s[1..];
        }
    }
    if let Some(c) = r.as_bytes().first() {
        if (b'1'..=b'4').contains(c) {
            r = &r[1..];
        }
    }
    for t in [
        "Iui", "Ii", "ui64", "i64", "ub", "us", "ui", "I", "i", "f", "d", "x", "s", "b",
    ] {
        if let Some(s) = r.strip_prefix(t) {
            r = s;
            break;
        }
    }
    r = r.strip_prefix('v').unwrap_or(r);
    r.is_empty()
}

/// Parameters that select a slot rather than give a value, by their registry name (the
/// registry's groups for them are targets, capabilities, parameter names, faces, attachments;
/// indices, locations and units have no group).
const KEY_PARAMS: [&str; 11] = [
    "target",
    "cap",
    "pname",
    "face",
    "attachment",
    "index",
    "location",
    "unit",
    "buf",
    "bindingindex",
    "drawbuffer",
];

/// The state tracker's setters: every GL command that a `Set` entry of the table names (its
/// prefix and a type suffix; the longest prefix wins), with its keys, values, array count and
/// whether its values are behind a pointer, from the registry. Commands with more than two
/// keys or a key behind a pointer are left out (the tracker then forgets, as for any unknown
/// call).
fn setters(reg: &Registry) -> String {
    use table::{Role, Scope, Special, TABLE};
    let mut families: Vec<&str> = Vec::new();
    for (_, role) in TABLE {
        if let Role::Set { family, .. } = role {
            if !families.contains(family) {
                families.push(family);
            }
        }
    }
    let mut out = String::from(
        "/// The families of state, as [`Setter::family`] indexes them.\npub static FAMILIES: &[&str] = &[\n",
    );
    for f in &families {
        writeln!(out, "    {f:?},").unwrap();
    }
    out.push_str("];\n/// The setters, sorted by name.\npub static SETTERS: &[Setter] = &[\n");
    let mut rows = Vec::new();
    for c in &reg.commands {
        if c.family != gpuheat_registry::Family::Gl || c.ret != gpuheat_registry::CType::Void {
            continue;
        }
        let entry = TABLE
            .iter()
            .filter_map(|(prefix, role)| match role {
                Role::Set {
                    family,
                    scope,
                    special,
                } => c
                    .name
                    .strip_prefix(prefix)
                    .filter(|rest| type_suffix(rest))
                    .map(|_| (prefix.len(), *family, *scope, *special)),
                _ => None,
            })
            .max_by_key(|e| e.0);
        let Some((_, family, scope, special)) = entry else {
            continue;
        };
        let scope_param = match scope {
            Scope::BoundTexture
            | Scope::NamedProgram
            | Scope::BoundFramebuffer
            | Scope::NamedSampler => Some(0),
            _ => None,
        };
        let (mut keys, mut values, mut count, mut pointer, mut bad) =
            (Vec::new(), Vec::new(), None, false, false);
        for (i, p) in c.params.iter().enumerate() {
            if Some(i) == scope_param {
                bad |= p.ty == gpuheat_registry::CType::Ptr;
            } else if KEY_PARAMS.contains(&p.name.as_str()) {
                bad |= p.ty == gpuheat_registry::CType::Ptr;
                keys.push(i);
            } else {
                if p.name == "count" {
                    count = Some(i);
                }
                // A vertex attribute's pointer is an offset into the bound buffer: a value.
                pointer |=
                    p.ty == gpuheat_registry::CType::Ptr && special != Special::ReadsArrayBuffer;
                values.push(i);
            }
        }
        if bad || keys.len() > 2 {
            continue;
        }
        let family = families.iter().position(|f| *f == family).unwrap();
        rows.push(format!(
            "    Setter {{ name: {:?}, family: {family}, scope: Scope::{scope:?}, special: Special::{special:?}, params: {}, keys: &{keys:?}, values: &{values:?}, count: {count:?}, pointer_values: {pointer} }},\n",
            c.name,
            c.params.len(),
        ));
    }
    rows.sort();
    for r in rows {
        out.push_str(&r);
    }
    out.push_str("];\n");
    out
}
