//! The Vulkan driver's own behaviour, beyond the conformance suite: which paths a device
//! takes (sparse chunks, in-place import, staging for device-only memory), memoized replay,
//! and the error paths the issue names (memory exhausted, an allocation over every heap,
//! invalid SPIR-V, a binding over `maxStorageBufferRange`), each without a validation
//! message or a leaked Vulkan object (every device here is made with `strict_teardown`).
//!
//! Runs on whatever `EMBER_VULKAN_DEVICE` picks (lavapipe in CI), with the validation layer
//! unless `EMBER_VULKAN_VALIDATION=0`.

mod common;

use hal_core::memory::{BufferParams, MemoryAccess, MemoryType};
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, Error, ExecutableSource, Mapped, Record,
    SemaphoreValue, Submit, Timeout, Workgroups,
};
use hal_vulkan::{HostMemory, VkObject, VulkanConfig, VulkanDevice};

fn config() -> VulkanConfig {
    VulkanConfig {
        validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
        max_allocation_size: 256 << 10,
        heap_budget: 64 << 20,
        block_size: 4 << 20,
        strict_teardown: true,
        ..VulkanConfig::default()
    }
}

fn device(config: VulkanConfig) -> VulkanDevice<'static> {
    VulkanDevice::new(config).expect("a Vulkan device")
}

