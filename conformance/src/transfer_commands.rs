//! Transfer commands: fills, updates and copies, recorded in a command buffer and queued on
//! their own (`queue_fill`, `queue_update`, `queue_copy`), write exactly their ranges.

use super::{alloc, download, execute, filled, pattern, run, upload, with_device, Target};
use alloc::{vec, vec::Vec};
use hal_core::{BufferRef, BufferSpan, Device, Error, Record, WHOLE};

/// `len` bytes of `byte`, with `pattern` repeated over `offset..offset + length`.
fn expected_fill(len: usize, byte: u8, fills: &[(usize, usize, &[u8])]) -> Vec<u8> {
    let mut want = vec![byte; len];
    for &(offset, length, pattern) in fills {
        for i in 0..length {
            want[offset + i] = pattern[i % pattern.len()];
        }
    }
    want
}

/// Recorded fills with 1-, 2- and 4-byte patterns fill exactly their ranges.
pub fn fill_patterns<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = filled(dev, 64, 0xEE);
        let whole = filled(dev, 40, 0xEE);
        execute(
            dev,
            &[
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(3, 5),
                    pattern: &[0xAB],
                },
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(10, 6),
                    pattern: &[1, 2],
                },
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(20, 12),
                    pattern: &[9, 8, 7, 6],
                },
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(40, WHOLE),
                    pattern: &[5, 4, 3, 2],
                },
                Record::Fill {
                    target: BufferRef::buffer(whole),
                    pattern: &[0x10, 0x20],
                },
            ],
        )
        .expect("recorded fills");
        let want = expected_fill(
            64,
            0xEE,
            &[
                (3, 5, &[0xAB]),
                (10, 6, &[1, 2]),
                (20, 12, &[9, 8, 7, 6]),
                (40, 24, &[5, 4, 3, 2]),
            ],
        );
        assert_eq!(download(dev, buffer, 0, 64), want);
        assert_eq!(
            download(dev, whole, 0, 40),
            expected_fill(40, 0, &[(0, 40, &[0x10, 0x20])])
        );
        dev.release_buffer(buffer).expect("release");
        dev.release_buffer(whole).expect("release");
    });
}

/// `queue_fill` with 1-, 2- and 4-byte patterns fills exactly its range.
pub fn queue_fill_patterns<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = filled(dev, 64, 0xEE);
        for (offset, length, pattern) in [
            (3usize, 5usize, &[0xABu8][..]),
            (10, 6, &[1, 2][..]),
            (20, 12, &[9, 8, 7, 6][..]),
        ] {
            run(dev, |d, s| {
                d.queue_fill(
                    s,
                    BufferSpan::new(buffer, offset as u64, length as u64),
                    pattern,
                )
            })
            .unwrap_or_else(|e| panic!("queue_fill {offset}+{length} with {pattern:?}: {e:?}"));
        }
        run(dev, |d, s| {
            d.queue_fill(s, BufferSpan::new(buffer, 40, WHOLE), &[5, 4, 3, 2])
        })
        .expect("queue_fill to the end");
        let want = expected_fill(
            64,
            0xEE,
            &[
                (3, 5, &[0xAB]),
                (10, 6, &[1, 2]),
                (20, 12, &[9, 8, 7, 6]),
                (40, 24, &[5, 4, 3, 2]),
            ],
        );
        assert_eq!(download(dev, buffer, 0, 64), want);
        dev.release_buffer(buffer).expect("release");
    });
}

/// Recorded updates write their bytes (small and several data slots long) and nothing else.
pub fn update<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = filled(dev, 8192, 0xEE);
        let small = pattern(100, 1);
        let large = pattern(4096, 2);
        let tiny = [0x42u8];
        execute(
            dev,
            &[
                Record::Update {
                    target: BufferRef::buffer(buffer).at(5, WHOLE),
                    data: &small,
                },
                Record::Update {
                    target: BufferRef::buffer(buffer).at(4000, 4096),
                    data: &large,
                },
                Record::Update {
                    target: BufferRef::buffer(buffer).at(8191, 1),
                    data: &tiny,
                },
            ],
        )
        .expect("recorded updates");
        let mut want = vec![0xEE; 8192];
        want[5..105].copy_from_slice(&small);
        want[4000..8096].copy_from_slice(&large);
        want[8191] = 0x42;
        assert_eq!(download(dev, buffer, 0, 8192), want);
        dev.release_buffer(buffer).expect("release");
    });
}

