//! Reference forward passes of a trained [`Mlp`].
//!
//! The `f64` pass casts every `f32` weight and input to `f64` and computes in `f64`: the
//! "ground truth" a runtime's `f32` result is compared against. The `f32` pass mimics what a
//! straightforward runtime computing in `f32` does (see [`logits_f32`]).

use crate::mlp::{Mlp, HIDDEN, INPUTS, OUTPUTS};

/// Index of the largest value; the lowest index wins ties. Comparisons use `>`, so a NaN is
/// never chosen over an earlier value. Returns 0 for an empty slice.
pub fn argmax<T: PartialOrd>(values: &[T]) -> usize {
    let mut best = 0;
    for (i, value) in values.iter().enumerate().skip(1) {
        if *value > values[best] {
            best = i;
        }
    }
    best
}

/// Output logits, computed in `f64` from the `f32` weights.
pub fn logits_f64(mlp: &Mlp, x: &[f32; INPUTS]) -> [f64; OUTPUTS] {
    let mut hidden = [0.0f64; HIDDEN];
    for (n, h) in hidden.iter_mut().enumerate() {
        let mut acc = f64::from(mlp.b1[n]);
        for (k, &xk) in x.iter().enumerate() {
            acc += f64::from(xk) * f64::from(mlp.w1[k * HIDDEN + n]);
        }
        *h = acc.max(0.0);
    }
    let mut logits = [0.0f64; OUTPUTS];
    for (n, logit) in logits.iter_mut().enumerate() {
        let mut acc = f64::from(mlp.b2[n]);
        for (k, &hk) in hidden.iter().enumerate() {
            acc += hk * f64::from(mlp.w2[k * OUTPUTS + n]);
        }
        *logit = acc;
    }
    logits
}

/// Class probabilities: the numerically stable softmax of [`logits_f64`].
pub fn probabilities_f64(mlp: &Mlp, x: &[f32; INPUTS]) -> [f64; OUTPUTS] {
    softmax_f64(&logits_f64(mlp, x))
}

/// Predicted class: the [`argmax`] of [`logits_f64`] (lowest index on ties).
pub fn predict_f64(mlp: &Mlp, x: &[f32; INPUTS]) -> u8 {
    argmax(&logits_f64(mlp, x)) as u8
}

/// Output logits computed entirely in `f32`, as a plain runtime would: for each layer and
/// output `n`, an accumulator starts at `0.0`, adds `x[k] * w[k * N + n]` for `k` ascending
/// (separate multiply and add, no FMA), then adds the bias; the hidden layer then applies
/// ReLU (`max(0.0)`). A runtime that sums in another order or fuses multiply-adds may differ
/// from this in the last bits.
pub fn logits_f32(mlp: &Mlp, x: &[f32; INPUTS]) -> [f32; OUTPUTS] {
    let mut hidden = [0.0f32; HIDDEN];
    for (n, h) in hidden.iter_mut().enumerate() {
        let mut acc = 0.0f32;
        for (k, &xk) in x.iter().enumerate() {
            acc += xk * mlp.w1[k * HIDDEN + n];
        }
        *h = (acc + mlp.b1[n]).max(0.0);
    }
    let mut logits = [0.0f32; OUTPUTS];
    for (n, logit) in logits.iter_mut().enumerate() {
        let mut acc = 0.0f32;
        for (k, &hk) in hidden.iter().enumerate() {
            acc += hk * mlp.w2[k * OUTPUTS + n];
        }
        *logit = acc + mlp.b2[n];
    }
    logits
}

/// Predicted class from [`logits_f32`] (lowest index on ties).
pub fn predict_f32(mlp: &Mlp, x: &[f32; INPUTS]) -> u8 {
    argmax(&logits_f32(mlp, x)) as u8
}

/// Numerically stable softmax: `exp(l - max) / Σ exp(l - max)`.
pub fn softmax_f64(logits: &[f64; OUTPUTS]) -> [f64; OUTPUTS] {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps = logits.map(|l| (l - max).exp());
    let sum: f64 = exps.iter().sum();
    exps.map(|e| e / sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::features;
    use crate::test_support::{held_out, trained};

    #[test]
    fn argmax_prefers_lowest_index_on_ties() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[5.0f32; 4]), 0);
        assert_eq!(argmax(&[0.0, f64::NAN, 1.0]), 2);
        assert_eq!(argmax::<f64>(&[]), 0);
    }

    #[test]
    fn hand_built_network() {
        // Hidden unit n copies input n (n < 10) plus 0.5; output n reads hidden unit n.
        let mut mlp = Mlp::zeros();
        for n in 0..OUTPUTS {
            mlp.w1[n * HIDDEN + n] = 1.0;
            mlp.b1[n] = 0.5;
            mlp.w2[n * OUTPUTS + n] = 2.0;
        }
        mlp.b1[3] = -10.0; // ReLU clips unit 3 to zero.
        mlp.b2[0] = 0.25;
        let mut x = [0.0f32; INPUTS];
        x[7] = 1.0;
        let expected = [1.25, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 3.0, 1.0, 1.0];
        assert_eq!(logits_f64(&mlp, &x), expected);
        assert_eq!(logits_f32(&mlp, &x), expected.map(|v| v as f32));
        assert_eq!(predict_f64(&mlp, &x), 7);
        assert_eq!(predict_f32(&mlp, &x), 7);
        let p = probabilities_f64(&mlp, &x);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(argmax(&p), 7);
    }

    #[test]
    fn f32_and_f64_agree_on_held_out() {
        let mlp = trained();
        let held_out = held_out();
        let mut agree = 0;
        let mut max_diff = 0.0f64;
        for image in &held_out.images {
            let x = features(image);
            let l64 = logits_f64(mlp, &x);
            let l32 = logits_f32(mlp, &x);
            for (a, b) in l64.iter().zip(&l32) {
                max_diff = max_diff.max((a - f64::from(*b)).abs());
            }
            if predict_f64(mlp, &x) == predict_f32(mlp, &x) {
                agree += 1;
            }
        }
        let fraction = agree as f64 / held_out.len() as f64;
        assert!(fraction >= 0.999, "agreement {agree}/{}", held_out.len());
        assert!(
            max_diff < 1e-3,
            "max |f64 - f32| logit difference {max_diff}"
        );
    }
}
