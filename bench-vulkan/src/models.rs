//! Section 4: models end to end. For each model: the latency of one inference (write the
//! input, invoke, read the results) with inputs and results in device-local memory (staged
//! where the device has memory the host cannot see) and in host-visible memory (mapped, no
//! staging copy), the throughput with several invocations in flight, and the local CPU
//! driver on the same module in the same run. Every Vulkan result is checked against the
//! local driver's.
//!
//! Models: digits (the main job's MLP, trained here on the repository's data set), then the
//! reference `.tflite` models ([`crate::reference`]).

use ember_digits::{Digits, TrainConfig};
use hal_core::memory::BufferParams;
use hal_core::module::Module;
use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{BufferSpan, Device, QueueAffinity, Timeout};
use hal_vulkan::{VulkanConfig, VulkanDevice};
use serde_json::{json, Value};
use std::time::Instant;

/// Invocations in flight in the throughput runs.
pub const IN_FLIGHT: usize = 8;

type DigitsSession = Session<'static, 4, 8, 2>;

/// The digits modules (64-byte aligned, never freed) and the held-out images.
struct DigitsModules {
    /// As a GPU runs it: one `mlp_softmax_f32` dispatch.
    gpu: &'static [u8],
    /// As a CPU runs it: three dispatches, two barriers, transients in an arena.
    layered: &'static [u8],
    /// The same function as one `noop` dispatch: what a session's round trip costs on its
    /// own (it computes nothing, so its results are not checked).
    floor: &'static [u8],
    features: Vec<[f32; 64]>,
}

fn digits() -> Result<DigitsModules, String> {
    let path = Digits::default_path();
    let data = if path.exists() {
        Digits::load_default()?
    } else {
        // Run from the repository's root on a machine without the build tree.
        ember_digits::load("data/digits.csv.gz")?
    };
    let (train_half, held_out) = data.split();
    let mlp = ember_digits::train(&train_half, &TrainConfig::default(), |_, _, _, _| {});
    let pack = |description| -> Result<&'static [u8], String> {
        let packed = ember_pack::pack(&description, std::path::Path::new("."))
            .map_err(|e| format!("pack: {e}"))?;
        let bytes = aligned(packed.bytes.len());
        bytes.copy_from_slice(&packed.bytes);
        Ok(bytes)
    };
    let gpu = ember_digits::model::description_for_gpu(&mlp);
    let mut floor = gpu.clone();
    floor.constants.clear();
    floor.executables = vec![ember_pack::Executable {
        name: "noop".into(),
        kernel: "noop".into(),
        spirv: None,
        entry: None,
    }];
    floor.functions[0].steps = vec![ember_pack::Step::Dispatch(ember_pack::Dispatch {
        executable: "noop".into(),
        workgroups: [1, 1, 1],
        constants: vec![],
        bindings: vec![],
    })];
    Ok(DigitsModules {
        gpu: pack(gpu)?,
        layered: pack(ember_digits::model::description(&mlp))?,
        floor: pack(floor)?,
        features: held_out.features(),
    })
}

/// `len` zero bytes starting on a 64-byte boundary, never freed.
fn aligned(len: usize) -> &'static mut [u8] {
    let memory: &'static mut [u8] = Box::leak(vec![0u8; len + 64].into_boxed_slice());
    let skip = memory.as_ptr().align_offset(64);
    &mut memory[skip..skip + len]
}

/// Nanoseconds: median, 90th percentile, mean.
fn summary(mut ns: Vec<u64>) -> Value {
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize] as f64 / 1e3;
    let mean = ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1e3;
    json!({ "median_us": at(0.5), "p90_us": at(0.9), "mean_us": mean })
}

