//! `ModuleError`: what is wrong with a module, and where.

use crate::ShortName;
use core::fmt;

/// Where in a module a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Site {
    /// The preamble (magic, version, lengths).
    Preamble,
    /// The header, at a byte offset from the start of the file.
    Header {
        /// Byte offset in the file.
        offset: u64,
    },
    /// Executable `index`.
    Executable(u32),
    /// Constant `index`.
    Constant(u32),
    /// Function `index` itself (name, arguments, results, arena).
    Function(u32),
    /// Transient `transient` of function `function` (the memory plan).
    Transient {
        /// Function index.
        function: u32,
        /// Transient index.
        transient: u32,
    },
    /// Step `step` of function `function`.
    Step {
        /// Function index.
        function: u32,
        /// Step index.
        step: u32,
    },
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Site::Preamble => f.write_str("preamble"),
            Site::Header { offset } => write!(f, "header at byte {offset}"),
            Site::Executable(i) => write!(f, "executable {i}"),
            Site::Constant(i) => write!(f, "constant {i}"),
            Site::Function(i) => write!(f, "function {i}"),
            Site::Transient {
                function,
                transient,
            } => write!(f, "function {function} transient {transient}"),
            Site::Step { function, step } => write!(f, "function {function} step {step}"),
        }
    }
}

/// What is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Problem {
    /// The input ends before `needed` bytes.
    #[error("truncated: needs {needed} bytes, has {available}")]
    Truncated {
        /// Bytes needed.
        needed: u64,
        /// Bytes there.
        available: u64,
    },
    /// Not a module.
    #[error("bad magic (not an Ember module)")]
    BadMagic,
    /// A format version this build does not read.
    #[error("format version {found}, this build reads version {supported}")]
    UnsupportedVersion {
        /// In the file.
        found: u16,
        /// What this build reads.
        supported: u16,
    },
    /// Bytes that do not decode as what the format expects there.
    #[error("does not decode")]
    Malformed,
    /// Bytes left over after what the format describes.
    #[error("{extra} unexpected bytes after the end")]
    TrailingBytes {
        /// How many.
        extra: u64,
    },
    /// A count larger than the bytes that should hold it, or past a limit.
    #[error("{what}: count {count} exceeds {max}")]
    Count {
        /// What is counted.
        what: &'static str,
        /// The count.
        count: u64,
        /// The most allowed here.
        max: u64,
    },
    /// A range outside what contains it (or whose end overflows).
    #[error("{what}: range at {offset} of {length} bytes exceeds {limit}")]
    OutOfBounds {
        /// What the range is.
        what: &'static str,
        /// Its offset.
        offset: u64,
        /// Its length.
        length: u64,
        /// The size of what contains it.
        limit: u64,
    },
    /// An offset or length that is not a multiple of `align`.
    #[error("{what}: {value} is not a multiple of {align}")]
    Misaligned {
        /// What is misaligned.
        what: &'static str,
        /// The value.
        value: u64,
        /// Required alignment.
        align: u64,
    },
    /// Something that must not be empty is.
    #[error("{what} is empty")]
    Empty {
        /// What.
        what: &'static str,
    },
    /// A reference to a value or object that does not exist.
    #[error("refers to {what} {index}, but there are {count}")]
    UnknownReference {
        /// Kind of thing referred to.
        what: &'static str,
        /// The index used.
        index: u32,
        /// How many exist.
        count: u32,
    },
    /// Two transients share arena bytes while both are live.
    #[error("shares arena bytes with transient {other} while both are live")]
    PlanOverlap {
        /// The other transient.
        other: u32,
    },
    /// A second function with the same name.
    #[error("name already used by function {first}")]
    DuplicateName {
        /// The function that has it first.
        first: u32,
    },
    /// A step writes a constant.
    #[error("writes constant {index}, which is read-only")]
    WritesConstant {
        /// The constant.
        index: u32,
    },
    /// A copy whose two ranges differ in length or overlap.
    #[error("copy of {source_length} bytes into {target_length} bytes, or overlapping")]
    BadCopy {
        /// Source length.
        source_length: u64,
        /// Target length.
        target_length: u64,
    },
    /// A value outside what the format allows (a zero workgroup count, an empty name).
    #[error("{what} = {value} is outside 1..={max}")]
    OutOfRange {
        /// What.
        what: &'static str,
        /// The value.
        value: u64,
        /// The most allowed.
        max: u64,
    },
    /// A kernel the device (or the firmware) does not link.
    #[error("kernel `{name}` is not linked")]
    UnknownKernel {
        /// Its name (first 32 bytes).
        name: ShortName,
    },
    /// A function describes some of its arguments or results, but not one per value.
    #[error("{what}: {count} described, but there are {values}")]
    DescriptionCount {
        /// Arguments or results.
        what: &'static str,
        /// Descriptions given.
        count: u32,
        /// Values there are.
        values: u32,
    },
    /// A described tensor whose shape does not fill its value.
    #[error("{what} {index}: its shape holds {described} bytes, the value {size}")]
    DescriptionSize {
        /// Argument or result.
        what: &'static str,
        /// Which.
        index: u32,
        /// Bytes the element type and shape describe (saturating).
        described: u64,
        /// The value's size.
        size: u64,
    },
    /// The memory plan needs a bigger arena than there is.
    #[error("memory plan needs a {needed}-byte arena, only {available} bytes available")]
    ArenaTooSmall {
        /// The plan's arena size.
        needed: u64,
        /// What the target offers.
        available: u64,
    },
}

/// A malformed or unusable module: what is wrong ([`Problem`]) and where ([`Site`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[error("module {site}: {problem}")]
pub struct ModuleError {
    /// Where.
    pub site: Site,
    /// What.
    pub problem: Problem,
}

impl ModuleError {
    /// A problem at a site.
    pub const fn new(site: Site, problem: Problem) -> Self {
        Self { site, problem }
    }
}
