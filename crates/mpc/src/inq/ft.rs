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

use std::collections::VecDeque;

use argus_math::{BitVec, Fp, Ring};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;
use sha2::{Digest, Sha256};

use super::{Abb, BoolCircuit};
use crate::additive2::Ots;
use crate::error::{MpcError, Result};
use crate::garble::{self, Wire};
use crate::gmw::Gate;
use crate::party::Party;

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

/// One chunk of a circuit garbled ahead: the garbler's input labels of 0 and output labels of 0
/// (empty at the evaluator), the evaluator's rows (empty at the garbler).
struct Chunk {
    fresh: Vec<Vec<u128>>,
    outputs: Vec<Wire>,
    rows: Vec<u128>,
}

/// A circuit garbled ahead, per chunk of instances.
struct Garbled {
    circuit: BoolCircuit,
    n: usize,
    tweak: u64,
    chunks: Vec<Chunk>,
}

/// COPE (correlated oblivious product evaluation; MASCOT's authentication): shares of `α_j·x`
/// for the peer's key share `α_j` and this party's `x`, both ways.
struct Cope {
    /// As the key holder: one stream per bit of α, the key of the OT it chose.
    keys: Vec<Prg>,
    /// As the authenticator: both streams per bit of the peer's α.
    pairs: Vec<(Prg, Prg)>,
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

    /// MAC shares of `x = mine + peer's` (the peer calls with as many elements): COPE both ways.
    fn authenticate(&mut self, mine: &[u128]) -> Result<Vec<u128>> {
        let f = self.field;
        let w = f.bits() as usize;
        let peer = self.peer();
        let mut macs = Vec::with_capacity(mine.len());
        let (mut g0, mut g1) = (vec![0u128; CHUNK], vec![0u128; CHUNK]);
        for x in mine.chunks(CHUNK) {
            let n = x.len();
            // as the authenticator: u_t = G(k_t0) − G(k_t1) + x; my share −Σ 2^t·G(k_t0)
            let mut u = Vec::with_capacity(w * n);
            let mut s = vec![0u128; n];
            for (k0, k1) in self.cope.pairs.iter_mut().rev() {
                f.sample_into(k0, &mut g0[..n]);
                f.sample_into(k1, &mut g1[..n]);
                for i in 0..n {
                    u.push(f.add(f.sub(g0[i], g1[i]), x[i]));
                    s[i] = f.add(f.add(s[i], s[i]), g0[i]);
                }
            }
            self.p.send_elems(&f, peer, &u)?;
            // as the key holder: Σ 2^t·(G(k_{t,α_t}) + α_t·u_t) = Σ 2^t·G(k_t0) + α·x_peer
            let got = self.p.recv_elems(&f, peer, w * n)?;
            let mut acc = vec![0u128; n];
            for (t, key) in self.cope.keys.iter_mut().enumerate().rev() {
                f.sample_into(key, &mut g0[..n]);
                let chose = self.alpha >> t & 1 == 1;
                let row = &got[(w - 1 - t) * n..][..n];
                for i in 0..n {
                    let term = if chose { f.add(g0[i], row[i]) } else { g0[i] };
                    acc[i] = f.add(f.add(acc[i], acc[i]), term);
                }
            }
            macs.extend((0..n).map(|i| f.add(f.sub(f.mul(self.alpha, x[i]), s[i]), acc[i])));
        }
        Ok(macs)
    }

    fn authenticated(&mut self, v: Vec<u128>) -> Result<Spdz> {
        let m = self.authenticate(&v)?;
        Ok(Spdz { v, m })
    }

