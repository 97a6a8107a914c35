#![doc = include_str!("../README.md")]
#![no_std]
// The crate documentation links the suite, which is not there without `alloc`.
#![cfg_attr(not(feature = "alloc"), allow(rustdoc::broken_intra_doc_links))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "alloc")]
use alloc::{boxed::Box, vec, vec::Vec};
#[cfg(feature = "alloc")]
use hal_core::device::ObjectCounts;
#[cfg(feature = "alloc")]
use hal_core::memory::alloc::AllocStats;
#[cfg(feature = "alloc")]
use hal_core::memory::{BufferParams, BufferUsage};
#[cfg(feature = "alloc")]
use hal_core::{
    Buffer, BufferRef, BufferSpan, CommandBuffer, CommandBufferMode, Device, Error, Executable,
    ExecutableSource, Record, SemaphoreValue, Submit, Timeout, Workgroups,
};
#[cfg(feature = "std")]
use std::time::Duration;

/// Asserts that `$result` is an error matching `$pat` and evaluates to that error; the
/// message after the pattern says which check failed.
#[cfg(feature = "alloc")]
macro_rules! assert_err {
    ($result:expr, $pat:pat, $($ctx:tt)+) => {
        match $result {
            Ok(_) => panic!(
                "{}: expected Err({}), got Ok",
                format_args!($($ctx)+),
                stringify!($pat)
            ),
            Err(e) => {
                assert!(
                    matches!(e, $pat),
                    "{}: expected Err({}), got Err({:?})",
                    format_args!($($ctx)+),
                    stringify!($pat),
                    e
                );
                e
            }
        }
    };
}

pub mod range_allocators;

#[cfg(feature = "alloc")]
pub mod bad_input;
#[cfg(feature = "alloc")]
pub mod barriers;
#[cfg(feature = "alloc")]
pub mod binding_tables;
#[cfg(feature = "alloc")]
pub mod buffer_allocation;
#[cfg(feature = "alloc")]
pub mod chunked;
#[cfg(feature = "alloc")]
pub mod command_buffers;
#[cfg(feature = "alloc")]
pub mod command_validation;
#[cfg(feature = "alloc")]
pub mod dispatch;
#[cfg(feature = "alloc")]
pub mod dispatch_failures;
#[cfg(feature = "alloc")]
pub mod import;
#[cfg(feature = "alloc")]
pub mod mapping;
#[cfg(feature = "alloc")]
pub mod memo;
#[cfg(feature = "alloc")]
pub mod module;
#[cfg(feature = "alloc")]
pub mod queue_alloc;
#[cfg(feature = "alloc")]
pub mod semaphores;
#[cfg(feature = "alloc")]
pub mod transfer;
#[cfg(feature = "alloc")]
pub mod transfer_commands;

pub use range_allocators::{allocator_checks, check_range_allocator, AllocatorCheck};

