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

/// `glReadPixels` of `w × h` RGBA8 pixels at the origin of the bound read framebuffer.
fn read_rgba(w: u32, h: u32) -> Vec<u8> {
    let mut buf = vec![0u8; (w * h * 4) as usize];
    // SAFETY: `buf` holds w·h·4 bytes, what RGBA/UNSIGNED_BYTE at the default pack alignment
    // writes; the caller's context is current.
    unsafe {
        glReadPixels(
            0,
            0,
            w as GLsizei,
            h as GLsizei,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            buf.as_mut_ptr().cast(),
        )
    };
    buf
}

/// What offscreen_pass and chain document about their textures: a rectangle drawn into a
/// framebuffer object's texture passes exactly width × height samples there too, a
/// composite of S×S pixels shows an S×S texture texel for texel (`GL_NEAREST`), and one
/// stretched 3× horizontally shows texel (x div 3, y) at pixel (x, y).
#[test]
fn render_textures_count_exactly_and_composite_texel_for_texel() {
    use gpuheat_examples::gfx::{LOOP_FS, TEX_FS};
    let (w, h, s) = (96u32, 64u32, 16u32);
    for api in Api::ALL {
        let gfx = Gfx::new(api, w, h).unwrap();
        let t = gfx.render_texture(s, s, GL_NEAREST).unwrap();
        let p_loop = gfx.rect_program_with(LOOP_FS).unwrap();
        let u_iterations = p_loop.program.uniform("u_iterations").unwrap();
        gfx.unit_quad().unwrap();
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects
        // it created.
        unsafe {
            glUniform2f(p_loop.u_viewport, s as f32, s as f32);
            glUniform1i(u_iterations, 3);
            glBindFramebuffer(GL_FRAMEBUFFER, t.framebuffer);
            glViewport(0, 0, s as GLint, s as GLint);
        }
        if api == Api::Gl {
            for r in [[0, 0, s, s], [0, 0, s / 2, s / 4], [3, 5, 7, 2]] {
                assert_eq!(samples_passed(p_loop.u_rect, r), r[2] * r[3], "{r:?} in T");
            }
        }
        // SAFETY: as above.
        unsafe {
            glUniform4f(p_loop.u_rect, 0.0, 0.0, s as f32, s as f32);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        }
        let texels = read_rgba(s, s);
        let distinct: std::collections::HashSet<&[u8]> = texels.chunks(4).collect();
        assert!(distinct.len() > 16, "{api}: T's content varies per texel");

        let p_tex = gfx.tex_program(TEX_FS, (w, h)).unwrap();
        // SAFETY: as above; T is still bound to unit 0 (render_texture left it there).
        unsafe {
            glBindFramebuffer(GL_FRAMEBUFFER, 0);
            glViewport(0, 0, w as GLint, h as GLint);
            glClearColor(0.0, 0.0, 0.0, 0.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUniform4f(p_tex.u_rect, 0.0, 0.0, s as f32, s as f32);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
            glUniform4f(p_tex.u_rect, s as f32, s as f32, 3.0 * s as f32, s as f32);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        }
        let window = gfx.read_pixels();
        let px = |x: u32, y: u32| &window[((y * w + x) * 4) as usize..][..4];
        let texel = |x: u32, y: u32| &texels[((y * s + x) * 4) as usize..][..4];
        for y in 0..s {
            for x in 0..s {
                assert_eq!(px(x, y), texel(x, y), "{api}: 1:1 composite at ({x},{y})");
            }
            for x in 0..3 * s {
                assert_eq!(
                    px(s + x, s + y),
                    texel(x / 3, y),
                    "{api}: 3x composite at ({},{})",
                    s + x,
                    s + y
                );
            }
        }
        gfx.check("render textures").unwrap();
    }
}
