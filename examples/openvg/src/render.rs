//! The GLES 3 side: one shader program, one streamed vertex/index buffer pair and the
//! textures of ramps and images, per EGL context, created on first use.
//!
//! Each draw sets all the GL state it relies on (program, vertex array, buffers, blend,
//! scissor, viewport, uniforms, textures), so a program may use GL between VG calls; what
//! the library leaves bound afterwards is whatever its last draw set.

use std::ffi::CStr;
use std::ptr;

use crate::consts::*;
use crate::gl::*;
use crate::matrix::Mat3;

const VS: &str = r"#version 300 es
precision highp float;
layout(location = 0) in vec2 a_pos;
uniform mat3 u_m;
uniform vec2 u_size;
out vec2 v_user;
void main() {
    v_user = a_pos;
    vec3 s = u_m * vec3(a_pos, 1.0);
    // Surface pixels (origin bottom-left) to clip space, keeping w for a projective
    // image matrix so that interpolation stays perspective-correct.
    gl_Position = vec4(s.x / u_size.x * 2.0 - s.z, s.y / u_size.y * 2.0 - s.z, 0.0, s.z);
}
";

/// Paint kinds the fragment shader knows (`u_kind`).
const KIND_COLOR: i32 = 0;
const KIND_LINEAR: i32 = 1;
const KIND_RADIAL: i32 = 2;
const KIND_PATTERN: i32 = 3;

// The final `step(0.0, gl_FragCoord.x)` is always 1: reading gl_FragCoord keeps llvmpipe
// off its 8-bit "linear" fast path, whose rounding differs and which it takes or not
// depending on flushes, so a profiler's added glFinish would change the picture.
const FS: &str = r"#version 300 es
precision highp float;
uniform int u_kind;
uniform vec4 u_color;
uniform mat3 u_paint_inv;
uniform vec4 u_grad;
uniform float u_radius;
uniform int u_spread;
uniform sampler2D u_ramp;
uniform sampler2D u_image;
uniform vec2 u_image_size;
uniform int u_tiling;
uniform vec4 u_tile_color;
uniform int u_masking;
uniform int u_to_mask;
uniform sampler2D u_mask;
uniform int u_image_mode;
uniform sampler2D u_draw_image;
uniform vec2 u_draw_size;
in vec2 v_user;
out vec4 o_color;
float spread(float t) {
    if (u_spread == 1) return fract(t);
    if (u_spread == 2) { float r = mod(t, 2.0); return r > 1.0 ? 2.0 - r : r; }
    return clamp(t, 0.0, 1.0);
}
vec4 ramp(float t) {
    return texture(u_ramp, vec2((spread(t) * 255.0 + 0.5) / 256.0, 0.5));
}
void main() {
    vec4 c = u_color;
    if (u_image_mode != 1 && u_kind != 0) {
        vec2 p = (u_paint_inv * vec3(v_user, 1.0)).xy;
        if (u_kind == 1) {
            vec2 d = u_grad.zw - u_grad.xy;
            float dd = dot(d, d);
            c = ramp(dd > 0.0 ? dot(p - u_grad.xy, d) / dd : 1.0);
        } else if (u_kind == 2) {
            vec2 f = u_grad.zw - u_grad.xy;
            vec2 dxy = p - u_grad.zw;
            float r2 = u_radius * u_radius;
            float den = r2 - dot(f, f);
            float cr = dxy.x * f.y - dxy.y * f.x;
            float t = (dot(dxy, f) + sqrt(max(r2 * dot(dxy, dxy) - cr * cr, 0.0))) / den;
            c = ramp(den > 0.0 ? t : 1.0);
        } else {
            vec2 uv = p / u_image_size;
            bool outside = any(lessThan(uv, vec2(0.0))) || any(greaterThanEqual(uv, vec2(1.0)));
            if (u_tiling == 0 && outside) {
                c = u_tile_color;
            } else {
                if (u_tiling == 1) uv = clamp(uv, vec2(0.0), vec2(1.0));
                else if (u_tiling == 2) uv = fract(uv);
                else if (u_tiling == 3) uv = 1.0 - abs(mod(uv, 2.0) - 1.0);
                c = texture(u_image, uv);
            }
        }
    }
    // A drawn image (vgDrawImage, image glyphs, pixel copies): alone, times the paint
    // (VG_DRAW_IMAGE_MULTIPLY), or as the paint's alpha (VG_DRAW_IMAGE_STENCIL).
    if (u_image_mode != 0) {
        vec4 img = texture(u_draw_image, v_user / u_draw_size);
        if (u_image_mode == 1) c = img;
        else if (u_image_mode == 2) c = img * c;
        else c = vec4(c.rgb, c.a * img.a);
    }
    if (u_masking == 1) c.a *= texelFetch(u_mask, ivec2(gl_FragCoord.xy), 0).r;
    // The surface holds premultiplied colour (the blend functions below assume it); a
    // mask receives the coverage alone.
    c = u_to_mask == 1 ? vec4(c.a) : vec4(c.rgb * c.a, c.a);
    o_color = c * step(0.0, gl_FragCoord.x);
}
";

