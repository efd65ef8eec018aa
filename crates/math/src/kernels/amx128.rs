//! The matrix product mod 2^128 on the AMX-INT8 tile unit, as sums of byte products.
//!
//! With x = Σ_q 2^(8q)·x_q (bytes x_0..x_15),
//!
//! ```text
//! a·b mod 2^128 = Σ_{p<16} 2^(8p)·Σ_{i+j=p} a_i·b_j          (every i + j ≥ 16 term vanishes)
//! ```
//!
//! so output (i, j) is Σ_p 2^(8p)·S_p with S_p = Σ_k Σ_{i'+j'=p} a_i'[k]·b_j'[k]: position p is
//! one byte dot product of length (p+1)·K, between query i's byte planes 0..=p (plane q holds
//! byte q of every element) and database row j's planes p..=0. Queries are packed with their
//! planes in order and database rows with theirs reversed, so both operands of position p are
//! contiguous: a prefix of the query's planes, a suffix of the database row's. `tdpbuud` sums
//! u8×u8 products into i32 lanes that wrap mod 2^32; S_p for p < 12 must be exact, which holds
//! for (p+1)·K·255² < 2^32, so K is cut into blocks of [`KB`] (12·1024·255² < 2^30); for p ≥ 12
//! the wrap is a multiple of 2^(32+8p) ≥ 2^128 and vanishes. Each K-block's result is added to
//! the output in `u128`.
//!
//! Per 32 × 32 output block (2 × 2 tiles: two query tiles as the "A" operand, 16 rows × 64
//! bytes of K, and two database tiles as "B", in the VNNI layout: packed row r holds, for each
//! of 16 database rows, bytes 4r..4r+3 of the K step) the kernel runs the positions two at a
//! time per database tile ([`position_pair`]: four accumulator tiles, two query tiles and two
//! database tiles, of which one is reused from the previous round), three operand loads per
//! four `tdpbuud`, and stores the accumulators to scratch. Loop nest, outer to inner: database
//! chunk ([`NC`] rows) → K-block (the chunk's rows packed, ≤ 16 MiB) → query block (32 rows
//! packed, 512 KiB, stays in L2) → database block (32 rows, 512 KiB) → database tile →
//! position pair → K step → query plane.

use std::arch::asm;
use std::arch::x86_64::*;

use super::amx::{Amx, CONFIG, STEP, TILE};
use super::gemm::aligned_scratch;

/// Elements of K per block (a multiple of [`STEP`]; see the module docs for the bound).
const KB: usize = 1024;
/// Database rows per chunk.
const NC: usize = 1024;
/// Rows per block on either side: two tiles.
const BLOCK: usize = 32;
/// Byte planes of a `u128`, and the positions summed.
const PLANES: usize = 16;

/// Matrix product mod 2^128 (contract as `ring128::gemm_portable`) on the tile unit.
pub(crate) fn gemm_u128(_token: &Amx, a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
    // SAFETY: the token exists only if AMX is usable and the CPU has the AVX-512 level.
    unsafe { gemm(a, a_rows, b, len, out) }
}

/// Elements per chunk of the byte transpose ([`planes64`]).
const CHUNK: usize = 64;

/// The 16 byte planes of 64 elements: register q holds byte q of each, at byte L·16 + r for
/// element 4r + L. That order is a fixed permutation of K within every 64-element step, the
/// same for both operands, so the dot products do not change.
///
/// Four 16 × 16 byte transposes side by side (one per 128-bit lane): input register r holds
/// elements 4r..4r+3, and four rounds of unpacks (8, 16, 32, 64 bits) leave, after round s,
/// the rows' bytes grouped 2^s at a time; the indexing below keeps register q = plane q.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn planes64(x: &[u128; CHUNK]) -> [__m512i; PLANES] {
    // SAFETY: the caller guarantees the features; the loads read inside `x` (16 × 64 bytes).
    unsafe {
        let mut r: [__m512i; 16] = std::array::from_fn(|i| _mm512_loadu_si512(x.as_ptr().add(4 * i).cast()));
        let mut t = r;
        for i in 0..8 {
            t[i] = _mm512_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
            t[8 + i] = _mm512_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
        }
        for h in 0..2 {
            for i in 0..4 {
                let (x, y) = (t[8 * h + 2 * i], t[8 * h + 2 * i + 1]);
                r[8 * h + i] = _mm512_unpacklo_epi16(x, y);
                r[8 * h + 4 + i] = _mm512_unpackhi_epi16(x, y);
            }
        }
        for g in 0..4 {
            for i in 0..2 {
                let (x, y) = (r[4 * g + 2 * i], r[4 * g + 2 * i + 1]);
                t[4 * g + i] = _mm512_unpacklo_epi32(x, y);
                t[4 * g + 2 + i] = _mm512_unpackhi_epi32(x, y);
            }
        }
        for g in 0..8 {
            let (x, y) = (t[2 * g], t[2 * g + 1]);
            r[2 * g] = _mm512_unpacklo_epi64(x, y);
            r[2 * g + 1] = _mm512_unpackhi_epi64(x, y);
        }
        r
    }
}

