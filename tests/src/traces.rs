//! Deterministic allocation traces, generated once and replayed on every allocator.
//!
//! A trace is a list of [`Op`]s on numbered *slots*: `Alloc` puts a new allocation in a slot,
//! `Free` frees the allocation in a slot. The generator keeps track of which slots are live,
//! so every allocator sees exactly the same requests and the same victims, and the RNG never
//! runs inside the timed loop.
//!
//! | trace | sizes | alignment | live blocks | timed unit |
//! |---|---|---|---|---|
//! | `fixed256` | 256 B | 16 | 1,000 (constant) | a pair: free a random live block, allocate a new one |
//! | `random` | log-uniform 16 B–64 KiB | random power of two 4–4,096 | drifts 300 → 3,000 → 300 … | ops in random order; 2 ops = 1 pair |
//! | `efficiency` | log-uniform 16 B–64 KiB | 8 | grows until the first failure | not timed |
//!
//! `random` is a biased random walk: while growing, an op is an allocation with probability
//! 3/4 (else a free of a random live block) until 3,000 blocks are live; while shrinking, the
//! probability is 1/4 until 300 are live; and so on (the marks are soft: the walk may
//! overshoot them by a few blocks). Over the trace allocations and frees
//! balance out, so "ns per pair" is the time of two ops.
//!
//! `efficiency` is talc's heap-efficiency method: allocate random sizes, and one step in four
//! free a random live block instead, until the first allocation fails; the figure is the sum
//! of the *requested* sizes of the live blocks over the block size at that moment.

use crate::rng::SplitMix64;

/// One step of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Allocate `size` bytes aligned to `align` and keep the result in `slot` (empty before).
    Alloc {
        /// Where the allocation is kept.
        slot: u32,
        /// Bytes requested.
        size: u32,
        /// Alignment requested (a power of two).
        align: u32,
    },
    /// Free the allocation kept in `slot`.
    Free {
        /// Which allocation.
        slot: u32,
    },
}

/// Which trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// 256-byte blocks, 1,000 live, free-one-allocate-one pairs.
    Fixed256,
    /// Random sizes and alignments, live count drifting between 300 and 3,000.
    Random,
    /// Random sizes, allocate (with occasional frees) until the first failure.
    Efficiency,
}

impl TraceKind {
    /// All traces, in report order.
    pub const ALL: [TraceKind; 3] = [
        TraceKind::Fixed256,
        TraceKind::Random,
        TraceKind::Efficiency,
    ];

    /// The name used in the table and the JSON report.
    pub const fn name(self) -> &'static str {
        match self {
            TraceKind::Fixed256 => "fixed256",
            TraceKind::Random => "random",
            TraceKind::Efficiency => "efficiency",
        }
    }
}

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The real benchmark.
    Full,
    /// A tiny run (`EMBER_BENCH_QUICK=1`, and the smoke test).
    Quick,
}

impl Scale {
    /// `Quick` if `EMBER_BENCH_QUICK` is set to anything but `0` or empty, else `Full`.
    pub fn from_env() -> Self {
        match std::env::var("EMBER_BENCH_QUICK") {
            Ok(v) if !v.is_empty() && v != "0" => Scale::Quick,
            _ => Scale::Full,
        }
    }
}

/// Parameters of a trace. [`TraceConfig::new`] gives the benchmark's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceConfig {
    /// Which trace.
    pub kind: TraceKind,
    /// Size of the block every allocator manages, in bytes.
    pub block_size: u64,
    /// Live blocks after the prefill (`fixed256`: all the time; `random`: the low mark).
    pub live_low: u32,
    /// `random`: the high mark of the live count.
    pub live_high: u32,
    /// Pairs in one timed batch (`random`: `2 * pairs_per_batch` ops).
    pub pairs_per_batch: u32,
    /// Timed batches, warm-up included.
    pub batches: u32,
    /// Leading batches that are run but not counted.
    pub warmup_batches: u32,
    /// Seed of the PRNG.
    pub seed: u64,
}

/// Block size for the timed traces: 64 MiB.
pub const TIMED_BLOCK_SIZE: u64 = 64 << 20;
/// Block size for the efficiency trace: 16 MiB.
pub const EFFICIENCY_BLOCK_SIZE: u64 = 16 << 20;
/// Pairs per timed batch; p99 is a percentile over batches of this many pairs.
pub const PAIRS_PER_BATCH: u32 = 64;

impl TraceConfig {
    /// The benchmark's parameters for `kind` at `scale`.
    pub const fn new(kind: TraceKind, scale: Scale) -> Self {
        let quick = matches!(scale, Scale::Quick);
        let (block_size, live_low, live_high, batches, warmup) = match kind {
            TraceKind::Fixed256 => (
                TIMED_BLOCK_SIZE,
                1000,
                1000,
                if quick { 16 } else { 8192 },
                if quick { 2 } else { 512 },
            ),
            TraceKind::Random => {
                if quick {
                    (TIMED_BLOCK_SIZE, 30, 300, 32, 2)
                } else {
                    (TIMED_BLOCK_SIZE, 300, 3000, 4096, 256)
                }
            }
            TraceKind::Efficiency => (
                if quick {
                    1 << 20
                } else {
                    EFFICIENCY_BLOCK_SIZE
                },
                0,
                0,
                0,
                0,
            ),
        };
        Self {
            kind,
            block_size,
            live_low,
            live_high,
            pairs_per_batch: PAIRS_PER_BATCH,
            batches,
            warmup_batches: warmup,
            seed: 0xE3B3_0001 + kind as u64,
        }
    }

