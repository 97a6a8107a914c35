//! Barriers: commands separated by barriers in one command buffer run in order, each seeing
//! what the one before it wrote.

use super::{
    alloc, assert_close, bytes_f32, download, download_f32, execute, f32_bytes, load, values,
    with_device, Target,
};
use alloc::vec::Vec;
use hal_core::{BufferRef, Device, Record, Workgroups};

/// Barriers order commands: each step reads what the one before it wrote.
pub fn barrier_orders_commands<T: Target>() {
    with_device::<T>(|dev| {
        let n = 300usize;
        let x = values(n, 11);
        let bytes = f32_bytes(&x);
        let [a, b, c, d] = [0; 4].map(|_| alloc(dev, n as u64 * 4));
        let add = load::<T>(dev, "add_f32");
        let mul = load::<T>(dev, "mul_f32");
        execute(
            dev,
            &[
                Record::Update {
                    target: BufferRef::buffer(a),
                    data: &bytes,
                },
                Record::Barrier,
                Record::Copy {
                    source: BufferRef::buffer(a),
                    target: BufferRef::buffer(b),
                    length: n as u64 * 4,
                },
                Record::Barrier,
                Record::Dispatch {
                    executable: add,
                    workgroups: Workgroups::Direct([4, 1, 1]),
                    constants: &[],
                    bindings: &[
                        BufferRef::buffer(a),
                        BufferRef::buffer(b),
                        BufferRef::buffer(c),
                    ],
                },
                Record::Barrier,
                Record::Dispatch {
                    executable: mul,
                    workgroups: Workgroups::Direct([3, 1, 1]),
                    constants: &[],
                    bindings: &[
                        BufferRef::buffer(c),
                        BufferRef::buffer(a),
                        BufferRef::buffer(d),
                    ],
                },
                Record::Barrier,
                Record::Fill {
                    target: BufferRef::buffer(a),
                    pattern: &[0],
                },
            ],
        )
        .expect("a chain of commands separated by barriers");
        let want: Vec<f64> = x
            .iter()
            .map(|&v| 2.0 * f64::from(v) * f64::from(v))
            .collect();
        assert_close(&download_f32(dev, d, n), &want, 1e-6, "(a + copy of a) * a");
        assert!(bytes_f32(&download(dev, a, 0, n * 4))
            .iter()
            .all(|&v| v == 0.0));
        dev.release_executable(add).expect("release");
        dev.release_executable(mul).expect("release");
        for buffer in [a, b, c, d] {
            dev.release_buffer(buffer).expect("release");
        }
    });
}
