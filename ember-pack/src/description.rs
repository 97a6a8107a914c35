//! The readable description of a module (JSON).

use serde::{Deserialize, Serialize};

/// A module: executables, constants and functions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// The module's name.
    pub name: String,
    /// Kernels, referred to by `name` in dispatches.
    #[serde(default)]
    pub executables: Vec<Executable>,
    /// Read-only data.
    #[serde(default)]
    pub constants: Vec<Constant>,
    /// What callers invoke.
    #[serde(default)]
    pub functions: Vec<Function>,
}

/// An executable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Executable {
    /// How dispatches name it.
    pub name: String,
    /// The kernel the local driver runs (a built-in such as `matmul_f32`).
    pub kernel: String,
    /// A SPIR-V file (relative to the description) for drivers that compile kernels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spirv: Option<String>,
    /// The SPIR-V entry point (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

/// A constant and its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constant {
    /// How steps name it.
    pub name: String,
    /// Its bytes.
    #[serde(flatten)]
    pub data: ConstantData,
}

/// Where a constant's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConstantData {
    /// Little-endian `f32`s.
    F32(Vec<f32>),
    /// Little-endian `u32`s.
    U32(Vec<u32>),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// A file's bytes (relative to the description).
    File(String),
}

/// A function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Arguments, in order.
    #[serde(default)]
    pub arguments: Vec<Value>,
    /// Results, in order.
    #[serde(default)]
    pub results: Vec<Value>,
    /// Transient values (the planner gives each an offset in the arena).
    #[serde(default)]
    pub transients: Vec<Value>,
    /// What it does.
    pub steps: Vec<Step>,
}

/// A named value of a size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Value {
    /// Its name (unique among the function's values and the module's constants).
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Run an executable.
    Dispatch(Dispatch),
    /// Copy one range into another of the same length.
    Copy {
        /// From.
        source: Operand,
        /// To.
        target: Operand,
    },
    /// Fill a range with a 4-byte pattern.
    Fill {
        /// Where.
        target: Operand,
        /// The pattern.
        pattern: u32,
    },
    /// Every earlier step completes before any later one starts.
    Barrier,
}

/// A dispatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dispatch {
    /// The executable's name.
    pub executable: String,
    /// Workgroups per dimension (default 1×1×1).
    #[serde(default = "one_workgroup")]
    pub workgroups: [u32; 3],
    /// Push constants.
    #[serde(default)]
    pub constants: Vec<u32>,
    /// Buffers the kernel sees, in order.
    pub bindings: Vec<Operand>,
}

fn one_workgroup() -> [u32; 3] {
    [1, 1, 1]
}

/// A value by name — all of it, or a byte range of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Operand {
    /// The whole value.
    Whole(String),
    /// `length` bytes from `offset`.
    Range {
        /// The value's name.
        value: String,
        /// Start.
        #[serde(default)]
        offset: u64,
        /// Length (default: to the end).
        #[serde(default)]
        length: Option<u64>,
    },
}
