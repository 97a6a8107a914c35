//! What several of the driver's test files share (each test binary uses a part of it).
#![allow(dead_code)]

use ember_import::Lowered;
use ember_run::{run_local, DeviceModel};
use hal_core::memory::BufferParams;
use hal_core::session::ResultMemory;
use hal_vulkan::{VulkanConfig, VulkanDevice};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A turn to run alone among the tests of one test binary that take it, held until
/// dropped; a test that panicked does not keep the others from theirs.
///
/// Tests that make devices with the validation layer on take one for their whole body:
/// the Khronos validation layer Debian 12 ships (1.3.239) keeps its per-device state in
/// one map for the whole process and reads it on every call without a lock, so a thread
/// that makes or drops a device while another calls into a different one can crash the
/// process (Vulkan-ValidationLayers issue 4391).
pub fn alone() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A device for the tests that run modules: the validation layer on unless
/// `EMBER_VULKAN_VALIDATION=0`, a 256 MiB heap budget in 16 MiB blocks, and a teardown that
/// fails if anything is left.
pub fn device() -> VulkanDevice<'static> {
    VulkanDevice::new(VulkanConfig {
        validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
        heap_budget: 256 << 20,
        block_size: 16 << 20,
        strict_teardown: true,
        ..VulkanConfig::default()
    })
    .expect("a Vulkan device")
}

/// A xorshift generator for random cases, the same on every run for a seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The first result of `lowered` on the local driver and on `device` (inputs written,
/// invoked, read back, released), in that order; any error panics, named by `what`.
pub fn first_result_on_both(
    device: &mut VulkanDevice<'static>,
    lowered: &Lowered,
    inputs: &[&[u8]],
    what: &str,
) -> (Vec<u8>, Vec<u8>) {
    let want = run_local(lowered, inputs, 1, 1)
        .unwrap_or_else(|e| panic!("{what}: local driver: {e}"))
        .outputs
        .remove(0);
    let mut model = DeviceModel::new(
        device,
        lowered,
        BufferParams::host_visible(),
        ResultMemory::DeviceLocal,
    )
    .unwrap_or_else(|e| panic!("{what}: load: {e}"));
    model
        .write_inputs(device, inputs)
        .and_then(|()| model.invoke(device))
        .and_then(|()| model.read_outputs(device))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = model.outputs()[0].clone();
    model.release(device).expect("release");
    (want, got)
}

/// Asserts that `got` is `want` byte for byte, naming the first bytes that differ.
pub fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let differ: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
    assert!(
        differ.is_empty(),
        "{what}: {} of {} bytes differ, first at {:?}",
        differ.len(),
        want.len(),
        &differ[..differ.len().min(8)]
    );
}
