//! CONV_2D int8 over an OHWI filter with SMLAD, as CMSIS-NN's `arm_convolve_s8` with
//! `arm_nn_mat_mult_kernel_s8_s16`: each output pixel's patch (its taps' input channels,
//! in the filter row's order) is gathered (im2col) and widened to 16-bit lanes with the
//! input offset added, two pixels at a time into scratch (the caller's where it lends
//! enough, [`Scratch`], else the stack's); then two pixels by two output channels
//! accumulate in four registers, each filter word split once for both pixels (the two
//! patches interleaved, so one pointer walks both). A 1×1 tap inside the image is its input
//! pixel: it is widened straight from the input.

use super::spec::{Conv2dS8, MAX_STACK_PATCH};
use crate::quant::{narrow_offset, pack_bytes, OutputStageS8, RightShiftedS8};
use crate::scratch::Scratch;
use crate::simd::{lo, splat16, sxtab16, sxtab16_ror8, word};
use core::ops::Range;

/// Two output pixels' patches, widened and interleaved: per four patch values
/// `[b0, b1, b2, b3]`, the words `[(b0, b2), (b1, b3)]` of pixel 0 then those of pixel 1
/// (matching a filter word split by SXTB16 and SXTB16 ROR #8); then per remaining value
/// (up to 3) pixel 0's and pixel 1's in the low lanes; `groups` holds the patch's whole
/// groups of four.
struct Cols<'g> {
    groups: &'g mut [[u32; 4]],
    tail: [[u32; 2]; 3],
}

/// Runs output rows `rows` of `p` (an OHWI filter without groups) into `output`, which
/// holds just those rows, over bindings [`Conv2dS8::check`] has accepted, in `scratch`
/// where it holds [`Conv2dS8::tuned_scratch`] and on the stack otherwise; `false` (nothing
/// written) for an HWIO filter, groups, an input offset that does not fit 16-bit lanes, a
/// patch over [`MAX_TUNED_PATCH`](super::MAX_TUNED_PATCH) (or over [`MAX_STACK_PATCH`]
/// without scratch) or a stage the tuned output stage does not take
/// ([`OutputStageS8::tuned_takes`]): the portable loops cover those.
pub(crate) fn run_rows(
    p: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
    scratch: &mut Scratch<'_>,
) -> bool {
    let (groups, bytes) = p.tuned_scratch();
    let Some(offset) = narrow_offset(p.input_offset) else {
        return false;
    };
    if bytes == 0 || !stage.tuned_takes(p.shape.output_depth) {
        return false;
    }
    match (
        scratch.groups.get_mut(..groups),
        scratch.bytes.get_mut(..bytes),
    ) {
        (Some(groups), Some(staging)) => {
            run_in(
                p, input, filter, stage, rows, output, offset, groups, staging,
            );
        }
        _ if bytes <= MAX_STACK_PATCH => {
            run_on_stack(p, input, filter, stage, rows, output, offset);
        }
        _ => return false,
    }
    true
}

/// [`run_in`] over scratch on the stack, for a patch of at most [`MAX_STACK_PATCH`]: kept
/// out of line so that a call with scratch of its own has no such frame.
#[inline(never)]
fn run_on_stack(
    p: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
    offset: i16,
) {
    let (groups, bytes) = p.tuned_scratch();
    let mut group_words = [[0u32; 4]; MAX_STACK_PATCH / 4];
    let mut staging = [0i8; MAX_STACK_PATCH];
    run_in(
        p,
        input,
        filter,
        stage,
        rows,
        output,
        offset,
        &mut group_words[..groups],
        &mut staging[..bytes],
    );
}

/// The kernel proper, its widened patches in `groups` (the patch's whole groups of four)
/// and its gathered taps in `staging` (the patch's length).
#[allow(clippy::too_many_arguments)]
fn run_in(
    p: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
    offset: i16,
    groups: &mut [[u32; 4]],
    staging: &mut [i8],
) {
    let s = &p.shape;
    let patch = staging.len();
    let od = s.output_depth;
    let pixels = rows.len() * s.output_width;
    let group_count = groups.len();
    let mut cols = Cols {
        groups,
        tail: [[0; 2]; 3],
    };
    // Checked once: every channel's shift a right shift, for the pairs' lean stage.
    let right = stage.right_shifted(od).filter(|_| od % 2 == 0);
    let mut q = 0;
    while q < pixels {
        // A last pixel alone leaves pixel 1's lanes as they were: its sums are not written.
        let n = if q + 1 < pixels { 2 } else { 1 };
        for k in 0..n {
            let at = (rows.start, q + k);
            im2col(p, at, input, offset, staging, &mut cols, k);
        }
        let out = &mut output[q * od..][..n * od];
        channels(
            &cols,
            group_count,
            &filter[..od * patch],
            patch,
            stage,
            right.as_ref(),
            out,
            n == 2,
        );
        q += n;
    }
}

