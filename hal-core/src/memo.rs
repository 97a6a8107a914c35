//! Memoization: resources built once — above all reusable command buffers — kept
//! per (device, queue affinity) and looked up at run time.
//!
//! The cache is a fixed-capacity table with linear lookup: a program memoizes a handful of
//! things per device, so a scan of a few entries beats hashing and needs no heap.

use crate::device::DeviceId;
use crate::semaphore::QueueAffinity;
use crate::Error;

/// What a memoized resource is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MemoKey {
    /// The device it was built on.
    pub device: DeviceId,
    /// The queues it was built for.
    pub affinity: QueueAffinity,
    /// The caller's name for the resource (a function index, a hash of its recipe).
    pub resource: u64,
}

/// How often the cache answered from memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MemoStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that built the resource.
    pub misses: u64,
}

/// A cache of up to `N` resources of type `V` (usually a handle).
pub struct MemoCache<V: Copy, const N: usize> {
    entries: [Option<(MemoKey, V)>; N],
    stats: MemoStats,
}

impl<V: Copy, const N: usize> Default for MemoCache<V, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Copy, const N: usize> MemoCache<V, N> {
    /// An empty cache.
    pub const fn new() -> Self {
        Self {
            entries: [None; N],
            stats: MemoStats { hits: 0, misses: 0 },
        }
    }

    /// The resource under `key`, if built.
    #[inline]
    pub fn get(&self, key: &MemoKey) -> Option<V> {
        self.entries
            .iter()
            .flatten()
            .find(|(k, _)| k == key)
            .map(|&(_, v)| v)
    }

    /// The resource under `key`, building it with `build` on the first lookup. A failed build
    /// stores nothing; a full cache is [`Error::TableFull`] (and `build` is not called).
    pub fn get_or_try_insert(
        &mut self,
        key: MemoKey,
        build: impl FnOnce() -> Result<V, Error>,
    ) -> Result<V, Error> {
        if let Some(v) = self.get(&key) {
            self.stats.hits += 1;
            return Ok(v);
        }
        let free = self
            .entries
            .iter_mut()
            .find(|e| e.is_none())
            .ok_or(Error::TableFull {
                table: "memo cache",
                capacity: N as u32,
            })?;
        let value = build()?;
        *free = Some((key, value));
        self.stats.misses += 1;
        Ok(value)
    }

    /// Forgets `key`, returning its resource so the caller can release it.
    pub fn remove(&mut self, key: &MemoKey) -> Option<V> {
        let entry = self
            .entries
            .iter_mut()
            .find(|e| e.is_some_and(|(k, _)| k == *key))?;
        entry.take().map(|(_, v)| v)
    }

    /// Forgets everything built on `device` (it is going away), handing each resource to
    /// `release`.
    pub fn evict_device(&mut self, device: DeviceId, mut release: impl FnMut(V)) {
        for entry in &mut self.entries {
            if entry.is_some_and(|(k, _)| k.device == device) {
                if let Some((_, v)) = entry.take() {
                    release(v);
                }
            }
        }
    }

    /// Hits and misses so far.
    pub const fn stats(&self) -> MemoStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_once_per_device_and_affinity() {
        let mut cache = MemoCache::<u32, 2>::new();
        let d = DeviceId::next();
        let key = MemoKey {
            device: d,
            affinity: QueueAffinity::ANY,
            resource: 7,
        };
        let mut builds = 0;
        for _ in 0..3 {
            let v = cache
                .get_or_try_insert(key, || {
                    builds += 1;
                    Ok(42)
                })
                .unwrap();
            assert_eq!(v, 42);
        }
        assert_eq!(builds, 1);
        assert_eq!(cache.stats(), MemoStats { hits: 2, misses: 1 });
        let other_queue = MemoKey {
            affinity: QueueAffinity(1),
            ..key
        };
        assert_eq!(cache.get(&other_queue), None);
        assert_eq!(
            cache.get_or_try_insert(other_queue, || Err(Error::Unsupported("x"))),
            Err(Error::Unsupported("x"))
        );
        cache.get_or_try_insert(other_queue, || Ok(1)).unwrap();
        let third = MemoKey { resource: 8, ..key };
        assert!(matches!(
            cache.get_or_try_insert(third, || Ok(3)),
            Err(Error::TableFull { .. })
        ));
        let mut released = 0;
        cache.evict_device(d, |_| released += 1);
        assert_eq!(released, 2);
        assert_eq!(cache.get(&key), None);
        assert_ne!(DeviceId::next(), d);
    }
}
