//! Work in flight: queue operations are submitted without host waits, so what a pending
//! submission uses is kept until the device's progress timeline passes it, and a host wait
//! on a semaphore waits for the device work that signalled it.
//!
//! Every submission goes to the one compute queue, in queue order, and starts behind a full
//! barrier: work submitted later runs after it on the device, so the shared queue in
//! hal-core can treat a signal as reached (in queue order) as soon as the work that makes it
//! is submitted. What that leaves to the driver:
//!
//! - **Host waits and queries** ([`DeviceSignal`]): each semaphore remembers the progress
//!   value of the last submission whose completion may signal it; `wait_semaphores` waits for
//!   it and `query_semaphore` reports only values the device has reached.
//! - **Frees** ([`Retired`]): a buffer released, or a recording replaced, while the device may
//!   still use it is kept with the progress value it waits for and freed once that is reached
//!   (at the next wait, host access or release). Teardown waits for the device and frees all.
//! - **Host access** (`read_buffer`, `write_buffer`, mappings, streams, loads) first waits
//!   for everything submitted ([`VulkanDevice::settle`]), so the host never races the GPU on
//!   a buffer, whatever the caller waited for.

use crate::buffer::BufferRec;
use crate::command::Recording;
use crate::device::VulkanDevice;
use crate::staging::InternalBuffer;
use core::sync::atomic::Ordering::Relaxed;
use hal_core::semaphore::Semaphore;
use hal_core::{Error, SemaphoreValue, Timeout};

/// What a semaphore's latest device signal waits for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DeviceSignal {
    /// A value the device has certainly reached (all of whose work has run).
    pub(crate) settled: u64,
    /// The value signalled by submitted work.
    pub(crate) value: u64,
    /// The progress value after which `value` is reached on the device (0: nothing pending).
    pub(crate) progress: u64,
}

/// Something freed once the device has passed the progress value it is kept with.
pub(crate) enum Retired {
    Buffer(BufferRec),
    Recording(Recording),
    Upload(InternalBuffer),
}

impl VulkanDevice<'_> {
    /// Frees `thing` now if the device is idle, or once everything submitted so far has run.
    pub(crate) fn free_when_done(&mut self, thing: Retired) {
        if self.ctx.busy() && !self.ctx.reached(self.ctx.next_value) {
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
        let mut i = 0;
        while i < self.retired.len() {
            if self.ctx.reached(self.retired[i].0) {
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
        let pending = progress > self.ctx.completed.load(Relaxed);
        for signal in signals {
            let Some(entry) = self.signals.get_mut(signal.semaphore.index() as usize) else {
                continue;
            };
            if entry.progress <= self.ctx.completed.load(Relaxed) {
                entry.settled = entry.settled.max(entry.value);
            }
            entry.value = entry.value.max(signal.value);
            if pending {
                entry.progress = progress;
            } else {
                entry.settled = entry.value;
                entry.progress = 0;
            }
        }
    }

    /// A semaphore's value moved by the host (created, signalled): nothing pending.
    pub(crate) fn note_host_value(&mut self, semaphore: Semaphore, value: u64) {
        if let Some(entry) = self.signals.get_mut(semaphore.index() as usize) {
            *entry = DeviceSignal {
                settled: value,
                value,
                progress: 0,
            };
        }
    }

    /// The progress value a host wait for `wait` must see reached (0: none).
    fn progress_for(&self, wait: &SemaphoreValue) -> u64 {
        match self.signals.get(wait.semaphore.index() as usize) {
            Some(entry) if wait.value > entry.settled => entry.progress,
            _ => 0,
        }
    }

    /// The value of `semaphore` the device has reached, given its value in queue order.
    pub(crate) fn device_value(&self, semaphore: Semaphore, queued: u64) -> u64 {
        match self.signals.get(semaphore.index() as usize) {
            Some(entry) if entry.progress != 0 && !self.ctx.reached(entry.progress) => {
                entry.settled.min(queued)
            }
            _ => queued,
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
