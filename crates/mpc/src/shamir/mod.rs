//! Shamir sharing among 3 parties with threshold 1 over a prime field F_p (paper 000 section
//! 4.3.2), semi-honest.
//!
//! A value `v` is shared as the points of a random polynomial `f` with `f(0) = v`: party `i` holds
//! `f(i + 1)`. Fresh sharings have degree 1 (any two parties reconstruct); the local product of
//! two of them, and the deferred-reduction dot product ([`dot`]), have degree 2 (all three are
//! needed). The degree is part of the share's value ([`Shamir::degree`]) and combining shares of
//! different degree, field or length is a typed error.
//!
//! Conversions ([`to_rep3`], [`from_rep3`]) move between Shamir and replicated sharing mod p, so
//! the binary circuits of [`crate::rep3`] apply: [`bit_extract_p`] and [`msb_p`] (Alg. 12) and
//! [`lift_p`] (Alg. 15). All operations work on whole vectors; every interactive one takes a
//! fixed number of rounds whatever the length.
//!
//! Evaluation points are the constants 1, 2, 3, so the field must have `p > 3`.

mod arith;
mod convert;
mod scheme;

/// Opening a replicated sharing mod p (the form [`to_rep3`] produces) is [`crate::rep3::reveal`].
pub use crate::rep3::reveal as reveal_rep3;
pub use arith::{dot, matmul, mul, mul_local};
pub use convert::{
    bit_extract_p, bit_extract_p_with, from_rep3, lift_p, lift_p_with, msb_p, msb_p_with, to_rep3, Circuit,
};
pub use scheme::ShamirScheme;

use std::fmt;

use argus_math::{Field, MathError};
use argus_net::PartyId;
use rand_core::{CryptoRng, RngCore};

use crate::error::{MpcError, Result};
use crate::party::Party;

/// The degree of the polynomial behind a sharing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Degree {
    /// Degree 1: fresh sharings and everything linear in them; two parties reconstruct.
    One,
    /// Degree 2: local products and dot products before degree reduction; all three reconstruct.
    Two,
}

impl Degree {
    /// The degree as a number (1 or 2).
    pub fn get(self) -> usize {
        match self {
            Degree::One => 1,
            Degree::Two => 2,
        }
    }
}

impl fmt::Display for Degree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// A party's Shamir shares of a vector over the field `F`: `f_k(id + 1)` for each element `k`.
#[derive(Clone, PartialEq, Eq)]
pub struct Shamir<F: Field> {
    field: F,
    degree: Degree,
    shares: Vec<F::El>,
}

impl<F: Field> fmt::Debug for Shamir<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print share contents.
        write!(f, "Shamir<{:?}, degree {}>[{}]", self.field, self.degree, self.shares.len())
    }
}

