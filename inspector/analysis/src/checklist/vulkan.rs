//! Checklist rules for Vulkan programs, read from the layer's calls and its render pass
//! records: render passes that load what they then clear (or what is undefined) and store
//! depth nothing reads, barriers that wait on every
//! stage, objects made during frames, many queue submits per frame, and binds that change
//! nothing. Each judges what the frames show; a rule whose inputs were not captured (render
//! passes made before an attach the layer never saw) stays silent.

use super::context::Context;
use super::finding::{Cost, Evidence, Finding, Severity};
use super::rule::{Family, Rule};
use gpuheat_session::{Call, Frame, Session, ValueKind, VkAttachment, VkRenderPass};
use rustc_hash::FxHashMap as HashMap;

/// The rules of this family, in the order the catalogue lists them.
pub(super) const RULES: &[&Rule] = &[
    &LOAD_STORE,
    &BROAD_BARRIER,
    &CREATE_IN_FRAME,
    &SUBMITS,
    &REDUNDANT_BINDS,
];

/// Submits to one queue in one frame from which they are a warning: a frame's work usually
/// needs one or two (graphics, then maybe a late one before the present).
pub const MAX_SUBMITS: usize = 4;

/// `vk-load-store`.
pub(super) const LOAD_STORE: Rule = Rule {
    id: "vk-load-store",
    family: Family::Vulkan,
    severity: Severity::Warning,
    summary: "render passes that load what they clear or store depth nothing reads",
    check: load_store,
};

/// `vk-broad-barrier`.
pub(super) const BROAD_BARRIER: Rule = Rule {
    id: "vk-broad-barrier",
    family: Family::Vulkan,
    severity: Severity::Warning,
    summary: "pipeline barriers that wait for every stage",
    check: broad_barriers,
};

/// `vk-create-in-frame`.
pub(super) const CREATE_IN_FRAME: Rule = Rule {
    id: "vk-create-in-frame",
    family: Family::Vulkan,
    severity: Severity::Warning,
    summary: "pipelines, descriptor sets and other objects made during frames",
    check: create_in_frame,
};

/// `vk-submits`.
pub(super) const SUBMITS: Rule = Rule {
    id: "vk-submits",
    family: Family::Vulkan,
    severity: Severity::Warning,
    summary: "many queue submits per frame",
    check: submits,
};

/// `vk-redundant-binds`.
pub(super) const REDUNDANT_BINDS: Rule = Rule {
    id: "vk-redundant-binds",
    family: Family::Vulkan,
    severity: Severity::Info,
    summary: "binds and dynamic state that set what is already set",
    check: redundant_binds,
};

fn name<'a>(ctx: &Context<'a>, c: &Call) -> &'a str {
    ctx.names[usize::from(c.func)]
}

/// Frame 0 of a launched program holds its set-up; the "during frames" rules start at 1.
fn steady_frames(s: &Session) -> impl Iterator<Item = &Frame> {
    s.frames.iter().filter(|f| f.index >= 1)
}

// VkImageLayout values the rule reads.
const LAYOUT_UNDEFINED: i32 = 0;
const LAYOUT_DEPTH_STENCIL_ATTACHMENT: i32 = 3;
const LAYOUT_DEPTH_ATTACHMENT: i32 = 1_000_241_000;
const LAYOUT_STENCIL_ATTACHMENT: i32 = 1_000_241_002;
const LAYOUT_ATTACHMENT: i32 = 1_000_314_001;
// VkAttachmentLoadOp / VkAttachmentStoreOp.
const LOAD_OP_LOAD: i32 = 0;
const STORE_OP_STORE: i32 = 0;

/// Whether an attachment left in `layout` can only be drawn into again (nothing samples,
/// copies or presents an image in an attachment-only layout).
fn attachment_only(layout: i32) -> bool {
    matches!(
        layout,
        LAYOUT_DEPTH_STENCIL_ATTACHMENT
            | LAYOUT_DEPTH_ATTACHMENT
            | LAYOUT_STENCIL_ATTACHMENT
            | LAYOUT_ATTACHMENT
    )
}

fn stores_depth(a: &VkAttachment) -> bool {
    a.is_depth_stencil() && (a.store_op == STORE_OP_STORE || a.stencil_store_op == STORE_OP_STORE)
}

