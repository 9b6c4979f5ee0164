//! Replaying an indexed list draw as its distinct vertices: `glDrawArrays(GL_POINTS)` over the
//! span of indices it uses, then the positions unrolled through its indices on the CPU.
//!
//! Why: a replayed `glDrawElements(GL_TRIANGLES)` runs the vertex stage once per index and
//! writes every unrolled vertex through transform feedback; a mesh uses each vertex in about
//! three to six triangles. On llvmpipe, which shades vertices on the program's thread, the
//! replay cost as much as the program's own draw. As points, the vertex stage runs once per
//! vertex of the span, and what it writes is the span. The vertex stage sees the same inputs
//! either way: `gl_VertexID` is the index for the indexed draw and `first + i` for the points,
//! which is the same number; attributes are fetched at that index.
//!
//! Only where that holds exactly: `glDrawElements` and `glDrawRangeElements` (no base vertex,
//! no instances), a list mode (points, lines, triangles: no strip to unroll), primitive
//! restart off, and a span no longer than the draw's index count (else nothing is saved).
//! Everything else is replayed as it was drawn.

use crate::gl::*;
use crate::state::drain_errors;

/// The indices a distinct-vertex replay unrolls through: each index less the span's first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unroll {
    /// For each unrolled vertex (whole primitives only), its vertex in the span.
    pub(super) at: Vec<u32>,
    /// The span's first vertex index (`first` of the points replay).
    pub(super) first: u32,
    /// Vertices in the span (`count` of the points replay).
    pub(super) span: u32,
}

/// `(mode, count, type, indices offset or pointer)` of an indexed draw a points replay can
/// stand for, from the entry point's name and arguments.
pub(super) fn candidate(name: &str, args: &[u64]) -> Option<(GLenum, u64, GLenum, u64)> {
    let (mode, count, ty, indices) = match name {
        "glDrawElements" => (args.first()?, args.get(1)?, args.get(2)?, args.get(3)?),
        "glDrawRangeElements" => (args.first()?, args.get(3)?, args.get(4)?, args.get(5)?),
        _ => return None,
    };
    let mode = *mode as GLenum;
    matches!(mode, POINTS | LINES | TRIANGLES).then_some((mode, *count, *ty as GLenum, *indices))
}

/// The span and the unroll of `indices` into `expected` vertices (whole primitives), made
/// from `indices` in place, or `None` when a points replay would not write fewer vertices than
/// the draw's own.
pub(super) fn unroll(mut indices: Vec<u32>, expected: u64) -> Option<Unroll> {
    let used = usize::try_from(expected).ok()?;
    if indices.len() < used {
        return None;
    }
    indices.truncate(used);
    let first = *indices.iter().min()?;
    let last = *indices.iter().max()?;
    let span = last - first + 1;
    if u64::from(span) > expected {
        return None;
    }
    indices.iter_mut().for_each(|i| *i -= first);
    Some(Unroll {
        at: indices,
        first,
        span,
    })
}

