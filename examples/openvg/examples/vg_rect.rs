//! A VG program as gpuheat sees one: it links `libOpenVG.so.1` dynamically (`-lOpenVG`),
//! so every `vg*` call is a dynamic import an interposer can see, creates a GLES 3 context
//! on Mesa's surfaceless EGL platform, fills a 30×40 red rectangle at (10, 20) on black,
//! and prints `red=<pixels>` (1200) and `vg_from=<file the vgDrawPath it called lives in>`.
//!
//! `--frames N`: draw the rectangle in N frames, each ended by `eglSwapBuffers` (so a profiler
//! sees N frames of 2 VG work calls, vgClear and vgDrawPath, after the set-up), then read.
//!
//! Built by `cargo test -p gpuheat-openvg` (or `cargo build -p gpuheat-openvg --examples`);
//! run: `LD_LIBRARY_PATH=target/debug/deps target/debug/examples/vg_rect`.

use std::os::raw::{c_char, c_int, c_void};

use gpuheat_examples::gfx::{Api, Gfx};

type VGHandle = u32;

#[link(name = "OpenVG")]
extern "C" {
    fn vgCreatePath(
        format: i32,
        datatype: i32,
        scale: f32,
        bias: f32,
        segment_hint: i32,
        coord_hint: i32,
        caps: u32,
    ) -> VGHandle;
    fn vgCreatePaint() -> VGHandle;
    fn vgSetColor(paint: VGHandle, rgba: u32);
    fn vgSetPaint(paint: VGHandle, modes: u32);
    fn vgSetfv(param: i32, count: i32, values: *const f32);
    fn vgClear(x: i32, y: i32, w: i32, h: i32);
    fn vgDrawPath(path: VGHandle, modes: u32);
    fn vgFinish();
    fn vgGetError() -> i32;
    fn vguRect(path: VGHandle, x: f32, y: f32, w: f32, h: f32) -> i32;
}

#[repr(C)]
struct DlInfo {
    fname: *const c_char,
    fbase: *mut c_void,
    sname: *const c_char,
    saddr: *mut c_void,
}

extern "C" {
    fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut frames = 0u32;
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().map(|v| v.parse::<u32>())) {
            ("--frames", Some(Ok(n))) => frames = n,
            _ => {
                eprintln!("vg_rect: usage: vg_rect [--frames N]");
                std::process::exit(2);
            }
        }
    }
    let gfx = match Gfx::new(Api::Gles, 64, 64) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("vg_rect: {e}");
            std::process::exit(1);
        }
    };
    // SAFETY: VG calls on the current context with valid arguments; dladdr fills a local.
    let (error, from) = unsafe {
        vgSetfv(0x1121, 4, [0.0, 0.0, 0.0, 1.0].as_ptr());
        vgClear(0, 0, 64, 64);
        let path = vgCreatePath(0, 3, 1.0, 0.0, 0, 0, 0xFFF);
        vguRect(path, 10.0, 20.0, 30.0, 40.0);
        let paint = vgCreatePaint();
        vgSetColor(paint, 0xFF00_00FF);
        vgSetPaint(paint, 2);
        vgDrawPath(path, 2);
        for _ in 0..frames {
            if let Err(e) = gfx.swap() {
                eprintln!("vg_rect: {e}");
                std::process::exit(1);
            }
            vgClear(0, 0, 64, 64);
            vgDrawPath(path, 2);
        }
        vgFinish();
        let mut info = DlInfo {
            fname: std::ptr::null(),
            fbase: std::ptr::null_mut(),
            sname: std::ptr::null(),
            saddr: std::ptr::null_mut(),
        };
        let from = if dladdr(vgDrawPath as *const c_void, &mut info) != 0 && !info.fname.is_null() {
            std::ffi::CStr::from_ptr(info.fname)
                .to_string_lossy()
                .into_owned()
        } else {
            String::from("?")
        };
        (vgGetError(), from)
    };
    let red = gfx
        .read_pixels()
        .chunks_exact(4)
        .filter(|p| *p == [255, 0, 0, 255])
        .count();
    println!("red={red}");
    println!("vg_from={from}");
    if error != 0 {
        eprintln!("vg_rect: VG error 0x{error:04X}");
        std::process::exit(1);
    }
}
