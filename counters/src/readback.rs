//! The read-backs of one flush of the painter (the frame's colour buffer, every target's heat
//! and overdraw maps, the slots of draws weighted on the GPU), made with one wait where the
//! context allows it.
//!
//! Each read of pixels or of a buffer's bytes waits for the GPU to finish the work before it,
//! and then costs a round trip more: five a frame for a screen map alone (colour, heat,
//! overdraw, the slots, the boxes), two more per offscreen target. Where the context has
//! pixel-pack buffers, `glCopyBufferSubData` and a way to fetch a buffer's bytes
//! (`glGetBufferSubData` on desktop GL 3.1, `glMapBufferRange` on GLES 3.0), every read is
//! issued into one buffer of ours instead (`glReadPixels` with
//! `GL_PIXEL_PACK_BUFFER` bound, `glCopyBufferSubData` for buffers: queued on the GPU, no
//! wait) and each source's bytes are fetched from it straight into where they are kept (the
//! maps' pooled vectors), the first fetch waiting for all. Elsewhere each source is read on
//! its own.

use std::borrow::Cow;
use std::ffi::c_void;

use crate::gl::*;
use crate::state::drain_errors;

/// What one read takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `w`×`h` pixels of framebuffer `fbo`'s colour buffer `buffer` (0 and `GL_BACK` or
    /// `GL_FRONT`: the default framebuffer's), as `format` and `ty`, `bytes` per pixel.
    Pixels {
        fbo: GLuint,
        buffer: GLenum,
        w: u32,
        h: u32,
        format: GLenum,
        ty: GLenum,
        bytes: usize,
    },
    /// The first `len` bytes of our buffer `name`.
    Buffer { name: GLuint, len: usize },
}

impl Source {
    fn len(&self) -> usize {
        match *self {
            Source::Pixels { w, h, bytes, .. } => w as usize * h as usize * bytes,
            Source::Buffer { len, .. } => len,
        }
    }
}

/// The entry points of the one-wait read, all required.
#[derive(Clone, Copy)]
pub(crate) struct PackFns {
    pub gen_buffers: unsafe extern "system" fn(GLsizei, *mut GLuint),
    pub buffer_data: unsafe extern "system" fn(GLenum, GLsizeiptr, *const c_void, GLenum),
    pub copy_buffer_sub_data:
        unsafe extern "system" fn(GLenum, GLenum, GLsizeiptr, GLsizeiptr, GLsizeiptr),
    pub fetch: Fetch,
}

/// How bytes come out of the pack buffer.
#[derive(Clone, Copy)]
pub(crate) enum Fetch {
    /// `glGetBufferSubData` (desktop GL).
    Get(unsafe extern "system" fn(GLenum, GLsizeiptr, GLsizeiptr, *mut c_void)),
    /// `glMapBufferRange` for reading, then `glUnmapBuffer`: GLES 3.0, which has no
    /// `glGetBufferSubData`.
    Map(
        unsafe extern "system" fn(GLenum, GLsizeiptr, GLsizeiptr, GLenum) -> *mut c_void,
        unsafe extern "system" fn(GLenum) -> GLboolean,
    ),
}

impl PackFns {
    /// The one-wait read's entry points of `f` (a GLES context's if `gles`: it fetches by
    /// mapping, and its loader may hand out a `glGetBufferSubData` that is not its own), or
    /// `None` where one is missing: each source is then read on its own.
    pub fn of(f: &ThermalFns, gles: bool) -> Option<PackFns> {
        let fetch = if gles {
            Fetch::Map(f.map_buffer_range_t?, f.unmap_buffer_t?)
        } else {
            Fetch::Get(f.get_buffer_sub_data?)
        };
        Some(PackFns {
            gen_buffers: f.gen_buffers_t?,
            buffer_data: f.buffer_data_t?,
            copy_buffer_sub_data: f.copy_buffer_sub_data?,
            fetch,
        })
    }
}

/// Our pixel-pack buffer, kept from flush to flush and grown when a flush needs more.
#[derive(Debug, Default)]
pub(crate) struct Pack {
    name: GLuint,
    size: usize,
}

/// What [`read`] read: each source's bytes, fetched by [`Read::append`] (or the maps'
/// [`Read::floats`] and [`Read::counts`]).
/// Packed, they are still in our pack buffer, and the first fetch waits for every read (the
/// pack buffer stays bound to `GL_PIXEL_PACK_BUFFER` until the caller restores its binding).
pub(crate) struct Read<'p> {
    from: From<'p>,
    /// Each source's range; `None` where its read raised a GL error.
    parts: Vec<Option<(usize, usize)>>,
}

