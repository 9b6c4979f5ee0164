//! The program's uniforms, as a replay with the shadow program needs them: which
//! default-block uniform of `P` lives where in `S` and how to copy it, `P`'s uniform blocks
//! and their bindings, copied into `S` before each replay.

use std::ffi::{c_char, CString};
use std::ops::Range;

use crate::gl::*;

/// How one default-block uniform of `P` is copied to `S`.
#[derive(Debug, Clone, Copy)]
pub(super) struct UniformCopy {
    from: GLint,
    to: GLint,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    F(u8),
    I(u8),
    U(u8),
    /// Matrix: columns, rows.
    M(u8, u8),
}

fn kind_of(ty: GLenum) -> Option<Kind> {
    Some(match ty {
        FLOAT => Kind::F(1),
        FLOAT_VEC2 => Kind::F(2),
        FLOAT_VEC3 => Kind::F(3),
        FLOAT_VEC4 => Kind::F(4),
        INT | BOOL => Kind::I(1),
        INT_VEC2 | BOOL_VEC2 => Kind::I(2),
        INT_VEC3 | BOOL_VEC3 => Kind::I(3),
        INT_VEC4 | BOOL_VEC4 => Kind::I(4),
        UNSIGNED_INT => Kind::U(1),
        UNSIGNED_INT_VEC2 => Kind::U(2),
        UNSIGNED_INT_VEC3 => Kind::U(3),
        UNSIGNED_INT_VEC4 => Kind::U(4),
        FLOAT_MAT2 => Kind::M(2, 2),
        FLOAT_MAT3 => Kind::M(3, 3),
        FLOAT_MAT4 => Kind::M(4, 4),
        FLOAT_MAT2X3 => Kind::M(2, 3),
        FLOAT_MAT2X4 => Kind::M(2, 4),
        FLOAT_MAT3X2 => Kind::M(3, 2),
        FLOAT_MAT3X4 => Kind::M(3, 4),
        FLOAT_MAT4X2 => Kind::M(4, 2),
        FLOAT_MAT4X3 => Kind::M(4, 3),
        // Samplers: their texture unit.
        SAMPLER_1D..=SAMPLER_2D_RECT_SHADOW
        | SAMPLER_1D_ARRAY..=SAMPLER_CUBE_SHADOW
        | INT_SAMPLER_1D..=UNSIGNED_INT_SAMPLER_BUFFER
        | SAMPLER_EXTERNAL_OES
        | SAMPLER_CUBE_MAP_ARRAY..=UNSIGNED_INT_SAMPLER_CUBE_MAP_ARRAY
        | SAMPLER_2D_MULTISAMPLE..=UNSIGNED_INT_SAMPLER_2D_MULTISAMPLE_ARRAY => Kind::I(1),
        _ => return None,
    })
}

/// Image and atomic counter uniforms: a shader can write through them.
pub(super) fn is_image(ty: GLenum) -> bool {
    crate::writes::is_image(ty) || ty == UNSIGNED_INT_ATOMIC_COUNTER
}

/// The indices `0..n` of what `glGetProgramiv(program, pname)` counts (`n`: active uniforms,
/// attributes, blocks…).
///
/// # Safety
/// A GL context must be current, `t` its real functions, `program` a program and `pname`
/// valid.
pub(super) unsafe fn indices(t: &ThermalFns, program: GLuint, pname: GLenum) -> Range<GLuint> {
    let mut n = 0;
    // SAFETY: our caller's promise; `n` receives the one value.
    unsafe { (t.get_programiv)(program, pname, &mut n) };
    0..n.max(0) as GLuint
}

/// A name GL writes through `write(capacity, &mut length, buffer)` (a `glGetActive*`
/// call), of at most 255 bytes; `None` when it holds a NUL.
pub(super) fn read_name(write: impl FnOnce(GLsizei, &mut GLsizei, *mut c_char)) -> Option<CString> {
    let mut buf = [0u8; 256];
    let mut len = 0;
    write(buf.len() as GLsizei, &mut len, buf.as_mut_ptr().cast());
    CString::new(&buf[..len.clamp(0, 255) as usize]).ok()
}

/// (name, size, type) of active uniform `i` of `program`.
///
/// # Safety
/// A GL context must be current, `g` its real functions and `program` a linked program with
/// more than `i` active uniforms.
pub(super) unsafe fn active_uniform(
    t: &ThermalFns,
    program: GLuint,
    i: GLuint,
) -> (CString, GLint, GLenum) {
    let (mut size, mut ty) = (0, 0);
    let name = read_name(|capacity, len, buf| {
        // SAFETY: our caller's promise; `buf` holds `capacity` bytes.
        unsafe { (t.get_active_uniform)(program, i, capacity, len, &mut size, &mut ty, buf) }
    });
    (name.unwrap_or_default(), size, ty)
}

