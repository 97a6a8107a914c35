//! Scratch a tuned kernel works in, lent by the caller: where a program plans it (the
//! static program puts it in its arena, alive for the one step), the kernel needs no stack
//! buffer of its own. An empty [`Scratch`] (what [`Scratch::none`] gives, and what every
//! entry point without one passes) leaves the kernel to its stack.

/// Memory a tuned kernel may use for the length of one call; its contents on entry are
/// anything, and on return are left as the kernel left them.
#[derive(Debug)]
pub struct Scratch<'a> {
    /// Groups of four 32-bit words (16-byte aligned where the caller can: the static
    /// program's arena is).
    pub groups: &'a mut [[u32; 4]],
    /// Bytes.
    pub bytes: &'a mut [i8],
}

impl Scratch<'_> {
    /// No scratch: the kernel uses its stack.
    pub fn none() -> Scratch<'static> {
        Scratch {
            groups: &mut [],
            bytes: &mut [],
        }
    }
}
