//! `Session`: a module loaded onto a device, ready to invoke.
//!
//! Loading resolves every executable on the device, and gives every constant a buffer:
//! imported in place (zero-copy) where the device's memory is unified with the host's and
//! the bytes are aligned, streamed through bounded staging ([`Device::queue_read`]) where not.
//! An invocation does one `queue_alloca` for the function's transient arena, replays a
//! reusable command buffer recorded on first use and memoized per (device, queue affinity),
//! then returns the arena with `queue_dealloca` — all ordered on the session's timeline.
//!
//! The binding table of a function's command buffer is its arguments, then its results,
//! then (if it has transients) the arena; constants are bound at record time. Where the
//! device's memory is apart from the host's, the arena also holds a copy of every argument
//! and result, made inside the same submission ([`Io`]), unless [`LoadOptions::stage_io`]
//! is off. [`Session::enqueue`] submits an invocation without waiting for it, so several
//! can be in flight.

use crate::buffer::{Buffer, BufferSpan, WHOLE};
use crate::command::{dispatch_slots, MAX_BINDINGS, MAX_BINDING_SLOTS, MAX_CONSTANTS};
use crate::command::{BufferRef, CommandBuffer, CommandBufferMode, Record, Workgroups};
use crate::connection::MemoryConnection;
use crate::device::Device;
use crate::device::DeviceId;
use crate::executable::{Executable, ExecutableSource};
use crate::memo::{MemoCache, MemoKey};
use crate::memory::MemoryDomain;
use crate::memory::{BufferParams, BufferUsage, MemoryAccess, MemoryType};
use crate::module::{
    FunctionDef, Module, ModuleError, Operand, Problem, Seq, Site, Step, Value, MAX_VALUES,
};
use crate::semaphore::{QueueAffinity, Semaphore, SemaphoreValue, Submit, Timeout};
use crate::Error;
use heapless::Vec;

/// How a session loads its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Import constants in place where the device can use their memory (otherwise always
    /// stream them).
    pub import: bool,
    /// Most bytes staged at once when streaming a constant.
    pub staging_bytes: u64,
    /// Where the device's memory is apart from the host's (and hal-core has the `stage-io`
    /// feature), copy every argument into the arena and every result out of it, inside the
    /// invocation's submission, so kernels touch only device memory. Off, kernels use the
    /// caller's buffers in place, with no copies and no barriers around them: faster for a
    /// small model whose kernels read each input once and write each result once (put the
    /// inputs the host writes in [`BufferParams::device_local_mappable`] memory where the
    /// device has it).
    pub stage_io: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            import: true,
            staging_bytes: 64 * 1024,
            stage_io: true,
        }
    }
}

/// Result buffers of one function.
pub type Results = Vec<Buffer, { MAX_VALUES as usize }>;

/// Where a function's results live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultMemory {
    /// Device-local memory (the default; the host reads it with `read_buffer`).
    DeviceLocal,
    /// Memory the host can map.
    Mappable,
}

impl ResultMemory {
    /// Parameters for a result buffer.
    pub const fn params(self) -> BufferParams {
        match self {
            ResultMemory::DeviceLocal => BufferParams::device_local(),
            ResultMemory::Mappable => BufferParams::host_visible(),
        }
    }
}

/// Why a session did not load.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LoadError {
    /// The module cannot run here (an unknown kernel, say).
    #[error(transparent)]
    Module(#[from] ModuleError),
    /// The device refused.
    #[error(transparent)]
    Device(#[from] Error),
    /// The module has more of something than this session type holds.
    #[error("module has {count} {what}; this session holds {max}")]
    Capacity {
        /// Of what.
        what: &'static str,
        /// In the module.
        count: u32,
        /// Capacity.
        max: usize,
    },
}

/// What a session holds, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionStats {
    /// Constant bytes imported in place.
    pub imported_bytes: u64,
    /// Constant bytes streamed into device buffers.
    pub streamed_bytes: u64,
    /// The largest arena a function needs.
    pub arena_peak: u64,
    /// Command buffers recorded (memo misses).
    pub recorded: u32,
    /// Invocations that replayed a memoized command buffer.
    pub replayed: u32,
}

