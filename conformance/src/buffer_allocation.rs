//! Heaps and buffer allocation: what a device offers, allocate and release, statistics, and
//! parameters a device must refuse.

use super::{alloc, assert_works, run, with_device, Target};
use alloc::{vec, vec::Vec};
use hal_core::memory::alloc::AllocError;
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess, MemoryType, ParamsError};
use hal_core::{BufferSpan, Device, Error, Mapped, WHOLE};

fn total_in_use<D: Device>(dev: &D) -> (u64, u64) {
    (0..dev.heaps().len())
        .filter_map(|h| dev.allocator_stats(h).ok())
        .fold((0, 0), |(bytes, count), s| {
            (bytes + s.bytes_in_use, count + s.allocation_count)
        })
}

/// The heaps are well formed, heap 0 is host-visible, and every heap has statistics.
pub fn heaps<T: Target>() {
    with_device::<T>(|dev| {
        let heaps = dev.heaps().to_vec();
        assert!(!heaps.is_empty(), "a device offers at least one heap");
        assert!(
            heaps[0].types.is_mappable(),
            "the suite needs heap 0 host-visible: {:?}",
            heaps[0]
        );
        assert!(
            heaps[0].max_allocation_size <= 1 << 20,
            "the suite needs heap 0's max_allocation_size ≤ 1 MiB"
        );
        for (i, heap) in heaps.iter().enumerate() {
            assert!(heap.min_alignment.is_power_of_two(), "heap {i}: {heap:?}");
            assert!(heap.max_allocation_size > 0, "heap {i}: {heap:?}");
            assert!(heap.max_allocation_size <= heap.size, "heap {i}: {heap:?}");
            let stats = dev
                .allocator_stats(i)
                .unwrap_or_else(|e| panic!("allocator_stats({i}): {e:?}"));
            assert!(stats.bytes_in_use <= stats.capacity, "heap {i}: {stats:?}");
            // Every heap names a domain (and the call does not panic).
            let _ = dev.memory_domain(heap.types);
        }
        assert!(
            dev.allocator_stats(heaps.len()).is_err(),
            "allocator_stats of a heap that does not exist"
        );
        assert!(dev.allocator_stats(usize::MAX).is_err());
    });
}

/// A buffer is what was asked for, and its handle goes stale when released.
pub fn allocate_release<T: Target>() {
    with_device::<T>(|dev| {
        let params = super::host_params();
        let buffer = dev.allocate_buffer(params, 1000).expect("allocate");
        let info = dev.buffer_info(buffer).expect("buffer_info");
        assert_eq!(info.size, 1000);
        assert!(info.usage.contains(params.usage), "{info:?}");
        assert!(info.access.contains(params.access), "{info:?}");
        assert!(info.memory_type.satisfies(params.memory_type), "{info:?}");
        assert_eq!(info.chunk_count(), 1, "a small buffer is one allocation");
        assert!(!info.imported);
        assert_eq!(dev.object_counts().buffers, 1);

        // Buffers do not overlap: each keeps what was written to it.
        let others: Vec<_> = (0..8u8)
            .map(|i| {
                let b = alloc(dev, 333);
                dev.write_buffer(BufferSpan::new(b, 0, 333), &[i; 333])
                    .expect("write");
                b
            })
            .collect();
        for (i, b) in others.iter().enumerate() {
            assert_eq!(
                super::download(dev, *b, 0, 333),
                vec![i as u8; 333],
                "buffer {i}"
            );
            dev.release_buffer(*b).expect("release");
        }

        dev.release_buffer(buffer).expect("release");
        assert_eq!(dev.object_counts().buffers, 0);
        assert_err!(
            dev.buffer_info(buffer),
            Error::StaleHandle { .. },
            "buffer_info after release"
        );
        assert_err!(
            dev.release_buffer(buffer),
            Error::StaleHandle { .. },
            "double release"
        );
    });
}

