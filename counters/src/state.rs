//! Invisibility toolkit: the program's GL state and GL error flags, kept as they were around
//! our own GL work (heat painting, geometry replay).
//!
//! - [`ErrorScope`] takes the program's pending GL error before our work and raises it again
//!   after it with a known-invalid no-op call, draining the errors of our own in between
//!   (`GL_OUT_OF_MEMORY` and `GL_INVALID_FRAMEBUFFER_OPERATION` cannot be raised again).
//! - [`Saved`] saves the [`Piece`]s of state our work changes and restores them when dropped,
//!   on every path out of the work, early returns included.

use crate::gl::{self, BindFn, GLenum, GLint, GLuint, ThermalFns};

impl ThermalFns {
    /// `glGetIntegerv(pname)` for a single-valued `pname`.
    ///
    /// # Safety
    /// The context these functions belong to must be current, and `pname` valid in it.
    pub(crate) unsafe fn integer(&self, pname: GLenum) -> GLint {
        // SAFETY: our caller's promise.
        unsafe { gl::integer(self.get_integerv, pname) }
    }

    /// `glGetIntegerv(pname)` for a four-valued `pname`.
    ///
    /// # Safety
    /// As [`ThermalFns::integer`].
    pub(crate) unsafe fn integers4(&self, pname: GLenum) -> [GLint; 4] {
        // SAFETY: our caller's promise.
        unsafe { gl::integers4(self.get_integerv, pname) }
    }

    /// `glEnable(cap)` or `glDisable(cap)`.
    ///
    /// # Safety
    /// The context these functions belong to must be current, and `cap` valid in it.
    pub(crate) unsafe fn set_enabled(&self, cap: GLenum, on: bool) {
        // SAFETY: our caller's promise.
        unsafe {
            if on {
                (self.enable)(cap)
            } else {
                (self.disable)(cap)
            }
        }
    }

    /// Whether the program's render mode is `GL_SELECT` or `GL_FEEDBACK`: a draw then writes
    /// hits or feedback into the program's own buffer, not pixels, and a replay would write
    /// there again (what picking or gl2ps read back), so such draws are not replayed
    /// ([`NOT_RENDERING`]).
    ///
    /// # Safety
    /// A context with the fixed-function pipeline must be current, outside `glBegin`/`glEnd`,
    /// with these its functions.
    pub(crate) unsafe fn not_rendering(&self) -> bool {
        // SAFETY: our caller's promise; the render mode exists where the pipeline is fixed.
        unsafe { self.integer(gl::RENDER_MODE) != gl::RENDER as GLint }
    }

    /// Whether the program in use is flagged for deletion: switching away from it would
    /// delete it, and restoring it would then fail, so such draws are not replayed.
    ///
    /// # Safety
    /// The context these functions belong to must be current.
    pub(crate) unsafe fn current_program_deleting(&self) -> bool {
        // SAFETY: our caller's promise; `GL_CURRENT_PROGRAM` exists wherever these functions
        // are used (GL 3.0+, GLES 3.0+), and `program` is a live program name.
        unsafe {
            let program = self.integer(gl::CURRENT_PROGRAM);
            if program == 0 {
                return false;
            }
            let mut deleting = 0;
            (self.get_programiv)(program as GLuint, gl::DELETE_STATUS, &mut deleting);
            deleting != 0
        }
    }
}

/// Why a draw made in selection or feedback render mode is not run again
/// ([`ThermalFns::not_rendering`]).
pub(crate) const NOT_RENDERING: &str = "drawn in GL_SELECT or GL_FEEDBACK render mode (no \
     pixels; run again, it would write into the program's selection or feedback buffer a \
     second time)";

/// Takes every pending GL error; returns the first.
///
/// # Safety
/// The context `f` belongs to must be current.
pub(crate) unsafe fn drain_errors(f: &ThermalFns) -> GLenum {
    let mut first = gl::NO_ERROR;
    // Bounded: a context with several error flags (or a lost one) stops answering NO_ERROR
    // only for as long as it has flags set.
    for _ in 0..32 {
        // SAFETY: our caller's promise.
        let e = unsafe { (f.get_error)() };
        if e == gl::NO_ERROR {
            break;
        }
        if first == gl::NO_ERROR {
            first = e;
        }
    }
    first
}

