//! The fixture VG library on real Mesa (llvmpipe, EGL surfaceless pbuffer, GLES 3.2):
//! known shapes drawn through the VG entry points, read back with glReadPixels.

use std::os::raw::c_void;
use std::ptr;

use gpuheat_examples::gfx::{Api, Gfx};
use OpenVG::consts::*;
use OpenVG::*;

const W: u32 = 128;
const H: u32 = 128;
const BLACK: u32 = 0x0000_00FF;
const RED: u32 = 0xFF00_00FF;

/// A 128×128 GLES context current on this thread, cleared to opaque black through VG.
fn setup() -> Gfx {
    let gfx = Gfx::new(Api::Gles, W, H).expect("EGL surfaceless GLES context");
    // SAFETY: 4 floats from a local array.
    unsafe { vgSetfv(VG_CLEAR_COLOR, 4, [0.0, 0.0, 0.0, 1.0].as_ptr()) };
    vgClear(0, 0, W as i32, H as i32);
    gfx
}

/// The surface's pixels as 0xRRGGBBAA, bottom row first.
fn pixels(gfx: &Gfx) -> Vec<u32> {
    gfx.read_pixels()
        .chunks_exact(4)
        .map(|p| u32::from_be_bytes([p[0], p[1], p[2], p[3]]))
        .collect()
}

fn at(px: &[u32], x: u32, y: u32) -> u32 {
    px[(y * W + x) as usize]
}

fn count(px: &[u32], color: u32) -> usize {
    px.iter().filter(|&&p| p == color).count()
}

/// Bounding box (x0, y0, x1, y1), exclusive, of the pixels of `color`.
fn bbox(px: &[u32], color: u32) -> (u32, u32, u32, u32) {
    let mut b = (u32::MAX, u32::MAX, 0, 0);
    for (i, &p) in px.iter().enumerate() {
        if p == color {
            let (x, y) = (i as u32 % W, i as u32 / W);
            b = (b.0.min(x), b.1.min(y), b.2.max(x + 1), b.3.max(y + 1));
        }
    }
    b
}

/// A float path with every capability.
fn new_path() -> VGPath {
    let p = vgCreatePath(
        VG_PATH_FORMAT_STANDARD,
        VG_PATH_DATATYPE_F,
        1.0,
        0.0,
        0,
        0,
        VG_PATH_CAPABILITY_ALL,
    );
    assert_ne!(p, VG_INVALID_HANDLE);
    p
}

/// A colour paint set for `modes`.
fn paint(rgba: u32, modes: VGbitfield) -> VGPaint {
    let p = vgCreatePaint();
    vgSetColor(p, rgba);
    vgSetPaint(p, modes);
    p
}

fn append(path: VGPath, segs: &[u8], coords: &[f32]) {
    // SAFETY: `segs.len()` commands and the float coordinates they need.
    unsafe {
        vgAppendPathData(
            path,
            segs.len() as i32,
            segs.as_ptr(),
            coords.as_ptr().cast(),
        )
    };
}

fn bounds(path: VGPath, transformed: bool) -> [f32; 4] {
    let mut b = [0.0f32; 4];
    let [x, y, w, h] = b.each_mut().map(|v| v as *mut f32);
    // SAFETY: four writable floats of a local array.
    unsafe {
        if transformed {
            vgPathTransformedBounds(path, x, y, w, h)
        } else {
            vgPathBounds(path, x, y, w, h)
        }
    };
    b
}

#[test]
fn axis_aligned_rectangle_fills_exactly_its_pixels() {
    let gfx = setup();
    let path = new_path();
    assert_eq!(vguRect(path, 10.0, 20.0, 30.0, 40.0), VGU_NO_ERROR);
    paint(RED, VG_FILL_PATH);
    vgDrawPath(path, VG_FILL_PATH);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 30 * 40);
    assert_eq!(bbox(&px, RED), (10, 20, 40, 60));
    assert_eq!(count(&px, BLACK), (W * H) as usize - 1200);
    assert_eq!(bounds(path, false), [10.0, 20.0, 30.0, 40.0]);
}

#[test]
fn a_desktop_gl_context_works_too() {
    // The library's `#version 300 es` shaders compile on a GL 4.5 core context as well
    // (ES 3.0 compatibility), so a VG program may make either current.
    let gfx = Gfx::new(Api::Gl, W, H).expect("EGL surfaceless GL 4.5 core context");
    // SAFETY: 4 floats from a local array.
    unsafe { vgSetfv(VG_CLEAR_COLOR, 4, [0.0, 0.0, 0.0, 1.0].as_ptr()) };
    vgClear(0, 0, W as i32, H as i32);
    let path = new_path();
    vguRect(path, 10.0, 20.0, 30.0, 40.0);
    paint(RED, VG_FILL_PATH);
    vgDrawPath(path, VG_FILL_PATH);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 1200);
    assert_eq!(bbox(&px, RED), (10, 20, 40, 60));
}

/// A pentagram (self-overlapping five-point star) around (64, 64).
fn star(path: VGPath) {
    let pts: Vec<f32> = (0..5)
        .flat_map(|i| {
            let a = (90.0f32 + 144.0 * i as f32).to_radians();
            [64.0 + 50.0 * a.cos(), 64.0 + 50.0 * a.sin()]
        })
        .collect();
    // SAFETY: 5 points (10 floats) of a live vector.
    let e = unsafe { vguPolygon(path, pts.as_ptr(), 5, VG_TRUE) };
    assert_eq!(e, VGU_NO_ERROR);
}

#[test]
fn even_odd_and_non_zero_differ_in_a_star_centre() {
    let gfx = setup();
    let path = new_path();
    star(path);
    paint(RED, VG_FILL_PATH);
    vgSeti(VG_FILL_RULE, VG_EVEN_ODD);
    vgDrawPath(path, VG_FILL_PATH);
    let even_odd = pixels(&gfx);
    vgClear(0, 0, W as i32, H as i32);
    vgSeti(VG_FILL_RULE, VG_NON_ZERO);
    vgDrawPath(path, VG_FILL_PATH);
    let non_zero = pixels(&gfx);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    assert_eq!(
        at(&even_odd, 64, 64),
        BLACK,
        "even-odd leaves the centre empty"
    );
    assert_eq!(at(&non_zero, 64, 64), RED, "non-zero fills the centre");
    // The points are filled under both rules; the pentagon inside only under non-zero.
    assert_eq!(at(&even_odd, 64, 108), RED);
    assert!(count(&non_zero, RED) > count(&even_odd, RED));
}

