//! SOFTMAX along the last dimension, as TFLM's `softmax.cc` runs it: `softmax_s8` and
//! `softmax_s8_s16` through the gemmlowp fixed-point path of
//! `reference_ops::Softmax<int8_t, OutputT>` (TFLM micro uses no exp table for int8 input).
//! A float SOFTMAX (`reference_ops::Softmax<float>`) is the built-in `softmax_f32` with the
//! options' `beta` ([`builtin::SOFTMAX_F32`](crate::builtin::SOFTMAX_F32)).
//!
//! The tensor is viewed as `outer` rows of `depth` elements (`depth` the last dimension,
//! `outer` the product of the others), row-major.
//!
//! Bindings, both kernels: 0 `input` (`outer * depth` `i8` elements), 1 `output` (`outer *
//! depth` elements: `i8`, `i16`). Each row is read whole before its outputs are written, so
//! an int8 `output` may alias `input`.

use hal_core::kernel::KernelError;

use crate::binding_len::{require, rows_len, slice_bytes};
use crate::fixed_point::{exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1, FixedPoint};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{
    quantize_multiplier, rounding_divide_by_pot, saturating_rounding_doubling_high_mul,
};

/// Integer bits of the scaled input differences fed to `exp` (TFLM's
/// `kScaledDiffIntegerBits`).
pub const SCALED_DIFF_INTEGER_BITS: i32 = 5;
/// Integer bits of the sum of exponentials (TFLM's `kAccumulationIntegerBits`).
pub const ACCUMULATION_INTEGER_BITS: i32 = 12;

/// TFLite's `PreprocessSoftmaxScaling` (double rounding build): `beta * input_scale *
/// 2^(31 - input_integer_bits)`, capped at `2^31 - 1`, as a fixed-point multiplier and a
/// non-negative left shift. `None` where TFLM's `QuantizeMultiplierGreaterThanOne` would
/// abort: the real multiplier is not above 1 (or not a number).
pub fn preprocess_softmax_scaling(
    beta: f64,
    input_scale: f64,
    input_integer_bits: i32,
) -> Option<(i32, i32)> {
    let max_real_multiplier = ((1i64 << 31) - 1) as f64;
    let product = beta * input_scale * (1i64 << (31 - input_integer_bits)) as f64;
    // std::min(product, max): the first unless the second is smaller.
    let real = if max_real_multiplier < product {
        max_real_multiplier
    } else {
        product
    };
    // Refuses NaN too.
    if real.partial_cmp(&1.0) != Some(core::cmp::Ordering::Greater) {
        return None;
    }
    let (multiplier, shift) = quantize_multiplier(real);
    (shift >= 0).then_some((multiplier, shift))
}

/// TFLite's `CalculateInputRadius` (float build): `floor((2^bits - 1) * 2^(total - bits) /
/// 2^left_shift)`, the largest input magnitude the scaled fixed-point input can hold.
/// `left_shift` in `0..=62`; larger shifts give 0.
pub fn calculate_input_radius(
    input_integer_bits: i32,
    input_left_shift: i32,
    total_signed_bits: i32,
) -> i32 {
    if !(0..=62).contains(&input_left_shift) {
        return 0;
    }
    let max_input_rescaled = ((1i64 << input_integer_bits) - 1) as f64
        * (1i64 << (total_signed_bits - input_integer_bits)) as f64
        / (1i64 << input_left_shift) as f64;
    libm::floor(max_input_rescaled) as i32
}

/// TFLite's `GetReciprocal` for `x >= 0` with `x_integer_digits` integer bits: for `x > 0`,
/// `1 / x` as a Q0.31 fraction `shifted_scale` and `num_bits_over_unit` with `1/x =
/// shifted_scale * 2^-num_bits_over_unit`. For `x == 0` (DIV's zero divisor) TFLite's
/// result as well, no reciprocal: `num_bits_over_unit` is `x_integer_digits - 32` and
/// `shifted_scale` the Newton-Raphson `1 / (1 + y)` at the Q0.31 `y = -1`.
pub(crate) fn get_reciprocal(x: i32, x_integer_digits: i32) -> (i32, i32) {
    let headroom_plus_one = (x as u32).leading_zeros();
    let num_bits_over_unit = x_integer_digits - headroom_plus_one as i32;
    // Below 32 for x > 0; 32 for x == 0, whose shifted value is 0 either way.
    let shifted_sum_minus_one =
        ((x as u32).wrapping_shl(headroom_plus_one)).wrapping_sub(1u32 << 31) as i32;
    let shifted_scale =
        one_over_one_plus_x_for_x_in_0_1(FixedPoint::from_raw(shifted_sum_minus_one));
    (shifted_scale.raw(), num_bits_over_unit)
}

