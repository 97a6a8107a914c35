//! Both drivers refuse through the same contract: a table of dispatches of the built-in
//! kernels, good and bad, run through the local driver's and the Vulkan driver's `Device` API
//! (lavapipe in CI, any Vulkan 1.2 device with `EMBER_VULKAN_DEVICE`; validation on unless
//! `EMBER_VULKAN_VALIDATION=0`), each answer equal to what the kernel's contract in
//! `ember_kernels::builtin` says. The contracts' own cases are ember-kernels' unit tests.

use std::collections::BTreeSet;

use ember_kernels::builtin::{self, MATMUL_FLAG_BIAS, MATMUL_FLAG_RELU};
use ember_tests::conformance::{dispatch, host_params, Baseline};
use hal_core::contract::{self, BindingFacts};
use hal_core::kernel::KernelError;
use hal_core::memory::BufferUsage;
use hal_core::{Buffer, BufferRef, Device, Error, ExecutableSource};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use hal_vulkan::{VulkanConfig, VulkanDevice};

/// Which buffer a binding is in: one the kernels may write, or one they may only read.
#[derive(Clone, Copy)]
enum In {
    Writable,
    ReadOnly,
}

/// A binding: its buffer, offset and length.
type Bind = (In, u64, u64);

fn w(offset: u64, len: u64) -> Bind {
    (In::Writable, offset, len)
}

fn r(offset: u64, len: u64) -> Bind {
    (In::ReadOnly, offset, len)
}

/// The table: each kernel's success, and every refusal its contract can make, including
/// dispatches with several faults (which one is reported is the contract's order).
fn cases() -> Vec<(&'static str, Vec<u32>, Vec<Bind>)> {
    let (bias, relu) = (MATMUL_FLAG_BIAS, MATMUL_FLAG_RELU);
    vec![
        ("fill_u32", vec![5], vec![w(0, 64)]),
        ("fill_u32", vec![], vec![w(0, 64)]),
        ("fill_u32", vec![5], vec![]),
        ("fill_u32", vec![5], vec![r(0, 64)]),
        ("fill_u32", vec![5], vec![w(2, 64)]),
        ("fill_u32", vec![5], vec![r(2, 64)]),
        ("copy_u32", vec![], vec![r(0, 64), w(64, 64)]),
        ("copy_u32", vec![], vec![r(0, 60), w(64, 64)]),
        ("copy_u32", vec![], vec![r(1, 60), w(64, 64)]),
        ("copy_u32", vec![], vec![w(0, 4), r(64, 64)]),
        ("add_f32", vec![], vec![w(0, 24), r(32, 24), w(64, 24)]),
        ("add_f32", vec![], vec![w(0, 20), r(32, 24), w(64, 24)]),
        ("mul_f32", vec![], vec![w(0, 24), r(34, 24), w(64, 24)]),
        ("mul_f32", vec![], vec![w(0, 24), r(32, 24)]),
        ("relu_f32", vec![], vec![w(0, 24), r(32, 24)]),
        ("relu_f32", vec![], vec![w(0, 24), w(32, 28)]),
        // 2x3 · 3x4: A 24 bytes, B 48, C 32, bias 16.
        (
            "matmul_f32",
            vec![2, 3, 4],
            vec![w(0, 24), w(24, 48), w(72, 32)],
        ),
        (
            "matmul_f32",
            vec![2, 3, 4, bias | relu],
            vec![w(0, 24), w(24, 48), w(72, 32), r(0, 16)],
        ),
        (
            "matmul_f32",
            vec![2, 3, 4, bias],
            vec![w(0, 24), w(24, 48), w(72, 32), r(0, 12)],
        ),
        (
            "matmul_f32",
            vec![2, 3, 4, bias],
            vec![w(0, 24), w(24, 48), w(72, 32)],
        ),
        (
            "matmul_f32",
            vec![2, 3],
            vec![w(0, 24), w(24, 48), w(72, 32)],
        ),
        ("matmul_f32", vec![2, 0, 4], vec![]),
        ("matmul_f32", vec![2, 3, 4, 8], vec![]),
        ("matmul_f32", vec![u32::MAX, u32::MAX, 4], vec![]),
        (
            "matmul_f32",
            vec![2, 3, 4],
            vec![w(0, 20), w(26, 48), w(72, 32)],
        ),
        (
            "matmul_f32",
            vec![2, 3, 4],
            vec![w(0, 24), w(24, 48), r(72, 32)],
        ),
        ("softmax_f32", vec![2, 3], vec![r(0, 24), w(64, 24)]),
        ("softmax_f32", vec![0, 3], vec![r(0, 24), w(64, 24)]),
        ("softmax_f32", vec![u32::MAX, u32::MAX], vec![]),
        ("softmax_f32", vec![2, 3], vec![r(0, 24), w(64, 20)]),
        ("softmax_f32", vec![2, 3], vec![r(0, 20), r(64, 20)]),
        ("softmax_f32", vec![2, 3], vec![w(2, 24)]),
        // 1 row, 2 inputs, 2 hidden units, 2 outputs: x 8 bytes, w1 16, b1 8, w2 16, b2 8,
        // y 8.
        (
            "mlp_softmax_f32",
            vec![1, 2, 2, 2],
            vec![r(0, 8), r(8, 16), r(24, 8), r(32, 16), r(48, 8), w(64, 8)],
        ),
        (
            "mlp_softmax_f32",
            vec![1, 2, 0, 2],
            vec![r(0, 8), r(8, 16), r(24, 8), r(32, 16), r(48, 8), w(64, 8)],
        ),
        ("mlp_softmax_f32", vec![1, 2, 513, 2], vec![]),
        ("mlp_softmax_f32", vec![1, 2, 2, 600], vec![]),
        ("mlp_softmax_f32", vec![u32::MAX, u32::MAX, 2, 2], vec![]),
        (
            "mlp_softmax_f32",
            vec![1, 2, 2, 2],
            vec![r(0, 8), r(8, 16), r(24, 8), r(32, 16), r(48, 8), w(64, 4)],
        ),
        (
            "mlp_softmax_f32",
            vec![1, 2, 2, 2],
            vec![r(0, 8), r(8, 16), r(24, 8), r(32, 16), r(48, 8), r(64, 8)],
        ),
        ("noop", vec![1], vec![r(1, 3)]),
    ]
}

