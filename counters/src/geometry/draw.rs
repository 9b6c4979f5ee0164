//! A draw call as the agent's wrapper saw it, and what replaying it under transform feedback
//! should produce: its primitive, and how many vertices once strips, fans and loops are
//! unrolled. Pure logic on the call's arguments (and, for multi-draws, the program's count
//! array).

use crate::gl::*;
use crate::list_run::ListRun;

/// A draw call as the wrapper saw it: the entry point's name and its arguments (as the
/// session stores them: integers sign-extended, pointers as addresses).
#[derive(Clone, Copy)]
pub struct DrawCall<'a> {
    /// The entry point, e.g. `glDrawElementsInstanced`.
    pub name: &'a str,
    /// Its arguments, in order.
    pub args: &'a [u64],
    /// How a call replayed as a display list (`glCallList(s)`, a `glEnd` block, `glRect*`)
    /// runs again (`None`: the GL loader has no matrix stack functions); other draws ignore
    /// it.
    pub list: Option<ListRun<'a>>,
    /// For a `glEnd`: its block's mode and the most vertices it can have made, where the
    /// agent knows them (`None` elsewhere).
    pub block: Option<BlockShape>,
}

/// What the agent saw of a `glBegin`…`glEnd` block: no call's arguments say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockShape {
    /// `glBegin`'s mode.
    pub mode: GLenum,
    /// The calls the program made between its `glBegin` and its `glEnd`: each vertex takes
    /// one at least (a display list called inside the block may make more, counted as
    /// dropped when it does).
    pub vertices_at_most: u64,
}

/// How a draw is replayed and what it should produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// The transform feedback primitive: points, lines or triangles.
    pub(super) primitive: GLenum,
    /// Vertices per primitive of `primitive`.
    pub(super) per: u64,
    /// Vertices the draw makes once unrolled into `primitive`, from its arguments (primitive
    /// restart can make it fewer).
    pub(super) expected: u64,
    /// The draw uses an element array.
    pub(super) indexed: bool,
    /// The draw's mode is points, lines or triangles already (no strip to unroll).
    pub(super) list: bool,
}

/// The entry point's name without its vendor suffix.
fn base_name(name: &str) -> &str {
    for suffix in [
        "ARB", "EXT", "OES", "ANGLE", "NV", "APPLE", "KHR", "IBM", "SUN",
    ] {
        if let Some(b) = name.strip_suffix(suffix) {
            return b;
        }
    }
    name
}

/// The transform feedback primitive of draw mode `mode`, and how many of its vertices
/// `count` vertices of that mode make once strips, fans and loops are unrolled.
fn unroll(mode: u32, count: u64) -> Result<(GLenum, u64), String> {
    let tri = |n: u64| (TRIANGLES, 3 * n);
    let line = |n: u64| (LINES, 2 * n);
    Ok(match mode {
        POINTS => (POINTS, count),
        LINES => line(count / 2),
        LINE_LOOP => line(if count >= 2 { count } else { 0 }),
        LINE_STRIP => line(count.saturating_sub(1)),
        TRIANGLES => tri(count / 3),
        TRIANGLE_STRIP | TRIANGLE_FAN | POLYGON => tri(count.saturating_sub(2)),
        QUADS => tri(count / 4 * 2),
        QUAD_STRIP => tri(count.saturating_sub(2) / 2 * 2),
        LINES_ADJACENCY => line(count / 4),
        LINE_STRIP_ADJACENCY => line(count.saturating_sub(3)),
        TRIANGLES_ADJACENCY => tri(count / 6),
        TRIANGLE_STRIP_ADJACENCY => tri(count.saturating_sub(4) / 2),
        PATCHES => return Err("GL_PATCHES draws need a tessellation stage".into()),
        m => return Err(format!("unknown draw mode 0x{m:X}")),
    })
}

fn arg(args: &[u64], i: usize) -> Result<u64, String> {
    args.get(i)
        .copied()
        .ok_or_else(|| format!("the draw has no argument {i}"))
}

/// Reads `n` `GLsizei` counts from the program's memory at `ptr` (a multi-draw's counts).
fn client_counts(ptr: u64, n: u64) -> Result<Vec<i64>, String> {
    if ptr == 0 {
        return Err("the multi-draw's count array is null".into());
    }
    if n > 1 << 20 {
        return Err(format!("the multi-draw has {n} draws (more than 2^20)"));
    }
    // SAFETY: the program passed this array of `n` counts to the draw being wrapped, which
    // read it too; it is still valid inside the wrapper.
    let s = unsafe { std::slice::from_raw_parts(ptr as *const GLsizei, n as usize) };
    Ok(s.iter().map(|&c| i64::from(c)).collect())
}

