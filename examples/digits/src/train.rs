//! Deterministic training of the [`Mlp`] on the host.
//!
//! Mini-batch Adam on the mean softmax cross-entropy, `f32` arithmetic throughout, one thread,
//! fixed loop orders, and a seeded [`SplitMix64`] for the initial weights and each epoch's
//! shuffle: the same split and [`TrainConfig`] give bit-identical weights on every run (on a
//! given platform; `f32::exp` comes from the platform's math library).

use crate::data::{Split, PIXELS};
use crate::mlp::{Mlp, HIDDEN, INPUTS, OUTPUTS};
use crate::reference::argmax;
use crate::rng::SplitMix64;

/// Training hyperparameters.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Passes over the training half.
    pub epochs: usize,
    /// Samples per Adam step (the last batch of an epoch may be smaller).
    pub batch_size: usize,
    /// Adam step size at the first epoch.
    pub learning_rate: f32,
    /// Step size at the last epoch; it falls linearly from `learning_rate` in between.
    pub final_learning_rate: f32,
    /// Adam's first-moment decay (β₁).
    pub beta1: f32,
    /// Adam's second-moment decay (β₂).
    pub beta2: f32,
    /// Adam's ε.
    pub epsilon: f32,
    /// Decoupled (AdamW-style) weight decay per step, times the step size; weights only.
    pub weight_decay: f32,
    /// Seed for the initial weights and the shuffles.
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            epochs: 40,
            batch_size: 32,
            learning_rate: 0.01,
            final_learning_rate: 0.001,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            weight_decay: 1e-4,
            seed: 0x00E3_B3E2_D161_7500,
        }
    }
}

/// Initial weights drawn from `rng`: He-uniform `w1` (`±√(6/64)`, suits the ReLU layer),
/// Glorot-uniform `w2` (`±√(6/(32+10))`), zero biases. `w1` is filled first, in index order.
pub fn initial_weights(rng: &mut SplitMix64) -> Mlp {
    let mut mlp = Mlp::zeros();
    let he = (6.0 / INPUTS as f64).sqrt();
    for w in &mut mlp.w1 {
        *w = rng.uniform(-he, he) as f32;
    }
    let glorot = (6.0 / (HIDDEN + OUTPUTS) as f64).sqrt();
    for w in &mut mlp.w2 {
        *w = rng.uniform(-glorot, glorot) as f32;
    }
    mlp
}

/// Trains an [`Mlp`] on `train`.
///
/// After each epoch it calls `progress(epoch, epochs, loss, train_accuracy)` with `epoch`
/// counting from 1, `loss` the mean cross-entropy and `train_accuracy` the fraction in `[0, 1]`
/// of samples classified correctly, both measured on each mini-batch just before its update.
///
/// The procedure: `rng = SplitMix64::new(config.seed)`; [`initial_weights`]; then per epoch a
/// Fisher–Yates shuffle of the sample order with `rng`, and one Adam step per consecutive
/// `batch_size` samples of that order on the batch's mean gradient.
///
/// # Panics
///
/// If `train` is empty or `config.batch_size` is 0.
pub fn train(
    train: &Split,
    config: &TrainConfig,
    mut progress: impl FnMut(usize, usize, f64, f64),
) -> Mlp {
    assert!(!train.is_empty(), "train: no training samples");
    assert!(config.batch_size > 0, "train: batch_size must be positive");

    let inputs = train.features();
    let labels = &train.labels;
    let mut rng = SplitMix64::new(config.seed);
    let mut mlp = initial_weights(&mut rng);
    let mut grads = Mlp::zeros();
    let mut adam = Adam::new(config);
    let mut order: Vec<usize> = (0..train.len()).collect();

    for epoch in 0..config.epochs {
        let learning_rate = learning_rate(config, epoch);
        rng.shuffle(&mut order);
        let mut loss_sum = 0.0f64;
        let mut correct = 0usize;
        for batch in order.chunks(config.batch_size) {
            zero(&mut grads);
            let scale = 1.0 / batch.len() as f32;
            for &i in batch {
                let (loss, hit) = accumulate(&mlp, &inputs[i], labels[i], scale, &mut grads);
                loss_sum += loss;
                correct += usize::from(hit);
            }
            adam.step(&mut mlp, &grads, learning_rate);
        }
        let n = train.len() as f64;
        progress(epoch + 1, config.epochs, loss_sum / n, correct as f64 / n);
    }
    mlp
}