/// Writes the byte planes of `x` (at most `kp` elements, `kp` a multiple of [`CHUNK`]) to
/// `dst`, each zero-padded to `kp` bytes, in K order permuted as [`planes64`] does: plane q at
/// slot q, or at slot 15 − q if `reversed`.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn split_planes(x: &[u128], kp: usize, reversed: bool, dst: &mut [u8]) {
    let dst = &mut dst[..PLANES * kp];
    let mut tail = [0u128; CHUNK];
    for c in 0..kp / CHUNK {
        let part = x.get(c * CHUNK..).unwrap_or(&[]);
        let chunk: &[u128; CHUNK] = match part.first_chunk() {
            Some(whole) => whole,
            None => {
                let n = part.len().min(CHUNK);
                tail[..n].copy_from_slice(&part[..n]);
                tail[n..].fill(0);
                &tail
            }
        };
        // SAFETY: features guaranteed by the caller.
        let planes = unsafe { planes64(chunk) };
        for (q, v) in planes.into_iter().enumerate() {
            let slot = if reversed { PLANES - 1 - q } else { q };
            let out: &mut [u8; CHUNK] = (&mut dst[slot * kp + c * CHUNK..][..CHUNK]).try_into().expect("64 bytes");
            // SAFETY: the store writes the 64 bytes of `out`; AVX-512 F guaranteed.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) };
        }
    }
}

/// Bytes between packed query rows: their planes (16·kp) and one cache line, so that the 16
/// rows of a query tile do not all fall in one L1 set (a multiple of 4 KiB would put them
/// there, and evict each other).
fn query_stride(kp: usize) -> usize {
    PLANES * kp + STEP
}

/// Packs the query block (rows at `starts`, missing rows zero), elements `k` of each: row r's
/// planes in order at `dst[r·query_stride(kp)..]`.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn pack_queries(a: &[u128], starts: &[usize], k: std::ops::Range<usize>, kp: usize, dst: &mut [u8]) {
    for r in 0..BLOCK {
        let row = &mut dst[r * query_stride(kp)..][..PLANES * kp];
        match starts.get(r) {
            // SAFETY: features guaranteed by the caller.
            Some(&s) => unsafe { split_planes(&a[s + k.start..s + k.end], kp, false, row) },
            None => row.fill(0),
        }
    }
}

/// Packs a database block (rows at `starts`, missing rows zero), elements `k` of each, as two
/// tiles' operands in the VNNI layout, planes reversed: tile t at `dst[t·16·16·kp..]`, then
/// (plane slot, K step) consecutive 1 KiB tiles. `tmp` holds one row's planes (16·kp bytes).
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn pack_database(
    b: &[u128],
    starts: &[usize],
    k: std::ops::Range<usize>,
    kp: usize,
    tmp: &mut [u8],
    dst: &mut [u8],
) {
    let steps = kp / STEP;
    for r in 0..BLOCK {
        let (t, col) = (r / 16, r % 16);
        match starts.get(r) {
            // SAFETY: features guaranteed by the caller.
            Some(&s) => unsafe { split_planes(&b[s + k.start..s + k.end], kp, true, tmp) },
            None => tmp[..PLANES * kp].fill(0),
        }
        // Tile t's (slot, step) tiles follow each other; in each, packed row `quad` holds the
        // row's 4 bytes of K at column `col`.
        let tiles = dst[t * PLANES * steps * TILE..][..PLANES * steps * TILE].chunks_exact_mut(TILE);
        for (tile, bytes) in tiles.zip(tmp[..PLANES * kp].chunks_exact(STEP)) {
            for (quad, word) in bytes.chunks_exact(4).enumerate() {
                tile[quad * STEP + col * 4..][..4].copy_from_slice(word);
            }
        }
    }
}

