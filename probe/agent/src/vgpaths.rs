//! The data of every OpenVG path the program builds, kept from the path's creation on: VG
//! programs build their paths once and draw them every frame, and OpenVG has no call that
//! reads a path's segments back. A captured frame that draws a path sends its data once per
//! version (`VgPath`), so the inspector can recompute the draw's coverage.
//!
//! Bounded: at most [`MAX_COORDS`] coordinates over all paths. A path whose data would go
//! past it, or whose new data the agent cannot follow (`vgTransformPath`,
//! `vgInterpolatePath` into it), is kept as unknown until it is cleared.
//!
//! A leaf (beside the generated `enums`): plain data in, plain data out; the argument decoding is the only `unsafe` (the
//! program's arrays, read as the call that passed them just did).

use crate::enums::{
    VGU_ARC_CHORD, VGU_ARC_OPEN, VGU_ARC_PIE, VG_CLOSE_PATH, VG_HLINE_TO, VG_LINE_TO, VG_MOVE_TO,
    VG_PATH_CAPABILITY_ALL, VG_PATH_CAPABILITY_APPEND_FROM, VG_PATH_CAPABILITY_APPEND_TO,
    VG_PATH_CAPABILITY_MODIFY, VG_SCCWARC_TO, VG_SCWARC_TO, VG_VLINE_TO,
};
use gpuheat_session::VgPath;
use std::collections::HashMap;
use std::sync::Mutex;

/// Most coordinates kept over all paths (16 MiB of `f32`).
pub const MAX_COORDS: usize = 4 << 20;

/// How a path's coordinates are stored: what reading the program's arrays needs.
#[derive(Debug, Clone, Copy)]
struct Format {
    datatype: u32,
    scale: f32,
    bias: f32,
}

/// One path as the agent knows it.
#[derive(Debug)]
struct Entry {
    format: Format,
    caps: u32,
    /// `None`: the data is not known (built before the agent came, over budget, or changed
    /// by a call the agent does not follow).
    data: Option<(Vec<u8>, Vec<f32>)>,
    serial: u64,
}

#[derive(Default)]
struct Store {
    paths: HashMap<(u64, u64), Entry>,
    coords: usize,
    next_serial: u64,
}

static STORE: Mutex<Option<Store>> = Mutex::new(None);

fn with_store<R>(f: impl FnOnce(&mut Store) -> R) -> R {
    let mut guard = STORE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Store::default))
}

impl Store {
    fn bump(&mut self) -> u64 {
        self.next_serial += 1;
        self.next_serial
    }

    /// Appends to a known path within the budget, else makes it unknown.
    fn append(&mut self, key: (u64, u64), segments: &[u8], coords: &[f32]) {
        let serial = self.bump();
        let over = self.coords + coords.len() > MAX_COORDS;
        let Some(e) = self.paths.get_mut(&key) else {
            return;
        };
        e.serial = serial;
        match (&mut e.data, over) {
            (Some((s, c)), false) => {
                s.extend_from_slice(segments);
                c.extend_from_slice(coords);
                self.coords += coords.len();
            }
            (data, _) => {
                if let Some((_, c)) = data.take() {
                    self.coords -= c.len();
                }
            }
        }
    }

    fn forget(&mut self, key: (u64, u64)) {
        let serial = self.bump();
        if let Some(e) = self.paths.get_mut(&key) {
            if let Some((_, c)) = e.data.take() {
                self.coords -= c.len();
            }
            e.serial = serial;
        }
    }
}

