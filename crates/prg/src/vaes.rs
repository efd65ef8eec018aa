//! AES-128 with VAES on AVX-512: four blocks per 512-bit register, eight registers in flight,
//! so one core streams several times what AES-NI's one block per instruction gives. The CTR
//! keystream of [`crate::Prg`] and the block-by-block permutation of [`crate::Permutation`];
//! selected at run time, both fall back to the `aes` crate.
//!
//! The keystream is the same as `ctr::Ctr128LE<aes::Aes128>` with a zero IV: block `i` is
//! `AES_k(i)` with `i` as a little-endian 128-bit integer (checked by the tests against that
//! crate).

use std::arch::x86_64::*;

/// The expanded AES-128 key (11 round keys).
#[derive(Clone, Copy)]
pub(crate) struct Keys([__m128i; 11]);

impl Keys {
    /// The round keys of `key` when this CPU has AES-NI, AVX-512F and VAES and the kernels'
    /// level ([`argus_math::kernels::detected`], lowered by `ARGUS_ISA`) is AVX-512 or above.
    pub(crate) fn new(key: &[u8; 16]) -> Option<Keys> {
        let ok = argus_math::kernels::detected() >= argus_math::kernels::Isa::Avx512
            && is_x86_feature_detected!("aes")
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("vaes");
        // SAFETY: the CPU has AES-NI (checked just above).
        ok.then(|| unsafe { expand(key) })
    }

    /// Writes keystream blocks `counter, counter + 1, …` into `out` (whole blocks). The caller
    /// ensures the counter's low 64 bits do not wrap within `out` (the lanes add 64-bit halves).
    pub(crate) fn keystream(&self, counter: u128, out: &mut [u8]) {
        debug_assert!(out.len().is_multiple_of(16));
        debug_assert!((counter as u64).checked_add((out.len() / 16) as u64).is_some());
        // SAFETY: `Keys` exists only where `new` found AES-NI, AVX-512F and VAES.
        unsafe { ctr(self, counter, out) }
    }

    /// `x = AES_k(x)` for every block (as little-endian bytes).
    pub(crate) fn encrypt(&self, xs: &mut [u128]) {
        // SAFETY: `Keys` exists only where `new` found AES-NI, AVX-512F and VAES.
        unsafe { ecb(self, xs) }
    }
}

/// One step of the AES-128 key schedule: `prev` and the key-generation assist of it.
#[inline]
#[target_feature(enable = "aes")]
fn step(prev: __m128i, assist: __m128i) -> __m128i {
    let assist = _mm_shuffle_epi32(assist, 0xff);
    let mut k = prev;
    let mut t = _mm_slli_si128(prev, 4);
    k = _mm_xor_si128(k, t);
    t = _mm_slli_si128(t, 4);
    k = _mm_xor_si128(k, t);
    t = _mm_slli_si128(t, 4);
    k = _mm_xor_si128(k, t);
    _mm_xor_si128(k, assist)
}

#[target_feature(enable = "aes")]
fn expand(key: &[u8; 16]) -> Keys {
    let mut rk = [_mm_setzero_si128(); 11];
    // SAFETY: `key` is 16 readable bytes; unaligned load.
    rk[0] = unsafe { _mm_loadu_si128(key.as_ptr().cast()) };
    macro_rules! round {
        ($i:expr, $rcon:expr) => {
            rk[$i] = step(rk[$i - 1], _mm_aeskeygenassist_si128::<$rcon>(rk[$i - 1]));
        };
    }
    round!(1, 0x01);
    round!(2, 0x02);
    round!(3, 0x04);
    round!(4, 0x08);
    round!(5, 0x10);
    round!(6, 0x20);
    round!(7, 0x40);
    round!(8, 0x80);
    round!(9, 0x1b);
    round!(10, 0x36);
    Keys(rk)
}

