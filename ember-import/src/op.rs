//! Operators: what each op of the graph computes, with its options parsed and checked.

pub use crate::ops::detection_postprocess::DetectionPostprocessOptions;
use crate::TensorId;
pub use ember_kernels::comparison::Predicate;
use std::fmt;

/// How a spatial op pads its input (TFLite's `Padding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Output size `ceil(input / stride)`, zero padding split before/after.
    Same,
    /// No padding: output size `ceil((input - effective_filter + 1) / stride)`.
    Valid,
}

/// A fused activation applied to an op's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// None.
    None,
    /// `max(x, 0)`.
    Relu,
    /// `min(max(x, 0), 6)`.
    Relu6,
    /// `min(max(x, -1), 1)`.
    ReluN1To1,
}

impl Activation {
    /// The accepted fused activations, as in error messages.
    pub const SUPPORTED: &'static str = "NONE, RELU, RELU6, RELU_N1_TO_1";

    /// The schema's name (`RELU6`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::Relu => "RELU",
            Self::Relu6 => "RELU6",
            Self::ReluN1To1 => "RELU_N1_TO_1",
        }
    }
}

/// Height and width of a stride, a dilation or a filter window; each at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hw {
    /// Along height (dimension 1 of NHWC).
    pub h: usize,
    /// Along width (dimension 2 of NHWC).
    pub w: usize,
}

impl fmt::Display for Hw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.h, self.w)
    }
}

/// FULLY_CONNECTED: `output = input · weightsᵀ + bias`, weights `[out, in]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FullyConnectedOptions {
    /// Fused activation.
    pub activation: Activation,
    /// The output keeps the input's leading dimensions (`[..., out]`) instead of `[batch, out]`.
    pub keep_num_dims: bool,
}

/// CONV_2D over NHWC input with OHWI weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conv2dOptions {
    /// Padding.
    pub padding: Padding,
    /// Stride.
    pub stride: Hw,
    /// Dilation.
    pub dilation: Hw,
    /// Fused activation.
    pub activation: Activation,
}

/// DEPTHWISE_CONV_2D over NHWC input with 1HWC weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthwiseConv2dOptions {
    /// Padding.
    pub padding: Padding,
    /// Stride.
    pub stride: Hw,
    /// Dilation.
    pub dilation: Hw,
    /// Output channels per input channel: weight channels / input channels (checked against
    /// the file's `depth_multiplier` where that is set).
    pub depth_multiplier: usize,
    /// Fused activation.
    pub activation: Activation,
}

/// AVERAGE_POOL_2D and MAX_POOL_2D over NHWC input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pool2dOptions {
    /// Padding.
    pub padding: Padding,
    /// Stride.
    pub stride: Hw,
    /// Window size.
    pub filter: Hw,
    /// Fused activation.
    pub activation: Activation,
}

/// STRIDED_SLICE, with the bounds from its constant inputs resolved per dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StridedSliceOptions {
    /// First index per input dimension, after masks, negative indices and clamping.
    pub begin: Vec<i64>,
    /// One past the last index (or one before it, for a negative stride) per input dimension,
    /// resolved the same way.
    pub end: Vec<i64>,
    /// Stride per input dimension (never 0).
    pub strides: Vec<i64>,
    /// Input dimensions dropped from the output (`shrink_axis_mask`).
    pub shrink: Vec<bool>,
}

/// The element-wise one-input ops that have no options: output `i` is a function of input
/// `i` alone, the same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementwiseOp {
    /// ABS: `|x|`.
    Abs,
    /// NEG: `-x`.
    Neg,
    /// SQUARE: `x * x`.
    Square,
    /// SQRT.
    Sqrt,
    /// RSQRT: `1 / sqrt(x)`.
    Rsqrt,
    /// EXP.
    Exp,
    /// LOG (natural).
    Log,
    /// FLOOR.
    Floor,
    /// CEIL.
    Ceil,
    /// ROUND: to the nearest integer, halves to even.
    Round,
    /// SIN.
    Sin,
    /// COS.
    Cos,
    /// RELU: `max(x, 0)`.
    Relu,
    /// RELU6: `min(max(x, 0), 6)`.
    Relu6,
    /// HARD_SWISH: `x * relu6(x + 3) / 6`.
    HardSwish,
    /// ELU: `x < 0 ? exp(x) - 1 : x`.
    Elu,
}

