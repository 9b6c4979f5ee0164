//! OpenVG calls in captured frames: their serialized time, the GL calls a VG library makes
//! inside them, what their draws covered, and the values they pass by pointer.
//!
//! - **Timing** (full mode): a VG work call is bracketed by the real `vgFinish` — drain,
//!   clock, call, drain, clock — which works on a hardware VG core as on a library layered
//!   on GLES. The calibrated cost of an empty bracket is subtracted, and so is the agent's own
//!   work inside the call (the brackets of its GL children), so the time is the VG call's.
//! - **Nesting**: while a VG call is in flight on a thread, every call recorded on that thread
//!   is its child (the library's GL calls); children are bracketed as usual, so they carry
//!   their own time, but are neither painted nor replayed for geometry: the VG draw is
//!   painted as one, on the host, from its path. VG calls made inside a VG call are children
//!   too (brackets never nest).
//! - **Coverage**: at a `vgDrawPath`, the state that decides what it covers (path version,
//!   matrix, fill rule, stroke) is read with the real VG getters, which raise no error on the
//!   valid parameters used here, so the program's `vgGetError` is unchanged. The matrix mode
//!   is set back to the program's.
//!
//! Every VG call the agent makes here runs inside the agent (`Reentry`), so the GL calls a
//! layered library makes for it are not recorded.

use crate::clock::monotonic_ns;
use crate::enums::{
    VG_A_1, VG_A_4, VG_A_8, VG_BW_1, VG_FILL_RULE, VG_IMAGE_FORMAT, VG_IMAGE_HEIGHT,
    VG_IMAGE_WIDTH, VG_LL_8, VG_LRGBA_8888, VG_LRGBA_8888_PRE, VG_LRGBX_8888,
    VG_MATRIX_IMAGE_USER_TO_SURFACE, VG_MATRIX_MODE, VG_MATRIX_PATH_USER_TO_SURFACE,
    VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS, VG_SCISSORING, VG_SCISSOR_RECTS, VG_SL_8,
    VG_SRGBA_4444, VG_SRGBA_5551, VG_SRGBA_8888, VG_SRGBA_8888_PRE, VG_SRGBX_8888, VG_SRGB_565,
    VG_STROKE_CAP_STYLE, VG_STROKE_DASH_PATTERN, VG_STROKE_DASH_PHASE, VG_STROKE_JOIN_STYLE,
    VG_STROKE_LINE_WIDTH, VG_STROKE_MITER_LIMIT,
};
use crate::generated::NAMES;
use crate::{capture, contexts, outbox, real, vgpaths};
use gpuheat_counters::catalogue::GPU_TIME_SERIALIZED;
use gpuheat_session::{
    CounterValue, Record, VgCall, VgDraw, VgImageDraw, VgPathDraw, VgStroke, MAX_VG_CHILDREN,
};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

/// Most path coordinates sent per frame; draws of paths past it carry serial 0.
const FRAME_COORDS: usize = 1 << 20;
/// Empty brackets timed to calibrate a context's `vgFinish` bracket (after warm-up ones).
const CALIBRATION_RUNS: usize = 21;
/// Most values read from one array argument.
const MAX_VALUES: usize = 256;
/// Most bytes hashed for one upload (64 MiB).
const MAX_UPLOAD: usize = 64 << 20;

/// The real VG getters and setters the agent uses.
struct Fns {
    finish: unsafe extern "C" fn(),
    geti: unsafe extern "C" fn(i32) -> i32,
    getf: unsafe extern "C" fn(i32) -> f32,
    seti: unsafe extern "C" fn(i32, i32),
    get_matrix: unsafe extern "C" fn(*mut f32),
    vector_size: unsafe extern "C" fn(i32) -> i32,
    getfv: unsafe extern "C" fn(i32, i32, *mut f32),
    getiv: unsafe extern "C" fn(i32, i32, *mut i32),
    // Handles are passed pointer-sized, as the wrappers pass them (`CType::Handle`).
    parameteri: unsafe extern "C" fn(usize, i32) -> i32,
    path_caps: unsafe extern "C" fn(usize) -> u32,
    transformed_bounds: unsafe extern "C" fn(usize, *mut f32, *mut f32, *mut f32, *mut f32),
}

