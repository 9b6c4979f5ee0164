//! `many_draws`: N indexed draws per frame, each a distinct tile of a grid covering the
//! surface, each tile made of T triangles — geometry with known clip-space positions for
//! profilers that record what the vertex shader wrote (and a size knob for benchmarks:
//! `--draws 1000 --tris 1000` is 1M triangles per frame).
//!
//! Flags: `--draws N` (default 100, min 1), `--tris T` (default 100, min 2), `--size WxH`
//! (default 256x256), plus the common flags (`--frames N`, `--api gles|gl`, `--timing`,
//! `--checksum`). Requires cols ≤ W and rows ≤ H (below), otherwise exit 2.
//!
//! Set-up (before frame 0, not counted): program p (RECT_VS + SOLID_FS: the vertex shader
//! maps object position `a_pos` in the unit square to pixels with the per-draw `u_rect` =
//! (x, y, width, height), then to clip space with `u_viewport` = (W, H)), one VAO with the
//! tile mesh in a vertex buffer and its indices in an element buffer; blending, depth,
//! stencil and scissor tests off.
//!
//! The tile mesh: a fan of T triangles around the object-space corner (0, 0), over T + 1
//! points on the unit square's right edge (ceil(T/2) segments, from (1, 0) up to (1, 1))
//! and top edge (floor(T/2) segments, from (1, 1) left to (0, 1)); T + 2 vertices, 3T
//! indices (`GL_UNSIGNED_SHORT` when T + 2 ≤ 65 536, else `GL_UNSIGNED_INT`), drawn as
//! `GL_TRIANGLES`: triangle k is vertices (0, k + 1, k + 2), vertex 0 the corner, so every
//! triangle starts at the corner and shares its last vertex with the next one's second.
//! The triangles cover the unit square exactly, without overlap.
//!
//! The grid: cols = ceil(√N), rows = ceil(N / cols). Tile i (0-based) is column
//! c = i mod cols, row r = i div cols (row-major from the bottom-left), and covers the window
//! rectangle x ∈ [c·W div cols, (c+1)·W div cols), y ∈ [r·H div rows, (r+1)·H div rows)
//! (integer division): pixel-aligned, edge to edge, never overlapping. When N < cols·rows the
//! top row is partly empty. Tile i's colour is (((5i+3) mod 16)/15, ((7i+3) mod 16)/15,
//! ((11i+3) mod 16)/15, 1).
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glUseProgram(p)
//! glBindVertexArray(tile)
//! N x { glUniform4f(u_rect, x_i, y_i, w_i, h_i)
//!       glUniform4f(u_color, colour_i)
//!       glDrawElements(GL_TRIANGLES, 3T, GL_UNSIGNED_SHORT, 0) }
//! [glFinish]                                   only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 3N + 6   (+1 glFinish with `--timing`); default 306
//! - draws      = N; default 100
//! - work calls = N + 1    (N draws + 1 glClear); default 101
//! - triangles  = N·T; default 10 000 (`--draws 1000 --tris 1000`: 1 000 000)
//! - post-transform (GEOM) vertices per draw = 3T (triangles, unrolled from the indices);
//!   per frame 3·N·T (default 30 000); their window-space bounding rectangle is tile i's
//! - samples passed per draw = w_i·h_i, the tile's pixels (default 10×10 grid of 25×25
//!   pixels, the right column and top row 31 wide / tall: 256 = 9·25 + 31)
//!
//! After the last frame, `--checksum` adds one glReadPixels outside any frame.
//!
//! `gpuheat-bench`'s geometry cost runs it with the common `--report-frame-ms` (every
//! frame's start-to-start period).

use std::ffi::c_void;

use gpuheat_examples::args::{parse_or_exit, usage_error, IntFlag, Spec};
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, layer_colour, run_frames};

const GL_ELEMENT_ARRAY_BUFFER: GLenum = 0x8893;
const GL_UNSIGNED_SHORT: GLenum = 0x1403;
const GL_UNSIGNED_INT: GLenum = 0x1405;

#[link(name = "GLESv2")]
extern "C" {
    fn glDrawElements(mode: GLenum, count: GLsizei, type_: GLenum, indices: *const c_void);
}

const SPEC: Spec = Spec {
    name: "many_draws",
    about: "N indexed draws per frame, each a distinct grid tile of T triangles",
    default_size: (256, 256),
    flags: &[
        IntFlag {
            name: "draws",
            value: "N",
            default: 100,
            min: 1,
            help: "tiles (glDrawElements calls) per frame",
        },
        IntFlag {
            name: "tris",
            value: "T",
            default: 100,
            min: 2,
            help: "triangles per tile",
        },
    ],
    expected: "\
per frame: glViewport, glClearColor, glClear, glUseProgram, glBindVertexArray,
           N x (glUniform4f u_rect, glUniform4f u_color, glDrawElements(GL_TRIANGLES, 3T)),
           [glFinish], eglSwapBuffers
calls      = 3N + 6  (+1 with --timing)   default 306
draws      = N                            default 100
work calls = N + 1   (draws + glClear)    default 101
triangles  = N*T                          default 10000
post-transform vertices per draw = 3T; tile i (cols = ceil(sqrt N), rows = ceil(N/cols),
c = i mod cols, r = i div cols) covers x in [c*W/cols, (c+1)*W/cols), y in [r*H/rows,
(r+1)*H/rows) (integer division); samples passed per draw = its pixels
",
};