enum From<'p> {
    /// Read source by source into host memory already.
    Host(Vec<u8>),
    /// In our pack buffer, not fetched yet (`waited`: a fetch was made).
    Packed { fns: &'p PackFns, waited: bool },
}

/// A type every bit pattern of whose size is a value (so bytes fetched into it are values):
/// what the maps and colour are kept as.
pub(crate) trait Plain: Copy {}
impl Plain for u8 {}
impl Plain for u32 {}
impl Plain for f32 {}

impl Read<'_> {
    /// No source read.
    fn none() -> Read<'static> {
        Read {
            from: From::Host(Vec::new()),
            parts: Vec::new(),
        }
    }

    /// Source `i`'s length in bytes (`None`: its read failed, or there is no such source).
    pub fn len(&self, i: usize) -> Option<usize> {
        self.parts.get(i).copied().flatten().map(|(_, len)| len)
    }

    /// Copies source `i`'s bytes to `to`; `false` where its read or this fetch failed (`to`
    /// then holds anything).
    ///
    /// # Safety
    /// As [`Read::append`], and `to` valid for writes of [`Read::len`] bytes.
    unsafe fn fetch_raw(&mut self, f: &ThermalFns, i: usize, to: *mut u8) -> bool {
        let Some((at, len)) = self.parts.get(i).copied().flatten() else {
            return false;
        };
        match &mut self.from {
            From::Host(bytes) => {
                // SAFETY: our caller's promise for `to`; `bytes` holds the part.
                unsafe { std::ptr::copy_nonoverlapping(bytes[at..at + len].as_ptr(), to, len) };
                true
            }
            From::Packed { fns, waited } => {
                if !*waited {
                    // The first fetch waits for the GPU to land every read issued.
                    crate::waits::note();
                    *waited = true;
                }
                // SAFETY: our caller's promise; the pack buffer holds `at + len` bytes (its
                // layout).
                unsafe {
                    match fns.fetch {
                        Fetch::Get(get) => get(
                            PIXEL_PACK_BUFFER,
                            at as GLsizeiptr,
                            len as GLsizeiptr,
                            to.cast(),
                        ),
                        Fetch::Map(map, unmap) => {
                            let from = map(
                                PIXEL_PACK_BUFFER,
                                at as GLsizeiptr,
                                len as GLsizeiptr,
                                MAP_READ_BIT,
                            );
                            if from.is_null() {
                                drain_errors(f);
                                return false;
                            }
                            std::ptr::copy_nonoverlapping(from.cast::<u8>(), to, len);
                            // False only where the store was lost while mapped (GLES 3.0
                            // §2.10.3): the bytes copied may then be anything.
                            if unmap(PIXEL_PACK_BUFFER) == 0 {
                                drain_errors(f);
                                return false;
                            }
                        }
                    }
                    drain_errors(f) == NO_ERROR
                }
            }
        }
    }

    /// Source `i`'s bytes as values of `T` appended to `out` (a pooled vector: room for them
    /// already), fetched straight into it, no copy between; `None` where its read or the fetch
    /// failed, or it is no whole number of `T`s.
    ///
    /// # Safety
    /// The context [`read`] read in must be current, `f` its functions, and nothing bound to
    /// `GL_PIXEL_PACK_BUFFER` since but the pack buffer.
    pub unsafe fn append<T: Plain>(
        &mut self,
        f: &ThermalFns,
        i: usize,
        mut out: Vec<T>,
    ) -> Option<Vec<T>> {
        let len = self.len(i)?;
        let size = std::mem::size_of::<T>();
        if len % size != 0 {
            return None;
        }
        let (old, n) = (out.len(), len / size);
        out.reserve(n);
        // SAFETY: our caller's promise; `out` has room for `n` more values (`len` bytes),
        // which any bytes are (`Plain`), and holds them only once the fetch wrote them all.
        unsafe {
            if !self.fetch_raw(f, i, out.as_mut_ptr().add(old).cast()) {
                return None;
            }
            out.set_len(old + n);
        }
        Some(out)
    }

    /// Source `i`'s bytes: borrowed where read into host memory already, else fetched.
    ///
    /// # Safety
    /// As [`Read::append`].
    unsafe fn raw(&mut self, f: &ThermalFns, i: usize) -> Option<Cow<'_, [u8]>> {
        if matches!(self.from, From::Packed { .. }) {
            // SAFETY: our caller's promise.
            return unsafe { self.append(f, i, Vec::new()) }.map(Cow::Owned);
        }
        let From::Host(bytes) = &self.from else {
            unreachable!("packed above")
        };
        let (at, len) = self.parts.get(i).copied().flatten()?;
        bytes.get(at..at + len).map(Cow::Borrowed)
    }

    /// Source `i`, a float pixel read of `channels` channels, as its first channel's values
    /// appended to `out`: a one-channel read fetched straight into `out`.
    ///
    /// # Safety
    /// As [`Read::append`].
    pub unsafe fn floats(
        &mut self,
        f: &ThermalFns,
        i: usize,
        channels: usize,
        out: Vec<f32>,
    ) -> Option<Vec<f32>> {
        // SAFETY: our caller's promise.
        unsafe {
            if channels == 1 {
                return self.append(f, i, out);
            }
            Some(first_channel(&self.raw(f, i)?, channels, out))
        }
    }

    /// Source `i`, a float pixel read of whole counts summed as floats (an overdraw map), as
    /// [`first_channel_counts`] gives them, appended to `out`: a one-channel read fetched
    /// straight into `out` and rounded there.
    ///
    /// # Safety
    /// As [`Read::append`].
    pub unsafe fn counts(
        &mut self,
        f: &ThermalFns,
        i: usize,
        channels: usize,
        out: Vec<u32>,
    ) -> Option<Vec<u32>> {
        if channels != 1 {
            // SAFETY: our caller's promise.
            return Some(first_channel_counts(
                &unsafe { self.raw(f, i) }?,
                channels,
                out,
            ));
        }
        let old = out.len();
        // SAFETY: our caller's promise; the u32s hold the floats' bits until rounded below.
        let mut out = unsafe { self.append(f, i, out) }?;
        for v in &mut out[old..] {
            *v = round_count(f32::from_bits(*v));
        }
        Some(out)
    }
}

