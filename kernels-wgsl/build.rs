//! Compiles `src/wgsl/<kernel>.wgsl` (each followed by the shared files it uses, the push
//! prelude `common.wgsl`, its `PARAMS_AT`, `exp.wgsl` and the generated `exp_f32` constants)
//! to SPIR-V with naga, validates it, marks every float operation `NoContraction`, and
//! writes `$OUT_DIR/spirv.rs` with the words as `&[u32]` literals.
//!
//! Every kernel has a file named after it that declares its bindings: binding `i` of set 0
//! for each, `read` where the kernel only reads it, `read_write` where it writes it. The
//! built-in kernels' bindings are those of their contracts (`ember_kernels::builtin`), the
//! op set's those their parameters specify (`ember_kernels::KernelParams::BINDINGS`).
//!
//! A WGSL or validation error fails the build with the kernel's file name and naga's message.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use naga::back::spv;
use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
use naga::valid::{Capabilities, ValidationFlags, Validator};

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
use ember_kernels::{builtin, KernelParams};
use hal_core::contract::Access;

/// The shared WGSL files and the kernels each is appended to (after the kernel's own
/// source, so its line numbers stay its own).
const SHARED: &[(&str, &[&str])] = &[
    // Work split over the dispatch's own workgroups, as hal-local splits it.
    (
        "share_of.wgsl",
        &[
            "fill_u32",
            "copy_u32",
            "add_f32",
            "mul_f32",
            "relu_f32",
            "matmul_f32",
            "softmax_f32",
            "mlp_softmax_f32",
        ],
    ),
    // hal-local's ReLU on the bits.
    (
        "relu_bits.wgsl",
        &["relu_f32", "matmul_f32", "mlp_softmax_f32"],
    ),
    // Bindings, parameters, loads and output stage of a windowed int8 op.
    (
        "window_s8.wgsl",
        &["conv2d_s8", "depthwise_conv2d_s8", "transpose_conv_s8"],
    ),
    // Invocations sharing an output word.
    (
        "split_words.wgsl",
        &[
            "fully_connected_s8",
            "conv2d_s8",
            "depthwise_conv2d_s8",
            "average_pool2d_s8",
        ],
    ),
    // TFLite's broadcasting of two inputs.
    (
        "broadcast.wgsl",
        &[
            "add_s8",
            "sub_s8",
            "div_s8",
            "squared_difference_s8",
            "mul_s8",
            "maximum_s8",
            "minimum_s8",
            "prelu_s8",
            "add_f32",
            "mul_f32",
            "sub_f32",
            "div_f32",
            "squared_difference_f32",
            "maximum_f32",
            "minimum_f32",
            "prelu_f32",
            "comparison",
            "logical",
            "floor_div_f32",
            "floor_mod_f32",
        ],
    ),
    // Bindings and loads of a broadcasting int8 binary op.
    (
        "binary_s8.wgsl",
        &[
            "add_s8",
            "sub_s8",
            "div_s8",
            "squared_difference_s8",
            "mul_s8",
            "maximum_s8",
            "minimum_s8",
            "prelu_s8",
            "logical",
        ],
    ),
    // The loop of the built-in element-wise float binary ops.
    ("zip_f32.wgsl", &["add_f32", "mul_f32"]),
    // Moving whole elements of 1, 2 or 4 bytes.
    (
        "gather_bytes.wgsl",
        &[
            "pad",
            "mirror_pad",
            "space_batch",
            "transpose",
            "strided_slice",
            "resize_nearest_neighbor",
        ],
    ),
    // gemmlowp's fixed point.
    (
        "fixed_point.wgsl",
        &[
            "softmax_s8",
            "softmax_s8_s16",
            "logistic_s8",
            "tanh_s8",
            "l2_normalization_s8",
            "log_softmax_s8",
            "div_s8",
        ],
    ),
    // The int8 activations' bindings and saturation.
    ("act_s8.wgsl", &["logistic_s8", "tanh_s8"]),
    // The loop over int8 output words whose bytes are computed alone.
    (
        "each_byte_s8.wgsl",
        &[
            "add_s8",
            "sub_s8",
            "div_s8",
            "squared_difference_s8",
            "mul_s8",
            "maximum_s8",
            "minimum_s8",
            "prelu_s8",
            "comparison",
            "logical",
            "requantize_s8",
            "requantize_u8_s8",
            "requantize_s8_u8",
            "leaky_relu_s8",
            "hard_swish_s8",
            "lut_s8",
            "reduce_max_s8",
            "reduce_min_s8",
            "quantize_f32_s8",
            "quantize_f32_s16",
            "requantize_int",
            "logistic_s8",
            "tanh_s8",
            "max_pool2d_s8",
            "resize_bilinear_s8",
            "l2_normalization_s8",
            "pad",
            "mirror_pad",
            "space_batch",
            "transpose",
            "strided_slice",
            "resize_nearest_neighbor",
            "gather",
            "gather_nd",
            "select",
            "cast",
            "batch_matmul_s8",
        ],
    ),
    // The float division the reference rounds correctly.
    (
        "div_rn.wgsl",
        &[
            "l2_pool2d_f32",
            "l2_normalization_f32",
            "average_pool2d_f32",
            "quantize_f32_s8",
            "quantize_f32_s16",
            "div_f32",
            "resize_nearest_neighbor",
            "resize_bilinear_f32",
            "floor_div_f32",
            "detection_postprocess",
        ],
    ),
    // The loop of a broadcasting float binary op (add_f32, mul_f32 given constants).
    (
        "binary_f32.wgsl",
        &[
            "add_f32",
            "mul_f32",
            "sub_f32",
            "div_f32",
            "squared_difference_f32",
            "maximum_f32",
            "minimum_f32",
            "prelu_f32",
        ],
    ),
    // The bindings of the float binary ops, for both loops.
    (
        "pair_f32.wgsl",
        &[
            "add_f32",
            "mul_f32",
            "sub_f32",
            "div_f32",
            "squared_difference_f32",
            "maximum_f32",
            "minimum_f32",
            "prelu_f32",
        ],
    ),
    // The quantized softmax's rows.
    ("softmax_rows.wgsl", &["softmax_s8", "softmax_s8_s16"]),
    // Bindings and loop of the int8 kernels that compute a row's statistics.
    (
        "rows_s8.wgsl",
        &["softmax_s8", "softmax_s8_s16", "log_softmax_s8"],
    ),
    // Bindings and loop of the float element-wise activations.
    (
        "unary_f32.wgsl",
        &[
            "logistic_f32",
            "tanh_f32",
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
            "leaky_relu_f32",
            "relu_n1_to_1_f32",
            "relu_0_to_1_f32",
            "gelu_f32",
            "gelu_tanh_f32",
        ],
    ),
    // tanh to a few ulp.
    ("tanh.wgsl", &["tanh_f32", "gelu_tanh_f32"]),
    // Sine and cosine to a few ulp.
    ("trig_f32.wgsl", &["sin_f32", "cos_f32"]),
    // A pooling output's window, clipped to the input.
    (
        "pool_window.wgsl",
        &[
            "average_pool2d_s8",
            "max_pool2d_s8",
            "average_pool2d_f32",
            "max_pool2d_f32",
            "l2_pool2d_f32",
        ],
    ),
    // Bindings and loop of the float pooling kernels.
    (
        "pool_f32.wgsl",
        &["average_pool2d_f32", "max_pool2d_f32", "l2_pool2d_f32"],
    ),
    // MEAN's shape and reduced axes.
    (
        "mean_shape.wgsl",
        &[
            "mean_s8",
            "sum_s8",
            "mean_f32",
            "sum_f32",
            "reduce_max_f32",
            "reduce_min_f32",
            "reduce_max_s8",
            "reduce_min_s8",
        ],
    ),
    // Bindings and loop of the float reductions.
    (
        "reduce_f32.wgsl",
        &["sum_f32", "reduce_max_f32", "reduce_min_f32"],
    ),
    // The int8 MEAN and SUM.
    ("quantized_mean_or_sum.wgsl", &["mean_s8", "sum_s8"]),
    // Bindings and reduction of the int8 ones.
    ("reduce_s8.wgsl", &["reduce_max_s8", "reduce_min_s8"]),
    // BATCH_MATMUL's operands.
    (
        "batch_matmul_at.wgsl",
        &["batch_matmul_s8", "batch_matmul_f32"],
    ),
    // FLOOR_DIV's and FLOOR_MOD's bindings, loop and integer parts.
    ("floor_div_mod.wgsl", &["floor_div_f32", "floor_mod_f32"]),
    // TFLM's AffineQuantize before the clamp.
    (
        "affine_quantize.wgsl",
        &["quantize_f32_s8", "quantize_f32_s16"],
    ),
    // Bindings and loop of DEQUANTIZE to float.
    (
        "dequantize_f32.wgsl",
        &[
            "dequantize_s8_f32",
            "dequantize_u8_f32",
            "dequantize_s16_f32",
        ],
    ),
    // Bindings, element types and input elements of CAST and the integer requantization.
    ("typed_bytes.wgsl", &["cast", "requantize_int"]),
];

