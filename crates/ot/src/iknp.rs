//! IKNP OT extension (Ishai–Kilian–Nissim–Petrank 2003), semi-honest: any number of random OTs
//! from [`KAPPA`] base OTs with the roles reversed.
//!
//! Set-up: the extension's receiver is the base OTs' sender (pairs of seeds `k0_j, k1_j`), the
//! extension's sender draws `s ∈ {0,1}^κ` and learns `k_{s_j, j}`. For m OTs with choices `r`,
//! the receiver expands `t_j = G(k0_j)` and sends `u_j = t_j ⊕ G(k1_j) ⊕ r` (κ·m bits); the sender
//! forms `q_j = G(k_{s_j}) ⊕ s_j·u_j = t_j ⊕ s_j·r`. Read by rows (a bit-matrix transpose),
//! `Q_i = T_i ⊕ r_i·s`, so the sender's pair is `H(i, Q_i), H(i, Q_i ⊕ s)` and the receiver's
//! key `H(i, T_i)` is the one of its choice. `G` is the engine's PRG (AES-CTR), `H` a fixed-key
//! AES hash that is correlation robust (`π(π(x) ⊕ i) ⊕ π(x)`, Guo et al. 2020). The OT index
//! runs on across calls, so each batch's keys are fresh.
//!
//! On the random OTs: [`Sender::correlated`] (a correlation chosen per OT, one block per OT back)
//! and [`Sender::send_strings`] (chosen strings of any length, both masked), the receiver's
//! choices being the random OTs' own; [`Sender::correlated_raw`] gives the unhashed rows, whose
//! correlation is the global [`Sender::delta`]. Random OTs made ahead of time are derandomised by
//! [`crate::derand`].

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes128;
use argus_net::{Network, PartyId};
use argus_prg::{Prg, Seed};
use rand_core::{CryptoRng, RngCore};

use crate::{base, derand, Block, OtError};

/// The base OTs per extension (the computational security parameter).
pub const KAPPA: usize = 128;

/// The extension's sender, after the base OTs.
pub struct Sender {
    s: u128,
    seeds: Vec<Prg>,
    hash: Hash,
    index: u64,
}

/// The extension's receiver, after the base OTs.
pub struct Receiver {
    seeds: Vec<(Prg, Prg)>,
    hash: Hash,
    index: u64,
}

impl Sender {
    /// Runs the base OTs with `peer` (as their receiver).
    pub fn setup<R: RngCore + CryptoRng>(net: &Network, peer: PartyId, rng: &mut R) -> Result<Self, OtError> {
        let s = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
        let choices: Vec<bool> = (0..KAPPA).map(|j| s >> j & 1 == 1).collect();
        let keys = base::receive(net, peer, &choices, rng)?;
        Ok(Sender { s, seeds: keys.into_iter().map(prg).collect(), hash: Hash::new(), index: 0 })
    }

    /// `m` random OTs: pairs `(x_0, x_1)`, of which the receiver learns `x_{r_i}`. One message,
    /// from the receiver: `κ·⌈m/128⌉·16` bytes (κ bits per OT, rows padded to whole blocks).
    ///
    /// This is the precomputation: it needs no inputs, and [`crate::derand`] turns its output
    /// into chosen-message or correlated OTs once the inputs are known.
    pub fn random(&mut self, net: &Network, peer: PartyId, m: usize) -> Result<Vec<[Block; 2]>, OtError> {
        let rows = self.correlated_raw(net, peer, m)?;
        let start = self.index;
        self.index += m as u64;
        let x0 = self.hash.many(start, &rows, 0);
        let x1 = self.hash.many(start, &rows, self.s);
        Ok(x0.into_iter().zip(x1).map(|(a, b)| [a, b]).collect())
    }

    /// The global correlation `s` of the raw rows: [`correlated_raw`](Self::correlated_raw)'s
    /// `Q_i` and the receiver's `T_i` satisfy `Q_i = T_i ⊕ r_i·s`. The same for every batch of
    /// this session.
    pub fn delta(&self) -> Block {
        self.s
    }

