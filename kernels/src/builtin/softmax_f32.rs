//! `softmax_f32`: a row-wise float softmax, with TFLite's `beta`.

use hal_core::contract::{BindingRule, Constant, Contract, Count, Order, Refusals};

/// `softmax_f32`'s `beta` when a dispatch leaves it out: 1.0 (as `f32` bits).
pub const SOFTMAX_BETA_DEFAULT: u32 = 0x3F80_0000;

/// `softmax_f32`: row-wise softmax of a `rows × cols` matrix, `out[r][c] = e^((in[r][c] -
/// max_r) · beta) / Σ_j e^((in[r][j] - max_r) · beta)`, `max_r` the row's maximum. Constant
/// 2, `beta` (its `f32` bits), is optional: 1.0 when absent. TFLite's float SOFTMAX
/// (`reference_ops::Softmax<float>`) lowers to it with the options' `beta`.
pub static SOFTMAX_F32: Contract = Contract {
    name: "softmax_f32",
    constants: &[
        Constant::Dimension("rows"),
        Constant::Dimension("cols"),
        Constant::Optional {
            name: "beta",
            default: SOFTMAX_BETA_DEFAULT,
        },
    ],
    bindings: &[
        BindingRule::read("in", Count::Product(0, 1)),
        BindingRule::write("out", Count::Product(0, 1)),
    ],
    order: Order::ViewsThenSizes,
    refusals: Refusals {
        zero: "softmax_f32: rows and cols must be non-zero",
        flags: "",
        overflow: "softmax_f32: rows * cols overflows",
    },
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::SOFTMAX_F32;

    #[test]
    fn softmax_f32() {
        let zero = shape("softmax_f32: rows and cols must be non-zero");
        let overflow = shape("softmax_f32: rows * cols overflows");
        let s = "softmax_f32";
        assert_eq!(check(s, &[2, 3], &[rw(24), rw(24)]), Ok(()));
        assert_eq!(check(s, &[2, 3, 9], &[ro(28), rw(24)]), Ok(()));
        assert_eq!(check(s, &[2], &[rw(24), rw(24)]), Err(constants(2, 1)));
        assert_eq!(check(s, &[0, 3], &[rw(24), rw(24)]), Err(zero));
        assert_eq!(check(s, &[2, 0], &[]), Err(zero));
        assert_eq!(check(s, &[u32::MAX, u32::MAX], &[]), Err(overflow));
        let big = check(s, &[1 << 16, 1 << 16], &[rw(24), rw(24)]);
        if usize::BITS < 64 {
            assert_eq!(big, Err(overflow));
        } else {
            assert_eq!(big, Err(small(0, 24, 1 << 34)));
        }
        assert_eq!(check(s, &[2, 3], &[rw(20), rw(24)]), Err(small(0, 20, 24)));
        assert_eq!(check(s, &[2, 3], &[rw(24), rw(20)]), Err(small(1, 20, 24)));
        // Views before sizes: the read-only output is found before the short input.
        assert_eq!(check(s, &[2, 3], &[rw(20), ro(20)]), Err(read_only(1)));
        assert_eq!(check(s, &[2, 3], &[rw(24)]), Err(missing(1, 1)));
        assert_eq!(
            check(s, &[2, 3], &[at(2, rw(24)), rw(24)]),
            Err(misaligned(0))
        );
    }

    #[test]
    fn beta_is_optional_and_one_by_default() {
        let ok = [rw(24), rw(24)];
        let constants = |k: &[u32]| SOFTMAX_F32.check(k, &ok).map(|c| c.constants);
        assert_eq!(constants(&[2, 3]), Ok([2, 3, 1.0f32.to_bits(), 0]));
        assert_eq!(
            constants(&[2, 3, 0.5f32.to_bits()]),
            Ok([2, 3, 0x3F00_0000, 0])
        );
        assert_eq!(SOFTMAX_F32.required_constants(), 2);
    }
}
