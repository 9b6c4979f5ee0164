//! Display lists (`glCallList`, `glCallLists`): their vertices were compiled into the list
//! (`glBegin`/`glVertex`/`glEnd` between `glNewList` and `glEndList`), so no argument of the
//! call says how many there are, nor which kind of primitive they make. Running the list
//! again is the only way to learn it: a first replay records nothing (a 4-byte range) and
//! counts what the list generates with `GL_PRIMITIVES_GENERATED`, read back at once (a
//! wait); a second replay records up to three vertices per primitive. A `glCallList`'s
//! count is remembered by its list's name until the program makes or deletes any list
//! ([`lists_changed`]): later calls of it record at once, in a range of the remembered size,
//! counting what they generate, and one that dropped vertices anyway (the budget ran out, or
//! what a list generates hangs on state such as evaluators) is counted again the next time. glxgears waited 4 times a
//! frame for its 4 lists; xscreensaver's beats 1,260. A `glEnd` block is bounded by what the
//! agent saw of it ([`super::BlockShape`]: its mode, and the calls between its `glBegin` and
//! `glEnd`, one at least per vertex), and records at once too, as does a `glRect*` (two
//! triangles). A `glCallLists` (its names in client memory, often a string of text) is
//! remembered by its names and list base ([`call_lists_key`]): the same text drawn again
//! records at once, another is counted. Transform feedback takes one
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
use std::sync::atomic::{AtomicU64, Ordering};

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

/// The triangles a `glRect*` makes: its one polygon of four vertices, decomposed.
const RECT_TRIANGLES: u64 = 2;

/// The transform feedback primitive a `glBegin` mode's primitives are recorded as.
fn block_kind(mode: GLenum) -> GLenum {
    match mode {
        POINTS => POINTS,
        LINES | LINE_LOOP | LINE_STRIP => LINES,
        _ => TRIANGLES,
    }
}

/// Bytes of one name of a `glCallLists` of `kind` (`None`: not a kind it takes, and the
/// program's call raised `GL_INVALID_ENUM`).
fn name_bytes(kind: GLenum) -> Option<usize> {
    match kind {
        BYTE | UNSIGNED_BYTE => Some(1),
        SHORT | UNSIGNED_SHORT | GL_2_BYTES => Some(2),
        GL_3_BYTES => Some(3),
        INT | UNSIGNED_INT | FLOAT | GL_4_BYTES => Some(4),
        _ => None,
    }
}

/// Most bytes of names a `glCallLists` is remembered by: a longer call is counted each time.
const MOST_NAME_BYTES: usize = 1 << 16;

/// What a `glCallLists` call's count is remembered by: its `n` names of kind `args[1]` at
/// `args[2]` and the list base they are offset by, hashed, with bit 63 set so that no list
/// name (32 bits) is one. The same text drawn again, frame after frame, is the same lists:
/// xscreensaver `molecule`'s labels or a game's menu. `None` where there are no names to
/// read. A remembered count that turns out wrong (the lists made again unannounced, or two
/// calls' names hashing alike) drops vertices, which are counted, and is counted again at
/// the next call, as for a `glCallList`.
///
/// # Safety
/// `args` are the arguments of a `glCallLists` the program just made: its names are readable
/// at `args[2]` (the call read them), or it raised an error for them.
unsafe fn call_lists_key(args: &[u64], base: GLint) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let (&n, &kind, &at) = (args.first()?, args.get(1)?, args.get(2)?);
    // A 32-bit argument fills only the low half of its register: the upper half is not
    // the program's and may differ from call to call.
    let (n, kind) = (n as i32, kind as GLenum);
    let n = usize::try_from(n).ok().filter(|&n| n > 0)?;
    let bytes = n.checked_mul(name_bytes(kind)?)?;
    if at == 0 || bytes > MOST_NAME_BYTES {
        return None;
    }
    // SAFETY: our caller's promise: the program's call read these `bytes` bytes.
    let names = unsafe { std::slice::from_raw_parts(at as usize as *const u8, bytes) };
    let mut h = std::hash::DefaultHasher::new();
    (base, kind, names).hash(&mut h);
    Some(h.finish() | 1 << 63)
}

