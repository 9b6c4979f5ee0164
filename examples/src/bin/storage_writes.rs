//! `storage_writes`: a draw whose fragment shader writes memory of the program's: it adds 1
//! to a counter in a storage buffer and increments an atomic counter, once per fragment. The
//! program reads both back after each frame, so the numbers it prints are the fragments its
//! draw shaded: a profiler that runs the draw again without keeping those buffers changes
//! them (they double), which the program sees.
//!
//! Flags: the common ones (`--size WxH` default 128x96, `--api`, `--frames N`,
//! `--checksum`), and `--image 1`: the fragment shader also stores to a 1x1 `GL_R32UI`
//! image (image unit 0), which a profiler cannot keep aside as cheaply: it must not run the
//! draw again at all. Desktop GL 4.3 or GLES 3.1 (the examples' contexts are GL 4.5 core and
//! GLES 3.2).
//!
//! Set-up (before frame 0, not counted): the storage buffer S (4 bytes, binding 0 of
//! `GL_SHADER_STORAGE_BUFFER`), the atomic counter buffer A (4 bytes, binding 0 of
//! `GL_ATOMIC_COUNTER_BUFFER`), with `--image 1` the 1x1 `GL_R32UI` texture I bound to image
//! unit 0 (`GL_WRITE_ONLY`); program p (RECT_VS + the fragment shader below),
//! `u_rect` = (W/4, H/4, W/2, H/2), the unit-quad VAO; blending, depth and stencil off.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glBindBuffer(GL_SHADER_STORAGE_BUFFER, S)
//! glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, 4, &0)
//! glBindBuffer(GL_ATOMIC_COUNTER_BUFFER, A)
//! glBufferSubData(GL_ATOMIC_COUNTER_BUFFER, 0, 4, &0)
//! glUseProgram(p)
//! glBindVertexArray(quad)
//! glDrawArrays(GL_TRIANGLE_STRIP, 0, 4)          D: the rectangle, each fragment counted twice
//! glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT)
//! glBindBuffer(GL_SHADER_STORAGE_BUFFER, S)
//! glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, 4, GL_MAP_READ_BIT)   S's count
//! glUnmapBuffer(GL_SHADER_STORAGE_BUFFER)
//! glBindBuffer(GL_ATOMIC_COUNTER_BUFFER, A)
//! glMapBufferRange(GL_ATOMIC_COUNTER_BUFFER, 0, 4, GL_MAP_READ_BIT)   A's count
//! glUnmapBuffer(GL_ATOMIC_COUNTER_BUFFER)
//! [glFinish]                                     only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 18 (+1 glFinish with `--timing`)
//! - draws      = 1 (D); work calls = 2 (glClear, D)
//! - fragments of D = (W/2)·(H/2): 3,072 at the default 128x96 (the rectangle lies on pixel
//!   edges)
//! - both counters read back = D's fragments, every frame: at exit the program prints
//!   `storage=3072 atomic=3072` (`varied=s/a,s/a,…` when a frame differs)
//! - with `--image 1` the same, and a profiler's heat lists D unpainted (its program has an
//!   image)
//!
//! After the last frame the program calls `glGetError` and exits 1 unless it is
//! `GL_NO_ERROR`.

use gpuheat_examples::args::{IntFlag, Spec};
use gpuheat_examples::gfx::RECT_VS;
use gpuheat_examples::gl::*;
use gpuheat_examples::{gfx_for, main_with, run_frames};

const SPEC: Spec = Spec {
    name: "storage_writes",
    about: "a draw whose fragment shader counts its fragments into a storage buffer and an \
            atomic counter, read back every frame",
    default_size: (128, 96),
    flags: &[IntFlag {
        name: "image",
        value: "0|1",
        default: 0,
        min: 0,
        help: "1: the fragment shader also stores to a 1x1 R32UI image",
    }],
    expected: "\
per frame: glViewport, glClearColor, glClear, glBindBuffer S, glBufferSubData S = 0,
           glBindBuffer A, glBufferSubData A = 0, glUseProgram, glBindVertexArray,
           glDrawArrays (D: W/2 x H/2 rectangle), glMemoryBarrier,
           glBindBuffer S, glMapBufferRange S, glUnmapBuffer,
           glBindBuffer A, glMapBufferRange A, glUnmapBuffer, [glFinish], eglSwapBuffers
calls      = 18  (+1 with --timing)
draws      = 1; work calls = 2 (glClear, D)
fragments  = (W/2)*(H/2), 3072 at 128x96
at exit    : storage=N atomic=N, N = D's fragments, the same every frame (varied=... else)
--image 1  : D also stores to a 1x1 R32UI image; a profiler's heat must not replay it
after the last frame: glGetError must be GL_NO_ERROR (else exit 1)",
};

