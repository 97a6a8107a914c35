//! A FlexBuffer map of scalars: what custom ops keep their options in
//! (`custom_options`, format FLEXBUFFERS), read as FlatBuffers' `flexbuffers.h` reads it,
//! with every offset, width and length checked: malformed bytes are an error, never a
//! panic. Only scalar values (null, int, uint, float, bool, and their indirect forms) can be
//! read as numbers; other values (strings, vectors, maps, blobs) are kept as their type so
//! that asking for one is the error, not its presence.
//!
//! Layout (FlexBuffers): the last byte is the root's width, the one before it the root's
//! packed type (type `<< 2 |` log2 of its children's width); the root value sits before
//! them. A map's value is an offset back to its values (each of the map's width), preceded
//! by the offset to its keys vector, the keys' width and the count; the values' packed
//! types follow the values, one byte each; each key is an offset back to a NUL-terminated
//! string.

/// FlexBuffers' type codes used here.
const NULL: u8 = 0;
const INT: u8 = 1;
const UINT: u8 = 2;
const FLOAT: u8 = 3;
const INDIRECT_INT: u8 = 6;
const INDIRECT_UINT: u8 = 7;
const INDIRECT_FLOAT: u8 = 8;
const MAP: u8 = 9;
const BOOL: u8 = 26;

/// A value of the map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FlexValue {
    /// Null (also what a missing key reads as).
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float (widened to `f64` as FlexBuffers does).
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// Anything else: its FlexBuffers type code.
    Other(u8),
}

impl FlexValue {
    /// The type's name, for messages.
    fn describe(self) -> String {
        match self {
            Self::Null => "null".into(),
            Self::Int(_) => "an int".into(),
            Self::UInt(_) => "a uint".into(),
            Self::Float(_) => "a float".into(),
            Self::Bool(_) => "a bool".into(),
            Self::Other(5) => "a string".into(),
            Self::Other(4) => "a key".into(),
            Self::Other(9) => "a map".into(),
            Self::Other(25) => "a blob".into(),
            Self::Other(t) => format!("a value of FlexBuffers type {t} (not a scalar)"),
        }
    }

    /// `AsInt64`, for the scalars: an integer as is (a uint's bits), a float truncated
    /// (refused where C++ would be undefined: not finite or out of range), null 0.
    pub(crate) fn as_i64(self) -> Result<i64, String> {
        match self {
            Self::Null => Ok(0),
            Self::Int(v) => Ok(v),
            Self::UInt(v) => Ok(v as i64),
            Self::Bool(b) => Ok(i64::from(b)),
            Self::Float(f) if f.is_finite() && f.abs() < 9.2e18 => Ok(f as i64),
            Self::Float(f) => Err(format!("the float {f} is no integer")),
            Self::Other(_) => Err(format!("{} is no number", self.describe())),
        }
    }

    /// `AsInt32`: [`as_i64`](Self::as_i64) truncated to 32 bits, as C++'s cast.
    pub(crate) fn as_i32(self) -> Result<i32, String> {
        Ok(self.as_i64()? as i32)
    }

    /// `AsFloat`: the value as `f64`, then rounded to `f32`.
    pub(crate) fn as_f32(self) -> Result<f32, String> {
        match self {
            Self::Null => Ok(0.0),
            Self::Int(v) => Ok(v as f64 as f32),
            Self::UInt(v) => Ok(v as f64 as f32),
            Self::Bool(b) => Ok(if b { 1.0 } else { 0.0 }),
            Self::Float(f) => Ok(f as f32),
            Self::Other(_) => Err(format!("{} is no number", self.describe())),
        }
    }

    /// `AsBool`: a bool as is, any other scalar whether it is non-zero.
    pub(crate) fn as_bool(self) -> Result<bool, String> {
        match self {
            Self::Null => Ok(false),
            Self::Bool(b) => Ok(b),
            Self::Int(v) => Ok(v != 0),
            Self::UInt(v) => Ok(v != 0),
            Self::Float(f) if f.is_finite() && f.abs() < 1.8e19 => Ok(f as i128 != 0),
            Self::Float(f) => Err(format!("the float {f} is no boolean")),
            Self::Other(_) => Err(format!("{} is no boolean", self.describe())),
        }
    }
}

/// The root map of a FlexBuffer: each key with its value, in the file's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlexMap {
    entries: Vec<(String, FlexValue)>,
}

impl FlexMap {
    /// Reads `bytes`, whose root must be a map.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, String> {
        let r = Reader(bytes);
        let len = bytes.len();
        if len < 3 {
            return Err(format!("{len} bytes are too few for a FlexBuffer"));
        }
        let root_width = usize::from(bytes[len - 1]);
        let packed = bytes[len - 2];
        check_width(root_width)?;
        let root_at = (len - 2)
            .checked_sub(root_width)
            .ok_or("the root value runs before the buffer's start")?;
        if packed >> 2 != MAP {
            return Err(format!(
                "the root is {}, not a map",
                FlexValue::Other(packed >> 2).describe()
            ));
        }
        let width = 1usize << (packed & 3);
        let map = r.back(root_at, root_width)?;
        let count = r.uint(map.checked_sub(width).ok_or(OUTSIDE)?, width)?;
        let keys_field = map.checked_sub(3 * width).ok_or(OUTSIDE)?;
        let keys = r.back(keys_field, width)?;
        let key_width = r.uint(keys_field + width, width)?;
        let key_width = usize::try_from(key_width).map_err(|_| "a key width out of range")?;
        check_width(key_width)?;
        let key_count = r.uint(keys.checked_sub(key_width).ok_or(OUTSIDE)?, key_width)?;
        if key_count != count {
            return Err(format!("{count} values but {key_count} keys"));
        }
        // Each entry takes at least one byte of values, so a count past the buffer's length
        // is malformed (and no allocation follows it).
        let count = usize::try_from(count)
            .ok()
            .filter(|&c| c <= len)
            .ok_or(OUTSIDE)?;
        let types = count
            .checked_mul(width)
            .and_then(|n| n.checked_add(map))
            .ok_or(OUTSIDE)?;
        let mut entries = Vec::with_capacity(count);
        for i in 0..count {
            let key_at = keys + i * key_width;
            let name = r.string(r.back(key_at, key_width)?)?;
            let value = r.value(map + i * width, width, r.byte(types + i)?)?;
            entries.push((name, value));
        }
        Ok(Self { entries })
    }

    /// The value of `key`; [`FlexValue::Null`] where the map has none, as `flexbuffers.h`.
    pub(crate) fn get(&self, key: &str) -> FlexValue {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map_or(FlexValue::Null, |(_, v)| *v)
    }
}

