//! `.npy` files for Ember's host-side tests, and the TFLM oracle's manifest.
//!
//! [`Array::parse`] reads the arrays the oracle (`cargo xtask oracle`, numpy's `np.save`)
//! writes: versions 1.0, 2.0 and 3.0 of the format, C order, little-endian `int8`, `uint8`,
//! `int16`, `int32` and `float32`. Anything else, and every malformed file, is an [`Error`],
//! never a panic. [`Array::to_npy`] writes the same bytes `np.save` does (version 1.0 while
//! the header fits, its header padded to a multiple of 64 bytes).
//!
//! The format is read and written here, not through the `npyz` crate: tried in its place,
//! npyz 0.9 panicked on shapes whose product overflows, took a minute over a 100-byte header
//! nested a dozen brackets deep and allocated whatever a corrupt header length asked for, so
//! ember-npy would have kept its own header checks around it; it cannot write `np.save`'s
//! bytes, which xtask's oracle check compares; and its header parser (pest and four more
//! crates) would be built into every board's firmware build script.
//!
//! [`oracle`] reads the oracle's `manifest.json` and reproduces its random inputs;
//! [`compare`] says whether Ember's outputs equal TFLM's.
//!
//! ```
//! use ember_npy::{Array, Data};
//! let a = Array::new(vec![1, 2], Data::I8(vec![-113, 113])).unwrap();
//! let bytes = a.to_npy();
//! assert_eq!(Array::parse(&bytes).unwrap(), a);
//! ```

pub mod compare;
pub mod oracle;

use std::fmt;
use std::path::{Path, PathBuf};

/// An element type the reader and writer handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// `int8` (`|i1`).
    I8,
    /// `uint8` (`|u1`).
    U8,
    /// `int16` (`<i2`).
    I16,
    /// `int32` (`<i4`).
    I32,
    /// `float32` (`<f4`).
    F32,
    /// `bool` (`|b1`): one byte, 0 or 1.
    Bool,
}