/// `queue_update` copies its bytes at the call: changing them afterwards, before the
/// operation runs, does not change what lands.
pub fn queue_update<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = filled(dev, 256, 0xEE);
        let gate = dev.create_semaphore(0).expect("semaphore");
        let done = dev.create_semaphore(0).expect("semaphore");
        let mut data = pattern(100, 3);
        let sent = data.clone();
        dev.queue_update(
            hal_core::Submit::new(
                &[hal_core::SemaphoreValue::new(gate, 1)],
                &[hal_core::SemaphoreValue::new(done, 1)],
            ),
            &data,
            BufferSpan::new(buffer, 50, 100),
        )
        .expect("queue_update behind a gate");
        data.fill(0);
        dev.signal_semaphore(gate, 1).expect("open the gate");
        dev.wait_semaphores(
            &[hal_core::SemaphoreValue::new(done, 1)],
            hal_core::Timeout::Infinite,
        )
        .expect("wait");
        let mut want = vec![0xEE; 256];
        want[50..150].copy_from_slice(&sent);
        assert_eq!(download(dev, buffer, 0, 256), want);
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(done).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Recorded copies between buffers and between disjoint ranges of one buffer.
pub fn copy<T: Target>() {
    with_device::<T>(|dev| {
        let data = pattern(256, 5);
        let a = upload(dev, &data);
        let b = filled(dev, 256, 0);
        execute(
            dev,
            &[
                Record::Copy {
                    source: BufferRef::buffer(a).at(10, WHOLE),
                    target: BufferRef::buffer(b).at(100, WHOLE),
                    length: 50,
                },
                Record::Copy {
                    source: BufferRef::buffer(a).at(0, 64),
                    target: BufferRef::buffer(a).at(64, 64),
                    length: 64,
                },
            ],
        )
        .expect("recorded copies");
        let mut want_b = vec![0; 256];
        want_b[100..150].copy_from_slice(&data[10..60]);
        assert_eq!(download(dev, b, 0, 256), want_b);
        let mut want_a = data.clone();
        want_a.copy_within(0..64, 64);
        assert_eq!(download(dev, a, 0, 256), want_a);
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
    });
}

/// `queue_copy` between buffers and between disjoint ranges of one buffer.
pub fn queue_copy<T: Target>() {
    with_device::<T>(|dev| {
        let data = pattern(256, 6);
        let a = upload(dev, &data);
        let b = filled(dev, 256, 0);
        run(dev, |d, s| {
            d.queue_copy(
                s,
                BufferSpan::new(a, 10, 50),
                BufferSpan::new(b, 100, 50),
                50,
            )
        })
        .expect("queue_copy");
        run(dev, |d, s| {
            d.queue_copy(
                s,
                BufferSpan::new(a, 0, 64),
                BufferSpan::new(a, 128, 64),
                64,
            )
        })
        .expect("queue_copy within a buffer");
        let mut want_b = vec![0; 256];
        want_b[100..150].copy_from_slice(&data[10..60]);
        assert_eq!(download(dev, b, 0, 256), want_b);
        let mut want_a = data.clone();
        want_a.copy_within(0..64, 128);
        assert_eq!(download(dev, a, 0, 256), want_a);
        // Overlapping ranges: refused, or copied as if through a temporary (memmove).
        for (from, to) in [(0u64, 32u64), (32, 0)] {
            let before = download(dev, a, 0, 256);
            match run(dev, |d, s| {
                d.queue_copy(
                    s,
                    BufferSpan::new(a, from, 64),
                    BufferSpan::new(a, to, 64),
                    64,
                )
            }) {
                Err(e) => {
                    assert!(
                        matches!(e, Error::InvalidArgument(_) | Error::SemaphoreFailed { .. }),
                        "overlapping queue_copy {from}→{to} refused with {e:?}"
                    );
                    assert_eq!(download(dev, a, 0, 256), before, "nothing written");
                }
                Ok(()) => {
                    let mut want = before.clone();
                    want.copy_within(from as usize..from as usize + 64, to as usize);
                    assert_eq!(
                        download(dev, a, 0, 256),
                        want,
                        "an overlapping queue_copy {from}→{to} that runs must behave like memmove"
                    );
                }
            }
        }
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
    });
}
