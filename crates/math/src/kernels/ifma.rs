//! The matrix product mod 2^128 on AVX-512 IFMA (`vpmadd52luq` / `vpmadd52huq`), with
//! Winograd's pairing (`ring128::gemm_portable`): the kernel sums, over pairs of K,
//! (a_2m + b_2m+1)·(a_2m+1 + b_2m), and `ring128::winograd_start` supplies the corrections.
//!
//! Every element is split into 51-bit limbs x = x0 + 2^51·x1 + 2^102·x2 (x2 has 26 bits), so
//! that the limbs of a sum of two elements, added limb by limb without carries, still fit the
//! 52 bits IFMA multiplies. IFMA adds the low (`lo`) or high (`hi`) 52 bits of a 104-bit
//! product to a 64-bit lane; for the limbs s_i, t_j of the two sums, lo(s_i·t_j) has weight
//! 2^(51(i+j)) and hi(s_i·t_j) weight 2^(51(i+j)+52). Only weights below 2^128 are summed:
//!
//! ```text
//! lo0: lo(s0·t0)                               weight 2^0
//! lo1: lo(s0·t1) + lo(s1·t0)                   weight 2^51
//! lo2: lo(s0·t2) + lo(s1·t1) + lo(s2·t0)       weight 2^102
//! hi0: hi(s0·t0)                               weight 2^52
//! hi1: hi(s0·t1) + hi(s1·t0)                   weight 2^103
//! ```
//!
//! and the sum is lo0 + 2^51·lo1 + 2^102·lo2 + 2^52·hi0 + 2^103·hi1 mod 2^128. lo2 and hi1 may
//! wrap (only their low 26 and 25 bits count); lo0, lo1 and hi0 must not: each pair adds at
//! most 2 terms below 2^52 to one of them, so a K-block of [`KC`] ≤ 4096 elements (2048 pairs)
//! is summed exactly, then added to the output in `u128`. Nine IFMA and six additions per pair
//! and eight outputs: half the IFMA of the direct product (on CPUs whose adders are separate
//! ports, such as Zen 4, the additions come nearly free).
//!
//! Tiles of [`MR`] query rows × 8 database rows: database rows are the lanes (packed per pair
//! as two elements' three limb vectors), query limbs are broadcast from memory into the
//! additions; 5·MR accumulators, 6 row vectors and 6 sum limbs stay in registers. Loop nest,
//! outer to inner: database block ([`NC`] rows) → K-block ([`KC`], the block's rows packed,
//! ≤ 12 MiB) → query block ([`MC`] rows packed, ≤ 768 KiB, stays in L2) → database panel (8
//! rows, 96 KiB) → query panel → tile kernel.

use std::arch::x86_64::*;

use super::gemm::aligned_scratch;
use super::isa::{self, Isa};
use super::ring128::winograd_start;

/// Elements of K per block: even, at most 4096 (see the module docs).
const KC: usize = 512;
/// Query rows per block.
const MC: usize = 63;
/// Database rows per block.
const NC: usize = 1024;
/// Query rows per tile.
const MR: usize = 3;
/// Database rows per tile: the lanes of a vector.
const NR: usize = 8;
/// u64 words per pair of a packed database panel (2 elements × 3 limbs × 8 rows) and per pair
/// and row of a packed query panel.
const D_PAIR: usize = 6 * NR;
const Q_PAIR: usize = 6;

const MASK51: u64 = (1 << 51) - 1;

/// Token for the IFMA kernel: only [`Ifma::get`] hands one out, after detection.
pub(crate) struct Ifma {
    _private: (),
}

impl Ifma {
    /// The token, if the CPU has the AVX-512 level and IFMA.
    pub(crate) fn get() -> Option<&'static Self> {
        static TOKEN: Ifma = Ifma { _private: () };
        (isa::hardware() >= Isa::Avx512 && is_x86_feature_detected!("avx512ifma")).then_some(&TOKEN)
    }

    /// The matrix product mod 2^128 (contract as `ring128::gemm_portable`).
    pub(crate) fn gemm_u128(&self, a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
        // SAFETY: the token exists only if the CPU has AVX-512 F and IFMA.
        unsafe { gemm(a, a_rows, b, len, out) }
    }
}