    /// `m` correlated OTs with the global `Δ = `[`delta`](Self::delta): the rows `Q_i`, of which
    /// the receiver gets `T_i = Q_i ⊕ r_i·Δ`. Same message as [`random`](Self::random).
    ///
    /// NOT hashed: the rows of one session share `Δ`, so they are only for protocols that hash
    /// them themselves with a correlation-robust hash (as [`random`](Self::random) does).
    pub fn correlated_raw(&mut self, net: &Network, peer: PartyId, m: usize) -> Result<Vec<Block>, OtError> {
        let words = m.div_ceil(128) * 2;
        let got = net.recv(peer)?;
        if got.len() != KAPPA * words * 8 {
            return Err(OtError::Malformed { peer, got: got.len(), want: KAPPA * words * 8 });
        }
        let mut q = vec![0u64; KAPPA * words];
        for (j, (row, seed)) in q.chunks_exact_mut(words).zip(&mut self.seeds).enumerate() {
            fill(seed, row);
            if self.s >> j & 1 == 1 {
                for (x, u) in row.iter_mut().zip(got[j * words * 8..].chunks_exact(8)) {
                    *x ^= u64::from_le_bytes(u.try_into().expect("8 bytes"));
                }
            }
        }
        Ok(transpose(&q, words, m))
    }

    /// `delta.len()` correlated OTs, the correlation chosen per OT: returns `x_i`, the receiver
    /// gets `x_i ⊕ r_i·delta[i]` (hashed, so independent across OTs). Random OTs on the receiver's
    /// choices and one message back: `y_i = x_{0,i} ⊕ x_{1,i} ⊕ Δ_i`. Bytes: receiver → sender
    /// `κ·⌈m/128⌉·16`, sender → receiver `16·m`. For one global `Δ`, pass it `m` times.
    pub fn correlated(&mut self, net: &Network, peer: PartyId, delta: &[Block]) -> Result<Vec<Block>, OtError> {
        let keys = self.random(net, peer, delta.len())?;
        derand::answer_correlated(net, peer, &keys, None, delta)
    }

    /// Chosen-message OT of `len`-byte strings: the receiver learns the `i`-th string of `m0` or
    /// of `m1` (`m = m0.len() / len` of each). Random OTs on the receiver's choices, then both
    /// strings of each pair masked by the expansions of their keys (IKNP 2003's chosen-message
    /// step). Bytes: receiver → sender `κ·⌈m/128⌉·16`, sender → receiver `2·len·m`.
    ///
    /// # Panics
    /// If `len` is 0, or `m0` and `m1` are not the same whole number of `len`-byte strings.
    pub fn send_strings(
        &mut self,
        net: &Network,
        peer: PartyId,
        m0: &[u8],
        m1: &[u8],
        len: usize,
    ) -> Result<(), OtError> {
        assert!(
            len > 0 && m0.len() == m1.len() && m0.len().is_multiple_of(len),
            "m0, m1: the same number of len-byte strings"
        );
        let keys = self.random(net, peer, m0.len() / len)?;
        derand::answer_strings(net, peer, &keys, None, m0, m1, len)
    }
}

impl Receiver {
    /// Runs the base OTs with `peer` (as their sender).
    pub fn setup<R: RngCore + CryptoRng>(net: &Network, peer: PartyId, rng: &mut R) -> Result<Self, OtError> {
        let pairs = base::send(net, peer, KAPPA, rng)?;
        Ok(Receiver { seeds: pairs.into_iter().map(|[a, b]| (prg(a), prg(b))).collect(), hash: Hash::new(), index: 0 })
    }

    /// The keys `x_{r_i}` of `m = choices.len()` random OTs. One message (see
    /// [`Sender::random`]).
    pub fn random(&mut self, net: &Network, peer: PartyId, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let rows = self.correlated_raw(net, peer, choices)?;
        let start = self.index;
        self.index += choices.len() as u64;
        Ok(self.hash.many(start, &rows, 0))
    }

    /// The rows `T_i = Q_i ⊕ r_i·Δ` of [`Sender::correlated_raw`]: NOT hashed, only for
    /// protocols that hash them themselves.
    pub fn correlated_raw(&mut self, net: &Network, peer: PartyId, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let m = choices.len();
        let words = m.div_ceil(128) * 2;
        let mut r = vec![0u64; words];
        for (i, &c) in choices.iter().enumerate() {
            r[i / 64] |= u64::from(c) << (i % 64);
        }
        let mut t = vec![0u64; KAPPA * words];
        let mut msg = Vec::with_capacity(KAPPA * words * 8);
        let mut g1 = vec![0u64; words];
        for (row, (s0, s1)) in t.chunks_exact_mut(words).zip(&mut self.seeds) {
            fill(s0, row);
            fill(s1, &mut g1);
            for ((x, g), r) in row.iter().zip(&g1).zip(&r) {
                msg.extend_from_slice(&(x ^ g ^ r).to_le_bytes());
            }
        }
        net.send(peer, msg)?;
        Ok(transpose(&t, words, m))
    }

