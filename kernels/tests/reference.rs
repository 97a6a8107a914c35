//! The int8 kernels against a direct i64/i128 statement of TFLM's formulas (written
//! independently of the kernels), float kernels against plain loops in TFLM's order,
//! movement kernels against index arithmetic, plus the parameter contract: encode/decode
//! round trips, refused words, short bindings.

use ember_kernels::activation::Activation;
use ember_kernels::add::{AddF32, AddS8};
use ember_kernels::broadcast::BroadcastShape;
use ember_kernels::concatenation::Concatenation;
use ember_kernels::conv2d::{per_channel_multipliers, Conv2dF32, Conv2dS8, Conv2dShape};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use ember_kernels::fully_connected::{FullyConnectedS8, FullyConnectedShape};
use ember_kernels::mean::{MeanF32, MeanS8, MeanShape};
use ember_kernels::mul::MulS8;
use ember_kernels::pad::Pad;
use ember_kernels::padding::{compute_padding_height_width, Padding, Window};
use ember_kernels::pooling::{AveragePool2dS8, MaxPool2dS8, Pool2dShape};
use ember_kernels::strided_slice::StridedSlice;
use ember_kernels::transpose::Transpose;
use ember_kernels::{KernelError, KernelParams, Words};
use proptest::prelude::*;

/// `x * m * 2^(shift - 31)`: the doubling high product rounded half up, then a right
/// shift rounded half away from zero, in wide integers.
fn requant(x: i64, m: i32, shift: i32) -> i64 {
    let x = (x << shift.max(0)) as i128;
    let high = (x * i128::from(m) + (1 << 30)).div_euclid(1 << 31);
    let right = (-shift).max(0);
    if right == 0 {
        return high as i64;
    }
    let d = 1i128 << right;
    let r = if high >= 0 {
        (high + d / 2).div_euclid(d)
    } else {
        -((-high + d / 2).div_euclid(d))
    };
    r as i64
}

fn round_trip<P: KernelParams + PartialEq + core::fmt::Debug>(p: &P) {
    let mut words = Vec::new();
    p.encode(&mut words);
    let back = P::decode(&mut Words::new(&words)).unwrap();
    assert_eq!(&back, p);
    // Every truncation is refused.
    for n in 0..words.len() {
        assert!(P::decode(&mut Words::new(&words[..n])).is_err(), "{n}");
    }
}

fn lcg(seed: &mut u64) -> i8 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 56) as i8
}

fn data(n: usize, seed: &mut u64) -> Vec<i8> {
    (0..n).map(|_| lcg(seed)).collect()
}

