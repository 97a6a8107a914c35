// Shared by batch_matmul_s8 and batch_matmul_f32: build.rs appends this file to each. Where
// output element `e` reads its operands: ember-kernels' `BatchMatmulShape`, a broadcast
// batch dimension not advancing, an adjoint operand read in place through its strides.
//
// Parameter words: 0..=2 the lhs's batch dimensions, 3..=5 the rhs's, 6 rows, 7 cols,
// 8 depth, 9 adj_x, 10 adj_y.

// The first lhs and rhs elements of an output's sum and their steps along `depth`.
struct At {
    l: u32,
    r: u32,
    l_k: u32,
    r_k: u32,
}

// Batch index `b` along a dimension of `d`: 0 where the operand broadcasts it.
fn batch_pick(d: u32, b: u32) -> u32 {
    return select(b, 0u, d == 1u);
}

fn batch_matmul_at(e: u32) -> At {
    let rows = param(6u);
    let cols = param(7u);
    let depth = param(8u);
    let o1 = max(param(1u), param(4u));
    let o2 = max(param(2u), param(5u));
    let matrix = e / (rows * cols);
    let within = e % (rows * cols);
    let i = within / cols;
    let j = within % cols;
    let b2 = matrix % o2;
    let b1 = (matrix / o2) % o1;
    let b0 = matrix / (o2 * o1);
    let lb = (batch_pick(param(0u), b0) * param(1u) + batch_pick(param(1u), b1)) * param(2u)
        + batch_pick(param(2u), b2);
    let rb = (batch_pick(param(3u), b0) * param(4u) + batch_pick(param(4u), b1)) * param(5u)
        + batch_pick(param(5u), b2);
    var at: At;
    if param(9u) != 0u {
        // lhs stored [depth, rows].
        at.l = lb * rows * depth + i;
        at.l_k = rows;
    } else {
        at.l = lb * rows * depth + i * depth;
        at.l_k = 1u;
    }
    if param(10u) != 0u {
        // rhs stored [cols, depth].
        at.r = rb * depth * cols + j * depth;
        at.r_k = 1u;
    } else {
        at.r = rb * depth * cols + j;
        at.r_k = cols;
    }
    return at;
}

// The output's element count.
fn batch_matmul_len() -> u32 {
    let o0 = max(param(0u), param(3u));
    let o1 = max(param(1u), param(4u));
    let o2 = max(param(2u), param(5u));
    return o0 * o1 * o2 * param(6u) * param(7u);
}