    /// `n` Beaver triples `(a, b, a·b)`: Gilboa's product for the cross terms, COPE for the MACs.
    fn make_triples(&mut self, n: usize) -> Result<[Spdz; 3]> {
        let f = self.field;
        let (mut a, mut b, mut c) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let peer = self.peer();
        for at in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            let xa = f.sample_vec(&mut self.rng, len);
            let xb = f.sample_vec(&mut self.rng, len);
            let ys: Vec<(&[u128], usize)> = xa.chunks(1).map(|y| (y, 1)).collect();
            let xs: Vec<(&[u128], usize)> = xb.chunks(1).map(|x| (x, 1)).collect();
            let (got, sent) = argus_ot::vole::cross(&f, self.p.net(), peer, self.ots.pair(), &ys, &xs)?;
            for i in 0..len {
                c.push(f.add(f.mul(xa[i], xb[i]), f.add(got[i][0], sent[i][0])));
            }
            a.extend(xa);
            b.extend(xb);
        }
        #[cfg(test)]
        if std::mem::take(&mut self.corrupt_triples) {
            c[0] = f.add(c[0], 1);
        }
        let all: Vec<u128> = a.iter().chain(&b).chain(&c).copied().collect();
        let m = self.authenticate(&all)?;
        let part = |i: usize, v: Vec<u128>| Spdz { v, m: m[i * n..(i + 1) * n].to_vec() };
        Ok([part(0, a), part(1, b), part(2, c)])
    }

    /// `n` checked triples (MASCOT's sacrifice, after SPDZ): `2n` made, the second half `(f, g,
    /// h)` spent checking the first: with a joint random `r`, open `ρ = r·a − f` and `σ = b − g`;
    /// `r·c − h − σ·f − ρ·g − σ·ρ` must open to 0 and the MAC check pass. An error a party
    /// slipped into a product (`c = a·b + e`) survives only if it guessed `r`.
    fn checked_triples(&mut self, n: usize) -> Result<[Spdz; 3]> {
        let f = self.field;
        let [a, b, c] = self.make_triples(2 * n)?;
        let halves = |s: &Spdz| (cut(s, 0, n), cut(s, n, n));
        let ((a, fa), (b, gb), (c, hc)) = (halves(&a), halves(&b), halves(&c));
        let r = self.coin()?;
        let rho_sigma = self.open(&self.concat(&[&self.sub(&self.scale(&a, r), &fa)?, &self.sub(&b, &gb)?])?)?;
        let (rho, sigma) = rho_sigma.split_at(n);
        let t = self.sub(&self.scale(&c, r), &hc)?;
        let t = self.sub(&t, &self.mul_public(&fa, sigma)?)?;
        let t = self.sub(&t, &self.mul_public(&gb, rho)?)?;
        let sr: Vec<u128> = sigma.iter().zip(rho).map(|(&s, &r)| f.mul(s, r)).collect();
        let t = self.sub(&t, &self.constant(&sr))?;
        if let Some(i) = self.open(&t)?.iter().position(|&z| z != 0) {
            return Err(MpcError::Abort(format!("a Beaver triple failed its sacrifice (triple {i})")));
        }
        self.check()?;
        Ok([a, b, c])
    }

    /// A field element both parties draw together: each sends the hash of a fresh seed, then the
    /// seed (checked against its hash); the element comes from both seeds. Two rounds.
    fn coin(&mut self) -> Result<u128> {
        let peer = self.peer();
        let mut mine = [0u8; 16];
        self.rng.fill_bytes(&mut mine);
        let commit = |seed: &[u8]| Sha256::new().chain_update(b"argus ft coin").chain_update(seed).finalize().to_vec();
        self.p.net().send(peer, commit(&mine))?;
        let theirs_commit = self.p.net().recv(peer)?;
        self.p.net().send(peer, mine.to_vec())?;
        let theirs = self.p.net().recv(peer)?;
        if theirs.len() != 16 || commit(&theirs) != theirs_commit {
            return Err(MpcError::Abort(format!("party {peer} opened a seed that is not the one it committed to")));
        }
        let seed: [u8; 16] = std::array::from_fn(|i| mine[i] ^ theirs[i]);
        Ok(self.field.sample(&mut Prg::new(&Seed(seed))))
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

    fn zero_labels(&mut self, n: usize) -> Vec<u128> {
        (0..n).map(|_| u128::from(self.rng.next_u64()) << 64 | u128::from(self.rng.next_u64())).collect()
    }

    fn wire_to_labels(&self, w: Wire) -> Vec<u128> {
        match w {
            Wire::Labels(l) => l,
            // a public bit v: the garbler holds v·Δ, the evaluator 0
            Wire::Public(b) => (0..b.len()).map(|i| if b.get(i) { self.delta } else { 0 }).collect(),
        }
    }

    /// Garbles (or evaluates) `c` now on the public and shared inputs: one message from the
    /// garbler per chunk of instances.
    fn evaluate_online(
        &mut self,
        c: &BoolCircuit,
        public: &[BitVec],
        shared: &[Labels],
        n: usize,
    ) -> Result<Vec<Labels>> {
        let peer = self.peer();
        let mut outs: Vec<Vec<u128>> = vec![Vec::with_capacity(n); c.outputs()];
        for at in (0..n.max(1)).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            let inputs = inputs_of(c, public, shared, at, len)?;
            let got = if self.garbler() {
                let mut rows = Vec::new();
                let got = self.gc.garble(c, inputs, len, self.delta, &mut rows)?;
                let bytes: Vec<u8> = rows.iter().flat_map(|r| r.to_le_bytes()).collect();
                self.p.net().send(peer, bytes)?;
                got
            } else {
                let rows = blocks(peer, self.p.net().recv(peer)?)?;
                self.gc.evaluate(c, inputs, len, &rows)?
            };
            for (o, w) in outs.iter_mut().zip(got) {
                o.extend(self.wire_to_labels(w));
            }
        }
        Ok(outs.into_iter().map(Labels).collect())
    }

    /// Evaluates a circuit garbled ahead: the garbler sends the public inputs' active labels and
    /// the offsets from the shared inputs' labels to the fresh ones it garbled with (`Z ⊕ F`, with
    /// the same Δ), one message per chunk; the evaluator evaluates the rows it holds.
    fn evaluate_ahead(&mut self, g: Garbled, public: &[BitVec], shared: &[Labels]) -> Result<Vec<Labels>> {
        let peer = self.peer();
        let circuit = g.circuit;
        let mut gc = garble::Session::at(g.tweak);
        let sources = sources(&circuit);
        let mut outs: Vec<Vec<u128>> = Vec::new();
        for (chunk, Chunk { fresh, outputs: out0, rows }) in g.chunks.into_iter().enumerate() {
            let at = chunk * CHUNK;
            let len = CHUNK.min(g.n - at);
            let got: Vec<Wire> = if self.garbler() {
                let mut msg = Vec::with_capacity(16 * len * sources.len());
                for (f, &(party, idx)) in fresh.iter().zip(&sources) {
                    for (i, &f) in f.iter().enumerate() {
                        let l = if party == 0 {
                            f ^ if public[idx].get(at + i) { self.delta } else { 0 }
                        } else {
                            f ^ shared[idx].0[at + i]
                        };
                        msg.extend_from_slice(&l.to_le_bytes());
                    }
                }
                self.p.net().send(peer, msg)?;
                out0
            } else {
                let got = blocks(peer, self.p.net().recv(peer)?)?;
                if got.len() != len * sources.len() {
                    return Err(MpcError::Malformed {
                        peer,
                        reason: format!("{} input labels, expected {}", got.len(), len * sources.len()),
                    });
                }
                let inputs = sources
                    .iter()
                    .enumerate()
                    .map(|(w, &(party, idx))| {
                        let recv = &got[w * len..(w + 1) * len];
                        Wire::Labels(if party == 0 {
                            recv.to_vec()
                        } else {
                            recv.iter().zip(&shared[idx].0[at..at + len]).map(|(r, m)| r ^ m).collect()
                        })
                    })
                    .collect();
                gc.evaluate(&circuit, inputs, len, &rows)?
            };
            if outs.is_empty() {
                outs = vec![Vec::with_capacity(g.n); got.len()];
            }
            for (o, w) in outs.iter_mut().zip(got) {
                o.extend(self.wire_to_labels(w));
            }
        }
        Ok(outs.into_iter().map(Labels).collect())
    }
}

