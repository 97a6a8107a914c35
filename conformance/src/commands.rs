//! Commands: every command kind, recorded and queued, dispatches of the built-in kernels
//! checked against f64 references, and the validation a command buffer does when recording
//! and submitting.

use super::{
    alloc, assert_close, bytes_f32, bytes_u32, dispatch, download, download_f32, execute,
    execute_one, f32_bytes, host_params, host_params_all, load, pattern, run, u32_bytes, upload,
    upload_f32, values, with_device, Target,
};
use alloc::{format, vec, vec::Vec};
use hal_core::command::{MAX_BINDINGS, MAX_BINDING_SLOTS, MAX_CONSTANTS, MAX_UPDATE_BYTES};
use hal_core::memory::BufferUsage;
use hal_core::{
    Buffer, BufferRef, BufferSpan, CommandBufferMode, Device, Error, Executable, Record,
    Workgroups, WHOLE,
};

/// A host-visible buffer of `len` bytes, all `byte`.
fn filled<D: Device>(dev: &mut D, len: usize, byte: u8) -> Buffer {
    upload(dev, &vec![byte; len])
}

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

/// Element-wise kernels (`mul_f32`, `relu_f32`) over several grids.
pub fn dispatch_elementwise<T: Target>() {
    with_device::<T>(|dev| {
        let n = 1000;
        let (x, y) = (values(n, 1), values(n, 2));
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let out = alloc(dev, n as u64 * 4);
        let mul = load::<T>(dev, "mul_f32");
        let relu = load::<T>(dev, "relu_f32");
        for grid in [[1, 1, 1], [7, 1, 1], [3, 2, 2]] {
            dispatch(
                dev,
                mul,
                grid,
                &[],
                &[
                    BufferRef::buffer(a),
                    BufferRef::buffer(b),
                    BufferRef::buffer(out),
                ],
            )
            .expect("mul_f32");
            let want: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(&p, &q)| f64::from(p) * f64::from(q))
                .collect();
            assert_close(&download_f32(dev, out, n), &want, 1e-6, "mul_f32");
            dispatch(
                dev,
                relu,
                grid,
                &[],
                &[BufferRef::buffer(a), BufferRef::buffer(out)],
            )
            .expect("relu_f32");
            let want: Vec<f64> = x.iter().map(|&p| f64::from(p.max(0.0))).collect();
            assert_close(&download_f32(dev, out, n), &want, 0.0, "relu_f32");
        }
        dev.release_executable(mul).expect("release");
        dev.release_executable(relu).expect("release");
        for buffer in [a, b, out] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// `add_f32` over grids smaller and larger than the data, and over bindings at offsets.
pub fn dispatch_add<T: Target>() {
    with_device::<T>(|dev| {
        let n = 1000;
        let (x, y) = (values(n, 3), values(n, 4));
        let want: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(&p, &q)| f64::from(p) + f64::from(q))
            .collect();
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let out = alloc(dev, n as u64 * 4);
        let add = load::<T>(dev, "add_f32");
        for grid in [
            [1, 1, 1],
            [7, 1, 1],
            [2, 3, 4],
            [1000, 1, 1],
            [1500, 1, 1],
            [1, 1, 9],
        ] {
            run(dev, |d, s| d.queue_fill(s, BufferSpan::whole(out), &[0])).expect("clear");
            dispatch(
                dev,
                add,
                grid,
                &[],
                &[
                    BufferRef::buffer(a),
                    BufferRef::buffer(b),
                    BufferRef::buffer(out),
                ],
            )
            .unwrap_or_else(|e| panic!("add_f32 over {grid:?}: {e:?}"));
            assert_close(
                &download_f32(dev, out, n),
                &want,
                1e-6,
                &format!("add_f32 over {grid:?}"),
            );
        }
        // Sub-ranges: elements 100..400 of a and b into elements 0..300 of out; the output
        // binding's length sets n.
        run(dev, |d, s| d.queue_fill(s, BufferSpan::whole(out), &[0])).expect("clear");
        dispatch(
            dev,
            add,
            [4, 1, 1],
            &[],
            &[
                BufferRef::buffer(a).at(400, 1200),
                BufferRef::buffer(b).at(400, 1200),
                BufferRef::buffer(out).at(0, 1200),
            ],
        )
        .expect("add_f32 over sub-ranges");
        let got = download_f32(dev, out, n);
        assert_close(&got[..300], &want[100..400], 1e-6, "add_f32 sub-range");
        assert!(
            got[300..].iter().all(|&v| v == 0.0),
            "add_f32 wrote past its output binding"
        );
        dev.release_executable(add).expect("release");
        for buffer in [a, b, out] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

fn matmul_reference(
    a: &[f32],
    b: &[f32],
    bias: Option<&[f32]>,
    relu: bool,
    (m, k, n): (usize, usize, usize),
) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut sum: f64 = (0..k)
                .map(|p| f64::from(a[i * k + p]) * f64::from(b[p * n + j]))
                .sum();
            if let Some(bias) = bias {
                sum += f64::from(bias[j]);
            }
            c[i * n + j] = if relu { sum.max(0.0) } else { sum };
        }
    }
    c
}

/// `matmul_f32` (constants `[M, K, N]`) against an f64 reference, over several grids.
pub fn dispatch_matmul<T: Target>() {
    with_device::<T>(|dev| {
        let (m, k, n) = (13usize, 17usize, 9usize);
        let (x, y) = (values(m * k, 5), values(k * n, 6));
        let want = matmul_reference(&x, &y, None, false, (m, k, n));
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let c = alloc(dev, (m * n * 4) as u64);
        let matmul = load::<T>(dev, "matmul_f32");
        for grid in [[1, 1, 1], [4, 2, 1], [13, 9, 1], [5, 1, 3], [200, 1, 1]] {
            run(dev, |d, s| d.queue_fill(s, BufferSpan::whole(c), &[0])).expect("clear");
            dispatch(
                dev,
                matmul,
                grid,
                &[m as u32, k as u32, n as u32],
                &[
                    BufferRef::buffer(a),
                    BufferRef::buffer(b),
                    BufferRef::buffer(c),
                ],
            )
            .unwrap_or_else(|e| panic!("matmul_f32 over {grid:?}: {e:?}"));
            assert_close(
                &download_f32(dev, c, m * n),
                &want,
                1e-5,
                &format!("matmul_f32 {m}x{k}x{n} over {grid:?}"),
            );
        }
        dev.release_executable(matmul).expect("release");
        for buffer in [a, b, c] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// `matmul_f32` with the flags constant: bias from binding 3 (bit 0) and relu (bit 1).
pub fn dispatch_matmul_bias_relu<T: Target>() {
    with_device::<T>(|dev| {
        let (m, k, n) = (6usize, 11usize, 10usize);
        let (x, y, z) = (values(m * k, 7), values(k * n, 8), values(n, 9));
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let bias = upload_f32(dev, &z);
        let c = alloc(dev, (m * n * 4) as u64);
        let matmul = load::<T>(dev, "matmul_f32");
        for flags in 0..4u32 {
            let with_bias = flags & 1 != 0;
            let with_relu = flags & 2 != 0;
            let want = matmul_reference(&x, &y, with_bias.then_some(&z[..]), with_relu, (m, k, n));
            let mut bindings = vec![
                BufferRef::buffer(a),
                BufferRef::buffer(b),
                BufferRef::buffer(c),
            ];
            if with_bias {
                bindings.push(BufferRef::buffer(bias));
            }
            run(dev, |d, s| d.queue_fill(s, BufferSpan::whole(c), &[0xFF])).expect("clear to NaN");
            dispatch(
                dev,
                matmul,
                [3, 2, 1],
                &[m as u32, k as u32, n as u32, flags],
                &bindings,
            )
            .unwrap_or_else(|e| panic!("matmul_f32 flags {flags}: {e:?}"));
            assert_close(
                &download_f32(dev, c, m * n),
                &want,
                1e-5,
                &format!("matmul_f32 flags {flags}"),
            );
        }
        dev.release_executable(matmul).expect("release");
        for buffer in [a, b, bias, c] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// `softmax_f32` (constants `[rows, cols]`) against an f64 reference, with large inputs that
/// overflow a naive exponential.
pub fn dispatch_softmax<T: Target>() {
    with_device::<T>(|dev| {
        let (rows, cols) = (5usize, 33usize);
        let mut x: Vec<f32> = values(rows * cols, 10).iter().map(|v| v * 5.0).collect();
        x[cols] = 120.0; // row 1 holds a value whose exp overflows f32
        x[2 * cols + 3] = -120.0;
        let want: Vec<f64> = x
            .chunks(cols)
            .flat_map(|row| {
                let max = row.iter().map(|&v| f64::from(v)).fold(f64::MIN, f64::max);
                let exps: Vec<f64> = row.iter().map(|&v| libm::exp(f64::from(v) - max)).collect();
                let sum: f64 = exps.iter().sum();
                exps.into_iter().map(move |e| e / sum)
            })
            .collect();
        let input = upload_f32(dev, &x);
        let out = alloc(dev, (rows * cols * 4) as u64);
        let softmax = load::<T>(dev, "softmax_f32");
        for grid in [[1, 1, 1], [3, 1, 1], [5, 1, 1], [8, 2, 1]] {
            run(dev, |d, s| d.queue_fill(s, BufferSpan::whole(out), &[0])).expect("clear");
            dispatch(
                dev,
                softmax,
                grid,
                &[rows as u32, cols as u32],
                &[BufferRef::buffer(input), BufferRef::buffer(out)],
            )
            .unwrap_or_else(|e| panic!("softmax_f32 over {grid:?}: {e:?}"));
            let got = download_f32(dev, out, rows * cols);
            assert!(got.iter().all(|v| v.is_finite()), "softmax_f32: {got:?}");
            assert_close(&got, &want, 1e-6, &format!("softmax_f32 over {grid:?}"));
            for (r, row) in got.chunks(cols).enumerate() {
                let sum: f64 = row.iter().map(|&v| f64::from(v)).sum();
                assert!((sum - 1.0).abs() < 1e-5, "softmax row {r} sums to {sum}");
            }
        }
        dev.release_executable(softmax).expect("release");
        dev.release_buffer(input).expect("release");
        dev.release_buffer(out).expect("release");
    });
}

/// `fill_u32` and `copy_u32`.
pub fn dispatch_copy_and_fill_kernels<T: Target>() {
    with_device::<T>(|dev| {
        let n = 1000usize;
        let src = alloc(dev, n as u64 * 4);
        let dst = alloc(dev, n as u64 * 4);
        let fill = load::<T>(dev, "fill_u32");
        let copy = load::<T>(dev, "copy_u32");
        dispatch(
            dev,
            fill,
            [5, 1, 1],
            &[0xCAFE_F00D],
            &[BufferRef::buffer(src)],
        )
        .expect("fill_u32");
        assert_eq!(
            bytes_u32(&download(dev, src, 0, n * 4)),
            vec![0xCAFE_F00D; n]
        );
        let words: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        dev.write_buffer(BufferSpan::new(src, 0, n as u64 * 4), &u32_bytes(&words))
            .expect("write");
        dispatch(
            dev,
            copy,
            [3, 3, 1],
            &[],
            &[BufferRef::buffer(src), BufferRef::buffer(dst)],
        )
        .expect("copy_u32");
        assert_eq!(bytes_u32(&download(dev, dst, 0, n * 4)), words);
        dev.release_executable(fill).expect("release");
        dev.release_executable(copy).expect("release");
        dev.release_buffer(src).expect("release");
        dev.release_buffer(dst).expect("release");
    });
}

/// `noop` runs over any grid, with or without bindings.
pub fn dispatch_noop<T: Target>() {
    with_device::<T>(|dev| {
        let noop = load::<T>(dev, "noop");
        let buffer = alloc(dev, 16);
        dispatch(dev, noop, [1, 1, 1], &[], &[]).expect("noop");
        dispatch(
            dev,
            noop,
            [4, 4, 4],
            &[1, 2, 3],
            &[BufferRef::buffer(buffer)],
        )
        .expect("noop with a binding");
        dev.release_executable(noop).expect("release");
        dev.release_buffer(buffer).expect("release");
    });
}

/// An indirect dispatch reads its workgroup count from a buffer with
/// `DISPATCH_INDIRECT_PARAMS` usage when it runs; the parameters are validated at record.
pub fn indirect_dispatch<T: Target>() {
    with_device::<T>(|dev| {
        let params = dev
            .allocate_buffer(host_params_all(), 64)
            .expect("indirect parameters buffer");
        dev.write_buffer(BufferSpan::new(params, 16, 12), &u32_bytes(&[3, 2, 1]))
            .expect("write");
        let n = 777usize;
        let out = alloc(dev, n as u64 * 4);
        let fill = load::<T>(dev, "fill_u32");
        let indirect = Workgroups::Indirect(BufferRef::buffer(params).at(16, 12));
        execute_one(
            dev,
            Record::Dispatch {
                executable: fill,
                workgroups: indirect,
                constants: &[0x1234_5678],
                bindings: &[BufferRef::buffer(out)],
            },
        )
        .expect("indirect dispatch");
        assert_eq!(
            bytes_u32(&download(dev, out, 0, n * 4)),
            vec![0x1234_5678; n]
        );
        // The count is read when the dispatch runs: written by an earlier command.
        let count = u32_bytes(&[5, 1, 1]);
        execute(
            dev,
            &[
                Record::Update {
                    target: BufferRef::buffer(params).at(16, 12),
                    data: &count,
                },
                Record::Barrier,
                Record::Dispatch {
                    executable: fill,
                    workgroups: indirect,
                    constants: &[0x0BAD_F00D],
                    bindings: &[BufferRef::buffer(out)],
                },
            ],
        )
        .expect("indirect dispatch after an update of its parameters");
        assert_eq!(
            bytes_u32(&download(dev, out, 0, n * 4)),
            vec![0x0BAD_F00D; n]
        );

        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 16, 0)
            .expect("command buffer");
        let no_usage = alloc(dev, 64);
        for (workgroups, what) in [
            (
                Workgroups::Indirect(BufferRef::buffer(no_usage)),
                "parameters without DISPATCH_INDIRECT_PARAMS",
            ),
            (
                Workgroups::Indirect(BufferRef::buffer(params).at(2, 12)),
                "misaligned parameters",
            ),
            (
                Workgroups::Indirect(BufferRef::buffer(params).at(56, 12)),
                "parameters past the end",
            ),
        ] {
            let result = dev.record(
                cb,
                Record::Dispatch {
                    executable: fill,
                    workgroups,
                    constants: &[0],
                    bindings: &[BufferRef::buffer(out)],
                },
            );
            assert_err!(
                result,
                Error::Usage { .. } | Error::InvalidArgument(_) | Error::OutOfRange { .. },
                "{what}"
            );
        }
        dev.release_command_buffer(cb).expect("release");
        dev.release_executable(fill).expect("release");
        for buffer in [params, out, no_usage] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// Barriers order commands: each step reads what the one before it wrote.
pub fn barrier_orders_commands<T: Target>() {
    with_device::<T>(|dev| {
        let n = 300usize;
        let x = values(n, 11);
        let bytes = f32_bytes(&x);
        let [a, b, c, d] = [0; 4].map(|_| alloc(dev, n as u64 * 4));
        let add = load::<T>(dev, "add_f32");
        let mul = load::<T>(dev, "mul_f32");
        execute(
            dev,
            &[
                Record::Update {
                    target: BufferRef::buffer(a),
                    data: &bytes,
                },
                Record::Barrier,
                Record::Copy {
                    source: BufferRef::buffer(a),
                    target: BufferRef::buffer(b),
                    length: n as u64 * 4,
                },
                Record::Barrier,
                Record::Dispatch {
                    executable: add,
                    workgroups: Workgroups::Direct([4, 1, 1]),
                    constants: &[],
                    bindings: &[
                        BufferRef::buffer(a),
                        BufferRef::buffer(b),
                        BufferRef::buffer(c),
                    ],
                },
                Record::Barrier,
                Record::Dispatch {
                    executable: mul,
                    workgroups: Workgroups::Direct([3, 1, 1]),
                    constants: &[],
                    bindings: &[
                        BufferRef::buffer(c),
                        BufferRef::buffer(a),
                        BufferRef::buffer(d),
                    ],
                },
                Record::Barrier,
                Record::Fill {
                    target: BufferRef::buffer(a),
                    pattern: &[0],
                },
            ],
        )
        .expect("a chain of commands separated by barriers");
        let want: Vec<f64> = x
            .iter()
            .map(|&v| 2.0 * f64::from(v) * f64::from(v))
            .collect();
        assert_close(&download_f32(dev, d, n), &want, 1e-6, "(a + copy of a) * a");
        assert!(bytes_f32(&download(dev, a, 0, n * 4))
            .iter()
            .all(|&v| v == 0.0));
        dev.release_executable(add).expect("release");
        dev.release_executable(mul).expect("release");
        for buffer in [a, b, c, d] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

fn recording<D: Device>(dev: &mut D) -> hal_core::CommandBuffer {
    dev.create_command_buffer(CommandBufferMode::OneShot, 64, 0)
        .expect("create_command_buffer")
}

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

/// A kernel that refuses its workgroups (missing constants or bindings, a binding too small
/// or misaligned) fails its submission with an error, never a panic, and writes nothing it
/// should not.
pub fn kernel_errors_fail_the_submission<T: Target>() {
    with_device::<T>(|dev| {
        let small = alloc(dev, 16);
        let out = upload(dev, &[0xEE; 256]);
        let fill = load::<T>(dev, "fill_u32");
        let matmul = load::<T>(dev, "matmul_f32");
        let add = load::<T>(dev, "add_f32");
        let cases: [(Executable, &[u32], Vec<BufferRef>, &str); 5] = [
            (
                fill,
                &[],
                vec![BufferRef::buffer(out)],
                "fill_u32 without its constant",
            ),
            (fill, &[1], vec![], "fill_u32 without its binding"),
            (
                matmul,
                &[8, 8, 8],
                vec![
                    BufferRef::buffer(small),
                    BufferRef::buffer(small),
                    BufferRef::buffer(out),
                ],
                "matmul_f32 with bindings too small for 8x8x8",
            ),
            (
                matmul,
                &[0, 4, 4],
                vec![
                    BufferRef::buffer(small),
                    BufferRef::buffer(small),
                    BufferRef::buffer(out),
                ],
                "matmul_f32 with M = 0",
            ),
            (
                add,
                &[],
                vec![
                    BufferRef::buffer(out).at(2, 64),
                    BufferRef::buffer(out).at(2, 64),
                    BufferRef::buffer(out).at(130, 64),
                ],
                "add_f32 with misaligned bindings",
            ),
        ];
        for (executable, constants, bindings, what) in cases {
            let result = dispatch(dev, executable, [2, 1, 1], constants, &bindings);
            assert!(result.is_err(), "{what}: the submission must fail");
        }
        assert_eq!(
            download(dev, out, 0, 256)[..2],
            [0xEE, 0xEE],
            "nothing written before the first binding"
        );
        for executable in [fill, matmul, add] {
            dev.release_executable(executable).expect("release");
        }
        dev.release_buffer(small).expect("release");
        dev.release_buffer(out).expect("release");
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

/// Large grids over large data (split across workers where the driver has them).
pub fn dispatch_large<T: Target>() {
    with_device::<T>(|dev| {
        // Under Miri a smaller vector: every element is an interpreted atomic access.
        let n = if cfg!(miri) { 1 << 10 } else { 1 << 16 };
        let (x, y) = (values(n, 31), values(n, 32));
        let a = upload_f32(dev, &x);
        let b = upload_f32(dev, &y);
        let out = alloc(dev, n as u64 * 4);
        let add = load::<T>(dev, "add_f32");
        dispatch(
            dev,
            add,
            [64, 4, 1],
            &[],
            &[
                BufferRef::buffer(a),
                BufferRef::buffer(b),
                BufferRef::buffer(out),
            ],
        )
        .expect("add_f32 over 64K elements");
        let want: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(&p, &q)| f64::from(p) + f64::from(q))
            .collect();
        assert_close(&download_f32(dev, out, n), &want, 1e-6, "add_f32 64K");
        dev.release_executable(add).expect("release");

        let (m, k, nn) = (48usize, 40usize, 56usize);
        let (p, q) = (values(m * k, 33), values(k * nn, 34));
        let pa = upload_f32(dev, &p);
        let qb = upload_f32(dev, &q);
        let c = alloc(dev, (m * nn * 4) as u64);
        let matmul = load::<T>(dev, "matmul_f32");
        dispatch(
            dev,
            matmul,
            [8, 8, 1],
            &[m as u32, k as u32, nn as u32],
            &[
                BufferRef::buffer(pa),
                BufferRef::buffer(qb),
                BufferRef::buffer(c),
            ],
        )
        .expect("matmul_f32 48x40x56");
        assert_close(
            &download_f32(dev, c, m * nn),
            &matmul_reference(&p, &q, None, false, (m, k, nn)),
            1e-5,
            "matmul_f32 48x40x56",
        );
        dev.release_executable(matmul).expect("release");
        for buffer in [a, b, out, pa, qb, c] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}

/// A dispatch cannot write a buffer made with READ access only: the kernel sees it
/// read-only and the submission fails, leaving the bytes as they were.
pub fn dispatch_respects_access<T: Target>() {
    with_device::<T>(|dev| {
        let x = values(64, 41);
        let input = upload_f32(dev, &x);
        let read_only = dev
            .allocate_buffer(
                hal_core::memory::BufferParams {
                    access: hal_core::memory::MemoryAccess::READ,
                    ..host_params()
                },
                256,
            )
            .expect("a READ-only buffer");
        let before = download(dev, read_only, 0, 256);
        let relu = load::<T>(dev, "relu_f32");
        let result = dispatch(
            dev,
            relu,
            [2, 1, 1],
            &[],
            &[BufferRef::buffer(input), BufferRef::buffer(read_only)],
        );
        let after = download(dev, read_only, 0, 256);
        // It can still be read by a kernel.
        let out = alloc(dev, 256);
        dispatch(
            dev,
            relu,
            [2, 1, 1],
            &[],
            &[BufferRef::buffer(read_only), BufferRef::buffer(out)],
        )
        .expect("a READ-only buffer as a kernel input");
        dev.release_executable(relu).expect("release");
        for buffer in [input, read_only, out] {
            dev.release_buffer(buffer).expect("release");
        }
        assert!(
            result.is_err(),
            "a dispatch writing a READ-only buffer must fail"
        );
        assert_eq!(after, before, "the READ-only buffer was written");
    });
}
