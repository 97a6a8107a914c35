//! CONV_2D: random cases run through the tuned kernel and the portable one ([`crate::tuned_check`]).

use super::{Conv2dS8, Conv2dShape};
use crate::scratch::Scratch;
use crate::tuned_check::random::{output_size, window, Rng, Stage};
use crate::tuned_check::run_rows::run_rows_s8;
use crate::tuned_check::tally::Tally;
use crate::KernelError;
use alloc::vec::Vec;

/// A random convolution, or `None` where no output fits.
fn case(rng: &mut Rng) -> Option<(Conv2dS8, Vec<i8>, Vec<i8>, Stage)> {
    let (fh, fw) = match rng.next() % 5 {
        0 | 1 => (1, 1),
        2 | 3 => (3, 3),
        _ => (rng.size(1, 5), rng.size(1, 5)),
    };
    let input_depth = if rng.one_in(4) {
        4 * rng.size(1, 8)
    } else {
        rng.size(1, 13)
    };
    let window = window(rng, fh, fw);
    let (ih, iw) = (rng.size(1, 9), rng.size(1, 9));
    let (oh, ow) = output_size(&window, (ih, iw), (fh, fw))?;
    let shape = Conv2dShape {
        batches: rng.size(1, 2),
        input_height: ih,
        input_width: iw,
        input_depth,
        filter_height: fh,
        filter_width: fw,
        filter_depth: input_depth,
        output_height: oh,
        output_width: ow,
        output_depth: rng.size(1, 9),
        window,
        has_bias: !rng.one_in(4),
    };
    let stage = rng.stage(shape.output_depth, 1 << 16);
    // The layout the core's tuned kernel reads: OHWI with the DSP extension, HWIO without
    // SIMD; the crate's own tests draw both.
    let hwio = rng.one_in(2);
    let p = Conv2dS8 {
        shape,
        filter_hwio: if cfg!(test) {
            hwio
        } else {
            crate::tuned_check::CONV_FILTER_HWIO
        },
        input_offset: rng.input_offset(),
        output_offset: stage.output_offset,
        act_min: stage.act_min,
        act_max: stage.act_max,
    };
    let input = rng.bytes(shape.input_len().ok()?);
    let filter = rng.bytes(shape.filter_len().ok()?);
    Some((p, input, filter, stage))
}

/// The case run over output rows `rows`, tuned (in the caller's scratch, sized by
/// `tuned_scratch`, or on the stack) or portable.
fn run(
    params: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &Stage,
    rows: core::ops::Range<usize>,
    tuned: Tuned,
) -> Result<Vec<i8>, KernelError> {
    let row_len = params.shape.row_len()?;
    let run = match tuned {
        Tuned::OnTheStack => Conv2dS8::run_rows,
        Tuned::No => Conv2dS8::run_rows_portable,
        Tuned::InScratch | Tuned::Alone => {
            let (groups, bytes) = params.tuned_scratch();
            let mut groups = alloc::vec![[0u32; 4]; groups];
            let mut bytes = alloc::vec![0i8; bytes];
            let scratch = &mut Scratch {
                groups: &mut groups,
                bytes: &mut bytes,
            };
            let mut out = alloc::vec![0i8; rows.len() * row_len];
            let (bias, m, s) = (&stage.bias, &stage.multipliers, &stage.shifts);
            let run = if matches!(tuned, Tuned::Alone) {
                Conv2dS8::run_rows_tuned_in
            } else {
                Conv2dS8::run_rows_in
            };
            return run(params, input, filter, bias, m, s, rows, &mut out, scratch).map(|()| out);
        }
    };
    run_rows_s8(run, params, input, filter, stage, rows, row_len)
}

/// Which path a case runs.
#[derive(Clone, Copy)]
enum Tuned {
    /// The tuned kernel in scratch the caller lends.
    InScratch,
    /// The tuned kernel alone (`run_rows_tuned_in`), in scratch the caller lends.
    Alone,
    /// The tuned kernel on its own stack scratch.
    OnTheStack,
    /// The portable loops.
    No,
}

/// `cases` random convolutions, each over its whole output and over a random tile of its
/// rows, through both paths.
pub(crate) fn check(rng: &mut Rng, cases: usize, tally: &mut Tally<'_>) {
    let mut case = 0;
    while case < cases {
        let Some((params, input, filter, stage)) = self::case(rng) else {
            continue;
        };
        let rows = params.shape.rows().unwrap_or(0);
        let tuned = run(&params, &input, &filter, &stage, 0..rows, Tuned::OnTheStack);
        let portable = run(&params, &input, &filter, &stage, 0..rows, Tuned::No);
        tally.check("conv2d", case, &tuned, &portable);
        let lent = run(&params, &input, &filter, &stage, 0..rows, Tuned::InScratch);
        tally.check("conv2d in scratch", case, &lent, &portable);
        if params.tuned() {
            let alone = run(&params, &input, &filter, &stage, 0..rows, Tuned::Alone);
            tally.check("conv2d tuned alone", case, &alone, &portable);
        }
        let start = rng.size(0, rows - 1);
        let end = rng.size(start + 1, rows);
        let tuned = run(
            &params,
            &input,
            &filter,
            &stage,
            start..end,
            Tuned::OnTheStack,
        );
        let portable = run(&params, &input, &filter, &stage, start..end, Tuned::No);
        tally.check("conv2d tile", case, &tuned, &portable);
        case += 1;
    }
}