#[test]
fn stroked_line_covers_width_times_length() {
    let gfx = setup();
    let path = new_path();
    assert_eq!(vguLine(path, 20.0, 64.0, 120.0, 64.0), VGU_NO_ERROR);
    paint(RED, VG_STROKE_PATH);
    vgSetf(VG_STROKE_LINE_WIDTH, 6.0);
    vgDrawPath(path, VG_STROKE_PATH);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 6 * 100, "butt caps: exactly w × length");
    assert_eq!(bbox(&px, RED), (20, 61, 120, 67));

    // Square caps add w/2 at each end.
    vgClear(0, 0, W as i32, H as i32);
    vgSeti(VG_STROKE_CAP_STYLE, VG_CAP_SQUARE);
    vgDrawPath(path, VG_STROKE_PATH);
    assert_eq!(count(&pixels(&gfx), RED), 6 * 106);

    // A slanted line: about w × length. (At exactly 45° the pixel centres fall on
    // diagonals 1/√2 apart, so the count is quantized: 11 diagonals for a width of 11.3.)
    let diag = new_path();
    vguLine(diag, 10.0, 15.0, 117.0, 52.0);
    vgSeti(VG_STROKE_CAP_STYLE, VG_CAP_BUTT);
    vgSetf(VG_STROKE_LINE_WIDTH, 8.0);
    vgClear(0, 0, W as i32, H as i32);
    vgDrawPath(diag, VG_STROKE_PATH);
    let expect = 8.0 * (107f64 * 107.0 + 37.0 * 37.0).sqrt();
    let got = count(&pixels(&gfx), RED) as f64;
    println!("slanted stroke w=8: {got} px vs w*length = {expect:.1}");
    assert!((got / expect - 1.0).abs() < 0.02, "{got} vs {expect}");
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn circle_area_is_within_one_percent_of_pi_r_squared() {
    let gfx = setup();
    let path = new_path();
    assert_eq!(vguEllipse(path, 64.0, 64.0, 100.0, 100.0), VGU_NO_ERROR);
    paint(RED, VG_FILL_PATH);
    vgDrawPath(path, VG_FILL_PATH);
    let got = count(&pixels(&gfx), RED) as f64;
    let expect = std::f64::consts::PI * 50.0 * 50.0;
    println!("circle r=50: {got} px vs pi r^2 = {expect:.1}");
    assert!((got / expect - 1.0).abs() < 0.01, "{got} vs {expect}");
    let b = bounds(path, false);
    for (g, e) in b.iter().zip([14.0, 14.0, 100.0, 100.0]) {
        assert!((g - e).abs() < 0.01, "{b:?}");
    }
}

