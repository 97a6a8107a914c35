//! The operators the reference models do not exercise (and option corners of those they
//! do), on small models built from scratch: what each accepts, and what it refuses.

mod common;

use common::Synth;
use ember_import::tflite::{self, BuiltinOperator as B, BuiltinOptions as O, TensorType};
use ember_import::{
    Activation, Graph, ImportError, LowerOptions, OpKind, Padding, DEFAULT_ALIGNMENT,
};

/// The one op of a parsed model, or the error.
fn parse_one(bytes: &[u8]) -> Result<OpKind, ImportError> {
    let graph = Graph::parse(bytes)?;
    let plan = graph.plan(DEFAULT_ALIGNMENT).expect("plans");
    common::check_plan(&graph, &plan);
    Ok(graph.ops().last().expect("an op").kind.clone())
}

fn concat(axis: i32, a: &[i32], b: &[i32], out: &[i32]) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let (x, y, z) = (s.f32(a), s.f32(b), s.f32(out));
    let options = O::ConcatenationOptions(Box::new(tflite::ConcatenationOptions {
        axis,
        ..Default::default()
    }));
    s.op(B::Concatenation, Some(options), &[x, y], &[z]);
    parse_one(&s.build(&[x, y], &[z]))
}

#[test]
fn concatenation() {
    assert_eq!(
        concat(1, &[1, 2, 3], &[1, 4, 3], &[1, 6, 3]).unwrap(),
        OpKind::Concatenation {
            axis: 1,
            activation: Activation::None
        }
    );
    assert!(matches!(
        concat(-2, &[1, 2, 3], &[1, 4, 3], &[1, 6, 3]).unwrap(),
        OpKind::Concatenation { axis: 1, .. }
    ));
    let e = concat(1, &[1, 2, 3], &[1, 4, 2], &[1, 6, 3]).unwrap_err();
    assert!(matches!(e, ImportError::OpShape { .. }), "{e}");
    let e = concat(1, &[1, 2, 3], &[1, 4, 3], &[1, 7, 3]).unwrap_err();
    assert!(e.to_string().contains("add up to 6 along axis 1"), "{e}");
    let e = concat(3, &[1, 2, 3], &[1, 4, 3], &[1, 6, 3]).unwrap_err();
    assert!(matches!(e, ImportError::BadOptions { .. }), "{e}");
}

fn pad(paddings: &[i32], out: &[i32], constant: bool) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let x = s.i8(&[1, 2, 2, 1]);
    let p = if constant {
        s.i32s(&[4, 2], paddings)
    } else {
        s.tensor(TensorType::Int32, &[4, 2], None)
    };
    let y = s.i8(out);
    s.op(B::Pad, None, &[x, p], &[y]);
    let inputs: &[i32] = if constant { &[x] } else { &[x, p] };
    parse_one(&s.build(inputs, &[y]))
}

#[test]
fn pad_op() {
    assert_eq!(
        pad(&[0, 0, 1, 1, 2, 2, 0, 0], &[1, 4, 6, 1], true).unwrap(),
        OpKind::Pad {
            paddings: vec![(0, 0), (1, 1), (2, 2), (0, 0)]
        }
    );
    let e = pad(&[0, 0, -1, 1, 2, 2, 0, 0], &[1, 2, 6, 1], true).unwrap_err();
    assert!(e.to_string().contains("negative padding"), "{e}");
    let e = pad(&[0, 0, 1, 1, 2, 2, 0, 0], &[1, 4, 5, 1], true).unwrap_err();
    assert!(matches!(e, ImportError::OpShape { .. }), "{e}");
    let e = pad(&[0; 8], &[1, 2, 2, 1], false).unwrap_err();
    assert!(e.to_string().contains("must be a constant"), "{e}");
}

fn mean(axes: &[i32], keep_dims: bool, out: &[i32]) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let x = s.f32(&[1, 4, 4, 8]);
    let a = s.i32s(&[axes.len() as i32], axes);
    let y = s.f32(out);
    let options = O::ReducerOptions(Box::new(tflite::ReducerOptions { keep_dims }));
    s.op(B::Mean, Some(options), &[x, a], &[y]);
    parse_one(&s.build(&[x], &[y]))
}

#[test]
fn mean_op() {
    assert_eq!(
        mean(&[1, 2], true, &[1, 1, 1, 8]).unwrap(),
        OpKind::Mean {
            axes: vec![1, 2],
            keep_dims: true
        }
    );
    assert_eq!(
        mean(&[-2, 1, 2], false, &[1, 8]).unwrap(),
        OpKind::Mean {
            axes: vec![1, 2],
            keep_dims: false
        }
    );
    assert!(matches!(
        mean(&[4], false, &[1, 4, 4, 8]).unwrap_err(),
        ImportError::OpShape { .. }
    ));
    assert!(matches!(
        mean(&[1, 2], false, &[1, 1, 1, 8]).unwrap_err(),
        ImportError::OpShape { .. }
    ));
}

