//! How a board sets up a local device.

use crate::kernel::Kernel;
use hal_core::MemoryDomain;

/// What the board hands the local driver besides its memory.
#[derive(Clone, Copy)]
pub struct LocalConfig {
    /// Largest single allocation; bigger buffers are chunked. Must be at least 64.
    pub max_allocation_size: u64,
    /// Bytes at the end of the region reserved for `queue_alloca` (an arena); 0 serves
    /// queue-ordered allocations from the general heap.
    pub transient_bytes: u64,
    /// Where the memory lives: `Host` for ordinary RAM (connection to the host is Unified);
    /// boards with device-private SRAM say so here.
    pub domain: MemoryDomain,
    /// The kernels linked into the program.
    pub kernels: &'static [Kernel],
    /// Threads that run a shared kernel's workgroups, and an exclusive kernel's output
    /// tiles, of one dispatch (`threads` feature); 1 runs everything inline on the
    /// caller's thread.
    pub workers: usize,
    /// Cores that run a dispatch's workgroups and output tiles with the submitting one
    /// (`cores` feature, for multi-core firmware; the other cores run
    /// [`Team::serve`](crate::team::Team::serve)). Exclusive with `workers > 1`.
    #[cfg(feature = "parallel")]
    pub team: Option<&'static dyn crate::workers::Workers>,
}

impl LocalConfig {
    /// The defaults, usable in `const` context: no chunking limit, no transient arena, a host
    /// domain, the built-in kernels, one (inline) worker.
    pub const DEFAULT: Self = Self {
        max_allocation_size: u64::MAX,
        transient_bytes: 0,
        domain: MemoryDomain::Host,
        kernels: crate::kernels::BUILTIN,
        workers: 1,
        #[cfg(feature = "parallel")]
        team: None,
    };
}

impl Default for LocalConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl core::fmt::Debug for LocalConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut out = f.debug_struct("LocalConfig");
        out.field("max_allocation_size", &self.max_allocation_size)
            .field("transient_bytes", &self.transient_bytes)
            .field("domain", &self.domain)
            .field("kernels", &self.kernels.len())
            .field("workers", &self.workers);
        #[cfg(feature = "parallel")]
        out.field("team", &self.team.map(|team| team.width()));
        out.finish()
    }
}