fn f(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

/// A call of one of the path-changing entry points (`name`, its arguments as the wrappers
/// record them, its result), made in context `ctx`.
///
/// # Safety
/// The pointer arguments are those the program just passed to the real call, which read
/// them: arrays of the lengths its other arguments give.
pub unsafe fn changed(ctx: u64, name: &str, a: &[u64], ret: u64) {
    let arg = |k: usize| a.get(k).copied().unwrap_or(0);
    let key = |k: usize| (ctx, arg(k));
    match name {
        "vgCreatePath" if ret != 0 && arg(0) == 0 && f(arg(2)) != 0.0 && arg(1) <= 3 => {
            with_store(|s| {
                let serial = s.bump();
                let old = s.paths.insert(
                    (ctx, ret),
                    Entry {
                        format: Format {
                            datatype: arg(1) as u32,
                            scale: f(arg(2)),
                            bias: f(arg(3)),
                        },
                        caps: arg(6) as u32 & VG_PATH_CAPABILITY_ALL,
                        data: Some((Vec::new(), Vec::new())),
                        serial,
                    },
                );
                if let Some((_, c)) = old.and_then(|e| e.data) {
                    s.coords -= c.len();
                }
            });
        }
        "vgDestroyPath" => with_store(|s| {
            if let Some((_, c)) = s.paths.remove(&key(0)).and_then(|e| e.data) {
                s.coords -= c.len();
            }
        }),
        "vgClearPath" => with_store(|s| {
            let serial = s.bump();
            if let Some(e) = s.paths.get_mut(&key(0)) {
                if let Some((_, c)) = e.data.replace((Vec::new(), Vec::new())) {
                    s.coords -= c.len();
                }
                e.caps = arg(1) as u32 & VG_PATH_CAPABILITY_ALL;
                e.serial = serial;
            }
        }),
        "vgRemovePathCapabilities" => with_store(|s| {
            if let Some(e) = s.paths.get_mut(&key(0)) {
                e.caps &= !(arg(1) as u32);
            }
        }),
        "vgAppendPathData" => {
            let n = arg(1) as i64;
            let Some((format, caps)) =
                with_store(|s| s.paths.get(&key(0)).map(|e| (e.format, e.caps)))
            else {
                return;
            };
            if caps & VG_PATH_CAPABILITY_APPEND_TO == 0
                || !(0..=1 << 24).contains(&n)
                || arg(2) == 0
            {
                return;
            }
            // SAFETY: the caller's contract: `numSegments` commands and their coordinates.
            let decoded = unsafe { read_path_data(format, arg(2), n as usize, arg(3)) };
            if let Some((segments, coords)) = decoded {
                with_store(|s| s.append(key(0), &segments, &coords));
            }
        }
        "vgModifyPathCoords" => with_store(|s| {
            let (start, n) = (arg(1) as i64, arg(2) as i64);
            let serial = s.bump();
            let Some(e) = s.paths.get_mut(&key(0)) else {
                return;
            };
            let Some((segments, coords)) = &mut e.data else {
                return;
            };
            if e.caps & VG_PATH_CAPABILITY_MODIFY == 0 || start < 0 || n <= 0 {
                return;
            }
            let (start, n) = (start as usize, n as usize);
            if start + n > segments.len() || arg(3) == 0 {
                return;
            }
            let first: usize = segments[..start]
                .iter()
                .filter_map(|&c| VgPath::coords_of(c))
                .sum();
            let count: usize = segments[start..start + n]
                .iter()
                .filter_map(|&c| VgPath::coords_of(c))
                .sum();
            // SAFETY: the caller's contract: the coordinates of `numSegments` segments.
            let new = unsafe { read_coords(e.format, arg(3), count) };
            coords[first..first + count].copy_from_slice(&new);
            e.serial = serial;
        }),
        "vgAppendPath" => with_store(|s| {
            let (dst, src) = (key(0), key(1));
            let from = s
                .paths
                .get(&src)
                .filter(|e| e.caps & VG_PATH_CAPABILITY_APPEND_FROM != 0);
            let to_ok = s
                .paths
                .get(&dst)
                .is_some_and(|e| e.caps & VG_PATH_CAPABILITY_APPEND_TO != 0);
            if !to_ok {
                return;
            }
            match from.and_then(|e| e.data.clone()) {
                Some((segments, coords)) => s.append(dst, &segments, &coords),
                None => s.forget(dst),
            }
        }),
        "vgTransformPath" | "vgInterpolatePath" => with_store(|s| s.forget(key(0))),
        vgu if vgu.starts_with("vgu") && ret == 0 => {
            // SAFETY: vguPolygon's `points` holds `count` pairs (the call just read them).
            if let Some((segments, coords)) = unsafe { vgu_shape(vgu, a) } {
                let append_to = with_store(|s| {
                    s.paths
                        .get(&key(0))
                        .map(|e| e.caps & VG_PATH_CAPABILITY_APPEND_TO)
                });
                if append_to.is_some_and(|c| c != 0) {
                    with_store(|s| s.append(key(0), &segments, &coords));
                }
            }
        }
        _ => {}
    }
}

/// The data of path `path` of context `ctx` in its current version: `None` when the path is
/// unknown; a record with an empty `segments` list and `serial` when only its existence is.
pub fn current(ctx: u64, path: u64) -> Option<(VgPath, bool)> {
    with_store(|s| {
        let e = s.paths.get(&(ctx, path))?;
        let known = e.data.is_some();
        let (segments, coords) = e.data.clone().unwrap_or_default();
        Some((
            VgPath {
                context: ctx,
                path,
                serial: e.serial,
                datatype: e.format.datatype,
                capabilities: e.caps,
                segments,
                coords,
            },
            known,
        ))
    })
}

/// The serial and coordinate count of a known path, without copying its data.
pub fn version(ctx: u64, path: u64) -> Option<(u64, usize, u32)> {
    with_store(|s| {
        let e = s.paths.get(&(ctx, path))?;
        let (_, c) = e.data.as_ref()?;
        Some((e.serial, c.len(), e.caps))
    })
}

/// Reads `n` segment commands and their coordinates; `None` when a command is not one of
/// OpenVG 1.1 (the real call failed and appended nothing).
///
/// # Safety
/// `segments` points to `n` bytes and `data` to their coordinates in the path's datatype.
unsafe fn read_path_data(
    e: Format,
    segments: u64,
    n: usize,
    data: u64,
) -> Option<(Vec<u8>, Vec<f32>)> {
    // SAFETY: the caller's contract.
    let cmds = unsafe { std::slice::from_raw_parts(segments as *const u8, n) }.to_vec();
    let mut count = 0usize;
    for &c in &cmds {
        count += VgPath::coords_of(c)?;
    }
    if count > 0 && data == 0 {
        return None;
    }
    // SAFETY: the caller's contract.
    let coords = unsafe { read_coords(e, data, count) };
    Some((cmds, coords))
}

/// Reads `count` coordinates of the path's datatype at `data`, scale and bias applied.
///
/// # Safety
/// `data` points to `count` values of the path's datatype (or `count` is 0).
unsafe fn read_coords(e: Format, data: u64, count: usize) -> Vec<f32> {
    let p = data as *const u8;
    let at = |i: usize| -> f32 {
        // SAFETY: the caller's contract; unaligned reads, the program's array may be packed.
        unsafe {
            match e.datatype {
                0 => f32::from(*(p.add(i) as *const i8)),
                1 => f32::from((p.add(2 * i) as *const i16).read_unaligned()),
                2 => (p.add(4 * i) as *const i32).read_unaligned() as f32,
                _ => (p.add(4 * i) as *const f32).read_unaligned(),
            }
        }
    };
    (0..count).map(|i| at(i) * e.scale + e.bias).collect()
}

/// The segments a VGU shape appends (OpenVG 1.1 section 17.1), or `None` when its arguments
/// are illegal (the call appended nothing). Coordinates are those of the call: the path's
/// scale and bias are what the implementation inverts to store them.
///
/// # Safety
/// For `vguPolygon`, `a[1]` points to `a[2]` pairs of floats.
unsafe fn vgu_shape(name: &str, a: &[u64]) -> Option<(Vec<u8>, Vec<f32>)> {
    let v = |k: usize| f(a.get(k).copied().unwrap_or(0));
    let mut s = Shape::default();
    match name {
        "vguLine" => {
            s.seg(VG_MOVE_TO, &[v(1), v(2)]);
            s.seg(VG_LINE_TO, &[v(3), v(4)]);
        }
        "vguPolygon" => {
            let (points, count, closed) = (a.get(1)?, *a.get(2)? as i64, *a.get(3)? as u32);
            if *points == 0 || count <= 0 || count > 1 << 20 {
                return None;
            }
            // SAFETY: the caller's contract.
            let p =
                unsafe { std::slice::from_raw_parts(*points as *const f32, 2 * count as usize) };
            s.seg(VG_MOVE_TO, &p[..2]);
            for pair in p[2..].chunks(2) {
                s.seg(VG_LINE_TO, pair);
            }
            if closed != 0 {
                s.seg(VG_CLOSE_PATH, &[]);
            }
        }
        "vguRect" => {
            let (x, y, w, h) = (v(1), v(2), v(3), v(4));
            if w <= 0.0 || h <= 0.0 {
                return None;
            }
            s.seg(VG_MOVE_TO, &[x, y]);
            s.seg(VG_HLINE_TO, &[x + w]);
            s.seg(VG_VLINE_TO, &[y + h]);
            s.seg(VG_HLINE_TO, &[x]);
            s.seg(VG_CLOSE_PATH, &[]);
        }
        "vguRoundRect" => {
            let (x, y, w, h) = (v(1), v(2), v(3), v(4));
            if w <= 0.0 || h <= 0.0 {
                return None;
            }
            let rx = v(5).clamp(0.0, w) / 2.0;
            let ry = v(6).clamp(0.0, h) / 2.0;
            s.seg(VG_MOVE_TO, &[x + rx, y]);
            s.seg(VG_HLINE_TO, &[x + w - rx]);
            s.seg(VG_SCCWARC_TO, &[rx, ry, 0.0, x + w, y + ry]);
            s.seg(VG_VLINE_TO, &[y + h - ry]);
            s.seg(VG_SCCWARC_TO, &[rx, ry, 0.0, x + w - rx, y + h]);
            s.seg(VG_HLINE_TO, &[x + rx]);
            s.seg(VG_SCCWARC_TO, &[rx, ry, 0.0, x, y + h - ry]);
            s.seg(VG_VLINE_TO, &[y + ry]);
            s.seg(VG_SCCWARC_TO, &[rx, ry, 0.0, x + rx, y]);
            s.seg(VG_CLOSE_PATH, &[]);
        }
        "vguEllipse" => {
            let (cx, cy, w, h) = (v(1), v(2), v(3), v(4));
            if w <= 0.0 || h <= 0.0 {
                return None;
            }
            let (rx, ry) = (w / 2.0, h / 2.0);
            s.seg(VG_MOVE_TO, &[cx + rx, cy]);
            s.seg(VG_SCCWARC_TO, &[rx, ry, 0.0, cx - rx, cy]);
            s.seg(VG_SCCWARC_TO, &[rx, ry, 0.0, cx + rx, cy]);
            s.seg(VG_CLOSE_PATH, &[]);
        }
        "vguArc" => {
            let (x, y, w, h, start, extent) = (v(1), v(2), v(3), v(4), v(5), v(6));
            let kind = a.get(7).copied().unwrap_or(0) as u32;
            if w <= 0.0 || h <= 0.0 || !matches!(kind, VGU_ARC_OPEN | VGU_ARC_CHORD | VGU_ARC_PIE) {
                return None;
            }
            let (rx, ry) = (w / 2.0, h / 2.0);
            let at = |deg: f32| {
                let r = deg.to_radians();
                [x + rx * r.cos(), y + ry * r.sin()]
            };
            if kind == VGU_ARC_PIE {
                s.seg(VG_MOVE_TO, &[x, y]);
                s.seg(VG_LINE_TO, &at(start));
            } else {
                s.seg(VG_MOVE_TO, &at(start));
            }
            // Pieces of at most 180°, each an unambiguous small arc.
            let arc = if extent >= 0.0 {
                VG_SCCWARC_TO
            } else {
                VG_SCWARC_TO
            };
            let mut done = 0.0f32;
            let total = extent.abs().min(360.0 * 64.0);
            while done < total {
                let step = (total - done).min(180.0);
                done += step;
                let end = at(start + done * extent.signum());
                s.seg(arc, &[rx, ry, 0.0, end[0], end[1]]);
            }
            if kind != VGU_ARC_OPEN {
                s.seg(VG_CLOSE_PATH, &[]);
            }
        }
        _ => return None,
    }
    Some((s.segments, s.coords))
}

#[derive(Default)]
struct Shape {
    segments: Vec<u8>,
    coords: Vec<f32>,
}

impl Shape {
    fn seg(&mut self, command: u8, coords: &[f32]) {
        self.segments.push(command);
        self.coords.extend_from_slice(coords);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::VGU_BAD_HANDLE_ERROR;

    fn bits(v: f32) -> u64 {
        u64::from(v.to_bits())
    }

    #[test]
    fn paths_follow_creation_appends_modification_and_destruction() {
        let ctx = 0xC0;
        // SAFETY: every pointer below is a live local array of the stated length.
        unsafe {
            changed(
                ctx,
                "vgCreatePath",
                &[
                    0,
                    1,
                    bits(0.5),
                    bits(10.0),
                    0,
                    0,
                    u64::from(VG_PATH_CAPABILITY_APPEND_TO | VG_PATH_CAPABILITY_MODIFY),
                ],
                7,
            );
            let segs = [VG_MOVE_TO, VG_LINE_TO | 1, VG_CLOSE_PATH];
            let data: [i16; 4] = [2, 4, 6, -8];
            changed(
                ctx,
                "vgAppendPathData",
                &[7, 3, segs.as_ptr() as u64, data.as_ptr() as u64],
                0,
            );
            let (p, known) = current(ctx, 7).unwrap();
            assert!(known);
            assert_eq!(p.segments, segs);
            assert_eq!(p.coords, [11.0, 12.0, 13.0, 6.0]);
            p.validate().unwrap();
            let serial = p.serial;
            let new: [i16; 2] = [0, 0];
            changed(
                ctx,
                "vgModifyPathCoords",
                &[7, 1, 1, new.as_ptr() as u64],
                0,
            );
            let (p, _) = current(ctx, 7).unwrap();
            assert_eq!(p.coords, [11.0, 12.0, 10.0, 10.0]);
            assert!(p.serial > serial);
            // A bad command: the real call failed, nothing is appended.
            let bad = [60u8];
            changed(ctx, "vgAppendPathData", &[7, 1, bad.as_ptr() as u64, 0], 0);
            assert_eq!(current(ctx, 7).unwrap().0.segments.len(), 3);
            changed(ctx, "vgTransformPath", &[7, 8], 0);
            assert!(!current(ctx, 7).unwrap().1);
            changed(ctx, "vgDestroyPath", &[7], 0);
            assert!(current(ctx, 7).is_none());
        }
    }

    #[test]
    fn vgu_shapes_append_the_specified_segments() {
        let ctx = 0xC1;
        let all = u64::from(VG_PATH_CAPABILITY_ALL);
        let bad_handle = u64::from(VGU_BAD_HANDLE_ERROR);
        // SAFETY: no pointers but the polygon's live local array.
        unsafe {
            changed(ctx, "vgCreatePath", &[0, 3, bits(1.0), 0, 0, 0, all], 9);
            changed(
                ctx,
                "vguRect",
                &[9, bits(10.0), bits(20.0), bits(30.0), bits(40.0)],
                0,
            );
            let (p, _) = current(ctx, 9).unwrap();
            assert_eq!(
                p.segments,
                [
                    VG_MOVE_TO,
                    VG_HLINE_TO,
                    VG_VLINE_TO,
                    VG_HLINE_TO,
                    VG_CLOSE_PATH
                ]
            );
            assert_eq!(p.coords, [10.0, 20.0, 40.0, 60.0, 10.0]);
            changed(ctx, "vgClearPath", &[9, all], 0);
            changed(
                ctx,
                "vguEllipse",
                &[9, bits(64.0), bits(64.0), bits(100.0), bits(50.0)],
                0,
            );
            let (p, _) = current(ctx, 9).unwrap();
            assert_eq!(
                p.segments,
                [VG_MOVE_TO, VG_SCCWARC_TO, VG_SCCWARC_TO, VG_CLOSE_PATH]
            );
            assert_eq!(&p.coords[..2], [114.0, 64.0]);
            p.validate().unwrap();
            // An error code from VGU: nothing appended.
            changed(
                ctx,
                "vguRect",
                &[9, 0, 0, bits(-1.0), bits(1.0)],
                bad_handle,
            );
            assert_eq!(current(ctx, 9).unwrap().0.segments.len(), 4);
            let pts = [0.0f32, 0.0, 10.0, 0.0, 10.0, 10.0];
            changed(ctx, "vgClearPath", &[9, all], 0);
            changed(ctx, "vguPolygon", &[9, pts.as_ptr() as u64, 3, 1], 0);
            let (p, _) = current(ctx, 9).unwrap();
            assert_eq!(
                p.segments,
                [VG_MOVE_TO, VG_LINE_TO, VG_LINE_TO, VG_CLOSE_PATH]
            );
            changed(ctx, "vgClearPath", &[9, all], 0);
            changed(
                ctx,
                "vguArc",
                &[
                    9,
                    bits(0.0),
                    bits(0.0),
                    bits(10.0),
                    bits(10.0),
                    bits(0.0),
                    bits(270.0),
                    u64::from(VGU_ARC_PIE),
                ],
                0,
            );
            let (p, _) = current(ctx, 9).unwrap();
            assert_eq!(
                p.segments,
                [
                    VG_MOVE_TO,
                    VG_LINE_TO,
                    VG_SCCWARC_TO,
                    VG_SCCWARC_TO,
                    VG_CLOSE_PATH
                ]
            );
            p.validate().unwrap();
        }
    }
}
