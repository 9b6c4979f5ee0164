//! What issue 14's checklist reads from a capture, on real llvmpipe contexts: each upload's
//! size and content hash (`UPLD`), the shader sources in `PROG`, the default framebuffer and
//! state facts in `STAT`, and whether the program asked for the renderer (END).
//!
//! The program is this test binary itself, run again under `gpuheat run` with
//! `GPUHEAT_UPLOADS_CHILD` set: `uploads_child` then makes uploads whose bytes the test
//! knows (no example program uploads content during its frames), while every other test
//! returns at once. Frame 0 sets up, frames 1 and 2 are captured (`--skip 1 --frames 2`),
//! so the capture starts at a swap and has a start state.

mod common;

use common::{gpuheat, run_gpuheat, scratch};
use gpuheat_examples::gfx::{Api, Gfx};
use gpuheat_examples::gl::*;
use gpuheat_session::{AgentLoad, Session, Unhashed, Upload};
use std::ffi::c_void;
use std::path::Path;
use std::process::Command;

const CHILD: &str = "GPUHEAT_UPLOADS_CHILD";
const ASK: &str = "GPUHEAT_UPLOADS_ASK_RENDERER";
/// Where the child writes its `facts` line (its output is the CLI's business).
const FACTS: &str = "GPUHEAT_UPLOADS_FACTS";

const GL_TEXTURE_2D_ARRAY: GLenum = 0x8C1A;
const GL_PIXEL_UNPACK_BUFFER: GLenum = 0x88EC;
const GL_UNPACK_ALIGNMENT: GLenum = 0x0CF5;
const GL_UNPACK_ROW_LENGTH: GLenum = 0x0CF2;
const GL_UNPACK_SKIP_PIXELS: GLenum = 0x0CF4;
const GL_UNPACK_SKIP_ROWS: GLenum = 0x0CF3;
const GL_RGB: GLenum = 0x1907;
const GL_RGB8: GLint = 0x8051;
const GL_COMPRESSED_RGB8_ETC2: GLenum = 0x9274;
const GL_STREAM_DRAW: GLenum = 0x88E0;

#[link(name = "GLESv2")]
extern "C" {
    fn glTexSubImage2D(
        target: GLenum,
        level: GLint,
        x: GLint,
        y: GLint,
        w: GLsizei,
        h: GLsizei,
        format: GLenum,
        ty: GLenum,
        pixels: *const c_void,
    );
    fn glTexImage3D(
        target: GLenum,
        level: GLint,
        internal: GLint,
        w: GLsizei,
        h: GLsizei,
        d: GLsizei,
        border: GLint,
        format: GLenum,
        ty: GLenum,
        pixels: *const c_void,
    );
    fn glCompressedTexImage2D(
        target: GLenum,
        level: GLint,
        internal: GLenum,
        w: GLsizei,
        h: GLsizei,
        border: GLint,
        size: GLsizei,
        data: *const c_void,
    );
    fn glBufferSubData(target: GLenum, offset: isize, size: isize, data: *const c_void);
}

/// Deterministic bytes, different per `seed`.
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .rotate_left(seed as u32) as u8
                ^ seed
        })
        .collect()
}

