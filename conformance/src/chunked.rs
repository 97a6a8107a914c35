//! Chunked buffers: one buffer over several allocations. Host reads and writes, fills,
//! copies and updates cross chunk boundaries; mappings and dispatch bindings stay in one
//! chunk.

use super::{download, host_params_all, load, pattern, run, with_device, Target};
use alloc::vec;
use hal_core::memory::MemoryAccess;
use hal_core::{Buffer, BufferRef, BufferSpan, Device, Error, Mapped, Record, WHOLE};

/// A buffer of 3.5 × heap 0's largest allocation, and its chunk size.
fn chunked<D: Device>(dev: &mut D) -> (Buffer, u64, u64) {
    let max = dev.heaps()[0].max_allocation_size;
    assert!(
        max <= 1 << 20,
        "the suite needs heap 0's max_allocation_size ≤ 1 MiB, not {max}"
    );
    let size = 3 * max + max / 2;
    let buffer = dev
        .allocate_buffer(host_params_all(), size)
        .unwrap_or_else(|e| panic!("chunked buffer of {size} bytes: {e:?}"));
    let chunk = dev.buffer_info(buffer).expect("info").chunk_size;
    (buffer, size, chunk)
}

fn write_all<D: Device>(dev: &mut D, buffer: Buffer, data: &[u8]) {
    dev.write_buffer(BufferSpan::new(buffer, 0, data.len() as u64), data)
        .expect("write_buffer across chunks");
}

/// A buffer larger than the largest allocation is chunked, each chunk at most that size.
pub fn layout<T: Target>() {
    with_device::<T>(|dev| {
        let max = dev.heaps()[0].max_allocation_size;
        let (buffer, size, chunk) = chunked(dev);
        let info = dev.buffer_info(buffer).expect("info");
        assert_eq!(info.size, size);
        assert!(info.chunk_count() > 1, "{info:?}");
        assert!(chunk <= max && chunk > 0, "chunk size {chunk}, max {max}");
        assert!(
            chunk * (info.chunk_count() - 1) < size && size <= chunk * info.chunk_count(),
            "{info:?}"
        );
        assert_eq!(chunk % dev.heaps()[0].min_alignment.min(chunk), 0);
        assert_eq!(dev.object_counts().buffers, 1, "one handle for all chunks");
        dev.release_buffer(buffer).expect("release");
    });
}

/// `write_buffer` and `read_buffer` move any range, across every chunk boundary.
pub fn host_read_write_across_chunks<T: Target>() {
    with_device::<T>(|dev| {
        let (buffer, size, chunk) = chunked(dev);
        let data = pattern(size as usize, 1);
        write_all(dev, buffer, &data);
        assert_eq!(download(dev, buffer, 0, size as usize), data);
        let patch = pattern(300, 0x80);
        dev.write_buffer(BufferSpan::new(buffer, chunk - 100, 300), &patch)
            .expect("write across a boundary");
        let mut want = data[(chunk - 200) as usize..(chunk + 300) as usize].to_vec();
        want[100..400].copy_from_slice(&patch);
        assert_eq!(download(dev, buffer, chunk - 200, 500), want);
        // The last bytes of the last (short) chunk.
        assert_eq!(
            download(dev, buffer, size - 7, 7),
            data[(size - 7) as usize..].to_vec()
        );
        dev.release_buffer(buffer).expect("release");
    });
}

/// A fill across two chunk boundaries fills exactly its range.
pub fn fill_across_chunks<T: Target>() {
    with_device::<T>(|dev| {
        let (buffer, size, chunk) = chunked(dev);
        write_all(dev, buffer, &vec![0xEE; size as usize]);
        let (offset, length) = (chunk - 64, chunk + 128 + 64);
        run(dev, |d, s| {
            d.queue_fill(s, BufferSpan::new(buffer, offset, length), &[1, 2, 3, 4])
        })
        .expect("queue_fill across chunks");
        let got = download(dev, buffer, 0, size as usize);
        for (i, &b) in got.iter().enumerate() {
            let i = i as u64;
            let want = if (offset..offset + length).contains(&i) {
                [1, 2, 3, 4][((i - offset) % 4) as usize]
            } else {
                0xEE
            };
            assert_eq!(b, want, "byte {i} (chunk size {chunk})");
        }
        // A recorded fill of the whole buffer.
        super::execute_one(
            dev,
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[0x77],
            },
        )
        .expect("recorded fill of a chunked buffer");
        assert_eq!(
            download(dev, buffer, 0, size as usize),
            vec![0x77; size as usize]
        );
        dev.release_buffer(buffer).expect("release");
    });
}

