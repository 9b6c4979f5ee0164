//! Uploads of captured frames: for each call that copies the program's memory into a
//! texture or buffer, the bytes it reads and an XXH3-64 hash of them (`UPLD` records), so
//! the checklist can find the same content uploaded again.
//!
//! Which entry points upload, and where their size, format, type and data arguments are,
//! is decided once, by build.rs from the registry's parameter names ([`Spec`]): only those
//! wrappers call in here, after their call is recorded (so the hash is not part of the
//! call's time). The unpack state is read with the real `glGetIntegerv` only on these
//! calls, and only the names the context's version has. Sizes are computed with checked
//! arithmetic; at most [`UPLOAD_FRAME_BUDGET`] bytes are hashed per frame and
//! [`MAX_UPLOAD_HASHED`] per call.

use crate::contexts;
use gpuheat_counters::gl::{self, GLenum};
use gpuheat_counters::parse_version;
use gpuheat_session::{
    ClientApi, FrameUploads, Unhashed, Upload, MAX_UPLOAD_HASHED, UPLOAD_FRAME_BUDGET,
};
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

/// An argument index a [`Spec`] does not use.
pub const NONE: u8 = u8::MAX;

/// Where an upload entry point keeps what its size and data are computed from: indices
/// into its arguments, generated per entry point by build.rs.
#[derive(Debug, Clone, Copy)]
pub enum Spec {
    /// `glTex(Sub)Image{1,2,3}D` and their DSA forms: pixels of `format` and `type`.
    Pixels {
        /// 1, 2 or 3.
        dims: u8,
        width: u8,
        /// [`NONE`] for 1D.
        height: u8,
        /// [`NONE`] for 1D and 2D.
        depth: u8,
        format: u8,
        ty: u8,
        data: u8,
    },
    /// `glCompressedTex(Sub)Image*`: `imageSize` bytes.
    Compressed { size: u8, data: u8 },
    /// `glBufferData`, `glBufferSubData`, `glBufferStorage` and their named forms: `size`
    /// bytes.
    Buffer { size: u8, data: u8 },
}

/// Most uploads one frame keeps; later ones are not recorded (a frame of more than 65,536
/// uploads is its own finding, and the count bounds the agent's memory).
const MAX_FRAME_UPLOADS: usize = 1 << 16;

#[derive(Default)]
struct Pending {
    /// The frame `hashed` counts for.
    frame: u64,
    hashed: u64,
    /// (frame, upload), in the order recorded (across threads: not call order).
    uploads: Vec<(u64, Upload)>,
}

static PENDING: Mutex<Option<Pending>> = Mutex::new(None);

fn pending() -> MutexGuard<'static, Option<Pending>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Drops what an earlier capture left (a capture cut short before its frame's end).
pub fn clear() {
    *pending() = None;
}

/// The `UPLD` record of `frame`, if it had uploads; what is left of earlier frames (calls of
/// another thread after their frame was closed) is dropped, as their calls are.
pub fn take(frame: u64) -> Option<FrameUploads> {
    let mut slot = pending();
    let p = slot.as_mut()?;
    let mut uploads: Vec<Upload> = Vec::new();
    p.uploads.retain(|(f, u)| {
        if *f == frame {
            uploads.push(*u);
        }
        *f > frame
    });
    if uploads.is_empty() {
        return None;
    }
    uploads.sort_by_key(|u| u.call);
    Some(FrameUploads { frame, uploads })
}

/// Records the upload call `call` of `frame` made with `args` (as the wrapper recorded
/// them) on context `ctx`, which is current on this thread.
///
/// # Safety
/// `args` are the arguments the program just passed to the real upload function, which
/// read the bytes they point to (so reading them again is what the program's own call did).
pub unsafe fn record(spec: &Spec, frame: u64, call: u32, ctx: u64, args: &[u64]) {
    let arg = |i: u8| args.get(usize::from(i)).copied();
    let layout = match *spec {
        Spec::Buffer { size, data } => contiguous(arg(size), arg(data)),
        Spec::Compressed { size, data } => match contiguous(arg(size), arg(data)) {
            // SAFETY: `ctx` is current on this thread (our caller's promise).
            Ok(l) if unsafe { unpack_buffer_bound(ctx) } == Some(true) => {
                Err((l.bytes(), Unhashed::UnpackBuffer))
            }
            other => other,
        },
        // SAFETY: as above.
        Spec::Pixels { .. } => unsafe { pixels(spec, ctx, &arg) },
    };
    let upload = match layout {
        Err((bytes, why)) => Upload {
            call,
            bytes,
            hash: None,
            unhashed: Some(why),
        },
        Ok(l) => hashed(frame, call, &l),
    };
    let mut slot = pending();
    let p = slot.get_or_insert_with(Pending::default);
    if p.uploads.len() < MAX_FRAME_UPLOADS {
        p.uploads.push((frame, upload));
    }
}

