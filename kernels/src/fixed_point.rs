//! gemmlowp's scalar fixed-point arithmetic (`fixedpoint/fixedpoint.h`, the version TFLM
//! builds against), as TFLM's integer softmax, log softmax, logistic and tanh use it.
//!
//! A [`FixedPoint<I>`] is an `i32` read as a signed number with `I` integer bits and `31 - I`
//! fractional bits (`Q(I).(31-I)`). Every operation reproduces gemmlowp's raw integer result
//! bit for bit:
//!
//! - `+`, `-` and negation are plain two's complement arithmetic; gemmlowp leaves their
//!   overflow undefined, every compiler TFLM is built with wraps, and so do these;
//! - a product is [`saturating_rounding_doubling_high_mul`] of the raws, the integer bits of
//!   the factors adding up;
//! - [`FixedPoint::rescale`] changes the integer bits with
//!   [`saturating_rounding_multiply_by_pot`] (saturating when bits move left, rounding to
//!   nearest with ties away from zero when they move right);
//! - the transcendental functions ([`exp_on_negative_values`], [`logistic`], [`tanh`],
//!   [`one_over_one_plus_x_for_x_in_0_1`], [`log_x_for_x_greater_than_or_equal_to_1`])
//!   evaluate the same polynomials, Newton-Raphson steps and barrel-shifter constants in the
//!   same order.

pub use crate::quant::{rounding_divide_by_pot, saturating_rounding_doubling_high_mul};

/// A fixed-point number: `raw / 2^(31 - I)`, `I` integer bits (`0..=30`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPoint<const I: i32>(pub i32);

impl<const I: i32> FixedPoint<I> {
    /// Fractional bits: `31 - I`.
    pub const FRACTIONAL_BITS: i32 = {
        assert!(I >= 0 && I <= 30, "integer bits must be in 0..=30");
        31 - I
    };

    /// The number whose raw value is `raw`.
    #[inline(always)]
    pub const fn from_raw(raw: i32) -> Self {
        Self(raw)
    }

    /// The raw value.
    #[inline(always)]
    pub const fn raw(self) -> i32 {
        self.0
    }

    /// Zero.
    #[inline(always)]
    pub const fn zero() -> Self {
        Self(0)
    }

    /// One, or for `I == 0` (which cannot hold 1) the largest value, `1 - 2^-31`.
    #[inline(always)]
    pub const fn one() -> Self {
        if I == 0 {
            Self(i32::MAX)
        } else {
            Self(1 << Self::FRACTIONAL_BITS)
        }
    }

    /// `2^E`, exactly representable (`FRACTIONAL_BITS + E` in `0..31`).
    #[inline(always)]
    pub const fn constant_pot<const E: i32>() -> Self {
        let offset = Self::FRACTIONAL_BITS + E;
        assert!(offset >= 0 && offset < 31, "2^E not representable");
        Self(1 << offset)
    }

    /// `self + other`, wrapping.
    #[inline(always)]
    pub const fn add(self, other: Self) -> Self {
        Self(self.0.wrapping_add(other.0))
    }

    /// `self - other`, wrapping.
    #[inline(always)]
    pub const fn sub(self, other: Self) -> Self {
        Self(self.0.wrapping_sub(other.0))
    }

    /// `-self`, wrapping (`-MIN == MIN`).
    #[inline(always)]
    pub const fn neg(self) -> Self {
        Self(self.0.wrapping_neg())
    }

    /// The product with `other`, with `K == I + J` integer bits.
    #[inline(always)]
    pub fn times<const J: i32, const K: i32>(self, other: FixedPoint<J>) -> FixedPoint<K> {
        const { assert!(K == I + J, "a product's integer bits are the factors' sum") };
        FixedPoint(saturating_rounding_doubling_high_mul(self.0, other.0))
    }

    /// The same value with `D` integer bits (gemmlowp's `Rescale<D>`): saturating when `D <
    /// I`, rounding when `D > I`.
    #[inline(always)]
    pub fn rescale<const D: i32>(self) -> FixedPoint<D> {
        FixedPoint(saturating_rounding_multiply_by_pot(self.0, I - D))
    }

