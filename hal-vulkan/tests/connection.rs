//! Memory connections between a hal-local device and a hal-vulkan device, and copies along
//! them: the path hal-core's `copy_between` takes is the one the domains give (Unified for
//! host-visible memory the GPU reaches in place, Migratable for device-only memory), and the
//! bytes arrive either way.

use hal_core::connection::{copy_between, MemoryConnection};
use hal_core::memory::BufferParams;
use hal_core::{BufferSpan, Device, MemoryDomain};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use hal_vulkan::{VulkanConfig, VulkanDevice};

fn vulkan(emulate_device_only_heap: bool) -> VulkanDevice<'static> {
    VulkanDevice::new(VulkanConfig {
        validation: std::env::var("EMBER_VULKAN_VALIDATION").map_or(true, |v| v != "0"),
        max_allocation_size: 256 << 10,
        heap_budget: 64 << 20,
        block_size: 4 << 20,
        emulate_device_only_heap,
        strict_teardown: true,
        ..VulkanConfig::default()
    })
    .expect("a Vulkan device")
}

#[test]
fn copies_between_local_and_vulkan_take_the_connection_path() {
    let region: &'static mut [u8] = Box::leak(vec![0u8; 4 << 20].into_boxed_slice());
    let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
    let mut local: LocalDevice<'static> = LocalDevice::new(
        storage,
        region,
        LocalConfig {
            max_allocation_size: 128 << 10,
            ..LocalConfig::default()
        },
    )
    .expect("a local device");
    for (device_only, params) in [
        (false, BufferParams::host_visible()),
        (true, BufferParams::device_local()),
    ] {
        let mut gpu = vulkan(device_only);
        let len = 600_000u64;
        let data: Vec<u8> = (0..len).map(|i| (i * 13 + i / 511) as u8).collect();
        let src = local
            .allocate_buffer(BufferParams::host_visible(), len)
            .expect("local buffer");
        local
            .write_buffer(BufferSpan::whole(src), &data)
            .expect("write");
        let dst = gpu.allocate_buffer(params, len).expect("vulkan buffer");
        let domain = gpu.memory_domain(gpu.buffer_info(dst).expect("info").memory_type);
        let expected = MemoryConnection::between(MemoryDomain::Host, domain);
        if device_only {
            assert_eq!(expected, MemoryConnection::Migratable);
        }
        let mut staging = vec![0u8; 4096];
        let path = copy_between(
            &mut local,
            BufferSpan::whole(src),
            &mut gpu,
            BufferSpan::whole(dst),
            len,
            &mut staging,
        )
        .expect("local → vulkan");
        assert_eq!(path, expected);
        let mut out = vec![0u8; len as usize];
        gpu.read_buffer(BufferSpan::whole(dst), &mut out)
            .expect("read");
        assert_eq!(out, data);
        // And back into a fresh local buffer.
        let back = local
            .allocate_buffer(BufferParams::host_visible(), len)
            .expect("local buffer");
        let path = copy_between(
            &mut gpu,
            BufferSpan::whole(dst),
            &mut local,
            BufferSpan::whole(back),
            len,
            &mut staging,
        )
        .expect("vulkan → local");
        assert_eq!(path, MemoryConnection::between(domain, MemoryDomain::Host));
        local
            .read_buffer(BufferSpan::whole(back), &mut out)
            .expect("read");
        assert_eq!(out, data);
        for b in [src, back] {
            local.release_buffer(b).expect("release");
        }
        gpu.release_buffer(dst).expect("release");
    }
}
