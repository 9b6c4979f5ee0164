//! Display lists (`glCallList`, `glCallLists`): their vertices were compiled into the list
//! (`glBegin`/`glVertex`/`glEnd` between `glNewList` and `glEndList`), so no argument of the
//! call says how many there are, nor which kind of primitive they make. Running the list
//! again is the only way to learn it: a first replay records nothing (a 4-byte range) and
//! counts what the list generates with `GL_PRIMITIVES_GENERATED`, read back at once (one
//! wait per list; lists are a GL 1.x idiom, a handful per frame where they are used); a
//! second replay records up to three vertices per primitive. Transform feedback takes one
//! kind of primitive per replay: a driver that checks refuses the other kinds (the count
//! tries triangles, which take quads and polygons too, then lines, then points); Mesa does
//! not check a list's primitives and records them as they are, so the kind is learnt from
//! the vertices written per primitive, the second replay's range being filled with a
//! sentinel first (`replay.rs`). A list that mixes kinds gets a `GeometryMissing`.
//!
//! A list holds state commands too. Each replay runs with every attribute group pushed
//! (`glPushAttrib(GL_ALL_ATTRIB_BITS)`: a `glBitmap` text list run again could otherwise
//! move the raster position of the program's next string) and with the modelview, projection and
//! active texture matrix stacks pushed, and puts them back exactly as they were, whatever the
//! list did to them (a list that pops more than it pushed is the one case where what it
//! popped is lost: the program's own call of it lost it too; a list that pops attributes it
//! did not push gets no positions). The replay runs after the program's
//! call, from the matrices the call left: a list that changes them for good (a
//! `glTranslate` without push and pop) is replayed from a different transform than the
//! program's call was, so it gets no positions, with that reason.

use std::cell::Cell;

use gpuheat_session::DrawGeometry;

use crate::gl::*;
use crate::state::drain_errors;

use super::draw::{DrawCall, Plan};
use super::replay::Replay;
use super::{GeometryCapture, ProgramLink, Recorded};

/// Whether entry point `name` runs display lists, or is replayed as one: `glEnd`, whose
/// block of immediate mode is run again from the list recorded as it ran
/// ([`crate::immediate`]), and `glRect*`, whose arguments say nothing of the primitive.
pub(super) fn is_list(name: &str) -> bool {
    matches!(name, "glCallList" | "glCallLists" | "glEnd") || name.starts_with("glRect")
}

/// The matrix stacks a list's replay saves: (matrix mode, its matrix, its stack depth,
/// whether the list's positions depend on it). The texture stack is the active unit's.
const STACKS: [(GLenum, GLenum, GLenum, bool); 3] = [
    (MODELVIEW, MODELVIEW_MATRIX, MODELVIEW_STACK_DEPTH, true),
    (PROJECTION, PROJECTION_MATRIX, PROJECTION_STACK_DEPTH, true),
    (TEXTURE, TEXTURE_MATRIX, TEXTURE_STACK_DEPTH, false),
];

/// The matrix and attribute stack functions of a compatibility context.
#[derive(Clone, Copy)]
struct MatrixFns {
    mode: unsafe extern "system" fn(GLenum),
    push: unsafe extern "system" fn(),
    pop: unsafe extern "system" fn(),
    load: unsafe extern "system" fn(*const GLfloat),
    get: unsafe extern "system" fn(GLenum, *mut GLfloat),
    push_attrib: unsafe extern "system" fn(GLenum),
    pop_attrib: unsafe extern "system" fn(),
}

impl MatrixFns {
    fn of(g: &GeometryFns) -> Option<MatrixFns> {
        Some(MatrixFns {
            mode: g.matrix_mode?,
            push: g.push_matrix?,
            pop: g.pop_matrix?,
            load: g.load_matrixf?,
            get: g.get_floatv?,
            push_attrib: g.push_attrib?,
            pop_attrib: g.pop_attrib?,
        })
    }
}

