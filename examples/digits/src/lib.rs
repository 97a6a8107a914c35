//! Ember digits demo: train a small MLP on the UCI handwritten-digits set on the host, then
//! check inference against a float64 reference.
//!
//! - [`data`]: loading `data/digits.csv.gz`, the stratified train / held-out split, features.
//! - [`rng`]: the seeded SplitMix64 PRNG used for init and shuffling.
//! - [`mlp`]: the 64→32→10 network's weights ([`Mlp`]).
//! - [`train`](mod@train): deterministic mini-batch Adam training.
//! - [`reference`](mod@reference): `f64` and `f32` forward passes.
//! - [`eval`]: scoring predictions;
//! - [`model`]: the network as an Ember module description;
//! - [`runtime`]: the packed module run on the local-CPU driver through a `Session`.
//!
//! ```no_run
//! use ember_digits::{evaluate, predict_f64, train, Digits, TrainConfig};
//!
//! let digits = Digits::load_default()?;
//! let (train_half, held_out) = digits.split();
//! let mlp = train(&train_half, &TrainConfig::default(), |_, _, _, _| {});
//! println!("held-out: {}", evaluate(&held_out, |x| predict_f64(&mlp, x)));
//! # Ok::<(), String>(())
//! ```

pub mod data;
pub mod eval;
pub mod mlp;
pub mod model;
pub mod reference;
pub mod rng;
pub mod runtime;
pub mod train;

#[cfg(test)]
mod test_support;

pub use data::{features, load, Digits, Split};
pub use eval::{evaluate, predictions, score, Accuracy};
pub use mlp::{Mlp, HIDDEN, INPUTS, OUTPUTS};
pub use reference::{argmax, logits_f32, logits_f64, predict_f32, predict_f64, probabilities_f64};
pub use rng::SplitMix64;
pub use train::{train, TrainConfig};
