//! Replicated secret sharing among 3 parties (ABY3, semi-honest; paper 000 appendix C).
//!
//! A value `x = x_0 + x_1 + x_2` (or `x_0 ^ x_1 ^ x_2` for bits) is held as party `i` holding
//! `(x_i, x_{i-1})`: fields `a` and `b` of [`Rep3`] and [`Rep3Bits`]. All operations work on
//! whole vectors; every interactive one takes a fixed number of rounds whatever the length.

mod arith;
mod binary;
mod convert;
mod lift;
mod ot;
mod scheme;
mod select;
mod share;

pub(crate) use arith::rows_of;
pub use arith::{
    dot, dot_pre, matmul, matmul_local, mul, reshare, reshare_for, reshare_parts, reshare_parts_for, Rep3Pre,
    ReshareFor,
};
pub use binary::{add_bits, and, and_many, Adder, Plane};
pub(crate) use binary::{maj_many, KoggeStonePlan};
pub use convert::{
    a2b, bit_extract, bit_extract_components, lemma1, lemma2, lt, lt_bounded, msb, msb_is_sign, msb_many, msb_of,
    msb_of_u32, msb_of_u64, msb_of_u64_with, msb_ring_bits, msb_two_operand,
};
pub use lift::{carry_count_for_msb, carry_count_small, const_lift, lift, lift_small};
pub use ot::{bit_inject, bit_inject_many, three_party_ot};
pub use scheme::Rep3Scheme;
pub use select::{mux, mux_bits, or_tree};
pub use share::{input, input_bits, reveal, reveal_bits, reveal_to, share_bits_from_client, share_from_client};

use std::fmt;

use argus_math::{BitVec, Ring};
use argus_net::PartyId;

use crate::error::{MpcError, Result};

/// A party's share of a vector over the ring `R`: components `a = x_i`, `b = x_{i-1}`.
#[derive(Clone, PartialEq, Eq)]
pub struct Rep3<R: Ring> {
    ring: R,
    /// This party's own component `x_i` of each element.
    pub a: Vec<R::El>,
    /// The previous party's component `x_{i-1}` of each element.
    pub b: Vec<R::El>,
}

impl<R: Ring> fmt::Debug for Rep3<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print share contents.
        write!(f, "Rep3<{:?}>[{}]", self.ring, self.a.len())
    }
}

impl<R: Ring> Rep3<R> {
    /// A share from its two components; they must have equal lengths.
    pub fn from_parts(ring: R, a: Vec<R::El>, b: Vec<R::El>) -> Result<Self> {
        if a.len() != b.len() {
            return Err(MpcError::LengthMismatch { left: a.len(), right: b.len() });
        }
        Ok(Rep3 { ring, a, b })
    }
    /// A share of the all-zero vector.
    pub fn zeros(ring: R, n: usize) -> Self {
        let z = ring.zero();
        Rep3 { a: vec![z; n], b: vec![z; n], ring }
    }
    /// The ring.
    pub fn ring(&self) -> &R {
        &self.ring
    }
    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.a.len()
    }
    /// Whether the vector is empty.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }
    /// Errors unless `o` has the same ring and length.
    pub fn check_compatible(&self, o: &Self) -> Result<()> {
        if self.ring != o.ring {
            return Err(MpcError::RingMismatch { left: self.ring.modulus(), right: o.ring.modulus() });
        }
        if self.len() != o.len() {
            return Err(MpcError::LengthMismatch { left: self.len(), right: o.len() });
        }
        Ok(())
    }
    fn zip_with(&self, o: &Self, f: impl Fn(&R, R::El, R::El) -> R::El) -> Result<Self> {
        self.check_compatible(o)?;
        let r = &self.ring;
        Ok(Rep3 {
            a: self.a.iter().zip(&o.a).map(|(&x, &y)| f(r, x, y)).collect(),
            b: self.b.iter().zip(&o.b).map(|(&x, &y)| f(r, x, y)).collect(),
            ring: self.ring.clone(),
        })
    }
    /// `x + y` (local).
    pub fn add(&self, o: &Self) -> Result<Self> {
        self.zip_with(o, |r, x, y| r.add(x, y))
    }
    /// `x - y` (local).
    pub fn sub(&self, o: &Self) -> Result<Self> {
        self.zip_with(o, |r, x, y| r.sub(x, y))
    }
    /// `-x` (local).
    pub fn neg(&self) -> Self {
        let r = &self.ring;
        Rep3 {
            a: self.a.iter().map(|&x| r.neg(x)).collect(),
            b: self.b.iter().map(|&x| r.neg(x)).collect(),
            ring: r.clone(),
        }
    }
    /// `c · x` for a public scalar (local).
    pub fn mul_scalar(&self, c: R::El) -> Self {
        let r = &self.ring;
        Rep3 { a: r.scale_vec(&self.a, c), b: r.scale_vec(&self.b, c), ring: r.clone() }
    }
    /// `c ⊙ x` for a public vector (local).
    pub fn mul_public(&self, c: &[R::El]) -> Result<Self> {
        check_len(self.len(), c.len())?;
        let r = &self.ring;
        Ok(Rep3 {
            a: self.a.iter().zip(c).map(|(&x, &y)| r.mul(x, y)).collect(),
            b: self.b.iter().zip(c).map(|(&x, &y)| r.mul(x, y)).collect(),
            ring: r.clone(),
        })
    }
    /// `x + c` for a public vector: the constant goes into component `x_0` (held by parties 0 and 1).
    pub fn add_public(&self, me: PartyId, c: &[R::El]) -> Result<Self> {
        check_len(self.len(), c.len())?;
        let mut out = self.clone();
        let r = &self.ring;
        let target = match me {
            0 => &mut out.a,
            1 => &mut out.b,
            _ => return Ok(out),
        };
        target.iter_mut().zip(c).for_each(|(x, &y)| *x = r.add(*x, y));
        Ok(out)
    }
    /// `x + c` for one public scalar added to every element.
    pub fn add_scalar(&self, me: PartyId, c: R::El) -> Self {
        self.add_public(me, &vec![c; self.len()]).expect("same length")
    }
    /// Concatenation of several share vectors over the same ring.
    pub fn concat(parts: &[&Self]) -> Result<Self> {
        let first = parts.first().ok_or_else(|| MpcError::InvalidParameter("concat of nothing".into()))?;
        let mut out = Rep3::zeros(first.ring.clone(), 0);
        for p in parts {
            if p.ring != first.ring {
                return Err(MpcError::RingMismatch { left: first.ring.modulus(), right: p.ring.modulus() });
            }
            out.a.extend_from_slice(&p.a);
            out.b.extend_from_slice(&p.b);
        }
        Ok(out)
    }
    /// Elements `[start, start + n)`.
    pub fn slice(&self, start: usize, n: usize) -> Result<Self> {
        if start + n > self.len() {
            return Err(MpcError::LengthMismatch { left: self.len(), right: start + n });
        }
        Ok(Rep3 { ring: self.ring.clone(), a: self.a[start..start + n].to_vec(), b: self.b[start..start + n].to_vec() })
    }
}