/// Positions `p` and `p + 1` (`p` even) of two query tiles against one database tile, with the
/// database operand reused: for each K step, query plane i meets database plane p − i for
/// position p and p + 1 − i for position p + 1, which is plane p − (i − 1), the one loaded for
/// position p in the previous round. So each round loads two query tiles and one database tile
/// for four `tdpbuud` (tmm6 and tmm7 take turns holding the newer database tile).
///
/// Query tiles at `q` (rows 0..16, row stride `qs`) and `q + 16·qs`, planes `kp` bytes apart;
/// database tile of plane p at `d` (slot 15 − p, 1 KiB per step, slots `ss` bytes apart). Sums
/// stored as tiles at `acc[0]` (q0, position p), `acc[1]` (q1, p), `acc[2]` (q0, p + 1) and
/// `acc[3]` (q1, p + 1).
///
/// # Safety
/// AMX tiles configured by [`CONFIG`] on this thread; planes 0..=p+1 of both query tiles and
/// slots 14 − p..=15 of the database tile readable for `steps` steps, a tile writable at each
/// `acc`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn position_pair(
    q: *const u8,
    qs: usize,
    kp: usize,
    d: *const u8,
    ss: usize,
    steps: usize,
    p: usize,
    acc: [*mut u8; 4],
) {
    // SAFETY (all blocks): the caller guarantees the configuration and the extents read and
    // written; the tile registers are used by nothing else in this program.
    unsafe {
        asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nomem, nostack));
        asm!(
            "2:",
            // Round i = 0: tmm6 = plane p + 1 (position p + 1), tmm7 = plane p (position p).
            "mov {qa}, {d}",
            "sub {qa}, {ss}",
            "tileloadd tmm6, [{qa} + {ds}*1]",
            "mov {da}, {d}",
            "mov {qa}, {q}",
            "mov {qb}, {qs}",
            "shl {qb}, 4",
            "add {qb}, {q}",
            "tileloadd tmm4, [{qa} + {qs}*1]",
            "tileloadd tmm7, [{da} + {ds}*1]",
            "tdpbuud tmm0, tmm4, tmm7",
            "tdpbuud tmm2, tmm4, tmm6",
            "tileloadd tmm5, [{qb} + {qs}*1]",
            "tdpbuud tmm1, tmm5, tmm7",
            "tdpbuud tmm3, tmm5, tmm6",
            "mov {n}, {half}",
            "test {n}, {n}",
            "jz 4f",
            "3:",
            // Round i odd: tmm7 holds plane p − i + 1, load plane p − i into tmm6.
            "add {qa}, {kp}",
            "add {qb}, {kp}",
            "add {da}, {ss}",
            "tileloadd tmm4, [{qa} + {qs}*1]",
            "tileloadd tmm6, [{da} + {ds}*1]",
            "tdpbuud tmm0, tmm4, tmm6",
            "tdpbuud tmm2, tmm4, tmm7",
            "tileloadd tmm5, [{qb} + {qs}*1]",
            "tdpbuud tmm1, tmm5, tmm6",
            "tdpbuud tmm3, tmm5, tmm7",
            // Round i even: roles swapped back.
            "add {qa}, {kp}",
            "add {qb}, {kp}",
            "add {da}, {ss}",
            "tileloadd tmm4, [{qa} + {qs}*1]",
            "tileloadd tmm7, [{da} + {ds}*1]",
            "tdpbuud tmm0, tmm4, tmm7",
            "tdpbuud tmm2, tmm4, tmm6",
            "tileloadd tmm5, [{qb} + {qs}*1]",
            "tdpbuud tmm1, tmm5, tmm7",
            "tdpbuud tmm3, tmm5, tmm6",
            "dec {n}",
            "jnz 3b",
            "4:",
            // Round i = p + 1: position p + 1 only, against plane 0 (in tmm7).
            "add {qa}, {kp}",
            "add {qb}, {kp}",
            "tileloadd tmm4, [{qa} + {qs}*1]",
            "tdpbuud tmm2, tmm4, tmm7",
            "tileloadd tmm5, [{qb} + {qs}*1]",
            "tdpbuud tmm3, tmm5, tmm7",
            // Next K step.
            "add {q}, 64",
            "add {d}, 1024",
            "dec {steps}",
            "jnz 2b",
            q = inout(reg) q => _, d = inout(reg) d => _, steps = inout(reg) steps => _,
            qa = out(reg) _, qb = out(reg) _, da = out(reg) _, n = out(reg) _,
            qs = in(reg) qs, kp = in(reg) kp, ss = in(reg) ss, half = in(reg) p / 2, ds = in(reg) STEP,
            options(readonly, nostack),
        );
        for (t, at) in acc.into_iter().enumerate() {
            match t {
                0 => asm!("tilestored [{} + {}*1], tmm0", in(reg) at, in(reg) STEP, options(nostack)),
                1 => asm!("tilestored [{} + {}*1], tmm1", in(reg) at, in(reg) STEP, options(nostack)),
                2 => asm!("tilestored [{} + {}*1], tmm2", in(reg) at, in(reg) STEP, options(nostack)),
                _ => asm!("tilestored [{} + {}*1], tmm3", in(reg) at, in(reg) STEP, options(nostack)),
            }
        }
    }
}

