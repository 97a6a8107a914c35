//! Executables: compute pipelines from SPIR-V, all with one pipeline layout (a descriptor
//! set of up to 16 storage buffers, pushed where the device has push descriptors, and a
//! 128-byte push-constant range).
//!
//! Kernels come from `ember_kernels_wgsl`'s one table by name: the built-in kernels
//! (`ember_kernels::builtin`'s contracts) and the TFLite op set. Pipelines are shared: loading
//! the same SPIR-V and entry point again takes another reference to the same `VkPipeline`.

use crate::instance::{vk_error, Context};
use crate::objects::VkObject;
use crate::types::{ExecutableRec, Pipelines, SharedPipeline, VulkanDevice};
use ash::vk;
use hal_core::command::MAX_BINDINGS;
use hal_core::{Error, Executable, ExecutableSource, ShortName};
use std::ffi::CString;

/// The push-constant range of the one pipeline layout: every kernel's block (Vulkan
/// guarantees `maxPushConstantsSize >= 128`).
pub(crate) const PUSH_BYTES: u32 = ember_kernels_wgsl::PUSH_CONSTANT_BYTES;

/// The SPIR-V magic number.
const SPIRV_MAGIC: u32 = 0x0723_0203;

impl Pipelines {
    pub(crate) fn new(ctx: &Context) -> Result<Self, Error> {
        let bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = (0..MAX_BINDINGS as u32)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let flags = if ctx.push_descriptor.is_some() {
            vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR
        } else {
            vk::DescriptorSetLayoutCreateFlags::empty()
        };
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(flags)
            .bindings(&bindings);
        // SAFETY: a valid create info on a live device.
        let set_layout = unsafe { ctx.device.create_descriptor_set_layout(&info, None) }
            .map_err(vk_error("vkCreateDescriptorSetLayout"))?;
        ctx.live.created(VkObject::SetLayout);
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(PUSH_BYTES)];
        let set_layouts = [set_layout];
        let info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(&ranges);
        // SAFETY: as above.
        let layout = match unsafe { ctx.device.create_pipeline_layout(&info, None) } {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: made above, unused, destroyed once.
                unsafe { ctx.device.destroy_descriptor_set_layout(set_layout, None) };
                ctx.live.destroyed(VkObject::SetLayout);
                return Err(vk_error("vkCreatePipelineLayout")(e));
            }
        };
        ctx.live.created(VkObject::PipelineLayout);
        Ok(Self {
            set_layout,
            layout,
            shared: Vec::new(),
        })
    }

    pub(crate) fn destroy(&mut self, ctx: &Context) {
        for p in self.shared.drain(..).flatten() {
            // SAFETY: the device is idle; the pipeline was made here and goes once.
            unsafe { ctx.device.destroy_pipeline(p.pipeline, None) };
            ctx.live.destroyed(VkObject::Pipeline);
        }
        // SAFETY: as above, and no pipeline uses the layouts any more.
        unsafe {
            ctx.device.destroy_pipeline_layout(self.layout, None);
            ctx.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
        ctx.live.destroyed(VkObject::PipelineLayout);
        ctx.live.destroyed(VkObject::SetLayout);
    }

    /// A compute pipeline of `code`'s `entry`.
    fn create(&self, ctx: &Context, code: &[u32], entry: &str) -> Result<vk::Pipeline, Error> {
        check_spirv(code, entry)?;
        let entry = CString::new(entry)
            .map_err(|_| Error::InvalidArgument("entry point name contains a NUL byte"))?;
        let info = vk::ShaderModuleCreateInfo::default().code(code);
        // SAFETY: `code` passed the structural checks above and lives across the call.
        let module = unsafe { ctx.device.create_shader_module(&info, None) }
            .map_err(vk_error("vkCreateShaderModule"))?;
        ctx.live.created(VkObject::ShaderModule);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry);
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(self.layout);
        // SAFETY: a valid create info whose module and layout are live.
        let result = unsafe {
            ctx.device
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
        };
        // SAFETY: the module is only needed while the pipeline is created.
        unsafe { ctx.device.destroy_shader_module(module, None) };
        ctx.live.destroyed(VkObject::ShaderModule);
        let pipeline = result.map_err(|(_, e)| vk_error("vkCreateComputePipelines")(e))?[0];
        ctx.live.created(VkObject::Pipeline);
        Ok(pipeline)
    }
}

