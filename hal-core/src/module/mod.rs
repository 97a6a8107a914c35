//! Modules: compiled work brought to a device — executables, constants and functions.
//!
//! A module is one byte string ([`format`]): a preamble, a postcard header of borrowed types,
//! and a constant pool aligned to 64 bytes. [`Module::parse`] decodes it with no copy and no
//! heap, then validates every offset, length, count, alignment and reference, answering
//! malformed input with a [`ModuleError`] that says what and where. The header's tables are
//! [`Seq`]s, decoded element by element when iterated.
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use hal_core::module::{Module, ModuleBuilder};
//! let mut b = ModuleBuilder::new("tiny");
//! let double = b.executable("add_f32");
//! let f = b.function("double", &[16], &[16]);
//! b.dispatch(f, double, [1, 1, 1], &[], &[b.argument(f, 0), b.argument(f, 0), b.result(f, 0)]);
//! let bytes = b.finish().unwrap().bytes;
//! let module = Module::parse(&bytes).unwrap();
//! assert_eq!(module.function("double").unwrap().1.arguments.len(), 1);
//! # }
//! ```

mod error;
pub mod format;
mod seq;
mod validate;

#[cfg(feature = "alloc")]
mod builder;
#[cfg(feature = "alloc")]
mod file;
#[cfg(feature = "alloc")]
pub mod plan;

pub use error::{ModuleError, Problem, Site};
pub use format::{
    ConstantDef, Element, ExecutableDef, FunctionDef, Header, Operand, PoolRange, Step, TensorMeta,
    Transient, Value,
};
pub use seq::{Seq, TryIter};
pub use validate::{MAX_STEPS, MAX_VALUES};

#[cfg(feature = "alloc")]
pub use builder::{Built, FunctionId, ModuleBuilder, TensorSpec, TRANSIENT_ALIGN};
#[cfg(feature = "alloc")]
pub use file::write;

use format::{pool_offset, MAGIC, PREAMBLE_BYTES, VERSION};

/// A decoded, validated module borrowing its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Module<'a> {
    header: Header<'a>,
    header_len: u32,
    pool: &'a [u8],
}

/// Sizes of a module, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModuleSizes {
    /// Bytes of the whole file.
    pub file: u64,
    /// Bytes of the header.
    pub header: u64,
    /// Bytes of the constant pool.
    pub pool: u64,
    /// Bytes of all constants.
    pub constants: u64,
    /// The largest arena any function needs.
    pub max_arena: u64,
}

fn read_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn truncated(needed: u64, available: usize, site: Site) -> ModuleError {
    let available = available as u64;
    ModuleError::new(site, Problem::Truncated { needed, available })
}