/// Runs `op` with a fresh semaphore to signal and waits for it.
fn run<D: Device>(
    dev: &mut D,
    op: impl FnOnce(&mut D, Submit<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let s = dev.create_semaphore(0).expect("semaphore");
    let signal = [SemaphoreValue::new(s, 1)];
    let result = op(dev, Submit::new(&[], &signal))
        .and_then(|()| dev.wait_semaphores(&signal, Timeout::Infinite));
    dev.release_semaphore(s).expect("release");
    result
}

fn dispatch<D: Device>(
    dev: &mut D,
    executable: hal_core::Executable,
    grid: [u32; 3],
    constants: &[u32],
    bindings: &[BufferRef],
) -> Result<(), Error> {
    let cb = dev
        .create_command_buffer(CommandBufferMode::OneShot, 16, 0)
        .expect("command buffer");
    let result = dev
        .record(
            cb,
            Record::Dispatch {
                executable,
                workgroups: Workgroups::Direct(grid),
                constants,
                bindings,
            },
        )
        .and_then(|()| dev.end(cb))
        .and_then(|()| run(dev, |d, s| d.queue_execute(s, cb, &[])));
    dev.release_command_buffer(cb).expect("release");
    result
}

#[test]
fn selection_queues_and_heaps() {
    let _alone = common::alone();
    let dev = device(config());
    let (compute, transfer, _sparse) = dev.queue_families();
    eprintln!(
        "device {:?}: compute family {compute}, transfer family {transfer}, sparse chunks {}, host import {}",
        dev.device_name(),
        dev.sparse_chunks(0),
        dev.host_import()
    );
    let heap = dev.heaps()[0];
    assert!(heap.types.is_mappable());
    assert_eq!(heap.max_allocation_size, 256 << 10);
    assert!(heap.min_alignment >= 16);
    // Selecting by a name that no device has is an error, not a panic.
    let missing = VulkanDevice::new(VulkanConfig {
        device: Some("no such device name".into()),
        ..config()
    });
    assert!(matches!(missing, Err(Error::InvalidArgument(_))));
    let by_index = VulkanDevice::new(VulkanConfig {
        device: Some("0".into()),
        ..config()
    });
    assert!(by_index.is_ok());
}

#[test]
fn sparse_and_fallback_chunks_hold_the_same_bytes() {
    let _alone = common::alone();
    for sparse in [true, false] {
        let mut dev = device(VulkanConfig {
            sparse_binding: sparse,
            ..config()
        });
        if sparse && !dev.sparse_chunks(0) {
            eprintln!("no sparse binding on this device: only the fallback is tested");
        }
        let size = 3 * (256 << 10) + 1000;
        let b = dev
            .allocate_buffer(BufferParams::host_visible(), size)
            .expect("chunked buffer");
        let info = dev.buffer_info(b).expect("info");
        assert_eq!(info.chunk_count(), 4);
        let data: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
        dev.write_buffer(BufferSpan::whole(b), &data)
            .expect("write");
        let c = dev
            .allocate_buffer(BufferParams::host_visible(), size)
            .expect("chunked buffer");
        run(&mut dev, |d, s| {
            d.queue_copy(s, BufferSpan::whole(b), BufferSpan::whole(c), size)
        })
        .expect("copy");
        let mut out = vec![0; size as usize];
        dev.read_buffer(BufferSpan::whole(c), &mut out)
            .expect("read");
        assert_eq!(out, data, "sparse {sparse}");
        dev.release_buffer(b).expect("release");
        dev.release_buffer(c).expect("release");
    }
}

#[test]
fn device_only_memory_goes_through_staging() {
    let _alone = common::alone();
    let mut dev = device(VulkanConfig {
        emulate_device_only_heap: true,
        staging_bytes: 4096,
        ..config()
    });
    let b = dev
        .allocate_buffer(BufferParams::device_local(), 3 * (256 << 10) + 64)
        .expect("device-local buffer");
    let info = dev.buffer_info(b).expect("info");
    assert!(!info.memory_type.is_mappable(), "{info:?}");
    assert!(matches!(
        dev.map(BufferSpan::new(b, 0, 16), MemoryAccess::READ),
        Err(Error::NotMappable | Error::Usage { .. })
    ));
    let size = info.size as usize;
    let data: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
    dev.write_buffer(BufferSpan::whole(b), &data)
        .expect("staged write");
    let mut out = vec![0; size];
    dev.read_buffer(BufferSpan::whole(b), &mut out)
        .expect("staged read");
    assert_eq!(out, data);
    // A kernel writes device-only memory; the host reads it back through staging.
    let fill = dev
        .load_executable(ExecutableSource::Kernel("fill_u32"))
        .expect("fill_u32");
    dispatch(
        &mut dev,
        fill,
        [4, 1, 1],
        &[0xA5A5_5A5A],
        &[BufferRef::buffer(b).at(256, 4096)],
    )
    .expect("fill_u32 into device-only memory");
    let mut words = vec![0; 4096];
    dev.read_buffer(BufferSpan::new(b, 256, 4096), &mut words)
        .expect("read");
    assert!(words.chunks(4).all(|w| w == 0xA5A5_5A5Au32.to_ne_bytes()));
    // A streaming read into it, in chunks smaller than the staging buffer and larger.
    for chunk in [1000, 10_000] {
        let mut source: &[u8] = &data;
        let stats = run_read(&mut dev, &mut source, b, chunk);
        assert_eq!(stats.bytes, info.size);
        dev.read_buffer(BufferSpan::whole(b), &mut out)
            .expect("read");
        assert_eq!(out, data);
    }
    dev.release_executable(fill).expect("release");
    dev.release_buffer(b).expect("release");
}

/// Device-local memory the host maps (unified memory, or a discrete GPU's BAR heap): the
/// host writes it without staging, a kernel reads and writes it, the host reads it back.
/// Skipped where the device has none.
#[test]
fn device_local_mappable_memory_is_written_in_place() {
    let _alone = common::alone();
    let mut dev = device(config());
    let params = BufferParams::device_local_mappable();
    if !dev.heaps().iter().any(|h| h.check(&params).is_ok()) {
        eprintln!("{}: no device-local mappable memory", dev.device_name());
        return;
    }
    let (src, dst) = (
        dev.allocate_buffer(params, 4096).expect("source"),
        dev.allocate_buffer(params, 4096).expect("target"),
    );
    let info = dev.buffer_info(src).expect("info");
    assert!(
        info.memory_type.contains(MemoryType::DEVICE_LOCAL),
        "{info:?}"
    );
    assert!(info.memory_type.is_mappable(), "{info:?}");
    let staged = dev.staged_transfers();
    let data: Vec<u8> = (0..4096).map(|i| (i % 251) as u8).collect();
    dev.write_buffer(BufferSpan::whole(src), &data)
        .expect("write");
    let copy = dev
        .load_executable(ExecutableSource::Kernel("copy_u32"))
        .expect("copy_u32");
    dispatch(
        &mut dev,
        copy,
        [4, 1, 1],
        &[],
        &[BufferRef::buffer(src), BufferRef::buffer(dst)],
    )
    .expect("copy_u32");
    let mut out = vec![0; 4096];
    dev.read_buffer(BufferSpan::whole(dst), &mut out)
        .expect("read");
    assert_eq!(out, data);
    assert_eq!(dev.staged_transfers(), staged, "nothing staged");
    dev.release_executable(copy).expect("release");
    dev.release_buffer(src).expect("release");
    dev.release_buffer(dst).expect("release");
}

fn run_read(
    dev: &mut VulkanDevice<'static>,
    source: &mut &[u8],
    buffer: hal_core::Buffer,
    chunk: u64,
) -> hal_core::device::ReadStats {
    dev.queue_read(Submit::NOW, source, BufferSpan::whole(buffer), chunk)
        .expect("queue_read")
}

#[test]
fn imports_in_place_when_the_device_can() {
    let _alone = common::alone();
    let mut dev = device(config());
    let page = 64 << 10;
    // A region with room to pick an aligned and a misaligned start.
    let region: &'static mut [u8] = Box::leak(vec![0x11u8; 3 * page].into_boxed_slice());
    let ptr = region.as_mut_ptr();
    let buffer = dev
        .import_buffer(
            HostMemory::ReadWrite(&mut region[100..100 + page]),
            BufferParams::host_visible(),
        )
        .expect("import");
    run(&mut dev, |d, s| {
        d.queue_fill(s, BufferSpan::new(buffer, 0, 4096), &[0x22])
    })
    .expect("fill");
    if dev.host_import() {
        // In place: the host sees the fill before the buffer is released.
        // SAFETY: reading bytes of the leaked region the device has finished writing (the
        // fill was waited for).
        let now = unsafe { std::slice::from_raw_parts(ptr.add(100), 4096) };
        assert!(now.iter().all(|&b| b == 0x22), "import was not in place");
    }
    dev.release_buffer(buffer).expect("release");
    // SAFETY: as above, after release.
    let after = unsafe { std::slice::from_raw_parts(ptr, 3 * page) };
    assert!(
        after[..100].iter().all(|&b| b == 0x11),
        "bytes before the import untouched"
    );
    assert!(after[100..4196].iter().all(|&b| b == 0x22));
    assert!(after[4196..].iter().all(|&b| b == 0x11));
    // Copying import (in place turned off): written back on release.
    let mut copying = device(VulkanConfig {
        host_import: false,
        ..config()
    });
    let region: &'static mut [u8] = Box::leak(vec![0x33u8; 256].into_boxed_slice());
    let ptr = region.as_ptr();
    let b = copying
        .import_buffer(HostMemory::ReadWrite(region), BufferParams::host_visible())
        .expect("import");
    assert!(copying.buffer_info(b).expect("info").imported);
    copying
        .write_buffer(BufferSpan::new(b, 0, 4), &[9, 9, 9, 9])
        .expect("write");
    copying.release_buffer(b).expect("release");
    // SAFETY: the leaked region, after the buffer importing it was released.
    let back = unsafe { std::slice::from_raw_parts(ptr, 256) };
    assert_eq!(&back[..5], &[9, 9, 9, 9, 0x33]);
}

#[test]
fn reusable_command_buffers_replay_their_recording() {
    let _alone = common::alone();
    let mut dev = device(config());
    let a = dev
        .allocate_buffer(BufferParams::host_visible(), 1024)
        .expect("allocate");
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 1024)
        .expect("allocate");
    let cb = dev
        .create_command_buffer(CommandBufferMode::Reusable, 8, 1)
        .expect("command buffer");
    dev.record(
        cb,
        Record::Fill {
            target: BufferRef::slot(0).at(1, 7),
            pattern: &[0x44],
        },
    )
    .expect("record");
    dev.end(cb).expect("end");
    for round in 0..4 {
        let table = [BufferSpan::whole(if round < 3 { a } else { b })];
        run(&mut dev, |d, s| d.queue_execute(s, cb, &table)).expect("execute");
    }
    assert_eq!(
        dev.memoized_replays(),
        2,
        "rounds 1 and 2 replay round 0's recording"
    );
    let mut out = [0; 8];
    dev.read_buffer(BufferSpan::new(b, 0, 8), &mut out)
        .expect("read");
    assert_eq!(out, [0, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44]);
    // Same table again: replayed without planning.
    let table = [BufferSpan::whole(b)];
    run(&mut dev, |d, s| d.queue_execute(s, cb, &table)).expect("execute");
    assert_eq!(dev.memoized_replays(), 3);
    // Memory going away (any buffer) means planning (and checking) again; the plan comes
    // out the same and destroyed no Vulkan object it names, so the recording replays ...
    let other = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .expect("allocate");
    dev.release_buffer(other).expect("release");
    run(&mut dev, |d, s| d.queue_execute(s, cb, &table)).expect("execute");
    assert_eq!(dev.memoized_replays(), 4);
    // ... so a released table buffer is refused, not replayed.
    dev.release_buffer(a).expect("release");
    let stale = [BufferSpan::whole(a)];
    let refused = run(&mut dev, |d, s| d.queue_execute(s, cb, &stale));
    assert!(refused.is_err(), "{refused:?}");
    dev.release_command_buffer(cb).expect("release");
    dev.release_buffer(b).expect("release");
}

