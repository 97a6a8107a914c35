//! Module benchmark: load time (decode + validate) against the constant pool's size, and
//! time per digits inference through a `Session`.
//!
//! `cargo bench -p ember-tests --bench module` (`EMBER_BENCH_QUICK=1` for a tiny run), or
//! `cargo xtask bench module`. Prints a table and writes `target/bench/module.json`:
//! - load: `Module::parse` of a module with 64 executables, 64 constants and a function of
//!   64 dispatches, once with a 1 MiB constant pool and once with a 1 GiB pool. Nothing in
//!   the pool is read or copied, so the two should be equal within noise (the ratio);
//! - digits: the main job's module (trained here, deterministically) on the local driver —
//!   `invoke` alone, and upload + invoke + read back — against the same network computed by
//!   a plain Rust `f32` forward pass in the same process (the floor).

use std::hint::black_box;
use std::time::Instant;

use ember_digits::{logits_f32, model, train, Digits, TrainConfig};
use hal_core::module::{
    write, ConstantDef, ExecutableDef, FunctionDef, Header, Module, Operand, PoolRange, Seq, Step,
    Transient, Value,
};
use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{BufferSpan, Device, QueueAffinity};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};

/// Median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `f` `samples` times after a warm-up, returning the median ns per call.
fn time(samples: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..samples / 10 + 1 {
        f();
    }
    let mut ns: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64
        })
        .collect();
    median(&mut ns)
}

fn encode<T: serde::Serialize>(items: &[T]) -> Vec<u8> {
    items
        .iter()
        .flat_map(|i| postcard::to_allocvec(i).expect("encode"))
        .collect()
}

const KERNELS: [&str; 4] = ["matmul_f32", "add_f32", "relu_f32", "softmax_f32"];

/// A module with 64 executables, 64 constants splitting a pool of `pool_len` bytes, and one
/// function of 64 dispatches; the pool is zero pages the bench never touches.
fn module_with_pool(pool_len: u64) -> Vec<u8> {
    let executables: Vec<ExecutableDef<'_>> = (0..64)
        .map(|i| ExecutableDef {
            kernel: KERNELS[i % 4],
            spirv: None,
            entry: "",
        })
        .collect();
    let names: Vec<String> = (0..64).map(|i| format!("weights_{i}")).collect();
    let each = pool_len / 64;
    let constants: Vec<ConstantDef<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| ConstantDef {
            name,
            data: PoolRange {
                offset: i as u64 * each,
                length: each,
            },
        })
        .collect();
    let operand = |value, length| Operand {
        value,
        offset: 0,
        length,
    };
    let push_constants = encode(&[1u32, 64, 64, 3]);
    let bindings: Vec<Vec<u8>> = (0..64)
        .map(|i| {
            encode(&[
                operand(Value::Argument(0), 256),
                operand(Value::Constant(i), 4096),
                operand(Value::Transient(i % 2), 256),
                operand(Value::Constant((i + 1) % 64), 256),
            ])
        })
        .collect();
    let steps: Vec<Step<'_>> = bindings
        .iter()
        .enumerate()
        .map(|(i, b)| Step::Dispatch {
            executable: i as u32,
            workgroups: [1, 1, 1],
            constants: Seq::from_encoded(4, &push_constants),
            bindings: Seq::from_encoded(4, b),
        })
        .collect();
    let steps = encode(&steps);
    let (arguments, results) = (encode(&[256u64]), encode(&[256u64]));
    let transients = encode(&[
        Transient {
            offset: 0,
            size: 256,
        },
        Transient {
            offset: 256,
            size: 256,
        },
    ]);
    let function = FunctionDef {
        name: "run",
        arguments: Seq::from_encoded(1, &arguments),
        results: Seq::from_encoded(1, &results),
        inputs: Seq::from_encoded(0, &[]),
        outputs: Seq::from_encoded(0, &[]),
        transients: Seq::from_encoded(2, &transients),
        arena_size: 512,
        steps: Seq::from_encoded(64, &steps),
    };
    let (e, c, f) = (
        encode(&executables),
        encode(&constants),
        encode(&[function]),
    );
    let header = Header {
        name: "bench",
        pool_len,
        executables: Seq::from_encoded(64, &e),
        constants: Seq::from_encoded(64, &c),
        functions: Seq::from_encoded(1, &f),
    };
    // The file without its pool, then the pool as fresh zero pages (calloc: untouched).
    let head = write(&header, &[]).expect("write header");
    let mut file = vec![0u8; head.len() + pool_len as usize];
    file[..head.len()].copy_from_slice(&head);
    file
}

type Storage = LocalStorage<16, 64, 32, 4>;

