//! `fixed_function`: GL 1.x drawing with no program current — the fixed-function transform
//! (projection × modelview × vertex) of a client-memory vertex array, a buffer-object
//! vertex array drawn through indices, a display list of one quad, and a display list that
//! moves the modelview for good before its quad (called twice: the second call starts where
//! the first left off). Every vertex lands where the documented matrices put it, so a
//! profiler's recorded geometry can be checked against an independent computation, and a
//! profiler that runs the lists again must not move the program's matrices.
//!
//! Flags: the common ones (`--frames N`, `--size WxH` default 128x96, `--timing`,
//! `--checksum`), and `--feedback 1`: after its draws, each frame also runs list C in
//! `GL_FEEDBACK` render mode (`glFeedbackBuffer(4096, GL_2D, buf)`, `glRenderMode(GL_FEEDBACK)`,
//! `glCallList(list)`, `glRenderMode(GL_RENDER)`, 4 calls and 1 work call more), and prints
//! `feedback=<values returned>` at exit (`varied=a,b,…` when the frames differ): the values
//! the driver wrote into the program's buffer, which a profiler running the list again would
//! double. `--copy 1`: after its draws (before the feedback pass), each frame copies the
//! window's 32x32 pixels at (0, 0) into a 32x32 `GL_RGBA8` texture X and draws X with
//! fixed-function texturing (no program) over the window's top-right 32x32 pixels: a cost
//! that reaches the screen only through X (15 calls and 2 work calls more; see below).
//! `--text 1`: D1 and D2 are one call, as two glyphs of a text drawn with a display list
//! font are: `glListBase(moving)`, `glCallLists(2, GL_UNSIGNED_BYTE, [0, 0])`,
//! `glListBase(0)` instead of the two `glCallList(moving)` (1 call more, 1 work call less).
//! Always a desktop GL compatibility-profile context (fixed function exists in no other):
//! `--api` is ignored.
//!
//! Matrices, written as rows (GL takes them column by column):
//!
//! ```text
//! P    = glFrustum(-1, 1, -0.5, 0.5, 1, 9)   MV_A = translate(-0.75, 0, -3)
//!        [1 0  0     0   ]                          [1 0 0 -0.75]
//!        [0 2  0     0   ]                          [0 1 0  0   ]
//!        [0 0 -1.25 -2.25]                          [0 0 1 -3   ]
//!        [0 0 -1     0   ]                          [0 0 0  1   ]
//!
//! MV_B = translate(0.75, -0.25, -2.5)        MV_C = translate(0, 0.25, -2)
//!        · rotate 90° about z · scale 0.5           · scale 0.25
//!        [0   -0.5 0  0.75]                         [0.25 0    0     0   ]
//!        [0.5  0   0 -0.25]                         [0    0.25 0     0.25]
//!        [0    0   1 -2.5 ]                         [0    0    0.25 -2   ]
//!        [0    0   0  1   ]                         [0    0    0     1   ]
//! ```
//!
//! Vertices (object space):
//!
//! - A, client memory, 3 floats each: (-0.5,-0.5,0) (0.5,-0.5,0) (0,0.5,0) (-0.5,-0.5,-1)
//!   (0.5,-0.5,-1) (0.5,0.5,-1): two triangles.
//! - B, a buffer object, 2 floats each (z 0): (0,0) (1,0) (0,1) (1,1); indices (client
//!   memory, unsigned short) 0 1 2 2 1 3: two triangles.
//! - C, display list `list` compiled at set-up: `glColor4f(0.5, 0.5, 1, 1)`,
//!   `glBegin(GL_QUADS)`, `glVertex3f` (-1,-1,0) (1,-1,0) (1,1,0) (-1,1,0), `glEnd`: one quad
//!   (two triangles).
//! - D, display list `moving` compiled at set-up: `glColor4f(1, 1, 0.5, 1)`,
//!   `glTranslatef(2, 0, 0)` (no push or pop: it stays in the modelview), then C's quad.
//!   Called twice after C: D1 runs under MV_D1 = MV_C · T, D2 under MV_D2 = MV_C · T · T,
//!   T = translate(2, 0, 0), and the frame ends with MV_C · T · T · T in the modelview:
//!
//! ```text
//! MV_D1 = [0.25 0    0     0.5 ]            MV_D2 = [0.25 0    0     1   ]
//!         [0    0.25 0     0.25]                    [0    0.25 0     0.25]
//!         [0    0    0.25 -2   ]                    [0    0    0.25 -2   ]
//!         [0    0    0     1   ]                    [0    0    0     1   ]
//! ```
//!
//! Clip position of vertex v of draw X: P · MV_X · (v, 1); every w is positive (between 2
//! and 4), so all five draws are in front of the eye, inside the view. In window
//! coordinates of the default 128x96, C's quad covers x 56..72, y 48..72, D1's x 72..88 and
//! D2's x 88..104 (same y): 16 x 24 = 384 fragments each, edges on pixel boundaries.
//!
//! Set-up (before frame 0, not counted): the buffer object, the display list,
//! `glEnableClientState(GL_VERTEX_ARRAY)`, the alpha test on (`glAlphaFunc(GL_EQUAL, 1)`:
//! every colour here has alpha 1, so it discards nothing of the program's; old programs leave
//! it on, and a profiler's own passes, whose outputs are not 1, must not fall under it), and
//! user clip plane 0 on (`glClipPlane(GL_CLIP_PLANE0, (0, 0, -1, -1))` under the identity
//! modelview: keeps eye-space z ≤ -1, where every vertex here lies, z from -4 to -1.75; it
//! clips nothing of the program's, and everything at z = 0, where a profiler's full-screen
//! passes lie), and the colour logic op on with `GL_COPY` (writes the source unchanged, so
//! nothing of the program's changes; but an enabled logic op turns blending off, also for a
//! profiler's additive passes into float buffers); no program, lighting, texturing or depth
//! test.
//!
//! Per-frame call sequence (fixed):
//!
//! ```text
//! glViewport(0, 0, W, H)
//! glClearColor(0, 0, 0, 1)
//! glClear(GL_COLOR_BUFFER_BIT)
//! glMatrixMode(GL_PROJECTION)
//! glLoadMatrixf(P)
//! glMatrixMode(GL_MODELVIEW)
//! glLoadMatrixf(MV_A)
//! glColor4f(1, 0.5, 0.25, 1)
//! glVertexPointer(3, GL_FLOAT, 0, A)
//! glDrawArrays(GL_TRIANGLES, 0, 6)                          draw A
//! glLoadMatrixf(MV_B)
//! glColor4f(0.25, 1, 0.5, 1)
//! glBindBuffer(GL_ARRAY_BUFFER, vbo)
//! glVertexPointer(2, GL_FLOAT, 0, 0)
//! glDrawElements(GL_TRIANGLES, 6, GL_UNSIGNED_SHORT, B)     draw B
//! glBindBuffer(GL_ARRAY_BUFFER, 0)
//! glLoadMatrixf(MV_C)
//! glCallList(list)                                          draw C
//! glCallList(moving)                                        draw D1
//! glCallList(moving)                                        draw D2
//! [glFinish]                                                only with --timing
//! eglSwapBuffers
//! ```
//!
//! Expected numbers per frame:
//!
//! - calls      = 21 (+1 glFinish with `--timing`)
//! - draws      = 2 (glDrawArrays, glDrawElements), plus the three display list calls as work
//! - work calls = 6 (the two draws, three glCallList, glClear)
//! - post-transform vertices: 6 per draw (each quad is two triangles), 30 in all
//! - fragments: 384 for each of C, D1 and D2 (at the default size)
//! - with `--text 1`: 22 calls, 5 work calls; the glCallLists has D1's 6 vertices then D2's
//!   (12), and 768 fragments
//! - with `--copy 1`: 36 calls, 8 work calls; X, 32x32, receives the copy and feeds the
//!   block (1,024 fragments), the copy's only consumer: all of the frame's painted cost
//!   reaches the window
//!
//! After the last frame (and `--checksum`'s `glReadPixels`) the program calls `glGetError`
//! once and exits 1 if it is not `GL_NO_ERROR`: a profiler that leaks an error of its own
//! fails it.

