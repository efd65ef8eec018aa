//! [`ShamirScheme`]: Shamir sharing behind the engine's [`Scheme`] seam.

use argus_math::Field;
use argus_net::PartyId;

use super::{arith, from_rep3, input, reveal, reveal_to, to_rep3, Degree, Shamir};
use crate::error::Result;
use crate::party::Party;
use crate::scheme::{gather_vec, linear_vec, Scheme};

/// One party's view of Shamir sharing (3 parties, threshold 1) over the field `F`. Shares are
/// degree 1 between operations; products are reduced at once.
#[derive(Debug)]
pub struct ShamirScheme<'p, F: Field> {
    party: &'p mut Party,
    field: F,
}

impl<'p, F: Field> ShamirScheme<'p, F> {
    /// The scheme over `field` on a session of three parties.
    pub fn new(party: &'p mut Party, field: F) -> Result<Self> {
        party.require("shamir", 3)?;
        super::consts(&field)?;
        Ok(ShamirScheme { party, field })
    }
    /// A degree-2 sharing brought back to degree 1 (one round, one element per value).
    fn reduce(&mut self, x: &Shamir<F>) -> Result<Shamir<F>> {
        from_rep3(self.party.id(), &to_rep3(self.party, x)?)
    }
}

impl<F: Field> Scheme for ShamirScheme<'_, F> {
    type Ring = F;
    type Share = Shamir<F>;

    fn ring(&self) -> &F {
        &self.field
    }
    fn len(&self, x: &Shamir<F>) -> usize {
        x.len()
    }
    fn input(&mut self, owner: PartyId, values: Option<&[F::El]>, n: usize) -> Result<Shamir<F>> {
        input(self.party, &self.field, owner, values, n)
    }
    fn reveal(&mut self, x: &Shamir<F>) -> Result<Vec<F::El>> {
        reveal(self.party, x)
    }
    fn reveal_to(&mut self, x: &Shamir<F>, to: PartyId) -> Result<Option<Vec<F::El>>> {
        reveal_to(self.party, x, to)
    }
    fn constant(&self, c: &[F::El]) -> Shamir<F> {
        // the constant polynomial: every party's point is the value
        Shamir::from_parts(self.field.clone(), Degree::One, c.to_vec()).expect("canonical constants")
    }
    fn add(&self, x: &Shamir<F>, y: &Shamir<F>) -> Result<Shamir<F>> {
        x.add(y)
    }
    fn sub(&self, x: &Shamir<F>, y: &Shamir<F>) -> Result<Shamir<F>> {
        x.sub(y)
    }
    fn mul_public(&self, x: &Shamir<F>, c: &[F::El]) -> Result<Shamir<F>> {
        x.mul_public(c)
    }
    fn scale(&self, x: &Shamir<F>, c: F::El) -> Shamir<F> {
        x.mul_scalar(c)
    }
    fn add_public(&self, x: &Shamir<F>, c: &[F::El]) -> Result<Shamir<F>> {
        x.add_public(c)
    }
    fn mul_many(&mut self, pairs: &[(&Shamir<F>, &Shamir<F>)]) -> Result<Vec<Shamir<F>>> {
        // all local products reduced in one round
        let locals = pairs.iter().map(|(x, y)| arith::mul_local(x, y)).collect::<Result<Vec<_>>>()?;
        let all = Shamir::concat(&locals.iter().collect::<Vec<_>>())?;
        let reduced = self.reduce(&all)?;
        let mut at = 0;
        locals
            .iter()
            .map(|l| {
                at += l.len();
                reduced.slice(at - l.len(), l.len())
            })
            .collect()
    }
    fn dot(&mut self, x: &Shamir<F>, y: &Shamir<F>, len: usize) -> Result<Shamir<F>> {
        let d = arith::dot(x, y, len)?;
        self.reduce(&d)
    }
    fn matmul(&mut self, x: &Shamir<F>, y: &Shamir<F>, len: usize) -> Result<Shamir<F>> {
        let d = arith::matmul(x, y, len)?;
        self.reduce(&d)
    }
    fn reshare(&mut self, x: &Shamir<F>) -> Result<Shamir<F>> {
        self.reduce(x)
    }
    fn slice(&self, x: &Shamir<F>, start: usize, n: usize) -> Result<Shamir<F>> {
        x.slice(start, n)
    }
    fn concat(&self, parts: &[&Shamir<F>]) -> Result<Shamir<F>> {
        Shamir::concat(parts)
    }
    fn gather(&self, x: &Shamir<F>, idx: &[usize]) -> Result<Shamir<F>> {
        Shamir::from_parts(self.field.clone(), x.degree(), gather_vec(x.shares(), idx)?)
    }
    fn linear(&self, m: &[F::El], x: &Shamir<F>, len: usize) -> Result<Shamir<F>> {
        Shamir::from_parts(self.field.clone(), x.degree(), linear_vec(&self.field, m, x.shares(), len)?)
    }
}