/// Raises `e` again (the program's pending error we took) with a known-invalid no-op call.
///
/// # Safety
/// The context `f` belongs to must be current.
unsafe fn raise(f: &ThermalFns, e: GLenum) {
    // SAFETY: our caller's promise; each call is rejected by GL with `e` and changes nothing
    // (enum 0 is no capability, a negative size is invalid, and name 0x7FFFFFF0 is no vertex
    // array anyone generated).
    unsafe {
        match e {
            gl::INVALID_ENUM => (f.enable)(0),
            gl::INVALID_VALUE => (f.viewport)(0, 0, -1, -1),
            gl::INVALID_OPERATION => (f.bind_vertex_array)(0x7fff_fff0),
            _ => {}
        }
    }
}

/// The program's GL error flags, kept across our work: [`ErrorScope::enter`] takes the
/// pending error, [`ErrorScope::leave`] (or dropping the scope) drains ours and raises the
/// program's again.
pub(crate) struct ErrorScope<'a> {
    f: &'a ThermalFns,
    pending: GLenum,
    open: bool,
}

impl<'a> ErrorScope<'a> {
    /// Takes the program's pending error.
    ///
    /// # Safety
    /// The context `f` belongs to must be current, and stay current until the scope ends.
    pub(crate) unsafe fn enter(f: &'a ThermalFns) -> ErrorScope<'a> {
        // SAFETY: our caller's promise.
        let pending = unsafe { (f.get_error)() };
        ErrorScope {
            f,
            pending,
            open: true,
        }
    }

    /// Drains our errors and raises the program's again; returns the first of ours
    /// (`GL_NO_ERROR` when our work raised none).
    pub(crate) fn leave(mut self) -> GLenum {
        self.close()
    }

    fn close(&mut self) -> GLenum {
        if !std::mem::replace(&mut self.open, false) {
            return gl::NO_ERROR;
        }
        // SAFETY: `enter`'s caller promised the context stays current for the scope.
        unsafe {
            let ours = drain_errors(self.f);
            raise(self.f, self.pending);
            ours
        }
    }
}

impl Drop for ErrorScope<'_> {
    fn drop(&mut self) {
        self.close();
    }
}

/// One piece of GL state our work may change.
#[derive(Clone, Copy)]
pub(crate) enum Piece {
    /// An object binding, read with `glGetIntegerv(query)` and restored with
    /// `bind(target, name)`.
    Binding {
        /// The binding's `glGetIntegerv` name.
        query: GLenum,
        /// The target `bind` takes.
        target: GLenum,
        /// `glBindFramebuffer`, `glBindBuffer`, `glBindTransformFeedback`…
        bind: BindFn,
    },
    /// The current program.
    Program,
    /// The vertex array binding.
    VertexArray,
    /// A capability (`glEnable` / `glDisable`).
    Enabled(GLenum),
    /// The viewport.
    Viewport,
    /// The scissor box.
    ScissorBox,
    /// Desktop GL's polygon mode (skipped when `glPolygonMode` is missing).
    PolygonMode,
    /// Stencil function, reference, masks and operations of both faces.
    Stencil,
    /// The colour write mask (draw buffer 0's, restored to every draw buffer).
    ColorMask,
    /// Blend functions and equations (not the per-draw-buffer ones).
    Blend,
    /// Pixel pack alignment, row length and skips.
    Pack,
}

/// The most values one piece holds (the stencil state of both faces).
const MAX_VALUES: usize = 14;

