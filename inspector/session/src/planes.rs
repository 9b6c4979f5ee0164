//! Geometry with its positions deduplicated and in byte planes (`GEOP` chunks, format
//! version 3).
//!
//! A frame's positions are most of a geometry-captured session (48 MB a frame at 3M vertices)
//! and the largest cost of the agent's writer thread, which shares the CPU with the program.
//! Two things make them small and cheap to compress:
//!
//! - **Each draw's distinct vertices once**, with an index per unrolled vertex: triangle lists
//!   repeat a mesh's vertices (glmark2's refract: 418K vertices, 70K distinct), and a repeat
//!   is a 16-byte match LZ4 only finds when it is within reach, never in planes. A draw without
//!   repeats stores no indices.
//! - **Byte planes**, byte k of every value together, so exponents, signs and the high bytes of
//!   indices become long runs (the blosc "shuffle" filter).
//!
//! Measured on one frame (LZ4 of the payload): `many_draws` 1000 × 1000, 48 MB: positions as
//! they are 10.0 MB, in planes 0.8 MB, distinct in planes 0.13 MB; glmark2's refract 6.7 MB:
//! 3.8, 5.2 and 1.6 MB; terrain 6.3 MB: 2.0, 3.1 and 0.6 MB.
//!
//! Payload (varints are LEB128, signed ones zigzag, as postcard writes them):
//!
//! | part | contents |
//! |---|---|
//! | head | frame, context, vertex budget, draw count |
//! | per draw | call, primitive, vertices n, distinct vertices u (≤ n; u = n: no indices), dropped vertices, viewport x, y, w, h (signed) |
//! | missing | count; per draw: call, reason length, reason UTF-8 |
//! | indices | 4 planes of I bytes (I: the n of every draw with u < n, in draw order): plane b holds byte b (little-endian) of each index, which counts from the draw's first distinct vertex |
//! | positions | 16 planes of U bytes (U: every draw's u, in draw order): plane 4c + b holds byte b of component c (x, y, z, w) of each distinct vertex |
//!
//! Bytes after the planes are ignored, so a later version can append what older readers skip.

use crate::model::{DrawGeometry, FrameGeometry, GeometryMissing, MAX_GEOMETRY_VERTICES};
use crate::varint::{put, unzigzag32, zigzag32, Cursor};

/// Vertices split per pass: one pass reads a block's 64 KiB four times (once per
/// component), so the block stays in the L2 cache between passes.
const BLOCK: usize = 4096;

/// What [`encode`] reuses from record to record (the writer encodes a frame's geometry,
/// tens of megabytes, every frame).
#[derive(Default)]
pub struct Scratch {
    /// Open-addressing table of one draw: a distinct vertex's number in the draw, or `EMPTY`.
    table: Vec<u32>,
    /// The distinct vertices of every draw, in draw order.
    distinct: Vec<[f32; 4]>,
    /// The indices of every draw with repeats, in draw order.
    indices: Vec<u32>,
    /// Each draw's distinct vertex count.
    counts: Vec<u64>,
}

impl Scratch {
    /// Gives back what the buffers grew to past `bytes` each.
    pub fn shrink_to(&mut self, bytes: usize) {
        self.table.clear();
        self.table.shrink_to(bytes / 4);
        self.distinct.clear();
        self.distinct.shrink_to(bytes / 16);
        self.indices.clear();
        self.indices.shrink_to(bytes / 4);
    }
}

const EMPTY: u32 = u32::MAX;

/// A 16-byte vertex's slot in a table of `mask + 1` slots.
fn slot(bits: [u32; 4], mask: usize) -> usize {
    let lo = u64::from(bits[0]) | u64::from(bits[1]) << 32;
    let hi = u64::from(bits[2]) | u64::from(bits[3]) << 32;
    let h = lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    ((h ^ (h >> 29)) as usize) & mask
}

/// Appends `positions`' distinct vertices (by their bits, so NaNs and -0 stay themselves) to
/// `s.distinct` and an index per vertex to `s.indices`; returns how many were distinct.
fn dedupe(positions: &[[f32; 4]], s: &mut Scratch) -> u64 {
    let base = s.distinct.len();
    let size = (positions.len() * 2).next_power_of_two().max(16);
    s.table.clear();
    s.table.resize(size, EMPTY);
    let mask = size - 1;
    for v in positions {
        let bits = v.map(f32::to_bits);
        let mut at = slot(bits, mask);
        let index = loop {
            match s.table[at] {
                EMPTY => {
                    let n = (s.distinct.len() - base) as u32;
                    s.table[at] = n;
                    s.distinct.push(*v);
                    break n;
                }
                n if s.distinct[base + n as usize].map(f32::to_bits) == bits => break n,
                _ => at = (at + 1) & mask,
            }
        };
        s.indices.push(index);
    }
    (s.distinct.len() - base) as u64
}