/// The three 51-bit limbs of `x`.
#[inline(always)]
fn limbs(x: u128) -> [u64; 3] {
    [x as u64 & MASK51, (x >> 51) as u64 & MASK51, (x >> 102) as u64]
}

/// Packs elements `k0..k0 + kn` (`kn` even) of up to 8 database rows (at `starts`, missing
/// rows zero) as panel `[pair][element][limb][row]`.
fn pack_database(src: &[u128], starts: &[usize], k0: usize, kn: usize, dst: &mut [u64]) {
    let dst = &mut dst[..kn / 2 * D_PAIR];
    dst.fill(0);
    for (r, &s) in starts.iter().enumerate() {
        for (k, &x) in src[s + k0..][..kn].iter().enumerate() {
            for (l, v) in limbs(x).into_iter().enumerate() {
                dst[k / 2 * D_PAIR + (k % 2 * 3 + l) * NR + r] = v;
            }
        }
    }
}

/// Packs elements `k0..k0 + kn` (`kn` even) of up to [`MR`] query rows (at `starts`, missing
/// rows zero) as panel `[pair][row][element][limb]`.
fn pack_queries(src: &[u128], starts: &[usize], k0: usize, kn: usize, dst: &mut [u64]) {
    let dst = &mut dst[..kn / 2 * MR * Q_PAIR];
    dst.fill(0);
    for (r, &s) in starts.iter().enumerate() {
        for (k, &x) in src[s + k0..][..kn].iter().enumerate() {
            dst[(k / 2 * MR + r) * Q_PAIR + k % 2 * 3..][..3].copy_from_slice(&limbs(x));
        }
    }
}

/// Sums of one tile row: lo0, lo1, lo2, hi0, hi1 (see the module docs).
type Row = [__m512i; 5];

/// One pair for one tile row: `q` the row's two elements' limbs, `b` the database vectors
/// (`b[3e + l]`: limb l of element e of each row).
///
/// # Safety
/// AVX-512 F and IFMA.
#[inline(always)]
unsafe fn pair(c: &mut Row, q: &[u64; Q_PAIR], b: &[__m512i; 6]) {
    // SAFETY: the caller guarantees the features.
    unsafe {
        let bc = |i: usize| _mm512_set1_epi64(q[i] as i64);
        // s = a_2m + b_2m+1, t = a_2m+1 + b_2m, limb by limb.
        let s: [__m512i; 3] = std::array::from_fn(|l| _mm512_add_epi64(bc(l), b[3 + l]));
        let t: [__m512i; 3] = std::array::from_fn(|l| _mm512_add_epi64(bc(3 + l), b[l]));
        c[0] = _mm512_madd52lo_epu64(c[0], s[0], t[0]);
        c[3] = _mm512_madd52hi_epu64(c[3], s[0], t[0]);
        c[1] = _mm512_madd52lo_epu64(c[1], s[0], t[1]);
        c[4] = _mm512_madd52hi_epu64(c[4], s[0], t[1]);
        c[2] = _mm512_madd52lo_epu64(c[2], s[0], t[2]);
        c[1] = _mm512_madd52lo_epu64(c[1], s[1], t[0]);
        c[4] = _mm512_madd52hi_epu64(c[4], s[1], t[0]);
        c[2] = _mm512_madd52lo_epu64(c[2], s[1], t[1]);
        c[2] = _mm512_madd52lo_epu64(c[2], s[2], t[0]);
    }
}

