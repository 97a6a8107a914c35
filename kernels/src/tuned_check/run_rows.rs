//! One case of a per-channel int8 convolution (CONV_2D, DEPTHWISE_CONV_2D) run over a
//! tile of its output rows, through the tuned entry point or the portable one.

use super::random::Stage;
use crate::KernelError;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

/// A per-channel int8 convolution's `run_rows` or `run_rows_portable`: params, input,
/// filter, bias, multipliers, shifts, rows, output.
pub(crate) type RunRowsS8<P> = fn(
    &P,
    &[i8],
    &[i8],
    &[i32],
    &[i32],
    &[i32],
    Range<usize>,
    &mut [i8],
) -> Result<(), KernelError>;

/// `run` over output rows `rows` (each `row_len` elements) with `stage`'s bias,
/// multipliers and shifts: the rows written, or the refusal.
pub(crate) fn run_rows_s8<P>(
    run: RunRowsS8<P>,
    params: &P,
    input: &[i8],
    filter: &[i8],
    stage: &Stage,
    rows: Range<usize>,
    row_len: usize,
) -> Result<Vec<i8>, KernelError> {
    let mut out = vec![0i8; rows.len() * row_len];
    run(
        params,
        input,
        filter,
        &stage.bias,
        &stage.multipliers,
        &stage.shifts,
        rows,
        &mut out,
    )
    .map(|()| out)
}
