//! The `threads` feature: the workgroups of one dispatch run on a std worker pool.

use hal_core::Error;

/// A pool of worker threads (rayon's), made once per device.
pub(crate) struct WorkerPool {
    pool: rayon::ThreadPool,
}

impl WorkerPool {
    /// A pool of `workers` threads, or none for 1 (inline) or if the OS refuses threads.
    pub(crate) fn new(workers: usize) -> Option<Self> {
        if workers <= 1 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| std::format!("ember-local-{i}"))
            .build()
            .ok()
            .map(|pool| Self { pool })
    }

    /// Runs `run(0..total)` across the workers; the first error wins.
    pub(crate) fn run(
        &self,
        total: u64,
        run: &(dyn Fn(u64) -> Result<(), Error> + Sync),
    ) -> Result<(), Error> {
        use rayon::prelude::*;
        self.pool
            .install(|| (0..total).into_par_iter().try_for_each(run))
    }
}