fn transpose(perm: &[i32], out: &[i32]) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let x = s.i8(&[1, 2, 3]);
    let p = s.i32s(&[perm.len() as i32], perm);
    let y = s.i8(out);
    s.op(B::Transpose, None, &[x, p], &[y]);
    parse_one(&s.build(&[x], &[y]))
}

#[test]
fn transpose_op() {
    assert_eq!(
        transpose(&[0, 2, 1], &[1, 3, 2]).unwrap(),
        OpKind::Transpose {
            perm: vec![0, 2, 1]
        }
    );
    assert!(transpose(&[0, 0, 1], &[1, 1, 2]).is_err());
    assert!(transpose(&[0, 1], &[1, 2]).is_err());
    assert!(matches!(
        transpose(&[0, 2, 1], &[1, 2, 3]).unwrap_err(),
        ImportError::OpShape { .. }
    ));
}

fn slice(
    begin: &[i32],
    end: &[i32],
    strides: &[i32],
    options: tflite::StridedSliceOptions,
    out: &[i32],
) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let x = s.f32(&[1, 10, 4]);
    let b = s.i32s(&[3], begin);
    let e = s.i32s(&[3], end);
    let st = s.i32s(&[3], strides);
    let y = s.f32(out);
    s.op(
        B::StridedSlice,
        Some(O::StridedSliceOptions(Box::new(options))),
        &[x, b, e, st],
        &[y],
    );
    parse_one(&s.build(&[x], &[y]))
}

#[test]
fn strided_slice() {
    let none = tflite::StridedSliceOptions::default;
    let OpKind::StridedSlice(o) =
        slice(&[0, 2, 0], &[1, 8, 4], &[1, 2, 1], none(), &[1, 3, 4]).unwrap()
    else {
        panic!("STRIDED_SLICE");
    };
    assert_eq!(
        (o.begin, o.end, o.strides),
        (vec![0, 2, 0], vec![1, 8, 4], vec![1, 2, 1])
    );
    // Shrink dimension 0; masks make the others whole; negative indices count from the end.
    let masks = tflite::StridedSliceOptions {
        begin_mask: 0b100,
        end_mask: 0b100,
        shrink_axis_mask: 0b001,
        ..none()
    };
    slice(&[0, -3, 9], &[1, -1, 0], &[1, 1, 1], masks, &[2, 4]).unwrap();
    // A negative stride over the whole dimension, its end clamped.
    slice(&[0, -1, 0], &[1, -100, 4], &[1, -1, 1], none(), &[1, 10, 4]).unwrap();
    assert!(matches!(
        slice(&[0, 0, 0], &[1, 10, 4], &[1, 1, 1], none(), &[1, 9, 4]).unwrap_err(),
        ImportError::OpShape { .. }
    ));
    assert!(matches!(
        slice(&[0, 0, 0], &[1, 10, 4], &[1, 0, 1], none(), &[1, 10, 4]).unwrap_err(),
        ImportError::BadOptions { .. }
    ));
    let ellipsis = tflite::StridedSliceOptions {
        ellipsis_mask: 1,
        ..none()
    };
    assert!(matches!(
        slice(&[0, 0, 0], &[1, 10, 4], &[1, 1, 1], ellipsis, &[1, 10, 4]).unwrap_err(),
        ImportError::UnsupportedOption {
            option: "ellipsis_mask",
            ..
        }
    ));
}

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
    let out = ember_import::run_local(&lowered, &[&[0, 1, 2, 3, 4, 5]], 1, 1).unwrap();
    assert_eq!(out.outputs, [vec![5, 4, 3, 2, 1, 0]]);
}

