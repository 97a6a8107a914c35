//! The kernels of the TFLite op set: `ember-kernels`' reference arithmetic behind
//! [`Entry::Exclusive`] entries (plain slices). Each entry decodes its parameters and
//! checks its bindings' lengths against the contract `ember-kernels` declares before it
//! touches a byte; the arithmetic re-checks the slices it is given and never panics.
//!
//! An op that lowers to a built-in kernel runs that kernel, listed here too: the float
//! SOFTMAX is `softmax_f32` with the options' `beta`, the float ADD `add_f32` given
//! `ember_kernels::add::AddF32`'s words, the float MUL `mul_f32` given
//! `ember_kernels::mul::MulF32`'s.

/// The float ADD: the built-in [`add_f32`](super::elementwise::add_f32), given words.
pub use super::elementwise::ADD_F32;
/// The float MUL: the built-in [`mul_f32`](super::elementwise::mul_f32), given words.
pub use super::elementwise::MUL_F32;
/// The float SOFTMAX: the built-in [`softmax_f32`](super::softmax::softmax_f32).
pub use super::softmax::SOFTMAX_F32;
use super::KernelPath;
use crate::kernel::{elements, elements_mut, Bytes, Element, Entry, Exclusive, Kernel, Writes};
use ember_kernels::activation_f32::{EluF32, HardSwishF32, Relu6F32, ReluF32};
use ember_kernels::add::AddS8;
use ember_kernels::arg_min_max::ArgMinMax;
use ember_kernels::arithmetic_f32::{DivF32, SquaredDifferenceF32, SubF32};
use ember_kernels::batch_matmul::{BatchMatmulF32, BatchMatmulS8};
use ember_kernels::bounded_relu::{Relu0To1F32, ReluN1To1F32};
use ember_kernels::cast::Cast;
use ember_kernels::comparison::Comparison;
use ember_kernels::concatenation::{Concatenation, MAX_INPUTS};
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
use ember_kernels::scratch::Scratch;
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
pub use ember_kernels::TunedVariant;
use ember_kernels::{written_binding, KernelError, KernelParams, Words};

/// Parameters decoded from a dispatch's push constants.
fn params<P: KernelParams>(wg: &Exclusive<'_, '_>) -> Result<P, KernelError> {
    P::decode(&mut Words::new(wg.constants))
}

/// Binding `index` of `bindings`, or the error that names it.
fn binding<'s, 'b>(
    bindings: &'s mut [Bytes<'b>],
    index: usize,
) -> Result<&'s mut Bytes<'b>, KernelError> {
    let bound = bindings.len() as u32;
    bindings.get_mut(index).ok_or(KernelError::MissingBinding {
        index: index as u32,
        bound,
    })
}

/// Bindings 0 (read) and 1 (written) as elements.
fn input_output<'s, I: Element, O: Element>(
    bindings: &'s mut [Bytes<'_>],
) -> Result<(&'s [I], &'s mut [O]), KernelError> {
    let [input, output, ..] = bindings else {
        return Err(KernelError::MissingBinding {
            index: 1,
            bound: bindings.len() as u32,
        });
    };
    Ok((
        elements(input.bytes(), 0)?,
        elements_mut(output.bytes_mut(1)?, 1)?,
    ))
}