/// func, ref, value mask, fail, zfail, zpass, writemask: front, back.
const STENCIL_NAMES: [[GLenum; 7]; 2] = [
    [
        gl::STENCIL_FUNC,
        gl::STENCIL_REF,
        gl::STENCIL_VALUE_MASK,
        gl::STENCIL_FAIL,
        gl::STENCIL_PASS_DEPTH_FAIL,
        gl::STENCIL_PASS_DEPTH_PASS,
        gl::STENCIL_WRITEMASK,
    ],
    [
        gl::STENCIL_BACK_FUNC,
        gl::STENCIL_BACK_REF,
        gl::STENCIL_BACK_VALUE_MASK,
        gl::STENCIL_BACK_FAIL,
        gl::STENCIL_BACK_PASS_DEPTH_FAIL,
        gl::STENCIL_BACK_PASS_DEPTH_PASS,
        gl::STENCIL_BACK_WRITEMASK,
    ],
];
const BLEND_NAMES: [GLenum; 6] = [
    gl::BLEND_SRC_RGB,
    gl::BLEND_DST_RGB,
    gl::BLEND_SRC_ALPHA,
    gl::BLEND_DST_ALPHA,
    gl::BLEND_EQUATION_RGB,
    gl::BLEND_EQUATION_ALPHA,
];
const PACK_NAMES: [GLenum; 4] = [
    gl::PACK_ALIGNMENT,
    gl::PACK_ROW_LENGTH,
    gl::PACK_SKIP_ROWS,
    gl::PACK_SKIP_PIXELS,
];
/// The pixel pack state of our read-backs.
const PACK_DEFAULTS: [GLint; 4] = [4, 0, 0, 0];

/// The program's state, saved by [`Saved::take`] and put back when dropped.
pub(crate) struct Saved<'a> {
    f: &'a ThermalFns,
    pieces: Vec<(Piece, [GLint; MAX_VALUES])>,
}

impl<'a> Saved<'a> {
    /// Saves `pieces`.
    ///
    /// # Safety
    /// The context `f` belongs to must be current, and stay current until the guard drops;
    /// every piece must exist in it (GL 3.0+ or GLES 3.0+; `query` and `bind` of a binding
    /// must match and exist).
    pub(crate) unsafe fn take(f: &'a ThermalFns, pieces: &[Piece]) -> Saved<'a> {
        let mut saved = Vec::with_capacity(pieces.len());
        for &piece in pieces {
            let mut v = [0; MAX_VALUES];
            // SAFETY: our caller's promise: the context is current and each name exists.
            unsafe {
                match piece {
                    Piece::Binding { query, .. } => v[0] = f.integer(query),
                    Piece::Program => v[0] = f.integer(gl::CURRENT_PROGRAM),
                    Piece::VertexArray => v[0] = f.integer(gl::VERTEX_ARRAY_BINDING),
                    Piece::Enabled(cap) => v[0] = GLint::from((f.is_enabled)(cap) != 0),
                    Piece::Viewport => v[..4].copy_from_slice(&f.integers4(gl::VIEWPORT)),
                    Piece::ScissorBox => v[..4].copy_from_slice(&f.integers4(gl::SCISSOR_BOX)),
                    Piece::PolygonMode if f.polygon_mode.is_none() => continue,
                    Piece::PolygonMode => v[0] = f.integer(gl::POLYGON_MODE),
                    Piece::Stencil => {
                        for (slot, name) in v.iter_mut().zip(STENCIL_NAMES.iter().flatten()) {
                            *slot = f.integer(*name);
                        }
                    }
                    Piece::ColorMask => v[..4].copy_from_slice(&f.integers4(gl::COLOR_WRITEMASK)),
                    Piece::Blend => {
                        for (slot, name) in v.iter_mut().zip(BLEND_NAMES) {
                            *slot = f.integer(name);
                        }
                    }
                    Piece::Pack => {
                        for (slot, name) in v.iter_mut().zip(PACK_NAMES) {
                            *slot = f.integer(name);
                        }
                    }
                }
            }
            saved.push((piece, v));
        }
        Saved { f, pieces: saved }
    }

    /// The saved value of `piece` (its first four values), when it was saved.
    fn get(&self, piece: impl Fn(&Piece) -> bool) -> Option<[GLint; 4]> {
        self.pieces
            .iter()
            .find(|(p, _)| piece(p))
            .map(|(_, v)| [v[0], v[1], v[2], v[3]])
    }

    /// Whether capability `cap` was enabled (false when not saved).
    pub(crate) fn enabled(&self, cap: GLenum) -> bool {
        self.get(|p| matches!(p, Piece::Enabled(c) if *c == cap))
            .is_some_and(|v| v[0] != 0)
    }

    /// The saved viewport (zeros when not saved).
    #[cfg(test)]
    pub(crate) fn viewport(&self) -> [GLint; 4] {
        self.get(|p| matches!(p, Piece::Viewport))
            .unwrap_or_default()
    }

    /// The saved scissor box (zeros when not saved).
    pub(crate) fn scissor_box(&self) -> [GLint; 4] {
        self.get(|p| matches!(p, Piece::ScissorBox))
            .unwrap_or_default()
    }

    /// Restores one piece.
    ///
    /// # Safety
    /// As [`Saved::take`].
    unsafe fn restore(f: &ThermalFns, piece: Piece, v: &[GLint; MAX_VALUES]) {
        // SAFETY: our caller's promise; every value was read from the same state in the same
        // context, so setting it back is valid.
        unsafe {
            match piece {
                Piece::Binding { target, bind, .. } => bind(target, v[0] as GLuint),
                Piece::Program => (f.use_program)(v[0] as GLuint),
                Piece::VertexArray => (f.bind_vertex_array)(v[0] as GLuint),
                Piece::Enabled(cap) => f.set_enabled(cap, v[0] != 0),
                Piece::Viewport => (f.viewport)(v[0], v[1], v[2], v[3]),
                Piece::ScissorBox => (f.scissor)(v[0], v[1], v[2], v[3]),
                Piece::PolygonMode => {
                    if let Some(polygon_mode) = f.polygon_mode {
                        polygon_mode(gl::FRONT_AND_BACK, v[0] as GLenum);
                    }
                }
                Piece::Stencil => {
                    for (face, s) in [gl::FRONT, gl::BACK].into_iter().zip(v.chunks_exact(7)) {
                        (f.stencil_func_separate)(face, s[0] as GLenum, s[1], s[2] as GLuint);
                        (f.stencil_op_separate)(
                            face,
                            s[3] as GLenum,
                            s[4] as GLenum,
                            s[5] as GLenum,
                        );
                        (f.stencil_mask_separate)(face, s[6] as GLuint);
                    }
                }
                Piece::ColorMask => {
                    let m = [v[0], v[1], v[2], v[3]].map(|c| u8::from(c != 0));
                    (f.color_mask)(m[0], m[1], m[2], m[3]);
                }
                Piece::Blend => {
                    let b = v.map(|x| x as GLenum);
                    (f.blend_func_separate)(b[0], b[1], b[2], b[3]);
                    (f.blend_equation_separate)(b[4], b[5]);
                }
                Piece::Pack => {
                    for (name, value) in PACK_NAMES.into_iter().zip(v.iter()) {
                        (f.pixel_storei)(name, *value);
                    }
                }
            }
        }
    }
}

impl Drop for Saved<'_> {
    fn drop(&mut self) {
        for (piece, v) in &self.pieces {
            // SAFETY: `take`'s caller promised the context stays current while the guard
            // lives, and every piece exists in it.
            unsafe { Saved::restore(self.f, *piece, v) };
        }
    }
}

