#![doc = include_str!("../README.md")]

use ember_kernels::builtin;
use hal_core::contract::{BindingFacts, Contract};
use hal_core::kernel::KernelError;

mod ops;
pub use ops::{find_op, OpBinding, OpKernel, OpPushConstants, OPS};
pub use ops::{OP_MAX_BINDINGS, OP_MAX_PARAMS, OP_PUSH_CONSTANT_BYTES};

mod spirv {
    //! The SPIR-V words `build.rs` generated.
    include!(concat!(env!("OUT_DIR"), "/spirv.rs"));
}

/// Invocations per workgroup (`64 × 1 × 1`), fixed in every kernel's SPIR-V.
pub const WORKGROUP_SIZE: u32 = 64;

/// Size in bytes of the push-constant range every kernel declares (16 words).
pub const PUSH_CONSTANT_BYTES: u32 = 64;

/// How many bindings get a `base` word in the push constants (words 0..=7).
pub const MAX_BASES: usize = 8;

/// How many bindings get a `len` word in the push constants (words 8..=11).
pub const MAX_LENS: usize = 4;

/// How many of the dispatch's own push constants reach a kernel (words 12..=15).
pub const MAX_CONSTANTS: usize = 4;

/// `matmul_f32` flag bit 0 (constant 3): add `bias[j]` (binding 3) to column `j`.
pub const FLAG_BIAS: u32 = builtin::MATMUL_FLAG_BIAS;

/// `matmul_f32` flag bit 1 (constant 3): ReLU after the bias.
pub const FLAG_RELU: u32 = builtin::MATMUL_FLAG_RELU;

/// One kernel's SPIR-V module and what the driver needs to run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpirvKernel {
    /// The kernel's name, as hal-local's table and modules spell it.
    pub name: &'static str,
    /// The compute entry point in [`words`](Self::words): always `main`.
    pub entry: &'static str,
    /// The SPIR-V module, as 32-bit words.
    pub words: &'static [u32],
    /// Storage-buffer descriptors the module declares: set 0, bindings `0..bindings`, one
    /// per binding of its contract.
    pub bindings: u32,
    /// The kernel's contract: a driver checks every dispatch against it before recording.
    pub contract: &'static Contract,
}

/// Every kernel, in hal-local's table order (that of [`builtin::BUILTIN`]).
pub static KERNELS: &[SpirvKernel] = &[
    kernel(&builtin::FILL_U32, spirv::FILL_U32),
    kernel(&builtin::COPY_U32, spirv::COPY_U32),
    kernel(&builtin::ADD_F32, spirv::ADD_F32),
    kernel(&builtin::MUL_F32, spirv::MUL_F32),
    kernel(&builtin::RELU_F32, spirv::RELU_F32),
    kernel(&builtin::MATMUL_F32, spirv::MATMUL_F32),
    kernel(&builtin::SOFTMAX_F32, spirv::SOFTMAX_F32),
    kernel(&builtin::MLP_SOFTMAX_F32, spirv::MLP_SOFTMAX_F32),
    kernel(&builtin::NOOP, spirv::NOOP),
];

const fn kernel(contract: &'static Contract, words: &'static [u32]) -> SpirvKernel {
    SpirvKernel {
        name: contract.name,
        entry: "main",
        words,
        bindings: contract.bindings.len() as u32,
        contract,
    }
}

/// The kernel named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static SpirvKernel> {
    KERNELS.iter().find(|k| k.name == name)
}

/// The 64-byte push-constant block, word for word (see the crate docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushConstants {
    /// Element offset of binding `i` inside its bound descriptor range (words 0..=7).
    pub base: [u32; MAX_BASES],
    /// Length of binding `i` in whole 4-byte elements (words 8..=11).
    pub len: [u32; MAX_LENS],
    /// The kernel's constants 0..=3 (words 12..=15).
    pub constants: [u32; MAX_CONSTANTS],
}

impl PushConstants {
    /// The block for a dispatch: `bases[i]` and `lens[i]` for its bindings (extra ones
    /// dropped, missing ones 0), and its constants (the first four; missing ones 0).
    pub fn new(bases: &[u32], lens: &[u32], constants: &[u32]) -> Self {
        let mut out = Self::default();
        for (to, from) in out.base.iter_mut().zip(bases) {
            *to = *from;
        }
        for (to, from) in out.len.iter_mut().zip(lens) {
            *to = *from;
        }
        for (to, from) in out.constants.iter_mut().zip(constants) {
            *to = *from;
        }
        out
    }

