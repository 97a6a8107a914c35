//! MicroFlow on `micro_speech_quantized.tflite` (TinyConv: 1×1960 int8 spectrogram in, 4
//! int8 scores out), checked against TFLM and timed.
#![no_std]
#![no_main]

use microflow::buffer::Buffer2D;
use microflow::model;
use microflow::tensor::Tensor2D;
use microflow_peer::oracle::micro_speech_quantized as oracle;

// MicroFlow's macro reads the path relative to the compiler's working directory, which cargo
// sets to this crate (its own workspace root).
#[model("../../../shared/models/tflm/micro_speech_quantized.tflite")]
struct Speech;

/// One inference: the int8 input as MicroFlow's tensor, `predict_inner` (the quantized
/// graph, int8 in and out: `predict_quantized` would only add a dequantization of the
/// output), and the int8 output back.
fn infer(input: &[u8], output: &mut [i8; oracle::OUT_LEN]) {
    let x = Tensor2D::new(
        Buffer2D::<i8, 1, { oracle::IN_LEN }>::from_fn(|_, j| input[j] as i8),
        [oracle::IN_SCALE],
        [oracle::IN_ZERO_POINT],
    );
    let y = Speech::predict_inner(x);
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