impl<F: Field> Shamir<F> {
    /// Shares from their values (e.g. a database row loaded from disk). Errors if the field has
    /// `p <= 3` or a share is not a canonical element of the field.
    pub fn from_parts(field: F, degree: Degree, shares: Vec<F::El>) -> Result<Self> {
        consts(&field)?;
        check_canonical(&field, &shares)?;
        Ok(Shamir { field, degree, shares })
    }
    /// A share of the all-zero vector (valid for any degree: the zero polynomial).
    pub fn zeros(field: F, degree: Degree, n: usize) -> Self {
        let z = field.zero();
        Shamir { field, degree, shares: vec![z; n] }
    }
    /// The field.
    pub fn field(&self) -> &F {
        &self.field
    }
    /// The degree of the sharing polynomials.
    pub fn degree(&self) -> Degree {
        self.degree
    }
    /// This party's share of each element.
    pub fn shares(&self) -> &[F::El] {
        &self.shares
    }
    /// Takes the share values out.
    pub fn into_shares(self) -> Vec<F::El> {
        self.shares
    }
    /// Number of shared elements.
    pub fn len(&self) -> usize {
        self.shares.len()
    }
    /// Whether the vector is empty.
    pub fn is_empty(&self) -> bool {
        self.shares.is_empty()
    }
    /// Errors unless `o` has the same field, degree and length.
    pub fn check_compatible(&self, o: &Self) -> Result<()> {
        check_field(&self.field, &o.field)?;
        check_degree(self.degree, o.degree)?;
        check_len(self.len(), o.len())
    }
    fn map(&self, f: impl Fn(&F, F::El) -> F::El) -> Self {
        let r = &self.field;
        Shamir { field: r.clone(), degree: self.degree, shares: self.shares.iter().map(|&x| f(r, x)).collect() }
    }
    fn zip_with(&self, o: &Self, f: impl Fn(&F, F::El, F::El) -> F::El) -> Result<Self> {
        self.check_compatible(o)?;
        let r = &self.field;
        let shares = self.shares.iter().zip(&o.shares).map(|(&x, &y)| f(r, x, y)).collect();
        Ok(Shamir { field: r.clone(), degree: self.degree, shares })
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
        self.map(|r, x| r.neg(x))
    }
    /// `c · x` for a public scalar (local).
    pub fn mul_scalar(&self, c: F::El) -> Self {
        self.map(|r, x| r.mul(x, c))
    }
    /// `c ⊙ x` for a public vector (local).
    pub fn mul_public(&self, c: &[F::El]) -> Result<Self> {
        check_len(self.len(), c.len())?;
        let r = &self.field;
        let shares = self.shares.iter().zip(c).map(|(&x, &y)| r.mul(x, y)).collect();
        Ok(Shamir { field: r.clone(), degree: self.degree, shares })
    }
    /// `x + c` for a public vector (local): every party adds `c` to its point, `f + c`.
    pub fn add_public(&self, c: &[F::El]) -> Result<Self> {
        check_len(self.len(), c.len())?;
        let r = &self.field;
        let shares = self.shares.iter().zip(c).map(|(&x, &y)| r.add(x, y)).collect();
        Ok(Shamir { field: r.clone(), degree: self.degree, shares })
    }
    /// `x + c` for one public scalar added to every element (local).
    pub fn add_scalar(&self, c: F::El) -> Self {
        self.map(|r, x| r.add(x, c))
    }
    /// Appends `o` (same field and degree) in place.
    pub fn extend(&mut self, o: &Self) -> Result<()> {
        if self.field != o.field {
            return Err(MpcError::RingMismatch { left: self.field.modulus(), right: o.field.modulus() });
        }
        if self.degree != o.degree {
            return Err(MpcError::InvalidParameter(format!(
                "Shamir degree mismatch: {} vs {}",
                self.degree.get(),
                o.degree.get()
            )));
        }
        self.shares.extend_from_slice(&o.shares);
        Ok(())
    }
    /// Concatenation of share vectors of one field and degree.
    pub fn concat(parts: &[&Self]) -> Result<Self> {
        let first = parts.first().ok_or_else(|| MpcError::InvalidParameter("concat of nothing".into()))?;
        let mut shares = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            check_field(&first.field, &p.field)?;
            check_degree(first.degree, p.degree)?;
            shares.extend_from_slice(&p.shares);
        }
        Ok(Shamir { field: first.field.clone(), degree: first.degree, shares })
    }
    /// Elements `[start, start + n)`.
    pub fn slice(&self, start: usize, n: usize) -> Result<Self> {
        let end = start.checked_add(n).filter(|&e| e <= self.len());
        let end = end.ok_or(MpcError::LengthMismatch { left: self.len(), right: start.saturating_add(n) })?;
        Ok(Shamir { field: self.field.clone(), degree: self.degree, shares: self.shares[start..end].to_vec() })
    }
}

/// The constants of the scheme in `F`: evaluation points and Lagrange coefficients.
pub(crate) struct Consts<F: Field> {
    /// Lagrange coefficients at 0 for the points 1, 2, 3 (any degree <= 2): `(3, -3, 1)`.
    pub(crate) lambda: [F::El; 3],
    /// The evaluation point `id + 1` of each party.
    pub(crate) point: [F::El; 3],
    /// `1 / point` for each party.
    pub(crate) inv_point: [F::El; 3],
}

/// The scheme's constants; errors for `p <= 3`, where the points 1, 2, 3 are not distinct and
/// non-zero.
pub(crate) fn consts<F: Field>(f: &F) -> Result<Consts<F>> {
    if f.inv(f.from_u128(6)).is_none() {
        return Err(MpcError::InvalidParameter(format!(
            "Shamir sharing among 3 parties needs a field with p > 3, got {}",
            f.modulus()
        )));
    }
    let point = [1u128, 2, 3].map(|x| f.from_u128(x));
    Ok(Consts {
        lambda: [3i128, -3, 1].map(|x| f.from_i128(x)),
        inv_point: point.map(|x| f.inv(x).expect("p > 3")),
        point,
    })
}

