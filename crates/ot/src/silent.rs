//! Silent vector OLE over a ring: shares of `Σ_l a_l ⊗ b_l` for `k` pseudorandom vectors `a_l`
//! (M elements) of the *noise side* and `k` vectors `b_l` (L elements) of the *Δ side*, with
//! communication that grows with a noise weight `t` instead of M. Paper 004's SOT-based RsVOLE,
//! after Boyle, Couteau, Gilboa, Ishai, Kohl, Rindal, Scholl (CCS 2019), dual-LPN form:
//!
//! 1. The noise side draws a regular sparse noise `e_l ∈ R^N` per vector: `t` blocks of `block`
//!    positions, one position `α` per block holding a uniform value `β`.
//! 2. Gilboa's product ([`crate::vole::cross`]) shares `β·b_l` for every block: `t·ℓ` random OTs
//!    and `t·ℓ·L` elements per vector — the one cost linear in L, and not in M.
//! 3. Per block the Δ side grows a GGM tree of `block` leaves (fixed-key AES); the noise side
//!    learns every leaf but the one at `α`, one random OT per level (a punctured PRF). Each leaf
//!    expands to L elements. The Δ side sends `d = q + Σ leaves` (`q` its share of `β·b_l`),
//!    which is masked by the leaf the noise side lacks and completes its row `α`: the N rows of
//!    `e_l ⊗ b_l` are now shared.
//! 4. A public uniformly random code `H` (M × N) compresses: `a_l = H·e_l`, and `H·S` of the
//!    shares `S` gives shares of `a_l ⊗ b_l`. `H` is the same for every vector, so the `k` shares
//!    are summed first and compressed once ([`Code::product`]: one M × N × L product).
//!
//! `a_l` is pseudorandom under dual LPN (syndrome decoding) for a uniform code, the most studied
//! flavour; [`Params::security_bits`] estimates information-set decoding on the reduction mod 2.

use argus_math::{transpose, Ring};
use argus_net::{Network, PartyId};
use argus_prg::{Permutation, Prg, Seed};
use rand_core::{CryptoRng, RngCore};

use crate::vole::{cross, elements};
use crate::{iknp, Block, OtError};

/// The noise of a silent VOLE: `noise` blocks (`t`) of `block` positions each (a power of two,
/// the GGM trees' width), `N = noise·block` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub noise: usize,
    pub block: usize,
}

impl Params {
    /// The security level [`for_rows`](Self::for_rows) aims at, in bits.
    pub const SECURITY: f64 = 128.0;

    /// The parameters for vectors of `rows` elements over a ring of `bits` bits: for each block
    /// width from 8 to 256 the fewest blocks reaching [`SECURITY`](Self::SECURITY), and of those the
    /// cheapest by `t·(2ℓ + block)` — each block costs `ℓ` Gilboa corrections of L elements (sent
    /// and expanded twice) and `block` leaf expansions of L elements.
    pub fn for_rows(rows: usize, bits: u32) -> Self {
        (3..=8)
            .map(|d| {
                let block = 1usize << d;
                let mut p = Params { noise: 1, block };
                while p.security_bits(rows) < Self::SECURITY {
                    p.noise += 1;
                }
                p
            })
            .min_by_key(|p| p.noise * (2 * bits as usize + p.block))
            .expect("eight widths")
    }

    /// `N`: the length of the noise vectors.
    pub fn len(&self) -> usize {
        self.noise * self.block
    }

    /// Whether there is no noise at all (never for [`for_rows`](Self::for_rows)'s).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Levels of the GGM trees (random OTs per block).
    pub fn depth(&self) -> u32 {
        self.block.trailing_zeros()
    }

    /// Estimated bits of security of `H·e` for a uniform M × N code and M = `rows`: Prange's
    /// information-set decoding on the reduction mod 2, where a block's value is odd with
    /// probability 1/2 and an odd one must fall among the M positions outside the information
    /// set, so the attack succeeds with `E[(M/N)^w] = ((1 + M/N)/2)^t`. Spreading the information
    /// set evenly over the blocks is the best use of their regularity, and gives the same figure.
    pub fn security_bits(&self, rows: usize) -> f64 {
        let r = rows as f64 / self.len().max(1) as f64;
        if r >= 1.0 {
            return 0.0;
        }
        -(self.noise as f64) * ((1.0 + r) / 2.0).log2()
    }