impl<'a> Module<'a> {
    /// Decodes and validates `bytes`. Copies nothing, allocates nothing, never panics.
    ///
    /// Kernel names are checked against a device or firmware separately
    /// ([`Module::check_kernels`]), as is the arena a target offers ([`Module::check_arena`]).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ModuleError> {
        let len = bytes.len();
        if len < PREAMBLE_BYTES {
            return Err(truncated(PREAMBLE_BYTES as u64, len, Site::Preamble));
        }
        if bytes[..8] != MAGIC {
            return Err(ModuleError::new(Site::Preamble, Problem::BadMagic));
        }
        let found = read_u16(bytes, 8);
        if found != VERSION {
            let supported = VERSION;
            let problem = Problem::UnsupportedVersion { found, supported };
            return Err(ModuleError::new(Site::Preamble, problem));
        }
        if read_u16(bytes, 10) != 0 {
            return Err(ModuleError::new(Site::Preamble, Problem::Malformed));
        }
        let header_len = u64::from(read_u32(bytes, 12));
        let header_end = PREAMBLE_BYTES as u64 + header_len;
        if header_end > len as u64 {
            return Err(truncated(header_end, len, Site::Preamble));
        }
        let header_bytes = &bytes[PREAMBLE_BYTES..header_end as usize];
        let at = Site::Header {
            offset: PREAMBLE_BYTES as u64,
        };
        let (header, rest) = postcard::take_from_bytes::<Header<'a>>(header_bytes)
            .map_err(|_| ModuleError::new(at, Problem::Malformed))?;
        if !rest.is_empty() {
            let extra = rest.len() as u64;
            return Err(ModuleError::new(at, Problem::TrailingBytes { extra }));
        }
        let pool_at = pool_offset(header_len);
        let needed = pool_at.checked_add(header.pool_len);
        match needed {
            Some(n) if n == len as u64 => {}
            Some(n) if n > len as u64 => return Err(truncated(n, len, Site::Preamble)),
            Some(n) => {
                let extra = len as u64 - n;
                return Err(ModuleError::new(
                    Site::Preamble,
                    Problem::TrailingBytes { extra },
                ));
            }
            None => return Err(truncated(u64::MAX, len, Site::Preamble)),
        }
        if bytes[header_end as usize..pool_at as usize]
            .iter()
            .any(|&b| b != 0)
        {
            let at = Site::Header { offset: header_end };
            return Err(ModuleError::new(at, Problem::Malformed));
        }
        validate::header(&header, PREAMBLE_BYTES as u64)?;
        Ok(Self {
            header,
            header_len: header_len as u32,
            pool: &bytes[pool_at as usize..],
        })
    }

    /// A module from parts that were validated when they were produced (code generated at
    /// build time). Nothing here is unsafe if they were not: lookups that fail to decode
    /// end early or give errors.
    pub const fn prevalidated(header: Header<'a>, header_len: u32, pool: &'a [u8]) -> Self {
        Self {
            header,
            header_len,
            pool,
        }
    }

    /// The header.
    pub const fn header(&self) -> &Header<'a> {
        &self.header
    }

    /// The module's name.
    pub const fn name(&self) -> &'a str {
        self.header.name
    }

    /// The constant pool.
    pub const fn pool(&self) -> &'a [u8] {
        self.pool
    }

    /// The executables.
    pub const fn executables(&self) -> Seq<'a, ExecutableDef<'a>> {
        self.header.executables
    }

    /// The constants.
    pub const fn constants(&self) -> Seq<'a, ConstantDef<'a>> {
        self.header.constants
    }

    /// The functions.
    pub const fn functions(&self) -> Seq<'a, FunctionDef<'a>> {
        self.header.functions
    }

    /// The function named `name`, with its index.
    pub fn function(&self, name: &str) -> Option<(u32, FunctionDef<'a>)> {
        let mut functions = self.functions().iter().enumerate();
        functions
            .find(|(_, f)| f.name == name)
            .map(|(i, f)| (i as u32, f))
    }

    /// The bytes of a pool range (empty if out of bounds, which validation rules out).
    pub fn pool_bytes(&self, range: PoolRange) -> &'a [u8] {
        let start = usize::try_from(range.offset).unwrap_or(usize::MAX);
        let len = usize::try_from(range.length).unwrap_or(usize::MAX);
        start
            .checked_add(len)
            .and_then(|end| self.pool.get(start..end))
            .unwrap_or(&[])
    }

    /// Checks that every executable names a kernel `linked` knows.
    pub fn check_kernels(&self, mut linked: impl FnMut(&str) -> bool) -> Result<(), ModuleError> {
        for (i, exe) in self.executables().iter().enumerate() {
            if !linked(exe.kernel) {
                let name = crate::ShortName::new(exe.kernel);
                let site = Site::Executable(i as u32);
                return Err(ModuleError::new(site, Problem::UnknownKernel { name }));
            }
        }
        Ok(())
    }

    /// Checks that every function's memory plan fits an arena of `available` bytes.
    pub fn check_arena(&self, available: u64) -> Result<(), ModuleError> {
        for (i, f) in self.functions().iter().enumerate() {
            if f.arena_size > available {
                let needed = f.arena_size;
                let problem = Problem::ArenaTooSmall { needed, available };
                return Err(ModuleError::new(Site::Function(i as u32), problem));
            }
        }
        Ok(())
    }

    /// Sizes for reports.
    pub fn sizes(&self) -> ModuleSizes {
        let header = u64::from(self.header_len);
        ModuleSizes {
            file: pool_offset(header) + self.pool.len() as u64,
            header,
            pool: self.pool.len() as u64,
            constants: self.constants().iter().map(|c| c.data.length).sum(),
            max_arena: self
                .functions()
                .iter()
                .map(|f| f.arena_size)
                .max()
                .unwrap_or(0),
        }
    }
}
