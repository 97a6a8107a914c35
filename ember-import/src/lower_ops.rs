//! Each op's lowering: its kernel, its parameters and its bindings, following the
//! contracts `ember-kernels` declares.

use crate::lower::{site, LowerError, Lowering};
use crate::op::Op;

/// The ops Ember lowers, for error messages.
pub(crate) const SUPPORTED: &str = "RESHAPE";

/// Lowers `op` (anything but a view).
pub(crate) fn lower_op(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let _ = lowering;
    match &op.kind {
        kind => Err(LowerError::Unsupported {
            site: site(op),
            what: format!("{} with these types", kind.name()),
            supported: SUPPORTED,
        }),
    }
}
