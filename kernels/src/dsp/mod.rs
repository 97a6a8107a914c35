//! Kernels tuned for Armv7E-M's DSP extension (Cortex-M4, Cortex-M7), compiled where the
//! build script sets `ember_dsp`. Each takes the place of a portable kernel's loops once
//! that kernel has checked its parameters and bindings, and returns `false`, having
//! written nothing, for the shapes it does not cover (the portable loops then run). Every
//! result is bit for bit the portable kernel's: the products are the same 16-bit products
//! and the int32 sums wrap, so their order does not matter.
//!
//! The blocking follows CMSIS-NN's: `arm_nn_vec_mat_mult_t_s8` for fully connected layers
//! (two weight rows at a time), `arm_nn_mat_mult_kernel_s8_s16` for convolutions (two
//! output pixels by two output channels, over an im2col patch widened to 16 bits) and
//! `arm_depthwise_conv_s8_opt` for depthwise convolutions (four channels a step, each
//! word of inputs and of weights split once into 16-bit lanes).

pub(crate) mod conv2d;
pub(crate) mod depthwise_conv2d;
pub(crate) mod fully_connected;
pub(crate) mod simd;