use gpuheat_examples::args::{IntFlag, Spec};
use gpuheat_examples::gfx::Gfx;
use gpuheat_examples::gl::*;
use gpuheat_examples::{main_with, run_frames};

const SPEC: Spec = Spec {
    name: "fixed_function",
    about: "fixed-function GL 1.x draws: a client array, a buffer through indices, display lists",
    default_size: (128, 96),
    flags: &[
        IntFlag {
            name: "feedback",
            value: "0|1",
            default: 0,
            min: 0,
            help: "1: each frame also runs list C in GL_FEEDBACK mode; prints feedback=N at exit",
        },
        IntFlag {
            name: "text",
            value: "0|1",
            default: 0,
            min: 0,
            help: "1: D1 and D2 are one glCallLists of two names through the list base",
        },
        IntFlag {
            name: "copy",
            value: "0|1",
            default: 0,
            min: 0,
            help: "1: each frame copies 32x32 pixels into a texture and draws it textured",
        },
    ],
    expected: "\
per frame: glViewport, glClearColor, glClear, glMatrixMode, glLoadMatrixf P, glMatrixMode,
           glLoadMatrixf MV_A, glColor4f, glVertexPointer, glDrawArrays(GL_TRIANGLES, 0, 6),
           glLoadMatrixf MV_B, glColor4f, glBindBuffer, glVertexPointer,
           glDrawElements(GL_TRIANGLES, 6, GL_UNSIGNED_SHORT), glBindBuffer,
           glLoadMatrixf MV_C, glCallList C, glCallList D, glCallList D (D translates and
           keeps it), [glFinish], eglSwapBuffers
calls      = 21  (+1 with --timing)
draws      = 2, plus the three display list calls
work calls = 6   (the two draws, three glCallList, glClear)
vertices   = 6 per draw, 30 in all, at P * MV * v (matrices and vertices: see the source)
fragments  = 384 for each list's quad at the default 128x96
--text 1   : glListBase(D), glCallLists(2, GL_UNSIGNED_BYTE, [0, 0]), glListBase(0) instead of
           the two glCallList D: 22 calls, 5 work calls; that call has D1's then D2's 6
           vertices (12) and 768 fragments
--feedback 1: + glFeedbackBuffer, glRenderMode(GL_FEEDBACK), glCallList C, glRenderMode(GL_RENDER)
           per frame (+4 calls, +1 work call); feedback=N at exit, the same N every frame
--copy 1   : + glBindTexture X, glCopyTexSubImage2D (32x32 at 0,0 into X), glEnable(GL_TEXTURE_2D),
           glLoadIdentity, glBegin(GL_QUADS), 4 x (glTexCoord2f, glVertex3f), glEnd, glDisable
           (+15 calls, +2 work calls: the copy and the block); the block covers the window's
           x 96..128, y 64..96: 1,024 fragments, sampling X, the copy's only consumer
after the last frame: glGetError must be GL_NO_ERROR (else exit 1)",
};

