//! What the layer does beyond recording calls while a frame is captured: each command buffer
//! recorded during the capture gets a timestamp pool (`gpuheat_counters::vulkan`), timestamps
//! around each of its draws, dispatches and copies ([`PER_COMMAND`]), and, once a submit has run it,
//! its times go to the session as the pipelined times of those calls, from the frame end that
//! finds them landed. Nothing here runs outside captured frames.
//!
//! Command buffers begun with `RENDER_PASS_CONTINUE` (secondaries inside a render pass) are
//! not timed: their pool could not be reset there. Their commands are recorded all the same.

use super::layer;
use ash::vk::{self, Handle};
use gpuheat_counters::catalogue;
use gpuheat_counters::vulkan::{
    context_info, pair_ns, Counted, Counting, Recording, Timestamps, STATISTICS_ORDER,
};
use gpuheat_session::{
    CounterValue, DrawSample, LateSamples, PipelinedBatch, PipelinedTime, Record, VkAttachment,
    VkFrame, VkPassBegin, VkRenderPass, VkSubmit,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Timestamps per timed command: two before it, one after. On a GPU the first two are the
/// same instant. A renderer that runs commands in batches and stamps a timestamp when its
/// batch is done (Mesa's lavapipe flushes its batch before each timestamp, and stamps it in
/// the next batch) puts the first alone in a batch of its own, done once everything before
/// the command is, and the second with the command; the one after, in the batch after, is
/// stamped once the command is done. The command's time is the third minus the first.
pub const PER_COMMAND: u32 = 3;

/// What a command does for the layer beyond being recorded (`generated::VK_ROLES`, by name
/// in build.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Nothing.
    None,
    /// `vkBeginCommandBuffer`.
    Begin,
    /// `vkCmdExecuteCommands`: secondaries run inside this command buffer.
    Execute,
    /// A draw, dispatch, copy, blit, clear or resolve: timed.
    Work,
    /// `vkQueueSubmit`.
    Submit,
    /// `vkQueueSubmit2` (and its KHR alias).
    Submit2,
    /// `vkCreateRenderPass`: kept, outside captures too.
    RenderPass,
    /// `vkCreateRenderPass2` (and its KHR alias): kept, outside captures too.
    RenderPass2,
    /// `vkDestroyRenderPass`.
    DestroyRenderPass,
    /// `vkCmdBeginRenderPass` (and its `2` forms): which pass and framebuffer a frame began.
    PassBegin,
    /// `vkCmdBeginQuery` (and its indexed form): a query of the program's is active.
    QueryBegin,
    /// `vkCmdEndQuery` (and its indexed form).
    QueryEnd,
    /// `vkCmdEndRenderPass*`, `vkCmdEndRendering*`: outside a render pass again.
    PassEnd,
    /// `vkCmdBeginRendering*`: inside a render pass instance (dynamic rendering).
    Rendering,
}

/// One command buffer's recording during the capture.
struct Recorded {
    /// The device's dispatch key.
    device: usize,
    rec: Recording,
    /// Its occlusion pool, where the device counts exactly (full mode).
    occ: Option<Counted>,
    /// Its pipeline statistics pool, where the device has them (full mode).
    stats: Option<Counted>,
    /// Each timed command's frame and place, in timestamp order.
    timed: Vec<(u64, u32)>,
    /// Each counted draw's frame and place, in query order.
    counted: Vec<(u64, u32)>,
    /// Queries of the program's own active in it (ours would collide with an occlusion one).
    app_queries: i32,
    /// Inside a render pass instance now (no barrier may isolate a command there).
    in_pass: bool,
    /// `--timing isolated`: commands outside render passes are isolated by barriers.
    isolate: bool,
    /// Secondary command buffers it executes.
    children: Vec<u64>,
}

