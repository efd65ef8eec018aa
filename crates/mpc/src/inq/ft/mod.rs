//! The FT setting of paper 002: two parties, dishonest majority. F_q values are SPDZ shares —
//! additive shares `x = x_0 + x_1` with information-theoretic MACs `m_0 + m_1 = α·x` under a
//! key `α = α_0 + α_1` nobody knows — and F_2 values are the wire labels of a garbled circuit
//! ([`crate::garble`]; party 0 garbles, party 1 evaluates), so that the bitwise comparisons are
//! garbled circuits with free-XOR and half-gates, online (`FT`) or garbled ahead (`FT(OG)`).
//!
//! Preprocessing comes from OT ([`argus_ot::iknp`]), in the manner of MASCOT (Keller, Orsini,
//! Scholl 2016): a value is authenticated by COPE (α's bits chose one random OT per bit once;
//! each value then costs `⌈log₂ q⌉` elements); Beaver triples by Gilboa's product, each checked
//! by sacrificing another; a daBit from
//! three OTs on the parties' random bits `r_0, r_1`, the first of which, correlated by the
//! garbler's `Δ`, also hands the evaluator the wire label of `r_1`. Bounded random integers are
//! each party's own, authenticated.
//!
//! Every opening is remembered (its values hashed into a transcript, its MAC shares folded with
//! coefficients drawn from it); [`Abb::check`] compares the folded sums in one round — hashes
//! of `σ_0` and `−σ_1` — and ends the session with [`MpcError::Abort`] if a party changed a
//! share. A label the evaluator opens is checked by the garbler against its wire at once.
//! Semi-honest where the paper's FT is not: the daBits (no check that a party used one bit for
//! both sides) and the garbler (Yao's protocol; HSS17's authenticated garbling is not built).

mod garbling;
mod offline;

use std::collections::VecDeque;

use argus_math::{BitVec, Fp, Ring};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;
use sha2::{Digest, Sha256};

use super::{Abb, BoolCircuit};
use crate::additive2::Ots;
use crate::error::{MpcError, Result};
use crate::garble;
use crate::party::Party;
use garbling::Garbled;
use offline::Cope;

/// Instances garbled per message (bounds the memory of a wide batch).
const CHUNK: usize = 4096;

/// SPDZ shares of an F_q vector: values and MAC shares.
#[derive(Clone, Debug)]
pub struct Spdz {
    v: Vec<u128>,
    m: Vec<u128>,
}

impl Spdz {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.v.len()
    }
    /// No elements.
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
    /// This party's value shares (for tests that play a cheating party).
    pub fn values_mut(&mut self) -> &mut [u128] {
        &mut self.v
    }
}

/// Wire labels of an F_2 vector: the garbler's labels of 0 or the evaluator's active labels.
#[derive(Clone, Debug)]
pub struct Labels(Vec<u128>);

impl Labels {
    /// The number of bits.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// No bits.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// When the bitwise circuits are garbled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Garbling {
    /// After the opening, with the public bits folded in (the paper's FT).
    Online,
    /// Ahead, when [`Abb::prepare`] announces the circuit (the paper's FT(OG)): online only the
    /// input labels travel.
    Offline,
}

/// The black box of the FT setting over a session of two parties.
pub struct FtAbb<'p> {
    p: &'p mut Party,
    field: Fp,
    ots: Ots,
    rng: Prg,
    alpha: u128,
    cope: Cope,
    /// The garbler's Δ (lowest bit 1); 0 at the evaluator.
    delta: u128,
    gc: garble::Session,
    garbling: Garbling,
    ahead: VecDeque<Garbled>,
    triples: Option<[Spdz; 3]>,
    /// Hash of every opened value so far, and the folded MAC differences since the last check.
    transcript: [u8; 32],
    sigma: u128,
    /// Tests: this party adds 1 to its share of the next triples' first product.
    #[cfg(test)]
    pub(crate) corrupt_triples: bool,
}

fn seed(key: u128) -> Prg {
    Prg::new(&Seed(key.to_le_bytes()))
}

