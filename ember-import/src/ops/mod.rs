//! The op registry: every supported operator once, with its TFLite name, its validation
//! rule, its lowering and the element types it lowers. The reader finds an op's rule here,
//! the lowering its lowering, and the errors their lists of supported ops. One file per op
//! family holds that family's rules and lowerings:
//!
//! - [`conv`], CONV_2D and DEPTHWISE_CONV_2D (and the separable pair fused for a GPU);
//! - [`pooling`], AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D;
//! - [`fully_connected`], FULLY_CONNECTED;
//! - [`elementwise`], ADD, MUL, SUB, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU,
//!   FLOOR_DIV and FLOOR_MOD;
//! - [`activations`], SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, LEAKY_RELU and L2_NORMALIZATION;
//! - [`math`], the element-wise ops without options: ABS, NEG, SQUARE, SQRT, RSQRT, EXP,
//!   LOG, FLOOR, CEIL, ROUND, SIN, COS, RELU, RELU6, HARD_SWISH and ELU;
//! - [`quantize`], QUANTIZE and DEQUANTIZE;
//! - [`cast`], CAST;
//! - [`layout`], RESHAPE, PAD, PADV2, MIRROR_PAD, MEAN, TRANSPOSE, CONCATENATION and STRIDED_SLICE;
//! - [`views`], SQUEEZE and EXPAND_DIMS;
//! - [`slicing`], SLICE, SPLIT, SPLIT_V, UNPACK, GATHER and GATHER_ND;
//! - [`rearrange`], PACK, DEPTH_TO_SPACE and SPACE_TO_DEPTH;
//! - [`resize`], RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR;
//! - [`fill`], FILL, ZEROS_LIKE, BROADCAST_TO and SHAPE;
//! - [`space_batch`], SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND;
//! - [`logic`], EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, LOGICAL_AND,
//!   LOGICAL_OR, LOGICAL_NOT and SELECT_V2;
//! - [`reductions`], ARG_MAX, ARG_MIN, SUM, REDUCE_MAX and REDUCE_MIN;
//! - [`transpose_conv`], TRANSPOSE_CONV;
//! - [`batch_matmul`], BATCH_MATMUL;
//! - [`bounded_relu`], RELU_N1_TO_1 and RELU_0_TO_1;
//! - [`gelu`], GELU.

mod activations;
mod batch_matmul;
mod bounded_relu;
mod cast;
mod conv;
pub(crate) mod detection_postprocess;
mod elementwise;
mod fill;
mod fully_connected;
mod gelu;
mod layout;
mod logic;
mod math;
mod pooling;
mod quantize;
mod rearrange;
mod reductions;
mod resize;
mod slicing;
mod space_batch;
mod transpose_conv;
mod views;

use crate::check::RuleFn;
use crate::element::ElementType;
use crate::lowering::{LowerError, LowerFn, Lowering};
use crate::op::Op;
use crate::tflite::BuiltinOperator;
use std::sync::OnceLock;
use ElementType::{Bool, Float32, Int16, Int32, Int8, Uint8};

/// One supported operator.
pub(crate) struct OpEntry {
    /// Its builtin operator code.
    pub(crate) operator: BuiltinOperator,
    /// Its schema name (`CONV_2D`), as [`OpKind::name`](crate::OpKind::name) gives it.
    pub(crate) name: &'static str,
    /// Its validation rule: arity, options, element types, quantization and shapes.
    pub(crate) rule: RuleFn,
    /// Its lowering, for the element types of [`OpEntry::lowers`].
    pub(crate) lower: LowerFn,
    /// The element types its lowering takes.
    pub(crate) lowers: Lowers,
}

