#![doc = include_str!("../README.md")]

mod alloca;
mod load;
mod models;
mod pool;
mod reference;
mod replay;

use hal_core::Device;
use hal_vulkan::{VulkanConfig, VulkanDevice};
use serde_json::json;
use std::process::ExitCode;

/// The sizes of one run.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    /// Bytes of the constant pool.
    pub pool: u64,
    /// The device's largest allocation (so the pool is chunked).
    pub chunk: u64,
    /// Bytes of each of the two staging buffers.
    pub staging: u64,
    /// Bytes of the pinned buffer of the copy baseline, and how many copies of it.
    pub baseline: u64,
    /// Copies of the baseline buffer timed.
    pub baseline_reps: u64,
    /// Bytes each checksum dispatch covers.
    pub verify_window: u64,
    /// alloca/dealloca pairs timed.
    pub alloca_pairs: u64,
    /// Executions timed per replay variant.
    pub replay_iters: u64,
    /// Inferences timed per digits variant.
    pub model_iters: usize,
    /// Inferences timed per reference model.
    pub reference_iters: usize,
    /// How the loads run (import window, threads filling staging).
    pub load: hal_vulkan::HostLoadOptions,
    /// Ask the kernel for transparent huge pages for the host pool.
    pub hugepages: bool,
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

impl Sizes {
    fn full(pool: u64) -> Self {
        Self {
            pool,
            chunk: 2 * GIB,
            staging: 64 * MIB,
            baseline: GIB,
            baseline_reps: 16,
            verify_window: 256 * MIB,
            alloca_pairs: 200_000,
            replay_iters: 500,
            model_iters: 2000,
            reference_iters: 200,
            load: hal_vulkan::HostLoadOptions::default(),
            hugepages: true,
        }
    }

    fn smoke() -> Self {
        Self {
            pool: 256 * MIB,
            chunk: 32 * MIB,
            staging: 8 * MIB,
            baseline: 32 * MIB,
            baseline_reps: 4,
            verify_window: 32 * MIB,
            alloca_pairs: 20_000,
            replay_iters: 20,
            model_iters: 40,
            reference_iters: 3,
            load: hal_vulkan::HostLoadOptions {
                import_window: 16 << 20,
                ..hal_vulkan::HostLoadOptions::default()
            },
            hugepages: true,
        }
    }
}

/// GB/s (10^9 bytes per second).
pub fn gbps(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// Bytes of memory the host has available (Linux), if known.
fn host_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn config(sizes: &Sizes, emulate: bool) -> VulkanConfig {
    VulkanConfig {
        max_allocation_size: sizes.chunk,
        staging_bytes: sizes.staging,
        emulate_device_only_heap: emulate,
        strict_teardown: true,
        ..VulkanConfig::default()
    }
}

fn device(sizes: &Sizes, emulate: bool) -> Result<VulkanDevice<'static>, String> {
    VulkanDevice::new(config(sizes, emulate)).map_err(|e| format!("Vulkan device: {e}"))
}

struct Args {
    smoke: Option<bool>,
    pool_gib: Option<u64>,
    json: Option<String>,
    import_window_mib: Option<u64>,
    import_threads: Option<usize>,
    copy_threads: Option<usize>,
    hugepages: bool,
    load_only: bool,
    skip_load: bool,
}

