//! Moving data in: streaming host reads in bounded chunks, and copies between two devices
//! along the path their memory connection gives.

use super::{alloc, download, pattern, run, with_device, Baseline, Target};
use alloc::{boxed::Box, vec};
use hal_core::connection::copy_between;
use hal_core::memory::{BufferParams, BufferUsage};
use hal_core::{BufferSpan, Device, Error, HostSource, MemoryConnection, WHOLE};

/// `queue_read` streams more than a MiB in 64 KiB chunks: every byte lands, and the
/// statistics count the chunks.
pub fn queue_read_streams<T: Target>() {
    with_device::<T>(|dev| {
        // Under Miri a smaller read (the interpreter is slow), still many chunks.
        let (len, chunk) = if cfg!(miri) {
            ((64 << 10) + 12_345, 4 << 10)
        } else {
            ((1 << 20) + 12_345, 64 << 10)
        };
        let data = pattern(len, 0x21);
        let target = alloc(dev, len as u64 + 100);
        dev.write_buffer(
            BufferSpan::new(target, 0, len as u64 + 100),
            &vec![0xEE; len + 100],
        )
        .expect("clear");
        let mut source: &[u8] = &data;
        let stats = run(dev, |d, s| {
            d.queue_read(
                s,
                &mut source,
                BufferSpan::new(target, 50, len as u64),
                chunk,
            )
        })
        .expect("queue_read");
        assert_eq!(stats.bytes, len as u64);
        assert_eq!(stats.chunks, (len as u64).div_ceil(chunk));
        assert_eq!(download(dev, target, 50, len), data);
        assert_eq!(download(dev, target, 0, 50), vec![0xEE; 50]);
        assert_eq!(download(dev, target, len as u64 + 50, 50), vec![0xEE; 50]);

        // A chunk size larger than the data: one chunk.
        let small = pattern(1000, 0x42);
        let mut source: &[u8] = &small;
        let stats = run(dev, |d, s| {
            d.queue_read(s, &mut source, BufferSpan::new(target, 0, 1000), 1 << 20)
        })
        .expect("queue_read in one chunk");
        assert_eq!(stats.chunks, 1);
        assert_eq!(stats.bytes, 1000);
        assert_eq!(download(dev, target, 0, 1000), small);
        dev.release_buffer(target).expect("release");
    });
}

/// The target span sets how much is read: a longer source is read in part; a source
/// shorter than the span, a chunk size of zero and a span past the buffer are refused.
pub fn queue_read_refuses_bad_input<T: Target>() {
    with_device::<T>(|dev| {
        let target = alloc(dev, 500);
        let data = pattern(1000, 0x31);
        let mut source: &[u8] = &data;
        let stats = run(dev, |d, s| {
            d.queue_read(s, &mut source, BufferSpan::new(target, 0, 500), 64)
        })
        .expect("the first 500 bytes of a 1000-byte source");
        assert_eq!(stats.bytes, 500);
        assert_eq!(stats.chunks, 500u64.div_ceil(64));
        assert_eq!(download(dev, target, 0, 500), data[..500].to_vec());
        dev.write_buffer(BufferSpan::new(target, 0, 500), &[0xEE; 500])
            .expect("clear");
        let mut source: &[u8] = &data[..100];
        assert_err!(
            run(dev, |d, s| d.queue_read(
                s,
                &mut source,
                BufferSpan::new(target, 0, 500),
                64
            )),
            Error::OutOfRange { .. } | Error::SemaphoreFailed { .. },
            "a 100-byte source into a 500-byte span"
        );
        let mut source: &[u8] = &data[..100];
        assert_err!(
            run(dev, |d, s| d.queue_read(
                s,
                &mut source,
                BufferSpan::new(target, 0, 100),
                0
            )),
            Error::InvalidArgument(_) | Error::SemaphoreFailed { .. },
            "a chunk size of zero"
        );
        let mut source: &[u8] = &data[..100];
        assert_err!(
            run(dev, |d, s| d.queue_read(
                s,
                &mut source,
                BufferSpan::new(target, 450, 100),
                64
            )),
            Error::OutOfRange { .. } | Error::SemaphoreFailed { .. },
            "a target span past the buffer"
        );
        assert_eq!(dev.object_counts().pending, 0);
        assert_eq!(
            download(dev, target, 0, 500),
            vec![0xEE; 500],
            "refused reads write nothing"
        );
        dev.release_buffer(target).expect("release");
    });
}

/// A host source that fails part way.
struct Failing {
    len: u64,
    fail_from: u64,
}

impl HostSource for Failing {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        if offset + out.len() as u64 > self.fail_from {
            return Err(Error::Backend {
                what: "test source: flash read",
                result: 7,
            });
        }
        out.fill(0xAA);
        Ok(())
    }
}

