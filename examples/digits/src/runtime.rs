//! Running the packed digits module through a [`Session`]: on the local-CPU driver
//! ([`run`]), on the Vulkan driver ([`run_vulkan`], feature `vulkan`), or on any device
//! ([`run_on`]).

use hal_core::module::Module;
use hal_core::session::{LoadOptions, ResultMemory, Session, SessionStats};
use hal_core::{Buffer, BufferSpan, Device, QueueAffinity};
use hal_local::alloc::Tlsf;
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use std::time::{Duration, Instant};

/// The tables of the device the demo runs on, sized for one small model (16 objects, 64
/// command slots, 32 allocator nodes, 4 pending operations).
pub type DigitsStorage = LocalStorage<16, 64, 32, 4>;
/// The device the demo runs on.
pub type DigitsDevice = LocalDevice<'static, Tlsf<32>>;
/// The session type: 4 executables, 8 constants, 2 memoized command buffers.
pub type DigitsSession = Session<'static, 4, 8, 2>;

/// Bytes of the device's memory region: inputs, results and the transient arena (the
/// constants are imported in place, so they need none).
pub const REGION_BYTES: usize = 16 * 1024;
/// Of which, at the end, the arena `queue_alloca` serves transients from.
pub const TRANSIENT_BYTES: u64 = 4 * 1024;

/// What one run measured.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Predicted class per image.
    pub predictions: Vec<u8>,
    /// Wall time of all invocations (upload, invoke, read back).
    pub elapsed: Duration,
    /// Session figures (constants imported or streamed, arena, replays).
    pub session: SessionStats,
    /// Bytes of the device and its tables (`size_of` the device, plus its storage's where
    /// the tables are apart from it).
    pub device_table_bytes: usize,
    /// Bytes of the session's tables (`size_of::<DigitsSession>()`).
    pub session_table_bytes: usize,
    /// Peak bytes in use in the device's general heap.
    pub heap_peak_bytes: u64,
}

fn err(what: &str) -> impl Fn(hal_core::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// Loads `module` (bytes that live for the program) onto a fresh local device and
/// classifies every image of `features`.
pub fn run(module: &'static [u8], features: &[[f32; 64]]) -> Result<RunReport, String> {
    let region: &'static mut [u8] = Box::leak(vec![0u8; REGION_BYTES].into_boxed_slice());
    let config = LocalConfig {
        transient_bytes: TRANSIENT_BYTES,
        ..LocalConfig::default()
    };
    let storage: &'static mut DigitsStorage = Box::leak(Box::new(DigitsStorage::EMPTY));
    let mut device: DigitsDevice =
        LocalDevice::new(storage, region, config).map_err(err("device"))?;
    let mut report = run_on(&mut device, module, features)?;
    report.device_table_bytes += size_of::<DigitsStorage>();
    Ok(report)
}

/// Loads `module` onto a Vulkan device (`EMBER_VULKAN_DEVICE` picks it, the Khronos
/// validation layer is on with `EMBER_VULKAN_VALIDATION=1`) and classifies every image of
/// `features`. Fails if the validation layer reported anything.
#[cfg(feature = "vulkan")]
pub fn run_vulkan(module: &'static [u8], features: &[[f32; 64]]) -> Result<RunReport, String> {
    let mut device = hal_vulkan::VulkanDevice::new(hal_vulkan::VulkanConfig::default())
        .map_err(err("device"))?;
    let report = run_on(&mut device, module, features)?;
    let messages = device.validation_messages();
    if messages != 0 {
        return Err(format!(
            "the validation layer reported {messages} warnings or errors"
        ));
    }
    Ok(report)
}

/// Loads `module` onto `device` and classifies every image of `features`: each image is
/// written into a device buffer, the `classify` function invoked, the probabilities read back.
/// Fails if anything is left on the device afterwards.
pub fn run_on<D>(
    device: &mut D,
    module: &'static [u8],
    features: &[[f32; 64]],
) -> Result<RunReport, String>
where
    D: Device,
    D::HostMemory: From<&'static [u8]>,
{
    let module = Module::parse(module).map_err(|e| e.to_string())?;
    let device_table_bytes = size_of::<D>();
    let mut session = DigitsSession::load(device, module, LoadOptions::default())
        .map_err(|e| format!("load: {e}"))?;
    let classify = session
        .function(crate::model::FUNCTION)
        .ok_or("module has no `classify` function")?;
    let image = device
        .allocate_buffer(hal_core::memory::BufferParams::device_local(), 64 * 4)
        .map_err(err("input buffer"))?;
    let results = session
        .allocate_results(device, classify, ResultMemory::DeviceLocal)
        .map_err(err("result buffer"))?;
    let probabilities: Buffer = results[0];

    let mut predictions = Vec::with_capacity(features.len());
    let mut bytes = [0u8; 64 * 4];
    let mut out = [0u8; 10 * 4];
    let start = Instant::now();
    for x in features {
        for (b, v) in bytes.chunks_exact_mut(4).zip(x) {
            b.copy_from_slice(&v.to_le_bytes());
        }
        device
            .write_buffer(BufferSpan::whole(image), &bytes)
            .map_err(err("write image"))?;
        session
            .invoke(
                device,
                classify,
                &[BufferSpan::whole(image)],
                &[BufferSpan::whole(probabilities)],
                QueueAffinity::ANY,
            )
            .map_err(err("invoke"))?;
        device
            .read_buffer(BufferSpan::whole(probabilities), &mut out)
            .map_err(err("read probabilities"))?;
        let p: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        predictions.push(crate::argmax(&p) as u8);
    }
    let elapsed = start.elapsed();
    let heap_peak_bytes = device.allocator_stats(0).map_or(0, |s| s.peak_bytes_in_use);
    let stats = session.stats();
    device.release_buffer(image).map_err(err("release"))?;
    device
        .release_buffer(probabilities)
        .map_err(err("release"))?;
    session.release(device).map_err(err("release session"))?;
    let leaked = device.object_counts();
    if leaked != Default::default() {
        return Err(format!("objects left on the device: {leaked:?}"));
    }
    Ok(RunReport {
        predictions,
        elapsed,
        session: stats,
        device_table_bytes,
        session_table_bytes: size_of::<DigitsSession>(),
        heap_peak_bytes,
    })
}

#[cfg(test)]
mod tests {
    use crate::test_support::{held_out, trained};
    use crate::{predict_f64, score};

    /// The whole main job in a test: pack, load, classify every held-out image; the runtime
    /// agrees with the float64 reference on at least 99.9% and scores at least 95%.
    #[test]
    fn runtime_matches_the_f64_reference() {
        let packed = ember_pack::pack(
            &crate::model::description(trained()),
            std::path::Path::new("."),
        )
        .expect("packs");
        let module: &'static [u8] = Box::leak(packed.bytes.into_boxed_slice());
        let held_out = held_out();
        let report = super::run(module, &held_out.features()).expect("runs");
        let reference: Vec<u8> = held_out
            .features()
            .iter()
            .map(|x| predict_f64(trained(), x))
            .collect();
        let agreement = score(&reference, &report.predictions);
        assert!(agreement.fraction() >= 0.999, "agreement {agreement}");
        let accuracy = score(&held_out.labels, &report.predictions);
        assert!(accuracy.fraction() >= 0.95, "accuracy {accuracy}");
        assert_eq!(report.session.recorded, 1);
        assert_eq!(
            report.session.arena_peak, 192,
            "hidden (128 B) and logits (64 → 64 B)"
        );
    }
}