/// The TFLite op set's kernels: each one's name and, for each binding it declares, whether
/// it may write it, from its parameters in `ember-kernels` (`KernelParams::BINDINGS`). A
/// kernel whose output is the dispatch's last binding (`OUTPUT_LAST`) may write any binding
/// but the first. `src/ops.rs` lists the same kernels.
fn ops() -> Vec<(&'static str, Vec<bool>)> {
    fn op<P: KernelParams>() -> (&'static str, Vec<bool>) {
        let written = P::BINDINGS
            .iter()
            .enumerate()
            .map(|(index, binding)| binding.written || (P::OUTPUT_LAST && index > 0))
            .collect();
        (P::KERNEL, written)
    }
    vec![
        op::<FullyConnectedS8>(),
        op::<Conv2dS8>(),
        op::<DepthwiseConv2dS8>(),
        op::<SeparableConv2dS8>(),
        op::<AveragePool2dS8>(),
        op::<MaxPool2dS8>(),
        op::<SoftmaxS8>(),
        op::<SoftmaxS8S16>(),
        op::<AddS8>(),
        op::<MulS8>(),
        op::<FullyConnectedF32>(),
        op::<Conv2dF32>(),
        op::<DepthwiseConv2dF32>(),
        op::<AveragePool2dF32>(),
        op::<MaxPool2dF32>(),
        op::<Pad>(),
        op::<Transpose>(),
        op::<StridedSlice>(),
        op::<RequantizeS8>(),
        op::<DequantizeS8F32>(),
        op::<LogisticF32>(),
        op::<TanhF32>(),
        op::<LogisticS8>(),
        op::<TanhS8>(),
        op::<MeanS8>(),
        op::<MeanF32>(),
        op::<QuantizeF32S8>(),
        op::<Concatenation>(),
        op::<SubF32>(),
        op::<DivF32>(),
        op::<SquaredDifferenceF32>(),
        op::<MaximumS8>(),
        op::<MaximumF32>(),
        op::<MinimumS8>(),
        op::<MinimumF32>(),
        op::<AbsF32>(),
        op::<NegF32>(),
        op::<SquareF32>(),
        op::<SqrtF32>(),
        op::<RsqrtF32>(),
        op::<ExpF32>(),
        op::<LogF32>(),
        op::<FloorF32>(),
        op::<CeilF32>(),
        op::<RoundF32>(),
        op::<SinF32>(),
        op::<CosF32>(),
        op::<ReluF32>(),
        op::<Relu6F32>(),
        op::<HardSwishF32>(),
        op::<EluF32>(),
        op::<RequantizeU8S8>(),
        op::<RequantizeS8U8>(),
        op::<DequantizeU8F32>(),
        op::<LeakyReluS8>(),
        op::<LeakyReluF32>(),
        op::<ResizeNearestNeighbor>(),
        op::<Cast>(),
        op::<Gather>(),
        op::<ArgMinMax>(),
        op::<SumF32>(),
        op::<ReduceMaxS8>(),
        op::<ReduceMaxF32>(),
        op::<ReduceMinS8>(),
        op::<ReduceMinF32>(),
        op::<LogSoftmaxF32>(),
        op::<HardSwishS8>(),
        op::<LutS8>(),
        op::<PreluS8>(),
        op::<PreluF32>(),
        op::<Comparison>(),
        op::<Logical>(),
        op::<Select>(),
        op::<SubS8>(),
        op::<MirrorPad>(),
        op::<SpaceBatch>(),
        op::<GatherNd>(),
        op::<L2NormalizationS8>(),
        op::<L2NormalizationF32>(),
        op::<L2Pool2dF32>(),
        op::<ResizeBilinearS8>(),
        op::<ResizeBilinearF32>(),
        op::<TransposeConvS8>(),
        op::<TransposeConvF32>(),
        op::<BatchMatmulS8>(),
        op::<BatchMatmulF32>(),
        op::<FloorDivF32>(),
        op::<FloorModF32>(),
        op::<SumS8>(),
        op::<QuantizeF32S16>(),
        op::<DequantizeS16F32>(),
        op::<RequantizeInt>(),
        op::<LogSoftmaxS8>(),
        op::<DivS8>(),
        op::<SquaredDifferenceS8>(),
        op::<ember_kernels::detection_postprocess::DetectionPostprocess>(),
        op::<ReluN1To1F32>(),
        op::<Relu0To1F32>(),
        op::<GeluF32>(),
        op::<GeluTanhF32>(),
    ]
}

