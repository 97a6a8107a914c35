//! How a Vulkan device is chosen and set up.

/// Options for [`VulkanDevice::new`](crate::VulkanDevice::new).
///
/// Environment variables fill what is left unset: `EMBER_VULKAN_DEVICE` (a physical device
/// index or a case-insensitive substring of its name), `EMBER_VULKAN_VALIDATION=1` (the
/// Khronos validation layer) and `EMBER_VULKAN_PROFILE=1` (dispatch timestamps).
#[derive(Debug, Clone)]
pub struct VulkanConfig {
    /// Which physical device: an index or a name substring. `None` reads
    /// `EMBER_VULKAN_DEVICE`, and without it prefers a discrete, then an integrated GPU, then
    /// anything else (lavapipe).
    pub device: Option<String>,
    /// Enable the Khronos validation layer with a messenger that counts warnings and errors.
    /// `false` still enables it when `EMBER_VULKAN_VALIDATION=1`.
    pub validation: bool,
    /// Caps every heap's `max_allocation_size` (the device's own limit,
    /// `maxMemoryAllocationSize`, applies too). Buffers larger than this are chunked.
    pub max_allocation_size: u64,
    /// Caps the bytes each heap may take from the device (0: the Vulkan heap's size). The
    /// HAL heap's `size` and its allocator's capacity are this budget.
    pub heap_budget: u64,
    /// Bytes per block of device memory that small buffers are sub-allocated from.
    pub block_size: u64,
    /// Use sparse binding for chunked buffers where the device has it. `false` takes the
    /// fallback (one allocation per chunk, commands split per chunk) everywhere.
    pub sparse_binding: bool,
    /// Import host memory in place with `VK_EXT_external_memory_host` where the device has
    /// it and the memory qualifies; otherwise (or when `false`) imports are copies that are
    /// written back to the host memory when the buffer is released.
    pub host_import: bool,
    /// Bind dispatch buffers with push descriptors (`VK_KHR_push_descriptor`) where the
    /// device has them; otherwise (or when `false`) each recording allocates descriptor sets
    /// from its own pool.
    pub push_descriptors: bool,
    /// Bytes of the bounded staging buffer host reads and writes of device-only memory go
    /// through.
    pub staging_bytes: u64,
    /// Where the device has no device-only memory (integrated GPUs, lavapipe), add a heap
    /// that behaves like it: the host cannot map it, so host transfers take the staging
    /// paths a discrete GPU needs. For tests.
    pub emulate_device_only_heap: bool,
    /// How long a host wait for the GPU polls its progress before it sleeps in
    /// `vkWaitSemaphores`: a sleeping thread wakes tens of microseconds after short GPU work
    /// ends. Ignored on CPU devices (lavapipe), where the polling would take a core from the
    /// work. 0 never polls.
    pub spin_wait_nanos: u64,
    /// On drop, panic if a Vulkan object leaked or the validation layer reported a warning
    /// or error (tests set it; a panic while already panicking is skipped).
    pub strict_teardown: bool,
    /// Write a GPU timestamp after every dispatch, so
    /// [`VulkanDevice::dispatch_times`](crate::VulkanDevice::dispatch_times) can tell what
    /// each dispatch of the last submission cost. `false` still enables it when
    /// `EMBER_VULKAN_PROFILE=1`. For profiling: every recording shares one query pool.
    pub profile_dispatches: bool,
}

impl Default for VulkanConfig {
    fn default() -> Self {
        Self {
            device: None,
            validation: false,
            max_allocation_size: u64::MAX,
            heap_budget: 0,
            block_size: 64 << 20,
            sparse_binding: true,
            host_import: true,
            push_descriptors: true,
            staging_bytes: 64 << 20,
            emulate_device_only_heap: false,
            spin_wait_nanos: 200_000,
            strict_teardown: false,
            profile_dispatches: false,
        }
    }
}

impl VulkanConfig {
    /// Whether validation is on, by option or environment.
    pub fn validation_enabled(&self) -> bool {
        self.validation
            || std::env::var("EMBER_VULKAN_VALIDATION")
                .map(|v| v == "1" || v.eq_ignore_ascii_case("true"))
                .unwrap_or(false)
    }

    /// Whether dispatches are timed, by option or environment.
    pub fn profiling_enabled(&self) -> bool {
        self.profile_dispatches
            || std::env::var("EMBER_VULKAN_PROFILE")
                .map(|v| v == "1" || v.eq_ignore_ascii_case("true"))
                .unwrap_or(false)
    }

    /// The device selector, by option or environment.
    pub fn device_selector(&self) -> Option<String> {
        self.device
            .clone()
            .or_else(|| std::env::var("EMBER_VULKAN_DEVICE").ok())
            .filter(|s| !s.is_empty())
    }
}
