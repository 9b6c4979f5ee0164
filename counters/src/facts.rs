//! What a context's default framebuffer and a few pieces of state were when a capture
//! started: the facts the checklist needs about frames it sees only from their first
//! captured call on (multisampling, depth and stencil bits, depth test, blending, culling,
//! the 2D textures bound on each unit).

use crate::gl::{self, GLenum, GLint, ThermalFns};
use crate::state::ErrorScope;

/// Most texture units whose `GL_TEXTURE_2D` binding [`start_facts`] reads.
pub const MAX_FACT_UNITS: u32 = 16;

/// The answers of [`start_facts`]; `None` where GL was not asked or refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartFacts {
    /// `GL_SAMPLES` of the default framebuffer.
    pub samples: Option<u32>,
    /// `GL_SAMPLE_BUFFERS` of the default framebuffer.
    pub sample_buffers: Option<u32>,
    /// Depth bits of the default framebuffer (0 when it has no depth buffer).
    pub depth_bits: Option<u32>,
    /// Stencil bits of the default framebuffer (0 when it has no stencil buffer).
    pub stencil_bits: Option<u32>,
    /// `glIsEnabled(GL_DEPTH_TEST)`.
    pub depth_test: Option<bool>,
    /// `glIsEnabled(GL_BLEND)`.
    pub blend: Option<bool>,
    /// `glIsEnabled(GL_CULL_FACE)`.
    pub cull_face: Option<bool>,
    /// `GL_ACTIVE_TEXTURE` (`GL_TEXTURE0 + unit`).
    pub active_texture: Option<u32>,
    /// `GL_TEXTURE_BINDING_2D` of units 0 … min(`GL_MAX_COMBINED_TEXTURE_IMAGE_UNITS`,
    /// [`MAX_FACT_UNITS`]) − 1.
    pub texture_2d: Option<Vec<u32>>,
}

/// Reads the [`StartFacts`] of the current context, which must be GL 3.0+ or GLES 3.0+
/// (every name asked exists there, and the default framebuffer's `GL_DEPTH` and
/// `GL_STENCIL` attachments can be queried: the core profile has no `GL_DEPTH_BITS`).
///
/// Invisible to the program: its pending GL error is taken first and raised again after;
/// the draw framebuffer is switched to the default one only when another is bound, and
/// the active texture unit is put back. If any of our queries raised an error, nothing is
/// reported (the values could be wrong), and the error is not left for the program.
///
/// # Safety
/// The context `f` belongs to must be current on this thread.
pub unsafe fn start_facts(f: &ThermalFns) -> StartFacts {
    // SAFETY: our caller's promise: the context is current for the whole scope.
    let scope = unsafe { ErrorScope::enter(f) };
    // SAFETY: the context is current; every name exists in GL 3.0+ and GLES 3.0+, and the
    // bindings changed are restored before the scope ends.
    let facts = unsafe { read(f) };
    if scope.leave() != gl::NO_ERROR {
        return StartFacts::default();
    }
    facts
}

/// [`start_facts`]'s queries, without the error scope.
///
/// # Safety
/// As [`start_facts`].
unsafe fn read(f: &ThermalFns) -> StartFacts {
    let count = |v: GLint| u32::try_from(v).ok();
    // SAFETY: our caller's promise; every pname below is single-valued and exists in
    // GL 3.0+ and GLES 3.0+.
    unsafe {
        let draw = f.integer(gl::DRAW_FRAMEBUFFER_BINDING) as u32;
        if draw != 0 {
            (f.bind_framebuffer)(gl::DRAW_FRAMEBUFFER, 0);
        }
        let samples = count(f.integer(gl::SAMPLES));
        let sample_buffers = count(f.integer(gl::SAMPLE_BUFFERS));
        let bits = |attachment: GLenum, pname: GLenum| {
            let mut kind = gl::NONE as GLint;
            (f.get_framebuffer_attachment_parameteriv)(
                gl::DRAW_FRAMEBUFFER,
                attachment,
                gl::FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE,
                &mut kind,
            );
            // No buffer: asking its size would be GL_INVALID_OPERATION.
            if kind as GLenum == gl::NONE {
                return Some(0);
            }
            let mut size = 0;
            (f.get_framebuffer_attachment_parameteriv)(
                gl::DRAW_FRAMEBUFFER,
                attachment,
                pname,
                &mut size,
            );
            count(size)
        };
        let depth_bits = bits(gl::DEPTH, gl::FRAMEBUFFER_ATTACHMENT_DEPTH_SIZE);
        let stencil_bits = bits(gl::STENCIL, gl::FRAMEBUFFER_ATTACHMENT_STENCIL_SIZE);
        if draw != 0 {
            (f.bind_framebuffer)(gl::DRAW_FRAMEBUFFER, draw);
        }
        let enabled = |cap: GLenum| Some((f.is_enabled)(cap) != 0);
        let active = f.integer(gl::ACTIVE_TEXTURE) as GLenum;
        let units = count(f.integer(gl::MAX_COMBINED_TEXTURE_IMAGE_UNITS))
            .unwrap_or(0)
            .min(MAX_FACT_UNITS);
        let mut texture_2d = Vec::with_capacity(units as usize);
        for unit in 0..units {
            (f.active_texture)(gl::TEXTURE0 + unit);
            texture_2d.push(f.integer(gl::TEXTURE_BINDING_2D) as u32);
        }
        if units > 0 {
            (f.active_texture)(active);
        }
        StartFacts {
            samples,
            sample_buffers,
            depth_bits,
            stencil_bits,
            depth_test: enabled(gl::DEPTH_TEST),
            blend: enabled(gl::BLEND),
            cull_face: enabled(gl::CULL_FACE),
            active_texture: Some(active),
            texture_2d: Some(texture_2d),
        }
    }
}