/// A module loaded on one device: at most `E` executables, `C` constants, `F` memoized
/// command buffers (one per function and queue affinity). Heap-free; the tables are inline.
///
/// Where the device can use the module's memory in place, the whole constant pool is
/// imported as one buffer and every constant is a span of it: the device holds one object
/// for all constants, and `C` may be smaller than the module's constant count (even 0).
/// Otherwise each constant is a buffer of its own (imported or streamed) where `C` holds
/// them all, and the whole pool is streamed into one buffer, every constant a span of it,
/// where it does not: no module is refused for its constant count.
pub struct Session<'m, const E: usize = 16, const C: usize = 32, const F: usize = 8> {
    module: Module<'m>,
    device: DeviceId,
    executables: Vec<Executable, E>,
    /// The constant pool as one imported buffer; `constants` is then empty.
    pool: Option<Buffer>,
    constants: Vec<Buffer, C>,
    commands: MemoCache<CommandBuffer, F>,
    semaphore: Semaphore,
    timeline: u64,
    stats: SessionStats,
    /// The function invoked last: invoking it again decodes nothing from the module.
    last: Option<Invoked<'m>>,
    /// Whether arguments and results are staged through the arena inside the invocation's
    /// one submission (see [`Io`]): the device's memory is apart from the host's and the
    /// load asked for it ([`LoadOptions::stage_io`]).
    stage_io: bool,
}

/// What an invocation reads from its function's definition, kept for the next one.
#[derive(Clone, Copy)]
struct Invoked<'m> {
    function: u32,
    arguments: Seq<'m, u64>,
    results: Seq<'m, u64>,
    arena_size: u64,
}

/// A constant's buffer: read by dispatches, a copy's source.
fn constant_params() -> BufferParams {
    let params = BufferParams::device_local()
        .with_usage(BufferUsage::DISPATCH_STORAGE_READ | BufferUsage::TRANSFER_SOURCE);
    BufferParams {
        access: MemoryAccess::READ,
        ..params
    }
}

/// Binding-table entries an invocation keeps on its stack when its function's arguments,
/// results and arena fit; a larger one takes the largest table, [`MAX_BINDING_SLOTS`].
const SMALL_TABLE: usize = 8;

fn capacity(what: &'static str, count: u32, max: usize) -> Result<(), LoadError> {
    if count as usize > max {
        return Err(LoadError::Capacity { what, count, max });
    }
    Ok(())
}

impl<'m, const E: usize, const C: usize, const F: usize> Session<'m, E, C, F> {
    /// Loads `module` onto `device`. On error, whatever was created is released.
    pub fn load<D>(
        device: &mut D,
        module: Module<'m>,
        options: LoadOptions,
    ) -> Result<Self, LoadError>
    where
        D: Device,
        D::HostMemory: From<&'m [u8]>,
    {
        capacity("executables", module.executables().len(), E)?;
        let semaphore = device.create_semaphore(0)?;
        let staged = options.stage_io && !memory_is_unified(device);
        let mut session = Self {
            module,
            device: device.id(),
            executables: Vec::new(),
            pool: None,
            constants: Vec::new(),
            commands: MemoCache::new(),
            semaphore,
            timeline: 0,
            last: None,
            stage_io: staged && cfg!(feature = "stage-io"),
            stats: SessionStats {
                arena_peak: arena_peak(&module, staged),
                ..SessionStats::default()
            },
        };
        match session.load_objects(device, options) {
            Ok(()) => Ok(session),
            Err(e) => {
                // Best effort: the error that stopped the load is the one to report.
                let _ = session.release(device);
                Err(e)
            }
        }
    }

    fn load_objects<D>(&mut self, device: &mut D, options: LoadOptions) -> Result<(), LoadError>
    where
        D: Device,
        D::HostMemory: From<&'m [u8]>,
    {
        for (i, exe) in self.module.executables().iter().enumerate() {
            let loaded = device.load_executable(ExecutableSource::Kernel(exe.kernel));
            let loaded = loaded.map_err(|e| match e {
                Error::UnknownKernel { name } => LoadError::Module(ModuleError::new(
                    Site::Executable(i as u32),
                    Problem::UnknownKernel { name },
                )),
                other => LoadError::Device(other),
            })?;
            if self.executables.push(loaded).is_err() {
                device.release_executable(loaded)?;
            }
        }
        if self.module.constants().is_empty() {
            return Ok(());
        }
        let pool = self.module.pool();
        if let Some(buffer) = Self::import_in_place(device, pool, options) {
            self.pool = Some(buffer);
            self.stats.imported_bytes += self.constant_bytes();
            return Ok(());
        }
        if self.module.constants().len() as usize > C {
            self.pool = Some(self.stream(device, pool, options)?);
            self.stats.streamed_bytes += self.constant_bytes();
            return Ok(());
        }
        for c in self.module.constants().iter() {
            let bytes = self.module.pool_bytes(c.data);
            let buffer = self.load_constant(device, bytes, options)?;
            if self.constants.push(buffer).is_err() {
                device.release_buffer(buffer)?;
            }
        }
        Ok(())
    }

