//! The default bench: the call cost (calls.rs), then, each unless skipped, the attach
//! (attach.rs), heat (heat.rs), offscreen heat (offscreen.rs) and geometry (geometry.rs)
//! costs, the agent's waits per frame (waits.rs), what watching costs (watch.rs), what the
//! Vulkan layer costs (vulkan.rs), and the capture-cost targets they are held to (targets.rs), printed as one report
//! or one JSON document.

use anyhow::Result;
use serde_json::json;
use std::time::{Duration, Instant};

use crate::calls::{self, Bench, CallPlan, Config, Outcome};
use crate::geometry::{self, GeometryRow, Workload};
use crate::heat::{self, HeatRow};
use crate::offscreen::{self, OffscreenRow};
use crate::programs;
use crate::table::Spread;
use crate::vulkan::{self, VkPlan, Vulkan};
use crate::waits::{self, Waits};
use crate::watch::{self, WatchRow};
use crate::{attach, clock, targets};

/// What the default bench measures.
pub struct Plan {
    pub calls: CallPlan,
    /// Fresh targets to attach to (0: skip).
    pub attaches: usize,
    /// Draw counts of the heat-cost runs (none: skip).
    pub heat_layers: Vec<u32>,
    /// Captured frames of the offscreen heat-cost runs (0: skip).
    pub offscreen_frames: u32,
    /// Workload of the geometry-cost runs (none: skip), its captured frames and runs.
    pub geometry: Option<Workload>,
    pub geometry_frames: u32,
    pub geometry_runs: u32,
    /// Draw counts of the agent-waits runs (none: skip).
    pub waits: Vec<u32>,
    /// Draw counts of the watch-cost runs (none: skip).
    pub watch: Vec<u32>,
    /// The Vulkan-layer runs (none: skip).
    pub vulkan: Option<VkPlan>,
}

/// What the bench measured besides the per-call cost (each `None` when skipped).
struct Extras<'a> {
    attach: Option<&'a attach::AttachStats>,
    heat: Option<&'a [HeatRow]>,
    offscreen: Option<&'a OffscreenRow>,
    geometry: Option<&'a GeometryRow>,
    waits: Option<&'a Waits>,
    watch: Option<&'a [WatchRow]>,
    vulkan: Option<&'a Vulkan>,
}

/// Runs every bench of `plan` and prints the report (`json`: as JSON).
pub fn run(plan: &Plan) -> Result<()> {
    let timeout = plan.calls.timeout;
    let (started, results, attach, heat, offscreen, geometry, waits, watched, vk) =
        programs::in_scratch(|tools, scratch| {
            let bench = Bench {
                plan: &plan.calls,
                tools,
                scratch,
            };
            let started = Instant::now();
            let results = bench.run_all()?;
            let attach = match plan.attaches {
                0 => None,
                n => Some(attach::measure(
                    &tools.gpuheat,
                    &tools.overdraw,
                    scratch,
                    n,
                )?),
            };
            let heat = if plan.heat_layers.is_empty() {
                None
            } else {
                Some(heat::measure(
                    &tools.gpuheat,
                    &tools.agent,
                    &tools.overdraw,
                    scratch,
                    &plan.heat_layers,
                    timeout,
                )?)
            };
            let offscreen = match plan.offscreen_frames {
                0 => None,
                n => Some(offscreen::measure_offscreen(
                    &tools.gpuheat,
                    &tools.agent,
                    &tools.offscreen_pass,
                    scratch,
                    n,
                    timeout,
                )?),
            };
            let geometry = match plan.geometry {
                None => None,
                Some(w) => Some(geometry::measure(
                    &tools.gpuheat,
                    &tools.agent,
                    &tools.many_draws,
                    scratch,
                    w,
                    plan.geometry_frames,
                    plan.geometry_runs,
                    timeout,
                )?),
            };
            let waits = if plan.waits.is_empty() {
                None
            } else {
                Some(waits::measure(
                    &tools.gpuheat,
                    &tools.agent,
                    &tools.many_draws,
                    scratch,
                    &plan.waits,
                    timeout,
                )?)
            };
            let watched = if plan.watch.is_empty() {
                None
            } else {
                Some(watch::measure(
                    &tools.gpuheat,
                    &tools.many_draws,
                    scratch,
                    &plan.watch,
                    timeout,
                )?)
            };
            let vk = match &plan.vulkan {
                None => None,
                Some(p) => Some(vulkan::measure(&tools.gpuheat, &tools.agent, scratch, p)?),
            };
            Ok((
                started, results, attach, heat, offscreen, geometry, waits, watched, vk,
            ))
        })?;
    print(
        &plan.calls,
        &results,
        Extras {
            attach: attach.as_ref(),
            heat: heat.as_deref(),
            offscreen: offscreen.as_ref(),
            geometry: geometry.as_ref(),
            waits: waits.as_ref(),
            watch: watched.as_deref(),
            vulkan: vk.as_ref(),
        },
        started.elapsed(),
    )
}