/// A kernel of one input and one output: `$params`' `check` and `run` over bindings 0 and 1.
macro_rules! unary {
    ($name:ident, $entry:ident, $params:ty, $in:ty, $out:ty) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let (input, output) = input_output::<$in, $out>(wg.bindings)?;
            p.run(input, output)
        }

        // The element types read and written here are those the specification names.
        const _: () = assert!(
            written_binding::<$params>() == 1
                && <$params>::BINDINGS[0].element as usize == core::mem::size_of::<$in>()
                && <$params>::BINDINGS[1].element as usize == core::mem::size_of::<$out>()
        );

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`).")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry, Writes::of::<$params>()),
        };
    };
}

unary!(SOFTMAX_S8, softmax_s8, SoftmaxS8, i8, i8);
unary!(SOFTMAX_S8_S16, softmax_s8_s16, SoftmaxS8S16, i8, i16);
unary!(LOGISTIC_S8, logistic_s8, LogisticS8, i8, i8);
unary!(LOGISTIC_F32, logistic_f32, LogisticF32, f32, f32);
unary!(TANH_S8, tanh_s8, TanhS8, i8, i8);
unary!(TANH_F32, tanh_f32, TanhF32, f32, f32);
unary!(QUANTIZE_F32_S8, quantize_f32_s8, QuantizeF32S8, f32, i8);
unary!(REQUANTIZE_S8, requantize_s8, RequantizeS8, i8, i8);
unary!(REQUANTIZE_U8_S8, requantize_u8_s8, RequantizeU8S8, u8, i8);
unary!(REQUANTIZE_S8_U8, requantize_s8_u8, RequantizeS8U8, i8, u8);
unary!(
    DEQUANTIZE_U8_F32,
    dequantize_u8_f32,
    DequantizeU8F32,
    u8,
    f32
);
unary!(
    DEQUANTIZE_S8_F32,
    dequantize_s8_f32,
    DequantizeS8F32,
    i8,
    f32
);
unary!(QUANTIZE_F32_S16, quantize_f32_s16, QuantizeF32S16, f32, i16);
unary!(
    DEQUANTIZE_S16_F32,
    dequantize_s16_f32,
    DequantizeS16F32,
    i16,
    f32
);
unary!(REQUANTIZE_INT, requantize_int, RequantizeInt, u8, u8);
unary!(ABS_F32, abs_f32, AbsF32, f32, f32);
unary!(NEG_F32, neg_f32, NegF32, f32, f32);
unary!(SQUARE_F32, square_f32, SquareF32, f32, f32);
unary!(SQRT_F32, sqrt_f32, SqrtF32, f32, f32);
unary!(RSQRT_F32, rsqrt_f32, RsqrtF32, f32, f32);
unary!(EXP_F32, exp_f32, ExpF32, f32, f32);
unary!(LOG_F32, log_f32, LogF32, f32, f32);
unary!(FLOOR_F32, floor_f32, FloorF32, f32, f32);
unary!(CEIL_F32, ceil_f32, CeilF32, f32, f32);
unary!(ROUND_F32, round_f32, RoundF32, f32, f32);
unary!(SIN_F32, sin_f32, SinF32, f32, f32);
unary!(COS_F32, cos_f32, CosF32, f32, f32);
unary!(RELU_OP_F32, relu_op_f32, ReluF32, f32, f32);
unary!(RELU6_F32, relu6_f32, Relu6F32, f32, f32);
unary!(HARD_SWISH_F32, hard_swish_f32, HardSwishF32, f32, f32);
unary!(ELU_F32, elu_f32, EluF32, f32, f32);
unary!(LEAKY_RELU_F32, leaky_relu_f32, LeakyReluF32, f32, f32);
unary!(LEAKY_RELU_S8, leaky_relu_s8, LeakyReluS8, i8, i8);
unary!(HARD_SWISH_S8, hard_swish_s8, HardSwishS8, i8, i8);
unary!(RELU_N1_TO_1_F32, relu_n1_to_1_f32, ReluN1To1F32, f32, f32);
unary!(RELU_0_TO_1_F32, relu_0_to_1_f32, Relu0To1F32, f32, f32);
unary!(GELU_F32, gelu_f32, GeluF32, f32, f32);
unary!(GELU_TANH_F32, gelu_tanh_f32, GeluTanhF32, f32, f32);

/// Binding `index` as elements, to read.
fn read<'s, T: Element>(bindings: &'s [Bytes<'_>], index: usize) -> Result<&'s [T], KernelError> {
    let bound = bindings.len() as u32;
    let b = bindings.get(index).ok_or(KernelError::MissingBinding {
        index: index as u32,
        bound,
    })?;
    elements(b.bytes(), index as u32)
}

/// The bindings of an int8 weighted op: input, filter, bias, multipliers and shifts read,
/// binding `output` written.
struct WeightedS8<'s> {
    input: &'s [i8],
    filter: &'s [i8],
    bias: &'s [i32],
    multipliers: &'s [i32],
    shifts: &'s [i32],
    output: &'s mut [i8],
}

/// `bindings` as an int8 weighted op's, its output binding `output`.
#[inline(always)]
fn weighted_s8_bindings<'s>(
    bindings: &'s mut [Bytes<'_>],
    output: usize,
) -> Result<WeightedS8<'s>, KernelError> {
    let (head, tail) = bindings.split_at_mut(output.min(bindings.len()));
    let written = elements_mut::<i8>(binding(tail, 0)?.bytes_mut(output as u32)?, output as u32)?;
    Ok(WeightedS8 {
        input: read(head, 0)?,
        filter: read(head, 1)?,
        bias: read(head, 2)?,
        multipliers: read(head, 3)?,
        shifts: read(head, 4)?,
        output: written,
    })
}

/// The [`Scratch`] of `groups` groups and `bytes` bytes carved from `lent`, which an error
/// names binding `index`; `None` where it asks for none or `lent` is shorter.
#[inline(always)]
pub(crate) fn lent_scratch(
    lent: &mut [u8],
    (groups, bytes): (usize, usize),
    index: u32,
) -> Result<Option<Scratch<'_>>, KernelError> {
    if groups + bytes == 0 || lent.len() < groups * 16 + bytes {
        return Ok(None);
    }
    let (group_bytes, rest) = lent.split_at_mut(groups * 16);
    Ok(Some(Scratch {
        groups: elements_mut(group_bytes, index)?,
        bytes: elements_mut(&mut rest[..bytes], index)?,
    }))
}

/// A weighted op in int8 (fully connected): bindings input, filter, bias, multipliers,
/// shifts, output; `$run` the params' method that runs it. Also `$tuned_name`: the core's
/// tuned kernel alone (`run_tuned`), for a static program whose every dispatch of it the
/// build has checked that kernel takes.
macro_rules! weighted_s8 {
    ($name:ident, $entry:ident, $tuned_name:ident, $tuned_entry:ident, $params:ty) => {
        weighted_s8!(@entry $name, $entry, $params, run, "");
        weighted_s8!(@entry $tuned_name, $tuned_entry, $params, run_tuned,
            ", the core's tuned kernel alone");
    };
    (@entry $name:ident, $entry:ident, $params:ty, $run:ident, $what:literal) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            const OUTPUT: usize = written_binding::<$params>();
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let b = weighted_s8_bindings(wg.bindings, OUTPUT)?;
            p.$run(b.input, b.filter, b.bias, b.multipliers, b.shifts, b.output)
        }

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`)", $what, ".")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry, Writes::of::<$params>()),
        };
    };
}