/// Bindings whose byte offset leads every kernel's push block (`src/lib.rs`'
/// `BASE_WORDS`); a kernel with more has one word for each.
const BASE_WORDS: usize = 6;

/// The entry point of every kernel.
const ENTRY: &str = "main";

/// hal-local's `kernels::math` constants for `exp_f32`, computed the way hal-local computes
/// them (f32 arithmetic on this host), so the WGSL gets exactly the same bits.
fn exp_constants() -> Vec<(&'static str, f32)> {
    vec![
        ("EXP_LOG2_E", core::f32::consts::LOG2_E),
        ("EXP_LN2_HI", f32::from_bits(0x3F31_7200)),
        ("EXP_LN2_LO", f32::from_bits(0x35BF_BE8E)),
        ("EXP_ROUND_SHIFTER", 12_582_912.0),
        ("EXP_OVERFLOW_ABOVE", 88.722_84),
        ("EXP_UNDERFLOW_BELOW", -103.972_08),
        ("EXP_ONE", 1.0),
        ("EXP_C2", 1.0f32 / 2.0),
        ("EXP_C3", 1.0f32 / 6.0),
        ("EXP_C4", 1.0f32 / 24.0),
        ("EXP_C5", 1.0f32 / 120.0),
        ("EXP_C6", 1.0f32 / 720.0),
        ("EXP_C7", 1.0f32 / 5040.0),
    ]
}