/// An image drawn as a textured quad: the draw's vertices are in image pixels.
#[derive(Clone, Copy, Debug)]
pub struct ImageDraw {
    /// The image texture.
    pub texture: GLuint,
    /// Image size in pixels.
    pub size: [f32; 2],
    /// 1: the image alone (`VG_DRAW_IMAGE_NORMAL`), 2: times the paint (`MULTIPLY`), 3: as
    /// the paint's alpha (`STENCIL`, by the image's alpha only).
    pub mode: i32,
}

/// How a draw is coloured.
#[derive(Clone, Copy, Debug)]
pub enum Fill {
    /// One non-premultiplied RGBA colour.
    Color([f32; 4]),
    /// A linear (`radius` None) or radial gradient: `grad` is (x0, y0, x1, y1) or
    /// (cx, cy, fx, fy); `inverse` maps user to paint space.
    Gradient {
        /// User → paint space.
        inverse: Mat3,
        /// The gradient points.
        grad: [f32; 4],
        /// The radial gradient's radius; `None` for a linear one.
        radius: Option<f32>,
        /// 0 pad, 1 repeat, 2 reflect.
        spread: i32,
        /// The 256×1 ramp texture.
        ramp: u32,
    },
    /// An image pattern paint.
    Pattern {
        /// User → paint space.
        inverse: Mat3,
        /// The image texture.
        texture: u32,
        /// Image size.
        size: [f32; 2],
        /// 0 fill, 1 pad, 2 repeat, 3 reflect.
        tiling: i32,
        /// `VG_TILE_FILL_COLOR`.
        tile_color: [f32; 4],
    },
}

#[derive(Debug, Default)]
struct Uniforms {
    m: GLint,
    size: GLint,
    kind: GLint,
    color: GLint,
    paint_inv: GLint,
    grad: GLint,
    radius: GLint,
    spread: GLint,
    ramp: GLint,
    image: GLint,
    image_size: GLint,
    tiling: GLint,
    tile_color: GLint,
    masking: GLint,
    to_mask: GLint,
    mask: GLint,
    image_mode: GLint,
    draw_image: GLint,
    draw_size: GLint,
}

/// The GL objects of one context.
#[derive(Debug, Default)]
pub struct Renderer {
    program: GLuint,
    vao: GLuint,
    vbo: GLuint,
    ebo: GLuint,
    u: Uniforms,
    /// Set-up failed once (reported on stderr once); draws do nothing after that.
    failed: bool,
    /// The values last given to `u_masking` and `u_to_mask` (the program is ours, so they
    /// are set only when they change).
    masking_set: i32,
    /// The value last given to `u_image_mode`.
    image_mode_set: i32,
    /// The RGB blend equation last set (0: GL's initial `GL_FUNC_ADD`).
    equation_set: GLenum,
    to_mask_set: i32,
    /// The drawing surface's alpha mask, created by the first mask operation.
    pub mask: Option<MaskBuffer>,
    /// Scratch coverage for `vgRenderToMask(…, VG_INTERSECT_MASK)`.
    scratch: Option<MaskBuffer>,
}

/// A surface-sized RGBA8 texture with a framebuffer drawing into it; mask values are in
/// its red channel.
#[derive(Clone, Copy, Debug)]
pub struct MaskBuffer {
    /// The texture.
    pub texture: GLuint,
    /// The framebuffer object with the texture as colour attachment 0.
    pub framebuffer: GLuint,
    /// Width in pixels.
    pub width: i32,
    /// Height in pixels.
    pub height: i32,
}

