//! How a local device uses the storage it owns: a command buffer of one command takes one
//! command slot, queue-ordered allocations keep their alignment whether the transient arena at
//! the region's end or the general heap serves them, a small region keeps a general heap
//! beside its arena, and a device (with the memory it borrows) moves to another thread.

use hal_core::command::CommandBufferMode;
use hal_core::memory::BufferParams;
use hal_core::{BufferSpan, Device, Error, Mapped, Submit};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};

type Tiny = LocalStorage<8, 8, 32, 2>;

#[test]
fn a_one_command_buffer_takes_one_slot() {
    let mut memory = [0u8; 4096];
    let mut storage = Tiny::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::default()).unwrap();
    let cbs: Vec<_> = (0..8)
        .map(|_| {
            dev.create_command_buffer(CommandBufferMode::OneShot, 1, 0)
                .unwrap()
        })
        .collect();
    assert!(matches!(
        dev.create_command_buffer(CommandBufferMode::OneShot, 1, 0),
        Err(Error::Limit { .. })
    ));
    for cb in cbs {
        dev.release_command_buffer(cb).unwrap();
    }
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    dev.queue_fill(Submit::NOW, BufferSpan::whole(b), &[1])
        .unwrap();
    assert!(matches!(
        dev.queue_update(Submit::NOW, &vec![0; 70_000], BufferSpan::whole(b)),
        Err(Error::Limit {
            what: "update bytes",
            ..
        })
    ));
    dev.release_buffer(b).unwrap();
}

#[test]
fn queue_alloca_memory_keeps_its_alignment() {
    #[repr(C, align(4096))]
    struct Page([u8; 16384]);
    let mut memory = Box::new(Page([0; 16384]));
    let config = LocalConfig {
        transient_bytes: 1000,
        ..LocalConfig::default()
    };
    let mut storage = Tiny::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory.0, config).unwrap();
    let params = BufferParams::host_visible().with_min_alignment(64);
    let b = dev.queue_alloca(Submit::NOW, params, 64).unwrap();
    let m = dev
        .map(BufferSpan::whole(b), hal_core::memory::MemoryAccess::READ)
        .unwrap();
    assert_eq!(m.bytes().as_ptr() as usize % 64, 0);
    dev.queue_dealloca(Submit::NOW, b).unwrap();
}

#[test]
fn a_small_region_on_a_page_boundary_keeps_its_general_heap() {
    #[repr(C, align(4096))]
    struct Page([u8; 4096]);
    let mut memory = Box::new(Page([0; 4096]));
    let base = memory.0.as_ptr() as usize;
    let config = LocalConfig {
        transient_bytes: 1024,
        ..LocalConfig::default()
    };
    let mut storage = Tiny::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory.0, config).unwrap();
    // The general heap keeps the 3 KiB below the arena.
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 2048)
        .unwrap();
    dev.release_buffer(b).unwrap();
    // Alignments up to the arena start's (1 KiB) come from the arena, larger ones from the
    // general heap; every one holds in memory.
    for alignment in [16, 1024, 2048, 4096] {
        let params = BufferParams::host_visible().with_min_alignment(alignment);
        let a = dev.queue_alloca(Submit::NOW, params, 64).unwrap();
        let m = dev
            .map(BufferSpan::whole(a), hal_core::memory::MemoryAccess::READ)
            .unwrap();
        let address = m.bytes().as_ptr() as usize;
        assert_eq!(address % alignment as usize, 0, "alignment {alignment}");
        let from_arena = address >= base + 3072;
        assert_eq!(from_arena, alignment <= 1024, "alignment {alignment}");
        dev.queue_dealloca(Submit::NOW, a).unwrap();
    }
}

#[test]
fn a_device_moves_to_another_thread() {
    let mut memory = [0u8; 4096];
    let mut storage = Tiny::EMPTY;
    let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::default()).unwrap();
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 16)
        .unwrap();
    std::thread::scope(|s| {
        s.spawn(move || {
            dev.queue_fill(Submit::NOW, BufferSpan::whole(b), &[3])
                .unwrap();
            let mut out = [0u8; 16];
            dev.read_buffer(BufferSpan::whole(b), &mut out).unwrap();
            assert_eq!(out, [3; 16]);
        });
    });
}

/// Storage outlives its device: moved to another thread with the objects a dropped device
/// left in it (an imported buffer among them), it serves a new device, which starts empty
/// (the old handles name nothing in it).
#[test]
fn storage_serves_a_second_device() {
    let mut storage = Box::new(Tiny::EMPTY);
    let mut memory = [0u8; 4096];
    let mut host = [7u8; 64];
    let (buffer, imported, semaphore) = {
        let mut dev = LocalDevice::new(&mut storage, &mut memory, LocalConfig::default()).unwrap();
        let buffer = dev
            .allocate_buffer(BufferParams::host_visible(), 64)
            .unwrap();
        let imported = dev
            .import_buffer(
                hal_local::HostMemory::ReadWrite(&mut host),
                BufferParams::host_visible(),
            )
            .unwrap();
        let semaphore = dev.create_semaphore(1).unwrap();
        (buffer, imported, semaphore)
    };
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut memory = [0u8; 4096];
            let mut dev =
                LocalDevice::new(&mut storage, &mut memory, LocalConfig::default()).unwrap();
            assert_eq!(dev.object_counts(), Default::default());
            assert!(matches!(
                dev.buffer_info(buffer),
                Err(Error::StaleHandle { .. })
            ));
            assert!(matches!(
                dev.buffer_info(imported),
                Err(Error::StaleHandle { .. })
            ));
            assert!(dev.query_semaphore(semaphore).is_err());
            let b = dev
                .allocate_buffer(BufferParams::host_visible(), 64)
                .unwrap();
            dev.queue_fill(Submit::NOW, BufferSpan::whole(b), &[5])
                .unwrap();
            let mut out = [0u8; 64];
            dev.read_buffer(BufferSpan::whole(b), &mut out).unwrap();
            assert_eq!(out, [5; 64]);
        });
    });
    assert_eq!(host, [7; 64]);
}
