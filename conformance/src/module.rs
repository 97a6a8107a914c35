//! Modules: a [`Session`] loads a module built with the host builder and invokes it —
//! results match the host, constants are imported or streamed, replay is memoized, the
//! arena comes back, and bad modules or bad calls are errors that leak nothing.

use super::{alloc, assert_close, download_f32, upload_f32, values, Target};
use alloc::{boxed::Box, vec, vec::Vec};
use hal_core::module::{Module, ModuleBuilder, Problem, Site};
use hal_core::session::{LoadError, LoadOptions, ResultMemory, Session, SessionStats};
use hal_core::{BufferSpan, Device, Error, QueueAffinity, WHOLE};

/// Bytes leaked at a 64-byte-aligned address (plus `skew` bytes, to misalign on purpose).
fn leak(bytes: &[u8], skew: usize) -> &'static [u8] {
    let blocks = (bytes.len() + skew).div_ceil(64);
    let storage: &'static mut [[u8; 64]] = Box::leak(vec![[0u8; 64]; blocks].into_boxed_slice());
    let flat: &'static mut [u8] = storage.as_flattened_mut();
    flat[skew..skew + bytes.len()].copy_from_slice(bytes);
    &flat[skew..skew + bytes.len()]
}

/// A 2-layer MLP: `probs = softmax(relu(x·W1 + b1)·W2 + b2)`, for `batch` rows.
struct Mlp {
    inputs: usize,
    hidden: usize,
    outputs: usize,
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

impl Mlp {
    fn new(inputs: usize, hidden: usize, outputs: usize) -> Self {
        let scale = |v: Vec<f32>| v.into_iter().map(|x| x * 0.5).collect::<Vec<_>>();
        Self {
            inputs,
            hidden,
            outputs,
            w1: scale(values(inputs * hidden, 1)),
            b1: values(hidden, 2),
            w2: scale(values(hidden * outputs, 3)),
            b2: values(outputs, 4),
        }
    }

    fn module(&self, batch: usize, kernel: &str) -> Vec<u8> {
        let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let mut b = ModuleBuilder::new("mlp");
        let matmul = b.executable(kernel);
        let softmax = b.executable("softmax_f32");
        let w1 = b.constant("w1", &f32s(&self.w1));
        let b1 = b.constant("b1", &f32s(&self.b1));
        let w2 = b.constant("w2", &f32s(&self.w2));
        let b2 = b.constant("b2", &f32s(&self.b2));
        let (m, k, h, n) = (
            batch as u32,
            self.inputs as u32,
            self.hidden as u32,
            self.outputs as u32,
        );
        let f = b.function(
            "infer",
            &[(batch * self.inputs * 4) as u64],
            &[(batch * self.outputs * 4) as u64],
        );
        let x = b.argument(f, 0);
        let probs = b.result(f, 0);
        let hidden = b.transient(f, u64::from(m * h * 4));
        let logits = b.transient(f, u64::from(m * n * 4));
        b.dispatch(f, matmul, [2, 1, 1], &[m, k, h, 0b11], &[x, w1, hidden, b1]);
        b.barrier(f);
        b.dispatch(
            f,
            matmul,
            [1, 1, 1],
            &[m, h, n, 0b01],
            &[hidden, w2, logits, b2],
        );
        b.barrier(f);
        b.dispatch(f, softmax, [1, 1, 1], &[m, n], &[logits, probs]);
        b.finish().expect("a valid module").bytes
    }