/// The real functions, once all are found (the program made a VG call, so its library is
/// loaded).
fn fns() -> Option<&'static Fns> {
    static FNS: OnceLock<Option<Fns>> = OnceLock::new();
    FNS.get_or_init(|| {
        // SAFETY: each is the real OpenVG 1.1 function of that name, with its C signature.
        unsafe {
            Some(Fns {
                finish: load(c"vgFinish")?,
                geti: load(c"vgGeti")?,
                getf: load(c"vgGetf")?,
                seti: load(c"vgSeti")?,
                get_matrix: load(c"vgGetMatrix")?,
                vector_size: load(c"vgGetVectorSize")?,
                getfv: load(c"vgGetfv")?,
                getiv: load(c"vgGetiv")?,
                parameteri: load(c"vgGetParameteri")?,
                path_caps: load(c"vgGetPathCapabilities")?,
                transformed_bounds: load(c"vgPathTransformedBounds")?,
            })
        }
    })
    .as_ref()
}

/// The real function `name` as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the `unsafe extern "C" fn` type of `name`'s C signature.
unsafe fn load<T: Copy>(name: &std::ffi::CStr) -> Option<T> {
    let p = real::by_name(name)?;
    // SAFETY: the caller's contract; a function pointer is the size of a usize.
    Some(unsafe { std::mem::transmute_copy::<usize, T>(&p) })
}

/// A VG call in flight on this thread.
struct Open {
    frame: u64,
    seq: u32,
    ctx: u64,
    timed: bool,
    draw: Option<VgDraw>,
    children: Vec<u32>,
    /// Wall time the agent spent bracketing children inside this call (their brackets'
    /// drains, so their own serialized time, included).
    child_overhead: u64,
    /// Sum of the children's serialized times.
    child_time: u64,
    /// CLOCK_MONOTONIC after the drain before the call.
    start: u64,
    /// Whether its library's GL draws are counted into its coverage, painted when it ends
    /// (`contexts::paint_vg_call`): a timed work call in a heat capture whose coverage the
    /// host cannot compute (a path whose data is unknown, a call with no draw state).
    paints_children: bool,
}

thread_local! {
    static OPEN: RefCell<Vec<Open>> = const { RefCell::new(Vec::new()) };
}

/// Whether a VG call is in flight on this thread (the calls recorded now are its children).
/// Asked around every recorded call: a GL program, which never entered a VG call, pays one
/// relaxed load.
#[inline]
pub fn inside() -> bool {
    SEEN.load(std::sync::atomic::Ordering::Relaxed)
        && OPEN.try_with(|o| !o.borrow().is_empty()).unwrap_or(false)
}

/// Set at the first VG call recorded in the process.
static SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A call recorded while a VG call is in flight: `seq` of `frame` is its child, which took
/// `overhead` ns of agent brackets and measured `time` ns serialized.
pub fn child(frame: u64, seq: u32, overhead: u64, time: Option<u64>) {
    let _ = OPEN.try_with(|o| {
        if let Some(open) = o.borrow_mut().last_mut() {
            if open.frame == frame && open.children.len() < MAX_VG_CHILDREN {
                open.children.push(seq);
            }
            open.child_overhead += overhead;
            open.child_time += time.unwrap_or(0);
        }
    });
}

/// Whether the draws recorded now are counted into the coverage of the VG call in flight
/// (the outermost one: only it is timed).
pub fn counts_children() -> bool {
    OPEN.try_with(|o| o.borrow().first().is_some_and(|o| o.paints_children))
        .unwrap_or(false)
}

/// Wall time (`ns`) the agent spent inside the VG call in flight beyond its children's
/// brackets (counting a child's coverage): taken out of the call's time like theirs.
pub fn agent_ns(ns: u64) {
    let _ = OPEN.try_with(|o| {
        if let Some(open) = o.borrow_mut().last_mut() {
            open.child_overhead += ns;
        }
    });
}

