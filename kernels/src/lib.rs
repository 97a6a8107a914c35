#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::panic, clippy::unwrap_used, clippy::expect_used)
)]

#[cfg(any(test, feature = "tuned-check"))]
extern crate alloc;

pub mod act_s8;
pub mod activation;
pub mod activation_f32;
pub mod add;
pub mod affine;
pub mod arg_min_max;
pub mod arithmetic_f32;
pub mod broadcast;
pub mod broadcast_f32;
pub mod builtin;
pub mod cast;
pub mod comparison;
pub mod concatenation;
pub mod conv2d;
mod copy;
pub mod depthwise_conv2d;
pub mod fully_connected;
pub mod gather;
pub mod gather_nd;
pub mod l2_normalization;
pub mod logical;
pub mod math_f32;
pub mod maximum_minimum;
pub mod mean;
pub mod mirror_pad;
pub mod mul;
#[cfg(all(
    any(ember_blocked, test),
    target_arch = "aarch64",
    target_feature = "neon"
))]
mod neon_load;
pub mod pad;
pub mod padding;
pub mod params;
pub mod pooling;
pub mod prelu;
pub mod quant;
pub mod reduce;
pub mod resize_bilinear;
pub mod resize_nearest_neighbor;
mod row_major;
mod row_tiles;
pub mod scratch;
pub mod select;
pub mod separable_conv2d;
mod shape;
#[cfg(any(ember_dsp, test))]
mod simd;
pub mod space_batch;
pub mod strided_slice;
pub mod sub;
#[cfg(any(ember_blocked, test))]
mod taps;
pub mod transpose;
#[cfg(any(test, feature = "tuned-check"))]
pub mod tuned_check;
mod tuned_variant;

pub use hal_core::kernel::KernelError;
pub use params::{written_binding, BindingUse, KernelParams, Words};

/// The tuned kernels a core runs beside the portable loops (which stay the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunedVariant {
    /// Armv7E-M's DSP extension (Cortex-M4, Cortex-M7): each op folder's `dsp.rs`.
    Dsp,
    /// The register-blocked loops (Cortex-M3, RV32IMAC, AArch64): each op folder's
    /// `blocked.rs`.
    Blocked,
}

impl TunedVariant {
    /// The variant a target triple's build runs (its build script's rule, without target
    /// features beyond the triple's own); `None` for the portable loops alone. A build with
    /// the `portable-only` feature runs the portable loops on `Blocked` targets.
    pub fn for_target(target: &str) -> Option<Self> {
        match tuned_variant::tuned_variant_name(target, &[]) {
            Some("dsp") => Some(Self::Dsp),
            Some(_) => Some(Self::Blocked),
            None => None,
        }
    }
}
pub mod batch_matmul;
pub mod binding_len;
pub mod bounded_relu;
pub mod dequantize;
pub mod detection_postprocess;
pub mod div_s8;
mod elementwise_map;
pub mod fixed_point;
pub mod float_math;
pub mod floor_div_mod;
pub mod gelu;
pub mod hard_swish;
pub mod leaky_relu;
pub mod log_softmax;
pub mod log_softmax_s8;
pub mod logistic;
pub mod lut_s8;
pub mod lut_s8_tables;
pub mod quantize;
pub mod requantize_int;
pub mod softmax;
pub mod squared_difference_s8;
pub mod tanh;
pub mod transpose_conv;
pub mod unary_f32;