/// The element types an op's lowering takes, read from its first input and its output.
pub(crate) enum Lowers {
    /// Any (a view).
    Any,
    /// These input types, to any output type the rule allows.
    Inputs(&'static [ElementType]),
    /// These types of the input in this slot (SPLIT's data follows its axis).
    InputAt(usize, &'static [ElementType]),
    /// These (input, output) pairs.
    Conversions(&'static [(ElementType, ElementType)]),
}

impl Lowers {
    /// The input whose type [`allows`](Self::allows) reads.
    fn typed_input(&self) -> usize {
        match self {
            Self::InputAt(slot, _) => *slot,
            _ => 0,
        }
    }

    /// Whether an op from `input` to `output` lowers.
    fn allows(&self, input: ElementType, output: ElementType) -> bool {
        match self {
            Self::Any => true,
            Self::Inputs(inputs) | Self::InputAt(_, inputs) => inputs.contains(&input),
            Self::Conversions(pairs) => pairs.contains(&(input, output)),
        }
    }

    /// The types, as the supported-ops list shows them: ` (int8, float32)`, ` (int8→int16)`,
    /// or nothing for any.
    fn describe(&self) -> String {
        let names: Vec<String> = match self {
            Self::Any => return String::new(),
            Self::Inputs(inputs) | Self::InputAt(_, inputs) => {
                inputs.iter().map(|ty| ty.name().to_string()).collect()
            }
            Self::Conversions(pairs) => pairs
                .iter()
                .map(|(input, output)| format!("{}→{}", input.name(), output.name()))
                .collect(),
        };
        format!(" ({})", names.join(", "))
    }
}

/// int8 or float32 inputs: what the weighted, pooling, arithmetic and layout ops lower.
const INT8_OR_FLOAT32: Lowers = Lowers::Inputs(&[Int8, Float32]);
/// int8 to int8 and float32 to float32: LOGISTIC, TANH, RELU and RELU6.
const SAME_INT8_OR_FLOAT32: Lowers = Lowers::Conversions(&[(Int8, Int8), (Float32, Float32)]);
/// What the comparisons lower: int8 (rescaled), int32 and float32.
const COMPARED: Lowers = Lowers::Inputs(&[Int8, Int32, Float32]);
/// float32 alone: the math functions and the float-only arithmetic.
const FLOAT32: Lowers = Lowers::Inputs(&[Float32]);

/// Every supported operator, in the order error messages list them.
static OPS: [OpEntry; 88] = [
    OpEntry {
        operator: BuiltinOperator::FullyConnected,
        name: "FULLY_CONNECTED",
        rule: fully_connected::check_fully_connected,
        lower: fully_connected::lower_fully_connected,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Conv2d,
        name: "CONV_2D",
        rule: conv::check_conv2d,
        lower: conv::lower_conv2d,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::DepthwiseConv2d,
        name: "DEPTHWISE_CONV_2D",
        rule: conv::check_depthwise_conv2d,
        lower: conv::lower_depthwise_conv2d,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::AveragePool2d,
        name: "AVERAGE_POOL_2D",
        rule: pooling::check_average_pool2d,
        lower: pooling::lower_average_pool2d,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::MaxPool2d,
        name: "MAX_POOL_2D",
        rule: pooling::check_max_pool2d,
        lower: pooling::lower_max_pool2d,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Add,
        name: "ADD",
        rule: elementwise::check_add,
        lower: elementwise::lower_add,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Mul,
        name: "MUL",
        rule: elementwise::check_mul,
        lower: elementwise::lower_mul,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Softmax,
        name: "SOFTMAX",
        rule: activations::check_softmax,
        lower: activations::lower_softmax,
        lowers: Lowers::Conversions(&[(Int8, Int8), (Int8, Int16), (Float32, Float32)]),
    },
    OpEntry {
        operator: BuiltinOperator::LogSoftmax,
        name: "LOG_SOFTMAX",
        rule: activations::check_log_softmax,
        lower: activations::lower_log_softmax,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Logistic,
        name: "LOGISTIC",
        rule: activations::check_logistic,
        lower: activations::lower_logistic,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Tanh,
        name: "TANH",
        rule: activations::check_tanh,
        lower: activations::lower_tanh,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Reshape,
        name: "RESHAPE",
        rule: layout::check_reshape,
        lower: layout::lower_reshape,
        lowers: Lowers::Any,
    },
    OpEntry {
        operator: BuiltinOperator::Pad,
        name: "PAD",
        rule: layout::check_pad,
        lower: layout::lower_pad,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Mean,
        name: "MEAN",
        rule: layout::check_mean,
        lower: layout::lower_mean,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Transpose,
        name: "TRANSPOSE",
        rule: layout::check_transpose,
        lower: layout::lower_transpose,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Concatenation,
        name: "CONCATENATION",
        rule: layout::check_concatenation,
        lower: layout::lower_concatenation,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::StridedSlice,
        name: "STRIDED_SLICE",
        rule: layout::check_strided_slice,
        lower: layout::lower_strided_slice,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Quantize,
        name: "QUANTIZE",
        rule: quantize::check_quantize,
        lower: quantize::lower_quantize,
        lowers: Lowers::Conversions(quantize::QUANTIZE_PAIRS),
    },
    OpEntry {
        operator: BuiltinOperator::Dequantize,
        name: "DEQUANTIZE",
        rule: quantize::check_dequantize,
        lower: quantize::lower_dequantize,
        lowers: Lowers::Conversions(&[(Int8, Float32), (Uint8, Float32), (Int16, Float32)]),
    },
    OpEntry {
        operator: BuiltinOperator::Cast,
        name: "CAST",
        rule: cast::check_cast,
        lower: cast::lower_cast,
        lowers: Lowers::Inputs(&[Int8, Int16, Int32, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::LeakyRelu,
        name: "LEAKY_RELU",
        rule: activations::check_leaky_relu,
        lower: activations::lower_leaky_relu,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Sub,
        name: "SUB",
        rule: elementwise::check_sub,
        lower: elementwise::lower_binary,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Div,
        name: "DIV",
        rule: elementwise::check_div,
        lower: elementwise::lower_binary,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::SquaredDifference,
        name: "SQUARED_DIFFERENCE",
        rule: elementwise::check_squared_difference,
        lower: elementwise::lower_binary,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Maximum,
        name: "MAXIMUM",
        rule: elementwise::check_maximum,
        lower: elementwise::lower_binary,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Minimum,
        name: "MINIMUM",
        rule: elementwise::check_minimum,
        lower: elementwise::lower_binary,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Prelu,
        name: "PRELU",
        rule: elementwise::check_prelu,
        lower: elementwise::lower_binary,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Relu,
        name: "RELU",
        rule: math::check_relu,
        lower: math::lower_elementwise,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Relu6,
        name: "RELU6",
        rule: math::check_relu6,
        lower: math::lower_elementwise,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::HardSwish,
        name: "HARD_SWISH",
        rule: math::check_hard_swish,
        lower: math::lower_elementwise,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Elu,
        name: "ELU",
        rule: math::check_elu,
        lower: math::lower_elementwise,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Abs,
        name: "ABS",
        rule: math::check_abs,
        lower: math::lower_elementwise,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Neg,
        name: "NEG",
        rule: math::check_neg,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Square,
        name: "SQUARE",
        rule: math::check_square,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Sqrt,
        name: "SQRT",
        rule: math::check_sqrt,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Rsqrt,
        name: "RSQRT",
        rule: math::check_rsqrt,
        lower: math::lower_elementwise,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Exp,
        name: "EXP",
        rule: math::check_exp,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Log,
        name: "LOG",
        rule: math::check_log,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Floor,
        name: "FLOOR",
        rule: math::check_floor,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Ceil,
        name: "CEIL",
        rule: math::check_ceil,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Round,
        name: "ROUND",
        rule: math::check_round,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Sin,
        name: "SIN",
        rule: math::check_sin,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Cos,
        name: "COS",
        rule: math::check_cos,
        lower: math::lower_elementwise,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Squeeze,
        name: "SQUEEZE",
        rule: views::check_squeeze,
        lower: layout::lower_reshape,
        lowers: Lowers::Any,
    },
    OpEntry {
        operator: BuiltinOperator::ExpandDims,
        name: "EXPAND_DIMS",
        rule: views::check_expand_dims,
        lower: layout::lower_reshape,
        lowers: Lowers::Any,
    },
    OpEntry {
        operator: BuiltinOperator::Slice,
        name: "SLICE",
        rule: slicing::check_slice,
        lower: slicing::lower_slice,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Split,
        name: "SPLIT",
        rule: slicing::check_split,
        lower: slicing::lower_parts,
        lowers: Lowers::InputAt(1, &[Int8, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::SplitV,
        name: "SPLIT_V",
        rule: slicing::check_split_v,
        lower: slicing::lower_parts,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Unpack,
        name: "UNPACK",
        rule: slicing::check_unpack,
        lower: slicing::lower_parts,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Gather,
        name: "GATHER",
        rule: slicing::check_gather,
        lower: slicing::lower_gather,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ArgMax,
        name: "ARG_MAX",
        rule: reductions::check_arg_max,
        lower: reductions::lower_arg,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ArgMin,
        name: "ARG_MIN",
        rule: reductions::check_arg_min,
        lower: reductions::lower_arg,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Sum,
        name: "SUM",
        rule: reductions::check_sum,
        lower: reductions::lower_reduce,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ReduceMax,
        name: "REDUCE_MAX",
        rule: reductions::check_reduce_max,
        lower: reductions::lower_reduce,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ReduceMin,
        name: "REDUCE_MIN",
        rule: reductions::check_reduce_min,
        lower: reductions::lower_reduce,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Pack,
        name: "PACK",
        rule: rearrange::check_pack,
        lower: rearrange::lower_pack,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::DepthToSpace,
        name: "DEPTH_TO_SPACE",
        rule: rearrange::check_depth_to_space,
        lower: rearrange::lower_block,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::SpaceToDepth,
        name: "SPACE_TO_DEPTH",
        rule: rearrange::check_space_to_depth,
        lower: rearrange::lower_block,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Padv2,
        name: "PADV2",
        rule: layout::check_padv2,
        lower: layout::lower_pad,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ResizeNearestNeighbor,
        name: "RESIZE_NEAREST_NEIGHBOR",
        rule: resize::check_resize_nearest_neighbor,
        lower: resize::lower_resize_nearest_neighbor,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Equal,
        name: "EQUAL",
        rule: logic::check_equal,
        lower: logic::lower_comparison,
        lowers: COMPARED,
    },
    OpEntry {
        operator: BuiltinOperator::NotEqual,
        name: "NOT_EQUAL",
        rule: logic::check_not_equal,
        lower: logic::lower_comparison,
        lowers: COMPARED,
    },
    OpEntry {
        operator: BuiltinOperator::Less,
        name: "LESS",
        rule: logic::check_less,
        lower: logic::lower_comparison,
        lowers: COMPARED,
    },
    OpEntry {
        operator: BuiltinOperator::LessEqual,
        name: "LESS_EQUAL",
        rule: logic::check_less_equal,
        lower: logic::lower_comparison,
        lowers: COMPARED,
    },
    OpEntry {
        operator: BuiltinOperator::Greater,
        name: "GREATER",
        rule: logic::check_greater,
        lower: logic::lower_comparison,
        lowers: COMPARED,
    },
    OpEntry {
        operator: BuiltinOperator::GreaterEqual,
        name: "GREATER_EQUAL",
        rule: logic::check_greater_equal,
        lower: logic::lower_comparison,
        lowers: COMPARED,
    },
    OpEntry {
        operator: BuiltinOperator::LogicalAnd,
        name: "LOGICAL_AND",
        rule: logic::check_logical_and,
        lower: logic::lower_logical,
        lowers: Lowers::Inputs(&[Bool]),
    },
    OpEntry {
        operator: BuiltinOperator::LogicalOr,
        name: "LOGICAL_OR",
        rule: logic::check_logical_or,
        lower: logic::lower_logical,
        lowers: Lowers::Inputs(&[Bool]),
    },
    OpEntry {
        operator: BuiltinOperator::LogicalNot,
        name: "LOGICAL_NOT",
        rule: logic::check_logical_not,
        lower: logic::lower_logical,
        lowers: Lowers::Inputs(&[Bool]),
    },
    OpEntry {
        operator: BuiltinOperator::SelectV2,
        name: "SELECT_V2",
        rule: logic::check_select_v2,
        lower: logic::lower_select_v2,
        lowers: Lowers::InputAt(1, &[Int8, Int16, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::Fill,
        name: "FILL",
        rule: fill::check_fill,
        lower: fill::lower_fill,
        lowers: Lowers::InputAt(1, &[Int8, Int32, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::ZerosLike,
        name: "ZEROS_LIKE",
        rule: fill::check_zeros_like,
        lower: fill::lower_fill,
        lowers: Lowers::Inputs(&[Int8, Int32, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::BroadcastTo,
        name: "BROADCAST_TO",
        rule: fill::check_broadcast_to,
        lower: fill::lower_fill,
        lowers: Lowers::Inputs(&[Int8, Int16, Int32, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::Shape,
        name: "SHAPE",
        rule: fill::check_shape,
        lower: fill::lower_fill,
        lowers: Lowers::Any,
    },
    OpEntry {
        operator: BuiltinOperator::MirrorPad,
        name: "MIRROR_PAD",
        rule: layout::check_mirror_pad,
        lower: layout::lower_mirror_pad,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ResizeBilinear,
        name: "RESIZE_BILINEAR",
        rule: resize::check_resize_bilinear,
        lower: resize::lower_resize_bilinear,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::SpaceToBatchNd,
        name: "SPACE_TO_BATCH_ND",
        rule: space_batch::check_space_to_batch_nd,
        lower: space_batch::lower_space_batch,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::BatchToSpaceNd,
        name: "BATCH_TO_SPACE_ND",
        rule: space_batch::check_batch_to_space_nd,
        lower: space_batch::lower_space_batch,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::TransposeConv,
        name: "TRANSPOSE_CONV",
        rule: transpose_conv::check_transpose_conv,
        lower: transpose_conv::lower_transpose_conv,
        // Typed by its data input, after `output_shape` and the weights.
        lowers: Lowers::InputAt(2, &[Int8, Float32]),
    },
    OpEntry {
        operator: BuiltinOperator::GatherNd,
        name: "GATHER_ND",
        rule: slicing::check_gather_nd,
        lower: slicing::lower_gather_nd,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::L2Normalization,
        name: "L2_NORMALIZATION",
        rule: activations::check_l2_normalization,
        lower: activations::lower_l2_normalization,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::L2Pool2d,
        name: "L2_POOL_2D",
        rule: pooling::check_l2_pool2d,
        lower: pooling::lower_l2_pool2d,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::BatchMatmul,
        name: "BATCH_MATMUL",
        rule: batch_matmul::check_batch_matmul,
        lower: batch_matmul::lower_batch_matmul,
        lowers: INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::FloorDiv,
        name: "FLOOR_DIV",
        rule: elementwise::check_floor_div,
        lower: elementwise::lower_binary,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::FloorMod,
        name: "FLOOR_MOD",
        rule: elementwise::check_floor_mod,
        lower: elementwise::lower_binary,
        lowers: FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::ReluN1To1,
        name: "RELU_N1_TO_1",
        rule: bounded_relu::check_relu_n1_to_1,
        lower: bounded_relu::lower_bounded_relu,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Relu0To1,
        name: "RELU_0_TO_1",
        rule: bounded_relu::check_relu_0_to_1,
        lower: bounded_relu::lower_bounded_relu,
        lowers: SAME_INT8_OR_FLOAT32,
    },
    OpEntry {
        operator: BuiltinOperator::Gelu,
        name: "GELU",
        rule: gelu::check_gelu,
        lower: gelu::lower_gelu,
        lowers: SAME_INT8_OR_FLOAT32,
    },
];

/// The supported custom operators (builtin code CUSTOM), found by their `custom_code`,
/// which is their name; listed after the builtin ones.
static CUSTOM_OPS: [OpEntry; 1] = [OpEntry {
    operator: BuiltinOperator::Custom,
    name: "TFLite_Detection_PostProcess",
    rule: detection_postprocess::check_detection_postprocess,
    lower: detection_postprocess::lower_detection_postprocess,
    lowers: FLOAT32,
}];

/// The supported custom operator with `custom_code` `code`, if any.
pub(crate) fn find_custom(code: &str) -> Option<&'static OpEntry> {
    CUSTOM_OPS.iter().find(|entry| entry.name == code)
}

/// Every supported operator: the builtin ones, then the custom ones.
fn all_ops() -> impl Iterator<Item = &'static OpEntry> {
    OPS.iter().chain(CUSTOM_OPS.iter())
}

/// The supported operator with builtin code `code`, if any.
pub(crate) fn find(code: i32) -> Option<&'static OpEntry> {
    let operator = BuiltinOperator::try_from(code).ok()?;
    OPS.iter().find(|entry| entry.operator == operator)
}

/// The supported operators' schema names, as the importer's errors list them
/// (`FULLY_CONNECTED, CONV_2D, …`).
pub fn supported_operators() -> &'static str {
    static NAMES: OnceLock<String> = OnceLock::new();
    NAMES.get_or_init(|| {
        let names: Vec<&str> = all_ops().map(|entry| entry.name).collect();
        names.join(", ")
    })
}

impl core::fmt::Display for crate::error::SupportedOperators {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(supported_operators())
    }
}

/// The ops the lowering takes, with their element types, as its errors list them
/// (`FULLY_CONNECTED (int8, float32), …, SOFTMAX (int8→int8, int8→int16, float32→float32), …`).
pub(crate) fn supported_lowerings() -> &'static str {
    static LIST: OnceLock<String> = OnceLock::new();
    LIST.get_or_init(|| {
        let ops: Vec<String> = all_ops()
            .map(|entry| format!("{}{}", entry.name, entry.lowers.describe()))
            .collect();
        ops.join(", ")
    })
}

/// Lowers `op` (its first input present, its types ones its operator lowers) with its
/// family's lowering.
pub(crate) fn lower_op(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let name = op.kind.name();
    let Some(entry) = all_ops().find(|entry| entry.name == name) else {
        return Err(lowering.unsupported(op, name.to_string()));
    };
    let input = lowering.input(op, entry.lowers.typed_input())?;
    let output = op.outputs[0];
    let (input_type, output_type) = (lowering.element_type(input), lowering.element_type(output));
    if !entry.lowers.allows(input_type, output_type) {
        return Err(
            lowering.unsupported(op, format!("{name} from {input_type:?} to {output_type:?}"))
        );
    }
    (entry.lower)(lowering, op)
}

/// Lowers `op` and `next` (the op after it) as one step where the target fuses such a pair
/// ([`LowerOptions::fuse_separable`](crate::LowerOptions::fuse_separable)); returns whether
/// it did. Where not, nothing was added and each op lowers on its own.
pub(crate) fn lower_pair(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    next: &Op,
) -> Result<bool, LowerError> {
    if !lowering.options.fuse_separable {
        return Ok(false);
    }
    conv::lower_separable(lowering, op, next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_names::BUILTIN_NAMES;

    #[test]
    fn names_are_the_schemas() {
        for entry in &OPS {
            let code = entry.operator as i32;
            let schema = BUILTIN_NAMES
                .iter()
                .find(|(c, _)| *c == code)
                .map(|(_, n)| *n);
            assert_eq!(schema, Some(entry.name));
            assert_eq!(find(code).map(|found| found.name), Some(entry.name));
        }
    }

    #[test]
    fn supported_lists() {
        assert_eq!(
            supported_operators(),
            "FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, \
             MUL, SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, RESHAPE, PAD, MEAN, TRANSPOSE, \
             CONCATENATION, STRIDED_SLICE, QUANTIZE, DEQUANTIZE, CAST, LEAKY_RELU, SUB, DIV, \
             SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU, RELU, RELU6, HARD_SWISH, ELU, ABS, \
             NEG, SQUARE, SQRT, RSQRT, EXP, LOG, FLOOR, CEIL, ROUND, SIN, COS, SQUEEZE, \
             EXPAND_DIMS, SLICE, SPLIT, SPLIT_V, UNPACK, GATHER, ARG_MAX, ARG_MIN, SUM, \
             REDUCE_MAX, REDUCE_MIN, PACK, DEPTH_TO_SPACE, SPACE_TO_DEPTH, PADV2, \
             RESIZE_NEAREST_NEIGHBOR, EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, \
             GREATER_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT, SELECT_V2, FILL, \
             ZEROS_LIKE, BROADCAST_TO, SHAPE, MIRROR_PAD, RESIZE_BILINEAR, SPACE_TO_BATCH_ND, \
             BATCH_TO_SPACE_ND, TRANSPOSE_CONV, GATHER_ND, L2_NORMALIZATION, L2_POOL_2D, \
             BATCH_MATMUL, FLOOR_DIV, FLOOR_MOD, RELU_N1_TO_1, RELU_0_TO_1, GELU, \
             TFLite_Detection_PostProcess"
        );
        assert_eq!(
            supported_lowerings(),
            "FULLY_CONNECTED (int8, float32), CONV_2D (int8, float32), DEPTHWISE_CONV_2D \
             (int8, float32), AVERAGE_POOL_2D (int8, float32), MAX_POOL_2D (int8, float32), \
             ADD (int8, float32), MUL (int8, float32), SOFTMAX (int8→int8, int8→int16, \
             float32→float32), LOG_SOFTMAX (int8→int8, float32→float32), LOGISTIC (int8→int8, float32→float32), \
             TANH (int8→int8, float32→float32), RESHAPE, PAD (int8, float32), MEAN (int8, \
             float32), TRANSPOSE (int8, float32), CONCATENATION (int8, float32), \
             STRIDED_SLICE (int8, float32), QUANTIZE (float32→int8, int8→int8, uint8→int8, \
             int8→uint8, float32→int16, int8→int16, int8→int32, int16→int8, int16→int16, \
             int16→int32, int32→int8, int32→int16), DEQUANTIZE (int8→float32, uint8→float32, \
             int16→float32), CAST (int8, int16, int32, \
             float32), LEAKY_RELU (int8→int8, float32→float32), SUB (int8, float32), DIV \
             (int8, float32), SQUARED_DIFFERENCE (int8, float32), MAXIMUM (int8, float32), MINIMUM (int8, \
             float32), PRELU (int8, float32), RELU (int8→int8, float32→float32), RELU6 \
             (int8→int8, float32→float32), HARD_SWISH (int8→int8, float32→float32), ELU \
             (int8→int8, float32→float32), ABS (int8→int8, float32→float32), NEG (float32), SQUARE (float32), \
             SQRT (float32), RSQRT (int8→int8, float32→float32), EXP (float32), LOG (float32), FLOOR (float32), \
             CEIL (float32), ROUND (float32), SIN (float32), COS (float32), SQUEEZE, \
             EXPAND_DIMS, SLICE (int8, float32), SPLIT (int8, float32), SPLIT_V (int8, \
             float32), UNPACK (int8, float32), GATHER (int8, float32), ARG_MAX (int8, \
             float32), ARG_MIN (int8, float32), SUM (int8, float32), REDUCE_MAX (int8, float32), \
             REDUCE_MIN (int8, float32), PACK (int8, float32), DEPTH_TO_SPACE (int8, \
             float32), SPACE_TO_DEPTH (int8, float32), PADV2 (int8, float32), \
             RESIZE_NEAREST_NEIGHBOR (int8, float32), EQUAL (int8, int32, float32), NOT_EQUAL \
             (int8, int32, float32), LESS (int8, int32, float32), LESS_EQUAL (int8, int32, \
             float32), GREATER (int8, int32, float32), GREATER_EQUAL (int8, int32, float32), \
             LOGICAL_AND (bool), LOGICAL_OR (bool), LOGICAL_NOT (bool), SELECT_V2 (int8, \
             int16, float32), FILL (int8, int32, float32), ZEROS_LIKE (int8, int32, float32), \
             BROADCAST_TO (int8, int16, int32, float32), SHAPE, MIRROR_PAD (int8, float32), \
             RESIZE_BILINEAR (int8, float32), SPACE_TO_BATCH_ND (int8, float32), \
             BATCH_TO_SPACE_ND (int8, float32), TRANSPOSE_CONV (int8, float32), GATHER_ND \
             (int8, float32), L2_NORMALIZATION (int8→int8, float32→float32), L2_POOL_2D \
             (float32), BATCH_MATMUL (int8, float32), FLOOR_DIV (float32), FLOOR_MOD \
             (float32), RELU_N1_TO_1 (int8→int8, float32→float32), RELU_0_TO_1 (int8→int8, \
             float32→float32), GELU (int8→int8, float32→float32), \
             TFLite_Detection_PostProcess (float32)"
        );
    }
}
