//! Moving shares to a larger modulus (paper 000 section 5.1, Alg. 13 and 14).

use argus_math::{Modulus, Ring, Zt};

use super::convert::{bit_extract_sum, pow2_bits};
use super::ot::bit_inject_many;
use super::{Adder, Rep3};
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
/// Z_{2^m} and Z_{2^{m-1}} and scaled by ConstLift, so `x = X - 2^k·b_k - 2^{k+1}·b_{k+1}`.
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
    let (bk, bk1) = (&bits[0], &bits[1]);
    // 2^{k+1}·b_{k+1} vanishes mod 2^{k+1} when m = 1: skip its injection then.
    let mut inputs = vec![(bk, Zt::pow2(m)?)];
    if m >= 2 {
        inputs.push((bk1, Zt::pow2(m - 1)?));
    }
    let injected = bit_inject_many(p, &inputs)?;
    let mut out = big.sub(&const_lift(&injected[0], 1u128 << k, target)?)?;
    if m >= 2 {
        out = out.sub(&const_lift(&injected[1], 1u128 << (k + 1), target)?)?;
    }
    Ok(out)
}
