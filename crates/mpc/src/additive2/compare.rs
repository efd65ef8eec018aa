//! Secure comparison with a public threshold, for the threshold step of identification (the
//! paper stops at distances; we return match bits). Boolean Beaver triples from random OT, then
//! the sign of `x − t` by a bit-sliced log-depth comparator.
//!
//! With `x` and `t` in `[0, 2^k)`, `z = x − t` reduced mod `2^(k+1)` has its top bit set exactly
//! when `x < t`. Reduction mod `2^(k+1)` is a ring map from `Z_2^ℓ` (`ℓ > k`), so each party reduces
//! its own share. For shares `z = z_0 + z_1`: `msb(z) = msb(z_0) ⊕ msb(z_1) ⊕ carry`, where the
//! carry out of the low `k` bits is `[low(z_0) > 2^k − 1 − low(z_1)]`: a comparison of party 0's
//! `k`-bit number with party 1's, which a tree of `⌈log₂ k⌉ + 1` AND layers decides (greater
//! and equal flags of halves: `gt = gt_hi ⊕ eq_hi·gt_lo`, `eq = eq_hi·eq_lo`). Every layer is one
//! round for the whole batch; the bits travel 64 instances to a word.

use argus_math::{BitVec, Modulus, Ring, Z64};
use rand_core::RngCore;

use super::exchange;
use super::vole::Ots;
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Random OTs per chunk while making triples: bounds the memory of the OT outputs.
const OT_CHUNK: usize = 1 << 20;

/// XOR shares of bits, 64 to a word, bit `i` of word `w` being instance `64·w + i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedBits {
    /// This party's share, `len` bits (the bits past `len` in the last word are zero).
    pub words: Vec<u64>,
    /// Number of bits.
    pub len: usize,
}

/// One party's shares of boolean Beaver triples `c = a ∧ b`, 64 to a word, consumed in order.
pub struct BitTriples {
    pub(super) a: Vec<u64>,
    pub(super) b: Vec<u64>,
    pub(super) c: Vec<u64>,
    used: usize,
}

impl BitTriples {
    /// `64·words` triples with the other party: two random OTs each, one in each direction (the
    /// cross terms `a_0·b_1` and `a_1·b_0`; an OT's sender bit `lsb(m_0 ⊕ m_1)` times its
    /// receiver's choice is `lsb(m_0) ⊕ lsb(m_c)`).
    pub fn generate(p: &mut Party, ots: &mut Ots, words: usize) -> Result<Self> {
        p.require("two-party additive sharing", 2)?;
        let peer = 1 - p.id();
        let (mut a, mut b, mut c) = (vec![0u64; words], vec![0u64; words], vec![0u64; words]);
        let mut pairs = Vec::new();
        let mut keys = Vec::new();
        for chunk in (0..words).step_by(OT_CHUNK / 64) {
            let end = (chunk + OT_CHUNK / 64).min(words);
            let n = (end - chunk) * 64;
            let choices: Vec<u64> = (chunk..end).map(|_| p.prg.own().next_u64()).collect();
            let bools: Vec<bool> = (0..n).map(|i| choices[i / 64] >> (i % 64) & 1 == 1).collect();
            keys.resize(n, 0);
            pairs.resize(n, [0; 2]);
            let (sender, receiver) = ots.pair();
            receiver.random_into(p.net(), peer, &bools, &mut keys)?;
            sender.random_into(p.net(), peer, &mut pairs)?;
            for (w, i) in (chunk..end).zip(0..) {
                let (mut aw, mut uw, mut vw) = (0u64, 0u64, 0u64);
                for j in 0..64 {
                    let [m0, m1] = pairs[i * 64 + j];
                    aw |= (((m0 ^ m1) & 1) as u64) << j;
                    uw |= ((m0 & 1) as u64) << j;
                    vw |= ((keys[i * 64 + j] & 1) as u64) << j;
                }
                let bw = choices[i];
                (a[w], b[w], c[w]) = (aw, bw, (aw & bw) ^ uw ^ vw);
            }
        }
        Ok(BitTriples { a, b, c, used: 0 })
    }