/// Where a draw goes and how it combines with what is there.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// The drawing surface, blended by `blend` (`VG_BLEND_*`), its alpha multiplied by
    /// the mask texture `mask` when not 0.
    Surface {
        /// `VG_BLEND_*`.
        blend: VGenum,
        /// The mask texture, 0 for none.
        mask: GLuint,
    },
    /// A mask buffer: the fragment's alpha, combined with the mask by `op`
    /// (`VG_SET_MASK`, `VG_UNION_MASK`, `VG_INTERSECT_MASK`, `VG_SUBTRACT_MASK`).
    Mask {
        /// The mask buffer's framebuffer.
        framebuffer: GLuint,
        /// The operation.
        op: VGenum,
    },
}

/// The current EGL draw surface's size in pixels, or `None` without one.
pub fn surface_size() -> Option<(i32, i32)> {
    // SAFETY: EGL queries on the calling thread's current display and surface, with
    // out-pointers to locals.
    unsafe {
        let dpy = eglGetCurrentDisplay();
        let surface = eglGetCurrentSurface(EGL_DRAW);
        if dpy.is_null() || surface.is_null() {
            return None;
        }
        let (mut w, mut h) = (0, 0);
        if eglQuerySurface(dpy, surface, EGL_WIDTH, &mut w) == 0
            || eglQuerySurface(dpy, surface, EGL_HEIGHT, &mut h) == 0
        {
            return None;
        }
        Some((w, h))
    }
}

/// Splits the union of `rects` (x, y, w, h) into disjoint rectangles covering the same
/// pixels, so drawing once per rectangle with the GL scissor blends each pixel once.
pub fn disjoint_rects(rects: &[[i32; 4]]) -> Vec<[i32; 4]> {
    let rects: Vec<[i32; 4]> = rects
        .iter()
        .copied()
        .filter(|r| r[2] > 0 && r[3] > 0)
        .collect();
    let mut xs: Vec<i64> = rects
        .iter()
        .flat_map(|r| [r[0] as i64, r[0] as i64 + r[2] as i64])
        .collect();
    let mut ys: Vec<i64> = rects
        .iter()
        .flat_map(|r| [r[1] as i64, r[1] as i64 + r[3] as i64])
        .collect();
    xs.sort_unstable();
    xs.dedup();
    ys.sort_unstable();
    ys.dedup();
    let covered = |x0: i64, y0: i64| {
        rects.iter().any(|r| {
            let (rx, ry) = (r[0] as i64, r[1] as i64);
            x0 >= rx && x0 < rx + r[2] as i64 && y0 >= ry && y0 < ry + r[3] as i64
        })
    };
    let mut out = Vec::new();
    for yw in ys.windows(2) {
        let mut run: Option<i64> = None;
        for (i, xw) in xs.windows(2).enumerate() {
            let on = covered(xw[0], yw[0]);
            match (on, run) {
                (true, None) => run = Some(xw[0]),
                (false, Some(x0)) => {
                    out.push(rect(x0, yw[0], xw[0], yw[1]));
                    run = None;
                }
                _ => {}
            }
            if i == xs.len() - 2 {
                if let Some(x0) = run.take() {
                    out.push(rect(x0, yw[0], xw[1], yw[1]));
                }
            }
        }
    }
    out
}

fn rect(x0: i64, y0: i64, x1: i64, y1: i64) -> [i32; 4] {
    let c = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    [c(x0), c(y0), c(x1 - x0), c(y1 - y0)]
}

/// Intersection of two (x, y, w, h) rectangles, `None` when empty.
pub fn intersect(a: [i32; 4], b: [i32; 4]) -> Option<[i32; 4]> {
    let x0 = a[0].max(b[0]) as i64;
    let y0 = a[1].max(b[1]) as i64;
    let x1 = (a[0] as i64 + a[2] as i64).min(b[0] as i64 + b[2] as i64);
    let y1 = (a[1] as i64 + a[3] as i64).min(b[1] as i64 + b[3] as i64);
    (x1 > x0 && y1 > y0).then(|| rect(x0, y0, x1, y1))
}

