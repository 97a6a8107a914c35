//! GPU timestamps around the dispatches of a recording, for profiling
//! ([`VulkanConfig::profile_dispatches`](crate::VulkanConfig::profile_dispatches)).
//!
//! A recording resets the device's one query pool, writes a timestamp before its first
//! command and one after each dispatch completes. The span between two consecutive
//! timestamps is what its dispatch cost the queue: the barrier before it, the launch and
//! the run. Every recording shares the pool, so the figures are those of the submission that
//! ran last (submissions run in order on the one queue): each successful submission, fresh
//! or replayed, names its dispatches ([`Profiler::ran`]).

use crate::instance::{vk_error, Context};
use crate::objects::VkObject;
use ash::vk;
use hal_core::Error;

/// Dispatches a recording can time; later ones are not timed.
const MAX_TIMED: u32 = 1023;

/// One dispatch's share of a profiled submission.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchTime {
    /// The kernel's name.
    pub kernel: &'static str,
    /// Its grid in workgroups (an indirect dispatch's as `[0, 0, 0]`).
    pub grid: [u32; 3],
    /// Nanoseconds from the end of the dispatch before it (or the submission's start) to
    /// its own end.
    pub nanos: f64,
}

/// The query pool and what the last submission timed.
pub(crate) struct Profiler {
    pool: vk::QueryPool,
    /// Nanoseconds per timestamp tick.
    period: f64,
    /// Bits of a timestamp the queue writes (the rest are garbage).
    valid_bits: u32,
    /// The kernels and grids of the last submission's timed dispatches, in order.
    timed: Vec<(&'static str, [u32; 3])>,
}

impl Profiler {
    /// A profiler for `ctx`'s compute queue, or `None` where it writes no timestamps.
    pub(crate) fn new(ctx: &Context) -> Result<Option<Self>, Error> {
        let Some((period, valid_bits)) = ctx.timestamps else {
            return Ok(None);
        };
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(MAX_TIMED + 1);
        // SAFETY: a valid create info on a live device.
        let pool = unsafe { ctx.device.create_query_pool(&info, None) }
            .map_err(vk_error("vkCreateQueryPool"))?;
        ctx.live.created(VkObject::QueryPool);
        Ok(Some(Self {
            pool,
            period: f64::from(period),
            valid_bits,
            timed: Vec::new(),
        }))
    }

    /// Starts a recording's timestamps: resets the pool and writes the first.
    pub(crate) fn begin(&self, ctx: &Context, cb: vk::CommandBuffer) {
        // SAFETY: `cb` is recording, outside any render pass; the queries exist.
        unsafe {
            ctx.device
                .cmd_reset_query_pool(cb, self.pool, 0, MAX_TIMED + 1);
            ctx.device
                .cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, self.pool, 0);
        }
    }

    /// Writes the timestamp after dispatch `dispatch` (counted from 0) of the recording,
    /// just recorded into `cb`.
    pub(crate) fn after_dispatch(&self, ctx: &Context, cb: vk::CommandBuffer, dispatch: u32) {
        let index = dispatch + 1;
        if index > MAX_TIMED {
            return;
        }
        // SAFETY: `cb` is recording; query `index` was reset earlier in it and is written once.
        unsafe {
            ctx.device.cmd_write_timestamp(
                cb,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                self.pool,
                index,
            );
        }
    }

    /// A submission of a recording began with [`begin`](Self::begin) went to the queue: its
    /// dispatches' kernels and grids, in order (those past the pool's room are not timed).
    pub(crate) fn ran(&mut self, dispatches: impl IntoIterator<Item = (&'static str, [u32; 3])>) {
        self.timed.clear();
        self.timed
            .extend(dispatches.into_iter().take(MAX_TIMED as usize));
    }

    /// The last submission's dispatch times, once the device is idle (the caller waits).
    pub(crate) fn read(&self, ctx: &Context) -> Result<Vec<DispatchTime>, Error> {
        if self.timed.is_empty() {
            return Ok(Vec::new());
        }
        let mut ticks = vec![0u64; self.timed.len() + 1];
        // SAFETY: the queries were written by a submission that has completed (the device
        // is idle); `ticks` holds one 64-bit result per query.
        unsafe {
            ctx.device.get_query_pool_results(
                self.pool,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(vk_error("vkGetQueryPoolResults"))?;
        let mask = if self.valid_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.valid_bits) - 1
        };
        Ok(self
            .timed
            .iter()
            .zip(ticks.windows(2))
            .map(|(&(kernel, grid), t)| DispatchTime {
                kernel,
                grid,
                nanos: ((t[1] & mask).wrapping_sub(t[0] & mask) & mask) as f64 * self.period,
            })
            .collect())
    }

    pub(crate) fn destroy(self, ctx: &Context) {
        // SAFETY: the device is idle at teardown; the pool is destroyed once.
        unsafe { ctx.device.destroy_query_pool(self.pool, None) };
        ctx.live.destroyed(VkObject::QueryPool);
    }
}