#[test]
fn transforms_move_and_scale_shapes() {
    let gfx = setup();
    let path = new_path();
    vguRect(path, 0.0, 0.0, 10.0, 10.0);
    paint(RED, VG_FILL_PATH);
    vgSeti(VG_MATRIX_MODE, VG_MATRIX_PATH_USER_TO_SURFACE);
    vgLoadIdentity();
    vgTranslate(30.0, 10.0);
    vgScale(2.0, 3.0);
    vgDrawPath(path, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(bbox(&px, RED), (30, 10, 50, 40));
    assert_eq!(count(&px, RED), 20 * 30);
    assert_eq!(bounds(path, true), [30.0, 10.0, 20.0, 30.0]);
    let mut m = [0.0f32; 9];
    // SAFETY: room for 9 floats.
    unsafe { vgGetMatrix(m.as_mut_ptr()) };
    assert_eq!(m, [2.0, 0.0, 0.0, 0.0, 3.0, 0.0, 30.0, 10.0, 1.0]);

    // Rotation by 90° about the origin, then moved into view: (x, y) → (100 − y, x).
    vgClear(0, 0, W as i32, H as i32);
    vgLoadIdentity();
    vgTranslate(100.0, 0.0);
    vgRotate(90.0);
    let r = new_path();
    vguRect(r, 20.0, 5.0, 40.0, 10.0);
    vgDrawPath(r, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(bbox(&px, RED), (85, 20, 95, 60));
    assert_eq!(count(&px, RED), 400);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn scissoring_clips_to_the_union_of_rects_blending_once() {
    let gfx = setup();
    let path = new_path();
    vguRect(path, 0.0, 0.0, W as f32, H as f32);
    // Half-transparent white: a pixel blended twice would come out brighter.
    paint(0xFFFF_FF80, VG_FILL_PATH);
    let rects = [10, 10, 40, 40, 30, 30, 40, 40];
    // SAFETY: 8 integers of a local array.
    unsafe { vgSetiv(VG_SCISSOR_RECTS, 8, rects.as_ptr()) };
    vgSeti(VG_SCISSORING, VG_TRUE as i32);
    vgDrawPath(path, VG_FILL_PATH);
    let px = pixels(&gfx);
    let inside = at(&px, 35, 35);
    assert_ne!(inside, BLACK);
    assert_eq!(at(&px, 15, 15), inside);
    assert_eq!(at(&px, 65, 65), inside);
    assert_eq!(count(&px, inside), 40 * 40 * 2 - 20 * 20);
    assert_eq!(at(&px, 5, 5), BLACK);
    assert_eq!(at(&px, 60, 15), BLACK);

    // vgClear honours scissoring too; without rects everything is clipped.
    // SAFETY: 4 floats of a local array.
    unsafe { vgSetfv(VG_CLEAR_COLOR, 4, [1.0, 0.0, 0.0, 1.0].as_ptr()) };
    vgClear(0, 0, W as i32, H as i32);
    assert_eq!(count(&pixels(&gfx), RED), 40 * 40 * 2 - 20 * 20);
    // SAFETY: a zero count reads nothing.
    unsafe { vgSetiv(VG_SCISSOR_RECTS, 0, ptr::null()) };
    assert_eq!(vgGetVectorSize(VG_SCISSOR_RECTS), 0);
    vgSeti(VG_SCISSORING, VG_FALSE as i32);
    vgClear(0, 0, W as i32, H as i32);
    assert_eq!(count(&pixels(&gfx), RED), (W * H) as usize);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn errors_follow_the_specification() {
    let _gfx = setup();
    assert_eq!(vgGetError(), VG_NO_ERROR);
    vgDrawPath(0xDEAD_BEEF, VG_FILL_PATH);
    assert_eq!(vgGetError(), VG_BAD_HANDLE_ERROR);
    assert_eq!(vgGetError(), VG_NO_ERROR, "reading the error resets it");

    let path = new_path();
    vgDrawPath(path, 0);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    vgSeti(VG_FILL_RULE, 42);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    assert_eq!(
        vgGeti(VG_FILL_RULE),
        VG_EVEN_ODD,
        "a rejected value changes nothing"
    );
    assert_eq!(
        vgCreatePath(VG_PATH_FORMAT_STANDARD, 9, 1.0, 0.0, 0, 0, 0),
        VG_INVALID_HANDLE
    );
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    assert_eq!(
        vgCreatePath(7, VG_PATH_DATATYPE_F, 1.0, 0.0, 0, 0, 0),
        VG_INVALID_HANDLE
    );
    assert_eq!(vgGetError(), VG_UNSUPPORTED_PATH_FORMAT_ERROR);

    // The first error sticks until read.
    vgDestroyPaint(0xDEAD_BEEF);
    vgSetf(0x7FFF, 1.0);
    assert_eq!(vgGetError(), VG_BAD_HANDLE_ERROR);
    assert_eq!(vgGetError(), VG_NO_ERROR);

    // An invalid segment command, a path without APPEND_TO.
    append(path, &[0xFF], &[]);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    vgRemovePathCapabilities(path, VG_PATH_CAPABILITY_APPEND_TO);
    append(path, &[VG_MOVE_TO_ABS], &[1.0, 2.0]);
    assert_eq!(vgGetError(), VG_PATH_CAPABILITY_ERROR);
    assert_eq!(vguRect(path, 0.0, 0.0, 1.0, 1.0), VGU_PATH_CAPABILITY_ERROR);
    assert_eq!(
        vguRect(path, 0.0, 0.0, -1.0, 1.0),
        VGU_ILLEGAL_ARGUMENT_ERROR
    );
    assert_eq!(
        vguRect(0xDEAD_BEEF, 0.0, 0.0, 1.0, 1.0),
        VGU_BAD_HANDLE_ERROR
    );
    assert_eq!(vgGetParameteri(path, VG_PATH_NUM_SEGMENTS), 0);
    vgSetParameteri(path, VG_PATH_DATATYPE, VG_PATH_DATATYPE_S_8);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);

    // Non-finite coordinates draw nothing and raise no error (nor a panic).
    let nan = new_path();
    append(
        nan,
        &[VG_MOVE_TO_ABS, VG_LINE_TO_ABS, VG_LINE_TO_ABS],
        &[0.0, 0.0, f32::NAN, 1.0, 5.0, 5.0],
    );
    vgDrawPath(nan, VG_FILL_PATH | VG_STROKE_PATH);
    assert_eq!(vgGetError(), VG_NO_ERROR);

    // A handle destroyed is a bad handle.
    vgDestroyPath(path);
    vgDrawPath(path, VG_FILL_PATH);
    assert_eq!(vgGetError(), VG_BAD_HANDLE_ERROR);
    assert_eq!(
        vgCreateImage(3, 4, 4, VG_IMAGE_QUALITY_FASTER),
        VG_INVALID_HANDLE
    );
    assert_eq!(vgGetError(), VG_UNSUPPORTED_IMAGE_FORMAT_ERROR);
    vgClear(0, 0, 0, 5);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    // SAFETY: a null pointer is rejected before any read.
    unsafe { vgLoadMatrix(ptr::null()) };
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    let version = vgGetString(VG_VERSION);
    assert!(!version.is_null());
    // SAFETY: a NUL-terminated static string from the library.
    let v = unsafe { std::ffi::CStr::from_ptr(version.cast()) };
    assert_eq!(v.to_str(), Ok("1.1"));
}

#[test]
fn without_a_current_context_calls_do_nothing() {
    // A fresh thread has no current EGL context.
    std::thread::spawn(|| {
        assert_eq!(vgGetError(), VG_NO_CONTEXT_ERROR);
        assert_eq!(vgCreatePaint(), VG_INVALID_HANDLE);
        assert!(vgGetString(VG_VENDOR).is_null());
    })
    .join()
    .unwrap();
}

#[test]
fn every_segment_type_and_datatype_draws_its_curve() {
    let gfx = setup();
    paint(RED, VG_FILL_PATH);
    // S_16 with scale 0.5 and bias 10: stored values v mean 0.5·v + 10.
    let p = vgCreatePath(
        VG_PATH_FORMAT_STANDARD,
        VG_PATH_DATATYPE_S_16,
        0.5,
        10.0,
        0,
        0,
        VG_PATH_CAPABILITY_ALL,
    );
    // A 40×40 square at (10, 10) in user units, drawn with MOVE, LINE, HLINE, VLINE.
    let segs = [
        VG_MOVE_TO_ABS,
        VG_LINE_TO_REL,
        VG_VLINE_TO_ABS,
        VG_HLINE_TO_ABS,
        VG_CLOSE_PATH,
    ];
    // Relative coordinates get the bias too (the specification applies scale and bias
    // to every coordinate), so a relative 40 is stored as (40 − 10)/0.5 = 60.
    let coords: [i16; 6] = [0, 0, 60, -20, 80, 0];
    // SAFETY: 5 commands and their 6 i16 coordinates, of local arrays.
    unsafe { vgAppendPathData(p, 5, segs.as_ptr(), coords.as_ptr().cast::<c_void>()) };
    assert_eq!(vgGetError(), VG_NO_ERROR);
    assert_eq!(vgGetParameteri(p, VG_PATH_NUM_COORDS), 6);
    vgDrawPath(p, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(bbox(&px, RED), (10, 10, 50, 50));
    assert_eq!(count(&px, RED), 1600);

    // Curves: a quad, its smooth continuation, a cubic and its smooth continuation, then
    // all four arcs; each bounds check is against the analytic curve.
    let q = new_path();
    append(
        q,
        &[VG_MOVE_TO_ABS, VG_QUAD_TO_ABS, VG_SQUAD_TO_ABS],
        &[0.0, 0.0, 20.0, 40.0, 40.0, 0.0, 80.0, 0.0],
    );
    // Quad peaks at y = 20 (t = 1/2); the smooth one reflects the control to (60, −40).
    assert_eq!(bounds(q, false), [0.0, -20.0, 80.0, 40.0]);
    let c = new_path();
    append(
        c,
        &[VG_MOVE_TO_ABS, VG_CUBIC_TO_ABS, VG_SCUBIC_TO_REL],
        &[
            0.0, 0.0, 0.0, 40.0, 40.0, 40.0, 40.0, 0.0, 40.0, -40.0, 40.0, 0.0,
        ],
    );
    // The cubic peaks at 0.75 · 40 = 30; the smooth one mirrors it down to −30.
    let b = bounds(c, false);
    assert!(
        (b[1] + 30.0).abs() < 1e-3 && (b[3] - 60.0).abs() < 1e-3 && b[2] == 80.0,
        "{b:?}"
    );
    for (cmd, large, ccw) in [
        (VG_SCCWARC_TO_ABS, false, true),
        (VG_SCWARC_TO_ABS, false, false),
        (VG_LCCWARC_TO_ABS, true, true),
        (VG_LCWARC_TO_ABS, true, false),
    ] {
        // From (0, 0) to (20, 0) on circles of radius 20: the small arcs bulge 2.68 from
        // the chord, the large ones 37.32; counter-clockwise from left to right bulges
        // down.
        let a = new_path();
        append(
            a,
            &[VG_MOVE_TO_ABS, cmd],
            &[0.0, 0.0, 20.0, 20.0, 0.0, 20.0, 0.0],
        );
        let b = bounds(a, false);
        let depth = if large {
            20.0 + 300f32.sqrt()
        } else {
            20.0 - 300f32.sqrt()
        };
        let (lo, hi) = if ccw { (-depth, 0.0) } else { (0.0, depth) };
        assert!(
            (b[1] - lo).abs() < 0.01 && (b[1] + b[3] - hi).abs() < 0.01,
            "{cmd}: {b:?} vs {lo}..{hi}"
        );
    }
    assert_eq!(vgGetError(), VG_NO_ERROR);

    // vgModifyPathCoords moves the square.
    let moved: [i16; 6] = [40, 40, 60, -20, 120, 40];
    // SAFETY: the 6 coordinates of all 5 segments.
    unsafe { vgModifyPathCoords(p, 0, 5, moved.as_ptr().cast()) };
    vgClear(0, 0, W as i32, H as i32);
    vgDrawPath(p, VG_FILL_PATH);
    assert_eq!(bbox(&pixels(&gfx), RED), (30, 30, 70, 70));
}

#[test]
fn gradients_ramp_across_the_shape() {
    let gfx = setup();
    let path = new_path();
    vguRect(path, 0.0, 0.0, 128.0, 16.0);
    let p = vgCreatePaint();
    vgSetParameteri(p, VG_PAINT_TYPE, VG_PAINT_TYPE_LINEAR_GRADIENT);
    // SAFETY: 4 and 10 floats of local arrays.
    unsafe {
        vgSetParameterfv(
            p,
            VG_PAINT_LINEAR_GRADIENT,
            4,
            [0.0, 0.0, 128.0, 0.0].as_ptr(),
        );
        let stops = [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0];
        vgSetParameterfv(p, VG_PAINT_COLOR_RAMP_STOPS, 10, stops.as_ptr());
    }
    vgSetPaint(p, VG_FILL_PATH);
    vgDrawPath(path, VG_FILL_PATH);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    let (left, mid, right) = (at(&px, 0, 8), at(&px, 64, 8), at(&px, 127, 8));
    assert!(
        left >> 24 >= 0xF8 && (left >> 8) & 0xFF <= 0x08,
        "{left:08x}"
    );
    assert!(
        right >> 24 <= 0x08 && (right >> 8) & 0xFF >= 0xF8,
        "{right:08x}"
    );
    let (r, b) = (mid >> 24, (mid >> 8) & 0xFF);
    assert!(
        (0x70..=0x90).contains(&r) && (0x70..=0x90).contains(&b),
        "{mid:08x}"
    );

    // Radial: white at the centre, black at the rim and beyond (pad).
    let disc = new_path();
    vguRect(disc, 0.0, 32.0, 128.0, 96.0);
    vgSetParameteri(p, VG_PAINT_TYPE, VG_PAINT_TYPE_RADIAL_GRADIENT);
    // SAFETY: 5 and 10 floats of local arrays.
    unsafe {
        let radial = [64.0, 80.0, 64.0, 80.0, 40.0];
        vgSetParameterfv(p, VG_PAINT_RADIAL_GRADIENT, 5, radial.as_ptr());
        let stops = [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        vgSetParameterfv(p, VG_PAINT_COLOR_RAMP_STOPS, 10, stops.as_ptr());
    }
    vgDrawPath(disc, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert!(at(&px, 64, 80) >> 24 >= 0xF0, "{:08x}", at(&px, 64, 80));
    assert_eq!(at(&px, 64, 125), BLACK);
    let half = at(&px, 84, 80) >> 24;
    assert!((0x70..=0x90).contains(&half), "{half:x}");
}

#[test]
fn the_paint_matrix_moves_the_gradient_not_the_shape() {
    let gfx = setup();
    let path = new_path();
    vguRect(path, 0.0, 0.0, 128.0, 8.0);
    let p = vgCreatePaint();
    vgSetParameteri(p, VG_PAINT_TYPE, VG_PAINT_TYPE_LINEAR_GRADIENT);
    // SAFETY: 4 and 10 floats of local arrays.
    unsafe {
        vgSetParameterfv(
            p,
            VG_PAINT_LINEAR_GRADIENT,
            4,
            [0.0, 0.0, 64.0, 0.0].as_ptr(),
        );
        let stops = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        vgSetParameterfv(p, VG_PAINT_COLOR_RAMP_STOPS, 10, stops.as_ptr());
    }
    vgSetPaint(p, VG_FILL_PATH);
    vgDrawPath(path, VG_FILL_PATH);
    let before = pixels(&gfx);
    // Paint space moved 64 right: the ramp now runs over x = 64..128.
    vgSeti(VG_MATRIX_MODE, VG_MATRIX_FILL_PAINT_TO_USER);
    vgTranslate(64.0, 0.0);
    vgDrawPath(path, VG_FILL_PATH);
    let after = pixels(&gfx);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let grey = |px: &[u32], x| at(px, x, 4) >> 24;
    assert!(grey(&before, 100) >= 0xFC, "padded white past the end");
    assert!((0x70..=0x90).contains(&grey(&before, 32)));
    assert!(grey(&after, 32) <= 0x03, "padded black before the start");
    assert!((0x70..=0x90).contains(&grey(&after, 96)));
    // The shape itself did not move.
    assert_eq!(bbox(&after, at(&after, 0, 4)).1, 0);
    assert_eq!(at(&after, 0, 8), BLACK);
    assert_ne!(at(&after, 127, 7), BLACK);
}

#[test]
fn images_upload_draw_and_pattern() {
    let gfx = setup();
    let img = vgCreateImage(VG_sRGBA_8888, 4, 4, VG_IMAGE_QUALITY_NONANTIALIASED);
    assert_ne!(img, VG_INVALID_HANDLE);
    // Pixel (x, y) = 0x10·x, 0x10·y, 0x80, opaque.
    let data: Vec<u32> = (0..16)
        .map(|i| u32::from_be_bytes([0x10 * (i % 4) as u8, 0x10 * (i / 4) as u8, 0x80, 0xFF]))
        .collect();
    // SAFETY: 4 rows of 4 pixels, 16 bytes apart, of a live vector.
    unsafe { vgImageSubData(img, data.as_ptr().cast(), 16, VG_sRGBA_8888, 0, 0, 4, 4) };
    let mut back = vec![0u32; 16];
    // SAFETY: room for 4 rows of 4 pixels.
    unsafe { vgGetImageSubData(img, back.as_mut_ptr().cast(), 16, VG_sRGBA_8888, 0, 0, 4, 4) };
    assert_eq!(back, data);
    assert_eq!(vgGetParameteri(img, VG_IMAGE_WIDTH), 4);

    vgSeti(VG_MATRIX_MODE, VG_MATRIX_IMAGE_USER_TO_SURFACE);
    vgLoadIdentity();
    vgTranslate(10.0, 20.0);
    vgDrawImage(img);
    vgTranslate(20.0, 0.0);
    vgScale(2.0, 2.0);
    vgDrawImage(img);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    for y in 0..4 {
        for x in 0..4 {
            let want = data[(y * 4 + x) as usize];
            assert_eq!(at(&px, 10 + x, 20 + y), want, "({x}, {y})");
            assert_eq!(
                at(&px, 30 + 2 * x + 1, 20 + 2 * y),
                want,
                "scaled ({x}, {y})"
            );
        }
    }

    // vgReadPixels gives the surface back in VG's format.
    let mut read = vec![0u32; 16];
    // SAFETY: room for 4 rows of 4 pixels.
    unsafe { vgReadPixels(read.as_mut_ptr().cast(), 16, VG_sRGBA_8888, 10, 20, 4, 4) };
    assert_eq!(read, data);

    // A pattern paint repeating the image over a 16×16 square at (64, 64).
    let p = vgCreatePaint();
    vgSetParameteri(p, VG_PAINT_TYPE, VG_PAINT_TYPE_PATTERN);
    vgSetParameteri(p, VG_PAINT_PATTERN_TILING_MODE, VG_TILE_REPEAT);
    vgPaintPattern(p, img);
    vgSetPaint(p, VG_FILL_PATH);
    let path = new_path();
    vguRect(path, 64.0, 64.0, 16.0, 16.0);
    vgDrawPath(path, VG_FILL_PATH);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    for (x, y) in [(64, 64), (69, 66), (79, 79)] {
        assert_eq!(
            at(&px, x, y),
            data[((y % 4) * 4 + x % 4) as usize],
            "({x}, {y})"
        );
    }
    vgDestroyImage(img);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn image_modes_multiply_and_stencil_use_the_fill_paint() {
    let gfx = setup();
    let img = vgCreateImage(VG_sRGBA_8888, 4, 4, VG_IMAGE_QUALITY_FASTER);
    // Opaque mid grey, except alpha 0x80 in the top row (y = 3).
    let data: Vec<u32> = (0..16)
        .map(|i| if i / 4 == 3 { 0xFFFF_FF80 } else { 0x8080_80FF })
        .collect();
    // SAFETY: 4 rows of 4 pixels, 16 bytes apart.
    unsafe { vgImageSubData(img, data.as_ptr().cast(), 16, VG_sRGBA_8888, 0, 0, 4, 4) };
    paint(RED, VG_FILL_PATH);
    vgSeti(VG_MATRIX_MODE, VG_MATRIX_IMAGE_USER_TO_SURFACE);
    vgTranslate(10.0, 10.0);
    vgSeti(VG_IMAGE_MODE, VG_DRAW_IMAGE_MULTIPLY);
    vgDrawImage(img);
    vgTranslate(10.0, 0.0);
    vgSeti(VG_IMAGE_MODE, VG_DRAW_IMAGE_STENCIL);
    vgDrawImage(img);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    // Multiply: grey × red = (0x80, 0, 0); stencil: red at the image's alpha over black.
    assert_eq!(at(&px, 11, 11), 0x8000_00FF);
    assert_eq!(at(&px, 21, 11), RED);
    assert_eq!(at(&px, 21, 13), 0x8000_00FF);
}

#[test]
fn pixel_copies_move_exact_pixels() {
    let gfx = setup();
    // A 3×2 block of distinct colours, written at (5, 6).
    let block: Vec<u32> = (0..6u32)
        .map(|i| 0x1020_3000 + i * 0x0101_0100 + 0xFF)
        .collect();
    // SAFETY: 2 rows of 3 pixels, 12 bytes apart, of a live vector.
    unsafe { vgWritePixels(block.as_ptr().cast(), 12, VG_sRGBA_8888, 5, 6, 3, 2) };
    let px = pixels(&gfx);
    for i in 0..6u32 {
        assert_eq!(
            at(&px, 5 + i % 3, 6 + i / 3),
            block[i as usize],
            "written {i}"
        );
    }
    // Surface → surface, overlapping its source.
    vgCopyPixels(6, 6, 5, 6, 3, 2);
    let px = pixels(&gfx);
    for i in 0..6u32 {
        assert_eq!(
            at(&px, 6 + i % 3, 6 + i / 3),
            block[i as usize],
            "copied {i}"
        );
    }
    // Surface → image → image → surface.
    let a = vgCreateImage(VG_sRGBA_8888, 8, 8, VG_IMAGE_QUALITY_FASTER);
    let b = vgCreateImage(VG_sRGBA_8888, 8, 8, VG_IMAGE_QUALITY_FASTER);
    vgGetPixels(a, 0, 0, 6, 6, 3, 2);
    vgCopyImage(b, 2, 2, a, 0, 0, 3, 2, VG_FALSE);
    vgSetPixels(50, 50, b, 2, 2, 3, 2);
    let px = pixels(&gfx);
    for i in 0..6u32 {
        assert_eq!(
            at(&px, 50 + i % 3, 50 + i / 3),
            block[i as usize],
            "via images {i}"
        );
    }
    // vgClearImage fills with the clear colour (opaque black from setup).
    vgClearImage(b, 0, 0, 8, 8);
    let mut back = [0u32; 64];
    // SAFETY: room for 8 rows of 8 pixels.
    unsafe { vgGetImageSubData(b, back.as_mut_ptr().cast(), 32, VG_sRGBA_8888, 0, 0, 8, 8) };
    assert!(back.iter().all(|&p| p == BLACK));
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn masks_limit_drawing_to_their_coverage() {
    let gfx = setup();
    let full = new_path();
    vguRect(full, 0.0, 0.0, W as f32, H as f32);
    paint(RED, VG_FILL_PATH);
    vgSeti(VG_MASKING, VG_TRUE as i32);

    // Mask = a 20×10 rectangle (set), then a union with another, minus a 4×4 hole.
    let a = new_path();
    vguRect(a, 10.0, 10.0, 20.0, 10.0);
    vgRenderToMask(a, VG_FILL_PATH, VG_SET_MASK);
    let b = new_path();
    vguRect(b, 60.0, 60.0, 10.0, 10.0);
    vgRenderToMask(b, VG_FILL_PATH, VG_UNION_MASK);
    let hole = new_path();
    vguRect(hole, 12.0, 12.0, 4.0, 4.0);
    vgRenderToMask(hole, VG_FILL_PATH, VG_SUBTRACT_MASK);
    vgDrawPath(full, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 200 + 100 - 16);
    assert_eq!(at(&px, 13, 13), BLACK);
    assert_eq!(at(&px, 20, 15), RED);
    assert_eq!(at(&px, 65, 65), RED);

    // Intersect with a rectangle overlapping half of the first one.
    vgClear(0, 0, W as i32, H as i32);
    let c = new_path();
    vguRect(c, 20.0, 0.0, 100.0, 128.0);
    vgRenderToMask(c, VG_FILL_PATH, VG_INTERSECT_MASK);
    vgDrawPath(full, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 100 + 100);
    assert_eq!(bbox(&px, RED), (20, 10, 70, 70));

    // vgMask with an image's alpha: a 4×4 image, left half opaque, placed at (100, 100)
    // on a cleared (zero) mask.
    vgMask(VG_INVALID_HANDLE, VG_CLEAR_MASK, 0, 0, W as i32, H as i32);
    let img = vgCreateImage(VG_sRGBA_8888, 4, 4, VG_IMAGE_QUALITY_FASTER);
    let data: Vec<u32> = (0..16)
        .map(|i| if i % 4 < 2 { 0xFFFF_FFFF } else { 0 })
        .collect();
    // SAFETY: 4 rows of 4 pixels, 16 bytes apart, of a live vector.
    unsafe { vgImageSubData(img, data.as_ptr().cast(), 16, VG_sRGBA_8888, 0, 0, 4, 4) };
    vgMask(img, VG_SET_MASK, 100, 100, 4, 4);
    vgClear(0, 0, W as i32, H as i32);
    vgDrawPath(full, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 8);
    assert_eq!(bbox(&px, RED), (100, 100, 102, 104));

    // A mask layer: filled with 1 over 3×3, applied as a union, copied back from the mask.
    let layer = vgCreateMaskLayer(8, 8);
    vgFillMaskLayer(layer, 0, 0, 8, 8, 0.0);
    vgFillMaskLayer(layer, 0, 0, 3, 3, 1.0);
    vgMask(layer, VG_UNION_MASK, 50, 20, 8, 8);
    vgClear(0, 0, W as i32, H as i32);
    vgDrawPath(full, VG_FILL_PATH);
    assert_eq!(count(&pixels(&gfx), RED), 8 + 9);
    // The 8×8 mask at (100, 100) (the image's two opaque columns) copied into the layer
    // and set at the origin: 8 more pixels, at (0..2, 0..4).
    vgCopyMask(layer, 0, 0, 100, 100, 8, 8);
    vgMask(layer, VG_SET_MASK, 0, 0, 8, 8);
    vgClear(0, 0, W as i32, H as i32);
    vgDrawPath(full, VG_FILL_PATH);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 8 + 9 + 8);
    assert_eq!(
        (at(&px, 1, 3), at(&px, 2, 3), at(&px, 1, 4)),
        (RED, BLACK, BLACK)
    );
    vgDestroyMaskLayer(layer);

    // Masking off: everything drawn again.
    vgSeti(VG_MASKING, VG_FALSE as i32);
    vgDrawPath(full, VG_FILL_PATH);
    assert_eq!(count(&pixels(&gfx), RED), (W * H) as usize);
    assert_eq!(vgGetError(), VG_NO_ERROR);
    vgMask(img, 0x1234, 0, 0, 1, 1);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    vgRenderToMask(0xDEAD_BEEF, VG_FILL_PATH, VG_SET_MASK);
    assert_eq!(vgGetError(), VG_BAD_HANDLE_ERROR);
}

#[test]
fn glyphs_draw_at_the_glyph_origin_and_advance_it() {
    let gfx = setup();
    paint(RED, VG_FILL_PATH);
    let font = vgCreateFont(2);
    // Glyph 7: a 6×10 box whose own origin is (1, 0); escapement 8.
    let bar = new_path();
    vguRect(bar, 1.0, 0.0, 6.0, 10.0);
    let (origin, escape) = ([1.0f32, 0.0], [8.0f32, 0.0]);
    // SAFETY: 2 floats at each pointer.
    unsafe { vgSetGlyphToPath(font, 7, bar, VG_FALSE, origin.as_ptr(), escape.as_ptr()) };
    // Changing the path afterwards does not change the glyph (it holds a copy).
    vguRect(bar, 50.0, 50.0, 5.0, 5.0);
    // Glyph 9: a 2×2 image, origin (0, 0), escapement 3.
    let img = vgCreateImage(VG_sRGBA_8888, 2, 2, VG_IMAGE_QUALITY_FASTER);
    let white = [0xFFFF_FFFFu32; 4];
    // SAFETY: 2 rows of 2 pixels, 8 bytes apart.
    unsafe { vgImageSubData(img, white.as_ptr().cast(), 8, VG_sRGBA_8888, 0, 0, 2, 2) };
    // SAFETY: 2 floats at each pointer.
    unsafe { vgSetGlyphToImage(font, 9, img, [0.0, 0.0].as_ptr(), [3.0, 0.0].as_ptr()) };
    assert_eq!(vgGetParameteri(font, VG_FONT_NUM_GLYPHS), 2);

    // SAFETY: 2 floats.
    unsafe { vgSetfv(VG_GLYPH_ORIGIN, 2, [20.0, 30.0].as_ptr()) };
    let glyphs = [7u32, 7, 9];
    let adjust_x = [0.0f32, 2.0, 0.0];
    // SAFETY: 3 indices and 3 x adjustments; no y adjustments.
    unsafe {
        vgDrawGlyphs(
            font,
            3,
            glyphs.as_ptr(),
            adjust_x.as_ptr(),
            ptr::null(),
            VG_FILL_PATH,
            VG_FALSE,
        )
    };
    assert_eq!(vgGetError(), VG_NO_ERROR);
    let px = pixels(&gfx);
    // Boxes at x = 20..26 and 28..34 (origin 20, then 20 + 8), the image at 20 + 8 + 2 + 8.
    assert_eq!(count(&px, RED), 2 * 60);
    assert_eq!(bbox(&px, RED), (20, 30, 34, 40));
    assert_eq!(bbox(&px, 0xFFFF_FFFF), (38, 30, 40, 32));
    let mut at_now = [0.0f32; 2];
    // SAFETY: room for 2 floats.
    unsafe { vgGetfv(VG_GLYPH_ORIGIN, 2, at_now.as_mut_ptr()) };
    assert_eq!(at_now, [41.0, 30.0]);

    // An undefined glyph is an illegal argument; paint modes 0 only advance.
    vgDrawGlyph(font, 3, VG_FILL_PATH, VG_FALSE);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);
    vgDrawGlyph(font, 7, 0, VG_FALSE);
    // SAFETY: room for 2 floats.
    unsafe { vgGetfv(VG_GLYPH_ORIGIN, 2, at_now.as_mut_ptr()) };
    assert_eq!(at_now, [49.0, 30.0]);
    vgClearGlyph(font, 7);
    vgDestroyFont(font);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn path_measures_transform_and_interpolation() {
    let gfx = setup();
    let a = new_path();
    vguRect(a, 0.0, 0.0, 30.0, 40.0);
    assert!((vgPathLength(a, 0, 5) - 140.0).abs() < 1e-3);
    let (mut x, mut y, mut tx, mut ty) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    // SAFETY: four writable floats.
    unsafe { vgPointAlongPath(a, 0, 5, 45.0, &mut x, &mut y, &mut tx, &mut ty) };
    assert_eq!((x, y, tx, ty), (30.0, 15.0, 0.0, 1.0));
    let circle = new_path();
    vguEllipse(circle, 0.0, 0.0, 20.0, 20.0);
    let c = vgPathLength(circle, 0, 4);
    // Measured 62.759 vs 20π = 62.832 (−0.12 %): arcs become cubic Béziers, then lines.
    assert!(
        (c / (20.0 * std::f32::consts::PI) - 1.0).abs() < 2e-3,
        "{c}"
    );
    vgPathLength(a, 3, 5);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);

    // vgTransformPath bakes the matrix in: drawn with the identity it lands where `a`
    // drawn through the matrix would.
    vgTranslate(50.0, 20.0);
    vgScale(2.0, 1.0);
    let t = new_path();
    vgTransformPath(t, a);
    vgLoadIdentity();
    assert_eq!(bounds(t, false), [50.0, 20.0, 60.0, 40.0]);

    // Halfway between a 10×10 and a 30×50 square at the origin: 20×30.
    let small = new_path();
    vguRect(small, 0.0, 0.0, 10.0, 10.0);
    let big = new_path();
    vguRect(big, 0.0, 0.0, 30.0, 50.0);
    let mid = new_path();
    assert_eq!(vgInterpolatePath(mid, small, big, 0.5), VG_TRUE);
    assert_eq!(bounds(mid, false), [0.0, 0.0, 20.0, 30.0]);
    paint(RED, VG_FILL_PATH);
    vgDrawPath(mid, VG_FILL_PATH);
    assert_eq!(count(&pixels(&gfx), RED), 600);
    // A circle and a rectangle do not interpolate.
    assert_eq!(vgInterpolatePath(mid, small, circle, 0.5), VG_FALSE);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

/// An 8×8 image of `format` from 0xRRGGBBAA words, bottom row first.
fn image_of(px: &[u32; 64]) -> VGImage {
    let img = vgCreateImage(VG_sRGBA_8888, 8, 8, VG_IMAGE_QUALITY_FASTER);
    // SAFETY: 8 rows of 8 pixels, 32 bytes apart.
    unsafe { vgImageSubData(img, px.as_ptr().cast(), 32, VG_sRGBA_8888, 0, 0, 8, 8) };
    img
}

fn image_pixels(img: VGImage) -> [u32; 64] {
    let mut out = [0u32; 64];
    // SAFETY: room for 8 rows of 8 pixels.
    unsafe { vgGetImageSubData(img, out.as_mut_ptr().cast(), 32, VG_sRGBA_8888, 0, 0, 8, 8) };
    out
}

#[test]
fn filters_child_images_and_warps() {
    let _gfx = setup();
    // One opaque white pixel at (3, 4) on transparent black.
    let mut px = [0u32; 64];
    px[4 * 8 + 3] = 0xFFFF_FFFF;
    let src = image_of(&px);
    let dst = vgCreateImage(VG_sRGBA_8888, 8, 8, VG_IMAGE_QUALITY_FASTER);

    // A 3×1 box kernel shifted by 1 spreads the pixel over x = 2..4.
    let k = [1i16, 1, 1];
    // SAFETY: 3 shorts.
    unsafe { vgConvolve(dst, src, 3, 1, 1, 0, k.as_ptr(), 1.0, 0.0, VG_TILE_FILL) };
    let out = image_pixels(dst);
    let lit: Vec<usize> = (0..64).filter(|&i| out[i] == 0xFFFF_FFFF).collect();
    assert_eq!(lit, vec![4 * 8 + 2, 4 * 8 + 3, 4 * 8 + 4]);

    // A Gaussian keeps the total (no energy leaves an 8×8 image around a centre pixel
    // for σ = 0.8 with zero fill), peaked at the pixel.
    vgGaussianBlur(dst, src, 0.8, 0.8, VG_TILE_FILL);
    let out = image_pixels(dst);
    let total: u32 = out.iter().map(|p| p >> 24).sum();
    assert!((250..=262).contains(&total), "{total}");
    assert_eq!(out.iter().max_by_key(|p| *p >> 24), Some(&out[4 * 8 + 3]));

    // A colour matrix that keeps only green, and a lookup that inverts red.
    let mut m = [0.0f32; 20];
    (m[5], m[15]) = (1.0, 1.0);
    // SAFETY: 20 floats.
    unsafe { vgColorMatrix(dst, src, m.as_ptr()) };
    assert_eq!(image_pixels(dst)[4 * 8 + 3], 0x00FF_00FF);
    let ident: Vec<u8> = (0..=255).collect();
    let invert: Vec<u8> = (0..=255).rev().collect();
    // SAFETY: four 256-byte tables.
    unsafe {
        vgLookup(
            dst,
            src,
            invert.as_ptr(),
            ident.as_ptr(),
            ident.as_ptr(),
            ident.as_ptr(),
            0,
            0,
        )
    };
    let out = image_pixels(dst);
    assert_eq!((out[0], out[4 * 8 + 3]), (0xFF00_0000, 0x00FF_FFFF));
    let table: Vec<u32> = (0..256u32).map(|i| (i << 8) | 0xFF).collect();
    // SAFETY: 256 integers.
    unsafe { vgLookupSingle(dst, src, table.as_ptr(), 8, 0, 0) };
    assert_eq!(image_pixels(dst)[4 * 8 + 3], 0x0000_FFFF);
    // Source and destination must differ.
    vgGaussianBlur(src, src, 1.0, 1.0, VG_TILE_PAD);
    assert_eq!(vgGetError(), VG_ILLEGAL_ARGUMENT_ERROR);

    // A child image copies its parent's rectangle and names its parent.
    let child = vgChildImage(src, 2, 3, 4, 4);
    assert_eq!(vgGetParent(child), src);
    assert_eq!(vgGetParent(src), src);
    let mut c = [0u32; 16];
    // SAFETY: room for 4 rows of 4 pixels.
    unsafe { vgGetImageSubData(child, c.as_mut_ptr().cast(), 16, VG_sRGBA_8888, 0, 0, 4, 4) };
    assert_eq!(c[4 + 1], 0xFFFF_FFFF);
    assert_eq!(c.iter().filter(|&&p| p != 0).count(), 1);

    // Warps map corners; a degenerate quad is a bad warp.
    let mut w = [0.0f32; 9];
    // SAFETY: room for 9 floats.
    let e = unsafe {
        vguComputeWarpSquareToQuad(
            10.0,
            10.0,
            50.0,
            20.0,
            5.0,
            40.0,
            60.0,
            70.0,
            w.as_mut_ptr(),
        )
    };
    assert_eq!(e, VGU_NO_ERROR);
    let (x, y) = OpenVG::matrix::Mat3(w).apply(1.0, 1.0);
    assert!((x - 60.0).abs() < 1e-3 && (y - 70.0).abs() < 1e-3);
    // SAFETY: room for 9 floats.
    let e = unsafe {
        vguComputeWarpQuadToQuad(
            0.0,
            0.0,
            2.0,
            0.0,
            0.0,
            2.0,
            2.0,
            2.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            1.0,
            1.0,
            1.0,
            w.as_mut_ptr(),
        )
    };
    assert_eq!(e, VGU_NO_ERROR);
    assert_eq!(OpenVG::matrix::Mat3(w).apply(0.5, 0.25), (1.0, 0.5));
    // SAFETY: room for 9 floats.
    let e = unsafe {
        vguComputeWarpQuadToSquare(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, w.as_mut_ptr())
    };
    assert_eq!(e, VGU_BAD_WARP_ERROR);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn blend_modes_follow_their_formulas_on_an_opaque_destination() {
    let _gfx = setup();
    let path = new_path();
    vguRect(path, 0.0, 0.0, 4.0, 4.0);
    let p = vgCreatePaint();
    vgSetPaint(p, VG_FILL_PATH);
    let dst = [0.4f32, 0.6, 0.2, 1.0];
    let half = [0.8f32, 0.2, 0.5, 0.5];
    let opaque = [0.8f32, 0.2, 0.5, 1.0];
    // (mode, source, expected non-premultiplied result) for d = (0.4, 0.6, 0.2, 1).
    let cases: [(VGenum, [f32; 4], [f32; 4]); 10] = [
        (VG_BLEND_SRC, half, half),
        (VG_BLEND_SRC_OVER, half, [0.6, 0.4, 0.35, 1.0]),
        (VG_BLEND_DST_OVER, half, dst),
        (VG_BLEND_SRC_IN, half, half),
        (VG_BLEND_DST_IN, half, [0.4, 0.6, 0.2, 0.5]),
        (VG_BLEND_MULTIPLY, half, [0.36, 0.36, 0.15, 1.0]),
        (VG_BLEND_SCREEN, half, [0.64, 0.64, 0.4, 1.0]),
        (VG_BLEND_DARKEN, opaque, [0.4, 0.2, 0.2, 1.0]),
        (VG_BLEND_LIGHTEN, opaque, [0.8, 0.6, 0.5, 1.0]),
        (VG_BLEND_ADDITIVE, half, [0.8, 0.7, 0.45, 1.0]),
    ];
    for (mode, src, want) in cases {
        // SAFETY: 4 floats of local arrays.
        unsafe {
            vgSetfv(VG_CLEAR_COLOR, 4, dst.as_ptr());
            vgSetParameterfv(p, VG_PAINT_COLOR, 4, src.as_ptr());
        }
        vgSeti(VG_BLEND_MODE, VG_BLEND_SRC_OVER);
        vgClear(0, 0, 8, 8);
        vgSeti(VG_BLEND_MODE, mode);
        vgDrawPath(path, VG_FILL_PATH);
        let mut got = 0u32;
        // SAFETY: room for one pixel.
        unsafe { vgReadPixels((&mut got as *mut u32).cast(), 4, VG_sRGBA_8888, 1, 1, 1, 1) };
        let got = got.to_be_bytes();
        for c in 0..4 {
            let w = (want[c] * 255.0).round();
            assert!(
                (got[c] as f32 - w).abs() <= 3.0,
                "mode 0x{mode:x}: {got:?} vs {want:?}"
            );
        }
    }
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn dashes_cover_the_on_fraction() {
    let gfx = setup();
    let path = new_path();
    vguLine(path, 10.0, 64.0, 110.0, 64.0);
    paint(RED, VG_STROKE_PATH);
    vgSetf(VG_STROKE_LINE_WIDTH, 4.0);
    // SAFETY: 2 floats of a local array.
    unsafe { vgSetfv(VG_STROKE_DASH_PATTERN, 2, [10.0, 10.0].as_ptr()) };
    vgDrawPath(path, VG_STROKE_PATH);
    let px = pixels(&gfx);
    assert_eq!(count(&px, RED), 4 * 50, "five 10-long dashes of width 4");
    assert_eq!(at(&px, 15, 64), RED);
    assert_eq!(at(&px, 25, 64), BLACK);
    assert_eq!(vgGetError(), VG_NO_ERROR);
}

#[test]
fn round_rect_and_arc_shapes_fill_their_area() {
    let gfx = setup();
    paint(RED, VG_FILL_PATH);
    let rr = new_path();
    assert_eq!(
        vguRoundRect(rr, 10.0, 10.0, 100.0, 60.0, 20.0, 20.0),
        VGU_NO_ERROR
    );
    vgDrawPath(rr, VG_FILL_PATH);
    // 100·60 minus four corners of (10² − π·10²/4).
    let expect = 6000.0 - 4.0 * (100.0 - std::f64::consts::PI * 25.0);
    let got = count(&pixels(&gfx), RED) as f64;
    println!("round rect: {got} px vs {expect:.1}");
    assert!((got / expect - 1.0).abs() < 0.01, "{got} vs {expect}");
    assert_eq!(bounds(rr, false), [10.0, 10.0, 100.0, 60.0]);

    vgClear(0, 0, W as i32, H as i32);
    let pie = new_path();
    assert_eq!(
        vguArc(pie, 64.0, 64.0, 100.0, 100.0, 0.0, 90.0, VGU_ARC_PIE),
        VGU_NO_ERROR
    );
    vgDrawPath(pie, VG_FILL_PATH);
    let px = pixels(&gfx);
    let expect = std::f64::consts::PI * 2500.0 / 4.0;
    let got = count(&px, RED) as f64;
    println!("quarter pie r=50: {got} px vs {expect:.1}");
    assert!((got / expect - 1.0).abs() < 0.01, "{got} vs {expect}");
    assert_eq!(bbox(&px, RED).0, 64);
    assert_eq!(bbox(&px, RED).1, 64);
}

extern "C" {
    fn dlopen(filename: *const std::os::raw::c_char, flag: i32) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const std::os::raw::c_char) -> *mut c_void;
}

#[test]
fn the_cdylib_exports_every_openvg_1_1_function_under_its_soname() {
    const RTLD_NOW: i32 = 2;
    const RTLD_NOLOAD: i32 = 4;
    // target/debug/deps/<test> → target/debug/deps/libOpenVG.so, the one this build made.
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libOpenVG.so");
    let c = std::ffi::CString::new(lib.to_str().unwrap()).unwrap();
    // SAFETY: NUL-terminated names; the library's initialisers do nothing.
    unsafe {
        let h = dlopen(c.as_ptr(), RTLD_NOW);
        assert!(!h.is_null(), "dlopen {}", lib.display());
        // The project's OpenVG 1.1 table, itself checked against openvg.h (87) and vgu.h (9).
        let vg = gpuheat_registry::Registry::load_vg().unwrap();
        assert_eq!(vg.commands.len(), 96);
        for name in vg.commands.iter().map(|c| c.name.as_str()) {
            let c = std::ffi::CString::new(name).unwrap();
            assert!(!dlsym(h, c.as_ptr()).is_null(), "{name} is not exported");
        }
        // Already loaded, it answers to its soname.
        assert!(!dlopen(c"libOpenVG.so.1".as_ptr(), RTLD_NOW | RTLD_NOLOAD).is_null());
    }
}
