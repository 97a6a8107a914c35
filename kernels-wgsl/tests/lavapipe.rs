//! Every kernel's SPIR-V on a Vulkan device (Mesa's lavapipe, `llvmpipe`, where present),
//! compared bit for bit with hal-local's kernel on the same inputs, over several grids and
//! with nonzero `base` offsets.
//!
//! Without a Vulkan device the tests fail, unless `EMBER_SKIP_VULKAN=1` is set.
//!
//! This is test scaffolding, not the Vulkan driver: one buffer per binding (host-visible,
//! coherent), one pipeline per dispatch, one submission per dispatch, fence-waited; Vulkan
//! 1.1, where the modules' `SPV_KHR_storage_buffer_storage_class` is core.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use ash::vk;
use ember_kernels_wgsl::{find, PushConstants, FLAG_BIAS, FLAG_RELU, PUSH_CONSTANT_BYTES};
use hal_core::contract::BindingFacts;
use hal_local::kernel::{Binding, Workgroup};

/// The grids every case runs on.
const GRIDS: &[[u32; 3]] = &[[1, 1, 1], [3, 1, 1], [7, 2, 1], [2, 2, 3]];

/// Words before each binding's data (its offset in the descriptor's range): nonzero and
/// different per binding.
const BASES: [u32; 6] = [3, 1, 5, 2, 6, 4];

/// Words after each binding's data, which must come back untouched.
const TAIL: u32 = 4;

/// What an output word holds before the dispatch (a quiet NaN with a payload).
const SENTINEL: u32 = 0x7FC0_1234;

/// A Vulkan instance and device with one compute queue.
struct Gpu {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    name: String,
}

/// One dispatch's buffer: `base` words before `data` and [`TAIL`] after, host-visible.
struct Buffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    words: usize,
    /// Bytes its descriptor binds from its start: `base` and `data`, as the driver binds a
    /// built-in kernel's binding (the kernel counts its words from the range).
    bound: u64,
}

