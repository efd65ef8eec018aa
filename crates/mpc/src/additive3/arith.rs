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
use crate::rep3::{self, Rep3Pre};

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
        parts.push(&x.x[..]);
        parts.push(&y.x[..]);
    }
    let passed = Passed::new(p, &ring, &parts)?;
    (0..pairs.len()).map(|k| passed.product(&ring, 2 * k, 2 * k + 1)).collect()
}

/// Vectors re-randomised by fresh zero-sharings and passed to the next party in one message
/// (Alg. 2 lines 3–5): this party's components (`own`) and, read from the message in place where
/// the ring allows, the previous party's.
pub(crate) struct Passed<R: Ring> {
    /// This party's re-randomised components, one vector per part.
    pub(crate) own: Vec<Vec<R::El>>,
    got: Vec<u8>,
    at: Vec<usize>,
    peer: usize,
}

impl<R: Ring> Passed<R> {
    pub(crate) fn new(p: &mut Party, ring: &R, parts: &[&[R::El]]) -> Result<Self> {
        let mut own = Vec::with_capacity(parts.len());
        let mut at = Vec::with_capacity(parts.len() + 1);
        let mut msg = Vec::with_capacity(parts.iter().map(|x| ring.wire_len(x.len())).sum());
        for x in parts {
            let mut o = x.to_vec();
            p.prg.add_zero_share(ring, &mut o);
            at.push(msg.len());
            ring.wire_encode(&o, &mut msg);
            own.push(o);
        }
        at.push(msg.len());
        let peer = p.prev();
        let got = p.pass_next(msg)?;
        if got.len() != *at.last().expect("an end") {
            return Err(crate::MpcError::Malformed {
                peer,
                reason: format!(
                    "expected {} bytes of products' operands, got {}",
                    at.last().expect("an end"),
                    got.len()
                ),
            });
        }
        Ok(Passed { own, got, at, peer })
    }
    /// This party's component of the product of parts `x` and `y`, now replicated (paper 000
    /// eq. 4 without the reshare): `x_i (y_i + y_{i-1}) + x_{i-1} y_i`.
    pub(crate) fn product(&self, ring: &R, x: usize, y: usize) -> Result<Add3<R>> {
        let (xa, ya) = (&self.own[x], &self.own[y]);
        let (xb, yb) = (self.prev(ring, x)?, self.prev(ring, y)?);
        let z = xa
            .iter()
            .zip(ya.iter())
            .zip(xb.iter().zip(yb.iter()))
            .map(|((&xa, &ya), (&xb, &yb))| ring.add(ring.mul(xa, ring.add(ya, yb)), ring.mul(xb, ya)))
            .collect();
        Ok(Add3::new(ring.clone(), z))
    }
    /// The previous party's component of part `k`.
    pub(crate) fn prev(&self, ring: &R, k: usize) -> Result<std::borrow::Cow<'_, [R::El]>> {
        let (bytes, n) = (&self.got[self.at[k]..self.at[k + 1]], self.own[k].len());
        if let Some(view) = ring.wire_view(bytes).filter(|v| v.len() == n) {
            return Ok(std::borrow::Cow::Borrowed(view));
        }
        Ok(std::borrow::Cow::Owned(crate::party::decode_exact(ring, self.peer, bytes, n)?))
    }
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
