//! The queue every driver shares: semaphores, parked operations, submission checks,
//! readiness, failure propagation and submission order.
//!
//! A queue operation whose waits are all reached runs at once, through its driver
//! ([`QueueDriver::run_command_buffer`] for an execution). One that must wait is parked in a
//! fixed table of [`Queue`] and runs, oldest first, when a host signal (or the completion of
//! other work) reaches its waits. A failed wait fails the operation: what it holds goes back,
//! its signals fail with the same status, and so on down the chain. Only the host and queued
//! work signal semaphores, so a host wait that is not reached once the queue has drained never
//! will be: an error, not a hang.
//!
//! A queue with `PENDING = 0` has no parked-operation table and its parking path folds away:
//! a submission that would have to wait is refused with [`Error::TableFull`], gives back what
//! it holds, and touches none of its signals.
//!
//! The `Device` trait's semaphore and queue methods are built once here, on top of a
//! driver's [`QueueDriver`] (as IREE's `queue_emulation` builds transfers from command
//! buffers); a driver may override any of them.
//!
//! Dependencies point one way: `device` builds on this module, never the reverse. What the
//! queue's operations need of a device beyond its [`QueueDriver`] hooks (releasing a buffer,
//! looking one up, recording a one-shot command buffer) is the [`QueueDevice`] trait, which
//! every `Device` implements (in `device`).

use crate::buffer::{Buffer, BufferInfo, BufferSpan};
use crate::command::{CommandBuffer, CommandBufferMode, CommandList, Record, MAX_BINDING_SLOTS};
use crate::handle::{Table, TableView};
use crate::memory::BufferParams;
use crate::semaphore::{Semaphore, SemaphoreKind, SemaphoreValue, Submit, Timeline, Timeout};
use crate::zeroed::ZeroOption;
use crate::Error;
use core::ops::DerefMut;

/// Most waits or signals one queue operation may carry.
pub const MAX_SUBMIT_SEMAPHORES: usize = 8;

/// What a queue operation does once its waits are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Run a command buffer with the submission's binding table.
    Execute {
        /// The command buffer.
        command_buffer: CommandBuffer,
        /// Release it once it has run (a queue operation's own one-shot buffer).
        release_after: bool,
    },
    /// Free a queue-allocated buffer.
    Dealloca(Buffer),
    /// Nothing but the signals (a queue-ordered allocation whose memory is already there).
    Signal,
}

/// A parked queue operation: its waits, signals, action and binding table, copied.
#[derive(Clone, Copy)]
pub struct Parked {
    seq: u64,
    waits: [SemaphoreValue; MAX_SUBMIT_SEMAPHORES],
    wait_count: u8,
    signals: [SemaphoreValue; MAX_SUBMIT_SEMAPHORES],
    signal_count: u8,
    action: Action,
    bindings: [BufferSpan; MAX_BINDING_SLOTS as usize],
    bound: u8,
}

impl Parked {
    fn waits(&self) -> &[SemaphoreValue] {
        &self.waits[..self.wait_count as usize]
    }

    fn signals(&self) -> &[SemaphoreValue] {
        &self.signals[..self.signal_count as usize]
    }

    fn bindings(&self) -> &[BufferSpan] {
        &self.bindings[..self.bound as usize]
    }
}

/// Whether a set of waits can go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Every wait is reached.
    Ready,
    /// Some wait is not reached yet.
    Blocked,
    /// A waited semaphore failed (or is gone) with this status.
    Failed(u32),
}

/// A parked operation's place in a queue: `None` (all zero bytes) while free.
pub type ParkedSlot = ZeroOption<Parked>;

/// The queue's state over its storage: a table of timelines `S` and room for parked
/// operations `P`, owned by a [`Queue`] (its capacities in its type) or borrowed by a
/// [`QueueView`] (from storage the driver was given).
pub struct QueueOf<S, P> {
    semaphores: S,
    parked: P,
    parked_count: usize,
    next_seq: u64,
}

/// A queue that owns a table of `SEMAPHORES` timelines and room for `PENDING` parked
/// operations. [`Queue::EMPTY`] is all zero bytes, so a device in a `static` keeps it in
/// `.bss`.
pub type Queue<const SEMAPHORES: usize, const PENDING: usize> =
    QueueOf<Table<SemaphoreKind, Timeline, SEMAPHORES>, [ParkedSlot; PENDING]>;

/// A queue over borrowed storage, whatever its capacities.
pub type QueueView<'a> = QueueOf<&'a mut TableView<SemaphoreKind, Timeline>, &'a mut [ParkedSlot]>;

