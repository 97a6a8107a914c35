// space_batch: ember-kernels' `SpaceBatch` (TFLM's SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND on
// NHWC), elements of 1, 2 or 4 bytes (gather_bytes.wgsl moves them).
//
// Parameter words: 0 elem_bytes, 1 to_batch, 2 the pad byte, 3..=6 the input's dimensions,
// 7..=10 the output's, 11 and 12 the block's height and width, 13 and 14 the leading padding
// (or crop) of height and width.

fn output_elements() -> u32 {
    return param(7u) * param(8u) * param(9u) * param(10u);
}

// The input element under output element `e`, or -1 in the padding.
fn source_element(e: u32) -> i32 {
    let depth = param(10u);
    let channel = e % depth;
    let pixel = e / depth;
    let column = pixel % param(9u);
    let row = (pixel / param(9u)) % param(8u);
    let batch = pixel / (param(9u) * param(8u));
    let block_height = param(11u);
    let block_width = param(12u);
    let top = param(13u);
    let left = param(14u);
    var source_batch = 0u;
    var source_row = 0u;
    var source_column = 0u;
    if param(1u) == 1u {
        let in_batch = param(3u);
        let shift = batch / in_batch;
        let padded_row = row * block_height + shift / block_width;
        let padded_column = column * block_width + shift % block_width;
        if padded_row < top || padded_column < left {
            return -1;
        }
        source_row = padded_row - top;
        source_column = padded_column - left;
        if source_row >= param(4u) || source_column >= param(5u) {
            return -1;
        }
        source_batch = batch % in_batch;
    } else {
        let padded_row = row + top;
        let padded_column = column + left;
        let offset = (padded_row % block_height) * block_width + padded_column % block_width;
        source_batch = offset * param(7u) + batch;
        source_row = padded_row / block_height;
        source_column = padded_column / block_width;
    }
    return i32(((source_batch * param(4u) + source_row) * param(5u) + source_column) * depth + channel);
}

fn fill_byte(k: u32) -> u32 {
    return param(2u);
}
