//! `separable_conv2d_s8` on the Vulkan driver against the local driver, on random shapes
//! the reference models do not reach: middle and output depths that are not multiples of 4
//! (tiles whose words straddle pixels), depth multipliers above 1, up to the most middle
//! channels (tiles over a chunk of the output channels), padding, strides and dilations, an
//! output at an offset inside its buffer with bytes around it that must be kept. Each case is
//! a one-step module: fill the result, then the dispatch into a slice of it. The validation
//! layer is on unless `EMBER_VULKAN_VALIDATION=0`.

mod common;

use common::Rng;
use ember_import::{ElementType, Lowered, TensorInfo, FUNCTION};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use ember_kernels::padding::Window;
use ember_kernels::separable_conv2d::{SeparableConv2dS8, MAX_MIDDLE_DEPTH};
use ember_kernels::KernelParams;
use hal_core::module::ModuleBuilder;

fn i32_bytes(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
    values.into_iter().flat_map(i32::to_le_bytes).collect()
}

/// Bytes kept on each side of the output inside the result.
const AROUND: usize = 4;

/// A random case as a one-step module: the parameters and the input's bytes.
fn case(rng: &mut Rng, wide: bool) -> (SeparableConv2dS8, Lowered, Vec<u8>) {
    let (ih, iw) = (1 + rng.below(12), 1 + rng.below(12));
    let (fh, fw) = (1 + rng.below(3), 1 + rng.below(3));
    let window = Window {
        stride_height: 1 + rng.below(2),
        stride_width: 1 + rng.below(2),
        dilation_height: 1 + rng.below(2),
        dilation_width: 1 + rng.below(2),
        pad_height: rng.below(2),
        pad_width: rng.below(2),
    };
    let out = |i: usize, f: usize, s: usize, d: usize, p: usize| {
        (i + 2 * p).saturating_sub(d * (f - 1) + 1) / s + 1
    };
    let (input_depth, depth_multiplier) = if wide {
        // Up to the most middle channels, the output depth chunked.
        (MAX_MIDDLE_DEPTH / (1 + rng.below(4)) - rng.below(3), 1)
    } else {
        (1 + rng.below(24), 1 + rng.below(3))
    };
    let shape = DepthwiseConv2dShape {
        batches: 1 + rng.below(2),
        input_height: ih,
        input_width: iw,
        input_depth,
        depth_multiplier,
        filter_height: fh,
        filter_width: fw,
        output_height: out(
            ih,
            fh,
            window.stride_height,
            window.dilation_height,
            window.pad_height,
        ),
        output_width: out(
            iw,
            fw,
            window.stride_width,
            window.dilation_width,
            window.pad_width,
        ),
        window,
        has_bias: rng.below(2) == 0,
    };
    let output_depth = if wide && rng.below(2) == 0 {
        // Tiles that hold the most pixels past their own.
        1 + rng.below(3)
    } else if wide {
        64 + rng.below(300)
    } else {
        1 + rng.below(40)
    };
    let p = SeparableConv2dS8 {
        depthwise: DepthwiseConv2dS8 {
            shape,
            input_offset: rng.below(256) as i32 - 127,
            output_offset: rng.below(256) as i32 - 128,
            act_min: -128 + rng.below(20) as i32,
            act_max: 127 - rng.below(20) as i32,
        },
        output_depth,
        input_offset: rng.below(256) as i32 - 127,
        output_offset: rng.below(256) as i32 - 128,
        act_min: -128 + rng.below(20) as i32,
        act_max: 127 - rng.below(20) as i32,
    };
    let middle = p.middle_depth().expect("middle");
    let od = p.output_depth;
    let out_len = p.output_len().expect("output");
    let in_len = shape.input_len().expect("input");
    let stage = |rng: &mut Rng, n: usize, taps: usize| {
        // Shifts that keep the outputs off the clamps for typical sums.
        let shift = -(((taps * 255 * 128) as f64).log2() as i32) + 7;
        let mut v: Vec<i32> = (0..n).map(|_| rng.below(4001) as i32 - 2000).collect();
        v.extend((0..n).map(|_| (1 << 30) + (rng.next() % (1 << 30)) as i32));
        v.extend((0..n).map(|_| shift - rng.below(3) as i32));
        v
    };
    let first = stage(rng, middle, fh * fw);
    let second = stage(rng, od, middle);

    let result_len = (out_len + 2 * AROUND).next_multiple_of(4);
    let mut b = ModuleBuilder::new("separable");
    let f = b.function(FUNCTION, &[in_len as u64], &[result_len as u64]);
    let exe = b.executable(SeparableConv2dS8::KERNEL);
    let bindings = [
        b.argument(f, 0),
        b.constant("depthwise", &rng.bytes(shape.filter_len().expect("filter"))),
        b.constant("pointwise", &rng.bytes(od * middle)),
        b.constant("first", &i32_bytes(first)),
        b.constant("second", &i32_bytes(second)),
        b.result(f, 0).slice(AROUND as u64, out_len as u64),
    ];
    b.fill(f, b.result(f, 0), 0xa5c3_5a3c);
    b.barrier(f);
    let mut words = Vec::new();
    p.encode(&mut words);
    b.dispatch(f, exe, [1, 1, 1], &words, &bindings);
    let info = |n: usize| TensorInfo {
        name: "t".into(),
        element_type: ElementType::Int8,
        shape: vec![n],
        quantization: None,
    };
    let lowered = Lowered {
        built: b.finish().expect("a valid module"),
        inputs: vec![info(in_len)],
        outputs: vec![info(result_len)],
        constant_bytes: 0,
    };
    (p, lowered, rng.bytes(in_len))
}

#[test]
fn separable_matches_the_local_driver() {
    let _turn = common::alone();
    let mut device = common::device();
    let mut rng = Rng(0x5e9a_7ab1e);
    let mut distinct = [false; 256];
    for n in 0..60 {
        let (p, lowered, input) = case(&mut rng, n % 4 == 3);
        let what = format!("case {n} {p:?}");
        let (want, got) = common::first_result_on_both(&mut device, &lowered, &[&input], &what);
        common::assert_same_bytes(&got, &want, &what);
        // The fill's bytes around the output are kept.
        assert_eq!(&want[..AROUND], &[0x3c, 0x5a, 0xc3, 0xa5]);
        for &v in &want[AROUND..want.len() - AROUND] {
            distinct[usize::from(v)] = true;
        }
    }
    // The cases reach most int8 values, not only the clamps.
    assert!(distinct.iter().filter(|&&d| d).count() > 200);
}
