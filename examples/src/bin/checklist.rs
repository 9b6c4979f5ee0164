//! `checklist`: one small, well-behaved scene, and `--bad RULE` switches that each turn on
//! exactly one of the misbehaviours of gpuheat's performance checklist (issue 14).
//!
//! Flags: `--bad RULE` (repeatable; default none: the clean program), `--size WxH` (default
//! 384x256, at least 384x256), plus the common flags (`--frames N`, `--fps N`,
//! `--api gles|gl`, `--timing`, `--checksum`, `--keep-shaders`, `--help`).
//!
//! The clean program, its call list per frame and, for every rule, what is inserted where
//! and the exact evidence a profiler must report are in `SPEC.expected` below (printed by
//! `--help`) and in the examples' README (section `checklist`). The numbers hold for one
//! `--bad` flag at a time; flags combine, but then call indices and fragment counts are
//! not documented.

use std::f32::consts::PI;
use std::ffi::c_void;
use std::ptr;

use gpuheat_examples::args::{parse, usage, usage_error, Args, Parsed, Spec};
use gpuheat_examples::gfx::{Api, Gfx, Program, SOLID_FS};
use gpuheat_examples::gl::*;
use gpuheat_examples::run_frames;

/// The rules, by their stable ids (issue 14's checklist), in the order `--help` lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    MipmapsUnused,
    SyncCalls,
    DepthNotCleared,
    ClientArrays,
    RendererUnchecked,
    TextureModified,
    TextureUploadInFrame,
    UncompressedTextures,
    NoStripsOrIndices,
    NoMultisampling,
    RedundantState,
    EclipsedState,
    SameUpload,
    ObjectsPerFrame,
    CompileInFrame,
    FirstUseCompile,
    ReadbackRtt,
    IdenticalFrames,
    ColormaskHeavy,
    DiscardHeavy,
    BlendOpaque,
    Overdraw,
    Stall,
}

const RULES: [(Rule, &str); 23] = [
    (Rule::MipmapsUnused, "mipmaps-unused"),
    (Rule::SyncCalls, "sync-calls"),
    (Rule::DepthNotCleared, "depth-not-cleared"),
    (Rule::ClientArrays, "client-arrays"),
    (Rule::RendererUnchecked, "renderer-unchecked"),
    (Rule::TextureModified, "texture-modified"),
    (Rule::TextureUploadInFrame, "texture-upload-in-frame"),
    (Rule::UncompressedTextures, "uncompressed-textures"),
    (Rule::NoStripsOrIndices, "no-strips-or-indices"),
    (Rule::NoMultisampling, "no-multisampling"),
    (Rule::RedundantState, "redundant-state"),
    (Rule::EclipsedState, "eclipsed-state"),
    (Rule::SameUpload, "same-upload"),
    (Rule::ObjectsPerFrame, "objects-per-frame"),
    (Rule::CompileInFrame, "compile-in-frame"),
    (Rule::FirstUseCompile, "first-use-compile"),
    (Rule::ReadbackRtt, "readback-rtt"),
    (Rule::IdenticalFrames, "identical-frames"),
    (Rule::ColormaskHeavy, "colormask-heavy"),
    (Rule::DiscardHeavy, "discard-heavy"),
    (Rule::BlendOpaque, "blend-opaque"),
    (Rule::Overdraw, "overdraw"),
    (Rule::Stall, "stall"),
];

const SPEC: Spec = Spec {
    name: "checklist",
    about: "a clean scene (ETC2 mipmapped textures, indexed mesh, 4x MSAA, depth, no redundant \
            state); --bad RULE turns on one checklist misbehaviour",
    default_size: (384, 256),
    flags: &[],
    expected: include_str!("checklist_help.txt"),
};

/// Minimum surface: the fixed layout below spans 384x256 pixels.
const MIN_SIZE: (u32, u32) = (384, 256);

/// Floats per vertex: position (x, y in pixels, z = window depth) and texture coordinate.
const FLOATS: usize = 5;
/// Bytes per vertex.
const STRIDE: GLsizei = (FLOATS * 4) as GLsizei;