    /// The 16 words in order.
    pub fn words(&self) -> [u32; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&self.base);
        out[8..12].copy_from_slice(&self.len);
        out[12..].copy_from_slice(&self.constants);
        out
    }

    /// The 64 bytes in native byte order, for `vkCmdPushConstants`.
    pub fn bytes(&self) -> [u8; PUSH_CONSTANT_BYTES as usize] {
        let mut out = [0; PUSH_CONSTANT_BYTES as usize];
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.words()) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_and_found() {
        let names = [
            "fill_u32",
            "copy_u32",
            "add_f32",
            "mul_f32",
            "relu_f32",
            "matmul_f32",
            "softmax_f32",
            "mlp_softmax_f32",
            "noop",
        ];
        assert_eq!(KERNELS.len(), names.len());
        assert_eq!(KERNELS.len(), builtin::BUILTIN.len());
        for ((k, name), c) in KERNELS.iter().zip(names).zip(builtin::BUILTIN) {
            assert_eq!(k.name, name);
            assert!(
                core::ptr::eq(k.contract, c),
                "{name}: ember-kernels' built-in contract"
            );
            assert_eq!(k.bindings as usize, c.bindings.len());
            assert!(core::ptr::eq(find(name).expect("listed"), k));
            assert_eq!(k.entry, "main");
            // SPIR-V magic number, then version 1.0.
            assert_eq!(k.words[0], 0x0723_0203, "{name}");
            assert_eq!(k.words[1], 0x0001_0000, "{name}");
        }
        assert!(find("nope").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn push_constant_layout() {
        let pc = PushConstants::new(
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
            &[10, 11],
            &[20, 21, 22, 23, 24],
        );
        assert_eq!(
            pc.words(),
            [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 0, 0, 20, 21, 22, 23]
        );
        let bytes = pc.bytes();
        assert_eq!(bytes.len(), PUSH_CONSTANT_BYTES as usize);
        assert_eq!(bytes[12 * 4..13 * 4], 20u32.to_ne_bytes());
    }

    /// Every constant `exp_f32` uses is hal-local's (same bits), and reaches the SPIR-V.
    #[test]
    fn exp_constants_match_hal_local_and_reach_the_spirv() {
        let expected = [
            ("EXP_LOG2_E", core::f32::consts::LOG2_E.to_bits()),
            ("EXP_LN2_HI", 0x3F31_7200),
            ("EXP_LN2_LO", 0x35BF_BE8E),
            ("EXP_ROUND_SHIFTER", 12_582_912.0f32.to_bits()),
            ("EXP_OVERFLOW_ABOVE", 88.722_84f32.to_bits()),
            ("EXP_UNDERFLOW_BELOW", (-103.972_08f32).to_bits()),
            ("EXP_ONE", 1.0f32.to_bits()),
            ("EXP_C2", 0.5f32.to_bits()),
            ("EXP_C3", (1.0f32 / 6.0).to_bits()),
            ("EXP_C4", (1.0f32 / 24.0).to_bits()),
            ("EXP_C5", (1.0f32 / 120.0).to_bits()),
            ("EXP_C6", (1.0f32 / 720.0).to_bits()),
            ("EXP_C7", (1.0f32 / 5040.0).to_bits()),
        ];
        assert_eq!(spirv::EXP_CONSTANTS, expected);
        let words = find("softmax_f32").expect("softmax").words;
        for (name, bits) in expected {
            // OpConstant: 4 words, opcode 43, then result type, result id, value.
            let found = words
                .windows(4)
                .any(|w| w[0] == (4 << 16 | 43) && w[3] == bits);
            assert!(
                found,
                "{name} ({bits:#x}) is not an OpConstant of softmax_f32"
            );
        }
    }

    /// Every float arithmetic result carries `NoContraction`.
    #[test]
    fn float_operations_are_not_contracted() {
        for k in KERNELS {
            let mut decorated = Vec::new();
            let mut results = Vec::new();
            let mut at = 5;
            while at < k.words.len() {
                let count = (k.words[at] >> 16) as usize;
                let op = k.words[at] & 0xFFFF;
                if op == 71 && count == 3 && k.words[at + 2] == 42 {
                    decorated.push(k.words[at + 1]);
                }
                if [129, 131, 133, 136].contains(&op) {
                    results.push(k.words[at + 2]);
                }
                at += count;
            }
            for id in &results {
                assert!(
                    decorated.contains(id),
                    "{}: %{id} not NoContraction",
                    k.name
                );
            }
            if [
                "add_f32",
                "mul_f32",
                "matmul_f32",
                "softmax_f32",
                "mlp_softmax_f32",
            ]
            .contains(&k.name)
            {
                assert!(!results.is_empty(), "{}", k.name);
            }
        }
    }
}