    fn check(&self) {
        assert!(self.block >= 2 && self.block.is_power_of_two(), "blocks of 2^d ≥ 2 positions, not {}", self.block);
        assert!(self.noise > 0, "at least one noise block");
    }
}

/// The public code `H`: M × N uniform ring elements, row-major, drawn from a seed both parties
/// derive from the shape.
#[derive(Clone, Debug)]
pub struct Code<E> {
    rows: usize,
    len: usize,
    h: Vec<E>,
}

impl<E: Copy> Code<E> {
    /// The code for vectors of `rows` elements with `params`' noise.
    pub fn new<R: Ring<El = E>>(ring: &R, rows: usize, params: Params) -> Self {
        let len = params.len();
        let mut seed = [0u8; 16];
        seed[..4].copy_from_slice(b"silH");
        seed[4..8].copy_from_slice(&(rows as u32).to_le_bytes());
        seed[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        seed[12..].copy_from_slice(&ring.bits().to_le_bytes());
        Code { rows, len, h: ring.sample_vec(&mut Prg::new(&Seed(seed)), rows * len) }
    }

    /// M.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// `H·S` (M × L, row-major) for a share `Sᵀ` (L × N) of [`noise_side`] or [`delta_side`].
    pub fn product<R: Ring<El = E>>(&self, ring: &R, st: &[E]) -> Vec<E> {
        let cols = st.len() / self.len.max(1);
        let mut out = vec![ring.zero(); self.rows * cols];
        ring.gemm(&self.h, st, self.len, &mut out);
        out
    }

    /// `(H·S)ᵀ` (L × M, row-major) for a share `Sᵀ` (L × N).
    pub fn product_t<R: Ring<El = E>>(&self, ring: &R, st: &[E]) -> Vec<E> {
        let cols = st.len() / self.len.max(1);
        let mut out = vec![ring.zero(); cols * self.rows];
        ring.gemm(st, &self.h, self.len, &mut out);
        out
    }
}

/// The GGM trees' length-doubling PRG: children `π_0(s) ⊕ s` and `π_1(s) ⊕ s` of `s` for two
/// fixed-key AES permutations, a whole level of many trees at a time.
struct Ggm {
    left: Permutation,
    right: Permutation,
}

impl Ggm {
    fn new() -> Self {
        Ggm { left: Permutation::new(0x5eed_0000_0000_0000_0000_0000_0000_0001), right: Permutation::new(0x5eed_0002) }
    }