/// The quads' rectangles (x, y, width, height in pixels, origin bottom-left) and depths,
/// in the order of the vertex buffer: quad q is vertices 4q .. 4q + 3, a triangle strip.
const CARD: usize = 0;
const GLASS: usize = 1;
const PANEL: usize = 2;
const BADGE1: usize = 3;
const BADGE2: usize = 4;
const FULL: usize = 5;
const QUADS: [([u32; 4], f32); 5] = [
    ([32, 64, 128, 128], 0.25),  // card: t_card, ETC2 512x512, mipmapped
    ([96, 32, 128, 64], 0.1),    // glass: translucent, blended
    ([240, 64, 128, 128], 0.25), // panel (texture-upload-in-frame)
    ([176, 160, 32, 32], 0.25),  // badge 1
    ([176, 112, 32, 32], 0.25),  // badge 2 (texture-modified)
];
/// Depth of the full-surface quad (overdraw, discard-heavy, readback-rtt).
const FULL_Z: f32 = 0.05;
/// First vertex of the floor (after the six quads).
const FLOOR_FIRST: GLint = 24;
/// The floor grid: 6 x 4 cells over the whole surface, at depth 0.75.
const FLOOR_COLS: u32 = 6;
const FLOOR_ROWS: u32 = 4;
const FLOOR_Z: f32 = 0.75;
/// 6 indices (two triangles) per cell.
const FLOOR_INDICES: GLsizei = (FLOOR_COLS * FLOOR_ROWS * 6) as GLsizei;
/// The glass colour (alpha < 1: the only blended draw).
const GLASS_COLOUR: [f32; 4] = [0.2, 0.5, 0.9, 0.5];
/// The clear colour.
const CLEAR: [f32; 4] = [0.1, 0.1, 0.12, 1.0];
/// Samples of the MSAA framebuffer (llvmpipe's GL_MAX_SAMPLES is 4).
const MSAA: GLint = 4;
/// Side of the small RGBA8 textures drawn 1:1 on a badge.
const BADGE: u32 = 32;
/// Side of texture-upload-in-frame's texture, drawn 1:1 on the panel.
const UPLOAD: u32 = 128;
/// Full-surface layers of `--bad overdraw`.
const LAYERS: u32 = 8;
/// First frame that draws with `--bad first-use-compile`'s late program.
const LATE_FRAME: u64 = 5;

/// Vertex shader of every program but the uniform-less ones: pixel position and window
/// depth from the vertex, texture coordinate rotated by `u_angle` about the quad's centre.
const VS: &str = r"layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec2 a_uv;
uniform vec2 u_viewport;
uniform float u_angle;
out vec2 v_uv;
void main() {
    float c = cos(u_angle);
    float s = sin(u_angle);
    v_uv = mat2(c, s, -s, c) * (a_uv - 0.5) + 0.5;
    gl_Position = vec4(a_pos.xy / u_viewport * 2.0 - 1.0, a_pos.z * 2.0 - 1.0, 1.0);
}
";

/// Textured, opaque: writes alpha = 1.0 literally (the `step` keeps llvmpipe off its
/// "linear" path, see `gfx::SOLID_FS`).
const TEX_FS: &str = r"uniform sampler2D u_tex;
in vec2 v_uv;
out vec4 o_color;
void main() {
    o_color = vec4(texture(u_tex, v_uv).rgb * step(0.0, gl_FragCoord.x), 1.0);
}
";

/// Keeps only pixels whose x and y are both even (1/4), discards the rest.
const DISCARD_FS: &str = r"out vec4 o_color;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    if (((p.x | p.y) & 1) != 0) {
        discard;
    }
    o_color = vec4(1.0, 0.85, 0.2, 1.0);
}
";

/// Uniform-less vertex shader (the surface size is written into the source), for the
/// programs that are drawn without a set-up `glUseProgram`.
fn plain_vs(w: u32, h: u32) -> String {
    format!(
        "layout(location = 0) in vec3 a_pos;\nvoid main() {{\n    gl_Position = \
         vec4(a_pos.xy / vec2({w}.0, {h}.0) * 2.0 - 1.0, a_pos.z * 2.0 - 1.0, 1.0);\n}}\n"
    )
}

/// Opaque solid colour without uniforms.
fn plain_fs(rgb: [f32; 3]) -> String {
    format!(
        "out vec4 o_color;\nvoid main() {{\n    o_color = vec4({:?}, {:?}, {:?}, 1.0) * \
         step(0.0, gl_FragCoord.x);\n}}\n",
        rgb[0], rgb[1], rgb[2]
    )
}

/// Which rules are on.
#[derive(Clone, Debug, Default)]
struct Bad(Vec<Rule>);

impl Bad {
    fn has(&self, r: Rule) -> bool {
        self.0.contains(&r)
    }
}

/// Takes the `--bad RULE` / `--bad=RULE` pairs out of the command line and parses the rest
/// as the common flags; `--help` prints the usage (with `--bad`) and exits 0, errors print
/// one line and exit 2.
fn parse_command_line() -> (Args, Bad) {
    let mut bad = Bad::default();
    let mut rest = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let name = if a == "--bad" {
            match it.next() {
                Some(v) => v,
                None => usage_error(&SPEC, "--bad needs a value (see --help)"),
            }
        } else if let Some(v) = a.strip_prefix("--bad=") {
            v.to_string()
        } else {
            rest.push(a);
            continue;
        };
        let Some(&(rule, _)) = RULES.iter().find(|(_, n)| *n == name) else {
            let names: Vec<&str> = RULES.iter().map(|(_, n)| *n).collect();
            usage_error(
                &SPEC,
                &format!(
                    "--bad: unknown rule {name:?} (one of: {})",
                    names.join(", ")
                ),
            );
        };
        if !bad.has(rule) {
            bad.0.push(rule);
        }
    }
    match parse(&SPEC, &rest) {
        Ok(Parsed::Run(a)) => (a, bad),
        Ok(Parsed::Help) => {
            let names: Vec<&str> = RULES.iter().map(|(_, n)| *n).collect();
            let line = format!(
                "  {:<16} turn on one misbehaviour (repeatable; default: none, the clean \
                 program): {}\n  --help ",
                "--bad RULE",
                names.join(", ")
            );
            print!("{}", usage(&SPEC).replacen("  --help ", &line, 1));
            std::process::exit(0);
        }
        Err(e) => usage_error(&SPEC, &e),
    }
}

