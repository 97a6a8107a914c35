//! `load_from_host`: pipelined loads of host data into device buffers, through imported
//! windows and through the two bounded staging buffers, checked byte for byte; and its
//! refusals. Every device is made with `strict_teardown` (no leak, no validation message).

mod common;

use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, Device, Error};
use hal_vulkan::{HostLoadOptions, LoadPath, VulkanConfig, VulkanDevice};

fn device(sparse: bool) -> VulkanDevice<'static> {
    VulkanDevice::new(VulkanConfig {
        validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
        max_allocation_size: 1 << 20,
        heap_budget: 64 << 20,
        block_size: 4 << 20,
        staging_bytes: 64 << 10,
        sparse_binding: sparse,
        emulate_device_only_heap: true,
        strict_teardown: true,
        ..VulkanConfig::default()
    })
    .expect("a Vulkan device")
}

/// Page-aligned bytes (`Vec<u64>` storage) with a position-dependent pattern.
fn source(len: usize) -> Vec<u64> {
    (0..len / 8)
        .map(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5)
        .collect()
}

fn bytes(words: &[u64]) -> &[u8] {
    // SAFETY: plain integers reinterpreted as their bytes, same lifetime.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), words.len() * 8) }
}

fn read_back(dev: &mut VulkanDevice<'_>, span: BufferSpan) -> Vec<u8> {
    let size = dev.buffer_info(span.buffer).expect("info").size;
    let len = span.length.min(size - span.offset);
    let mut out = vec![0u8; len as usize];
    dev.read_buffer(BufferSpan::new(span.buffer, span.offset, len), &mut out)
        .expect("read");
    out
}

#[test]
fn loads_through_import_and_staging_match_the_source() {
    let _alone = common::alone();
    for sparse in [true, false] {
        let mut dev = device(sparse);
        let words = source(3 << 20);
        // An odd offset into the data: windows start unaligned, and the load's last window
        // is short.
        let data = &bytes(&words)[4100..(3 << 20) - 12];
        let target = dev
            .allocate_buffer(BufferParams::device_local(), data.len() as u64 + 64)
            .expect("allocate");
        let span = BufferSpan::new(target, 32, data.len() as u64);
        for (path, window) in [
            (LoadPath::Auto, 256 << 10),
            (LoadPath::Auto, 4096),
            (LoadPath::Staging, 0),
        ] {
            dev.queue_fill(hal_core::Submit::NOW, BufferSpan::whole(target), &[0])
                .expect("clear");
            let stats = dev
                .load_from_host(
                    data,
                    span,
                    HostLoadOptions {
                        path,
                        import_window: window,
                        import_threads: 3,
                        imports_in_flight: 4,
                        copy_threads: 3,
                    },
                )
                .expect("load");
            assert_eq!(stats.bytes, data.len() as u64);
            assert_eq!(stats.imported_bytes + stats.staged_bytes, stats.bytes);
            assert!(stats.staging_bytes <= 2 * (64 << 10), "{stats:?}");
            if path == LoadPath::Staging || !dev.host_import() {
                assert_eq!(stats.imported_bytes, 0, "{stats:?}");
            } else {
                assert_eq!(stats.staged_bytes, 0, "{stats:?}");
            }
            assert!(
                read_back(&mut dev, span) == data,
                "{path:?} sparse {sparse}"
            );
            // The bytes around the span are untouched.
            assert_eq!(read_back(&mut dev, BufferSpan::new(target, 0, 32)), [0; 32]);
        }
        dev.release_buffer(target).expect("release");
    }
}

#[test]
fn host_visible_targets_are_written_through_the_mapping() {
    let _alone = common::alone();
    let mut dev = device(true);
    let words = source(64 << 10);
    let data = bytes(&words);
    let target = dev
        .allocate_buffer(BufferParams::host_visible(), data.len() as u64)
        .expect("allocate");
    let stats = dev
        .load_from_host(data, BufferSpan::whole(target), HostLoadOptions::default())
        .expect("load");
    assert_eq!(stats.mapped_bytes, data.len() as u64);
    assert_eq!(stats.windows, 0);
    assert!(read_back(&mut dev, BufferSpan::whole(target)) == data);
    dev.release_buffer(target).expect("release");
}

#[test]
fn bad_loads_are_refused_and_change_nothing() {
    let _alone = common::alone();
    let mut dev = device(true);
    let data = vec![7u8; 4096];
    let target = dev
        .allocate_buffer(BufferParams::device_local(), 4096)
        .expect("allocate");
    let short = dev.load_from_host(
        &data[..100],
        BufferSpan::whole(target),
        HostLoadOptions::default(),
    );
    assert!(matches!(short, Err(Error::InvalidArgument(_))), "{short:?}");
    let past = dev.load_from_host(
        &data,
        BufferSpan::new(target, 8, 4096),
        HostLoadOptions::default(),
    );
    assert!(past.is_err(), "{past:?}");
    let read_only = dev
        .allocate_buffer(
            BufferParams {
                access: MemoryAccess::READ,
                ..BufferParams::device_local()
            },
            4096,
        )
        .expect("allocate");
    let refused = dev.load_from_host(
        &data,
        BufferSpan::whole(read_only),
        HostLoadOptions::default(),
    );
    assert!(matches!(refused, Err(Error::Access { .. })), "{refused:?}");
    let no_transfer = dev
        .allocate_buffer(
            BufferParams::device_local().with_usage(BufferUsage::DISPATCH_STORAGE),
            4096,
        )
        .expect("allocate");
    let refused = dev.load_from_host(
        &data,
        BufferSpan::whole(no_transfer),
        HostLoadOptions::default(),
    );
    assert!(matches!(refused, Err(Error::Usage { .. })), "{refused:?}");
    let empty = dev
        .load_from_host(
            &[],
            BufferSpan::new(target, 0, 0),
            HostLoadOptions::default(),
        )
        .expect("an empty load");
    assert_eq!(empty.bytes, 0);
    assert_eq!(
        read_back(&mut dev, BufferSpan::whole(target)),
        vec![0; 4096]
    );
    for b in [target, read_only, no_transfer] {
        dev.release_buffer(b).expect("release");
    }
}
