//! Ember's cross-crate tests and benchmark harnesses.
//!
//! [`conformance`] is the HAL conformance suite, written once against
//! [`hal_core::Device`]; it lives in its own `no_std` crate, `ember-conformance`
//! (`conformance/` at the workspace root), so firmware can run it too, and is re-exported
//! here with its host runner: implement [`conformance::Target`] for a driver and invoke
//! [`conformance_tests!`]`(YourTarget)` to get one `#[test]` per case
//! (`tests/conformance_local.rs` does it for the local driver). The HAL benchmark
//! (`cargo bench -p ember-tests --bench hal`) measures dispatch replay, queue-ordered
//! allocation and memoization on the local driver.
//!
//! The allocator benchmark (`cargo bench -p ember-tests --bench alloc`) drives Ember's
//! device-memory allocators ([`hal_core::memory::alloc`]) and four peers through the same
//! pre-generated traces:
//!
//! - [`rng`]: a tiny seeded PRNG (SplitMix64), so traces are deterministic and need no `rand`;
//! - [`traces`]: the op lists (`fixed256`, `random`, `efficiency`), generated once, outside
//!   the timed loop;
//! - [`adapter`]: the small [`adapter::BenchAllocator`] trait the harness drives, implemented
//!   for every Ember [`RangeAllocator`](hal_core::memory::alloc::RangeAllocator);
//! - [`peers`]: adapters for `offset-allocator`, `rlsf`, `talc` and `linked_list_allocator`
//!   (the last three over a real, pre-faulted memory region of the same size as the block);
//! - [`suite`]: the list of allocators under test, built per trace;
//! - [`baseline`]: an allocator that does nothing, run first on every timed trace, so that
//!   every figure is also reported net of the harness's own cost;
//! - [`harness`]: timing (batches of pairs), statistics, the checked run used by the smoke
//!   test, the result table and the JSON report.
//!
//! Set `EMBER_BENCH_QUICK=1` for a tiny run ([`traces::Scale::Quick`]); the smoke test
//! (`tests/bench_smoke.rs`) runs every trace at that scale on every allocator.

pub use ember_conformance as conformance;
pub use ember_conformance::conformance_tests;

pub mod adapter;
pub mod baseline;
pub mod harness;
pub mod peers;
pub mod rng;
pub mod suite;
pub mod traces;
