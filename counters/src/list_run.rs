//! Running a display list again, as the program's call of it ran.
//!
//! Heat and geometry run a `glCallList(s)` again after the program's call. A list holds state
//! commands as well as vertices, and most of them set what the program's call left already,
//! so running them again changes nothing. Two kinds do not:
//!
//! - **Matrix commands accumulate.** A list that begins with `glTranslatef` and has no
//!   `glPushMatrix`/`glPopMatrix` (text lists, xscreensaver's `beats` and `glschool`) leaves
//!   the modelview moved. Run again from the matrix the call left, it draws one step further
//!   on, and it moves the matrix again: the program's next draws land elsewhere, which
//!   changes its frames.
//! - **`glBitmap` moves the raster position.** A text list run again would move the
//!   program's next string.
//!
//! So each run here first pushes every attribute group (`glPushAttrib(GL_ALL_ATTRIB_BITS)`)
//! and the modelview, projection and active texture matrix stacks. It then loads the matrices
//! and matrix mode the program's call started from ([`ListStart`], read just before that
//! call), so the list draws where the program's call drew. Afterwards it puts the stacks and
//! attributes back exactly as the program's call left them, whatever the list did to them.
//!
//! A list that pops more than it pushed is the one case where what it popped is lost: the
//! program's own call of it lost it too. A list that pops attributes it did not push cannot
//! have them put back, and says so. Where the start could not be read, the run starts from
//! what the call left, and a list that changed the modelview or projection says that its run
//! did not draw where the program's did.

use crate::gl::*;
use crate::state::drain_errors;

/// The matrix stacks a list's run saves: (matrix mode, its matrix, its stack depth, whether
/// positions depend on it). The texture stack is the active unit's.
const STACKS: [(GLenum, GLenum, GLenum, bool); 3] = [
    (MODELVIEW, MODELVIEW_MATRIX, MODELVIEW_STACK_DEPTH, true),
    (PROJECTION, PROJECTION_MATRIX, PROJECTION_STACK_DEPTH, true),
    (TEXTURE, TEXTURE_MATRIX, TEXTURE_STACK_DEPTH, false),
];

/// The matrices a program's `glCallList(s)` started from: the tops of [`STACKS`] and the
/// matrix mode, read before the program's call (a list may change all of them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListStart {
    mode: GLenum,
    tops: [[GLfloat; 16]; 3],
}

impl ListStart {
    /// Reads the matrices the program's next call will start from. Raises no GL error on a
    /// compatibility context outside `glBegin`/`glEnd`.
    ///
    /// # Safety
    /// A compatibility context must be current, outside `glBegin`/`glEnd`; `t` and `m` its
    /// real functions.
    pub unsafe fn read(t: &ThermalFns, m: &MatrixFns) -> ListStart {
        let mut tops = [[0.0; 16]; 3];
        // SAFETY: our caller's promise; each matrix query writes 16 floats into its array.
        unsafe {
            for (top, &(_, matrix, ..)) in tops.iter_mut().zip(&STACKS) {
                (m.get_floatv)(matrix, top.as_mut_ptr());
            }
            ListStart {
                mode: t.integer(MATRIX_MODE) as GLenum,
                tops,
            }
        }
    }
}

/// How a list call is run again: the context's stack functions and, where it was read, the
/// start of the program's call.
#[derive(Clone, Copy)]
pub struct ListRun<'a> {
    /// The context's matrix and attribute stack functions.
    pub fns: &'a MatrixFns,
    /// The matrices the program's call started from (`None`: not read; the run starts from
    /// those the call left).
    pub start: Option<&'a ListStart>,
}

impl ListRun<'_> {
    /// Runs `replay` (the list call again) inside saved stacks, from the program's start,
    /// and puts back the state the program's call left. `Err(why)`: the state could not be
    /// pushed (a full stack: the list did not run), or the run could not be faithful (it
    /// popped attributes it did not push, or it changed the matrices with no start to run
    /// from).
    ///
    /// # Safety
    /// A compatibility context must be current outside `glBegin`/`glEnd`, `t` and the run's
    /// functions its real ones, inside an [`crate::state::ErrorScope`]; `replay` calls a list
    /// of that context.
    pub unsafe fn run(&self, t: &ThermalFns, replay: &dyn Fn()) -> Result<(), String> {
        // SAFETY: our caller's promise.
        unsafe {
            let pushed = Pushed::enter(t, *self.fns, self.start)?;
            replay();
            match pushed.leave(t) {
                Some(why) => Err(why),
                None => Ok(()),
            }
        }
    }
}

