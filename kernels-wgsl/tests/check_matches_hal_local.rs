//! `check` against hal-local: for bad and good dispatches, `check` must return exactly what
//! hal-local returns.
//!
//! Two levels: through hal-local's public `Device` API (allocate, record, execute; the
//! error is hal-local's own `Error::Kernel`), for one case of every error kind;
//! and, for many more cases (hand-picked and pseudo-random), by calling hal-local's kernel
//! entry points directly on a grid of workgroups, the `KernelError` wrapped as the
//! Device-API cases prove hal-local wraps it.

use std::sync::atomic::AtomicU32;

use ember_kernels_wgsl::{check, BindingInfo, FLAG_BIAS, FLAG_RELU, KERNELS};
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess};
use hal_core::{
    BufferRef, CommandBufferMode, Device, Error, ExecutableSource, Record, SemaphoreValue, Submit,
    Timeout, Workgroups,
};
use hal_local::kernel::{Binding, KernelError, Workgroup};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};

/// An outcome as the hand-picked table names it: the refusal's kind and the binding (or,
/// for missing push constants, the count) it names; `(message, 0)` for a shape refusal.
fn key(result: &Result<(), Error>) -> Result<(), (&'static str, i64)> {
    let e = match result {
        Ok(()) => return Ok(()),
        Err(Error::Kernel(e)) => *e,
        Err(_) => return Err(("not a kernel refusal", -1)),
    };
    Err(match e {
        KernelError::MissingBinding { index, .. } => ("kernel: missing binding", index.into()),
        KernelError::MissingConstants { needed, .. } => {
            ("kernel: missing push constants", needed.into())
        }
        KernelError::BindingTooSmall { index, .. } => ("kernel: binding too small", index.into()),
        KernelError::Misaligned { index, .. } => ("kernel: binding misaligned", index.into()),
        KernelError::ReadOnly { index } => ("kernel: binding is read-only", index.into()),
        KernelError::Shape(what) => (what, 0),
        _ => ("another kernel refusal", -1),
    })
}

/// Runs hal-local's kernel `name` directly over `grid` on fresh memory shaped like
/// `bindings`, stopping at the first refusal (as replay does).
fn hal_local_direct(
    name: &str,
    grid: [u32; 3],
    constants: &[u32],
    bindings: &[BindingInfo],
) -> Result<(), Error> {
    let kernel = hal_local::kernels::find(hal_local::kernels::BUILTIN, name).expect("kernel");
    let memory: Vec<Vec<AtomicU32>> = bindings
        .iter()
        .map(|b| {
            (0..b.bytes.div_ceil(4))
                .map(|_| AtomicU32::new(0))
                .collect()
        })
        .collect();
    let views: Vec<Binding<'_>> = bindings
        .iter()
        .zip(&memory)
        .map(|(b, words)| {
            let bytes = b.bytes as usize;
            if b.offset % 4 != 0 {
                Binding::unaligned(bytes, b.writable)
            } else {
                Binding::words(words, bytes, b.writable)
            }
        })
        .collect();
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                let wg = Workgroup {
                    id: [x, y, z],
                    count: grid,
                    constants,
                    bindings: &views,
                };
                let entry = kernel.shared().expect("a shared-binding kernel");
                entry(&wg).map_err(Error::Kernel)?;
            }
        }
    }
    Ok(())
}

/// `check` and hal-local agree on `(name, constants, bindings)`, on two grids.
fn agree(name: &str, constants: &[u32], bindings: &[BindingInfo]) -> Result<(), Error> {
    let got = check(name, constants, bindings);
    for grid in [[1, 1, 1], [3, 2, 1]] {
        let want = hal_local_direct(name, grid, constants, bindings);
        assert_eq!(
            got, want,
            "{name} constants {constants:?} bindings {bindings:?} grid {grid:?}"
        );
    }
    got
}

fn rw(bytes: u64) -> BindingInfo {
    BindingInfo {
        offset: 0,
        bytes,
        writable: true,
    }
}

fn ro(bytes: u64) -> BindingInfo {
    BindingInfo {
        writable: false,
        ..rw(bytes)
    }
}

fn at(offset: u64, b: BindingInfo) -> BindingInfo {
    BindingInfo { offset, ..b }
}

fn driver(what: &'static str, code: i64) -> Result<(), (&'static str, i64)> {
    Err((what, code))
}