fn xxh3(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// The rows a 4×3 RGB8 sub-image reads with row length 10, skips (2 pixels, 1 row) and
/// alignment 1 from `src`: 12 bytes per row, 30 apart, from byte 36.
fn strided_rows(src: &[u8]) -> Vec<u8> {
    (0..3)
        .flat_map(|r| {
            let at = (1 + r) * 30 + 2 * 3;
            src[at..at + 12].to_vec()
        })
        .collect()
}

/// The uploads the child makes in each captured frame, in order, with what the agent must
/// record for them (computed here from the bytes, independently of the agent).
fn expected_frame_1() -> Vec<(u64, Option<u64>, Option<Unhashed>)> {
    let a = pattern(64 * 64 * 4, 1);
    let b = pattern(30 * 5, 2);
    let c = pattern(1000, 3);
    let d = pattern(50, 4);
    let e = pattern(8 * 8 * 2 * 4, 5);
    let etc = pattern(32, 6);
    vec![
        (16384, Some(xxh3(&a)), None),
        (36, Some(xxh3(&strided_rows(&b))), None),
        (16384, None, Some(Unhashed::NullData)),
        (1000, Some(xxh3(&c)), None),
        (50, Some(xxh3(&d)), None),
        (16384, None, Some(Unhashed::NullData)),
        (16384, None, Some(Unhashed::UnpackBuffer)),
        (512, Some(xxh3(&e)), None),
        (32, Some(xxh3(&etc)), None),
    ]
}

/// The GL program: set-up frame, two frames of uploads, one more frame, exit.
fn child(api: Api) -> Result<(), String> {
    let gfx = Gfx::new(api, 64, 64)?;
    let (mut tex, mut scratch_tex, mut array, mut other, mut vbo, mut pbo, mut etc) =
        (0, 0, 0, 0, 0, 0, 0);
    // SAFETY: GL calls on the current context; every pointer handed to GL points to a live
    // buffer at least as large as the call reads (checked by the sizes below).
    unsafe {
        if std::env::var_os(ASK).is_some() {
            glGetString(GL_RENDERER);
        }
        for t in [&mut tex, &mut scratch_tex, &mut array, &mut other, &mut etc] {
            glGenTextures(1, t);
        }
        glGenBuffers(1, &mut vbo);
        glGenBuffers(1, &mut pbo);
        // The state the capture's STAT record must show.
        glEnable(GL_DEPTH_TEST);
        glEnable(GL_BLEND);
        glDisable(GL_CULL_FACE);
        glActiveTexture(GL_TEXTURE0 + 2);
        glBindTexture(GL_TEXTURE_2D, other);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, tex);
    }
    gfx.check("set-up")?;
    gfx.swap()?;

    let a = pattern(64 * 64 * 4, 1);
    let b = pattern(30 * 5, 2);
    let c = pattern(1000, 3);
    let d = pattern(50, 4);
    let e = pattern(8 * 8 * 2 * 4, 5);
    let etc_bytes = pattern(32, 6);
    // SAFETY: as above: `a` holds 64×64 RGBA8, `b` the rows the unpack state reads (row
    // length 10 RGB8, skips 2 pixels and 1 row: 4 rows of 30), `c` 1000 bytes, `d` 50, `e`
    // 8×8×2 RGBA8, `etc_bytes` four 8-byte ETC2 blocks; the PBO upload reads the bound
    // buffer, not client memory.
    unsafe {
        glActiveTexture(GL_TEXTURE0 + 1);
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexImage2D(
            GL_TEXTURE_2D,
            0,
            GL_RGBA8,
            64,
            64,
            0,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            a.as_ptr().cast(),
        );
        glBindTexture(GL_TEXTURE_2D, scratch_tex);
        glTexImage2D(
            GL_TEXTURE_2D,
            0,
            GL_RGB8,
            8,
            8,
            0,
            GL_RGB,
            GL_UNSIGNED_BYTE,
            std::ptr::null(),
        );
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 10);
        glPixelStorei(GL_UNPACK_SKIP_PIXELS, 2);
        glPixelStorei(GL_UNPACK_SKIP_ROWS, 1);
        glTexSubImage2D(
            GL_TEXTURE_2D,
            0,
            0,
            0,
            4,
            3,
            GL_RGB,
            GL_UNSIGNED_BYTE,
            b.as_ptr().cast(),
        );
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
        glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
        glBindTexture(GL_TEXTURE_2D, other);
        glTexImage2D(
            GL_TEXTURE_2D,
            0,
            GL_RGBA8,
            64,
            64,
            0,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            std::ptr::null(),
        );
        glBindBuffer(GL_ARRAY_BUFFER, vbo);
        glBufferData(GL_ARRAY_BUFFER, 1000, c.as_ptr().cast(), GL_STATIC_DRAW);
        glBufferSubData(GL_ARRAY_BUFFER, 100, 50, d.as_ptr().cast());
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
        glBufferData(
            GL_PIXEL_UNPACK_BUFFER,
            16384,
            std::ptr::null(),
            GL_STREAM_DRAW,
        );
        glTexSubImage2D(
            GL_TEXTURE_2D,
            0,
            0,
            0,
            64,
            64,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            std::ptr::null(),
        );
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        glBindTexture(GL_TEXTURE_2D_ARRAY, array);
        glTexImage3D(
            GL_TEXTURE_2D_ARRAY,
            0,
            GL_RGBA8,
            8,
            8,
            2,
            0,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            e.as_ptr().cast(),
        );
        glBindTexture(GL_TEXTURE_2D, etc);
        glCompressedTexImage2D(
            GL_TEXTURE_2D,
            0,
            GL_COMPRESSED_RGB8_ETC2,
            8,
            8,
            0,
            32,
            etc_bytes.as_ptr().cast(),
        );
    }
    gfx.check("frame 1 uploads")?;
    gfx.swap()?;
    // Frame 2: the same 64×64 content again, as a sub-image.
    // SAFETY: `a` holds 64×64 RGBA8.
    unsafe {
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexSubImage2D(
            GL_TEXTURE_2D,
            0,
            0,
            0,
            64,
            64,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            a.as_ptr().cast(),
        );
    }
    gfx.check("frame 2 upload")?;
    gfx.swap()?;
    gfx.swap()?;
    // What STAT must say, from EGL's own description of the surface's config.
    let attrib = |a: EGLint| {
        let mut v = 0;
        // SAFETY: the display and config the context was made with; `v` is a local.
        unsafe { eglGetConfigAttrib(gfx.display, gfx.config, a, &mut v) };
        v
    };
    let line = format!(
        "facts depth={} stencil={} samples={} tex={tex} other={other}",
        attrib(EGL_DEPTH_SIZE),
        attrib(EGL_STENCIL_SIZE),
        attrib(EGL_SAMPLES)
    );
    if let Some(path) = std::env::var_os(FACTS) {
        std::fs::write(path, line).map_err(|e| format!("writing facts: {e}"))?;
    }
    Ok(())
}

