//! `matmul_f32`: a float matrix product, with an optional bias and ReLU chosen by flag bits.

use hal_core::contract::{BindingRule, Constant, Contract, Count, Order, Refusals};

/// `matmul_f32` flag bit 0 (constant 3): add `bias[j]` (binding 3) to column `j`.
pub const MATMUL_FLAG_BIAS: u32 = 1 << 0;

/// `matmul_f32` flag bit 1 (constant 3): ReLU after the bias.
pub const MATMUL_FLAG_RELU: u32 = 1 << 1;

/// `matmul_f32`: `C = A·B` (`M×K` by `K×N`), then `+ bias` per row with
/// [`MATMUL_FLAG_BIAS`], then ReLU with [`MATMUL_FLAG_RELU`].
pub static MATMUL_F32: Contract = Contract {
    name: "matmul_f32",
    constants: &[
        Constant::Dimension("M"),
        Constant::Dimension("K"),
        Constant::Dimension("N"),
        Constant::Flags {
            name: "flags",
            known: MATMUL_FLAG_BIAS | MATMUL_FLAG_RELU,
        },
    ],
    bindings: &[
        BindingRule::read("A", Count::Product(0, 1)),
        BindingRule::read("B", Count::Product(1, 2)),
        BindingRule::write("C", Count::Product(0, 2)),
        BindingRule::read("bias", Count::Constant(2)).only_with(MATMUL_FLAG_BIAS),
    ],
    order: Order::BindingByBinding,
    refusals: Refusals {
        zero: "matmul_f32: M, K and N must be non-zero",
        flags: "matmul_f32: unknown flag bits",
        overflow: "matmul_f32: matrix size overflows",
    },
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::{MATMUL_F32, MATMUL_FLAG_BIAS, MATMUL_FLAG_RELU};

    const BIAS: u32 = MATMUL_FLAG_BIAS;
    const RELU: u32 = MATMUL_FLAG_RELU;

    #[test]
    fn matmul_f32() {
        let zero = shape("matmul_f32: M, K and N must be non-zero");
        let flags = shape("matmul_f32: unknown flag bits");
        let overflow = shape("matmul_f32: matrix size overflows");
        let m = "matmul_f32";
        // 5x7 · 7x3: A 140 bytes, B 84, C 60, bias 12.
        let ok = [rw(140), rw(84), rw(60)];
        assert_eq!(check(m, &[5, 7, 3], &ok), Ok(()));
        assert_eq!(check(m, &[5, 7, 3, 0], &[ro(140), ro(84), rw(60)]), Ok(()));
        assert_eq!(check(m, &[5, 7, 3, RELU], &ok), Ok(()));
        let with_bias = [rw(140), rw(84), rw(60), ro(12)];
        assert_eq!(check(m, &[5, 7, 3, BIAS], &with_bias), Ok(()));
        assert_eq!(
            MATMUL_F32.check(&[5, 7, 3], &ok).unwrap().constants,
            [5, 7, 3, 0]
        );
        assert_eq!(check(m, &[5, 7, 3, BIAS | RELU], &ok), Err(missing(3, 3)));
        let short_bias = [rw(140), rw(84), rw(60), rw(8)];
        assert_eq!(
            check(m, &[5, 7, 3, BIAS], &short_bias),
            Err(small(3, 8, 12))
        );
        assert_eq!(check(m, &[5, 7], &ok), Err(constants(3, 2)));
        assert_eq!(check(m, &[], &[]), Err(constants(3, 0)));
        assert_eq!(check(m, &[0, 7, 3], &ok), Err(zero));
        assert_eq!(check(m, &[5, 0, 3], &[]), Err(zero));
        // A zero dimension is found before unknown flags.
        assert_eq!(check(m, &[5, 7, 0, 99], &[]), Err(zero));
        assert_eq!(check(m, &[5, 7, 3, 4], &ok), Err(flags));
        assert_eq!(check(m, &[5, 7, 3, 1 << 31], &[]), Err(flags));
        for dims in [
            [u32::MAX, u32::MAX, 1],
            [1, u32::MAX, u32::MAX],
            [u32::MAX, 1, u32::MAX],
        ] {
            assert_eq!(check(m, &dims, &[]), Err(overflow), "{dims:?}");
        }
        // 2^34 bytes: past a 32-bit address space; on 64-bit, A is too small.
        let big = check(m, &[1 << 16, 1 << 16, 1], &[rw(8), rw(8), rw(8)]);
        if usize::BITS < 64 {
            assert_eq!(big, Err(overflow));
        } else {
            assert_eq!(big, Err(small(0, 8, 1 << 34)));
        }
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(136), rw(84), rw(60)]),
            Err(small(0, 136, 140))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), rw(80), rw(60)]),
            Err(small(1, 80, 84))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), rw(84), rw(56)]),
            Err(small(2, 56, 60))
        );
        // Binding by binding: A's size is found before B's alignment ...
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(136), at(2, rw(84)), rw(60)]),
            Err(small(0, 136, 140))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), at(2, rw(84)), rw(60)]),
            Err(misaligned(1))
        );
        // ... and C's before the bias is looked for.
        assert_eq!(
            check(m, &[5, 7, 3, BIAS], &[rw(140), rw(84), rw(56)]),
            Err(small(2, 56, 60))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), rw(84), ro(60)]),
            Err(read_only(2))
        );
        assert_eq!(check(m, &[5, 7, 3], &[rw(140), rw(84)]), Err(missing(2, 2)));
        assert_eq!(check(m, &[5, 7, 3], &[rw(140)]), Err(missing(1, 1)));
    }
}
