//! A 16-bit ring matrix product for AVX-512 VNNI with the query rows packed 16 side by side:
//! one `vpdpwssd` multiplies a broadcast pair of a database row's values by that pair in 16
//! query rows at once, so each accumulator lane is one dot product and no horizontal sums are
//! needed (the row-by-row kernel in `gemm.rs` spends ~10 instructions per dot product on them,
//! which matters when the products are short, as the leaves of `correlate` are). The database
//! rows are read in place.
//!
//! Packed layout ([`pack_rows`]): group `g` of 16 query rows, pair `p` of elements, row `r`,
//! element `e` at `(g·pairs + p)·32 + 2r + e`; rows past the end of the last group and the odd
//! element past `k` are zero. Tiles are two groups × 8 database rows, or one group × 16 rows for
//! an odd last group: 16 accumulators either way.

use std::arch::x86_64::*;

/// Query rows per packed group: the 16 i32 lanes of one accumulator.
const GROUP: usize = 16;

/// Pairs of elements per row of `k` elements.
fn pairs(k: usize) -> usize {
    k.div_ceil(2)
}

/// Packs the query rows `a[a_rows[i]..][..k]` into `dst` (appended).
pub(crate) fn pack_rows(a: &[u16], a_rows: &[usize], k: usize, dst: &mut Vec<u16>) {
    let base = dst.len();
    dst.resize(base + packed_len(a_rows.len(), k), 0);
    let kp = pairs(k);
    let dst = &mut dst[base..];
    for (i, &s) in a_rows.iter().enumerate() {
        let (g, r) = (i / GROUP, i % GROUP);
        let at = g * kp * 2 * GROUP + 2 * r;
        for (j, &x) in a[s..s + k].iter().enumerate() {
            dst[at + (j / 2) * 2 * GROUP + j % 2] = x;
        }
    }
}

/// Values of [`pack_rows`]'s output for `rows_a` rows of `k`.
pub(crate) fn packed_len(rows_a: usize, k: usize) -> usize {
    rows_a.div_ceil(GROUP) * pairs(k) * 2 * GROUP
}

/// The sums of one tile: `G` packed query groups (`aq`) times `NR` database rows (`r`, `k`
/// each, `whole = k / 2` pairs), one accumulator per group and row.
///
/// # Safety
/// AVX-512 F/BW/VNNI; every `aq[h]` holds `pairs(k)` packed pairs, every `r[u]` `k` values.
#[inline(always)]
unsafe fn tile<const G: usize, const NR: usize>(aq: [&[u16]; G], r: [&[u16]; NR], k: usize) -> [[__m512i; G]; NR] {
    let whole = k / 2; // pairs read from a row as one i32; an odd k's last value is added alone
                       // SAFETY: by the contract, the packed loads stay below pairs(k) pairs, the row reads below
                       // 2·whole <= k (plus index k − 1).
    unsafe {
        let mut t = [[_mm512_setzero_si512(); G]; NR];
        for p in 0..whole {
            let q: [__m512i; G] = std::array::from_fn(|h| _mm512_loadu_si512(aq[h].as_ptr().add(p * 2 * GROUP).cast()));
            for u in 0..NR {
                let x = _mm512_set1_epi32(r[u].as_ptr().add(2 * p).cast::<i32>().read_unaligned());
                for h in 0..G {
                    t[u][h] = _mm512_dpwssd_epi32(t[u][h], q[h], x);
                }
            }
        }
        if whole < pairs(k) {
            let q: [__m512i; G] =
                std::array::from_fn(|h| _mm512_loadu_si512(aq[h].as_ptr().add(whole * 2 * GROUP).cast()));
            for u in 0..NR {
                let x = _mm512_set1_epi32(i32::from(r[u][k - 1]));
                for h in 0..G {
                    t[u][h] = _mm512_dpwssd_epi32(t[u][h], q[h], x);
                }
            }
        }
        t
    }
}

/// Runs [`tile`] over all database rows for the query groups starting at `g`, storing the sums
/// of the rows that exist.
///
/// # Safety
/// As [`gemm_packed`], and `g + G <= groups`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn groups_times_rows<const G: usize, const NR: usize>(
    ap: &[u16],
    g: usize,
    rows_a: usize,
    b: &[u16],
    k: usize,
    out: &mut [u16],
    stride: usize,
) {
    let (rows_b, kp) = (b.len() / k, pairs(k));
    let aq: [&[u16]; G] = std::array::from_fn(|h| &ap[(g + h) * kp * 2 * GROUP..][..kp * 2 * GROUP]);
    for j0 in (0..rows_b).step_by(NR) {
        // Rows past the end repeat the last one; their sums are not stored.
        let r: [&[u16]; NR] = std::array::from_fn(|u| &b[(j0 + u).min(rows_b - 1) * k..][..k]);
        // SAFETY: forwarded contract; the slices above have the lengths `tile` reads.
        let t = unsafe { tile::<G, NR>(aq, r, k) };
        for (u, tu) in t.iter().enumerate().take(rows_b - j0) {
            let row = &mut out[(j0 + u) * stride..];
            for (h, &acc) in tu.iter().enumerate() {
                let i0 = (g + h) * GROUP;
                // SAFETY: AVX-512 F/BW by the contract; the array has the vector's size.
                let sums: [u16; GROUP] = unsafe { std::mem::transmute(_mm512_cvtepi32_epi16(acc)) };
                let n = GROUP.min(rows_a - i0);
                row[i0..i0 + n].copy_from_slice(&sums[..n]);
            }
        }
    }
}

/// `out[j·stride + i] = Σ_k query_i[k]·b_j[k] mod 2^16` for the `rows_a` query rows packed in
/// `ap` by [`pack_rows`] and the row-major rows of `b` (`k` each); note the transposed output.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VNNI. Panics if `ap` is shorter than
/// [`packed_len`]`(rows_a, k)` or `out` than the last row's end.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(crate) unsafe fn gemm_packed(ap: &[u16], rows_a: usize, b: &[u16], k: usize, out: &mut [u16], stride: usize) {
    let rows_b = b.len() / k;
    if rows_a == 0 || rows_b == 0 {
        return;
    }
    assert!(ap.len() >= packed_len(rows_a, k), "packed query rows too short");
    assert!(out.len() >= (rows_b - 1) * stride + rows_a && stride >= rows_a, "output too short");
    let groups = rows_a.div_ceil(GROUP);
    for g in (0..groups).step_by(2) {
        // SAFETY: forwarded contract; g + 2 <= groups, or g + 1 == groups for the last one.
        unsafe {
            if g + 2 <= groups {
                groups_times_rows::<2, 8>(ap, g, rows_a, b, k, out, stride)
            } else {
                groups_times_rows::<1, 16>(ap, g, rows_a, b, k, out, stride)
            }
        }
    }
}
