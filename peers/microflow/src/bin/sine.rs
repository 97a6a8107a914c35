//! MicroFlow on `sine.tflite` (1 int8 in, 1 int8 out), checked against TFLM and timed.
#![no_std]
#![no_main]

use microflow::buffer::Buffer2D;
use microflow::model;
use microflow::tensor::Tensor2D;
use microflow_peer::oracle::sine as oracle;

// MicroFlow's macro reads the path relative to the compiler's working directory, which cargo
// sets to this crate (its own workspace root).
#[model("../../../shared/models/microflow/sine.tflite")]
struct Sine;

/// One inference: the int8 input as MicroFlow's tensor, `predict_inner` (the quantized
/// graph, int8 in and out: `predict_quantized` would only add a dequantization of the
/// output), and the int8 output back.
fn infer(input: &[u8], output: &mut [i8; oracle::OUT_LEN]) {
    let x = Tensor2D::new(
        Buffer2D::<i8, 1, { oracle::IN_LEN }>::from_fn(|_, j| input[j] as i8),
        [oracle::IN_SCALE],
        [oracle::IN_ZERO_POINT],
    );
    let y = Sine::predict_inner(x);
    for (j, o) in output.iter_mut().enumerate() {
        *o = y.buffer[(0, j)];
    }
}

#[cortex_m_rt::entry]
fn main() -> ! {
    let oracle = microflow_peer::Oracle {
        model: oracle::MODEL,
        names: &oracle::NAMES,
        inputs: oracle::INPUTS,
        outputs: oracle::OUTPUTS,
    };
    microflow_peer::run(&oracle, infer)
}
