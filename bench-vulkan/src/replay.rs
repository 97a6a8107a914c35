//! Section 3: 100 small dispatches, replayed from the memoized reusable command buffer
//! against recorded afresh each time, each execution waited for. Reports wall time per
//! execution and the host's cost (wall time minus the time blocked waiting for the GPU).

use hal_core::command::{BufferRef, CommandBufferMode, Record, Workgroups};
use hal_core::memory::BufferParams;
use hal_core::{
    Buffer, BufferSpan, CommandBuffer, Device, Executable, ExecutableSource, Semaphore,
    SemaphoreValue, Submit, Timeout,
};
use hal_vulkan::VulkanDevice;
use serde_json::{json, Value};
use std::time::Instant;

/// Dispatches per command buffer.
pub const DISPATCHES: u32 = 100;

fn record_all(
    device: &mut VulkanDevice<'_>,
    cb: CommandBuffer,
    kernel: Executable,
    buffers: &[Buffer],
) -> Result<(), String> {
    record_n(device, cb, kernel, buffers, DISPATCHES, false)
}

/// Records `count` dispatches, with a barrier between each two if `barriers`, and ends.
fn record_n(
    device: &mut VulkanDevice<'_>,
    cb: CommandBuffer,
    kernel: Executable,
    buffers: &[Buffer],
    count: u32,
    barriers: bool,
) -> Result<(), String> {
    for i in 0..count {
        if barriers && i > 0 {
            device
                .record(cb, Record::Barrier)
                .map_err(|e| format!("record: {e}"))?;
        }
        let out = buffers[i as usize % buffers.len()];
        let bindings = [BufferRef::span(BufferSpan::whole(out))];
        device
            .record(
                cb,
                Record::Dispatch {
                    executable: kernel,
                    workgroups: Workgroups::Direct([1, 1, 1]),
                    constants: &[i],
                    bindings: &bindings,
                },
            )
            .map_err(|e| format!("record: {e}"))?;
    }
    device.end(cb).map_err(|e| format!("end: {e}"))
}

/// Executes `cb` and waits until it has run (signalling `done` at the next `value`).
fn execute_and_wait(
    device: &mut VulkanDevice<'_>,
    cb: CommandBuffer,
    done: Semaphore,
    value: &mut u64,
) -> Result<(), String> {
    *value += 1;
    let signal = [SemaphoreValue::new(done, *value)];
    device
        .queue_execute(Submit::new(&[], &signal), cb, &[])
        .map_err(|e| format!("execute: {e}"))?;
    device
        .wait_semaphores(&signal, Timeout::Infinite)
        .map_err(|e| format!("wait: {e}"))
}