/// The upload's hash, within the frame's budget.
fn hashed(frame: u64, call: u32, l: &Layout) -> Upload {
    let bytes = l.bytes();
    let unhashed = |why| Upload {
        call,
        bytes,
        hash: None,
        unhashed: Some(why),
    };
    if l.data == 0 {
        return unhashed(Unhashed::NullData);
    }
    if bytes > MAX_UPLOAD_HASHED {
        return unhashed(Unhashed::TooLarge);
    }
    {
        let mut slot = pending();
        let p = slot.get_or_insert_with(Pending::default);
        if p.frame != frame {
            p.frame = frame;
            p.hashed = 0;
        }
        if p.hashed + bytes > UPLOAD_FRAME_BUDGET {
            return unhashed(Unhashed::FrameBudget);
        }
        p.hashed += bytes;
    }
    // SAFETY: `record`'s caller's promise: the real call just read these bytes.
    let hash = unsafe { l.hash() };
    Upload {
        call,
        bytes,
        hash: Some(hash),
        unhashed: None,
    }
}

/// Where an upload's bytes are: `images` images of `rows` rows of `row_bytes` bytes, the
/// first at `data + start`, rows `row_stride` and images `image_stride` bytes apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub data: u64,
    pub start: u64,
    pub row_bytes: u64,
    pub rows: u64,
    pub images: u64,
    pub row_stride: u64,
    pub image_stride: u64,
}

impl Layout {
    /// The bytes read (products checked when the layout was made).
    pub fn bytes(&self) -> u64 {
        self.row_bytes * self.rows * self.images
    }

    /// XXH3-64 of the bytes, row after row.
    ///
    /// # Safety
    /// Every row must be readable memory.
    unsafe fn hash(&self) -> u64 {
        use std::hash::Hasher as _;
        let base = (self.data + self.start) as *const u8;
        let contiguous = self.row_stride == self.row_bytes
            && (self.images <= 1 || self.image_stride == self.row_bytes * self.rows);
        if contiguous {
            // SAFETY: our caller's promise; `bytes()` fits in memory the program passed.
            let all = unsafe { std::slice::from_raw_parts(base, self.bytes() as usize) };
            return twox_hash::XxHash3_64::oneshot(all);
        }
        let mut h = twox_hash::XxHash3_64::new();
        for image in 0..self.images {
            for row in 0..self.rows {
                let at = image * self.image_stride + row * self.row_stride;
                // SAFETY: our caller's promise: each row lies inside what the call read.
                h.write(unsafe {
                    std::slice::from_raw_parts(base.add(at as usize), self.row_bytes as usize)
                });
            }
        }
        h.finish()
    }
}

/// A block of `size` bytes at `data` (buffers, compressed images).
fn contiguous(size: Option<u64>, data: Option<u64>) -> Result<Layout, (u64, Unhashed)> {
    let (size, data) = (size.unwrap_or(0) as i64, data.unwrap_or(0));
    let size = u64::try_from(size).map_err(|_| (0, Unhashed::UnknownSize))?;
    Ok(Layout {
        data,
        start: 0,
        row_bytes: size,
        rows: 1,
        images: 1,
        row_stride: size,
        image_stride: size,
    })
}

/// The unpack state that lays pixels out in client memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unpack {
    pub alignment: u64,
    pub row_length: u64,
    pub image_height: u64,
    pub skip_pixels: u64,
    pub skip_rows: u64,
    pub skip_images: u64,
}

impl Default for Unpack {
    fn default() -> Self {
        Unpack {
            alignment: 4,
            row_length: 0,
            image_height: 0,
            skip_pixels: 0,
            skip_rows: 0,
            skip_images: 0,
        }
    }
}

