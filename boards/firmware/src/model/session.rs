//! The model through the HAL path: a [`Session`] over a hal-local [`LocalDevice`], the
//! module loaded at start-up, its inputs and outputs buffers of the device, each invocation
//! a recorded command buffer replayed (feature `session`, and `cores`: a device that runs
//! dispatches on both cores). The same cases and checks as the static program.
//!
//! With the `cores` feature, on a board whose second core serves the team, every case runs
//! again on a device that uses both cores, checked the same way; then one core and two are
//! timed in turn, seven rounds, and one more line reports each mode's fastest round and its
//! median round: `EMBER-CORES model=M cores=2 one_core=N two_cores=N one_core_median=N
//! two_cores_median=N cases=N mismatches=N`.
//! (Under QEMU's multi-threaded TCG, which a multi-core run needs, the measure counts time,
//! not instructions.)

use super::{cases, config, log_class, mismatches, module, step_failed, ModelReport, NOOP_KERNELS};
use hal_core::memory::BufferParams;
use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{Buffer, BufferSpan, Device, QueueAffinity};
use hal_local::alloc::{first_levels, Tlsf};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use static_cell::ConstStaticCell;

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

const INPUT_COUNT: usize = config::INPUT_BYTES.len();
const OUTPUT_COUNT: usize = config::OUTPUT_BYTES.len();
/// Objects of each kind: the executables; the buffers — every input and output, the
/// constant pool (imported in place as one buffer), the arena — and one spare.
const OBJECTS: usize = max(config::EXECUTABLES, INPUT_COUNT + OUTPUT_COUNT + 3);
/// Allocator records of device memory: inputs, outputs, arena, and free ranges between.
const NODES: usize = 2 * (INPUT_COUNT + OUTPUT_COUNT) + 6;

/// The allocator of device memory and command slots: first levels for the device memory's
/// size only, so its list heads stay small.
pub type ModelAllocator = Tlsf<NODES, { first_levels(config::DEVICE_BYTES as u64) }>;
/// The device's tables, sized for this model. No parked operations: the session submits
/// alloca, execute and dealloca in order on one core, each one's waits already reached.
pub type ModelStorage = LocalStorage<OBJECTS, { config::SLOTS }, NODES, 0, ModelAllocator>;
/// The device.
pub type ModelDevice<'d> = LocalDevice<'d, ModelAllocator>;
/// The session: one memoized command buffer, and no table of constants: the boards' device
/// memory is the host's, so the constant pool is imported in place as one buffer.
pub type ModelSession = Session<'static, { max(config::EXECUTABLES, 1) }, 0, 1>;

/// The device's memory (the arena and every input and output) at [`MEMORY_OFFSET`] into a
/// 128-byte aligned block: its start is then exactly 64-byte aligned wherever the linker
/// places the block, so the build-time plan holds: the arena starts where the plan put it,
/// and the device serves arena requests up to the alignment that start has in memory (here
/// 64) and sends larger ones to the general heap.
#[repr(C, align(128))]
struct DeviceMemory([u8; MEMORY_OFFSET + config::DEVICE_BYTES]);

/// Where the device's memory starts in [`DeviceMemory`].
const MEMORY_OFFSET: usize = 64;

/// Whole-buffer spans of the first `N` of `buffers`; `None` if there are fewer.
fn whole<const N: usize>(mut buffers: impl Iterator<Item = Buffer>) -> Option<[BufferSpan; N]> {
    let mut spans = [None; N];
    for span in spans.iter_mut() {
        *span = Some(BufferSpan::whole(buffers.next()?));
    }
    let first = spans.first().copied().flatten()?;
    Some(spans.map(|s| s.unwrap_or(first)))
}

/// The model loaded on a device, with its inputs and outputs allocated.
struct Loaded {
    session: ModelSession,
    function: u32,
    inputs: [BufferSpan; INPUT_COUNT],
    outputs: [BufferSpan; OUTPUT_COUNT],
}

