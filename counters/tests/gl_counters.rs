//! Counters on a real GL 4.5 core context (Mesa llvmpipe), checked against expectations
//! derived from the scene, not from the counters themselves.

mod common;

use std::ffi::c_void;

use common::{value, Scene};
use gpuheat_counters::catalogue::*;
use gpuheat_counters::gl as cgl;
use gpuheat_examples::gfx::Api;
use gpuheat_examples::gl::*;
use gpuheat_session::{CaptureMode, ClientApi};

const W: u32 = 200;
const H: u32 = 120;
const FULL: (u32, u32, u32, u32) = (0, 0, W, H);
const QUARTER: (u32, u32, u32, u32) = (0, 0, W / 2, H / 2);

fn scene() -> Scene {
    Scene::new(Api::Gl, W, H, None)
}

#[test]
fn gl_context_info() {
    let s = scene();
    let cc = s.counters();
    let info = cc.info();
    println!("{info:#?}");
    assert_eq!(info.api, ClientApi::Gl);
    assert_eq!(cc.api_version().0, ClientApi::Gl);
    assert!(cc.api_version().1 >= 4);
    assert_eq!(info.counters.len(), COUNTERS.len());
    for (c, def) in info.counters.iter().zip(COUNTERS) {
        assert_eq!(c.name, def.name);
        assert!(
            c.available,
            "{} unavailable: {:?}",
            c.name, c.unavailable_reason
        );
        assert!(c.unavailable_reason.is_none());
    }
    assert!(info.renderer.contains("llvmpipe"), "{}", info.renderer);
    assert!(!info.pipelined_meaningful);
    assert!(info.pipelined_note.contains("software rasterizer"));
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// At 1024×768 (big enough that fragment-shader invocations of the pixels that share a 2×2
/// or 4×4 shading block across the quad's diagonal stay under 1%).
#[test]
fn samples_and_statistics_of_full_and_quarter_quads() {
    const W: u32 = 1024;
    const H: u32 = 768;
    let s = Scene::new(Api::Gl, W, H, None);
    let mut cc = s.counters();
    let pixels = u64::from(W * H);

    let full = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 0, (0, 0, W, H));
    let quarter = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 1, (0, 0, W / 2, H / 2));
    println!("full: {full:?}\nquarter: {quarter:?}");

    // Values come in catalogue order, each counter at most once.
    for values in [&full, &quarter] {
        assert!(values.windows(2).all(|w| w[0].counter < w[1].counter));
        assert_eq!(values.len(), 1 + 1 + PIPELINE_STATISTICS_COUNT);
    }

    assert_eq!(value(&full, SAMPLES_PASSED), Some(pixels));
    assert_eq!(value(&quarter, SAMPLES_PASSED), Some(pixels / 4));

    let fs_full = value(&full, FRAGMENT_SHADER_INVOCATIONS).unwrap();
    let fs_quarter = value(&quarter, FRAGMENT_SHADER_INVOCATIONS).unwrap();
    // Every covered pixel is shaded at least once; helper invocations add a little.
    assert!(fs_full >= pixels && fs_quarter >= pixels / 4);
    assert!(
        fs_full.abs_diff(pixels) * 100 <= pixels,
        "{fs_full} vs {pixels}"
    );
    // Extra invocations come from shading blocks cut by the quad's diagonal, which both
    // triangles shade: at most (w/4 + h/4) blocks of 4×4 (llvmpipe's granularity; 2×2 quads
    // on GPUs give less), i.e. at most 4·(w + h) invocations.
    let bound = |w: u32, h: u32| u64::from(w * h) + 4 * u64::from(w + h);
    assert!(fs_full <= bound(W, H), "{fs_full}");
    assert!(fs_quarter <= bound(W / 2, H / 2), "{fs_quarter}");
    println!(
        "fragment shader invocations: full {fs_full} (+{:.2}%), quarter {fs_quarter} (+{:.2}%)",
        (fs_full - pixels) as f64 * 100.0 / pixels as f64,
        (fs_quarter - pixels / 4) as f64 * 400.0 / pixels as f64
    );

    for values in [&full, &quarter] {
        // One 4-vertex triangle strip: 4 vertices, 2 triangles, no other stages.
        assert_eq!(value(values, VERTICES_SUBMITTED), Some(4));
        assert_eq!(value(values, PRIMITIVES_SUBMITTED), Some(2));
        assert_eq!(value(values, CLIPPING_INPUT_PRIMITIVES), Some(2));
        let vs = value(values, VERTEX_SHADER_INVOCATIONS).unwrap();
        assert!((4..=6).contains(&vs), "vertex shader invocations {vs}");
        assert_eq!(value(values, TESS_CONTROL_SHADER_PATCHES), Some(0));
        assert_eq!(value(values, TESS_EVALUATION_SHADER_INVOCATIONS), Some(0));
        assert_eq!(value(values, GEOMETRY_SHADER_INVOCATIONS), Some(0));
        assert_eq!(value(values, GEOMETRY_SHADER_PRIMITIVES_EMITTED), Some(0));
        assert_eq!(value(values, COMPUTE_SHADER_INVOCATIONS), Some(0));
        assert!(value(values, GPU_TIME_SERIALIZED).is_some());
        // Pipelined time comes later, through poll; cpu_time is the agent's.
        assert_eq!(value(values, GPU_TIME_PIPELINED), None);
        assert_eq!(value(values, CPU_TIME), None);
    }

    // Both Full brackets also queued a timestamp pair.
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, true) };
    assert_eq!(batches.len(), 1);
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

