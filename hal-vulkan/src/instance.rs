//! The instance, the validation messenger, device selection and the logical device: the
//! Vulkan context every other part of the driver works through.

use crate::config::VulkanConfig;
use crate::objects::{LiveObjects, VkObject};
use ash::vk;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use hal_core::Error;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// The `VkResult` of a failed call as a HAL error.
pub(crate) fn vk_error(what: &'static str) -> impl Fn(vk::Result) -> Error {
    move |r| match r {
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
            Error::Alloc(hal_core::memory::alloc::AllocError::OutOfMemory {
                size: 0,
                alignment: 1,
                largest_free_range: 0,
            })
        }
        r => Error::Backend {
            what,
            result: r.as_raw(),
        },
    }
}

/// What the validation layer said: warnings and errors are counted (and printed).
#[derive(Debug, Default)]
pub struct ValidationMessages {
    count: AtomicU32,
}

impl ValidationMessages {
    /// Warnings and errors reported so far.
    pub fn count(&self) -> u32 {
        self.count.load(Ordering::Relaxed)
    }
}

/// The messenger callback: counts warnings and errors, prints everything it is given.
unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: `user` is the `ValidationMessages` the context keeps alive (in an `Arc`) until
    // after the messenger is destroyed.
    let messages = unsafe { &*(user as *const ValidationMessages) };
    let counted = severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
            | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
    );
    if counted {
        messages.count.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: the layer passes valid callback data whose message, when not null, is a
    // NUL-terminated string, for the duration of the call.
    let text = unsafe {
        data.as_ref()
            .filter(|d| !d.p_message.is_null())
            .map(|d| CStr::from_ptr(d.p_message).to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if counted {
        eprintln!("[vulkan validation {severity:?}] {text}");
    }
    vk::FALSE
}

/// Device limits the driver checks against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_storage_buffer_range: u64,
    pub(crate) min_storage_buffer_offset_alignment: u64,
    pub(crate) max_memory_allocation_size: u64,
    pub(crate) min_imported_host_pointer_alignment: u64,
    pub(crate) max_workgroup_count: [u32; 3],
}

/// The Vulkan context: instance, device, queues, extension functions, limits, and the
/// counters of live objects.
pub(crate) struct Context {
    _entry: ash::Entry,
    pub(crate) instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    pub(crate) messages: Arc<ValidationMessages>,
    pub(crate) device: ash::Device,
    pub(crate) device_name: String,
    pub(crate) device_type: vk::PhysicalDeviceType,
    /// The compute queue: every command runs here.
    pub(crate) queue: vk::Queue,
    pub(crate) queue_family: u32,
    /// A queue family with transfer (may be the compute one).
    pub(crate) transfer_family: u32,
    /// The queue sparse binds go to, if the device has sparse binding and it is enabled.
    pub(crate) sparse_queue: Option<vk::Queue>,
    /// Push descriptors, where the device has them and they are wanted.
    pub(crate) push_descriptor: Option<ash::khr::push_descriptor::Device>,
    pub(crate) host_memory: Option<ash::ext::external_memory_host::Device>,
    pub(crate) limits: Limits,
    pub(crate) memory_properties: vk::PhysicalDeviceMemoryProperties,
    pub(crate) live: LiveObjects,
    /// The device's progress timeline: every submission signals the next value.
    pub(crate) timeline: vk::Semaphore,
    pub(crate) next_value: u64,
    /// A value the progress timeline is known to have reached (never above `next_value`).
    pub(crate) completed: AtomicU64,
    pub(crate) pool: vk::CommandPool,
    /// Nanoseconds the host spent blocked in `vkWaitSemaphores` (what the GPU took beyond
    /// the host's own work), for benchmarks that split host cost from device time.
    pub(crate) waited_nanos: core::sync::atomic::AtomicU64,
    /// Host waits for the GPU (spinning or blocked in `vkWaitSemaphores`).
    pub(crate) host_waits: AtomicU64,
    /// How long a host wait polls before it blocks (0 on CPU devices, whose threads the
    /// spinning would take from the work).
    pub(crate) spin_nanos: u64,
    /// Nanoseconds per timestamp tick and the valid bits of the compute queue's
    /// timestamps, where profiling is on and the queue writes them.
    pub(crate) timestamps: Option<(f32, u32)>,
}

fn pick_device(
    instance: &ash::Instance,
    devices: &[vk::PhysicalDevice],
    selector: Option<&str>,
) -> Result<vk::PhysicalDevice, Error> {
    let names: Vec<(vk::PhysicalDevice, String, vk::PhysicalDeviceType, u32)> = devices
        .iter()
        .map(|&pd| {
            // SAFETY: `pd` was enumerated from this live instance.
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = props
                .device_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            (pd, name, props.device_type, props.api_version)
        })
        .collect();
    if let Some(sel) = selector {
        if let Ok(index) = sel.parse::<usize>() {
            return names.get(index).map(|n| n.0).ok_or(Error::InvalidArgument(
                "EMBER_VULKAN_DEVICE: no physical device with that index",
            ));
        }
        let sel = sel.to_lowercase();
        return names
            .iter()
            .find(|n| n.1.to_lowercase().contains(&sel))
            .map(|n| n.0)
            .ok_or(Error::InvalidArgument(
                "EMBER_VULKAN_DEVICE: no physical device with that name",
            ));
    }
    let rank = |t: vk::PhysicalDeviceType| match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        _ => 3,
    };
    names
        .iter()
        .filter(|n| n.3 >= vk::API_VERSION_1_2)
        .min_by_key(|n| rank(n.2))
        .map(|n| n.0)
        .ok_or(Error::Unsupported("no Vulkan 1.2 physical device"))
}

