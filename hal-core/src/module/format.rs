//! The module file format: a 16-byte preamble, a postcard header of borrowed types, and a
//! constant pool aligned to [`POOL_ALIGN`] that the header refers to by offset.
//!
//! ```text
//! offset 0   magic  b"EMBERMOD"                    8 bytes
//!        8   version (u16 LE) = VERSION            2 bytes
//!       10   reserved (u16 LE) = 0                 2 bytes
//!       12   header length H (u32 LE)              4 bytes
//!       16   header: postcard `Header`             H bytes
//!            zero padding up to the pool offset
//!  P = align_up(16 + H, 64)
//!        P   constant pool                         header.pool_len bytes (the rest of the file)
//! ```
//!
//! Tables in the header are [`Seq`]s, decoded lazily. Every constant starts at a multiple of
//! [`POOL_ALIGN`] in the pool, so a pool that sits 64-byte aligned in memory can be imported
//! by a device as it is.

use super::seq::Seq;
use serde::{Deserialize, Serialize};

/// The first eight bytes of every module.
pub const MAGIC: [u8; 8] = *b"EMBERMOD";
/// The format version this crate reads and writes (2: functions describe their arguments
/// and results as tensors).
pub const VERSION: u16 = 2;
/// Bytes before the header.
pub const PREAMBLE_BYTES: usize = 16;
/// Alignment of the pool within the file, and of every constant within the pool.
pub const POOL_ALIGN: u64 = 64;

/// Where the pool starts in a file whose header is `header_len` bytes.
pub const fn pool_offset(header_len: u64) -> u64 {
    (PREAMBLE_BYTES as u64 + header_len).div_ceil(POOL_ALIGN) * POOL_ALIGN
}

/// The header: everything but the constant pool's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Header<'a> {
    /// The module's name.
    pub name: &'a str,
    /// Length of the constant pool (the file ends there).
    pub pool_len: u64,
    /// Kernels the functions dispatch.
    #[serde(borrow)]
    pub executables: Seq<'a, ExecutableDef<'a>>,
    /// Read-only data in the pool.
    #[serde(borrow)]
    pub constants: Seq<'a, ConstantDef<'a>>,
    /// What callers invoke.
    #[serde(borrow)]
    pub functions: Seq<'a, FunctionDef<'a>>,
}

/// A byte range of the constant pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolRange {
    /// Offset from the pool's start.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
}

/// An executable: a kernel the local driver finds by name, and optionally the same kernel
/// as SPIR-V for drivers that compile it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutableDef<'a> {
    /// The kernel's name (non-empty).
    pub kernel: &'a str,
    /// SPIR-V words in the pool (4-byte aligned, a whole number of words), if carried.
    pub spirv: Option<PoolRange>,
    /// The SPIR-V entry point (used with `spirv`).
    pub entry: &'a str,
}

/// A named constant: bytes in the pool, starting at a multiple of [`POOL_ALIGN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstantDef<'a> {
    /// Its name.
    pub name: &'a str,
    /// Where its bytes are (non-empty).
    pub data: PoolRange,
}

/// A function: arguments and results with their sizes, steps, and the static memory plan
/// of its transient values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef<'a> {
    /// Its name (unique in the module).
    pub name: &'a str,
    /// Size in bytes of each argument.
    #[serde(borrow)]
    pub arguments: Seq<'a, u64>,
    /// Size in bytes of each result.
    #[serde(borrow)]
    pub results: Seq<'a, u64>,
    /// What each argument holds, for callers that quantize inputs: none, or one per
    /// argument.
    #[serde(borrow)]
    pub inputs: Seq<'a, TensorMeta<'a>>,
    /// What each result holds, for callers that dequantize outputs: none, or one per result.
    #[serde(borrow)]
    pub outputs: Seq<'a, TensorMeta<'a>>,
    /// The memory plan: where each transient value lives in the arena.
    #[serde(borrow)]
    pub transients: Seq<'a, Transient>,
    /// Bytes of the one arena every transient lives in (one `queue_alloca` per invocation).
    pub arena_size: u64,
    /// What it does, in order.
    #[serde(borrow)]
    pub steps: Seq<'a, Step<'a>>,
}

/// A tensor's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Element {
    /// `f32`.
    F32,
    /// `f16`.
    F16,
    /// `i8`.
    I8,
    /// `u8`.
    U8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `bool`: one byte, 0 or 1.
    Bool,
}

impl Element {
    /// Bytes of one element.
    pub const fn size(self) -> u64 {
        match self {
            Element::I8 | Element::U8 | Element::Bool => 1,
            Element::F16 | Element::I16 => 2,
            Element::F32 | Element::I32 => 4,
            Element::I64 => 8,
        }
    }
}

/// What an argument or result holds: a tensor's name, element type, shape and (for
/// quantized tensors) `real = scale * (q - zero_point)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TensorMeta<'a> {
    /// The tensor's name in the model.
    pub name: &'a str,
    /// Its element type.
    pub element: Element,
    /// Its dimensions, outermost first (each at least 1).
    #[serde(borrow)]
    pub shape: Seq<'a, u32>,
    /// Real value of one step; 0 where the tensor is not quantized.
    pub scale: f32,
    /// The integer that stands for 0.0 (0 where not quantized).
    pub zero_point: i32,
}

/// A transient value's place in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transient {
    /// Offset in the arena (a multiple of 4).
    pub offset: u64,
    /// Size in bytes (non-zero).
    pub size: u64,
}

/// One step of a function.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Step<'a> {
    /// Run executable `executable` over a grid, with push constants and bindings.
    Dispatch {
        /// Index into the module's executables.
        executable: u32,
        /// Workgroups per dimension (each at least 1).
        workgroups: [u32; 3],
        /// Push constants.
        #[serde(borrow)]
        constants: Seq<'a, u32>,
        /// Buffers the kernel sees, in order.
        #[serde(borrow)]
        bindings: Seq<'a, Operand>,
    },
    /// Copy `source` into `target` (same length, not overlapping).
    Copy {
        /// Where from.
        source: Operand,
        /// Where to (not a constant).
        target: Operand,
    },
    /// Fill `target` with a 4-byte pattern.
    Fill {
        /// Where (not a constant; length a multiple of 4).
        target: Operand,
        /// The pattern, little-endian.
        pattern: u32,
    },
    /// Every earlier step completes before any later one starts.
    Barrier,
}

/// A byte range of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operand {
    /// Which value.
    pub value: Value,
    /// Offset within it (a multiple of 4).
    pub offset: u64,
    /// Length (non-zero; offset + length within the value).
    pub length: u64,
}

impl Operand {
    /// The bytes `offset..offset + length` of this range (relative to its start).
    pub const fn slice(self, offset: u64, length: u64) -> Self {
        Self {
            value: self.value,
            offset: self.offset + offset,
            length,
        }
    }
}

/// A value a step refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Value {
    /// The function's argument `n`.
    Argument(u32),
    /// The function's result `n`.
    Result(u32),
    /// The module's constant `n`.
    Constant(u32),
    /// The function's transient value `n`.
    Transient(u32),
}
