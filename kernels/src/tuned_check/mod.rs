//! The check that every tuned kernel equals its portable reference bit for bit: many
//! pseudo-random cases of FULLY_CONNECTED, CONV_2D (1×1 and larger, strides, dilations,
//! padding, odd channel counts, input offsets, tiles of rows) and DEPTHWISE_CONV_2D, each
//! run through `run`/`run_rows` (the tuned kernel where the core has one) and
//! `run_portable`/`run_rows_portable`, outputs and errors compared.
//!
//! One runner for every core: the crate's own tests run it on the host, where the tuned
//! kernels run on emulated instructions ([`TUNED`] is true there), and each board whose
//! core has tuned kernels runs it from firmware (the `tuned-check` feature), where they
//! run on the real ones.

pub mod random;
pub(crate) mod run_rows;
pub(crate) mod tally;

use tally::Tally;
pub use tally::{Mismatch, Summary};

/// Whether this build runs tuned kernels at all: on a core without them (and outside the
/// crate's own tests) both paths are the portable loops and the check proves nothing.
pub const TUNED: bool = cfg!(any(ember_tuned, test));

/// Whether the core's tuned CONV_2D reads an HWIO filter (the register-blocked kernel) rather than
/// an OHWI one (Armv7E-M's DSP extension): the layout the check gives its convolutions,
/// and boards give the ones they time.
pub const CONV_FILTER_HWIO: bool = cfg!(ember_blocked);

/// Runs `cases` random cases of each kernel through both paths, from fixed seeds (the same
/// cases on every core), and calls `on_mismatch` for each case whose results differ.
pub fn run(cases: usize, on_mismatch: &mut dyn FnMut(Mismatch)) -> Summary {
    let mut tally = Tally::new(on_mismatch);
    crate::fully_connected::tuned_check::check(&mut random::Rng(0x2545_f491), cases, &mut tally);
    crate::conv2d::tuned_check::check(&mut random::Rng(0x9e37_79b9), cases, &mut tally);
    crate::depthwise_conv2d::tuned_check::check(&mut random::Rng(0x1234_5678), cases, &mut tally);
    tally.summary()
}

#[cfg(test)]
mod tests {
    /// Cases per kernel: fewer under Miri, which interprets every instruction.
    const CASES: usize = if cfg!(miri) { 8 } else { 1000 };

    #[test]
    fn tuned_kernels_equal_portable() {
        const { assert!(super::TUNED) };
        let mut first = None;
        let summary = super::run(CASES, &mut |mismatch| {
            first.get_or_insert(mismatch);
        });
        // A convolution three times (tuned on its stack, tuned in lent scratch, a tile of
        // rows); a fully connected and a depthwise convolution once each; each of the
        // three once more through the Cortex-M4 kernel alone, where it takes the case; and
        // the fully connected once more through the register-blocked kernel alone, where
        // it takes the case, and the depthwise convolution through it alone.
        assert!(summary.cases > 7 * CASES + CASES, "{}", summary.cases);
        assert!(summary.cases <= 10 * CASES, "{}", summary.cases);
        assert_eq!(summary.mismatched, 0, "first mismatch: {first:?}");
    }
}
