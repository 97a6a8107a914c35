//! Importing host memory: zero-copy in both directions, and read-only memory stays unwritten.

use super::{
    bytes_f32, download, f32_bytes, host_params, load, pattern, run, values, with_device, Target,
};
use alloc::{boxed::Box, vec, vec::Vec};
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess};
use hal_core::{BufferRef, BufferSpan, Device, Error, Mapped};

/// Host memory handed to a driver as `&'static mut`, with a pointer kept to look at it once
/// the driver is done with it.
struct Leaked {
    ptr: *mut u8,
    len: usize,
}

/// Leaks a 4-byte-aligned copy of `data` (kernels read imported memory as 32-bit words, and
/// a `Vec<u8>` is only 1-aligned — under Miri, really) and returns a raw pointer to it.
fn leak_aligned(data: &[u8]) -> *mut [u8] {
    let words: *mut [u32] = Box::into_raw(vec![0u32; data.len().div_ceil(4)].into_boxed_slice());
    let raw = core::ptr::slice_from_raw_parts_mut(words.cast::<u8>(), data.len());
    // SAFETY: `raw` covers the first `data.len()` bytes of a leaked allocation of at least
    // that many bytes; `u8` has no alignment or validity requirement; no other reference to
    // the allocation exists.
    unsafe { &mut *raw }.copy_from_slice(data);
    raw
}

impl Leaked {
    /// Leaks a copy of `data`; returns the region and the unique reference for the driver.
    fn new(data: &[u8]) -> (Self, &'static mut [u8]) {
        let raw: *mut [u8] = leak_aligned(data);
        // SAFETY: `raw` comes from a leaked box, so it is valid, aligned and never freed. The
        // reference is the only one used until the driver releases the buffer; `Leaked` reads
        // through the original pointer only after that.
        let bytes = unsafe { &mut *raw };
        (
            Self {
                ptr: raw.cast::<u8>(),
                len: data.len(),
            },
            bytes,
        )
    }

    /// The bytes now. Call only once the buffer that imported them is released.
    fn read(&self) -> Vec<u8> {
        // SAFETY: the region is a leaked allocation of `len` bytes; the buffer importing it
        // was released, so no reference handed to the driver is in use any more.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
    }
}

fn read_only_params() -> BufferParams {
    BufferParams {
        usage: BufferUsage::TRANSFER_SOURCE
            | BufferUsage::DISPATCH_STORAGE_READ
            | BufferUsage::MAPPING_SCOPED,
        access: MemoryAccess::READ,
        ..host_params()
    }
}

/// An imported read-write region is used in place: the device sees the host's bytes, and
/// its fills, dispatches, writes and mappings land in the host memory itself.
pub fn read_write_is_zero_copy<T: Target>() {
    with_device::<T>(|dev| {
        let original = pattern(4096, 0x3C);
        let (region, bytes) = Leaked::new(&original);
        let buffer = dev
            .import_buffer(T::host_memory(bytes), host_params())
            .expect("import read-write host memory");
        let info = dev.buffer_info(buffer).expect("info");
        assert!(info.imported, "{info:?}");
        assert_eq!(info.size, 4096);
        assert!(info.access.contains(MemoryAccess::WRITE), "{info:?}");
        assert_eq!(dev.object_counts().buffers, 1);
        assert_eq!(
            download(dev, buffer, 0, 4096),
            original,
            "the device sees the host's bytes"
        );

        run(dev, |d, s| {
            d.queue_fill(s, BufferSpan::new(buffer, 0, 1024), &[0x11])
        })
        .expect("queue_fill");
        let fill = load::<T>(dev, "fill_u32");
        super::dispatch(
            dev,
            fill,
            [2, 1, 1],
            &[0xDEAD_BEEF],
            &[BufferRef::buffer(buffer).at(1024, 1024)],
        )
        .expect("fill_u32 into imported memory");
        dev.release_executable(fill).expect("release");
        dev.write_buffer(BufferSpan::new(buffer, 2048, 4), &[1, 2, 3, 4])
            .expect("write_buffer");
        {
            let mut map = dev
                .map(BufferSpan::new(buffer, 3000, 10), MemoryAccess::WRITE)
                .expect("map imported memory");
            map.bytes_mut().expect("writable").fill(0x22);
        }
        dev.release_buffer(buffer).expect("release");

        let host = region.read();
        let mut want = original.clone();
        want[..1024].fill(0x11);
        want[1024..2048].copy_from_slice(&super::u32_bytes(&[0xDEAD_BEEF; 256]));
        want[2048..2052].copy_from_slice(&[1, 2, 3, 4]);
        want[3000..3010].fill(0x22);
        for (i, (h, w)) in host.iter().zip(&want).enumerate() {
            assert_eq!(
                h, w,
                "host byte {i} after device writes to the imported buffer"
            );
        }
    });
}