#[test]
fn generic_spirv_loads_and_invalid_spirv_is_refused() {
    let _alone = common::alone();
    let mut dev = device(config());
    let kernel = ember_kernels_wgsl::find("fill_u32").expect("fill_u32");
    let exe = dev
        .load_executable(ExecutableSource::Spirv {
            code: kernel.words,
            entry: kernel.entry,
        })
        .expect("generic SPIR-V");
    let out = dev
        .allocate_buffer(BufferParams::host_visible(), 400)
        .expect("allocate");
    dispatch(&mut dev, exe, [2, 1, 1], &[7], &[BufferRef::buffer(out)]).expect("dispatch");
    let mut bytes = [0; 400];
    dev.read_buffer(BufferSpan::whole(out), &mut bytes)
        .expect("read");
    assert!(bytes.chunks(4).all(|w| w == 7u32.to_ne_bytes()));
    dev.release_executable(exe).expect("release");
    dev.release_buffer(out).expect("release");
    let mut broken = kernel.words.to_vec();
    broken[0] = 0xDEAD_BEEF;
    for (code, what) in [
        (&[][..], "empty"),
        (&broken[..], "wrong magic"),
        (&kernel.words[..kernel.words.len() - 1], "truncated"),
    ] {
        let result = dev.load_executable(ExecutableSource::Spirv {
            code,
            entry: "main",
        });
        assert!(
            matches!(result, Err(Error::InvalidArgument(_))),
            "{what}: {result:?}"
        );
    }
    let result = dev.load_executable(ExecutableSource::Kernel("no_such_kernel"));
    assert!(matches!(result, Err(Error::UnknownKernel { .. })));
    assert_eq!(dev.vulkan_objects().of(VkObject::Pipeline), 0);
}

