//! A device shared between cores, soaked: one thread submits without pause while another
//! signals, fails and waits, and a third (the team's worker, standing in for a second core)
//! runs half of every dispatch's workgroups. Failures are injected (a failed semaphore, a
//! kernel that refuses one workgroup); every submission must end the way its kind says,
//! nothing may leak, and a watchdog aborts the run if progress stops.
#![cfg(feature = "cores")]

use hal_core::shared::Shared;
use hal_core::{
    Buffer, BufferRef, BufferSpan, CommandBuffer, CommandBufferMode, Device, Error, Record,
    Semaphore, SemaphoreValue, Submit, Workgroups,
};
use hal_local::kernel::{Entry, Kernel, KernelError, Workgroup};
use hal_local::team::Team;
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Workgroups per dispatch, and output words each writes.
const GROUPS: u32 = 8;
const WORDS: usize = 64;

/// Workgroups the team's worker thread ran (it is named [`WORKER`]).
static ON_WORKER: AtomicU64 = AtomicU64::new(0);
const WORKER: &str = "team-worker";

/// Writes `id * 1000 + k` into its `WORDS` words of binding 0, unless its id is constant
/// 0, which it refuses.
fn stamp(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    let refuse = wg.constant(0)?;
    let [x, ..] = wg.id;
    if x == refuse {
        return Err(KernelError::Shape("this workgroup refuses"));
    }
    if std::thread::current().name() == Some(WORKER) {
        ON_WORKER.fetch_add(1, Ordering::Relaxed);
    }
    let out = wg.output_f32(0)?;
    for k in 0..WORDS {
        out.set(x as usize * WORDS + k, (x * 1000 + k as u32) as f32);
    }
    Ok(())
}

static KERNELS: &[Kernel] = &[Kernel {
    name: "stamp",
    entry: Entry::Shared(stamp),
}];

/// How a submission must end.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// Its gate is signalled: every word stamped.
    Runs,
    /// Its gate is failed: the dispatch never runs and its fence fails.
    GateFails,
    /// One workgroup refuses: the fence fails with the kernel's error.
    KernelRefuses,
}

/// One submission in flight: parked behind its gate until the other thread opens it.
struct Flight {
    kind: Kind,
    gate: Semaphore,
    fence: Semaphore,
    out: Buffer,
    commands: CommandBuffer,
}

type Dev = LocalDevice<'static>;

fn device(team: &'static Team) -> Dev {
    let memory: &'static mut [u8] = Box::leak(vec![0u8; 1 << 20].into_boxed_slice());
    let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
    let config = LocalConfig {
        kernels: KERNELS,
        team: Some(team),
        ..LocalConfig::default()
    };
    LocalDevice::new(storage, memory, config).expect("a local device")
}

/// Records and submits one `kind` submission behind a fresh gate.
fn submit(dev: &mut Dev, stamp: hal_core::Executable, kind: Kind, round: u64) -> Flight {
    let gate = dev.create_semaphore(0).expect("gate");
    let fence = dev.create_semaphore(0).expect("fence");
    let out = dev
        .allocate_buffer(
            ember_conformance::host_params(),
            u64::from(GROUPS) * WORDS as u64 * 4,
        )
        .expect("output");
    let refuse = if kind == Kind::KernelRefuses {
        (round % u64::from(GROUPS)) as u32
    } else {
        u32::MAX
    };
    let commands = dev
        .create_command_buffer(CommandBufferMode::OneShot, 8, 0)
        .expect("command buffer");
    dev.record(
        commands,
        Record::Dispatch {
            executable: stamp,
            workgroups: Workgroups::Direct([GROUPS, 1, 1]),
            constants: &[refuse],
            bindings: &[BufferRef::buffer(out)],
        },
    )
    .expect("record");
    dev.end(commands).expect("end");
    dev.queue_execute(
        Submit {
            waits: &[SemaphoreValue::new(gate, 1)],
            signals: &[SemaphoreValue::new(fence, 1)],
            ..Submit::NOW
        },
        commands,
        &[],
    )
    .expect("a parked submission");
    Flight {
        kind,
        gate,
        fence,
        out,
        commands,
    }
}

/// Opens (or fails) a flight's gate, waits for its fence without holding the lock, checks
/// how it ended and releases everything it holds.
fn land(shared: &Shared<Dev>, flight: Flight) {
    shared
        .with(|dev| match flight.kind {
            Kind::GateFails => dev.fail_semaphore(flight.gate, 7),
            _ => dev.signal_semaphore(flight.gate, 1),
        })
        .expect("gate");
    let ended = shared.wait_semaphores(&[SemaphoreValue::new(flight.fence, 1)], u64::MAX);
    shared.with(|dev| {
        match flight.kind {
            Kind::Runs => {
                ended.expect("a gated dispatch that runs");
                let mut bytes = vec![0u8; GROUPS as usize * WORDS * 4];
                dev.read_buffer(BufferSpan::whole(flight.out), &mut bytes)
                    .expect("read");
                for (i, word) in bytes.chunks_exact(4).enumerate() {
                    let want = ((i / WORDS) * 1000 + i % WORDS) as f32;
                    assert_eq!(f32::from_ne_bytes(word.try_into().unwrap()), want);
                }
            }
            Kind::GateFails | Kind::KernelRefuses => {
                let error = ended.expect_err("a failed submission reaches its waiter");
                assert_ne!(error, Error::Timeout, "{:?}", flight.kind);
            }
        }
        dev.release_command_buffer(flight.commands)
            .expect("release");
        dev.release_buffer(flight.out).expect("release");
        dev.release_semaphore(flight.gate).expect("release");
        dev.release_semaphore(flight.fence).expect("release");
    });
}

