//! The queue: inline execution in submission order, and work parked until its waits are
//! reached.
//!
//! An operation whose waits are all reached runs at once, on the caller's thread. One that
//! must wait is parked in a fixed table and runs when a host signal (or the completion of
//! other work) reaches its waits. A failed wait fails the operation: its signals fail with
//! the same status, and so on down the chain. Nothing else can signal a semaphore on this
//! driver, so a host wait that is not reached now never will be: it is an error, not a hang.
//!
//! A device with `PENDING = 0` has no parked-operation table, and its code is not linked
//! (`drain` and the parking path fold away): a submission that would have to wait is refused
//! with [`Error::TableFull`], gives back what it holds, and touches none of its signals.

use crate::alloc::DeviceAllocator;
use crate::device::LocalDevice;
use hal_core::command::{CommandBuffer, MAX_BINDING_SLOTS};
use hal_core::zeroed::ZeroOption;
use hal_core::{Buffer, BufferSpan, Error, SemaphoreValue, Submit, Timeout};

/// Most waits or signals one queue operation may carry.
pub const MAX_SUBMIT_SEMAPHORES: usize = 8;

#[derive(Clone, Copy)]
pub(crate) enum Action {
    /// Run a command buffer with a binding table.
    Execute {
        command_buffer: CommandBuffer,
        release_after: bool,
    },
    /// Free a queue-allocated buffer.
    Dealloca(Buffer),
    /// Nothing but the signals (a queue-ordered allocation whose memory is already there).
    Signal,
}

/// A parked queue operation.
#[derive(Clone, Copy)]
pub(crate) struct Pending {
    seq: u64,
    waits: [SemaphoreValue; MAX_SUBMIT_SEMAPHORES],
    wait_count: u8,
    signals: [SemaphoreValue; MAX_SUBMIT_SEMAPHORES],
    signal_count: u8,
    action: Action,
    /// The binding table of a parked `Execute`.
    bindings: [BufferSpan; MAX_BINDING_SLOTS as usize],
    bound: u8,
}

/// Whether a set of waits can go.
enum Readiness {
    Ready,
    Blocked,
    Failed(u32),
}

/// The status code a failure propagates with.
pub(crate) fn failure_code(error: &Error) -> u32 {
    match error {
        Error::SemaphoreFailed { code } => *code,
        Error::Driver { code, .. } => u32::try_from(*code).unwrap_or(u32::MAX),
        _ => 1,
    }
}

fn copy_list(list: &[SemaphoreValue]) -> [SemaphoreValue; MAX_SUBMIT_SEMAPHORES] {
    let mut out = [SemaphoreValue::new(hal_core::Semaphore::from_parts(u32::MAX, 0), 0);
        MAX_SUBMIT_SEMAPHORES];
    out[..list.len()].copy_from_slice(list);
    out
}

