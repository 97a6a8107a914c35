//! The HAL conformance suite on the Vulkan driver (lavapipe in CI, any Vulkan 1.2 device
//! with `EMBER_VULKAN_DEVICE`), with the Khronos validation layer on: every device is made
//! with `strict_teardown`, so a validation warning or error, or a leaked Vulkan object,
//! fails the case when its device is dropped.
//!
//! Four targets: chunked buffers as sparse buffers where the device has sparse binding
//! (`vulkan`); the fallback of one allocation per chunk (`vulkan_no_sparse`); on devices
//! whose memory is all host-visible (lavapipe, integrated GPUs), an emulated device-only
//! heap so device-local buffers take the staging paths of a discrete GPU
//! (`vulkan_device_only`); and descriptor sets from pools instead of push descriptors
//! (`vulkan_descriptor_sets`).
//! `EMBER_VULKAN_VALIDATION=0` turns validation off (for devices without the layer).

use ember_tests::conformance::Target;
use hal_core::ExecutableSource;
use hal_vulkan::{HostMemory, VulkanConfig, VulkanDevice};

/// Chunked buffers without sparse binding.
const NO_SPARSE: u8 = 1;
/// An emulated device-only heap where the device has none.
const DEVICE_ONLY: u8 = 2;
/// Descriptor sets from pools instead of push descriptors.
const NO_PUSH: u8 = 4;

/// A Vulkan device for the suite: heap 0 chunks of at most 256 KiB, a 64 MiB budget per
/// heap in 4 MiB blocks, validation on unless `EMBER_VULKAN_VALIDATION=0`; `flags` as above.
fn vulkan_device(flags: u8) -> VulkanDevice<'static> {
    let validation = validation();
    keep_driver_loaded(validation);
    let config = VulkanConfig {
        validation,
        max_allocation_size: 256 << 10,
        heap_budget: 64 << 20,
        block_size: 4 << 20,
        sparse_binding: flags & NO_SPARSE == 0,
        emulate_device_only_heap: flags & DEVICE_ONLY != 0,
        push_descriptors: flags & NO_PUSH == 0,
        strict_teardown: true,
        ..VulkanConfig::default()
    };
    VulkanDevice::new(config).expect("a Vulkan device")
}

/// Whether the validation layer is on: unless `EMBER_VULKAN_VALIDATION=0`.
fn validation() -> bool {
    std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0")
}

/// Keeps one device alive for the whole run, so that the Vulkan driver (lavapipe and the LLVM
/// it links) and the validation layer, which the loader loads at the first instance and
/// unloads at the last one's destruction, are not unloaded and reloaded while cases on other
/// threads make and drop their devices.
fn keep_driver_loaded(validation: bool) {
    static KEEPER: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    KEEPER.get_or_init(|| {
        let config = VulkanConfig {
            validation,
            ..VulkanConfig::default()
        };
        std::mem::forget(VulkanDevice::new(config).expect("a Vulkan device"));
    });
}

/// The Vulkan driver, configured by `FLAGS` ([`NO_SPARSE`], [`DEVICE_ONLY`], [`NO_PUSH`]).
pub struct Vulkan<const FLAGS: u8>;

impl<const FLAGS: u8> Target for Vulkan<FLAGS> {
    type Device = VulkanDevice<'static>;

    fn create() -> Self::Device {
        vulkan_device(FLAGS)
    }

    fn host_memory(bytes: &'static mut [u8]) -> HostMemory<'static> {
        HostMemory::ReadWrite(bytes)
    }

    fn host_memory_read_only(bytes: &'static [u8]) -> HostMemory<'static> {
        HostMemory::ReadOnly(bytes)
    }

    fn kernel(name: &'static str) -> ExecutableSource<'static> {
        ExecutableSource::Kernel(name)
    }

    /// With validation on, one case at a time: the Khronos validation layer that Debian 12
    /// ships (1.3.239) keeps its per-device state in one map for the whole process and
    /// reads it on every call without a lock, so a thread that makes or drops a device
    /// while another calls into a different one can crash the process (Vulkan-
    /// ValidationLayers issue 4391; seen here as a SIGSEGV in `vkBindBufferMemory`).
    fn cases_one_at_a_time() -> bool {
        validation()
    }
}

mod vulkan {
    ember_tests::conformance_tests!(crate::Vulkan<0>);
}

mod vulkan_no_sparse {
    ember_tests::conformance_tests!(crate::Vulkan<{ crate::NO_SPARSE }>);
}

mod vulkan_device_only {
    ember_tests::conformance_tests!(crate::Vulkan<{ crate::DEVICE_ONLY }>);
}

mod vulkan_descriptor_sets {
    ember_tests::conformance_tests!(crate::Vulkan<{ crate::NO_PUSH }>);
}

/// The variants really differ on this device: sparse chunked buffers where it has sparse
/// binding and never with the option off; push descriptors only when asked for.
#[test]
fn variants_take_their_paths() {
    ember_tests::conformance::run_case_alone("variants_take_their_paths", variants);
}

fn variants() {
    let sparse = vulkan_device(0);
    let fallback = vulkan_device(NO_SPARSE);
    let sets = vulkan_device(NO_PUSH);
    assert!(!fallback.sparse_chunks(0));
    assert!(!sets.push_descriptors());
    eprintln!(
        "{}: sparse chunked buffers {}, push descriptors {}",
        sparse.device_name(),
        sparse.sparse_chunks(0),
        sparse.push_descriptors()
    );
}
