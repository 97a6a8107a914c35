//! The UCI handwritten-digits data set: loading, the train / held-out split, and features.
//!
//! The file is a gzip-compressed CSV without a header. Each row holds the 64 pixels of an 8×8
//! image (row-major, integers `0..=16`) followed by the label (`0..=9`), 65 fields in all.
//! See `data/digits.rst` in the repository for the data set's notes.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;

/// Pixels per image (8×8).
pub const PIXELS: usize = 64;
/// Number of classes (digits 0–9).
pub const CLASSES: usize = 10;
/// Largest pixel value (a count of "on" pixels in a 4×4 block).
pub const MAX_PIXEL: u8 = 16;
/// Fields per CSV row: the pixels then the label.
pub const FIELDS: usize = PIXELS + 1;
/// Rows in the shipped `data/digits.csv.gz`.
pub const ROWS: usize = 1797;

/// The whole data set, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Digits {
    /// 8×8 images, row-major, each pixel in `0..=16`.
    pub images: Vec<[u8; PIXELS]>,
    /// Labels in `0..=9`, one per image.
    pub labels: Vec<u8>,
}

/// One half of [`Digits::split`]: a subset of the rows, kept in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// Row numbers (0-based, in [`Digits`]) of the samples in this half, ascending.
    pub indices: Vec<usize>,
    /// The images of those rows.
    pub images: Vec<[u8; PIXELS]>,
    /// The labels of those rows.
    pub labels: Vec<u8>,
}

impl Digits {
    /// Where the repository keeps the data: `<crate>/../../data/digits.csv.gz`, found from
    /// `CARGO_MANIFEST_DIR` at compile time.
    pub fn default_path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data")
            .join("digits.csv.gz")
    }

    /// Loads [`Digits::default_path`].
    pub fn load_default() -> Result<Self, String> {
        load(Self::default_path())
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Number of samples of each class.
    pub fn class_counts(&self) -> [usize; CLASSES] {
        class_counts(&self.labels)
    }

    /// The deterministic, stratified split into `(train, held_out)`.
    ///
    /// Rule: walk the rows in file order, counting occurrences per class. The 1st, 3rd, 5th, …
    /// sample of each class (even 0-based occurrence) goes to `train`, the 2nd, 4th, 6th, … (odd
    /// occurrence) to `held_out`. Each class is thus halved (train gets the extra sample when a
    /// class count is odd), the halves are disjoint and together cover every row, and both keep
    /// file order. On the shipped file this gives 901 train and 896 held-out samples.
    pub fn split(&self) -> (Split, Split) {
        let mut seen = [0usize; CLASSES];
        let mut train = Split::default();
        let mut held_out = Split::default();
        for (index, (image, &label)) in self.images.iter().zip(&self.labels).enumerate() {
            let occurrence = &mut seen[usize::from(label)];
            let half = if *occurrence % 2 == 0 {
                &mut train
            } else {
                &mut held_out
            };
            *occurrence += 1;
            half.indices.push(index);
            half.images.push(*image);
            half.labels.push(label);
        }
        (train, held_out)
    }
}

impl Split {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Number of samples of each class.
    pub fn class_counts(&self) -> [usize; CLASSES] {
        class_counts(&self.labels)
    }

    /// The [`features`] of every image, in order.
    pub fn features(&self) -> Vec<[f32; PIXELS]> {
        self.images.iter().map(features).collect()
    }
}

/// The network's input for an image: each pixel divided by 16, so in `[0, 1]`.
///
/// `pixel / 16.0` is exact in `f32` (a small integer over a power of two).
pub fn features(image: &[u8; PIXELS]) -> [f32; PIXELS] {
    image.map(|pixel| f32::from(pixel) / f32::from(MAX_PIXEL))
}

/// Loads a gzip-compressed digits CSV (see the module docs for the format).
///
/// Errors name the file and, for bad rows, the 1-based line number: unreadable file, not gzip,
/// wrong number of fields, a field that is not an integer, a pixel outside `0..=16` or a label
/// outside `0..=9`, or no rows at all. Blank lines are skipped.
pub fn load(path: impl AsRef<Path>) -> Result<Digits, String> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    parse_csv(BufReader::new(GzDecoder::new(file))).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the uncompressed CSV text from `reader`; [`load`] is this behind a gzip decoder.
/// Errors start with `line N:` (1-based) when they concern one line.
pub fn parse_csv<R: BufRead>(reader: R) -> Result<Digits, String> {
    let mut digits = Digits::default();
    for (number, line) in reader.lines().enumerate() {
        let number = number + 1;
        let line = line.map_err(|e| format!("line {number}: read error: {e}"))?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (image, label) = parse_row(line).map_err(|e| format!("line {number}: {e}"))?;
        digits.images.push(image);
        digits.labels.push(label);
    }
    if digits.is_empty() {
        return Err("no data rows".to_string());
    }
    Ok(digits)
}

fn parse_row(line: &str) -> Result<([u8; PIXELS], u8), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() != FIELDS {
        return Err(format!(
            "expected {FIELDS} comma-separated fields ({PIXELS} pixels then the label), found {}",
            fields.len()
        ));
    }
    let mut image = [0u8; PIXELS];
    for (column, (pixel, field)) in image.iter_mut().zip(&fields).enumerate() {
        *pixel = parse_value(field, MAX_PIXEL)
            .map_err(|e| format!("pixel {} (field {}): {e}", column, column + 1))?;
    }
    let label = parse_value(fields[PIXELS], (CLASSES - 1) as u8)
        .map_err(|e| format!("label (field {FIELDS}): {e}"))?;
    Ok((image, label))
}