/// A row-major 4×4 matrix as the doc writes it, in the column-major order GL takes.
const fn columns(rows: [[f32; 4]; 4]) -> [f32; 16] {
    let mut out = [0.0; 16];
    let mut c = 0;
    while c < 4 {
        let mut r = 0;
        while r < 4 {
            out[c * 4 + r] = rows[r][c];
            r += 1;
        }
        c += 1;
    }
    out
}

const P: [f32; 16] = columns([
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 2.0, 0.0, 0.0],
    [0.0, 0.0, -1.25, -2.25],
    [0.0, 0.0, -1.0, 0.0],
]);
const MV_A: [f32; 16] = columns([
    [1.0, 0.0, 0.0, -0.75],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, -3.0],
    [0.0, 0.0, 0.0, 1.0],
]);
const MV_B: [f32; 16] = columns([
    [0.0, -0.5, 0.0, 0.75],
    [0.5, 0.0, 0.0, -0.25],
    [0.0, 0.0, 1.0, -2.5],
    [0.0, 0.0, 0.0, 1.0],
]);
const MV_C: [f32; 16] = columns([
    [0.25, 0.0, 0.0, 0.0],
    [0.0, 0.25, 0.0, 0.25],
    [0.0, 0.0, 0.25, -2.0],
    [0.0, 0.0, 0.0, 1.0],
]);