#[test]
fn pipelined_times_arrive_for_every_bracketed_call() {
    let s = scene();
    let mut cc = s.counters();
    let mut expected = Vec::new();
    let mut got = Vec::new();
    for frame in 0..3u64 {
        for call in 0..5u32 {
            let mode = if call % 2 == 0 {
                CaptureMode::Timeline
            } else {
                CaptureMode::Full
            };
            let values = s.bracketed_rect(&mut cc, mode, frame, call, FULL);
            if mode == CaptureMode::Timeline {
                assert!(values.is_empty(), "timeline mode measures nothing now");
            }
            expected.push((frame, call));
        }
        // Frame end: a non-blocking poll returns what has landed, in order.
        // SAFETY: the scene's EGL context is current on this thread, and every pointer passed
        // points to a live value of the size GL writes.
        for b in unsafe { cc.poll(&s.gl, false) } {
            assert!(!b.disjoint);
            got.extend(b.times.iter().map(|t| (b.frame, t.call)));
        }
        assert_eq!(got.len() + cc.pending(), expected.len(), "frame {frame}");
    }
    println!(
        "landed without waiting: {} of {}",
        got.len(),
        expected.len()
    );
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    for b in unsafe { cc.poll(&s.gl, true) } {
        got.extend(b.times.iter().map(|t| (b.frame, t.call)));
    }
    assert_eq!(got, expected, "every call exactly once, in order");
    assert_eq!(cc.pending(), 0);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    assert!(unsafe { cc.poll(&s.gl, true) }.is_empty());
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

#[test]
fn all_pipelined_times_after_finish_in_frame_batches() {
    let s = scene();
    let mut cc = s.counters();
    for frame in 10..13u64 {
        for call in 0..4u32 {
            s.bracketed_rect(&mut cc, CaptureMode::Timeline, frame, call, QUARTER);
        }
    }
    s.gfx.finish();
    // After glFinish every result is available: a non-blocking poll gets them all.
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, false) };
    assert_eq!(batches.len(), 3);
    for (b, frame) in batches.iter().zip(10..) {
        assert_eq!(b.frame, frame);
        assert!(!b.disjoint);
        let calls: Vec<u32> = b.times.iter().map(|t| t.call).collect();
        assert_eq!(calls, [0, 1, 2, 3]);
    }
    let total: u64 = batches
        .iter()
        .flat_map(|b| &b.times)
        .map(|t| t.gpu_ns)
        .sum();
    println!("pipelined total of 12 quarter-area draws: {total} ns");
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

