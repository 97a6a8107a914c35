//! Command buffers' lifecycle: recording, ending, submitting (one-shot once, reusable any
//! number of times), capacity, a refused record or submission leaving the command buffer
//! usable, and release while a submission is pending.

use super::{alloc, download, filled, recording, run, with_device, Target};
use alloc::vec;
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, Error, Record, SemaphoreValue, Submit,
    Timeout,
};

/// Recording into an ended command buffer, or ending it twice, is a state error.
pub fn recording_after_end<T: Target>() {
    with_device::<T>(|dev| {
        let cb = recording(dev);
        dev.record(cb, Record::Barrier).expect("record");
        dev.end(cb).expect("end");
        assert_err!(
            dev.record(cb, Record::Barrier),
            Error::CommandBufferState(_),
            "record after end"
        );
        assert_err!(dev.end(cb), Error::CommandBufferState(_), "end twice");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("still executable");
        dev.release_command_buffer(cb).expect("release");
    });
}

/// Submitting a command buffer still recording is a state error; it can be ended and
/// submitted afterwards.
pub fn submit_before_end<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 16);
        let cb = recording(dev);
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[3],
            },
        )
        .expect("record");
        assert_err!(
            run(dev, |d, s| d.queue_execute(s, cb, &[])),
            Error::CommandBufferState(_),
            "submit before end"
        );
        assert_eq!(dev.object_counts().pending, 0);
        dev.end(cb).expect("end");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("submit after end");
        assert_eq!(download(dev, buffer, 0, 16), vec![3; 16]);
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A one-shot command buffer runs once; a reusable one runs any number of times.
pub fn one_shot_submitted_twice<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 16);
        let cb = recording(dev);
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[4],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("first submit");
        assert_err!(
            run(dev, |d, s| d.queue_execute(s, cb, &[])),
            Error::CommandBufferState(_),
            "one-shot submitted twice"
        );
        dev.release_command_buffer(cb).expect("release");

        let reusable = dev
            .create_command_buffer(CommandBufferMode::Reusable, 8, 0)
            .expect("reusable");
        dev.record(
            reusable,
            Record::Copy {
                source: BufferRef::buffer(buffer).at(0, 4),
                target: BufferRef::buffer(buffer).at(4, 4),
                length: 4,
            },
        )
        .expect("record");
        dev.end(reusable).expect("end");
        for round in 0..3u8 {
            dev.write_buffer(BufferSpan::new(buffer, 0, 4), &[round; 4])
                .expect("write");
            run(dev, |d, s| d.queue_execute(s, reusable, &[]))
                .unwrap_or_else(|e| panic!("reusable submit {round}: {e:?}"));
            assert_eq!(download(dev, buffer, 4, 4), vec![round; 4]);
        }
        dev.release_command_buffer(reusable).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Recording past a command buffer's capacity is a `Limit` error, and what was recorded
/// before still runs.
pub fn capacity<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 2, 0)
            .expect("a command buffer of 2 slots");
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[1],
            },
        )
        .expect("first slot");
        assert_err!(
            dev.record(
                cb,
                Record::Update {
                    target: BufferRef::buffer(buffer),
                    data: &[2; 40],
                }
            ),
            Error::Limit { .. },
            "an update needing 3 slots in 1"
        );
        dev.record(cb, Record::Barrier).expect("second slot");
        assert_err!(
            dev.record(cb, Record::Barrier),
            Error::Limit { .. },
            "a third command in 2 slots"
        );
        dev.end(cb).expect("end");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("execute");
        assert_eq!(download(dev, buffer, 0, 64), vec![1; 64]);
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A refused record leaves the command buffer as it was: the commands around it run, the
/// refused one does not.
pub fn usable_after_record_error<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        let cb = recording(dev);
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer).at(0, 32),
                pattern: &[1],
            },
        )
        .expect("record");
        assert!(dev
            .record(
                cb,
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(32, 64),
                    pattern: &[9],
                }
            )
            .is_err());
        assert!(dev
            .record(
                cb,
                Record::Update {
                    target: BufferRef::buffer(buffer).at(60, 8),
                    data: &[9; 8],
                }
            )
            .is_err());
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer).at(32, 32),
                pattern: &[2],
            },
        )
        .expect("record after an error");
        dev.end(cb).expect("end");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("execute");
        assert_eq!(
            download(dev, buffer, 0, 64),
            [vec![1; 32], vec![2; 32]].concat()
        );
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Releasing a command buffer whose submission has not run yet defers the release: the
/// work still runs, and the command buffer goes once it has.
pub fn release_while_pending<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = filled(dev, 64, 0);
        let gate = dev.create_semaphore(0).expect("create");
        let done = dev.create_semaphore(0).expect("create");
        let cb = recording(dev);
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[0x3E],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        dev.queue_execute(
            hal_core::Submit::new(
                &[hal_core::SemaphoreValue::new(gate, 1)],
                &[hal_core::SemaphoreValue::new(done, 1)],
            ),
            cb,
            &[],
        )
        .expect("queue behind a gate");
        dev.release_command_buffer(cb)
            .expect("release while its submission waits");
        dev.signal_semaphore(gate, 1).expect("open the gate");
        dev.wait_semaphores(
            &[hal_core::SemaphoreValue::new(done, 1)],
            hal_core::Timeout::Infinite,
        )
        .expect("the submission of a released command buffer still runs");
        assert_eq!(download(dev, buffer, 0, 64), vec![0x3E; 64]);
        assert_eq!(
            dev.object_counts().command_buffers,
            0,
            "released once its work is done"
        );
        assert_err!(
            dev.release_command_buffer(cb),
            Error::StaleHandle { .. },
            "released twice"
        );
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(done).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A one-shot command buffer whose submission is refused because the pending queue is full
/// is not used up: once the queue drains it is submitted again and runs.
pub fn refused_one_shot_submitted_later<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        let gate = dev.create_semaphore(0).expect("create");
        let chain = dev.create_semaphore(0).expect("create");
        let cb = recording(dev);
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[7],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        // Fills parked behind the gate, one after the other, until the pending queue is full.
        let mut parked = 0u64;
        let full = loop {
            assert!(parked < 1 << 12, "no pending limit after 4096 parked fills");
            let wait = if parked == 0 {
                SemaphoreValue::new(gate, 1)
            } else {
                SemaphoreValue::new(chain, parked)
            };
            match dev.queue_fill(
                Submit::new(&[wait], &[SemaphoreValue::new(chain, parked + 1)]),
                BufferSpan::whole(buffer),
                &[1],
            ) {
                Ok(()) => parked += 1,
                Err(e) => break e,
            }
        };
        assert!(
            matches!(full, Error::TableFull { .. } | Error::Limit { .. }),
            "queueing until full: {full:?}"
        );
        assert!(parked > 0, "no fill could be parked");
        assert_err!(
            dev.queue_execute(Submit::new(&[SemaphoreValue::new(gate, 1)], &[]), cb, &[]),
            Error::TableFull { .. } | Error::Limit { .. },
            "a one-shot submission that would park with the pending queue full"
        );
        dev.signal_semaphore(gate, 1).expect("open the gate");
        dev.wait_semaphores(&[SemaphoreValue::new(chain, parked)], Timeout::Infinite)
            .expect("the parked fills ran");
        run(dev, |d, s| d.queue_execute(s, cb, &[]))
            .expect("the refused one-shot, submitted again");
        assert_eq!(download(dev, buffer, 0, 64), vec![7; 64]);
        dev.release_command_buffer(cb).expect("release");
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(chain).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}
