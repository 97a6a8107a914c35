//! The tuned int8 kernels against the portable ones on the board's own core:
//! `ember_kernels::tuned_check`, the runner the kernels' host tests run (on emulated
//! instructions there), here on the real ones; then each kernel at layer shapes of the
//! reference models timed both ways in instructions (the `icount` measure). Each board
//! whose core has tuned kernels builds it as its `kernel-check` binary
//! (`cargo xtask bench boards` runs them); it passes only if every output is the same.

use alloc::vec;
use ember_kernels::conv2d::{Conv2dS8, Conv2dShape};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use ember_kernels::fully_connected::{FullyConnectedS8, FullyConnectedShape};
use ember_kernels::padding::Window;
use ember_kernels::tuned_check;
use ember_kernels::tuned_check::random::{output_size, Rng};
use ember_kernels::KernelError;

/// Random cases per kernel.
const CASES: usize = 1000;

/// Instructions per run of `f` (boards/icount's measure), over `reps` runs.
fn instructions(reps: u32, mut f: impl FnMut()) -> u64 {
    let total = icount::instructions(&mut || {
        for _ in 0..reps {
            f();
        }
    });
    total / u64::from(reps.max(1))
}

/// Drops a timed run's result: its output is checked above, at small shapes.
fn ignore(_: Result<(), KernelError>) {}

/// Logs one shape's tuned and portable instruction counts and their ratio.
fn report(name: &str, reps: u32, mut tuned: impl FnMut(), mut portable: impl FnMut()) {
    let t = instructions(reps, &mut tuned);
    let p = instructions(reps, &mut portable);
    let ratio = if p == 0 { 0.0 } else { t as f32 / p as f32 };
    say!(
        "bench {}: tuned {} instr, portable {} instr, tuned/portable {}",
        name,
        t,
        p,
        ratio
    );
}

fn bench_fc(rng: &mut Rng, name: &str, n: usize, od: usize, input_offset: i32) {
    let shape = FullyConnectedShape {
        batches: 1,
        accum_depth: n,
        output_depth: od,
        has_bias: true,
    };
    let s = rng.stage(od, 1 << 12);
    let p = FullyConnectedS8 {
        shape,
        input_offset,
        filter_offset: 0,
        output_offset: s.output_offset,
        act_min: -128,
        act_max: 127,
        per_channel: true,
    };
    let (input, weights) = (rng.bytes(n), rng.bytes(n * od));
    let mut out = vec![0i8; od];
    let mut out2 = vec![0i8; od];
    report(
        name,
        4,
        || {
            ignore(p.run(
                &input,
                &weights,
                &s.bias,
                &s.multipliers,
                &s.shifts,
                &mut out,
            ))
        },
        || {
            ignore(p.run_portable(
                &input,
                &weights,
                &s.bias,
                &s.multipliers,
                &s.shifts,
                &mut out2,
            ))
        },
    );
}

#[allow(clippy::too_many_arguments)]
fn bench_conv(
    rng: &mut Rng,
    name: &str,
    (ih, iw, id): (usize, usize, usize),
    (fh, fw, od): (usize, usize, usize),
    stride: usize,
    pad: (usize, usize),
    input_offset: i32,
) {
    let window = Window {
        stride_height: stride,
        stride_width: stride,
        dilation_height: 1,
        dilation_width: 1,
        pad_height: pad.0,
        pad_width: pad.1,
    };
    let (oh, ow) = output_size(&window, (ih, iw), (fh, fw)).unwrap_or((1, 1));
    let shape = Conv2dShape {
        batches: 1,
        input_height: ih,
        input_width: iw,
        input_depth: id,
        filter_height: fh,
        filter_width: fw,
        filter_depth: id,
        output_height: oh,
        output_width: ow,
        output_depth: od,
        window,
        has_bias: true,
    };
    let s = rng.stage(od, 1 << 12);
    let p = Conv2dS8 {
        shape,
        filter_hwio: tuned_check::CONV_FILTER_HWIO,
        input_offset,
        output_offset: s.output_offset,
        act_min: -128,
        act_max: 127,
    };
    let (input, filter) = (rng.bytes(ih * iw * id), rng.bytes(od * fh * fw * id));
    let mut out = vec![0i8; oh * ow * od];
    let mut out2 = vec![0i8; oh * ow * od];
    report(
        name,
        1,
        || {
            ignore(p.run(
                &input,
                &filter,
                &s.bias,
                &s.multipliers,
                &s.shifts,
                &mut out,
            ))
        },
        || {
            ignore(p.run_rows_portable(
                &input,
                &filter,
                &s.bias,
                &s.multipliers,
                &s.shifts,
                0..oh,
                &mut out2,
            ))
        },
    );
}

