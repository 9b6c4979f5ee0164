//! Per-command GPU time and samples in Vulkan command buffers: timestamp and occlusion query
//! pools, written around each draw, dispatch and copy as the program records them, read once
//! their command buffer has run, never waited on per command; and the `CTX` record that
//! names a device's counters.
//!
//! A recording takes a pool of each kind of its own ([`Timestamps::begin`],
//! [`Counting::begin`]), reset at the start of the command buffer (outside any render pass:
//! primary command buffers only), so no other command buffer and no earlier submission of
//! this one can mix into its values. A pool goes back to the free list once its values are
//! read. Timestamps are written at `BOTTOM_OF_PIPE`: when every earlier command of the queue
//! is done; the difference of a command's is its time in the queue's pipeline, as
//! `GL_TIMESTAMP` pairs give it (overlap with neighbours blurs it, as there). How many a
//! command gets is the layer's choice (`vk::track::PER_COMMAND` in the agent).

use crate::catalogue::{self, COUNTERS};
use ash::vk;
use gpuheat_session::{ClientApi, ContextInfo, CounterInfo};

/// Queries per pool: room for 1,365 timed commands (three timestamps each), or 4,096 counted
/// draws, in one recording.
pub const POOL_QUERIES: u32 = 4096;
/// Most pools of one kind a device keeps (32 MiB of query memory at 8 bytes a query); a
/// recording that finds none free is not timed (or counted).
pub const MAX_POOLS: usize = 1024;

/// The pipeline statistics the layer asks for: every one Vulkan 1.0 defines. Their values
/// come back in bit order ([`STATISTICS_ORDER`]).
pub const STATISTICS: vk::QueryPipelineStatisticFlags =
    vk::QueryPipelineStatisticFlags::from_raw(0x7ff);

/// The catalogue index of each pipeline statistic as a query returns them (bit order:
/// input-assembly vertices and primitives, vertex, geometry invocations and primitives,
/// clipping invocations and primitives, fragment, tessellation control patches and
/// evaluation invocations, compute).
pub const STATISTICS_ORDER: [u16; 11] = [
    catalogue::VERTICES_SUBMITTED,
    catalogue::PRIMITIVES_SUBMITTED,
    catalogue::VERTEX_SHADER_INVOCATIONS,
    catalogue::GEOMETRY_SHADER_INVOCATIONS,
    catalogue::GEOMETRY_SHADER_PRIMITIVES_EMITTED,
    catalogue::CLIPPING_INPUT_PRIMITIVES,
    catalogue::CLIPPING_OUTPUT_PRIMITIVES,
    catalogue::FRAGMENT_SHADER_INVOCATIONS,
    catalogue::TESS_CONTROL_SHADER_PATCHES,
    catalogue::TESS_EVALUATION_SHADER_INVOCATIONS,
    catalogue::COMPUTE_SHADER_INVOCATIONS,
];

/// A device's query pools of one type: taken by a recording (reset in its command buffer),
/// free again once read or given back.
struct Pools {
    device: ash::Device,
    ty: vk::QueryType,
    free: Vec<vk::QueryPool>,
    made: usize,
}

impl Pools {
    fn new(device: ash::Device, ty: vk::QueryType) -> Pools {
        Pools {
            device,
            ty,
            free: Vec::new(),
            made: 0,
        }
    }

    /// A free pool (a new one while fewer than [`MAX_POOLS`] were made), reset in `cb`.
    ///
    /// # Safety
    /// `cb` is a command buffer of this device in the recording state, outside any render
    /// pass.
    unsafe fn take(&mut self, cb: vk::CommandBuffer) -> Option<vk::QueryPool> {
        let pool = match self.free.pop() {
            Some(p) => p,
            None if self.made < MAX_POOLS => {
                let mut info = vk::QueryPoolCreateInfo::default()
                    .query_type(self.ty)
                    .query_count(POOL_QUERIES);
                if self.ty == vk::QueryType::PIPELINE_STATISTICS {
                    info = info.pipeline_statistics(STATISTICS);
                }
                // SAFETY: a valid create info for this device.
                let p = unsafe { self.device.create_query_pool(&info, None) }.ok()?;
                self.made += 1;
                p
            }
            None => return None,
        };
        // SAFETY: the caller's contract: recording, outside a render pass.
        unsafe { self.device.cmd_reset_query_pool(cb, pool, 0, POOL_QUERIES) };
        Some(pool)
    }