/// Errors unless every value is a canonical element of the field.
fn check_canonical<F: Field>(field: &F, xs: &[F::El]) -> Result<()> {
    match xs.iter().position(|&x| field.try_from_u128(field.to_u128(x)) != Some(x)) {
        Some(index) => Err(MathError::OutOfRange { index, modulus: field.modulus() }.into()),
        None => Ok(()),
    }
}

pub(crate) fn check_len(left: usize, right: usize) -> Result<()> {
    if left != right {
        return Err(MpcError::LengthMismatch { left, right });
    }
    Ok(())
}

pub(crate) fn check_field<F: Field>(a: &F, b: &F) -> Result<()> {
    if a != b {
        return Err(MpcError::RingMismatch { left: a.modulus(), right: b.modulus() });
    }
    Ok(())
}

pub(crate) fn check_degree(a: Degree, b: Degree) -> Result<()> {
    if a != b {
        return Err(MpcError::InvalidParameter(format!("Shamir degree mismatch: {a} vs {b}")));
    }
    Ok(())
}

/// Errors unless `x` has degree `want`.
pub(crate) fn require_degree<F: Field>(x: &Shamir<F>, want: Degree, what: &str) -> Result<()> {
    if x.degree != want {
        return Err(MpcError::InvalidParameter(format!("{what} needs degree-{want} shares, got degree {}", x.degree)));
    }
    Ok(())
}

fn check_party(id: PartyId, what: &str) -> Result<()> {
    if id >= 3 {
        return Err(MpcError::InvalidParameter(format!("{what} {id} is not a party of 3")));
    }
    Ok(())
}

/// An outside client shares `values` with degree-1 polynomials `v + r·X` (`[share of party 0, 1,
/// 2]`). Errors if a value is not a canonical field element or `p <= 3`.
pub fn share_from_client<F: Field, G: RngCore + CryptoRng>(
    field: &F,
    values: &[F::El],
    rng: &mut G,
) -> Result<[Shamir<F>; 3]> {
    share_from_client_with_degree(field, Degree::One, values, rng)
}

/// [`share_from_client`] with polynomials of the given degree (`v + r_1·X` or `v + r_1·X + r_2·X^2`).
pub fn share_from_client_with_degree<F: Field, G: RngCore + CryptoRng>(
    field: &F,
    degree: Degree,
    values: &[F::El],
    rng: &mut G,
) -> Result<[Shamir<F>; 3]> {
    let c = consts(field)?;
    check_canonical(field, values)?;
    let coeffs: Vec<Vec<F::El>> = (0..degree.get()).map(|_| field.sample_vec(rng, values.len())).collect();
    Ok(std::array::from_fn(|i| {
        let x = c.point[i];
        // Horner: v + x·(r_1 + x·r_2).
        let shares = (0..values.len())
            .map(|k| {
                let top = coeffs.iter().rev().fold(field.zero(), |acc, r| field.add(field.mul(acc, x), r[k]));
                field.add(values[k], field.mul(top, x))
            })
            .collect();
        Shamir { field: field.clone(), degree, shares }
    }))
}

/// Party `owner` secret-shares its `values` with degree 1 (the others pass `None` and the
/// expected length `n`).
///
/// The random point of party `owner + 1` is drawn from the PRG seed that the two share, which
/// fixes the polynomial `f(X) = v + (u - v)·X / x_{owner+1}`; the owner sends only the point of
/// party `owner + 2`. One message of `n` elements, one round (instead of one to each party).
pub fn input<F: Field>(
    p: &mut Party,
    field: &F,
    owner: PartyId,
    values: Option<&[F::El]>,
    n: usize,
) -> Result<Shamir<F>> {
    check_party(owner, "input owner")?;
    let c = consts(field)?;
    let me = p.id();
    let (next, prev) = ((owner + 1) % 3, (owner + 2) % 3);
    let shares = if me == owner {
        let v = values.ok_or_else(|| MpcError::InvalidParameter("the input owner must pass its values".into()))?;
        check_len(n, v.len())?;
        check_canonical(field, v)?;
        let u = field.sample_vec(p.prg.next(), n);
        // f(x) = v + (u - v)·x/x_next at the owner's and the previous party's points.
        let w_own = field.mul(c.point[owner], c.inv_point[next]);
        let w_prev = field.mul(c.point[prev], c.inv_point[next]);
        let at = |w: F::El| -> Vec<F::El> {
            v.iter().zip(&u).map(|(&v, &u)| field.add(v, field.mul(field.sub(u, v), w))).collect()
        };
        p.send_elems(field, prev, &at(w_prev))?;
        at(w_own)
    } else if me == next {
        field.sample_vec(p.prg.prev(), n)
    } else {
        p.recv_elems(field, owner, n)?
    };
    Ok(Shamir { field: field.clone(), degree: Degree::One, shares })
}

