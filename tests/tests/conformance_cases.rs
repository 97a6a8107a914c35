//! The conformance suite as firmware runs it: `cases()` lists every case in order, and each
//! case's `run` is called in turn on one thread, with no test harness around it.

use ember_tests::conformance::{cases, Target};
use hal_core::ExecutableSource;
use hal_local::{HostMemory, LocalConfig, LocalDevice, LocalStorage};
use std::collections::HashSet;

/// The inline local driver over a fresh, leaked 8 MiB region (as `conformance_local.rs`).
struct Local;

impl Target for Local {
    type Device = LocalDevice<'static>;

    fn create() -> Self::Device {
        let memory: &'static mut [u8] = Box::leak(vec![0u8; 8 << 20].into_boxed_slice());
        let config = LocalConfig {
            max_allocation_size: 256 << 10,
            transient_bytes: 1 << 20,
            kernels: hal_local::kernels::BUILTIN,
            workers: 1,
            ..LocalConfig::default()
        };
        let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
        LocalDevice::new(storage, memory, config).expect("a local device")
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

#[test]
fn cases_are_listed_area_by_area() {
    let cases = cases::<Local>();
    let mut areas: Vec<&str> = cases.iter().map(|c| c.area).collect();
    areas.dedup();
    assert_eq!(
        areas,
        [
            "buffer_allocation",
            "mapping",
            "import",
            "chunked",
            "transfer_commands",
            "dispatch",
            "dispatch_failures",
            "barriers",
            "command_validation",
            "command_buffers",
            "binding_tables",
            "semaphores",
            "queue_alloc",
            "memo",
            "module",
            "transfer",
            "bad_input"
        ],
        "each area once, in the suite's order"
    );
    let names: HashSet<(&str, &str)> = cases.iter().map(|c| (c.area, c.name)).collect();
    assert_eq!(names.len(), cases.len(), "no case listed twice");
    assert_eq!(cases.len(), 122);
    assert_eq!(
        (cases[0].area, cases[0].name),
        ("buffer_allocation", "heaps")
    );
    let last = cases.last().expect("cases");
    assert_eq!((last.area, last.name), ("bad_input", "absurd_grid"));
}

#[test]
fn every_case_runs_in_turn_on_one_thread() {
    // One thread for the whole list, as on a board (a large stack: the device's tables are
    // inline, and unoptimised code copies them).
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            for case in cases::<Local>() {
                println!("{}::{}", case.area, case.name);
                (case.run)();
            }
        })
        .expect("spawn")
        .join()
        .expect("every case passes");
}