impl Gpu {
    /// The context, or `None` (after saying why) when `EMBER_SKIP_VULKAN=1` and there is no
    /// Vulkan device; without that variable, no device is a test failure.
    fn get() -> Option<&'static Mutex<Gpu>> {
        static GPU: OnceLock<Option<Mutex<Gpu>>> = OnceLock::new();
        GPU.get_or_init(|| match Gpu::new() {
            Ok(gpu) => {
                eprintln!("Vulkan device: {}", gpu.name);
                Some(Mutex::new(gpu))
            }
            Err(why) if std::env::var("EMBER_SKIP_VULKAN").as_deref() == Ok("1") => {
                eprintln!("EMBER_SKIP_VULKAN=1: skipping the Vulkan tests ({why})");
                None
            }
            Err(why) => panic!("no Vulkan device ({why}); set EMBER_SKIP_VULKAN=1 to skip"),
        })
        .as_ref()
    }

    fn new() -> Result<Self, String> {
        // SAFETY: loading the system's Vulkan loader runs its initialisers; it is the
        // ordinary libvulkan.so.1 and nothing else in this process loads it concurrently.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("loader: {e}"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
        // SAFETY: the create info and what it points to live across the call.
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
        }
        .map_err(|e| format!("vkCreateInstance: {e}"))?;
        // SAFETY: `instance` is a live instance; the queries only read its devices.
        let found = unsafe {
            let mut chosen = None;
            for pd in instance.enumerate_physical_devices().unwrap_or_default() {
                let props = instance.get_physical_device_properties(pd);
                let name = props
                    .device_name_as_c_str()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let family = instance
                    .get_physical_device_queue_family_properties(pd)
                    .iter()
                    .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE));
                if let Some(family) = family {
                    let lavapipe = name.contains("llvmpipe");
                    if chosen.is_none() || lavapipe {
                        chosen = Some((pd, family as u32, name, lavapipe));
                    }
                    if lavapipe {
                        break;
                    }
                }
            }
            chosen
        };
        let Some((pd, family, name, _)) = found else {
            // SAFETY: nothing created from the instance is alive.
            unsafe { instance.destroy_instance(None) };
            return Err("no physical device with a compute queue".into());
        };
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        // SAFETY: `pd` belongs to `instance`; the create info lives across the call.
        let device = unsafe {
            instance.create_device(
                pd,
                &vk::DeviceCreateInfo::default().queue_create_infos(&queues),
                None,
            )
        }
        .map_err(|e| format!("vkCreateDevice: {e}"))?;
        // SAFETY: the device was created with one queue in `family`; the memory query
        // reads the physical device's properties.
        let (queue, memory) = unsafe {
            (
                device.get_device_queue(family, 0),
                instance.get_physical_device_memory_properties(pd),
            )
        };
        Ok(Self {
            _entry: entry,
            instance,
            device,
            queue,
            family,
            memory,
            name,
        })
    }

    /// A host-visible, coherent storage buffer holding `words`.
    fn buffer(&self, words: &[u32]) -> Buffer {
        let bytes = (words.len().max(1) * 4) as u64;
        let d = &self.device;
        // SAFETY: every handle comes from `d`; the memory is bound before it is mapped, the
        // mapping covers `bytes` bytes, which the copy stays within, and is unmapped after.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(bytes)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .expect("vkCreateBuffer");
            let req = d.get_buffer_memory_requirements(buffer);
            let wanted =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let index = (0..self.memory.memory_type_count)
                .find(|&i| {
                    req.memory_type_bits & (1 << i) != 0
                        && self.memory.memory_types[i as usize]
                            .property_flags
                            .contains(wanted)
                })
                .expect("a host-visible coherent memory type");
            let memory = d
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(index),
                    None,
                )
                .expect("vkAllocateMemory");
            d.bind_buffer_memory(buffer, memory, 0).expect("bind");
            let ptr = d
                .map_memory(memory, 0, bytes, vk::MemoryMapFlags::empty())
                .expect("map")
                .cast::<u32>();
            std::ptr::copy_nonoverlapping(words.as_ptr(), ptr, words.len());
            d.unmap_memory(memory);
            Buffer {
                buffer,
                memory,
                words: words.len(),
                bound: vk::WHOLE_SIZE,
            }
        }
    }

    /// The words of `b`, and frees it.
    fn read_and_free(&self, b: Buffer) -> Vec<u32> {
        let d = &self.device;
        let mut out = vec![0u32; b.words];
        // SAFETY: the queue is idle (the caller waited on its fence), so the memory is not in
        // use; the mapping covers the `b.words` words read.
        unsafe {
            let ptr = d
                .map_memory(
                    b.memory,
                    0,
                    (b.words.max(1) * 4) as u64,
                    vk::MemoryMapFlags::empty(),
                )
                .expect("map")
                .cast::<u32>();
            std::ptr::copy_nonoverlapping(ptr, out.as_mut_ptr(), b.words);
            d.unmap_memory(b.memory);
            d.destroy_buffer(b.buffer, None);
            d.free_memory(b.memory, None);
        }
        out
    }

    /// Runs kernel `name` once over `grid` with `buffers` bound in order (the first buffer
    /// again for declared bindings past them) and `push` as the push constants.
    fn dispatch(&self, name: &str, grid: [u32; 3], buffers: &[Buffer], push: &PushConstants) {
        let kernel = find(name).expect("kernel");
        let d = &self.device;
        let n = kernel.bindings.len() as u32;
        // SAFETY: every handle is created from `d` here, used only by this one submission,
        // which is waited for on its fence before anything is destroyed; the create infos
        // and the arrays they point to outlive the calls that read them.
        unsafe {
            let module = d
                .create_shader_module(
                    &vk::ShaderModuleCreateInfo::default().code(kernel.words),
                    None,
                )
                .expect("vkCreateShaderModule");
            let layout_bindings: Vec<_> = (0..n)
                .map(|i| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(i)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                    None,
                )
                .expect("set layout");
            let ranges = [vk::PushConstantRange {
                stage_flags: vk::ShaderStageFlags::COMPUTE,
                offset: 0,
                size: PUSH_CONSTANT_BYTES,
            }];
            let set_layouts = [set_layout];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&ranges),
                    None,
                )
                .expect("pipeline layout");
            let entry = std::ffi::CString::new(kernel.entry).expect("entry name");
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(entry.as_c_str());
            let pipeline = d
                .create_compute_pipelines(
                    vk::PipelineCache::null(),
                    &[vk::ComputePipelineCreateInfo::default()
                        .stage(stage)
                        .layout(layout)],
                    None,
                )
                .map_err(|(_, e)| e)
                .expect("vkCreateComputePipelines")[0];
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: n.max(1),
            }];
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .expect("descriptor pool");
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&set_layouts),
                )
                .expect("descriptor set")[0];
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = (0..n as usize)
                .map(|i| {
                    let b = buffers.get(i).unwrap_or(&buffers[0]);
                    [vk::DescriptorBufferInfo {
                        buffer: b.buffer,
                        offset: 0,
                        range: b.bound,
                    }]
                })
                .collect();
            let writes: Vec<_> = infos
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(i as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            d.update_descriptor_sets(&writes, &[]);

            let command_pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(self.family),
                    None,
                )
                .expect("command pool");
            let cb = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(command_pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .expect("command buffer")[0];
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .expect("begin");
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &push.bytes());
            d.cmd_dispatch(cb, grid[0], grid[1], grid[2]);
            let barrier = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ)];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &barrier,
                &[],
                &[],
            );
            d.end_command_buffer(cb).expect("end");
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("fence");
            let cbs = [cb];
            d.queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                fence,
            )
            .expect("vkQueueSubmit");
            d.wait_for_fences(&[fence], true, u64::MAX).expect("wait");

            d.destroy_fence(fence, None);
            d.destroy_command_pool(command_pool, None);
            d.destroy_descriptor_pool(pool, None);
            d.destroy_pipeline(pipeline, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set_layout, None);
            d.destroy_shader_module(module, None);
        }
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: every object created from the device was destroyed after its use.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// hal-local's kernel `name` over `grid` on `bindings` (each writable, 4-byte aligned);
/// returns every binding's words afterwards.
fn hal_local(
    name: &str,
    grid: [u32; 3],
    constants: &[u32],
    bindings: &[Vec<u32>],
) -> Vec<Vec<u32>> {
    let kernel = hal_local::kernels::find(hal_local::kernels::BUILTIN, name).expect("kernel");
    let memory: Vec<Vec<AtomicU32>> = bindings
        .iter()
        .map(|b| b.iter().map(|&w| AtomicU32::new(w)).collect())
        .collect();
    let views: Vec<Binding<'_>> = memory.iter().map(|m| Binding::shared_words(m)).collect();
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
                entry(&wg).expect("hal-local accepts every case here");
            }
        }
    }
    memory
        .iter()
        .map(|m| m.iter().map(|a| a.load(Ordering::Relaxed)).collect())
        .collect()
}

