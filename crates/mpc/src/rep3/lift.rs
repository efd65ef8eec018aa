//! Moving shares to a larger modulus (paper 000 section 5.1, Alg. 13 and 14).

use argus_math::{Modulus, Ring, Zt, Z16, Z32, Z64, Z8};

use super::convert::{bit_extract_sum, pow2_bits};
use super::ot::bit_inject_many;
use super::{Adder, Rep3, Rep3Bits};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// The modulus as a number (`None` for 2^128).
pub(crate) fn modulus_value(m: Modulus) -> Option<u128> {
    match m {
        Modulus::Pow2(k) if k < 128 => Some(1u128 << k),
        Modulus::Pow2(_) => None,
        Modulus::Int(t) => Some(t),
    }
}

/// ConstLift (Alg. 13): `[a]_c` to `[a·d]_{c·d}` locally, by multiplying every component by `d`
/// without reduction: `sum a_i·d = d·(a + j·c) ≡ d·a (mod c·d)`. `target` must be Z_{c·d}.
pub fn const_lift<R: Ring, T: Ring>(x: &Rep3<R>, d: u128, target: &T) -> Result<Rep3<T>> {
    let c = modulus_value(x.ring().modulus());
    let want = c.and_then(|c| c.checked_mul(d));
    if want.is_none() || want != modulus_value(target.modulus()) {
        return Err(MpcError::InvalidParameter(format!(
            "ConstLift by {d} from {} needs the target Z_(c·d), got {}",
            x.ring().modulus(),
            target.modulus()
        )));
    }
    let r = x.ring();
    let lift = |v: &[R::El]| v.iter().map(|&e| target.from_u128(r.to_u128(e) * d)).collect();
    Rep3::from_parts(target.clone(), lift(&x.a), lift(&x.b))
}

/// Lift (Alg. 14): `[x]_{2^k}` to `[x]_{2^{k+m}}`. The components summed without reduction give
/// `X = x + j·2^k` with `j < 3`; bits `k` and `k+1` of `X` (one adder run) are injected into
/// Z_{2^m} and scaled by ConstLift, so `x = X - 2^k·b_k - 2^{k+1}·b_{k+1}`.
pub fn lift<R: Ring, T: Ring>(p: &mut Party, x: &Rep3<R>, target: &T, adder: Adder) -> Result<Rep3<T>> {
    let k = pow2_bits(x.ring())?;
    let km = pow2_bits(target)?;
    if km <= k || km > 127 {
        return Err(MpcError::InvalidParameter(format!(
            "Lift from Z_2^{k} needs a target Z_2^(k+m), 0 < m, k+m < 128; got Z_2^{km}"
        )));
    }
    let m = km - k;
    let r = x.ring();
    let widen = |v: &[R::El]| v.iter().map(|&e| target.from_u128(r.to_u128(e))).collect();
    let big = Rep3::from_parts(target.clone(), widen(&x.a), widen(&x.b))?;
    let bits = bit_extract_sum(p, x, k as usize, &[k as usize, k as usize + 1], adder)?;
    // 2^{k+1}·b_{k+1} vanishes mod 2^{k+1} when m = 1: skip its injection then.
    let bits = if m >= 2 { &bits[..2] } else { &bits[..1] };
    // Machine-word rings where m allows (Z_2^16 → Z_2^32 is the iris case; b_{k+1} then goes
    // into Z_2^m too, one bit wider than it needs, to keep one fast element type), else Z_t with
    // b_{k+1} in Z_2^{m−1}.
    let carry = match m {
        8 => inject_carries(p, bits, Z8::new(), Z8::new(), k, target)?,
        16 => inject_carries(p, bits, Z16::new(), Z16::new(), k, target)?,
        32 => inject_carries(p, bits, Z32::new(), Z32::new(), k, target)?,
        64 => inject_carries(p, bits, Z64::new(), Z64::new(), k, target)?,
        _ => inject_carries(p, bits, Zt::pow2(m)?, Zt::pow2(m.saturating_sub(1).max(1))?, k, target)?,
    };
    big.sub(&carry)
}

/// `[2^k·b_k + 2^{k+1}·b_{k+1}]` in `target` = Z_{2^{k+m}}, the bits injected in one round trip:
/// b_k into `ring` = Z_2^m, b_{k+1} (if given) into `ring1` = Z_2^m or Z_2^{m−1}, then ConstLift.
fn inject_carries<S: Ring, T: Ring>(
    p: &mut Party,
    bits: &[Rep3Bits],
    ring: S,
    ring1: S,
    k: u32,
    target: &T,
) -> Result<Rep3<T>> {
    let inputs: Vec<_> = bits.iter().zip([ring.clone(), ring1.clone()]).collect();
    let mut injected = bit_inject_many(p, &inputs)?.into_iter();
    let b0 = injected.next().ok_or_else(|| MpcError::InvalidParameter("no bits to inject".into()))?;
    match injected.next() {
        None => const_lift(&b0, 1u128 << k, target),
        // Same ring: combine before the one ConstLift.
        Some(b1) if ring1.modulus() == ring.modulus() => {
            const_lift(&b0.add(&b1.mul_scalar(ring.from_u128(2)))?, 1u128 << k, target)
        }
        Some(b1) => const_lift(&b0, 1u128 << k, target)?.add(&const_lift(&b1, 1u128 << (k + 1), target)?),
    }
}
