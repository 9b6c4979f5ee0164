//! Sessions of bare call sequences, by entry-point name, with a function table made for each
//! (the builder's table lacks most setters): for the rules that read the order of calls and
//! their arguments, nothing else (no times, one call site).

use crate::builder::{SessionBuilder, CONTEXT};
use gpuheat_session::{
    Call, CallClass, Frame, FunctionInfo, FunctionTable, ParamInfo, Session, ValueKind,
};

/// One frame's calls: entry point and arguments.
pub type Seq<'a> = &'a [(&'a str, &'a [u64])];

/// A session of `frames` numbered from `first`, each a call sequence (a swap appended), with
/// a table of the entry points they name (every parameter an unsigned integer); `program`
/// seeds the start state when given. Frames from 0 are a launched program seen from its
/// start.
pub fn session(frames: &[Seq], program: Option<u32>, first: u64) -> Session {
    let mut b = SessionBuilder::new();
    if let Some(p) = program {
        b = b.start_state(CONTEXT, p);
    }
    let mut s = b.build();
    let mut functions: Vec<FunctionInfo> = Vec::new();
    let mut func = |name: &str, n: usize| -> u16 {
        if let Some(i) = functions.iter().position(|f| f.name == name) {
            return i as u16;
        }
        functions.push(FunctionInfo {
            name: name.into(),
            params: (0..n)
                .map(|i| ParamInfo {
                    name: format!("p{i}"),
                    c_type: "GLuint".into(),
                    kind: ValueKind::Uint,
                    len: None,
                    group: None,
                })
                .collect(),
            ret: None,
            class: if name.starts_with("glDraw") {
                CallClass::Draw
            } else if name == "glClear" {
                CallClass::Work
            } else if name == "eglSwapBuffers" {
                CallClass::Swap
            } else {
                CallClass::State
            },
        });
        (functions.len() - 1) as u16
    };
    for (k, calls) in frames.iter().enumerate() {
        let mut f = Frame {
            index: k as u64 + first,
            begin_ns: 0,
            end_ns: 0,
            calls: Vec::new(),
            samples: Vec::new(),
        };
        for &(name, args) in calls.iter().chain(&[("eglSwapBuffers", &[1u64, 2][..])]) {
            f.calls.push(Call {
                func: func(name, args.len()),
                thread: 1,
                context: CONTEXT,
                begin_ns: 0,
                duration_ns: 100,
                cpu_ns: 100,
                args: args.to_vec(),
                ret: None,
                callsite: 0,
            });
        }
        s.frames.push(f);
    }
    s.functions = FunctionTable { functions };
    s
}