#[allow(clippy::too_many_arguments)]
fn conv_case(
    batches: usize,
    ih: usize,
    iw: usize,
    fd: usize,
    groups: usize,
    per_group: usize,
    fh: usize,
    fw: usize,
    stride: usize,
    dil: usize,
    same: bool,
    zp_in: i32,
    zp_out: i32,
    act: Activation,
    seed: u64,
) {
    let padding = if same { Padding::Same } else { Padding::Valid };
    let pv = compute_padding_height_width(
        stride as i32,
        stride as i32,
        dil as i32,
        dil as i32,
        ih as i32,
        iw as i32,
        fh as i32,
        fw as i32,
        padding,
    );
    if pv.out_height <= 0 || pv.out_width <= 0 {
        return;
    }
    let (oh, ow) = (pv.out_height as usize, pv.out_width as usize);
    let id = fd * groups;
    let od = per_group * groups;
    let shape = Conv2dShape {
        batches,
        input_height: ih,
        input_width: iw,
        input_depth: id,
        filter_height: fh,
        filter_width: fw,
        filter_depth: fd,
        output_height: oh,
        output_width: ow,
        output_depth: od,
        window: Window {
            stride_height: stride,
            stride_width: stride,
            dilation_height: dil,
            dilation_width: dil,
            pad_height: pv.height as usize,
            pad_width: pv.width as usize,
        },
        has_bias: true,
    };
    let (out_scale, out_zp) = (0.05f32, zp_out);
    let (act_min, act_max) = act.range_s8(out_scale, out_zp).unwrap();
    let p = Conv2dS8 {
        shape,
        filter_hwio: false,
        input_offset: -zp_in,
        output_offset: out_zp,
        act_min,
        act_max,
    };
    round_trip(&p);
    let mut s = seed;
    let input = data(batches * ih * iw * id, &mut s);
    let filter = data(od * fh * fw * fd, &mut s);
    let bias: Vec<i32> = (0..od).map(|i| (i as i32 - 2) * 301).collect();
    let scales: Vec<f32> = (0..od).map(|i| 0.002 + 0.001 * i as f32).collect();
    let (mut mult, mut shift) = (vec![0; od], vec![0; od]);
    per_channel_multipliers(0.1, &scales, out_scale, &mut mult, &mut shift).unwrap();
    let mut out = vec![0i8; batches * oh * ow * od];
    p.run(&input, &filter, &bias, &mult, &shift, &mut out)
        .unwrap();
    let pad = (pv.height as i64, pv.width as i64);
    for b in 0..batches {
        for oy in 0..oh {
            for ox in 0..ow {
                for oc in 0..od {
                    let g = oc / per_group;
                    let mut acc = 0i64;
                    for fy in 0..fh {
                        for fx in 0..fw {
                            let y = (oy * stride + fy * dil) as i64 - pad.0;
                            let x = (ox * stride + fx * dil) as i64 - pad.1;
                            if y < 0 || x < 0 || y >= ih as i64 || x >= iw as i64 {
                                continue;
                            }
                            for c in 0..fd {
                                let iv = input
                                    [((b * ih + y as usize) * iw + x as usize) * id + g * fd + c]
                                    as i64;
                                let fv = filter[((oc * fh + fy) * fw + fx) * fd + c] as i64;
                                acc += fv * (iv - zp_in as i64);
                            }
                        }
                    }
                    acc += bias[oc] as i64;
                    let v = (requant(acc, mult[oc], shift[oc]) + out_zp as i64)
                        .clamp(act_min as i64, act_max as i64);
                    assert_eq!(out[((b * oh + oy) * ow + ox) * od + oc] as i64, v);
                }
            }
        }
    }
    // Output rows in two tiles give the same bytes.
    let split = (seed as usize) % (batches * oh + 1);
    let mut tiles = vec![0i8; out.len()];
    let (top, bottom) = tiles.split_at_mut(split * ow * od);
    p.run_rows(&input, &filter, &bias, &mult, &shift, 0..split, top)
        .unwrap();
    p.run_rows(
        &input,
        &filter,
        &bias,
        &mult,
        &shift,
        split..batches * oh,
        bottom,
    )
    .unwrap();
    assert_eq!(tiles, out);
    assert!(p
        .run_rows(
            &input,
            &filter,
            &bias,
            &mult,
            &shift,
            0..batches * oh + 1,
            &mut tiles
        )
        .is_err());
    // Without groups, the filter transposed to HWIO gives the same outputs.
    if fd == id {
        let per_output = fh * fw * fd;
        let mut hwio = vec![0i8; filter.len()];
        for (o, row) in filter.chunks_exact(per_output).enumerate() {
            for (t, &v) in row.iter().enumerate() {
                hwio[t * od + o] = v;
            }
        }
        let q = Conv2dS8 {
            filter_hwio: true,
            ..p
        };
        round_trip(&q);
        let mut out_hwio = vec![0i8; out.len()];
        q.run(&input, &hwio, &bias, &mult, &shift, &mut out_hwio)
            .unwrap();
        assert_eq!(out_hwio, out);
    }
    // Short bindings are refused before anything runs.
    let lens = [input.len(), filter.len(), od * 4, od * 4, od * 4, out.len()];
    assert!(p.check(&lens).is_ok());
    for i in 0..lens.len() {
        let mut short = lens;
        short[i] -= 1;
        assert!(matches!(
            p.check(&short),
            Err(KernelError::BindingTooSmall { .. })
        ));
    }
    assert!(matches!(
        p.check(&lens[..5]),
        Err(KernelError::MissingBinding { .. })
    ));
}

