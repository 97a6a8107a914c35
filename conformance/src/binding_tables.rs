//! Binding tables: command buffers that refer to slots, bound to buffers at each submit.

use super::{
    alloc, assert_close, download, download_f32, host_params, load, run, upload, upload_f32,
    values, with_device, Target,
};
use alloc::{format, vec, vec::Vec};
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess};
use hal_core::{
    Buffer, BufferRef, BufferSpan, CommandBuffer, CommandBufferMode, Device, Error, Record,
    Workgroups, WHOLE,
};

/// A reusable command buffer: clear slot 2, barrier, `add_f32(slot 0, slot 1) → slot 2`.
fn add_by_slots<T: Target>(dev: &mut T::Device) -> (CommandBuffer, hal_core::Executable) {
    let add = load::<T>(dev, "add_f32");
    let cb = dev
        .create_command_buffer(CommandBufferMode::Reusable, 32, 3)
        .expect("reusable command buffer with 3 slots");
    dev.record(
        cb,
        Record::Fill {
            target: BufferRef::slot(2),
            pattern: &[0],
        },
    )
    .expect("record fill of a slot");
    dev.record(cb, Record::Barrier).expect("record barrier");
    dev.record(
        cb,
        Record::Dispatch {
            executable: add,
            workgroups: Workgroups::Direct([3, 1, 1]),
            constants: &[],
            bindings: &[BufferRef::slot(0), BufferRef::slot(1), BufferRef::slot(2)],
        },
    )
    .expect("record dispatch over slots");
    dev.end(cb).expect("end");
    (cb, add)
}

fn sum(x: &[f32], y: &[f32]) -> Vec<f64> {
    x.iter()
        .zip(y)
        .map(|(&p, &q)| f64::from(p) + f64::from(q))
        .collect()
}

