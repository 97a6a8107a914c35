//! The TFLite op set's kernels: `ember-kernels`' arithmetic in WGSL, with its parameter
//! words (any number up to [`SpirvKernel::max_params`]) in the push block.

use crate::kernel::{Spec, SpirvKernel};
use crate::{spirv, KernelError};
use ember_kernels::activation_f32::{EluF32, HardSwishF32, Relu6F32, ReluF32};
use ember_kernels::add::AddS8;
use ember_kernels::arg_min_max::ArgMinMax;
use ember_kernels::arithmetic_f32::{DivF32, SquaredDifferenceF32, SubF32};
use ember_kernels::batch_matmul::{BatchMatmulF32, BatchMatmulS8};
use ember_kernels::bounded_relu::{Relu0To1F32, ReluN1To1F32};
use ember_kernels::cast::Cast;
use ember_kernels::comparison::Comparison;
use ember_kernels::concatenation::Concatenation;
use ember_kernels::conv2d::{Conv2dF32, Conv2dS8};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dF32, DepthwiseConv2dS8};
use ember_kernels::dequantize::{DequantizeS16F32, DequantizeS8F32, DequantizeU8F32};
use ember_kernels::div_s8::DivS8;
use ember_kernels::floor_div_mod::{FloorDivF32, FloorModF32};
use ember_kernels::fully_connected::{FullyConnectedF32, FullyConnectedS8};
use ember_kernels::gather::Gather;
use ember_kernels::gather_nd::GatherNd;
use ember_kernels::gelu::{GeluF32, GeluTanhF32};
use ember_kernels::hard_swish::HardSwishS8;
use ember_kernels::l2_normalization::{L2NormalizationF32, L2NormalizationS8};
use ember_kernels::leaky_relu::{LeakyReluF32, LeakyReluS8};
use ember_kernels::log_softmax::LogSoftmaxF32;
use ember_kernels::log_softmax_s8::LogSoftmaxS8;
use ember_kernels::logical::Logical;
use ember_kernels::logistic::{LogisticF32, LogisticS8};
use ember_kernels::lut_s8::LutS8;
use ember_kernels::math_f32::{
    AbsF32, CeilF32, CosF32, ExpF32, FloorF32, LogF32, NegF32, RoundF32, RsqrtF32, SinF32, SqrtF32,
    SquareF32,
};
use ember_kernels::maximum_minimum::{MaximumF32, MaximumS8, MinimumF32, MinimumS8};
use ember_kernels::mean::{MeanF32, MeanS8, SumS8};
use ember_kernels::mirror_pad::MirrorPad;
use ember_kernels::mul::MulS8;
use ember_kernels::pad::Pad;
use ember_kernels::pooling::{
    AveragePool2dF32, AveragePool2dS8, L2Pool2dF32, MaxPool2dF32, MaxPool2dS8,
};
use ember_kernels::prelu::{PreluF32, PreluS8};
use ember_kernels::quantize::{
    QuantizeF32S16, QuantizeF32S8, RequantizeS8, RequantizeS8U8, RequantizeU8S8,
};
use ember_kernels::reduce::{ReduceMaxF32, ReduceMaxS8, ReduceMinF32, ReduceMinS8, SumF32};
use ember_kernels::requantize_int::RequantizeInt;
use ember_kernels::resize_bilinear::{ResizeBilinearF32, ResizeBilinearS8};
use ember_kernels::resize_nearest_neighbor::ResizeNearestNeighbor;
use ember_kernels::select::Select;
use ember_kernels::separable_conv2d::SeparableConv2dS8;
use ember_kernels::softmax::{SoftmaxS8, SoftmaxS8S16};
use ember_kernels::space_batch::SpaceBatch;
use ember_kernels::squared_difference_s8::SquaredDifferenceS8;
use ember_kernels::strided_slice::StridedSlice;
use ember_kernels::sub::SubS8;
use ember_kernels::tanh::{TanhF32, TanhS8};
use ember_kernels::transpose::Transpose;
use ember_kernels::transpose_conv::{TransposeConvF32, TransposeConvS8};
use ember_kernels::{KernelParams, Words};

