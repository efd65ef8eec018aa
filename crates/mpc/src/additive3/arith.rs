//! Mult (Alg. 2), dot and matrix products.
//!
//! Alg. 2 reshares both operands (free here: a zero-sharing), sends `u'_i, v'_i` to the next
//! party and computes `w_i = u'_i v'_i + u'_i v'_{i-1} + u'_{i-1} v'_i`: after the send every
//! party holds the replicated sharing of both operands, and `w_i` is the replicated scheme's local
//! product. So a product costs one round and two elements per party (the paper's 15n bits for
//! three parties become 6n), and dot and matrix products reuse the replicated kernels: once the
//! operands are replicated, a dot product of any length is local.

use argus_math::Ring;

use super::Add3;
use crate::error::Result;
use crate::party::Party;
use crate::rep3::{self, Rep3, Rep3Pre};

/// `x ⊙ y` (Alg. 2): one round, two elements per value per party.
pub fn mul<R: Ring>(p: &mut Party, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
    Ok(mul_many(p, &[(x, y)])?.pop().expect("one pair"))
}

/// Several products in one round (one message per party).
pub fn mul_many<R: Ring>(p: &mut Party, pairs: &[(&Add3<R>, &Add3<R>)]) -> Result<Vec<Add3<R>>> {
    let Some((first, _)) = pairs.first() else { return Ok(Vec::new()) };
    let ring = first.ring().clone();
    let mut parts = Vec::with_capacity(2 * pairs.len());
    for (x, y) in pairs {
        x.check_compatible(y)?;
        if x.ring() != first.ring() {
            return Err(crate::MpcError::RingMismatch { left: first.ring().modulus(), right: x.ring().modulus() });
        }
        parts.push(x.x.clone());
        parts.push(y.x.clone());
    }
    let reps = rep3::reshare_parts(p, &ring, parts)?;
    Ok(reps.chunks_exact(2).map(|xy| local_product(&xy[0], &xy[1])).collect())
}

/// Dot products of the `len`-long rows of `x` and `y`, row by row: the operands are replicated
/// (one round, one element per input value), then each row is two plain dot products (paper 000
/// eq. 6), local.
pub fn dot<R: Ring>(p: &mut Party, x: &Add3<R>, y: &Add3<R>, len: usize) -> Result<Add3<R>> {
    x.check_compatible(y)?;
    let rows = rep3::rows_of(x.len(), len)?;
    let reps = rep3::reshare_parts(p, x.ring(), vec![x.x.clone(), y.x.clone()])?;
    let (xp, yp) = (Rep3Pre::new(&reps[0]), Rep3Pre::new(&reps[1]));
    let r = x.ring();
    let z = (0..rows)
        .map(|k| {
            let s = k * len..(k + 1) * len;
            r.sub(r.dot(&xp.sum[s.clone()], &yp.sum[s.clone()]), r.dot(&xp.b[s.clone()], &yp.b[s]))
        })
        .collect();
    Ok(Add3::new(r.clone(), z))
}

/// Every dot product between the `len`-long rows of `x` and of `y` (`out[i·rows_y + j]`): both
/// are replicated (one round, one element per input value), then two plain matrix products.
pub fn matmul<R: Ring>(p: &mut Party, x: &Add3<R>, y: &Add3<R>, len: usize) -> Result<Add3<R>> {
    if x.ring() != y.ring() {
        x.check_compatible(y)?;
    }
    rep3::rows_of(x.len(), len)?;
    rep3::rows_of(y.len(), len)?;
    let reps = rep3::reshare_parts(p, x.ring(), vec![x.x.clone(), y.x.clone()])?;
    let z = rep3::matmul_local(&Rep3Pre::new(&reps[0]), &Rep3Pre::new(&reps[1]), len)?;
    Ok(Add3::new(x.ring().clone(), z))
}

/// This party's component of the product of two replicated sharings (paper 000 eq. 4, without
/// the reshare): `x_i (y_i + y_{i-1}) + x_{i-1} y_i`.
pub(crate) fn local_product<R: Ring>(x: &Rep3<R>, y: &Rep3<R>) -> Add3<R> {
    let r = x.ring();
    let z =
        x.a.iter()
            .zip(&x.b)
            .zip(y.a.iter().zip(&y.b))
            .map(|((&xa, &xb), (&ya, &yb))| r.add(r.mul(xa, r.add(ya, yb)), r.mul(xb, ya)));
    Add3::new(r.clone(), z.collect())
}
