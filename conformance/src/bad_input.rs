//! Bad input of every kind is an error, never a panic, and the device keeps working after
//! it: unknown kernels, out-of-range ranges, stale and forged handles, full tables.

use super::{alloc, assert_works, download, load, run, upload, with_device, Target};
use alloc::{boxed::Box, vec, vec::Vec};
use hal_core::memory::MemoryAccess;
use hal_core::{
    Buffer, BufferRef, BufferSpan, CommandBuffer, CommandBufferMode, Device, Error, Executable,
    ExecutableSource, PersistentMapping, Record, Semaphore, SemaphoreValue, Submit, Timeout,
    Workgroups, WHOLE,
};

fn sv(semaphore: Semaphore, value: u64) -> SemaphoreValue {
    SemaphoreValue::new(semaphore, value)
}

/// Loading a kernel the driver does not have is `UnknownKernel`, naming it (cut to 32
/// bytes).
pub fn unknown_kernel<T: Target>() {
    with_device::<T>(|dev| {
        let source = T::unknown_kernel();
        let e = assert_err!(
            dev.load_executable(source),
            Error::UnknownKernel { .. },
            "load {source:?}"
        );
        if let (ExecutableSource::Kernel(name), Error::UnknownKernel { name: got }) = (source, e) {
            assert_eq!(got.as_str(), name, "the error names the kernel");
        }
        let long = "a_kernel_name_that_is_much_longer_than_thirty_two_bytes";
        let e = assert_err!(
            dev.load_executable(ExecutableSource::Kernel(long)),
            Error::UnknownKernel { .. },
            "a long unknown name"
        );
        if let Error::UnknownKernel { name } = e {
            assert_eq!(name.as_str(), &long[..32]);
        }
        assert!(
            dev.load_executable(ExecutableSource::Kernel("")).is_err(),
            "an empty kernel name"
        );
        assert_eq!(dev.object_counts().executables, 0, "nothing loaded");
        assert_works(dev);
    });
}

/// Queue copies that leave either buffer, or whose ranges overflow, are refused and copy
/// nothing.
pub fn out_of_range_copies<T: Target>() {
    with_device::<T>(|dev| {
        let a = upload(dev, &[1; 64]);
        let b = upload(dev, &[2; 64]);
        for (from, to, length, what) in [
            (0u64, 0u64, 65u64, "longer than both"),
            (32, 0, 33, "past the source's end"),
            (0, 40, 30, "past the target's end"),
            (u64::MAX, 0, 2, "source offset overflowing"),
            (0, u64::MAX - 1, 4, "target offset overflowing"),
            (0, 0, u64::MAX, "length u64::MAX"),
        ] {
            let length_a = length.min(64);
            assert_err!(
                run(dev, |d, s| d.queue_copy(
                    s,
                    BufferSpan::new(a, from, length_a),
                    BufferSpan::new(b, to, length_a),
                    length
                )),
                Error::OutOfRange { .. }
                    | Error::InvalidArgument(_)
                    | Error::SemaphoreFailed { .. },
                "queue_copy {from}→{to} of {length}: {what}"
            );
            assert_err!(
                run(dev, |d, s| d.queue_copy(
                    s,
                    BufferSpan::new(a, from, WHOLE),
                    BufferSpan::new(b, to, WHOLE),
                    length
                )),
                Error::OutOfRange { .. }
                    | Error::InvalidArgument(_)
                    | Error::SemaphoreFailed { .. },
                "queue_copy of WHOLE spans {from}→{to} of {length}: {what}"
            );
        }
        assert_eq!(download(dev, b, 0, 64), vec![2; 64], "nothing copied");
        assert_works(dev);
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
    });
}

