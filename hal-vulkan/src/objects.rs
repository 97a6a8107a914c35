//! Counts of live Vulkan objects, so tests can prove nothing leaks.

use std::sync::atomic::{AtomicI64, Ordering};

/// The kinds of Vulkan object the driver creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VkObject {
    /// `VkBuffer`.
    Buffer,
    /// `VkDeviceMemory`.
    Memory,
    /// `VkShaderModule`.
    ShaderModule,
    /// `VkPipeline`.
    Pipeline,
    /// `VkPipelineLayout`.
    PipelineLayout,
    /// `VkDescriptorSetLayout`.
    SetLayout,
    /// `VkCommandPool`.
    CommandPool,
    /// `VkCommandBuffer`.
    CommandBuffer,
    /// `VkSemaphore`.
    Semaphore,
    /// `VkFence`.
    Fence,
    /// `VkDescriptorPool`.
    DescriptorPool,
    /// `VkQueryPool` (profiling only).
    QueryPool,
}

const KINDS: usize = 12;

/// Live Vulkan objects of one device, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct VkObjectCounts {
    /// Per kind, in the order of [`VkObject`].
    pub counts: [i64; KINDS],
}

impl VkObjectCounts {
    /// Live objects of `kind`.
    pub fn of(&self, kind: VkObject) -> i64 {
        self.counts[kind as usize]
    }

    /// Live objects of every kind together.
    pub fn total(&self) -> i64 {
        self.counts.iter().sum()
    }
}

/// The counters one device keeps.
#[derive(Debug, Default)]
pub(crate) struct LiveObjects {
    counts: [AtomicI64; KINDS],
}

impl LiveObjects {
    pub(crate) fn created(&self, kind: VkObject) {
        self.counts[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn destroyed(&self, kind: VkObject) {
        self.counts[kind as usize].fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> VkObjectCounts {
        let mut counts = [0; KINDS];
        for (c, a) in counts.iter_mut().zip(&self.counts) {
            *c = a.load(Ordering::Relaxed);
        }
        VkObjectCounts { counts }
    }
}
