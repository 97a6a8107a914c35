//! The HAL conformance suite on the local-CPU driver: inline (one worker), with the
//! `threads` feature on a pool of four workers, and with `cores` on a team whose other core
//! is a thread in `Team::serve` (what a multi-core board runs on its second core).
//!
//! Each device gets a leaked 8 MiB region, chunks of at most 256 KiB and a 1 MiB transient
//! arena for `queue_alloca`.

use ember_tests::conformance::Target;
use hal_core::ExecutableSource;
use hal_local::{HostMemory, LocalConfig, LocalDevice, LocalStorage};

/// A local device over fresh, leaked default storage and a fresh, leaked 8 MiB region with `workers` workers. Under Miri
/// everything is smaller (1 MiB, 8 KiB chunks) so the interpreter gets through the suite in
/// minutes; the cases scale with the heap's `max_allocation_size`, except the two that need
/// one chunk of 64 KiB, which xtask's Miri step skips (`command_validation::limits`,
/// `dispatch::dispatch_large`).
fn local_device(workers: usize) -> LocalDevice<'static> {
    local_device_with(workers, |config| config)
}

fn local_device_with(
    workers: usize,
    adjust: impl FnOnce(LocalConfig) -> LocalConfig,
) -> LocalDevice<'static> {
    let (region, chunk, transient) = if cfg!(miri) {
        (1 << 20, 8 << 10, 256 << 10)
    } else {
        (8 << 20, 256 << 10, 1 << 20)
    };
    let memory: &'static mut [u8] = Box::leak(vec![0u8; region].into_boxed_slice());
    let config = LocalConfig {
        max_allocation_size: chunk,
        transient_bytes: transient,
        kernels: hal_local::kernels::BUILTIN,
        workers,
        ..LocalConfig::default()
    };
    let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
    LocalDevice::new(storage, memory, adjust(config)).expect("a local device")
}

/// The local driver with `WORKERS` workers: 1 runs workgroups inline on the caller's thread,
/// more run them on the `threads` pool. With `CORES` (feature `cores`), on a team of two
/// cores: the test's thread leads, one more thread serves for the whole run; test threads
/// that fork at once share the team (one leads, the others run their workgroups alone).
pub struct Local<const WORKERS: usize, const CORES: bool = false>;

impl<const WORKERS: usize, const CORES: bool> Target for Local<WORKERS, CORES> {
    type Device = LocalDevice<'static>;

    fn create() -> Self::Device {
        #[cfg(feature = "cores")]
        if CORES {
            use hal_local::team::Team;
            static TEAM: Team = Team::new(1);
            static SERVING: std::sync::Once = std::sync::Once::new();
            SERVING.call_once(|| {
                std::thread::spawn(|| TEAM.serve());
            });
            return local_device_with(WORKERS, |config| LocalConfig {
                team: Some(&TEAM),
                ..config
            });
        }
        local_device(WORKERS)
    }

