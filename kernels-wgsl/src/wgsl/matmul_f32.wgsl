// matmul_f32: C = A·B (M×K times K×N, row-major), then + bias[j] if flags bit 0, then ReLU
// if flags bit 1. As in hal-local, C is split into tiles of 4 rows × 16 columns numbered
// row-major, and each workgroup computes its share of the tiles; each of the 64 lanes owns
// one element of the tile. Every element is the sum over k in increasing order, in f32, of
// A[i][k] * B[k][j] starting from 0.0 (each product and sum rounded on its own), then the
// bias, then ReLU: hal-local's order.
//
// K is walked in chunks of 64: the workgroup first loads the tile's 4 × 64 slice of A and
// 64 × 16 slice of B into workgroup memory, every lane issuing its loads at once, then each
// lane sums its chunk from there. A lane's sum would otherwise wait for one load from device
// memory per step of K; the order of the sum is unchanged.

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;

const TILE_M: u32 = 4u;
const TILE_N: u32 = 16u;
const FLAG_BIAS: u32 = 1u;
const FLAG_RELU: u32 = 2u;
const CHUNK_K: u32 = 64u;

var<workgroup> a_tile: array<f32, 256>; // TILE_M × CHUNK_K
var<workgroup> b_tile: array<f32, 1024>; // CHUNK_K × TILE_N

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let m = param(0u);
    let k = param(1u);
    let n = param(2u);
    let flags = param(3u);
    let tiles_n = (n + TILE_N - 1u) / TILE_N;
    let tiles = ((m + TILE_M - 1u) / TILE_M) * tiles_n;
    let share = share_of(tiles, id, count);
    let row_in_tile = lane / TILE_N;
    let col_in_tile = lane % TILE_N;
    for (var tile = share.start; tile < share.end; tile += 1u) {
        let row0 = (tile / tiles_n) * TILE_M;
        let col0 = (tile % tiles_n) * TILE_N;
        let row = row0 + row_in_tile;
        let col = col0 + col_in_tile;
        let inside = row < m && col < n;
        var acc = 0.0;
        for (var k0 = 0u; k0 < k; k0 += CHUNK_K) {
            let kn = min(CHUNK_K, k - k0);
            // Every lane is done reading the previous chunk.
            workgroupBarrier();
            for (var i = lane; i < TILE_M * CHUNK_K; i += 64u) {
                let r = i / CHUNK_K;
                let kk = i % CHUNK_K;
                if row0 + r < m && kk < kn {
                    a_tile[i] = a[base_word(0u) + (row0 + r) * k + k0 + kk];
                }
            }
            for (var i = lane; i < CHUNK_K * TILE_N; i += 64u) {
                let kk = i / TILE_N;
                let c = i % TILE_N;
                if kk < kn && col0 + c < n {
                    b_tile[i] = b[base_word(1u) + (k0 + kk) * n + col0 + c];
                }
            }
            workgroupBarrier();
            if inside {
                for (var kk = 0u; kk < kn; kk += 1u) {
                    acc = acc + a_tile[row_in_tile * CHUNK_K + kk] * b_tile[kk * TILE_N + col_in_tile];
                }
            }
        }
        if inside {
            if (flags & FLAG_BIAS) != 0u {
                acc = acc + bias[base_word(3u) + col];
            }
            var bits = bitcast<u32>(acc);
            if (flags & FLAG_RELU) != 0u {
                bits = relu_bits(bits);
            }
            c[base_word(2u) + row * n + col] = bitcast<f32>(bits);
        }
    }
}