/// An integer output type of the quantized softmax.
trait SoftmaxOut: Copy {
    const BITS: i32;
    const MIN: i32;
    const MAX: i32;
    fn from_clamped(v: i32) -> Self;
}

impl SoftmaxOut for i8 {
    const BITS: i32 = 8;
    const MIN: i32 = i8::MIN as i32;
    const MAX: i32 = i8::MAX as i32;
    fn from_clamped(v: i32) -> Self {
        v as i8
    }
}

impl SoftmaxOut for i16 {
    const BITS: i32 = 16;
    const MIN: i32 = i16::MIN as i32;
    const MAX: i32 = i16::MAX as i32;
    fn from_clamped(v: i32) -> Self {
        v as i16
    }
}

/// The quantized softmax's parameters, shared by `softmax_s8` and `softmax_s8_s16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct QuantRows {
    outer: usize,
    depth: usize,
    input_multiplier: i32,
    input_left_shift: i32,
    diff_min: i32,
}

impl QuantRows {
    fn validate(self, out_bytes: usize, what: &'static str) -> Result<Self, KernelError> {
        rows_len(self.outer, self.depth, out_bytes, what)?;
        if self.input_multiplier < 0
            || !(0..=31).contains(&self.input_left_shift)
            || self.diff_min > 0
        {
            return Err(KernelError::Shape(what));
        }
        Ok(self)
    }

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.outer as u32,
            self.depth as u32,
            self.input_multiplier as u32,
            self.input_left_shift as u32,
            self.diff_min as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            outer: words.usize()?,
            depth: words.usize()?,
            input_multiplier: words.i32()?,
            input_left_shift: words.i32()?,
            diff_min: words.i32()?,
        })
    }

    fn prepare(
        outer: usize,
        depth: usize,
        beta: f32,
        input_scale: f32,
        what: &'static str,
    ) -> Result<Self, KernelError> {
        let (input_multiplier, input_left_shift) = preprocess_softmax_scaling(
            f64::from(beta),
            f64::from(input_scale),
            SCALED_DIFF_INTEGER_BITS,
        )
        .ok_or(KernelError::Shape(what))?;
        let diff_min = -calculate_input_radius(SCALED_DIFF_INTEGER_BITS, input_left_shift, 31);
        Ok(Self {
            outer,
            depth,
            input_multiplier,
            input_left_shift,
            diff_min,
        })
    }

    fn check(&self, binding_lens: &[usize], out_bytes: usize) -> Result<(), KernelError> {
        // Both products fit: decode and prepare refused overflow.
        let count = self.outer * self.depth;
        require(binding_lens, 0, count)?;
        require(binding_lens, 1, count * out_bytes)
    }

    /// `input_diff * beta * input_scale` in Q5.26 (TFLM's
    /// `MultiplyByQuantizedMultiplierGreaterThanOne`, double rounding).
    #[inline]
    fn scaled_diff(&self, input_diff: i32) -> FixedPoint<SCALED_DIFF_INTEGER_BITS> {
        FixedPoint::from_raw(saturating_rounding_doubling_high_mul(
            input_diff.wrapping_mul(1i32 << self.input_left_shift),
            self.input_multiplier,
        ))
    }

    fn run<T: SoftmaxOut>(&self, input: &[i8], output: &mut [T]) {
        for (row_in, row_out) in input
            .chunks_exact(self.depth)
            .zip(output.chunks_exact_mut(self.depth))
            .take(self.outer)
        {
            let max_in_row = row_in.iter().fold(i8::MIN, |m, &x| m.max(x));
            let max_in_row = i32::from(max_in_row);

            let mut sum_of_exps = FixedPoint::<ACCUMULATION_INTEGER_BITS>::zero();
            for &x in row_in {
                let input_diff = i32::from(x) - max_in_row;
                if input_diff >= self.diff_min {
                    let exp = exp_on_negative_values(self.scaled_diff(input_diff));
                    // TFLM adds without saturation; the sum cannot overflow below 4096
                    // elements a row (each term is at most 2^19). Beyond, TFLM's sum wraps
                    // and its exponent check aborts; saturating keeps this sane.
                    let term = exp.rescale::<ACCUMULATION_INTEGER_BITS>();
                    sum_of_exps =
                        FixedPoint::from_raw(sum_of_exps.raw().saturating_add(term.raw()));
                }
            }

            // The largest element contributes exp(0): the sum is at least 2^19.
            let sum = sum_of_exps.raw().max(1);
            let (shifted_scale, num_bits_over_unit) =
                get_reciprocal(sum, ACCUMULATION_INTEGER_BITS);
            // TFLM checks 0 <= exponent <= 31 and aborts otherwise (an int8 output whose
            // row's exponentials sum to 256 or more); here every output is then computed
            // with the exact shift, which rounds them to the bottom of the range.
            let exponent = num_bits_over_unit + 31 - T::BITS;

            for (&x, y) in row_in.iter().zip(row_out.iter_mut()) {
                let input_diff = i32::from(x) - max_in_row;
                let v = if input_diff >= self.diff_min {
                    let exp_in_0 = exp_on_negative_values(self.scaled_diff(input_diff));
                    let product =
                        saturating_rounding_doubling_high_mul(shifted_scale, exp_in_0.raw());
                    let unsat_output = divide_by_pot_any(product, exponent);
                    unsat_output.wrapping_add(T::MIN).clamp(T::MIN, T::MAX)
                } else {
                    T::MIN
                };
                *y = T::from_clamped(v);
            }
        }
    }
}

