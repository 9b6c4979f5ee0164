//! The GPU time of the painter's own work: timestamps written around its replay of each draw
//! (the work stencil cleared, the draw counted into it) and around its weighting of the draw
//! (the pass adding `c·T/N` to the maps), read at the flush, whose read-back has waited for
//! the frame already, so reading them waits for nothing more.
//!
//! On a real GPU the agent's CPU time no longer says what heat costs: the painter's passes
//! queue behind the program's draws, and the program's next frame waits for them. This is what
//! they took there ([`AgentTimes::paint_gpu`](gpuheat_session::AgentTimes::paint_gpu)).
//!
//! Only where heat is weighted on the GPU (desktop GL with query buffer objects, which has
//! `glQueryCounter`): elsewhere each draw is read back on its own and the CPU times tell.

use crate::gl::*;

/// At most this many draws are timed between two flushes (three query objects each): a frame
/// with more has its first ones timed, and says so with a count of the draws not timed.
const MAX_OPEN: usize = 8192;

/// The entry points of the stamps, all required.
#[derive(Clone, Copy)]
struct StampFns {
    gen_queries: unsafe extern "system" fn(GLsizei, *mut GLuint),
    query_counter: unsafe extern "system" fn(GLuint, GLenum),
    get_query_objectui64v: unsafe extern "system" fn(GLuint, GLenum, *mut u64),
}

/// What the flush read: GPU ns of each part, summed over the draws painted since the last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OwnGpu {
    pub replay_ns: u64,
    pub weight_ns: u64,
    /// Draws past [`MAX_OPEN`], not timed.
    pub untimed: u64,
}

/// The stamps of one painter's context.
pub(crate) struct OwnStamps {
    fns: StampFns,
    mask: u64,
    free: Vec<GLuint>,
    /// Per draw: before the replay, after it (before the weighting), after the weighting.
    open: Vec<[GLuint; 3]>,
    untimed: u64,
}

impl OwnStamps {
    /// Stamps for a context whose entry points `f` holds, with `bits` valid timestamp bits
    /// (`GL_QUERY_COUNTER_BITS`); `None` where one is missing or the counter has no bits.
    pub fn of(f: &ThermalFns, bits: i32) -> Option<OwnStamps> {
        if bits <= 0 {
            return None;
        }
        Some(OwnStamps {
            fns: StampFns {
                gen_queries: f.gen_queries_t?,
                query_counter: f.query_counter_t?,
                get_query_objectui64v: f.get_query_objectui64v_t?,
            },
            mask: crate::timestamp_mask(bits as u32),
            free: Vec::new(),
            open: Vec::new(),
            untimed: 0,
        })
    }

    /// Writes a timestamp now and returns its query object (0: over the budget, none written).
    ///
    /// # Safety
    /// This stamps' context must be current.
    pub unsafe fn stamp(&mut self) -> GLuint {
        if self.open.len() >= MAX_OPEN {
            return 0;
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                let mut id = 0;
                // SAFETY: our caller's promise.
                unsafe { (self.fns.gen_queries)(1, &mut id) };
                id
            }
        };
        if id != 0 {
            // SAFETY: as above; `id` is a query object of ours, used for timestamps only.
            unsafe { (self.fns.query_counter)(id, TIMESTAMP) };
        }
        id
    }

    /// Files a draw's three stamps ([`Self::stamp`]'s): before its replay, between the
    /// replay and the weighting, after the weighting.
    pub fn file(&mut self, stamps: [GLuint; 3]) {
        if stamps.contains(&0) {
            self.free.extend(stamps.into_iter().filter(|&id| id != 0));
            self.untimed += 1;
        } else {
            self.open.push(stamps);
        }
    }

    /// Reads every draw filed since the last read and sums its parts.
    ///
    /// # Safety
    /// This stamps' context must be current, no buffer bound to `GL_QUERY_BUFFER` (the results
    /// would go there), and the GPU past the stamps (else the reads wait for it).
    pub unsafe fn read(&mut self) -> OwnGpu {
        let mut out = OwnGpu {
            untimed: std::mem::take(&mut self.untimed),
            ..OwnGpu::default()
        };
        let get = self.fns.get_query_objectui64v;
        for stamps in self.open.drain(..) {
            let mut t = [0u64; 3];
            for (id, at) in stamps.iter().zip(&mut t) {
                // SAFETY: our caller's promise; a timestamp this context wrote.
                unsafe { get(*id, QUERY_RESULT, at) };
            }
            out.replay_ns += t[1].wrapping_sub(t[0]) & self.mask;
            out.weight_ns += t[2].wrapping_sub(t[1]) & self.mask;
            self.free.extend(stamps);
        }
        out
    }
}