/// The report: each bench's table in turn, or one JSON document of them all.
fn print(
    plan: &CallPlan,
    outcomes: &[Outcome],
    extras: Extras<'_>,
    elapsed: Duration,
) -> Result<()> {
    let Extras {
        attach,
        heat,
        offscreen,
        geometry,
        waits,
        watch: watched,
        vulkan: vk,
    } = extras;
    let base = calls::base(outcomes)?;
    let renderer = calls::renderer(outcomes);
    let of = |c: Config| outcomes.iter().find(|o| o.config == c);
    let figures = targets::Figures {
        timeline_ns: of(Config::Timeline).and_then(Outcome::ns_spread),
        direct_ns: Some(base),
        apitrace_ns: of(Config::Apitrace).and_then(Outcome::ns),
        full_ns: of(Config::Full).and_then(Outcome::ns_spread),
        timeline_bytes_per_call: of(Config::Timeline)
            .and_then(Outcome::file)
            .map(|f| f.per_call()),
        apitrace_bytes_per_call: of(Config::Apitrace)
            .and_then(Outcome::file)
            .map(|f| f.per_call()),
        heat: heat
            .and_then(|rows| rows.iter().max_by_key(|r| r.layers))
            .map(|r| (r.layers, r.heat_ratio())),
        first_attach_ms: attach.map(|a| {
            let h = Spread::of(&a.first.hiccup_ms);
            (h.median, h.min, h.max)
        }),
        geometry: geometry.map(|g| g.geometry.ratio(&g.full)),
        stamp_ns: Some(clock::stamp_costs()),
    };
    let target_rows = targets::rows(&figures);
    if plan.json {
        let configs = calls::json(outcomes, base);
        let doc = json!({
            "workload": "call_cost: M x glUniform1f per frame, 1 draw, eglSwapBuffers",
            "api": plan.api,
            "renderer": renderer,
            "calls_per_frame": plan.calls,
            "frames_per_run": plan.frames,
            "measured_frames": [1, plan.frames - 2],
            "runs": plan.runs,
            "elapsed_s": elapsed.as_secs_f64(),
            "configurations": configs,
            "targets": targets::json(&target_rows),
            "attach": attach.map(attach::to_json),
            "heat": heat.map(heat::to_json),
            "offscreen": offscreen.map(offscreen::to_json),
            "geometry": geometry.map(geometry::to_json),
            "waits": waits.map(waits::to_json),
            "watch": watched.map(watch::to_json),
            "vulkan": vk.map(vulkan::to_json),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    plan.print(outcomes, renderer.as_ref(), base);
    if let Some(a) = attach {
        attach::print(a);
    }
    if let Some(rows) = heat {
        heat::print(rows);
    }
    if let Some(o) = offscreen {
        offscreen::print(o);
    }
    if let Some(g) = geometry {
        geometry::print(g);
    }
    if let Some(w) = waits {
        waits::print(w);
    }
    if let Some(w) = watched {
        watch::print(w);
    }
    if let Some(v) = vk {
        vulkan::print(v);
    }
    calls::print_note(elapsed);
    targets::print(&target_rows);
    Ok(())
}
