//! Geometry capture on real GL 4.5 and GLES 3.2 contexts (Mesa llvmpipe): a replay records
//! the draw's positions and leaves the program's bindings, capabilities and pending GL error
//! as they were, also at the first replay, which allocates our transform feedback buffer.

mod common;

use common::load_fns;
use gpuheat_counters::geometry::{self, DrawCall};
use gpuheat_counters::gl as cgl;
use gpuheat_counters::list_run::{ListRun, ListStart};
use gpuheat_counters::{ContextCounters, GeometryCapture, ProgramLink};
use gpuheat_examples::gfx::{Api, Gfx, Quad};
use gpuheat_examples::gl::*;

const W: u32 = 64;
const H: u32 = 48;

#[test]
fn a_replay_records_positions_and_leaves_the_programs_state() {
    for api in Api::ALL {
        let mut gfx = Gfx::new(api, W, H).expect("EGL context");
        // Shaders stay attached, so the shadow program is built from them.
        gfx.keep_shaders = true;
        let rp = gfx.rect_program().expect("rect program");
        let _quad = gfx.unit_quad().expect("unit quad");
        let gl = load_fns();
        let t = gl.thermal.as_ref().expect("painting functions");
        let g = gl.geometry.as_ref().expect("geometry functions");
        let ctx = gfx.context as u64;
        // SAFETY: the context `Gfx::new` made is current on this thread.
        let cc = unsafe { ContextCounters::new(&gl, ctx) };
        let (client, major, minor) = cc.api_version();
        let support = geometry::support(client, major, minor, |e| cc.has_extension(e));
        let mut capture = GeometryCapture::new(client, major, minor, support, 1 << 20);

        let mut program_buffer = 0;
        let draw = || {
            // SAFETY: as above; the rectangle program and the quad are bound.
            unsafe { glDrawArrays(GL_TRIANGLE_STRIP, 0, Quad::VERTICES) }
        };
        // SAFETY: as above; every pointer passed points to a live value of the size GL writes.
        unsafe {
            glGenBuffers(1, &mut program_buffer);
            glBindBuffer(cgl::TRANSFORM_FEEDBACK_BUFFER, program_buffer);
            glUniform4f(rp.u_rect, 0.0, 0.0, (W / 2) as f32, (H / 2) as f32);
            draw();
            assert_eq!(glGetError(), GL_NO_ERROR);
            // The program's own pending error.
            glEnable(0);
            capture.capture(
                t,
                g,
                1,
                ctx,
                0,
                DrawCall {
                    name: "glDrawArrays",
                    args: &[u64::from(GL_TRIANGLE_STRIP), 0, 4],
                    list: None,
                    block: None,
                },
                false,
                false,
                &|_| ProgramLink::default(),
                &draw,
            );
            assert_eq!(
                glGetError(),
                cgl::INVALID_ENUM,
                "{api:?}: the program's error"
            );
            assert_eq!(glGetError(), GL_NO_ERROR, "{api:?}");
            let integer = |name| {
                let mut v = [0; 4];
                glGetIntegerv(name, v.as_mut_ptr());
                v[0] as u32
            };
            assert_eq!(
                integer(cgl::TRANSFORM_FEEDBACK_BUFFER_BINDING),
                program_buffer,
                "{api:?}"
            );
            assert_eq!(integer(cgl::TRANSFORM_FEEDBACK_BINDING), 0, "{api:?}");
            assert_eq!(integer(cgl::CURRENT_PROGRAM), rp.program.id, "{api:?}");
            assert_eq!(glIsEnabled(cgl::RASTERIZER_DISCARD), 0, "{api:?}");
        }

        let frames = capture.take(1);
        assert_eq!(frames.len(), 1, "{api:?}");
        let frame = &frames[0];
        assert!(frame.missing.is_empty(), "{api:?}: {:?}", frame.missing);
        assert_eq!(frame.draws.len(), 1, "{api:?}");
        let d = &frame.draws[0];
        // A 4-vertex strip is two triangles.
        assert_eq!(
            (d.primitive, d.positions.len()),
            (cgl::TRIANGLES, 6),
            "{api:?}"
        );
        assert_eq!(d.dropped_vertices, 0, "{api:?}");
        assert_eq!(d.viewport, [0, 0, W as i32, H as i32], "{api:?}");
        // The rectangle covers the lower-left quarter: x and y in clip space within [-1, 0].
        for p in &d.positions {
            let (x, y) = (p[0] / p[3], p[1] / p[3]);
            assert!(
                (-1.0..=0.0).contains(&x) && (-1.0..=0.0).contains(&y),
                "{api:?}: {p:?}"
            );
        }
    }
}