/// The system's Vulkan loader, loaded once for the process and never unloaded: devices made
/// and dropped from several threads do not load and unload it (and the drivers it loads)
/// under each other.
fn loader() -> Result<&'static ash::Entry, Error> {
    static LOADER: OnceLock<Option<ash::Entry>> = OnceLock::new();
    LOADER
        .get_or_init(|| {
            // SAFETY: loading the system's Vulkan loader; its functions are only called
            // through ash with valid arguments.
            unsafe { ash::Entry::load() }.ok()
        })
        .as_ref()
        .ok_or(Error::Unsupported("no Vulkan loader (libvulkan.so.1)"))
}

impl Context {
    /// Creates the instance (with validation if asked), picks a device and creates it.
    pub(crate) fn new(config: &VulkanConfig) -> Result<Self, Error> {
        let entry = loader()?.clone();
        let validation = config.validation_enabled();
        let layer_name = c"VK_LAYER_KHRONOS_validation";
        let mut layers = Vec::new();
        let mut extensions = Vec::new();
        if validation {
            // SAFETY: a plain query on a loaded entry.
            let available = unsafe { entry.enumerate_instance_layer_properties() }
                .map_err(vk_error("vkEnumerateInstanceLayerProperties"))?;
            if !available
                .iter()
                .any(|l| l.layer_name_as_c_str() == Ok(layer_name))
            {
                return Err(Error::Unsupported(
                    "validation asked for but VK_LAYER_KHRONOS_validation is not installed",
                ));
            }
            layers.push(layer_name.as_ptr());
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
            extensions.push(ash::ext::validation_features::NAME.as_ptr());
        }
        let app = vk::ApplicationInfo::default()
            .application_name(c"ember")
            .engine_name(c"ember")
            .api_version(vk::API_VERSION_1_2);
        // With validation, synchronization validation too: work is submitted without host
        // waits, so a missing barrier shows as a hazard report, not as a rare wrong result.
        let checks = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&checks);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        if validation {
            info = info.push_next(&mut features);
        }
        // SAFETY: the create info and the names it points to live across the call.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vk_error("vkCreateInstance"))?;
        let messages = Arc::new(ValidationMessages::default());
        let mut ctx = PartialContext {
            instance: Some(instance),
            debug: None,
        };
        if validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, ctx.instance());
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                        | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_message))
                .user_data(Arc::as_ptr(&messages) as *mut c_void);
            // SAFETY: the user data outlives the messenger (the context holds the Arc and
            // destroys the messenger first).
            let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
                .map_err(vk_error("vkCreateDebugUtilsMessengerEXT"))?;
            ctx.debug = Some((loader, messenger));
        }
        let instance = ctx.instance().clone();
        // SAFETY: a query on a live instance.
        let devices = unsafe { instance.enumerate_physical_devices() }
            .map_err(vk_error("vkEnumeratePhysicalDevices"))?;
        let physical = pick_device(&instance, &devices, config.device_selector().as_deref())?;
        // SAFETY: `physical` belongs to this instance.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        let device_name = props
            .device_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        // SAFETY: as above.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let queue_family = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or(Error::Unsupported("no compute queue"))? as u32;
        let transfer_family = families
            .iter()
            .position(|f| {
                f.queue_flags.contains(vk::QueueFlags::TRANSFER)
                    && !f.queue_flags.contains(vk::QueueFlags::GRAPHICS)
                    && !f.queue_flags.contains(vk::QueueFlags::COMPUTE)
            })
            .map_or(queue_family, |i| i as u32);
        // SAFETY: as above.
        let features = unsafe { instance.get_physical_device_features(physical) };
        let sparse_family = (config.sparse_binding && features.sparse_binding == vk::TRUE)
            .then(|| {
                if families[queue_family as usize]
                    .queue_flags
                    .contains(vk::QueueFlags::SPARSE_BINDING)
                {
                    Some(queue_family)
                } else {
                    families
                        .iter()
                        .position(|f| f.queue_flags.contains(vk::QueueFlags::SPARSE_BINDING))
                        .map(|i| i as u32)
                }
            })
            .flatten();

        // SAFETY: as above.
        let available = unsafe { instance.enumerate_device_extension_properties(physical) }
            .map_err(vk_error("vkEnumerateDeviceExtensionProperties"))?;
        let has = |name: &CStr| {
            available
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        let push = config.push_descriptors && has(ash::khr::push_descriptor::NAME);
        let mut device_extensions = Vec::new();
        if push {
            device_extensions.push(ash::khr::push_descriptor::NAME.as_ptr());
        }
        let host_import = config.host_import && has(ash::ext::external_memory_host::NAME);
        if host_import {
            device_extensions.push(ash::ext::external_memory_host::NAME.as_ptr());
        }

        let mut timeline = vk::PhysicalDeviceVulkan12Features::default();
        let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut timeline);
        // SAFETY: as above; the chain lives across the call.
        unsafe { instance.get_physical_device_features2(physical, &mut features2) };
        if timeline.timeline_semaphore != vk::TRUE {
            return Err(Error::Unsupported("timeline semaphores are required"));
        }

        let priorities = [1.0f32];
        let mut queue_infos = vec![vk::DeviceQueueCreateInfo::default()
            .queue_family_index(queue_family)
            .queue_priorities(&priorities)];
        for family in [sparse_family, Some(transfer_family)].into_iter().flatten() {
            if queue_infos.iter().all(|q| q.queue_family_index != family) {
                queue_infos.push(
                    vk::DeviceQueueCreateInfo::default()
                        .queue_family_index(family)
                        .queue_priorities(&priorities),
                );
            }
        }
        let enabled = vk::PhysicalDeviceFeatures::default().sparse_binding(sparse_family.is_some());
        let mut enabled12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_infos)
            .enabled_extension_names(&device_extensions)
            .enabled_features(&enabled)
            .push_next(&mut enabled12);
        // SAFETY: every pointer in the create info lives across the call.
        let device = unsafe { instance.create_device(physical, &info, None) }
            .map_err(vk_error("vkCreateDevice"))?;
        // SAFETY: family and index 0 were requested at device creation.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        // SAFETY: as above.
        let sparse_queue = sparse_family.map(|f| unsafe { device.get_device_queue(f, 0) });

        let mut maintenance3 = vk::PhysicalDeviceMaintenance3Properties::default();
        let mut host_props = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut maintenance3);
        if host_import {
            props2 = props2.push_next(&mut host_props);
        }
        // SAFETY: a query with a chain that lives across the call.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        let l = props.limits;
        let limits = Limits {
            max_storage_buffer_range: u64::from(l.max_storage_buffer_range),
            min_storage_buffer_offset_alignment: l.min_storage_buffer_offset_alignment.max(4),
            max_memory_allocation_size: maintenance3.max_memory_allocation_size,
            min_imported_host_pointer_alignment: host_props
                .min_imported_host_pointer_alignment
                .max(1),
            max_workgroup_count: l.max_compute_work_group_count,
        };
        // SAFETY: a query on a live instance.
        let memory_properties = unsafe { instance.get_physical_device_memory_properties(physical) };
        let push_descriptor =
            push.then(|| ash::khr::push_descriptor::Device::new(&instance, &device));
        let host_memory =
            host_import.then(|| ash::ext::external_memory_host::Device::new(&instance, &device));

        let live = LiveObjects::default();
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
        // SAFETY: a valid create info on a live device.
        let timeline = match unsafe { device.create_semaphore(&info, None) } {
            Ok(t) => t,
            Err(e) => {
                // SAFETY: nothing was made on the new device yet.
                unsafe { device.destroy_device(None) };
                return Err(vk_error("vkCreateSemaphore")(e));
            }
        };
        live.created(VkObject::Semaphore);
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: as above.
        let pool = match unsafe { device.create_command_pool(&info, None) } {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: only the timeline was made on the new device; both go, once.
                unsafe {
                    device.destroy_semaphore(timeline, None);
                    device.destroy_device(None);
                }
                return Err(vk_error("vkCreateCommandPool")(e));
            }
        };
        live.created(VkObject::CommandPool);
        let debug = ctx.debug.take();
        ctx.instance = None;
        Ok(Self {
            _entry: entry,
            instance,
            debug,
            messages,
            device,
            device_name,
            device_type: props.device_type,
            queue,
            queue_family,
            transfer_family,
            sparse_queue,
            push_descriptor,
            host_memory,
            limits,
            memory_properties,
            live,
            timeline,
            next_value: 0,
            completed: AtomicU64::new(0),
            pool,
            waited_nanos: core::sync::atomic::AtomicU64::new(0),
            host_waits: AtomicU64::new(0),
            timestamps: {
                let bits = families[queue_family as usize].timestamp_valid_bits;
                (config.profiling_enabled() && bits > 0 && l.timestamp_period > 0.0)
                    .then_some((l.timestamp_period, bits))
            },
            spin_nanos: if props.device_type == vk::PhysicalDeviceType::CPU {
                0
            } else {
                config.spin_wait_nanos
            },
        })
    }

    /// Submits `cb` on the compute queue and waits for it on the host.
    pub(crate) fn submit_and_wait(&mut self, cb: vk::CommandBuffer) -> Result<(), Error> {
        let value = self.submit(cb)?;
        self.wait_value(value)
    }

    /// Submits `cb` on the compute queue without waiting; returns the progress-timeline
    /// value that is reached when it has run. The caller keeps `cb` (and everything it names)
    /// alive until then.
    pub(crate) fn submit(&mut self, cb: vk::CommandBuffer) -> Result<u64, Error> {
        self.next_value += 1;
        let value = [self.next_value];
        let mut timeline =
            vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&value);
        let cbs = [cb];
        let signal = [self.timeline];
        let submit = vk::SubmitInfo::default()
            .command_buffers(&cbs)
            .signal_semaphores(&signal)
            .push_next(&mut timeline);
        // SAFETY: `cb` is a recorded command buffer of this device's pool, and not pending
        // unless it was begun with SIMULTANEOUS_USE (kept recordings); command buffers and
        // everything they name are freed only once their last submission's value is reached.
        let submitted = unsafe {
            self.device
                .queue_submit(self.queue, &[submit], vk::Fence::null())
        };
        if let Err(e) = submitted {
            // Nothing signals this value now: later waits must not count on it.
            self.next_value -= 1;
            return Err(vk_error("vkQueueSubmit")(e));
        }
        Ok(self.next_value)
    }

    /// Waits until the progress timeline reaches `value`.
    pub(crate) fn wait_value(&self, value: u64) -> Result<(), Error> {
        self.wait_value_for(value, u64::MAX).map(|_| ())
    }

    /// Waits at most `nanos` until the progress timeline reaches `value`: `Ok(false)` if it
    /// did not in time.
    pub(crate) fn wait_value_for(&self, value: u64, nanos: u64) -> Result<bool, Error> {
        if value <= self.completed.load(Relaxed) {
            return Ok(true);
        }
        let start = std::time::Instant::now();
        self.host_waits.fetch_add(1, Relaxed);
        let result = self.spin_then_block(value, nanos, start);
        let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.waited_nanos
            .fetch_add(elapsed, core::sync::atomic::Ordering::Relaxed);
        result
    }

    /// Polls the progress timeline for up to `spin_nanos` (a GPU's short work ends sooner
    /// than a sleeping thread wakes), then blocks in `vkWaitSemaphores` for what is left of
    /// `nanos`.
    fn spin_then_block(
        &self,
        value: u64,
        nanos: u64,
        start: std::time::Instant,
    ) -> Result<bool, Error> {
        let spin = std::time::Duration::from_nanos(self.spin_nanos.min(nanos));
        while start.elapsed() < spin {
            if self.reached(value) {
                return Ok(true);
            }
            core::hint::spin_loop();
        }
        let left = nanos.saturating_sub(u64::try_from(start.elapsed().as_nanos()).unwrap_or(0));
        let semaphores = [self.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        // SAFETY: a wait on this device's own live semaphore.
        match unsafe { self.device.wait_semaphores(&info, left) } {
            Ok(()) => {
                self.completed.fetch_max(value, Relaxed);
                Ok(true)
            }
            Err(vk::Result::TIMEOUT) => Ok(self.reached(value)),
            Err(e) => Err(vk_error("vkWaitSemaphores")(e)),
        }
    }

    /// Whether the device has run everything up to `value`, asking it if the last known
    /// progress is short of it.
    pub(crate) fn reached(&self, value: u64) -> bool {
        if value <= self.completed.load(Relaxed) {
            return true;
        }
        // SAFETY: a query of this device's own live timeline semaphore.
        let now = unsafe { self.device.get_semaphore_counter_value(self.timeline) };
        if let Ok(now) = now {
            self.completed.fetch_max(now.min(self.next_value), Relaxed);
        }
        value <= self.completed.load(Relaxed)
    }

    /// Waits until everything submitted has run.
    pub(crate) fn settle(&self) -> Result<(), Error> {
        self.wait_value(self.next_value)
    }

    /// A fresh primary command buffer, begun for one submission.
    pub(crate) fn begin(&self) -> Result<vk::CommandBuffer, Error> {
        self.begin_with(vk::CommandBufferUsageFlags::empty())
    }

    /// A fresh primary command buffer that may be submitted again while earlier
    /// submissions of it are pending (a kept recording).
    pub(crate) fn begin_reusable(&self) -> Result<vk::CommandBuffer, Error> {
        self.begin_with(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)
    }

    fn begin_with(&self, flags: vk::CommandBufferUsageFlags) -> Result<vk::CommandBuffer, Error> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is live and only used from this (exclusively borrowed) context.
        let cb = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(vk_error("vkAllocateCommandBuffers"))?[0];
        self.live.created(VkObject::CommandBuffer);
        let begin = vk::CommandBufferBeginInfo::default().flags(flags);
        // SAFETY: a freshly allocated command buffer in the initial state.
        if let Err(e) = unsafe { self.device.begin_command_buffer(cb, &begin) } {
            self.free_command_buffer(cb);
            return Err(vk_error("vkBeginCommandBuffer")(e));
        }
        Ok(cb)
    }

    /// Frees a command buffer of the pool (not pending: callers free a submitted one only
    /// once the progress timeline has passed its last submission).
    pub(crate) fn free_command_buffer(&self, cb: vk::CommandBuffer) {
        // SAFETY: `cb` came from this pool and no submission using it is pending (the
        // caller's contract above).
        unsafe { self.device.free_command_buffers(self.pool, &[cb]) };
        self.live.destroyed(VkObject::CommandBuffer);
    }

    /// Records `f` into a one-time command buffer, ends it with [`Self::end_barrier`], submits
    /// it and waits.
    pub(crate) fn one_time(
        &mut self,
        f: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<(), Error> {
        let cb = self.begin()?;
        f(&self.device, cb);
        self.end_barrier(cb);
        let result = self.end(cb).and_then(|()| self.submit_and_wait(cb));
        self.free_command_buffer(cb);
        result
    }

    /// Ends recording.
    pub(crate) fn end(&self, cb: vk::CommandBuffer) -> Result<(), Error> {
        // SAFETY: `cb` is recording.
        unsafe { self.device.end_command_buffer(cb) }.map_err(vk_error("vkEndCommandBuffer"))
    }

    /// Every earlier command (in this command buffer and earlier submissions) completes, and
    /// its writes are visible, before any later one starts. Every command Ember records is a
    /// compute dispatch or a transfer, so the barrier names those stages only; `indirect`
    /// adds the indirect-argument read of a later indirect dispatch. (Naming every stage and
    /// every access costs an NVIDIA H100 about 6.5 µs per barrier.)
    pub(crate) fn barrier(&self, cb: vk::CommandBuffer, indirect: bool) {
        let work = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        let written = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        let mut read = written | vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ;
        let mut later = work;
        if indirect {
            read |= vk::AccessFlags::INDIRECT_COMMAND_READ;
            later |= vk::PipelineStageFlags::DRAW_INDIRECT;
        }
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(written)
            .dst_access_mask(read);
        // SAFETY: `cb` is recording; a global memory barrier needs nothing else.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cb,
                work,
                later,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// The last command of every submission: its work completes, and its writes are visible
    /// to host reads once the submission has run and to the compute and transfer work of
    /// every later submission on the queue (a barrier's second scope runs on in submission
    /// order). So a submission needs no barrier of its own before its first command, unless
    /// that is an indirect dispatch.
    pub(crate) fn end_barrier(&self, cb: vk::CommandBuffer) {
        let work = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        let written = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(written)
            .dst_access_mask(
                written
                    | vk::AccessFlags::SHADER_READ
                    | vk::AccessFlags::TRANSFER_READ
                    | vk::AccessFlags::HOST_READ
                    | vk::AccessFlags::HOST_WRITE,
            );
        // SAFETY: `cb` is recording.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cb,
                work,
                work | vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// Waits for the device to go idle (teardown, failures).
    pub(crate) fn wait_idle(&self) {
        // SAFETY: a live device; nothing else uses it concurrently (exclusive borrow).
        if unsafe { self.device.device_wait_idle() }.is_ok() {
            self.completed.fetch_max(self.next_value, Relaxed);
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        self.wait_idle();
        // SAFETY: the device is idle; these objects were created on it and are destroyed
        // once. Everything else made on the device was destroyed by its owner before.
        unsafe {
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_semaphore(self.timeline, None);
        }
        self.live.destroyed(VkObject::CommandPool);
        self.live.destroyed(VkObject::Semaphore);
        // SAFETY: as above: the device and then the instance go last, once.
        unsafe { self.device.destroy_device(None) };
        if let Some((loader, messenger)) = self.debug.take() {
            // SAFETY: the messenger belongs to this instance and is destroyed once.
            unsafe { loader.destroy_debug_utils_messenger(messenger, None) };
        }
        // SAFETY: every child object is gone.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// The instance (and messenger) while the context is being built, destroyed if building
/// fails part way.
struct PartialContext {
    instance: Option<ash::Instance>,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
}

impl PartialContext {
    fn instance(&self) -> &ash::Instance {
        // Set at construction and only taken on success (after the last use).
        self.instance.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for PartialContext {
    fn drop(&mut self) {
        if let Some((loader, messenger)) = self.debug.take() {
            // SAFETY: created on this instance, destroyed once.
            unsafe { loader.destroy_debug_utils_messenger(messenger, None) };
        }
        if let Some(instance) = self.instance.take() {
            // SAFETY: building failed; any device made from the instance was destroyed
            // before returning the error (see `Context::new`).
            unsafe { instance.destroy_instance(None) };
        }
    }
}
