//! What the importer refuses, and where: every error names the op (index and operator) or the
//! tensor (index and name) it is about.

use crate::ElementType;
use std::fmt;

/// An op named in an error: its index in the subgraph and its operator's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpSite {
    /// Index in the subgraph's operator list.
    pub index: usize,
    /// The operator's schema name (`CONV_2D`), or a custom op's code.
    pub name: String,
}

impl fmt::Display for OpSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op {} ({})", self.index, self.name)
    }
}

/// A tensor named in an error: its index in the subgraph and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSite {
    /// Index in the subgraph's tensor list.
    pub index: usize,
    /// Its name in the file (may be empty).
    pub name: String,
}

impl fmt::Display for TensorSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor {} `{}`", self.index, self.name)
    }
}

/// Why a `.tflite` file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Shorter than a FlatBuffer's root offset and file identifier.
    #[error("the file is {len} bytes, too short for a FlatBuffer (8 bytes at least)")]
    TooShort {
        /// The file's length.
        len: usize,
    },
    /// Bytes 4..8 are not `TFL3`.
    #[error("file identifier {:?} is not \"TFL3\": not a TensorFlow Lite model", String::from_utf8_lossy(.found))]
    FileIdentifier {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// The FlatBuffer itself is broken: an offset or length out of range, a bad vtable, an
    /// unknown enum or union tag, invalid UTF-8.
    #[error("malformed FlatBuffer in {at}: {source}")]
    Malformed {
        /// What was being read: `model`, an op or a tensor.
        at: String,
        /// planus' account, with the table and field.
        source: planus::Error,
    },
    /// `Model.version` is not 3.
    #[error("schema version {found}; only version 3 is supported")]
    SchemaVersion {
        /// The version in the file.
        found: u32,
    },
    /// Not exactly one subgraph.
    #[error("the model has {found} subgraphs; exactly one is supported")]
    SubgraphCount {
        /// How many there are.
        found: usize,
    },
    /// An op's `opcode_index` is past the operator code list.
    #[error("op {op}: operator code index {index} out of range ({count} operator codes)")]
    OpcodeIndex {
        /// The op's index.
        op: usize,
        /// The index in the file.
        index: u32,
        /// The number of operator codes.
        count: usize,
    },
    /// An operator outside [`supported_operators`](crate::supported_operators), or a custom
    /// op.
    #[error("{op}: unsupported operator; supported: {}", SupportedOperators)]
    UnsupportedOp {
        /// The op.
        op: OpSite,
    },
    /// An option value the importer does not implement (a fused TANH, SHUFFLED4x16INT8 weights,
    /// an ellipsis mask, …).
    #[error("{op}: unsupported {option} {value}; supported: {supported}")]
    UnsupportedOption {
        /// The op.
        op: OpSite,
        /// The option's schema name.
        option: &'static str,
        /// The value found.
        value: String,
        /// What is accepted.
        supported: &'static str,
    },
    /// Options of the wrong kind for the operator, or an impossible value (a zero stride).
    #[error("{op}: bad options: {reason}")]
    BadOptions {
        /// The op.
        op: OpSite,
        /// What is wrong.
        reason: String,
    },
    /// A tensor of a type outside [`ElementType::SUPPORTED`].
    #[error(
        "{tensor}: unsupported element type {found}; supported: {}",
        ElementType::SUPPORTED
    )]
    UnsupportedType {
        /// The tensor.
        tensor: TensorSite,
        /// The type found.
        found: String,
    },
    /// A tensor feature the importer does not implement (sparsity, external data, variables,
    /// no elements).
    #[error("{tensor}: {what} is not supported")]
    UnsupportedTensor {
        /// The tensor.
        tensor: TensorSite,
        /// The feature.
        what: &'static str,
    },
    /// A tensor index (in an op, or among the graph's inputs or outputs) out of range.
    #[error("{at}: tensor index {index} out of range ({count} tensors)")]
    TensorIndex {
        /// Where the index was: `op 3 (CONV_2D) input 1`, `graph output 0`.
        at: String,
        /// The index in the file.
        index: i64,
        /// The number of tensors.
        count: usize,
    },
    /// A tensor's buffer index is past the buffer list.
    #[error("{tensor}: buffer index {index} out of range ({count} buffers)")]
    BufferIndex {
        /// The tensor.
        tensor: TensorSite,
        /// The index in the file.
        index: u32,
        /// The number of buffers.
        count: usize,
    },
    /// A constant's buffer is not exactly its shape × element size.
    #[error("{tensor}: buffer {buffer} holds {found} bytes; {shape:?} × {element_type} needs {expected}")]
    BufferSize {
        /// The tensor.
        tensor: TensorSite,
        /// Its buffer index.
        buffer: u32,
        /// Its shape.
        shape: Vec<usize>,
        /// Its element type.
        element_type: ElementType,
        /// Bytes its shape needs.
        expected: usize,
        /// Bytes the buffer holds.
        found: usize,
    },
    /// A buffer stored after the FlatBuffer (`offset`/`size`) reaches past the file's end.
    #[error("buffer {buffer}: {size} bytes at file offset {offset} reach past the file's end ({file_len} bytes)")]
    BufferOutsideFile {
        /// The buffer's index.
        buffer: u32,
        /// Its offset in the file.
        offset: u64,
        /// Its size.
        size: u64,
        /// The file's length.
        file_len: usize,
    },
    /// A shape with a zero or negative dimension, or too many elements.
    #[error("{tensor}: bad shape: {reason}")]
    Shape {
        /// The tensor.
        tensor: TensorSite,
        /// What is wrong.
        reason: String,
    },
    /// A dynamic dimension other than a batch pinned to 1.
    #[error("{tensor}: dynamic shape (shape {shape:?}, shape_signature {signature:?}); only a dynamic batch (dimension 0, of size 1) is supported")]
    DynamicShape {
        /// The tensor.
        tensor: TensorSite,
        /// `shape` in the file.
        shape: Vec<i32>,
        /// `shape_signature` in the file.
        signature: Vec<i32>,
    },
    /// Quantization parameters that do not fit the tensor.
    #[error("{tensor}: bad quantization: {reason}")]
    Quantization {
        /// The tensor.
        tensor: TensorSite,
        /// What is wrong.
        reason: String,
    },
    /// The graph's inputs or outputs are inconsistent (a constant or repeated input, a
    /// constant output).
    #[error("graph {which} {position}: {tensor} {reason}")]
    GraphIo {
        /// `input` or `output`.
        which: &'static str,
        /// Its position in the list.
        position: usize,
        /// The tensor.
        tensor: TensorSite,
        /// What is wrong.
        reason: &'static str,
    },
    /// An op reads a tensor that is no graph input, no constant, and written by no earlier op.
    #[error("{op}: reads {tensor}, which is not a graph input, not a constant, and not written by an earlier op")]
    Unwritten {
        /// The op.
        op: OpSite,
        /// The tensor.
        tensor: TensorSite,
    },
    /// A tensor written by two ops, by an op and as a graph input, or an op writing a constant.
    #[error("{tensor} is written twice: {first}, then {second}")]
    WrittenTwice {
        /// The tensor.
        tensor: TensorSite,
        /// The first writer (`graph input`, `constant data`, `op 2 (ADD)`).
        first: String,
        /// The second writer.
        second: String,
    },
    /// A graph output that no op writes and that is no graph input.
    #[error("graph output {position}: {tensor} is never written")]
    OutputUnwritten {
        /// Its position in the output list.
        position: usize,
        /// The tensor.
        tensor: TensorSite,
    },
    /// The wrong number of inputs or outputs, or a required input marked absent (-1).
    #[error("{op}: {inputs} inputs and {outputs} outputs{absent}; expects {expected}", absent = if *.absent_required { ", a required input absent" } else { "" })]
    Arity {
        /// The op.
        op: OpSite,
        /// What the operator takes.
        expected: &'static str,
        /// Inputs found.
        inputs: usize,
        /// Outputs found.
        outputs: usize,
        /// A required input is -1.
        absent_required: bool,
    },
    /// Shapes that disagree with the operator's rules.
    #[error("{op}: shape mismatch: {reason}")]
    OpShape {
        /// The op.
        op: OpSite,
        /// Which tensors and dimensions disagree.
        reason: String,
    },
    /// Element types or quantization that the operator does not take.
    #[error("{op}: type mismatch: {reason}")]
    OpType {
        /// The op.
        op: OpSite,
        /// Which tensors and types.
        reason: String,
    },
    /// More than one thing the importer does not take (each a [`refusal`](Self::is_refusal)),
    /// all of them in one report.
    #[error("{0}")]
    Refused(Refusals),
}

