//! GL 1.x immediate mode: a `glBegin` … `glEnd` block run by the program (not compiled into
//! a display list of its own) draws like any draw call, but no call's arguments describe it:
//! its vertices come one call at a time. To time it, the agent brackets the block (before
//! `glBegin`, after `glEnd`: no query may be issued inside it); to paint its heat and record
//! its geometry it must run it again, so the block is also recorded as it runs, into a
//! display list of ours compiled and executed at once (`glNewList(list,
//! GL_COMPILE_AND_EXECUTE)` right before the program's `glBegin`, `glEndList` right after its
//! `glEnd`): the program's calls run exactly as they would, and `glCallList` runs them again,
//! as a program's own display list is run again (`geometry/lists.rs`).
//!
//! The list's name comes from `glGenLists` at each block and is deleted after the block's
//! replays: nothing of ours stays where the program's `glGenLists` could hand the same name
//! out (a program may `glDeleteLists` a range that held it). A block's vertex attributes set
//! before its `glBegin` (a colour, a texture coordinate) are current state, not in the list:
//! a replay runs with the values the block left, which changes no position and no coverage
//! but where the alpha or a texture coordinate decides a fragment's fate (an alpha test on a
//! texture), for the vertices before the block's first such call.

use crate::gl::*;

/// A block being recorded (between [`Block::open`] and [`Block::close`]) or recorded.
#[derive(Debug)]
pub struct Block {
    list: GLuint,
}

impl Block {
    /// Starts recording the block the program is about to begin; `None` where no list name
    /// was given.
    ///
    /// # Safety
    /// A compatibility context must be current, `f` its real functions, outside any
    /// `glBegin`/`glEnd` and not compiling a display list; the program's `glBegin` must
    /// follow.
    pub unsafe fn open(f: &ListFns) -> Option<Block> {
        // SAFETY: our caller's promise: both calls are legal here.
        unsafe {
            let list = (f.gen_lists)(1);
            if list == 0 {
                return None;
            }
            (f.new_list)(list, COMPILE_AND_EXECUTE);
            Some(Block { list })
        }
    }

    /// Ends the recording, after the program's `glEnd`.
    ///
    /// # Safety
    /// The context [`Block::open`] ran in must be current, `f` its real functions, after
    /// the block's `glEnd`.
    pub unsafe fn close(&self, f: &ListFns) {
        // SAFETY: our caller's promise.
        unsafe { (f.end_list)() }
    }

    /// Runs the recorded block again.
    ///
    /// # Safety
    /// As [`Block::close`], after it.
    pub unsafe fn replay(&self, f: &ListFns) {
        // SAFETY: our caller's promise.
        unsafe { (f.call_list)(self.list) }
    }

    /// Frees the list's name.
    ///
    /// # Safety
    /// As [`Block::close`], after it.
    pub unsafe fn delete(self, f: &ListFns) {
        // SAFETY: our caller's promise.
        unsafe { (f.delete_lists)(self.list, 1) }
    }
}
