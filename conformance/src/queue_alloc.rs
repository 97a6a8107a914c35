//! Queue-ordered allocation: `queue_alloca` → use → `queue_dealloca`, ordered by semaphores,
//! with nothing leaked however many times it runs.

use super::{download, host_params, with_device, Target};
use alloc::{vec, vec::Vec};
use hal_core::{Buffer, BufferSpan, Device, Error, Semaphore, SemaphoreValue, Submit, Timeout};

fn sv(semaphore: Semaphore, value: u64) -> SemaphoreValue {
    SemaphoreValue::new(semaphore, value)
}

/// alloca, fill, dealloca, each waiting on the one before through one timeline.
pub fn ordered_by_semaphores<T: Target>() {
    with_device::<T>(|dev| {
        let t = dev.create_semaphore(0).expect("create");
        let buffer = dev
            .queue_alloca(Submit::new(&[], &[sv(t, 1)]), host_params(), 4096)
            .expect("queue_alloca");
        assert_eq!(dev.object_counts().buffers, 1);
        let info = dev
            .buffer_info(buffer)
            .expect("info of a queue-allocated buffer");
        assert_eq!(info.size, 4096);
        dev.queue_fill(
            Submit::new(&[sv(t, 1)], &[sv(t, 2)]),
            BufferSpan::whole(buffer),
            &[0x5C],
        )
        .expect("fill after the alloca");
        dev.wait_semaphores(&[sv(t, 2)], Timeout::Infinite)
            .expect("wait for the fill");
        assert_eq!(download(dev, buffer, 0, 4096), vec![0x5C; 4096]);
        dev.queue_dealloca(Submit::new(&[sv(t, 2)], &[sv(t, 3)]), buffer)
            .expect("queue_dealloca");
        dev.wait_semaphores(&[sv(t, 3)], Timeout::Infinite)
            .expect("wait for the dealloca");
        assert_err!(
            dev.buffer_info(buffer),
            Error::StaleHandle { .. },
            "buffer_info after dealloca"
        );
        dev.release_semaphore(t).expect("release");
    });
}

/// The whole chain queued behind a host gate: the buffer's handle exists at once, nothing
/// runs until the gate opens, and the dealloca waits for its own gate.
pub fn ordered_behind_host_signal<T: Target>() {
    with_device::<T>(|dev| {
        let gate = dev.create_semaphore(0).expect("create");
        let t = dev.create_semaphore(0).expect("create");
        let buffer = dev
            .queue_alloca(
                Submit::new(&[sv(gate, 1)], &[sv(t, 1)]),
                host_params(),
                1000,
            )
            .expect("queue_alloca behind the gate");
        dev.queue_fill(
            Submit::new(&[sv(t, 1)], &[sv(t, 2)]),
            BufferSpan::new(buffer, 0, 1000),
            &[0x6D],
        )
        .expect("fill behind the alloca");
        assert_eq!(dev.query_semaphore(t), Ok(0), "nothing ran before the gate");
        dev.signal_semaphore(gate, 1).expect("open the gate");
        dev.wait_semaphores(&[sv(t, 2)], Timeout::Infinite)
            .expect("alloca and fill ran");
        assert_eq!(download(dev, buffer, 0, 1000), vec![0x6D; 1000]);
        dev.queue_dealloca(Submit::new(&[sv(gate, 2)], &[sv(t, 3)]), buffer)
            .expect("dealloca behind a second gate");
        assert_eq!(dev.query_semaphore(t), Ok(2), "dealloca waits for its gate");
        assert_eq!(
            download(dev, buffer, 0, 1000),
            vec![0x6D; 1000],
            "the buffer lives until its dealloca runs"
        );
        dev.signal_semaphore(gate, 2).expect("open the second gate");
        dev.wait_semaphores(&[sv(t, 3)], Timeout::Infinite)
            .expect("dealloca ran");
        assert!(dev.buffer_info(buffer).is_err(), "gone after the dealloca");
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(t).expect("release");
    });
}