    /// `self * 2^E` as a number with `D == I + E` integer bits: the raw value is unchanged
    /// (gemmlowp's `ExactMulByPot`).
    #[inline(always)]
    pub const fn exact_mul_by_pot<const E: i32, const D: i32>(self) -> FixedPoint<D> {
        const { assert!(D == I + E, "ExactMulByPot moves the binary point by E") };
        FixedPoint(self.0)
    }

    /// `self * 2^E` in the same format, saturating or rounding as
    /// [`saturating_rounding_multiply_by_pot`].
    #[inline(always)]
    pub fn saturating_rounding_multiply_by_pot<const E: i32>(self) -> Self {
        Self(saturating_rounding_multiply_by_pot(self.0, E))
    }
}

/// `(a + b) / 2` rounded half away from zero, without overflow (gemmlowp's
/// `RoundingHalfSum` for `int32`).
#[inline(always)]
pub fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let sum = i64::from(a) + i64::from(b);
    let sign = if sum >= 0 { 1 } else { -1 };
    // C++ and Rust both truncate the division toward zero.
    ((sum + sign) / 2) as i32
}

/// `x * 2^exponent`: for a positive exponent a left shift saturating to `i32::MIN` /
/// `i32::MAX`, for a negative one [`rounding_divide_by_pot`] (ties away from zero).
/// `exponent` in `-31..=31`; others are clamped to that range (gemmlowp only instantiates
/// it with compile-time exponents inside it).
#[inline(always)]
pub fn saturating_rounding_multiply_by_pot(x: i32, exponent: i32) -> i32 {
    let exponent = exponent.clamp(-31, 31);
    if exponent > 0 {
        let threshold = (1i32 << (31 - exponent)) - 1;
        if x > threshold {
            i32::MAX
        } else if x < -threshold {
            i32::MIN
        } else {
            x << exponent
        }
    } else if exponent < 0 {
        rounding_divide_by_pot(x, -exponent)
    } else {
        x
    }
}

/// A raw Q0.31 constant.
const fn q0(raw: i32) -> FixedPoint<0> {
    FixedPoint(raw)
}

/// `exp(a)` for `a` in `[-1/4, 0)`: the fourth-order Taylor polynomial around `-1/8`, as
/// gemmlowp's `exp_on_interval_between_negative_one_quarter_and_0_excl`.
pub fn exp_on_interval_between_negative_one_quarter_and_0_excl(a: FixedPoint<0>) -> FixedPoint<0> {
    // exp(-1/8) and 1/3 in Q0.31.
    let constant_term = q0(1_895_147_668);
    let constant_1_over_3 = q0(715_827_883);
    let x = a.add(FixedPoint::<0>::constant_pot::<-3>());
    let x2: FixedPoint<0> = x.times(x);
    let x3: FixedPoint<0> = x2.times(x);
    let x4: FixedPoint<0> = x2.times(x2);
    let x4_over_4 = x4.saturating_rounding_multiply_by_pot::<-2>();
    let inner: FixedPoint<0> = x4_over_4.add(x3).times(constant_1_over_3);
    let x4_over_24_plus_x3_over_6_plus_x2_over_2 =
        inner.add(x2).saturating_rounding_multiply_by_pot::<-1>();
    let tail: FixedPoint<0> = constant_term.times(x.add(x4_over_24_plus_x3_over_6_plus_x2_over_2));
    // gemmlowp's AddSaturatingIf16Bit: a plain addition for 32-bit raws.
    constant_term.add(tail)
}

/// `exp(-2^k)` in Q0.31 for `k = -2..=4`, the barrel shifter's multipliers.
const EXP_BARREL: [(i32, i32); 7] = [
    (-2, 1_672_461_947),
    (-1, 1_302_514_674),
    (0, 790_015_084),
    (1, 290_630_308),
    (2, 39_332_535),
    (3, 720_401),
    (4, 242),
];

