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

use argus_net::{Network, PartyId};
use argus_prg::{Permutation, Prg, Seed};
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
    /// The matrix `T` of the last batch (16 bytes per OT), kept for the next one: a fresh one
    /// would cost a page fault per 256 OTs.
    t: Vec<u64>,
    hash: Hash,
    index: u64,
}

impl Sender {
    /// Runs the base OTs with `peer` (as their receiver).
    pub fn setup<R: RngCore + CryptoRng>(net: &Network, peer: PartyId, rng: &mut R) -> Result<Self, OtError> {
        let s = random_block(rng);
        let keys = base::receive(net, peer, &bits_of(s), rng)?;
        Ok(Sender::from_base(s, keys))
    }

    fn from_base(s: u128, keys: Vec<Block>) -> Self {
        Sender { s, seeds: keys.into_iter().map(prg).collect(), hash: Hash::new(), index: 0 }
    }

    /// `m` random OTs: pairs `(x_0, x_1)`, of which the receiver learns `x_{r_i}`. One message,
    /// from the receiver: `κ·⌈m/128⌉·16` bytes (κ bits per OT, rows padded to whole blocks).
    ///
    /// This is the precomputation: it needs no inputs, and [`crate::derand`] turns its output
    /// into chosen-message or correlated OTs once the inputs are known.
    pub fn random(&mut self, net: &Network, peer: PartyId, m: usize) -> Result<Vec<[Block; 2]>, OtError> {
        let mut out = vec![[0; 2]; m];
        self.random_into(net, peer, &mut out)?;
        Ok(out)
    }

    /// [`random`](Self::random) for `out.len()` OTs, written into `out` (a buffer the caller
    /// reuses across batches: no allocation of the result). The same message and keys.
    pub fn random_into(&mut self, net: &Network, peer: PartyId, out: &mut [[Block; 2]]) -> Result<(), OtError> {
        let start = self.index;
        self.index += out.len() as u64;
        let (hash, s) = (&self.hash, self.s);
        sender_rows(&mut self.seeds, s, net, peer, out.len(), |first, rows| {
            hash.pairs(start + first as u64, rows, s, &mut out[first..first + rows.len()]);
        })
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
        let mut out = Vec::with_capacity(m);
        sender_rows(&mut self.seeds, self.s, net, peer, m, |_, rows| out.extend_from_slice(rows))?;
        Ok(out)
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
        Ok(Receiver::from_base(base::send(net, peer, KAPPA, rng)?))
    }

    fn from_base(pairs: Vec<[Block; 2]>) -> Self {
        Receiver {
            seeds: pairs.into_iter().map(|[a, b]| (prg(a), prg(b))).collect(),
            hash: Hash::new(),
            index: 0,
            t: Vec::new(),
        }
    }

    /// The keys `x_{r_i}` of `m = choices.len()` random OTs. One message (see
    /// [`Sender::random`]).
    pub fn random(&mut self, net: &Network, peer: PartyId, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let mut out = vec![0; choices.len()];
        self.random_into(net, peer, choices, &mut out)?;
        Ok(out)
    }

    /// [`random`](Self::random) written into `out` (one key per choice).
    ///
    /// # Panics
    /// If `out` and `choices` differ in length.
    pub fn random_into(
        &mut self,
        net: &Network,
        peer: PartyId,
        choices: &[bool],
        out: &mut [Block],
    ) -> Result<(), OtError> {
        assert_eq!(out.len(), choices.len(), "one key per choice");
        let start = self.index;
        self.index += out.len() as u64;
        let hash = &self.hash;
        receiver_rows(&mut self.seeds, &mut self.t, net, peer, choices, |first, rows| {
            hash.many(start + first as u64, rows, &mut out[first..first + rows.len()]);
        })
    }

