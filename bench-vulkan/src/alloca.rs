//! Section 2: `queue_alloca` + `queue_dealloca` on the device, per pair: with no semaphores,
//! and in a chain where each pair signals a timeline the next one waits on.

use hal_core::memory::BufferParams;
use hal_core::{Device, SemaphoreValue, Submit};
use hal_vulkan::VulkanDevice;
use serde_json::{json, Value};
use std::time::Instant;

fn err(what: &'static str) -> impl Fn(hal_core::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// `pairs` alloca/dealloca pairs with no semaphores.
fn plain_pairs(
    device: &mut VulkanDevice<'_>,
    params: BufferParams,
    bytes: u64,
    pairs: u64,
) -> Result<(), String> {
    for _ in 0..pairs {
        let b = device
            .queue_alloca(Submit::NOW, params, bytes)
            .map_err(err("queue_alloca"))?;
        device
            .queue_dealloca(Submit::NOW, b)
            .map_err(err("queue_dealloca"))?;
    }
    Ok(())
}

/// Section 2 with `pairs` pairs of `bytes`-byte buffers per variant.
pub fn run(device: &mut VulkanDevice<'_>, pairs: u64, bytes: u64) -> Result<Value, String> {
    let params = BufferParams::device_local();
    // Warm the allocator (first blocks, slabs), then time.
    plain_pairs(device, params, bytes, 64)?;
    let start = Instant::now();
    plain_pairs(device, params, bytes, pairs)?;
    let plain_ns = start.elapsed().as_nanos() as f64 / pairs as f64;

    let timeline = device.create_semaphore(0).map_err(err("semaphore"))?;
    let start = Instant::now();
    let mut value = 0u64;
    for _ in 0..pairs {
        let wait = [SemaphoreValue::new(timeline, value)];
        let signal = [SemaphoreValue::new(timeline, value + 1)];
        let b = device
            .queue_alloca(Submit::new(&wait, &signal), params, bytes)
            .map_err(err("queue_alloca"))?;
        let wait = [SemaphoreValue::new(timeline, value + 1)];
        let signal = [SemaphoreValue::new(timeline, value + 2)];
        device
            .queue_dealloca(Submit::new(&wait, &signal), b)
            .map_err(err("queue_dealloca"))?;
        value += 2;
    }
    let chained_ns = start.elapsed().as_nanos() as f64 / pairs as f64;
    let reached = device.query_semaphore(timeline).map_err(err("query"))?;
    device
        .release_semaphore(timeline)
        .map_err(err("semaphore"))?;
    if reached != value {
        return Err(format!(
            "the alloca chain reached {reached}, expected {value}"
        ));
    }
    let live = device.object_counts().buffers;
    println!(
        "  queue_alloca + queue_dealloca ({bytes} B): {plain_ns:.0} ns per pair; chained through a timeline: {chained_ns:.0} ns per pair (buffers live after: {live})"
    );
    Ok(json!({
        "bytes": bytes,
        "pairs": pairs,
        "ns_per_pair": plain_ns,
        "ns_per_pair_chained": chained_ns,
    }))
}
