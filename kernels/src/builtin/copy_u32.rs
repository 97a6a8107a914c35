//! `copy_u32`: copies words from one binding into another.

use hal_core::contract::{BindingRule, Contract, Count, Order, Refusals};

/// `copy_u32`: the first `dst.len` words of `src` into `dst`.
pub static COPY_U32: Contract = Contract {
    name: "copy_u32",
    constants: &[],
    bindings: &[
        BindingRule::read("src", Count::AsBinding(1)),
        BindingRule::write("dst", Count::Any),
    ],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    #[test]
    fn copy_u32() {
        assert_eq!(check("copy_u32", &[], &[rw(16), rw(16)]), Ok(()));
        // A trailing partial word counts on neither side.
        assert_eq!(check("copy_u32", &[], &[ro(19), rw(18)]), Ok(()));
        assert_eq!(
            check("copy_u32", &[], &[rw(12), rw(16)]),
            Err(small(0, 12, 16))
        );
        assert_eq!(
            check("copy_u32", &[], &[rw(15), rw(16)]),
            Err(small(0, 15, 16))
        );
        assert_eq!(check("copy_u32", &[], &[rw(16)]), Err(missing(1, 1)));
        assert_eq!(check("copy_u32", &[], &[]), Err(missing(0, 0)));
        assert_eq!(check("copy_u32", &[], &[rw(16), ro(16)]), Err(read_only(1)));
        assert_eq!(
            check("copy_u32", &[], &[at(1, rw(16)), ro(16)]),
            Err(misaligned(0))
        );
        assert_eq!(
            check("copy_u32", &[], &[rw(16), at(6, rw(16))]),
            Err(misaligned(1))
        );
        // Views before sizes: the short source is misaligned first.
        assert_eq!(
            check("copy_u32", &[], &[at(3, rw(4)), rw(16)]),
            Err(misaligned(0))
        );
        assert_eq!(check("copy_u32", &[], &[rw(4), ro(16)]), Err(read_only(1)));
    }
}