const A: [[f32; 3]; 6] = [
    [-0.5, -0.5, 0.0],
    [0.5, -0.5, 0.0],
    [0.0, 0.5, 0.0],
    [-0.5, -0.5, -1.0],
    [0.5, -0.5, -1.0],
    [0.5, 0.5, -1.0],
];
const B: [[f32; 2]; 4] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
const B_INDICES: [u16; 6] = [0, 1, 2, 2, 1, 3];
const C: [[f32; 3]; 4] = [
    [-1.0, -1.0, 0.0],
    [1.0, -1.0, 0.0],
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
];

fn main() {
    main_with(&SPEC, |args| {
        let gfx = Gfx::new_compat(args.width, args.height)?;
        let (w, h) = (gfx.width as i32, gfx.height as i32);
        // SAFETY: GL calls on the compatibility context `gfx` made current on this thread;
        // `B` is static, and the buffer size given is its size.
        let (vbo, list, moving) = unsafe {
            let mut vbo = 0;
            glGenBuffers(1, &mut vbo);
            glBindBuffer(GL_ARRAY_BUFFER, vbo);
            glBufferData(
                GL_ARRAY_BUFFER,
                std::mem::size_of_val(&B) as GLsizeiptr,
                B.as_ptr().cast(),
                GL_STATIC_DRAW,
            );
            glBindBuffer(GL_ARRAY_BUFFER, 0);
            let list = glGenLists(1);
            glNewList(list, GL_COMPILE);
            glColor4f(0.5, 0.5, 1.0, 1.0);
            glBegin(GL_QUADS);
            for [x, y, z] in C {
                glVertex3f(x, y, z);
            }
            glEnd();
            glEndList();
            let moving = glGenLists(1);
            glNewList(moving, GL_COMPILE);
            glColor4f(1.0, 1.0, 0.5, 1.0);
            glTranslatef(2.0, 0.0, 0.0);
            glBegin(GL_QUADS);
            for [x, y, z] in C {
                glVertex3f(x, y, z);
            }
            glEnd();
            glEndList();
            glEnableClientState(GL_VERTEX_ARRAY);
            glEnable(GL_ALPHA_TEST);
            glAlphaFunc(GL_EQUAL, 1.0);
            glClipPlane(GL_CLIP_PLANE0, [0.0, 0.0, -1.0, -1.0].as_ptr());
            glEnable(GL_CLIP_PLANE0);
            glEnable(GL_COLOR_LOGIC_OP);
            glLogicOp(GL_COPY);
            (vbo, list, moving)
        };
        gfx.check("fixed_function set-up")?;
        let feedback = args.get("feedback") != 0;
        let copy = args.get("copy") != 0;
        let text = args.get("text") != 0;
        // The text's two names, offset by the list base: both are `moving`.
        const TEXT: [u8; 2] = [0, 0];
        let mut x = 0;
        if copy {
            // SAFETY: as above; `x` has room for one name, and no data is uploaded.
            unsafe {
                glGenTextures(1, &mut x);
                glBindTexture(GL_TEXTURE_2D, x);
                glTexImage2D(
                    GL_TEXTURE_2D,
                    0,
                    GL_RGBA8 as GLint,
                    32,
                    32,
                    0,
                    GL_RGBA,
                    GL_UNSIGNED_BYTE,
                    std::ptr::null(),
                );
                glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST as GLint);
                glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST as GLint);
            }
            gfx.check("fixed_function --copy set-up")?;
        }
        let mut buffer = vec![0.0f32; 4096];
        let mut returned: Vec<i32> = Vec::new();

        // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread;
        // the client arrays are static, and the buffer object and list are its own.
        run_frames(&gfx, args, |_, _| unsafe {
            glViewport(0, 0, w, h);
            glClearColor(0.0, 0.0, 0.0, 1.0);
            glClear(GL_COLOR_BUFFER_BIT);
            glMatrixMode(GL_PROJECTION);
            glLoadMatrixf(P.as_ptr());
            glMatrixMode(GL_MODELVIEW);
            glLoadMatrixf(MV_A.as_ptr());
            glColor4f(1.0, 0.5, 0.25, 1.0);
            glVertexPointer(3, GL_FLOAT, 0, A.as_ptr().cast());
            glDrawArrays(GL_TRIANGLES, 0, 6);
            glLoadMatrixf(MV_B.as_ptr());
            glColor4f(0.25, 1.0, 0.5, 1.0);
            glBindBuffer(GL_ARRAY_BUFFER, vbo);
            glVertexPointer(2, GL_FLOAT, 0, std::ptr::null());
            glDrawElements(
                GL_TRIANGLES,
                6,
                GL_UNSIGNED_SHORT,
                B_INDICES.as_ptr().cast(),
            );
            glBindBuffer(GL_ARRAY_BUFFER, 0);
            glLoadMatrixf(MV_C.as_ptr());
            glCallList(list);
            if text {
                glListBase(moving);
                glCallLists(
                    TEXT.len() as GLsizei,
                    GL_UNSIGNED_BYTE,
                    TEXT.as_ptr().cast(),
                );
                glListBase(0);
            } else {
                glCallList(moving);
                glCallList(moving);
            }
            if copy {
                glBindTexture(GL_TEXTURE_2D, x);
                glCopyTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, 0, 0, 32, 32);
                glEnable(GL_TEXTURE_2D);
                glLoadIdentity();
                // Eye space z = -2 (inside the clip plane), under P: window x 96..128,
                // y 64..96.
                glBegin(GL_QUADS);
                for [s, t, x, y] in [
                    [0.0, 0.0, 1.0, 1.0 / 3.0],
                    [1.0, 0.0, 2.0, 1.0 / 3.0],
                    [1.0, 1.0, 2.0, 1.0],
                    [0.0, 1.0, 1.0, 1.0],
                ] {
                    glTexCoord2f(s, t);
                    glVertex3f(x, y, -2.0);
                }
                glEnd();
                glDisable(GL_TEXTURE_2D);
            }
            if feedback {
                glFeedbackBuffer(buffer.len() as GLsizei, GL_2D, buffer.as_mut_ptr());
                glRenderMode(GL_FEEDBACK);
                glCallList(list);
                returned.push(glRenderMode(GL_RENDER));
            }
        })?;
        if feedback {
            let first = returned.first().copied().unwrap_or(0);
            if returned.iter().all(|&n| n == first) {
                println!("feedback={first}");
            } else {
                let all: Vec<String> = returned.iter().map(i32::to_string).collect();
                println!("varied={}", all.join(","));
            }
        }
        // SAFETY: the context is still current.
        let e = unsafe { glGetError() };
        if e != GL_NO_ERROR {
            return Err(format!("GL error 0x{e:04X} after the frames"));
        }
        Ok(())
    });
}
