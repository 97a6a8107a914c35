//! Small models built from scratch, run on the local device: lowerings that differ by
//! target (or fuse ops) give the same outputs, and corners the per-op oracle found run.

#[path = "../../ember-import/tests/common/mod.rs"]
mod common;

use common::Synth;
use ember_import::tflite::{self, BuiltinOperator as B, BuiltinOptions as O, TensorType};
use ember_import::{Graph, LowerOptions};

/// A negative stride down to index 0 inclusive (the importer resolves its end to -1) runs,
/// reversing the input: the per-op oracle's models found the lowering refused it.
#[test]
fn strided_slice_down_to_index_zero_runs() {
    let mut s = Synth::new();
    let x = s.i8(&[2, 3]);
    let b = s.i32s(&[2], &[1, 2]);
    let e = s.i32s(&[2], &[-3, -4]);
    let st = s.i32s(&[2], &[-1, -1]);
    let y = s.i8(&[2, 3]);
    s.op(
        B::StridedSlice,
        Some(O::StridedSliceOptions(Box::default())),
        &[x, b, e, st],
        &[y],
    );
    let bytes = s.build(&[x], &[y]);
    let graph = Graph::parse(&bytes).unwrap();
    let lowered = ember_import::lower(&graph, "slice").unwrap();
    let out = ember_run::run_local(&lowered, &[&[0, 1, 2, 3, 4, 5]], 1, 1).unwrap();
    assert_eq!(out.outputs, [vec![5, 4, 3, 2, 1, 0]]);
}

#[test]
fn int8_conv_filter_layout_follows_the_target() {
    let mut s = Synth::new();
    let x = s.tensor(TensorType::Int8, &[1, 5, 5, 3], Some((0.5, 7)));
    let filter = (0..108).map(|i| (i * 37 % 251) as u8).collect();
    let w = s.constant(TensorType::Int8, &[4, 3, 3, 3], filter);
    let b = s.i32s(&[4], &[100, -200, 300, -400]);
    let y = s.tensor(TensorType::Int8, &[1, 5, 5, 4], Some((2.0, -3)));
    let options = O::Conv2DOptions(Box::new(tflite::Conv2DOptions {
        padding: tflite::Padding::Same,
        stride_w: 1,
        stride_h: 1,
        dilation_w_factor: 1,
        dilation_h_factor: 1,
        ..Default::default()
    }));
    s.op(B::Conv2d, Some(options), &[x, w, b], &[y]);
    let mut model = s.model(&[x], &[y]);
    common::tensor(&mut model, w as usize).quantization =
        Some(Box::new(tflite::QuantizationParameters {
            scale: Some(vec![0.01]),
            zero_point: Some(vec![0]),
            ..Default::default()
        }));
    common::tensor(&mut model, b as usize).quantization =
        Some(Box::new(tflite::QuantizationParameters {
            scale: Some(vec![0.005]),
            zero_point: Some(vec![0]),
            ..Default::default()
        }));
    let bytes = common::serialize(&model);
    let graph = Graph::parse(&bytes).unwrap();
    // The host's lowering transposes the filter to HWIO; a Cortex-M4's keeps OHWI.
    let host = ember_import::lower(&graph, "conv").unwrap();
    let m4 = LowerOptions::for_target("thumbv7em-none-eabihf");
    let dsp = ember_import::lower_with(&graph, "conv", m4).unwrap();
    assert_eq!(
        ember_import::lower_with(&graph, "conv", LowerOptions::default())
            .unwrap()
            .built
            .bytes,
        host.built.bytes
    );
    assert_ne!(dsp.built.bytes, host.built.bytes);
    let input: Vec<u8> = (0..75).map(|i| (i * 13 % 256) as u8).collect();
    let a = ember_run::run_local(&host, &[&input], 1, 1).unwrap();
    let b = ember_run::run_local(&dsp, &[&input], 1, 1).unwrap();
    assert_eq!(a.outputs, b.outputs);
    assert!(a.outputs[0].iter().any(|&v| v != a.outputs[0][0]));
}

