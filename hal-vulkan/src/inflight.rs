//! Work in flight: queue operations are submitted without host waits, so what a pending
//! submission uses is kept until the device's progress timeline passes it, and a host wait
//! on a semaphore waits for the device work that signalled it.
//!
//! Every submission goes to the one compute queue, in queue order, and ends with a barrier
//! whose second scope is all later work (`Context::end_barrier`): work submitted later runs
//! after it on the device, so the shared queue in hal-core can treat a signal as reached (in
//! queue order) as soon as the work that makes it is submitted. What that leaves to the
//! driver:
//!
//! - **Host waits and queries** ([`DeviceSignal`]): each semaphore remembers, for its last
//!   few device signals, the progress value of the submission whose completion reaches it;
//!   `wait_semaphores` waits for the first one at or above the value waited for, and
//!   `query_semaphore` reports only values the device has reached. A host signal settles
//!   nothing pending: a value above every pending one is the host's and needs no wait.
//! - **Frees** ([`Retired`]): a buffer released, or a recording replaced, while the device may
//!   still use it is kept with the progress value it waits for and freed once that is reached
//!   (checked at every execution, wait and host access, and before an allocation that ran
//!   out of memory is tried again). Teardown waits for the device and frees all.
//! - **Host access** (`read_buffer`, `write_buffer`, mappings, streams, loads) first waits
//!   for everything submitted ([`VulkanDevice::settle`]), so the host never races the GPU on
//!   a buffer, whatever the caller waited for.

use crate::types::{DeviceSignal, Retired, VulkanDevice, TRACKED_SIGNALS};
use core::sync::atomic::Ordering::Relaxed;
use hal_core::semaphore::Semaphore;
use hal_core::{Error, SemaphoreValue, Timeout};

impl DeviceSignal {
    /// Nothing pending, at `value`.
    fn at(value: u64) -> Self {
        Self {
            settled: value,
            ..Self::default()
        }
    }

    fn pending(&self) -> &[(u64, u64)] {
        &self.pending[..self.len as usize]
    }

    /// Drops the pending signals whose progress `reached` says has run.
    fn settle(&mut self, reached: impl Fn(u64) -> bool) {
        let done = self
            .pending()
            .iter()
            .take_while(|&&(_, progress)| reached(progress))
            .count();
        if done > 0 {
            self.settled = self.settled.max(self.pending[done - 1].0);
            self.pending.copy_within(done..self.len as usize, 0);
            self.len -= done as u8;
        }
    }

    /// Notes `value`, reached once progress `progress` is.
    fn push(&mut self, value: u64, progress: u64) {
        if let Some(last) = self.pending().last() {
            if last.0 >= value {
                return;
            }
        }
        if self.len as usize == TRACKED_SIGNALS {
            self.pending.copy_within(1.., 0);
            self.len -= 1;
        }
        self.pending[self.len as usize] = (value, progress);
        self.len += 1;
    }

    /// The progress a host wait for `value` must see reached (0: none): that of the first
    /// pending signal at or above it. A value above every pending one was signalled by the
    /// host.
    fn progress_for(&self, value: u64) -> u64 {
        if value <= self.settled {
            return 0;
        }
        self.pending()
            .iter()
            .find(|&&(v, _)| v >= value)
            .map_or(0, |&(_, progress)| progress)
    }
}

