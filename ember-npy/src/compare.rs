//! Ember's outputs against TFLM's: what every oracle test calls equal.

use crate::Data;

/// How far Ember's output is from TFLM's.
///
/// Integers must be equal; floats within 1e-5 relative to TFLM's (1e-6 absolute near
/// zero), an infinity only against the same infinity, a NaN only against a NaN. A different element type is one difference (index 0);
/// a different length is one more, at the shorter length.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Differences {
    /// How many elements differ.
    pub count: usize,
    /// The first few, as `(index, Ember's, TFLM's)`, in index order.
    pub first: Vec<(usize, String, String)>,
}

impl Differences {
    /// Ember's `got` against TFLM's `want`, the first `shown` differences kept.
    pub fn of(got: &Data, want: &Data, shown: usize) -> Self {
        fn exact<T: PartialEq + std::fmt::Display>(
            got: &[T],
            want: &[T],
        ) -> Vec<(usize, String, String)> {
            got.iter()
                .zip(want)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, (a, b))| (i, a.to_string(), b.to_string()))
                .collect()
        }
        let mut all = match (got, want) {
            (Data::F32(g), Data::F32(w)) => g
                .iter()
                .zip(w)
                .enumerate()
                .filter(|(_, (a, b))| {
                    // Equal values (infinities among them) and NaN against NaN match.
                    let same = a == b || (a.is_nan() && b.is_nan());
                    // Within the tolerance, which an infinity has none of.
                    let within = b.is_finite() && (*a - *b).abs() <= (b.abs() * 1e-5).max(1e-6);
                    !(same || within)
                })
                .map(|(i, (a, b))| (i, format!("{a:e}"), format!("{b:e}")))
                .collect(),
            (Data::I8(g), Data::I8(w)) => exact(g, w),
            (Data::U8(g), Data::U8(w)) => exact(g, w),
            (Data::I16(g), Data::I16(w)) => exact(g, w),
            (Data::I32(g), Data::I32(w)) => exact(g, w),
            (Data::Bool(g), Data::Bool(w)) => exact(g, w),
            _ => vec![(
                0,
                format!("{:?}", got.dtype()),
                format!("{:?}", want.dtype()),
            )],
        };
        if got.len() != want.len() {
            all.push((
                got.len().min(want.len()),
                format!("{} elements", got.len()),
                format!("{} elements", want.len()),
            ));
        }
        let count = all.len();
        all.truncate(shown);
        Self { count, first: all }
    }

    /// Whether the outputs are equal as the oracle counts it.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The shown differences in one line: `[i] got vs TFLM want, …`.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = self
            .first
            .iter()
            .map(|(i, got, want)| format!("[{i}] {got} vs TFLM {want}"))
            .collect();
        shown.join(", ")
    }
}

/// `Ok` where Ember's `got` equals TFLM's `want` as [`Differences`] counts it; otherwise the
/// first difference, described.
pub fn matches_tflm(got: &Data, want: &Data) -> Result<(), String> {
    let differences = Differences::of(got, want, 1);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} elements differ: {}",
            differences.count,
            want.len(),
            differences.describe()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_exact_floats_within_tolerance() {
        assert!(matches_tflm(&Data::I8(vec![1, -2]), &Data::I8(vec![1, -2])).is_ok());
        let off = Differences::of(&Data::I8(vec![1, -3, 4]), &Data::I8(vec![1, -2, 5]), 1);
        assert_eq!(off.count, 2);
        assert_eq!(off.first, vec![(1, "-3".into(), "-2".into())]);
        assert!(matches_tflm(&Data::F32(vec![1.000_001]), &Data::F32(vec![1.0])).is_ok());
        assert!(matches_tflm(&Data::F32(vec![1.001]), &Data::F32(vec![1.0])).is_err());
        assert!(matches_tflm(&Data::F32(vec![f32::NAN]), &Data::F32(vec![f32::NAN])).is_ok());
        assert!(matches_tflm(&Data::F32(vec![f32::NAN]), &Data::F32(vec![0.0])).is_err());
        let inf = f32::INFINITY;
        assert!(matches_tflm(&Data::F32(vec![inf, -inf]), &Data::F32(vec![inf, -inf])).is_ok());
        assert!(matches_tflm(&Data::F32(vec![inf]), &Data::F32(vec![-inf])).is_err());
        assert!(matches_tflm(&Data::F32(vec![f32::MAX]), &Data::F32(vec![inf])).is_err());
    }

    #[test]
    fn types_and_lengths_differ_too() {
        let types = Differences::of(&Data::I8(vec![0]), &Data::U8(vec![0]), 4);
        assert_eq!(types.count, 1);
        let lengths = Differences::of(&Data::I8(vec![0, 0]), &Data::I8(vec![0]), 4);
        assert_eq!(
            lengths.first,
            vec![(1, "2 elements".into(), "1 elements".into())]
        );
    }
}