fn bench_depthwise(
    rng: &mut Rng,
    name: &str,
    (ih, iw, id): (usize, usize, usize),
    (fh, fw): (usize, usize),
    stride: usize,
    pad: (usize, usize),
    input_offset: i32,
) {
    let window = Window {
        stride_height: stride,
        stride_width: stride,
        dilation_height: 1,
        dilation_width: 1,
        pad_height: pad.0,
        pad_width: pad.1,
    };
    let (oh, ow) = output_size(&window, (ih, iw), (fh, fw)).unwrap_or((1, 1));
    let shape = DepthwiseConv2dShape {
        batches: 1,
        input_height: ih,
        input_width: iw,
        input_depth: id,
        depth_multiplier: 1,
        filter_height: fh,
        filter_width: fw,
        output_height: oh,
        output_width: ow,
        window,
        has_bias: true,
    };
    let s = rng.stage(id, 1 << 12);
    let p = DepthwiseConv2dS8 {
        shape,
        input_offset,
        output_offset: s.output_offset,
        act_min: -128,
        act_max: 127,
    };
    let (input, filter) = (rng.bytes(ih * iw * id), rng.bytes(fh * fw * id));
    let mut out = vec![0i8; oh * ow * id];
    let mut out2 = vec![0i8; oh * ow * id];
    report(
        name,
        1,
        || {
            ignore(p.run(
                &input,
                &filter,
                &s.bias,
                &s.multipliers,
                &s.shifts,
                &mut out,
            ))
        },
        || {
            ignore(p.run_rows_portable(
                &input,
                &filter,
                &s.bias,
                &s.multipliers,
                &s.shifts,
                0..oh,
                &mut out2,
            ))
        },
    );
}

/// Runs the check and the timings, logging each; whether every output was the same.
pub fn run() -> bool {
    let mut logged = 0;
    let summary = tuned_check::run(CASES, &mut |mismatch| {
        // The first few are enough to start from; the summary counts them all.
        logged += 1;
        if logged > 10 {
            return;
        }
        say!(
            "MISMATCH {} case {} (first differing output {})",
            mismatch.kernel,
            mismatch.case,
            mismatch.first_difference
        );
    });
    say!(
        "kernel-check: {} cases, {} mismatched",
        summary.cases,
        summary.mismatched
    );

    let mut rng = Rng(0xdead_beef);
    bench_fc(&mut rng, "fc 4000->4 (micro_speech)", 4000, 4, 0);
    bench_fc(&mut rng, "fc 64->12 (kws)", 64, 12, 0);
    bench_fc(&mut rng, "fc 256->64 offset", 256, 64, 5);
    bench_conv(
        &mut rng,
        "conv 1x1 25x5x64->64 (kws)",
        (25, 5, 64),
        (1, 1, 64),
        1,
        (0, 0),
        0,
    );
    bench_conv(
        &mut rng,
        "conv 1x1 12x12x64->128 (person)",
        (12, 12, 64),
        (1, 1, 128),
        1,
        (0, 0),
        0,
    );
    bench_conv(
        &mut rng,
        "conv 1x1 12x12x32->32 offset",
        (12, 12, 32),
        (1, 1, 32),
        1,
        (0, 0),
        3,
    );
    bench_conv(
        &mut rng,
        "conv 10x8 49x40x1->8 s2 (micro_speech)",
        (49, 40, 1),
        (10, 8, 8),
        2,
        (4, 3),
        -3,
    );
    bench_conv(
        &mut rng,
        "conv 10x4 49x10x1->64 s2 (kws)",
        (49, 10, 1),
        (10, 4, 64),
        2,
        (4, 1),
        -3,
    );
    bench_conv(
        &mut rng,
        "conv 3x3 96x96x1->8 s2 (person)",
        (96, 96, 1),
        (3, 3, 8),
        2,
        (0, 0),
        1,
    );
    bench_conv(
        &mut rng,
        "conv 3x3 16x16x16->16 pad",
        (16, 16, 16),
        (3, 3, 16),
        1,
        (1, 1),
        -2,
    );
    bench_depthwise(
        &mut rng,
        "dw 3x3 25x5x64 (kws)",
        (25, 5, 64),
        (3, 3),
        1,
        (1, 1),
        0,
    );
    bench_depthwise(
        &mut rng,
        "dw 3x3 24x24x16 s2 (person)",
        (24, 24, 16),
        (3, 3),
        2,
        (0, 0),
        1,
    );
    bench_depthwise(
        &mut rng,
        "dw 3x3 12x12x64 (person)",
        (12, 12, 64),
        (3, 3),
        1,
        (1, 1),
        1,
    );

    summary.mismatched == 0
}
