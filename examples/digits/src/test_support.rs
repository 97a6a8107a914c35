//! Shared fixtures for the unit tests: the data set and one full training run, computed once.

use std::sync::OnceLock;

use crate::data::{Digits, Split};
use crate::mlp::Mlp;
use crate::train::{train, TrainConfig};

fn halves() -> &'static (Split, Split) {
    static HALVES: OnceLock<(Split, Split)> = OnceLock::new();
    HALVES.get_or_init(|| Digits::load_default().expect("load data").split())
}

/// The training half of the shipped data.
pub fn train_half() -> &'static Split {
    &halves().0
}

/// The held-out half of the shipped data.
pub fn held_out() -> &'static Split {
    &halves().1
}

/// The model trained on [`train_half`] with the default config.
pub fn trained() -> &'static Mlp {
    static MLP: OnceLock<Mlp> = OnceLock::new();
    MLP.get_or_init(|| train(train_half(), &TrainConfig::default(), |_, _, _, _| {}))
}