/// A normal (or zero) `f32` as an exact WGSL hexadecimal float literal.
fn hex_float(v: f32) -> String {
    let bits = v.to_bits();
    let sign = if bits >> 31 != 0 { "-" } else { "" };
    let exponent = ((bits >> 23) & 0xFF) as i32;
    let mantissa = bits & 0x7F_FFFF;
    assert!(
        (1..=254).contains(&exponent) || bits << 1 == 0,
        "{v} is not a normal float"
    );
    if bits << 1 == 0 {
        return format!("{sign}0.0f");
    }
    // 23 mantissa bits, shifted to fill 6 hex digits.
    format!("{sign}0x1.{:06x}p{}f", mantissa << 1, exponent - 127)
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("wgsl");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", dir.display());

    let common_path = dir.join("common.wgsl");
    println!("cargo:rerun-if-changed={}", common_path.display());
    let common = read(&common_path);
    let exp_path = dir.join("exp.wgsl");
    println!("cargo:rerun-if-changed={}", exp_path.display());
    let exp = read(&exp_path);
    let mut constants_wgsl =
        String::from("\n// Generated by build.rs: hal-local's exp_f32 constants.\n");
    let mut constants_rs =
        String::from("#[cfg(test)]\npub(crate) const EXP_CONSTANTS: &[(&str, u32)] = &[\n");
    for (name, value) in exp_constants() {
        writeln!(constants_wgsl, "const {name}: f32 = {};", hex_float(value)).unwrap();
        writeln!(constants_rs, "    ({name:?}, {:#010x}),", value.to_bits()).unwrap();
    }
    constants_rs.push_str("];\n");

    let mut out = String::from("// Generated by build.rs from src/wgsl/*.wgsl.\n\n");
    out.push_str(&constants_rs);
    let shared: Vec<(String, &[&str])> = SHARED
        .iter()
        .map(|(file, kernels)| {
            let path = dir.join(file);
            println!("cargo:rerun-if-changed={}", path.display());
            (read(&path), *kernels)
        })
        .collect();
    // The built-in kernels, their bindings from their contracts, then the op set.
    let builtins = builtin::BUILTIN.iter().map(|contract| {
        let written: Vec<bool> = contract
            .bindings
            .iter()
            .map(|b| b.access == Access::Write)
            .collect();
        let from = format!("ember_kernels::builtin::{}", contract.name.to_uppercase());
        (contract.name, written, from)
    });
    let ops = ops().into_iter().map(|(name, written)| {
        let from = format!("ember-kernels' `{name}` parameters (KernelParams::BINDINGS)");
        (name, written, from)
    });
    for (name, written, expected_from) in builtins.chain(ops) {
        let path = dir.join(format!("{name}.wgsl"));
        println!("cargo:rerun-if-changed={}", path.display());
        // The kernel first, so naga's line numbers in its own part are the file's.
        let mut source = read(&path);
        for (text, kernels) in &shared {
            if kernels.contains(&name) {
                source.push('\n');
                source.push_str(text);
            }
        }
        let params_at = written.len().max(BASE_WORDS);
        let source = format!(
            "{source}\n{common}\nconst PARAMS_AT: u32 = {params_at}u;\n{exp}\n{constants_wgsl}"
        );
        let words = compile(&path, &source, &written, &expected_from);
        emit(&mut out, name, &words);
    }
    std::fs::write(out_dir.join("spirv.rs"), out).expect("writing spirv.rs");
}