/// Allocations show in the statistics and leave them when released.
pub fn stats<T: Target>() {
    with_device::<T>(|dev| {
        let (bytes0, count0) = total_in_use(dev);
        let a = alloc(dev, 64 << 10);
        let b = alloc(dev, 100);
        let (bytes1, count1) = total_in_use(dev);
        assert!(
            bytes1 >= bytes0 + (64 << 10) + 100,
            "bytes_in_use {bytes0} → {bytes1} after 64 KiB + 100 B"
        );
        assert!(count1 >= count0 + 2, "allocation_count {count0} → {count1}");
        let peak = (0..dev.heaps().len())
            .filter_map(|h| dev.allocator_stats(h).ok())
            .map(|s| s.peak_bytes_in_use)
            .sum::<u64>();
        assert!(peak >= bytes1, "peak {peak} below in-use {bytes1}");
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
        assert_eq!(total_in_use(dev), (bytes0, count0), "released buffers free");
    });
}

/// Alignments the heap offers are honoured (seen through the mapped address, to 64 bytes);
/// larger ones are honoured or refused with an alignment error, never ignored.
pub fn alignment<T: Target>() {
    with_device::<T>(|dev| {
        let heap_alignment = dev.heaps()[0].min_alignment;
        for shift in [0u32, 2, 4, 6, 8, 12, 16] {
            let align = 1u64 << shift;
            let params = super::host_params().with_min_alignment(align);
            // A small allocation first, so the next one is not trivially at offset 0.
            let pad = alloc(dev, 24);
            match dev.allocate_buffer(params, 100) {
                Ok(buffer) => {
                    let check = align.min(64);
                    let map = dev
                        .map(BufferSpan::new(buffer, 0, 100), MemoryAccess::READ)
                        .expect("map");
                    let address = map.bytes().as_ptr() as usize as u64;
                    drop(map);
                    assert_eq!(
                        address % check,
                        0,
                        "min_alignment {align}: mapped address {address:#x} is not aligned to {check}"
                    );
                    dev.release_buffer(buffer).expect("release");
                }
                Err(e) => {
                    assert!(
                        align > heap_alignment,
                        "min_alignment {align} (heap's is {heap_alignment}) refused: {e:?}"
                    );
                    assert!(
                        matches!(
                            e,
                            Error::Alloc(AllocError::UnsupportedAlignment { .. })
                                | Error::Params(ParamsError::Alignment(_))
                                | Error::Unsupported(_)
                                | Error::Limit { .. }
                        ),
                        "min_alignment {align} refused with an unrelated error: {e:?}"
                    );
                }
            }
            dev.release_buffer(pad).expect("release");
        }
    });
}

/// Parameters no heap can satisfy are refused with a parameter error, and nothing is made.
pub fn params_refused<T: Target>() {
    with_device::<T>(|dev| {
        let heaps = dev.heaps().to_vec();
        for bad in [3u64, 48, 100, u64::MAX] {
            let params = super::host_params().with_min_alignment(bad);
            assert_err!(
                dev.allocate_buffer(params, 256),
                Error::Params(ParamsError::Alignment(_))
                    | Error::Alloc(AllocError::InvalidAlignment { .. }),
                "min_alignment {bad}"
            );
        }

        // Mapping usage on memory no host-visible heap offers.
        for heap in heaps.iter().filter(|h| !h.types.is_mappable()) {
            let satisfied_by_mappable = heaps
                .iter()
                .any(|h| h.types.is_mappable() && h.types.satisfies(heap.types));
            if satisfied_by_mappable {
                continue;
            }
            let params = BufferParams {
                memory_type: heap.types,
                usage: BufferUsage::TRANSFER | BufferUsage::MAPPING_SCOPED,
                access: MemoryAccess::ALL,
                queue_affinity: 0,
                min_alignment: 0,
            };
            assert_err!(
                dev.allocate_buffer(params, 256),
                Error::Params(_) | Error::NotMappable,
                "mapping usage on non-host-visible memory {:?}",
                heap.types
            );
        }

        // A memory type no heap offers.
        let all_types = MemoryType::all();
        if !heaps.iter().any(|h| h.types.satisfies(all_types)) {
            let params = BufferParams {
                memory_type: all_types,
                ..super::host_params()
            };
            assert_err!(
                dev.allocate_buffer(params, 256),
                Error::Params(_),
                "a memory type no heap offers"
            );
        }

        // A usage no heap allows.
        let allowed = heaps
            .iter()
            .fold(BufferUsage::empty(), |u, h| u | h.allowed_usage);
        let missing = BufferUsage::all()
            .difference(allowed)
            .difference(BufferUsage::MAPPING_OPTIONAL);
        if !missing.is_empty() {
            let params = super::host_params().with_usage(missing);
            assert_err!(
                dev.allocate_buffer(params, 256),
                Error::Params(_),
                "usage {missing:?} no heap allows"
            );
        }
        assert_eq!(
            dev.object_counts().buffers,
            0,
            "refused buffers are not made"
        );
    });
}

