//! A shadow of each context's GL/GLES state over the captured calls, in the state-tree model
//! of the tracer thesis (§2.4): a setter writes values at *paths*, a path being the context,
//! the object a binding selects (the texture bound on the active unit's target, the program
//! in use, the bound vertex array or framebuffer, a named sampler or program), the state's
//! family (what the setter sets: glBlendFunc and glBlendFuncSeparate are one) and the keys
//! that select a slot in it (a target, capability, parameter name, face, attachment, index,
//! location or unit). Following a binding to find an object *uses* that binding, as the
//! thesis's prerequisites do.
//!
//! From it, per frame: **redundant** setters (every path they write already holds the value
//! they write) and **eclipsed** setters (every path they write is written again before any
//! call reads the state). Which entry points are setters, and their keys and values, is
//! generated from the Khronos registry by `build.rs` ([`SETTERS`]); what the registry does
//! not say (the binding model, aliases, which other calls read or change state) is one
//! hand-written table, [`TABLE`] (`statetrack/table.rs`).
//!
//! What is sound and what is not assumed:
//!
//! - A value not seen is unknown: the first set of a path is neither redundant nor eclipsed.
//!   The capture's start state (`STAT`) seeds the program in use, the vertex array, the array
//!   and element array buffers, the draw and read framebuffers and the viewport.
//! - A value behind a pointer (glUniform4fv, glTexParameterfv) is unknown: such a call is
//!   never redundant, and a later one is not redundant after it; it can still be eclipsed,
//!   since that does not depend on the value. An array write (`count` > 1) forgets the
//!   family's values under its object.
//! - A setter whose object cannot be found (a binding not seen yet, such as
//!   glTexParameteri before any glBindTexture of its target) forgets the family under every
//!   object of that kind. The active texture unit before the capture's first glActiveTexture
//!   is unknown but fixed: binds before it go to that one unseen unit, forgotten when the
//!   first glActiveTexture selects a unit that may be it.
//! - Entry points of one family with different keys (glEnable and glEnablei, glBlendFunc and
//!   glBlendFunci) overlap: a call of the other shape forgets the family under its object.
//!   `GL_FRONT_AND_BACK`, `GL_DEPTH_STENCIL_ATTACHMENT` and `GL_FRAMEBUFFER` are written as the
//!   two paths they set.
//! - Readers: draws and work calls (clears read the clear values and masks, blits the
//!   framebuffers), queries (`glGet*`), read-backs, uploads through a binding — every call the
//!   table marks [`Role::Reads`] — read all of the context's state, ending every eclipse in
//!   flight. glFlush, glFinish, glGetError, swaps and EGL/GLX calls read nothing.
//! - Calls that change state in ways not followed (deletes, links, attribute stacks, display
//!   lists, multi-binds through pointers) and every entry point the table does not name read
//!   everything and forget the context's state.
//! - Known limits: object names are per context (objects shared between contexts and changed
//!   on another one are not followed); fixed-function texture enables are taken as context
//!   state, not per unit.

mod table;

pub use table::{Role, Scope, Special, TABLE};

use crate::measure::nested::Nested;
use gpuheat_session::{Call, CallClass, Frame, Session};
// Fx: the tracker hashes a few small integer keys per call, millions of times a session.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The shape of one setter, generated from the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setter {
    /// The entry point.
    pub name: &'static str,
    /// Index in [`FAMILIES`].
    pub family: u16,
    /// Where its state lives.
    pub scope: Scope,
    /// Anything more it does.
    pub special: Special,
    /// How many parameters it takes.
    pub params: u8,
    /// The parameters that select a slot, in order (at most two).
    pub keys: &'static [u8],
    /// The parameters that are its value.
    pub values: &'static [u8],
    /// The parameter that counts array elements, if any.
    pub count: Option<u8>,
    /// Whether a value is behind a pointer (so the value is unknown).
    pub pointer_values: bool,
}

include!(concat!(env!("OUT_DIR"), "/setters.rs"));

/// The generated shape of entry point `name`, when it is a tracked setter.
pub fn setter(name: &str) -> Option<&'static Setter> {
    SETTERS
        .binary_search_by(|s| s.name.cmp(name))
        .ok()
        .map(|i| &SETTERS[i])
}

