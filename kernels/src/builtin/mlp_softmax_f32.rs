//! `mlp_softmax_f32`: a two-layer perceptron and a softmax, per row, in one dispatch.

use hal_core::contract::{BindingRule, Constant, Contract, Count, Order, Refusals};

/// The most hidden units and outputs `mlp_softmax_f32` takes: a GPU workgroup holds one
/// row's hidden layer and logits in workgroup memory, a CPU on the stack.
pub const MLP_MAX_WIDTH: u32 = 512;

/// `mlp_softmax_f32`: per row of `x`, `y = softmax(relu(x·w1 + b1)·w2 + b2)`.
pub static MLP_SOFTMAX_F32: Contract = Contract {
    name: "mlp_softmax_f32",
    constants: &[
        Constant::Dimension("M"),
        Constant::Dimension("K"),
        Constant::Width {
            name: "H",
            max: MLP_MAX_WIDTH,
            refusal: "mlp_softmax_f32: more than 512 hidden units",
        },
        Constant::Width {
            name: "N",
            max: MLP_MAX_WIDTH,
            refusal: "mlp_softmax_f32: more than 512 outputs",
        },
    ],
    bindings: &[
        BindingRule::read("x", Count::Product(0, 1)),
        BindingRule::read("w1", Count::Product(1, 2)),
        BindingRule::read("b1", Count::Constant(2)),
        BindingRule::read("w2", Count::Product(2, 3)),
        BindingRule::read("b2", Count::Constant(3)),
        BindingRule::write("y", Count::Product(0, 3)),
    ],
    order: Order::BindingByBinding,
    refusals: Refusals {
        zero: "mlp_softmax_f32: M, K, H and N must be non-zero",
        flags: "",
        overflow: "mlp_softmax_f32: matrix size overflows",
    },
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::MLP_MAX_WIDTH;

    #[test]
    fn mlp_softmax_f32() {
        // 2 rows of 3 inputs, 4 hidden units, 5 outputs: x 24 bytes, w1 48, b1 16, w2 80,
        // b2 20, y 40.
        let ok = [ro(24), ro(48), ro(16), ro(80), ro(20), rw(40)];
        let dims = [2, 3, 4, 5];
        assert_eq!(check("mlp_softmax_f32", &dims, &ok), Ok(()));
        assert_eq!(
            check("mlp_softmax_f32", &dims[..3], &ok),
            Err(constants(4, 3))
        );
        let zero = shape("mlp_softmax_f32: M, K, H and N must be non-zero");
        for i in 0..4 {
            let mut bad = dims;
            bad[i] = 0;
            assert_eq!(check("mlp_softmax_f32", &bad, &ok), Err(zero));
        }
        // The widest accepted, then one more; a zero is found before a width.
        let wide = [1, 1, MLP_MAX_WIDTH, MLP_MAX_WIDTH];
        let n = u64::from(MLP_MAX_WIDTH) * 4;
        let fits = [
            rw(4),
            rw(n),
            rw(n),
            rw(n * u64::from(MLP_MAX_WIDTH)),
            rw(n),
            rw(n),
        ];
        assert_eq!(check("mlp_softmax_f32", &wide, &fits), Ok(()));
        assert_eq!(
            check("mlp_softmax_f32", &[1, 1, MLP_MAX_WIDTH + 1, 1], &fits),
            Err(shape("mlp_softmax_f32: more than 512 hidden units"))
        );
        assert_eq!(
            check("mlp_softmax_f32", &[1, 1, 1, u32::MAX], &fits),
            Err(shape("mlp_softmax_f32: more than 512 outputs"))
        );
        assert_eq!(
            check("mlp_softmax_f32", &[0, 1, 1, u32::MAX], &fits),
            Err(zero)
        );
        assert_eq!(
            check("mlp_softmax_f32", &[u32::MAX, u32::MAX, 4, 5], &ok),
            Err(shape("mlp_softmax_f32: matrix size overflows"))
        );
        // Binding by binding, each needing its exact bytes.
        for (i, needed) in [24, 48, 16, 80, 20, 40].into_iter().enumerate() {
            let mut short = ok;
            short[i].len = needed - 4;
            assert_eq!(
                check("mlp_softmax_f32", &dims, &short),
                Err(small(i as u32, needed - 4, needed))
            );
        }
        assert_eq!(
            check("mlp_softmax_f32", &dims, &ok[..5]),
            Err(missing(5, 5))
        );
        let mut read_only_y = ok;
        read_only_y[5] = ro(40);
        assert_eq!(
            check("mlp_softmax_f32", &dims, &read_only_y),
            Err(read_only(5))
        );
    }
}
