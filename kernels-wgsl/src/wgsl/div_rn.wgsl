// Shared by the float kernels that divide as the reference does: build.rs appends this file
// to each (average_pool2d_f32, quantize_f32_s8).

// `a / b` correctly rounded, as the reference's `f32` division: Vulkan only bounds OpFDiv
// to 2.5 ulp, so the quotient is corrected once by its exact remainder (`a - q b` by
// Dekker's two-product), where every value is far from overflow and underflow.
fn div_rn(a: f32, b: f32) -> f32 {
    let q = a / b;
    let big = 1.0e30f;
    let small = 1.0e-30f;
    let qa = abs(q);
    let ba = abs(b);
    if !(qa < big && qa > small && ba < big && ba > small) {
        return q;
    }
    let p = q * b;
    let x = q;
    let cx = 4097.0f * x;
    let xh = cx - (cx - x);
    let xl = x - xh;
    let cy = 4097.0f * b;
    let yh = cy - (cy - b);
    let yl = b - yh;
    let e = (((xh * yh - p) + xh * yl) + xl * yh) + xl * yl;
    let r = (a - p) - e;
    return q + r / b;
}
