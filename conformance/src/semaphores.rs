//! Timeline semaphores: values that only move forward, host waits that never hang, queued
//! work released by host signals, and failure propagating down chains of work.

use super::{alloc, dispatch, download, load, upload, with_device, Target};
use alloc::vec;
use hal_core::{
    BufferRef, BufferSpan, Device, Error, Record, Semaphore, SemaphoreValue, Submit, Timeout,
};

fn sv(semaphore: Semaphore, value: u64) -> SemaphoreValue {
    SemaphoreValue::new(semaphore, value)
}

/// A semaphore starts at its initial value and moves only forward.
pub fn create_query_signal<T: Target>() {
    with_device::<T>(|dev| {
        let s = dev.create_semaphore(5).expect("create");
        assert_eq!(dev.object_counts().semaphores, 1);
        assert_eq!(dev.query_semaphore(s), Ok(5));
        dev.signal_semaphore(s, 7).expect("signal forward");
        assert_eq!(dev.query_semaphore(s), Ok(7));
        assert_eq!(
            dev.signal_semaphore(s, 7),
            Err(Error::SemaphoreBackwards {
                current: 7,
                requested: 7
            }),
            "signal to the current value"
        );
        assert_eq!(
            dev.signal_semaphore(s, 3),
            Err(Error::SemaphoreBackwards {
                current: 7,
                requested: 3
            }),
            "signal backwards"
        );
        assert_eq!(
            dev.query_semaphore(s),
            Ok(7),
            "refused signals change nothing"
        );
        dev.signal_semaphore(s, u64::MAX)
            .expect("signal to the top");
        assert_eq!(dev.query_semaphore(s), Ok(u64::MAX));
        let zero = dev.create_semaphore(0).expect("create at 0");
        assert_eq!(dev.query_semaphore(zero), Ok(0));
        dev.release_semaphore(zero).expect("release");
        dev.release_semaphore(s).expect("release");
    });
}

/// Waits already satisfied return at once, whatever the timeout.
pub fn wait_already_satisfied<T: Target>() {
    with_device::<T>(|dev| {
        let a = dev.create_semaphore(3).expect("create");
        let b = dev.create_semaphore(10).expect("create");
        for timeout in [Timeout::Immediate, Timeout::Nanos(0), Timeout::Infinite] {
            dev.wait_semaphores(&[sv(a, 3)], timeout)
                .unwrap_or_else(|e| panic!("wait for the current value ({timeout:?}): {e:?}"));
            dev.wait_semaphores(&[sv(a, 1), sv(b, 10), sv(b, 0)], timeout)
                .unwrap_or_else(|e| panic!("wait for past values ({timeout:?}): {e:?}"));
            dev.wait_semaphores(&[], timeout)
                .unwrap_or_else(|e| panic!("wait for nothing ({timeout:?}): {e:?}"));
        }
        dev.release_semaphore(a).expect("release");
        dev.release_semaphore(b).expect("release");
    });
}

/// A wait that is not satisfied, with a bounded timeout, is an error, not a hang; all
/// values of the list must be reached.
pub fn wait_immediate_unsatisfied<T: Target>() {
    with_device::<T>(|dev| {
        let a = dev.create_semaphore(1).expect("create");
        let b = dev.create_semaphore(0).expect("create");
        for timeout in [
            Timeout::Immediate,
            Timeout::Nanos(0),
            Timeout::Nanos(1_000_000),
        ] {
            assert_err!(
                dev.wait_semaphores(&[sv(a, 2)], timeout),
                Error::Timeout | Error::WaitNeverSatisfied { .. },
                "wait for 2 on a semaphore at 1 ({timeout:?})"
            );
            assert_err!(
                dev.wait_semaphores(&[sv(a, 1), sv(b, 1)], timeout),
                Error::Timeout | Error::WaitNeverSatisfied { .. },
                "wait for two values, one reached ({timeout:?})"
            );
        }
        assert_eq!(
            dev.query_semaphore(a),
            Ok(1),
            "a failed wait changes nothing"
        );
        dev.release_semaphore(a).expect("release");
        dev.release_semaphore(b).expect("release");
    });
}