/// Queue fills and updates outside their buffer are refused and write nothing.
pub fn out_of_range_fills_and_updates<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 64]);
        for (offset, length) in [(60u64, 8u64), (64, 4), (68, WHOLE), (u64::MAX - 3, 8)] {
            assert_err!(
                run(dev, |d, s| d.queue_fill(
                    s,
                    BufferSpan::new(buffer, offset, length),
                    &[1, 2, 3, 4]
                )),
                Error::OutOfRange { .. } | Error::SemaphoreFailed { .. },
                "queue_fill {offset}+{length}"
            );
        }
        let data = [9u8; 16];
        for (offset, length) in [(56u64, 16u64), (56, WHOLE), (u64::MAX - 7, 16)] {
            assert_err!(
                run(dev, |d, s| d.queue_update(
                    s,
                    &data,
                    BufferSpan::new(buffer, offset, length)
                )),
                Error::OutOfRange { .. } | Error::SemaphoreFailed { .. },
                "queue_update of 16 bytes at {offset}+{length}"
            );
        }
        assert_eq!(
            download(dev, buffer, 0, 64),
            vec![0xEE; 64],
            "nothing written"
        );
        assert_eq!(dev.object_counts().pending, 0);
        assert_works(dev);
        dev.release_buffer(buffer).expect("release");
    });
}

/// A span's length bounds the queue copy or update into it: more bytes than the target span
/// holds (even where the buffer has room) are refused, and an update that fits writes that
/// span and nothing past it. Queue operations leave no command buffer behind.
pub fn span_lengths_bound_copies_and_updates<T: Target>() {
    with_device::<T>(|dev| {
        let a = upload(dev, &[5; 64]);
        let b = upload(dev, &[0; 64]);
        let short = BufferSpan::new(b, 0, 16);
        assert_err!(
            run(dev, |d, s| d.queue_copy(s, BufferSpan::whole(a), short, 64)),
            Error::OutOfRange { .. } | Error::SemaphoreFailed { .. },
            "queue_copy of 64 bytes into a 16-byte span"
        );
        assert_err!(
            run(dev, |d, s| d.queue_update(s, &[9; 64], short)),
            Error::OutOfRange { .. } | Error::SemaphoreFailed { .. },
            "queue_update of 64 bytes into a 16-byte span"
        );
        run(dev, |d, s| d.queue_update(s, &[9; 16], short))
            .expect("queue_update of 16 bytes into a 16-byte span");
        let out = download(dev, b, 0, 64);
        assert_eq!(out[..16], [9; 16], "the update landed");
        assert_eq!(out[16..], [0; 48], "nothing written past the span");
        assert_eq!(dev.object_counts().command_buffers, 0);
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
    });
}

/// Mappings outside the buffer, scoped or persistent, are refused.
pub fn out_of_range_maps<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = dev
            .allocate_buffer(super::host_params_all(), 64)
            .expect("allocate");
        for (offset, length) in [(0u64, 65u64), (65, 0), (u64::MAX, 1), (1, u64::MAX - 1)] {
            let span = BufferSpan::new(buffer, offset, length);
            assert_err!(
                dev.map(span, MemoryAccess::READ),
                Error::OutOfRange { .. },
                "map {offset}+{length}"
            );
            assert_err!(
                dev.map_persistent(span, MemoryAccess::READ),
                Error::OutOfRange { .. },
                "map_persistent {offset}+{length}"
            );
        }
        assert_works(dev);
        dev.release_buffer(buffer).expect("release");
    });
}

