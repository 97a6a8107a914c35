// Shared by tanh_f32 and gelu_tanh_f32: `tanh_of(x)`, close to `tanhf`. Near zero,
// where `(e^2x - 1) / (e^2x + 1)` would lose digits to cancellation, the odd series to x^9
// (its error below 1e-12 of the value for |x| < 0.125); beyond, that quotient with the
// device's `exp`; ±1 from |x| > 9 (within 6e-8 of `tanhf` there). NaN passes through
// where the device keeps NaN (these modules do not ask for `SignedZeroInfNanPreserve`).

fn tanh_of(x: f32) -> f32 {
    let a = abs(x);
    if a < 0.125 {
        let x2 = x * x;
        return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0
            + x2 * (62.0 / 2835.0)))));
    }
    if a > 9.0 {
        return sign(x);
    }
    let e = exp(2.0 * a);
    let t = (e - 1.0) / (e + 1.0);
    return select(t, -t, x < 0.0);
}
