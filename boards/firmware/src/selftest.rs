//! The on-target tests: a small harness that runs each check in turn and logs its name.
//!
//! - hal-core's device-memory range allocators (`ember_conformance::range_allocators`): no
//!   heap needed, so every board runs them, the 64 KiB lm3s6965evb included;
//! - with the `alloc` feature (the boards with a heap), a subset of the HAL conformance suite (`ember_conformance::cases`) on a hal-local
//!   device: the areas that fit a board with a few MiB (every case leaks its device's region,
//!   as on the host).
//!
//! A failed check panics; the board's panic handler logs the message and exits with a
//! failure code, so one failure fails the run.

/// Runs every on-target test; returns `true` (a failure panics before returning).
pub fn run_all() -> bool {
    let mut passed = 0u32;
    for check in ember_conformance::range_allocators::allocator_checks() {
        say!("test range_allocators::{} ...", check.name);
        (check.run)();
        passed += 1;
    }
    #[cfg(feature = "alloc")]
    {
        passed += conformance::run_subset();
    }
    say!("tests: {} passed", passed);
    true
}

#[cfg(feature = "alloc")]
mod conformance {
    extern crate alloc;

    use alloc::boxed::Box;
    use alloc::vec;
    use ember_conformance::Target;
    use hal_core::ExecutableSource;
    use hal_local::{HostMemory, LocalConfig, LocalDevice, LocalStorage};

    /// The areas run on the device (every case of each).
    #[cfg(not(feature = "cores"))]
    pub const AREAS: &[&str] = &["buffer_allocation", "memo"];
    /// On a multi-core board, the areas whose cases dispatch or order work on the queue:
    /// their workgroups run on both cores. (The single-core boards run the others; every
    /// case here leaks a MiB, which the heap bounds.)
    #[cfg(feature = "cores")]
    pub const AREAS: &[&str] = &[
        "dispatch",
        "dispatch_failures",
        "semaphores",
        "queue_alloc",
        "binding_tables",
        "command_buffers",
        "barriers",
    ];
    /// Cases too large for these regions: one chunk larger than [`CHUNK_BYTES`], and four
    /// 200 KB queue allocations live at once.
    const TOO_LARGE: &[(&str, &str)] = &[
        ("dispatch", "dispatch_large"),
        ("queue_alloc", "many_live_at_once"),
    ];

    /// Bytes of each conformance device's region, of its chunks and of its arena.
    #[cfg(not(feature = "cores"))]
    const REGION_BYTES: usize = 192 * 1024;
    const CHUNK_BYTES: u64 = 8 * 1024;
    #[cfg(not(feature = "cores"))]
    const TRANSIENT_BYTES: u64 = 64 * 1024;
    /// With `cores`, the host's Miri sizes (a board with tens of MiB of heap).
    #[cfg(feature = "cores")]
    const REGION_BYTES: usize = 1024 * 1024;
    #[cfg(feature = "cores")]
    const TRANSIENT_BYTES: u64 = 256 * 1024;

    /// The local driver as the suite's target, sized for a board.
    pub struct OnTarget;

    impl Target for OnTarget {
        type Device = LocalDevice<'static, hal_local::alloc::Tlsf<64>>;

        #[allow(clippy::panic)]
        fn create() -> Self::Device {
            let memory: &'static mut [u8] = vec![0u8; REGION_BYTES].leak();
            let config = crate::local_config(LocalConfig {
                max_allocation_size: CHUNK_BYTES,
                transient_bytes: TRANSIENT_BYTES,
                ..LocalConfig::DEFAULT
            });
            let storage: &'static mut LocalStorage<16, 1024, 64, 8> =
                Box::leak(Box::new(LocalStorage::EMPTY));
            match LocalDevice::new(storage, memory, config) {
                Ok(device) => device,
                Err(_) => panic!("conformance: the device refused its region"),
            }
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
    }

    /// Runs the cases of [`AREAS`]; the number run.
    pub fn run_subset() -> u32 {
        let mut passed = 0;
        for case in ember_conformance::cases::<OnTarget>() {
            if AREAS.contains(&case.area) && !TOO_LARGE.contains(&(case.area, case.name)) {
                say!("test conformance::{}::{} ...", case.area, case.name);
                (case.run)();
                passed += 1;
            }
        }
        passed
    }
}
