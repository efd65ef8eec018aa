//! Fixed-point numbers as Catrina and Saxena represent them (paper 002, section 2.1): `x` is the
//! signed mantissa `v = round(x·2^f)` with precision `f`, bounded by `2^(l−1)` (`l = 40` in the
//! paper), encoded in F_q as `v mod q`.

use argus_math::{Fp, Ring};

use crate::error::{MpcError, Result};

/// The mantissa bound's bits the paper takes.
pub const MANTISSA_BITS: u32 = 40;

/// `v mod q` for a signed `v`.
pub fn embed(field: &Fp, v: i128) -> u128 {
    field.from_i128(v)
}

/// The signed value of a field element in the centred interval `[−(q−1)/2, (q−1)/2]`.
pub fn signed(field: &Fp, x: u128) -> i128 {
    let q = field.p();
    if x > q / 2 {
        -((q - x) as i128)
    } else {
        x as i128
    }
}

/// The mantissa of `x` at precision `f`, or an error naming the value if it is not finite or
/// does not fit `bits` signed bits.
pub fn encode(x: f64, f: u32, bits: u32) -> Result<i128> {
    let v = (x * (f as f64).exp2()).round();
    let bound = ((bits - 1) as f64).exp2();
    if !v.is_finite() || v < -bound || v >= bound {
        return Err(MpcError::InvalidParameter(format!(
            "{x} is outside the {bits}-bit fixed-point range at precision {f} ([−{}, {}))",
            bound / (f as f64).exp2(),
            bound / (f as f64).exp2()
        )));
    }
    Ok(v as i128)
}

/// The number a mantissa stands for at precision `f`.
pub fn decode(v: i128, f: u32) -> f64 {
    v as f64 / (f as f64).exp2()
}
