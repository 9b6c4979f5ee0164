//! **A test fixture, not part of the profiler**: a small OpenVG 1.1 implementation,
//! `libOpenVG.so.1`, that draws with GLES 3 through EGL, so that gpuheat's VG support can
//! be tested on real GPU work (Mesa llvmpipe) without a vendor's VG library. None is
//! packaged in the registries the project can reach.
//!
//! Build with `cargo build -p gpuheat-openvg`: `target/debug/libOpenVG.so`, soname
//! `libOpenVG.so.1`. Programs link it with `-L target/debug -lOpenVG` or dlopen
//! `"libOpenVG.so.1"`, with the directory on `LD_LIBRARY_PATH` (the build script puts the
//! `libOpenVG.so.1 → libOpenVG.so` links there; README.md says which directory is fresh
//! when). Its Rust items are for this crate's own tests: a program that used them would
//! link the library statically and hide its calls from an interposer.
//!
//! # Context convention
//!
//! Mesa has no OpenVG client API, so no `EGL_OPENVG_API` context exists. Instead the
//! program creates a GLES 3 context and a surface as usual (`eglBindAPI(EGL_OPENGL_ES_API)`)
//! and makes them current; every VG call then works on the current EGL context and draws
//! into its current draw surface (origin bottom-left, in pixels, as GL window
//! coordinates). VG state (parameters, matrices, errors, paths, paints, images) is kept
//! per EGL context; handles are unique process-wide, so another context's handle is a bad
//! handle. Without a current context a VG call does nothing and `vgGetError` returns
//! `VG_NO_CONTEXT_ERROR`. `vgFinish` is `glFinish`, `vgFlush` is `glFlush`.
//!
//! # What it implements
//!
//! Paths with every segment type and datatype (scale and bias), fill (even-odd and
//! non-zero) and stroke (width, caps, joins, miter limit, dashes) tessellated by `lyon`
//! into triangles; colour, linear and radial gradient and pattern paints; images
//! (`VG_*RGBA_8888` family) with sub-data, read-back and drawing through the image matrix;
//! the matrix modes; `vgClear`; scissoring; masks and mask layers; pixel copies; fonts
//! with path and image glyphs; path length, point along path, transform and
//! interpolation; child images (as copies); the image filters (on the CPU); parameters;
//! the VGU shapes and warps: every function of `openvg.h` and `vgu.h` 1.1 is exported.
//! Not implemented: antialiasing (every rendering quality draws aliased, so pixel tests
//! are exact); per-channel stencil images; the colour transform; colour spaces (sRGB
//! and linear formats are treated alike). The surface holds premultiplied colour; the
//! blend modes are GL blend functions on it (`MULTIPLY` exact on an opaque destination,
//! `DARKEN`/`LIGHTEN` on opaque source and destination).
//! Translucent strokes blend twice where the stroke's triangles overlap (tight joins).
//!
//! Every EGL/GL call is a dynamic import of `libEGL.so.1` / `libGLESv2.so.2` (see
//! [`gl`]), so an interposer sees the GL work each VG call does. Per VG call the library
//! makes one `eglGetCurrentContext`; a draw adds `eglGetCurrentDisplay`,
//! `eglGetCurrentSurface` and two `eglQuerySurface` for the surface size.
//!
//! The GL objects are created in the first VG call of a context (a shader program, a
//! vertex array, two buffers). EGL can give a new context the address of a destroyed
//! one; when a thread's current context changes, the library checks (`glIsProgram`,
//! `glGetUniformLocation`) that the state it keeps for that address belongs to it, and
//! starts afresh if not. A context destroyed and replaced at the same address on the same
//! thread with no VG call in between goes unnoticed.
//!
//! No panic crosses the C ABI: each entry point runs under `catch_unwind` and returns its
//! default (0, null, `VG_INVALID_HANDLE`) if something panicked. A VG call made on a
//! thread already inside a VG call (for example from a hook on a GL call this library
//! makes) returns its default without touching any state, instead of deadlocking.

// The crate is named after the library it builds (libOpenVG.so), and the entry points
// carry OpenVG's C names.
#![allow(non_snake_case)]

pub mod consts;
pub mod filters;
pub mod gl;
pub mod matrix;
pub mod path;
pub mod pixels;
pub mod render;
pub mod state;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use lyon_tessellation::{
    BuffersBuilder, FillOptions, FillRule, FillTessellator, FillVertex, LineCap, LineJoin,
    StrokeOptions, StrokeTessellator, StrokeVertex,
};

use consts::*;
use matrix::Mat3;
use path::PathData;
use render::{Fill, ImageDraw, Renderer, Target};
use state::{Context, Image, Len, Mesh, Paint};

/// VG state of every EGL context that made a VG call, by context pointer.
static CONTEXTS: Mutex<BTreeMap<usize, Context>> = Mutex::new(BTreeMap::new());