/// `P`'s decode and length check, as hal-local's kernel runs them.
macro_rules! params_of {
    ($params:ty) => {{
        fn check(constants: &[u32], lens: &[usize]) -> Result<usize, KernelError> {
            let mut words = Words::new(constants);
            let p = <$params>::decode(&mut words)?;
            p.check(lens)?;
            Ok(constants.len() - words.rest().len())
        }
        check
    }};
}

/// An op's kernel: its SPIR-V `words`, and from `P`, its parameters in `ember-kernels`, the
/// name, the bindings and `params` (`params_of!(P)`).
const fn op<P: KernelParams>(
    words: &'static [u32],
    params: fn(&[u32], &[usize]) -> Result<usize, KernelError>,
) -> SpirvKernel {
    SpirvKernel {
        name: P::KERNEL,
        entry: "main",
        words,
        bindings: P::BINDINGS,
        output_last: P::OUTPUT_LAST,
        lanes_per_word: |_| 1,
        tiles: None,
        spec: Spec::Params(params),
    }
}

/// [`op`], a workgroup per output word.
const fn op_per_group<P: KernelParams>(
    words: &'static [u32],
    params: fn(&[u32], &[usize]) -> Result<usize, KernelError>,
) -> SpirvKernel {
    SpirvKernel {
        lanes_per_word: |_| crate::WORKGROUP_SIZE,
        ..op::<P>(words, params)
    }
}

/// Parameter word `i` of `p` (0 where missing).
fn word(p: &[u32], i: usize) -> u64 {
    u64::from(p.get(i).copied().unwrap_or(0))
}

/// `conv2d_s8`'s choice (its WGSL's `split_lanes`): invocations per output word such that
/// each takes about 8 taps in chunks of four channels (2 taps where the summed depth is not
/// a multiple of 4), a power of two up to 64, where the output takes at most 8,192 words and
/// that makes at least 4; otherwise 1.
fn conv2d_lanes(p: &[u32]) -> u32 {
    let outputs = word(p, 0) * word(p, 7) * word(p, 8) * word(p, 9);
    let taps = word(p, 4) * word(p, 5) * word(p, 6);
    // The depth each sum runs over: the input's where the filter is HWIO, else the filter's.
    let depth = if word(p, 21) != 0 {
        word(p, 3)
    } else {
        word(p, 6)
    };
    let share = if depth % 4 == 0 { taps / 8 } else { taps / 2 };
    if outputs.div_ceil(4) > 8192 || share < 4 {
        1
    } else {
        1u32 << share.ilog2().min(6)
    }
}

/// `depthwise_conv2d_s8`'s choice (its WGSL's `split_lanes`): 8 invocations per output word
/// where the output takes at most 8,192 words and the filter at least 8 taps, otherwise 1.
fn depthwise_lanes(p: &[u32]) -> u32 {
    let outputs = word(p, 0) * word(p, 7) * word(p, 8) * word(p, 3) * word(p, 4);
    if outputs.div_ceil(4) <= 8192 && word(p, 5) * word(p, 6) >= 8 {
        8
    } else {
        1
    }
}

/// `average_pool2d_s8`'s choice (its WGSL's `SPLIT_MAX_WORDS`, `SPLIT_MIN_CELLS`): a
/// workgroup per output word where the output takes at most 4,096 words and each window at
/// least 16 cells.
fn pool_lanes(p: &[u32]) -> u32 {
    let outputs = word(p, 0) * word(p, 4) * word(p, 5) * word(p, 3);
    if outputs.div_ceil(4) <= 4096 && word(p, 6) * word(p, 7) >= 16 {
        crate::WORKGROUP_SIZE
    } else {
        1
    }
}