/// Before VG call `func` (`seq` of `frame`, context `ctx`, arguments `args`), inside the
/// agent: reads what the draw will cover, then, for a work call in full mode that is not
/// itself inside a VG call, drains the VG pipeline and reads the clock.
pub fn enter(func: usize, frame: u64, seq: u32, ctx: u64, args: &[u64], work: bool) {
    SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
    let name = NAMES[func].trim_end_matches('\0');
    let nested = inside();
    let fns = fns();
    let draw = fns.and_then(|f| draw_state(f, name, ctx, frame, args));
    let timed = work && !nested && capture::mode() == gpuheat_session::CaptureMode::Full;
    let timed = timed
        && fns.is_some_and(|f| {
            calibrate(f, ctx);
            // SAFETY: the real vgFinish; it takes nothing.
            unsafe { (f.finish)() };
            gpuheat_counters::waits::note();
            true
        });
    let paints_children = timed
        && capture::heat()
        && match &draw {
            None => true,
            Some(VgDraw::Path(d)) => d.serial == 0,
            Some(_) => false,
        };
    let _ = OPEN.try_with(|o| {
        o.borrow_mut().push(Open {
            frame,
            seq,
            ctx,
            timed,
            draw,
            children: Vec::new(),
            child_overhead: 0,
            child_time: 0,
            start: monotonic_ns(),
            paints_children,
        })
    });
}

/// After the VG call entered last, inside the agent: drains and times it when timed, sends
/// its record, and returns its serialized time as counter values.
pub fn leave(func: usize, args: &[u64]) -> Vec<CounterValue> {
    let Some(open) = OPEN.try_with(|o| o.borrow_mut().pop()).ok().flatten() else {
        return Vec::new();
    };
    let mut values = Vec::new();
    if open.timed {
        if let Some(f) = fns() {
            // SAFETY: the real vgFinish.
            unsafe { (f.finish)() };
            gpuheat_counters::waits::note();
            // The children's brackets (their drains included) ran inside: take them out
            // and put back what the children measured of their own.
            let raw = monotonic_ns().saturating_sub(open.start) + open.child_time;
            let own = raw
                .saturating_sub(overhead(open.ctx))
                .saturating_sub(open.child_overhead);
            // The call contains its children: below their sum is calibration noise.
            values.push(CounterValue {
                counter: GPU_TIME_SERIALIZED,
                value: own.max(open.child_time),
            });
        }
    }
    if let (true, Some(time)) = (open.paints_children, values.first()) {
        contexts::paint_vg_call(open.ctx, open.frame, open.seq, time.value);
    }
    let name = NAMES[func].trim_end_matches('\0');
    // SAFETY: the arguments the program just passed to the real call, which read them.
    let (upload, array) = unsafe { (upload_hash(name, args), array_values(name, args)) };
    if !open.children.is_empty() || open.draw.is_some() || upload.is_some() || !array.is_empty() {
        outbox::send_record(Record::VgCall(VgCall {
            frame: open.frame,
            context: open.ctx,
            call: open.seq,
            children: open.children,
            draw: open.draw,
            upload,
            values: array,
        }));
    }
    // A VG call nested in another is one of its children.
    let time = values.first().map(|v| v.value);
    child(open.frame, open.seq, 0, time);
    values
}

/// Calibrated empty `vgFinish` brackets, per context.
static OVERHEAD: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

fn overhead(ctx: u64) -> u64 {
    let g = OVERHEAD.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref().and_then(|m| m.get(&ctx)).copied().unwrap_or(0)
}

