//! `defmt::Format` for the bit-flag types: their raw bits, tagged with the type's name.

use super::{BufferUsage, MemoryAccess, MemoryType};

impl defmt::Format for MemoryType {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "MemoryType({=u32:#x})", self.bits());
    }
}

impl defmt::Format for BufferUsage {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "BufferUsage({=u32:#x})", self.bits());
    }
}

impl defmt::Format for MemoryAccess {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "MemoryAccess({=u16:#x})", self.bits());
    }
}
