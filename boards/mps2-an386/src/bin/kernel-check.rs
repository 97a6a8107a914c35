//! The tuned int8 kernels (`ember-kernels`' Cortex-M DSP path) against the portable ones,
//! on the Cortex-M4 itself: many pseudo-random cases of FULLY_CONNECTED, CONV_2D (1×1 and
//! larger, strides, dilations, padding, odd channel counts, input offsets, tiles) and
//! DEPTHWISE_CONV_2D run through both paths, and the run exits 0 only if every output is
//! the same. Then each kernel at model-sized shapes is timed both ways: under
//! `qemu-system-arm -icount shift=0` one virtual nanosecond is one instruction, so the
//! CMSDK dual timer (25 MHz: one tick per 40 instructions) counts instructions.
//!
//! ```text
//! cargo build --release -p mps2-an386 --target thumbv7em-none-eabihf --bin kernel-check
//! qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
//!   -serial none -semihosting-config enable=on,target=native -icount shift=0 \
//!   -kernel target/thumbv7em-none-eabihf/release/kernel-check \
//!   | defmt-print -e target/thumbv7em-none-eabihf/release/kernel-check
//! ```
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
use ember_firmware::semihosting::finish;
use ember_kernels::conv2d::{Conv2dS8, Conv2dShape};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use ember_kernels::fully_connected::{FullyConnectedS8, FullyConnectedShape};
use ember_kernels::padding::Window;
use ember_kernels::KernelError;

/// Random cases per kernel.
const CASES: usize = 1000;

/// Marsaglia's xorshift32: the cases' values, the same on every run.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// A value in `lo..=hi`.
    fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next() % ((hi - lo) as u32 + 1)) as i32
    }

    /// A count in `lo..=hi`.
    fn size(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as i32, hi as i32) as usize
    }

    /// True one time in `n`.
    fn one_in(&mut self, n: u32) -> bool {
        self.next() % n == 0
    }

    fn bytes(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.next() as i8).collect()
    }

    /// An input offset (`-input_zero_point`): often 0 (folded into the bias at import),
    /// sometimes an end of its range.
    fn input_offset(&mut self) -> i32 {
        match self.next() % 4 {
            0 => 0,
            1 => *[-127, 128, 1, -1].get(self.size(0, 3)).unwrap_or(&0),
            _ => self.range(-127, 128),
        }
    }

    /// The output stage's words: biases, multipliers, shifts (`n` each), output offset,
    /// clamp.
    fn stage(&mut self, n: usize, bias_span: i32) -> Stage {
        let (lo, hi) = if self.one_in(2) {
            (-128, 127)
        } else {
            let a = self.range(-128, 127);
            let b = self.range(-128, 127);
            (a.min(b), a.max(b))
        };
        Stage {
            bias: (0..n)
                .map(|_| {
                    if self.one_in(20) {
                        i32::MAX - self.range(0, 1000)
                    } else {
                        self.range(-bias_span, bias_span)
                    }
                })
                .collect(),
            multipliers: (0..n)
                .map(|_| match self.next() % 16 {
                    0 => *[0, 1 << 30, i32::MAX].get(self.size(0, 2)).unwrap_or(&0),
                    _ => (1 << 30) + (self.next() >> 2) as i32,
                })
                .collect(),
            shifts: (0..n)
                .map(|_| match self.next() % 16 {
                    0 => *[-31, 30, 0].get(self.size(0, 2)).unwrap_or(&0),
                    _ => self.range(-12, 1),
                })
                .collect(),
            output_offset: self.range(-128, 127),
            act_min: lo,
            act_max: hi,
        }
    }
}

/// An int8 weighted op's bias and requantization bindings and words.
struct Stage {
    bias: Vec<i32>,
    multipliers: Vec<i32>,
    shifts: Vec<i32>,
    output_offset: i32,
    act_min: i32,
    act_max: i32,
}

/// Failed cases, counted (the first few are logged).
struct Tally {
    cases: usize,
    failed: usize,
}

