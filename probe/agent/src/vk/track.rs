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
use gpuheat_counters::vulkan::{pair_ns, Recording, Timestamps};
use gpuheat_session::{
    PipelinedBatch, PipelinedTime, Record, VkAttachment, VkFrame, VkPassBegin, VkRenderPass,
    VkSubmit,
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
}

/// One command buffer's recording during the capture.
struct Recorded {
    /// The device's dispatch key.
    device: usize,
    rec: Recording,
    /// Each timed command's frame and place, in timestamp-pair order.
    timed: Vec<(u64, u32)>,
    /// Secondary command buffers it executes.
    children: Vec<u64>,
}

/// A submitted recording whose timestamps are not read yet.
struct Pending {
    device: usize,
    pool: vk::QueryPool,
    written: u32,
    timed: Vec<(u64, u32)>,
}

#[derive(Default)]
struct State {
    devices: HashMap<usize, Option<Timestamps>>,
    recordings: HashMap<u64, Recorded>,
    pending: Vec<Pending>,
    /// Commands the pools had no room for, or whose command buffer could not be timed.
    untimed: u64,
    /// Render pass instances begun and submits made in captured frames, by frame, not sent
    /// yet.
    frames: BTreeMap<u64, (Vec<VkPassBegin>, Vec<VkSubmit>)>,
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

/// The timestamp pools of the device whose dispatch key is `key`, made on first use; `None`
/// where the device cannot time (no timestamps on its queues).
fn device(st: &mut State, key: usize) -> Option<&mut Timestamps> {
    st.devices
        .entry(key)
        .or_insert_with(|| {
            let facts = layer::device_facts(key)?;
            if facts.valid_bits == 0 || facts.period <= 0.0 {
                return None;
            }
            Some(Timestamps::new(
                facts.device,
                facts.period,
                facts.valid_bits,
            ))
        })
        .as_mut()
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
        // Begun again before it was submitted during the capture: its pool is free.
        if let Some(Some(ts)) = st.devices.get_mut(&old.device) {
            ts.release(old.rec.pool);
        }
    }
    if flags.contains(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE) {
        return;
    }
    // SAFETY: a command buffer is a dispatchable handle.
    let key = unsafe { layer::key_of(cb as usize) };
    let handle = vk::CommandBuffer::from_raw(cb);
    let Some(ts) = device(st, key) else { return };
    // SAFETY: just begun, outside any render pass (not a render pass continuation).
    if let Some(rec) = unsafe { ts.begin(handle) } {
        st.recordings.insert(
            cb,
            Recorded {
                device: key,
                rec,
                timed: Vec::new(),
                children: Vec::new(),
            },
        );
    }
}

/// Around a timed command in `cb`: writes the timestamps before it; true when it did.
pub fn before_work(cb: u64) -> bool {
    let mut guard = state();
    let Some(st) = guard.as_mut() else {
        return false;
    };
    let Some(r) = st.recordings.get_mut(&cb) else {
        return false;
    };
    let Some(Some(ts)) = st.devices.get(&r.device) else {
        return false;
    };
    // Free queries for this command's three timestamps.
    if r.rec.written + PER_COMMAND > gpuheat_counters::vulkan::POOL_QUERIES {
        st.untimed += 1;
        return false;
    }
    let cb = vk::CommandBuffer::from_raw(cb);
    // SAFETY: `cb` is recording (the program is recording a command into it).
    unsafe { ts.write(cb, &mut r.rec) && ts.write(cb, &mut r.rec) }
}