    /// The rows `T_i = Q_i ⊕ r_i·Δ` of [`Sender::correlated_raw`]: NOT hashed, only for
    /// protocols that hash them themselves.
    pub fn correlated_raw(&mut self, net: &Network, peer: PartyId, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let mut out = Vec::with_capacity(choices.len());
        receiver_rows(&mut self.seeds, &mut self.t, net, peer, choices, |_, rows| out.extend_from_slice(rows))?;
        Ok(out)
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

/// An extension in each direction with every one of `peers`, from one set of base OTs per
/// pair. Of each pair, the party with the lower id runs the base OTs as their sender (its
/// extension receiver), then makes [`KAPPA`] random OTs on that extension with random choices:
/// they are the base OTs of the other direction, roles swapped (the other party holds the key
/// pairs, as a base-OT sender does; the lower id holds its random choices and their keys, as a
/// base-OT receiver does). Half the public-key work of two base-OT sets, in as many waves of
/// messages: every offer, every answer, every bootstrap extension. Returns, per peer, this
/// party's extension sender and receiver. All parties of the session call it with their peers.
pub fn setup_with<R: RngCore + CryptoRng>(
    net: &Network,
    peers: &[PartyId],
    rng: &mut R,
) -> Result<Vec<(Sender, Receiver)>, OtError> {
    let me = net.id();
    let leads = |peer: PartyId| me < peer;
    let mut offers = Vec::with_capacity(peers.len());
    for &peer in peers {
        base::check_peer(net, peer)?;
        if leads(peer) {
            let (offer, msg) = base::Offer::new(rng);
            net.send(peer, msg)?;
            offers.push(Some(offer));
        } else {
            offers.push(None);
        }
    }
    let mut senders: Vec<Option<Sender>> = Vec::with_capacity(peers.len());
    for &peer in peers {
        senders.push(if leads(peer) {
            None
        } else {
            let s = random_block(rng);
            let (reply, keys) = base::answer(peer, &net.recv(peer)?, &bits_of(s), rng)?;
            net.send(peer, reply)?;
            Some(Sender::from_base(s, keys))
        });
    }
    let mut out: Vec<Option<(Sender, Receiver)>> = Vec::with_capacity(peers.len());
    for (&peer, offer) in peers.iter().zip(&offers) {
        out.push(match offer {
            Some(offer) => {
                let mut receiver = Receiver::from_base(offer.keys(peer, &net.recv(peer)?, KAPPA)?);
                let s = random_block(rng);
                let keys = receiver.random(net, peer, &bits_of(s))?;
                Some((Sender::from_base(s, keys), receiver))
            }
            None => None,
        });
    }
    peers
        .iter()
        .zip(out)
        .zip(senders)
        .map(|((&peer, pair), sender)| match (pair, sender) {
            (Some(pair), _) => Ok(pair),
            (None, Some(mut sender)) => {
                let pairs = sender.random(net, peer, KAPPA)?;
                Ok((sender, Receiver::from_base(pairs)))
            }
            (None, None) => unreachable!("a pair is led by one of its parties"),
        })
        .collect()
}

fn random_block<R: RngCore>(rng: &mut R) -> u128 {
    u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
}

/// The κ bits of `s`, LSB first: the extension sender's base-OT choices.
fn bits_of(s: u128) -> Vec<bool> {
    (0..KAPPA).map(|j| s >> j & 1 == 1).collect()
}

fn prg(key: Block) -> Prg {
    Prg::new(&Seed(key.to_le_bytes()))
}

/// The next `row.len()` words of a seed's stream.
fn fill(seed: &mut Prg, row: &mut [u64]) {
    seed.fill_bytes(bytemuck::cast_slice_mut(row));
}

/// OTs per chunk of the sender's pipeline: the chunk's κ × CHUNK bit matrix (32 KiB) is filled,
/// corrected, transposed and hashed while it is in cache.
const CHUNK: usize = 2048;
const CHUNK_WORDS: usize = CHUNK / 64;

/// The sender's rows `Q_i = T_i ⊕ r_i·s` of `m` OTs from the receiver's message, handed to
/// `each(first OT, rows)` a chunk at a time, in order. The seeds' streams advance by the padded
/// width (`⌈m/128⌉` blocks each), as the receiver's do.
fn sender_rows(
    seeds: &mut [Prg],
    s: u128,
    net: &Network,
    peer: PartyId,
    m: usize,
    mut each: impl FnMut(usize, &[Block]),
) -> Result<(), OtError> {
    let words = m.div_ceil(128) * 2;
    let got = net.recv(peer)?;
    if got.len() != KAPPA * words * 8 {
        return Err(OtError::Malformed { peer, got: got.len(), want: KAPPA * words * 8 });
    }
    let mut q = vec![0u64; KAPPA * CHUNK_WORDS];
    let mut rows = vec![0u128; CHUNK];
    for c in (0..words).step_by(CHUNK_WORDS) {
        let w = CHUNK_WORDS.min(words - c);
        for (j, (row, seed)) in q.chunks_exact_mut(w).zip(seeds.iter_mut()).enumerate() {
            fill(seed, row);
            if s >> j & 1 == 1 {
                let u = &got[(j * words + c) * 8..(j * words + c + w) * 8];
                for (x, u) in row.iter_mut().zip(u.chunks_exact(8)) {
                    *x ^= u64::from_le_bytes(u.try_into().expect("8 bytes"));
                }
            }
        }
        transpose(&q, w, w, &mut rows[..64 * w]);
        let n = (64 * w).min(m - 64 * c);
        each(64 * c, &rows[..n]);
    }
    Ok(())
}

/// The receiver's side: sends `u_j = G(k0_j) ⊕ G(k1_j) ⊕ r` (the whole message first, so the
/// sender starts at once), then hands the rows `T_i` to `each` a chunk at a time, in order.
fn receiver_rows(
    seeds: &mut [(Prg, Prg)],
    t: &mut Vec<u64>,
    net: &Network,
    peer: PartyId,
    choices: &[bool],
    mut each: impl FnMut(usize, &[Block]),
) -> Result<(), OtError> {
    let m = choices.len();
    let words = m.div_ceil(128) * 2;
    let mut r = vec![0u64; words];
    for (i, &c) in choices.iter().enumerate() {
        r[i / 64] |= u64::from(c) << (i % 64);
    }
    if m == 0 {
        net.send(peer, Vec::new())?;
        return Ok(());
    }
    if t.len() < KAPPA * words {
        t.resize(KAPPA * words, 0);
    }
    let t = &mut t[..KAPPA * words];
    let mut msg = vec![0u8; KAPPA * words * 8];
    let mut g1 = vec![0u64; words];
    for ((row, (s0, s1)), out) in t.chunks_exact_mut(words).zip(seeds.iter_mut()).zip(msg.chunks_exact_mut(words * 8)) {
        fill(s0, row);
        fill(s1, &mut g1);
        for (((x, g), r), o) in row.iter().zip(&g1).zip(&r).zip(out.chunks_exact_mut(8)) {
            o.copy_from_slice(&(x ^ g ^ r).to_le_bytes());
        }
    }
    net.send(peer, msg)?;
    let mut rows = vec![0u128; CHUNK];
    for c in (0..words).step_by(CHUNK_WORDS) {
        let w = CHUNK_WORDS.min(words - c);
        transpose(&t[c..], words, w, &mut rows[..64 * w]);
        let n = (64 * w).min(m - 64 * c);
        each(64 * c, &rows[..n]);
    }
    Ok(())
}

/// The transpose of a κ × 64·w bit matrix (row `j` the `w` words at `cols[j·stride..]`, bit `i`
/// of a row at word `i / 64`, bit `i % 64`) into `out` (64·w rows): bit `j` of `out[i]` is bit
/// `i` of row `j`. Runs on AVX-512 or AVX2 at the engine's kernel level
/// ([`argus_math::kernels::detected`], lowered by `ARGUS_ISA`): the same code, vectorised by
/// the compiler; else portably.
fn transpose(cols: &[u64], stride: usize, w: usize, out: &mut [u128]) {
    #[cfg(target_arch = "x86_64")]
    {
        use argus_math::kernels::{detected, Isa};
        let level = detected();
        if level >= Isa::Avx512 {
            // SAFETY: the level is only this high where the CPU has AVX-512F (and BW, DQ, VL).
            return unsafe { transpose_avx512(cols, stride, w, out) };
        }
        if level >= Isa::Avx2 {
            // SAFETY: the level is only this high where the CPU has AVX2.
            return unsafe { transpose_avx2(cols, stride, w, out) };
        }
    }
    transpose_lanes(cols, stride, w, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn transpose_avx512(cols: &[u64], stride: usize, w: usize, out: &mut [u128]) {
    transpose_lanes(cols, stride, w, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn transpose_avx2(cols: &[u64], stride: usize, w: usize, out: &mut [u128]) {
    transpose_lanes(cols, stride, w, out)
}

/// Word columns transposed side by side: each of the 64×64 blocks of [`LANES`] neighbouring
/// columns in one lane, so the masked swaps of [`transpose64`] run on vectors.
const LANES: usize = 8;

#[inline(always)]
fn transpose_lanes(cols: &[u64], stride: usize, w: usize, out: &mut [u128]) {
    debug_assert!(out.len() == 64 * w && cols.len() >= (KAPPA - 1) * stride + w);
    let mut lo = [[0u64; LANES]; 64];
    let mut hi = [[0u64; LANES]; 64];
    for w0 in (0..w).step_by(LANES) {
        let lanes = LANES.min(w - w0);
        for k in 0..64 {
            let (a, b) = (k * stride + w0, (64 + k) * stride + w0);
            if lanes == LANES {
                lo[k] = cols[a..a + LANES].try_into().expect("LANES words");
                hi[k] = cols[b..b + LANES].try_into().expect("LANES words");
            } else {
                lo[k][..lanes].copy_from_slice(&cols[a..a + lanes]);
                hi[k][..lanes].copy_from_slice(&cols[b..b + lanes]);
            }
        }
        swaps(&mut lo);
        swaps(&mut hi);
        for l in 0..lanes {
            let o = &mut out[64 * (w0 + l)..64 * (w0 + l + 1)];
            for (k, x) in o.iter_mut().enumerate() {
                *x = u128::from(lo[k][l]) | u128::from(hi[k][l]) << 64;
            }
        }
    }
}

/// [`transpose64`] on every lane at once.
#[inline(always)]
fn swaps(a: &mut [[u64; LANES]; 64]) {
    let mut j = 32;
    let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let (mut x, mut y) = (a[k], a[k + j]);
            for l in 0..LANES {
                let t = ((x[l] >> j) ^ y[l]) & mask;
                x[l] ^= t << j;
                y[l] ^= t;
            }
            (a[k], a[k + j]) = (x, y);
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// In place: bit `c` of word `r` becomes bit `r` of word `c` (LSB first), by the recursive
/// exchange of off-diagonal blocks (6 rounds of masked swaps). The one-lane reference for
/// [`swaps`].
#[cfg(test)]
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
struct Hash(Permutation);

impl Hash {
    fn new() -> Self {
        // Any fixed, public key: the digits of π.
        Hash(Permutation::new(0x243F_6A88_85A3_08D3_1319_8A2E_0370_7344))
    }

    fn permute(&self, xs: &mut [u128]) {
        self.0.permute(xs);
    }

    /// `out[i] = H(start + i, xs[i])`.
    fn many(&self, start: u64, xs: &[u128], out: &mut [u128]) {
        self.apply(start, xs, [0], |i, [h]| out[i] = h);
    }

    /// `out[i] = [H(start + i, xs[i]), H(start + i, xs[i] ⊕ s)]`.
    fn pairs(&self, start: u64, xs: &[u128], s: u128, out: &mut [[u128; 2]]) {
        self.apply(start, xs, [0, s], |i, h| out[i] = h);
    }

    /// `emit(i, [H(start + i, x_i ⊕ masks[k]) for each k])` for every `x_i`, the permutation
    /// run on 64 blocks at a time (the AES units pipelined, not one block per call).
    #[inline(always)]
    fn apply<const K: usize>(&self, start: u64, xs: &[u128], masks: [u128; K], mut emit: impl FnMut(usize, [u128; K])) {
        const AT_ONCE: usize = 64;
        let per = AT_ONCE / K;
        let mut p = [0u128; AT_ONCE];
        let mut q = [0u128; AT_ONCE];
        for (c, chunk) in xs.chunks(per).enumerate() {
            let n = chunk.len() * K;
            for (i, &x) in chunk.iter().enumerate() {
                for (k, &mask) in masks.iter().enumerate() {
                    p[K * i + k] = x ^ mask;
                }
            }
            self.permute(&mut p[..n]);
            let base = start + (c * per) as u64;
            for (b, (d, &e)) in q.iter_mut().zip(&p[..n]).enumerate() {
                *d = e ^ u128::from(base + (b / K) as u64);
            }
            self.permute(&mut q[..n]);
            for i in 0..chunk.len() {
                emit(c * per + i, std::array::from_fn(|k| p[K * i + k] ^ q[K * i + k]));
            }
        }
    }
}

#[cfg(test)]
mod tests;