/// Runs `name` on the GPU and on hal-local with the same `bindings` (the data of each) and
/// `constants`, over every grid, and asserts that every word of every binding is the same,
/// and that the words around each binding on the GPU are untouched. The kernel's contract
/// must accept it.
fn compare(name: &str, constants: &[u32], bindings: &[Vec<u32>]) {
    let Some(gpu) = Gpu::get() else { return };
    let gpu = gpu.lock().unwrap_or_else(|e| e.into_inner());
    let facts: Vec<_> = bindings
        .iter()
        .map(|b| BindingFacts {
            offset: 0,
            len: b.len() as u64 * 4,
            writable: true,
        })
        .collect();
    // The built-in kernel's check: its contract (add_f32, mul_f32 given words: AddF32's,
    // MulF32's).
    let kernel = find(name)
        .filter(|k| k.contract().is_some())
        .expect("a built-in kernel");
    assert!(
        kernel.check(constants, &facts).is_ok(),
        "{name} {constants:?}"
    );
    for &grid in GRIDS {
        let want = hal_local(name, grid, constants, bindings);
        let buffers: Vec<Buffer> = bindings
            .iter()
            .zip(BASES)
            .map(|(data, base)| {
                let mut words = vec![SENTINEL ^ 1; base as usize];
                words.extend_from_slice(data);
                words.extend(std::iter::repeat_n(SENTINEL ^ 2, TAIL as usize));
                Buffer {
                    bound: (u64::from(base) + data.len() as u64) * 4,
                    ..gpu.buffer(&words)
                }
            })
            .collect();
        let bases: Vec<u32> = BASES[..bindings.len()].iter().map(|b| b * 4).collect();
        let kernel = find(name).expect("a kernel");
        let push = PushConstants::new(kernel, &bases, constants);
        gpu.dispatch(name, grid, &buffers, &push);
        for (i, (buffer, (base, want))) in
            buffers.into_iter().zip(BASES.iter().zip(&want)).enumerate()
        {
            let got = gpu.read_and_free(buffer);
            let base = *base as usize;
            assert!(
                got[..base].iter().all(|&w| w == SENTINEL ^ 1)
                    && got[base + want.len()..].iter().all(|&w| w == SENTINEL ^ 2),
                "{name} grid {grid:?}: binding {i} written outside its range"
            );
            let got = &got[base..base + want.len()];
            let diffs: Vec<String> = got
                .iter()
                .zip(want)
                .enumerate()
                .filter(|(_, (g, w))| g != w)
                .take(5)
                .map(|(j, (g, w))| {
                    format!(
                        "[{j}] gpu {g:#010x} ({}) hal-local {w:#010x} ({})",
                        f32::from_bits(*g),
                        f32::from_bits(*w)
                    )
                })
                .collect();
            assert!(
                diffs.is_empty(),
                "{name} constants {constants:?} grid {grid:?} binding {i}: {} words differ, first: {diffs:#?}",
                got.iter().zip(want).filter(|(g, w)| g != w).count()
            );
        }
    }
}