impl ElementwiseOp {
    /// The schema's name (`ABS`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Abs => "ABS",
            Self::Neg => "NEG",
            Self::Square => "SQUARE",
            Self::Sqrt => "SQRT",
            Self::Rsqrt => "RSQRT",
            Self::Exp => "EXP",
            Self::Log => "LOG",
            Self::Floor => "FLOOR",
            Self::Ceil => "CEIL",
            Self::Round => "ROUND",
            Self::Sin => "SIN",
            Self::Cos => "COS",
            Self::Relu => "RELU",
            Self::Relu6 => "RELU6",
            Self::HardSwish => "HARD_SWISH",
            Self::Elu => "ELU",
        }
    }
}

/// The reductions over axes beside MEAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// SUM.
    Sum,
    /// REDUCE_MAX.
    Max,
    /// REDUCE_MIN.
    Min,
}

impl ReduceOp {
    /// The schema's name (`SUM`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Sum => "SUM",
            Self::Max => "REDUCE_MAX",
            Self::Min => "REDUCE_MIN",
        }
    }
}

/// The broadcasting two-input ops beside ADD and MUL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// SUB: `a - b`, with a fused activation.
    Sub,
    /// DIV: `a / b`, with a fused activation.
    Div,
    /// SQUARED_DIFFERENCE: `(a - b)²`.
    SquaredDifference,
    /// MAXIMUM.
    Maximum,
    /// MINIMUM.
    Minimum,
    /// PRELU: `x >= 0 ? x : x * alpha`, alpha (input 1) broadcast.
    Prelu,
    /// FLOOR_DIV: `floor(a / b)`.
    FloorDiv,
    /// FLOOR_MOD: `a - floor(a / b) * b`, as TFLM's `fmod` with the sign fix-up.
    FloorMod,
}

impl BinaryOp {
    /// The schema's name (`SUB`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Sub => "SUB",
            Self::Div => "DIV",
            Self::SquaredDifference => "SQUARED_DIFFERENCE",
            Self::Maximum => "MAXIMUM",
            Self::Minimum => "MINIMUM",
            Self::Prelu => "PRELU",
            Self::FloorDiv => "FLOOR_DIV",
            Self::FloorMod => "FLOOR_MOD",
        }
    }
}