    fn host_memory(bytes: &'static mut [u8]) -> HostMemory<'static> {
        HostMemory::ReadWrite(bytes)
    }

    fn host_memory_read_only(bytes: &'static [u8]) -> HostMemory<'static> {
        HostMemory::ReadOnly(bytes)
    }

    fn kernel(name: &'static str) -> ExecutableSource<'static> {
        ExecutableSource::Kernel(name)
    }
}

mod local_inline {
    ember_tests::conformance_tests!(crate::Local<1>);
}

#[cfg(feature = "threads")]
mod local_threaded {
    ember_tests::conformance_tests!(crate::Local<4>);
}

#[cfg(feature = "cores")]
mod local_cores {
    ember_tests::conformance_tests!(crate::Local<1, true>);
}

/// The local driver with its memory declared apart from the host's, as a discrete GPU's is:
/// sessions then stage every argument and result through the arena inside the invocation's
/// submission, and the module cases must hold all the same.
pub struct ApartMemory;

impl Target for ApartMemory {
    type Device = LocalDevice<'static>;

    fn create() -> Self::Device {
        local_device_with(1, |config| LocalConfig {
            domain: hal_core::MemoryDomain::Device { fabric: 1 },
            ..config
        })
    }

    fn host_memory(bytes: &'static mut [u8]) -> HostMemory<'static> {
        HostMemory::ReadWrite(bytes)
    }

    fn host_memory_read_only(bytes: &'static [u8]) -> HostMemory<'static> {
        HostMemory::ReadOnly(bytes)
    }

    fn kernel(name: &'static str) -> ExecutableSource<'static> {
        ExecutableSource::Kernel(name)
    }
}

mod local_apart_memory {
    use ember_tests::conformance::module;
    use ember_tests::conformance::Target;

    macro_rules! cases {
        ($($case:ident),*) => {$(
            #[test]
            fn $case() {
                module::$case::<crate::ApartMemory>();
            }
        )*};
    }

    /// Staged where the device's memory is apart from the host's, unless the load asks for
    /// the caller's buffers in place; never on host memory. Either way the copy is made.
    #[test]
    fn sessions_stage_io_here_and_not_on_host_memory() {
        use hal_core::memory::BufferParams;
        use hal_core::module::{Module, ModuleBuilder};
        use hal_core::session::{LoadOptions, Session};
        use hal_core::{BufferSpan, Device, QueueAffinity};
        let mut b = ModuleBuilder::new("moves");
        let f = b.function("moves", &[16], &[16]);
        let (x, out) = (b.argument(f, 0), b.result(f, 0));
        b.copy(f, x, out);
        let bytes: &'static [u8] = Box::leak(b.finish().expect("valid").bytes.into_boxed_slice());
        let in_place = LoadOptions {
            stage_io: false,
            ..LoadOptions::default()
        };
        for (mut dev, options, staged, arena) in [
            (
                <crate::ApartMemory as Target>::create(),
                LoadOptions::default(),
                true,
                512,
            ),
            (<crate::ApartMemory as Target>::create(), in_place, false, 0),
            (crate::local_device(1), LoadOptions::default(), false, 0),
        ] {
            let module = Module::parse(bytes).expect("parses");
            let mut s =
                Session::<'static, 4, 8, 4>::load(&mut dev, module, options).expect("loads");
            assert_eq!(s.stages_io(), staged);
            assert_eq!(s.stats().arena_peak, arena, "staged: {staged}");
            let input = dev
                .allocate_buffer(BufferParams::host_visible(), 16)
                .expect("input");
            let result = dev
                .allocate_buffer(BufferParams::host_visible(), 16)
                .expect("result");
            dev.write_buffer(BufferSpan::whole(input), &[7; 16])
                .expect("write");
            let fi = s.function("moves").expect("moves");
            s.invoke(
                &mut dev,
                fi,
                &[BufferSpan::whole(input)],
                &[BufferSpan::whole(result)],
                QueueAffinity::ANY,
            )
            .expect("invoke");
            let mut got = [0u8; 16];
            dev.read_buffer(BufferSpan::whole(result), &mut got)
                .expect("read");
            assert_eq!(got, [7; 16], "staged: {staged}");
            dev.release_buffer(input).expect("release");
            dev.release_buffer(result).expect("release");
            s.release(&mut dev).expect("release");
        }
    }

    /// A step that writes part of a result leaves the rest of the caller's bytes as they
    /// were, staged or not.
    #[test]
    fn staged_results_keep_bytes_no_step_writes() {
        use hal_core::memory::BufferParams;
        use hal_core::module::{Module, ModuleBuilder};
        use hal_core::session::{LoadOptions, Session};
        use hal_core::{BufferSpan, Device, QueueAffinity};
        let mut b = ModuleBuilder::new("part");
        let f = b.function("part", &[16], &[32]);
        let (x, out) = (b.argument(f, 0), b.result(f, 0));
        b.copy(f, x, out.slice(8, 16));
        let bytes: &'static [u8] = Box::leak(b.finish().expect("valid").bytes.into_boxed_slice());
        for mut dev in [
            <crate::ApartMemory as Target>::create(),
            crate::local_device(1),
        ] {
            let module = Module::parse(bytes).expect("parses");
            let mut s = Session::<'static, 4, 8, 4>::load(&mut dev, module, LoadOptions::default())
                .expect("loads");
            let input = dev
                .allocate_buffer(BufferParams::host_visible(), 16)
                .expect("input");
            let result = dev
                .allocate_buffer(BufferParams::host_visible(), 32)
                .expect("result");
            dev.write_buffer(BufferSpan::whole(input), &[1; 16])
                .expect("write");
            dev.write_buffer(BufferSpan::whole(result), &[0xEE; 32])
                .expect("write");
            let fi = s.function("part").expect("part");
            s.invoke(
                &mut dev,
                fi,
                &[BufferSpan::whole(input)],
                &[BufferSpan::whole(result)],
                QueueAffinity::ANY,
            )
            .expect("invoke");
            let mut got = [0u8; 32];
            dev.read_buffer(BufferSpan::whole(result), &mut got)
                .expect("read");
            let mut want = [0xEE; 32];
            want[8..24].fill(1);
            assert_eq!(got, want, "staged: {}", s.stages_io());
            dev.release_buffer(input).expect("release");
            dev.release_buffer(result).expect("release");
            s.release(&mut dev).expect("release");
        }
    }

    cases!(
        mlp_matches_host,
        constants_imported_or_streamed,
        replay_is_memoized,
        unknown_kernel_is_a_module_error,
        capacity_is_checked,
        bad_calls_are_errors,
        result_memory,
        copy_fill_and_no_arena,
        kernel_failure_leaves_session_usable
    );
}