/// One ETC2 RGB8 block in differential mode with no colour difference (so it is also an
/// ETC1 block): base colour `base` (5 bits per channel), codeword table 0 for both halves,
/// `index[x * 4 + y]` the pixel index of texel (x, y) of the block (0: +2, 1: +8, 2: −2,
/// 3: −8). Stored big-endian, as the format says.
fn etc2_block(base: [u8; 3], index: &[u8; 16]) -> [u8; 8] {
    let hi: u32 = (base[0] as u32) << 27 | (base[1] as u32) << 19 | (base[2] as u32) << 11 | 1 << 1;
    let mut lo: u32 = 0;
    for (i, &v) in index.iter().enumerate() {
        lo |= ((v as u32 >> 1) & 1) << (16 + i) | (v as u32 & 1) << i;
    }
    let mut out = [0; 8];
    out[..4].copy_from_slice(&hi.to_be_bytes());
    out[4..].copy_from_slice(&lo.to_be_bytes());
    out
}

/// The texel `etc2_block(base, …)` decodes to for pixel index `v`.
fn etc2_texel(base: [u8; 3], v: u8) -> [u8; 4] {
    let modifier = [2, 8, -2, -8][v as usize];
    let c = |b: u8| (((b << 3) | (b >> 2)) as i32 + modifier).clamp(0, 255) as u8;
    [c(base[0]), c(base[1]), c(base[2]), 255]
}

/// Level `level` (side `side`) of a generated texture, as ETC2 RGB8 blocks and as the
/// RGBA8 texels they decode to: a colour gradient per 4x4 block (`tint` picks the
/// variant), with a 2x2 checker of ±8 inside each block.
fn texture_level(side: u32, level: u32, tint: u32) -> (Vec<u8>, Vec<u8>) {
    let blocks = side.div_ceil(4);
    let span = (blocks - 1).max(1);
    let mut etc = Vec::with_capacity((blocks * blocks * 8) as usize);
    let mut rgba = vec![0u8; (side * side * 4) as usize];
    let mut index = [0u8; 16];
    for (i, v) in index.iter_mut().enumerate() {
        let (x, y) = (i / 4, i % 4);
        *v = if (x / 2 + y / 2) % 2 == 0 { 1 } else { 3 };
    }
    for by in 0..blocks {
        for bx in 0..blocks {
            let base = [
                (bx * 31 / span) as u8,
                ((by * 31 / span + tint * 11) % 32) as u8,
                ((level * 7 + (bx ^ by) + tint * 5) % 32) as u8,
            ];
            etc.extend_from_slice(&etc2_block(base, &index));
            for y in 0..4 {
                for x in 0..4 {
                    let (tx, ty) = (bx * 4 + x, by * 4 + y);
                    if tx < side && ty < side {
                        let at = ((ty * side + tx) * 4) as usize;
                        let texel = etc2_texel(base, index[(x * 4 + y) as usize]);
                        rgba[at..at + 4].copy_from_slice(&texel);
                    }
                }
            }
        }
    }
    (etc, rgba)
}

/// An RGBA8 `side`×`side` pattern; `seed` shifts it (frame-dependent contents).
fn pattern(side: u32, seed: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity((side * side * 4) as usize);
    for y in 0..side {
        for x in 0..side {
            out.extend_from_slice(&[
                ((x * 255 / (side - 1) + seed) % 256) as u8,
                ((y * 255 / (side - 1) + 2 * seed) % 256) as u8,
                (((x ^ y) * 256 / side) % 256) as u8,
                255,
            ]);
        }
    }
    out
}

/// The rotation angle of frame `f`: (f mod 360) degrees.
fn angle(f: u64) -> f32 {
    (f % 360) as f32 * PI / 180.0
}

/// Appends the strip vertices of a quad.
fn push_quad(v: &mut Vec<f32>, [x, y, w, h]: [u32; 4], z: f32) {
    let (x0, y0, x1, y1) = (x as f32, y as f32, (x + w) as f32, (y + h) as f32);
    for (px, py, u, t) in [
        (x0, y0, 0.0, 0.0),
        (x1, y0, 1.0, 0.0),
        (x0, y1, 0.0, 1.0),
        (x1, y1, 1.0, 1.0),
    ] {
        v.extend_from_slice(&[px, py, z, u, t]);
    }
}

