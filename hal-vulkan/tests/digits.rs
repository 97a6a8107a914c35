//! The digits main job on the Vulkan driver: the same packed module, loaded through a
//! `Session`, classifies every held-out image with the same predictions as the local driver
//! (and so the same accuracy), with the validation layer on and nothing leaked; so does the
//! GPU's one-dispatch module (`description_for_gpu`).

mod common;

use ember_digits::{predict_f64, score, Digits, TrainConfig};
use hal_core::module::{Module, Step};
use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{BufferSpan, Device, QueueAffinity};
use hal_vulkan::{VulkanConfig, VulkanDevice};

/// Classifies every image of `features` with `module` on `device`.
fn classify<D: Device>(device: &mut D, module: &'static [u8], features: &[[f32; 64]]) -> Vec<u8>
where
    D::HostMemory: From<&'static [u8]>,
{
    classify_with(device, module, features, LoadOptions::default())
}

/// [`classify`], the session loaded with `options`.
fn classify_with<D: Device>(
    device: &mut D,
    module: &'static [u8],
    features: &[[f32; 64]],
    options: LoadOptions,
) -> Vec<u8>
where
    D::HostMemory: From<&'static [u8]>,
{
    let module = Module::parse(module).expect("module parses");
    let mut session = Session::<'static, 4, 8, 2>::load(device, module, options).expect("loads");
    let f = session
        .function(ember_digits::model::FUNCTION)
        .expect("classify");
    let image = device
        .allocate_buffer(hal_core::memory::BufferParams::device_local(), 64 * 4)
        .expect("input");
    let results = session
        .allocate_results(device, f, ResultMemory::DeviceLocal)
        .expect("results");
    let mut predictions = Vec::with_capacity(features.len());
    let mut bytes = [0u8; 64 * 4];
    let mut out = [0u8; 10 * 4];
    for x in features {
        for (b, v) in bytes.chunks_exact_mut(4).zip(x) {
            b.copy_from_slice(&v.to_le_bytes());
        }
        device
            .write_buffer(BufferSpan::whole(image), &bytes)
            .expect("write image");
        session
            .invoke(
                device,
                f,
                &[BufferSpan::whole(image)],
                &[BufferSpan::whole(results[0])],
                QueueAffinity::ANY,
            )
            .expect("invoke");
        device
            .read_buffer(BufferSpan::whole(results[0]), &mut out)
            .expect("read");
        let p: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        predictions.push(ember_digits::argmax(&p) as u8);
    }
    device.release_buffer(image).expect("release");
    device.release_buffer(results[0]).expect("release");
    session.release(device).expect("release session");
    assert_eq!(device.object_counts(), Default::default());
    predictions
}

#[test]
fn digits_match_the_local_driver() {
    let _alone = common::alone();
    let (module, mlp, held_out) = digits_module();
    let features = held_out.features();

    let local = ember_digits::runtime::run(module, &features).expect("local run");
    let gpu = pack(&ember_digits::model::description_for_gpu(&mlp));
    let gpu_local = ember_digits::runtime::run(gpu, &features).expect("local run");
    assert_eq!(
        gpu_local.predictions, local.predictions,
        "both modules agree"
    );
    let in_place = LoadOptions {
        stage_io: false,
        ..LoadOptions::default()
    };
    for (name, module, options) in [
        ("three dispatches", module, LoadOptions::default()),
        ("one dispatch", gpu, LoadOptions::default()),
        ("one dispatch, buffers in place", gpu, in_place),
    ] {
        for emulate_device_only_heap in [false, true] {
            let mut device = VulkanDevice::new(VulkanConfig {
                validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
                heap_budget: 64 << 20,
                block_size: 4 << 20,
                emulate_device_only_heap,
                strict_teardown: true,
                ..VulkanConfig::default()
            })
            .expect("a Vulkan device");
            let vulkan = classify_with(&mut device, module, &features, options);
            let reference: Vec<u8> = features.iter().map(|x| predict_f64(&mlp, x)).collect();
            eprintln!(
                "{} ({name}, device-only heap {emulate_device_only_heap}): held out {}, vs f64 reference {}, vs local {}",
                device.device_name(),
                score(&held_out.labels, &vulkan),
                score(&reference, &vulkan),
                score(&local.predictions, &vulkan),
            );
            assert_eq!(
                vulkan, local.predictions,
                "{name}: the same predictions as the local driver"
            );
        }
    }
}

/// With profiling on, the last submission's dispatches come back in order, each named by
/// its kernel with a GPU time; without it, none do.
#[test]
fn profiled_dispatches_are_named_and_timed() {
    let _alone = common::alone();
    let (module, _, held_out) = digits_module();
    let features = &held_out.features()[..2];
    let parsed = Module::parse(module).expect("module parses");
    let mut kernels = Vec::new();
    parsed
        .check_kernels(|k| {
            kernels.push(k.to_string());
            true
        })
        .expect("kernels");
    let (_, f) = parsed
        .function(ember_digits::model::FUNCTION)
        .expect("classify");
    let expected: Vec<&str> = f
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Dispatch { executable, .. } => Some(kernels[executable as usize].as_str()),
            _ => None,
        })
        .collect();
    assert!(!expected.is_empty());
    for profile_dispatches in [true, false] {
        let config = VulkanConfig {
            validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
            strict_teardown: true,
            profile_dispatches,
            ..VulkanConfig::default()
        };
        let enabled = config.profiling_enabled();
        let mut device = VulkanDevice::new(config).expect("a Vulkan device");
        classify(&mut device, module, features);
        let times = device.dispatch_times().expect("dispatch times");
        if !device.profiling() {
            assert!(times.is_empty());
            if enabled {
                eprintln!("{}: no timestamps on its queue", device.device_name());
            }
            continue;
        }
        let names: Vec<&str> = times.iter().map(|t| t.kernel).collect();
        assert_eq!(names, expected, "one time per dispatch, in order");
        assert!(times.iter().all(|t| t.nanos.is_finite() && t.nanos >= 0.0));
        assert!(times.iter().all(|t| t.grid.iter().all(|&g| g > 0)));
    }
}

