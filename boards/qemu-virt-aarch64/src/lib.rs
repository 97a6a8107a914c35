//! QEMU's Arm `virt` machine, 64-bit (`aarch64-unknown-none`): `qemu-system-aarch64 -machine
//! virt -cpu cortex-a53`, standing in for an edge SoC whose accelerator shares DRAM with the
//! CPU. Its own start-up (`start.s`: EL1, identity-mapped MMU, vectors) and linker script
//! (`link.x`), which sets 32 MiB of DRAM apart as the region both sides use
//! (`.shared_dram`): the hal-local device's memory lives there, and so do the inputs, which
//! the firmware writes once and the device imports in place, with no copy. Logs and exit over
//! semihosting, an 8 MiB `embedded-alloc` heap (56 MiB with `cores`) with the `heap` feature (on by default).
//!
//! With `cores` and `qemu-system-aarch64 -smp 2`, [`start_second_core`] starts core 1
//! through PSCI (QEMU's virt machine answers PSCI calls made with `hvc`) and it serves the
//! firmware's team of cores ([`ember_firmware::cores`]).
#![no_std]

#[cfg(feature = "cores")]
use core::sync::atomic::{AtomicUsize, Ordering};
use static_cell::ConstStaticCell;

core::arch::global_asm!(include_str!("start.s"));

/// The board's name in logs.
pub const NAME: &str = "qemu-virt-aarch64";

// The device's memory region (the answers of every image at once, and the arena) lives in
// shared DRAM, as do the inputs below; the heap is ordinary RAM: 8 MiB, or 56 MiB with
// `cores`, whose on-target conformance cases each leak a 1 MiB region.
#[cfg(not(feature = "cores"))]
ember_firmware::board_memory!(
    #[link_section = ".shared_dram"]
    device: 64 * 1024,
    heap: 8 * 1024 * 1024,
);
#[cfg(feature = "cores")]
ember_firmware::board_memory!(
    #[link_section = ".shared_dram"]
    device: 64 * 1024,
    heap: 56 * 1024 * 1024,
);

/// Bytes of shared DRAM for the inputs (every held-out image as `f32`s: 896 × 256 bytes).
pub const SHARED_INPUT_BYTES: usize = 256 * 1024;
/// Kernels read `f32`s in place: the inputs start on a cache line.
#[repr(C, align(64))]
struct Aligned([u8; SHARED_INPUT_BYTES]);
#[link_section = ".shared_dram"]
static SHARED_INPUTS: ConstStaticCell<Aligned> =
    ConstStaticCell::new(Aligned([0; SHARED_INPUT_BYTES]));

/// The shared input region (64-byte aligned); `None` after the first call.
pub fn shared_inputs() -> Option<&'static mut [u8]> {
    SHARED_INPUTS.try_take().map(|m| m.0.as_mut_slice())
}

/// Any exception (every vector leads here): fail the run.
#[no_mangle]
extern "C" fn board_exception() -> ! {
    ember_firmware::semihosting::fault("AArch64 exception")
}

/// Critical sections on one core whose interrupts are never unmasked.
#[cfg(not(feature = "cores"))]
struct Masked;
#[cfg(not(feature = "cores"))]
critical_section::set_impl!(Masked);

// SAFETY: `start.s` masks every interrupt (`msr daifset, #0xf`) before any Rust code runs,
// nothing unmasks them, and without `cores` only core 0 runs: no code can ever preempt a
// critical section, so entering one needs to do nothing.
#[cfg(not(feature = "cores"))]
unsafe impl critical_section::Impl for Masked {
    unsafe fn acquire() -> critical_section::RawRestoreState {}
    unsafe fn release(_restore: critical_section::RawRestoreState) {}
}

/// Critical sections on two cores: interrupts are never unmasked, so only another core can contend; a
/// spin lock held by one core at a time, re-entered by the core that holds it.
#[cfg(feature = "cores")]
struct CoreLock;
#[cfg(feature = "cores")]
critical_section::set_impl!(CoreLock);

/// The core holding the critical section, plus one (0: none).
#[cfg(feature = "cores")]
static HOLDER: AtomicUsize = AtomicUsize::new(0);
/// How deep the holder is nested (touched only by the holder).
#[cfg(feature = "cores")]
static DEPTH: AtomicUsize = AtomicUsize::new(0);