/// What entry point `name` does to the tracked state, when it is not a setter: the table's
/// longest matching prefix, else [`Role::Forgets`].
pub fn role(name: &str) -> Role {
    TABLE
        .iter()
        .filter(|(p, r)| !matches!(r, Role::Set { .. }) && name.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map_or(Role::Forgets, |(_, r)| *r)
}

/// What the tracker found in one frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameState {
    /// The frame, as in [`gpuheat_session::Frame::index`].
    pub frame: u64,
    /// Setter calls of the program (not those nested in a VG call).
    pub state_calls: usize,
    /// Setters that wrote what every one of their paths already held, in call order.
    pub redundant: Vec<u32>,
    /// Setters whose every path was written again before anything read the state, in call
    /// order (the overwriting call may be in a later frame).
    pub eclipsed: Vec<u32>,
}

use crate::enums::gl::{
    ARRAY_BUFFER as GL_ARRAY_BUFFER, BACK as GL_BACK, DEPTH_ATTACHMENT as GL_DEPTH_ATTACHMENT,
    DEPTH_STENCIL_ATTACHMENT as GL_DEPTH_STENCIL_ATTACHMENT,
    DRAW_FRAMEBUFFER as GL_DRAW_FRAMEBUFFER, ELEMENT_ARRAY_BUFFER as GL_ELEMENT_ARRAY_BUFFER,
    FRAMEBUFFER as GL_FRAMEBUFFER, FRONT as GL_FRONT, FRONT_AND_BACK as GL_FRONT_AND_BACK,
    READ_FRAMEBUFFER as GL_READ_FRAMEBUFFER, STENCIL_ATTACHMENT as GL_STENCIL_ATTACHMENT,
    TEXTURE0 as GL_TEXTURE0, TEXTURE_2D,
};
/// The value word of an initial value set by an entry point the session's table lacks.
const NOT_CALLED: u64 = u64::MAX - 1;
/// The unit glBindTexture binds on while no glActiveTexture has been seen.
const UNSEEN_UNIT: u64 = u64::MAX;
/// The value's first word for glEnable/glDisable and kin (the entry point's index otherwise).
const ENABLE: u64 = u64::MAX;

/// The object a path hangs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Obj {
    Context,
    Unit(u64),
    Texture(u64),
    Program(u64),
    VertexArray(u64),
    Framebuffer(u64),
    Sampler(u64),
}

/// The keys of a path (unused ones 0).
type Key = [u64; 2];
/// A call: (position of its frame in the session, index in the frame).
type CallId = (u32, u32);

#[derive(Debug, Default)]
struct Entry {
    /// Entry point index (or [`ENABLE`]) and value arguments; `None` when unknown.
    value: Option<Vec<u64>>,
    /// The counted setter that wrote it and that nothing has read since.
    pending: Option<CallId>,
}

#[derive(Debug, Default)]
struct Slot {
    /// How many keys the entry points writing it take: another shape forgets it.
    shape: u8,
    entries: HashMap<Key, Entry>,
}

#[derive(Debug, Default)]
struct Ctx {
    slots: HashMap<(u16, Obj), Slot>,
    /// Paths written by a setter not yet read (some may have been read or rewritten since).
    pending: Vec<(u16, Obj, Key)>,
}

/// What each entry point of the session's table is to the tracker.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Set(&'static Setter),
    Other(Role),
}

/// Family indices of the bindings the tracker follows.
#[derive(Debug, Clone, Copy)]
struct Bindings {
    active: u16,
    texture: u16,
    program: u16,
    vertex_array: u16,
    buffer: u16,
    framebuffer: u16,
}

fn family(name: &str) -> u16 {
    FAMILIES
        .iter()
        .position(|f| *f == name)
        .expect("a family of the table") as u16
}

struct Tracker<'s> {
    s: &'s Session,
    kinds: Vec<Kind>,
    b: Bindings,
    ctx: HashMap<u64, Ctx>,
    /// Counted setters with paths still pending: how many.
    remaining: HashMap<CallId, u8>,
    out: Vec<FrameState>,
}

/// Runs the tracker over every captured frame, in order (state outlives frames). The calls
/// `nested` in a VG call (a VG library's own) change and read the state like any other but
/// are never counted.
pub fn track(s: &Session, nested: &Nested) -> Vec<FrameState> {
    track_with(s, nested, &mut |_, _, _, _| {})
}

