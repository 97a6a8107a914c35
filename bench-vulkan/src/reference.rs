//! Section 4, second part: the reference `.tflite` models (`../shared/models`, or the
//! directory in `EMBER_MODELS`) imported with `ember-import` and run end to end on the
//! Vulkan driver: the latency of one inference (write the inputs, invoke, read the
//! outputs; inputs and results in host-visible memory, mapped) and the time per inference
//! with several in flight, next to the local CPU driver on the same lowered module in the
//! same run. Each model is lowered for a GPU ([`LowerOptions::for_gpu`]); where that fuses
//! ops, the host's lowering runs too, in the same run. Every Vulkan output is checked
//! against the local driver's (int8 bit for bit, float within 1e-5 relative).

use ember_import::{lower_with, parse, ElementType, LowerOptions, Lowered};
use ember_run::{run_local, DeviceModel};
use hal_core::memory::BufferParams;
use hal_core::session::ResultMemory;
use hal_core::{Device, Timeout};
use hal_vulkan::VulkanDevice;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

/// How long each model runs untimed before it is measured.
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(300);

/// The reference models, by path under the models directory.
pub const MODELS: &[&str] = &[
    "microflow/sine.tflite",
    "tflm/hello_world_int8.tflite",
    "tflm/hello_world_float.tflite",
    "tflm/simple_add_model.tflite",
    "tflm/micro_speech_quantized.tflite",
    "tflm/magic_wand.tflite",
    "tflm/person_detect.tflite",
    "mlperf_tiny/kws_ref_model.tflite",
    "mlperf_tiny/pretrainedResnet_quant.tflite",
    "mlperf_tiny/ad01_int8.tflite",
];

/// Where the models are: `EMBER_MODELS`, else `../shared/models` from the repository root.
pub fn models_dir() -> PathBuf {
    std::env::var_os("EMBER_MODELS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/models"),
        PathBuf::from,
    )
}

/// Seeded inputs: int8 over the full range, floats in [-1, 1).
fn inputs(lowered: &Lowered) -> Vec<Vec<u8>> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    lowered
        .inputs
        .iter()
        .map(|t| match t.element_type {
            ElementType::Float32 => (0..t.byte_size() / 4)
                .flat_map(|_| (((next() >> 40) as f32 / 8_388_608.0) - 1.0).to_le_bytes())
                .collect(),
            _ => (0..t.byte_size()).map(|_| next() as u8).collect(),
        })
        .collect()
}

/// Whether Vulkan's outputs are the local driver's: bytes equal, or for float outputs
/// within 1e-5 relative (1e-6 absolute near zero).
fn same(lowered: &Lowered, vulkan: &[Vec<u8>], local: &[Vec<u8>]) -> bool {
    lowered
        .outputs
        .iter()
        .zip(vulkan.iter().zip(local))
        .all(|(t, (v, l))| match t.element_type {
            ElementType::Float32 => v.chunks_exact(4).zip(l.chunks_exact(4)).all(|(a, b)| {
                let a = f32::from_le_bytes([a[0], a[1], a[2], a[3]]);
                let b = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                (a - b).abs() <= (b.abs() * 1e-5).max(1e-6)
            }),
            _ => v == l,
        })
}

fn median_us(mut ns: Vec<u64>) -> f64 {
    ns.sort_unstable();
    ns[ns.len() / 2] as f64 / 1e3
}

/// Each dispatch of the last inference with its GPU time, where the device times
/// dispatches (`EMBER_VULKAN_PROFILE=1`), printed and as JSON; `null` otherwise.
pub(crate) fn dispatch_profile(device: &mut VulkanDevice<'static>) -> Result<Value, String> {
    let times = device
        .dispatch_times()
        .map_err(|e| format!("dispatch times: {e}"))?;
    if times.is_empty() {
        return Ok(Value::Null);
    }
    let total: f64 = times.iter().map(|t| t.nanos).sum();
    println!(
        "   {} dispatches, {:.1} µs on the GPU:",
        times.len(),
        total / 1e3
    );
    for (i, t) in times.iter().enumerate() {
        println!(
            "     {i:>3} {:<22} {:>6.1} µs  grid {:?}",
            t.kernel,
            t.nanos / 1e3,
            t.grid
        );
    }
    Ok(json!(times
        .iter()
        .map(|t| json!({"kernel": t.kernel, "grid": t.grid, "us": t.nanos / 1e3}))
        .collect::<Vec<_>>()))
}