/// (wall ns, host ns) per execution over `iters`.
fn per_execution(
    device: &mut VulkanDevice<'_>,
    iters: u64,
    mut body: impl FnMut(&mut VulkanDevice<'_>) -> Result<(), String>,
) -> Result<(f64, f64), String> {
    let waited = device.gpu_wait_nanos();
    let start = Instant::now();
    for _ in 0..iters {
        body(device)?;
    }
    let wall = start.elapsed().as_nanos() as f64;
    let gpu = (device.gpu_wait_nanos() - waited) as f64;
    Ok((wall / iters as f64, (wall - gpu) / iters as f64))
}

/// Section 3 with `iters` executions per variant.
pub fn run(device: &mut VulkanDevice<'_>, iters: u64) -> Result<Value, String> {
    let kernel = device
        .load_executable(ExecutableSource::Kernel("fill_u32"))
        .map_err(|e| format!("fill_u32: {e}"))?;
    let mut buffers = Vec::new();
    for _ in 0..4 {
        buffers.push(
            device
                .allocate_buffer(BufferParams::device_local(), 256)
                .map_err(|e| format!("buffer: {e}"))?,
        );
    }
    let slots = DISPATCHES * 3;
    let reusable = device
        .create_command_buffer(CommandBufferMode::Reusable, slots, 0)
        .map_err(|e| format!("command buffer: {e}"))?;
    record_all(device, reusable, kernel, &buffers)?;
    let replays_before = device.memoized_replays();
    let done = device
        .create_semaphore(0)
        .map_err(|e| format!("semaphore: {e}"))?;
    let mut value = 0;
    execute_and_wait(device, reusable, done, &mut value)?;
    let (replay_wall, replay_host) = per_execution(device, iters, |d| {
        execute_and_wait(d, reusable, done, &mut value)
    })?;
    let replays = device.memoized_replays() - replays_before;
    if replays != iters {
        return Err(format!("{replays} of {iters} executions were replayed"));
    }
    let (record_wall, record_host) = per_execution(device, iters, |d| {
        let cb = d
            .create_command_buffer(CommandBufferMode::OneShot, slots, 0)
            .map_err(|e| format!("command buffer: {e}"))?;
        record_all(d, cb, kernel, &buffers)?;
        execute_and_wait(d, cb, done, &mut value)?;
        d.release_command_buffer(cb)
            .map_err(|e| format!("release: {e}"))
    })?;
    // The floor of one round trip (one dispatch), and what barriers between dispatches
    // cost on the device.
    let mut shape = |d: &mut VulkanDevice<'_>, count: u32, barriers: bool| {
        let cb = d
            .create_command_buffer(CommandBufferMode::Reusable, count * 4, 0)
            .map_err(|e| format!("command buffer: {e}"))?;
        record_n(d, cb, kernel, &buffers, count, barriers)?;
        execute_and_wait(d, cb, done, &mut value)?;
        let timed = per_execution(d, iters, |d| execute_and_wait(d, cb, done, &mut value));
        let _ = d.release_command_buffer(cb);
        timed
    };
    let (one_wall, _) = shape(device, 1, false)?;
    let (barriers_wall, _) = shape(device, DISPATCHES, true)?;
    // The last dispatch on each buffer wrote its index: the work really ran.
    let mut out = [0u8; 256];
    device
        .read_buffer(BufferSpan::whole(buffers[3]), &mut out)
        .map_err(|e| format!("read: {e}"))?;
    let expected = DISPATCHES - 1;
    if u32::from_ne_bytes([out[0], out[1], out[2], out[3]]) != expected {
        return Err("the dispatches did not run".into());
    }
    let _ = device.release_command_buffer(reusable);
    let _ = device.release_semaphore(done);
    for b in buffers {
        let _ = device.release_buffer(b);
    }
    let _ = device.release_executable(kernel);
    println!(
        "  one dispatch, replayed and waited: {:.1} µs; {DISPATCHES} dispatches with a barrier between each: {:.1} µs ({:.2} µs per barrier beyond the dispatches)",
        one_wall / 1e3,
        barriers_wall / 1e3,
        (barriers_wall - replay_wall) / 1e3 / f64::from(DISPATCHES - 1),
    );
    println!(
        "  {DISPATCHES} dispatches, replayed: {:.1} µs per execution ({:.1} µs host); recorded afresh: {:.1} µs ({:.1} µs host) → replay {:.1}× cheaper on the host, {:.1}× end to end",
        replay_wall / 1e3,
        replay_host / 1e3,
        record_wall / 1e3,
        record_host / 1e3,
        record_host / replay_host,
        record_wall / replay_wall
    );
    Ok(json!({
        "dispatches": DISPATCHES,
        "executions": iters,
        "replay_us": replay_wall / 1e3,
        "replay_host_us": replay_host / 1e3,
        "record_us": record_wall / 1e3,
        "record_host_us": record_host / 1e3,
        "host_ratio": record_host / replay_host,
        "end_to_end_ratio": record_wall / replay_wall,
        "one_dispatch_us": one_wall / 1e3,
        "with_barriers_us": barriers_wall / 1e3,
    }))
}