impl<'p> FtAbb<'p> {
    /// The setting over `p`'s session (two parties) and F_q = `field`: the base OTs, the MAC key
    /// and its COPE streams.
    pub fn new(p: &'p mut Party, field: Fp, garbling: Garbling) -> Result<Self> {
        p.require("the FT setting of paper 002", 2)?;
        let mut ots = Ots::setup(p)?;
        let mut rng = Prg::new(&p.prg.own().fork());
        let alpha = field.sample(&mut rng);
        let peer = 1 - p.id();
        let w = field.bits() as usize;
        let choices: Vec<bool> = (0..w).map(|t| alpha >> t & 1 == 1).collect();
        let (sender, receiver) = ots.pair();
        let keys = receiver.random(p.net(), peer, &choices)?;
        let pairs = sender.random(p.net(), peer, w)?;
        let cope = Cope {
            keys: keys.into_iter().map(seed).collect(),
            pairs: pairs.into_iter().map(|[a, b]| (seed(a), seed(b))).collect(),
        };
        let delta = if p.id() == 0 { rng.next_u64() as u128 | u128::from(rng.next_u64()) << 64 | 1 } else { 0 };
        Ok(FtAbb {
            p,
            field,
            ots,
            rng,
            alpha,
            cope,
            delta,
            gc: garble::Session::new(),
            garbling,
            ahead: VecDeque::new(),
            triples: None,
            transcript: [0; 32],
            sigma: 0,
            #[cfg(test)]
            corrupt_triples: false,
        })
    }

    /// The session.
    pub fn party(&mut self) -> &mut Party {
        self.p
    }

    /// Authenticated shares of `x = Σ mine`: each party passes its additive part (a party that
    /// inputs a vector passes it, the other zeros; both as many elements).
    pub fn input(&mut self, mine: &[u128]) -> Result<Spdz> {
        if let Some(bad) = mine.iter().find(|&&v| v >= self.field.p()) {
            return Err(MpcError::InvalidParameter(format!("{bad} is not an element of F_{}", self.field.p())));
        }
        self.authenticated(mine.to_vec())
    }

    fn peer(&self) -> usize {
        1 - self.p.id()
    }

    fn garbler(&self) -> bool {
        self.p.id() == 0
    }

    fn take_triples(&mut self, n: usize) -> Result<[Spdz; 3]> {
        let have = self.triples.as_ref().map_or(0, |t| t[0].len());
        if have < n {
            self.prepare_products(n - have)?;
        }
        let pool = self.triples.take().expect("made above");
        let split = |s: &Spdz| (cut(s, 0, n), cut(s, n, s.len() - n));
        let (a, ra) = split(&pool[0]);
        let (b, rb) = split(&pool[1]);
        let (c, rc) = split(&pool[2]);
        self.triples = Some([ra, rb, rc]);
        Ok([a, b, c])
    }

    /// Remembers an opening for the MAC check: the values extend the transcript, and
    /// `Σ χ_j·(m_j − α_i·a_j)` with `χ` drawn from it joins `σ`.
    fn remember(&mut self, values: &[u128], macs: &[u128]) {
        let f = self.field;
        let mut h = Sha256::new();
        h.update(self.transcript);
        for v in values {
            h.update(v.to_le_bytes());
        }
        self.transcript = h.finalize().into();
        let mut chi = Prg::new(&Seed(self.transcript[..16].try_into().expect("16 bytes")));
        for (&a, &m) in values.iter().zip(macs) {
            let c = f.sample(&mut chi);
            self.sigma = f.add(self.sigma, f.mul(c, f.sub(m, f.mul(self.alpha, a))));
        }
    }

    fn digest(&self, party: usize, sigma: u128) -> Vec<u8> {
        let mut h = Sha256::new();
        h.update(b"argus ft mac check");
        h.update([party as u8]);
        h.update(sigma.to_le_bytes());
        h.update(self.transcript);
        h.finalize().to_vec()
    }
}

