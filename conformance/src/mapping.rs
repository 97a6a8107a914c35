//! Mapping: scoped and persistent mappings, their bounds, access and life cycle.

use super::{alloc, download, host_params, host_params_all, pattern, with_device, Target};
use alloc::vec;
use hal_core::memory::{BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, Device, Error, Mapped, WHOLE};

/// Bytes written through a write mapping are read back through a read mapping and by the
/// host read path; a mapping covers exactly its span.
pub fn scoped_read_write<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 4096);
        let data = pattern(1000, 3);
        {
            let mut map = dev
                .map(BufferSpan::new(buffer, 100, 1000), MemoryAccess::WRITE)
                .expect("map for writing");
            assert_eq!(map.bytes().len(), 1000);
            map.bytes_mut()
                .expect("a WRITE mapping is writable")
                .copy_from_slice(&data);
        }
        {
            let map = dev
                .map(BufferSpan::new(buffer, 100, 1000), MemoryAccess::READ)
                .expect("map for reading");
            assert_eq!(map.bytes(), &data[..]);
        }
        assert_eq!(download(dev, buffer, 100, 1000), data);
        // And the other way: host writes show through a mapping.
        dev.write_buffer(BufferSpan::new(buffer, 2000, 4), &[1, 2, 3, 4])
            .expect("write");
        {
            let map = dev
                .map(BufferSpan::new(buffer, 2000, 4), MemoryAccess::READ)
                .expect("map");
            assert_eq!(map.bytes(), &[1, 2, 3, 4]);
        }
        // DISCARD_WRITE and READ|WRITE mappings are writable too.
        for access in [
            MemoryAccess::DISCARD_WRITE,
            MemoryAccess::READ | MemoryAccess::WRITE,
        ] {
            let mut map = dev.map(BufferSpan::new(buffer, 0, 8), access).expect("map");
            map.bytes_mut()
                .unwrap_or_else(|e| panic!("{access:?} mapping writable: {e:?}"))
                .fill(0xCD);
        }
        assert_eq!(download(dev, buffer, 0, 8), vec![0xCD; 8]);
        dev.release_buffer(buffer).expect("release");
    });
}

/// A mapping of length `WHOLE` runs from its offset to the buffer's end.
pub fn whole_length<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 1000);
        {
            let map = dev
                .map(BufferSpan::whole(buffer), MemoryAccess::READ)
                .expect("map whole");
            assert_eq!(map.bytes().len(), 1000);
        }
        {
            let map = dev
                .map(BufferSpan::new(buffer, 600, WHOLE), MemoryAccess::READ)
                .expect("map tail");
            assert_eq!(map.bytes().len(), 400);
        }
        {
            let map = dev
                .map(BufferSpan::new(buffer, 1000, 0), MemoryAccess::READ)
                .expect("an empty mapping at the end is in bounds");
            assert!(map.bytes().is_empty());
        }
        dev.release_buffer(buffer).expect("release");
    });
}

/// Ranges that leave the buffer are refused with `OutOfRange`.
pub fn bounds<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 1000);
        for (offset, length) in [
            (0, 1001),
            (999, 2),
            (1001, 0),
            (1001, WHOLE),
            (u64::MAX, 2),
            (2, u64::MAX - 1),
        ] {
            assert_err!(
                dev.map(BufferSpan::new(buffer, offset, length), MemoryAccess::READ),
                Error::OutOfRange { .. },
                "map {offset}+{length} of a 1000-byte buffer"
            );
        }
        dev.release_buffer(buffer).expect("release");
    });
}

/// A read mapping is not writable; access a buffer lacks cannot be mapped.
pub fn access<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        {
            let mut map = dev
                .map(BufferSpan::new(buffer, 0, 64), MemoryAccess::READ)
                .expect("map for reading");
            assert_err!(
                map.bytes_mut(),
                Error::Access { .. },
                "bytes_mut on a READ mapping"
            );
        }
        dev.release_buffer(buffer).expect("release");
    });
}

/// A buffer made read-only cannot be mapped, written or filled for writing.
pub fn read_only_buffer<T: Target>() {
    with_device::<T>(|dev| {
        let params = host_params();
        let params = hal_core::memory::BufferParams {
            access: MemoryAccess::READ,
            ..params
        };
        let buffer = dev.allocate_buffer(params, 64).expect("allocate read-only");
        assert!(!dev
            .buffer_info(buffer)
            .expect("info")
            .access
            .contains(MemoryAccess::WRITE));
        assert_err!(
            dev.map(BufferSpan::new(buffer, 0, 64), MemoryAccess::WRITE),
            Error::Access { .. },
            "WRITE mapping of a READ buffer"
        );
        assert_err!(
            dev.write_buffer(BufferSpan::new(buffer, 0, 4), &[1; 4]),
            Error::Access { .. },
            "write_buffer into a READ buffer"
        );
        assert_err!(
            super::run(dev, |d, s| d.queue_fill(
                s,
                BufferSpan::new(buffer, 0, 64),
                &[1]
            )),
            Error::Access { .. } | Error::SemaphoreFailed { .. },
            "queue_fill of a READ buffer"
        );
        {
            let map = dev
                .map(BufferSpan::new(buffer, 0, 64), MemoryAccess::READ)
                .expect("READ mapping of a READ buffer");
            assert_eq!(map.bytes().len(), 64);
        }
        dev.release_buffer(buffer).expect("release");
    });
}

