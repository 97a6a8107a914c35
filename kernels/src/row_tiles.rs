//! What the convolutions (CONV_2D, DEPTHWISE_CONV_2D) share: entry points over a tile of
//! output rows, each checking its bindings, then (int8) building the per-channel output
//! stage and running the op's tuned variant where the core has one and its portable loops
//! otherwise, or (float) running its portable loops.

/// Writes `run`, `run_rows` and `run_rows_portable` for `$params`, an int8 kernel with
/// per-channel requantization whose bindings are input, filter, bias, multipliers, shifts
/// and output, and whose `shape` has `rows()` and `row_len()`; `$channels` is its output
/// channel count (from `$params` bound to `$this`). `$tuned_dsp` (on Armv7E-M's DSP
/// extension) and `$tuned_blocked` (the register-blocked variant elsewhere), each `fn(&$params, input,
/// filter, &OutputStageS8, rows, output, &mut Scratch) -> bool`, run a tuned variant (in
/// the scratch given where it is large enough, else on its stack) or return `false`,
/// having written nothing; the crate's tests try both, in that order. `$portable` (the
/// same arguments but the scratch, no result) runs the loops.
macro_rules! per_channel_row_tiles {
    (
        $params:ty,
        channels: |$this:ident| $channels:expr,
        tuned_dsp: $tuned_dsp:path,
        tuned_blocked: $tuned_blocked:path,
        portable: $portable:path $(,)?
    ) => {
        impl $params {
            /// Runs the convolution. `bias` is ignored where `has_bias` is false.
            pub fn run(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                output: &mut [i8],
            ) -> Result<(), KernelError> {
                let rows = 0..self.shape.rows()?;
                let scratch = &mut Scratch::none();
                self.run_rows_with::<true>(
                    input,
                    filter,
                    bias,
                    multipliers,
                    shifts,
                    rows,
                    output,
                    Some(scratch),
                )
            }

            /// Runs output rows `rows` (one per batch and output row) into `output`, which
            /// holds just those rows; the whole range is [`run`](Self::run). A tile refuses
            /// rows outside the output. On a core with a tuned kernel for the shape (the
            /// folder's `dsp.rs` on Armv7E-M's DSP extension) that kernel runs, bit for bit
            /// [`run_rows_portable`](Self::run_rows_portable)'s result.
            #[allow(clippy::too_many_arguments)]
            pub fn run_rows(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                rows: Range<usize>,
                output: &mut [i8],
            ) -> Result<(), KernelError> {
                let scratch = &mut Scratch::none();
                self.run_rows_with::<true>(
                    input,
                    filter,
                    bias,
                    multipliers,
                    shifts,
                    rows,
                    output,
                    Some(scratch),
                )
            }

            /// [`run_rows`](Self::run_rows), the tuned kernel working in `scratch` where it
            /// is large enough (its size from the params' `tuned_scratch` where the op has
            /// one) rather than on its stack.
            #[allow(clippy::too_many_arguments)]
            pub fn run_rows_in(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                rows: Range<usize>,
                output: &mut [i8],
                scratch: &mut Scratch<'_>,
            ) -> Result<(), KernelError> {
                self.run_rows_with::<true>(
                    input,
                    filter,
                    bias,
                    multipliers,
                    shifts,
                    rows,
                    output,
                    Some(scratch),
                )
            }

            /// [`run_rows`](Self::run_rows) with the portable loops only: the reference
            /// tuned kernels are checked against.
            #[allow(clippy::too_many_arguments)]
            pub fn run_rows_portable(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                rows: Range<usize>,
                output: &mut [i8],
            ) -> Result<(), KernelError> {
                let tuned = None;
                self.run_rows_with::<true>(
                    input,
                    filter,
                    bias,
                    multipliers,
                    shifts,
                    rows,
                    output,
                    tuned,
                )
            }

            /// [`run_rows_in`](Self::run_rows_in) with only the kernel this core runs for
            /// shapes the build has checked: on a core with a tuned kernel, that kernel
            /// alone, a shape it does not take refused rather than run through the portable
            /// loops (which a caller that needs no other is then linked without); on other
            /// cores the portable loops.
            #[allow(clippy::too_many_arguments)]
            pub fn run_rows_tuned_in(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                rows: Range<usize>,
                output: &mut [i8],
                scratch: &mut Scratch<'_>,
            ) -> Result<(), KernelError> {
                #[cfg(any(ember_tuned, test))]
                const PORTABLE: bool = false;
                #[cfg(not(any(ember_tuned, test)))]
                const PORTABLE: bool = true;
                self.run_rows_with::<PORTABLE>(
                    input,
                    filter,
                    bias,
                    multipliers,
                    shifts,
                    rows,
                    output,
                    Some(scratch),
                )
            }

            /// [`run_rows`](Self::run_rows), with the tuned kernel allowed (given its
            /// scratch) or not (`None`); where the tuned kernel declines, the portable
            /// loops run if `PORTABLE`, and the dispatch is refused if not.
            #[allow(clippy::too_many_arguments)]
            fn run_rows_with<const PORTABLE: bool>(
                &self,
                input: &[i8],
                filter: &[i8],
                bias: &[i32],
                multipliers: &[i32],
                shifts: &[i32],
                rows: Range<usize>,
                output: &mut [i8],
                tuned: Option<&mut Scratch<'_>>,
            ) -> Result<(), KernelError> {
                let out_len = shape::tile_binding_len(
                    &rows,
                    self.shape.rows()?,
                    self.shape.row_len()?,
                    output.len(),
                    1,
                )?;
                self.check(&[
                    input.len(),
                    filter.len(),
                    bias.len() * 4,
                    multipliers.len() * 4,
                    shifts.len() * 4,
                    out_len,
                ])?;
                let channels = {
                    let $this = self;
                    $channels
                };
                shape::shifts_ok(&shifts[..channels])?;
                let requantize = OutputStageS8 {
                    bias,
                    has_bias: self.shape.has_bias,
                    multipliers,
                    shifts,
                    per_channel: true,
                    output_offset: self.output_offset,
                    act_min: self.act_min,
                    act_max: self.act_max,
                };
                #[cfg(any(ember_tuned, test))]
                if let Some(scratch) = tuned {
                    #[cfg(any(ember_dsp, test))]
                    if $tuned_dsp(
                        self,
                        input,
                        filter,
                        &requantize,
                        rows.clone(),
                        output,
                        scratch,
                    ) {
                        return Ok(());
                    }
                    #[cfg(any(ember_blocked, test))]
                    if $tuned_blocked(
                        self,
                        input,
                        filter,
                        &requantize,
                        rows.clone(),
                        output,
                        scratch,
                    ) {
                        return Ok(());
                    }
                }
                #[cfg(not(any(ember_tuned, test)))]
                let _ = tuned;
                if !PORTABLE {
                    return Err(KernelError::Shape(
                        "no tuned kernel for this shape (the build chose the tuned kernel alone)",
                    ));
                }
                self.run_portable_loops(input, filter, &requantize, rows, output);
                Ok(())
            }

            /// The portable loops over checked bindings, out of line: a call the tuned
            /// kernel serves keeps no stack frame for them.
            #[inline(never)]
            fn run_portable_loops(
                &self,
                input: &[i8],
                filter: &[i8],
                requantize: &OutputStageS8<'_>,
                rows: Range<usize>,
                output: &mut [i8],
            ) {
                $portable(self, input, filter, requantize, rows, output);
            }
        }
    };
}