/// Columns and rows of the grid of `n` tiles.
fn grid(n: u32) -> (u32, u32) {
    let mut cols = (n as f64).sqrt().ceil() as u32;
    while cols * cols < n {
        cols += 1;
    }
    (cols, n.div_ceil(cols))
}

/// The fan of `t` triangles covering the unit square: vertices and indices.
fn tile_mesh(t: u32) -> (Vec<f32>, Vec<u32>) {
    let right = t.div_ceil(2);
    let top = t / 2;
    let mut v = vec![0.0f32, 0.0];
    for k in 0..=right {
        v.extend_from_slice(&[1.0, k as f32 / right as f32]);
    }
    for j in 1..=top {
        v.extend_from_slice(&[1.0 - j as f32 / top as f32, 1.0]);
    }
    let idx = (0..t).flat_map(|k| [0, k + 1, k + 2]).collect();
    (v, idx)
}

fn main() {
    let args = parse_or_exit(&SPEC);
    let args = &args;
    let result = (|| -> Result<(), String> {
        let (n, t) = (args.get("draws"), args.get("tris"));
        let (cols, rows) = grid(n);
        if cols > args.width || rows > args.height {
            usage_error(
                &SPEC,
                &format!("--draws: a {cols}x{rows} grid does not fit the surface"),
            );
        }
        let gfx = gfx_for(args)?;
        let rp = gfx.rect_program()?;
        let (w, h) = (gfx.width, gfx.height);
        let (vertices, indices) = tile_mesh(t);
        let short = vertices.len() / 2 <= 65_536;
        let index_bytes: Vec<u8> = if short {
            indices
                .iter()
                .flat_map(|&i| (i as u16).to_ne_bytes())
                .collect()
        } else {
            indices.iter().flat_map(|&i| i.to_ne_bytes()).collect()
        };
        let index_type = if short {
            GL_UNSIGNED_SHORT
        } else {
            GL_UNSIGNED_INT
        };
        let count = indices.len() as GLsizei;
        let (mut vao, mut vbo, mut ebo) = (0, 0, 0);
        // SAFETY: GL calls on the current context; glBufferData reads the byte length it is
        // given from the live `vertices` and `index_bytes`, the attribute and index pointers
        // are offsets into the bound buffers.
        unsafe {
            glGenVertexArrays(1, &mut vao);
            glBindVertexArray(vao);
            glGenBuffers(1, &mut vbo);
            glBindBuffer(GL_ARRAY_BUFFER, vbo);
            glBufferData(
                GL_ARRAY_BUFFER,
                std::mem::size_of_val(vertices.as_slice()) as GLsizeiptr,
                vertices.as_ptr().cast(),
                GL_STATIC_DRAW,
            );
            glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 8, std::ptr::null());
            glEnableVertexAttribArray(0);
            glGenBuffers(1, &mut ebo);
            glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ebo);
            glBufferData(
                GL_ELEMENT_ARRAY_BUFFER,
                index_bytes.len() as GLsizeiptr,
                index_bytes.as_ptr().cast(),
                GL_STATIC_DRAW,
            );
            glDisable(GL_BLEND);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_SCISSOR_TEST);
        }
        gfx.check("many_draws set-up")?;
        let tiles: Vec<([f32; 4], [f32; 4])> = (0..n)
            .map(|i| {
                let (c, r) = (i % cols, i / cols);
                let x0 = (c as u64 * w as u64 / cols as u64) as f32;
                let x1 = ((c + 1) as u64 * w as u64 / cols as u64) as f32;
                let y0 = (r as u64 * h as u64 / rows as u64) as f32;
                let y1 = ((r + 1) as u64 * h as u64 / rows as u64) as f32;
                let [cr, cg, cb, _] = layer_colour(i);
                ([x0, y0, x1 - x0, y1 - y0], [cr, cg, cb, 1.0])
            })
            .collect();

        // SAFETY: GL calls on the current context; glDrawElements reads `count` indices from
        // offset 0 of the bound element buffer, which holds them.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w as GLint, h as GLint);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glUseProgram(rp.program.id);
            glBindVertexArray(vao);
            for ([x, y, tw, th], [r, g, b, a]) in &tiles {
                glUniform4f(rp.u_rect, *x, *y, *tw, *th);
                glUniform4f(rp.u_color, *r, *g, *b, *a);
                glDrawElements(GL_TRIANGLES, count, index_type, std::ptr::null());
            }
        })
    })();
    if let Err(e) = result {
        eprintln!("{}: {}", SPEC.name, e.replace('\n', " "));
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(6), (3, 2));
        assert_eq!(grid(100), (10, 10));
        assert_eq!(grid(1000), (32, 32));
    }

    #[test]
    fn mesh_covers_the_unit_square() {
        for t in [2, 3, 5, 100] {
            let (v, idx) = tile_mesh(t);
            assert_eq!(v.len(), 2 * (t as usize + 2));
            assert_eq!(idx.len(), 3 * t as usize);
            // Σ triangle areas = 1 and every triangle is counter-clockwise.
            let p = |i: u32| (v[2 * i as usize] as f64, v[2 * i as usize + 1] as f64);
            let area: f64 = idx
                .chunks(3)
                .map(|c| {
                    let (a, b, d) = (p(c[0]), p(c[1]), p(c[2]));
                    let s = ((b.0 - a.0) * (d.1 - a.1) - (d.0 - a.0) * (b.1 - a.1)) / 2.0;
                    assert!(s > 0.0, "t={t}: clockwise triangle {c:?}");
                    s
                })
                .sum();
            assert!((area - 1.0).abs() < 1e-6, "t={t}: area {area}");
        }
    }
}
