#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::panic, clippy::unwrap_used, clippy::expect_used)
)]

pub mod params;
pub mod quant;

pub use hal_core::kernel::KernelError;
pub use params::{KernelParams, Words};
pub mod binding_len;
pub mod dequantize;
pub mod fixed_point;
pub mod float_math;
pub mod logistic;
pub mod quantize;
pub mod softmax;
pub mod tanh;