fn as_bytes(x: &[f32; 64]) -> Vec<u8> {
    x.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn argmax(out: &[u8]) -> u8 {
    let p: Vec<f32> = out
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    ember_digits::argmax(&p) as u8
}

/// Where the bench keeps inputs and results.
#[derive(Clone, Copy)]
enum Placement {
    /// Device-local (behind staging where the host cannot see it).
    DeviceLocal,
    /// Host-visible, read and written through mappings.
    Mapped,
    /// Inputs in device-local memory the host maps (a discrete GPU's BAR), results
    /// host-visible: the kernels load nothing across the bus.
    MappedOnDevice,
}

impl Placement {
    fn params(self) -> (BufferParams, ResultMemory) {
        match self {
            Placement::DeviceLocal => (BufferParams::device_local(), ResultMemory::DeviceLocal),
            Placement::Mapped => (BufferParams::host_visible(), ResultMemory::Mappable),
            Placement::MappedOnDevice => (
                BufferParams::device_local_mappable(),
                ResultMemory::Mappable,
            ),
        }
    }
}

/// Latency of one inference at a time over `iters` images, checked against `expected`
/// (unchecked where it is empty).
fn latency(
    device: &mut VulkanDevice<'static>,
    session: &mut DigitsSession,
    features: &[[f32; 64]],
    expected: &[u8],
    iters: usize,
    placement: Placement,
) -> Result<Value, String> {
    let f = session
        .function(ember_digits::model::FUNCTION)
        .ok_or("no classify")?;
    let (input_params, result_memory) = placement.params();
    let image = device
        .allocate_buffer(input_params, 64 * 4)
        .map_err(|e| format!("input: {e}"))?;
    let results = session
        .allocate_results(device, f, result_memory)
        .map_err(|e| format!("results: {e}"))?;
    let replays = device.memoized_replays();
    let (submissions, waits, staged, waited) = (
        device.submissions(),
        device.host_waits(),
        device.staged_transfers(),
        device.gpu_wait_nanos(),
    );
    let mut ns = Vec::with_capacity(iters);
    // Each inference's parts: writing the input, invoking (submit and wait), reading back.
    let mut parts = [(); 3].map(|()| Vec::with_capacity(iters));
    let mut out = [0u8; 40];
    for i in 0..iters {
        let k = i % features.len();
        let bytes = as_bytes(&features[k]);
        let start = Instant::now();
        device
            .write_buffer(BufferSpan::whole(image), &bytes)
            .map_err(|e| format!("write: {e}"))?;
        let written = Instant::now();
        session
            .invoke(
                device,
                f,
                &[BufferSpan::whole(image)],
                &[BufferSpan::whole(results[0])],
                QueueAffinity::ANY,
            )
            .map_err(|e| format!("invoke: {e}"))?;
        let invoked = Instant::now();
        device
            .read_buffer(BufferSpan::whole(results[0]), &mut out)
            .map_err(|e| format!("read: {e}"))?;
        let read = Instant::now();
        ns.push((read - start).as_nanos() as u64);
        for (part, (from, to)) in
            parts
                .iter_mut()
                .zip([(start, written), (written, invoked), (invoked, read)])
        {
            part.push((to - from).as_nanos() as u64);
        }
        if !expected.is_empty() && argmax(&out) != expected[k] {
            return Err(format!("image {k}: not the local driver's prediction"));
        }
    }
    let per = |n: u64| n as f64 / iters as f64;
    let total: u64 = ns.iter().sum();
    let host_us = per(total.saturating_sub(device.gpu_wait_nanos() - waited)) / 1e3;
    let [write, invoke, read] = parts;
    let report = json!({
        "host_us": host_us,
        "latency": summary(ns),
        "write_us": summary(write),
        "invoke_us": summary(invoke),
        "read_us": summary(read),
        "submissions_per_inference": per(device.submissions() - submissions),
        "replays_per_inference": per(device.memoized_replays() - replays),
        "host_waits_per_inference": per(device.host_waits() - waits),
        "staged_transfers_per_inference": per(device.staged_transfers() - staged),
    });
    device.release_buffer(image).map_err(|e| e.to_string())?;
    device
        .release_buffer(results[0])
        .map_err(|e| e.to_string())?;
    Ok(report)
}

/// Throughput with `IN_FLIGHT` invocations in flight (host-visible inputs and results).
fn throughput(
    device: &mut VulkanDevice<'static>,
    session: &mut DigitsSession,
    features: &[[f32; 64]],
    expected: &[u8],
    rounds: usize,
) -> Result<Value, String> {
    let f = session
        .function(ember_digits::model::FUNCTION)
        .ok_or("no classify")?;
    let mut slots = Vec::new();
    for _ in 0..IN_FLIGHT {
        let image = device
            .allocate_buffer(BufferParams::host_visible(), 64 * 4)
            .map_err(|e| format!("input: {e}"))?;
        let results = session
            .allocate_results(device, f, ResultMemory::Mappable)
            .map_err(|e| format!("results: {e}"))?;
        slots.push((image, results[0]));
    }
    let mut out = [0u8; 40];
    let mut enqueue_ns = 0u128;
    let start = Instant::now();
    for round in 0..rounds {
        let base = round * IN_FLIGHT;
        for (j, &(image, _)) in slots.iter().enumerate() {
            let bytes = as_bytes(&features[(base + j) % features.len()]);
            device
                .write_buffer(BufferSpan::whole(image), &bytes)
                .map_err(|e| format!("write: {e}"))?;
        }
        let mut last = None;
        let enqueued = Instant::now();
        for &(image, result) in &slots {
            let done = session
                .enqueue(
                    device,
                    f,
                    &[BufferSpan::whole(image)],
                    &[BufferSpan::whole(result)],
                    QueueAffinity::ANY,
                )
                .map_err(|e| format!("enqueue: {e}"))?;
            last = Some(done);
        }
        enqueue_ns += enqueued.elapsed().as_nanos();
        if let Some(last) = last {
            device
                .wait_semaphores(&[last], Timeout::Infinite)
                .map_err(|e| format!("wait: {e}"))?;
        }
        for (j, &(_, result)) in slots.iter().enumerate() {
            device
                .read_buffer(BufferSpan::whole(result), &mut out)
                .map_err(|e| format!("read: {e}"))?;
            let k = (base + j) % features.len();
            if !expected.is_empty() && argmax(&out) != expected[k] {
                return Err(format!(
                    "image {k} in flight: not the local driver's prediction"
                ));
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let inferences = (rounds * IN_FLIGHT) as f64;
    for (image, result) in slots {
        device.release_buffer(image).map_err(|e| e.to_string())?;
        device.release_buffer(result).map_err(|e| e.to_string())?;
    }
    Ok(json!({
        "in_flight": IN_FLIGHT,
        "inferences_per_second": inferences / seconds,
        "us_per_inference": seconds * 1e6 / inferences,
        "enqueue_us": enqueue_ns as f64 / 1e3 / inferences,
    }))
}

/// The run of the noop module.
const FLOOR: &str = "polling, the floor (one noop dispatch)";

/// Section 4 with `iters` timed inferences per digits variant and `reference_iters` per
/// reference model, on devices made from `config`.
pub fn run(config: &VulkanConfig, iters: usize, reference_iters: usize) -> Result<Value, String> {
    let modules = digits()?;
    let features = modules.features;
    let local =
        ember_digits::runtime::run(modules.gpu, &features).map_err(|e| format!("local: {e}"))?;
    let local_us = local.elapsed.as_secs_f64() * 1e6 / features.len() as f64;
    let layered_local = ember_digits::runtime::run(modules.layered, &features)
        .map_err(|e| format!("local: {e}"))?;
    let layered_local_us = layered_local.elapsed.as_secs_f64() * 1e6 / features.len() as f64;
    let expected = local.predictions;
    if layered_local.predictions != expected {
        return Err("the two digits modules predict differently on the local driver".into());
    }
    let mut variants = serde_json::Map::new();
    // The GPU's module, using the caller's buffers in place, on the default device (host
    // waits poll before they sleep), then on one whose waits sleep at once; then staged
    // through the arena; then the CPU's three dispatches as before (staged); then the floor:
    // the same code, in the same run.
    let in_place = LoadOptions {
        stage_io: false,
        ..LoadOptions::default()
    };
    let staged = LoadOptions::default();
    let spin_wait = config.spin_wait_nanos;
    let runs = [
        ("polling", modules.gpu, spin_wait, in_place, local_us),
        ("sleeping", modules.gpu, 0, in_place, local_us),
        ("polling, staged", modules.gpu, spin_wait, staged, local_us),
        (
            "polling, three dispatches, staged",
            modules.layered,
            spin_wait,
            staged,
            layered_local_us,
        ),
        (FLOOR, modules.floor, spin_wait, in_place, local_us),
    ];
    for (name, module, spin, options, local_us) in runs {
        let mut device = VulkanDevice::new(VulkanConfig {
            spin_wait_nanos: spin,
            ..config.clone()
        })
        .map_err(|e| format!("Vulkan device: {e}"))?;
        let parsed = Module::parse(module).map_err(|e| e.to_string())?;
        let mut session =
            DigitsSession::load(&mut device, parsed, options).map_err(|e| format!("load: {e}"))?;
        let d = &mut device;
        let s = &mut session;
        let expected: &[u8] = if name == FLOOR { &[] } else { &expected };
        // One untimed pass records and memoizes the command buffer and warms the heaps.
        latency(d, s, &features, expected, features.len(), Placement::Mapped)?;
        let mapped = latency(d, s, &features, expected, iters, Placement::Mapped)?;
        // The last inference's dispatches, where the device times them.
        let profile = crate::reference::dispatch_profile(d)?;
        // Where the device has device-local memory the host maps (else `null`).
        let mappable = BufferParams::device_local_mappable();
        let on_device = if d.heaps().iter().any(|h| h.check(&mappable).is_ok()) {
            latency(d, s, &features, expected, iters, Placement::MappedOnDevice)?
        } else {
            Value::Null
        };
        let device_local = latency(d, s, &features, expected, iters, Placement::DeviceLocal)?;
        let flight = throughput(d, s, &features, expected, iters.div_ceil(IN_FLIGHT))?;
        let stages_io = session.stages_io();
        session
            .release(&mut device)
            .map_err(|e| format!("release: {e}"))?;
        let messages = device.validation_messages();
        if messages != 0 {
            return Err(format!("the validation layer reported {messages} messages"));
        }
        let med = |v: &Value| v["latency"]["median_us"].as_f64().unwrap_or(f64::NAN);
        let per = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let flight_us = flight["us_per_inference"].as_f64().unwrap_or(f64::NAN);
        let inputs_on_device = if on_device.is_null() {
            String::new()
        } else {
            format!(
                "; inputs in device-local mapped memory {:.1} µs",
                med(&on_device)
            )
        };
        println!(
            "   digits, host waits {name}: mapped buffers {:.1} µs median ({:.1} µs on the host; \
             {:.0} submission, {:.0} wait, {:.0} staging copies per inference) = {:.2}× the \
             local driver{inputs_on_device}; device-local buffers {:.1} µs ({:.0} submissions, \
             {:.0} staging copies); {IN_FLIGHT} in flight {:.1} µs per inference ({:.1} µs per \
             enqueue)",
            med(&mapped),
            per(&mapped, "host_us"),
            per(&mapped, "submissions_per_inference"),
            per(&mapped, "host_waits_per_inference"),
            per(&mapped, "staged_transfers_per_inference"),
            med(&mapped) / local_us,
            med(&device_local),
            per(&device_local, "submissions_per_inference"),
            per(&device_local, "staged_transfers_per_inference"),
            flight_us,
            per(&flight, "enqueue_us"),
        );
        variants.insert(
            name.into(),
            json!({
                "spin_wait_ns": spin,
                "session_stages_io": stages_io,
                "mapped": mapped,
                "dispatch_us": profile,
                "inputs_on_device": on_device,
                "device_local": device_local,
                "in_flight": flight,
            }),
        );
    }
    println!(
        "   digits on the local driver: {local_us:.2} µs per inference in one dispatch, \
         {layered_local_us:.2} in three (mean, same run)"
    );
    let mut device =
        VulkanDevice::new(config.clone()).map_err(|e| format!("Vulkan device: {e}"))?;
    let reference = crate::reference::run(&mut device, reference_iters, IN_FLIGHT);
    Ok(json!({
        "digits": {
            "images": features.len(),
            "timed": iters,
            "local_us_per_inference": local_us,
            "local_three_dispatches_us_per_inference": layered_local_us,
            "vulkan": variants,
        },
        "reference_models": reference,
    }))
}
