//! The device options the smallest firmware picks: the bump allocator
//! ([`hal_local::alloc::Bump`]) for memory and command slots, and no parked operations
//! (`PENDING = 0`).

use ember_conformance::{cases, run_case, Target};
use hal_core::memory::BufferParams;
use hal_core::{
    BufferSpan, CommandBufferMode, Device, Error, ExecutableSource, SemaphoreValue, Submit,
};
use hal_local::alloc::Bump;
use hal_local::{HostMemory, LocalConfig, LocalDevice, LocalStorage};

/// A bump-allocated device with `PENDING` parked operations, the conformance suite's
/// defaults otherwise.
type BumpDevice = LocalDevice<'static, Bump<256>>;

struct BumpTarget<const PENDING: usize>;

impl<const PENDING: usize> Target for BumpTarget<PENDING> {
    type Device = BumpDevice;

    fn create() -> BumpDevice {
        let (region, chunk, transient) = if cfg!(miri) {
            (1 << 20, 8 << 10, 256 << 10)
        } else {
            (8 << 20, 256 << 10, 1 << 20)
        };
        let memory: &'static mut [u8] = Box::leak(vec![0u8; region].into_boxed_slice());
        let config = LocalConfig {
            max_allocation_size: chunk,
            transient_bytes: transient,
            ..LocalConfig::default()
        };
        let storage: &'static mut LocalStorage<64, 4096, 256, PENDING, Bump<256>> =
            Box::leak(Box::new(LocalStorage::EMPTY));
        LocalDevice::new(storage, memory, config).expect("a bump device")
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

/// Runs every conformance case for `T`; returns the names of those that failed.
fn failures<T: Target>() -> Vec<&'static str> {
    let mut failed = Vec::new();
    for case in cases::<T>() {
        let name: &'static str = Box::leak(format!("{}::{}", case.area, case.name).into());
        if std::panic::catch_unwind(|| run_case(name, case.run)).is_err() {
            failed.push(name);
        }
    }
    failed
}

// Under Miri the suite runs on the default device (`ember-tests`' `conformance_local`); twice
// more here would take too long, and the bump device adds no `unsafe` (the tests below run).
#[test]
#[cfg_attr(miri, ignore = "the suite runs under Miri on the default device")]
fn conformance_on_a_bump_device() {
    assert_eq!(failures::<BumpTarget<16>>(), Vec::<&str>::new());
}

/// With `PENDING = 0` the suite passes but for the cases that park an operation behind a
/// wait not yet reached: those submissions are refused.
#[test]
#[cfg_attr(miri, ignore = "the suite runs under Miri on the default device")]
fn conformance_without_parked_operations() {
    assert_eq!(
        failures::<BumpTarget<0>>(),
        [
            "transfer_commands::queue_update",
            "command_buffers::release_while_pending",
            "command_buffers::refused_one_shot_submitted_later",
            "semaphores::host_signal_releases_queued_work",
            "semaphores::fail_propagates_through_chain",
            "semaphores::failing_op_fails_its_signals",
            "semaphores::wait_never_satisfied",
            "semaphores::release_while_pending",
            "queue_alloc::ordered_behind_host_signal",
            "bad_input::pending_table_full",
            "bad_input::release_buffer_while_pending",
        ]
    );
}

/// A submission that would have to wait is refused, holds nothing afterwards, and touches
/// none of its signals; reached and failed waits behave as with parked operations.
#[test]
fn without_parked_operations_nothing_waits() {
    let mut memory = vec![0u8; 8192];
    let mut storage: LocalStorage<4, 4, 4, 0> = LocalStorage::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::DEFAULT).unwrap();
    let buffer = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    let gate = dev.create_semaphore(0).unwrap();
    let done = dev.create_semaphore(0).unwrap();
    let waits = [SemaphoreValue::new(gate, 1)];
    let signals = [SemaphoreValue::new(done, 1)];
    let blocked = dev.queue_fill(
        Submit::new(&waits, &signals),
        BufferSpan::whole(buffer),
        &[1],
    );
    assert!(
        matches!(blocked, Err(Error::TableFull { capacity: 0, .. })),
        "{blocked:?}"
    );
    assert_eq!(dev.query_semaphore(done), Ok(0));
    assert_eq!(
        dev.object_counts().command_buffers,
        0,
        "the one-shot buffer went back"
    );
    // Reached: runs at once and signals.
    dev.signal_semaphore(gate, 1).unwrap();
    dev.queue_fill(
        Submit::new(&waits, &signals),
        BufferSpan::whole(buffer),
        &[2],
    )
    .unwrap();
    assert_eq!(dev.query_semaphore(done), Ok(1));
    let mut out = [0u8; 64];
    dev.read_buffer(BufferSpan::whole(buffer), &mut out)
        .unwrap();
    assert_eq!(out, [2; 64]);
    // Failed: the operation never runs, its signals fail.
    dev.fail_semaphore(gate, 7).unwrap();
    let later = [SemaphoreValue::new(done, 2)];
    dev.queue_fill(Submit::new(&waits, &later), BufferSpan::whole(buffer), &[3])
        .unwrap();
    assert_eq!(
        dev.query_semaphore(done),
        Err(Error::SemaphoreFailed { code: 7 })
    );
    dev.read_buffer(BufferSpan::whole(buffer), &mut out)
        .unwrap();
    assert_eq!(out, [2; 64]);
    dev.release_semaphore(gate).unwrap();
    dev.release_semaphore(done).unwrap();
    dev.release_buffer(buffer).unwrap();
    assert_eq!(dev.object_counts(), Default::default());
}