fn loads_depth(a: &VkAttachment) -> bool {
    a.load_op == LOAD_OP_LOAD || a.stencil_load_op == LOAD_OP_LOAD
}

/// Render pass instances that load an attachment whose contents are undefined (initial
/// layout `UNDEFINED`), and that store a depth/stencil attachment left in an attachment-only
/// layout which no later render pass of the capture loads from the same framebuffer.
fn load_store(ctx: &Context, out: &mut Vec<Finding>) {
    let s = ctx.s;
    let passes: HashMap<u64, &VkRenderPass> =
        s.vk_render_passes.iter().map(|p| (p.handle, p)).collect();
    // Every begin of the capture in order, to look ahead across frames.
    let begins: Vec<(u64, &gpuheat_session::VkPassBegin)> = s
        .vk_frames
        .iter()
        .flat_map(|f| f.begins.iter().map(move |b| (f.frame, b)))
        .collect();
    for (k, &(frame, b)) in begins.iter().enumerate() {
        let Some(rp) = passes.get(&b.render_pass) else {
            continue;
        };
        let cleared_first = first_in_pass(ctx, frame, b.call) == Some("vkCmdClearAttachments");
        for (i, a) in rp.attachments.iter().enumerate() {
            let loads = a.load_op == LOAD_OP_LOAD
                || (a.is_depth_stencil() && a.stencil_load_op == LOAD_OP_LOAD);
            let undefined = a.initial_layout == LAYOUT_UNDEFINED;
            if loads && (undefined || cleared_first) {
                let why = if undefined {
                    "from an undefined image (initialLayout UNDEFINED)"
                } else {
                    "then cleared by vkCmdClearAttachments before any draw"
                };
                out.push(Finding {
                    frame,
                    call: Some(b.call),
                    rule: LOAD_STORE.id,
                    severity: Severity::Warning,
                    title: format!("render pass attachment {i} is loaded (loadOp LOAD) {why}"),
                    detail: "LOAD reads the attachment's previous contents into the render pass \
                             (on a tiling GPU, from memory into every tile); contents that are \
                             undefined, or overwritten by a clear before anything reads them, \
                             make that read pure cost."
                        .into(),
                    fix: "Use loadOp CLEAR with the clear value (or DONT_CARE when every pixel \
                          is drawn) instead of LOAD followed by vkCmdClearAttachments."
                        .into(),
                    evidence: Evidence::calls([b.call])
                        .with("render pass", format!("0x{:x}", b.render_pass))
                        .with("attachment", i)
                        .with("format", a.format)
                        .with("initial layout", a.initial_layout),
                    cost: None,
                });
            }
            if stores_depth(a) && attachment_only(a.final_layout) {
                let used_later = begins[k + 1..].iter().any(|(_, later)| {
                    later.framebuffer == b.framebuffer
                        && passes
                            .get(&later.render_pass)
                            .and_then(|p| p.attachments.get(i))
                            .is_some_and(loads_depth)
                });
                if !used_later {
                    out.push(Finding {
                        frame,
                        call: Some(b.call),
                        rule: LOAD_STORE.id,
                        severity: Severity::Warning,
                        title: format!(
                            "render pass attachment {i} stores depth/stencil that nothing reads (storeOp STORE, left in an attachment layout, never loaded again)"
                        ),
                        detail: "STORE writes the whole depth/stencil attachment back to memory at \
                                 the end of the render pass (on a tiling GPU, every tile); no \
                                 later render pass of the capture loads it and its final layout \
                                 lets nothing sample or copy it."
                            .into(),
                        fix: "Use storeOp DONT_CARE for depth and stencil that only serve this \
                              render pass (and a transient, lazily allocated image)."
                            .into(),
                        evidence: Evidence::calls([b.call])
                            .with("render pass", format!("0x{:x}", b.render_pass))
                            .with("attachment", i)
                            .with("format", a.format)
                            .with("final layout", a.final_layout),
                        cost: None,
                    });
                }
            }
        }
    }
}

