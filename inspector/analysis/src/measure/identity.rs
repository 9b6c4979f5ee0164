//! What makes two draws "the same draw": in two frames of one session, and in two sessions of
//! the same program. A draw's identity is its call site (module + offset, stable across runs
//! of one binary), its entry point, the program it ran (by the hash of its shaders' sources
//! when the session has `PROG` records, else by its GL name), its arguments that are not
//! pointers (primitive, counts, index type) and its order among the frame's draws with all of
//! those equal (the K-th identical quad drawn from one loop).
//!
//! Frames are identified in parallel; only the program current at each frame's start is
//! carried from frame to frame, in a short serial pass.

use crate::measure::cost::{callsite, draw_text};
use gpuheat_session::{CallClass, Frame, Session, ValueKind};
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHasher};
use serde::Serialize;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The program a draw ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramKey {
    /// No program was current (fixed function, or a clear).
    None,
    /// The hash of the program's shader sources, from its `PROG` record.
    Sources(u64),
    /// The program's GL name, when the session does not say what it runs.
    Name(u32),
}

impl fmt::Display for ProgramKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramKey::None => f.write_str("-"),
            ProgramKey::Sources(h) => write!(f, "src:{:08x}", h >> 32),
            ProgramKey::Name(n) => write!(f, "program {n}"),
        }
    }
}

/// A draw's identity, as a person reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct DrawKey {
    /// `module+0xoffset` of the program's call.
    pub callsite: String,
    /// The entry point, e.g. `glDrawArrays`.
    pub function: String,
    /// The program current at the call (draws only; `None` for clears, blits and copies).
    pub program: ProgramKey,
    /// The arguments that are not pointers or floats, in order, e.g. `[5, 0, 4]`.
    pub args: Vec<u64>,
    /// 0 for the first draw with this signature in its frame, 1 for the next, …
    pub ordinal: u32,
}

/// The hashes a draw is matched by: the whole identity, and two looser ones for draws whose
/// identity changed between sessions (see [`crate::compare::diff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHashes {
    /// Every part of [`DrawKey`].
    pub full: u64,
    /// Call site and entry point: the same line of code issued a different draw.
    pub site: u64,
    /// Entry point, program and arguments: the same draw from code that moved.
    pub shape: u64,
}

/// The draws of every frame of a session, each with its identity.
#[derive(Debug, Clone)]
pub struct Identities {
    /// One per distinct identity, in order of first appearance.
    pub keys: Vec<DrawKey>,
    /// The hashes of each identity, as `keys`.
    pub hashes: Vec<KeyHashes>,
    /// The call text of each identity's first occurrence, enums by name.
    pub texts: Vec<String>,
    /// The call-site address of each identity's first occurrence (for symbols).
    pub addresses: Vec<u64>,
    /// Per frame of [`Session::frames`], in order: its work calls as (call index, identity).
    pub frames: Vec<Vec<(u32, u32)>>,
}

/// Identifies every work call (draws, clears, blits, …) of every frame of `s`.
pub fn identify(s: &Session) -> Identities {
    let use_program: Vec<bool> = s
        .functions
        .functions
        .iter()
        .map(|f| f.name == "glUseProgram" || f.name == "glUseProgramObjectARB")
        .collect();
    // The program each frame leaves current, per context: a parallel pass, then a serial
    // prefix gives the program current at each frame's start.
    let changes: Vec<Vec<(u64, u32)>> = s
        .frames
        .par_iter()
        .map(|f| last_programs(f, &use_program))
        .collect();
    let mut current: HashMap<u64, u32> =
        s.states.iter().map(|st| (st.context, st.program)).collect();
    let mut starts = Vec::with_capacity(s.frames.len());
    for c in &changes {
        starts.push(current.clone());
        current.extend(c.iter().copied());
    }
    let programs = program_hashes(s);
    let names: Vec<u64> = s
        .functions
        .functions
        .iter()
        .map(|f| hash_of(&f.name))
        .collect();
    let sites = site_names(s);
    let nested = crate::measure::nested::Nested::of(&s.vg_calls);
    let per_frame: Vec<Vec<FrameDraw>> = s
        .frames
        .par_iter()
        .zip(starts.par_iter())
        .map(|(f, start)| {
            let tables = Tables {
                use_program: &use_program,
                programs: &programs,
                names: &names,
                sites: &sites,
                nested: &nested,
            };
            frame_keys(s, f, start.clone(), &tables)
        })
        .collect();

    let mut ids = Identities {
        keys: Vec::new(),
        hashes: Vec::new(),
        texts: Vec::new(),
        addresses: Vec::new(),
        frames: Vec::with_capacity(s.frames.len()),
    };
    let mut index: HashMap<u64, u32> = HashMap::default();
    for (f, draws) in s.frames.iter().zip(per_frame) {
        let mut out = Vec::with_capacity(draws.len());
        for FrameDraw {
            call,
            hashes,
            program,
            ordinal,
        } in draws
        {
            let id = *index.entry(hashes.full).or_insert_with(|| {
                let c = &f.calls[call as usize];
                let info = &s.functions.functions[c.func as usize];
                ids.keys.push(DrawKey {
                    callsite: sites.get(&c.callsite).cloned().unwrap_or_default(),
                    function: info.name.clone(),
                    program,
                    args: shape_args(s, c.func, &c.args).collect(),
                    ordinal,
                });
                ids.hashes.push(hashes);
                ids.texts.push(draw_text(s, f, call));
                ids.addresses.push(c.callsite);
                (ids.keys.len() - 1) as u32
            });
            out.push((call, id));
        }
        ids.frames.push(out);
    }
    ids
}