#[test]
fn memory_exhausted_and_allocations_over_every_heap_are_errors() {
    let _alone = common::alone();
    let mut dev = device(VulkanConfig {
        heap_budget: 8 << 20,
        block_size: 1 << 20,
        ..config()
    });
    let mut buffers = Vec::new();
    let error = loop {
        match dev.allocate_buffer(BufferParams::host_visible(), 200 << 10) {
            Ok(b) => buffers.push(b),
            Err(e) => break e,
        }
    };
    assert!(matches!(error, Error::Alloc(_)), "{error:?}");
    assert!(buffers.len() >= 30, "{} buffers in 8 MiB", buffers.len());
    for b in buffers {
        dev.release_buffer(b).expect("release");
    }
    let over = dev.allocate_buffer(
        BufferParams {
            memory_type: MemoryType::OPTIMAL,
            ..BufferParams::device_local()
        },
        1 << 40,
    );
    assert!(matches!(over, Err(Error::Alloc(_))), "{over:?}");
    assert_eq!(dev.allocator_stats(0).expect("stats").bytes_in_use, 0);
    assert_eq!(
        dev.vulkan_objects().of(VkObject::Memory),
        2,
        "the dummy buffer's and one empty block kept as a spare"
    );
    // The spare serves the next small buffer without new memory ...
    let again = dev
        .allocate_buffer(BufferParams::host_visible(), 200 << 10)
        .expect("allocate");
    assert_eq!(dev.vulkan_objects().of(VkObject::Memory), 2);
    dev.release_buffer(again).expect("release");
    // ... a whole-budget allocation takes its room ...
    let whole = dev
        .allocate_buffer(BufferParams::host_visible(), 8 << 20)
        .expect("the spare block gives way to a dedicated one");
    dev.release_buffer(whole).expect("release");
    // ... and trimming gives it back.
    dev.allocate_buffer(BufferParams::host_visible(), 4096)
        .and_then(|b| dev.release_buffer(b))
        .expect("small buffer");
    assert_eq!(dev.vulkan_objects().of(VkObject::Memory), 2);
    dev.trim();
    assert_eq!(
        dev.vulkan_objects().of(VkObject::Memory),
        1,
        "only the dummy buffer's"
    );
}