/// The state as a list's replay found it: every attribute group pushed (a list's commands
/// set state, mostly to the values the program's call of it left, but not all: `glBitmap`
/// moves the raster position, so a text list run again could move the program's next
/// string; Mesa does not move it under rasterizer discard, which GL does not promise), and
/// the matrix stacks saved and pushed (matrices are no attribute).
struct Pushed {
    fns: MatrixFns,
    mode: GLenum,
    /// The attribute stack's depth before our push.
    attrib_depth: GLint,
    /// Per stack of [`STACKS`]: its depth and its top before the push.
    saved: [(GLint, [GLfloat; 16]); 3],
}

impl Pushed {
    /// Saves and pushes the attributes and the stacks (a full stack fails the push: it is
    /// undone, and the replay does not run).
    ///
    /// # Safety
    /// A compatibility context must be current, `t`, `f` its real functions, inside an
    /// [`crate::state::ErrorScope`].
    unsafe fn enter(t: &ThermalFns, f: MatrixFns) -> Result<Pushed, String> {
        // SAFETY: our caller's promise; each matrix query writes 16 floats into its array.
        unsafe {
            let mode = t.integer(MATRIX_MODE) as GLenum;
            let attrib_depth = t.integer(ATTRIB_STACK_DEPTH);
            let mut saved = [(0, [0.0; 16]); 3];
            for (s, &(_, matrix, depth, _)) in saved.iter_mut().zip(&STACKS) {
                s.0 = t.integer(depth);
                (f.get)(matrix, s.1.as_mut_ptr());
            }
            (f.push_attrib)(ALL_ATTRIB_BITS);
            for &(m, ..) in &STACKS {
                (f.mode)(m);
                (f.push)();
            }
            (f.mode)(mode);
            let e = drain_errors(t);
            if e != NO_ERROR {
                for (s, &(m, _, depth, _)) in saved.iter().zip(&STACKS) {
                    if t.integer(depth) > s.0 {
                        (f.mode)(m);
                        (f.pop)();
                    }
                }
                (f.mode)(mode);
                if t.integer(ATTRIB_STACK_DEPTH) > attrib_depth {
                    (f.pop_attrib)();
                }
                drain_errors(t);
                return Err(format!(
                    "GL error 0x{e:04X} pushing the state for the display list's replay (a \
                     full stack?)"
                ));
            }
            Ok(Pushed {
                fns: f,
                mode,
                attrib_depth,
                saved,
            })
        }
    }

    /// Puts the stacks and attributes back as [`Pushed::enter`] found them; `Some(why)`
    /// when the list left the modelview or projection changed (its replay then started from
    /// another transform than the program's call) or popped attributes it did not push.
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
                (f.get)(matrix, current.as_mut_ptr());
                (f.mode)(m);
                if now > depth {
                    // Our pushed copy is still there: popping down to it gives the
                    // program's entries back untouched.
                    changed |= positions && (now != depth + 1 || current != top);
                    for _ in depth..now {
                        (f.pop)();
                    }
                } else {
                    // The list popped our copy (and maybe more): the top is put back; what
                    // it popped below it is gone, as after the program's own call.
                    changed |= positions;
                    for _ in now..depth {
                        (f.push)();
                    }
                    (f.load)(top.as_ptr());
                }
            }
            (f.mode)(self.mode);
            if popped_ours {
                return Some(
                    "the display list pops attributes it did not push (its replay cannot put \
                     them back)"
                        .into(),
                );
            }
        }
        changed.then(|| {
            "the display list changes the matrices it leaves behind (its replay would start \
             from another transform than the program's call)"
                .to_string()
        })
    }
}