/// A kernel, its constants and bindings, and what hal-local answers (as [`key`] names it).
type Case = (
    &'static str,
    Vec<u32>,
    Vec<BindingInfo>,
    Result<(), (&'static str, i64)>,
);

#[test]
fn hand_picked_cases() {
    let m = "kernel: missing binding";
    let c = "kernel: missing push constants";
    let s = "kernel: binding too small";
    let a = "kernel: binding misaligned";
    let r = "kernel: binding is read-only";
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        // fill_u32
        ("fill_u32", vec![7], vec![rw(16)], Ok(())),
        ("fill_u32", vec![7], vec![rw(7)], Ok(())),
        ("fill_u32", vec![7], vec![rw(0)], Ok(())),
        ("fill_u32", vec![], vec![rw(16)], driver(c, 1)),
        ("fill_u32", vec![], vec![], driver(c, 1)),
        ("fill_u32", vec![1], vec![], driver(m, 0)),
        ("fill_u32", vec![1], vec![ro(16)], driver(r, 0)),
        ("fill_u32", vec![1], vec![at(2, ro(16))], driver(r, 0)),
        ("fill_u32", vec![1], vec![at(2, rw(16))], driver(a, 0)),
        ("fill_u32", vec![1], vec![at(8, rw(16))], Ok(())),
        // copy_u32
        ("copy_u32", vec![], vec![rw(16), rw(16)], Ok(())),
        ("copy_u32", vec![], vec![ro(19), rw(18)], Ok(())),
        ("copy_u32", vec![], vec![rw(12), rw(16)], driver(s, 0)),
        ("copy_u32", vec![], vec![rw(15), rw(16)], driver(s, 0)),
        ("copy_u32", vec![], vec![rw(16)], driver(m, 1)),
        ("copy_u32", vec![], vec![], driver(m, 0)),
        ("copy_u32", vec![], vec![rw(16), ro(16)], driver(r, 1)),
        ("copy_u32", vec![], vec![at(1, rw(16)), ro(16)], driver(a, 0)),
        ("copy_u32", vec![], vec![rw(16), at(6, rw(16))], driver(a, 1)),
        ("copy_u32", vec![], vec![at(3, rw(4)), rw(16)], driver(a, 0)),
        // add_f32 / mul_f32
        ("add_f32", vec![], vec![rw(24), ro(24), rw(24)], Ok(())),
        ("mul_f32", vec![], vec![rw(32), rw(28), rw(24)], Ok(())),
        ("add_f32", vec![], vec![rw(20), rw(24), rw(24)], driver(s, 0)),
        ("mul_f32", vec![], vec![rw(24), rw(20), rw(24)], driver(s, 1)),
        ("add_f32", vec![], vec![rw(20), rw(20), rw(24)], driver(s, 0)),
        ("add_f32", vec![], vec![rw(24), rw(24)], driver(m, 2)),
        ("add_f32", vec![], vec![rw(24), rw(24), ro(24)], driver(r, 2)),
        ("add_f32", vec![], vec![rw(24), at(2, rw(24)), ro(24)], driver(a, 1)),
        ("mul_f32", vec![], vec![rw(0), rw(0), rw(3)], Ok(())),
        // relu_f32
        ("relu_f32", vec![], vec![rw(24), rw(24)], Ok(())),
        ("relu_f32", vec![], vec![rw(20), rw(24)], driver(s, 0)),
        ("relu_f32", vec![], vec![rw(24)], driver(m, 1)),
        ("relu_f32", vec![], vec![rw(24), ro(24)], driver(r, 1)),
        ("relu_f32", vec![], vec![rw(24), at(4, ro(24))], driver(r, 1)),
        // matmul_f32: 5x7 · 7x3
        ("matmul_f32", vec![5, 7, 3], vec![rw(140), rw(84), rw(60)], Ok(())),
        ("matmul_f32", vec![5, 7, 3, 0], vec![ro(140), ro(84), rw(60)], Ok(())),
        ("matmul_f32", vec![5, 7, 3, FLAG_RELU], vec![rw(140), rw(84), rw(60)], Ok(())),
        ("matmul_f32", vec![5, 7, 3, FLAG_BIAS], vec![rw(140), rw(84), rw(60), ro(12)], Ok(())),
        ("matmul_f32", vec![5, 7, 3, FLAG_BIAS | FLAG_RELU], vec![rw(140), rw(84), rw(60)], driver(m, 3)),
        ("matmul_f32", vec![5, 7, 3, FLAG_BIAS], vec![rw(140), rw(84), rw(60), rw(8)], driver(s, 3)),
        ("matmul_f32", vec![5, 7], vec![rw(140), rw(84), rw(60)], driver(c, 3)),
        ("matmul_f32", vec![], vec![], driver(c, 3)),
        ("matmul_f32", vec![0, 7, 3], vec![rw(140), rw(84), rw(60)], driver("matmul_f32: M, K and N must be non-zero", 0)),
        ("matmul_f32", vec![5, 0, 3], vec![], driver("matmul_f32: M, K and N must be non-zero", 0)),
        ("matmul_f32", vec![5, 7, 0, 99], vec![], driver("matmul_f32: M, K and N must be non-zero", 0)),
        ("matmul_f32", vec![5, 7, 3, 4], vec![rw(140), rw(84), rw(60)], driver("matmul_f32: unknown flag bits", 0)),
        ("matmul_f32", vec![5, 7, 3, 1 << 31], vec![], driver("matmul_f32: unknown flag bits", 0)),
        ("matmul_f32", vec![u32::MAX, u32::MAX, 1], vec![], driver("matmul_f32: matrix size overflows", 0)),
        ("matmul_f32", vec![1, u32::MAX, u32::MAX], vec![], driver("matmul_f32: matrix size overflows", 0)),
        ("matmul_f32", vec![u32::MAX, 1, u32::MAX], vec![], driver("matmul_f32: matrix size overflows", 0)),
        ("matmul_f32", vec![1 << 16, 1 << 16, 1], vec![rw(8), rw(8), rw(8)], driver(s, 0)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(136), rw(84), rw(60)], driver(s, 0)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(140), rw(80), rw(60)], driver(s, 1)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(140), rw(84), rw(56)], driver(s, 2)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(136), at(2, rw(84)), rw(60)], driver(s, 0)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(140), at(2, rw(84)), rw(60)], driver(a, 1)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(140), rw(84), ro(60)], driver(r, 2)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(140), rw(84)], driver(m, 2)),
        ("matmul_f32", vec![5, 7, 3], vec![rw(140)], driver(m, 1)),
        // softmax_f32
        ("softmax_f32", vec![2, 3], vec![rw(24), rw(24)], Ok(())),
        ("softmax_f32", vec![2, 3, 9], vec![ro(28), rw(24)], Ok(())),
        ("softmax_f32", vec![2], vec![rw(24), rw(24)], driver(c, 2)),
        ("softmax_f32", vec![0, 3], vec![rw(24), rw(24)], driver("softmax_f32: rows and cols must be non-zero", 0)),
        ("softmax_f32", vec![2, 0], vec![], driver("softmax_f32: rows and cols must be non-zero", 0)),
        ("softmax_f32", vec![u32::MAX, u32::MAX], vec![], driver("softmax_f32: rows * cols overflows", 0)),
        ("softmax_f32", vec![1 << 16, 1 << 16], vec![rw(24), rw(24)], driver(s, 0)),
        ("softmax_f32", vec![2, 3], vec![rw(20), rw(24)], driver(s, 0)),
        ("softmax_f32", vec![2, 3], vec![rw(24), rw(20)], driver(s, 1)),
        ("softmax_f32", vec![2, 3], vec![rw(20), ro(20)], driver(r, 1)),
        ("softmax_f32", vec![2, 3], vec![rw(24)], driver(m, 1)),
        ("softmax_f32", vec![2, 3], vec![at(2, rw(24)), rw(24)], driver(a, 0)),
        // noop
        ("noop", vec![], vec![], Ok(())),
        ("noop", vec![1, 2, 3, 4, 5], vec![ro(3), at(1, rw(5))], Ok(())),
    ];
    for (name, constants, bindings, want) in &cases {
        let got = agree(name, constants, bindings);
        assert_eq!(&key(&got), want, "{name} {constants:?} {bindings:?}");
    }
}

