//! Bad bytes never panic the importer: single-byte flips all over the reference models,
//! random truncations and flips, random bytes. What it accepts still plans.

mod common;

use ember_import::{Graph, DEFAULT_ALIGNMENT};
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Parses (and, where accepted, plans) `bytes`; a panic is reported with `what`.
fn survive(bytes: &[u8], what: impl Fn() -> String) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Ok(graph) = Graph::parse(bytes) {
            let plan = graph.plan(DEFAULT_ALIGNMENT).expect("a parsed graph plans");
            common::check_plan(&graph, &plan);
        }
    }));
    if outcome.is_err() {
        panic!("the importer panicked on {}", what());
    }
}

#[test]
fn single_byte_flips() {
    let Some(models) = common::all_models() else {
        return;
    };
    for (reference, bytes) in &models {
        // Every byte of the first 1 KiB (the root table and vtables of most files) and 2,000
        // more spread over the rest, flipped whole at even positions and by one bit at odd.
        let step = (bytes.len() / 2_000).max(1);
        let positions = (0..bytes.len().min(1_024)).chain((1_024..bytes.len()).step_by(step));
        for at in positions {
            let mask = if at % 2 == 0 { 0xff } else { 1 << (at % 8) };
            let mut flipped = bytes.clone();
            flipped[at] ^= mask;
            survive(&flipped, || {
                format!("{} with byte {at} ^ {mask:#x}", reference.path)
            });
        }
    }
}

/// The reference models, loaded once for the property tests (empty when absent).
fn models() -> &'static [Vec<u8>] {
    static MODELS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    MODELS.get_or_init(|| {
        common::all_models()
            .map(|all| all.into_iter().map(|(_, bytes)| bytes).collect())
            .unwrap_or_default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_truncations_and_flips(
        which in 0usize..64,
        cut in 0.0f64..=1.0,
        flips in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 0..16),
    ) {
        let models = models();
        if models.is_empty() {
            return Ok(());
        }
        let original = &models[which % models.len()];
        let mut bytes = original.clone();
        for (at, value) in &flips {
            let last = bytes.len() - 1;
            let i = (*at * bytes.len() as f64) as usize;
            bytes[i.min(last)] = *value;
        }
        bytes.truncate((cut * bytes.len() as f64) as usize);
        survive(&bytes, || format!("model {} cut at {} with flips {flips:?}", which % models.len(), bytes.len()));
    }

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512), tag in any::<bool>()) {
        let mut bytes = bytes;
        if tag && bytes.len() >= 8 {
            bytes[4..8].copy_from_slice(b"TFL3");
        }
        survive(&bytes, || format!("{bytes:?}"));
    }
}