impl ImportError {
    /// Whether this error is about what the model asks of Ember (an operator, an option, a
    /// type, a tensor feature, a dynamic shape, an op's arity, shapes or types) rather than
    /// about a broken file: the importer gathers every refusal of a model into one report
    /// ([`Refused`](Self::Refused)) where it finds more than one.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ImportError::UnsupportedOp { .. }
                | ImportError::UnsupportedOption { .. }
                | ImportError::UnsupportedType { .. }
                | ImportError::UnsupportedTensor { .. }
                | ImportError::DynamicShape { .. }
                | ImportError::BadOptions { .. }
                | ImportError::Arity { .. }
                | ImportError::OpShape { .. }
                | ImportError::OpType { .. }
        )
    }
}

/// Every refusal of one model, in the order found (tensors, then ops): its `Display` lists
/// the unsupported operators once (`LSH_PROJECTION at 2 ops: 0, 2; DYNAMIC_UPDATE_SLICE at
/// op 1`) with the supported operators after them, then every other refusal on a line of
/// its own, each naming its op or tensor and what is supported instead.
#[derive(Debug)]
pub struct Refusals {
    /// The refusals, each one [`ImportError::is_refusal`] accepts.
    pub problems: Vec<ImportError>,
}

impl Refusals {
    /// The unsupported operators by name, in the order first found, each with the indices
    /// of its ops.
    pub fn unsupported_operators(&self) -> Vec<(&str, Vec<usize>)> {
        let mut operators: Vec<(&str, Vec<usize>)> = Vec::new();
        for problem in &self.problems {
            if let ImportError::UnsupportedOp { op } = problem {
                match operators.iter_mut().find(|(name, _)| *name == op.name) {
                    Some((_, indices)) => indices.push(op.index),
                    None => operators.push((&op.name, vec![op.index])),
                }
            }
        }
        operators
    }
}