#[test]
fn pool_cap_leaves_times_missing_not_zero() {
    let s = scene();
    let mut cc = s.counters();
    let objects = cc.timestamp_queries();
    assert!(objects >= 2);
    cc.set_timestamp_cap(objects);
    let pairs = objects / 2;
    let calls = pairs as u32 + 7;
    for call in 0..calls {
        s.bracketed_rect(&mut cc, CaptureMode::Timeline, 0, call, QUARTER);
    }
    assert_eq!(cc.missed_pipelined(), 7);
    assert_eq!(cc.pending(), pairs);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, true) };
    let times: Vec<_> = batches.iter().flat_map(|b| &b.times).collect();
    assert_eq!(times.len(), pairs);
    let calls_timed: Vec<u32> = times.iter().map(|t| t.call).collect();
    assert_eq!(calls_timed, (0..pairs as u32).collect::<Vec<_>>());
    // The pool is whole again: the next bracket is timed.
    s.bracketed_rect(&mut cc, CaptureMode::Timeline, 1, 0, QUARTER);
    assert_eq!(cc.pending(), 1);
    assert_eq!(cc.timestamp_queries(), objects);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { cc.release(&s.gl) };
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// The program's own GL_SAMPLES_PASSED query is active around a bracket: the bracket skips
/// samples-passed (no GL_INVALID_OPERATION), and the program's query still counts the draw.
#[test]
fn program_active_samples_query_is_respected() {
    let s = scene();
    let mut cc = s.counters();
    let pixels = u64::from(W * H);
    let mut q = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        glGenQueries(1, &mut q);
        glBeginQuery(GL_SAMPLES_PASSED, q);
    }
    cc.note_program_query(GL_SAMPLES_PASSED, true);
    let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 0, FULL);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glEndQuery(GL_SAMPLES_PASSED) };
    cc.note_program_query(GL_SAMPLES_PASSED, false);
    assert_eq!(s.gl_error(), GL_NO_ERROR);
    let mut program_result = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glGetQueryObjectuiv(q, GL_QUERY_RESULT, &mut program_result) };
    assert_eq!(u64::from(program_result), pixels);
    assert_eq!(value(&values, SAMPLES_PASSED), None, "skipped, not zero");
    assert_eq!(
        value(&values, FRAGMENT_SHADER_INVOCATIONS).map(|v| v > 0),
        Some(true)
    );

    // Once the program's query ended, samples passed is measured again.
    let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 1, QUARTER);
    assert_eq!(value(&values, SAMPLES_PASSED), Some(pixels / 4));

    // Any occlusion target blocks samples-passed (one occlusion query at a time).
    let mut any = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        glGenQueries(1, &mut any);
        glBeginQuery(GL_ANY_SAMPLES_PASSED, any);
    }
    cc.note_program_query(GL_ANY_SAMPLES_PASSED, true);
    let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 2, QUARTER);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glEndQuery(GL_ANY_SAMPLES_PASSED) };
    cc.note_program_query(GL_ANY_SAMPLES_PASSED, false);
    assert_eq!(value(&values, SAMPLES_PASSED), None);
    assert_eq!(value(&values, VERTICES_SUBMITTED), Some(4));
    let mut any_result = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glGetQueryObjectuiv(any, GL_QUERY_RESULT, &mut any_result) };
    assert_eq!(any_result, 1);

    // A program-active pipeline-statistics target is skipped too, the others still run.
    let mut vq = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        glGenQueries(1, &mut vq);
        glBeginQuery(cgl::VERTICES_SUBMITTED, vq);
    }
    cc.note_program_query(cgl::VERTICES_SUBMITTED, true);
    let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 3, QUARTER);
    s.draw_rect(0, 0, 1, 1);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glEndQuery(cgl::VERTICES_SUBMITTED) };
    cc.note_program_query(cgl::VERTICES_SUBMITTED, false);
    assert_eq!(value(&values, VERTICES_SUBMITTED), None);
    assert_eq!(value(&values, PRIMITIVES_SUBMITTED), Some(2));
    assert_eq!(value(&values, SAMPLES_PASSED), Some(pixels / 4));
    let mut vertices = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glGetQueryObjectuiv(vq, GL_QUERY_RESULT, &mut vertices) };
    assert_eq!(vertices, 8, "the program's query saw both of its draws");

    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { cc.poll(&s.gl, true) };
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// Attach mode: the program began its query before gpuheat was there (no note): the
/// counters find it active when they are created.
#[test]
fn query_active_before_attach_is_found() {
    let s = scene();
    let pixels = u64::from(W * H);
    let mut q = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        glGenQueries(1, &mut q);
        glBeginQuery(GL_SAMPLES_PASSED, q);
    }
    let mut cc = s.counters();
    let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 0, FULL);
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glEndQuery(GL_SAMPLES_PASSED) };
    cc.note_program_query(GL_SAMPLES_PASSED, false);
    assert_eq!(s.gl_error(), GL_NO_ERROR);
    let mut result = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glGetQueryObjectuiv(q, GL_QUERY_RESULT, &mut result) };
    assert_eq!(u64::from(result), pixels);
    assert_eq!(value(&values, SAMPLES_PASSED), None);
    let values = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 1, FULL);
    assert_eq!(value(&values, SAMPLES_PASSED), Some(pixels));
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { cc.poll(&s.gl, true) };
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

