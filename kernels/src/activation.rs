//! Fused activations: TFLite's `ActivationFunctionType` and the clamp ranges TFLM derives
//! from it (`CalculateActivationRange` for floats, `CalculateActivationRangeQuantized` for
//! quantized outputs). Host side: the importer turns an op's activation into the clamp
//! range its kernel's parameters carry.

use hal_core::kernel::KernelError;

/// A fused activation, as TFLite's schema numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `NONE` (0): no clamp beyond the type's range.
    None,
    /// `RELU` (1): `[0, ∞)`.
    Relu,
    /// `RELU_N1_TO_1` (2): `[-1, 1]`.
    ReluN1To1,
    /// `RELU6` (3): `[0, 6]`.
    Relu6,
}

impl Activation {
    /// The activation from its schema code; `None` for codes TFLM's kernels here do not
    /// fuse (`TANH`, `SIGN_BIT`, unknown).
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::None),
            1 => Some(Self::Relu),
            2 => Some(Self::ReluN1To1),
            3 => Some(Self::Relu6),
            _ => None,
        }
    }

    /// The float clamp range, as TFLM's `CalculateActivationRange<float>`: `NONE` is
    /// `[-f32::MAX, f32::MAX]`, `RELU` `[0, f32::MAX]`.
    pub fn range_f32(self) -> (f32, f32) {
        match self {
            Self::None => (f32::MIN, f32::MAX),
            Self::Relu => (0.0, f32::MAX),
            Self::Relu6 => (0.0, 6.0),
            Self::ReluN1To1 => (-1.0, 1.0),
        }
    }

    /// The quantized clamp range for an output of scale `scale` and zero point
    /// `zero_point` whose type spans `[qmin, qmax]`, as TFLM's
    /// `CalculateActivationRangeQuantizedImpl`: each bound `zero_point + round(f / scale)`
    /// in `f32` (half away from zero), intersected with `[qmin, qmax]`. Refuses a bound
    /// whose rounded quotient leaves `i32` (TFLM fails Prepare there).
    pub fn range_quantized(
        self,
        scale: f32,
        zero_point: i32,
        qmin: i32,
        qmax: i32,
    ) -> Result<(i32, i32), KernelError> {
        let q = |f: f32| -> Result<i32, KernelError> {
            let t = libm::roundf(f / scale);
            // `t <= (float)INT32_MAX` with `(float)INT32_MAX == 2^31`, as TFLM compares.
            if !(t >= i32::MIN as f32 && t <= i32::MAX as f32) {
                return Err(KernelError::Shape("activation bound overflows int32"));
            }
            // TFLM's `static_cast<int32_t>(tmp)` of 2^31 is out of range; saturate.
            Ok(zero_point.wrapping_add(t as i32))
        };
        match self {
            Self::None => Ok((qmin, qmax)),
            Self::Relu => Ok((qmin.max(q(0.0)?), qmax)),
            Self::Relu6 => Ok((qmin.max(q(0.0)?), qmax.min(q(6.0)?))),
            Self::ReluN1To1 => Ok((qmin.max(q(-1.0)?), qmax.min(q(1.0)?))),
        }
    }

    /// [`range_quantized`](Self::range_quantized) for an int8 output (`[-128, 127]`).
    pub fn range_s8(self, scale: f32, zero_point: i32) -> Result<(i32, i32), KernelError> {
        self.range_quantized(scale, zero_point, -128, 127)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_ranges() {
        assert_eq!(Activation::None.range_s8(0.1, 3).unwrap(), (-128, 127));
        assert_eq!(Activation::Relu.range_s8(0.1, -5).unwrap(), (-5, 127));
        // 6 / 0.05 = 120 → 120 - 10 = 110.
        assert_eq!(Activation::Relu6.range_s8(0.05, -10).unwrap(), (-10, 110));
        // 6 / 0.01 = 600: clamped to 127.
        assert_eq!(Activation::Relu6.range_s8(0.01, 0).unwrap(), (0, 127));
        // ±1 / 0.4 = ±2.5 → ±3 (half away from zero).
        assert_eq!(Activation::ReluN1To1.range_s8(0.4, 1).unwrap(), (-2, 4));
        assert!(Activation::Relu6.range_s8(1e-30, 0).is_err());
        assert_eq!(Activation::from_code(3), Some(Activation::Relu6));
        assert_eq!(Activation::from_code(4), None);
        assert_eq!(Activation::Relu.range_f32(), (0.0, f32::MAX));
    }
}
