//! AVX2 level: 256-bit vector types for the generic kernels, and the level token.
//! See `avx512.rs` for why signed `vpmaddwd` is right for the unsigned ring.

use std::arch::x86_64::*;

use super::dispatch::{impl_simd_kernels, level_token};
use super::gemm::Blocking;
use super::isa::Isa;
use super::simd::{Mac, V16};

/// 16 lanes of 16 bits accumulating into 8 i32 lanes (`vpmaddwd` + `vpaddd`).
#[derive(Clone, Copy)]
pub(crate) struct Ymm16(__m256i);

/// 8 lanes of u32.
#[derive(Clone, Copy)]
pub(crate) struct Ymm32(__m256i);

/// 4 lanes of u64; AVX2 has no 64-bit multiply, so it is built from 32×32→64 `vpmuludq`.
#[derive(Clone, Copy)]
pub(crate) struct Ymm64(__m256i);

/// Wrapping sum of the four i64 lanes.
#[inline(always)]
unsafe fn hsum_i64x4(x: __m256i) -> i64 {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let s = _mm_add_epi64(_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
        _mm_cvtsi128_si64(s).wrapping_add(_mm_extract_epi64::<1>(s))
    }
}

// SAFETY (for the `unsafe impl`s): `load` reads exactly LANES elements; every method body
// needs only AVX2, which the trait contract makes the caller guarantee.
unsafe impl Mac for Ymm16 {
    type Elem = u16;
    const LANES: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u16) -> Self {
        // SAFETY: the caller guarantees 16 readable u16 at `p` and AVX2.
        Self(unsafe { _mm256_loadu_si256(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_add_epi32(acc.0, _mm256_madd_epi16(a.0, b.0)) })
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: AVX2 guaranteed by the caller.
        unsafe {
            let lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(acc.0));
            let hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(acc.0));
            hsum_i64x4(_mm256_add_epi64(lo, hi))
        }
    }
    #[inline(always)]
    unsafe fn fold(acc: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        unsafe {
            let hi = _mm256_srai_epi32::<16>(acc.0);
            let lo = _mm256_and_si256(acc.0, _mm256_set1_epi32(0xffff));
            // 17·hi = 16·hi + hi
            Self(_mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32::<4>(hi), hi), lo))
        }
    }
}

impl V16 for Ymm16 {
    #[inline(always)]
    unsafe fn centre(v: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        unsafe {
            // v > (p−1)/2 ⇔ max(v, 32760) == v (unsigned); then v − p ≡ v + 17 (mod 2^16).
            let big = _mm256_cmpeq_epi16(_mm256_max_epu16(v.0, _mm256_set1_epi16(32760)), v.0);
            Self(_mm256_add_epi16(v.0, _mm256_and_si256(big, _mm256_set1_epi16(17))))
        }
    }
    #[inline(always)]
    unsafe fn madd(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_madd_epi16(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn add32(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_add_epi32(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn high16(x: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_srai_epi32::<16>(x.0) })
    }
    #[inline(always)]
    unsafe fn low16(x: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_and_si256(x.0, _mm256_set1_epi32(0xffff)) })
    }
}

// SAFETY: as above.
unsafe impl Mac for Ymm32 {
    type Elem = u32;
    const LANES: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> Self {
        // SAFETY: the caller guarantees 8 readable u32 at `p` and AVX2.
        Self(unsafe { _mm256_loadu_si256(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_add_epi32(acc.0, _mm256_mullo_epi32(a.0, b.0)) })
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: AVX2 guaranteed by the caller. Zero-extending the u32 lanes keeps the low 32
        // bits of the (wrapping) sum right.
        unsafe {
            let lo = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc.0));
            let hi = _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(acc.0));
            hsum_i64x4(_mm256_add_epi64(lo, hi))
        }
    }
}

// SAFETY: as above.
unsafe impl Mac for Ymm64 {
    type Elem = u64;
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        Self(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> Self {
        // SAFETY: the caller guarantees 4 readable u64 at `p` and AVX2.
        Self(unsafe { _mm256_loadu_si256(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: AVX2 guaranteed by the caller.
        unsafe {
            // a·b mod 2^64 = lo(a)·lo(b) + 2^32·(hi(a)·lo(b) + lo(a)·hi(b)).
            let (a, b) = (a.0, b.0);
            let low = _mm256_mul_epu32(a, b);
            let cross = _mm256_add_epi64(
                _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), b),
                _mm256_mul_epu32(a, _mm256_srli_epi64::<32>(b)),
            );
            let prod = _mm256_add_epi64(low, _mm256_slli_epi64::<32>(cross));
            Self(_mm256_add_epi64(acc.0, prod))
        }
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: AVX2 guaranteed by the caller.
        unsafe { hsum_i64x4(acc.0) }
    }
}

level_token!(Avx2, Isa::Avx2);

// Only 16 ymm registers: 2 queries × 4 rows = 8 accumulators + 4 row registers + 1 query.
impl_simd_kernels! {
    token: Avx2,
    isa: Isa::Avx2,
    features: "avx2",
    v16: Ymm16,
    v32: Ymm32,
    v64: Ymm64,
    tile: (2, 4),
    ring: Blocking { mc: 64, kc: 2048, nc: 96 },
    field: Blocking { mc: 64, kc: 1024, nc: 96 },
}
