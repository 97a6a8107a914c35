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