/// Appends one kernel's words as a `const` named after it.
fn emit(out: &mut String, name: &str, words: &[u32]) {
    writeln!(
        out,
        "/// SPIR-V of `{name}` ({} words).\npub(crate) const {}: &[u32] = &[",
        words.len(),
        name.to_uppercase()
    )
    .unwrap();
    for chunk in words.chunks(8) {
        let line: Vec<String> = chunk.iter().map(|w| format!("{w:#010x}")).collect();
        writeln!(out, "    {},", line.join(", ")).unwrap();
    }
    out.push_str("];\n\n");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Parses, validates and translates one kernel whose bindings `0..written.len()` are
/// written where `written[i]`; any error panics with the file and naga's report (line
/// numbers past the kernel's own lines fall in the appended `common`).
fn compile(path: &Path, source: &str, written: &[bool], expected_from: &str) -> Vec<u32> {
    let shown = format!("{} (+ common.wgsl appended)", path.display());
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| fail(&e.emit_to_string_with_path(source, &shown)));
    let info = Validator::new(ValidationFlags::all(), Capabilities::IMMEDIATES)
        .validate(&module)
        .unwrap_or_else(|e| fail(&e.emit_to_string_with_path(source, &shown)));

    // The ABI: one compute entry point `main`, 64×1×1, the contract's bindings 0..n of set
    // 0, each written only where the contract writes it.
    let [entry] = module.entry_points.as_slice() else {
        fail(&format!("{shown}: expected exactly one entry point"));
    };
    if entry.name != ENTRY
        || entry.stage != naga::ShaderStage::Compute
        || entry.workgroup_size != [64, 1, 1]
    {
        fail(&format!(
            "{shown}: the entry point must be `@compute @workgroup_size(64, 1, 1) fn {ENTRY}`"
        ));
    }
    let mut declared: Vec<(u32, u32, bool)> = module
        .global_variables
        .iter()
        .filter_map(|(_, var)| {
            let written = match var.space {
                naga::AddressSpace::Storage { access } => {
                    access.contains(naga::StorageAccess::STORE)
                }
                _ => true,
            };
            var.binding.as_ref().map(|b| (b.group, b.binding, written))
        })
        .collect();
    declared.sort_unstable();
    let expected: Vec<(u32, u32, bool)> = (0u32..).zip(written).map(|(i, &w)| (0, i, w)).collect();
    if declared != expected {
        fail(&format!(
            "{shown}: declares bindings {declared:?} (group, binding, written), expected \
             {expected:?} from {expected_from}"
        ));
    }

    let options = spv::Options {
        lang_version: (1, 0),
        flags: spv::WriterFlags::DEBUG,
        // Out-of-range reads give 0 and writes are dropped (as hal-local's views do), so a
        // dispatch the driver failed to check cannot touch memory outside its bindings.
        bounds_check_policies: BoundsCheckPolicies {
            index: BoundsCheckPolicy::ReadZeroSkipWrite,
            buffer: BoundsCheckPolicy::ReadZeroSkipWrite,
            ..BoundsCheckPolicies::default()
        },
        // No kernel reads workgroup memory before it writes it (each writes its tiles and
        // partial sums, then meets a barrier), so none needs it zeroed first. naga's
        // default polyfill has one invocation of every workgroup zero all of it before any
        // work starts; on an NVIDIA H100 that cost each dispatch microseconds, growing with
        // the memory's size.
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::None,
        ..spv::Options::default()
    };
    let words = spv::write_vec(&module, &info, &options, None)
        .unwrap_or_else(|e| fail(&format!("{shown}: SPIR-V output: {e}")));
    no_contraction(words)
}

