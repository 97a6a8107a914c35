use super::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use crate::padding::Window;

/// A 1×1 filter over a 1×1 image padded by one all round: eight of the nine outputs read
/// no tap at all (every tap lies before or after the image). The tuned kernel writes their
/// bias alone, as the portable loops do.
#[test]
fn windows_wholly_in_the_padding_write_the_bias() {
    let params = DepthwiseConv2dS8 {
        shape: DepthwiseConv2dShape {
            batches: 1,
            input_height: 1,
            input_width: 1,
            input_depth: 4,
            depth_multiplier: 1,
            filter_height: 1,
            filter_width: 1,
            output_height: 3,
            output_width: 3,
            window: Window {
                stride_height: 1,
                stride_width: 1,
                dilation_height: 1,
                dilation_width: 1,
                pad_height: 1,
                pad_width: 1,
            },
            has_bias: true,
        },
        input_offset: 3,
        output_offset: -2,
        act_min: -128,
        act_max: 127,
    };
    let (input, filter) = ([5i8, -6, 7, -8], [2i8, 3, -4, 5]);
    let bias = [10, -20, 30, -40];
    let (multipliers, shifts) = ([1 << 30; 4], [0; 4]);
    let mut tuned = [0i8; 36];
    let mut portable = [0i8; 36];
    let rows = 0..3;
    params
        .run_rows(
            &input,
            &filter,
            &bias,
            &multipliers,
            &shifts,
            rows.clone(),
            &mut tuned,
        )
        .unwrap();
    params
        .run_rows_portable(
            &input,
            &filter,
            &bias,
            &multipliers,
            &shifts,
            rows,
            &mut portable,
        )
        .unwrap();
    assert_eq!(tuned, portable);
    // A corner: the bias halved (multiplier one half), then the output offset.
    assert_eq!(tuned[..4], [3, -12, 13, -22]);
    // The centre reads the one pixel: (x + 3) * w + bias, halved, offset.
    let centre: [i8; 4] = core::array::from_fn(|c| {
        let sum = (i32::from(input[c]) + 3) * i32::from(filter[c]) + bias[c];
        ((sum + 1).div_euclid(2) - 2) as i8
    });
    assert_eq!(tuned[16..20], centre);
}

/// The register-blocked kernel takes every depth multiplier (1: blocks of four channels
/// and single channels after them; 4: blocks sharing an input value; 3: single channels),
/// windows past the image's edges included, and equals the portable loops: the host's tuned
/// check would pass on the portable loops alone had it declined.
#[test]
fn the_blocked_kernel_takes_every_depth_multiplier() {
    use super::blocked;
    use crate::quant::OutputStageS8;
    use crate::scratch::Scratch;
    for (depth, multiplier) in [(7, 1), (2, 4), (3, 3)] {
        let channels = depth * multiplier;
        let params = DepthwiseConv2dS8 {
            shape: DepthwiseConv2dShape {
                batches: 1,
                input_height: 5,
                input_width: 4,
                input_depth: depth,
                depth_multiplier: multiplier,
                filter_height: 3,
                filter_width: 3,
                output_height: 3,
                output_width: 2,
                window: Window {
                    stride_height: 2,
                    stride_width: 2,
                    dilation_height: 1,
                    dilation_width: 1,
                    pad_height: 1,
                    pad_width: 1,
                },
                has_bias: true,
            },
            input_offset: 5,
            output_offset: 4,
            act_min: -128,
            act_max: 127,
        };
        let input: alloc::vec::Vec<i8> = (0..5 * 4 * depth).map(|i| (i * 53 % 249) as i8).collect();
        let filter: alloc::vec::Vec<i8> = (0..9 * channels).map(|i| (i * 29 % 241) as i8).collect();
        let bias: alloc::vec::Vec<i32> = (0..channels as i32).map(|k| 300 * k - 900).collect();
        let multipliers: alloc::vec::Vec<i32> = (0..channels as i32)
            .map(|k| (1 << 30) + k * 7_777_777)
            .collect();
        let shifts: alloc::vec::Vec<i32> = (0..channels as i32).map(|k| k % 2 - 7).collect();
        let stage = OutputStageS8 {
            bias: &bias,
            has_bias: true,
            multipliers: &multipliers,
            shifts: &shifts,
            per_channel: true,
            output_offset: 4,
            act_min: -128,
            act_max: 127,
        };
        let mut tuned = alloc::vec![0i8; 6 * channels];
        let rows = 0..3;
        let mut scratch = Scratch::none();
        let taken = blocked::run_rows(
            &params,
            &input,
            &filter,
            &stage,
            rows.clone(),
            &mut tuned,
            &mut scratch,
        );
        assert!(taken);
        let mut portable = alloc::vec![0i8; 6 * channels];
        params
            .run_rows_portable(
                &input,
                &filter,
                &bias,
                &multipliers,
                &shifts,
                rows,
                &mut portable,
            )
            .expect("runs");
        assert_eq!(tuned, portable, "multiplier {multiplier}");
        assert!(tuned.iter().any(|&v| v != tuned[0]));
    }
}
