//! [`ZeroOption`]: an `Option` whose `None` is all zero bytes.
//!
//! A device's tables live in a `static` built from a `const` empty value. The linker puts that
//! static in `.bss` (RAM only, zeroed at start-up) when every byte of its initial value is
//! zero, and in `.data` (RAM *and* a flash image of the same size) otherwise. `Option<T>`
//! often spells `None` with a non-zero niche value inside `T` (a `bool` field's 2, an enum's
//! unused tag), which would cost firmware tens of KiB of flash for empty tables.
//! `ZeroOption` is `repr(u8)` with `None = 0`: its tag always comes first and `None`'s tag is
//! zero, so an array of them starts out as zero bytes.

/// An `Option` with `None` encoded as a zero tag byte (see the [module docs](self)).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ZeroOption<T> {
    /// Nothing (tag 0).
    #[default]
    None = 0,
    /// A value (tag 1).
    Some(T) = 1,
}

impl<T> ZeroOption<T> {
    /// The value, by reference.
    #[inline]
    pub const fn as_ref(&self) -> Option<&T> {
        match self {
            Self::Some(v) => Some(v),
            Self::None => None,
        }
    }

    /// The value, mutably.
    #[inline]
    pub fn as_mut(&mut self) -> Option<&mut T> {
        match self {
            Self::Some(v) => Some(v),
            Self::None => None,
        }
    }

    /// Takes the value out, leaving `None`.
    #[inline]
    pub fn take(&mut self) -> Option<T> {
        match core::mem::take(self) {
            Self::Some(v) => Some(v),
            Self::None => None,
        }
    }

    /// Whether there is no value.
    #[inline]
    pub const fn is_none(&self) -> bool {
        matches!(self, Self::None)
    }

    /// Whether there is a value.
    #[inline]
    pub const fn is_some(&self) -> bool {
        !self.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::ZeroOption;

    #[test]
    fn behaves_like_option() {
        let mut x = ZeroOption::Some(5u32);
        assert!(x.is_some());
        assert_eq!(x.as_ref(), Some(&5));
        *x.as_mut().unwrap() = 6;
        assert_eq!(x.take(), Some(6));
        assert!(x.is_none());
        assert_eq!(x.take(), None);
        assert_eq!(ZeroOption::<u8>::default(), ZeroOption::None);
    }
}
