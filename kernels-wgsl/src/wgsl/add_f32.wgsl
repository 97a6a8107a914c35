// add_f32: out[i] = a[i] + b[i]. zip_f32.wgsl holds the bindings and the loop.

fn combine(x: f32, y: f32) -> f32 {
    return x + y;
}