/// Pseudo-random `f32` bits in `[lo, hi)`, the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<u32> {
        (0..n)
            .map(|_| {
                let unit = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
                (lo + (hi - lo) * unit).to_bits()
            })
            .collect()
    }
}

fn sentinels(n: usize) -> Vec<u32> {
    vec![SENTINEL; n]
}

#[test]
fn fill_u32() {
    for n in [1, 5, 64, 67, 1000] {
        compare("fill_u32", &[0x7F80_0001], &[sentinels(n)]);
    }
}

#[test]
fn copy_u32() {
    let mut rng = Rng(1);
    for n in [1, 6, 65, 1000] {
        let src: Vec<u32> = (0..n + 3).map(|_| rng.next() as u32).collect();
        compare("copy_u32", &[], &[src, sentinels(n)]);
    }
}

/// Finite values, some specials (infinities, signed zeros, the largest finite values).
fn operands(rng: &mut Rng, n: usize) -> Vec<u32> {
    let mut v = rng.f32s(n, -4.0, 4.0);
    let specials = [
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        0.0,
        f32::MAX,
        -f32::MAX,
        1e30,
        3.0e-38,
    ];
    for (slot, s) in v.iter_mut().step_by(7).zip(specials) {
        *slot = s.to_bits();
    }
    v
}

#[test]
fn add_and_mul_f32() {
    let mut rng = Rng(2);
    for name in ["add_f32", "mul_f32"] {
        for n in [1, 7, 64, 101, 1000] {
            let a = operands(&mut rng, n + 2);
            let b = operands(&mut rng, n + 1);
            compare(name, &[], &[a, b, sentinels(n)]);
        }
    }
}

/// `name` given `BroadcastF32<F>`'s words (TFLite's float ADD or MUL): broadcasting and
/// clamping, and without broadcasting.
fn broadcast_f32<F: ember_kernels::broadcast_f32::BinaryFunctionF32>(name: &str) {
    use ember_kernels::broadcast::BroadcastShape;
    use ember_kernels::broadcast_f32::BroadcastF32;
    use ember_kernels::KernelParams;
    let mut rng = Rng(9);
    let shapes: &[(&[usize], &[usize])] = &[
        (&[2, 3], &[2, 3]),
        (&[4, 1, 3], &[5, 1]),
        (&[1, 4], &[3, 1]),
        (&[70], &[1]),
        (&[1], &[3, 50]),
        (&[2, 1, 3, 1, 2, 1], &[1, 3, 1, 2, 1, 2]),
    ];
    for (sa, sb) in shapes {
        let shape = BroadcastShape::new(sa, sb).expect("shapes broadcast");
        let mut words = Vec::new();
        BroadcastF32::<F>::new(shape, -3.0, 2.5).encode(&mut words);
        let n = |d: &[usize]| d.iter().product::<usize>();
        let a = operands(&mut rng, n(sa));
        let b = operands(&mut rng, n(sb));
        compare(name, &words, &[a, b, sentinels(shape.len())]);
    }
}

/// `add_f32` given `AddF32`'s words (TFLite's float ADD).
#[test]
fn add_f32_broadcast() {
    broadcast_f32::<ember_kernels::add::Add>("add_f32");
}

/// `mul_f32` given `MulF32`'s words (TFLite's float MUL).
#[test]
fn mul_f32_broadcast() {
    broadcast_f32::<ember_kernels::mul::Mul>("mul_f32");
}

#[test]
fn relu_f32() {
    let mut rng = Rng(3);
    for n in [1, 7, 64, 101] {
        compare("relu_f32", &[], &[rng.f32s(n, -1.0, 1.0), sentinels(n)]);
    }
    // Bit patterns: -0.0, infinities, NaNs with payloads and sign, subnormals of both signs.
    let special = vec![
        0x8000_0000,
        0xFF80_0000,
        0x7F80_0000,
        0x7FC0_0000,
        0x7F80_0001,
        0xFFC1_2345,
        0x8000_0001,
        0x0000_0001,
        0x0047_AE14,
        0x0000_0000,
    ];
    let n = special.len();
    compare("relu_f32", &[], &[special, sentinels(n)]);
}