/// Appends `g` as a `GEOP` payload to `out`.
pub(crate) fn encode(g: &FrameGeometry, out: &mut Vec<u8>, s: &mut Scratch) {
    s.distinct.clear();
    s.indices.clear();
    s.counts.clear();
    for d in &g.draws {
        let start = s.indices.len();
        let u = dedupe(&d.positions, s);
        if u == d.positions.len() as u64 {
            s.indices.truncate(start);
        }
        s.counts.push(u);
    }
    put(out, g.frame);
    put(out, g.context);
    put(out, g.vertex_budget);
    put(out, g.draws.len() as u64);
    for (d, &u) in g.draws.iter().zip(&s.counts) {
        put(out, u64::from(d.call));
        put(out, u64::from(d.primitive));
        put(out, d.positions.len() as u64);
        put(out, u);
        put(out, d.dropped_vertices);
        for v in d.viewport {
            put(out, u64::from(zigzag32(v as u32)));
        }
    }
    put(out, g.missing.len() as u64);
    for m in &g.missing {
        put(out, u64::from(m.call));
        put(out, m.reason.len() as u64);
        out.extend_from_slice(m.reason.as_bytes());
    }
    let n = s.indices.len();
    let start = out.len();
    out.resize(start + 4 * n, 0);
    let (b0, rest) = out[start..].split_at_mut(n);
    let (b1, rest) = rest.split_at_mut(n);
    let (b2, b3) = rest.split_at_mut(n);
    let bytes = b0.iter_mut().zip(b1).zip(b2).zip(b3);
    for (i, (((p0, p1), p2), p3)) in s.indices.iter().zip(bytes) {
        [*p0, *p1, *p2, *p3] = i.to_le_bytes();
    }
    let vertices = s.distinct.len();
    let start = out.len();
    out.resize(start + 16 * vertices, 0);
    for (k, block) in s.distinct.chunks(BLOCK).enumerate() {
        split(block, &mut out[start..], vertices, k * BLOCK);
    }
}

/// Writes `block`'s bytes into the 16 planes of `vertices` bytes each, at `at`.
fn split(block: &[[f32; 4]], planes: &mut [u8], vertices: usize, at: usize) {
    let n = block.len();
    for c in 0..4 {
        let base = 4 * c * vertices + at;
        let (b0, rest) = planes[base..].split_at_mut(vertices);
        let (b1, rest) = rest.split_at_mut(vertices);
        let (b2, b3) = rest.split_at_mut(vertices);
        // Four zipped slices of the block's length: no bounds check in the loop, which LLVM
        // then vectorizes.
        let bytes = b0[..n]
            .iter_mut()
            .zip(&mut b1[..n])
            .zip(&mut b2[..n])
            .zip(&mut b3[..n]);
        for (v, (((p0, p1), p2), p3)) in block.iter().zip(bytes) {
            let [x0, x1, x2, x3] = v[c].to_bits().to_le_bytes();
            (*p0, *p1, *p2, *p3) = (x0, x1, x2, x3);
        }
    }
}

/// Fills `block` from the 16 planes of `vertices` bytes each, at `at`.
fn join(block: &mut [[f32; 4]], planes: &[u8], vertices: usize, at: usize) {
    let n = block.len();
    for c in 0..4 {
        let plane = |b: usize| {
            let from = (4 * c + b) * vertices + at;
            &planes[from..from + n]
        };
        let bytes = plane(0).iter().zip(plane(1)).zip(plane(2)).zip(plane(3));
        for (v, (((&x0, &x1), &x2), &x3)) in block.iter_mut().zip(bytes) {
            v[c] = f32::from_bits(u32::from_le_bytes([x0, x1, x2, x3]));
        }
    }
}

