//! Timeline semaphores: a `u64` payload that only moves forward, and a failure state.
//!
//! [`Timeline`] is the state machine every driver shares. Signalling a value not above the
//! current one is an error. Failing a semaphore is final: every waiter, and every queue
//! operation that waits on it, fails with the same status, and so do the semaphores those
//! operations would have signalled — failure propagates down the chain of work.

use crate::handle::{Handle, Kind};
use crate::Error;

/// Marker for semaphore handles.
pub enum SemaphoreKind {}
impl Kind for SemaphoreKind {
    const NAME: &'static str = "semaphore";
}

/// A timeline semaphore.
pub type Semaphore = Handle<SemaphoreKind>;

/// A (semaphore, value) pair: "wait until it reaches `value`" or "signal it to `value`".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SemaphoreValue {
    /// The semaphore.
    pub semaphore: Semaphore,
    /// The payload value.
    pub value: u64,
}

impl SemaphoreValue {
    /// The pair.
    pub const fn new(semaphore: Semaphore, value: u64) -> Self {
        Self { semaphore, value }
    }
}

/// How long a host wait may block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Timeout {
    /// Do not block: succeed only if already satisfied.
    Immediate,
    /// Block for at most this many nanoseconds.
    Nanos(u64),
    /// Block until satisfied (or until the driver proves it never will be).
    Infinite,
}

/// The state of one timeline semaphore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Timeline {
    value: u64,
    failure: Option<u32>,
}

impl Timeline {
    /// A semaphore at `initial`.
    pub const fn new(initial: u64) -> Self {
        Self {
            value: initial,
            failure: None,
        }
    }

    /// The current value, or the failure.
    pub const fn query(&self) -> Result<u64, Error> {
        match self.failure {
            Some(code) => Err(Error::SemaphoreFailed { code }),
            None => Ok(self.value),
        }
    }

    /// Moves the payload to `value`, which must be above the current one.
    pub fn signal(&mut self, value: u64) -> Result<(), Error> {
        let current = self.query()?;
        if value <= current {
            return Err(Error::SemaphoreBackwards {
                current,
                requested: value,
            });
        }
        self.value = value;
        Ok(())
    }

    /// Fails the semaphore with `code`. The first failure wins; later ones are ignored.
    pub fn fail(&mut self, code: u32) {
        if self.failure.is_none() {
            self.failure = Some(code);
        }
    }

    /// The failure code, if it failed.
    pub const fn failure(&self) -> Option<u32> {
        self.failure
    }

    /// `Ok(true)` when a wait for `value` is satisfied, `Ok(false)` when it must wait, the
    /// failure when the semaphore failed.
    pub const fn reached(&self, value: u64) -> Result<bool, Error> {
        match self.query() {
            Ok(current) => Ok(current >= value),
            Err(e) => Err(e),
        }
    }
}

/// Which queues an operation may run on (a bit per queue); [`QueueAffinity::ANY`] lets the
/// driver choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct QueueAffinity(pub u64);

impl QueueAffinity {
    /// Any queue.
    pub const ANY: Self = Self(u64::MAX);
}

/// The ordering of one queue operation: where it may run, what it waits for, and what it
/// signals when done.
#[derive(Debug, Clone, Copy)]
pub struct Submit<'a> {
    /// Queues it may run on.
    pub affinity: QueueAffinity,
    /// It starts once every one of these is reached.
    pub waits: &'a [SemaphoreValue],
    /// It signals each of these when it completes (or fails them if it fails).
    pub signals: &'a [SemaphoreValue],
}

impl<'a> Submit<'a> {
    /// No waits, no signals, any queue: run as soon as possible.
    pub const NOW: Submit<'static> = Submit {
        affinity: QueueAffinity::ANY,
        waits: &[],
        signals: &[],
    };

    /// Waits and signals on any queue.
    pub const fn new(waits: &'a [SemaphoreValue], signals: &'a [SemaphoreValue]) -> Self {
        Self {
            affinity: QueueAffinity::ANY,
            waits,
            signals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timelines_only_move_forward_and_failure_is_final() {
        let mut t = Timeline::new(1);
        assert_eq!(t.reached(1), Ok(true));
        assert_eq!(t.reached(2), Ok(false));
        assert_eq!(
            t.signal(1),
            Err(Error::SemaphoreBackwards {
                current: 1,
                requested: 1
            })
        );
        t.signal(5).unwrap();
        assert_eq!(t.query(), Ok(5));
        t.fail(7);
        t.fail(9);
        assert_eq!(t.query(), Err(Error::SemaphoreFailed { code: 7 }));
        assert_eq!(t.reached(1), Err(Error::SemaphoreFailed { code: 7 }));
        assert!(t.signal(6).is_err());
    }
}