/// Copies between and within chunked buffers, with ranges that cross boundaries at
/// different places on each side.
pub fn copy_across_chunks<T: Target>() {
    with_device::<T>(|dev| {
        let (a, size, chunk) = chunked(dev);
        let (b, _, _) = chunked(dev);
        let data = pattern(size as usize, 9);
        write_all(dev, a, &data);
        write_all(dev, b, &vec![0; size as usize]);

        let (from, to, length) = (chunk - 1000, chunk / 2, chunk + 3000);
        run(dev, |d, s| {
            d.queue_copy(
                s,
                BufferSpan::new(a, from, length),
                BufferSpan::new(b, to, length),
                length,
            )
        })
        .expect("queue_copy between chunked buffers");
        let mut want = vec![0; size as usize];
        want[to as usize..(to + length) as usize]
            .copy_from_slice(&data[from as usize..(from + length) as usize]);
        assert_eq!(download(dev, b, 0, size as usize), want);

        // Within one buffer, ranges apart.
        let (from, to, length) = (10, 2 * chunk - 50, chunk + 100);
        super::execute_one(
            dev,
            Record::Copy {
                source: BufferRef::buffer(a).at(from, length),
                target: BufferRef::buffer(a).at(to, length),
                length,
            },
        )
        .expect("recorded copy within a chunked buffer");
        let mut want = data.clone();
        want.copy_within(from as usize..(from + length) as usize, to as usize);
        assert_eq!(download(dev, a, 0, size as usize), want);
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
    });
}

/// Updates, queued and recorded, across a chunk boundary.
pub fn update_across_chunks<T: Target>() {
    with_device::<T>(|dev| {
        let (buffer, size, chunk) = chunked(dev);
        write_all(dev, buffer, &vec![0; size as usize]);
        let data = pattern(3000, 0x55);
        run(dev, |d, s| {
            d.queue_update(s, &data, BufferSpan::new(buffer, chunk - 1500, 3000))
        })
        .expect("queue_update across a boundary");
        assert_eq!(download(dev, buffer, chunk - 1500, 3000), data);
        let data2 = pattern(777, 0x66);
        super::execute_one(
            dev,
            Record::Update {
                target: BufferRef::buffer(buffer).at(2 * chunk - 333, 777),
                data: &data2,
            },
        )
        .expect("recorded update across a boundary");
        assert_eq!(download(dev, buffer, 2 * chunk - 333, 777), data2);
        dev.release_buffer(buffer).expect("release");
    });
}

/// A mapping inside one chunk works; one across a boundary is `CrossesChunks`.
pub fn map_within_and_across_chunks<T: Target>() {
    with_device::<T>(|dev| {
        let (buffer, size, chunk) = chunked(dev);
        let data = pattern(size as usize, 4);
        write_all(dev, buffer, &data);
        for (offset, length) in [(chunk, 100), (0, chunk), (3 * chunk, size - 3 * chunk)] {
            let map = dev
                .map(BufferSpan::new(buffer, offset, length), MemoryAccess::READ)
                .unwrap_or_else(|e| panic!("map {offset}+{length} inside a chunk: {e:?}"));
            assert_eq!(
                map.bytes(),
                &data[offset as usize..(offset + length) as usize]
            );
        }
        for (offset, length) in [
            (chunk - 10, 20),
            (0, WHOLE),
            (0, chunk + 1),
            (chunk, 2 * chunk),
        ] {
            assert_err!(
                dev.map(BufferSpan::new(buffer, offset, length), MemoryAccess::READ),
                Error::CrossesChunks { .. },
                "map {offset}+{length} (chunk size {chunk})"
            );
        }
        assert_err!(
            dev.map_persistent(BufferSpan::new(buffer, chunk - 1, 2), MemoryAccess::READ),
            Error::CrossesChunks { .. },
            "persistent map across a boundary"
        );
        let inside = dev
            .map_persistent(BufferSpan::new(buffer, 2 * chunk, 64), MemoryAccess::READ)
            .expect("persistent map inside a chunk");
        assert_eq!(
            dev.mapped(inside).expect("mapped").bytes(),
            &data[2 * chunk as usize..2 * chunk as usize + 64]
        );
        dev.unmap(inside).expect("unmap");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A dispatch binding inside one chunk works; one across a boundary fails (at record or
/// at execution), and nothing is written.
pub fn dispatch_binding_within_a_chunk<T: Target>() {
    with_device::<T>(|dev| {
        let (buffer, size, chunk) = chunked(dev);
        write_all(dev, buffer, &vec![0; size as usize]);
        let fill = load::<T>(dev, "fill_u32");
        let at = 2 * chunk + 64;
        super::dispatch(
            dev,
            fill,
            [3, 1, 1],
            &[0x0102_0304],
            &[BufferRef::buffer(buffer).at(at, 4096)],
        )
        .expect("fill_u32 into a span of chunk 2");
        assert_eq!(
            download(dev, buffer, at - 4, 4104),
            [
                vec![0; 4],
                super::u32_bytes(&[0x0102_0304; 1024]),
                vec![0; 4]
            ]
            .concat()
        );
        let result = super::dispatch(
            dev,
            fill,
            [3, 1, 1],
            &[7],
            &[BufferRef::buffer(buffer).at(chunk - 512, 1024)],
        );
        assert!(
            result.is_err(),
            "a binding across a chunk boundary must be refused"
        );
        assert_eq!(
            download(dev, buffer, chunk - 512, 1024),
            vec![0; 1024],
            "nothing written by a refused dispatch"
        );
        dev.release_executable(fill).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// An empty range at the very end of a chunked buffer maps, to no bytes.
pub fn empty_range_at_the_end_maps<T: Target>() {
    with_device::<T>(|dev| {
        let (buffer, size, _) = chunked(dev);
        {
            let map = dev
                .map(BufferSpan::new(buffer, size, 0), MemoryAccess::READ)
                .expect("map an empty range at the end");
            assert!(map.bytes().is_empty());
        }
        dev.release_buffer(buffer).expect("release");
    });
}
