//! The single-precision C library functions TFLM's float kernels call (`std::exp` and
//! `std::tanh` on `float`, i.e. `expf` and `tanhf`), `no_std`.
//!
//! TFLM's result depends on the C library it is linked with. These are chosen to agree with
//! glibc's as often as possible (they are measured against the host's glibc 2.36 in the
//! tests), and are always within an ulp or so of the true value, far inside the 1e-5
//! relative tolerance float kernels are held to:
//!
//! - [`expf`] rounds the double-precision `exp` to `f32`: correctly rounded except in rare
//!   double-rounding cases. glibc's `expf` (ARM's optimized-routines algorithm, also in
//!   newlib and musl) is off by at most 0.502 ulp, so the two differ only near halfway
//!   cases: about 1 input in 10^4 over `[-100, 20]`.
//! - [`tanhf`] is the single-precision Sun/musl algorithm, the one glibc 2.36's `tanhf`
//!   descends from; they differ by one ulp on about 1 input in 100.

/// `e^x` in single precision (see the module notes on agreement with C's `expf`).
#[inline]
pub fn expf(x: f32) -> f32 {
    libm::exp(f64::from(x)) as f32
}

/// `tanh(x)` in single precision (see the module notes on agreement with C's `tanhf`).
#[inline]
pub fn tanhf(x: f32) -> f32 {
    libm::tanhf(x)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// Walks `[lo, hi]` in steps of `step` ulps (through zero), counting disagreements with
    /// the host C library (std's `f32::exp` / `f32::tanh` call it).
    fn mismatches(lo: f32, hi: f32, step: u32, f: fn(f32) -> f32, c: fn(f32) -> f32) -> (u32, u32) {
        let (mut n, mut bad) = (0, 0);
        let mut x = lo;
        while x <= hi {
            n += 1;
            let (got, want) = (f(x), c(x));
            if got.to_bits() != want.to_bits() {
                bad += 1;
                assert!(
                    ((got - want) / want).abs() <= 2.0 * f32::EPSILON,
                    "{x}: {got} vs {want}"
                );
            }
            x = if x < 0.0 {
                let next = f32::from_bits(x.to_bits().saturating_sub(step));
                if next.to_bits() <= (-0.0f32).to_bits() {
                    0.0
                } else {
                    next
                }
            } else if x == 0.0 {
                f32::MIN_POSITIVE
            } else {
                f32::from_bits(x.to_bits() + step)
            };
        }
        (n, bad)
    }

    #[test]
    fn expf_agrees_with_the_c_library() {
        let (n, bad) = mismatches(-104.0, 88.0, 997, expf, f32::exp);
        // Measured on glibc 2.36: ~1e-4 of the inputs; allow 1e-3.
        assert!(bad * 1000 <= n, "{bad} of {n} differ");
        assert_eq!(expf(0.0), 1.0);
        assert_eq!(expf(-200.0), 0.0);
        assert_eq!(expf(100.0), f32::INFINITY);
        assert!(expf(f32::NAN).is_nan());
    }

    #[test]
    fn tanhf_agrees_with_the_c_library() {
        let (n, bad) = mismatches(-12.0, 12.0, 997, tanhf, f32::tanh);
        // Measured on glibc 2.36: ~1e-2 of the inputs; allow 3e-2.
        assert!(bad * 100 <= 3 * n, "{bad} of {n} differ");
        assert_eq!(tanhf(0.0), 0.0);
        assert_eq!(tanhf(20.0), 1.0);
        assert_eq!(tanhf(-20.0), -1.0);
    }
}