/// The supported builtin operators with their options. Options that live in constant input
/// tensors (MEAN's axes, PAD's paddings, TRANSPOSE's permutation, STRIDED_SLICE's bounds) are
/// resolved here as well; the tensors stay among the op's inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    /// FULLY_CONNECTED: inputs `[input, weights, bias?]`.
    FullyConnected(FullyConnectedOptions),
    /// CONV_2D: inputs `[input, weights, bias?]`.
    Conv2d(Conv2dOptions),
    /// DEPTHWISE_CONV_2D: inputs `[input, weights, bias?]`.
    DepthwiseConv2d(DepthwiseConv2dOptions),
    /// AVERAGE_POOL_2D: inputs `[input]`.
    AveragePool2d(Pool2dOptions),
    /// MAX_POOL_2D: inputs `[input]`.
    MaxPool2d(Pool2dOptions),
    /// L2_POOL_2D: inputs `[input]`.
    L2Pool2d(Pool2dOptions),
    /// ADD with broadcasting: inputs `[a, b]`.
    Add {
        /// Fused activation.
        activation: Activation,
    },
    /// MUL with broadcasting: inputs `[a, b]`.
    Mul {
        /// Fused activation.
        activation: Activation,
    },
    /// SOFTMAX over the last dimension: inputs `[input]`.
    Softmax {
        /// `softmax(beta * x)`.
        beta: f32,
    },
    /// LOG_SOFTMAX over the last dimension: inputs `[input]`.
    LogSoftmax,
    /// LOGISTIC (sigmoid): inputs `[input]`.
    Logistic,
    /// TANH: inputs `[input]`.
    Tanh,
    /// LEAKY_RELU: inputs `[input]`.
    LeakyRelu {
        /// The slope below zero.
        alpha: f32,
    },
    /// RESHAPE, a view: inputs `[input, shape?]`; the output tensor has the new shape.
    Reshape,
    /// PAD with the zero point: inputs `[input, paddings]`.
    Pad {
        /// `(before, after)` per dimension.
        paddings: Vec<(usize, usize)>,
    },
    /// MEAN: inputs `[input, axes]`.
    Mean {
        /// The reduced dimensions, ascending, without repeats.
        axes: Vec<usize>,
        /// Reduced dimensions stay as size 1.
        keep_dims: bool,
    },
    /// TRANSPOSE: inputs `[input, permutation]`.
    Transpose {
        /// Output dimension `i` is input dimension `perm[i]`.
        perm: Vec<usize>,
    },
    /// CONCATENATION: inputs `[a, b, ...]`.
    Concatenation {
        /// The joined dimension, in `0..rank`.
        axis: usize,
        /// Fused activation.
        activation: Activation,
    },
    /// STRIDED_SLICE: inputs `[input, begin, end, strides]`.
    StridedSlice(StridedSliceOptions),
    /// QUANTIZE (float to integer, or integer to integer with new parameters): inputs `[input]`.
    Quantize,
    /// DEQUANTIZE (integer or float16 to float32): inputs `[input]`.
    Dequantize,
    /// CAST between element types: inputs `[input]`.
    Cast,
    /// An element-wise op without options: inputs `[input]`.
    Elementwise(ElementwiseOp),
    /// SQUEEZE, a view: inputs `[input]`; the output drops dimensions of size 1.
    Squeeze,
    /// EXPAND_DIMS, a view: inputs `[input, axis]`; the output has a dimension of 1 more.
    ExpandDims,
    /// SLICE: inputs `[input, begin, size]`, resolved as a strided slice of stride 1.
    Slice(StridedSliceOptions),
    /// SPLIT: inputs `[axis, input]`; equal parts along `axis`, one per output.
    Split {
        /// The split dimension.
        axis: usize,
    },
    /// SPLIT_V: inputs `[input, size_splits, axis]`; parts of the given sizes along `axis`.
    SplitV {
        /// The split dimension.
        axis: usize,
    },
    /// UNPACK: inputs `[input]`; one output per index along `axis`, that dimension dropped.
    Unpack {
        /// The unpacked dimension.
        axis: usize,
    },
    /// GATHER: inputs `[input, indices]`; slices along `axis` picked by the indices.
    Gather {
        /// The gathered dimension.
        axis: usize,
        /// Leading dimensions shared by input and indices.
        batch_dims: usize,
    },
    /// GATHER_ND: inputs `[input, indices]`; slices named by rows of indices.
    GatherNd,
    /// L2_NORMALIZATION over the last dimension: inputs `[input]`.
    L2Normalization,
    /// SUM, REDUCE_MAX or REDUCE_MIN: inputs `[input, axes]`.
    Reduce {
        /// Which.
        op: ReduceOp,
        /// The reduced dimensions, ascending, without repeats.
        axes: Vec<usize>,
        /// Reduced dimensions stay as size 1.
        keep_dims: bool,
    },
    /// ARG_MAX: inputs `[input, axis]`; the axis reduced to its largest value's index.
    ArgMax {
        /// The reduced dimension.
        axis: usize,
    },
    /// ARG_MIN: inputs `[input, axis]`; the axis reduced to its smallest value's index.
    ArgMin {
        /// The reduced dimension.
        axis: usize,
    },
    /// PACK: inputs `[a, b, ...]` of one shape, stacked along a new dimension `axis`.
    Pack {
        /// The new dimension.
        axis: usize,
    },
    /// DEPTH_TO_SPACE over NHWC: channels moved into `block × block` spatial blocks.
    DepthToSpace {
        /// The block's side.
        block: usize,
    },
    /// SPACE_TO_DEPTH over NHWC: `block × block` spatial blocks moved into channels.
    SpaceToDepth {
        /// The block's side.
        block: usize,
    },
    /// RESIZE_NEAREST_NEIGHBOR over NHWC: inputs `[input, size]`.
    ResizeNearestNeighbor {
        /// TFLite's `align_corners`.
        align_corners: bool,
        /// TFLite's `half_pixel_centers`.
        half_pixel_centers: bool,
    },
    /// RESIZE_BILINEAR over NHWC: inputs `[input, size]`.
    ResizeBilinear {
        /// TFLite's `align_corners`.
        align_corners: bool,
        /// TFLite's `half_pixel_centers` (not with `align_corners`).
        half_pixel_centers: bool,
    },
    /// PADV2: inputs `[input, paddings, constant_values?]`, padded with the constant (the
    /// output's zero point, or 0, without it).
    PadV2 {
        /// `(before, after)` per dimension.
        paddings: Vec<(usize, usize)>,
    },
    /// A broadcasting two-input op: inputs `[a, b]`.
    Binary {
        /// Which.
        op: BinaryOp,
        /// Fused activation (`None` for the ops without one).
        activation: Activation,
    },
    /// A comparison with broadcasting (EQUAL … GREATER_EQUAL): inputs `[a, b]`, a bool
    /// output.
    Comparison(Predicate),
    /// LOGICAL_AND with broadcasting: inputs `[a, b]`, bools.
    LogicalAnd,
    /// LOGICAL_OR with broadcasting: inputs `[a, b]`, bools.
    LogicalOr,
    /// LOGICAL_NOT: inputs `[x]`, bools.
    LogicalNot,
    /// SELECT_V2 with broadcasting: inputs `[condition, x, y]`.
    SelectV2,
    /// FILL: inputs `[dims, value]`, the output of shape `dims` filled with `value`.
    Fill,
    /// ZEROS_LIKE: inputs `[x]`, zeros of its shape.
    ZerosLike,
    /// BROADCAST_TO: inputs `[input, shape]`, the input broadcast to `shape`.
    BroadcastTo,
    /// SHAPE: inputs `[x]`, its dimensions as int32.
    Shape,
    /// SPACE_TO_BATCH_ND: inputs `[input, block_shape, paddings]`.
    SpaceToBatchNd {
        /// The block per spatial dimension.
        block: Vec<usize>,
        /// `(before, after)` per spatial dimension.
        pads: Vec<(usize, usize)>,
    },
    /// BATCH_TO_SPACE_ND: inputs `[input, block_shape, crops]`.
    BatchToSpaceNd {
        /// The block per spatial dimension.
        block: Vec<usize>,
        /// `(before, after)` per spatial dimension.
        crops: Vec<(usize, usize)>,
    },
    /// MIRROR_PAD: inputs `[input, paddings]`.
    MirrorPad {
        /// `(before, after)` per dimension.
        paddings: Vec<(usize, usize)>,
        /// REFLECT (the edge not repeated), else SYMMETRIC.
        reflect: bool,
    },
    /// TRANSPOSE_CONV over NHWC: inputs `[output_shape, weights, input, bias?]`, weights
    /// OHWI; the output tensor's shape is the output's.
    TransposeConv {
        /// Padding, computed over the output's height and width.
        padding: Padding,
        /// Stride.
        stride: Hw,
        /// Fused activation.
        activation: Activation,
    },
    /// BATCH_MATMUL: inputs `[lhs, rhs]`, ranks 2 to 5, batch dimensions broadcast.
    BatchMatmul {
        /// The lhs is stored `[…, depth, rows]` (its last two dimensions swapped).
        adj_x: bool,
        /// The rhs is stored `[…, cols, depth]`.
        adj_y: bool,
    },
    /// TFLite_Detection_PostProcess, the SSD models' custom op: inputs `[box_encodings,
    /// class_predictions, anchors]`, outputs `[boxes, classes, scores, num_detections]`.
    DetectionPostprocess(DetectionPostprocessOptions),
    /// RELU_N1_TO_1: inputs `[input]`, clamped to `[-1, 1]`.
    ReluN1To1,
    /// RELU_0_TO_1: inputs `[input]`, clamped to `[0, 1]`.
    Relu0To1,
    /// GELU: inputs `[input]`.
    Gelu {
        /// The tanh approximation rather than erf.
        approximate: bool,
    },
}