/// Bytes per pixel of `format` and `ty`, when the agent knows them.
pub fn pixel_bytes(format: GLenum, ty: GLenum) -> Option<u64> {
    let packed = match ty {
        gl::UNSIGNED_BYTE_3_3_2 | gl::UNSIGNED_BYTE_2_3_3_REV => Some(1),
        gl::UNSIGNED_SHORT_5_6_5
        | gl::UNSIGNED_SHORT_5_6_5_REV
        | gl::UNSIGNED_SHORT_4_4_4_4
        | gl::UNSIGNED_SHORT_4_4_4_4_REV
        | gl::UNSIGNED_SHORT_5_5_5_1
        | gl::UNSIGNED_SHORT_1_5_5_5_REV => Some(2),
        gl::UNSIGNED_INT_8_8_8_8
        | gl::UNSIGNED_INT_8_8_8_8_REV
        | gl::UNSIGNED_INT_10_10_10_2
        | gl::UNSIGNED_INT_2_10_10_10_REV
        | gl::UNSIGNED_INT_24_8
        | gl::UNSIGNED_INT_10F_11F_11F_REV
        | gl::UNSIGNED_INT_5_9_9_9_REV => Some(4),
        gl::FLOAT_32_UNSIGNED_INT_24_8_REV => Some(8),
        _ => None,
    };
    if packed.is_some() {
        return packed;
    }
    let component = match ty {
        gl::UNSIGNED_BYTE | gl::BYTE => 1,
        gl::UNSIGNED_SHORT | gl::SHORT | gl::HALF_FLOAT | gl::HALF_FLOAT_OES => 2,
        gl::UNSIGNED_INT | gl::INT | gl::FLOAT => 4,
        _ => return None,
    };
    let components = match format {
        gl::RED
        | gl::GREEN
        | gl::BLUE
        | gl::ALPHA
        | gl::LUMINANCE
        | gl::DEPTH_COMPONENT
        | gl::STENCIL_INDEX
        | gl::RED_INTEGER
        | gl::GREEN_INTEGER
        | gl::BLUE_INTEGER => 1,
        gl::RG | gl::RG_INTEGER | gl::LUMINANCE_ALPHA | gl::DEPTH_STENCIL => 2,
        gl::RGB | gl::BGR | gl::RGB_INTEGER | gl::BGR_INTEGER => 3,
        gl::RGBA | gl::BGRA | gl::RGBA_INTEGER | gl::BGRA_INTEGER => 4,
        _ => return None,
    };
    Some(components * component)
}

/// The layout of a `width × height × depth` upload of `px`-byte pixels under `unpack`, as
/// GL's unpacking reads it (rows padded to the alignment, the row length and image height
/// when set, the skips); `dims` 1 ignores the row settings and 1 and 2 the image ones.
/// `None` when a size is negative or a product overflows.
pub fn pixel_layout(
    dims: u8,
    size: [i64; 3],
    px: u64,
    unpack: &Unpack,
    data: u64,
) -> Option<Layout> {
    let [w, h, d] = size.map(|v| u64::try_from(v).ok());
    let (w, h, d) = (w?, h?, d?);
    let row_bytes = w.checked_mul(px)?;
    let row_pixels = if unpack.row_length > 0 && dims >= 2 {
        unpack.row_length
    } else {
        w
    };
    let a = unpack.alignment.max(1);
    let row_stride = row_pixels.checked_mul(px)?.checked_next_multiple_of(a)?;
    let image_rows = if unpack.image_height > 0 && dims >= 3 {
        unpack.image_height
    } else {
        h
    };
    let image_stride = row_stride.checked_mul(image_rows)?;
    let (skip_rows, skip_images) = match dims {
        1 => (0, 0),
        2 => (unpack.skip_rows, 0),
        _ => (unpack.skip_rows, unpack.skip_images),
    };
    let start = unpack
        .skip_pixels
        .checked_mul(px)?
        .checked_add(skip_rows.checked_mul(row_stride)?)?
        .checked_add(skip_images.checked_mul(image_stride)?)?;
    let layout = Layout {
        data,
        start,
        row_bytes,
        rows: h,
        images: d,
        row_stride,
        image_stride,
    };
    // Every offset `hash` computes must fit: the last byte of the last row.
    row_bytes.checked_mul(h)?.checked_mul(d)?;
    if w > 0 && h > 0 && d > 0 {
        start
            .checked_add((d - 1).checked_mul(image_stride)?)?
            .checked_add((h - 1).checked_mul(row_stride)?)?
            .checked_add(row_bytes)?
            .checked_add(data)?;
    }
    Some(layout)
}