/// [`track`], showing `visit` each call of each frame (frame, index, call) with the state it
/// runs in, before the call changes it: the state a draw draws with.
pub fn track_with(
    s: &Session,
    nested: &Nested,
    visit: &mut dyn FnMut(&Frame, u32, &Call, &View),
) -> Vec<FrameState> {
    let kinds = s
        .functions
        .functions
        .iter()
        .map(|f| match f.class {
            CallClass::Draw | CallClass::Work => Kind::Other(Role::Reads),
            CallClass::Swap => Kind::Other(Role::Neutral),
            CallClass::State => match setter(&f.name) {
                Some(st) if usize::from(st.params) == f.params.len() => Kind::Set(st),
                _ => Kind::Other(role(&f.name)),
            },
        })
        .collect();
    let mut t = Tracker {
        s,
        kinds,
        b: Bindings {
            active: family("glActiveTexture"),
            texture: family("glBindTexture"),
            program: family("glUseProgram"),
            vertex_array: family("glBindVertexArray"),
            buffer: family("glBindBuffer"),
            framebuffer: family("glBindFramebuffer"),
        },
        ctx: HashMap::default(),
        remaining: HashMap::default(),
        out: s
            .frames
            .iter()
            .map(|f| FrameState {
                frame: f.index,
                ..Default::default()
            })
            .collect(),
    };
    let mut seeded = vec![false; s.states.len()];
    // A launched program captured from its first frame shows every context from its
    // creation: what it has not set yet holds GL's initial values.
    let from_creation = s.attach.is_none() && s.frames.first().is_some_and(|f| f.index == 0);
    let mut fresh: HashSet<u64> = HashSet::default();
    for (pos, f) in s.frames.iter().enumerate() {
        for (k, st) in s.states.iter().enumerate() {
            if !seeded[k] && st.frame <= f.index {
                seeded[k] = true;
                t.seed(st);
            }
        }
        for (i, c) in f.calls.iter().enumerate() {
            if from_creation
                && c.context != 0
                && fresh.insert(c.context)
                && !s.states.iter().any(|st| st.context == c.context)
            {
                t.seed_initial(c.context);
            }
            visit(
                f,
                i as u32,
                c,
                &View {
                    t: &t,
                    context: c.context,
                },
            );
            let Some(&kind) = t.kinds.get(usize::from(c.func)) else {
                continue;
            };
            let counted = nested.parent(f.index, i as u32).is_none();
            match kind {
                Kind::Set(st) => t.set(st, c, (pos as u32, i as u32), counted),
                Kind::Other(Role::Reads) => t.read(c.context),
                Kind::Other(Role::Neutral) => {}
                Kind::Other(Role::Forgets) | Kind::Other(Role::Set { .. }) => {
                    t.read(c.context);
                    let name = s.functions.functions[usize::from(c.func)].name.as_str();
                    t.forget_after(name, c);
                }
            }
        }
    }
    for f in &mut t.out {
        f.eclipsed.sort_unstable();
    }
    t.out
}