fn parse_value(field: &str, max: u8) -> Result<u8, String> {
    let value: i64 = field
        .parse()
        .map_err(|_| format!("{field:?} is not an integer"))?;
    u8::try_from(value)
        .ok()
        .filter(|&v| v <= max)
        .ok_or_else(|| format!("value {value} out of range 0..={max}"))
}

fn class_counts(labels: &[u8]) -> [usize; CLASSES] {
    let mut counts = [0; CLASSES];
    for &label in labels {
        counts[usize::from(label)] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn row(pixel: &str, label: &str) -> String {
        let mut fields = vec![pixel; PIXELS];
        fields.push(label);
        fields.join(",")
    }

    #[test]
    fn loads_the_shipped_file() {
        let digits = Digits::load_default().unwrap();
        assert_eq!(digits.len(), ROWS);
        assert_eq!(digits.images.len(), ROWS);
        assert!(digits.labels.iter().all(|&l| l <= 9));
        assert!(digits.images.iter().flatten().all(|&p| p <= MAX_PIXEL));
        assert_eq!(
            digits.class_counts(),
            [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
        );
        // First row of the file: a zero.
        assert_eq!(digits.labels[0], 0);
        assert_eq!(digits.images[0][..8], [0, 0, 5, 13, 9, 1, 0, 0]);
    }

    #[test]
    fn split_is_disjoint_covering_and_stratified() {
        let digits = Digits::load_default().unwrap();
        let (train, held_out) = digits.split();
        assert_eq!(train.len(), 901);
        assert_eq!(held_out.len(), 896);

        let mut owner = vec![0u8; digits.len()];
        for &i in train.indices.iter().chain(&held_out.indices) {
            owner[i] += 1;
        }
        assert!(
            owner.iter().all(|&n| n == 1),
            "every row in exactly one half"
        );

        for half in [&train, &held_out] {
            assert!(half.indices.windows(2).all(|w| w[0] < w[1]));
            for (k, &i) in half.indices.iter().enumerate() {
                assert_eq!(half.images[k], digits.images[i]);
                assert_eq!(half.labels[k], digits.labels[i]);
            }
        }
        let total = digits.class_counts();
        assert_eq!(train.class_counts(), total.map(|n| n.div_ceil(2)));
        assert_eq!(held_out.class_counts(), total.map(|n| n / 2));
        assert_eq!(digits.split(), (train, held_out), "deterministic");
    }

    #[test]
    fn features_scale_to_unit_interval() {
        let mut image = [0u8; PIXELS];
        image[1] = 8;
        image[2] = 16;
        let x = features(&image);
        assert_eq!((x[0], x[1], x[2]), (0.0, 0.5, 1.0));
    }

    #[test]
    fn parses_good_rows_and_skips_blank_lines() {
        let text = format!("{}\n\n{}\r\n", row("0", "3"), row("16", "9"));
        let digits = parse_csv(text.as_bytes()).unwrap();
        assert_eq!(digits.labels, [3, 9]);
        assert_eq!(digits.images[1], [16; PIXELS]);
    }

    #[test]
    fn bad_rows_report_line_numbers() {
        let good = row("1", "2");
        let cases = [
            (format!("{good}\n1,2,3\n"), "line 2: expected 65"),
            (format!("{good}\n{good},4\n"), "line 2: expected 65"),
            (
                row("17", "1"),
                "line 1: pixel 0 (field 1): value 17 out of range 0..=16",
            ),
            (
                row("-1", "1"),
                "line 1: pixel 0 (field 1): value -1 out of range",
            ),
            (
                row("x", "1"),
                "line 1: pixel 0 (field 1): \"x\" is not an integer",
            ),
            (
                format!("{good}\n{good}\n{}", row("0", "10")),
                "line 3: label (field 65): value 10 out of range 0..=9",
            ),
            (String::new(), "no data rows"),
        ];
        for (text, expected) in cases {
            let err = parse_csv(text.as_bytes()).unwrap_err();
            assert!(
                err.starts_with(expected),
                "{err:?} should start with {expected:?}"
            );
        }
    }

    #[test]
    fn load_reports_the_path() {
        let dir = std::env::temp_dir().join(format!("ember-digits-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();

        let missing = dir.join("missing.csv.gz");
        assert!(load(&missing)
            .unwrap_err()
            .contains("missing.csv.gz: cannot open"));

        let bad = dir.join("bad.csv.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        write!(encoder, "{}\n{}\n", row("0", "1"), row("0", "11")).unwrap();
        std::fs::write(&bad, encoder.finish().unwrap()).unwrap();
        let err = load(&bad).unwrap_err();
        assert!(err.contains("bad.csv.gz: line 2: label"), "{err}");

        let plain = dir.join("plain.csv");
        std::fs::write(&plain, row("0", "1")).unwrap();
        assert!(load(&plain).unwrap_err().contains("read error"));

        std::fs::remove_dir_all(&dir).unwrap();
    }
}