/// The state as a list's run found it: every attribute group pushed, and the matrix stacks
/// saved and pushed (matrices are no attribute).
struct Pushed {
    fns: MatrixFns,
    mode: GLenum,
    /// The attribute stack's depth before our push.
    attrib_depth: GLint,
    /// Per stack of [`STACKS`]: its depth and its top before the push.
    saved: [(GLint, [GLfloat; 16]); 3],
    /// The run started from the program's matrices.
    started: bool,
}

impl Pushed {
    /// Saves and pushes the attributes and the stacks, then loads `start` (a full stack
    /// fails the push: it is undone, and the list must not run).
    ///
    /// # Safety
    /// As [`ListRun::run`].
    unsafe fn enter(
        t: &ThermalFns,
        f: MatrixFns,
        start: Option<&ListStart>,
    ) -> Result<Pushed, String> {
        // SAFETY: our caller's promise; each matrix query writes 16 floats into its array.
        unsafe {
            let mode = t.integer(MATRIX_MODE) as GLenum;
            let attrib_depth = t.integer(ATTRIB_STACK_DEPTH);
            let mut saved = [(0, [0.0; 16]); 3];
            for (s, &(_, matrix, depth, _)) in saved.iter_mut().zip(&STACKS) {
                s.0 = t.integer(depth);
                (f.get_floatv)(matrix, s.1.as_mut_ptr());
            }
            (f.push_attrib)(ALL_ATTRIB_BITS);
            for &(m, ..) in &STACKS {
                (f.matrix_mode)(m);
                (f.push_matrix)();
            }
            let e = drain_errors(t);
            if e != NO_ERROR {
                for (s, &(m, _, depth, _)) in saved.iter().zip(&STACKS) {
                    if t.integer(depth) > s.0 {
                        (f.matrix_mode)(m);
                        (f.pop_matrix)();
                    }
                }
                (f.matrix_mode)(mode);
                if t.integer(ATTRIB_STACK_DEPTH) > attrib_depth {
                    (f.pop_attrib)();
                }
                drain_errors(t);
                return Err(format!(
                    "GL error 0x{e:04X} pushing the state for the display list's replay (a \
                     full stack?)"
                ));
            }
            match start {
                Some(s) => {
                    for (top, &(m, ..)) in s.tops.iter().zip(&STACKS) {
                        (f.matrix_mode)(m);
                        (f.load_matrixf)(top.as_ptr());
                    }
                    (f.matrix_mode)(s.mode);
                }
                None => (f.matrix_mode)(mode),
            }
            Ok(Pushed {
                fns: f,
                mode,
                attrib_depth,
                saved,
                started: start.is_some(),
            })
        }
    }

    /// Puts the stacks and attributes back as [`Pushed::enter`] found them; `Some(why)`
    /// when the list popped attributes it did not push, or, run from the matrices the call
    /// left, changed the modelview or projection (it then drew elsewhere than the program's
    /// call).
    ///
    /// # Safety
    /// As [`Pushed::enter`], with the same context current.
    unsafe fn leave(self, t: &ThermalFns) -> Option<String> {
        let f = self.fns;
        let mut changed = false;
        // SAFETY: our caller's promise; each matrix query writes 16 floats into its array,
        // and each pop removes an entry above the depth saved.
        unsafe {
            // Attributes first: they hold the active texture unit, whose texture stack is
            // the one saved.
            let now = t.integer(ATTRIB_STACK_DEPTH);
            for _ in self.attrib_depth..now {
                (f.pop_attrib)();
            }
            let popped_ours = now <= self.attrib_depth;
            for (&(depth, top), &(m, matrix, depth_q, positions)) in self.saved.iter().zip(&STACKS)
            {
                let now = t.integer(depth_q);
                let mut current = [0.0; 16];
                (f.get_floatv)(matrix, current.as_mut_ptr());
                (f.matrix_mode)(m);
                if now > depth {
                    // Our pushed copy is still there: popping down to it gives the
                    // program's entries back untouched.
                    changed |= positions && (now != depth + 1 || current != top);
                    for _ in depth..now {
                        (f.pop_matrix)();
                    }
                } else {
                    // The list popped our copy (and maybe more): the top is put back; what
                    // it popped below it is gone, as after the program's own call.
                    changed |= positions;
                    for _ in now..depth {
                        (f.push_matrix)();
                    }
                    (f.load_matrixf)(top.as_ptr());
                }
            }
            (f.matrix_mode)(self.mode);
            if popped_ours {
                return Some(
                    "the display list pops attributes it did not push (its replay cannot put \
                     them back)"
                        .into(),
                );
            }
        }
        (changed && !self.started).then(|| {
            "the display list changes the matrices it leaves behind, and the matrices its call \
             started from were not read (its replay would start from another transform than \
             the program's call)"
                .to_string()
        })
    }
}