type GetBufferSubData = unsafe extern "system" fn(GLenum, GLintptr, GLsizeiptr, *mut c_void);

/// The program keeps a buffer bound to GL_QUERY_BUFFER: read-backs must neither write into
/// it nor change the binding.
#[test]
fn query_buffer_binding_is_untouched() {
    let s = scene();
    let mut cc = s.counters();
    // SAFETY: eglGetProcAddress returns null (checked) or glGetBufferSubData, whose C signature
    // GetBufferSubData spells.
    let get_buffer_sub_data: GetBufferSubData = unsafe {
        let p = eglGetProcAddress(c"glGetBufferSubData".as_ptr());
        assert!(!p.is_null());
        std::mem::transmute::<*mut c_void, GetBufferSubData>(p)
    };
    let pattern = [0xA5u8; 256];
    let mut buf = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        glGenBuffers(1, &mut buf);
        glBindBuffer(cgl::QUERY_BUFFER, buf);
        glBufferData(
            cgl::QUERY_BUFFER,
            pattern.len() as GLsizeiptr,
            pattern.as_ptr().cast(),
            GL_STATIC_DRAW,
        );
    }
    assert_eq!(s.gl_error(), GL_NO_ERROR);
    for call in 0..4 {
        let mode = if call % 2 == 0 {
            CaptureMode::Full
        } else {
            CaptureMode::Timeline
        };
        let values = s.bracketed_rect(&mut cc, mode, 0, call, QUARTER);
        if mode == CaptureMode::Full {
            assert_eq!(value(&values, SAMPLES_PASSED), Some(u64::from(W * H / 4)));
        }
    }
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    let batches = unsafe { cc.poll(&s.gl, true) };
    assert_eq!(batches.iter().map(|b| b.times.len()).sum::<usize>(), 4);
    let mut bound = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe { glGetIntegerv(cgl::QUERY_BUFFER_BINDING, &mut bound) };
    assert_eq!(bound as u32, buf);
    let mut contents = [0u8; 256];
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        get_buffer_sub_data(
            cgl::QUERY_BUFFER,
            0,
            contents.len() as GLsizeiptr,
            contents.as_mut_ptr().cast(),
        )
    };
    assert_eq!(
        contents, pattern,
        "no query result was written into the program's buffer"
    );
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// A frame's calls timed deferred: nothing at their end, then, read together at the frame's
/// end, the same counts as isolated brackets give (the areas, the strip's vertices), each call
/// once and in order, its time a timestamp pair's, and the program's query buffer untouched.
#[test]
fn deferred_calls_count_what_isolated_ones_do() {
    let s = scene();
    let mut cc = s.counters();
    assert!(cc.can_defer());
    let mut buf = 0;
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        glGenBuffers(1, &mut buf);
        glBindBuffer(cgl::QUERY_BUFFER, buf);
        glBufferData(cgl::QUERY_BUFFER, 64, std::ptr::null(), GL_STATIC_DRAW);
    }
    let rects = [FULL, QUARTER, (10, 10, 20, 5), FULL];
    for frame in 0..2u64 {
        for (call, r) in rects.iter().enumerate() {
            let v =
                s.bracketed_rect_timed(&mut cc, CaptureMode::Full, true, frame, call as u32, *r);
            assert!(v.is_empty(), "deferred: nothing known at the call's end");
        }
        assert_eq!(cc.deferred_pending(), rects.len());
        // SAFETY: the scene's EGL context is current on this thread.
        let resolved = unsafe { cc.resolve(&s.gl) };
        assert_eq!(cc.deferred_pending(), 0);
        let calls: Vec<u32> = resolved.values.iter().map(|l| l.call).collect();
        assert_eq!(calls, [0, 1, 2, 3]);
        for (late, r) in resolved.values.iter().zip(rects) {
            assert_eq!(late.frame, frame);
            let v = &late.values;
            assert!(v.windows(2).all(|w| w[0].counter < w[1].counter));
            assert_eq!(value(v, SAMPLES_PASSED), Some(u64::from(r.2 * r.3)));
            assert_eq!(value(v, VERTICES_SUBMITTED), Some(4));
            assert_eq!(value(v, PRIMITIVES_SUBMITTED), Some(2));
            assert!(value(v, GPU_TIME_SERIALIZED).is_some());
        }
        let times: Vec<u32> = resolved
            .pipelined
            .iter()
            .flat_map(|b| b.times.iter().map(|t| t.call))
            .collect();
        assert_eq!(times, [0, 1, 2, 3], "each call's pair, once");
        // The pairs were the deferred calls' own: nothing left for poll.
        // SAFETY: as above.
        assert!(unsafe { cc.poll(&s.gl, true) }.is_empty());
    }
    let mut bound = 0;
    // SAFETY: as above.
    unsafe { glGetIntegerv(cgl::QUERY_BUFFER_BINDING, &mut bound) };
    assert_eq!(bound as u32, buf);
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// Brackets only measure: the same frame renders bit-identically with and without them.
#[test]
fn brackets_do_not_change_the_image() {
    let s = scene();
    let frame = |cc: Option<&mut gpuheat_counters::ContextCounters>| {
        // SAFETY: the scene's EGL context is current on this thread, and every pointer passed
        // points to a live value of the size GL writes.
        unsafe {
            glClearColor(0.1, 0.2, 0.3, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
        }
        let rects = [(0, 0, W, H), (10, 20, 50, 30), (W / 2, H / 3, W / 2, H / 3)];
        let colors = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.2, 0.4, 0.9)];
        let mut cc = cc;
        for (i, (r, c)) in rects.iter().zip(colors).enumerate() {
            // SAFETY: the scene's EGL context is current on this thread, and every pointer passed
            // points to a live value of the size GL writes.
            unsafe { glUniform4f(s.rp.u_color, c.0, c.1, c.2, 1.0) };
            match cc.as_deref_mut() {
                Some(cc) => {
                    // Full isolated, timeline, full deferred.
                    let (mode, deferred) = match i % 3 {
                        0 => (CaptureMode::Full, false),
                        1 => (CaptureMode::Timeline, false),
                        _ => (CaptureMode::Full, true),
                    };
                    s.bracketed_rect_timed(cc, mode, deferred, 0, i as u32, *r);
                }
                None => s.draw_rect(r.0, r.1, r.2, r.3),
            }
        }
        s.gfx.checksum()
    };
    let plain = frame(None);
    let mut cc = s.counters();
    let measured = frame(Some(&mut cc));
    // SAFETY: the scene's EGL context is current on this thread, and every pointer passed points to
    // a live value of the size GL writes.
    unsafe {
        cc.resolve(&s.gl);
        cc.poll(&s.gl, true);
    }
    assert_eq!(plain, measured);
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}

