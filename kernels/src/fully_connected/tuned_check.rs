//! FULLY_CONNECTED: random cases run through the tuned kernel and the portable one ([`crate::tuned_check`]).

use super::{FullyConnectedS8, FullyConnectedShape};
use crate::tuned_check::random::{Rng, Stage};
use crate::tuned_check::tally::Tally;
use crate::KernelError;
use alloc::vec;
use alloc::vec::Vec;

/// A random layer: `big` for long rows (the tuned kernel's blocks and tails).
fn case(rng: &mut Rng, big: bool) -> (FullyConnectedS8, Vec<i8>, Vec<i8>, Stage) {
    let shape = FullyConnectedShape {
        batches: rng.size(1, 3),
        accum_depth: if big {
            rng.size(1, 300)
        } else {
            rng.size(1, 13)
        },
        output_depth: rng.size(1, 9),
        has_bias: !rng.one_in(4),
    };
    let per_channel = rng.one_in(2);
    let p = FullyConnectedS8 {
        shape,
        input_offset: rng.input_offset(),
        filter_offset: if !per_channel && rng.one_in(10) {
            rng.range(-3, 3)
        } else {
            0
        },
        output_offset: 0,
        act_min: 0,
        act_max: 0,
        per_channel,
    };
    let input = rng.bytes(shape.batches * shape.accum_depth);
    let weights = rng.bytes(shape.output_depth * shape.accum_depth);
    let stage = rng.stage(if per_channel { shape.output_depth } else { 1 }, 1 << 16);
    let p = FullyConnectedS8 {
        output_offset: stage.output_offset,
        act_min: stage.act_min,
        act_max: stage.act_max,
        ..p
    };
    (p, input, weights, stage)
}

/// Which path a case runs.
#[derive(Clone, Copy)]
enum Tuned {
    /// The tuned kernel where it takes the case, else the portable loops.
    Yes,
    /// The tuned kernel alone (`run_tuned`).
    Alone,
    /// The register-blocked kernel alone.
    #[cfg(any(ember_blocked, test))]
    Blocked,
    /// The portable loops.
    No,
}

/// The case run, tuned or portable.
fn run(
    params: &FullyConnectedS8,
    input: &[i8],
    weights: &[i8],
    stage: &Stage,
    tuned: Tuned,
) -> Result<Vec<i8>, KernelError> {
    let mut out = vec![0i8; params.shape.batches * params.shape.output_depth];
    let run = match tuned {
        Tuned::Yes => FullyConnectedS8::run,
        Tuned::Alone => FullyConnectedS8::run_tuned,
        #[cfg(any(ember_blocked, test))]
        Tuned::Blocked => FullyConnectedS8::run_blocked,
        Tuned::No => FullyConnectedS8::run_portable,
    };
    run(
        params,
        input,
        weights,
        &stage.bias,
        &stage.multipliers,
        &stage.shifts,
        &mut out,
    )
    .map(|()| out)
}

/// `cases` random layers through both paths, long and short rows alternating.
pub(crate) fn check(rng: &mut Rng, cases: usize, tally: &mut Tally<'_>) {
    for case in 0..cases {
        let (params, input, weights, stage) = self::case(rng, case % 2 == 0);
        let tuned = run(&params, &input, &weights, &stage, Tuned::Yes);
        let portable = run(&params, &input, &weights, &stage, Tuned::No);
        tally.check("fully_connected", case, &tuned, &portable);
        if params.tuned() {
            let alone = run(&params, &input, &weights, &stage, Tuned::Alone);
            tally.check("fully_connected tuned alone", case, &alone, &portable);
        }
        #[cfg(any(ember_blocked, test))]
        if params.takes_blocked() {
            let blocked = run(&params, &input, &weights, &stage, Tuned::Blocked);
            tally.check("fully_connected blocked", case, &blocked, &portable);
        }
    }
}
