// hal-local's ReLU (`if x <= 0.0 { 0.0 } else { x }`) on the bits: negatives, -0.0 and
// -inf become +0.0, NaN and everything positive pass through unchanged (payload included),
// independent of how the device treats subnormals.
fn relu_bits(u: u32) -> u32 {
    if (u & 0x7fffffffu) > 0x7f800000u {
        return u;
    }
    return select(u, 0u, u >= 0x80000000u);
}
