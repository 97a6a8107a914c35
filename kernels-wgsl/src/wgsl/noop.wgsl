// noop: does nothing (measures dispatch overhead).

@compute @workgroup_size(64, 1, 1)
fn main() {}
