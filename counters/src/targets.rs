//! What a draw draws into and what it samples, read from the GL state right before the
//! painter replays it: the colour attachments of the bound draw framebuffer (an offscreen
//! render target, with its size and format) and the textures bound to the units its
//! program's samplers read. The painter uses them to give each render target its own map
//! and to record which draws consume which targets' textures, so that the inspector can let
//! a pass's cost flow to the pixels it feeds.
//!
//! Every query here raises no GL error on a valid state, except the texture size probe,
//! which binds the attachment's texture to `GL_TEXTURE_2D` (an error when it is another kind
//! of texture); callers drain errors after it. Bindings changed are restored here.

use std::collections::HashMap;

use gpuheat_session::Attachment;

use crate::gl::*;

/// Most draw buffers read (GL guarantees 8 in GL 3.0 and 4 in GLES 3.0).
const MAX_BUFFERS: GLint = 8;

/// An offscreen render target as a draw found it: its attachments, size and format.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Found {
    /// The draw framebuffer object's name.
    pub framebuffer: u32,
    /// Colour attachments of its draw buffers; its depth attachment when it has none (a
    /// depth-only pass, e.g. a shadow map).
    pub attachments: Vec<Attachment>,
    /// Size of the first attachment, when GL can tell (textures need
    /// `glGetTexLevelParameteriv`: GL, GLES 3.1).
    pub size: Option<[u32; 2]>,
    /// Internal format of the first attachment (0 when unknown).
    pub format: u32,
}

/// The offscreen target the current draw framebuffer (`framebuffer`, not 0) draws into.
///
/// # Safety
/// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
pub(crate) unsafe fn draw_target(f: &ThermalFns, framebuffer: u32, gles: bool) -> Found {
    let mut attachments = Vec::new();
    // SAFETY: our caller's promise; every pname is valid for a bound framebuffer object.
    unsafe {
        let buffers = f.integer(MAX_DRAW_BUFFERS).clamp(1, MAX_BUFFERS);
        for i in 0..buffers {
            let point = f.integer(DRAW_BUFFER0 + i as GLenum) as GLenum;
            if point == NONE {
                continue;
            }
            if let Some(a) = attachment(f, point) {
                if !attachments.contains(&a) {
                    attachments.push(a);
                }
            }
        }
        if attachments.is_empty() {
            let depth = attachment(f, DEPTH_ATTACHMENT).or_else(|| {
                // GLES has no DEPTH_STENCIL_ATTACHMENT query point for a combined one.
                (!gles)
                    .then(|| attachment(f, DEPTH_STENCIL_ATTACHMENT))
                    .flatten()
            });
            attachments.extend(depth);
        }
        let (size, format) = match attachments.first() {
            Some(a) => size_and_format(f, a),
            None => (None, 0),
        };
        Found {
            framebuffer,
            attachments,
            size,
            format,
        }
    }
}

/// What is attached at `point` of the bound draw framebuffer.
unsafe fn attachment(f: &ThermalFns, point: GLenum) -> Option<Attachment> {
    // SAFETY: our caller's promise.
    unsafe { attachment_of(f, DRAW_FRAMEBUFFER, point) }
}

/// What a blit reads: the attachment at the read buffer of the bound read framebuffer
/// object (`None`: the default framebuffer is bound for reading, or nothing is attached).
///
/// # Safety
/// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
pub(crate) unsafe fn read_source(f: &ThermalFns) -> Option<Attachment> {
    // SAFETY: our caller's promise; the queries read state only.
    unsafe {
        if f.integer(READ_FRAMEBUFFER_BINDING) == 0 {
            return None;
        }
        let point = f.integer(READ_BUFFER) as GLenum;
        if point == NONE {
            return None;
        }
        attachment_of(f, READ_FRAMEBUFFER, point)
    }
}

