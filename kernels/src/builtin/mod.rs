//! The built-in kernels every driver provides whatever module it runs (those `digits`
//! dispatches, and `noop`): each one's contract, declared once, here.
//!
//! A contract ([`Contract`]) is data: the push constants the kernel reads, the bindings it
//! reads and writes, how many elements each must hold, and the messages of its shape
//! refusals. Every driver checks a dispatch of a built-in kernel against it before touching
//! memory ([`Contract::check`]): the local driver's kernel for every workgroup, the Vulkan
//! driver on the host before recording. Both therefore refuse the same dispatches with the
//! same [`KernelError`](crate::KernelError).
//!
//! One file per kernel (or per family sharing its bindings); [`BUILTIN`] lists them all in
//! the local driver's table order, and [`find`] looks one up by name.
//!
//! ```
//! use ember_kernels::builtin;
//! use hal_core::contract::BindingFacts;
//! use hal_core::kernel::KernelError;
//!
//! let words = |len| BindingFacts { offset: 0, len, writable: true };
//! // softmax_f32 over 2 rows of 3: in and out need 24 bytes each.
//! let softmax = builtin::find("softmax_f32").unwrap();
//! let checked = softmax.check(&[2, 3], &[words(24), words(24)])?;
//! assert_eq!(checked.constants[..2], [2, 3]);
//! assert_eq!(
//!     softmax.check(&[2, 3], &[words(24), words(20)]),
//!     Err(KernelError::BindingTooSmall { index: 1, len: 20, needed: 24 })
//! );
//! # Ok::<(), KernelError>(())
//! ```

use hal_core::contract::Contract;

mod copy_u32;
mod elementwise_f32;
mod fill_u32;
mod matmul_f32;
mod mlp_softmax_f32;
mod noop;
mod softmax_f32;

pub use copy_u32::COPY_U32;
pub use elementwise_f32::{ADD_F32, MUL_F32, RELU_F32};
pub use fill_u32::FILL_U32;
pub use matmul_f32::{MATMUL_F32, MATMUL_FLAG_BIAS, MATMUL_FLAG_RELU};
pub use mlp_softmax_f32::{MLP_MAX_WIDTH, MLP_SOFTMAX_F32};
pub use noop::NOOP;
pub use softmax_f32::{SOFTMAX_BETA_DEFAULT, SOFTMAX_F32};

/// Every built-in kernel's contract, in the local driver's table order. Names are unique.
pub static BUILTIN: [&Contract; 9] = [
    &FILL_U32,
    &COPY_U32,
    &ADD_F32,
    &MUL_F32,
    &RELU_F32,
    &MATMUL_F32,
    &SOFTMAX_F32,
    &MLP_SOFTMAX_F32,
    &NOOP,
];

/// The built-in contract of the kernel named `name`.
pub fn find(name: &str) -> Option<&'static Contract> {
    BUILTIN.iter().copied().find(|c| c.name == name)
}

#[cfg(test)]
mod testutil;

#[cfg(test)]
mod tests {
    use super::*;
    use hal_core::command::MAX_BINDINGS;
    use hal_core::contract::{Constant, Count, Order, MAX_CONSTANTS};

    /// Every built-in contract is well formed: a name found once, at most `MAX_CONSTANTS`
    /// constants with flags only last, at most `MAX_BINDINGS` bindings whose counts name
    /// declared constants and bindings (a binding's size never depends on a binding checked
    /// after it), flag-only bindings under known flags, messages for every refusal it can
    /// make.
    #[test]
    fn builtin_contracts_are_well_formed() {
        for (i, c) in BUILTIN.iter().enumerate() {
            assert!(BUILTIN[..i].iter().all(|o| o.name != c.name), "{}", c.name);
            assert!(core::ptr::eq(find(c.name).unwrap(), *c));
            assert!(c.constants.len() <= MAX_CONSTANTS, "{}", c.name);
            assert!(c.bindings.len() <= MAX_BINDINGS, "{}", c.name);
            let flags = c
                .constants
                .iter()
                .position(|k| matches!(k, Constant::Flags { .. }));
            if let Some(at) = flags {
                assert_eq!(at, c.constants.len() - 1, "{}: flags last", c.name);
                assert!(!c.refusals.flags.is_empty(), "{}", c.name);
            }
            // Optional constants only trail the required ones.
            let required = c.required_constants();
            assert!(
                !c.constants[..required].iter().any(Constant::is_optional),
                "{}",
                c.name
            );
            let known = match c.constants.last() {
                Some(Constant::Flags { known, .. }) => *known,
                _ => 0,
            };
            if c.constants
                .iter()
                .any(|k| matches!(k, Constant::Dimension(_) | Constant::Width { .. }))
            {
                assert!(!c.refusals.zero.is_empty(), "{}", c.name);
            }
            for (j, b) in c.bindings.iter().enumerate() {
                assert_eq!(b.only_with & !known, 0, "{} binding {j}", c.name);
                assert!(b.element.size.is_power_of_two() && b.element.align.is_power_of_two());
                let constant = |k: u8| assert!(usize::from(k) < c.constants.len());
                match b.count {
                    Count::Any => {}
                    Count::AsBinding(k) => {
                        assert!(usize::from(k) < c.bindings.len() && usize::from(k) != j);
                        if c.order == Order::BindingByBinding {
                            assert!(usize::from(k) < j, "{} binding {j}", c.name);
                        }
                    }
                    Count::Constant(k) => constant(k),
                    Count::Product(x, y) => {
                        constant(x);
                        constant(y);
                        assert!(!c.refusals.overflow.is_empty(), "{}", c.name);
                    }
                }
            }
        }
        assert!(find("nope").is_none());
        assert!(find("").is_none());
    }
}