/// u32 lanes per tile.
const LANES: usize = TILE / 4;

/// Row `m` of tile `t` of a block from the position sums in `acc` (position p's four tiles at
/// `p·4·LANES`, u32 lanes `[row][column]`): Σ_p 2^(8p)·S_p mod 2^128 for each of the 16
/// columns, as (low, high) 64-bit halves. Summed in pairs in `u64` lanes first (S_p < 2^32, so
/// 2^8-weighted pairs stay below 2^41 and 2^16-weighted pairs of those below 2^58), which the
/// compiler vectorises across the row.
#[inline(always)]
fn combine_row(acc: &[u32], t: usize, m: usize) -> ([u64; 16], [u64; 16]) {
    let s: [&[u32; 16]; PLANES] =
        std::array::from_fn(|p| acc[(p * 4 + t) * LANES + m * 16..][..16].try_into().expect("16 lanes"));
    let (mut low, mut high) = ([0u64; 16], [0u64; 16]);
    for n in 0..16 {
        let pair = |q: usize| u64::from(s[2 * q][n]) + (u64::from(s[2 * q + 1][n]) << 8);
        let quad = |r: usize| pair(2 * r) + (pair(2 * r + 1) << 16);
        // quad(0) + 2^32·quad(1) + 2^64·quad(2) + 2^96·quad(3), in halves with the carry.
        let (q0, q1) = (quad(0), quad(1));
        let (lo, carry) = q0.overflowing_add(q1 << 32);
        low[n] = lo;
        high[n] = (q1 >> 32).wrapping_add(quad(2)).wrapping_add(quad(3) << 32).wrapping_add(u64::from(carry));
    }
    (low, high)
}