impl DType {
    /// Every type, in declaration order.
    pub const ALL: [DType; 6] = [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::I32,
        DType::F32,
        DType::Bool,
    ];

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::I16 => 2,
            DType::I32 | DType::F32 => 4,
        }
    }

    /// The `descr` numpy writes for it.
    pub fn descr(self) -> &'static str {
        match self {
            DType::I8 => "|i1",
            DType::U8 => "|u1",
            DType::I16 => "<i2",
            DType::I32 => "<i4",
            DType::F32 => "<f4",
            DType::Bool => "|b1",
        }
    }

    /// numpy's name for it, as the oracle's manifest writes it (`"int8"`, …).
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "int8",
            DType::U8 => "uint8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::F32 => "float32",
            DType::Bool => "bool",
        }
    }

    /// The type of a numpy name (`"int8"`, …).
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The type of a `descr`: one-byte types with any byte-order mark (`|`, `<`, `=` or
    /// none), wider ones little-endian (`<`) only.
    fn from_descr(descr: &str) -> Option<DType> {
        Some(match descr {
            "|i1" | "<i1" | "=i1" | "i1" | "|b" | "b" => DType::I8,
            "|u1" | "<u1" | "=u1" | "u1" | "|B" | "B" => DType::U8,
            "<i2" => DType::I16,
            "<i4" => DType::I32,
            "<f4" => DType::F32,
            "|b1" | "<b1" | "=b1" | "b1" | "|?" | "?" => DType::Bool,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An array's elements, in C order.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `int8` elements.
    I8(Vec<i8>),
    /// `uint8` elements.
    U8(Vec<u8>),
    /// `int16` elements.
    I16(Vec<i16>),
    /// `int32` elements.
    I32(Vec<i32>),
    /// `float32` elements.
    F32(Vec<f32>),
    /// `bool` elements.
    Bool(Vec<bool>),
}

impl Data {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Data::I8(_) => DType::I8,
            Data::U8(_) => DType::U8,
            Data::I16(_) => DType::I16,
            Data::I32(_) => DType::I32,
            Data::F32(_) => DType::F32,
            Data::Bool(_) => DType::Bool,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::I8(v) => v.len(),
            Data::U8(v) => v.len(),
            Data::I16(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::Bool(v) => v.len(),
        }
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as little-endian bytes (a tensor's bytes on every target Ember has).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Data::I8(v) => v.iter().map(|&x| x as u8).collect(),
            Data::U8(v) => v.clone(),
            Data::I16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::Bool(v) => v.iter().map(|&x| u8::from(x)).collect(),
        }
    }

    /// Elements of type `dtype` from little-endian bytes; `None` unless `bytes` is a whole
    /// number of elements.
    pub fn from_le_bytes(dtype: DType, bytes: &[u8]) -> Option<Data> {
        if bytes.len() % dtype.size() != 0 {
            return None;
        }
        fn words<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            bytes
                .chunks_exact(N)
                .map(|c| f(c.try_into().expect("chunks_exact gives N bytes")))
                .collect()
        }
        Some(match dtype {
            DType::I8 => Data::I8(bytes.iter().map(|&b| b as i8).collect()),
            DType::U8 => Data::U8(bytes.to_vec()),
            DType::I16 => Data::I16(words(bytes, i16::from_le_bytes)),
            DType::I32 => Data::I32(words(bytes, i32::from_le_bytes)),
            DType::F32 => Data::F32(words(bytes, f32::from_le_bytes)),
            DType::Bool => Data::Bool(bytes.iter().map(|&b| b != 0).collect()),
        })
    }
}

/// Why a file, an array or a manifest was refused.
#[derive(Debug)]
pub enum Error {
    /// Reading or writing a file failed.
    Io(PathBuf, std::io::Error),
    /// The file does not start with `\x93NUMPY`.
    Magic,
    /// A format version other than 1.0, 2.0 or 3.0.
    Version(u8, u8),
    /// The file ends inside its preamble or header.
    Truncated,
    /// The header is not the dictionary the format prescribes.
    Header(String),
    /// An element type this crate does not handle (big-endian, 64-bit, objects, …).
    Dtype(String),
    /// Fortran order: this crate reads C order only.
    FortranOrder,
    /// The data is not the size the shape and type say.
    Size {
        /// Bytes the header's shape and type call for (`None`: more than `usize` holds).
        expected: Option<usize>,
        /// Bytes the file has after its header.
        actual: usize,
    },
    /// A shape and a number of elements that disagree.
    Shape {
        /// The shape.
        shape: Vec<usize>,
        /// The number of elements.
        len: usize,
    },
    /// The oracle's manifest is not what `xtask/oracle/tflm_oracle.py` writes, or one of
    /// its arrays is not the type and shape it declares.
    Manifest(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Error::Magic => f.write_str("not a .npy file (no \\x93NUMPY magic)"),
            Error::Version(major, minor) => write!(f, ".npy format version {major}.{minor}"),
            Error::Truncated => f.write_str(".npy file ends inside its header"),
            Error::Header(why) => write!(f, "bad .npy header: {why}"),
            Error::Dtype(descr) => write!(f, "unsupported .npy dtype {descr:?}"),
            Error::FortranOrder => f.write_str(".npy array in Fortran order"),
            Error::Size { expected, actual } => match expected {
                Some(e) => write!(f, ".npy data is {actual} bytes, its header says {e}"),
                None => write!(f, ".npy shape too large ({actual} data bytes)"),
            },
            Error::Shape { shape, len } => {
                write!(f, "shape {shape:?} does not hold {len} elements")
            }
            Error::Manifest(why) => write!(f, "oracle manifest: {why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(_, e) => Some(e),
            _ => None,
        }
    }
}

/// An n-dimensional array: its shape and its elements in C order.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    shape: Vec<usize>,
    data: Data,
}

const MAGIC: &[u8] = b"\x93NUMPY";

impl Array {
    /// An array of `shape` (empty: a scalar) holding `data`, if their sizes agree.
    pub fn new(shape: Vec<usize>, data: Data) -> Result<Array, Error> {
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if count != Some(data.len()) {
            return Err(Error::Shape {
                shape,
                len: data.len(),
            });
        }
        Ok(Array { shape, data })
    }

