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

#[test]
fn the_tuned_kernel_alone_refuses_what_it_does_not_take() {
    use super::Conv2dS8;
    use crate::scratch::Scratch;
    // An HWIO filter: the portable loops' layout, which the tuned kernel does not take.
    let p = Conv2dS8 {
        shape: Conv2dShape {
            input_depth: 2,
            filter_depth: 2,
            ..shape(4, 1, 4, 1, 0)
        },
        filter_hwio: true,
        input_offset: 3,
        output_offset: 0,
        act_min: -128,
        act_max: 127,
    };
    assert!(!p.tuned());
    let (input, filter) = ([1i8; 32], [1i8; 2]);
    let (bias, multipliers, shifts) = ([0i32; 1], [1 << 30; 1], [0i32; 1]);
    let mut output = [0i8; 16];
    let rows = 0..4;
    p.run_rows(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        rows.clone(),
        &mut output,
    )
    .expect("the portable loops take it");
    let refused = p.run_rows_tuned_in(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        rows,
        &mut output,
        &mut Scratch::none(),
    );
    assert!(refused.is_err());
    // Without the HWIO filter the tuned kernel takes it, alone, with the same result.
    let ohwi = Conv2dS8 {
        filter_hwio: false,
        ..p
    };
    assert!(ohwi.tuned());
    let mut portable = [0i8; 16];
    let mut alone = [0i8; 16];
    ohwi.run_rows_portable(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        0..4,
        &mut portable,
    )
    .expect("runs");
    ohwi.run_rows_tuned_in(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        0..4,
        &mut alone,
        &mut Scratch::none(),
    )
    .expect("runs");
    assert_eq!(alone, portable);
}
