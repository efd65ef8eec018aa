//! [`Additive3`]: the Sharemind scheme behind the engine's [`Scheme`] seam.

use argus_math::Ring;
use argus_net::PartyId;

use super::{arith, divide, extract, share, shift, Add3, Pow2};
use crate::error::Result;
use crate::party::Party;
use crate::scheme::{gather_vec, linear_vec, Compare, Divide, Scheme};

/// One party's view of the Sharemind scheme over `R`: its session and the ring.
#[derive(Debug)]
pub struct Additive3<'p, R: Ring> {
    party: &'p mut Party,
    ring: R,
}

impl<'p, R: Ring> Additive3<'p, R> {
    /// The scheme over `ring` on a session of three parties.
    pub fn new(party: &'p mut Party, ring: R) -> Result<Self> {
        party.require("additive3", 3)?;
        Ok(Additive3 { party, ring })
    }
    /// The session (for the protocols beyond the seam: bit extraction, shifts, division).
    pub fn party(&mut self) -> &mut Party {
        self.party
    }
}

impl<R: Ring> Scheme for Additive3<'_, R> {
    type Ring = R;
    type Share = Add3<R>;

    fn ring(&self) -> &R {
        &self.ring
    }
    fn len(&self, x: &Add3<R>) -> usize {
        x.len()
    }
    fn input(&mut self, owner: PartyId, values: Option<&[R::El]>, n: usize) -> Result<Add3<R>> {
        share::input(self.party, &self.ring, owner, values, n)
    }
    fn reveal(&mut self, x: &Add3<R>) -> Result<Vec<R::El>> {
        share::reveal(self.party, x)
    }
    fn reveal_to(&mut self, x: &Add3<R>, to: PartyId) -> Result<Option<Vec<R::El>>> {
        share::reveal_to(self.party, x, to)
    }
    fn constant(&self, c: &[R::El]) -> Add3<R> {
        Add3::constant(self.ring.clone(), self.party.id(), c)
    }
    fn add(&self, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
        x.add(y)
    }
    fn sub(&self, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
        x.sub(y)
    }
    fn mul_public(&self, x: &Add3<R>, c: &[R::El]) -> Result<Add3<R>> {
        x.mul_public(c)
    }
    fn scale(&self, x: &Add3<R>, c: R::El) -> Add3<R> {
        x.scale(c)
    }
    fn add_public(&self, x: &Add3<R>, c: &[R::El]) -> Result<Add3<R>> {
        x.add_public(self.party.id(), c)
    }
    fn mul_many(&mut self, pairs: &[(&Add3<R>, &Add3<R>)]) -> Result<Vec<Add3<R>>> {
        arith::mul_many(self.party, pairs)
    }
    fn dot(&mut self, x: &Add3<R>, y: &Add3<R>, len: usize) -> Result<Add3<R>> {
        arith::dot(self.party, x, y, len)
    }
    fn matmul(&mut self, x: &Add3<R>, y: &Add3<R>, len: usize) -> Result<Add3<R>> {
        arith::matmul(self.party, x, y, len)
    }
    fn reshare(&mut self, x: &Add3<R>) -> Result<Add3<R>> {
        Ok(share::reshare(self.party, x))
    }
    fn slice(&self, x: &Add3<R>, start: usize, n: usize) -> Result<Add3<R>> {
        x.slice(start, n)
    }
    fn concat(&self, parts: &[&Add3<R>]) -> Result<Add3<R>> {
        Add3::concat(parts)
    }
    fn gather(&self, x: &Add3<R>, idx: &[usize]) -> Result<Add3<R>> {
        Ok(Add3::new(self.ring.clone(), gather_vec(&x.x, idx)?))
    }
    fn linear(&self, m: &[R::El], x: &Add3<R>, len: usize) -> Result<Add3<R>> {
        Ok(Add3::new(self.ring.clone(), linear_vec(&self.ring, m, &x.x, len)?))
    }
}

impl<R: Pow2> Compare for Additive3<'_, R> {
    fn lt(&mut self, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
        shift::lt(self.party, x, y)
    }
    fn eq(&mut self, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
        extract::equal(self.party, x, y)
    }
}

impl<R: Pow2> Divide for Additive3<'_, R> {
    fn div_public(&mut self, x: &Add3<R>, d: &[u128]) -> Result<Add3<R>> {
        divide::div_public(self.party, x, d)
    }
    fn div(&mut self, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
        divide::div(self.party, x, y)
    }
}
