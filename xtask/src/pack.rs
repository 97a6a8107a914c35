//! `cargo xtask pack`: a module from its JSON description, with the memory plan reported.

use crate::step::Result;
use std::path::Path;

/// Packs `description` into `output` (default: the description with extension `.ember`).
pub fn pack(description: &Path, output: Option<&Path>) -> Result {
    let packed = ember_pack::pack_file(description).map_err(|e| e.to_string())?;
    let output = output.map_or_else(|| description.with_extension("ember"), Path::to_path_buf);
    std::fs::write(&output, &packed.bytes).map_err(|e| format!("{}: {e}", output.display()))?;
    let module = hal_core::module::Module::parse(&packed.bytes).map_err(|e| e.to_string())?;
    let sizes = module.sizes();
    println!(
        "packed {} → {}: {} bytes ({} header, {} constant pool), {} executables, {} constants, {} functions",
        description.display(),
        output.display(),
        sizes.file,
        sizes.header,
        sizes.pool,
        module.executables().len(),
        module.constants().len(),
        module.functions().len()
    );
    for ((name, arena), unshared) in packed.arenas.iter().zip(&packed.unshared) {
        println!("  function `{name}`: arena {arena} bytes ({unshared} without reuse)");
    }
    Ok(())
}