/// One model: latency and in-flight time per inference on `device`, the local driver's
/// latency, or why it did not run.
fn one(
    device: &mut VulkanDevice<'static>,
    lowered: &Lowered,
    iters: usize,
    in_flight: usize,
) -> Result<Value, String> {
    let owned = inputs(lowered);
    let refs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    let local = run_local(lowered, &refs, 1, iters)?;
    let (iters, in_flight) = (iters.max(1), in_flight.max(1));
    let mut models = Vec::with_capacity(in_flight);
    let made = (0..in_flight).try_for_each(|_| {
        models.push(DeviceModel::new(
            device,
            lowered,
            BufferParams::host_visible(),
            ResultMemory::Mappable,
        )?);
        Ok::<(), String>(())
    });
    let run = made.and_then(|()| {
        let model = &mut models[0];
        // One untimed inference records and memoizes the command buffer.
        model.write_inputs(device, &refs)?;
        model.invoke(device)?;
        model.read_outputs(device)?;
        if !same(lowered, model.outputs(), &local.outputs) {
            return Err("outputs differ from the local driver's".to_string());
        }
        // A GPU raises its clocks under sustained work only: run for a while untimed, as
        // IREE's benchmark does before it measures.
        let warm = Instant::now();
        while warm.elapsed() < WARM_UP {
            model.write_inputs(device, &refs)?;
            model.invoke(device)?;
            model.read_outputs(device)?;
        }
        let mut ns = Vec::with_capacity(iters);
        for _ in 0..iters {
            let start = Instant::now();
            model.write_inputs(device, &refs)?;
            model.invoke(device)?;
            model.read_outputs(device)?;
            ns.push(start.elapsed().as_nanos() as u64);
        }
        let profile = dispatch_profile(device)?;
        for m in models.iter_mut() {
            m.write_inputs(device, &refs)?;
            m.invoke(device)?;
        }
        let rounds = iters.div_ceil(in_flight);
        let start = Instant::now();
        for _ in 0..rounds {
            let mut last = None;
            for m in models.iter_mut() {
                last = Some(m.enqueue(device)?);
            }
            if let Some(last) = last {
                device
                    .wait_semaphores(&[last], Timeout::Infinite)
                    .map_err(|e| format!("wait: {e}"))?;
            }
        }
        let flight_us = start.elapsed().as_secs_f64() * 1e6 / (rounds * in_flight) as f64;
        for m in models.iter_mut() {
            m.read_outputs(device)?;
            if !same(lowered, m.outputs(), &local.outputs) {
                return Err("outputs in flight differ from the local driver's".to_string());
            }
        }
        Ok((median_us(ns), flight_us, profile))
    });
    // Whatever happened, nothing is left allocated (the driver frees what pending work
    // may still use once the device is past it).
    let mut released = Ok(());
    for m in models {
        released = released.and(m.release(device));
    }
    let (latency_us, flight_us, profile) = run?;
    released?;
    let local_us = local.per_inference.as_secs_f64() * 1e6;
    Ok(json!({
        "dispatch_us": profile,
        "latency_median_us": latency_us,
        "in_flight": in_flight,
        "in_flight_us_per_inference": flight_us,
        "local_median_us": local_us,
        "vulkan_over_local": latency_us / local_us,
    }))
}

/// Dispatches in the lowered module's function.
fn dispatches(lowered: &Lowered) -> usize {
    hal_core::module::Module::parse(&lowered.built.bytes)
        .ok()
        .and_then(|m| {
            let (_, f) = m.function(ember_import::FUNCTION)?;
            Some(
                f.steps
                    .iter()
                    .filter(|s| matches!(s, hal_core::module::Step::Dispatch { .. }))
                    .count(),
            )
        })
        .unwrap_or(0)
}

/// Every reference model found, `iters` timed inferences each, `in_flight` in the
/// throughput run.
pub fn run(device: &mut VulkanDevice<'static>, iters: usize, in_flight: usize) -> Value {
    let dir = models_dir();
    let mut out = serde_json::Map::new();
    for path in MODELS {
        let name = path
            .rsplit('/')
            .next()
            .unwrap_or(path)
            .trim_end_matches(".tflite");
        let result = std::fs::read(dir.join(path))
            .map_err(|e| format!("{}: {e}", dir.join(path).display()))
            .and_then(|bytes| {
                let graph = parse(&bytes).map_err(|e| e.to_string())?;
                let lower =
                    |options| lower_with(&graph, "model", options).map_err(|e| e.to_string());
                // A GPU's lowering; where it fuses ops, the host's too, in the same run.
                let (gpu, host) = (
                    lower(LowerOptions::for_gpu())?,
                    lower(LowerOptions::default())?,
                );
                let mut v = one(device, &gpu, iters, in_flight)?;
                v["dispatches"] = json!(dispatches(&gpu));
                if dispatches(&host) != dispatches(&gpu) {
                    let unfused = one(device, &host, iters, in_flight)?;
                    v["unfused"] = json!({
                        "dispatches": dispatches(&host),
                        "latency_median_us": unfused["latency_median_us"],
                        "in_flight_us_per_inference": unfused["in_flight_us_per_inference"],
                    });
                }
                Ok(v)
            });
        match result {
            Ok(v) => {
                println!(
                    "   {name}: {:.1} µs median end to end, {:.1} µs per inference with {in_flight} \
                     in flight; local driver {:.1} µs ({:.2}×)",
                    v["latency_median_us"].as_f64().unwrap_or(f64::NAN),
                    v["in_flight_us_per_inference"].as_f64().unwrap_or(f64::NAN),
                    v["local_median_us"].as_f64().unwrap_or(f64::NAN),
                    v["vulkan_over_local"].as_f64().unwrap_or(f64::NAN),
                );
                if let Some(u) = v.get("unfused") {
                    let fused = v["latency_median_us"].as_f64().unwrap_or(f64::NAN);
                    let apart = u["latency_median_us"].as_f64().unwrap_or(f64::NAN);
                    println!(
                        "   {name}: {} dispatches; the host's lowering ({} dispatches, depthwise and \
                         pointwise apart) {apart:.1} µs median, {:.1} µs in flight: fused {:.2}× faster",
                        v["dispatches"],
                        u["dispatches"],
                        u["in_flight_us_per_inference"].as_f64().unwrap_or(f64::NAN),
                        apart / fused,
                    );
                }
                out.insert(name.into(), v);
            }
            Err(e) => {
                println!("   {name}: not run: {e}");
                out.insert(name.into(), json!({ "not_run": e }));
            }
        }
    }
    let messages = device.validation_messages();
    out.insert("validation_messages".into(), json!(messages));
    Value::Object(out)
}
