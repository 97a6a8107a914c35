//! The element-wise float kernels `add_f32`, `mul_f32` and `relu_f32`: the output's
//! length sets the work, and the inputs must hold at least as many elements. (`add_f32`
//! and `mul_f32` given constants broadcast instead: see [`ADD_F32`] and [`MUL_F32`].)

use hal_core::contract::{BindingRule, Contract, Count, Order, Refusals};

/// The bindings of `add_f32` and `mul_f32`: `a`, `b`, and `out`, whose length sets the work.
const BINARY: &[BindingRule] = &[
    BindingRule::read("a", Count::AsBinding(2)),
    BindingRule::read("b", Count::AsBinding(2)),
    BindingRule::write("out", Count::Any),
];

/// `add_f32`: `out[i] = a[i] + b[i]`, with no constants (this contract: the output's
/// length sets the work, in place works).
///
/// Given constants, `add_f32` is TFLite's float ADD instead: the words of
/// [`add::AddF32`](crate::add::AddF32) (both inputs' shapes, broadcast, and the clamp range),
/// which its `decode` and `check` hold the dispatch to in place of this contract (each
/// binding then present, 4-byte aligned, the output writable, in binding order). Without
/// broadcasting an input may be the output.
pub static ADD_F32: Contract = Contract {
    name: "add_f32",
    constants: &[],
    bindings: BINARY,
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// `mul_f32`: `out[i] = a[i] * b[i]`, with no constants (this contract: the output's
/// length sets the work, in place works).
///
/// Given constants, `mul_f32` is TFLite's float MUL instead: the words of
/// [`mul::MulF32`](crate::mul::MulF32) (both inputs' shapes, broadcast, and the clamp range),
/// which its `decode` and `check` hold the dispatch to in place of this contract (each
/// binding then present, 4-byte aligned, the output writable, in binding order). Without
/// broadcasting an input may be the output.
pub static MUL_F32: Contract = Contract {
    name: "mul_f32",
    constants: &[],
    bindings: BINARY,
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// `relu_f32`: `out[i] = max(in[i], 0)`.
pub static RELU_F32: Contract = Contract {
    name: "relu_f32",
    constants: &[],
    bindings: &[
        BindingRule::read("in", Count::AsBinding(1)),
        BindingRule::write("out", Count::Any),
    ],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    #[test]
    fn add_mul_relu() {
        for name in ["add_f32", "mul_f32"] {
            assert_eq!(check(name, &[], &[rw(24), ro(24), rw(24)]), Ok(()));
            assert_eq!(check(name, &[], &[rw(32), rw(28), rw(24)]), Ok(()));
            assert_eq!(check(name, &[], &[rw(0), rw(0), rw(3)]), Ok(()));
            assert_eq!(
                check(name, &[], &[rw(20), rw(24), rw(24)]),
                Err(small(0, 20, 24))
            );
            assert_eq!(
                check(name, &[], &[rw(24), rw(20), rw(24)]),
                Err(small(1, 20, 24))
            );
            assert_eq!(
                check(name, &[], &[rw(20), rw(20), rw(24)]),
                Err(small(0, 20, 24))
            );
            assert_eq!(check(name, &[], &[rw(24), rw(24)]), Err(missing(2, 2)));
            assert_eq!(
                check(name, &[], &[rw(24), rw(24), ro(24)]),
                Err(read_only(2))
            );
            assert_eq!(
                check(name, &[], &[rw(24), at(2, rw(24)), ro(24)]),
                Err(misaligned(1))
            );
            assert_eq!(check(name, &[], &[rw(4), rw(4), ro(24)]), Err(read_only(2)));
        }
        assert_eq!(check("relu_f32", &[], &[rw(24), rw(24)]), Ok(()));
        assert_eq!(
            check("relu_f32", &[], &[rw(20), rw(24)]),
            Err(small(0, 20, 24))
        );
        assert_eq!(check("relu_f32", &[], &[rw(24)]), Err(missing(1, 1)));
        assert_eq!(check("relu_f32", &[], &[rw(24), ro(24)]), Err(read_only(1)));
        assert_eq!(
            check("relu_f32", &[], &[rw(24), at(4, ro(24))]),
            Err(read_only(1))
        );
    }
}
