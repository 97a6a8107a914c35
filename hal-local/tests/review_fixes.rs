//! Driver behaviour pinned by review findings: each test names the case it guards.

use hal_core::command::{CommandBufferMode, Record};
use hal_core::connection::copy_between;
use hal_core::memory::{BufferParams, BufferUsage};
use hal_core::{BufferRef, BufferSpan, Device, Error, Mapped, MemoryConnection, Submit, WHOLE};
use hal_local::{LocalConfig, LocalDevice};

type Tiny<'m> = LocalDevice<'m, 8, 8, 32, 2>;

#[test]
fn a_one_command_buffer_takes_one_slot() {
    let mut memory = [0u8; 4096];
    let mut dev = Tiny::new(&mut memory, LocalConfig::default()).unwrap();
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
fn span_lengths_bound_copies_and_updates() {
    let mut memory = [0u8; 4096];
    let mut dev = Tiny::new(&mut memory, LocalConfig::default()).unwrap();
    let a = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    let short = BufferSpan::new(b, 0, 16);
    assert!(matches!(
        dev.queue_copy(Submit::NOW, BufferSpan::whole(a), short, 64),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        dev.queue_update(Submit::NOW, &[9; 64], short),
        Err(Error::OutOfRange { .. })
    ));
    dev.queue_update(Submit::NOW, &[9; 16], short).unwrap();
    let mut out = [0u8; 64];
    dev.read_buffer(BufferSpan::whole(b), &mut out).unwrap();
    assert_eq!(out[..16], [9; 16]);
    assert_eq!(out[16..], [0; 48]);
    assert_eq!(dev.object_counts().command_buffers, 0);
    dev.release_buffer(a).unwrap();
    dev.release_buffer(b).unwrap();
}

#[test]
fn empty_range_at_the_end_of_a_chunked_buffer_maps() {
    let mut memory = [0u8; 4096];
    let config = LocalConfig {
        max_allocation_size: 256,
        ..LocalConfig::default()
    };
    let mut dev = Tiny::new(&mut memory, config).unwrap();
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 512)
        .unwrap();
    let m = dev
        .map(
            BufferSpan::new(b, 512, 0),
            hal_core::memory::MemoryAccess::READ,
        )
        .unwrap();
    assert!(m.bytes().is_empty());
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
    let mut dev = Tiny::new(&mut memory.0, config).unwrap();
    let params = BufferParams::host_visible().with_min_alignment(64);
    let b = dev.queue_alloca(Submit::NOW, params, 64).unwrap();
    let m = dev
        .map(BufferSpan::whole(b), hal_core::memory::MemoryAccess::READ)
        .unwrap();
    assert_eq!(m.bytes().as_ptr() as usize % 64, 0);
    dev.queue_dealloca(Submit::NOW, b).unwrap();
}

#[test]
fn copies_between_unmappable_buffers_use_host_transfers() {
    let (mut ma, mut mb) = ([0u8; 4096], [0u8; 4096]);
    let mut a = Tiny::new(&mut ma, LocalConfig::default()).unwrap();
    let mut b = Tiny::new(&mut mb, LocalConfig::default()).unwrap();
    let params = BufferParams::device_local().with_usage(BufferUsage::TRANSFER);
    let src = a.allocate_buffer(params, 128).unwrap();
    let dst = b.allocate_buffer(params, 128).unwrap();
    a.write_buffer(BufferSpan::whole(src), &[5; 128]).unwrap();
    let path = copy_between(
        &mut a,
        BufferSpan::whole(src),
        &mut b,
        BufferSpan::whole(dst),
        WHOLE,
        &mut [0; 32],
    )
    .unwrap();
    assert_eq!(path, MemoryConnection::Unified);
    let mut out = [0u8; 128];
    b.read_buffer(BufferSpan::whole(dst), &mut out).unwrap();
    assert_eq!(out, [5; 128]);
}

#[test]
fn a_refused_one_shot_can_be_submitted_later() {
    let mut memory = [0u8; 4096];
    let mut dev = Tiny::new(&mut memory, LocalConfig::default()).unwrap();
    let sem = dev.create_semaphore(0).unwrap();
    let wait = [hal_core::SemaphoreValue::new(sem, 1)];
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    let fill = Record::Fill {
        target: BufferRef::buffer(b),
        pattern: &[7],
    };
    // Fill the pending table (2 entries), then a one-shot that would park is refused whole.
    dev.queue_fill(Submit::new(&wait, &[]), BufferSpan::whole(b), &[1])
        .unwrap();
    dev.queue_fill(Submit::new(&wait, &[]), BufferSpan::whole(b), &[2])
        .unwrap();
    let cb = dev
        .create_command_buffer(CommandBufferMode::OneShot, 1, 0)
        .unwrap();
    dev.record(cb, fill).unwrap();
    dev.end(cb).unwrap();
    assert!(matches!(
        dev.queue_execute(Submit::new(&wait, &[]), cb, &[]),
        Err(Error::TableFull { .. })
    ));
    dev.signal_semaphore(sem, 1).unwrap();
    dev.queue_execute(Submit::NOW, cb, &[]).unwrap();
    let mut out = [0u8; 64];
    dev.read_buffer(BufferSpan::whole(b), &mut out).unwrap();
    assert_eq!(out, [7; 64]);
    dev.release_command_buffer(cb).unwrap();
    dev.release_buffer(b).unwrap();
    dev.release_semaphore(sem).unwrap();
    assert_eq!(dev.object_counts(), Default::default());
}

#[test]
fn a_device_moves_to_another_thread() {
    let mut memory = [0u8; 4096];
    let mut dev = Tiny::new(&mut memory, LocalConfig::default()).unwrap();
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
