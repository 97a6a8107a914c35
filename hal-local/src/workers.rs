//! Where the work of one dispatch runs besides the submitting thread: a [`Workers`] set
//! (the `threads` feature's std pool, or a [`Team`](crate::team::Team) of cores in
//! firmware), and the two ways replay uses one: a shared kernel's workgroups, and an
//! exclusive kernel's output cut into tiles.

use core::sync::atomic::{AtomicBool, Ordering};

/// A set of workers that runs the calls of one fork at once.
///
/// # Safety
///
/// `fork` must call `job(i)` exactly once for every `i < count` and never with any other
/// `i`, and return (or unwind) only after every call has returned: `tiles` hands each
/// call a `&mut` piece of one output on that promise.
pub unsafe trait Workers: Sync {
    /// How many run at once, the caller among them (at least 1).
    fn width(&self) -> usize;

    /// Calls `job(i)` exactly once for every `i` in `0..count`, spread over the workers,
    /// and returns once every call has returned. A fork that cannot use the workers (one
    /// already running, or a worker missing) runs every call on the caller instead.
    fn fork(&self, count: usize, job: &(dyn Fn(usize) + Sync));
}

#[cfg(feature = "exclusive")]
/// Tiles an output is cut into per worker: a little slack for uneven tiles.
const TILES_PER_WORKER: usize = 4;

/// Calls `run(i)` for every `i` in `0..count` on `workers`; once one fails the calls not
/// yet started are skipped, and an error (the first recorded) is the result.
pub(crate) fn try_fork<E: Send>(
    workers: &dyn Workers,
    count: usize,
    run: &(dyn Fn(usize) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let failed = AtomicBool::new(false);
    let failure = spin::Mutex::new(None);
    workers.fork(count, &|i| {
        if failed.load(Ordering::Relaxed) {
            return;
        }
        if let Err(error) = run(i) {
            failed.store(true, Ordering::Relaxed);
            failure.lock().get_or_insert(error);
        }
    });
    failure.into_inner().map_or(Ok(()), Err)
}

#[cfg(feature = "exclusive")]
/// What runs one tile: its rows, and their elements.
type TileFn<'f, T, E> = dyn Fn(core::ops::Range<usize>, &mut [T]) -> Result<(), E> + Sync + 'f;

#[cfg(feature = "exclusive")]
/// A pointer to the output that may cross threads: each fork call makes its own disjoint
/// tile from it.
struct TileBase<T>(*mut T);

#[cfg(feature = "exclusive")]
// SAFETY: the pointer stands for the `&mut [T]` `tiles` was given; handing it to other
// threads hands them disjoint parts of it (see `tiles`), which `T: Send` allows.
unsafe impl<T: Send> Sync for TileBase<T> {}

#[cfg(feature = "exclusive")]
/// Cuts `output` (at least `rows` whole rows of `row_len` elements) into a few tiles of
/// whole rows per worker and calls `run(rows, tile)` for each across `workers`; an error
/// from any tile is the result.
pub(crate) fn tiles<T: Send, E: Send>(
    workers: &dyn Workers,
    output: &mut [T],
    rows: usize,
    row_len: usize,
    run: &TileFn<'_, T, E>,
) -> Result<(), E> {
    let Some(output) = rows.checked_mul(row_len).and_then(|n| output.get_mut(..n)) else {
        return run(0..rows, output);
    };
    if rows == 0 {
        return run(0..0, output);
    }
    let per_tile = rows.div_ceil((workers.width() * TILES_PER_WORKER).clamp(1, rows));
    let count = rows.div_ceil(per_tile);
    let base = TileBase(output.as_mut_ptr());
    let base = &base;
    try_fork(workers, count, &|i| {
        let start = i * per_tile;
        let end = (start + per_tile).min(rows);
        // SAFETY: `Workers`' contract gives each `i < count` once (and no other), so
        // `start < rows` and the tile is elements
        // `start * row_len .. end * row_len` of `output`, which holds `rows * row_len`
        // (sliced above). Tiles of distinct `i` are disjoint and each `i` is called once,
        // and `output` stays mutably borrowed until the fork returns, so this is the only
        // view of those elements while it lives.
        let tile = unsafe {
            core::slice::from_raw_parts_mut(base.0.add(start * row_len), (end - start) * row_len)
        };
        run(start..end, tile)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs every call on the caller, in reverse order (so a test sees that order does
    /// not matter).
    struct Backwards;

    // SAFETY: every `i < count` once, in turn, on the caller.
    unsafe impl Workers for Backwards {
        fn width(&self) -> usize {
            3
        }
        fn fork(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
            (0..count).rev().for_each(job);
        }
    }

    #[cfg(feature = "exclusive")]
    #[test]
    fn tiles_cover_the_output_once_each() {
        for rows in [0usize, 1, 2, 5, 11, 12, 13, 40] {
            let mut out = [0u32; 3 * 40 + 2];
            tiles::<u32, ()>(&Backwards, &mut out, rows, 3, &|range, tile| {
                assert_eq!(tile.len(), range.len() * 3);
                for (row, chunk) in range.zip(tile.chunks_mut(3)) {
                    for (j, v) in chunk.iter_mut().enumerate() {
                        *v += (row * 3 + j) as u32 + 1;
                    }
                }
                Ok(())
            })
            .unwrap();
            for (k, v) in out.iter().enumerate() {
                assert_eq!(
                    *v,
                    if k < rows * 3 { k as u32 + 1 } else { 0 },
                    "rows {rows}"
                );
            }
        }
    }

    #[cfg(feature = "exclusive")]
    #[test]
    fn an_output_shorter_than_its_rows_runs_whole() {
        let mut out = [0u8; 5];
        let mut seen = 0;
        let seen_ref = spin::Mutex::new(&mut seen);
        tiles::<u8, ()>(&Backwards, &mut out, 3, 2, &|range, tile| {
            **seen_ref.lock() += 1;
            assert_eq!((range, tile.len()), (0..3, 5));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 1);
    }

    #[test]
    fn a_failed_call_is_the_result_and_later_calls_are_skipped() {
        let calls = core::sync::atomic::AtomicUsize::new(0);
        let result = try_fork(&Backwards, 10, &|i| {
            calls.fetch_add(1, Ordering::Relaxed);
            if i == 7 {
                Err(i)
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err(7));
        // 9, 8 and 7 ran; 6..0 were skipped.
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }
}
