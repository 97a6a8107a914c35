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
pub mod add;
pub mod affine_s8;
pub mod broadcast;
pub mod broadcast_f32;
pub mod builtin;
pub mod concatenation;
pub mod conv2d;
mod copy;
pub mod depthwise_conv2d;
pub mod fully_connected;
pub mod mean;
pub mod mul;
pub mod pad;
pub mod padding;
pub mod params;
pub mod pooling;
pub mod quant;
mod row_major;
mod row_tiles;
pub mod scratch;
pub mod separable_conv2d;
mod shape;
#[cfg(any(ember_dsp, test))]
mod simd;
pub mod strided_slice;
pub mod transpose;
#[cfg(any(test, feature = "tuned-check"))]
pub mod tuned_check;

pub use hal_core::kernel::KernelError;
pub use params::{written_binding, BindingUse, KernelParams, Words};
pub mod binding_len;
pub mod dequantize;
mod elementwise_map;
pub mod fixed_point;
pub mod float_math;
pub mod logistic;
pub mod quantize;
pub mod softmax;
pub mod tanh;
pub mod unary_f32;
