//! Per-command GPU time in Vulkan command buffers: timestamp query pools, written around each
//! draw, dispatch and copy as the program records them, read once their command buffer has
//! run, never waited on per command.
//!
//! A recording takes a pool of its own ([`Timestamps::begin`]), reset at the start of the
//! command buffer (outside any render pass: primary command buffers only), so no other
//! command buffer and no earlier submission of this one can mix into its values. A pool goes
//! back to the free list once its values are read ([`Timestamps::read`]). Both timestamps of
//! a command are written at `BOTTOM_OF_PIPE`: the first when every earlier command of the
//! queue is done, the second when the command is; their difference is the command's time in
//! the queue's pipeline, as `GL_TIMESTAMP` pairs give it (overlap with neighbours blurs it,
//! as there).

use ash::vk;

/// Timestamps per pool: room for 2,048 timed commands in one recording.
pub const POOL_QUERIES: u32 = 4096;
/// Most pools one device keeps (32 MiB of query memory at 8 bytes a query); a recording that
/// finds none free is not timed.
pub const MAX_POOLS: usize = 1024;

/// One recording's pool and how many of its queries it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recording {
    /// The pool.
    pub pool: vk::QueryPool,
    /// Timestamps written so far (two per timed command).
    pub written: u32,
}

/// A device's timestamp pools.
pub struct Timestamps {
    device: ash::Device,
    /// Nanoseconds per timestamp tick (`VkPhysicalDeviceLimits::timestampPeriod`).
    period: f64,
    /// The meaningful bits of a timestamp of the queues timed (`timestampValidBits`).
    valid_bits: u32,
    free: Vec<vk::QueryPool>,
    made: usize,
}

impl Timestamps {
    /// The pools of `device`, whose timestamps tick every `period` ns and keep `valid_bits`.
    pub fn new(device: ash::Device, period: f32, valid_bits: u32) -> Timestamps {
        Timestamps {
            device,
            period: f64::from(period),
            valid_bits,
            free: Vec::new(),
            made: 0,
        }
    }

    /// Starts timing the recording of `cb` (just begun, primary): a free pool, reset in the
    /// command buffer. `None` when no pool can be had.
    ///
    /// # Safety
    /// `cb` is a primary command buffer of this device in the recording state, outside any
    /// render pass, on a queue family with timestamps.
    pub unsafe fn begin(&mut self, cb: vk::CommandBuffer) -> Option<Recording> {
        let pool = match self.free.pop() {
            Some(p) => p,
            None if self.made < MAX_POOLS => {
                let info = vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(POOL_QUERIES);
                // SAFETY: a valid create info for this device.
                let p = unsafe { self.device.create_query_pool(&info, None) }.ok()?;
                self.made += 1;
                p
            }
            None => return None,
        };
        // SAFETY: the caller's contract: recording, outside a render pass.
        unsafe { self.device.cmd_reset_query_pool(cb, pool, 0, POOL_QUERIES) };
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
            self.device.cmd_write_timestamp(
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
        let mut raw = vec![[0u64; 2]; n as usize];
        if n > 0 {
            // SAFETY: `raw` holds n (value, availability) pairs of 64 bits.
            let r = unsafe {
                self.device.get_query_pool_results(
                    pool,
                    0,
                    &mut raw,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
                )
            };
            if r.is_err() || raw.iter().any(|[_, available]| *available == 0) {
                return None;
            }
        }
        self.free.push(pool);
        let mask = if self.valid_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.valid_bits) - 1
        };
        Some(
            raw.iter()
                .map(|[v, _]| ((v & mask) as f64 * self.period) as u64)
                .collect(),
        )
    }

    /// Gives `pool` back without reading it (its recording was never submitted).
    pub fn release(&mut self, pool: vk::QueryPool) {
        self.free.push(pool);
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