    /// Ops in one timed batch.
    pub const fn ops_per_batch(&self) -> usize {
        2 * self.pairs_per_batch as usize
    }
}

/// A generated trace.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The parameters it was made from.
    pub config: TraceConfig,
    /// Untimed ops that set up the live set (`fixed256`, `random`).
    pub prefill: Vec<Op>,
    /// The ops: timed in batches of [`TraceConfig::ops_per_batch`] (`fixed256`, `random`), or
    /// replayed until the first failure (`efficiency`).
    pub ops: Vec<Op>,
    /// Number of slots used; a replay needs this many handle places.
    pub slots: usize,
}

/// Live-set bookkeeping for the generator: which slots hold an allocation.
struct LiveSet {
    live: Vec<u32>,
    free_slots: Vec<u32>,
    next_slot: u32,
    /// Requested bytes per slot (for the efficiency generator's stopping rule).
    sizes: Vec<u64>,
    live_bytes: u64,
}

impl LiveSet {
    fn new() -> Self {
        Self {
            live: Vec::new(),
            free_slots: Vec::new(),
            next_slot: 0,
            sizes: Vec::new(),
            live_bytes: 0,
        }
    }

    fn alloc(&mut self, size: u32, align: u32) -> Op {
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.next_slot += 1;
            self.sizes.push(0);
            self.next_slot - 1
        });
        self.live.push(slot);
        self.sizes[slot as usize] = u64::from(size);
        self.live_bytes += u64::from(size);
        Op::Alloc { slot, size, align }
    }

    fn free_random(&mut self, rng: &mut SplitMix64) -> Op {
        let i = rng.below(self.live.len() as u64) as usize;
        let slot = self.live.swap_remove(i);
        self.free_slots.push(slot);
        self.live_bytes -= self.sizes[slot as usize];
        Op::Free { slot }
    }
}

fn random_size(rng: &mut SplitMix64) -> u32 {
    rng.log_uniform(16, 64 << 10) as u32
}

fn random_align(rng: &mut SplitMix64) -> u32 {
    1 << (2 + rng.below(11)) // 4 ..= 4096
}

impl Trace {
    /// Generates the trace described by `config`.
    pub fn generate(config: TraceConfig) -> Self {
        let mut rng = SplitMix64::new(config.seed);
        let mut set = LiveSet::new();
        let mut prefill = Vec::new();
        let mut ops = Vec::new();
        let total_ops = config.batches as usize * config.ops_per_batch();
        match config.kind {
            TraceKind::Fixed256 => {
                for _ in 0..config.live_low {
                    prefill.push(set.alloc(256, 16));
                }
                while ops.len() < total_ops {
                    ops.push(set.free_random(&mut rng));
                    ops.push(set.alloc(256, 16));
                }
            }
            TraceKind::Random => {
                for _ in 0..config.live_low {
                    prefill.push(set.alloc(random_size(&mut rng), random_align(&mut rng)));
                }
                let mut growing = true;
                while ops.len() < total_ops {
                    let live = set.live.len() as u32;
                    if live >= config.live_high {
                        growing = false;
                    } else if live <= config.live_low {
                        growing = true;
                    }
                    let p_alloc = if growing { 3 } else { 1 };
                    if set.live.is_empty() || rng.chance(p_alloc, 4) {
                        ops.push(set.alloc(random_size(&mut rng), random_align(&mut rng)));
                    } else {
                        ops.push(set.free_random(&mut rng));
                    }
                }
            }
            TraceKind::Efficiency => {
                // Past this many requested live bytes no allocator can succeed, so the replay
                // is sure to fail before the ops run out.
                while set.live_bytes <= config.block_size {
                    if !set.live.is_empty() && rng.chance(1, 4) {
                        ops.push(set.free_random(&mut rng));
                    } else {
                        ops.push(set.alloc(random_size(&mut rng), 8));
                    }
                }
            }
        }
        Trace {
            config,
            prefill,
            ops,
            slots: set.next_slot as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay_live(trace: &Trace) -> Vec<usize> {
        let mut live = vec![false; trace.slots];
        let mut counts = Vec::new();
        for op in trace.prefill.iter().chain(&trace.ops) {
            match *op {
                Op::Alloc { slot, .. } => {
                    assert!(!live[slot as usize]);
                    live[slot as usize] = true;
                }
                Op::Free { slot } => {
                    assert!(live[slot as usize]);
                    live[slot as usize] = false;
                }
            }
            counts.push(live.iter().filter(|&&l| l).count());
        }
        counts
    }

    #[test]
    fn traces_are_consistent() {
        for kind in TraceKind::ALL {
            let t = Trace::generate(TraceConfig::new(kind, Scale::Quick));
            let counts = replay_live(&t);
            if kind == TraceKind::Random {
                // A soft bound: a shrinking walk still allocates one op in four.
                let max = counts.iter().copied().max().unwrap();
                assert!((300..=320).contains(&max), "peak {max}");
                assert!(counts[t.prefill.len()..].iter().all(|&c| c >= 20));
            }
            assert_eq!(Trace::generate(t.config).ops, t.ops, "deterministic");
        }
    }
}