/// A convolution in int8 (bindings as [`weighted_s8`]), its output rows in tiles: on the
/// device's worker pool where it has one. Where the caller lends the scratch `$scratch`
/// (`(groups, bytes)` of [`Scratch`], from the params `$p`) asks for, the whole output
/// runs at once in it (an error about the scratch names it binding 6, after the output).
///
/// Also `$tuned_name`: the same kernel for a static program whose every dispatch of it the
/// build has checked the core's tuned kernel takes ([`WeightedS8Params::run_tuned`]): that
/// kernel alone, so the portable loops are not linked for it — in the scratch lent, on one
/// thread, where it asks for scratch, else its output rows in tiles as above; a dispatch
/// it does not take is refused.
macro_rules! convolution_s8 {
    ($name:ident, $entry:ident, $tuned_name:ident, $tuned_entry:ident, $params:ty) => {
        convolution_s8!(
            $name, $entry, $tuned_name, $tuned_entry, $params, scratch: |_params| (0, 0)
        );
    };
    (
        $name:ident,
        $entry:ident,
        $tuned_name:ident,
        $tuned_entry:ident,
        $params:ty,
        scratch: |$p:ident| $scratch:expr
    ) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            const OUTPUT: usize = written_binding::<$params>();
            const SCRATCH: u32 = OUTPUT as u32 + 1;
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let tiler = wg.tiler;
            let lent = core::mem::take(&mut wg.scratch);
            let WeightedS8 {
                input,
                filter,
                bias,
                multipliers,
                shifts,
                output,
            } = weighted_s8_bindings(wg.bindings, OUTPUT)?;
            let (rows, row_len) = (p.shape.rows()?, p.shape.row_len()?);
            let asked = {
                let $p = &p;
                $scratch
            };
            if let Some(scratch) = &mut lent_scratch(lent, asked, SCRATCH)? {
                let all = 0..rows;
                return p.run_rows_in(input, filter, bias, multipliers, shifts, all, output, scratch);
            }
            tiler.run(output, rows, row_len, |rows, tile| {
                p.run_rows(input, filter, bias, multipliers, shifts, rows, tile)
            })
        }

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`).")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry, Writes::of::<$params>()),
        };

        fn $tuned_entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            const OUTPUT: usize = written_binding::<$params>();
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let tiler = wg.tiler;
            let lent = core::mem::take(&mut wg.scratch);
            let WeightedS8 {
                input,
                filter,
                bias,
                multipliers,
                shifts,
                output,
            } = weighted_s8_bindings(wg.bindings, OUTPUT)?;
            let asked = {
                let $p = &p;
                $scratch
            };
            if asked != (0, 0) {
                return WeightedS8Params::run_tuned(
                    &p, input, filter, bias, multipliers, shifts, output, lent,
                );
            }
            // No scratch asked: the output rows may run in tiles, on the device's workers
            // where it has them.
            let (rows, row_len) = (p.shape.rows()?, p.shape.row_len()?);
            tiler.run(output, rows, row_len, |rows, tile| {
                let none = &mut Scratch::none();
                p.run_rows_tuned_in(input, filter, bias, multipliers, shifts, rows, tile, none)
            })
        }

        #[doc = concat!(
            "`", stringify!($params), "` (`ember-kernels`), the core's tuned kernel alone."
        )]
        pub const $tuned_name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($tuned_entry, Writes::of::<$params>()),
        };
    };
}

/// A convolution in float (bindings as [`weighted_f32`]), its output rows in tiles.
macro_rules! convolution_f32 {
    ($name:ident, $entry:ident, $params:ty) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            const OUTPUT: usize = written_binding::<$params>();
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let tiler = wg.tiler;
            let (head, tail) = wg.bindings.split_at_mut(OUTPUT.min(wg.bindings.len()));
            let output =
                elements_mut::<f32>(binding(tail, 0)?.bytes_mut(OUTPUT as u32)?, OUTPUT as u32)?;
            let (input, filter, bias) = (read(head, 0)?, read(head, 1)?, read(head, 2)?);
            let (rows, row_len) = (p.shape.rows()?, p.shape.row_len()?);
            tiler.run(output, rows, row_len, |rows, tile| {
                p.run_rows(input, filter, bias, rows, tile)
            })
        }

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`).")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry, Writes::of::<$params>()),
        };
    };
}

