//! The QEMU boards' link to the host, over semihosting: defmt log frames written to the
//! host's stdout (decoded there by `defmt-print`), the exit code, and the panic handler.
//!
//! Run QEMU with `-semihosting-config enable=on,target=native`; `cargo xtask run --board B`
//! does, and pipes stdout into `defmt-print -e <elf>`.

use core::cell::RefCell;
use core::sync::atomic::{AtomicBool, Ordering};
use critical_section::Mutex;
use semihosting::io::Write;

/// Exit code of a firmware whose checks failed.
pub const EXIT_FAILED: i32 = 1;
/// Exit code of a firmware that panicked (as Rust's test harness uses).
pub const EXIT_PANICKED: i32 = 101;
/// Exit code of a firmware that took an exception (a fault, an unexpected trap).
pub const EXIT_FAULT: i32 = 102;

/// Ends the QEMU run with `code` (0 = success); the host sees it as QEMU's exit status.
pub fn exit(code: i32) -> ! {
    semihosting::process::exit(code)
}

/// Ends the run with 0 if `passed`, else [`EXIT_FAILED`].
pub fn finish(passed: bool) -> ! {
    exit(if passed { 0 } else { EXIT_FAILED })
}

/// Bytes of a frame gathered before one semihosting write (each write traps to QEMU).
const BUFFER: usize = 128;

/// Encoded bytes waiting to be written.
struct Sink {
    bytes: [u8; BUFFER],
    len: usize,
}

impl Sink {
    fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let n = bytes.len().min(BUFFER - self.len);
            self.bytes[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
            if self.len == BUFFER {
                self.flush();
            }
        }
    }

    /// Writes what is waiting to the host's stdout. A log that cannot be written is dropped:
    /// there is nowhere else to report it.
    fn flush(&mut self) {
        if self.len > 0 {
            if let Ok(mut out) = semihosting::io::stdout() {
                let _ = out.write_all(&self.bytes[..self.len]);
            }
            self.len = 0;
        }
    }
}

struct Frame {
    encoder: defmt::Encoder,
    sink: Sink,
}

/// Set between `acquire` and `release`: defmt promises not to nest them, and this checks.
static TAKEN: AtomicBool = AtomicBool::new(false);
static FRAME: Mutex<RefCell<Frame>> = Mutex::new(RefCell::new(Frame {
    encoder: defmt::Encoder::new(),
    sink: Sink {
        bytes: [0; BUFFER],
        len: 0,
    },
}));

fn with_frame(f: impl FnOnce(&mut defmt::Encoder, &mut Sink)) {
    critical_section::with(|cs| {
        let mut frame = FRAME.borrow_ref_mut(cs);
        let Frame { encoder, sink } = &mut *frame;
        f(encoder, sink);
    });
}

#[defmt::global_logger]
struct Logger;

// SAFETY: defmt calls `acquire`, then `write`s, then `release`, and never nests them; the
// `TAKEN` flag enforces that (a nested acquire ends the run instead of interleaving frames),
// and every access to the shared frame state goes through a critical section.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        if TAKEN.swap(true, Ordering::Acquire) {
            exit(EXIT_PANICKED);
        }
        with_frame(|encoder, sink| encoder.start_frame(|b| sink.push(b)));
    }

    unsafe fn flush() {
        with_frame(|_, sink| sink.flush());
    }

    unsafe fn release() {
        with_frame(|encoder, sink| {
            encoder.end_frame(|b| sink.push(b));
            sink.flush();
        });
        TAKEN.store(false, Ordering::Release);
    }

    unsafe fn write(bytes: &[u8]) {
        with_frame(|encoder, sink| encoder.write(bytes, |b| sink.push(b)));
    }
}

/// A panic logs its message (unless it happened inside a log call) and fails the run.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    if !TAKEN.load(Ordering::Acquire) {
        defmt::println!("PANIC: {}", defmt::Display2Format(info));
    }
    exit(EXIT_PANICKED)
}

/// A fault or unexpected trap: logs what the board says about it and fails the run.
pub fn fault(what: &str) -> ! {
    if !TAKEN.load(Ordering::Acquire) {
        defmt::println!("FAULT: {}", what);
    }
    exit(EXIT_FAULT)
}
