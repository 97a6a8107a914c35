//! A walk through the device-memory allocators, as a driver would use them for one model:
//! weights placed once by a TLSF heap, small parameter buffers from a slab over the same heap,
//! and each invocation's transients bumped from an arena and rolled back with a mark.
//!
//! Run it with `cargo xtask run` (or `cargo run -p hal-core --example transients`).

use hal_core::memory::alloc::{AllocError, Arena, Caching, RangeAllocator, Slab, Tlsf};

/// A 4-layer MLP's weights, in bytes (f32).
const LAYERS: [(u64, u64); 4] = [(64, 256), (256, 256), (256, 128), (128, 10)];

fn main() -> Result<(), AllocError> {
    // One 8 MiB block of "device memory" for weights and small buffers, behind a cache so
    // that re-loading a model reuses its blocks.
    let slab = Slab::<_, 32>::new(Tlsf::<512>::new(8 << 20), &[64, 256, 1024])?;
    let mut heap = Caching::<_, 64>::new(slab);
    let mut weights = Vec::new();
    for (inputs, outputs) in LAYERS {
        let w = heap.allocate(inputs * outputs * 4, 256)?;
        let b = heap.allocate(outputs * 4, 64)?; // bias vectors come from the slab
        weights.push((w, b));
    }
    print("weights + biases (cache, slab, TLSF)", &heap.stats());

    // Each invocation bumps its activations from a 128 KiB arena. Frees below the top are
    // only reclaimed when the top goes, so the arena needs the sum, not the ping-pong peak:
    // that is what a module's static memory plan avoids.
    let mut arena = Arena::<16>::new(128 << 10);
    let batch = 32;
    for invocation in 0..3 {
        let mark = arena.mark();
        let mut input = arena.allocate(batch * LAYERS[0].0 * 4, 64)?;
        for (_, outputs) in LAYERS {
            let output = arena.allocate(batch * outputs * 4, 64)?;
            arena.free(input)?; // freed out of order: reclaimed when the top is freed
            input = output;
        }
        if invocation == 0 {
            print("arena during an invocation", &arena.stats());
        }
        arena.reset_to(mark)?;
    }
    print("arena after 3 invocations", &arena.stats());

    // Unloading keeps the blocks cached; re-loading a layer reuses one; trim gives them back.
    let layer1 = weights[1].0;
    for (w, b) in weights.drain(..) {
        heap.free(w)?;
        heap.free(b)?;
    }
    let again = heap.allocate(LAYERS[1].0 * LAYERS[1].1 * 4, 256)?;
    println!(
        "reloaded layer 1 at offset {} (was {})",
        again.offset, layer1.offset
    );
    heap.free(again)?;
    println!("trimmed {} cached bytes", heap.trim());
    print("heap after unloading", &heap.stats());
    Ok(())
}

fn print(what: &str, s: &hal_core::memory::alloc::AllocStats) {
    println!(
        "{what:38} in use {:>8} B  peak {:>8} B  live {:>3}  largest free {:>8} B of {} B",
        s.bytes_in_use, s.peak_bytes_in_use, s.allocation_count, s.largest_free_range, s.capacity
    );
}