/// Links `RECT_VS`, a geometry shader passing each triangle through and `SOLID_FS` (`GL 3.3
/// core`), and makes it current; the rectangle uniforms as the scene's program has them.
fn use_pass_through_geometry_program() -> GLuint {
    const GS: &str = "#version 330 core
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    for (int i = 0; i < 3; ++i) {
        gl_Position = gl_in[i].gl_Position;
        EmitVertex();
    }
    EndPrimitive();
}
";
    let header = Api::Gl.shader_header();
    let vs = format!("{header}{}", gpuheat_examples::gfx::RECT_VS);
    let fs = format!("{header}{}", gpuheat_examples::gfx::SOLID_FS);
    // SAFETY: the scene's context is current on this thread; each source pointer and length
    // describe a live string.
    unsafe {
        let program = glCreateProgram();
        for (stage, src) in [
            (GL_VERTEX_SHADER, vs.as_str()),
            (cgl::GEOMETRY_SHADER, GS),
            (GL_FRAGMENT_SHADER, fs.as_str()),
        ] {
            let shader = glCreateShader(stage);
            let (ptr, len) = (src.as_ptr().cast(), src.len() as GLint);
            glShaderSource(shader, 1, &ptr, &len);
            glCompileShader(shader);
            glAttachShader(program, shader);
            glDeleteShader(shader);
        }
        glLinkProgram(program);
        let mut linked = 0;
        glGetProgramiv(program, GL_LINK_STATUS, &mut linked);
        assert_eq!(linked, 1, "the geometry program links");
        glUseProgram(program);
        let uniform = |name: &std::ffi::CStr| glGetUniformLocation(program, name.as_ptr());
        glUniform2f(uniform(c"u_viewport"), W as f32, H as f32);
        glUniform4f(uniform(c"u_color"), 1.0, 1.0, 1.0, 1.0);
        assert_eq!(glGetError(), GL_NO_ERROR);
        program
    }
}