/// A source that fails part way fails the read (returned or through its semaphore), and
/// the device keeps working.
pub fn queue_read_source_failure<T: Target>() {
    with_device::<T>(|dev| {
        let target = alloc(dev, 4096);
        let mut source = Failing {
            len: 4096,
            fail_from: 2048,
        };
        let result = run(dev, |d, s| {
            d.queue_read(s, &mut source, BufferSpan::new(target, 0, 4096), 512)
        });
        assert!(result.is_err(), "a failing source: {result:?}");
        assert_eq!(dev.object_counts().pending, 0);
        dev.release_buffer(target).expect("release");
    });
}

/// `copy_between` two devices moves the bytes, across chunks on both sides and at offsets,
/// and reports the connection their memory domains give.
pub fn copy_between_devices<T: Target>() {
    let mut a = Box::new(T::create());
    let mut b = Box::new(T::create());
    let (base_a, base_b) = (Baseline::of(&*a), Baseline::of(&*b));
    let max = a.heaps()[0]
        .max_allocation_size
        .min(b.heaps()[0].max_allocation_size);
    let len = (2 * max + max / 3) as usize;
    let data = pattern(len + 100, 0x17);
    let source = super::upload(&mut *a, &data);
    let target = alloc(&mut *b, len as u64 + 3000);
    b.write_buffer(
        BufferSpan::new(target, 0, len as u64 + 3000),
        &vec![0; len + 3000],
    )
    .expect("clear");
    let domain_a = a.memory_domain(a.buffer_info(source).expect("info").memory_type);
    let domain_b = b.memory_domain(b.buffer_info(target).expect("info").memory_type);
    let mut staging = vec![0u8; 4096];
    let connection = copy_between(
        &mut *a,
        BufferSpan::new(source, 100, len as u64),
        &mut *b,
        BufferSpan::new(target, 3000, len as u64),
        len as u64,
        &mut staging,
    )
    .expect("copy_between");
    assert_eq!(
        connection,
        MemoryConnection::between(domain_a, domain_b),
        "the path taken is the one the domains give"
    );
    assert_eq!(download(&mut *b, target, 3000, len), data[100..].to_vec());
    assert_eq!(download(&mut *b, target, 0, 3000), vec![0; 3000]);
    assert_eq!(
        download(&mut *a, source, 0, len + 100),
        data,
        "source unchanged"
    );

    // And back, the other way round.
    let back = alloc(&mut *a, 5000);
    let connection = copy_between(
        &mut *b,
        BufferSpan::new(target, 3000, 5000),
        &mut *a,
        BufferSpan::new(back, 0, 5000),
        5000,
        &mut staging,
    )
    .expect("copy_between b → a");
    assert_eq!(connection, MemoryConnection::between(domain_b, domain_a));
    assert_eq!(download(&mut *a, back, 0, 5000), data[100..5100].to_vec());

    a.release_buffer(source).expect("release");
    a.release_buffer(back).expect("release");
    b.release_buffer(target).expect("release");
    super::assert_works(&mut *a);
    super::assert_works(&mut *b);
    base_a.check(&*a, "device a");
    base_b.check(&*b, "device b");
}

/// `copy_between` two devices' buffers that cannot be mapped (transfer usage only) moves the
/// bytes through host transfers, through a staging buffer smaller than the copy, with the
/// length `WHOLE` (the rest of the source span), and reports the connection their memory
/// domains give.
pub fn copy_between_unmappable_buffers<T: Target>() {
    let mut a = Box::new(T::create());
    let mut b = Box::new(T::create());
    let (base_a, base_b) = (Baseline::of(&*a), Baseline::of(&*b));
    let params = BufferParams::device_local().with_usage(BufferUsage::TRANSFER);
    let source = a
        .allocate_buffer(params, 128)
        .expect("allocate an unmappable source");
    let target = b
        .allocate_buffer(params, 128)
        .expect("allocate an unmappable target");
    a.write_buffer(BufferSpan::whole(source), &[5; 128])
        .expect("write_buffer");
    let domain_a = a.memory_domain(a.buffer_info(source).expect("info").memory_type);
    let domain_b = b.memory_domain(b.buffer_info(target).expect("info").memory_type);
    let connection = copy_between(
        &mut *a,
        BufferSpan::whole(source),
        &mut *b,
        BufferSpan::whole(target),
        WHOLE,
        &mut [0; 32],
    )
    .expect("copy_between unmappable buffers");
    assert_eq!(
        connection,
        MemoryConnection::between(domain_a, domain_b),
        "the path taken is the one the domains give"
    );
    assert_eq!(download(&mut *b, target, 0, 128), vec![5; 128]);
    a.release_buffer(source).expect("release");
    b.release_buffer(target).expect("release");
    super::assert_works(&mut *a);
    super::assert_works(&mut *b);
    base_a.check(&*a, "device a");
    base_b.check(&*b, "device b");
}