impl Tally {
    fn check(
        &mut self,
        what: &str,
        case: usize,
        tuned: &Result<Vec<i8>, KernelError>,
        portable: &Result<Vec<i8>, KernelError>,
    ) {
        self.cases += 1;
        let same = match (tuned, portable) {
            (Ok(t), Ok(p)) => t == p,
            (Err(t), Err(p)) => t == p,
            _ => false,
        };
        if !same {
            self.failed += 1;
            if self.failed <= 10 {
                let first = match (tuned, portable) {
                    (Ok(t), Ok(p)) => t.iter().zip(p).position(|(a, b)| a != b).unwrap_or(0),
                    _ => 0,
                };
                defmt::println!(
                    "MISMATCH {} case {} (first differing output {})",
                    what,
                    case,
                    first
                );
            }
        }
    }
}

fn fc_case(rng: &mut Rng, big: bool) -> (FullyConnectedS8, Vec<i8>, Vec<i8>, Stage) {
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

fn run_fc(
    p: &FullyConnectedS8,
    input: &[i8],
    weights: &[i8],
    s: &Stage,
    tuned: bool,
) -> Result<Vec<i8>, KernelError> {
    let mut out = vec![0i8; p.shape.batches * p.shape.output_depth];
    let run = if tuned {
        FullyConnectedS8::run
    } else {
        FullyConnectedS8::run_portable
    };
    run(
        p,
        input,
        weights,
        &s.bias,
        &s.multipliers,
        &s.shifts,
        &mut out,
    )
    .map(|()| out)
}

/// A window whose output is at least one pixel: strides 1 or 2, dilation mostly 1,
/// padding up to the filter's reach.
fn window(rng: &mut Rng, fh: usize, fw: usize) -> Window {
    let dil = |rng: &mut Rng| if rng.one_in(5) { 2 } else { 1 };
    let (dh, dw) = (dil(rng), dil(rng));
    Window {
        stride_height: rng.size(1, 2),
        stride_width: rng.size(1, 2),
        dilation_height: dh,
        dilation_width: dw,
        pad_height: if rng.one_in(2) {
            0
        } else {
            rng.size(0, (fh - 1) * dh)
        },
        pad_width: if rng.one_in(2) {
            0
        } else {
            rng.size(0, (fw - 1) * dw)
        },
    }
}

/// Output size along one axis (TFLM's loops take it as given; this is VALID's formula over
/// the padded input), or `None` where no output fits.
fn out_size(
    input: usize,
    pad: usize,
    filter: usize,
    dilation: usize,
    stride: usize,
) -> Option<usize> {
    let reach = (filter - 1) * dilation + 1;
    let padded = input + 2 * pad;
    (padded >= reach).then(|| (padded - reach) / stride + 1)
}

fn conv_case(rng: &mut Rng) -> Option<(Conv2dS8, Vec<i8>, Vec<i8>, Stage)> {
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
    let oh = out_size(
        ih,
        window.pad_height,
        fh,
        window.dilation_height,
        window.stride_height,
    )?;
    let ow = out_size(
        iw,
        window.pad_width,
        fw,
        window.dilation_width,
        window.stride_width,
    )?;
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
    let p = Conv2dS8 {
        shape,
        filter_hwio: false,
        input_offset: rng.input_offset(),
        output_offset: stage.output_offset,
        act_min: stage.act_min,
        act_max: stage.act_max,
    };
    let input = rng.bytes(shape.input_len().ok()?);
    let filter = rng.bytes(shape.filter_len().ok()?);
    Some((p, input, filter, stage))
}

fn run_conv(
    p: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    s: &Stage,
    rows: core::ops::Range<usize>,
    tuned: bool,
) -> Result<Vec<i8>, KernelError> {
    let row_len = p.shape.row_len()?;
    let mut out = vec![0i8; rows.len() * row_len];
    let run = if tuned {
        Conv2dS8::run_rows
    } else {
        Conv2dS8::run_rows_portable
    };
    run(
        p,
        input,
        filter,
        &s.bias,
        &s.multipliers,
        &s.shifts,
        rows,
        &mut out,
    )
    .map(|()| out)
}

fn depthwise_case(rng: &mut Rng) -> Option<(DepthwiseConv2dS8, Vec<i8>, Vec<i8>, Stage)> {
    let (fh, fw) = match rng.next() % 3 {
        0 | 1 => (3, 3),
        _ => (rng.size(1, 5), rng.size(1, 5)),
    };
    let window = window(rng, fh, fw);
    let (ih, iw) = (rng.size(1, 9), rng.size(1, 9));
    let oh = out_size(
        ih,
        window.pad_height,
        fh,
        window.dilation_height,
        window.stride_height,
    )?;
    let ow = out_size(
        iw,
        window.pad_width,
        fw,
        window.dilation_width,
        window.stride_width,
    )?;
    let shape = DepthwiseConv2dShape {
        batches: rng.size(1, 2),
        input_height: ih,
        input_width: iw,
        input_depth: if rng.one_in(3) {
            4 * rng.size(1, 6)
        } else {
            rng.size(1, 13)
        },
        depth_multiplier: if rng.one_in(4) { rng.size(2, 3) } else { 1 },
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

fn run_depthwise(
    p: &DepthwiseConv2dS8,
    input: &[i8],
    filter: &[i8],
    s: &Stage,
    tuned: bool,
) -> Result<Vec<i8>, KernelError> {
    let mut out = vec![0i8; p.shape.output_len()?];
    let rows = 0..p.shape.rows()?;
    let run = if tuned {
        DepthwiseConv2dS8::run_rows
    } else {
        DepthwiseConv2dS8::run_rows_portable
    };
    run(
        p,
        input,
        filter,
        &s.bias,
        &s.multipliers,
        &s.shifts,
        rows,
        &mut out,
    )
    .map(|()| out)
}

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
    defmt::println!(
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
    let oh = out_size(ih, pad.0, fh, 1, stride).unwrap_or(1);
    let ow = out_size(iw, pad.1, fw, 1, stride).unwrap_or(1);
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
        filter_hwio: false,
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
    let oh = out_size(ih, pad.0, fh, 1, stride).unwrap_or(1);
    let ow = out_size(iw, pad.1, fw, 1, stride).unwrap_or(1);
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

#[cortex_m_rt::entry]
fn main() -> ! {
    mps2_an386::init_heap();
    let mut tally = Tally {
        cases: 0,
        failed: 0,
    };

    let mut rng = Rng(0x2545_f491);
    for case in 0..CASES {
        let (p, input, weights, s) = fc_case(&mut rng, case % 2 == 0);
        let t = run_fc(&p, &input, &weights, &s, true);
        let q = run_fc(&p, &input, &weights, &s, false);
        tally.check("fully_connected", case, &t, &q);
    }

    let mut rng = Rng(0x9e37_79b9);
    let mut case = 0;
    while case < CASES {
        let Some((p, input, filter, s)) = conv_case(&mut rng) else {
            continue;
        };
        let rows = p.shape.rows().unwrap_or(0);
        // The whole output, then a tile of its rows.
        let t = run_conv(&p, &input, &filter, &s, 0..rows, true);
        let q = run_conv(&p, &input, &filter, &s, 0..rows, false);
        tally.check("conv2d", case, &t, &q);
        let start = rng.size(0, rows - 1);
        let end = rng.size(start + 1, rows);
        let t = run_conv(&p, &input, &filter, &s, start..end, true);
        let q = run_conv(&p, &input, &filter, &s, start..end, false);
        tally.check("conv2d tile", case, &t, &q);
        case += 1;
    }

    let mut rng = Rng(0x1234_5678);
    let mut case = 0;
    while case < CASES {
        let Some((p, input, filter, s)) = depthwise_case(&mut rng) else {
            continue;
        };
        let t = run_depthwise(&p, &input, &filter, &s, true);
        let q = run_depthwise(&p, &input, &filter, &s, false);
        tally.check("depthwise_conv2d", case, &t, &q);
        case += 1;
    }

    defmt::println!(
        "kernel-check: {} cases, {} mismatched",
        tally.cases,
        tally.failed
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

    finish(tally.failed == 0)
}