/// The first command after the render pass begin at `call` of `frame`, in the same command
/// buffer, that draws, clears or leaves the pass.
fn first_in_pass<'a>(ctx: &Context<'a>, frame: u64, call: u32) -> Option<&'a str> {
    let f = ctx.s.frames.iter().find(|f| f.index == frame)?;
    let begin = f.calls.get(call as usize)?;
    let cb = begin.args.first()?;
    f.calls[call as usize + 1..]
        .iter()
        .filter(|c| c.args.first() == Some(cb))
        .map(|c| name(ctx, c))
        .find(|n| {
            n.starts_with("vkCmdDraw")
                || *n == "vkCmdClearAttachments"
                || n.starts_with("vkCmdEndRenderPass")
                || n.starts_with("vkCmdNextSubpass")
        })
}

// VkPipelineStageFlagBits.
const ALL_GRAPHICS: u64 = 0x0000_8000;
const ALL_COMMANDS: u64 = 0x0001_0000;

fn stages(mask: u64) -> String {
    let mut v = Vec::new();
    if mask & ALL_COMMANDS != 0 {
        v.push("ALL_COMMANDS");
    }
    if mask & ALL_GRAPHICS != 0 {
        v.push("ALL_GRAPHICS");
    }
    if v.is_empty() {
        format!("0x{mask:x}")
    } else {
        v.join("|")
    }
}

/// `vkCmdPipelineBarrier` calls whose source or destination stages are all of them.
fn broad_barriers(ctx: &Context, out: &mut Vec<Finding>) {
    for f in &ctx.s.frames {
        let broad: Vec<(u32, &Call)> = f
            .calls
            .iter()
            .enumerate()
            .filter(|(_, c)| name(ctx, c) == "vkCmdPipelineBarrier")
            .filter(|(_, c)| {
                let (src, dst) = (c.args[1], c.args[2]);
                (src | dst) & (ALL_GRAPHICS | ALL_COMMANDS) != 0
            })
            .map(|(i, c)| (i as u32, c))
            .collect();
        let Some(&(first, c)) = broad.first() else {
            continue;
        };
        out.push(Finding {
            frame: f.index,
            call: Some(first),
            rule: BROAD_BARRIER.id,
            severity: Severity::Warning,
            title: format!(
                "{} pipeline barrier{} wait{} for every stage (srcStageMask {}, dstStageMask {})",
                broad.len(),
                if broad.len() == 1 { "" } else { "s" },
                if broad.len() == 1 { "s" } else { "" },
                stages(c.args[1]),
                stages(c.args[2])
            ),
            detail: "A barrier from or to ALL_COMMANDS (or ALL_GRAPHICS) drains the whole \
                     pipeline: work after it cannot start until everything before it finished, \
                     even the stages that touch none of the barrier's resources, so the GPU \
                     idles at every one."
                .into(),
            fix: "Name the stages that write (srcStageMask) and the stages that read \
                  (dstStageMask), e.g. COLOR_ATTACHMENT_OUTPUT to FRAGMENT_SHADER for a pass \
                  sampled by the next."
                .into(),
            evidence: Evidence::calls(broad.iter().map(|(i, _)| *i))
                .with("srcStageMask", format!("0x{:x}", c.args[1]))
                .with("dstStageMask", format!("0x{:x}", c.args[2])),
            cost: None,
        });
    }
}

/// What a call makes that a frame should not, by command name; `true` for what compiles
/// shaders or allocates device memory (a hitch), `false` for the cheaper objects.
fn made_in_frame(name: &str) -> Option<bool> {
    Some(match name {
        "vkCreateGraphicsPipelines"
        | "vkCreateComputePipelines"
        | "vkCreateRayTracingPipelinesKHR"
        | "vkCreateShaderModule"
        | "vkAllocateMemory" => true,
        "vkCreatePipelineLayout"
        | "vkCreateDescriptorSetLayout"
        | "vkCreateDescriptorPool"
        | "vkAllocateDescriptorSets"
        | "vkCreateRenderPass"
        | "vkCreateRenderPass2"
        | "vkCreateRenderPass2KHR"
        | "vkCreateFramebuffer"
        | "vkCreateSampler"
        | "vkCreateBuffer"
        | "vkCreateImage"
        | "vkCreateImageView"
        | "vkCreateQueryPool"
        | "vkCreateCommandPool"
        | "vkAllocateCommandBuffers" => false,
        _ => return None,
    })
}