/// `f(0)` from the points of parties `i` and `j` (degree 1): `y_i·x_j/(x_j - x_i) + y_j·x_i/(x_i - x_j)`.
fn interpolate_pair<F: Field>(
    field: &F,
    c: &Consts<F>,
    i: PartyId,
    j: PartyId,
    yi: &[F::El],
    yj: &[F::El],
) -> Vec<F::El> {
    let (xi, xj) = (c.point[i], c.point[j]);
    let d = field.inv(field.sub(xj, xi)).expect("distinct points");
    let li = field.mul(xj, d);
    let lj = field.neg(field.mul(xi, d));
    yi.iter().zip(yj).map(|(&a, &b)| field.add(field.mul(a, li), field.mul(b, lj))).collect()
}

/// This party's part of an additive sharing of the values of a degree-2 (or 1) sharing, masked
/// with a fresh zero-sharing: `λ_i·y_i + r_i` with the Lagrange coefficients `(3, -3, 1)`.
/// Opening these instead of the points hides the other coefficients of the polynomial, which
/// for a product `f·g` would leak more than `f(0)·g(0)`.
fn masked_additive<F: Field>(p: &mut Party, x: &Shamir<F>, c: &Consts<F>) -> Vec<F::El> {
    let f = &x.field;
    let l = c.lambda[p.id()];
    let r = p.prg.zero_share(f, x.len());
    x.shares.iter().zip(&r).map(|(&y, &r)| f.add(f.mul(y, l), r)).collect()
}

fn sum3<F: Field>(f: &F, a: &[F::El], b: &[F::El], c: &[F::El]) -> Vec<F::El> {
    a.iter().zip(b).zip(c).map(|((&a, &b), &c)| f.add(f.add(a, b), c)).collect()
}

/// Opens `x` to all parties in one round. Degree 1: each party sends its point to the next one
/// and interpolates from its own and the previous party's points (one element per value).
/// Degree 2: each party sends its masked additive part (Lagrange coefficient times its point,
/// plus a zero-sharing) to both others, so only `f(0)` is revealed (two elements per value).
pub fn reveal<F: Field>(p: &mut Party, x: &Shamir<F>) -> Result<Vec<F::El>> {
    let f = &x.field;
    let c = consts(f)?;
    let (me, next, prev) = (p.id(), p.next(), p.prev());
    match x.degree {
        Degree::One => {
            let theirs = p.pass_elems(f, &x.shares)?;
            Ok(interpolate_pair(f, &c, me, prev, &x.shares, &theirs))
        }
        Degree::Two => {
            let z = masked_additive(p, x, &c);
            p.send_elems(f, next, &z)?;
            p.send_elems(f, prev, &z)?;
            let from_prev = p.recv_elems(f, prev, x.len())?;
            let from_next = p.recv_elems(f, next, x.len())?;
            Ok(sum3(f, &z, &from_prev, &from_next))
        }
    }
}

/// Opens `x` to party `to` only (it returns `Some`), one round. Degree 1: party `to + 1` sends
/// it its point. Degree 2: both other parties send their masked additive parts (see [`reveal`]).
pub fn reveal_to<F: Field>(p: &mut Party, x: &Shamir<F>, to: PartyId) -> Result<Option<Vec<F::El>>> {
    check_party(to, "reveal target")?;
    let f = &x.field;
    let c = consts(f)?;
    let me = p.id();
    let (next, prev) = (p.next(), p.prev());
    match x.degree {
        Degree::One => {
            if me == (to + 1) % 3 {
                p.send_elems(f, to, &x.shares)?;
            }
            if me != to {
                return Ok(None);
            }
            let from_next = p.recv_elems(f, next, x.len())?;
            Ok(Some(interpolate_pair(f, &c, me, next, &x.shares, &from_next)))
        }
        Degree::Two => {
            let z = masked_additive(p, x, &c);
            if me != to {
                p.send_elems(f, to, &z)?;
                return Ok(None);
            }
            let from_prev = p.recv_elems(f, prev, x.len())?;
            let from_next = p.recv_elems(f, next, x.len())?;
            Ok(Some(sum3(f, &z, &from_prev, &from_next)))
        }
    }
}

#[cfg(test)]
mod tests;
