//! Geometry capture on real GL 4.5 and GLES 3.2 contexts (Mesa llvmpipe): a replay records
//! the draw's positions and leaves the program's bindings, capabilities and pending GL error
//! as they were, also at the first replay, which allocates our transform feedback buffer.

mod common;

use common::load_fns;
use gpuheat_counters::geometry::{self, DrawCall};
use gpuheat_counters::gl as cgl;
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
                },
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