impl OpKind {
    /// The schema's name (`CONV_2D`).
    pub const fn name(&self) -> &'static str {
        match self {
            Self::FullyConnected(_) => "FULLY_CONNECTED",
            Self::Conv2d(_) => "CONV_2D",
            Self::DepthwiseConv2d(_) => "DEPTHWISE_CONV_2D",
            Self::AveragePool2d(_) => "AVERAGE_POOL_2D",
            Self::MaxPool2d(_) => "MAX_POOL_2D",
            Self::L2Pool2d(_) => "L2_POOL_2D",
            Self::Add { .. } => "ADD",
            Self::Mul { .. } => "MUL",
            Self::Softmax { .. } => "SOFTMAX",
            Self::LogSoftmax => "LOG_SOFTMAX",
            Self::Logistic => "LOGISTIC",
            Self::Tanh => "TANH",
            Self::LeakyRelu { .. } => "LEAKY_RELU",
            Self::Reshape => "RESHAPE",
            Self::Pad { .. } => "PAD",
            Self::Mean { .. } => "MEAN",
            Self::Transpose { .. } => "TRANSPOSE",
            Self::Concatenation { .. } => "CONCATENATION",
            Self::StridedSlice(_) => "STRIDED_SLICE",
            Self::Quantize => "QUANTIZE",
            Self::Dequantize => "DEQUANTIZE",
            Self::Cast => "CAST",
            Self::Elementwise(op) => op.name(),
            Self::Squeeze => "SQUEEZE",
            Self::ExpandDims => "EXPAND_DIMS",
            Self::Slice(_) => "SLICE",
            Self::Split { .. } => "SPLIT",
            Self::SplitV { .. } => "SPLIT_V",
            Self::Unpack { .. } => "UNPACK",
            Self::GatherNd => "GATHER_ND",
            Self::L2Normalization => "L2_NORMALIZATION",
            Self::Gather { .. } => "GATHER",
            Self::ArgMax { .. } => "ARG_MAX",
            Self::Reduce { op, .. } => op.name(),
            Self::ArgMin { .. } => "ARG_MIN",
            Self::Pack { .. } => "PACK",
            Self::DepthToSpace { .. } => "DEPTH_TO_SPACE",
            Self::SpaceToDepth { .. } => "SPACE_TO_DEPTH",
            Self::PadV2 { .. } => "PADV2",
            Self::ResizeNearestNeighbor { .. } => "RESIZE_NEAREST_NEIGHBOR",
            Self::ResizeBilinear { .. } => "RESIZE_BILINEAR",
            Self::Binary { op, .. } => op.name(),
            Self::Comparison(predicate) => match predicate {
                Predicate::Equal => "EQUAL",
                Predicate::NotEqual => "NOT_EQUAL",
                Predicate::Less => "LESS",
                Predicate::LessEqual => "LESS_EQUAL",
                Predicate::Greater => "GREATER",
                Predicate::GreaterEqual => "GREATER_EQUAL",
            },
            Self::LogicalAnd => "LOGICAL_AND",
            Self::LogicalOr => "LOGICAL_OR",
            Self::LogicalNot => "LOGICAL_NOT",
            Self::SelectV2 => "SELECT_V2",
            Self::Fill => "FILL",
            Self::ZerosLike => "ZEROS_LIKE",
            Self::BroadcastTo => "BROADCAST_TO",
            Self::Shape => "SHAPE",
            Self::MirrorPad { .. } => "MIRROR_PAD",
            Self::SpaceToBatchNd { .. } => "SPACE_TO_BATCH_ND",
            Self::BatchToSpaceNd { .. } => "BATCH_TO_SPACE_ND",
            Self::TransposeConv { .. } => "TRANSPOSE_CONV",
            Self::BatchMatmul { .. } => "BATCH_MATMUL",
            Self::DetectionPostprocess(_) => "TFLite_Detection_PostProcess",
            Self::ReluN1To1 => "RELU_N1_TO_1",
            Self::Relu0To1 => "RELU_0_TO_1",
            Self::Gelu { .. } => "GELU",
        }
    }

    /// True for an op whose output is its input's bytes unchanged (a view), so a memory plan
    /// may give both the same storage.
    pub const fn is_view(&self) -> bool {
        matches!(self, Self::Reshape | Self::Squeeze | Self::ExpandDims)
    }

    /// The options, as `padding=SAME stride=2x2 …` (empty where there are none).
    pub fn options(&self) -> OptionsDisplay<'_> {
        OptionsDisplay(self)
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// [`OpKind::options`]: the options of an op as `key=value` pairs.
pub struct OptionsDisplay<'k>(&'k OpKind);

