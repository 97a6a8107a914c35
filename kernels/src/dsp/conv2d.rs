//! CONV_2D int8 over an OHWI filter with SMLAD, as CMSIS-NN's `arm_convolve_s8` with
//! `arm_nn_mat_mult_kernel_s8_s16`: each output pixel's patch (its taps' input channels,
//! in the filter row's order) is gathered (im2col) and widened to 16-bit lanes with the
//! input offset added, two pixels at a time into scratch on the stack; then two pixels by
//! two output channels accumulate in four registers, each filter word split once for
//! both pixels. A 1×1 tap inside the image is its input pixel: it is widened straight
//! from the input.

use super::simd::{lo, smlad, splat16, sxtab16, sxtab16_ror8, sxtb16, sxtb16_ror8, word};
use crate::conv2d::Conv2dS8;
use crate::quant::{narrow_offset, OutputStageS8};
use core::ops::Range;

/// The largest patch (`filter_height * filter_width * filter_depth`) the scratch holds;
/// larger ones run the portable loops.
pub(crate) const MAX_PATCH: usize = 512;

/// Words of one widened patch: two lanes per word over the patch's first multiple of 4,
/// then one word per remaining value (its low lane).
const WORDS: usize = MAX_PATCH / 2 + 3;

/// Runs output rows `rows` of `p` (an OHWI filter without groups) into `output`, which
/// holds just those rows, over bindings [`Conv2dS8::check`] has accepted; `false` (nothing
/// written) for an HWIO filter, groups, an input offset that does not fit 16-bit lanes or
/// a patch over [`MAX_PATCH`]: the portable loops cover those.
pub(crate) fn run_rows(
    p: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    stage: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
) -> bool {
    let s = &p.shape;
    if p.filter_hwio || s.filter_depth != s.input_depth {
        return false;
    }
    let Some(offset) = narrow_offset(p.input_offset) else {
        return false;
    };
    let patch = s.filter_height * s.filter_width * s.filter_depth;
    if patch == 0 || patch > MAX_PATCH {
        return false;
    }
    let od = s.output_depth;
    let pixels = rows.len() * s.output_width;
    let mut cols = [[0u32; WORDS]; 2];
    let mut staging = [0i8; MAX_PATCH];
    let mut q = 0;
    while q < pixels {
        let n = if q + 1 < pixels { 2 } else { 1 };
        for (k, col) in cols[..n].iter_mut().enumerate() {
            im2col(
                p,
                rows.start,
                q + k,
                input,
                offset,
                &mut staging[..patch],
                col,
            );
        }
        let out = &mut output[q * od..][..n * od];
        let [c0, c1] = &cols;
        let mut oc = 0;
        if n == 2 {
            while oc + 2 <= od {
                let w0 = &filter[oc * patch..][..patch];
                let w1 = &filter[(oc + 1) * patch..][..patch];
                let [a00, a01, a10, a11] = mac_2x2(c0, c1, w0, w1);
                out[oc] = stage.apply(oc, a00);
                out[oc + 1] = stage.apply(oc + 1, a01);
                out[od + oc] = stage.apply(oc, a10);
                out[od + oc + 1] = stage.apply(oc + 1, a11);
                oc += 2;
            }
        }
        for oc in oc..od {
            let w = &filter[oc * patch..][..patch];
            for (k, col) in cols[..n].iter().enumerate() {
                out[k * od + oc] = stage.apply(oc, mac_1x1(col, w));
            }
        }
        q += n;
    }
    true
}

/// Widens the patch of output pixel `q` (counted from row `row0`'s first) into `col`:
/// each in-image tap's input channels, each value plus `offset`, and 0 for a tap in the
/// padding (TFLM skips those). `staging` is the patch's length.
#[inline(always)]
fn im2col(
    p: &Conv2dS8,
    row0: usize,
    q: usize,
    input: &[i8],
    offset: i16,
    staging: &mut [i8],
    col: &mut [u32; WORDS],
) {
    let s = &p.shape;
    let w = &s.window;
    let (ih, iw, id) = (s.input_height, s.input_width, s.input_depth);
    let row = row0 + q / s.output_width;
    let (b, oy, ox) = (
        row / s.output_height,
        row % s.output_height,
        q % s.output_width,
    );
    let y0 = (oy * w.stride_height) as isize - w.pad_height as isize;
    let x0 = (ox * w.stride_width) as isize - w.pad_width as isize;
    let inside = |y: isize, x: isize| y >= 0 && y < ih as isize && x >= 0 && x < iw as isize;
    let at = |y: isize, x: isize| ((b * ih + y as usize) * iw + x as usize) * id;
    if s.filter_height == 1 && s.filter_width == 1 && inside(y0, x0) {
        widen(&input[at(y0, x0)..][..id], offset, col);
        return;
    }
    // A padding tap's value: plus the offset, 0.
    let pad = offset.wrapping_neg() as i8;
    let mut taps = staging.chunks_exact_mut(id);
    for fy in 0..s.filter_height {
        let y = y0 + (w.dilation_height * fy) as isize;
        for fx in 0..s.filter_width {
            let x = x0 + (w.dilation_width * fx) as isize;
            let Some(tap) = taps.next() else {
                return;
            };
            if inside(y, x) {
                tap.copy_from_slice(&input[at(y, x)..][..id]);
            } else {
                tap.fill(pad);
            }
        }
    }
    widen(staging, offset, col);
}