#[test]
fn quantize_and_dequantize() {
    let mut s = Synth::new();
    let x = s.f32(&[1, 4]);
    let q = s.i8(&[1, 4]);
    let y = s.f32(&[1, 4]);
    s.op(B::Quantize, None, &[x], &[q]);
    s.op(B::Dequantize, None, &[q], &[y]);
    let bytes = s.build(&[x], &[y]);
    let graph = Graph::parse(&bytes).unwrap();
    let kinds: Vec<_> = graph.ops().iter().map(|o| o.kind.clone()).collect();
    assert_eq!(kinds, [OpKind::Quantize, OpKind::Dequantize]);

    // float16 weights widened to float32.
    let mut s = Synth::new();
    let h = s.constant(TensorType::Float16, &[2, 2], vec![0; 8]);
    let y = s.f32(&[2, 2]);
    s.op(B::Dequantize, None, &[h], &[y]);
    assert_eq!(parse_one(&s.build(&[], &[y])).unwrap(), OpKind::Dequantize);

    // QUANTIZE to float32 is no quantization.
    let mut s = Synth::new();
    let x = s.f32(&[1, 4]);
    let y = s.f32(&[1, 4]);
    s.op(B::Quantize, None, &[x], &[y]);
    assert!(matches!(
        parse_one(&s.build(&[x], &[y])).unwrap_err(),
        ImportError::OpType { .. }
    ));

    // An int8 activation without quantization parameters.
    let mut s = Synth::new();
    let x = s.f32(&[1, 4]);
    let y = s.tensor(TensorType::Int8, &[1, 4], None);
    s.op(B::Quantize, None, &[x], &[y]);
    assert!(matches!(
        parse_one(&s.build(&[x], &[y])).unwrap_err(),
        ImportError::OpType { .. }
    ));
}

#[test]
fn mul_broadcasts_and_unary_ops() {
    let mut s = Synth::new();
    let x = s.i8(&[1, 4, 4, 3]);
    let c = s.constant(TensorType::Int8, &[3], vec![1, 2, 3]);
    // The constant needs quantization like any int8 operand of MUL.
    let y = s.i8(&[1, 4, 4, 3]);
    s.op(B::Mul, None, &[x, c], &[y]);
    let mut model = s.model(&[x], &[y]);
    common::tensor(&mut model, c as usize).quantization =
        Some(Box::new(tflite::QuantizationParameters {
            scale: Some(vec![0.25]),
            zero_point: Some(vec![0]),
            ..Default::default()
        }));
    let bytes = common::serialize(&model);
    assert_eq!(
        parse_one(&bytes).unwrap(),
        OpKind::Mul {
            activation: Activation::None
        }
    );

    for code in [B::Logistic, B::Tanh] {
        let mut s = Synth::new();
        let x = s.f32(&[2, 3]);
        let y = s.f32(&[2, 3]);
        s.op(code, None, &[x], &[y]);
        parse_one(&s.build(&[x], &[y])).unwrap();
        let mut s = Synth::new();
        let x = s.f32(&[2, 3]);
        let y = s.f32(&[3, 2]);
        s.op(code, None, &[x], &[y]);
        assert!(matches!(
            parse_one(&s.build(&[x], &[y])).unwrap_err(),
            ImportError::OpShape { .. }
        ));
    }
}

fn pool(padding: tflite::Padding, stride: i32, out: &[i32]) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let x = s.f32(&[1, 4, 4, 1]);
    let y = s.f32(out);
    let options = O::Pool2DOptions(Box::new(tflite::Pool2DOptions {
        padding,
        stride_w: stride,
        stride_h: stride,
        filter_width: 2,
        filter_height: 2,
        ..Default::default()
    }));
    s.op(B::MaxPool2d, Some(options), &[x], &[y]);
    parse_one(&s.build(&[x], &[y]))
}

#[test]
fn pools_follow_padding_rules() {
    assert!(matches!(
        pool(tflite::Padding::Valid, 2, &[1, 2, 2, 1]).unwrap(),
        OpKind::MaxPool2d(o) if o.padding == Padding::Valid
    ));
    pool(tflite::Padding::Same, 3, &[1, 2, 2, 1]).unwrap();
    pool(tflite::Padding::Valid, 3, &[1, 1, 1, 1]).unwrap();
    assert!(matches!(
        pool(tflite::Padding::Valid, 3, &[1, 2, 2, 1]).unwrap_err(),
        ImportError::OpShape { .. }
    ));
}

#[test]
fn dilated_conv() {
    let mut s = Synth::new();
    let x = s.f32(&[1, 7, 7, 2]);
    let w = s.f32_zeros(&[4, 3, 3, 2]);
    let b = s.f32_zeros(&[4]);
    // 3x3 with dilation 2 covers 5x5: VALID over 7 gives 3.
    let y = s.f32(&[1, 3, 3, 4]);
    let options = O::Conv2DOptions(Box::new(tflite::Conv2DOptions {
        padding: tflite::Padding::Valid,
        stride_w: 1,
        stride_h: 1,
        dilation_w_factor: 2,
        dilation_h_factor: 2,
        fused_activation_function: tflite::ActivationFunctionType::Relu6,
        ..Default::default()
    }));
    s.op(B::Conv2d, Some(options), &[x, w, b], &[y]);
    let OpKind::Conv2d(o) = parse_one(&s.build(&[x], &[y])).unwrap() else {
        panic!("CONV_2D");
    };
    assert_eq!((o.dilation.h, o.dilation.w), (2, 2));
    assert_eq!(o.activation, Activation::Relu6);
}

