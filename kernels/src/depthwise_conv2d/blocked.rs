//! DEPTHWISE_CONV_2D int8, register-blocked, for cores without a SIMD variant of their own
//! (Cortex-M3, RV32IMAC, Cortex-A53): per output pixel, [`BLOCK`] output channels
//! accumulate in registers over the pixel's in-image taps ([`Taps`], a rectangle of the
//! filter checked to lie inside the bindings once per pixel), each tap loading the block's
//! weights and its input values — one each at a depth multiplier of 1, one shared by the
//! block where the multiplier is a multiple of [`BLOCK`] — side by side; single channels
//! take the rest. Where the portable loops keep their accumulators in memory, this
//! kernel's loop is a load of each operand and a multiply-add per product. Each output is
//! the same wrapping int32 sum, so the result is the portable loops' bit for bit. On
//! AArch64, blocks of 16 channels at a depth multiplier of 1 run in NEON (`neon.rs`) where
//! the input offset fits 16-bit lanes.

use super::spec::DepthwiseConv2dS8;
use crate::quant::OutputStageS8;
use crate::scratch::Scratch;
use crate::taps::Taps;
use core::ops::Range;

/// Channels accumulated at once: with the input offset, both pointers and their steps, as
/// many as a Cortex-M3's 13 general registers hold.
const BLOCK: usize = 4;

/// Runs output rows `rows` of `p` into `output`, which holds just those rows, over bindings
/// [`DepthwiseConv2dS8::check`] has accepted (any depth multiplier). Out of line: built at
/// this crate's optimization level wherever it is called from.
#[inline(never)]
pub(crate) fn run_rows(
    p: &DepthwiseConv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
    _scratch: &mut Scratch<'_>,
) -> bool {
    let s = &p.shape;
    let (depth, multiplier) = (s.input_depth, s.depth_multiplier);
    let channels = depth * multiplier;
    let fast = stage.tuned_takes(channels);
    let mut pixels = output.chunks_exact_mut(channels.max(1));
    for row in rows {
        let (b, oy) = (row / s.output_height, row % s.output_height);
        for ox in 0..s.output_width {
            let Some(out) = pixels.next() else {
                return true;
            };
            let taps = Taps::of_pixel(
                &s.window,
                (s.input_height, s.input_width, depth),
                (s.filter_height, s.filter_width),
                channels,
                (b, oy, ox),
            );
            // The check's bindings always hold every tap; a pixel that did not would be
            // left to the portable loops' bounds checks.
            if !taps.fit(input, filter, depth, channels) {
                return false;
            }
            let offset = p.input_offset;
            let mut c = 0;
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            if let (1, Some(narrow)) = (multiplier, crate::quant::narrow_offset(offset)) {
                use super::neon::{block, CHANNELS};
                while c + CHANNELS <= channels {
                    let sums = block(input, filter, &taps, (c, channels), narrow);
                    for (at, part) in (c..c + CHANNELS)
                        .step_by(BLOCK)
                        .zip(sums.chunks_exact(BLOCK))
                    {
                        let part: [i32; BLOCK] = core::array::from_fn(|k| part[k]);
                        stage.write(fast, at, &part, &mut out[at..at + BLOCK]);
                    }
                    c += CHANNELS;
                }
            }
            if multiplier == 1 {
                while c + BLOCK <= channels {
                    let acc = block::<BLOCK, false>(input, filter, &taps, (c, c), offset);
                    stage.write(fast, c, &acc, &mut out[c..c + BLOCK]);
                    c += BLOCK;
                }
            } else if multiplier % BLOCK == 0 {
                while c + BLOCK <= channels {
                    let channel = (c / multiplier, c);
                    let acc = block::<BLOCK, true>(input, filter, &taps, channel, offset);
                    stage.write(fast, c, &acc, &mut out[c..c + BLOCK]);
                    c += BLOCK;
                }
            }
            while c < channels {
                let channel = (c / multiplier, c);
                let acc = block::<1, true>(input, filter, &taps, channel, offset);
                stage.write(fast, c, &acc, &mut out[c..c + 1]);
                c += 1;
            }
        }
    }
    true
}

/// Output channels `c..c + N` (the filter's channels, `(input channel, c)` being
/// `channel`) accumulated over `taps`, which [`Taps::fit`] has found inside `input` and
/// `filter` for widths of the depth and the output channels: each channel reads input
/// channel `input channel + k`, or the same one for all where `SHARED`.
#[inline(always)]
fn block<const N: usize, const SHARED: bool>(
    input: &[i8],
    filter: &[i8],
    taps: &Taps,
    (input_channel, c): (usize, usize),
    input_offset: i32,
) -> [i32; N] {
    let mut acc = [0i32; N];
    if taps.rows == 0 || taps.cols == 0 {
        return acc;
    }
    let mut input_row = input
        .as_ptr()
        .wrapping_add(taps.first_input + input_channel);
    let mut filter_row = filter.as_ptr().wrapping_add(taps.first_filter + c);
    for _ in 0..taps.rows {
        let (mut x, mut f) = (input_row, filter_row);
        for _ in 0..taps.cols {
            for (k, a) in acc.iter_mut().enumerate() {
                let lane = if SHARED { 0 } else { k };
                // SAFETY: `x` and `f` point at tap (r, k)'s input channel `input_channel`
                // and filter channel `c` (r < rows, k < cols) of `input` and `filter`;
                // `Taps::fit` found every tap's depth (input) and output channels
                // (filter) inside both, and the run's blocks keep `input_channel + lane`
                // below the depth and `c + k` below the output channels.
                let (value, weight) = unsafe { (*x.add(lane), *f.add(k)) };
                let value = i32::from(value).wrapping_add(input_offset);
                *a = a.wrapping_add(value.wrapping_mul(i32::from(weight)));
            }
            x = x.wrapping_add(taps.input_col);
            f = f.wrapping_add(taps.filter_col);
        }
        input_row = input_row.wrapping_add(taps.input_row);
        filter_row = filter_row.wrapping_add(taps.filter_row);
    }
    acc
}
