//! FT's preprocessing from OT, in the manner of MASCOT: COPE authentication, Beaver triples by
//! Gilboa's product checked by sacrifice, the coin toss the sacrifice draws from, daBits.

use argus_math::{BitVec, Fp, Ring};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;
use sha2::{Digest, Sha256};

use super::{cut, seed, FtAbb, Labels, Spdz, CHUNK};
use crate::error::{MpcError, Result};
use crate::inq::Abb;

/// COPE (correlated oblivious product evaluation; MASCOT's authentication): shares of `α_j·x`
/// for the peer's key share `α_j` and this party's `x`, both ways.
pub(super) struct Cope {
    /// As the key holder: one stream per bit of α, the key of the OT it chose.
    pub(super) keys: Vec<Prg>,
    /// As the authenticator: both streams per bit of the peer's α.
    pub(super) pairs: Vec<(Prg, Prg)>,
}

impl FtAbb<'_> {
    /// MAC shares of `x = mine + peer's` (the peer calls with as many elements): COPE both ways.
    pub(super) fn authenticate(&mut self, mine: &[u128]) -> Result<Vec<u128>> {
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

    pub(super) fn authenticated(&mut self, v: Vec<u128>) -> Result<Spdz> {
        let m = self.authenticate(&v)?;
        Ok(Spdz { v, m })
    }

    /// `n` Beaver triples `(a, b, a·b)`: Gilboa's product for the cross terms, COPE for the MACs.
    pub(super) fn make_triples(&mut self, n: usize) -> Result<[Spdz; 3]> {
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
    pub(super) fn checked_triples(&mut self, n: usize) -> Result<[Spdz; 3]> {
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
    pub(super) fn coin(&mut self) -> Result<u128> {
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

    /// daBits from three OTs on the parties' random bits `r_0` (garbler) and `r_1`: `b = r_0 ⊕
    /// r_1 = r_0 + r_1 − 2·r_0·r_1`, its MAC `α·b` from the cross terms `r_0·r_1`, `α_0·r_1`,
    /// `α_0·r_0·r_1` (the evaluator choosing by `r_1`) and `α_1·r_0`, `α_1·r_1·r_0` (the garbler
    /// by `r_0`); the first OT, correlated by Δ, gives the label of `r_1`.
    pub(super) fn make_dabits(&mut self, n: usize) -> Result<(Spdz, Labels)> {
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