/// The 256 RGBA8 texels of a colour ramp from VG stops (offset, r, g, b, a)×n: stops out
/// of [0, 1] or out of order are ignored; without stops the ramp runs black to white.
pub fn ramp_texels(stops: &[f32]) -> Vec<u8> {
    let mut valid: Vec<[f32; 5]> = Vec::new();
    for s in stops.chunks_exact(5) {
        let o = s[0];
        if !(0.0..=1.0).contains(&o) || valid.last().is_some_and(|l| o < l[0]) {
            continue;
        }
        let c = |v: f32| v.clamp(0.0, 1.0);
        valid.push([o, c(s[1]), c(s[2]), c(s[3]), c(s[4])]);
    }
    if valid.is_empty() {
        valid = vec![[0.0, 0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]];
    }
    let mut out = Vec::with_capacity(256 * 4);
    for i in 0..256 {
        let t = i as f32 / 255.0;
        let color = match valid.iter().position(|s| s[0] >= t) {
            None => valid[valid.len() - 1],
            Some(0) => valid[0],
            Some(k) => {
                let (a, b) = (valid[k - 1], valid[k]);
                let span = b[0] - a[0];
                let f = if span > 0.0 { (t - a[0]) / span } else { 1.0 };
                let mut c = a;
                for j in 1..5 {
                    c[j] = a[j] + (b[j] - a[j]) * f;
                }
                c
            }
        };
        out.extend(color[1..].iter().map(|v| (v * 255.0).round() as u8));
    }
    out
}

impl Renderer {
    /// Whether the current GL context holds this renderer's program (with its uniform
    /// layout). False means the EGL context this state was kept for was destroyed and a
    /// new one got its address. One `glIsProgram` and one `glGetUniformLocation`.
    pub fn belongs_to_current(&self) -> bool {
        if self.program == 0 {
            return true;
        }
        // SAFETY: queries on the current context with a NUL-terminated name.
        unsafe {
            glIsProgram(self.program) != 0
                && glGetUniformLocation(self.program, c"u_paint_inv".as_ptr()) == self.u.paint_inv
        }
    }

    /// Creates the program and buffers on first use; false when that failed.
    pub fn ready(&mut self) -> bool {
        if self.program != 0 {
            return true;
        }
        if self.failed {
            return false;
        }
        // SAFETY: GL calls on the current context (the caller holds one current);
        // sources and out-pointers are locals that outlive each call.
        match unsafe { self.create() } {
            Ok(()) => true,
            Err(e) => {
                self.failed = true;
                eprintln!("libOpenVG: {e}");
                false
            }
        }
    }

