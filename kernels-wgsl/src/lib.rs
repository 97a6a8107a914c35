#![doc = include_str!("../README.md")]

use ember_kernels::builtin;
use hal_core::kernel::KernelError;

mod builtin_kernels;
mod kernel;
mod ops;
pub use kernel::{PushConstants, SpirvKernel};
pub use kernel::{BASE_WORDS, MAX_PARAMS, PUSH_CONSTANT_BYTES};

mod spirv {
    //! The SPIR-V words `build.rs` generated.
    include!(concat!(env!("OUT_DIR"), "/spirv.rs"));
}

/// Invocations per workgroup (`64 × 1 × 1`), fixed in every kernel's SPIR-V.
pub const WORKGROUP_SIZE: u32 = 64;

/// `matmul_f32` flag bit 0 (constant 3): add `bias[j]` (binding 3) to column `j`.
pub const FLAG_BIAS: u32 = builtin::MATMUL_FLAG_BIAS;

/// `matmul_f32` flag bit 1 (constant 3): ReLU after the bias.
pub const FLAG_RELU: u32 = builtin::MATMUL_FLAG_RELU;

/// Every kernel: the built-in kernels (in hal-local's table order, that of
/// [`builtin::BUILTIN`]), then the TFLite op set. Names are unique.
pub static KERNELS: &[SpirvKernel] = &ALL;

static ALL: [SpirvKernel; builtin_kernels::BUILTINS.len() + ops::OPS.len()] =
    concat(builtin_kernels::BUILTINS, ops::OPS);

/// `a` then `b`, as one array of `N` (their lengths' sum).
const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [SpirvKernel; A],
    b: [SpirvKernel; B],
) -> [SpirvKernel; N] {
    assert!(A + B == N);
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// The kernel named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static SpirvKernel> {
    KERNELS.iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hal_core::contract::BindingFacts;

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
        let builtins = &KERNELS[..names.len()];
        assert_eq!(builtins.len(), builtin::BUILTIN.len());
        for ((k, name), c) in builtins.iter().zip(names).zip(builtin::BUILTIN) {
            assert_eq!(k.name, name);
            let contract = k.contract().expect("a built-in kernel");
            assert!(
                core::ptr::eq(contract, c),
                "{name}: ember-kernels' built-in contract"
            );
            assert_eq!(k.bindings.len(), c.bindings.len());
            assert!(core::ptr::eq(find(name).expect("listed"), k));
            assert_eq!(k.entry, "main");
            // SPIR-V magic number, then version 1.0.
            assert_eq!(k.words[0], 0x0723_0203, "{name}");
            assert_eq!(k.words[1], 0x0001_0000, "{name}");
        }
        for (i, k) in KERNELS.iter().enumerate() {
            assert!(KERNELS[..i].iter().all(|o| o.name != k.name), "{}", k.name);
        }
        assert!(find("nope").is_none());
        assert!(find("").is_none());
    }

    /// A built-in kernel's check is its contract's, and it reads its declared constants.
    #[test]
    fn builtin_check_is_the_contract() {
        let k = find("matmul_f32").expect("listed");
        let facts = |lens: &[u64]| -> Vec<BindingFacts> {
            lens.iter()
                .map(|&len| BindingFacts {
                    offset: 0,
                    len,
                    writable: true,
                })
                .collect()
        };
        let ok = facts(&[140, 84, 60]);
        assert_eq!(k.check(&[5, 7, 3], &ok), Ok(3));
        assert_eq!(k.check(&[5, 7, 3, 0, 9, 9], &ok), Ok(4));
        let contract = k.contract().expect("a built-in kernel");
        for (constants, lens) in [
            (&[5, 7][..], &[140, 84, 60][..]),
            (&[5, 7, 3], &[140, 84, 56]),
            (&[5, 0, 3], &[]),
            (&[5, 7, 3, 4], &[140, 84, 60]),
        ] {
            let b = facts(lens);
            assert_eq!(
                k.check(constants, &b).map(drop),
                contract.check(constants, &b).map(drop)
            );
            assert!(k.check(constants, &b).is_err());
        }
    }

    #[test]
    fn push_constant_layout() {
        let fill = find("fill_u32").expect("listed");
        let pc = PushConstants::new(fill, &[4, 8, 12, 16, 20, 24, 28], &[20, 21, 22]);
        let words = pc.words();
        assert_eq!(words[..6], [4, 8, 12, 16, 20, 24]);
        assert_eq!(words[6..9], [20, 21, 22]);
        assert!(words[9..].iter().all(|&w| w == 0));
        assert_eq!(
            PushConstants::generic(&[4, 8], &[20, 21, 22]),
            pc_of(&[4, 8], &[20, 21, 22])
        );
        let bytes = pc.bytes();
        assert_eq!(bytes.len(), PUSH_CONSTANT_BYTES as usize);
        assert_eq!(bytes[6 * 4..7 * 4], 20u32.to_ne_bytes());
    }

    fn pc_of(bases: &[u32], params: &[u32]) -> PushConstants {
        PushConstants::new(find("noop").expect("listed"), bases, params)
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