/// `src` plus `offset`, widened into `col`'s layout: per four values `[b0, b1, b2, b3]`
/// the words `(b0, b2)` and `(b1, b3)`, matching a filter word's [`sxtb16`] and
/// [`sxtb16_ror8`]; then one word per remaining value.
#[inline(always)]
fn widen(src: &[i8], offset: i16, col: &mut [u32; WORDS]) {
    let offsets = splat16(offset);
    let chunks = src.chunks_exact(4);
    let tail = chunks.remainder();
    let mut done = 0;
    for (x, d) in chunks.zip(col.chunks_exact_mut(2)) {
        let x = word(x);
        d[0] = sxtab16(offsets, x);
        d[1] = sxtab16_ror8(offsets, x);
        done += 2;
    }
    for (&x, d) in tail.iter().zip(&mut col[done..]) {
        *d = u32::from((i16::from(x) + offset) as u16);
    }
}

/// The four sums of two widened patches by two filter rows (each the patch's length):
/// `[c0·w0, c0·w1, c1·w0, c1·w1]`.
#[inline(always)]
fn mac_2x2(c0: &[u32; WORDS], c1: &[u32; WORDS], w0: &[i8], w1: &[i8]) -> [i32; 4] {
    let (mut a00, mut a01, mut a10, mut a11) = (0i32, 0i32, 0i32, 0i32);
    let f0 = w0.chunks_exact(4);
    let f1 = w1.chunks_exact(4);
    let (t0, t1) = (f0.remainder(), f1.remainder());
    let pairs = c0.chunks_exact(2).zip(c1.chunks_exact(2));
    let mut done = 0;
    for ((x0, x1), (f0, f1)) in pairs.zip(f0.zip(f1)) {
        let f = word(f0);
        let (fl, fh) = (sxtb16(f), sxtb16_ror8(f));
        a00 = smlad(x0[0], fl, a00);
        a00 = smlad(x0[1], fh, a00);
        a10 = smlad(x1[0], fl, a10);
        a10 = smlad(x1[1], fh, a10);
        let f = word(f1);
        let (fl, fh) = (sxtb16(f), sxtb16_ror8(f));
        a01 = smlad(x0[0], fl, a01);
        a01 = smlad(x0[1], fh, a01);
        a11 = smlad(x1[0], fl, a11);
        a11 = smlad(x1[1], fh, a11);
        done += 2;
    }
    let tails = c0[done..].iter().zip(&c1[done..]);
    for ((&x0, &x1), (&f0, &f1)) in tails.zip(t0.iter().zip(t1)) {
        let (x0, x1) = (lo(x0), lo(x1));
        let (f0, f1) = (i32::from(f0), i32::from(f1));
        a00 = a00.wrapping_add(x0 * f0);
        a01 = a01.wrapping_add(x0 * f1);
        a10 = a10.wrapping_add(x1 * f0);
        a11 = a11.wrapping_add(x1 * f1);
    }
    [a00, a01, a10, a11]
}

/// The sum of one widened patch by one filter row (the patch's length).
#[inline(always)]
fn mac_1x1(c: &[u32; WORDS], w: &[i8]) -> i32 {
    let mut a = 0i32;
    let f = w.chunks_exact(4);
    let t = f.remainder();
    let mut done = 0;
    for (x, f) in c.chunks_exact(2).zip(f) {
        let f = word(f);
        a = smlad(x[0], sxtb16(f), a);
        a = smlad(x[1], sxtb16_ror8(f), a);
        done += 2;
    }
    for (&x, &f) in c[done..].iter().zip(t) {
        a = a.wrapping_add(lo(x) * i32::from(f));
    }
    a
}
