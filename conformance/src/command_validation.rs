//! Command validation: commands that misuse a buffer (usage, ranges, overlapping copies, fill
//! patterns), pass a fixed limit or name an executable that is not loaded are refused when
//! recorded (and when queued, where there is a queue operation for them).

use super::{alloc, download, host_params, load, recording, run, with_device, Target};
use alloc::vec;
use hal_core::command::{MAX_BINDINGS, MAX_BINDING_SLOTS, MAX_CONSTANTS, MAX_UPDATE_BYTES};
use hal_core::memory::BufferUsage;
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, Error, Executable, Record, Workgroups, WHOLE,
};

/// Commands using a buffer in a way its usage does not allow are refused with `Usage`, when
/// recorded and when queued.
pub fn wrong_usage<T: Target>() {
    with_device::<T>(|dev| {
        let source_only = dev
            .allocate_buffer(
                host_params()
                    .with_usage(BufferUsage::TRANSFER_SOURCE | BufferUsage::MAPPING_SCOPED),
                64,
            )
            .expect("allocate");
        let target_only = dev
            .allocate_buffer(
                host_params()
                    .with_usage(BufferUsage::TRANSFER_TARGET | BufferUsage::MAPPING_SCOPED),
                64,
            )
            .expect("allocate");
        let fill = load::<T>(dev, "fill_u32");
        let cb = recording(dev);
        let cases: [(Record<'_>, &str); 5] = [
            (
                Record::Fill {
                    target: BufferRef::buffer(source_only),
                    pattern: &[0],
                },
                "fill without TRANSFER_TARGET",
            ),
            (
                Record::Update {
                    target: BufferRef::buffer(source_only),
                    data: &[1, 2, 3, 4],
                },
                "update without TRANSFER_TARGET",
            ),
            (
                Record::Copy {
                    source: BufferRef::buffer(target_only),
                    target: BufferRef::buffer(source_only),
                    length: 16,
                },
                "copy without TRANSFER_SOURCE / TRANSFER_TARGET",
            ),
            (
                Record::Copy {
                    source: BufferRef::buffer(source_only),
                    target: BufferRef::buffer(source_only).at(32, 16),
                    length: 16,
                },
                "copy into a buffer without TRANSFER_TARGET",
            ),
            (
                Record::Dispatch {
                    executable: fill,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &[0],
                    bindings: &[BufferRef::buffer(source_only)],
                },
                "dispatch binding without DISPATCH_STORAGE",
            ),
        ];
        for (record, what) in cases {
            assert_err!(dev.record(cb, record), Error::Usage { .. }, "{what}");
        }
        dev.release_command_buffer(cb).expect("release");
        assert_err!(
            run(dev, |d, s| d.queue_fill(
                s,
                BufferSpan::whole(source_only),
                &[0]
            )),
            Error::Usage { .. } | Error::SemaphoreFailed { .. },
            "queue_fill without TRANSFER_TARGET"
        );
        assert_err!(
            run(dev, |d, s| d.queue_update(
                s,
                &[0; 4],
                BufferSpan::new(source_only, 0, 4)
            )),
            Error::Usage { .. } | Error::SemaphoreFailed { .. },
            "queue_update without TRANSFER_TARGET"
        );
        assert_err!(
            run(dev, |d, s| d.queue_copy(
                s,
                BufferSpan::new(target_only, 0, 16),
                BufferSpan::new(source_only, 0, 16),
                16
            )),
            Error::Usage { .. } | Error::SemaphoreFailed { .. },
            "queue_copy against usage"
        );
        dev.release_executable(fill).expect("release");
        dev.release_buffer(source_only).expect("release");
        dev.release_buffer(target_only).expect("release");
    });
}

/// Commands with ranges outside their buffers are refused with `OutOfRange`, overflowing
/// offsets included.
pub fn out_of_range<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        let other = alloc(dev, 64);
        let fill = load::<T>(dev, "fill_u32");
        let cb = recording(dev);
        let data = [0u8; 10];
        let cases: [(Record<'_>, &str); 7] = [
            (
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(60, 8),
                    pattern: &[0],
                },
                "fill past the end",
            ),
            (
                Record::Fill {
                    target: BufferRef::buffer(buffer).at(u64::MAX - 3, 8),
                    pattern: &[0],
                },
                "fill with an overflowing range",
            ),
            (
                Record::Update {
                    target: BufferRef::buffer(buffer).at(60, WHOLE),
                    data: &data,
                },
                "update past the end",
            ),
            (
                Record::Copy {
                    source: BufferRef::buffer(buffer),
                    target: BufferRef::buffer(other),
                    length: 65,
                },
                "copy longer than both buffers",
            ),
            (
                Record::Copy {
                    source: BufferRef::buffer(buffer).at(u64::MAX, WHOLE),
                    target: BufferRef::buffer(other),
                    length: 2,
                },
                "copy from an overflowing offset",
            ),
            (
                Record::Dispatch {
                    executable: fill,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &[0],
                    bindings: &[BufferRef::buffer(buffer).at(65, WHOLE)],
                },
                "binding past the end",
            ),
            (
                Record::Dispatch {
                    executable: fill,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &[0],
                    bindings: &[BufferRef::buffer(buffer).at(32, 64)],
                },
                "binding longer than the buffer",
            ),
        ];
        for (record, what) in cases {
            assert_err!(dev.record(cb, record), Error::OutOfRange { .. }, "{what}");
        }
        dev.release_command_buffer(cb).expect("release");
        dev.release_executable(fill).expect("release");
        dev.release_buffer(buffer).expect("release");
        dev.release_buffer(other).expect("release");
    });
}