/// A draw is asked only for the statistics of the stages its program has: a vertex and
/// fragment program's draw leaves out the tessellation, geometry and compute ones (which a
/// bracket asking for everything measures as 0) and measures the rest as that bracket does;
/// a program with a geometry shader keeps the geometry ones (2 triangles: 2 invocations, 2
/// primitives emitted). Reading a program's stages keeps the program's GL error.
#[test]
fn a_draw_is_asked_only_for_the_stages_its_program_has() {
    use gpuheat_counters::stages::{idle_counters, CallKind, StageCache, Stages};
    let s = scene();
    let mut cc = s.counters();
    let t = s.gl.thermal.as_ref().expect("thermal functions");
    let mut cache = StageCache::default();
    let (asked, pipelines) = (cc.counted_stages(), cc.has_pipelines());
    assert_eq!(asked, Stages::ALL, "llvmpipe counts both stages");
    assert!(pipelines);
    let current = |cache: &mut StageCache| {
        // SAFETY: the scene's GL 4.5 context is current on this thread.
        unsafe { cache.current(t, asked, 1, pipelines, &|_| 0) }
    };

    // SAFETY: the scene's context is current; 0 is no capability (the program's own error).
    unsafe { glEnable(0) };
    let stages = current(&mut cache);
    assert_eq!(stages, Stages::NONE);
    assert_eq!(
        s.gl_error(),
        cgl::INVALID_ENUM,
        "the program's error is kept"
    );
    assert_eq!(s.gl_error(), GL_NO_ERROR);

    let idle = idle_counters(CallKind::Draw, stages);
    let some = s.bracketed_rect_idle(&mut cc, CaptureMode::Full, false, idle, (0, 1), FULL);
    let all = s.bracketed_rect(&mut cc, CaptureMode::Full, 0, 2, FULL);
    let left_out = [
        TESS_CONTROL_SHADER_PATCHES,
        TESS_EVALUATION_SHADER_INVOCATIONS,
        GEOMETRY_SHADER_INVOCATIONS,
        GEOMETRY_SHADER_PRIMITIVES_EMITTED,
        COMPUTE_SHADER_INVOCATIONS,
    ];
    for i in left_out {
        assert_eq!(value(&some, i), None, "counter {i} left out");
        assert_eq!(value(&all, i), Some(0), "counter {i} measured");
    }
    for i in [
        SAMPLES_PASSED,
        VERTICES_SUBMITTED,
        PRIMITIVES_SUBMITTED,
        VERTEX_SHADER_INVOCATIONS,
        FRAGMENT_SHADER_INVOCATIONS,
        CLIPPING_INPUT_PRIMITIVES,
        CLIPPING_OUTPUT_PRIMITIVES,
    ] {
        assert!(value(&some, i).is_some(), "counter {i} kept");
        assert_eq!(value(&some, i), value(&all, i), "counter {i}");
    }
    assert_eq!(value(&some, SAMPLES_PASSED), Some(u64::from(W * H)));
    assert!(value(&some, GPU_TIME_SERIALIZED).is_some());

    let program = use_pass_through_geometry_program();
    let stages = current(&mut cache);
    assert_eq!(
        stages,
        Stages {
            tessellation: false,
            geometry: true
        }
    );
    let idle = idle_counters(CallKind::Draw, stages);
    let with_gs = s.bracketed_rect_idle(&mut cc, CaptureMode::Full, false, idle, (0, 3), FULL);
    assert_eq!(value(&with_gs, GEOMETRY_SHADER_INVOCATIONS), Some(2));
    assert_eq!(value(&with_gs, GEOMETRY_SHADER_PRIMITIVES_EMITTED), Some(2));
    assert_eq!(value(&with_gs, TESS_CONTROL_SHADER_PATCHES), None);
    assert_eq!(value(&with_gs, SAMPLES_PASSED), Some(u64::from(W * H)));

    // Fixed-function processing (no program, no pipeline) has neither stage.
    // SAFETY: the scene's context is current.
    unsafe { glUseProgram(0) };
    assert_eq!(current(&mut cache), Stages::NONE);
    // SAFETY: as above; the program is ours.
    unsafe { glDeleteProgram(program) };
    assert_eq!(s.gl_error(), GL_NO_ERROR);
}