const OUTSIDE: &str = "an offset or length points outside the buffer";

fn check_width(width: usize) -> Result<(), String> {
    if matches!(width, 1 | 2 | 4 | 8) {
        Ok(())
    } else {
        Err(format!("a byte width of {width}, not 1, 2, 4 or 8"))
    }
}

/// Bounds-checked little-endian reads.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes(&self, at: usize, width: usize) -> Result<&[u8], String> {
        let end = at.checked_add(width).ok_or(OUTSIDE)?;
        self.0.get(at..end).ok_or_else(|| OUTSIDE.to_string())
    }

    fn byte(&self, at: usize) -> Result<u8, String> {
        Ok(self.bytes(at, 1)?[0])
    }

    fn uint(&self, at: usize, width: usize) -> Result<u64, String> {
        let b = self.bytes(at, width)?;
        let mut v = [0u8; 8];
        v[..width].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    fn int(&self, at: usize, width: usize) -> Result<i64, String> {
        let shift = 64 - 8 * width as u32;
        Ok(((self.uint(at, width)? << shift) as i64) >> shift)
    }

    /// The position an offset at `at` points back to.
    fn back(&self, at: usize, width: usize) -> Result<usize, String> {
        let offset = usize::try_from(self.uint(at, width)?).map_err(|_| OUTSIDE)?;
        at.checked_sub(offset).ok_or_else(|| OUTSIDE.to_string())
    }

    fn string(&self, at: usize) -> Result<String, String> {
        let tail = self.0.get(at..).ok_or(OUTSIDE)?;
        let end = tail
            .iter()
            .position(|&b| b == 0)
            .ok_or("a key without its terminating NUL")?;
        String::from_utf8(tail[..end].to_vec()).map_err(|_| "a key that is not UTF-8".into())
    }

    fn float(&self, at: usize, width: usize) -> Result<f64, String> {
        match width {
            4 => Ok(f64::from(f32::from_bits(self.uint(at, 4)? as u32))),
            8 => Ok(f64::from_bits(self.uint(at, 8)?)),
            _ => Err(format!("a float {width} bytes wide")),
        }
    }

    /// The value at `at`, `width` bytes wide (its parent's), of packed type `packed`.
    fn value(&self, at: usize, width: usize, packed: u8) -> Result<FlexValue, String> {
        let child = 1usize << (packed & 3);
        Ok(match packed >> 2 {
            NULL => FlexValue::Null,
            INT => FlexValue::Int(self.int(at, width)?),
            UINT => FlexValue::UInt(self.uint(at, width)?),
            BOOL => FlexValue::Bool(self.uint(at, width)? != 0),
            FLOAT => FlexValue::Float(self.float(at, width)?),
            INDIRECT_INT => FlexValue::Int(self.int(self.back(at, width)?, child)?),
            INDIRECT_UINT => FlexValue::UInt(self.uint(self.back(at, width)?, child)?),
            INDIRECT_FLOAT => FlexValue::Float(self.float(self.back(at, width)?, child)?),
            other => FlexValue::Other(other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `flatbuffers.flexbuffers` (Python): a map of max_detections 10 (int), y_scale 10.0
    /// (float) and use_regular_nms false (bool).
    const SAMPLE: &str = "6d61785f646574656374696f6e7300795f7363616c65007573655f726567756c61\
        725f6e6d73000328121b000400000001000000030000000a0000000000000000002041066a0e0f2601";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn reads_a_map_of_scalars() {
        let map = FlexMap::parse(&hex(SAMPLE)).unwrap();
        assert_eq!(map.get("max_detections"), FlexValue::Int(10));
        assert_eq!(map.get("y_scale"), FlexValue::Float(10.0));
        assert_eq!(map.get("use_regular_nms"), FlexValue::Bool(false));
        assert_eq!(map.get("absent"), FlexValue::Null);
        assert_eq!(map.get("max_detections").as_f32(), Ok(10.0));
        assert_eq!(map.get("y_scale").as_i32(), Ok(10));
        assert_eq!(map.entries.len(), 3);
    }

    #[test]
    fn malformed_bytes_are_errors() {
        let good = hex(SAMPLE);
        assert!(FlexMap::parse(&[]).is_err());
        assert!(FlexMap::parse(&[0, 0, 3]).is_err());
        // Every truncation and every single-byte change either parses or errs; none panics.
        for cut in 0..good.len() {
            let _ = FlexMap::parse(&good[cut..]);
            let _ = FlexMap::parse(&good[..cut]);
        }
        for i in 0..good.len() {
            for v in [0u8, 1, 2, 3, 0x7f, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] = v;
                let _ = FlexMap::parse(&bad);
            }
        }
    }
}