/// Bindings a kernel reads past (inputs shorter than the output, shapes larger than the
/// bindings, shapes that overflow) fail the dispatch, never panic or write out of bounds.
pub fn out_of_range_bindings<T: Target>() {
    with_device::<T>(|dev| {
        let short = upload(dev, &[0; 16]);
        let out = upload(dev, &[0xEE; 256]);
        let guard = upload(dev, &[0xEE; 256]);
        let add = load::<T>(dev, "add_f32");
        let matmul = load::<T>(dev, "matmul_f32");
        let softmax = load::<T>(dev, "softmax_f32");
        let copy = load::<T>(dev, "copy_u32");
        let cases: [(Executable, &[u32], Vec<BufferRef>, &str); 6] = [
            (
                add,
                &[],
                vec![
                    BufferRef::buffer(short),
                    BufferRef::buffer(short),
                    BufferRef::buffer(out),
                ],
                "add_f32 with inputs shorter than the output",
            ),
            (
                matmul,
                &[u32::MAX, u32::MAX, u32::MAX],
                vec![
                    BufferRef::buffer(short),
                    BufferRef::buffer(short),
                    BufferRef::buffer(out),
                ],
                "matmul_f32 with an overflowing shape",
            ),
            (
                matmul,
                &[4, 4, 4, 1],
                vec![
                    BufferRef::buffer(out),
                    BufferRef::buffer(out),
                    BufferRef::buffer(guard).at(0, 64),
                ],
                "matmul_f32 with the bias flag but no bias binding",
            ),
            (
                softmax,
                &[1 << 20, 1 << 20],
                vec![BufferRef::buffer(out), BufferRef::buffer(guard)],
                "softmax_f32 with more rows and columns than its bindings hold",
            ),
            (
                softmax,
                &[u32::MAX, u32::MAX],
                vec![BufferRef::buffer(out), BufferRef::buffer(guard)],
                "softmax_f32 with an overflowing shape",
            ),
            (
                copy,
                &[],
                vec![BufferRef::buffer(out)],
                "copy_u32 with one binding",
            ),
        ];
        for (executable, constants, bindings, what) in cases {
            let result = super::dispatch(dev, executable, [4, 1, 1], constants, &bindings);
            assert!(result.is_err(), "{what}: the dispatch must fail");
        }
        assert_eq!(
            download(dev, guard, 0, 256),
            vec![0xEE; 256],
            "nothing written"
        );
        assert_eq!(dev.object_counts().pending, 0);
        assert_works(dev);
        for executable in [add, matmul, softmax, copy] {
            dev.release_executable(executable).expect("release");
        }
        for buffer in [short, out, guard] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// Host reads and writes whose slice does not match the span, or whose span leaves the
/// buffer, are refused.
pub fn host_io_length_mismatch<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 64]);
        let mut out = [0u8; 8];
        assert!(
            dev.read_buffer(BufferSpan::new(buffer, 0, 16), &mut out)
                .is_err(),
            "read_buffer of 16 bytes into 8"
        );
        let mut big = [0u8; 32];
        assert!(
            dev.read_buffer(BufferSpan::new(buffer, 0, 16), &mut big)
                .is_err(),
            "read_buffer of 16 bytes into 32"
        );
        assert!(
            dev.write_buffer(BufferSpan::new(buffer, 0, 8), &[1; 16])
                .is_err(),
            "write_buffer of 16 bytes into 8"
        );
        assert!(
            dev.write_buffer(BufferSpan::new(buffer, 0, 16), &[1; 8])
                .is_err(),
            "write_buffer of 8 bytes into 16"
        );
        for (offset, length) in [(60u64, 8u64), (u64::MAX - 3, 8), (65, WHOLE)] {
            let mut out = [0u8; 8];
            assert_err!(
                dev.read_buffer(BufferSpan::new(buffer, offset, length), &mut out),
                Error::OutOfRange { .. } | Error::InvalidArgument(_),
                "read_buffer {offset}+{length}"
            );
            assert_err!(
                dev.write_buffer(BufferSpan::new(buffer, offset, length), &[1; 8]),
                Error::OutOfRange { .. } | Error::InvalidArgument(_),
                "write_buffer {offset}+{length}"
            );
        }
        assert_eq!(
            download(dev, buffer, 0, 64),
            vec![0xEE; 64],
            "nothing written"
        );
        assert_works(dev);
        dev.release_buffer(buffer).expect("release");
    });
}

