//! The host-side constant pool: page-aligned memory filled with a position-dependent
//! pattern by every core, with the per-window sums the checksum kernel must reproduce.

use std::alloc::{alloc, dealloc, Layout};

/// Asks Linux to back `ptr..ptr + len` with transparent huge pages (fewer page faults while
/// filling, fewer pages to pin when the driver imports it). Advice only: ignored elsewhere.
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        extern "C" {
            fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        // SAFETY: the range is one live allocation of ours; the advice changes no contents.
        let _ = unsafe { madvise(ptr.cast(), len, MADV_HUGEPAGE) };
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = (ptr, len);
}

/// The pool's word at `index` (the checksum kernel computes the same).
pub fn pattern(index: u64) -> u32 {
    let (lo, hi) = (index as u32, (index >> 32) as u32);
    let mut x = lo.wrapping_mul(0x9E37_79B1) ^ hi.wrapping_mul(0x85EB_CA77) ^ 0x5BD1_E995;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    x
}

/// `len` bytes of host memory aligned to 2 MiB (so imports start on a page boundary and
/// large pages can back it), released on drop.
pub struct HostPool {
    ptr: *mut u8,
    layout: Layout,
}

impl HostPool {
    /// Allocates `len` bytes (a multiple of 4), asks for transparent huge pages where
    /// `hugepages` (Linux), and fills them with [`pattern`] on `threads` threads (each page
    /// is first touched by the thread that fills it); returns the pool and the wrapping sum of
    /// every `window`-byte window's words.
    pub fn new(
        len: u64,
        window: u64,
        threads: usize,
        hugepages: bool,
    ) -> Result<(Self, Vec<u32>), String> {
        if len == 0 || len % 4 != 0 || window == 0 || window % 4 != 0 {
            return Err(format!("pool of {len} B in windows of {window} B"));
        }
        let size = usize::try_from(len).map_err(|_| "pool larger than the address space")?;
        let layout = Layout::from_size_align(size, 2 << 20).map_err(|e| e.to_string())?;
        // SAFETY: a non-zero size with a valid alignment. The bytes are uninitialised until
        // the fill below writes every one of them (`len` is a multiple of 4).
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            return Err(format!("cannot allocate a host pool of {len} B"));
        }
        let pool = Self { ptr, layout };
        if hugepages {
            advise_huge_pages(ptr, size);
        }
        let windows = len.div_ceil(window) as usize;
        let mut sums = vec![0u32; windows];
        // Whole windows per thread, so each window's sum is one thread's.
        let per_thread = windows.div_ceil(threads.max(1));
        let base = ptr as usize;
        std::thread::scope(|scope| {
            for (t, sums) in sums.chunks_mut(per_thread).enumerate() {
                scope.spawn(move || {
                    for (k, sum) in sums.iter_mut().enumerate() {
                        let w = (t * per_thread + k) as u64;
                        let start = w * window;
                        let words = (window.min(len - start) / 4) as usize;
                        let first = start / 4;
                        let at = (base + start as usize) as *mut u32;
                        let mut s = 0u32;
                        for i in 0..words {
                            let value = pattern(first + i as u64);
                            // SAFETY: word `first + i` lies inside the pool (windows split
                            // `0..len` among the threads without overlap); the pool is
                            // 2 MiB-aligned, so the word is aligned.
                            unsafe { at.add(i).write(value) };
                            s = s.wrapping_add(value);
                        }
                        *sum = s;
                    }
                });
            }
        });
        Ok((pool, sums))
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `layout.size()` bytes, all written by `new`,
        // borrowed shared with `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
}

impl Drop for HostPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_holds_the_pattern_and_window_sums() {
        let (pool, sums) = HostPool::new(3 * 4096 + 512, 4096, 3, true).unwrap();
        let words: Vec<u32> = pool
            .bytes()
            .chunks_exact(4)
            .map(|w| u32::from_ne_bytes(w.try_into().unwrap()))
            .collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(*w, pattern(i as u64));
        }
        assert_eq!(sums.len(), 4);
        for (k, chunk) in words.chunks(1024).enumerate() {
            let s = chunk.iter().fold(0u32, |a, &w| a.wrapping_add(w));
            assert_eq!(sums[k], s);
        }
        assert_eq!(pool.bytes().as_ptr() as usize % (2 << 20), 0);
    }

    #[test]
    fn pattern_depends_on_both_halves() {
        assert_ne!(pattern(5), pattern(5 + (1 << 32)));
        assert_ne!(pattern(0), pattern(1));
    }
}