impl Tracker<'_> {
    fn func(&self, name: &str) -> Option<u64> {
        self.s
            .functions
            .functions
            .iter()
            .position(|f| f.name == name)
            .map(|i| i as u64)
    }

    /// The start state as values written before the capture.
    fn seed(&mut self, st: &gpuheat_session::ContextState) {
        let b = self.b;
        let put = |t: &mut Tracker, name: &str, fam: u16, obj: Obj, key: Key, v: &[u64]| {
            if let Some(f) = t.func(name) {
                let slot = t
                    .ctx
                    .entry(st.context)
                    .or_default()
                    .slots
                    .entry((fam, obj))
                    .or_default();
                slot.shape = u8::from(key != [0, 0]).max(slot.shape);
                let mut value = vec![f];
                value.extend_from_slice(v);
                slot.entries.insert(
                    key,
                    Entry {
                        value: Some(value),
                        pending: None,
                    },
                );
            }
        };
        let u = |v: u32| u64::from(v);
        put(
            self,
            "glUseProgram",
            b.program,
            Obj::Context,
            [0, 0],
            &[u(st.program)],
        );
        put(
            self,
            "glBindVertexArray",
            b.vertex_array,
            Obj::Context,
            [0, 0],
            &[u(st.vertex_array)],
        );
        put(
            self,
            "glBindBuffer",
            b.buffer,
            Obj::Context,
            [GL_ARRAY_BUFFER, 0],
            &[u(st.array_buffer)],
        );
        put(
            self,
            "glBindBuffer",
            b.buffer,
            Obj::VertexArray(u(st.vertex_array)),
            [GL_ELEMENT_ARRAY_BUFFER, 0],
            &[u(st.element_array_buffer)],
        );
        put(
            self,
            "glBindFramebuffer",
            b.framebuffer,
            Obj::Context,
            [GL_DRAW_FRAMEBUFFER, 0],
            &[u(st.draw_framebuffer)],
        );
        put(
            self,
            "glBindFramebuffer",
            b.framebuffer,
            Obj::Context,
            [GL_READ_FRAMEBUFFER, 0],
            &[u(st.read_framebuffer)],
        );
        let viewport: Vec<u64> = st.viewport.iter().map(|&v| i64::from(v) as u64).collect();
        if let Some(f) = self.func("glViewport") {
            let fam = family("glViewport");
            let slot = self
                .ctx
                .entry(st.context)
                .or_default()
                .slots
                .entry((fam, Obj::Context))
                .or_default();
            let mut value = vec![f];
            value.extend(viewport);
            slot.entries.insert(
                [0, 0],
                Entry {
                    value: Some(value),
                    pending: None,
                },
            );
        }
    }

    /// A call that reads all of `context`'s state: every setter in flight was used.
    fn read(&mut self, context: u64) {
        let Some(cx) = self.ctx.get_mut(&context) else {
            return;
        };
        for (fam, obj, key) in cx.pending.drain(..) {
            if let Some(e) = cx
                .slots
                .get_mut(&(fam, obj))
                .and_then(|s| s.entries.get_mut(&key))
            {
                if let Some(id) = e.pending.take() {
                    self.remaining.remove(&id);
                }
            }
        }
    }

    /// The value at a binding path (its first value argument), which the caller follows: the
    /// setter that wrote it is used.
    fn follow(&mut self, context: u64, fam: u16, obj: Obj, key: Key) -> Option<u64> {
        let e = self
            .ctx
            .get_mut(&context)?
            .slots
            .get_mut(&(fam, obj))?
            .entries
            .get_mut(&key)?;
        if let Some(id) = e.pending.take() {
            self.remaining.remove(&id);
        }
        e.value.as_ref().and_then(|v| v.get(1).copied())
    }

    /// The active texture unit: the one last set, or while none has been set in the capture
    /// (or since the context's state was forgotten) [`UNSEEN_UNIT`], the unit active when the
    /// capture started, unknown but the same for every call until a glActiveTexture.
    fn active_unit(&mut self, context: u64) -> u64 {
        let b = self.b;
        self.follow(context, b.active, Obj::Context, [0, 0])
            .unwrap_or(UNSEEN_UNIT)
    }

    /// What a call the tracker does not follow changes: deleting objects forgets their state
    /// and the bindings that may have named them (a deleted bound object is unbound), linking
    /// a program resets its uniforms; anything else forgets the context's state.
    fn forget_after(&mut self, name: &str, c: &Call) {
        let b = self.b;
        let cx = c.context;
        let program = c.args.first().copied().unwrap_or(0);
        let Some(x) = self.ctx.get_mut(&cx) else {
            return;
        };
        let mut drop = |keep: &dyn Fn(u16, &Obj) -> bool| x.slots.retain(|(f, o), _| keep(*f, o));
        match name.trim_end_matches(|ch: char| ch.is_ascii_uppercase()) {
            "glDeleteShader"
            | "glDeleteQueries"
            | "glDeleteSync"
            | "glDeleteTransformFeedbacks" => {}
            "glLinkProgram" | "glProgramBinary" => drop(&|_, o| *o != Obj::Program(program)),
            "glDeleteProgram" => drop(&|f, o| f != b.program && !matches!(o, Obj::Program(_))),
            "glDeleteTextures" => drop(&|f, o| f != b.texture && !matches!(o, Obj::Texture(_))),
            "glDeleteBuffers" => drop(&|f, _| f != b.buffer),
            "glDeleteFramebuffers" | "glDeleteRenderbuffers" => {
                drop(&|f, o| f != b.framebuffer && !matches!(o, Obj::Framebuffer(_)))
            }
            "glDeleteVertexArrays" => {
                drop(&|f, o| f != b.vertex_array && !matches!(o, Obj::VertexArray(_)))
            }
            "glDeleteSamplers" => drop(&|_, o| !matches!(o, Obj::Sampler(_))),
            _ => {
                self.ctx.remove(&cx);
            }
        }
    }

    /// GL's initial state for a context seen from its creation: no program, vertex array,
    /// buffer, framebuffer or texture bound, texture unit 0 active, the capabilities off
    /// (dithering on), colour and depth writes on, blending `ONE, ZERO`.
    fn seed_initial(&mut self, context: u64) {
        use crate::enums::gl;
        const CAPS_OFF: [u64; 9] = [
            gl::DEPTH_TEST,
            gl::BLEND,
            gl::CULL_FACE,
            gl::SCISSOR_TEST,
            gl::STENCIL_TEST,
            gl::POLYGON_OFFSET_FILL,
            gl::SAMPLE_ALPHA_TO_COVERAGE,
            gl::SAMPLE_COVERAGE,
            gl::RASTERIZER_DISCARD,
        ];
        let mut put = |name: &str, obj: Obj, args: &[u64]| {
            let Some(st) = setter(name) else {
                return;
            };
            // An entry point the session's table lacks is never called: any value word that
            // no call writes will do.
            let f = self.func(name).unwrap_or(NOT_CALLED);
            let mut key: Key = [0, 0];
            for (k, &p) in st.keys.iter().enumerate() {
                key[k] = args.get(usize::from(p)).copied().unwrap_or(0);
            }
            let value = if let Special::Enable(on) = st.special {
                vec![ENABLE, u64::from(on)]
            } else {
                let mut v = vec![f];
                v.extend(
                    st.values
                        .iter()
                        .map(|&p| args.get(usize::from(p)).copied().unwrap_or(0)),
                );
                v
            };
            let slot = self
                .ctx
                .entry(context)
                .or_default()
                .slots
                .entry((st.family, obj))
                .or_default();
            slot.shape = st.keys.len() as u8;
            slot.entries.insert(
                key,
                Entry {
                    value: Some(value),
                    pending: None,
                },
            );
        };
        put("glUseProgram", Obj::Context, &[0]);
        put("glBindVertexArray", Obj::Context, &[0]);
        put("glBindBuffer", Obj::Context, &[GL_ARRAY_BUFFER, 0]);
        put(
            "glBindBuffer",
            Obj::VertexArray(0),
            &[GL_ELEMENT_ARRAY_BUFFER, 0],
        );
        put("glBindFramebuffer", Obj::Context, &[GL_DRAW_FRAMEBUFFER, 0]);
        put("glBindFramebuffer", Obj::Context, &[GL_READ_FRAMEBUFFER, 0]);
        put("glActiveTexture", Obj::Context, &[GL_TEXTURE0]);
        for unit in 0..32 {
            put(
                "glBindTexture",
                Obj::Unit(GL_TEXTURE0 + unit),
                &[TEXTURE_2D, 0],
            );
        }
        for cap in CAPS_OFF {
            put("glDisable", Obj::Context, &[cap]);
        }
        put("glEnable", Obj::Context, &[gl::DITHER]);
        put("glColorMask", Obj::Context, &[1, 1, 1, 1]);
        put("glDepthMask", Obj::Context, &[1]);
        put("glBlendFunc", Obj::Context, &[1, 0]);
        for index in 0..16 {
            put("glDisableVertexAttribArray", Obj::VertexArray(0), &[index]);
        }
    }

    /// Forgets family `fam` under every object of `obj`'s kind.
    fn forget_kind(&mut self, context: u64, fam: u16, obj: Obj) {
        if let Some(cx) = self.ctx.get_mut(&context) {
            let kind = std::mem::discriminant(&obj);
            cx.slots
                .retain(|(f, o), _| *f != fam || std::mem::discriminant(o) != kind);
        }
    }

    /// The object setter `st` writes under, following the bindings; `Err` with an object of
    /// the kind it would be when a binding is unknown.
    fn object(&mut self, st: &Setter, c: &gpuheat_session::Call) -> Result<Obj, Obj> {
        let b = self.b;
        let cx = c.context;
        let arg0 = c.args.first().copied().unwrap_or(0);
        match st.scope {
            Scope::Context => {
                if st.special == Special::ElementArrayInVao && arg0 == GL_ELEMENT_ARRAY_BUFFER {
                    return self
                        .follow(cx, b.vertex_array, Obj::Context, [0, 0])
                        .map(Obj::VertexArray)
                        .ok_or(Obj::VertexArray(0));
                }
                Ok(Obj::Context)
            }
            Scope::ActiveUnit => Ok(Obj::Unit(self.active_unit(cx))),
            Scope::BoundTexture => {
                let unit = self.active_unit(cx);
                self.follow(cx, b.texture, Obj::Unit(unit), [arg0, 0])
                    .filter(|&t| t != 0)
                    .map(Obj::Texture)
                    .ok_or(Obj::Texture(0))
            }
            Scope::CurrentProgram => self
                .follow(cx, b.program, Obj::Context, [0, 0])
                .filter(|&p| p != 0)
                .map(Obj::Program)
                .ok_or(Obj::Program(0)),
            Scope::NamedProgram => Ok(Obj::Program(arg0)),
            Scope::VertexArray => self
                .follow(cx, b.vertex_array, Obj::Context, [0, 0])
                .map(Obj::VertexArray)
                .ok_or(Obj::VertexArray(0)),
            Scope::BoundFramebuffer => {
                let target = if arg0 == GL_READ_FRAMEBUFFER {
                    GL_READ_FRAMEBUFFER
                } else {
                    GL_DRAW_FRAMEBUFFER
                };
                self.follow(cx, b.framebuffer, Obj::Context, [target, 0])
                    .map(Obj::Framebuffer)
                    .ok_or(Obj::Framebuffer(0))
            }
            Scope::NamedSampler => Ok(Obj::Sampler(arg0)),
        }
    }

    fn set(&mut self, st: &'static Setter, c: &gpuheat_session::Call, id: CallId, counted: bool) {
        if counted {
            self.out[id.0 as usize].state_calls += 1;
        }
        let cx = c.context;
        if st.family == self.b.active {
            let known = self
                .ctx
                .get(&cx)
                .and_then(|x| x.slots.get(&(st.family, Obj::Context)))
                .is_some_and(|s| s.entries.contains_key(&[0, 0]));
            if !known {
                // The unit active until now may be the one this call selects: what was bound
                // there is no longer known apart from that unit's.
                if let Some(x) = self.ctx.get_mut(&cx) {
                    x.slots.remove(&(self.b.texture, Obj::Unit(UNSEEN_UNIT)));
                }
            }
        }
        let obj = match self.object(st, c) {
            Ok(o) => o,
            Err(kind) => {
                self.forget_kind(cx, st.family, kind);
                return;
            }
        };
        let arg = |i: u8| c.args.get(usize::from(i)).copied().unwrap_or(0);
        // The paths: one, or two where a key names two slots at once.
        let mut key: Key = [0, 0];
        for (k, &p) in st.keys.iter().enumerate() {
            key[k] = arg(p);
        }
        let second = match (st.special, key[0]) {
            (Special::Face, GL_FRONT_AND_BACK) if !st.keys.is_empty() => {
                key[0] = GL_FRONT;
                Some([GL_BACK, key[1]])
            }
            (Special::Attachment, GL_DEPTH_STENCIL_ATTACHMENT) => {
                key[0] = GL_DEPTH_ATTACHMENT;
                Some([GL_STENCIL_ATTACHMENT, key[1]])
            }
            (Special::FramebufferTargets, GL_FRAMEBUFFER) => {
                key[0] = GL_DRAW_FRAMEBUFFER;
                Some([GL_READ_FRAMEBUFFER, key[1]])
            }
            _ => None,
        };
        let paths: Vec<Key> = std::iter::once(key).chain(second).collect();
        let array = st.count.is_some_and(|p| arg(p) as i64 > 1);
        let value = if array || st.pointer_values {
            None
        } else if let Special::Enable(on) = st.special {
            Some(vec![ENABLE, u64::from(on)])
        } else {
            let mut v = vec![u64::from(c.func)];
            v.extend(st.values.iter().map(|&p| arg(p)));
            if st.special == Special::ReadsArrayBuffer {
                let b = self.b.buffer;
                match self.follow(cx, b, Obj::Context, [GL_ARRAY_BUFFER, 0]) {
                    Some(buffer) => v.push(buffer),
                    None => {
                        // The attribute's buffer is unknown: so is its value.
                        self.write(cx, st, obj, &paths, None, id, counted, false);
                        return;
                    }
                }
            }
            Some(v)
        };
        self.write(cx, st, obj, &paths, value, id, counted, array);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        cx: u64,
        st: &Setter,
        obj: Obj,
        paths: &[Key],
        value: Option<Vec<u64>>,
        id: CallId,
        counted: bool,
        array: bool,
    ) {
        let c = self.ctx.entry(cx).or_default();
        let slot = c.slots.entry((st.family, obj)).or_default();
        let shape = st.keys.len() as u8;
        if slot.shape != shape || array {
            // Another shape of the family (glEnablei after glEnable) or an array write of
            // slots not named one by one: what was known under this object is not any more.
            slot.shape = shape;
            slot.entries.clear();
            if array {
                return;
            }
        }
        let redundant = value.is_some()
            && paths
                .iter()
                .all(|k| slot.entries.get(k).is_some_and(|e| e.value == value));
        if redundant {
            if counted {
                self.out[id.0 as usize].redundant.push(id.1);
            }
            return;
        }
        for k in paths {
            let e = slot.entries.entry(*k).or_default();
            if let Some(prev) = e.pending.take() {
                if let Some(n) = self.remaining.get_mut(&prev) {
                    *n -= 1;
                    if *n == 0 {
                        self.remaining.remove(&prev);
                        self.out[prev.0 as usize].eclipsed.push(prev.1);
                    }
                }
            }
            e.value = value.clone();
            if counted {
                e.pending = Some(id);
                c.pending.push((st.family, obj, *k));
            }
        }
        if counted {
            self.remaining.insert(id, paths.len() as u8);
        }
    }
}

