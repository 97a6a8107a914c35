//! A device several cores (or threads) share: the device state behind one spin lock, taken
//! for each call, and host waits that let go of it between polls so that another core can
//! reach the value waited for.
//!
//! A driver whose work runs at submit (the local one) runs it under the lock, on the
//! submitting core and on whatever cores it hands a dispatch's workgroups to; a driver with
//! a real queue only records and submits under it.

use crate::device::Device;
use crate::semaphore::{SemaphoreValue, Timeout};
use crate::Error;

/// A device behind a spin lock: `Sync` where the device is `Send`, so a `static` or a
/// reference can be handed to every core.
pub struct Shared<D> {
    device: spin::Mutex<D>,
}

/// Spin-loop hints between two polls of [`Shared::wait_semaphores`], so the core that
/// will signal can take the lock.
const BACKOFF: usize = 64;

impl<D: Device> Shared<D> {
    /// The device, shared.
    pub const fn new(device: D) -> Self {
        Self {
            device: spin::Mutex::new(device),
        }
    }

    /// The device for a series of calls, held until the guard drops. Never hold it while
    /// waiting for another core: use [`Shared::wait_semaphores`].
    pub fn lock(&self) -> spin::MutexGuard<'_, D> {
        self.device.lock()
    }

    /// Runs `f` on the device, holding the lock for the call.
    pub fn with<R>(&self, f: impl FnOnce(&mut D) -> R) -> R {
        f(&mut self.device.lock())
    }

    /// Waits until every semaphore in `waits` reaches its value, polling at most `polls`
    /// times and taking the lock only for each poll. A semaphore that fails fails the
    /// wait with its error at once; after `polls` unsuccessful polls (0: none) the result
    /// is [`Error::Timeout`] (firmware has no clock here: a poll is one lock, one check).
    pub fn wait_semaphores(&self, waits: &[SemaphoreValue], polls: u64) -> Result<(), Error> {
        for _ in 0..polls {
            match self
                .device
                .lock()
                .wait_semaphores(waits, Timeout::Immediate)
            {
                Err(Error::Timeout) => {}
                done => return done,
            }
            for _ in 0..BACKOFF {
                core::hint::spin_loop();
            }
        }
        Err(Error::Timeout)
    }

    /// The device back, unshared.
    pub fn into_inner(self) -> D {
        self.device.into_inner()
    }
}
