//! Sample records, temporary directories and a PRNG shared by the tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use gpuheat_session::*;

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
    }
}

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

/// A directory under the system temporary directory, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "gpuheat-session-test-{}-{name}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// xorshift64*: enough randomness for fuzzing, reproducible from the seed.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(len);
        out
    }
}