/// How many times the program made or deleted a display list, in any context (lists may be
/// shared): a count remembered under an older value may be out of date.
static LISTS_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The program made a display list again (`glNewList`) or deleted some (`glDeleteLists`):
/// what every context remembered lists to generate is forgotten. A list that calls another
/// generates what that one does, so one change forgets them all.
pub fn lists_changed() {
    LISTS_GENERATION.fetch_add(1, Ordering::Relaxed);
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
        let named = match draw.name {
            "glCallList" => draw.args.first().map(|&n| n & 0xFFFF_FFFF),
            // SAFETY: our caller's promise: `args` are the call's, whose names the program's
            // call has just read, and the context is current.
            "glCallLists" => unsafe { call_lists_key(draw.args, t.integer(LIST_BASE)) },
            _ => None,
        };
        let generation = LISTS_GENERATION.load(Ordering::Relaxed);
        if generation != self.list_counts_of {
            self.list_counts.clear();
            self.list_counts_of = generation;
        }
        // A block's mode and most vertices bound what it makes as a count would: each
        // vertex makes at most one primitive of the kind its mode is recorded as. A rectangle
        // is one polygon of four vertices: two triangles.
        let remembered = match draw.block.filter(|_| draw.name == "glEnd") {
            Some(b) => Some((block_kind(b.mode), b.vertices_at_most)),
            None if draw.name.starts_with("glRect") => Some((TRIANGLES, RECT_TRIANGLES)),
            None => named.and_then(|n| self.list_counts.get(&n).copied()),
        };
        // Replays read back with the count, filed into the frame once `shadow` (a borrow of
        // `self`) is done with.
        let mut read_back = Vec::new();
        let result = 'kinds: {
            let mut first_error = None;
            // A driver that checks the list's primitives against the transform feedback's
            // refuses the wrong kinds; Mesa records them as they are, and the kind is
            // learnt from what was written (`replay.rs`).
            let kinds = match remembered {
                Some((primitive, _)) => vec![primitive],
                None => vec![TRIANGLES, LINES, POINTS],
            };
            for primitive in kinds {
                let generated = match remembered {
                    Some((_, generated)) => generated,
                    None => {
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
                            None => {
                                break 'kinds Err(
                                    "the display list's count was not read back".into()
                                )
                            }
                        };
                        // A list that generated nothing is counted again each time: a
                        // remembered 0 would record nothing once it draws.
                        if let Some(n) = named.filter(|_| generated > 0) {
                            self.list_counts.insert(n, (primitive, generated));
                        }
                        generated
                    }
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
                    // A remembered count may be out of date: what was dropped is counted.
                    generated_query: keep < most || remembered.is_some(),
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
                    if let Some(n) = named.filter(|_| remembered.is_some()) {
                        self.list_counts.remove(&n);
                    }
                    break 'kinds Err(why);
                }
                self.used += keep;
                if let (Some(n), Some(_)) = (named, remembered) {
                    self.from_counts.insert(call, n);
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`call_lists_key`] of `names` as the program passed them.
    fn key<T>(names: &[T], kind: GLenum, base: GLint) -> Option<u64> {
        let args = [names.len() as u64, u64::from(kind), names.as_ptr() as u64];
        // SAFETY: `names` is readable for its length.
        unsafe { call_lists_key(&args, base) }
    }

    #[test]
    fn a_call_lists_is_remembered_by_its_names_their_kind_and_the_list_base() {
        let text = key(b"score 12", UNSIGNED_BYTE, 100).expect("a key");
        assert_eq!(
            key(b"score 12", UNSIGNED_BYTE, 100),
            Some(text),
            "the same call"
        );
        assert!(text >> 63 == 1, "never a list name");
        for other in [
            key(b"score 13", UNSIGNED_BYTE, 100),
            key(b"score 12", UNSIGNED_BYTE, 200),
            key(b"score 12", BYTE, 100),
            key(b"score 1", UNSIGNED_BYTE, 100),
        ] {
            assert!(other.is_some_and(|k| k != text));
        }
        // The upper halves of the 32-bit arguments' registers are not the program's.
        let names = b"score 12";
        let args = [
            0xDEAD_0000_0000_0000 | names.len() as u64,
            0xBEEF_0000_0000_0000 | u64::from(UNSIGNED_BYTE),
            names.as_ptr() as u64,
        ];
        // SAFETY: `names` is readable for its length.
        assert_eq!(unsafe { call_lists_key(&args, 100) }, Some(text));
        assert!(key(&[1u32, 2, 3], UNSIGNED_INT, 0).is_some());
        assert!(key(&[1u8, 2, 3, 4, 5, 6], GL_3_BYTES, 0).is_some());
    }

    #[test]
    fn a_call_lists_without_names_to_read_is_counted_each_time() {
        assert_eq!(key(b"abc", TRIANGLES, 0), None, "not a kind of name");
        assert_eq!(key::<u8>(&[], UNSIGNED_BYTE, 0), None, "no names");
        let args = [3, u64::from(UNSIGNED_BYTE), 0];
        // SAFETY: a null pointer is not read.
        assert_eq!(unsafe { call_lists_key(&args, 0) }, None, "no pointer");
        let negative = [u64::from(u32::MAX), u64::from(UNSIGNED_BYTE), 8];
        // SAFETY: a negative count reads nothing.
        assert_eq!(unsafe { call_lists_key(&negative, 0) }, None, "n < 0");
        let long = vec![0u8; MOST_NAME_BYTES + 1];
        assert_eq!(
            key(&long, UNSIGNED_BYTE, 0),
            None,
            "too long to hash each time"
        );
    }

    #[test]
    fn each_kind_of_name_has_its_size() {
        assert_eq!(name_bytes(UNSIGNED_BYTE), Some(1));
        assert_eq!(name_bytes(GL_2_BYTES), Some(2));
        assert_eq!(name_bytes(GL_3_BYTES), Some(3));
        assert_eq!(name_bytes(FLOAT), Some(4));
        assert_eq!(name_bytes(TRIANGLES), None);
    }
}
