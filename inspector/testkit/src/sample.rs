//! One record of every kind, with the values a capture of a real program (glmark2 on Mesa's
//! llvmpipe) gives them, for the tests of the session file itself: encoding, chunks, columns,
//! the reader. [`every_record`] lists them in the order the agent sends them.

use gpuheat_session::*;

/// The program and capture settings.
pub fn info() -> SessionInfo {
    SessionInfo {
        agent_version: "0.1.0".into(),
        pid: 4242,
        exe: "/usr/bin/glmark2-es2".into(),
        args: vec!["glmark2-es2".into(), "--off-screen".into()],
        mode: CaptureMode::Full,
        skip: 10,
        frames_requested: 6,
        clock_origin_ns: 123_456_789_000,
        started_unix_s: 1_760_000_000,
        notes: vec!["frames delimited by eglSwapBuffers".into()],
        warmup_frames: None,
    }
}

/// A function table of four entry points: `glClear`, `glDrawArrays`, `glUniform4fv`,
/// `eglSwapBuffers` (indices 0 to 3, as [`frame`] uses them).
pub fn functions() -> FunctionTable {
    let param = |name: &str, c_type: &str, kind, len: Option<&str>| ParamInfo {
        name: name.into(),
        c_type: c_type.into(),
        kind,
        len: len.map(Into::into),
        group: matches!(kind, ValueKind::Enum).then(|| "PrimitiveType".into()),
    };
    FunctionTable {
        functions: vec![
            FunctionInfo {
                name: "glClear".into(),
                params: vec![param("mask", "GLbitfield", ValueKind::Bitfield, None)],
                ret: None,
                class: CallClass::Work,
            },
            FunctionInfo {
                name: "glDrawArrays".into(),
                params: vec![
                    param("mode", "GLenum", ValueKind::Enum, None),
                    param("first", "GLint", ValueKind::Int, None),
                    param("count", "GLsizei", ValueKind::Int, None),
                ],
                ret: None,
                class: CallClass::Draw,
            },
            FunctionInfo {
                name: "glUniform4fv".into(),
                params: vec![
                    param("location", "GLint", ValueKind::Int, None),
                    param("count", "GLsizei", ValueKind::Int, None),
                    param("value", "const GLfloat *", ValueKind::Ptr, Some("count*4")),
                ],
                ret: None,
                class: CallClass::State,
            },
            FunctionInfo {
                name: "eglSwapBuffers".into(),
                params: vec![
                    param("dpy", "EGLDisplay", ValueKind::Ptr, None),
                    param("surface", "EGLSurface", ValueKind::Ptr, None),
                ],
                ret: Some(ValueKind::Bool),
                class: CallClass::Swap,
            },
        ],
    }
}

/// A GLES context offering the serialized time and, unavailable, samples passed.
pub fn context() -> ContextInfo {
    ContextInfo {
        handle: 0x5555_0000_1000,
        api: ClientApi::Gles,
        vendor: "Mesa".into(),
        renderer: "llvmpipe (LLVM 19.1.7, 256 bits)".into(),
        version: "OpenGL ES 3.2 Mesa 25.0.7".into(),
        counters: vec![
            CounterInfo {
                name: "gpu_time_serialized".into(),
                unit: "ns".into(),
                description: "GPU time with the pipeline drained around the call".into(),
                available: true,
                unavailable_reason: None,
            },
            CounterInfo {
                name: "samples_passed".into(),
                unit: "fragments".into(),
                description: "Samples that passed the depth test".into(),
                available: false,
                unavailable_reason: Some("no occlusion queries on GLES 2".into()),
            },
        ],
        pipelined_meaningful: false,
        pipelined_note: "llvmpipe executes at flush".into(),
        serialized_overhead_ns: 1_500,
    }
}

/// The program and its GLES library mapped.
pub fn modules() -> ModuleMap {
    ModuleMap {
        modules: vec![
            Module {
                path: "/usr/bin/glmark2-es2".into(),
                start: 0x5555_5555_0000,
                end: 0x5555_5560_0000,
                file_offset: 0,
            },
            Module {
                path: "/usr/lib/x86_64-linux-gnu/libGLESv2.so.2".into(),
                start: 0x7f00_0000_0000,
                end: 0x7f00_0010_0000,
                file_offset: 0x1000,
            },
        ],
    }
}

