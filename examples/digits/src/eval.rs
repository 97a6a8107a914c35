//! Scoring predictions against labels.

use std::fmt;

use crate::data::{features, Split, PIXELS};

/// How many predictions matched, out of how many.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accuracy {
    /// Predictions equal to the expected value.
    pub correct: usize,
    /// Predictions scored.
    pub total: usize,
}

impl Accuracy {
    /// `correct / total` in `[0, 1]` (0 when nothing was scored).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.correct as f64 / self.total as f64
        }
    }

    /// [`Accuracy::fraction`] as a percentage.
    pub fn percent(&self) -> f64 {
        100.0 * self.fraction()
    }
}

impl fmt::Display for Accuracy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} ({:.2}%)",
            self.correct,
            self.total,
            self.percent()
        )
    }
}

/// Runs `predict` on the [`features`] of every image of `split`, in order.
pub fn predictions(split: &Split, mut predict: impl FnMut(&[f32; PIXELS]) -> u8) -> Vec<u8> {
    split
        .images
        .iter()
        .map(|image| predict(&features(image)))
        .collect()
}

/// Counts positions where `predicted` equals `expected`: accuracy against labels, or agreement
/// between two predictors.
///
/// # Panics
///
/// If the slices differ in length.
pub fn score(expected: &[u8], predicted: &[u8]) -> Accuracy {
    assert_eq!(
        expected.len(),
        predicted.len(),
        "score: {} expected values but {} predictions",
        expected.len(),
        predicted.len()
    );
    let correct = expected
        .iter()
        .zip(predicted)
        .filter(|(a, b)| a == b)
        .count();
    Accuracy {
        correct,
        total: expected.len(),
    }
}

/// Accuracy of `predict` on `split`: [`score`] of the labels against [`predictions`].
pub fn evaluate(split: &Split, predict: impl FnMut(&[f32; PIXELS]) -> u8) -> Accuracy {
    score(&split.labels, &predictions(split, predict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_and_formats() {
        let a = score(&[1, 2, 3, 4], &[1, 0, 3, 4]);
        assert_eq!(
            a,
            Accuracy {
                correct: 3,
                total: 4
            }
        );
        assert_eq!(a.fraction(), 0.75);
        assert_eq!(a.to_string(), "3/4 (75.00%)");
        assert_eq!(Accuracy::default().fraction(), 0.0);
    }

    #[test]
    #[should_panic(expected = "2 expected values but 1 predictions")]
    fn score_rejects_length_mismatch() {
        score(&[1, 2], &[1]);
    }

    #[test]
    fn evaluate_feeds_features_in_order() {
        let split = Split {
            indices: vec![0, 1],
            images: vec![[16; PIXELS], [0; PIXELS]],
            labels: vec![1, 0],
        };
        let acc = evaluate(&split, |x| u8::from(x[0] == 1.0));
        assert_eq!(
            acc,
            Accuracy {
                correct: 2,
                total: 2
            }
        );
    }
}
