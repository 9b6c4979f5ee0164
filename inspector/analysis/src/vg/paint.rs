//! Session completion: each recorded VG draw's serialized time spread over the pixels it
//! covered (`heat(p) += c(p)·T/N`), into the heat map of its frame and context, and its
//! triangles added to the frame's geometry.

use std::collections::HashMap;

use gpuheat_session::{
    DrawCoverage, DrawGeometry, FrameGeometry, HeatMap, Session, VgDraw, VgPath,
    MAX_GEOMETRY_VERTICES,
};
use rayon::prelude::*;

use super::coverage::{coverage, to_clip, Coverage};
use crate::measure::cost::serialized_ns;

/// `GL_TRIANGLES`.
const TRIANGLES: u32 = crate::enums::gl::TRIANGLES as u32;

/// What [`complete`] did.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct VgPainting {
    /// Whether the session asked for heat (it holds heat maps or records of maps that
    /// could not be made); nothing is painted otherwise.
    pub requested: bool,
    /// Draws added to a heat map (those that covered no pixel included, with 0 fragments).
    pub painted: usize,
    /// Of those, draws whose path data was unknown and whose bounding box stood in.
    pub approximate: usize,
    /// Draws not painted: frame, call, and why in one line.
    pub not_painted: Vec<(u64, u32, String)>,
}

/// One draw's outcome, computed before the session is changed.
struct Painted {
    frame: u64,
    context: u64,
    call: u32,
    time_ns: u64,
    size: [u32; 2],
    cov: Coverage,
    /// Path and image draws add their triangles to the frame's geometry; clears do not.
    geometry: bool,
}

