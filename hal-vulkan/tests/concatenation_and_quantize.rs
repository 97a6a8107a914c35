//! `quantize_f32_s8` and `concatenation` on the Vulkan driver against the local driver, on
//! what the oracle's random single-op models do not reach: quotients on and beside rounding
//! ties, NaN, infinities and values beyond `i32`; ten inputs, elements of 1, 2 and 4 bytes,
//! inputs at offsets inside their arguments, outputs that end inside a word, with bytes
//! around the output that must be kept (module operands start on words).
//! Each case is a one-step module: fill the result, then the dispatch into a slice of it.
//! The validation layer is on unless `EMBER_VULKAN_VALIDATION=0`.

mod common;

use common::Rng;
use ember_import::{ElementType, Lowered, TensorInfo, FUNCTION};
use ember_kernels::concatenation::{Concatenation, MAX_INPUTS};
use ember_kernels::quantize::QuantizeF32S8;
use ember_kernels::KernelParams;
use hal_core::module::{ModuleBuilder, Operand};
use hal_vulkan::VulkanDevice;

/// Bytes of the fill kept on each side of the output inside the result.
const AROUND: usize = 4;

/// A one-step module: argument `i` holds `inputs[i]` bytes of which the kernel reads
/// `inputs[i] - skips[i]` from byte `skips[i]`; the result holds `output` bytes at
/// [`AROUND`], filled around.
fn module(
    kernel: &str,
    words: &[u32],
    inputs: &[usize],
    skips: &[usize],
    output: usize,
) -> Lowered {
    let result_len = (output + 2 * AROUND).next_multiple_of(4);
    let sizes: Vec<u64> = inputs.iter().map(|&n| n as u64).collect();
    let mut b = ModuleBuilder::new("case");
    let f = b.function(FUNCTION, &sizes, &[result_len as u64]);
    let exe = b.executable(kernel);
    let mut bindings: Vec<Operand> = (0..inputs.len())
        .map(|i| {
            let skip = skips[i] as u64;
            b.argument(f, i as u32).slice(skip, inputs[i] as u64 - skip)
        })
        .collect();
    bindings.push(b.result(f, 0).slice(AROUND as u64, output as u64));
    b.fill(f, b.result(f, 0), 0xa5c3_5a3c);
    b.barrier(f);
    b.dispatch(f, exe, [1, 1, 1], words, &bindings);
    let info = |n: usize| TensorInfo {
        name: "t".into(),
        element_type: ElementType::Int8,
        shape: vec![n],
        quantization: None,
    };
    Lowered {
        built: b.finish().expect("a valid module"),
        inputs: inputs.iter().map(|&n| info(n)).collect(),
        outputs: vec![info(result_len)],
        constant_bytes: 0,
    }
}

/// Runs `lowered` on both drivers and checks that every byte of the result agrees and that
/// the fill around the output (`output` bytes) is kept; returns the output's bytes.
fn agree(
    device: &mut VulkanDevice<'static>,
    what: &str,
    lowered: &Lowered,
    inputs: &[Vec<u8>],
    output: usize,
) -> Vec<u8> {
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let (want, got) = common::first_result_on_both(device, lowered, &refs, what);
    common::assert_same_bytes(&got, &want, what);
    let fill = |i: usize| 0xa5c3_5a3cu32.to_le_bytes()[i % 4];
    let end = AROUND + output;
    let around = (0..AROUND).chain(end..want.len());
    assert!(
        around.into_iter().all(|i| want[i] == fill(i)),
        "{what}: the fill"
    );
    want[AROUND..end].to_vec()
}