/// A submitted recording whose values are not read yet.
struct Pending {
    device: usize,
    pool: vk::QueryPool,
    written: u32,
    timed: Vec<(u64, u32)>,
    occ: Option<Counted>,
    stats: Option<Counted>,
    counted: Vec<(u64, u32)>,
    /// The counts and statistics, once read (the timestamps may land later).
    counts: Option<Vec<[u64; 2]>>,
    statistics: Option<Vec<[u64; 12]>>,
}

/// A captured frame's render pass begins, submits, and commands isolated by barriers.
#[derive(Default)]
struct FrameNotes {
    begins: Vec<VkPassBegin>,
    submits: Vec<VkSubmit>,
    isolated: u32,
}

/// A device's pools, and what the capture sent of it.
struct Device {
    ts: Timestamps,
    occ: Counting,
    stats: Option<Counting>,
    precise: bool,
    props: vk::PhysicalDeviceProperties,
    /// The capture (`capture::generation`) its `CTX` record went in.
    ctx_sent: Option<u64>,
}

#[derive(Default)]
struct State {
    devices: HashMap<usize, Option<Device>>,
    recordings: HashMap<u64, Recorded>,
    pending: Vec<Pending>,
    /// What captured frames did beyond their calls, by frame, not sent yet.
    frames: BTreeMap<u64, FrameNotes>,
    /// Command buffers begun during the capture (timed or not).
    begun: HashSet<u64>,
    /// Render passes sent in this capture (`capture::generation`), so each goes once.
    sent: HashSet<u64>,
    sent_generation: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pools of the device whose dispatch key is `key`, made on first use; `None` where the
/// device cannot time (no timestamps on its queues).
fn device(st: &mut State, key: usize) -> Option<&mut Device> {
    st.devices
        .entry(key)
        .or_insert_with(|| {
            let facts = layer::device_facts(key)?;
            let period = facts.props.limits.timestamp_period;
            if facts.valid_bits == 0 || period <= 0.0 {
                return None;
            }
            // Its first pools are made in this frame, and the driver's first queries (lavapipe
            // compiles variants of the program's shaders that count samples): the frame is
            // the agent's set-up, not the program's steady state.
            crate::capture::note_setup("made a Vulkan device's query pools".into());
            Some(Device {
                ts: Timestamps::new(facts.device.clone(), period, facts.valid_bits),
                occ: Counting::occlusion(facts.device.clone(), facts.precise),
                stats: facts.statistics.then(|| Counting::statistics(facts.device)),
                precise: facts.precise,
                props: facts.props,
                ctx_sent: None,
            })
        })
        .as_mut()
}

/// Gives a recording's pools back unread.
fn release(st: &mut State, r: Recorded) {
    if let Some(Some(d)) = st.devices.get_mut(&r.device) {
        d.ts.release(r.rec.pool);
        if let Some(c) = r.occ {
            d.occ.release(c.pool);
        }
        if let (Some(c), Some(stats)) = (r.stats, d.stats.as_mut()) {
            stats.release(c.pool);
        }
    }
}

/// After `vkBeginCommandBuffer(cb, info)` returned `ok`: a timed recording starts.
///
/// # Safety
/// `cb` is the program's command buffer, `info` its begin info.
pub unsafe fn began(cb: u64, info: u64, ok: bool) {
    if !ok || cb == 0 {
        return;
    }
    // SAFETY: the program's begin info.
    let flags = unsafe { (info as *const vk::CommandBufferBeginInfo<'_>).as_ref() }
        .map_or(vk::CommandBufferUsageFlags::empty(), |i| i.flags);
    let mut guard = state();
    let st = guard.get_or_insert_with(State::default);
    st.begun.insert(cb);
    if let Some(old) = st.recordings.remove(&cb) {
        // Begun again before it was submitted during the capture: its pools are free.
        release(st, old);
    }
    if flags.contains(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE) {
        return;
    }
    // SAFETY: a command buffer is a dispatchable handle.
    let key = unsafe { layer::key_of(cb as usize) };
    let handle = vk::CommandBuffer::from_raw(cb);
    let Some(d) = device(st, key) else { return };
    // SAFETY: just begun, outside any render pass (not a render pass continuation).
    let Some(rec) = (unsafe { d.ts.begin(handle) }) else {
        return;
    };
    // Samples passed in full mode, as GL's (timeline mode: calls and pipelined times only).
    let full = crate::capture::mode() == gpuheat_session::CaptureMode::Full;
    let occ = if full && d.precise {
        // SAFETY: as above.
        unsafe { d.occ.begin(handle) }
    } else {
        None
    };
    let stats = match d.stats.as_mut() {
        // SAFETY: as above.
        Some(s) if full => unsafe { s.begin(handle) },
        _ => None,
    };
    st.recordings.insert(
        cb,
        Recorded {
            device: key,
            rec,
            occ,
            stats,
            timed: Vec::new(),
            counted: Vec::new(),
            app_queries: 0,
            in_pass: false,
            isolate: crate::capture::timing() == gpuheat_session::control::Timing::Isolated,
            children: Vec::new(),
        },
    );
}

/// What [`before_work`] opened around a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    timed: bool,
    counted: bool,
    isolated: bool,
}

/// Around a timed command in `cb` (`draw`: a draw, whose samples are counted): writes the
/// timestamps before it, and begins its occlusion query.
pub fn before_work(cb: u64, draw: bool) -> Opened {
    let mut opened = Opened {
        timed: false,
        counted: false,
        isolated: false,
    };
    let mut guard = state();
    let Some(st) = guard.as_mut() else {
        return opened;
    };
    let Some(r) = st.recordings.get_mut(&cb) else {
        return opened;
    };
    let Some(Some(d)) = st.devices.get(&r.device) else {
        return opened;
    };
    // Free queries for this command's three timestamps.
    if r.rec.written + PER_COMMAND > gpuheat_counters::vulkan::POOL_QUERIES {
        return opened;
    }
    let handle = vk::CommandBuffer::from_raw(cb);
    if r.isolate && !r.in_pass {
        // SAFETY: `cb` is recording, outside a render pass: a barrier is legal there.
        unsafe { d.ts.barrier(handle) };
        opened.isolated = true;
    }
    // SAFETY: `cb` is recording (the program is recording a command into it).
    opened.timed = unsafe { d.ts.write(handle, &mut r.rec) && d.ts.write(handle, &mut r.rec) };
    // A draw is counted by both kinds of query or by neither, so their values stay aligned
    // with one list of places.
    let room =
        |c: &Option<Counted>| c.is_none_or(|c| c.used < gpuheat_counters::vulkan::POOL_QUERIES);
    let any = r.occ.is_some() || r.stats.is_some();
    if opened.timed && draw && r.app_queries == 0 && any && room(&r.occ) && room(&r.stats) {
        // SAFETY: a draw is recorded inside a render pass; no query of the program's is
        // active in this command buffer; both pools have room.
        unsafe {
            if let Some(c) = r.occ.as_ref() {
                d.occ.start(handle, c);
            }
            if let (Some(c), Some(stats)) = (r.stats.as_ref(), d.stats.as_ref()) {
                stats.start(handle, c);
            }
        }
        opened.counted = true;
    }
    opened
}

/// After a command in `cb` that [`before_work`] opened: its occlusion query ends, the
/// timestamp after it, and the call's place (`frame`, `seq`) its values stand for.
pub fn after_work(cb: u64, place: Option<(u64, u32)>, opened: Opened) {
    let mut guard = state();
    let Some(st) = guard.as_mut() else { return };
    let Some(r) = st.recordings.get_mut(&cb) else {
        return;
    };
    let Some(Some(d)) = st.devices.get(&r.device) else {
        return;
    };
    let handle = vk::CommandBuffer::from_raw(cb);
    // A call the recorder could not place still takes its queries, so later ones stay aligned.
    let place = place.unwrap_or((u64::MAX, 0));
    if opened.counted {
        // SAFETY: the queries `before_work` began in this command buffer.
        unsafe {
            if let Some(c) = r.occ.as_mut() {
                d.occ.stop(handle, c);
            }
            if let (Some(c), Some(stats)) = (r.stats.as_mut(), d.stats.as_ref()) {
                stats.stop(handle, c);
            }
        }
        r.counted.push(place);
    }
    if opened.isolated {
        // SAFETY: as in `before_work`, which found `cb` outside a render pass.
        unsafe { d.ts.barrier(handle) };
        if place.0 != u64::MAX {
            st.frames.entry(place.0).or_default().isolated += 1;
        }
    }
    if opened.timed {
        // SAFETY: as in `before_work`; the last query was kept free.
        unsafe { d.ts.write(handle, &mut r.rec) };
        r.timed.push(place);
    }
}

/// `vkCmdBeginQuery*` (`+1`) or `vkCmdEndQuery*` (`-1`) of the program's in `cb`.
pub fn app_query(cb: u64, delta: i32) {
    let mut guard = state();
    if let Some(r) = guard.as_mut().and_then(|st| st.recordings.get_mut(&cb)) {
        r.app_queries += delta;
    }
}

/// `vkCmdExecuteCommands(cb, n, list)`: the secondaries' times are read with `cb`'s.
///
/// # Safety
/// `list` holds `n` command buffers.
pub unsafe fn executed(cb: u64, n: u64, list: u64) {
    if list == 0 {
        return;
    }
    // SAFETY: the program's array of `n` handles.
    let secondaries = unsafe { std::slice::from_raw_parts(list as *const u64, n as usize) };
    let mut guard = state();
    let Some(st) = guard.as_mut() else { return };
    if let Some(r) = st.recordings.get_mut(&cb) {
        r.children.extend_from_slice(secondaries);
    }
}

/// After a successful submit at `place`: the recordings it runs wait for their timestamps,
/// and the frame notes what it ran.
fn submitted(cbs: impl Iterator<Item = u64>, place: Option<(u64, u32)>) {
    let mut guard = state();
    let st = guard.get_or_insert_with(State::default);
    let mut queue: Vec<u64> = cbs.collect();
    if let Some((frame, call)) = place {
        let before = queue.iter().filter(|cb| !st.begun.contains(cb)).count();
        st.frames.entry(frame).or_default().submits.push(VkSubmit {
            call,
            command_buffers: queue.clone(),
            recorded_before: before as u32,
        });
    }
    while let Some(cb) = queue.pop() {
        // A recording is read once: a second submit of the same recording (allowed with
        // SIMULTANEOUS_USE or after the first completed) overwrites the same queries.
        let Some(r) = st.recordings.remove(&cb) else {
            continue;
        };
        queue.extend(r.children);
        st.pending.push(Pending {
            device: r.device,
            pool: r.rec.pool,
            written: r.rec.written,
            timed: r.timed,
            occ: r.occ,
            stats: r.stats,
            counted: r.counted,
            counts: None,
            statistics: None,
        });
    }
}

/// `vkQueueSubmit(queue, n, submits, fence)` returned `ok`.
///
/// # Safety
/// `submits` holds `n` valid `VkSubmitInfo`s.
pub unsafe fn submit(n: u64, submits: u64, ok: bool, place: Option<(u64, u32)>) {
    if !ok || submits == 0 {
        return;
    }
    // SAFETY: the program's submit infos.
    let infos =
        unsafe { std::slice::from_raw_parts(submits as *const vk::SubmitInfo<'_>, n as usize) };
    let cbs = infos.iter().flat_map(|s| {
        let count = s.command_buffer_count as usize;
        if s.p_command_buffers.is_null() {
            &[][..]
        } else {
            // SAFETY: each submit info's array of command buffers.
            unsafe { std::slice::from_raw_parts(s.p_command_buffers, count) }
        }
    });
    submitted(cbs.map(|c| c.as_raw()), place);
}

/// `vkQueueSubmit2(queue, n, submits, fence)` returned `ok`.
///
/// # Safety
/// `submits` holds `n` valid `VkSubmitInfo2`s.
pub unsafe fn submit2(n: u64, submits: u64, ok: bool, place: Option<(u64, u32)>) {
    if !ok || submits == 0 {
        return;
    }
    // SAFETY: the program's submit infos.
    let infos =
        unsafe { std::slice::from_raw_parts(submits as *const vk::SubmitInfo2<'_>, n as usize) };
    let cbs = infos.iter().flat_map(|s| {
        let count = s.command_buffer_info_count as usize;
        if s.p_command_buffer_infos.is_null() {
            &[][..]
        } else {
            // SAFETY: each submit info's array of command buffer infos.
            unsafe { std::slice::from_raw_parts(s.p_command_buffer_infos, count) }
        }
    });
    submitted(cbs.map(|c| c.command_buffer.as_raw()), place);
}

/// Most render pass objects kept (a program makes a handful; a leak of them stays bounded).
const MAX_RENDER_PASSES: usize = 65_536;

/// Every live render pass object the program made, from its start.
static RENDER_PASSES: Mutex<Option<HashMap<u64, VkRenderPass>>> = Mutex::new(None);

fn render_passes() -> MutexGuard<'static, Option<HashMap<u64, VkRenderPass>>> {
    RENDER_PASSES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A render pass's attachments and subpass count from its create info `$info` (a
/// `VkRenderPassCreateInfo` or `VkRenderPassCreateInfo2`: their attachment descriptions have
/// the same fields). Expanded inside an `unsafe` block: it reads the create info's array of
/// `attachment_count` descriptions.
macro_rules! described {
    ($info:expr) => {{
        let i = $info;
        let list = slice(i.p_attachments, i.attachment_count);
        let attachments = list
            .iter()
            .map(|d| VkAttachment {
                format: d.format.as_raw(),
                samples: d.samples.as_raw(),
                load_op: d.load_op.as_raw(),
                store_op: d.store_op.as_raw(),
                stencil_load_op: d.stencil_load_op.as_raw(),
                stencil_store_op: d.stencil_store_op.as_raw(),
                initial_layout: d.initial_layout.as_raw(),
                final_layout: d.final_layout.as_raw(),
            })
            .collect();
        (attachments, i.subpass_count)
    }};
}

/// After `vkCreateRenderPass(2)(device, info, alloc, out)` returned `ok`: keeps the new
/// render pass's attachments.
///
/// # Safety
/// `info` is the program's valid create info (`VkRenderPassCreateInfo2` when `v2`), `out`
/// where the call wrote the handle.
pub unsafe fn render_pass_created(info: u64, out: u64, ok: bool, v2: bool) {
    if !ok || info == 0 || out == 0 {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the caller's contract.
        // SAFETY: the caller's contract: `out` holds the handle, `info` the create info of
        // the kind `v2` says.
        let (handle, (attachments, subpasses)) = unsafe {
            let handle = *(out as *const u64);
            if v2 {
                (
                    handle,
                    described!(&*(info as *const vk::RenderPassCreateInfo2<'_>)),
                )
            } else {
                (
                    handle,
                    described!(&*(info as *const vk::RenderPassCreateInfo<'_>)),
                )
            }
        };
        let mut guard = render_passes();
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() < MAX_RENDER_PASSES {
            map.insert(
                handle,
                VkRenderPass {
                    handle,
                    attachments,
                    subpasses,
                },
            );
        }
    });
}

/// `vkDestroyRenderPass(device, handle, alloc)`.
pub fn render_pass_destroyed(handle: u64) {
    if let Some(map) = render_passes().as_mut() {
        map.remove(&handle);
    }
}

/// `n` items at `p` as a slice (none when `p` is null).
///
/// # Safety
/// `p` is null or points at `n` valid items.
unsafe fn slice<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

/// After a `vkCmdBeginRenderPass(2)` recorded at `place`: which pass and framebuffer.
///
/// # Safety
/// `info` is the program's valid `VkRenderPassBeginInfo`.
pub unsafe fn pass_began(cb: u64, info: u64, place: Option<(u64, u32)>) {
    in_pass(cb, true);
    let Some((frame, call)) = place else { return };
    // SAFETY: the caller's contract.
    let Some(i) = (unsafe { (info as *const vk::RenderPassBeginInfo<'_>).as_ref() }) else {
        return;
    };
    let begin = VkPassBegin {
        call,
        render_pass: i.render_pass.as_raw(),
        framebuffer: i.framebuffer.as_raw(),
    };
    let mut guard = state();
    let st = guard.get_or_insert_with(State::default);
    st.frames.entry(frame).or_default().begins.push(begin);
}

/// Whether `cb` is inside a render pass instance (begun, or dynamic rendering) from now on.
pub fn in_pass(cb: u64, inside: bool) {
    let mut guard = state();
    if let Some(r) = guard.as_mut().and_then(|st| st.recordings.get_mut(&cb)) {
        r.in_pass = inside;
    }
}

/// The Vulkan records of the frames polled: the render passes their begins name (each once
/// per capture), then each frame's begins and submits.
fn pass_records(st: &mut State) -> Vec<Record> {
    let generation = crate::capture::generation();
    if st.sent_generation != generation {
        st.sent_generation = generation;
        st.sent.clear();
    }
    let mut out = Vec::new();
    let passes = render_passes();
    for (frame, notes) in std::mem::take(&mut st.frames) {
        let FrameNotes {
            mut begins,
            mut submits,
            isolated,
        } = notes;
        begins.sort_by_key(|b| b.call);
        submits.sort_by_key(|s| s.call);
        for b in &begins {
            if st.sent.insert(b.render_pass) {
                if let Some(rp) = passes.as_ref().and_then(|m| m.get(&b.render_pass)) {
                    out.push(Record::VkRenderPass(rp.clone()));
                }
            }
        }
        out.push(Record::VkFrame(VkFrame {
            frame,
            begins,
            submits,
            isolated,
        }));
    }
    out
}

/// How long the capture's last frame end waits for the timestamps of its submits.
const LAST_WAIT: Duration = Duration::from_secs(2);

/// At a captured frame's end (`last`: the capture's last): the pipelined times of every
/// submitted recording whose values have landed, one batch per frame they belong to; and the
/// records: each device's `CTX` (once a capture), the draws' samples passed (`LATE`), the
/// frames' render passes and submits. On the last frame, waits (at most [`LAST_WAIT`],
/// polling) for the rest, and frees the pools of recordings never submitted.
pub fn poll(last: bool) -> (Vec<PipelinedBatch>, Vec<Record>) {
    let deadline = Instant::now() + LAST_WAIT;
    let mut by_frame: HashMap<u64, Vec<PipelinedTime>> = HashMap::new();
    let mut counts: HashMap<u64, Vec<DrawSample>> = HashMap::new();
    let mut contexts = Vec::new();
    let mut waited = false;
    let mut records = Vec::new();
    let generation = crate::capture::generation();
    loop {
        let mut guard = state();
        let Some(st) = guard.as_mut() else {
            return (Vec::new(), Vec::new());
        };
        if records.is_empty() {
            records = pass_records(st);
        }
        let mut left = Vec::new();
        for mut p in std::mem::take(&mut st.pending) {
            let Some(Some(d)) = st.devices.get_mut(&p.device) else {
                continue;
            };
            if let (Some(c), None) = (p.occ, p.counts.as_ref()) {
                // SAFETY: the pool of a submitted recording of this device; occlusion queries
                // return one value.
                p.counts = unsafe { d.occ.read::<2>(c.pool, c.used) };
                if p.counts.is_none() {
                    left.push(p);
                    continue;
                }
            }
            if let (Some(c), None, Some(stats)) = (p.stats, p.statistics.as_ref(), d.stats.as_mut())
            {
                // SAFETY: as above; these queries return the 11 statistics.
                p.statistics = unsafe { stats.read::<12>(c.pool, c.used) };
                if p.statistics.is_none() {
                    left.push(p);
                    continue;
                }
            }
            // SAFETY: as above.
            let Some(values) = (unsafe { d.ts.read(p.pool, p.written) }) else {
                left.push(p);
                continue;
            };
            if d.ctx_sent != Some(generation) {
                d.ctx_sent = Some(generation);
                contexts.push(Record::Context(context_info(
                    p.device as u64,
                    &d.props,
                    d.precise,
                    d.stats.is_some(),
                )));
            }
            let each = values.chunks_exact(PER_COMMAND as usize);
            for (stamps, &(frame, call)) in each.zip(&p.timed) {
                if frame != u64::MAX {
                    by_frame.entry(frame).or_default().push(PipelinedTime {
                        call,
                        gpu_ns: pair_ns(stamps[0], stamps[2]),
                    });
                }
            }
            for (k, &(frame, call)) in p.counted.iter().enumerate() {
                if frame == u64::MAX {
                    continue;
                }
                let mut values = Vec::new();
                if let Some(n) = p.counts.as_ref().and_then(|c| c.get(k)) {
                    values.push(CounterValue {
                        counter: catalogue::SAMPLES_PASSED,
                        value: n[0],
                    });
                }
                if let Some(v) = p.statistics.as_ref().and_then(|c| c.get(k)) {
                    values.extend(
                        STATISTICS_ORDER
                            .iter()
                            .zip(v)
                            .map(|(&counter, &value)| CounterValue { counter, value }),
                    );
                }
                counts
                    .entry(frame)
                    .or_default()
                    .push(DrawSample { call, values });
            }
        }
        st.pending = left;
        if !last || st.pending.is_empty() || Instant::now() > deadline {
            if last {
                st.begun.clear();
                let unsubmitted: Vec<Recorded> = st.recordings.drain().map(|(_, r)| r).collect();
                for r in unsubmitted {
                    release(st, r);
                }
            }
            break;
        }
        drop(guard);
        if !waited {
            waited = true;
            gpuheat_counters::waits::note();
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let mut batches: Vec<PipelinedBatch> = by_frame
        .into_iter()
        .map(|(frame, mut times)| {
            times.sort_by_key(|t| t.call);
            PipelinedBatch {
                frame,
                disjoint: false,
                times,
            }
        })
        .collect();
    batches.sort_by_key(|b| b.frame);
    // The devices' CTX records before anything that names them.
    let mut out = contexts;
    out.append(&mut records);
    let mut late: Vec<LateSamples> = counts
        .into_iter()
        .map(|(frame, mut samples)| {
            samples.sort_by_key(|s| s.call);
            LateSamples { frame, samples }
        })
        .collect();
    late.sort_by_key(|l| l.frame);
    out.extend(late.into_iter().map(Record::LateSamples));
    (batches, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::vk::{VK_NAMES, VK_ROLES};

    fn with_role(r: Role) -> Vec<&'static str> {
        VK_NAMES
            .iter()
            .zip(VK_ROLES)
            .filter(|(_, role)| *role == r)
            .map(|(n, _)| *n)
            .collect()
    }

    #[test]
    fn draws_dispatches_and_copies_are_timed_and_state_is_not() {
        let work = with_role(Role::Work);
        for n in [
            "vkCmdDraw",
            "vkCmdDrawIndexed",
            "vkCmdDispatch",
            "vkCmdCopyBuffer",
            "vkCmdBlitImage",
        ] {
            assert!(work.contains(&n), "{n}");
        }
        for n in [
            "vkCmdBindPipeline",
            "vkCmdBeginRenderPass",
            "vkCmdPushConstants",
        ] {
            assert!(!work.contains(&n), "{n}");
        }
        assert_eq!(with_role(Role::Submit), ["vkQueueSubmit"]);
        assert_eq!(
            with_role(Role::Submit2),
            ["vkQueueSubmit2", "vkQueueSubmit2KHR"]
        );
        assert_eq!(with_role(Role::Begin), ["vkBeginCommandBuffer"]);
    }
}