/// The MR × 8 tile of pair sums of a query panel `q` and a database panel `d` over `pairs`
/// pairs, as `[query row][database row]`.
///
/// # Safety
/// AVX-512 F and IFMA; `pairs` ≤ [`KC`] / 2.
#[inline(always)]
unsafe fn tile(q: &[u64], d: &[u64], pairs: usize) -> [[u128; NR]; MR] {
    let (q, d) = (&q[..pairs * MR * Q_PAIR], &d[..pairs * D_PAIR]);
    // SAFETY: the caller guarantees the features; every load reads inside `d` (each pair's
    // own D_PAIR words).
    unsafe {
        let mut c = [[_mm512_setzero_si512(); 5]; MR];
        for (qm, dm) in q.chunks_exact(MR * Q_PAIR).zip(d.chunks_exact(D_PAIR)) {
            let b: [__m512i; 6] = std::array::from_fn(|i| _mm512_loadu_si512(dm[i * NR..].as_ptr().cast()));
            for (u, cu) in c.iter_mut().enumerate() {
                let qu: &[u64; Q_PAIR] = qm[u * Q_PAIR..][..Q_PAIR].try_into().expect("one row's pair");
                pair(cu, qu, &b);
            }
        }
        let mut sums = [[0u128; NR]; MR];
        for (row, cu) in sums.iter_mut().zip(&c) {
            let mut w = [[0u64; NR]; 5];
            for (wp, v) in w.iter_mut().zip(cu) {
                _mm512_storeu_si512(wp.as_mut_ptr().cast(), *v);
            }
            for (l, s) in row.iter_mut().enumerate() {
                let word = |p: usize, shift: u32| u128::from(w[p][l]) << shift;
                *s = word(0, 0)
                    .wrapping_add(word(1, 51))
                    .wrapping_add(word(2, 102))
                    .wrapping_add(word(3, 52))
                    .wrapping_add(word(4, 103));
            }
        }
        sums
    }
}

/// The blocked product (see the module docs).
///
/// # Safety
/// AVX-512 F and IFMA.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn gemm(a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
    let (rows_a, rows_b) = (a_rows.len(), b.len() / len);
    if rows_a == 0 || rows_b == 0 {
        return;
    }
    let even = winograd_start(a, a_rows, b, len, out);
    let nc = NC.min(rows_b.div_ceil(NR) * NR);
    let mc = MC.min(rows_a.div_ceil(MR) * MR);
    let (mut dbuf, d_off) = aligned_scratch::<u64>(nc * KC * 3);
    let (mut qbuf, q_off) = aligned_scratch::<u64>(mc * KC * 3);
    let (dpack, qpack) = (&mut dbuf[d_off..], &mut qbuf[q_off..]);
    let b_rows: Vec<usize> = (0..rows_b).map(|j| j * len).collect();
    for j0 in (0..rows_b).step_by(nc) {
        let dblock = &b_rows[j0..(j0 + nc).min(rows_b)];
        for k0 in (0..even).step_by(KC) {
            let kn = KC.min(even - k0);
            let (dsize, qsize) = (kn / 2 * D_PAIR, kn / 2 * MR * Q_PAIR);
            for (p, starts) in dblock.chunks(NR).enumerate() {
                pack_database(b, starts, k0, kn, &mut dpack[p * dsize..]);
            }
            for i0 in (0..rows_a).step_by(mc) {
                let qblock = &a_rows[i0..(i0 + mc).min(rows_a)];
                for (p, starts) in qblock.chunks(MR).enumerate() {
                    pack_queries(a, starts, k0, kn, &mut qpack[p * qsize..]);
                }
                for (dp, dstarts) in dblock.chunks(NR).enumerate() {
                    let d = &dpack[dp * dsize..][..dsize];
                    for (qp, qstarts) in qblock.chunks(MR).enumerate() {
                        let q = &qpack[qp * qsize..][..qsize];
                        // SAFETY: features guaranteed by the caller; kn ≤ KC.
                        let sums = unsafe { tile(q, d, kn / 2) };
                        let (i, j) = (i0 + qp * MR, j0 + dp * NR);
                        for (u, row) in sums.iter().enumerate().take(qstarts.len()) {
                            let o = &mut out[(i + u) * rows_b + j..][..dstarts.len()];
                            for (o, &s) in o.iter_mut().zip(row) {
                                *o = o.wrapping_add(s);
                            }
                        }
                    }
                }
            }
        }
    }
}