impl fmt::Display for Refusals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the model asks for {} things the importer does not take:",
            self.problems.len()
        )?;
        let operators = self.unsupported_operators();
        if !operators.is_empty() {
            write!(f, "\n- unsupported operators:")?;
            for (k, (name, indices)) in operators.iter().enumerate() {
                let list: Vec<String> = indices.iter().map(usize::to_string).collect();
                let at = match indices.len() {
                    1 => "op".to_string(),
                    n => format!("{n} ops:"),
                };
                let separator = if k == 0 { " " } else { "; " };
                write!(f, "{separator}{name} at {at} {}", list.join(", "))?;
            }
            write!(f, "\n  supported: {SupportedOperators}")?;
        }
        for problem in &self.problems {
            if !matches!(problem, ImportError::UnsupportedOp { .. }) {
                write!(f, "\n- {problem}")?;
            }
        }
        Ok(())
    }
}

/// Why a memory plan could not be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// The alignment is zero or not a power of two.
    #[error("alignment {0} is not a power of two")]
    Alignment(usize),
    /// Offsets overflow `usize`.
    #[error("the arena's size overflows usize")]
    Overflow,
}

/// The operators the importer supports, as its errors list them: `Display` comes from the
/// op registry (`ops`), which depends on this file, not the other way.
pub(crate) struct SupportedOperators;