/// A small xorshift generator, so the sweep is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// Pseudo-random dispatches of every kernel: constants from a set of interesting values,
/// bindings of interesting sizes, offsets and writability; `check` must always agree.
#[test]
fn random_sweep() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let values = [0, 1, 2, 3, 4, 5, 7, 8, 1 << 16, 1 << 31, u32::MAX];
    let sizes = [
        0, 3, 4, 8, 12, 16, 20, 24, 28, 36, 60, 64, 100, 140, 196, 256,
    ];
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..20_000 {
        let name = rng.pick(&KERNELS.iter().map(|k| k.name).collect::<Vec<_>>());
        let constants: Vec<u32> = (0..rng.next() % 6).map(|_| rng.pick(&values)).collect();
        let bindings: Vec<BindingInfo> = (0..rng.next() % 6)
            .map(|_| BindingInfo {
                offset: rng.pick(&[0, 0, 0, 0, 4, 2, 1]),
                bytes: rng.pick(&sizes),
                writable: rng.next() % 4 != 0,
            })
            .collect();
        let (constants, bindings) = if rng.next() % 2 == 0 {
            shaped(&mut rng, name)
        } else {
            (constants, bindings)
        };
        let got = agree(name, &constants, &bindings);
        let key = match got {
            Ok(()) => format!("{name}: ok"),
            Err(Error::Kernel(_)) => format!("{name}: {}", key(&got).err().unwrap_or_default().0),
            Err(e) => format!("{name}: {e:?}"),
        };
        *outcomes.entry(key).or_default() += 1;
    }
    // The sweep reaches every outcome the hand-picked cases name (but the overflow of a
    // 32-bit host, which cannot happen here).
    for name in [
        "fill_u32",
        "copy_u32",
        "add_f32",
        "mul_f32",
        "relu_f32",
        "matmul_f32",
        "softmax_f32",
    ] {
        assert!(
            outcomes.contains_key(&format!("{name}: ok")),
            "{name}: {outcomes:#?}"
        );
    }
    for what in [
        "kernel: missing binding",
        "kernel: missing push constants",
        "kernel: binding too small",
        "kernel: binding misaligned",
        "kernel: binding is read-only",
        "matmul_f32: M, K and N must be non-zero",
        "matmul_f32: unknown flag bits",
        "matmul_f32: matrix size overflows",
        "softmax_f32: rows and cols must be non-zero",
        "softmax_f32: rows * cols overflows",
    ] {
        assert!(
            outcomes.keys().any(|k| k.ends_with(what)),
            "no case gave {what}: {outcomes:#?}"
        );
    }
}

