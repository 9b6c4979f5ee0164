//! Which GL calls ran inside a VG call (a VG library layered on GLES): an index over the
//! session's VG records that every measure and rule reads, so a VG call's children are
//! counted once, in it.

use gpuheat_session::VgCall;
use std::collections::HashMap;

/// Which calls of a session ran inside a VG call: the GL calls of a VG library layered on
/// GLES. They are recorded and measured like any call, but their work is their VG call's:
/// totals and per-draw lists count the VG call, not its children again.
#[derive(Debug, Default, Clone)]
pub struct Nested {
    /// (frame, child call) → the VG call it ran inside.
    parent: HashMap<(u64, u32), u32>,
    /// (frame, VG call) → its children.
    children: HashMap<(u64, u32), Vec<u32>>,
}

impl Nested {
    /// The nesting recorded in `calls`.
    pub fn of(calls: &[VgCall]) -> Nested {
        let mut n = Nested::default();
        for c in calls.iter().filter(|c| !c.children.is_empty()) {
            for &k in &c.children {
                n.parent.insert((c.frame, k), c.call);
            }
            n.children
                .entry((c.frame, c.call))
                .or_default()
                .extend_from_slice(&c.children);
        }
        n
    }

    /// The VG call that call `call` of frame `frame` ran inside, if any.
    pub fn parent(&self, frame: u64, call: u32) -> Option<u32> {
        self.parent.get(&(frame, call)).copied()
    }

    /// The calls VG call `call` of frame `frame` made (empty for any other call).
    pub fn children(&self, frame: u64, call: u32) -> &[u32] {
        self.children
            .get(&(frame, call))
            .map_or(&[], |v| v.as_slice())
    }

    /// Whether nothing is nested.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_links_children_to_their_vg_call() {
        let call = |frame, call, children: Vec<u32>| VgCall {
            frame,
            context: 1,
            call,
            children,
            draw: None,
            upload: None,
            values: Vec::new(),
        };
        let n = Nested::of(&[
            call(1, 3, vec![4, 5]),
            call(2, 3, vec![]),
            call(2, 0, vec![1]),
        ]);
        assert_eq!(n.parent(1, 4), Some(3));
        assert_eq!(n.parent(1, 3), None);
        assert_eq!(n.parent(2, 4), None);
        assert_eq!(n.children(1, 3), [4, 5]);
        assert!(n.children(2, 3).is_empty());
        assert_eq!(n.parent(2, 1), Some(0));
    }
}