/// Every call that takes a buffer refuses a released or forged one.
pub fn stale_buffers<T: Target>() {
    with_device::<T>(|dev| {
        let live = upload(dev, &[0xEE; 64]);
        let released = alloc(dev, 64);
        dev.release_buffer(released).expect("release");
        let fill = load::<T>(dev, "fill_u32");
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 16, 0)
            .expect("command buffer");
        for stale in [
            released,
            Buffer::from_parts(6000, 0),
            Buffer::from_parts(0, 999),
        ] {
            let span = BufferSpan::new(stale, 0, 16);
            let live_span = BufferSpan::new(live, 0, 16);
            macro_rules! stale {
                ($result:expr, $what:expr) => {
                    assert_err!(
                        $result,
                        Error::StaleHandle { .. },
                        "{} with {:?}",
                        $what,
                        stale
                    )
                };
            }
            macro_rules! stale_queued {
                ($result:expr, $what:expr) => {
                    assert_err!(
                        $result,
                        Error::StaleHandle { .. } | Error::SemaphoreFailed { .. },
                        "{} with {:?}",
                        $what,
                        stale
                    )
                };
            }
            stale!(dev.buffer_info(stale), "buffer_info");
            stale!(dev.release_buffer(stale), "release_buffer");
            stale!(dev.map(span, MemoryAccess::READ), "map");
            stale!(
                dev.map_persistent(span, MemoryAccess::READ),
                "map_persistent"
            );
            stale!(dev.read_buffer(span, &mut [0; 16]), "read_buffer");
            stale!(dev.write_buffer(span, &[0; 16]), "write_buffer");
            stale_queued!(run(dev, |d, s| d.queue_fill(s, span, &[0])), "queue_fill");
            stale_queued!(
                run(dev, |d, s| d.queue_update(s, &[0; 16], span)),
                "queue_update"
            );
            stale_queued!(
                run(dev, |d, s| d.queue_copy(s, span, live_span, 16)),
                "queue_copy from"
            );
            stale_queued!(
                run(dev, |d, s| d.queue_copy(s, live_span, span, 16)),
                "queue_copy into"
            );
            stale_queued!(
                run(dev, |d, s| d.queue_dealloca(s, stale)),
                "queue_dealloca"
            );
            let mut source: &[u8] = &[0; 16];
            stale_queued!(
                run(dev, |d, s| d.queue_read(s, &mut source, span, 8)),
                "queue_read"
            );
            stale!(
                dev.record(
                    cb,
                    Record::Fill {
                        target: BufferRef::span(span),
                        pattern: &[0],
                    }
                ),
                "record fill"
            );
            stale!(
                dev.record(
                    cb,
                    Record::Copy {
                        source: BufferRef::span(live_span),
                        target: BufferRef::span(span),
                        length: 16,
                    }
                ),
                "record copy"
            );
            stale!(
                dev.record(
                    cb,
                    Record::Dispatch {
                        executable: fill,
                        workgroups: Workgroups::Direct([1, 1, 1]),
                        constants: &[0],
                        bindings: &[BufferRef::span(span)],
                    }
                ),
                "record dispatch binding"
            );
        }
        assert_eq!(
            download(dev, live, 0, 64),
            vec![0xEE; 64],
            "nothing written"
        );
        assert_eq!(dev.object_counts().pending, 0);
        assert_works(dev);
        dev.release_command_buffer(cb).expect("release");
        dev.release_executable(fill).expect("release");
        dev.release_buffer(live).expect("release");
    });
}

/// Every call that takes a command buffer refuses a released or forged one.
pub fn stale_command_buffers<T: Target>() {
    with_device::<T>(|dev| {
        let released = dev
            .create_command_buffer(CommandBufferMode::Reusable, 4, 0)
            .expect("create");
        dev.end(released).expect("end");
        dev.release_command_buffer(released).expect("release");
        for stale in [
            released,
            CommandBuffer::from_parts(7000, 0),
            CommandBuffer::from_parts(0, 4321),
        ] {
            assert_err!(
                dev.record(stale, Record::Barrier),
                Error::StaleHandle { .. },
                "record into {stale:?}"
            );
            assert_err!(dev.end(stale), Error::StaleHandle { .. }, "end {stale:?}");
            assert_err!(
                run(dev, |d, s| d.queue_execute(s, stale, &[])),
                Error::StaleHandle { .. },
                "queue_execute {stale:?}"
            );
            assert_err!(
                dev.release_command_buffer(stale),
                Error::StaleHandle { .. },
                "release {stale:?}"
            );
        }
        assert_eq!(dev.object_counts().pending, 0);
        assert_works(dev);
    });
}

