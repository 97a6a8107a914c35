//! The static memory planner: gives every transient value an offset in one arena so that
//! values live at the same time never share bytes, keeping the arena small (host tools;
//! needs `alloc`).
//!
//! Greedy by size, as TensorFlow Lite Micro's arena planner does: values are placed largest
//! first (ties: earliest first use, then index), each at the best-fitting gap — the smallest
//! gap between values already placed whose lifetimes overlap its own — or past the last of
//! them. Deterministic for the same input.

use alloc::vec::Vec;

/// A value to place: its size and the inclusive range of steps that use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    /// Bytes.
    pub size: u64,
    /// First step that uses it.
    pub first: u32,
    /// Last step that uses it (`first <= last`).
    pub last: u32,
}

impl Lifetime {
    fn overlaps(&self, other: &Lifetime) -> bool {
        self.first <= other.last && other.first <= self.last
    }
}

/// Where each value goes, and the arena's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Offset of each value, in input order (multiples of the alignment).
    pub offsets: Vec<u64>,
    /// Bytes the arena needs (the end of the highest value, rounded up to the alignment).
    pub peak: u64,
    /// What the arena would need without reuse: the sum of the aligned sizes.
    pub unshared: u64,
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align) * align
}

/// Plans `values` with every offset a multiple of `align` (a power of two).
pub fn plan(values: &[Lifetime], align: u64) -> Plan {
    let align = align.max(1);
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| {
        let (va, vb) = (&values[a], &values[b]);
        vb.size
            .cmp(&va.size)
            .then(va.first.cmp(&vb.first))
            .then(a.cmp(&b))
    });
    let mut offsets = alloc::vec![0; values.len()];
    let mut placed: Vec<usize> = Vec::with_capacity(values.len());
    let mut peak = 0;
    for &i in &order {
        let v = values[i];
        let size = align_up(v.size, align);
        // The ranges in use while `v` lives, by offset.
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&p| values[p].overlaps(&v))
            .map(|&p| (offsets[p], offsets[p] + align_up(values[p].size, align)))
            .collect();
        busy.sort_unstable();
        let mut best: Option<(u64, u64)> = None; // (gap size, offset)
        let mut cursor = 0;
        for &(start, end) in &busy {
            if start >= cursor + size {
                let gap = start - cursor;
                if best.is_none_or(|(g, _)| gap < g) {
                    best = Some((gap, cursor));
                }
            }
            cursor = cursor.max(end);
        }
        let offset = best.map_or(cursor, |(_, at)| at);
        offsets[i] = offset;
        peak = peak.max(offset + size);
        placed.push(i);
    }
    let unshared = values.iter().map(|v| align_up(v.size, align)).sum();
    Plan {
        offsets,
        peak,
        unshared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life(size: u64, first: u32, last: u32) -> Lifetime {
        Lifetime { size, first, last }
    }

    #[test]
    fn disjoint_lifetimes_share_memory() {
        let p = plan(&[life(100, 0, 1), life(100, 2, 3), life(100, 4, 5)], 16);
        assert_eq!(p.offsets, [0, 0, 0]);
        assert_eq!(p.peak, 112);
        assert_eq!(p.unshared, 336);
    }

    #[test]
    fn a_chain_needs_two_buffers() {
        // x0 -> x1 -> x2 -> x3: each step reads one and writes the next.
        let p = plan(
            &[
                life(64, 0, 0),
                life(64, 0, 1),
                life(64, 1, 2),
                life(64, 2, 2),
            ],
            64,
        );
        assert_eq!(p.peak, 128);
    }

    #[test]
    fn best_fit_uses_the_smallest_gap() {
        // A big and a small value live together; once they die, a medium value and a small
        // one should fit in the holes.
        let values = [
            life(256, 0, 3),
            life(64, 0, 0),
            life(128, 1, 3),
            life(64, 2, 3),
        ];
        let p = plan(&values, 64);
        assert_eq!(p.peak, 448);
        check(&values, &p, 64);
    }

    fn check(values: &[Lifetime], p: &Plan, align: u64) {
        for (i, a) in values.iter().enumerate() {
            assert_eq!(p.offsets[i] % align, 0);
            assert!(p.offsets[i] + a.size <= p.peak);
            for (j, b) in values.iter().enumerate().skip(i + 1) {
                let share =
                    p.offsets[i] < p.offsets[j] + b.size && p.offsets[j] < p.offsets[i] + a.size;
                assert!(!(a.overlaps(b) && share), "{i} and {j} collide: {p:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn never_overlaps_and_never_worse_than_unshared(
            raw in proptest::collection::vec((1u64..5000, 0u32..20, 0u32..6), 0..40),
            align_log in 0u32..7,
        ) {
            let values: Vec<Lifetime> = raw.iter().map(|&(s, f, d)| life(s, f, f + d)).collect();
            let align = 1 << align_log;
            let p = plan(&values, align);
            check(&values, &p, align);
            proptest::prop_assert!(p.peak <= p.unshared);
            let widest = values.iter().map(|v| align_up(v.size, align)).max().unwrap_or(0);
            proptest::prop_assert!(p.peak >= widest);
        }
    }
}
