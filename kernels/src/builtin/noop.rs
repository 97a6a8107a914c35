//! `noop`: does nothing (measures dispatch overhead).

use hal_core::contract::{Contract, Order, Refusals};

/// `noop`: nothing; accepts any dispatch.
pub static NOOP: Contract = Contract {
    name: "noop",
    constants: &[],
    bindings: &[],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    #[test]
    fn noop_accepts_anything() {
        assert_eq!(check("noop", &[], &[]), Ok(()));
        assert_eq!(
            check("noop", &[1, 2, 3, 4, 5], &[ro(3), at(1, rw(5))]),
            Ok(())
        );
    }
}