/// An operation waiting on a semaphore the host has not signalled stays queued, touches
/// nothing, and runs once the host signals it.
pub fn host_signal_releases_queued_work<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 64]);
        let gate = dev.create_semaphore(0).expect("create");
        let done = dev.create_semaphore(0).expect("create");
        dev.queue_fill(
            Submit::new(&[sv(gate, 2)], &[sv(done, 1)]),
            BufferSpan::whole(buffer),
            &[0x11],
        )
        .expect("queue a fill behind the gate");
        assert_eq!(dev.object_counts().pending, 1, "the fill waits");
        assert_eq!(dev.query_semaphore(done), Ok(0));
        assert_eq!(download(dev, buffer, 0, 64), vec![0xEE; 64], "not run yet");
        dev.signal_semaphore(gate, 1).expect("signal 1");
        assert_eq!(
            dev.query_semaphore(done),
            Ok(0),
            "1 does not reach a wait for 2"
        );
        assert_eq!(
            download(dev, buffer, 0, 64),
            vec![0xEE; 64],
            "still not run"
        );
        dev.signal_semaphore(gate, 2).expect("signal 2");
        dev.wait_semaphores(&[sv(done, 1)], Timeout::Infinite)
            .expect("the fill ran once the gate opened");
        assert_eq!(download(dev, buffer, 0, 64), vec![0x11; 64]);
        assert_eq!(dev.object_counts().pending, 0);

        // A chain of three operations behind one gate runs in order.
        let copy_target = alloc(dev, 64);
        dev.queue_fill(
            Submit::new(&[sv(gate, 3)], &[sv(done, 2)]),
            BufferSpan::whole(buffer),
            &[0x22],
        )
        .expect("queue");
        dev.queue_copy(
            Submit::new(&[sv(done, 2)], &[sv(done, 3)]),
            BufferSpan::whole(buffer),
            BufferSpan::whole(copy_target),
            64,
        )
        .expect("queue");
        dev.queue_fill(
            Submit::new(&[sv(done, 3)], &[sv(done, 4)]),
            BufferSpan::whole(buffer),
            &[0x33],
        )
        .expect("queue");
        assert_eq!(dev.object_counts().pending, 3);
        dev.signal_semaphore(gate, 3).expect("signal");
        dev.wait_semaphores(&[sv(done, 4)], Timeout::Infinite)
            .expect("the chain ran");
        assert_eq!(download(dev, copy_target, 0, 64), vec![0x22; 64]);
        assert_eq!(download(dev, buffer, 0, 64), vec![0x33; 64]);
        assert_eq!(dev.object_counts().pending, 0);
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(done).expect("release");
        dev.release_buffer(buffer).expect("release");
        dev.release_buffer(copy_target).expect("release");
    });
}

/// Failing a semaphore fails every operation waiting on it and every semaphore those would
/// have signalled, down a chain A → op → B → op → C, with the same code; none of them runs.
pub fn fail_propagates_through_chain<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 64]);
        let [a, b, c] = [0; 3].map(|_| dev.create_semaphore(0).expect("create"));
        dev.queue_fill(
            Submit::new(&[sv(a, 1)], &[sv(b, 1)]),
            BufferSpan::new(buffer, 0, 32),
            &[1],
        )
        .expect("queue A → B");
        let cb = dev
            .create_command_buffer(hal_core::CommandBufferMode::OneShot, 4, 0)
            .expect("command buffer");
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer).at(32, 32),
                pattern: &[2],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        dev.queue_execute(Submit::new(&[sv(b, 1)], &[sv(c, 1)]), cb, &[])
            .expect("queue B → C");
        assert_eq!(dev.object_counts().pending, 2);
        dev.fail_semaphore(a, 42).expect("fail A");
        assert_eq!(
            dev.query_semaphore(a),
            Err(Error::SemaphoreFailed { code: 42 })
        );
        assert_eq!(
            dev.wait_semaphores(&[sv(c, 1)], Timeout::Infinite),
            Err(Error::SemaphoreFailed { code: 42 }),
            "the end of the chain fails with A's code"
        );
        assert_eq!(
            dev.query_semaphore(b),
            Err(Error::SemaphoreFailed { code: 42 })
        );
        assert_eq!(
            dev.query_semaphore(c),
            Err(Error::SemaphoreFailed { code: 42 })
        );
        assert_eq!(
            dev.wait_semaphores(&[sv(b, 1)], Timeout::Immediate),
            Err(Error::SemaphoreFailed { code: 42 })
        );
        assert_eq!(
            dev.object_counts().pending,
            0,
            "failed work leaves the queue"
        );
        assert_eq!(download(dev, buffer, 0, 64), vec![0xEE; 64], "nothing ran");
        assert!(
            dev.signal_semaphore(a, 5).is_err(),
            "a failed semaphore stays failed"
        );
        // Work queued on a failed semaphore fails at once.
        let d = dev.create_semaphore(0).expect("create");
        let result = dev.queue_fill(
            Submit::new(&[sv(b, 1)], &[sv(d, 1)]),
            BufferSpan::whole(buffer),
            &[3],
        );
        match result {
            Ok(()) => assert_eq!(
                dev.wait_semaphores(&[sv(d, 1)], Timeout::Infinite),
                Err(Error::SemaphoreFailed { code: 42 }),
                "work queued after the failure fails too"
            ),
            Err(e) => assert_eq!(e, Error::SemaphoreFailed { code: 42 }),
        }
        assert_eq!(download(dev, buffer, 0, 64), vec![0xEE; 64]);
        dev.release_command_buffer(cb).expect("release");
        for s in [a, b, c, d] {
            dev.release_semaphore(s).expect("release");
        }
        dev.release_buffer(buffer).expect("release");
    });
}