    /// Both parties' shares of `64·words` triples made by a dealer who knows them (paper 004,
    /// appendix C), drawn from `rng`.
    pub fn deal<G: RngCore + ?Sized>(rng: &mut G, words: usize) -> [Self; 2] {
        let mut draw = || -> Vec<u64> { (0..words).map(|_| rng.next_u64()).collect() };
        let (a0, a1, b0, b1, c0) = (draw(), draw(), draw(), draw(), draw());
        let c1 = (0..words).map(|w| ((a0[w] ^ a1[w]) & (b0[w] ^ b1[w])) ^ c0[w]).collect();
        [BitTriples { a: a0, b: b0, c: c0, used: 0 }, BitTriples { a: a1, b: b1, c: c1, used: 0 }]
    }

    /// Words of triples not yet used.
    pub fn remaining(&self) -> usize {
        self.a.len() - self.used
    }

    fn take(&mut self, words: usize) -> Result<(&[u64], &[u64], &[u64])> {
        if words > self.remaining() {
            return Err(MpcError::InvalidParameter(format!(
                "{words} words of bit triples needed, {} left",
                self.remaining()
            )));
        }
        let r = self.used..self.used + words;
        self.used += words;
        Ok((&self.a[r.clone()], &self.b[r.clone()], &self.c[r]))
    }
}

/// AND gates per comparison of `k`-bit numbers (the tree's shape, see the module notes).
pub fn ands_per_comparison(k: u32) -> usize {
    let (mut ands, mut planes) = (k as usize, k as usize);
    while planes > 1 {
        let pairs = planes / 2;
        let last = planes == 2;
        ands += pairs * if last { 1 } else { 2 };
        planes = planes.div_ceil(2);
    }
    ands
}

/// Words of [`BitTriples`] that [`less_than`] uses for `count` values below `2^k`.
pub fn triple_words(count: usize, k: u32) -> usize {
    count.div_ceil(64) * ands_per_comparison(k)
}

/// AND layers (rounds) of [`less_than`] for values below `2^k`.
pub fn comparison_rounds(k: u32) -> usize {
    1 + (k.max(1) as usize).next_power_of_two().trailing_zeros() as usize
}