fn fc(input: &[i32], keep_num_dims: bool, out: &[i32], bias: bool) -> Result<OpKind, ImportError> {
    let mut s = Synth::new();
    let x = s.f32(input);
    let w = s.f32_zeros(&[5, 4]);
    let b = if bias { s.f32_zeros(&[5]) } else { -1 };
    let y = s.f32(out);
    let options = O::FullyConnectedOptions(Box::new(tflite::FullyConnectedOptions {
        keep_num_dims,
        ..Default::default()
    }));
    s.op(B::FullyConnected, Some(options), &[x, w, b], &[y]);
    parse_one(&s.build(&[x], &[y]))
}

#[test]
fn fully_connected_shapes() {
    assert!(matches!(
        fc(&[2, 3, 4], true, &[2, 3, 5], true).unwrap(),
        OpKind::FullyConnected(o) if o.keep_num_dims
    ));
    fc(&[2, 3, 4], false, &[6, 5], true).unwrap();
    fc(&[2, 3, 4], false, &[6, 5], false).unwrap();
    assert!(matches!(
        fc(&[2, 3, 4], false, &[2, 3, 5], true).unwrap_err(),
        ImportError::OpShape { .. }
    ));
    assert!(matches!(
        fc(&[2, 3, 3], false, &[6, 5], true).unwrap_err(),
        ImportError::OpShape { .. }
    ));
    assert!(matches!(
        fc(&[2, 12], true, &[2, 5], true).unwrap_err(),
        ImportError::OpShape { .. }
    ));
}

#[test]
fn sixteen_by_eight_fully_connected() {
    let mut s = Synth::new();
    let x = s.tensor(TensorType::Int16, &[1, 4], Some((0.5, 0)));
    let w = s.constant(TensorType::Int8, &[2, 4], vec![1; 8]);
    let b = s.constant(TensorType::Int64, &[2], vec![0; 16]);
    let y = s.tensor(TensorType::Int16, &[1, 2], Some((0.25, 0)));
    s.op(B::FullyConnected, None, &[x, w, b], &[y]);
    let mut model = s.model(&[x], &[y]);
    common::tensor(&mut model, w as usize).quantization =
        Some(Box::new(tflite::QuantizationParameters {
            scale: Some(vec![0.1, 0.2]),
            zero_point: Some(vec![0, 0]),
            quantized_dimension: 0,
            ..Default::default()
        }));
    parse_one(&common::serialize(&model)).unwrap();
    // The same with an int32 bias is refused.
    let tensor = common::tensor(&mut model, b as usize);
    tensor.type_ = TensorType::Int32;
    tensor.shape = Some(vec![4]);
    assert!(matches!(
        parse_one(&common::serialize(&model)).unwrap_err(),
        ImportError::OpShape { .. }
    ));
    common::tensor(&mut model, b as usize).shape = Some(vec![2]);
    let buffer = common::tensor(&mut model, b as usize).buffer as usize;
    model.buffers.as_mut().unwrap()[buffer].data = Some(vec![0; 8]);
    assert!(matches!(
        parse_one(&common::serialize(&model)).unwrap_err(),
        ImportError::OpType { .. }
    ));
}

#[test]
fn softmax_int8_to_int16() {
    let mut s = Synth::new();
    let x = s.i8(&[1, 10]);
    let y = s.tensor(TensorType::Int16, &[1, 10], Some((1.0 / 32768.0, 0)));
    let options = O::SoftmaxOptions(Box::new(tflite::SoftmaxOptions { beta: 1.0 }));
    s.op(B::Softmax, Some(options), &[x], &[y]);
    assert_eq!(
        parse_one(&s.build(&[x], &[y])).unwrap(),
        OpKind::Softmax { beta: 1.0 }
    );
}

#[test]
fn reshape_from_its_option() {
    let mut s = Synth::new();
    let x = s.f32(&[1, 6]);
    let y = s.f32(&[2, 3]);
    let options = O::ReshapeOptions(Box::new(tflite::ReshapeOptions {
        new_shape: Some(vec![-1, 3]),
    }));
    s.op(B::Reshape, Some(options.clone()), &[x], &[y]);
    assert_eq!(parse_one(&s.build(&[x], &[y])).unwrap(), OpKind::Reshape);
    let mut s = Synth::new();
    let x = s.f32(&[1, 6]);
    let y = s.f32(&[3, 2]);
    s.op(B::Reshape, Some(options), &[x], &[y]);
    assert!(matches!(
        parse_one(&s.build(&[x], &[y])).unwrap_err(),
        ImportError::OpShape { .. }
    ));
}

