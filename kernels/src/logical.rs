//! LOGICAL_AND and LOGICAL_OR, as TFLM's `logical.cc` runs them: `a && b` and `a || b` on
//! bools with TFLite's broadcasting; and the exclusive or that LOGICAL_NOT lowers to (`x`
//! against a one-element `true`). A byte other than 0 reads as true; every output byte is
//! 0 or 1.
//!
//! Bindings of `logical`: 0 input 1, 1 input 2, 2 output (bool: one byte each), sized by
//! the [`BroadcastShape`].

use crate::broadcast::BroadcastShape;
use crate::params::{BindingUse, KernelParams, Words};
use hal_core::kernel::KernelError;

/// Which function of two bools: word `op` of the kernel, in this order from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalOp {
    /// LOGICAL_AND.
    And,
    /// LOGICAL_OR.
    Or,
    /// Exclusive or: LOGICAL_NOT against `true`.
    Xor,
}

impl LogicalOp {
    const ALL: [LogicalOp; 3] = [Self::And, Self::Or, Self::Xor];

    /// The function of `a` and `b`.
    #[inline(always)]
    pub fn apply(self, a: bool, b: bool) -> bool {
        match self {
            Self::And => a && b,
            Self::Or => a || b,
            Self::Xor => a != b,
        }
    }
}

/// `logical`. Words: the [`BroadcastShape`]'s 12, `op` ([`LogicalOp`] from 0). `decode`
/// refuses other ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Logical {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
    /// The function.
    pub op: LogicalOp,
}

impl Logical {
    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the kernel.
    pub fn run(&self, input1: &[u8], input2: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        let op = self.op;
        self.shape.check_and_apply(input1, input2, output, |a, b| {
            u8::from(op.apply(a != 0, b != 0))
        })
    }
}

impl KernelParams for Logical {
    const KERNEL: &'static str = "logical";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        let op = LogicalOp::ALL
            .iter()
            .position(|&o| o == self.op)
            .unwrap_or(0);
        out.extend([op as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = BroadcastShape::decode(words)?;
        let op = *LogicalOp::ALL
            .get(words.usize()?)
            .ok_or(KernelError::Shape("logical: an op above 2"))?;
        Ok(Self { shape, op })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn and_or_xor_broadcast() {
        let shape = BroadcastShape::new(&[2, 2], &[2]).unwrap();
        let a = [0u8, 1, 1, 7];
        let b = [1u8, 0];
        let mut out = [9u8; 4];
        let run = |op, out: &mut [u8]| Logical { shape, op }.run(&a, &b, out).unwrap();
        run(LogicalOp::And, &mut out);
        assert_eq!(out, [0, 0, 1, 0]);
        run(LogicalOp::Or, &mut out);
        assert_eq!(out, [1, 1, 1, 1]);
        run(LogicalOp::Xor, &mut out);
        assert_eq!(out, [1, 1, 0, 1]);
    }

    #[test]
    fn words_round_trip_and_bad_ops_are_refused() {
        let params = Logical {
            shape: BroadcastShape::new(&[3], &[1]).unwrap(),
            op: LogicalOp::Or,
        };
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(Logical::decode(&mut Words::new(&words)).unwrap(), params);
        words[12] = 3;
        assert!(Logical::decode(&mut Words::new(&words)).is_err());
    }
}
