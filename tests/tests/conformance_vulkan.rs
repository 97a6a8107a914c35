//! The HAL conformance suite on the Vulkan driver (lavapipe in CI, any Vulkan 1.2 device
//! with `EMBER_VULKAN_DEVICE`), with the Khronos validation layer on: every device is made
//! with `strict_teardown`, so a validation warning or error, or a leaked Vulkan object,
//! fails the case when its device is dropped.
//!
//! Three targets: chunked buffers as sparse buffers where the device has sparse binding
//! (`vulkan`); the fallback of one allocation per chunk (`vulkan_no_sparse`); and, on
//! devices whose memory is all host-visible (lavapipe, integrated GPUs), an emulated
//! device-only heap so device-local buffers take the staging paths of a discrete GPU
//! (`vulkan_device_only`).
//! `EMBER_VULKAN_VALIDATION=0` turns validation off (for devices without the layer).

use ember_tests::conformance::Target;
use hal_core::ExecutableSource;
use hal_vulkan::{VulkanConfig, VulkanDevice, VulkanHostMemory};

/// A Vulkan device for the suite: heap 0 chunks of at most 256 KiB, a 64 MiB budget per
/// heap in 4 MiB blocks, validation on unless `EMBER_VULKAN_VALIDATION=0`.
fn vulkan_device(sparse_binding: bool, device_only: bool) -> VulkanDevice<'static> {
    let validation = std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0");
    let config = VulkanConfig {
        validation,
        max_allocation_size: 256 << 10,
        heap_budget: 64 << 20,
        block_size: 4 << 20,
        sparse_binding,
        emulate_device_only_heap: device_only,
        strict_teardown: true,
        ..VulkanConfig::default()
    };
    VulkanDevice::new(config).expect("a Vulkan device")
}

/// The Vulkan driver; `SPARSE` picks sparse chunked buffers (where the device has them) or
/// the per-chunk fallback; `DEVICE_ONLY` adds an emulated device-only heap where the device
/// has none.
pub struct Vulkan<const SPARSE: bool, const DEVICE_ONLY: bool>;

impl<const SPARSE: bool, const DEVICE_ONLY: bool> Target for Vulkan<SPARSE, DEVICE_ONLY> {
    type Device = VulkanDevice<'static>;

    fn create() -> Self::Device {
        vulkan_device(SPARSE, DEVICE_ONLY)
    }

    fn host_memory(bytes: &'static mut [u8]) -> VulkanHostMemory<'static> {
        VulkanHostMemory::ReadWrite(bytes)
    }

    fn host_memory_read_only(bytes: &'static [u8]) -> VulkanHostMemory<'static> {
        VulkanHostMemory::ReadOnly(bytes)
    }

    fn kernel(name: &'static str) -> ExecutableSource<'static> {
        ExecutableSource::Kernel(name)
    }
}

mod vulkan {
    ember_tests::conformance_tests!(crate::Vulkan<true, false>);
}

mod vulkan_no_sparse {
    ember_tests::conformance_tests!(crate::Vulkan<false, false>);
}

mod vulkan_device_only {
    ember_tests::conformance_tests!(crate::Vulkan<true, true>);
}

/// The two paths really differ on this device: sparse chunked buffers where it has sparse
/// binding, never with the option off.
#[test]
fn sparse_and_fallback_paths() {
    let sparse = vulkan_device(true, false);
    let fallback = vulkan_device(false, false);
    assert!(!fallback.sparse_chunks(0));
    eprintln!(
        "{}: sparse chunked buffers {}",
        sparse.device_name(),
        sparse.sparse_chunks(0)
    );
}
