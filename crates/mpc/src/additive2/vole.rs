//! Shares of `y ⊗ x` between two parties, the receiver holding `y` (n elements) and the sender
//! `x` (m elements), from random OT: Gilboa's product, paper 004's Fig. 6 (COT-based RsVOLE) over
//! a ring instead of F_2.
//!
//! For each element `y_i` and each of its bits `y_{i,t}` one random OT, the receiver choosing
//! `y_{i,t}`. With keys `k_0, k_1` expanded by the PRG to `G(k_b) ∈ R^m`, the sender sends
//! `d = G(k_0) − G(k_1) + 2^t·x` and keeps `−G(k_0)`; the receiver takes `G(k_c) + c·d`, which is
//! `G(k_0) + c·2^t·x`. Summed over the bits, the two rows add up to `y_i·x`. Cost: `n·bits`
//! random OTs (IKNP: 16 bytes each from the receiver) and `n·bits·m` ring elements from the
//! sender, in two messages.

use argus_math::Ring;
use argus_ot::{iknp, Block};
use argus_prg::{Prg, Seed};

use crate::error::{MpcError, Result};
use crate::party::Party;

/// OT extensions with the other party, in both directions (set up once per session).
pub struct Ots {
    sender: iknp::Sender,
    receiver: iknp::Receiver,
}

impl Ots {
    /// The base OTs and the extensions with the other party of a two-party session.
    pub fn setup(p: &mut Party) -> Result<Self> {
        p.require("two-party additive sharing", 2)?;
        let mut rng = Prg::new(&p.prg.own().fork());
        let (sender, receiver) = iknp::setup_with(p.net(), &[1 - p.id()], &mut rng)?.pop().expect("one peer");
        Ok(Ots { sender, receiver })
    }
}

/// `m` elements of `G(key)`.
fn expand<R: Ring>(ring: &R, key: Block, m: usize) -> Vec<R::El> {
    ring.sample_vec(&mut Prg::new(&Seed(key.to_le_bytes())), m)
}

/// The bits `y_{i,t}` (t below the ring's width) of every element, element by element.
fn bits_of<R: Ring>(ring: &R, y: &[R::El]) -> Vec<bool> {
    let w = ring.bits();
    y.iter().flat_map(|&e| (0..w).map(move |t| ring.to_u128(e) >> t & 1 == 1)).collect()
}

/// Several products at once, both parties at once: this party receives for `ys` (its rows) and
/// sends for `xs` (its columns), while the other does the same. `ys[k]` meets the other party's
/// `xs[k]`, and `xs[k]` its `ys[k]`. Returns this party's shares of every `ys[k] ⊗ x'_k`
/// (receiving) and every `y'_k ⊗ xs[k]` (sending), each row-major with one row per `y`
/// element. Two messages each way (the extension's, then the corrections).
#[allow(clippy::type_complexity)]
pub fn cross<R: Ring>(
    ring: &R,
    p: &mut Party,
    ots: &mut Ots,
    ys: &[(&[R::El], usize)],
    xs: &[(&[R::El], usize)],
) -> Result<(Vec<Vec<R::El>>, Vec<Vec<R::El>>)> {
    p.require("two-party additive sharing", 2)?;
    let peer = 1 - p.id();
    let w = ring.bits() as usize;
    // receiving: one random OT per bit of every y element, chosen by the bit
    let choices: Vec<bool> = ys.iter().flat_map(|(y, _)| bits_of(ring, y)).collect();
    let keys = ots.receiver.random(p.net(), peer, &choices)?;
    // sending: the corrections d for every bit of the other party's y elements (`n` of them)
    let total: usize = xs.iter().map(|(_, n)| n * w).sum();
    let pairs = ots.sender.random(p.net(), peer, total)?;
    let mut msg = Vec::with_capacity(xs.iter().map(|(x, n)| n * w * ring.wire_len(x.len())).sum());
    let mut d = Vec::new();
    let mut sent = Vec::with_capacity(xs.len());
    let mut pair = pairs.iter();
    for &(x, n) in xs {
        let m = x.len();
        let mut share = vec![ring.zero(); n * m];
        for row in share.chunks_exact_mut(m.max(1)).take(n) {
            let mut pow = ring.one();
            for _ in 0..w {
                let [k0, k1] = *pair.next().expect("one OT per bit");
                let (g0, g1) = (expand(ring, k0, m), expand(ring, k1, m));
                d.clear();
                d.extend((0..m).map(|j| ring.add(ring.sub(g0[j], g1[j]), ring.mul(pow, x[j]))));
                ring.wire_encode(&d, &mut msg);
                for (s, g) in row.iter_mut().zip(&g0) {
                    *s = ring.sub(*s, *g);
                }
                pow = ring.add(pow, pow);
            }
        }
        sent.push(share);
    }
    p.net().send(peer, msg)?;
    // receiving: G(k_c) + c·d
    let got = p.net().recv(peer)?;
    let want: usize = ys.iter().map(|(y, m)| y.len() * w * ring.wire_len(*m)).sum();
    if got.len() != want {
        return Err(MpcError::Malformed { peer, reason: format!("{} bytes of corrections, want {want}", got.len()) });
    }
    let mut at = 0;
    let (mut key, mut choice) = (keys.iter(), choices.iter());
    let mut received = Vec::with_capacity(ys.len());
    for &(y, m) in ys {
        let mut share = vec![ring.zero(); y.len() * m];
        let len = ring.wire_len(m);
        for row in share.chunks_exact_mut(m.max(1)).take(y.len()) {
            for _ in 0..w {
                let d = ring
                    .wire_decode(&got[at..at + len], m)
                    .map_err(|e| MpcError::Malformed { peer, reason: format!("a correction: {e}") })?;
                at += len;
                let g = expand(ring, *key.next().expect("one key per bit"), m);
                let c = *choice.next().expect("one choice per bit");
                for ((s, g), d) in row.iter_mut().zip(g).zip(d) {
                    *s = ring.add(*s, if c { ring.add(g, d) } else { g });
                }
            }
        }
        received.push(share);
    }
    Ok((received, sent))
}
