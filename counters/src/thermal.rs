//! Thermal painting: per-pixel heat and overdraw maps of a captured frame, computed on the GPU
//! inside the program.
//!
//! For each draw `d` that renders to the default framebuffer, right after the draw (and after
//! its counter bracket), the same draw is replayed with the program's own state (program,
//! vertex arrays, viewport, scissor, culling, `discard`…) into our framebuffer `count`: a
//! stencil buffer cleared to 0, stencil test `ALWAYS` with `INCR` on both faces and colour
//! writes off, and no depth buffer (so the depth test passes). The stencil then holds
//! `c_d(p)`, the fragments the draw produced at `p` (saturating at 255 per pixel per draw:
//! `INCR` does not wrap). Eight "bit passes" of a full-screen triangle, stencil `EQUAL` on bit
//! `b`, additive blending, turn the stencil into `c_d(p)` in an R32F target (`scratch`); it is
//! read back for `N_d = Σ_p c_d(p)` and the coverage box. Eight more bit passes add
//! `2^b·T_d/N_d` and `2^b` into the two R32F targets of `accum` (heat, overdraw), scissored to
//! the box. At the frame's end (before the swap) the frame's colour buffer and both maps are
//! read back once and `accum` is cleared.
//!
//! Invisibility: every piece of state touched is saved and restored, and the program's
//! pending GL error is taken before the work and raised again after it, by the crate's
//! save/restore toolkit (`state.rs`); errors of our own are drained (and make the frame's map
//! missing, with the error, rather than wrong).
//!
//! Known limits: per-draw-buffer colour masks and blend enables (`glColorMaski`,
//! `glEnablei`) are restored through the non-indexed calls from draw buffer 0's values;
//! object names the program uses without generating them (allowed for some objects in GLES
//! and compatibility GL) may collide with ours; the program's own stencil test is replaced by
//! `ALWAYS` during the replay, so `c_d` counts the fragments the draw shaded, including ones
//! its stencil or depth test then rejected; `GL_OUT_OF_MEMORY` and
//! `GL_INVALID_FRAMEBUFFER_OPERATION` pending from the program cannot be raised again.

use gpuheat_session::{ClientApi, DrawCoverage, HeatMap};

use crate::gl::*;
use crate::state::{drain_errors, pack_defaults, ErrorScope, Piece, Saved};

/// Whether a context can host the painter's targets: R32F colour buffers that blend.
/// `Err` says exactly why not.
pub fn support(
    api: ClientApi,
    major: u32,
    minor: u32,
    has_extension: impl Fn(&str) -> bool,
) -> Result<(), String> {
    match api {
        ClientApi::Gl if major >= 3 => Ok(()),
        ClientApi::Gl => Err(format!(
            "GL {major}.{minor} has no float colour buffers (heat maps need GL 3.0)"
        )),
        ClientApi::Gles if major < 3 => Err(format!(
            "GLES {major}.{minor} has no float colour buffers (heat maps need GLES 3.2, or 3.0 \
             with GL_EXT_color_buffer_float; no lower-precision path yet)"
        )),
        ClientApi::Gles => {
            if (major, minor) < (3, 2) && !has_extension("GL_EXT_color_buffer_float") {
                return Err(format!(
                    "GLES {major}.{minor} without GL_EXT_color_buffer_float has no float \
                     colour buffers"
                ));
            }
            if !has_extension("GL_EXT_float_blend") {
                return Err(format!(
                    "GLES {major}.{minor} without GL_EXT_float_blend cannot blend into 32-bit \
                     float colour buffers"
                ));
            }
            Ok(())
        }
        ClientApi::Vg => Err("OpenVG contexts draw no GL fragments".into()),
    }
}

/// The GPU objects of one context's painter, sized to the map.
struct Targets {
    width: u32,
    height: u32,
    program: GLuint,
    uniform: GLint,
    vao: GLuint,
    /// count, scratch, accum.
    fbos: [GLuint; 3],
    /// stencil, colour (RGBA8), scratch (R32F), heat (R32F), overdraw (R32F).
    rbs: [GLuint; 5],
}

const VS: &str = "out vec2 unused_;\nvoid main() {\n  vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);\n  unused_ = p;\n  gl_Position = vec4(p, 0.0, 1.0);\n}\n";
const FS: &str = "uniform vec2 u_add;\nin vec2 unused_;\nlayout(location = 0) out vec4 o0;\nlayout(location = 1) out vec4 o1;\nvoid main() {\n  o0 = vec4(u_add.x);\n  o1 = vec4(u_add.y);\n}\n";