    /// `bytes` imported in place as a read-only buffer, where `options` allow it, the device's
    /// memory is the host's and `bytes` start on a 64-byte boundary; `None` otherwise.
    fn import_in_place<D>(device: &mut D, bytes: &'m [u8], options: LoadOptions) -> Option<Buffer>
    where
        D: Device,
        D::HostMemory: From<&'m [u8]>,
    {
        let unified = memory_is_unified(device);
        let aligned = (bytes.as_ptr() as usize) % 64 == 0;
        if !(options.import && unified && aligned) {
            return None;
        }
        let buffer = device
            .import_buffer(D::HostMemory::from(bytes), constant_params())
            .ok()?;
        Some(buffer)
    }

    fn load_constant<D>(
        &mut self,
        device: &mut D,
        bytes: &'m [u8],
        options: LoadOptions,
    ) -> Result<Buffer, Error>
    where
        D: Device,
        D::HostMemory: From<&'m [u8]>,
    {
        if let Some(buffer) = Self::import_in_place(device, bytes, options) {
            self.stats.imported_bytes += bytes.len() as u64;
            return Ok(buffer);
        }
        let buffer = self.stream(device, bytes, options)?;
        self.stats.streamed_bytes += bytes.len() as u64;
        Ok(buffer)
    }

    /// The bytes of every constant (the pool without its alignment padding).
    fn constant_bytes(&self) -> u64 {
        self.module.constants().iter().map(|c| c.data.length).sum()
    }

    /// `bytes` copied into a device-local buffer of their own.
    fn stream<D>(
        &mut self,
        device: &mut D,
        bytes: &'m [u8],
        options: LoadOptions,
    ) -> Result<Buffer, Error>
    where
        D: Device,
    {
        let params = constant_params();
        let params = params.with_usage(params.usage | BufferUsage::TRANSFER_TARGET);
        let params = BufferParams {
            access: MemoryAccess::READ | MemoryAccess::WRITE,
            ..params
        };
        let buffer = device.allocate_buffer(params, bytes.len() as u64)?;
        let done = self.next_value();
        let mut source = bytes;
        let streamed = device
            .queue_read(
                Submit::new(&[], &[done]),
                &mut source,
                BufferSpan::new(buffer, 0, WHOLE),
                options.staging_bytes.max(4),
            )
            .and_then(|_| device.wait_semaphores(&[done], Timeout::Infinite));
        if let Err(e) = streamed {
            let _ = device.release_buffer(buffer);
            return Err(e);
        }
        Ok(buffer)
    }

    fn next_value(&mut self) -> SemaphoreValue {
        self.timeline += 1;
        SemaphoreValue::new(self.semaphore, self.timeline)
    }

    /// The module.
    pub const fn module(&self) -> &Module<'m> {
        &self.module
    }

    /// What it holds and has done.
    pub const fn stats(&self) -> SessionStats {
        self.stats
    }

    /// Whether invocations stage arguments and results through the arena (the device's
    /// memory is apart from the host's, hal-core has the `stage-io` feature, and the load
    /// did not turn [`LoadOptions::stage_io`] off).
    pub const fn stages_io(&self) -> bool {
        self.stage_io
    }

    /// The index of the function named `name`.
    pub fn function(&self, name: &str) -> Option<u32> {
        self.module.function(name).map(|(i, _)| i)
    }