/// Mapping a buffer made without a mapping usage is refused.
pub fn needs_mapping_usage<T: Target>() {
    with_device::<T>(|dev| {
        let params = host_params().with_usage(BufferUsage::DEFAULT);
        let buffer = dev
            .allocate_buffer(params, 64)
            .expect("host-visible buffer without mapping usage");
        assert_err!(
            dev.map(BufferSpan::new(buffer, 0, 64), MemoryAccess::READ),
            Error::Usage { .. } | Error::NotMappable,
            "map without MAPPING_SCOPED"
        );
        // The host read and write paths need no mapping usage.
        dev.write_buffer(BufferSpan::new(buffer, 0, 4), &[9; 4])
            .expect("write_buffer without mapping usage");
        assert_eq!(download(dev, buffer, 0, 4), vec![9; 4]);
        dev.release_buffer(buffer).expect("release");
    });
}

/// A persistent mapping is made once, used many times, and goes stale when unmapped.
pub fn persistent_lifecycle<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = dev
            .allocate_buffer(host_params_all(), 4096)
            .expect("allocate");
        let mapping = dev
            .map_persistent(BufferSpan::new(buffer, 1024, 1024), MemoryAccess::ALL)
            .expect("map_persistent");
        for round in 0..3u8 {
            {
                let mut bytes = dev.mapped(mapping).expect("mapped");
                assert_eq!(bytes.bytes().len(), 1024);
                bytes.bytes_mut().expect("writable").fill(round);
            }
            assert_eq!(download(dev, buffer, 1024, 1024), vec![round; 1024]);
            dev.write_buffer(BufferSpan::new(buffer, 1024, 1), &[0xEE])
                .expect("write");
            let bytes = dev.mapped(mapping).expect("mapped");
            assert_eq!(bytes.bytes()[0], 0xEE, "host writes show in the mapping");
        }
        // A read-only persistent mapping alongside.
        let reader = dev
            .map_persistent(BufferSpan::new(buffer, 0, 16), MemoryAccess::READ)
            .expect("second persistent mapping");
        assert_err!(
            dev.mapped(reader).expect("mapped").bytes_mut(),
            Error::Access { .. },
            "bytes_mut of a READ persistent mapping"
        );
        dev.unmap(reader).expect("unmap");
        dev.unmap(mapping).expect("unmap");
        assert_err!(
            dev.mapped(mapping),
            Error::StaleHandle { .. },
            "mapped after unmap"
        );
        assert_err!(dev.unmap(mapping), Error::StaleHandle { .. }, "unmap twice");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Persistent mapping needs `MAPPING_PERSISTENT` usage, in-bounds ranges and the access the
/// buffer allows.
pub fn persistent_needs_usage<T: Target>() {
    with_device::<T>(|dev| {
        let scoped_only = alloc(dev, 64);
        assert_err!(
            dev.map_persistent(BufferSpan::new(scoped_only, 0, 64), MemoryAccess::READ),
            Error::Usage { .. } | Error::NotMappable,
            "map_persistent without MAPPING_PERSISTENT"
        );
        let buffer = dev
            .allocate_buffer(host_params_all(), 64)
            .expect("allocate");
        assert_err!(
            dev.map_persistent(BufferSpan::new(buffer, 32, 64), MemoryAccess::READ),
            Error::OutOfRange { .. },
            "map_persistent out of range"
        );
        dev.release_buffer(buffer).expect("release");
        dev.release_buffer(scoped_only).expect("release");
    });
}

/// Releasing a buffer ends its persistent mappings: their handles go stale.
pub fn persistent_gone_with_buffer<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = dev
            .allocate_buffer(host_params_all(), 256)
            .expect("allocate");
        let mapping = dev
            .map_persistent(BufferSpan::new(buffer, 0, 256), MemoryAccess::ALL)
            .expect("map_persistent");
        dev.release_buffer(buffer)
            .expect("release a persistently mapped buffer");
        assert_err!(
            dev.mapped(mapping),
            Error::StaleHandle { .. },
            "mapped after the buffer went"
        );
        // A new buffer in the same place is not reachable through the old mapping.
        let other = dev
            .allocate_buffer(host_params_all(), 256)
            .expect("allocate");
        assert_err!(
            dev.mapped(mapping),
            Error::StaleHandle { .. },
            "old mapping after a new buffer took the slot"
        );
        assert!(dev.unmap(mapping).is_err(), "unmap of a mapping that went");
        dev.release_buffer(other).expect("release");
    });
}

/// A released buffer cannot be mapped.
pub fn stale_after_release<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        dev.release_buffer(buffer).expect("release");
        assert_err!(
            dev.map(BufferSpan::new(buffer, 0, 64), MemoryAccess::READ),
            Error::StaleHandle { .. },
            "map after release"
        );
        let reused = alloc(dev, 64);
        assert_err!(
            dev.map(BufferSpan::new(buffer, 0, 64), MemoryAccess::READ),
            Error::StaleHandle { .. },
            "map of a stale handle whose slot was reused"
        );
        dev.release_buffer(reused).expect("release");
    });
}