impl Loaded {
    fn new(dev: &mut ModelDevice<'_>) -> Result<Self, &'static str> {
        let session = ModelSession::load(dev, module::MODULE, LoadOptions::default())
            .map_err(step_failed("load the module"))?;
        let function = session
            .function(config::FUNCTION)
            .ok_or("find the model's function")?;
        let mut inputs = [None; INPUT_COUNT];
        for (buffer, &bytes) in inputs.iter_mut().zip(&config::INPUT_BYTES) {
            *buffer = Some(
                dev.allocate_buffer(BufferParams::device_local(), bytes as u64)
                    .map_err(step_failed("allocate an input"))?,
            );
        }
        let results = session
            .allocate_results(dev, function, ResultMemory::DeviceLocal)
            .map_err(step_failed("allocate the outputs"))?;
        Ok(Self {
            inputs: whole(inputs.iter().flatten().copied()).ok_or("allocate the inputs")?,
            outputs: whole(results.iter().copied()).ok_or("allocate the outputs")?,
            session,
            function,
        })
    }

    fn invoke(&mut self, dev: &mut ModelDevice<'_>) -> Result<(), hal_core::Error> {
        let (inputs, outputs) = (&self.inputs, &self.outputs);
        self.session
            .invoke(dev, self.function, inputs, outputs, QueueAffinity::ANY)
    }

    /// Instructions of one invocation on the inputs in place: the median of 5 after a
    /// warm-up.
    fn time(&mut self, dev: &mut ModelDevice<'_>) -> Result<u64, &'static str> {
        let mut failed = false;
        let instructions = icount::median(5, &mut || failed |= self.invoke(dev).is_err());
        if failed {
            return Err("invoke the model while timing it");
        }
        Ok(instructions)
    }

    /// Releases everything; fails if the device still holds an object.
    fn release(self, dev: &mut ModelDevice<'_>) -> Result<(), &'static str> {
        for buffer in self.inputs.iter().chain(&self.outputs).map(|s| s.buffer) {
            dev.release_buffer(buffer)
                .map_err(step_failed("release a buffer"))?;
        }
        self.session
            .release(dev)
            .map_err(step_failed("release the session"))?;
        if dev.object_counts() != Default::default() {
            return Err("release everything: objects were left on the device");
        }
        Ok(())
    }
}

/// Loads the model, runs every case and times one; logs the figures. `Err` says which
/// step failed.
fn check(dev: &mut ModelDevice<'_>) -> Result<ModelReport, &'static str> {
    let mut model = Loaded::new(dev)?;
    let mut report = ModelReport::default();
    let mut got = [0u8; 64];
    for (case_inputs, case_outputs, name) in cases() {
        let mut at = 0;
        for (&span, &bytes) in model.inputs.iter().zip(&config::INPUT_BYTES) {
            dev.write_buffer(span, &case_inputs[at..at + bytes])
                .map_err(step_failed("write an input"))?;
            at += bytes;
        }
        model.invoke(dev).map_err(step_failed("invoke the model"))?;
        let mut at = 0;
        for ((span, &bytes), &float) in model
            .outputs
            .iter()
            .zip(&config::OUTPUT_BYTES)
            .zip(&config::FLOAT_OUTPUTS)
        {
            // Read back in pieces: the stack holds one small buffer, whatever the output.
            let mut done = 0;
            while done < bytes {
                let n = (bytes - done).min(got.len());
                let piece = BufferSpan {
                    buffer: span.buffer,
                    offset: done as u64,
                    length: n as u64,
                };
                dev.read_buffer(piece, &mut got[..n])
                    .map_err(step_failed("read an output"))?;
                let want = &case_outputs[at + done..at + done + n];
                report.mismatches += mismatches(&got[..n], want, float);
                done += n;
            }
            at += bytes;
        }
        if name.starts_with("bmp-") && !config::FLOAT_OUTPUTS[0] {
            // An image's class: the first output's largest score, as read back.
            let n = config::OUTPUT_BYTES[0].min(got.len());
            dev.read_buffer(
                BufferSpan::new(model.outputs[0].buffer, 0, n as u64),
                &mut got[..n],
            )
            .map_err(step_failed("read an output"))?;
            log_class(name, &got[..n]);
        }
        report.cases += 1;
    }
    // The last case's inputs are still in place.
    report.instructions = model.time(dev)?;
    model.release(dev)?;
    Ok(report)
}

/// Instructions of one invocation on `dev`, the model loaded afresh (median of 5 after a
/// warm-up). Over [`NOOP_KERNELS`], whose kernels do nothing, that is the runtime's own cost
/// per inference — the arena's `queue_alloca`, the recorded command buffer's replay
/// (bindings resolved and checked), `queue_dealloca`, the semaphore waits.
fn overhead(dev: &mut ModelDevice<'_>) -> Result<u64, &'static str> {
    let mut model = Loaded::new(dev)?;
    let instructions = model.time(dev)?;
    model.release(dev)?;
    Ok(instructions)
}

/// Rounds of timing on one core then two, alternated so that drift on the host running
/// QEMU falls on both alike. Each mode's figure is its fastest round: QEMU's cores are host
/// threads, and whatever else the host runs only ever slows a round down.
#[cfg(feature = "cores")]
const CORE_ROUNDS: usize = 7;

/// Every case again on a device that uses both cores, checked the same way; then
/// [`CORE_ROUNDS`] alternating timings on one core and on two. Logs the `EMBER-CORES` line;
/// `false` if a step failed or an output differs from TFLM's.
#[cfg(feature = "cores")]
fn on_two_cores(storage: &mut ModelStorage, memory: &mut [u8], one: &ModelReport) -> bool {
    let config = |team: bool| {
        let config = LocalConfig {
            kernels: &module::KERNELS,
            transient_bytes: module::ARENA_BYTES,
            ..LocalConfig::DEFAULT
        };
        if team {
            crate::cores::with_team(config)
        } else {
            config
        }
    };
    let two = match LocalDevice::new(&mut *storage, &mut *memory, config(true)) {
        Ok(mut dev) => check(&mut dev),
        Err(_) => Err("create the device (two cores)"),
    };
    let two = match two {
        Ok(two) if two.cases == one.cases && two.mismatches == 0 => two,
        Ok(two) => {
            say!(
                "model {} on two cores: {} cases, {} outputs differ from TFLM: FAIL",
                config::NAME,
                two.cases,
                two.mismatches
            );
            return false;
        }
        Err(step) => {
            say!("model: FAIL on two cores: {}", step);
            return false;
        }
    };
    crate::cores::report();
    let mut times = [[0u64; CORE_ROUNDS]; 2];
    for round in 0..CORE_ROUNDS {
        for (cores, time) in times.iter_mut().enumerate() {
            let timed = match LocalDevice::new(&mut *storage, &mut *memory, config(cores == 1)) {
                Ok(mut dev) => overhead(&mut dev),
                Err(_) => Err("create the device (timing)"),
            };
            match timed {
                Ok(t) => time[round] = t,
                Err(step) => {
                    say!(
                        "model: FAIL while timing on {} core(s): {}",
                        cores + 1,
                        step
                    );
                    return false;
                }
            }
        }
    }
    let [mut one_core, mut two_cores] = times;
    one_core.sort_unstable();
    two_cores.sort_unstable();
    say!(
        "EMBER-CORES model={} cores=2 one_core={} two_cores={} one_core_median={} two_cores_median={} cases={} mismatches={}",
        config::NAME,
        one_core[0],
        two_cores[0],
        one_core[CORE_ROUNDS / 2],
        two_cores[CORE_ROUNDS / 2],
        two.cases,
        two.mismatches
    );
    true
}

/// Runs every case and times one on a device over its own memory, then the runtime alone
/// (the same tables and memory with no-op kernels); with `cores`, everything again on two
/// cores. Returns the report, the device's memory and the arena.
pub(super) fn measure() -> Result<(ModelReport, usize, usize), &'static str> {
    static STORAGE: ConstStaticCell<ModelStorage> = ConstStaticCell::new(ModelStorage::EMPTY);
    static MEMORY: ConstStaticCell<DeviceMemory> =
        ConstStaticCell::new(DeviceMemory([0; MEMORY_OFFSET + config::DEVICE_BYTES]));
    let (Some(memory), Some(storage)) = (MEMORY.try_take(), STORAGE.try_take()) else {
        return Err("the runner ran twice");
    };
    let config = |kernels| LocalConfig {
        kernels,
        transient_bytes: module::ARENA_BYTES,
        ..LocalConfig::DEFAULT
    };
    let mut report = match LocalDevice::new(
        storage,
        &mut memory.0[MEMORY_OFFSET..],
        config(&module::KERNELS),
    ) {
        Ok(mut dev) => check(&mut dev)?,
        Err(_) => return Err("create the device"),
    };
    #[cfg(feature = "cores")]
    if crate::cores::serving()
        && !on_two_cores(&mut *storage, &mut memory.0[MEMORY_OFFSET..], &report)
    {
        return Err("run on two cores");
    }
    report.overhead = match LocalDevice::new(
        storage,
        &mut memory.0[MEMORY_OFFSET..],
        config(&NOOP_KERNELS),
    ) {
        Ok(mut dev) => overhead(&mut dev)?,
        Err(_) => return Err("create the device (no-op kernels)"),
    };
    Ok((report, config::DEVICE_BYTES, module::ARENA_BYTES as usize))
}
