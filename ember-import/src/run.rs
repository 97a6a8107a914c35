//! Running a lowered model on the host's local-CPU device: what `cargo xtask run --model`,
//! the model tests and `cargo xtask bench models` share.

use crate::lower::{Lowered, FUNCTION};
use hal_core::memory::BufferParams;
use hal_core::module::Module;
use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{Buffer, BufferSpan, Device, QueueAffinity};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use std::time::{Duration, Instant};

/// Tables of the device a model runs on: room for a model of a few hundred tensors.
type Storage = LocalStorage<512, 4096, 1024, 16>;
/// The session: executables, constants, memoized command buffers.
type ModelSession = Session<'static, 64, 448, 2>;

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
    let (mut outputs, per_inference) = run(lowered, &[inputs], workers, repeats)?;
    Ok(RunOutput {
        outputs: outputs.pop().unwrap_or_default(),
        per_inference,
        arena_bytes: lowered.arena_bytes(),
        constant_bytes: lowered.constant_bytes,
    })
}

/// Runs `lowered` once on each of `cases` (each one input set, as [`run_local`] takes
/// them), all on one fresh local device and session; returns each case's outputs, in
/// order. What the per-op tests use: one device per model, however many cases.
pub fn run_local_cases(
    lowered: &Lowered,
    cases: &[&[&[u8]]],
    workers: usize,
) -> Result<Vec<Outputs>, String> {
    Ok(run(lowered, cases, workers, 1)?.0)
}

/// One case's outputs: each output's bytes, in order.
pub type Outputs = Vec<Vec<u8>>;

/// Each case's outputs (of its last repeat), and the median time of one inference.
fn run(
    lowered: &Lowered,
    cases: &[&[&[u8]]],
    workers: usize,
    repeats: usize,
) -> Result<(Vec<Outputs>, Duration), String> {
    for inputs in cases {
        check_inputs(lowered, inputs)?;
    }

    // The module in 64-byte-aligned memory for the program's life, as firmware keeps it in
    // flash: constants are imported in place.
    let module_bytes = &lowered.built.bytes;
    let words = module_bytes.len().div_ceil(64);
    let aligned: &'static mut [[u8; 64]] = Box::leak(vec![[0u8; 64]; words].into_boxed_slice());
    let flat: &'static mut [u8] = aligned.as_flattened_mut();
    flat[..module_bytes.len()].copy_from_slice(module_bytes);
    let module_bytes: &'static [u8] = &flat[..module_bytes.len()];
    let module = Module::parse(module_bytes).map_err(|e| e.to_string())?;

    let io: u64 = lowered
        .inputs
        .iter()
        .chain(&lowered.outputs)
        .map(|t| t.byte_size() as u64 + 64)
        .sum();
    let transient = lowered.arena_bytes() + 4096;
    let region = (io + transient + (1 << 20)) as usize;
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
    let err = |what: &'static str| move |e: hal_core::Error| format!("{what}: {e}");
    let mut session = ModelSession::load(&mut device, module, LoadOptions::default())
        .map_err(|e| format!("load: {e}"))?;
    let function = session
        .function(FUNCTION)
        .ok_or("the module has no `main` function")?;
    let mut arguments: Vec<Buffer> = Vec::new();
    for info in &lowered.inputs {
        let size = (info.byte_size() as u64).max(1);
        arguments.push(
            device
                .allocate_buffer(BufferParams::host_visible(), size)
                .map_err(err("input buffer"))?,
        );
    }
    let results = session
        .allocate_results(&mut device, function, ResultMemory::DeviceLocal)
        .map_err(err("result buffers"))?;
    let argument_spans: Vec<BufferSpan> = arguments.iter().map(|b| BufferSpan::whole(*b)).collect();
    let result_spans: Vec<BufferSpan> = results.iter().map(|b| BufferSpan::whole(*b)).collect();
    let mut all_outputs = Vec::with_capacity(cases.len());
    let mut times = Vec::with_capacity(repeats.max(1) * cases.len());
    for inputs in cases {
        let mut outputs: Vec<Vec<u8>> = lowered
            .outputs
            .iter()
            .map(|t| vec![0u8; t.byte_size()])
            .collect();
        for _ in 0..repeats.max(1) {
            let start = Instant::now();
            for (span, bytes) in argument_spans.iter().zip(inputs.iter()) {
                device
                    .write_buffer(*span, bytes)
                    .map_err(err("write an input"))?;
            }
            session
                .invoke(
                    &mut device,
                    function,
                    &argument_spans,
                    &result_spans,
                    QueueAffinity::ANY,
                )
                .map_err(err("invoke"))?;
            for (span, out) in result_spans.iter().zip(&mut outputs) {
                device
                    .read_buffer(*span, out)
                    .map_err(err("read an output"))?;
            }
            times.push(start.elapsed());
        }
        all_outputs.push(outputs);
    }
    times.sort();
    for buffer in arguments.into_iter().chain(results.iter().copied()) {
        device.release_buffer(buffer).map_err(err("release"))?;
    }
    session
        .release(&mut device)
        .map_err(err("release the session"))?;
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    Ok((all_outputs, median))
}

/// Checks one input set against what `lowered` takes.
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