#[allow(clippy::too_many_arguments)]
fn depthwise_case(
    ih: usize,
    iw: usize,
    id: usize,
    mult: usize,
    fh: usize,
    fw: usize,
    stride: usize,
    dil: usize,
    same: bool,
    zp_in: i32,
    seed: u64,
) {
    let padding = if same { Padding::Same } else { Padding::Valid };
    let pv = compute_padding_height_width(
        stride as i32,
        stride as i32,
        dil as i32,
        dil as i32,
        ih as i32,
        iw as i32,
        fh as i32,
        fw as i32,
        padding,
    );
    if pv.out_height <= 0 || pv.out_width <= 0 {
        return;
    }
    let (oh, ow, od) = (pv.out_height as usize, pv.out_width as usize, id * mult);
    let p = DepthwiseConv2dS8 {
        shape: DepthwiseConv2dShape {
            batches: 1,
            input_height: ih,
            input_width: iw,
            input_depth: id,
            depth_multiplier: mult,
            filter_height: fh,
            filter_width: fw,
            output_height: oh,
            output_width: ow,
            window: Window {
                stride_height: stride,
                stride_width: stride,
                dilation_height: dil,
                dilation_width: dil,
                pad_height: pv.height as usize,
                pad_width: pv.width as usize,
            },
            has_bias: true,
        },
        input_offset: -zp_in,
        output_offset: 3,
        act_min: -128,
        act_max: 127,
    };
    round_trip(&p);
    let mut s = seed;
    let input = data(ih * iw * id, &mut s);
    let filter = data(fh * fw * od, &mut s);
    let bias: Vec<i32> = (0..od).map(|i| 57 * i as i32 - 100).collect();
    let scales: Vec<f32> = (0..od).map(|i| 0.003 * (1 + i) as f32).collect();
    let (mut m, mut sh) = (vec![0; od], vec![0; od]);
    per_channel_multipliers(0.05, &scales, 0.02, &mut m, &mut sh).unwrap();
    let mut out = vec![0i8; oh * ow * od];
    p.run(&input, &filter, &bias, &m, &sh, &mut out).unwrap();
    // Output rows in two tiles give the same bytes.
    let split = (seed as usize) % (oh + 1);
    let mut tiles = vec![0i8; out.len()];
    let (top, bottom) = tiles.split_at_mut(split * ow * od);
    p.run_rows(&input, &filter, &bias, &m, &sh, 0..split, top)
        .unwrap();
    p.run_rows(&input, &filter, &bias, &m, &sh, split..oh, bottom)
        .unwrap();
    assert_eq!(tiles, out);
    for oy in 0..oh {
        for ox in 0..ow {
            for oc in 0..od {
                let ic = oc / mult;
                let mut acc = bias[oc] as i64;
                for fy in 0..fh {
                    for fx in 0..fw {
                        let y = (oy * stride + fy * dil) as i64 - pv.height as i64;
                        let x = (ox * stride + fx * dil) as i64 - pv.width as i64;
                        if y >= 0 && x >= 0 && y < ih as i64 && x < iw as i64 {
                            let iv = input[(y as usize * iw + x as usize) * id + ic] as i64;
                            acc += filter[(fy * fw + fx) * od + oc] as i64 * (iv - zp_in as i64);
                        }
                    }
                }
                let v = (requant(acc, m[oc], sh[oc]) + 3).clamp(-128, 127);
                assert_eq!(out[(oy * ow + ox) * od + oc] as i64, v);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn conv_s8_matches_formula(
        batches in 1usize..3, ih in 1usize..7, iw in 1usize..7, fd in 1usize..4,
        groups in 1usize..3, per_group in 1usize..4, fh in 1usize..4, fw in 1usize..4,
        stride in 1usize..3, dil in 1usize..3, same: bool, zp_in in -128i32..128,
        zp_out in -20i32..20, act in 0u8..4, seed: u64,
    ) {
        conv_case(batches, ih, iw, fd, groups, per_group, fh, fw, stride, dil, same, zp_in,
            zp_out, Activation::from_code(act).unwrap(), seed);
    }

    #[test]
    fn depthwise_s8_matches_formula(
        ih in 1usize..7, iw in 1usize..7, id in 1usize..4, mult in 1usize..4,
        fh in 1usize..4, fw in 1usize..4, stride in 1usize..3, dil in 1usize..3,
        same: bool, zp_in in -128i32..128, seed: u64,
    ) {
        depthwise_case(ih, iw, id, mult, fh, fw, stride, dil, same, zp_in, seed);
    }

    #[test]
    fn fully_connected_s8_matches_formula(
        batches in 1usize..4, n in 1usize..40, od in 1usize..6, per_channel: bool,
        zp_in in -128i32..128, f_off in -3i32..4, seed: u64,
    ) {
        let f_off = if per_channel { 0 } else { f_off };
        let p = FullyConnectedS8 {
            shape: FullyConnectedShape { batches, accum_depth: n, output_depth: od,
                has_bias: seed % 2 == 0 },
            input_offset: -zp_in, filter_offset: f_off, output_offset: -7,
            act_min: -100, act_max: 120, per_channel,
        };
        round_trip(&p);
        let mut s = seed;
        let input = data(batches * n, &mut s);
        let w = data(od * n, &mut s);
        let bias: Vec<i32> = (0..od).map(|i| 1000 - 333 * i as i32).collect();
        let ch = if per_channel { od } else { 1 };
        let (mut m, mut sh) = (vec![0; ch], vec![0; ch]);
        if per_channel {
            let scales: Vec<f32> = (0..od).map(|i| 0.01 / (1 + i) as f32).collect();
            per_channel_multipliers(0.02, &scales, 0.1, &mut m, &mut sh).unwrap();
        } else {
            (m[0], sh[0]) = FullyConnectedS8::per_tensor_multiplier(0.02, 0.004, 0.1);
        }
        let mut out = vec![0i8; batches * od];
        p.run(&input, &w, &bias, &m, &sh, &mut out).unwrap();
        for b in 0..batches { for oc in 0..od {
            let mut acc: i64 = (0..n).map(|d| (w[oc * n + d] as i64 + f_off as i64)
                * (input[b * n + d] as i64 - zp_in as i64)).sum();
            if p.shape.has_bias { acc += bias[oc] as i64; }
            let c = if per_channel { oc } else { 0 };
            let v = (requant(acc, m[c], sh[c]) - 7).clamp(-100, 120);
            prop_assert_eq!(out[b * od + oc] as i64, v);
        }}
    }

    #[test]
    fn pools_match_formula(
        ih in 1usize..8, iw in 1usize..8, d in 1usize..3, f in 1usize..4,
        stride in 1usize..3, same: bool, seed: u64,
    ) {
        let padding = if same { Padding::Same } else { Padding::Valid };
        let pv = compute_padding_height_width(stride as i32, stride as i32, 1, 1,
            ih as i32, iw as i32, f as i32, f as i32, padding);
        prop_assume!(pv.out_height > 0 && pv.out_width > 0);
        let (oh, ow) = (pv.out_height as usize, pv.out_width as usize);
        let shape = Pool2dShape { batches: 1, input_height: ih, input_width: iw, depth: d,
            output_height: oh, output_width: ow, filter_height: f, filter_width: f,
            stride_height: stride, stride_width: stride,
            pad_height: pv.height as usize, pad_width: pv.width as usize };
        let avg = AveragePool2dS8 { shape, act_min: -128, act_max: 127 };
        let max = MaxPool2dS8 { shape, act_min: -50, act_max: 127 };
        round_trip(&avg);
        round_trip(&max);
        let mut s = seed;
        let input = data(ih * iw * d, &mut s);
        let (mut a, mut m) = (vec![0i8; oh * ow * d], vec![0i8; oh * ow * d]);
        avg.run(&input, &mut a).unwrap();
        max.run(&input, &mut m).unwrap();
        for oy in 0..oh { for ox in 0..ow { for c in 0..d {
            let (mut sum, mut cnt, mut mx) = (0i64, 0i64, -128i64);
            for fy in 0..f { for fx in 0..f {
                let y = (oy * stride + fy) as i64 - pv.height as i64;
                let x = (ox * stride + fx) as i64 - pv.width as i64;
                if y >= 0 && x >= 0 && y < ih as i64 && x < iw as i64 {
                    let v = input[(y as usize * iw + x as usize) * d + c] as i64;
                    sum += v; cnt += 1; mx = mx.max(v);
                }
            }}
            let q = (2 * sum.abs() + cnt) / (2 * cnt) * sum.signum();
            prop_assert_eq!(a[(oy * ow + ox) * d + c] as i64, q);
            prop_assert_eq!(m[(oy * ow + ox) * d + c] as i64, mx.max(-50));
        }}}
    }

    #[test]
    fn add_and_mul_s8_match_formula(
        dims in proptest::collection::vec(1usize..4, 1..5), mask1 in 0u32..16,
        mask2 in 0u32..16, s1 in 0.01f32..0.2, s2 in 0.01f32..0.2, so in 0.01f32..0.3,
        z1 in -128i32..128, z2 in -128i32..128, zo in -128i32..128, act in 0u8..4,
        seed: u64,
    ) {
        let d1: Vec<usize> = dims.iter().enumerate()
            .map(|(i, &d)| if mask1 & (1 << i) != 0 { 1 } else { d }).collect();
        let d2: Vec<usize> = dims.iter().enumerate()
            .map(|(i, &d)| if mask2 & (1 << i) != 0 { 1 } else { d }).collect();
        let shape = BroadcastShape::new(&d1, &d2).unwrap();
        let act = Activation::from_code(act).unwrap();
        let add = AddS8::from_quantization(shape, (s1, z1), (s2, z2), (so, zo), act).unwrap();
        let mul = MulS8::from_quantization(shape, (s1, z1), (s2, z2), (so, zo), act).unwrap();
        round_trip(&add);
        round_trip(&mul);
        let mut s = seed;
        let a = data(d1.iter().product(), &mut s);
        let b = data(d2.iter().product(), &mut s);
        let n: usize = shape.output().iter().product();
        let (mut oa, mut om) = (vec![0i8; n], vec![0i8; n]);
        add.run(&a, &b, &mut oa).unwrap();
        mul.run(&a, &b, &mut om).unwrap();
        let out = shape.output();
        for o in 0..n {
            // Unflatten, then index each input with its broadcast dimensions.
            let (mut rem, mut ia, mut ib, mut sa, mut sb) = (o, 0, 0, 1, 1);
            for k in (0..6).rev() {
                let c = rem % out[k];
                rem /= out[k];
                if shape.input1[k] != 1 { ia += c * sa; }
                if shape.input2[k] != 1 { ib += c * sb; }
                sa *= shape.input1[k];
                sb *= shape.input2[k];
            }
            let (x, y) = (a[ia] as i64 - z1 as i64, b[ib] as i64 - z2 as i64);
            let sum = requant(x << 20, add.input1_multiplier, add.input1_shift)
                + requant(y << 20, add.input2_multiplier, add.input2_shift);
            let va = (requant(sum, add.output_multiplier, add.output_shift) + zo as i64)
                .clamp(add.act_min as i64, add.act_max as i64);
            prop_assert_eq!(oa[o] as i64, va);
            let vm = (requant(x * y, mul.output_multiplier, mul.output_shift) + zo as i64)
                .clamp(mul.act_min as i64, mul.act_max as i64);
            prop_assert_eq!(om[o] as i64, vm);
        }
    }

    #[test]
    fn mean_s8_matches_formula(
        dims in proptest::collection::vec(1usize..5, 1..5), axes in 0u32..16,
        zi in -128i32..128, zo in -128i32..128, si in 0.01f32..0.2, so in 0.01f32..0.2,
        seed: u64,
    ) {
        let axis: Vec<i32> = (0..dims.len() as i32).filter(|a| axes & (1 << a) != 0).collect();
        let shape = MeanShape::new(&dims, &axis).unwrap();
        let (multiplier, shift) = MeanS8::multiplier(si, so);
        let p = MeanS8 { shape, input_zero_point: zi, output_zero_point: zo, multiplier, shift };
        round_trip(&p);
        let mut s = seed;
        let input = data(dims.iter().product(), &mut s);
        let mut out = vec![0i8; shape.output_len()];
        p.run(&input, &mut out).unwrap();
        // Sums per output, the output indexed by the kept coordinates in order.
        let mut sums = vec![0i64; shape.output_len()];
        for (i, &v) in input.iter().enumerate() {
            let (mut rem, mut o, mut so_) = (i, 0, 1);
            for k in (0..dims.len()).rev() {
                let c = rem % dims[k];
                rem /= dims[k];
                if axes & (1 << k) == 0 { o += c * so_; so_ *= dims[k]; }
            }
            sums[o] += v as i64;
        }
        let n = shape.count() as i64;
        let mut lg = 0;
        while (2i64 << lg) <= n { lg += 1; }
        let k = lg.min(32).min(31 + shift);
        let m = ((multiplier as i64) << k) / n;
        for (o, &sum) in sums.iter().enumerate() {
            let v = (requant(sum - zi as i64 * n, m as i32, shift - k) + zo as i64).clamp(-128, 127);
            prop_assert_eq!(out[o] as i64, v);
        }
    }

    #[test]
    fn transpose_matches_index_map(
        dims in proptest::collection::vec(1usize..4, 1..6), rot in 0usize..6, seed: u64,
    ) {
        let r = dims.len();
        let perm: Vec<i32> = (0..r).map(|i| ((i + rot) % r) as i32).rev().collect();
        let t = Transpose::new(2, &dims, &perm).unwrap();
        round_trip(&t);
        let mut s = seed;
        let n: usize = dims.iter().product();
        let input: Vec<u8> = data(n * 2, &mut s).iter().map(|&v| v as u8).collect();
        let mut out = vec![0u8; n * 2];
        t.run(&input, &mut out).unwrap();
        let od: Vec<usize> = perm.iter().map(|&p| dims[p as usize]).collect();
        for o in 0..n {
            let mut rem = o;
            let mut coord = vec![0; r];
            for k in (0..r).rev() { coord[k] = rem % od[k]; rem /= od[k]; }
            let mut i = 0;
            let mut in_coord = vec![0; r];
            for k in 0..r { in_coord[perm[k] as usize] = coord[k]; }
            for k in 0..r { i = i * dims[k] + in_coord[k]; }
            prop_assert_eq!(&out[o * 2..o * 2 + 2], &input[i * 2..i * 2 + 2]);
        }
    }
}

#[test]
fn conv_hand_computed() {
    // 1x3x3x1 input 1..9, 2x2 filter of ones, VALID, stride 1, multiplier 0.5, zero points 0.
    let p = Conv2dS8 {
        shape: Conv2dShape {
            batches: 1,
            input_height: 3,
            input_width: 3,
            input_depth: 1,
            filter_height: 2,
            filter_width: 2,
            filter_depth: 1,
            output_height: 2,
            output_width: 2,
            output_depth: 1,
            window: Window {
                stride_height: 1,
                stride_width: 1,
                dilation_height: 1,
                dilation_width: 1,
                pad_height: 0,
                pad_width: 0,
            },
            has_bias: false,
        },
        filter_hwio: false,
        input_offset: 0,
        output_offset: 0,
        act_min: -128,
        act_max: 127,
    };
    let input: Vec<i8> = (1..=9).collect();
    let mut out = [0i8; 4];
    p.run(&input, &[1; 4], &[], &[1 << 30], &[0], &mut out)
        .unwrap();
    // Sums 12, 16, 24, 28, halved.
    assert_eq!(out, [6, 8, 12, 14]);
    // The same in float, with a bias and RELU6.
    let f = Conv2dF32 {
        shape: Conv2dShape {
            has_bias: true,
            ..p.shape
        },
        filter_hwio: false,
        act_min: 0.0,
        act_max: 6.0,
    };
    round_trip(&f);
    let input: Vec<f32> = (1..=9).map(|v| v as f32 * 0.25).collect();
    let mut out = [0f32; 4];
    f.run(&input, &[1.0; 4], &[-1.0], &mut out).unwrap();
    assert_eq!(out, [2.0, 3.0, 5.0, 6.0]);
    // A shift outside -31..=30 in the binding is refused at run time.
    let mut o = [0i8; 4];
    assert!(p
        .run(
            &(1..=9).collect::<Vec<i8>>(),
            &[1; 4],
            &[],
            &[1 << 30],
            &[31],
            &mut o
        )
        .is_err());
}

#[test]
fn decode_refuses_nonsense() {
    let mut words = Vec::new();
    Conv2dS8 {
        shape: Conv2dShape {
            batches: 1,
            input_height: 3,
            input_width: 3,
            input_depth: 4,
            filter_height: 2,
            filter_width: 2,
            filter_depth: 2,
            output_height: 2,
            output_width: 2,
            output_depth: 2,
            window: Window {
                stride_height: 1,
                stride_width: 1,
                dilation_height: 1,
                dilation_width: 1,
                pad_height: 0,
                pad_width: 0,
            },
            has_bias: false,
        },
        filter_hwio: false,
        input_offset: 0,
        output_offset: 0,
        act_min: -128,
        act_max: 127,
    }
    .encode(&mut words);
    assert!(Conv2dS8::decode(&mut Words::new(&words)).is_ok());
    let bad = |i: usize, v: u32| {
        let mut w = words.clone();
        w[i] = v;
        Conv2dS8::decode(&mut Words::new(&w)).is_err()
    };
    assert!(bad(0, 0)); // zero batches
    assert!(bad(10, 0)); // zero stride
    assert!(bad(12, 0)); // zero dilation
    assert!(bad(6, 3)); // input depth 4 not a multiple of filter depth 3
    assert!(bad(1, u32::MAX)); // dimension above i32::MAX
    let mut w = words.clone();
    (w[0], w[1]) = (1 << 16, 1 << 16); // element count overflows
    assert!(Conv2dS8::decode(&mut Words::new(&w)).is_err());
    assert!(bad(16, 2)); // has_bias neither 0 nor 1
    let mut w = words.clone();
    (w[19], w[20]) = (100, 50); // act_min above act_max
    assert!(Conv2dS8::decode(&mut Words::new(&w)).is_err());
    assert!(bad(20, 300)); // act_max beyond int8
    assert!(bad(21, 2)); // filter_hwio neither 0 nor 1
    assert!(bad(21, 1)); // HWIO with groups (filter depth 2 of input depth 4)
                         // Transpose: not a permutation; strided slice: zero stride.
    assert!(Transpose::new(1, &[2, 3], &[0, 0]).is_err());
    assert!(StridedSlice::resolve(1, &[4], &[0], &[4], &[0], 0, 0, 0).is_err());
    // Average pooling whose window misses the input.
    let mut w = Vec::new();
    AveragePool2dS8 {
        shape: Pool2dShape {
            batches: 1,
            input_height: 2,
            input_width: 2,
            depth: 1,
            output_height: 4,
            output_width: 1,
            filter_height: 1,
            filter_width: 1,
            stride_height: 1,
            stride_width: 1,
            pad_height: 0,
            pad_width: 0,
        },
        act_min: -128,
        act_max: 127,
    }
    .encode(&mut w);
    assert!(AveragePool2dS8::decode(&mut Words::new(&w)).is_err());
}

#[test]
fn average_pool_rounds_half_away_and_counts_valid_cells() {
    // SAME 2x2 window, stride 2 on 3x3: the right column and bottom row windows hold 2
    // and 1 cells.
    let p = AveragePool2dS8 {
        shape: Pool2dShape {
            batches: 1,
            input_height: 3,
            input_width: 3,
            depth: 1,
            output_height: 2,
            output_width: 2,
            filter_height: 2,
            filter_width: 2,
            stride_height: 2,
            stride_width: 2,
            pad_height: 0,
            pad_width: 0,
        },
        act_min: -128,
        act_max: 127,
    };
    let input = [1i8, 2, -3, 1, 1, -4, 5, -6, -7];
    let mut out = [0i8; 4];
    p.run(&input, &mut out).unwrap();
    // (1+2+1+1)/4 = 1.25 → 1; (-3-4)/2 = -3.5 → -4; (5-6)/2 = -0.5 → -1; -7.
    assert_eq!(out, [1, -4, -1, -7]);
}

#[test]
fn movement_ops() {
    // PAD: [2,2] bytes, pad 1 before each dimension, 0 after on rows, 1 after on columns.
    let p = Pad::new(1, 9, &[2, 2], &[[1, 0], [1, 1]]).unwrap();
    round_trip(&p);
    let mut out = [0u8; 12];
    p.run(&[1, 2, 3, 4], &mut out).unwrap();
    assert_eq!(out, [9, 9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9]);
    // CONCATENATION on axis 1 of [2,1] and [2,2] (2-byte elements).
    let c = Concatenation::new(2, &[2, 3], &[1, 2], -1).unwrap();
    round_trip(&c);
    let a: Vec<u8> = vec![1, 0, 2, 0];
    let b: Vec<u8> = vec![3, 0, 4, 0, 5, 0, 6, 0];
    let mut out = [0u8; 12];
    c.run(&[&a, &b], &mut out).unwrap();
    assert_eq!(out, [1, 0, 3, 0, 4, 0, 2, 0, 5, 0, 6, 0]);
    // The output is the last binding: one more is refused, one fewer is missing.
    assert_eq!(c.check(&[4, 8, 12]), Ok(()));
    assert!(matches!(
        c.check(&[4, 8, 12, 12]),
        Err(KernelError::Shape(_))
    ));
    assert_eq!(
        c.check(&[4, 8]),
        Err(KernelError::MissingBinding { index: 2, bound: 2 })
    );
    // STRIDED_SLICE: [3,4] input, rows reversed from -1 (end masked), every other column
    // from 1; then a shrink on axis 0 at row 1.
    let input: Vec<u8> = (0..12).collect();
    let s = StridedSlice::resolve(1, &[3, 4], &[-1, 1], &[0, 4], &[-1, 2], 0b00, 0b01, 0).unwrap();
    round_trip(&s);
    let mut out = vec![0u8; s.output_len()];
    s.run(&input, &mut out).unwrap();
    assert_eq!(out, [9, 11, 5, 7, 1, 3]);
    let s = StridedSlice::resolve(1, &[3, 4], &[1, 0], &[2, 4], &[1, 1], 0, 0, 0b01).unwrap();
    let mut out = vec![0u8; s.output_len()];
    s.run(&input, &mut out).unwrap();
    assert_eq!(out, [4, 5, 6, 7]);
    // TFLM's quirk: a shrunk axis with a negative stride visits nothing.
    let s = StridedSlice::resolve(1, &[3, 4], &[1, 0], &[2, 4], &[-1, 1], 0, 0, 0b01).unwrap();
    assert_eq!(s.output_len(), 0);
}

#[test]
fn float_add_and_mean() {
    let shape = BroadcastShape::new(&[2, 1], &[3]).unwrap();
    let p = AddF32::new(shape, f32::MIN, 2.5);
    round_trip(&p);
    let mut out = [0f32; 6];
    p.run(&[1.0, 2.0], &[0.0, 0.5, 1.0], &mut out).unwrap();
    assert_eq!(out, [1.0, 1.5, 2.0, 2.0, 2.5, 2.5]);
    let m = MeanF32 {
        shape: MeanShape::new(&[1, 2, 2, 2], &[1, -2, 1]).unwrap(),
    };
    round_trip(&m);
    let mut out = [0f32; 2];
    m.run(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &mut out)
        .unwrap();
    assert_eq!(out, [4.0, 5.0]);
}

/// A float convolution over an HWIO filter gives the same bits as over OHWI: each output
/// sums its products in the same order.
#[test]
fn conv_f32_hwio_matches_ohwi_bit_for_bit() {
    let (ih, iw, id, fh, fw, od) = (5, 4, 3, 3, 2, 5);
    let shape = Conv2dShape {
        batches: 1,
        input_height: ih,
        input_width: iw,
        input_depth: id,
        filter_height: fh,
        filter_width: fw,
        filter_depth: id,
        output_height: ih,
        output_width: iw,
        output_depth: od,
        window: Window {
            stride_height: 1,
            stride_width: 1,
            dilation_height: 1,
            dilation_width: 1,
            pad_height: 1,
            pad_width: 0,
        },
        has_bias: true,
    };
    let mut seed = 7;
    let mut values = |n: usize| -> Vec<f32> {
        data(n, &mut seed)
            .into_iter()
            .map(|v| f32::from(v) * 0.013 + 0.001)
            .collect()
    };
    let input = values(ih * iw * id);
    let filter = values(od * fh * fw * id);
    let bias = values(od);
    let per_output = fh * fw * id;
    let mut hwio = vec![0.0f32; filter.len()];
    for (o, row) in filter.chunks_exact(per_output).enumerate() {
        for (t, &v) in row.iter().enumerate() {
            hwio[t * od + o] = v;
        }
    }
    let ohwi_conv = Conv2dF32 {
        shape,
        filter_hwio: false,
        act_min: f32::MIN,
        act_max: f32::MAX,
    };
    let hwio_conv = Conv2dF32 {
        filter_hwio: true,
        ..ohwi_conv
    };
    round_trip(&hwio_conv);
    let mut a = vec![0.0f32; ih * iw * od];
    let mut b = a.clone();
    ohwi_conv.run(&input, &filter, &bias, &mut a).unwrap();
    hwio_conv.run(&input, &hwio, &bias, &mut b).unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
}

/// Channel blocks and HWIO output blocks of 64, crossed: more channels than a block, a
/// multiplier that leaves one input channel per block, and one too large for a block (the
/// unblocked loops).
#[test]
fn blocks_cross_their_boundaries() {
    for (id, mult) in [(70, 1), (2, 33), (1, 65), (3, 40)] {
        for seed in 0..3 {
            depthwise_case(5, 4, id, mult, 3, 2, 1, 1, true, -5, seed);
            depthwise_case(6, 5, id, mult, 2, 3, 2, 1, false, 100, seed + 7);
        }
    }
    for (fd, per_group) in [(1, 70), (3, 130), (5, 64)] {
        for seed in 0..3 {
            conv_case(
                1,
                5,
                4,
                fd,
                1,
                per_group,
                3,
                2,
                1,
                1,
                true,
                -9,
                4,
                Activation::Relu,
                seed,
            );
        }
    }
}