/// A weighted op in float: bindings input, filter, bias, output.
macro_rules! weighted_f32 {
    ($name:ident, $entry:ident, $params:ty) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            const OUTPUT: usize = written_binding::<$params>();
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let (head, tail) = wg.bindings.split_at_mut(OUTPUT.min(wg.bindings.len()));
            let output =
                elements_mut::<f32>(binding(tail, 0)?.bytes_mut(OUTPUT as u32)?, OUTPUT as u32)?;
            p.run(read(head, 0)?, read(head, 1)?, read(head, 2)?, output)
        }

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`).")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry, Writes::of::<$params>()),
        };
    };
}

/// A two-input elementwise op: bindings input1, input2, output.
macro_rules! binary {
    ($name:ident, $entry:ident, $params:ty, $t:ty) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            const OUTPUT: usize = written_binding::<$params>();
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let (head, tail) = wg.bindings.split_at_mut(OUTPUT.min(wg.bindings.len()));
            let output =
                elements_mut::<$t>(binding(tail, 0)?.bytes_mut(OUTPUT as u32)?, OUTPUT as u32)?;
            p.run(read(head, 0)?, read(head, 1)?, output)
        }

        // The element type written here is the one the specification names.
        const _: () = assert!(
            <$params>::BINDINGS[written_binding::<$params>()].element as usize
                == core::mem::size_of::<$t>()
        );

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`).")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry, Writes::of::<$params>()),
        };
    };
}

/// The parameters of an int8 weighted op, run with the core's tuned kernel alone: by the
/// `*_TUNED` kernels' entries and by a static program's direct calls
/// ([`direct`](crate::direct)).
pub trait WeightedS8Params: core::fmt::Debug + Sync + KernelParams {
    /// Runs the whole op with the core's tuned kernel alone (the portable loops on a core
    /// without one), `lent` the scratch the program lends it.
    #[allow(clippy::too_many_arguments)]
    fn run_tuned(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
        lent: &mut [u8],
    ) -> Result<(), KernelError>;
}

impl WeightedS8Params for FullyConnectedS8 {
    fn run_tuned(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
        _lent: &mut [u8],
    ) -> Result<(), KernelError> {
        FullyConnectedS8::run_tuned(self, input, filter, bias, multipliers, shifts, output)
    }
}

/// A convolution's whole output with its tuned kernel, in the scratch `asked` of `lent` (or
/// on its stack where `lent` is too short).
macro_rules! convolution_run_tuned {
    ($params:ty, |$p:ident| $asked:expr) => {
        impl WeightedS8Params for $params {
            fn run_tuned(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                output: &mut [i8],
                lent: &mut [u8],
            ) -> Result<(), KernelError> {
                const SCRATCH: u32 = written_binding::<$params>() as u32 + 1;
                let asked = {
                    let $p = self;
                    $asked
                };
                let scratch = &mut match lent_scratch(lent, asked, SCRATCH)? {
                    Some(scratch) => scratch,
                    None => Scratch::none(),
                };
                let all = 0..self.shape.rows()?;
                self.run_rows_tuned_in(
                    input,
                    filter,
                    bias,
                    multipliers,
                    shifts,
                    all,
                    output,
                    scratch,
                )
            }
        }
    };
}

convolution_run_tuned!(Conv2dS8, |p| p.tuned_scratch());
convolution_run_tuned!(DepthwiseConv2dS8, |_p| (0, 0));

convolution_s8!(
    CONV2D_S8,
    conv2d_s8,
    CONV2D_S8_TUNED,
    conv2d_s8_tuned,
    Conv2dS8,
    scratch: |p| p.tuned_scratch()
);
convolution_f32!(CONV2D_F32, conv2d_f32, Conv2dF32);
convolution_s8!(
    DEPTHWISE_CONV2D_S8,
    depthwise_conv2d_s8,
    DEPTHWISE_CONV2D_S8_TUNED,
    depthwise_conv2d_s8_tuned,
    DepthwiseConv2dS8
);

/// Bytes of scratch the kernel `kernel` asks a static program to lend it for a dispatch
/// with push constants `constants` (its tuned variant's working memory, which it otherwise
/// keeps on the stack): groups of 16 bytes then bytes, as [`Scratch`] lays them out; 0 for
/// a kernel that asks for none or constants it would refuse.
pub fn scratch_bytes(kernel: &str, constants: &[u32]) -> usize {
    if kernel == Conv2dS8::KERNEL {
        if let Ok(p) = Conv2dS8::decode(&mut Words::new(constants)) {
            let (groups, bytes) = p.tuned_scratch();
            return groups * 16 + bytes;
        }
    }
    0
}