/// Many alloca/dealloca pairs, together far more than the device's memory, leak nothing.
pub fn no_leak<T: Target>() {
    with_device::<T>(|dev| {
        let baseline = super::Baseline::of(dev);
        let t = dev.create_semaphore(0).expect("create");
        let size = 64 << 10;
        let rounds = (dev.heaps()[0].size / size * 3).clamp(64, 1024);
        let mut value = 0;
        for round in 0..rounds {
            let buffer = dev
                .queue_alloca(
                    Submit::new(&[sv(t, value)], &[sv(t, value + 1)]),
                    host_params(),
                    size,
                )
                .unwrap_or_else(|e| panic!("queue_alloca round {round}: {e:?}"));
            dev.queue_fill(
                Submit::new(&[sv(t, value + 1)], &[sv(t, value + 2)]),
                BufferSpan::new(buffer, size - 4, 4),
                &[round as u8],
            )
            .expect("fill");
            dev.queue_dealloca(
                Submit::new(&[sv(t, value + 2)], &[sv(t, value + 3)]),
                buffer,
            )
            .unwrap_or_else(|e| panic!("queue_dealloca round {round}: {e:?}"));
            value += 3;
            // Keep a few rounds in flight before waiting.
            if round % 4 == 3 {
                dev.wait_semaphores(&[sv(t, value)], Timeout::Infinite)
                    .expect("wait");
            }
        }
        dev.wait_semaphores(&[sv(t, value)], Timeout::Infinite)
            .expect("wait");
        dev.release_semaphore(t).expect("release");
        baseline.check(dev, "after many alloca/dealloca pairs");
        // Interleaved: several live at once, freed out of order.
        let t = dev.create_semaphore(0).expect("create");
        let buffers: Vec<Buffer> = (0..4)
            .map(|i| {
                dev.queue_alloca(Submit::new(&[], &[sv(t, i + 1)]), host_params(), 100_000)
                    .expect("queue_alloca")
            })
            .collect();
        dev.wait_semaphores(&[sv(t, 4)], Timeout::Infinite)
            .expect("wait");
        for (i, &b) in [buffers[2], buffers[0], buffers[3], buffers[1]]
            .iter()
            .enumerate()
        {
            dev.queue_dealloca(Submit::new(&[], &[sv(t, 5 + i as u64)]), b)
                .expect("queue_dealloca");
        }
        dev.wait_semaphores(&[sv(t, 8)], Timeout::Infinite)
            .expect("wait");
        dev.release_semaphore(t).expect("release");
        baseline.check(dev, "after out-of-order deallocas");
    });
}

/// Deallocating a released, already deallocated or forged buffer is refused, and queues
/// nothing.
pub fn dealloca_stale<T: Target>() {
    with_device::<T>(|dev| {
        let t = dev.create_semaphore(0).expect("create");
        let released = super::alloc(dev, 64);
        dev.release_buffer(released).expect("release");
        let deallocated = dev
            .queue_alloca(Submit::new(&[], &[sv(t, 1)]), host_params(), 64)
            .expect("queue_alloca");
        dev.queue_dealloca(Submit::new(&[sv(t, 1)], &[sv(t, 2)]), deallocated)
            .expect("queue_dealloca");
        dev.wait_semaphores(&[sv(t, 2)], Timeout::Infinite)
            .expect("wait");
        for (buffer, what) in [
            (released, "a released buffer"),
            (deallocated, "a buffer deallocated already"),
            (Buffer::from_parts(3000, 1), "a forged buffer"),
        ] {
            let result = dev.queue_dealloca(Submit::new(&[], &[sv(t, 3)]), buffer);
            assert_err!(result, Error::StaleHandle { .. }, "dealloca of {what}");
            assert_eq!(dev.object_counts().pending, 0);
        }
        assert_eq!(
            dev.query_semaphore(t),
            Ok(2),
            "refused deallocas signal nothing"
        );
        dev.release_semaphore(t).expect("release");
    });
}

/// Many queue allocations live at once — more than a transient arena holds — are usable,
/// do not overlap, and all come back.
pub fn many_live_at_once<T: Target>() {
    with_device::<T>(|dev| {
        let baseline = super::Baseline::of(dev);
        let t = dev.create_semaphore(0).expect("create");
        let size = 200_000u64;
        let mut buffers = Vec::new();
        for i in 0..12u64 {
            match dev.queue_alloca(Submit::new(&[], &[sv(t, i + 1)]), host_params(), size) {
                Ok(b) => buffers.push(b),
                Err(e) => {
                    assert!(
                        matches!(e, Error::Alloc(_) | Error::TableFull { .. }),
                        "queue_alloca {i} refused with {e:?}"
                    );
                    break;
                }
            }
        }
        let n = buffers.len() as u64;
        assert!(n >= 4, "only {n} queue allocations of {size} bytes fit");
        dev.wait_semaphores(&[sv(t, n)], Timeout::Infinite)
            .expect("wait");
        for (i, &b) in buffers.iter().enumerate() {
            dev.write_buffer(
                BufferSpan::new(b, 0, size),
                &vec![i as u8 + 1; size as usize],
            )
            .expect("write");
        }
        for (i, &b) in buffers.iter().enumerate() {
            assert_eq!(
                download(dev, b, 0, size as usize),
                vec![i as u8 + 1; size as usize],
                "queue allocation {i} overlaps another"
            );
        }
        for (i, &b) in buffers.iter().rev().enumerate() {
            dev.queue_dealloca(Submit::new(&[], &[sv(t, n + 1 + i as u64)]), b)
                .expect("queue_dealloca");
        }
        dev.wait_semaphores(&[sv(t, 2 * n)], Timeout::Infinite)
            .expect("wait");
        dev.release_semaphore(t).expect("release");
        baseline.check(dev, "after many live queue allocations");
    });
}