/// Reads the `count` indices of type `ty` an indexed draw just drew: from the element array
/// buffer bound (mapped for reading at offset `indices`), or from the program's memory at
/// `indices` when none is bound. `Err` (with no GL error left) when they cannot be read, e.g.
/// the program has the buffer mapped.
///
/// # Safety
/// The context must be current, `t`, `g` its real functions, inside an error scope; the draw
/// (with these arguments and the element array binding as it is) must have just succeeded.
pub(super) unsafe fn read_indices(
    t: &ThermalFns,
    g: &GeometryFns,
    count: u64,
    ty: GLenum,
    indices: u64,
) -> Result<Vec<u32>, String> {
    let size = match ty {
        UNSIGNED_BYTE => 1,
        UNSIGNED_SHORT => 2,
        UNSIGNED_INT => 4,
        other => return Err(format!("index type 0x{other:X}")),
    };
    let bytes = count
        .checked_mul(size)
        .filter(|&b| b > 0 && b <= 1 << 30)
        .ok_or_else(|| format!("{count} indices"))? as usize;
    let decode = |raw: &[u8]| -> Vec<u32> {
        match size {
            1 => raw.iter().map(|&b| u32::from(b)).collect(),
            2 => raw
                .chunks_exact(2)
                .map(|c| u32::from(u16::from_ne_bytes([c[0], c[1]])))
                .collect(),
            _ => raw
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        }
    };
    // SAFETY: our caller's promise: the context is current; the draw just read `bytes` from
    // the client pointer (no buffer bound) or from the bound buffer at this offset, so the
    // memory is valid, and the range lies inside the buffer; the mapping is unmapped at once.
    unsafe {
        if t.integer(ELEMENT_ARRAY_BUFFER_BINDING) == 0 {
            if indices == 0 {
                return Err("the draw's indices are a null pointer".into());
            }
            let raw = std::slice::from_raw_parts(indices as *const u8, bytes);
            return Ok(decode(raw));
        }
        crate::waits::note();
        let mapped = (g.map_buffer_range)(
            ELEMENT_ARRAY_BUFFER,
            indices as GLsizeiptr,
            bytes as GLsizeiptr,
            MAP_READ_BIT,
        ) as *const u8;
        if mapped.is_null() {
            let e = drain_errors(t);
            return Err(format!(
                "mapping the element array buffer: GL error 0x{e:04X}"
            ));
        }
        let out = decode(std::slice::from_raw_parts(mapped, bytes));
        (g.unmap_buffer)(ELEMENT_ARRAY_BUFFER);
        let e = drain_errors(t);
        if e != NO_ERROR {
            return Err(format!(
                "reading the element array buffer: GL error 0x{e:04X}"
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fan_mesh_unrolls_through_its_span() {
        // A quad as two triangles sharing an edge, at indices 10..=13.
        let indices = [10, 11, 12, 10, 12, 13];
        let u = unroll(indices.to_vec(), 6).unwrap();
        assert_eq!((u.first, u.span), (10, 4));
        assert_eq!(u.at, vec![0, 1, 2, 0, 2, 3]);
    }

    #[test]
    fn only_whole_primitives_are_unrolled() {
        // 7 indices of triangles draw 2 triangles; the 7th index is not drawn and does not
        // widen the span.
        let u = unroll(vec![0, 1, 2, 2, 1, 3, 900], 6).unwrap();
        assert_eq!((u.first, u.span, u.at.len()), (0, 4, 6));
    }

    #[test]
    fn a_sparse_span_is_replayed_as_drawn() {
        // Two triangles far apart: the span would shade 1,003 vertices for 6.
        assert_eq!(unroll(vec![0, 1, 2, 1000, 1001, 1002], 6), None);
        assert_eq!(unroll(Vec::new(), 0), None);
        // Fewer indices than the plan expects (cannot happen for a list; refused anyway).
        assert_eq!(unroll(vec![0, 1, 2], 6), None);
    }

    #[test]
    fn candidates_are_the_plain_indexed_list_draws() {
        let tri = u64::from(TRIANGLES);
        let short = u64::from(UNSIGNED_SHORT);
        assert_eq!(
            candidate("glDrawElements", &[tri, 6, short, 64]),
            Some((TRIANGLES, 6, UNSIGNED_SHORT, 64))
        );
        assert_eq!(
            candidate("glDrawRangeElements", &[tri, 0, 3, 6, short, 0]),
            Some((TRIANGLES, 6, UNSIGNED_SHORT, 0))
        );
        let strip = u64::from(TRIANGLE_STRIP);
        assert_eq!(candidate("glDrawElements", &[strip, 6, short, 0]), None);
        assert_eq!(
            candidate("glDrawElementsBaseVertex", &[tri, 6, short, 0, 5]),
            None
        );
        assert_eq!(candidate("glDrawArrays", &[tri, 0, 6]), None);
    }
}