/// A dispatch of `name` whose bindings are sized for small random constants, give or take
/// a few bytes, so that the sweep also reaches the kernels' success paths.
fn shaped(rng: &mut Rng, name: &str) -> (Vec<u32>, Vec<BindingInfo>) {
    let dims = [1u32, 2, 3, 5];
    let (m, k, n) = (rng.pick(&dims), rng.pick(&dims), rng.pick(&dims));
    let flags = rng.pick(&[0, FLAG_BIAS, FLAG_RELU, FLAG_BIAS | FLAG_RELU, 4]);
    let (constants, elements): (Vec<u32>, Vec<u32>) = match name {
        "matmul_f32" => (vec![m, k, n, flags], vec![m * k, k * n, m * n, n]),
        "softmax_f32" => (vec![m, n], vec![m * n, m * n]),
        "fill_u32" => (vec![m], vec![n]),
        _ => (vec![], vec![n; 3]),
    };
    let keep = constants
        .len()
        .saturating_sub((rng.next() % 4 == 0) as usize);
    let constants = constants[..keep].to_vec();
    let bindings = elements
        .iter()
        .map(|&e| BindingInfo {
            offset: rng.pick(&[0, 0, 0, 0, 0, 0, 4, 2]),
            bytes: (u64::from(e) * 4).saturating_add_signed(rng.pick(&[0, 0, 0, 0, 1, 3, -1, -4])),
            writable: rng.next() % 8 != 0,
        })
        .collect();
    (constants, bindings)
}

type Local = LocalDevice<'static>;

fn local_device() -> Local {
    let memory: &'static mut [u8] = Box::leak(vec![0u8; 1 << 20].into_boxed_slice());
    let config = LocalConfig {
        kernels: hal_local::kernels::BUILTIN,
        ..LocalConfig::default()
    };
    let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
    LocalDevice::new(storage, memory, config).expect("a local device")
}

/// One dispatch through hal-local's `Device` API; the error is the device's.
fn device_dispatch(
    dev: &mut Local,
    name: &str,
    constants: &[u32],
    bindings: &[BufferRef],
) -> Result<(), Error> {
    let executable = dev.load_executable(ExecutableSource::Kernel(name))?;
    let cb = dev
        .create_command_buffer(CommandBufferMode::OneShot, 64, 0)
        .expect("command buffer");
    let result = dev
        .record(
            cb,
            Record::Dispatch {
                executable,
                workgroups: Workgroups::Direct([2, 1, 1]),
                constants,
                bindings,
            },
        )
        .and_then(|()| dev.end(cb))
        .and_then(|()| {
            let semaphore = dev.create_semaphore(0).expect("semaphore");
            let signal = [SemaphoreValue::new(semaphore, 1)];
            let result = dev
                .queue_execute(Submit::new(&[], &signal), cb, &[])
                .and_then(|()| dev.wait_semaphores(&signal, Timeout::Infinite));
            dev.release_semaphore(semaphore).expect("release semaphore");
            result
        });
    dev.release_command_buffer(cb).expect("release");
    dev.release_executable(executable).expect("release");
    result
}