/// Releasing an executable twice, or a forged one, is refused; a command buffer recorded
/// with an executable released afterwards either still runs it or fails cleanly.
pub fn stale_executables<T: Target>() {
    with_device::<T>(|dev| {
        let fill = load::<T>(dev, "fill_u32");
        dev.release_executable(fill).expect("release");
        assert_err!(
            dev.release_executable(fill),
            Error::StaleHandle { .. },
            "release twice"
        );
        assert_err!(
            dev.release_executable(Executable::from_parts(8000, 0)),
            Error::StaleHandle { .. },
            "release a forged executable"
        );

        let buffer = upload(dev, &[0xEE; 64]);
        let fill = load::<T>(dev, "fill_u32");
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 8, 0)
            .expect("create");
        dev.record(
            cb,
            Record::Dispatch {
                executable: fill,
                workgroups: Workgroups::Direct([1, 1, 1]),
                constants: &[0x0101_0101],
                bindings: &[BufferRef::buffer(buffer)],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        match dev.release_executable(fill) {
            Ok(()) => {
                // Loading another may take the released one's slot.
                let other = load::<T>(dev, "noop");
                match run(dev, |d, s| d.queue_execute(s, cb, &[])) {
                    Ok(()) => assert_eq!(
                        download(dev, buffer, 0, 64),
                        vec![1; 64],
                        "a command buffer that keeps its executable alive runs it"
                    ),
                    Err(_) => assert_eq!(
                        download(dev, buffer, 0, 64),
                        vec![0xEE; 64],
                        "a command buffer refused for its executable writes nothing"
                    ),
                }
                dev.release_executable(other).expect("release");
                dev.release_command_buffer(cb).expect("release");
            }
            Err(_) => {
                // Refused while in use: release the user first.
                dev.release_command_buffer(cb).expect("release");
                dev.release_executable(fill).expect("release");
            }
        }
        assert_works(dev);
        dev.release_buffer(buffer).expect("release");
    });
}

/// Submissions naming released or forged semaphores, to wait on or to signal, are refused
/// and queue nothing.
pub fn stale_semaphores_in_submits<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 16]);
        let live = dev.create_semaphore(0).expect("create");
        let released = dev.create_semaphore(0).expect("create");
        dev.release_semaphore(released).expect("release");
        for stale in [released, Semaphore::from_parts(9000, 0)] {
            for (waits, signals, what) in [
                (vec![sv(stale, 1)], vec![sv(live, 1)], "waiting on"),
                (vec![], vec![sv(stale, 1)], "signalling"),
                (
                    vec![],
                    vec![sv(live, 1), sv(stale, 1)],
                    "signalling (second)",
                ),
            ] {
                assert_err!(
                    dev.queue_fill(
                        Submit::new(&waits, &signals),
                        BufferSpan::whole(buffer),
                        &[1]
                    ),
                    Error::StaleHandle { .. },
                    "queue_fill {what} {stale:?}"
                );
                assert_err!(
                    dev.queue_alloca(Submit::new(&waits, &signals), super::host_params(), 64),
                    Error::StaleHandle { .. },
                    "queue_alloca {what} {stale:?}"
                );
                assert_eq!(dev.object_counts().pending, 0);
                assert_eq!(dev.object_counts().buffers, 1, "no buffer made");
            }
        }
        assert_eq!(
            dev.query_semaphore(live),
            Ok(0),
            "the live semaphore was not signalled"
        );
        assert_eq!(download(dev, buffer, 0, 16), vec![0xEE; 16], "nothing ran");
        assert_works(dev);
        dev.release_semaphore(live).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Forged persistent-mapping handles are refused.
pub fn stale_mappings<T: Target>() {
    with_device::<T>(|dev| {
        for forged in [
            PersistentMapping::from_parts(0, 0),
            PersistentMapping::from_parts(777, 3),
        ] {
            assert_err!(
                dev.mapped(forged),
                Error::StaleHandle { .. },
                "mapped {forged:?}"
            );
            assert_err!(
                dev.unmap(forged),
                Error::StaleHandle { .. },
                "unmap {forged:?}"
            );
        }
        assert_works(dev);
    });
}

