//! The Shamir setting of paper 002: three parties, honest majority, F_q values as degree-1
//! Shamir shares ([`crate::shamir`]) and F_2 values as replicated bits ([`crate::rep3`]), whose
//! AND gates cost one round each layer.
//!
//! Randomness comes from the pairwise PRG streams of replicated sharing: a replicated value's
//! component `x_i` is drawn by parties `i` and `i + 1` from their common stream, so random bits
//! and bounded random integers cost nothing, and [`crate::shamir::from_rep3`] turns a replicated
//! F_q sharing into a Shamir one locally. A daBit's F_q side comes from its replicated bit by
//! bit injection ([`rep3::bit_inject`]: ABY3's 3-party OT, two rounds, four elements per bit and
//! no products).

use argus_math::{BitVec, Fp};
use rand_core::RngCore;

use super::{Abb, Circuit};
use crate::error::Result;
use crate::party::Party;
use crate::rep3::{self, Rep3, Rep3Bits};
use crate::shamir::{self, from_rep3, Degree, Shamir};

/// The black box of the Shamir setting over a session of three parties.
pub struct ShamirAbb<'p> {
    p: &'p mut Party,
    field: Fp,
}

impl<'p> ShamirAbb<'p> {
    /// The setting over `p`'s session (three parties) and F_q = `field`.
    pub fn new(p: &'p mut Party, field: Fp) -> Result<Self> {
        p.require("the Shamir setting of paper 002", 3)?;
        Ok(ShamirAbb { p, field })
    }

    /// The session.
    pub fn party(&mut self) -> &mut Party {
        self.p
    }
}

impl Abb for ShamirAbb<'_> {
    type Arith = Shamir<Fp>;
    type Bits = Rep3Bits;

    fn field(&self) -> &Fp {
        &self.field
    }
    fn len(&self, x: &Shamir<Fp>) -> usize {
        x.len()
    }
    fn constant(&self, c: &[u128]) -> Shamir<Fp> {
        // the constant polynomial: every party's point is c
        Shamir::zeros(self.field, Degree::One, c.len()).add_public(c).expect("one length")
    }
    fn add(&self, x: &Shamir<Fp>, y: &Shamir<Fp>) -> Result<Shamir<Fp>> {
        x.add(y)
    }
    fn sub(&self, x: &Shamir<Fp>, y: &Shamir<Fp>) -> Result<Shamir<Fp>> {
        x.sub(y)
    }
    fn scale(&self, x: &Shamir<Fp>, c: u128) -> Shamir<Fp> {
        x.mul_scalar(c)
    }
    fn mul_public(&self, x: &Shamir<Fp>, c: &[u128]) -> Result<Shamir<Fp>> {
        x.mul_public(c)
    }
    fn slice(&self, x: &Shamir<Fp>, start: usize, n: usize) -> Result<Shamir<Fp>> {
        x.slice(start, n)
    }
    fn concat(&self, parts: &[&Shamir<Fp>]) -> Result<Shamir<Fp>> {
        Shamir::concat(parts)
    }
    fn mul(&mut self, x: &Shamir<Fp>, y: &Shamir<Fp>) -> Result<Shamir<Fp>> {
        shamir::mul(self.p, x, y)
    }
    fn open(&mut self, x: &Shamir<Fp>) -> Result<Vec<u128>> {
        shamir::reveal(self.p, x)
    }

    fn xor(&self, a: &Rep3Bits, b: &Rep3Bits) -> Result<Rep3Bits> {
        a.xor(b)
    }
    fn not(&self, a: &Rep3Bits) -> Rep3Bits {
        a.not(self.p.id())
    }
    fn xor_public(&self, a: &Rep3Bits, c: &BitVec) -> Result<Rep3Bits> {
        a.xor_public(self.p.id(), c)
    }
    fn slice_bits(&self, b: &Rep3Bits, start: usize, n: usize) -> Result<Rep3Bits> {
        b.slice(start, n)
    }
    fn concat_bits(&self, parts: &[&Rep3Bits]) -> Rep3Bits {
        Rep3Bits::concat(parts)
    }
    fn open_bits(&mut self, b: &Rep3Bits) -> Result<BitVec> {
        rep3::reveal_bits(self.p, b)
    }

    fn greater(&mut self, a: &[u128], r: &[Rep3Bits], or_equal: bool, circuit: Circuit) -> Result<Rep3Bits> {
        let me = self.p.id();
        let n = a.len();
        // per bit j: gt_j = a_j ∧ ¬r_j, eq_j = ¬(a_j ⊕ r_j), both free with a public; bit 0's
        // "greater" is a_0 ∨ ¬r_0 = ¬(¬a_0 ∧ r_0) when equality counts
        let mut groups: Vec<(Rep3Bits, Rep3Bits)> = Vec::with_capacity(r.len());
        for (j, rj) in r.iter().enumerate() {
            let aj = BitVec::from_bools(&(0..n).map(|e| a[e] >> j & 1 == 1).collect::<Vec<_>>());
            let c = if j == 0 && or_equal { rj.and_public(&aj.not())?.not(me) } else { rj.not(me).and_public(&aj)? };
            let eq = rj.xor_public(me, &aj)?.not(me);
            groups.push((c, eq));
        }
        // a ≥ 2^bits for some element: greater than any r of these bits
        let top = BitVec::from_bools(&a.iter().map(|&a| r.len() < 128 && a >> r.len() != 0).collect::<Vec<_>>());
        let mut c = match circuit {
            Circuit::AndNot => tree(self.p, groups)?,
            Circuit::AndXor => ripple(self.p, groups)?,
        };
        // c ∨ top = c ⊕ top ⊕ (c ∧ top), top public
        let both = c.and_public(&top)?;
        c = c.xor_public(me, &top)?.xor(&both)?;
        Ok(c)
    }

    fn dabits(&mut self, n: usize) -> Result<(Shamir<Fp>, Rep3Bits)> {
        let bits = Rep3Bits::from_parts(BitVec::random(self.p.prg.next(), n), BitVec::random(self.p.prg.prev(), n))?;
        let q = rep3::bit_inject(self.p, &bits, &self.field)?;
        Ok((from_rep3(self.p.id(), &q)?, bits))
    }

    fn rand_int(&mut self, bits: u32, n: usize) -> Result<Shamir<Fp>> {
        let below = |prg: &mut argus_prg::Prg| -> Vec<u128> {
            (0..n)
                .map(|_| {
                    let x = u128::from(prg.next_u64()) << 64 | u128::from(prg.next_u64());
                    if bits >= 128 {
                        x
                    } else {
                        x & ((1 << bits) - 1)
                    }
                })
                .collect()
        };
        let a = below(self.p.prg.next());
        let b = below(self.p.prg.prev());
        from_rep3(self.p.id(), &Rep3::from_parts(self.field, a, b)?)
    }
}