    fn def(&self, function: u32) -> Result<FunctionDef<'m>, Error> {
        self.module
            .functions()
            .get(function)
            .ok_or(Error::InvalidArgument("no such function"))
    }

    /// Allocates buffers for `function`'s results in `memory` (the caller releases them).
    pub fn allocate_results<D: Device>(
        &self,
        device: &mut D,
        function: u32,
        memory: ResultMemory,
    ) -> Result<Results, Error> {
        let def = self.def(function)?;
        let mut out = Results::new();
        for size in def.results.iter() {
            let allocated = device.allocate_buffer(memory.params(), size);
            match allocated.and_then(|b| {
                out.push(b)
                    .map_err(|_| Error::InvalidArgument("too many results"))
            }) {
                Ok(()) => {}
                Err(e) => {
                    for &b in &out {
                        let _ = device.release_buffer(b);
                    }
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    /// Runs `function` on the queues of `affinity`, reading `arguments` and writing
    /// `results` (spans at least as long as the function's sizes), and waits for it.
    ///
    /// A failed invocation leaves the session usable: if the failure reached the session's
    /// timeline semaphore, the session replaces it.
    pub fn invoke<D: Device>(
        &mut self,
        device: &mut D,
        function: u32,
        arguments: &[BufferSpan],
        results: &[BufferSpan],
        affinity: QueueAffinity,
    ) -> Result<(), Error> {
        let result = self
            .invoke_once(device, function, arguments, results, affinity)
            .and_then(|done| device.wait_semaphores(&[done], Timeout::Infinite));
        self.recover(device, result)
    }

    /// Submits an invocation of `function` as [`invoke`](Self::invoke) does, without waiting:
    /// the results are written (and the arena returned) once the returned value is reached.
    /// Several may be in flight; each one's arguments and results stay untouched by the
    /// host until its value is reached.
    pub fn enqueue<D: Device>(
        &mut self,
        device: &mut D,
        function: u32,
        arguments: &[BufferSpan],
        results: &[BufferSpan],
        affinity: QueueAffinity,
    ) -> Result<SemaphoreValue, Error> {
        let result = self.invoke_once(device, function, arguments, results, affinity);
        self.recover(device, result)
    }

    /// After a failed invocation: replaces the session's semaphore if the failure reached it.
    fn recover<D: Device, T>(
        &mut self,
        device: &mut D,
        result: Result<T, Error>,
    ) -> Result<T, Error> {
        if result.is_err() && device.query_semaphore(self.semaphore).is_err() {
            let fresh = device.create_semaphore(0)?;
            let failed = core::mem::replace(&mut self.semaphore, fresh);
            self.timeline = 0;
            device.release_semaphore(failed)?;
        }
        result
    }

    fn invoke_once<D: Device>(
        &mut self,
        device: &mut D,
        function: u32,
        arguments: &[BufferSpan],
        results: &[BufferSpan],
        affinity: QueueAffinity,
    ) -> Result<SemaphoreValue, Error> {
        if device.id() != self.device {
            return Err(Error::InvalidArgument("session invoked on another device"));
        }
        let invoked = match self.last {
            Some(last) if last.function == function => last,
            _ => {
                let def = self.def(function)?;
                let invoked = Invoked {
                    function,
                    arguments: def.arguments,
                    results: def.results,
                    arena_size: Io::of(&def, self.stage_io).arena_size,
                };
                self.last = Some(invoked);
                invoked
            }
        };
        check_sizes(
            invoked.arguments.iter(),
            arguments,
            "argument count or size",
        )?;
        check_sizes(invoked.results.iter(), results, "result count or size")?;
        let key = MemoKey {
            device: self.device,
            affinity,
            resource: function.into(),
        };
        let command_buffer = match self.commands.get(&key) {
            Some(cb) => {
                self.stats.replayed += 1;
                cb
            }
            None => {
                let cb = self.record(device, &self.def(function)?)?;
                if let Err(e) = self.commands.get_or_try_insert(key, || Ok(cb)) {
                    let _ = device.release_command_buffer(cb);
                    return Err(e);
                }
                self.stats.recorded += 1;
                cb
            }
        };

        // The binding table lives in the callee's frame, sized for the common case: a stack
        // that replays a small function does not carry room for 64 bindings.
        if arguments.len() + results.len() < SMALL_TABLE {
            self.submit::<D, SMALL_TABLE>(
                device,
                command_buffer,
                invoked.arena_size,
                arguments,
                results,
            )
        } else {
            self.submit::<D, { MAX_BINDING_SLOTS as usize }>(
                device,
                command_buffer,
                invoked.arena_size,
                arguments,
                results,
            )
        }
    }

    /// Submits one invocation of the recorded `command_buffer`: the arena (if
    /// `arena_size > 0`), the execution, the arena's return; returns the value reached once
    /// all of it has run. The binding table (arguments, results, arena) holds at most `N`
    /// spans.
    #[inline(never)]
    fn submit<D: Device, const N: usize>(
        &mut self,
        device: &mut D,
        command_buffer: CommandBuffer,
        arena_size: u64,
        arguments: &[BufferSpan],
        results: &[BufferSpan],
    ) -> Result<SemaphoreValue, Error> {
        let mut table: Vec<BufferSpan, N> = Vec::new();
        for span in arguments.iter().chain(results) {
            table
                .push(*span)
                .map_err(|_| Error::InvalidArgument("too many arguments and results"))?;
        }
        let allocated = self.next_value();
        let arena = if arena_size > 0 {
            let params = BufferParams::device_local();
            let signal = [allocated];
            let arena = device.queue_alloca(Submit::new(&[], &signal), params, arena_size)?;
            let _ = table.push(BufferSpan::new(arena, 0, WHOLE));
            Some(arena)
        } else {
            device.signal_semaphore(self.semaphore, allocated.value)?;
            None
        };
        let executed = self.next_value();
        let (wait, signal) = ([allocated], [executed]);
        let run = device.queue_execute(Submit::new(&wait, &signal), command_buffer, &table);
        let Some(arena) = arena else {
            run?;
            return Ok(executed);
        };
        // Queued even if the execution was refused: the arena returns once `executed` is
        // reached or failed.
        let released = self.next_value();
        let dealloca = device.queue_dealloca(Submit::new(&[executed], &[released]), arena);
        if run.is_err() {
            // Refused at submit: nothing ran and nothing will signal `executed`, so signal
            // it here and the arena returns.
            let _ = device.signal_semaphore(self.semaphore, executed.value);
        }
        run?;
        dealloca?;
        Ok(released)
    }

    /// Out of line: it runs once per function, and its scratch must not weigh on every
    /// invocation's stack.
    #[inline(never)]
    fn record<D: Device>(
        &self,
        device: &mut D,
        def: &FunctionDef<'m>,
    ) -> Result<CommandBuffer, Error> {
        let io = Io::of(def, self.stage_io);
        let args = def.arguments.len() as u16;
        let results = def.results.len() as u16;
        let arena = args + results;
        let slots = arena + u16::from(io.arena_size > 0);
        // Staging: a copy in per argument and result, a copy out per result, and a barrier
        // after the copies in and before the copies out.
        let mut capacity = if io.staged() {
            u32::from(arena) + u32::from(results) + 2
        } else {
            0
        };
        for step in def.steps.iter() {
            capacity += match step {
                Step::Dispatch {
                    constants,
                    bindings,
                    ..
                } => dispatch_slots(bindings.len() as usize, constants.len() as usize) as u32,
                _ => 1,
            };
        }
        let cb =
            device.create_command_buffer(CommandBufferMode::Reusable, capacity.max(1), slots)?;
        let recorded = self.record_steps(device, cb, def, args, arena, io);
        let ended = recorded.and_then(|()| device.end(cb));
        if let Err(e) = ended {
            let _ = device.release_command_buffer(cb);
            return Err(e);
        }
        Ok(cb)
    }

    fn record_steps<D: Device>(
        &self,
        device: &mut D,
        cb: CommandBuffer,
        def: &FunctionDef<'m>,
        args: u16,
        arena: u16,
        io: Io,
    ) -> Result<(), Error> {
        let missing = Error::InvalidArgument("module refers to a value that does not exist");
        // An argument or result (the `n`th of them, arguments first) as a step refers to it:
        // its table slot, or its staged copy in the arena.
        let io_ref = |n: usize, op: Operand| -> Result<BufferRef, Error> {
            let unstaged = BufferRef::slot(n as u16).at(op.offset, op.length);
            if !io.staged() {
                return Ok(unstaged);
            }
            let size = io.size(def, n).ok_or(missing)?;
            if size == 0 {
                return Ok(unstaged);
            }
            let rest = size.checked_sub(op.offset).ok_or(missing)?;
            let length = match op.length {
                WHOLE => rest,
                l if l <= rest => l,
                _ => return Err(missing),
            };
            Ok(BufferRef::slot(arena).at(io.at(def, n) + op.offset, length))
        };
        let stage = |device: &mut D, into_arena: bool| -> Result<(), Error> {
            // In: arguments and results (a step may write only part of a result, or read it
            // first, as it would in place). Out: results.
            let (first, count) = if into_arena {
                (0, arena)
            } else {
                (args, arena - args)
            };
            for n in first..first + count {
                let size = io.size(def, n as usize).ok_or(missing)?;
                if size == 0 {
                    continue;
                }
                let outside = BufferRef::slot(n).at(0, size);
                let inside = BufferRef::slot(arena).at(io.at(def, n as usize), size);
                let (source, target) = if into_arena {
                    (outside, inside)
                } else {
                    (inside, outside)
                };
                device.record(
                    cb,
                    Record::Copy {
                        source,
                        target,
                        length: size,
                    },
                )?;
            }
            Ok(())
        };
        if io.staged() {
            stage(device, true)?;
            device.record(cb, Record::Barrier)?;
        }
        let resolve = |op: Operand| -> Result<BufferRef, Error> {
            Ok(match op.value {
                Value::Argument(i) => io_ref(i as usize, op)?,
                Value::Result(i) => io_ref(args as usize + i as usize, op)?,
                Value::Constant(i) => match self.pool {
                    // A span of the pool: the constant's own range, `WHOLE` cut to its end.
                    Some(pool) => {
                        let c = self.module.constants().get(i).ok_or(missing)?;
                        let rest = c.data.length.checked_sub(op.offset).ok_or(missing)?;
                        let length = match op.length {
                            WHOLE => rest,
                            n if n <= rest => n,
                            _ => return Err(missing),
                        };
                        BufferRef::buffer(pool).at(c.data.offset + op.offset, length)
                    }
                    None => {
                        let buffer = *self.constants.get(i as usize).ok_or(missing)?;
                        BufferRef::buffer(buffer).at(op.offset, op.length)
                    }
                },
                Value::Transient(i) => {
                    let t = def.transients.get(i).ok_or(missing)?;
                    BufferRef::slot(arena).at(t.offset + op.offset, op.length)
                }
            })
        };
        for step in def.steps.iter() {
            let record = match step {
                Step::Dispatch {
                    executable,
                    workgroups,
                    constants,
                    bindings,
                } => {
                    let executable = *self.executables.get(executable as usize).ok_or(
                        Error::InvalidArgument("module refers to a missing executable"),
                    )?;
                    let mut words = [0u32; MAX_CONSTANTS];
                    let mut nc = 0;
                    for (w, c) in words.iter_mut().zip(constants.iter()) {
                        *w = c;
                        nc += 1;
                    }
                    let mut refs = [BufferRef::slot(0); MAX_BINDINGS];
                    let mut nb = 0;
                    for (r, b) in refs.iter_mut().zip(bindings.iter()) {
                        *r = resolve(b)?;
                        nb += 1;
                    }
                    device.record(
                        cb,
                        Record::Dispatch {
                            executable,
                            workgroups: Workgroups::Direct(workgroups),
                            constants: &words[..nc],
                            bindings: &refs[..nb],
                        },
                    )?;
                    continue;
                }
                Step::Copy { source, target } => Record::Copy {
                    source: resolve(source)?,
                    target: resolve(target)?,
                    length: source.length,
                },
                Step::Fill { target, pattern } => {
                    let pattern = pattern.to_le_bytes();
                    device.record(
                        cb,
                        Record::Fill {
                            target: resolve(target)?,
                            pattern: &pattern,
                        },
                    )?;
                    continue;
                }
                Step::Barrier => Record::Barrier,
            };
            device.record(cb, record)?;
        }
        if io.staged() {
            device.record(cb, Record::Barrier)?;
            stage(device, false)?;
        }
        Ok(())
    }

    /// Releases everything the session created on `device` (after waiting for its work).
    pub fn release<D: Device>(mut self, device: &mut D) -> Result<(), Error> {
        let mut first = Ok(());
        let mut keep = |r: Result<(), Error>| {
            if first.is_ok() {
                first = r;
            }
        };
        let mut commands: Vec<CommandBuffer, F> = Vec::new();
        self.commands.evict_device(self.device, |cb| {
            let _ = commands.push(cb);
        });
        for cb in commands {
            keep(device.release_command_buffer(cb));
        }
        for &b in self.constants.iter().chain(&self.pool) {
            keep(device.release_buffer(b));
        }
        self.pool = None;
        for &e in &self.executables {
            keep(device.release_executable(e));
        }
        keep(device.release_semaphore(self.semaphore));
        self.constants.clear();
        self.executables.clear();
        first
    }
}

/// The largest arena an invocation of any of `module`'s functions takes.
fn arena_peak(module: &Module<'_>, stage_io: bool) -> u64 {
    if !(stage_io && cfg!(feature = "stage-io")) {
        return module.sizes().max_arena;
    }
    module
        .functions()
        .iter()
        .map(|def| Io::of(&def, true).arena_size)
        .max()
        .unwrap_or(0)
}

/// Whether `device`'s memory is the host's (unified), so kernels may read and write the
/// caller's buffers in place, and constants may be imported.
fn memory_is_unified<D: Device>(device: &D) -> bool {
    let memory = device.memory_domain(MemoryType::DEVICE_LOCAL | MemoryType::HOST_VISIBLE);
    MemoryConnection::between(memory, MemoryDomain::Host) == MemoryConnection::Unified
}

/// Where an invocation's arena holds its staged arguments and results (with the `stage-io`
/// feature; without it nothing is staged).
///
/// Where the device's memory is apart from the host's (a discrete GPU), every argument is
/// copied into the arena first and every result out of it last, inside the invocation's one
/// submission: the kernels touch only device memory, whatever memory the caller's buffers
/// are in (a kernel reading host memory across a bus pays the bus's latency on every load),
/// and the copies move each buffer across the bus once. Staged values follow the function's
/// transients, arguments then results, each on a [`Io::ALIGN`] boundary.
#[derive(Debug, Clone, Copy)]
struct Io {
    staged: bool,
    /// Where the first staged value starts.
    base: u64,
    /// The whole arena an invocation takes.
    arena_size: u64,
}

impl Io {
    /// Alignment of each staged value in the arena.
    const ALIGN: u64 = 256;

    /// Whether anything is staged: a constant `false` without the `stage-io` feature, so
    /// the staging code folds away wherever this is asked.
    #[inline(always)]
    fn staged(&self) -> bool {
        cfg!(feature = "stage-io") && self.staged
    }

    fn align(at: u64) -> u64 {
        at.div_ceil(Self::ALIGN) * Self::ALIGN
    }

    fn of(def: &FunctionDef<'_>, staged: bool) -> Self {
        if !(staged && cfg!(feature = "stage-io")) {
            return Self {
                staged: false,
                base: def.arena_size,
                arena_size: def.arena_size,
            };
        }
        let base = Self::align(def.arena_size);
        let end = def
            .arguments
            .iter()
            .chain(def.results.iter())
            .fold(base, |at, size| Self::align(at + size));
        Self {
            staged,
            base,
            arena_size: end,
        }
    }

    /// The size of the `n`th argument or result (arguments first).
    fn size(&self, def: &FunctionDef<'_>, n: usize) -> Option<u64> {
        def.arguments.iter().chain(def.results.iter()).nth(n)
    }

    /// Where the `n`th argument or result (arguments first) is staged in the arena.
    fn at(&self, def: &FunctionDef<'_>, n: usize) -> u64 {
        def.arguments
            .iter()
            .chain(def.results.iter())
            .take(n)
            .fold(self.base, |at, size| Self::align(at + size))
    }
}

fn check_sizes(
    sizes: impl Iterator<Item = u64>,
    spans: &[BufferSpan],
    what: &'static str,
) -> Result<(), Error> {
    let mut n = 0;
    for size in sizes {
        let span = spans.get(n).ok_or(Error::InvalidArgument(what))?;
        if span.length != WHOLE && span.length < size {
            return Err(Error::InvalidArgument(what));
        }
        n += 1;
    }
    if n != spans.len() {
        return Err(Error::InvalidArgument(what));
    }
    Ok(())
}