fn main() {
    let quick = std::env::var_os("EMBER_BENCH_QUICK").is_some();
    let samples = if quick { 20 } else { 2_000 };

    // 1. Load time against the pool's size.
    let small = module_with_pool(1 << 20);
    let large_len: u64 = if quick { 64 << 20 } else { 1 << 30 };
    let large = module_with_pool(large_len);
    for m in [&small, &large] {
        let module = Module::parse(m).expect("bench module is valid");
        assert_eq!(module.executables().len(), 64);
    }
    let load_small = time(samples, || {
        black_box(Module::parse(black_box(&small)).is_ok());
    });
    let load_large = time(samples, || {
        black_box(Module::parse(black_box(&large)).is_ok());
    });
    drop(large);

    // 2. Digits inference.
    let digits = Digits::load_default().expect("digits data");
    let (train_half, held_out) = digits.split();
    let mlp = train(&train_half, &TrainConfig::default(), |_, _, _, _| {});
    let packed = ember_pack::pack(&model::description(&mlp), std::path::Path::new("."))
        .expect("pack digits");
    let blocks: &'static mut [[u8; 64]] =
        Box::leak(vec![[0u8; 64]; packed.bytes.len().div_ceil(64)].into_boxed_slice());
    let flat = blocks.as_flattened_mut();
    flat[..packed.bytes.len()].copy_from_slice(&packed.bytes);
    let bytes: &'static [u8] = &flat[..packed.bytes.len()];
    let load_digits = time(samples, || {
        black_box(Module::parse(black_box(bytes)).is_ok());
    });
    let module = Module::parse(bytes).expect("digits module");
    let region: &'static mut [u8] = Box::leak(vec![0u8; 16 << 10].into_boxed_slice());
    let config = LocalConfig {
        transient_bytes: 4 << 10,
        ..LocalConfig::default()
    };
    let storage: &'static mut Storage = Box::leak(Box::new(Storage::EMPTY));
    let mut dev = LocalDevice::new(storage, region, config).expect("device");
    let mut session =
        Session::<'static, 4, 8, 2>::load(&mut dev, module, LoadOptions::default()).expect("load");
    let f = session.function(model::FUNCTION).expect("classify");
    let image = dev
        .allocate_buffer(hal_core::memory::BufferParams::device_local(), 256)
        .expect("image");
    let out = session
        .allocate_results(&mut dev, f, ResultMemory::DeviceLocal)
        .expect("result")[0];
    let features = held_out.features();
    let x: Vec<u8> = features[0].iter().flat_map(|v| v.to_le_bytes()).collect();
    dev.write_buffer(BufferSpan::whole(image), &x)
        .expect("write");
    let (args, results) = ([BufferSpan::whole(image)], [BufferSpan::whole(out)]);
    let invoke_ns = time(samples, || {
        session
            .invoke(&mut dev, f, &args, &results, QueueAffinity::ANY)
            .expect("invoke");
    });
    let mut i = 0;
    let mut read = [0u8; 40];
    let end_to_end_ns = time(samples, || {
        let x: [u8; 256] = bytemuck_f32(&features[i % features.len()]);
        i += 1;
        dev.write_buffer(BufferSpan::whole(image), &x)
            .expect("write");
        session
            .invoke(&mut dev, f, &args, &results, QueueAffinity::ANY)
            .expect("invoke");
        dev.read_buffer(BufferSpan::whole(out), &mut read)
            .expect("read");
        black_box(&read);
    });
    let mut j = 0;
    let reference_ns = time(samples, || {
        black_box(logits_f32(&mlp, black_box(&features[j % features.len()])));
        j += 1;
    });

    println!("\nModule benchmark, median over {samples} samples");
    println!("{:<58} {:>12} {:>10}", "what", "median", "ratio");
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "{:<58} {:>9.0} ns {:>10}",
        "load (parse + validate), 64 executables, 1 MiB pool", load_small, "1.00"
    );
    println!(
        "{:<58} {:>9.0} ns {:>9.2}×",
        format!(
            "load (parse + validate), 64 executables, {:.0} MiB pool",
            mib(large_len)
        ),
        load_large,
        load_large / load_small
    );
    println!(
        "{:<58} {:>9.0} ns",
        format!("load (parse + validate), digits ({} bytes)", bytes.len()),
        load_digits
    );
    println!(
        "{:<58} {:>9.0} ns {:>10}",
        "digits: plain Rust f32 forward pass (baseline)", reference_ns, "1.00"
    );
    println!(
        "{:<58} {:>9.0} ns {:>9.2}×",
        "digits: Session::invoke (1 queue_alloca, memoized replay)",
        invoke_ns,
        invoke_ns / reference_ns
    );
    println!(
        "{:<58} {:>9.0} ns {:>9.2}×",
        "digits: upload + invoke + read back",
        end_to_end_ns,
        end_to_end_ns / reference_ns
    );

    let json = serde_json::json!({
        "samples": samples,
        "load": {
            "executables": 64,
            "small_pool_bytes": 1u64 << 20,
            "small_median_ns": load_small,
            "large_pool_bytes": large_len,
            "large_median_ns": load_large,
            "large_over_small": load_large / load_small,
            "digits_module_bytes": bytes.len(),
            "digits_median_ns": load_digits,
        },
        "digits": {
            "invoke_median_ns": invoke_ns,
            "end_to_end_median_ns": end_to_end_ns,
            "reference_f32_median_ns": reference_ns,
            "invoke_over_reference": invoke_ns / reference_ns,
        },
    });
    let path = ember_tests::harness::json_path().with_file_name("module.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    std::fs::write(&path, serde_json::to_string_pretty(&json).expect("json")).expect("write");
    println!("wrote {}", path.display());
}

fn bytemuck_f32(values: &[f32; 64]) -> [u8; 256] {
    let mut out = [0u8; 256];
    for (o, v) in out.chunks_exact_mut(4).zip(values) {
        o.copy_from_slice(&v.to_le_bytes());
    }
    out
}
