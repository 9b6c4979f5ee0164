//! Manual check of fill_cost's cost ratios (ignored by default; it takes several seconds):
//! `cargo test -p gpuheat-examples --test fill_timing -- --ignored --nocapture`
//! Optional env: `L` (loop iterations, default 48), `SZ` (square size, default 512).

use std::time::Instant;

use gpuheat_examples::gfx::{Api, Gfx, LOOP_FS};
use gpuheat_examples::gl::*;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[test]
#[ignore]
fn fill_cost_ratios() {
    let env = |k: &str, d: u32| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (l, sz) = (env("L", 48) as i32, env("SZ", 512));
    for api in Api::ALL {
        let g = Gfx::new(api, sz, sz).unwrap();
        let rp = g.rect_program_with(LOOP_FS).unwrap();
        let it = rp.program.uniform("u_iterations").unwrap();
        g.unit_quad().unwrap();
        unsafe {
            glUniform4f(rp.u_color, 1.0, 0.75, 0.5, 1.0);
            glEnable(GL_BLEND);
            glBlendFunc(GL_ONE, GL_ONE);
        }
        let (w, h) = (sz as f32, sz as f32);
        let draws = [(w, h, l), (w / 2.0, h / 2.0, l), (w, h, 4 * l)];
        let mut t = [vec![], vec![], vec![]];
        let mut frame = vec![];
        for _ in 0..7 {
            unsafe {
                glClear(GL_COLOR_BUFFER_BIT);
                glFinish();
                for (k, &(dw, dh, n)) in draws.iter().enumerate() {
                    let t0 = Instant::now();
                    glUniform4f(rp.u_rect, 0.0, 0.0, dw, dh);
                    glUniform1i(it, n);
                    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
                    glFinish();
                    t[k].push(t0.elapsed().as_secs_f64() * 1e3);
                }
                glClear(GL_COLOR_BUFFER_BIT);
                glFinish();
                let t0 = Instant::now();
                for &(dw, dh, n) in &draws {
                    glUniform4f(rp.u_rect, 0.0, 0.0, dw, dh);
                    glUniform1i(it, n);
                    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
                }
                glFinish();
                frame.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        let [a, b, c] = t.map(median);
        eprintln!(
            "{api} {sz}x{sz} L={l}: A={a:.2} ms B={b:.2} ms C={c:.2} ms  B/A={:.2} C/A={:.2}  \
             frame (one glFinish)={:.2} ms",
            b / a,
            c / a,
            median(frame)
        );
        assert!((0.15..0.35).contains(&(b / a)), "B/A = {}", b / a);
        assert!((3.0..5.0).contains(&(c / a)), "C/A = {}", c / a);
    }
}