#[test]
fn many_submissions_while_another_core_executes() {
    static TEAM: Team = Team::new(1);
    let rounds: u64 = if cfg!(miri) { 6 } else { 3000 };
    let stop = AtomicBool::new(false);
    let landed = AtomicU64::new(0);
    let shared = Shared::new(device(&TEAM));
    let (stamp_exe, before, used_before) = shared.with(|dev| {
        let exe = dev
            .load_executable(hal_core::ExecutableSource::Kernel("stamp"))
            .expect("stamp");
        (
            exe,
            dev.object_counts(),
            dev.allocator_stats(0).expect("stats"),
        )
    });
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(WORKER.into())
            .spawn_scoped(s, || TEAM.serve_until(&stop))
            .expect("the worker thread");
        // The watchdog: no landing for this long is a deadlock.
        s.spawn(|| {
            let limit = Duration::from_secs(if cfg!(miri) { 600 } else { 60 });
            let mut last = (0, Instant::now());
            while landed.load(Ordering::Relaxed) < rounds {
                std::thread::sleep(Duration::from_millis(20));
                let now = landed.load(Ordering::Relaxed);
                if now != last.0 {
                    last = (now, Instant::now());
                } else if last.1.elapsed() > limit {
                    eprintln!("watchdog: no submission landed for {limit:?} ({now} of {rounds})");
                    std::process::abort();
                }
            }
        });
        // At most three flights parked at once: one being submitted, one in the channel,
        // one landing (the device parks sixteen).
        let (flights, arrivals) = mpsc::sync_channel::<Flight>(1);
        let lander = s.spawn(|| {
            for flight in arrivals {
                land(&shared, flight);
                landed.fetch_add(1, Ordering::Relaxed);
            }
        });
        for round in 0..rounds {
            let kind = match round % 5 {
                0 | 1 | 3 => Kind::Runs,
                2 => Kind::GateFails,
                _ => Kind::KernelRefuses,
            };
            let flight = shared.with(|dev| submit(dev, stamp_exe, kind, round));
            flights.send(flight).expect("the lander is alive");
        }
        drop(flights);
        lander.join().expect("the lander");
        stop.store(true, Ordering::Relaxed);
    });
    assert_eq!(landed.load(Ordering::Relaxed), rounds);
    // The other core ran part of the work (not all of it: the leader claims calls too).
    let on_worker = ON_WORKER.load(Ordering::Relaxed);
    assert!(on_worker > 0, "the worker ran no workgroup");
    println!(
        "the worker ran {on_worker} workgroups of {} dispatched",
        rounds * u64::from(GROUPS)
    );
    let mut dev = shared.into_inner();
    dev.release_executable(stamp_exe).expect("release");
    let after = dev.object_counts();
    assert_eq!(after.buffers, before.buffers, "buffers leaked");
    assert_eq!(after.semaphores, before.semaphores, "semaphores leaked");
    assert_eq!(
        after.command_buffers, before.command_buffers,
        "command buffers leaked"
    );
    assert_eq!(after.executables + 1, before.executables);
    let used_after = dev.allocator_stats(0).expect("stats");
    assert_eq!(
        used_after.bytes_in_use, used_before.bytes_in_use,
        "device memory leaked"
    );
}

#[test]
fn a_waiter_lets_go_of_the_lock_for_the_core_that_signals() {
    static TEAM: Team = Team::new(0);
    let shared = Shared::new(device(&TEAM));
    let sem = shared
        .with(|dev| dev.create_semaphore(0))
        .expect("semaphore");
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(if cfg!(miri) { 0 } else { 20 }));
            shared
                .with(|dev| dev.signal_semaphore(sem, 3))
                .expect("signal");
        });
        shared
            .wait_semaphores(&[SemaphoreValue::new(sem, 3)], u64::MAX)
            .expect("the other thread signals");
    });
    assert_eq!(
        shared.wait_semaphores(&[SemaphoreValue::new(sem, 4)], 3),
        Err(Error::Timeout)
    );
    shared.with(|dev| dev.fail_semaphore(sem, 9)).expect("fail");
    assert!(matches!(
        shared.wait_semaphores(&[SemaphoreValue::new(sem, 4)], u64::MAX),
        Err(e) if e != Error::Timeout
    ));
}
