//! AVX-512 levels: vector types for the generic kernels, and the two level tokens.
//!
//! 16-bit products use `vpmaddwd` (or `vpdpwssd` with VNNI): it multiplies *signed* 16-bit
//! lanes, but the low 16 bits of a signed product equal those of the unsigned one, and i32
//! lanes wrap mod 2^32, so ring results (mod 2^16) are exact. F_65519 data is centred first and
//! then the products are exact signed integers.

use std::arch::x86_64::*;

use super::dispatch::{impl_simd_kernels, level_token};
use super::gemm::Blocking;
use super::isa::Isa;
use super::simd::{Mac, V16};

/// 32 lanes of 16 bits accumulating into 16 i32 lanes; `VNNI` selects `vpdpwssd` over
/// `vpmaddwd` + `vpaddd`.
#[derive(Clone, Copy)]
pub(crate) struct Zmm16<const VNNI: bool>(__m512i);

/// 16 lanes of u32.
#[derive(Clone, Copy)]
pub(crate) struct Zmm32(__m512i);

/// 8 lanes of u64 (`vpmullq` needs AVX-512 DQ, part of the `Avx512` level).
#[derive(Clone, Copy)]
pub(crate) struct Zmm64(__m512i);

/// Exact sum of 16 signed i32 lanes.
#[inline(always)]
unsafe fn hsum_i32_exact(x: __m512i) -> i64 {
    // SAFETY: the caller guarantees AVX-512 F.
    unsafe {
        let lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(x));
        let hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64::<1>(x));
        _mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi))
    }
}

// SAFETY (for the `unsafe impl`s): `load` reads exactly LANES elements. Each method's body
// only needs the level's features, which the trait contract makes the caller guarantee; with
// `VNNI = true` that includes AVX-512 VNNI.
unsafe impl<const VNNI: bool> Mac for Zmm16<VNNI> {
    type Elem = u16;
    const LANES: usize = 32;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_setzero_si512() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u16) -> Self {
        // SAFETY: the caller guarantees 32 readable u16 at `p` and AVX-512 F.
        Self(unsafe { _mm512_loadu_si512(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW (and VNNI when VNNI = true) guaranteed by the caller.
        unsafe {
            if VNNI {
                Self(_mm512_dpwssd_epi32(acc.0, a.0, b.0))
            } else {
                Self(_mm512_add_epi32(acc.0, _mm512_madd_epi16(a.0, b.0)))
            }
        }
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: AVX-512 F guaranteed by the caller.
        unsafe { hsum_i32_exact(acc.0) }
    }
    #[inline(always)]
    unsafe fn fold(acc: Self) -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        unsafe {
            let hi = _mm512_srai_epi32::<16>(acc.0);
            let lo = _mm512_and_si512(acc.0, _mm512_set1_epi32(0xffff));
            // 17·hi = 16·hi + hi
            Self(_mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32::<4>(hi), hi), lo))
        }
    }
}

impl<const VNNI: bool> V16 for Zmm16<VNNI> {
    #[inline(always)]
    unsafe fn centre(v: Self) -> Self {
        // SAFETY: AVX-512 BW guaranteed by the caller.
        unsafe {
            // v > (p−1)/2  →  v − p ≡ v + 17 (mod 2^16).
            let m = _mm512_cmpgt_epu16_mask(v.0, _mm512_set1_epi16(32759));
            Self(_mm512_mask_add_epi16(v.0, m, v.0, _mm512_set1_epi16(17)))
        }
    }
    #[inline(always)]
    unsafe fn madd(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 BW guaranteed by the caller.
        Self(unsafe { _mm512_madd_epi16(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn add32(a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_add_epi32(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn high16(x: Self) -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_srai_epi32::<16>(x.0) })
    }
    #[inline(always)]
    unsafe fn low16(x: Self) -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_and_si512(x.0, _mm512_set1_epi32(0xffff)) })
    }
}

// SAFETY: as above.
unsafe impl Mac for Zmm32 {
    type Elem = u32;
    const LANES: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_setzero_si512() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> Self {
        // SAFETY: the caller guarantees 16 readable u32 at `p` and AVX-512 F.
        Self(unsafe { _mm512_loadu_si512(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_add_epi32(acc.0, _mm512_mullo_epi32(a.0, b.0)) })
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: AVX-512 F guaranteed by the caller.
        unsafe { _mm512_reduce_add_epi32(acc.0) as u32 as i64 }
    }
}

// SAFETY: as above.
unsafe impl Mac for Zmm64 {
    type Elem = u64;
    const LANES: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX-512 F guaranteed by the caller.
        Self(unsafe { _mm512_setzero_si512() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> Self {
        // SAFETY: the caller guarantees 8 readable u64 at `p` and AVX-512 F.
        Self(unsafe { _mm512_loadu_si512(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: AVX-512 F and DQ guaranteed by the caller.
        Self(unsafe { _mm512_add_epi64(acc.0, _mm512_mullo_epi64(a.0, b.0)) })
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: AVX-512 F guaranteed by the caller.
        unsafe { _mm512_reduce_add_epi64(acc.0) }
    }
}

level_token!(Avx512, Isa::Avx512);

level_token!(Avx512Vnni, Isa::Avx512Vnni);

// Tiles: 4 queries × 4 rows = 16 accumulators + 4 row registers + 1 query register, well
// inside the 32 zmm registers. K-blocks: one 4-row panel of the ring case (4 × 2048 u16 =
// 16 KiB) and of the packed field case (4 × 2 × 1024 u16 = 16 KiB) stays in L1 while query
// panels stream from L2. Ring query blocks of 256 (at most 256 × 2048 × 2 B = 1 MiB of query
// chunks, far less for overlapping rotation windows, in a 2 MiB L2) stream the database a
// quarter as often as blocks of 64, which measured faster at the iris shape (docs/BENCHMARKS.md).
impl_simd_kernels! {
    token: Avx512,
    isa: Isa::Avx512,
    features: "avx512f,avx512bw,avx512dq,avx512vl",
    v16: Zmm16<false>,
    v32: Zmm32,
    v64: Zmm64,
    tile: (4, 6),
    ring: Blocking { mc: 256, kc: 2048, nc: 96 },
    field: Blocking { mc: 64, kc: 1024, nc: 96 },
}

impl_simd_kernels! {
    token: Avx512Vnni,
    isa: Isa::Avx512Vnni,
    features: "avx512f,avx512bw,avx512dq,avx512vl,avx512vnni",
    v16: Zmm16<true>,
    v32: Zmm32,
    v64: Zmm64,
    tile: (4, 6),
    ring: Blocking { mc: 256, kc: 2048, nc: 96 },
    field: Blocking { mc: 64, kc: 1024, nc: 96 },
}
