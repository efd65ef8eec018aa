//! Fixed-point numbers as Catrina and Saxena represent them (paper 002, section 2.1): `x` is the
//! signed mantissa `v = round(x·2^f)` with precision `f`, bounded by `2^(l−1)` (`l = 40` in the
//! paper), encoded in F_q as `v mod q`. Sums are sums of mantissas; a product's mantissa has
//! `2f` fractional bits and `2l` bits, and [`trunc_pr`] takes `f` of them off ([`mul`]).

use argus_math::{Field, Fp, Ring};

use super::{check_len, Abb, Bitwise, Circuit, Mask};
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

/// The mask of [`trunc_pr`] for `n` values of `k` signed bits losing `m` bits: `m` random bits
/// below a statistical mask of `k + κ − m` bits. Made before the inputs; nothing announced.
pub fn truncation_mask<A: Abb>(abb: &mut A, n: usize, k: u32, m: u32, kappa: u32) -> Result<Mask<A>> {
    if m == 0 || m >= k {
        return Err(MpcError::InvalidParameter(format!("truncating {m} bits of {k}-bit values: need 0 < m < k")));
    }
    // a mod 2^m mask whose comparison is never run
    Mask::with_low_bits(abb, n, k, m, kappa, Bitwise::Arithmetic(Circuit::AndNot))
}

/// `x / 2^m` rounded probabilistically (Catrina and Saxena's TruncPr): up with probability
/// `(x mod 2^m)/2^m`, so exact when `2^m` divides `x`, else `⌊x/2^m⌋` or one more. For `k`-bit
/// signed `x`, open `a = 2^(k−1) + x + r' + 2^m·r''` and take `x' = (a mod 2^m) − r'` as the
/// low part (`x mod 2^m`, or that minus `2^m` when the masked sum carried): `(x − x')/2^m`.
/// One round. `mask` from [`truncation_mask`].
pub fn trunc_pr<A: Abb>(abb: &mut A, x: &A::Arith, mask: &Mask<A>) -> Result<A::Arith> {
    check_len(mask.n, x, abb)?;
    let m = mask.m;
    let a = abb.open(&abb.add(x, &mask.pad)?)?;
    let low: Vec<u128> = a.iter().map(|&a| a & ((1 << m) - 1)).collect();
    let low = abb.sub(&abb.constant(&low), &mask.low)?;
    let f = *abb.field();
    let inv = f.inv(f.from_u128(1 << m)).expect("2^m is invertible mod an odd prime");
    Ok(abb.scale(&abb.sub(x, &low)?, inv))
}

/// The fixed-point product at precision `f`: the mantissas' product (one Beaver or Shamir
/// product), truncated by `f` bits ([`trunc_pr`] with a mask of `2l` bits and `m = f`). Two
/// rounds.
pub fn mul<A: Abb>(abb: &mut A, x: &A::Arith, y: &A::Arith, mask: &Mask<A>) -> Result<A::Arith> {
    let xy = abb.mul(x, y)?;
    trunc_pr(abb, &xy, mask)
}