/// `exp(a)` for `a <= 0` (gemmlowp's `exp_on_negative_values`): the fractional quarter by
/// [`exp_on_interval_between_negative_one_quarter_and_0_excl`], then one multiplication by
/// `exp(-2^k)` for each set bit `k` of the rest; below -32 the result is 0 (with more than
/// 5 integer bits), and `exp(0)` is the largest Q0.31 value. `I` at most 29.
pub fn exp_on_negative_values<const I: i32>(a: FixedPoint<I>) -> FixedPoint<0> {
    const { assert!(I <= 29, "exp_on_negative_values needs 2 fractional bits") };
    let fractional_bits = FixedPoint::<I>::FRACTIONAL_BITS;
    let one_quarter = FixedPoint::<I>::constant_pot::<-2>();
    let mask = one_quarter.raw() - 1;
    let a_mod_quarter_minus_one_quarter = FixedPoint::<I>(a.raw() & mask).sub(one_quarter);
    let mut result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        a_mod_quarter_minus_one_quarter.rescale::<0>(),
    );
    let remainder = a_mod_quarter_minus_one_quarter.sub(a).raw();
    for (exponent, multiplier) in EXP_BARREL {
        if I > exponent {
            let shift = fractional_bits + exponent;
            if remainder & (1 << shift) != 0 {
                result = result.times(q0(multiplier));
            }
        }
    }
    if I > 5 {
        let clamp = -(1i32 << (36 - I));
        if a.raw() < clamp {
            result = FixedPoint::zero();
        }
    }
    if a.raw() == 0 {
        result = FixedPoint::one();
    }
    result
}

/// Three Newton-Raphson steps toward `1 / half_denominator` from `48/17 - 32/17 * d`, in
/// Q2.29: the common core of gemmlowp's `one_over_one_plus_x_for_x_in_0_1` and
/// `one_minus_x_over_one_plus_x_for_x_in_0_1`.
fn newton_reciprocal(half_denominator: FixedPoint<0>) -> FixedPoint<2> {
    // 48/17 and -32/17 in Q2.29.
    let constant_48_over_17 = FixedPoint::<2>(1_515_870_810);
    let constant_neg_32_over_17 = FixedPoint::<2>(-1_010_580_540);
    let mut x = constant_48_over_17.add(half_denominator.times(constant_neg_32_over_17));
    for _ in 0..3 {
        let half_denominator_times_x: FixedPoint<2> = half_denominator.times(x);
        let one_minus_half_denominator_times_x =
            FixedPoint::<2>::one().sub(half_denominator_times_x);
        let step: FixedPoint<4> = x.times(one_minus_half_denominator_times_x);
        x = x.add(step.rescale::<2>());
    }
    x
}

/// `1 / (1 + a)` for `a` in `[0, 1)` (gemmlowp's `one_over_one_plus_x_for_x_in_0_1`).
pub fn one_over_one_plus_x_for_x_in_0_1(a: FixedPoint<0>) -> FixedPoint<0> {
    let half_denominator =
        FixedPoint::<0>(rounding_half_sum(a.raw(), FixedPoint::<0>::one().raw()));
    let x = newton_reciprocal(half_denominator);
    x.exact_mul_by_pot::<-1, 1>().rescale::<0>()
}

/// `(1 - a) / (1 + a)` for `a` in `[0, 1)` (gemmlowp's
/// `one_minus_x_over_one_plus_x_for_x_in_0_1`).
pub fn one_minus_x_over_one_plus_x_for_x_in_0_1(a: FixedPoint<0>) -> FixedPoint<0> {
    let half_denominator =
        FixedPoint::<0>(rounding_half_sum(a.raw(), FixedPoint::<0>::one().raw()));
    let x = newton_reciprocal(half_denominator);
    x.sub(FixedPoint::<2>::one()).rescale::<0>()
}

/// `1 / (1 + exp(-a))` (gemmlowp's `logistic`): computed for `|a|` as `1 / (1 + exp(-|a|))`
/// and mirrored (`1 - r`) for negative `a`; exactly one half at zero. `I` at most 29.
pub fn logistic<const I: i32>(a: FixedPoint<I>) -> FixedPoint<0> {
    let positive = a.raw() > 0;
    let abs_input = if positive { a } else { a.neg() };
    let result_if_positive =
        one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(abs_input.neg()));
    let result_if_negative = FixedPoint::<0>::one().sub(result_if_positive);
    if a.raw() == 0 {
        FixedPoint(1 << 30)
    } else if positive {
        result_if_positive
    } else {
        result_if_negative
    }
}