/// What a driver provides to run the suite.
#[cfg(feature = "alloc")]
pub trait Target {
    /// The driver's device.
    type Device: Device<HostMemory: From<&'static [u8]>>;
    /// A fresh device. Its heap 0 must be host-visible and its max_allocation_size small
    /// enough (≤ 1 MiB) that tests can make chunked buffers of a few chunks.
    fn create() -> Self::Device;
    /// Host memory for import (read-write), leaked by the test.
    fn host_memory(bytes: &'static mut [u8]) -> <Self::Device as Device>::HostMemory;
    /// Read-only host memory for import (constants).
    fn host_memory_read_only(bytes: &'static [u8]) -> <Self::Device as Device>::HostMemory;
    /// How this driver loads a built-in kernel by name ("fill_u32", "copy_u32", "add_f32",
    /// "mul_f32", "relu_f32", "matmul_f32", "softmax_f32", "noop").
    fn kernel(name: &'static str) -> ExecutableSource<'static>;
    /// A source naming a kernel this driver does not have; loading it must fail with
    /// [`Error::UnknownKernel`].
    fn unknown_kernel() -> ExecutableSource<'static> {
        ExecutableSource::Kernel("no_such_kernel")
    }
    /// Whether the cases of this target must run one at a time, each alone in the process
    /// (`run_case_alone`, with the `std` feature): true where something below the driver
    /// cannot take one thread making or dropping a device while another uses a different
    /// one. False by default.
    fn cases_one_at_a_time() -> bool {
        false
    }
}

/// One conformance case, as [`cases`] lists it for a target: its area (the module it lives
/// in, `"dispatch"`), its name (`"dispatch_matmul"`) and the function that runs it. `run`
/// returns when the case passes and panics, saying which check failed, when it does not.
#[derive(Clone, Copy, Debug)]
#[cfg(feature = "alloc")]
pub struct Case {
    /// The area: the module of this crate the case lives in (`"buffer_allocation"`,
    /// `"dispatch"`, …).
    pub area: &'static str,
    /// The case's name within its area: its function's name (`"dispatch_matmul"`).
    pub name: &'static str,
    /// Runs the case for the target [`cases`] was called with: builds its own devices, checks
    /// them, releases them; panics on failure.
    pub run: fn(),
}

/// Every conformance case for target `T`, in the suite's order (area by area, as
/// `conformance_tests!` lists them), for firmware to filter by [`Case::area`] or
/// [`Case::name`] and run one after the other. Needs no `std`: a case runs on the caller's
/// stack and allocates from the global allocator (its devices, buffers of host data).
#[cfg(feature = "alloc")]
pub fn cases<T: Target>() -> Vec<Case> {
    crate::__conformance_list!(__conformance_case_list(T))
}

/// The one list of conformance cases, area by area: passes `$($args)*;` then the list to
/// `$crate::$callback!`. [`conformance_tests!`](crate::conformance_tests) and [`cases`] are both
/// generated from it.
#[doc(hidden)]
#[macro_export]
#[cfg(feature = "alloc")]
macro_rules! __conformance_list {
    ($callback:ident($($args:tt)*)) => {
        $crate::$callback! { $($args)*;
            buffer_allocation: heaps, allocate_release, stats, alignment, params_refused,
                zero_and_huge_sizes, failed_chunked_allocation_leaks_nothing, table_full;
            mapping: scoped_read_write, whole_length, bounds, access, read_only_buffer,
                needs_mapping_usage, persistent_lifecycle, persistent_needs_usage,
                persistent_gone_with_buffer, stale_after_release;
            import: read_write_is_zero_copy, read_only_refuses_writes,
                read_only_refuses_write_access;
            chunked: layout, host_read_write_across_chunks, fill_across_chunks,
                copy_across_chunks, update_across_chunks, map_within_and_across_chunks,
                dispatch_binding_within_a_chunk, empty_range_at_the_end_maps;
            transfer_commands: fill_patterns, queue_fill_patterns, update, queue_update, copy,
                queue_copy;
            dispatch: dispatch_elementwise, dispatch_add, dispatch_matmul,
                dispatch_matmul_bias_relu, dispatch_softmax, dispatch_copy_and_fill_kernels,
                dispatch_noop, indirect_dispatch, dispatch_large;
            dispatch_failures: kernel_errors_fail_the_submission, dispatch_respects_access, failures_carry_their_kind;
            barriers: barrier_orders_commands;
            command_validation: wrong_usage, out_of_range, overlapping_copy, bad_fill, limits,
                unknown_executable;
            command_buffers: recording_after_end, submit_before_end, one_shot_submitted_twice,
                capacity, usable_after_record_error, release_while_pending,
                refused_one_shot_submitted_later;
            binding_tables: reused_with_different_tables, missing_slots, slot_past_capacity,
                slot_range_out_of_bounds, stale_buffer_in_table, table_needs_usage,
                overlapping_slots, one_shot_with_slots;
            semaphores: create_query_signal, wait_already_satisfied, wait_immediate_unsatisfied,
                host_signal_releases_queued_work, fail_propagates_through_chain,
                failing_op_fails_its_signals, first_failure_wins, wait_never_satisfied,
                stale_semaphores, release_while_pending;
            queue_alloc: ordered_by_semaphores, ordered_behind_host_signal, no_leak,
                many_live_at_once, dealloca_stale;
            memo: built_once_replayed, keyed_by_device_and_affinity;
            module: mlp_matches_host, constants_imported_or_streamed, replay_is_memoized,
                unknown_kernel_is_a_module_error, capacity_is_checked, bad_calls_are_errors,
                result_memory, copy_fill_and_no_arena, kernel_failure_leaves_session_usable;
            transfer: queue_read_streams, queue_read_refuses_bad_input,
                queue_read_source_failure, copy_between_devices,
                copy_between_unmappable_buffers;
            bad_input: unknown_kernel, out_of_range_copies, out_of_range_fills_and_updates,
                span_lengths_bound_copies_and_updates, out_of_range_maps, out_of_range_bindings,
                host_io_length_mismatch,
                stale_buffers, stale_command_buffers, stale_executables,
                stale_semaphores_in_submits, stale_mappings, released_buffer_in_recording,
                buffer_table_full, semaphore_table_full, command_buffer_table_full,
                executable_table_full, pending_table_full, huge_command_buffer,
                huge_queue_alloca, release_buffer_while_pending, absurd_grid;
        }
    };
}

/// Implementation detail of [`cases`]: the list as a `Vec<Case>`.
#[doc(hidden)]
#[macro_export]
#[cfg(feature = "alloc")]
macro_rules! __conformance_case_list {
    ($target:ty; $($area:ident : $($case:ident),+ ;)+) => {
        $crate::__private::vec![
            $($(
                $crate::Case {
                    area: stringify!($area),
                    name: stringify!($case),
                    run: $crate::$area::$case::<$target>,
                },
            )+)+
        ]
    };
}

/// Expands to one `#[test]` per conformance case for the [`Target`](crate::Target) type given,
/// in one module per area (`buffer_allocation::heaps`, `dispatch::dispatch_matmul`, …), each
/// run by [`run_case`](crate::run_case). Invoke it once per target, each in its own module.
/// Needs the `std` feature.
#[cfg(feature = "std")]
#[macro_export]
macro_rules! conformance_tests {
    ($target:ty) => {
        $crate::__conformance_list!(__conformance_cases($target));
    };
}

/// Implementation detail of [`conformance_tests!`].
#[cfg(feature = "std")]
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_cases {
    ($target:ty; $($area:ident : $($case:ident),+ ;)+) => {
        $(
            mod $area {
                #[allow(unused_imports)]
                use super::*;
                $(
                    #[test]
                    fn $case() {
                        let name = concat!(stringify!($area), "::", stringify!($case));
                        let case = $crate::$area::$case::<$target>;
                        if <$target as $crate::Target>::cases_one_at_a_time() {
                            $crate::run_case_alone(name, case);
                        } else {
                            $crate::run_case(name, case);
                        }
                    }
                )+
            }
        )+
    };
}

/// Not public API: what the exported macros name through `$crate`.
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub mod __private {
    pub use alloc::vec;
}

/// Cases whose failure mode is a hang, run under a 30 s watchdog instead of 300 s.
#[cfg(feature = "std")]
const SHORT_CASES: &[&str] = &["bad_input::absurd_grid"];

/// Runs one case on its own thread with a 64 MiB stack, failing it (with its name) if it
/// panics or runs past the watchdog's limit (300 s, 30 s for the cases that probe for hangs;
/// `EMBER_CONFORMANCE_TIMEOUT_S` overrides both). Needs the `std` feature.
#[cfg(feature = "std")]
pub fn run_case(name: &'static str, case: fn()) {
    // Cases that probe for hangs get a short leash.
    let default = if SHORT_CASES.contains(&name) { 30 } else { 300 };
    let limit = std::env::var("EMBER_CONFORMANCE_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let worker = std::thread::Builder::new()
        .name(name.into())
        .stack_size(64 << 20)
        .spawn(move || {
            let result = std::panic::catch_unwind(case);
            let _ = done_tx.send(());
            result
        })
        .expect("spawn the case's thread");
    match done_rx.recv_timeout(Duration::from_secs(limit)) {
        Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            match worker.join().expect("the case's thread catches panics") {
                Ok(()) => {}
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("conformance case {name} hung: still running after {limit} s")
        }
    }
}

/// Runs one case as [`run_case`] does, while no other case run through this function
/// runs: the turn is taken before the case's thread starts and given back when the case
/// ends or its watchdog fires. A hung case therefore fails without stalling the rest, but
/// its thread runs on beside the cases after it (a hang is a failure anyway). A case that
/// panicked does not keep the others from their turn. Needs the `std` feature.
#[cfg(feature = "std")]
pub fn run_case_alone(name: &'static str, case: fn()) {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    run_case(name, case);
}

/// Makes a device with [`Target::create`], runs `case` on it, then checks that the device
/// still works and that the case released everything it made.
#[cfg(feature = "alloc")]
pub fn with_device<T: Target>(case: impl FnOnce(&mut T::Device)) {
    let mut dev = Box::new(T::create());
    let baseline = Baseline::of(&*dev);
    case(&mut dev);
    assert_works(&mut *dev);
    baseline.check(&*dev, "after the case");
}

/// What a fresh device looks like, to check a case left it that way.
#[cfg(feature = "alloc")]
pub struct Baseline {
    stats: Vec<Option<AllocStats>>,
}

#[cfg(feature = "alloc")]
impl Baseline {
    /// Records the allocator statistics of every heap of `dev`.
    pub fn of<D: Device>(dev: &D) -> Self {
        Self {
            stats: (0..dev.heaps().len())
                .map(|h| dev.allocator_stats(h).ok())
                .collect(),
        }
    }

    /// Asserts no object is live and every heap's allocator holds what it held at the baseline.
    pub fn check<D: Device>(&self, dev: &D, when: &str) {
        assert_eq!(
            dev.object_counts(),
            ObjectCounts::default(),
            "objects leaked ({when})"
        );
        for (heap, before) in self.stats.iter().enumerate() {
            let (Some(before), Ok(now)) = (before, dev.allocator_stats(heap)) else {
                continue;
            };
            assert_eq!(
                (now.bytes_in_use, now.allocation_count),
                (before.bytes_in_use, before.allocation_count),
                "heap {heap}: memory leaked ({when}); stats now {now:?}"
            );
        }
    }
}

/// Proves the device still works: a buffer, a queue fill, a host read, all released.
#[cfg(feature = "alloc")]
pub fn assert_works<D: Device>(dev: &mut D) {
    let buffer = dev
        .allocate_buffer(host_params(), 256)
        .expect("device still works: allocate");
    let span = BufferSpan::new(buffer, 0, 256);
    run(dev, |d, s| d.queue_fill(s, span, &[0x5A, 0xA5])).expect("device still works: queue_fill");
    let mut out = [0u8; 256];
    dev.read_buffer(span, &mut out)
        .expect("device still works: read_buffer");
    assert!(
        out.chunks(2).all(|p| p == [0x5A, 0xA5]),
        "device still works: the fill landed"
    );
    dev.release_buffer(buffer)
        .expect("device still works: release");
}

/// Host-visible memory with every transfer, dispatch and scoped-mapping usage.
#[cfg(feature = "alloc")]
pub fn host_params() -> BufferParams {
    BufferParams::host_visible()
}

/// [`host_params`] plus persistent mapping and indirect-dispatch parameters.
#[cfg(feature = "alloc")]
pub fn host_params_all() -> BufferParams {
    let p = host_params();
    p.with_usage(p.usage | BufferUsage::MAPPING_PERSISTENT | BufferUsage::DISPATCH_INDIRECT_PARAMS)
}

/// A host-visible buffer of `size` bytes (see [`host_params`]).
#[cfg(feature = "alloc")]
pub fn alloc<D: Device>(dev: &mut D, size: u64) -> Buffer {
    dev.allocate_buffer(host_params(), size)
        .unwrap_or_else(|e| panic!("allocate {size} bytes: {e:?}"))
}

/// A host-visible buffer of `len` bytes, all `byte`.
#[cfg(feature = "alloc")]
pub fn filled<D: Device>(dev: &mut D, len: usize, byte: u8) -> Buffer {
    upload(dev, &vec![byte; len])
}

/// A host-visible buffer holding `data`.
#[cfg(feature = "alloc")]
pub fn upload<D: Device>(dev: &mut D, data: &[u8]) -> Buffer {
    let buffer = alloc(dev, data.len() as u64);
    dev.write_buffer(BufferSpan::new(buffer, 0, data.len() as u64), data)
        .expect("write_buffer");
    buffer
}

/// `len` bytes of `buffer` at `offset`, read by the host.
#[cfg(feature = "alloc")]
pub fn download<D: Device>(dev: &mut D, buffer: Buffer, offset: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    dev.read_buffer(BufferSpan::new(buffer, offset, len as u64), &mut out)
        .unwrap_or_else(|e| panic!("read_buffer {offset}+{len}: {e:?}"));
    out
}

/// Runs one queue operation and waits for it: `op` gets a [`Submit`] that signals a fresh
/// semaphore, which is waited on (with [`Timeout::Infinite`]) and released. An error from the
/// call itself or from the wait (the operation failed) is returned.
#[cfg(feature = "alloc")]
pub fn run<D: Device, R>(
    dev: &mut D,
    op: impl FnOnce(&mut D, Submit<'_>) -> Result<R, Error>,
) -> Result<R, Error> {
    let semaphore = dev.create_semaphore(0).expect("create_semaphore");
    let signal = [SemaphoreValue::new(semaphore, 1)];
    let result = op(dev, Submit::new(&[], &signal));
    let waited = match result {
        Ok(_) => dev.wait_semaphores(&signal, Timeout::Infinite),
        Err(_) => Ok(()),
    };
    dev.release_semaphore(semaphore).expect("release_semaphore");
    let value = result?;
    waited?;
    Ok(value)
}

/// Loads built-in kernel `name`.
#[cfg(feature = "alloc")]
pub fn load<T: Target>(dev: &mut T::Device, name: &'static str) -> Executable {
    dev.load_executable(T::kernel(name))
        .unwrap_or_else(|e| panic!("load kernel {name}: {e:?}"))
}

/// Records one dispatch in a one-shot command buffer, runs it and waits; the command buffer
/// is released whatever happens.
#[cfg(feature = "alloc")]
pub fn dispatch<D: Device>(
    dev: &mut D,
    executable: Executable,
    workgroups: [u32; 3],
    constants: &[u32],
    bindings: &[BufferRef],
) -> Result<(), Error> {
    execute_one(
        dev,
        Record::Dispatch {
            executable,
            workgroups: Workgroups::Direct(workgroups),
            constants,
            bindings,
        },
    )
}

/// Records `record` alone in a one-shot command buffer, runs it and waits; the command
/// buffer is released whatever happens.
#[cfg(feature = "alloc")]
pub fn execute_one<D: Device>(dev: &mut D, record: Record<'_>) -> Result<(), Error> {
    execute(dev, &[record])
}

/// A one-shot command buffer with room for 64 commands and no binding slots, recording.
#[cfg(feature = "alloc")]
pub fn recording<D: Device>(dev: &mut D) -> CommandBuffer {
    dev.create_command_buffer(CommandBufferMode::OneShot, 64, 0)
        .expect("create_command_buffer")
}

/// Records `records` in a one-shot command buffer, runs it and waits; the command buffer is
/// released whatever happens.
#[cfg(feature = "alloc")]
pub fn execute<D: Device>(dev: &mut D, records: &[Record<'_>]) -> Result<(), Error> {
    let cb = dev
        .create_command_buffer(CommandBufferMode::OneShot, 512, 0)
        .expect("create_command_buffer");
    let result = records
        .iter()
        .try_for_each(|r| dev.record(cb, *r))
        .and_then(|()| dev.end(cb))
        .and_then(|()| run(dev, |d, s| d.queue_execute(s, cb, &[])));
    dev.release_command_buffer(cb)
        .expect("release_command_buffer");
    result
}

/// `values` as native-endian bytes.
#[cfg(feature = "alloc")]
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// Native-endian bytes as `f32`s.
#[cfg(feature = "alloc")]
pub fn bytes_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `values` as native-endian bytes.
#[cfg(feature = "alloc")]
pub fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// Native-endian bytes as `u32`s.
#[cfg(feature = "alloc")]
pub fn bytes_u32(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A host-visible buffer holding `values`.
#[cfg(feature = "alloc")]
pub fn upload_f32<D: Device>(dev: &mut D, values: &[f32]) -> Buffer {
    upload(dev, &f32_bytes(values))
}

/// The first `n` `f32`s of `buffer`.
#[cfg(feature = "alloc")]
pub fn download_f32<D: Device>(dev: &mut D, buffer: Buffer, n: usize) -> Vec<f32> {
    bytes_f32(&download(dev, buffer, 0, n * 4))
}

/// Asserts `got` matches the f64 reference `want` to a relative tolerance `rel` (absolute
/// near zero).
#[cfg(feature = "alloc")]
pub fn assert_close(got: &[f32], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tolerance = rel * w.abs().max(1.0);
        assert!(
            (f64::from(g) - w).abs() <= tolerance,
            "{what}: element {i} is {g}, want {w} (±{tolerance})"
        );
    }
}

/// Deterministic test values in about `-2..2` (a small LCG; `seed` picks the sequence).
#[cfg(feature = "alloc")]
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// Bytes that do not repeat with any small period (so a shifted or misplaced piece shows).
#[cfg(feature = "alloc")]
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(31).wrapping_add(i as u32 >> 8) as u8 ^ seed)
        .collect()
}