/// Runs the table on `dev` (its kernels loaded with `kernel`), asserting each answer is the
/// contract's; returns the outcomes seen, by kind.
fn refuses_as_the_contracts_say<D: Device>(
    dev: &mut D,
    kernel: fn(&'static str) -> ExecutableSource<'static>,
) -> BTreeSet<&'static str> {
    let baseline = Baseline::of(&*dev);
    let params = host_params();
    let writable = dev.allocate_buffer(params, 256).expect("buffer");
    let read_only = dev
        .allocate_buffer(
            params.with_usage(params.usage.difference(BufferUsage::DISPATCH_STORAGE_WRITE)),
            256,
        )
        .expect("buffer");
    let buffer = |b: In| -> Buffer {
        match b {
            In::Writable => writable,
            In::ReadOnly => read_only,
        }
    };
    let mut kinds = BTreeSet::new();
    for (name, constants, binds) in cases() {
        let refs: Vec<BufferRef> = binds
            .iter()
            .map(|&(b, offset, len)| BufferRef::buffer(buffer(b)).at(offset, len))
            .collect();
        let facts: Vec<BindingFacts> = binds
            .iter()
            .map(|&(b, offset, len)| BindingFacts {
                offset,
                len,
                writable: matches!(b, In::Writable),
            })
            .collect();
        let contract = builtin::find(name).expect("a built-in contract");
        let want = contract.check(&constants, &facts).map(drop);
        let executable = dev.load_executable(kernel(name)).expect("load");
        let got = dispatch(dev, executable, [2, 1, 1], &constants, &refs);
        dev.release_executable(executable).expect("release");
        assert_eq!(
            got,
            want.map_err(Error::Kernel),
            "{name} constants {constants:?} bindings {facts:?}"
        );
        kinds.insert(match want {
            Ok(()) => "ok",
            Err(KernelError::MissingBinding { .. }) => "missing binding",
            Err(KernelError::MissingConstants { .. }) => "missing constants",
            Err(KernelError::BindingTooSmall { .. }) => "binding too small",
            Err(KernelError::Misaligned { .. }) => "misaligned",
            Err(KernelError::ReadOnly { .. }) => "read-only",
            Err(KernelError::Shape(what)) => what,
            Err(_) => "another refusal",
        });
    }
    dev.release_buffer(writable).expect("release");
    dev.release_buffer(read_only).expect("release");
    baseline.check(&*dev, "after the table");
    kinds
}

/// The table reaches every kind of refusal and every shape message.
fn assert_covers(kinds: &BTreeSet<&str>) {
    let messages = builtin::BUILTIN.iter().flat_map(|c| {
        let r = c.refusals;
        let widths = c.constants.iter().filter_map(|k| match k {
            contract::Constant::Width { refusal, .. } => Some(*refusal),
            _ => None,
        });
        [r.zero, r.flags, r.overflow].into_iter().chain(widths)
    });
    for kind in [
        "ok",
        "missing binding",
        "missing constants",
        "binding too small",
        "misaligned",
        "read-only",
    ]
    .into_iter()
    .chain(messages.filter(|m| !m.is_empty()))
    {
        assert!(kinds.contains(kind), "no case gives {kind}: {kinds:?}");
    }
}

#[test]
fn local_driver_refuses_as_the_contracts_say() {
    let memory: &'static mut [u8] = Box::leak(vec![0u8; 1 << 20].into_boxed_slice());
    let config = LocalConfig {
        kernels: hal_local::kernels::BUILTIN,
        ..LocalConfig::default()
    };
    let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
    let mut dev: LocalDevice<'static> =
        LocalDevice::new(storage, memory, config).expect("a local device");
    let kinds = refuses_as_the_contracts_say(&mut dev, ExecutableSource::Kernel);
    assert_covers(&kinds);
}

#[test]
fn vulkan_driver_refuses_as_the_contracts_say() {
    let validation = std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0");
    let mut dev = VulkanDevice::new(VulkanConfig {
        validation,
        strict_teardown: true,
        ..VulkanConfig::default()
    })
    .expect("a Vulkan device");
    let kinds = refuses_as_the_contracts_say(&mut dev, ExecutableSource::Kernel);
    assert_covers(&kinds);
}