/// A frame of `calls` calls: state, draws, a swap; regular enough to compress.
pub fn frame(index: u64, calls: usize) -> Frame {
    let begin = 1_000_000 * index;
    let calls: Vec<Call> = (0..calls)
        .map(|i| {
            let last = i + 1 == calls;
            let func = if last { 3 } else { (i % 3) as u16 };
            Call {
                func,
                thread: 777,
                context: 0x5555_0000_1000,
                begin_ns: begin + 100 * i as u64,
                duration_ns: 40 + (i as u64 * 7919) % 50,
                cpu_ns: 30 + (i as u64 * 104_729) % 40,
                args: match func {
                    0 => vec![0x4100],
                    1 => vec![4, 0, 3 + i as u64],
                    2 => vec![i as u64, 1, 0x7ffd_0000_0000 + i as u64 * 16],
                    _ => vec![0x1, 0x2],
                },
                ret: last.then_some(1),
                callsite: 0x5555_5555_1000 + (i as u64 % 5) * 0x40,
            }
        })
        .collect();
    let samples = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.func == 1)
        .map(|(i, _)| DrawSample {
            call: i as u32,
            values: vec![
                CounterValue {
                    counter: 0,
                    value: 10_000 + i as u64,
                },
                CounterValue {
                    counter: 1,
                    value: u64::MAX - i as u64,
                },
            ],
        })
        .collect();
    Frame {
        index,
        begin_ns: begin,
        end_ns: begin + 100 * calls.len() as u64,
        calls,
        samples,
    }
}

/// Pipelined times of four draws of `frame`, odd frames disjoint.
pub fn pipelined(frame: u64) -> PipelinedBatch {
    PipelinedBatch {
        frame,
        disjoint: frame % 2 == 1,
        times: (0..4)
            .map(|i| PipelinedTime {
                call: i * 3 + 1,
                gpu_ns: 1_000 * u64::from(i) + frame,
            })
            .collect(),
    }
}

/// The end of a capture whose program was killed.
pub fn end() -> EndInfo {
    EndInfo {
        reason: EndReason::TargetExited,
        frames_captured: 3,
        dropped_calls: 0,
        detail: Some("killed by SIGKILL".into()),
        renderer_query: Some(gpuheat_session::RendererQuery {
            renderer: true,
            version: false,
            stringi: true,
            loaded: gpuheat_session::AgentLoad::Launch,
        }),
    }
}

/// The uploads of `frame`: a hashed texture, a null buffer and one past the frame's budget.
pub fn uploads(frame: u64) -> gpuheat_session::FrameUploads {
    use gpuheat_session::{Unhashed, Upload};
    gpuheat_session::FrameUploads {
        frame,
        uploads: vec![
            Upload {
                call: 1,
                bytes: 64 * 64 * 4,
                hash: Some(0x0123_4567_89ab_cdef),
                unhashed: None,
            },
            Upload {
                call: 5,
                bytes: 1 << 20,
                hash: None,
                unhashed: Some(Unhashed::NullData),
            },
            Upload {
                call: 9,
                bytes: u64::MAX,
                hash: None,
                unhashed: Some(Unhashed::FrameBudget),
            },
        ],
    }
}

/// One record of every variant, in the order the agent sends them.
pub fn every_record() -> Vec<Record> {
    vec![
        Record::Info(info()),
        Record::Functions(functions()),
        Record::Context(context()),
        Record::Modules(modules()),
        Record::Frame(frame(11, 40)),
        Record::Pipelined(pipelined(11)),
        Record::End(end()),
        Record::Program(gpuheat_session::ProgramInfo {
            context: 0x5555_0000_1000,
            program: 3,
            source_hash: gpuheat_session::source_hash([(0x8B31, &b"void main() {}"[..])]),
            stages: vec![0x8B31],
            sources: vec!["void main() {}".into()],
        }),
        Record::Uploads(uploads(11)),
    ]
}

/// The bytes of a whole session file holding `records`.
pub fn file_bytes(records: &[Record]) -> Vec<u8> {
    let mut out = FileHeader::current().to_bytes().to_vec();
    for r in records {
        out.extend_from_slice(&encode(r));
    }
    out
}