/// The setters whose paths [`View`] reads, looked up once.
struct Known {
    use_program: &'static Setter,
    bind_framebuffer: &'static Setter,
    bind_buffer: &'static Setter,
    bind_vertex_array: &'static Setter,
    enable: &'static Setter,
    color_mask: &'static Setter,
    viewport: &'static Setter,
    blend_func: &'static Setter,
    bind_renderbuffer: &'static Setter,
    active_texture: &'static Setter,
    bind_texture: &'static Setter,
    tex_parameteri: &'static Setter,
    enable_attrib: &'static Setter,
    attrib_pointer: &'static Setter,
}

fn known() -> &'static Known {
    static KNOWN: std::sync::OnceLock<Known> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| {
        let get = |n: &str| setter(n).unwrap_or_else(|| panic!("{n}: a generated setter"));
        Known {
            use_program: get("glUseProgram"),
            bind_framebuffer: get("glBindFramebuffer"),
            bind_buffer: get("glBindBuffer"),
            bind_vertex_array: get("glBindVertexArray"),
            enable: get("glEnable"),
            color_mask: get("glColorMask"),
            viewport: get("glViewport"),
            blend_func: get("glBlendFunc"),
            bind_renderbuffer: get("glBindRenderbuffer"),
            active_texture: get("glActiveTexture"),
            bind_texture: get("glBindTexture"),
            tex_parameteri: get("glTexParameteri"),
            enable_attrib: get("glEnableVertexAttribArray"),
            attrib_pointer: get("glVertexAttribPointer"),
        }
    })
}

