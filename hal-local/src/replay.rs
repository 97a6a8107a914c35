//! Replaying a command list: the local driver executes each command in order, inline.

use crate::alloc::DeviceAllocator;
use crate::kernel::{Binding, Entry, Workgroup};
#[cfg(feature = "exclusive")]
use crate::kernel::{Bytes, Exclusive, ExclusiveFn, Tiler, Writes};
use crate::mapping::read_only;
#[cfg(feature = "exclusive")]
use crate::memory::RawSpan;
use crate::types::LocalDevice;
use hal_core::command::{
    dispatch_constants, dispatch_payload, dispatch_spans, BufferRef, Command, ConstantScratch, Op,
    Ops, Workgroups, MAX_BINDINGS, MAX_WORKGROUP_COUNT,
};
use hal_core::memory::{BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, CommandBuffer, Error, Executable, Record};

/// The error a replay gets for a command of another kind (never: `execute` picks the replay
/// by the command's kind).
fn wrong_kind() -> Error {
    Error::Internal("replay called for another command kind")
}

fn replay_fill<A: DeviceAllocator>(
    dev: &LocalDevice<'_, A>,
    slots: &[Command],
    table: &[BufferSpan],
) -> Result<usize, Error> {
    let Some(&Command::Fill {
        target,
        pattern,
        pattern_len,
    }) = slots.first()
    else {
        return Err(wrong_kind());
    };
    let target = target.resolve_in(
        table,
        &*dev.buffers,
        "fill",
        BufferUsage::TRANSFER_TARGET,
        MemoryAccess::WRITE,
    )?;
    let pattern = pattern
        .get(..pattern_len as usize)
        .ok_or(Error::InvalidArgument(
            "fill pattern must be 1, 2 or 4 bytes",
        ))?;
    dev.fill_span(target, pattern)?;
    Ok(1)
}

fn replay_update<A: DeviceAllocator>(
    dev: &LocalDevice<'_, A>,
    slots: &[Command],
    table: &[BufferSpan],
) -> Result<usize, Error> {
    // The data slots follow: `Ops` knows how many.
    let mut ops = Ops::new(slots);
    let Some(Op::Update { target, data }) = ops.next() else {
        return Err(wrong_kind());
    };
    let target = target.resolve_in(
        table,
        &*dev.buffers,
        "update",
        BufferUsage::TRANSFER_TARGET,
        MemoryAccess::WRITE,
    )?;
    let mut at = 0;
    for piece in data.pieces() {
        let span = BufferSpan::new(target.buffer, target.offset + at, piece.len() as u64);
        dev.write_span(span, piece)?;
        at += piece.len() as u64;
    }
    Ok(slots.len() - ops.rest().len())
}

fn replay_copy<A: DeviceAllocator>(
    dev: &LocalDevice<'_, A>,
    slots: &[Command],
    table: &[BufferSpan],
) -> Result<usize, Error> {
    let Some(&Command::Copy {
        source,
        target,
        length,
    }) = slots.first()
    else {
        return Err(wrong_kind());
    };
    let source = source.resolve_in(
        table,
        &*dev.buffers,
        "copy source",
        BufferUsage::TRANSFER_SOURCE,
        MemoryAccess::READ,
    )?;
    let target = target.resolve_in(
        table,
        &*dev.buffers,
        "copy target",
        BufferUsage::TRANSFER_TARGET,
        MemoryAccess::WRITE,
    )?;
    dev.copy_spans(source, target, length)?;
    Ok(1)
}