/// Encrypts four counter blocks held in one register.
#[inline]
#[target_feature(enable = "avx512f,vaes")]
fn encrypt4(rk: &[__m512i; 11], mut b: __m512i) -> __m512i {
    b = _mm512_xor_si512(b, rk[0]);
    for k in &rk[1..10] {
        b = _mm512_aesenc_epi128(b, *k);
    }
    _mm512_aesenclast_epi128(b, rk[10])
}

#[target_feature(enable = "aes,avx512f,vaes")]
fn ctr(keys: &Keys, counter: u128, out: &mut [u8]) {
    assert!(out.len().is_multiple_of(16), "whole blocks");
    let rk: [__m512i; 11] = std::array::from_fn(|i| _mm512_broadcast_i32x4(keys.0[i]));
    let (lo, hi) = (counter as u64 as i64, (counter >> 64) as u64 as i64);
    // Four little-endian 128-bit counters: (lo + j, hi) in lanes j = 0..3.
    let mut c =
        _mm512_add_epi64(_mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo), _mm512_set_epi64(0, 3, 0, 2, 0, 1, 0, 0));
    let step4 = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
    const WIDE: usize = 8; // registers in flight: hides the AES rounds' latency
    let mut chunks = out.chunks_exact_mut(64 * WIDE);
    for chunk in &mut chunks {
        let mut b = [c; WIDE];
        for x in b.iter_mut().skip(1) {
            c = _mm512_add_epi64(c, step4);
            *x = c;
        }
        c = _mm512_add_epi64(c, step4);
        for (j, x) in b.iter().enumerate() {
            let e = encrypt4(&rk, *x);
            // SAFETY: `chunk` holds WIDE · 64 bytes; unaligned store of 64 bytes at 64·j.
            unsafe { _mm512_storeu_si512(chunk.as_mut_ptr().add(64 * j).cast(), e) };
        }
    }
    // The tail (a whole 256-byte refill of `Prg`'s buffer goes this way): a masked store per
    // part of whole blocks, not a copy through a stack block (a `memcpy` call each).
    for part in chunks.into_remainder().chunks_mut(64) {
        let e = encrypt4(&rk, c);
        c = _mm512_add_epi64(c, step4);
        let lanes = (1u32 << (part.len() / 4)) - 1;
        // SAFETY: the mask covers the `part.len()` (≤ 64, whole blocks) bytes of `part`.
        unsafe { _mm512_mask_storeu_epi32(part.as_mut_ptr().cast(), lanes as u16, e) };
    }
}

#[target_feature(enable = "aes,avx512f,vaes")]
fn ecb(keys: &Keys, xs: &mut [u128]) {
    let rk: [__m512i; 11] = std::array::from_fn(|i| _mm512_broadcast_i32x4(keys.0[i]));
    const WIDE: usize = 8; // registers in flight, as in `ctr`
    let mut chunks = xs.chunks_exact_mut(4 * WIDE);
    for chunk in &mut chunks {
        let p = chunk.as_mut_ptr().cast::<u8>();
        // SAFETY: `chunk` holds WIDE · 64 bytes; unaligned loads and stores of 64 bytes at 64·j.
        let b: [__m512i; WIDE] = std::array::from_fn(|j| unsafe { _mm512_loadu_si512(p.add(64 * j).cast()) });
        for (j, x) in b.iter().enumerate() {
            let e = encrypt4(&rk, *x);
            unsafe { _mm512_storeu_si512(p.add(64 * j).cast(), e) };
        }
    }
    for part in chunks.into_remainder().chunks_mut(4) {
        let lanes = ((1u32 << (4 * part.len())) - 1) as u16;
        let p = part.as_mut_ptr().cast::<i32>();
        // SAFETY: the mask covers the `part.len()` (≤ 4) blocks of `part`.
        let x = unsafe { _mm512_maskz_loadu_epi32(lanes, p.cast()) };
        let e = encrypt4(&rk, x);
        unsafe { _mm512_mask_storeu_epi32(p.cast(), lanes, e) };
    }
}