impl VulkanDevice<'_> {
    /// Frees `thing` now if the device is idle, or once everything submitted so far has run.
    pub(crate) fn free_when_done(&mut self, thing: Retired) {
        if !self.ctx.reached(self.ctx.next_value) {
            self.retired.push((self.ctx.next_value, thing));
        } else {
            self.free_retired(thing);
        }
    }

    /// Frees what the device has finished with.
    pub(crate) fn collect(&mut self) {
        if self.retired.is_empty() {
            return;
        }
        // One query of the device's progress for the whole list.
        let oldest = self.retired.iter().map(|r| r.0).min().unwrap_or(0);
        if !self.ctx.reached(oldest) {
            return;
        }
        let completed = self.ctx.completed.load(Relaxed);
        let mut i = 0;
        while i < self.retired.len() {
            if self.retired[i].0 <= completed {
                let (_, thing) = self.retired.swap_remove(i);
                self.free_retired(thing);
            } else {
                i += 1;
            }
        }
    }

    /// Waits until everything submitted has run, then frees what it held.
    pub(crate) fn settle(&mut self) -> Result<(), Error> {
        self.ctx.settle()?;
        self.collect();
        Ok(())
    }

    /// Frees everything kept, waiting for the device first (teardown).
    pub(crate) fn free_all_retired(&mut self) {
        self.ctx.wait_idle();
        for (_, thing) in core::mem::take(&mut self.retired) {
            self.free_retired(thing);
        }
    }

    fn free_retired(&mut self, thing: Retired) {
        match thing {
            Retired::Buffer(rec) => self.free_backing(rec),
            Retired::Recording(recording) => recording.free(&self.ctx),
            Retired::Upload(upload) => upload.destroy(&self.ctx),
        }
    }

    /// Notes that `signals` were just reached in queue order: on the device they are reached
    /// once everything submitted so far has run.
    pub(crate) fn note_device_signals(&mut self, signals: &[SemaphoreValue]) {
        let progress = self.ctx.next_value;
        let completed = self.ctx.completed.load(Relaxed);
        for signal in signals {
            let Some(entry) = self.signals.get_mut(signal.semaphore.index() as usize) else {
                continue;
            };
            entry.settle(|p| p <= completed);
            if progress <= completed {
                entry.settled = entry.settled.max(signal.value);
            } else {
                entry.push(signal.value, progress);
            }
        }
    }

    /// A semaphore made at `value`: nothing pending.
    pub(crate) fn note_created(&mut self, semaphore: Semaphore, value: u64) {
        if let Some(entry) = self.signals.get_mut(semaphore.index() as usize) {
            *entry = DeviceSignal::at(value);
        }
    }

    /// The progress value a host wait for `wait` must see reached (0: none).
    fn progress_for(&self, wait: &SemaphoreValue) -> u64 {
        self.signals
            .get(wait.semaphore.index() as usize)
            .map_or(0, |entry| entry.progress_for(wait.value))
    }

    /// The value of `semaphore` the device has reached, given its value in queue order.
    pub(crate) fn device_value(&self, semaphore: Semaphore, queued: u64) -> u64 {
        let Some(entry) = self.signals.get(semaphore.index() as usize) else {
            return queued;
        };
        let mut entry = *entry;
        entry.settle(|p| self.ctx.reached(p));
        if entry.len == 0 {
            queued
        } else {
            entry.settled.min(queued)
        }
    }

    /// Waits (within `timeout`) for the device work that signals every wait, all of which
    /// are reached in queue order.
    pub(crate) fn wait_device(
        &mut self,
        waits: &[SemaphoreValue],
        timeout: Timeout,
    ) -> Result<(), Error> {
        let progress = waits
            .iter()
            .map(|w| self.progress_for(w))
            .max()
            .unwrap_or(0);
        let nanos = match timeout {
            Timeout::Infinite => u64::MAX,
            Timeout::Immediate => 0,
            Timeout::Nanos(n) => n,
        };
        let reached = self.ctx.wait_value_for(progress, nanos)?;
        self.collect();
        if reached {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DeviceSignal, TRACKED_SIGNALS};

    #[test]
    fn a_wait_waits_for_the_first_signal_at_or_above_it() {
        let mut s = DeviceSignal::at(1);
        s.push(2, 10);
        s.push(4, 11);
        s.push(6, 12);
        assert_eq!(s.progress_for(1), 0, "settled already");
        assert_eq!(s.progress_for(2), 10);
        assert_eq!(s.progress_for(3), 11, "3 is reached with 4");
        assert_eq!(s.progress_for(6), 12);
        assert_eq!(
            s.progress_for(7),
            0,
            "above every device signal: the host's"
        );
        s.settle(|p| p <= 11);
        assert_eq!(s.settled, 4);
        assert_eq!(s.progress_for(4), 0);
        assert_eq!(s.progress_for(5), 12);
    }

    #[test]
    fn past_the_tracked_signals_the_oldest_waits_longer_never_shorter() {
        let mut s = DeviceSignal::at(0);
        for i in 1..=TRACKED_SIGNALS as u64 + 2 {
            s.push(i, 100 + i);
        }
        // Values 1 and 2 were dropped: a wait for them takes value 3's progress.
        assert_eq!(s.progress_for(1), 103);
        assert_eq!(s.progress_for(3), 103);
        assert_eq!(
            s.progress_for(TRACKED_SIGNALS as u64 + 2),
            100 + TRACKED_SIGNALS as u64 + 2
        );
        // A value not above the last pending one adds nothing.
        s.push(5, 999);
        assert_eq!(s.progress_for(5), 105);
    }
}