/// The kernels whose core's tuned kernel a build can choose alone
/// ([`tuned_takes`] for each dispatch): each a path to a [`Kernel`] with the name of the
/// TFLite kernel it stands in for.
pub static TUNED_PATHS: &[KernelPath] = &[
    KernelPath {
        name: Conv2dS8::KERNEL,
        path: "::hal_local::kernels::tflite::CONV2D_S8_TUNED",
    },
    KernelPath {
        name: DepthwiseConv2dS8::KERNEL,
        path: "::hal_local::kernels::tflite::DEPTHWISE_CONV2D_S8_TUNED",
    },
    KernelPath {
        name: FullyConnectedS8::KERNEL,
        path: "::hal_local::kernels::tflite::FULLY_CONNECTED_S8_TUNED",
    },
];

/// Whether the Cortex-M4 tuned kernels' output stage takes a dispatch whose multipliers
/// binding (binding 3 of [`TUNED_PATHS`]' kernels) holds `multipliers`, little-endian:
/// none is negative (TFLite's quantizer gives them in `[2^30, 2^31)` or 0).
pub fn tuned_stage_takes(multipliers: &[u8]) -> bool {
    multipliers
        .chunks_exact(4)
        .all(|word| i32::from_le_bytes([word[0], word[1], word[2], word[3]]) >= 0)
}

/// Whether `variant`'s tuned kernel of `kernel` (one of [`TUNED_PATHS`]) takes a dispatch
/// with push constants `constants`; `false` for any other kernel or constants it refuses.
pub fn tuned_takes(variant: TunedVariant, kernel: &str, constants: &[u32]) -> bool {
    let words = || Words::new(constants);
    match kernel {
        Conv2dS8::KERNEL => Conv2dS8::decode(&mut words()).is_ok_and(|p| p.takes_tuned(variant)),
        DepthwiseConv2dS8::KERNEL => {
            DepthwiseConv2dS8::decode(&mut words()).is_ok_and(|p| p.takes_tuned(variant))
        }
        FullyConnectedS8::KERNEL => {
            FullyConnectedS8::decode(&mut words()).is_ok_and(|p| p.takes_tuned(variant))
        }
        _ => false,
    }
}

fn separable_conv2d_s8(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    const OUTPUT: usize = written_binding::<SeparableConv2dS8>();
    let p: SeparableConv2dS8 = params(wg)?;
    p.check(&wg.lens())?;
    let tiler = wg.tiler;
    let (head, tail) = wg.bindings.split_at_mut(OUTPUT.min(wg.bindings.len()));
    let output = elements_mut::<i8>(binding(tail, 0)?.bytes_mut(OUTPUT as u32)?, OUTPUT as u32)?;
    let (input, depthwise, pointwise) = (read(head, 0)?, read(head, 1)?, read(head, 2)?);
    let (first, second) = (read(head, 3)?, read(head, 4)?);
    let (rows, row_len) = (p.rows()?, p.row_len()?);
    tiler.run(output, rows, row_len, |rows, tile| {
        p.run_rows(input, depthwise, pointwise, first, second, rows, tile)
    })
}