/// The program each context has current at the end of `f`, for contexts that changed it.
fn last_programs(f: &Frame, use_program: &[bool]) -> Vec<(u64, u32)> {
    let mut last: Vec<(u64, u32)> = Vec::new();
    for c in &f.calls {
        if use_program.get(c.func as usize) == Some(&true) {
            let program = c.args.first().copied().unwrap_or(0) as u32;
            match last.iter_mut().find(|(ctx, _)| *ctx == c.context) {
                Some(slot) => slot.1 = program,
                None => last.push((c.context, program)),
            }
        }
    }
    last
}

/// Program name → source hash, per context, from the `PROG` records (the latest link wins).
fn program_hashes(s: &Session) -> HashMap<(u64, u32), u64> {
    s.programs
        .iter()
        .map(|p| ((p.context, p.program), p.source_hash))
        .collect()
}

/// `module+0xoffset` of every call site of the session's work calls.
fn site_names(s: &Session) -> HashMap<u64, String> {
    let mut out = HashMap::default();
    for f in &s.frames {
        for c in &f.calls {
            out.entry(c.callsite)
                .or_insert_with(|| callsite(s, c.callsite));
        }
    }
    out
}

/// A work call of a frame, identified.
struct FrameDraw {
    /// Its index in the frame's calls.
    call: u32,
    hashes: KeyHashes,
    program: ProgramKey,
    /// Its order among the frame's draws with the same signature.
    ordinal: u32,
}

/// Hashes of each work call of `f`, with its program and order.
/// What [`frame_keys`] looks calls up in, built once per session.
struct Tables<'a> {
    use_program: &'a [bool],
    programs: &'a HashMap<(u64, u32), u64>,
    names: &'a [u64],
    sites: &'a HashMap<u64, String>,
    nested: &'a crate::measure::nested::Nested,
}

fn frame_keys(
    s: &Session,
    f: &Frame,
    mut current: HashMap<u64, u32>,
    t: &Tables,
) -> Vec<FrameDraw> {
    let Tables {
        use_program,
        programs,
        names,
        sites,
        nested,
    } = *t;
    let funcs = &s.functions.functions;
    let mut out = Vec::new();
    let mut ordinals: HashMap<u64, u32> = HashMap::default();
    let mut site_hash: HashMap<u64, u64> = HashMap::default();
    for (i, c) in f.calls.iter().enumerate() {
        let Some(info) = funcs.get(c.func as usize) else {
            continue;
        };
        if use_program.get(c.func as usize) == Some(&true) {
            current.insert(c.context, c.args.first().copied().unwrap_or(0) as u32);
            continue;
        }
        // A VG call's GL calls are part of it: the VG call is the draw that is matched.
        if !info.class.is_work() || nested.parent(f.index, i as u32).is_some() {
            continue;
        }
        // Clears, blits and copies run no program of the program's: the one current then is
        // not part of what they are.
        let program = match current.get(&c.context).copied().unwrap_or(0) {
            _ if info.class != CallClass::Draw => ProgramKey::None,
            0 => ProgramKey::None,
            p => programs
                .get(&(c.context, p))
                .map_or(ProgramKey::Name(p), |&h| ProgramKey::Sources(h)),
        };
        let site = *site_hash.entry(c.callsite).or_insert_with(|| {
            sites
                .get(&c.callsite)
                .map_or_else(|| hash_of(&c.callsite), hash_of)
        });
        let name = names[c.func as usize];
        let args = args_hash(s, c.func, &c.args);
        let sig = hash_of(&(site, name, program, args));
        let next = ordinals.entry(sig).or_default();
        let ordinal = *next;
        *next += 1;
        let full = hash_of(&(sig, ordinal));
        let hashes = KeyHashes {
            full,
            site: hash_of(&(site, name)),
            shape: hash_of(&(name, program, args)),
        };
        out.push(FrameDraw {
            call: i as u32,
            hashes,
            program,
            ordinal,
        });
    }
    out
}

/// The hash of a call's shape arguments, without collecting them.
fn args_hash(s: &Session, func: u16, args: &[u64]) -> u64 {
    let mut h = FxHasher::default();
    for v in shape_args(s, func, args) {
        v.hash(&mut h);
    }
    h.finish()
}

/// The arguments of a call that say what it draws rather than where its data lives: integers,
/// enums, bitfields and booleans (pointers and buffer offsets change between runs; floats are
/// clear colours and depths).
fn shape_args<'a>(s: &'a Session, func: u16, args: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
    s.functions.functions[func as usize]
        .params
        .iter()
        .zip(args)
        .filter(|(p, _)| {
            matches!(
                p.kind,
                ValueKind::Int
                    | ValueKind::Uint
                    | ValueKind::Enum
                    | ValueKind::Bitfield
                    | ValueKind::Bool
            )
        })
        .map(|(_, &v)| v)
}

/// A hash that is the same for equal values within one run of gpuheat (both sessions of a
/// diff are hashed by the same process). FxHash: keys are not attacker-chosen, and SipHash
/// was a sixth of a diff's time on a million draws.
fn hash_of<T: Hash + ?Sized>(v: &T) -> u64 {
    let mut h = FxHasher::default();
    v.hash(&mut h);
    h.finish()
}