/// A reusable command buffer that names a buffer released since recording does not reach
/// the buffer that took its place: the release is refused while recorded, or the submit
/// fails.
pub fn released_buffer_in_recording<T: Target>() {
    with_device::<T>(|dev| {
        let first = alloc(dev, 64);
        let cb = dev
            .create_command_buffer(CommandBufferMode::Reusable, 4, 0)
            .expect("create");
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::buffer(first),
                pattern: &[0x44],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("first submit");
        assert_eq!(download(dev, first, 0, 64), vec![0x44; 64]);
        match dev.release_buffer(first) {
            Ok(()) => {
                let second = upload(dev, &[0xEE; 64]);
                let result = run(dev, |d, s| d.queue_execute(s, cb, &[]));
                assert!(
                    result.is_err(),
                    "a submit naming a released buffer must fail"
                );
                assert_eq!(
                    download(dev, second, 0, 64),
                    vec![0xEE; 64],
                    "the buffer in the released one's place is untouched"
                );
                dev.release_buffer(second).expect("release");
                dev.release_command_buffer(cb).expect("release");
            }
            Err(_) => {
                dev.release_command_buffer(cb).expect("release");
                dev.release_buffer(first)
                    .expect("release after the command buffer");
            }
        }
        assert_works(dev);
    });
}

/// Fills a table by calling `make` until it fails (at most `limit` times); returns what was
/// made and the error.
fn fill_table<R>(limit: usize, mut make: impl FnMut(usize) -> Result<R, Error>) -> (Vec<R>, Error) {
    let mut made = Vec::new();
    loop {
        assert!(made.len() < limit, "no limit reached after {limit} objects");
        match make(made.len()) {
            Ok(r) => made.push(r),
            Err(e) => return (made, e),
        }
    }
}

/// Making buffers (allocated and imported) until the table is full is `TableFull`; the
/// device keeps working with what it has and recovers when they are released.
pub fn buffer_table_full<T: Target>() {
    with_device::<T>(|dev| {
        let (buffers, e) = fill_table(1 << 16, |_| dev.allocate_buffer(super::host_params(), 16));
        assert!(
            matches!(e, Error::TableFull { .. } | Error::Alloc(_)),
            "allocating until full: {e:?}"
        );
        if matches!(e, Error::TableFull { .. }) {
            let bytes: &'static mut [u8] = Box::leak(vec![0u8; 64].into_boxed_slice());
            assert_err!(
                dev.import_buffer(T::host_memory(bytes), super::host_params()),
                Error::TableFull { .. },
                "import with the buffer table full"
            );
            let t = dev.create_semaphore(0).expect("create");
            assert_err!(
                dev.queue_alloca(Submit::new(&[], &[sv(t, 1)]), super::host_params(), 64),
                Error::TableFull { .. },
                "queue_alloca with the buffer table full"
            );
            assert_eq!(dev.query_semaphore(t), Ok(0));
            dev.release_semaphore(t).expect("release");
        }
        run(dev, |d, s| {
            d.queue_fill(s, BufferSpan::whole(buffers[0]), &[3])
        })
        .expect("fill with the table full");
        assert_eq!(download(dev, buffers[0], 0, 16), vec![3; 16]);
        for b in buffers {
            dev.release_buffer(b).expect("release");
        }
        assert_works(dev);
    });
}

/// Creating semaphores until the table is full is `TableFull`; existing ones keep working.
pub fn semaphore_table_full<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 16);
        let (semaphores, e) = fill_table(1 << 16, |i| dev.create_semaphore(i as u64));
        assert!(
            matches!(e, Error::TableFull { .. }),
            "creating until full: {e:?}"
        );
        let s = semaphores[1];
        dev.queue_fill(
            Submit::new(&[sv(s, 1)], &[sv(s, 2)]),
            BufferSpan::whole(buffer),
            &[6],
        )
        .expect("fill ordered by an existing semaphore");
        dev.wait_semaphores(&[sv(s, 2)], Timeout::Infinite)
            .expect("wait");
        assert_eq!(download(dev, buffer, 0, 16), vec![6; 16]);
        for s in semaphores {
            dev.release_semaphore(s).expect("release");
        }
        assert_works(dev);
        dev.release_buffer(buffer).expect("release");
    });
}