/// `SeparableConv2dS8` (`ember-kernels`): bindings input, depthwise filter, pointwise
/// filter, the two output stages, output; its output rows in tiles.
pub const SEPARABLE_CONV2D_S8: Kernel = Kernel {
    name: SeparableConv2dS8::KERNEL,
    entry: Entry::Exclusive(separable_conv2d_s8, Writes::of::<SeparableConv2dS8>()),
};
convolution_f32!(
    DEPTHWISE_CONV2D_F32,
    depthwise_conv2d_f32,
    DepthwiseConv2dF32
);
weighted_s8!(
    FULLY_CONNECTED_S8,
    fully_connected_s8,
    FULLY_CONNECTED_S8_TUNED,
    fully_connected_s8_tuned,
    FullyConnectedS8
);
weighted_f32!(FULLY_CONNECTED_F32, fully_connected_f32, FullyConnectedF32);
unary!(
    AVERAGE_POOL2D_S8,
    average_pool2d_s8,
    AveragePool2dS8,
    i8,
    i8
);
unary!(
    AVERAGE_POOL2D_F32,
    average_pool2d_f32,
    AveragePool2dF32,
    f32,
    f32
);
unary!(MAX_POOL2D_S8, max_pool2d_s8, MaxPool2dS8, i8, i8);
unary!(MAX_POOL2D_F32, max_pool2d_f32, MaxPool2dF32, f32, f32);
binary!(ADD_S8, add_s8, AddS8, i8);
binary!(MUL_S8, mul_s8, MulS8, i8);
binary!(SUB_S8, sub_s8, SubS8, i8);
binary!(SUB_F32, sub_f32, SubF32, f32);
binary!(DIV_F32, div_f32, DivF32, f32);
binary!(
    SQUARED_DIFFERENCE_F32,
    squared_difference_f32,
    SquaredDifferenceF32,
    f32
);
binary!(MAXIMUM_F32, maximum_f32, MaximumF32, f32);
binary!(MINIMUM_F32, minimum_f32, MinimumF32, f32);
binary!(MAXIMUM_S8, maximum_s8, MaximumS8, i8);
binary!(MINIMUM_S8, minimum_s8, MinimumS8, i8);
binary!(GATHER, gather, Gather, u8);
binary!(GATHER_ND, gather_nd, GatherNd, u8);
binary!(LUT_S8, lut_s8, LutS8, i8);
binary!(PRELU_S8, prelu_s8, PreluS8, i8);
binary!(PRELU_F32, prelu_f32, PreluF32, f32);
binary!(COMPARISON, comparison, Comparison, u8);
binary!(LOGICAL, logical, Logical, u8);
unary!(PAD, pad, Pad, u8, u8);
unary!(TRANSPOSE, transpose, Transpose, u8, u8);
unary!(CAST, cast, Cast, u8, u8);
unary!(SUM_F32, sum_f32, SumF32, f32, f32);
unary!(LOG_SOFTMAX_F32, log_softmax_f32, LogSoftmaxF32, f32, f32);
unary!(LOG_SOFTMAX_S8, log_softmax_s8, LogSoftmaxS8, i8, i8);
unary!(REDUCE_MAX_F32, reduce_max_f32, ReduceMaxF32, f32, f32);
unary!(REDUCE_MIN_F32, reduce_min_f32, ReduceMinF32, f32, f32);
unary!(REDUCE_MAX_S8, reduce_max_s8, ReduceMaxS8, i8, i8);
unary!(REDUCE_MIN_S8, reduce_min_s8, ReduceMinS8, i8, i8);
unary!(ARG_MIN_MAX, arg_min_max, ArgMinMax, u8, i32);
unary!(
    RESIZE_NEAREST_NEIGHBOR,
    resize_nearest_neighbor,
    ResizeNearestNeighbor,
    u8,
    u8
);
unary!(
    RESIZE_BILINEAR_S8,
    resize_bilinear_s8,
    ResizeBilinearS8,
    i8,
    i8
);
unary!(
    RESIZE_BILINEAR_F32,
    resize_bilinear_f32,
    ResizeBilinearF32,
    f32,
    f32
);
unary!(STRIDED_SLICE, strided_slice, StridedSlice, u8, u8);
unary!(MIRROR_PAD, mirror_pad, MirrorPad, u8, u8);
unary!(SPACE_BATCH, space_batch, SpaceBatch, u8, u8);
unary!(
    L2_NORMALIZATION_S8,
    l2_normalization_s8,
    L2NormalizationS8,
    i8,
    i8
);
unary!(
    L2_NORMALIZATION_F32,
    l2_normalization_f32,
    L2NormalizationF32,
    f32,
    f32
);
unary!(L2_POOL2D_F32, l2_pool2d_f32, L2Pool2dF32, f32, f32);
unary!(MEAN_S8, mean_s8, MeanS8, i8, i8);
unary!(SUM_S8, sum_s8, SumS8, i8, i8);
unary!(MEAN_F32, mean_f32, MeanF32, f32, f32);

fn concatenation(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    let p: Concatenation = params(wg)?;
    // The check holds the bindings to the inputs then the output, the last one (`Writes::Last`).
    p.check(&wg.lens())?;
    let count = p.count.min(MAX_INPUTS);
    let (inputs, tail) = wg.bindings.split_at_mut(count);
    let output = binding(tail, 0)?.bytes_mut(count as u32)?;
    let mut slices: heapless::Vec<&[u8], MAX_INPUTS> = heapless::Vec::new();
    for input in inputs.iter() {
        let _ = slices.push(input.bytes());
    }
    p.run(&slices, output)
}

/// `Concatenation` (`ember-kernels`).
pub const CONCATENATION: Kernel = Kernel {
    name: Concatenation::KERNEL,
    entry: Entry::Exclusive(concatenation, Writes::of::<Concatenation>()),
};

fn select(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    const OUTPUT: usize = written_binding::<Select>();
    let p: Select = params(wg)?;
    p.check(&wg.lens())?;
    let (inputs, tail) = wg.bindings.split_at_mut(OUTPUT.min(wg.bindings.len()));
    let output = binding(tail, 0)?.bytes_mut(OUTPUT as u32)?;
    p.run(read(inputs, 0)?, read(inputs, 1)?, read(inputs, 2)?, output)
}

/// `Select` (`ember-kernels`).
pub const SELECT: Kernel = Kernel {
    name: Select::KERNEL,
    entry: Entry::Exclusive(select, Writes::of::<Select>()),
};

fn transpose_conv_s8(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    const OUTPUT: usize = written_binding::<TransposeConvS8>();
    let p: TransposeConvS8 = params(wg)?;
    p.check(&wg.lens())?;
    let tiler = wg.tiler;
    let WeightedS8 {
        input,
        filter,
        bias,
        multipliers,
        shifts,
        output,
    } = weighted_s8_bindings(wg.bindings, OUTPUT)?;
    let (rows, row_len) = (p.shape.rows()?, p.shape.row_len()?);
    tiler.run(output, rows, row_len, |rows, tile| {
        p.run_rows(input, filter, bias, multipliers, shifts, rows, tile)
    })
}