/// Through the public Device API, hal-local's real `Error::Kernel`: one case of every
/// error kind (and the unknown name), each equal to `check`'s answer.
#[test]
fn device_api_errors() {
    let mut dev = local_device();
    let params = BufferParams::host_visible();
    let writable = dev.allocate_buffer(params, 256).expect("buffer");
    let read_only_params =
        params.with_usage(params.usage.difference(BufferUsage::DISPATCH_STORAGE_WRITE));
    let read_only = dev.allocate_buffer(read_only_params, 256).expect("buffer");
    let read_only_access = dev
        .allocate_buffer(
            BufferParams {
                access: MemoryAccess::READ,
                ..params
            },
            256,
        )
        .ok();

    let w = |offset: u64, length: u64| BufferRef::buffer(writable).at(offset, length);
    let r = |offset: u64, length: u64| BufferRef::buffer(read_only).at(offset, length);
    let info = |b: &BufferRef| BindingInfo {
        offset: b.offset,
        bytes: b.length,
        writable: b.target == BufferRef::buffer(writable).target,
    };
    let cases: Vec<(&str, Vec<u32>, Vec<BufferRef>)> = vec![
        ("fill_u32", vec![5], vec![w(0, 64)]),
        ("fill_u32", vec![], vec![w(0, 64)]),
        ("fill_u32", vec![5], vec![]),
        ("fill_u32", vec![5], vec![r(0, 64)]),
        ("fill_u32", vec![5], vec![w(2, 64)]),
        ("copy_u32", vec![], vec![r(0, 60), w(64, 64)]),
        ("copy_u32", vec![], vec![r(0, 64), w(64, 64)]),
        ("add_f32", vec![], vec![w(0, 24), r(32, 24), w(64, 24)]),
        ("mul_f32", vec![], vec![w(0, 24), r(34, 24), w(64, 24)]),
        ("relu_f32", vec![], vec![w(0, 24), r(32, 24)]),
        (
            "matmul_f32",
            vec![2, 3, 4],
            vec![w(0, 24), w(24, 48), w(72, 32)],
        ),
        (
            "matmul_f32",
            vec![2, 3, 4, 3],
            vec![w(0, 24), w(24, 48), w(72, 32), r(0, 12)],
        ),
        (
            "matmul_f32",
            vec![2, 3],
            vec![w(0, 24), w(24, 48), w(72, 32)],
        ),
        ("matmul_f32", vec![2, 0, 4], vec![]),
        ("matmul_f32", vec![2, 3, 4, 8], vec![]),
        ("matmul_f32", vec![u32::MAX, u32::MAX, 4], vec![]),
        ("softmax_f32", vec![2, 3], vec![r(0, 24), w(64, 24)]),
        ("softmax_f32", vec![0, 3], vec![r(0, 24), w(64, 24)]),
        ("softmax_f32", vec![u32::MAX, u32::MAX], vec![]),
        ("softmax_f32", vec![2, 3], vec![r(0, 24), w(64, 20)]),
        ("noop", vec![1], vec![r(1, 3)]),
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for (name, constants, refs) in &cases {
        let infos: Vec<BindingInfo> = refs.iter().map(info).collect();
        let want = device_dispatch(&mut dev, name, constants, refs);
        assert_eq!(
            check(name, constants, &infos),
            want,
            "{name} {constants:?} {infos:?}"
        );
        // The direct path maps the same way.
        assert_eq!(hal_local_direct(name, [2, 1, 1], constants, &infos), want);
        kinds.insert(match want {
            Ok(()) => "ok",
            Err(Error::Kernel(_)) => key(&want).err().unwrap_or_default().0,
            Err(_) => "other",
        });
    }
    assert_eq!(kinds.len(), 11, "{kinds:?}");

    // A buffer without device write access is read-only to kernels too.
    if let Some(buffer) = read_only_access {
        let refs = [BufferRef::buffer(buffer).at(0, 16)];
        let want = device_dispatch(&mut dev, "fill_u32", &[1], &refs);
        assert_eq!(key(&want), driver("kernel: binding is read-only", 0));
        assert_eq!(check("fill_u32", &[1], &[ro(16)]), want);
    }

    // An unknown name: hal-local refuses it when loading.
    let want = dev
        .load_executable(ExecutableSource::Kernel("no_such_kernel"))
        .map(|_| ());
    assert!(want.is_err());
    assert_eq!(check("no_such_kernel", &[], &[]), want);
}
