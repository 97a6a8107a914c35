//! What the reference-model tests share: TFLM's oracle cases for every reference model.

use ember_npy::oracle::Manifest;
use std::path::{Path, PathBuf};

/// Each reference model's oracle folder under `target/oracle/` with its manifest, in
/// folder order (`cargo xtask oracle --all` writes them, and `cargo xtask test` runs it
/// first); `None`, after a loud SKIPPED line, where there are none.
pub fn reference_oracles() -> Option<Vec<(PathBuf, Manifest)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oracle");
    let Ok(entries) = std::fs::read_dir(&root) else {
        eprintln!(
            "\n*** SKIPPED: no oracle cases at {} — run `cargo xtask oracle --all` ***\n",
            root.display()
        );
        return None;
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    dirs.sort();
    let oracles = dirs
        .into_iter()
        .filter_map(|dir| Some((dir.clone(), Manifest::load(dir.join("manifest.json")).ok()?)));
    Some(oracles.collect())
}