fn learning_rate(config: &TrainConfig, epoch: usize) -> f32 {
    if config.epochs <= 1 {
        return config.learning_rate;
    }
    let t = epoch as f32 / (config.epochs - 1) as f32;
    // Written so both ends are exact: t = 0 gives `learning_rate`, t = 1 `final_learning_rate`.
    config.learning_rate * (1.0 - t) + config.final_learning_rate * t
}

fn zero(mlp: &mut Mlp) {
    for tensor in [&mut mlp.w1, &mut mlp.b1, &mut mlp.w2, &mut mlp.b2] {
        tensor.fill(0.0);
    }
}

/// Forward and backward pass of one sample: adds `scale ×` its gradient to `grads` and returns
/// its cross-entropy loss and whether the prediction was right.
fn accumulate(mlp: &Mlp, x: &[f32; PIXELS], label: u8, scale: f32, grads: &mut Mlp) -> (f64, bool) {
    // Forward. Zero inputs (about half the pixels) and inactive hidden units contribute
    // nothing, so they are skipped in both passes.
    let mut hidden: [f32; HIDDEN] = mlp.b1[..].try_into().expect("b1 shape");
    for (&xk, row) in x.iter().zip(mlp.w1.chunks_exact(HIDDEN)) {
        if xk != 0.0 {
            for (h, &w) in hidden.iter_mut().zip(row) {
                *h += xk * w;
            }
        }
    }
    for h in &mut hidden {
        *h = h.max(0.0);
    }
    let mut logits: [f32; OUTPUTS] = mlp.b2[..].try_into().expect("b2 shape");
    for (&hk, row) in hidden.iter().zip(mlp.w2.chunks_exact(OUTPUTS)) {
        if hk > 0.0 {
            for (l, &w) in logits.iter_mut().zip(row) {
                *l += hk * w;
            }
        }
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps = logits.map(|l| (l - max).exp());
    let sum: f32 = exps.iter().sum();
    let label = usize::from(label);
    let loss = f64::from(sum).ln() - f64::from(logits[label] - max);
    let hit = argmax(&logits) == label;

    // Backward: d loss / d logits = softmax - one_hot.
    let mut d_logits = exps.map(|e| e / sum * scale);
    d_logits[label] -= scale;
    for (g, &d) in grads.b2.iter_mut().zip(&d_logits) {
        *g += d;
    }
    let mut d_hidden = [0.0f32; HIDDEN];
    for (((&hk, dh), w_row), g_row) in hidden
        .iter()
        .zip(&mut d_hidden)
        .zip(mlp.w2.chunks_exact(OUTPUTS))
        .zip(grads.w2.chunks_exact_mut(OUTPUTS))
    {
        if hk > 0.0 {
            let mut acc = 0.0f32;
            for ((g, &w), &d) in g_row.iter_mut().zip(w_row).zip(&d_logits) {
                *g += hk * d;
                acc += w * d;
            }
            *dh = acc;
        }
    }
    for (g, &d) in grads.b1.iter_mut().zip(&d_hidden) {
        *g += d;
    }
    for (&xk, g_row) in x.iter().zip(grads.w1.chunks_exact_mut(HIDDEN)) {
        if xk != 0.0 {
            for (g, &d) in g_row.iter_mut().zip(&d_hidden) {
                *g += xk * d;
            }
        }
    }
    (loss, hit)
}

/// Adam state: first and second moments per parameter, laid out like the [`Mlp`].
struct Adam {
    m: Mlp,
    v: Mlp,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    weight_decay: f32,
    /// β₁ᵗ and β₂ᵗ, kept as running products (no `powi`).
    beta1_t: f64,
    beta2_t: f64,
}

impl Adam {
    fn new(config: &TrainConfig) -> Self {
        Self {
            m: Mlp::zeros(),
            v: Mlp::zeros(),
            beta1: config.beta1,
            beta2: config.beta2,
            epsilon: config.epsilon,
            weight_decay: config.weight_decay,
            beta1_t: 1.0,
            beta2_t: 1.0,
        }
    }

    fn step(&mut self, mlp: &mut Mlp, grads: &Mlp, learning_rate: f32) {
        self.beta1_t *= f64::from(self.beta1);
        self.beta2_t *= f64::from(self.beta2);
        let step =
            (f64::from(learning_rate) * (1.0 - self.beta2_t).sqrt() / (1.0 - self.beta1_t)) as f32;
        let decay = 1.0 - learning_rate * self.weight_decay;
        let tensors = [
            (
                &mut mlp.w1,
                &grads.w1,
                &mut self.m.w1,
                &mut self.v.w1,
                decay,
            ),
            (&mut mlp.b1, &grads.b1, &mut self.m.b1, &mut self.v.b1, 1.0),
            (
                &mut mlp.w2,
                &grads.w2,
                &mut self.m.w2,
                &mut self.v.w2,
                decay,
            ),
            (&mut mlp.b2, &grads.b2, &mut self.m.b2, &mut self.v.b2, 1.0),
        ];
        for (params, grads, m, v, decay) in tensors {
            for (((p, &g), m), v) in params.iter_mut().zip(grads).zip(m).zip(v) {
                *m = self.beta1 * *m + (1.0 - self.beta1) * g;
                *v = self.beta2 * *v + (1.0 - self.beta2) * g * g;
                *p = *p * decay - step * *m / (v.sqrt() + self.epsilon);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::evaluate;
    use crate::reference::predict_f64;
    use crate::test_support::{held_out, train_half, trained};

    fn subset(split: &Split, n: usize) -> Split {
        Split {
            indices: split.indices[..n].to_vec(),
            images: split.images[..n].to_vec(),
            labels: split.labels[..n].to_vec(),
        }
    }

    #[test]
    fn training_is_deterministic() {
        let small = subset(train_half(), 200);
        let config = TrainConfig {
            epochs: 3,
            ..TrainConfig::default()
        };
        let mut log_a = Vec::new();
        let mut log_b = Vec::new();
        let a = train(&small, &config, |e, n, loss, acc| {
            log_a.push((e, n, loss, acc))
        });
        let b = train(&small, &config, |e, n, loss, acc| {
            log_b.push((e, n, loss, acc))
        });
        let bits = |m: &Mlp| -> Vec<u32> {
            [&m.w1, &m.b1, &m.w2, &m.b2]
                .into_iter()
                .flatten()
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(bits(&a), bits(&b));
        assert_eq!(log_a, log_b);
        assert_eq!(
            log_a.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(),
            [(1, 3), (2, 3), (3, 3)]
        );
        assert_ne!(
            a,
            initial_weights(&mut SplitMix64::new(config.seed)),
            "weights moved"
        );

        let other_seed = TrainConfig {
            seed: config.seed + 1,
            ..config
        };
        assert_ne!(bits(&a), bits(&train(&small, &other_seed, |_, _, _, _| {})));
    }

    #[test]
    fn initial_weights_within_limits() {
        let mlp = initial_weights(&mut SplitMix64::new(1));
        assert_eq!(mlp.validate(), Ok(()));
        let he = (6.0f32 / 64.0).sqrt();
        let glorot = (6.0f32 / 42.0).sqrt();
        assert!(mlp.w1.iter().all(|w| w.abs() <= he));
        assert!(mlp.w2.iter().all(|w| w.abs() <= glorot));
        assert!(mlp.b1.iter().chain(&mlp.b2).all(|&b| b == 0.0));
    }

    #[test]
    fn learning_rate_falls_linearly() {
        let config = TrainConfig {
            epochs: 5,
            learning_rate: 0.01,
            final_learning_rate: 0.002,
            ..TrainConfig::default()
        };
        assert_eq!(learning_rate(&config, 0), 0.01);
        assert!((learning_rate(&config, 2) - 0.006).abs() < 1e-9);
        assert_eq!(learning_rate(&config, 4), 0.002);
    }

    #[test]
    fn held_out_accuracy_at_least_95_percent() {
        let mlp = trained();
        assert_eq!(mlp.validate(), Ok(()));
        let accuracy = evaluate(held_out(), |x| predict_f64(mlp, x));
        assert!(accuracy.fraction() >= 0.95, "held-out accuracy {accuracy}");
    }

    #[test]
    #[should_panic(expected = "no training samples")]
    fn empty_split_panics() {
        train(&Split::default(), &TrainConfig::default(), |_, _, _, _| {});
    }
}
