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
    // An input offset wider than the Cortex-M4 kernel's 16-bit lanes: it does not take it
    // (nor, over an OHWI filter, does the register-blocked kernel).
    let p = Conv2dS8 {
        shape: Conv2dShape {
            input_depth: 2,
            filter_depth: 2,
            ..shape(4, 1, 4, 1, 0)
        },
        filter_hwio: false,
        input_offset: 200,
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
    // With a narrow offset the tuned kernel takes it, alone, with the same result.
    let ohwi = Conv2dS8 {
        input_offset: 3,
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

/// A patch over the Cortex-M4 kernel's stack limit (3×3 over 32 channels, 288 values) runs
/// in the scratch a program lends it, equal to the portable loops; lent none, the tuned
/// kernel alone refuses it rather than widen it on the stack.
#[test]
fn a_patch_over_the_stack_limit_runs_in_lent_scratch() {
    use super::{Conv2dS8, MAX_STACK_PATCH, MAX_TUNED_PATCH};
    use crate::scratch::Scratch;
    let depth = 32;
    let p = Conv2dS8 {
        shape: Conv2dShape {
            input_depth: depth,
            filter_depth: depth,
            output_depth: 3,
            ..shape(4, 3, 4, 1, 1)
        },
        filter_hwio: false,
        input_offset: 5,
        output_offset: -3,
        act_min: -128,
        act_max: 127,
    };
    let (groups, bytes) = p.tuned_scratch();
    assert!(MAX_STACK_PATCH < bytes && bytes <= MAX_TUNED_PATCH && groups == bytes / 4);
    let value = |k: usize, m: usize| ((k * 37 + m) % 251) as i8;
    let input: [i8; 16 * 32] = core::array::from_fn(|k| value(k, 7));
    let filter: [i8; 3 * 9 * 32] = core::array::from_fn(|k| value(k, 3));
    let (bias, multipliers, shifts) = (
        [100, -7, 0],
        [1 << 30, 1_500_000_000, 1 << 30],
        [-9, -8, -10],
    );
    let mut portable = [0i8; 48];
    p.run_rows_portable(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        0..4,
        &mut portable,
    )
    .expect("runs");
    let mut alone = [0i8; 48];
    let refused = p.run_rows_tuned_in(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        0..4,
        &mut alone,
        &mut Scratch::none(),
    );
    assert!(refused.is_err());
    let mut group_words = [[0u32; 4]; 72];
    let mut staging = [0i8; 288];
    let mut scratch = Scratch {
        groups: &mut group_words[..groups],
        bytes: &mut staging[..bytes],
    };
    p.run_rows_tuned_in(
        &input,
        &filter,
        &bias,
        &multipliers,
        &shifts,
        0..4,
        &mut alone,
        &mut scratch,
    )
    .expect("runs in the lent scratch");
    assert_eq!(alone, portable);
}

/// The register-blocked kernel takes an HWIO filter, with and without an input
/// offset (its two block widths) and with channels past the last whole block, and equals
/// the portable loops: the host's tuned check would pass on the portable loops alone had
/// it declined.
#[test]
fn the_blocked_kernel_takes_hwio_filters() {
    use super::{blocked, Conv2dS8};
    use crate::quant::OutputStageS8;
    use crate::scratch::Scratch;
    let od = 11;
    for input_offset in [0, 7] {
        let p = Conv2dS8 {
            shape: Conv2dShape {
                input_depth: 3,
                filter_depth: 3,
                output_depth: od,
                has_bias: true,
                ..shape(5, 3, 5, 1, 1)
            },
            filter_hwio: true,
            input_offset,
            output_offset: -3,
            act_min: -100,
            act_max: 120,
        };
        let input: alloc::vec::Vec<i8> = (0..75).map(|i| (i * 37 % 251) as i8).collect();
        let filter: alloc::vec::Vec<i8> = (0..27 * od).map(|i| (i * 91 % 253) as i8).collect();
        let bias: alloc::vec::Vec<i32> = (0..od as i32).map(|k| k * 1000 - 4000).collect();
        let multipliers: alloc::vec::Vec<i32> =
            (0..od as i32).map(|k| (1 << 30) + k * 9_999_991).collect();
        let shifts: alloc::vec::Vec<i32> = (0..od as i32).map(|k| k % 3 - 9).collect();
        let stage = OutputStageS8 {
            bias: &bias,
            has_bias: true,
            multipliers: &multipliers,
            shifts: &shifts,
            per_channel: true,
            output_offset: -3,
            act_min: -100,
            act_max: 120,
        };
        let mut tuned = alloc::vec![0i8; 25 * od];
        let taken = blocked::run_rows(
            &p,
            &input,
            &filter,
            &stage,
            0..5,
            &mut tuned,
            &mut Scratch::none(),
        );
        assert!(taken);
        let mut portable = alloc::vec![0i8; 25 * od];
        p.run_rows_portable(
            &input,
            &filter,
            &bias,
            &multipliers,
            &shifts,
            0..5,
            &mut portable,
        )
        .expect("runs");
        assert_eq!(tuned, portable, "input offset {input_offset}");
        assert!(tuned.iter().any(|&v| v != tuned[0]));
    }
}