/// Zero bytes and more than the heap holds are refused, without making anything.
pub fn zero_and_huge_sizes<T: Target>() {
    with_device::<T>(|dev| {
        let heap_size = dev.heaps()[0].size;
        let before = total_in_use(dev);
        assert!(
            dev.allocate_buffer(super::host_params(), 0).is_err(),
            "a zero-sized buffer"
        );
        for size in [heap_size + 1, heap_size * 2, u64::MAX / 2, u64::MAX] {
            let result = dev.allocate_buffer(super::host_params(), size);
            assert!(result.is_err(), "a buffer of {size} bytes: {result:?}");
        }
        assert_eq!(total_in_use(dev), before, "refused sizes allocate nothing");
        assert_eq!(dev.object_counts().buffers, 0);
    });
}

/// A chunked allocation that runs out of memory part way frees the chunks it took.
pub fn failed_chunked_allocation_leaks_nothing<T: Target>() {
    with_device::<T>(|dev| {
        let heap = dev.heaps()[0];
        let capacity = dev
            .allocator_stats(0)
            .map_or(heap.size, |s| s.capacity)
            .min(heap.size);
        // Something small in the way, so a buffer of the whole capacity cannot fit, but most
        // of its chunks can.
        let pad = alloc(dev, 64);
        let before = total_in_use(dev);
        let result = dev.allocate_buffer(super::host_params(), capacity);
        assert!(
            result.is_err(),
            "a buffer of the whole capacity: {result:?}"
        );
        assert_eq!(
            total_in_use(dev),
            before,
            "a failed chunked allocation gave back what it took"
        );
        assert_eq!(dev.object_counts().buffers, 1);
        // Half the memory is still there to be had, in one piece.
        let half = dev
            .allocate_buffer(super::host_params(), (capacity / 2).min(64 << 20))
            .expect("half the memory after a failed allocation");
        assert!(dev.buffer_info(half).expect("info").chunk_count() > 1);
        dev.release_buffer(half).expect("release");
        dev.release_buffer(pad).expect("release");
    });
}

/// Allocating until the buffer table or the memory runs out is an error, not a panic; the
/// device keeps working, and everything comes back when released.
pub fn table_full<T: Target>() {
    with_device::<T>(|dev| {
        let before = total_in_use(dev);
        let mut buffers = Vec::new();
        let error = loop {
            assert!(buffers.len() < 1 << 16, "no limit after 65536 buffers");
            match dev.allocate_buffer(super::host_params(), 4096) {
                Ok(b) => buffers.push(b),
                Err(e) => break e,
            }
        };
        assert!(
            matches!(
                error,
                Error::TableFull { .. }
                    | Error::Alloc(AllocError::OutOfMemory { .. })
                    | Error::Alloc(AllocError::OutOfMetadata { .. })
            ),
            "allocating until full ended with {error:?}"
        );
        assert!(!buffers.is_empty());
        // Still usable while full: fill and read an existing buffer.
        let span = BufferSpan::new(buffers[0], 0, WHOLE);
        run(dev, |d, s| d.queue_fill(s, span, &[7])).expect("fill while full");
        assert_eq!(super::download(dev, buffers[0], 0, 4096), vec![7; 4096]);
        // One slot back, one allocation possible again.
        let last = buffers.pop().expect("one");
        dev.release_buffer(last).expect("release");
        let again = dev
            .allocate_buffer(super::host_params(), 4096)
            .expect("allocate after one release");
        buffers.push(again);
        for b in buffers {
            dev.release_buffer(b).expect("release");
        }
        assert_eq!(total_in_use(dev), before);
        assert_works(dev);
    });
}