impl GeometryCapture {
    /// Replays display list call `draw` twice (count, then record) with the shadow of its
    /// vertex stage, each run inside saved matrix stacks.
    ///
    /// # Safety
    /// As [`GeometryCapture::capture`], inside an [`crate::state::ErrorScope`].
    pub(super) unsafe fn replay_list(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        draw: DrawCall<'_>,
        call: u32,
        link: &dyn Fn(GLuint) -> ProgramLink,
        replay: &dyn Fn(),
    ) -> Result<Recorded, String> {
        let Some(fns) = MatrixFns::of(g) else {
            return Err(format!(
                "{}: the GL loader has no matrix stack functions (glPushMatrix & co)",
                draw.name
            ));
        };
        // Why a run of the list spoiled its replay: it left the matrices changed, popped
        // attributes it did not push, or the state could not be pushed.
        let spoiled: Cell<Option<String>> = Cell::new(None);
        let run = || {
            // SAFETY: the caller's promise (a compatibility context current: it just ran a
            // display list), inside `record`'s error handling.
            unsafe {
                match Pushed::enter(t, fns) {
                    Ok(p) => {
                        replay();
                        if let Some(why) = p.leave(t) {
                            spoiled.set(Some(why));
                        }
                    }
                    Err(why) => spoiled.set(Some(why)),
                }
            }
        };
        let flags = (self.pipelines, self.vertex_program_arb);
        // SAFETY: our caller's promise.
        let (program, shadow) =
            unsafe { Self::vertex_stage(&mut self.shadows, flags, t, g, link)? };
        // Replays read back with the count, filed into the frame once `shadow` (a borrow of
        // `self`) is done with.
        let mut read_back = Vec::new();
        let result = 'kinds: {
            let mut first_error = None;
            // A driver that checks the list's primitives against the transform feedback's
            // refuses the wrong kinds; Mesa records them as they are, and the kind is
            // learnt from what was written (`replay.rs`).
            for primitive in [TRIANGLES, LINES, POINTS] {
                let count = Replay {
                    program,
                    shadow,
                    plan: Plan {
                        primitive,
                        per: 1,
                        expected: u64::MAX,
                        indexed: false,
                        list: false,
                    },
                    keep: 0,
                    budget: self.budget,
                    generated_query: true,
                    call,
                    name: draw.name,
                    unroll: None,
                    deduce_kind: false,
                };
                // SAFETY: our caller's promise; `run` runs the list `draw` calls.
                let counted = unsafe { self.feedback.record(t, g, count, &run) };
                if let Some(why) = spoiled.take() {
                    if counted.is_ok() {
                        self.feedback.forget_last(call);
                    }
                    break 'kinds Err(why);
                }
                if let Err(why) = counted {
                    first_error.get_or_insert(why);
                    continue;
                }
                // SAFETY: our caller's promise. Reads back every pending replay, ours last:
                // the list's primitives (what the driver counts as one: at most 3 vertices).
                read_back = unsafe { self.feedback.resolve(t, g) };
                let generated = match read_back.pop() {
                    Some((_, Ok(d))) => d.dropped_vertices,
                    Some((_, Err(m))) => break 'kinds Err(m.reason),
                    None => break 'kinds Err("the display list's count was not read back".into()),
                };
                if generated == 0 {
                    break 'kinds Ok(Recorded::Now(DrawGeometry {
                        call: 0,
                        primitive,
                        positions: Vec::new(),
                        dropped_vertices: 0,
                        // SAFETY: our caller's promise.
                        viewport: unsafe { t.integers4(VIEWPORT) },
                    }));
                }
                let most = generated.saturating_mul(3);
                let keep = self.budget.saturating_sub(self.used).min(most);
                let r = Replay {
                    program,
                    shadow,
                    plan: Plan {
                        primitive,
                        per: 1,
                        expected: most,
                        indexed: false,
                        list: false,
                    },
                    keep,
                    budget: self.budget,
                    generated_query: keep < most,
                    call,
                    name: draw.name,
                    unroll: None,
                    deduce_kind: true,
                };
                // SAFETY: as above.
                let recorded = unsafe { self.feedback.record(t, g, r, &run) };
                if let Some(why) = spoiled.take() {
                    if recorded.is_ok() {
                        self.feedback.forget_last(call);
                    }
                    break 'kinds Err(why);
                }
                if let Err(why) = recorded {
                    break 'kinds Err(why);
                }
                self.used += keep;
                break 'kinds Ok(Recorded::Pending(keep));
            }
            Err(format!(
                "{}: the display list's replay was refused as triangles, lines and points (it \
                 mixes kinds of primitive, which one transform feedback cannot record): {}",
                draw.name,
                first_error.unwrap_or_default()
            ))
        };
        self.settle_into_frame(read_back);
        result
    }
}