/// Per-context painter: the targets, and the draws of the frame being painted.
pub struct Painter {
    gles: bool,
    unsupported: Option<String>,
    targets: Option<Targets>,
    /// Our program, its `u_add` location and our empty vertex array, built once.
    program: Option<(GLuint, GLint, GLuint)>,
    /// Map size: the surface's when known, else the first painted draw's viewport.
    size: Option<[u32; 2]>,
    draws: Vec<DrawCoverage>,
    /// First failure in this frame: the map is reported missing with it.
    failure: Option<String>,
    /// Draws listed without painting, and why (for the failure-free summary).
    pub skipped_offscreen: u32,
    /// Draws skipped because the program had a query active or transform feedback on.
    pub skipped_other: u32,
}

impl std::fmt::Debug for Painter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Painter")
            .field("size", &self.size)
            .field("draws", &self.draws.len())
            .finish()
    }
}

impl Painter {
    /// A painter for a context of `api` (with `unsupported` the reason it cannot paint, from
    /// [`support`]); `surface`: the draw surface's size when known.
    pub fn new(api: ClientApi, unsupported: Option<String>, surface: Option<[u32; 2]>) -> Painter {
        Painter {
            gles: api == ClientApi::Gles,
            unsupported,
            targets: None,
            program: None,
            size: surface.filter(|s| s[0] > 0 && s[1] > 0),
            draws: Vec::new(),
            failure: None,
            skipped_offscreen: 0,
            skipped_other: 0,
        }
    }

    /// Sets the surface size (when the window system says, e.g. at a capture's start).
    pub fn set_surface(&mut self, surface: [u32; 2]) {
        if surface[0] > 0 && surface[1] > 0 {
            self.size = Some(surface);
        }
    }

    fn list(&mut self, call: u32, time_ns: u64) {
        self.draws.push(DrawCoverage {
            call,
            fragments: 0,
            time_ns,
            bbox: [0; 4],
        });
    }

    fn fail(&mut self, why: String) {
        if self.failure.is_none() {
            self.failure = Some(why);
        }
    }