#[test]
fn a_binding_over_max_storage_buffer_range_is_an_error() {
    let _alone = common::alone();
    // One chunk larger than maxStorageBufferRange (128 MiB on lavapipe).
    let mut dev = device(VulkanConfig {
        max_allocation_size: 1 << 30,
        heap_budget: 1 << 30,
        block_size: 64 << 20,
        ..config()
    });
    let fill = dev
        .load_executable(ExecutableSource::Kernel("fill_u32"))
        .expect("fill_u32");
    let size = (128 << 20) + (1 << 20);
    let big = match dev.allocate_buffer(BufferParams::host_visible(), size) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot allocate {size} bytes here ({e:?}); skipped");
            dev.release_executable(fill).expect("release");
            return;
        }
    };
    let result = dispatch(&mut dev, fill, [1, 1, 1], &[1], &[BufferRef::buffer(big)]);
    match result {
        Err(Error::Limit { what, .. }) => assert!(what.contains("maxStorageBufferRange")),
        Ok(()) => {
            // The device's range is larger than the buffer: nothing to refuse.
        }
        Err(e) => panic!("a binding over maxStorageBufferRange: {e:?}"),
    }
    dev.release_executable(fill).expect("release");
    dev.release_buffer(big).expect("release");
}

#[test]
fn failed_semaphores_fail_work_without_leaks() {
    let _alone = common::alone();
    let mut dev = device(config());
    let b = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .expect("allocate");
    let gate = dev.create_semaphore(0).expect("semaphore");
    let done = dev.create_semaphore(0).expect("semaphore");
    dev.queue_fill(
        Submit::new(
            &[SemaphoreValue::new(gate, 1)],
            &[SemaphoreValue::new(done, 1)],
        ),
        BufferSpan::whole(b),
        &[1, 2],
    )
    .expect("queued");
    dev.fail_semaphore(gate, 5).expect("fail");
    assert_eq!(
        dev.wait_semaphores(&[SemaphoreValue::new(done, 1)], Timeout::Infinite),
        Err(Error::SemaphoreFailed { code: 5 })
    );
    let mut out = [0xFF; 64];
    dev.read_buffer(BufferSpan::whole(b), &mut out)
        .expect("read");
    assert_eq!(out, [0; 64]);
    {
        let map = dev
            .map(BufferSpan::new(b, 0, 8), MemoryAccess::READ)
            .expect("map");
        assert_eq!(map.bytes(), &[0; 8]);
    }
    for s in [gate, done] {
        dev.release_semaphore(s).expect("release");
    }
    dev.release_buffer(b).expect("release");
    assert_eq!(dev.object_counts(), Default::default());
}
