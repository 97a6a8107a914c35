//! DEPTHWISE_CONV_2D int8 with a depth multiplier of 1, as CMSIS-NN's
//! `arm_depthwise_conv_s8_opt`: per output pixel, four channels at a time, each in-image
//! tap loads one word of four inputs and one of four weights, splits both into 16-bit lanes
//! (the input offset added on the way) and multiply-accumulates each lane into its
//! channel's sum (SMLABB, SMLATT); channels past the last multiple of four are summed one
//! by one.

use super::spec::DepthwiseConv2dS8;
use crate::quant::{narrow_offset, pack_bytes, OutputStageS8, RightShiftedS8};
use crate::simd::{smlabb, smlatt, splat16, sxtab16, sxtab16_ror8, sxtb16, sxtb16_ror8, word_at};
use core::ops::Range;

/// Runs output rows `rows` of `p` into `output`, which holds just those rows, over bindings
/// [`DepthwiseConv2dS8::check`] has accepted; `false` (nothing written) for a depth
/// multiplier other than 1, an input offset that does not fit 16-bit lanes or a stage the
/// tuned output stage does not take ([`OutputStageS8::tuned_takes`]): the portable loops
/// cover those. It needs no scratch.
pub(crate) fn run_rows(
    p: &DepthwiseConv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
    _scratch: &mut crate::scratch::Scratch<'_>,
) -> bool {
    let s = &p.shape;
    let (true, Some(offset)) = (p.tuned(), narrow_offset(p.input_offset)) else {
        return false;
    };
    if !stage.tuned_takes(s.input_depth) {
        return false;
    }
    let w = &s.window;
    let (ih, iw, id) = (s.input_height, s.input_width, s.input_depth);
    let (fh, fw) = (s.filter_height, s.filter_width);
    let offsets = splat16(offset);
    // Checked once: every channel's shift a right shift, for the blocks' lean stage.
    let right = stage.right_shifted(id);
    let mut o = 0;
    for row in rows {
        let (b, oy) = (row / s.output_height, row % s.output_height);
        let (y0, ys) = w.rows_in_image(oy, ih, fh);
        let (fy0, fy1) = (ys.start, ys.end);
        for ox in 0..s.output_width {
            let (x0, xs) = w.cols_in_image(ox, iw, fw);
            let (fx0, fx1) = (xs.start, xs.end);
            // Input index of tap (fy, fx), channel 0; filter index of the same.
            let at = |fy: usize, fx: usize| {
                let y = (y0 + (w.dilation_height * fy) as isize) as usize;
                let x = (x0 + (w.dilation_width * fx) as isize) as usize;
                ((b * ih + y) * iw + x) * id
            };
            let out = &mut output[o..][..id];
            let (ny, nx) = (fy1 - fy0, fx1 - fx0);
            // A window wholly in the padding reads no tap: its sums are the bias alone.
            let (first, f) = if ny == 0 || nx == 0 {
                (0, 0)
            } else {
                (at(fy0, fx0), (fy0 * fw + fx0) * id)
            };
            let taps = Taps {
                rows: ny,
                cols: nx,
                input_row: w.dilation_height * iw * id,
                input_col: w.dilation_width * id,
                filter_row: fw * id,
                filter_col: id,
            };
            let c = blocks(
                &input[first..],
                &filter[f..],
                &taps,
                offsets,
                stage,
                right.as_ref(),
                &mut out[..id / 4 * 4],
            );
            for c in c..id {
                let mut a = 0i32;
                for fy in fy0..fy1 {
                    for fx in fx0..fx1 {
                        let x = i32::from(i16::from(input[at(fy, fx) + c]) + offset);
                        a = a.wrapping_add(x * i32::from(filter[(fy * fw + fx) * id + c]));
                    }
                }
                out[c] = stage.channel(c).apply(a);
            }
            o += id;
        }
    }
    true
}

/// The in-image taps of one output pixel: `rows × cols` of them, and the index steps from
/// one to the next in the input and in the filter.
struct Taps {
    rows: usize,
    cols: usize,
    input_row: usize,
    input_col: usize,
    filter_row: usize,
    filter_col: usize,
}

