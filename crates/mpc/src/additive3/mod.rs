//! Sharemind's 3-party additive sharing over Z_2^n (paper 001): `u = u_0 + u_1 + u_2`, party `i`
//! holding `u_i` (the paper's P1, P2, P3 are parties 0, 1, 2). Vectors throughout; every
//! interactive operation takes a fixed number of rounds whatever the length.
//!
//! Two choices beyond the paper, each argued where it is made:
//!
//! * **Randomness from the session's pairwise streams.** Whatever the paper has one party
//!   generate and send to another (`r_12`, `m_12`, `b_12`, …) is drawn by both from the stream
//!   they share ([`argus_prg::Pairwise`]), so it costs no message; resharing (Alg. 1) is a
//!   zero-sharing, free. Every share is re-randomised by a fresh zero-sharing right before it
//!   leaves its party.
//! * **The bit layer is replicated.** Bitwise-shared values (`\bar{[[u]]}`) are [`crate::rep3::Rep3Bits`] bit
//!   planes: an AND gate then costs one bit per party instead of the two of Mult over Z_2, and the
//!   engine's AND layers and adders ([`crate::rep3`]) serve this scheme too. Additive bit shares
//!   are the `a` component of a replicated one (local), and become replicated by one pass.

mod arith;
mod bits;
pub(crate) mod costs;
mod divide;
mod extract;
mod scheme;
mod share;
mod shift;

pub use arith::{dot, matmul, mul, mul_many};
pub use bits::{bit_conj, msnzb, prefix_or, share_conv};
pub use costs::Additive3Costs;
pub use divide::{div, div_public, DivParams};
pub use extract::{bit_extr, equal};
pub use scheme::Additive3;
pub use share::{from_rep3, input, reshare, reveal, reveal_to, share_from_client, to_rep3};
pub use shift::{lt, overflow, reshare_to_two, shift_r};

use std::fmt;

pub use argus_math::Pow2;
use argus_math::{BitVec, Modulus, Ring};

use crate::error::{MpcError, Result};

/// A party's share of a vector over the ring `R`: its additive component `u_i` of each element.
#[derive(Clone, PartialEq, Eq)]
pub struct Add3<R: Ring> {
    ring: R,
    /// This party's component of each element.
    pub x: Vec<R::El>,
}

impl<R: Ring> fmt::Debug for Add3<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print share contents.
        write!(f, "Add3<{:?}>[{}]", self.ring, self.x.len())
    }
}

impl<R: Ring> Add3<R> {
    /// A share from this party's components.
    pub fn new(ring: R, x: Vec<R::El>) -> Self {
        Add3 { ring, x }
    }
    /// The ring.
    pub fn ring(&self) -> &R {
        &self.ring
    }
    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.x.len()
    }
    /// Whether the vector is empty.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
    /// Errors unless `o` has the same ring and length.
    pub fn check_compatible(&self, o: &Self) -> Result<()> {
        if self.ring != o.ring {
            return Err(MpcError::RingMismatch { left: self.ring.modulus(), right: o.ring.modulus() });
        }
        check_len(self.len(), o.len())
    }
    fn zip_with(&self, o: &Self, f: impl Fn(&R, R::El, R::El) -> R::El) -> Result<Self> {
        self.check_compatible(o)?;
        let r = &self.ring;
        Ok(Add3 { ring: r.clone(), x: self.x.iter().zip(&o.x).map(|(&a, &b)| f(r, a, b)).collect() })
    }
    /// `x + y` (local).
    pub fn add(&self, o: &Self) -> Result<Self> {
        self.zip_with(o, |r, a, b| r.add(a, b))
    }
    /// `x - y` (local).
    pub fn sub(&self, o: &Self) -> Result<Self> {
        self.zip_with(o, |r, a, b| r.sub(a, b))
    }
    /// `c ⊙ x` for a public vector (local).
    pub fn mul_public(&self, c: &[R::El]) -> Result<Self> {
        check_len(self.len(), c.len())?;
        let r = &self.ring;
        Ok(Add3 { ring: r.clone(), x: self.x.iter().zip(c).map(|(&a, &b)| r.mul(a, b)).collect() })
    }
    /// `c · x` for a public scalar (local).
    pub fn scale(&self, c: R::El) -> Self {
        Add3 { ring: self.ring.clone(), x: self.ring.scale_vec(&self.x, c) }
    }
    /// `x + c` for a public vector: party 0 adds it to its component.
    pub fn add_public(&self, me: usize, c: &[R::El]) -> Result<Self> {
        check_len(self.len(), c.len())?;
        let mut out = self.clone();
        if me == 0 {
            let r = &self.ring;
            out.x.iter_mut().zip(c).for_each(|(a, &b)| *a = r.add(*a, b));
        }
        Ok(out)
    }
    /// A sharing of the public vector `c` (party 0 holds it, the others zero).
    pub fn constant(ring: R, me: usize, c: &[R::El]) -> Self {
        let x = if me == 0 { c.to_vec() } else { vec![ring.zero(); c.len()] };
        Add3 { ring, x }
    }
    /// Elements `[start, start + n)`.
    pub fn slice(&self, start: usize, n: usize) -> Result<Self> {
        let x = self.x.get(start..start + n).ok_or(MpcError::LengthMismatch { left: self.len(), right: start + n })?;
        Ok(Add3 { ring: self.ring.clone(), x: x.to_vec() })
    }
    /// Concatenation of share vectors over one ring.
    pub fn concat(parts: &[&Self]) -> Result<Self> {
        let first = parts.first().ok_or_else(|| MpcError::InvalidParameter("concat of nothing".into()))?;
        let mut x = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            if p.ring != first.ring {
                return Err(MpcError::RingMismatch { left: first.ring.modulus(), right: p.ring.modulus() });
            }
            x.extend_from_slice(&p.x);
        }
        Ok(Add3 { ring: first.ring.clone(), x })
    }
}

/// `n` for the ring Z_2^n, or an error naming the ring.
pub(crate) fn width<R: Ring>(ring: &R) -> Result<usize> {
    match ring.modulus() {
        Modulus::Pow2(k) => Ok(k as usize),
        m => Err(MpcError::InvalidParameter(format!("Sharemind's bit-level protocols need Z_2^n, got {m}"))),
    }
}

/// The bit planes (LSB first) of `width`-bit elements: plane `j` holds bit `j` of every element.
pub(crate) fn planes<R: Pow2>(ring: &R, xs: &[R::El], width: usize) -> Vec<BitVec> {
    let mut out = Vec::with_capacity(width);
    for w in 0..width.div_ceil(64) {
        let k = (width - 64 * w).min(64);
        out.extend(BitVec::planes_from_fn(xs.len(), k, |i| u128::from(ring.word(xs[i], w))));
    }
    out
}

pub(crate) fn check_len(left: usize, right: usize) -> Result<()> {
    if left != right {
        return Err(MpcError::LengthMismatch { left, right });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