pub(super) fn plan(draw: DrawCall<'_>) -> Result<Plan, String> {
    let name = base_name(draw.name);
    let a = draw.args;
    if name.contains("Indirect") {
        return Err(format!(
            "{}: indirect draws keep their vertex counts in a GPU buffer and are not replayed",
            draw.name
        ));
    }
    if name.starts_with("glDrawTransformFeedback") {
        return Err(format!(
            "{}: draws sourced from a transform feedback object are not replayed",
            draw.name
        ));
    }
    if name.starts_with("glDrawTex") {
        return Err(format!(
            "{}: draws a screen-aligned rectangle with no vertex stage",
            draw.name
        ));
    }
    // (index of the count, index of the instance count, indexed)
    let single = match name {
        "glDrawArrays" => Some((2, None, false)),
        "glDrawArraysInstanced" | "glDrawArraysInstancedBaseInstance" => Some((2, Some(3), false)),
        "glDrawElements" | "glDrawElementsBaseVertex" => Some((1, None, true)),
        "glDrawRangeElements" | "glDrawRangeElementsBaseVertex" => Some((3, None, true)),
        "glDrawElementsInstanced"
        | "glDrawElementsInstancedBaseVertex"
        | "glDrawElementsInstancedBaseInstance"
        | "glDrawElementsInstancedBaseVertexBaseInstance" => Some((1, Some(4), true)),
        _ => None,
    };
    let mode = arg(a, 0)? as u32;
    let (counts, instances, indexed) = match (single, name) {
        (Some((c, i, indexed)), _) => {
            let instances = match i {
                Some(i) => arg(a, i)? as i64,
                None => 1,
            };
            (vec![arg(a, c)? as i64], instances, indexed)
        }
        (None, "glMultiDrawArrays") => (client_counts(arg(a, 2)?, arg(a, 3)?)?, 1, false),
        (None, "glMultiDrawElements" | "glMultiDrawElementsBaseVertex") => {
            (client_counts(arg(a, 1)?, arg(a, 4)?)?, 1, true)
        }
        _ => {
            return Err(format!(
                "{}: this draw call is not replayed under transform feedback",
                draw.name
            ))
        }
    };
    let (primitive, _) = unroll(mode, 0)?;
    let mut expected = 0u64;
    for c in counts {
        expected += unroll(mode, c.max(0) as u64)?.1;
    }
    expected = expected.saturating_mul(instances.max(0) as u64);
    let per = match primitive {
        POINTS => 1,
        LINES => 2,
        _ => 3,
    };
    Ok(Plan {
        primitive,
        per,
        expected,
        indexed,
        list: matches!(mode, POINTS | LINES | TRIANGLES),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, args: &[u64]) -> Result<Plan, String> {
        plan(DrawCall {
            name,
            args,
            list: None,
            block: None,
        })
    }

    #[test]
    fn unrolled_counts() {
        assert_eq!(unroll(5, 4), Ok((TRIANGLES, 6)));
        assert_eq!(unroll(5, 2), Ok((TRIANGLES, 0)));
        assert_eq!(unroll(6, 5), Ok((TRIANGLES, 9)));
        assert_eq!(unroll(4, 7), Ok((TRIANGLES, 6)));
        assert_eq!(unroll(2, 3), Ok((LINES, 6)));
        assert_eq!(unroll(3, 3), Ok((LINES, 4)));
        assert_eq!(unroll(1, 5), Ok((LINES, 4)));
        assert_eq!(unroll(0, 5), Ok((POINTS, 5)));
        assert_eq!(unroll(7, 8), Ok((TRIANGLES, 12)));
        assert!(unroll(0xE, 3).is_err());
    }

    #[test]
    fn plans() {
        let d = p("glDrawArrays", &[5, 0, 4]).unwrap();
        assert_eq!(
            (d.primitive, d.per, d.expected, d.indexed),
            (TRIANGLES, 3, 6, false)
        );
        let d = p("glDrawElements", &[4, 300, 0x1403, 0]).unwrap();
        assert_eq!((d.expected, d.indexed, d.list), (300, true, true));
        let d = p("glDrawElementsInstancedEXT", &[4, 6, 0x1403, 0, 3]).unwrap();
        assert_eq!(d.expected, 18);
        let d = p("glDrawArraysInstancedBaseInstance", &[1, 0, 4, 2, 0]).unwrap();
        assert_eq!((d.primitive, d.expected), (LINES, 8));
        let counts: [GLsizei; 2] = [4, 5];
        let d = p("glMultiDrawArrays", &[5, 0, counts.as_ptr() as u64, 2]).unwrap();
        assert_eq!(d.expected, 6 + 9);
        assert!(p("glDrawElementsIndirect", &[4, 0x1405, 0])
            .unwrap_err()
            .contains("indirect"));
        assert!(p("glDrawTexiOES", &[0, 0, 0, 1, 1]).is_err());
        assert!(p("glMultiDrawArrays", &[4, 0, 0, 2]).is_err());
    }
}