impl<A: DeviceAllocator> LocalDevice<'_, A> {
    /// Runs every command of `command_buffer` with `bindings` as its binding table:
    /// dispatches directly, in this loop; the transfer commands through the
    /// [`Replayers`](crate::types::Replayers) entry their kind registered when it was
    /// recorded.
    ///
    /// The loop matches the stored slots itself rather than decoding each into an [`Op`]
    /// first: a dispatch's fields stay in registers (decoding, then matching the `Op` again,
    /// built every command on the stack and read it back), and each transfer command, rare
    /// in a replay, is decoded by its own registered replay.
    pub(crate) fn execute(
        &self,
        command_buffer: CommandBuffer,
        bindings: &[BufferSpan],
    ) -> Result<(), Error> {
        let cb = self.command_buffers.get(command_buffer)?;
        let start = cb.first_slot;
        let slots = self
            .slots
            .get(start..start + cb.list.len())
            .ok_or(Error::Internal("command slots outside the pool"))?;
        let mut rest = cb.list.ops(slots).rest();
        while let Some((first, tail)) = rest.split_first() {
            rest = match *first {
                Command::Dispatch {
                    executable,
                    workgroups,
                    bindings: binding_count,
                    constants,
                } => {
                    let (refs, constant_slots, after) =
                        dispatch_payload(tail, binding_count, constants);
                    self.dispatch(
                        executable,
                        workgroups,
                        refs,
                        constant_slots,
                        constants,
                        bindings,
                    )?;
                    after
                }
                // Barriers, and payload slots (never reached: their command consumes them).
                Command::Barrier
                | Command::Bindings { .. }
                | Command::Constants(_)
                | Command::Data(_) => tail,
                Command::Fill { .. } | Command::Update { .. } | Command::Copy { .. } => {
                    self.replay_transfer(rest, bindings)?
                }
            };
        }
        Ok(())
    }

    /// Replays the transfer command that starts `slots` through the entry its kind
    /// registered when it was recorded; returns the slots after it (and its payload). Out of
    /// line: a call in the loop would tie up registers the dispatches need.
    #[inline(never)]
    fn replay_transfer<'s>(
        &self,
        slots: &'s [Command],
        table: &[BufferSpan],
    ) -> Result<&'s [Command], Error> {
        let replay = match slots.first() {
            Some(Command::Fill { .. }) => self.replayers.fill,
            Some(Command::Update { .. }) => self.replayers.update,
            Some(Command::Copy { .. }) => self.replayers.copy,
            _ => None,
        };
        // Recording registers its kind first, so a recorded command always has one.
        let replay = replay.ok_or(Error::Internal(
            "no replay registered for a recorded command",
        ))?;
        let used = replay(self, slots, table)?;
        Ok(slots.get(used..).unwrap_or(&[]))
    }

    /// Registers the replay of `record`'s kind, so [`execute`](Self::execute) can run it.
    /// Always inlined: where the caller's `record` is a known kind (firmware recording a
    /// dispatch), the match folds and only that kind's replay is linked.
    #[inline(always)]
    pub(crate) fn register_replay(&mut self, record: &Record<'_>) {
        let r = &mut self.replayers;
        match record {
            Record::Fill { .. } => r.fill = Some(replay_fill::<A>),
            Record::Update { .. } => r.update = Some(replay_update::<A>),
            Record::Copy { .. } => r.copy = Some(replay_copy::<A>),
            // Dispatches are replayed directly (see `execute`).
            Record::Dispatch { .. } | Record::Barrier => {}
        }
    }

    /// Host write through the device's memory (the local driver's memory is the host's).
    pub(crate) fn write_span(&self, span: BufferSpan, data: &[u8]) -> Result<(), Error> {
        self.for_each_piece(span, "write", &mut |raw, at| {
            // SAFETY: the only view of these bytes, dropped before the next piece; `data` is
            // caller memory (a mapping would need `&mut` on the device, which callers hold).
            let bytes = unsafe { raw.bytes_mut() }.ok_or_else(read_only)?;
            let at = at as usize;
            let source = data.get(at..at + bytes.len()).ok_or(Error::OutOfRange {
                what: "write data",
                offset: at as u64,
                length: bytes.len() as u64,
                size: data.len() as u64,
            })?;
            bytes.copy_from_slice(source);
            Ok(())
        })
    }

    fn read_indirect(&self, params: BufferRef, table: &[BufferSpan]) -> Result<[u32; 3], Error> {
        let span = params.resolve(table)?;
        let (raw, info) = self.raw(span.buffer, "indirect dispatch parameters", span.offset, 12)?;
        info.check_indirect_params()?;
        // SAFETY: replay holds the device borrow and no other view of device memory.
        let b = unsafe { raw.bytes() };
        let mut count = [0u32; 3];
        for (i, c) in count.iter_mut().enumerate() {
            let word = b
                .get(i * 4..i * 4 + 4)
                .ok_or(Error::Internal("indirect parameters shorter than 12 bytes"))?;
            *c = u32::from_ne_bytes([word[0], word[1], word[2], word[3]]);
        }
        if let Some(&big) = count.iter().find(|&&c| c > MAX_WORKGROUP_COUNT) {
            return Err(Error::Limit {
                what: "indirect workgroups along one dimension",
                requested: big.into(),
                limit: MAX_WORKGROUP_COUNT.into(),
            });
        }
        Ok(count)
    }

    /// Appends to `bound` (empty) a kernel binding for each of a dispatch's binding slots,
    /// resolved against the submission's binding `table` and checked for dispatch use.
    #[inline(never)]
    fn bind<'d>(
        &'d self,
        refs: &[Command],
        table: &[BufferSpan],
        bound: &mut heapless::Vec<Binding<'d>, MAX_BINDINGS>,
    ) -> Result<(), Error> {
        for span in dispatch_spans(refs, table) {
            let span = span?;
            let (raw, info) =
                self.raw(span.buffer, "dispatch binding", span.offset, span.length)?;
            let raw = if info.check_dispatch_binding()? {
                raw
            } else {
                raw.read_only()
            };
            // SAFETY: these bindings are the only views of device memory until the dispatch
            // returns (replay makes no other slice meanwhile).
            let _ = bound.push(unsafe { raw.binding() });
        }
        Ok(())
    }

    #[cfg(feature = "exclusive")]
    /// Runs a dispatch of an [`Entry::Exclusive`] kernel: its bindings as plain slices, the
    /// one it `writes` writable unless it overlaps another; every workgroup in turn on this
    /// thread (its output tiles perhaps on the worker pool).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn dispatch_exclusive(
        &self,
        entry: ExclusiveFn,
        writes: Writes,
        count: [u32; 3],
        refs: &[Command],
        constant_slots: &[Command],
        constant_count: u8,
        table: &[BufferSpan],
    ) -> Result<(), Error> {
        let mut scratch = ConstantScratch::new();
        let constants = dispatch_constants(constant_slots, constant_count, &mut scratch);
        // A plain array and one count in a register (a length kept in memory and bumped
        // per binding would make each step wait on the last).
        let mut raws = [RawSpan::EMPTY; MAX_BINDINGS];
        let mut bound = 0;
        for (raw, span) in raws.iter_mut().zip(dispatch_spans(refs, table)) {
            let (span, writable) = self.dispatch_raw(span?)?;
            *raw = if writable { span } else { span.read_only() };
            bound += 1;
        }
        let raws = &raws[..bound];
        let written = match writes {
            Writes::Binding(n) => usize::from(n),
            Writes::Last => bound.wrapping_sub(1),
        };
        // The written binding is writable only if it shares no byte with another (an op
        // that reads the tensor it writes), so its slice is always the only view.
        let writable = raws.get(written).is_some_and(|out| {
            out.is_writable()
                && raws
                    .iter()
                    .enumerate()
                    .all(|(j, other)| j == written || !out.overlaps(other))
        });
        let mut bindings: [Bytes<'_>; MAX_BINDINGS] = core::array::from_fn(|_| Bytes::Read(&[]));
        for (i, (binding, raw)) in bindings.iter_mut().zip(raws).enumerate() {
            // SAFETY: for the rest of this call (which bounds the slices' lifetime) the
            // device is borrowed and makes no other view of device memory; the one
            // writable slice overlaps no other binding (checked above), so it is the only
            // view of its bytes (the kernel may cut it into disjoint `&mut` tiles for the
            // worker pool, in safe code), and the read-only slices are only read.
            *binding = unsafe {
                match (writable && i == written)
                    .then(|| raw.bytes_mut())
                    .flatten()
                {
                    Some(bytes) => Bytes::Write(bytes),
                    None => Bytes::Read(raw.bytes()),
                }
            };
        }
        let bindings = &mut bindings[..bound];
        if count.contains(&0) {
            return Ok(());
        }
        #[cfg(feature = "parallel")]
        let tiler = Tiler::new(self.workers());
        #[cfg(not(feature = "parallel"))]
        let tiler = Tiler::INLINE;
        for z in 0..count[2] {
            for y in 0..count[1] {
                for x in 0..count[0] {
                    let mut workgroup = Exclusive {
                        id: [x, y, z],
                        count,
                        constants,
                        bindings,
                        scratch: &mut [],
                        tiler,
                    };
                    entry(&mut workgroup).map_err(Error::Kernel)?;
                }
            }
        }
        Ok(())
    }

    /// Runs one dispatch. Always inlined: its one caller is the replay loop.
    #[inline(always)]
    fn dispatch(
        &self,
        executable: Executable,
        workgroups: Workgroups,
        refs: &[Command],
        constant_slots: &[Command],
        constant_count: u8,
        table: &[BufferSpan],
    ) -> Result<(), Error> {
        let entry = self.executables.get(executable)?.entry;
        let count = match workgroups {
            Workgroups::Direct(count) => count,
            Workgroups::Indirect(params) => self.read_indirect(params, table)?,
        };
        // Without `exclusive`, `Entry` has one variant.
        #[cfg_attr(
            not(feature = "exclusive"),
            allow(clippy::infallible_destructuring_match)
        )]
        let entry = match entry {
            Entry::Shared(entry) => entry,
            #[cfg(feature = "exclusive")]
            Entry::Exclusive(entry, writes) => {
                return self.dispatch_exclusive(
                    entry,
                    writes,
                    count,
                    refs,
                    constant_slots,
                    constant_count,
                    table,
                )
            }
        };
        // Constants that fit one slot are read in place; more are gathered.
        let mut scratch = ConstantScratch::new();
        let constants = dispatch_constants(constant_slots, constant_count, &mut scratch);
        // Bindings are resolved out of line: a dispatch without any keeps the loop short.
        let mut bound = heapless::Vec::<Binding<'_>, MAX_BINDINGS>::new();
        if !refs.is_empty() {
            self.bind(refs, table, &mut bound)?;
        }
        let bindings = bound.as_slice();
        #[cfg(feature = "parallel")]
        if let Some(workers) = self.workers() {
            let total = u64::from(count[0]) * u64::from(count[1]) * u64::from(count[2]);
            if let (true, Ok(total)) = (total > 1, usize::try_from(total)) {
                let run = |linear: usize| {
                    let linear = linear as u64;
                    let x = linear % u64::from(count[0]);
                    let yz = linear / u64::from(count[0]);
                    let id = [
                        x as u32,
                        (yz % u64::from(count[1])) as u32,
                        (yz / u64::from(count[1])) as u32,
                    ];
                    entry(&Workgroup {
                        id,
                        count,
                        constants,
                        bindings,
                    })
                    .map_err(Error::Kernel)
                };
                return crate::workers::try_fork(workers, total, &run);
            }
        }
        if count[0] == 0 || count[1] == 0 || count[2] == 0 {
            // An indirect grid with an empty dimension: nothing to run.
            return Ok(());
        }
        // One workgroup description, its id stepped in place (x fastest): a single compare
        // per workgroup in the common case, and a one-workgroup dispatch runs straight
        // through.
        let mut workgroup = Workgroup {
            id: [0; 3],
            count,
            constants,
            bindings,
        };
        loop {
            entry(&workgroup).map_err(Error::Kernel)?;
            let id = &mut workgroup.id;
            id[0] += 1;
            if id[0] == count[0] {
                id[0] = 0;
                id[1] += 1;
                if id[1] == count[1] {
                    id[1] = 0;
                    id[2] += 1;
                    if id[2] == count[2] {
                        return Ok(());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::LocalDevice;
    use hal_core::memory::BufferParams;
    use hal_core::{BufferRef, BufferSpan, CommandBufferMode, Device, Record, Submit};

    /// Recording a kind registers its replay, and only its own: the other kinds stay
    /// unlinked (what lets a dispatch-only firmware drop the transfer replays).
    #[test]
    fn recording_registers_only_its_kind() {
        let mut memory = [0u8; 4096];
        let mut storage: crate::LocalStorage<4, 8, 4, 0> = crate::LocalStorage::EMPTY;
        let mut dev =
            LocalDevice::new(&mut storage, &mut memory, crate::LocalConfig::DEFAULT).unwrap();
        let kinds = |d: &LocalDevice<'_, _>| {
            let r = &d.replayers;
            [r.fill.is_some(), r.update.is_some(), r.copy.is_some()]
        };
        assert_eq!(kinds(&dev), [false; 3]);
        let buffer = dev
            .allocate_buffer(BufferParams::host_visible(), 64)
            .unwrap();
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 2, 0)
            .unwrap();
        let target = BufferRef::buffer(buffer);
        dev.record(cb, Record::Barrier).unwrap();
        assert_eq!(kinds(&dev), [false; 3]);
        dev.record(
            cb,
            Record::Fill {
                target,
                pattern: &[9],
            },
        )
        .unwrap();
        assert_eq!(kinds(&dev), [true, false, false]);
        dev.end(cb).unwrap();
        dev.queue_execute(Submit::NOW, cb, &[]).unwrap();
        // A queue operation registers the kind of the command it records.
        dev.queue_update(Submit::NOW, &[1, 2, 3, 4], BufferSpan::new(buffer, 0, 4))
            .unwrap();
        assert_eq!(kinds(&dev), [true, true, false]);
        let mut out = [0u8; 8];
        dev.read_buffer(BufferSpan::new(buffer, 0, 8), &mut out)
            .unwrap();
        assert_eq!(out, [1, 2, 3, 4, 9, 9, 9, 9]);
        dev.release_command_buffer(cb).unwrap();
        dev.release_buffer(buffer).unwrap();
    }
}
