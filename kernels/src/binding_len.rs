//! Byte-length checks shared by the element-wise and row-wise kernels' `check` methods.

use hal_core::kernel::KernelError;

/// Binding `index` of `binding_lens` (byte lengths, in binding order) holds at least `needed`
/// bytes: [`KernelError::MissingBinding`] if the dispatch bound fewer bindings,
/// [`KernelError::BindingTooSmall`] if it is shorter.
pub fn require(binding_lens: &[usize], index: u32, needed: usize) -> Result<(), KernelError> {
    let len = *binding_lens
        .get(index as usize)
        .ok_or(KernelError::MissingBinding {
            index,
            bound: binding_lens.len() as u32,
        })?;
    if len < needed {
        return Err(KernelError::BindingTooSmall {
            index,
            len: len as u64,
            needed: needed as u64,
        });
    }
    Ok(())
}

/// `count` elements of `elem_bytes` bytes each, refusing a zero count and a byte size that
/// overflows `usize` (with [`KernelError::Shape`] and `what`).
pub fn byte_len(count: usize, elem_bytes: usize, what: &'static str) -> Result<usize, KernelError> {
    if count == 0 {
        return Err(KernelError::Shape(what));
    }
    count
        .checked_mul(elem_bytes)
        .ok_or(KernelError::Shape(what))
}

/// `outer * depth` elements of `max_elem_bytes` bytes at most each, refusing zeros and
/// overflow; the element count.
pub fn rows_len(
    outer: usize,
    depth: usize,
    max_elem_bytes: usize,
    what: &'static str,
) -> Result<usize, KernelError> {
    if outer == 0 || depth == 0 {
        return Err(KernelError::Shape(what));
    }
    let count = outer.checked_mul(depth).ok_or(KernelError::Shape(what))?;
    byte_len(count, max_elem_bytes, what)?;
    Ok(count)
}

/// The binding length in bytes of a slice of `T`.
pub fn slice_bytes<T>(s: &[T]) -> usize {
    core::mem::size_of_val(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn require_reports_the_binding() {
        assert_eq!(require(&[4, 8], 1, 8), Ok(()));
        assert_eq!(
            require(&[4, 7], 1, 8),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 7,
                needed: 8
            })
        );
        assert_eq!(
            require(&[4], 1, 8),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
    }

    #[test]
    fn lengths_refuse_zero_and_overflow() {
        assert!(byte_len(0, 4, "x").is_err());
        assert!(byte_len(usize::MAX / 2, 4, "x").is_err());
        assert_eq!(byte_len(3, 4, "x"), Ok(12));
        assert!(rows_len(0, 3, 1, "x").is_err());
        assert!(rows_len(3, 0, 1, "x").is_err());
        assert!(rows_len(usize::MAX, 2, 1, "x").is_err());
        assert_eq!(rows_len(3, 5, 4, "x"), Ok(15));
    }
}