/// Paints the session's VG draws into its heat maps, when it asked for heat.
///
/// For each VG call with a draw: `T` is the call's `gpu_time_serialized` sample, the path is
/// the `vg_paths` record of the same context, handle and serial, and the surface is the size
/// of the frame's heat map of that context when there is one (it is the frame's own
/// surface), else the latest size the context's start states give. The draw's coverage
/// ([`coverage`]) adds `c(p)·T/N` to the heat and `c(p)` to the overdraw of the map of its
/// frame and context (made, without colour, when the session has none), which lists it in
/// `draws`; a frame given a map this way loses its `heat_missing` record. Path and image
/// draws also add their triangles (clip space, viewport the whole surface) to the frame's
/// geometry, in a record of `vertex_budget` 0 (host-made) when the agent sent none. A call
/// whose GL children the map already paints, or that the map lists itself (the agent
/// painted it over its library's draws), is left out (its time is there already).
pub fn complete(s: &mut Session) -> VgPainting {
    let mut out = VgPainting {
        requested: !s.heat.is_empty() || !s.heat_missing.is_empty(),
        ..VgPainting::default()
    };
    if !out.requested {
        return out;
    }
    let results: Vec<Result<Painted, (u64, u32, String)>> = {
        let s = &*s;
        let frames: HashMap<u64, usize> = s
            .frames
            .iter()
            .enumerate()
            .map(|(i, f)| (f.index, i))
            .collect();
        let paths: HashMap<(u64, u64, u64), &VgPath> = s
            .vg_paths
            .iter()
            .map(|p| ((p.context, p.path, p.serial), p))
            .collect();
        let maps: HashMap<(u64, u64), &HeatMap> =
            s.heat.iter().map(|m| ((m.frame, m.context), m)).collect();
        s.vg_calls
            .par_iter()
            .filter(|v| v.draw.is_some())
            .map(|v| {
                let fail = |why: String| (v.frame, v.call, why);
                let draw = v.draw.as_ref().expect("filtered on draw");
                let &fi = frames
                    .get(&v.frame)
                    .ok_or_else(|| fail(format!("frame {} is not in the session", v.frame)))?;
                let time_ns = serialized_ns(s, fi, v.call).ok_or_else(|| {
                    fail("no serialized GPU time (captured without --mode full?)".into())
                })?;
                let map = maps.get(&(v.frame, v.context));
                // The GL draws a VG library made inside the call, painted by the agent,
                // already hold the call's time (T includes theirs): painting the call too
                // would count it twice. So does the call itself when the agent painted it
                // over its library's draws (its path data unknown here).
                if let Some(m) = map {
                    if m.draws.iter().any(|d| d.call == v.call) {
                        return Err(fail(
                            "painted by the agent over the GL draws of its library".into(),
                        ));
                    }
                    if m.draws
                        .iter()
                        .any(|d| d.fragments > 0 && v.children.contains(&d.call))
                    {
                        return Err(fail(
                            "its GL calls are already painted in the frame's heat map".into(),
                        ));
                    }
                }
                let size = map
                    .map(|m| [m.width, m.height])
                    .or_else(|| start_surface(s, v.context, v.frame))
                    .ok_or_else(|| {
                        fail(format!(
                            "the size of context {:#x}'s surface is unknown",
                            v.context
                        ))
                    })?;
                let path = match draw {
                    VgDraw::Path(d) if d.serial != 0 => {
                        Some(*paths.get(&(v.context, d.path, d.serial)).ok_or_else(|| {
                            fail(format!(
                                "path {:#x} version {} was not recorded",
                                d.path, d.serial
                            ))
                        })?)
                    }
                    _ => None,
                };
                let cov = coverage(draw, path, size).map_err(fail)?;
                Ok(Painted {
                    frame: v.frame,
                    context: v.context,
                    call: v.call,
                    time_ns,
                    size,
                    cov,
                    geometry: !matches!(draw, VgDraw::Rect(_)),
                })
            })
            .collect()
    };
    let mut made = Vec::new();
    let mut painted_in = Vec::new();
    for r in results {
        match r {
            Ok(p) => match add(s, &p, &mut made) {
                Ok(()) => {
                    painted_in.push((p.frame, p.context));
                    out.painted += 1;
                    out.approximate += usize::from(p.cov.approximate);
                }
                Err(why) => out.not_painted.push((p.frame, p.call, why)),
            },
            Err(e) => out.not_painted.push(e),
        }
    }
    // The agent lists a frame's draws in call order; keep it so with ours among them.
    let touched: Vec<(u64, u64)> = {
        let mut t: Vec<_> = painted_in.into_iter().collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    for m in &mut s.heat {
        if touched.binary_search(&(m.frame, m.context)).is_ok() {
            m.draws.sort_by_key(|d| d.call);
        }
    }
    for g in &mut s.geometry {
        if touched.binary_search(&(g.frame, g.context)).is_ok() {
            g.draws.sort_by_key(|d| d.call);
        }
    }
    s.heat_missing
        .retain(|h| !made.contains(&(h.frame, h.context)));
    out
}

/// The surface size of `context` from its start states: the latest one at or before
/// `frame`, else the latest of all.
fn start_surface(s: &Session, context: u64, frame: u64) -> Option<[u32; 2]> {
    let with = || {
        s.states
            .iter()
            .filter(move |st| st.context == context && st.surface.is_some())
    };
    with()
        .filter(|st| st.frame <= frame)
        .max_by_key(|st| st.frame)
        .or_else(|| with().max_by_key(|st| st.frame))
        .and_then(|st| st.surface)
}

/// Adds one draw to its frame's heat map (made when missing; `made` collects the maps made)
/// and geometry.
fn add(s: &mut Session, p: &Painted, made: &mut Vec<(u64, u64)>) -> Result<(), String> {
    let [w, h] = p.size;
    let i = match s
        .heat
        .iter()
        .position(|m| m.frame == p.frame && m.context == p.context)
    {
        Some(i) => i,
        None => {
            let n = w as usize * h as usize;
            s.heat.push(HeatMap {
                frame: p.frame,
                context: p.context,
                width: w,
                height: h,
                heat: vec![0.0; n],
                overdraw: vec![0; n],
                colour: Vec::new(),
                draws: Vec::new(),
            });
            made.push((p.frame, p.context));
            s.heat.len() - 1
        }
    };
    let map = &mut s.heat[i];
    map.validate()
        .map_err(|e| format!("the frame's heat map is damaged: {e}"))?;
    let c = &p.cov;
    let n = c.fragments();
    let bw = (c.bbox[2] - c.bbox[0]) as usize;
    if n > 0 {
        // Per pixel in f64, added to the f32 map once: Σ_p c·T/N sums to T up to the
        // map's own rounding.
        let share = p.time_ns as f64 / n as f64;
        for (k, &cnt) in c.counts.iter().enumerate().filter(|(_, &v)| v != 0) {
            let x = c.bbox[0] as usize + k % bw;
            let y = c.bbox[1] as usize + k / bw;
            let at = y * map.width as usize + x;
            map.heat[at] += (f64::from(cnt) * share) as f32;
            map.overdraw[at] += u32::from(cnt);
        }
    }
    map.draws.push(DrawCoverage {
        call: p.call,
        fragments: n,
        time_ns: p.time_ns,
        bbox: c.bbox,
    });
    if p.geometry && !c.triangles.is_empty() {
        add_geometry(s, p);
    }
    Ok(())
}

/// Adds the draw's triangles, in clip space, to its frame's geometry.
fn add_geometry(s: &mut Session, p: &Painted) {
    let positions: Vec<[f32; 4]> = p
        .cov
        .triangles
        .iter()
        .map(|&v| to_clip(v, p.size))
        .collect();
    let i = match s
        .geometry
        .iter()
        .position(|g| g.frame == p.frame && g.context == p.context)
    {
        Some(i) => i,
        None => {
            s.geometry.push(FrameGeometry {
                frame: p.frame,
                context: p.context,
                vertex_budget: 0,
                draws: Vec::new(),
                missing: Vec::new(),
            });
            s.geometry.len() - 1
        }
    };
    let g = &mut s.geometry[i];
    if g.vertices() + positions.len() as u64 > MAX_GEOMETRY_VERTICES {
        g.missing.push(gpuheat_session::GeometryMissing {
            call: p.call,
            reason: format!(
                "its {} vertices would pass the {MAX_GEOMETRY_VERTICES} a frame may hold",
                positions.len()
            ),
        });
        return;
    }
    g.draws.push(DrawGeometry {
        call: p.call,
        primitive: TRIANGLES,
        positions,
        dropped_vertices: 0,
        viewport: [0, 0, p.size[0] as i32, p.size[1] as i32],
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_session::{VgCall, VgPathDraw};
    use gpuheat_testkit::{path_draw, SessionBuilder, CONTEXT};

    /// vguRect(x, y, w, h) as path 7, version `serial`.
    fn rect(serial: u64, x: f32, y: f32, w: f32, h: f32) -> VgPath {
        VgPath {
            context: CONTEXT,
            path: 7,
            serial,
            datatype: 3,
            capabilities: 0,
            segments: vec![2, 6, 8, 6, 0],
            coords: vec![x, y, x + w, y + h, x],
        }
    }

    fn draw_path(frame: u64, call: u32, serial: u64) -> VgCall {
        VgCall {
            frame,
            context: CONTEXT,
            call,
            children: Vec::new(),
            draw: Some(VgDraw::Path(VgPathDraw {
                fill_rule: crate::enums::vg::NON_ZERO,
                ..path_draw(7, serial)
            })),
            upload: None,
            values: Vec::new(),
        }
    }

    fn heat_sum(m: &HeatMap) -> f64 {
        m.heat.iter().map(|&v| f64::from(v)).sum()
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-4 * want
    }

    #[test]
    fn two_draws_spread_their_times_over_a_new_map() {
        // The agent could not paint the VG context (it draws no GL fragments) and said so.
        let (mut calls, mut s) = (Vec::new(), SessionBuilder::new().start_state(CONTEXT, 0));
        s = s.frame(|f| {
            calls.push(f.draw(1_000));
            calls.push(f.draw(3_000));
            f.heat_missing("OpenVG contexts draw no GL fragments");
        });
        let mut s = s.build();
        let frame = s.frames[0].index;
        // 30 × 20 = 600 px, and 20 × 20 = 400 px overlapping it on 10 × 20.
        s.vg_paths = vec![
            rect(1, 10.0, 10.0, 30.0, 20.0),
            rect(2, 30.0, 10.0, 20.0, 20.0),
        ];
        s.vg_calls = vec![draw_path(frame, calls[0], 1), draw_path(frame, calls[1], 2)];
        let out = complete(&mut s);
        assert_eq!((out.requested, out.painted, out.approximate), (true, 2, 0));
        assert!(out.not_painted.is_empty(), "{:?}", out.not_painted);
        assert!(s.heat_missing.is_empty());
        let m = &s.heat[0];
        m.validate().unwrap();
        assert_eq!((m.width, m.height, m.colour.len()), (64, 64, 0));
        eprintln!(
            "two draws: sum of heat {} ns, sum of T 4000 ns",
            heat_sum(m)
        );
        assert!(close(heat_sum(m), 4_000.0), "{}", heat_sum(m));
        assert_eq!(m.overdraw.iter().map(|&v| u64::from(v)).sum::<u64>(), 1_000);
        assert_eq!(m.overdraw.iter().filter(|&&v| v == 2).count(), 200);
        let d: Vec<_> = m
            .draws
            .iter()
            .map(|d| (d.call, d.fragments, d.time_ns, d.bbox))
            .collect();
        assert_eq!(
            d,
            vec![
                (calls[0], 600, 1_000, [10, 10, 40, 30]),
                (calls[1], 400, 3_000, [30, 10, 50, 30])
            ]
        );
        // A pixel of both: 1000/600 + 3000/400.
        let p = &m.heat[20 * 64 + 35];
        assert!((f64::from(*p) - (1000.0 / 600.0 + 7.5)).abs() < 1e-4, "{p}");
        // Their triangles, in clip space, in a host-made geometry record.
        let g = &s.geometry[0];
        g.validate().unwrap();
        assert_eq!(g.vertex_budget, 0);
        assert_eq!(g.draws.len(), 2);
        let first = &g.draws[0];
        assert_eq!((first.primitive, first.viewport), (4, [0, 0, 64, 64]));
        for v in &first.positions {
            assert!(v[0] >= 10.0 / 32.0 - 1.0 - 1e-6 && v[0] <= 40.0 / 32.0 - 1.0 + 1e-6);
            assert_eq!((v[2], v[3]), (0.0, 1.0));
        }
    }

    #[test]
    fn vg_draws_merge_into_an_existing_map() {
        let mut calls = Vec::new();
        let s = SessionBuilder::new().frame(|f| {
            f.heat_map(64, 64);
            let gl = f.draw(2_000);
            f.cover(gl, [0, 0, 10, 10]);
            calls.push(gl);
            calls.push(f.draw(500));
        });
        let mut s = s.build();
        let frame = s.frames[0].index;
        let n = 64 * 64;
        s.heat[0].colour = vec![9; 4 * n];
        s.vg_paths = vec![rect(4, 5.0, 5.0, 10.0, 10.0)];
        s.vg_calls = vec![draw_path(frame, calls[1], 4)];
        let out = complete(&mut s);
        assert_eq!(out.painted, 1);
        assert_eq!(s.heat.len(), 1);
        let m = &s.heat[0];
        m.validate().unwrap();
        assert_eq!(m.colour, vec![9; 4 * n]);
        assert!(close(heat_sum(m), 2_500.0), "{}", heat_sum(m));
        assert_eq!(
            m.overdraw.iter().map(|&v| u64::from(v)).sum::<u64>(),
            100 + 100
        );
        assert_eq!(m.overdraw[7 * 64 + 7], 2);
        assert_eq!(m.draws.iter().map(|d| d.call).collect::<Vec<_>>(), calls);
    }

    #[test]
    fn draws_that_cannot_be_painted_say_why() {
        let mut calls = Vec::new();
        let s = SessionBuilder::new().start_state(CONTEXT, 0).frame(|f| {
            calls.push(f.draw(1_000));
            calls.push(f.draw_untimed());
            calls.push(f.draw(1_000));
            f.heat_missing("OpenVG contexts draw no GL fragments");
        });
        let mut s = s.build();
        let frame = s.frames[0].index;
        // Version 5 of the path was never sent; the second draw has no time; the third
        // has neither data nor bounds.
        s.vg_calls = vec![
            draw_path(frame, calls[0], 5),
            draw_path(frame, calls[1], 0),
            draw_path(frame, calls[2], 0),
        ];
        let out = complete(&mut s);
        assert_eq!(out.painted, 0);
        let why: Vec<_> = out
            .not_painted
            .iter()
            .map(|(_, c, w)| (*c, w.as_str()))
            .collect();
        assert_eq!(why.len(), 3);
        assert!(why[0].1.contains("version 5 was not recorded"), "{why:?}");
        assert!(why[1].1.contains("no serialized GPU time"), "{why:?}");
        assert!(why[2].1.contains("PATH_TRANSFORMED_BOUNDS"), "{why:?}");
        // Nothing painted: the frame keeps its missing record and gets no map.
        assert!(s.heat.is_empty());
        assert_eq!(s.heat_missing.len(), 1);
    }

    #[test]
    fn a_pick_finds_exactly_the_painted_fragments() {
        // A circle (vguEllipse) over a rectangle: every pixel's overdraw is what picking it
        // recovers from the recorded triangles, curved edges included.
        let mut calls = Vec::new();
        let s = SessionBuilder::new().start_state(CONTEXT, 0).frame(|f| {
            calls.push(f.draw(7_000));
            calls.push(f.draw(2_000));
            f.heat_missing("OpenVG contexts draw no GL fragments");
        });
        let mut s = s.build();
        let frame = s.frames[0].index;
        let (cx, cy, r) = (30.0f32, 33.0f32, 20.3f32);
        let circle = VgPath {
            serial: 2,
            segments: vec![2, 18, 18, 0],
            coords: vec![cx + r, cy, r, r, 0.0, cx - r, cy, r, r, 0.0, cx + r, cy],
            ..rect(2, 0.0, 0.0, 0.0, 0.0)
        };
        s.vg_paths = vec![rect(1, 5.5, 7.25, 40.0, 30.0), circle];
        s.vg_calls = vec![draw_path(frame, calls[0], 1), draw_path(frame, calls[1], 2)];
        assert_eq!(complete(&mut s).painted, 2);
        let m = s.heat[0].clone();
        assert!(close(heat_sum(&m), 9_000.0), "{}", heat_sum(&m));
        for y in 0..m.height {
            for x in 0..m.width {
                let p = crate::measure::pick::pick(&s, frame, x, y).unwrap();
                assert_eq!(p.method, crate::measure::pick::PickMethod::Geometry);
                let n: u32 = p.draws.iter().map(|d| d.fragments).sum();
                assert_eq!(n, p.overdraw, "pixel ({x}, {y})");
                let heat: f64 = p.draws.iter().map(|d| d.heat_ns).sum();
                assert!((heat - p.heat_ns).abs() < 1e-3, "pixel ({x}, {y})");
            }
        }
    }

    #[test]
    fn a_call_whose_gl_children_were_painted_is_not_painted_again() {
        let mut calls = Vec::new();
        let s = SessionBuilder::new().frame(|f| {
            f.heat_map(64, 64);
            calls.push(f.draw(0));
            let child = f.draw(900);
            f.cover(child, [0, 0, 10, 10]);
            calls.push(child);
        });
        let mut s = s.build();
        let frame = s.frames[0].index;
        s.vg_paths = vec![rect(1, 0.0, 0.0, 10.0, 10.0)];
        let mut v = draw_path(frame, calls[0], 1);
        v.children = vec![calls[1]];
        s.vg_calls = vec![v];
        let out = complete(&mut s);
        assert_eq!(out.painted, 0);
        assert!(out.not_painted[0].2.contains("already painted"));
        assert!(close(heat_sum(&s.heat[0]), 900.0));
    }

    #[test]
    fn a_call_the_agent_painted_over_its_library_draws_is_not_painted_again() {
        let mut call = 0;
        let s = SessionBuilder::new().frame(|f| {
            f.heat_map(64, 64);
            call = f.draw(900);
            f.cover(call, [0, 0, 10, 10]);
        });
        let mut s = s.build();
        let frame = s.frames[0].index;
        // Its path data unknown (serial 0, no bounds): the host could not paint it anyway.
        s.vg_calls = vec![draw_path(frame, call, 0)];
        let out = complete(&mut s);
        assert_eq!(out.painted, 0);
        assert!(out.not_painted[0].2.contains("painted by the agent"));
        assert!(close(heat_sum(&s.heat[0]), 900.0));
    }

    #[test]
    fn nothing_is_painted_when_heat_was_not_asked_for() {
        let mut call = 0;
        let mut s = SessionBuilder::new()
            .start_state(CONTEXT, 0)
            .frame(|f| call = f.draw(1_000))
            .build();
        s.vg_paths = vec![rect(1, 0.0, 0.0, 8.0, 8.0)];
        s.vg_calls = vec![draw_path(s.frames[0].index, call, 1)];
        let out = complete(&mut s);
        assert_eq!(out, VgPainting::default());
        assert!(s.heat.is_empty() && s.geometry.is_empty());
    }
}