/// Each source's offset in the pack buffer: in order, each at a multiple of 16 bytes (the
/// largest pixel read), and the bytes in all.
fn layout(sources: &[Source]) -> (Vec<usize>, usize) {
    let mut at = 0;
    let offsets = sources
        .iter()
        .map(|s| {
            let here = at;
            at += s.len().next_multiple_of(16);
            here
        })
        .collect();
    (offsets, at)
}

/// Reads every source, in order. With `pack` (its entry points and our buffer), into that
/// buffer, fetched later with one wait ([`Read::append`]); else each on its own, one wait each.
///
/// # Safety
/// A context must be current and `f` its real functions, with the pack state at its defaults
/// and these bindings saved by the caller: the read framebuffer, `GL_PIXEL_PACK_BUFFER` and
/// `GL_ARRAY_BUFFER`; every framebuffer and buffer named ours (or 0, the default framebuffer)
/// and complete, large enough for its source.
pub(crate) unsafe fn read<'p>(
    f: &ThermalFns,
    pack: Option<(&'p PackFns, &mut Pack)>,
    sources: &[Source],
) -> Read<'p> {
    if sources.is_empty() {
        return Read::none();
    }
    let (offsets, total) = layout(sources);
    // SAFETY: our caller's promise.
    unsafe {
        match pack {
            Some((fns, pack)) => read_packed(f, fns, pack, sources, &offsets, total),
            None => {
                let mut bytes = vec![0u8; total];
                let parts = sources
                    .iter()
                    .zip(&offsets)
                    .map(|(s, &at)| {
                        crate::waits::note();
                        // SAFETY: `bytes` holds `total` bytes, the source's at `at`.
                        issue(f, None, s, bytes.as_mut_ptr().add(at).cast());
                        (drain_errors(f) == NO_ERROR).then_some((at, s.len()))
                    })
                    .collect();
                Read {
                    from: From::Host(bytes),
                    parts,
                }
            }
        }
    }
}

/// [`read`] into our pack buffer: every read issued, none fetched.
///
/// # Safety
/// As [`read`]; `offsets` and `total` are `sources`' [`layout`].
unsafe fn read_packed<'p>(
    f: &ThermalFns,
    fns: &'p PackFns,
    pack: &mut Pack,
    sources: &[Source],
    offsets: &[usize],
    total: usize,
) -> Read<'p> {
    // SAFETY: our caller's promise; the pack buffer is ours and holds `total` bytes, every
    // source is issued at its own offset inside it.
    unsafe {
        if pack.name == 0 {
            (fns.gen_buffers)(1, &mut pack.name);
        }
        (f.bind_buffer)(PIXEL_PACK_BUFFER, pack.name);
        if pack.size < total {
            (fns.buffer_data)(
                PIXEL_PACK_BUFFER,
                total as GLsizeiptr,
                std::ptr::null(),
                STREAM_READ,
            );
            pack.size = total;
        }
        let parts = sources
            .iter()
            .zip(offsets)
            .map(|(s, &at)| {
                issue(f, Some(fns), s, at as *mut c_void);
                (drain_errors(f) == NO_ERROR).then_some((at, s.len()))
            })
            .collect();
        // Still bound for the fetches: a buffer source binds `GL_ARRAY_BUFFER` only.
        Read {
            from: From::Packed { fns, waited: false },
            parts,
        }
    }
}