/// Creating command buffers until the table (or the command storage) is full is an error.
pub fn command_buffer_table_full<T: Target>() {
    with_device::<T>(|dev| {
        let (cbs, e) = fill_table(1 << 16, |_| {
            dev.create_command_buffer(CommandBufferMode::OneShot, 1, 0)
        });
        assert!(
            matches!(
                e,
                Error::TableFull { .. } | Error::Limit { .. } | Error::Alloc(_)
            ),
            "creating until full: {e:?}"
        );
        let buffer = alloc(dev, 16);
        dev.record(
            cbs[0],
            Record::Fill {
                target: BufferRef::buffer(buffer),
                pattern: &[8],
            },
        )
        .expect("record into an existing command buffer");
        dev.end(cbs[0]).expect("end");
        run(dev, |d, s| d.queue_execute(s, cbs[0], &[])).expect("execute with the table full");
        assert_eq!(download(dev, buffer, 0, 16), vec![8; 16]);
        for cb in cbs {
            dev.release_command_buffer(cb).expect("release");
        }
        dev.release_buffer(buffer).expect("release");
        assert_works(dev);
    });
}

/// Loading executables until the table is full is `TableFull`.
pub fn executable_table_full<T: Target>() {
    with_device::<T>(|dev| {
        let (executables, e) = fill_table(1 << 16, |_| dev.load_executable(T::kernel("noop")));
        assert!(
            matches!(e, Error::TableFull { .. } | Error::Limit { .. }),
            "loading until full: {e:?}"
        );
        super::dispatch(dev, executables[0], [1, 1, 1], &[], &[])
            .expect("dispatch with the table full");
        for x in executables {
            dev.release_executable(x).expect("release");
        }
        assert_works(dev);
    });
}

/// Queueing work behind an unsignalled semaphore until the pending queue is full is an
/// error; when the host signals, everything queued runs, in chain order.
pub fn pending_table_full<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0; 4]);
        let gate = dev.create_semaphore(0).expect("create");
        let chain = dev.create_semaphore(0).expect("create");
        let (queued, e) = fill_table(1 << 12, |i| {
            let i = i as u64;
            let wait = if i == 0 { sv(gate, 1) } else { sv(chain, i) };
            dev.queue_update(
                Submit::new(&[wait], &[sv(chain, i + 1)]),
                &(i as u32 + 1).to_ne_bytes(),
                BufferSpan::new(buffer, 0, 4),
            )
        });
        assert!(
            matches!(e, Error::TableFull { .. } | Error::Limit { .. }),
            "queueing until full: {e:?}"
        );
        let n = queued.len() as u64;
        assert!(n > 0);
        assert_eq!(u64::from(dev.object_counts().pending), n);
        // Refused queue operations leave nothing behind.
        let before = dev.object_counts();
        let refused = dev.queue_fill(
            Submit::new(&[sv(gate, 1)], &[]),
            BufferSpan::new(buffer, 0, 4),
            &[0],
        );
        assert!(
            refused.is_err(),
            "queue_fill with the pending queue full: {refused:?}"
        );
        let refused = dev.queue_copy(
            Submit::new(&[sv(gate, 1)], &[]),
            BufferSpan::new(buffer, 0, 2),
            BufferSpan::new(buffer, 2, 2),
            2,
        );
        assert!(
            refused.is_err(),
            "queue_copy with the pending queue full: {refused:?}"
        );
        assert_eq!(
            dev.object_counts(),
            before,
            "refused queue operations (pending queue full) left objects behind"
        );
        assert_eq!(
            dev.query_semaphore(chain),
            Ok(0),
            "the refused one signalled nothing"
        );
        dev.signal_semaphore(gate, 1).expect("open the gate");
        dev.wait_semaphores(&[sv(chain, n)], Timeout::Infinite)
            .expect("the whole chain ran");
        assert_eq!(
            download(dev, buffer, 0, 4),
            (n as u32).to_ne_bytes().to_vec(),
            "the last update in the chain landed last"
        );
        assert_eq!(dev.object_counts().pending, 0);
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(chain).expect("release");
        dev.release_buffer(buffer).expect("release");
        assert_works(dev);
    });
}