/// One recording, submitted several times with different tables (whole buffers, other
/// buffers, sub-spans, a table longer than needed), gives each table's result.
pub fn reused_with_different_tables<T: Target>() {
    with_device::<T>(|dev| {
        let n = 300;
        let (x, y, z) = (values(n, 21), values(n, 22), values(n, 23));
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let c = upload_f32(dev, &z);
        let out = alloc(dev, n as u64 * 4);
        let out2 = alloc(dev, n as u64 * 4);
        let (cb, add) = add_by_slots::<T>(dev);

        let whole = |buffer| BufferSpan::whole(buffer);
        run(dev, |d, s| {
            d.queue_execute(s, cb, &[whole(a), whole(b), whole(out)])
        })
        .expect("submit 1");
        assert_close(&download_f32(dev, out, n), &sum(&x, &y), 1e-6, "a + b");

        run(dev, |d, s| {
            d.queue_execute(s, cb, &[whole(b), whole(c), whole(out2)])
        })
        .expect("submit 2");
        assert_close(&download_f32(dev, out2, n), &sum(&y, &z), 1e-6, "b + c");
        assert_close(
            &download_f32(dev, out, n),
            &sum(&x, &y),
            1e-6,
            "the first output untouched by the second submit",
        );

        // Elements 100..200 of c and a into elements 0..100 of out; the rest of out keeps
        // the first submit's result. A fourth entry is allowed and ignored.
        let table = [
            BufferSpan::new(c, 400, 400),
            BufferSpan::new(a, 400, 400),
            BufferSpan::new(out, 0, 400),
            whole(out2),
        ];
        run(dev, |d, s| d.queue_execute(s, cb, &table)).expect("submit 3 with sub-spans");
        let got = download_f32(dev, out, n);
        assert_close(
            &got[..100],
            &sum(&z[100..200], &x[100..200]),
            1e-6,
            "sub-spans",
        );
        assert_close(
            &got[100..],
            &sum(&x[100..], &y[100..]),
            1e-6,
            "outside the bound sub-span",
        );
        assert_close(
            &download_f32(dev, out2, n),
            &sum(&y, &z),
            1e-6,
            "unused 4th entry",
        );

        dev.release_command_buffer(cb).expect("release");
        dev.release_executable(add).expect("release");
        for buffer in [a, b, c, out, out2] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// A table with fewer entries than the command buffer's capacity is refused at submit.
pub fn missing_slots<T: Target>() {
    with_device::<T>(|dev| {
        let n = 64;
        let (x, y) = (values(n, 1), values(n, 2));
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let out = alloc(dev, n as u64 * 4);
        let (cb, add) = add_by_slots::<T>(dev);
        for len in [0usize, 1, 2] {
            let table = [BufferSpan::whole(a), BufferSpan::whole(b)];
            assert_err!(
                run(dev, |d, s| d.queue_execute(s, cb, &table[..len])),
                Error::BindingSlot { .. },
                "a table of {len} entries for 3 slots"
            );
            assert_eq!(dev.object_counts().pending, 0);
        }
        let table = [
            BufferSpan::whole(a),
            BufferSpan::whole(b),
            BufferSpan::whole(out),
        ];
        run(dev, |d, s| d.queue_execute(s, cb, &table)).expect("a full table after refusals");
        assert_close(&download_f32(dev, out, n), &sum(&x, &y), 1e-6, "a + b");
        dev.release_command_buffer(cb).expect("release");
        dev.release_executable(add).expect("release");
        for buffer in [a, b, out] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// Referring to a slot at or past the command buffer's binding capacity is refused when
/// recorded.
pub fn slot_past_capacity<T: Target>() {
    with_device::<T>(|dev| {
        let fill = load::<T>(dev, "fill_u32");
        let buffer = alloc(dev, 64);
        for capacity in [0u16, 3] {
            let cb = dev
                .create_command_buffer(CommandBufferMode::Reusable, 16, capacity)
                .expect("command buffer");
            let slot = BufferRef::slot(capacity);
            let records: [(Record<'_>, &str); 3] = [
                (
                    Record::Fill {
                        target: slot,
                        pattern: &[0],
                    },
                    "fill",
                ),
                (
                    Record::Copy {
                        source: BufferRef::buffer(buffer),
                        target: slot,
                        length: 4,
                    },
                    "copy",
                ),
                (
                    Record::Dispatch {
                        executable: fill,
                        workgroups: Workgroups::Direct([1, 1, 1]),
                        constants: &[0],
                        bindings: &[slot],
                    },
                    "dispatch",
                ),
            ];
            for (record, what) in records {
                assert_err!(
                    dev.record(cb, record),
                    Error::BindingSlot { .. },
                    "{what} of slot {capacity} with capacity {capacity}"
                );
            }
            dev.release_command_buffer(cb).expect("release");
        }
        dev.release_executable(fill).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A slot reference whose range leaves the span bound to it is refused at submit (or fails
/// the submission) without a panic, and writes nothing.
pub fn slot_range_out_of_bounds<T: Target>() {
    with_device::<T>(|dev| {
        let buffer = upload(dev, &[0xEE; 100]);
        let cb = dev
            .create_command_buffer(CommandBufferMode::Reusable, 16, 1)
            .expect("command buffer");
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::slot(0).at(64, 32),
                pattern: &[1],
            },
        )
        .expect("record a fill of slot 0 at 64..96");
        dev.end(cb).expect("end");
        for (span, what) in [
            (BufferSpan::new(buffer, 0, 32), "a 32-byte span"),
            (
                BufferSpan::new(buffer, 40, WHOLE),
                "a span of the last 60 bytes",
            ),
            (BufferSpan::new(buffer, 1000, 16), "a span past the buffer"),
            (
                BufferSpan::new(buffer, 1000, WHOLE),
                "a WHOLE span past the buffer",
            ),
            (
                BufferSpan::new(buffer, u64::MAX - 8, 16),
                "a span with an overflowing offset",
            ),
        ] {
            let result = run(dev, |d, s| d.queue_execute(s, cb, &[span]));
            assert!(result.is_err(), "{what}: the submission must fail");
            assert_eq!(dev.object_counts().pending, 0);
        }
        assert_eq!(download(dev, buffer, 0, 100), vec![0xEE; 100]);
        run(dev, |d, s| {
            d.queue_execute(s, cb, &[BufferSpan::whole(buffer)])
        })
        .expect("an in-bounds table");
        assert_eq!(
            download(dev, buffer, 0, 100),
            [vec![0xEE; 64], vec![1; 32], vec![0xEE; 4]].concat()
        );
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A table naming a released or forged buffer is refused.
pub fn stale_buffer_in_table<T: Target>() {
    with_device::<T>(|dev| {
        let released = alloc(dev, 64);
        dev.release_buffer(released).expect("release");
        let cb = dev
            .create_command_buffer(CommandBufferMode::Reusable, 16, 1)
            .expect("command buffer");
        dev.record(
            cb,
            Record::Fill {
                target: BufferRef::slot(0),
                pattern: &[1],
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        for (buffer, what) in [
            (released, "a released buffer"),
            (Buffer::from_parts(4000, 0), "a forged buffer"),
        ] {
            let result = run(dev, |d, s| {
                d.queue_execute(s, cb, &[BufferSpan::whole(buffer)])
            });
            assert!(
                matches!(
                    result,
                    Err(Error::StaleHandle { .. } | Error::SemaphoreFailed { .. })
                ),
                "{what} in the table: {result:?}"
            );
        }
        dev.release_command_buffer(cb).expect("release");
    });
}

/// Buffers bound through a table need the usage and access the command needs, like buffers
/// named when recording: every kind of command that takes a slot is tried, and every
/// violation that runs is reported together.
pub fn table_needs_usage<T: Target>() {
    with_device::<T>(|dev| {
        let fill = load::<T>(dev, "fill_u32");
        let with_usage = |usage: BufferUsage| host_params().with_usage(usage);
        let buffers = [
            (
                "without TRANSFER_TARGET",
                with_usage(BufferUsage::TRANSFER_SOURCE | BufferUsage::MAPPING_SCOPED),
            ),
            (
                "without TRANSFER_SOURCE",
                with_usage(BufferUsage::TRANSFER_TARGET | BufferUsage::MAPPING_SCOPED),
            ),
            (
                "without DISPATCH_STORAGE",
                with_usage(BufferUsage::TRANSFER | BufferUsage::MAPPING_SCOPED),
            ),
            (
                "without DISPATCH_INDIRECT_PARAMS",
                with_usage(BufferUsage::DEFAULT | BufferUsage::MAPPING_SCOPED),
            ),
            (
                "with READ access only",
                BufferParams {
                    access: MemoryAccess::READ,
                    ..host_params()
                },
            ),
        ];
        let good = dev
            .allocate_buffer(super::host_params_all(), 64)
            .expect("allocate");
        dev.write_buffer(BufferSpan::new(good, 0, 12), &super::u32_bytes(&[1, 1, 1]))
            .expect("write");
        let bad: Vec<Buffer> = buffers
            .iter()
            .map(|(_, params)| dev.allocate_buffer(*params, 64).expect("allocate"))
            .collect();
        let indirect_params = super::u32_bytes(&[1, 1, 1]);
        for &b in &bad {
            // Valid indirect parameters, so only the usage can make the dispatch fail.
            let info = dev.buffer_info(b).expect("info");
            if info.access.contains(MemoryAccess::WRITE) {
                dev.write_buffer(BufferSpan::new(b, 0, 12), &indirect_params)
                    .expect("write");
            }
        }
        let snapshot: Vec<Vec<u8>> = bad.iter().map(|&b| download(dev, b, 0, 64)).collect();

        // (command using slot 0, what slot 0 is to it, the buffers it must refuse there)
        let commands: [(Record<'_>, &str, &[&str]); 6] = [
            (
                Record::Fill {
                    target: BufferRef::slot(0),
                    pattern: &[5],
                },
                "a fill target",
                &["without TRANSFER_TARGET", "with READ access only"],
            ),
            (
                Record::Update {
                    target: BufferRef::slot(0).at(4, 4),
                    data: &[5; 4],
                },
                "an update target",
                &["without TRANSFER_TARGET", "with READ access only"],
            ),
            (
                Record::Copy {
                    source: BufferRef::slot(1),
                    target: BufferRef::slot(0),
                    length: 16,
                },
                "a copy target",
                &["without TRANSFER_TARGET", "with READ access only"],
            ),
            (
                Record::Copy {
                    source: BufferRef::slot(0),
                    target: BufferRef::slot(1),
                    length: 16,
                },
                "a copy source",
                &["without TRANSFER_SOURCE"],
            ),
            (
                Record::Dispatch {
                    executable: fill,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &[5],
                    bindings: &[BufferRef::slot(0)],
                },
                "a dispatch binding",
                &["without DISPATCH_STORAGE"],
            ),
            (
                Record::Dispatch {
                    executable: fill,
                    workgroups: Workgroups::Indirect(BufferRef::slot(0)),
                    constants: &[5],
                    bindings: &[BufferRef::slot(1).at(16, 16)],
                },
                "indirect dispatch parameters",
                &["without DISPATCH_INDIRECT_PARAMS"],
            ),
        ];
        let mut violations = Vec::new();
        for (record, what, refused_for) in commands {
            let cb = dev
                .create_command_buffer(CommandBufferMode::Reusable, 16, 2)
                .expect("command buffer");
            dev.record(cb, record)
                .unwrap_or_else(|e| panic!("record {what} through slots: {e:?}"));
            dev.end(cb).expect("end");
            run(dev, |d, s| {
                d.queue_execute(s, cb, &[BufferSpan::whole(good), BufferSpan::whole(good)])
            })
            .unwrap_or_else(|e| panic!("{what} bound to a buffer with every usage: {e:?}"));
            for (i, (name, _)) in buffers.iter().enumerate() {
                if !refused_for.contains(name) {
                    continue;
                }
                let table = [BufferSpan::whole(bad[i]), BufferSpan::whole(good)];
                let result = run(dev, |d, s| d.queue_execute(s, cb, &table));
                let written = download(dev, bad[i], 0, 64) != snapshot[i];
                let refused = matches!(
                    result,
                    Err(Error::Usage { .. } | Error::Access { .. } | Error::SemaphoreFailed { .. })
                );
                if !refused || written {
                    violations.push(format!(
                        "{what} bound to a buffer {name}: {result:?}{}",
                        if written { " (and it was written)" } else { "" }
                    ));
                }
            }
            dev.release_command_buffer(cb).expect("release");
        }
        for b in bad {
            dev.release_buffer(b).expect("release");
        }
        dev.release_buffer(good).expect("release");
        dev.release_executable(fill).expect("release");
        assert!(
            violations.is_empty(),
            "table spans not checked against what their commands need:\n  {}",
            violations.join("\n  ")
        );
    });
}

/// A recorded copy between two slots bound to overlapping ranges of one buffer is refused at
/// submit, or copies as if through a temporary; it never corrupts memory.
pub fn overlapping_slots<T: Target>() {
    with_device::<T>(|dev| {
        let data = super::pattern(128, 0x2A);
        let buffer = upload(dev, &data);
        let cb = dev
            .create_command_buffer(CommandBufferMode::Reusable, 8, 2)
            .expect("command buffer");
        dev.record(
            cb,
            Record::Copy {
                source: BufferRef::slot(0),
                target: BufferRef::slot(1),
                length: 64,
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        let table = [
            BufferSpan::new(buffer, 0, 64),
            BufferSpan::new(buffer, 32, 64),
        ];
        match run(dev, |d, s| d.queue_execute(s, cb, &table)) {
            Err(e) => {
                assert!(
                    matches!(e, Error::InvalidArgument(_) | Error::SemaphoreFailed { .. }),
                    "overlapping slots refused with {e:?}"
                );
                assert_eq!(download(dev, buffer, 0, 128), data, "nothing written");
            }
            Ok(()) => {
                let mut want = data.clone();
                want.copy_within(0..64, 32);
                assert_eq!(
                    download(dev, buffer, 0, 128),
                    want,
                    "an overlapping copy that runs must behave like memmove"
                );
            }
        }
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// A one-shot command buffer with slots runs once with its table.
pub fn one_shot_with_slots<T: Target>() {
    with_device::<T>(|dev| {
        let data = super::pattern(64, 8);
        let a = upload(dev, &data);
        let b = alloc(dev, 64);
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 16, 2)
            .expect("one-shot with 2 slots");
        dev.record(
            cb,
            Record::Copy {
                source: BufferRef::slot(0),
                target: BufferRef::slot(1).at(8, WHOLE),
                length: 32,
            },
        )
        .expect("record");
        dev.end(cb).expect("end");
        let table = [BufferSpan::new(a, 16, 48), BufferSpan::whole(b)];
        run(dev, |d, s| d.queue_execute(s, cb, &table)).expect("submit");
        assert_eq!(download(dev, b, 8, 32), data[16..48].to_vec());
        assert_err!(
            run(dev, |d, s| d.queue_execute(s, cb, &table)),
            Error::CommandBufferState(_),
            "one-shot with slots submitted twice"
        );
        dev.release_command_buffer(cb).expect("release");
        dev.release_buffer(a).expect("release");
        dev.release_buffer(b).expect("release");
    });
}