/// The structural checks a SPIR-V module must pass before Vulkan sees it (drivers and the
/// validation layer may crash on malformed modules): whole words, a header with the magic
/// number, a version of at most 1.6 and a sane id bound; an instruction stream that fits
/// the module; one memory model; functions that open and close in order and none left open;
/// and a `GLCompute` entry point named `entry`.
pub fn check_spirv(code: &[u32], entry: &str) -> Result<(), Error> {
    const OP_ENTRY_POINT: u32 = 15;
    const OP_MEMORY_MODEL: u32 = 14;
    const OP_FUNCTION: u32 = 54;
    const OP_FUNCTION_END: u32 = 56;
    const GL_COMPUTE: u32 = 5;
    let invalid = Error::InvalidArgument;
    if code.len() < 5 {
        return Err(invalid("SPIR-V shorter than its header"));
    }
    if code[0] != SPIRV_MAGIC {
        return Err(invalid("not SPIR-V (wrong magic number)"));
    }
    let version = code[1];
    if version & 0xFF00_00FF != 0 || !(0x0001_0000..=0x0001_0600).contains(&version) {
        return Err(invalid("unsupported SPIR-V version"));
    }
    if code[3] == 0 || code[3] > 1 << 22 || code[4] != 0 {
        return Err(invalid("malformed SPIR-V header"));
    }
    let (mut at, mut memory_models, mut in_function, mut entry_found) = (5, 0, false, false);
    while at < code.len() {
        let count = (code[at] >> 16) as usize;
        let opcode = code[at] & 0xFFFF;
        if count == 0 || at + count > code.len() {
            return Err(invalid("malformed SPIR-V instruction stream"));
        }
        let operands = &code[at + 1..at + count];
        match opcode {
            OP_MEMORY_MODEL => memory_models += 1,
            OP_FUNCTION if in_function => return Err(invalid("SPIR-V function not closed")),
            OP_FUNCTION => in_function = true,
            OP_FUNCTION_END if !in_function => {
                return Err(invalid("SPIR-V function end outside a function"))
            }
            OP_FUNCTION_END => in_function = false,
            OP_ENTRY_POINT if operands.len() >= 3 && operands[0] == GL_COMPUTE => {
                let name: Vec<u8> = operands[2..]
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .take_while(|&b| b != 0)
                    .collect();
                entry_found |= name == entry.as_bytes();
            }
            _ => {}
        }
        at += count;
    }
    if memory_models != 1 {
        return Err(invalid("SPIR-V needs exactly one memory model"));
    }
    if in_function {
        return Err(invalid("SPIR-V ends inside a function"));
    }
    if !entry_found {
        return Err(invalid("SPIR-V has no compute entry point of that name"));
    }
    Ok(())
}

impl VulkanDevice<'_> {
    pub(crate) fn load(&mut self, source: ExecutableSource<'_>) -> Result<Executable, Error> {
        if self.executables.len() >= self.executables.capacity() {
            return Err(Error::TableFull {
                table: "executable",
                capacity: self.executables.capacity() as u32,
            });
        }
        let (code, entry, kernel) = match source {
            ExecutableSource::Kernel(name) => {
                let k = ember_kernels_wgsl::find(name).ok_or(Error::UnknownKernel {
                    name: ShortName::new(name),
                })?;
                (k.words, k.entry, Some(k))
            }
            ExecutableSource::Spirv { code, entry } => (code, entry, None),
        };
        let key = (code.as_ptr() as usize, code.len(), entry.to_owned());
        let shared = &mut self.pipelines.shared;
        let index = match shared
            .iter()
            .position(|p| p.as_ref().is_some_and(|p| p.key == key))
        {
            Some(i) => i,
            None => {
                let pipeline = self.pipelines.create(&self.ctx, code, entry)?;
                let slot = SharedPipeline {
                    key,
                    pipeline,
                    refs: 0,
                };
                let shared = &mut self.pipelines.shared;
                match shared.iter().position(Option::is_none) {
                    Some(i) => {
                        shared[i] = Some(slot);
                        i
                    }
                    None => {
                        shared.push(Some(slot));
                        shared.len() - 1
                    }
                }
            }
        };
        let handle = self.executables.insert(ExecutableRec {
            pipeline: index,
            kernel,
        })?;
        if let Some(Some(p)) = self.pipelines.shared.get_mut(index) {
            p.refs += 1;
        }
        Ok(handle)
    }

    pub(crate) fn unload(&mut self, executable: Executable) -> Result<(), Error> {
        let rec = self.executables.remove(executable)?;
        let slot = &mut self.pipelines.shared[rec.pipeline];
        if let Some(p) = slot {
            p.refs = p.refs.saturating_sub(1);
            if p.refs == 0 {
                let pipeline = p.pipeline;
                *slot = None;
                // Pending submissions may use it: wait for them (or, if that fails, for
                // the device to go idle) before destroying it.
                if self.settle().is_err() {
                    self.ctx.wait_idle();
                }
                // Recordings that name it can no longer be replayed.
                self.memo_generation += 1;
                self.object_generation += 1;
                self.drop_memoized();
                // SAFETY: no pending work uses it (the device settled or went idle above) and
                // no kept recording names it any more (dropped above).
                unsafe { self.ctx.device.destroy_pipeline(pipeline, None) };
                self.ctx.live.destroyed(VkObject::Pipeline);
            }
        }
        Ok(())
    }

    /// The pipeline of an executable.
    pub(crate) fn pipeline(&self, rec: &ExecutableRec) -> Result<vk::Pipeline, Error> {
        self.pipelines
            .shared
            .get(rec.pipeline)
            .and_then(Option::as_ref)
            .map(|p| p.pipeline)
            .ok_or(Error::Internal("executable without a pipeline"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_spirv_is_refused() {
        assert!(check_spirv(&[], "main").is_err());
        assert!(check_spirv(&[1, 2, 3, 4, 5], "main").is_err());
        assert!(check_spirv(&[SPIRV_MAGIC, 0x0001_0000, 0, 8, 0, 0], "main").is_err());
        assert!(check_spirv(&[SPIRV_MAGIC, 0x0001_0000, 0, 8, 0, 3 << 16], "main").is_err());
        // The built-in kernels' modules (a cut op module may end between functions).
        let builtins = ember_kernels_wgsl::KERNELS
            .iter()
            .filter(|k| k.contract().is_some());
        for k in builtins {
            assert_eq!(check_spirv(k.words, k.entry), Ok(()), "{}", k.name);
            assert!(check_spirv(k.words, "other").is_err());
            for cut in [1, 2, k.words.len() / 2] {
                let truncated = &k.words[..k.words.len() - cut];
                assert!(
                    check_spirv(truncated, k.entry).is_err(),
                    "{} cut by {cut}",
                    k.name
                );
            }
        }
    }
}