/// The floor: grid vertices (row-major from the bottom-left, (cols+1)·(rows+1) of them)
/// and the indices of its triangles (two per cell), texture coordinates 1 per 256 pixels.
fn floor_mesh(w: u32, h: u32) -> (Vec<f32>, Vec<u16>) {
    let mut v = Vec::new();
    for j in 0..=FLOOR_ROWS {
        for i in 0..=FLOOR_COLS {
            let (x, y) = ((i * w / FLOOR_COLS) as f32, (j * h / FLOOR_ROWS) as f32);
            v.extend_from_slice(&[x, y, FLOOR_Z, x / 256.0, y / 256.0]);
        }
    }
    let at = |i: u32, j: u32| (j * (FLOOR_COLS + 1) + i) as u16;
    let mut idx = Vec::new();
    for j in 0..FLOOR_ROWS {
        for i in 0..FLOOR_COLS {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1));
            idx.extend_from_slice(&[a, b, c, c, b, d]);
        }
    }
    (v, idx)
}

/// Uniform locations of the programs drawn with [`VS`].
struct VsProgram {
    program: Program,
    u_angle: GLint,
}

fn vs_program(gfx: &Gfx, fs: &str) -> Result<VsProgram, String> {
    let program = gfx.program(VS, fs)?;
    let u_viewport = program.uniform("u_viewport")?;
    // SAFETY: plain GL calls on the current context with a program it linked.
    unsafe {
        glUseProgram(program.id);
        glUniform2f(u_viewport, gfx.width as f32, gfx.height as f32);
    }
    Ok(VsProgram {
        program,
        u_angle: program.uniform("u_angle").unwrap_or(-1),
    })
}

/// Creates a texture bound to unit 0 with `min`/`mag` filters.
///
/// # Safety
/// A GL context must be current.
unsafe fn new_texture(min: GLint, mag: GLint) -> GLuint {
    let mut t = 0;
    // SAFETY: the caller's context; the out-pointer is a local.
    unsafe {
        glGenTextures(1, &mut t);
        glBindTexture(GL_TEXTURE_2D, t);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, min);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, mag);
    }
    t
}

/// Uploads a generated `side`×`side` texture to the bound texture: every mip level (down
/// to 1x1) or only level 0, as ETC2 RGB8 (`glCompressedTexImage2D`) or RGBA8
/// (`glTexImage2D`).
///
/// # Safety
/// A GL context must be current.
unsafe fn upload_generated(side: u32, tint: u32, mipmaps: bool, compressed: bool) {
    let levels = if mipmaps { side.ilog2() + 1 } else { 1 };
    for level in 0..levels {
        let s = side >> level;
        let (etc, rgba) = texture_level(s, level, tint);
        // SAFETY: the caller's context; each pointer is to a live buffer of the size GL
        // reads (blocks·8 bytes for ETC2, s·s·4 for RGBA8 at the default alignment of 4).
        unsafe {
            if compressed {
                glCompressedTexImage2D(
                    GL_TEXTURE_2D,
                    level as GLint,
                    GL_COMPRESSED_RGB8_ETC2,
                    s as GLsizei,
                    s as GLsizei,
                    0,
                    etc.len() as GLsizei,
                    etc.as_ptr().cast(),
                );
            } else {
                glTexImage2D(
                    GL_TEXTURE_2D,
                    level as GLint,
                    GL_RGBA8,
                    s as GLsizei,
                    s as GLsizei,
                    0,
                    GL_RGBA,
                    GL_UNSIGNED_BYTE,
                    rgba.as_ptr().cast(),
                );
            }
        }
    }
}

/// A framebuffer object with a colour renderbuffer (RGBA8) and optionally a depth one
/// (24 bits), `samples` samples each; an incomplete one is an error.
fn framebuffer(gfx: &Gfx, w: u32, h: u32, samples: GLint, depth: bool) -> Result<GLuint, String> {
    let (mut fbo, mut colour, mut z) = (0, 0, 0);
    // SAFETY: GL calls on the current context; the out-pointers are locals.
    let status = unsafe {
        glGenFramebuffers(1, &mut fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glGenRenderbuffers(1, &mut colour);
        glBindRenderbuffer(GL_RENDERBUFFER, colour);
        glRenderbufferStorageMultisample(
            GL_RENDERBUFFER,
            samples,
            GL_RGBA8 as GLenum,
            w as GLsizei,
            h as GLsizei,
        );
        glFramebufferRenderbuffer(
            GL_FRAMEBUFFER,
            GL_COLOR_ATTACHMENT0,
            GL_RENDERBUFFER,
            colour,
        );
        if depth {
            glGenRenderbuffers(1, &mut z);
            glBindRenderbuffer(GL_RENDERBUFFER, z);
            glRenderbufferStorageMultisample(
                GL_RENDERBUFFER,
                samples,
                GL_DEPTH_COMPONENT24,
                w as GLsizei,
                h as GLsizei,
            );
            glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, z);
        }
        let status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        status
    };
    gfx.check("creating a framebuffer")?;
    if status != GL_FRAMEBUFFER_COMPLETE {
        return Err(format!(
            "{w}x{h} framebuffer with {samples} samples incomplete (status 0x{status:04X})"
        ));
    }
    Ok(fbo)
}

