//! The `threads` feature: the workgroups of one dispatch run on a std worker pool.

use crate::workers::Workers;

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
}

// SAFETY: rayon's `for_each` over `0..count` calls the job once for each index, and
// `install` returns (or resumes a panic) only once every call has finished.
unsafe impl Workers for WorkerPool {
    fn width(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn fork(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        use rayon::prelude::*;
        self.pool
            .install(|| (0..count).into_par_iter().for_each(job));
    }
}
