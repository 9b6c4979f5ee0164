//! The scene the VG examples share (`mod common;` in each), and their set-up and read-back.
//!
//! Like `vg_rect`, the examples link `libOpenVG.so.1` dynamically (`-lOpenVG`), so every
//! `vg*` call is a dynamic import a profiler can interpose, and draw on a 128×128 GLES 3
//! surfaceless pbuffer (`gpuheat_examples::gfx`). The clean scene, on black:
//!
//! | shape | how | colour | analytic area |
//! |---|---|---|---|
//! | rectangle 30×40 at (10, 20) | `vguRect`, filled | red | 1 200 px |
//! | circle r = 20 at (80, 80) | `vguEllipse` 40×40, filled | green | π·20² ≈ 1 256.6 px |
//! | line (10, 110)–(110, 110) | `vguLine`, stroked, width 6, butt caps | blue | 600 px |
//! | 16×16 image at (100, 10) | `vgDrawImage` through the image matrix | yellow | 256 px |
//!
//! Everything is made and set once before the first frame: the three paths (with
//! `VG_PATH_CAPABILITY_APPEND_TO` only, what the VGU calls need), the paints (the stroke
//! paint set once), the image (uploaded once and placed by the image matrix), the clear
//! colour, the stroke width and cap. [`Scene::frame`] then makes 7 VG calls: `vgClear`,
//! `vgSetPaint` (red fill), `vgDrawPath` (rectangle), `vgSetPaint` (green fill), `vgDrawPath`
//! (circle), `vgDrawPath` (line), `vgDrawImage`: 5 VG work calls, 3 of them `vgDrawPath`.
//! The surface is read back once, after the last frame's `eglSwapBuffers`
//! ([`Scene::report`]), so no frame waits for the VG pipeline.

// Each example uses the part of the scene it needs.
#![allow(dead_code)]

use gpuheat_examples::gfx::{fnv1a64, Api, Gfx};

/// `VGHandle` (paths, paints, images): a 32-bit handle in this library.
pub type Handle = u32;

/// Surface width and height.
pub const SIZE: i32 = 128;

/// `VG_STROKE_PATH`.
pub const STROKE: u32 = 1 << 0;
/// `VG_FILL_PATH`.
pub const FILL: u32 = 1 << 1;
/// `VG_PATH_CAPABILITY_APPEND_TO`: what `vgu*` need to build a path.
pub const CAPABILITY_APPEND_TO: u32 = 1 << 1;
/// `VG_PATH_CAPABILITY_ALL`.
pub const CAPABILITY_ALL: u32 = (1 << 12) - 1;
/// `VG_MATRIX_MODE`.
pub const MATRIX_MODE: i32 = 0x1100;
/// `VG_MATRIX_PATH_USER_TO_SURFACE`.
pub const MATRIX_PATH: i32 = 0x1400;
/// `VG_MATRIX_IMAGE_USER_TO_SURFACE`.
pub const MATRIX_IMAGE: i32 = 0x1401;
/// The column-major identity, as `vgLoadMatrix` takes it.
pub const IDENTITY: [f32; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

const VG_CLEAR_COLOR: i32 = 0x1121;
const VG_STROKE_LINE_WIDTH: i32 = 0x1110;
const VG_STROKE_CAP_STYLE: i32 = 0x1111;
const VG_CAP_BUTT: i32 = 0x1700;
const VG_PATH_FORMAT_STANDARD: i32 = 0;
const VG_PATH_DATATYPE_F: i32 = 3;
/// `VG_sRGBA_8888`: one 32-bit word per pixel, red in the most significant byte.
pub const RGBA_8888: i32 = 1;
const VG_IMAGE_QUALITY_NONANTIALIASED: u32 = 1;

/// Colours as `VG_sRGBA_8888` words (`vgSetColor`, `vgReadPixels`).
pub const RED: u32 = 0xFF00_00FF;
/// See [`RED`].
pub const GREEN: u32 = 0x00FF_00FF;
/// See [`RED`].
pub const BLUE: u32 = 0x0000_FFFF;
/// See [`RED`].
pub const YELLOW: u32 = 0xFFFF_00FF;
/// See [`RED`].
pub const WHITE: u32 = 0xFFFF_FFFF;
/// See [`RED`].
pub const BLACK: u32 = 0x0000_00FF;

/// Image side, in pixels.
pub const IMAGE_SIZE: i32 = 16;

// The OpenVG 1.1 and VGU entry points the examples call, with openvg.h's signatures.
#[link(name = "OpenVG")]
extern "C" {
    pub fn vgCreatePath(
        format: i32,
        datatype: i32,
        scale: f32,
        bias: f32,
        segment_hint: i32,
        coord_hint: i32,
        caps: u32,
    ) -> Handle;
    pub fn vgDestroyPath(path: Handle);
    pub fn vgCreatePaint() -> Handle;
    pub fn vgDestroyPaint(paint: Handle);
    pub fn vgSetColor(paint: Handle, rgba: u32);
    pub fn vgSetPaint(paint: Handle, modes: u32);
    pub fn vgSetf(param: i32, value: f32);
    pub fn vgSeti(param: i32, value: i32);
    pub fn vgSetfv(param: i32, count: i32, values: *const f32);
    pub fn vgLoadIdentity();
    pub fn vgLoadMatrix(m: *const f32);
    pub fn vgTranslate(tx: f32, ty: f32);
    pub fn vgClear(x: i32, y: i32, w: i32, h: i32);
    pub fn vgDrawPath(path: Handle, modes: u32);
    pub fn vgCreateImage(format: i32, width: i32, height: i32, quality: u32) -> Handle;
    pub fn vgImageSubData(
        image: Handle,
        data: *const u32,
        stride: i32,
        format: i32,
        x: i32,
        y: i32,
        width: i32,
        height: i32,
    );
    pub fn vgDrawImage(image: Handle);
    pub fn vgReadPixels(
        data: *mut u32,
        stride: i32,
        format: i32,
        x: i32,
        y: i32,
        width: i32,
        height: i32,
    );
    pub fn vgFinish();
    pub fn vgGetError() -> i32;
    pub fn vguRect(path: Handle, x: f32, y: f32, w: f32, h: f32) -> i32;
    pub fn vguEllipse(path: Handle, cx: f32, cy: f32, w: f32, h: f32) -> i32;
    pub fn vguLine(path: Handle, x0: f32, y0: f32, x1: f32, y1: f32) -> i32;
    pub fn vguPolygon(path: Handle, points: *const f32, count: i32, closed: u32) -> i32;
}

/// `--frames N` (default 3), or exit 2 with the usage. `--frames 0` draws frames until the
/// program gets SIGUSR1, then reads the last one back as after N frames and exits: a
/// profiler can attach to it meanwhile (`gpuheat attach`).
pub fn frames(name: &str) -> u32 {
    let mut args = std::env::args().skip(1);
    let mut frames = 3u32;
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().map(|v| v.parse::<u32>())) {
            ("--frames", Some(Ok(n))) => frames = n,
            _ => {
                eprintln!("{name}: usage: {name} [--frames N]");
                std::process::exit(2);
            }
        }
    }
    if frames == 0 {
        extern "C" fn on_sigusr1(_: i32) {
            STOP.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        extern "C" {
            fn signal(signum: i32, handler: usize) -> usize;
        }
        const SIGUSR1: i32 = 10;
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { signal(SIGUSR1, on_sigusr1 as *const () as usize) };
        frames = u32::MAX;
    }
    frames
}

