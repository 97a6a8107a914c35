use super::Conv2dShape;
use crate::padding::Window;

fn shape(input: usize, filter: usize, output: usize, stride: usize, pad: usize) -> Conv2dShape {
    Conv2dShape {
        batches: 1,
        input_height: input,
        input_width: input,
        input_depth: 1,
        filter_height: filter,
        filter_width: filter,
        filter_depth: 1,
        output_height: output,
        output_width: output,
        output_depth: 1,
        window: Window {
            stride_height: stride,
            stride_width: stride,
            dilation_height: 1,
            dilation_width: 1,
            pad_height: pad,
            pad_width: pad,
        },
        has_bias: false,
    }
}

#[test]
fn taps_inside_the_input() {
    // 1×1 and VALID windows never leave the input.
    assert!(shape(8, 1, 8, 1, 0).taps_inside_input());
    assert!(shape(8, 3, 6, 1, 0).taps_inside_input());
    assert!(shape(9, 3, 4, 2, 0).taps_inside_input());
    // Padding, or an output grid whose last window runs past the edge (SAME, stride 2,
    // even input: padding only below and right).
    assert!(!shape(8, 3, 8, 1, 1).taps_inside_input());
    assert!(!shape(8, 3, 4, 2, 0).taps_inside_input());
}