/// The tracked state of one context as a call sees it (read-only: looking does not count as
/// using a setter). Every answer is `None` where the capture has not seen the value.
pub struct View<'t> {
    t: &'t Tracker<'t>,
    context: u64,
}

impl View<'_> {
    /// The value arguments of the path setter `st` writes with arguments `args` (its keys
    /// taken from them) under `obj`.
    fn value(&self, st: &Setter, obj: Obj, args: &[u64]) -> Option<&[u64]> {
        let mut key: Key = [0, 0];
        for (k, &p) in st.keys.iter().enumerate() {
            key[k] = *args.get(usize::from(p))?;
        }
        let v = self
            .t
            .ctx
            .get(&self.context)?
            .slots
            .get(&(st.family, obj))?
            .entries
            .get(&key)?
            .value
            .as_deref()?;
        v.get(1..)
    }

    /// The program in use.
    pub fn program(&self) -> Option<u64> {
        self.value(known().use_program, Obj::Context, &[])?
            .first()
            .copied()
    }

    /// The framebuffer bound for drawing.
    pub fn draw_framebuffer(&self) -> Option<u64> {
        self.value(
            known().bind_framebuffer,
            Obj::Context,
            &[GL_DRAW_FRAMEBUFFER, 0],
        )?
        .first()
        .copied()
    }

    /// The buffer bound to `target` (the element array buffer: of the bound vertex array).
    pub fn buffer(&self, target: u64) -> Option<u64> {
        let obj = if target == GL_ELEMENT_ARRAY_BUFFER {
            Obj::VertexArray(self.vertex_array()?)
        } else {
            Obj::Context
        };
        self.value(known().bind_buffer, obj, &[target, 0])?
            .first()
            .copied()
    }

    /// The vertex array bound.
    pub fn vertex_array(&self) -> Option<u64> {
        self.value(known().bind_vertex_array, Obj::Context, &[])?
            .first()
            .copied()
    }

    /// Whether capability `cap` is on.
    pub fn enabled(&self, cap: u64) -> Option<bool> {
        Some(self.value(known().enable, Obj::Context, &[cap])?.first()? != &0)
    }

    /// The colour write mask (r, g, b, a).
    pub fn color_mask(&self) -> Option<[bool; 4]> {
        let v = self.value(known().color_mask, Obj::Context, &[])?;
        Some([
            v.first()? != &0,
            v.get(1)? != &0,
            v.get(2)? != &0,
            v.get(3)? != &0,
        ])
    }

    /// The viewport: x, y, width, height (sizes as set, negative ones as 0).
    pub fn viewport(&self) -> Option<[u64; 4]> {
        let v = self.value(known().viewport, Obj::Context, &[])?;
        let at = |i: usize| v.get(i).map(|&x| (x as i64).max(0) as u64);
        Some([at(0)?, at(1)?, at(2)?, at(3)?])
    }

    /// The blend function in effect: (source, destination) colour factors.
    pub fn blend_func(&self) -> Option<(u64, u64)> {
        let v = self.value(known().blend_func, Obj::Context, &[])?;
        Some((*v.first()?, *v.get(1)?))
    }

    /// The renderbuffer bound.
    pub fn renderbuffer(&self) -> Option<u64> {
        self.value(
            known().bind_renderbuffer,
            Obj::Context,
            &[crate::enums::gl::RENDERBUFFER, 0],
        )?
        .first()
        .copied()
    }

    /// The active texture unit (0-based), once the capture has seen it set.
    pub fn active_unit(&self) -> Option<u64> {
        let v = self
            .value(known().active_texture, Obj::Context, &[])?
            .first()?;
        v.checked_sub(GL_TEXTURE0)
    }

    /// The texture bound to `target` on `unit` (0-based); `None` for a unit not named yet
    /// (the one active before the capture's first glActiveTexture included).
    pub fn texture(&self, unit: u64, target: u64) -> Option<u64> {
        self.value(
            known().bind_texture,
            Obj::Unit(GL_TEXTURE0 + unit),
            &[target, 0],
        )?
        .first()
        .copied()
    }

    /// The texture bound to `target` on the active unit (also before the capture's first
    /// glActiveTexture, when a glBindTexture since says which).
    pub fn active_texture(&self, target: u64) -> Option<u64> {
        let unit = self
            .value(known().active_texture, Obj::Context, &[])
            .and_then(|v| v.first().copied())
            .unwrap_or(UNSEEN_UNIT);
        self.value(known().bind_texture, Obj::Unit(unit), &[target, 0])?
            .first()
            .copied()
    }

    /// Every (unit, texture) bound to `target`, the unit unknown (`None`) for the one active
    /// before the capture's first glActiveTexture.
    pub fn textures(&self, target: u64) -> Vec<(Option<u64>, u64)> {
        let st = known().bind_texture;
        let Some(cx) = self.t.ctx.get(&self.context) else {
            return Vec::new();
        };
        let mut out: Vec<(Option<u64>, u64)> = cx
            .slots
            .iter()
            .filter(|((f, _), _)| *f == st.family)
            .filter_map(|((_, o), slot)| {
                let Obj::Unit(u) = o else { return None };
                let t = slot
                    .entries
                    .get(&[target, 0])?
                    .value
                    .as_ref()?
                    .get(1)
                    .copied()?;
                let unit = (*u != UNSEEN_UNIT).then(|| u - GL_TEXTURE0);
                (t != 0).then_some((unit, t))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Enum or integer parameter `pname` of texture `texture` (set with glTexParameteri or
    /// glTexParameterf; `None` when set through a pointer, or not seen).
    pub fn texture_parameter(&self, texture: u64, target: u64, pname: u64) -> Option<u64> {
        let v = self.value(
            known().tex_parameteri,
            Obj::Texture(texture),
            &[target, pname, 0],
        )?;
        let value = *v.first()?;
        // The entry point that wrote it (glTexParameterf passes the enum as a float).
        let st = Some(known().tex_parameteri)?;
        let func = self
            .t
            .ctx
            .get(&self.context)?
            .slots
            .get(&(st.family, Obj::Texture(texture)))?
            .entries
            .get(&[pname, 0])?
            .value
            .as_ref()?
            .first()
            .copied()?;
        let name = &self.t.s.functions.functions.get(func as usize)?.name;
        if name.ends_with('f') {
            let f = f32::from_bits(value as u32);
            return (f >= 0.0 && f.fract() == 0.0).then_some(f as u64);
        }
        name.ends_with('i').then_some(value)
    }

    /// Enabled vertex attributes of the bound vertex array whose pointer reads client memory
    /// (no buffer bound when it was set); `None` when the vertex array is not known.
    pub fn client_arrays(&self) -> Option<Vec<u64>> {
        let vao = Obj::VertexArray(self.vertex_array()?);
        let enable = Some(known().enable_attrib)?;
        let pointer = Some(known().attrib_pointer)?;
        let cx = self.t.ctx.get(&self.context)?;
        let enabled = cx.slots.get(&(enable.family, vao))?;
        let mut out = Vec::new();
        for (key, e) in &enabled.entries {
            if e.value.as_ref().and_then(|v| v.get(1)) != Some(&1) {
                continue;
            }
            let p = cx
                .slots
                .get(&(pointer.family, vao))
                .and_then(|s| s.entries.get(key))
                .and_then(|e| e.value.as_ref());
            // The value ends with the buffer bound when the pointer was set.
            if p.and_then(|v| v.last()) == Some(&0) {
                out.push(key[0]);
            }
        }
        out.sort_unstable();
        Some(out)
    }
}

#[cfg(test)]
mod tests;