/// `TransposeConvS8` (`ember-kernels`): bindings as [`weighted_s8`]'s; its output rows in
/// tiles, on the device's worker pool where it has one.
pub const TRANSPOSE_CONV_S8: Kernel = Kernel {
    name: TransposeConvS8::KERNEL,
    entry: Entry::Exclusive(transpose_conv_s8, Writes::of::<TransposeConvS8>()),
};
convolution_f32!(TRANSPOSE_CONV_F32, transpose_conv_f32, TransposeConvF32);
binary!(BATCH_MATMUL_S8, batch_matmul_s8, BatchMatmulS8, i8);
binary!(BATCH_MATMUL_F32, batch_matmul_f32, BatchMatmulF32, f32);
binary!(FLOOR_DIV_F32, floor_div_f32, FloorDivF32, f32);
binary!(FLOOR_MOD_F32, floor_mod_f32, FloorModF32, f32);
binary!(DIV_S8, div_s8, DivS8, i8);
binary!(
    SQUARED_DIFFERENCE_S8,
    squared_difference_s8,
    SquaredDifferenceS8,
    i8
);

fn detection_postprocess(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    use ember_kernels::detection_postprocess::DetectionPostprocess;
    const OUTPUT: usize = written_binding::<DetectionPostprocess>();
    let p: DetectionPostprocess = params(wg)?;
    p.check(&wg.lens())?;
    let (inputs, tail) = wg.bindings.split_at_mut(OUTPUT.min(wg.bindings.len()));
    let workspace = elements_mut(binding(tail, 0)?.bytes_mut(OUTPUT as u32)?, OUTPUT as u32)?;
    p.run(
        read(inputs, 0)?,
        read(inputs, 1)?,
        read(inputs, 2)?,
        workspace,
    )
}

/// `DetectionPostprocess` (`ember-kernels`): TFLite_Detection_PostProcess into its workspace.
pub const DETECTION_POSTPROCESS: Kernel = Kernel {
    name: <ember_kernels::detection_postprocess::DetectionPostprocess as KernelParams>::KERNEL,
    entry: Entry::Exclusive(
        detection_postprocess,
        Writes::of::<ember_kernels::detection_postprocess::DetectionPostprocess>(),
    ),
};

/// [`TFLITE`] and [`TFLITE_PATHS`], from one list.
macro_rules! tflite_table {
    ($($kernel:ident),+ $(,)?) => {
        /// Every TFLite-op kernel, for a device that runs imported models.
        pub static TFLITE: &[Kernel] = &[$($kernel),+];

        /// Every TFLite-op kernel's name with the Rust path of its entry, in [`TFLITE`]'s
        /// order: what build tools (ember-build) link a module's kernels by.
        pub static TFLITE_PATHS: &[KernelPath] = &[$(KernelPath {
            name: $kernel.name,
            path: concat!("::hal_local::kernels::tflite::", stringify!($kernel)),
        }),+];
    };
}