/// A party's share of a vector of bits over GF(2): `a = x_i`, `b = x_{i-1}` packed.
#[derive(Clone, PartialEq, Eq)]
pub struct Rep3Bits {
    /// Component `x_i`.
    pub a: BitVec,
    /// Component `x_{i-1}`.
    pub b: BitVec,
}

impl fmt::Debug for Rep3Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rep3Bits[{}]", self.a.len())
    }
}

impl Rep3Bits {
    /// From components of equal length.
    pub fn from_parts(a: BitVec, b: BitVec) -> Result<Self> {
        check_len(a.len(), b.len())?;
        Ok(Rep3Bits { a, b })
    }
    /// A share of `n` zero bits.
    pub fn zeros(n: usize) -> Self {
        Rep3Bits { a: BitVec::zeros(n), b: BitVec::zeros(n) }
    }
    /// Number of shared bits.
    pub fn len(&self) -> usize {
        self.a.len()
    }
    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }
    /// `x ^ y` (local).
    pub fn xor(&self, o: &Self) -> Result<Self> {
        Ok(Rep3Bits { a: self.a.xor(&o.a)?, b: self.b.xor(&o.b)? })
    }
    /// `!x` (local): flips component `x_0`.
    pub fn not(&self, me: PartyId) -> Self {
        match me {
            0 => Rep3Bits { a: self.a.not(), b: self.b.clone() },
            1 => Rep3Bits { a: self.a.clone(), b: self.b.not() },
            _ => self.clone(),
        }
    }
    /// `x ^ c` for public bits `c` (local).
    pub fn xor_public(&self, me: PartyId, c: &BitVec) -> Result<Self> {
        check_len(self.len(), c.len())?;
        Ok(match me {
            0 => Rep3Bits { a: self.a.xor(c)?, b: self.b.clone() },
            1 => Rep3Bits { a: self.a.clone(), b: self.b.xor(c)? },
            _ => self.clone(),
        })
    }
    /// `x & c` for public bits `c` (local).
    pub fn and_public(&self, c: &BitVec) -> Result<Self> {
        Ok(Rep3Bits { a: self.a.and(c)?, b: self.b.and(c)? })
    }
    /// Bits `[start, start + n)`.
    pub fn slice(&self, start: usize, n: usize) -> Result<Self> {
        Ok(Rep3Bits { a: self.a.slice(start, n)?, b: self.b.slice(start, n)? })
    }
    /// Applies a public permutation of positions locally: bit `i` of the result is bit `from[i]`.
    pub fn permute(&self, from: &[usize]) -> Result<Self> {
        check_len(self.len(), from.len())?;
        let pick = |v: &BitVec| -> Result<BitVec> {
            let mut out = BitVec::zeros(from.len());
            for (i, &j) in from.iter().enumerate() {
                if j >= v.len() {
                    return Err(MpcError::InvalidParameter(format!("permutation index {j} out of range {}", v.len())));
                }
                out.set(i, v.get(j));
            }
            Ok(out)
        };
        Ok(Rep3Bits { a: pick(&self.a)?, b: pick(&self.b)? })
    }
    /// Concatenation.
    pub fn concat(parts: &[&Self]) -> Self {
        let a: Vec<&BitVec> = parts.iter().map(|p| &p.a).collect();
        let b: Vec<&BitVec> = parts.iter().map(|p| &p.b).collect();
        Rep3Bits { a: BitVec::concat(&a), b: BitVec::concat(&b) }
    }
}

/// Values `third(n, s)` of `n`, `s` in `0..3`: the thirds whose roles rotate among the parties in
/// the two-operand MSB and the carry count, in whole words of 64 values (so bit planes split
/// without shifting), the last third taking the rest.
pub(crate) fn third(n: usize, s: usize) -> std::ops::Range<usize> {
    let cut = |s: usize| (s * n / 3).next_multiple_of(64).min(n);
    cut(s)..cut(s + 1)
}

pub(crate) fn check_len(left: usize, right: usize) -> Result<()> {
    if left != right {
        return Err(MpcError::LengthMismatch { left, right });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