/// Set by SIGUSR1 under `--frames 0`.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The image's pixels: all yellow.
pub fn image_pixels() -> Vec<u32> {
    vec![YELLOW; (IMAGE_SIZE * IMAGE_SIZE) as usize]
}

/// A path made for the `vgu*` calls, with capabilities `caps`.
pub fn new_path(caps: u32) -> Handle {
    // SAFETY: a VG call on the current context with valid arguments.
    unsafe {
        vgCreatePath(
            VG_PATH_FORMAT_STANDARD,
            VG_PATH_DATATYPE_F,
            1.0,
            0.0,
            0,
            0,
            caps,
        )
    }
}

/// A paint of one colour.
pub fn new_paint(rgba: u32) -> Handle {
    // SAFETY: VG calls on the current context; the paint was just made.
    unsafe {
        let p = vgCreatePaint();
        vgSetColor(p, rgba);
        p
    }
}

/// The clean scene's objects on its surface.
pub struct Scene {
    name: &'static str,
    gfx: Gfx,
    /// The rectangle's path.
    pub rect: Handle,
    /// The circle's path.
    pub circle: Handle,
    /// The line's path.
    pub line: Handle,
    /// The 16×16 yellow image.
    pub image: Handle,
    /// The rectangle's fill paint.
    pub red: Handle,
    /// The circle's fill paint.
    pub green: Handle,
    /// The line's stroke paint (set once).
    pub blue: Handle,
}