/// What is attached at `point` of the framebuffer object bound to `target`.
unsafe fn attachment_of(f: &ThermalFns, target: GLenum, point: GLenum) -> Option<Attachment> {
    let param = |pname| {
        let mut v = 0;
        // SAFETY: our caller's promise (a framebuffer object is bound to `target`); `v`
        // receives the one value.
        unsafe { (f.get_framebuffer_attachment_parameteriv)(target, point, pname, &mut v) };
        v
    };
    let kind = param(FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE) as GLenum;
    let name = param(FRAMEBUFFER_ATTACHMENT_OBJECT_NAME) as u32;
    match kind {
        TEXTURE => {
            let level = param(FRAMEBUFFER_ATTACHMENT_TEXTURE_LEVEL).max(0) as u32;
            let face = param(FRAMEBUFFER_ATTACHMENT_TEXTURE_CUBE_MAP_FACE) as GLenum;
            let layer = if face >= TEXTURE_CUBE_MAP_POSITIVE_X {
                face - TEXTURE_CUBE_MAP_POSITIVE_X
            } else {
                param(FRAMEBUFFER_ATTACHMENT_TEXTURE_LAYER).max(0) as u32
            };
            Some(Attachment::Texture { name, level, layer })
        }
        RENDERBUFFER => Some(Attachment::Renderbuffer { name }),
        _ => None,
    }
}

/// What a copy call writes, as its arguments name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyDest {
    /// The texture bound to `target` on the active unit (`glCopyTexImage2D`,
    /// `glCopyTexSubImage2D/3D`): `target` a 2D, rectangle or cube-face target, or a 3D or 2D
    /// array one with `layer` the slice written.
    Bound {
        /// The call's texture target (a cube face for a cube map).
        target: u32,
        /// Mipmap level.
        level: u32,
        /// Slice of a 3D or array texture; 0 otherwise.
        layer: u32,
    },
    /// A texture named without its kind (`glCopyTextureSubImage2D/3D`, direct state access:
    /// GL 4.5): its target is asked of the name (`GL_TEXTURE_TARGET`), `layer` the slice or
    /// cube face (the call's z offset).
    Texture {
        /// The texture's name.
        name: u32,
        /// Mipmap level.
        level: u32,
        /// Slice or cube face.
        layer: u32,
    },
    /// A named object (`glCopyImageSubData`): `target` `GL_RENDERBUFFER` or a texture target,
    /// `layer` the slice or cube face (its z).
    Named {
        /// The object's name.
        name: u32,
        /// `GL_RENDERBUFFER` or the texture's target.
        target: u32,
        /// Mipmap level.
        level: u32,
        /// Slice or cube face.
        layer: u32,
    },
}

/// What a copy call reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopySource {
    /// The read buffer of the bound read framebuffer (`glCopyTex*`).
    ReadFramebuffer,
    /// A named object (`glCopyImageSubData`).
    Object(Attachment),
}

/// A copy call, as the painter spreads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyCall {
    /// What it writes.
    pub dest: CopyDest,
    /// What it reads.
    pub source: CopySource,
    /// The texels it writes: x0, y0, x1, y1 in the destination's level.
    pub rect: [u32; 4],
}

/// The texture binding that holds a texture of `target` (a cube face counts as its cube map),
/// and the face's index for a cube face.
fn binding_of_target(target: GLenum) -> Option<(GLenum, Option<u32>)> {
    Some(match target {
        TEXTURE_2D => (TEXTURE_BINDING_2D, None),
        TEXTURE_RECTANGLE => (TEXTURE_BINDING_RECTANGLE, None),
        TEXTURE_3D => (TEXTURE_BINDING_3D, None),
        TEXTURE_2D_ARRAY => (TEXTURE_BINDING_2D_ARRAY, None),
        TEXTURE_CUBE_MAP => (TEXTURE_BINDING_CUBE_MAP, None),
        TEXTURE_CUBE_MAP_POSITIVE_X..=TEXTURE_CUBE_MAP_NEGATIVE_Z => (
            TEXTURE_BINDING_CUBE_MAP,
            Some(target - TEXTURE_CUBE_MAP_POSITIVE_X),
        ),
        _ => return None,
    })
}