thread_local! {
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
    /// The EGL context of this thread's previous VG call.
    static LAST_CONTEXT: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` on the current context's VG state, recording its error, and returns its value
/// or `default` (on an error, without a context, on a nested call, after a panic).
fn with_ctx<R>(default: R, f: impl FnOnce(&mut Context) -> Result<R, VGErrorCode>) -> R {
    if IN_CALL.with(|c| c.replace(true)) {
        return default;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: eglGetCurrentContext takes no arguments and is valid on any thread.
        let key = unsafe { gl::eglGetCurrentContext() } as usize;
        if key == 0 {
            return None;
        }
        let mut all = CONTEXTS.lock().unwrap_or_else(|e| e.into_inner());
        let ctx = all.entry(key).or_default();
        // EGL may give a new context the address of a destroyed one: when this thread's
        // context changed, check that the GL objects kept for that address are there.
        if LAST_CONTEXT.with(|l| l.replace(key)) != key && !ctx.renderer.belongs_to_current() {
            *ctx = Context::new();
        }
        // Created up front, so that every context has the objects that identify it.
        ctx.renderer.ready();
        match f(ctx) {
            Ok(v) => Some(v),
            Err(e) => {
                ctx.set_error(e);
                None
            }
        }
    }));
    IN_CALL.with(|c| c.set(false));
    result.ok().flatten().unwrap_or(default)
}

fn check(cond: bool, e: VGErrorCode) -> Result<(), VGErrorCode> {
    if cond {
        Ok(())
    } else {
        Err(e)
    }
}

fn aligned<T>(p: *const T, align: usize) -> bool {
    !p.is_null() && (p as usize).is_multiple_of(align)
}

/// `count` values at `p` (checked non-null and aligned, count ≥ 0) as a slice.
///
/// # Safety
///
/// When non-null, `p` must point to `count` readable values.
unsafe fn slice<'a, T>(p: *const T, count: i32) -> Result<&'a [T], VGErrorCode> {
    check(count >= 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
    if count == 0 {
        return Ok(&[]);
    }
    check(
        aligned(p, std::mem::align_of::<T>()),
        VG_ILLEGAL_ARGUMENT_ERROR,
    )?;
    // SAFETY: the caller guarantees `count` values at the non-null, aligned `p`.
    Ok(unsafe { std::slice::from_raw_parts(p, count as usize) })
}

// ---------------------------------------------------------------------------------------
// Errors, flush, strings
// ---------------------------------------------------------------------------------------

/// `vgGetError`: the first error since the last call, then resets it.
#[no_mangle]
pub extern "C" fn vgGetError() -> VGErrorCode {
    with_ctx(VG_NO_CONTEXT_ERROR, |ctx| {
        Ok(std::mem::replace(&mut ctx.error, VG_NO_ERROR))
    })
}

/// `vgFlush`: `glFlush`.
#[no_mangle]
pub extern "C" fn vgFlush() {
    with_ctx((), |_| {
        // SAFETY: glFlush on the current context.
        unsafe { gl::glFlush() };
        Ok(())
    })
}

/// `vgFinish`: `glFinish`, so every VG call before it has completed on the GPU.
#[no_mangle]
pub extern "C" fn vgFinish() {
    with_ctx((), |_| {
        // SAFETY: glFinish on the current context.
        unsafe { gl::glFinish() };
        Ok(())
    })
}

/// `vgGetString`: vendor, renderer, version ("1.1") or extensions (none); null without a
/// current context or for another name.
#[no_mangle]
pub extern "C" fn vgGetString(name: VGenum) -> *const VGubyte {
    let s: Option<&'static std::ffi::CStr> = with_ctx(None, |_| {
        Ok(match name {
            VG_VENDOR => Some(c"gpuheat"),
            VG_RENDERER => Some(c"gpuheat-openvg test fixture on GLES 3"),
            VG_VERSION => Some(c"1.1"),
            VG_EXTENSIONS => Some(c""),
            _ => None,
        })
    });
    s.map_or(std::ptr::null(), |s| s.as_ptr().cast())
}

// ---------------------------------------------------------------------------------------
// Context parameters
// ---------------------------------------------------------------------------------------

/// `vgSetf`.
#[no_mangle]
pub extern "C" fn vgSetf(param: VGenum, value: VGfloat) {
    with_ctx((), |ctx| ctx.params.set(param, false, &[value]))
}

/// `vgSeti`.
#[no_mangle]
pub extern "C" fn vgSeti(param: VGenum, value: VGint) {
    with_ctx((), |ctx| ctx.params.set(param, false, &[value as f32]))
}

/// `vgSetfv`.
///
/// # Safety
///
/// `values` must point to `count` floats (or be null with `count` 0).
#[no_mangle]
pub unsafe extern "C" fn vgSetfv(param: VGenum, count: VGint, values: *const VGfloat) {
    with_ctx((), |ctx| {
        // SAFETY: the caller passes `count` floats at `values`.
        let v = unsafe { slice(values, count) }?;
        ctx.params.set(param, true, v)
    })
}

/// `vgSetiv`.
///
/// # Safety
///
/// `values` must point to `count` integers (or be null with `count` 0).
#[no_mangle]
pub unsafe extern "C" fn vgSetiv(param: VGenum, count: VGint, values: *const VGint) {
    with_ctx((), |ctx| {
        // SAFETY: the caller passes `count` integers at `values`.
        let v = unsafe { slice(values, count) }?;
        let f: Vec<f32> = v.iter().map(|&i| i as f32).collect();
        ctx.params.set(param, true, &f)
    })
}

fn get_scalar(ctx: &Context, param: VGenum) -> Result<f32, VGErrorCode> {
    let spec = ctx.params.spec(param)?;
    check(spec.len == Len::Scalar, VG_ILLEGAL_ARGUMENT_ERROR)?;
    Ok(ctx.params.float(param))
}

/// `vgGetf`.
#[no_mangle]
pub extern "C" fn vgGetf(param: VGenum) -> VGfloat {
    with_ctx(0.0, |ctx| get_scalar(ctx, param))
}

/// `vgGeti`.
#[no_mangle]
pub extern "C" fn vgGeti(param: VGenum) -> VGint {
    with_ctx(0, |ctx| Ok(get_scalar(ctx, param)?.floor() as i32))
}

/// `vgGetVectorSize`.
#[no_mangle]
pub extern "C" fn vgGetVectorSize(param: VGenum) -> VGint {
    with_ctx(0, |ctx| {
        ctx.params.spec(param)?;
        Ok(ctx.params.get(param).len() as i32)
    })
}

/// Writes `count` values of a parameter through `put`.
fn get_vector(
    values: &[f32],
    count: VGint,
    ok_ptr: bool,
    mut put: impl FnMut(usize, f32),
) -> Result<(), VGErrorCode> {
    check(
        ok_ptr && count > 0 && count as usize <= values.len(),
        VG_ILLEGAL_ARGUMENT_ERROR,
    )?;
    for (i, &v) in values[..count as usize].iter().enumerate() {
        put(i, v);
    }
    Ok(())
}

/// `vgGetfv`.
///
/// # Safety
///
/// `values` must have room for `count` floats.
#[no_mangle]
pub unsafe extern "C" fn vgGetfv(param: VGenum, count: VGint, values: *mut VGfloat) {
    with_ctx((), |ctx| {
        ctx.params.spec(param)?;
        let ok = aligned(values, 4);
        // SAFETY: the caller gives room for `count` floats; get_vector writes at most that.
        get_vector(ctx.params.get(param), count, ok, |i, v| unsafe {
            *values.add(i) = v
        })
    })
}

/// `vgGetiv`.
///
/// # Safety
///
/// `values` must have room for `count` integers.
#[no_mangle]
pub unsafe extern "C" fn vgGetiv(param: VGenum, count: VGint, values: *mut VGint) {
    with_ctx((), |ctx| {
        ctx.params.spec(param)?;
        let ok = aligned(values, 4);
        // SAFETY: as in vgGetfv.
        get_vector(ctx.params.get(param), count, ok, |i, v| unsafe {
            *values.add(i) = v.floor() as i32
        })
    })
}

// ---------------------------------------------------------------------------------------
// Object parameters
// ---------------------------------------------------------------------------------------

/// The values of a path's, image's or paint's parameter.
fn object_param(ctx: &Context, object: VGHandle, param: VGint) -> Result<Vec<f32>, VGErrorCode> {
    if let Some(p) = ctx.paths.get(&object) {
        return Ok(vec![match param {
            VG_PATH_FORMAT => VG_PATH_FORMAT_STANDARD as f32,
            VG_PATH_DATATYPE => p.datatype as f32,
            VG_PATH_SCALE => p.scale,
            VG_PATH_BIAS => p.bias,
            VG_PATH_NUM_SEGMENTS => p.segments.len() as f32,
            VG_PATH_NUM_COORDS => p.coords.len() as f32,
            _ => return Err(VG_ILLEGAL_ARGUMENT_ERROR),
        }]);
    }
    if let Some(f) = ctx.fonts.get(&object) {
        check(param == VG_FONT_NUM_GLYPHS, VG_ILLEGAL_ARGUMENT_ERROR)?;
        return Ok(vec![f.glyphs.len() as f32]);
    }
    if let Some(i) = ctx.images.get(&object) {
        return Ok(vec![match param {
            VG_IMAGE_FORMAT => i.format as f32,
            VG_IMAGE_WIDTH => i.width as f32,
            VG_IMAGE_HEIGHT => i.height as f32,
            _ => return Err(VG_ILLEGAL_ARGUMENT_ERROR),
        }]);
    }
    let paint = ctx.paints.get(&object).ok_or(VG_BAD_HANDLE_ERROR)?;
    paint.params.spec(param)?;
    Ok(paint.params.get(param).to_vec())
}

fn set_object_param(
    ctx: &mut Context,
    object: VGHandle,
    param: VGint,
    vector: bool,
    values: &[f32],
) -> Result<(), VGErrorCode> {
    if ctx.paths.contains_key(&object)
        || ctx.images.contains_key(&object)
        || ctx.fonts.contains_key(&object)
    {
        // Path, image and font parameters are all read-only.
        return Err(VG_ILLEGAL_ARGUMENT_ERROR);
    }
    let paint = ctx.paints.get_mut(&object).ok_or(VG_BAD_HANDLE_ERROR)?;
    paint.params.set(param, vector, values)?;
    if param == VG_PAINT_COLOR_RAMP_STOPS {
        paint.ramp_dirty = true;
    }
    Ok(())
}

/// `vgSetParameterf`.
#[no_mangle]
pub extern "C" fn vgSetParameterf(object: VGHandle, param: VGint, value: VGfloat) {
    with_ctx((), |ctx| {
        set_object_param(ctx, object, param, false, &[value])
    })
}

/// `vgSetParameteri`.
#[no_mangle]
pub extern "C" fn vgSetParameteri(object: VGHandle, param: VGint, value: VGint) {
    with_ctx((), |ctx| {
        set_object_param(ctx, object, param, false, &[value as f32])
    })
}

/// `vgSetParameterfv`.
///
/// # Safety
///
/// `values` must point to `count` floats (or be null with `count` 0).
#[no_mangle]
pub unsafe extern "C" fn vgSetParameterfv(
    object: VGHandle,
    param: VGint,
    count: VGint,
    values: *const VGfloat,
) {
    with_ctx((), |ctx| {
        // SAFETY: the caller passes `count` floats at `values`.
        let v = unsafe { slice(values, count) }?;
        set_object_param(ctx, object, param, true, v)
    })
}

/// `vgSetParameteriv`.
///
/// # Safety
///
/// `values` must point to `count` integers (or be null with `count` 0).
#[no_mangle]
pub unsafe extern "C" fn vgSetParameteriv(
    object: VGHandle,
    param: VGint,
    count: VGint,
    values: *const VGint,
) {
    with_ctx((), |ctx| {
        // SAFETY: the caller passes `count` integers at `values`.
        let v = unsafe { slice(values, count) }?;
        let f: Vec<f32> = v.iter().map(|&i| i as f32).collect();
        set_object_param(ctx, object, param, true, &f)
    })
}

/// `vgGetParameterf`.
#[no_mangle]
pub extern "C" fn vgGetParameterf(object: VGHandle, param: VGint) -> VGfloat {
    with_ctx(0.0, |ctx| {
        let v = object_param(ctx, object, param)?;
        check(v.len() == 1, VG_ILLEGAL_ARGUMENT_ERROR)?;
        Ok(v[0])
    })
}

/// `vgGetParameteri`.
#[no_mangle]
pub extern "C" fn vgGetParameteri(object: VGHandle, param: VGint) -> VGint {
    with_ctx(0, |ctx| {
        let v = object_param(ctx, object, param)?;
        check(v.len() == 1, VG_ILLEGAL_ARGUMENT_ERROR)?;
        Ok(v[0].floor() as i32)
    })
}

/// `vgGetParameterVectorSize`.
#[no_mangle]
pub extern "C" fn vgGetParameterVectorSize(object: VGHandle, param: VGint) -> VGint {
    with_ctx(0, |ctx| Ok(object_param(ctx, object, param)?.len() as i32))
}

/// `vgGetParameterfv`.
///
/// # Safety
///
/// `values` must have room for `count` floats.
#[no_mangle]
pub unsafe extern "C" fn vgGetParameterfv(
    object: VGHandle,
    param: VGint,
    count: VGint,
    values: *mut VGfloat,
) {
    with_ctx((), |ctx| {
        let v = object_param(ctx, object, param)?;
        // SAFETY: the caller gives room for `count` floats; get_vector writes at most that.
        get_vector(&v, count, aligned(values, 4), |i, x| unsafe {
            *values.add(i) = x
        })
    })
}

/// `vgGetParameteriv`.
///
/// # Safety
///
/// `values` must have room for `count` integers.
#[no_mangle]
pub unsafe extern "C" fn vgGetParameteriv(
    object: VGHandle,
    param: VGint,
    count: VGint,
    values: *mut VGint,
) {
    with_ctx((), |ctx| {
        let v = object_param(ctx, object, param)?;
        // SAFETY: as in vgGetParameterfv.
        get_vector(&v, count, aligned(values, 4), |i, x| unsafe {
            *values.add(i) = x.floor() as i32
        })
    })
}

// ---------------------------------------------------------------------------------------
// Matrices
// ---------------------------------------------------------------------------------------

/// `vgLoadIdentity`: the current matrix (`VG_MATRIX_MODE`) becomes the identity.
#[no_mangle]
pub extern "C" fn vgLoadIdentity() {
    with_ctx((), |ctx| {
        ctx.set_current_matrix(Mat3::IDENTITY);
        Ok(())
    })
}

/// # Safety
///
/// `m` must be null or point to 9 floats.
unsafe fn read_matrix(m: *const VGfloat) -> Result<Mat3, VGErrorCode> {
    // SAFETY: passed through from the caller's contract.
    let v = unsafe { slice(m, 9) }?;
    let mut out = [0.0; 9];
    out.copy_from_slice(v);
    Ok(Mat3(out))
}

/// `vgLoadMatrix`.
///
/// # Safety
///
/// `m` must point to 9 floats.
#[no_mangle]
pub unsafe extern "C" fn vgLoadMatrix(m: *const VGfloat) {
    with_ctx((), |ctx| {
        check(!m.is_null(), VG_ILLEGAL_ARGUMENT_ERROR)?;
        // SAFETY: the caller passes 9 floats.
        let m = unsafe { read_matrix(m) }?;
        ctx.set_current_matrix(m);
        Ok(())
    })
}

/// `vgGetMatrix`.
///
/// # Safety
///
/// `m` must have room for 9 floats.
#[no_mangle]
pub unsafe extern "C" fn vgGetMatrix(m: *mut VGfloat) {
    with_ctx((), |ctx| {
        check(aligned(m, 4), VG_ILLEGAL_ARGUMENT_ERROR)?;
        let cur = ctx.matrices[ctx.matrix_index()];
        // SAFETY: the caller gives room for 9 floats at the aligned, non-null `m`.
        unsafe { std::ptr::copy_nonoverlapping(cur.0.as_ptr(), m, 9) };
        Ok(())
    })
}

fn mult_current(ctx: &mut Context, by: Mat3) {
    let image = ctx.matrix_index() == 1;
    let by = if image { by } else { by.affine() };
    let m = ctx.matrices[ctx.matrix_index()].mul(&by);
    ctx.set_current_matrix(m);
}

/// `vgMultMatrix`: current = current · m.
///
/// # Safety
///
/// `m` must point to 9 floats.
#[no_mangle]
pub unsafe extern "C" fn vgMultMatrix(m: *const VGfloat) {
    with_ctx((), |ctx| {
        check(!m.is_null(), VG_ILLEGAL_ARGUMENT_ERROR)?;
        // SAFETY: the caller passes 9 floats.
        let m = unsafe { read_matrix(m) }?;
        mult_current(ctx, m);
        Ok(())
    })
}

/// `vgTranslate`.
#[no_mangle]
pub extern "C" fn vgTranslate(tx: VGfloat, ty: VGfloat) {
    with_ctx((), |ctx| {
        mult_current(ctx, Mat3::translate(tx, ty));
        Ok(())
    })
}

/// `vgScale`.
#[no_mangle]
pub extern "C" fn vgScale(sx: VGfloat, sy: VGfloat) {
    with_ctx((), |ctx| {
        mult_current(ctx, Mat3::scale(sx, sy));
        Ok(())
    })
}

/// `vgShear`.
#[no_mangle]
pub extern "C" fn vgShear(shx: VGfloat, shy: VGfloat) {
    with_ctx((), |ctx| {
        mult_current(ctx, Mat3::shear(shx, shy));
        Ok(())
    })
}

/// `vgRotate` (degrees, counter-clockwise).
#[no_mangle]
pub extern "C" fn vgRotate(angle: VGfloat) {
    with_ctx((), |ctx| {
        mult_current(ctx, Mat3::rotate(angle));
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------

/// `vgCreatePath`.
#[no_mangle]
pub extern "C" fn vgCreatePath(
    path_format: VGint,
    datatype: VGenum,
    scale: VGfloat,
    bias: VGfloat,
    _segment_capacity_hint: VGint,
    _coord_capacity_hint: VGint,
    capabilities: VGbitfield,
) -> VGPath {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        check(
            path_format == VG_PATH_FORMAT_STANDARD,
            VG_UNSUPPORTED_PATH_FORMAT_ERROR,
        )?;
        check(
            path::datatype_size(datatype).is_some() && scale != 0.0,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let h = state::new_handle();
        let caps = capabilities & VG_PATH_CAPABILITY_ALL;
        ctx.paths
            .insert(h, PathData::new(datatype, scale, bias, caps));
        Ok(h)
    })
}

fn path_mut(ctx: &mut Context, path: VGPath) -> Result<&mut PathData, VGErrorCode> {
    ctx.paths.get_mut(&path).ok_or(VG_BAD_HANDLE_ERROR)
}

/// `vgClearPath`: removes all segments and sets the capabilities.
#[no_mangle]
pub extern "C" fn vgClearPath(path: VGPath, capabilities: VGbitfield) {
    with_ctx((), |ctx| {
        let p = path_mut(ctx, path)?;
        p.segments.clear();
        p.coords.clear();
        p.caps = capabilities & VG_PATH_CAPABILITY_ALL;
        Ok(())
    })
}

/// `vgDestroyPath`.
#[no_mangle]
pub extern "C" fn vgDestroyPath(path: VGPath) {
    with_ctx((), |ctx| {
        ctx.paths.remove(&path).ok_or(VG_BAD_HANDLE_ERROR)?;
        ctx.meshes.retain(|(p, _, _), _| *p != path);
        Ok(())
    })
}

/// `vgRemovePathCapabilities`.
#[no_mangle]
pub extern "C" fn vgRemovePathCapabilities(path: VGPath, capabilities: VGbitfield) {
    with_ctx((), |ctx| {
        let p = path_mut(ctx, path)?;
        p.caps &= !capabilities;
        Ok(())
    })
}

/// `vgGetPathCapabilities`.
#[no_mangle]
pub extern "C" fn vgGetPathCapabilities(path: VGPath) -> VGbitfield {
    with_ctx(0, |ctx| Ok(path_mut(ctx, path)?.caps))
}

/// `vgAppendPath`: appends `src`'s segments to `dst` (converted to `dst`'s datatype,
/// scale and bias).
#[no_mangle]
pub extern "C" fn vgAppendPath(dst: VGPath, src: VGPath) {
    with_ctx((), |ctx| {
        let s = ctx.paths.get(&src).ok_or(VG_BAD_HANDLE_ERROR)?;
        let (segs, vals): (Vec<u8>, Vec<f32>) = (s.segments.clone(), s.user_coords().collect());
        let src_caps = s.caps;
        let d = path_mut(ctx, dst)?;
        check(
            src_caps & VG_PATH_CAPABILITY_APPEND_FROM != 0
                && d.caps & VG_PATH_CAPABILITY_APPEND_TO != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        d.append_user(&segs, &vals);
        Ok(())
    })
}

/// `vgAppendPathData`: appends `num_segments` commands and their coordinates, read in the
/// path's datatype.
///
/// # Safety
///
/// `segments` must point to `num_segments` bytes and `data` to the coordinates they need,
/// in the path's datatype.
#[no_mangle]
pub unsafe extern "C" fn vgAppendPathData(
    dst: VGPath,
    num_segments: VGint,
    segments: *const VGubyte,
    data: *const c_void,
) {
    with_ctx((), |ctx| {
        let p = path_mut(ctx, dst)?;
        check(
            p.caps & VG_PATH_CAPABILITY_APPEND_TO != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        check(num_segments > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        // SAFETY: the caller passes `num_segments` bytes at `segments`.
        let segs = unsafe { slice(segments, num_segments) }?;
        let n = PathData::total_coords(segs).ok_or(VG_ILLEGAL_ARGUMENT_ERROR)?;
        let size = path::datatype_size(p.datatype).unwrap_or(4);
        if n > 0 {
            check(aligned(data, size), VG_ILLEGAL_ARGUMENT_ERROR)?;
        }
        // SAFETY: the caller passes the `n` coordinates the segments need at `data`.
        let coords = unsafe { path::read_coords(p.datatype, data.cast(), n) };
        p.segments.extend_from_slice(segs);
        p.coords.extend(coords);
        Ok(())
    })
}

/// `vgModifyPathCoords`: replaces the coordinates of `num_segments` segments from
/// `start_index` on.
///
/// # Safety
///
/// `data` must point to the coordinates those segments need, in the path's datatype.
#[no_mangle]
pub unsafe extern "C" fn vgModifyPathCoords(
    dst: VGPath,
    start_index: VGint,
    num_segments: VGint,
    data: *const c_void,
) {
    with_ctx((), |ctx| {
        let p = path_mut(ctx, dst)?;
        check(
            p.caps & VG_PATH_CAPABILITY_MODIFY != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        check(
            start_index >= 0
                && num_segments > 0
                && start_index as i64 + num_segments as i64 <= p.segments.len() as i64,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let (s, e) = (start_index as usize, (start_index + num_segments) as usize);
        let first = PathData::total_coords(&p.segments[..s]).unwrap_or(0);
        let n = PathData::total_coords(&p.segments[s..e]).unwrap_or(0);
        let size = path::datatype_size(p.datatype).unwrap_or(4);
        if n > 0 {
            check(aligned(data, size), VG_ILLEGAL_ARGUMENT_ERROR)?;
        }
        // SAFETY: the caller passes the `n` coordinates of those segments at `data`.
        let coords = unsafe { path::read_coords(p.datatype, data.cast(), n) };
        p.coords[first..first + n].copy_from_slice(&coords);
        Ok(())
    })
}

/// Writes bounds to the four out-pointers (min x, min y, width, height); an empty path
/// gives (0, 0, −1, −1).
///
/// # Safety
///
/// Each pointer must be null (checked) or writable.
unsafe fn put_bounds(
    b: Option<(lyon_path::math::Point, lyon_path::math::Point)>,
    out: [*mut VGfloat; 4],
) -> Result<(), VGErrorCode> {
    check(
        out.iter().all(|p| aligned(*p, 4)),
        VG_ILLEGAL_ARGUMENT_ERROR,
    )?;
    let v = match b {
        Some((lo, hi)) => [lo.x, lo.y, hi.x - lo.x, hi.y - lo.y],
        None => [0.0, 0.0, -1.0, -1.0],
    };
    for (p, v) in out.iter().zip(v) {
        // SAFETY: checked non-null and aligned; the caller guarantees writable.
        unsafe { **p = v };
    }
    Ok(())
}

/// `vgPathBounds`: the tight bounds of the path in user space.
///
/// # Safety
///
/// The four pointers must be writable floats.
#[no_mangle]
pub unsafe extern "C" fn vgPathBounds(
    path: VGPath,
    min_x: *mut VGfloat,
    min_y: *mut VGfloat,
    width: *mut VGfloat,
    height: *mut VGfloat,
) {
    with_ctx((), |ctx| {
        let p = path_mut(ctx, path)?;
        check(
            p.caps & VG_PATH_CAPABILITY_PATH_BOUNDS != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        let b = path::bounds(&p.to_lyon());
        // SAFETY: the caller passes writable floats.
        unsafe { put_bounds(b, [min_x, min_y, width, height]) }
    })
}

/// `vgPathTransformedBounds`: the tight bounds of the path mapped through the
/// path-user-to-surface matrix.
///
/// # Safety
///
/// The four pointers must be writable floats.
#[no_mangle]
pub unsafe extern "C" fn vgPathTransformedBounds(
    path: VGPath,
    min_x: *mut VGfloat,
    min_y: *mut VGfloat,
    width: *mut VGfloat,
    height: *mut VGfloat,
) {
    with_ctx((), |ctx| {
        let m = ctx.matrix(VG_MATRIX_PATH_USER_TO_SURFACE);
        let p = path_mut(ctx, path)?;
        check(
            p.caps & VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        let b = path::bounds(&path::transformed(&p.to_lyon(), &m));
        // SAFETY: the caller passes writable floats.
        unsafe { put_bounds(b, [min_x, min_y, width, height]) }
    })
}

/// Flattening tolerance of drawn paths, in surface pixels (divided by the path matrix's
/// scale to get user units).
const SURFACE_TOLERANCE: f32 = 0.05;

/// Flattening tolerance for path measurements, in user units.
const MEASURE_TOLERANCE: f32 = 0.01;

/// Checks a segment range of a path: `(first, count)` as indices.
fn segment_range(p: &PathData, start: VGint, count: VGint) -> Result<(usize, usize), VGErrorCode> {
    check(
        start >= 0 && count > 0 && start as i64 + count as i64 <= p.segments.len() as i64,
        VG_ILLEGAL_ARGUMENT_ERROR,
    )?;
    Ok((start as usize, count as usize))
}

/// `vgPathLength`: the length of `num_segments` segments from `start_segment` on
/// (curves measured by flattening to 0.01 user units); −1 on error.
#[no_mangle]
pub extern "C" fn vgPathLength(path: VGPath, start_segment: VGint, num_segments: VGint) -> VGfloat {
    with_ctx(-1.0, |ctx| {
        let p = ctx.paths.get(&path).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(
            p.caps & VG_PATH_CAPABILITY_PATH_LENGTH != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        let (first, count) = segment_range(p, start_segment, num_segments)?;
        Ok(p.length(first, count, MEASURE_TOLERANCE))
    })
}

/// `vgPointAlongPath`: the point and unit tangent at `distance` along the segment range
/// (clamped to its ends); each out-pointer may be null.
///
/// # Safety
///
/// Each non-null pointer must be a writable float.
#[no_mangle]
pub unsafe extern "C" fn vgPointAlongPath(
    path: VGPath,
    start_segment: VGint,
    num_segments: VGint,
    distance: VGfloat,
    x: *mut VGfloat,
    y: *mut VGfloat,
    tangent_x: *mut VGfloat,
    tangent_y: *mut VGfloat,
) {
    with_ctx((), |ctx| {
        let p = ctx.paths.get(&path).ok_or(VG_BAD_HANDLE_ERROR)?;
        let want_point = !x.is_null() && !y.is_null();
        let want_tangent = !tangent_x.is_null() && !tangent_y.is_null();
        check(
            (!want_point || p.caps & VG_PATH_CAPABILITY_POINT_ALONG_PATH != 0)
                && (!want_tangent || p.caps & VG_PATH_CAPABILITY_TANGENT_ALONG_PATH != 0),
            VG_PATH_CAPABILITY_ERROR,
        )?;
        let (first, count) = segment_range(p, start_segment, num_segments)?;
        let outs = [x, y, tangent_x, tangent_y];
        check(
            outs.iter().all(|o| o.is_null() || aligned(*o, 4)),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let (pt, t) = p
            .point_along(first, count, distance, MEASURE_TOLERANCE)
            .unwrap_or((
                lyon_path::math::point(0.0, 0.0),
                lyon_path::math::vector(1.0, 0.0),
            ));
        for (o, v) in outs.iter().zip([pt.x, pt.y, t.x, t.y]) {
            if !o.is_null() {
                // SAFETY: checked non-null and aligned; the caller guarantees writable.
                unsafe { **o = v };
            }
        }
        Ok(())
    })
}

/// `vgTransformPath`: appends `src` mapped through the path-user-to-surface matrix to
/// `dst`, as absolute moves, lines, quadratic and cubic Béziers and closes (arcs become
/// cubic Béziers).
#[no_mangle]
pub extern "C" fn vgTransformPath(dst: VGPath, src: VGPath) {
    with_ctx((), |ctx| {
        let m = ctx.matrix(VG_MATRIX_PATH_USER_TO_SURFACE);
        let s = ctx.paths.get(&src).ok_or(VG_BAD_HANDLE_ERROR)?;
        let d = ctx.paths.get(&dst).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(
            s.caps & VG_PATH_CAPABILITY_TRANSFORM_FROM != 0
                && d.caps & VG_PATH_CAPABILITY_TRANSFORM_TO != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        let (mut segs, mut vals) = (Vec::new(), Vec::new());
        let mut put = |seg: u8, pts: &[lyon_path::math::Point]| {
            segs.push(seg);
            for p in pts {
                let (x, y) = m.apply(p.x, p.y);
                vals.extend([x, y]);
            }
        };
        s.walk(|_, op| match op {
            path::Op::Begin(p) => put(VG_MOVE_TO_ABS, &[p]),
            path::Op::Line(_, p) => put(VG_LINE_TO_ABS, &[p]),
            path::Op::Quad(_, c, p) => put(VG_QUAD_TO_ABS, &[c, p]),
            path::Op::Cubic(_, c1, c2, p) => put(VG_CUBIC_TO_ABS, &[c1, c2, p]),
            path::Op::End { close: true, .. } => put(VG_CLOSE_PATH, &[]),
            path::Op::End { .. } => {}
        });
        if let Some(d) = ctx.paths.get_mut(&dst) {
            d.append_user(&segs, &vals);
        }
        Ok(())
    })
}

/// `vgInterpolatePath`: appends to `dst` the blend `start + (end − start)·amount` of two
/// paths whose canonical forms (absolute; horizontal and vertical lines as lines, smooth
/// curves as full ones) have the same segment types; `VG_FALSE` when they do not.
#[no_mangle]
pub extern "C" fn vgInterpolatePath(
    dst: VGPath,
    start: VGPath,
    end: VGPath,
    amount: VGfloat,
) -> VGboolean {
    with_ctx(VG_FALSE, |ctx| {
        let a = ctx.paths.get(&start).ok_or(VG_BAD_HANDLE_ERROR)?;
        let b = ctx.paths.get(&end).ok_or(VG_BAD_HANDLE_ERROR)?;
        let d = ctx.paths.get(&dst).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(
            a.caps & VG_PATH_CAPABILITY_INTERPOLATE_FROM != 0
                && b.caps & VG_PATH_CAPABILITY_INTERPOLATE_FROM != 0
                && d.caps & VG_PATH_CAPABILITY_INTERPOLATE_TO != 0,
            VG_PATH_CAPABILITY_ERROR,
        )?;
        let (sa, va) = a.canonical();
        let (sb, vb) = b.canonical();
        if sa != sb {
            return Ok(VG_FALSE);
        }
        let vals: Vec<f32> = va
            .iter()
            .zip(&vb)
            .map(|(x, y)| x + (y - x) * amount)
            .collect();
        if let Some(d) = ctx.paths.get_mut(&dst) {
            d.append_user(&sa, &vals);
        }
        Ok(VG_TRUE)
    })
}

/// `vgHardwareQuery`: this library accelerates every image format and path datatype
/// (`VG_HARDWARE_ACCELERATED`, 0x2200) it supports, the others are
/// `VG_HARDWARE_UNACCELERATED` (0x2201).
#[no_mangle]
pub extern "C" fn vgHardwareQuery(key: VGenum, setting: VGint) -> VGenum {
    const ACCELERATED: VGenum = 0x2200;
    const UNACCELERATED: VGenum = 0x2201;
    with_ctx(UNACCELERATED, |_| match key {
        // VG_IMAGE_FORMAT_QUERY
        0x2100 => Ok(if pixels::supported(setting) {
            ACCELERATED
        } else {
            UNACCELERATED
        }),
        // VG_PATH_DATATYPE_QUERY
        0x2101 => Ok(if path::datatype_size(setting).is_some() {
            ACCELERATED
        } else {
            UNACCELERATED
        }),
        _ => Err(VG_ILLEGAL_ARGUMENT_ERROR),
    })
}

/// The disjoint scissor rectangles when scissoring is on.
fn scissor(ctx: &Context) -> Option<Vec<[i32; 4]>> {
    if ctx.params.int(VG_SCISSORING) == 0 {
        return None;
    }
    let rects: Vec<[i32; 4]> = ctx
        .params
        .get(VG_SCISSOR_RECTS)
        .chunks_exact(4)
        .map(|r| [r[0] as i32, r[1] as i32, r[2] as i32, r[3] as i32])
        .collect();
    Some(render::disjoint_rects(&rects))
}

/// How the paint of `mode` colours a draw; uploads a gradient's ramp when it changed.
fn paint_fill(ctx: &mut Context, mode: VGbitfield) -> Option<Fill> {
    let (handle, matrix) = if mode == VG_FILL_PATH {
        (ctx.fill_paint, VG_MATRIX_FILL_PAINT_TO_USER)
    } else {
        (ctx.stroke_paint, VG_MATRIX_STROKE_PAINT_TO_USER)
    };
    let inverse = ctx.matrix(matrix).inverse();
    let tile = ctx.params.get(VG_TILE_FILL_COLOR);
    let tile_color = [tile[0], tile[1], tile[2], tile[3]];
    let paint: &mut Paint = match ctx.paints.get_mut(&handle) {
        Some(p) => p,
        None => &mut ctx.default_paint,
    };
    let c = paint.params.get(VG_PAINT_COLOR);
    let color = Fill::Color([c[0], c[1], c[2], c[3]].map(|v| v.clamp(0.0, 1.0)));
    let kind = paint.params.int(VG_PAINT_TYPE);
    Some(match kind {
        VG_PAINT_TYPE_LINEAR_GRADIENT | VG_PAINT_TYPE_RADIAL_GRADIENT => {
            // A singular paint matrix draws nothing (the specification leaves it open).
            let inverse = inverse?;
            if paint.ramp_dirty || paint.ramp_texture == 0 {
                let texels = render::ramp_texels(paint.params.get(VG_PAINT_COLOR_RAMP_STOPS));
                if paint.ramp_texture == 0 {
                    paint.ramp_texture = Renderer::create_texture(256, 1, &texels, gl::GL_LINEAR);
                } else {
                    Renderer::update_texture(paint.ramp_texture, [0, 0, 256, 1], &texels);
                }
                paint.ramp_dirty = false;
            }
            let spread =
                paint.params.int(VG_PAINT_COLOR_RAMP_SPREAD_MODE) - VG_COLOR_RAMP_SPREAD_PAD;
            let (grad, radius) = if kind == VG_PAINT_TYPE_LINEAR_GRADIENT {
                let g = paint.params.get(VG_PAINT_LINEAR_GRADIENT);
                ([g[0], g[1], g[2], g[3]], None)
            } else {
                let g = paint.params.get(VG_PAINT_RADIAL_GRADIENT);
                ([g[0], g[1], g[2], g[3]], Some(g[4]))
            };
            Fill::Gradient {
                inverse,
                grad,
                radius,
                spread,
                ramp: paint.ramp_texture,
            }
        }
        VG_PAINT_TYPE_PATTERN => match ctx.images.get(&paint.pattern) {
            Some(img) => Fill::Pattern {
                inverse: inverse?,
                texture: img.texture,
                size: [img.width as f32, img.height as f32],
                tiling: paint.params.int(VG_PAINT_PATTERN_TILING_MODE) - VG_TILE_FILL,
                tile_color,
            },
            // Without a pattern image the paint's colour is used.
            None => color,
        },
        _ => color,
    })
}

/// Tessellates the fill of `path` (user space) with `rule`.
fn fill_mesh(path: &lyon_path::Path, rule: VGenum, tolerance: f32) -> Mesh {
    let mut mesh = Mesh::new();
    let rule = if rule == VG_NON_ZERO {
        FillRule::NonZero
    } else {
        FillRule::EvenOdd
    };
    let options = FillOptions::tolerance(tolerance).with_fill_rule(rule);
    let mut builder = BuffersBuilder::new(&mut mesh, |v: FillVertex| v.position().to_array());
    // A tessellation error leaves what was produced; the draw shows it or nothing.
    let _ = FillTessellator::new().tessellate_path(path, &options, &mut builder);
    mesh
}

/// Tessellates the stroke of `path` (user space) with the context's stroke parameters.
fn stroke_mesh(ctx: &Context, path: &lyon_path::Path, tolerance: f32) -> Mesh {
    let p = &ctx.params;
    let pattern = p.get(VG_STROKE_DASH_PATTERN);
    let dashed;
    let path = if pattern.len() >= 2 {
        dashed = path::dash(
            path,
            pattern,
            p.float(VG_STROKE_DASH_PHASE),
            p.int(VG_STROKE_DASH_PHASE_RESET) != 0,
            tolerance,
        );
        &dashed
    } else {
        path
    };
    let cap = match p.int(VG_STROKE_CAP_STYLE) {
        VG_CAP_ROUND => LineCap::Round,
        VG_CAP_SQUARE => LineCap::Square,
        _ => LineCap::Butt,
    };
    let join = match p.int(VG_STROKE_JOIN_STYLE) {
        VG_JOIN_ROUND => LineJoin::Round,
        VG_JOIN_BEVEL => LineJoin::Bevel,
        _ => LineJoin::Miter,
    };
    let options = StrokeOptions::tolerance(tolerance)
        .with_line_width(p.float(VG_STROKE_LINE_WIDTH))
        .with_line_cap(cap)
        .with_line_join(join)
        .with_miter_limit(p.float(VG_STROKE_MITER_LIMIT).max(1.0));
    let mut mesh = Mesh::new();
    let mut builder = BuffersBuilder::new(&mut mesh, |v: StrokeVertex| v.position().to_array());
    let _ = StrokeTessellator::new().tessellate_path(path, &options, &mut builder);
    mesh
}

/// `vgDrawPath`: fills and/or strokes `path` (`VG_FILL_PATH | VG_STROKE_PATH`) with the
/// current paints through the path-user-to-surface matrix; the fill is drawn first.
#[no_mangle]
pub extern "C" fn vgDrawPath(path: VGPath, paint_modes: VGbitfield) {
    with_ctx((), |ctx| {
        check(ctx.paths.contains_key(&path), VG_BAD_HANDLE_ERROR)?;
        check(
            paint_modes != 0 && paint_modes & !(VG_FILL_PATH | VG_STROKE_PATH) == 0,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let m = ctx.matrix(VG_MATRIX_PATH_USER_TO_SURFACE);
        render_shape(ctx, Shape::Path(path), &m, paint_modes);
        Ok(())
    })
}

/// Where the path data of something drawn lives.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// A path object.
    Path(VGPath),
    /// A path glyph: font and glyph index.
    Glyph(VGHandle, u32),
}

impl Shape {
    fn data(self, ctx: &Context) -> Option<&PathData> {
        match self {
            Shape::Path(p) => ctx.paths.get(&p),
            Shape::Glyph(f, g) => match &ctx.fonts.get(&f)?.glyphs.get(&g)?.shape {
                state::GlyphShape::Path(p) => p.as_ref(),
                state::GlyphShape::Image(_) => None,
            },
        }
    }

    fn slot(self, mode: VGbitfield) -> (VGHandle, u32, u8) {
        let stroke = u8::from(mode == VG_STROKE_PATH);
        match self {
            Shape::Path(p) => (p, u32::MAX, stroke),
            Shape::Glyph(f, g) => (f, g, stroke),
        }
    }
}

/// Fills and/or strokes a shape through `m` with the current paints and state; the
/// tessellations are cached per shape and mode.
fn render_shape(ctx: &mut Context, shape: Shape, m: &Mat3, paint_modes: VGbitfield) {
    // A twentieth of a pixel on the surface, in user units: flattening a curve inside it
    // loses about (2/3)·tolerance·perimeter pixels (0.13 % of a circle of radius 50).
    let tolerance = (SURFACE_TOLERANCE / m.max_scale().max(1e-6)).clamp(1e-4, 1e4);
    let clip = scissor(ctx);
    let target = surface_target(ctx);
    for mode in [VG_FILL_PATH, VG_STROKE_PATH] {
        if paint_modes & mode == 0
            || (mode == VG_STROKE_PATH && ctx.params.float(VG_STROKE_LINE_WIDTH) <= 0.0)
        {
            continue;
        }
        let Some(fill) = paint_fill(ctx, mode) else {
            continue;
        };
        let Some(data) = shape.data(ctx) else {
            return;
        };
        // Non-finite coordinates have no geometry (and would trip the tessellator).
        if !data.user_coords().all(f32::is_finite) || !m.0.iter().all(|v| v.is_finite()) {
            return;
        }
        let slot = shape.slot(mode);
        let key = mesh_key(ctx, data, mode, tolerance);
        if ctx.meshes.get(&slot).is_none_or(|(k, _)| *k != key) {
            let lyon = data.to_lyon();
            let mesh = if mode == VG_FILL_PATH {
                fill_mesh(&lyon, ctx.params.int(VG_FILL_RULE), tolerance)
            } else {
                stroke_mesh(ctx, &lyon, tolerance)
            };
            ctx.meshes.insert(slot, (key, mesh));
        }
        if let Some((_, mesh)) = ctx.meshes.get(&slot) {
            ctx.renderer.draw(
                &mesh.vertices,
                &mesh.indices,
                m,
                Some(fill),
                None,
                target,
                clip.as_deref(),
            );
        }
    }
}

/// A hash of everything the fill or stroke tessellation of a path depends on: its data,
/// the tolerance, and the fill rule or the stroke parameters.
fn mesh_key(ctx: &Context, p: &PathData, mode: VGbitfield, tolerance: f32) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.segments.hash(&mut h);
    for c in &p.coords {
        c.to_bits().hash(&mut h);
    }
    (p.scale.to_bits(), p.bias.to_bits()).hash(&mut h);
    (mode, tolerance.to_bits()).hash(&mut h);
    let params: &[VGenum] = if mode == VG_FILL_PATH {
        &[VG_FILL_RULE]
    } else {
        &[
            VG_STROKE_LINE_WIDTH,
            VG_STROKE_CAP_STYLE,
            VG_STROKE_JOIN_STYLE,
            VG_STROKE_MITER_LIMIT,
            VG_STROKE_DASH_PATTERN,
            VG_STROKE_DASH_PHASE,
            VG_STROKE_DASH_PHASE_RESET,
        ]
    };
    for &id in params {
        for v in ctx.params.get(id) {
            v.to_bits().hash(&mut h);
        }
        // Separates consecutive variable-length vectors.
        u32::MAX.hash(&mut h);
    }
    h.finish()
}

// ---------------------------------------------------------------------------------------
// Paints
// ---------------------------------------------------------------------------------------

/// `vgCreatePaint`: an opaque black colour paint.
#[no_mangle]
pub extern "C" fn vgCreatePaint() -> VGPaint {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        let h = state::new_handle();
        ctx.paints.insert(h, Paint::new());
        Ok(h)
    })
}

/// `vgDestroyPaint`.
#[no_mangle]
pub extern "C" fn vgDestroyPaint(paint: VGPaint) {
    with_ctx((), |ctx| {
        let p = ctx.paints.remove(&paint).ok_or(VG_BAD_HANDLE_ERROR)?;
        Renderer::delete_texture(p.ramp_texture);
        Ok(())
    })
}

/// `vgSetPaint`: the paint for fill and/or stroke (`VG_INVALID_HANDLE`: the default
/// paint).
#[no_mangle]
pub extern "C" fn vgSetPaint(paint: VGPaint, paint_modes: VGbitfield) {
    with_ctx((), |ctx| {
        check(
            paint == VG_INVALID_HANDLE || ctx.paints.contains_key(&paint),
            VG_BAD_HANDLE_ERROR,
        )?;
        check(
            paint_modes != 0 && paint_modes & !(VG_FILL_PATH | VG_STROKE_PATH) == 0,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        if paint_modes & VG_FILL_PATH != 0 {
            ctx.fill_paint = paint;
        }
        if paint_modes & VG_STROKE_PATH != 0 {
            ctx.stroke_paint = paint;
        }
        Ok(())
    })
}

/// `vgGetPaint`.
#[no_mangle]
pub extern "C" fn vgGetPaint(paint_mode: VGbitfield) -> VGPaint {
    with_ctx(VG_INVALID_HANDLE, |ctx| match paint_mode {
        VG_FILL_PATH => Ok(ctx.fill_paint),
        VG_STROKE_PATH => Ok(ctx.stroke_paint),
        _ => Err(VG_ILLEGAL_ARGUMENT_ERROR),
    })
}

/// `vgSetColor`: `VG_PAINT_COLOR` from 0xRRGGBBAA.
#[no_mangle]
pub extern "C" fn vgSetColor(paint: VGPaint, rgba: VGuint) {
    with_ctx((), |ctx| {
        let p = ctx.paints.get_mut(&paint).ok_or(VG_BAD_HANDLE_ERROR)?;
        let c = rgba.to_be_bytes().map(|b| b as f32 / 255.0);
        p.params.set(VG_PAINT_COLOR, true, &c)
    })
}

/// `vgGetColor`: `VG_PAINT_COLOR` as 0xRRGGBBAA.
#[no_mangle]
pub extern "C" fn vgGetColor(paint: VGPaint) -> VGuint {
    with_ctx(0, |ctx| {
        let p = ctx.paints.get(&paint).ok_or(VG_BAD_HANDLE_ERROR)?;
        let c = p.params.get(VG_PAINT_COLOR);
        let b = |i: usize| (c[i].clamp(0.0, 1.0) * 255.0).round() as u8;
        Ok(u32::from_be_bytes([b(0), b(1), b(2), b(3)]))
    })
}

/// `vgPaintPattern`: the image a `VG_PAINT_TYPE_PATTERN` paint repeats
/// (`VG_INVALID_HANDLE`: none, the paint's colour is used).
#[no_mangle]
pub extern "C" fn vgPaintPattern(paint: VGPaint, pattern: VGImage) {
    with_ctx((), |ctx| {
        check(
            pattern == VG_INVALID_HANDLE || ctx.images.contains_key(&pattern),
            VG_BAD_HANDLE_ERROR,
        )?;
        let p = ctx.paints.get_mut(&paint).ok_or(VG_BAD_HANDLE_ERROR)?;
        p.pattern = pattern;
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Images, clear, read-back
// ---------------------------------------------------------------------------------------

/// `vgCreateImage`: a transparent black image of a `VG_*RGBA_8888`-family format.
#[no_mangle]
pub extern "C" fn vgCreateImage(
    format: VGenum,
    width: VGint,
    height: VGint,
    allowed_quality: VGbitfield,
) -> VGImage {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        check(pixels::supported(format), VG_UNSUPPORTED_IMAGE_FORMAT_ERROR)?;
        check(
            (1..=MAX_IMAGE_SIZE).contains(&width)
                && (1..=MAX_IMAGE_SIZE).contains(&height)
                && allowed_quality != 0
                && allowed_quality & !7 == 0,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let px = vec![0u8; width as usize * height as usize * 4];
        let texture = Renderer::create_texture(width, height, &px, gl::GL_NEAREST);
        let h = state::new_handle();
        ctx.images.insert(
            h,
            Image {
                format,
                width,
                height,
                pixels: px,
                texture,
                parent: VG_INVALID_HANDLE,
            },
        );
        Ok(h)
    })
}

/// `vgDestroyImage`.
#[no_mangle]
pub extern "C" fn vgDestroyImage(image: VGImage) {
    with_ctx((), |ctx| {
        let img = ctx.images.remove(&image).ok_or(VG_BAD_HANDLE_ERROR)?;
        Renderer::delete_texture(img.texture);
        Ok(())
    })
}

/// Checks the arguments shared by the pixel-transfer calls.
fn check_transfer(
    data: *const c_void,
    format: VGenum,
    width: VGint,
    height: VGint,
) -> Result<(), VGErrorCode> {
    check(pixels::supported(format), VG_UNSUPPORTED_IMAGE_FORMAT_ERROR)?;
    check(
        aligned(data, 4) && width > 0 && height > 0,
        VG_ILLEGAL_ARGUMENT_ERROR,
    )
}

/// `vgImageSubData`: writes `width × height` pixels of `data` (rows `stride` bytes apart,
/// bottom row first, `format`) at (x, y) of the image, clipped to it; uploads the
/// changed region to the image's texture.
///
/// # Safety
///
/// `data` must hold `height` rows of `width` pixels, `stride` bytes apart.
#[no_mangle]
pub unsafe extern "C" fn vgImageSubData(
    image: VGImage,
    data: *const c_void,
    stride: VGint,
    format: VGenum,
    x: VGint,
    y: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        let img = ctx.images.get_mut(&image).ok_or(VG_BAD_HANDLE_ERROR)?;
        check_transfer(data, format, width, height)?;
        let Some(r) = render::intersect([x, y, width, height], [0, 0, img.width, img.height])
        else {
            return Ok(());
        };
        let mut region = Vec::with_capacity(r[2] as usize * r[3] as usize * 4);
        for row in r[1]..r[1] + r[3] {
            for col in r[0]..r[0] + r[2] {
                let off = (row - y) as isize * stride as isize + (col - x) as isize * 4;
                // SAFETY: (row − y, col − x) lies inside the caller's width × height
                // rectangle, which the caller guarantees readable.
                let word = unsafe {
                    std::ptr::read_unaligned(data.cast::<u8>().offset(off).cast::<u32>())
                };
                let px = pixels::decode(format, word);
                let i = (row as usize * img.width as usize + col as usize) * 4;
                img.pixels[i..i + 4].copy_from_slice(&px);
                region.extend_from_slice(&px);
            }
        }
        Renderer::update_texture(img.texture, r, &region);
        Ok(())
    })
}

/// Writes `px` (RGBA8 rows of the clipped rectangle `r`) into caller memory laid out as
/// the (x, y, stride, format) rectangle.
///
/// # Safety
///
/// `data` must hold the caller's rectangle, which contains `r`.
unsafe fn put_pixels(
    data: *mut c_void,
    stride: VGint,
    format: VGenum,
    (x, y): (i32, i32),
    r: [i32; 4],
    px: &[u8],
) {
    for row in 0..r[3] {
        for col in 0..r[2] {
            let i = (row as usize * r[2] as usize + col as usize) * 4;
            let word = pixels::encode(format, [px[i], px[i + 1], px[i + 2], px[i + 3]]);
            let off = (r[1] + row - y) as isize * stride as isize + (r[0] + col - x) as isize * 4;
            // SAFETY: the offset lies inside the caller's rectangle (r is within it).
            unsafe { std::ptr::write_unaligned(data.cast::<u8>().offset(off).cast::<u32>(), word) };
        }
    }
}

/// `vgGetImageSubData`: reads a rectangle of an image into `data`.
///
/// # Safety
///
/// `data` must have room for `height` rows of `width` pixels, `stride` bytes apart.
#[no_mangle]
pub unsafe extern "C" fn vgGetImageSubData(
    image: VGImage,
    data: *mut c_void,
    stride: VGint,
    format: VGenum,
    x: VGint,
    y: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        let img = ctx.images.get(&image).ok_or(VG_BAD_HANDLE_ERROR)?;
        check_transfer(data, format, width, height)?;
        let Some(r) = render::intersect([x, y, width, height], [0, 0, img.width, img.height])
        else {
            return Ok(());
        };
        let mut px = Vec::with_capacity(r[2] as usize * r[3] as usize * 4);
        for row in r[1]..r[1] + r[3] {
            let i = (row as usize * img.width as usize + r[0] as usize) * 4;
            px.extend_from_slice(&img.pixels[i..i + r[2] as usize * 4]);
        }
        // SAFETY: the caller gives room for the rectangle, which contains r.
        unsafe { put_pixels(data, stride, format, (x, y), r, &px) };
        Ok(())
    })
}

/// `vgReadPixels`: reads a rectangle of the current surface (clipped to it) into `data`.
///
/// # Safety
///
/// `data` must have room for `height` rows of `width` pixels, `stride` bytes apart.
#[no_mangle]
pub unsafe extern "C" fn vgReadPixels(
    data: *mut c_void,
    stride: VGint,
    format: VGenum,
    sx: VGint,
    sy: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |_| {
        check_transfer(data, format, width, height)?;
        let Some((w, h)) = render::surface_size() else {
            return Ok(());
        };
        let Some(r) = render::intersect([sx, sy, width, height], [0, 0, w, h]) else {
            return Ok(());
        };
        let px = Renderer::read_pixels(r);
        // SAFETY: the caller gives room for the rectangle, which contains r.
        unsafe { put_pixels(data, stride, format, (sx, sy), r, &px) };
        Ok(())
    })
}

/// Copies the `w × h` pixels at (sx, sy) of a texture of `size` to (dx, dy) of the
/// surface: a textured quad through a translation, blending off, scissoring off (pixel
/// copies to the surface ignore matrices, blending, masking and scissoring here).
fn blit(ctx: &mut Context, texture: u32, size: (i32, i32), src: [i32; 4], dst: (i32, i32)) {
    let target = Target::Surface {
        blend: VG_BLEND_SRC,
        mask: 0,
    };
    blit_to(ctx, texture, size, src, dst, target);
}

/// [`blit`] into any target.
fn blit_to(
    ctx: &mut Context,
    texture: u32,
    size: (i32, i32),
    src: [i32; 4],
    dst: (i32, i32),
    target: Target,
) {
    let Some(r) = render::intersect(src, [0, 0, size.0, size.1]) else {
        return;
    };
    let (x0, y0, x1, y1) = (
        r[0] as f32,
        r[1] as f32,
        (r[0] + r[2]) as f32,
        (r[1] + r[3]) as f32,
    );
    let verts = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
    let m = Mat3::translate((dst.0 - src[0]) as f32, (dst.1 - src[1]) as f32);
    let image = ImageDraw {
        texture,
        size: [size.0 as f32, size.1 as f32],
        mode: 1,
    };
    ctx.renderer.draw(
        &verts,
        &[0, 1, 2, 0, 2, 3],
        &m,
        None,
        Some(image),
        target,
        None,
    );
}

/// Decodes a caller's pixel rectangle to RGBA8 rows.
///
/// # Safety
///
/// `data` must hold `h` rows of `w` pixels, `stride` bytes apart.
unsafe fn decode_rect(
    data: *const c_void,
    stride: VGint,
    format: VGenum,
    w: i32,
    h: i32,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(w as usize * h as usize * 4);
    for row in 0..h {
        for col in 0..w {
            let off = row as isize * stride as isize + col as isize * 4;
            // SAFETY: (row, col) lies inside the caller's rectangle.
            let word =
                unsafe { std::ptr::read_unaligned(data.cast::<u8>().offset(off).cast::<u32>()) };
            out.extend_from_slice(&pixels::decode(format, word));
        }
    }
    out
}

/// `vgWritePixels`: copies caller pixels to (dx, dy) of the surface (through a temporary
/// texture drawn as a quad).
///
/// # Safety
///
/// `data` must hold `height` rows of `width` pixels, `stride` bytes apart.
#[no_mangle]
pub unsafe extern "C" fn vgWritePixels(
    data: *const c_void,
    stride: VGint,
    format: VGenum,
    dx: VGint,
    dy: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        check_transfer(data, format, width, height)?;
        // SAFETY: the caller passes the rectangle at `data`.
        let px = unsafe { decode_rect(data, stride, format, width, height) };
        let t = Renderer::create_texture(width, height, &px, gl::GL_NEAREST);
        blit(ctx, t, (width, height), [0, 0, width, height], (dx, dy));
        Renderer::delete_texture(t);
        Ok(())
    })
}

/// `vgSetPixels`: copies a rectangle of an image to (dx, dy) of the surface.
#[no_mangle]
pub extern "C" fn vgSetPixels(
    dx: VGint,
    dy: VGint,
    src: VGImage,
    sx: VGint,
    sy: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        let img = ctx.images.get(&src).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let (t, size) = (img.texture, (img.width, img.height));
        blit(ctx, t, size, [sx, sy, width, height], (dx, dy));
        Ok(())
    })
}

/// `vgCopyPixels`: copies a rectangle of the surface to (dx, dy) of it (read back, then
/// drawn, so overlapping rectangles copy correctly).
#[no_mangle]
pub extern "C" fn vgCopyPixels(
    dx: VGint,
    dy: VGint,
    sx: VGint,
    sy: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let Some((w, h)) = render::surface_size() else {
            return Ok(());
        };
        let Some(r) = render::intersect([sx, sy, width, height], [0, 0, w, h]) else {
            return Ok(());
        };
        let px = Renderer::read_pixels(r);
        let t = Renderer::create_texture(r[2], r[3], &px, gl::GL_NEAREST);
        blit(
            ctx,
            t,
            (r[2], r[3]),
            [0, 0, r[2], r[3]],
            (dx + r[0] - sx, dy + r[1] - sy),
        );
        Renderer::delete_texture(t);
        Ok(())
    })
}

/// Writes `w × h` RGBA8 pixels `px` (rows bottom first) into an image at (x, y), clipped,
/// and uploads the changed region.
fn put_image(img: &mut Image, x: i32, y: i32, w: i32, h: i32, px: &[u8]) {
    let Some(r) = render::intersect([x, y, w, h], [0, 0, img.width, img.height]) else {
        return;
    };
    let mut region = Vec::with_capacity(r[2] as usize * r[3] as usize * 4);
    for row in r[1]..r[1] + r[3] {
        let s = ((row - y) as usize * w as usize + (r[0] - x) as usize) * 4;
        let d = (row as usize * img.width as usize + r[0] as usize) * 4;
        let n = r[2] as usize * 4;
        img.pixels[d..d + n].copy_from_slice(&px[s..s + n]);
        region.extend_from_slice(&px[s..s + n]);
    }
    Renderer::update_texture(img.texture, r, &region);
}

/// `vgGetPixels`: copies a rectangle of the surface into an image at (dx, dy).
#[no_mangle]
pub extern "C" fn vgGetPixels(
    dst: VGImage,
    dx: VGint,
    dy: VGint,
    sx: VGint,
    sy: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        check(ctx.images.contains_key(&dst), VG_BAD_HANDLE_ERROR)?;
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let Some((w, h)) = render::surface_size() else {
            return Ok(());
        };
        let Some(r) = render::intersect([sx, sy, width, height], [0, 0, w, h]) else {
            return Ok(());
        };
        let px = Renderer::read_pixels(r);
        if let Some(img) = ctx.images.get_mut(&dst) {
            put_image(img, dx + r[0] - sx, dy + r[1] - sy, r[2], r[3], &px);
        }
        Ok(())
    })
}

/// `vgCopyImage`: copies a rectangle of `src` into `dst` at (dx, dy) (`dither` ignored).
#[no_mangle]
pub extern "C" fn vgCopyImage(
    dst: VGImage,
    dx: VGint,
    dy: VGint,
    src: VGImage,
    sx: VGint,
    sy: VGint,
    width: VGint,
    height: VGint,
    _dither: VGboolean,
) {
    with_ctx((), |ctx| {
        let s = ctx.images.get(&src).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(ctx.images.contains_key(&dst), VG_BAD_HANDLE_ERROR)?;
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let Some(r) = render::intersect([sx, sy, width, height], [0, 0, s.width, s.height]) else {
            return Ok(());
        };
        let mut px = Vec::with_capacity(r[2] as usize * r[3] as usize * 4);
        for row in r[1]..r[1] + r[3] {
            let i = (row as usize * s.width as usize + r[0] as usize) * 4;
            px.extend_from_slice(&s.pixels[i..i + r[2] as usize * 4]);
        }
        if let Some(d) = ctx.images.get_mut(&dst) {
            put_image(d, dx + r[0] - sx, dy + r[1] - sy, r[2], r[3], &px);
        }
        Ok(())
    })
}

/// `vgClearImage`: fills a rectangle of an image with `VG_CLEAR_COLOR`.
#[no_mangle]
pub extern "C" fn vgClearImage(image: VGImage, x: VGint, y: VGint, width: VGint, height: VGint) {
    with_ctx((), |ctx| {
        check(ctx.images.contains_key(&image), VG_BAD_HANDLE_ERROR)?;
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let c = ctx.params.get(VG_CLEAR_COLOR);
        let px = [c[0], c[1], c[2], c[3]].map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8);
        if let Some(img) = ctx.images.get_mut(&image) {
            // Clipped first, so a huge rectangle allocates only the image's pixels.
            let Some(r) = render::intersect([x, y, width, height], [0, 0, img.width, img.height])
            else {
                return Ok(());
            };
            let rows: Vec<u8> = std::iter::repeat_n(px, r[2] as usize * r[3] as usize)
                .flatten()
                .collect();
            put_image(img, r[0], r[1], r[2], r[3], &rows);
        }
        Ok(())
    })
}

/// Draws an image as a textured quad from (0, 0) to (width, height) through `m`, in the
/// current image mode (multiply and stencil use the fill paint, evaluated in the image's
/// user space), blend mode, mask and scissoring.
fn draw_image_through(ctx: &mut Context, image: VGImage, m: &Mat3) {
    let Some(img) = ctx.images.get(&image) else {
        return;
    };
    let (w, h) = (img.width as f32, img.height as f32);
    let texture = img.texture;
    let mode = match ctx.params.int(VG_IMAGE_MODE) {
        VG_DRAW_IMAGE_MULTIPLY => 2,
        VG_DRAW_IMAGE_STENCIL => 3,
        _ => 1,
    };
    let fill = if mode == 1 {
        None
    } else {
        match paint_fill(ctx, VG_FILL_PATH) {
            Some(f) => Some(f),
            // A singular paint matrix: nothing drawn.
            None => return,
        }
    };
    let image = ImageDraw {
        texture,
        size: [w, h],
        mode,
    };
    let verts = [[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]];
    let clip = scissor(ctx);
    let target = surface_target(ctx);
    ctx.renderer.draw(
        &verts,
        &[0, 1, 2, 0, 2, 3],
        m,
        fill,
        Some(image),
        target,
        clip.as_deref(),
    );
}

/// `vgDrawImage`: draws the image as a textured quad from (0, 0) to (width, height) in
/// image user space, through the image-user-to-surface matrix (projective allowed).
#[no_mangle]
pub extern "C" fn vgDrawImage(image: VGImage) {
    with_ctx((), |ctx| {
        check(ctx.images.contains_key(&image), VG_BAD_HANDLE_ERROR)?;
        let m = ctx.matrix(VG_MATRIX_IMAGE_USER_TO_SURFACE);
        draw_image_through(ctx, image, &m);
        Ok(())
    })
}

/// `vgClear`: fills the rectangle (surface pixels) with `VG_CLEAR_COLOR`, honouring
/// scissoring.
#[no_mangle]
pub extern "C" fn vgClear(x: VGint, y: VGint, width: VGint, height: VGint) {
    with_ctx((), |ctx| {
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let c = ctx.params.get(VG_CLEAR_COLOR);
        let color = [c[0], c[1], c[2], c[3]].map(|v| v.clamp(0.0, 1.0));
        let area = [x, y, width, height];
        let rects: Vec<[i32; 4]> = match scissor(ctx) {
            None => vec![area],
            Some(s) => s
                .iter()
                .filter_map(|r| render::intersect(*r, area))
                .collect(),
        };
        ctx.renderer.clear(color, &rects);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Child images and filters
// ---------------------------------------------------------------------------------------

/// `vgChildImage`: a new image holding a copy of the parent's rectangle. Unlike the
/// specification's children it does not share storage: later writes to either are not
/// seen by the other.
#[no_mangle]
pub extern "C" fn vgChildImage(
    parent: VGImage,
    x: VGint,
    y: VGint,
    width: VGint,
    height: VGint,
) -> VGImage {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        let p = ctx.images.get(&parent).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(
            x >= 0
                && y >= 0
                && width > 0
                && height > 0
                && x as i64 + width as i64 <= p.width as i64
                && y as i64 + height as i64 <= p.height as i64,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let mut px = Vec::with_capacity(width as usize * height as usize * 4);
        for row in y..y + height {
            let i = (row as usize * p.width as usize + x as usize) * 4;
            px.extend_from_slice(&p.pixels[i..i + width as usize * 4]);
        }
        let format = p.format;
        let texture = Renderer::create_texture(width, height, &px, gl::GL_NEAREST);
        let h = state::new_handle();
        ctx.images.insert(
            h,
            Image {
                format,
                width,
                height,
                pixels: px,
                texture,
                parent,
            },
        );
        Ok(h)
    })
}

/// `vgGetParent`: the image a child was made from, or the image itself when it has none
/// (or its parent was destroyed).
#[no_mangle]
pub extern "C" fn vgGetParent(image: VGImage) -> VGImage {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        let img = ctx.images.get(&image).ok_or(VG_BAD_HANDLE_ERROR)?;
        Ok(if ctx.images.contains_key(&img.parent) {
            img.parent
        } else {
            image
        })
    })
}

/// Runs a filter from `src` into `dst` over the region both cover from (0, 0): `f(src,
/// x, y)` gives each destination pixel. The images must differ.
fn filter(
    ctx: &mut Context,
    dst: VGImage,
    src: VGImage,
    f: &mut dyn FnMut(&filters::Src, i32, i32) -> [f32; 4],
) -> Result<(), VGErrorCode> {
    let s = ctx.images.get(&src).ok_or(VG_BAD_HANDLE_ERROR)?;
    let d = ctx.images.get(&dst).ok_or(VG_BAD_HANDLE_ERROR)?;
    check(src != dst, VG_ILLEGAL_ARGUMENT_ERROR)?;
    let (w, h) = (s.width.min(d.width), s.height.min(d.height));
    let view = filters::Src {
        pixels: &s.pixels,
        width: s.width,
        height: s.height,
    };
    let px = filters::generate(w, h, |x, y| f(&view, x, y));
    if let Some(d) = ctx.images.get_mut(&dst) {
        put_image(d, 0, 0, w, h, &px);
    }
    Ok(())
}

/// `vgColorMatrix`: `dst = M · (r, g, b, a, 1)` per pixel, M 4×5 column-major.
///
/// # Safety
///
/// `matrix` must point to 20 floats.
#[no_mangle]
pub unsafe extern "C" fn vgColorMatrix(dst: VGImage, src: VGImage, matrix: *const VGfloat) {
    with_ctx((), |ctx| {
        check(!matrix.is_null(), VG_ILLEGAL_ARGUMENT_ERROR)?;
        // SAFETY: the caller passes 20 floats.
        let m = unsafe { slice(matrix, 20) }?.to_vec();
        filter(ctx, dst, src, &mut |s, x, y| {
            filters::color_matrix(&m, s.at(x, y, VG_TILE_PAD, [0.0; 4]))
        })
    })
}

fn tiling_ok(tiling: VGenum) -> Result<(), VGErrorCode> {
    check(
        (VG_TILE_FILL..=VG_TILE_REFLECT).contains(&tiling),
        VG_ILLEGAL_ARGUMENT_ERROR,
    )
}

fn tile_fill(ctx: &Context) -> [f32; 4] {
    let t = ctx.params.get(VG_TILE_FILL_COLOR);
    [t[0], t[1], t[2], t[3]]
}

/// `vgConvolve`: a `kernel_width × kernel_height` integer kernel (column-major), shifted,
/// scaled and biased, edges by `tiling`.
///
/// # Safety
///
/// `kernel` must point to `kernel_width · kernel_height` shorts.
#[no_mangle]
pub unsafe extern "C" fn vgConvolve(
    dst: VGImage,
    src: VGImage,
    kernel_width: VGint,
    kernel_height: VGint,
    shift_x: VGint,
    shift_y: VGint,
    kernel: *const VGshort,
    scale: VGfloat,
    bias: VGfloat,
    tiling: VGenum,
) {
    with_ctx((), |ctx| {
        tiling_ok(tiling)?;
        check(
            (1..=7).contains(&kernel_width)
                && (1..=7).contains(&kernel_height)
                && !kernel.is_null(),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        // SAFETY: the caller passes kernel_width · kernel_height shorts.
        let k = unsafe { slice(kernel, kernel_width * kernel_height) }?.to_vec();
        let fill = tile_fill(ctx);
        let kf = |i: i32, j: i32| k[(i * kernel_height + j) as usize] as f32;
        filter(ctx, dst, src, &mut |s, x, y| {
            filters::convolve_at(
                s,
                x,
                y,
                (kernel_width, kernel_height),
                (shift_x, shift_y),
                &kf,
                scale,
                bias,
                tiling,
                fill,
            )
        })
    })
}

/// `vgSeparableConvolve`: the convolution with kernel `kx[i] · ky[j]`.
///
/// # Safety
///
/// `kernel_x` and `kernel_y` must point to `kernel_width` and `kernel_height` shorts.
#[no_mangle]
pub unsafe extern "C" fn vgSeparableConvolve(
    dst: VGImage,
    src: VGImage,
    kernel_width: VGint,
    kernel_height: VGint,
    shift_x: VGint,
    shift_y: VGint,
    kernel_x: *const VGshort,
    kernel_y: *const VGshort,
    scale: VGfloat,
    bias: VGfloat,
    tiling: VGenum,
) {
    with_ctx((), |ctx| {
        tiling_ok(tiling)?;
        check(
            (1..=15).contains(&kernel_width)
                && (1..=15).contains(&kernel_height)
                && !kernel_x.is_null()
                && !kernel_y.is_null(),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        // SAFETY: the caller passes the two kernels.
        let (kx, ky) = unsafe {
            (
                slice(kernel_x, kernel_width)?.to_vec(),
                slice(kernel_y, kernel_height)?.to_vec(),
            )
        };
        let fill = tile_fill(ctx);
        let kf = |i: i32, j: i32| kx[i as usize] as f32 * ky[j as usize] as f32;
        filter(ctx, dst, src, &mut |s, x, y| {
            filters::convolve_at(
                s,
                x,
                y,
                (kernel_width, kernel_height),
                (shift_x, shift_y),
                &kf,
                scale,
                bias,
                tiling,
                fill,
            )
        })
    })
}

/// `vgGaussianBlur`: a separable Gaussian of the given standard deviations (radius 3σ).
#[no_mangle]
pub extern "C" fn vgGaussianBlur(
    dst: VGImage,
    src: VGImage,
    std_dev_x: VGfloat,
    std_dev_y: VGfloat,
    tiling: VGenum,
) {
    with_ctx((), |ctx| {
        tiling_ok(tiling)?;
        check(
            std_dev_x > 0.0 && std_dev_y > 0.0 && std_dev_x <= 16.0 && std_dev_y <= 16.0,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let (gx, gy) = (filters::gaussian(std_dev_x), filters::gaussian(std_dev_y));
        let (kw, kh) = (gx.len() as i32, gy.len() as i32);
        let fill = tile_fill(ctx);
        let kf = |i: i32, j: i32| gx[i as usize] * gy[j as usize];
        filter(ctx, dst, src, &mut |s, x, y| {
            filters::convolve_at(
                s,
                x,
                y,
                (kw, kh),
                (kw / 2, kh / 2),
                &kf,
                1.0,
                0.0,
                tiling,
                fill,
            )
        })
    })
}

/// `vgLookup`: each channel through its own 256-entry table.
///
/// # Safety
///
/// Each table must point to 256 bytes.
#[no_mangle]
pub unsafe extern "C" fn vgLookup(
    dst: VGImage,
    src: VGImage,
    red: *const VGubyte,
    green: *const VGubyte,
    blue: *const VGubyte,
    alpha: *const VGubyte,
    _output_linear: VGboolean,
    _output_premultiplied: VGboolean,
) {
    with_ctx((), |ctx| {
        check(
            [red, green, blue, alpha].iter().all(|p| !p.is_null()),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        // SAFETY: the caller passes 256 bytes per table.
        let luts = unsafe {
            [
                slice(red, 256)?.to_vec(),
                slice(green, 256)?.to_vec(),
                slice(blue, 256)?.to_vec(),
                slice(alpha, 256)?.to_vec(),
            ]
        };
        filter(ctx, dst, src, &mut |s, x, y| {
            let c = filters::to_u8(s.at(x, y, VG_TILE_PAD, [0.0; 4]));
            [0, 1, 2, 3].map(|k| luts[k][c[k] as usize] as f32 / 255.0)
        })
    })
}

/// `vgLookupSingle`: one channel (`VG_RED` 8, `VG_GREEN` 4, `VG_BLUE` 2, `VG_ALPHA` 1)
/// through a 256-entry table of 0xRRGGBBAA colours.
///
/// # Safety
///
/// `table` must point to 256 integers.
#[no_mangle]
pub unsafe extern "C" fn vgLookupSingle(
    dst: VGImage,
    src: VGImage,
    table: *const VGuint,
    source_channel: VGenum,
    _output_linear: VGboolean,
    _output_premultiplied: VGboolean,
) {
    with_ctx((), |ctx| {
        let channel = match source_channel {
            8 => 0,
            4 => 1,
            2 => 2,
            1 => 3,
            _ => return Err(VG_ILLEGAL_ARGUMENT_ERROR),
        };
        check(!table.is_null(), VG_ILLEGAL_ARGUMENT_ERROR)?;
        // SAFETY: the caller passes 256 integers.
        let lut = unsafe { slice(table, 256) }?.to_vec();
        filter(ctx, dst, src, &mut |s, x, y| {
            let c = filters::to_u8(s.at(x, y, VG_TILE_PAD, [0.0; 4]));
            lut[c[channel] as usize]
                .to_be_bytes()
                .map(|b| b as f32 / 255.0)
        })
    })
}

// ---------------------------------------------------------------------------------------
// Masks
// ---------------------------------------------------------------------------------------

/// How draws to the surface combine: the blend mode, and the mask when masking is on and
/// a mask of the surface's size exists (without one the mask is all ones).
fn surface_target(ctx: &Context) -> Target {
    let blend = ctx.params.int(VG_BLEND_MODE);
    let mut mask = 0;
    if ctx.params.int(VG_MASKING) != 0 {
        if let (Some(m), Some(size)) = (ctx.renderer.mask, render::surface_size()) {
            if (m.width, m.height) == size {
                mask = m.texture;
            }
        }
    }
    Target::Surface { blend, mask }
}

fn check_mask_op(op: VGenum) -> Result<(), VGErrorCode> {
    check(
        (VG_CLEAR_MASK..=VG_SUBTRACT_MASK).contains(&op),
        VG_ILLEGAL_ARGUMENT_ERROR,
    )
}

/// `vgMask`: combines the mask over the rectangle with an image's alpha or a mask layer
/// placed at (x, y) (`VG_CLEAR_MASK` / `VG_FILL_MASK` set it to 0 / 1 and ignore the
/// source).
#[no_mangle]
pub extern "C" fn vgMask(
    mask: VGHandle,
    op: VGenum,
    x: VGint,
    y: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        check_mask_op(op)?;
        let source = if op == VG_CLEAR_MASK || op == VG_FILL_MASK {
            None
        } else {
            let img = ctx
                .images
                .get(&mask)
                .or_else(|| ctx.mask_layers.get(&mask))
                .ok_or(VG_BAD_HANDLE_ERROR)?;
            Some((img.texture, (img.width, img.height)))
        };
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let Some((w, h)) = render::surface_size() else {
            return Ok(());
        };
        let buffer = ctx.renderer.mask_buffer(w, h);
        match source {
            None => {
                let v = if op == VG_FILL_MASK { 1.0 } else { 0.0 };
                Renderer::clear_in(buffer.framebuffer, [v; 4], &[[x, y, width, height]]);
            }
            Some((texture, size)) => {
                let target = Target::Mask {
                    framebuffer: buffer.framebuffer,
                    op,
                };
                blit_to(ctx, texture, size, [0, 0, width, height], (x, y), target);
            }
        }
        Ok(())
    })
}

/// `vgRenderToMask`: combines the mask with the coverage of the path's fill and/or stroke
/// (current fill rule, stroke parameters and path matrix; scissoring does not apply).
#[no_mangle]
pub extern "C" fn vgRenderToMask(path: VGPath, paint_modes: VGbitfield, op: VGenum) {
    with_ctx((), |ctx| {
        check(ctx.paths.contains_key(&path), VG_BAD_HANDLE_ERROR)?;
        check_mask_op(op)?;
        check(
            paint_modes != 0 && paint_modes & !(VG_FILL_PATH | VG_STROKE_PATH) == 0,
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let Some((w, h)) = render::surface_size() else {
            return Ok(());
        };
        let buffer = ctx.renderer.mask_buffer(w, h);
        let whole = [[0, 0, w, h]];
        if op == VG_CLEAR_MASK || op == VG_FILL_MASK {
            let v = if op == VG_FILL_MASK { 1.0 } else { 0.0 };
            Renderer::clear_in(buffer.framebuffer, [v; 4], &whole);
            return Ok(());
        }
        // Coverage goes into the mask directly (set: cleared first, then a union), or, to
        // intersect, into a scratch buffer that then multiplies the whole mask.
        let (framebuffer, cover_op) = match op {
            VG_SET_MASK => {
                Renderer::clear_in(buffer.framebuffer, [0.0; 4], &whole);
                (buffer.framebuffer, VG_UNION_MASK)
            }
            VG_INTERSECT_MASK => (ctx.renderer.scratch_buffer(w, h).framebuffer, VG_UNION_MASK),
            _ => (buffer.framebuffer, op),
        };
        let m = ctx.matrix(VG_MATRIX_PATH_USER_TO_SURFACE);
        let tolerance = (SURFACE_TOLERANCE / m.max_scale().max(1e-6)).clamp(1e-4, 1e4);
        let data = ctx.paths.get(&path).ok_or(VG_BAD_HANDLE_ERROR)?;
        if !data.user_coords().all(f32::is_finite) {
            return Ok(());
        }
        let shape = data.to_lyon();
        let target = Target::Mask {
            framebuffer,
            op: cover_op,
        };
        for mode in [VG_FILL_PATH, VG_STROKE_PATH] {
            if paint_modes & mode == 0 {
                continue;
            }
            let mesh = if mode == VG_FILL_PATH {
                fill_mesh(&shape, ctx.params.int(VG_FILL_RULE), tolerance)
            } else if ctx.params.float(VG_STROKE_LINE_WIDTH) > 0.0 {
                stroke_mesh(ctx, &shape, tolerance)
            } else {
                continue;
            };
            let white = Fill::Color([1.0; 4]);
            ctx.renderer.draw(
                &mesh.vertices,
                &mesh.indices,
                &m,
                Some(white),
                None,
                target,
                None,
            );
        }
        if op == VG_INTERSECT_MASK {
            if let Some(scratch) = ctx.renderer.scratch_buffer_existing() {
                let target = Target::Mask {
                    framebuffer: buffer.framebuffer,
                    op: VG_INTERSECT_MASK,
                };
                blit_to(ctx, scratch.texture, (w, h), whole[0], (0, 0), target);
            }
        }
        Ok(())
    })
}

/// `vgCreateMaskLayer`: a `width × height` mask layer, all ones.
#[no_mangle]
pub extern "C" fn vgCreateMaskLayer(width: VGint, height: VGint) -> VGMaskLayer {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        check(
            (1..=MAX_IMAGE_SIZE).contains(&width) && (1..=MAX_IMAGE_SIZE).contains(&height),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let px = vec![255u8; width as usize * height as usize * 4];
        let texture = Renderer::create_texture(width, height, &px, gl::GL_NEAREST);
        let h = state::new_handle();
        ctx.mask_layers.insert(
            h,
            Image {
                format: VG_sRGBA_8888,
                width,
                height,
                pixels: px,
                texture,
                parent: VG_INVALID_HANDLE,
            },
        );
        Ok(h)
    })
}

/// `vgDestroyMaskLayer`.
#[no_mangle]
pub extern "C" fn vgDestroyMaskLayer(layer: VGMaskLayer) {
    with_ctx((), |ctx| {
        let l = ctx.mask_layers.remove(&layer).ok_or(VG_BAD_HANDLE_ERROR)?;
        Renderer::delete_texture(l.texture);
        Ok(())
    })
}

/// `vgFillMaskLayer`: sets a rectangle of a mask layer to `value` (0..1).
#[no_mangle]
pub extern "C" fn vgFillMaskLayer(
    layer: VGMaskLayer,
    x: VGint,
    y: VGint,
    width: VGint,
    height: VGint,
    value: VGfloat,
) {
    with_ctx((), |ctx| {
        let l = ctx.mask_layers.get_mut(&layer).ok_or(VG_BAD_HANDLE_ERROR)?;
        check(
            width > 0 && height > 0 && (0.0..=1.0).contains(&value),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        let Some(r) = render::intersect([x, y, width, height], [0, 0, l.width, l.height]) else {
            return Ok(());
        };
        let v = (value * 255.0).round() as u8;
        let rows = vec![v; r[2] as usize * r[3] as usize * 4];
        put_image(l, r[0], r[1], r[2], r[3], &rows);
        Ok(())
    })
}

/// `vgCopyMask`: copies a rectangle of the surface's mask into a mask layer at (dx, dy).
#[no_mangle]
pub extern "C" fn vgCopyMask(
    layer: VGMaskLayer,
    dx: VGint,
    dy: VGint,
    sx: VGint,
    sy: VGint,
    width: VGint,
    height: VGint,
) {
    with_ctx((), |ctx| {
        check(ctx.mask_layers.contains_key(&layer), VG_BAD_HANDLE_ERROR)?;
        check(width > 0 && height > 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let Some((w, h)) = render::surface_size() else {
            return Ok(());
        };
        let buffer = ctx.renderer.mask_buffer(w, h);
        let Some(r) = render::intersect([sx, sy, width, height], [0, 0, w, h]) else {
            return Ok(());
        };
        let mut px = Renderer::read_from(buffer.framebuffer, r);
        // The mask value is the red channel; a layer holds it in every channel.
        for p in px.chunks_exact_mut(4) {
            p.fill(p[0]);
        }
        if let Some(l) = ctx.mask_layers.get_mut(&layer) {
            put_image(l, dx + r[0] - sx, dy + r[1] - sy, r[2], r[3], &px);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Fonts
// ---------------------------------------------------------------------------------------

/// `vgCreateFont`.
#[no_mangle]
pub extern "C" fn vgCreateFont(glyph_capacity_hint: VGint) -> VGFont {
    with_ctx(VG_INVALID_HANDLE, |ctx| {
        check(glyph_capacity_hint >= 0, VG_ILLEGAL_ARGUMENT_ERROR)?;
        let h = state::new_handle();
        ctx.fonts.insert(h, state::Font::default());
        Ok(h)
    })
}

/// `vgDestroyFont`.
#[no_mangle]
pub extern "C" fn vgDestroyFont(font: VGFont) {
    with_ctx((), |ctx| {
        ctx.fonts.remove(&font).ok_or(VG_BAD_HANDLE_ERROR)?;
        ctx.meshes.retain(|(f, _, _), _| *f != font);
        Ok(())
    })
}

/// Reads a glyph's origin and escapement (2 floats each).
///
/// # Safety
///
/// Each pointer must be null (rejected) or point to 2 floats.
unsafe fn two(p: *const VGfloat) -> Result<[f32; 2], VGErrorCode> {
    // SAFETY: passed through from the caller's contract.
    let v = unsafe { slice(p, 2) }?;
    check(!p.is_null(), VG_ILLEGAL_ARGUMENT_ERROR)?;
    Ok([v[0], v[1]])
}

fn set_glyph(
    ctx: &mut Context,
    font: VGFont,
    index: VGuint,
    shape: state::GlyphShape,
    origin: [f32; 2],
    escapement: [f32; 2],
) -> Result<(), VGErrorCode> {
    let f = ctx.fonts.get_mut(&font).ok_or(VG_BAD_HANDLE_ERROR)?;
    f.glyphs.insert(
        index,
        state::Glyph {
            shape,
            origin,
            escapement,
        },
    );
    Ok(())
}

/// `vgSetGlyphToPath`: glyph `index` draws a copy of `path` as it is now
/// (`VG_INVALID_HANDLE`: an empty glyph that only advances the origin).
///
/// # Safety
///
/// `glyph_origin` and `escapement` must each point to 2 floats.
#[no_mangle]
pub unsafe extern "C" fn vgSetGlyphToPath(
    font: VGFont,
    index: VGuint,
    path: VGPath,
    _is_hinted: VGboolean,
    glyph_origin: *const VGfloat,
    escapement: *const VGfloat,
) {
    with_ctx((), |ctx| {
        check(ctx.fonts.contains_key(&font), VG_BAD_HANDLE_ERROR)?;
        let data = if path == VG_INVALID_HANDLE {
            None
        } else {
            Some(ctx.paths.get(&path).ok_or(VG_BAD_HANDLE_ERROR)?.clone())
        };
        // SAFETY: the caller passes 2 floats at each pointer.
        let (o, e) = unsafe { (two(glyph_origin)?, two(escapement)?) };
        set_glyph(ctx, font, index, state::GlyphShape::Path(data), o, e)
    })
}

/// `vgSetGlyphToImage`: glyph `index` draws `image` (`VG_INVALID_HANDLE`: empty).
///
/// # Safety
///
/// `glyph_origin` and `escapement` must each point to 2 floats.
#[no_mangle]
pub unsafe extern "C" fn vgSetGlyphToImage(
    font: VGFont,
    index: VGuint,
    image: VGImage,
    glyph_origin: *const VGfloat,
    escapement: *const VGfloat,
) {
    with_ctx((), |ctx| {
        check(ctx.fonts.contains_key(&font), VG_BAD_HANDLE_ERROR)?;
        check(
            image == VG_INVALID_HANDLE || ctx.images.contains_key(&image),
            VG_BAD_HANDLE_ERROR,
        )?;
        // SAFETY: the caller passes 2 floats at each pointer.
        let (o, e) = unsafe { (two(glyph_origin)?, two(escapement)?) };
        set_glyph(ctx, font, index, state::GlyphShape::Image(image), o, e)
    })
}

/// `vgClearGlyph`.
#[no_mangle]
pub extern "C" fn vgClearGlyph(font: VGFont, index: VGuint) {
    with_ctx((), |ctx| {
        let f = ctx.fonts.get_mut(&font).ok_or(VG_BAD_HANDLE_ERROR)?;
        f.glyphs.remove(&index).ok_or(VG_ILLEGAL_ARGUMENT_ERROR)?;
        Ok(())
    })
}

/// Draws glyph `index` at `VG_GLYPH_ORIGIN` (path glyphs with `paint_modes`, image glyphs
/// when `paint_modes` is not 0), then advances the origin by its escapement plus
/// `adjust`.
fn draw_glyph(
    ctx: &mut Context,
    font: VGFont,
    index: u32,
    paint_modes: VGbitfield,
    adjust: [f32; 2],
) -> Result<(), VGErrorCode> {
    let g = ctx
        .fonts
        .get(&font)
        .ok_or(VG_BAD_HANDLE_ERROR)?
        .glyphs
        .get(&index)
        .ok_or(VG_ILLEGAL_ARGUMENT_ERROR)?;
    let (origin, escapement) = (g.origin, g.escapement);
    let image = match g.shape {
        state::GlyphShape::Image(i) => Some(i),
        state::GlyphShape::Path(_) => None,
    };
    let at = ctx.params.get(VG_GLYPH_ORIGIN);
    let (x, y) = (at[0], at[1]);
    let m = ctx
        .matrix(VG_MATRIX_GLYPH_USER_TO_SURFACE)
        .mul(&Mat3::translate(x - origin[0], y - origin[1]));
    if paint_modes != 0 {
        match image {
            None => render_shape(ctx, Shape::Glyph(font, index), &m, paint_modes),
            Some(i) => draw_image_through(ctx, i, &m),
        }
    }
    let next = [x + escapement[0] + adjust[0], y + escapement[1] + adjust[1]];
    ctx.params.set(VG_GLYPH_ORIGIN, true, &next)
}

fn check_glyph_modes(paint_modes: VGbitfield) -> Result<(), VGErrorCode> {
    check(
        paint_modes & !(VG_FILL_PATH | VG_STROKE_PATH) == 0,
        VG_ILLEGAL_ARGUMENT_ERROR,
    )
}

/// `vgDrawGlyph`: draws one glyph at `VG_GLYPH_ORIGIN` through the glyph-user-to-surface
/// matrix and advances the origin by its escapement.
#[no_mangle]
pub extern "C" fn vgDrawGlyph(
    font: VGFont,
    index: VGuint,
    paint_modes: VGbitfield,
    _allow_auto_hinting: VGboolean,
) {
    with_ctx((), |ctx| {
        check_glyph_modes(paint_modes)?;
        draw_glyph(ctx, font, index, paint_modes, [0.0, 0.0])
    })
}

/// `vgDrawGlyphs`: draws `count` glyphs in turn, each advanced by its escapement plus the
/// optional per-glyph adjustments.
///
/// # Safety
///
/// `indices` must point to `count` glyph indices, and each adjustment array, when not
/// null, to `count` floats.
#[no_mangle]
pub unsafe extern "C" fn vgDrawGlyphs(
    font: VGFont,
    count: VGint,
    indices: *const VGuint,
    adjustments_x: *const VGfloat,
    adjustments_y: *const VGfloat,
    paint_modes: VGbitfield,
    _allow_auto_hinting: VGboolean,
) {
    with_ctx((), |ctx| {
        let f = ctx.fonts.get(&font).ok_or(VG_BAD_HANDLE_ERROR)?;
        check_glyph_modes(paint_modes)?;
        check(count > 0 && !indices.is_null(), VG_ILLEGAL_ARGUMENT_ERROR)?;
        // SAFETY: the caller passes `count` values at each non-null pointer.
        let (idx, ax, ay) = unsafe {
            (
                slice(indices, count)?,
                if adjustments_x.is_null() {
                    &[][..]
                } else {
                    slice(adjustments_x, count)?
                },
                if adjustments_y.is_null() {
                    &[][..]
                } else {
                    slice(adjustments_y, count)?
                },
            )
        };
        // Every glyph must exist before any is drawn.
        check(
            idx.iter().all(|i| f.glyphs.contains_key(i)),
            VG_ILLEGAL_ARGUMENT_ERROR,
        )?;
        for (k, &i) in idx.iter().enumerate() {
            let adjust = [
                ax.get(k).copied().unwrap_or(0.0),
                ay.get(k).copied().unwrap_or(0.0),
            ];
            draw_glyph(ctx, font, i, paint_modes, adjust)?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// VGU
// ---------------------------------------------------------------------------------------

/// Appends user-unit segments to a path for a VGU function.
fn vgu_append(path: VGPath, segs: &[u8], vals: &[f32]) -> VGUErrorCode {
    with_ctx(VGU_BAD_HANDLE_ERROR, |ctx| {
        let Some(p) = ctx.paths.get_mut(&path) else {
            return Ok(VGU_BAD_HANDLE_ERROR);
        };
        if p.caps & VG_PATH_CAPABILITY_APPEND_TO == 0 {
            return Ok(VGU_PATH_CAPABILITY_ERROR);
        }
        p.append_user(segs, vals);
        Ok(VGU_NO_ERROR)
    })
}

/// `vguLine`: MOVE_TO (x0, y0), LINE_TO (x1, y1).
#[no_mangle]
pub extern "C" fn vguLine(
    path: VGPath,
    x0: VGfloat,
    y0: VGfloat,
    x1: VGfloat,
    y1: VGfloat,
) -> VGUErrorCode {
    vgu_append(path, &[VG_MOVE_TO_ABS, VG_LINE_TO_ABS], &[x0, y0, x1, y1])
}

/// `vguPolygon`: MOVE_TO the first point, LINE_TO the others, CLOSE when `closed`.
///
/// # Safety
///
/// `points` must point to `2·count` floats.
#[no_mangle]
pub unsafe extern "C" fn vguPolygon(
    path: VGPath,
    points: *const VGfloat,
    count: VGint,
    closed: VGboolean,
) -> VGUErrorCode {
    if count <= 0 || !aligned(points, 4) {
        return VGU_ILLEGAL_ARGUMENT_ERROR;
    }
    // SAFETY: the caller passes 2·count floats at the checked pointer.
    let pts = unsafe { std::slice::from_raw_parts(points, 2 * count as usize) };
    let mut segs = vec![VG_MOVE_TO_ABS];
    segs.extend(std::iter::repeat_n(VG_LINE_TO_ABS, count as usize - 1));
    if closed != VG_FALSE {
        segs.push(VG_CLOSE_PATH);
    }
    vgu_append(path, &segs, pts)
}

/// `vguRect`: MOVE_TO (x, y), HLINE width, VLINE height, HLINE −width, CLOSE.
#[no_mangle]
pub extern "C" fn vguRect(
    path: VGPath,
    x: VGfloat,
    y: VGfloat,
    width: VGfloat,
    height: VGfloat,
) -> VGUErrorCode {
    if width <= 0.0 || height <= 0.0 {
        return VGU_ILLEGAL_ARGUMENT_ERROR;
    }
    vgu_append(
        path,
        &[
            VG_MOVE_TO_ABS,
            VG_HLINE_TO_REL,
            VG_VLINE_TO_REL,
            VG_HLINE_TO_REL,
            VG_CLOSE_PATH,
        ],
        &[x, y, width, height, -width],
    )
}

/// `vguRoundRect`: a rectangle whose corners are quarter ellipses `arc_width × arc_height`
/// (clamped to the rectangle).
#[no_mangle]
pub extern "C" fn vguRoundRect(
    path: VGPath,
    x: VGfloat,
    y: VGfloat,
    width: VGfloat,
    height: VGfloat,
    arc_width: VGfloat,
    arc_height: VGfloat,
) -> VGUErrorCode {
    if width <= 0.0 || height <= 0.0 {
        return VGU_ILLEGAL_ARGUMENT_ERROR;
    }
    let aw = arc_width.clamp(0.0, width);
    let ah = arc_height.clamp(0.0, height);
    let (rx, ry) = (aw / 2.0, ah / 2.0);
    vgu_append(
        path,
        &[
            VG_MOVE_TO_ABS,
            VG_HLINE_TO_REL,
            VG_SCCWARC_TO_REL,
            VG_VLINE_TO_REL,
            VG_SCCWARC_TO_REL,
            VG_HLINE_TO_REL,
            VG_SCCWARC_TO_REL,
            VG_VLINE_TO_REL,
            VG_SCCWARC_TO_REL,
            VG_CLOSE_PATH,
        ],
        &[
            x + rx,
            y,
            width - aw,
            rx,
            ry,
            0.0,
            rx,
            ry,
            height - ah,
            rx,
            ry,
            0.0,
            -rx,
            ry,
            aw - width,
            rx,
            ry,
            0.0,
            -rx,
            -ry,
            ah - height,
            rx,
            ry,
            0.0,
            rx,
            -ry,
        ],
    )
}

/// `vguEllipse`: two half-ellipse arcs around (cx, cy).
#[no_mangle]
pub extern "C" fn vguEllipse(
    path: VGPath,
    cx: VGfloat,
    cy: VGfloat,
    width: VGfloat,
    height: VGfloat,
) -> VGUErrorCode {
    if width <= 0.0 || height <= 0.0 {
        return VGU_ILLEGAL_ARGUMENT_ERROR;
    }
    let (rx, ry) = (width / 2.0, height / 2.0);
    vgu_append(
        path,
        &[
            VG_MOVE_TO_ABS,
            VG_SCCWARC_TO_ABS,
            VG_SCCWARC_TO_ABS,
            VG_CLOSE_PATH,
        ],
        &[
            cx + rx,
            cy,
            rx,
            ry,
            0.0,
            cx - rx,
            cy,
            rx,
            ry,
            0.0,
            cx + rx,
            cy,
        ],
    )
}

/// `vguArc`: an elliptical arc (degrees, counter-clockwise positive), open, closed by a
/// chord, or a pie slice.
#[no_mangle]
pub extern "C" fn vguArc(
    path: VGPath,
    x: VGfloat,
    y: VGfloat,
    width: VGfloat,
    height: VGfloat,
    start_angle: VGfloat,
    angle_extent: VGfloat,
    arc_type: VGenum,
) -> VGUErrorCode {
    if width <= 0.0 || height <= 0.0 || !(VGU_ARC_OPEN..=VGU_ARC_PIE).contains(&arc_type) {
        return VGU_ILLEGAL_ARGUMENT_ERROR;
    }
    let (segs, vals) = path::vgu_arc(x, y, width, height, start_angle, angle_extent, arc_type);
    vgu_append(path, &segs, &vals)
}

/// Writes a warp matrix (9 floats) for the VGU warp functions.
///
/// # Safety
///
/// `out` must be null (rejected) or point to room for 9 floats.
unsafe fn put_warp(m: Option<[f32; 9]>, out: *mut VGfloat) -> VGUErrorCode {
    if !aligned(out, 4) {
        return VGU_ILLEGAL_ARGUMENT_ERROR;
    }
    let Some(m) = m else {
        return VGU_BAD_WARP_ERROR;
    };
    // SAFETY: checked non-null and aligned; the caller gives room for 9 floats.
    unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), out, 9) };
    VGU_NO_ERROR
}

/// `vguComputeWarpSquareToQuad`: the projective matrix taking the unit square's corners
/// (0,0), (1,0), (0,1), (1,1) to the four points.
///
/// # Safety
///
/// `matrix` must have room for 9 floats.
#[no_mangle]
pub unsafe extern "C" fn vguComputeWarpSquareToQuad(
    dx0: VGfloat,
    dy0: VGfloat,
    dx1: VGfloat,
    dy1: VGfloat,
    dx2: VGfloat,
    dy2: VGfloat,
    dx3: VGfloat,
    dy3: VGfloat,
    matrix: *mut VGfloat,
) -> VGUErrorCode {
    let m = filters::square_to_quad([[dx0, dy0], [dx1, dy1], [dx2, dy2], [dx3, dy3]]);
    // SAFETY: passed through from the caller's contract.
    unsafe { put_warp(m, matrix) }
}

/// `vguComputeWarpQuadToSquare`: the inverse of the square-to-quad warp.
///
/// # Safety
///
/// `matrix` must have room for 9 floats.
#[no_mangle]
pub unsafe extern "C" fn vguComputeWarpQuadToSquare(
    sx0: VGfloat,
    sy0: VGfloat,
    sx1: VGfloat,
    sy1: VGfloat,
    sx2: VGfloat,
    sy2: VGfloat,
    sx3: VGfloat,
    sy3: VGfloat,
    matrix: *mut VGfloat,
) -> VGUErrorCode {
    let m = filters::square_to_quad([[sx0, sy0], [sx1, sy1], [sx2, sy2], [sx3, sy3]])
        .and_then(|m| Mat3(m).inverse())
        .map(|m| m.0);
    // SAFETY: passed through from the caller's contract.
    unsafe { put_warp(m, matrix) }
}

/// `vguComputeWarpQuadToQuad`: source quad → unit square → destination quad.
///
/// # Safety
///
/// `matrix` must have room for 9 floats.
#[no_mangle]
pub unsafe extern "C" fn vguComputeWarpQuadToQuad(
    dx0: VGfloat,
    dy0: VGfloat,
    dx1: VGfloat,
    dy1: VGfloat,
    dx2: VGfloat,
    dy2: VGfloat,
    dx3: VGfloat,
    dy3: VGfloat,
    sx0: VGfloat,
    sy0: VGfloat,
    sx1: VGfloat,
    sy1: VGfloat,
    sx2: VGfloat,
    sy2: VGfloat,
    sx3: VGfloat,
    sy3: VGfloat,
    matrix: *mut VGfloat,
) -> VGUErrorCode {
    let to_square = filters::square_to_quad([[sx0, sy0], [sx1, sy1], [sx2, sy2], [sx3, sy3]])
        .and_then(|m| Mat3(m).inverse());
    let to_quad = filters::square_to_quad([[dx0, dy0], [dx1, dy1], [dx2, dy2], [dx3, dy3]]);
    let m = match (to_quad, to_square) {
        (Some(q), Some(s)) => Some(Mat3(q).mul(&s).0),
        _ => None,
    };
    // SAFETY: passed through from the caller's contract.
    unsafe { put_warp(m, matrix) }
}

/// The C type of the returned strings, for callers of [`vgGetString`] in Rust.
pub type VGString = *const c_char;
