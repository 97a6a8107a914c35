//! The kernels of the TFLite op set: `ember-kernels`' reference arithmetic behind
//! [`Entry::Exclusive`](crate::kernel::Entry::Exclusive) entries (plain slices), each
//! decoding and checking its parameters against the contract `ember-kernels` declares
//! before it touches a byte.

use crate::kernel::Kernel;

/// Every TFLite-op kernel, for a device that runs imported models.
pub static TFLITE: &[Kernel] = &[];