/// What copy destination `dest` is (as an attachment, so a texture drawn into and copied
/// into is one target), with its level's size and internal format when GL can tell. A named
/// texture is bound to its target on the active unit for the query (the binding restored
/// after); a wrong target raises an error the caller drains.
///
/// # Safety
/// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
pub(crate) unsafe fn copy_destination(
    f: &ThermalFns,
    dest: &CopyDest,
) -> (Option<Attachment>, Option<[u32; 2]>, u32) {
    // SAFETY: our caller's promise; the bindings changed are restored before returning.
    unsafe {
        match *dest {
            CopyDest::Bound {
                target,
                level,
                layer,
            } => {
                let Some((binding, face)) = binding_of_target(target) else {
                    return (None, None, 0);
                };
                let name = f.integer(binding) as u32;
                let a = Attachment::Texture {
                    name,
                    level,
                    layer: face.unwrap_or(layer),
                };
                let (size, format) = level_size(f, target, level);
                (Some(a), size, format)
            }
            CopyDest::Texture { name, level, layer } => {
                let Some(get) = f.get_texture_parameteriv else {
                    return (None, None, 0);
                };
                let mut target = 0;
                get(name, TEXTURE_TARGET, &mut target);
                let named = CopyDest::Named {
                    name,
                    target: target as u32,
                    level,
                    layer,
                };
                copy_destination(f, &named)
            }
            CopyDest::Named { name, target, .. } if target == RENDERBUFFER => {
                let a = Attachment::Renderbuffer { name };
                let (size, format) = size_and_format(f, &a);
                (Some(a), size, format)
            }
            CopyDest::Named {
                name,
                target,
                level,
                layer,
            } => {
                let Some((binding, _)) = binding_of_target(target) else {
                    return (None, None, 0);
                };
                let a = Attachment::Texture { name, level, layer };
                let query = if target == TEXTURE_CUBE_MAP {
                    TEXTURE_CUBE_MAP_POSITIVE_X + layer.min(5)
                } else {
                    target
                };
                let (size, format) = named_level_size(f, (target, binding), name, query, level);
                (Some(a), size, format)
            }
        }
    }
}

/// Size and internal format of an attachment, when GL can tell.
///
/// # Safety
/// As [`size_and_format`].
pub(crate) unsafe fn size_of(f: &ThermalFns, a: &Attachment) -> (Option<[u32; 2]>, u32) {
    // SAFETY: our caller's promise.
    unsafe { size_and_format(f, a) }
}

/// Size and internal format of an attachment. A texture is probed bound to `GL_TEXTURE_2D`
/// on the active unit (the binding restored after); another kind of texture raises
/// `GL_INVALID_OPERATION` there, which the caller drains, and gives no size.
unsafe fn size_and_format(f: &ThermalFns, a: &Attachment) -> (Option<[u32; 2]>, u32) {
    // SAFETY: our caller's promise; the bindings changed are restored before returning.
    unsafe {
        match *a {
            Attachment::Renderbuffer { name } => {
                let saved = f.integer(RENDERBUFFER_BINDING) as GLuint;
                (f.bind_renderbuffer)(RENDERBUFFER, name);
                let mut v = [0; 3];
                for (slot, pname) in v.iter_mut().zip([
                    RENDERBUFFER_WIDTH,
                    RENDERBUFFER_HEIGHT,
                    RENDERBUFFER_INTERNAL_FORMAT,
                ]) {
                    (f.get_renderbuffer_parameteriv)(RENDERBUFFER, pname, slot);
                }
                (f.bind_renderbuffer)(RENDERBUFFER, saved);
                (positive(v[0], v[1]), v[2] as u32)
            }
            Attachment::Texture { name, level, .. } => {
                named_level_size(f, (TEXTURE_2D, TEXTURE_BINDING_2D), name, TEXTURE_2D, level)
            }
        }
    }
}

/// Size and internal format of level `level` of the texture bound to the target `query`
/// names (a cube face for a cube map), when GL can tell (`glGetTexLevelParameteriv`: GL,
/// GLES 3.1).
///
/// # Safety
/// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
unsafe fn level_size(f: &ThermalFns, query: GLenum, level: u32) -> (Option<[u32; 2]>, u32) {
    let Some(get) = f.get_tex_level_parameteriv else {
        return (None, 0);
    };
    let mut v = [0; 3];
    for (slot, pname) in v
        .iter_mut()
        .zip([TEXTURE_WIDTH, TEXTURE_HEIGHT, TEXTURE_INTERNAL_FORMAT])
    {
        // SAFETY: our caller's promise; `slot` receives the one value.
        unsafe { get(query, level as GLint, pname, slot) };
    }
    (positive(v[0], v[1]), v[2] as u32)
}