/// Every output channel of one or two pixels (`both`) whose widened patches `cols` holds:
/// `filter` is the channels' rows of `patch` values each, `out` the pixels' outputs, one
/// row of channels after the other; `right`, where given, is `stage` for an even number
/// of channels all of right shifts. Kept out of line, apart from the gathering's state.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn channels(
    cols: &Cols<'_>,
    groups: usize,
    filter: &[i8],
    patch: usize,
    stage: &OutputStageS8<'_>,
    right: Option<&RightShiftedS8<'_>>,
    out: &mut [i8],
    both: bool,
) {
    let od = filter.len() / patch;
    let (out0, out1) = out.split_at_mut(od);
    if let (true, Some(right)) = (both, right) {
        return channel_pairs(cols, groups, filter, patch, right, out0, out1);
    }
    let mut rows = filter.chunks_exact(patch);
    let mut oc = 0;
    while let Some(w0) = rows.next() {
        // An odd last channel takes its own row twice; the second sums are not written.
        let w1 = rows.next();
        let [a00, a01, a10, a11] = mac_2x2(cols, groups, w0, w1.unwrap_or(w0));
        // The reference's steps, out of line: this path serves a stage with a left shift,
        // an odd last channel and a last pixel alone.
        let n = if w1.is_some() { 2 } else { 1 };
        stage.apply_each(oc, &[a00, a01][..n], &mut out0[oc..oc + n]);
        if both {
            stage.apply_each(oc, &[a10, a11][..n], &mut out1[oc..oc + n]);
        }
        oc += 2;
    }
}

/// [`channels`] for two pixels, an even number of channels and a stage of right shifts:
/// each pair of filter rows walks beside its pair of stage entries and of outputs.
#[inline(always)]
fn channel_pairs(
    cols: &Cols<'_>,
    groups: usize,
    filter: &[i8],
    patch: usize,
    stage: &RightShiftedS8<'_>,
    out0: &mut [i8],
    out1: &mut [i8],
) {
    let pairs = filter
        .chunks_exact(2 * patch)
        .zip(stage.multipliers.chunks_exact(2))
        .zip(stage.shifts.chunks_exact(2))
        .zip(out0.chunks_exact_mut(2).zip(out1.chunks_exact_mut(2)));
    for (pair, (((rows, m), s), (o0, o1))) in pairs.enumerate() {
        let (w0, w1) = rows.split_at(patch);
        let [a00, a01, a10, a11] = mac_2x2(cols, groups, w0, w1);
        let (b0, b1) = match stage.bias.get(2 * pair..2 * pair + 2) {
            Some(&[b0, b1]) => (b0, b1),
            _ => (0, 0),
        };
        let packed = pack_bytes([
            stage.saturated(a00, b0, m[0], s[0]),
            stage.saturated(a01, b1, m[1], s[1]),
            stage.saturated(a10, b0, m[0], s[0]),
            stage.saturated(a11, b1, m[1], s[1]),
        ]);
        let [v00, v01, v10, v11] = stage.clamp(packed).to_le_bytes();
        o0.copy_from_slice(&[v00 as i8, v01 as i8]);
        o1.copy_from_slice(&[v10 as i8, v11 as i8]);
    }
}