impl<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator,
    > LocalDevice<'_, OBJECTS, SLOTS, NODES, PENDING, A>
{
    /// Checks a submission's lists before anything happens: sizes, live semaphores, and
    /// signals that move forward.
    pub(crate) fn check_submit(&self, submit: &Submit<'_>) -> Result<(), Error> {
        for (what, list) in [("waits", submit.waits), ("signals", submit.signals)] {
            if list.len() > MAX_SUBMIT_SEMAPHORES {
                return Err(Error::Limit {
                    what,
                    requested: list.len() as u64,
                    limit: MAX_SUBMIT_SEMAPHORES as u64,
                });
            }
        }
        for wait in submit.waits {
            self.semaphores.get(wait.semaphore)?;
        }
        for signal in submit.signals {
            let timeline = self.semaphores.get(signal.semaphore)?;
            if let Ok(current) = timeline.query() {
                if signal.value <= current {
                    return Err(Error::SemaphoreBackwards {
                        current,
                        requested: signal.value,
                    });
                }
            }
        }
        Ok(())
    }

    fn readiness(&self, waits: &[SemaphoreValue]) -> Readiness {
        let mut ready = true;
        for wait in waits {
            match self
                .semaphores
                .get(wait.semaphore)
                .map(|t| t.reached(wait.value))
            {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) => ready = false,
                Ok(Err(e)) | Err(e) => return Readiness::Failed(failure_code(&e)),
            }
        }
        if ready {
            Readiness::Ready
        } else {
            Readiness::Blocked
        }
    }

    /// [`Error::TableFull`] if an operation with these waits would have to park and the
    /// pending table has no room (checked before anything is committed).
    pub(crate) fn ensure_pending_room(&self, submit: &Submit<'_>) -> Result<(), Error> {
        if self.pending_count >= PENDING
            && matches!(self.readiness(submit.waits), Readiness::Blocked)
        {
            return Err(Error::TableFull {
                table: "pending queue operation",
                capacity: PENDING as u32,
            });
        }
        Ok(())
    }

    /// Signals (or, given an error, fails) every semaphore in `signals`.
    pub(crate) fn complete(&mut self, signals: &[SemaphoreValue], result: Result<(), Error>) {
        for signal in signals {
            if let Ok(timeline) = self.semaphores.get_mut(signal.semaphore) {
                match &result {
                    Ok(()) => {
                        // A value overtaken by a host signal since submit is left as is.
                        let _ = timeline.signal(signal.value);
                    }
                    Err(e) => timeline.fail(failure_code(e)),
                }
            }
        }
    }

    /// Runs `action` now if the waits allow (and returns what it returned), or parks it.
    pub(crate) fn submit_action(
        &mut self,
        submit: Submit<'_>,
        action: Action,
    ) -> Result<(), Error> {
        self.check_submit(&submit)?;
        self.submit_checked(submit, action, &[])
    }

    /// [`Self::submit_action`] for a submission [`Self::check_submit`] already accepted.
    /// `table` is the binding table of an `Execute` (empty otherwise).
    pub(crate) fn submit_checked(
        &mut self,
        submit: Submit<'_>,
        action: Action,
        table: &[BufferSpan],
    ) -> Result<(), Error> {
        match self.readiness(submit.waits) {
            Readiness::Ready => {
                let result = self.run_action(action, table);
                self.complete(submit.signals, result);
                self.drain();
                result
            }
            Readiness::Failed(code) => {
                self.abandon(action);
                self.complete(submit.signals, Err(Error::SemaphoreFailed { code }));
                self.drain();
                Ok(())
            }
            Readiness::Blocked => {
                let free = if PENDING == 0 {
                    None
                } else {
                    self.pending.iter_mut().find(|p| p.is_none())
                };
                let Some(slot) = free else {
                    // Refused: what the operation holds goes back (a queue op's own
                    // one-shot command buffer, a buffer to free).
                    self.abandon(action);
                    return Err(Error::TableFull {
                        table: "pending queue operation",
                        capacity: PENDING as u32,
                    });
                };
                *slot = ZeroOption::Some(Pending {
                    seq: self.next_seq,
                    waits: copy_list(submit.waits),
                    wait_count: submit.waits.len() as u8,
                    signals: copy_list(submit.signals),
                    signal_count: submit.signals.len() as u8,
                    action,
                    bindings: {
                        let mut b = [BufferSpan::whole(hal_core::Buffer::from_parts(u32::MAX, 0));
                            MAX_BINDING_SLOTS as usize];
                        let n = table.len().min(b.len());
                        b[..n].copy_from_slice(&table[..n]);
                        b
                    },
                    bound: table.len() as u8,
                });
                self.next_seq += 1;
                self.pending_count += 1;
                if let Action::Execute { command_buffer, .. } = action {
                    if let Ok(cb) = self.command_buffers.get_mut(command_buffer) {
                        cb.pending_uses += 1;
                    }
                }
                Ok(())
            }
        }
    }

    fn run_action(&mut self, action: Action, table: &[BufferSpan]) -> Result<(), Error> {
        match action {
            Action::Execute {
                command_buffer,
                release_after,
            } => {
                let result = self.execute(command_buffer, table);
                if release_after {
                    let _ = self.release_command_buffer_now(command_buffer);
                }
                result
            }
            Action::Dealloca(buffer) => self.release(buffer),
            Action::Signal => Ok(()),
        }
    }

    /// An action that will never run still gives back what it holds.
    fn abandon(&mut self, action: Action) {
        match action {
            Action::Execute {
                command_buffer,
                release_after: true,
                ..
            } => {
                let _ = self.release_command_buffer_now(command_buffer);
            }
            Action::Dealloca(buffer) => {
                let _ = self.release(buffer);
            }
            _ => {}
        }
    }

    /// Runs parked operations whose waits are now reached (or failed), oldest first, until
    /// none can go.
    pub(crate) fn drain(&mut self) {
        if PENDING == 0 {
            return;
        }
        while self.pending_count > 0 {
            let mut next: Option<(usize, u64, Readiness)> = None;
            for (i, p) in self.pending.iter().enumerate() {
                let Some(p) = p.as_ref() else { continue };
                match self.readiness(&p.waits[..p.wait_count as usize]) {
                    Readiness::Blocked => {}
                    r => {
                        if next.as_ref().is_none_or(|(_, seq, _)| p.seq < *seq) {
                            next = Some((i, p.seq, r));
                        }
                    }
                }
            }
            let Some((index, _, readiness)) = next else {
                return;
            };
            let Some(op) = self.pending[index].take() else {
                return;
            };
            self.pending_count -= 1;
            let signals = &op.signals[..op.signal_count as usize];
            let result = match readiness {
                Readiness::Failed(code) => {
                    self.abandon(op.action);
                    Err(Error::SemaphoreFailed { code })
                }
                _ => self.run_action(op.action, &op.bindings[..op.bound as usize]),
            };
            // Only now may a command buffer released while this use was parked go.
            if let Action::Execute { command_buffer, .. } = op.action {
                self.finish_pending_use(command_buffer);
            }
            self.complete(signals, result);
        }
    }

    fn finish_pending_use(&mut self, command_buffer: CommandBuffer) {
        let idle_release = match self.command_buffers.get_mut(command_buffer) {
            Ok(cb) => {
                cb.pending_uses = cb.pending_uses.saturating_sub(1);
                cb.pending_uses == 0 && cb.release_when_idle
            }
            Err(_) => false,
        };
        if idle_release {
            let _ = self.release_command_buffer_now(command_buffer);
        }
    }

    /// Host wait for every pair in `waits`.
    pub(crate) fn wait_all(
        &mut self,
        waits: &[SemaphoreValue],
        timeout: Timeout,
    ) -> Result<(), Error> {
        self.drain();
        for wait in waits {
            let timeline = self.semaphores.get(wait.semaphore)?;
            if !timeline.reached(wait.value)? {
                return Err(match timeout {
                    Timeout::Infinite => Error::WaitNeverSatisfied {
                        value: wait.value,
                        current: timeline.query()?,
                    },
                    Timeout::Immediate | Timeout::Nanos(_) => Error::Timeout,
                });
            }
        }
        Ok(())
    }

    /// Waits of a host-synchronous operation (a streaming read): they must be reached now.
    pub(crate) fn require_reached(&mut self, submit: &Submit<'_>) -> Result<(), Error> {
        self.check_submit(submit)?;
        match self.readiness(submit.waits) {
            Readiness::Ready => Ok(()),
            Readiness::Failed(code) => {
                let e = Error::SemaphoreFailed { code };
                self.complete(submit.signals, Err(e));
                self.drain();
                Err(e)
            }
            Readiness::Blocked => Err(Error::Unsupported(
                "a streaming read's waits must be reached when it is submitted (local driver)",
            )),
        }
    }
}