/// `tanh(a)` (gemmlowp's `tanh`): `(1 - exp(-2|a|)) / (1 + exp(-2|a|))` with the sign of
/// `a`; exactly zero at zero. `I` at most 28; `I1` must be `I + 1` (the integer bits of
/// `2a`, which stable Rust cannot compute from `I` in a type).
pub fn tanh<const I: i32, const I1: i32>(a: FixedPoint<I>) -> FixedPoint<0> {
    let negative = a.raw() < 0;
    let n = if negative { a } else { a.neg() };
    // neg_tanh_on_negative_values: 2n, read with one more integer bit, through exp.
    let t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(
        n.exact_mul_by_pot::<1, I1>(),
    ));
    if a.raw() == 0 {
        FixedPoint::zero()
    } else if negative {
        t.neg()
    } else {
        t
    }
}

/// TFLite's `log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>`: `ln(x)` of a Q12.19 `x`
/// (the sum of exponentials, at least 1) in Q5.26, accumulated in Q6.25, with gemmlowp's
/// constants and operation order.
pub fn log_x_for_x_greater_than_or_equal_to_1(input: i32) -> i32 {
    // Integer bits of the input (Q12.19), of the accumulator (Q6.25) and of the result
    // (Q5.26).
    const INPUT_BITS: i32 = 12;
    const ACCUM_BITS: i32 = 6;
    const OUTPUT_BITS: i32 = 5;
    let mul = saturating_rounding_doubling_high_mul;
    let log_2 = 1_488_522_236;
    let sqrt_sqrt_half = 1_805_811_301;
    let sqrt_half = 1_518_500_250;
    let one_quarter = 536_870_912;
    let alpha_n = 117_049_297;
    let alpha_d = 127_690_142;
    let alpha_i: i32 = 1_057_819_769;
    let alpha_f = 638_450_708;
    // Rescale<6> of a Q0.31 quarter.
    let shifted_quarter = saturating_rounding_multiply_by_pot(one_quarter, -ACCUM_BITS);

    let z_a = input;
    let z_a_headroom_plus_1 = (z_a as u32).leading_zeros() as i32;
    let r_a_tmp = saturating_rounding_multiply_by_pot(z_a, z_a_headroom_plus_1 - 1);
    let r_a_raw = saturating_rounding_multiply_by_pot(mul(r_a_tmp, sqrt_half), 1);
    let z_a_pow_2_adj =
        saturating_rounding_multiply_by_pot(INPUT_BITS - z_a_headroom_plus_1, 31 - ACCUM_BITS)
            .saturating_add(shifted_quarter);

    let z_b = mul(z_a, sqrt_half);
    let z_b_headroom = (z_b as u32).leading_zeros() as i32 - 1;
    let r_b_raw = saturating_rounding_multiply_by_pot(z_a, z_b_headroom);
    let z_b_pow_2_adj =
        saturating_rounding_multiply_by_pot(INPUT_BITS - z_b_headroom, 31 - ACCUM_BITS)
            .saturating_sub(shifted_quarter);

    let r = r_a_raw.min(r_b_raw);
    let z_pow_2_adj = z_a_pow_2_adj.max(z_b_pow_2_adj);

    let p = rounding_half_sum(r, sqrt_sqrt_half);
    let mut q = r.wrapping_sub(sqrt_sqrt_half);
    q = q.wrapping_add(q);

    let common_sq = mul(q, q);
    let num = mul(q, r).wrapping_add(mul(mul(q, common_sq), alpha_n));
    let denom_minus_one_0 = mul(
        p,
        alpha_i
            .wrapping_add(q)
            .wrapping_add(mul(alpha_d, common_sq)),
    )
    .wrapping_add(mul(alpha_f, q));
    let recip_denom =
        one_over_one_plus_x_for_x_in_0_1(FixedPoint::<0>::from_raw(denom_minus_one_0));

    // Rescale<6>(num): Q0.31 → Q6.25.
    let num_scaled = saturating_rounding_multiply_by_pot(num, -ACCUM_BITS);
    let sum = mul(z_pow_2_adj, log_2).wrapping_add(mul(num_scaled, recip_denom.raw()));
    // Rescale<5>: Q6.25 → Q5.26.
    saturating_rounding_multiply_by_pot(sum, ACCUM_BITS - OUTPUT_BITS)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    fn to_f64<const I: i32>(x: FixedPoint<I>) -> f64 {
        f64::from(x.raw()) / f64::from(1u32 << 31) * f64::from(1u32 << I)
    }

    fn from_f64<const I: i32>(x: f64) -> FixedPoint<I> {
        let scaled = libm::round(x * f64::from(1u32 << 31) / f64::from(1u32 << I));
        FixedPoint(scaled.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32)
    }

    /// A deterministic spread of raw values (xorshift), plus the edges.
    fn raws(n: usize) -> impl Iterator<Item = i32> {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let edges = [
            0,
            1,
            -1,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            1 << 30,
            -(1 << 30),
        ];
        edges.into_iter().chain((0..n).map(move |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as i32
        }))
    }

    #[test]
    fn constants_are_the_documented_values() {
        // Each barrel constant is round(exp(-2^k) * 2^31).
        for (k, raw) in EXP_BARREL {
            let want = libm::round(libm::exp(-libm::pow(2.0, f64::from(k))) * 2f64.powi(31));
            assert_eq!(f64::from(raw), want, "exp(-2^{k})");
        }
        assert_eq!(
            f64::from(1_895_147_668),
            libm::round(libm::exp(-1.0 / 8.0) * 2f64.powi(31))
        );
        assert_eq!(f64::from(715_827_883), libm::round(2f64.powi(31) / 3.0));
        assert_eq!(
            f64::from(1_515_870_810),
            libm::round(48.0 / 17.0 * 2f64.powi(29))
        );
        assert_eq!(
            f64::from(-1_010_580_540),
            libm::round(-32.0 / 17.0 * 2f64.powi(29))
        );
    }

    #[test]
    fn multiply_by_pot_saturates_and_rounds() {
        assert_eq!(saturating_rounding_multiply_by_pot(3, 2), 12);
        assert_eq!(saturating_rounding_multiply_by_pot(1 << 29, 2), i32::MAX);
        assert_eq!(
            saturating_rounding_multiply_by_pot((1 << 29) - 1, 2),
            ((1 << 29) - 1) * 4
        );
        assert_eq!(saturating_rounding_multiply_by_pot(-(1 << 29), 2), i32::MIN);
        assert_eq!(
            saturating_rounding_multiply_by_pot(-(1 << 29) + 1, 2),
            (-(1 << 29) + 1) * 4
        );
        assert_eq!(saturating_rounding_multiply_by_pot(6, -2), 2);
        assert_eq!(saturating_rounding_multiply_by_pot(-6, -2), -2);
        assert_eq!(saturating_rounding_multiply_by_pot(7, 0), 7);
        assert_eq!(rounding_half_sum(i32::MAX, i32::MAX), i32::MAX);
        assert_eq!(rounding_half_sum(1, 2), 2);
        assert_eq!(rounding_half_sum(-1, -2), -2);
        assert_eq!(FixedPoint::<0>::one().raw(), i32::MAX);
        assert_eq!(FixedPoint::<5>::one().raw(), 1 << 26);
        assert_eq!(FixedPoint::<2>::constant_pot::<-1>().raw(), 1 << 28);
    }

    #[test]
    fn rescale_moves_the_binary_point() {
        let x = from_f64::<5>(-3.25);
        assert_eq!(to_f64(x.rescale::<12>()), -3.25);
        assert_eq!(to_f64(x.rescale::<2>()), -3.25);
        // -3.25 does not fit two integer bits... but does fit two with saturation? No: Q2.29
        // holds [-4, 4), so it does; -5 saturates.
        assert_eq!(from_f64::<5>(-5.0).rescale::<2>().raw(), i32::MIN);
    }

    #[test]
    fn exp_matches_f64_on_negative_values() {
        // Tolerance: the quarter-interval polynomial is accurate to ~3e-7 (its x^5/120
        // term), each barrel multiplication adds at most one Q0.31 rounding.
        for raw in raws(20_000) {
            let a = FixedPoint::<5>(if raw > 0 { raw.wrapping_neg() } else { raw });
            let got = to_f64(exp_on_negative_values(a));
            let want = libm::exp(to_f64(a));
            assert!(
                (got - want).abs() < 1e-6,
                "exp({}) = {got}, want {want}",
                to_f64(a)
            );
        }
        assert_eq!(exp_on_negative_values(FixedPoint::<5>(0)).raw(), i32::MAX);
        // With 12 integer bits inputs below -32 come out exactly zero.
        assert_eq!(exp_on_negative_values(from_f64::<12>(-40.0)).raw(), 0);
        for x in [-0.001, -0.25, -1.0, -2.5, -7.9, -16.0, -31.0] {
            let got = to_f64(exp_on_negative_values(from_f64::<12>(x)));
            assert!((got - libm::exp(x)).abs() < 2e-6, "{x}: {got}");
            let got = to_f64(exp_on_negative_values(from_f64::<0>(x.max(-1.0))));
            assert!((got - libm::exp(x.max(-1.0))).abs() < 1e-6, "{x}: {got}");
        }
    }

    #[test]
    fn reciprocals_match_f64() {
        // Tolerance 1e-8: three Newton steps from a 1/17-accurate start leave ~1e-10, the
        // rest is Q0.31 rounding.
        for raw in raws(20_000) {
            let a = FixedPoint::<0>(raw & i32::MAX);
            let x = to_f64(a);
            let got = to_f64(one_over_one_plus_x_for_x_in_0_1(a));
            assert!((got - 1.0 / (1.0 + x)).abs() < 1e-8, "1/(1+{x}) = {got}");
            let got = to_f64(one_minus_x_over_one_plus_x_for_x_in_0_1(a));
            assert!(
                ((got - (1.0 - x) / (1.0 + x)).abs()) < 1e-8,
                "(1-{x})/(1+{x}) = {got}"
            );
        }
    }

    #[test]
    fn logistic_and_tanh_match_f64() {
        // Tolerance 2e-6: exp's error, scaled by at most 1 (logistic) or 2 (tanh).
        for raw in raws(20_000) {
            let a = FixedPoint::<4>(raw);
            let x = to_f64(a);
            let got = to_f64(logistic(a));
            assert!(
                (got - 1.0 / (1.0 + libm::exp(-x))).abs() < 2e-6,
                "logistic({x}) = {got}"
            );
            let got = to_f64(tanh::<4, 5>(a));
            assert!((got - libm::tanh(x)).abs() < 2e-6, "tanh({x}) = {got}");
        }
        assert_eq!(logistic(FixedPoint::<4>(0)).raw(), 1 << 30);
        assert_eq!(tanh::<4, 5>(FixedPoint::<4>(0)).raw(), 0);
        // Odd / mirror symmetry holds exactly in gemmlowp's construction.
        for raw in raws(2_000).filter(|&r| r != i32::MIN) {
            let a = FixedPoint::<4>(raw);
            assert_eq!(
                tanh::<4, 5>(a.neg()).raw(),
                tanh::<4, 5>(a).raw().wrapping_neg()
            );
            if raw != 0 {
                assert_eq!(logistic(a.neg()).raw(), i32::MAX - logistic(a).raw());
            }
        }
    }

    #[test]
    fn logistic_and_tanh_are_monotonic() {
        let mut prev = (i32::MIN, i32::MIN);
        let mut raw = -(1i64 << 31);
        while raw < (1i64 << 31) {
            let a = FixedPoint::<4>(raw as i32);
            let now = (logistic(a).raw(), tanh::<4, 5>(a).raw());
            assert!(now.0 >= prev.0 && now.1 >= prev.1, "at raw {raw}");
            prev = now;
            raw += 1 << 16;
        }
    }

    #[test]
    fn log_matches_the_real_function() {
        // Q12.19 inputs from 1 to 4095.
        for x in [1.0f64, 1.5, 2.0, core::f64::consts::E, 10.0, 100.0, 4000.0] {
            let raw = (x * f64::from(1u32 << 19)) as i32;
            let got =
                f64::from(log_x_for_x_greater_than_or_equal_to_1(raw)) / f64::from(1u32 << 26);
            assert!((got - x.ln()).abs() < 1e-6, "ln {x}: {got}");
        }
    }
}
