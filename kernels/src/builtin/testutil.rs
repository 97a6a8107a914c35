//! Shorthands for the built-in contracts' tests.

use super::find;
use hal_core::contract::BindingFacts;
use hal_core::kernel::KernelError;

pub(super) fn rw(len: u64) -> BindingFacts {
    BindingFacts {
        offset: 0,
        len,
        writable: true,
    }
}

pub(super) fn ro(len: u64) -> BindingFacts {
    BindingFacts {
        writable: false,
        ..rw(len)
    }
}

pub(super) fn at(offset: u64, b: BindingFacts) -> BindingFacts {
    BindingFacts { offset, ..b }
}

pub(super) fn small(index: u32, len: u64, needed: u64) -> KernelError {
    KernelError::BindingTooSmall { index, len, needed }
}

pub(super) fn missing(index: u32, bound: u32) -> KernelError {
    KernelError::MissingBinding { index, bound }
}

pub(super) fn constants(needed: u32, given: u32) -> KernelError {
    KernelError::MissingConstants { needed, given }
}

pub(super) fn misaligned(index: u32) -> KernelError {
    KernelError::Misaligned {
        index,
        alignment: 4,
    }
}

pub(super) fn read_only(index: u32) -> KernelError {
    KernelError::ReadOnly { index }
}

pub(super) fn shape(what: &'static str) -> KernelError {
    KernelError::Shape(what)
}

/// Checks a dispatch of the built-in kernel `name` against its contract.
pub(super) fn check(
    name: &str,
    constants: &[u32],
    bindings: &[BindingFacts],
) -> Result<(), KernelError> {
    find(name).expect(name).check(constants, bindings).map(drop)
}