/// D's fragment shader: counts each fragment into S and A (and stores to I with
/// `--image 1`), and writes the colour.
fn fragment_shader(image: bool) -> String {
    let (declare, store) = if image {
        (
            "layout(r32ui, binding = 0) writeonly uniform highp uimage2D u_image;\n",
            "    imageStore(u_image, ivec2(0), uvec4(1u));\n",
        )
    } else {
        ("", "")
    };
    format!(
        "layout(std430, binding = 0) buffer Counts {{ uint fragments; }};
layout(binding = 0, offset = 0) uniform atomic_uint u_drawn;
{declare}uniform vec4 u_color;
out vec4 o_color;
void main() {{
    atomicAdd(fragments, 1u);
    atomicCounterIncrement(u_drawn);
{store}    o_color = u_color * step(0.0, gl_FragCoord.x);
}}
"
    )
}

/// A 4-byte buffer of `target` at binding 0, zeroed.
///
/// # Safety
/// A GL 4.3 / GLES 3.1 context must be current.
unsafe fn counter(target: GLenum) -> GLuint {
    let mut b = 0;
    // SAFETY: our caller's promise; `b` has room for one name, the data is 4 bytes.
    unsafe {
        glGenBuffers(1, &mut b);
        glBindBuffer(target, b);
        glBufferData(target, 4, [0u32].as_ptr().cast(), GL_DYNAMIC_DRAW);
        glBindBufferBase(target, 0, b);
    }
    b
}

/// Zeroes the counter of `target`'s bound buffer.
///
/// # Safety
/// As [`counter`], with `buffer` one of its buffers.
unsafe fn zero(target: GLenum, buffer: GLuint) {
    // SAFETY: our caller's promise; 4 bytes from a live array.
    unsafe {
        glBindBuffer(target, buffer);
        glBufferSubData(target, 0, 4, [0u32].as_ptr().cast());
    }
}

/// Reads back the counter of `target`'s bound buffer (0 when it cannot be mapped).
///
/// # Safety
/// As [`zero`], right after it was bound.
unsafe fn read(target: GLenum) -> u32 {
    // SAFETY: our caller's promise; a non-null mapping holds the 4 bytes asked for.
    unsafe {
        let p = glMapBufferRange(target, 0, 4, GL_MAP_READ_BIT);
        let v = if p.is_null() {
            0
        } else {
            p.cast::<u32>().read_unaligned()
        };
        glUnmapBuffer(target);
        v
    }
}

fn main() {
    main_with(&SPEC, |args| {
        let image = args.get("image") != 0;
        let gfx = gfx_for(args)?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        let program = gfx.storage_program(RECT_VS, &fragment_shader(image))?;
        let quad = gfx.unit_quad()?;
        // SAFETY: GL calls on the context `gfx` made current on this thread, naming objects
        // it creates; the uniforms are the program's.
        let (storage, atomic) = unsafe {
            let storage = counter(GL_SHADER_STORAGE_BUFFER);
            let atomic = counter(GL_ATOMIC_COUNTER_BUFFER);
            if image {
                let mut t = 0;
                glGenTextures(1, &mut t);
                glBindTexture(GL_TEXTURE_2D, t);
                glTexStorage2D(GL_TEXTURE_2D, 1, GL_R32UI, 1, 1);
                glBindImageTexture(0, t, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_R32UI);
            }
            glUseProgram(program.id);
            glUniform4f(
                program.uniform("u_rect")?,
                (w / 4) as f32,
                (h / 4) as f32,
                (w / 2) as f32,
                (h / 2) as f32,
            );
            glUniform2f(program.uniform("u_viewport")?, w as f32, h as f32);
            glUniform4f(program.uniform("u_color")?, 0.25, 0.5, 1.0, 1.0);
            (storage, atomic)
        };
        gfx.finish_setup("storage_writes set-up")?;
        let mut counts: Vec<(u32, u32)> = Vec::new();
        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
        // naming objects it created.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            zero(GL_SHADER_STORAGE_BUFFER, storage);
            zero(GL_ATOMIC_COUNTER_BUFFER, atomic);
            glUseProgram(program.id);
            glBindVertexArray(quad.vao);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4); // D
            glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
            glBindBuffer(GL_SHADER_STORAGE_BUFFER, storage);
            let s = read(GL_SHADER_STORAGE_BUFFER);
            glBindBuffer(GL_ATOMIC_COUNTER_BUFFER, atomic);
            let a = read(GL_ATOMIC_COUNTER_BUFFER);
            counts.push((s, a));
        })?;
        match counts.first() {
            Some(&(s, a)) if counts.iter().all(|&c| c == (s, a)) => {
                println!("storage={s} atomic={a}")
            }
            _ => {
                let all: Vec<String> = counts.iter().map(|(s, a)| format!("{s}/{a}")).collect();
                println!("varied={}", all.join(","));
            }
        }
        gfx.check("storage_writes frames")
    });
}