/// The packed digits module in 64-byte aligned memory that is never freed (so constants can
/// be imported in place), its model, and the held-out half of the data set.
fn digits_module() -> (&'static [u8], ember_digits::Mlp, ember_digits::Split) {
    let (train_half, held_out) = Digits::load_default().expect("data").split();
    let mlp = ember_digits::train(&train_half, &TrainConfig::default(), |_, _, _, _| {});
    let module = pack(&ember_digits::model::description(&mlp));
    (module, mlp, held_out)
}

/// `description` packed into 64-byte aligned memory that is never freed.
fn pack(description: &ember_pack::Description) -> &'static [u8] {
    let packed = ember_pack::pack(description, std::path::Path::new(".")).expect("packs");
    let module = aligned(packed.bytes.len());
    module.copy_from_slice(&packed.bytes);
    module
}

/// `len` zero bytes starting on a 64-byte boundary, never freed.
fn aligned(len: usize) -> &'static mut [u8] {
    let memory: &'static mut [u8] = Box::leak(vec![0u8; len + 64].into_boxed_slice());
    let skip = memory.as_ptr().align_offset(64);
    &mut memory[skip..skip + len]
}

/// Several invocations in flight: each `enqueue` is one GPU submission and no host wait;
/// the host waits once, for the last, and every result equals its own image's prediction.
/// Inputs and results in host-visible memory go through no staging copy where the device's
/// memory is unified (lavapipe), and nothing is left behind.
#[test]
fn invocations_in_flight_each_one_submission_and_no_host_wait() {
    let _alone = common::alone();
    let (module, mlp, held_out) = digits_module();
    let features = held_out.features();
    const IN_FLIGHT: usize = 8;
    let mut device = VulkanDevice::new(VulkanConfig {
        validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
        strict_teardown: true,
        ..VulkanConfig::default()
    })
    .expect("a Vulkan device");
    let parsed = Module::parse(module).expect("module parses");
    let mut session =
        Session::<'static, 4, 8, 2>::load(&mut device, parsed, LoadOptions::default())
            .expect("loads");
    let f = session
        .function(ember_digits::model::FUNCTION)
        .expect("classify");
    let params = hal_core::memory::BufferParams::host_visible();
    let mut slots = Vec::new();
    for _ in 0..IN_FLIGHT {
        let image = device.allocate_buffer(params, 64 * 4).expect("input");
        let results = session
            .allocate_results(&mut device, f, ResultMemory::Mappable)
            .expect("results");
        slots.push((image, results[0]));
    }
    let unified = device.memory_domain(hal_core::memory::MemoryType::DEVICE_LOCAL)
        == hal_core::MemoryDomain::Host;
    let staged_before = device.staged_transfers();
    let mut predictions = Vec::new();
    for batch in features.chunks(IN_FLIGHT) {
        for (x, &(image, _)) in batch.iter().zip(&slots) {
            let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
            device
                .write_buffer(BufferSpan::whole(image), &bytes)
                .expect("write image");
        }
        let (waits, submissions) = (device.host_waits(), device.submissions());
        let mut last = None;
        for &(image, result) in &slots[..batch.len()] {
            last = Some(
                session
                    .enqueue(
                        &mut device,
                        f,
                        &[BufferSpan::whole(image)],
                        &[BufferSpan::whole(result)],
                        QueueAffinity::ANY,
                    )
                    .expect("enqueue"),
            );
        }
        assert_eq!(
            device.host_waits(),
            waits,
            "enqueue never waits for the GPU"
        );
        assert_eq!(
            device.submissions() - submissions,
            batch.len() as u64,
            "one submission per invocation"
        );
        let last = last.expect("a batch");
        device
            .wait_semaphores(&[last], hal_core::Timeout::Infinite)
            .expect("wait");
        assert_eq!(device.query_semaphore(last.semaphore), Ok(last.value));
        for &(_, result) in &slots[..batch.len()] {
            let mut out = [0u8; 40];
            device
                .read_buffer(BufferSpan::whole(result), &mut out)
                .expect("read");
            let p: Vec<f32> = out
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            predictions.push(ember_digits::argmax(&p) as u8);
        }
    }
    if unified {
        assert_eq!(
            device.staged_transfers(),
            staged_before,
            "no staging copy on unified memory"
        );
    }
    let local = ember_digits::runtime::run(module, &features).expect("local run");
    assert_eq!(
        predictions, local.predictions,
        "the local driver's predictions"
    );
    let reference: Vec<u8> = features.iter().map(|x| predict_f64(&mlp, x)).collect();
    let agreed = score(&reference, &predictions);
    assert!(agreed.correct * 100 >= agreed.total * 95, "{agreed:?}");
    for (image, result) in slots {
        device.release_buffer(image).expect("release");
        device.release_buffer(result).expect("release");
    }
    session.release(&mut device).expect("release session");
    assert_eq!(device.object_counts(), Default::default());
}