/// [`level_size`] of texture `name`, bound to `target` on the active unit for the query
/// (`binding` restored after; nothing bound without `glGetTexLevelParameteriv`). A texture
/// of another kind than `target` raises an error the caller drains, and gives no size.
///
/// # Safety
/// As [`level_size`].
unsafe fn named_level_size(
    f: &ThermalFns,
    (target, binding): (GLenum, GLenum),
    name: GLuint,
    query: GLenum,
    level: u32,
) -> (Option<[u32; 2]>, u32) {
    if f.get_tex_level_parameteriv.is_none() {
        return (None, 0);
    }
    // SAFETY: our caller's promise; the binding changed is restored.
    unsafe {
        let saved = f.integer(binding) as GLuint;
        (f.bind_texture)(target, name);
        let size = level_size(f, query, level);
        (f.bind_texture)(target, saved);
        size
    }
}

fn positive(w: GLint, h: GLint) -> Option<[u32; 2]> {
    (w > 0 && h > 0).then_some([w as u32, h as u32])
}

/// The texture binding a sampler type reads (`None`: a buffer texture or not a sampler).
fn binding_of(ty: GLenum) -> Option<GLenum> {
    Some(match ty {
        SAMPLER_1D | SAMPLER_1D_SHADOW | INT_SAMPLER_1D | UNSIGNED_INT_SAMPLER_1D => {
            TEXTURE_BINDING_1D
        }
        SAMPLER_2D | SAMPLER_2D_SHADOW | INT_SAMPLER_2D | UNSIGNED_INT_SAMPLER_2D => {
            TEXTURE_BINDING_2D
        }
        SAMPLER_3D | INT_SAMPLER_3D | UNSIGNED_INT_SAMPLER_3D => TEXTURE_BINDING_3D,
        SAMPLER_CUBE | SAMPLER_CUBE_SHADOW | INT_SAMPLER_CUBE | UNSIGNED_INT_SAMPLER_CUBE => {
            TEXTURE_BINDING_CUBE_MAP
        }
        SAMPLER_2D_RECT
        | SAMPLER_2D_RECT_SHADOW
        | INT_SAMPLER_2D_RECT
        | UNSIGNED_INT_SAMPLER_2D_RECT => TEXTURE_BINDING_RECTANGLE,
        SAMPLER_1D_ARRAY
        | SAMPLER_1D_ARRAY_SHADOW
        | INT_SAMPLER_1D_ARRAY
        | UNSIGNED_INT_SAMPLER_1D_ARRAY => TEXTURE_BINDING_1D_ARRAY,
        SAMPLER_2D_ARRAY
        | SAMPLER_2D_ARRAY_SHADOW
        | INT_SAMPLER_2D_ARRAY
        | UNSIGNED_INT_SAMPLER_2D_ARRAY => TEXTURE_BINDING_2D_ARRAY,
        SAMPLER_CUBE_MAP_ARRAY
        | SAMPLER_CUBE_MAP_ARRAY_SHADOW
        | INT_SAMPLER_CUBE_MAP_ARRAY
        | UNSIGNED_INT_SAMPLER_CUBE_MAP_ARRAY => TEXTURE_BINDING_CUBE_MAP_ARRAY,
        SAMPLER_EXTERNAL_OES => TEXTURE_BINDING_EXTERNAL_OES,
        SAMPLER_2D_MULTISAMPLE
        | INT_SAMPLER_2D_MULTISAMPLE
        | UNSIGNED_INT_SAMPLER_2D_MULTISAMPLE => TEXTURE_BINDING_2D_MULTISAMPLE,
        SAMPLER_2D_MULTISAMPLE_ARRAY
        | INT_SAMPLER_2D_MULTISAMPLE_ARRAY
        | UNSIGNED_INT_SAMPLER_2D_MULTISAMPLE_ARRAY => TEXTURE_BINDING_2D_MULTISAMPLE_ARRAY,
        _ => return None,
    })
}