/// XOR shares of `[x_i < t]` for shared `x_i` and a public `t`, all in `[0, 2^k)` (a
/// precondition: other values give unspecified bits), over `Z_2^ℓ` with `k < ℓ`.
/// [`comparison_rounds`]`(k)` rounds, [`triple_words`]`(x.len(), k)` words of triples.
pub fn less_than<R: Ring>(
    ring: &R,
    p: &mut Party,
    triples: &mut BitTriples,
    x: &[R::El],
    t: u128,
    k: u32,
) -> Result<SharedBits> {
    p.require("two-party additive sharing", 2)?;
    let ell = match ring.modulus() {
        Modulus::Pow2(ell) => ell,
        m => return Err(MpcError::InvalidParameter(format!("comparison by carries needs Z_2^ℓ, not {m}"))),
    };
    if k == 0 || k >= ell || k >= 128 || t >> k != 0 {
        return Err(MpcError::InvalidParameter(format!(
            "a comparison of {k}-bit values in Z_2^{ell} with threshold {t}: need 0 < k < ℓ and t < 2^k"
        )));
    }
    let me0 = p.id() == 0;
    let low = (1u128 << k) - 1;
    let words = x.len().div_ceil(64);
    // this party's z share mod 2^(k+1): bit planes 0..k of its k-bit operand of the carry test
    // (party 0's bits a_j; party 1 holds ¬b_j, the other input of gt_j = a_j ∧ ¬b_j) and, as
    // plane k, its top bit
    let mut planes: Vec<Vec<u64>> = BitVec::planes_from_fn(x.len(), k as usize + 1, |i| {
        let z = if me0 { ring.to_u128(x[i]).wrapping_sub(t) } else { ring.to_u128(x[i]) };
        let operand = if me0 { z & low } else { low - (z & low) };
        let bits = if me0 { operand } else { !operand & low };
        bits | (z >> k & 1) << k
    })
    .into_iter()
    .map(BitVec::into_words)
    .collect();
    let top = planes.pop().expect("k + 1 planes");
    // layer 0: gt_j = a_j ∧ ¬b_j (shares (a_j, 0) and (0, ¬b_j)), eq_j = a_j ⊕ ¬b_j (free)
    let zero = vec![0u64; words];
    let inputs: Vec<(&[u64], &[u64])> =
        planes.iter().map(|pl| if me0 { (&pl[..], &zero[..]) } else { (&zero[..], &pl[..]) }).collect();
    let mut gt = and_layer(p, triples, &inputs, words)?;
    let mut eq = planes;
    // the tree: (lo, hi) = (2j, 2j + 1); an odd top plane passes through
    while gt.len() > 1 {
        let (pairs, odd) = (gt.len() / 2, gt.len() % 2 == 1);
        let last = gt.len() == 2;
        let mut inputs: Vec<(&[u64], &[u64])> = (0..pairs).map(|j| (&eq[2 * j + 1][..], &gt[2 * j][..])).collect();
        if !last {
            inputs.extend((0..pairs).map(|j| (&eq[2 * j + 1][..], &eq[2 * j][..])));
        }
        let mut out = and_layer(p, triples, &inputs, words)?.into_iter();
        let mut next_gt: Vec<Vec<u64>> = (0..pairs)
            .map(|j| {
                let mut g = out.next().expect("one AND per pair");
                xor_into(&mut g, &gt[2 * j + 1]);
                g
            })
            .collect();
        let mut next_eq: Vec<Vec<u64>> = out.collect();
        if odd {
            next_gt.push(gt.pop().expect("odd plane"));
            next_eq.push(eq.pop().expect("odd plane"));
        }
        (gt, eq) = (next_gt, next_eq);
    }
    let mut bits = gt.pop().expect("k > 0");
    xor_into(&mut bits, &top);
    if x.len() % 64 != 0 {
        let last = words - 1;
        bits[last] &= (1u64 << (x.len() % 64)) - 1;
    }
    Ok(SharedBits { words: bits, len: x.len() })
}

/// Opens shared bits to both parties (one round).
pub fn reveal_bits(p: &mut Party, x: &SharedBits) -> Result<Vec<bool>> {
    p.require("two-party additive sharing", 2)?;
    let other = exchange(&Z64::new(), p, &x.words)?;
    Ok((0..x.len).map(|i| (x.words[i / 64] ^ other[i / 64]) >> (i % 64) & 1 == 1).collect())
}

fn xor_into(dst: &mut [u64], src: &[u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Shares of `x ∧ y` for every pair of shared `words`-word planes, with one Beaver triple per
/// bit: open `d = x ⊕ a` and `e = y ⊕ b` (one message each way for the whole layer), then
/// `x ∧ y = c ⊕ d·b ⊕ e·a ⊕ d·e`, the last term added by party 0 alone.
fn and_layer(
    p: &mut Party,
    triples: &mut BitTriples,
    inputs: &[(&[u64], &[u64])],
    words: usize,
) -> Result<Vec<Vec<u64>>> {
    let me0 = p.id() == 0;
    let (a, b, c) = triples.take(inputs.len() * words)?;
    let mut mine = Vec::with_capacity(2 * inputs.len() * words);
    for (g, (x, y)) in inputs.iter().enumerate() {
        let r = g * words..(g + 1) * words;
        mine.extend(x.iter().zip(&a[r.clone()]).map(|(x, a)| x ^ a));
        mine.extend(y.iter().zip(&b[r]).map(|(y, b)| y ^ b));
    }
    let other = exchange(&Z64::new(), p, &mine)?;
    Ok((0..inputs.len())
        .map(|g| {
            let (d0, e0) = (g * 2 * words, (g * 2 + 1) * words);
            (0..words)
                .map(|w| {
                    let (d, e) = (mine[d0 + w] ^ other[d0 + w], mine[e0 + w] ^ other[e0 + w]);
                    let i = g * words + w;
                    let z = c[i] ^ (d & b[i]) ^ (e & a[i]);
                    if me0 {
                        z ^ (d & e)
                    } else {
                        z
                    }
                })
                .collect()
        })
        .collect())
}
