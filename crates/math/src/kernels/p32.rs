//! Matrix product modulo any `p < 2^32` on 32-bit values (Shamir over a 32-bit prime, paper 000
//! Table 1's F32): the 64-bit products are summed twice — wrapping, and their high halves exactly
//! — which gives the exact sum for rows below 2^32 elements (see [`sums`]), reduced mod p once per
//! dot product. On AVX-512 the sums are `vpmuludq` on the even and the odd 32-bit lanes (16
//! products per step); the other levels compile the same plain loop for their vectors.

use super::Isa;

/// Lanes of the accumulators: one AVX-512 register of u64.
const LANES: usize = 8;

/// Database rows per block: each block's rows (8 × 51 kB at length 12800) stay in L2 while every
/// query passes over them.
const BLOCK_ROWS: usize = 8;

/// `Σ a_i·b_i` over whole groups of [`LANES`] as `(S, H)`: `S` the wrapping sum of the 64-bit
/// products, `H` the exact sum of their high halves. The exact sum is `H·2^32 + L` where `L`,
/// the sum of the low halves, is `S − H·2^32 mod 2^64` (it is below 2^64 for fewer than 2^32
/// terms) — one addition per product fewer than summing both halves.
#[inline(always)]
fn sums(a: &[u32], b: &[u32]) -> (u64, u64) {
    let (mut s, mut h) = ([0u64; LANES], [0u64; LANES]);
    for (x, y) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        for t in 0..LANES {
            let p = u64::from(x[t]) * u64::from(y[t]);
            s[t] = s[t].wrapping_add(p);
            h[t] += p >> 32;
        }
    }
    (s.iter().fold(0u64, |a, &v| a.wrapping_add(v)), h.iter().sum())
}

/// [`sums`] with AVX-512 intrinsics: `vpmuludq` multiplies the even 32-bit lanes, so the odd
/// ones are shifted down first; 16 products per step.
///
/// # Safety
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sums_avx512(a: &[u32], b: &[u32]) -> (u64, u64) {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len()) / 16 * 16;
    // SAFETY: AVX-512 F is the caller's promise; every load reads 16 u32 below `n`.
    unsafe {
        let (mut s, mut h) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        for k in (0..n).step_by(16) {
            let x = _mm512_loadu_si512(a.as_ptr().add(k).cast());
            let y = _mm512_loadu_si512(b.as_ptr().add(k).cast());
            let even = _mm512_mul_epu32(x, y);
            let odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(x), _mm512_srli_epi64::<32>(y));
            s = _mm512_add_epi64(s, _mm512_add_epi64(even, odd));
            h = _mm512_add_epi64(h, _mm512_add_epi64(_mm512_srli_epi64::<32>(even), _mm512_srli_epi64::<32>(odd)));
        }
        let (s, h) = (_mm512_reduce_add_epi64(s) as u64, _mm512_reduce_add_epi64(h) as u64);
        let (ts, th) = sums(&a[n..], &b[n..]);
        (s.wrapping_add(ts), h + th)
    }
}

/// `Σ a_i·b_i mod p` from `(S, H)` of the vectorised part and the scalar tail.
#[inline(always)]
fn finish(a: &[u32], b: &[u32], whole: usize, (s, h): (u64, u64), p: u64) -> u32 {
    let mut l = u128::from(s.wrapping_sub(h << 32));
    let mut h = u128::from(h);
    for (&x, &y) in a[whole..].iter().zip(&b[whole..]) {
        let prod = u64::from(x) * u64::from(y);
        l += u128::from(prod & 0xffff_ffff);
        h += u128::from(prod >> 32);
    }
    let p = u128::from(p);
    // Σ = H·2^32 + L, both below 2^96 for any row shorter than 2^32 elements.
    ((((h % p) << 32) + l) % p) as u32
}