/// Widens the patch of output pixel `q` (counted from row `row0`'s first: `at` is
/// `(row0, q)`) into pixel `k`'s lanes of `cols`: each in-image tap's input channels, each
/// value plus `offset`, and 0 for a tap in the padding (TFLM skips those). `staging` is
/// the patch's length (scratch for taps gathered before widening).
#[inline(always)]
fn im2col(
    p: &Conv2dS8,
    (row0, q): (usize, usize),
    input: &[i8],
    offset: i16,
    staging: &mut [i8],
    cols: &mut Cols<'_>,
    k: usize,
) {
    let s = &p.shape;
    let w = &s.window;
    let (ih, iw, id) = (s.input_height, s.input_width, s.input_depth);
    let (fh, fw) = (s.filter_height, s.filter_width);
    let row = row0 + q / s.output_width;
    let (b, oy, ox) = (
        row / s.output_height,
        row % s.output_height,
        q % s.output_width,
    );
    let y0 = (oy * w.stride_height) as isize - w.pad_height as isize;
    let x0 = (ox * w.stride_width) as isize - w.pad_width as isize;
    let at = |y: isize, x: isize| ((b * ih + y as usize) * iw + x as usize) * id;
    let inside_x = |x: isize| x >= 0 && x < iw as isize;
    if fh == 1 && fw == 1 && y0 >= 0 && y0 < ih as isize && inside_x(x0) {
        // A 1×1 patch inside the image is the input pixel itself.
        widen(&input[at(y0, x0)..][..id], offset, cols, k);
        return;
    }
    // A padding tap's value: plus the offset, 0.
    let pad = offset.wrapping_neg() as i8;
    let dw = w.dilation_width;
    let seg = fw * id;
    if dw == 1 && seg % 4 == 0 {
        // Each filter row's taps fill whole groups: a row inside the image is widened
        // straight from the input, a row in the padding is zeros, and only a row cut by
        // the left or right edge is gathered first.
        let lanes = if k == 0 { 0 } else { 2 };
        let first = (-x0).clamp(0, fw as isize) as usize;
        let end = (iw as isize - x0).clamp(first as isize, fw as isize) as usize;
        let rows = cols.groups.chunks_exact_mut(seg / 4);
        for (fy, groups) in rows.take(fh).enumerate() {
            let y = y0 + (w.dilation_height * fy) as isize;
            if y < 0 || y >= ih as isize || first == end {
                for g in groups.iter_mut() {
                    g[lanes] = 0;
                    g[lanes + 1] = 0;
                }
            } else if first == 0 && end == fw {
                widen_groups(&input[at(y, x0)..][..seg], offset, groups, k);
            } else {
                let taps = &mut staging[..seg];
                let (left, rest) = taps.split_at_mut(first * id);
                let (run, right) = rest.split_at_mut((end - first) * id);
                left.fill(pad);
                run.copy_from_slice(&input[at(y, x0 + first as isize)..][..run.len()]);
                right.fill(pad);
                widen_groups(taps, offset, groups, k);
            }
        }
        return;
    }
    for (fy, taps) in staging.chunks_exact_mut(seg).enumerate() {
        let y = y0 + (w.dilation_height * fy) as isize;
        if y < 0 || y >= ih as isize {
            taps.fill(pad);
        } else if dw == 1 {
            // The row's in-image taps are one run of the input.
            let first = (-x0).clamp(0, fw as isize) as usize;
            let end = (iw as isize - x0).clamp(first as isize, fw as isize) as usize;
            let (left, rest) = taps.split_at_mut(first * id);
            let (run, right) = rest.split_at_mut((end - first) * id);
            left.fill(pad);
            if !run.is_empty() {
                run.copy_from_slice(&input[at(y, x0 + first as isize)..][..run.len()]);
            }
            right.fill(pad);
        } else {
            for (fx, tap) in taps.chunks_exact_mut(id).enumerate() {
                let x = x0 + (dw * fx) as isize;
                if inside_x(x) {
                    tap.copy_from_slice(&input[at(y, x)..][..id]);
                } else {
                    tap.fill(pad);
                }
            }
        }
    }
    widen(staging, offset, cols, k);
}

/// `src` plus `offset`, widened into pixel `k`'s lanes of `cols` ([`Cols`]' layout).
#[inline(always)]
fn widen(src: &[i8], offset: i16, cols: &mut Cols<'_>, k: usize) {
    let whole = src.len() / 4 * 4;
    widen_groups(&src[..whole], offset, cols.groups, k);
    for (&x, t) in src[whole..].iter().zip(cols.tail.iter_mut()) {
        t[k & 1] = u32::from((i16::from(x) + offset) as u16);
    }
}

/// `src` (a multiple of four values) plus `offset`, widened into pixel `k`'s lanes of
/// `groups`, one group per four values.
#[inline(always)]
fn widen_groups(src: &[i8], offset: i16, groups: &mut [[u32; 4]], k: usize) {
    let offsets = splat16(offset);
    let lanes = if k == 0 { 0 } else { 2 };
    for (x, g) in src.chunks_exact(4).zip(groups.iter_mut()) {
        let x = word(x);
        g[lanes] = sxtab16(offsets, x);
        g[lanes + 1] = sxtab16_ror8(offsets, x);
    }
}

/// The four sums of two widened patches (`groups` groups of four values and the tail) by
/// two filter rows (each the patch's length): `[p0·w0, p0·w1, p1·w0, p1·w1]`.
#[inline(always)]
fn mac_2x2(cols: &Cols<'_>, groups: usize, w0: &[i8], w1: &[i8]) -> [i32; 4] {
    let g = cols.groups.get(..groups).unwrap_or_default();
    let mut a = mac_2x2_groups(g, w0, w1);
    let (t0, t1) = (&w0[w0.len() / 4 * 4..], &w1[w1.len() / 4 * 4..]);
    for (x, (&f0, &f1)) in cols.tail.iter().zip(t0.iter().zip(t1)) {
        let (x0, x1) = (lo(x[0]), lo(x[1]));
        let (f0, f1) = (i32::from(f0), i32::from(f1));
        a[0] = a[0].wrapping_add(x0 * f0);
        a[1] = a[1].wrapping_add(x0 * f1);
        a[2] = a[2].wrapping_add(x1 * f0);
        a[3] = a[3].wrapping_add(x1 * f1);
    }
    a
}