/// Objects made during frames (from frame 1: frame 0 of a launched program is its set-up),
/// with the CPU time the calls took.
fn create_in_frame(ctx: &Context, out: &mut Vec<Finding>) {
    for f in steady_frames(ctx.s) {
        let made: Vec<(u32, &Call, bool)> = f
            .calls
            .iter()
            .enumerate()
            .filter_map(|(i, c)| made_in_frame(name(ctx, c)).map(|hitch| (i as u32, c, hitch)))
            .collect();
        if made.is_empty() {
            continue;
        }
        let mut by_name: Vec<(&str, usize)> = Vec::new();
        for (_, c, _) in &made {
            let n = name(ctx, c);
            match by_name.iter_mut().find(|(m, _)| *m == n) {
                Some(e) => e.1 += 1,
                None => by_name.push((n, 1)),
            }
        }
        let ns: u64 = made.iter().map(|(_, c, _)| c.duration_ns).sum();
        let hitch = made.iter().any(|(_, _, h)| *h);
        let list = by_name
            .iter()
            .map(|(n, k)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut evidence = Evidence::calls(made.iter().map(|(i, _, _)| *i));
        for (n, k) in &by_name {
            evidence = evidence.with(n, k);
        }
        out.push(Finding {
            frame: f.index,
            call: made.first().map(|(i, _, _)| *i),
            rule: CREATE_IN_FRAME.id,
            severity: if hitch {
                Severity::Warning
            } else {
                Severity::Info
            },
            title: format!(
                "objects made during the frame: {list} ({:.3} ms of CPU time)",
                ns as f64 / 1e6
            ),
            detail: "Creating a pipeline compiles its shaders, allocating memory goes to the \
                     kernel; doing it every frame costs CPU time each frame and hitches the \
                     frames that compile. Descriptor sets and layouts made per frame churn the \
                     driver's allocator for objects that could live across frames."
                .into(),
            fix: "Create pipelines, layouts, descriptor pools and sets at load time (a \
                  pipeline cache helps the first creation), and reuse them; for per-frame data \
                  update existing descriptor sets or use dynamic offsets."
                .into(),
            evidence,
            cost: Some(Cost {
                ns,
                measured: format!("time in the {} creating calls", made.len()),
            }),
        });
    }
}

/// Frames with more than [`MAX_SUBMITS`] submits to one queue.
fn submits(ctx: &Context, out: &mut Vec<Finding>) {
    for f in &ctx.s.frames {
        let mut by_queue: HashMap<u64, Vec<u32>> = HashMap::default();
        for (i, c) in f.calls.iter().enumerate() {
            let n = name(ctx, c);
            if n == "vkQueueSubmit" || n.starts_with("vkQueueSubmit2") {
                by_queue.entry(c.args[0]).or_default().push(i as u32);
            }
        }
        let Some((queue, calls)) = by_queue
            .iter()
            .filter(|(_, v)| v.len() > MAX_SUBMITS)
            .max_by_key(|(_, v)| v.len())
        else {
            continue;
        };
        let ns: u64 = calls.iter().map(|&i| f.calls[i as usize].duration_ns).sum();
        out.push(Finding {
            frame: f.index,
            call: calls.first().copied(),
            rule: SUBMITS.id,
            severity: Severity::Warning,
            title: format!(
                "{} submits to one queue in the frame ({:.3} ms of CPU time in them)",
                calls.len(),
                ns as f64 / 1e6
            ),
            detail: "Each vkQueueSubmit is a trip into the driver and the kernel, and the GPU may \
                     idle between the batches while the CPU prepares the next."
                .into(),
            fix: "Record the frame's work into a few command buffers and submit them together \
                  (one VkSubmitInfo can hold many command buffers; one call can hold many \
                  VkSubmitInfos)."
                .into(),
            evidence: Evidence::calls(calls.iter().copied())
                .with("queue", format!("0x{queue:x}"))
                .with("submits", calls.len()),
            cost: Some(Cost {
                ns,
                measured: format!("time in the {} submit calls", calls.len()),
            }),
        });
    }
}

/// Binds and dynamic state (`vkCmdBind*`, `vkCmdSet*` whose arguments are all values, not
/// pointers) that repeat the same command with the same arguments in the same command buffer
/// since its begin.
fn redundant_binds(ctx: &Context, out: &mut Vec<Finding>) {
    let by_value: Vec<bool> = ctx
        .s
        .functions
        .functions
        .iter()
        .map(|f| {
            (f.name.starts_with("vkCmdBind") || f.name.starts_with("vkCmdSet"))
                && f.params.len() > 1
                && f.params[1..].iter().all(|p| p.kind != ValueKind::Ptr)
        })
        .collect();
    for f in &ctx.s.frames {
        // (command buffer, function) → the arguments it last set.
        let mut last: HashMap<(u64, u16), &[u64]> = HashMap::default();
        let mut redundant: Vec<u32> = Vec::new();
        let mut ns = 0;
        for (i, c) in f.calls.iter().enumerate() {
            let n = name(ctx, c);
            if n == "vkBeginCommandBuffer" || n == "vkResetCommandBuffer" {
                let cb = c.args.first().copied().unwrap_or(0);
                last.retain(|(b, _), _| *b != cb);
                continue;
            }
            if !by_value.get(usize::from(c.func)).copied().unwrap_or(false) {
                continue;
            }
            let key = (c.args[0], c.func);
            if last.get(&key).is_some_and(|prev| *prev == &c.args[1..]) {
                redundant.push(i as u32);
                ns += c.duration_ns;
            }
            last.insert(key, &c.args[1..]);
        }
        let Some(&first) = redundant.first() else {
            continue;
        };
        out.push(Finding {
            frame: f.index,
            call: Some(first),
            rule: REDUNDANT_BINDS.id,
            severity: Severity::Info,
            title: format!(
                "{} bind{} or dynamic state call{} set what the command buffer already had",
                redundant.len(),
                if redundant.len() == 1 { "" } else { "s" },
                if redundant.len() == 1 { "" } else { "s" }
            ),
            detail: "A bind of the pipeline, index buffer or dynamic state already bound costs \
                     the recording thread a driver call and may make the driver revalidate \
                     state for the next draw."
                .into(),
            fix: "Sort draws by pipeline and remember what the command buffer has bound; skip \
                  binds that change nothing."
                .into(),
            evidence: Evidence::calls(redundant.iter().copied()),
            cost: Some(Cost {
                ns,
                measured: format!("time in the {} redundant calls", redundant.len()),
            }),
        });
    }
}

#[cfg(test)]
mod tests {
    //! Each rule on small call sequences: it fires on its trigger and stays quiet on the
    //! clean form of the same frame.

    use super::*;
    use gpuheat_session::{VkFrame, VkPassBegin};
    use gpuheat_testkit::{session, Seq};

    const CB: u64 = 0xc0;
    const OTHER_CB: u64 = 0xc1;
    const QUEUE: u64 = 0x90;
    const PIPELINE: u64 = 0x70;

    fn run_on(s: Session, rule: &str) -> Vec<Finding> {
        let a = crate::analyse(&s);
        let ctx = Context::new(&s, &a);
        let mut out = Vec::new();
        (crate::checklist::rule(rule).expect("a rule").check)(&ctx, &mut out);
        out
    }

    /// Frames 0.. of `frames`.
    fn run(frames: &[Seq], rule: &str) -> Vec<Finding> {
        run_on(session(frames, None, 0), rule)
    }

    #[test]
    fn a_barrier_on_every_stage_is_broad_and_a_named_one_is_not() {
        let broad = run(
            &[&[(
                "vkCmdPipelineBarrier",
                &[CB, ALL_COMMANDS, ALL_COMMANDS, 0, 1, 8, 0, 0, 0, 0],
            )]],
            "vk-broad-barrier",
        );
        assert_eq!(broad.len(), 1);
        assert_eq!(broad[0].call, Some(0));
        assert!(
            broad[0].title.contains("ALL_COMMANDS"),
            "{}",
            broad[0].title
        );
        // COLOR_ATTACHMENT_OUTPUT → FRAGMENT_SHADER.
        let named = run(
            &[&[(
                "vkCmdPipelineBarrier",
                &[CB, 0x400, 0x80, 0, 1, 8, 0, 0, 0, 0],
            )]],
            "vk-broad-barrier",
        );
        assert!(named.is_empty());
    }

    #[test]
    fn submits_beyond_the_limit_on_one_queue_are_called_out() {
        let submit = ("vkQueueSubmit", &[QUEUE, 1, 8, 0][..]);
        let other = ("vkQueueSubmit", &[QUEUE + 1, 1, 8, 0][..]);
        let five = [submit; MAX_SUBMITS + 1];
        let f = run(&[&five], "vk-submits");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.count, (MAX_SUBMITS + 1) as u64);
        let four = [submit; MAX_SUBMITS];
        assert!(run(&[&four], "vk-submits").is_empty());
        // Three and two on two queues: each queue is within the limit.
        let split = [submit, submit, submit, other, other];
        assert!(run(&[&split], "vk-submits").is_empty());
    }

    #[test]
    fn objects_made_in_steady_frames_are_found_and_set_up_is_not() {
        let make = ("vkCreateGraphicsPipelines", &[1, 0, 1, 8, 0, 9][..]);
        let sets = ("vkAllocateDescriptorSets", &[1, 8, 9][..]);
        let f = run(&[&[make], &[make], &[sets]], "vk-create-in-frame");
        assert_eq!(f.iter().map(|f| f.frame).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(f[0].severity, Severity::Warning);
        // Descriptor sets alone compile nothing: worth knowing.
        assert_eq!(f[1].severity, Severity::Info);
        assert!(f[0].cost.as_ref().is_some_and(|c| c.ns > 0));
    }

    #[test]
    fn a_bind_of_what_is_bound_is_redundant_until_the_command_buffer_begins_again() {
        let begin = ("vkBeginCommandBuffer", &[CB, 8][..]);
        let bind = ("vkCmdBindPipeline", &[CB, 0, PIPELINE][..]);
        let draw = ("vkCmdDraw", &[CB, 6, 1, 0, 0][..]);
        let f = run(&[&[begin, bind, draw, bind, draw]], "vk-redundant-binds");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.calls, [3]);
        // Another pipeline, another command buffer, or a new recording: nothing redundant.
        let other = ("vkCmdBindPipeline", &[CB, 0, PIPELINE + 1][..]);
        let elsewhere = ("vkCmdBindPipeline", &[OTHER_CB, 0, PIPELINE][..]);
        let clean = run(
            &[&[begin, bind, draw, other, draw, elsewhere, begin, bind, draw]],
            "vk-redundant-binds",
        );
        assert!(clean.is_empty(), "{clean:?}");
    }

    fn attachment(format: i32, load: i32, store: i32, initial: i32, fin: i32) -> VkAttachment {
        VkAttachment {
            format,
            samples: 1,
            load_op: load,
            store_op: store,
            stencil_load_op: 2,
            stencil_store_op: 1,
            initial_layout: initial,
            final_layout: fin,
        }
    }

    /// A session of `begins` (render pass, framebuffer) per frame, with `passes`.
    fn passes_session(passes: Vec<VkRenderPass>, begins: &[&[(u64, u64)]]) -> Session {
        let frames: Vec<Seq> = begins
            .iter()
            .map(|b| -> Seq {
                if b.is_empty() {
                    &[]
                } else {
                    &[("vkCmdBeginRenderPass", &[CB, 8, 0])]
                }
            })
            .collect();
        let mut s = session(&frames, None, 0);
        s.vk_render_passes = passes;
        s.vk_frames = begins
            .iter()
            .enumerate()
            .map(|(k, b)| VkFrame {
                frame: k as u64,
                submits: Vec::new(),
                isolated: 0,
                begins: b
                    .iter()
                    .map(|&(render_pass, framebuffer)| VkPassBegin {
                        call: 0,
                        render_pass,
                        framebuffer,
                    })
                    .collect(),
            })
            .collect();
        s
    }

    const B8G8R8A8: i32 = 44;
    const D16: i32 = 124;
    const PRESENT: i32 = 1_000_001_002;
    const CLEAR: i32 = 1;
    const DONT_CARE: i32 = 1;

    #[test]
    fn loading_undefined_contents_and_storing_unread_depth_are_found() {
        let colour_load = VkRenderPass {
            handle: 1,
            attachments: vec![attachment(
                B8G8R8A8,
                LOAD_OP_LOAD,
                STORE_OP_STORE,
                0,
                PRESENT,
            )],
            subpasses: 1,
        };
        let depth_store = VkRenderPass {
            handle: 2,
            attachments: vec![
                attachment(B8G8R8A8, CLEAR, STORE_OP_STORE, 0, PRESENT),
                attachment(
                    D16,
                    CLEAR,
                    STORE_OP_STORE,
                    0,
                    LAYOUT_DEPTH_STENCIL_ATTACHMENT,
                ),
            ],
            subpasses: 1,
        };
        let f = run_on(
            passes_session(vec![colour_load, depth_store], &[&[(1, 10)], &[(2, 11)]]),
            "vk-load-store",
        );
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f[0].title.contains("undefined"), "{}", f[0].title);
        assert!(f[1].title.contains("stores depth"), "{}", f[1].title);
    }

    #[test]
    fn cleared_colour_and_depth_that_is_loaded_later_or_not_stored_are_clean() {
        let clean = VkRenderPass {
            handle: 3,
            attachments: vec![
                attachment(B8G8R8A8, CLEAR, STORE_OP_STORE, 0, PRESENT),
                attachment(D16, CLEAR, DONT_CARE, 0, LAYOUT_DEPTH_STENCIL_ATTACHMENT),
            ],
            subpasses: 1,
        };
        let stores = VkRenderPass {
            handle: 4,
            attachments: vec![
                attachment(B8G8R8A8, CLEAR, STORE_OP_STORE, 0, PRESENT),
                attachment(
                    D16,
                    CLEAR,
                    STORE_OP_STORE,
                    0,
                    LAYOUT_DEPTH_STENCIL_ATTACHMENT,
                ),
            ],
            subpasses: 1,
        };
        let loads = VkRenderPass {
            handle: 5,
            attachments: vec![
                attachment(B8G8R8A8, LOAD_OP_LOAD, STORE_OP_STORE, PRESENT, PRESENT),
                attachment(
                    D16,
                    LOAD_OP_LOAD,
                    DONT_CARE,
                    LAYOUT_DEPTH_STENCIL_ATTACHMENT,
                    LAYOUT_DEPTH_STENCIL_ATTACHMENT,
                ),
            ],
            subpasses: 1,
        };
        // The stored depth is loaded by a later pass on the same framebuffer.
        let f = run_on(
            passes_session(
                vec![clean, stores, loads],
                &[&[(3, 10)], &[(4, 11)], &[(5, 11)]],
            ),
            "vk-load-store",
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn a_loaded_attachment_cleared_before_any_draw_is_found_and_one_drawn_over_is_not() {
        let loads = VkRenderPass {
            handle: 6,
            attachments: vec![attachment(
                B8G8R8A8,
                LOAD_OP_LOAD,
                STORE_OP_STORE,
                PRESENT,
                PRESENT,
            )],
            subpasses: 1,
        };
        let begin = ("vkCmdBeginRenderPass", &[CB, 8, 0][..]);
        let clear = ("vkCmdClearAttachments", &[CB, 1, 8, 1, 9][..]);
        let draw = ("vkCmdDraw", &[CB, 6, 1, 0, 0][..]);
        // Another command buffer's clear, recorded meanwhile, is not this pass's.
        let other = ("vkCmdClearAttachments", &[OTHER_CB, 1, 8, 1, 9][..]);
        let with = |frames: &[Seq]| {
            let mut s = session(frames, None, 0);
            s.vk_render_passes = vec![loads.clone()];
            s.vk_frames = vec![VkFrame {
                frame: 0,
                begins: vec![VkPassBegin {
                    call: 0,
                    render_pass: 6,
                    framebuffer: 10,
                }],
                submits: Vec::new(),
                isolated: 0,
            }];
            run_on(s, "vk-load-store")
        };
        let f = with(&[&[begin, clear, draw]]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].title.contains("cleared"), "{}", f[0].title);
        assert!(with(&[&[begin, other, draw, clear]]).is_empty());
    }
}