/// Times empty brackets once per context: the median is what a bracket adds to a call.
fn calibrate(f: &Fns, ctx: u64) {
    let mut g = OVERHEAD.lock().unwrap_or_else(|e| e.into_inner());
    let map = g.get_or_insert_with(HashMap::new);
    if map.contains_key(&ctx) {
        return;
    }
    let mut runs: Vec<u64> = (0..CALIBRATION_RUNS + 3)
        .map(|_| {
            // SAFETY: the real vgFinish.
            unsafe { (f.finish)() };
            let t = monotonic_ns();
            // SAFETY: as above.
            unsafe { (f.finish)() };
            monotonic_ns() - t
        })
        .skip(3)
        .collect();
    runs.sort_unstable();
    map.insert(ctx, runs[runs.len() / 2]);
}

/// Paths already sent in this capture, and the coordinates sent in the current frame.
struct Sent {
    capture: u64,
    paths: HashSet<(u64, u64, u64)>,
    frame: u64,
    coords: usize,
}

static SENT: Mutex<Option<Sent>> = Mutex::new(None);

/// The serial under which a draw of `path` can refer to its data: the data is sent first
/// when this capture has not sent this version yet and the frame's budget allows; 0 when
/// the data is unknown or over budget.
fn path_serial(ctx: u64, path: u64, frame: u64) -> u64 {
    let Some((serial, n, _)) = vgpaths::version(ctx, path) else {
        return 0;
    };
    let mut g = SENT.lock().unwrap_or_else(|e| e.into_inner());
    let capture = capture::generation();
    let sent = g.get_or_insert_with(|| Sent {
        capture,
        paths: HashSet::new(),
        frame,
        coords: 0,
    });
    if sent.capture != capture {
        sent.capture = capture;
        sent.paths.clear();
    }
    if sent.frame != frame {
        sent.frame = frame;
        sent.coords = 0;
    }
    if sent.paths.contains(&(ctx, path, serial)) {
        return serial;
    }
    if sent.coords + n > FRAME_COORDS {
        return 0;
    }
    let Some((record, true)) = vgpaths::current(ctx, path) else {
        return 0;
    };
    sent.coords += n;
    sent.paths.insert((ctx, path, serial));
    outbox::send_record(Record::VgPath(record));
    serial
}

/// What a VG draw will cover, read from the VG state before the call.
fn draw_state(f: &Fns, name: &str, ctx: u64, frame: u64, a: &[u64]) -> Option<VgDraw> {
    let arg = |k: usize| a.get(k).copied().unwrap_or(0);
    match name {
        "vgClear" => Some(VgDraw::Rect([
            arg(0) as i32,
            arg(1) as i32,
            arg(2) as i32,
            arg(3) as i32,
        ])),
        "vgDrawPath" => {
            let path = arg(0);
            let serial = path_serial(ctx, path, frame);
            // SAFETY: the real getters with valid parameter names and buffers of the sizes
            // they write; `vgPathTransformedBounds` only on a path that allows it.
            unsafe {
                let mut bounds = None;
                if serial == 0 {
                    let caps = vgpaths::version(ctx, path)
                        .map(|(_, _, caps)| caps)
                        .unwrap_or_else(|| (f.path_caps)(path as usize));
                    if caps & VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS != 0 {
                        let mut b = [0f32; 4];
                        let [x, y, w, h] = b.each_mut().map(|v| v as *mut f32);
                        (f.transformed_bounds)(path as usize, x, y, w, h);
                        bounds = Some([b[0], b[1], b[0] + b[2], b[1] + b[3]]);
                    }
                }
                let dash = float_vector(f, VG_STROKE_DASH_PATTERN);
                let scissor = if (f.geti)(VG_SCISSORING) != 0 {
                    let n = ((f.vector_size)(VG_SCISSOR_RECTS).max(0) as usize).min(4 * 64) / 4 * 4;
                    let mut v = vec![0i32; n];
                    (f.getiv)(VG_SCISSOR_RECTS, n as i32, v.as_mut_ptr());
                    v.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
                } else {
                    Vec::new()
                };
                Some(VgDraw::Path(VgPathDraw {
                    path,
                    serial,
                    paint_modes: arg(1) as u32,
                    matrix: matrix(f, VG_MATRIX_PATH_USER_TO_SURFACE),
                    fill_rule: (f.geti)(VG_FILL_RULE) as u32,
                    stroke: VgStroke {
                        width: (f.getf)(VG_STROKE_LINE_WIDTH),
                        cap: (f.geti)(VG_STROKE_CAP_STYLE) as u32,
                        join: (f.geti)(VG_STROKE_JOIN_STYLE) as u32,
                        miter_limit: (f.getf)(VG_STROKE_MITER_LIMIT),
                        dash,
                        dash_phase: (f.getf)(VG_STROKE_DASH_PHASE),
                    },
                    bounds,
                    scissor,
                }))
            }
        }
        "vgDrawImage" => {
            let image = arg(0) as usize;
            // SAFETY: as above; an invalid handle raises the same error the program's own
            // vgDrawImage raises right after, and the first error is the one kept.
            unsafe {
                Some(VgDraw::Image(VgImageDraw {
                    image: image as u64,
                    width: (f.parameteri)(image, VG_IMAGE_WIDTH).max(0) as u32,
                    height: (f.parameteri)(image, VG_IMAGE_HEIGHT).max(0) as u32,
                    format: (f.parameteri)(image, VG_IMAGE_FORMAT) as u32,
                    matrix: matrix(f, VG_MATRIX_IMAGE_USER_TO_SURFACE),
                }))
            }
        }
        _ => None,
    }
}