    /// The shape (empty for a scalar).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// The elements, by value.
    pub fn into_data(self) -> Data {
        self.data
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The `int8` elements, if that is the type.
    pub fn as_i8(&self) -> Option<&[i8]> {
        match &self.data {
            Data::I8(v) => Some(v),
            _ => None,
        }
    }

    /// The `uint8` elements, if that is the type.
    pub fn as_u8(&self) -> Option<&[u8]> {
        match &self.data {
            Data::U8(v) => Some(v),
            _ => None,
        }
    }

    /// The `int16` elements, if that is the type.
    pub fn as_i16(&self) -> Option<&[i16]> {
        match &self.data {
            Data::I16(v) => Some(v),
            _ => None,
        }
    }

    /// The `int32` elements, if that is the type.
    pub fn as_i32(&self) -> Option<&[i32]> {
        match &self.data {
            Data::I32(v) => Some(v),
            _ => None,
        }
    }

    /// The `float32` elements, if that is the type.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match &self.data {
            Data::F32(v) => Some(v),
            _ => None,
        }
    }

    /// An array from the bytes of a `.npy` file.
    pub fn parse(bytes: &[u8]) -> Result<Array, Error> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(Error::Magic);
        }
        let (major, minor) = match bytes.get(6..8) {
            Some(&[major, minor]) => (major, minor),
            _ => return Err(Error::Truncated),
        };
        let (len_bytes, utf8) = match (major, minor) {
            (1, 0) => (2, false),
            (2, 0) => (4, false),
            (3, 0) => (4, true),
            _ => return Err(Error::Version(major, minor)),
        };
        let header_start = 8 + len_bytes;
        let header_len = match bytes.get(8..header_start) {
            Some(&[a, b]) => u16::from_le_bytes([a, b]) as usize,
            Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]) as usize,
            _ => return Err(Error::Truncated),
        };
        let data_start = header_start
            .checked_add(header_len)
            .ok_or(Error::Truncated)?;
        let header = bytes
            .get(header_start..data_start)
            .ok_or(Error::Truncated)?;
        let header: String = if utf8 {
            std::str::from_utf8(header)
                .map_err(|_| Error::Header("not UTF-8".into()))?
                .to_string()
        } else {
            // Versions 1.0 and 2.0 are latin-1; a valid header is ASCII.
            header.iter().map(|&b| b as char).collect()
        };
        let (descr, fortran_order, shape) = parse_header(&header)?;
        if fortran_order {
            return Err(Error::FortranOrder);
        }
        let dtype = DType::from_descr(&descr).ok_or(Error::Dtype(descr))?;
        let raw = &bytes[data_start..];
        let expected = shape
            .iter()
            .try_fold(dtype.size(), |n, &d| n.checked_mul(d));
        if expected != Some(raw.len()) {
            return Err(Error::Size {
                expected,
                actual: raw.len(),
            });
        }
        let data = Data::from_le_bytes(dtype, raw).ok_or(Error::Size {
            expected,
            actual: raw.len(),
        })?;
        Array::new(shape, data)
    }

    /// The bytes of a `.npy` file holding this array, as `np.save` writes them.
    pub fn to_npy(&self) -> Vec<u8> {
        let shape = match self.shape.as_slice() {
            [] => "()".to_string(),
            [d] => format!("({d},)"),
            dims => format!(
                "({})",
                dims.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.dtype().descr()
        );
        // numpy leaves room for the first dimension to grow to 21 digits, then pads the
        // header with spaces and a newline so that the data starts on a multiple of 64
        // bytes; version 2.0 only when the header outgrows a u16.
        if let Some(first) = self.shape.first() {
            let digits = first.to_string().len();
            header.push_str(&" ".repeat(21usize.saturating_sub(digits)));
        }
        let padded =
            |preamble: usize, header: &str| (preamble + header.len() + 1).div_ceil(64) * 64;
        let mut preamble = 10;
        if padded(preamble, &header) - preamble > usize::from(u16::MAX) {
            preamble = 12;
        }
        let total = padded(preamble, &header);
        header.push_str(&" ".repeat(total - preamble - header.len() - 1));
        header.push('\n');
        let mut out = Vec::with_capacity(total + self.len() * self.dtype().size());
        out.extend_from_slice(MAGIC);
        if preamble == 10 {
            out.extend_from_slice(&[1, 0]);
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&[2, 0]);
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.data.to_le_bytes());
        out
    }
}