/// Imported read-only memory can be read, copied from and bound as a kernel input, and every
/// way of writing it is refused: mapping for writing, host writes, fills, and a kernel that
/// writes it (which fails its submission).
pub fn read_only_refuses_writes<T: Target>() {
    with_device::<T>(|dev| {
        let input = values(256, 7);
        // SAFETY: a leaked allocation, never freed or written again.
        let data: &'static [u8] = unsafe { &*leak_aligned(&f32_bytes(&input)) };
        let buffer = dev
            .import_buffer(T::host_memory_read_only(data), read_only_params())
            .expect("import read-only host memory");
        let info = dev.buffer_info(buffer).expect("info");
        assert!(info.imported);
        assert!(!info.access.contains(MemoryAccess::WRITE), "{info:?}");
        assert_eq!(download(dev, buffer, 0, 1024), data);
        {
            let map = dev
                .map(BufferSpan::new(buffer, 0, 1024), MemoryAccess::READ)
                .expect("READ mapping of read-only memory");
            assert_eq!(map.bytes(), data);
        }
        assert_err!(
            dev.map(BufferSpan::new(buffer, 0, 16), MemoryAccess::WRITE),
            Error::Access { .. } | Error::Usage { .. },
            "WRITE mapping of read-only memory"
        );
        assert_err!(
            dev.write_buffer(BufferSpan::new(buffer, 0, 4), &[0; 4]),
            Error::Access { .. } | Error::Usage { .. },
            "write_buffer into read-only memory"
        );
        assert!(
            run(dev, |d, s| d.queue_fill(
                s,
                BufferSpan::new(buffer, 0, 16),
                &[0]
            ))
            .is_err(),
            "queue_fill of read-only memory"
        );

        // Copy out of it.
        let copy = super::alloc(dev, 1024);
        run(dev, |d, s| {
            d.queue_copy(
                s,
                BufferSpan::new(buffer, 0, 1024),
                BufferSpan::new(copy, 0, 1024),
                1024,
            )
        })
        .expect("copy out of read-only memory");
        assert_eq!(download(dev, copy, 0, 1024), data);

        // A kernel reads it...
        let relu = load::<T>(dev, "relu_f32");
        super::dispatch(
            dev,
            relu,
            [4, 1, 1],
            &[],
            &[BufferRef::buffer(buffer), BufferRef::buffer(copy)],
        )
        .expect("relu_f32 reading read-only memory");
        let got = bytes_f32(&download(dev, copy, 0, 1024));
        let want: Vec<f64> = input.iter().map(|&x| f64::from(x.max(0.0))).collect();
        super::assert_close(&got, &want, 0.0, "relu of imported constants");

        // ...but a kernel writing it fails, and the bytes stay.
        let result = super::dispatch(
            dev,
            relu,
            [4, 1, 1],
            &[],
            &[BufferRef::buffer(copy), BufferRef::buffer(buffer)],
        );
        assert!(
            result.is_err(),
            "a dispatch writing read-only memory must fail"
        );
        assert_eq!(bytes_f32(data), input, "read-only memory unchanged");
        dev.release_executable(relu).expect("release");
        dev.release_buffer(copy).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Importing read-only memory with write access asked for is refused, or gives a buffer
/// without write access.
pub fn read_only_refuses_write_access<T: Target>() {
    with_device::<T>(|dev| {
        // SAFETY: a leaked allocation, never freed or written again.
        let data: &'static [u8] = unsafe { &*leak_aligned(&[0x42u8; 256]) };
        match dev.import_buffer(T::host_memory_read_only(data), host_params()) {
            Err(e) => assert!(
                matches!(
                    e,
                    Error::Access { .. }
                        | Error::Usage { .. }
                        | Error::InvalidArgument(_)
                        | Error::Params(_)
                        | Error::Unsupported(_)
                ),
                "import read-only memory for writing refused with {e:?}"
            ),
            Ok(buffer) => {
                let info = dev.buffer_info(buffer).expect("info");
                assert!(
                    !info.access.contains(MemoryAccess::WRITE),
                    "read-only memory imported with write access: {info:?}"
                );
                assert!(dev
                    .write_buffer(BufferSpan::new(buffer, 0, 4), &[0; 4])
                    .is_err());
                assert!(run(dev, |d, s| d.queue_fill(
                    s,
                    BufferSpan::new(buffer, 0, 4),
                    &[0]
                ))
                .is_err());
                dev.release_buffer(buffer).expect("release");
            }
        }
        assert!(
            data.iter().all(|&b| b == 0x42),
            "read-only memory unchanged"
        );
    });
}