/// Issues the read of `source` to `to`: a client pointer (`fns` `None`, the pack buffer
/// unbound), or an offset in the bound pack buffer (`fns` set).
///
/// # Safety
/// As [`read`]; `to` must hold the source's bytes.
unsafe fn issue(f: &ThermalFns, fns: Option<&PackFns>, source: &Source, to: *mut c_void) {
    // SAFETY: our caller's promise.
    unsafe {
        match *source {
            Source::Pixels {
                fbo,
                buffer,
                w,
                h,
                format,
                ty,
                ..
            } => {
                (f.bind_framebuffer)(READ_FRAMEBUFFER, fbo);
                let was = f.integer(READ_BUFFER) as GLenum;
                (f.read_buffer)(buffer);
                (f.read_pixels)(0, 0, w as GLsizei, h as GLsizei, format, ty, to);
                (f.read_buffer)(was);
            }
            Source::Buffer { name, len } => {
                (f.bind_buffer)(ARRAY_BUFFER, name);
                match fns {
                    Some(fns) => (fns.copy_buffer_sub_data)(
                        ARRAY_BUFFER,
                        PIXEL_PACK_BUFFER,
                        0,
                        to as GLsizeiptr,
                        len as GLsizeiptr,
                    ),
                    None => {
                        if let Some(get) = f.get_buffer_sub_data {
                            get(ARRAY_BUFFER, 0, len as GLsizeiptr, to);
                        }
                    }
                }
            }
        }
    }
}

/// The first channel of each pixel of a float pixel read of `channels` channels.
fn firsts(bytes: &[u8], channels: usize) -> impl Iterator<Item = f32> + '_ {
    bytes
        .chunks_exact(4 * channels)
        .map(|c| f32::from_ne_bytes(c[..4].try_into().expect("4")))
}

/// Floats of a pixel read of `channels` channels, the first of each, appended to `out`.
pub(crate) fn first_channel(bytes: &[u8], channels: usize, mut out: Vec<f32>) -> Vec<f32> {
    out.extend(firsts(bytes, channels));
    out
}

/// Whole counts summed as floats (an overdraw map), rounded to the nearest, from a pixel read
/// of `channels` channels, the first of each, appended to `out`. Not `f32::round`: it is a
/// libm call per pixel, 2 million a frame at 1920×1080.
pub(crate) fn first_channel_counts(bytes: &[u8], channels: usize, mut out: Vec<u32>) -> Vec<u32> {
    out.extend(firsts(bytes, channels).map(round_count));
    out
}

/// A whole count summed as a float, rounded to the nearest (a negative one to 0).
fn round_count(v: f32) -> u32 {
    (v + 0.5) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_laid_out_in_order_on_16_byte_boundaries() {
        let sources = [
            Source::Pixels {
                fbo: 0,
                buffer: BACK,
                w: 3,
                h: 1,
                format: RGBA,
                ty: UNSIGNED_BYTE,
                bytes: 4,
            },
            Source::Buffer { name: 5, len: 32 },
            Source::Buffer { name: 6, len: 1 },
        ];
        assert_eq!(layout(&sources), (vec![0, 16, 48], 64));
        assert_eq!(layout(&[]), (vec![], 0));
    }

    #[test]
    fn the_first_channel_of_each_pixel_is_taken() {
        let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(first_channel(&bytes, 4, Vec::new()), [1.0, 5.0]);
        assert_eq!(first_channel(&bytes, 1, vec![0.5]).len(), 9);
    }

    #[test]
    fn a_count_rounds_to_the_nearest_and_below_zero_to_zero() {
        assert_eq!(
            [2.999_9f32, 3.49, 0.5, -0.2, 1e6].map(round_count),
            [3, 3, 1, 0, 1_000_000]
        );
    }

    #[test]
    fn counts_summed_as_floats_round_to_the_nearest_whole_count() {
        let bytes: Vec<u8> = [0.0f32, 9.0, 2.999_9, 9.0, 3.49, 9.0, 1e6, 9.0, -0.2, 9.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(
            first_channel_counts(&bytes, 2, Vec::new()),
            [0, 3, 3, 1_000_000, 0]
        );
    }
}
