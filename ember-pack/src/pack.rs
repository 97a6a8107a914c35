//! Packing: names resolved, transients planned, the module written and validated.

use crate::description::{ConstantData, Description, Operand, Step};
use hal_core::module::{self, ModuleBuilder, ModuleError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A packed module.
#[derive(Debug, Clone)]
pub struct Packed {
    /// The module file.
    pub bytes: Vec<u8>,
    /// Per function: its name and the arena its memory plan needs.
    pub arenas: Vec<(String, u64)>,
    /// Per function: the arena without reuse (the sum of its transients).
    pub unshared: Vec<u64>,
}

/// Why packing failed.
#[derive(Debug)]
pub enum PackError {
    /// Reading the description or a file it names.
    Io(PathBuf, std::io::Error),
    /// The description is not valid JSON for [`Description`].
    Json(PathBuf, serde_json::Error),
    /// A name used that is not defined, or defined twice.
    Name {
        /// Where (function or module).
        context: String,
        /// The problem.
        message: String,
    },
    /// The module the description makes is invalid.
    Module(ModuleError),
}

impl std::fmt::Display for PackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackError::Io(path, e) => write!(f, "{}: {e}", path.display()),
            PackError::Json(path, e) => write!(f, "{}: {e}", path.display()),
            PackError::Name { context, message } => write!(f, "{context}: {message}"),
            PackError::Module(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PackError {}

/// Reads the description at `path` and packs it (files it names are relative to it).
pub fn pack_file(path: &Path) -> Result<Packed, PackError> {
    let text = std::fs::read_to_string(path).map_err(|e| PackError::Io(path.into(), e))?;
    let description: Description =
        serde_json::from_str(&text).map_err(|e| PackError::Json(path.into(), e))?;
    pack(&description, path.parent().unwrap_or(Path::new(".")))
}

fn name_error(context: &str, message: String) -> PackError {
    PackError::Name {
        context: context.into(),
        message,
    }
}

/// Packs `description`; `base` is where the files it names are.
pub fn pack<'d>(description: &'d Description, base: &Path) -> Result<Packed, PackError> {
    let mut b = ModuleBuilder::new(&description.name);
    let context = format!("module `{}`", description.name);

    let mut executables = HashMap::new();
    for e in &description.executables {
        let index = match &e.spirv {
            None => b.executable(&e.kernel),
            Some(file) => {
                let bytes = read(base, file)?;
                if bytes.len() % 4 != 0 {
                    let message = format!("SPIR-V file {file} is not a whole number of words");
                    return Err(name_error(&context, message));
                }
                let words: Vec<u32> = bytes
                    .chunks_exact(4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                    .collect();
                b.executable_with_spirv(&e.kernel, &words, e.entry.as_deref().unwrap_or("main"))
            }
        };
        if executables.insert(e.name.as_str(), index).is_some() {
            return Err(name_error(
                &context,
                format!("executable `{}` defined twice", e.name),
            ));
        }
    }

    let mut constants = HashMap::new();
    for c in &description.constants {
        let bytes = match &c.data {
            ConstantData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ConstantData::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ConstantData::Bytes(v) => v.clone(),
            ConstantData::File(file) => read(base, file)?,
        };
        let operand = b.constant(&c.name, &bytes);
        if constants.insert(c.name.as_str(), operand).is_some() {
            return Err(name_error(
                &context,
                format!("constant `{}` defined twice", c.name),
            ));
        }
    }

    for f in &description.functions {
        let context = format!("function `{}`", f.name);
        let sizes = |values: &[crate::Value]| values.iter().map(|v| v.bytes).collect::<Vec<_>>();
        let id = b.function(&f.name, &sizes(&f.arguments), &sizes(&f.results));
        let mut names: HashMap<&str, module::Operand> = HashMap::new();
        let mut define = |name: &'d str, operand| -> Result<(), PackError> {
            if constants.contains_key(name) || names.insert(name, operand).is_some() {
                return Err(name_error(&context, format!("`{name}` defined twice")));
            }
            Ok(())
        };
        for (i, v) in f.arguments.iter().enumerate() {
            define(&v.name, b.argument(id, i as u32))?;
        }
        for (i, v) in f.results.iter().enumerate() {
            define(&v.name, b.result(id, i as u32))?;
        }
        for v in &f.transients {
            define(&v.name, b.transient(id, v.bytes))?;
        }
        let resolve = |op: &Operand| -> Result<module::Operand, PackError> {
            let (name, offset, length) = match op {
                Operand::Whole(name) => (name, 0, None),
                Operand::Range {
                    value,
                    offset,
                    length,
                } => (value, *offset, *length),
            };
            let whole = names
                .get(name.as_str())
                .or_else(|| constants.get(name.as_str()))
                .ok_or_else(|| name_error(&context, format!("no value named `{name}`")))?;
            let length = length.unwrap_or(whole.length.saturating_sub(offset));
            Ok(whole.slice(offset, length))
        };
        for step in &f.steps {
            match step {
                Step::Dispatch(d) => {
                    let exe = *executables.get(d.executable.as_str()).ok_or_else(|| {
                        name_error(&context, format!("no executable named `{}`", d.executable))
                    })?;
                    let bindings = d
                        .bindings
                        .iter()
                        .map(resolve)
                        .collect::<Result<Vec<_>, _>>()?;
                    b.dispatch(id, exe, d.workgroups, &d.constants, &bindings);
                }
                Step::Copy { source, target } => b.copy(id, resolve(source)?, resolve(target)?),
                Step::Fill { target, pattern } => b.fill(id, resolve(target)?, *pattern),
                Step::Barrier => b.barrier(id),
            }
        }
    }

    let built = b.finish().map_err(PackError::Module)?;
    let arenas = description
        .functions
        .iter()
        .zip(&built.plans)
        .map(|(f, p)| (f.name.clone(), p.peak))
        .collect();
    let unshared = built.plans.iter().map(|p| p.unshared).collect();
    Ok(Packed {
        bytes: built.bytes,
        arenas,
        unshared,
    })
}

fn read(base: &Path, file: &str) -> Result<Vec<u8>, PackError> {
    let path = base.join(file);
    std::fs::read(&path).map_err(|e| PackError::Io(path, e))
}