    /// # Safety
    ///
    /// A GLES 3 context must be current.
    unsafe fn create(&mut self) -> Result<(), String> {
        // SAFETY: as the function's contract says, a context is current.
        unsafe {
            let vs = compile(GL_VERTEX_SHADER, VS)?;
            let fs = compile(GL_FRAGMENT_SHADER, FS)?;
            let p = glCreateProgram();
            glAttachShader(p, vs);
            glAttachShader(p, fs);
            glLinkProgram(p);
            glDeleteShader(vs);
            glDeleteShader(fs);
            let mut ok = 0;
            glGetProgramiv(p, GL_LINK_STATUS, &mut ok);
            if ok == 0 {
                return Err("the GLES program did not link".into());
            }
            let loc = |name: &CStr| glGetUniformLocation(p, name.as_ptr());
            self.u = Uniforms {
                m: loc(c"u_m"),
                size: loc(c"u_size"),
                kind: loc(c"u_kind"),
                color: loc(c"u_color"),
                paint_inv: loc(c"u_paint_inv"),
                grad: loc(c"u_grad"),
                radius: loc(c"u_radius"),
                spread: loc(c"u_spread"),
                ramp: loc(c"u_ramp"),
                image: loc(c"u_image"),
                image_size: loc(c"u_image_size"),
                tiling: loc(c"u_tiling"),
                tile_color: loc(c"u_tile_color"),
                masking: loc(c"u_masking"),
                to_mask: loc(c"u_to_mask"),
                mask: loc(c"u_mask"),
                image_mode: loc(c"u_image_mode"),
                draw_image: loc(c"u_draw_image"),
                draw_size: loc(c"u_draw_size"),
            };
            glUseProgram(p);
            glUniform1i(self.u.image, 0);
            glUniform1i(self.u.ramp, 1);
            glUniform1i(self.u.mask, 2);
            glUniform1i(self.u.draw_image, 3);
            glGenVertexArrays(1, &mut self.vao);
            glBindVertexArray(self.vao);
            glGenBuffers(1, &mut self.vbo);
            glGenBuffers(1, &mut self.ebo);
            glBindBuffer(GL_ARRAY_BUFFER, self.vbo);
            glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, self.ebo);
            glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 8, ptr::null());
            glEnableVertexAttribArray(0);
            self.program = p;
        }
        Ok(())
    }

    /// Draws `indices` triangles of `vertices` (user space) through `m` (user → surface)
    /// with `fill` (the paint; `None` for an image drawn alone) and `image` into `target`,
    /// once per disjoint scissor rectangle (`scissor`: `None` when scissoring is off).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &mut self,
        vertices: &[[f32; 2]],
        indices: &[u32],
        m: &Mat3,
        fill: Option<Fill>,
        image: Option<ImageDraw>,
        target: Target,
        scissor: Option<&[[i32; 4]]>,
    ) {
        if indices.is_empty() || !self.ready() {
            return;
        }
        let Some((w, h)) = surface_size() else {
            return;
        };
        if scissor.is_some_and(|s| s.is_empty()) {
            return;
        }
        let (framebuffer, masking, to_mask) = match target {
            Target::Surface { mask, .. } => (0, i32::from(mask != 0), 0),
            Target::Mask { framebuffer, .. } => (framebuffer, 0, 1),
        };
        let u = &self.u;
        // SAFETY: GL calls on the current context with objects `ready` created in it;
        // glBufferData reads exactly the byte size of the slices it is given, which live
        // across the call; matrices are 9 floats.
        unsafe {
            glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
            glViewport(0, 0, w, h);
            glDisable(GL_DEPTH_TEST);
            glDisable(GL_STENCIL_TEST);
            glDisable(GL_CULL_FACE);
            glUseProgram(self.program);
            glBindVertexArray(self.vao);
            glBindBuffer(GL_ARRAY_BUFFER, self.vbo);
            glBufferData(
                GL_ARRAY_BUFFER,
                std::mem::size_of_val(vertices) as GLsizeiptr,
                vertices.as_ptr().cast(),
                GL_STREAM_DRAW,
            );
            glBufferData(
                GL_ELEMENT_ARRAY_BUFFER,
                std::mem::size_of_val(indices) as GLsizeiptr,
                indices.as_ptr().cast(),
                GL_STREAM_DRAW,
            );
            glUniformMatrix3fv(u.m, 1, GL_FALSE, m.0.as_ptr());
            glUniform2f(u.size, w as f32, h as f32);
            let image_mode = image.map_or(0, |i| i.mode);
            if image_mode != self.image_mode_set {
                glUniform1i(u.image_mode, image_mode);
                self.image_mode_set = image_mode;
            }
            if let Some(img) = image {
                glUniform2f(u.draw_size, img.size[0], img.size[1]);
                glActiveTexture(GL_TEXTURE3);
                glBindTexture(GL_TEXTURE_2D, img.texture);
                glActiveTexture(GL_TEXTURE0);
            }
            match fill {
                None => {}
                Some(Fill::Color(c)) => {
                    glUniform1i(u.kind, KIND_COLOR);
                    glUniform4f(u.color, c[0], c[1], c[2], c[3]);
                }
                Some(Fill::Gradient {
                    inverse,
                    grad,
                    radius,
                    spread,
                    ramp,
                }) => {
                    glUniform1i(
                        u.kind,
                        if radius.is_some() {
                            KIND_RADIAL
                        } else {
                            KIND_LINEAR
                        },
                    );
                    glUniformMatrix3fv(u.paint_inv, 1, GL_FALSE, inverse.0.as_ptr());
                    glUniform4f(u.grad, grad[0], grad[1], grad[2], grad[3]);
                    glUniform1f(u.radius, radius.unwrap_or(0.0));
                    glUniform1i(u.spread, spread);
                    glActiveTexture(GL_TEXTURE1);
                    glBindTexture(GL_TEXTURE_2D, ramp);
                    glActiveTexture(GL_TEXTURE0);
                }
                Some(Fill::Pattern {
                    inverse,
                    texture,
                    size,
                    tiling,
                    tile_color: t,
                }) => {
                    glUniform1i(u.kind, KIND_PATTERN);
                    glUniformMatrix3fv(u.paint_inv, 1, GL_FALSE, inverse.0.as_ptr());
                    glUniform2f(u.image_size, size[0], size[1]);
                    glUniform1i(u.tiling, tiling);
                    glUniform4f(u.tile_color, t[0], t[1], t[2], t[3]);
                    glActiveTexture(GL_TEXTURE0);
                    glBindTexture(GL_TEXTURE_2D, texture);
                }
            }
            if masking != self.masking_set {
                glUniform1i(u.masking, masking);
                self.masking_set = masking;
            }
            if to_mask != self.to_mask_set {
                glUniform1i(u.to_mask, to_mask);
                self.to_mask_set = to_mask;
            }
            match target {
                Target::Surface { mask, .. } if mask != 0 => {
                    glActiveTexture(GL_TEXTURE2);
                    glBindTexture(GL_TEXTURE_2D, mask);
                    glActiveTexture(GL_TEXTURE0);
                }
                // Drawing into the mask: its texture must not stay bound to the mask
                // sampler (a feedback loop, even if the shader does not read it then).
                Target::Mask { .. } => {
                    glActiveTexture(GL_TEXTURE2);
                    glBindTexture(GL_TEXTURE_2D, 0);
                    glActiveTexture(GL_TEXTURE0);
                }
                _ => {}
            }
            let blend = match target {
                Target::Surface { blend, .. } => blend,
                Target::Mask { op, .. } => op,
            };
            match blend {
                VG_BLEND_SRC | VG_SET_MASK => glDisable(GL_BLEND),
                VG_UNION_MASK => {
                    glEnable(GL_BLEND);
                    glBlendFuncSeparate(
                        GL_ONE,
                        GL_ONE_MINUS_SRC_COLOR,
                        GL_ONE,
                        GL_ONE_MINUS_SRC_COLOR,
                    );
                }
                VG_INTERSECT_MASK => {
                    glEnable(GL_BLEND);
                    glBlendFuncSeparate(GL_ZERO, GL_SRC_COLOR, GL_ZERO, GL_SRC_COLOR);
                }
                VG_SUBTRACT_MASK => {
                    glEnable(GL_BLEND);
                    glBlendFuncSeparate(
                        GL_ZERO,
                        GL_ONE_MINUS_SRC_COLOR,
                        GL_ZERO,
                        GL_ONE_MINUS_SRC_COLOR,
                    );
                }
                _ => {
                    // Porter-Duff and VG's extra modes on premultiplied colour. MULTIPLY
                    // is exact on an opaque destination, DARKEN and LIGHTEN on opaque
                    // source and destination (GL's MIN/MAX ignore the factors).
                    let (sc, dc) = match blend {
                        VG_BLEND_DST_OVER => (GL_ONE_MINUS_DST_ALPHA, GL_ONE),
                        VG_BLEND_SRC_IN => (GL_DST_ALPHA, GL_ZERO),
                        VG_BLEND_DST_IN => (GL_ZERO, GL_SRC_ALPHA),
                        VG_BLEND_MULTIPLY => (GL_DST_COLOR, GL_ONE_MINUS_SRC_ALPHA),
                        VG_BLEND_SCREEN => (GL_ONE, GL_ONE_MINUS_SRC_COLOR),
                        VG_BLEND_ADDITIVE => (GL_ONE, GL_ONE),
                        _ => (GL_ONE, GL_ONE_MINUS_SRC_ALPHA),
                    };
                    let (sa, da) = match blend {
                        VG_BLEND_DST_OVER => (GL_ONE_MINUS_DST_ALPHA, GL_ONE),
                        VG_BLEND_SRC_IN => (GL_DST_ALPHA, GL_ZERO),
                        VG_BLEND_DST_IN => (GL_ZERO, GL_SRC_ALPHA),
                        VG_BLEND_ADDITIVE => (GL_ONE, GL_ONE),
                        _ => (GL_ONE, GL_ONE_MINUS_SRC_ALPHA),
                    };
                    glEnable(GL_BLEND);
                    glBlendFuncSeparate(sc, dc, sa, da);
                }
            }
            let equation = match blend {
                VG_BLEND_DARKEN => GL_MIN,
                VG_BLEND_LIGHTEN => GL_MAX,
                _ => GL_FUNC_ADD,
            };
            let current = if self.equation_set == 0 {
                GL_FUNC_ADD
            } else {
                self.equation_set
            };
            if equation != current {
                glBlendEquationSeparate(equation, GL_FUNC_ADD);
                self.equation_set = equation;
            }
            let count = indices.len() as GLsizei;
            match scissor {
                None => {
                    glDisable(GL_SCISSOR_TEST);
                    glDrawElements(GL_TRIANGLES, count, GL_UNSIGNED_INT, ptr::null());
                }
                Some(rects) => {
                    glEnable(GL_SCISSOR_TEST);
                    for r in rects {
                        glScissor(r[0], r[1], r[2], r[3]);
                        glDrawElements(GL_TRIANGLES, count, GL_UNSIGNED_INT, ptr::null());
                    }
                }
            }
            if framebuffer != 0 {
                // The program's own GL (and glReadPixels) expects the surface bound.
                glBindFramebuffer(GL_FRAMEBUFFER, 0);
            }
        }
    }

    /// The surface's mask buffer, created (all ones) or recreated for a new surface size.
    pub fn mask_buffer(&mut self, width: i32, height: i32) -> MaskBuffer {
        Self::buffer(&mut self.mask, width, height, 1.0)
    }

    /// The scratch coverage buffer as last drawn, if any.
    pub fn scratch_buffer_existing(&self) -> Option<MaskBuffer> {
        self.scratch
    }

    /// The scratch coverage buffer, cleared to zero.
    pub fn scratch_buffer(&mut self, width: i32, height: i32) -> MaskBuffer {
        let b = Self::buffer(&mut self.scratch, width, height, 0.0);
        Self::clear_in(b.framebuffer, [0.0; 4], &[[0, 0, width, height]]);
        b
    }

    fn buffer(slot: &mut Option<MaskBuffer>, width: i32, height: i32, fill: f32) -> MaskBuffer {
        if let Some(b) = *slot {
            if (b.width, b.height) == (width, height) {
                return b;
            }
            Self::delete_texture(b.texture);
        }
        let px = vec![(fill * 255.0) as u8; width.max(1) as usize * height.max(1) as usize * 4];
        let texture = Self::create_texture(width, height, &px, GL_NEAREST);
        let mut framebuffer = 0;
        // SAFETY: GL calls on the current context; the out-pointer is a local.
        unsafe {
            glGenFramebuffers(1, &mut framebuffer);
            glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
            glFramebufferTexture2D(
                GL_FRAMEBUFFER,
                GL_COLOR_ATTACHMENT0,
                GL_TEXTURE_2D,
                texture,
                0,
            );
            glBindFramebuffer(GL_FRAMEBUFFER, 0);
        }
        let b = MaskBuffer {
            texture,
            framebuffer,
            width,
            height,
        };
        *slot = Some(b);
        b
    }

    /// Clears each of `rects` (surface pixels, already clipped) to `color`.
    pub fn clear(&mut self, color: [f32; 4], rects: &[[i32; 4]]) {
        Self::clear_in(0, color, rects);
    }

    /// Clears `rects` of `framebuffer` (0: the surface) to `color`.
    pub fn clear_in(framebuffer: GLuint, color: [f32; 4], rects: &[[i32; 4]]) {
        if rects.is_empty() {
            return;
        }
        // SAFETY: plain GL state and clear calls on the current context.
        unsafe {
            glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
            // Premultiplied, as the surface holds it.
            let a = color[3];
            glClearColor(color[0] * a, color[1] * a, color[2] * a, a);
            glEnable(GL_SCISSOR_TEST);
            for r in rects {
                glScissor(r[0], r[1], r[2], r[3]);
                glClear(GL_COLOR_BUFFER_BIT);
            }
            if framebuffer != 0 {
                glBindFramebuffer(GL_FRAMEBUFFER, 0);
            }
        }
    }

    /// Creates a `width × height` RGBA8 texture holding `pixels` (bottom row first).
    pub fn create_texture(width: i32, height: i32, pixels: &[u8], filter: GLint) -> u32 {
        let mut t = 0;
        // SAFETY: GL calls on the current context; `pixels` holds width·height·4 bytes,
        // rows tightly packed (unpack alignment 1).
        unsafe {
            glGenTextures(1, &mut t);
            glActiveTexture(GL_TEXTURE0);
            glBindTexture(GL_TEXTURE_2D, t);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
            glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
            glTexImage2D(
                GL_TEXTURE_2D,
                0,
                GL_RGBA8,
                width,
                height,
                0,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                pixels.as_ptr().cast(),
            );
        }
        t
    }

    /// Replaces the `rect` (x, y, w, h) region of `texture` with `pixels` (w·h RGBA8).
    pub fn update_texture(texture: u32, rect: [i32; 4], pixels: &[u8]) {
        // SAFETY: GL calls on the current context; `pixels` holds w·h·4 tightly packed
        // bytes.
        unsafe {
            glActiveTexture(GL_TEXTURE0);
            glBindTexture(GL_TEXTURE_2D, texture);
            glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
            glTexSubImage2D(
                GL_TEXTURE_2D,
                0,
                rect[0],
                rect[1],
                rect[2],
                rect[3],
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                pixels.as_ptr().cast(),
            );
        }
    }

    /// Deletes a texture this library created.
    pub fn delete_texture(texture: u32) {
        if texture != 0 {
            // SAFETY: one texture name from a local.
            unsafe { glDeleteTextures(1, &texture) };
        }
    }

    /// Reads `rect` of the current draw surface as non-premultiplied RGBA8 (bottom row
    /// first): the surface holds premultiplied colour.
    pub fn read_pixels(rect: [i32; 4]) -> Vec<u8> {
        let mut px = Self::read_from(0, rect);
        for p in px.chunks_exact_mut(4) {
            let a = p[3] as u32;
            if a > 0 && a < 255 {
                for c in &mut p[..3] {
                    *c = ((*c as u32 * 255 + a / 2) / a).min(255) as u8;
                }
            }
        }
        px
    }

    /// Reads `rect` of `framebuffer` (0: the surface) as RGBA8 (bottom row first).
    pub fn read_from(framebuffer: GLuint, rect: [i32; 4]) -> Vec<u8> {
        let mut out = vec![0u8; rect[2].max(0) as usize * rect[3].max(0) as usize * 4];
        // SAFETY: `out` holds w·h·4 bytes and pack alignment is 1, so glReadPixels
        // writes within it.
        unsafe {
            glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            glReadPixels(
                rect[0],
                rect[1],
                rect[2],
                rect[3],
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                out.as_mut_ptr().cast(),
            );
            if framebuffer != 0 {
                glBindFramebuffer(GL_FRAMEBUFFER, 0);
            }
        }
        out
    }
}