/// The default-block uniforms of `from` and where each element lives in `to`.
///
/// # Safety
/// A GL context must be current, `t`, `g` its real functions, `from` and `to` linked
/// programs.
pub(super) unsafe fn uniform_copies(
    t: &ThermalFns,
    g: &GeometryFns,
    from: GLuint,
    to: GLuint,
) -> Result<Vec<UniformCopy>, String> {
    let mut out = Vec::new();
    // SAFETY: our caller's promise; every index asked about is below the active count, and
    // every name passed is NUL-terminated.
    unsafe {
        for i in indices(t, from, ACTIVE_UNIFORMS) {
            let mut block = -1;
            (g.get_active_uniformsiv)(from, 1, &i, UNIFORM_BLOCK_INDEX, &mut block);
            if block >= 0 {
                continue;
            }
            let (name, size, ty) = active_uniform(t, from, i);
            if name.as_bytes().starts_with(b"gl_") {
                continue;
            }
            if is_image(ty) {
                // Only fragment-stage images reach here (check_side_effects): nothing to copy
                // for a replay whose rasterization is discarded.
                continue;
            }
            let Some(kind) = kind_of(ty) else {
                return Err(format!(
                    "uniform {} has a type (0x{ty:04X}) gpuheat does not copy",
                    name.to_string_lossy()
                ));
            };
            let bytes = name.as_bytes();
            let base = bytes.strip_suffix(b"[0]").unwrap_or(bytes);
            for e in 0..size.max(1) {
                let element = if size > 1 {
                    let mut v = base.to_vec();
                    v.extend_from_slice(format!("[{e}]").as_bytes());
                    CString::new(v).unwrap_or_default()
                } else {
                    name.clone()
                };
                let from_loc = (t.get_uniform_location)(from, element.as_ptr());
                let to_loc = (t.get_uniform_location)(to, element.as_ptr());
                if from_loc >= 0 && to_loc >= 0 {
                    out.push(UniformCopy {
                        from: from_loc,
                        to: to_loc,
                        kind,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// (index in `from`, index in `to`) of every uniform block of `from`.
///
/// # Safety
/// As [`uniform_copies`].
pub(super) unsafe fn uniform_blocks(
    t: &ThermalFns,
    g: &GeometryFns,
    from: GLuint,
    to: GLuint,
) -> Vec<(GLuint, GLuint)> {
    let mut out = Vec::new();
    // SAFETY: our caller's promise; every index asked about is below the active count, and
    // each name buffer holds the capacity given.
    unsafe {
        for i in indices(t, from, ACTIVE_UNIFORM_BLOCKS) {
            let name = read_name(|capacity, len, buf| {
                (g.get_active_uniform_block_name)(from, i, capacity, len, buf)
            });
            let Some(name) = name else {
                continue;
            };
            let j = (g.get_uniform_block_index)(to, name.as_ptr());
            if j != INVALID_INDEX {
                out.push((i, j));
            }
        }
    }
    out
}

/// Copies `from`'s uniform values and block bindings into `to` (the current program).
///
/// # Safety
/// A GL context must be current with `to` in use, `g` its real functions, and `uniforms`
/// and `blocks` made by [`uniform_copies`] and [`uniform_blocks`] for `from` and `to`.
pub(super) unsafe fn copy_uniforms(
    t: &ThermalFns,
    g: &GeometryFns,
    from: GLuint,
    uniforms: &[UniformCopy],
    blocks: &[(GLuint, GLuint)],
    to: GLuint,
) {
    // SAFETY: our caller's promise; each location holds the kind of value copied, and each
    // read buffer has room for the largest value of its kind (a 4×4 matrix).
    unsafe {
        for u in uniforms {
            match u.kind {
                Kind::F(n) => {
                    let mut v = [0f32; 4];
                    (g.get_uniformfv)(from, u.from, v.as_mut_ptr());
                    let set = [g.uniform1fv, g.uniform2fv, g.uniform3fv, g.uniform4fv];
                    set[n as usize - 1](u.to, 1, v.as_ptr());
                }
                Kind::I(n) => {
                    let mut v = [0i32; 4];
                    (t.get_uniformiv)(from, u.from, v.as_mut_ptr());
                    let set = [g.uniform1iv, g.uniform2iv, g.uniform3iv, g.uniform4iv];
                    set[n as usize - 1](u.to, 1, v.as_ptr());
                }
                Kind::U(n) => {
                    let mut v = [0u32; 4];
                    (g.get_uniformuiv)(from, u.from, v.as_mut_ptr());
                    let set = [g.uniform1uiv, g.uniform2uiv, g.uniform3uiv, g.uniform4uiv];
                    set[n as usize - 1](u.to, 1, v.as_ptr());
                }
                Kind::M(c, r) => {
                    let mut v = [0f32; 16];
                    (g.get_uniformfv)(from, u.from, v.as_mut_ptr());
                    let set = match (c, r) {
                        (2, 2) => g.uniform_matrix2fv,
                        (3, 3) => g.uniform_matrix3fv,
                        (2, 3) => g.uniform_matrix2x3fv,
                        (2, 4) => g.uniform_matrix2x4fv,
                        (3, 2) => g.uniform_matrix3x2fv,
                        (3, 4) => g.uniform_matrix3x4fv,
                        (4, 2) => g.uniform_matrix4x2fv,
                        (4, 3) => g.uniform_matrix4x3fv,
                        _ => g.uniform_matrix4fv,
                    };
                    set(u.to, 1, 0, v.as_ptr());
                }
            }
        }
        for &(i, j) in blocks {
            let mut binding = 0;
            (g.get_active_uniform_blockiv)(from, i, UNIFORM_BLOCK_BINDING, &mut binding);
            (g.uniform_block_binding)(to, j, binding.max(0) as GLuint);
        }
    }
}