/// The four sums of the interleaved patch groups `g` by the first `4 * g.len()` values of
/// two filter rows (fewer groups where a row is shorter): `[p0·w0, p0·w1, p1·w0, p1·w1]`.
///
/// One `asm!` loop, 21 instructions a group of 16 products: each filter word is split once
/// and meets both pixels' patch words, loaded two at a time (LDRD: the groups are words,
/// aligned) and again for the second row, so that the four sums, three pointers, the count
/// and four scratch words stay in registers (the compiler's own schedule of the same loop
/// spills).
#[cfg(ember_dsp)]
fn mac_2x2_groups(g: &[[u32; 4]], w0: &[i8], w1: &[i8]) -> [i32; 4] {
    let n = g.len().min(w0.len() / 4).min(w1.len() / 4);
    let (mut a00, mut a01, mut a10, mut a11) = (0i32, 0i32, 0i32, 0i32);
    if n == 0 {
        return [0; 4];
    }
    // SAFETY: the loop runs `n >= 1` times; each time it reads the 16 bytes of one group
    // of `g` (word-aligned, as LDRD needs: `[u32; 4]`) and one word of each filter row,
    // then moves past them: `n` groups and `4 * n` bytes of each row, all inside their
    // slices (`n` is the least of the three counts). It writes only its register operands,
    // and no stack; it changes the flags (`subs`) and may set Q (`smlad`), neither of
    // which is claimed preserved.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {f}, [{w0}], #4",
            "ldrd {x}, {y}, [{xp}]",
            "sxtb16 {fh}, {f}, ror #8",
            "sxtb16 {f}, {f}",
            "smlad {a00}, {x}, {f}, {a00}",
            "smlad {a00}, {y}, {fh}, {a00}",
            "ldrd {x}, {y}, [{xp}, #8]",
            "smlad {a10}, {x}, {f}, {a10}",
            "smlad {a10}, {y}, {fh}, {a10}",
            "ldr {f}, [{w1}], #4",
            "ldrd {x}, {y}, [{xp}]",
            "sxtb16 {fh}, {f}, ror #8",
            "sxtb16 {f}, {f}",
            "smlad {a01}, {x}, {f}, {a01}",
            "smlad {a01}, {y}, {fh}, {a01}",
            "ldrd {x}, {y}, [{xp}, #8]",
            "smlad {a11}, {x}, {f}, {a11}",
            "smlad {a11}, {y}, {fh}, {a11}",
            "adds {xp}, #16",
            "subs {n}, #1",
            "bne 2b",
            a00 = inout(reg) a00,
            a01 = inout(reg) a01,
            a10 = inout(reg) a10,
            a11 = inout(reg) a11,
            xp = inout(reg) g.as_ptr() => _,
            w0 = inout(reg) w0.as_ptr() => _,
            w1 = inout(reg) w1.as_ptr() => _,
            n = inout(reg) n => _,
            f = out(reg) _,
            fh = out(reg) _,
            x = out(reg) _,
            y = out(reg) _,
            options(readonly, nostack),
        );
    }
    [a00, a01, a10, a11]
}

/// [`mac_2x2_groups`] on a core without Armv7E-M's instructions: the same products from
/// the emulated ones, summed with the same wrapping.
#[cfg(not(ember_dsp))]
fn mac_2x2_groups(g: &[[u32; 4]], w0: &[i8], w1: &[i8]) -> [i32; 4] {
    let (mut a00, mut a01, mut a10, mut a11) = (0i32, 0i32, 0i32, 0i32);
    for ((group, row0), row1) in g.iter().zip(w0.chunks_exact(4)).zip(w1.chunks_exact(4)) {
        let [pixel0_even, pixel0_odd, pixel1_even, pixel1_odd] = *group;
        let (f0, f1) = (word(row0), word(row1));
        let (f0_even, f0_odd) = (crate::simd::sxtb16(f0), crate::simd::sxtb16_ror8(f0));
        let (f1_even, f1_odd) = (crate::simd::sxtb16(f1), crate::simd::sxtb16_ror8(f1));
        a00 = crate::simd::smlad(
            pixel0_odd,
            f0_odd,
            crate::simd::smlad(pixel0_even, f0_even, a00),
        );
        a10 = crate::simd::smlad(
            pixel1_odd,
            f0_odd,
            crate::simd::smlad(pixel1_even, f0_even, a10),
        );
        a01 = crate::simd::smlad(
            pixel0_odd,
            f1_odd,
            crate::simd::smlad(pixel0_even, f1_even, a01),
        );
        a11 = crate::simd::smlad(
            pixel1_odd,
            f1_odd,
            crate::simd::smlad(pixel1_even, f1_even, a11),
        );
    }
    [a00, a01, a10, a11]
}
