//! Running a lowered model on the host's local-CPU device: what `cargo xtask run --model`,
//! the model tests and `cargo xtask bench models` share.

use crate::device_model::DeviceModel;
use ember_import::Lowered;
use hal_core::memory::BufferParams;
use hal_core::session::ResultMemory;
use hal_local::alloc::Tlsf;
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use std::time::{Duration, Instant};

/// Tables of the device a model runs on: room for a model of a few hundred tensors.
type Storage = LocalStorage<512, 4096, 1024, 16>;

/// What running a model gave.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Each output's bytes, in order.
    pub outputs: Vec<Vec<u8>>,
    /// Wall time of one inference (the median of `repeats`): writing the inputs, the
    /// invocation, reading the outputs.
    pub per_inference: Duration,
    /// Bytes of the function's arena.
    pub arena_bytes: u64,
    /// Bytes of constants, imported in place.
    pub constant_bytes: u64,
}

/// Runs `lowered` on a fresh local device, `repeats` times (at least once) on the same
/// `inputs` (one per model input, each exactly its size); `workers` above 1 runs workgroups
/// on the thread pool where kernels allow.
pub fn run_local(
    lowered: &Lowered,
    inputs: &[&[u8]],
    workers: usize,
    repeats: usize,
) -> Result<RunOutput, String> {
    check_inputs(lowered, inputs)?;
    let mut model = LocalModel::new(lowered, workers)?;
    let mut times = Vec::with_capacity(repeats.max(1));
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        model.write_inputs(inputs)?;
        model.invoke()?;
        model.read_outputs()?;
        times.push(start.elapsed());
    }
    times.sort();
    let outputs = model.outputs().to_vec();
    model.release()?;
    Ok(RunOutput {
        outputs,
        per_inference: times[times.len() / 2],
        arena_bytes: lowered.arena_bytes(),
        constant_bytes: lowered.constant_bytes,
    })
}

/// Whether `inputs` are one per model input, each exactly its size.
fn check_inputs(lowered: &Lowered, inputs: &[&[u8]]) -> Result<(), String> {
    if inputs.len() != lowered.inputs.len() {
        return Err(format!(
            "the model takes {} inputs, {} given",
            lowered.inputs.len(),
            inputs.len()
        ));
    }
    for (n, (bytes, info)) in inputs.iter().zip(&lowered.inputs).enumerate() {
        if bytes.len() != info.byte_size() {
            return Err(format!(
                "input {n} `{}` is {} bytes, the model takes {}",
                info.name,
                bytes.len(),
                info.byte_size()
            ));
        }
    }
    Ok(())
}

/// A lowered model loaded on a fresh local device, its argument and result buffers
/// allocated, ready to run again and again: the steps of [`run_local`] one by one, so that
/// a benchmark can time [`LocalModel::invoke`] alone. The device's memory, storage and the
/// module's bytes are leaked (for the program's life, as firmware keeps them in statics).
pub struct LocalModel {
    device: ModelDevice,
    model: DeviceModel,
}

/// The device a [`LocalModel`] runs on.
type ModelDevice = LocalDevice<'static, Tlsf<1024>>;

impl LocalModel {
    /// Loads `lowered` on a fresh local device; `workers` above 1 runs workgroups on the
    /// thread pool where kernels allow.
    pub fn new(lowered: &Lowered, workers: usize) -> Result<Self, String> {
        let io: u64 = lowered
            .inputs
            .iter()
            .chain(&lowered.outputs)
            .map(|t| t.byte_size() as u64 + 64)
            .sum();
        let transient = lowered.arena_bytes() + 4096;
        // Loading may copy constants into device memory (weights a kernel reads packed):
        // room for the whole pool, each constant (64 bytes or more, 64-byte aligned there)
        // rounded up and its allocator record beside it, half as much again at most.
        let pool = hal_core::module::Module::parse(&lowered.built.bytes)
            .map_err(|e| e.to_string())?
            .sizes()
            .pool;
        let region = (io + transient + pool + pool / 2 + (1 << 20)) as usize;
        let memory: &'static mut [u8] = Box::leak(vec![0u8; region].into_boxed_slice());
        let storage: &'static mut Storage = Box::leak(Box::new(Storage::EMPTY));
        let config = LocalConfig {
            kernels: hal_local::kernels::TFLITE,
            transient_bytes: transient,
            max_allocation_size: region as u64,
            workers,
            ..LocalConfig::default()
        };
        let mut device = LocalDevice::new(storage, memory, config).map_err(|e| e.to_string())?;
        let model = DeviceModel::new(
            &mut device,
            lowered,
            BufferParams::host_visible(),
            ResultMemory::DeviceLocal,
        )?;
        Ok(Self { device, model })
    }

    /// Writes the model's inputs: one per model input, each exactly its size.
    pub fn write_inputs(&mut self, inputs: &[&[u8]]) -> Result<(), String> {
        self.model.write_inputs(&mut self.device, inputs)
    }

    /// One inference on the inputs last written: `Session::invoke` (the arena's
    /// `queue_alloca`, the memoized command buffer's replay, `queue_dealloca`, the wait).
    pub fn invoke(&mut self) -> Result<(), String> {
        self.model.invoke(&mut self.device)
    }

    /// Reads the outputs of the last inference into [`LocalModel::outputs`].
    pub fn read_outputs(&mut self) -> Result<(), String> {
        self.model.read_outputs(&mut self.device)
    }

    /// Each output's bytes as last read, in order.
    pub fn outputs(&self) -> &[Vec<u8>] {
        self.model.outputs()
    }

    /// Releases the buffers and the session.
    pub fn release(mut self) -> Result<(), String> {
        self.model.release(&mut self.device)
    }
}

/// One case's outputs: each output's bytes, in order.
pub type Outputs = Vec<Vec<u8>>;

/// Runs `lowered` once on each of `cases` (each one input set, as [`run_local`] takes
/// them), all on one fresh local device and session; returns each case's outputs, in
/// order. What the per-op tests use: one device per model, however many cases.
pub fn run_local_cases(
    lowered: &Lowered,
    cases: &[&[&[u8]]],
    workers: usize,
) -> Result<Vec<Outputs>, String> {
    for inputs in cases {
        check_inputs(lowered, inputs)?;
    }
    let mut model = LocalModel::new(lowered, workers)?;
    let mut all = Vec::with_capacity(cases.len());
    for inputs in cases {
        model.write_inputs(inputs)?;
        model.invoke()?;
        model.read_outputs()?;
        all.push(model.outputs().to_vec());
    }
    model.release()?;
    Ok(all)
}