/// Pixel-pack state for our read-backs: no pack buffer, tight rows. Save
/// `GL_PIXEL_PACK_BUFFER_BINDING` and [`Piece::Pack`] first.
///
/// # Safety
/// The context `f` belongs to must be current (GL 3.0+ or GLES 3.0+).
pub(crate) unsafe fn pack_defaults(f: &ThermalFns) {
    // SAFETY: our caller's promise; these names exist in GL 3.0+ and GLES 3.0+.
    unsafe {
        (f.bind_buffer)(gl::PIXEL_PACK_BUFFER, 0);
        for (name, value) in PACK_NAMES.into_iter().zip(PACK_DEFAULTS) {
            (f.pixel_storei)(name, value);
        }
    }
}

/// An object binding cleared for our work (query results read with a query buffer bound
/// would be written into the program's buffer) and put back when dropped.
pub(crate) struct Unbound {
    bind: BindFn,
    target: GLenum,
    name: GLuint,
}

impl Unbound {
    /// Binds 0 to `target` when `glGetIntegerv(query)` says a name is bound there; `None`
    /// (and nothing changed) when none is.
    ///
    /// # Safety
    /// A context must be current, and stay current until the guard drops; `get` and `bind`
    /// must be its real `glGetIntegerv` and the bind call of `target`, and `query` the
    /// binding of `target`, all existing in the context.
    pub(crate) unsafe fn take(
        get: gl::GetIntegervFn,
        query: GLenum,
        target: GLenum,
        bind: BindFn,
    ) -> Option<Unbound> {
        // SAFETY: our caller's promise.
        let name = unsafe { gl::integer(get, query) } as GLuint;
        if name == 0 {
            return None;
        }
        // SAFETY: our caller's promise; 0 unbinds.
        unsafe { bind(target, 0) };
        Some(Unbound { bind, target, name })
    }
}