/// The matrix of `mode`, the program's matrix mode left as it was.
///
/// # Safety
/// The real VG functions, a current VG context.
unsafe fn matrix(f: &Fns, mode: i32) -> [f32; 9] {
    let mut m = [0f32; 9];
    // SAFETY: the caller's contract; vgGetMatrix writes nine floats.
    unsafe {
        let was = (f.geti)(VG_MATRIX_MODE);
        if was != mode {
            (f.seti)(VG_MATRIX_MODE, mode);
        }
        (f.get_matrix)(m.as_mut_ptr());
        if was != mode {
            (f.seti)(VG_MATRIX_MODE, was);
        }
    }
    m
}

/// A float vector parameter, at most [`MAX_VALUES`] values.
///
/// # Safety
/// The real VG functions, a current VG context.
unsafe fn float_vector(f: &Fns, param: i32) -> Vec<f32> {
    // SAFETY: the caller's contract; the buffer holds the count asked for.
    unsafe {
        let n = ((f.vector_size)(param).max(0) as usize).min(MAX_VALUES);
        let mut v = vec![0f32; n];
        if n > 0 {
            (f.getfv)(param, n as i32, v.as_mut_ptr());
        }
        v
    }
}

/// The values a setter passed by pointer.
///
/// # Safety
/// `a` are the arguments the program just passed to the real call `name`.
unsafe fn array_values(name: &str, a: &[u64]) -> Vec<f32> {
    let arg = |k: usize| a.get(k).copied().unwrap_or(0);
    let (ptr, n, int) = match name {
        "vgLoadMatrix" | "vgMultMatrix" => (arg(0), 9, false),
        "vgSetfv" => (arg(2), arg(1) as i32, false),
        "vgSetiv" => (arg(2), arg(1) as i32, true),
        "vgSetParameterfv" => (arg(3), arg(2) as i32, false),
        "vgSetParameteriv" => (arg(3), arg(2) as i32, true),
        _ => return Vec::new(),
    };
    if ptr == 0 || n <= 0 {
        return Vec::new();
    }
    let n = (n as usize).min(MAX_VALUES);
    // SAFETY: the caller's contract: the call read `n` values there.
    unsafe {
        if int {
            std::slice::from_raw_parts(ptr as *const i32, n)
                .iter()
                .map(|&v| v as f32)
                .collect()
        } else {
            std::slice::from_raw_parts(ptr as *const f32, n).to_vec()
        }
    }
}