impl Scene {
    /// The surface and the scene's objects, its paths made with capabilities `caps`
    /// ([`CAPABILITY_APPEND_TO`] in the clean scene); exits 1 when EGL fails.
    pub fn new(name: &'static str, caps: u32) -> Scene {
        let gfx = Gfx::new(Api::Gles, SIZE as u32, SIZE as u32).unwrap_or_else(|e| {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        });
        let (rect, circle, line) = (new_path(caps), new_path(caps), new_path(caps));
        let pixels = image_pixels();
        // SAFETY: VG calls on the current context (made by Gfx::new) with valid arguments;
        // the arrays passed hold what the calls read (4 floats, 16×16 words).
        let image = unsafe {
            vguRect(rect, 10.0, 20.0, 30.0, 40.0);
            vguEllipse(circle, 80.0, 80.0, 40.0, 40.0);
            vguLine(line, 10.0, 110.0, 110.0, 110.0);
            vgSetfv(VG_CLEAR_COLOR, 4, [0.0, 0.0, 0.0, 1.0].as_ptr());
            vgSetf(VG_STROKE_LINE_WIDTH, 6.0);
            vgSeti(VG_STROKE_CAP_STYLE, VG_CAP_BUTT);
            let image = vgCreateImage(
                RGBA_8888,
                IMAGE_SIZE,
                IMAGE_SIZE,
                VG_IMAGE_QUALITY_NONANTIALIASED,
            );
            vgImageSubData(
                image,
                pixels.as_ptr(),
                IMAGE_SIZE * 4,
                RGBA_8888,
                0,
                0,
                IMAGE_SIZE,
                IMAGE_SIZE,
            );
            vgSeti(MATRIX_MODE, MATRIX_IMAGE);
            vgLoadIdentity();
            vgTranslate(100.0, 10.0);
            vgSeti(MATRIX_MODE, MATRIX_PATH);
            vgLoadIdentity();
            image
        };
        let (red, green, blue) = (new_paint(RED), new_paint(GREEN), new_paint(BLUE));
        // SAFETY: a VG call on the current context; `blue` is a paint.
        unsafe { vgSetPaint(blue, STROKE) };
        Scene {
            name,
            gfx,
            rect,
            circle,
            line,
            image,
            red,
            green,
            blue,
        }
    }

    /// `vgClear` of the whole surface.
    pub fn clear(&self) {
        // SAFETY: a VG call on the current context.
        unsafe { vgClear(0, 0, SIZE, SIZE) }
    }

    /// `vgSetPaint(red, FILL)`, `vgDrawPath(rect, FILL)`.
    pub fn draw_rect(&self) {
        // SAFETY: VG calls on the current context with the scene's handles.
        unsafe {
            vgSetPaint(self.red, FILL);
            vgDrawPath(self.rect, FILL);
        }
    }

    /// `vgSetPaint(green, FILL)`, `vgDrawPath(circle, FILL)`.
    pub fn draw_circle(&self) {
        // SAFETY: VG calls on the current context with the scene's handles.
        unsafe {
            vgSetPaint(self.green, FILL);
            vgDrawPath(self.circle, FILL);
        }
    }

    /// `vgDrawPath(line, STROKE)` (the stroke paint was set once).
    pub fn draw_line(&self) {
        // SAFETY: a VG call on the current context with the scene's handle.
        unsafe { vgDrawPath(self.line, STROKE) }
    }

    /// `vgDrawImage(image)` (the image matrix was set once).
    pub fn draw_image(&self) {
        // SAFETY: a VG call on the current context with the scene's handle.
        unsafe { vgDrawImage(self.image) }
    }

    /// The clean frame: clear, rectangle, circle, line, image (7 VG calls).
    pub fn frame(&self) {
        self.clear();
        self.draw_rect();
        self.draw_circle();
        self.draw_line();
        self.draw_image();
    }

    /// Ends the frame: one `eglSwapBuffers`; exits 1 when it fails.
    pub fn swap(&self) {
        if let Err(e) = self.gfx.swap() {
            eprintln!("{}: {e}", self.name);
            std::process::exit(1);
        }
        if STOP.load(std::sync::atomic::Ordering::Relaxed) {
            self.report();
            std::process::exit(0);
        }
    }

    /// Reads the surface back (`vgReadPixels`, after the last frame) and prints
    /// `frame_crc=<FNV-1a 64 of the pixels as big-endian VG_sRGBA_8888 words, bottom row
    /// first>` and the pixels of each colour; exits 1 on a VG error.
    pub fn report(&self) {
        let mut px = vec![0u32; (SIZE * SIZE) as usize];
        // SAFETY: `px` holds SIZE rows of SIZE words, SIZE·4 bytes apart.
        let error = unsafe {
            vgReadPixels(px.as_mut_ptr(), SIZE * 4, RGBA_8888, 0, 0, SIZE, SIZE);
            vgGetError()
        };
        let bytes: Vec<u8> = px.iter().flat_map(|w| w.to_be_bytes()).collect();
        println!("frame_crc={:016x}", fnv1a64(&bytes));
        let count = |c: u32| px.iter().filter(|&&p| p == c).count();
        let named = [RED, GREEN, BLUE, YELLOW, WHITE, BLACK];
        println!(
            "red={} green={} blue={} yellow={} white={} black={} other={}",
            count(RED),
            count(GREEN),
            count(BLUE),
            count(YELLOW),
            count(WHITE),
            count(BLACK),
            px.iter().filter(|p| !named.contains(p)).count()
        );
        // The oldest error since the program's previous vgGetError (none before): a profiler's
        // own VG calls must leave it as the program's calls made it.
        println!("vg_error=0x{error:04X}");
        if error != 0 {
            eprintln!("{}: VG error 0x{error:04X}", self.name);
            std::process::exit(1);
        }
    }
}