    /// Saves the state painting and the read-backs change; restored when the guard drops.
    ///
    /// # Safety
    /// This painter's context must be current (GL 3.0+ or GLES 3.0+, as [`support`] checks),
    /// and `f` its real functions.
    unsafe fn save<'f>(&self, f: &'f ThermalFns) -> Saved<'f> {
        let framebuffer = |query, target| Piece::Binding {
            query,
            target,
            bind: f.bind_framebuffer,
        };
        let mut pieces = vec![
            framebuffer(DRAW_FRAMEBUFFER_BINDING, DRAW_FRAMEBUFFER),
            framebuffer(READ_FRAMEBUFFER_BINDING, READ_FRAMEBUFFER),
            Piece::Program,
            Piece::VertexArray,
            Piece::Binding {
                query: RENDERBUFFER_BINDING,
                target: RENDERBUFFER,
                bind: f.bind_renderbuffer,
            },
            Piece::Viewport,
            Piece::ScissorBox,
            Piece::Enabled(SCISSOR_TEST),
            Piece::Enabled(STENCIL_TEST),
            Piece::Enabled(BLEND),
            Piece::Enabled(CULL_FACE),
            Piece::Enabled(RASTERIZER_DISCARD),
        ];
        if !self.gles {
            pieces.push(Piece::PolygonMode);
        }
        pieces.extend([
            Piece::Stencil,
            Piece::ColorMask,
            Piece::Blend,
            Piece::Binding {
                query: PIXEL_PACK_BUFFER_BINDING,
                target: PIXEL_PACK_BUFFER,
                bind: f.bind_buffer,
            },
            Piece::Pack,
        ]);
        // SAFETY: our caller's promise; every piece exists in GL 3.0+ and GLES 3.0+ (polygon
        // mode only taken on desktop GL).
        unsafe { Saved::take(f, &pieces) }
    }

    /// Paints draw `call` (frame order) whose serialized time is `time_ns`; `replay` calls
    /// the real draw again with the same arguments. `program_query` tells that the program
    /// has a query of its own active (the replay would add to it).
    ///
    /// # Safety
    /// The context this painter belongs to must be current, and `f` its real functions.
    pub unsafe fn paint(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        program_query: bool,
        replay: &dyn Fn(),
    ) {
        if self.unsupported.is_some() || self.failure.is_some() {
            self.list(call, time_ns);
            return;
        }
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions.
        let ours = unsafe {
            let errors = ErrorScope::enter(f);
            self.paint_inner(f, call, time_ns, program_query, replay);
            errors.leave()
        };
        if ours != NO_ERROR {
            self.fail(format!(
                "GL error 0x{ours:04X} while painting call {call} (the map would be wrong)"
            ));
        }
    }

    unsafe fn paint_inner(
        &mut self,
        f: &ThermalFns,
        call: u32,
        time_ns: u64,
        program_query: bool,
        replay: &dyn Fn(),
    ) {
        // SAFETY: `paint`'s caller's promise: this painter's context is current (GL 3.0+ or
        // GLES 3.0+, `support` checked) and `f` its real functions; the objects bound are our
        // targets or the program's saved bindings, and `saved` restores what is changed.
        unsafe {
            if f.integer(DRAW_FRAMEBUFFER_BINDING) != 0 {
                self.skipped_offscreen += 1;
                return self.list(call, time_ns);
            }
            if program_query
                || f.integer(TRANSFORM_FEEDBACK_ACTIVE) != 0
                || f.current_program_deleting()
            {
                self.skipped_other += 1;
                return self.list(call, time_ns);
            }
            let saved = self.save(f);
            if self.size.is_none() {
                let [x, y, w, h] = saved.viewport();
                if w > 0 && h > 0 {
                    self.size = Some([(x.max(0) + w) as u32, (y.max(0) + h) as u32]);
                }
            }
            let Some([w, h]) = self.size else {
                self.list(call, time_ns);
                return self.fail("the surface size is unknown and the viewport is empty".into());
            };
            if self.targets.as_ref().map(|t| (t.width, t.height)) != Some((w, h)) {
                if let Err(e) = self.create_targets(f, w, h) {
                    self.list(call, time_ns);
                    return self.fail(e);
                }
            }
            let t = self.targets.as_ref().expect("targets");
            let (fbos, program, uniform, vao) = (t.fbos, t.program, t.uniform, t.vao);

            // Count: replay the draw with the program's own state into our stencil.
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[0]);
            (f.disable)(SCISSOR_TEST);
            (f.stencil_mask_separate)(FRONT_AND_BACK, 0xFF);
            (f.clear_bufferiv)(STENCIL, 0, &0);
            f.set_enabled(SCISSOR_TEST, saved.enabled(SCISSOR_TEST));
            (f.enable)(STENCIL_TEST);
            (f.stencil_func_separate)(FRONT_AND_BACK, ALWAYS, 0, 0xFF);
            (f.stencil_op_separate)(FRONT_AND_BACK, INCR, INCR, INCR);
            (f.color_mask)(0, 0, 0, 0);
            let before = drain_errors(f);
            if before != NO_ERROR {
                self.list(call, time_ns);
                return self.fail(format!(
                    "GL error 0x{before:04X} setting up the count of call {call}"
                ));
            }
            replay();
            let replayed = drain_errors(f);
            if replayed != NO_ERROR {
                // The draw itself raises this error: it drew nothing.
                return self.list(call, time_ns);
            }

            // Our passes: full-screen triangles of our own program.
            (f.disable)(SCISSOR_TEST);
            (f.disable)(CULL_FACE);
            (f.disable)(RASTERIZER_DISCARD);
            if let (Some(pm), false) = (f.polygon_mode, self.gles) {
                pm(FRONT_AND_BACK, FILL);
            }
            (f.use_program)(program);
            (f.bind_vertex_array)(vao);
            (f.viewport)(0, 0, w as GLsizei, h as GLsizei);
            (f.enable)(BLEND);
            (f.blend_func_separate)(ONE, ONE, ONE, ONE);
            (f.blend_equation_separate)(FUNC_ADD, FUNC_ADD);
            (f.color_mask)(1, 1, 1, 1);
            (f.stencil_op_separate)(FRONT_AND_BACK, KEEP, KEEP, KEEP);
            (f.stencil_mask_separate)(FRONT_AND_BACK, 0);
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[1]);
            (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
            let bit_passes = |add: &dyn Fn(u32) -> (f32, f32)| {
                for b in 0..8u32 {
                    (f.stencil_func_separate)(FRONT_AND_BACK, EQUAL, 1 << b, 1 << b);
                    let (x, y) = add(b);
                    (f.uniform2f)(uniform, x, y);
                    (f.draw_arrays)(TRIANGLES, 0, 3);
                }
            };
            bit_passes(&|b| ((1u32 << b) as f32, (1u32 << b) as f32));

            // Read c_d back: N_d and the coverage box.
            (f.bind_framebuffer)(READ_FRAMEBUFFER, fbos[1]);
            pack_defaults(f);
            let counts = self.read_floats(f, w, h);
            let mut n = 0u64;
            let mut bbox = [u32::MAX, u32::MAX, 0, 0];
            for (i, &c) in counts.iter().enumerate() {
                if c > 0.0 {
                    n += c as u64;
                    let (x, y) = ((i as u32) % w, (i as u32) / w);
                    bbox[0] = bbox[0].min(x);
                    bbox[1] = bbox[1].min(y);
                    bbox[2] = bbox[2].max(x + 1);
                    bbox[3] = bbox[3].max(y + 1);
                }
            }
            if n == 0 {
                bbox = [0; 4];
            } else {
                // Add 2^b·T/N and 2^b where bit b of c_d is set, inside the box only.
                let share = time_ns as f64 / n as f64;
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[2]);
                (f.enable)(SCISSOR_TEST);
                (f.scissor)(
                    bbox[0] as GLint,
                    bbox[1] as GLint,
                    (bbox[2] - bbox[0]) as GLsizei,
                    (bbox[3] - bbox[1]) as GLsizei,
                );
                bit_passes(&|b| {
                    let k = f64::from(1u32 << b);
                    ((k * share) as f32, k as f32)
                });
            }
            self.draws.push(DrawCoverage {
                call,
                fragments: n,
                time_ns,
                bbox,
            });
        }
    }

    /// Reads the R32F colour buffer of the bound read framebuffer (its read buffer already
    /// chosen): GL reads `GL_RED`, GLES the always-supported `GL_RGBA`/`GL_FLOAT` pair.
    unsafe fn read_floats(&self, f: &ThermalFns, w: u32, h: u32) -> Vec<f32> {
        let n = w as usize * h as usize;
        let (format, channels) = if self.gles { (RGBA, 4) } else { (RED, 1) };
        let mut v = vec![0f32; n * channels];
        // SAFETY: our caller's promise (context current, a complete read framebuffer of at
        // least `w`×`h` bound, pack state at its defaults); `v` holds `w`×`h`×`channels`
        // floats, exactly what the read writes.
        unsafe {
            (f.read_pixels)(
                0,
                0,
                w as GLsizei,
                h as GLsizei,
                format,
                FLOAT,
                v.as_mut_ptr().cast(),
            )
        };
        if channels == 1 {
            v
        } else {
            v.chunks_exact(channels).map(|c| c[0]).collect()
        }
    }

    /// (Re)creates the targets at `w`×`h`, with our program built once. Leaves framebuffer
    /// and renderbuffer bindings changed (the caller restores them).
    ///
    /// # Safety
    /// This painter's context must be current, and `f` its real functions.
    unsafe fn create_targets(&mut self, f: &ThermalFns, w: u32, h: u32) -> Result<(), String> {
        // SAFETY: our caller's promise; every name bound is ours, just generated.
        unsafe {
            self.release(f);
            let (program, uniform, vao) = match self.program {
                Some(p) => p,
                None => {
                    let p = self.build_program(f)?;
                    self.program = Some(p);
                    p
                }
            };
            let mut fbos = [0; 3];
            let mut rbs = [0; 5];
            (f.gen_framebuffers)(3, fbos.as_mut_ptr());
            (f.gen_renderbuffers)(5, rbs.as_mut_ptr());
            for (rb, format) in rbs.iter().zip([STENCIL_INDEX8, RGBA8, R32F, R32F, R32F]) {
                (f.bind_renderbuffer)(RENDERBUFFER, *rb);
                (f.renderbuffer_storage)(RENDERBUFFER, format, w as GLsizei, h as GLsizei);
            }
            let attach = |fbo: GLuint, list: &[(GLenum, GLuint)]| {
                (f.bind_framebuffer)(FRAMEBUFFER, fbo);
                for &(at, rb) in list {
                    (f.framebuffer_renderbuffer)(FRAMEBUFFER, at, RENDERBUFFER, rb);
                }
            };
            attach(
                fbos[0],
                &[(STENCIL_ATTACHMENT, rbs[0]), (COLOR_ATTACHMENT0, rbs[1])],
            );
            attach(
                fbos[1],
                &[(STENCIL_ATTACHMENT, rbs[0]), (COLOR_ATTACHMENT0, rbs[2])],
            );
            (f.read_buffer)(COLOR_ATTACHMENT0);
            attach(
                fbos[2],
                &[
                    (STENCIL_ATTACHMENT, rbs[0]),
                    (COLOR_ATTACHMENT0, rbs[3]),
                    (COLOR_ATTACHMENT1, rbs[4]),
                ],
            );
            (f.draw_buffers)(2, [COLOR_ATTACHMENT0, COLOR_ATTACHMENT1].as_ptr());
            let mut status = Ok(());
            for (name, fbo) in ["count", "scratch", "accum"].into_iter().zip(fbos) {
                (f.bind_framebuffer)(FRAMEBUFFER, fbo);
                let s = (f.check_framebuffer_status)(FRAMEBUFFER);
                if s != FRAMEBUFFER_COMPLETE && status.is_ok() {
                    status = Err(format!(
                        "the painter's {name} framebuffer ({w}x{h}) is incomplete: \
                         glCheckFramebufferStatus = 0x{s:04X}"
                    ));
                }
            }
            self.targets = Some(Targets {
                width: w,
                height: h,
                program,
                uniform,
                vao,
                fbos,
                rbs,
            });
            if status.is_ok() {
                // Start the accumulation at zero.
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[2]);
                (f.disable)(SCISSOR_TEST);
                (f.color_mask)(1, 1, 1, 1);
                (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
                (f.clear_bufferfv)(COLOR, 1, [0.0f32; 4].as_ptr());
            }
            let e = drain_errors(f);
            if e != NO_ERROR && status.is_ok() {
                status = Err(format!(
                    "GL error 0x{e:04X} creating the painter's {w}x{h} targets"
                ));
            }
            status
        }
    }

    /// Builds our program (full-screen triangle, `u_add` written to both outputs) and our
    /// empty vertex array.
    ///
    /// # Safety
    /// This painter's context must be current, and `f` its real functions.
    unsafe fn build_program(&self, f: &ThermalFns) -> Result<(GLuint, GLint, GLuint), String> {
        let header = if self.gles {
            "#version 300 es\nprecision highp float;\n"
        } else {
            "#version 330 core\n"
        };
        // SAFETY: our caller's promise; `src` outlives the glShaderSource call that copies it,
        // and the uniform name is NUL-terminated.
        unsafe {
            let program = (f.create_program)();
            for (stage, body) in [(VERTEX_SHADER, VS), (FRAGMENT_SHADER, FS)] {
                let src = std::ffi::CString::new(format!("{header}{body}")).expect("no NUL");
                let sh = (f.create_shader)(stage);
                (f.shader_source)(sh, 1, &src.as_ptr(), std::ptr::null());
                (f.compile_shader)(sh);
                let mut ok = 0;
                (f.get_shaderiv)(sh, COMPILE_STATUS, &mut ok);
                (f.attach_shader)(program, sh);
                (f.delete_shader)(sh);
                if ok == 0 {
                    return Err("the painter's shader does not compile in this context".into());
                }
            }
            (f.link_program)(program);
            let mut ok = 0;
            (f.get_programiv)(program, LINK_STATUS, &mut ok);
            if ok == 0 {
                return Err("the painter's program does not link in this context".into());
            }
            let uniform = (f.get_uniform_location)(program, c"u_add".as_ptr());
            let mut vao = 0;
            (f.gen_vertex_arrays)(1, &mut vao);
            Ok((program, uniform, vao))
        }
    }

    /// Deletes the targets (the program and VAO go with the context).
    unsafe fn release(&mut self, f: &ThermalFns) {
        if let Some(t) = self.targets.take() {
            // SAFETY: our caller's promise (context current); the names are our targets'.
            unsafe {
                (f.delete_framebuffers)(3, t.fbos.as_ptr());
                (f.delete_renderbuffers)(5, t.rbs.as_ptr());
            }
        }
    }

    /// Ends the frame: reads the colour buffer (the default framebuffer's draw buffer) and
    /// both maps, clears the accumulation for the next frame and returns the map, or why
    /// there is none. Call before the swap, with the frame's context current.
    ///
    /// # Safety
    /// As [`Painter::paint`].
    pub unsafe fn finish(
        &mut self,
        f: &ThermalFns,
        frame: u64,
        context: u64,
    ) -> Result<HeatMap, String> {
        let draws = std::mem::take(&mut self.draws);
        let failure = self.failure.take();
        let (offscreen, other) = (self.skipped_offscreen, self.skipped_other);
        self.skipped_offscreen = 0;
        self.skipped_other = 0;
        if let Some(why) = &self.unsupported {
            return Err(why.clone());
        }
        let Some([w, h]) = self.size else {
            return Err(if draws.is_empty() {
                "the frame has no draw and the surface size is unknown".into()
            } else {
                format!(
                    "no draw reached the default framebuffer ({offscreen} offscreen, {other} \
                     skipped for the program's queries, transform feedback or a program \
                     flagged for deletion) and the surface size is unknown"
                )
            });
        };
        // SAFETY: our caller's promise: this painter's context is current and `f` its real
        // functions.
        let (result, ours) = unsafe {
            let errors = ErrorScope::enter(f);
            let result = self.finish_inner(f, w, h, frame, context, draws);
            (result, errors.leave())
        };
        if let Some(why) = failure {
            return Err(why);
        }
        if ours != NO_ERROR {
            return Err(format!(
                "GL error 0x{ours:04X} reading the maps back at the frame's end"
            ));
        }
        result
    }

    unsafe fn finish_inner(
        &mut self,
        f: &ThermalFns,
        w: u32,
        h: u32,
        frame: u64,
        context: u64,
        draws: Vec<DrawCoverage>,
    ) -> Result<HeatMap, String> {
        let n = w as usize * h as usize;
        // SAFETY: `finish`'s caller's promise: this painter's context is current and `f` its
        // real functions; `colour` holds the `w`×`h` RGBA bytes read; `saved` restores every
        // binding and state changed here.
        unsafe {
            let saved = self.save(f);
            pack_defaults(f);
            // The frame's colour, from the default framebuffer's draw buffer.
            (f.bind_framebuffer)(DRAW_FRAMEBUFFER, 0);
            (f.bind_framebuffer)(READ_FRAMEBUFFER, 0);
            let draw_buffer = f.integer(DRAW_BUFFER0) as GLenum;
            let read_buffer = f.integer(READ_BUFFER) as GLenum;
            let source = if draw_buffer == FRONT || draw_buffer == BACK {
                draw_buffer
            } else {
                BACK
            };
            (f.read_buffer)(source);
            let mut colour = vec![0u8; 4 * n];
            (f.read_pixels)(
                0,
                0,
                w as GLsizei,
                h as GLsizei,
                RGBA,
                UNSIGNED_BYTE,
                colour.as_mut_ptr().cast(),
            );
            (f.read_buffer)(read_buffer);
            if drain_errors(f) != NO_ERROR {
                colour.clear();
            }
            let sized = self
                .targets
                .as_ref()
                .is_some_and(|t| (t.width, t.height) == (w, h));
            let (heat, overdraw) = if sized {
                let fbos = self.targets.as_ref().expect("targets").fbos;
                (f.bind_framebuffer)(READ_FRAMEBUFFER, fbos[2]);
                (f.read_buffer)(COLOR_ATTACHMENT0);
                let heat = self.read_floats(f, w, h);
                (f.read_buffer)(COLOR_ATTACHMENT1);
                let overdraw: Vec<u32> = self
                    .read_floats(f, w, h)
                    .into_iter()
                    .map(|v| v.round() as u32)
                    .collect();
                (f.bind_framebuffer)(DRAW_FRAMEBUFFER, fbos[2]);
                (f.disable)(SCISSOR_TEST);
                (f.color_mask)(1, 1, 1, 1);
                (f.clear_bufferfv)(COLOR, 0, [0.0f32; 4].as_ptr());
                (f.clear_bufferfv)(COLOR, 1, [0.0f32; 4].as_ptr());
                (heat, overdraw)
            } else {
                (vec![0.0; n], vec![0; n])
            };
            drop(saved);
            Ok(HeatMap {
                frame,
                context,
                width: w,
                height: h,
                heat,
                overdraw,
                colour,
                draws,
            })
        }
    }
}