/// [`rounding_divide_by_pot`] for any exponent: `0..=31` exactly as TFLM, larger ones
/// (where TFLM aborts) the same rounding in 64 bits, negative ones (impossible) as 0.
#[inline]
fn divide_by_pot_any(x: i32, exponent: i32) -> i32 {
    match exponent {
        0..=31 => rounding_divide_by_pot(x, exponent),
        32..=62 => {
            let x = i64::from(x);
            let mask = (1i64 << exponent) - 1;
            let remainder = x & mask;
            let threshold = (mask >> 1) + i64::from(x < 0);
            ((x >> exponent) + i64::from(remainder > threshold)) as i32
        }
        e if e > 62 => 0,
        _ => x,
    }
}

macro_rules! quantized_softmax {
    ($name:ident, $kernel:literal, $out:ty, $out_bytes:literal, $what:literal, $doc:literal) => {
        #[doc = $doc]
        ///
        /// Words: `outer`, `depth`, `input_multiplier`, `input_left_shift`, `diff_min`.
        /// `decode` refuses (with [`KernelError::Shape`]) a zero `outer` or `depth`, an
        /// element count or byte size overflowing `usize`, a negative `input_multiplier`, an
        /// `input_left_shift` outside `0..=31` and a positive `diff_min`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name {
            /// Rows: the product of every dimension but the last.
            pub outer: usize,
            /// Elements a row: the last dimension.
            pub depth: usize,
            /// `beta * input_scale * 2^26` as a Q31 multiplier (TFLM's `input_multiplier`).
            pub input_multiplier: i32,
            /// Its left shift, `0..=31` (TFLM's `input_left_shift`).
            pub input_left_shift: i32,
            /// The smallest `x - max(row)` that is not treated as `exp = 0` (TFLM's
            /// `diff_min`, minus the input radius; at most 0).
            pub diff_min: i32,
        }

        impl $name {
            fn rows(&self) -> QuantRows {
                QuantRows {
                    outer: self.outer,
                    depth: self.depth,
                    input_multiplier: self.input_multiplier,
                    input_left_shift: self.input_left_shift,
                    diff_min: self.diff_min,
                }
            }

            fn from_rows(q: QuantRows) -> Self {
                Self {
                    outer: q.outer,
                    depth: q.depth,
                    input_multiplier: q.input_multiplier,
                    input_left_shift: q.input_left_shift,
                    diff_min: q.diff_min,
                }
            }

            /// Bindings 0 (`input`, `outer * depth` bytes) and 1 (`output`, `outer * depth`
            /// elements) hold the tensors: [`KernelError::MissingBinding`] or
            /// [`KernelError::BindingTooSmall`] otherwise. Lengths in bytes.
            pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
                self.rows().check(binding_lens, $out_bytes)
            }

            /// Runs the kernel over the first `outer * depth` elements of each slice,
            /// after [`check`](Self::check)ing their lengths.
            pub fn run(&self, input: &[i8], output: &mut [$out]) -> Result<(), KernelError> {
                self.check(&[slice_bytes(input), slice_bytes(output)])?;
                self.rows().run(input, output);
                Ok(())
            }
        }

        impl KernelParams for $name {
            const KERNEL: &'static str = $kernel;
            const BINDINGS: &'static [BindingUse] =
                &[BindingUse::READ_8, BindingUse::write($out_bytes)];

            fn encode(&self, out: &mut impl Extend<u32>) {
                self.rows().encode(out);
            }

            fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
                Ok(Self::from_rows(
                    QuantRows::decode(words)?.validate($out_bytes, $what)?,
                ))
            }
        }
    };
}