#[test]
fn matmul_f32() {
    let mut rng = Rng(4);
    for (m, k, n) in [
        (1, 1, 1),
        (5, 7, 3),
        (4, 16, 16),
        (3, 65, 17),
        (9, 2, 33),
        (17, 70, 33),
    ] {
        for flags in [0, FLAG_BIAS, FLAG_RELU, FLAG_BIAS | FLAG_RELU] {
            let a = rng.f32s(m * k, -1.0, 1.0);
            let b = rng.f32s(k * n, -1.0, 1.0);
            let c = sentinels(m * n + 1);
            let mut bindings = vec![a, b, c];
            let mut constants = vec![m as u32, k as u32, n as u32];
            if flags != 0 {
                bindings.push(rng.f32s(n, -2.0, 2.0));
                constants.push(flags);
            }
            compare("matmul_f32", &constants, &bindings);
        }
    }
}

#[test]
fn softmax_f32() {
    let mut rng = Rng(5);
    for (rows, cols, lo, hi) in [
        (1, 1, -5.0, 5.0),
        (1, 5, -5.0, 5.0),
        (3, 7, -5.0, 5.0),
        (5, 1, -5.0, 5.0),
        (8, 33, -5.0, 5.0),
        (3, 1000, -10.0, 10.0),
        (70, 64, -3.0, 3.0),
        (4, 16, 1000.0, 1100.0),
        (2, 50, -30.0, 30.0),
        (2, 50, -40.0, 40.0),
    ] {
        let x = rng.f32s(rows * cols, lo, hi);
        compare(
            "softmax_f32",
            &[rows as u32, cols as u32],
            &[x, sentinels(rows * cols)],
        );
    }
    // -inf gets exactly 0; NaN poisons its row; a row of -inf is NaN; +inf too.
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let x: Vec<u32> = [
        0.0, -inf, 0.0, nan, 1.0, 2.0, -inf, -inf, -inf, 1.0, inf, 2.0,
    ]
    .iter()
    .map(|v: &f32| v.to_bits())
    .collect();
    compare("softmax_f32", &[4, 3], &[x, sentinels(12)]);
}

/// `beta` (TFLite's float SOFTMAX) given, and 1.0 given as well as left out.
#[test]
fn softmax_f32_beta() {
    let mut rng = Rng(8);
    for (rows, cols, beta) in [
        (1, 5, 0.0f32),
        (3, 7, 0.5),
        (8, 33, 2.0),
        (70, 10, 1.0),
        (2, 50, 1.0e-3),
    ] {
        let x = rng.f32s(rows * cols, -8.0, 8.0);
        compare(
            "softmax_f32",
            &[rows as u32, cols as u32, beta.to_bits()],
            &[x, sentinels(rows * cols)],
        );
    }
}

#[test]
fn mlp_softmax_f32() {
    let mut rng = Rng(7);
    // Digits' shape, chunks of x with a tail, tails of BATCH, more hidden units and outputs
    // than lanes, the widest.
    for (m, k, h, n) in [
        (1, 1, 1, 1),
        (1, 64, 32, 10),
        (3, 7, 5, 2),
        (2, 65, 70, 3),
        (5, 130, 17, 66),
        (1, 3, 512, 512),
    ] {
        let bindings = vec![
            rng.f32s(m * k, -1.0, 1.0),
            rng.f32s(k * h, -1.0, 1.0),
            rng.f32s(h, -0.5, 0.5),
            rng.f32s(h * n, -1.0, 1.0),
            rng.f32s(n, -0.5, 0.5),
            sentinels(m * n),
        ];
        compare(
            "mlp_softmax_f32",
            &[m as u32, k as u32, h as u32, n as u32],
            &bindings,
        );
    }
}

/// Where hal-local's exp_f32 result is subnormal (row spread beyond ~87): exact only if the
/// device keeps subnormals, which Vulkan does not promise (see the crate docs).
#[test]
fn softmax_f32_subnormal_terms() {
    let mut rng = Rng(6);
    let x = rng.f32s(4 * 64, -60.0, 60.0);
    compare("softmax_f32", &[4, 64], &[x, sentinels(4 * 64)]);
}

#[test]
fn noop() {
    compare("noop", &[1, 2, 3], &[]);
}

/// The GPU context itself must exist unless skipping is asked for (so an empty test run on
/// a machine without Vulkan cannot pass silently).
#[test]
fn device_exists() {
    if Gpu::get().is_none() {
        return;
    }
    let gpu = Gpu::get()
        .expect("device")
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let name: &CStr = c"main";
    assert!(!gpu.name.is_empty());
    assert_eq!(find("noop").map(|k| k.entry), name.to_str().ok());
}