/// For each INPUT gate of `c` in order: its party and its index among that party's inputs.
fn sources(c: &BoolCircuit) -> Vec<(usize, usize)> {
    let mut count = [0usize; 2];
    c.gates()
        .iter()
        .filter_map(|g| match g {
            Gate::Input { party, .. } => {
                let p = (*party).min(1);
                count[p] += 1;
                Some((p, count[p] - 1))
            }
            _ => None,
        })
        .collect()
}

/// Blocks of a message of 16-byte labels.
fn blocks(peer: usize, bytes: Vec<u8>) -> Result<Vec<u128>> {
    if !bytes.len().is_multiple_of(16) {
        return Err(MpcError::Malformed { peer, reason: format!("{} bytes are not whole labels", bytes.len()) });
    }
    Ok(bytes.chunks_exact(16).map(|b| u128::from_le_bytes(b.try_into().expect("16 bytes"))).collect())
}

fn cut(s: &Spdz, start: usize, n: usize) -> Spdz {
    Spdz { v: s.v[start..start + n].to_vec(), m: s.m[start..start + n].to_vec() }
}

/// The inputs of `c` for instances `at..at + len`: public planes for party 0's INPUT gates,
/// labels for party 1's, in gate order.
fn inputs_of(c: &BoolCircuit, public: &[BitVec], shared: &[Labels], at: usize, len: usize) -> Result<Vec<Wire>> {
    let (mut pi, mut si) = (public.iter(), shared.iter());
    c.gates()
        .iter()
        .filter_map(|g| if let Gate::Input { party, .. } = g { Some(*party) } else { None })
        .map(|party| {
            let short = || MpcError::InvalidParameter("fewer input planes than the circuit has inputs".into());
            Ok(if party == 0 {
                Wire::Public(pi.next().ok_or_else(short)?.slice(at, len)?)
            } else {
                Wire::Labels(si.next().ok_or_else(short)?.0[at..at + len].to_vec())
            })
        })
        .collect()
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
    /// The evaluator sends its labels, the garbler the lowest bits of its labels of 0; the
    /// garbler refuses a label that is neither of its wire's two ([`MpcError::Abort`]).
    fn open_bits(&mut self, b: &Labels) -> Result<BitVec> {
        let peer = self.peer();
        let n = b.len();
        if self.garbler() {
            let lsbs = BitVec::from_bools(&b.0.iter().map(|&z| z & 1 == 1).collect::<Vec<_>>());
            self.p.net().send(peer, lsbs.to_bytes())?;
            let got = blocks(peer, self.p.net().recv(peer)?)?;
            if got.len() != n {
                return Err(MpcError::Malformed { peer, reason: format!("{} labels, expected {n}", got.len()) });
            }
            let mut out = BitVec::zeros(n);
            for (i, (&z, &l)) in b.0.iter().zip(&got).enumerate() {
                if l == z ^ self.delta {
                    out.set(i, true);
                } else if l != z {
                    return Err(MpcError::Abort(format!(
                        "party {peer} opened a label that is not on its wire (bit {i})"
                    )));
                }
            }
            Ok(out)
        } else {
            let bytes: Vec<u8> = b.0.iter().flat_map(|l| l.to_le_bytes()).collect();
            self.p.net().send(peer, bytes)?;
            let got = self.p.net().recv(peer)?;
            let lsbs = BitVec::from_bytes(&got, n).map_err(|e| MpcError::Malformed { peer, reason: e.to_string() })?;
            Ok(BitVec::from_bools(&(0..n).map(|i| lsbs.get(i) ^ (b.0[i] & 1 == 1)).collect::<Vec<_>>()))
        }
    }

    fn evaluate(&mut self, c: &BoolCircuit, public: &[BitVec], shared: &[Labels]) -> Result<Vec<Labels>> {
        let n = public.first().map(BitVec::len).or_else(|| shared.first().map(Labels::len)).unwrap_or(0);
        if public.iter().any(|p| p.len() != n) || shared.iter().any(|s| s.len() != n) {
            return Err(MpcError::InvalidParameter("input planes of different lengths".into()));
        }
        let ready = self.ahead.front().is_some_and(|g| g.n == n && g.circuit.gates() == c.gates());
        match self.ahead.pop_front() {
            Some(g) if ready => self.evaluate_ahead(g, public, shared),
            other => {
                if let Some(g) = other {
                    self.ahead.push_front(g);
                }
                self.evaluate_online(c, public, shared, n)
            }
        }
    }

    /// In FT(OG), garbles `c` for `n` instances now on fresh input labels and sends the rows.
    fn prepare(&mut self, c: &BoolCircuit, n: usize) -> Result<()> {
        if self.garbling == Garbling::Online {
            return Ok(());
        }
        let peer = self.peer();
        let tweak = self.gc.tweak();
        let inputs = sources(c).len();
        let mut chunks = Vec::with_capacity(n.div_ceil(CHUNK));
        for at in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            if self.garbler() {
                let fresh: Vec<Vec<u128>> = (0..inputs).map(|_| self.zero_labels(len)).collect();
                let mut rows = Vec::new();
                let wires = fresh.iter().map(|f| Wire::Labels(f.clone())).collect();
                let out = self.gc.garble(c, wires, len, self.delta, &mut rows)?;
                let bytes: Vec<u8> = rows.iter().flat_map(|r| r.to_le_bytes()).collect();
                self.p.net().send(peer, bytes)?;
                chunks.push(Chunk { fresh, outputs: out, rows: Vec::new() });
            } else {
                let rows = blocks(peer, self.p.net().recv(peer)?)?;
                self.gc.skip(c, len);
                chunks.push(Chunk { fresh: Vec::new(), outputs: Vec::new(), rows });
            }
        }
        self.ahead.push_back(Garbled { circuit: c.clone(), n, tweak, chunks });
        Ok(())
    }

    fn prepare_products(&mut self, n: usize) -> Result<()> {
        let fresh = self.checked_triples(n)?;
        self.triples = Some(match self.triples.take() {
            Some(old) => {
                let join = |a: &Spdz, b: &Spdz| Spdz {
                    v: a.v.iter().chain(&b.v).copied().collect(),
                    m: a.m.iter().chain(&b.m).copied().collect(),
                };
                [join(&old[0], &fresh[0]), join(&old[1], &fresh[1]), join(&old[2], &fresh[2])]
            }
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

    /// daBits from three OTs on the parties' random bits `r_0` (garbler) and `r_1`: `b = r_0 ⊕
    /// r_1 = r_0 + r_1 − 2·r_0·r_1`, its MAC `α·b` from the cross terms `r_0·r_1`, `α_0·r_1`,
    /// `α_0·r_0·r_1` (the evaluator choosing by `r_1`) and `α_1·r_0`, `α_1·r_1·r_0` (the garbler
    /// by `r_0`); the first OT, correlated by Δ, gives the label of `r_1`.
    fn dabits(&mut self, n: usize) -> Result<(Spdz, Labels)> {
        let f = self.field;
        let peer = self.peer();
        let net = self.p.net();
        let mine = BitVec::random(&mut self.rng, n).to_bools();
        let bit = |b: bool| u128::from(b);
        let (sender, receiver) = self.ots.pair();
        // shares of (r_0·r_1, α_0·r_1, α_0·r_0·r_1) and (α_1·r_0, α_1·r_1·r_0)
        let (by_r1, by_r0): (Vec<[u128; 3]>, Vec<[u128; 2]>);
        let labels;
        if self.p.id() == 0 {
            let z = sender.correlated(net, peer, &vec![self.delta; n])?;
            let pairs = sender.random(net, peer, n)?;
            let keys = receiver.random(net, peer, &mine)?;
            let alpha = self.alpha;
            let (d, shares) = send_correlations(&f, &pairs, |e| {
                let r0 = bit(mine[e]);
                [r0, alpha, f.mul(alpha, r0)]
            });
            by_r1 = shares;
            self.p.send_elems(&f, peer, &d)?;
            by_r0 = receive_correlations(&f, &keys, &mine, &self.p.recv_elems(&f, peer, 2 * n)?);
            labels = z.iter().zip(&mine).map(|(&z, &r)| if r { z ^ self.delta } else { z }).collect();
        } else {
            let l = receiver.correlated(net, peer, &mine)?;
            let keys = receiver.random(net, peer, &mine)?;
            let pairs = sender.random(net, peer, n)?;
            let alpha = self.alpha;
            let (d, shares) = send_correlations(&f, &pairs, |e| [alpha, f.mul(alpha, bit(mine[e]))]);
            by_r0 = shares;
            self.p.send_elems(&f, peer, &d)?;
            by_r1 = receive_correlations(&f, &keys, &mine, &self.p.recv_elems(&f, peer, 3 * n)?);
            labels = l;
        }
        let two = f.from_u128(2);
        let mut v = Vec::with_capacity(n);
        let mut m = Vec::with_capacity(n);
        for e in 0..n {
            let r = bit(mine[e]);
            let [x, y, z] = by_r1[e];
            let [u, w] = by_r0[e];
            v.push(f.sub(r, f.mul(two, x)));
            let mac = f.add(f.add(f.mul(self.alpha, r), y), u);
            m.push(f.sub(mac, f.mul(two, f.add(z, w))));
        }
        Ok((Spdz { v, m }, Labels(labels)))
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

/// The sender's side of OTs of `W` field elements on random OTs `pairs`: the corrections
/// `d = G(k_0) − G(k_1) + corr(e)` per OT (to send) and its shares `−G(k_0)`.
fn send_correlations<const W: usize>(
    f: &Fp,
    pairs: &[[u128; 2]],
    corr: impl Fn(usize) -> [u128; W],
) -> (Vec<u128>, Vec<[u128; W]>) {
    let mut d = Vec::with_capacity(W * pairs.len());
    let shares = pairs
        .iter()
        .enumerate()
        .map(|(e, [k0, k1])| {
            let (mut g0, mut g1) = ([0u128; W], [0u128; W]);
            f.sample_into(&mut seed(*k0), &mut g0);
            f.sample_into(&mut seed(*k1), &mut g1);
            let c = corr(e);
            for t in 0..W {
                d.push(f.add(f.sub(g0[t], g1[t]), c[t]));
            }
            g0.map(|g| f.neg(g))
        })
        .collect();
    (d, shares)
}

/// The receiver's side of [`send_correlations`]: `G(k) + c·d` per OT, `k` the key it chose by `c`.
fn receive_correlations<const W: usize>(f: &Fp, keys: &[u128], choices: &[bool], d: &[u128]) -> Vec<[u128; W]> {
    keys.iter()
        .enumerate()
        .map(|(e, &k)| {
            let mut g = [0u128; W];
            f.sample_into(&mut seed(k), &mut g);
            for t in 0..W {
                if choices[e] {
                    g[t] = f.add(g[t], d[W * e + t]);
                }
            }
            g
        })
        .collect()
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
