//! The built-in kernels (`ember_kernels::builtin`): each checked against its contract, run
//! on the dispatch's own grid. `add_f32` and `mul_f32` given constants are TFLite's float
//! ADD and MUL, checked by `ember_kernels::add::AddF32` and `ember_kernels::mul::MulF32`
//! instead.

use crate::kernel::{Spec, SpirvKernel};
use crate::{spirv, KernelError};
use ember_kernels::add::Add;
use ember_kernels::broadcast_f32::{BinaryFunctionF32, BroadcastF32};
use ember_kernels::mul::Mul;
use ember_kernels::{builtin, BindingUse, KernelParams, Words};
use hal_core::contract::Contract;

/// A built-in kernel: its contract, SPIR-V and bindings (32-bit words, written where the
/// contract writes them; `build.rs` declares them from the contract, and a test holds the two
/// together).
const fn kernel(
    contract: &'static Contract,
    words: &'static [u32],
    bindings: &'static [BindingUse],
) -> SpirvKernel {
    SpirvKernel {
        name: contract.name,
        entry: "main",
        words,
        bindings,
        output_last: false,
        lanes_per_word: |_| 1,
        tiles: None,
        spec: Spec::Contract(contract),
    }
}

/// `add_f32` or `mul_f32` given constants (TFLite's float ADD or MUL):
/// [`BroadcastF32<F>`]'s decode and length check, as hal-local's kernel runs them.
fn broadcast_params<F: BinaryFunctionF32>(
    constants: &[u32],
    lens: &[usize],
) -> Result<usize, KernelError> {
    let mut words = Words::new(constants);
    BroadcastF32::<F>::decode(&mut words)?.check(lens)?;
    Ok(constants.len() - words.rest().len())
}

/// Every built-in kernel, in [`builtin::BUILTIN`]'s order.
pub(crate) const BUILTINS: [SpirvKernel; 9] = [
    kernel(&builtin::FILL_U32, spirv::FILL_U32, &[BindingUse::WRITE_32]),
    kernel(
        &builtin::COPY_U32,
        spirv::COPY_U32,
        &[BindingUse::READ_32, BindingUse::WRITE_32],
    ),
    SpirvKernel {
        spec: Spec::ContractOrParams(&builtin::ADD_F32, broadcast_params::<Add>),
        ..kernel(
            &builtin::ADD_F32,
            spirv::ADD_F32,
            &[
                BindingUse::READ_32,
                BindingUse::READ_32,
                BindingUse::WRITE_32,
            ],
        )
    },
    SpirvKernel {
        spec: Spec::ContractOrParams(&builtin::MUL_F32, broadcast_params::<Mul>),
        ..kernel(
            &builtin::MUL_F32,
            spirv::MUL_F32,
            &[
                BindingUse::READ_32,
                BindingUse::READ_32,
                BindingUse::WRITE_32,
            ],
        )
    },
    kernel(
        &builtin::RELU_F32,
        spirv::RELU_F32,
        &[BindingUse::READ_32, BindingUse::WRITE_32],
    ),
    kernel(
        &builtin::MATMUL_F32,
        spirv::MATMUL_F32,
        &[
            BindingUse::READ_32,
            BindingUse::READ_32,
            BindingUse::WRITE_32,
            BindingUse::READ_32,
        ],
    ),
    kernel(
        &builtin::SOFTMAX_F32,
        spirv::SOFTMAX_F32,
        &[BindingUse::READ_32, BindingUse::WRITE_32],
    ),
    kernel(
        &builtin::MLP_SOFTMAX_F32,
        spirv::MLP_SOFTMAX_F32,
        &[
            BindingUse::READ_32,
            BindingUse::READ_32,
            BindingUse::READ_32,
            BindingUse::READ_32,
            BindingUse::READ_32,
            BindingUse::WRITE_32,
        ],
    ),
    kernel(&builtin::NOOP, spirv::NOOP, &[]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use hal_core::contract::Access;

    /// Each built-in kernel's bindings are its contract's: as many, the same element size,
    /// written exactly where the contract writes.
    #[test]
    fn bindings_are_the_contracts() {
        assert_eq!(BUILTINS.len(), builtin::BUILTIN.len());
        for (k, c) in BUILTINS.iter().zip(builtin::BUILTIN) {
            assert_eq!(k.name, c.name);
            assert!(
                k.runs_on_dispatch_grid() && !k.binds_whole_words(),
                "{}",
                k.name
            );
            assert_eq!(k.bindings.len(), c.bindings.len(), "{}", k.name);
            for (b, rule) in k.bindings.iter().zip(c.bindings) {
                assert_eq!(b.element, rule.element.size, "{}", k.name);
                assert_eq!(b.written, rule.access == Access::Write, "{}", k.name);
            }
        }
    }
}
