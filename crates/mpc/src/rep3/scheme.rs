//! [`Rep3Scheme`]: replicated sharing behind the engine's [`Scheme`] seam.

use argus_math::Ring;
use argus_net::PartyId;

use super::{a2b, arith, bit_inject, lt, share, Adder, Rep3, Rep3Pre};
use crate::additive3::Pow2;
use crate::error::Result;
use crate::party::Party;
use crate::scheme::{gather_vec, linear_vec, Compare, Scheme};

/// One party's view of replicated sharing over `R`: its session and the ring.
#[derive(Debug)]
pub struct Rep3Scheme<'p, R: Ring> {
    party: &'p mut Party,
    ring: R,
    /// The binary adder of comparisons.
    pub adder: Adder,
}

impl<'p, R: Ring> Rep3Scheme<'p, R> {
    /// The scheme over `ring` on a session of three parties.
    pub fn new(party: &'p mut Party, ring: R) -> Result<Self> {
        party.require("rep3", 3)?;
        Ok(Rep3Scheme { party, ring, adder: Adder::LogDepth })
    }
}

impl<R: Ring> Scheme for Rep3Scheme<'_, R> {
    type Ring = R;
    type Share = Rep3<R>;

    fn ring(&self) -> &R {
        &self.ring
    }
    fn len(&self, x: &Rep3<R>) -> usize {
        x.len()
    }
    fn input(&mut self, owner: PartyId, values: Option<&[R::El]>, n: usize) -> Result<Rep3<R>> {
        share::input(self.party, &self.ring, owner, values, n)
    }
    fn reveal(&mut self, x: &Rep3<R>) -> Result<Vec<R::El>> {
        share::reveal(self.party, x)
    }
    fn reveal_to(&mut self, x: &Rep3<R>, to: PartyId) -> Result<Option<Vec<R::El>>> {
        share::reveal_to(self.party, x, to)
    }
    fn constant(&self, c: &[R::El]) -> Rep3<R> {
        Rep3::zeros(self.ring.clone(), c.len()).add_public(self.party.id(), c).expect("same length")
    }
    fn add(&self, x: &Rep3<R>, y: &Rep3<R>) -> Result<Rep3<R>> {
        x.add(y)
    }
    fn sub(&self, x: &Rep3<R>, y: &Rep3<R>) -> Result<Rep3<R>> {
        x.sub(y)
    }
    fn mul_public(&self, x: &Rep3<R>, c: &[R::El]) -> Result<Rep3<R>> {
        x.mul_public(c)
    }
    fn scale(&self, x: &Rep3<R>, c: R::El) -> Rep3<R> {
        x.mul_scalar(c)
    }
    fn add_public(&self, x: &Rep3<R>, c: &[R::El]) -> Result<Rep3<R>> {
        x.add_public(self.party.id(), c)
    }
    fn mul_many(&mut self, pairs: &[(&Rep3<R>, &Rep3<R>)]) -> Result<Vec<Rep3<R>>> {
        let r = &self.ring;
        let mut zs = Vec::with_capacity(pairs.len());
        for (x, y) in pairs {
            x.check_compatible(y)?;
            zs.push(
                x.a.iter()
                    .zip(&x.b)
                    .zip(y.a.iter().zip(&y.b))
                    .map(|((&xa, &xb), (&ya, &yb))| r.add(r.mul(xa, r.add(ya, yb)), r.mul(xb, ya)))
                    .collect(),
            );
        }
        arith::reshare_parts(self.party, r, zs)
    }
    fn dot(&mut self, x: &Rep3<R>, y: &Rep3<R>, len: usize) -> Result<Rep3<R>> {
        arith::dot(self.party, x, y, len)
    }
    fn matmul(&mut self, x: &Rep3<R>, y: &Rep3<R>, len: usize) -> Result<Rep3<R>> {
        arith::matmul(self.party, &Rep3Pre::new(x), &Rep3Pre::new(y), len)
    }
    fn reshare(&mut self, x: &Rep3<R>) -> Result<Rep3<R>> {
        // each party's own component is an additive sharing: re-randomise and pass it (1 round)
        arith::reshare(self.party, &self.ring, x.a.clone())
    }
    fn slice(&self, x: &Rep3<R>, start: usize, n: usize) -> Result<Rep3<R>> {
        x.slice(start, n)
    }
    fn concat(&self, parts: &[&Rep3<R>]) -> Result<Rep3<R>> {
        Rep3::concat(parts)
    }
    fn gather(&self, x: &Rep3<R>, idx: &[usize]) -> Result<Rep3<R>> {
        Rep3::from_parts(self.ring.clone(), gather_vec(&x.a, idx)?, gather_vec(&x.b, idx)?)
    }
    fn linear(&self, m: &[R::El], x: &Rep3<R>, len: usize) -> Result<Rep3<R>> {
        let r = &self.ring;
        Rep3::from_parts(r.clone(), linear_vec(r, m, &x.a, len)?, linear_vec(r, m, &x.b, len)?)
    }
}

impl<R: Pow2> Compare for Rep3Scheme<'_, R> {
    fn lt(&mut self, x: &Rep3<R>, y: &Rep3<R>) -> Result<Rep3<R>> {
        let bit = lt(self.party, x, y, self.adder)?;
        bit_inject(self.party, &bit, &self.ring)
    }
    fn eq(&mut self, x: &Rep3<R>, y: &Rep3<R>) -> Result<Rep3<R>> {
        let me = self.party.id();
        let same: Vec<_> = a2b(self.party, &x.sub(y)?, self.adder)?.iter().map(|b| b.not(me)).collect();
        let bit = crate::additive3::bit_conj(self.party, &same)?;
        bit_inject(self.party, &bit, &self.ring)
    }
}