/// Bits per pixel of a `VGImageFormat` (channel-order variants included), or `None`.
fn format_bits(format: u32) -> Option<usize> {
    // Bits 6 and 7 give the channel order (`VG_sXRGB_8888` is `VG_sRGBX_8888 | 1 << 6`),
    // which does not change the size.
    Some(match format & 0x3F {
        VG_SRGBX_8888 | VG_SRGBA_8888 | VG_SRGBA_8888_PRE | VG_LRGBX_8888 | VG_LRGBA_8888
        | VG_LRGBA_8888_PRE => 32,
        VG_SRGB_565 | VG_SRGBA_5551 | VG_SRGBA_4444 => 16,
        VG_SL_8 | VG_LL_8 | VG_A_8 => 8,
        VG_BW_1 | VG_A_1 => 1,
        VG_A_4 => 4,
        _ => return None,
    })
}

/// FNV-1a 64 of the pixels an upload read: `height` rows of `width` pixels, `stride` bytes
/// apart.
///
/// # Safety
/// `a` are the arguments the program just passed to the real call `name`.
unsafe fn upload_hash(name: &str, a: &[u64]) -> Option<u64> {
    let arg = |k: usize| a.get(k).copied().unwrap_or(0);
    // vgImageSubData(image, data, stride, format, x, y, w, h);
    // vgWritePixels(data, stride, format, x, y, w, h).
    let (data, stride, format, w, h) = match name {
        "vgImageSubData" => (arg(1), arg(2) as i32, arg(3) as u32, arg(6), arg(7)),
        "vgWritePixels" => (arg(0), arg(1) as i32, arg(2) as u32, arg(5), arg(6)),
        _ => return None,
    };
    let (w, h) = (w as i32, h as i32);
    if data == 0 || w <= 0 || h <= 0 {
        return None;
    }
    let row = (w as usize * format_bits(format)?).div_ceil(8);
    if row.checked_mul(h as usize)? > MAX_UPLOAD {
        return None;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for y in 0..h as isize {
        let start = (data as isize).wrapping_add(y * stride as isize) as *const u8;
        // SAFETY: the caller's contract: the call read these rows.
        let bytes = unsafe { std::slice::from_raw_parts(start, row) };
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    Some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_hash_the_rows_read_not_the_padding() {
        // Two 2×2 RGBA8 images, one with 4 bytes of padding per row: same pixels, same hash.
        let tight: Vec<u8> = (0..16).collect();
        let mut padded = Vec::new();
        padded.extend_from_slice(&tight[..8]);
        padded.extend_from_slice(&[0xAA; 4]);
        padded.extend_from_slice(&tight[8..]);
        // SAFETY: live local buffers of the sizes the arguments describe.
        let (a, b, c) = unsafe {
            (
                upload_hash(
                    "vgImageSubData",
                    &[1, tight.as_ptr() as u64, 8, 1, 0, 0, 2, 2],
                ),
                upload_hash(
                    "vgWritePixels",
                    &[padded.as_ptr() as u64, 12, 0, 0, 0, 2, 2],
                ),
                upload_hash("vgWritePixels", &[padded.as_ptr() as u64, 8, 0, 0, 0, 2, 2]),
            )
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(format_bits(1 | 1 << 6), Some(32));
        assert_eq!(format_bits(3), Some(16));
        assert_eq!(format_bits(40), None);
    }

    #[test]
    fn setters_passing_arrays_give_their_values() {
        let m: [f32; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 5.0, 6.0, 1.0];
        let iv: [i32; 2] = [3, -4];
        let scissor_rects = VG_SCISSOR_RECTS as u64;
        // SAFETY: live local arrays of the lengths the arguments give.
        unsafe {
            assert_eq!(array_values("vgLoadMatrix", &[m.as_ptr() as u64]), m);
            assert_eq!(
                array_values("vgSetiv", &[scissor_rects, 2, iv.as_ptr() as u64]),
                [3.0, -4.0]
            );
            assert!(array_values("vgSetfv", &[scissor_rects, 0, 0]).is_empty());
            assert!(array_values("vgSeti", &[scissor_rects, 2]).is_empty());
        }
    }
}
