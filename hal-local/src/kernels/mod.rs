//! Built-in kernels: a static table of the kernels every Ember local-CPU device provides.
//!
//! Every kernel checks its constants and bindings against its contract in
//! [`ember_kernels::builtin`] (`builtin::FILL_U32` for `fill_u32`, …) before it writes anything,
//! and every workgroup of a dispatch reaches the same verdict, so a refused dispatch writes
//! nothing. The Vulkan driver checks its dispatches against the same contracts, so both
//! refuse the same dispatches with the same errors. (`noop`'s contract accepts every
//! dispatch, so `noop` skips the call.)
//! Each workgroup handles its [`Workgroup::share_of`](crate::kernel::Workgroup::share_of) of
//! the work, so any grid works, `1×1×1` included, and workgroups write disjoint elements.
//! Bindings are viewed as 4-byte elements: each must start 4-byte aligned
//! ([`KernelError::Misaligned`](crate::kernel::KernelError::Misaligned)), a trailing partial
//! element is ignored, and a binding a kernel writes must be writable
//! ([`KernelError::ReadOnly`](crate::kernel::KernelError::ReadOnly)). Too-short bindings give
//! [`KernelError::BindingTooSmall`](crate::kernel::KernelError::BindingTooSmall) with the
//! exact bytes needed.
//!
//! | Kernel | Constants | Bindings | Effect |
//! |---|---|---|---|
//! | `fill_u32` | 0 `value` | 0 `out` | every whole word of `out` = `value` (bit for bit) |
//! | `copy_u32` | — | 0 `src`, 1 `dst` | the first `dst.words` words of `src` into `dst`; `src` needs at least as many |
//! | `add_f32` | — | 0 `a`, 1 `b`, 2 `out` | `out[i] = a[i] + b[i]` for `i < out.len`; in place works |
//! | `mul_f32` | — | 0 `a`, 1 `b`, 2 `out` | `out[i] = a[i] * b[i]` for `i < out.len`; in place works |
//! | `relu_f32` | — | 0 `in`, 1 `out` | `out[i] = max(in[i], 0)` for `i < out.len`; in place works |
//! | `matmul_f32` | 0 `M`, 1 `K`, 2 `N`, \[3 `flags`\] | 0 `A` (M×K), 1 `B` (K×N), 2 `C` (M×N), \[3 `bias` (N)\] | `C = A·B`, then `+ bias` per row if flags bit 0, then ReLU if bit 1 |
//! | `softmax_f32` | 0 `rows`, 1 `cols`, \[2 `beta`\] | 0 `in`, 1 `out` (rows×cols each) | row-wise softmax, max-subtracted, the differences times `beta` (1.0 when absent; TFLite's float SOFTMAX); in place works |
//! | `mlp_softmax_f32` | 0 `M`, 1 `K`, 2 `H`, 3 `N` (`H`, `N` ≤ 512) | 0 `x` (M×K), 1 `w1` (K×H), 2 `b1` (H), 3 `w2` (H×N), 4 `b2` (N), 5 `y` (M×N) | per row `y = softmax(relu(x·w1 + b1)·w2 + b2)`: the three kernels above in one dispatch, bit for bit |
//! | `noop` | — | — | nothing (measures dispatch overhead) |
//!
//! Matrices are row-major `f32`. A missing `flags` constant means 0; unknown flag bits, zero
//! dimensions and sizes that overflow give [`KernelError::Shape`](crate::kernel::KernelError::Shape).
//! See each kernel's entry function for details.

use crate::kernel::Kernel;

pub mod copy;
pub mod elementwise;
pub mod fill;
pub mod math;
pub mod matmul;
pub mod mlp;
pub mod noop;
pub mod softmax;
#[cfg(feature = "tflite")]
pub mod tflite;
mod util;

// Every built-in kernel at `hal_local::kernels::<NAME uppercased>`, the path build tools
// (ember-build) generate for a kernel a module names.
pub use copy::COPY_U32;
pub use elementwise::{ADD_F32, MUL_F32, RELU_F32};
pub use fill::FILL_U32;
pub use matmul::MATMUL_F32;
pub use mlp::MLP_SOFTMAX_F32;
pub use noop::NOOP;
pub use softmax::SOFTMAX_F32;
#[cfg(feature = "tflite")]
pub use tflite::{TFLITE, TFLITE_PATHS};

#[cfg(test)]
mod testutil;

/// A kernel's name and the Rust path of its entry (a `Kernel` const), for build tools that
/// link a module's kernels statically (ember-build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelPath {
    /// The kernel's name, as modules name it.
    pub name: &'static str,
    /// The path of its `Kernel` const, from the crate root (`::hal_local::kernels::…`).
    pub path: &'static str,
}

/// [`BUILTIN`] and [`BUILTIN_PATHS`], from one list.
macro_rules! builtin_table {
    ($($module:ident :: $kernel:ident),+ $(,)?) => {
        /// Every built-in kernel, for the driver's kernel lookup.
        pub static BUILTIN: &[Kernel] = &[$($module::$kernel),+];

        /// Every built-in kernel's name with the Rust path of its entry, in [`BUILTIN`]'s
        /// order.
        pub static BUILTIN_PATHS: &[KernelPath] = &[$(KernelPath {
            name: $module::$kernel.name,
            path: concat!("::hal_local::kernels::", stringify!($kernel)),
        }),+];
    };
}

builtin_table!(
    fill::FILL_U32,
    copy::COPY_U32,
    elementwise::ADD_F32,
    elementwise::MUL_F32,
    elementwise::RELU_F32,
    matmul::MATMUL_F32,
    softmax::SOFTMAX_F32,
    mlp::MLP_SOFTMAX_F32,
    noop::NOOP,
);

/// The first kernel in `table` named `name`.
pub fn find<'t>(table: &'t [Kernel], name: &str) -> Option<&'t Kernel> {
    table.iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, k) in BUILTIN.iter().enumerate() {
            assert!(
                BUILTIN[..i].iter().all(|other| other.name != k.name),
                "{}",
                k.name
            );
            let found = find(BUILTIN, k.name).expect("listed kernel");
            assert!(core::ptr::eq(found, k));
        }
        for name in [
            "fill_u32",
            "copy_u32",
            "add_f32",
            "mul_f32",
            "relu_f32",
            "matmul_f32",
            "softmax_f32",
            "mlp_softmax_f32",
            "noop",
        ] {
            assert!(find(BUILTIN, name).is_some(), "{name}");
        }
        assert_eq!(BUILTIN.len(), 9);
        assert!(find(BUILTIN, "nope").is_none());
        assert!(find(BUILTIN, "").is_none());
        assert!(find(&[], "noop").is_none());
    }

    #[test]
    fn paths_follow_the_table() {
        assert_eq!(BUILTIN_PATHS.len(), BUILTIN.len());
        for (kernel, linked) in BUILTIN.iter().zip(BUILTIN_PATHS) {
            assert_eq!(kernel.name, linked.name);
            let konst = linked.path.rsplit("::").next().unwrap_or_default();
            assert_eq!(konst, kernel.name.to_uppercase());
        }
    }
}
