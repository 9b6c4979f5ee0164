//! Geometry with its positions in byte planes (`GEOP` chunks, format version 3).
//!
//! A frame's positions are most of a geometry-captured session (48 MB a frame at 3M vertices)
//! and the largest cost of the agent's writer thread, which shares the CPU with the program.
//! Stored as they are, the floats compress poorly and slowly (LZ4: 48 → 10 MB at about
//! 0.7 GB/s on `many_draws`). Split into planes, byte k of every vertex together, the
//! exponent and sign bytes become long runs, and the same LZ4 gets 48 → 0.8 MB at about
//! 5 GB/s; the split itself runs at about 2.4 GB/s. The blosc "shuffle" filter, done here.
//!
//! Payload (varints are LEB128, signed ones zigzag, as postcard writes them):
//!
//! | part | contents |
//! |---|---|
//! | head | frame, context, vertex budget, draw count |
//! | per draw | call, primitive, vertices, dropped vertices, viewport x, y, w, h (signed) |
//! | missing | count; per draw: call, reason length, reason UTF-8 |
//! | planes | 16 planes of V bytes each (V: the draws' vertices, in draw order); plane 4c + b holds byte b (little-endian) of component c (x, y, z, w) of every vertex |
//!
//! Bytes after the planes are ignored, so a later version can append what older readers skip.

use crate::model::{DrawGeometry, FrameGeometry, GeometryMissing, MAX_GEOMETRY_VERTICES};
use crate::varint::{put, unzigzag32, zigzag32, Cursor};

/// Vertices split per pass: one pass reads a block's 64 KiB four times (once per
/// component), so the block stays in the L2 cache between passes.
const BLOCK: usize = 4096;

/// Appends `g` as a `GEOP` payload to `out`.
pub(crate) fn encode(g: &FrameGeometry, out: &mut Vec<u8>) {
    put(out, g.frame);
    put(out, g.context);
    put(out, g.vertex_budget);
    put(out, g.draws.len() as u64);
    for d in &g.draws {
        put(out, u64::from(d.call));
        put(out, u64::from(d.primitive));
        put(out, d.positions.len() as u64);
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
    let vertices = g.vertices() as usize;
    let start = out.len();
    out.resize(start + 16 * vertices, 0);
    let planes = &mut out[start..];
    let mut at = 0;
    for d in &g.draws {
        for block in d.positions.chunks(BLOCK) {
            split(block, planes, vertices, at);
            at += block.len();
        }
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
    // Each draw takes at least 8 bytes: a count past that is damage, refused before
    // allocating for it.
    if draw_count > c.remaining() / 8 {
        return Err(format!(
            "geometry: {draw_count} draws in {} bytes",
            c.remaining()
        ));
    }
    let mut draws = Vec::with_capacity(draw_count as usize);
    let mut vertices = 0u64;
    for _ in 0..draw_count {
        let call = u32_of(c.varint()?, "call")?;
        let primitive = u32_of(c.varint()?, "primitive")?;
        let n = c.varint()?;
        let dropped_vertices = c.varint()?;
        let mut viewport = [0i32; 4];
        for v in &mut viewport {
            *v = unzigzag32(u32_of(c.varint()?, "viewport")?) as i32;
        }
        vertices = vertices.saturating_add(n);
        if vertices > MAX_GEOMETRY_VERTICES {
            return Err(format!(
                "geometry of frame {frame} holds more than {MAX_GEOMETRY_VERTICES} vertices"
            ));
        }
        draws.push((n as usize, call, primitive, dropped_vertices, viewport));
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
    let vertices = vertices as usize;
    let planes = c.rest();
    if planes.len() / 16 < vertices {
        return Err(format!(
            "geometry: {vertices} vertices need {} bytes of planes, {} left",
            16 * vertices,
            planes.len()
        ));
    }
    let mut at = 0;
    let draws = draws
        .into_iter()
        .map(|(n, call, primitive, dropped_vertices, viewport)| {
            let mut positions = vec![[0f32; 4]; n];
            for block in positions.chunks_mut(BLOCK) {
                join(block, planes, vertices, at);
                at += block.len();
            }
            DrawGeometry {
                call,
                primitive,
                positions,
                dropped_vertices,
                viewport,
            }
        })
        .collect();
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

    fn bits(g: &FrameGeometry) -> Vec<[u32; 4]> {
        g.draws
            .iter()
            .flat_map(|d| d.positions.iter().map(|p| p.map(f32::to_bits)))
            .collect()
    }

    #[test]
    fn every_bit_survives_across_blocks_and_draws() {
        // Sizes around the block, and NaN payloads and negative zeros among the random bits.
        let g = sample(&[0, 3, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 5]);
        let mut out = Vec::new();
        encode(&g, &mut out);
        let back = decode(&out).unwrap();
        assert_eq!(bits(&back), bits(&g));
        let strip = |g: &FrameGeometry| {
            let mut g = g.clone();
            g.draws.iter_mut().for_each(|d| d.positions.clear());
            g
        };
        assert_eq!(strip(&back), strip(&g));
    }

    #[test]
    fn a_plane_holds_one_byte_of_one_component() {
        let mut g = sample(&[2]);
        g.draws[0].positions = vec![[1.0, -2.0, 0.5, 1.0], [1.0, -2.0, 0.5, 1.0]];
        let mut out = Vec::new();
        encode(&g, &mut out);
        let planes = &out[out.len() - 32..];
        // Byte 3 of 1.0 (0x3f800000) is 0x3f; of -2.0 (0xc0000000), 0xc0.
        assert_eq!(&planes[3 * 2..4 * 2], &[0x3f, 0x3f]);
        assert_eq!(&planes[7 * 2..8 * 2], &[0xc0, 0xc0]);
        assert_eq!(&planes[2 * 2..3 * 2], &[0x80, 0x80]);
    }

    #[test]
    fn damaged_payloads_are_refused_without_panicking() {
        let mut out = Vec::new();
        encode(&sample(&[5, 9]), &mut out);
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
        // Huge counts are refused before anything is allocated for them.
        let mut huge = Vec::new();
        for v in [1, 2, 3, u64::MAX] {
            put(&mut huge, v);
        }
        assert!(decode(&huge).unwrap_err().contains("draws in"));
        let mut many = Vec::new();
        for v in [1, 2, 3, 1, 0, 4, MAX_GEOMETRY_VERTICES + 1, 0, 0, 0, 0, 0] {
            put(&mut many, v);
        }
        assert!(decode(&many).unwrap_err().contains("more than"));
    }
}
