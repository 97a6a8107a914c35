//! `fill_u32`: fills a binding with one word.

use hal_core::contract::{BindingRule, Constant, Contract, Count, Order, Refusals};

/// `fill_u32`: every whole word of `out` = `value`.
pub static FILL_U32: Contract = Contract {
    name: "fill_u32",
    constants: &[Constant::Value("value")],
    bindings: &[BindingRule::write("out", Count::Any)],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::FILL_U32;

    #[test]
    fn fill_u32() {
        assert_eq!(check("fill_u32", &[7], &[rw(16)]), Ok(()));
        assert_eq!(check("fill_u32", &[7], &[rw(7)]), Ok(()));
        assert_eq!(check("fill_u32", &[7], &[rw(0)]), Ok(()));
        assert_eq!(check("fill_u32", &[7], &[at(8, rw(16))]), Ok(()));
        assert_eq!(check("fill_u32", &[], &[rw(16)]), Err(constants(1, 0)));
        assert_eq!(check("fill_u32", &[], &[]), Err(constants(1, 0)));
        assert_eq!(check("fill_u32", &[1], &[]), Err(missing(0, 0)));
        assert_eq!(check("fill_u32", &[1], &[ro(16)]), Err(read_only(0)));
        // Read-only is found before misaligned.
        assert_eq!(check("fill_u32", &[1], &[at(2, ro(16))]), Err(read_only(0)));
        assert_eq!(
            check("fill_u32", &[1], &[at(2, rw(16))]),
            Err(misaligned(0))
        );
        let value = FILL_U32.check(&[0xDEAD_BEEF, 9], &[rw(4)]).unwrap();
        assert_eq!(value.constants, [0xDEAD_BEEF, 0, 0, 0]);
    }
}