#[test]
fn arity() {
    let mut s = Synth::new();
    let x = s.f32(&[2]);
    let y = s.f32(&[2]);
    s.op(B::Add, None, &[x], &[y]);
    let e = parse_one(&s.build(&[x], &[y])).unwrap_err();
    assert!(
        matches!(
            e,
            ImportError::Arity {
                inputs: 1,
                outputs: 1,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("expects inputs [a, b] and one output"),
        "{e}"
    );

    let mut s = Synth::new();
    let x = s.f32(&[1, 4]);
    let y = s.f32(&[1, 5]);
    s.op(B::FullyConnected, None, &[x, -1], &[y]);
    let e = parse_one(&s.build(&[x], &[y])).unwrap_err();
    assert!(
        matches!(
            e,
            ImportError::Arity {
                absent_required: true,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn views_of_caller_visible_tensors() {
    // input -> RESHAPE -> output: both caller-visible, so two buffers.
    let mut s = Synth::new();
    let x = s.f32(&[1, 6]);
    let y = s.f32(&[2, 3]);
    s.op(B::Reshape, None, &[x], &[y]);
    let bytes = s.build(&[x], &[y]);
    let graph = Graph::parse(&bytes).unwrap();
    let plan = graph.plan(DEFAULT_ALIGNMENT).unwrap();
    common::check_plan(&graph, &plan);
    assert_eq!(plan.buffers().len(), 2);
    assert_eq!(plan.arena_size(), 32 + 24);

    // input -> LOGISTIC -> RESHAPE -> output: the view shares the activation's buffer.
    let mut s = Synth::new();
    let x = s.f32(&[1, 6]);
    let h = s.f32(&[1, 6]);
    let y = s.f32(&[2, 3]);
    s.op(B::Logistic, None, &[x], &[h]);
    s.op(B::Reshape, None, &[h], &[y]);
    let bytes = s.build(&[x], &[y]);
    let graph = Graph::parse(&bytes).unwrap();
    let plan = graph.plan(DEFAULT_ALIGNMENT).unwrap();
    common::check_plan(&graph, &plan);
    assert_eq!(plan.buffers().len(), 2);
    let shared = &plan.buffers()[1];
    assert_eq!(shared.tensors.len(), 2);
    assert_eq!((shared.first_op, shared.last_op), (0, 1));
}

#[test]
fn activations_of_every_kind() {
    for (a, expected) in [
        (tflite::ActivationFunctionType::None, Ok(Activation::None)),
        (tflite::ActivationFunctionType::Relu, Ok(Activation::Relu)),
        (
            tflite::ActivationFunctionType::ReluN1To1,
            Ok(Activation::ReluN1To1),
        ),
        (tflite::ActivationFunctionType::Relu6, Ok(Activation::Relu6)),
        (tflite::ActivationFunctionType::Tanh, Err("TANH")),
        (tflite::ActivationFunctionType::SignBit, Err("SIGN_BIT")),
    ] {
        let mut s = Synth::new();
        let x = s.f32(&[2]);
        let y = s.f32(&[2]);
        let z = s.f32(&[2]);
        let options = O::AddOptions(Box::new(tflite::AddOptions {
            fused_activation_function: a,
            ..Default::default()
        }));
        s.op(B::Add, Some(options), &[x, y], &[z]);
        match (parse_one(&s.build(&[x, y], &[z])), expected) {
            (Ok(OpKind::Add { activation }), Ok(e)) => assert_eq!(activation, e),
            (Err(ImportError::UnsupportedOption { value, .. }), Err(v)) => assert_eq!(value, v),
            (got, want) => panic!("{a:?}: {got:?}, expected {want:?}"),
        }
    }
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
    let a = ember_import::run_local(&host, &[&input], 1, 1).unwrap();
    let b = ember_import::run_local(&dsp, &[&input], 1, 1).unwrap();
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
        let a = ember_import::run_local(&host, &[&input], 1, 1).unwrap();
        let b = ember_import::run_local(&dsp, &[&input], 1, 1).unwrap();
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
            let a = ember_import::run_local(&host, &[&input], 1, 1).unwrap();
            let b = ember_import::run_local(&gpu, &[&input], 1, 1).unwrap();
            assert_eq!(a.outputs, b.outputs);
            assert!(a.outputs[0].iter().any(|&v| v != a.outputs[0][0]));
        }
    }
}
