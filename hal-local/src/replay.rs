//! Replaying a command list: the local driver executes each command in order, inline.

use crate::alloc::DeviceAllocator;
use crate::device::{read_only, LocalDevice};
use crate::kernel::{Binding, KernelError, Workgroup};
use hal_core::command::{
    BufferRef, Command, Op, RefTarget, Workgroups, MAX_BINDINGS, MAX_CONSTANTS, MAX_WORKGROUP_COUNT,
};
use hal_core::memory::{BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, CommandBuffer, Error, Executable};

/// The error a kernel's refusal becomes.
pub(crate) fn kernel_error(e: KernelError) -> Error {
    let (what, code) = match e {
        KernelError::MissingBinding { index, .. } => ("kernel: missing binding", index),
        KernelError::MissingConstants { needed, .. } => ("kernel: missing push constants", needed),
        KernelError::BindingTooSmall { index, .. } => ("kernel: binding too small", index),
        KernelError::Misaligned { index, .. } => ("kernel: binding misaligned", index),
        KernelError::ReadOnly { index } => ("kernel: binding is read-only", index),
        KernelError::Shape(what) => (what, 0),
    };
    Error::Driver {
        what,
        code: code.into(),
    }
}

impl<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator,
    > LocalDevice<'_, OBJECTS, SLOTS, NODES, PENDING, A>
{
    /// Runs every command of `command_buffer` with `bindings` as its binding table.
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
            .ok_or(Error::Driver {
                what: "command slots outside the pool",
                code: start as i64,
            })?;
        for op in cb.list.ops(slots) {
            match op {
                Op::Barrier => {}
                Op::Fill {
                    target,
                    pattern,
                    pattern_len,
                } => {
                    let target = self.resolve_for(
                        target,
                        bindings,
                        "fill",
                        BufferUsage::TRANSFER_TARGET,
                        MemoryAccess::WRITE,
                    )?;
                    self.fill_span(target, &pattern[..pattern_len as usize])?
                }
                Op::Update { target, data } => {
                    let target = self.resolve_for(
                        target,
                        bindings,
                        "update",
                        BufferUsage::TRANSFER_TARGET,
                        MemoryAccess::WRITE,
                    )?;
                    let mut at = 0;
                    for piece in data.pieces() {
                        let span =
                            BufferSpan::new(target.buffer, target.offset + at, piece.len() as u64);
                        self.write_span(span, piece)?;
                        at += piece.len() as u64;
                    }
                }
                Op::Copy {
                    source,
                    target,
                    length,
                } => {
                    let source = self.resolve_for(
                        source,
                        bindings,
                        "copy source",
                        BufferUsage::TRANSFER_SOURCE,
                        MemoryAccess::READ,
                    )?;
                    let target = self.resolve_for(
                        target,
                        bindings,
                        "copy target",
                        BufferUsage::TRANSFER_TARGET,
                        MemoryAccess::WRITE,
                    )?;
                    self.copy_spans(source, target, length)?
                }
                Op::Dispatch {
                    executable,
                    workgroups,
                    bindings: refs,
                    constants: (constant_slots, count),
                } => self.dispatch(
                    executable,
                    workgroups,
                    refs,
                    constant_slots,
                    count,
                    bindings,
                )?,
            }
        }
        Ok(())
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
        info.require_usage(
            "indirect dispatch parameters",
            BufferUsage::DISPATCH_INDIRECT_PARAMS,
        )?;
        // SAFETY: replay holds the device borrow and no other view of device memory.
        let b = unsafe { raw.bytes() };
        let mut count = [0u32; 3];
        for (i, c) in count.iter_mut().enumerate() {
            let word = b.get(i * 4..i * 4 + 4).ok_or(Error::Driver {
                what: "indirect parameters shorter than 12 bytes",
                code: i as i64,
            })?;
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

    /// Resolves a transfer command's reference. Buffers named when recording were checked
    /// then; a binding-table slot is checked here, against the buffer bound to it.
    fn resolve_for(
        &self,
        r: BufferRef,
        table: &[BufferSpan],
        what: &'static str,
        usage: BufferUsage,
        access: MemoryAccess,
    ) -> Result<BufferSpan, Error> {
        let span = r.resolve(table)?;
        if let RefTarget::Slot(_) = r.target {
            let info = self.buffers.get(span.buffer)?.info;
            info.require_usage(what, usage)?;
            info.require_access(access)?;
        }
        Ok(span)
    }

    #[inline]
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
        let mut constants = heapless::Vec::<u32, MAX_CONSTANTS>::new();
        for slot in constant_slots {
            if let Command::Constants(words) = slot {
                let room = (constant_count as usize)
                    .saturating_sub(constants.len())
                    .min(4);
                let _ = constants.extend_from_slice(&words[..room]);
            }
        }
        let mut bindings = heapless::Vec::<Binding<'_>, MAX_BINDINGS>::new();
        for slot in refs {
            let Command::Binding(r) = slot else {
                return Err(Error::Driver {
                    what: "dispatch payload is not a binding",
                    code: 0,
                });
            };
            let span = r.resolve(table)?;
            let (raw, info) =
                self.raw(span.buffer, "dispatch binding", span.offset, span.length)?;
            info.require_usage("dispatch binding", BufferUsage::DISPATCH_STORAGE_READ)?;
            let device_writable = info.access.contains(MemoryAccess::WRITE)
                && info.usage.contains(BufferUsage::DISPATCH_STORAGE_WRITE);
            let raw = if device_writable {
                raw
            } else {
                raw.read_only()
            };
            // SAFETY: these bindings are the only views of device memory until the dispatch
            // returns (replay makes no other slice meanwhile).
            let _ = bindings.push(unsafe { raw.binding() });
        }
        let (constants, bindings) = (constants.as_slice(), bindings.as_slice());
        #[cfg(feature = "threads")]
        if let Some(pool) = &self.pool {
            let total = u64::from(count[0]) * u64::from(count[1]) * u64::from(count[2]);
            if total > 1 {
                let run = |linear: u64| {
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
                    .map_err(kernel_error)
                };
                return pool.run(total, &run);
            }
        }
        for z in 0..count[2] {
            for y in 0..count[1] {
                for x in 0..count[0] {
                    let workgroup = Workgroup {
                        id: [x, y, z],
                        count,
                        constants,
                        bindings,
                    };
                    entry(&workgroup).map_err(kernel_error)?;
                }
            }
        }
        Ok(())
    }
}