#[inline(always)]
fn gemm_body(p: u32, a: &[u32], b: &[u32], len: usize, out: &mut [u32], simd: bool) {
    let rows_b = b.len() / len;
    let whole = len - len % LANES;
    for j0 in (0..rows_b).step_by(BLOCK_ROWS) {
        let block = &b[j0 * len..(j0 + BLOCK_ROWS).min(rows_b) * len];
        for (i, q) in a.chunks_exact(len).enumerate() {
            for (u, r) in block.chunks_exact(len).enumerate() {
                #[cfg(target_arch = "x86_64")]
                let sh = if simd {
                    // SAFETY: `simd` is set only by the AVX-512 entry point.
                    unsafe { sums_avx512(&q[..whole], &r[..whole]) }
                } else {
                    sums(&q[..whole], &r[..whole])
                };
                #[cfg(not(target_arch = "x86_64"))]
                let sh = sums(&q[..whole], &r[..whole]);
                out[i * rows_b + j0 + u] = finish(q, r, whole, sh, u64::from(p));
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn gemm_avx512(p: u32, a: &[u32], b: &[u32], len: usize, out: &mut [u32]) {
    gemm_body(p, a, b, len, out, true)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gemm_avx2(p: u32, a: &[u32], b: &[u32], len: usize, out: &mut [u32]) {
    gemm_body(p, a, b, len, out, false)
}

/// The product at `level` (already resolved to one the CPU has). Shapes are the caller's.
pub(crate) fn gemm(level: Isa, p: u32, a: &[u32], b: &[u32], len: usize, out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if level >= Isa::Avx512 {
            // SAFETY: `level` is available, so the CPU has AVX-512 F/BW/DQ/VL.
            return unsafe { gemm_avx512(p, a, b, len, out) };
        }
        if level >= Isa::Avx2 {
            // SAFETY: as above, AVX2.
            return unsafe { gemm_avx2(p, a, b, len, out) };
        }
    }
    let _ = level;
    gemm_body(p, a, b, len, out, false)
}

#[cfg(test)]
mod tests {
    use super::super::{available, gemm_mod_p32_with};
    use proptest::prelude::*;

    /// The definition with one u128 reduction per term.
    fn reference(p: u32, a: &[u32], b: &[u32], len: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for q in a.chunks_exact(len) {
            for r in b.chunks_exact(len) {
                let s = q.iter().zip(r).fold(0u128, |s, (&x, &y)| (s + u128::from(x) * u128::from(y)) % u128::from(p));
                out.push(s as u32);
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every level agrees with the definition, for the 32-bit prime, small moduli and any
        /// (also non-canonical) inputs, with lengths that leave tails of every size.
        #[test]
        fn matches_the_definition(
            p in prop_oneof![Just(4_294_967_291u32), Just(u32::MAX), Just(2u32), 2u32..1000, any::<u32>().prop_map(|v| v.max(2))],
            len in 1usize..40, qa in 0usize..5, rb in 0usize..20, seed in any::<u64>(),
        ) {
            let mut x = seed | 1;
            let mut next = || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u32 };
            let a: Vec<u32> = (0..qa * len).map(|_| next()).collect();
            let b: Vec<u32> = (0..rb * len).map(|_| next()).collect();
            let want = reference(p, &a, &b, len);
            for isa in available() {
                let mut out = vec![0u32; qa * rb];
                gemm_mod_p32_with(isa, p, &a, &b, len, &mut out).unwrap();
                prop_assert_eq!(&out, &want, "{:?}", isa);
            }
        }
    }

    /// The largest values at the iris length: every product is (2^32 − 1)^2, so both halves'
    /// sums are as large as they get.
    #[test]
    fn largest_values_at_length_12800() {
        let (p, len) = (4_294_967_291u32, 12800);
        let (a, b) = (vec![u32::MAX; 2 * len], vec![u32::MAX; 3 * len]);
        let want = reference(p, &a, &b, len);
        for isa in available() {
            let mut out = vec![0u32; 6];
            gemm_mod_p32_with(isa, p, &a, &b, len, &mut out).unwrap();
            assert_eq!(out, want, "{isa:?}");
        }
    }

    #[test]
    fn a_modulus_below_two_is_refused() {
        let mut out = vec![7u32; 1];
        assert!(gemm_mod_p32_with(super::super::detected(), 1, &[1], &[1], 1, &mut out).is_err());
        assert_eq!(out, [7]);
    }
}
