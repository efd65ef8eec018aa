//! Scalar arithmetic in F_65519 on canonical `u16` values, and the two re-encodings the SIMD
//! matrix product uses. Everything is `#[inline(always)]` for the same reason as in
//! `portable.rs`: the SIMD levels recompile these loops with wider vectors.
//!
//! Reduction uses 2^16 ≡ 17 (mod p): `hi·2^16 + lo ≡ 17·hi + lo`.

// Centring, packing and `reduce_i64` serve only the SIMD levels, absent on other targets.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

/// The prime 2^16 − 17 = 65519.
pub const P65519: u16 = 65519;

const P: u32 = P65519 as u32;
/// Largest centred representative, (p − 1) / 2.
const HALF: u16 = (P65519 - 1) / 2;

/// `x mod p` for any `x < 2^32`, in two folds and one conditional subtraction.
#[inline(always)]
pub(crate) fn reduce32(x: u32) -> u16 {
    let y = (x >> 16) * 17 + (x & 0xffff); // ≤ 17·65535 + 65535 < 2^21
    let z = (y >> 16) * 17 + (y & 0xffff); // ≤ 17·17 + 65535 = 65824 < 2p
    (if z >= P { z - P } else { z }) as u16
}

/// `x mod p` for a signed 64-bit partial sum, as a canonical value.
#[inline(always)]
pub(crate) fn reduce_i64(x: i64) -> u16 {
    x.rem_euclid(P as i64) as u16
}

#[inline(always)]
pub(crate) fn add1(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    (if s >= P { s - P } else { s }) as u16
}

#[inline(always)]
pub(crate) fn sub1(a: u16, b: u16) -> u16 {
    // a − b + p (mod 2^16) is the right value whenever a < b, since then it lies in (0, p).
    let d = a.wrapping_sub(b);
    if a < b {
        d.wrapping_add(P65519)
    } else {
        d
    }
}

#[inline(always)]
pub(crate) fn mul1(a: u16, b: u16) -> u16 {
    reduce32(a as u32 * b as u32)
}

#[inline(always)]
pub(crate) fn add(dst: &mut [u16], src: &[u16]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = add1(*d, s);
    }
}

#[inline(always)]
pub(crate) fn sub(dst: &mut [u16], src: &[u16]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = sub1(*d, s);
    }
}

#[inline(always)]
pub(crate) fn mul(dst: &mut [u16], src: &[u16]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = mul1(*d, s);
    }
}

#[inline(always)]
pub(crate) fn scalar_mul(dst: &mut [u16], s: u16) {
    for d in dst.iter_mut() {
        *d = mul1(*d, s);
    }
}

/// Exact Σ a_i·b_i reduced mod p. Each product is < 2^32, so a u64 accumulator holds 2^32 of
/// them; chunks of 2^20 keep that true for any length.
#[inline(always)]
pub(crate) fn dot(a: &[u16], b: &[u16]) -> u16 {
    let mut acc = 0u64;
    for (ca, cb) in a.chunks(1 << 20).zip(b.chunks(1 << 20)) {
        let s: u64 = ca.iter().zip(cb).map(|(&x, &y)| x as u64 * y as u64).sum();
        acc = (acc + s) % P as u64;
    }
    acc as u16
}

/// Portable matrix product, same loop order as `portable::gemm`.
#[inline(always)]
pub(crate) fn gemm(a: &[u16], b: &[u16], len: usize, out: &mut [u16]) {
    let rows_b = b.len() / len;
    for (j, row) in b.chunks_exact(len).enumerate() {
        for (i, query) in a.chunks_exact(len).enumerate() {
            out[i * rows_b + j] = dot(query, row);
        }
    }
}

/// Centred representative of a canonical value: `v` or `v − p`, in [−32759, 32759], as i16 bits.
/// (v − p ≡ v + 17 mod 2^16.) A non-canonical `v` yields a small wrong value, never overflow.
#[inline(always)]
pub(crate) fn centre(v: u16) -> u16 {
    if v > HALF {
        v.wrapping_add(17)
    } else {
        v
    }
}

/// `256·v mod p` for v < 2^16.
#[inline(always)]
pub(crate) fn times256(v: u16) -> u16 {
    let y = (v as u32) << 8;
    let z = (y >> 16) * 17 + (y & 0xffff); // ≤ 17·255 + 65535 < 2p
    (if z >= P { z - P } else { z }) as u16
}

// The SIMD matrix product multiplies without 32-bit overflow by splitting one operand: with
// x = centre(b) = 256·hi + lo, hi ∈ [−128, 128], lo ∈ [−128, 127],
//     a·b ≡ centre(256·a mod p)·hi + centre(a)·lo   (mod p),
// and `vpmaddwd` on the pairs (c256, c) · (hi, lo) computes exactly that sum, bounded by
// 2·128·32759 = 8 386 304 per element. 256 such terms fit in an i32 lane (2 146 893 824 <
// 2^31), which is how long a kernel may accumulate before it must reduce. The split form is
// the cheaper one to compute, so it goes to the database rows, which are packed far more
// often than the queries.

/// Largest |hi·c256 + lo·c| of one packed element.
pub(crate) const PACKED_TERM_MAX: i64 = 2 * 128 * HALF as i64;
/// Packed elements one i32 lane may accumulate without overflow.
pub(crate) const PACKED_STEPS_MAX: usize = (i32::MAX as i64 / PACKED_TERM_MAX) as usize;

/// One element packed in split form: the two i16 halves `(hi, lo)` of `centre(v)` in the low
/// and high half of a u32, i.e. two adjacent 16-bit lanes.
#[inline(always)]
pub(crate) fn pack_split(v: u16) -> u32 {
    let x = centre(v) as i16 as i32;
    let hi = (x + 128) >> 8;
    let lo = x - (hi << 8);
    ((lo as u32) << 16) | (hi as u32 & 0xffff)
}

/// One element packed in scaled form, to pair with [`pack_split`]:
/// `(centre(256·v mod p), centre(v))`.
#[inline(always)]
pub(crate) fn pack_scaled(v: u16) -> u32 {
    ((centre(v) as u32) << 16) | centre(times256(v)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce32_exhaustive_on_products_and_edges() {
        for x in [0u32, 1, P - 1, P, P + 1, u32::MAX, u32::MAX - 1, (P - 1) * (P - 1), 1 << 31] {
            assert_eq!(reduce32(x) as u32, x % P, "x = {x}");
        }
        for a in (0..P).step_by(97) {
            for b in (0..P).step_by(89) {
                assert_eq!(reduce32(a * b) as u32, a * b % P);
            }
        }
    }

    #[test]
    fn centre_times256_split_are_exact() {
        for v in 0..P65519 {
            let c = centre(v) as i16 as i64;
            assert!(c.abs() <= HALF as i64);
            assert_eq!(c.rem_euclid(P as i64), v as i64);
            assert_eq!(times256(v) as u32, (v as u32 * 256) % P);
            let q = pack_split(v);
            let (hi, lo) = (q as u16 as i16 as i64, (q >> 16) as u16 as i16 as i64);
            assert!((-128..=128).contains(&hi) && (-128..=127).contains(&lo), "v = {v}");
            assert_eq!(256 * hi + lo, c);
            let r = pack_scaled(v);
            let (c256, c1) = (r as u16 as i16 as i64, (r >> 16) as u16 as i16 as i64);
            assert_eq!(c1, c);
            assert_eq!(c256.rem_euclid(P as i64), (v as i64 * 256) % P as i64);
            assert!(c256.abs() <= HALF as i64);
        }
        assert_eq!(PACKED_STEPS_MAX, 256);
    }
}