    /// The next level: node `q`'s children at `2q` and `2q + 1`.
    fn grow(&self, level: &[Block]) -> Vec<Block> {
        let (mut l, mut r) = (level.to_vec(), level.to_vec());
        self.left.permute(&mut l);
        self.right.permute(&mut r);
        level.iter().zip(l.iter().zip(&r)).flat_map(|(&s, (&a, &b))| [a ^ s, b ^ s]).collect()
    }
}

/// `G(leaf)`: `out.len()` elements.
fn expand<R: Ring>(ring: &R, leaf: Block, out: &mut [R::El]) {
    ring.sample_into(&mut Prg::new(&Seed(leaf.to_le_bytes())), out);
}

/// Vectors per message so that Gilboa's corrections stay within `budget` bytes (at least one).
fn per_message<R: Ring>(ring: &R, params: Params, cols: usize, count: usize, budget: usize) -> usize {
    let bytes = params.noise * ring.bits() as usize * ring.wire_len(cols.max(1));
    (budget / bytes.max(1)).clamp(1, count.max(1))
}

/// `acc[i] += x[i]`.
fn add_into<R: Ring>(ring: &R, acc: &mut [R::El], x: &[R::El]) {
    for (a, &x) in acc.iter_mut().zip(x) {
        *a = ring.add(*a, x);
    }
}

/// The noise side of a silent VOLE with `peer` for `count` vectors of `code.rows()` elements
/// against the peer's vectors of `cols` elements. Returns `Aᵀ` (count × M: row `l` is `a_l`) and
/// this side's share `Sᵀ` (cols × N): `code.product` of both sides' shares adds up to
/// `Σ_l a_l ⊗ b_l`. Messages carry at most `budget` bytes of Gilboa's corrections; both sides
/// call together with the same `params`, `count`, `cols` and `budget`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn noise_side<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    net: &Network,
    peer: PartyId,
    (sender, receiver): (&mut iknp::Sender, &mut iknp::Receiver),
    code: &Code<R::El>,
    params: Params,
    count: usize,
    cols: usize,
    rng: &mut G,
    budget: usize,
) -> Result<(Vec<R::El>, Vec<R::El>), OtError> {
    params.check();
    assert_eq!(code.len, params.len(), "the code is for this noise");
    let (t, width, depth, n) = (params.noise, params.block, params.depth() as usize, params.len());
    let ggm = Ggm::new();
    let (mut acc, mut et) = (vec![ring.zero(); n * cols], vec![ring.zero(); count * n]);
    let (mut leaf, mut sum) = (vec![ring.zero(); cols], vec![ring.zero(); cols]);
    let mut decoded = Vec::new();
    let chunk = per_message(ring, params, cols, count, budget);
    for first in (0..count).step_by(chunk) {
        let c = chunk.min(count - first);
        // 1. the noise: a position and a value per block
        let betas: Vec<Vec<R::El>> = (0..c).map(|_| ring.sample_vec(rng, t)).collect();
        let alphas: Vec<usize> = (0..c * t).map(|_| rng.next_u32() as usize & (width - 1)).collect();
        for (tree, &a) in alphas.iter().enumerate() {
            et[(first + tree / t) * n + tree % t * width + a] = betas[tree / t][tree % t];
        }
        // 2. shares p of β·b_l, t rows of L per vector
        let ys: Vec<(&[R::El], usize)> = betas.iter().map(|b| (&b[..], cols)).collect();
        let (base, _) = cross(ring, net, peer, (&mut *sender, &mut *receiver), &ys, &[])?;
        // 3. the punctured trees: at level i choose the side off α's path
        let choices: Vec<bool> =
            alphas.iter().flat_map(|&a| (1..=depth).map(move |i| a >> (depth - i) & 1 == 0)).collect();
        let keys = receiver.random(net, peer, &choices)?;
        let msg = net.recv(peer)?;
        let (sums_len, d_len) = (c * t * depth * 32, ring.wire_len(cols));
        let want = sums_len + c * t * d_len;
        if msg.len() != want {
            return Err(OtError::Malformed { peer, got: msg.len(), want });
        }
        let block_at = |i: usize| u128::from_le_bytes(msg[16 * i..16 * i + 16].try_into().expect("16 bytes"));
        let mut level = vec![0 as Block; c * t];
        for i in 1..=depth {
            level = ggm.grow(&level);
            let size = 1usize << i;
            for (tree, &a) in alphas.iter().enumerate() {
                let nodes = &mut level[tree * size..(tree + 1) * size];
                let (path, off) = (a >> (depth - i), (a >> (depth - i) & 1) ^ 1);
                // the path node's children grew from a placeholder: neither is known yet
                nodes[path & !1] = 0;
                nodes[path | 1] = 0;
                let k = (tree * depth + i - 1) * 2 + off;
                let mut sibling = block_at(k) ^ keys[tree * depth + i - 1];
                for q in (off..size).step_by(2) {
                    sibling ^= nodes[q];
                }
                nodes[path ^ 1] = sibling;
            }
        }
        // every leaf but α's into its row; row α gets p + d − Σ known leaves
        for j in 0..t {
            for (l, base) in base.iter().enumerate() {
                let tree = l * t + j;
                let a = alphas[tree];
                sum.fill(ring.zero());
                for r in (0..width).filter(|&r| r != a) {
                    expand(ring, level[tree * width + r], &mut leaf);
                    add_into(ring, &mut acc[(j * width + r) * cols..][..cols], &leaf);
                    add_into(ring, &mut sum, &leaf);
                }
                let bytes = &msg[sums_len + tree * d_len..][..d_len];
                let d = elements(ring, bytes, cols, peer, &mut decoded)?;
                let row = &mut acc[(j * width + a) * cols..][..cols];
                for (((x, &p), &d), &s) in row.iter_mut().zip(&base[j * cols..]).zip(d).zip(&sum) {
                    *x = ring.add(*x, ring.sub(ring.add(p, d), s));
                }
            }
        }
    }
    // Aᵀ = Eᵀ·Hᵀ: row l is a_l = H·e_l
    let mut at = vec![ring.zero(); count * code.rows];
    ring.gemm(&et, &code.h, n, &mut at);
    Ok((at, transpose(&acc, n, cols)))
}