quantized_softmax!(
    SoftmaxS8,
    "softmax_s8",
    i8,
    1,
    "softmax_s8: zero or overflowing shape, or multiplier/shift/diff_min out of range",
    "`softmax_s8`: int8 softmax with int8 output (scale 1/256, zero point -128)."
);

quantized_softmax!(
    SoftmaxS8S16,
    "softmax_s8_s16",
    i16,
    2,
    "softmax_s8_s16: zero or overflowing shape, or multiplier/shift/diff_min out of range",
    "`softmax_s8_s16`: int8 softmax with int16 output (scale 1/65536, zero point -32768)."
);

impl SoftmaxS8 {
    /// The parameters TFLM's `CalculateSoftmaxParams` computes for an int8 → int8 SOFTMAX
    /// of `outer` rows of `depth`: from the options' `beta` and the input's scale (the
    /// input zero point cancels out). Refuses, as TFLM's Prepare does, an output
    /// quantization other than zero point -128 and scale exactly `1/256`, and a `beta *
    /// input_scale * 2^26` not above 1 (TFLM aborts); and a shape `decode` would refuse.
    pub fn prepare(
        outer: usize,
        depth: usize,
        beta: f32,
        input_scale: f32,
        output_scale: f32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        const WHAT: &str = "softmax_s8: output must be scale 1/256 zero point -128, beta * input scale * 2^26 above 1";
        if output_zero_point != -128 || output_scale != 1.0 / 256.0 {
            return Err(KernelError::Shape(WHAT));
        }
        let rows = QuantRows::prepare(outer, depth, beta, input_scale, WHAT)?;
        Ok(Self::from_rows(rows.validate(1, WHAT)?))
    }
}

