//! The examples' "samples passed per draw" rely on pixel-aligned rectangles covering
//! exactly width × height pixels. Check that with a desktop-GL `GL_SAMPLES_PASSED` query
//! (GLES has only boolean occlusion queries) and with a read-back pixel count.

use gpuheat_examples::gfx::{Api, Gfx};
use gpuheat_examples::gl::*;

fn samples_passed(u_rect: GLint, rect: [u32; 4]) -> u32 {
    let mut q = 0;
    let mut n = 0;
    // SAFETY: the caller's context is current on this thread; the out-pointers are to locals.
    unsafe {
        glGenQueries(1, &mut q);
        glBeginQuery(GL_SAMPLES_PASSED, q);
        glUniform4f(
            u_rect,
            rect[0] as f32,
            rect[1] as f32,
            rect[2] as f32,
            rect[3] as f32,
        );
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        glEndQuery(GL_SAMPLES_PASSED);
        glGetQueryObjectuiv(q, GL_QUERY_RESULT, &mut n);
        glDeleteQueries(1, &q);
    }
    n
}

#[test]
fn pixel_aligned_rects_pass_exactly_w_times_h_samples() {
    for (w, h) in [(256u32, 256u32), (100, 60), (512, 512)] {
        let gfx = Gfx::new(Api::Gl, w, h).unwrap();
        let rp = gfx.rect_program().unwrap();
        gfx.unit_quad().unwrap();
        let mut rects = vec![[0, 0, w, h], [0, 0, w / 2, h / 2], [3, 5, 8, 8]];
        for s in [1, 2, 3, 4, 7] {
            for i in 0..5 {
                rects.push([(i * s) % (w - s), (i * 2 * s) % (h - s), s, s]);
            }
        }
        for r in rects {
            let n = samples_passed(rp.u_rect, r);
            assert_eq!(n, r[2] * r[3], "rect {r:?} on {w}x{h}");
        }
        gfx.check("queries").unwrap();
    }
}

#[test]
fn tiled_rects_cover_each_pixel_once() {
    for api in Api::ALL {
        let (w, h, s) = (64u32, 48u32, 4u32);
        let gfx = Gfx::new(api, w, h).unwrap();
        let rp = gfx.rect_program().unwrap();
        gfx.unit_quad().unwrap();
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects it
        // created.
        unsafe {
            glClearColor(0.0, 0.0, 0.0, 0.0);
            glClear(GL_COLOR_BUFFER_BIT);
            // Additive blending of 1/255: a pixel covered k times ends up k/255.
            glEnable(GL_BLEND);
            glBlendFunc(GL_ONE, GL_ONE);
            glUniform4f(rp.u_color, 1.0 / 255.0, 0.0, 0.0, 0.0);
        }
        let cols = w / s;
        let n = 100u32;
        for i in 0..n {
            let [x, y] = [(i % cols) * s, (i / cols) * s];
            // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects
            // it created.
            unsafe {
                glUniform4f(rp.u_rect, x as f32, y as f32, s as f32, s as f32);
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            }
        }
        let px = gfx.read_pixels();
        let red: Vec<u8> = px.chunks(4).map(|p| p[0]).collect();
        assert!(
            red.iter().all(|&v| v <= 1),
            "{api}: a pixel was covered twice"
        );
        let covered = red.iter().filter(|&&v| v == 1).count() as u32;
        assert_eq!(covered, n * s * s, "{api}");
    }
}
