//! MicroFlow on `person_detect.tflite` (MobileNet v1 0.25: 96×96×1 int8 image in, 2 int8
//! scores out), checked against TFLM and timed.
#![no_std]
#![no_main]

use microflow::buffer::Buffer2D;
use microflow::model;
use microflow::tensor::Tensor4D;
use microflow_peer::oracle::person_detect as oracle;

// MicroFlow's macro reads the path relative to the compiler's working directory, which cargo
// sets to this crate (its own workspace root).
#[model("../../../shared/models/tflm/person_detect.tflite")]
struct PersonDetect;

/// Rows and columns of the image (NHWC, one channel).
const SIDE: usize = 96;

/// One inference: the int8 NHWC image as MicroFlow's tensor, `predict_inner` (the
/// quantized graph, int8 in and out: `predict_quantized` would only add a dequantization of
/// the output), and the int8 output back.
fn infer(input: &[u8], output: &mut [i8; oracle::OUT_LEN]) {
    let x = Tensor4D::new(
        [Buffer2D::<[i8; 1], SIDE, SIDE>::from_fn(|r, c| {
            [input[r * SIDE + c] as i8]
        })],
        [oracle::IN_SCALE],
        [oracle::IN_ZERO_POINT],
    );
    let y = PersonDetect::predict_inner(x);
    for (j, o) in output.iter_mut().enumerate() {
        *o = y.buffer[(0, j)];
    }
}

#[cortex_m_rt::entry]
fn main() -> ! {
    const _: () = assert!(oracle::IN_LEN == SIDE * SIDE);
    let oracle = microflow_peer::Oracle {
        model: oracle::MODEL,
        names: &oracle::NAMES,
        inputs: oracle::INPUTS,
        outputs: oracle::OUTPUTS,
    };
    microflow_peer::run(&oracle, infer)
}