/// The blocked product (see the module docs); later K-blocks add to `out`.
///
/// # Safety
/// AMX usable on this thread's process (the [`Amx`] token), AVX-512 F/BW/DQ/VL.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn gemm(a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
    let (rows_a, rows_b) = (a_rows.len(), b.len() / len);
    if rows_a == 0 || rows_b == 0 {
        return;
    }
    let kb = KB.min(len.div_ceil(STEP) * STEP);
    let nc = NC.min(rows_b.div_ceil(BLOCK) * BLOCK);
    let (mut dbuf, d_off) = aligned_scratch::<u8>(nc * PLANES * kb);
    let (mut qbuf, q_off) = aligned_scratch::<u8>(BLOCK * query_stride(kb));
    let (mut abuf, a_off) = aligned_scratch::<u32>(PLANES * 4 * LANES);
    let mut tmp = vec![0u8; PLANES * kb];
    let (dpack, qpack, acc) = (&mut dbuf[d_off..], &mut qbuf[q_off..], &mut abuf[a_off..]);
    let b_rows: Vec<usize> = (0..rows_b).map(|j| j * len).collect();
    // SAFETY: the token guarantees AMX is usable; the configuration is loaded before any tile
    // instruction and released at the end.
    unsafe { asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(readonly, nostack)) };
    for j0 in (0..rows_b).step_by(nc) {
        let chunk = &b_rows[j0..(j0 + nc).min(rows_b)];
        for k0 in (0..len).step_by(kb) {
            let k = k0..(k0 + kb).min(len);
            let kp = k.len().div_ceil(STEP) * STEP;
            let (steps, bytes) = (kp / STEP, BLOCK * PLANES * kp);
            for (d, starts) in chunk.chunks(BLOCK).enumerate() {
                // SAFETY: AVX-512 F and BW enabled on this function.
                unsafe { pack_database(b, starts, k.clone(), kp, &mut tmp, &mut dpack[d * bytes..][..bytes]) };
            }
            for i0 in (0..rows_a).step_by(BLOCK) {
                let qrows = &a_rows[i0..(i0 + BLOCK).min(rows_a)];
                // SAFETY: AVX-512 F and BW enabled on this function.
                unsafe { pack_queries(a, qrows, k.clone(), kp, qpack) };
                for (d, drows) in chunk.chunks(BLOCK).enumerate() {
                    let dblock = &dpack[d * bytes..][..bytes];
                    for (dt, p) in (0..2).flat_map(|dt| (0..PLANES).step_by(2).map(move |p| (dt, p))) {
                        // Database tile dt's plane p is at slot 15 − p.
                        let d_at = dt * PLANES * steps * TILE + (PLANES - 1 - p) * steps * TILE;
                        let base = acc.as_mut_ptr();
                        // Position p's tile of query tile qt (in bounds: p < 16, qt < 2).
                        let tile = |p: usize, qt: usize| base.wrapping_add((p * 4 + 2 * qt + dt) * LANES).cast::<u8>();
                        // SAFETY: configured above; the query tiles read planes 0..=p+1 of rows
                        // 0..32 (stride query_stride(kp)), the database tile slots 14−p..=15,
                        // the accumulators are 4 tiles of positions p and p + 1.
                        unsafe {
                            position_pair(
                                qpack.as_ptr(),
                                query_stride(kp),
                                kp,
                                dblock.as_ptr().add(d_at),
                                steps * TILE,
                                steps,
                                p,
                                [tile(p, 0), tile(p, 1), tile(p + 1, 0), tile(p + 1, 1)],
                            );
                        }
                    }
                    write_block(acc, (i0, qrows.len()), (j0 + d * BLOCK, drows.len()), rows_b, k0 == 0, out);
                }
            }
        }
    }
    // SAFETY: releases this thread's tile state (cheaper context switches).
    unsafe { asm!("tilerelease", options(nomem, nostack)) };
}

/// Writes (`first`) or adds the valid outputs of a block: query rows `i0..i0 + ni`, database
/// rows `j0..j0 + nj`, from the position sums in `acc`.
#[inline(always)]
fn write_block(
    acc: &[u32],
    (i0, ni): (usize, usize),
    (j0, nj): (usize, usize),
    rows_b: usize,
    first: bool,
    out: &mut [u128],
) {
    for t in 0..4 {
        let (di, dj) = (16 * (t / 2), 16 * (t % 2));
        if di >= ni || dj >= nj {
            continue;
        }
        for m in 0..(ni - di).min(16) {
            let (low, high) = combine_row(acc, t, m);
            let o = &mut out[(i0 + di + m) * rows_b + j0 + dj..][..(nj - dj).min(16)];
            for ((o, &l), &h) in o.iter_mut().zip(&low).zip(&high) {
                let v = u128::from(h) << 64 | u128::from(l);
                *o = if first { v } else { o.wrapping_add(v) };
            }
        }
    }
}