tflite_table!(
    CONV2D_S8,
    CONV2D_F32,
    DEPTHWISE_CONV2D_S8,
    DEPTHWISE_CONV2D_F32,
    SEPARABLE_CONV2D_S8,
    FULLY_CONNECTED_S8,
    FULLY_CONNECTED_F32,
    AVERAGE_POOL2D_S8,
    AVERAGE_POOL2D_F32,
    MAX_POOL2D_S8,
    MAX_POOL2D_F32,
    ADD_S8,
    ADD_F32,
    MUL_S8,
    MUL_F32,
    PAD,
    TRANSPOSE,
    CONCATENATION,
    STRIDED_SLICE,
    MEAN_S8,
    MEAN_F32,
    SOFTMAX_S8,
    SOFTMAX_S8_S16,
    SOFTMAX_F32,
    LOGISTIC_S8,
    LOGISTIC_F32,
    TANH_S8,
    TANH_F32,
    QUANTIZE_F32_S8,
    REQUANTIZE_S8,
    REQUANTIZE_U8_S8,
    REQUANTIZE_S8_U8,
    DEQUANTIZE_S8_F32,
    DEQUANTIZE_U8_F32,
    SUB_F32,
    DIV_F32,
    SQUARED_DIFFERENCE_F32,
    MAXIMUM_S8,
    MAXIMUM_F32,
    MINIMUM_S8,
    MINIMUM_F32,
    ABS_F32,
    NEG_F32,
    SQUARE_F32,
    SQRT_F32,
    RSQRT_F32,
    EXP_F32,
    LOG_F32,
    FLOOR_F32,
    CEIL_F32,
    ROUND_F32,
    SIN_F32,
    COS_F32,
    RELU_OP_F32,
    RELU6_F32,
    HARD_SWISH_F32,
    ELU_F32,
    LEAKY_RELU_S8,
    LEAKY_RELU_F32,
    RESIZE_NEAREST_NEIGHBOR,
    CAST,
    GATHER,
    ARG_MIN_MAX,
    SUM_F32,
    REDUCE_MAX_S8,
    REDUCE_MAX_F32,
    REDUCE_MIN_S8,
    REDUCE_MIN_F32,
    LOG_SOFTMAX_F32,
    HARD_SWISH_S8,
    LUT_S8,
    PRELU_S8,
    PRELU_F32,
    COMPARISON,
    LOGICAL,
    SELECT,
    SUB_S8,
    RESIZE_BILINEAR_S8,
    RESIZE_BILINEAR_F32,
    MIRROR_PAD,
    SPACE_BATCH,
    GATHER_ND,
    L2_NORMALIZATION_S8,
    L2_NORMALIZATION_F32,
    L2_POOL2D_F32,
    TRANSPOSE_CONV_S8,
    TRANSPOSE_CONV_F32,
    BATCH_MATMUL_S8,
    BATCH_MATMUL_F32,
    FLOOR_DIV_F32,
    FLOOR_MOD_F32,
    SUM_S8,
    QUANTIZE_F32_S16,
    DEQUANTIZE_S16_F32,
    REQUANTIZE_INT,
    LOG_SOFTMAX_S8,
    DIV_S8,
    SQUARED_DIFFERENCE_S8,
    DETECTION_POSTPROCESS,
    RELU_N1_TO_1_F32,
    RELU_0_TO_1_F32,
    GELU_F32,
    GELU_TANH_F32,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_table() {
        assert_eq!(TFLITE_PATHS.len(), TFLITE.len());
        for (kernel, linked) in TFLITE.iter().zip(TFLITE_PATHS) {
            assert_eq!(kernel.name, linked.name);
            let konst = linked.path.rsplit("::").next().unwrap_or_default();
            assert_eq!(konst, kernel.name.to_uppercase());
        }
    }

    /// A device with workers runs a tuned convolution that asks for no scratch in tiles of
    /// rows, as the plain kernel, with the same output as on one thread.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_tuned_convolution_without_scratch_runs_its_rows_in_tiles() {
        use crate::kernel::Tiler;
        use crate::workers::Workers;
        use core::sync::atomic::{AtomicUsize, Ordering};
        use ember_kernels::conv2d::Conv2dShape;
        use ember_kernels::padding::Window;
        use ember_kernels::KernelParams;
        extern crate std;
        use std::vec;
        use std::vec::Vec;

        /// Runs every call on the caller, counting them.
        struct Counting(AtomicUsize);
        // SAFETY: every `i < count` once, in turn, on the caller.
        unsafe impl Workers for Counting {
            fn width(&self) -> usize {
                2
            }
            fn fork(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
                self.0.fetch_add(count, Ordering::Relaxed);
                (0..count).for_each(job);
            }
        }

        let window = Window {
            stride_height: 1,
            stride_width: 1,
            dilation_height: 1,
            dilation_width: 1,
            pad_height: 1,
            pad_width: 1,
        };
        let p = Conv2dS8 {
            shape: Conv2dShape {
                batches: 1,
                input_height: 6,
                input_width: 5,
                input_depth: 3,
                filter_height: 3,
                filter_width: 3,
                filter_depth: 3,
                output_height: 6,
                output_width: 5,
                output_depth: 4,
                window,
                has_bias: true,
            },
            filter_hwio: true,
            input_offset: 7,
            output_offset: -3,
            act_min: -128,
            act_max: 127,
        };
        assert_eq!(p.tuned_scratch(), (0, 0));
        let mut constants = Vec::new();
        p.encode(&mut constants);
        let bytes = |count: usize, seed: u8| -> Vec<u8> {
            (0..count)
                .map(|i| (i as u8).wrapping_mul(37) ^ seed)
                .collect()
        };
        let words =
            |values: &[i32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
        let input = bytes(6 * 5 * 3, 0x5a);
        let filter = bytes(3 * 3 * 3 * 4, 0x33);
        let bias = words(&[100, -200, 300, -400]);
        let multipliers = words(&[1 << 30, 3 << 28, 5 << 27, 1 << 30]);
        let shifts = words(&[-3, -4, -2, -5]);
        let Entry::Exclusive(entry, _) = CONV2D_S8_TUNED.entry else {
            panic!("the tuned convolution is an exclusive kernel");
        };
        let run = |tiler: Tiler<'_>| -> Vec<u8> {
            let mut output = vec![0u8; 6 * 5 * 4];
            let mut bindings = [
                Bytes::Read(&input),
                Bytes::Read(&filter),
                Bytes::Read(&bias),
                Bytes::Read(&multipliers),
                Bytes::Read(&shifts),
                Bytes::Write(&mut output),
            ];
            let mut wg = Exclusive {
                id: [0; 3],
                count: [1; 3],
                constants: &constants,
                bindings: &mut bindings,
                scratch: &mut [],
                tiler,
            };
            entry(&mut wg).expect("the convolution runs");
            output
        };
        let workers = Counting(AtomicUsize::new(0));
        let tiled = run(Tiler::new(Some(&workers)));
        assert!(
            workers.0.load(Ordering::Relaxed) > 1,
            "the rows ran in tiles"
        );
        assert_eq!(tiled, run(Tiler::INLINE));
    }
}
