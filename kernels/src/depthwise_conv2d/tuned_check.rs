//! DEPTHWISE_CONV_2D: random cases run through the tuned kernel and the portable one ([`crate::tuned_check`]).

use super::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use crate::tuned_check::random::{output_size, window, Rng, Stage};
use crate::tuned_check::run_rows::run_rows_s8;
use crate::tuned_check::tally::Tally;
use crate::KernelError;
use alloc::vec::Vec;

/// A random depthwise convolution, or `None` where no output fits.
fn case(rng: &mut Rng) -> Option<(DepthwiseConv2dS8, Vec<i8>, Vec<i8>, Stage)> {
    let (fh, fw) = match rng.next() % 3 {
        0 | 1 => (3, 3),
        _ => (rng.size(1, 5), rng.size(1, 5)),
    };
    let window = window(rng, fh, fw);
    let (ih, iw) = (rng.size(1, 9), rng.size(1, 9));
    let (oh, ow) = output_size(&window, (ih, iw), (fh, fw))?;
    let shape = DepthwiseConv2dShape {
        batches: rng.size(1, 2),
        input_height: ih,
        input_width: iw,
        input_depth: if rng.one_in(3) {
            4 * rng.size(1, 6)
        } else {
            rng.size(1, 13)
        },
        depth_multiplier: if rng.one_in(4) { rng.size(2, 4) } else { 1 },
        filter_height: fh,
        filter_width: fw,
        output_height: oh,
        output_width: ow,
        window,
        has_bias: !rng.one_in(4),
    };
    let stage = rng.stage(shape.output_depth().ok()?, 1 << 16);
    let p = DepthwiseConv2dS8 {
        shape,
        input_offset: rng.input_offset(),
        output_offset: stage.output_offset,
        act_min: stage.act_min,
        act_max: stage.act_max,
    };
    let input = rng.bytes(shape.input_len().ok()?);
    let filter = rng.bytes(shape.filter_len().ok()?);
    Some((p, input, filter, stage))
}

/// The case run, tuned or portable.
fn run(
    params: &DepthwiseConv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &Stage,
    tuned: bool,
) -> Result<Vec<i8>, KernelError> {
    let run = if tuned {
        DepthwiseConv2dS8::run_rows
    } else {
        DepthwiseConv2dS8::run_rows_portable
    };
    let rows = 0..params.shape.rows()?;
    let row_len = params.shape.row_len()?;
    run_rows_s8(run, params, input, filter, stage, rows, row_len)
}

/// The case run through the register-blocked kernel alone (on a core with the Cortex-M4
/// kernel, and in the crate's tests, the cases it takes would not reach it).
#[cfg(any(ember_blocked, test))]
fn run_blocked(
    params: &DepthwiseConv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &Stage,
) -> Result<Vec<i8>, KernelError> {
    let rows = 0..params.shape.rows()?;
    let mut out = alloc::vec![0i8; rows.len() * params.shape.row_len()?];
    let requantize = crate::quant::OutputStageS8 {
        bias: &stage.bias,
        has_bias: params.shape.has_bias,
        multipliers: &stage.multipliers,
        shifts: &stage.shifts,
        per_channel: true,
        output_offset: params.output_offset,
        act_min: params.act_min,
        act_max: params.act_max,
    };
    let none = &mut crate::scratch::Scratch::none();
    match super::blocked::run_rows(params, input, filter, &requantize, rows, &mut out, none) {
        true => Ok(out),
        false => Err(KernelError::Shape("the register-blocked kernel declined")),
    }
}

/// `cases` random depthwise convolutions through both paths.
pub(crate) fn check(rng: &mut Rng, cases: usize, tally: &mut Tally<'_>) {
    let mut case = 0;
    while case < cases {
        let Some((params, input, filter, stage)) = self::case(rng) else {
            continue;
        };
        let tuned = run(&params, &input, &filter, &stage, true);
        let portable = run(&params, &input, &filter, &stage, false);
        tally.check("depthwise_conv2d", case, &tuned, &portable);
        if params.tuned() {
            let rows = 0..params.shape.rows().unwrap_or(0);
            let mut out = alloc::vec![0i8; portable.as_ref().map_or(0, alloc::vec::Vec::len)];
            let (bias, m, s) = (&stage.bias, &stage.multipliers, &stage.shifts);
            let none = &mut crate::scratch::Scratch::none();
            let alone = params
                .run_rows_tuned_in(&input, &filter, bias, m, s, rows, &mut out, none)
                .map(|()| out);
            tally.check("depthwise_conv2d tuned alone", case, &alone, &portable);
        }
        #[cfg(any(ember_blocked, test))]
        {
            let blocked = run_blocked(&params, &input, &filter, &stage);
            tally.check("depthwise_conv2d blocked", case, &blocked, &portable);
        }
        case += 1;
    }
}
