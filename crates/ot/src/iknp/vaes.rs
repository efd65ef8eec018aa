//! The hash's fixed-key AES-128 on VAES (four blocks per AVX-512 instruction, eight registers in
//! flight), where the CPU has it: the `aes` crate's AES-NI path takes one block per instruction.
//! Same permutation (checked by the tests against that crate).

use std::arch::x86_64::*;

/// The expanded AES-128 key (11 round keys).
#[derive(Clone, Copy)]
pub(super) struct Keys([__m128i; 11]);

impl Keys {
    /// The round keys of `key`, when this CPU has AES-NI, AVX-512F and VAES.
    pub(super) fn new(key: u128) -> Option<Keys> {
        let ok =
            is_x86_feature_detected!("aes") && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("vaes");
        // SAFETY: the CPU has AES-NI (checked just above).
        ok.then(|| unsafe { expand(key) })
    }

    /// `x = AES_k(x)` for every block (as little-endian bytes).
    pub(super) fn encrypt(&self, xs: &mut [u128]) {
        // SAFETY: `Keys` exists only where `new` found AES-NI, AVX-512F and VAES.
        unsafe { encrypt(self, xs) }
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
fn expand(key: u128) -> Keys {
    let mut rk = [_mm_setzero_si128(); 11];
    let bytes = key.to_le_bytes();
    // SAFETY: `bytes` is 16 readable bytes; unaligned load.
    rk[0] = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
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

/// Encrypts the four blocks held in one register.
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
fn encrypt(keys: &Keys, xs: &mut [u128]) {
    let rk: [__m512i; 11] = std::array::from_fn(|i| _mm512_broadcast_i32x4(keys.0[i]));
    const WIDE: usize = 8; // registers in flight: hides the AES rounds' latency
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