impl SoftmaxS8S16 {
    /// As [`SoftmaxS8::prepare`] for an int16 output, whose quantization TFLM requires to be
    /// zero point -32768 and scale within `0.001 / 65536` of `1/65536` (in `f32`).
    pub fn prepare(
        outer: usize,
        depth: usize,
        beta: f32,
        input_scale: f32,
        output_scale: f32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        const WHAT: &str =
            "softmax_s8_s16: output must be scale 1/65536 zero point -32768, beta * input scale * 2^26 above 1";
        let want = 1.0f32 / 65536.0;
        let delta = if output_scale > want {
            output_scale - want
        } else {
            want - output_scale
        };
        // TF_LITE_ENSURE_NEAR fails when delta > epsilon (so NaN passes it; refuse NaN here).
        if output_zero_point != -32768 || delta > 0.001f32 * want || output_scale.is_nan() {
            return Err(KernelError::Shape(WHAT));
        }
        let rows = QuantRows::prepare(outer, depth, beta, input_scale, WHAT)?;
        Ok(Self::from_rows(rows.validate(2, WHAT)?))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;
    use std::vec::Vec;

    use super::*;

    fn round_trip<P: KernelParams + PartialEq + core::fmt::Debug>(p: &P) {
        let mut words = Vec::new();
        p.encode(&mut words);
        let back = P::decode(&mut Words::new(&words)).unwrap();
        assert_eq!(&back, p);
    }

    fn s8(outer: usize, depth: usize, beta: f32, scale: f32) -> SoftmaxS8 {
        SoftmaxS8::prepare(outer, depth, beta, scale, 1.0 / 256.0, -128).unwrap()
    }

    #[test]
    fn prepare_computes_tflm_scaling() {
        // beta 1, scale 0.1: 0.1 * 2^26 = 6710886.4 = 0.7999999... * 2^23.
        let p = s8(1, 4, 1.0, 0.1);
        let real = f64::from(0.1f32) * f64::from(1u32 << 26);
        let (m, s) = quantize_multiplier(real);
        assert_eq!((p.input_multiplier, p.input_left_shift), (m, s));
        assert_eq!(s, 23);
        // floor(31 * 2^26 / 2^23) = 248.
        assert_eq!(p.diff_min, -248);
        // The cap: a huge beta * scale saturates at 2^31 - 1: shift 31, radius 0.
        let p = s8(1, 4, 1.0e6, 100.0);
        assert_eq!(
            (p.input_multiplier, p.input_left_shift, p.diff_min),
            (i32::MAX, 31, 0)
        );
        assert_eq!(calculate_input_radius(5, 23, 31), 248);
        assert_eq!(calculate_input_radius(4, 20, 31), 1920);
        // Refusals: output quantization, tiny beta * scale.
        assert!(SoftmaxS8::prepare(1, 4, 1.0, 0.1, 1.0 / 255.0, -128).is_err());
        assert!(SoftmaxS8::prepare(1, 4, 1.0, 0.1, 1.0 / 256.0, 0).is_err());
        assert!(SoftmaxS8::prepare(1, 4, 1.0, 1.0e-9, 1.0 / 256.0, -128).is_err());
        assert!(SoftmaxS8::prepare(0, 4, 1.0, 0.1, 1.0 / 256.0, -128).is_err());
        assert!(SoftmaxS8S16::prepare(1, 4, 1.0, 0.1, 1.0 / 65536.0, -32768).is_ok());
        assert!(SoftmaxS8S16::prepare(1, 4, 1.0, 0.1, 1.0 / 65536.0 * 1.0005, -32768).is_ok());
        assert!(SoftmaxS8S16::prepare(1, 4, 1.0, 0.1, 1.0 / 65536.0 * 1.002, -32768).is_err());
        assert!(SoftmaxS8S16::prepare(1, 4, 1.0, 0.1, 1.0 / 65536.0, 0).is_err());
    }

    #[test]
    fn uniform_rows_split_evenly() {
        // Four equal inputs: exp(0) = 1 - 2^-31 each, 1/4 of 256 = 64: output 64 - 128.
        let p = s8(2, 4, 1.0, 0.1);
        let mut out = [0i8; 8];
        p.run(&[5, 5, 5, 5, -7, -7, -7, -7], &mut out).unwrap();
        assert_eq!(out, [-64; 8]);
        // A single element row: probability 1 → 256 - 128 saturates at 127.
        let p = s8(3, 1, 1.0, 0.1);
        let mut out = [0i8; 3];
        p.run(&[-128, 0, 127], &mut out).unwrap();
        assert_eq!(out, [127; 3]);
        let p = SoftmaxS8S16::prepare(1, 2, 1.0, 0.1, 1.0 / 65536.0, -32768).unwrap();
        let mut out = [0i16; 2];
        p.run(&[9, 9], &mut out).unwrap();
        assert_eq!(out, [0, 0]);
    }

    #[test]
    fn hand_computed_two_way_softmax() {
        // Inputs 0 and -10 at scale 0.1: probabilities 1/(1+e^-1) = 0.7311 and 0.2689.
        // Times 256: 187.16 and 68.84 → 187 - 128 = 59 and 69 - 128 = -59.
        let p = s8(1, 2, 1.0, 0.1);
        let mut out = [0i8; 2];
        p.run(&[0, -10], &mut out).unwrap();
        assert_eq!(out, [59, -59]);
        // int16: times 65536: 47910.6 and 17625.4 → 15143 and -15143.
        let p = SoftmaxS8S16::prepare(1, 2, 1.0, 0.1, 1.0 / 65536.0, -32768).unwrap();
        let mut out = [0i16; 2];
        p.run(&[0, -10], &mut out).unwrap();
        assert_eq!(out, [15143, -15143]);
        // Below diff_min (-248 at this scale... unreachable for int8), so use a coarse scale:
        // scale 1.0 → real 2^26, shift 27, radius floor(31 * 2^26 / 2^27) = 15.
        let p = s8(1, 3, 1.0, 1.0);
        assert_eq!(p.diff_min, -15);
        let mut out = [0i8; 3];
        p.run(&[20, 4, 5], &mut out).unwrap();
        // 4 - 20 = -16 < -15: exactly the minimum; 5 - 20 = -15: exp(-15) * 256 rounds to 0.
        assert_eq!(out, [127, -128, -128]);
    }

    #[test]
    fn rows_are_monotonic_and_sum_to_one() {
        let mut s = 12345u32;
        for (depth, scale, beta) in [
            (10, 0.05f32, 1.0f32),
            (100, 0.2, 1.0),
            (1001, 0.1, 0.5),
            (7, 0.02, 3.0),
        ] {
            let input: Vec<i8> = (0..depth)
                .map(|_| {
                    s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (s >> 24) as i8
                })
                .collect();
            let p = s8(1, depth, beta, scale);
            let mut out = vec![0i8; depth];
            p.run(&input, &mut out).unwrap();
            let mut pairs: Vec<(i8, i8)> = input.iter().copied().zip(out.iter().copied()).collect();
            pairs.sort();
            for w in pairs.windows(2) {
                assert!(w[0].1 <= w[1].1, "not monotonic: {w:?}");
            }
            let sum: f64 = out.iter().map(|&q| (f64::from(q) + 128.0) / 256.0).sum();
            let exact: f64 = {
                let max = f64::from(*input.iter().max().unwrap());
                let e: Vec<f64> = input
                    .iter()
                    .map(|&x| libm::exp((f64::from(x) - max) * f64::from(scale) * f64::from(beta)))
                    .collect();
                let t: f64 = e.iter().sum();
                for (&q, &ei) in out.iter().zip(&e) {
                    let want = (ei / t * 256.0 - 128.0).clamp(-128.0, 127.0);
                    assert!((f64::from(q) - want).abs() <= 1.0, "{q} vs {want}");
                }
                t
            };
            assert!(exact > 0.0);
            assert!((sum - 1.0).abs() <= depth as f64 / 256.0, "sum {sum}");
        }
    }

    #[test]
    fn large_sums_do_not_panic() {
        // TFLM aborts here (exponent 35); every output rounds to the minimum.
        let p = s8(1, 5000, 1.0, 0.1);
        let mut out = vec![0i8; 5000];
        p.run(&vec![3i8; 5000], &mut out).unwrap();
        assert!(out.iter().all(|&q| q == -128));
        let p = SoftmaxS8S16::prepare(1, 5000, 1.0, 0.1, 1.0 / 65536.0, -32768).unwrap();
        let mut out = vec![0i16; 5000];
        p.run(&vec![3i8; 5000], &mut out).unwrap();
        assert!(out.iter().all(|&q| q < -32000));
    }

    #[test]
    fn params_round_trip_and_decode_refuses_nonsense() {
        round_trip(&s8(3, 1001, 1.0, 0.0625));
        round_trip(&SoftmaxS8S16::prepare(2, 10, 0.5, 0.2, 1.0 / 65536.0, -32768).unwrap());
        let bad = |w: &[u32]| SoftmaxS8::decode(&mut Words::new(w)).is_err();
        assert!(bad(&[0, 4, 1 << 30, 3, 0]));
        assert!(bad(&[1, 0, 1 << 30, 3, 0]));
        assert!(bad(&[1, 4, (-5i32) as u32, 3, 0]));
        assert!(bad(&[1, 4, 1 << 30, 32, 0]));
        assert!(bad(&[1, 4, 1 << 30, (-1i32) as u32, 0]));
        assert!(bad(&[1, 4, 1 << 30, 3, 1]));
        assert!(bad(&[1, 4, 1 << 30, 3]));
        assert!(!bad(&[1, 4, 1 << 30, 3, 0]));
        assert_eq!(SoftmaxS8::KERNEL, "softmax_s8");
        assert_eq!(SoftmaxS8S16::KERNEL, "softmax_s8_s16");
    }

    #[test]
    fn check_refuses_short_bindings() {
        let p = s8(2, 3, 1.0, 0.1);
        assert_eq!(p.check(&[6, 6]), Ok(()));
        assert_eq!(
            p.check(&[6]),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
        assert_eq!(
            p.check(&[5, 6]),
            Err(KernelError::BindingTooSmall {
                index: 0,
                len: 5,
                needed: 6
            })
        );
        let mut out = [0i8; 5];
        assert!(p.run(&[0; 6], &mut out).is_err());
        let p = SoftmaxS8S16::prepare(2, 3, 1.0, 0.1, 1.0 / 65536.0, -32768).unwrap();
        assert_eq!(
            p.check(&[6, 11]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 11,
                needed: 12
            })
        );
    }
}