#[test]
fn one_channel_int8_depthwise_runs_as_a_conv_on_dsp_targets() {
    let mut s = Synth::new();
    let x = s.tensor(TensorType::Int8, &[1, 6, 5, 1], Some((0.5, -9)));
    let filter = (0..36).map(|i| (i * 53 % 255) as u8).collect();
    let w = s.constant(TensorType::Int8, &[1, 3, 3, 4], filter);
    let b = s.i32s(&[4], &[50, -60, 70, -80]);
    let y = s.tensor(TensorType::Int8, &[1, 3, 3, 4], Some((1.5, 4)));
    let options = O::DepthwiseConv2DOptions(Box::new(tflite::DepthwiseConv2DOptions {
        padding: tflite::Padding::Same,
        stride_w: 2,
        stride_h: 2,
        depth_multiplier: 4,
        dilation_w_factor: 1,
        dilation_h_factor: 1,
        ..Default::default()
    }));
    s.op(B::DepthwiseConv2d, Some(options), &[x, w, b], &[y]);
    let mut model = s.model(&[x], &[y]);
    common::tensor(&mut model, w as usize).quantization =
        Some(Box::new(tflite::QuantizationParameters {
            scale: Some(vec![0.01, 0.02, 0.03, 0.04]),
            zero_point: Some(vec![0; 4]),
            quantized_dimension: 3,
            ..Default::default()
        }));
    let bytes = common::serialize(&model);
    let graph = Graph::parse(&bytes).unwrap();
    let host = ember_import::lower(&graph, "dw").unwrap();
    let m4 = LowerOptions::for_target("thumbv7em-none-eabihf");
    let dsp = ember_import::lower_with(&graph, "dw", m4).unwrap();
    let kernels = |l: &ember_import::Lowered| {
        let module = hal_core::module::Module::parse(&l.built.bytes).unwrap();
        let names: Vec<String> = module
            .executables()
            .iter()
            .map(|e| e.kernel.to_string())
            .collect();
        names
    };
    assert_eq!(kernels(&host), ["depthwise_conv2d_s8"]);
    assert_eq!(kernels(&dsp), ["conv2d_s8"]);
    for seed in 0..4u8 {
        let input: Vec<u8> = (0..30u8)
            .map(|i| i.wrapping_mul(97).wrapping_add(seed.wrapping_mul(31)))
            .collect();
        let a = ember_run::run_local(&host, &[&input], 1, 1).unwrap();
        let b = ember_run::run_local(&dsp, &[&input], 1, 1).unwrap();
        assert_eq!(a.outputs, b.outputs);
    }
}

/// A depthwise convolution (6 input channels, multiplier 2, 3×3, RELU6) then a 1×1
/// convolution to 10 channels with stride `stride`; the middle tensor is also a model output
/// where `middle_out`.
fn separable_model(stride: i32, middle_out: bool) -> Vec<u8> {
    let mut s = Synth::new();
    let x = s.tensor(TensorType::Int8, &[1, 6, 5, 6], Some((0.5, -9)));
    let dw = s.constant(
        TensorType::Int8,
        &[1, 3, 3, 12],
        (0..108).map(|i| (i * 53 % 255) as u8).collect(),
    );
    let db = s.i32s(&[12], &[50, -60, 70, -80, 90, -100, 5, 6, -7, 8, 9, 10]);
    let m = s.tensor(TensorType::Int8, &[1, 6, 5, 12], Some((0.25, -20)));
    let pw = s.constant(
        TensorType::Int8,
        &[10, 1, 1, 12],
        (0..120).map(|i| (i * 71 % 253) as u8).collect(),
    );
    let pb = s.i32s(&[10], &[300, -200, 100, 0, -100, 200, -300, 400, -500, 600]);
    let side = if stride == 1 { [6, 5] } else { [3, 3] };
    let y = s.tensor(
        TensorType::Int8,
        &[1, side[0], side[1], 10],
        Some((0.75, 3)),
    );
    let depthwise = O::DepthwiseConv2DOptions(Box::new(tflite::DepthwiseConv2DOptions {
        padding: tflite::Padding::Same,
        stride_w: 1,
        stride_h: 1,
        depth_multiplier: 2,
        dilation_w_factor: 1,
        dilation_h_factor: 1,
        fused_activation_function: tflite::ActivationFunctionType::Relu6,
    }));
    s.op(B::DepthwiseConv2d, Some(depthwise), &[x, dw, db], &[m]);
    let pointwise = O::Conv2DOptions(Box::new(tflite::Conv2DOptions {
        padding: tflite::Padding::Same,
        stride_w: stride,
        stride_h: stride,
        dilation_w_factor: 1,
        dilation_h_factor: 1,
        ..Default::default()
    }));
    s.op(B::Conv2d, Some(pointwise), &[m, pw, pb], &[y]);
    let outputs: &[i32] = if middle_out { &[y, m] } else { &[y] };
    let mut model = s.model(&[x], outputs);
    for (w, channels) in [(dw, 12usize), (pw, 10)] {
        common::tensor(&mut model, w as usize).quantization =
            Some(Box::new(tflite::QuantizationParameters {
                scale: Some((0..channels).map(|c| 0.01 + 0.002 * c as f32).collect()),
                zero_point: Some(vec![0; channels]),
                quantized_dimension: if w == dw { 3 } else { 0 },
                ..Default::default()
            }));
    }
    common::serialize(&model)
}