fn number<T: std::str::FromStr>(
    it: &mut impl Iterator<Item = String>,
    flag: &str,
) -> Result<T, String> {
    let v = it.next().ok_or(format!("{flag} needs a number"))?;
    v.parse().map_err(|_| format!("{flag} {v}: not a number"))
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        smoke: None,
        pool_gib: None,
        json: None,
        import_window_mib: None,
        import_threads: None,
        copy_threads: None,
        hugepages: true,
        load_only: false,
        skip_load: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--smoke" => out.smoke = Some(true),
            "--full" => out.smoke = Some(false),
            "--pool-gib" => {
                let v = it.next().ok_or("--pool-gib needs a number")?;
                out.pool_gib = Some(v.parse().map_err(|_| format!("--pool-gib {v}"))?);
            }
            "--json" => out.json = Some(it.next().ok_or("--json needs a path")?),
            "--import-window-mib" => out.import_window_mib = Some(number(&mut it, &a)?),
            "--import-threads" => out.import_threads = Some(number(&mut it, &a)?),
            "--copy-threads" => out.copy_threads = Some(number(&mut it, &a)?),
            "--no-hugepages" => out.hugepages = false,
            "--load-only" => out.load_only = true,
            "--no-load" => out.skip_load = true,
            other => {
                return Err(format!(
                    "unknown argument {other} (--smoke, --full, --pool-gib N, --json PATH, \
                     --import-window-mib N, --import-threads N, --copy-threads N, \
                     --no-hugepages, --load-only, --no-load)"
                ))
            }
        }
    }
    Ok(out)
}

fn run() -> Result<(), String> {
    let args = args()?;
    // A first device to learn what this is.
    let probe = device(&Sizes::smoke(), false)?;
    let name = probe.device_name().to_string();
    let has_device_heap = probe.heaps().len() > 1;
    let device_heap = probe.heaps().get(1).map_or(0, |h| h.size);
    let discrete = has_device_heap && probe.host_import();
    drop(probe);
    let smoke = args.smoke.unwrap_or(!discrete);
    let mut sizes = if smoke {
        Sizes::smoke()
    } else {
        // 64 GiB, or what the device and the host can hold (with room to spare).
        let fit = (device_heap / 10 * 9)
            .min(host_available().unwrap_or(u64::MAX) / 10 * 7)
            .min(64 * GIB);
        Sizes::full(fit / GIB * GIB)
    };
    if let Some(gib) = args.pool_gib {
        sizes.pool = gib * GIB;
    }
    if let Some(mib) = args.import_window_mib {
        sizes.load.import_window = mib * MIB;
    }
    if let Some(threads) = args.copy_threads {
        sizes.load.copy_threads = threads;
    }
    if let Some(threads) = args.import_threads {
        sizes.load.import_threads = threads;
    }
    sizes.hugepages = args.hugepages;
    if sizes.pool < sizes.baseline || sizes.pool == 0 {
        return Err(format!("pool of {} B is too small", sizes.pool));
    }
    let mut device = device(&sizes, !has_device_heap)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "Ember Vulkan bench on {name} ({}; {} host threads)",
        if smoke { "smoke sizes" } else { "full sizes" },
        threads
    );
    let load = if args.skip_load {
        println!("1. constant pool: skipped (--no-load)");
        json!(null)
    } else {
        println!(
            "1. constant pool of {:.2} GiB into one chunked device buffer ({} MiB chunks, staging 2 × {} MiB)",
            sizes.pool as f64 / GIB as f64,
            sizes.chunk / MIB,
            sizes.staging / MIB
        );
        load::run(&mut device, &sizes, threads)?
    };
    let (alloca, replay, models) = if args.load_only {
        (json!(null), json!(null), json!(null))
    } else {
        println!("2. queue-ordered allocation");
        let alloca = alloca::run(&mut device, sizes.alloca_pairs, 4096)?;
        println!("3. memoized command buffers");
        let replay = replay::run(&mut device, sizes.replay_iters)?;
        println!("4. models end to end (write input, invoke, read results)");
        let models = models::run(
            &config(&sizes, !has_device_heap),
            sizes.model_iters,
            sizes.reference_iters,
        )?;
        (alloca, replay, models)
    };
    let messages = device.validation_messages();
    let report = json!({
        "device": name,
        "smoke": smoke,
        "host_threads": threads,
        "validation_messages": messages,
        "load": load,
        "alloca": alloca,
        "replay": replay,
        "models": models,
    });
    drop(device);
    let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    match args.json {
        Some(path) => {
            if let Some(dir) = std::path::Path::new(&path).parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(&path, text + "\n").map_err(|e| format!("{path}: {e}"))?;
            println!("wrote {path}");
        }
        None => println!("{text}"),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench vulkan: {e}");
            ExitCode::FAILURE
        }
    }
}