fn fail(message: &str) -> ! {
    panic!("\n{message}\n")
}

/// SPIR-V opcodes (SPIR-V 1.0 specification, section 3.32).
mod op {
    pub const DECORATE: u32 = 71;
    pub const F_ADD: u32 = 129;
    pub const F_SUB: u32 = 131;
    pub const F_MUL: u32 = 133;
    pub const F_DIV: u32 = 136;
    pub const F_REM: u32 = 138;
    pub const F_MOD: u32 = 141;
    pub const VECTOR_TIMES_SCALAR: u32 = 142;
    /// Opcodes of the sections before the types (capabilities, extensions, imports, memory
    /// model, entry points, execution modes, debug names, annotations): decorations go
    /// after the last of them.
    pub const PREAMBLE: &[u32] = &[
        17, 10, 11, 14, 15, 16, 331, // capability .. execution mode id
        7, 2, 3, 4, 5, 6, 330, 8, 317, // debug
        71, 72, 73, 74, 75, 332, 5632, 5633, // annotations
    ];
}
/// The `NoContraction` decoration.
const NO_CONTRACTION: u32 = 42;

/// Adds `OpDecorate %r NoContraction` for the result of every float add, subtract,
/// multiply, divide and remainder, so no driver fuses a multiply and an add into an FMA or
/// reassociates (`(x + c) - c` must round as written in `exp_f32`): each operation rounds
/// on its own, as in hal-local's Rust.
fn no_contraction(words: Vec<u32>) -> Vec<u32> {
    assert!(words.len() >= 5 && words[0] == 0x0723_0203, "not SPIR-V");
    let mut results = Vec::new();
    let mut insert_at = None;
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xFFFF;
        assert!(count > 0 && at + count <= words.len(), "malformed SPIR-V");
        if insert_at.is_none() && !op::PREAMBLE.contains(&opcode) {
            insert_at = Some(at);
        }
        if matches!(
            opcode,
            op::F_ADD
                | op::F_SUB
                | op::F_MUL
                | op::F_DIV
                | op::F_REM
                | op::F_MOD
                | op::VECTOR_TIMES_SCALAR
        ) {
            // Result type, result id, operands.
            results.push(words[at + 2]);
        }
        at += count;
    }
    let insert_at = insert_at.expect("SPIR-V without types");
    let mut out = Vec::with_capacity(words.len() + 3 * results.len());
    out.extend_from_slice(&words[..insert_at]);
    for id in results {
        out.extend_from_slice(&[(3 << 16) | op::DECORATE, id, NO_CONTRACTION]);
    }
    out.extend_from_slice(&words[insert_at..]);
    out
}