impl Drop for Unbound {
    fn drop(&mut self) {
        // SAFETY: `take`'s caller promised the context stays current while the guard lives;
        // `name` was bound there before.
        unsafe { (self.bind)(self.target, self.name) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gl::GlFns;
    use gpuheat_examples::gfx::{Api, Gfx};

    /// The state the test's "program" set, as `glGet` reports it.
    ///
    /// # Safety
    /// `f`'s context must be current.
    unsafe fn snapshot(f: &ThermalFns) -> Vec<GLint> {
        let mut v = Vec::new();
        // SAFETY: our caller's promise; every name exists in GL 4.5 and GLES 3.2.
        unsafe {
            for name in [gl::SCISSOR_BOX, gl::COLOR_WRITEMASK, gl::VIEWPORT] {
                v.extend(f.integers4(name));
            }
            for name in STENCIL_NAMES.iter().flatten().chain(&BLEND_NAMES) {
                v.push(f.integer(*name));
            }
            v.push(f.integer(gl::PACK_ALIGNMENT));
            v.push(GLint::from((f.is_enabled)(gl::SCISSOR_TEST)));
        }
        v
    }

    /// Our work changes every saved piece and raises an error of its own; afterwards the
    /// program sees its own state and only its own pending error.
    #[test]
    fn saved_state_comes_back_and_the_programs_error_is_raised_again() {
        for api in Api::ALL {
            let _gfx = Gfx::new(api, 64, 48).expect("EGL context");
            // SAFETY: eglGetProcAddress returns null or the named function.
            let gl = unsafe {
                GlFns::load(|name| gpuheat_examples::gl::eglGetProcAddress(name.as_ptr()).cast())
            }
            .expect("GL functions");
            let f = gl.thermal.as_ref().expect("painting functions");
            // SAFETY: the context `Gfx::new` made is current on this thread.
            unsafe {
                // The program's state and its pending error.
                (f.scissor)(1, 2, 3, 4);
                (f.enable)(gl::SCISSOR_TEST);
                (f.color_mask)(1, 0, 1, 0);
                (f.pixel_storei)(gl::PACK_ALIGNMENT, 1);
                (f.stencil_func_separate)(gl::BACK, gl::EQUAL, 3, 0x0F);
                (f.blend_func_separate)(gl::ONE, gl::ONE, gl::ONE, gl::ONE);
                (f.viewport)(5, 6, 7, 8);
                assert_eq!((f.get_error)(), gl::NO_ERROR);
                let program = snapshot(f);
                (f.enable)(0);

                let errors = ErrorScope::enter(f);
                let saved = Saved::take(
                    f,
                    &[
                        Piece::ScissorBox,
                        Piece::Enabled(gl::SCISSOR_TEST),
                        Piece::ColorMask,
                        Piece::Pack,
                        Piece::Stencil,
                        Piece::Blend,
                        Piece::Viewport,
                    ],
                );
                assert_eq!(saved.viewport(), [5, 6, 7, 8]);
                assert!(saved.enabled(gl::SCISSOR_TEST));
                (f.scissor)(0, 0, 9, 9);
                (f.disable)(gl::SCISSOR_TEST);
                (f.color_mask)(1, 1, 1, 1);
                pack_defaults(f);
                (f.stencil_func_separate)(gl::FRONT_AND_BACK, gl::ALWAYS, 0, 0xFF);
                (f.blend_func_separate)(gl::ONE, gl::ONE, gl::ONE, gl::ONE);
                (f.viewport)(0, 0, 64, 48);
                (f.viewport)(0, 0, -1, -1); // An error of ours.
                drop(saved);
                assert_eq!(errors.leave(), gl::INVALID_VALUE, "{api:?}");

                assert_eq!((f.get_error)(), gl::INVALID_ENUM, "{api:?}");
                assert_eq!((f.get_error)(), gl::NO_ERROR, "{api:?}");
                assert_eq!(snapshot(f), program, "{api:?}");
            }
        }
    }
}