    fn reference(&self, x: &[f32]) -> Vec<f64> {
        let rows = x.len() / self.inputs;
        let mut out = Vec::new();
        for r in 0..rows {
            let row = &x[r * self.inputs..][..self.inputs];
            let hidden: Vec<f64> = (0..self.hidden)
                .map(|j| {
                    let s: f64 = (0..self.inputs)
                        .map(|i| f64::from(row[i]) * f64::from(self.w1[i * self.hidden + j]))
                        .sum();
                    (s + f64::from(self.b1[j])).max(0.0)
                })
                .collect();
            let logits: Vec<f64> = (0..self.outputs)
                .map(|j| {
                    let s: f64 = (0..self.hidden)
                        .map(|i| hidden[i] * f64::from(self.w2[i * self.outputs + j]))
                        .sum();
                    s + f64::from(self.b2[j])
                })
                .collect();
            let max = logits.iter().cloned().fold(f64::MIN, f64::max);
            let e: Vec<f64> = logits.iter().map(|l| libm::exp(l - max)).collect();
            let sum: f64 = e.iter().sum();
            out.extend(e.iter().map(|v| v / sum));
        }
        out
    }
}

type S = Session<'static, 4, 8, 4>;

fn load<T: Target>(dev: &mut T::Device, bytes: &'static [u8], options: LoadOptions) -> S {
    let module = Module::parse(bytes).expect("module parses");
    S::load(dev, module, options).expect("session loads")
}

/// Invokes `infer` on `x` and returns the probabilities.
fn infer<D: Device, const C: usize>(
    dev: &mut D,
    s: &mut Session<'static, 4, C, 4>,
    x: &[f32],
    outputs: usize,
) -> Result<Vec<f32>, Error> {
    let input = upload_f32(dev, x);
    let out = alloc(dev, (x.len() / 16 * outputs * 4).max(4) as u64);
    let f = s.function("infer").expect("infer exists");
    let r = s.invoke(
        dev,
        f,
        &[BufferSpan::whole(input)],
        &[BufferSpan::whole(out)],
        QueueAffinity::ANY,
    );
    let got = r.map(|()| download_f32(dev, out, x.len() / 16 * outputs));
    dev.release_buffer(input).expect("release input");
    dev.release_buffer(out).expect("release output");
    got
}

fn total_constants(m: &Mlp) -> u64 {
    ((m.w1.len() + m.b1.len() + m.w2.len() + m.b2.len()) * 4) as u64
}

/// The MLP module gives the host's float64 answer (to f32 rounding), for several batches.
pub fn mlp_matches_host<T: Target>() {
    super::with_device::<T>(|dev| {
        let mlp = Mlp::new(16, 24, 10);
        for batch in [1usize, 3, 8] {
            let bytes = leak(&mlp.module(batch, "matmul_f32"), 0);
            let mut s = load::<T>(dev, bytes, LoadOptions::default());
            let x = values(batch * 16, batch as u64);
            let got = infer(dev, &mut s, &x, 10).expect("invoke");
            assert_close(&got, &mlp.reference(&x), 1e-5, "mlp probabilities");
            s.release(dev).expect("release session");
        }
    });
}

/// Constants are imported or streamed — all of them, one way or the other — and both ways
/// give the same results; misaligned storage and `import: false` always stream.
pub fn constants_imported_or_streamed<T: Target>() {
    super::with_device::<T>(|dev| {
        let mlp = Mlp::new(16, 24, 10);
        let module = mlp.module(2, "matmul_f32");
        let x = values(32, 9);
        let want = mlp.reference(&x);
        let cases = [
            (leak(&module, 0), LoadOptions::default(), false),
            (leak(&module, 4), LoadOptions::default(), true),
            (
                leak(&module, 0),
                LoadOptions {
                    import: false,
                    staging_bytes: 100,
                    ..LoadOptions::default()
                },
                true,
            ),
        ];
        for (bytes, options, must_stream) in cases {
            let mut s = load::<T>(dev, bytes, options);
            let SessionStats {
                imported_bytes,
                streamed_bytes,
                ..
            } = s.stats();
            assert_eq!(imported_bytes + streamed_bytes, total_constants(&mlp));
            if must_stream {
                assert_eq!(imported_bytes, 0, "{options:?}");
            }
            let got = infer(dev, &mut s, &x, 10).expect("invoke");
            assert_close(&got, &want, 1e-5, "probabilities");
            s.release(dev).expect("release session");
        }
    });
}

/// The command buffer is recorded once per queue affinity and replayed after; the arena
/// goes back after every invocation.
pub fn replay_is_memoized<T: Target>() {
    super::with_device::<T>(|dev| {
        let mlp = Mlp::new(16, 24, 10);
        let bytes = leak(&mlp.module(1, "matmul_f32"), 0);
        let mut s = load::<T>(dev, bytes, LoadOptions::default());
        let before = dev.object_counts();
        let input = upload_f32(dev, &values(16, 1));
        let out = alloc(dev, 40);
        let f = s.function("infer").expect("infer");
        let (args, results) = ([BufferSpan::whole(input)], [BufferSpan::whole(out)]);
        for affinity in [
            QueueAffinity::ANY,
            QueueAffinity::ANY,
            QueueAffinity(1),
            QueueAffinity::ANY,
        ] {
            s.invoke(dev, f, &args, &results, affinity).expect("invoke");
        }
        let stats = s.stats();
        assert_eq!((stats.recorded, stats.replayed), (2, 2));
        dev.release_buffer(input).expect("release");
        dev.release_buffer(out).expect("release");
        let after = dev.object_counts();
        assert_eq!(after.buffers, before.buffers, "arena returned");
        s.release(dev).expect("release session");
    });
}

/// A module naming a kernel the device lacks fails to load with the executable's index and
/// the kernel's name; nothing is left behind.
pub fn unknown_kernel_is_a_module_error<T: Target>() {
    super::with_device::<T>(|dev| {
        let bytes = leak(&Mlp::new(4, 4, 4).module(1, "conv3d_f32"), 0);
        let module = Module::parse(bytes).expect("parses");
        match S::load(dev, module, LoadOptions::default()) {
            Err(LoadError::Module(e)) => {
                assert_eq!(e.site, Site::Executable(0));
                let Problem::UnknownKernel { name } = e.problem else {
                    panic!("{e}")
                };
                assert_eq!(name.as_str(), "conv3d_f32");
            }
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("loaded a module with an unknown kernel"),
        }
    });
}

/// A session type with too few executable slots for the module says so. Constants need
/// room only where each is a buffer of its own: with fewer slots than constants the pool is
/// streamed as one buffer, and a pool imported in place needs none.
pub fn capacity_is_checked<T: Target>() {
    super::with_device::<T>(|dev| {
        let bytes = leak(&Mlp::new(4, 4, 4).module(1, "matmul_f32"), 0);
        let module = Module::parse(bytes).expect("parses");
        let small = Session::<'static, 1, 8, 1>::load(dev, module, LoadOptions::default());
        assert!(matches!(
            small.err(),
            Some(LoadError::Capacity {
                what: "executables",
                ..
            })
        ));
        let streamed = LoadOptions {
            import: false,
            ..LoadOptions::default()
        };
        let mlp = Mlp::new(16, 24, 10);
        let bytes = leak(&mlp.module(1, "matmul_f32"), 0);
        let module = Module::parse(bytes).expect("parses");
        let mut pooled = Session::<'static, 4, 3, 4>::load(dev, module, streamed)
            .expect("four constants in three slots: the pool streamed as one buffer");
        assert_eq!(pooled.stats().streamed_bytes, total_constants(&mlp));
        let x = values(16, 3);
        let got = infer(dev, &mut pooled, &x, 10).expect("invoke");
        assert_close(&got, &mlp.reference(&x), 1e-5, "streamed pool");
        pooled.release(dev).expect("release");
        // With no room for constants at all, the pool is imported in place where the device
        // can, streamed as one buffer where not.
        let pooled = Session::<'static, 4, 0, 1>::load(dev, module, LoadOptions::default())
            .expect("a session with no constant slots");
        let stats = pooled.stats();
        assert_eq!(
            stats.imported_bytes + stats.streamed_bytes,
            total_constants(&mlp)
        );
        pooled.release(dev).expect("release");
    });
}

/// Wrong argument counts or sizes, an unknown function and a failing kernel are errors;
/// the session keeps working after each.
pub fn bad_calls_are_errors<T: Target>() {
    super::with_device::<T>(|dev| {
        let mlp = Mlp::new(16, 24, 10);
        let bytes = leak(&mlp.module(1, "matmul_f32"), 0);
        let mut s = load::<T>(dev, bytes, LoadOptions::default());
        let f = s.function("infer").expect("infer");
        let input = upload_f32(dev, &values(16, 1));
        let small = alloc(dev, 8);
        let out = alloc(dev, 40);
        let (x, o) = (BufferSpan::whole(input), BufferSpan::whole(out));
        let any = QueueAffinity::ANY;
        let e = s.invoke(dev, f, &[], &[o], any);
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
        let e = s.invoke(dev, f, &[x, x], &[o], any);
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
        let e = s.invoke(dev, f, &[BufferSpan::new(input, 0, 8)], &[o], any);
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
        let e = s.invoke(dev, 7, &[x], &[o], any);
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
        // A result span whose buffer is too small passes the size check (WHOLE) but the
        // binding is out of range at submit.
        let e = s.invoke(dev, f, &[x], &[BufferSpan::whole(small)], any);
        assert!(e.is_err(), "a too-small result buffer must fail");
        let before = dev.object_counts();
        let got = infer(dev, &mut s, &values(16, 1), 10).expect("still works");
        assert_close(&got, &mlp.reference(&values(16, 1)), 1e-5, "after errors");
        assert_eq!(dev.object_counts().buffers, before.buffers);
        for b in [input, small, out] {
            dev.release_buffer(b).expect("release");
        }
        s.release(dev).expect("release session");
    });
}

/// Results can be device-local (read with `read_buffer`) or mappable (mapped).
pub fn result_memory<T: Target>() {
    super::with_device::<T>(|dev| {
        let mlp = Mlp::new(16, 24, 10);
        let bytes = leak(&mlp.module(1, "matmul_f32"), 0);
        let mut s = load::<T>(dev, bytes, LoadOptions::default());
        let f = s.function("infer").expect("infer");
        let x = values(16, 5);
        let want = mlp.reference(&x);
        let input = upload_f32(dev, &x);
        for memory in [ResultMemory::DeviceLocal, ResultMemory::Mappable] {
            let out = s.allocate_results(dev, f, memory).expect("results");
            assert_eq!(out.len(), 1);
            let results = [BufferSpan::whole(out[0])];
            s.invoke(
                dev,
                f,
                &[BufferSpan::whole(input)],
                &results,
                QueueAffinity::ANY,
            )
            .expect("invoke");
            let got = download_f32(dev, out[0], 10);
            assert_close(&got, &want, 1e-5, "result");
            if memory == ResultMemory::Mappable {
                let map = dev.map(
                    BufferSpan::new(out[0], 0, WHOLE),
                    hal_core::memory::MemoryAccess::READ,
                );
                assert!(map.is_ok(), "mappable result maps");
            }
            dev.release_buffer(out[0]).expect("release");
        }
        dev.release_buffer(input).expect("release");
        s.release(dev).expect("release session");
    });
}

/// Copy, fill and barrier steps, and a function with no transients (no arena).
pub fn copy_fill_and_no_arena<T: Target>() {
    super::with_device::<T>(|dev| {
        let mut b = ModuleBuilder::new("moves");
        let c = b.constant("c", &[7u8; 16]);
        let f = b.function("moves", &[16], &[48]);
        let x = b.argument(f, 0);
        let out = b.result(f, 0);
        b.fill(f, out.slice(0, 48), 0xAABB_CCDD);
        b.barrier(f);
        b.copy(f, x, out.slice(16, 16));
        b.copy(f, c, out.slice(32, 16));
        let g = b.function("staged", &[16], &[16]);
        let (gx, gout) = (b.argument(g, 0), b.result(g, 0));
        let t = b.transient(g, 16);
        b.copy(g, gx, t);
        b.barrier(g);
        b.copy(g, t, gout);
        let bytes = leak(&b.finish().expect("valid").bytes, 0);
        let mut s = load::<T>(dev, bytes, LoadOptions::default());
        let input = super::upload(dev, &[1u8; 16]);
        let out = alloc(dev, 48);
        let fi = s.function("moves").expect("moves");
        s.invoke(
            dev,
            fi,
            &[BufferSpan::whole(input)],
            &[BufferSpan::whole(out)],
            QueueAffinity::ANY,
        )
        .expect("moves");
        let got = super::download(dev, out, 0, 48);
        let mut want = Vec::new();
        for _ in 0..4 {
            want.extend_from_slice(&0xAABB_CCDDu32.to_le_bytes());
        }
        want.extend_from_slice(&[1u8; 16]);
        want.extend_from_slice(&[7u8; 16]);
        assert_eq!(got, want);
        let gi = s.function("staged").expect("staged");
        let out2 = alloc(dev, 16);
        s.invoke(
            dev,
            gi,
            &[BufferSpan::whole(input)],
            &[BufferSpan::whole(out2)],
            QueueAffinity::ANY,
        )
        .expect("staged");
        assert_eq!(super::download(dev, out2, 0, 16), [1u8; 16]);
        for b in [input, out, out2] {
            dev.release_buffer(b).expect("release");
        }
        s.release(dev).expect("release session");
    });
}

/// A kernel that fails mid-invocation (shapes larger than its bindings) is an error; the
/// arena still goes back and the session keeps working with its other functions.
pub fn kernel_failure_leaves_session_usable<T: Target>() {
    super::with_device::<T>(|dev| {
        let mut b = ModuleBuilder::new("faulty");
        let matmul = b.executable("matmul_f32");
        let bad = b.function("bad", &[16], &[16]);
        let (x, y) = (b.argument(bad, 0), b.result(bad, 0));
        let t = b.transient(bad, 16);
        // M×K = 1×1000 does not fit 16 bytes: the kernel refuses.
        b.dispatch(bad, matmul, [1, 1, 1], &[1, 1000, 4, 0], &[x, x, t]);
        b.barrier(bad);
        b.copy(bad, t, y);
        let good = b.function("good", &[16], &[16]);
        let (gx, gy) = (b.argument(good, 0), b.result(good, 0));
        b.copy(good, gx, gy);
        let bytes = leak(&b.finish().expect("valid").bytes, 0);
        let mut s = load::<T>(dev, bytes, LoadOptions::default());
        let input = super::upload(dev, &[3u8; 16]);
        let out = alloc(dev, 16);
        let (args, results) = ([BufferSpan::whole(input)], [BufferSpan::whole(out)]);
        let before = dev.object_counts();
        let f_bad = s.function("bad").expect("bad");
        let f_good = s.function("good").expect("good");
        for _ in 0..3 {
            let e = s.invoke(dev, f_bad, &args, &results, QueueAffinity::ANY);
            assert!(e.is_err(), "a failing kernel fails the invocation");
            assert_eq!(
                dev.object_counts().buffers,
                before.buffers,
                "arena returned"
            );
            s.invoke(dev, f_good, &args, &results, QueueAffinity::ANY)
                .expect("the session still works");
            assert_eq!(super::download(dev, out, 0, 16), [3u8; 16]);
        }
        for b in [input, out] {
            dev.release_buffer(b).expect("release");
        }
        s.release(dev).expect("release session");
    });
}