/// A recorded copy between overlapping ranges of one buffer is refused.
pub fn overlapping_copy<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 128);
        let cb = recording(dev);
        for (from, to) in [(0u64, 32u64), (32, 0), (10, 10), (0, 63)] {
            assert_err!(
                dev.record(
                    cb,
                    Record::Copy {
                        source: BufferRef::buffer(buffer).at(from, 64),
                        target: BufferRef::buffer(buffer).at(to, 64),
                        length: 64,
                    }
                ),
                Error::InvalidArgument(_),
                "copy {from}→{to} of 64 bytes within one buffer"
            );
        }
        assert_err!(
            dev.record(
                cb,
                Record::Copy {
                    source: BufferRef::buffer(buffer),
                    target: BufferRef::buffer(buffer).at(64, 64),
                    length: WHOLE,
                }
            ),
            Error::InvalidArgument(_),
            "copy with length WHOLE"
        );
        // Adjacent ranges do not overlap.
        dev.record(
            cb,
            Record::Copy {
                source: BufferRef::buffer(buffer).at(0, 64),
                target: BufferRef::buffer(buffer).at(64, 64),
                length: 64,
            },
        )
        .expect("adjacent ranges");
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// Fill patterns of a bad size, or ranges not multiples of the pattern, are refused.
pub fn bad_fill<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        let cb = recording(dev);
        let cases: [(u64, u64, &[u8]); 6] = [
            (0, 16, &[1, 2, 3]),
            (0, 16, &[]),
            (0, 16, &[1, 2, 3, 4, 5, 6, 7, 8]),
            (2, 8, &[1, 2, 3, 4]),
            (0, 6, &[1, 2, 3, 4]),
            (1, 4, &[1, 2]),
        ];
        for (offset, length, pattern) in cases {
            assert_err!(
                dev.record(
                    cb,
                    Record::Fill {
                        target: BufferRef::buffer(buffer).at(offset, length),
                        pattern,
                    }
                ),
                Error::InvalidArgument(_),
                "recorded fill {offset}+{length} with {pattern:?}"
            );
            assert_err!(
                run(dev, |d, s| d.queue_fill(
                    s,
                    BufferSpan::new(buffer, offset, length),
                    pattern
                )),
                Error::InvalidArgument(_) | Error::SemaphoreFailed { .. },
                "queue_fill {offset}+{length} with {pattern:?}"
            );
        }
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// The fixed limits: bindings and constants per dispatch, bytes per update, binding-table
/// capacity, and a zero workgroup count; exactly at each limit is fine.
pub fn limits<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, MAX_UPDATE_BYTES as u64 + 16);
        let noop = load::<T>(dev, "noop");
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 2200, 0)
            .expect("a command buffer for a maximal update");
        let bindings = [BufferRef::buffer(buffer); MAX_BINDINGS + 1];
        let constants = [7u32; MAX_CONSTANTS + 1];
        let big = vec![0x3Cu8; MAX_UPDATE_BYTES + 1];
        assert_err!(
            dev.record(
                cb,
                Record::Dispatch {
                    executable: noop,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &[],
                    bindings: &bindings,
                }
            ),
            Error::Limit { .. },
            "{} bindings",
            MAX_BINDINGS + 1
        );
        assert_err!(
            dev.record(
                cb,
                Record::Dispatch {
                    executable: noop,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &constants,
                    bindings: &[],
                }
            ),
            Error::Limit { .. },
            "{} constants",
            MAX_CONSTANTS + 1
        );
        assert_err!(
            dev.record(
                cb,
                Record::Update {
                    target: BufferRef::buffer(buffer),
                    data: &big,
                }
            ),
            Error::Limit { .. },
            "update of {} bytes",
            MAX_UPDATE_BYTES + 1
        );
        for grid in [[0, 1, 1], [1, 0, 1], [1, 1, 0]] {
            assert_err!(
                dev.record(
                    cb,
                    Record::Dispatch {
                        executable: noop,
                        workgroups: Workgroups::Direct(grid),
                        constants: &[],
                        bindings: &[],
                    }
                ),
                Error::InvalidArgument(_),
                "workgroup count {grid:?}"
            );
        }
        // Exactly at the limits.
        dev.record(
            cb,
            Record::Dispatch {
                executable: noop,
                workgroups: Workgroups::Direct([1, 1, 1]),
                constants: &constants[..MAX_CONSTANTS],
                bindings: &bindings[..MAX_BINDINGS],
            },
        )
        .expect("exactly MAX_BINDINGS bindings and MAX_CONSTANTS constants");
        dev.record(
            cb,
            Record::Update {
                target: BufferRef::buffer(buffer).at(16, WHOLE),
                data: &big[..MAX_UPDATE_BYTES],
            },
        )
        .expect("an update of exactly MAX_UPDATE_BYTES");
        dev.end(cb).expect("end");
        run(dev, |d, s| d.queue_execute(s, cb, &[])).expect("execute");
        assert_eq!(
            download(dev, buffer, 16, MAX_UPDATE_BYTES),
            big[..MAX_UPDATE_BYTES].to_vec()
        );
        dev.release_command_buffer(cb).expect("release");
        assert_err!(
            dev.create_command_buffer(CommandBufferMode::Reusable, 16, MAX_BINDING_SLOTS + 1),
            Error::Limit { .. },
            "binding capacity {}",
            MAX_BINDING_SLOTS + 1
        );
        dev.release_executable(noop).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A dispatch of an executable that was never loaded, or was released, is refused when
/// recorded.
pub fn unknown_executable<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = alloc(dev, 64);
        let released = load::<T>(dev, "fill_u32");
        dev.release_executable(released).expect("release");
        let cb = recording(dev);
        for (executable, what) in [
            (Executable::from_parts(999, 0), "a forged executable handle"),
            (Executable::from_parts(0, 12345), "a forged generation"),
            (released, "a released executable"),
        ] {
            assert_err!(
                dev.record(
                    cb,
                    Record::Dispatch {
                        executable,
                        workgroups: Workgroups::Direct([1, 1, 1]),
                        constants: &[0],
                        bindings: &[BufferRef::buffer(buffer)],
                    }
                ),
                Error::StaleHandle { .. },
                "{what}"
            );
        }
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}