#[cfg(feature = "cores")]
/// This core's number (MPIDR_EL1's affinity level 0).
fn core_id() -> usize {
    let mpidr: u64;
    // SAFETY: reading MPIDR_EL1 at EL1 has no side effect.
    unsafe { core::arch::asm!("mrs {}, mpidr_el1", out(reg) mpidr, options(nomem, nostack)) };
    (mpidr & 0xff) as usize
}

// SAFETY: `start.s` masks every interrupt on every core before any Rust code runs and
// nothing unmasks them, so a critical section can only be contended by another core; the
// lock below admits one core at a time (Acquire on taking, Release on the last release),
// and a core that already holds it only counts one level deeper.
#[cfg(feature = "cores")]
unsafe impl critical_section::Impl for CoreLock {
    unsafe fn acquire() -> critical_section::RawRestoreState {
        let me = core_id() + 1;
        if HOLDER.load(Ordering::Relaxed) == me {
            DEPTH.fetch_add(1, Ordering::Relaxed);
            return;
        }
        while HOLDER
            .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        DEPTH.store(1, Ordering::Relaxed);
    }

    unsafe fn release(_restore: critical_section::RawRestoreState) {
        if DEPTH.fetch_sub(1, Ordering::Relaxed) == 1 {
            HOLDER.store(0, Ordering::Release);
        }
    }
}

// Where core 1 starts (`start.s`).
#[cfg(feature = "cores")]
extern "C" {
    fn _secondary();
}

/// Core 1's stack: used only by core 1, through its stack pointer, from `_secondary` on.
#[cfg(feature = "cores")]
#[repr(C, align(16))]
struct Core1Stack(core::cell::UnsafeCell<[u8; 256 * 1024]>);

// SAFETY: no Rust code reads or writes the bytes; only core 1's stack pointer points into
// them, and only after `start_second_core` hands core 1 their top.
#[cfg(feature = "cores")]
unsafe impl Sync for Core1Stack {}

#[cfg(feature = "cores")]
static CORE1_STACK: Core1Stack = Core1Stack(core::cell::UnsafeCell::new([0; 256 * 1024]));

/// PSCI `CPU_ON`, SMC64 calling convention.
#[cfg(feature = "cores")]
const PSCI_CPU_ON: u64 = 0xC400_0003;

/// Starts core 1 at `_secondary` on its own stack, through PSCI; `Err` carries PSCI's
/// (negative) status, as when QEMU runs a single core.
#[cfg(feature = "cores")]
pub fn start_second_core() -> Result<(), i64> {
    let stack_top = CORE1_STACK.0.get() as u64 + 256 * 1024;
    let status: i64;
    // SAFETY: a PSCI call through `hvc #0`, which QEMU's virt machine implements at EL1:
    // x0-x3 carry the function, the target core (MPIDR 1), its entry point and context id,
    // and x0 returns the status; x1-x17 are marked changed. Core 1 starts at
    // `_secondary` on a stack no other code uses.
    unsafe {
        core::arch::asm!(
            "hvc #0",
            inout("x0") PSCI_CPU_ON => status,
            inout("x1") 1u64 => _,
            inout("x2") _secondary as *const () as u64 => _,
            inout("x3") stack_top => _,
            // SMCCC 1.0 lets a call change x4-x17 too.
            out("x4") _, out("x5") _, out("x6") _, out("x7") _, out("x8") _, out("x9") _,
            out("x10") _, out("x11") _, out("x12") _, out("x13") _, out("x14") _,
            out("x15") _, out("x16") _, out("x17") _,
            options(nostack),
        );
    }
    if status == 0 {
        Ok(())
    } else {
        Err(status)
    }
}

/// Core 1's Rust entry (`start.s`): serves the firmware's team of cores with `cores`; without
/// it no firmware starts core 1, and if something does, it fails the run.
#[no_mangle]
extern "C" fn board_secondary() -> ! {
    #[cfg(feature = "cores")]
    ember_firmware::cores::serve();
    #[cfg(not(feature = "cores"))]
    ember_firmware::semihosting::fault("core 1 started without the `cores` feature")
}
