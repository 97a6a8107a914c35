//! CONV_2D int8 over an HWIO filter, register-blocked, for cores without a SIMD variant of
//! their own (Cortex-M3, RV32IMAC, Cortex-A53): per output pixel, a block of output
//! channels accumulates in registers while each in-image tap's input channels stream past
//! them ([`Taps`], checked to lie inside the bindings once per pixel), one input value
//! (with the input offset added, where there is one) multiplied into the block's
//! contiguous weights; single channels take the rest. Where the portable
//! loops keep their accumulators in memory (a load and a store around every multiply-add),
//! this kernel's loop is a weight load and a multiply-add per product. Each output is the
//! same wrapping int32 sum, so the result is the portable loops' bit for bit. On AArch64,
//! blocks of 16 channels run in NEON (`neon.rs`) where the input offset fits 16-bit
//! lanes.

use super::spec::Conv2dS8;
use crate::quant::OutputStageS8;
use crate::scratch::Scratch;
use crate::taps::Taps;
use core::ops::Range;

/// Output channels accumulated at once: without an input offset, in one pass over the
/// taps; with one, on 32-bit Arm, in two passes of half as many (a Cortex-M3's 13 general
/// registers hold the pointers, the loop's end, the weight row's step, the input value and
/// a weight beside 8 sums, or beside 4 sums and the offset).
const BLOCK: usize = 8;

/// Whether a block with an input offset takes two passes: on 32-bit Arm (13 general
/// registers; and in the crate's tests, which would otherwise not run this path);
/// RISC-V's and AArch64's 31 hold the offset beside all 8 sums.
const SPLIT_WITH_OFFSET: bool = cfg!(any(target_arch = "arm", test));

/// Runs output rows `rows` of `p` into `output`, which holds just those rows, over bindings
/// [`Conv2dS8::check`] has accepted; `false` (nothing written) for an OHWI filter, which
/// the portable loops cover. Out of line: built at this crate's optimization level
/// wherever it is called from.
#[inline(never)]
pub(crate) fn run_rows(
    p: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
    _scratch: &mut Scratch<'_>,
) -> bool {
    if !p.filter_hwio {
        return false;
    }
    let s = &p.shape;
    let (id, od, offset) = (s.input_depth, s.output_depth, p.input_offset);
    let fast = stage.tuned_takes(od);
    let mut pixels = output.chunks_exact_mut(od.max(1));
    for row in rows {
        let (b, oy) = (row / s.output_height, row % s.output_height);
        for ox in 0..s.output_width {
            let Some(out) = pixels.next() else {
                return true;
            };
            let taps = Taps::of_pixel(
                &s.window,
                (s.input_height, s.input_width, id),
                (s.filter_height, s.filter_width),
                id * od,
                (b, oy, ox),
            );
            // The check's bindings always hold every tap; a pixel that did not would be
            // left to the portable loops' bounds checks.
            if !taps.fit(input, filter, id, id * od) {
                return false;
            }
            let sums = |oc| {
                if offset == 0 {
                    block::<BLOCK, false>(input, filter, &taps, (id, od), oc, 0)
                } else if !SPLIT_WITH_OFFSET {
                    block::<BLOCK, true>(input, filter, &taps, (id, od), oc, offset)
                } else {
                    const HALF: usize = BLOCK / 2;
                    let low = block::<HALF, true>(input, filter, &taps, (id, od), oc, offset);
                    let high =
                        block::<HALF, true>(input, filter, &taps, (id, od), oc + HALF, offset);
                    core::array::from_fn(|k| if k < HALF { low[k] } else { high[k - HALF] })
                }
            };
            let mut oc = 0;
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            if let Some(narrow) = crate::quant::narrow_offset(offset) {
                use super::neon::{block, CHANNELS};
                while oc + CHANNELS <= od {
                    let sums = block(input, filter, &taps, (id, od), oc, narrow);
                    for half in sums.chunks_exact(BLOCK) {
                        let half: [i32; BLOCK] = core::array::from_fn(|k| half[k]);
                        stage.write(fast, oc, &half, &mut out[oc..oc + BLOCK]);
                        oc += BLOCK;
                    }
                }
            }
            while oc + BLOCK <= od {
                stage.write(fast, oc, &sums(oc), &mut out[oc..oc + BLOCK]);
                oc += BLOCK;
            }
            while oc < od {
                let acc = block::<1, true>(input, filter, &taps, (id, od), oc, offset);
                stage.write(fast, oc, &acc, &mut out[oc..oc + 1]);
                oc += 1;
            }
        }
    }
    true
}

/// Output channels `oc..oc + N` (all below `od`) of one pixel accumulated over `taps`,
/// which [`Taps::fit`] has found inside `input` (`id` values a tap) and `filter`
/// (`id * od` weights a tap).
#[inline(always)]
fn block<const N: usize, const OFFSET: bool>(
    input: &[i8],
    filter: &[i8],
    taps: &Taps,
    (id, od): (usize, usize),
    oc: usize,
    input_offset: i32,
) -> [i32; N] {
    let mut acc = [0i32; N];
    if taps.rows == 0 || taps.cols == 0 || oc + N > od {
        return acc;
    }
    // Along a filter row the taps' inputs are contiguous where the dilation across is 1
    // (each tap `id` values after the last), as their weight rows always are (`od` apart,
    // tap after tap): then one run of `cols * id` products a filter row.
    let (runs, run_len) = if taps.input_col == id {
        (1, taps.cols * id)
    } else {
        (taps.cols, id)
    };
    let mut input_row = input.as_ptr().wrapping_add(taps.first_input);
    let mut filter_row = filter.as_ptr().wrapping_add(taps.first_filter + oc);
    for _ in 0..taps.rows {
        let (mut x, mut f) = (input_row, filter_row);
        for _ in 0..runs {
            let (mut value_at, mut weights_at) = (x, f);
            for _ in 0..run_len {
                // SAFETY: `value_at` is input channel `ic < id` of tap (r, k) (r < rows,
                // k < cols; a run across taps moves from one tap's last channel to the
                // next tap's first) and `weights_at` its weights row's output channel
                // `oc`, with `oc + N <= od`; `Taps::fit` found `id` bytes from each tap's
                // input index and `id * od` from its filter index inside `input` and
                // `filter`.
                let value = i32::from(unsafe { *value_at });
                let value = if OFFSET {
                    value.wrapping_add(input_offset)
                } else {
                    value
                };
                for (k, a) in acc.iter_mut().enumerate() {
                    // SAFETY: as above, `weights_at + k` is output channel `oc + k < od`.
                    let weight = i32::from(unsafe { *weights_at.add(k) });
                    *a = a.wrapping_add(value.wrapping_mul(weight));
                }
                value_at = value_at.wrapping_add(1);
                weights_at = weights_at.wrapping_add(od);
            }
            x = x.wrapping_add(taps.input_col);
            f = f.wrapping_add(taps.filter_col);
        }
        input_row = input_row.wrapping_add(taps.input_row);
        filter_row = filter_row.wrapping_add(taps.filter_row);
    }
    acc
}