/// A draw call: its name, its arguments as recorded, and the call itself.
type Call = (&'static str, Vec<u64>, Box<dyn Fn()>);

/// The state a display list's replay must leave as it found it: matrix mode, the modelview,
/// projection and texture stacks' depths and tops, and the raster position.
type Matrices = (i32, [i32; 2], [[f32; 16]; 3], [f32; 4]);

fn matrices() -> Matrices {
    let mut mode = [0; 4];
    let mut depths = [[0; 4]; 2];
    let mut tops = [[0.0; 16]; 3];
    let mut raster = [0.0; 4];
    // SAFETY: a compatibility context is current; each query writes at most the array given.
    unsafe {
        glGetIntegerv(GL_MATRIX_MODE, mode.as_mut_ptr());
        glGetIntegerv(GL_MODELVIEW_STACK_DEPTH, depths[0].as_mut_ptr());
        glGetIntegerv(GL_PROJECTION_STACK_DEPTH, depths[1].as_mut_ptr());
        glGetFloatv(GL_MODELVIEW_MATRIX, tops[0].as_mut_ptr());
        glGetFloatv(GL_PROJECTION_MATRIX, tops[1].as_mut_ptr());
        glGetFloatv(GL_TEXTURE_MATRIX, tops[2].as_mut_ptr());
        glGetFloatv(GL_CURRENT_RASTER_POSITION, raster.as_mut_ptr());
    }
    (mode[0], [depths[0][0], depths[1][0]], tops, raster)
}

#[test]
fn fixed_function_draws_and_display_lists_are_replayed_and_leave_the_state() {
    let gfx = Gfx::new_compat(W, H).expect("EGL compatibility context");
    let gl = load_fns();
    let t = gl.thermal.as_ref().expect("painting functions");
    let g = gl.geometry.as_ref().expect("geometry functions");
    let ctx = gfx.context as u64;
    // SAFETY: the context `Gfx::new_compat` made is current on this thread.
    let cc = unsafe { ContextCounters::new(&gl, ctx) };
    let (client, major, minor) = cc.api_version();
    let support = geometry::support(client, major, minor, |e| cc.has_extension(e));
    let mut capture = GeometryCapture::new(client, major, minor, support, 1 << 20)
        .with_vertex_program_arb(cc.has_extension("GL_ARB_vertex_program"));
    static TRIANGLE: [[f32; 2]; 3] = [[0.0, 0.0], [0.5, 0.0], [0.0, 0.5]];
    // One list per case: a balanced matrix change, one that drifts (a translation left
    // behind), lines, triangles mixed with lines, and state that does not repeat: a bitmap
    // that moves the raster position (Mesa does not move it under rasterizer discard, so
    // this one passes without the attribute push too), a texture matrix translated (twice
    // the translation without the replay's saved stacks).
    let (balanced, drifting, lines, mixed, bitmap, texture);
    // SAFETY: as above; the client array is static and stays bound for the draws below.
    unsafe {
        glMatrixMode(GL_MODELVIEW);
        glTranslatef(0.0, 0.0, -0.5);
        glEnableClientState(GL_VERTEX_ARRAY);
        glVertexPointer(2, GL_FLOAT, 0, TRIANGLE.as_ptr().cast());
        glRasterPos2f(0.0, 0.0);
        let base = glGenLists(6);
        (balanced, drifting, lines, mixed, bitmap, texture) =
            (base, base + 1, base + 2, base + 3, base + 4, base + 5);
        let triangle = || {
            glBegin(GL_TRIANGLES);
            glVertex3f(0.0, 0.0, 0.0);
            glVertex3f(0.5, 0.0, 0.0);
            glVertex3f(0.0, 0.5, 0.0);
            glEnd();
        };
        let line = || {
            glBegin(GL_LINES);
            glVertex3f(0.0, 0.0, 0.0);
            glVertex3f(0.5, 0.5, 0.0);
            glEnd();
        };
        glNewList(balanced, GL_COMPILE);
        glPushMatrix();
        glTranslatef(0.25, 0.0, 0.0);
        triangle();
        glPopMatrix();
        glEndList();
        glNewList(drifting, GL_COMPILE);
        glTranslatef(0.25, 0.0, 0.0);
        triangle();
        glEndList();
        glNewList(lines, GL_COMPILE);
        line();
        glEndList();
        glNewList(mixed, GL_COMPILE);
        triangle();
        line();
        glEndList();
        glNewList(bitmap, GL_COMPILE);
        // (Mesa fails an empty bitmap compiled into a list with GL_OUT_OF_MEMORY.)
        let one_pixel = [0x80u8; 4];
        glBitmap(1, 1, 0.0, 0.0, 5.0, 0.0, one_pixel.as_ptr());
        triangle();
        glEndList();
        glNewList(texture, GL_COMPILE);
        glMatrixMode(GL_TEXTURE);
        glTranslatef(1.0, 0.0, 0.0);
        glMatrixMode(GL_MODELVIEW);
        triangle();
        glEndList();
        assert_eq!(glGetError(), GL_NO_ERROR);
    }
    // glCallLists of two triangle lists (the balanced one and the texture-scrolling one).
    let pair: &'static [GLuint; 2] = Box::leak(Box::new([balanced, texture]));
    let call_list = |list: GLuint| -> Call {
        (
            "glCallList",
            vec![u64::from(list)],
            // SAFETY: as above.
            Box::new(move || unsafe { glCallList(list) }),
        )
    };
    let calls: [Call; 8] = [
        (
            "glDrawArrays",
            vec![u64::from(GL_TRIANGLES), 0, 3],
            // SAFETY: as above.
            Box::new(|| unsafe { glDrawArrays(GL_TRIANGLES, 0, 3) }),
        ),
        call_list(balanced),
        call_list(drifting),
        call_list(lines),
        call_list(mixed),
        call_list(bitmap),
        call_list(texture),
        (
            "glCallLists",
            vec![2, u64::from(GL_UNSIGNED_INT), pair.as_ptr() as u64],
            // SAFETY: as above; `pair` lives for the program's life.
            Box::new(move || unsafe { glCallLists(2, GL_UNSIGNED_INT, pair.as_ptr().cast()) }),
        ),
    ];
    let m = gl.matrices.as_ref().expect("matrix stack functions");
    for (call, (name, args, draw)) in calls.iter().enumerate() {
        // What the agent reads before the program's call of a list: where it starts from.
        // SAFETY: as above, outside glBegin/glEnd.
        let start = unsafe { ListStart::read(t, m) };
        draw();
        let before = matrices();
        // SAFETY: as above; `draw` re-issues `name(args)`.
        unsafe {
            // The program's own pending error.
            glEnable(0);
            capture.capture(
                t,
                g,
                1,
                ctx,
                call as u32,
                DrawCall {
                    name,
                    args,
                    list: name.starts_with("glCallList").then_some(ListRun {
                        fns: m,
                        start: Some(&start),
                    }),
                    block: None,
                },
                false,
                // Every other call as a deferred draw's: replayed without reading back.
                call % 2 == 1,
                &|_| ProgramLink::default(),
                draw.as_ref(),
            );
            assert_eq!(
                glGetError(),
                cgl::INVALID_ENUM,
                "call {call}: the program's error"
            );
            assert_eq!(glGetError(), GL_NO_ERROR, "call {call}");
            let mut program = [0; 4];
            glGetIntegerv(cgl::CURRENT_PROGRAM, program.as_mut_ptr());
            assert_eq!(program[0], 0, "call {call}");
            assert_eq!(glIsEnabled(cgl::RASTERIZER_DISCARD), 0, "call {call}");
        }
        assert_eq!(matrices(), before, "call {call}: the matrices");
    }
    let frames = capture.take(1);
    assert_eq!(frames.len(), 1);
    let f = &frames[0];
    assert_eq!(
        f.draws.iter().map(|d| d.call).collect::<Vec<_>>(),
        [0, 1, 2, 3, 5, 6, 7],
        "{:?}",
        f.missing
    );
    // z_eye = -0.5 and no projection: clip = eye position, w 1.
    let at = |d: usize| f.draws[d].positions.clone();
    assert_eq!(
        at(0),
        [
            [0.0, 0.0, -0.5, 1.0],
            [0.5, 0.0, -0.5, 1.0],
            [0.0, 0.5, -0.5, 1.0]
        ]
    );
    assert_eq!(f.draws[1].primitive, cgl::TRIANGLES);
    assert_eq!(
        at(1),
        [
            [0.25, 0.0, -0.5, 1.0],
            [0.75, 0.0, -0.5, 1.0],
            [0.25, 0.5, -0.5, 1.0]
        ]
    );
    // The drifting list, replayed from the matrices its call started from: its own
    // translation once, as the program's call drew it.
    assert_eq!(f.draws[2].primitive, cgl::TRIANGLES);
    assert_eq!(
        at(2),
        [
            [0.25, 0.0, -0.5, 1.0],
            [0.75, 0.0, -0.5, 1.0],
            [0.25, 0.5, -0.5, 1.0]
        ]
    );
    assert_eq!(f.draws[3].primitive, cgl::LINES);
    // The program's call of the drifting list left its translation in the modelview.
    assert_eq!(at(3), [[0.25, 0.0, -0.5, 1.0], [0.75, 0.5, -0.5, 1.0]]);
    // Both lists of the glCallLists, in order.
    assert_eq!(f.draws[6].primitive, cgl::TRIANGLES);
    assert_eq!(
        at(6),
        [
            [0.5, 0.0, -0.5, 1.0],
            [1.0, 0.0, -0.5, 1.0],
            [0.5, 0.5, -0.5, 1.0],
            [0.25, 0.0, -0.5, 1.0],
            [0.75, 0.0, -0.5, 1.0],
            [0.25, 0.5, -0.5, 1.0]
        ]
    );
    for d in 4..6 {
        assert_eq!(f.draws[d].primitive, cgl::TRIANGLES);
        assert_eq!(
            at(d),
            [
                [0.25, 0.0, -0.5, 1.0],
                [0.75, 0.0, -0.5, 1.0],
                [0.25, 0.5, -0.5, 1.0]
            ]
        );
    }
    let reasons: Vec<(u32, &str)> = f
        .missing
        .iter()
        .map(|m| (m.call, m.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert_eq!(reasons[0].0, 4);
    assert!(reasons[0].1.contains("mixes kinds"), "{reasons:?}");
}

/// What a `glCallList` generates is counted once (a read-back) and remembered by the list's
/// name: later calls record at once. A list made again larger than remembered, with nobody
/// saying so, drops what does not fit (counted, never invented) and is counted again at its
/// next call; once the program makes or deletes a list (`geometry::lists_changed`, which the
/// agent calls at `glNewList` and `glDeleteLists`), every count is forgotten at once.
/// A compatibility context with a geometry capture, for the display list tests.
struct Lists {
    // Dropped in this order: the capture before the context it was made in.
    capture: GeometryCapture,
    gl: cgl::GlFns,
    gfx: Gfx,
    /// Held while the test runs: what `geometry::lists_changed` forgets is process-wide, so
    /// a test calling it would make another's remembered counts forgotten.
    _alone: std::sync::MutexGuard<'static, ()>,
}

static LISTS_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Lists {
    fn new() -> Lists {
        let alone = LISTS_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let gfx = Gfx::new_compat(W, H).expect("EGL compatibility context");
        let gl = load_fns();
        // SAFETY: the context `Gfx::new_compat` made is current on this thread.
        let cc = unsafe { ContextCounters::new(&gl, gfx.context as u64) };
        let (client, major, minor) = cc.api_version();
        let support = geometry::support(client, major, minor, |e| cc.has_extension(e));
        let capture = GeometryCapture::new(client, major, minor, support, 1 << 20);
        Lists {
            capture,
            gl,
            gfx,
            _alone: alone,
        }
    }

    /// One frame `n` of one display list call, `name(args)`, which `draw` makes: the
    /// positions it recorded and the vertices it dropped.
    fn frame(&mut self, n: u64, name: &str, args: &[u64], draw: &dyn Fn()) -> (usize, u64) {
        let t = self.gl.thermal.as_ref().expect("painting functions");
        let g = self.gl.geometry.as_ref().expect("geometry functions");
        let m = self.gl.matrices.as_ref().expect("matrix stack functions");
        // SAFETY: the context is current on this thread; `draw` makes `name(args)`.
        unsafe {
            let start = ListStart::read(t, m);
            draw();
            self.capture.capture(
                t,
                g,
                n,
                self.gfx.context as u64,
                0,
                DrawCall {
                    name,
                    args,
                    list: Some(ListRun {
                        fns: m,
                        start: Some(&start),
                    }),
                    block: None,
                },
                false,
                true,
                &|_| ProgramLink::default(),
                draw,
            );
            assert_eq!(glGetError(), GL_NO_ERROR, "frame {n}");
        }
        let f = self.capture.take(n);
        assert_eq!(f.len(), 1, "frame {n}");
        assert!(f[0].missing.is_empty(), "frame {n}: {:?}", f[0].missing);
        let d = &f[0].draws[0];
        (d.positions.len(), d.dropped_vertices)
    }
}

/// Compiles `list` as `triangles` triangles in a row.
fn compile(list: u32, triangles: u32) {
    // SAFETY: a compatibility context is current (the tests' `Lists`), outside glBegin/glEnd.
    unsafe {
        glNewList(list, GL_COMPILE);
        glBegin(GL_TRIANGLES);
        for i in 0..triangles {
            let x = i as f32 * 0.25;
            glVertex3f(x, 0.0, 0.0);
            glVertex3f(x + 0.2, 0.0, 0.0);
            glVertex3f(x, 0.2, 0.0);
        }
        glEnd();
        glEndList();
    }
}

#[test]
fn a_display_lists_count_is_remembered_until_lists_change() {
    let mut lists = Lists::new();
    // SAFETY: the context `Lists::new` made is current, outside glBegin/glEnd.
    let list = unsafe { glGenLists(1) };
    let args = [u64::from(list)];
    // SAFETY: as above; the list exists.
    let draw = || unsafe { glCallList(list) };
    let mut frame = |n: u64| lists.frame(n, "glCallList", &args, &draw);
    compile(list, 1);
    assert_eq!(frame(1), (3, 0), "counted, then recorded");
    assert_eq!(frame(2), (3, 0), "recorded from the remembered count");
    // Made again with two triangles, unannounced: the remembered range holds one.
    compile(list, 2);
    assert_eq!(frame(3), (3, 3), "three vertices dropped, and counted");
    assert_eq!(frame(4), (6, 0), "counted again");
    compile(list, 3);
    geometry::lists_changed();
    assert_eq!(frame(5), (9, 0), "forgotten at the change");
}

/// A `glCallLists`'s count is remembered by its names (and their kind and the list base):
/// the same text drawn again records at once, other text is counted for itself.
#[test]
fn a_call_lists_count_is_remembered_by_its_names() {
    let mut lists = Lists::new();
    // Two lists, as a font's glyphs are, called through the list base by a text of names.
    // SAFETY: the context `Lists::new` made is current, outside glBegin/glEnd.
    let base = unsafe { glGenLists(2) };
    // SAFETY: as above.
    unsafe { glListBase(base) };
    let mut frame = |n: u64, text: &[u8]| {
        let args = [
            text.len() as u64,
            u64::from(GL_UNSIGNED_BYTE),
            text.as_ptr() as u64,
        ];
        // SAFETY: as above; `text` names lists that exist.
        let draw =
            || unsafe { glCallLists(text.len() as i32, GL_UNSIGNED_BYTE, text.as_ptr().cast()) };
        lists.frame(n, "glCallLists", &args, &draw)
    };
    compile(base, 1);
    compile(base + 1, 1);
    let both = [0u8, 1];
    assert_eq!(frame(1, &both), (6, 0), "counted, then recorded");
    assert_eq!(
        frame(2, &both),
        (6, 0),
        "recorded from the remembered count"
    );
    // The second glyph made again with two triangles, unannounced: the remembered range
    // holds two.
    compile(base + 1, 2);
    assert_eq!(
        frame(3, &both),
        (6, 3),
        "three vertices dropped, and counted"
    );
    assert_eq!(frame(4, &both), (9, 0), "counted again");
    // Other text is other lists: counted for itself, then remembered apart.
    let first = [0u8];
    assert_eq!(frame(5, &first), (3, 0), "another text, counted");
    compile(base, 2);
    assert_eq!(frame(6, &first), (3, 3), "its own remembered count");
    geometry::lists_changed();
    assert_eq!(frame(7, &both), (12, 0), "forgotten at the change");
}
