//! A 256-entry int8 lookup table: `output[i] = table[input[i] as u8]`, how TFLM runs the
//! int8 ops it tabulates at Prepare (ELU: `PopulateLookupTable` over every int8 value). The
//! importer fills the table as TFLM does; the kernel only looks up.
//!
//! Bindings of `lut_s8`: 0 input (`len` `i8`), 1 table (256 `i8`, indexed by the input's
//! byte), 2 output (`len` `i8`). Element-wise: `output` may alias `input`.

use crate::binding_len::byte_len;
use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// Entries in the table: one per int8 value.
pub const TABLE_LEN: usize = 256;

/// `lut_s8`. Words: `len`. `decode` refuses a zero or overflowing length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LutS8 {
    /// Elements.
    pub len: usize,
}

impl LutS8 {
    const WHAT: &'static str = "lut_s8: zero or overflowing length";

    /// The parameters for `len` elements.
    pub fn new(len: usize) -> Result<Self, KernelError> {
        byte_len(len, 1, Self::WHAT)?;
        Ok(Self { len })
    }

    /// Bindings 0 and 2 hold `len` bytes, binding 1 the table's 256.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        need(binding_lens, 0, self.len, 1)?;
        need(binding_lens, 1, TABLE_LEN, 1)?;
        need(binding_lens, 2, self.len, 1)
    }

    /// Runs the lookup.
    pub fn run(&self, input: &[i8], table: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.check(&[input.len(), table.len(), output.len()])?;
        for (y, &x) in output.iter_mut().zip(input).take(self.len) {
            *y = table[usize::from(x as u8)];
        }
        Ok(())
    }
}

impl KernelParams for LutS8 {
    const KERNEL: &'static str = "lut_s8";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.len as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::new(words.usize()?)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn looks_up_by_the_byte() {
        let table: Vec<i8> = (0..=255u8)
            .map(|byte| (byte as i8).wrapping_neg())
            .collect();
        let mut output = [0i8; 3];
        LutS8::new(3)
            .unwrap()
            .run(&[5, -128, -1], &table, &mut output)
            .unwrap();
        assert_eq!(output, [-5, -128, 1]);
        assert!(LutS8::new(3)
            .unwrap()
            .run(&[0; 3], &table[..255], &mut output)
            .is_err());
        assert!(LutS8::decode(&mut Words::new(&[0])).is_err());
    }
}