/// An operation that fails (a kernel refusing its bindings) fails the semaphores it would
/// have signalled, and the work behind them.
pub fn failing_op_fails_its_signals<T: Target>() {
    with_device::<T>(|dev| {
        let small = alloc(dev, 16);
        let out = upload(dev, &[0xEE; 64]);
        let matmul = load::<T>(dev, "matmul_f32");
        let [b, c] = [0; 2].map(|_| dev.create_semaphore(0).expect("create"));
        let cb = dev
            .create_command_buffer(hal_core::CommandBufferMode::OneShot, 16, 0)
            .expect("command buffer");
        dev.record(
            cb,
            Record::Dispatch {
                executable: matmul,
                workgroups: hal_core::Workgroups::Direct([1, 1, 1]),
                constants: &[8, 8, 8],
                bindings: &[
                    BufferRef::buffer(small),
                    BufferRef::buffer(small),
                    BufferRef::buffer(small),
                ],
            },
        )
        .expect("record a dispatch whose bindings are too small");
        dev.end(cb).expect("end");
        let gate = dev.create_semaphore(0).expect("create");
        let submitted = dev.queue_execute(Submit::new(&[sv(gate, 1)], &[sv(b, 1)]), cb, &[]);
        submitted.expect("queued (it fails when it runs)");
        dev.queue_fill(
            Submit::new(&[sv(b, 1)], &[sv(c, 1)]),
            BufferSpan::whole(out),
            &[1],
        )
        .expect("queue work behind it");
        dev.signal_semaphore(gate, 1).expect("open the gate");
        let failed = dev.wait_semaphores(&[sv(c, 1)], Timeout::Infinite);
        assert!(
            matches!(failed, Err(Error::SemaphoreFailed { .. })),
            "waiting behind a failed dispatch: {failed:?}"
        );
        let code_b = dev.query_semaphore(b);
        assert!(
            matches!(code_b, Err(Error::SemaphoreFailed { .. })),
            "{code_b:?}"
        );
        assert_eq!(
            dev.query_semaphore(c),
            code_b,
            "the failure carries its code on"
        );
        assert_eq!(
            download(dev, out, 0, 64),
            vec![0xEE; 64],
            "the fill never ran"
        );
        assert_eq!(dev.object_counts().pending, 0);
        dev.release_command_buffer(cb).expect("release");
        for s in [b, c, gate] {
            dev.release_semaphore(s).expect("release");
        }
        dev.release_executable(matmul).expect("release");
        dev.release_buffer(small).expect("release");
        dev.release_buffer(out).expect("release");
        // A failed dispatch waited on directly.
        let noop_args = alloc(dev, 16);
        let fill = load::<T>(dev, "fill_u32");
        let result = dispatch(dev, fill, [1, 1, 1], &[], &[BufferRef::buffer(noop_args)]);
        assert!(
            matches!(
                result,
                Err(Error::SemaphoreFailed { .. } | Error::Kernel(_) | Error::Backend { .. })
            ),
            "fill_u32 without its constant: {result:?}"
        );
        dev.release_executable(fill).expect("release");
        dev.release_buffer(noop_args).expect("release");
    });
}

/// The first failure of a semaphore wins; later ones change nothing.
pub fn first_failure_wins<T: Target>() {
    with_device::<T>(|dev| {
        let s = dev.create_semaphore(4).expect("create");
        dev.fail_semaphore(s, 7).expect("fail");
        let _ = dev.fail_semaphore(s, 9);
        assert_eq!(
            dev.query_semaphore(s),
            Err(Error::SemaphoreFailed { code: 7 })
        );
        assert_eq!(
            dev.wait_semaphores(&[sv(s, 1)], Timeout::Immediate),
            Err(Error::SemaphoreFailed { code: 7 }),
            "a wait on a failed semaphore fails, even for a value it had reached"
        );
        dev.release_semaphore(s)
            .expect("release a failed semaphore");
    });
}