    /// The receiver's side of [`Sender::correlated`]: `x_i ⊕ choices[i]·Δ_i`.
    pub fn correlated(&mut self, net: &Network, peer: PartyId, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let keys = self.random(net, peer, choices)?;
        derand::finish_correlated(net, peer, &keys, choices)
    }

    /// The receiver's side of [`Sender::send_strings`]: the chosen `len`-byte string of each
    /// pair, concatenated.
    ///
    /// # Panics
    /// If `len` is 0.
    pub fn receive_strings(
        &mut self,
        net: &Network,
        peer: PartyId,
        choices: &[bool],
        len: usize,
    ) -> Result<Vec<u8>, OtError> {
        assert!(len > 0, "strings of at least one byte");
        let keys = self.random(net, peer, choices)?;
        derand::finish_strings(net, peer, &keys, choices, len)
    }
}

fn prg(key: Block) -> Prg {
    Prg::new(&Seed(key.to_le_bytes()))
}

/// The next `row.len()` words of a seed's stream.
fn fill(seed: &mut Prg, row: &mut [u64]) {
    seed.fill_bytes(bytemuck::cast_slice_mut(row));
}

/// Row `i < m` of the κ × (64·words) bit matrix `cols` (κ rows of `words` words, bit `i` of row `j`
/// at word `i / 64`, bit `i % 64`), read down the column: bit `j` of the result is bit `i` of row `j`.
fn transpose(cols: &[u64], words: usize, m: usize) -> Vec<u128> {
    let mut out = vec![0u128; words * 64];
    let mut block = [0u64; 64];
    for w in 0..words {
        for half in 0..2 {
            for (k, b) in block.iter_mut().enumerate() {
                *b = cols[(64 * half + k) * words + w];
            }
            transpose64(&mut block);
            for (k, &b) in block.iter().enumerate() {
                out[64 * w + k] |= u128::from(b) << (64 * half);
            }
        }
    }
    out.truncate(m);
    out
}

/// In place: bit `c` of word `r` becomes bit `r` of word `c` (LSB first), by the recursive
/// exchange of off-diagonal blocks (6 rounds of masked swaps).
fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((a[k] >> j) ^ a[k + j]) & mask;
            a[k] ^= t << j;
            a[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// `H(i, x) = π(π(x) ⊕ i) ⊕ π(x)` with π fixed-key AES-128: a tweakable correlation-robust hash.
struct Hash(Aes128);

impl Hash {
    fn new() -> Self {
        // Any fixed, public key: the digits of π.
        Hash(Aes128::new(&0x243F_6A88_85A3_08D3_1319_8A2E_0370_7344u128.to_le_bytes().into()))
    }
    /// `H(start + i, x_i ⊕ mask)` for every `x_i`, the permutation run on blocks of 64 at a time
    /// (the AES units pipelined, not one block per call).
    fn many(&self, start: u64, xs: &[u128], mask: u128) -> Vec<u128> {
        const AT_ONCE: usize = 64;
        let mut out = Vec::with_capacity(xs.len());
        let mut p = [aes::Block::default(); AT_ONCE];
        let mut q = [aes::Block::default(); AT_ONCE];
        for (c, chunk) in xs.chunks(AT_ONCE).enumerate() {
            let k = chunk.len();
            for (b, &x) in p.iter_mut().zip(chunk) {
                *b = (x ^ mask).to_le_bytes().into();
            }
            self.0.encrypt_blocks(&mut p[..k]);
            let base = start + (c * AT_ONCE) as u64;
            for (i, (d, b)) in q.iter_mut().zip(&p[..k]).enumerate() {
                *d = (u128::from_le_bytes((*b).into()) ^ u128::from(base + i as u64)).to_le_bytes().into();
            }
            self.0.encrypt_blocks(&mut q[..k]);
            out.extend(
                p[..k]
                    .iter()
                    .zip(&q[..k])
                    .map(|(a, b)| u128::from_le_bytes((*a).into()) ^ u128::from_le_bytes((*b).into())),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests;
