//! The trained network's weights: a 64→32→10 multilayer perceptron.
//!
//! `hidden = relu(x · w1 + b1)`, `logits = hidden · w2 + b2`, `probabilities = softmax(logits)`.
//! Weight matrices are row-major `K×N` (inputs × outputs), so the weight from input `k` to
//! output `n` of a layer with `N` outputs sits at `w[k * N + n]`, the layout a GEMM computing
//! `x[1×K] · w[K×N]` reads directly.

use crate::data::{CLASSES, PIXELS};

/// Inputs (pixels).
pub const INPUTS: usize = PIXELS;
/// Hidden units.
pub const HIDDEN: usize = 32;
/// Outputs (classes).
pub const OUTPUTS: usize = CLASSES;

/// Weights and biases of the 64→32→10 MLP (ReLU hidden layer, softmax output).
#[derive(Clone, Debug, PartialEq)]
pub struct Mlp {
    /// Input→hidden weights, `INPUTS × HIDDEN` row-major: `w1[k * HIDDEN + n]`.
    pub w1: Vec<f32>,
    /// Hidden biases, `HIDDEN` values.
    pub b1: Vec<f32>,
    /// Hidden→output weights, `HIDDEN × OUTPUTS` row-major: `w2[k * OUTPUTS + n]`.
    pub w2: Vec<f32>,
    /// Output biases, `OUTPUTS` values.
    pub b2: Vec<f32>,
}

impl Mlp {
    /// Total number of parameters (2,410).
    pub const PARAMETERS: usize = INPUTS * HIDDEN + HIDDEN + HIDDEN * OUTPUTS + OUTPUTS;

    /// All weights and biases zero, correctly shaped.
    pub fn zeros() -> Self {
        Self {
            w1: vec![0.0; INPUTS * HIDDEN],
            b1: vec![0.0; HIDDEN],
            w2: vec![0.0; HIDDEN * OUTPUTS],
            b2: vec![0.0; OUTPUTS],
        }
    }

    /// FNV-1a hash of the bit patterns of `w1`, `b1`, `w2`, `b2` (in that order): equal
    /// fingerprints mean (barring collisions) bit-identical weights, handy to compare runs.
    pub fn fingerprint(&self) -> u64 {
        let mut hash = 0xCBF2_9CE4_8422_2325u64;
        for value in [&self.w1, &self.b1, &self.w2, &self.b2]
            .into_iter()
            .flatten()
        {
            for byte in value.to_bits().to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
            }
        }
        hash
    }

    /// Checks every tensor has its documented length and every value is finite.
    pub fn validate(&self) -> Result<(), String> {
        let tensors = [
            ("w1", &self.w1, INPUTS * HIDDEN),
            ("b1", &self.b1, HIDDEN),
            ("w2", &self.w2, HIDDEN * OUTPUTS),
            ("b2", &self.b2, OUTPUTS),
        ];
        for (name, values, expected) in tensors {
            if values.len() != expected {
                return Err(format!(
                    "{name} has {} values, expected {expected}",
                    values.len()
                ));
            }
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(format!("{name}[{i}] is not finite: {}", values[i]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_is_well_shaped() {
        let mlp = Mlp::zeros();
        assert_eq!(mlp.validate(), Ok(()));
        let total = mlp.w1.len() + mlp.b1.len() + mlp.w2.len() + mlp.b2.len();
        assert_eq!(total, Mlp::PARAMETERS);
        assert_eq!(Mlp::PARAMETERS, 2410);
    }

    #[test]
    fn fingerprint_sees_every_bit() {
        let zeros = Mlp::zeros();
        let mut negative_zero = Mlp::zeros();
        negative_zero.b2[9] = -0.0;
        assert_ne!(zeros.fingerprint(), negative_zero.fingerprint());
        assert_eq!(zeros.fingerprint(), Mlp::zeros().fingerprint());
    }

    #[test]
    fn validate_rejects_bad_shapes_and_values() {
        let mut mlp = Mlp::zeros();
        mlp.b2.pop();
        assert!(mlp.validate().unwrap_err().starts_with("b2 has 9"));
        let mut mlp = Mlp::zeros();
        mlp.w2[3] = f32::NAN;
        assert!(mlp
            .validate()
            .unwrap_err()
            .starts_with("w2[3] is not finite"));
    }
}
