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
//! A list holds state commands too: each replay runs inside the saved state of
//! [`crate::list_run`], from the matrices the program's call started from, and puts back
//! what the call left.

use std::cell::Cell;

use gpuheat_session::DrawGeometry;

use crate::gl::*;

use super::draw::{DrawCall, Plan};
use super::replay::Replay;
use super::{GeometryCapture, ProgramLink, Recorded};

/// Whether entry point `name` runs display lists, or is replayed as one: `glEnd`, whose
/// block of immediate mode is run again from the list recorded as it ran
/// ([`crate::immediate`]), and `glRect*`, whose arguments say nothing of the primitive.
pub(super) fn is_list(name: &str) -> bool {
    matches!(name, "glCallList" | "glCallLists" | "glEnd") || name.starts_with("glRect")
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
        let Some(list) = draw.list else {
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
            if let Err(why) = unsafe { list.run(t, replay) } {
                spoiled.set(Some(why));
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