fn padding(p: Padding) -> &'static str {
    match p {
        Padding::Same => "SAME",
        Padding::Valid => "VALID",
    }
}

impl fmt::Display for OptionsDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            OpKind::FullyConnected(o) => write!(
                f,
                "activation={} keep_num_dims={}",
                o.activation.name(),
                o.keep_num_dims
            ),
            OpKind::Conv2d(o) => write!(
                f,
                "padding={} stride={} dilation={} activation={}",
                padding(o.padding),
                o.stride,
                o.dilation,
                o.activation.name()
            ),
            OpKind::DepthwiseConv2d(o) => write!(
                f,
                "padding={} stride={} dilation={} multiplier={} activation={}",
                padding(o.padding),
                o.stride,
                o.dilation,
                o.depth_multiplier,
                o.activation.name()
            ),
            OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) | OpKind::L2Pool2d(o) => write!(
                f,
                "padding={} stride={} filter={} activation={}",
                padding(o.padding),
                o.stride,
                o.filter,
                o.activation.name()
            ),
            OpKind::Add { activation }
            | OpKind::Mul { activation }
            | OpKind::Binary { activation, .. } => {
                write!(f, "activation={}", activation.name())
            }
            OpKind::Softmax { beta } => write!(f, "beta={beta}"),
            OpKind::LeakyRelu { alpha } => write!(f, "alpha={alpha}"),
            OpKind::Pad { paddings } | OpKind::PadV2 { paddings } => {
                write!(f, "paddings={paddings:?}")
            }
            OpKind::Split { axis }
            | OpKind::SplitV { axis }
            | OpKind::Unpack { axis }
            | OpKind::Pack { axis }
            | OpKind::ArgMax { axis }
            | OpKind::ArgMin { axis } => write!(f, "axis={axis}"),
            OpKind::Gather { axis, batch_dims } => write!(f, "axis={axis} batch_dims={batch_dims}"),
            OpKind::ResizeNearestNeighbor {
                align_corners,
                half_pixel_centers,
            }
            | OpKind::ResizeBilinear {
                align_corners,
                half_pixel_centers,
            } => write!(
                f,
                "align_corners={align_corners} half_pixel_centers={half_pixel_centers}"
            ),
            OpKind::DepthToSpace { block } | OpKind::SpaceToDepth { block } => {
                write!(f, "block={block}")
            }
            OpKind::Mean { axes, keep_dims }
            | OpKind::Reduce {
                axes, keep_dims, ..
            } => {
                write!(f, "axes={axes:?} keep_dims={keep_dims}")
            }
            OpKind::Transpose { perm } => write!(f, "perm={perm:?}"),
            OpKind::Concatenation { axis, activation } => {
                write!(f, "axis={axis} activation={}", activation.name())
            }
            OpKind::StridedSlice(o) | OpKind::Slice(o) => write!(
                f,
                "begin={:?} end={:?} strides={:?} shrink={:?}",
                o.begin, o.end, o.strides, o.shrink
            ),
            OpKind::Logistic
            | OpKind::LogSoftmax
            | OpKind::Tanh
            | OpKind::Reshape
            | OpKind::Quantize
            | OpKind::Dequantize
            | OpKind::Cast
            | OpKind::Elementwise(_)
            | OpKind::Squeeze
            | OpKind::ExpandDims
            | OpKind::Comparison(_)
            | OpKind::LogicalAnd
            | OpKind::LogicalOr
            | OpKind::LogicalNot
            | OpKind::SelectV2
            | OpKind::Fill
            | OpKind::ZerosLike
            | OpKind::BroadcastTo
            | OpKind::Shape
            | OpKind::GatherNd
            | OpKind::L2Normalization => Ok(()),
            OpKind::SpaceToBatchNd { block, pads } => {
                write!(f, "block={block:?} paddings={pads:?}")
            }
            OpKind::BatchToSpaceNd { block, crops } => write!(f, "block={block:?} crops={crops:?}"),
            OpKind::MirrorPad { paddings, reflect } => write!(
                f,
                "paddings={paddings:?} mode={}",
                if *reflect { "REFLECT" } else { "SYMMETRIC" }
            ),
            OpKind::TransposeConv {
                padding: p,
                stride,
                activation,
            } => write!(
                f,
                "padding={} stride={stride} activation={}",
                padding(*p),
                activation.name()
            ),
            OpKind::BatchMatmul { adj_x, adj_y } => write!(f, "adj_x={adj_x} adj_y={adj_y}"),
            OpKind::DetectionPostprocess(o) => o.fmt(f),
            OpKind::ReluN1To1 | OpKind::Relu0To1 => Ok(()),
            OpKind::Gelu { approximate } => write!(f, "approximate={approximate}"),
        }
    }
}

/// One op of the graph, in execution order.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// The op's index in the subgraph (its position in [`Graph::ops`](crate::Graph::ops)).
    pub index: usize,
    /// What it computes, with its options.
    pub kind: OpKind,
    /// Its inputs; `None` only for an absent optional input (a FULLY_CONNECTED, CONV_2D or
    /// DEPTHWISE_CONV_2D without bias).
    pub inputs: Vec<Option<TensorId>>,
    /// Its outputs (several for SPLIT, SPLIT_V and UNPACK, one for every other operator).
    pub outputs: Vec<TensorId>,
}

impl Op {
    /// The tensors it reads, skipping absent optional inputs.
    pub fn input_ids(&self) -> impl Iterator<Item = TensorId> + '_ {
        self.inputs.iter().flatten().copied()
    }
}
