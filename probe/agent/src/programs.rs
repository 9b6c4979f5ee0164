//! The programs the agent has named by their shaders (PROG records): a program is named by
//! [`source_hash`] of its shaders' stages and sources, so draws can be matched across
//! sessions whatever GL names the programs got. Computed at each link the agent sees, and at
//! the swap of a captured frame for the programs it used that the agent never saw link (an
//! attach after the program's set-up). Everything here runs on link calls and at swaps of
//! captured frames, never per call outside a capture.

use crate::outbox;
use crate::writer::{Msg, Writer};
use gpuheat_session::{bounded_sources, source_hash, ProgramInfo, Record};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::sync::{Arc, Mutex, MutexGuard};

/// Most (context, program) pairs remembered, for resending to a later connection and for
/// not hashing a program twice. Beyond it new programs are still sent, only not remembered.
pub const MAX_PROGRAMS: usize = 4096;

/// Most programs used in captured frames a thread queues for naming before its next swap.
const MAX_QUEUED: usize = 1024;

#[derive(Default)]
struct Known {
    /// The latest PROG record of each (context, program), with when it was first named (to
    /// resend them in that order).
    named: HashMap<(u64, u32), (u64, ProgramInfo)>,
    /// The next first-named order.
    next: u64,
    /// (context, program) pairs that were tried at a swap and have no readable sources (no
    /// shader attached any more, binary shaders): not asked again.
    unnamed: HashSet<(u64, u32)>,
}

static KNOWN: Mutex<Option<Known>> = Mutex::new(None);

fn known() -> MutexGuard<'static, Option<Known>> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The PROG record of `program` of `ctx` from its shaders' (stage, source) pairs (sources
/// without their NUL), hashed sorted by stage then source, so attach order does not matter;
/// the sources are kept in that order, bounded (`bounded_sources`).
pub fn info(ctx: u64, program: u32, sources: &[(u32, CString)]) -> ProgramInfo {
    let mut sorted: Vec<(u32, &[u8])> = sources.iter().map(|(s, c)| (*s, c.as_bytes())).collect();
    sorted.sort_unstable();
    ProgramInfo {
        context: ctx,
        program,
        source_hash: source_hash(sorted.iter().copied()),
        stages: sorted.iter().map(|&(s, _)| s).collect(),
        sources: bounded_sources(sorted.iter().map(|&(_, src)| src)),
    }
}

/// Remembers `info` (replacing an earlier link of the same program) and sends it.
fn remember_and_send(k: &mut Known, info: ProgramInfo) {
    let key = (info.context, info.program);
    k.unnamed.remove(&key);
    if let Some((_, p)) = k.named.get_mut(&key) {
        *p = info.clone();
    } else if k.named.len() < MAX_PROGRAMS {
        k.named.insert(key, (k.next, info.clone()));
        k.next += 1;
    }
    outbox::send_record(Record::Program(info));
}

/// `program` of `ctx` just linked with these shaders (`None`: their sources could not be
/// read): its PROG record, sent now when connected and kept for later connections.
pub fn linked(ctx: u64, program: u32, sources: Option<&[(u32, CString)]>) {
    let mut slot = known();
    let k = slot.get_or_insert_with(Known::default);
    match sources {
        Some(s) => remember_and_send(k, info(ctx, program, s)),
        // A relink whose sources cannot be read: the old name no longer applies.
        None => {
            k.named.remove(&(ctx, program));
            if k.unnamed.len() < MAX_PROGRAMS {
                k.unnamed.insert((ctx, program));
            }
        }
    }
}

/// `program` was deleted in `ctx`: whatever comes next under that name is another program.
pub fn deleted(ctx: u64, program: u32) {
    if let Some(k) = known().as_mut() {
        k.named.remove(&(ctx, program));
        k.unnamed.remove(&(ctx, program));
    }
}

/// Makes `writer` the connection's destination and sends it every program named so far, in
/// one step, so a link racing with the connection is sent exactly once.
pub(crate) fn open(writer: Arc<Writer>) {
    let slot = known();
    outbox::open(writer.clone());
    let mut named: Vec<&(u64, ProgramInfo)> = slot.iter().flat_map(|k| k.named.values()).collect();
    named.sort_unstable_by_key(|(order, _)| *order);
    for (_, p) in named {
        writer.send(Msg::Record(Record::Program(p.clone())));
    }
}

thread_local! {
    /// Programs this thread used in captured frames, to be named at its next swap.
    static USED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The program bound `program` during a captured frame (`glUseProgram`).
pub fn used(program: u32) {
    if program == 0 {
        return;
    }
    let _ = USED.try_with(|u| {
        let mut u = u.borrow_mut();
        if u.len() < MAX_QUEUED && !u.contains(&program) {
            u.push(program);
        }
    });
}

/// At a swap of a captured frame, with `ctx` current: names the programs this thread used
/// that have no PROG record for `ctx` yet, reading their attached shaders' sources with
/// `sources` (`None`: unreadable).
pub fn name_used(ctx: u64, sources: impl Fn(u32) -> Option<Vec<(u32, CString)>>) {
    let used = USED.try_with(|u| std::mem::take(&mut *u.borrow_mut()));
    let Ok(used) = used else { return };
    if ctx == 0 || used.is_empty() {
        return;
    }
    let mut slot = known();
    let k = slot.get_or_insert_with(Known::default);
    for program in used {
        let key = (ctx, program);
        if k.named.contains_key(&key) || k.unnamed.contains(&key) {
            continue;
        }
        match sources(program) {
            Some(s) => remember_and_send(k, info(ctx, program, &s)),
            None if k.unnamed.len() < MAX_PROGRAMS => {
                k.unnamed.insert(key);
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_counters::gl;

    fn shaders(pairs: &[(u32, &str)]) -> Vec<(u32, CString)> {
        pairs
            .iter()
            .map(|&(s, src)| (s, CString::new(src).unwrap()))
            .collect()
    }

    #[test]
    fn the_name_does_not_depend_on_the_attach_order() {
        let (vs, fs) = (gl::VERTEX_SHADER, gl::FRAGMENT_SHADER);
        let a = info(
            1,
            7,
            &shaders(&[(vs, "void main(){}"), (fs, "out vec4 c;")]),
        );
        let b = info(
            2,
            9,
            &shaders(&[(fs, "out vec4 c;"), (vs, "void main(){}")]),
        );
        assert_eq!(a.source_hash, b.source_hash);
        assert_eq!(a.stages, [fs, vs]);
        assert_eq!(a.sources, ["out vec4 c;", "void main(){}"]);
        assert_eq!(
            a.source_hash,
            source_hash([(fs, &b"out vec4 c;"[..]), (vs, &b"void main(){}"[..])])
        );
        // Two shaders of one stage are ordered by source.
        let c = info(1, 7, &shaders(&[(fs, "b"), (fs, "a")]));
        let d = info(1, 7, &shaders(&[(fs, "a"), (fs, "b")]));
        assert_eq!(c.source_hash, d.source_hash);
        assert_ne!(a.source_hash, c.source_hash);
    }
}