/// What the context's version lets the agent ask of the unpack state.
#[derive(Debug, Clone, Copy)]
struct Caps {
    /// Row length and pixel/row skips (GL, GLES 3.0+).
    rows: bool,
    /// Image height and image skips (GL 1.2+, GLES 3.0+).
    images: bool,
    /// `GL_PIXEL_UNPACK_BUFFER_BINDING` (GL 2.1+, GLES 3.0+).
    unpack_buffer: bool,
}

thread_local! {
    /// The context this thread last uploaded in and what it may be asked.
    static CAPS: Cell<Option<(u64, Caps)>> = const { Cell::new(None) };
}

/// What `ctx` (current) may be asked, from its version string, remembered per thread.
///
/// # Safety
/// `ctx` must be current on this thread.
unsafe fn caps(ctx: u64) -> Option<Caps> {
    if let Some((c, caps)) = CAPS.with(Cell::get) {
        if c == ctx {
            return Some(caps);
        }
    }
    let gl = contexts::gl()?;
    // SAFETY: a context is current (our caller's promise).
    let version = unsafe { gl.string(gl::VERSION) };
    if version.is_empty() {
        return None;
    }
    let (api, major, minor) = parse_version(&version);
    let caps = match api {
        ClientApi::Gles => Caps {
            rows: major >= 3,
            images: major >= 3,
            unpack_buffer: major >= 3,
        },
        _ => Caps {
            rows: true,
            images: (major, minor) >= (1, 2),
            unpack_buffer: (major, minor) >= (2, 1),
        },
    };
    CAPS.with(|c| c.set(Some((ctx, caps))));
    Some(caps)
}

/// Whether a pixel unpack buffer is bound (`None`: the context cannot say).
///
/// # Safety
/// `ctx` must be current on this thread.
unsafe fn unpack_buffer_bound(ctx: u64) -> Option<bool> {
    // SAFETY: our caller's promise.
    let caps = unsafe { caps(ctx) }?;
    let gl = contexts::gl()?;
    // SAFETY: the name exists in this context (`caps`).
    caps.unpack_buffer
        .then(|| unsafe { gl.integer(gl::PIXEL_UNPACK_BUFFER_BINDING) } != 0)
}