/// Writes the channels of `out` (a multiple of four), four at a time, over `taps`: `x`
/// starts at the first tap's channel 0, `f` at its weights; `right`, where given, is
/// `stage` for channels all of right shifts. Returns the channels written: all, or none
/// where a tap's word would leave either slice (the caller's slices always hold them).
/// Kept out of line, so that its sums and pointers have the registers to themselves.
#[inline(never)]
fn blocks(
    x: &[i8],
    f: &[i8],
    taps: &Taps,
    offsets: u32,
    stage: &OutputStageS8<'_>,
    right: Option<&RightShiftedS8<'_>>,
    out: &mut [i8],
) -> usize {
    if taps.rows == 0 || taps.cols == 0 {
        for (c, o) in out.iter_mut().enumerate() {
            *o = stage.channel(c).apply(0);
        }
        return out.len();
    }
    // One past the last byte the loops read, from a slice's start.
    let end = |row: usize, col: usize| {
        (taps.rows - 1)
            .checked_mul(row)?
            .checked_add((taps.cols - 1).checked_mul(col)?)?
            .checked_add(out.len())
    };
    let fits = |end: Option<usize>, len: usize| end.is_some_and(|e| e <= len);
    if !fits(end(taps.input_row, taps.input_col), x.len())
        || !fits(end(taps.filter_row, taps.filter_col), f.len())
    {
        return 0;
    }
    // Rows of three taps one channel row apart in both slices take the unrolled row.
    let three = taps.cols == 3 && taps.input_col == taps.filter_col;
    // The lean stage's entries for these channels (`right_shifted` cut them to the
    // input's depth, which `out` never passes).
    let right = right.and_then(|r| {
        let entries = (r.multipliers.get(..out.len())?, r.shifts.get(..out.len())?);
        Some((r, entries))
    });
    for (block, out) in out.chunks_exact_mut(4).enumerate() {
        let c = 4 * block;
        let mut acc = [0i32; 4];
        let (mut xr, mut fr) = (x.as_ptr().wrapping_add(c), f.as_ptr().wrapping_add(c));
        for _ in 0..taps.rows {
            if three {
                // SAFETY: the row's taps are at `xr + k * input_col` and
                // `fr + k * filter_col` (k < 3 = cols, the steps equal), inside the slices
                // by the check above, as for the loop below.
                unsafe { row_of_three(&mut acc, xr, fr, taps.input_col, offsets) };
            } else {
                let (mut xp, mut fp) = (xr, fr);
                for _ in 0..taps.cols {
                    // SAFETY: `xp` and `fp` stay at `c + row * r + col * k` (r < rows,
                    // k < cols, c + 4 <= out.len()) from the starts of `x` and `f`, and
                    // the check above keeps those four bytes inside each slice.
                    let (x, f) = unsafe { (word_at(xp), word_at(fp)) };
                    tap(&mut acc, x, f, offsets);
                    xp = xp.wrapping_add(taps.input_col);
                    fp = fp.wrapping_add(taps.filter_col);
                }
            }
            xr = xr.wrapping_add(taps.input_row);
            fr = fr.wrapping_add(taps.filter_row);
        }
        match right {
            Some((right, (multipliers, shifts))) => {
                let bias = |k: usize| right.bias.get(c + k).copied().unwrap_or(0);
                let (m, s) = (&multipliers[c..c + 4], &shifts[c..c + 4]);
                let packed = pack_bytes(core::array::from_fn(|k| {
                    right.saturated(acc[k], bias(k), m[k], s[k])
                }));
                for (o, v) in out.iter_mut().zip(right.clamp(packed).to_le_bytes()) {
                    *o = v as i8;
                }
            }
            // A stage with a left shift: the reference's steps, out of line.
            None => stage.apply_each(c, &acc, out),
        }
    }
    out.len()
}

/// Adds one tap's products to the four channels' sums: `x` holds the four inputs (each
/// plus the offset in `offsets`' lanes), `f` the four weights.
#[inline(always)]
fn tap(acc: &mut [i32; 4], x: u32, f: u32, offsets: u32) {
    let (xl, xh) = (sxtab16(offsets, x), sxtab16_ror8(offsets, x));
    let (fl, fh) = (sxtb16(f), sxtb16_ror8(f));
    acc[0] = smlabb(xl, fl, acc[0]);
    acc[2] = smlatt(xl, fl, acc[2]);
    acc[1] = smlabb(xh, fh, acc[1]);
    acc[3] = smlatt(xh, fh, acc[3]);
}

/// [`tap`] for three taps `step` bytes apart from `x` and from `f`, in one `asm!` block of
/// 30 instructions (the second and third taps addressed from the first by `step` and
/// `step << 1`, so that the sums, two pointers, the step, the offsets and four scratch
/// words fit the registers).
///
/// # Safety
/// The four bytes at `x + k * step` and at `f + k * step`, `k < 3`, are readable.
#[cfg(ember_dsp)]
#[inline(always)]
unsafe fn row_of_three(acc: &mut [i32; 4], x: *const i8, f: *const i8, step: usize, offsets: u32) {
    macro_rules! tap {
        ($at:literal) => {
            concat!(
                "ldr {x}, [{xp}",
                $at,
                "]\n",
                "ldr {f}, [{fp}",
                $at,
                "]\n",
                "sxtab16 {t}, {off}, {x}\n",
                "sxtb16 {u}, {f}\n",
                "smlabb {a0}, {t}, {u}, {a0}\n",
                "smlatt {a2}, {t}, {u}, {a2}\n",
                "sxtab16 {x}, {off}, {x}, ror #8\n",
                "sxtb16 {f}, {f}, ror #8\n",
                "smlabb {a1}, {x}, {f}, {a1}\n",
                "smlatt {a3}, {x}, {f}, {a3}\n",
            )
        };
    }
    let [mut a0, mut a1, mut a2, mut a3] = *acc;
    // SAFETY: the caller keeps the six words read readable (Armv7-M loads unaligned
    // words); the block writes only its register operands, and no stack; SMLABB and
    // SMLATT may set Q, which is not claimed preserved.
    unsafe {
        core::arch::asm!(
            tap!(""),
            tap!(", {s}"),
            tap!(", {s}, lsl #1"),
            a0 = inout(reg) a0,
            a1 = inout(reg) a1,
            a2 = inout(reg) a2,
            a3 = inout(reg) a3,
            xp = in(reg) x,
            fp = in(reg) f,
            s = in(reg) step,
            off = in(reg) offsets,
            x = out(reg) _,
            f = out(reg) _,
            t = out(reg) _,
            u = out(reg) _,
            options(readonly, nostack),
        );
    }
    *acc = [a0, a1, a2, a3];
}

/// [`row_of_three`] on a core without Armv7E-M's instructions: [`tap`] three times.
///
/// # Safety
/// As [`row_of_three`]'s.
#[cfg(not(ember_dsp))]
unsafe fn row_of_three(acc: &mut [i32; 4], x: *const i8, f: *const i8, step: usize, offsets: u32) {
    for k in 0..3 {
        // SAFETY: the caller keeps these words readable.
        let (x, f) = unsafe { (word_at(x.add(k * step)), word_at(f.add(k * step))) };
        tap(acc, x, f, offsets);
    }
}