/// A wait nothing can satisfy returns an error even with an infinite timeout: for a value
/// no queued work signals, and for one whose only producer waits on the host.
pub fn wait_never_satisfied<T: Target>() {
    with_device::<T>(|dev| {
        let s = dev.create_semaphore(0).expect("create");
        assert_err!(
            dev.wait_semaphores(&[sv(s, 100)], Timeout::Infinite),
            Error::WaitNeverSatisfied { .. } | Error::Timeout,
            "an infinite wait nothing can satisfy"
        );
        let buffer = alloc(dev, 16);
        let gate = dev.create_semaphore(0).expect("create");
        dev.queue_fill(
            Submit::new(&[sv(gate, 1)], &[sv(s, 1)]),
            BufferSpan::whole(buffer),
            &[1],
        )
        .expect("queue behind a host gate");
        assert_err!(
            dev.wait_semaphores(&[sv(s, 1)], Timeout::Infinite),
            Error::WaitNeverSatisfied { .. } | Error::Timeout,
            "an infinite wait on work blocked by the host"
        );
        assert_err!(
            dev.wait_semaphores(&[sv(s, 2)], Timeout::Infinite),
            Error::WaitNeverSatisfied { .. } | Error::Timeout,
            "an infinite wait past what queued work signals"
        );
        dev.signal_semaphore(gate, 1).expect("open the gate");
        dev.wait_semaphores(&[sv(s, 1)], Timeout::Infinite)
            .expect("satisfied once the host signals");
        assert_eq!(download(dev, buffer, 0, 16), vec![1; 16]);
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(s).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Every semaphore call refuses a released or forged handle.
pub fn stale_semaphores<T: Target>() {
    with_device::<T>(|dev| {
        let released = dev.create_semaphore(0).expect("create");
        dev.release_semaphore(released).expect("release");
        let reused = dev.create_semaphore(0).expect("create (may take the slot)");
        for s in [released, Semaphore::from_parts(5000, 0)] {
            assert_err!(
                dev.query_semaphore(s),
                Error::StaleHandle { .. },
                "query {s:?}"
            );
            assert_err!(
                dev.signal_semaphore(s, 1),
                Error::StaleHandle { .. },
                "signal {s:?}"
            );
            assert_err!(
                dev.fail_semaphore(s, 1),
                Error::StaleHandle { .. },
                "fail {s:?}"
            );
            assert_err!(
                dev.wait_semaphores(&[sv(s, 0)], Timeout::Immediate),
                Error::StaleHandle { .. },
                "wait {s:?}"
            );
            assert_err!(
                dev.release_semaphore(s),
                Error::StaleHandle { .. },
                "release {s:?}"
            );
        }
        assert_eq!(
            dev.query_semaphore(reused),
            Ok(0),
            "the slot's new semaphore is untouched"
        );
        dev.release_semaphore(reused).expect("release");
    });
}

/// Releasing a semaphore that queued work will signal, or waits on, does not leave work
/// parked forever, and never touches a semaphore made after the release.
pub fn release_while_pending<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 16]);
        // A semaphore queued work will signal.
        let gate = dev.create_semaphore(0).expect("create");
        let target = dev.create_semaphore(0).expect("create");
        dev.queue_fill(
            Submit::new(&[sv(gate, 1)], &[sv(target, 1)]),
            BufferSpan::whole(buffer),
            &[1],
        )
        .expect("queue");
        let released_target = dev.release_semaphore(target).is_ok();
        let newcomer = dev.create_semaphore(0).expect("create (may take the slot)");
        dev.signal_semaphore(gate, 1).expect("open the gate");
        assert_eq!(
            dev.query_semaphore(newcomer),
            Ok(0),
            "work signalled a semaphore made after its own was released"
        );
        if !released_target {
            dev.wait_semaphores(&[sv(target, 1)], Timeout::Infinite)
                .expect("wait");
            dev.release_semaphore(target).expect("release");
        }
        assert_eq!(dev.object_counts().pending, 0);

        // A semaphore queued work waits on: the work can never run, so it fails (or the
        // release is refused).
        let blocked_on = dev.create_semaphore(0).expect("create");
        let after = dev.create_semaphore(0).expect("create");
        dev.queue_fill(
            Submit::new(&[sv(blocked_on, 1)], &[sv(after, 1)]),
            BufferSpan::whole(buffer),
            &[2],
        )
        .expect("queue");
        match dev.release_semaphore(blocked_on) {
            Ok(()) => {
                assert_eq!(
                    dev.object_counts().pending,
                    0,
                    "work waiting on a released semaphore stays parked forever"
                );
                assert!(
                    matches!(
                        dev.query_semaphore(after),
                        Err(Error::SemaphoreFailed { .. })
                    ),
                    "what it would have signalled fails: {:?}",
                    dev.query_semaphore(after)
                );
            }
            Err(_) => {
                dev.signal_semaphore(blocked_on, 1).expect("signal");
                dev.release_semaphore(blocked_on).expect("release");
            }
        }
        assert_eq!(dev.object_counts().pending, 0);
        for s in [gate, newcomer, after] {
            dev.release_semaphore(s).expect("release");
        }
        dev.release_buffer(buffer).expect("release");
    });
}
