// Shared by mean_s8 and mean_f32 (ember-kernels' `MeanShape`): build.rs appends this file
// to each. Parameter words: 0 rank (1..=6), 1..=rank the input's dimensions, then `axes`
// (bit `d`: dimension `d` is reduced); the kernel's own words follow.

fn mean_rank() -> u32 {
    return param(0u);
}

fn mean_dim(d: u32) -> u32 {
    return param(1u + d);
}

fn mean_reduced(d: u32) -> bool {
    return (param(1u + mean_rank()) & (1u << d)) != 0u;
}

// Input elements per output element (1 where no axis is reduced).
fn mean_count() -> u32 {
    var n = 1u;
    for (var d = 0u; d < mean_rank(); d++) {
        if mean_reduced(d) {
            n *= mean_dim(d);
        }
    }
    return n;
}

// Output elements: the product of the kept dimensions.
fn mean_outputs() -> u32 {
    var n = 1u;
    for (var d = 0u; d < mean_rank(); d++) {
        if !mean_reduced(d) {
            n *= mean_dim(d);
        }
    }
    return n;
}

// The input index of output `o`'s reduced element `j`, both in row-major order (over the
// kept and over the reduced dimensions), as the reference loops visit them.
fn mean_input_index(o: u32, j: u32) -> u32 {
    var rest_o = o;
    var rest_j = j;
    var index = 0u;
    var stride = 1u;
    for (var d = i32(mean_rank()) - 1; d >= 0; d--) {
        let n = mean_dim(u32(d));
        var i = 0u;
        if mean_reduced(u32(d)) {
            i = rest_j % n;
            rest_j = rest_j / n;
        } else {
            i = rest_o % n;
            rest_o = rest_o / n;
        }
        index += i * stride;
        stride *= n;
    }
    return index;
}