impl<const SEMAPHORES: usize, const PENDING: usize> Queue<SEMAPHORES, PENDING> {
    /// No semaphores, nothing parked.
    pub const EMPTY: Self = Self {
        semaphores: Table::new(),
        parked: [const { ZeroOption::None }; PENDING],
        parked_count: 0,
        next_seq: 0,
    };
}

impl<const SEMAPHORES: usize, const PENDING: usize> Default for Queue<SEMAPHORES, PENDING> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<'a> QueueView<'a> {
    /// A queue over `semaphores` and `parked`, both empty (a semaphore found there stays
    /// reachable by its handle; an operation found parked there never runs, and its place is
    /// never free).
    pub fn over(
        semaphores: &'a mut TableView<SemaphoreKind, Timeline>,
        parked: &'a mut [ParkedSlot],
    ) -> Self {
        Self {
            semaphores,
            parked,
            parked_count: 0,
            next_seq: 0,
        }
    }
}

/// The queue state a driver keeps, whatever its capacities ([`Queue`] is the one
/// implementation).
pub trait QueueState {
    /// A live semaphore's timeline.
    fn timeline(&self, semaphore: Semaphore) -> Result<&Timeline, Error>;
    /// A live semaphore's timeline, mutably.
    fn timeline_mut(&mut self, semaphore: Semaphore) -> Result<&mut Timeline, Error>;
    /// A new semaphore.
    fn insert_timeline(&mut self, timeline: Timeline) -> Result<Semaphore, Error>;
    /// Removes a semaphore.
    fn remove_timeline(&mut self, semaphore: Semaphore) -> Result<Timeline, Error>;
    /// Live semaphores.
    fn semaphore_count(&self) -> usize;
    /// Operations parked.
    fn parked_count(&self) -> usize;
    /// Whether an operation can be parked now.
    fn has_room(&self) -> bool;
    /// Parks an operation ([`Error::TableFull`] when there is no room).
    fn park(&mut self, op: Parked) -> Result<(), Error>;
    /// Takes out the oldest parked operation whose waits are reached or failed.
    fn take_unblocked(&mut self) -> Option<(Parked, Readiness)>;
    /// The next submission number.
    fn next_seq(&mut self) -> u64;

    /// Whether `waits` can go now.
    #[inline(always)]
    fn readiness(&self, waits: &[SemaphoreValue]) -> Readiness {
        let mut ready = true;
        for wait in waits {
            match self
                .timeline(wait.semaphore)
                .and_then(|t| t.reached(wait.value))
            {
                Ok(true) => {}
                Ok(false) => ready = false,
                Err(e) => return Readiness::Failed(e.status_code()),
            }
        }
        if ready {
            Readiness::Ready
        } else {
            Readiness::Blocked
        }
    }