/// Writes `run` and `run_rows` for `$params`, a float convolution whose bindings are input,
/// filter, bias and output, whose `shape` has `rows()` and `row_len()`, and whose
/// `check` takes the bindings' byte lengths. `$portable` (`fn(&$params, input, filter,
/// bias, rows, output)`) runs the loops over bindings checked.
macro_rules! f32_row_tiles {
    ($params:ty, portable: $portable:path $(,)?) => {
        impl $params {
            /// Runs the convolution. `bias` is ignored where `has_bias` is false.
            pub fn run(
                &self,
                input: &[f32],
                filter: &[f32],
                bias: &[f32],
                output: &mut [f32],
            ) -> Result<(), KernelError> {
                self.run_rows(input, filter, bias, 0..self.shape.rows()?, output)
            }

            /// Runs output rows `rows` (one per batch and output row) into `output`, which
            /// holds just those rows; the whole range is [`run`](Self::run). A tile refuses
            /// rows outside the output.
            pub fn run_rows(
                &self,
                input: &[f32],
                filter: &[f32],
                bias: &[f32],
                rows: Range<usize>,
                output: &mut [f32],
            ) -> Result<(), KernelError> {
                let out_len = shape::tile_binding_len(
                    &rows,
                    self.shape.rows()?,
                    self.shape.row_len()?,
                    output.len(),
                    4,
                )?;
                self.check(&[input.len() * 4, filter.len() * 4, bias.len() * 4, out_len])?;
                $portable(self, input, filter, bias, rows, output);
                Ok(())
            }
        }
    };
}

pub(crate) use {f32_row_tiles, per_channel_row_tiles};