/// After a timed command in `cb` that [`before_work`] opened: the timestamp after it, and
/// the call's place (`frame`, `seq`) its pair stands for.
pub fn after_work(cb: u64, place: Option<(u64, u32)>) {
    let mut guard = state();
    let Some(st) = guard.as_mut() else { return };
    let Some(r) = st.recordings.get_mut(&cb) else {
        return;
    };
    let Some(Some(ts)) = st.devices.get(&r.device) else {
        return;
    };
    // SAFETY: as in `before_work`; the last query was kept free.
    unsafe { ts.write(vk::CommandBuffer::from_raw(cb), &mut r.rec) };
    // A call the recorder could not place still takes its pair, so later pairs stay aligned.
    r.timed.push(place.unwrap_or((u64::MAX, 0)));
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
        st.frames.entry(frame).or_default().1.push(VkSubmit {
            call,
            command_buffers: queue.len() as u32,
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

fn attachment(
    a: (vk::Format, vk::SampleCountFlags, [i32; 4]),
    layouts: (vk::ImageLayout, vk::ImageLayout),
) -> VkAttachment {
    VkAttachment {
        format: a.0.as_raw(),
        samples: a.1.as_raw(),
        load_op: a.2[0],
        store_op: a.2[1],
        stencil_load_op: a.2[2],
        stencil_store_op: a.2[3],
        initial_layout: layouts.0.as_raw(),
        final_layout: layouts.1.as_raw(),
    }
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
        let (handle, attachments, subpasses) = unsafe {
            let handle = *(out as *const u64);
            if v2 {
                let i = &*(info as *const vk::RenderPassCreateInfo2<'_>);
                let list = slice(i.p_attachments, i.attachment_count);
                let a = list
                    .iter()
                    .map(|d| {
                        attachment(
                            (
                                d.format,
                                d.samples,
                                [
                                    d.load_op.as_raw(),
                                    d.store_op.as_raw(),
                                    d.stencil_load_op.as_raw(),
                                    d.stencil_store_op.as_raw(),
                                ],
                            ),
                            (d.initial_layout, d.final_layout),
                        )
                    })
                    .collect();
                (handle, a, i.subpass_count)
            } else {
                let i = &*(info as *const vk::RenderPassCreateInfo<'_>);
                let list = slice(i.p_attachments, i.attachment_count);
                let a = list
                    .iter()
                    .map(|d| {
                        attachment(
                            (
                                d.format,
                                d.samples,
                                [
                                    d.load_op.as_raw(),
                                    d.store_op.as_raw(),
                                    d.stencil_load_op.as_raw(),
                                    d.stencil_store_op.as_raw(),
                                ],
                            ),
                            (d.initial_layout, d.final_layout),
                        )
                    })
                    .collect();
                (handle, a, i.subpass_count)
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
pub unsafe fn pass_began(info: u64, place: Option<(u64, u32)>) {
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
    st.frames.entry(frame).or_default().0.push(begin);
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
    for (frame, (mut begins, mut submits)) in std::mem::take(&mut st.frames) {
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
        }));
    }
    out
}

/// How long the capture's last frame end waits for the timestamps of its submits.
const LAST_WAIT: Duration = Duration::from_secs(2);

/// At a captured frame's end (`last`: the capture's last): the pipelined times of every
/// submitted recording whose timestamps have landed, one batch per frame they belong to, and
/// the frames' render pass records. On
/// the last frame, waits (at most [`LAST_WAIT`], polling) for the rest, and frees the pools of
/// recordings never submitted.
pub fn poll(last: bool) -> (Vec<PipelinedBatch>, Vec<Record>) {
    let deadline = Instant::now() + LAST_WAIT;
    let mut by_frame: HashMap<u64, Vec<PipelinedTime>> = HashMap::new();
    let mut waited = false;
    let mut records = Vec::new();
    loop {
        let mut guard = state();
        let Some(st) = guard.as_mut() else {
            return (Vec::new(), Vec::new());
        };
        if records.is_empty() {
            records = pass_records(st);
        }
        let mut left = Vec::new();
        for p in std::mem::take(&mut st.pending) {
            let Some(Some(ts)) = st.devices.get_mut(&p.device) else {
                continue;
            };
            // SAFETY: the pool of a submitted recording of this device.
            match unsafe { ts.read(p.pool, p.written) } {
                Some(values) => {
                    let each = values.chunks_exact(PER_COMMAND as usize);
                    for (stamps, &(frame, call)) in each.zip(&p.timed) {
                        if frame != u64::MAX {
                            by_frame.entry(frame).or_default().push(PipelinedTime {
                                call,
                                gpu_ns: pair_ns(stamps[0], stamps[2]),
                            });
                        }
                    }
                }
                None => left.push(p),
            }
        }
        st.pending = left;
        if !last || st.pending.is_empty() || Instant::now() > deadline {
            if last {
                st.begun.clear();
                for (_, r) in st.recordings.drain() {
                    if let Some(Some(ts)) = st.devices.get_mut(&r.device) {
                        ts.release(r.rec.pool);
                    }
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
    (batches, records)
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