/// # Safety
///
/// A GLES 3 context must be current.
unsafe fn compile(stage: GLenum, src: &str) -> Result<GLuint, String> {
    // SAFETY: as the function's contract says; the source is passed by pointer and
    // length, and the log buffer is as long as GL is told.
    unsafe {
        let s = glCreateShader(stage);
        let ptrs = [src.as_ptr().cast::<GLchar>()];
        let lens = [src.len() as GLint];
        glShaderSource(s, 1, ptrs.as_ptr(), lens.as_ptr());
        glCompileShader(s);
        let mut ok = 0;
        glGetShaderiv(s, GL_COMPILE_STATUS, &mut ok);
        if ok == 0 {
            let mut log = vec![0u8; 1024];
            let mut len = 0;
            glGetShaderInfoLog(s, log.len() as GLsizei, &mut len, log.as_mut_ptr().cast());
            glDeleteShader(s);
            let text = String::from_utf8_lossy(&log[..len.clamp(0, 1024) as usize]);
            return Err(format!(
                "shader compile failed: {}",
                text.trim().replace('\n', " ")
            ));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_rects_split_into_disjoint_ones() {
        let rects = disjoint_rects(&[[0, 0, 10, 10], [5, 5, 10, 10]]);
        let area: i32 = rects.iter().map(|r| r[2] * r[3]).sum();
        assert_eq!(area, 100 + 100 - 25);
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                assert!(intersect(*a, *b).is_none(), "{a:?} {b:?}");
            }
        }
        assert_eq!(disjoint_rects(&[[1, 2, 3, 4]]), vec![[1, 2, 3, 4]]);
        assert!(disjoint_rects(&[[1, 2, 0, 4]]).is_empty());
    }

    #[test]
    fn ramp_interpolates_between_stops() {
        let t = ramp_texels(&[0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0]);
        assert_eq!(&t[0..4], &[255, 0, 0, 255]);
        assert_eq!(&t[255 * 4..], &[0, 0, 255, 255]);
        assert_eq!(t[128 * 4], 127);
        let default = ramp_texels(&[]);
        assert_eq!(&default[0..4], &[0, 0, 0, 255]);
    }
}
