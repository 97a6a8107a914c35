//! Counting the cases a tuned-equals-portable check compares, and reporting mismatches.

use crate::KernelError;
use alloc::vec::Vec;

/// One case whose tuned and portable results differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// The kernel (and, for a tile, `"conv2d tile"`).
    pub kernel: &'static str,
    /// The case's number among that kernel's cases.
    pub case: usize,
    /// The first output that differs (0 where one path failed and the other did not).
    pub first_difference: usize,
}

/// Cases run and mismatches found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Cases compared.
    pub cases: usize,
    /// Cases whose results differed.
    pub mismatched: usize,
}

/// Counts the cases and hands each mismatch to the caller.
pub(crate) struct Tally<'a> {
    summary: Summary,
    on_mismatch: &'a mut dyn FnMut(Mismatch),
}

impl<'a> Tally<'a> {
    /// No cases yet; `on_mismatch` hears of each mismatch.
    pub(crate) fn new(on_mismatch: &'a mut dyn FnMut(Mismatch)) -> Self {
        Self {
            summary: Summary::default(),
            on_mismatch,
        }
    }

    /// The cases compared so far.
    pub(crate) fn summary(&self) -> Summary {
        self.summary
    }

    /// Compares one case's two results (outputs, or errors).
    pub(crate) fn check(
        &mut self,
        kernel: &'static str,
        case: usize,
        tuned: &Result<Vec<i8>, KernelError>,
        portable: &Result<Vec<i8>, KernelError>,
    ) {
        self.summary.cases += 1;
        let same = match (tuned, portable) {
            (Ok(tuned), Ok(portable)) => tuned == portable,
            (Err(tuned), Err(portable)) => tuned == portable,
            _ => false,
        };
        if !same {
            self.summary.mismatched += 1;
            let first_difference = match (tuned, portable) {
                (Ok(tuned), Ok(portable)) => tuned
                    .iter()
                    .zip(portable)
                    .position(|(a, b)| a != b)
                    .unwrap_or(0),
                _ => 0,
            };
            (self.on_mismatch)(Mismatch {
                kernel,
                case,
                first_difference,
            });
        }
    }
}