/// Whether uniform type `ty` is an image a shader can store to whose level is a 2D map of
/// texels (layered images are counted by their bound layer's extent).
fn is_image(ty: GLenum) -> bool {
    matches!(
        ty,
        IMAGE_2D
            | IMAGE_2D_RECT
            | IMAGE_2D_ARRAY
            | IMAGE_3D
            | IMAGE_CUBE
            | INT_IMAGE_2D
            | INT_IMAGE_2D_RECT
            | INT_IMAGE_2D_ARRAY
            | INT_IMAGE_3D
            | INT_IMAGE_CUBE
            | UNSIGNED_INT_IMAGE_2D
            | UNSIGNED_INT_IMAGE_2D_RECT
            | UNSIGNED_INT_IMAGE_2D_ARRAY
            | UNSIGNED_INT_IMAGE_3D
            | UNSIGNED_INT_IMAGE_CUBE
    )
}

/// Most sampler elements read per program (array elements count one each).
const MAX_SAMPLERS: usize = 64;

/// The sampler uniforms of the programs seen in a frame: (location, texture binding) per
/// element. Cleared at each frame's end, so a relinked program is read again.
#[derive(Debug, Default)]
pub(crate) struct Samplers {
    programs: HashMap<GLuint, Vec<(GLint, GLenum)>>,
    /// The locations of each program's image uniform elements.
    images: HashMap<GLuint, Vec<GLint>>,
}

impl Samplers {
    /// Forgets what was read (a program may be relinked between frames).
    pub fn clear(&mut self) {
        self.programs.clear();
        self.images.clear();
    }

    /// The texture levels the current program can store to: the image bound to the unit of
    /// each of its image uniforms, unless bound read-only. Empty when it has none (a dispatch
    /// writing storage buffers only); `Err`: why they could not be read.
    ///
    /// # Safety
    /// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
    pub unsafe fn stored(&mut self, f: &ThermalFns) -> Result<Vec<Attachment>, String> {
        let Some(indexed) = f.get_integeri_v else {
            return Err("glGetIntegeri_v is missing: the image units are not read".into());
        };
        // SAFETY: our caller's promise; every query reads state only.
        unsafe {
            let program = f.integer(CURRENT_PROGRAM) as GLuint;
            if program == 0 {
                return Err(
                    "no program in use (a program pipeline): its images are not read".into(),
                );
            }
            let images = self.images.entry(program).or_insert_with(|| {
                read_uniforms(f, program, |ty| is_image(ty).then_some(0))
                    .into_iter()
                    .map(|(l, _)| l)
                    .collect()
            });
            let mut out = Vec::new();
            for &location in images.iter() {
                let mut unit = [0 as GLint; 4];
                (f.get_uniformiv)(program, location, unit.as_mut_ptr());
                let Ok(unit) = GLuint::try_from(unit[0]) else {
                    continue;
                };
                let at = |pname| {
                    let mut v = [0 as GLint; 4];
                    indexed(pname, unit, v.as_mut_ptr());
                    v[0]
                };
                let name = at(IMAGE_BINDING_NAME) as u32;
                if name == 0 || at(IMAGE_BINDING_ACCESS) as GLenum == READ_ONLY {
                    continue;
                }
                let a = Attachment::Texture {
                    name,
                    level: at(IMAGE_BINDING_LEVEL).max(0) as u32,
                    layer: at(IMAGE_BINDING_LAYER).max(0) as u32,
                };
                if !out.contains(&a) {
                    out.push(a);
                }
            }
            Ok(out)
        }
    }

    /// The textures bound to the units the current program's samplers read, without
    /// repeats (`Err`: why they could not be read); with no program in use on a context
    /// with the fixed-function pipeline (`fixed_function`), those its enabled units bind.
    ///
    /// # Safety
    /// A GL 3.0+ / GLES 3.0+ context must be current and `f` its real functions.
    pub unsafe fn sampled(
        &mut self,
        f: &ThermalFns,
        fixed_function: bool,
    ) -> Result<Vec<u32>, String> {
        // SAFETY: our caller's promise; the active texture unit is restored before returning.
        unsafe {
            let program = f.integer(CURRENT_PROGRAM) as GLuint;
            if program == 0 && fixed_function && f.integer(PROGRAM_PIPELINE_BINDING) == 0 {
                return Ok(fixed_function_textures(f));
            }
            if program == 0 {
                return Err(
                    "no program in use (a program pipeline or fixed function): its \
                            samplers are not read"
                        .into(),
                );
            }
            let samplers = self
                .programs
                .entry(program)
                .or_insert_with(|| read_uniforms(f, program, binding_of));
            if samplers.is_empty() {
                return Ok(Vec::new());
            }
            let active = f.integer(ACTIVE_TEXTURE) as GLenum;
            let mut out = Vec::new();
            for &(location, binding) in samplers.iter() {
                let mut unit = [0 as GLint; 4];
                (f.get_uniformiv)(program, location, unit.as_mut_ptr());
                if unit[0] < 0 {
                    continue;
                }
                (f.active_texture)(TEXTURE0 + unit[0] as GLenum);
                let name = f.integer(binding) as u32;
                if name != 0 && !out.contains(&name) {
                    out.push(name);
                }
            }
            (f.active_texture)(active);
            Ok(out)
        }
    }
}

