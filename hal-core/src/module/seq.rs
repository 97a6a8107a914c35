//! `Seq`: a sequence kept encoded in the module and decoded lazily, one element at a time.
//!
//! postcard cannot borrow a slice of structs, so each table of the header is stored as
//! `(count, bytes)`: `bytes` holds `count` postcard-encoded elements back to back. Decoding
//! the header borrows `bytes` and copies nothing; iterating decodes each element on the way.

use core::fmt;
use core::marker::PhantomData;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `count` postcard-encoded `T`s, back to back, borrowed from the module.
///
/// Invariant after [`Module::parse`](super::Module::parse): exactly `count` elements decode
/// from `bytes` and use all of it, so [`Seq::iter`] yields `count` elements.
pub struct Seq<'a, T> {
    count: u32,
    bytes: &'a [u8],
    element: PhantomData<fn() -> T>,
}

impl<T> Clone for Seq<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Seq<'_, T> {}

impl<T> PartialEq for Seq<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.bytes == other.bytes
    }
}

impl<T> fmt::Debug for Seq<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Seq({} elements, {} bytes)",
            self.count,
            self.bytes.len()
        )
    }
}

impl<'a, T> Seq<'a, T> {
    /// An empty sequence.
    pub const EMPTY: Self = Self::from_encoded(0, &[]);

    /// Wraps `count` elements already encoded in `bytes` (the builder and code generated
    /// at build time use this; [`Module::parse`](super::Module::parse) checks what it reads).
    pub const fn from_encoded(count: u32, bytes: &'a [u8]) -> Self {
        Self {
            count,
            bytes,
            element: PhantomData,
        }
    }

    /// Number of elements.
    pub const fn len(&self) -> u32 {
        self.count
    }

    /// Whether there are none.
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded elements.
    pub const fn encoded(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a, T: Deserialize<'a> + 'a> Seq<'a, T> {
    /// The elements, decoded one by one; stops early at an element that does not decode
    /// (never after [`Module::parse`](super::Module::parse) accepted the module).
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        self.try_iter().map_while(Result::ok)
    }

    /// Element `index`, decoding the ones before it (O(index)).
    pub fn get(&self, index: u32) -> Option<T> {
        self.iter().nth(index as usize)
    }

    /// The elements, with the byte offset (within [`Seq::encoded`]) where a decode failed.
    pub fn try_iter(&self) -> TryIter<'a, T> {
        TryIter {
            left: self.count,
            rest: self.bytes,
            consumed: 0,
            element: PhantomData,
        }
    }
}

/// Iterator over a [`Seq`] that reports where decoding failed.
pub struct TryIter<'a, T> {
    left: u32,
    rest: &'a [u8],
    consumed: usize,
    element: PhantomData<fn() -> T>,
}

impl<'a, T> TryIter<'a, T> {
    /// Bytes not yet decoded.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a, T: Deserialize<'a>> Iterator for TryIter<'a, T> {
    /// An element, or the byte offset of the one that failed to decode.
    type Item = Result<T, usize>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        match postcard::take_from_bytes::<T>(self.rest) {
            Ok((value, rest)) => {
                self.left -= 1;
                self.consumed += self.rest.len() - rest.len();
                self.rest = rest;
                Some(Ok(value))
            }
            Err(_) => {
                self.left = 0;
                Some(Err(self.consumed))
            }
        }
    }
}

/// The bytes field, written as postcard bytes (a length, then the raw bytes).
struct RawBytes<'a>(&'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

impl<T> Serialize for Seq<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.count, RawBytes(self.bytes)).serialize(serializer)
    }
}

impl<'de: 'a, 'a, T> Deserialize<'de> for Seq<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (count, bytes) = <(u32, &'a [u8])>::deserialize(deserializer)?;
        Ok(Self::from_encoded(count, bytes))
    }
}
