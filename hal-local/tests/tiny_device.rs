//! The smallest devices firmware builds (a few table entries each, the minimal firmware's
//! bump-allocated one) still run a dispatch and release everything.

use hal_core::memory::BufferParams;
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, ExecutableSource, Record, Submit, Workgroups,
};
use hal_local::alloc::Bump;
use hal_local::{LocalConfig, LocalDevice, LocalStorage};

/// Fills a 64-byte buffer with one `fill_u32` dispatch, reads it back, and releases every
/// object: none is left, and heap 0 holds no bytes.
fn runs_a_fill_and_releases_everything(dev: &mut impl Device) {
    let buffer = dev
        .allocate_buffer(BufferParams::device_local(), 64)
        .unwrap();
    let kernel = dev
        .load_executable(ExecutableSource::Kernel("fill_u32"))
        .unwrap();
    let commands = dev
        .create_command_buffer(CommandBufferMode::OneShot, 3, 0)
        .unwrap();
    dev.record(
        commands,
        Record::Dispatch {
            executable: kernel,
            workgroups: Workgroups::Direct([1, 1, 1]),
            constants: &[7],
            bindings: &[BufferRef::buffer(buffer)],
        },
    )
    .unwrap();
    dev.end(commands).unwrap();
    dev.queue_execute(Submit::NOW, commands, &[]).unwrap();
    let mut out = [0u8; 64];
    dev.read_buffer(BufferSpan::whole(buffer), &mut out)
        .unwrap();
    assert!(out.chunks_exact(4).all(|w| w == 7u32.to_le_bytes()));
    dev.release_command_buffer(commands).unwrap();
    dev.release_executable(kernel).unwrap();
    dev.release_buffer(buffer).unwrap();
    assert_eq!(dev.object_counts(), Default::default());
    assert_eq!(dev.allocator_stats(0).unwrap().bytes_in_use, 0);
}

#[test]
fn four_entry_tables_run_a_fill() {
    let mut memory = vec![0u8; 8192];
    let mut storage: LocalStorage<4, 4, 4, 1> = LocalStorage::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::DEFAULT).unwrap();
    runs_a_fill_and_releases_everything(&mut dev);
}

/// The minimal firmware's device (`boards/firmware/src/minimal.rs`): one dispatch, all
/// released, on a bump device with no parked operations.
#[test]
fn minimal_firmware_device_runs_a_fill() {
    let mut memory = vec![0u8; 8192];
    let mut storage: LocalStorage<4, 4, 4, 0, Bump<4>> = LocalStorage::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::DEFAULT).unwrap();
    runs_a_fill_and_releases_everything(&mut dev);
}
