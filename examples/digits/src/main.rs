//! `ember-digits`: train the digits MLP on the host, score the float64 reference on the
//! held-out half and (later) run the same images through the Ember runtime.
//!
//! Usage: `ember-digits [DATA.csv.gz]` (default: the repository's `data/digits.csv.gz`).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ember_digits::{
    evaluate, load, predict_f64, predictions, score, train, Digits, Mlp, Split, TrainConfig,
};
use indicatif::{ProgressBar, ProgressStyle};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let digits = match std::env::args_os().nth(1) {
        Some(path) => load(path)?,
        None => Digits::load_default()?,
    };
    let (train_half, held_out) = digits.split();
    println!(
        "digits: {} samples, {} train / {} held out",
        digits.len(),
        train_half.len(),
        held_out.len()
    );

    let config = TrainConfig::default();
    let (mlp, elapsed) = train_with_progress(&train_half, &config);
    println!(
        "trained in {:.3} s (weights fingerprint {:016x})",
        elapsed.as_secs_f64(),
        mlp.fingerprint()
    );

    let reference = predictions(&held_out, |x| predict_f64(&mlp, x));
    println!(
        "f64 reference, held out: {}",
        score(&held_out.labels, &reference)
    );
    println!(
        "f64 reference, train:    {}",
        evaluate(&train_half, |x| predict_f64(&mlp, x))
    );

    // ---- Runtime inference plugs in here (see `runtime_predictions`). ----
    if let Some(runtime) = runtime_predictions(&mlp, &held_out)? {
        println!(
            "runtime, held out:       {}",
            score(&held_out.labels, &runtime)
        );
        println!("runtime vs f64 reference: {}", score(&reference, &runtime));
    }
    Ok(())
}

/// Trains with an `indicatif` bar that advances per epoch and shows loss and train accuracy.
fn train_with_progress(train_half: &Split, config: &TrainConfig) -> (Mlp, Duration) {
    let bar = ProgressBar::new(config.epochs as u64);
    bar.set_style(
        ProgressStyle::with_template("epoch {pos:>3}/{len} [{bar:30}] {msg} ({elapsed})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut last = (0.0, 0.0);
    let start = Instant::now();
    let mlp = train(train_half, config, |epoch, _epochs, loss, accuracy| {
        bar.set_message(format!(
            "loss {loss:.4}  train acc {:.2}%",
            100.0 * accuracy
        ));
        bar.set_position(epoch as u64);
        last = (loss, accuracy);
    });
    let elapsed = start.elapsed();
    bar.finish_and_clear();
    println!(
        "{} epochs: final loss {:.4}, train acc {:.2}% (during the last epoch)",
        config.epochs,
        last.0,
        100.0 * last.1
    );
    (mlp, elapsed)
}

/// RUNTIME HOOK — not wired yet.
///
/// To be filled in: pack `mlp` (w1 64×32, b1, w2 32×10, b2, all row-major K×N `f32`) into an
/// Ember module, run every held-out image (`ember_digits::features`, 64 `f32` in `[0, 1]`)
/// through the runtime, and return the predicted class of each, in `held_out` order (argmax
/// with the lowest index on ties, as `ember_digits::argmax`). `run` then prints the runtime's
/// accuracy and its agreement with the f64 reference. Returns `None` while there is no runtime.
fn runtime_predictions(_mlp: &Mlp, _held_out: &Split) -> Result<Option<Vec<u8>>, String> {
    Ok(None)
}