/// The Δ side of [`noise_side`]: `bs` are the vectors `b_l` (L elements each) against the
/// peer's `count = bs.len()` vectors of M elements. Returns this side's share `Sᵀ` (L × N).
#[allow(clippy::too_many_arguments)]
pub fn delta_side<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    net: &Network,
    peer: PartyId,
    (sender, receiver): (&mut iknp::Sender, &mut iknp::Receiver),
    params: Params,
    bs: &[&[R::El]],
    rng: &mut G,
    budget: usize,
) -> Result<Vec<R::El>, OtError> {
    params.check();
    let (t, width, depth, n) = (params.noise, params.block, params.depth() as usize, params.len());
    let cols = bs.first().map_or(0, |b| b.len());
    assert!(bs.iter().all(|b| b.len() == cols), "vectors of one length");
    let ggm = Ggm::new();
    let mut acc = vec![ring.zero(); n * cols];
    let mut leaf = vec![ring.zero(); cols];
    let chunk = per_message(ring, params, cols, bs.len(), budget);
    for part in bs.chunks(chunk) {
        let c = part.len();
        // 2. shares q of β·b_l (the peer chooses by β's bits)
        let xs: Vec<(&[R::El], usize)> = part.iter().map(|b| (*b, t)).collect();
        let (_, base) = cross(ring, net, peer, (&mut *sender, &mut *receiver), &[], &xs)?;
        // 3. full trees, and per level the XOR of each side masked by the random OTs
        let pads = sender.random(net, peer, c * t * depth)?;
        let mut level: Vec<Block> =
            (0..c * t).map(|_| u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())).collect();
        let mut msg = Vec::with_capacity(c * t * (depth * 32 + ring.wire_len(cols)));
        let mut sums = vec![[0 as Block; 2]; c * t * depth];
        for i in 1..=depth {
            level = ggm.grow(&level);
            for (tree, nodes) in level.chunks_exact(1 << i).enumerate() {
                let s = &mut sums[tree * depth + i - 1];
                for pair in nodes.chunks_exact(2) {
                    s[0] ^= pair[0];
                    s[1] ^= pair[1];
                }
            }
        }
        for (s, pad) in sums.iter().zip(&pads) {
            msg.extend_from_slice(&(s[0] ^ pad[0]).to_le_bytes());
            msg.extend_from_slice(&(s[1] ^ pad[1]).to_le_bytes());
        }
        // every leaf out of its row; d = q + Σ leaves
        let mut ds = vec![ring.zero(); c * t * cols];
        for j in 0..t {
            for (l, base) in base.iter().enumerate() {
                let tree = l * t + j;
                let d = &mut ds[tree * cols..][..cols];
                d.copy_from_slice(&base[j * cols..][..cols]);
                for r in 0..width {
                    expand(ring, level[tree * width + r], &mut leaf);
                    let row = &mut acc[(j * width + r) * cols..][..cols];
                    for ((x, d), &y) in row.iter_mut().zip(d.iter_mut()).zip(&leaf) {
                        *x = ring.sub(*x, y);
                        *d = ring.add(*d, y);
                    }
                }
            }
        }
        ring.wire_encode(&ds, &mut msg);
        net.send(peer, msg)?;
    }
    Ok(transpose(&acc, n, cols))
}

#[cfg(test)]
mod tests;