/// LIFO frees give space back at once; a free out of order gives it back only once
/// everything above it is freed too.
#[test]
fn bump_memory_comes_back_in_reverse_order() {
    let mut memory = vec![0u8; 4096];
    let mut storage: LocalStorage<8, 8, 8, 0, Bump<8>> = LocalStorage::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::DEFAULT).unwrap();
    let capacity = dev.allocator_stats(0).unwrap().capacity;
    let params = BufferParams::device_local();
    // `a` ends on a 16-byte boundary, so `b` (the rest) follows it with no gap.
    let half = (capacity / 2) & !15;
    let a = dev.allocate_buffer(params, half).unwrap();
    let b = dev.allocate_buffer(params, capacity - half).unwrap();
    assert!(matches!(
        dev.allocate_buffer(params, 16),
        Err(Error::Alloc(_))
    ));
    // Out of order: `a`'s space stays held while `b` lives.
    dev.release_buffer(a).unwrap();
    assert_eq!(
        dev.allocator_stats(0).unwrap().bytes_in_use,
        capacity - half
    );
    assert!(matches!(
        dev.allocate_buffer(params, 16),
        Err(Error::Alloc(_))
    ));
    // `b` was the top: both come back.
    dev.release_buffer(b).unwrap();
    let whole = dev.allocate_buffer(params, capacity).unwrap();
    dev.release_buffer(whole).unwrap();
    // Command slots are bump-allocated too: the top command buffer's slots come back.
    let first = dev
        .create_command_buffer(CommandBufferMode::OneShot, 4, 0)
        .unwrap();
    assert!(dev
        .create_command_buffer(CommandBufferMode::OneShot, 8, 0)
        .is_err());
    let second = dev
        .create_command_buffer(CommandBufferMode::Reusable, 4, 0)
        .unwrap();
    dev.release_command_buffer(second).unwrap();
    let again = dev
        .create_command_buffer(CommandBufferMode::Reusable, 4, 0)
        .unwrap();
    dev.release_command_buffer(again).unwrap();
    dev.release_command_buffer(first).unwrap();
    assert_eq!(dev.allocator_stats(0).unwrap().bytes_in_use, 0);
    assert_eq!(dev.object_counts(), Default::default());
}
