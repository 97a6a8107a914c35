//! Dispatch: the built-in kernels run over grids smaller and larger than their data and
//! over bindings at offsets, checked against f64 references; indirect dispatches read their
//! workgroup count when they run.

use super::{
    alloc, assert_close, bytes_u32, dispatch, download, download_f32, execute, execute_one,
    host_params_all, load, run, u32_bytes, upload_f32, values, with_device, Target,
};
use alloc::{format, vec, vec::Vec};
use hal_core::{BufferRef, BufferSpan, CommandBufferMode, Device, Error, Record, Workgroups};

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

/// Element-wise kernels (`mul_f32`, `relu_f32`) over several grids.
pub fn dispatch_elementwise<T: Target>() {
    with_device::<T>(|dev| {
        // Under Miri fewer elements: each is interpreted.
        let n = if cfg!(miri) { 250 } else { 1000 };
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
        // Under Miri fewer elements (each workgroup and element is interpreted); at least
        // 400, which the sub-range case below reads.
        let n: usize = if cfg!(miri) { 400 } else { 1000 };
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
            // As many workgroups as elements, and more.
            [n as u32, 1, 1],
            [n as u32 * 3 / 2, 1, 1],
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
