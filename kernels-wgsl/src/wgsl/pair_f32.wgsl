// Shared by the float binary kernels (add_f32, mul_f32): build.rs appends this file to
// each. Their bindings, for both loops (zip_f32.wgsl, binary_f32.wgsl): two inputs, then
// the output.

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