    /// Checks a submission's lists before anything happens: sizes, live semaphores, and
    /// signals that move forward.
    fn check_submit(&self, submit: &Submit<'_>) -> Result<(), Error> {
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
            self.timeline(wait.semaphore)?;
        }
        for signal in submit.signals {
            if let Ok(current) = self.timeline(signal.semaphore)?.query() {
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

    /// [`Error::TableFull`] if an operation with these waits would have to park and there is
    /// no room (checked before anything is committed).
    fn ensure_room(&self, submit: &Submit<'_>) -> Result<(), Error> {
        if !self.has_room() && self.readiness(submit.waits) == Readiness::Blocked {
            return Err(self.full());
        }
        Ok(())
    }

    /// The error a full parked-operation table gives.
    fn full(&self) -> Error;

    /// Signals (or, given an error, fails) every semaphore in `signals`.
    #[inline(always)]
    fn complete(&mut self, signals: &[SemaphoreValue], result: Result<(), Error>) {
        for signal in signals {
            if let Ok(timeline) = self.timeline_mut(signal.semaphore) {
                match &result {
                    // A value overtaken by a host signal since submit is left as is.
                    Ok(()) => {
                        let _ = timeline.signal(signal.value);
                    }
                    Err(e) => timeline.fail(e.status_code()),
                }
            }
        }
    }

    /// After the queue has drained: whether every wait is reached, or the error a host wait
    /// gets (nothing else can signal, so an unreached infinite wait never will be).
    fn check_reached(&self, waits: &[SemaphoreValue], timeout: Timeout) -> Result<(), Error> {
        for wait in waits {
            let timeline = self.timeline(wait.semaphore)?;
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
}

impl<S, P> QueueState for QueueOf<S, P>
where
    S: DerefMut<Target = TableView<SemaphoreKind, Timeline>>,
    P: AsRef<[ParkedSlot]> + AsMut<[ParkedSlot]>,
{
    #[inline]
    fn timeline(&self, semaphore: Semaphore) -> Result<&Timeline, Error> {
        self.semaphores.get(semaphore)
    }

    #[inline]
    fn timeline_mut(&mut self, semaphore: Semaphore) -> Result<&mut Timeline, Error> {
        self.semaphores.get_mut(semaphore)
    }

    fn insert_timeline(&mut self, timeline: Timeline) -> Result<Semaphore, Error> {
        self.semaphores.insert(timeline)
    }

    fn remove_timeline(&mut self, semaphore: Semaphore) -> Result<Timeline, Error> {
        self.semaphores.remove(semaphore)
    }

    fn semaphore_count(&self) -> usize {
        self.semaphores.len()
    }

    #[inline]
    fn parked_count(&self) -> usize {
        self.parked_count
    }

    #[inline]
    fn has_room(&self) -> bool {
        self.parked_count < self.parked.as_ref().len()
    }

    fn full(&self) -> Error {
        Error::TableFull {
            table: "pending queue operation",
            capacity: self.parked.as_ref().len() as u32,
        }
    }

    fn park(&mut self, op: Parked) -> Result<(), Error> {
        let free = self.parked.as_mut().iter_mut().find(|p| p.is_none());
        let Some(slot) = free else {
            return Err(self.full());
        };
        *slot = ZeroOption::Some(op);
        self.parked_count += 1;
        Ok(())
    }

    fn take_unblocked(&mut self) -> Option<(Parked, Readiness)> {
        if self.parked_count == 0 {
            return None;
        }
        let mut next: Option<(usize, u64, Readiness)> = None;
        for (i, p) in self.parked.as_ref().iter().enumerate() {
            let Some(p) = p.as_ref() else { continue };
            match self.readiness(p.waits()) {
                Readiness::Blocked => {}
                r => {
                    if next.as_ref().is_none_or(|(_, seq, _)| p.seq < *seq) {
                        next = Some((i, p.seq, r));
                    }
                }
            }
        }
        let (index, _, readiness) = next?;
        let op = self.parked.as_mut().get_mut(index)?.take()?;
        self.parked_count -= 1;
        Some((op, readiness))
    }

    #[inline]
    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }
}

/// What only a driver can do for the shared queue: run a command buffer, free one, allocate
/// queue-ordered memory; and where it keeps its [`Queue`] and its command lists.
pub trait QueueDriver {
    /// The driver's queue state (a [`Queue`] of its capacities).
    type Queue: QueueState;

    /// Its queue state.
    fn queue(&self) -> &Self::Queue;
    /// Its queue state, mutably.
    fn queue_mut(&mut self) -> &mut Self::Queue;
    /// A live command buffer's list (state, binding capacity, pending uses).
    fn command_list(&mut self, command_buffer: CommandBuffer) -> Result<&mut CommandList, Error>;
    /// Runs a command buffer now with `table` as its binding table (checked by the caller:
    /// every entry names a live buffer and lies inside it).
    fn run_command_buffer(
        &mut self,
        command_buffer: CommandBuffer,
        table: &[BufferSpan],
    ) -> Result<(), Error>;
    /// Frees a command buffer no queued operation will run.
    fn free_command_buffer(&mut self, command_buffer: CommandBuffer) -> Result<(), Error>;
    /// Allocates the memory of a `queue_alloca` (transient memory where the driver keeps it
    /// apart from the general heap).
    fn allocate_queue_ordered(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error>;

    /// Called once `signals` were reached by queue work that ran (in queue order). A driver
    /// whose work completes after it is submitted notes here what a host wait on them must
    /// wait for; the default does nothing.
    #[inline(always)]
    fn signalled(&mut self, _signals: &[SemaphoreValue]) {}

    /// Runs the parked operations that are now unblocked ([`drain`], the default). A driver
    /// that knows it can never park (a queue with no room for parked operations) may skip
    /// it, so its firmware links no parked-operation path.
    #[inline]
    fn drain_unblocked(&mut self)
    where
        Self: QueueDevice,
    {
        drain(self)
    }

    /// Parks an operation whose waits are not reached ([`park`], the default). A driver that
    /// knows it can never park may [`refuse`] it at once instead, for the same reason as in
    /// [`drain_unblocked`](Self::drain_unblocked).
    #[inline]
    fn park_blocked(
        &mut self,
        submit: Submit<'_>,
        action: Action,
        table: &[BufferSpan],
    ) -> Result<(), Error>
    where
        Self: QueueDevice,
    {
        park(self, submit, action, table)
    }
}

/// What the queue's operations need of a device beyond its [`QueueDriver`] hooks: a few
/// buffer and command-buffer calls of the `Device` trait. Every `Device` implements it, each
/// method being the `Device` method of the same name (the blanket impl is in `device`, so
/// this module names no `Device` and `device` builds on it).
pub trait QueueDevice: QueueDriver + Sized {
    /// Releases a buffer (a queue-ordered deallocation, or one abandoned).
    fn release_buffer(&mut self, buffer: Buffer) -> Result<(), Error>;
    /// What the buffer is (to check a binding table's entries).
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error>;
    /// A command buffer (a queue operation's own one-shot one).
    fn create_command_buffer(
        &mut self,
        mode: CommandBufferMode,
        capacity: u32,
        binding_capacity: u16,
    ) -> Result<CommandBuffer, Error>;
    /// Validates and appends one command.
    fn record(&mut self, command_buffer: CommandBuffer, record: Record<'_>) -> Result<(), Error>;
    /// Ends recording.
    fn end(&mut self, command_buffer: CommandBuffer) -> Result<(), Error>;
}

/// Runs what `action` does.
fn run<D: QueueDevice>(dev: &mut D, action: Action, table: &[BufferSpan]) -> Result<(), Error> {
    match action {
        Action::Execute {
            command_buffer,
            release_after,
        } => {
            let result = dev.run_command_buffer(command_buffer, table);
            if release_after {
                let _ = dev.free_command_buffer(command_buffer);
            }
            result
        }
        Action::Dealloca(buffer) => dev.release_buffer(buffer),
        Action::Signal => Ok(()),
    }
}

/// An action that will never run still gives back what it holds.
fn abandon<D: QueueDevice>(dev: &mut D, action: Action) {
    match action {
        Action::Execute {
            command_buffer,
            release_after: true,
        } => {
            let _ = dev.free_command_buffer(command_buffer);
        }
        Action::Dealloca(buffer) => {
            let _ = dev.release_buffer(buffer);
        }
        _ => {}
    }
}

/// Runs `action` now if the waits allow (and returns what it returned), or parks it.
pub fn submit_action<D: QueueDevice>(
    dev: &mut D,
    submit: Submit<'_>,
    action: Action,
) -> Result<(), Error> {
    dev.queue().check_submit(&submit)?;
    submit_checked(dev, submit, action, &[])
}

/// [`submit_action`] for a submission whose lists [`QueueState::check_submit`] already accepted.
/// `table` is the binding table of an `Execute` (empty otherwise).
pub fn submit_checked<D: QueueDevice>(
    dev: &mut D,
    submit: Submit<'_>,
    action: Action,
    table: &[BufferSpan],
) -> Result<(), Error> {
    match dev.queue().readiness(submit.waits) {
        Readiness::Ready => {
            let result = run(dev, action, table);
            complete(dev, submit.signals, result);
            dev.drain_unblocked();
            result
        }
        Readiness::Failed(code) => {
            abandon(dev, action);
            finish(dev, submit.signals, Err(Error::SemaphoreFailed { code }));
            Ok(())
        }
        Readiness::Blocked => dev.park_blocked(submit, action, table),
    }
}

/// Refuses an operation that cannot be parked: what it holds goes back (a queue
/// operation's own one-shot command buffer, a buffer to free), its signals are untouched.
/// Returns the queue's [`Error::TableFull`].
pub fn refuse<D: QueueDevice>(dev: &mut D, action: Action) -> Error {
    abandon(dev, action);
    dev.queue().full()
}

/// Parks an operation until its waits are reached, with a copy of its binding `table`; it
/// is [`refuse`]d when the queue has no room. Out of line: the copy of the table is a large
/// frame that callers running ready work must not carry on their stack.
#[inline(never)]
#[cold]
pub fn park<D: QueueDevice>(
    dev: &mut D,
    submit: Submit<'_>,
    action: Action,
    table: &[BufferSpan],
) -> Result<(), Error> {
    if !dev.queue().has_room() {
        return Err(refuse(dev, action));
    }
    if let Action::Execute { command_buffer, .. } = action {
        dev.command_list(command_buffer)?.add_pending_use();
    }
    let bound = table.len().min(MAX_BINDING_SLOTS as usize);
    let mut bindings =
        [BufferSpan::whole(Buffer::from_parts(u32::MAX, 0)); MAX_BINDING_SLOTS as usize];
    bindings[..bound].copy_from_slice(&table[..bound]);
    let op = Parked {
        seq: dev.queue_mut().next_seq(),
        waits: copy_list(submit.waits),
        wait_count: submit.waits.len() as u8,
        signals: copy_list(submit.signals),
        signal_count: submit.signals.len() as u8,
        action,
        bindings,
        bound: bound as u8,
    };
    dev.queue_mut()
        .park(op)
        .inspect_err(|_| abandon(dev, action))
}

fn copy_list(list: &[SemaphoreValue]) -> [SemaphoreValue; MAX_SUBMIT_SEMAPHORES] {
    let mut out =
        [SemaphoreValue::new(Semaphore::from_parts(u32::MAX, 0), 0); MAX_SUBMIT_SEMAPHORES];
    let n = list.len().min(MAX_SUBMIT_SEMAPHORES);
    out[..n].copy_from_slice(&list[..n]);
    out
}

/// Runs parked operations whose waits are now reached (or failed), oldest first, until none
/// can go.
pub fn drain<D: QueueDevice>(dev: &mut D) {
    while let Some((op, readiness)) = dev.queue_mut().take_unblocked() {
        let result = match readiness {
            Readiness::Failed(code) => {
                abandon(dev, op.action);
                Err(Error::SemaphoreFailed { code })
            }
            _ => run(dev, op.action, op.bindings()),
        };
        // Only now may a command buffer released while this use was parked go.
        if let Action::Execute { command_buffer, .. } = op.action {
            let idle_release = dev
                .command_list(command_buffer)
                .is_ok_and(|list| list.finish_pending_use());
            if idle_release {
                let _ = dev.free_command_buffer(command_buffer);
            }
        }
        complete(dev, op.signals(), result);
    }
}

/// Completes `signals` with `result`, telling the driver which were reached.
#[inline(always)]
fn complete<D: QueueDevice>(dev: &mut D, signals: &[SemaphoreValue], result: Result<(), Error>) {
    dev.queue_mut().complete(signals, result);
    if result.is_ok() {
        dev.signalled(signals);
    }
}

/// Completes `signals` with `result`, then runs what that unblocked.
pub fn finish<D: QueueDevice>(dev: &mut D, signals: &[SemaphoreValue], result: Result<(), Error>) {
    complete(dev, signals, result);
    dev.drain_unblocked();
}

/// Waits of a host-synchronous operation (a streaming read): they must be reached now. A
/// failed wait fails the signals and is returned.
pub fn require_reached<D: QueueDevice>(dev: &mut D, submit: &Submit<'_>) -> Result<(), Error> {
    dev.queue().check_submit(submit)?;
    match dev.queue().readiness(submit.waits) {
        Readiness::Ready => Ok(()),
        Readiness::Failed(code) => {
            let e = Error::SemaphoreFailed { code };
            finish(dev, submit.signals, Err(e));
            Err(e)
        }
        Readiness::Blocked => Err(Error::Unsupported(
            "a streaming read's waits must be reached when it is submitted",
        )),
    }
}

/// Submits a command buffer with a binding table: checks the table and the submission, makes
/// sure it can park if it must, then runs or parks it.
pub fn submit_execute<D: QueueDevice>(
    dev: &mut D,
    submit: Submit<'_>,
    command_buffer: CommandBuffer,
    table: &[BufferSpan],
    release_after: bool,
) -> Result<(), Error> {
    if table.len() > MAX_BINDING_SLOTS as usize {
        return Err(Error::Limit {
            what: "binding table entries",
            requested: table.len() as u64,
            limit: MAX_BINDING_SLOTS.into(),
        });
    }
    dev.queue().check_submit(&submit)?;
    for entry in table {
        let info = dev.buffer_info(entry.buffer)?;
        info.resolve("binding table entry", entry.offset, entry.length)?;
    }
    dev.queue().ensure_room(&submit)?;
    dev.command_list(command_buffer)?
        .begin_submit(table.len())?;
    submit_checked(
        dev,
        submit,
        Action::Execute {
            command_buffer,
            release_after,
        },
        table,
    )
}

/// Records `record` into a one-shot command buffer of `capacity` slots and submits it,
/// releasing it once it has run (or when it is refused).
pub fn submit_one_shot<D: QueueDevice>(
    dev: &mut D,
    submit: Submit<'_>,
    capacity: u32,
    record: Record<'_>,
) -> Result<(), Error> {
    let cb = dev.create_command_buffer(CommandBufferMode::OneShot, capacity, 0)?;
    let recorded = dev.record(cb, record).and_then(|()| dev.end(cb));
    if let Err(e) = recorded {
        let _ = dev.free_command_buffer(cb);
        return Err(e);
    }
    let submitted = submit_execute(dev, submit, cb, &[], true);
    if submitted.is_err() {
        // Refused before it was queued; if it ran and failed it is gone already (the
        // generation check makes this a no-op then).
        let _ = dev.free_command_buffer(cb);
    }
    submitted
}