fn main() {
    let (args, bad) = parse_command_line();
    let (w, h) = (args.width, args.height);
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 {
        usage_error(
            &SPEC,
            &format!("--size must be at least {}x{}", MIN_SIZE.0, MIN_SIZE.1),
        );
    }
    if bad.has(Rule::ClientArrays) && args.api == Api::Gl {
        usage_error(
            &SPEC,
            "--bad client-arrays needs --api gles: a GL core context has no client-side vertex \
             arrays (GLES 3 keeps them on vertex array object 0 only)",
        );
    }
    if let Err(e) = run(&args, &bad) {
        eprintln!("{}: {}", SPEC.name, e.replace('\n', " "));
        std::process::exit(1);
    }
}

fn run(args: &Args, bad: &Bad) -> Result<(), String> {
    let (w, h) = (args.width, args.height);
    let (wi, hi) = (w as GLint, h as GLint);
    let mut gfx = Gfx::new(args.api, w, h)?;
    gfx.keep_shaders = args.keep_shaders;
    let gfx = gfx;

    // Start-up checks: the renderer string, ETC2 in the compressed formats, MSAA samples.
    if !bad.has(Rule::RendererUnchecked) && gfx.gl_string(GL_RENDERER).is_empty() {
        return Err("glGetString(GL_RENDERER) returned nothing".into());
    }
    let mut formats = 0;
    let mut max_samples = 0;
    // SAFETY: the context is current; the out-pointers are locals and the format list is
    // as long as GL said.
    let etc2 = unsafe {
        glGetIntegerv(GL_NUM_COMPRESSED_TEXTURE_FORMATS, &mut formats);
        let mut list = vec![0; formats.max(0) as usize];
        glGetIntegerv(GL_COMPRESSED_TEXTURE_FORMATS, list.as_mut_ptr());
        glGetIntegerv(GL_MAX_SAMPLES, &mut max_samples);
        list.contains(&(GL_COMPRESSED_RGB8_ETC2 as GLint))
    };
    if !etc2 {
        return Err("GL_COMPRESSED_RGB8_ETC2 is not among the compressed texture formats".into());
    }
    let samples = if bad.has(Rule::NoMultisampling) {
        0
    } else if max_samples >= MSAA {
        MSAA
    } else {
        return Err(format!("GL_MAX_SAMPLES is {max_samples}, below {MSAA}"));
    };

    // Programs.
    let p_tex = vs_program(&gfx, TEX_FS)?;
    let u_tex = p_tex.program.uniform("u_tex")?;
    // SAFETY: p_tex is bound (vs_program).
    unsafe { glUniform1i(u_tex, 0) };
    let p_glass = vs_program(&gfx, SOLID_FS)?;
    let u_color = p_glass.program.uniform("u_color")?;
    let [gr, gg, gb, ga] = GLASS_COLOUR;
    // SAFETY: p_glass is bound (vs_program).
    unsafe { glUniform4f(u_color, gr, gg, gb, ga) };
    let p_discard = if bad.has(Rule::DiscardHeavy) {
        Some(vs_program(&gfx, DISCARD_FS)?.program)
    } else {
        None
    };
    let p_late = if bad.has(Rule::FirstUseCompile) {
        Some(gfx.program(&plain_vs(w, h), &plain_fs([0.9, 0.3, 0.3]))?)
    } else {
        None
    };
    // compile-in-frame: the two sources, `#version` header included, checked once here.
    let in_frame_sources = if bad.has(Rule::CompileInFrame) {
        let (vs, fs) = (plain_vs(w, h), plain_fs([0.3, 0.9, 0.4]));
        let check = gfx.program(&vs, &fs)?;
        // SAFETY: deleting a program this context linked and never used.
        unsafe { glDeleteProgram(check.id) };
        let header = args.api.shader_header();
        Some((format!("{header}{vs}"), format!("{header}{fs}")))
    } else {
        None
    };

    // Geometry: one vertex buffer (six quads, then the floor), one index buffer, one VAO.
    let mut vertices = Vec::new();
    for (rect, z) in QUADS {
        push_quad(&mut vertices, rect, z);
    }
    push_quad(&mut vertices, [0, 0, w, h], FULL_Z);
    let quad_bytes = std::mem::size_of_val(vertices.as_slice());
    let (floor, floor_idx) = floor_mesh(w, h);
    if bad.has(Rule::NoStripsOrIndices) {
        for &i in &floor_idx {
            let at = i as usize * FLOATS;
            vertices.extend_from_slice(&floor[at..at + FLOATS]);
        }
    } else {
        vertices.extend_from_slice(&floor);
    }
    // The element buffer's indices count from the vertex buffer's start; the client-side
    // indices of client-arrays from the client-side floor's.
    let buffer_idx: Vec<u16> = floor_idx.iter().map(|&i| i + FLOOR_FIRST as u16).collect();
    let (mut vao, mut vbo, mut ibo) = (0, 0, 0);
    // SAFETY: GL calls on the current context; glBufferData reads the byte lengths given
    // from the live vectors; the attribute pointers are offsets into the bound buffer, or,
    // for VAO 0 (client-arrays), pointers into `floor`, which lives until the end of `run`.
    unsafe {
        if bad.has(Rule::ClientArrays) {
            glBindVertexArray(0);
            glBindBuffer(GL_ARRAY_BUFFER, 0);
            glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, STRIDE, floor.as_ptr().cast());
            glVertexAttribPointer(
                1,
                2,
                GL_FLOAT,
                GL_FALSE,
                STRIDE,
                floor.as_ptr().add(3).cast(),
            );
            glEnableVertexAttribArray(0);
            glEnableVertexAttribArray(1);
        }
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
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, STRIDE, ptr::null());
        glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, STRIDE, 12 as *const c_void);
        glEnableVertexAttribArray(0);
        glEnableVertexAttribArray(1);
        glGenBuffers(1, &mut ibo);
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ibo);
        glBufferData(
            GL_ELEMENT_ARRAY_BUFFER,
            std::mem::size_of_val(buffer_idx.as_slice()) as GLsizeiptr,
            buffer_idx.as_ptr().cast(),
            GL_STATIC_DRAW,
        );
    }
    gfx.check("checklist geometry")?;

    // Textures (unit 0 throughout).
    let compressed_card = !bad.has(Rule::UncompressedTextures);
    let mipmapped = GL_LINEAR_MIPMAP_LINEAR;
    // SAFETY: GL calls on the current context (texture set-up, see the helpers).
    let (t_card, t_floor) = unsafe {
        glActiveTexture(GL_TEXTURE0);
        let t_card = new_texture(mipmapped, GL_LINEAR);
        upload_generated(512, 0, true, compressed_card);
        let t_floor = new_texture(mipmapped, GL_LINEAR);
        upload_generated(256, 1, true, true);
        (t_card, t_floor)
    };
    let badge_texels = pattern(BADGE, 0);
    // SAFETY: as above; `badge_texels` holds BADGE·BADGE RGBA8 texels.
    let extra_texture = |on: bool| unsafe {
        if !on {
            return 0;
        }
        let t = new_texture(GL_NEAREST, GL_NEAREST);
        glTexImage2D(
            GL_TEXTURE_2D,
            0,
            GL_RGBA8,
            BADGE as GLsizei,
            BADGE as GLsizei,
            0,
            GL_RGBA,
            GL_UNSIGNED_BYTE,
            badge_texels.as_ptr().cast(),
        );
        t
    };
    let t_mod = extra_texture(bad.has(Rule::TextureModified));
    let t_same = extra_texture(bad.has(Rule::SameUpload));
    let t_rb = extra_texture(bad.has(Rule::ReadbackRtt));
    // SAFETY: as above.
    let t_nomip = unsafe {
        if bad.has(Rule::MipmapsUnused) {
            let t = new_texture(GL_LINEAR, GL_LINEAR);
            upload_generated(256, 2, false, true);
            t
        } else {
            0
        }
    };
    // SAFETY: as above (its storage comes with the first frame's glTexImage2D).
    let t_up = unsafe {
        if bad.has(Rule::TextureUploadInFrame) {
            new_texture(GL_NEAREST, GL_NEAREST)
        } else {
            0
        }
    };
    gfx.check("checklist textures")?;

    // Framebuffers: the scene's (MSAA colour + depth), readback-rtt's small target.
    let fbo = framebuffer(&gfx, w, h, samples, true)?;
    let rtt = if bad.has(Rule::ReadbackRtt) {
        framebuffer(&gfx, BADGE, BADGE, 0, false)?
    } else {
        0
    };

    // Initial state: what every frame leaves behind, so that no frame call is redundant.
    // SAFETY: GL calls on the current context naming objects it created.
    unsafe {
        glClearColor(CLEAR[0], CLEAR[1], CLEAR[2], CLEAR[3]);
        glEnable(GL_DEPTH_TEST);
        if bad.has(Rule::ColormaskHeavy) {
            glDepthFunc(GL_LEQUAL);
        }
        glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
        glDisable(GL_BLEND);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        glUseProgram(p_glass.program.id);
        glBindTexture(GL_TEXTURE_2D, t_floor);
        glBindVertexArray(vao);
    }
    gfx.check("checklist set-up")?;

    let clear_mask = if bad.has(Rule::DepthNotCleared) {
        GL_COLOR_BUFFER_BIT
    } else {
        GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT
    };
    let quad = |q: usize| (q * 4) as GLint;
    let mut readback = vec![0u8; (BADGE * BADGE * 4) as usize];
    let mut viewport = [0 as GLint; 4];
    let p_tex_id = p_tex.program.id;

    // SAFETY: the frame's GL calls run on the context `gfx` made current on this thread,
    // naming objects it created; every pointer passed is to a live buffer at least as large
    // as GL reads or writes (the vertex and index pointers are offsets into the bound
    // buffers, or the client arrays of VAO 0, which outlive the loop).
    run_frames(&gfx, args, |_, f| unsafe {
        let strip = |q: usize| glDrawArrays(GL_TRIANGLE_STRIP, quad(q), 4);
        let redundant = |program: GLuint, texture: GLuint, uniform: &dyn Fn(), cap: GLenum| {
            if bad.has(Rule::RedundantState) {
                glUseProgram(program);
                glBindTexture(GL_TEXTURE_2D, texture);
                uniform();
                glEnable(cap);
            }
        };
        let a = if bad.has(Rule::IdenticalFrames) {
            0.0
        } else {
            angle(f)
        };

        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glClear(clear_mask);
        if bad.has(Rule::ObjectsPerFrame) {
            let (mut t, mut b) = (0, 0);
            glGenTextures(1, &mut t);
            glBindTexture(GL_TEXTURE_2D, t);
            glTexImage2D(
                GL_TEXTURE_2D,
                0,
                GL_RGBA8,
                BADGE as GLsizei,
                BADGE as GLsizei,
                0,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                ptr::null(),
            );
            glGenBuffers(1, &mut b);
            glBindBuffer(GL_COPY_WRITE_BUFFER, b);
            glBufferData(GL_COPY_WRITE_BUFFER, 4096, ptr::null(), GL_STREAM_DRAW);
            glDeleteBuffers(1, &b);
            glDeleteTextures(1, &t);
        }
        glUseProgram(p_tex_id);
        if bad.has(Rule::EclipsedState) {
            // Ten values no draw ever sees: enough to clear the rule's 10-call threshold.
            for k in 0..10 {
                glUniform1f(p_tex.u_angle, -1.0 - k as f32);
            }
        }
        if !bad.has(Rule::IdenticalFrames) {
            glUniform1f(p_tex.u_angle, a);
        }
        if bad.has(Rule::SameUpload) {
            glBufferSubData(
                GL_ARRAY_BUFFER,
                0,
                quad_bytes as GLsizeiptr,
                vertices.as_ptr().cast(),
            );
        }
        if bad.has(Rule::ColormaskHeavy) {
            glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
            strip(CARD);
            glDrawElements(GL_TRIANGLES, FLOOR_INDICES, GL_UNSIGNED_SHORT, ptr::null());
            glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
        }
        glBindTexture(GL_TEXTURE_2D, t_card);
        if bad.has(Rule::ReadbackRtt) {
            glBindFramebuffer(GL_FRAMEBUFFER, rtt);
            glViewport(0, 0, BADGE as GLint, BADGE as GLint);
            strip(FULL);
            glReadPixels(
                0,
                0,
                BADGE as GLsizei,
                BADGE as GLsizei,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                readback.as_mut_ptr().cast(),
            );
            glBindFramebuffer(GL_FRAMEBUFFER, fbo);
            glViewport(0, 0, wi, hi);
        }
        redundant(
            p_tex_id,
            t_card,
            &|| glUniform1f(p_tex.u_angle, a),
            GL_DEPTH_TEST,
        );
        if bad.has(Rule::BlendOpaque) {
            glEnable(GL_BLEND);
        }
        strip(CARD);
        if bad.has(Rule::BlendOpaque) {
            glDisable(GL_BLEND);
        }

        // Extra draws of the rules that need one, between the card and the floor (front to
        // back: they lie at the card's depth, in front of the floor).
        if bad.has(Rule::MipmapsUnused) {
            glBindTexture(GL_TEXTURE_2D, t_nomip);
            strip(BADGE1);
        }
        if bad.has(Rule::TextureModified) {
            glBindTexture(GL_TEXTURE_2D, t_mod);
            strip(BADGE1);
            let texels = pattern(BADGE, 1 + (f % 255) as u32);
            glTexSubImage2D(
                GL_TEXTURE_2D,
                0,
                0,
                0,
                BADGE as GLsizei,
                BADGE as GLsizei,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                texels.as_ptr().cast(),
            );
            strip(BADGE2);
        }
        if bad.has(Rule::TextureUploadInFrame) {
            glBindTexture(GL_TEXTURE_2D, t_up);
            let texels = pattern(UPLOAD, (f % 256) as u32);
            glTexImage2D(
                GL_TEXTURE_2D,
                0,
                GL_RGBA8,
                UPLOAD as GLsizei,
                UPLOAD as GLsizei,
                0,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                texels.as_ptr().cast(),
            );
            strip(PANEL);
        }
        if bad.has(Rule::SameUpload) {
            glBindTexture(GL_TEXTURE_2D, t_same);
            glTexSubImage2D(
                GL_TEXTURE_2D,
                0,
                0,
                0,
                BADGE as GLsizei,
                BADGE as GLsizei,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                badge_texels.as_ptr().cast(),
            );
            strip(BADGE1);
        }
        if let Some((vs_src, fs_src)) = &in_frame_sources {
            let shader = |stage: GLenum, src: &String| {
                let s = glCreateShader(stage);
                let (p, len) = (src.as_ptr().cast::<GLchar>(), src.len() as GLint);
                glShaderSource(s, 1, &p, &len);
                glCompileShader(s);
                s
            };
            let vs = shader(GL_VERTEX_SHADER, vs_src);
            let fs = shader(GL_FRAGMENT_SHADER, fs_src);
            let p = glCreateProgram();
            glAttachShader(p, vs);
            glAttachShader(p, fs);
            glLinkProgram(p);
            glDeleteShader(vs);
            glDeleteShader(fs);
            glUseProgram(p);
            strip(BADGE1);
            glUseProgram(p_tex_id);
            glDeleteProgram(p);
        }
        if let Some(late) = p_late {
            if f >= LATE_FRAME {
                glUseProgram(late.id);
                strip(BADGE1);
                glUseProgram(p_tex_id);
            }
        }
        if bad.has(Rule::ReadbackRtt) {
            glBindTexture(GL_TEXTURE_2D, t_rb);
            glTexSubImage2D(
                GL_TEXTURE_2D,
                0,
                0,
                0,
                BADGE as GLsizei,
                BADGE as GLsizei,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                readback.as_ptr().cast(),
            );
            strip(BADGE1);
        }

        glBindTexture(GL_TEXTURE_2D, t_floor);
        redundant(
            p_tex_id,
            t_floor,
            &|| glUniform1f(p_tex.u_angle, a),
            GL_DEPTH_TEST,
        );
        if bad.has(Rule::ClientArrays) {
            glBindVertexArray(0);
            glDrawElements(
                GL_TRIANGLES,
                FLOOR_INDICES,
                GL_UNSIGNED_SHORT,
                floor_idx.as_ptr().cast(),
            );
            glBindVertexArray(vao);
        } else if bad.has(Rule::NoStripsOrIndices) {
            glDrawArrays(GL_TRIANGLES, FLOOR_FIRST, FLOOR_INDICES);
        } else {
            glDrawElements(GL_TRIANGLES, FLOOR_INDICES, GL_UNSIGNED_SHORT, ptr::null());
        }

        glUseProgram(p_glass.program.id);
        glEnable(GL_BLEND);
        if bad.has(Rule::EclipsedState) {
            glBlendFunc(GL_ONE, GL_ONE);
            glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
            glUniform4f(u_color, 1.0, 0.0, 0.0, 1.0);
            glUniform4f(u_color, gr, gg, gb, ga);
        }
        redundant(
            p_glass.program.id,
            t_floor,
            &|| glUniform4f(u_color, gr, gg, gb, ga),
            GL_BLEND,
        );
        strip(GLASS);
        if bad.has(Rule::Overdraw) {
            glDepthMask(GL_FALSE);
            for _ in 0..LAYERS {
                strip(FULL);
            }
            glDepthMask(GL_TRUE);
        }
        glDisable(GL_BLEND);
        if let Some(p) = p_discard {
            glUseProgram(p.id);
            strip(FULL);
        }

        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
        glBlitFramebuffer(
            0,
            0,
            wi,
            hi,
            0,
            0,
            wi,
            hi,
            GL_COLOR_BUFFER_BIT,
            GL_NEAREST as GLenum,
        );
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        if bad.has(Rule::SyncCalls) {
            glGetError();
            glGetIntegerv(GL_VIEWPORT, viewport.as_mut_ptr());
        }
        if bad.has(Rule::Stall) {
            glFinish();
        }
    })?;
    gfx.check("checklist frames")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etc2_block_layout() {
        // Base (31, 0, 16), all pixels index 1 (+8): red 255, green 8, blue 132+8.
        let b = etc2_block([31, 0, 16], &[1; 16]);
        assert_eq!(b, [0xF8, 0x00, 0x80, 0x02, 0x00, 0x00, 0xFF, 0xFF]);
        assert_eq!(etc2_texel([31, 0, 16], 1), [255, 8, 140, 255]);
        assert_eq!(etc2_texel([0, 0, 0], 3), [0, 0, 0, 255]);
    }

    #[test]
    fn level_sizes() {
        let (etc, rgba) = texture_level(512, 0, 0);
        assert_eq!((etc.len(), rgba.len()), (131_072, 1_048_576));
        for side in [2, 1] {
            let (etc, rgba) = texture_level(side, 9, 0);
            assert_eq!((etc.len(), rgba.len()), (8, (side * side * 4) as usize));
        }
    }

    #[test]
    fn floor_tiles_the_surface() {
        let (v, idx) = floor_mesh(384, 256);
        assert_eq!(v.len(), 35 * FLOATS);
        assert_eq!(idx.len(), FLOOR_INDICES as usize);
        assert_eq!(&v[34 * FLOATS..34 * FLOATS + 3], &[384.0, 256.0, FLOOR_Z]);
    }

    #[test]
    fn rule_names_are_unique() {
        for (i, (r, n)) in RULES.iter().enumerate() {
            assert!(RULES[i + 1..].iter().all(|(r2, n2)| r2 != r && n2 != n));
        }
    }
}