/// Not a test of its own: the GL program `capture` runs (a no-op otherwise).
#[test]
fn uploads_child() {
    let Some(api) = std::env::var(CHILD).ok() else {
        return;
    };
    let api = Api::parse(&api).expect("api");
    if let Err(e) = child(api) {
        eprintln!("uploads child: {e}");
        std::process::exit(2);
    }
}

/// Captures frames 1 and 2 of the child; returns the session and the child's `facts` line.
fn capture(dir: &Path, api: Api, ask: bool) -> (Session, String) {
    let session = dir.join(format!("{api}-{ask}.gpuheat"));
    let facts = dir.join(format!("{api}-{ask}.facts"));
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("timeout")
        .args(["-k5", "240"])
        .arg(gpuheat())
        .args(["run", "--skip", "1", "--frames", "2", "-o"])
        .arg(&session)
        .arg("--")
        .arg(&exe)
        .args([
            "uploads_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, api.name())
        .env(FACTS, &facts)
        .envs(ask.then_some((ASK, "1")))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gpuheat run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let facts = std::fs::read_to_string(&facts).expect("the child's facts");
    (Session::open(&session).unwrap(), facts)
}

fn fact(line: &str, key: &str) -> u32 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} in {line}"))
        .parse()
        .unwrap()
}