/// Decodes a `GEOP` payload; the error says which part is wrong.
pub(crate) fn decode(raw: &[u8]) -> Result<FrameGeometry, String> {
    let mut c = Cursor::new(raw, "geometry");
    let u32_of = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| format!("geometry: {what} {v} does not fit 32 bits"))
    };
    let frame = c.varint()?;
    let context = c.varint()?;
    let vertex_budget = c.varint()?;
    let draw_count = c.varint()?;
    // Each draw takes at least 9 bytes (9 varints): a count past that is damage, refused
    // before allocating for it.
    if draw_count > c.remaining() / 9 {
        return Err(format!(
            "geometry: {draw_count} draws in {} bytes",
            c.remaining()
        ));
    }
    struct Head {
        call: u32,
        primitive: u32,
        n: u64,
        u: u64,
        dropped_vertices: u64,
        viewport: [i32; 4],
    }
    let mut heads = Vec::with_capacity(draw_count as usize);
    let (mut vertices, mut distinct, mut indexed) = (0u64, 0u64, 0u64);
    for _ in 0..draw_count {
        let call = u32_of(c.varint()?, "call")?;
        let primitive = u32_of(c.varint()?, "primitive")?;
        let n = c.varint()?;
        let u = c.varint()?;
        let dropped_vertices = c.varint()?;
        let mut viewport = [0i32; 4];
        for v in &mut viewport {
            *v = unzigzag32(u32_of(c.varint()?, "viewport")?) as i32;
        }
        if u > n || (n > 0 && u == 0) {
            return Err(format!(
                "geometry: call {call} has {u} distinct of {n} vertices"
            ));
        }
        vertices = vertices.saturating_add(n);
        if vertices > MAX_GEOMETRY_VERTICES {
            return Err(format!(
                "geometry of frame {frame} holds more than {MAX_GEOMETRY_VERTICES} vertices"
            ));
        }
        distinct += u;
        if u < n {
            indexed += n;
        }
        heads.push(Head {
            call,
            primitive,
            n,
            u,
            dropped_vertices,
            viewport,
        });
    }
    let missing_count = c.varint()?;
    if missing_count > c.remaining() / 2 {
        return Err(format!(
            "geometry: {missing_count} missing draws in {} bytes",
            c.remaining()
        ));
    }
    let mut missing = Vec::with_capacity(missing_count as usize);
    for _ in 0..missing_count {
        let call = u32_of(c.varint()?, "call")?;
        let len = c.varint()?;
        if len > c.remaining() {
            return Err(format!(
                "geometry: a reason of {len} bytes ends the payload"
            ));
        }
        let reason = std::str::from_utf8(c.take(len as usize))
            .map_err(|e| format!("geometry: reason: {e}"))?
            .to_string();
        missing.push(GeometryMissing { call, reason });
    }
    // Both at most MAX_GEOMETRY_VERTICES (checked above): the products fit.
    let (indexed, distinct) = (indexed as usize, distinct as usize);
    if c.remaining() / 4 < indexed as u64
        || (c.remaining() - 4 * indexed as u64) / 16 < distinct as u64
    {
        return Err(format!(
            "geometry: {indexed} indices and {distinct} vertices need {} bytes of planes, {} left",
            4 * indexed + 16 * distinct,
            c.remaining()
        ));
    }
    let index_planes = c.take(4 * indexed);
    let plane = |b: usize| &index_planes[b * indexed..(b + 1) * indexed];
    let mut indices = plane(0)
        .iter()
        .zip(plane(1))
        .zip(plane(2))
        .zip(plane(3))
        .map(|(((&x0, &x1), &x2), &x3)| u32::from_le_bytes([x0, x1, x2, x3]));
    let position_planes = c.rest();
    let mut all = vec![[0f32; 4]; distinct];
    for (k, block) in all.chunks_mut(BLOCK).enumerate() {
        join(block, position_planes, distinct, k * BLOCK);
    }
    let mut at = 0;
    let mut draws = Vec::with_capacity(heads.len());
    for h in heads {
        let own = &all[at..at + h.u as usize];
        at += h.u as usize;
        let positions = if h.u == h.n {
            own.to_vec()
        } else {
            let mut p = Vec::with_capacity(h.n as usize);
            for i in indices.by_ref().take(h.n as usize) {
                let v = own.get(i as usize).ok_or_else(|| {
                    format!(
                        "geometry: call {} indexes vertex {i} of {} distinct",
                        h.call, h.u
                    )
                })?;
                p.push(*v);
            }
            p
        };
        draws.push(DrawGeometry {
            call: h.call,
            primitive: h.primitive,
            positions,
            dropped_vertices: h.dropped_vertices,
            viewport: h.viewport,
        });
    }
    Ok(FrameGeometry {
        frame,
        context,
        vertex_budget,
        draws,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(sizes: &[usize]) -> FrameGeometry {
        let mut k = 0u32;
        let mut next = || {
            k = k.wrapping_mul(2_654_435_761).wrapping_add(12_345);
            f32::from_bits(k)
        };
        FrameGeometry {
            frame: 7,
            context: 0xdead_beef,
            vertex_budget: 1 << 22,
            draws: sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| DrawGeometry {
                    call: i as u32 * 3,
                    primitive: 4,
                    positions: (0..n).map(|_| [next(), next(), next(), next()]).collect(),
                    dropped_vertices: i as u64,
                    viewport: [-3, 0, i32::MAX, i32::MIN],
                })
                .collect(),
            missing: vec![GeometryMissing {
                call: 99,
                reason: "budget spent".into(),
            }],
        }
    }

    fn encoded(g: &FrameGeometry) -> Vec<u8> {
        let mut out = Vec::new();
        encode(g, &mut out, &mut Scratch::default());
        out
    }

    fn bits(g: &FrameGeometry) -> Vec<Vec<[u32; 4]>> {
        g.draws
            .iter()
            .map(|d| d.positions.iter().map(|p| p.map(f32::to_bits)).collect())
            .collect()
    }

    #[test]
    fn every_bit_survives_across_blocks_and_draws() {
        // Sizes around the block, random bits (NaN payloads, negative zeros) without repeats,
        // and draws that repeat their vertices (a mesh's shared corners).
        let mut g = sample(&[0, 3, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 5, 9, 7000]);
        for d in &mut g.draws[6..] {
            let distinct = d.positions.len() / 3;
            d.positions = (0..d.positions.len())
                .map(|i| d.positions[(i * 7) % distinct])
                .collect();
        }
        g.draws[7].positions[5] = [-0.0, f32::NAN, 0.0, 1.0];
        let mut scratch = Scratch::default();
        for _ in 0..2 {
            // Twice through the same scratch: nothing of the first record leaks.
            let mut out = Vec::new();
            encode(&g, &mut out, &mut scratch);
            let back = decode(&out).unwrap();
            assert_eq!(bits(&back), bits(&g));
            let strip = |g: &FrameGeometry| {
                let mut g = g.clone();
                g.draws.iter_mut().for_each(|d| d.positions.clear());
                g
            };
            assert_eq!(strip(&back), strip(&g));
        }
    }

    #[test]
    fn a_repeated_vertex_is_stored_once_and_indexed() {
        let (a, b, c) = ([1.0, -2.0, 0.5, 1.0], [0.0; 4], [3.0, 3.0, 3.0, 1.0]);
        let mut g = sample(&[6]);
        g.missing.clear();
        g.draws[0].positions = vec![a, b, a, c, b, a];
        let out = encoded(&g);
        // Indices: 4 planes of 6 bytes; positions: 16 planes of 3 bytes.
        let (indices, positions) = out[out.len() - 24 - 48..].split_at(24);
        assert_eq!(&indices[..6], &[0, 1, 0, 2, 1, 0]);
        assert!(indices[6..].iter().all(|&b| b == 0));
        // Byte 3 of x: 1.0 is 0x3f800000; of y: -2.0 is 0xc0000000 (vertices a, b, c).
        assert_eq!(&positions[3 * 3..4 * 3], &[0x3f, 0x00, 0x40]);
        assert_eq!(&positions[7 * 3..8 * 3], &[0xc0, 0x00, 0x40]);
        assert_eq!(bits(&decode(&out).unwrap()), bits(&g));
    }

    #[test]
    fn damaged_payloads_are_refused_without_panicking() {
        let mut g = sample(&[5, 9]);
        g.draws[1].positions[4] = g.draws[1].positions[0];
        let out = encoded(&g);
        // Every truncation, and planes short by one byte.
        for len in 0..out.len() {
            assert!(decode(&out[..len]).is_err(), "truncated to {len}");
        }
        // Any byte flipped: a record or an error, never a panic.
        for at in 0..out.len() {
            let mut flipped = out.clone();
            flipped[at] ^= 0xff;
            let _ = decode(&flipped);
        }
        // An index past the draw's distinct vertices (the second draw's first, in plane 0).
        let planes_at = out.len() - 4 * 9 - 16 * (5 + 8);
        let mut wild = out.clone();
        wild[planes_at] = 200;
        assert!(decode(&wild).unwrap_err().contains("indexes vertex 200"));
        // Huge counts are refused before anything is allocated for them.
        let mut huge = Vec::new();
        for v in [1, 2, 3, u64::MAX] {
            put(&mut huge, v);
        }
        assert!(decode(&huge).unwrap_err().contains("draws in"));
        let mut many = Vec::new();
        let n = MAX_GEOMETRY_VERTICES + 1;
        for v in [1, 2, 3, 1, 0, 4, n, n, 0, 0, 0, 0, 0] {
            put(&mut many, v);
        }
        assert!(decode(&many).unwrap_err().contains("more than"));
    }
}
