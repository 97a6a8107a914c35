//! Memoization: a reusable command buffer built once per (device, queue affinity), looked up
//! and replayed many times.

use super::{alloc, assert_close, download_f32, load, run, upload_f32, values, Baseline, Target};
use alloc::{boxed::Box, format, vec::Vec};
use hal_core::memo::MemoStats;
use hal_core::{
    BufferRef, BufferSpan, CommandBuffer, CommandBufferMode, Device, Error, Executable, MemoCache,
    MemoKey, QueueAffinity, Record, Workgroups,
};

/// Records `out = relu(a * b)` over binding slots 0, 1, 2.
fn build<D: Device>(
    dev: &mut D,
    mul: Executable,
    relu: Executable,
    builds: &mut u32,
) -> Result<CommandBuffer, Error> {
    *builds += 1;
    let cb = dev.create_command_buffer(CommandBufferMode::Reusable, 32, 3)?;
    dev.record(
        cb,
        Record::Dispatch {
            executable: mul,
            workgroups: Workgroups::Direct([2, 1, 1]),
            constants: &[],
            bindings: &[BufferRef::slot(0), BufferRef::slot(1), BufferRef::slot(2)],
        },
    )?;
    dev.record(cb, Record::Barrier)?;
    dev.record(
        cb,
        Record::Dispatch {
            executable: relu,
            workgroups: Workgroups::Direct([3, 1, 1]),
            constants: &[],
            bindings: &[BufferRef::slot(2), BufferRef::slot(2)],
        },
    )?;
    dev.end(cb)?;
    Ok(cb)
}

/// Built on the first lookup, replayed on every one after with new inputs, each giving the
/// right result; the cache counts one miss and N − 1 hits.
pub fn built_once_replayed<T: Target>() {
    super::with_device::<T>(|dev| {
        let n = 200;
        let mul = load::<T>(dev, "mul_f32");
        let relu = load::<T>(dev, "relu_f32");
        let a = alloc(dev, n as u64 * 4);
        let b = alloc(dev, n as u64 * 4);
        let out = alloc(dev, n as u64 * 4);
        let mut cache = MemoCache::<CommandBuffer, 4>::new();
        let key = MemoKey {
            device: dev.id(),
            affinity: QueueAffinity::ANY,
            resource: 1,
        };
        let mut builds = 0;
        let mut first = None;
        let rounds = 6;
        for round in 0..rounds {
            let cb = cache
                .get_or_try_insert(key, || build(dev, mul, relu, &mut builds))
                .expect("memoized command buffer");
            assert_eq!(
                *first.get_or_insert(cb),
                cb,
                "the same command buffer each time"
            );
            let (x, y) = (values(n, 100 + round), values(n, 200 + round));
            dev.write_buffer(BufferSpan::whole(a), &super::f32_bytes(&x))
                .expect("write");
            dev.write_buffer(BufferSpan::whole(b), &super::f32_bytes(&y))
                .expect("write");
            let table = [a, b, out].map(BufferSpan::whole);
            run(dev, |d, s| d.queue_execute(s, cb, &table))
                .unwrap_or_else(|e| panic!("replay {round}: {e:?}"));
            let want: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(&p, &q)| (f64::from(p) * f64::from(q)).max(0.0))
                .collect();
            assert_close(
                &download_f32(dev, out, n),
                &want,
                1e-6,
                &format!("replay {round}"),
            );
        }
        assert_eq!(builds, 1, "built once");
        assert_eq!(
            cache.stats(),
            MemoStats {
                hits: rounds - 1,
                misses: 1
            }
        );
        let mut released = 0;
        cache.evict_device(dev.id(), |cb| {
            dev.release_command_buffer(cb).expect("release");
            released += 1;
        });
        assert_eq!(released, 1);
        assert_eq!(cache.get(&key), None);
        for buffer in [a, b, out] {
            dev.release_buffer(buffer).expect("release");
        }
        dev.release_executable(mul).expect("release");
        dev.release_executable(relu).expect("release");
    });
}

/// Two devices have different ids; each (device, affinity) gets its own build, and evicting
/// one device leaves the other's.
pub fn keyed_by_device_and_affinity<T: Target>() {
    let mut dev_a = Box::new(T::create());
    let mut dev_b = Box::new(T::create());
    let (base_a, base_b) = (Baseline::of(&*dev_a), Baseline::of(&*dev_b));
    assert_ne!(dev_a.id(), dev_b.id(), "each device has its own id");
    let mut cache = MemoCache::<CommandBuffer, 4>::new();
    let mut builds = 0;
    let key = |device, affinity| MemoKey {
        device,
        affinity,
        resource: 7,
    };
    let (mul_a, relu_a) = (
        load::<T>(&mut dev_a, "mul_f32"),
        load::<T>(&mut dev_a, "relu_f32"),
    );
    let (mul_b, relu_b) = (
        load::<T>(&mut dev_b, "mul_f32"),
        load::<T>(&mut dev_b, "relu_f32"),
    );
    let id_a = dev_a.id();
    let id_b = dev_b.id();
    for _ in 0..3 {
        for affinity in [QueueAffinity::ANY, QueueAffinity(1)] {
            cache
                .get_or_try_insert(key(id_a, affinity), || {
                    build(&mut *dev_a, mul_a, relu_a, &mut builds)
                })
                .expect("device a");
        }
        cache
            .get_or_try_insert(key(id_b, QueueAffinity::ANY), || {
                build(&mut *dev_b, mul_b, relu_b, &mut builds)
            })
            .expect("device b");
    }
    assert_eq!(builds, 3, "one build per (device, affinity)");
    assert_eq!(cache.stats(), MemoStats { hits: 6, misses: 3 });
    assert_eq!(dev_a.object_counts().command_buffers, 2);
    assert_eq!(dev_b.object_counts().command_buffers, 1);

    // The command buffer built on b runs on b.
    let n = 16;
    let x = values(n, 5);
    let input = upload_f32(&mut *dev_b, &x);
    let out = alloc(&mut *dev_b, n as u64 * 4);
    let cb = cache
        .get(&key(id_b, QueueAffinity::ANY))
        .expect("cached for b");
    let table = [input, input, out].map(BufferSpan::whole);
    run(&mut *dev_b, |d, s| d.queue_execute(s, cb, &table)).expect("run b's command buffer");
    let want: Vec<f64> = x.iter().map(|&v| f64::from(v) * f64::from(v)).collect();
    assert_close(
        &download_f32(&mut *dev_b, out, n),
        &want,
        1e-6,
        "x * x on b",
    );

    cache.evict_device(id_a, |cb| {
        dev_a.release_command_buffer(cb).expect("release on a");
    });
    assert!(
        cache.get(&key(id_b, QueueAffinity::ANY)).is_some(),
        "b's entry stays"
    );
    cache.evict_device(id_b, |cb| {
        dev_b.release_command_buffer(cb).expect("release on b");
    });
    dev_b.release_buffer(input).expect("release");
    dev_b.release_buffer(out).expect("release");
    for (dev, mul, relu) in [(&mut dev_a, mul_a, relu_a), (&mut dev_b, mul_b, relu_b)] {
        dev.release_executable(mul).expect("release");
        dev.release_executable(relu).expect("release");
        super::assert_works(&mut **dev);
    }
    base_a.check(&*dev_a, "device a");
    base_b.check(&*dev_b, "device b");
}