/// `separable_conv2d_s8`'s tiles (its WGSL's `tiling`), its output `base` bytes into its
/// range: each workgroup takes a few pixels and, where the output depth and `base` are
/// multiples of 4, a chunk of their output channels; `per_word` invocations share each output
/// word's sum so that each takes about 2 words of middle values.
fn separable_tiles(p: &[u32], base: u64) -> u64 {
    let pixels = word(p, 0) * word(p, 7) * word(p, 8);
    let middle_words = (word(p, 3) * word(p, 4)).div_ceil(4).max(1);
    let out_depth = word(p, 20).max(1);
    let aligned = base % 4 == 0 && out_depth % 4 == 0;
    let per_word = (1u64 << (middle_words / 2).max(1).ilog2()).min(32);
    let words = u64::from(crate::WORKGROUP_SIZE) / per_word;
    let channels = if aligned && out_depth > 4 * words {
        4 * words
    } else {
        out_depth
    };
    let past = if aligned { 0 } else { 3u64.div_ceil(out_depth) };
    let most = (1024 / middle_words).saturating_sub(past).max(1);
    let tile_pixels = (words / channels.div_ceil(4)).clamp(1, most);
    pixels.div_ceil(tile_pixels) * out_depth.div_ceil(channels)
}

/// Every op kernel (those of `build.rs`'s `ops()`, in its order).
pub(crate) const OPS: [SpirvKernel; 100] = [
    op_per_group::<FullyConnectedS8>(spirv::FULLY_CONNECTED_S8, params_of!(FullyConnectedS8)),
    SpirvKernel {
        lanes_per_word: conv2d_lanes,
        ..op::<Conv2dS8>(spirv::CONV2D_S8, params_of!(Conv2dS8))
    },
    SpirvKernel {
        lanes_per_word: depthwise_lanes,
        ..op::<DepthwiseConv2dS8>(spirv::DEPTHWISE_CONV2D_S8, params_of!(DepthwiseConv2dS8))
    },
    SpirvKernel {
        tiles: Some(separable_tiles),
        ..op::<SeparableConv2dS8>(spirv::SEPARABLE_CONV2D_S8, params_of!(SeparableConv2dS8))
    },
    SpirvKernel {
        lanes_per_word: pool_lanes,
        ..op::<AveragePool2dS8>(spirv::AVERAGE_POOL2D_S8, params_of!(AveragePool2dS8))
    },
    op::<MaxPool2dS8>(spirv::MAX_POOL2D_S8, params_of!(MaxPool2dS8)),
    op::<SoftmaxS8>(spirv::SOFTMAX_S8, params_of!(SoftmaxS8)),
    op::<SoftmaxS8S16>(spirv::SOFTMAX_S8_S16, params_of!(SoftmaxS8S16)),
    op::<AddS8>(spirv::ADD_S8, params_of!(AddS8)),
    op::<MulS8>(spirv::MUL_S8, params_of!(MulS8)),
    op::<FullyConnectedF32>(spirv::FULLY_CONNECTED_F32, params_of!(FullyConnectedF32)),
    op::<Conv2dF32>(spirv::CONV2D_F32, params_of!(Conv2dF32)),
    op::<DepthwiseConv2dF32>(spirv::DEPTHWISE_CONV2D_F32, params_of!(DepthwiseConv2dF32)),
    op::<AveragePool2dF32>(spirv::AVERAGE_POOL2D_F32, params_of!(AveragePool2dF32)),
    op::<MaxPool2dF32>(spirv::MAX_POOL2D_F32, params_of!(MaxPool2dF32)),
    op::<Pad>(spirv::PAD, params_of!(Pad)),
    op::<Transpose>(spirv::TRANSPOSE, params_of!(Transpose)),
    op::<StridedSlice>(spirv::STRIDED_SLICE, params_of!(StridedSlice)),
    op::<RequantizeS8>(spirv::REQUANTIZE_S8, params_of!(RequantizeS8)),
    op::<DequantizeS8F32>(spirv::DEQUANTIZE_S8_F32, params_of!(DequantizeS8F32)),
    op::<LogisticF32>(spirv::LOGISTIC_F32, params_of!(LogisticF32)),
    op::<TanhF32>(spirv::TANH_F32, params_of!(TanhF32)),
    op::<LogisticS8>(spirv::LOGISTIC_S8, params_of!(LogisticS8)),
    op::<TanhS8>(spirv::TANH_S8, params_of!(TanhS8)),
    op::<MeanS8>(spirv::MEAN_S8, params_of!(MeanS8)),
    op::<MeanF32>(spirv::MEAN_F32, params_of!(MeanF32)),
    op::<QuantizeF32S8>(spirv::QUANTIZE_F32_S8, params_of!(QuantizeF32S8)),
    op::<Concatenation>(spirv::CONCATENATION, params_of!(Concatenation)),
    op::<SubF32>(spirv::SUB_F32, params_of!(SubF32)),
    op::<DivF32>(spirv::DIV_F32, params_of!(DivF32)),
    op::<SquaredDifferenceF32>(
        spirv::SQUARED_DIFFERENCE_F32,
        params_of!(SquaredDifferenceF32),
    ),
    op::<MaximumS8>(spirv::MAXIMUM_S8, params_of!(MaximumS8)),
    op::<MaximumF32>(spirv::MAXIMUM_F32, params_of!(MaximumF32)),
    op::<MinimumS8>(spirv::MINIMUM_S8, params_of!(MinimumS8)),
    op::<MinimumF32>(spirv::MINIMUM_F32, params_of!(MinimumF32)),
    op::<AbsF32>(spirv::ABS_F32, params_of!(AbsF32)),
    op::<NegF32>(spirv::NEG_F32, params_of!(NegF32)),
    op::<SquareF32>(spirv::SQUARE_F32, params_of!(SquareF32)),
    op::<SqrtF32>(spirv::SQRT_F32, params_of!(SqrtF32)),
    op::<RsqrtF32>(spirv::RSQRT_F32, params_of!(RsqrtF32)),
    op::<ExpF32>(spirv::EXP_F32, params_of!(ExpF32)),
    op::<LogF32>(spirv::LOG_F32, params_of!(LogF32)),
    op::<FloorF32>(spirv::FLOOR_F32, params_of!(FloorF32)),
    op::<CeilF32>(spirv::CEIL_F32, params_of!(CeilF32)),
    op::<RoundF32>(spirv::ROUND_F32, params_of!(RoundF32)),
    op::<SinF32>(spirv::SIN_F32, params_of!(SinF32)),
    op::<CosF32>(spirv::COS_F32, params_of!(CosF32)),
    op::<ReluF32>(spirv::RELU_OP_F32, params_of!(ReluF32)),
    op::<Relu6F32>(spirv::RELU6_F32, params_of!(Relu6F32)),
    op::<HardSwishF32>(spirv::HARD_SWISH_F32, params_of!(HardSwishF32)),
    op::<EluF32>(spirv::ELU_F32, params_of!(EluF32)),
    op::<RequantizeU8S8>(spirv::REQUANTIZE_U8_S8, params_of!(RequantizeU8S8)),
    op::<RequantizeS8U8>(spirv::REQUANTIZE_S8_U8, params_of!(RequantizeS8U8)),
    op::<DequantizeU8F32>(spirv::DEQUANTIZE_U8_F32, params_of!(DequantizeU8F32)),
    op::<LeakyReluS8>(spirv::LEAKY_RELU_S8, params_of!(LeakyReluS8)),
    op::<LeakyReluF32>(spirv::LEAKY_RELU_F32, params_of!(LeakyReluF32)),
    op::<ResizeNearestNeighbor>(
        spirv::RESIZE_NEAREST_NEIGHBOR,
        params_of!(ResizeNearestNeighbor),
    ),
    op::<Cast>(spirv::CAST, params_of!(Cast)),
    op::<Gather>(spirv::GATHER, params_of!(Gather)),
    op::<ArgMinMax>(spirv::ARG_MIN_MAX, params_of!(ArgMinMax)),
    op::<SumF32>(spirv::SUM_F32, params_of!(SumF32)),
    op::<ReduceMaxS8>(spirv::REDUCE_MAX_S8, params_of!(ReduceMaxS8)),
    op::<ReduceMaxF32>(spirv::REDUCE_MAX_F32, params_of!(ReduceMaxF32)),
    op::<ReduceMinS8>(spirv::REDUCE_MIN_S8, params_of!(ReduceMinS8)),
    op::<ReduceMinF32>(spirv::REDUCE_MIN_F32, params_of!(ReduceMinF32)),
    op::<LogSoftmaxF32>(spirv::LOG_SOFTMAX_F32, params_of!(LogSoftmaxF32)),
    op::<HardSwishS8>(spirv::HARD_SWISH_S8, params_of!(HardSwishS8)),
    op::<LutS8>(spirv::LUT_S8, params_of!(LutS8)),
    op::<PreluS8>(spirv::PRELU_S8, params_of!(PreluS8)),
    op::<PreluF32>(spirv::PRELU_F32, params_of!(PreluF32)),
    op::<Comparison>(spirv::COMPARISON, params_of!(Comparison)),
    op::<Logical>(spirv::LOGICAL, params_of!(Logical)),
    op::<Select>(spirv::SELECT, params_of!(Select)),
    op::<SubS8>(spirv::SUB_S8, params_of!(SubS8)),
    op::<MirrorPad>(spirv::MIRROR_PAD, params_of!(MirrorPad)),
    op::<SpaceBatch>(spirv::SPACE_BATCH, params_of!(SpaceBatch)),
    op::<GatherNd>(spirv::GATHER_ND, params_of!(GatherNd)),
    op::<L2NormalizationS8>(spirv::L2_NORMALIZATION_S8, params_of!(L2NormalizationS8)),
    op::<L2NormalizationF32>(spirv::L2_NORMALIZATION_F32, params_of!(L2NormalizationF32)),
    op::<L2Pool2dF32>(spirv::L2_POOL2D_F32, params_of!(L2Pool2dF32)),
    op::<ResizeBilinearS8>(spirv::RESIZE_BILINEAR_S8, params_of!(ResizeBilinearS8)),
    op::<ResizeBilinearF32>(spirv::RESIZE_BILINEAR_F32, params_of!(ResizeBilinearF32)),
    op::<TransposeConvS8>(spirv::TRANSPOSE_CONV_S8, params_of!(TransposeConvS8)),
    op::<TransposeConvF32>(spirv::TRANSPOSE_CONV_F32, params_of!(TransposeConvF32)),
    op::<BatchMatmulS8>(spirv::BATCH_MATMUL_S8, params_of!(BatchMatmulS8)),
    op::<BatchMatmulF32>(spirv::BATCH_MATMUL_F32, params_of!(BatchMatmulF32)),
    op::<FloorDivF32>(spirv::FLOOR_DIV_F32, params_of!(FloorDivF32)),
    op::<FloorModF32>(spirv::FLOOR_MOD_F32, params_of!(FloorModF32)),
    op::<SumS8>(spirv::SUM_S8, params_of!(SumS8)),
    op::<QuantizeF32S16>(spirv::QUANTIZE_F32_S16, params_of!(QuantizeF32S16)),
    op::<DequantizeS16F32>(spirv::DEQUANTIZE_S16_F32, params_of!(DequantizeS16F32)),
    op::<RequantizeInt>(spirv::REQUANTIZE_INT, params_of!(RequantizeInt)),
    op::<LogSoftmaxS8>(spirv::LOG_SOFTMAX_S8, params_of!(LogSoftmaxS8)),
    op::<DivS8>(spirv::DIV_S8, params_of!(DivS8)),
    op::<SquaredDifferenceS8>(
        spirv::SQUARED_DIFFERENCE_S8,
        params_of!(SquaredDifferenceS8),
    ),
    op::<ember_kernels::detection_postprocess::DetectionPostprocess>(
        spirv::DETECTION_POSTPROCESS,
        params_of!(ember_kernels::detection_postprocess::DetectionPostprocess),
    ),
    op::<ReluN1To1F32>(spirv::RELU_N1_TO_1_F32, params_of!(ReluN1To1F32)),
    op::<Relu0To1F32>(spirv::RELU_0_TO_1_F32, params_of!(Relu0To1F32)),
    op::<GeluF32>(spirv::GELU_F32, params_of!(GeluF32)),
    op::<GeluTanhF32>(spirv::GELU_TANH_F32, params_of!(GeluTanhF32)),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::MAX_PARAMS;
    use crate::{find, PushConstants};
    use ember_kernels::fully_connected::FullyConnectedShape;
    use hal_core::contract::BindingFacts;

    #[test]
    fn table_is_complete_and_found() {
        let names = [
            "fully_connected_s8",
            "conv2d_s8",
            "depthwise_conv2d_s8",
            "separable_conv2d_s8",
            "average_pool2d_s8",
            "max_pool2d_s8",
            "softmax_s8",
            "softmax_s8_s16",
            "add_s8",
            "mul_s8",
            "fully_connected_f32",
            "conv2d_f32",
            "depthwise_conv2d_f32",
            "average_pool2d_f32",
            "max_pool2d_f32",
            "pad",
            "transpose",
            "strided_slice",
            "requantize_s8",
            "dequantize_s8_f32",
            "logistic_f32",
            "tanh_f32",
            "logistic_s8",
            "tanh_s8",
            "mean_s8",
            "mean_f32",
            "quantize_f32_s8",
            "concatenation",
            "sub_f32",
            "div_f32",
            "squared_difference_f32",
            "maximum_s8",
            "maximum_f32",
            "minimum_s8",
            "minimum_f32",
            "abs_f32",
            "neg_f32",
            "square_f32",
            "sqrt_f32",
            "rsqrt_f32",
            "exp_f32",
            "log_f32",
            "floor_f32",
            "ceil_f32",
            "round_f32",
            "sin_f32",
            "cos_f32",
            "relu_op_f32",
            "relu6_f32",
            "hard_swish_f32",
            "elu_f32",
            "requantize_u8_s8",
            "requantize_s8_u8",
            "dequantize_u8_f32",
            "leaky_relu_s8",
            "leaky_relu_f32",
            "resize_nearest_neighbor",
            "cast",
            "gather",
            "arg_min_max",
            "sum_f32",
            "reduce_max_s8",
            "reduce_max_f32",
            "reduce_min_s8",
            "reduce_min_f32",
            "log_softmax_f32",
            "hard_swish_s8",
            "lut_s8",
            "prelu_s8",
            "prelu_f32",
            "comparison",
            "logical",
            "select",
            "sub_s8",
            "mirror_pad",
            "space_batch",
            "gather_nd",
            "l2_normalization_s8",
            "l2_normalization_f32",
            "l2_pool2d_f32",
            "resize_bilinear_s8",
            "resize_bilinear_f32",
            "transpose_conv_s8",
            "transpose_conv_f32",
            "batch_matmul_s8",
            "batch_matmul_f32",
            "floor_div_f32",
            "floor_mod_f32",
            "sum_s8",
            "quantize_f32_s16",
            "dequantize_s16_f32",
            "requantize_int",
            "log_softmax_s8",
            "div_s8",
            "squared_difference_s8",
            "detection_postprocess",
            "relu_n1_to_1_f32",
            "relu_0_to_1_f32",
            "gelu_f32",
            "gelu_tanh_f32",
        ];
        // The op set follows the built-in kernels in the one table.
        let ops = &crate::KERNELS[crate::builtin_kernels::BUILTINS.len()..];
        assert_eq!(ops.len(), names.len());
        for (k, name) in ops.iter().zip(names) {
            assert_eq!(k.name, name);
            assert!(core::ptr::eq(find(name).expect("listed"), k));
            assert_eq!(k.bindings.iter().filter(|b| b.written).count(), 1, "{name}");
            if k.output_last {
                assert!(k.bindings.last().is_some_and(|b| b.written), "{name}");
            }
            assert_eq!(k.words[0], 0x0723_0203, "{name}");
            // No op kernel shadows a built-in kernel.
            assert!(ember_kernels::builtin::find(name).is_none(), "{name}");
            assert!(
                k.contract().is_none() && !k.runs_on_dispatch_grid(),
                "{name}"
            );
        }
        assert!(find("nope").is_none());
    }

    fn fact(offset: u64, len: u64, writable: bool) -> BindingFacts {
        BindingFacts {
            offset,
            len,
            writable,
        }
    }

    fn fc() -> (Vec<u32>, Vec<BindingFacts>) {
        let p = FullyConnectedS8 {
            shape: FullyConnectedShape {
                batches: 1,
                accum_depth: 8,
                output_depth: 3,
                has_bias: true,
            },
            input_offset: 128,
            filter_offset: 0,
            output_offset: -5,
            act_min: -128,
            act_max: 127,
            per_channel: true,
        };
        let mut words = Vec::new();
        p.encode(&mut words);
        let facts = vec![
            fact(1, 8, false),
            fact(3, 24, false),
            fact(16, 12, false),
            fact(32, 12, false),
            fact(48, 12, false),
            fact(65, 3, true),
        ];
        (words, facts)
    }

    /// The check is ember-kernels' decode and length check, then each binding's presence,
    /// write access and alignment, as hal-local's kernel checks its slices.
    #[test]
    fn check_answers_as_hal_local() {
        let k = find("fully_connected_s8").expect("listed");
        let (words, facts) = fc();
        assert_eq!(k.check(&words, &facts), Ok(10));
        // Extra words are ignored, as hal-local's decode ignores them.
        let mut more = words.clone();
        more.push(7);
        assert_eq!(k.check(&more, &facts), Ok(10));
        assert!(matches!(
            k.check(&words[..9], &facts),
            Err(KernelError::MissingConstants { .. })
        ));
        let mut short = facts.clone();
        short[5].len = 2;
        assert!(matches!(
            k.check(&words, &short),
            Err(KernelError::BindingTooSmall { index: 5, .. })
        ));
        let mut read_only = facts.clone();
        read_only[5].writable = false;
        assert_eq!(
            k.check(&words, &read_only),
            Err(KernelError::ReadOnly { index: 5 })
        );
        let mut misaligned = facts.clone();
        misaligned[3].offset = 34;
        assert_eq!(
            k.check(&words, &misaligned),
            Err(KernelError::Misaligned {
                index: 3,
                alignment: 4
            })
        );
        assert!(matches!(
            k.check(&words, &facts[..5]),
            Err(KernelError::MissingBinding { index: 5, .. })
        ));
    }

    /// Concatenation writes its last binding, after as many inputs as its parameters count.
    #[test]
    fn concatenation_writes_its_last_binding() {
        let k = find("concatenation").expect("listed");
        let p = Concatenation::new(1, &[2, 5], &[2, 3], 1).expect("valid");
        let mut words = Vec::new();
        p.encode(&mut words);
        let facts = [fact(1, 4, false), fact(3, 6, false), fact(5, 10, true)];
        assert_eq!(k.check(&words, &facts), Ok(words.len()));
        assert_eq!(k.output(facts.len()), 2);
        let mut read_only = facts;
        read_only[2].writable = false;
        assert_eq!(
            k.check(&words, &read_only),
            Err(KernelError::ReadOnly { index: 2 })
        );
        // An input need not be writable; one binding more or fewer is refused.
        let more = [facts[0], facts[1], facts[2], fact(0, 10, true)];
        assert!(matches!(k.check(&words, &more), Err(KernelError::Shape(_))));
        assert!(matches!(
            k.check(&words, &facts[..2]),
            Err(KernelError::MissingBinding { index: 2, .. })
        ));
        // The grid covers the output's words.
        assert_eq!(k.grid(&words, 5, 10), [1, 1, 1]);
    }

    #[test]
    fn push_block_and_grid() {
        let fc = find("fully_connected_s8").expect("listed");
        let params: Vec<u32> = (10..40).collect();
        let pc = PushConstants::new(fc, &[1, 2, 3, 4, 5, 6, 7], &params);
        let words = pc.words();
        assert_eq!(words[..6], [1, 2, 3, 4, 5, 6]);
        assert_eq!(words[6..], params[..26]);
        assert_eq!(fc.max_params(), MAX_PARAMS);
        // Concatenation: an offset word for each of its 11 bindings, then 21 parameters.
        let concat = find("concatenation").expect("listed");
        let pc = PushConstants::new(concat, &[1, 2, 3], &params);
        let words = pc.words();
        assert_eq!(words[..11], [1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(words[11..], params[..21]);
        assert_eq!(concat.max_params(), 21);
        // Its most parameter words (4, then one per input) fit.
        let mut most = Vec::new();
        Concatenation::new(1, &[1, 10], &[1; 10], 1)
            .expect("ten inputs")
            .encode(&mut most);
        assert!(most.len() <= concat.max_params());
        // One invocation per output word, at least one workgroup, at most 65,535.
        let pool = find("average_pool2d_s8").expect("listed");
        assert_eq!(pool.grid(&[], 0, 0), [1, 1, 1]);
        assert_eq!(pool.grid(&[], 3, 256), [2, 1, 1]);
        assert_eq!(pool.grid(&[], 0, 256), [1, 1, 1]);
        assert_eq!(pool.grid(&[], 0, 1 << 40), [65_535, 1, 1]);
        // A workgroup per word.
        assert_eq!(fc.grid(&[], 0, 10), [3, 1, 1]);
        assert_eq!(fc.grid(&[], 1, 3), [1, 1, 1]);
        // A workgroup per tile: person_detect's first separable layer (48×48 pixels, 8
        // middle channels, 16 out: 16 pixels a tile) and a later one (6×6, 128 and 128: a
        // pixel and 16 channels a tile); with 3 output channels a tile takes all of a pixel's,
        // 4 pixels a tile.
        let separable = find("separable_conv2d_s8").expect("listed");
        let words = |hw: u32, depth: u32, out: u32| {
            let mut p = vec![1, hw, hw, depth, 1, 3, 3, hw, hw, 1, 1, 1, 1, 1, 1, 1];
            p.extend([0, 0, -128i32 as u32, 127, out, 0, 0, -128i32 as u32, 127]);
            p
        };
        assert_eq!(separable.grid(&words(48, 8, 16), 0, 0), [144, 1, 1]);
        assert_eq!(separable.grid(&words(6, 128, 128), 0, 0), [288, 1, 1]);
        assert_eq!(separable.grid(&words(6, 128, 3), 4, 0), [9, 1, 1]);
    }

    /// Conv2dS8's parameter words for a stride-1 "same" convolution.
    fn conv(hw: u32, depth: u32, filter: u32, out_depth: u32, hwio: bool) -> Vec<u32> {
        let mut p = vec![1, hw, hw, depth, filter, filter, depth, hw, hw, out_depth];
        p.extend([
            1,
            1,
            1,
            1,
            filter / 2,
            filter / 2,
            1,
            0,
            0,
            0,
            0,
            u32::from(hwio),
        ]);
        p
    }

    #[test]
    fn long_sums_over_few_outputs_are_shared() {
        let lanes = |name: &str, p: &[u32]| (find(name).expect("listed").lanes_per_word)(p);
        // About 8 taps per invocation in chunks of four channels: ResNet-8's first blocks
        // (144 taps), a 128-channel pointwise layer, a 256-channel one.
        assert_eq!(lanes("conv2d_s8", &conv(32, 16, 3, 16, true)), 16);
        assert_eq!(lanes("conv2d_s8", &conv(6, 128, 1, 128, false)), 16);
        assert_eq!(lanes("conv2d_s8", &conv(3, 256, 1, 256, true)), 32);
        assert_eq!(lanes("conv2d_s8", &conv(1, 1024, 1, 4, true)), 64);
        // About 2 taps each where the depth is not a multiple of 4 (kws's first layer has
        // 40 taps over one channel); none where each would get fewer than 4 or the output
        // is large.
        let mut kws = conv(25, 1, 1, 64, true);
        (kws[2], kws[8], kws[4], kws[5]) = (5, 5, 10, 4);
        assert_eq!(lanes("conv2d_s8", &kws), 16);
        assert_eq!(lanes("conv2d_s8", &conv(48, 8, 1, 16, true)), 1);
        assert_eq!(lanes("conv2d_s8", &conv(96, 64, 3, 64, true)), 1);
        // Depthwise: 8 per word for a 3x3 filter over a small output; pools: a workgroup
        // per word for a large window over few outputs.
        let dw = [
            1,
            12,
            12,
            64,
            1,
            3,
            3,
            12,
            12,
            1,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            0,
            -128i32 as u32,
            127,
        ];
        assert_eq!(lanes("depthwise_conv2d_s8", &dw), 8);
        let pool = [1, 25, 5, 64, 1, 1, 25, 5, 1, 1, 0, 0, -128i32 as u32, 127];
        assert_eq!(lanes("average_pool2d_s8", &pool), 64);
        let small = [1, 8, 8, 64, 4, 4, 2, 2, 2, 2, 0, 0, -128i32 as u32, 127];
        assert_eq!(lanes("average_pool2d_s8", &small), 1);
    }
}