/// Reads a `.npy` file.
pub fn read(path: impl AsRef<Path>) -> Result<Array, Error> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::Io(path.to_path_buf(), e))?;
    Array::parse(&bytes)
}

/// Writes `array` to a `.npy` file.
pub fn write(path: impl AsRef<Path>, array: &Array) -> Result<(), Error> {
    let path = path.as_ref();
    std::fs::write(path, array.to_npy()).map_err(|e| Error::Io(path.to_path_buf(), e))
}

/// The header's Python dictionary literal: `{'descr': …, 'fortran_order': …, 'shape': (…)}`,
/// keys in any order, each exactly once, and nothing else.
fn parse_header(header: &str) -> Result<(String, bool, Vec<usize>), Error> {
    let bad = |why: &str| Error::Header(format!("{why} in {:?}", header.trim_end()));
    let mut p = Cursor {
        s: header.as_bytes(),
        i: 0,
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    p.ws();
    if !p.eat(b'{') {
        return Err(bad("no opening brace"));
    }
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p
            .string()
            .ok_or_else(|| bad("a key that is not a string"))?;
        p.ws();
        if !p.eat(b':') {
            return Err(bad("no colon after a key"));
        }
        p.ws();
        let duplicate = match key.as_str() {
            "descr" => descr
                .replace(
                    p.string()
                        .ok_or_else(|| bad("a descr that is not a string"))?,
                )
                .is_some(),
            "fortran_order" => fortran
                .replace(
                    p.boolean()
                        .ok_or_else(|| bad("a fortran_order not True/False"))?,
                )
                .is_some(),
            "shape" => shape
                .replace(
                    p.tuple()
                        .ok_or_else(|| bad("a shape that is not a tuple"))?,
                )
                .is_some(),
            _ => return Err(bad(&format!("unknown key {key:?}"))),
        };
        if duplicate {
            return Err(bad(&format!("key {key:?} twice")));
        }
        p.ws();
        if p.eat(b',') {
            continue;
        }
        p.ws();
        if p.eat(b'}') {
            break;
        }
        return Err(bad("no comma or closing brace after a value"));
    }
    p.ws();
    if p.i != p.s.len() {
        return Err(bad("text after the closing brace"));
    }
    match (descr, fortran, shape) {
        (Some(d), Some(f), Some(s)) => Ok((d, f, s)),
        _ => Err(bad("a missing key")),
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.i += usize::from(hit);
        hit
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// A quoted string without escapes.
    fn string(&mut self) -> Option<String> {
        let quote = self.peek().filter(|&c| c == b'\'' || c == b'"')?;
        let start = self.i + 1;
        let len = self.s.get(start..)?.iter().position(|&c| c == quote)?;
        let text = std::str::from_utf8(&self.s[start..start + len]).ok()?;
        if text.contains('\\') {
            return None;
        }
        self.i = start + len + 1;
        Some(text.to_string())
    }

    fn boolean(&mut self) -> Option<bool> {
        for (word, value) in [("True", true), ("False", false)] {
            if self.s[self.i..].starts_with(word.as_bytes()) {
                self.i += word.len();
                return Some(value);
            }
        }
        None
    }

    /// `()`, `(n,)`, `(n, m)`, `(n, m,)`, … of non-negative integers (`(n)` is no tuple).
    fn tuple(&mut self) -> Option<Vec<usize>> {
        if !self.eat(b'(') {
            return None;
        }
        let mut dims = Vec::new();
        let mut comma = false;
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            if !dims.is_empty() && !comma {
                return None;
            }
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            let digits = std::str::from_utf8(&self.s[start..self.i]).ok()?;
            dims.push(digits.parse::<usize>().ok()?);
            self.eat(b'L'); // Python 2's long suffix.
            self.ws();
            comma = self.eat(b',');
        }
        if dims.len() == 1 && !comma {
            return None;
        }
        Some(dims)
    }
}