/// The 2D textures fixed-function texturing samples: on each texture unit with
/// `GL_TEXTURE_2D` enabled and no target of higher precedence (cube map, 3D, rectangle) also
/// enabled, the texture bound to it, without repeats. (An enabled ARB assembly fragment
/// program replaces fixed-function texturing; it is not read.)
///
/// # Safety
/// A context with the fixed-function pipeline must be current and `f` its real functions.
unsafe fn fixed_function_textures(f: &ThermalFns) -> Vec<u32> {
    let mut out = Vec::new();
    // SAFETY: our caller's promise; every unit asked is below the fixed-function units'
    // count, and the active unit is restored.
    unsafe {
        let active = f.integer(ACTIVE_TEXTURE) as GLenum;
        let units = f.integer(MAX_TEXTURE_UNITS).clamp(0, 32) as GLenum;
        for unit in 0..units {
            (f.active_texture)(TEXTURE0 + unit);
            let enabled = |cap| (f.is_enabled)(cap) != 0;
            if !enabled(TEXTURE_2D)
                || [TEXTURE_CUBE_MAP, TEXTURE_3D, TEXTURE_RECTANGLE]
                    .into_iter()
                    .any(enabled)
            {
                continue;
            }
            let name = f.integer(TEXTURE_BINDING_2D) as u32;
            if name != 0 && !out.contains(&name) {
                out.push(name);
            }
        }
        (f.active_texture)(active);
    }
    out
}

/// (location, `kind(type)`) of each element of `program`'s default uniform block whose type
/// `kind` accepts: samplers with the texture binding they read, images.
unsafe fn read_uniforms(
    f: &ThermalFns,
    program: GLuint,
    kind: impl Fn(GLenum) -> Option<GLenum>,
) -> Vec<(GLint, GLenum)> {
    let mut out = Vec::new();
    // SAFETY: our caller's promise; every index is below the active count and every name
    // passed is NUL-terminated.
    unsafe {
        let mut n = 0;
        (f.get_programiv)(program, ACTIVE_UNIFORMS, &mut n);
        for i in 0..n.max(0) as GLuint {
            let (mut size, mut ty, mut len) = (0, 0, 0);
            let mut buf = [0u8; 256];
            (f.get_active_uniform)(
                program,
                i,
                buf.len() as GLsizei,
                &mut len,
                &mut size,
                &mut ty,
                buf.as_mut_ptr().cast(),
            );
            let Some(binding) = kind(ty) else {
                continue;
            };
            let name = &buf[..len.clamp(0, 255) as usize];
            let base = name.strip_suffix(b"[0]").unwrap_or(name);
            for e in 0..size.max(1) {
                let mut element = base.to_vec();
                if size > 1 {
                    element.extend_from_slice(format!("[{e}]").as_bytes());
                }
                element.push(0);
                let location = (f.get_uniform_location)(program, element.as_ptr().cast());
                if location >= 0 && out.len() < MAX_SAMPLERS {
                    out.push((location, binding));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sampler_kind_but_buffers_has_a_binding() {
        assert_eq!(binding_of(SAMPLER_2D), Some(TEXTURE_BINDING_2D));
        assert_eq!(
            binding_of(UNSIGNED_INT_SAMPLER_2D_ARRAY),
            Some(TEXTURE_BINDING_2D_ARRAY)
        );
        assert_eq!(
            binding_of(SAMPLER_EXTERNAL_OES),
            Some(TEXTURE_BINDING_EXTERNAL_OES)
        );
        assert_eq!(binding_of(FLOAT_VEC4), None);
    }
}
