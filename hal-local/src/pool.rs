//! The `threads` feature: the workgroups of one dispatch run on a std worker pool.

#[cfg(feature = "exclusive")]
use hal_core::kernel::KernelError;
use hal_core::Error;

/// What runs one tile: its rows, and their elements.
#[cfg(feature = "exclusive")]
type TileFn<'f, T> =
    dyn Fn(core::ops::Range<usize>, &mut [T]) -> Result<(), KernelError> + Sync + 'f;

/// Tiles an exclusive kernel's output is cut into per worker (a little slack for uneven
/// tiles).
#[cfg(feature = "exclusive")]
const TILES_PER_WORKER: usize = 4;

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

    /// Cuts `output` (`rows` whole rows of `row_len` elements, `rows > 1`) into a few
    /// tiles per worker and calls `run(rows, tile)` for each across the workers; an error
    /// from any tile is the result.
    #[cfg(feature = "exclusive")]
    pub(crate) fn tiles<T: Send>(
        &self,
        output: &mut [T],
        rows: usize,
        row_len: usize,
        run: &TileFn<'_, T>,
    ) -> Result<(), KernelError> {
        use rayon::prelude::*;
        let tiles = (self.pool.current_num_threads() * TILES_PER_WORKER).clamp(1, rows);
        let per_tile = rows.div_ceil(tiles);
        self.pool.install(|| {
            output
                .par_chunks_mut((per_tile * row_len).max(1))
                .enumerate()
                .try_for_each(|(i, tile)| {
                    let start = i * per_tile;
                    run(start..start + tile.len() / row_len.max(1), tile)
                })
        })
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