    /// The results of the first `n` queries of `pool`, `N - 1` values and the availability
    /// each, if all have landed (never waits); the pool is free again then.
    ///
    /// # Safety
    /// `pool` is one of these, from a recording that was submitted; `N - 1` is the number of
    /// values its queries return.
    unsafe fn read<const N: usize>(
        &mut self,
        pool: vk::QueryPool,
        n: u32,
    ) -> Option<Vec<[u64; N]>> {
        let mut raw = vec![[0u64; N]; n as usize];
        if n > 0 {
            // SAFETY: `raw` holds n groups of N-1 values and their availability, 64 bits each.
            let r = unsafe {
                self.device.get_query_pool_results(
                    pool,
                    0,
                    &mut raw,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
                )
            };
            if r.is_err() || raw.iter().any(|v| v[N - 1] == 0) {
                return None;
            }
        }
        self.free.push(pool);
        Some(raw)
    }

    fn release(&mut self, pool: vk::QueryPool) {
        self.free.push(pool);
    }
}

/// One recording's timestamp pool and how many of its queries it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recording {
    /// The pool.
    pub pool: vk::QueryPool,
    /// Timestamps written so far.
    pub written: u32,
}

/// A device's timestamp pools.
pub struct Timestamps {
    pools: Pools,
    /// Nanoseconds per timestamp tick (`VkPhysicalDeviceLimits::timestampPeriod`).
    period: f64,
    /// The meaningful bits of a timestamp of the queues timed (`timestampValidBits`).
    valid_bits: u32,
}

impl Timestamps {
    /// The pools of `device`, whose timestamps tick every `period` ns and keep `valid_bits`.
    pub fn new(device: ash::Device, period: f32, valid_bits: u32) -> Timestamps {
        Timestamps {
            pools: Pools::new(device, vk::QueryType::TIMESTAMP),
            period: f64::from(period),
            valid_bits,
        }
    }

    /// Starts timing the recording of `cb` (just begun, primary): a free pool, reset in the
    /// command buffer. `None` when no pool can be had.
    ///
    /// # Safety
    /// `cb` is a primary command buffer of this device in the recording state, outside any
    /// render pass, on a queue family with timestamps.
    pub unsafe fn begin(&mut self, cb: vk::CommandBuffer) -> Option<Recording> {
        // SAFETY: the caller's contract.
        let pool = unsafe { self.pools.take(cb) }?;
        Some(Recording { pool, written: 0 })
    }

    /// Writes the next timestamp of `rec` into `cb`; false when its pool is full.
    ///
    /// # Safety
    /// `cb` is recording, `rec` is its recording's.
    pub unsafe fn write(&self, cb: vk::CommandBuffer, rec: &mut Recording) -> bool {
        if rec.written >= POOL_QUERIES {
            return false;
        }
        // SAFETY: the caller's contract; the query was reset at the recording's start.
        unsafe {
            self.pools.device.cmd_write_timestamp(
                cb,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                rec.pool,
                rec.written,
            )
        };
        rec.written += 1;
        true
    }

    /// The first `n` timestamps of `pool` in nanoseconds, if all have landed (never waits);
    /// the pool is then free again. `None` while some have not.
    ///
    /// # Safety
    /// `pool` is one of this device's, from a recording that was submitted.
    pub unsafe fn read(&mut self, pool: vk::QueryPool, n: u32) -> Option<Vec<u64>> {
        // SAFETY: the caller's contract; a timestamp query returns one value.
        let raw = unsafe { self.pools.read::<2>(pool, n) }?;
        let mask = crate::timestamp_mask(self.valid_bits);
        Some(
            raw.iter()
                .map(|[v, _]| ((v & mask) as f64 * self.period) as u64)
                .collect(),
        )
    }

    /// Gives `pool` back without reading it (its recording was never submitted).
    pub fn release(&mut self, pool: vk::QueryPool) {
        self.pools.release(pool);
    }

    /// A barrier from every stage to every stage in `cb`: nothing after it starts before
    /// everything before it is done (an execution dependency; the serialized mode's isolation).
    ///
    /// # Safety
    /// `cb` is recording, outside any render pass.
    pub unsafe fn barrier(&self, cb: vk::CommandBuffer) {
        // SAFETY: the caller's contract; no memory barrier is passed.
        unsafe {
            self.pools.device.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[],
            )
        };
    }
}

/// A device's pools of one kind of counting query, begun before a draw and ended after it:
/// occlusion (samples passed) or pipeline statistics.
pub struct Counting {
    pools: Pools,
    control: vk::QueryControlFlags,
}

/// One recording's counting pool and the queries it used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// The pool.
    pub pool: vk::QueryPool,
    /// Queries used so far (one per draw).
    pub used: u32,
}

impl Counting {
    /// Occlusion pools of `device`; `precise` (`occlusionQueryPrecise`): exact counts, not
    /// just zero or not.
    pub fn occlusion(device: ash::Device, precise: bool) -> Counting {
        Counting {
            pools: Pools::new(device, vk::QueryType::OCCLUSION),
            control: if precise {
                vk::QueryControlFlags::PRECISE
            } else {
                vk::QueryControlFlags::empty()
            },
        }
    }