/// Floats whose quotients by `scale` sit on, and one ulp either side of, the halves between
/// integers, small and near 2^23 where halves end; and the values a cast cannot take.
fn quantize_inputs(rng: &mut Rng, scale: f32) -> Vec<f32> {
    let mut xs = vec![
        0.0,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        1.0e-40,
        3.0e9 * scale,
        -3.0e9 * scale,
        2_147_483_520.0 * scale,
        -2_147_483_648.0 * scale,
        2_147_483_648.0 * scale,
    ];
    for k in [
        -130i32,
        -129,
        -128,
        -3,
        -2,
        -1,
        0,
        1,
        2,
        3,
        126,
        127,
        128,
        1 << 22,
    ] {
        let tie = (k as f32 + 0.5) * scale;
        xs.extend([
            tie,
            -tie,
            f32::from_bits(tie.to_bits() + 1),
            f32::from_bits(tie.to_bits() - 1),
        ]);
    }
    xs.extend((0..64).map(|_| (rng.next() as u32 as f32 / 4.0e7 - 53.0) * scale));
    xs
}

#[test]
fn quantize_from_float_matches_the_local_driver() {
    let _turn = common::alone();
    let mut device = common::device();
    let mut rng = Rng(0x9a17_fe55);
    let mut reached = [false; 256];
    for scale in [1.0f32, 0.5, 0.1, 0.003_921_568_6, 3.0, 1.0e-3, 7.5e6] {
        for zero_point in [-128, -3, 0, 5, 127] {
            let xs = quantize_inputs(&mut rng, scale);
            let p = QuantizeF32S8::prepare(xs.len(), scale, zero_point).expect("valid");
            let mut words = Vec::new();
            p.encode(&mut words);
            // The input starts a word into its argument.
            let bytes: Vec<u8> = [0u8; 4]
                .into_iter()
                .chain(xs.iter().flat_map(|x| x.to_le_bytes()))
                .collect();
            let lowered = module(
                QuantizeF32S8::KERNEL,
                &words,
                &[bytes.len()],
                &[4],
                xs.len(),
            );
            let what = format!("scale {scale} zero point {zero_point}");
            for v in agree(&mut device, &what, &lowered, &[bytes], xs.len()) {
                reached[usize::from(v)] = true;
            }
        }
    }
    assert!(reached.iter().filter(|&&r| r).count() > 200);
}

#[test]
fn concatenation_matches_the_local_driver() {
    let _turn = common::alone();
    let mut device = common::device();
    let mut rng = Rng(0xc0c4_7e11);
    for n in 0..40 {
        let elem_bytes = [1, 2, 4][rng.below(3)];
        let count = if n % 4 == 0 {
            MAX_INPUTS
        } else {
            1 + rng.below(MAX_INPUTS)
        };
        let rank = 1 + rng.below(4);
        let axis = rng.below(rank);
        let mut shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below(5)).collect();
        let sizes: Vec<usize> = (0..count).map(|_| 1 + rng.below(4)).collect();
        shape[axis] = sizes.iter().sum();
        let p = Concatenation::new(elem_bytes, &shape, &sizes, axis as i32 - rank as i32)
            .expect("valid");
        let mut words = Vec::new();
        p.encode(&mut words);
        // Bytes of an input of extent `a` along the axis, per outer index and in all.
        let row = |a: usize| a * p.inner * elem_bytes;
        let slab = |a: usize| p.outer * row(a);
        let skips: Vec<usize> = (0..count).map(|_| 4 * rng.below(3)).collect();
        let lens: Vec<usize> = sizes
            .iter()
            .zip(&skips)
            .map(|(&a, &s)| s + slab(a))
            .collect();
        let inputs: Vec<Vec<u8>> = lens.iter().map(|&len| rng.bytes(len)).collect();
        let output = slab(p.output_axis());
        let lowered = module(Concatenation::KERNEL, &words, &lens, &skips, output);
        let what = format!("case {n} {p:?}");
        let got = agree(&mut device, &what, &lowered, &inputs, output);
        // Every byte is some input's (the local driver is the reference; this keeps the test
        // from passing on two equally wrong drivers).
        let mut expected = Vec::new();
        for k in 0..p.outer {
            for ((input, &a), &skip) in inputs.iter().zip(&sizes).zip(&skips) {
                expected.extend_from_slice(&input[skip + k * row(a)..skip + (k + 1) * row(a)]);
            }
        }
        assert_eq!(got, expected, "case {n}");
    }
}