/// Command buffers larger than the device can hold are refused, without panics or huge
/// allocations.
pub fn huge_command_buffer<T: Target>() {
    with_device::<T>(|dev| {
        for capacity in [u32::MAX, u32::MAX / 2, 1 << 28] {
            let result = dev.create_command_buffer(CommandBufferMode::Reusable, capacity, 0);
            assert!(
                matches!(
                    result,
                    Err(Error::Limit { .. } | Error::TableFull { .. } | Error::Alloc(_))
                ),
                "a command buffer of {capacity} slots: {result:?}"
            );
        }
        assert!(dev
            .create_command_buffer(CommandBufferMode::Reusable, 4, u16::MAX)
            .is_err());
        assert_eq!(dev.object_counts().command_buffers, 0);
        assert_works(dev);
    });
}

/// Queue allocations larger than the device holds are refused, signal nothing and leave
/// nothing behind.
pub fn huge_queue_alloca<T: Target>() {
    with_device::<T>(|dev| {
        let heap_size = dev.heaps()[0].size;
        let t = dev.create_semaphore(0).expect("create");
        for size in [u64::MAX, heap_size * 2, 0] {
            let result =
                dev.queue_alloca(Submit::new(&[], &[sv(t, 1)]), super::host_params(), size);
            assert!(result.is_err(), "queue_alloca of {size} bytes: {result:?}");
            assert_eq!(
                dev.query_semaphore(t),
                Ok(0),
                "a refused alloca signals nothing"
            );
            assert_eq!(dev.object_counts().buffers, 0);
        }
        assert_eq!(dev.object_counts().pending, 0);
        dev.release_semaphore(t).expect("release");
        assert_works(dev);
    });
}

/// Releasing a buffer that queued work still uses is refused, or deferred until the work is
/// done, or makes that work fail: the work never reaches a buffer made after the release.
pub fn release_buffer_while_pending<T: Target>() {
    with_device::<T>(|dev| {
        let first = upload(dev, &[0; 4096]);
        let gate = dev.create_semaphore(0).expect("create");
        let done = dev.create_semaphore(0).expect("create");
        dev.queue_fill(
            Submit::new(&[sv(gate, 1)], &[sv(done, 1)]),
            BufferSpan::whole(first),
            &[0x99],
        )
        .expect("queue a fill behind the gate");
        let released = dev.release_buffer(first).is_ok();
        // Something new, likely where the first buffer was.
        let second = upload(dev, &[0xEE; 4096]);
        dev.signal_semaphore(gate, 1).expect("open the gate");
        let outcome = dev.wait_semaphores(&[sv(done, 1)], Timeout::Infinite);
        assert!(
            matches!(outcome, Ok(()) | Err(Error::SemaphoreFailed { .. })),
            "the fill of a released buffer: {outcome:?}"
        );
        assert_eq!(
            download(dev, second, 0, 4096),
            vec![0xEE; 4096],
            "work queued on a released buffer wrote into the buffer made after it"
        );
        if !released {
            dev.release_buffer(first)
                .expect("release once the work is done");
        }
        assert_eq!(dev.object_counts().pending, 0);
        dev.release_buffer(second).expect("release");
        dev.release_semaphore(gate).expect("release");
        dev.release_semaphore(done).expect("release");
        assert_works(dev);
    });
}

/// A workgroup grid no device can run (`u32::MAX` in every dimension, more workgroups than
/// a `u64` counts) is refused, at record or when it runs, promptly and without a panic.
/// (This case runs under a 30 s watchdog.)
pub fn absurd_grid<T: Target>() {
    with_device::<T>(|dev| {
        let noop = load::<T>(dev, "noop");
        let result = super::dispatch(dev, noop, [u32::MAX; 3], &[], &[]);
        assert!(
            matches!(
                result,
                Err(Error::Limit { .. }
                    | Error::InvalidArgument(_)
                    | Error::SemaphoreFailed { .. }
                    | Error::Kernel(_)
                    | Error::Backend { .. })
            ),
            "a grid of u32::MAX³ workgroups: {result:?}"
        );
        dev.release_executable(noop).expect("release");
    });
}