/// The layout (or why none) of a pixel upload.
///
/// # Safety
/// `ctx` must be current on this thread.
unsafe fn pixels(
    spec: &Spec,
    ctx: u64,
    arg: &dyn Fn(u8) -> Option<u64>,
) -> Result<Layout, (u64, Unhashed)> {
    let Spec::Pixels {
        dims,
        width,
        height,
        depth,
        format,
        ty,
        data,
    } = *spec
    else {
        return Err((0, Unhashed::UnknownSize));
    };
    // GLsizei arguments, recorded sign-extended.
    let size = |i: u8| {
        if i == NONE {
            Some(1)
        } else {
            arg(i).map(|v| v as i64)
        }
    };
    let unknown = (0, Unhashed::UnknownSize);
    let (Some(w), Some(h), Some(d)) = (size(width), size(height), size(depth)) else {
        return Err(unknown);
    };
    let px = pixel_bytes(
        arg(format).unwrap_or(0) as GLenum,
        arg(ty).unwrap_or(0) as GLenum,
    )
    .ok_or(unknown)?;
    // SAFETY: our caller's promise.
    let caps = unsafe { caps(ctx) }.ok_or(unknown)?;
    let gl = contexts::gl().ok_or(unknown)?;
    // SAFETY: `ctx` is current, and each name is asked only where its version has it.
    let get = |name: GLenum| u64::try_from(unsafe { gl.integer(name) }).unwrap_or(0);
    let mut unpack = Unpack {
        alignment: get(gl::UNPACK_ALIGNMENT),
        ..Unpack::default()
    };
    if caps.rows {
        unpack.row_length = get(gl::UNPACK_ROW_LENGTH);
        unpack.skip_pixels = get(gl::UNPACK_SKIP_PIXELS);
        unpack.skip_rows = get(gl::UNPACK_SKIP_ROWS);
    }
    if caps.images {
        unpack.image_height = get(gl::UNPACK_IMAGE_HEIGHT);
        unpack.skip_images = get(gl::UNPACK_SKIP_IMAGES);
    }
    let bound = caps.unpack_buffer && get(gl::PIXEL_UNPACK_BUFFER_BINDING) != 0;
    let layout =
        pixel_layout(dims, [w, h, d], px, &unpack, arg(data).unwrap_or(0)).ok_or(unknown)?;
    if bound {
        return Err((layout.bytes(), Unhashed::UnpackBuffer));
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_sizes_follow_format_and_type() {
        assert_eq!(pixel_bytes(gl::RGBA, gl::UNSIGNED_BYTE), Some(4));
        assert_eq!(pixel_bytes(gl::RGB, gl::UNSIGNED_BYTE), Some(3));
        assert_eq!(pixel_bytes(gl::RG, gl::HALF_FLOAT), Some(4));
        assert_eq!(pixel_bytes(gl::RGBA, gl::FLOAT), Some(16));
        assert_eq!(pixel_bytes(gl::RGB, gl::UNSIGNED_SHORT_5_6_5), Some(2));
        assert_eq!(
            pixel_bytes(gl::DEPTH_STENCIL, gl::UNSIGNED_INT_24_8),
            Some(4)
        );
        assert_eq!(
            pixel_bytes(gl::DEPTH_STENCIL, gl::FLOAT_32_UNSIGNED_INT_24_8_REV),
            Some(8)
        );
        assert_eq!(pixel_bytes(0x1234, gl::UNSIGNED_BYTE), None);
        assert_eq!(pixel_bytes(gl::RGBA, 0x1234), None);
    }

    #[test]
    fn rows_are_padded_to_the_alignment_and_skips_move_the_start() {
        let tight = pixel_layout(2, [64, 64, 1], 4, &Unpack::default(), 0x1000).unwrap();
        assert_eq!(tight.bytes(), 16384);
        assert_eq!((tight.start, tight.row_stride), (0, 256));
        // RGB8 rows of 5 pixels: 15 bytes, padded to 16 by the default alignment of 4.
        let rgb = pixel_layout(2, [5, 3, 1], 3, &Unpack::default(), 1).unwrap();
        assert_eq!((rgb.bytes(), rgb.row_stride), (45, 16));
        let u = Unpack {
            alignment: 8,
            row_length: 10,
            skip_pixels: 2,
            skip_rows: 3,
            ..Unpack::default()
        };
        let sub = pixel_layout(2, [4, 2, 1], 1, &u, 1).unwrap();
        assert_eq!(
            (sub.row_stride, sub.start, sub.bytes()),
            (16, 2 + 3 * 16, 8)
        );
        // 1D ignores rows; 2D ignores images.
        let one = pixel_layout(1, [4, 1, 1], 1, &u, 1).unwrap();
        assert_eq!((one.start, one.row_stride), (2, 8));
        let u3 = Unpack {
            image_height: 5,
            skip_images: 1,
            ..Unpack::default()
        };
        let three = pixel_layout(3, [4, 4, 2], 4, &u3, 1).unwrap();
        assert_eq!(
            (three.image_stride, three.start, three.bytes()),
            (80, 80, 128)
        );
        assert_eq!(pixel_layout(2, [4, 4, 1], 4, &u3, 1).unwrap().start, 0);
    }

    #[test]
    fn negative_and_overflowing_sizes_have_no_layout() {
        let u = Unpack::default();
        assert!(pixel_layout(2, [-1, 4, 1], 4, &u, 1).is_none());
        assert!(pixel_layout(3, [1 << 30, 1 << 30, 1 << 30], 16, &u, 1).is_none());
        let skip = Unpack {
            skip_rows: u64::MAX / 2,
            ..u
        };
        assert!(pixel_layout(2, [4, 4, 1], 4, &skip, 1).is_none());
        assert!(contiguous(Some(-5i64 as u64), Some(1)).is_err());
    }

    #[test]
    fn a_padded_layout_hashes_only_its_rows() {
        // Two rows of 3 bytes, 4 apart: the padding byte is not part of the hash.
        let mem = [1u8, 2, 3, 0xEE, 4, 5, 6, 0xFF];
        let l = pixel_layout(2, [3, 2, 1], 1, &Unpack::default(), mem.as_ptr() as u64).unwrap();
        assert_eq!(l.bytes(), 6);
        // SAFETY: the rows lie inside `mem`.
        let h = unsafe { l.hash() };
        assert_eq!(h, twox_hash::XxHash3_64::oneshot(&[1, 2, 3, 4, 5, 6]));
        let whole = contiguous(Some(8), Some(mem.as_ptr() as u64)).unwrap();
        // SAFETY: as above.
        let h = unsafe { whole.hash() };
        assert_eq!(h, twox_hash::XxHash3_64::oneshot(&mem));
    }
}