fn check_session(api: Api, s: &Session, facts: &str) {
    let name = |frame: &gpuheat_session::Frame, u: &Upload| {
        let f = frame.calls[u.call as usize].func;
        s.functions.functions[usize::from(f)].name.clone()
    };
    assert_eq!(s.frames.len(), 2, "{api}");
    assert_eq!(s.uploads.len(), 2, "{api}: one UPLD per frame with uploads");

    let (f1, u1) = (&s.frames[0], &s.uploads[0]);
    assert_eq!(u1.frame, f1.index);
    let names: Vec<String> = u1.uploads.iter().map(|u| name(f1, u)).collect();
    assert_eq!(
        names,
        [
            "glTexImage2D",
            "glTexImage2D",
            "glTexSubImage2D",
            "glTexImage2D",
            "glBufferData",
            "glBufferSubData",
            "glBufferData",
            "glTexSubImage2D",
            "glTexImage3D",
            "glCompressedTexImage2D",
        ],
        "{api}"
    );
    // The null 8×8 RGB8 storage: 8 rows of 24 bytes (already a multiple of 4).
    let mut expected = expected_frame_1();
    expected.insert(1, (192, None, Some(Unhashed::NullData)));
    let got: Vec<(u64, Option<u64>, Option<Unhashed>)> = u1
        .uploads
        .iter()
        .map(|u| (u.bytes, u.hash, u.unhashed))
        .collect();
    assert_eq!(got, expected, "{api}");
    assert_eq!(u1.over_budget(), 0);

    // Frame 2 uploads the same bytes as frame 1's first upload: the same hash.
    let (f2, u2) = (&s.frames[1], &s.uploads[1]);
    assert_eq!(u2.frame, f2.index);
    assert_eq!(u2.uploads.len(), 1, "{api}");
    assert_eq!(name(f2, &u2.uploads[0]), "glTexSubImage2D");
    assert_eq!(u2.uploads[0].hash, u1.uploads[0].hash);
    assert_eq!(u2.uploads[0].bytes, 64 * 64 * 4);

    // The start state: the default framebuffer as EGL describes its config, the state the
    // child left before the first captured frame.
    let st = s.states.first().expect("STAT record");
    assert_eq!(st.depth_bits, Some(fact(facts, "depth")), "{api}");
    assert_eq!(st.stencil_bits, Some(fact(facts, "stencil")), "{api}");
    assert_eq!(st.samples, Some(fact(facts, "samples")), "{api}");
    assert_eq!(st.sample_buffers, Some(0), "{api}");
    assert_eq!(
        (st.depth_test, st.blend, st.cull_face),
        (Some(true), Some(true), Some(false)),
        "{api}"
    );
    assert_eq!(st.active_texture, Some(GL_TEXTURE0), "{api}");
    let units = st.texture_2d.as_ref().expect("texture bindings");
    assert_eq!(units.len(), 16, "{api}");
    assert_eq!(units[0], fact(facts, "tex"), "{api}");
    assert_eq!(units[1], 0, "{api}");
    assert_eq!(units[2], fact(facts, "other"), "{api}");
}

#[test]
fn uploads_facts_and_renderer_query_on_gles() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = scratch("uploads-gles");
    let (s, facts) = capture(&dir, Api::Gles, true);
    check_session(Api::Gles, &s, &facts);
    let q = s
        .end
        .as_ref()
        .and_then(|e| e.renderer_query)
        .expect("renderer query");
    assert!(q.renderer && !q.version && !q.stringi, "{q:?}");
    assert_eq!((q.loaded, q.ever()), (AgentLoad::Launch, Some(true)));
}

#[test]
fn uploads_facts_and_renderer_query_on_core_gl() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = scratch("uploads-gl");
    let (s, facts) = capture(&dir, Api::Gl, false);
    check_session(Api::Gl, &s, &facts);
    // This program never asks: launched, so "never" is known.
    let q = s
        .end
        .as_ref()
        .and_then(|e| e.renderer_query)
        .expect("renderer query");
    assert!(!q.seen(), "{q:?}");
    assert_eq!((q.loaded, q.ever()), (AgentLoad::Launch, Some(false)));
    // The report still reads the session.
    let out = run_gpuheat(&["report", dir.join("gl-false.gpuheat").to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