fn cut(s: &Spdz, start: usize, n: usize) -> Spdz {
    Spdz { v: s.v[start..start + n].to_vec(), m: s.m[start..start + n].to_vec() }
}

impl Abb for FtAbb<'_> {
    type Arith = Spdz;
    type Bits = Labels;

    fn field(&self) -> &Fp {
        &self.field
    }
    fn stats(&self) -> argus_net::Stats {
        self.p.stats()
    }
    fn len(&self, x: &Spdz) -> usize {
        x.len()
    }
    fn constant(&self, c: &[u128]) -> Spdz {
        let f = self.field;
        let v = if self.garbler() { c.to_vec() } else { vec![0; c.len()] };
        Spdz { v, m: c.iter().map(|&c| f.mul(self.alpha, c)).collect() }
    }
    fn add(&self, x: &Spdz, y: &Spdz) -> Result<Spdz> {
        zip(x, y, |a, b| self.field.add(a, b))
    }
    fn sub(&self, x: &Spdz, y: &Spdz) -> Result<Spdz> {
        zip(x, y, |a, b| self.field.sub(a, b))
    }
    fn scale(&self, x: &Spdz, c: u128) -> Spdz {
        let f = self.field;
        Spdz { v: x.v.iter().map(|&a| f.mul(a, c)).collect(), m: x.m.iter().map(|&a| f.mul(a, c)).collect() }
    }
    fn mul_public(&self, x: &Spdz, c: &[u128]) -> Result<Spdz> {
        if c.len() != x.len() {
            return Err(MpcError::LengthMismatch { left: x.len(), right: c.len() });
        }
        let f = self.field;
        Ok(Spdz {
            v: x.v.iter().zip(c).map(|(&a, &c)| f.mul(a, c)).collect(),
            m: x.m.iter().zip(c).map(|(&a, &c)| f.mul(a, c)).collect(),
        })
    }
    fn slice(&self, x: &Spdz, start: usize, n: usize) -> Result<Spdz> {
        if start + n > x.len() {
            return Err(MpcError::LengthMismatch { left: x.len(), right: start + n });
        }
        Ok(cut(x, start, n))
    }
    fn concat(&self, parts: &[&Spdz]) -> Result<Spdz> {
        Ok(Spdz {
            v: parts.iter().flat_map(|p| p.v.iter().copied()).collect(),
            m: parts.iter().flat_map(|p| p.m.iter().copied()).collect(),
        })
    }
    /// Beaver's product with a triple made ahead ([`Abb::prepare_products`]) or now: one
    /// opening of `x − a` and `y − b`.
    fn mul(&mut self, x: &Spdz, y: &Spdz) -> Result<Spdz> {
        if x.len() != y.len() {
            return Err(MpcError::LengthMismatch { left: x.len(), right: y.len() });
        }
        let n = x.len();
        let [a, b, c] = self.take_triples(n)?;
        let de = self.open(&self.concat(&[&self.sub(x, &a)?, &self.sub(y, &b)?])?)?;
        let (d, e) = de.split_at(n);
        let f = self.field;
        let de: Vec<u128> = d.iter().zip(e).map(|(&d, &e)| f.mul(d, e)).collect();
        let z = self.add(&c, &self.mul_public(&b, d)?)?;
        let z = self.add(&z, &self.mul_public(&a, e)?)?;
        self.add(&z, &self.constant(&de))
    }
    fn open(&mut self, x: &Spdz) -> Result<Vec<u128>> {
        let f = self.field;
        let peer = self.peer();
        self.p.send_elems(&f, peer, &x.v)?;
        let other = self.p.recv_elems(&f, peer, x.len())?;
        let values: Vec<u128> = x.v.iter().zip(&other).map(|(&a, &b)| f.add(a, b)).collect();
        self.remember(&values, &x.m);
        Ok(values)
    }

    fn xor(&self, a: &Labels, b: &Labels) -> Result<Labels> {
        if a.len() != b.len() {
            return Err(MpcError::LengthMismatch { left: a.len(), right: b.len() });
        }
        Ok(Labels(a.0.iter().zip(&b.0).map(|(x, y)| x ^ y).collect()))
    }
    fn not(&self, a: &Labels) -> Labels {
        Labels(a.0.iter().map(|&x| x ^ self.delta).collect())
    }
    fn xor_public(&self, a: &Labels, c: &BitVec) -> Result<Labels> {
        if a.len() != c.len() {
            return Err(MpcError::LengthMismatch { left: a.len(), right: c.len() });
        }
        Ok(Labels(a.0.iter().enumerate().map(|(i, &x)| if c.get(i) { x ^ self.delta } else { x }).collect()))
    }
    fn slice_bits(&self, b: &Labels, start: usize, n: usize) -> Result<Labels> {
        if start + n > b.len() {
            return Err(MpcError::LengthMismatch { left: b.len(), right: start + n });
        }
        Ok(Labels(b.0[start..start + n].to_vec()))
    }
    fn concat_bits(&self, parts: &[&Labels]) -> Labels {
        Labels(parts.iter().flat_map(|p| p.0.iter().copied()).collect())
    }

    fn open_bits(&mut self, b: &Labels) -> Result<BitVec> {
        self.open_labels(b)
    }

    fn evaluate(&mut self, c: &BoolCircuit, public: &[BitVec], shared: &[Labels]) -> Result<Vec<Labels>> {
        self.run_circuit(c, public, shared)
    }

    /// In FT(OG), garbles `c` for `n` instances now on fresh input labels and sends the rows.
    fn prepare(&mut self, c: &BoolCircuit, n: usize) -> Result<()> {
        self.garble_ahead(c, n)
    }

    fn prepare_products(&mut self, n: usize) -> Result<()> {
        let fresh = self.checked_triples(n)?;
        self.triples = Some(match self.triples.take() {
            Some(old) => [
                self.concat(&[&old[0], &fresh[0]])?,
                self.concat(&[&old[1], &fresh[1]])?,
                self.concat(&[&old[2], &fresh[2]])?,
            ],
            None => fresh,
        });
        Ok(())
    }

    /// The MAC check of everything opened since the last: hashes of `σ_i` both ways, each
    /// party comparing the peer's with the hash of `−σ_i` (one round).
    fn check(&mut self) -> Result<()> {
        let peer = self.peer();
        let me = self.p.id();
        let sigma = std::mem::take(&mut self.sigma);
        self.p.net().send(peer, self.digest(me, sigma))?;
        let got = self.p.net().recv(peer)?;
        if got != self.digest(peer, self.field.neg(sigma)) {
            return Err(MpcError::Abort("the MAC check failed: a party changed a share".into()));
        }
        Ok(())
    }

    fn dabits(&mut self, n: usize) -> Result<(Spdz, Labels)> {
        self.make_dabits(n)
    }

    /// Each party's own integer below `2^bits`, authenticated: their sum is below `2^(bits+1)`.
    fn rand_int(&mut self, bits: u32, n: usize) -> Result<Spdz> {
        if bits + 2 > self.field.bits() {
            return Err(MpcError::InvalidParameter(format!(
                "{bits}-bit random integers in a {}-bit field",
                self.field.bits()
            )));
        }
        let v: Vec<u128> = (0..n)
            .map(|_| (u128::from(self.rng.next_u64()) << 64 | u128::from(self.rng.next_u64())) & ((1u128 << bits) - 1))
            .collect();
        self.authenticated(v)
    }
}

fn zip(x: &Spdz, y: &Spdz, op: impl Fn(u128, u128) -> u128) -> Result<Spdz> {
    if x.len() != y.len() {
        return Err(MpcError::LengthMismatch { left: x.len(), right: y.len() });
    }
    Ok(Spdz {
        v: x.v.iter().zip(&y.v).map(|(&a, &b)| op(a, b)).collect(),
        m: x.m.iter().zip(&y.m).map(|(&a, &b)| op(a, b)).collect(),
    })
}