    /// Pipeline statistics pools of `device` (made with `pipelineStatisticsQuery`).
    pub fn statistics(device: ash::Device) -> Counting {
        Counting {
            pools: Pools::new(device, vk::QueryType::PIPELINE_STATISTICS),
            control: vk::QueryControlFlags::empty(),
        }
    }

    /// Starts counting the recording of `cb`: a free pool, reset in the command buffer.
    ///
    /// # Safety
    /// As [`Timestamps::begin`].
    pub unsafe fn begin(&mut self, cb: vk::CommandBuffer) -> Option<Counted> {
        // SAFETY: the caller's contract.
        let pool = unsafe { self.pools.take(cb) }?;
        Some(Counted { pool, used: 0 })
    }

    /// Begins the next query of `c` in `cb`, before a draw; false when the pool is full.
    ///
    /// # Safety
    /// `cb` is recording inside a render pass, with no query of this type active.
    pub unsafe fn start(&self, cb: vk::CommandBuffer, c: &Counted) -> bool {
        if c.used >= POOL_QUERIES {
            return false;
        }
        // SAFETY: the caller's contract; the query was reset at the recording's start.
        unsafe {
            self.pools
                .device
                .cmd_begin_query(cb, c.pool, c.used, self.control)
        };
        true
    }

    /// Ends the query [`Counting::start`] began, after the draw.
    ///
    /// # Safety
    /// As [`Counting::start`], which began it.
    pub unsafe fn stop(&self, cb: vk::CommandBuffer, c: &mut Counted) {
        // SAFETY: the caller's contract.
        unsafe { self.pools.device.cmd_end_query(cb, c.pool, c.used) };
        c.used += 1;
    }

    /// The values of the first `n` queries of `pool` (`N - 1` each: one for occlusion, 11
    /// for [`STATISTICS`]), if all have landed (never waits); the pool is free again then.
    ///
    /// # Safety
    /// `pool` is one of this device's, from a recording that was submitted; `N - 1` is the
    /// number of values its queries return.
    pub unsafe fn read<const N: usize>(
        &mut self,
        pool: vk::QueryPool,
        n: u32,
    ) -> Option<Vec<[u64; N]>> {
        // SAFETY: the caller's contract.
        unsafe { self.pools.read::<N>(pool, n) }
    }

    /// Gives `pool` back without reading it.
    pub fn release(&mut self, pool: vk::QueryPool) {
        self.pools.release(pool);
    }
}

/// The `CTX` record of a Vulkan device whose calls name it by `handle` (the loader's dispatch
/// key): the whole catalogue, with what the layer measures there available (pipelined time;
/// samples passed, exact when `precise`; the pipeline statistics with `statistics`).
pub fn context_info(
    handle: u64,
    props: &vk::PhysicalDeviceProperties,
    precise: bool,
    statistics: bool,
) -> ContextInfo {
    let name = props
        .device_name_as_c_str()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    let v = props.api_version;
    let counters = COUNTERS
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let why = match i as u16 {
                catalogue::GPU_TIME_PIPELINED => None,
                catalogue::SAMPLES_PASSED if precise => None,
                catalogue::SAMPLES_PASSED => {
                    Some("the device has no occlusionQueryPrecise: counts would be 0 or not")
                }
                catalogue::GPU_TIME_SERIALIZED => {
                    Some("no serialized mode on Vulkan yet: the pipelined time is the draw's")
                }
                catalogue::CPU_TIME => {
                    Some("Vulkan calls are not clocked apart from their wall time")
                }
                _ if statistics => None,
                _ => Some("the device has no pipelineStatisticsQuery"),
            };
            CounterInfo {
                name: c.name.to_string(),
                unit: c.unit.to_string(),
                description: c.description.to_string(),
                available: why.is_none(),
                unavailable_reason: why.map(str::to_string),
            }
        })
        .collect();
    ContextInfo {
        handle,
        api: ClientApi::Vulkan,
        vendor: format!("0x{:04x}", props.vendor_id),
        renderer: name,
        version: format!(
            "Vulkan {}.{}.{}, driver 0x{:x}",
            vk::api_version_major(v),
            vk::api_version_minor(v),
            vk::api_version_patch(v),
            props.driver_version
        ),
        counters,
        pipelined_meaningful: true,
        pipelined_note: "three timestamps around each command in the program's own command \
                         buffers (two before, one after: on a GPU the first two are one \
                         instant; on a renderer that runs batches, the first waits for all \
                         earlier work), read once the command buffer ran"
            .into(),
        serialized_overhead_ns: 0,
    }
}

/// A command's time from its timestamp pair (`before`, `after`, in ns): 0 when the pair runs
/// backwards (a wrapped or invalid counter).
pub fn pair_ns(before: u64, after: u64) -> u64 {
    after.saturating_sub(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_never_goes_negative() {
        assert_eq!(pair_ns(10, 25), 15);
        assert_eq!(pair_ns(25, 10), 0);
    }
}