#[test]
fn separable_pairs_fuse_for_a_gpu() {
    let kernels = |l: &ember_import::Lowered| -> Vec<String> {
        let module = hal_core::module::Module::parse(&l.built.bytes).unwrap();
        module
            .executables()
            .iter()
            .map(|e| e.kernel.to_string())
            .collect()
    };
    for (stride, middle_out, fused) in [(1, false, true), (1, true, false), (2, false, false)] {
        let bytes = separable_model(stride, middle_out);
        let graph = Graph::parse(&bytes).unwrap();
        let host = ember_import::lower(&graph, "sep").unwrap();
        let gpu = ember_import::lower_with(&graph, "sep", LowerOptions::for_gpu()).unwrap();
        assert_eq!(kernels(&host), ["depthwise_conv2d_s8", "conv2d_s8"]);
        let want: &[&str] = if fused {
            &["separable_conv2d_s8"]
        } else {
            &["depthwise_conv2d_s8", "conv2d_s8"]
        };
        assert_eq!(
            kernels(&gpu),
            want,
            "stride {stride}, middle out {middle_out}"
        );
        for seed in 0..4u8 {
            let input: Vec<u8> = (0..180u8)
                .map(|i| i.wrapping_mul(97).wrapping_add(seed.wrapping_mul(31)))
                .collect();
            let a = ember_run::run_local(&host, &[&input], 1, 1).unwrap();
            let b = ember_run::run_local(&gpu, &[&input], 1, 1).unwrap();
            assert_eq!(a.outputs, b.outputs);
            assert!(a.outputs[0].iter().any(|&v| v != a.outputs[0][0]));
        }
    }
}

/// A model of 200 layers lowers to a function of 199 transients, more than module
/// validation holds at once, and runs: the importer's module is one its own validator
/// accepts, whatever the model's size.
#[test]
fn a_model_of_two_hundred_layers_runs() {
    let f32_bytes =
        |values: &[f32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let mut s = Synth::new();
    let one = s.constant(TensorType::Float32, &[1, 4], f32_bytes(&[1.0; 4]));
    let x = s.f32(&[1, 4]);
    let mut value = x;
    for _ in 0..200 {
        let y = s.f32(&[1, 4]);
        s.op(
            B::Add,
            Some(O::AddOptions(Box::default())),
            &[value, one],
            &[y],
        );
        value = y;
    }
    let bytes = s.build(&[x], &[value]);
    let graph = Graph::parse(&bytes).unwrap();
    let lowered = ember_import::lower(&graph, "chain").unwrap();
    let transients = lowered.built.plans.first().map_or(0, |p| p.offsets.len());
    assert!(transients > 64, "{transients} transients");
    let input = f32_bytes(&[0.5, -3.0, 10.0, 0.0]);
    let out = ember_run::run_local(&lowered, &[&input], 1, 1).unwrap();
    assert_eq!(out.outputs, [f32_bytes(&[200.5, 197.0, 210.0, 200.0])]);
}

/// A model whose constants fill 5.6 MB (eight float FULLY_CONNECTED layers of 420 × 420
/// weights, bias and ReLU, whose weights loading packs into device memory) loads and runs
/// on a local device sized from its plan and its constants, each output the bits of the
/// reference's sums in TFLM's order.
#[test]
fn a_model_of_megabytes_of_constants_runs() {
    const WIDTH: usize = 420;
    const LAYERS: usize = 8;
    let f32_bytes =
        |values: &[f32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let weight = |layer: usize, i: usize| ((i * 37 + layer * 11) % 251) as f32 / 4096.0 - 0.03;
    let mut s = Synth::new();
    let x = s.f32(&[1, WIDTH as i32]);
    let mut value = x;
    for layer in 0..LAYERS {
        let weights: Vec<f32> = (0..WIDTH * WIDTH).map(|i| weight(layer, i)).collect();
        let w = s.constant(
            TensorType::Float32,
            &[WIDTH as i32, WIDTH as i32],
            f32_bytes(&weights),
        );
        let b = s.f32_zeros(&[WIDTH as i32]);
        let y = s.f32(&[1, WIDTH as i32]);
        let options = O::FullyConnectedOptions(Box::new(tflite::FullyConnectedOptions {
            fused_activation_function: tflite::ActivationFunctionType::Relu,
            ..Default::default()
        }));
        s.op(B::FullyConnected, Some(options), &[value, w, b], &[y]);
        value = y;
    }
    let bytes = s.build(&[x], &[value]);
    let graph = Graph::parse(&bytes).unwrap();
    let lowered = ember_import::lower(&graph, "wide").unwrap();
    assert!(
        lowered.constant_bytes > 5_000_000,
        "{}",
        lowered.constant_bytes
    );
    let input: Vec<f32> = (0..WIDTH).map(|i| (i % 17) as f32 / 8.0).collect();
    // TFLM's reference: each output's products summed in input order, then the bias
    // and the clamp.
    let mut expected = input.clone();
    for layer in 0..LAYERS {
        expected = (0..WIDTH)
            .map(|o| {
                let mut total = 0.0f32;
                for (i, &x) in expected.iter().enumerate() {
                    total += x * weight(layer, o * WIDTH + i);
                }
                (total + 0.0).max(0.0)
            })
            .collect();
    }
    assert!(expected.iter().any(|&v| v > 0.0));
    let out = ember_run::run_local(&lowered, &[&f32_bytes(&input)], 1, 1).unwrap();
    assert_eq!(out.outputs, [f32_bytes(&expected)]);
}
