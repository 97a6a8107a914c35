//! The operators the reference models do not exercise (and option corners of those they
//! do), on small models built from scratch: what each accepts, and what it refuses.

mod common;

use common::Synth;
use ember_import::tflite::{self, BuiltinOperator as B, BuiltinOptions as O, TensorType};
use ember_import::{Activation, Graph, ImportError, OpKind, Padding, DEFAULT_ALIGNMENT};

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

/// A CAST from 6 int16 to 6 float32 values: largest first, the 12-byte input would pad to
/// 16 after the 24-byte output (44 bytes); in write order the output pads instead (40), and
/// the plan takes that order.
#[test]
fn cast_plans_no_larger_than_its_tensors_in_order() {
    let mut s = Synth::new();
    let x = s.tensor(TensorType::Int16, &[6], None);
    let y = s.f32(&[6]);
    s.op(B::Cast, None, &[x], &[y]);
    let bytes = s.build(&[x], &[y]);
    let graph = Graph::parse(&bytes).unwrap();
    assert_eq!(graph.ops()[0].kind, OpKind::Cast);
    let plan = graph.plan(16).unwrap();
    assert_eq!(plan.arena_size(), 40);
    assert!(plan.arena_size() <= plan.unshared_size());
    let offsets: Vec<usize> = plan.buffers().iter().map(|b| b.offset).collect();
    assert_eq!(offsets, [0, 16]);
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