/// The log-depth comparator (`AndNot`): pairs of adjacent groups, low and high, merge into
/// `(c_hi ⊕ eq_hi ∧ c_lo, eq_hi ∧ eq_lo)`, every AND of a layer in one round. The lowest group's
/// `eq` is never needed, and is not computed.
fn tree(p: &mut Party, mut groups: Vec<(Rep3Bits, Rep3Bits)>) -> Result<Rep3Bits> {
    while groups.len() > 1 {
        let pairs = groups.len() / 2;
        let mut ands: Vec<(&Rep3Bits, &Rep3Bits)> = Vec::with_capacity(2 * pairs);
        for g in 0..pairs {
            let (lo, hi) = (&groups[2 * g], &groups[2 * g + 1]);
            ands.push((&hi.1, &lo.0));
            if g > 0 {
                ands.push((&hi.1, &lo.1));
            }
        }
        let mut out = rep3::and_many(p, &ands)?.into_iter();
        let mut next = Vec::with_capacity(groups.len().div_ceil(2));
        for g in 0..pairs {
            let carry = out.next().expect("one AND per pair");
            let c = groups[2 * g + 1].0.xor(&carry)?;
            let eq = if g > 0 { out.next().expect("and its eq") } else { Rep3Bits::zeros(c.len()) };
            next.push((c, eq));
        }
        if groups.len() % 2 == 1 {
            next.push(groups.pop().expect("the odd group"));
        }
        groups = next;
    }
    Ok(groups.pop().map(|g| g.0).unwrap_or_else(|| Rep3Bits::zeros(0)))
}

/// The comparator as synthesised (`AndXor`): `c ← c_j ⊕ eq_j ∧ c` from bit 1 up, one AND layer
/// per bit.
fn ripple(p: &mut Party, groups: Vec<(Rep3Bits, Rep3Bits)>) -> Result<Rep3Bits> {
    let mut it = groups.into_iter();
    let Some((mut c, _)) = it.next() else { return Ok(Rep3Bits::zeros(0)) };
    for (cj, eqj) in it {
        let carry = rep3::and(p, &eqj, &c)?;
        c = cj.xor(&carry)?;
    }
    Ok(c)
}
